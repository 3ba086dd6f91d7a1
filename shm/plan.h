/*
 * shm/plan.h: the segment plan, above the regions.  PostgreSQL's ipci.c
 * to the allocator's shmem.c (shm/segment.c): it asks every region's
 * module how large its region must be for a struct shm_plan (layout.h),
 * has the allocator lay them out and create the segment, then asks each
 * module to start its region; a worker attaching a segment asks each
 * module whether the header's fields for its region fit.
 *
 *   region                  size and start from
 *   SHM_R_NODES .. REFTYPES shm/nodestore.c  (shm_nodestore_plan*)
 *   SHM_R_SLOTS .. INTEREST shm/value.c      (shm_values_plan*)
 *   SHM_R_CONFIG            struct shm_config (layout.h; the broker writes
 *                           it, broker/config.c)
 *   SHM_R_WORKERS           struct shm_worker rows (layout.h), then
 *                           struct shm_limits (shm/limits.c)
 *   SHM_R_RINGS             shm/ring.c       (shm_ring_region_*)
 *   SHM_R_BLOCKS            shm/blockpool.c  (shm_blockpool_bytes, _init)
 *   SHM_R_FANOUT            shm/fanout.c     (shm_fanout_region_*)
 *   SHM_R_PKI               shm/pki.c        (shm_pki_region_*)
 *   SHM_R_THROTTLE          shm/throttle.c   (shm_throttle_region_*)
 *
 * Pure: no I/O but the allocator's (memfd, mmap).
 */
#ifndef SHM_PLAN_H
#define SHM_PLAN_H

#include <stddef.h>

#include "layout.h"
#include "segment.h"

/* Total bytes of the segment for plan p. */
size_t shm_plan_size(const struct shm_plan *p);

/*
 * Create the segment for plan p (shm_segment_create) and start every
 * region.  0, -EINVAL for a plan past a region's limits (see struct
 * shm_plan), or -errno.
 */
int shm_plan_create(struct shm_segment *s, const struct shm_plan *p,
                    const char *name);

/*
 * Whether the header's fields for each region fit that region (counts,
 * the index capacity, fixed-size regions large enough).  0 or -EPROTO.
 */
int shm_plan_check(const struct shm_segment *s);

/*
 * shm_segment_attach(), then shm_plan_check(): what a worker does before
 * it trusts a segment.  0, -EPROTO, or -errno; on failure nothing stays
 * mapped and fd stays the caller's.
 */
int shm_plan_attach(struct shm_segment *s, int fd, int writable);

#endif /* SHM_PLAN_H */
