/*
 * worker/outbox.c: request records built into the outbox
 * (worker/outbox.h; record formats in shm/fanout.h).
 *
 * Invariants: buf[0..len) holds whole records, each nslots * slot_size
 * bytes with every byte past its len zero; the open record, when there
 * is one, is the last of them.  The row's write_ops counts every Write
 * operation queued (W: this worker, relaxed; R: broker).
 *
 * Single-threaded, on the worker's loop.
 */
#include "outbox.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/types_gen.h"

static inline void wk_outbox_count(struct wk_outbox *ob, uint64_t n);

static inline void
wk_outbox_count(struct wk_outbox *ob, uint64_t n)
{
    _Atomic uint64_t *c = &ob->w->row->write_ops;

    /* Single writer (this worker); the broker reads relaxed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

int
wk_outbox_init(struct wk_outbox *ob, struct wk_worker *w, uint32_t slot_size,
               uint32_t ring_slots)
{
    memset(ob, 0, sizeof(*ob));
    ob->w = w;
    ob->slot_size = slot_size;
    ob->ring_slots = ring_slots;
    ob->cap = ring_slots * slot_size;
    ob->open_off = UINT32_MAX;
    ob->buf = wk_alloc(w, ob->cap);
    return ob->buf != NULL ? 0 : -ENOMEM;
}

void
wk_outbox_clear(struct wk_outbox *ob)
{
    if (ob->w != NULL)
        wk_free(ob->w, ob->buf);
    memset(ob, 0, sizeof(*ob));
    ob->open_off = UINT32_MAX;
}

/* Every operation of a Write, worker/outbox.h (the run's fallback). */
ua_status
wk_outbox_write_any(struct wk_outbox *ob, int id, uint32_t op, uint32_t node,
                    uint32_t attr, const struct ua_string *range,
                    const struct ua_datavalue *dv)
{
    const uint32_t      ss = ob->slot_size;
    struct shm_fo_write rec;
    struct shm_fo_wop   wop;
    uint32_t            rlen = range != NULL && range->len > 0
                                   ? (uint32_t)range->len : 0;
    uint32_t            start, room, nslots, maxslots;
    uint64_t            len, oplen;
    size_t              dvlen, fixed;
    uint8_t            *p, *q;
    bool                open;

    if (rlen > SHM_FO_RANGE_MAX)
        return UA_BAD_INDEX_RANGE_INVALID;
    maxslots = ob->ring_slots < UINT16_MAX ? ob->ring_slots : UINT16_MAX;
    /* Continue this request's open record, or start one. */
    open = ob->open_off != UINT32_MAX && ob->open_id == (uint32_t)id;
    if (open) {
        /* The header's fields live in ob meanwhile: reading the header
         * back right after its narrow stores would stall on store
         * forwarding, once per operation. */
        start = ob->open_off;
        len = ob->open_len;
    } else {
        start = ob->len;
        len = sizeof(rec);
    }
    room = ob->cap - start;
    if (room < len + shm_fo_wop_bytes(rlen, 0))
        return UA_BAD_SERVER_TOO_BUSY;
    p = ob->buf + start;
    q = p + len + sizeof(wop) + rlen;       /* where the DataValue goes */
    fixed = wk_outbox_fixed_size(dv);
    if (fixed != 0 && room >= len + shm_fo_wop_bytes(rlen, 2 + fixed)) {
        /* The common case without the codec: mask, type, the value. */
        wk_outbox_put_fixed(q, dv->value.type, dv->value.data,
                            (uint32_t)fixed);
        dvlen = 2 + fixed;
    } else if (ua_encode(dv, &ua_types[UA_TYPE_DATAVALUE], q,
                         room - (size_t)(q - p), &dvlen) != UA_GOOD) {
        /* Too big for what is left; for a whole record, for good. */
        size_t need = ua_encoded_size(dv, &ua_types[UA_TYPE_DATAVALUE]);

        /* The encoder may have left bytes past the record's data. */
        if (open)
            memset(p + len, 0, (size_t)ob->open_nslots * ss - len);
        if (need == 0)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        if (sizeof(rec) + shm_fo_wop_bytes(rlen, (uint32_t)need)
            > (uint64_t)maxslots * ss)
            return UA_BAD_REQUEST_TOO_LARGE;
        if (open) {
            /* Another record for the rest of this request. */
            ob->open_off = UINT32_MAX;
            return wk_outbox_write_any(ob, id, op, node, attr, range, dv);
        }
        return UA_BAD_SERVER_TOO_BUSY;
    }
    oplen = shm_fo_wop_bytes(rlen, (uint32_t)dvlen);
    /* The open record's slots, or one more, without a division. */
    if (open && len + oplen <= (uint64_t)ob->open_nslots * ss)
        nslots = ob->open_nslots;
    else if (open && len + oplen <= (uint64_t)(ob->open_nslots + 1) * ss)
        nslots = ob->open_nslots + 1;
    else
        nslots = shm_fo_slots(len + oplen, ss);
    if (nslots > maxslots || (uint64_t)nslots * ss > room) {
        if (open)           /* as above: no stale bytes in its tail */
            memset(p + len, 0, (size_t)ob->open_nslots * ss - len);
        if (open) {
            ob->open_off = UINT32_MAX;
            return wk_outbox_write_any(ob, id, op, node, attr, range, dv);
        }
        return nslots > maxslots ? UA_BAD_REQUEST_TOO_LARGE
                                 : UA_BAD_SERVER_TOO_BUSY;
    }
    wop.op = op;
    wop.node = node;
    wop.dv_len = (uint32_t)dvlen;
    wop.attr = attr > UINT16_MAX ? UINT16_MAX : (uint16_t)attr;
    wop.range_len = (uint16_t)rlen;
    memcpy(p + len, &wop, sizeof(wop));
    if (rlen != 0)
        memcpy(p + len + sizeof(wop), range->data, rlen);
    /*
     * Zero the padding and the last slot's tail: no stale bytes travel.
     * Only when the record gets a slot: the slots it has are zero past
     * its data already (the op that took each one zeroed it to its end,
     * and a failed op clears what it left, above).
     */
    if (!open || nslots != ob->open_nslots)
        memset(q + dvlen, 0, (size_t)nslots * ss - (len + sizeof(wop) + rlen
                                                     + dvlen));
    if (!open) {
        memset(&rec, 0, sizeof(rec));
        rec.hdr.kind = SHM_FO_WRITE;
        rec.id = (uint32_t)id;
        memcpy(p, &rec, sizeof(rec));
        ob->open_nops = 0;
    }
    ob->open_nops++;
    ob->open_len = (uint32_t)(len + oplen);
    /* The header's changing fields, each stored alone. */
    {
        uint16_t ns16 = (uint16_t)nslots;

        memcpy(p + offsetof(struct shm_fo_write, hdr.nslots), &ns16, 2);
        memcpy(p + offsetof(struct shm_fo_write, hdr.len), &ob->open_len, 4);
        memcpy(p + offsetof(struct shm_fo_write, nops), &ob->open_nops, 4);
    }
    ob->open_off = start;
    ob->open_id = (uint32_t)id;
    ob->open_nslots = nslots;
    ob->len = start + nslots * ss;
    wk_outbox_count(ob, 1);
    return UA_GOOD;
}

/* wk_outbox_run_close(), worker/outbox.h: the run's operations are in
 * the open record's bytes; now its header, its last slot's tail and ob. */
void
wk_outbox_run_end(struct wk_outbox *ob, uint32_t len, uint32_t nops,
                  uint32_t added)
{
    const uint32_t ss = ob->slot_size;
    uint8_t       *p = ob->buf + ob->open_off;
    uint32_t       nslots = shm_fo_slots(len, ss);
    uint16_t       ns16 = (uint16_t)nslots;

    /* Every byte up to len was stored by an operation (padding
     * included); past it, up to the end of the last slot, zero. */
    memset(p + len, 0, (size_t)nslots * ss - len);
    memcpy(p + offsetof(struct shm_fo_write, hdr.nslots), &ns16, 2);
    memcpy(p + offsetof(struct shm_fo_write, hdr.len), &len, 4);
    memcpy(p + offsetof(struct shm_fo_write, nops), &nops, 4);
    ob->open_len = len;
    ob->open_nops = nops;
    ob->open_nslots = nslots;
    ob->len = ob->open_off + nslots * ss;
    wk_outbox_count(ob, added);
}

ua_status
wk_outbox_call(struct wk_outbox *ob, uint32_t id, uint32_t op,
               uint32_t object, uint32_t method,
               const struct ua_variant *args, int32_t nargs,
               uint32_t max_args, uint32_t role, const char *user,
               const struct ua_string *audit)
{
    const uint32_t     ss = ob->slot_size;
    struct shm_fo_call rec;
    uint32_t           maxslots, nslots, start = ob->len;
    uint64_t           alen = 0, len;
    uint8_t           *p;
    size_t             ulen = user != NULL ? strnlen(user, SHM_FO_USER_MAX)
                                           : 0;
    size_t             alen_id = audit != NULL && audit->len > 0
                                     ? (size_t)audit->len : 0;

    if (ss == 0)
        return UA_BAD_INTERNAL_ERROR;
    for (int32_t k = 0; k < nargs; k++) {
        size_t sz = ua_encoded_size(&args[k], &ua_types[UA_TYPE_VARIANT]);

        if (sz == 0)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        alen += sz;
    }
    if (alen_id > SHM_FO_AUDIT_MAX)
        alen_id = SHM_FO_AUDIT_MAX;
    len = sizeof(rec) + alen + ulen + alen_id;
    maxslots = ob->ring_slots < UINT16_MAX ? ob->ring_slots : UINT16_MAX;
    nslots = shm_fo_slots(len, ss);
    if (alen > max_args || nslots > maxslots)
        return UA_BAD_REQUEST_TOO_LARGE;
    if ((uint64_t)start + (uint64_t)nslots * ss > ob->cap)
        return UA_BAD_RESOURCE_UNAVAILABLE;
    p = ob->buf + start;
    {
        size_t off = sizeof(rec);

        for (int32_t k = 0; k < nargs; k++) {
            size_t used;

            if (ua_encode(&args[k], &ua_types[UA_TYPE_VARIANT], p + off,
                          (size_t)(len - off), &used) != UA_GOOD)
                return UA_BAD_ENCODING_LIMITS_EXCEEDED;
            off += used;
        }
        if (ulen != 0)
            memcpy(p + off, user, ulen);
        if (alen_id != 0)
            memcpy(p + off + ulen, audit->data, alen_id);
    }
    memset(p + len, 0, (size_t)nslots * ss - (size_t)len);
    memset(&rec, 0, sizeof(rec));
    rec.hdr.kind = SHM_FO_CALL;
    rec.hdr.nslots = (uint16_t)nslots;
    rec.hdr.len = (uint32_t)len;
    rec.id = id;
    rec.op = op;
    rec.object = object;
    rec.method = method;
    rec.nargs = (uint32_t)nargs;
    rec.args_len = (uint32_t)alen;
    rec.role = role;
    rec.user_len = (uint32_t)ulen;
    rec.audit_len = (uint32_t)alen_id;
    memcpy(p, &rec, sizeof(rec));
    /* A Write's open record before it is final: no Write continues it
     * past this one. */
    ob->open_off = UINT32_MAX;
    ob->len = start + nslots * ss;
    return UA_GOOD;
}

int
wk_outbox_rec(struct wk_outbox *ob, uint8_t *rec, uint32_t len)
{
    struct shm_fo_hdr h;
    uint32_t          ss = ob->slot_size, nslots, start;

    if (len < sizeof(h))
        return -EMSGSIZE;
    nslots = shm_fo_slots(len, ss);
    if (nslots > ob->ring_slots || nslots > UINT16_MAX)
        return -EMSGSIZE;
    ob->open_off = UINT32_MAX;          /* a Write after it starts anew */
    start = ob->len;
    if ((uint64_t)start + (uint64_t)nslots * ss > ob->cap)
        return -ENOSPC;
    memcpy(&h, rec, sizeof(h));
    h.nslots = (uint16_t)nslots;
    h.len = len;
    memcpy(ob->buf + start, &h, sizeof(h));
    memcpy(ob->buf + start + sizeof(h), rec + sizeof(h), len - sizeof(h));
    memset(ob->buf + start + len, 0, (size_t)nslots * ss - len);
    ob->len = start + nslots * ss;
    return 0;
}

int
wk_outbox_event(struct wk_outbox *ob, const uint8_t *rec, uint32_t len)
{
    struct shm_fo_hdr h;
    uint32_t          ss = ob->slot_size, nslots, start;

    nslots = shm_fo_slots((uint64_t)len + sizeof(h), ss);
    if (nslots > ob->ring_slots || nslots > UINT16_MAX)
        return -EMSGSIZE;
    ob->open_off = UINT32_MAX;          /* a Write after it starts anew */
    start = ob->len;
    if ((uint64_t)start + (uint64_t)nslots * ss > ob->cap)
        return -ENOSPC;
    h.kind = SHM_FO_EVENT;
    h.nslots = (uint16_t)nslots;
    h.len = (uint32_t)sizeof(h) + len;
    memcpy(ob->buf + start, &h, sizeof(h));
    memcpy(ob->buf + start + sizeof(h), rec, len);
    memset(ob->buf + start + h.len, 0, (size_t)nslots * ss - h.len);
    ob->len = start + nslots * ss;
    return 0;
}
