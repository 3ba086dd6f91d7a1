/*
 * tests/unit/broker/check_alarm.c: the condition state machines
 * (broker/alarm.c): exclusive and non-exclusive limits with the deadband,
 * off-normal, acknowledge and confirm, enable and disable, the three
 * shelvings with their time limit, Retain, and the Part 9 status codes.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "broker/alarm.h"
#include "proto/status_gen.h"

#define MS BK_ALARM_TICKS_MS

static struct bk_alarm_def
limit_def(uint8_t type)
{
    struct bk_alarm_def d = { 0 };

    d.type = type;
    d.limits = BK_ALARM_LIM_HH | BK_ALARM_LIM_H | BK_ALARM_LIM_L
               | BK_ALARM_LIM_LL;
    d.lim[BK_ALARM_I_HH] = 90;
    d.lim[BK_ALARM_I_H] = 80;
    d.lim[BK_ALARM_I_L] = 20;
    d.lim[BK_ALARM_I_LL] = 10;
    d.severity = 500;
    d.lim_severity[BK_ALARM_I_HH] = 900;
    d.deadband = 0.5;
    d.max_shelved_ms = 60000;
    return d;
}

START_TEST(test_exclusive)
{
    struct bk_alarm_def   d = limit_def(BK_ALARM_EXCLUSIVE_LIMIT);
    struct bk_alarm_state s;
    uint32_t              ch;

    bk_alarm_init(&d, &s, 1);
    ck_assert(s.enabled && !s.active && s.acked && !bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 50, 2), 0);
    /* High: active, unacknowledged, retained. */
    ch = bk_alarm_input(&d, &s, 80, 3);
    ck_assert_uint_eq(ch, BK_ALARM_CH_ACTIVE | BK_ALARM_CH_LIMIT
                              | BK_ALARM_CH_ACKED | BK_ALARM_CH_RETAIN);
    ck_assert(s.active && !s.acked && bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_H);
    ck_assert_uint_eq(s.severity, 500);
    ck_assert_int_eq(s.active_ts, 3);
    /* HighHigh: one state, its own severity. */
    ch = bk_alarm_input(&d, &s, 95, 4);
    ck_assert_uint_eq(ch, BK_ALARM_CH_LIMIT | BK_ALARM_CH_SEVERITY);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_HH);
    ck_assert_uint_eq(s.severity, 900);
    ck_assert_uint_eq(s.last_severity, 500);
    /* Inside the deadband of HighHigh: nothing. */
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 89.6, 5), 0);
    ck_assert(bk_alarm_quiet(&d, s.over, 89.6));
    ck_assert(!bk_alarm_quiet(&d, s.over, 89.4));
    /* Back to High, then normal (past High's deadband). */
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 89.4, 6),
                      BK_ALARM_CH_LIMIT | BK_ALARM_CH_SEVERITY);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_H);
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 79.7, 7), 0);
    ch = bk_alarm_input(&d, &s, 79.4, 8);
    ck_assert_uint_eq(ch, BK_ALARM_CH_ACTIVE | BK_ALARM_CH_LIMIT);
    ck_assert(!s.active && s.limits == 0);
    /* Inactive but unacknowledged: still retained until Acknowledge. */
    ck_assert(bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 9, &ch), UA_GOOD);
    ck_assert_uint_eq(ch, BK_ALARM_CH_ACKED | BK_ALARM_CH_RETAIN);
    ck_assert(!bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 10, &ch),
                      UA_BAD_CONDITION_BRANCH_ALREADY_ACKED);
    ck_assert_uint_eq(ch, 0);
    /* Low side: LowLow wins over Low. */
    bk_alarm_input(&d, &s, 5, 11);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_LL);
    ck_assert_uint_eq(s.over, BK_ALARM_LIM_LL | BK_ALARM_LIM_L);
    bk_alarm_input(&d, &s, 15, 12);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_L);
}
END_TEST

START_TEST(test_escalation_unacks)
{
    struct bk_alarm_def   d = limit_def(BK_ALARM_EXCLUSIVE_LIMIT);
    struct bk_alarm_state s;
    uint32_t              ch;

    bk_alarm_init(&d, &s, 0);
    bk_alarm_input(&d, &s, 85, 1);
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 2, &ch), UA_GOOD);
    /* Worse: unacknowledged again; better: stays acknowledged. */
    ch = bk_alarm_input(&d, &s, 91, 3);
    ck_assert(ch & BK_ALARM_CH_ACKED);
    ck_assert(!s.acked);
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 4, &ch), UA_GOOD);
    ch = bk_alarm_input(&d, &s, 85, 5);
    ck_assert(!(ch & BK_ALARM_CH_ACKED));
    ck_assert(s.acked);
}
END_TEST

START_TEST(test_non_exclusive)
{
    struct bk_alarm_def   d = limit_def(BK_ALARM_NON_EXCLUSIVE_LIMIT);
    struct bk_alarm_state s;

    d.limits = BK_ALARM_LIM_HH | BK_ALARM_LIM_H;
    bk_alarm_init(&d, &s, 0);
    bk_alarm_input(&d, &s, 95, 1);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_HH | BK_ALARM_LIM_H);
    ck_assert(s.active);
    ck_assert_uint_eq(s.severity, 900);
    bk_alarm_input(&d, &s, 85, 2);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_H);
    ck_assert_uint_eq(s.severity, 500);
    /* Limits not configured never fire. */
    bk_alarm_input(&d, &s, 0, 3);
    ck_assert_uint_eq(s.limits, 0);
    ck_assert(!s.active);
    /* A NaN changes nothing. */
    bk_alarm_input(&d, &s, 95, 4);
    ck_assert_uint_eq(bk_alarm_input(&d, &s, NAN, 5), 0);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_HH | BK_ALARM_LIM_H);
}
END_TEST

START_TEST(test_off_normal)
{
    struct bk_alarm_def   d = { 0 };
    struct bk_alarm_state s;
    uint32_t              ch;

    d.type = BK_ALARM_OFF_NORMAL;
    d.normal = 1;               /* the pump should run */
    d.severity = 700;
    d.max_shelved_ms = 1000;
    bk_alarm_init(&d, &s, 0);
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 1, 1), 0);
    ch = bk_alarm_input(&d, &s, 0, 2);
    ck_assert(ch & BK_ALARM_CH_ACTIVE);
    ck_assert(s.active && !s.acked);
    ck_assert_uint_eq(s.severity, 700);
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 0, 3), 0);
    ch = bk_alarm_input(&d, &s, 1, 4);
    ck_assert(ch & BK_ALARM_CH_ACTIVE);
    ck_assert(!s.active && bk_alarm_retain(&d, &s));
}
END_TEST

START_TEST(test_confirm)
{
    struct bk_alarm_def   d = limit_def(BK_ALARM_EXCLUSIVE_LIMIT);
    struct bk_alarm_state s;
    uint32_t              ch;

    /* Without Confirm the condition is always confirmed. */
    bk_alarm_init(&d, &s, 0);
    bk_alarm_input(&d, &s, 85, 1);
    ck_assert_uint_eq(bk_alarm_confirm(&d, &s, 2, &ch),
                      UA_BAD_CONDITION_BRANCH_ALREADY_CONFIRMED);
    d.confirm = true;
    bk_alarm_init(&d, &s, 0);
    bk_alarm_input(&d, &s, 85, 1);
    ck_assert(!s.confirmed);
    bk_alarm_input(&d, &s, 50, 2);
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 3, &ch), UA_GOOD);
    /* Acknowledged, inactive, unconfirmed: still retained. */
    ck_assert(bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(ch, BK_ALARM_CH_ACKED);
    ck_assert_uint_eq(bk_alarm_confirm(&d, &s, 4, &ch), UA_GOOD);
    ck_assert_uint_eq(ch, BK_ALARM_CH_CONFIRM | BK_ALARM_CH_RETAIN);
    ck_assert(!bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(bk_alarm_confirm(&d, &s, 5, &ch),
                      UA_BAD_CONDITION_BRANCH_ALREADY_CONFIRMED);
}
END_TEST

START_TEST(test_enable)
{
    struct bk_alarm_def   d = limit_def(BK_ALARM_EXCLUSIVE_LIMIT);
    struct bk_alarm_state s;
    uint32_t              ch;

    bk_alarm_init(&d, &s, 0);
    ck_assert_uint_eq(bk_alarm_enable(&d, &s, true, 1, &ch),
                      UA_BAD_CONDITION_ALREADY_ENABLED);
    bk_alarm_input(&d, &s, 85, 2);
    ck_assert_uint_eq(bk_alarm_enable(&d, &s, false, 3, &ch), UA_GOOD);
    ck_assert_uint_eq(ch, BK_ALARM_CH_ENABLED | BK_ALARM_CH_RETAIN);
    ck_assert(!bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(bk_alarm_enable(&d, &s, false, 4, &ch),
                      UA_BAD_CONDITION_ALREADY_DISABLED);
    /* Disabled: follows its input, reports nothing, refuses methods. */
    ck_assert_uint_eq(bk_alarm_input(&d, &s, 95, 5), 0);
    ck_assert_uint_eq(s.limits, BK_ALARM_LIM_HH);
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 6, &ch),
                      UA_BAD_CONDITION_DISABLED);
    ck_assert_uint_eq(bk_alarm_confirm(&d, &s, 6, &ch),
                      UA_BAD_CONDITION_DISABLED);
    ck_assert_uint_eq(bk_alarm_comment(&s, &ch), UA_BAD_CONDITION_DISABLED);
    ck_assert_uint_eq(bk_alarm_shelve_oneshot(&d, &s, 6, &ch),
                      UA_BAD_CONDITION_DISABLED);
    ck_assert_uint_eq(bk_alarm_enable(&d, &s, true, 7, &ch), UA_GOOD);
    ck_assert(bk_alarm_retain(&d, &s));
    ck_assert_int_eq(s.enabled_ts, 7);
    ck_assert_uint_eq(bk_alarm_comment(&s, &ch), UA_GOOD);
    ck_assert_uint_eq(ch, BK_ALARM_CH_COMMENT);
}
END_TEST

START_TEST(test_shelving)
{
    struct bk_alarm_def   d = limit_def(BK_ALARM_EXCLUSIVE_LIMIT);
    struct bk_alarm_state s;
    uint32_t              ch;

    bk_alarm_init(&d, &s, 0);
    ck_assert_uint_eq(bk_alarm_unshelve(&s, 1, &ch),
                      UA_BAD_CONDITION_NOT_SHELVED);
    ck_assert_uint_eq(bk_alarm_shelve_timed(&d, &s, 0, 1, &ch),
                      UA_BAD_SHELVING_TIME_OUT_OF_RANGE);
    ck_assert_uint_eq(bk_alarm_shelve_timed(&d, &s, 60001, 1, &ch),
                      UA_BAD_SHELVING_TIME_OUT_OF_RANGE);
    ck_assert_uint_eq(bk_alarm_shelve_timed(&d, &s, NAN, 1, &ch),
                      UA_BAD_SHELVING_TIME_OUT_OF_RANGE);
    /* At the limit: accepted. */
    ck_assert_uint_eq(bk_alarm_shelve_timed(&d, &s, 60000, 1, &ch), UA_GOOD);
    ck_assert_uint_eq(ch, BK_ALARM_CH_SHELVING);
    ck_assert_uint_eq(s.shelving, BK_ALARM_TIMED);
    ck_assert_uint_eq(bk_alarm_shelve_timed(&d, &s, 10, 2, &ch),
                      UA_BAD_CONDITION_ALREADY_SHELVED);
    /* It runs out by itself. */
    ck_assert_uint_eq(bk_alarm_tick(&s, 1 + 60000 * MS - 1), 0);
    ck_assert_uint_eq(bk_alarm_tick(&s, 1 + 60000 * MS),
                      BK_ALARM_CH_SHELVING);
    ck_assert_uint_eq(s.shelving, BK_ALARM_UNSHELVED);
    /* One-shot: ends when the alarm goes inactive. */
    bk_alarm_input(&d, &s, 85, 2);
    ck_assert_uint_eq(bk_alarm_shelve_oneshot(&d, &s, 3, &ch), UA_GOOD);
    ck_assert_uint_eq(bk_alarm_shelve_oneshot(&d, &s, 3, &ch),
                      UA_BAD_CONDITION_ALREADY_SHELVED);
    ch = bk_alarm_input(&d, &s, 50, 4);
    ck_assert(ch & BK_ALARM_CH_SHELVING);
    ck_assert_uint_eq(s.shelving, BK_ALARM_UNSHELVED);
    /* One-shot, then timed over it, then Unshelve. */
    ck_assert_uint_eq(bk_alarm_shelve_oneshot(&d, &s, 5, &ch), UA_GOOD);
    ck_assert_uint_eq(bk_alarm_shelve_timed(&d, &s, 100, 6, &ch), UA_GOOD);
    ck_assert_uint_eq(bk_alarm_unshelve(&s, 7, &ch), UA_GOOD);
    ck_assert_uint_eq(s.shelving, BK_ALARM_UNSHELVED);
    ck_assert_int_eq(s.shelving_ts, 7);
    /* One-shot also ends at MaxTimeShelved. */
    ck_assert_uint_eq(bk_alarm_shelve_oneshot(&d, &s, 10, &ch), UA_GOOD);
    ck_assert_uint_eq(bk_alarm_tick(&s, 10 + 60000 * MS),
                      BK_ALARM_CH_SHELVING);
}
END_TEST

START_TEST(test_external)
{
    struct bk_alarm_def   d = { 0 };
    struct bk_alarm_state s;
    uint32_t              ch;

    d.type = BK_ALARM_EXTERNAL;
    d.severity = 400;
    d.max_shelved_ms = 1000;
    bk_alarm_init(&d, &s, 0);
    ck_assert_uint_eq(bk_alarm_set(&d, &s, false, 0, 1), 0);
    ch = bk_alarm_set(&d, &s, true, 800, 2);
    ck_assert_uint_eq(ch, BK_ALARM_CH_ACTIVE | BK_ALARM_CH_ACKED
                              | BK_ALARM_CH_SEVERITY | BK_ALARM_CH_RETAIN);
    ck_assert(s.active && !s.acked);
    ck_assert_uint_eq(s.severity, 800);
    ck_assert_uint_eq(s.last_severity, 400);
    ck_assert_uint_eq(bk_alarm_set(&d, &s, true, 800, 3), 0);
    /* Cleared: back to the alarm's severity, retained until acked. */
    ch = bk_alarm_set(&d, &s, false, 0, 4);
    ck_assert_uint_eq(ch, BK_ALARM_CH_ACTIVE | BK_ALARM_CH_SEVERITY);
    ck_assert(bk_alarm_retain(&d, &s));
    ck_assert_uint_eq(bk_alarm_ack(&d, &s, 5, &ch), UA_GOOD);
    ck_assert(!bk_alarm_retain(&d, &s));
    /* Disabled: follows, reports nothing. */
    ck_assert_uint_eq(bk_alarm_enable(&d, &s, false, 6, &ch), UA_GOOD);
    ck_assert_uint_eq(bk_alarm_set(&d, &s, true, 0, 7), 0);
    ck_assert(s.active);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Alarm");
    TCase   *tc = tcase_create("state machines");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_exclusive);
    tcase_add_test(tc, test_escalation_unacks);
    tcase_add_test(tc, test_non_exclusive);
    tcase_add_test(tc, test_off_normal);
    tcase_add_test(tc, test_confirm);
    tcase_add_test(tc, test_enable);
    tcase_add_test(tc, test_shelving);
    tcase_add_test(tc, test_external);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
