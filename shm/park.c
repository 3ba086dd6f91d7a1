/*
 * shm/park.c: the SHM_R_PARK region (shm/park.h; the layout and its
 * protocols are in shm/layout.h "parked sessions").
 *
 * Invariants:
 *   - The change log has one writer, the broker; entry i is at
 *     i & (clog_n - 1); its seq is 0 while it is written and i + 1 once
 *     whole; clog_head is the number of entries written (release after
 *     the entry), so a reader that loads the head (acquire) finds every
 *     entry below it whole or overwritten since.
 *   - A reader copies an entry between two loads of its seq: equal and
 *     i + 1, the copy is entry i.
 *
 * The broker's log write is on the value path (broker/fanout.c): a few
 * stores and one copy of at most SHM_CLOG_REC bytes, no branch on
 * anything but the record's length.  The log's pages are taken when the
 * region is made (shm_park_prefault), not by the value path's first
 * pass through them (a page fault per 64 entries).
 */
#include "park.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "segment.h"

static uint32_t shm_park_pow2(uint32_t n);
static uint64_t shm_park_stride(const struct shm_plan *p);

static uint32_t
shm_park_pow2(uint32_t n)
{
    uint32_t p = SHM_CLOG_MIN;

    if (n > SHM_CLOG_MAX)
        n = SHM_CLOG_MAX;
    while (p < n)
        p <<= 1;
    return p;
}

/* Records, then data, each slot on its own lines. */
static uint64_t
shm_park_stride(const struct shm_plan *p)
{
    uint64_t b = (uint64_t)p->park_records * sizeof(struct shm_park_rec)
                 + p->park_bytes;

    return (b + SHM_CACHELINE - 1) & ~(uint64_t)(SHM_CACHELINE - 1);
}

uint64_t
shm_park_region_bytes(const struct shm_plan *p)
{
    if (p->park_workers == 0 || p->park_bytes == 0
        || p->park_workers > SHM_WORKERS_MAX)
        return 0;
    return sizeof(struct shm_park)
           + (uint64_t)shm_park_pow2(p->change_log_entries)
                 * sizeof(struct shm_clog_ent)
           + (uint64_t)p->park_workers * shm_park_stride(p);
}

void
shm_park_prefault(void *at, uint64_t len)
{
    /* The pages as they are (their bytes kept); a kernel without it
     * (before Linux 5.14) takes them on first use, as before. */
    (void)shm_mem_populate(at, len, true);
}

int
shm_park_region_init(void *region, uint64_t size, const struct shm_plan *p)
{
    struct shm_park *k = region;

    if (size < shm_park_region_bytes(p) || size == 0
        || p->park_bytes > UINT32_MAX)
        return -EINVAL;
    k->magic = SHM_PARK_MAGIC;
    k->nslots = p->park_workers;
    k->nrec = p->park_records;
    k->clog_n = shm_park_pow2(p->change_log_entries);
    k->data_bytes = p->park_bytes;
    k->clog_off = sizeof(struct shm_park);
    k->slots_off = k->clog_off
                   + (uint64_t)k->clog_n * sizeof(struct shm_clog_ent);
    k->slot_stride = shm_park_stride(p);
    shm_park_prefault((uint8_t *)k + k->clog_off,
                      (uint64_t)k->clog_n * sizeof(struct shm_clog_ent));
    return 0;
}

struct shm_park *
shm_park_of(const struct shm_segment *s)
{
    const struct shm_region_desc *r = &s->hdr->regions[SHM_R_PARK];
    struct shm_park              *k;

    if (r->size < sizeof(*k))
        return NULL;
    k = shm_segment_region(s, SHM_R_PARK);
    if (k->magic != SHM_PARK_MAGIC || k->nslots == 0
        || k->nslots > SHM_WORKERS_MAX || k->clog_n == 0
        || (k->clog_n & (k->clog_n - 1)) != 0
        || k->slot_stride < (uint64_t)k->nrec * sizeof(struct shm_park_rec)
                                + k->data_bytes
        || k->slots_off + (uint64_t)k->nslots * k->slot_stride > r->size)
        return NULL;
    return k;
}

struct shm_park_rec *
shm_park_recs(struct shm_park *k, unsigned slot)
{
    return (struct shm_park_rec *)((uint8_t *)k + k->slots_off
                                   + (uint64_t)slot * k->slot_stride);
}

uint8_t *
shm_park_data(struct shm_park *k, unsigned slot)
{
    return (uint8_t *)shm_park_recs(k, slot)
           + (uint64_t)k->nrec * sizeof(struct shm_park_rec);
}

uint32_t
shm_park_parked(const struct shm_park *k, unsigned slot)
{
    if (slot >= k->nslots)
        return 0;
    return atomic_load_explicit(&k->s[slot].nparked, memory_order_acquire);
}

void
shm_park_cut(struct shm_park *k, unsigned slot)
{
    if (slot < k->nslots)
        atomic_store_explicit(&k->s[slot].cut,
                              atomic_load_explicit(&k->clog_head,
                                                   memory_order_relaxed),
                              memory_order_release);
}

uint64_t
shm_park_head(const struct shm_park *k)
{
    return atomic_load_explicit(&k->clog_head, memory_order_acquire);
}

int
shm_park_read(const struct shm_park *k, uint64_t idx, struct shm_clog_ent *e)
{
    const struct shm_clog_ent *s =
        (const struct shm_clog_ent *)((const uint8_t *)k + k->clog_off)
        + (idx & (k->clog_n - 1));
    uint64_t q1, q2;

    if (idx >= atomic_load_explicit(&k->clog_head, memory_order_acquire))
        return -ENOENT;
    q1 = atomic_load_explicit(&s->seq, memory_order_acquire);
    if (q1 != idx + 1)
        return q1 > idx + 1 || q1 == 0 ? -ESTALE : -ENOENT;
    /* (q1 0: below the head, it is being overwritten.) */
    e->srv_ts = s->srv_ts;
    e->slot = s->slot;
    e->len = s->len;
    if (e->len <= SHM_CLOG_REC)
        memcpy(e->rec, s->rec, e->len);
    atomic_thread_fence(memory_order_acquire);
    q2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
    if (q2 != q1)
        return -ESTALE;
    atomic_store_explicit(&e->seq, q1, memory_order_relaxed);
    return 0;
}
