/*
 * shm/blockpool.h: fixed-size blocks of notification records in shared
 * memory, filled once by the broker and read by the workers it pushes them
 * to (docs/architecture.md §2 "Blocks return").
 *
 * Life of a block:
 *
 *   FREE --alloc--> FILLING --append*--> publish(holders) --> LIVE
 *     ^                                                        |
 *     +---- holders == 0 (each worker clears its own bit) ----+
 *
 * The broker (the only allocator) allocates a block, appends records
 * (slot, length, encoded DataValue), publishes it with the set of workers
 * it will push the handle to (a 64-bit mask: the refcount is its popcount),
 * then pushes the handle {index, gen} into each of those workers'
 * notification rings.  A worker opens the handle, copies what it needs out
 * of the records and releases it at once.  A block whose mask reached 0 is
 * free; the broker's allocator finds it there.  There is no free list.
 *
 * Contracts by caller:
 *   broker only:  alloc, append, publish, disown, reclaim_worker
 *   worker w:     open, next, release, each with its own index w
 *   anyone:       free_count (a scan, for stats and tests)
 *
 * When worker w dies, the broker, before starting one in its slot: stops
 * pushing to w, empties w's notification ring with
 * shm_ring_reset_dead_consumer(), then calls shm_blockpool_reclaim_worker()
 * to drop every reference w still held (in its ring or half-read).
 */
#ifndef SHM_BLOCKPOOL_H
#define SHM_BLOCKPOOL_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "layout.h"
#include "segment.h"

/* This process's handle on the pool. */
struct shm_blockpool_ref {
    struct shm_blockpool *sh;
    uint8_t              *blocks;       /* block 0 */
    uint32_t              nblocks;      /* copied and checked at attach */
    uint32_t              block_size;
    uint32_t              hand;         /* broker: where the next alloc looks */
};

/* A walk over one block's records (worker side). */
struct shm_block_iter {
    const uint8_t    *p;
    const uint8_t    *end;
    _Atomic uint64_t *corrupt;          /* the walker's counter */
    uint64_t          ms;               /* the block's time (its ms) */
};

/*
 * Bytes the pool region takes for nblocks blocks of block_size bytes; 0
 * when nblocks is 0.  Sizes past the limits are clamped here and refused
 * by shm_blockpool_init().
 */
uint64_t shm_blockpool_bytes(uint32_t nblocks, uint32_t block_size);

/* Record bytes a block of block_size can hold (block_size normalised). */
uint32_t shm_blockpool_capacity(uint32_t block_size);

/*
 * Creator only, before any peer attaches: lay out a pool of nblocks free
 * blocks in mem[avail].  block_size rounds up to a multiple of
 * SHM_CACHELINE, at least SHM_BLOCK_SIZE_MIN.  0; -EINVAL past the limits
 * or when it does not fit.
 */
int shm_blockpool_init(void *mem, uint64_t avail, uint32_t nblocks,
                       uint32_t block_size);

/*
 * shm_blockpool_init() for mem that is zero already (a fresh segment): the
 * blocks are not written (a zero header is a free block, generation 0),
 * so none of their pages is touched here.
 */
int shm_blockpool_init_zeroed(void *mem, uint64_t avail, uint32_t nblocks,
                              uint32_t block_size);

/* Attach to the pool in mem[avail]; -EPROTO unless its geometry fits. */
int shm_blockpool_attach(struct shm_blockpool_ref *p, void *mem,
                         uint64_t avail);

/* Attach to segment s's pool; -ENOENT when it has none; -EPROTO. */
int shm_blockpool_locate(struct shm_blockpool_ref *p,
                         const struct shm_segment *s);

/*
 * Map every page of p's blocks into this process now (both sides, at
 * start): the blocks are taken round-robin, so otherwise each page of
 * the pool costs each process a page fault the first time the hand
 * comes round, several seconds into a busy run.  Contents are not
 * changed.  0, or -errno when the kernel cannot (harmless: the faults
 * then come as they would have).
 */
int shm_blockpool_prefault(const struct shm_blockpool_ref *p);

/* ------------------------------------------------------- broker side */

/*
 * Take a free block for filling; *h is its handle (new generation).  0;
 * -ENOSPC when every block is held or being filled (counted in
 * sh->exhausted).
 */
int shm_blockpool_alloc(struct shm_blockpool_ref *p,
                        struct shm_block_handle *h);

/*
 * Append one record to the FILLING block h.  0; -ENOSPC when it does not
 * fit (publish this block, start another; a record longer than
 * shm_blockpool_capacity() - 8 never fits); -EINVAL when h is not a block
 * being filled.
 */
int shm_blockpool_append(struct shm_blockpool_ref *p,
                         struct shm_block_handle h, uint32_t slot,
                         const void *bytes, uint32_t len);

/*
 * The same in two steps, for a record written in place (no copy through
 * a buffer of the caller's): reserve returns where the record's bytes go
 * when up to max of them fit in the FILLING block h (NULL: they do not,
 * or h is not a block being filled); the caller writes them, then
 * commit appends them as slot's record of len <= max bytes.  Nothing
 * between the two may append to h.
 */
uint8_t *shm_blockpool_reserve(struct shm_blockpool_ref *p,
                               struct shm_block_handle h, uint32_t max);
void shm_blockpool_commit(struct shm_blockpool_ref *p,
                          struct shm_block_handle h, uint32_t slot,
                          uint32_t len);

/*
 * The same on the FILLING block's header itself, for the broker's
 * fan-out, which keeps it while it fills the block (a record per value
 * change: no handle checked per record): shm_blockpool_filling_block()
 * gives it (NULL: h is not a block being filled), cap is
 * shm_blockpool_capacity() of the pool's blocks.
 */
struct shm_block *shm_blockpool_filling_block(
    const struct shm_blockpool_ref *p, struct shm_block_handle h);

static inline uint8_t *
shm_block_reserve(struct shm_block *b, uint32_t cap, uint32_t max)
{
    uint32_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    uint64_t need = sizeof(struct shm_block_rec)
                    + (((uint64_t)max + SHM_BLOCK_REC_ALIGN - 1)
                       & ~(uint64_t)(SHM_BLOCK_REC_ALIGN - 1));

    if (need > (uint64_t)cap - used)
        return NULL;
    return (uint8_t *)b + sizeof(*b) + used + sizeof(struct shm_block_rec);
}

static inline void
shm_block_commit(struct shm_block *b, uint32_t slot, uint32_t len)
{
    struct shm_block_rec rec = { .slot = slot, .len = len };
    uint32_t             used = atomic_load_explicit(&b->used,
                                                     memory_order_relaxed);
    uint32_t             need = sizeof(rec)
                                + ((len + SHM_BLOCK_REC_ALIGN - 1)
                                   & ~(SHM_BLOCK_REC_ALIGN - 1));
    uint8_t             *at = (uint8_t *)b + sizeof(*b) + used;

    memcpy(at, &rec, sizeof(rec));
    /* Zero the padding (under SHM_BLOCK_REC_ALIGN bytes): blocks never
     * leak an older record's bytes. */
    for (uint32_t i = sizeof(rec) + len; i < need; i++)
        at[i] = 0;
    atomic_store_explicit(&b->used, used + need, memory_order_relaxed);
    atomic_store_explicit(
        &b->nrecs, atomic_load_explicit(&b->nrecs, memory_order_relaxed) + 1,
        memory_order_relaxed);
}

/*
 * Stamp the FILLING block h with the time of its changes (CLOCK_MONOTONIC
 * ms): what a worker that drains it late takes as their time.
 */
void shm_blockpool_set_ms(struct shm_blockpool_ref *p,
                          struct shm_block_handle h, uint64_t ms);

/* Records and bytes appended so far to the FILLING block h (0 if not). */
uint32_t shm_blockpool_nrecs(const struct shm_blockpool_ref *p,
                             struct shm_block_handle h);

/*
 * Make the FILLING block h readable by the workers whose bits are set in
 * holders; push h to exactly those afterwards.  holders == 0 frees the
 * block again.  0; -EINVAL when h is not a block being filled.
 */
int shm_blockpool_publish(struct shm_blockpool_ref *p,
                          struct shm_block_handle h, uint64_t holders);

/*
 * Drop worker w's reference to LIVE block h for it when pushing h to w
 * failed (ring full).  0; -ESTALE when w held no reference to h.
 */
int shm_blockpool_disown(struct shm_blockpool_ref *p,
                         struct shm_block_handle h, uint32_t worker);

/*
 * Drop every reference worker w holds, once w is dead and reaped (never
 * while it runs).  The number of references dropped (counted in
 * sh->reclaimed).
 */
uint32_t shm_blockpool_reclaim_worker(struct shm_blockpool_ref *p,
                                      uint32_t worker);

/* Blocks free right now (a scan over every block header). */
uint32_t shm_blockpool_free_count(const struct shm_blockpool_ref *p);

/* ------------------------------------------------------- worker side */

/*
 * Worker w: check that h is a block it holds and set *it to walk its
 * records.  0; -ESTALE when the block was recycled (generation) or w does
 * not hold it (already released, reclaimed, never pushed to w); -EINVAL for
 * an index past the pool or w past SHM_WORKERS_MAX; -EPROTO when the
 * block's length is past its end.  Stale and corrupt handles are counted
 * in w's row.
 */
int shm_blockpool_open(struct shm_blockpool_ref *p, struct shm_block_handle h,
                       uint32_t worker, struct shm_block_iter *it);

/*
 * The next record: 1 with *slot, *bytes (inside the block, valid until the
 * release) and *len; 0 at the end; -EPROTO when a record crosses the end
 * (counted; stop walking).
 */
int shm_blockpool_next(struct shm_block_iter *it, uint32_t *slot,
                       const uint8_t **bytes, uint32_t *len);

/*
 * Worker w: drop its reference to h (one atomic AND with release order).
 * The last holder's release frees the block.  0; -ESTALE / -EINVAL as for
 * open.
 */
int shm_blockpool_release(struct shm_blockpool_ref *p,
                          struct shm_block_handle h, uint32_t worker);

#endif /* SHM_BLOCKPOOL_H */
