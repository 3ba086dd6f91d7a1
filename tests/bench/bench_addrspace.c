/*
 * tests/bench/bench_addrspace.c: ns/op of the address-space hot paths in
 * shm/: NodeId lookup, value-slot read and value-slot write.
 *
 * The store: 1,000,000 string NodeIds ns=1;s=v0 .. ns=1;s=v999999 plus
 * 5,000 numeric ns=0 nodes (ids spread over 1..35,000 as in the standard
 * namespace), built in one memfd segment exactly as the broker builds it.
 *
 * Cases (one process: the broker writes, workers read):
 *   lookup numeric ns=0   hot: 16 keys in a loop; random: all 5,000
 *   lookup string ns=1    hot: 16 keys in a loop; random: all 1,000,000 in
 *                         a shuffled order, so index, node and string
 *                         mostly miss the cache
 *   value read            inline Int32 (5 bytes); 1 KiB String (heap)
 *   value write           inline Int32; 1 KiB String (heap block
 *                         allocated and the old one freed every time)
 *
 * Method: every case runs once untimed and is checked (found / read back),
 * warms up, calibrates an iteration count that takes >= BENCH_RUN_NS, then
 * times BENCH_RUNS such runs with clock_gettime(CLOCK_MONOTONIC) and reports
 * the median.
 *
 * Build and run without the Makefile (`make bench-addrspace` does the same):
 *   make build/libshm.a
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -I. tests/bench/bench_addrspace.c \
 *       tests/bench/benchlib.c build/libshm.a -o build/bench/bench_addrspace
 *   ./build/bench/bench_addrspace [--markdown docs/benchmarks.md]
 *
 * --markdown FILE replaces the text between <!-- bench-addrspace:begin -->
 * and <!-- bench-addrspace:end --> in FILE (the markers are appended when
 * missing; the rest of FILE is kept byte for byte).  Exit status 0 even
 * when a target is missed: figures are information, the table says "no".
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/layout.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "shm/segment.h"
#include "shm/value.h"
#include "tests/bench/benchlib.h"

#define BENCH_RUNS      5
#define BENCH_RUN_NS    200000000ULL    /* >= 0.2 s per timed run */
#define BENCH_WARM_NS   50000000ULL

#define BENCH_NSTR      1000000u        /* ns=1;s=v0 .. v999999 */
#define BENCH_NNUM      5000u           /* ns=0 numeric */
#define BENCH_HOT       16u             /* keys in a hot loop (power of 2) */
#define BENCH_STR_LEN   1024u

#define BENCH_MARK_BEGIN "<!-- bench-addrspace:begin -->"
#define BENCH_MARK_END   "<!-- bench-addrspace:end -->"

struct bench_case {
    const char *name;
    double      target_ns;              /* 0: no target */
    void      (*run)(uint64_t n);       /* n operations */
    double      ns;                     /* median ns/op */
};

/* The table of a --markdown section. */
struct bench_out {
    const struct bench_case *cs;
    size_t                   n;
};

static void bench_die(const char *what, int rc);
static uint64_t bench_rand(void);
static void bench_build(void);
static void bench_check(void);
static void bench_lookup_loop(const struct shm_nodekey *keys, uint64_t mask,
                              uint64_t *pos, uint64_t n);
static void bench_op_num_hot(uint64_t n);
static void bench_op_num_rand(uint64_t n);
static void bench_op_str_hot(uint64_t n);
static void bench_op_str_rand(uint64_t n);
static void bench_op_read_i32(uint64_t n);
static void bench_op_read_str(uint64_t n);
static void bench_op_write_i32(uint64_t n);
static void bench_op_write_str(uint64_t n);
static void bench_measure(struct bench_case *c);
static bool bench_met(const struct bench_case *c);
static void bench_table(FILE *f, const struct bench_case *cs, size_t n);
static void bench_section(FILE *f, void *ctx);

static struct shm_segment   bench_seg;
static struct shm_nodestore bench_store;
static struct shm_values    bench_vals;

/* Keys: random order over everything (rand), and a small hot set. */
static struct shm_nodekey  *bench_str_rand;     /* BENCH_NSTR, shuffled */
static char                *bench_str_names;    /* 8 bytes per key */
static struct shm_nodekey   bench_str_hot[BENCH_HOT];
static struct shm_nodekey   bench_num_rand[8192];
static struct shm_nodekey   bench_num_hot[BENCH_HOT];
static uint64_t             bench_pos_str, bench_pos_num, bench_pos_hot;

static uint32_t             bench_slot_i32, bench_slot_str;
static uint8_t              bench_buf[4096];
static uint8_t              bench_str_a[BENCH_STR_LEN];
static uint8_t              bench_str_b[BENCH_STR_LEN];
static volatile uint64_t    bench_sink;
static double               bench_build_s;
static uint64_t             bench_rng = 0x9e3779b97f4a7c15ULL;

static void
bench_die(const char *what, int rc)
{
    fprintf(stderr, "bench_addrspace: %s failed (%d: %s)\n", what, rc,
            rc < 0 ? strerror(-rc) : "check");
    exit(1);
}

static uint64_t
bench_rand(void)
{
    bench_rng ^= bench_rng << 13;
    bench_rng ^= bench_rng >> 7;
    bench_rng ^= bench_rng << 17;
    return bench_rng;
}

/* ------------------------------------------------------------ the store */

static void
bench_build(void)
{
    struct shm_plan p = {
        .nodes = BENCH_NSTR + BENCH_NNUM, .refs = 16,
        .strings = (uint64_t)BENCH_NSTR * 12 + 4096, .slots = 64,
        .vheap = 1u << 20,
    };
    uint32_t       *perm;
    uint64_t        t0 = benchlib_now();
    int             rc;
    struct shm_value meta = { .status = 0, .flags = SHM_VF_SOURCE_TS,
                              .source_ts = 133500000000000000LL };
    /* Variant Int32 42: type byte 6, then the value little-endian. */
    static const uint8_t i32[5] = { 6, 42, 0, 0, 0 };

    rc = shm_plan_create(&bench_seg, &p, "bench_addrspace");
    if (rc != 0)
        bench_die("shm_plan_create", rc);
    rc = shm_nodestore_build_init(&bench_store, &bench_seg);
    if (rc != 0)
        bench_die("shm_nodestore_build_init", rc);
    for (uint32_t i = 0; i < BENCH_NNUM; i++) {
        struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                 .num = 1 + 7 * i };

        if (shm_nodestore_add(&bench_store, &k, SHM_NC_VARIABLE) == SHM_NONE)
            bench_die("add ns=0", 0);
    }
    for (uint32_t i = 0; i < BENCH_NSTR; i++) {
        char               name[16];
        int                l = snprintf(name, sizeof(name), "v%u", i);
        struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING,
                                 .bytes = (const uint8_t *)name,
                                 .len = (uint32_t)l };

        if (shm_nodestore_add(&bench_store, &k, SHM_NC_VARIABLE) == SHM_NONE)
            bench_die("add ns=1", 0);
    }
    rc = shm_nodestore_finish(&bench_store);
    if (rc != 0)
        bench_die("shm_nodestore_finish", rc);
    /* Read through a reader's view, as a worker does. */
    rc = shm_nodestore_open(&bench_store, &bench_seg);
    if (rc != 0)
        bench_die("shm_nodestore_open", rc);
    rc = shm_values_open(&bench_vals, &bench_seg);
    if (rc != 0)
        bench_die("shm_values_open", rc);
    bench_build_s = (double)(benchlib_now() - t0) / 1e9;

    /* Values: one inline Int32, one 1 KiB String in the heap. */
    bench_slot_i32 = 3;
    bench_slot_str = 17;
    for (uint32_t k = 0; k < BENCH_STR_LEN; k++) {
        bench_str_a[k] = (uint8_t)('a' + k % 26);
        bench_str_b[k] = (uint8_t)('A' + k % 26);
    }
    rc = shm_value_write(&bench_vals, bench_slot_i32, i32, sizeof(i32), &meta);
    if (rc != 0)
        bench_die("shm_value_write Int32", rc);
    rc = shm_value_write(&bench_vals, bench_slot_str, bench_str_a,
                         BENCH_STR_LEN, &meta);
    if (rc != 0)
        bench_die("shm_value_write String", rc);

    /* String keys in a shuffled order, names laid out in that order. */
    perm = malloc((size_t)BENCH_NSTR * sizeof(*perm));
    bench_str_rand = malloc((size_t)BENCH_NSTR * sizeof(*bench_str_rand));
    bench_str_names = malloc((size_t)BENCH_NSTR * 8);
    if (perm == NULL || bench_str_rand == NULL || bench_str_names == NULL)
        bench_die("malloc", -ENOMEM);
    for (uint32_t i = 0; i < BENCH_NSTR; i++)
        perm[i] = i;
    for (uint32_t i = BENCH_NSTR - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(bench_rand() % (i + 1)), t = perm[i];

        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint32_t i = 0; i < BENCH_NSTR; i++) {
        char *name = bench_str_names + (size_t)i * 8;
        char  tmp[16];
        int   l = snprintf(tmp, sizeof(tmp), "v%u", perm[i]);

        memcpy(name, tmp, (size_t)l);
        bench_str_rand[i] = (struct shm_nodekey){
            .ns = 1, .idtype = SHM_ID_STRING, .bytes = (uint8_t *)name,
            .len = (uint32_t)l };
    }
    free(perm);
    for (uint32_t i = 0; i < BENCH_HOT; i++)
        bench_str_hot[i] = bench_str_rand[i * 7919];
    for (uint32_t i = 0; i < 8192; i++)
        bench_num_rand[i] = (struct shm_nodekey){
            .ns = 0, .idtype = SHM_ID_NUMERIC,
            .num = 1 + 7 * (uint32_t)(bench_rand() % BENCH_NNUM) };
    for (uint32_t i = 0; i < BENCH_HOT; i++)
        bench_num_hot[i] = bench_num_rand[i];
}

/* Everything the timed loops touch is right before they run. */
static void
bench_check(void)
{
    struct shm_value m;
    struct shm_nodekey absent = { .ns = 1, .idtype = SHM_ID_STRING,
                                  .bytes = (const uint8_t *)"v1000000",
                                  .len = 8 };
    int              rc;

    for (uint32_t i = 0; i < BENCH_NSTR; i++) {
        uint32_t n = shm_nodestore_lookup(&bench_store, &bench_str_rand[i]);
        struct shm_nodekey k;

        if (n == SHM_NONE)
            bench_die("lookup of a present string NodeId", 0);
        shm_nodestore_key(&bench_store, n, &k);
        if (k.len != bench_str_rand[i].len
            || memcmp(k.bytes, bench_str_rand[i].bytes, k.len) != 0)
            bench_die("lookup found the wrong node", 0);
    }
    for (uint32_t i = 0; i < 8192; i++)
        if (shm_nodestore_lookup(&bench_store, &bench_num_rand[i]) == SHM_NONE)
            bench_die("lookup of a present numeric NodeId", 0);
    if (shm_nodestore_lookup(&bench_store, &absent) != SHM_NONE)
        bench_die("lookup of an absent NodeId", 0);
    rc = shm_value_read(&bench_vals, bench_slot_i32, &m, bench_buf,
                        sizeof(bench_buf));
    if (rc != 0 || m.len != 5 || bench_buf[0] != 6 || bench_buf[1] != 42)
        bench_die("read Int32", rc);
    rc = shm_value_read(&bench_vals, bench_slot_str, &m, bench_buf,
                        sizeof(bench_buf));
    if (rc != 0 || m.len != BENCH_STR_LEN
        || (memcmp(bench_buf, bench_str_a, BENCH_STR_LEN) != 0
            && memcmp(bench_buf, bench_str_b, BENCH_STR_LEN) != 0))
        bench_die("read String", rc);
}

/* ------------------------------------------------------------ the cases */

static void
bench_lookup_loop(const struct shm_nodekey *keys, uint64_t mask,
                  uint64_t *pos, uint64_t n)
{
    uint64_t p = *pos, acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        acc += shm_nodestore_lookup(&bench_store, &keys[p]);
        p = p == mask ? 0 : p + 1;
    }
    *pos = p;
    bench_sink += acc;
}

static void
bench_op_num_hot(uint64_t n)
{
    bench_lookup_loop(bench_num_hot, BENCH_HOT - 1, &bench_pos_hot, n);
}

static void
bench_op_num_rand(uint64_t n)
{
    bench_lookup_loop(bench_num_rand, 8192 - 1, &bench_pos_num, n);
}

static void
bench_op_str_hot(uint64_t n)
{
    bench_lookup_loop(bench_str_hot, BENCH_HOT - 1, &bench_pos_hot, n);
}

static void
bench_op_str_rand(uint64_t n)
{
    bench_lookup_loop(bench_str_rand, BENCH_NSTR - 1, &bench_pos_str, n);
}

static void
bench_op_read_i32(uint64_t n)
{
    struct shm_value m;
    uint64_t         acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        acc += (uint64_t)shm_value_read(&bench_vals, bench_slot_i32, &m,
                                        bench_buf, sizeof(bench_buf));
        acc += bench_buf[1];
    }
    bench_sink += acc;
}

static void
bench_op_read_str(uint64_t n)
{
    struct shm_value m;
    uint64_t         acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        acc += (uint64_t)shm_value_read(&bench_vals, bench_slot_str, &m,
                                        bench_buf, sizeof(bench_buf));
        acc += bench_buf[BENCH_STR_LEN - 1];
    }
    bench_sink += acc;
}

static void
bench_op_write_i32(uint64_t n)
{
    struct shm_value m = { .status = 0, .flags = SHM_VF_SOURCE_TS };
    uint8_t          v[5] = { 6, 0, 0, 0, 0 };
    uint64_t         acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        v[1] = (uint8_t)i;
        v[2] = 42;
        m.source_ts = (int64_t)i;
        acc += (uint64_t)shm_value_write(&bench_vals, bench_slot_i32, v,
                                         sizeof(v), &m);
    }
    if (acc != 0)
        bench_die("shm_value_write Int32", (int)acc);
    /* Leave the value bench_check expects. */
    v[1] = 42;
    v[2] = 0;
    shm_value_write(&bench_vals, bench_slot_i32, v, sizeof(v), &m);
}

static void
bench_op_write_str(uint64_t n)
{
    struct shm_value m = { .status = 0, .flags = SHM_VF_SOURCE_TS };
    uint64_t         acc = 0;

    for (uint64_t i = 0; i < n; i++) {
        m.source_ts = (int64_t)i;
        acc += (uint64_t)shm_value_write(&bench_vals, bench_slot_str,
                                         (i & 1) ? bench_str_b : bench_str_a,
                                         BENCH_STR_LEN, &m);
    }
    if (acc != 0)
        bench_die("shm_value_write String", (int)acc);
}

/* ------------------------------------------------------------ timing */

static void
bench_measure(struct bench_case *c)
{
    double   ns[BENCH_RUNS];
    uint64_t iters = 1, t0, dt;

    c->run(1);
    /* Warm up and calibrate: grow iters until one run takes BENCH_WARM_NS. */
    for (;;) {
        t0 = benchlib_now();
        c->run(iters);
        dt = benchlib_now() - t0;
        if (dt >= BENCH_WARM_NS)
            break;
        iters *= 2;
    }
    iters = (uint64_t)((double)iters * (double)BENCH_RUN_NS / (double)dt) + 1;
    for (int r = 0; r < BENCH_RUNS; r++) {
        t0 = benchlib_now();
        c->run(iters);
        dt = benchlib_now() - t0;
        ns[r] = (double)dt / (double)iters;
    }
    c->ns = benchlib_median(ns, BENCH_RUNS);
}

/* ------------------------------------------------------------ output */

static bool
bench_met(const struct bench_case *c)
{
    return c->target_ns == 0 || c->ns <= c->target_ns;
}

static void
bench_table(FILE *f, const struct bench_case *cs, size_t n)
{
    fprintf(f, "| case | ns/op | target | met? |\n");
    fprintf(f, "|---|---:|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const struct bench_case *c = &cs[i];
        char target[32];

        if (c->target_ns > 0)
            snprintf(target, sizeof(target), "≤ %.0f ns", c->target_ns);
        else
            snprintf(target, sizeof(target), "-");
        fprintf(f, "| %s | %.1f | %s | %s |\n", c->name, c->ns, target,
                c->target_ns == 0 ? "-" : bench_met(c) ? "yes" : "**no**");
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
            "(`make bench-addrspace`).\n", date, machine, __VERSION__);
    fprintf(f, "Machine: %s. One process; a store of %u string NodeIds "
            "(ns=1;s=v0 .. v%u) and %u numeric ns=0 nodes, built in %.2f s "
            "(%.0f MiB segment). Median of %d runs of ≥ %.1f s each after "
            "warm-up. \"hot\": %u keys in a loop; \"random\": all keys in "
            "a shuffled order, so the index, node and string are mostly "
            "cache misses.\n\n",
            BENCHLIB_MACHINE, BENCH_NSTR, BENCH_NSTR - 1, BENCH_NNUM,
            bench_build_s, (double)bench_seg.size / (1024.0 * 1024.0),
            BENCH_RUNS, (double)BENCH_RUN_NS / 1e9, BENCH_HOT);
    bench_table(f, o->cs, o->n);
}

int
main(int argc, char **argv)
{
    struct bench_case cs[] = {
        { "lookup numeric ns=0, hot (16 keys)", 50, bench_op_num_hot, 0 },
        { "lookup numeric ns=0, random (5,000 nodes)", 50, bench_op_num_rand,
          0 },
        { "lookup string ns=1, hot (16 keys)", 50, bench_op_str_hot, 0 },
        { "lookup string ns=1, random (1,000,000 nodes)", 50,
          bench_op_str_rand, 0 },
        { "value read, inline Int32 (5 B)", 30, bench_op_read_i32, 0 },
        { "value read, String 1 KiB (heap)", 0, bench_op_read_str, 0 },
        { "value write, inline Int32 (5 B)", 0, bench_op_write_i32, 0 },
        { "value write, String 1 KiB (heap)", 0, bench_op_write_str, 0 },
    };
    size_t      n = sizeof(cs) / sizeof(cs[0]);
    const char *md = NULL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0 && i + 1 < argc) {
            md = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_addrspace [--markdown FILE]\n");
            return 2;
        }
    }
    bench_build();
    bench_check();
    printf("bench_addrspace: %u + %u nodes built in %.2f s, segment %.0f "
           "MiB\n", BENCH_NSTR, BENCH_NNUM, bench_build_s,
           (double)bench_seg.size / (1024.0 * 1024.0));
    for (size_t i = 0; i < n; i++) {
        bench_measure(&cs[i]);
        fprintf(stderr, "  %-46s %8.1f ns/op\n", cs[i].name, cs[i].ns);
    }
    bench_check();              /* the writes left the store intact */
    printf("\n");
    bench_table(stdout, cs, n);
    if (md != NULL) {
        struct bench_out o = { cs, n };

        if (benchlib_markdown(md, BENCH_MARK_BEGIN, BENCH_MARK_END,
                              bench_section, &o) != 0)
            return 1;
        printf("\nbench_addrspace: wrote the address-space section of %s\n",
               md);
    }
    shm_segment_close(&bench_seg);
    free(bench_str_rand);
    free(bench_str_names);
    return 0;
}
