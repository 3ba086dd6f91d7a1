/*
 * tests/vectors/aggregate_deviations.h: the rows of Part 13 Annex A's
 * example tables (tests/vectors/aggregates_gen.h) where the aggregate
 * engine (proto/aggregate.h) follows the spec text, not the table, each
 * with its reason (docs/design-notes.md "aggregates: where Part 13's
 * example tables and its text disagree").  Used by
 * tests/unit/proto/check_aggregate.c (which checks that each row really
 * differs from the table) and tests/integ/integ_hist_p13.c (the same
 * tables through the whole server).
 */
#ifndef TESTS_VECTORS_AGGREGATE_DEVIATIONS_H
#define TESTS_VECTORS_AGGREGATE_DEVIATIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "proto/aggregate.h"
#include "proto/status_gen.h"

#define AGGV_GC   (UA_AGG_INFOTYPE_DATAVALUE | UA_AGG_CALCULATED)
#define AGGV_PART UA_AGG_PARTIAL

/* A row where the engine follows the spec text, not the table. */
struct deviation {
    const char *aggregate;
    int         historian;
    int64_t     at;         /* the interval's start, ms after 12:00:00 */
    int64_t     ms;         /* the result's timestamp */
    bool        has_value;
    double      value;
    uint32_t    status;
    const char *why;
};

static const struct deviation deviations[] = {
    /* PercentDataBad 100 and the interval all Bad: Bad (§5.4.3.2), as
     * Historian2's own table has at 12:00:40 and 12:01:15. */
    { "TimeAverage2", 1, 40000, 40000, false, 0, UA_BAD | AGGV_GC,
      "all Bad: Bad by PercentDataBad, not BadNoData" },
    { "TimeAverage2", 1, 45000, 45000, false, 0, UA_BAD | AGGV_GC,
      "all Bad: Bad by PercentDataBad, not BadNoData" },
    { "Total2", 1, 40000, 40000, false, 0, UA_BAD | AGGV_GC,
      "all Bad: Bad by PercentDataBad, not BadNoData" },
    { "Total2", 1, 45000, 45000, false, 0, UA_BAD | AGGV_GC,
      "all Bad: Bad by PercentDataBad, not BadNoData" },
    /* Total2 = TimeAverage2 (90) x 5 s of Good data; the table's 0.090 is
     * 90 x 1 ms. */
    { "Total2", 1, 90000, 90000, true, 450, UA_GOOD | AGGV_GC | AGGV_PART,
      "90 held for 5 s is 450, not 0.090" },
    /* MinimumActualTime / MaximumActualTime: Calculated is set "if the
     * Status was set to Uncertain_DataSubNormal because of non-Good values
     * in the interval" (§5.4.3.12 / §5.4.3.13). */
    { "MinimumActualTime", 2, 32000, 39000, true, 30,
      UA_UNCERTAIN_DATA_SUB_NORMAL | AGGV_GC,
      "Uncertain because of a Bad value: Calculated is set" },
    { "MinimumActualTime", 2, 64000, 72000, true, 60,
      UA_UNCERTAIN_DATA_SUB_NORMAL | AGGV_GC,
      "Uncertain because of a Bad value: Calculated is set" },
    { "MaximumActualTime", 2, 32000, 39000, true, 30,
      UA_UNCERTAIN_DATA_SUB_NORMAL | AGGV_GC,
      "Uncertain because of a Bad value: Calculated is set" },
    { "MaximumActualTime", 2, 64000, 72000, true, 60,
      UA_UNCERTAIN_DATA_SUB_NORMAL | AGGV_GC,
      "Uncertain because of a Bad value: Calculated is set" },
    /* Count and NumberOfTransitions: Calculated "Set Always" (§5.4.3.21,
     * §5.4.3.24), also on a Bad result. */
    { "Count", 1, 32000, 32000, false, 0, UA_BAD | AGGV_GC,
      "Calculated is set always" },
    { "NumberOfTransitions", 1, 32000, 32000, false, 0, UA_BAD | AGGV_GC,
      "Calculated is set always" },
    /* The last interval holds data up to 12:01:30, the last sample: 10 s
     * (Historian2: 7 s after 12:01:23), not 10.001 s; the percentages over
     * the partial interval's 10 s (§5.4.3.33). */
    { "DurationInStateNonZero", 1, 80000, 80000, true, 10000,
      UA_GOOD | AGGV_GC | AGGV_PART, "data up to the last sample: 10000 ms" },
    { "DurationInStateNonZero", 2, 80000, 80000, true, 7000,
      UA_UNCERTAIN_DATA_SUB_NORMAL | AGGV_GC | AGGV_PART,
      "data up to the last sample: 7000 ms" },
    { "DurationGood", 1, 80000, 80000, true, 10000,
      UA_GOOD | AGGV_GC | AGGV_PART,
      "data up to the last sample: 10000 ms" },
    { "DurationGood", 2, 80000, 80000, true, 7000,
      UA_GOOD | AGGV_GC | AGGV_PART,
      "data up to the last sample: 7000 ms" },
    { "PercentGood", 2, 80000, 80000, true, 70, UA_GOOD | AGGV_GC | AGGV_PART,
      "7000 of the partial interval's 10000 ms" },
    { "PercentBad", 2, 80000, 80000, true, 30, UA_GOOD | AGGV_GC | AGGV_PART,
      "3000 of the partial interval's 10000 ms" },
};

/* The deviation of aggregate agg, historian, the interval starting at ms
 * (ms after 12:00:00), or NULL. */
static inline const struct deviation *
deviation_find(const char *agg, int historian, int64_t ms)
{
    for (size_t i = 0; i < sizeof deviations / sizeof deviations[0]; i++)
        if (strcmp(deviations[i].aggregate, agg) == 0
            && deviations[i].historian == historian
            && deviations[i].at == ms)
            return &deviations[i];
    return NULL;
}

#endif /* TESTS_VECTORS_AGGREGATE_DEVIATIONS_H */
