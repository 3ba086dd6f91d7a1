/*
 * shm/pki.c: the PKI region: header, list halves, rejected mailboxes.
 */
#include "pki.h"

#include <errno.h>
#include <string.h>

static uint64_t shm_pki_align(uint64_t x);
static uint64_t shm_pki_half_bytes(uint64_t list_bytes);

static uint64_t
shm_pki_align(uint64_t x)
{
    return (x + SHM_CACHELINE - 1) & ~(uint64_t)(SHM_CACHELINE - 1);
}

static uint64_t
shm_pki_half_bytes(uint64_t list_bytes)
{
    return shm_pki_align(sizeof(struct shm_pki_half) + list_bytes);
}

uint64_t
shm_pki_region_bytes(const struct shm_plan *p)
{
    uint64_t n;

    if (p->pki_list_bytes == 0)
        return 0;
    n = shm_pki_align(sizeof(struct shm_pki));
    n += 2 * shm_pki_half_bytes(p->pki_list_bytes);
    n += (uint64_t)p->pki_workers * SHM_PKI_MBOX_SLOTS
         * sizeof(struct shm_pki_mbox);
    return n;
}

void
shm_pki_region_init(void *region, const struct shm_plan *p)
{
    struct shm_pki *k = region;
    uint64_t        off = shm_pki_align(sizeof(struct shm_pki));

    k->workers = p->pki_workers;
    k->list_bytes = p->pki_list_bytes;
    k->half_off[0] = off;
    off += shm_pki_half_bytes(p->pki_list_bytes);
    k->half_off[1] = off;
    off += shm_pki_half_bytes(p->pki_list_bytes);
    k->mbox_off = off;
    atomic_store_explicit(&k->generation, 0, memory_order_relaxed);
    k->magic = SHM_PKI_MAGIC;
}

struct shm_pki *
shm_pki_get(const struct shm_segment *s)
{
    struct shm_pki *k;
    uint64_t        size = s->hdr->regions[SHM_R_PKI].size;

    if (size < sizeof(struct shm_pki))
        return NULL;
    k = shm_segment_region(s, SHM_R_PKI);
    if (k->magic != SHM_PKI_MAGIC || k->cert_len > SHM_PKI_CERT_MAX
        || k->key_len > SHM_PKI_KEY_MAX || k->workers > SHM_WORKERS_MAX
        || k->mbox_off + (uint64_t)k->workers * SHM_PKI_MBOX_SLOTS
                             * sizeof(struct shm_pki_mbox) > size
        || k->half_off[1] + sizeof(struct shm_pki_half) + k->list_bytes
               > size)
        return NULL;
    return k;
}

struct shm_pki_half *
shm_pki_half(struct shm_pki *k, unsigned i)
{
    return (struct shm_pki_half *)((uint8_t *)k + k->half_off[i & 1]);
}

uint64_t
shm_pki_generation(struct shm_pki *k)
{
    return atomic_load_explicit(&k->generation, memory_order_acquire) / 2;
}

struct shm_pki_half *
shm_pki_publish_begin(struct shm_pki *k)
{
    uint64_t             g = atomic_load_explicit(&k->generation,
                                                  memory_order_relaxed);
    struct shm_pki_half *h = shm_pki_half(k, (unsigned)((g / 2 + 1) & 1));

    /* Odd: readers of the half we are about to overwrite (version g/2 -
     * 1's) will see the sequence move past 2 * version + 3 and retry. */
    atomic_store_explicit(&k->generation, (g | 1), memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    h->n = 0;
    h->n_users = 0;
    h->used = 0;
    return h;
}

int
shm_pki_publish_add(struct shm_pki *k, struct shm_pki_half *h,
                    enum shm_pki_kind kind, const uint8_t *der, size_t len)
{
    if (h->n >= SHM_PKI_BLOBS_MAX || len > k->list_bytes - h->used)
        return -ENOSPC;
    memcpy(h->data + h->used, der, len);
    h->blobs[h->n].kind = (uint32_t)kind;
    h->blobs[h->n].len = (uint32_t)len;
    h->blobs[h->n].off = h->used;
    h->n++;
    h->used += (len + 7) & ~(size_t)7;
    if (h->used > k->list_bytes)
        h->used = k->list_bytes;
    return 0;
}

void
shm_pki_publish_end(struct shm_pki *k)
{
    uint64_t g = atomic_load_explicit(&k->generation, memory_order_relaxed);

    atomic_store_explicit(&k->generation, (g | 1) + 1, memory_order_release);
}

int
shm_pki_snapshot(struct shm_pki *k, void *out, size_t cap, uint64_t *gen)
{
    uint64_t             s = atomic_load_explicit(&k->generation,
                                                  memory_order_acquire);
    uint64_t             g = s / 2, g2;
    struct shm_pki_half *h = shm_pki_half(k, (unsigned)(g & 1));
    struct shm_pki_half *o = out;
    uint64_t             used;

    if (cap < sizeof(*h) + k->list_bytes)
        return -EINVAL;
    memcpy(o, h, sizeof(*h));
    used = o->used <= k->list_bytes ? o->used : k->list_bytes;
    memcpy(o->data, h->data, (size_t)used);
    atomic_thread_fence(memory_order_acquire);
    g2 = atomic_load_explicit(&k->generation, memory_order_relaxed);
    /* Version g + 1 writes the other half; g + 2 (sequence 2g + 3 on)
     * may have written ours. */
    if (g2 >= 2 * g + 3)
        return -EAGAIN;
    if (o->n > SHM_PKI_BLOBS_MAX)
        o->n = 0;
    if (o->n_users > SHM_USERS_MAX)
        o->n_users = 0;
    for (uint32_t i = 0; i < o->n; i++)
        if (o->blobs[i].off > used || o->blobs[i].len > used - o->blobs[i].off)
            o->blobs[i].len = 0;    /* torn: never read past our copy */
    *gen = g;
    return 0;
}

int
shm_pki_reject_post(struct shm_pki *k, unsigned w, const uint8_t *der,
                    size_t len)
{
    struct shm_pki_mbox *m;

    if (w >= k->workers)
        return -EINVAL;
    if (len > SHM_PKI_MBOX_DER)
        return -ENOSPC;
    m = (struct shm_pki_mbox *)((uint8_t *)k + k->mbox_off)
        + (size_t)w * SHM_PKI_MBOX_SLOTS;
    for (unsigned i = 0; i < SHM_PKI_MBOX_SLOTS; i++) {
        if (atomic_load_explicit(&m[i].full, memory_order_acquire) != 0)
            continue;
        memcpy(m[i].der, der, len);
        m[i].len = (uint32_t)len;
        atomic_store_explicit(&m[i].full, 1, memory_order_release);
        return 0;
    }
    return -ENOSPC;
}

struct shm_pki_mbox *
shm_pki_reject_next(struct shm_pki *k, unsigned w, unsigned *idx)
{
    struct shm_pki_mbox *m;

    if (w >= k->workers)
        return NULL;
    m = (struct shm_pki_mbox *)((uint8_t *)k + k->mbox_off)
        + (size_t)w * SHM_PKI_MBOX_SLOTS;
    for (; *idx < SHM_PKI_MBOX_SLOTS; (*idx)++) {
        if (atomic_load_explicit(&m[*idx].full, memory_order_acquire) != 0
            && m[*idx].len <= SHM_PKI_MBOX_DER)
            return &m[(*idx)++];
    }
    return NULL;
}

void
shm_pki_reject_done(struct shm_pki_mbox *m)
{
    atomic_store_explicit(&m->full, 0, memory_order_release);
}
