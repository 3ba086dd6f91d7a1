/*
 * worker/loopstat.h: the loop's counters in this worker's row of the
 * worker table (shm/layout.h struct shm_worker; W: this worker, R: the
 * broker's /stats and /metrics): iterations and their busy time, RSA
 * private-key operations per iteration and CPU per step, requests
 * answered and their latency.
 *
 * This worker is the only writer of its row: a counter is a relaxed load
 * and a relaxed store, never a locked add.
 *
 * Single-threaded, on the worker's loop.
 */
#ifndef WK_LOOPSTAT_H
#define WK_LOOPSTAT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "proto/status_gen.h"
#include "worker.h"

struct wk_loopstat {
    uint64_t iter_t0;           /* ns: this iteration's start */
    uint64_t iter_ops;          /* private ops before it */
    bool     iter_stepped;      /* a step ran in it */
    uint64_t iter_ops_max;      /* the most one iteration did */
    uint64_t stall_max_us;      /* the longest iteration so far */
    uint64_t ops_seen;          /* ua_crypto_private_ops() shown */
    uint64_t rsa_cpu_max_us;    /* the most CPU of one step */
};

/* Add n to a counter of the row (single writer). */
static inline void
wk_loopstat_add(_Atomic uint64_t *p, uint64_t n)
{
    /* Single writer (this worker); the broker reads relaxed. */
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

static inline void
wk_loopstat_sub(_Atomic uint64_t *p, uint64_t n)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed)
                             - n, memory_order_relaxed);
}

/* Nanoseconds for per-request latency (vDSO, no syscall). */
static inline uint64_t
wk_loopstat_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An iteration begins (its first callback; w->now_ns just read). */
void wk_loopstat_begin(struct wk_loopstat *ls, const struct wk_worker *w);

/*
 * The iteration ends (the tick): its busy time, from the first callback
 * to the flush, goes to the row's loop_iterations histogram and
 * loop_stall_max_us; its RSA private-key operations to rsa_private_ops
 * and loop_rsa_ops_max.  One clock read.
 */
void wk_loopstat_end(struct wk_loopstat *ls, struct wk_worker *w);

/* Has this iteration done RSA work (a step, or a private-key operation)
 * already? */
bool wk_loopstat_busy(const struct wk_loopstat *ls);

/*
 * A step (RSA work or a slice of a password hash) begins: it is this
 * iteration's; *cpu0 and *ops0 for wk_loopstat_step_end.
 */
void wk_loopstat_step_begin(struct wk_loopstat *ls, uint64_t *cpu0,
                            uint64_t *ops0);

/*
 * After a step begun at CPU time cpu0 with ops0 private-key operations
 * done: its CPU time feeds loop_rsa_cpu_max_us; if it did any private-key
 * operation the row's rsa_private_ops is brought up to date.
 */
void wk_loopstat_step_end(struct wk_loopstat *ls, struct wk_worker *w,
                          uint64_t cpu0, uint64_t ops0);

/* Count one answered request of service stat (enum shm_svc) that arrived
 * at t0 (ns): requests, latency, bad_requests. */
void wk_loopstat_request(struct wk_worker *w, unsigned stat, uint64_t t0,
                         ua_status service_result);

#endif /* WK_LOOPSTAT_H */
