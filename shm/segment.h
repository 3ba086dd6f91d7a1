/*
 * shm/segment.h: create, size and attach the one shared-memory segment.
 *
 * The broker creates it with memfd_create (no file in /dev/shm), sized from
 * the configuration before mapping (shm_segment_plan), and hands the fd to
 * its workers across exec.  A reader attaches by fd and refuses a segment
 * whose magic, layout version or size it does not recognise.
 */
#ifndef SHM_SEGMENT_H
#define SHM_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

/* What the segment must hold; every count is an upper bound. */
struct shm_plan {
    uint32_t nodes;
    uint32_t refs;
    uint64_t strings;           /* string-heap bytes */
    uint32_t slots;             /* value slots */
    uint64_t vheap;             /* value-heap bytes */
};

/* A mapping of the segment in this process. */
struct shm_segment {
    int                fd;
    uint8_t           *base;
    size_t             size;
    struct shm_header *hdr;
};

/* Total bytes for plan p, regions aligned to SHM_CACHELINE. */
size_t shm_segment_size(const struct shm_plan *p);

/*
 * Create an anonymous segment for plan p, map it read-write, write the
 * header and region table.  0 or -errno.
 */
int shm_segment_create(struct shm_segment *s, const struct shm_plan *p,
                       const char *name);

/*
 * Map an existing segment by fd.  writable: map read-write (workers need it
 * for their interest bits).  -EPROTO on a bad magic, layout version or
 * region table; -errno otherwise.
 */
int shm_segment_attach(struct shm_segment *s, int fd, int writable);

/* Unmap and close. */
void shm_segment_close(struct shm_segment *s);

/* The start of region r. */
static inline void *
shm_segment_region(const struct shm_segment *s, enum shm_region r)
{
    return s->base + s->hdr->regions[r].off;
}

#endif /* SHM_SEGMENT_H */
