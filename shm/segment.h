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
    /*
     * Fan-out transport (shm/ring.c, shm/blockpool.c).  0 leaves a region
     * empty: no rings when ring_workers is 0, no pool when blocks is 0.
     * Ring slot counts round up to a power of two (at least 2), slot sizes
     * up to a multiple of 8, block_size up to a multiple of SHM_CACHELINE
     * (at least SHM_BLOCK_SIZE_MIN); shm_segment_create() refuses values
     * past SHM_WORKERS_MAX, SHM_RING_SLOTS_MAX, SHM_RING_SLOT_MAX,
     * SHM_BLOCKS_MAX or SHM_BLOCK_SIZE_MAX with -EINVAL.
     */
    uint32_t ring_workers;      /* worker slots with a ring triple */
    uint32_t req_ring_slots;    /* worker -> broker request ring */
    uint32_t reply_ring_slots;  /* broker -> worker reply ring */
    uint32_t notif_ring_slots;  /* broker -> worker block handles */
    uint32_t msg_slot_size;     /* bytes per request/reply slot */
    uint32_t blocks;            /* notification blocks */
    uint32_t block_size;        /* bytes per block, its header included */
    /*
     * PKI (shm/pki.c): list bytes per half and rejected-certificate
     * mailboxes (one set per worker slot).  0: no SHM_R_PKI region.
     */
    uint32_t pki_list_bytes;
    uint32_t pki_workers;
    /* Failure throttle (shm/throttle.c): entries (rounded up to a power
     * of two).  0: no SHM_R_THROTTLE region. */
    uint32_t throttle_entries;
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
