/*
 * worker/timerheap.h: a min-heap of timers, each an id (0..cap-1) and the
 * time it is due (ms): insert or move one, remove one, look at the
 * earliest.  The subscriptions keep their publishing timers in one
 * (worker/sub.c), so one libevent timer serves all of them.
 *
 * A timer's position is kept by id, so moving or removing one is
 * O(log n) without a search.  Fixed capacity, allocated once; no
 * allocation afterwards.  Single-threaded.
 */
#ifndef WK_TIMERHEAP_H
#define WK_TIMERHEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "worker.h"

#define WK_TIMERHEAP_NONE UINT32_MAX

struct wk_timerheap_ent {
    uint64_t due;
    uint32_t id;
};

struct wk_timerheap {
    struct wk_timerheap_ent *h;     /* [cap]: the heap, h[0] earliest */
    uint32_t                *pos;   /* [cap]: id's index in h, or NONE */
    uint32_t                 n;
    uint32_t                 cap;
};

/* Room for ids 0..cap-1.  0 or -ENOMEM; *allocs counts the allocations. */
int wk_timerheap_init(struct wk_timerheap *th, struct wk_worker *w,
                      uint32_t cap, uint64_t *allocs);

void wk_timerheap_clear(struct wk_timerheap *th, struct wk_worker *w);

/* Timer id is due at `due`: inserted, or moved where it belongs. */
void wk_timerheap_set(struct wk_timerheap *th, uint32_t id, uint64_t due);

/* Timer id is no more (nothing when it is not in the heap). */
void wk_timerheap_del(struct wk_timerheap *th, uint32_t id);

/* The earliest time any timer is due, UINT64_MAX when there is none. */
static inline uint64_t
wk_timerheap_next(const struct wk_timerheap *th)
{
    return th->n > 0 ? th->h[0].due : UINT64_MAX;
}

/* The id of the earliest timer (th->n > 0). */
static inline uint32_t
wk_timerheap_top(const struct wk_timerheap *th)
{
    return th->h[0].id;
}

#endif /* WK_TIMERHEAP_H */
