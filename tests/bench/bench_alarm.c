/*
 * tests/bench/bench_alarm.c: what the alarm evaluator costs the broker
 * (broker/alarmnode.h), in one process, on the real address space built
 * by the broker's builder with ALARMS exclusive limit alarms configured
 * (inputs ns=1;s=v0 .. v<ALARMS-1>, Int32 and Double in turn; limits
 * high_high 1e9, high 1e8, low -1e8, low_low -1e9, deadband 0.5).
 *
 * Cases, each a value change through the value path's Write fast path
 * (bk_value_write_small, as broker/write.c applies a client Write), in
 * batches of 1,000 changes (one request record's worth):
 *   unwatched    a Variable no alarm watches (v<ALARMS> ...): the bit test
 *   input, off   an input slot with the watcher taken away (before)
 *   input, on    the same changes with the evaluator (after): a change
 *                that crosses nothing
 * and the storm: every input crosses High in one batch, ALARMS condition
 * events built (record, every variable written), then back; ns per
 * condition event and the broker's heap allocations meanwhile (0).
 *
 * Then the feed's alarm lines: a second address space with ALARMS
 * external alarms (E0 .. E<ALARMS-1>), and `alarm=E<i>;active=false`
 * lines for each in turn (no change: the name's lookup and the line's
 * parse), ns per line (bk_alarmnode_feed).
 *
 * There is no fan-out (no workers): the value records and event records
 * go nowhere, so the figures are the broker's own work, not the rings'.
 *
 *   build/bench/bench_alarm [ALARMS] [--markdown FILE]   (default 10000)
 *
 * Method: every case warms up, then BENCH_RUNS timed runs of at least
 * BENCH_RUN_NS each (CLOCK_PROCESS_CPUTIME_ID: CPU time); the median.
 * --markdown FILE replaces the text between <!-- bench-alarm:begin -->
 * and <!-- bench-alarm:end --> in FILE.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/addrspace.h"
#include "broker/alarmnode.h"
#include "broker/alarmcfg.h"
#include "broker/alloc.h"
#include "broker/config.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "tests/bench/benchlib.h"

#define BENCH_RUNS    5
#define BENCH_RUN_NS  200000000ULL
#define BENCH_BATCH   1000u

#define BENCH_MARK_BEGIN "<!-- bench-alarm:begin -->"
#define BENCH_MARK_END   "<!-- bench-alarm:end -->"

struct ba_res {
    double unwatched, off, on, storm, feed;
    uint64_t storm_allocs;
    uint32_t alarms;
    uint64_t transitions;
};

static struct bk_addrspace ba_as;
static uint32_t            ba_n;
static uint8_t            (*ba_enc)[2][9];  /* [slot][value] Variant */
static uint32_t           *ba_len;

static uint64_t
ba_cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Variable v<i>'s value slot (Demo.Vars). */
static uint32_t
ba_slot(uint32_t i)
{
    return ba_as.vars_slot_first + i;
}

/* Encode two values for v<i> (Int32 for even i, Double for odd). */
static void
ba_encode(uint32_t i, double a, double b)
{
    for (int k = 0; k < 2; k++) {
        double  d = k == 0 ? a : b;
        int32_t x = (int32_t)d;

        if (i % 2 == 0) {
            ba_enc[i][k][0] = UA_BT_INT32;
            memcpy(&ba_enc[i][k][1], &x, 4);
            ba_len[i] = 5;
        } else {
            ba_enc[i][k][0] = UA_BT_DOUBLE;
            memcpy(&ba_enc[i][k][1], &d, 8);
            ba_len[i] = 9;
        }
    }
}

/* ns per change of slots first .. first + n - 1, rounds until BENCH_RUN_NS
 * of CPU; the median of BENCH_RUNS. */
static double
ba_run(uint32_t first, uint32_t n)
{
    double   runs[BENCH_RUNS];
    int64_t  now = ua_datetime_now();
    unsigned flip = 0;

    for (int r = -1; r < BENCH_RUNS; r++) {
        uint64_t t0 = ba_cpu(), t, changes = 0;

        do {
            for (uint32_t i = 0; i < n; i += BENCH_BATCH) {
                uint32_t end = i + BENCH_BATCH < n ? i + BENCH_BATCH : n;

                bk_value_batch_begin(&ba_as.val);
                for (uint32_t k = i; k < end; k++)
                    (void)bk_value_write_small(&ba_as.val,
                                               ba_slot(first + k),
                                               ba_enc[first + k][flip & 1],
                                               ba_len[first + k], ++now);
                bk_value_batch_end(&ba_as.val);
            }
            flip++;
            changes += n;
            t = ba_cpu() - t0;
        } while (t < (r < 0 ? BENCH_RUN_NS / 4 : BENCH_RUN_NS));
        if (r >= 0)
            runs[r] = (double)t / (double)changes;
    }
    return benchlib_median(runs, BENCH_RUNS);
}

static void
ba_markdown(FILE *f, void *ctx)
{
    const struct ba_res *r = ctx;
    char                 date[16], mach[64];

    benchlib_stamp(date, sizeof(date), mach, sizeof(mach));
    fprintf(f, "Measured %s (UTC) on %s, `-O2` (`make bench-alarm`).\n"
            "Machine: %s. One process, no workers (records go nowhere): "
            "the broker's own CPU per value change through the Write fast "
            "path, in batches of %u, with %u exclusive limit alarms "
            "configured. Median of %d runs of >= 0.2 s CPU each.\n\n",
            date, mach, BENCHLIB_MACHINE, BENCH_BATCH, r->alarms,
            BENCH_RUNS);
    fprintf(f, "| case | CPU ns per change | target | met? |\n"
            "|---|---:|---|---|\n");
    fprintf(f, "| a Variable no alarm watches | %.1f | - | - |\n",
            r->unwatched);
    fprintf(f, "| an input, evaluator off (before) | %.1f | - | - |\n",
            r->off);
    fprintf(f, "| an input, evaluator on, no crossing (after) | %.1f | - "
            "| - |\n", r->on);
    fprintf(f, "| **extra for the evaluator** | **%.1f** | <= 30 ns | %s "
            "|\n", r->on - r->off, r->on - r->off <= 30 ? "yes" : "**no**");
    fprintf(f, "\nStorm: all %u inputs cross High in one batch and back "
            "(%llu condition events): **%.0f ns** of broker CPU per "
            "condition event (its record with every event field, every "
            "changed variable written), %llu heap allocations.\n",
            r->alarms, (unsigned long long)r->transitions, r->storm,
            (unsigned long long)r->storm_allocs);
    fprintf(f, "\nFeed: a line `alarm=NAME;active=false` for one of %u "
            "external alarms (no change): **%.0f ns** of broker CPU per "
            "line (the name's lookup and the line's parse).\n", r->alarms,
            r->feed);
}

/* ns per feed line alarm=E<i>;active=false over n external alarms (a
 * second address space, built and closed here); -1 when it fails. */
static double
ba_feed(uint32_t n)
{
    struct bk_config    c;
    struct bk_alarmcfg  ac;
    struct bk_addrspace as;
    char                (*lines)[32], why[128], err[512];
    double              runs[BENCH_RUNS];
    int64_t             now = ua_datetime_now();

    bk_config_defaults(&c);
    c.vars = 16;
    c.workers = 0;
    memset(&ac, 0, sizeof(ac));
    ac.a = calloc(n, sizeof(*ac.a));
    lines = calloc(n, sizeof(*lines));
    if (ac.a == NULL || lines == NULL)
        return -1;
    ac.n = ac.cap = n;
    for (uint32_t i = 0; i < n; i++) {
        struct bk_alarmcfg_one *a = &ac.a[i];

        snprintf(a->name, sizeof(a->name), "E%u", i);
        snprintf(a->source, sizeof(a->source), "ns=1;s=Demo.Analog");
        a->def.type = BK_ALARM_EXTERNAL;
        a->def.severity = 500;
        a->def.max_shelved_ms = 3600e3;
        snprintf(lines[i], sizeof(lines[i]), "E%u;active=false", i);
    }
    c.alarms = &ac;
    if (bk_addrspace_build(&as, &c, now, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_alarm: feed: %s\n", err);
        return -1;
    }
    for (int r = -1; r < BENCH_RUNS; r++) {
        uint64_t t0 = ba_cpu(), t, done = 0;

        do {
            for (uint32_t i = 0; i < n; i++)
                if (bk_alarmnode_feed(&as.alarms, lines[i], strlen(lines[i]),
                                      now, why, sizeof(why)) != UA_GOOD)
                    return -1;
            done += n;
            t = ba_cpu() - t0;
        } while (t < (r < 0 ? BENCH_RUN_NS / 4 : BENCH_RUN_NS));
        if (r >= 0)
            runs[r] = (double)t / (double)done;
    }
    bk_addrspace_close(&as);
    free(ac.a);
    free(lines);
    return benchlib_median(runs, BENCH_RUNS);
}

int
main(int argc, char **argv)
{
    struct bk_config   c;
    struct bk_alarmcfg ac;
    struct ba_res      res;
    const char        *md = NULL;
    char               err[512];
    uint32_t           vars;

    ba_n = 10000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0 && i + 1 < argc)
            md = argv[++i];
        else
            ba_n = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    if (ba_n == 0 || ba_n > 1000000) {
        fprintf(stderr, "bench_alarm: ALARMS in 1..1000000\n");
        return 2;
    }
    vars = 2 * ba_n;
    bk_config_defaults(&c);
    c.vars = vars;
    c.workers = 0;
    memset(&ac, 0, sizeof(ac));
    ac.a = calloc(ba_n, sizeof(*ac.a));
    ba_enc = calloc(vars, sizeof(*ba_enc));
    ba_len = calloc(vars, sizeof(*ba_len));
    if (ac.a == NULL || ba_enc == NULL || ba_len == NULL)
        return 1;
    ac.n = ac.cap = ba_n;
    for (uint32_t i = 0; i < ba_n; i++) {
        struct bk_alarmcfg_one *a = &ac.a[i];

        snprintf(a->name, sizeof(a->name), "A%u", i);
        snprintf(a->input, sizeof(a->input), "ns=1;s=v%u", i);
        a->def.type = BK_ALARM_EXCLUSIVE_LIMIT;
        a->def.limits = BK_ALARM_LIM_HH | BK_ALARM_LIM_H | BK_ALARM_LIM_L
                        | BK_ALARM_LIM_LL;
        a->def.lim[BK_ALARM_I_HH] = 1e9;
        a->def.lim[BK_ALARM_I_H] = 1e8;
        a->def.lim[BK_ALARM_I_L] = -1e8;
        a->def.lim[BK_ALARM_I_LL] = -1e9;
        a->def.severity = 500;
        a->def.deadband = 0.5;
        a->def.max_shelved_ms = 3600e3;
    }
    c.alarms = &ac;
    if (bk_addrspace_build(&ba_as, &c, ua_datetime_now(), err, sizeof(err))
        != 0) {
        fprintf(stderr, "bench_alarm: %s\n", err);
        return 1;
    }
    for (uint32_t i = 0; i < vars; i++)
        ba_encode(i, (double)(i % 1000), (double)(i % 1000) + 7);
    memset(&res, 0, sizeof(res));
    res.alarms = ba_n;
    res.unwatched = ba_run(ba_n, ba_n);
    {
        const uint64_t   *bits = ba_as.val.watch;
        bk_value_watch_fn fn = ba_as.val.watch_fn;
        void             *arg = ba_as.val.watch_arg;

        bk_value_watch(&ba_as.val, NULL, NULL, NULL);
        res.off = ba_run(0, ba_n);
        bk_value_watch(&ba_as.val, bits, fn, arg);
    }
    res.on = ba_run(0, ba_n);
    /* The storm: over High and back, twice. */
    {
        uint64_t t0, a0, tr0 = ba_as.alarms.st.transitions;
        int64_t  now = ua_datetime_now();

        for (uint32_t i = 0; i < ba_n; i++)
            ba_encode(i, 2e8, 0);
        a0 = bk_alloc_count();
        t0 = ba_cpu();
        for (int round = 0; round < 4; round++) {
            bk_value_batch_begin(&ba_as.val);
            for (uint32_t i = 0; i < ba_n; i++)
                (void)bk_value_write_small(&ba_as.val, ba_slot(i),
                                           ba_enc[i][round & 1], ba_len[i],
                                           ++now);
            bk_value_batch_end(&ba_as.val);
        }
        res.transitions = ba_as.alarms.st.transitions - tr0;
        res.storm = res.transitions != 0
                        ? (double)(ba_cpu() - t0) / (double)res.transitions
                        : 0;
        res.storm_allocs = bk_alloc_count() - a0;
    }
    bk_addrspace_close(&ba_as);
    res.feed = ba_feed(ba_n);
    printf("alarms %u: unwatched %.1f ns, input off %.1f ns, input on "
           "%.1f ns (extra %.1f ns, target <= 30); storm %llu events, "
           "%.0f ns per event, %llu allocations; feed line %.0f ns\n",
           ba_n, res.unwatched, res.off, res.on, res.on - res.off,
           (unsigned long long)res.transitions, res.storm,
           (unsigned long long)res.storm_allocs, res.feed);
    if (md != NULL
        && benchlib_markdown(md, BENCH_MARK_BEGIN, BENCH_MARK_END,
                             ba_markdown, &res) != 0)
        return 1;
    free(ac.a);
    return 0;
}
