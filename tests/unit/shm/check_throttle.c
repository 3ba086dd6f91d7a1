/*
 * tests/unit/shm/check_throttle.c: shm/throttle.c, the failure table
 * shared by the workers and the accept limiter: the threshold exactly
 * (N-1 failures do not block, N do), the window, the block's end, keys
 * and kinds apart, forget, undo (one failure taken back, a block of its
 * own lifted to threshold - 1), a neighbourhood full of counts (the oldest is
 * evicted) or of blocks (not counted), a claim left by a killed worker,
 * the segment region, two processes hammering one table, and two whose
 * clocks are far apart taking each other's claims and blocks.
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
#include <time.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/plan.h"
#include "shm/segment.h"
#include "shm/throttle.h"

static const struct shm_throttle_rule rule_3 = { 3, 10000, 30000 };

/* A table of n entries in shared anonymous memory (fork-safe). */
static struct shm_throttle *
table_new(uint32_t n, size_t *bytes)
{
    struct shm_plan      p = { .throttle_entries = n };
    struct shm_throttle *t;
    uint64_t             seed[2] = { 0x0123456789abcdefu, 0xfedcba9876543210u };

    *bytes = (size_t)shm_throttle_region_bytes(&p);
    ck_assert_uint_gt(*bytes, 0);
    t = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
             -1, 0);
    ck_assert_ptr_ne(t, MAP_FAILED);
    ck_assert_int_eq(shm_throttle_region_init(t, *bytes, &p), 0);
    shm_throttle_configure(t, seed, 10000);
    return t;
}

static uint64_t
ip_tag(const struct shm_throttle *t, uint8_t last)
{
    uint8_t a[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0 };

    a[15] = last;
    return shm_throttle_tag(t, SHM_THR_KEY_IP, a, sizeof(a));
}

START_TEST(test_siphash_vector)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    /* The reference key 00..0f (kind is xored into the second half). */
    uint64_t seed[2] = { UINT64_C(0x0706050403020100),
                         UINT64_C(0x0f0e0d0c0b0a0908) ^ SHM_THR_KEY_IP };
    uint8_t  msg[15];

    shm_throttle_configure(t, seed, 10000);
    /* SipHash-2-4 paper, appendix A: 15 bytes 00..0e. */
    for (unsigned i = 0; i < sizeof(msg); i++)
        msg[i] = (uint8_t)i;
    ck_assert_uint_eq(shm_throttle_tag(t, SHM_THR_KEY_IP, msg, sizeof(msg)),
                      UINT64_C(0xa129ca6149be45e5));
    ck_assert_uint_eq(shm_throttle_tag(t, SHM_THR_KEY_IP, msg, 0),
                      UINT64_C(0x726fdb47dd0e0e31));
    /* Another kind, the same bytes: another tag. */
    ck_assert_uint_ne(shm_throttle_tag(t, SHM_THR_KEY_CLIENT, msg, 0),
                      UINT64_C(0x726fdb47dd0e0e31));
    munmap(t, n);
}
END_TEST

START_TEST(test_threshold)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    uint64_t             a = ip_tag(t, 1), b = ip_tag(t, 2);
    uint64_t             now = 5000;

    /* N-1 failures: not blocked. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now + 1), 0);
    ck_assert(!shm_throttle_blocked(t, a, now + 2));
    /* The Nth: blocked for block_ms from it, and only that key. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now + 100), 1);
    ck_assert(shm_throttle_blocked(t, a, now + 100));
    ck_assert(shm_throttle_blocked(t, a, now + 100 + 29999));
    ck_assert(!shm_throttle_blocked(t, a, now + 100 + 30000));
    ck_assert(!shm_throttle_blocked(t, b, now + 100));
    ck_assert_uint_eq(shm_throttle_blocked_count(t, now + 100), 1);
    /* A failure while blocked changes nothing (no longer block). */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now + 200), 0);
    ck_assert(!shm_throttle_blocked(t, a, now + 100 + 30000));
    /* After the block the count starts again from zero. */
    now += 100 + 30000;
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now), 0);
    ck_assert(!shm_throttle_blocked(t, a, now));
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, now), 1);
    ck_assert(shm_throttle_blocked(t, a, now));
    /* Threshold 0: off. */
    {
        struct shm_throttle_rule off = { 0, 10000, 30000 };

        for (int i = 0; i < 10; i++)
            ck_assert_int_eq(shm_throttle_fail(t, b, &off, now), 0);
        ck_assert(!shm_throttle_blocked(t, b, now));
    }
    munmap(t, n);
}
END_TEST

START_TEST(test_window)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    uint64_t             a = ip_tag(t, 1);

    /* Two failures, then the third one window later: a new window. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 2000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 11000), 0);
    ck_assert(!shm_throttle_blocked(t, a, 11000));
    /* Window counted from 11000: two more within it block. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 12000), 0);
    ck_assert(!shm_throttle_blocked(t, a, 12000));
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 20999), 1);
    ck_assert(shm_throttle_blocked(t, a, 21000));
    munmap(t, n);
}
END_TEST

START_TEST(test_forget)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    uint64_t             a = ip_tag(t, 1);

    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    shm_throttle_forget(t, a, false, 1000);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    ck_assert(!shm_throttle_blocked(t, a, 1000));
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 1);
    /* Someone else's block stays; the blocker's own success lifts it. */
    shm_throttle_forget(t, a, false, 1000);
    ck_assert(shm_throttle_blocked(t, a, 1000));
    shm_throttle_forget(t, a, true, 1000);
    ck_assert(!shm_throttle_blocked(t, a, 1000));
    munmap(t, n);
}
END_TEST

/* Tags that share one neighbourhood: the same low bits. */
static uint64_t
same_hood(uint32_t i)
{
    return ((uint64_t)(i + 1) << 32) | 8u;
}

/* A success taking back its own provisional failure (the per-address
 * login key): only that one, the others stay. */
START_TEST(test_undo)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    uint8_t              a16[16] = { [10] = 0xff, [11] = 0xff, [12] = 127,
                                     [15] = 1 };
    uint64_t a = shm_throttle_tag(t, SHM_THR_KEY_LOGIN_IP, a16, 16);
    uint64_t o = shm_throttle_tag(t, SHM_THR_KEY_IP, a16, 16);

    /* Another key space for the same address: its own tag and count. */
    ck_assert_uint_ne(a, o);
    ck_assert_int_eq(shm_throttle_fail(t, o, &rule_3, 1000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, o, &rule_3, 1000), 0);
    /* Two failures, then a success's own third one undone: two stay. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1000), 1);
    ck_assert(shm_throttle_blocked(t, a, 1000));
    ck_assert(!shm_throttle_blocked(t, o, 1000));
    shm_throttle_undo(t, a, &rule_3, true, 1100);
    ck_assert(!shm_throttle_blocked(t, a, 1100));
    /* threshold - 1 left: the next failure blocks. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 1200), 1);
    ck_assert(shm_throttle_blocked(t, a, 1200));
    /* A block not of the undoer's making stays. */
    shm_throttle_undo(t, a, &rule_3, false, 1300);
    ck_assert(shm_throttle_blocked(t, a, 1300));
    /* A count: one taken back per undo, never below zero. */
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 40000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 40000), 0);
    shm_throttle_undo(t, a, &rule_3, false, 40000);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 40000), 0);
    ck_assert(!shm_throttle_blocked(t, a, 40000));
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 40000), 1);
    ck_assert(shm_throttle_blocked(t, a, 40000));
    shm_throttle_undo(t, a, &rule_3, true, 40000);
    shm_throttle_undo(t, a, &rule_3, false, 40000);
    shm_throttle_undo(t, a, &rule_3, false, 40000);
    shm_throttle_undo(t, a, &rule_3, false, 40000);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 40000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, a, &rule_3, 40000), 0);
    ck_assert(!shm_throttle_blocked(t, a, 40000));
    /* The other key space was never touched: its third failure blocks. */
    ck_assert_int_eq(shm_throttle_fail(t, o, &rule_3, 1000), 1);
    munmap(t, n);
}
END_TEST

START_TEST(test_full_of_counts)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    uint64_t             x = same_hood(100);

    /* Eight keys fill the neighbourhood with counts of different ages. */
    for (uint32_t i = 0; i < SHM_THROTTLE_PROBE; i++)
        ck_assert_int_eq(shm_throttle_fail(t, same_hood(i), &rule_3,
                                           1000 + i), 0);
    /* A ninth key evicts the oldest count and is counted. */
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3, 2000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3, 2000), 0);
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3, 2000), 1);
    ck_assert(shm_throttle_blocked(t, x, 2000));
    /* The evicted key (the oldest, 0) lost its count: two more failures
     * do not block it; key 1, still there, is blocked by two more. */
    ck_assert_int_eq(shm_throttle_fail(t, same_hood(1), &rule_3, 2001), 0);
    ck_assert_int_eq(shm_throttle_fail(t, same_hood(1), &rule_3, 2001), 1);
    munmap(t, n);
}
END_TEST

START_TEST(test_full_of_blocks)
{
    size_t                   n;
    struct shm_throttle     *t = table_new(64, &n);
    struct shm_throttle_rule one = { 1, 10000, 5000 };
    uint64_t                 x = same_hood(100);

    for (uint32_t i = 0; i < SHM_THROTTLE_PROBE; i++) {
        ck_assert_int_eq(shm_throttle_fail(t, same_hood(i), &one, 1000), 1);
        ck_assert(shm_throttle_blocked(t, same_hood(i), 1000));
    }
    /* Blocks are never evicted: the ninth key is not counted. */
    ck_assert_int_eq(shm_throttle_fail(t, x, &one, 1000), -ENOSPC);
    ck_assert(!shm_throttle_blocked(t, x, 1000));
    for (uint32_t i = 0; i < SHM_THROTTLE_PROBE; i++)
        ck_assert(shm_throttle_blocked(t, same_hood(i), 5999));
    /* Other neighbourhoods are not affected. */
    ck_assert_int_eq(shm_throttle_fail(t, ip_tag(t, 9), &one, 1000), 1);
    /* Once the blocks are over their entries are free again. */
    ck_assert_int_eq(shm_throttle_fail(t, x, &one, 6000), 1);
    ck_assert(shm_throttle_blocked(t, x, 6000));
    ck_assert(!shm_throttle_blocked(t, same_hood(0), 6000));
    munmap(t, n);
}
END_TEST

START_TEST(test_dead_claim)
{
    size_t                     n;
    struct shm_throttle       *t = table_new(64, &n);
    struct shm_throttle_entry *es = (struct shm_throttle_entry *)(t + 1);
    uint64_t                   x = same_hood(100);

    /* Workers killed between claiming an entry and writing its tag. */
    for (uint32_t j = 0; j < SHM_THROTTLE_PROBE; j++)
        atomic_store(&es[(x + j) & t->mask].state,
                     (uint64_t)SHM_THR_CLAIM << SHM_THR_KIND_SHIFT | 1000u);
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3, 1500), -ENOSPC);
    /* Past the lease anybody takes them. */
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3,
                                       1000 + SHM_THROTTLE_LEASE_MS), 0);
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3, 2001), 0);
    ck_assert_int_eq(shm_throttle_fail(t, x, &rule_3, 2002), 1);
    munmap(t, n);
}
END_TEST

START_TEST(test_accept_rate)
{
    size_t               n;
    struct shm_throttle *t = table_new(64, &n);
    uint64_t             now = 1000000;

    /* 100/s after a burst of 5. */
    for (int i = 0; i < 5; i++)
        ck_assert(shm_throttle_accept(t, 100, 5, now));
    ck_assert(!shm_throttle_accept(t, 100, 5, now));
    ck_assert(!shm_throttle_accept(t, 100, 5, now + 9999));
    ck_assert(shm_throttle_accept(t, 100, 5, now + 10000));
    ck_assert(!shm_throttle_accept(t, 100, 5, now + 10000));
    /* A second later the burst is back, no more. */
    now += 2000000;
    for (int i = 0; i < 5; i++)
        ck_assert(shm_throttle_accept(t, 100, 5, now));
    ck_assert(!shm_throttle_accept(t, 100, 5, now));
    /* Rate 0: no limit. */
    for (int i = 0; i < 1000; i++)
        ck_assert(shm_throttle_accept(t, 0, 5, now));
    munmap(t, n);
}
END_TEST

START_TEST(test_segment)
{
    struct shm_plan      p = { .nodes = 10, .refs = 10, .strings = 100,
                               .slots = 4, .vheap = 4096 };
    struct shm_segment   s, a;
    struct shm_throttle *t;
    uint64_t             seed[2] = { 1, 2 }, tag;

    ck_assert_int_eq(shm_plan_create(&s, &p, "check_throttle"), 0);
    ck_assert_ptr_null(shm_throttle_of(&s));
    shm_segment_close(&s);
    p.throttle_entries = 100;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_throttle"), 0);
    t = shm_throttle_of(&s);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->nentries, 128);
    shm_throttle_configure(t, seed, 10000);
    tag = ip_tag(t, 7);
    ck_assert_int_eq(shm_throttle_fail(t, tag, &rule_3, 1), 0);
    ck_assert_int_eq(shm_throttle_fail(t, tag, &rule_3, 1), 0);
    /* A worker's mapping counts on the same entries. */
    ck_assert_int_eq(shm_segment_attach(&a, dup(s.fd), 1), 0);
    ck_assert_int_eq(shm_throttle_fail(shm_throttle_of(&a), tag, &rule_3, 2),
                     1);
    ck_assert(shm_throttle_blocked(t, tag, 3));
    shm_throttle_count(shm_throttle_of(&a), 3, SHM_THR_C_BLOCKS);
    shm_throttle_count(t, 0, SHM_THR_C_BLOCKS);
    ck_assert_uint_eq(shm_throttle_total(t, SHM_THR_C_BLOCKS), 2);
    shm_segment_close(&a);
    shm_segment_close(&s);
}
END_TEST

/*
 * Two processes, 64 keys in a 256-entry table.  Phase 1: each key has its
 * entry (one failure by the parent); each child adds 127 failures to
 * every key, interleaved: exactly one of the 255 failures of each key
 * begins its block (threshold 255), none is lost.  Phase 2: the children
 * race on 64 fresh keys with claims (100 failures each per key, threshold
 * 255): no key may be blocked (no failure counted on another key).
 * Phase 3: a child killed -9 while hammering leaves no entry unusable.
 */
#define HAMMER_KEYS 64u

static void
hammer_barrier(_Atomic uint32_t *c, uint32_t n)
{
    atomic_fetch_add(c, 1);
    while (atomic_load(c) < n)
        sched_yield();
}

START_TEST(test_two_processes)
{
    size_t                   n;
    struct shm_throttle     *t = table_new(256, &n);
    struct shm_throttle_rule max = { 255, 1000000, 1000000 };
    struct shm_throttle_rule one = { 1, 1000000, 1000000 };
    _Atomic uint32_t        *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint64_t                 tag;
    pid_t                    pid[2];
    int                      st;

    ck_assert_ptr_ne(shared, MAP_FAILED);
    for (uint32_t k = 0; k < HAMMER_KEYS; k++)
        ck_assert_int_eq(shm_throttle_fail(t, ip_tag(t, (uint8_t)k), &max,
                                           1000), 0);
    for (unsigned i = 0; i < 2; i++) {
        pid[i] = fork();
        ck_assert_int_ne(pid[i], -1);
        if (pid[i] == 0) {
            int rc;

            hammer_barrier(&shared[0], 2);
            for (uint32_t r = 0; r < 127; r++)
                for (uint32_t k = 0; k < HAMMER_KEYS; k++) {
                    do
                        rc = shm_throttle_fail(t, ip_tag(t, (uint8_t)k),
                                               &max, 1000);
                    while (rc == -EAGAIN);
                    if (rc < 0)
                        _exit(3);
                    if (rc == 1)
                        atomic_fetch_add(&shared[1], 1);
                }
            hammer_barrier(&shared[2], 2);
            for (uint32_t r = 0; r < 100; r++)
                for (uint32_t k = 0; k < HAMMER_KEYS; k++) {
                    rc = shm_throttle_fail(t, ip_tag(t, (uint8_t)(k + 128)),
                                           &max, 1000);
                    if (rc == 1)
                        _exit(4);
                }
            _exit(0);
        }
    }
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
        ck_assert(WIFEXITED(st));
        ck_assert_int_eq(WEXITSTATUS(st), 0);
    }
    ck_assert_uint_eq(atomic_load(&shared[1]), HAMMER_KEYS);
    for (uint32_t k = 0; k < HAMMER_KEYS; k++) {
        ck_assert(shm_throttle_blocked(t, ip_tag(t, (uint8_t)k), 1000));
        ck_assert(!shm_throttle_blocked(t, ip_tag(t, (uint8_t)(k + 128)),
                                        1000));
    }

    /* Phase 3: killed -9 at some instruction of its loop. */
    pid[0] = fork();
    ck_assert_int_ne(pid[0], -1);
    if (pid[0] == 0) {
        for (uint64_t now = 2000000;; now++)
            for (uint32_t k = 0; k < HAMMER_KEYS; k++)
                (void)shm_throttle_fail(t, ip_tag(t, (uint8_t)(k + 64)),
                                        &max, now);
    }
    usleep(50000);
    kill(pid[0], SIGKILL);
    ck_assert_int_eq(waitpid(pid[0], &st, 0), pid[0]);
    /* Past the lease, every key (blocked or not) gets an entry. */
    for (uint32_t k = 0; k < HAMMER_KEYS; k++) {
        tag = ip_tag(t, (uint8_t)(k + 64));
        ck_assert_int_ge(shm_throttle_fail(t, tag, &one, 4000000), 0);
        ck_assert(shm_throttle_blocked(t, tag, 4000000));
    }
    munmap((void *)shared, 4096);
    munmap(t, n);
}
END_TEST

/*
 * Two processes whose clocks are far apart, on a small table: to the one
 * ahead (B, LEASE_MS and a block later) every claim of the one behind (A)
 * is past its lease and every block A began is over, so B takes A's
 * entries while A is in the middle of writing them, as a worker would
 * take a claim from one stopped for a second.  A key must never get
 * another key's count or block.  A blocks each of its fresh keys at its
 * first failure; B gives each of its fresh keys 2 failures (threshold 3:
 * never a block) and publishes the key it is on, and A checks that key is
 * not blocked in its own view, where A's blocks are running.
 */
#define SKEW_KEYS 2000000u

static uint64_t
skew_tag(const struct shm_throttle *t, uint32_t who, uint32_t i)
{
    uint32_t k[2] = { who, i };

    return shm_throttle_tag(t, SHM_THR_KEY_CLIENT, k, sizeof(k));
}

START_TEST(test_skewed_clocks)
{
    size_t                   n;
    struct shm_throttle     *t = table_new(64, &n);
    struct shm_throttle_rule one = { 1, 1000000, 2000 };
    struct shm_throttle_rule three = { 3, 1000000, 2000 };
    uint64_t                 seed[2] = { 7, 9 };
    uint64_t                 now_a = 1000;
    uint64_t                 now_b = now_a + 2000 + SHM_THROTTLE_LEASE_MS;
    _Atomic uint32_t        *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t                    pid[2];
    int                      st;

    ck_assert_ptr_ne(shared, MAP_FAILED);
    /* Counts stay for the whole test: only claims and blocks go stale. */
    shm_throttle_configure(t, seed, 1000000);
    pid[0] = fork();
    ck_assert_int_ne(pid[0], -1);
    if (pid[0] == 0) {                  /* A, behind */
        hammer_barrier(&shared[0], 2);
        for (uint32_t i = 0; atomic_load(&shared[1]) < SKEW_KEYS; i++) {
            uint32_t b = atomic_load(&shared[1]);

            (void)shm_throttle_fail(t, skew_tag(t, 0, i), &one, now_a);
            if (shm_throttle_blocked(t, skew_tag(t, 1, b), now_a)) {
                atomic_store(&shared[2], b + 1);
                _exit(5);
            }
        }
        _exit(0);
    }
    pid[1] = fork();
    ck_assert_int_ne(pid[1], -1);
    if (pid[1] == 0) {                  /* B, ahead */
        hammer_barrier(&shared[0], 2);
        for (uint32_t i = 0; i < SKEW_KEYS; i++) {
            uint64_t tag = skew_tag(t, 1, i);

            atomic_store(&shared[1], i);
            if (shm_throttle_fail(t, tag, &three, now_b) == 1
                || shm_throttle_fail(t, tag, &three, now_b) == 1) {
                atomic_store(&shared[3], i + 1);
                atomic_store(&shared[1], SKEW_KEYS);
                _exit(6);
            }
        }
        atomic_store(&shared[1], SKEW_KEYS);
        _exit(0);
    }
    for (unsigned i = 0; i < 2; i++) {
        ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
        ck_assert(WIFEXITED(st));
        ck_assert_msg(WEXITSTATUS(st) == 0,
                      "process %u: exit %d (B key %u blocked for A, B key "
                      "%u blocked by 2 failures)", i, WEXITSTATUS(st),
                      atomic_load(&shared[2]), atomic_load(&shared[3]));
    }
    munmap((void *)shared, 4096);
    munmap(t, n);
}
END_TEST

static Suite *
throttle_suite(void)
{
    Suite *s = suite_create("Failure throttle");
    TCase *tc;

    tc = tcase_create("table");
    tcase_add_test(tc, test_siphash_vector);
    tcase_add_test(tc, test_threshold);
    tcase_add_test(tc, test_window);
    tcase_add_test(tc, test_forget);
    tcase_add_test(tc, test_undo);
    tcase_add_test(tc, test_full_of_counts);
    tcase_add_test(tc, test_full_of_blocks);
    tcase_add_test(tc, test_dead_claim);
    tcase_add_test(tc, test_accept_rate);
    tcase_add_test(tc, test_segment);
    suite_add_tcase(s, tc);

    tc = tcase_create("processes");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_two_processes);
    tcase_add_test(tc, test_skewed_clocks);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(throttle_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
