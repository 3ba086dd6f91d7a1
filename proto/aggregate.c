/*
 * proto/aggregate.c: the Part 13 aggregate engine (aggregate.h).
 *
 * One pass per interval over the samples the interval holds, plus the
 * bounds: the Interpolated Bounding Value (Part 13 §3.1.8: the nearest
 * non-Bad samples, Bad ones skipped, extrapolated after the last) and the
 * Simple Bounding Value (§3.1.9: the samples just before and after,
 * whatever their status).  Samples are found by binary search, so a run is
 * O(intervals * log n) plus the samples each interval holds; a bound that
 * must skip a run of Bad samples walks it.
 *
 * The time-weighted aggregates that use Simple Bounding Values (the "2"
 * family, the durations and percentages) share one walk over the regions
 * of an interval (ua_aggregate_regions): each region runs from one point
 * (the start bound, a sample, the end bound) to the next and takes the
 * quality of the point it starts at (§5.4.3.31: "each region starts with
 * a data point"); a region that ends at a Bad point is at best Uncertain
 * for the status (its value cannot be interpolated into the Bad point, so
 * it is held, §3.1.9).  Past the last stored sample (no `after` sample) the
 * interval ends at the data: that tail is an extrapolated, Uncertain
 * region for the averages and totals and no region at all for the
 * durations and percentages (a Partial interval, §5.3.3.2).
 *
 * Qualities: a sample is Good, Uncertain or Bad by its severity; BadNoData
 * samples are Bad and also mark the collection's start (aggregate.h).
 * "Usable" is Good, or Uncertain when TreatUncertainAsBad is false
 * (§3.1.7: that flag decides in all cases whether Uncertain is Bad).
 *
 * Pure and reentrant: no allocation, no I/O, no global state but the
 * constant table.
 */
#include "aggregate.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nodeids_gen.h"
#include "status_gen.h"

#define UA_AGGREGATE_TICKS_MS   INT64_C(10000)  /* DateTime ticks per ms */
#define UA_AGGREGATE_EFFECTIVE  UA_AGGREGATE_TICKS_MS  /* §3.1.3 */
#define UA_AGGREGATE_SEVERITY   0xC0000000u

/* A sample's or bound's quality. */
enum ua_aggregate_q {
    UA_AGGREGATE_GOOD,
    UA_AGGREGATE_UNCERTAIN,
    UA_AGGREGATE_BAD
};

/* A point of an interval: a bound or a raw sample. */
struct ua_aggregate_pt {
    ua_datetime         ts;
    double              value;
    uint32_t            status;     /* the raw status, or the bound's */
    enum ua_aggregate_q q;
    bool                has_value;
    bool                raw;        /* a stored sample at exactly ts */
    bool                extrap;     /* extrapolated past the last sample */
    bool                none;       /* no bound (before / after the data) */
};

/* One run's state. */
struct ua_aggregate_ctx {
    const struct ua_agg_config *cfg;
    const struct ua_agg_input  *in;
    size_t                      n;            /* in->n */
    bool                        rev;          /* end < start: time negated */
    ua_datetime                 data_start;   /* first data, or INT64_MIN */
    ua_datetime                 data_end;     /* last data, or INT64_MAX */
};

/* One interval. */
struct ua_aggregate_iv {
    ua_datetime t0, t1;         /* [t0, t1) */
    bool        partial;        /* §5.3.3.2 */
};

/* What the region walk finds (durations in ticks). */
struct ua_aggregate_walk {
    int64_t good, bad;          /* for the status (§5.4.3.2) */
    int64_t dgood, dbad;        /* by the region's first point (§5.4.3.31) */
    int64_t span;               /* the interval up to the end of data */
    int64_t incl;               /* regions whose value counts */
    int64_t nonzero, zero;      /* of those, in state non-zero / zero */
    double  integral;           /* value * seconds over those */
};

static const struct ua_agg_info ua_aggregate_table[UA_AGG_COUNT_];

static bool ua_aggregate_get(const struct ua_aggregate_ctx *c, ptrdiff_t i,
                             struct ua_agg_sample *out);
static ua_datetime ua_aggregate_ts(const struct ua_aggregate_ctx *c,
                                   size_t i);
static size_t ua_aggregate_lower(const struct ua_aggregate_ctx *c,
                                 ua_datetime t);
static size_t ua_aggregate_ann_lower(const struct ua_aggregate_ctx *c,
                                     ua_datetime t);
static enum ua_aggregate_q ua_aggregate_quality(
    const struct ua_aggregate_ctx *c, uint32_t status);
static bool ua_aggregate_nodata(uint32_t status);
static bool ua_aggregate_usable(const struct ua_aggregate_ctx *c,
                                const struct ua_agg_sample *s);
static bool ua_aggregate_badish(const struct ua_aggregate_ctx *c,
                                const struct ua_aggregate_pt *p);
static double ua_aggregate_line(const struct ua_agg_sample *a,
                                const struct ua_agg_sample *b, ua_datetime t);
static double ua_aggregate_slope(const struct ua_aggregate_ctx *c,
                                 ptrdiff_t k, ua_datetime t);
static void ua_aggregate_raw_pt(const struct ua_aggregate_ctx *c,
                                const struct ua_agg_sample *s,
                                struct ua_aggregate_pt *p);
static void ua_aggregate_ibound(const struct ua_aggregate_ctx *c,
                                ua_datetime t, struct ua_aggregate_pt *p);
static void ua_aggregate_sbound(const struct ua_aggregate_ctx *c,
                                ua_datetime t, struct ua_aggregate_pt *p);
static uint32_t ua_aggregate_ratio(const struct ua_aggregate_ctx *c,
                                   int64_t good, int64_t bad, int64_t total);
static uint32_t ua_aggregate_status(uint32_t code, uint32_t bits);
static void ua_aggregate_walk_run(const struct ua_aggregate_ctx *c,
                                  const struct ua_aggregate_iv *iv,
                                  bool tail, struct ua_aggregate_walk *w);
static void ua_aggregate_one(enum ua_agg agg,
                             const struct ua_aggregate_ctx *c,
                             const struct ua_aggregate_iv *iv,
                             struct ua_agg_result *r);
static void ua_aggregate_interp(const struct ua_aggregate_ctx *c,
                                const struct ua_aggregate_iv *iv,
                                struct ua_agg_result *r);
static void ua_aggregate_timeavg(enum ua_agg agg,
                                 const struct ua_aggregate_ctx *c,
                                 const struct ua_aggregate_iv *iv,
                                 struct ua_agg_result *r);
static void ua_aggregate_timeavg2(enum ua_agg agg,
                                  const struct ua_aggregate_ctx *c,
                                  const struct ua_aggregate_iv *iv,
                                  struct ua_agg_result *r);
static void ua_aggregate_counted(enum ua_agg agg,
                                 const struct ua_aggregate_ctx *c,
                                 const struct ua_aggregate_iv *iv,
                                 struct ua_agg_result *r);
static void ua_aggregate_minmax(enum ua_agg agg,
                                const struct ua_aggregate_ctx *c,
                                const struct ua_aggregate_iv *iv,
                                struct ua_agg_result *r);
static void ua_aggregate_minmax2(enum ua_agg agg,
                                 const struct ua_aggregate_ctx *c,
                                 const struct ua_aggregate_iv *iv,
                                 struct ua_agg_result *r);
static void ua_aggregate_startend(enum ua_agg agg,
                                  const struct ua_aggregate_ctx *c,
                                  const struct ua_aggregate_iv *iv,
                                  struct ua_agg_result *r);
static void ua_aggregate_bounds(enum ua_agg agg,
                                const struct ua_aggregate_ctx *c,
                                const struct ua_aggregate_iv *iv,
                                struct ua_agg_result *r);
static void ua_aggregate_durations(enum ua_agg agg,
                                   const struct ua_aggregate_ctx *c,
                                   const struct ua_aggregate_iv *iv,
                                   struct ua_agg_result *r);
static void ua_aggregate_worst(enum ua_agg agg,
                               const struct ua_aggregate_ctx *c,
                               const struct ua_aggregate_iv *iv,
                               struct ua_agg_result *r);

/* ------------------------------------------------------------ the table */

static const struct ua_agg_info ua_aggregate_table[UA_AGG_COUNT_] = {
    { UA_AGG_INTERPOLATIVE, UA_NS0ID_AGGREGATEFUNCTION_INTERPOLATIVE,
      "Interpolative", UA_AGG_T_DOUBLE },
    { UA_AGG_AVERAGE, UA_NS0ID_AGGREGATEFUNCTION_AVERAGE,
      "Average", UA_AGG_T_DOUBLE },
    { UA_AGG_TIMEAVERAGE, UA_NS0ID_AGGREGATEFUNCTION_TIMEAVERAGE,
      "TimeAverage", UA_AGG_T_DOUBLE },
    { UA_AGG_TIMEAVERAGE2, UA_NS0ID_AGGREGATEFUNCTION_TIMEAVERAGE2,
      "TimeAverage2", UA_AGG_T_DOUBLE },
    { UA_AGG_TOTAL, UA_NS0ID_AGGREGATEFUNCTION_TOTAL,
      "Total", UA_AGG_T_DOUBLE },
    { UA_AGG_TOTAL2, UA_NS0ID_AGGREGATEFUNCTION_TOTAL2,
      "Total2", UA_AGG_T_DOUBLE },
    { UA_AGG_MINIMUM, UA_NS0ID_AGGREGATEFUNCTION_MINIMUM,
      "Minimum", UA_AGG_T_DOUBLE },
    { UA_AGG_MAXIMUM, UA_NS0ID_AGGREGATEFUNCTION_MAXIMUM,
      "Maximum", UA_AGG_T_DOUBLE },
    { UA_AGG_MINIMUMACTUALTIME, UA_NS0ID_AGGREGATEFUNCTION_MINIMUMACTUALTIME,
      "MinimumActualTime", UA_AGG_T_DOUBLE },
    { UA_AGG_MAXIMUMACTUALTIME, UA_NS0ID_AGGREGATEFUNCTION_MAXIMUMACTUALTIME,
      "MaximumActualTime", UA_AGG_T_DOUBLE },
    { UA_AGG_RANGE, UA_NS0ID_AGGREGATEFUNCTION_RANGE,
      "Range", UA_AGG_T_DOUBLE },
    { UA_AGG_MINIMUM2, UA_NS0ID_AGGREGATEFUNCTION_MINIMUM2,
      "Minimum2", UA_AGG_T_DOUBLE },
    { UA_AGG_MAXIMUM2, UA_NS0ID_AGGREGATEFUNCTION_MAXIMUM2,
      "Maximum2", UA_AGG_T_DOUBLE },
    { UA_AGG_MINIMUMACTUALTIME2,
      UA_NS0ID_AGGREGATEFUNCTION_MINIMUMACTUALTIME2,
      "MinimumActualTime2", UA_AGG_T_DOUBLE },
    { UA_AGG_MAXIMUMACTUALTIME2,
      UA_NS0ID_AGGREGATEFUNCTION_MAXIMUMACTUALTIME2,
      "MaximumActualTime2", UA_AGG_T_DOUBLE },
    { UA_AGG_RANGE2, UA_NS0ID_AGGREGATEFUNCTION_RANGE2,
      "Range2", UA_AGG_T_DOUBLE },
    { UA_AGG_ANNOTATIONCOUNT, UA_NS0ID_AGGREGATEFUNCTION_ANNOTATIONCOUNT,
      "AnnotationCount", UA_AGG_T_INT32 },
    { UA_AGG_COUNT, UA_NS0ID_AGGREGATEFUNCTION_COUNT,
      "Count", UA_AGG_T_INT32 },
    { UA_AGG_DURATIONINSTATEZERO,
      UA_NS0ID_AGGREGATEFUNCTION_DURATIONINSTATEZERO,
      "DurationInStateZero", UA_AGG_T_DURATION },
    { UA_AGG_DURATIONINSTATENONZERO,
      UA_NS0ID_AGGREGATEFUNCTION_DURATIONINSTATENONZERO,
      "DurationInStateNonZero", UA_AGG_T_DURATION },
    { UA_AGG_NUMBEROFTRANSITIONS,
      UA_NS0ID_AGGREGATEFUNCTION_NUMBEROFTRANSITIONS,
      "NumberOfTransitions", UA_AGG_T_INT32 },
    { UA_AGG_START, UA_NS0ID_AGGREGATEFUNCTION_START,
      "Start", UA_AGG_T_DOUBLE },
    { UA_AGG_END, UA_NS0ID_AGGREGATEFUNCTION_END,
      "End", UA_AGG_T_DOUBLE },
    { UA_AGG_DELTA, UA_NS0ID_AGGREGATEFUNCTION_DELTA,
      "Delta", UA_AGG_T_DOUBLE },
    { UA_AGG_STARTBOUND, UA_NS0ID_AGGREGATEFUNCTION_STARTBOUND,
      "StartBound", UA_AGG_T_DOUBLE },
    { UA_AGG_ENDBOUND, UA_NS0ID_AGGREGATEFUNCTION_ENDBOUND,
      "EndBound", UA_AGG_T_DOUBLE },
    { UA_AGG_DELTABOUNDS, UA_NS0ID_AGGREGATEFUNCTION_DELTABOUNDS,
      "DeltaBounds", UA_AGG_T_DOUBLE },
    { UA_AGG_DURATIONGOOD, UA_NS0ID_AGGREGATEFUNCTION_DURATIONGOOD,
      "DurationGood", UA_AGG_T_DURATION },
    { UA_AGG_DURATIONBAD, UA_NS0ID_AGGREGATEFUNCTION_DURATIONBAD,
      "DurationBad", UA_AGG_T_DURATION },
    { UA_AGG_PERCENTGOOD, UA_NS0ID_AGGREGATEFUNCTION_PERCENTGOOD,
      "PercentGood", UA_AGG_T_DOUBLE },
    { UA_AGG_PERCENTBAD, UA_NS0ID_AGGREGATEFUNCTION_PERCENTBAD,
      "PercentBad", UA_AGG_T_DOUBLE },
    { UA_AGG_WORSTQUALITY, UA_NS0ID_AGGREGATEFUNCTION_WORSTQUALITY,
      "WorstQuality", UA_AGG_T_STATUSCODE },
    { UA_AGG_WORSTQUALITY2, UA_NS0ID_AGGREGATEFUNCTION_WORSTQUALITY2,
      "WorstQuality2", UA_AGG_T_STATUSCODE },
    { UA_AGG_STANDARDDEVIATIONSAMPLE,
      UA_NS0ID_AGGREGATEFUNCTION_STANDARDDEVIATIONSAMPLE,
      "StandardDeviationSample", UA_AGG_T_DOUBLE },
    { UA_AGG_VARIANCESAMPLE, UA_NS0ID_AGGREGATEFUNCTION_VARIANCESAMPLE,
      "VarianceSample", UA_AGG_T_DOUBLE },
    { UA_AGG_STANDARDDEVIATIONPOPULATION,
      UA_NS0ID_AGGREGATEFUNCTION_STANDARDDEVIATIONPOPULATION,
      "StandardDeviationPopulation", UA_AGG_T_DOUBLE },
    { UA_AGG_VARIANCEPOPULATION,
      UA_NS0ID_AGGREGATEFUNCTION_VARIANCEPOPULATION,
      "VariancePopulation", UA_AGG_T_DOUBLE },
};

const struct ua_agg_info *
ua_aggregate_info(enum ua_agg agg)
{
    if ((unsigned)agg >= UA_AGG_COUNT_)
        return NULL;
    return &ua_aggregate_table[agg];
}

const struct ua_agg_info *
ua_aggregate_by_nodeid(uint32_t nodeid)
{
    for (size_t i = 0; i < UA_AGG_COUNT_; i++)
        if (ua_aggregate_table[i].nodeid == nodeid)
            return &ua_aggregate_table[i];
    return NULL;
}

const struct ua_agg_info *
ua_aggregate_by_name(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < UA_AGG_COUNT_; i++)
        if (strcmp(ua_aggregate_table[i].name, name) == 0)
            return &ua_aggregate_table[i];
    return NULL;
}

/* ------------------------------------------------------------ intervals */

/* The processing interval in ticks, 0 for "the whole range", -1 invalid. */
static int64_t
ua_aggregate_pi_ticks(double ms)
{
    if (!isfinite(ms) || ms < 0
        || ms > (double)(UA_AGG_TIME_MAX / UA_AGGREGATE_TICKS_MS))
        return -1;
    return (int64_t)llround(ms * (double)UA_AGGREGATE_TICKS_MS);
}

size_t
ua_aggregate_intervals(ua_datetime start, ua_datetime end,
                       double processing_interval_ms)
{
    int64_t  pi = ua_aggregate_pi_ticks(processing_interval_ms);
    uint64_t range;

    if (pi < 0 || start == end || start < 0 || end < 0
        || start > UA_AGG_TIME_MAX || end > UA_AGG_TIME_MAX)
        return 0;
    range = start < end ? (uint64_t)end - (uint64_t)start
                        : (uint64_t)start - (uint64_t)end;
    if (pi == 0 || (uint64_t)pi >= range)
        return 1;
    return (size_t)((range + (uint64_t)pi - 1) / (uint64_t)pi);
}

/* ------------------------------------------------------------ samples */

/*
 * Sample i in the run's time order into out: -1 is the bound before, n the
 * one after; false outside or when the caller has no such bound.  A
 * reversed run sees the samples last first with negated timestamps, so
 * that everything else reads forward (see ua_aggregate_run).
 */
static bool
ua_aggregate_get(const struct ua_aggregate_ctx *c, ptrdiff_t i,
                 struct ua_agg_sample *out)
{
    const struct ua_agg_sample *p;

    if (i < -1 || i > (ptrdiff_t)c->n)
        return false;
    if (i == -1)
        p = c->rev ? c->in->after : c->in->before;
    else if (i == (ptrdiff_t)c->n)
        p = c->rev ? c->in->before : c->in->after;
    else
        p = &c->in->s[c->rev ? c->n - 1 - (size_t)i : (size_t)i];
    if (p == NULL)
        return false;
    *out = *p;
    if (c->rev)
        out->ts = -out->ts;
    return true;
}

/* The timestamp of sample i in [0, n) in the run's time order. */
static ua_datetime
ua_aggregate_ts(const struct ua_aggregate_ctx *c, size_t i)
{
    return c->rev ? -c->in->s[c->n - 1 - i].ts : c->in->s[i].ts;
}

/* The first sample index in [0, n) at or after t (n when none). */
static size_t
ua_aggregate_lower(const struct ua_aggregate_ctx *c, ua_datetime t)
{
    size_t lo = 0, hi = c->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (ua_aggregate_ts(c, mid) < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The number of annotations before t in the run's time order. */
static size_t
ua_aggregate_ann_lower(const struct ua_aggregate_ctx *c, ua_datetime t)
{
    size_t n = c->in->n_annotations, lo = 0, hi = n;

    while (lo < hi) {
        size_t      mid = lo + (hi - lo) / 2;
        ua_datetime a = c->rev ? -c->in->annotations[n - 1 - mid]
                               : c->in->annotations[mid];

        if (a < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool
ua_aggregate_nodata(uint32_t status)
{
    return (status & 0xFFFF0000u) == UA_BAD_NO_DATA;
}

/* A status's quality, Uncertain counted Bad under TreatUncertainAsBad. */
static enum ua_aggregate_q
ua_aggregate_quality(const struct ua_aggregate_ctx *c, uint32_t status)
{
    uint32_t sev = status & UA_AGGREGATE_SEVERITY;

    if (sev == 0)
        return UA_AGGREGATE_GOOD;
    if (sev == UA_UNCERTAIN && !c->cfg->treat_uncertain_as_bad)
        return UA_AGGREGATE_UNCERTAIN;
    return UA_AGGREGATE_BAD;
}

static bool
ua_aggregate_usable(const struct ua_aggregate_ctx *c,
                    const struct ua_agg_sample *s)
{
    return ua_aggregate_quality(c, s->status) != UA_AGGREGATE_BAD;
}

/* A point a value cannot be interpolated into: Bad (or none). */
static bool
ua_aggregate_badish(const struct ua_aggregate_ctx *c,
                    const struct ua_aggregate_pt *p)
{
    return p->none || p->q == UA_AGGREGATE_BAD
           || (p->q == UA_AGGREGATE_UNCERTAIN
               && c->cfg->treat_uncertain_as_bad);
}

static void
ua_aggregate_raw_pt(const struct ua_aggregate_ctx *c,
                    const struct ua_agg_sample *s, struct ua_aggregate_pt *p)
{
    memset(p, 0, sizeof *p);
    p->ts = s->ts;
    p->status = s->status;
    p->q = ua_aggregate_quality(c, s->status);
    p->has_value = (s->status & UA_AGGREGATE_SEVERITY) != UA_BAD;
    p->value = p->has_value ? s->value : 0;
    p->raw = true;
}

static double
ua_aggregate_line(const struct ua_agg_sample *a, const struct ua_agg_sample *b,
                  ua_datetime t)
{
    if (b->ts == a->ts)
        return a->value;
    return a->value + (b->value - a->value) * (double)(t - a->ts)
                      / (double)(b->ts - a->ts);
}

/*
 * Sample k extrapolated to t through the usable sample before it (held
 * when there is none): SlopedExtrapolation (§3.1.8).
 */
static double
ua_aggregate_slope(const struct ua_aggregate_ctx *c, ptrdiff_t k,
                   ua_datetime t)
{
    struct ua_agg_sample b, x;

    if (!ua_aggregate_get(c, k, &b))
        return 0;
    for (ptrdiff_t j = k - 1; ua_aggregate_get(c, j, &x); j--)
        if (ua_aggregate_usable(c, &x))
            return ua_aggregate_line(&x, &b, t);
    return b.value;
}

/*
 * The Interpolated Bounding Value at t (Part 13 §3.1.8): a usable sample
 * at t, else the line through the nearest usable samples around t (held
 * when the node is Stepped), Uncertain when a non-usable sample was
 * skipped or either end is Uncertain; past the last usable sample it is
 * extrapolated (sloped through the last two when UseSlopedExtrapolation,
 * else held), Uncertain.  No usable sample before t: none (Bad_NoData).
 */
static void
ua_aggregate_ibound(const struct ua_aggregate_ctx *c, ua_datetime t,
                    struct ua_aggregate_pt *p)
{
    size_t               i = ua_aggregate_lower(c, t);
    struct ua_agg_sample a, b, x;
    ptrdiff_t            j, ja = 0;
    bool                 skipped = false, have_a = false, have_b = false;

    memset(p, 0, sizeof *p);
    p->ts = t;
    if (ua_aggregate_get(c, (ptrdiff_t)i, &x) && x.ts == t
        && ua_aggregate_usable(c, &x)) {
        ua_aggregate_raw_pt(c, &x, p);
        return;
    }
    for (j = (ptrdiff_t)i - 1; ua_aggregate_get(c, j, &x); j--) {
        if (ua_aggregate_usable(c, &x)) {
            a = x;
            ja = j;
            have_a = true;
            break;
        }
        skipped = true;
    }
    if (!have_a) {
        p->none = true;
        p->q = UA_AGGREGATE_BAD;
        p->status = UA_BAD_NO_DATA;
        return;
    }
    for (j = (ptrdiff_t)i; ua_aggregate_get(c, j, &x); j++) {
        if (x.ts > t && ua_aggregate_usable(c, &x)) {
            b = x;
            have_b = true;
            break;
        }
        if (x.ts >= t)
            skipped = true;
    }
    p->has_value = true;
    if (!have_b) {
        p->extrap = true;
        p->value = a.value;
        if (c->cfg->use_sloped_extrapolation && !c->cfg->stepped)
            p->value = ua_aggregate_slope(c, ja, t);
        p->q = UA_AGGREGATE_UNCERTAIN;
        p->status = UA_UNCERTAIN_DATA_SUB_NORMAL;
        return;
    }
    p->value = c->cfg->stepped ? a.value : ua_aggregate_line(&a, &b, t);
    if (skipped || ua_aggregate_quality(c, a.status) != UA_AGGREGATE_GOOD
        || ua_aggregate_quality(c, b.status) != UA_AGGREGATE_GOOD) {
        p->q = UA_AGGREGATE_UNCERTAIN;
        p->status = UA_UNCERTAIN_DATA_SUB_NORMAL;
    } else {
        p->q = UA_AGGREGATE_GOOD;
        p->status = UA_GOOD;
    }
}

/*
 * The Simple Bounding Value at t (Part 13 §3.1.9): the sample at t (Bad:
 * Bad_NoData), else from the samples just before (a) and after (b)
 * whatever their status: a Bad is Bad_NoData; b Bad, or the node Stepped,
 * holds a's value, else the line; Uncertain when a or b is Uncertain or b
 * is Bad.  No sample after t (past the end of the data): none.
 */
static void
ua_aggregate_sbound(const struct ua_aggregate_ctx *c, ua_datetime t,
                    struct ua_aggregate_pt *p)
{
    size_t               i = ua_aggregate_lower(c, t);
    struct ua_agg_sample a, b;
    enum ua_aggregate_q  qa, qb;
    bool                 have_b;

    memset(p, 0, sizeof *p);
    p->ts = t;
    have_b = ua_aggregate_get(c, (ptrdiff_t)i, &b);
    if (have_b && b.ts == t) {
        ua_aggregate_raw_pt(c, &b, p);
        if (p->q == UA_AGGREGATE_BAD) {
            p->has_value = false;
            p->status = UA_BAD_NO_DATA;
        }
        return;
    }
    if (!ua_aggregate_get(c, (ptrdiff_t)i - 1, &a) || !have_b) {
        p->none = true;
        p->q = UA_AGGREGATE_BAD;
        p->status = UA_BAD_NO_DATA;
        return;
    }
    qa = ua_aggregate_quality(c, a.status);
    qb = ua_aggregate_quality(c, b.status);
    if (qa == UA_AGGREGATE_BAD) {
        p->q = UA_AGGREGATE_BAD;
        p->status = UA_BAD_NO_DATA;
        return;
    }
    p->has_value = true;
    if (c->cfg->stepped || qb == UA_AGGREGATE_BAD)
        p->value = a.value;
    else
        p->value = ua_aggregate_line(&a, &b, t);
    if (qa == UA_AGGREGATE_UNCERTAIN || qb != UA_AGGREGATE_GOOD) {
        p->q = UA_AGGREGATE_UNCERTAIN;
        p->status = UA_UNCERTAIN_DATA_SUB_NORMAL;
    } else {
        p->q = UA_AGGREGATE_GOOD;
        p->status = UA_GOOD;
    }
}

/* ------------------------------------------------------------ statuses */

/*
 * Part 13 §5.4.3.2: Bad when there is Bad data and its share reaches
 * PercentDataBad, else Good when the Good share reaches PercentDataGood,
 * Uncertain (UncertainDataSubNormal) otherwise.  By time, good + bad is
 * the interval, so an interval without Bad regions is Good; by count,
 * total also holds the Uncertain values that are neither.
 */
static uint32_t
ua_aggregate_ratio(const struct ua_aggregate_ctx *c, int64_t good,
                   int64_t bad, int64_t total)
{
    if (total <= 0)
        return UA_GOOD;
    if (bad > 0 && (double)bad * 100.0 >= (double)c->cfg->percent_data_bad
                                          * (double)total)
        return UA_BAD;
    if ((double)good * 100.0 >= (double)c->cfg->percent_data_good
                                * (double)total)
        return UA_GOOD;
    return UA_UNCERTAIN_DATA_SUB_NORMAL;
}

/* code with the historian bits; InfoType DataValue when there are any. */
static uint32_t
ua_aggregate_status(uint32_t code, uint32_t bits)
{
    if (bits == 0)
        return code;
    return (code & 0xFFFF0000u) | UA_AGG_INFOTYPE_DATAVALUE | bits;
}

static void
ua_aggregate_set(struct ua_agg_result *r, ua_datetime ts, double v,
                 uint32_t code, uint32_t bits)
{
    r->ts = ts;
    r->value = v;
    r->has_value = (code & UA_AGGREGATE_SEVERITY) != UA_BAD;
    r->status = ua_aggregate_status(code, bits);
}

static void
ua_aggregate_nodata_set(struct ua_agg_result *r, ua_datetime ts,
                        uint32_t bits)
{
    r->ts = ts;
    r->value = 0;
    r->has_value = false;
    r->status = ua_aggregate_status(UA_BAD_NO_DATA, bits);
}

/* ------------------------------------------------------------ regions */

/*
 * Walk the regions of iv between its Simple Bounding Values and the
 * samples inside (see the file comment).  tail: count the stretch after
 * the last sample (no `after`) as an extrapolated Uncertain region; else
 * the interval ends at the data there.
 */
static void
ua_aggregate_walk_run(const struct ua_aggregate_ctx *c,
                      const struct ua_aggregate_iv *iv, bool tail,
                      struct ua_aggregate_walk *w)
{
    struct ua_aggregate_pt a, b;
    size_t                 i = ua_aggregate_lower(c, iv->t0);
    bool                   last = false;

    memset(w, 0, sizeof *w);
    ua_aggregate_sbound(c, iv->t0, &a);
    if (a.raw)
        i++;
    while (!last) {
        struct ua_agg_sample s;
        int64_t              d;
        bool                 rbad, incl;
        enum ua_aggregate_q  rq;

        if (i < c->n && ua_aggregate_get(c, (ptrdiff_t)i, &s)
            && s.ts < iv->t1) {
            ua_aggregate_raw_pt(c, &s, &b);
            i++;
        } else {
            ua_aggregate_sbound(c, iv->t1, &b);
            last = true;
            if (b.none && iv->t1 > c->data_end) {
                /* past the end of the data */
                if (!tail)
                    break;
                b.none = false;
                b.ts = iv->t1;
                b.q = UA_AGGREGATE_UNCERTAIN;
                b.has_value = a.has_value;
                b.value = a.value;
                b.extrap = true;
                if (c->cfg->use_sloped_extrapolation && !c->cfg->stepped
                    && a.raw && a.has_value)
                    b.value = ua_aggregate_slope(c, (ptrdiff_t)i - 1,
                                                 iv->t1);
                /* the region itself is extrapolated: Uncertain */
                if (a.q == UA_AGGREGATE_GOOD)
                    a.q = UA_AGGREGATE_UNCERTAIN;
            }
        }
        d = b.ts - a.ts;
        if (d > 0) {
            rbad = ua_aggregate_badish(c, &b);
            rq = a.q == UA_AGGREGATE_BAD ? UA_AGGREGATE_BAD
                 : rbad ? UA_AGGREGATE_UNCERTAIN : a.q;
            if (rq == UA_AGGREGATE_BAD
                || (rq == UA_AGGREGATE_UNCERTAIN
                    && c->cfg->treat_uncertain_as_bad))
                w->bad += d;
            else
                w->good += d;
            if (a.q == UA_AGGREGATE_GOOD && !a.none)
                w->dgood += d;
            else if (a.q == UA_AGGREGATE_BAD)
                w->dbad += d;
            w->span += d;
            incl = a.q != UA_AGGREGATE_BAD && a.has_value;
            if (incl) {
                double v0 = a.value, v1 = a.value;

                if (!c->cfg->stepped && !rbad && b.has_value)
                    v1 = b.value;
                w->incl += d;
                w->integral += (v0 + v1) / 2.0 * (double)d
                               / (double)(UA_AGGREGATE_TICKS_MS * 1000);
            }
            /* the states count Good stretches only (§5.4.3.23) */
            if (a.q == UA_AGGREGATE_GOOD && !a.none && a.has_value) {
                if (a.value != 0)
                    w->nonzero += d;
                else
                    w->zero += d;
            }
        }
        a = b;
    }
}

/* ------------------------------------------------------------ the run */

ua_status
ua_aggregate_run(enum ua_agg agg, const struct ua_agg_config *cfg,
                 const struct ua_agg_input *in, ua_datetime start,
                 ua_datetime end, double processing_interval_ms,
                 struct ua_agg_result *out, size_t out_len)
{
    struct ua_aggregate_ctx c;
    size_t                  n, k;
    int64_t                 pi;

    if ((unsigned)agg >= UA_AGG_COUNT_)
        return UA_BAD_AGGREGATE_NOT_SUPPORTED;
    if (cfg->percent_data_bad > 100 || cfg->percent_data_good > 100)
        return UA_BAD_AGGREGATE_CONFIGURATION_REJECTED;
    n = ua_aggregate_intervals(start, end, processing_interval_ms);
    if (n == 0 || out_len < n)
        return UA_BAD_AGGREGATE_INVALID_INPUTS;
    pi = ua_aggregate_pi_ticks(processing_interval_ms);

    c.cfg = cfg;
    c.in = in;
    c.n = in->n;
    c.rev = end < start;
    if (c.rev) {
        start = -start;
        end = -end;
    }
    c.data_start = INT64_MAX;
    c.data_end = INT64_MIN;
    {
        struct ua_agg_sample x;

        if (ua_aggregate_get(&c, -1, &x) && !ua_aggregate_nodata(x.status))
            c.data_start = INT64_MIN;
        else
            for (k = 0; k < c.n; k++) {
                ua_aggregate_get(&c, (ptrdiff_t)k, &x);
                if (!ua_aggregate_nodata(x.status)) {
                    c.data_start = x.ts;
                    break;
                }
            }
        if (ua_aggregate_get(&c, (ptrdiff_t)c.n, &x))
            c.data_end = INT64_MAX;
        else if (c.n > 0)
            c.data_end = ua_aggregate_ts(&c, c.n - 1);
        else if (ua_aggregate_get(&c, -1, &x))
            c.data_end = x.ts;
    }

    for (k = 0; k < n; k++) {
        struct ua_aggregate_iv iv;

        if (n == 1 || pi == 0) {
            iv.t0 = start;
            iv.t1 = end;
        } else {
            iv.t0 = start + (int64_t)k * pi;
            iv.t1 = k + 1 == n ? end : iv.t0 + pi;
        }
        iv.partial = (iv.t0 < c.data_start && c.data_start < iv.t1)
                     || (iv.t1 > c.data_end && c.data_end >= iv.t0)
                     || (pi != 0 && n > 1 && iv.t1 - iv.t0 < pi);
        if (iv.t1 <= c.data_start
            || (iv.t0 > c.data_end && agg != UA_AGG_INTERPOLATIVE))
            ua_aggregate_nodata_set(&out[k], iv.t0, 0);
        else
            ua_aggregate_one(agg, &c, &iv, &out[k]);
        if (c.rev)
            out[k].ts = -out[k].ts;
    }
    return UA_GOOD;
}

static void
ua_aggregate_one(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                 const struct ua_aggregate_iv *iv, struct ua_agg_result *r)
{
    switch (agg) {
    case UA_AGG_INTERPOLATIVE:
        ua_aggregate_interp(c, iv, r);
        break;
    case UA_AGG_TIMEAVERAGE:
    case UA_AGG_TOTAL:
        ua_aggregate_timeavg(agg, c, iv, r);
        break;
    case UA_AGG_TIMEAVERAGE2:
    case UA_AGG_TOTAL2:
    case UA_AGG_DURATIONINSTATEZERO:
    case UA_AGG_DURATIONINSTATENONZERO:
        ua_aggregate_timeavg2(agg, c, iv, r);
        break;
    case UA_AGG_AVERAGE:
    case UA_AGG_COUNT:
    case UA_AGG_ANNOTATIONCOUNT:
    case UA_AGG_NUMBEROFTRANSITIONS:
    case UA_AGG_STANDARDDEVIATIONSAMPLE:
    case UA_AGG_VARIANCESAMPLE:
    case UA_AGG_STANDARDDEVIATIONPOPULATION:
    case UA_AGG_VARIANCEPOPULATION:
        ua_aggregate_counted(agg, c, iv, r);
        break;
    case UA_AGG_MINIMUM:
    case UA_AGG_MAXIMUM:
    case UA_AGG_MINIMUMACTUALTIME:
    case UA_AGG_MAXIMUMACTUALTIME:
    case UA_AGG_RANGE:
    case UA_AGG_DELTA:
        ua_aggregate_minmax(agg, c, iv, r);
        break;
    case UA_AGG_MINIMUM2:
    case UA_AGG_MAXIMUM2:
    case UA_AGG_MINIMUMACTUALTIME2:
    case UA_AGG_MAXIMUMACTUALTIME2:
    case UA_AGG_RANGE2:
        ua_aggregate_minmax2(agg, c, iv, r);
        break;
    case UA_AGG_START:
    case UA_AGG_END:
        ua_aggregate_startend(agg, c, iv, r);
        break;
    case UA_AGG_STARTBOUND:
    case UA_AGG_ENDBOUND:
    case UA_AGG_DELTABOUNDS:
        ua_aggregate_bounds(agg, c, iv, r);
        break;
    case UA_AGG_DURATIONGOOD:
    case UA_AGG_DURATIONBAD:
    case UA_AGG_PERCENTGOOD:
    case UA_AGG_PERCENTBAD:
        ua_aggregate_durations(agg, c, iv, r);
        break;
    case UA_AGG_WORSTQUALITY:
    case UA_AGG_WORSTQUALITY2:
        ua_aggregate_worst(agg, c, iv, r);
        break;
    default:
        ua_aggregate_nodata_set(r, iv->t0, 0);
        break;
    }
}

/* ------------------------------------------------------------ families */

/* Interpolative (§5.4.3.4): the Interpolated Bounding Value at t0. */
static void
ua_aggregate_interp(const struct ua_aggregate_ctx *c,
                    const struct ua_aggregate_iv *iv, struct ua_agg_result *r)
{
    struct ua_aggregate_pt p;

    ua_aggregate_ibound(c, iv->t0, &p);
    if (p.none) {
        ua_aggregate_nodata_set(r, iv->t0, 0);
        return;
    }
    if (p.raw) {
        r->ts = iv->t0;
        r->value = p.value;
        r->has_value = true;
        r->status = p.status;
        return;
    }
    ua_aggregate_set(r, iv->t0, p.value, p.status, UA_AGG_INTERPOLATED);
}

/*
 * TimeAverage, Total (§5.4.3.6, §5.4.3.8): the area under the line through
 * the Interpolated Bounding Values and the usable samples between them
 * (always sloped), over the time it covers; Total is the area (value *
 * seconds), TimeAverage the area over that time.  Uncertain when a bound
 * or a used sample is Uncertain or a sample was skipped.
 */
static void
ua_aggregate_timeavg(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                     const struct ua_aggregate_iv *iv,
                     struct ua_agg_result *r)
{
    struct ua_aggregate_pt b0, b1;
    size_t                 i = ua_aggregate_lower(c, iv->t0);
    bool                   unc = false, have = false;
    ua_datetime            first = 0, pts = 0;
    double                 pv = 0, area = 0;
    uint32_t               bits = UA_AGG_CALCULATED;

    ua_aggregate_ibound(c, iv->t0, &b0);
    ua_aggregate_ibound(c, iv->t1, &b1);
    if (!b0.none) {
        have = true;
        first = pts = b0.ts;
        pv = b0.value;
        unc = b0.q != UA_AGGREGATE_GOOD;
    }
    for (; i < c->n && ua_aggregate_ts(c, i) < iv->t1; i++) {
        struct ua_agg_sample sv, *s = &sv;

        ua_aggregate_get(c, (ptrdiff_t)i, &sv);

        if (!ua_aggregate_usable(c, s)) {
            unc = true;
            continue;
        }
        if (ua_aggregate_quality(c, s->status) != UA_AGGREGATE_GOOD)
            unc = true;
        if (have)
            area += (pv + s->value) / 2.0 * (double)(s->ts - pts);
        else
            first = s->ts;
        have = true;
        pts = s->ts;
        pv = s->value;
    }
    if (!have || b1.none) {
        ua_aggregate_nodata_set(r, iv->t0, iv->partial ? UA_AGG_PARTIAL : 0);
        return;
    }
    if (b1.q != UA_AGGREGATE_GOOD)
        unc = true;
    area += (pv + b1.value) / 2.0 * (double)(b1.ts - pts);
    if (iv->partial)
        bits |= UA_AGG_PARTIAL;
    if (b1.ts == first) {
        ua_aggregate_set(r, iv->t0, pv, unc ? UA_UNCERTAIN_DATA_SUB_NORMAL
                                            : UA_GOOD, bits);
        if (agg == UA_AGG_TOTAL)
            r->value = 0;
        return;
    }
    ua_aggregate_set(r, iv->t0,
                     agg == UA_AGG_TOTAL
                         ? area / (double)(UA_AGGREGATE_TICKS_MS * 1000)
                         : area / (double)(b1.ts - first),
                     unc ? UA_UNCERTAIN_DATA_SUB_NORMAL : UA_GOOD, bits);
}

/*
 * TimeAverage2, Total2 (§5.4.3.7, §5.4.3.9) and DurationInStateZero /
 * NonZero (§5.4.3.22, §5.4.3.23): the region walk with Simple Bounding
 * Values; the value counts the regions that start at a usable point, the
 * status is PercentTime.
 */
static void
ua_aggregate_timeavg2(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                      const struct ua_aggregate_iv *iv,
                      struct ua_agg_result *r)
{
    struct ua_aggregate_walk w;
    bool                     dur = agg == UA_AGG_DURATIONINSTATEZERO
                                   || agg == UA_AGG_DURATIONINSTATENONZERO;
    uint32_t                 code, bits = UA_AGG_CALCULATED;
    double                   v;

    ua_aggregate_walk_run(c, iv, !dur, &w);
    code = ua_aggregate_ratio(c, w.good, w.bad, w.good + w.bad);
    if (iv->partial)
        bits |= UA_AGG_PARTIAL;
    if (agg == UA_AGG_DURATIONINSTATEZERO)
        v = (double)w.zero / (double)UA_AGGREGATE_TICKS_MS;
    else if (agg == UA_AGG_DURATIONINSTATENONZERO)
        v = (double)w.nonzero / (double)UA_AGGREGATE_TICKS_MS;
    else if (agg == UA_AGG_TOTAL2)
        v = w.integral;
    else if (w.incl > 0)
        v = w.integral * (double)(UA_AGGREGATE_TICKS_MS * 1000)
            / (double)w.incl;
    else
        v = 0;
    if (!dur && w.incl == 0 && (code & UA_AGGREGATE_SEVERITY) != UA_BAD) {
        ua_aggregate_nodata_set(r, iv->t0, bits & UA_AGG_PARTIAL);
        return;
    }
    ua_aggregate_set(r, iv->t0, v, code, bits);
}

/*
 * The aggregates over the samples by count (§5.4.3.5 Average, §5.4.3.20
 * AnnotationCount, §5.4.3.21 Count, §5.4.3.24 NumberOfTransitions,
 * §5.4.3.37-40 the standard deviations and variances): the Good samples
 * are the values; the status is PercentValues, where an Uncertain sample
 * (TreatUncertainAsBad false) is neither Good nor Bad (Count: "non-Good
 * values are not included").  BadNoData samples do not count.
 */
static void
ua_aggregate_counted(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                     const struct ua_aggregate_iv *iv,
                     struct ua_agg_result *r)
{
    size_t   i = ua_aggregate_lower(c, iv->t0);
    int64_t  good = 0, bad = 0, total = 0, trans = 0;
    double   mean = 0, m2 = 0, v = 0, sum = 0;
    bool     var = agg == UA_AGG_VARIANCEPOPULATION
                   || agg == UA_AGG_VARIANCESAMPLE
                   || agg == UA_AGG_STANDARDDEVIATIONPOPULATION
                   || agg == UA_AGG_STANDARDDEVIATIONSAMPLE;
    uint32_t code, bits = UA_AGG_CALCULATED;
    struct ua_agg_sample prev = { 0, 0, 0 }, x;
    bool                 have_prev = false;
    ptrdiff_t            j;

    if (iv->partial && agg != UA_AGG_AVERAGE)
        bits |= UA_AGG_PARTIAL;
    if (agg == UA_AGG_ANNOTATIONCOUNT) {
        int64_t n = 0;

        n = (int64_t)(ua_aggregate_ann_lower(c, iv->t1)
                      - ua_aggregate_ann_lower(c, iv->t0));
        ua_aggregate_set(r, iv->t0, (double)n, UA_GOOD, bits);
        return;
    }
    if (agg == UA_AGG_NUMBEROFTRANSITIONS)
        for (j = (ptrdiff_t)i - 1; ua_aggregate_get(c, j, &x); j--)
            if (ua_aggregate_usable(c, &x)) {
                prev = x;
                have_prev = true;
                break;
            }
    for (; i < c->n && ua_aggregate_ts(c, i) < iv->t1; i++) {
        struct ua_agg_sample sv, *s = &sv;

        ua_aggregate_get(c, (ptrdiff_t)i, &sv);
        enum ua_aggregate_q         q;

        if (ua_aggregate_nodata(s->status))
            continue;
        q = ua_aggregate_quality(c, s->status);
        total++;
        if (q == UA_AGGREGATE_BAD) {
            bad++;
            continue;
        }
        if (agg == UA_AGG_NUMBEROFTRANSITIONS) {
            if (!have_prev || prev.value != s->value)
                trans++;
            prev = *s;
            have_prev = true;
        }
        if (q != UA_AGGREGATE_GOOD)
            continue;
        good++;
        sum += s->value;
        if (var) {      /* Welford: no cancellation in the variance */
            double d = s->value - mean;

            mean += d / (double)good;
            m2 += d * (s->value - mean);
        }
    }
    if (agg == UA_AGG_AVERAGE && good == 0) {
        ua_aggregate_nodata_set(r, iv->t0, 0);
        return;
    }
    code = ua_aggregate_ratio(c, good, bad, total);
    if ((code & UA_AGGREGATE_SEVERITY) == UA_BAD) {
        ua_aggregate_set(r, iv->t0, 0, UA_BAD, bits);
        return;
    }
    switch (agg) {
    case UA_AGG_COUNT:
        v = (double)good;
        break;
    case UA_AGG_NUMBEROFTRANSITIONS:
        v = (double)trans;
        break;
    case UA_AGG_AVERAGE:
        if (good == 0) {
            ua_aggregate_nodata_set(r, iv->t0, 0);
            return;
        }
        v = sum / (double)good;
        break;
    case UA_AGG_VARIANCEPOPULATION:
    case UA_AGG_STANDARDDEVIATIONPOPULATION:
    case UA_AGG_VARIANCESAMPLE:
    case UA_AGG_STANDARDDEVIATIONSAMPLE:
        if (good == 0) {
            ua_aggregate_nodata_set(r, iv->t0, bits & UA_AGG_PARTIAL);
            return;
        }
        if (agg == UA_AGG_VARIANCEPOPULATION
            || agg == UA_AGG_STANDARDDEVIATIONPOPULATION)
            v = m2 / (double)good;
        else
            v = good > 1 ? m2 / (double)(good - 1) : 0;
        if (agg == UA_AGG_STANDARDDEVIATIONPOPULATION
            || agg == UA_AGG_STANDARDDEVIATIONSAMPLE)
            v = sqrt(v);
        break;
    default:
        break;
    }
    ua_aggregate_set(r, iv->t0, v, code, bits);
}

/*
 * Minimum, Maximum, their ActualTime forms, Range (§5.4.3.10-14) and
 * Delta (§5.4.3.27): over the Good samples; Uncertain when a Bad sample
 * is in the interval or an Uncertain one lies beyond the extreme; no Good
 * sample: Bad_NoData.
 */
static void
ua_aggregate_minmax(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                    const struct ua_aggregate_iv *iv,
                    struct ua_agg_result *r)
{
    size_t   i = ua_aggregate_lower(c, iv->t0);
    bool     want_min = agg == UA_AGG_MINIMUM
                        || agg == UA_AGG_MINIMUMACTUALTIME;
    struct ua_agg_sample lo = { 0, 0, 0 }, hi = lo, first = lo, last = lo;
    bool                 have = false;
    bool     lo_multi = false, hi_multi = false, badseen = false;
    double   umin = INFINITY, umax = -INFINITY;
    uint32_t code = UA_GOOD, bits = 0;

    for (; i < c->n && ua_aggregate_ts(c, i) < iv->t1; i++) {
        struct ua_agg_sample sv, *s = &sv;

        ua_aggregate_get(c, (ptrdiff_t)i, &sv);
        uint32_t                    sev = s->status & UA_AGGREGATE_SEVERITY;

        if (ua_aggregate_nodata(s->status))
            continue;
        if (sev == UA_BAD
            || (sev == UA_UNCERTAIN && c->cfg->treat_uncertain_as_bad)) {
            badseen = true;
            continue;
        }
        if (sev == UA_UNCERTAIN) {
            umin = fmin(umin, s->value);
            umax = fmax(umax, s->value);
            if (agg == UA_AGG_DELTA)
                badseen = true;
            continue;
        }
        if (!have)
            first = lo = hi = *s;
        last = *s;
        if (have && s->value < lo.value) {
            lo = *s;
            lo_multi = false;
        } else if (have && s->value == lo.value)
            lo_multi = true;
        if (have && s->value > hi.value) {
            hi = *s;
            hi_multi = false;
        } else if (have && s->value == hi.value)
            hi_multi = true;
        have = true;
    }
    if (!have) {
        ua_aggregate_nodata_set(r, iv->t0, iv->partial ? UA_AGG_PARTIAL : 0);
        return;
    }
    if (badseen)
        code = UA_UNCERTAIN_DATA_SUB_NORMAL;
    if ((agg == UA_AGG_MINIMUM || agg == UA_AGG_MINIMUMACTUALTIME
         || agg == UA_AGG_RANGE) && umin < lo.value)
        code = UA_UNCERTAIN_DATA_SUB_NORMAL;
    if ((agg == UA_AGG_MAXIMUM || agg == UA_AGG_MAXIMUMACTUALTIME
         || agg == UA_AGG_RANGE) && umax > hi.value)
        code = UA_UNCERTAIN_DATA_SUB_NORMAL;
    if (iv->partial)
        bits |= UA_AGG_PARTIAL;
    switch (agg) {
    case UA_AGG_MINIMUM:
    case UA_AGG_MAXIMUM: {
        const struct ua_agg_sample *e = want_min ? &lo : &hi;

        if (e->ts != iv->t0 || code != UA_GOOD)
            bits |= UA_AGG_CALCULATED;
        if (want_min ? lo_multi : hi_multi)
            bits |= UA_AGG_MULTIVALUE;
        ua_aggregate_set(r, iv->t0, e->value, code, bits);
        break;
    }
    case UA_AGG_MINIMUMACTUALTIME:
    case UA_AGG_MAXIMUMACTUALTIME: {
        const struct ua_agg_sample *e = want_min ? &lo : &hi;

        if (code != UA_GOOD)
            bits |= UA_AGG_CALCULATED;
        if (want_min ? lo_multi : hi_multi)
            bits |= UA_AGG_MULTIVALUE;
        ua_aggregate_set(r, e->ts, e->value, code, bits);
        break;
    }
    case UA_AGG_RANGE:
        ua_aggregate_set(r, iv->t0, hi.value - lo.value, code,
                         bits | UA_AGG_CALCULATED);
        break;
    default: /* Delta */
        ua_aggregate_set(r, iv->t0, last.value - first.value, code,
                         bits | UA_AGG_CALCULATED);
        break;
    }
}

/*
 * Minimum2, Maximum2, their ActualTime forms and Range2 (§5.4.3.15-19):
 * as Minimum but over the Simple Bounding Values too (the end bound only
 * when the node is not Stepped), Uncertain samples only when
 * TreatUncertainAsBad is false; the status is PercentTime.
 */
static void
ua_aggregate_minmax2(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                     const struct ua_aggregate_iv *iv,
                     struct ua_agg_result *r)
{
    struct ua_aggregate_pt   b0, b1, lo, hi, p;
    struct ua_aggregate_walk w;
    size_t                   i = ua_aggregate_lower(c, iv->t0);
    bool                     have = false, lo_multi = false, hi_multi = false;
    int                      lo_kind = 0, hi_kind = 0;  /* 0 start 1 raw 2 end */
    bool                     want_min = agg == UA_AGG_MINIMUM2
                                        || agg == UA_AGG_MINIMUMACTUALTIME2;
    bool                     actual = agg == UA_AGG_MINIMUMACTUALTIME2
                                      || agg == UA_AGG_MAXIMUMACTUALTIME2;
    uint32_t                 code, bits = 0;

    memset(&lo, 0, sizeof lo);
    memset(&hi, 0, sizeof hi);
    ua_aggregate_walk_run(c, iv, true, &w);
    code = ua_aggregate_ratio(c, w.good, w.bad, w.good + w.bad);
    ua_aggregate_sbound(c, iv->t0, &b0);
    ua_aggregate_sbound(c, iv->t1, &b1);
    if (b0.raw)
        i++;
    for (int kind = 0; kind < 3; kind++) {
        size_t end = i;

        if (kind == 1)
            while (end < c->n && ua_aggregate_ts(c, end) < iv->t1)
                end++;
        for (size_t k = kind == 1 ? i : 0; kind == 1 ? k < end : k < 1; k++) {
            if (kind == 0)
                p = b0;
            else if (kind == 2)
                p = b1;
            else {
                struct ua_agg_sample x;

                ua_aggregate_get(c, (ptrdiff_t)k, &x);
                ua_aggregate_raw_pt(c, &x, &p);
            }
            if (p.none || !p.has_value || p.q == UA_AGGREGATE_BAD)
                continue;
            if (kind == 2 && c->cfg->stepped)
                continue;
            if (!have || p.value < lo.value) {
                lo = p;
                lo_kind = kind;
                lo_multi = false;
            } else if (p.value == lo.value)
                lo_multi = true;
            if (!have || p.value > hi.value) {
                hi = p;
                hi_kind = kind;
                hi_multi = false;
            } else if (p.value == hi.value)
                hi_multi = true;
            have = true;
        }
    }
    if (iv->partial)
        bits |= UA_AGG_PARTIAL;
    if (!have || (code & UA_AGGREGATE_SEVERITY) == UA_BAD) {
        if (!have)
            ua_aggregate_nodata_set(r, iv->t0, bits);
        else
            ua_aggregate_set(r, iv->t0, 0, UA_BAD, bits | UA_AGG_CALCULATED);
        return;
    }
    if (agg == UA_AGG_RANGE2) {
        ua_aggregate_set(r, iv->t0, hi.value - lo.value, code,
                         bits | UA_AGG_CALCULATED);
        return;
    }
    {
        struct ua_aggregate_pt *e = want_min ? &lo : &hi;
        int                     kind = want_min ? lo_kind : hi_kind;
        ua_datetime             ts = iv->t0;

        if (want_min ? lo_multi : hi_multi)
            bits |= UA_AGG_MULTIVALUE;
        if (actual) {
            ts = e->ts;
            if (kind == 2) {
                ts = iv->t1 - UA_AGGREGATE_EFFECTIVE;
                bits |= UA_AGG_INTERPOLATED;
            } else if (!e->raw)
                bits |= UA_AGG_INTERPOLATED;
        } else if (kind == 0)
            bits |= e->raw ? 0 : UA_AGG_INTERPOLATED;
        else if (kind == 2)
            bits |= e->raw ? UA_AGG_CALCULATED : UA_AGG_INTERPOLATED;
        else
            bits |= UA_AGG_CALCULATED;
        ua_aggregate_set(r, ts, e->value, code, bits);
    }
}

/* Start, End (§5.4.3.25, §5.4.3.26): the first / last sample, as stored. */
static void
ua_aggregate_startend(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                      const struct ua_aggregate_iv *iv,
                      struct ua_agg_result *r)
{
    size_t               i = ua_aggregate_lower(c, iv->t0);
    struct ua_agg_sample x, ev = { 0, 0, 0 }, *e = NULL;

    for (; i < c->n && ua_aggregate_ts(c, i) < iv->t1; i++) {
        ua_aggregate_get(c, (ptrdiff_t)i, &x);
        if (ua_aggregate_nodata(x.status))
            continue;
        ev = x;
        e = &ev;
        if (agg == UA_AGG_START)
            break;
    }
    if (e == NULL) {
        ua_aggregate_nodata_set(r, iv->t0, iv->partial ? UA_AGG_PARTIAL : 0);
        return;
    }
    r->ts = e->ts;
    r->value = e->value;
    r->has_value = (e->status & UA_AGGREGATE_SEVERITY) != UA_BAD;
    r->status = iv->partial ? ua_aggregate_status(e->status, UA_AGG_PARTIAL)
                            : e->status;
}

/*
 * StartBound, EndBound, DeltaBounds (§5.4.3.28-30): the Simple Bounding
 * Values at t0 and t1 and their difference.
 */
static void
ua_aggregate_bounds(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                    const struct ua_aggregate_iv *iv,
                    struct ua_agg_result *r)
{
    struct ua_aggregate_pt b0, b1;
    uint32_t               part = iv->partial ? UA_AGG_PARTIAL : 0;

    ua_aggregate_sbound(c, iv->t0, &b0);
    ua_aggregate_sbound(c, iv->t1, &b1);
    if (agg == UA_AGG_STARTBOUND) {
        if (!b0.has_value) {
            ua_aggregate_nodata_set(r, iv->t0, part);
            return;
        }
        ua_aggregate_set(r, iv->t0, b0.value, b0.status,
                         part | (b0.raw ? 0 : UA_AGG_INTERPOLATED));
        return;
    }
    if (agg == UA_AGG_ENDBOUND) {
        if (!b1.has_value) {
            ua_aggregate_nodata_set(r, iv->t0, part);
            return;
        }
        ua_aggregate_set(r, iv->t0, b1.value, b1.status,
                         part | UA_AGG_CALCULATED);
        return;
    }
    if (!b0.has_value || !b1.has_value) {
        ua_aggregate_nodata_set(r, iv->t0, part);
        return;
    }
    ua_aggregate_set(r, iv->t0, b1.value - b0.value,
                     b0.q == UA_AGGREGATE_GOOD && b1.q == UA_AGGREGATE_GOOD
                         ? UA_GOOD : UA_UNCERTAIN_DATA_SUB_NORMAL,
                     part | UA_AGG_CALCULATED);
}

/*
 * DurationGood, DurationBad, PercentGood, PercentBad (§5.4.3.31-34): the
 * regions by the quality of the point each starts at, the first one's by
 * the start bound; the percentages over the interval up to the end of the
 * data (a partial last interval counts its own length).  Always Good.
 */
static void
ua_aggregate_durations(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                       const struct ua_aggregate_iv *iv,
                       struct ua_agg_result *r)
{
    struct ua_aggregate_walk w;
    double                   v;
    uint32_t                 bits = UA_AGG_CALCULATED;

    ua_aggregate_walk_run(c, iv, false, &w);
    if (iv->partial)
        bits |= UA_AGG_PARTIAL;
    switch (agg) {
    case UA_AGG_DURATIONGOOD:
        v = (double)w.dgood / (double)UA_AGGREGATE_TICKS_MS;
        break;
    case UA_AGG_DURATIONBAD:
        v = (double)w.dbad / (double)UA_AGGREGATE_TICKS_MS;
        break;
    case UA_AGG_PERCENTGOOD:
        v = w.span > 0 ? (double)w.dgood * 100.0 / (double)w.span : 0;
        break;
    default:
        v = w.span > 0 ? (double)w.dbad * 100.0 / (double)w.span : 0;
        break;
    }
    ua_aggregate_set(r, iv->t0, v, UA_GOOD, bits);
}

/*
 * WorstQuality, WorstQuality2 (§5.4.3.35, §5.4.3.36): the worst severity
 * among the samples (and, for 2, the Simple Bounding Values, a missing
 * one counting as Bad_NoData); the first such status is the value,
 * MultipleValues when another point has the same severity.  Good.
 */
static void
ua_aggregate_worst(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                   const struct ua_aggregate_iv *iv, struct ua_agg_result *r)
{
    size_t                 i = ua_aggregate_lower(c, iv->t0);
    struct ua_aggregate_pt b0, b1;
    uint32_t               worst = 0, bits = UA_AGG_CALCULATED;
    bool                   have = false, multi = false;

    if (iv->partial)
        bits |= UA_AGG_PARTIAL;
    if (agg == UA_AGG_WORSTQUALITY2) {
        ua_aggregate_sbound(c, iv->t0, &b0);
        ua_aggregate_sbound(c, iv->t1, &b1);
        worst = b0.status;
        have = true;
        if (b0.raw)
            i++;
    }
    for (;; i++) {
        uint32_t st, sev, wsev;

        if (i < c->n && ua_aggregate_ts(c, i) < iv->t1) {
            struct ua_agg_sample x;

            ua_aggregate_get(c, (ptrdiff_t)i, &x);
            if (agg == UA_AGG_WORSTQUALITY && ua_aggregate_nodata(x.status))
                continue;
            st = x.status;
        } else if (agg == UA_AGG_WORSTQUALITY2 && have) {
            st = b1.status;
            have = false;   /* consumed: stop after this one */
            i = c->n;
            sev = st & UA_AGGREGATE_SEVERITY;
            wsev = worst & UA_AGGREGATE_SEVERITY;
            if (sev > wsev)
                worst = st, multi = false;
            else if (sev == wsev && sev != 0)
                multi = true;
            break;
        } else
            break;
        sev = st & UA_AGGREGATE_SEVERITY;
        if (!have) {
            worst = st;
            have = true;
            continue;
        }
        wsev = worst & UA_AGGREGATE_SEVERITY;
        if (sev > wsev) {
            worst = st;
            multi = false;
        } else if (sev == wsev && sev != 0)
            multi = true;
    }
    if (agg == UA_AGG_WORSTQUALITY && !have) {
        ua_aggregate_nodata_set(r, iv->t0, bits & UA_AGG_PARTIAL);
        return;
    }
    if (multi)
        bits |= UA_AGG_MULTIVALUE;
    ua_aggregate_set(r, iv->t0, (double)(worst & 0xFFFF0000u), UA_GOOD,
                     bits);
}
