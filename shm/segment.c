/*
 * shm/segment.c: the segment's life: plan, create (memfd), attach, close.
 */
#include "segment.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockpool.h"
#include "fanout.h"
#include "pki.h"
#include "ring.h"
#include "throttle.h"

static uint64_t shm_segment_align(uint64_t x);
static void shm_segment_regions(const struct shm_plan *p,
                                struct shm_region_desc *r, uint64_t *total);

static uint64_t
shm_segment_align(uint64_t x)
{
    return (x + SHM_CACHELINE - 1) & ~(uint64_t)(SHM_CACHELINE - 1);
}

/* Lay the regions out after the header; the same rule for every caller. */
static void
shm_segment_regions(const struct shm_plan *p, struct shm_region_desc *r,
                    uint64_t *total)
{
    uint64_t off = shm_segment_align(sizeof(struct shm_header));
    uint64_t sizes[SHM_R_MAX];
    uint64_t cap = 1;

    memset(sizes, 0, sizeof(sizes));
    while (cap < 2 * (uint64_t)p->nodes + 2)
        cap <<= 1;
    sizes[SHM_R_NODES] = (uint64_t)p->nodes * sizeof(struct shm_node);
    sizes[SHM_R_REFS] = (uint64_t)p->refs * sizeof(struct shm_ref);
    sizes[SHM_R_INDEX] = cap * sizeof(struct shm_index_entry);
    sizes[SHM_R_STRINGS] = p->strings + 8;
    sizes[SHM_R_REFTYPES] = sizeof(struct shm_reftypes);
    sizes[SHM_R_SLOTS] = (uint64_t)p->slots * sizeof(struct shm_value_slot);
    sizes[SHM_R_VHEAP] = p->vheap;
    sizes[SHM_R_INTEREST] = (uint64_t)p->slots * sizeof(uint64_t);
    sizes[SHM_R_CONFIG] = sizeof(struct shm_config);
    sizes[SHM_R_WORKERS] = SHM_WORKERS_MAX * sizeof(struct shm_worker)
                           + sizeof(struct shm_limits);
    sizes[SHM_R_RINGS] = shm_ring_region_bytes(p);
    sizes[SHM_R_BLOCKS] = shm_blockpool_bytes(p->blocks, p->block_size);
    sizes[SHM_R_FANOUT] = shm_fanout_region_bytes(p);
    sizes[SHM_R_PKI] = shm_pki_region_bytes(p);
    sizes[SHM_R_THROTTLE] = shm_throttle_region_bytes(p);
    for (int i = 0; i < SHM_R_MAX; i++) {
        r[i].off = off;
        r[i].size = sizes[i];
        off = shm_segment_align(off + sizes[i]);
    }
    *total = off;
}

size_t
shm_segment_size(const struct shm_plan *p)
{
    struct shm_region_desc r[SHM_R_MAX];
    uint64_t               total;

    shm_segment_regions(p, r, &total);
    return (size_t)total;
}

int
shm_segment_create(struct shm_segment *s, const struct shm_plan *p,
                   const char *name)
{
    struct shm_region_desc r[SHM_R_MAX];
    uint64_t               total, cap = 1;
    int                    fd, err;
    void                  *base;

    shm_segment_regions(p, r, &total);
    fd = memfd_create(name, MFD_CLOEXEC);
    if (fd == -1)
        return -errno;
    if (ftruncate(fd, (off_t)total) == -1) {
        err = -errno;
        close(fd);
        return err;
    }
    base = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                0);
    if (base == MAP_FAILED) {
        err = -errno;
        close(fd);
        return err;
    }
    s->fd = fd;
    s->base = base;
    s->size = (size_t)total;
    s->hdr = base;
    /* ftruncate gave zeroes; only the header needs values. */
    s->hdr->magic = SHM_MAGIC;
    s->hdr->version = SHM_LAYOUT_VERSION;
    s->hdr->size = total;
    memcpy(s->hdr->regions, r, sizeof(r));
    while (cap < 2 * (uint64_t)p->nodes + 2)
        cap <<= 1;
    s->hdr->index_cap = (uint32_t)cap;
    s->hdr->nslots = p->slots;
    s->hdr->vheap.size = p->vheap;
    s->hdr->vheap.top = 0;
    /* The fan-out transport, when planned (empty regions otherwise). */
    err = shm_ring_region_init(shm_segment_region(s, SHM_R_RINGS),
                               r[SHM_R_RINGS].size, p);
    if (err == 0 && p->blocks != 0)
        err = shm_blockpool_init(shm_segment_region(s, SHM_R_BLOCKS),
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
    if (err != 0) {
        shm_segment_close(s);
        return err;
    }
    return 0;
}

int
shm_segment_attach(struct shm_segment *s, int fd, int writable)
{
    struct stat        st;
    struct shm_header  h;
    void              *base;
    uint64_t           end;

    if (fstat(fd, &st) == -1)
        return -errno;
    if ((uint64_t)st.st_size < sizeof(h))
        return -EPROTO;
    if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
        return -EPROTO;
    if (h.magic != SHM_MAGIC || h.version != SHM_LAYOUT_VERSION
        || h.size != (uint64_t)st.st_size)
        return -EPROTO;
    for (int i = 0; i < SHM_R_MAX; i++) {
        end = h.regions[i].off + h.regions[i].size;
        if (end < h.regions[i].off || end > h.size
            || h.regions[i].off < sizeof(h))
            return -EPROTO;
    }
    if (h.index_cap == 0 || (h.index_cap & (h.index_cap - 1)) != 0
        || (uint64_t)h.index_cap * sizeof(struct shm_index_entry)
               > h.regions[SHM_R_INDEX].size
        || (uint64_t)h.nnodes * sizeof(struct shm_node)
               > h.regions[SHM_R_NODES].size
        || (uint64_t)h.nrefs * sizeof(struct shm_ref)
               > h.regions[SHM_R_REFS].size
        || (uint64_t)h.nslots * sizeof(struct shm_value_slot)
               > h.regions[SHM_R_SLOTS].size
        || (uint64_t)h.nslots * sizeof(uint64_t)
               > h.regions[SHM_R_INTEREST].size
        || h.regions[SHM_R_REFTYPES].size < sizeof(struct shm_reftypes)
        || h.regions[SHM_R_CONFIG].size < sizeof(struct shm_config)
        || h.regions[SHM_R_WORKERS].size
               < SHM_WORKERS_MAX * sizeof(struct shm_worker)
                     + sizeof(struct shm_limits))
        return -EPROTO;
    base = mmap(NULL, (size_t)h.size,
                writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
                0);
    if (base == MAP_FAILED)
        return -errno;
    s->fd = fd;
    s->base = base;
    s->size = (size_t)h.size;
    s->hdr = base;
    return 0;
}

void
shm_segment_close(struct shm_segment *s)
{
    if (s->base != NULL)
        munmap(s->base, s->size);
    if (s->fd >= 0)
        close(s->fd);
    s->base = NULL;
    s->hdr = NULL;
    s->fd = -1;
}
