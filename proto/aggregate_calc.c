/*
 * proto/aggregate_calc.c: the standard aggregates of Part 13 §5.4.3 by
 * family, one interval at a time (aggregate_int.h); ua_aggregate_run()
 * (aggregate.c) has already answered the intervals before the data and
 * after it.  Each function states the sections it follows.
 *
 * Pure: no allocation, no I/O, no global state.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aggregate.h"
#include "aggregate_int.h"
#include "status_gen.h"

/* Interpolative (§5.4.3.4): the Interpolated Bounding Value at t0. */
void
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
void
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
void
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
void
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
void
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
void
ua_aggregate_minmax2(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                     const struct ua_aggregate_iv *iv,
                     struct ua_agg_result *r)
{
    struct ua_aggregate_pt   b0, b1, lo, hi, p;
    struct ua_aggregate_walk w;
    size_t                   i = ua_aggregate_lower(c, iv->t0);
    bool                     have = false, lo_multi = false, hi_multi = false;
    int                      lo_kind = 0, hi_kind = 0; /* start, raw, end */
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
    /* candidates in time order: start bound, samples, end bound */
    for (int kind = 0; kind < 3; kind++) {
        bool more = true;

        while (more) {
            struct ua_agg_sample x;

            if (kind == 0) {
                p = b0;
                more = false;
            } else if (kind == 2) {
                p = b1;
                more = false;
                if (c->cfg->stepped)    /* the end bound: sloped only */
                    break;
            } else if (i < c->n && ua_aggregate_ts(c, i) < iv->t1) {
                ua_aggregate_get(c, (ptrdiff_t)i++, &x);
                ua_aggregate_raw_pt(c, &x, &p);
            } else
                break;
            if (p.none || !p.has_value || p.q == UA_AGGREGATE_BAD)
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
void
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
void
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
void
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
void
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
