/*
 * shm/limits.c: server-wide budgets (see limits.h).
 *
 * used[k] only moves by CAS on take (so it never passes max however many
 * workers race) and by fetch_sub on give and reclaim (a unit given back is
 * one taken earlier, so it never goes below zero).  held is written by
 * one process at a time: the worker, then the broker after the reap.
 */
#include "limits.h"

#include <errno.h>
#include <stdatomic.h>

static uint32_t shm_limits_sub(_Atomic uint32_t *a, uint32_t n);

/* a -= n, saturating at 0 (a corrupt or repeated give cannot wrap). */
static uint32_t
shm_limits_sub(_Atomic uint32_t *a, uint32_t n)
{
    uint32_t cur = atomic_load_explicit(a, memory_order_relaxed);
    uint32_t d;

    do {
        d = n < cur ? n : cur;
    } while (!atomic_compare_exchange_weak_explicit(
        a, &cur, cur - d, memory_order_relaxed, memory_order_relaxed));
    return d;
}

int
shm_limits_take(struct shm_limits *l, unsigned worker, enum shm_limit_kind k,
                uint32_t n, uint32_t max)
{
    uint32_t cur;

    if (worker >= SHM_WORKERS_MAX || (unsigned)k >= SHM_LIM_KINDS)
        return -EINVAL;
    cur = atomic_load_explicit(&l->used[k], memory_order_relaxed);
    do {
        if (n > max || cur > max - n)
            return -ENOSPC;
    } while (!atomic_compare_exchange_weak_explicit(
        &l->used[k], &cur, cur + n, memory_order_relaxed,
        memory_order_relaxed));
    atomic_fetch_add_explicit(&l->w[worker].held[k], n,
                              memory_order_relaxed);
    return 0;
}

void
shm_limits_give(struct shm_limits *l, unsigned worker, enum shm_limit_kind k,
                uint32_t n)
{
    if (worker >= SHM_WORKERS_MAX || (unsigned)k >= SHM_LIM_KINDS)
        return;
    n = shm_limits_sub(&l->w[worker].held[k], n);
    shm_limits_sub(&l->used[k], n);
}

void
shm_limits_reclaim(struct shm_limits *l, unsigned worker)
{
    uint32_t n;

    if (worker >= SHM_WORKERS_MAX)
        return;
    for (unsigned k = 0; k < SHM_LIM_KINDS; k++) {
        n = atomic_exchange_explicit(&l->w[worker].held[k], 0,
                                     memory_order_relaxed);
        shm_limits_sub(&l->used[k], n);
    }
}

uint32_t
shm_limits_used(const struct shm_limits *l, enum shm_limit_kind k)
{
    if ((unsigned)k >= SHM_LIM_KINDS)
        return 0;
    return atomic_load_explicit(&((struct shm_limits *)l)->used[k],
                                memory_order_relaxed);
}

uint32_t
shm_limits_held(const struct shm_limits *l, unsigned worker,
                enum shm_limit_kind k)
{
    if (worker >= SHM_WORKERS_MAX || (unsigned)k >= SHM_LIM_KINDS)
        return 0;
    return atomic_load_explicit(&((struct shm_limits *)l)->w[worker].held[k],
                                memory_order_relaxed);
}
