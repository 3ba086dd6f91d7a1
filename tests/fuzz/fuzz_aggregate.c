/*
 * tests/fuzz/fuzz_aggregate.c: libFuzzer target for the aggregate engine
 * (proto/aggregate.h): any samples, configuration, range and interval,
 * for one of the 37 aggregates.
 *
 * Input layout (all bytes optional but the first 8; short input: return):
 *
 *   0  aggregate (modulo 37)
 *   1  flags: 1 TreatUncertainAsBad, 2 UseSlopedExtrapolation, 4 Stepped,
 *      8 pass s[0] as `before`, 16 pass the last sample as `after`
 *   2  PercentDataBad (modulo 101)     3  PercentDataGood (modulo 101)
 *   4  start, seconds                  5  end, seconds (may be < start)
 *   6  processing interval, seconds (0: the whole range)
 *   7  annotation stride (0: none; k: an annotation at every k-th sample)
 *   8.. samples, 3 bytes each: time step in seconds (0: same time as the
 *      one before), value (int8), status (low 2 bits: Good, Uncertain,
 *      Bad, BadNoData)
 *
 * Checks: the run succeeds; every result has a time inside its interval
 * (or the interval start), a finite value when it has one; and a read
 * backward equals the forward read of the data mirrored in time (the
 * engine's definition of a backward read, docs/design-notes.md D88).  Any
 * failure aborts.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/aggregate.h"
#include "proto/status_gen.h"
#include "proto/types.h"

#define FUZZ_MAX     512
#define FUZZ_OUT     300
#define FUZZ_TICKS_S INT64_C(10000000)
#define FUZZ_BASE    INT64_C(130000000000000000)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ua_agg_sample fuzz_s[FUZZ_MAX], fuzz_m[FUZZ_MAX];
static ua_datetime          fuzz_ann[FUZZ_MAX], fuzz_mann[FUZZ_MAX];
static struct ua_agg_result fuzz_a[FUZZ_OUT], fuzz_b[FUZZ_OUT];

static void
fuzz_fail(const char *what, size_t i)
{
    fprintf(stderr, "fuzz_aggregate: %s (result %zu)\n", what, i);
    abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t st[4] = { UA_GOOD, UA_UNCERTAIN, UA_BAD,
                                    UA_BAD_NO_DATA };
    struct ua_agg_config  cfg;
    struct ua_agg_input   in, mi;
    enum ua_agg           agg;
    ua_datetime           start, end, t, lo, hi, mid2;
    double                pi;
    size_t                n = 0, na = 0, k;
    unsigned              stride;

    if (size < 8)
        return 0;
    agg = (enum ua_agg)(data[0] % UA_AGG_COUNT_);
    cfg.treat_uncertain_as_bad = data[1] & 1;
    cfg.use_sloped_extrapolation = (data[1] & 2) != 0;
    cfg.stepped = (data[1] & 4) != 0;
    cfg.percent_data_bad = (uint8_t)(data[2] % 101);
    cfg.percent_data_good = (uint8_t)(data[3] % 101);
    start = FUZZ_BASE + data[4] * FUZZ_TICKS_S;
    end = FUZZ_BASE + data[5] * FUZZ_TICKS_S;
    pi = data[6] * 1000.0;
    stride = data[7];
    t = FUZZ_BASE - 20 * FUZZ_TICKS_S;
    for (k = 8; k + 3 <= size && n < FUZZ_MAX; k += 3) {
        t += data[k] * FUZZ_TICKS_S;
        fuzz_s[n].ts = t;
        fuzz_s[n].value = (int8_t)data[k + 1];
        fuzz_s[n].status = st[data[k + 2] & 3];
        if (stride != 0 && n % stride == 0)
            fuzz_ann[na++] = t;
        n++;
    }
    memset(&in, 0, sizeof in);
    in.s = fuzz_s;
    in.n = n;
    in.annotations = fuzz_ann;
    in.n_annotations = na;
    if ((data[1] & 8) && in.n > 0) {
        in.before = &fuzz_s[0];
        in.s++;
        in.n--;
    }
    if ((data[1] & 16) && in.n > 0) {
        in.after = &in.s[in.n - 1];
        in.n--;
    }
    k = ua_aggregate_intervals(start, end, pi);
    if (k == 0 || k > FUZZ_OUT) {
        if (start != end && k == 0)
            fuzz_fail("no intervals for a valid range", 0);
        return 0;
    }
    if (ua_aggregate_run(agg, &cfg, &in, start, end, pi, fuzz_a, FUZZ_OUT)
        != UA_GOOD)
        fuzz_fail("run refused", 0);
    lo = start < end ? start : end;
    hi = start < end ? end : start;
    for (size_t i = 0; i < k; i++) {
        if (fuzz_a[i].ts < lo - 1 || fuzz_a[i].ts > hi + 1)
            fuzz_fail("time outside the range", i);
        if (fuzz_a[i].has_value && !isfinite(fuzz_a[i].value))
            fuzz_fail("value not finite", i);
    }

    /* the mirror: backward over the data == forward over it mirrored */
    mid2 = start + end;
    for (size_t i = 0; i < in.n; i++) {
        fuzz_m[i] = in.s[in.n - 1 - i];
        fuzz_m[i].ts = mid2 - fuzz_m[i].ts;
    }
    for (size_t i = 0; i < na; i++)
        fuzz_mann[i] = mid2 - fuzz_ann[na - 1 - i];
    mi = in;
    mi.s = fuzz_m;
    mi.annotations = fuzz_mann;
    {
        struct ua_agg_sample b, a;

        if (in.before != NULL) {
            b = *in.before;
            b.ts = mid2 - b.ts;
            mi.after = &fuzz_m[FUZZ_MAX - 1];
            fuzz_m[FUZZ_MAX - 1] = b;
        } else
            mi.after = NULL;
        if (in.after != NULL) {
            a = *in.after;
            a.ts = mid2 - a.ts;
            mi.before = &fuzz_m[FUZZ_MAX - 2];
            fuzz_m[FUZZ_MAX - 2] = a;
        } else
            mi.before = NULL;
        if (in.n > FUZZ_MAX - 2)
            return 0;
    }
    if (ua_aggregate_run(agg, &cfg, &mi, end, start, pi, fuzz_b, FUZZ_OUT)
        != UA_GOOD)
        fuzz_fail("mirrored run refused", 0);
    for (size_t i = 0; i < k; i++) {
        if (fuzz_b[i].ts != mid2 - fuzz_a[i].ts
            || fuzz_b[i].status != fuzz_a[i].status
            || fuzz_b[i].has_value != fuzz_a[i].has_value)
            fuzz_fail("mirror differs", i);
        if (fuzz_a[i].has_value
            && fabs(fuzz_b[i].value - fuzz_a[i].value)
               > 1e-6 * (1 + fabs(fuzz_a[i].value)))
            fuzz_fail("mirror value differs", i);
    }
    return 0;
}
