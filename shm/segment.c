/*
 * shm/segment.c: the segment's life: lay out, create (memfd), attach,
 * close.  The allocator: it knows the header and the region table, no
 * region's contents (shm/plan.c knows those).
 */
#include "segment.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t shm_segment_align(uint64_t x);

static uint64_t
shm_segment_align(uint64_t x)
{
    return (x + SHM_CACHELINE - 1) & ~(uint64_t)(SHM_CACHELINE - 1);
}

uint64_t
shm_segment_layout(const uint64_t sizes[SHM_R_MAX],
                   struct shm_region_desc r[SHM_R_MAX])
{
    uint64_t off = shm_segment_align(sizeof(struct shm_header));

    for (int i = 0; i < SHM_R_MAX; i++) {
        r[i].off = off;
        r[i].size = sizes[i];
        off = shm_segment_align(off + sizes[i]);
    }
    return off;
}

int
shm_segment_create(struct shm_segment *s, const uint64_t sizes[SHM_R_MAX],
                   const char *name)
{
    struct shm_region_desc r[SHM_R_MAX];
    uint64_t               total;
    int                    fd, err;
    void                  *base;

    total = shm_segment_layout(sizes, r);
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

int
shm_segment_populate(const struct shm_segment *s, enum shm_region r,
                     uint64_t len)
{
    if (len > s->hdr->regions[r].size)
        len = s->hdr->regions[r].size;
    return shm_mem_populate(shm_segment_region(s, r), len, false);
}

int
shm_mem_populate(void *at, uint64_t len, bool inside)
{
    long      pg = sysconf(_SC_PAGESIZE);
    uintptr_t m, a, e;

    if (at == NULL || len == 0 || pg <= 0)
        return 0;
    m = (uintptr_t)pg - 1;
    a = (uintptr_t)at;
    e = a + (uintptr_t)len;
    a = inside ? (a + m) & ~m : a & ~m;
    if (inside)
        e &= ~m;
    if (e <= a)
        return 0;
#ifdef MADV_POPULATE_WRITE
    if (madvise((void *)a, e - a, MADV_POPULATE_WRITE) == 0)
        return 0;
    return -errno;
#else
    return -ENOSYS;
#endif
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
