/*
 * tests/unit/proto/check_aggregate.c: the Part 13 aggregate engine
 * (proto/aggregate.h) against Part 13 Annex A's example tables
 * (tests/vectors/aggregates_gen.h, generated from the OPC Foundation's
 * AggregateExamples CSV): all 37 aggregates over Historian1 and
 * Historian2, every value and every status code; then the table of
 * aggregate functions, the interval arithmetic (reversed ranges,
 * processingInterval 0, a partial last interval), bounds passed by the
 * caller, annotations and the refusals.
 *
 * Tolerance: the tables print values with three decimals, so a value
 * matches within 0.0005 (AGG_TOL).  Timestamps and status codes (severity,
 * sub-code, InfoType and every historian bit) match exactly.
 *
 * Where a table row contradicts the spec text (or the same table's other
 * rows), the test expects what the spec says; every such row is listed in
 * `deviations` (tests/vectors/aggregate_deviations.h) with its reason
 * (docs/design-notes.md "aggregates: where Part 13's example tables and
 * its text disagree"), and the test
 * checks that each listed row really differs from the table, so the list
 * cannot go stale.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/aggregate.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "tests/vectors/aggregate_deviations.h"
#include "tests/vectors/aggregates_gen.h"

#define AGG_TOL   0.0005
#define TICKS_MS  INT64_C(10000)
/* 2012-01-02 12:00:00 UTC, the tables' 12:00:00 (any time would do) */
#define BASE      INT64_C(129699792000000000)
#define RAW_MAX   32
#define OUT_MAX   64

#define GC   (UA_AGG_INFOTYPE_DATAVALUE | UA_AGG_CALCULATED)
#define PART UA_AGG_PARTIAL


/* The samples of a raw table as the store would give them. */
static size_t
load(int historian, struct ua_agg_sample *s, ua_datetime *ann,
     size_t *n_ann, bool every_value_annotated)
{
    const struct aggv_raw *raw = historian == 1 ? aggv_raw1 : aggv_raw2;
    size_t n = historian == 1 ? sizeof aggv_raw1 / sizeof aggv_raw1[0]
                              : sizeof aggv_raw2 / sizeof aggv_raw2[0];

    *n_ann = 0;
    for (size_t i = 0; i < n; i++) {
        s[i].ts = BASE + raw[i].ms * TICKS_MS;
        s[i].value = raw[i].value;
        s[i].status = raw[i].status;
        if (every_value_annotated) {
            if (raw[i].status != UA_BAD_NO_DATA)
                ann[(*n_ann)++] = s[i].ts;
        } else
            for (int k = 0; k < raw[i].annotations; k++)
                ann[(*n_ann)++] = s[i].ts;
    }
    return n;
}


static int
row_differs(const struct ua_agg_result *r, int64_t ms, bool has_value,
            double value, uint32_t status)
{
    if (r->ts != BASE + ms * TICKS_MS || r->status != status
        || r->has_value != has_value)
        return 1;
    return has_value && fabs(r->value - value) > AGG_TOL;
}

/* Run one example table; print and count the rows that do not match. */
static int
run_case(const struct aggv_case *k)
{
    struct ua_agg_sample      s[RAW_MAX];
    ua_datetime               ann[RAW_MAX];
    struct ua_agg_result      out[OUT_MAX];
    struct ua_agg_config      cfg;
    struct ua_agg_input       in;
    const struct ua_agg_info *info = ua_aggregate_by_name(k->aggregate);
    size_t                    n, n_ann;
    int                       bad = 0;

    ck_assert_msg(info != NULL, "no aggregate %s", k->aggregate);
    memset(&in, 0, sizeof in);
    /* AnnotationCount's table counts one annotation per stored value (see
     * test_annotations_from_notes for the annotations the notes give). */
    in.n = load(k->historian, s, ann, &n_ann,
                info->agg == UA_AGG_ANNOTATIONCOUNT);
    in.s = s;
    in.annotations = ann;
    in.n_annotations = n_ann;
    cfg.stepped = k->stepped;
    cfg.treat_uncertain_as_bad = k->treat_uncertain_as_bad;
    cfg.percent_data_bad = (uint8_t)k->percent_bad;
    cfg.percent_data_good = (uint8_t)k->percent_good;
    cfg.use_sloped_extrapolation = k->use_sloped_extrapolation;
    n = ua_aggregate_intervals(BASE + AGGV_START_MS * TICKS_MS,
                               BASE + AGGV_END_MS * TICKS_MS, k->interval_ms);
    ck_assert_uint_eq(n, k->n_rows);
    ck_assert_uint_eq(ua_aggregate_run(info->agg, &cfg, &in,
                                       BASE + AGGV_START_MS * TICKS_MS,
                                       BASE + AGGV_END_MS * TICKS_MS,
                                       k->interval_ms, out, OUT_MAX),
                      UA_GOOD);
    for (size_t i = 0; i < n; i++) {
        const struct aggv_row  *e = &k->rows[i];
        /* a deviation is keyed by the interval's start */
        int64_t                 ims = (int64_t)((double)i * k->interval_ms);
        const struct deviation *d = deviation_find(k->aggregate,
                                                   k->historian, ims);
        bool                    hv = e->has_value;
        double                  v = e->value;
        uint32_t                st = e->status;
        int64_t                 ms = e->ms;

        if (d != NULL) {
            ck_assert_msg(row_differs(&(struct ua_agg_result){
                              BASE + e->ms * TICKS_MS, e->value, e->status,
                              e->has_value }, d->ms, d->has_value, d->value,
                              d->status),
                          "%s H%d %lld: deviation equals the table",
                          k->aggregate, k->historian, (long long)ims);
            hv = d->has_value;
            v = d->value;
            st = d->status;
            ms = d->ms;
        }
        if (row_differs(&out[i], ms, hv, v, st)) {
            fprintf(stderr, "%s H%d row %zu: want %lld %s%.4f 0x%08X, "
                    "got %lld %s%.4f 0x%08X\n", k->aggregate, k->historian,
                    i, (long long)ms, hv ? "" : "(none) ", v, st,
                    (long long)((out[i].ts - BASE) / TICKS_MS),
                    out[i].has_value ? "" : "(none) ", out[i].value,
                    out[i].status);
            bad++;
        }
    }
    return bad;
}

START_TEST(test_example_tables)
{
    size_t n = sizeof aggv_cases / sizeof aggv_cases[0];
    int    bad = 0;
    bool   seen[UA_AGG_COUNT_][3];

    memset(seen, 0, sizeof seen);
    ck_assert_uint_eq(n, 2 * UA_AGG_COUNT_);
    for (size_t i = 0; i < n; i++) {
        const struct ua_agg_info *info =
            ua_aggregate_by_name(aggv_cases[i].aggregate);

        ck_assert_ptr_nonnull(info);
        seen[info->agg][aggv_cases[i].historian] = true;
        bad += run_case(&aggv_cases[i]);
    }
    for (size_t a = 0; a < UA_AGG_COUNT_; a++)
        ck_assert_msg(seen[a][1] && seen[a][2], "aggregate %zu untested", a);
    ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_table)
{
    ck_assert_ptr_null(ua_aggregate_info(UA_AGG_COUNT_));
    ck_assert_ptr_null(ua_aggregate_by_nodeid(UA_NS0ID_SERVER));
    ck_assert_ptr_null(ua_aggregate_by_name("Median"));
    ck_assert_ptr_null(ua_aggregate_by_name(NULL));
    for (int a = 0; a < UA_AGG_COUNT_; a++) {
        const struct ua_agg_info *i = ua_aggregate_info((enum ua_agg)a);

        ck_assert_int_eq(i->agg, a);
        ck_assert_ptr_eq(ua_aggregate_by_nodeid(i->nodeid), i);
        ck_assert_ptr_eq(ua_aggregate_by_name(i->name), i);
    }
    ck_assert_str_eq(ua_aggregate_by_nodeid(2341)->name, "Interpolative");
    ck_assert_str_eq(ua_aggregate_by_nodeid(11507)->name, "DeltaBounds");
    ck_assert_int_eq(ua_aggregate_by_name("Count")->type, UA_AGG_T_INT32);
}
END_TEST

START_TEST(test_intervals)
{
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE, 1000), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 1, -1), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 1, NAN), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 1, INFINITY), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 1, 1e300), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(INT64_MIN, BASE, 1000), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, INT64_MAX, 1000), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(-1, BASE, 1000), 0);
    ck_assert_uint_eq(ua_aggregate_intervals(0, UA_AGG_TIME_MAX,
                                             (double)(UA_AGG_TIME_MAX
                                                      / TICKS_MS)), 1);
    ck_assert_uint_eq(ua_aggregate_intervals(UA_AGG_TIME_MAX, 0, 0), 1);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 100000 * TICKS_MS,
                                             0), 1);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 100000 * TICKS_MS,
                                             16000), 7);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE + 100000 * TICKS_MS, BASE,
                                             16000), 7);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE, BASE + 10 * TICKS_MS,
                                             3600000), 1);
    ck_assert_uint_eq(ua_aggregate_intervals(BASE,
                                             BASE + 86400000 * TICKS_MS,
                                             3600000), 24);
}
END_TEST

static void
config_h1(struct ua_agg_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->percent_data_bad = 100;
    cfg->percent_data_good = 100;
}

/*
 * end < start: time runs backward (Part 11 §6.5.4, Part 13 §5.4.2.2): the
 * intervals are (start - Int, start], (start - 2 Int, start - Int], ...,
 * each stamped with its later time, the bounds mirrored.  So a backward
 * read over a table equals a forward read over the table mirrored in time,
 * mirrored back: checked for all 37 aggregates over both historians.
 */
START_TEST(test_reversed)
{
    struct ua_agg_sample s[RAW_MAX], m[RAW_MAX];
    ua_datetime          ann[RAW_MAX], mann[RAW_MAX];
    struct ua_agg_result fwd[OUT_MAX], rev[OUT_MAX];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 }, mi = { 0 };
    size_t               n_ann;
    ua_datetime          t0 = BASE, t1 = BASE + 100000 * TICKS_MS;
    ua_datetime          mid2 = t0 + t1;    /* mirror: t -> mid2 - t */
    static const double  pis[3] = { 5000, 16000, 0 };

    for (int h = 1; h <= 2; h++) {
        config_h1(&cfg);
        cfg.treat_uncertain_as_bad = h == 2;
        cfg.use_sloped_extrapolation = h == 2;
        in.n = load(h, s, ann, &n_ann, true);
        in.s = s;
        in.annotations = ann;
        in.n_annotations = n_ann;
        for (size_t i = 0; i < in.n; i++) {
            m[i] = s[in.n - 1 - i];
            m[i].ts = mid2 - m[i].ts;
        }
        for (size_t i = 0; i < n_ann; i++)
            mann[i] = mid2 - ann[n_ann - 1 - i];
        mi = in;
        mi.s = m;
        mi.annotations = mann;
        for (int a = 0; a < UA_AGG_COUNT_; a++)
            for (int k = 0; k < 3; k++) {
                size_t n = ua_aggregate_intervals(t1, t0, pis[k]);

                ck_assert_uint_eq(ua_aggregate_run((enum ua_agg)a, &cfg, &in,
                                                   t1, t0, pis[k], rev,
                                                   OUT_MAX), UA_GOOD);
                ck_assert_uint_eq(ua_aggregate_run((enum ua_agg)a, &cfg, &mi,
                                                   mid2 - t1, mid2 - t0,
                                                   pis[k], fwd, OUT_MAX),
                                  UA_GOOD);
                for (size_t i = 0; i < n; i++) {
                    ck_assert_int_eq(rev[i].ts, mid2 - fwd[i].ts);
                    ck_assert_uint_eq(rev[i].status, fwd[i].status);
                    ck_assert_int_eq(rev[i].has_value, fwd[i].has_value);
                    if (fwd[i].has_value)
                        ck_assert_double_eq_tol(rev[i].value, fwd[i].value,
                                                1e-9);
                }
            }
    }
    /* Historian1 backward at 5 s: (1:35, 1:40] is past the data; 90 at
     * 12:01:30 falls in (1:25, 1:30], stamped 12:01:30 */
    config_h1(&cfg);
    in.n = load(1, s, ann, &n_ann, false);
    in.s = s;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_AVERAGE, &cfg, &in, t1, t0,
                                       5000, rev, OUT_MAX), UA_GOOD);
    ck_assert_int_eq(rev[0].ts, t1);
    ck_assert_uint_eq(rev[0].status, UA_BAD_NO_DATA);
    ck_assert_int_eq(rev[2].ts, BASE + 90000 * TICKS_MS);
    ck_assert_uint_eq(rev[2].status, GC);
    ck_assert_double_eq(rev[2].value, 90);
    ck_assert_uint_eq(rev[1].status, UA_BAD_NO_DATA);
}
END_TEST

/* processingInterval 0: one interval over the range (Part 13 §5.4.3). */
START_TEST(test_whole_range)
{
    struct ua_agg_sample s[RAW_MAX];
    ua_datetime          ann[RAW_MAX];
    struct ua_agg_result out[1];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 };
    size_t               n_ann;

    config_h1(&cfg);
    in.n = load(1, s, ann, &n_ann, false);
    in.s = s;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 0, out, 1),
                      UA_GOOD);
    /* 7 Good values, one Bad, one Uncertain; the data start at 12:00:10
     * and end at 12:01:30: Partial */
    ck_assert_double_eq(out[0].value, 7);
    ck_assert_uint_eq(out[0].status,
                      UA_UNCERTAIN_DATA_SUB_NORMAL | GC | PART);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_MAXIMUM, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 0, out, 1),
                      UA_GOOD);
    ck_assert_double_eq(out[0].value, 90);
    /* the range ending on a sample excludes it (Part 13 §5.4.3) */
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_MAXIMUM, &cfg, &in, BASE,
                                       BASE + 90000 * TICKS_MS, 0, out, 1),
                      UA_GOOD);
    ck_assert_double_eq(out[0].value, 80);
}
END_TEST

/* A cut last interval is Partial even inside the data (§5.3.3.2). */
START_TEST(test_partial_last)
{
    struct ua_agg_sample s[RAW_MAX];
    ua_datetime          ann[RAW_MAX];
    struct ua_agg_result out[4];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 };
    size_t               n_ann;

    config_h1(&cfg);
    in.n = load(1, s, ann, &n_ann, false);
    in.s = s;
    ck_assert_uint_eq(ua_aggregate_intervals(BASE + 10000 * TICKS_MS,
                                             BASE + 35000 * TICKS_MS, 10000),
                      3);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TIMEAVERAGE, &cfg, &in,
                                       BASE + 10000 * TICKS_MS,
                                       BASE + 35000 * TICKS_MS, 10000, out,
                                       4), UA_GOOD);
    ck_assert_uint_eq(out[0].status, UA_GOOD | GC);
    ck_assert_double_eq_tol(out[0].value, 15, 1e-9);
    ck_assert_uint_eq(out[2].status,
                      UA_UNCERTAIN_DATA_SUB_NORMAL | GC | PART);
    ck_assert_double_eq_tol(out[2].value, 32.5, 1e-9);
}
END_TEST

/*
 * The store gives only the samples of the range and the bounds around it:
 * the results match those over the whole table.
 */
START_TEST(test_bounds_from_caller)
{
    struct ua_agg_sample s[RAW_MAX];
    ua_datetime          ann[RAW_MAX];
    struct ua_agg_result whole[OUT_MAX], part[OUT_MAX];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 }, cut = { 0 };
    size_t               n_ann, n;
    ua_datetime          t0 = BASE + 16000 * TICKS_MS;
    ua_datetime          t1 = BASE + 80000 * TICKS_MS;

    memset(&cfg, 0, sizeof cfg);
    cfg.percent_data_bad = 100;
    cfg.percent_data_good = 100;
    cfg.treat_uncertain_as_bad = true;
    cfg.use_sloped_extrapolation = true;
    n = load(2, s, ann, &n_ann, false);
    in.n = n;
    in.s = s;
    /* Historian2: samples 2..9 (12:00:25 .. 12:01:17) lie in [0:16, 1:20) */
    cut.s = &s[2];
    cut.n = 8;
    cut.before = &s[1];
    cut.after = &s[10];
    for (int a = 0; a < UA_AGG_COUNT_; a++) {
        ck_assert_uint_eq(ua_aggregate_run((enum ua_agg)a, &cfg, &in, t0, t1,
                                           16000, whole, OUT_MAX), UA_GOOD);
        ck_assert_uint_eq(ua_aggregate_run((enum ua_agg)a, &cfg, &cut, t0,
                                           t1, 16000, part, OUT_MAX),
                          UA_GOOD);
        for (int i = 0; i < 4; i++) {
            ck_assert_msg(part[i].status == whole[i].status,
                          "%s interval %d: 0x%08X != 0x%08X",
                          ua_aggregate_info((enum ua_agg)a)->name, i,
                          part[i].status, whole[i].status);
            ck_assert_int_eq(part[i].ts, whole[i].ts);
            if (whole[i].has_value)
                ck_assert_double_eq_tol(part[i].value, whole[i].value,
                                        1e-9);
        }
    }
}
END_TEST

/*
 * AnnotationCount over the annotations the raw table's notes give (two at
 * 12:00:40, one at 12:00:50 and one at 12:01:10 in Historian1, none in
 * Historian2): §5.4.3.20 counts annotations, Good, Calculated.
 */
START_TEST(test_annotations_from_notes)
{
    struct ua_agg_sample s[RAW_MAX];
    ua_datetime          ann[RAW_MAX];
    struct ua_agg_result out[OUT_MAX];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 };
    static const double  want1[6] = { 0, 0, 2, 1, 1, 0 };

    config_h1(&cfg);
    in.n = load(1, s, ann, &in.n_annotations, false);
    in.s = s;
    in.annotations = ann;
    ck_assert_uint_eq(in.n_annotations, 4);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_ANNOTATIONCOUNT, &cfg, &in,
                                       BASE, BASE + 100000 * TICKS_MS, 16000,
                                       out, OUT_MAX), UA_GOOD);
    for (int i = 0; i < 6; i++) {
        ck_assert_double_eq(out[i].value, want1[i]);
        ck_assert_uint_eq(out[i].status,
                          GC | (i == 0 || i == 5 ? PART : 0));
    }
    ck_assert_uint_eq(out[6].status, UA_BAD_NO_DATA);
    in.n = load(2, s, ann, &in.n_annotations, false);
    ck_assert_uint_eq(in.n_annotations, 0);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_ANNOTATIONCOUNT, &cfg, &in,
                                       BASE, BASE + 100000 * TICKS_MS, 16000,
                                       out, OUT_MAX), UA_GOOD);
    for (int i = 0; i < 6; i++)
        ck_assert_double_eq(out[i].value, 0);
}
END_TEST

/*
 * The configuration beyond the example tables' (Stepped false, 100/100):
 * a Stepped node holds values (Part 13 §3.1.6), PercentDataBad and
 * PercentDataGood move the status thresholds (§5.4.3.2).
 */
START_TEST(test_config)
{
    struct ua_agg_sample s[RAW_MAX];
    ua_datetime          ann[RAW_MAX];
    struct ua_agg_result out[OUT_MAX];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 };
    size_t               n_ann;

    config_h1(&cfg);
    cfg.stepped = true;
    in.n = load(1, s, ann, &n_ann, false);
    in.s = s;
    /* Interpolative at 12:00:15 holds 10; TimeAverage2 over
     * [12:00:10, 12:00:15) is 10, Total2 50 */
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_INTERPOLATIVE, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 5000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_double_eq(out[3].value, 10);
    ck_assert_uint_eq(out[3].status,
                      UA_AGG_INFOTYPE_DATAVALUE | UA_AGG_INTERPOLATED);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TIMEAVERAGE2, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 5000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_double_eq(out[2].value, 10);
    ck_assert_double_eq(out[3].value, 10);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TOTAL2, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 5000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_double_eq(out[2].value, 50);
    /* Maximum2 of a Stepped node leaves the end bound out: over
     * [12:00:16, 12:00:32) the start bound 10 (held), 20 and 30 give 30,
     * without the MultipleValues the sloped table has for the end bound
     * 30 */
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_MAXIMUM2, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 16000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_double_eq(out[1].value, 30);
    ck_assert_uint_eq(out[1].status, GC);

    /* Historian2's [12:00:32, 12:00:48): 30 Good and one Bad value */
    config_h1(&cfg);
    in.n = load(2, s, ann, &n_ann, false);
    cfg.percent_data_bad = 50;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 16000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_uint_eq(out[2].status, UA_BAD | GC);
    ck_assert_int_eq(out[2].has_value, false);
    cfg.percent_data_bad = 60;
    cfg.percent_data_good = 50;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 16000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_uint_eq(out[2].status, GC);
    ck_assert_double_eq(out[2].value, 1);
    cfg.percent_data_good = 51;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 16000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_uint_eq(out[2].status, UA_UNCERTAIN_DATA_SUB_NORMAL | GC);
    /* by time: TimeAverage2 over [12:00:40, 12:00:45) is 2 s Good (30
     * held up to the Bad value at 12:00:42, Uncertain for the status as
     * it ends at a Bad point, Good here: TreatUncertainAsBad is false)
     * and 3 s Bad: 60 % Bad */
    config_h1(&cfg);
    cfg.percent_data_bad = 60;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TIMEAVERAGE2, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 5000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_uint_eq(out[8].status, UA_BAD | GC);
    cfg.percent_data_bad = 61;
    cfg.percent_data_good = 40;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TIMEAVERAGE2, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 5000, out,
                                       OUT_MAX), UA_GOOD);
    ck_assert_uint_eq(out[8].status, GC);
    ck_assert_double_eq_tol(out[8].value, 30, 1e-9);
}
END_TEST

START_TEST(test_refusals)
{
    struct ua_agg_sample s[RAW_MAX];
    ua_datetime          ann[RAW_MAX];
    struct ua_agg_result out[OUT_MAX];
    struct ua_agg_config cfg;
    struct ua_agg_input  in = { 0 };
    size_t               n_ann;

    config_h1(&cfg);
    in.n = load(1, s, ann, &n_ann, false);
    in.s = s;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT_, &cfg, &in, BASE,
                                       BASE + 1000, 0, out, OUT_MAX),
                      UA_BAD_AGGREGATE_NOT_SUPPORTED);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE, BASE,
                                       0, out, OUT_MAX),
                      UA_BAD_AGGREGATE_INVALID_INPUTS);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE,
                                       BASE + 100000 * TICKS_MS, 5000, out,
                                       19), UA_BAD_AGGREGATE_INVALID_INPUTS);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, INT64_MIN,
                                       BASE, 1000, out, OUT_MAX),
                      UA_BAD_AGGREGATE_INVALID_INPUTS);
    /* the widest range there is, backward, with no data: nothing wraps */
    in.n = 0;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TIMEAVERAGE, &cfg, &in,
                                       UA_AGG_TIME_MAX, 0, 0, out, OUT_MAX),
                      UA_GOOD);
    ck_assert_uint_eq(out[0].status, UA_BAD_NO_DATA);
    ck_assert_int_eq(out[0].ts, UA_AGG_TIME_MAX);
    in.n = load(1, s, ann, &n_ann, false);
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_TIMEAVERAGE, &cfg, &in,
                                       UA_AGG_TIME_MAX, 0, 0, out, OUT_MAX),
                      UA_GOOD);
    ck_assert_uint_eq(out[0].status & 0xFFFF0000u,
                      UA_UNCERTAIN_DATA_SUB_NORMAL);
    cfg.percent_data_good = 101;
    ck_assert_uint_eq(ua_aggregate_run(UA_AGG_COUNT, &cfg, &in, BASE,
                                       BASE + 1000, 0, out, OUT_MAX),
                      UA_BAD_AGGREGATE_CONFIGURATION_REJECTED);
    /* no data at all: every interval Bad_NoData */
    config_h1(&cfg);
    in.n = 0;
    for (int a = 0; a < UA_AGG_COUNT_; a++) {
        ck_assert_uint_eq(ua_aggregate_run((enum ua_agg)a, &cfg, &in, BASE,
                                           BASE + 100000 * TICKS_MS, 16000,
                                           out, OUT_MAX), UA_GOOD);
        for (int i = 0; i < 7; i++)
            ck_assert_uint_eq(out[i].status, UA_BAD_NO_DATA);
    }
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Aggregate");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Examples");
    tcase_add_test(tc, test_example_tables);
    tcase_add_test(tc, test_annotations_from_notes);
    suite_add_tcase(s, tc);
    tc = tcase_create("Engine");
    tcase_add_test(tc, test_table);
    tcase_add_test(tc, test_intervals);
    tcase_add_test(tc, test_reversed);
    tcase_add_test(tc, test_whole_range);
    tcase_add_test(tc, test_partial_last);
    tcase_add_test(tc, test_bounds_from_caller);
    tcase_add_test(tc, test_config);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
