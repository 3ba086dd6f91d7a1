/*
 * shm/fanout.c: the SHM_R_FANOUT region: lost marks and fan-out counters
 * (record formats and the lost-value protocol: fanout.h).
 *
 * Ordering contract.
 *  (1) Lost marks.  The broker fetch-ORs worker w's bit into the lost mask
 *      of each slot it could not deliver, then release-stores w's
 *      lost_seq + 1.  Worker w acquire-loads lost_seq; when it moved, the
 *      marks set before it are visible, and it fetch-ANDs its bit off each
 *      one it finds (an RMW: a mark set again meanwhile is either taken
 *      now or left set for the next scan, never lost).
 *      [lost_publish release -> lost_seq acquire]
 *  (2) A dead worker's marks are cleared by the broker only after the
 *      worker was reaped and before one is started in its slot, like
 *      shm_blockpool_reclaim_worker().
 */
#include "fanout.h"

#include <errno.h>
#include <string.h>

uint64_t
shm_fanout_region_bytes(const struct shm_plan *p)
{
    if (p->ring_workers == 0)
        return 0;
    return sizeof(struct shm_fanout) + (uint64_t)p->slots * sizeof(uint64_t);
}

int
shm_fanout_region_init(void *mem, uint64_t avail, uint32_t nslots)
{
    struct shm_fanout *sh = mem;

    if ((uintptr_t)mem % SHM_CACHELINE != 0
        || sizeof(*sh) + (uint64_t)nslots * sizeof(uint64_t) > avail)
        return -EINVAL;
    memset(sh, 0, sizeof(*sh));
    sh->nslots = nslots;
    sh->lost_off = sizeof(*sh);
    memset((uint8_t *)mem + sh->lost_off, 0,
           (size_t)nslots * sizeof(uint64_t));
    sh->magic = SHM_FANOUT_MAGIC;
    return 0;
}

int
shm_fanout_locate(struct shm_fanout_ref *f, const struct shm_segment *s)
{
    const struct shm_region_desc *d = &s->hdr->regions[SHM_R_FANOUT];
    struct shm_fanout            *sh;
    uint32_t                      n;

    memset(f, 0, sizeof(*f));
    if (d->size == 0)
        return -ENOENT;
    if (d->size < sizeof(*sh))
        return -EPROTO;
    sh = shm_segment_region(s, SHM_R_FANOUT);
    n = sh->nslots;
    if (sh->magic != SHM_FANOUT_MAGIC || sh->lost_off != sizeof(*sh)
        || sizeof(*sh) + (uint64_t)n * sizeof(uint64_t) > d->size)
        return -EPROTO;
    f->sh = sh;
    f->lost = (_Atomic uint64_t *)((uint8_t *)sh + sh->lost_off);
    f->nslots = n;
    return 0;
}

void
shm_fanout_lost_mark(struct shm_fanout_ref *f, uint32_t slot, uint64_t mask)
{
    if (slot >= f->nslots || mask == 0)
        return;
    /* Ordered before the publish by its release store. */
    atomic_fetch_or_explicit(&f->lost[slot], mask, memory_order_relaxed);
}

void
shm_fanout_lost_publish(struct shm_fanout_ref *f, uint32_t worker)
{
    _Atomic uint64_t *seq;

    if (worker >= SHM_WORKERS_MAX)
        return;
    seq = &f->sh->w[worker].lost_seq;
    /* Pairs with the acquire load in shm_fanout_lost_seq(). */
    atomic_store_explicit(seq,
                          atomic_load_explicit(seq, memory_order_relaxed) + 1,
                          memory_order_release);
}

uint64_t
shm_fanout_lost_seq(const struct shm_fanout_ref *f, uint32_t worker)
{
    if (worker >= SHM_WORKERS_MAX)
        return 0;
    /* Pairs with the release store in shm_fanout_lost_publish(). */
    return atomic_load_explicit(&f->sh->w[worker].lost_seq,
                                memory_order_acquire);
}

bool
shm_fanout_lost_take(struct shm_fanout_ref *f, uint32_t slot, uint32_t worker)
{
    uint64_t bit, old;

    if (slot >= f->nslots || worker >= SHM_WORKERS_MAX)
        return false;
    bit = UINT64_C(1) << worker;
    if ((atomic_load_explicit(&f->lost[slot], memory_order_relaxed) & bit)
        == 0)
        return false;
    old = atomic_fetch_and_explicit(&f->lost[slot], ~bit,
                                    memory_order_relaxed);
    return (old & bit) != 0;
}

void
shm_fanout_forget_worker(struct shm_fanout_ref *f, uint32_t worker)
{
    uint64_t bit;

    if (worker >= SHM_WORKERS_MAX)
        return;
    bit = UINT64_C(1) << worker;
    for (uint32_t i = 0; i < f->nslots; i++)
        if (atomic_load_explicit(&f->lost[i], memory_order_relaxed) & bit)
            atomic_fetch_and_explicit(&f->lost[i], ~bit,
                                      memory_order_relaxed);
}

void
shm_fanout_event_interest(struct shm_fanout_ref *f, uint32_t worker, bool on)
{
    uint64_t bit;

    if (f->sh == NULL || worker >= SHM_WORKERS_MAX)
        return;
    bit = UINT64_C(1) << worker;
    /* seq_cst: the broker's fence-then-load sees it, or the event was
     * made before the item existed (docs/architecture.md §2's argument). */
    if (on)
        atomic_fetch_or(&f->sh->event_interest, bit);
    else
        atomic_fetch_and(&f->sh->event_interest, ~bit);
}

uint64_t
shm_fanout_event_mask(const struct shm_fanout_ref *f)
{
    if (f->sh == NULL)
        return 0;
    atomic_thread_fence(memory_order_seq_cst);
    return atomic_load_explicit(&f->sh->event_interest, memory_order_relaxed);
}

void
shm_fanout_event_lost(struct shm_fanout_ref *f, uint32_t worker, uint32_t n)
{
    if (f->sh == NULL || worker >= SHM_WORKERS_MAX)
        return;
    /* Ordered before the lost_seq bump by its release store. */
    atomic_fetch_add_explicit(&f->sh->w[worker].events_lost, n,
                              memory_order_relaxed);
}

uint64_t
shm_fanout_events_lost(const struct shm_fanout_ref *f, uint32_t worker)
{
    if (f->sh == NULL || worker >= SHM_WORKERS_MAX)
        return 0;
    return atomic_load_explicit(&f->sh->w[worker].events_lost,
                                memory_order_relaxed);
}

int
shm_fo_ev_parse(const uint8_t *p, uint32_t len, struct shm_fo_ev *ev,
                struct shm_fo_ev_field *f, uint32_t max)
{
    uint32_t off = sizeof(*ev);

    if (len < sizeof(*ev))
        return -1;
    memcpy(ev, p, sizeof(*ev));
    if (ev->nfields > max)
        return -1;
    for (uint32_t i = 0; i < ev->nfields; i++) {
        uint16_t pl;
        uint32_t vl;

        if (len - off < 2)
            return -1;
        memcpy(&pl, p + off, 2);
        off += 2;
        if (len - off < (uint32_t)pl + 4u)
            return -1;
        f[i].path = (const char *)p + off;
        f[i].plen = pl;
        off += pl;
        memcpy(&vl, p + off, 4);
        off += 4;
        if (vl < 1 || len - off < vl)
            return -1;
        f[i].var = p + off;
        f[i].vlen = vl;
        off += vl;
    }
    return off == len ? (int)ev->nfields : -1;
}

size_t
shm_fo_dv_finish(uint8_t *p, const struct shm_value *m)
{
    return shm_fo_dv_finish_len(p, m->len, m);
}

size_t
shm_fo_dv_finish_len(uint8_t *p, uint32_t len, const struct shm_value *m)
{
    uint8_t *q = p + 1 + len;
    uint8_t  mask = len != 0 ? SHM_FO_DV_VALUE : 0;

    /* Little-endian host: the wire order (Part 6 §5.2.2). */
    if (m->status != 0) {
        mask |= SHM_FO_DV_STATUS;
        memcpy(q, &m->status, 4);
        q += 4;
    }
    if (m->flags & SHM_VF_SOURCE_TS) {
        mask |= SHM_FO_DV_SOURCE_TS;
        memcpy(q, &m->source_ts, 8);
        q += 8;
        if (m->source_ps != 0) {
            mask |= SHM_FO_DV_SOURCE_PS;
            memcpy(q, &m->source_ps, 2);
            q += 2;
        }
    }
    if (m->flags & SHM_VF_SERVER_TS) {
        mask |= SHM_FO_DV_SERVER_TS;
        memcpy(q, &m->server_ts, 8);
        q += 8;
        if (m->server_ps != 0) {
            mask |= SHM_FO_DV_SERVER_PS;
            memcpy(q, &m->server_ps, 2);
            q += 2;
        }
    }
    p[0] = mask;
    return (size_t)(q - p);
}
