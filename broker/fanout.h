/*
 * broker/fanout.h: the broker's end of the notification path
 * (docs/architecture.md §2, §3): value changes and events into blocks of
 * the shared pool, block handles onto every interested worker's
 * notification ring, lost marks for what could not be delivered, and the
 * workers' doorbells.  Record formats: shm/fanout.h.
 *
 *   bk_fanout_add()     a record (slot, DataValue) of a change whose
 *                       interest mask the value path loaded (broker/
 *                       value.c) into the block being filled; a full
 *                       block is flushed and another one taken
 *   bk_fanout_event()   an event record, to the workers with event
 *                       interest, the same way
 *   bk_fanout_flush()   publish the block to the union of its records'
 *                       masks (live workers only) and push its handle to
 *                       each of those workers' notification rings
 *   bk_fanout_lost_publish()  the lost marks (shm/fanout.h) of the
 *                       iteration, for the workers that missed a value
 *                       (pool exhausted, ring full, value larger than a
 *                       block)
 *   bk_fanout_bells()   ring a worker's doorbell only when it sleeps on a
 *                       ring we pushed to (its notification ring, or its
 *                       reply ring: the request drain says which)
 *
 * Nothing is ever lost silently: every value a worker with interest did
 * not get is counted (blocks_exhausted, ring_full, notifications_dropped
 * in /stats) and marked lost for it, and its monitored items report the
 * overflow.
 *
 * When a worker dies (broker/supervisor.c, after the reap, before the
 * respawn): bk_fanout_worker_dead() stops pushing to it, empties its
 * notification ring (shm_ring_reset_dead_consumer), drops its block
 * references (shm_blockpool_reclaim_worker), clears its interest bits and
 * lost marks; bk_fanout_worker_start() binds its doorbell again before
 * the fork.
 *
 * Broker only, single-threaded, on its event loop.  Allocates at init
 * only.
 */
#ifndef BK_FANOUT_H
#define BK_FANOUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "config.h"
#include "shm/blockpool.h"
#include "shm/doorbell.h"
#include "shm/fanout.h"
#include "shm/ring.h"
#include "shm/segment.h"
#include "shm/value.h"

struct bk_fanout;

/* The broker's side of one worker slot's notifications. */
struct bk_fanout_worker {
    struct bk_fanout    *f;
    unsigned             slot;
    struct shm_ring_ref  notif;         /* producer */
    struct shm_doorbell  bell;
    struct event         bell_ev;
    bool                 greeted;       /* its hello was answered */
    bool                 pushed_notif;  /* this iteration */
};

struct bk_fanout {
    struct event_base      *base;
    const struct bk_config *conf;
    struct shm_values       vals;       /* the slots' interest masks */
    unsigned                n;          /* worker slots with rings */
    uint64_t                up_mask;    /* live workers */
    struct shm_blockpool_ref pool;
    struct shm_fanout_ref   fo;
    struct shm_park        *park;       /* parked sessions, the change
                                         * log (NULL: none) */
    uint64_t                log_mask;   /* slots whose changes are logged:
                                         * the workers', not the
                                         * historian's (it parks no
                                         * session) */
    struct bk_fanout_worker w[SHM_WORKERS_MAX];
    /* The block being filled. */
    bool                    filling;
    struct shm_block_handle cur;
    struct shm_block       *cur_b;      /* its header (records go in place) */
    uint64_t                cur_mask;
    uint32_t               *cur_slots;  /* slots of its records */
    uint32_t                cur_n;
    uint32_t                cur_max;
    uint32_t                cur_events; /* event records in it */
    uint8_t                *rec;        /* one record's DataValue */
    uint32_t                rec_cap;
    uint64_t                lost_pending;   /* workers to tell */
    bool                    dry;        /* the pool was exhausted in this
                                           iteration: not probed again */
    /* A worker asleep with a promise to wake by a time (its next
     * publishing tick) gets no bell for blocks alone before then, while
     * fewer than defer_max handles wait in its ring (shm/ring.h
     * shm_ring_needs_bell_by). */
    uint32_t                defer_max;
    /* The feed's waits for backlogged workers (broker/feed.c, /stats). */
    uint64_t                feed_waits;
    uint64_t                feed_wait_ms;
    uint64_t                feed_wait_expired;
};

/* A counter of struct shm_fanout: single writer (the broker), readers
 * load relaxed. */
static inline void
bk_fanout_count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

/*
 * Attach the notification rings, the pool and the lost marks of seg for
 * c's workers (vals: the segment's value slots, for their interest masks)
 * and create the runtime directory (mode 0700) for the doorbells.  A
 * segment without a block pool leaves the fan-out off (n == 0) and
 * returns 0.  0, or -1 with a message in err.
 */
int bk_fanout_init(struct bk_fanout *f, const struct shm_segment *seg,
                   const struct shm_values *vals, struct event_base *base,
                   const struct bk_config *c, char *err, size_t errlen);

/* Close every doorbell and free the buffers. */
void bk_fanout_clear(struct bk_fanout *f);

/*
 * Before (re)spawning the worker of slot: bind its doorbell in the runtime
 * directory and count it live.  0 or -errno (logged by the caller).
 */
int bk_fanout_worker_start(struct bk_fanout *f, unsigned slot);

/* After the worker of slot was reaped (see the top comment). */
void bk_fanout_worker_dead(struct bk_fanout *f, unsigned slot);

/*
 * A record of slot's change into the change log (shm/park.h, when the
 * segment has parks) and into the block being filled, for the live
 * workers in mask (non-zero: the slot's interest bits, those a dead
 * worker left for its successor included): len bytes of encoded Variant
 * with m's status and timestamps, as the slot holds them now.  The value
 * path (broker/value.c) loads mask after the slot's store (its ordering
 * contract (1)).  A change that cannot be delivered is marked lost.
 */
void bk_fanout_add(struct bk_fanout *f, uint32_t slot, uint64_t mask,
                   const void *bytes, uint32_t len, const struct shm_value *m);

/*
 * An event record (shm/fanout.h SHM_FO_EVENT_SLOT; broker/event.h builds
 * one) to every live worker with event interest, in the block being
 * filled.  A worker it cannot reach (pool exhausted, record larger than
 * a block, ring full at flush) is counted and told (events_lost).  The
 * value path calls it (bk_value_event), after the changes before it.
 */
void bk_fanout_event(struct bk_fanout *f, const uint8_t *rec, uint32_t len);

/* Push the block being filled to its workers' notification rings. */
void bk_fanout_flush(struct bk_fanout *f);

/*
 * Is a live worker behind: has any notification ring at least half of
 * what the pool and the ring can hold (the smaller) pushed and not yet
 * taken?  A source that can wait (the feed, broker/feed.c) waits while
 * it is, rather than exhaust the pool: a value would then be lost for
 * every worker and an event for good.  A few loads per live worker.
 */
bool bk_fanout_backlogged(const struct bk_fanout *f);

/*
 * The lost marks of this iteration, after its block was pushed (fanout.c
 * contract (2)); an exhausted pool is probed again after it.
 */
void bk_fanout_lost_publish(struct bk_fanout *f);

/*
 * Ring the doorbell of every live worker that sleeps on a ring we pushed
 * to this iteration: its notification ring (as its promise to wake by a
 * time allows), or its reply ring when its bit is set in replies (the
 * request drain evaluated shm_ring_needs_bell on it).
 */
void bk_fanout_bells(struct bk_fanout *f, uint64_t replies);

/* Counters of struct shm_fanout that other parts of the broker keep. */
void bk_fanout_count_feed(struct bk_fanout *f, uint64_t values,
                          uint64_t events);

#endif /* BK_FANOUT_H */
