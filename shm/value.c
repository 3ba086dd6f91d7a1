/*
 * shm/value.c: value slots (seqlock) and the value heap.  The ordering
 * contract is at the top of value.h.
 *
 * The value heap is a bump region carved into power-of-two blocks with one
 * free list per size class.  Only the broker allocates and frees, so the
 * allocator needs no atomics; a block freed while a reader still copies from
 * it is harmless, because the block was freed only after its slot's
 * sequence moved on, and the reader re-checks that sequence.
 */
#include "value.h"

#include <errno.h>
#include <string.h>

static int shm_vheap_class(uint32_t len);
static uint32_t shm_vheap_alloc(struct shm_values *v, int cls);
static void shm_vheap_free(struct shm_values *v, uint32_t off);
static inline void shm_value_copy_inl(uint8_t *dst, const uint8_t *src,
                                      uint32_t len);

static inline void
shm_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void
shm_values_plan(const struct shm_plan *p, uint64_t sizes[SHM_R_MAX])
{
    sizes[SHM_R_SLOTS] = (uint64_t)p->slots * sizeof(struct shm_value_slot);
    sizes[SHM_R_VHEAP] = p->vheap;
    sizes[SHM_R_INTEREST] = (uint64_t)p->slots * sizeof(uint64_t);
}

void
shm_values_plan_init(struct shm_segment *s, const struct shm_plan *p)
{
    s->hdr->nslots = p->slots;
    s->hdr->vheap.size = p->vheap;
    s->hdr->vheap.top = 0;
}

int
shm_values_plan_check(const struct shm_header *h)
{
    if ((uint64_t)h->nslots * sizeof(struct shm_value_slot)
            > h->regions[SHM_R_SLOTS].size
        || (uint64_t)h->nslots * sizeof(uint64_t)
               > h->regions[SHM_R_INTEREST].size)
        return -EPROTO;
    return 0;
}

int
shm_values_open(struct shm_values *v, const struct shm_segment *s)
{
    struct shm_header *h = s->hdr;

    v->hdr = h;
    v->slots = shm_segment_region(s, SHM_R_SLOTS);
    v->heap = shm_segment_region(s, SHM_R_VHEAP);
    v->heap_size = h->regions[SHM_R_VHEAP].size;
    v->nslots = h->nslots;
    v->interest = shm_segment_region(s, SHM_R_INTEREST);
    if ((uint64_t)v->nslots * sizeof(struct shm_value_slot)
        > h->regions[SHM_R_SLOTS].size)
        return -EPROTO;
    return 0;
}

/* The smallest class whose block holds a header and len bytes, or -1. */
static int
shm_vheap_class(uint32_t len)
{
    uint64_t need = (uint64_t)len + sizeof(struct shm_vblock);

    for (int c = 0; c < SHM_VHEAP_CLASSES; c++)
        if (need <= (UINT64_C(1) << (SHM_VHEAP_MIN_SHIFT + c)))
            return c;
    return -1;
}

static uint32_t
shm_vheap_alloc(struct shm_values *v, int cls)
{
    struct shm_vheap  *vh = &v->hdr->vheap;
    struct shm_vblock *b;
    uint64_t           size = UINT64_C(1) << (SHM_VHEAP_MIN_SHIFT + cls);
    uint32_t           off = vh->free[cls];

    if (off != 0) {
        b = (struct shm_vblock *)(v->heap + off);
        vh->free[cls] = b->next;
    } else {
        if (vh->top == 0)
            vh->top = 1u << SHM_VHEAP_MIN_SHIFT;    /* 0 means "none" */
        if (vh->top + size > v->heap_size || vh->top + size > UINT32_MAX)
            return 0;
        off = (uint32_t)vh->top;
        vh->top += size;
        b = (struct shm_vblock *)(v->heap + off);
    }
    b->cls = (uint32_t)cls;
    b->next = 0;
    vh->blocks_used++;
    vh->bytes_used += size;
    return off;
}

static void
shm_vheap_free(struct shm_values *v, uint32_t off)
{
    struct shm_vheap  *vh = &v->hdr->vheap;
    struct shm_vblock *b = (struct shm_vblock *)(v->heap + off);

    b->next = vh->free[b->cls];
    vh->free[b->cls] = off;
    vh->blocks_used--;
    vh->bytes_used -= UINT64_C(1) << (SHM_VHEAP_MIN_SHIFT + b->cls);
}

/*
 * len (1..SHM_VALUE_INLINE) bytes into a slot's inline bytes without a
 * call: shm_value_copy16() (shm/value.h) up to 16 bytes, three
 * overlapping words above, never reading past src + len (a reader
 * ignores the inline bytes past len).  Most values are 2..9 bytes.
 */
static inline void
shm_value_copy_inl(uint8_t *dst, const uint8_t *src, uint32_t len)
{
    uint64_t a, b, c;

    if (len <= 16) {
        shm_value_copy16(dst, src, len);
        return;
    }
    memcpy(&a, src, 8);
    memcpy(&b, src + 8, 8);
    memcpy(&c, src + len - 8, 8);
    memcpy(dst, &a, 8);
    memcpy(dst + 8, &b, 8);
    memcpy(dst + len - 8, &c, 8);
}

int
shm_value_write(struct shm_values *v, uint32_t i, const void *bytes,
                uint32_t len, const struct shm_value *meta)
{
    struct shm_value_slot *s;
    uint32_t               seq, old_flags, old_heap, heap = 0, flags;
    int                    cls;

    if (i >= v->nslots)
        return -EINVAL;
    s = &v->slots[i];
    if (len > SHM_VALUE_INLINE) {
        cls = shm_vheap_class(len);
        if (cls < 0)
            return -ENOSPC;
        heap = shm_vheap_alloc(v, cls);
        if (heap == 0)
            return -ENOSPC;
    }
    old_flags = atomic_load_explicit(&s->flags, memory_order_relaxed);
    old_heap = atomic_load_explicit(&s->heap, memory_order_relaxed);
    flags = (meta->flags & (SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS))
            | (heap != 0 ? SHM_VF_HEAP : 0);

    /*
     * seq | 1 is odd: seq + 1 normally, seq itself when a writer died in
     * the middle of a write and left it odd.  Incrementing an odd seq would
     * show this write's half-copied fields under an even seq and leave the
     * slot odd (stale to every reader) once it completed.
     */
    seq = atomic_load_explicit(&s->seq, memory_order_relaxed) | 1u;
    atomic_store_explicit(&s->seq, seq, memory_order_relaxed);
    /* Make the odd sequence visible before any field changes. */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&s->len, len, memory_order_relaxed);
    atomic_store_explicit(&s->heap, heap, memory_order_relaxed);
    atomic_store_explicit(&s->status, meta->status, memory_order_relaxed);
    atomic_store_explicit(&s->source_ts, meta->source_ts,
                          memory_order_relaxed);
    atomic_store_explicit(&s->server_ts, meta->server_ts,
                          memory_order_relaxed);
    atomic_store_explicit(&s->source_ps, meta->source_ps,
                          memory_order_relaxed);
    atomic_store_explicit(&s->server_ps, meta->server_ps,
                          memory_order_relaxed);
    atomic_store_explicit(&s->flags, flags, memory_order_relaxed);
    if (heap != 0)
        memcpy(v->heap + heap + sizeof(struct shm_vblock), bytes, len);
    else if (len != 0)
        shm_value_copy_inl(s->inl, bytes, len);
    /* Publish; pairs with the acquire load in shm_value_read(). */
    atomic_store_explicit(&s->seq, seq + 1, memory_order_release);

    if ((old_flags & SHM_VF_HEAP) && old_heap != 0)
        shm_vheap_free(v, old_heap);
    return 0;
}

int
shm_value_read(const struct shm_values *v, uint32_t i, struct shm_value *out,
               void *buf, size_t cap)
{
    const struct shm_value_slot *s;

    if (i >= v->nslots)
        return -EINVAL;
    s = &v->slots[i];
    for (int tries = 0; tries < SHM_VALUE_RETRIES; tries++) {
        uint32_t seq, len, heap, flags;
        int      rc = 0;

        seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq & 1) {
            shm_cpu_relax();
            continue;
        }
        len = atomic_load_explicit(&s->len, memory_order_relaxed);
        heap = atomic_load_explicit(&s->heap, memory_order_relaxed);
        flags = atomic_load_explicit(&s->flags, memory_order_relaxed);
        out->status = atomic_load_explicit(&s->status, memory_order_relaxed);
        out->source_ts = atomic_load_explicit(&s->source_ts,
                                              memory_order_relaxed);
        out->server_ts = atomic_load_explicit(&s->server_ts,
                                              memory_order_relaxed);
        out->source_ps = atomic_load_explicit(&s->source_ps,
                                              memory_order_relaxed);
        out->server_ps = atomic_load_explicit(&s->server_ps,
                                              memory_order_relaxed);
        out->flags = flags & (SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS);
        out->len = len;
        if (!(flags & SHM_VF_HEAP) && len <= SHM_VALUE_INLINE
            && cap >= SHM_VALUE_INLINE) {
            /* The common small value: the whole inline array, a fixed-size
             * copy (two moves) instead of a memcpy call of len bytes. */
            memcpy(buf, s->inl, SHM_VALUE_INLINE);
        } else if (len > cap) {
            rc = -ENOSPC;
        } else if (flags & SHM_VF_HEAP) {
            /* Never trust what we read before the re-check: bound it. */
            if ((uint64_t)heap + sizeof(struct shm_vblock) + len
                    > v->heap_size || heap == 0)
                rc = -EAGAIN;
            else
                memcpy(buf, v->heap + heap + sizeof(struct shm_vblock), len);
        } else if (len > SHM_VALUE_INLINE) {
            rc = -EAGAIN;
        } else if (len != 0) {
            memcpy(buf, s->inl, len);
        }
        /* Order the copies before the re-check (ck_sequence). */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) == seq) {
            if (rc != -EAGAIN)
                return rc;
            return -EAGAIN;         /* consistent but corrupt: stale */
        }
        shm_cpu_relax();
    }
    return -EAGAIN;
}
