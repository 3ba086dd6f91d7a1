/*
 * tests/unit/worker/check_timerheap.c: worker/timerheap.c, the min-heap
 * of timers the publishing timers live in: the earliest timer is always
 * at the top, whatever the order of inserts, moves and removals (checked
 * against a plain array after every operation); the positions kept by id
 * stay true; removing a timer not in the heap changes nothing.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "worker/timerheap.h"
#include "worker/worker.h"

#define TH_CAP 257

static struct wk_worker    th_w;        /* no row: allocations uncounted */
static struct wk_timerheap th;
static uint64_t            th_due[TH_CAP];  /* UINT64_MAX: not in it */

static void
setup(void)
{
    uint64_t allocs = 0;

    memset(&th_w, 0, sizeof(th_w));
    ck_assert_int_eq(wk_timerheap_init(&th, &th_w, TH_CAP, &allocs), 0);
    ck_assert_uint_eq(allocs, 2);
    for (uint32_t i = 0; i < TH_CAP; i++)
        th_due[i] = UINT64_MAX;
}

static void
teardown(void)
{
    wk_timerheap_clear(&th, &th_w);
}

/* The heap agrees with th_due: size, earliest, every position. */
static void
th_check(void)
{
    uint64_t least = UINT64_MAX;
    uint32_t n = 0;

    for (uint32_t i = 0; i < TH_CAP; i++) {
        if (th_due[i] == UINT64_MAX) {
            ck_assert_uint_eq(th.pos[i], WK_TIMERHEAP_NONE);
            continue;
        }
        n++;
        if (th_due[i] < least)
            least = th_due[i];
        ck_assert_uint_lt(th.pos[i], th.n);
        ck_assert_uint_eq(th.h[th.pos[i]].id, i);
        ck_assert_uint_eq(th.h[th.pos[i]].due, th_due[i]);
    }
    ck_assert_uint_eq(th.n, n);
    ck_assert_uint_eq(wk_timerheap_next(&th), least);
    if (n > 0)
        ck_assert_uint_eq(th_due[wk_timerheap_top(&th)], least);
    for (uint32_t i = 1; i < th.n; i++)
        ck_assert_uint_le(th.h[(i - 1) / 2].due, th.h[i].due);
}

START_TEST(test_empty)
{
    ck_assert_uint_eq(wk_timerheap_next(&th), UINT64_MAX);
    wk_timerheap_del(&th, 5);           /* not in it: nothing */
    th_check();
}
END_TEST

START_TEST(test_set_move_del)
{
    wk_timerheap_set(&th, 3, 300);
    th_due[3] = 300;
    wk_timerheap_set(&th, 7, 100);
    th_due[7] = 100;
    wk_timerheap_set(&th, 1, 200);
    th_due[1] = 200;
    th_check();
    ck_assert_uint_eq(wk_timerheap_top(&th), 7);
    wk_timerheap_set(&th, 3, 50);       /* moved up */
    th_due[3] = 50;
    th_check();
    ck_assert_uint_eq(wk_timerheap_top(&th), 3);
    wk_timerheap_set(&th, 3, 1000);     /* moved down */
    th_due[3] = 1000;
    th_check();
    wk_timerheap_del(&th, 7);
    th_due[7] = UINT64_MAX;
    th_check();
    ck_assert_uint_eq(wk_timerheap_top(&th), 1);
}
END_TEST

START_TEST(test_random)
{
    uint32_t x = 12345;

    for (int k = 0; k < 20000; k++) {
        uint32_t id, op;

        x = x * 1103515245u + 12345u;
        id = (x >> 8) % TH_CAP;
        op = (x >> 20) % 4;
        if (op == 0) {
            wk_timerheap_del(&th, id);
            th_due[id] = UINT64_MAX;
        } else {
            uint64_t due = (x >> 4) % 1000;     /* ties included */

            wk_timerheap_set(&th, id, due);
            th_due[id] = due;
        }
        if (k % 64 == 0)
            th_check();
    }
    th_check();
    /* Drain in order. */
    for (uint64_t prev = 0; th.n > 0;) {
        uint32_t id = wk_timerheap_top(&th);

        ck_assert_uint_ge(wk_timerheap_next(&th), prev);
        prev = wk_timerheap_next(&th);
        wk_timerheap_del(&th, id);
        th_due[id] = UINT64_MAX;
    }
    th_check();
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/timerheap");
    TCase   *tc = tcase_create("heap");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_set_move_del);
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
