/*
 * worker/link.h: the worker's end of the shared-memory link to the broker
 * (docs/architecture.md §2, §3): the doorbell, the request ring (records
 * out), the reply ring (answers back) and the notification ring (block
 * handles of value changes and events).  Record formats: shm/fanout.h.
 *
 * A pure transport: it moves records and calls the handler registered for
 * each kind; it knows no service and no subscription.
 *
 *   outbox ----push----> request ring ---------> broker
 *   (worker/outbox.h: Writes, Calls, Events built by the services)
 *
 *   reply ring --------> handler of the record's kind
 *                        (wk_link_on_reply: SHM_FO_RESULTS by the Write
 *                        service, SHM_FO_CALL_RESULT by the Call service)
 *
 *   notification ring -> blocks -> struct wk_link_notify (registered by
 *                        the subscriptions: values, events, losses, the
 *                        time of a block, the promise to wake)
 *
 * Every loop iteration, before the loop may block (an idle hook of
 * worker/loop.h), the link drains the notification ring: it opens each
 * block, hands every record to the notify handlers, and releases the
 * block at once (a slow client never holds a block; whatever a monitored
 * item needs is copied out in the handler).  It then drains the reply
 * ring, looks at the per-slot "lost" marks the broker set for us (below),
 * and arms the doorbell protocol on both inbound rings.
 *
 * ---------------------------------------------------------------------
 * The notify handlers (struct wk_link_notify; arg is the registrant's):
 *
 * value(arg, slot, dv, len)
 *     A value change of value slot `slot` (struct shm_node.u.var.slot, the
 *     index the interest masks use) reached this worker because our
 *     interest bit was set on it.  dv[len] is the encoded DataValue
 *     (Part 6 §5.2.2.17) exactly as the broker stored it: value, status
 *     (omitted when Good), source and server timestamps; copy what you
 *     need, it is gone when the call returns.  Called in the broker's
 *     order for any one slot (and across slots, in the order the broker
 *     applied them), only for slots our interest bit is set on at the
 *     time.  The server timestamps of one slot strictly increase.  Never
 *     called re-entrantly, never from a signal.
 *
 * overflow(arg, slot)
 *     One or more value changes of `slot` were NOT delivered to this worker
 *     (the broker's block pool was exhausted or our notification ring was
 *     full; counted in /stats).  The monitored items on `slot` must report
 *     it the way the spec reports a queue overflow (Part 4 §5.12.1.5: the
 *     Overflow InfoBit, 0x0480 in the StatusCode's low word, on the value
 *     that follows the gap).  The slot itself holds the newest value: read
 *     it and queue that one with the bit, so an item never stays on a
 *     stale value.  Called only after the notification ring was drained,
 *     so no block pushed before the loss is still in flight; but a block
 *     of the broker's current iteration may still bring values up to and
 *     including the one read here: drop every later record of the slot
 *     whose server timestamp is not newer than that value's.  Only for
 *     slots our interest bit is set on.
 *
 * event(arg, rec, len)
 *     An event record (shm/fanout.h SHM_FO_EVENT_SLOT) reached this worker
 *     (its event-interest bit was set); rec[len] is gone when it returns.
 *
 * events_lost(arg)
 *     The broker could not deliver one or more events to us (reported
 *     after the ring was drained, like overflow).
 *
 * time(arg, ms)
 *     The records that follow, until the next call, were applied by the
 *     broker at ms (CLOCK_MONOTONIC ms, at or before w->now_ms); 0 after a
 *     drain: from then on, now.  Sampling intervals count from it, not
 *     from when the worker drained the block, which may be later (below).
 *
 * wake_by(arg)
 *     The time (CLOCK_MONOTONIC ms) by which this worker wakes anyway and
 *     drains its notification ring with wk_link_drain() before anything
 *     of its subscriptions is due: no subscription publishes before it.
 *     0: no such time.  Asked before each sleep; the broker then leaves
 *     blocks alone (no bell) until that time (shm_ring_needs_bell_by),
 *     so a worker whose subscriptions publish every 100 ms wakes for its
 *     publishing ticks, not for every block in between.
 *
 * Interest bits (docs/architecture.md §2 "no lost update on subscribe"):
 * set yours with shm_interest_set() BEFORE reading the initial value
 * (shm_value_read); clear it with shm_interest_clear() when the last item
 * on the slot goes.  Both are seq_cst, the broker reads the mask after it
 * updated the slot with a full fence in between.
 * ---------------------------------------------------------------------
 *
 * Requests: a service builds its records in the outbox (l->out) and calls
 * wk_link_push(), which pushes what fits now, each record all or nothing
 * (what does not fit waits in the outbox, in order, for the next
 * iteration); the broker is rung at the end of the iteration, and only if
 * it sleeps.
 *
 * Single-threaded, on the worker's loop.  No allocation after
 * wk_link_init().
 */
#ifndef WK_LINK_H
#define WK_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "loop.h"
#include "outbox.h"
#include "shm/blockpool.h"
#include "shm/doorbell.h"
#include "shm/fanout.h"
#include "shm/ring.h"
#include "worker.h"

#define WK_LINK_DRAIN_MAX 1024      /* block handles per idle-hook call */
#define WK_LINK_KINDS     8         /* record kinds (enum shm_fo_kind) */

/* The notification ring's handlers (see the top comment). */
struct wk_link_notify {
    void     (*value)(void *arg, uint32_t slot, const uint8_t *dv,
                      uint32_t len);
    void     (*overflow)(void *arg, uint32_t slot);
    void     (*event)(void *arg, const uint8_t *rec, uint32_t len);
    void     (*events_lost)(void *arg);
    void     (*time)(void *arg, uint64_t ms);
    uint64_t (*wake_by)(void *arg);
};

/* A reply record of one kind: rec[len], its header checked (kind, slots,
 * length); gone when the handler returns. */
typedef void (*wk_link_reply_fn)(void *arg, const uint8_t *rec,
                                 uint32_t len);

struct wk_link_reply {
    wk_link_reply_fn fn;
    void            *arg;
};

struct wk_link {
    struct wk_worker         *w;
    bool                      on;           /* the segment has our rings */
    uint64_t                  bit;          /* 1 << slot */
    struct shm_ring_ref       req;          /* producer */
    struct shm_ring_ref       reply;        /* consumer */
    struct shm_ring_ref       notif;        /* consumer */
    struct shm_blockpool_ref  pool;
    struct shm_fanout_ref     fo;
    struct shm_doorbell       bell;
    struct event              bell_ev;
    struct event              retry_ev;     /* outbox waiting for room */
    uint64_t                  lost_seen;
    uint64_t                  events_lost_seen; /* shm events_lost */
    bool                      bell_owed;    /* pushed since the last bell */
    /* Lingering on the reply ring (fanout.linger_us): see link.c. */
    struct event              linger_ev;    /* on linger_fd */
    int                       linger_fd;    /* timerfd, -1: no lingering */
    uint32_t                  linger_us;
    bool                      linger_armed;
    uint32_t                  inflight;     /* requests with the broker,
                                             * kept by their services
                                             * (wk_link_inflight) */
    /* The handlers. */
    struct wk_link_notify     notify;
    void                     *notify_arg;
    struct wk_link_reply      reply_fn[WK_LINK_KINDS];
    /* Request records not pushed yet. */
    struct wk_outbox          out;
    /* Reply records and block handles popped. */
    uint8_t                  *in;
    uint32_t                  in_cap;
    struct shm_block_handle  *handles;      /* [WK_LINK_DRAIN_MAX] */
};

/*
 * Attach the rings, the pool and the lost marks of this worker's slot,
 * connect the doorbell (after exec, docs/architecture.md §1; the broker
 * bound it before forking us), register the idle hook on the loop.  A
 * segment without rings leaves the link off (l->on false; Write then
 * answers BadServiceUnsupported) and returns 0.  0 or -errno (the worker
 * exits 2).
 */
int wk_link_init(struct wk_link *l, struct wk_worker *w, struct wk_loop *lp);

/* Close the doorbell and free the buffers. */
void wk_link_clear(struct wk_link *l);

/* Is the link up (the segment has our rings)? */
static inline bool
wk_link_on(const struct wk_link *l)
{
    return l != NULL && l->on;
}

/* Register the notification ring's handlers (one set; arg theirs). */
void wk_link_set_notify(struct wk_link *l, const struct wk_link_notify *n,
                        void *arg);

/* Register the handler of reply records of kind (enum shm_fo_kind).
 * 0; -EINVAL for a kind outside the table. */
int wk_link_on_reply(struct wk_link *l, uint16_t kind, wk_link_reply_fn fn,
                     void *arg);

/*
 * Drain the notification ring now (the publishing timer, before it
 * publishes: blocks whose bell the broker deferred are queued first).
 */
void wk_link_drain(struct wk_link *l);

/*
 * Push the outbox: all of it in one batch when it fits (one tail store),
 * else record by record as far as the ring has room (each record all or
 * nothing); the rest waits, in order, for the next iteration.
 */
void wk_link_push(struct wk_link *l);

/* d requests sent to (+1) or answered by (-1) the broker: while two or
 * more wait, the link may linger for their answers (link.c). */
static inline void
wk_link_inflight(struct wk_link *l, int d)
{
    l->inflight += (uint32_t)d;
}

/*
 * Send an event record (shm/fanout.h SHM_FO_EVENT_SLOT format) of ours to
 * the broker, which fans it out like any event (a SHM_FO_EVENT request
 * record).  0; -ENOTCONN without rings (l NULL or off); -EMSGSIZE larger
 * than the ring; -ENOSPC when the outbox is full (the event is lost:
 * counted by the caller).
 */
int wk_link_send_event(struct wk_link *l, const uint8_t *rec, uint32_t len);

/* Set (on) or clear this worker's event-interest bit (shm/fanout.h);
 * nothing without rings. */
void wk_link_event_interest(struct wk_link *l, bool on);

#endif /* WK_LINK_H */
