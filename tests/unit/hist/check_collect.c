/*
 * tests/unit/hist/check_collect.c: the data collection rules
 * (hist/collect.c, Part 11 §5.2.2): MinTimeInterval, ExceptionDeviation
 * in each ExceptionDeviationFormat, MaxTimeInterval's due time, a change
 * of StatusCode and a late value always kept, the numbers of every
 * scalar type read from the stored bytes, none for other values.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist/collect.h"

#define CC_SEC  10000000ll
#define CC_T0   133000000000000000ll

static uint8_t cc_buf[64];

/* A Double v at time t (both timestamps), StatusCode st (0: none). */
static struct hs_sample
cc_double(double v, int64_t t, uint32_t st)
{
    struct hs_sample s;
    uint8_t         *p = cc_buf;

    *p++ = 0x01 | (st != 0 ? 0x02 : 0) | 0x04 | 0x08;
    *p++ = 11;
    memcpy(p, &v, 8);
    p += 8;
    if (st != 0) {
        memcpy(p, &st, 4);
        p += 4;
    }
    memcpy(p, &t, 8);
    p += 8;
    memcpy(p, &t, 8);
    p += 8;
    ck_assert_int_eq(hs_sample_split(cc_buf, (size_t)(p - cc_buf), &s), 0);
    return s;
}

/* A String "ab" at time t. */
static struct hs_sample
cc_string(int64_t t)
{
    struct hs_sample s;
    uint8_t          b[] = { 0x05, 12, 2, 0, 0, 0, 'a', 'b',
                             0, 0, 0, 0, 0, 0, 0, 0 };

    memcpy(b + 8, &t, 8);
    memcpy(cc_buf, b, sizeof(b));
    ck_assert_int_eq(hs_sample_split(cc_buf, sizeof(b), &s), 0);
    return s;
}

static bool
cc_keep(struct hs_collect *c, double v, int64_t sec)
{
    struct hs_sample s = cc_double(v, CC_T0 + sec * CC_SEC, 0);

    return hs_collect_keep(c, &s);
}

START_TEST(test_none)
{
    struct hs_collect c = { 0 };

    ck_assert(!hs_collect_any(&c));
    for (int i = 0; i < 10; i++)
        ck_assert(cc_keep(&c, 1.0, i / 4));
    ck_assert(!hs_collect_due(&c, CC_T0 + 3600 * CC_SEC));
}
END_TEST

START_TEST(test_min_time_interval)
{
    struct hs_collect c = { .min_t = 5 * CC_SEC };
    struct hs_sample  s;

    ck_assert(hs_collect_any(&c));
    ck_assert(cc_keep(&c, 1, 0));           /* the first */
    ck_assert(!cc_keep(&c, 2, 1));
    ck_assert(!cc_keep(&c, 3, 4));
    ck_assert(cc_keep(&c, 4, 5));           /* 5 s after the last stored */
    ck_assert(!cc_keep(&c, 5, 9));
    ck_assert(cc_keep(&c, 6, 10));
    /* A late value (older than the last stored): kept, in its place. */
    ck_assert(cc_keep(&c, 7, 2));
    /* A change of StatusCode: kept. */
    ck_assert(!cc_keep(&c, 8, 3));
    s = cc_double(9, CC_T0 + 4 * CC_SEC, 0x40000000u);  /* Uncertain */
    ck_assert(hs_collect_keep(&c, &s));
    /* Time rules hold for values that are not numbers. */
    c = (struct hs_collect){ .min_t = 5 * CC_SEC };
    s = cc_string(CC_T0);
    ck_assert(hs_collect_keep(&c, &s));
    s = cc_string(CC_T0 + CC_SEC);
    ck_assert(!hs_collect_keep(&c, &s));
    s = cc_string(CC_T0 + 6 * CC_SEC);
    ck_assert(hs_collect_keep(&c, &s));
}
END_TEST

START_TEST(test_deviation_formats)
{
    struct hs_collect c = { .dev = 2, .fmt = HS_COLLECT_ABSOLUTE };
    struct hs_sample  s;

    ck_assert(cc_keep(&c, 10, 0));
    ck_assert(!cc_keep(&c, 11.5, 1));
    ck_assert(!cc_keep(&c, 8, 2));          /* |8 - 10| = 2: within */
    ck_assert(cc_keep(&c, 12.5, 3));        /* 2.5 from 10 */
    ck_assert(!cc_keep(&c, 11, 4));         /* from 12.5 now */
    /* Percent of the last value stored. */
    c = (struct hs_collect){ .dev = 10, .fmt = HS_COLLECT_PERCENT_OF_VALUE };
    ck_assert(cc_keep(&c, 200, 0));
    ck_assert(!cc_keep(&c, 219, 1));
    ck_assert(cc_keep(&c, 221, 2));
    ck_assert(!cc_keep(&c, 200, 3));        /* 10 % of 221 = 22.1 */
    /* Percent of the InstrumentRange, else of the EURange. */
    c = (struct hs_collect){ .dev = 1, .fmt = HS_COLLECT_PERCENT_OF_RANGE,
                             .range = 1000, .eu_range = 100 };
    ck_assert(cc_keep(&c, 0, 0));
    ck_assert(!cc_keep(&c, 9, 1));          /* 1 % of 1000 */
    ck_assert(cc_keep(&c, 11, 2));
    c = (struct hs_collect){ .dev = 1, .fmt = HS_COLLECT_PERCENT_OF_RANGE,
                             .eu_range = 100 };
    ck_assert(cc_keep(&c, 0, 0));
    ck_assert(!cc_keep(&c, 0.9, 1));
    ck_assert(cc_keep(&c, 1.1, 2));
    c = (struct hs_collect){ .dev = 1, .fmt = HS_COLLECT_PERCENT_OF_EU_RANGE,
                             .range = 1000, .eu_range = 100 };
    ck_assert(cc_keep(&c, 0, 0));
    ck_assert(!cc_keep(&c, 1, 1));
    ck_assert(cc_keep(&c, 2.5, 2));
    /* No range, or Unknown: no deviation applies. */
    c = (struct hs_collect){ .dev = 1, .fmt = HS_COLLECT_PERCENT_OF_EU_RANGE };
    ck_assert(cc_keep(&c, 0, 0));
    ck_assert(cc_keep(&c, 0.1, 1));
    c = (struct hs_collect){ .dev = 1, .fmt = HS_COLLECT_UNKNOWN };
    ck_assert(cc_keep(&c, 0, 0));
    ck_assert(cc_keep(&c, 0.1, 1));
    /* A change of StatusCode is stored even within the deviation. */
    c = (struct hs_collect){ .dev = 5, .fmt = HS_COLLECT_ABSOLUTE };
    ck_assert(cc_keep(&c, 0, 0));
    s = cc_double(1, CC_T0 + CC_SEC, 0x80000000u);
    ck_assert(hs_collect_keep(&c, &s));
    s = cc_double(1.5, CC_T0 + 2 * CC_SEC, 0x80000000u);
    ck_assert(!hs_collect_keep(&c, &s));
    ck_assert(cc_keep(&c, 1.5, 3));         /* Good again */
    /* Values that are not numbers have no deviation. */
    s = cc_string(CC_T0 + 4 * CC_SEC);
    ck_assert(hs_collect_keep(&c, &s));
    s = cc_string(CC_T0 + 5 * CC_SEC);
    ck_assert(hs_collect_keep(&c, &s));
}
END_TEST

START_TEST(test_max_time_interval)
{
    struct hs_collect c = { .max_t = 10 * CC_SEC, .dev = 100 };
    struct hs_sample  s;

    ck_assert(!hs_collect_due(&c, CC_T0 + 100 * CC_SEC));  /* nothing yet */
    ck_assert(cc_keep(&c, 1, 0));
    ck_assert(!cc_keep(&c, 2, 3));          /* within the deviation */
    ck_assert(!hs_collect_due(&c, CC_T0 + 9 * CC_SEC));
    ck_assert(hs_collect_due(&c, CC_T0 + 10 * CC_SEC));
    /* The repeat, stored whatever the rules: due again 10 s later. */
    s = cc_double(2, CC_T0 + 10 * CC_SEC, 0);
    hs_collect_stored(&c, &s);
    ck_assert(!hs_collect_due(&c, CC_T0 + 19 * CC_SEC));
    ck_assert(hs_collect_due(&c, CC_T0 + 20 * CC_SEC));
    ck_assert(!cc_keep(&c, 3, 11));         /* from 2 now */
}
END_TEST

START_TEST(test_numbers)
{
    static const struct {
        uint8_t type, len, bytes[8];
        double  v;
    } t[] = {
        { 1, 1, { 1 }, 1 }, { 2, 1, { 0xFF }, -1 }, { 3, 1, { 200 }, 200 },
        { 4, 2, { 0xFE, 0xFF }, -2 }, { 5, 2, { 0xFE, 0xFF }, 65534 },
        { 6, 4, { 0xFD, 0xFF, 0xFF, 0xFF }, -3 },
        { 7, 4, { 3, 0, 0, 0 }, 3 },
        { 8, 8, { 0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF }, -4 },
        { 9, 8, { 4 }, 4 }, { 10, 4, { 0, 0, 0xC0, 0x3F }, 1.5 },
        { 11, 8, { 0, 0, 0, 0, 0, 0, 0xF8, 0x3F }, 1.5 },
    };

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        uint8_t          b[32] = { 0x07, t[i].type };
        uint32_t         st = 0x40000000u, got;
        int64_t          ts = CC_T0;
        struct hs_sample s;
        double           v = 0;

        memcpy(b + 2, t[i].bytes, t[i].len);
        memcpy(b + 2 + t[i].len, &st, 4);
        memcpy(b + 6 + t[i].len, &ts, 8);
        ck_assert_int_eq(hs_sample_split(b, 14u + t[i].len, &s), 0);
        ck_assert_msg(hs_collect_number(&s, &v, &got), "type %u", t[i].type);
        ck_assert(v == t[i].v);
        ck_assert_uint_eq(got, st);
    }
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Data collection (hist)");
    TCase   *tc = tcase_create("Rules");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_none);
    tcase_add_test(tc, test_min_time_interval);
    tcase_add_test(tc, test_deviation_formats);
    tcase_add_test(tc, test_max_time_interval);
    tcase_add_test(tc, test_numbers);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
