/*
 * shm/segment.h: the one shared-memory segment, as an allocator: create
 * it with regions of given sizes, attach it by fd, close it.
 *
 * The broker creates it with memfd_create (no file in /dev/shm) and hands
 * the fd to its workers across exec.  The segment is a header (magic,
 * layout version, size, region table: shm/layout.h) and SHM_R_MAX regions
 * laid out after it in enum order, each aligned to SHM_CACHELINE.  This
 * file knows no region's contents: what each region holds, how large it
 * must be and how it starts is the segment plan's business (shm/plan.h),
 * which asks each region's module.
 *
 * A reader attaches by fd and refuses a segment whose magic, layout
 * version, size or region table it does not recognise; shm_plan_attach()
 * adds the checks of each region's contents.
 */
#ifndef SHM_SEGMENT_H
#define SHM_SEGMENT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "layout.h"

/* A mapping of the segment in this process. */
struct shm_segment {
    int                fd;
    uint8_t           *base;
    size_t             size;
    struct shm_header *hdr;
};

/*
 * Lay regions of sizes[r] bytes out after the header into r[]: the same
 * rule for every caller.  The segment's total bytes.
 */
uint64_t shm_segment_layout(const uint64_t sizes[SHM_R_MAX],
                            struct shm_region_desc r[SHM_R_MAX]);

/*
 * Create an anonymous segment with regions of sizes[r] bytes, map it
 * read-write, write the header's magic, version, size and region table.
 * Every other byte is zero.  0 or -errno.
 */
int shm_segment_create(struct shm_segment *s, const uint64_t sizes[SHM_R_MAX],
                       const char *name);

/*
 * Map an existing segment by fd.  writable: map read-write (workers need it
 * for their interest bits).  -EPROTO on a bad magic, layout version, size
 * or region table; -errno otherwise.  The fd stays the caller's when it
 * fails.
 */
int shm_segment_attach(struct shm_segment *s, int fd, int writable);

/* Unmap and close. */
void shm_segment_close(struct shm_segment *s);

/*
 * The pages of [at, at + len) made present and writable in this process
 * in one call (MADV_POPULATE_WRITE) instead of a page fault each at first
 * use (about 15 us each on a virtual machine, a tenth of that in one call:
 * docs/benchmarks.md "Start-up of the whole server").  inside: only the
 * pages wholly inside the range (memory that shares its edge pages with
 * other allocations); else every page the range touches (a mapping of
 * one's own).  Contents are not changed.  0, or -errno / -ENOSYS when the
 * kernel cannot (before Linux 5.14; harmless: the faults then come as
 * they would have).  Every prefault of the project goes through it.
 */
int shm_mem_populate(void *at, uint64_t len, bool inside);

/*
 * The first len bytes of region r (all of it when len is larger) made
 * present and writable in this process in one call (shm_mem_populate):
 * the creator, for the regions it is about to fill.  One call costs about
 * a tenth of the page faults it saves on a virtual machine
 * (docs/benchmarks.md "Start-up of the whole server").  Contents are not
 * changed.  0, or -errno when the kernel cannot (harmless: the faults
 * then come as they would have).
 */
int shm_segment_populate(const struct shm_segment *s, enum shm_region r,
                         uint64_t len);

/* The start of region r. */
static inline void *
shm_segment_region(const struct shm_segment *s, enum shm_region r)
{
    return s->base + s->hdr->regions[r].off;
}

#endif /* SHM_SEGMENT_H */
