/*
 * tests/bench/bench_codec.c: ns/op and heap allocations/op of the hot
 * service messages through ua_encode()/ua_decode() (`make bench-codec`).
 *
 * Cases (realistic contents: RequestHeader with a numeric authentication
 * token, timestamp, handle and timeout; ns=1;s=vN string NodeIds; Value
 * attribute 13):
 *   decode ReadRequest, 1 and 100 nodes
 *   encode ReadResponse, 1 and 100 values (DataValue: Int32 + source ts)
 *   encode PublishResponse, 100 MonitoredItemNotifications in one
 *          DataChangeNotification ExtensionObject of the NotificationMessage
 *   decode WriteRequest, 100 values
 *
 * Method: every case runs once untimed and is checked (status, length),
 * warms up, calibrates an iteration count that takes >= BENCH_RUN_NS, then
 * times BENCH_RUNS such runs with clock_gettime(CLOCK_MONOTONIC), the runs
 * of all cases interleaved, and reports the median.  One arena (reset every
 * iteration) and one output buffer are reused, as a worker does, so the
 * steady state must allocate nothing:
 * malloc/calloc/realloc/free are interposed in this binary and counted
 * while bench_counting is set (timed runs only).
 *
 * Usage: bench_codec [--markdown FILE] [--case SUBSTRING] [--iters N]
 *   --case runs only the cases whose name contains SUBSTRING, --iters runs
 *   each case N times once, without calibration (for perf / callgrind).
 *   FILE (docs/benchmarks.md) gets the text between
 *   <!-- bench-codec:begin --> and <!-- bench-codec:end --> replaced (the
 *   markers are appended when missing).
 * Exit status 0 even when a target is missed: figures are information, the
 * table says "no".
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/bench/benchlib.h"

#define BENCH_RUNS      5
#define BENCH_RUN_NS    300000000ULL    /* >= 0.3 s per timed run */
#define BENCH_WARM_NS   50000000ULL
#define BENCH_N         100
#define BENCH_BUF       (1u << 20)

#define BENCH_MARK_BEGIN "<!-- bench-codec:begin -->"
#define BENCH_MARK_END   "<!-- bench-codec:end -->"
#if defined(__clang__)
#define BENCH_COMPILER   "clang " __clang_version__
#elif defined(__GNUC__)
#define BENCH_COMPILER   "gcc " __VERSION__
#else
#define BENCH_COMPILER   "unknown compiler"
#endif

/* glibc's own entry points, for the interposed allocator below. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t sz);
extern void *__libc_realloc(void *p, size_t n);
extern void  __libc_free(void *p);

struct bench_case {
    const char *name;
    double      target_ns;      /* 0: no target */
    void      (*run)(void);     /* one operation */
    double      ns;             /* median ns/op */
    double      allocs;         /* heap allocations per op */
    uint64_t    iters;          /* per timed run */
    uint64_t    iter_total, alloc_total;
    double      samples[BENCH_RUNS];
};

/* The table of a --markdown section. */
struct bench_out {
    const struct bench_case *cs;
    size_t                   n;
};

static void bench_fail(const char *what, ua_status s);
static void bench_header(struct ua_request_header *h, uint32_t handle);
static void bench_rsp_header(struct ua_response_header *h, uint32_t handle);
static void bench_check_counting(void);
static void bench_build(void);
static void bench_dec(const uint8_t *buf, size_t len, void *dst,
                      const struct ua_type *t);
static void bench_enc(const void *src, const struct ua_type *t);
static void bench_op_dec_read1(void);
static void bench_op_dec_read100(void);
static void bench_op_enc_rr1(void);
static void bench_op_enc_rr100(void);
static void bench_op_enc_pub100(void);
static void bench_op_dec_write100(void);
static void bench_calibrate(struct bench_case *c);
static void bench_run(struct bench_case *c, int r);
static void bench_finish(struct bench_case *c, int runs);
static bool bench_met(const struct bench_case *c);
static void bench_table(FILE *f, const struct bench_case *cs, size_t n);
static void bench_section(FILE *f, void *ctx);

static volatile int      bench_counting;
static volatile uint64_t bench_allocs;
static volatile size_t   bench_sink;

/* The reused state: one arena, one output buffer, pre-encoded requests. */
static uint8_t         bench_arena_buf[BENCH_BUF] __attribute__((aligned(16)));
static struct ua_arena bench_arena;
static uint8_t         bench_out[BENCH_BUF];
static uint8_t         bench_read1[512], bench_read100[16384];
static uint8_t         bench_write100[16384];
static size_t          bench_read1_len, bench_read100_len, bench_write100_len;
static struct ua_read_request  bench_rreq;
static struct ua_write_request bench_wreq;

/* Values to encode and the data they point at. */
static struct ua_read_response              bench_rr1, bench_rr100;
static struct ua_publish_response           bench_pub;
static struct ua_data_change_notification   bench_dcn;
static struct ua_extobj                     bench_pub_eo;
static struct ua_read_value_id              bench_rvid[BENCH_N];
static struct ua_write_value                bench_wv[BENCH_N];
static struct ua_datavalue                  bench_dv[BENCH_N];
static struct ua_monitored_item_notification bench_min[BENCH_N];
static int32_t                              bench_i32[BENCH_N];
static double                               bench_dbl[BENCH_N];
static char                                 bench_names[BENCH_N][8];
static uint32_t                             bench_avail_seq = 7;

/* ------------------------------------------------------------ allocator */

void *
malloc(size_t n)
{
    if (bench_counting)
        bench_allocs++;
    return __libc_malloc(n);
}

void *
calloc(size_t n, size_t sz)
{
    if (bench_counting)
        bench_allocs++;
    return __libc_calloc(n, sz);
}

void *
realloc(void *p, size_t n)
{
    if (bench_counting)
        bench_allocs++;
    return __libc_realloc(p, n);
}

void
free(void *p)
{
    __libc_free(p);
}

/* The interposition works: one malloc while counting is one allocation. */
static void
bench_check_counting(void)
{
    void *(*volatile m)(size_t) = malloc;
    void   *p;

    bench_allocs = 0;
    bench_counting = 1;
    p = m(16);
    bench_counting = 0;
    free(p);
    if (bench_allocs != 1) {
        fprintf(stderr, "bench_codec: malloc interposition does not count "
                "(%llu)\n", (unsigned long long)bench_allocs);
        exit(1);
    }
}

/* ------------------------------------------------------------ values */

static void
bench_fail(const char *what, ua_status s)
{
    fprintf(stderr, "bench_codec: %s: %s (0x%08x)\n", what, ua_status_name(s),
            s);
    exit(1);
}

static void
bench_header(struct ua_request_header *h, uint32_t handle)
{
    memset(h, 0, sizeof(*h));
    h->authentication_token = ua_nodeid_num(1, 0x3A7C91E5u);
    h->timestamp = 133772544000000000LL;        /* 2024-11-30 */
    h->request_handle = handle;
    h->return_diagnostics = 0;
    h->audit_entry_id = ua_string_from(NULL);
    h->timeout_hint = 10000;
    h->additional_header.type_id = ua_nodeid_num(0, 0);
    h->additional_header.encoding = UA_EO_NONE;
    h->additional_header.body.len = -1;
}

static void
bench_rsp_header(struct ua_response_header *h, uint32_t handle)
{
    memset(h, 0, sizeof(*h));
    h->timestamp = 133772544001234567LL;
    h->request_handle = handle;
    h->service_result = UA_GOOD;
    h->service_diagnostics.mask = 0;
    h->service_diagnostics.additional_info.len = -1;
    h->n_string_table = 0;
    h->string_table = NULL;
    h->additional_header.type_id = ua_nodeid_num(0, 0);
    h->additional_header.encoding = UA_EO_NONE;
    h->additional_header.body.len = -1;
}

static void
bench_build(void)
{
    ua_status s;

    for (int i = 0; i < BENCH_N; i++) {
        snprintf(bench_names[i], sizeof(bench_names[i]), "v%d", i);
        bench_rvid[i].node_id.ns = 1;
        bench_rvid[i].node_id.idtype = UA_IDTYPE_STRING;
        bench_rvid[i].node_id.id.str = ua_string_from(bench_names[i]);
        bench_rvid[i].attribute_id = UA_ATTR_VALUE;
        bench_rvid[i].index_range = ua_string_from(NULL);
        bench_rvid[i].data_encoding.ns = 0;
        bench_rvid[i].data_encoding.name = ua_string_from(NULL);

        bench_i32[i] = 1000 + i * 37;
        bench_dbl[i] = 20.5 + i * 0.25;
        memset(&bench_dv[i], 0, sizeof(bench_dv[i]));
        bench_dv[i].mask = UA_DV_VALUE | UA_DV_SOURCE_TS;
        ua_variant_set_scalar(&bench_dv[i].value, &bench_i32[i], UA_BT_INT32);
        bench_dv[i].source_ts = 133772544000000000LL + i * 10000;

        bench_wv[i].node_id = bench_rvid[i].node_id;
        bench_wv[i].attribute_id = UA_ATTR_VALUE;
        bench_wv[i].index_range = ua_string_from(NULL);
        memset(&bench_wv[i].value, 0, sizeof(bench_wv[i].value));
        bench_wv[i].value.mask = UA_DV_VALUE;
        ua_variant_set_scalar(&bench_wv[i].value.value, &bench_dbl[i],
                              UA_BT_DOUBLE);

        bench_min[i].client_handle = (uint32_t)i + 1;
        memset(&bench_min[i].value, 0, sizeof(bench_min[i].value));
        bench_min[i].value.mask = UA_DV_VALUE | UA_DV_SOURCE_TS
                                  | UA_DV_SERVER_TS;
        ua_variant_set_scalar(&bench_min[i].value.value, &bench_dbl[i],
                              UA_BT_DOUBLE);
        bench_min[i].value.source_ts = 133772544000000000LL + i * 10000;
        bench_min[i].value.server_ts = 133772544000000000LL + i * 10000 + 5;
    }

    /* ReadRequest, 1 and 100 nodes, pre-encoded. */
    bench_header(&bench_rreq.request_header, 42);
    bench_rreq.max_age = 0.0;
    bench_rreq.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    bench_rreq.nodes_to_read = bench_rvid;
    bench_rreq.n_nodes_to_read = 1;
    s = ua_encode(&bench_rreq, &ua_types[UA_TYPE_READREQUEST], bench_read1,
                  sizeof(bench_read1), &bench_read1_len);
    if (s != UA_GOOD)
        bench_fail("encode ReadRequest(1)", s);
    bench_rreq.n_nodes_to_read = BENCH_N;
    s = ua_encode(&bench_rreq, &ua_types[UA_TYPE_READREQUEST], bench_read100,
                  sizeof(bench_read100), &bench_read100_len);
    if (s != UA_GOOD)
        bench_fail("encode ReadRequest(100)", s);

    /* WriteRequest, 100 Double values, pre-encoded. */
    bench_header(&bench_wreq.request_header, 43);
    bench_wreq.n_nodes_to_write = BENCH_N;
    bench_wreq.nodes_to_write = bench_wv;
    s = ua_encode(&bench_wreq, &ua_types[UA_TYPE_WRITEREQUEST], bench_write100,
                  sizeof(bench_write100), &bench_write100_len);
    if (s != UA_GOOD)
        bench_fail("encode WriteRequest(100)", s);

    /* ReadResponse, 1 and 100 results. */
    bench_rsp_header(&bench_rr1.response_header, 42);
    bench_rr1.n_results = 1;
    bench_rr1.results = bench_dv;
    bench_rr1.n_diagnostic_infos = 0;
    bench_rr1.diagnostic_infos = NULL;
    bench_rr100 = bench_rr1;
    bench_rr100.n_results = BENCH_N;

    /* PublishResponse: one DataChangeNotification of 100 items. */
    bench_dcn.n_monitored_items = BENCH_N;
    bench_dcn.monitored_items = bench_min;
    bench_dcn.n_diagnostic_infos = 0;
    bench_dcn.diagnostic_infos = NULL;
    memset(&bench_pub_eo, 0, sizeof(bench_pub_eo));
    bench_pub_eo.encoding = UA_EO_DECODED;
    bench_pub_eo.type = &ua_types[UA_TYPE_DATACHANGENOTIFICATION];
    bench_pub_eo.type_id = ua_nodeid_num(0, bench_pub_eo.type->binary_id);
    bench_pub_eo.obj = &bench_dcn;
    bench_pub_eo.body.len = -1;
    bench_rsp_header(&bench_pub.response_header, 44);
    bench_pub.subscription_id = 1;
    bench_pub.n_available_sequence_numbers = 1;
    bench_pub.available_sequence_numbers = &bench_avail_seq;
    bench_pub.more_notifications = false;
    bench_pub.notification_message.sequence_number = 7;
    bench_pub.notification_message.publish_time = 133772544001000000LL;
    bench_pub.notification_message.n_notification_data = 1;
    bench_pub.notification_message.notification_data = &bench_pub_eo;
    bench_pub.n_results = 0;
    bench_pub.results = NULL;
    bench_pub.n_diagnostic_infos = 0;
    bench_pub.diagnostic_infos = NULL;

    ua_arena_init(&bench_arena, bench_arena_buf, sizeof(bench_arena_buf));
}

/* ------------------------------------------------------------ operations */

static void
bench_dec(const uint8_t *buf, size_t len, void *dst, const struct ua_type *t)
{
    size_t    used = 0;
    ua_status s;

    ua_arena_reset(&bench_arena);
    s = ua_decode(buf, len, &used, dst, t, &bench_arena, NULL);
    if (s != UA_GOOD || used != len)
        bench_fail(t->name, s);
    bench_sink += used;
}

static void
bench_enc(const void *src, const struct ua_type *t)
{
    size_t    len = 0;
    ua_status s;

    s = ua_encode(src, t, bench_out, sizeof(bench_out), &len);
    if (s != UA_GOOD)
        bench_fail(t->name, s);
    bench_sink += len;
}

static void
bench_op_dec_read1(void)
{
    struct ua_read_request r;

    bench_dec(bench_read1, bench_read1_len, &r,
              &ua_types[UA_TYPE_READREQUEST]);
    bench_sink += (size_t)r.n_nodes_to_read;
}

static void
bench_op_dec_read100(void)
{
    struct ua_read_request r;

    bench_dec(bench_read100, bench_read100_len, &r,
              &ua_types[UA_TYPE_READREQUEST]);
    bench_sink += (size_t)r.n_nodes_to_read;
}

static void
bench_op_dec_write100(void)
{
    struct ua_write_request w;

    bench_dec(bench_write100, bench_write100_len, &w,
              &ua_types[UA_TYPE_WRITEREQUEST]);
    bench_sink += (size_t)w.n_nodes_to_write;
}

static void
bench_op_enc_rr1(void)
{
    bench_enc(&bench_rr1, &ua_types[UA_TYPE_READRESPONSE]);
}

static void
bench_op_enc_rr100(void)
{
    bench_enc(&bench_rr100, &ua_types[UA_TYPE_READRESPONSE]);
}

static void
bench_op_enc_pub100(void)
{
    bench_enc(&bench_pub, &ua_types[UA_TYPE_PUBLISHRESPONSE]);
}

/* ------------------------------------------------------------ timing */

/* Check c once, warm it up and pick iterations for >= BENCH_RUN_NS. */
static void
bench_calibrate(struct bench_case *c)
{
    uint64_t iters = 1, t0, dt;

    c->run();
    for (;;) {
        t0 = benchlib_now();
        for (uint64_t i = 0; i < iters; i++)
            c->run();
        dt = benchlib_now() - t0;
        if (dt >= BENCH_WARM_NS)
            break;
        iters *= 2;
    }
    c->iters = (uint64_t)((double)iters * (double)BENCH_RUN_NS / (double)dt)
               + 1;
}

/* One timed run of c: sample r, allocations counted. */
static void
bench_run(struct bench_case *c, int r)
{
    uint64_t t0, dt;

    bench_allocs = 0;
    bench_counting = 1;
    t0 = benchlib_now();
    for (uint64_t i = 0; i < c->iters; i++)
        c->run();
    dt = benchlib_now() - t0;
    bench_counting = 0;
    c->alloc_total += bench_allocs;
    c->iter_total += c->iters;
    c->samples[r] = (double)dt / (double)c->iters;
}

static void
bench_finish(struct bench_case *c, int runs)
{
    c->ns = benchlib_median(c->samples, (size_t)runs);
    c->allocs = (double)c->alloc_total / (double)c->iter_total;
}

/* ------------------------------------------------------------ output */

static bool
bench_met(const struct bench_case *c)
{
    return c->allocs == 0 && (c->target_ns == 0 || c->ns <= c->target_ns);
}

static void
bench_table(FILE *f, const struct bench_case *cs, size_t n)
{
    fprintf(f, "| case | ns/op | allocs/op | target | met? |\n");
    fprintf(f, "|---|---:|---:|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const struct bench_case *c = &cs[i];
        char target[64];

        if (c->target_ns > 0)
            snprintf(target, sizeof(target), "≤ %.0f ns, 0 allocs",
                     c->target_ns);
        else
            snprintf(target, sizeof(target), "0 allocs");
        fprintf(f, "| %s | %.0f | %.3g | %s | %s |\n", c->name, c->ns,
                c->allocs, target, bench_met(c) ? "yes" : "**no**");
    }
}

/* The section between the markers (benchlib_markdown()); ctx: bench_out. */
static void
bench_section(FILE *f, void *ctx)
{
    const struct bench_out *o = ctx;
    char                    date[32], machine[80];

    benchlib_stamp(date, sizeof(date), machine, sizeof(machine));
    fprintf(f, "Measured %s (UTC) on %s, compiler %s, `-O2` "
            "(`make bench-codec`).\n", date, machine, BENCH_COMPILER);
    fprintf(f, "Machine: %s. Median of %d runs of ≥ %.1f s each after "
            "warm-up; one arena and one output buffer reused, as in a "
            "worker.\n\n", BENCHLIB_MACHINE, BENCH_RUNS,
            (double)BENCH_RUN_NS / 1e9);
    bench_table(f, o->cs, o->n);
}


int
main(int argc, char **argv)
{
    struct bench_case cs[] = {
        { .name = "decode ReadRequest (1 node)", .target_ns = 150,
          .run = bench_op_dec_read1 },
        { .name = "encode ReadResponse (1 value)", .target_ns = 100,
          .run = bench_op_enc_rr1 },
        { .name = "decode ReadRequest (100 nodes)",
          .run = bench_op_dec_read100 },
        { .name = "encode ReadResponse (100 values)",
          .run = bench_op_enc_rr100 },
        { .name = "encode PublishResponse (100 notifications)",
          .target_ns = 3000, .run = bench_op_enc_pub100 },
        { .name = "decode WriteRequest (100 values)",
          .run = bench_op_dec_write100 },
    };
    size_t      n = sizeof(cs) / sizeof(cs[0]);
    const char *md = NULL, *only = NULL;
    uint64_t    fixed = 0;
    int         runs = BENCH_RUNS;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0 && i + 1 < argc) {
            md = argv[++i];
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            fixed = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench_codec [--markdown FILE] "
                    "[--case SUBSTRING] [--iters N]\n");
            return 2;
        }
    }
    if (md != NULL && (only != NULL || fixed != 0)) {
        fprintf(stderr, "bench_codec: --markdown needs the full run\n");
        return 2;
    }
    bench_check_counting();
    bench_build();
    printf("bench_codec: ReadRequest(1) %zu B, ReadRequest(100) %zu B, "
           "WriteRequest(100) %zu B; ReadResponse(1) %zu B, "
           "ReadResponse(100) %zu B, PublishResponse(100) %zu B\n",
           bench_read1_len, bench_read100_len, bench_write100_len,
           ua_encoded_size(&bench_rr1, &ua_types[UA_TYPE_READRESPONSE]),
           ua_encoded_size(&bench_rr100, &ua_types[UA_TYPE_READRESPONSE]),
           ua_encoded_size(&bench_pub, &ua_types[UA_TYPE_PUBLISHRESPONSE]));
    fflush(stdout);
    for (size_t i = 0; i < n; i++) {
        if (only != NULL && strstr(cs[i].name, only) == NULL) {
            memmove(&cs[i], &cs[i + 1], (n - i - 1) * sizeof(cs[0]));
            n--;
            i--;
            continue;
        }
        if (fixed != 0) {
            cs[i].run();
            cs[i].iters = fixed;
        } else {
            bench_calibrate(&cs[i]);
        }
    }
    if (fixed != 0)
        runs = 1;
    /*
     * Runs interleaved across the cases, so a burst of outside load on this
     * shared machine spoils one sample of several cases, not all of one.
     */
    for (int r = 0; r < runs; r++)
        for (size_t i = 0; i < n; i++)
            bench_run(&cs[i], r);
    for (size_t i = 0; i < n; i++) {
        bench_finish(&cs[i], runs);
        fprintf(stderr, "  %-44s %8.1f ns/op  %g allocs/op  (runs:",
                cs[i].name, cs[i].ns, cs[i].allocs);
        for (int r = 0; r < runs; r++)
            fprintf(stderr, " %.0f", cs[i].samples[r]);
        fprintf(stderr, ")\n");
    }
    printf("\n");
    bench_table(stdout, cs, n);
    if (md != NULL) {
        struct bench_out o = { cs, n };

        if (benchlib_markdown(md, BENCH_MARK_BEGIN, BENCH_MARK_END,
                              bench_section, &o) != 0)
            return 1;
        printf("\nbench_codec: wrote the codec section of %s\n", md);
    }
    return 0;
}
