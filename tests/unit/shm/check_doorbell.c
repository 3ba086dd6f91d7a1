/*
 * tests/unit/shm/check_doorbell.c: shm/doorbell.c: names and limits,
 * non-blocking rings, ping-pong with a freshly forked child and with an
 * exec'd child (this binary re-run with --bell-child), and the ring wake-up
 * protocol over a real nanomsg doorbell for >= 1,000,000 hand-offs: a
 * consumer that times out in poll() while items wait has lost a wake-up.
 *
 * nanomsg is not fork-safe: every socket here is created after the fork
 * that separates its users, and the runner process never makes one.  Run
 * with the default CK_FORK=yes (each test in its own process); under
 * CK_FORK=no the fork cases would fork a process that already used
 * nanomsg.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "shm/doorbell.h"
#include "shm/layout.h"
#include "shm/plan.h"
#include "shm/ring.h"
#include "shm/segment.h"

#include "fanout_util.h"

#define CONNECT_MS 5000
#define WAIT_MS    5000

/* A fresh private directory for the sockets; rmdir'd by dir_done(). */
static void
dir_new(char *dir, size_t cap)
{
    const char *t = getenv("TMPDIR");

    snprintf(dir, cap, "%s/ckbellXXXXXX", t != NULL && t[0] ? t : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* The directory must be empty again: close removed the socket files. */
static void
dir_done(const char *dir)
{
    ck_assert_int_eq(rmdir(dir), 0);
}

/* Block until d's fd is readable; then the number of bells drained. */
static int
bell_wait(struct shm_doorbell *d, int ms)
{
    struct pollfd pfd = { .fd = shm_doorbell_fd(d), .events = POLLIN };
    int           rc;

    do {
        rc = poll(&pfd, 1, ms);
    } while (rc == -1 && errno == EINTR);
    if (rc <= 0)
        return -ETIMEDOUT;
    return shm_doorbell_drain(d);
}

/* ------------------------------------------------------------- names */

START_TEST(test_names)
{
    struct shm_doorbell d;
    char                dir[PATH_MAX], name[SHM_DOORBELL_PATH_MAX + 8];
    size_t              dl;

    dir_new(dir, sizeof(dir));
    dl = strlen(dir);
    ck_assert_int_eq(shm_doorbell_bind(&d, "", "x"), -EINVAL);
    ck_assert_int_eq(shm_doorbell_bind(&d, dir, ""), -EINVAL);
    ck_assert_int_eq(shm_doorbell_bind(&d, NULL, "x"), -EINVAL);
    ck_assert_int_eq(shm_doorbell_bind(&d, dir, "a/b"), -EINVAL);
    ck_assert_int_eq(shm_doorbell_connect(&d, dir, "", 10), -EINVAL);
    ck_assert_int_eq(d.sock, -1);
    /* dir + "/" + name of exactly SHM_DOORBELL_PATH_MAX: refused. */
    ck_assert_uint_lt(dl + 2, SHM_DOORBELL_PATH_MAX);
    memset(name, 'n', sizeof(name));
    name[SHM_DOORBELL_PATH_MAX - dl - 1] = '\0';
    ck_assert_int_eq(shm_doorbell_bind(&d, dir, name), -ENAMETOOLONG);
    ck_assert_int_eq(shm_doorbell_connect(&d, dir, name, 10), -ENAMETOOLONG);
    ck_assert_int_eq(d.sock, -1);
    /* One shorter is the longest that works. */
    name[SHM_DOORBELL_PATH_MAX - dl - 2] = '\0';
    ck_assert_int_eq(shm_doorbell_bind(&d, dir, name), 0);
    ck_assert_uint_eq(strlen(d.path), SHM_DOORBELL_PATH_MAX - 1);
    ck_assert_int_ge(shm_doorbell_fd(&d), 0);
    shm_doorbell_close(&d);
    shm_doorbell_close(&d);                 /* idempotent */
    /* A directory that is not there, or not a directory. */
    ck_assert_int_eq(shm_doorbell_bind(&d, "/nonexistent-ckbell", "b"),
                     -ENOENT);
    ck_assert_int_eq(shm_doorbell_bind(&d, "/dev/null", "b"), -ENOTDIR);
    ck_assert_int_eq(d.sock, -1);
    /* Nobody bound: connect times out, no socket left behind. */
    ck_assert_int_eq(shm_doorbell_connect(&d, dir, "none", 200), -ETIMEDOUT);
    ck_assert_int_eq(d.sock, -1);
    dir_done(dir);
}
END_TEST

/* Rings never block: with nobody reading they are dropped (1). */
START_TEST(test_ring_never_blocks)
{
    struct shm_doorbell b, c;
    char                dir[PATH_MAX];
    int                 queued = 0, dropped = 0, rc, got = 0;

    dir_new(dir, sizeof(dir));
    ck_assert_int_eq(shm_doorbell_bind(&b, dir, "nb.bell"), 0);
    /* No peer yet: dropped, not blocked. */
    ck_assert_int_eq(shm_doorbell_ring(&b), 1);
    ck_assert_int_eq(shm_doorbell_drain(&b), 0);
    ck_assert_int_eq(shm_doorbell_connect(&c, dir, "nb.bell", CONNECT_MS), 0);
    ck_assert_int_eq(bell_wait(&b, WAIT_MS), 1);    /* the hello */
    for (int i = 0; i < 100000 && dropped < 1000; i++) {
        rc = shm_doorbell_ring(&b);
        if (rc == 0)
            queued++;
        else if (rc == 1)
            dropped++;
        else
            ck_abort_msg("ring: %d", rc);
    }
    ck_assert_int_gt(queued, 0);
    ck_assert_int_eq(dropped, 1000);        /* the queue filled up */
    /* The reader finds the queued ones (its fd stays readable). */
    while ((rc = bell_wait(&c, 500)) > 0)
        got += rc;
    ck_assert_int_eq(got, queued);
    ck_assert_int_eq(shm_doorbell_drain(&c), 0);
    shm_doorbell_close(&c);
    shm_doorbell_close(&b);
    dir_done(dir);
}
END_TEST

/* ------------------------------------------------- parent <-> child */

#define PINGS 2000

/*
 * The connecting side (a worker): connect, wait for the binder's first
 * ring, then answer each ping with a pong.  Exit status 0 when all went.
 */
static int
child_pong(const char *dir, const char *name, int pings)
{
    struct shm_doorbell d;

    if (shm_doorbell_connect(&d, dir, name, CONNECT_MS) != 0)
        return 20;
    for (int i = 0; i <= pings; i++) {
        int n = bell_wait(&d, WAIT_MS);

        if (n <= 0)
            return 21;
        if (i < pings && shm_doorbell_ring(&d) != 0)
            return 22;
    }
    shm_doorbell_close(&d);
    return 0;
}

/*
 * The binding side (the broker): bind, hello, answer, ping-pong.  The last
 * ping is still queued when the loop ends and nn_close() drops unsent
 * messages: reap the child (which exits once it has it) before closing.
 */
static double
parent_ping(const char *dir, const char *name, int pings, pid_t child)
{
    struct shm_doorbell d;
    double              t0;

    ck_assert_int_eq(shm_doorbell_bind(&d, dir, name), 0);
    ck_assert_int_ge(bell_wait(&d, WAIT_MS), 1);    /* the hello */
    /* Our side is up now; the first ring answers the hello. */
    ck_assert_int_eq(shm_doorbell_ring(&d), 0);
    t0 = fu_now();
    for (int i = 0; i < pings; i++) {
        ck_assert_int_eq(bell_wait(&d, WAIT_MS), 1);
        ck_assert_int_eq(shm_doorbell_ring(&d), 0);
    }
    t0 = fu_now() - t0;
    ck_assert_int_eq(fu_wait(child), 0);
    shm_doorbell_close(&d);
    return t0;
}

/* The linger timer: fires once after its time, not before; 0 disarms;
 * clearing an unfired or already cleared timer is harmless. */
START_TEST(test_linger_timer)
{
    struct pollfd p;
    int           fd = shm_linger_open();

    ck_assert_int_ge(fd, 0);
    p.fd = fd;
    p.events = POLLIN;
    shm_linger_clear(fd);                   /* nothing to clear */
    ck_assert_int_eq(poll(&p, 1, 0), 0);
    ck_assert_int_eq(shm_linger_arm(fd, 200000), 0);     /* 200 ms */
    ck_assert_int_eq(poll(&p, 1, 20), 0);   /* not yet */
    ck_assert_int_eq(shm_linger_arm(fd, 0), 0);          /* disarmed */
    ck_assert_int_eq(poll(&p, 1, 300), 0);
    ck_assert_int_eq(shm_linger_arm(fd, 100), 0);        /* 100 us */
    ck_assert_int_eq(poll(&p, 1, 5000), 1);
    shm_linger_clear(fd);
    ck_assert_int_eq(poll(&p, 1, 0), 0);    /* consumed, fired once */
    close(fd);
}
END_TEST

START_TEST(test_forked_child)
{
    char   dir[PATH_MAX];
    pid_t  pid;
    double t;

    dir_new(dir, sizeof(dir));
    pid = fu_fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0)
        _exit(child_pong(dir, "fork.bell", PINGS));   /* socket after fork */
    t = parent_ping(dir, "fork.bell", PINGS, pid);
    printf("doorbell ping-pong (forked child): %d round trips in %.2f s = "
           "%.0f/s, %.0f us each\n",
           PINGS, t, PINGS / t, t / PINGS * 1e6);
    fflush(stdout);
    dir_done(dir);
}
END_TEST

START_TEST(test_exec_child)
{
    char   dir[PATH_MAX], n[16];
    pid_t  pid;
    double t;

    dir_new(dir, sizeof(dir));
    snprintf(n, sizeof(n), "%d", PINGS);
    pid = fu_fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        execl("/proc/self/exe", "check_doorbell", "--bell-child", dir,
              "exec.bell", n, (char *)NULL);
        _exit(127);
    }
    t = parent_ping(dir, "exec.bell", PINGS, pid);
    printf("doorbell ping-pong (exec'd child): %d round trips in %.2f s = "
           "%.0f/s, %.0f us each\n",
           PINGS, t, PINGS / t, t / PINGS * 1e6);
    fflush(stdout);
    dir_done(dir);
}
END_TEST

/* ------------------------------------------- lost wake-up, nanomsg */

/*
 * The real direction: the parent is the broker (binds, produces into the
 * worker's ring, rings only when told to), the child is the worker
 * (connects, consumes, sleeps in poll() on the doorbell fd whenever the
 * ring is empty).  A poll timeout while items wait is a lost wake-up.
 */
#define LW_ITEMS   (1100u * 1000)
#define LW_TIMEOUT 2000             /* ms */

struct lw_item {
    uint64_t seq;
    uint64_t sum;
};

struct lw_result {
    uint64_t received;
    uint64_t bad;
    uint64_t lost;          /* timeouts with items waiting */
    uint64_t idle;          /* timeouts with nothing waiting */
    uint64_t wakes;
    uint64_t err;
};

static const struct shm_plan plan_lw = {
    .nodes = 1, .refs = 1, .strings = 8, .slots = 1, .vheap = 64,
    .ring_workers = 1, .req_ring_slots = 256, .reply_ring_slots = 2,
    .notif_ring_slots = 2, .msg_slot_size = sizeof(struct lw_item),
};

static int
lw_consumer(int fd, const char *dir, struct lw_result *res)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    struct shm_doorbell d;
    struct lw_item      buf[64];
    struct pollfd       pfd;
    uint64_t            next = 0;
    int                 rc;

    if (shm_segment_attach(&s, fd, 1) != 0
        || shm_ring_locate(&r, &s, 0, SHM_RING_REQ) != 0)
        return 30;
    if (shm_doorbell_connect(&d, dir, "lw.bell", CONNECT_MS) != 0)
        return 31;
    pfd.fd = shm_doorbell_fd(&d);
    pfd.events = POLLIN;
    while (next < LW_ITEMS) {
        rc = shm_ring_pop_n_spsc(&r, buf, 64);
        if (rc > 0) {
            for (int i = 0; i < rc; i++) {
                if (buf[i].seq != next || buf[i].sum != fu_mix(next))
                    res->bad++;
                next = buf[i].seq + 1;
                res->received++;
            }
            continue;
        }
        if (rc != -EAGAIN)
            return 33;
        if (!shm_ring_sleep_prepare(&r))
            continue;
        rc = poll(&pfd, 1, LW_TIMEOUT);
        if (rc == 0) {
            if (shm_ring_count_spsc(&r) != 0) {
                res->lost++;
                return 34;
            }
            res->idle++;
        } else if (rc > 0) {
            res->wakes++;
        }
        /* Latch discipline: reset the doorbell, unmark, then look again. */
        if (shm_doorbell_drain(&d) < 0)
            res->err++;
        shm_ring_wake_clear(&r);
    }
    shm_doorbell_close(&d);
    return res->bad == 0 && res->err == 0 ? 0 : 35;
}

START_TEST(test_lost_wakeup_nanomsg)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    struct shm_doorbell d;
    struct lw_result   *res;
    struct lw_item      buf[8];
    char                dir[PATH_MAX];
    uint64_t            seq = 0, rang = 0, dropped = 0;
    unsigned            seed = 777, spins = 0;
    double              t0;
    pid_t               pid;

    ck_assert_int_eq(shm_plan_create(&s, &plan_lw, "check_doorbell"), 0);
    ck_assert_int_eq(shm_ring_locate(&r, &s, 0, SHM_RING_REQ), 0);
    res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(res, MAP_FAILED);
    memset(res, 0, sizeof(*res));
    dir_new(dir, sizeof(dir));
    pid = fu_fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0)
        _exit(lw_consumer(s.fd, dir, res));
    ck_assert_int_eq(shm_doorbell_bind(&d, dir, "lw.bell"), 0);
    ck_assert_int_ge(bell_wait(&d, WAIT_MS), 1);    /* the hello */
    ck_assert_int_eq(shm_doorbell_ring(&d), 0);     /* answer it */
    t0 = fu_now();
    while (seq < LW_ITEMS) {
        uint32_t k = (uint32_t)(rand_r(&seed) % 8) + 1;
        uint32_t dly = (uint32_t)rand_r(&seed) % 100;
        int      rc;

        if (k > LW_ITEMS - seq)
            k = (uint32_t)(LW_ITEMS - seq);
        for (uint32_t i = 0; i < k; i++) {
            buf[i].seq = seq + i;
            buf[i].sum = fu_mix(seq + i);
        }
        while ((rc = shm_ring_push_n_spsc(&r, buf, k)) == -ENOSPC)
            fu_backoff(&spins);
        if (rc != 0)
            break;
        spins = 0;
        seq += k;
        if (shm_ring_needs_bell(&r)) {
            rc = shm_doorbell_ring(&d);
            rang++;
            dropped += rc == 1;
            if (rc < 0)
                break;
        }
        if (dly < 60)
            fu_spin_ns((uint64_t)(rand_r(&seed) % 2000));
        else if (dly < 95)
            fu_spin_ns(2000 + (uint64_t)(rand_r(&seed) % 18000));
        else
            fu_spin_ns(50000 + (uint64_t)(rand_r(&seed) % 50000));
    }
    ck_assert_uint_eq(seq, LW_ITEMS);
    ck_assert_int_eq(fu_wait(pid), 0);
    t0 = fu_now() - t0;
    printf("doorbell lost-wakeup (nanomsg): %llu hand-offs in %.2f s = "
           "%.2f M/s; consumer slept %llu times, %llu bells rung "
           "(%llu dropped as EAGAIN), %llu wakes, %llu idle timeouts, "
           "%llu lost\n",
           (unsigned long long)res->received, t0, res->received / t0 / 1e6,
           (unsigned long long)atomic_load(&r.sh->sleeps),
           (unsigned long long)rang, (unsigned long long)dropped,
           (unsigned long long)res->wakes, (unsigned long long)res->idle,
           (unsigned long long)res->lost);
    fflush(stdout);
    ck_assert_uint_eq(res->lost, 0);
    ck_assert_uint_eq(res->bad, 0);
    ck_assert_uint_eq(res->err, 0);
    ck_assert_uint_eq(res->received, LW_ITEMS);
    ck_assert_uint_eq(rang, atomic_load(&r.sh->bells));
    ck_assert_uint_gt(atomic_load(&r.sh->sleeps), 1000);
    shm_doorbell_close(&d);
    dir_done(dir);
    shm_segment_close(&s);
}
END_TEST

static Suite *
doorbell_suite(void)
{
    Suite *s = suite_create("nanomsg doorbells");
    TCase *tc;

    tc = tcase_create("names and limits");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_ring_never_blocks);
    tcase_add_test(tc, test_linger_timer);
    suite_add_tcase(s, tc);

    tc = tcase_create("parent and child");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_forked_child);
    tcase_add_test(tc, test_exec_child);
    suite_add_tcase(s, tc);

    tc = tcase_create("lost wake-up");
    tcase_set_timeout(tc, 50);
    tcase_add_test(tc, test_lost_wakeup_nanomsg);
    suite_add_tcase(s, tc);
    return s;
}

int
main(int argc, char **argv)
{
    SRunner *sr;
    int      failed;

    /* test_exec_child runs this binary again as the worker side. */
    if (argc == 5 && strcmp(argv[1], "--bell-child") == 0)
        return child_pong(argv[2], argv[3], atoi(argv[4]));
    sr = srunner_create(doorbell_suite());
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
