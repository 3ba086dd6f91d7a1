/*
 * shm/plan.c: the segment plan (plan.h): every region's size and start,
 * asked of its module.  The order of the regions and their alignment are
 * the allocator's (shm/segment.c); the layout is the same for every
 * caller of the same plan.
 */
#include "plan.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "blockpool.h"
#include "fanout.h"
#include "limits.h"
#include "nodestore.h"
#include "park.h"
#include "pki.h"
#include "ring.h"
#include "throttle.h"
#include "value.h"

static void shm_plan_sizes(const struct shm_plan *p,
                           uint64_t sizes[SHM_R_MAX]);

/* Every region's bytes for plan p. */
static void
shm_plan_sizes(const struct shm_plan *p, uint64_t sizes[SHM_R_MAX])
{
    memset(sizes, 0, SHM_R_MAX * sizeof(sizes[0]));
    shm_nodestore_plan(p, sizes);
    shm_values_plan(p, sizes);
    sizes[SHM_R_CONFIG] = sizeof(struct shm_config);
    sizes[SHM_R_WORKERS] = SHM_WORKERS_MAX * sizeof(struct shm_worker)
                           + sizeof(struct shm_limits);
    sizes[SHM_R_RINGS] = shm_ring_region_bytes(p);
    sizes[SHM_R_BLOCKS] = shm_blockpool_bytes(p->blocks, p->block_size);
    sizes[SHM_R_FANOUT] = shm_fanout_region_bytes(p);
    sizes[SHM_R_PKI] = shm_pki_region_bytes(p);
    sizes[SHM_R_THROTTLE] = shm_throttle_region_bytes(p);
    sizes[SHM_R_PARK] = shm_park_region_bytes(p);
}

size_t
shm_plan_size(const struct shm_plan *p)
{
    uint64_t               sizes[SHM_R_MAX];
    struct shm_region_desc r[SHM_R_MAX];

    shm_plan_sizes(p, sizes);
    return (size_t)shm_segment_layout(sizes, r);
}

int
shm_plan_create(struct shm_segment *s, const struct shm_plan *p,
                const char *name)
{
    uint64_t                      sizes[SHM_R_MAX];
    const struct shm_region_desc *r;
    int                           err;

    shm_plan_sizes(p, sizes);
    err = shm_segment_create(s, sizes, name);
    if (err != 0)
        return err;
    r = s->hdr->regions;
    /* What the creator fills next, present in one call each rather than
     * a page fault per page (shm_segment_populate): the node store, the
     * value slots, the value heap's first values, the lost masks.  The
     * block pool's pages are left to its prefault. */
    (void)shm_segment_populate(s, SHM_R_NODES, r[SHM_R_NODES].size);
    (void)shm_segment_populate(s, SHM_R_REFS, r[SHM_R_REFS].size);
    (void)shm_segment_populate(s, SHM_R_INDEX, r[SHM_R_INDEX].size);
    (void)shm_segment_populate(s, SHM_R_STRINGS, r[SHM_R_STRINGS].size);
    (void)shm_segment_populate(s, SHM_R_REFTYPES, r[SHM_R_REFTYPES].size);
    (void)shm_segment_populate(s, SHM_R_SLOTS, r[SHM_R_SLOTS].size);
    (void)shm_segment_populate(s, SHM_R_VHEAP, p->vheap_build);
    (void)shm_segment_populate(s, SHM_R_FANOUT, r[SHM_R_FANOUT].size);
    shm_nodestore_plan_init(s, p);
    shm_values_plan_init(s, p);
    /* The fan-out transport, when planned (empty regions otherwise). */
    err = shm_ring_region_init(shm_segment_region(s, SHM_R_RINGS),
                               r[SHM_R_RINGS].size, p);
    /* The segment is fresh: its blocks are zero already, free. */
    if (err == 0 && p->blocks != 0)
        err = shm_blockpool_init_zeroed(shm_segment_region(s, SHM_R_BLOCKS),
                                        r[SHM_R_BLOCKS].size, p->blocks,
                                        p->block_size);
    if (err == 0 && r[SHM_R_FANOUT].size != 0)
        err = shm_fanout_region_init(shm_segment_region(s, SHM_R_FANOUT),
                                     r[SHM_R_FANOUT].size, p->slots);
    if (err == 0 && r[SHM_R_PKI].size != 0)
        shm_pki_region_init(shm_segment_region(s, SHM_R_PKI), p);
    if (err == 0 && r[SHM_R_THROTTLE].size != 0)
        err = shm_throttle_region_init(shm_segment_region(s, SHM_R_THROTTLE),
                                       r[SHM_R_THROTTLE].size, p);
    if (err == 0 && r[SHM_R_PARK].size != 0)
        err = shm_park_region_init(shm_segment_region(s, SHM_R_PARK),
                                   r[SHM_R_PARK].size, p);
    if (err != 0) {
        shm_segment_close(s);
        return err;
    }
    return 0;
}

int
shm_plan_check(const struct shm_segment *s)
{
    const struct shm_header *h = s->hdr;

    if (shm_nodestore_plan_check(h) != 0 || shm_values_plan_check(h) != 0
        || h->regions[SHM_R_CONFIG].size < sizeof(struct shm_config)
        || h->regions[SHM_R_WORKERS].size
               < SHM_WORKERS_MAX * sizeof(struct shm_worker)
                     + sizeof(struct shm_limits))
        return -EPROTO;
    return 0;
}

int
shm_plan_attach(struct shm_segment *s, int fd, int writable)
{
    int rc = shm_segment_attach(s, fd, writable);

    if (rc != 0)
        return rc;
    if (shm_plan_check(s) != 0) {
        /* Unmapped; the fd stays the caller's, as a refused attach. */
        munmap(s->base, s->size);
        s->base = NULL;
        s->hdr = NULL;
        s->fd = -1;
        return -EPROTO;
    }
    return 0;
}
