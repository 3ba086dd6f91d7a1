/*
 * tests/unit/shm/check_plan.c: shm/plan.c: the segment plan asks every
 * region's module for its size and start (region table, header fields,
 * the layout pinned byte for byte), and the checks of each region's
 * header fields a worker makes before it trusts a segment
 * (shm_plan_attach).
 *
 * Corruption cases never touch a live segment: the segment is copied into a
 * second memfd and the copy is damaged, so each case changes one thing and
 * the untouched copy is attached first as the control.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shm/blockpool.h"
#include "shm/fanout.h"
#include "shm/layout.h"
#include "shm/pki.h"
#include "shm/plan.h"
#include "shm/ring.h"
#include "shm/segment.h"
#include "shm/throttle.h"

static const struct shm_plan plan_small = {
    .nodes = 100, .refs = 300, .strings = 4000, .slots = 50, .vheap = 65536,
};

static void
create_or_fail(struct shm_segment *s, const struct shm_plan *p)
{
    int rc = shm_plan_create(s, p, "check_plan");

    ck_assert_int_eq(rc, 0);
    ck_assert_int_ge(s->fd, 0);
    ck_assert_ptr_nonnull(s->base);
}

/* Bytes a region must hold for plan p (what the readers index into). */
static uint64_t
region_need(const struct shm_plan *p, int r)
{
    switch (r) {
    case SHM_R_NODES:    return (uint64_t)p->nodes * sizeof(struct shm_node);
    case SHM_R_REFS:     return (uint64_t)p->refs * sizeof(struct shm_ref);
    case SHM_R_INDEX:    return (2 * (uint64_t)p->nodes + 2)
                                * sizeof(struct shm_index_entry);
    case SHM_R_STRINGS:  return p->strings;
    case SHM_R_REFTYPES: return sizeof(struct shm_reftypes);
    case SHM_R_SLOTS:    return (uint64_t)p->slots
                                * sizeof(struct shm_value_slot);
    case SHM_R_VHEAP:    return p->vheap;
    case SHM_R_INTEREST: return (uint64_t)p->slots * sizeof(uint64_t);
    default:             return 0;
    }
}

static void
check_region_table(const struct shm_plan *p)
{
    struct shm_segment s;
    struct stat        st;
    const struct shm_header *h;

    create_or_fail(&s, p);
    h = s.hdr;
    ck_assert_uint_eq(s.size, shm_plan_size(p));
    ck_assert_int_eq(fstat(s.fd, &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, s.size);
    ck_assert_uint_eq(h->magic, SHM_MAGIC);
    ck_assert_uint_eq(h->version, SHM_LAYOUT_VERSION);
    ck_assert_uint_eq(h->size, s.size);
    ck_assert_uint_eq(h->nslots, p->slots);
    ck_assert_uint_eq(h->vheap.size, p->vheap);
    ck_assert_uint_eq(h->nnodes, 0);
    ck_assert_uint_eq(atomic_load(&((struct shm_header *)h)->ready), 0);
    /* Index: a power of two, at most half full when every node is in. */
    ck_assert_uint_ne(h->index_cap, 0);
    ck_assert_uint_eq(h->index_cap & (h->index_cap - 1), 0);
    ck_assert_uint_ge(h->index_cap, 2 * (uint64_t)p->nodes + 2);

    for (int i = 0; i < SHM_R_MAX; i++) {
        const struct shm_region_desc *a = &h->regions[i];

        ck_assert_uint_eq(a->off % SHM_CACHELINE, 0);
        ck_assert_uint_ge(a->off, sizeof(struct shm_header));
        ck_assert_uint_le(a->off + a->size, h->size);
        ck_assert_uint_ge(a->size, region_need(p, i));
        ck_assert_uint_eq((uintptr_t)shm_segment_region(&s, i) % SHM_CACHELINE,
                          0);
        for (int j = 0; j < SHM_R_MAX; j++) {
            const struct shm_region_desc *b = &h->regions[j];

            if (j == i || a->size == 0 || b->size == 0)
                continue;
            ck_assert_msg(a->off + a->size <= b->off
                              || b->off + b->size <= a->off,
                          "regions %d and %d overlap", i, j);
        }
    }
    /* Node-store and value regions start zeroed (the builders rely on it). */
    for (int i = SHM_R_NODES; i <= SHM_R_INTEREST; i++) {
        const uint8_t *r = shm_segment_region(&s, i);
        uint64_t       k = 0;

        while (k < h->regions[i].size && r[k] == 0)
            k++;
        ck_assert_msg(k == h->regions[i].size, "region %d byte %llu not zero",
                      i, (unsigned long long)k);
    }
    /* Every byte is writable through the creator's mapping. */
    memset(s.base + sizeof(struct shm_header), 0xA5,
           s.size - sizeof(struct shm_header));
    shm_segment_close(&s);
}

START_TEST(test_region_table)
{
    static const struct shm_plan plans[] = {
        { .nodes = 100, .refs = 300, .strings = 4000, .slots = 50,
          .vheap = 65536 },
        { .nodes = 1, .refs = 1, .strings = 1, .slots = 1, .vheap = 1 },
        { .nodes = 0, .refs = 0, .strings = 0, .slots = 0, .vheap = 0 },
        { .nodes = 12345, .refs = 54321, .strings = 333333, .slots = 777,
          .vheap = 1000001 },
    };

    for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++)
        check_region_table(&plans[i]);
}
END_TEST

START_TEST(test_size_grows_with_plan)
{
    struct shm_plan p = plan_small;
    size_t          base = shm_plan_size(&p);

    p.vheap += 1 << 20;
    ck_assert_uint_ge(shm_plan_size(&p), base + (1 << 20));
    p = plan_small;
    p.nodes *= 10;
    ck_assert_uint_ge(shm_plan_size(&p),
                      base + 9 * (size_t)plan_small.nodes
                                 * sizeof(struct shm_node));
    ck_assert_uint_eq(shm_plan_size(&plan_small), base);  /* pure */
}
END_TEST

/*
 * The layout a plan gives, pinned: every region's size as the segment
 * plan has always computed it, in enum order, each at the next
 * SHM_CACHELINE boundary after the header and the region before it.  A
 * change here changes the broker <-> worker contract: bump
 * SHM_LAYOUT_VERSION (shm/layout.h).
 */
START_TEST(test_layout_pinned)
{
    static const struct shm_plan plans[] = {
        { .nodes = 100, .refs = 300, .strings = 4000, .slots = 50,
          .vheap = 65536 },
        { .nodes = 12345, .refs = 54321, .strings = 333333, .slots = 777,
          .vheap = 1000001, .ring_workers = 3, .req_ring_slots = 64,
          .reply_ring_slots = 64, .notif_ring_slots = 256,
          .msg_slot_size = 256, .blocks = 100, .block_size = 4096,
          .pki_list_bytes = 65536, .pki_workers = 3,
          .throttle_entries = 1000 },
    };

    for (size_t k = 0; k < sizeof(plans) / sizeof(plans[0]); k++) {
        const struct shm_plan *p = &plans[k];
        struct shm_segment     s;
        uint64_t               want[SHM_R_MAX] = { 0 }, off, cap = 1;

        while (cap < 2 * (uint64_t)p->nodes + 2)
            cap <<= 1;
        want[SHM_R_NODES] = (uint64_t)p->nodes * sizeof(struct shm_node);
        want[SHM_R_REFS] = (uint64_t)p->refs * sizeof(struct shm_ref);
        want[SHM_R_INDEX] = cap * sizeof(struct shm_index_entry);
        want[SHM_R_STRINGS] = p->strings + 8;
        want[SHM_R_REFTYPES] = sizeof(struct shm_reftypes);
        want[SHM_R_SLOTS] = (uint64_t)p->slots
                            * sizeof(struct shm_value_slot);
        want[SHM_R_VHEAP] = p->vheap;
        want[SHM_R_INTEREST] = (uint64_t)p->slots * sizeof(uint64_t);
        want[SHM_R_CONFIG] = sizeof(struct shm_config);
        want[SHM_R_WORKERS] = SHM_WORKERS_MAX * sizeof(struct shm_worker)
                              + sizeof(struct shm_limits);
        want[SHM_R_RINGS] = shm_ring_region_bytes(p);
        want[SHM_R_BLOCKS] = shm_blockpool_bytes(p->blocks, p->block_size);
        want[SHM_R_FANOUT] = shm_fanout_region_bytes(p);
        want[SHM_R_PKI] = shm_pki_region_bytes(p);
        want[SHM_R_THROTTLE] = shm_throttle_region_bytes(p);
        create_or_fail(&s, p);
        off = (sizeof(struct shm_header) + SHM_CACHELINE - 1)
              & ~(uint64_t)(SHM_CACHELINE - 1);
        for (int r = 0; r < SHM_R_MAX; r++) {
            ck_assert_uint_eq(s.hdr->regions[r].off, off);
            ck_assert_uint_eq(s.hdr->regions[r].size, want[r]);
            off = (off + want[r] + SHM_CACHELINE - 1)
                  & ~(uint64_t)(SHM_CACHELINE - 1);
        }
        ck_assert_uint_eq(s.size, off);
        ck_assert_uint_eq(shm_plan_size(p), off);
        ck_assert_uint_eq(s.hdr->index_cap, cap);
        ck_assert_int_eq(shm_plan_check(&s), 0);
        shm_segment_close(&s);
    }
}
END_TEST

/* ------------------------------------------------------------ corruption */

/* A second memfd holding a byte copy of s. */
static int
copy_segment(const struct shm_segment *s)
{
    int fd = memfd_create("check_segment_copy", MFD_CLOEXEC);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)s->size), 0);
    ck_assert_int_eq(pwrite(fd, s->base, s->size, 0), (ssize_t)s->size);
    return fd;
}

/* Attach fd; on success unmap without closing fd (the caller owns it). */
static int
try_attach(int fd, int writable)
{
    struct shm_segment a;
    int                rc = shm_plan_attach(&a, fd, writable);

    if (rc == 0) {
        ck_assert_int_eq(a.fd, fd);
        munmap(a.base, a.size);
    }
    return rc;
}

/* Copy s, overwrite sizeof(*val) bytes at off in the copy, attach it. */
static int
attach_patched(const struct shm_segment *s, size_t off, const void *val,
               size_t n)
{
    int fd = copy_segment(s);
    int rc;

    ck_assert_int_eq(try_attach(fd, 0), 0);         /* control */
    ck_assert_int_eq(pwrite(fd, val, n, (off_t)off), (ssize_t)n);
    rc = try_attach(fd, 0);
    ck_assert_int_eq(try_attach(fd, 1), rc);        /* same for writers */
    close(fd);
    return rc;
}

#define PATCH(s, field, v)                                                  \
    do {                                                                    \
        __typeof__(((struct shm_header *)0)->field) v_ = (v);               \
        ck_assert_int_eq(attach_patched((s),                                \
                                        offsetof(struct shm_header, field), \
                                        &v_, sizeof(v_)),                   \
                         -EPROTO);                                          \
    } while (0)

/* Pages of [at, at + len) present in the segment (mincore). */
static uint64_t
present(const void *at, uint64_t len)
{
    uintptr_t      a = (uintptr_t)at & ~(uintptr_t)4095;
    uint64_t       n = ((uintptr_t)at + len - a + 4095) / 4096, k = 0;
    unsigned char *v = malloc(n);

    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(mincore((void *)a, n * 4096, v), 0);
    for (uint64_t i = 0; i < n; i++)
        k += v[i] & 1;
    free(v);
    return k;
}

/*
 * shm_mem_populate, the one prefault: inside = only the pages wholly in
 * the range (an allocation sharing its edge pages), else every page the
 * range touches; nothing outside; contents kept.
 */
START_TEST(test_mem_populate)
{
    uint8_t *m = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(m, MAP_FAILED);
    if (sysconf(_SC_PAGESIZE) != 4096) {
        munmap(m, 16 * 4096);
        return;
    }
    m[8 * 4096 + 5] = 42;
    ck_assert_uint_eq(present(m, 16 * 4096), 1);
    /* [100, 100 + 5 pages) inside: pages 1-4 only. */
    if (shm_mem_populate(m + 100, 5 * 4096, true) == -ENOSYS) {
        munmap(m, 16 * 4096);
        return;                         /* a kernel before 5.14 */
    }
    ck_assert_uint_eq(present(m, 4096), 0);
    ck_assert_uint_eq(present(m + 4096, 4 * 4096), 4);
    ck_assert_uint_eq(present(m + 5 * 4096, 3 * 4096), 0);
    /* The same range touching: pages 0-5. */
    ck_assert_int_eq(shm_mem_populate(m + 100, 5 * 4096, false), 0);
    ck_assert_uint_eq(present(m, 6 * 4096), 6);
    ck_assert_uint_eq(present(m + 6 * 4096, 2 * 4096), 0);
    /* A range within one page, inside: nothing; contents kept. */
    ck_assert_int_eq(shm_mem_populate(m + 12 * 4096 + 1, 100, true), 0);
    ck_assert_uint_eq(present(m + 12 * 4096, 4096), 0);
    ck_assert_int_eq(shm_mem_populate(m + 8 * 4096, 4096, false), 0);
    ck_assert_uint_eq(m[8 * 4096 + 5], 42);
    munmap(m, 16 * 4096);
}
END_TEST

/*
 * The creator's start (docs/benchmarks.md "Start-up of the whole
 * server": a page fault costs ten times what a page populated in one call
 * costs): the regions the build fills next (the node store, the slots,
 * vheap_build bytes of the value heap) are present already, before
 * anything is written to them; the block pool is not touched (a fresh
 * segment's zero blocks are free ones), and the rest of the value heap
 * is left for the values to come.
 */
START_TEST(test_create_populates)
{
    struct shm_plan          p = { .nodes = 20000, .refs = 80000,
                                   .strings = 1 << 20, .slots = 16000,
                                   .vheap = 8 << 20, .vheap_build = 1 << 20,
                                   .blocks = 1024, .block_size = 16384 };
    struct shm_segment       s;
    struct shm_blockpool_ref bp;
    const struct shm_region_desc *r;
    uint64_t                 pages;

    create_or_fail(&s, &p);
    r = s.hdr->regions;
    for (int i = SHM_R_NODES; i <= SHM_R_SLOTS; i++) {
        if (i == SHM_R_VHEAP)
            continue;
        pages = (r[i].size + 4095) / 4096;
        ck_assert_msg(present(shm_segment_region(&s, (enum shm_region)i),
                              r[i].size) >= pages,
                      "region %d: %llu of %llu pages present", i,
                      (unsigned long long)present(
                          shm_segment_region(&s, (enum shm_region)i),
                          r[i].size),
                      (unsigned long long)pages);
    }
    ck_assert_uint_ge(present(shm_segment_region(&s, SHM_R_VHEAP),
                              p.vheap_build),
                      p.vheap_build / 4096);
    ck_assert_uint_le(present(shm_segment_region(&s, SHM_R_VHEAP),
                              r[SHM_R_VHEAP].size),
                      p.vheap_build / 4096 + 2);
    /* 4,096 pages of blocks, none of them touched: the pool's header and
     * the pages it shares with the regions either side. */
    ck_assert_uint_le(present(shm_segment_region(&s, SHM_R_BLOCKS),
                              r[SHM_R_BLOCKS].size), 3);
    ck_assert_int_eq(shm_blockpool_locate(&bp, &s), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&bp), 1024);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_refuse_counts_past_regions)
{
    struct shm_segment s;
    const struct shm_header *h;
    uint64_t           node_cap, ref_cap, slot_cap;

    create_or_fail(&s, &plan_small);
    h = s.hdr;
    node_cap = h->regions[SHM_R_NODES].size / sizeof(struct shm_node);
    ref_cap = h->regions[SHM_R_REFS].size / sizeof(struct shm_ref);
    slot_cap = h->regions[SHM_R_SLOTS].size / sizeof(struct shm_value_slot);

    /* At capacity: accepted (the control for each refusal below). */
    {
        uint32_t v = (uint32_t)node_cap;

        ck_assert_int_eq(attach_patched(&s, offsetof(struct shm_header,
                                                     nnodes),
                                        &v, sizeof(v)), 0);
        v = (uint32_t)ref_cap;
        ck_assert_int_eq(attach_patched(&s, offsetof(struct shm_header, nrefs),
                                        &v, sizeof(v)), 0);
    }
    PATCH(&s, nnodes, (uint32_t)node_cap + 1);
    PATCH(&s, nnodes, UINT32_MAX);
    PATCH(&s, nrefs, (uint32_t)ref_cap + 1);
    PATCH(&s, nrefs, UINT32_MAX);
    PATCH(&s, nslots, (uint32_t)slot_cap + 1);
    PATCH(&s, nslots, UINT32_MAX);
    /* The index capacity: zero, not a power of two, larger than its region. */
    PATCH(&s, index_cap, 0);
    PATCH(&s, index_cap, h->index_cap - 1);
    PATCH(&s, index_cap, h->index_cap * 2);
    PATCH(&s, index_cap, 0x80000000u);
    /* A reference-type region too small for struct shm_reftypes. */
    PATCH(&s, regions[SHM_R_REFTYPES].size, sizeof(struct shm_reftypes) - 8);
    shm_segment_close(&s);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Segment plan");
    TCase   *tc_plan = tcase_create("Plan and create");
    TCase   *tc_refuse = tcase_create("Refuse a bad segment");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc_plan, test_region_table);
    tcase_add_test(tc_plan, test_size_grows_with_plan);
    tcase_add_test(tc_plan, test_layout_pinned);
    tcase_add_test(tc_plan, test_create_populates);
    tcase_add_test(tc_plan, test_mem_populate);
    tcase_set_timeout(tc_plan, 20);
    suite_add_tcase(s, tc_plan);

    tcase_add_test(tc_refuse, test_refuse_counts_past_regions);
    suite_add_tcase(s, tc_refuse);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
