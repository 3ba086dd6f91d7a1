/*
 * shm/value.h: value slots and the value heap.
 *
 * Ordering contract (seqlock, ck_sequence style):
 *   writer (broker only): seq := seq|1 (odd: a writer that died mid-write
 *     left it odd already), release fence, write fields and bytes,
 *     release-store seq := seq+1 (even, never seen before).
 *   reader (any process): acquire-load seq; if odd retry; copy the fields
 *     and bytes (bounds-checked against the heap); acquire fence; reload
 *     seq; if it changed, retry.
 * A reader gives up after a bounded number of retries and reports the slot
 * stale (-EAGAIN): a writer that died mid-write can never wedge it.
 */
#ifndef SHM_VALUE_H
#define SHM_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "layout.h"
#include "segment.h"

#define SHM_VALUE_RETRIES 1000

/* One value as read from a slot. */
struct shm_value {
    uint32_t status;
    uint32_t flags;             /* SHM_VF_SOURCE_TS, SHM_VF_SERVER_TS */
    int64_t  source_ts;
    int64_t  server_ts;
    uint16_t source_ps;
    uint16_t server_ps;
    uint32_t len;               /* bytes of the encoded Variant */
};

struct shm_values {
    struct shm_header     *hdr;
    struct shm_value_slot *slots;
    uint8_t               *heap;
    uint64_t               heap_size;
    uint32_t               nslots;
    _Atomic uint64_t      *interest;
};

/*
 * The segment plan (shm/plan.c): the bytes of SHM_R_SLOTS (p->slots
 * slots), SHM_R_VHEAP (p->vheap bytes) and SHM_R_INTEREST (a mask per
 * slot) into sizes[]; the header's value fields of a segment fresh from
 * the plan; whether header h's value fields fit its regions (0 or
 * -EPROTO).
 */
void shm_values_plan(const struct shm_plan *p, uint64_t sizes[SHM_R_MAX]);
void shm_values_plan_init(struct shm_segment *s, const struct shm_plan *p);
int shm_values_plan_check(const struct shm_header *h);

/* Bind to a segment. 0 or -EPROTO. */
int shm_values_open(struct shm_values *v, const struct shm_segment *s);

/*
 * Write slot i (broker only): len bytes of encoded Variant, status,
 * timestamps.  0, -ENOSPC when the value heap is full (the slot keeps its
 * old value), -EINVAL for a bad slot.
 */
int shm_value_write(struct shm_values *v, uint32_t i, const void *bytes,
                    uint32_t len, const struct shm_value *meta);

/*
 * Read slot i into *out and its bytes into buf[cap].  0; -ENOSPC when cap is
 * too small (out->len says how much is needed); -EAGAIN when the slot kept
 * changing or was left mid-write; -EINVAL for a bad slot.  With cap >=
 * SHM_VALUE_INLINE an inline value may fill all SHM_VALUE_INLINE bytes of
 * buf (the bytes past out->len mean nothing).
 */
int shm_value_read(const struct shm_values *v, uint32_t i,
                   struct shm_value *out, void *buf, size_t cap);

/*
 * len (0..16) bytes from src to dst without a call: two overlapping word
 * copies that never read past src + len nor write past dst + len.  Most
 * values are 2..9 bytes.
 */
static inline void
shm_value_copy16(uint8_t *dst, const uint8_t *src, uint32_t len)
{
    uint64_t a, b;
    uint32_t x, y;

    if (len >= 8) {
        memcpy(&a, src, 8);
        memcpy(&b, src + len - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + len - 8, &b, 8);
    } else if (len >= 4) {
        memcpy(&x, src, 4);
        memcpy(&y, src + len - 4, 4);
        memcpy(dst, &x, 4);
        memcpy(dst + len - 4, &y, 4);
    } else if (len != 0) {
        dst[0] = src[0];
        dst[len >> 1] = src[len >> 1];
        dst[len - 1] = src[len - 1];
    }
}

/*
 * shm_value_write() of the common small value, inline for the broker's
 * Write fast path: len (1..16) bytes into a valid slot i,
 * status Good, both timestamps, no picoseconds.  The same seqlock
 * protocol and the same slot contents as shm_value_write() (the ordering
 * contract above).  false, nothing written, when the slot's value lives in
 * the heap now: shm_value_write() frees that block.
 */
static inline __attribute__((always_inline)) bool
shm_value_write_small(struct shm_values *v, uint32_t i, const uint8_t *bytes,
                      uint32_t len, int64_t source_ts, int64_t server_ts)
{
    struct shm_value_slot *s = &v->slots[i];
    uint32_t               seq;

    if (atomic_load_explicit(&s->flags, memory_order_relaxed) & SHM_VF_HEAP)
        return false;
    /* seq | 1: see shm_value_write() (a writer that died mid-write). */
    seq = atomic_load_explicit(&s->seq, memory_order_relaxed) | 1u;
    atomic_store_explicit(&s->seq, seq, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->len, len, memory_order_relaxed);
    atomic_store_explicit(&s->heap, 0, memory_order_relaxed);
    atomic_store_explicit(&s->status, 0, memory_order_relaxed);   /* Good */
    atomic_store_explicit(&s->source_ts, source_ts, memory_order_relaxed);
    atomic_store_explicit(&s->server_ts, server_ts, memory_order_relaxed);
    atomic_store_explicit(&s->source_ps, 0, memory_order_relaxed);
    atomic_store_explicit(&s->server_ps, 0, memory_order_relaxed);
    atomic_store_explicit(&s->flags, SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS,
                          memory_order_relaxed);
    shm_value_copy16(s->inl, bytes, len);
    /* Publish; pairs with the acquire load in shm_value_read(). */
    atomic_store_explicit(&s->seq, seq + 1, memory_order_release);
    return true;
}

/* Interest masks: one bit per worker slot (atomic OR / AND-NOT). */
static inline void
shm_interest_set(struct shm_values *v, uint32_t i, unsigned worker)
{
    if (i >= v->nslots || worker >= 64)
        return;
    atomic_fetch_or_explicit(&v->interest[i], UINT64_C(1) << worker,
                             memory_order_seq_cst);
}

static inline void
shm_interest_clear(struct shm_values *v, uint32_t i, unsigned worker)
{
    if (i >= v->nslots || worker >= 64)
        return;
    atomic_fetch_and_explicit(&v->interest[i], ~(UINT64_C(1) << worker),
                              memory_order_seq_cst);
}

static inline uint64_t
shm_interest_get(const struct shm_values *v, uint32_t i)
{
    if (i >= v->nslots)
        return 0;
    return atomic_load_explicit(&v->interest[i], memory_order_seq_cst);
}

#endif /* SHM_VALUE_H */
