/*
 * worker/outbox.h: the request records this worker has made and not
 * pushed yet (record formats: shm/fanout.h).  Part of the link layer
 * (worker/link.h pushes the outbox onto the request ring).
 *
 * The outbox is a byte buffer of the request ring's size, holding whole
 * records in order, each a whole number of ring slots, the tail of its
 * last slot zeroed (no stale bytes travel).  The services above build
 * their records here:
 *
 *   Write operations    wk_outbox_write_any (every case) and the run
 *                       (below: the common case, inline); consecutive
 *                       operations of one Write share the open record,
 *                       a new one starts when it would pass the ring
 *   Calls               wk_outbox_call: one SHM_FO_CALL record a method
 *   Events              wk_outbox_event: one SHM_FO_EVENT record
 *
 * A record being built by a Write stays open (open_off) until something
 * else is appended or the outbox is pushed (wk_outbox_close): only the
 * open record grows.  The outbox knows nothing of pending requests; the
 * services above keep those (worker/svc_write.c, worker/svc_call.c).
 *
 * Single-threaded, on the worker's loop.  No allocation after
 * wk_outbox_init().
 */
#ifndef WK_OUTBOX_H
#define WK_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/status_gen.h"
#include "proto/types.h"
#include "shm/fanout.h"
#include "worker.h"

/* The records not pushed yet (whole records, in order). */
struct wk_outbox {
    struct wk_worker *w;            /* its row's write_ops counter */
    uint8_t          *buf;
    uint32_t          cap;          /* bytes: the ring's */
    uint32_t          len;
    uint32_t          slot_size;    /* request ring slots */
    uint32_t          ring_slots;   /* ... and how many */
    uint32_t          open_off;     /* the record still growing,
                                     * UINT32_MAX: none */
    uint32_t          open_id;      /* its pending Write */
    uint32_t          open_len;     /* its bytes so far */
    uint32_t          open_nops;    /* its operations so far */
    uint32_t          open_nslots;  /* its ring slots so far */
};

/*
 * An outbox for a request ring of ring_slots slots of slot_size bytes
 * (one buffer of the ring's bytes, allocated here).  0 or -ENOMEM.
 */
int wk_outbox_init(struct wk_outbox *ob, struct wk_worker *w,
                   uint32_t slot_size, uint32_t ring_slots);

/* Free the buffer. */
void wk_outbox_clear(struct wk_outbox *ob);

/* No record is open any more (pushed records are final). */
static inline void
wk_outbox_close(struct wk_outbox *ob)
{
    ob->open_off = UINT32_MAX;
}

/*
 * Queue operation op of Write id: node index, AttributeId, IndexRange
 * text (may be null) and the DataValue to write.  Consecutive operations
 * of one Write share a record (shm/fanout.h).  UA_GOOD; a Bad status for
 * the operation when it cannot travel (a value larger than the request
 * ring: BadRequestTooLarge; an IndexRange longer than SHM_FO_RANGE_MAX:
 * BadIndexRangeInvalid; no room left in the outbox: BadServerTooBusy).
 * Every case; the Write loop takes the common one through a run
 * (wk_outbox_run_add, below) and this as its fallback.
 */
ua_status wk_outbox_write_any(struct wk_outbox *ob, int id, uint32_t op,
                              uint32_t node, uint32_t attr,
                              const struct ua_string *range,
                              const struct ua_datavalue *dv);

/*
 * One SHM_FO_CALL record: method op of pending Call id, its node indices
 * and the nargs input arguments encoded, the caller's role and user name
 * and the request's auditEntryId (audit, NULL: none; cut at
 * SHM_FO_AUDIT_MAX bytes).  UA_GOOD; BadRequestTooLarge
 * when the record would take more slots than the request ring has (or
 * 65535) or the arguments more than max_args bytes;
 * BadResourceUnavailable when the outbox has no room for it now;
 * BadEncodingLimitsExceeded when an argument does not encode.
 */
ua_status wk_outbox_call(struct wk_outbox *ob, uint32_t id, uint32_t op,
                         uint32_t object, uint32_t method,
                         const struct ua_variant *args, int32_t nargs,
                         uint32_t max_args, uint32_t role, const char *user,
                         const struct ua_string *audit);

/*
 * One SHM_FO_EVENT record carrying the event record rec[len]
 * (shm/fanout.h SHM_FO_EVENT_SLOT format).  0; -EMSGSIZE larger than the
 * ring; -ENOSPC when the outbox is full.
 */
int wk_outbox_event(struct wk_outbox *ob, const uint8_t *rec, uint32_t len);

/*
 * One record rec[len] as it is: a struct shm_fo_hdr first with its kind
 * set (nslots and len are set here), then its bytes (HistoryUpdate's,
 * shm/fanout.h SHM_FO_HUPD and SHM_FO_HUPD_RESULT).  0; -EMSGSIZE larger
 * than the ring; -ENOSPC when the outbox is full.
 */
int wk_outbox_rec(struct wk_outbox *ob, uint8_t *rec, uint32_t len);

/* ------------------------------------------- the inline Write path */

/*
 * The encoded size of a scalar of built-in type t when it is one of the
 * fixed-size types a run takes (1, 2, 4 or 8 bytes); else 0.
 */
static inline size_t
wk_outbox_type_size(uint8_t t)
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
wk_outbox_fixed_size(const struct ua_datavalue *dv)
{
    const struct ua_variant *v = &dv->value;

    if (dv->mask != UA_DV_VALUE || v->is_array || v->data == NULL)
        return 0;
    if (v->type == UA_BT_BOOLEAN && *(const uint8_t *)v->data > 1)
        return 0;
    return wk_outbox_type_size(v->type);
}

/* A Value-only DataValue of a fixed-size scalar (fixed bytes) at q:
 * mask, type, the value from v (the host's little-endian bytes, which are
 * the wire's; constant sizes, no call). */
static inline void
wk_outbox_put_fixed(uint8_t *q, uint8_t type, const void *v, uint32_t fixed)
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
 * the Write loop, instead of in the outbox: every store into the buffer
 * may alias it, so state kept there is loaded and stored again per
 * operation.  Per operation only its struct shm_fo_wop, its DataValue and
 * its padding are stored.  The header's nslots, len and nops, the zero
 * tail of its last slot, open_*, the outbox length and the write_ops
 * counter are brought up to date once, by wk_outbox_run_close(), which
 * must run before anything else looks at the outbox
 * (wk_outbox_write_any, a push); a Write's own result bookkeeping may run
 * in between.  The record bytes are exactly those wk_outbox_write_any()
 * makes (check_outbox test_run_same_records).
 */
struct wk_outbox_run {
    uint8_t  *rec;          /* the open record, NULL: none (nothing fits) */
    uint8_t  *cur;          /* where its next operation goes */
    uint32_t  room;         /* the bytes it may still take: its slots may
                             * not pass the ring's size, UINT16_MAX or the
                             * outbox */
    uint32_t  nops;         /* its operations so far */
    uint32_t  nops0;        /* ... when the run opened */
};

/* Out of line: wk_outbox_run_close() when the run added operations. */
void wk_outbox_run_end(struct wk_outbox *ob, uint32_t len, uint32_t nops,
                       uint32_t added);

/* Continue Write id's open record, if it is the open one (else no run). */
static inline void
wk_outbox_run_open(const struct wk_outbox *ob, int id,
                   struct wk_outbox_run *r)
{
    uint64_t ss = ob->slot_size, maxslots, room;

    if (ob->open_off == UINT32_MAX || ob->open_id != (uint32_t)id) {
        r->rec = r->cur = NULL;
        r->room = r->nops = r->nops0 = 0;   /* nothing fits */
        return;
    }
    r->rec = ob->buf + ob->open_off;
    r->cur = r->rec + ob->open_len;
    r->nops = r->nops0 = ob->open_nops;
    /* Whole slots only: len fits in k slots iff len <= k * ss. */
    maxslots = ob->ring_slots < UINT16_MAX ? ob->ring_slots : UINT16_MAX;
    room = (ob->cap - ob->open_off) / ss;
    if (room < maxslots)
        maxslots = room;
    room = maxslots * ss;
    if (room > UINT32_MAX)
        room = UINT32_MAX;
    /* open_len <= its slots' bytes <= room (checked when it took them) */
    r->room = (uint32_t)room - ob->open_len;
}

/* Bring the outbox up to date with the run (before anything else reads
 * it). */
static inline void
wk_outbox_run_close(struct wk_outbox *ob, const struct wk_outbox_run *r)
{
    if (r->nops != r->nops0)
        wk_outbox_run_end(ob, (uint32_t)(r->cur - r->rec), r->nops,
                          r->nops - r->nops0);
}

/*
 * The struct shm_fo_wop of a common operation whose value takes fixed
 * bytes, appended to the run with its padding: where its DataValue goes
 * (2 + fixed bytes); NULL, nothing changed, when the record cannot take
 * it (no run, or no room left).
 */
static inline uint8_t *
wk_outbox_run_wop(struct wk_outbox_run *r, uint32_t op, uint32_t node,
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
wk_outbox_run_fixed(struct wk_outbox_run *r, uint32_t op, uint32_t node,
                    uint32_t attr, const struct ua_datavalue *dv)
{
    uint32_t fixed = (uint32_t)wk_outbox_fixed_size(dv);
    uint8_t *q;

    if (fixed == 0)
        return false;
    q = wk_outbox_run_wop(r, op, node, attr, fixed);
    if (q == NULL)
        return false;
    wk_outbox_put_fixed(q, dv->value.type, dv->value.data, fixed);
    return true;
}

/*
 * The same for a value still in its wire bytes (the fused Write,
 * svc_write.c): a scalar of type t, fixed = wk_outbox_type_size(t) > 0
 * bytes at v (a Boolean's byte made 0 or 1 as the decoder makes it).
 */
static inline bool
wk_outbox_run_wire(struct wk_outbox_run *r, uint32_t op, uint32_t node,
                   uint32_t attr, uint8_t t, const uint8_t *v,
                   uint32_t fixed)
{
    uint8_t *q = wk_outbox_run_wop(r, op, node, attr, fixed);

    if (q == NULL)
        return false;
    wk_outbox_put_fixed(q, t, v, fixed);
    if (t == UA_BT_BOOLEAN)
        q[2] = v[0] != 0;
    return true;
}

/*
 * Queue operation op of Write id (as wk_outbox_write_any, the same result
 * and record bytes): through run r when it can, else r is closed, the
 * general path takes it and r is opened again (on the record that path
 * left open, perhaps a new one).
 */
static inline ua_status
wk_outbox_run_add(struct wk_outbox *ob, struct wk_outbox_run *r, int id,
                  uint32_t op, uint32_t node, uint32_t attr,
                  const struct ua_string *range,
                  const struct ua_datavalue *dv)
{
    ua_status st;

    if ((range == NULL || range->len <= 0)
        && wk_outbox_run_fixed(r, op, node, attr, dv))
        return UA_GOOD;
    wk_outbox_run_close(ob, r);
    st = wk_outbox_write_any(ob, id, op, node, attr, range, dv);
    wk_outbox_run_open(ob, id, r);
    return st;
}

#endif /* WK_OUTBOX_H */
