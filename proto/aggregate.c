/*
 * proto/aggregate.c: the Part 13 aggregate engine (aggregate.h): the table
 * of aggregate functions, the intervals and the run, which answers the
 * intervals before and after the data and hands every other one to its
 * family (aggregate_calc.c); the samples, bounds, statuses and regions are
 * in aggregate_bound.c, what the three share in aggregate_int.h.
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
 * of an interval (ua_aggregate_walk_run): each region runs from one point
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

#include "aggregate_int.h"
#include "nodeids_gen.h"
#include "status_gen.h"

static int64_t ua_aggregate_pi_ticks(double ms);
static void ua_aggregate_one(enum ua_agg agg,
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

