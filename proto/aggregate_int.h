/*
 * proto/aggregate_int.h: what the files of the aggregate engine share
 * (aggregate.c: the table, the intervals and the run; aggregate_bound.c:
 * the samples, the bounding values, the statuses and the region walk;
 * aggregate_calc.c: the aggregates by family).  Not for other modules:
 * proto/aggregate.h is the interface.
 */
#ifndef UA_AGGREGATE_INT_H
#define UA_AGGREGATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"
#include "types.h"

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

/* aggregate_bound.c */
bool ua_aggregate_get(const struct ua_aggregate_ctx *c, ptrdiff_t i,
                      struct ua_agg_sample *out);
ua_datetime ua_aggregate_ts(const struct ua_aggregate_ctx *c, size_t i);
size_t ua_aggregate_lower(const struct ua_aggregate_ctx *c, ua_datetime t);
size_t ua_aggregate_ann_lower(const struct ua_aggregate_ctx *c, ua_datetime t);
bool ua_aggregate_nodata(uint32_t status);
enum ua_aggregate_q ua_aggregate_quality(const struct ua_aggregate_ctx *c,
                                         uint32_t status);
bool ua_aggregate_usable(const struct ua_aggregate_ctx *c,
                         const struct ua_agg_sample *s);
bool ua_aggregate_badish(const struct ua_aggregate_ctx *c,
                         const struct ua_aggregate_pt *p);
void ua_aggregate_raw_pt(const struct ua_aggregate_ctx *c,
                         const struct ua_agg_sample *s,
                         struct ua_aggregate_pt *p);
double ua_aggregate_line(const struct ua_agg_sample *a,
                         const struct ua_agg_sample *b, ua_datetime t);
double ua_aggregate_slope(const struct ua_aggregate_ctx *c, ptrdiff_t k,
                          ua_datetime t);
void ua_aggregate_ibound(const struct ua_aggregate_ctx *c, ua_datetime t,
                         struct ua_aggregate_pt *p);
void ua_aggregate_sbound(const struct ua_aggregate_ctx *c, ua_datetime t,
                         struct ua_aggregate_pt *p);
uint32_t ua_aggregate_ratio(const struct ua_aggregate_ctx *c, int64_t good,
                            int64_t bad, int64_t total);
uint32_t ua_aggregate_status(uint32_t code, uint32_t bits);
void ua_aggregate_set(struct ua_agg_result *r, ua_datetime ts, double v,
                      uint32_t code, uint32_t bits);
void ua_aggregate_nodata_set(struct ua_agg_result *r, ua_datetime ts,
                             uint32_t bits);
void ua_aggregate_walk_run(const struct ua_aggregate_ctx *c,
                           const struct ua_aggregate_iv *iv, bool tail,
                           struct ua_aggregate_walk *w);

/* aggregate_calc.c: one interval's result of one family into r */
void ua_aggregate_interp(const struct ua_aggregate_ctx *c,
                         const struct ua_aggregate_iv *iv,
                         struct ua_agg_result *r);
void ua_aggregate_timeavg(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                          const struct ua_aggregate_iv *iv,
                          struct ua_agg_result *r);
void ua_aggregate_timeavg2(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                           const struct ua_aggregate_iv *iv,
                           struct ua_agg_result *r);
void ua_aggregate_counted(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                          const struct ua_aggregate_iv *iv,
                          struct ua_agg_result *r);
void ua_aggregate_minmax(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                         const struct ua_aggregate_iv *iv,
                         struct ua_agg_result *r);
void ua_aggregate_minmax2(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                          const struct ua_aggregate_iv *iv,
                          struct ua_agg_result *r);
void ua_aggregate_startend(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                           const struct ua_aggregate_iv *iv,
                           struct ua_agg_result *r);
void ua_aggregate_bounds(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                         const struct ua_aggregate_iv *iv,
                         struct ua_agg_result *r);
void ua_aggregate_durations(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                            const struct ua_aggregate_iv *iv,
                            struct ua_agg_result *r);
void ua_aggregate_worst(enum ua_agg agg, const struct ua_aggregate_ctx *c,
                        const struct ua_aggregate_iv *iv,
                        struct ua_agg_result *r);

#endif
