/*
 * tests/unit/shm/check_limits.c: shm/limits.c, the server-wide budgets:
 * exact at the limit, one past it refused, give back, a dead worker's
 * share reclaimed, and two processes racing for the last units.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/limits.h"
#include "shm/plan.h"
#include "shm/segment.h"

static const struct shm_plan plan_small = {
    .nodes = 10, .refs = 10, .strings = 100, .slots = 4, .vheap = 4096,
};

static struct shm_limits *
limits_new(void)
{
    struct shm_limits *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(l, MAP_FAILED);
    return l;
}

START_TEST(test_exact_limit)
{
    struct shm_limits *l = limits_new();

    /* 6 units over two workers: all 6 granted, the 7th refused by both. */
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(shm_limits_take(l, (unsigned)(i & 1),
                                         SHM_LIM_SESSIONS, 1, 6), 0);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 6);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    ck_assert_int_eq(shm_limits_take(l, 2, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 6);
    ck_assert_uint_eq(shm_limits_held(l, 0, SHM_LIM_SESSIONS), 3);
    ck_assert_uint_eq(shm_limits_held(l, 1, SHM_LIM_SESSIONS), 3);
    ck_assert_uint_eq(shm_limits_held(l, 2, SHM_LIM_SESSIONS), 0);
    /* Kinds are independent. */
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SUBSCRIPTIONS), 0);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SUBSCRIPTIONS, 1, 1), 0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SUBSCRIPTIONS, 1, 1),
                     -ENOSPC);
    /* n > 1: all or nothing. */
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_MONITORED_ITEMS, 3, 4), 0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_MONITORED_ITEMS, 2, 4),
                     -ENOSPC);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_MONITORED_ITEMS), 3);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_MONITORED_ITEMS, 1, 4), 0);
    /* Near UINT32_MAX: no wrap-around lets a take through. */
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_MONITORED_ITEMS,
                                     UINT32_MAX, UINT32_MAX), -ENOSPC);
    /* Out of range. */
    ck_assert_int_eq(shm_limits_take(l, SHM_WORKERS_MAX, SHM_LIM_SESSIONS, 1,
                                     100), -EINVAL);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_KINDS, 1, 100), -EINVAL);
    munmap(l, sizeof(*l));
}
END_TEST

START_TEST(test_give_back)
{
    struct shm_limits *l = limits_new();

    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(shm_limits_take(l, (unsigned)(i % 2),
                                         SHM_LIM_SESSIONS, 1, 6), 0);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    /* Worker 1 closes one: worker 0 may open one more, then no more. */
    shm_limits_give(l, 1, SHM_LIM_SESSIONS, 1);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 5);
    ck_assert_uint_eq(shm_limits_held(l, 1, SHM_LIM_SESSIONS), 2);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SESSIONS, 1, 6), 0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    ck_assert_uint_eq(shm_limits_held(l, 0, SHM_LIM_SESSIONS), 4);
    /* A worker cannot give back more than it holds. */
    shm_limits_give(l, 1, SHM_LIM_SESSIONS, 10);
    ck_assert_uint_eq(shm_limits_held(l, 1, SHM_LIM_SESSIONS), 0);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 4);
    shm_limits_give(l, 0, SHM_LIM_SESSIONS, 4);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 0);
    shm_limits_give(l, 0, SHM_LIM_SESSIONS, 1);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 0);
    munmap(l, sizeof(*l));
}
END_TEST

START_TEST(test_reclaim_dead_worker)
{
    struct shm_limits *l = limits_new();

    /* Worker 0: 2 sessions, 3 subscriptions, 40 items; worker 1: 4, 1, 60. */
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SESSIONS, 2, 6), 0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SESSIONS, 4, 6), 0);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SUBSCRIPTIONS, 3, 4), 0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SUBSCRIPTIONS, 1, 4), 0);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_MONITORED_ITEMS, 40, 100),
                     0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_MONITORED_ITEMS, 60, 100),
                     0);
    ck_assert_int_eq(shm_limits_take(l, 0, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    /* Worker 1 dies: exactly its share returns, worker 0's stays. */
    shm_limits_reclaim(l, 1);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 2);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SUBSCRIPTIONS), 3);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_MONITORED_ITEMS), 40);
    for (unsigned k = 0; k < SHM_LIM_KINDS; k++)
        ck_assert_uint_eq(shm_limits_held(l, 1, (enum shm_limit_kind)k), 0);
    /* Reclaiming twice takes nothing more. */
    shm_limits_reclaim(l, 1);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 2);
    /* Its successor in the slot starts from nothing and may use the lot. */
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SESSIONS, 4, 6), 0);
    ck_assert_int_eq(shm_limits_take(l, 1, SHM_LIM_SESSIONS, 1, 6), -ENOSPC);
    ck_assert_uint_eq(shm_limits_held(l, 1, SHM_LIM_SESSIONS), 4);
    munmap(l, sizeof(*l));
}
END_TEST

/* In the segment: the budgets sit after the worker rows, zeroed. */
START_TEST(test_segment)
{
    struct shm_segment s, a;
    struct shm_limits *l;
    uint8_t           *rows;

    ck_assert_int_eq(shm_plan_create(&s, &plan_small, "check_limits"), 0);
    l = shm_limits_of(&s);
    rows = shm_segment_region(&s, SHM_R_WORKERS);
    ck_assert_ptr_eq((uint8_t *)l,
                     rows + SHM_WORKERS_MAX * sizeof(struct shm_worker));
    ck_assert_uint_eq((uintptr_t)l % SHM_CACHELINE, 0);
    ck_assert_uint_ge(s.hdr->regions[SHM_R_WORKERS].size,
                      SHM_WORKERS_MAX * sizeof(struct shm_worker)
                          + sizeof(struct shm_limits));
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), 0);
    /* A second mapping (a worker's) sees what the first took. */
    ck_assert_int_eq(shm_limits_take(l, 3, SHM_LIM_SESSIONS, 2, 2), 0);
    ck_assert_int_eq(shm_segment_attach(&a, dup(s.fd), 1), 0);
    ck_assert_int_eq(shm_limits_take(shm_limits_of(&a), 4, SHM_LIM_SESSIONS,
                                     1, 2), -ENOSPC);
    shm_segment_close(&a);
    shm_segment_close(&s);
}
END_TEST

/*
 * Two processes take units one at a time until refused, each counting what
 * it got: together exactly the limit, never more.  Then one is killed
 * holding its units and the survivor gets them after the reclaim.
 */
#define RACE_MAX 20000u

/* Both children arrive: +1 on *c, wait until it reaches n. */
static void
race_barrier(uint32_t *c, uint32_t n)
{
    _Atomic uint32_t *a = (_Atomic uint32_t *)c;

    atomic_fetch_add(a, 1);
    while (atomic_load(a) < n)
        sched_yield();
}

START_TEST(test_race_two_processes)
{
    struct shm_limits *l = limits_new();
    uint32_t          *got = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t              pid[2];
    int                st;

    ck_assert_ptr_ne(got, MAP_FAILED);
    memset(got, 0, 4096);
    for (unsigned i = 0; i < 2; i++) {
        pid[i] = fork();
        ck_assert_int_ne(pid[i], -1);
        if (pid[i] == 0) {
            while (shm_limits_take(l, i, SHM_LIM_MONITORED_ITEMS, 1,
                                   RACE_MAX) == 0)
                got[i]++;
            race_barrier(&got[4], 2);
            /* Both give back half, then both race to take it again. */
            for (uint32_t n = got[i] / 2; n > 0; n--)
                shm_limits_give(l, i, SHM_LIM_MONITORED_ITEMS, 1);
            race_barrier(&got[4], 4);
            while (shm_limits_take(l, i, SHM_LIM_MONITORED_ITEMS, 1,
                                   RACE_MAX) == 0)
                got[2 + i]++;
            _exit(0);
        }
    }
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
        ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    ck_assert_uint_eq(got[0] + got[1], RACE_MAX);
    ck_assert_uint_eq(got[2] + got[3], got[0] / 2 + got[1] / 2);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_MONITORED_ITEMS), RACE_MAX);
    ck_assert_uint_eq(shm_limits_held(l, 0, SHM_LIM_MONITORED_ITEMS)
                          + shm_limits_held(l, 1, SHM_LIM_MONITORED_ITEMS),
                      RACE_MAX);
    /* Worker 0 is gone (exited holding its share): reclaim it. */
    shm_limits_reclaim(l, 0);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_MONITORED_ITEMS),
                      shm_limits_held(l, 1, SHM_LIM_MONITORED_ITEMS));
    munmap(got, 4096);
    munmap(l, sizeof(*l));
}
END_TEST

static Suite *
limits_suite(void)
{
    Suite *s = suite_create("Server-wide budgets");
    TCase *tc;

    tc = tcase_create("take, give, reclaim");
    tcase_add_test(tc, test_exact_limit);
    tcase_add_test(tc, test_give_back);
    tcase_add_test(tc, test_reclaim_dead_worker);
    tcase_add_test(tc, test_segment);
    suite_add_tcase(s, tc);

    tc = tcase_create("processes");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_race_two_processes);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(limits_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
