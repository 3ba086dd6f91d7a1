/*
 * worker/loopstat.c: the loop's counters in this worker's row
 * (worker/loopstat.h).
 *
 * Busy time is wall time from an iteration's first callback to its tick
 * (a request that arrived meanwhile waited that long to be read, a
 * response that long to leave, docs/architecture.md §4).  A step's cost
 * is CPU time, not wall time: preemption on a busy host does not count,
 * so it shows what the code makes the loop wait.
 *
 * Single writer of the row (this worker): relaxed loads and stores.
 */
#include "loopstat.h"

#include "proto/crypto.h"
#include "shm/layout.h"

static unsigned wk_loopstat_bucket(uint64_t us);
static uint64_t wk_loopstat_cpu_us(void);

/* Bucket b holds [2^b, 2^(b+1)) µs; 0 and 1 µs share bucket 0; the
 * last takes everything longer.  The highest bit set, not a loop over
 * the bits: every request is counted here. */
static unsigned
wk_loopstat_bucket(uint64_t us)
{
    unsigned b;

    if (us < 2)
        return 0;
    b = 63u - (unsigned)__builtin_clzll(us);
    return b < SHM_LAT_BUCKETS - 1 ? b : SHM_LAT_BUCKETS - 1;
}

/* This thread's CPU time in µs: a syscall, so only around RSA work. */
static uint64_t
wk_loopstat_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void
wk_loopstat_begin(struct wk_loopstat *ls, const struct wk_worker *w)
{
    ls->iter_t0 = w->now_ns;
    ls->iter_ops = ua_crypto_private_ops();
    ls->iter_stepped = false;
}

void
wk_loopstat_end(struct wk_loopstat *ls, struct wk_worker *w)
{
    struct shm_worker *row = w->row;
    uint64_t           us = (wk_loopstat_ns() - ls->iter_t0) / 1000;
    uint64_t           ops = ua_crypto_private_ops();

    wk_loopstat_add(&row->loop_iterations[wk_loopstat_bucket(us)], 1);
    wk_loopstat_add(&row->loop_busy_us, us);
    if (us > ls->stall_max_us) {
        ls->stall_max_us = us;
        atomic_store_explicit(&row->loop_stall_max_us, us,
                              memory_order_relaxed);
    }
    if (ops != ls->ops_seen) {
        ls->ops_seen = ops;
        atomic_store_explicit(&row->rsa_private_ops, ops,
                              memory_order_relaxed);
        atomic_store_explicit(&row->rsa_cpu_us,
                              ua_crypto_rsa_cpu_ns() / 1000u,
                              memory_order_relaxed);
        if (ops - ls->iter_ops > ls->iter_ops_max) {
            ls->iter_ops_max = ops - ls->iter_ops;
            atomic_store_explicit(&row->loop_rsa_ops_max, ls->iter_ops_max,
                                  memory_order_relaxed);
        }
    }
}

bool
wk_loopstat_busy(const struct wk_loopstat *ls)
{
    return ua_crypto_private_ops() != ls->iter_ops || ls->iter_stepped;
}

void
wk_loopstat_step_begin(struct wk_loopstat *ls, uint64_t *cpu0,
                       uint64_t *ops0)
{
    ls->iter_stepped = true;
    *cpu0 = wk_loopstat_cpu_us();
    *ops0 = ua_crypto_private_ops();
}

void
wk_loopstat_step_end(struct wk_loopstat *ls, struct wk_worker *w,
                     uint64_t cpu0, uint64_t ops0)
{
    uint64_t us;

    /* Published before the reply leaves (the tick would do it after);
     * the public-key operations of a step with none are published with
     * the next one that has one. */
    if (ua_crypto_private_ops() != ops0) {
        atomic_store_explicit(&w->row->rsa_private_ops,
                              ua_crypto_private_ops(), memory_order_relaxed);
        atomic_store_explicit(&w->row->rsa_cpu_us,
                              ua_crypto_rsa_cpu_ns() / 1000u,
                              memory_order_relaxed);
    }
    us = wk_loopstat_cpu_us() - cpu0;
    if (us > ls->rsa_cpu_max_us) {
        ls->rsa_cpu_max_us = us;
        atomic_store_explicit(&w->row->loop_rsa_cpu_max_us, us,
                              memory_order_relaxed);
    }
}

void
wk_loopstat_request(struct wk_worker *w, unsigned stat, uint64_t t0,
                    ua_status service_result)
{
    struct shm_worker *row = w->row;
    uint64_t           us = (wk_loopstat_ns() - t0) / 1000;

    if (stat >= SHM_SVC_MAX)
        stat = SHM_SVC_OTHER;
    wk_loopstat_add(&row->requests[stat], 1);
    wk_loopstat_add(&row->latency[stat][wk_loopstat_bucket(us)], 1);
    wk_loopstat_add(&row->latency_sum_us[stat], us);
    if (UA_STATUS_IS_BAD(service_result))
        wk_loopstat_add(&row->bad_requests, 1);
}
