/*
 * proto/aggregate_bound.c: the aggregate engine's view of the samples
 * (aggregate_int.h): access in the run's time order (negated for a
 * backward read), qualities, the Interpolated and Simple Bounding Values
 * (Part 13 §3.1.8, §3.1.9), the status rules (§5.3.3, §5.4.3.2) and the
 * walk over an interval's regions that the time-weighted aggregates with
 * Simple Bounding Values share.  See proto/aggregate.c for the whole.
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

/* ------------------------------------------------------------ samples */

/*
 * Sample i in the run's time order into out: -1 is the bound before, n the
 * one after; false outside or when the caller has no such bound.  A
 * reversed run sees the samples last first with negated timestamps, so
 * that everything else reads forward (see ua_aggregate_run).
 */
bool
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
ua_datetime
ua_aggregate_ts(const struct ua_aggregate_ctx *c, size_t i)
{
    return c->rev ? -c->in->s[c->n - 1 - i].ts : c->in->s[i].ts;
}

/* The first sample index in [0, n) at or after t (n when none). */
size_t
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
size_t
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

bool
ua_aggregate_nodata(uint32_t status)
{
    return (status & 0xFFFF0000u) == UA_BAD_NO_DATA;
}

/* A status's quality, Uncertain counted Bad under TreatUncertainAsBad. */
enum ua_aggregate_q
ua_aggregate_quality(const struct ua_aggregate_ctx *c, uint32_t status)
{
    uint32_t sev = status & UA_AGGREGATE_SEVERITY;

    if (sev == 0)
        return UA_AGGREGATE_GOOD;
    if (sev == UA_UNCERTAIN && !c->cfg->treat_uncertain_as_bad)
        return UA_AGGREGATE_UNCERTAIN;
    return UA_AGGREGATE_BAD;
}

bool
ua_aggregate_usable(const struct ua_aggregate_ctx *c,
                    const struct ua_agg_sample *s)
{
    return ua_aggregate_quality(c, s->status) != UA_AGGREGATE_BAD;
}

/* A point a value cannot be interpolated into: Bad (or none). */
bool
ua_aggregate_badish(const struct ua_aggregate_ctx *c,
                    const struct ua_aggregate_pt *p)
{
    return p->none || p->q == UA_AGGREGATE_BAD
           || (p->q == UA_AGGREGATE_UNCERTAIN
               && c->cfg->treat_uncertain_as_bad);
}

void
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

double
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
double
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
void
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
void
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
uint32_t
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
uint32_t
ua_aggregate_status(uint32_t code, uint32_t bits)
{
    if (bits == 0)
        return code;
    return (code & 0xFFFF0000u) | UA_AGG_INFOTYPE_DATAVALUE | bits;
}

void
ua_aggregate_set(struct ua_agg_result *r, ua_datetime ts, double v,
                 uint32_t code, uint32_t bits)
{
    r->ts = ts;
    r->value = v;
    r->has_value = (code & UA_AGGREGATE_SEVERITY) != UA_BAD;
    r->status = ua_aggregate_status(code, bits);
}

void
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
void
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

