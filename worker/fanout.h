/*
 * worker/fanout.h: the worker's end of the fan-out (DESIGN §2, §3): the
 * doorbell to the broker, the request ring (Writes out), the reply ring
 * (their answers back) and the notification ring (block handles of value
 * changes).  Record formats: shm/fanout.h.
 *
 * Every loop iteration, before the loop may block (an idle hook of
 * worker/conn.c), wk_fanout drains the notification ring: it opens each
 * block, hands every record to wk_fanout_on_value(), and releases the
 * block at once (DESIGN "Blocks return": a slow client never holds a
 * block; whatever a monitored item needs is copied out in the callback).
 * It then drains the reply ring (each reply completes one pending Write),
 * looks at the per-slot "lost" marks the broker set for us (below), and
 * arms the doorbell protocol on both inbound rings.
 *
 * ---------------------------------------------------------------------
 * The contract with the subscriptions code (worker/sub*.c and
 * worker/monitem*.c implement the two functions below; worker/fanout.c
 * holds weak no-op defaults, so the worker links without them):
 *
 * wk_fanout_on_value(w, slot, dv, len)
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
 * wk_fanout_on_overflow(w, slot)
 *     One or more value changes of `slot` were NOT delivered to this worker
 *     (the broker's block pool was exhausted or our notification ring was
 *     full; counted in /stats).  The monitored items on `slot` must report
 *     it the way the spec reports a queue overflow (Part 4 §5.12.1.5: the
 *     Overflow InfoBit, 0x0480 in the StatusCode's low word, on the value
 *     that follows the gap).  The slot itself holds the newest value: read
 *     it with wk_fanout_current() and queue that one with the bit, so an
 *     item never stays on a stale value.  Called only after the
 *     notification ring was drained, so no block pushed before the loss
 *     is still in flight; but a block of the broker's current iteration
 *     may still bring values up to and including the one read here: drop
 *     every later record of the slot whose server timestamp is not newer
 *     than that value's.  Only for slots our interest bit is set on.
 *
 * wk_fanout_on_time(w, ms)
 *     The records that follow, until the next call, were applied by the
 *     broker at ms (CLOCK_MONOTONIC ms, at or before w->now_ms); 0 after a
 *     drain: from then on, now.  Sampling intervals count from it, not
 *     from when the worker drained the block, which may be later (below).
 *
 * wk_fanout_wake_by(w)
 *     The time (CLOCK_MONOTONIC ms) by which this worker wakes anyway and
 *     drains its notification ring with wk_fanout_drain() before anything
 *     of its subscriptions is due: no subscription publishes before it.
 *     0: no such time.  Asked before each sleep; the broker then leaves
 *     blocks alone (no bell) until that time (shm_ring_needs_bell_by),
 *     so a worker whose subscriptions publish every 100 ms wakes for its
 *     publishing ticks, not for every block in between.
 *
 * Interest bits (DESIGN §2 "no lost update on subscribe"): set yours with
 * shm_interest_set() BEFORE reading the initial value (shm_value_read or
 * wk_fanout_current); clear it with shm_interest_clear() when the last
 * item on the slot goes.  Both are seq_cst, the broker reads the mask
 * after it updated the slot with a full fence in between.
 * ---------------------------------------------------------------------
 *
 * Writes (worker/svc_write.c): wk_fanout_write_begin() reserves a pending
 * Write; the caller adds each WriteValue (they go into one request record,
 * or more when they do not fit in a ring) or answers it itself; _commit
 * pushes the records, each all or nothing (what does not fit waits in the
 * outbox, in order, for the next iteration); the broker is rung at the
 * end of the iteration, and only if it sleeps.  When the last result
 * arrives the WriteResponse is sent with wk_conn_respond().
 *
 * Single-threaded, on the worker's loop.  No allocation after
 * wk_fanout_init().
 */
#ifndef WK_FANOUT_H
#define WK_FANOUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "conn.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "shm/blockpool.h"
#include "shm/doorbell.h"
#include "shm/fanout.h"
#include "shm/ring.h"
#include "worker.h"

/* --- implemented by the subscriptions code (weak no-ops in fanout.c) -- */

void wk_fanout_on_value(struct wk_worker *w, uint32_t slot,
                        const uint8_t *dv, uint32_t len);
void wk_fanout_on_overflow(struct wk_worker *w, uint32_t slot);
void wk_fanout_on_time(struct wk_worker *w, uint64_t ms);
uint64_t wk_fanout_wake_by(struct wk_worker *w);
/*
 * An event record (shm/fanout.h SHM_FO_EVENT_SLOT) reached this worker
 * (its event-interest bit was set); rec[len] is gone when it returns.
 * wk_fanout_on_events_lost: the broker could not deliver one or more
 * events to us (after the ring was drained, like on_overflow).
 */
void wk_fanout_on_event(struct wk_worker *w, const uint8_t *rec,
                        uint32_t len);
void wk_fanout_on_events_lost(struct wk_worker *w);

/* --- for the subscriptions code ------------------------------------- */

/*
 * Send an event record (shm/fanout.h SHM_FO_EVENT_SLOT format) of ours to
 * the broker, which fans it out like any event (a SHM_FO_EVENT request
 * record).  0; -ENOTCONN without rings; -EMSGSIZE larger than the ring;
 * -ENOSPC when the outbox is full (the event is lost: counted by the
 * caller).
 */
int wk_fanout_send_event(struct wk_worker *w, const uint8_t *rec,
                         uint32_t len);

/* Set (on) or clear this worker's event-interest bit (shm/fanout.h). */
void wk_fanout_event_interest(struct wk_worker *w, bool on);

/*
 * The current value of slot, encoded as a DataValue like a record (value,
 * status, both timestamps) into buf[cap]; *len its size.  0; -ENOSPC when
 * cap is too small (*len says how much); -EAGAIN when the slot stayed busy
 * (retry next iteration); -EINVAL for a bad slot.
 */
int wk_fanout_current(struct wk_worker *w, uint32_t slot, uint8_t *buf,
                      size_t cap, size_t *len);

/* --- the Write path (worker/svc_write.c) ----------------------------- */

#define WK_FANOUT_DRAIN_MAX 1024    /* block handles per idle-hook call */

/* One Write in flight: its answer-to-be. */
struct wk_fanout_write {
    struct wk_conn_ref ref;
    uint32_t           id;          /* index | sequence (15 bits) << 16;
                                     * 0 = free */
    uint32_t           n;           /* operations */
    uint32_t           left;        /* results still to come */
    uint32_t           next_free;   /* free list (index), UINT32_MAX end */
    ua_status         *results;     /* [conf->max_nodes_per_write] */
};

/*
 * One Call in flight with methods forwarded to the broker (its method
 * owner answers them, broker/methods.c): the CallResponse being built, in
 * its own arena (conf->max_call_bytes), so the results the worker made
 * itself and the owner's output arguments outlive the request's arena.
 */
struct wk_fanout_call {
    struct wk_conn_ref            ref;
    uint32_t                      id;       /* index | sequence << 16;
                                             * 0 = free */
    uint32_t                      n;        /* methods of the request */
    uint32_t                      left;     /* forwarded, not answered */
    uint32_t                      next_free;
    struct ua_call_method_result *results;  /* [n], in arena */
    uint32_t                     *methods;  /* [n] node index, in arena */
    struct ua_arena               arena;    /* over buf */
    uint8_t                      *buf;
};

/* How a finished Call is answered (tests replace wk_conn_respond). */
typedef int (*wk_fanout_respond_fn)(struct wk_worker *w,
                                    const struct wk_conn_ref *ref,
                                    const struct ua_type *t, void *resp);

struct wk_fanout {
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
    /* Lingering on the reply ring (fanout.linger_us): see fanout.c. */
    struct event              linger_ev;    /* on linger_fd */
    int                       linger_fd;    /* timerfd, -1: no lingering */
    uint32_t                  linger_us;
    bool                      linger_armed;
    uint32_t                  inflight;     /* Writes sent to the broker */
    /* Pending Writes: a fixed pool of conf->pending_writes. */
    struct wk_fanout_write   *writes;
    uint32_t                  nwrites;
    uint32_t                  free_write;   /* index, UINT32_MAX: none */
    uint16_t                  write_seq;    /* 1..32767 */
    /* Pending Calls: a fixed pool of conf->pending_calls. */
    struct wk_fanout_call    *calls;
    uint32_t                  ncalls;
    uint32_t                  free_call;    /* index, UINT32_MAX: none */
    uint16_t                  call_seq;     /* 1..32767 */
    uint32_t                  call_bytes;   /* each one's arena */
    wk_fanout_respond_fn      respond;      /* NULL: wk_conn_respond */
    /* Request records not pushed yet (whole records, in order). */
    uint8_t                  *outbox;
    uint32_t                  outbox_cap;   /* bytes: the ring's */
    uint32_t                  outbox_len;
    uint32_t                  open_off;     /* the record still growing,
                                             * UINT32_MAX: none */
    uint32_t                  open_id;      /* its pending Write */
    uint32_t                  open_len;     /* its bytes so far */
    uint32_t                  open_nops;    /* its operations so far */
    uint32_t                  open_nslots;  /* its ring slots so far */
    uint32_t                  slot_size;    /* request ring slots */
    /* Reply records and handles popped, DataValue encoding. */
    uint8_t                  *in;
    uint32_t                  in_cap;
    struct shm_block_handle  *handles;      /* [WK_FANOUT_DRAIN_MAX] */
    uint8_t                  *scratch;
    uint32_t                  scratch_cap;
};

/*
 * Attach the rings, the pool and the lost marks of this worker's slot,
 * connect the doorbell (after exec, DESIGN §1; the broker bound it before
 * forking us), register the idle hook on cs.  A segment without rings
 * leaves the fan-out off (f->on false; Write then answers
 * BadServiceUnsupported) and returns 0.  0 or -errno (the worker exits 2).
 */
int wk_fanout_init(struct wk_fanout *f, struct wk_worker *w,
                   struct wk_conns *cs);

/* Close the doorbell and free the pools. */
void wk_fanout_clear(struct wk_fanout *f);

/*
 * Drain the notification ring now (the publishing timer, before it
 * publishes: blocks whose bell the broker deferred are queued first).
 */
void wk_fanout_drain(struct wk_fanout *f);

/* Is the Write path available? */
static inline bool
wk_fanout_on(const struct wk_fanout *f)
{
    return f != NULL && f->on;
}

/*
 * Start a Write of n operations (n <= conf->max_nodes_per_write), answered
 * through ref when its last result is in.  Its id (> 0); -ENOSPC when
 * every pending Write is in use (the caller answers BadServerTooBusy).
 */
int wk_fanout_write_begin(struct wk_fanout *f, const struct wk_conn_ref *ref,
                          uint32_t n);

/*
 * Queue operation op of Write id for the broker: node index, AttributeId,
 * IndexRange text (may be null) and the DataValue to write.  Consecutive
 * operations of one Write share a record (shm/fanout.h).  UA_GOOD; a Bad
 * status for the operation when it cannot travel (a value larger than the
 * request ring: BadRequestTooLarge; an IndexRange longer than
 * SHM_FO_RANGE_MAX: BadIndexRangeInvalid; no room left in the outbox:
 * BadServerTooBusy).  Every case; the Write loop takes the common one
 * through a run (wk_fanout_run_add, below) and this as its fallback.
 */
ua_status wk_fanout_write_any(struct wk_fanout *f, int id, uint32_t op,
                              uint32_t node, uint32_t attr,
                              const struct ua_string *range,
                              const struct ua_datavalue *dv);

/* Answer operation op of Write id here (no record for the broker). */
void wk_fanout_write_result(struct wk_fanout *f, int id, uint32_t op,
                            ua_status st);

/*
 * Every operation of Write id is queued or answered: push what fits now
 * (the rest at the next iteration, in order); the WriteResponse goes out
 * when the last result is in (at once when all were answered here).
 */
void wk_fanout_write_commit(struct wk_fanout *f, int id);

/* --- the Call path (worker/svc_call.c) ------------------------------ */

/*
 * Start a Call of n methods (n <= conf->max_nodes_per_method_call) that
 * forwards some of them, answered through ref when the last forwarded one
 * is answered.  Its results array (zeroed) and everything the response
 * points at go into pc->arena.  NULL when every pending Call is in use.
 */
struct wk_fanout_call *wk_fanout_call_begin(struct wk_fanout *f,
                                            const struct wk_conn_ref *ref,
                                            uint32_t n);

/*
 * Queue method op of pending Call pc for the broker: one SHM_FO_CALL
 * record with the node indices and the nargs input arguments encoded.
 * UA_GOOD (the result comes with the reply); BadRequestTooLarge when the
 * record would take more slots than the request ring has (or 65535) or
 * the arguments more than conf->max_call_bytes; BadResourceUnavailable
 * when the outbox has no room for it now; BadEncodingLimitsExceeded when
 * an argument does not encode.
 */
ua_status wk_fanout_call_add(struct wk_fanout *f, struct wk_fanout_call *pc,
                             uint32_t op, uint32_t object, uint32_t method,
                             const struct ua_variant *args, int32_t nargs);

/*
 * Every method of pc is queued or answered: push what fits now; the
 * CallResponse goes out when the last answer is in (at once when none
 * was forwarded).
 */
void wk_fanout_call_commit(struct wk_fanout *f, struct wk_fanout_call *pc);

/* The pending Call of id, or NULL (answered, dropped, never). */
struct wk_fanout_call *wk_fanout_call_of(struct wk_fanout *f, uint32_t id);

/* Method op of pc was answered (its result set): the response when it
 * was the last one. */
void wk_fanout_call_answered(struct wk_fanout *f, struct wk_fanout_call *pc);

/*
 * A SHM_FO_CALL_RESULT record (len bytes, header checked) from the reply
 * ring: worker/svc_call.c sets the method's result, checking the outputs
 * against the method's OutputArguments.
 */
void wk_svc_call_reply(struct wk_worker *w, const uint8_t *rec, uint32_t len);

/* ------------------------------------------- the inline Write path */

/*
 * The encoded size of a scalar of built-in type t when it is one of the
 * fixed-size types a run takes (1, 2, 4 or 8 bytes); else 0.
 */
static inline size_t
wk_fanout_type_size(uint8_t t)
{
    /* Encoded sizes of the fixed-size built-in types (0: not one; GUID
     * and the types between DateTime and StatusCode are not). */
    static const uint8_t size[UA_BT_STATUSCODE + 1] = {
        [UA_BT_BOOLEAN] = 1, [UA_BT_SBYTE] = 1, [UA_BT_BYTE] = 1,
        [UA_BT_INT16] = 2, [UA_BT_UINT16] = 2,
        [UA_BT_INT32] = 4, [UA_BT_UINT32] = 4, [UA_BT_FLOAT] = 4,
        [UA_BT_INT64] = 8, [UA_BT_UINT64] = 8, [UA_BT_DOUBLE] = 8,
        [UA_BT_DATETIME] = 8, [UA_BT_STATUSCODE] = 4,
    };

    return t <= UA_BT_STATUSCODE ? size[t] : 0;
}

/*
 * The encoded size of dv's value when dv is a Value alone, a scalar of a
 * fixed-size built-in type (Boolean as 0 or 1); else 0.
 */
static inline size_t
wk_fanout_fixed_size(const struct ua_datavalue *dv)
{
    const struct ua_variant *v = &dv->value;

    if (dv->mask != UA_DV_VALUE || v->is_array || v->data == NULL)
        return 0;
    if (v->type == UA_BT_BOOLEAN && *(const uint8_t *)v->data > 1)
        return 0;
    return wk_fanout_type_size(v->type);
}

/* A Value-only DataValue of a fixed-size scalar (fixed bytes) at q:
 * mask, type, the value from v (the host's little-endian bytes, which are
 * the wire's; constant sizes, no call). */
static inline void
wk_fanout_put_fixed(uint8_t *q, uint8_t type, const void *v, uint32_t fixed)
{
    q[0] = UA_DV_VALUE;
    q[1] = type;
    /* Tests, not a switch: its jump table cost more than the two tests
     * the usual 8- and 4-byte values take. */
    if (fixed == 8)
        memcpy(q + 2, v, 8);
    else if (fixed == 4)
        memcpy(q + 2, v, 4);
    else if (fixed == 2)
        memcpy(q + 2, v, 2);
    else
        q[2] = *(const uint8_t *)v;
}

/*
 * A run: the common operations of one Write (a Value alone, a fixed-size
 * scalar, no IndexRange) appended to its open record with the record's
 * state in a local struct, which the compiler keeps in registers through
 * the Write loop, instead of in f: every store into the outbox may alias
 * f, so state kept there is loaded and stored again per operation.  Per
 * operation only its struct shm_fo_wop, its DataValue and its padding are
 * stored.  The header's nslots, len and nops, the zero tail of its last
 * slot, f->open_*, the outbox length and the write_ops counter are brought
 * up to date once, by wk_fanout_run_close(), which must run before
 * anything else looks at the outbox or f->open_* (wk_fanout_write_any,
 * _commit); wk_fanout_write_result() may run in between.  The record
 * bytes are exactly those wk_fanout_write_any() makes (check_svc_write
 * test_run_same_records).
 */
struct wk_fanout_run {
    uint8_t  *rec;          /* the open record, NULL: none (nothing fits) */
    uint8_t  *cur;          /* where its next operation goes */
    uint32_t  room;         /* the bytes it may still take: its slots may
                             * not pass the ring's size, UINT16_MAX or the
                             * outbox */
    uint32_t  nops;         /* its operations so far */
    uint32_t  nops0;        /* ... when the run opened */
};

/* Out of line: wk_fanout_run_close() when the run added operations. */
void wk_fanout_run_end(struct wk_fanout *f, uint32_t len, uint32_t nops,
                       uint32_t added);

/* Continue Write id's open record, if it is the open one (else no run). */
static inline void
wk_fanout_run_open(const struct wk_fanout *f, int id, struct wk_fanout_run *r)
{
    uint64_t ss = f->slot_size, maxslots, room;

    if (f->open_off == UINT32_MAX || f->open_id != (uint32_t)id) {
        r->rec = r->cur = NULL;
        r->room = r->nops = r->nops0 = 0;   /* nothing fits */
        return;
    }
    r->rec = f->outbox + f->open_off;
    r->cur = r->rec + f->open_len;
    r->nops = r->nops0 = f->open_nops;
    /* Whole slots only: len fits in k slots iff len <= k * ss. */
    maxslots = f->req.size < UINT16_MAX ? f->req.size : UINT16_MAX;
    room = (f->outbox_cap - f->open_off) / ss;
    if (room < maxslots)
        maxslots = room;
    room = maxslots * ss;
    if (room > UINT32_MAX)
        room = UINT32_MAX;
    /* open_len <= its slots' bytes <= room (checked when it took them) */
    r->room = (uint32_t)room - f->open_len;
}

/* Bring f up to date with the run (before anything else reads it). */
static inline void
wk_fanout_run_close(struct wk_fanout *f, const struct wk_fanout_run *r)
{
    if (r->nops != r->nops0)
        wk_fanout_run_end(f, (uint32_t)(r->cur - r->rec), r->nops,
                          r->nops - r->nops0);
}

/*
 * The struct shm_fo_wop of a common operation whose value takes fixed
 * bytes, appended to the run with its padding: where its DataValue goes
 * (2 + fixed bytes); NULL, nothing changed, when the record cannot take
 * it (no run, or no room left).
 */
static inline uint8_t *
wk_fanout_run_wop(struct wk_fanout_run *r, uint32_t op, uint32_t node,
                  uint32_t attr, uint32_t fixed)
{
    uint32_t          zero = 0, oplen;
    struct shm_fo_wop wop;
    uint8_t          *q = r->cur;

    /* shm_fo_wop_bytes(0, 2 + fixed) */
    oplen = (uint32_t)(sizeof(wop) + 2 + fixed + SHM_FO_WOP_ALIGN - 1)
            & ~(SHM_FO_WOP_ALIGN - 1);
    if (oplen > r->room)
        return NULL;
    /* The padding: zero the op's last word first, the DataValue then
     * overwrites what of it is not padding (no stale bytes travel). */
    memcpy(q + oplen - 4, &zero, 4);
    wop.op = op;
    wop.node = node;
    wop.dv_len = 2 + fixed;
    wop.attr = attr > UINT16_MAX ? UINT16_MAX : (uint16_t)attr;
    wop.range_len = 0;
    memcpy(q, &wop, sizeof(wop));
    r->cur = q + oplen;
    r->room -= oplen;
    r->nops++;
    return q + sizeof(wop);
}

/*
 * The common operation (the caller checked: no IndexRange) appended to the
 * run: true; false, nothing changed, when dv is not a fixed-size scalar
 * alone or the record cannot take it (no run, or no room left).
 */
static inline bool
wk_fanout_run_fixed(struct wk_fanout_run *r, uint32_t op, uint32_t node,
                    uint32_t attr, const struct ua_datavalue *dv)
{
    uint32_t fixed = (uint32_t)wk_fanout_fixed_size(dv);
    uint8_t *q;

    if (fixed == 0)
        return false;
    q = wk_fanout_run_wop(r, op, node, attr, fixed);
    if (q == NULL)
        return false;
    wk_fanout_put_fixed(q, dv->value.type, dv->value.data, fixed);
    return true;
}

/*
 * The same for a value still in its wire bytes (the fused Write,
 * svc_write.c): a scalar of type t, fixed = wk_fanout_type_size(t) > 0
 * bytes at v (a Boolean's byte made 0 or 1 as the decoder makes it).
 */
static inline bool
wk_fanout_run_wire(struct wk_fanout_run *r, uint32_t op, uint32_t node,
                   uint32_t attr, uint8_t t, const uint8_t *v,
                   uint32_t fixed)
{
    uint8_t *q = wk_fanout_run_wop(r, op, node, attr, fixed);

    if (q == NULL)
        return false;
    wk_fanout_put_fixed(q, t, v, fixed);
    if (t == UA_BT_BOOLEAN)
        q[2] = v[0] != 0;
    return true;
}

/*
 * Queue operation op of Write id (as wk_fanout_write_any, the same result
 * and record bytes): through run r when it can, else r is closed, the
 * general path takes it and r is opened again (on the record that path
 * left open, perhaps a new one).
 */
static inline ua_status
wk_fanout_run_add(struct wk_fanout *f, struct wk_fanout_run *r, int id,
                  uint32_t op, uint32_t node, uint32_t attr,
                  const struct ua_string *range,
                  const struct ua_datavalue *dv)
{
    ua_status st;

    if ((range == NULL || range->len <= 0)
        && wk_fanout_run_fixed(r, op, node, attr, dv))
        return UA_GOOD;
    wk_fanout_run_close(f, r);
    st = wk_fanout_write_any(f, id, op, node, attr, range, dv);
    wk_fanout_run_open(f, id, r);
    return st;
}

#endif /* WK_FANOUT_H */
