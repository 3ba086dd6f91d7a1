/*
 * tests/unit/worker/check_loopstat.c: worker/loopstat.c, the loop's
 * counters in the worker's stats row: an answered request counted by
 * service (an unknown one as Other), its latency in the power-of-two
 * bucket of its microseconds and in the sum, a Bad one in bad_requests;
 * an iteration's busy time in its bucket, the sum and the longest so far;
 * a step marks its iteration busy with RSA work and its CPU time raises
 * the step maximum only.
 */
#include <check.h>
#include <stdatomic.h>
#include <string.h>

#include "proto/status_gen.h"
#include "shm/layout.h"
#include "worker/loopstat.h"
#include "worker/worker.h"

static struct shm_worker  ls_row;
static struct wk_worker   ls_w;
static struct wk_loopstat ls;

static void
setup(void)
{
    memset(&ls_row, 0, sizeof(ls_row));
    memset(&ls_w, 0, sizeof(ls_w));
    memset(&ls, 0, sizeof(ls));
    ls_w.row = &ls_row;
}

/* The bucket of us: [2^b, 2^(b+1)), 0 and 1 in bucket 0. */
static unsigned
ls_bucket(uint64_t us)
{
    unsigned b = 0;

    while (us > 1 && b < SHM_LAT_BUCKETS - 1) {
        us >>= 1;
        b++;
    }
    return b;
}

static uint64_t
ls_get(_Atomic uint64_t *p)
{
    return atomic_load(p);
}

/* Spin until ms of this thread's CPU time passed. */
static void
ls_burn(unsigned ms)
{
    struct timespec   t;
    volatile uint64_t x = 0;
    uint64_t          ns0, ns;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    ns0 = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    do {
        for (int i = 0; i < 10000; i++)
            x += (uint64_t)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    } while (ns - ns0 < (uint64_t)ms * 1000000u);
}

START_TEST(test_request)
{
    uint64_t t0 = wk_loopstat_ns() - 5000000u;     /* 5 ms ago */
    uint64_t sum, n = 0;

    wk_loopstat_request(&ls_w, SHM_SVC_READ, t0, UA_GOOD);
    sum = ls_get(&ls_row.latency_sum_us[SHM_SVC_READ]);
    ck_assert_uint_ge(sum, 5000);
    ck_assert_uint_eq(ls_get(&ls_row.requests[SHM_SVC_READ]), 1);
    ck_assert_uint_eq(ls_get(&ls_row.latency[SHM_SVC_READ][ls_bucket(sum)]),
                      1);
    ck_assert_uint_ge(ls_bucket(sum), 12);     /* 4096 <= 5000 */
    ck_assert_uint_eq(ls_get(&ls_row.bad_requests), 0);
    ck_assert_uint_eq(ls_get(&ls_row.requests[SHM_SVC_OTHER]), 0);
    /* A Bad ServiceResult counts as a bad request too. */
    wk_loopstat_request(&ls_w, SHM_SVC_READ, wk_loopstat_ns(),
                        UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(ls_get(&ls_row.requests[SHM_SVC_READ]), 2);
    ck_assert_uint_eq(ls_get(&ls_row.bad_requests), 1);
    /* A service number past the table: Other. */
    wk_loopstat_request(&ls_w, SHM_SVC_MAX + 7, wk_loopstat_ns(), UA_GOOD);
    ck_assert_uint_eq(ls_get(&ls_row.requests[SHM_SVC_OTHER]), 1);
    for (unsigned b = 0; b < SHM_LAT_BUCKETS; b++)
        n += ls_get(&ls_row.latency[SHM_SVC_READ][b]);
    ck_assert_uint_eq(n, 2);
    /* Longer than the last bucket's start (2^23 µs): the last bucket. */
    wk_loopstat_request(&ls_w, SHM_SVC_WRITE,
                        wk_loopstat_ns() - (UINT64_C(1) << 40), UA_GOOD);
    ck_assert_uint_eq(
        ls_get(&ls_row.latency[SHM_SVC_WRITE][SHM_LAT_BUCKETS - 1]), 1);
    /* Under 2 µs: bucket 0. */
    wk_loopstat_request(&ls_w, SHM_SVC_BROWSE, wk_loopstat_ns(), UA_GOOD);
    ck_assert_uint_eq(ls_get(&ls_row.latency[SHM_SVC_BROWSE][0]), 1);
}
END_TEST

START_TEST(test_iteration)
{
    uint64_t busy, stall;

    /* An iteration that began 50 ms ago. */
    ls_w.now_ns = wk_loopstat_ns() - 50000000u;
    wk_loopstat_begin(&ls, &ls_w);
    wk_loopstat_end(&ls, &ls_w);
    busy = ls_get(&ls_row.loop_busy_us);
    ck_assert_uint_ge(busy, 50000);
    ck_assert_uint_ge(ls_bucket(busy), 15);    /* 32768 <= 50000 */
    ck_assert_uint_eq(ls_get(&ls_row.loop_iterations[ls_bucket(busy)]), 1);
    stall = ls_get(&ls_row.loop_stall_max_us);
    ck_assert_uint_eq(stall, busy);
    /* A short one: counted, the longest stays. */
    ls_w.now_ns = wk_loopstat_ns();
    wk_loopstat_begin(&ls, &ls_w);
    wk_loopstat_end(&ls, &ls_w);
    ck_assert_uint_ge(ls_get(&ls_row.loop_busy_us), busy);
    ck_assert_uint_eq(ls_get(&ls_row.loop_stall_max_us), stall);
    {
        uint64_t n = 0;

        for (unsigned b = 0; b < SHM_LAT_BUCKETS; b++)
            n += ls_get(&ls_row.loop_iterations[b]);
        ck_assert_uint_eq(n, 2);
    }
    /* No RSA work: nothing published about it. */
    ck_assert_uint_eq(ls_get(&ls_row.rsa_private_ops), 0);
    ck_assert_uint_eq(ls_get(&ls_row.loop_rsa_ops_max), 0);
}
END_TEST

START_TEST(test_step)
{
    uint64_t cpu0, ops0, max;

    ls_w.now_ns = wk_loopstat_ns();
    wk_loopstat_begin(&ls, &ls_w);
    ck_assert(!wk_loopstat_busy(&ls));
    wk_loopstat_step_begin(&ls, &cpu0, &ops0);
    ck_assert(wk_loopstat_busy(&ls));
    ls_burn(3);
    wk_loopstat_step_end(&ls, &ls_w, cpu0, ops0);
    max = ls_get(&ls_row.loop_rsa_cpu_max_us);
    ck_assert_uint_ge(max, 2500);
    /* A cheaper step: the maximum stays. */
    wk_loopstat_step_begin(&ls, &cpu0, &ops0);
    wk_loopstat_step_end(&ls, &ls_w, cpu0, ops0);
    ck_assert_uint_eq(ls_get(&ls_row.loop_rsa_cpu_max_us), max);
    wk_loopstat_end(&ls, &ls_w);
    /* The next iteration starts without RSA work. */
    wk_loopstat_begin(&ls, &ls_w);
    ck_assert(!wk_loopstat_busy(&ls));
}
END_TEST

START_TEST(test_add_sub)
{
    _Atomic uint64_t c = 5;

    wk_loopstat_add(&c, 3);
    ck_assert_uint_eq(atomic_load(&c), 8);
    wk_loopstat_sub(&c, 2);
    ck_assert_uint_eq(atomic_load(&c), 6);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/loopstat");
    TCase   *tc = tcase_create("counters");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_request);
    tcase_add_test(tc, test_iteration);
    tcase_add_test(tc, test_step);
    tcase_add_test(tc, test_add_sub);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
