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

#include <stddef.h>
#include <stdint.h>

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
