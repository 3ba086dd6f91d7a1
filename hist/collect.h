/*
 * hist/collect.h: the data collection rules of a historized variable
 * (Part 11 §5.2.2, its HistoricalDataConfiguration): which of the values
 * it gets the historian stores.
 *
 *   MinTimeInterval     a value closer than that to the last one stored
 *                       (by their times: source, else server) is not
 *                       stored
 *   MaxTimeInterval     when nothing was stored for that long, the value
 *                       is stored again (the caller asks hs_collect_due()
 *                       and stores it, hs_collect_stored())
 *   ExceptionDeviation  a numeric value within the deviation of the last
 *                       one stored is not stored; the deviation is, per
 *                       ExceptionDeviationFormat, absolute, a percentage
 *                       of the last value stored, of the variable's range
 *                       (its InstrumentRange, else its EURange) or of its
 *                       EURange; "unknown" (or a range the variable does
 *                       not have) applies none
 *
 * A value whose StatusCode differs from the last one stored is always
 * stored (a change of quality is not a value within a deviation), and so
 * is one older than it (a late value, put in its place by the store).
 * The first value is always stored.  Only scalar numbers (Boolean to
 * Double) have a deviation; other values obey the time rules.
 *
 * Pure: no I/O, no clock (the caller gives the time), no allocation.
 */
#ifndef HS_COLLECT_H
#define HS_COLLECT_H

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"

/* ExceptionDeviationFormat (Part 11 §5.2.2; the enumeration i=890). */
enum hs_collect_fmt {
    HS_COLLECT_ABSOLUTE = 0,
    HS_COLLECT_PERCENT_OF_VALUE = 1,
    HS_COLLECT_PERCENT_OF_RANGE = 2,
    HS_COLLECT_PERCENT_OF_EU_RANGE = 3,
    HS_COLLECT_UNKNOWN = 4
};

/* One variable's rules and the last value stored. */
struct hs_collect {
    int64_t  min_t;         /* MinTimeInterval, DateTime ticks; 0: none */
    int64_t  max_t;         /* MaxTimeInterval, ticks; 0: none */
    double   dev;           /* ExceptionDeviation; 0: none */
    uint8_t  fmt;           /* enum hs_collect_fmt */
    double   range;         /* InstrumentRange's span (high - low), 0: none */
    double   eu_range;      /* EURange's span, 0: none */
    /* The last value stored (last_t 0: none yet). */
    int64_t  last_t;        /* its time (source, else server) */
    int64_t  last_srv;      /* its server time, else its time */
    double   last_v;
    uint32_t last_status;
    bool     last_num;
};

/* True when c has a rule to apply (else every value is stored). */
bool hs_collect_any(const struct hs_collect *c);

/*
 * The rules applied to s: true when it is to be stored (it is then the
 * last value stored), false when a rule drops it.
 */
bool hs_collect_keep(struct hs_collect *c, const struct hs_sample *s);

/* s stored whatever the rules (MaxTimeInterval's repeat): the last. */
void hs_collect_stored(struct hs_collect *c, const struct hs_sample *s);

/* True when c has a MaxTimeInterval and nothing was stored for that long
 * at server time now (DateTime ticks). */
bool hs_collect_due(const struct hs_collect *c, int64_t now);

/*
 * s's value as a number when it is a scalar Boolean ... Double: true
 * with *v; its StatusCode into *status (0: Good) either way.
 */
bool hs_collect_number(const struct hs_sample *s, double *v,
                       uint32_t *status);

#endif /* HS_COLLECT_H */
