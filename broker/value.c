/*
 * broker/value.c: the value path (value.h): store, then notify.
 *
 * Ordering contract (with the workers):
 *  (1) No lost update on subscribe (docs/architecture.md §2).  A change
 *      stores the slot (seqlock, its last store a release, shm/value.h);
 *      the batch's end (or an early settle) issues a seq_cst fence and
 *      then loads the interest masks of the changes stored before it.  A
 *      worker sets its bit with a seq_cst RMW, then reads the slot.
 *      Store-then-load on both sides with a full fence (the RMW is one)
 *      between: the broker sees the bit, or the worker's read sees the
 *      new value.  [settle fence <-> shm_interest_set]
 *      One fence serves every change of a batch: every slot store
 *      precedes it and every mask load follows it.  A worker that set its
 *      bit between two changes of one slot may get both; it drops a
 *      record older than the value it read (worker/monitem.c).
 *
 * Changes that wait keep their order: a change that cannot wait (too
 * large), an event and a full batch settle the waiting ones first.
 */
#include "value.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define BK_VALUE_ENC_BUF (64 * 1024)

static void bk_value_notify(struct bk_value *v, uint32_t slot,
                            const void *bytes, uint32_t len,
                            const struct shm_value *m);
static void bk_value_settle(struct bk_value *v);
static int bk_value_write_variant(struct bk_value *v, uint32_t slot,
                                  const struct ua_variant *var, int64_t now);

/* Values the broker encodes itself (the build, the Server nodes, the
 * simulation): one at a time, on the one thread. */
static uint8_t bk_value_encbuf[BK_VALUE_ENC_BUF];

int
bk_value_init(struct bk_value *v, const struct shm_segment *seg)
{
    v->fanout = NULL;
    v->pend_n = 0;
    v->open = false;
    return shm_values_open(&v->vals, seg);
}

void
bk_value_set_fanout(struct bk_value *v, struct bk_fanout *f)
{
    assert(!v->open);
    v->fanout = f != NULL && f->n != 0 ? f : NULL;
}

void
bk_value_watch(struct bk_value *v, const uint64_t *bits,
               bk_value_watch_fn fn, void *arg)
{
    v->watch = bits;
    v->watch_fn = fn;
    v->watch_arg = arg;
}

void
bk_value_batch_begin(struct bk_value *v)
{
    assert(!v->open && v->pend_n == 0);
    v->open = true;
}

void
bk_value_batch_end(struct bk_value *v)
{
    assert(v->open);
    if (v->pend_n != 0)
        bk_value_settle(v);
    v->open = false;
}

/* The waiting changes: one fence, then their masks (contract (1)). */
static void
bk_value_settle(struct bk_value *v)
{
    struct bk_fanout       *f = v->fanout;
    const _Atomic uint64_t *interest = v->vals.interest;
    uint32_t                n = v->pend_n;

    v->pend_n = 0;
    atomic_thread_fence(memory_order_seq_cst);
    for (uint32_t i = 0; i < n; i++) {
        const struct bk_value_pend *p = &v->pend[i];
        uint64_t                    mask;

        /* A dead worker's bits too: the change log (fanout.c (4)). */
        mask = atomic_load_explicit(&interest[p->slot], memory_order_relaxed);
        if (mask != 0)
            bk_fanout_add(f, p->slot, mask, p->bytes, p->len, &p->m);
    }
}

/* A stored change of slot joins the batch (v->fanout is set). */
static void
bk_value_notify(struct bk_value *v, uint32_t slot, const void *bytes,
                uint32_t len, const struct shm_value *m)
{
    uint64_t mask;

    if (len <= BK_VALUE_PEND_BYTES) {
        struct bk_value_pend *p;

        if (v->pend_n == BK_VALUE_PEND_MAX)
            bk_value_settle(v);
        p = &v->pend[v->pend_n++];
        p->slot = slot;
        p->len = len;
        p->m = *m;
        shm_value_copy16(p->copy, bytes, len);
        p->bytes = p->copy;
        return;
    }
    if (v->pend_n != 0)
        bk_value_settle(v);             /* older changes first */
    /* Slot stored, then the mask: contract (1). */
    atomic_thread_fence(memory_order_seq_cst);
    mask = atomic_load_explicit(&v->vals.interest[slot],
                                memory_order_relaxed);
    if (mask != 0)
        bk_fanout_add(v->fanout, slot, mask, bytes, len, m);
}

int
bk_value_write(struct bk_value *v, uint32_t slot, const void *bytes,
               uint32_t len, const struct shm_value *m)
{
    const struct shm_value *use = m;
    struct shm_value        mm;
    int64_t                 prev;
    int                     rc;

    assert(v->open);
    if (slot >= v->vals.nslots)
        return -EINVAL;
    if (m->flags & SHM_VF_SERVER_TS) {
        /* Only the broker writes slots: a relaxed load of our own store. */
        prev = atomic_load_explicit(&v->vals.slots[slot].server_ts,
                                    memory_order_relaxed);
        if (m->server_ts <= prev) {
            /* A copy only then: the caller has just stored *m field by
             * field, and a whole-struct load of it stalls. */
            mm = *m;
            mm.server_ts = prev + 1;
            mm.server_ps = 0;
            use = &mm;
        }
    }
    rc = shm_value_write(&v->vals, slot, bytes, len, use);
    if (rc != 0)
        return rc;
    if (v->fanout != NULL)
        bk_value_notify(v, slot, bytes, len, use);
    if (bk_value_watched(v, slot))
        v->watch_fn(v->watch_arg, slot, bytes, len, use->source_ts);
    return 0;
}

/*
 * bk_value_write_small() past its inline case: the slot's old value
 * lives in the heap (store) or the change cannot wait uncopied (notify
 * only, the slot is written).
 */
int
bk_value_write_small_any(struct bk_value *v, uint32_t slot,
                         const uint8_t *bytes, uint32_t len, int64_t now,
                         int64_t sts, bool store)
{
    struct shm_value m = { 0 };

    m.status = UA_GOOD;
    m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    m.source_ts = now;
    m.server_ts = sts;
    m.len = len;
    if (store)
        return bk_value_write(v, slot, bytes, len, &m);
    if (v->fanout != NULL)
        bk_value_notify(v, slot, bytes, len, &m);
    if (bk_value_watched(v, slot))
        v->watch_fn(v->watch_arg, slot, bytes, len, now);
    return 0;
}

int
bk_value_write_raw(struct bk_value *v, uint32_t slot, const void *bytes,
                   uint32_t len, int64_t now)
{
    return bk_value_write_small_any(v, slot, bytes, len, now, now, true);
}

static int
bk_value_write_variant(struct bk_value *v, uint32_t slot,
                       const struct ua_variant *var, int64_t now)
{
    size_t len;

    if (slot == SHM_NONE)
        return -EINVAL;
    if (ua_encode(var, &ua_types[UA_TYPE_VARIANT], bk_value_encbuf,
                  sizeof(bk_value_encbuf), &len) != UA_GOOD)
        return -EINVAL;
    return bk_value_write_raw(v, slot, bk_value_encbuf, (uint32_t)len, now);
}

int
bk_value_write_scalar(struct bk_value *v, uint32_t slot, uint8_t bt,
                      const void *value, int64_t now)
{
    struct ua_variant var;

    ua_variant_set_scalar(&var, (void *)(uintptr_t)value, bt);
    return bk_value_write_variant(v, slot, &var, now);
}

int
bk_value_write_array(struct bk_value *v, uint32_t slot, uint8_t bt,
                     const void *values, int32_t n, int64_t now)
{
    struct ua_variant var;

    ua_variant_set_array(&var, (void *)(uintptr_t)values, n, bt);
    return bk_value_write_variant(v, slot, &var, now);
}

int
bk_value_write_struct(struct bk_value *v, uint32_t slot, int type, void *obj,
                      int64_t now)
{
    struct ua_extobj x = { 0 };

    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[type];
    x.obj = obj;
    x.type_id = ua_nodeid_num(0, ua_types[type].binary_id);
    return bk_value_write_scalar(v, slot, UA_BT_EXTENSIONOBJECT, &x, now);
}

void
bk_value_event(struct bk_value *v, const uint8_t *rec, uint32_t len)
{
    if (v->fanout == NULL)
        return;
    if (v->pend_n != 0)
        bk_value_settle(v);             /* older changes first */
    bk_fanout_event(v->fanout, rec, len);
}
