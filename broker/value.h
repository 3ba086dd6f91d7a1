/*
 * broker/value.h: the value path, the one way a value changes in the
 * broker (docs/architecture.md §10): store the encoded Variant into its
 * value slot (shm/value.h, seqlock), then hand the change to the fan-out
 * (broker/fanout.h) for the workers that watch the slot.  Every source
 * comes through here: client Writes (broker/write.c, from the request
 * drain), the feed and MQTT (broker/feed.c), the simulation
 * (broker/sim.c), the live Server nodes (broker/server.c) and the
 * initial values of the address space and of imported NodeSets
 * (broker/addrspace.c, broker/nodeset.c).
 *
 * Changes are made in batches, opened and closed by their source:
 *
 *   bk_value_batch_begin(v)
 *       bk_value_write(v, ...)        store now; the change waits in the
 *       bk_value_write_small(v, ...)  batch for its interest mask
 *       bk_value_event(v, ...)        (changes before it go first)
 *   bk_value_batch_end(v)            one fence, then every waiting
 *                                    change's mask; watched ones become
 *                                    block records (bk_fanout_add)
 *
 * A batch is a request record of Writes, a feed batch or an MQTT
 * message, a simulation tick, a Server tick, the address-space build.
 * Batches do not nest.  Changes too large to wait (over
 * BK_VALUE_PEND_BYTES) and changes past BK_VALUE_PEND_MAX settle the ones
 * waiting first, so the records of a slot keep their order.  Without a
 * fan-out (the build, a segment with no workers) nothing waits.
 *
 * Watched slots (docs/architecture.md §10.5): a slot whose bit is set in
 * the watch bitmap (bk_value_watch, the alarm evaluator's inputs,
 * broker/alarmnode.c) is handed to the watcher right after it is stored,
 * inside the batch: the watcher may write other (unwatched) slots and
 * send events through this same value path.  An unwatched slot costs one
 * bit test.
 *
 * The ServerTimestamp a slot gets is made strictly increasing per slot
 * (the previous one + 1 tick when the given one is not later), so a
 * worker can tell a value it already has (worker/monitem.c).
 *
 * Broker only, single-threaded, on its event loop.  No allocation.
 */
#ifndef BK_VALUE_H
#define BK_VALUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fanout.h"
#include "shm/segment.h"
#include "shm/value.h"

#define BK_VALUE_PEND_BYTES 16  /* a change up to this many bytes waits */
#define BK_VALUE_PEND_MAX   256 /* changes waiting in one batch at most */

/*
 * A change stored, its interest mask not loaded yet.  bytes points at
 * copy, or, for bk_value_write_small()'s changes, at the caller's bytes,
 * which stay as they are until the batch ends.
 */
struct bk_value_pend {
    uint32_t         slot;
    uint32_t         len;
    const uint8_t   *bytes;             /* len bytes of encoded Variant */
    struct shm_value m;
    uint8_t          copy[BK_VALUE_PEND_BYTES];
};

/*
 * A watcher: slot was stored with len bytes of encoded Variant (bytes
 * stay valid during the call) and source timestamp ts.
 */
typedef void (*bk_value_watch_fn)(void *arg, uint32_t slot,
                                  const uint8_t *bytes, uint32_t len,
                                  int64_t ts);

struct bk_value {
    struct shm_values    vals;          /* the segment's value slots */
    struct bk_fanout    *fanout;        /* NULL: nobody to tell */
    uint32_t             pend_n;
    bool                 open;          /* a batch is open */
    const uint64_t      *watch;         /* a bit per slot; NULL: none */
    bk_value_watch_fn    watch_fn;
    void                *watch_arg;
    struct bk_value_pend pend[BK_VALUE_PEND_MAX];
};

/* Bind to seg's value slots; no fan-out yet.  0 or -EPROTO. */
int bk_value_init(struct bk_value *v, const struct shm_segment *seg);

/*
 * Announce the changes to f from now on (NULL, or a fan-out without
 * workers: to nobody).  Not inside a batch.
 */
void bk_value_set_fanout(struct bk_value *v, struct bk_fanout *f);

/*
 * Hand every stored change of a slot whose bit is set in bits (a bit per
 * slot, kept by the caller) to fn from now on; bits NULL: none.
 */
void bk_value_watch(struct bk_value *v, const uint64_t *bits,
                    bk_value_watch_fn fn, void *arg);

/* Is slot watched?  (The fast paths' one bit test.) */
static inline __attribute__((always_inline)) bool
bk_value_watched(const struct bk_value *v, uint32_t slot)
{
    return __builtin_expect(v->watch != NULL, 0)
           && (v->watch[slot >> 6] >> (slot & 63) & 1) != 0;
}

/* Open a batch (none may be open). */
void bk_value_batch_begin(struct bk_value *v);

/* Close the batch: the waiting changes' masks, their block records. */
void bk_value_batch_end(struct bk_value *v);

/*
 * THE one function a value change goes through (inside a batch): store
 * len bytes of encoded Variant with m's status and timestamps in slot
 * (the ServerTimestamp rule above), then the change joins the batch.
 * 0, -ENOSPC (value heap full: the slot keeps its old value), -EINVAL
 * (bad slot).
 */
int bk_value_write(struct bk_value *v, uint32_t slot, const void *bytes,
                   uint32_t len, const struct shm_value *m);

/* bk_value_write(): status Good, both timestamps now. */
int bk_value_write_raw(struct bk_value *v, uint32_t slot, const void *bytes,
                       uint32_t len, int64_t now);

/*
 * bk_value_write_raw() of a Variant of built-in type bt (scalar, or an
 * array of n), encoded here.  -EINVAL also for slot SHM_NONE or a value
 * that does not encode (in 64 KiB).
 */
int bk_value_write_scalar(struct bk_value *v, uint32_t slot, uint8_t bt,
                          const void *value, int64_t now);
int bk_value_write_array(struct bk_value *v, uint32_t slot, uint8_t bt,
                         const void *values, int32_t n, int64_t now);

/* An ExtensionObject of generated structure type (UA_TYPE_*) as a
 * scalar. */
int bk_value_write_struct(struct bk_value *v, uint32_t slot, int type,
                          void *obj, int64_t now);

/*
 * An event record (broker/event.h) to the workers with event interest,
 * after the changes before it.
 */
void bk_value_event(struct bk_value *v, const uint8_t *rec, uint32_t len);

/* bk_value_write_small() past its inline case (value.c). */
int bk_value_write_small_any(struct bk_value *v, uint32_t slot,
                             const uint8_t *bytes, uint32_t len, int64_t now,
                             int64_t sts, bool store);

/*
 * bk_value_write() of the Write fast path's value (broker/write.c): len
 * (1..16) bytes of encoded Variant into slot (valid: the caller took it
 * from its node table), status Good, SourceTimestamp now, no
 * picoseconds.  The same slot contents, the same ServerTimestamp rule
 * and the same notification, inline and without building a struct
 * shm_value: it is the inner loop of a Write of many values.  bytes are
 * not copied: they must stay as they are until the batch ends (they are
 * the request record's own).  0 or -errno as bk_value_write().
 */
static inline __attribute__((always_inline)) int
bk_value_write_small(struct bk_value *v, uint32_t slot, const uint8_t *bytes,
                     uint32_t len, int64_t now)
{
    struct bk_value_pend *p;
    int64_t               prev, sts;

    /* bk_value_write()'s ServerTimestamp rule. */
    prev = atomic_load_explicit(&v->vals.slots[slot].server_ts,
                                memory_order_relaxed);
    sts = now > prev ? now : prev + 1;
    if (!shm_value_write_small(&v->vals, slot, bytes, len, now, sts))
        return bk_value_write_small_any(v, slot, bytes, len, now, sts, true);
    if (v->fanout == NULL || v->pend_n >= BK_VALUE_PEND_MAX
        || len > BK_VALUE_PEND_BYTES || bk_value_watched(v, slot))
        return bk_value_write_small_any(v, slot, bytes, len, now, sts,
                                        false);
    p = &v->pend[v->pend_n++];
    p->slot = slot;
    p->len = len;
    p->bytes = bytes;
    p->m.status = 0;                    /* Good */
    p->m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    p->m.source_ts = now;
    p->m.server_ts = sts;
    p->m.source_ps = 0;
    p->m.server_ps = 0;
    p->m.len = len;
    return 0;
}

#endif /* BK_VALUE_H */
