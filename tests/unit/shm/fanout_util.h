/*
 * tests/unit/shm/fanout_util.h: helpers shared by check_ring.c,
 * check_blockpool.c and check_doorbell.c (header-only: each suite is its
 * own binary).  Checksummed records, back-off for spinning processes on
 * two cores, reaping children, a monotonic clock.
 */
#ifndef TESTS_FANOUT_UTIL_H
#define TESTS_FANOUT_UTIL_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* splitmix64: the payload and checksum generator. */
static inline uint64_t
fu_mix(uint64_t x)
{
    x += UINT64_C(0x9E3779B97F4A7C15);
    x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* FNV-1a over n bytes. */
static inline uint64_t
fu_fnv(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t       h = UINT64_C(0xCBF29CE484222325);

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(0x100000001B3);
    return h;
}

static inline double
fu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void
fu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/*
 * Back off while the peer is behind: spin 1, 2, 4 ... 512 pauses, then
 * yield (two cores, often three processes).  *spins counts consecutive waits; reset it to 0
 * after progress.
 */
static inline void
fu_backoff(unsigned *spins)
{
    if (*spins < 10) {
        /* Exponential: a retry reads the peer's line, so retry rarely. */
        for (unsigned i = 0; i < (1u << *spins); i++)
            fu_relax();
        ++*spins;
    } else {
        sched_yield();
    }
}

/* Busy-wait about `ns` nanoseconds (no syscall, so no sleep). */
static inline void
fu_spin_ns(uint64_t ns)
{
    double end = fu_now() + (double)ns * 1e-9;

    while (fu_now() < end)
        fu_relax();
}

/*
 * fork() for test children that spin: the child is killed with SIGKILL
 * when the test process dies (a failed assertion, Check's timeout), so no
 * orphan keeps spinning on a full or empty ring.  Survives exec.
 */
static inline pid_t
fu_fork(void)
{
    pid_t parent = getpid();
    pid_t pid = fork();

    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != parent)
            _exit(99);
    }
    return pid;
}

/* Wait for pid; its exit status, or 128 + signal. */
static inline int
fu_wait(pid_t pid)
{
    int st;

    while (waitpid(pid, &st, 0) == -1)
        if (errno != EINTR)
            return 254;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 255;
}

#endif /* TESTS_FANOUT_UTIL_H */
