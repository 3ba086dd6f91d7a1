/*
 * shm/ring.h: single-producer single-consumer rings in shared memory, and
 * the wake-up protocol that lets an idle consumer block without making a
 * busy producer pay a syscall per item (docs/architecture.md §3).
 *
 * struct shm_ring (layout.h) is the shared part; struct shm_ring_ref is this
 * process's handle on it: base pointers, geometry copied and checked at
 * attach (a peer that later scribbles on the shared size or mask cannot
 * make us index out of bounds), and cached indices.  A ref is used by one
 * side only: as producer (push, needs_bell) or as consumer (pop, sleep).
 *
 * The ordering contract is at the top of ring.c.  Consumer loop:
 *
 *     for (;;) {
 *         while ((n = shm_ring_pop_n_spsc(r, buf, N)) > 0)
 *             handle(buf, n);
 *         if (n == -EPROTO)
 *             break;                          corrupt ring: give up on it
 *         if (!shm_ring_sleep_prepare(r))
 *             continue;                       items arrived meanwhile
 *         poll(doorbell fd) / event loop;
 *         shm_doorbell_drain(bell);           reset the latch first,
 *         shm_ring_wake_clear(r);             then look at the ring again
 *     }
 *
 * Producer: push one item or a batch; after the last push of the batch (at
 * the latest before it sleeps itself), `if (shm_ring_needs_bell(r))
 * shm_doorbell_ring(bell);`.
 */
#ifndef SHM_RING_H
#define SHM_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "segment.h"

/* This process's handle on one ring. */
struct shm_ring_ref {
    struct shm_ring *sh;
    uint8_t         *slots;
    uint32_t         size;          /* copied from sh and checked at attach */
    uint32_t         mask;
    uint32_t         slot_size;
    uint32_t         head;          /* consumer: its index; producer: cache */
    uint32_t         tail;          /* producer: its index; consumer: cache */
    uint32_t         sleep_seq;     /* consumer: its consumer_sleeping */
    uint32_t         bell_seq;      /* producer: sleep it last rang for */
};

/*
 * Bytes a ring of `slots` slots of `slot_size` bytes takes, header
 * included (a multiple of SHM_CACHELINE); 0 when slots is not a power of
 * two in [SHM_RING_SLOTS_MIN, SHM_RING_SLOTS_MAX] or slot_size is not a
 * multiple of SHM_RING_SLOT_ALIGN in (0, SHM_RING_SLOT_MAX].
 */
uint64_t shm_ring_bytes(uint32_t slots, uint32_t slot_size);

/*
 * Creator only, before any peer attaches: lay out an empty ring in
 * mem[avail] (SHM_CACHELINE-aligned).  0; -EINVAL for a bad geometry or
 * too little room.
 */
int shm_ring_init(void *mem, uint64_t avail, uint32_t slots,
                  uint32_t slot_size);

/*
 * Attach to the ring in mem[avail], expecting slot_size-byte slots.  Reads
 * the geometry once and refuses it (-EPROTO) unless magic, size (a power of
 * two within the limits), mask and slot size agree and the slots fit in
 * avail.  Loads both indices: a respawned process continues where its
 * predecessor stopped.  Refuses indices further apart than size (-EPROTO).
 */
int shm_ring_attach(struct shm_ring_ref *r, void *mem, uint64_t avail,
                    uint32_t slot_size);

/*
 * Producer: copy one slot_size-byte item in.  0; -ENOSPC when full
 * (counted in sh->full); -EPROTO when the consumer's index is not within
 * size behind ours (a corrupt ring: nothing is written).
 */
int shm_ring_push_spsc(struct shm_ring_ref *r, const void *item);

/*
 * Producer: all n items (n * slot_size bytes) or none.  0; -ENOSPC when
 * fewer than n slots are free (counted); -EINVAL when n > size; -EPROTO as
 * above.  One index store for the batch.
 */
int shm_ring_push_n_spsc(struct shm_ring_ref *r, const void *items,
                         uint32_t n);

/*
 * Consumer: copy the oldest item out.  0; -EAGAIN when empty; -EPROTO when
 * the producer's index is more than size ahead of ours (nothing is read;
 * the ring stays refused until someone resets it).
 */
int shm_ring_pop_spsc(struct shm_ring_ref *r, void *item);

/*
 * Consumer: copy up to n items out (buffer of n * slot_size bytes).  The
 * count (>= 1); -EAGAIN when empty; -EPROTO as above.  One index store for
 * the batch.
 */
int shm_ring_pop_n_spsc(struct shm_ring_ref *r, void *items, uint32_t n);

/* Consumer: items waiting (0 on a corrupt ring: pop reports that). */
uint32_t shm_ring_count_spsc(struct shm_ring_ref *r);

/*
 * Producer: items pushed and not yet taken by the consumer (a fresh load
 * of its index; 0 on a corrupt ring).  Read-only: the cache is not moved.
 */
uint32_t shm_ring_backlog_spsc(const struct shm_ring_ref *r);

/*
 * Consumer, before blocking: mark itself sleeping, full fence, look at the
 * ring again.  true: nothing arrived, block now (a producer that publishes
 * from here on will be told to ring).  false: items arrived (or the ring is
 * corrupt), the mark is withdrawn; pop instead of blocking.
 */
bool shm_ring_sleep_prepare(struct shm_ring_ref *r);

/*
 * Consumer: shm_ring_sleep_prepare(), promising producers that it wakes
 * by wake_ms anyway (CLOCK_MONOTONIC ms; 0: no promise) and then looks at
 * the ring: shm_ring_needs_bell_by() may leave it unrung until then.
 */
bool shm_ring_sleep_prepare_by(struct shm_ring_ref *r, uint64_t wake_ms);

/* Consumer, after waking (and after draining the doorbell): unmark. */
void shm_ring_wake_clear(struct shm_ring_ref *r);

/*
 * Producer, after publishing: full fence, then true when the consumer is
 * asleep and has not been rung for this sleep yet: ring its doorbell.  At
 * most one true per sleep of the consumer (counted in sh->bells).
 */
bool shm_ring_needs_bell(struct shm_ring_ref *r);

/*
 * Producer: shm_ring_needs_bell(), except that a consumer asleep with a
 * promise (shm_ring_sleep_prepare_by) is left to it while now_ms is before
 * the promised time and fewer than max_wait items wait: false, counted in
 * sh->deferred, and a later call for the same sleep may still ring.
 */
bool shm_ring_needs_bell_by(struct shm_ring_ref *r, uint64_t now_ms,
                            uint32_t max_wait);

/*
 * Consumer: drop every waiting item (head := tail).  The number dropped;
 * 0 on a corrupt ring, which is reset to empty.
 */
uint32_t shm_ring_discard_spsc(struct shm_ring_ref *r);

/*
 * Producer, only once the consumer process is dead and reaped and before
 * one is started in its place: take over the consumer's fields to empty the
 * ring and clear its sleeping mark.  The number of items dropped.  (Any
 * block handles among them are the dead worker's references: the broker
 * drops those with shm_blockpool_reclaim_worker().)
 */
uint32_t shm_ring_reset_dead_consumer(struct shm_ring_ref *r);

/* ---------------------------------------------------- segment region */

/* Bytes SHM_R_RINGS needs for plan p (0: no rings). */
uint64_t shm_ring_region_bytes(const struct shm_plan *p);

/*
 * Creator: lay out the struct shm_rings table and every ring of plan p in
 * the region mem[avail].  0; -EINVAL for a plan past the limits.
 */
int shm_ring_region_init(void *mem, uint64_t avail, const struct shm_plan *p);

/*
 * Attach r to worker slot `worker`'s ring of `kind` in segment s.  0;
 * -ENOENT when the segment has no such ring; -EPROTO when the region table
 * or the ring does not check out.
 */
int shm_ring_locate(struct shm_ring_ref *r, const struct shm_segment *s,
                    uint32_t worker, enum shm_ring_kind kind);

#endif /* SHM_RING_H */
