/*
 * broker/fanout.h: the broker's end of the fan-out (DESIGN §2, §3):
 * notification blocks out to the workers, Write requests in, their results
 * back.  Record formats: shm/fanout.h.
 *
 *   value change ──> bk_fanout_notify(): interest mask (read AFTER the
 *   (any source)     slot was written, full fence between) non-zero?
 *                    append (slot, DataValue) to the block being filled;
 *                    a full block is flushed and another one taken
 *                    (small changes of one Write record: masks loaded
 *                    after one fence for the record, bk_fanout_settle;
 *                    the Write fast path's point into the record
 *                    instead of being copied aside)
 *
 *   every loop iteration, before the broker may block (bk_fanout_prepare):
 *     1. drain every worker's request ring: apply each record's Writes
 *        (bk_write_apply_ops, broker/write.c), gather their results into
 *        that worker's reply outbox (consecutive operations of one
 *        request share a record);
 *     2. flush the block: publish it to the union of its records' interest
 *        masks (live workers only), push its handle to each of those
 *        workers' notification rings;
 *     3. push the reply outboxes;
 *     4. publish lost marks (shm/fanout.h) for the workers that missed a
 *        value (pool exhausted, ring full, value larger than a block);
 *     5. ring a worker's doorbell only when shm_ring_needs_bell() says it
 *        sleeps on a ring we pushed to;
 *     6. mark every request ring sleeping; block only if all stayed empty.
 *        After an iteration that took several requests (or one while
 *        lingering): linger instead (leave the rings unmarked, block at
 *        most fanout.linger_us, look again).
 *
 * Nothing is ever lost silently: every value a worker with interest did
 * not get is counted (blocks_exhausted, ring_full, notifications_dropped in
 * /stats) and marked lost for it, and its monitored items report the
 * overflow.  Replies are never dropped: when a worker's reply ring is full
 * the broker stops taking that worker's requests until it has room.
 *
 * When a worker dies (broker/supervisor.c, after the reap, before the
 * respawn): bk_fanout_worker_dead() stops pushing to it, empties its rings
 * (shm_ring_reset_dead_consumer), drops its block references
 * (shm_blockpool_reclaim_worker), clears its interest bits and lost marks;
 * bk_fanout_worker_start() binds its doorbell again before the fork.
 *
 * Broker only, single-threaded, on its event loop.  Allocates at init only.
 */
#ifndef BK_FANOUT_H
#define BK_FANOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "config.h"
#include "proto/arena.h"
#include "proto/types.h"
#include "shm/blockpool.h"
#include "shm/doorbell.h"
#include "shm/fanout.h"
#include "shm/ring.h"
#include "shm/value.h"

/* addrspace.h includes this header (for bk_addrspace_write_small). */
struct bk_addrspace;
struct bk_fanout;
struct bk_write_result;

/* The broker's side of one worker slot. */
struct bk_fanout_worker {
    struct bk_fanout    *f;
    unsigned             slot;
    struct shm_ring_ref  req;           /* consumer */
    struct shm_ring_ref  reply;         /* producer */
    struct shm_ring_ref  notif;         /* producer */
    struct shm_doorbell  bell;
    struct event         bell_ev;
    bool                 up;            /* alive: push to it */
    bool                 greeted;       /* its hello was answered */
    bool                 pushed_notif;  /* this iteration */
    bool                 pushed_reply;
    bool                 stuck;         /* reply outbox full: wait */
    uint32_t             gen;           /* +1 per death: a call's answer
                                         * goes only to the worker that
                                         * asked (bk_fanout_call_reply) */
    /* Results not pushed yet: whole SHM_FO_RESULTS records at slot
     * boundaries; the last one (at open_off) may still grow. */
    uint8_t             *out;
    uint32_t             out_cap;
    uint32_t             out_len;       /* closed records */
    uint32_t             open_off;      /* UINT32_MAX: no open record */
    uint32_t             open_id;       /* the open record: its request, */
    uint32_t             open_first;    /* first operation, */
    uint32_t             open_count;    /* results, */
    uint32_t             open_len;      /* bytes so far, */
    uint32_t             open_max;      /* and the most it may take */
};

/*
 * A change of a client Write waiting for its interest mask: the Writes of
 * one request record are stored first and their masks loaded after one
 * fence for all of them (fanout.c, contract (1)).  Small values only.
 * bytes points at copy, or, for the Write fast path's changes
 * (bk_fanout_notify_small), at the Variant in the request record itself,
 * which stays as it is until the record's changes are settled.
 */
#define BK_FANOUT_PEND_BYTES 16
#define BK_FANOUT_PEND_MAX   256

struct bk_fanout_pend {
    uint32_t         slot;
    uint32_t         len;
    const uint8_t   *bytes;             /* len bytes of encoded Variant */
    struct shm_value m;
    uint8_t          copy[BK_FANOUT_PEND_BYTES];
};

struct bk_fanout {
    struct bk_addrspace    *as;
    struct event_base      *base;
    const struct bk_config *conf;
    unsigned                n;          /* worker slots with rings */
    uint64_t                up_mask;    /* live workers */
    struct shm_blockpool_ref pool;
    struct shm_fanout_ref   fo;
    struct bk_fanout_worker w[SHM_WORKERS_MAX];
    /* The block being filled. */
    bool                    filling;
    struct shm_block_handle cur;
    uint64_t                cur_mask;
    uint32_t               *cur_slots;  /* slots of its records */
    uint32_t                cur_n;
    uint32_t                cur_max;
    bool                    cur_events; /* it holds event records */
    uint8_t                *rec;        /* one record's DataValue */
    uint32_t                rec_cap;
    uint64_t                lost_pending;   /* workers to tell at flush */
    /* Changes stored, masks not loaded yet (only while defer is set). */
    bool                    defer;
    uint32_t                pend_n;
    struct bk_fanout_pend  *pend;       /* [BK_FANOUT_PEND_MAX] */
    /* Applying Writes. */
    int64_t                 now;        /* DateTime of this iteration */
    struct ua_arena         arena;
    uint8_t                *arena_buf;
    size_t                  arena_cap;
    uint8_t                *in;         /* one request record */
    uint32_t                in_cap;
    struct bk_write_result *res;        /* its operations' results */
    uint32_t                res_max;
    uint32_t                res_need;   /* reply outbox room one request
                                           record's results may take */
    struct event            retry;      /* a stuck worker: look again */
    /* Lingering (fanout.linger_us): after an iteration that took requests
     * the request rings are not marked sleeping; the loop blocks at most
     * linger_us, and only an iteration that found none marks them. */
    struct event            linger;     /* on linger_fd */
    int                     linger_fd;  /* timerfd, -1: no lingering */
    uint32_t                linger_us;
    bool                    linger_armed;
    bool                    lingering;  /* the last iteration lingered */
    /* A worker asleep with a promise to wake by a time (its next
     * publishing tick) gets no bell for blocks alone before then, while
     * fewer than defer_max handles wait in its ring (shm/ring.h
     * shm_ring_needs_bell_by). */
    uint32_t                defer_max;
    /* Method calls (SHM_FO_CALL records): handed to on_call (the methods
     * module, broker/methods.c; NULL: answered BadNotImplemented); its
     * answers it could not queue yet are retried by on_flush at the start
     * of every iteration.  The counters are its own, for /stats. */
    void                  (*on_call)(void *arg, unsigned worker,
                                     const uint8_t *rec, uint32_t len);
    void                  (*on_flush)(void *arg);
    void                   *call_arg;
    bool                    calling;    /* inside on_call */
    struct {
        uint64_t calls;                 /* forwarded methods received */
        uint64_t answered;              /* answers from the owner taken */
        uint64_t timeouts;              /* BadTimeout given */
        uint64_t no_owner;              /* refused: no owner ever came */
        uint64_t errors;                /* owner answers refused */
        uint64_t late;                  /* answers after the timeout */
    } mstat;
};

/*
 * Attach the rings, the pool and the lost marks of as's segment for c's
 * workers, create the runtime directory (mode 0700) for the doorbells, and
 * announce value changes from now on (as->fanout = f).  A segment without
 * rings leaves the fan-out off (n == 0) and returns 0.  0, or -1 with a
 * message in err.
 */
int bk_fanout_init(struct bk_fanout *f, struct bk_addrspace *as,
                   struct event_base *base, const struct bk_config *c,
                   char *err, size_t errlen);

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
 * A value change of slot: len bytes of encoded Variant with m's status and
 * timestamps, already stored (bk_addrspace_write_value calls this, and
 * nothing else should).  While the broker applies a request record
 * (f->defer) a small change is copied aside and its mask loaded with the
 * record's others after one fence; anything else first settles those, so
 * the records of a slot keep their order.
 */
void bk_fanout_notify(struct bk_fanout *f, uint32_t slot, const void *bytes,
                      uint32_t len, const struct shm_value *m);

/*
 * bk_fanout_notify() of bk_addrspace_write_small()'s change, inline: len
 * (1..16) bytes, status Good, the two timestamps, no picoseconds.  Only
 * the deferred case (a request record being applied, room in the pending
 * array): then true, and the change waits in the array as
 * bk_fanout_notify() would have put it there, except that its bytes are
 * not copied: they must stay as they are until the record's changes are
 * settled (they are the record's own).  false: nothing done, call
 * bk_fanout_notify().
 */
static inline __attribute__((always_inline)) bool
bk_fanout_notify_small(struct bk_fanout *f, uint32_t slot,
                       const uint8_t *bytes, uint32_t len, int64_t source_ts,
                       int64_t server_ts)
{
    struct bk_fanout_pend *p;

    /* defer is set only by the Write path of an initialised fan-out,
     * which has its pending array. */
    if (!f->defer || f->pend_n >= BK_FANOUT_PEND_MAX
        || len > BK_FANOUT_PEND_BYTES)
        return false;
    p = &f->pend[f->pend_n++];
    p->slot = slot;
    p->len = len;
    p->bytes = bytes;
    p->m.status = 0;                    /* Good */
    p->m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    p->m.source_ts = source_ts;
    p->m.server_ts = server_ts;
    p->m.source_ps = 0;
    p->m.server_ps = 0;
    p->m.len = len;
    return true;
}

/*
 * The work of one iteration, before the loop may block (top comment);
 * now is the DateTime for Writes.  true when every request ring stayed
 * empty and is marked sleeping; false when more work is waiting.
 */
bool bk_fanout_prepare(struct bk_fanout *f, int64_t now);

/* After the iteration: clear the sleeping marks. */
void bk_fanout_wake(struct bk_fanout *f);

/*
 * The answer to method op of pending Call id of worker (whose generation
 * was gen when it asked): a SHM_FO_CALL_RESULT into its reply outbox,
 * pushed with the iteration's replies.  0; -EPIPE when that worker is
 * gone (dropped); -ENOSPC when the outbox has no room now (retry; never
 * for a result without outputs given from inside on_call);
 * -EMSGSIZE when the record is larger than the reply ring.
 */
int bk_fanout_call_reply(struct bk_fanout *f, unsigned worker, uint32_t gen,
                         uint32_t id, uint32_t op, ua_status st,
                         const uint8_t *out, uint32_t out_len, uint32_t nout);

/*
 * An event record (shm/fanout.h SHM_FO_EVENT_SLOT; broker/event.h builds
 * one) to every live worker with event interest, in the block being
 * filled.  A worker it cannot reach (pool exhausted, record larger than
 * a block, ring full at flush) is counted and told (events_lost).
 */
void bk_fanout_event(struct bk_fanout *f, const uint8_t *rec, uint32_t len);

/* Flush the block being filled now (tests; prepare does it). */
void bk_fanout_flush(struct bk_fanout *f);

#endif /* BK_FANOUT_H */
