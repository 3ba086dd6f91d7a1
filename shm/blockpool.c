/*
 * shm/blockpool.c: the notification block pool.  Life cycle and callers
 * are in blockpool.h.
 *
 * Release and reuse: a mask per block, and no free list.
 *   Each block header carries `holders`, one bit per worker that still
 *   holds the block.  A worker releases with one atomic fetch-AND of its
 *   own bit; the release that clears the last bit frees the block, and
 *   nothing else has to happen for that: the broker's allocator treats
 *   "holders == 0 and not being filled" as free.  It walks the blocks like
 *   a clock hand from where it stopped, so with blocks released in about
 *   the order they were handed out (workers release at once) the block
 *   under the hand is free and alloc is O(1); a block a slow worker still
 *   holds is passed over (counted in sh->skipped), not waited for.  A full
 *   turn finding nothing is exhaustion (-ENOSPC, counted).
 *   Why not a free list fed by releasers (a return ring per worker, or a
 *   lock-free stack)?  Then a release is two steps, "drop the count" and
 *   "hand the index back", and a worker killed between them leaks the
 *   block with nobody able to tell; a lock-free stack with many pushers
 *   and one popper also needs ABA tags.  Here a release is one atomic
 *   instruction: whatever instruction a worker dies on, the block is
 *   either still marked as held by it (reclaim clears the bit) or
 *   released.  Workers never write anything but their own bit and their
 *   own counter row; the broker never waits on a worker.
 *
 * Ordering contract.
 *  (1) Fill -> read.  The broker writes the records, used, nrecs and gen,
 *      then release-stores holders (publish), then pushes the handle
 *      (another release, ring.c).  A worker acquire-loads the ring tail and
 *      holders before it reads a record.  [publish release -> open acquire]
 *  (2) Read -> reuse.  A worker's reads of a block come before its
 *      fetch-AND (release).  The broker acquire-loads holders and reuses
 *      the block only when it reads 0; all the releases that cleared bits
 *      form one release sequence (RMWs on one word), so the broker's
 *      acquire synchronises with every one of them: every holder's reads
 *      happen before the broker's rewrite.  [release RMWs -> alloc acquire]
 *  (3) Stale handles.  gen changes on every alloc, before the next
 *      publish.  open/release load gen, then holders (acquire), then gen
 *      again: a handle passes only if both gen loads match and w's bit is
 *      set.  If the bit seen belonged to a later incarnation, the acquire
 *      on holders pairs with that publish's release, so the second gen
 *      load sees the new gen and the handle is refused.  A handle that
 *      passes is held by w, so no one else can clear w's bit and the block
 *      cannot be recycled before w's own release.
 *
 * Counters: the broker's on their own line; each worker writes only its
 * own row (single-writer load + store, no shared atomic counter).
 */
#include "blockpool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static uint32_t shm_blockpool_norm_size(uint32_t block_size);
static int shm_blockpool_lay(void *mem, uint64_t avail, uint32_t nblocks,
                             uint32_t block_size, bool zeroed);
static inline struct shm_block *shm_blockpool_block(
    const struct shm_blockpool_ref *p, uint32_t i);
static inline void shm_blockpool_count(_Atomic uint64_t *c, uint64_t n);
static struct shm_block *shm_blockpool_filling(
    const struct shm_blockpool_ref *p, struct shm_block_handle h);
static int shm_blockpool_check(struct shm_blockpool_ref *p,
                               struct shm_block_handle h, uint32_t worker,
                               struct shm_block **bp);

static uint32_t
shm_blockpool_norm_size(uint32_t block_size)
{
    if (block_size > SHM_BLOCK_SIZE_MAX)
        block_size = SHM_BLOCK_SIZE_MAX;
    if (block_size < SHM_BLOCK_SIZE_MIN)
        block_size = SHM_BLOCK_SIZE_MIN;
    return (block_size + SHM_CACHELINE - 1) & ~(uint32_t)(SHM_CACHELINE - 1);
}

static inline struct shm_block *
shm_blockpool_block(const struct shm_blockpool_ref *p, uint32_t i)
{
    return (struct shm_block *)(p->blocks + (size_t)i * p->block_size);
}

/* A single-writer counter: no RMW needed. */
static inline void
shm_blockpool_count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(
        c, atomic_load_explicit(c, memory_order_relaxed) + n,
        memory_order_relaxed);
}

uint64_t
shm_blockpool_bytes(uint32_t nblocks, uint32_t block_size)
{
    if (nblocks == 0)
        return 0;
    if (nblocks > SHM_BLOCKS_MAX)
        nblocks = SHM_BLOCKS_MAX;
    return sizeof(struct shm_blockpool)
           + (uint64_t)nblocks * shm_blockpool_norm_size(block_size);
}

uint32_t
shm_blockpool_capacity(uint32_t block_size)
{
    return shm_blockpool_norm_size(block_size) - sizeof(struct shm_block);
}

static int
shm_blockpool_lay(void *mem, uint64_t avail, uint32_t nblocks,
                  uint32_t block_size, bool zeroed)
{
    struct shm_blockpool *sh = mem;
    uint32_t              bs = shm_blockpool_norm_size(block_size);
    uint8_t              *blocks;

    if (nblocks == 0 || nblocks > SHM_BLOCKS_MAX
        || block_size > SHM_BLOCK_SIZE_MAX
        || shm_blockpool_bytes(nblocks, bs) > avail
        || (uintptr_t)mem % SHM_CACHELINE != 0)
        return -EINVAL;
    memset(sh, 0, sizeof(*sh));
    sh->nblocks = nblocks;
    sh->block_size = bs;
    sh->blocks_off = sizeof(*sh);
    blocks = (uint8_t *)mem + sh->blocks_off;
    for (uint32_t i = 0; !zeroed && i < nblocks; i++) {
        struct shm_block *b = (struct shm_block *)(blocks + (size_t)i * bs);

        memset(b, 0, sizeof(*b));       /* gen 0, FREE, no holders */
    }
    sh->magic = SHM_BLOCKPOOL_MAGIC;
    return 0;
}

int
shm_blockpool_init(void *mem, uint64_t avail, uint32_t nblocks,
                   uint32_t block_size)
{
    return shm_blockpool_lay(mem, avail, nblocks, block_size, false);
}

int
shm_blockpool_init_zeroed(void *mem, uint64_t avail, uint32_t nblocks,
                          uint32_t block_size)
{
    return shm_blockpool_lay(mem, avail, nblocks, block_size, true);
}

int
shm_blockpool_attach(struct shm_blockpool_ref *p, void *mem, uint64_t avail)
{
    struct shm_blockpool *sh = mem;
    uint32_t              n, bs;
    uint64_t              off;

    memset(p, 0, sizeof(*p));
    if (mem == NULL || avail < sizeof(*sh)
        || (uintptr_t)mem % SHM_CACHELINE != 0)
        return -EPROTO;
    n = sh->nblocks;
    bs = sh->block_size;
    off = sh->blocks_off;
    if (sh->magic != SHM_BLOCKPOOL_MAGIC || n == 0 || n > SHM_BLOCKS_MAX
        || bs < SHM_BLOCK_SIZE_MIN || bs > SHM_BLOCK_SIZE_MAX
        || bs % SHM_CACHELINE != 0 || off != sizeof(*sh)
        || off + (uint64_t)n * bs > avail)
        return -EPROTO;
    p->sh = sh;
    p->blocks = (uint8_t *)mem + off;
    p->nblocks = n;
    p->block_size = bs;
    p->hand = 0;
    return 0;
}

int
shm_blockpool_locate(struct shm_blockpool_ref *p, const struct shm_segment *s)
{
    const struct shm_region_desc *d = &s->hdr->regions[SHM_R_BLOCKS];

    memset(p, 0, sizeof(*p));
    if (d->size == 0)
        return -ENOENT;
    return shm_blockpool_attach(p, shm_segment_region(s, SHM_R_BLOCKS),
                                d->size);
}

int
shm_blockpool_prefault(const struct shm_blockpool_ref *p)
{
    if (p->blocks == NULL || p->nblocks == 0)
        return 0;
    return shm_mem_populate(p->blocks,
                            (uint64_t)p->nblocks * p->block_size, false);
}

/* ------------------------------------------------------- broker side */

int
shm_blockpool_alloc(struct shm_blockpool_ref *p, struct shm_block_handle *h)
{
    struct shm_blockpool *sh = p->sh;
    uint32_t              i = p->hand, gen;

    for (uint32_t probe = 0; probe < p->nblocks; probe++) {
        struct shm_block *b = shm_blockpool_block(p, i);
        uint32_t          at = i;

        i = i + 1 == p->nblocks ? 0 : i + 1;
        if (atomic_load_explicit(&b->state, memory_order_relaxed)
            == SHM_BS_FILLING)
            continue;
        /*
         * Pairs with the release fetch-AND in shm_blockpool_release() (and
         * the whole release sequence of them): every holder is done
         * reading before we rewrite the block.
         */
        if (atomic_load_explicit(&b->holders, memory_order_acquire) != 0)
            continue;
        gen = atomic_load_explicit(&b->gen, memory_order_relaxed) + 1;
        if (gen == 0)
            gen = 1;
        atomic_store_explicit(&b->gen, gen, memory_order_relaxed);
        atomic_store_explicit(&b->state, SHM_BS_FILLING, memory_order_relaxed);
        atomic_store_explicit(&b->used, 0, memory_order_relaxed);
        atomic_store_explicit(&b->nrecs, 0, memory_order_relaxed);
        atomic_store_explicit(&b->ms, 0, memory_order_relaxed);
        p->hand = i;
        shm_blockpool_count(&sh->allocs, 1);
        if (probe != 0)
            shm_blockpool_count(&sh->skipped, probe);
        h->index = at;
        h->gen = gen;
        return 0;
    }
    shm_blockpool_count(&sh->exhausted, 1);
    return -ENOSPC;
}

/* The block h if the broker is filling it, else NULL. */
static struct shm_block *
shm_blockpool_filling(const struct shm_blockpool_ref *p,
                      struct shm_block_handle h)
{
    struct shm_block *b;

    if (h.index >= p->nblocks)
        return NULL;
    b = shm_blockpool_block(p, h.index);
    if (atomic_load_explicit(&b->state, memory_order_relaxed)
            != SHM_BS_FILLING
        || atomic_load_explicit(&b->gen, memory_order_relaxed) != h.gen)
        return NULL;
    return b;
}

int
shm_blockpool_append(struct shm_blockpool_ref *p, struct shm_block_handle h,
                     uint32_t slot, const void *bytes, uint32_t len)
{
    uint8_t *at = shm_blockpool_reserve(p, h, len);

    if (at == NULL)
        return shm_blockpool_filling(p, h) == NULL ? -EINVAL : -ENOSPC;
    if (len != 0)
        memcpy(at, bytes, len);
    shm_blockpool_commit(p, h, slot, len);
    return 0;
}

uint8_t *
shm_blockpool_reserve(struct shm_blockpool_ref *p, struct shm_block_handle h,
                      uint32_t max)
{
    struct shm_block *b = shm_blockpool_filling(p, h);

    return b == NULL ? NULL
                     : shm_block_reserve(b, p->block_size - sizeof(*b), max);
}

void
shm_blockpool_commit(struct shm_blockpool_ref *p, struct shm_block_handle h,
                     uint32_t slot, uint32_t len)
{
    shm_block_commit(shm_blockpool_block(p, h.index), slot, len);
}

struct shm_block *
shm_blockpool_filling_block(const struct shm_blockpool_ref *p,
                            struct shm_block_handle h)
{
    return shm_blockpool_filling(p, h);
}

void
shm_blockpool_set_ms(struct shm_blockpool_ref *p, struct shm_block_handle h,
                     uint64_t ms)
{
    struct shm_block *b = shm_blockpool_filling(p, h);

    /* Published with the records (the release in publish). */
    if (b != NULL)
        atomic_store_explicit(&b->ms, ms, memory_order_relaxed);
}

uint32_t
shm_blockpool_nrecs(const struct shm_blockpool_ref *p,
                    struct shm_block_handle h)
{
    struct shm_block *b = shm_blockpool_filling(p, h);

    return b == NULL ? 0
                     : atomic_load_explicit(&b->nrecs, memory_order_relaxed);
}

int
shm_blockpool_publish(struct shm_blockpool_ref *p, struct shm_block_handle h,
                      uint64_t holders)
{
    struct shm_block *b = shm_blockpool_filling(p, h);

    if (b == NULL)
        return -EINVAL;
    atomic_store_explicit(&b->state, holders != 0 ? SHM_BS_LIVE : SHM_BS_FREE,
                          memory_order_relaxed);
    /*
     * Pairs with the acquire load of holders in shm_blockpool_check(): the
     * records, used and gen written above are visible to every holder.
     */
    atomic_store_explicit(&b->holders, holders, memory_order_release);
    shm_blockpool_count(&p->sh->published, 1);
    return 0;
}

int
shm_blockpool_disown(struct shm_blockpool_ref *p, struct shm_block_handle h,
                     uint32_t worker)
{
    struct shm_block *b;
    uint64_t          bit, old;

    if (h.index >= p->nblocks || worker >= SHM_WORKERS_MAX)
        return -EINVAL;
    b = shm_blockpool_block(p, h.index);
    bit = UINT64_C(1) << worker;
    if (atomic_load_explicit(&b->gen, memory_order_relaxed) != h.gen)
        return -ESTALE;
    /* The broker never read the block for w: no ordering to give. */
    old = atomic_fetch_and_explicit(&b->holders, ~bit, memory_order_relaxed);
    if ((old & bit) == 0)
        return -ESTALE;
    shm_blockpool_count(&p->sh->disowned, 1);
    return 0;
}

uint32_t
shm_blockpool_reclaim_worker(struct shm_blockpool_ref *p, uint32_t worker)
{
    uint64_t bit, old;
    uint32_t n = 0;

    if (worker >= SHM_WORKERS_MAX)
        return 0;
    bit = UINT64_C(1) << worker;
    for (uint32_t i = 0; i < p->nblocks; i++) {
        struct shm_block *b = shm_blockpool_block(p, i);

        if ((atomic_load_explicit(&b->holders, memory_order_relaxed) & bit)
            == 0)
            continue;
        /* The worker is dead: nothing of its to order. */
        old = atomic_fetch_and_explicit(&b->holders, ~bit,
                                        memory_order_relaxed);
        if (old & bit)
            n++;
    }
    shm_blockpool_count(&p->sh->reclaimed, n);
    return n;
}

uint32_t
shm_blockpool_free_count(const struct shm_blockpool_ref *p)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < p->nblocks; i++) {
        struct shm_block *b = shm_blockpool_block(p, i);

        if (atomic_load_explicit(&b->state, memory_order_relaxed)
                != SHM_BS_FILLING
            && atomic_load_explicit(&b->holders, memory_order_relaxed) == 0)
            n++;
    }
    return n;
}

/* ------------------------------------------------------- worker side */

/* Is h a block worker w holds?  0 with *bp, or -EINVAL / -ESTALE. */
static int
shm_blockpool_check(struct shm_blockpool_ref *p, struct shm_block_handle h,
                    uint32_t worker, struct shm_block **bp)
{
    struct shm_block *b;
    uint64_t          holders;

    if (h.index >= p->nblocks || worker >= SHM_WORKERS_MAX)
        return -EINVAL;
    b = shm_blockpool_block(p, h.index);
    if (h.gen == 0
        || atomic_load_explicit(&b->gen, memory_order_relaxed) != h.gen)
        return -ESTALE;
    /* Pairs with the release store in shm_blockpool_publish(). */
    holders = atomic_load_explicit(&b->holders, memory_order_acquire);
    if ((holders & (UINT64_C(1) << worker)) == 0)
        return -ESTALE;
    /* The bit may be a later incarnation's: then gen moved (contract 3). */
    if (atomic_load_explicit(&b->gen, memory_order_relaxed) != h.gen)
        return -ESTALE;
    *bp = b;
    return 0;
}

int
shm_blockpool_open(struct shm_blockpool_ref *p, struct shm_block_handle h,
                   uint32_t worker, struct shm_block_iter *it)
{
    struct shm_block *b = NULL;
    uint32_t          used;
    int               rc;

    it->p = it->end = NULL;
    it->corrupt = NULL;
    rc = shm_blockpool_check(p, h, worker, &b);
    if (rc != 0) {
        if (worker < SHM_WORKERS_MAX)
            shm_blockpool_count(&p->sh->w[worker].stale, 1);
        return rc;
    }
    it->corrupt = &p->sh->w[worker].corrupt;
    used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (used > p->block_size - sizeof(*b)) {
        shm_blockpool_count(it->corrupt, 1);
        return -EPROTO;
    }
    it->p = (const uint8_t *)b + sizeof(*b);
    it->end = it->p + used;
    it->ms = atomic_load_explicit(&b->ms, memory_order_relaxed);
    return 0;
}

int
shm_blockpool_next(struct shm_block_iter *it, uint32_t *slot,
                   const uint8_t **bytes, uint32_t *len)
{
    struct shm_block_rec rec;
    size_t               left = (size_t)(it->end - it->p), stride;

    if (left == 0)
        return 0;
    if (left < sizeof(rec))
        goto corrupt;
    memcpy(&rec, it->p, sizeof(rec));
    stride = sizeof(rec) + (((size_t)rec.len + SHM_BLOCK_REC_ALIGN - 1)
                            & ~(size_t)(SHM_BLOCK_REC_ALIGN - 1));
    if (rec.len > left - sizeof(rec) || stride > left)
        goto corrupt;
    *slot = rec.slot;
    *len = rec.len;
    *bytes = it->p + sizeof(rec);
    it->p += stride;
    return 1;

corrupt:
    it->p = it->end;            /* refuse the rest of the block */
    if (it->corrupt != NULL)
        shm_blockpool_count(it->corrupt, 1);
    return -EPROTO;
}

int
shm_blockpool_release(struct shm_blockpool_ref *p, struct shm_block_handle h,
                      uint32_t worker)
{
    struct shm_blockpool_wstats *ws;
    struct shm_block            *b = NULL;
    uint64_t                     bit = UINT64_C(1) << (worker & 63), old;
    int                          rc;

    rc = shm_blockpool_check(p, h, worker, &b);
    if (rc != 0) {
        if (worker < SHM_WORKERS_MAX)
            shm_blockpool_count(&p->sh->w[worker].stale, 1);
        return rc;
    }
    ws = &p->sh->w[worker];
    /*
     * Our reads of the block are done; pairs with the acquire load of
     * holders in shm_blockpool_alloc().
     */
    old = atomic_fetch_and_explicit(&b->holders, ~bit, memory_order_release);
    if ((old & bit) == 0) {
        /* Only a reclaim of a live worker (a broker bug) gets here. */
        shm_blockpool_count(&ws->stale, 1);
        return -ESTALE;
    }
    shm_blockpool_count(&ws->released, 1);
    if (old == bit)
        shm_blockpool_count(&ws->freed, 1);
    return 0;
}
