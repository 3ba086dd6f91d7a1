/*
 * tests/unit/shm/check_blockpool.c: shm/blockpool.c: geometry, records and
 * their bounds, stale handles, exhaustion, disown, reclaim; then a broker
 * and two consumer processes moving >= 10 million checksummed records
 * through blocks and notification rings, and a consumer killed with -9 in
 * the middle, its references reclaimed and its slot respawned.
 *
 * Every record carries, for each consumer, the sequence number of the
 * previous record sent to that consumer: a consumer that checks the chain
 * detects any record lost, duplicated or reordered, exactly.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include "shm/blockpool.h"
#include "shm/layout.h"
#include "shm/plan.h"
#include "shm/ring.h"
#include "shm/segment.h"

#include "fanout_util.h"

/* A pool in private memory. */
static uint8_t *
pool_new(uint32_t n, uint32_t bs, struct shm_blockpool_ref *p)
{
    uint64_t b = shm_blockpool_bytes(n, bs);
    uint8_t *m = aligned_alloc(SHM_CACHELINE, b);

    ck_assert_ptr_nonnull(m);
    memset(m, 0x77, b);
    ck_assert_int_eq(shm_blockpool_init(m, b, n, bs), 0);
    ck_assert_int_eq(shm_blockpool_attach(p, m, b), 0);
    return m;
}

/* Fill a block for `holders` with one record, publish it. */
static struct shm_block_handle
pool_put(struct shm_blockpool_ref *p, uint64_t holders, uint32_t slot)
{
    struct shm_block_handle h;

    ck_assert_int_eq(shm_blockpool_alloc(p, &h), 0);
    ck_assert_int_eq(shm_blockpool_append(p, h, slot, "abc", 3), 0);
    ck_assert_int_eq(shm_blockpool_publish(p, h, holders), 0);
    return h;
}

/* ------------------------------------------------------------ geometry */

START_TEST(test_geometry)
{
    struct shm_blockpool_ref p;
    struct shm_blockpool    *sh;
    uint64_t                 b = shm_blockpool_bytes(4, 4096);
    uint8_t                 *m;

    ck_assert_uint_eq(shm_blockpool_bytes(0, 4096), 0);
    ck_assert_uint_eq(b, sizeof(struct shm_blockpool) + 4 * 4096);
    ck_assert_uint_eq(shm_blockpool_bytes(4, 100),
                      sizeof(struct shm_blockpool) + 4 * SHM_BLOCK_SIZE_MIN);
    ck_assert_uint_eq(shm_blockpool_bytes(4, 1000),
                      sizeof(struct shm_blockpool) + 4 * 1024);
    ck_assert_uint_eq(shm_blockpool_capacity(4096),
                      4096 - sizeof(struct shm_block));
    m = aligned_alloc(SHM_CACHELINE, b + SHM_CACHELINE);
    ck_assert_int_eq(shm_blockpool_init(m, b, 0, 4096), -EINVAL);
    ck_assert_int_eq(shm_blockpool_init(m, b - 1, 4, 4096), -EINVAL);
    ck_assert_int_eq(shm_blockpool_init(m + 64, b, 4, 4096), -EINVAL);
    ck_assert_int_eq(shm_blockpool_init(m, b, 4, SHM_BLOCK_SIZE_MAX + 1),
                     -EINVAL);
    ck_assert_int_eq(shm_blockpool_init(m, UINT64_MAX, SHM_BLOCKS_MAX + 1,
                                        4096),
                     -EINVAL);
    ck_assert_int_eq(shm_blockpool_init(m, b, 4, 4096), 0);
    ck_assert_int_eq(shm_blockpool_attach(&p, m, b), 0);
    ck_assert_uint_eq(p.nblocks, 4);
    ck_assert_uint_eq(p.block_size, 4096);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 4);

    /* Attach checks every geometry field it will index with. */
    sh = (struct shm_blockpool *)m;
#define BAD(field, val)                                                   \
    do {                                                                  \
        ck_assert_int_eq(shm_blockpool_init(m, b, 4, 4096), 0);           \
        sh->field = (val);                                                \
        ck_assert_int_eq(shm_blockpool_attach(&p, m, b), -EPROTO);        \
        ck_assert_ptr_null(p.sh);                                         \
    } while (0)
    BAD(magic, 1);
    BAD(nblocks, 0);
    BAD(nblocks, 5);
    BAD(nblocks, SHM_BLOCKS_MAX + 1);
    BAD(block_size, 4000);
    BAD(block_size, SHM_CACHELINE);
    BAD(block_size, 8192);
    BAD(blocks_off, 0);
    BAD(blocks_off, sizeof(struct shm_blockpool) + SHM_CACHELINE);
#undef BAD
    ck_assert_int_eq(shm_blockpool_init(m, b, 4, 4096), 0);
    ck_assert_int_eq(shm_blockpool_attach(&p, m, b - 1), -EPROTO);
    ck_assert_int_eq(shm_blockpool_attach(&p, NULL, b), -EPROTO);
    ck_assert_int_eq(shm_blockpool_attach(&p, m + 8, b), -EPROTO);
    free(m);
}
END_TEST

START_TEST(test_segment_pool)
{
    struct shm_plan pl = { .nodes = 1, .refs = 1, .strings = 8, .slots = 1,
                           .vheap = 64, .blocks = 64, .block_size = 1000 };
    struct shm_segment       s, a;
    struct shm_blockpool_ref p, q;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    const uint8_t           *bytes;
    uint32_t                 slot, len;

    ck_assert_int_eq(shm_plan_create(&s, &pl, "check_blockpool"), 0);
    ck_assert_uint_eq(s.hdr->regions[SHM_R_BLOCKS].size,
                      shm_blockpool_bytes(64, 1000));
    ck_assert_uint_eq(s.hdr->regions[SHM_R_RINGS].size, 0);
    ck_assert_int_eq(shm_blockpool_locate(&p, &s), 0);
    ck_assert_uint_eq(p.nblocks, 64);
    ck_assert_uint_eq(p.block_size, 1024);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 64);
    /* Through a second mapping of the same segment. */
    ck_assert_int_eq(shm_segment_attach(&a, dup(s.fd), 1), 0);
    ck_assert_int_eq(shm_blockpool_locate(&q, &a), 0);
    h = pool_put(&p, 1u << 5, 77);
    ck_assert_int_eq(shm_blockpool_open(&q, h, 5, &it), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 1);
    ck_assert_uint_eq(slot, 77);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(memcmp(bytes, "abc", 3), 0);
    ck_assert_int_eq(shm_blockpool_release(&q, h, 5), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 64);
    shm_segment_close(&a);
    shm_segment_close(&s);

    pl.blocks = 0;
    ck_assert_int_eq(shm_plan_create(&s, &pl, "check_blockpool"), 0);
    ck_assert_uint_eq(s.hdr->regions[SHM_R_BLOCKS].size, 0);
    ck_assert_int_eq(shm_blockpool_locate(&p, &s), -ENOENT);
    shm_segment_close(&s);
    pl.blocks = SHM_BLOCKS_MAX + 1;
    ck_assert_int_eq(shm_plan_create(&s, &pl, "check_blockpool"), -EINVAL);
    pl.blocks = 4;
    pl.block_size = SHM_BLOCK_SIZE_MAX + 1;
    ck_assert_int_eq(shm_plan_create(&s, &pl, "check_blockpool"), -EINVAL);
}
END_TEST

/* init_zeroed on memory that is zero: the same pool as init, its blocks
 * not written (they are zero: free, generation 0) */
START_TEST(test_init_zeroed)
{
    struct shm_blockpool_ref p;
    struct shm_block_handle  h;
    uint64_t                 b = shm_blockpool_bytes(4, 4096);
    uint8_t                 *m = aligned_alloc(SHM_CACHELINE, b);
    struct shm_block        *blk;

    ck_assert_ptr_nonnull(m);
    memset(m, 0x77, b);
    ck_assert_int_eq(shm_blockpool_init_zeroed(m, b, 4, 4096), 0);
    blk = (struct shm_block *)(m + sizeof(struct shm_blockpool));
    ck_assert_uint_eq(((uint8_t *)blk)[0], 0x77);   /* not touched */
    ck_assert_int_eq(shm_blockpool_init_zeroed(m, b, 0, 4096), -EINVAL);
    ck_assert_int_eq(shm_blockpool_init_zeroed(m, b - 1, 4, 4096), -EINVAL);
    /* On zero memory: a pool of free blocks. */
    memset(m, 0, b);
    ck_assert_int_eq(shm_blockpool_init_zeroed(m, b, 4, 4096), 0);
    ck_assert_int_eq(shm_blockpool_attach(&p, m, b), 0);
    ck_assert_uint_eq(p.nblocks, 4);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 4);
    h = pool_put(&p, 1, 9);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 3);
    ck_assert_int_eq(shm_blockpool_release(&p, h, 0), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 4);
    free(m);
}
END_TEST

/* Minor page faults while reading one byte of every page of p's blocks. */
static long
touch_faults(const struct shm_blockpool_ref *p)
{
    struct rusage           r0, r1;
    const volatile uint8_t *b = p->blocks;
    size_t                  n = (size_t)p->nblocks * p->block_size;
    unsigned                sum = 0;

    getrusage(RUSAGE_SELF, &r0);
    for (size_t off = 0; off < n; off += 4096)
        sum += b[off];
    getrusage(RUSAGE_SELF, &r1);
    (void)sum;
    return r1.ru_minflt - r0.ru_minflt;
}

/*
 * Prefault: a mapping whose pool was prefaulted takes no page faults on
 * its blocks afterwards; one that was not takes them as it goes.
 */
START_TEST(test_prefault)
{
    struct shm_plan pl = { .nodes = 1, .refs = 1, .strings = 8, .slots = 1,
                           .vheap = 64, .blocks = 512, .block_size = 4096 };
    struct shm_segment       s, a, b;
    struct shm_blockpool_ref p, q, r;
    long                     pages = 512, fa, fb;

    ck_assert_int_eq(shm_plan_create(&s, &pl, "check_blockpool"), 0);
    ck_assert_int_eq(shm_blockpool_locate(&p, &s), 0);
    ck_assert_int_eq(shm_blockpool_prefault(&p), 0);
    ck_assert_int_eq(shm_segment_attach(&a, dup(s.fd), 1), 0);
    ck_assert_int_eq(shm_blockpool_locate(&q, &a), 0);
    ck_assert_int_eq(shm_segment_attach(&b, dup(s.fd), 1), 0);
    ck_assert_int_eq(shm_blockpool_locate(&r, &b), 0);
    ck_assert_int_eq(shm_blockpool_prefault(&q), 0);
    fa = touch_faults(&q);
    fb = touch_faults(&r);
    /* Without it, a read fault maps its neighbours too (fault-around,
     * 16 pages by default): still pages / 16 faults or so more.  (Under
     * ASan both also fault in their shadow pages, the same number.) */
    ck_assert_msg(fb - fa >= pages / 32, "prefaulted: %ld faults, not "
                  "prefaulted: %ld", fa, fb);
    ck_assert_uint_eq(shm_blockpool_free_count(&q), 512);   /* untouched */
    shm_segment_close(&b);
    shm_segment_close(&a);
    shm_segment_close(&s);
}
END_TEST

/* ------------------------------------------------------------ records */

START_TEST(test_records)
{
    static const uint32_t lens[] = { 0, 1, 3, 4, 5, 100, 7 };
    struct shm_blockpool_ref p;
    struct shm_block_handle  h, other = { 0, 0 };
    struct shm_block_iter    it;
    const uint8_t           *bytes;
    uint8_t                  data[4096];
    uint32_t                 slot, len, cap = shm_blockpool_capacity(1024);
    uint8_t                 *m = pool_new(4, 1024, &p);
    int                      n;

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)fu_mix(i);
    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    ck_assert_uint_ne(h.gen, 0);
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
        ck_assert_int_eq(shm_blockpool_append(&p, h, 1000 + (uint32_t)i,
                                              data + i, lens[i]),
                         0);
    ck_assert_uint_eq(shm_blockpool_nrecs(&p, h), 7);
    /* Not readable before publish, and not by a worker left out. */
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), -ESTALE);
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 1u | UINT64_C(1) << 63), 0);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 1, &it), -ESTALE);
    /* A LIVE block takes no more records and no second publish. */
    ck_assert_int_eq(shm_blockpool_append(&p, h, 1, data, 1), -EINVAL);
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 1), -EINVAL);
    ck_assert_int_eq(shm_blockpool_nrecs(&p, h), 0);
    ck_assert_int_eq(shm_blockpool_append(&p, other, 1, data, 1), -EINVAL);
    for (uint32_t w = 0; w < 64; w += 63) {
        ck_assert_int_eq(shm_blockpool_open(&p, h, w, &it), 0);
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 1);
            ck_assert_uint_eq(slot, 1000 + i);
            ck_assert_uint_eq(len, lens[i]);
            ck_assert_int_eq(memcmp(bytes, data + i, len), 0);
        }
        ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 0);
        ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 0);
        ck_assert_int_eq(shm_blockpool_release(&p, h, w), 0);
    }
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 4);

    /* A block fills exactly: 20-byte records take 28 bytes each. */
    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    n = 0;
    while (shm_blockpool_append(&p, h, (uint32_t)n, data, 20) == 0)
        n++;
    ck_assert_int_eq(n, cap / 28);
    /* What is left still takes a record that fits it. */
    if (cap % 28 >= 8)
        ck_assert_int_eq(shm_blockpool_append(&p, h, 0, data, cap % 28 - 8),
                         0);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 0, data, 0), -ENOSPC);
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 0), 0);  /* nobody: free */
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 4);
    /* The largest record fits an empty block, one byte more never does. */
    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 0, data, cap - 8), 0);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 0, data, 0), -ENOSPC);
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 4), 0);
    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 0, data, cap - 7), -ENOSPC);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 0, data, UINT32_MAX),
                     -ENOSPC);
    free(m);
}
END_TEST

/* A record written in place: reserve, write, commit; the padding after a
 * record shorter than the room reserved is zeroed. */
START_TEST(test_reserve_commit)
{
    struct shm_blockpool_ref p;
    struct shm_block_handle  h, other = { 0, 0 };
    struct shm_block_iter    it;
    const uint8_t           *bytes;
    uint32_t                 slot, len, cap = shm_blockpool_capacity(1024);
    uint8_t                 *m = pool_new(4, 1024, &p), *at;
    int                      n;

    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    ck_assert_ptr_null(shm_blockpool_reserve(&p, other, 8));
    at = shm_blockpool_reserve(&p, h, 32);
    ck_assert_ptr_nonnull(at);
    memset(at, 0xAB, 32);           /* garbage past what is committed */
    shm_blockpool_commit(&p, h, 7, 5);
    at = shm_blockpool_reserve(&p, h, 4);
    ck_assert_ptr_nonnull(at);
    memcpy(at, "wxyz", 4);
    shm_blockpool_commit(&p, h, 8, 4);
    ck_assert_uint_eq(shm_blockpool_nrecs(&p, h), 2);
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 1), 0);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 1);
    ck_assert_uint_eq(slot, 7);
    ck_assert_uint_eq(len, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(bytes[i], 0xAB);
    for (int i = 5; i < 8; i++)         /* padding to 4 bytes: zero */
        ck_assert_uint_eq(bytes[i], 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 1);
    ck_assert_uint_eq(slot, 8);
    ck_assert_uint_eq(len, 4);
    ck_assert_int_eq(memcmp(bytes, "wxyz", 4), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 0);
    ck_assert_int_eq(shm_blockpool_release(&p, h, 0), 0);
    /* Room is what is left: a reservation larger than that is refused,
     * as append refuses the record. */
    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    n = 0;
    while (shm_blockpool_reserve(&p, h, 20) != NULL) {
        shm_blockpool_commit(&p, h, (uint32_t)n, 20);
        n++;
    }
    ck_assert_int_eq(n, cap / 28);
    ck_assert_ptr_null(shm_blockpool_reserve(&p, h, UINT32_MAX));
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 0), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 4);
    free(m);
}
END_TEST

/* Damaged lengths: refused, counted, never read past the block. */
START_TEST(test_corrupt_records)
{
    struct shm_blockpool_ref p;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_block        *b;
    struct shm_block_rec     rec;
    const uint8_t           *bytes;
    uint32_t                 slot, len, cap = shm_blockpool_capacity(256);
    uint8_t                 *m = pool_new(2, 256, &p);

    ck_assert_int_eq(shm_blockpool_alloc(&p, &h), 0);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 1, "0123456789", 10), 0);
    ck_assert_int_eq(shm_blockpool_append(&p, h, 2, "xy", 2), 0);
    ck_assert_int_eq(shm_blockpool_publish(&p, h, 1), 0);
    b = (struct shm_block *)p.blocks;
    /* used past the block's end */
    atomic_store(&b->used, cap + 4);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), -EPROTO);
    ck_assert_uint_eq(atomic_load(&p.sh->w[0].corrupt), 1);
    /* a record length past used */
    atomic_store(&b->used, 20 + 12);
    memcpy(&rec, p.blocks + sizeof(*b), sizeof(rec));
    rec.len = 25;
    memcpy(p.blocks + sizeof(*b), &rec, sizeof(rec));
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), -EPROTO);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 0);
    ck_assert_uint_eq(atomic_load(&p.sh->w[0].corrupt), 2);
    /* a huge length (the bound must not overflow) */
    rec.len = UINT32_MAX - 2;
    memcpy(p.blocks + sizeof(*b), &rec, sizeof(rec));
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), -EPROTO);
    /* used that ends inside a record header */
    rec.len = 10;
    memcpy(p.blocks + sizeof(*b), &rec, sizeof(rec));
    atomic_store(&b->used, 20 + 4);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 1);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), -EPROTO);
    /* the padding of the last record cut off */
    atomic_store(&b->used, 20 + 8 + 2);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 0, &it), 0);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), 1);
    ck_assert_int_eq(shm_blockpool_next(&it, &slot, &bytes, &len), -EPROTO);
    ck_assert_uint_eq(atomic_load(&p.sh->w[0].corrupt), 5);
    ck_assert_int_eq(shm_blockpool_release(&p, h, 0), 0);
    free(m);
}
END_TEST

/* ------------------------------------------------- stale, full, reclaim */

START_TEST(test_stale_handles)
{
    struct shm_blockpool_ref p;
    struct shm_block_handle  h, h2, bad;
    struct shm_block_iter    it;
    uint8_t                 *m = pool_new(1, 256, &p);

    h = pool_put(&p, 1u << 3, 1);
    ck_assert_int_eq(shm_blockpool_release(&p, h, 3), 0);
    /* Released: a second release or open is stale. */
    ck_assert_int_eq(shm_blockpool_release(&p, h, 3), -ESTALE);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 3, &it), -ESTALE);
    ck_assert_ptr_null(it.p);
    /* Recycled (one block only, so the same index): the old handle is
     * stale even for a worker the new incarnation was pushed to. */
    h2 = pool_put(&p, 1u << 3 | 1u << 4, 2);
    ck_assert_uint_eq(h2.index, h.index);
    ck_assert_uint_ne(h2.gen, h.gen);
    ck_assert_int_eq(shm_blockpool_open(&p, h, 3, &it), -ESTALE);
    ck_assert_int_eq(shm_blockpool_release(&p, h, 3), -ESTALE);
    ck_assert_int_eq(shm_blockpool_release(&p, h, 4), -ESTALE);
    /* ... and did not take the new incarnation's reference. */
    ck_assert_uint_eq(atomic_load(&((struct shm_block *)p.blocks)->holders),
                      1u << 3 | 1u << 4);
    /* Forged handles. */
    bad = h2;
    bad.gen = 0;
    ck_assert_int_eq(shm_blockpool_open(&p, bad, 3, &it), -ESTALE);
    bad = h2;
    bad.index = 1;
    ck_assert_int_eq(shm_blockpool_open(&p, bad, 3, &it), -EINVAL);
    ck_assert_int_eq(shm_blockpool_release(&p, bad, 3), -EINVAL);
    bad.index = UINT32_MAX;
    ck_assert_int_eq(shm_blockpool_open(&p, bad, 3, &it), -EINVAL);
    ck_assert_int_eq(shm_blockpool_open(&p, h2, 64, &it), -EINVAL);
    ck_assert_int_eq(shm_blockpool_release(&p, h2, 64), -EINVAL);
    ck_assert_int_eq(shm_blockpool_open(&p, h2, 5, &it), -ESTALE);
    /* 2 after release, 2 after recycle, gen 0, index 1 twice, index max */
    ck_assert_uint_eq(atomic_load(&p.sh->w[3].stale), 8);
    ck_assert_uint_eq(atomic_load(&p.sh->w[4].stale), 1);
    ck_assert_uint_eq(atomic_load(&p.sh->w[5].stale), 1);
    ck_assert_uint_eq(atomic_load(&p.sh->w[3].released), 1);
    /* The rightful holders still get it. */
    ck_assert_int_eq(shm_blockpool_open(&p, h2, 3, &it), 0);
    ck_assert_int_eq(shm_blockpool_release(&p, h2, 3), 0);
    ck_assert_int_eq(shm_blockpool_release(&p, h2, 4), 0);
    ck_assert_uint_eq(atomic_load(&p.sh->w[4].freed), 1);
    ck_assert_uint_eq(atomic_load(&p.sh->w[3].freed), 1);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 1);
    free(m);
}
END_TEST

START_TEST(test_exhaustion)
{
    struct shm_blockpool_ref p;
    struct shm_block_handle  h[4], x;
    uint8_t                 *m = pool_new(4, 256, &p);

    /* Blocks being filled are taken too (no double allocation). */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(shm_blockpool_alloc(&p, &h[i]), 0);
    ck_assert_int_eq(shm_blockpool_alloc(&p, &x), -ENOSPC);
    ck_assert_uint_eq(atomic_load(&p.sh->exhausted), 1);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(shm_blockpool_publish(&p, h[i], 1u << (i % 2)),
                         0);
    ck_assert_int_eq(shm_blockpool_alloc(&p, &x), -ENOSPC);
    ck_assert_int_eq(shm_blockpool_alloc(&p, &x), -ENOSPC);
    ck_assert_uint_eq(atomic_load(&p.sh->exhausted), 3);
    ck_assert_uint_eq(atomic_load(&p.sh->allocs), 4);
    /* Release block 2: the next alloc finds it, past held ones. */
    ck_assert_int_eq(shm_blockpool_release(&p, h[2], 0), 0);
    ck_assert_int_eq(shm_blockpool_alloc(&p, &x), 0);
    ck_assert_uint_eq(x.index, h[2].index);
    ck_assert_uint_gt(atomic_load(&p.sh->skipped), 0);
    ck_assert_int_eq(shm_blockpool_publish(&p, x, 0), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 1);
    free(m);
}
END_TEST

START_TEST(test_disown_and_reclaim)
{
    struct shm_blockpool_ref p;
    struct shm_block_handle  h[10], d;
    uint8_t                 *m = pool_new(16, 256, &p);

    /* A push to worker 1 failed: the broker drops its reference. */
    d = pool_put(&p, 7, 9);
    ck_assert_int_eq(shm_blockpool_disown(&p, d, 1), 0);
    ck_assert_int_eq(shm_blockpool_disown(&p, d, 1), -ESTALE);
    ck_assert_uint_eq(atomic_load(&p.sh->disowned), 1);
    ck_assert_int_eq(shm_blockpool_release(&p, d, 1), -ESTALE);
    ck_assert_int_eq(shm_blockpool_release(&p, d, 0), 0);
    ck_assert_int_eq(shm_blockpool_release(&p, d, 2), 0);
    ck_assert_int_eq(shm_blockpool_disown(&p, d, 2), -ESTALE);
    ck_assert_int_eq(shm_blockpool_disown(&p, d, 64), -EINVAL);

    /* Worker 1 dies holding 10 blocks worker 0 releases normally. */
    for (int i = 0; i < 10; i++)
        h[i] = pool_put(&p, 3, (uint32_t)i);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(shm_blockpool_release(&p, h[i], 0), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 6);
    ck_assert_uint_eq(shm_blockpool_reclaim_worker(&p, 1), 10);
    ck_assert_uint_eq(shm_blockpool_free_count(&p), 16);
    ck_assert_uint_eq(shm_blockpool_reclaim_worker(&p, 1), 0);
    ck_assert_uint_eq(shm_blockpool_reclaim_worker(&p, 64), 0);
    ck_assert_uint_eq(atomic_load(&p.sh->reclaimed), 10);
    /* The freed-by-release counter: worker 0 was last only for block d. */
    ck_assert_uint_eq(atomic_load(&p.sh->w[2].freed), 1);
    ck_assert_uint_eq(atomic_load(&p.sh->w[0].freed), 0);
    ck_assert_uint_eq(atomic_load(&p.sh->w[0].released), 11);
    free(m);
}
END_TEST

/* --------------------------------------- broker + 2 consumers, forked */

#define NCONS 2

/*
 * Record bytes: seq, prev[NCONS] (previous seq sent to each consumer,
 * UINT64_MAX for none or not sent to it), k filler bytes, then the FNV
 * checksum of everything before.  slot = low 32 bits of seq ^ SLOT_XOR.
 */
#define REC_HDR  (8 + 8 * NCONS)
#define REC_MAX  (REC_HDR + 40 + 8)
#define SLOT_XOR 0x5A5A5A5Au

static uint32_t
rec_make(uint8_t *out, uint64_t seq, const uint64_t prev[NCONS])
{
    uint32_t k = (uint32_t)(fu_mix(seq) % 41), len = REC_HDR + k + 8;
    uint64_t sum;

    memcpy(out, &seq, 8);
    memcpy(out + 8, prev, 8 * NCONS);
    for (uint32_t j = 0; j < k; j++)
        out[REC_HDR + j] = (uint8_t)(seq * 31 + j * 7);
    sum = fu_fnv(out, REC_HDR + k);
    memcpy(out + REC_HDR + k, &sum, 8);
    return len;
}

/* What one consumer found; in a shared mapping the parent reads. */
struct cons_result {
    uint64_t records;
    uint64_t blocks;
    uint64_t last;          /* last seq seen, UINT64_MAX for none */
    uint64_t bad_chain;     /* lost, duplicated or reordered */
    uint64_t bad_sum;       /* checksum, length or slot wrong */
    uint64_t bad_handle;    /* open/next/release failed */
    uint64_t done;
};

/* Check one record against consumer c's chain. */
static void
cons_check(struct cons_result *res, uint32_t c, uint32_t slot,
           const uint8_t *b, uint32_t len)
{
    uint64_t seq, prev[NCONS], sum;
    uint32_t k;

    res->records++;
    if (len < REC_HDR + 8 || len > REC_MAX) {
        res->bad_sum++;
        return;
    }
    memcpy(&seq, b, 8);
    memcpy(prev, b + 8, sizeof(prev));
    k = len - REC_HDR - 8;
    memcpy(&sum, b + REC_HDR + k, 8);
    if (sum != fu_fnv(b, REC_HDR + k) || k != fu_mix(seq) % 41
        || slot != ((uint32_t)seq ^ SLOT_XOR))
        res->bad_sum++;
    if (prev[c] != res->last)
        res->bad_chain++;
    res->last = seq;
}

/*
 * Consumer c in slot `worker`: map the segment again, pop handles, check
 * every record, release at once.  hold > 0 keeps up to `hold` blocks
 * before releasing the oldest (to die holding some).  Stops at the
 * {UINT32_MAX, 0} sentinel.
 */
static int
cons_main(int fd, uint32_t c, uint32_t worker, uint32_t hold,
          struct cons_result *res)
{
    struct shm_segment       s;
    struct shm_blockpool_ref p;
    struct shm_ring_ref      r;
    struct shm_block_handle  hs[64], held[16];
    uint32_t                 nheld = 0;
    unsigned                 spins = 0;

    if (shm_segment_attach(&s, fd, 1) != 0 || shm_blockpool_locate(&p, &s) != 0
        || shm_ring_locate(&r, &s, worker, SHM_RING_NOTIF) != 0)
        return 10;
    for (;;) {
        int n = shm_ring_pop_n_spsc(&r, hs, 64);

        if (n == -EAGAIN) {
            fu_backoff(&spins);
            continue;
        }
        if (n < 0)
            return 11;
        spins = 0;
        for (int i = 0; i < n; i++) {
            struct shm_block_iter it;
            const uint8_t        *b;
            uint32_t              slot, len;
            int                   rc;

            if (hs[i].index == UINT32_MAX) {
                while (nheld > 0)
                    if (shm_blockpool_release(&p, held[--nheld], worker) != 0)
                        res->bad_handle++;
                res->done = 1;
                return 0;
            }
            if (shm_blockpool_open(&p, hs[i], worker, &it) != 0) {
                res->bad_handle++;
                continue;
            }
            while ((rc = shm_blockpool_next(&it, &slot, &b, &len)) == 1)
                cons_check(res, c, slot, b, len);
            if (rc != 0)
                res->bad_handle++;
            res->blocks++;
            if (hold == 0) {
                if (shm_blockpool_release(&p, hs[i], worker) != 0)
                    res->bad_handle++;
                continue;
            }
            if (nheld == hold) {
                if (shm_blockpool_release(&p, held[0], worker) != 0)
                    res->bad_handle++;
                memmove(held, held + 1, (hold - 1) * sizeof(held[0]));
                nheld--;
            }
            held[nheld++] = hs[i];
        }
    }
}

/* The broker's side of the fan-out. */
struct broker {
    struct shm_segment       s;
    struct shm_blockpool_ref p;
    struct shm_ring_ref      r[NCONS];
    uint32_t                 worker[NCONS];     /* slot of consumer c */
    bool                     up[NCONS];         /* push to it? */
    uint64_t                 last[NCONS];       /* last seq sent to c */
    uint64_t                 sent[NCONS];       /* records sent to c */
    uint64_t                 pushed[NCONS];     /* blocks pushed to c */
    uint64_t                 enospc;            /* allocs refused */
    uint64_t                 errors;            /* publish failed */
    uint64_t                 seq;
    unsigned                 seed;
};

static void
broker_push(struct broker *bk, uint32_t c, struct shm_block_handle h)
{
    unsigned spins = 0;

    while (shm_ring_push_spsc(&bk->r[c], &h) == -ENOSPC)
        fu_backoff(&spins);
}

/* Fill one block with records seq.. for a random set of live consumers. */
static void
broker_block(struct broker *bk, uint64_t end)
{
    struct shm_block_handle h;
    uint8_t                 rec[REC_MAX];
    uint64_t                mask = 0, holders = 0, prev[NCONS];
    unsigned                spins = 0;

    while (mask == 0) {
        mask = (uint64_t)(rand_r(&bk->seed) % 3) + 1;
        for (uint32_t c = 0; c < NCONS; c++)
            if (!bk->up[c])
                mask &= ~(UINT64_C(1) << c);
    }
    while (shm_blockpool_alloc(&bk->p, &h) == -ENOSPC) {
        bk->enospc++;
        fu_backoff(&spins);
    }
    while (bk->seq < end) {
        uint32_t len;

        for (uint32_t c = 0; c < NCONS; c++)
            prev[c] = (mask >> c & 1) ? bk->last[c] : UINT64_MAX - 1;
        len = rec_make(rec, bk->seq, prev);
        if (shm_blockpool_append(&bk->p, h, (uint32_t)bk->seq ^ SLOT_XOR, rec,
                                 len)
            != 0)
            break;
        for (uint32_t c = 0; c < NCONS; c++)
            if (mask >> c & 1) {
                bk->last[c] = bk->seq;
                bk->sent[c]++;
            }
        bk->seq++;
    }
    for (uint32_t c = 0; c < NCONS; c++)
        if (mask >> c & 1)
            holders |= UINT64_C(1) << bk->worker[c];
    /* Counted, not ck_assert-ed: a passing assertion costs a write(2). */
    if (shm_blockpool_publish(&bk->p, h, holders) != 0)
        bk->errors++;
    for (uint32_t c = 0; c < NCONS; c++)
        if (mask >> c & 1) {
            broker_push(bk, c, h);
            bk->pushed[c]++;
        }
}

static void
broker_init(struct broker *bk, const struct shm_plan *pl)
{
    memset(bk, 0, sizeof(*bk));
    ck_assert_int_eq(shm_plan_create(&bk->s, pl, "check_blockpool"), 0);
    ck_assert_int_eq(shm_blockpool_locate(&bk->p, &bk->s), 0);
    for (uint32_t c = 0; c < NCONS; c++) {
        bk->worker[c] = c == 0 ? 3 : 40;    /* any slots: bits 3 and 40 */
        bk->up[c] = true;
        bk->last[c] = UINT64_MAX;
        ck_assert_int_eq(
            shm_ring_locate(&bk->r[c], &bk->s, bk->worker[c], SHM_RING_NOTIF),
            0);
    }
    bk->seed = 2024;
}

static pid_t
cons_spawn(struct broker *bk, uint32_t c, uint32_t hold,
           struct cons_result *res)
{
    pid_t pid;

    memset(res, 0, sizeof(*res));
    res->last = UINT64_MAX;
    pid = fu_fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0)
        _exit(cons_main(bk->s.fd, c, bk->worker[c], hold, res));
    return pid;
}

static struct cons_result *
results_map(void)
{
    void *m = mmap(NULL, NCONS * sizeof(struct cons_result),
                   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    ck_assert_ptr_ne(m, MAP_FAILED);
    return m;
}

static void
check_result(const struct broker *bk, uint32_t c, const struct cons_result *r)
{
    ck_assert_uint_eq(bk->errors, 0);
    ck_assert_uint_eq(r->done, 1);
    ck_assert_uint_eq(r->bad_chain, 0);
    ck_assert_uint_eq(r->bad_sum, 0);
    ck_assert_uint_eq(r->bad_handle, 0);
    ck_assert_uint_eq(r->records, bk->sent[c]);
    ck_assert_uint_eq(r->blocks, bk->pushed[c]);
    ck_assert_uint_eq(r->last, bk->last[c]);
}

static const struct shm_plan plan_fan = {
    .nodes = 1, .refs = 1, .strings = 8, .slots = 1, .vheap = 64,
    .ring_workers = 41, .req_ring_slots = 2, .reply_ring_slots = 2,
    .notif_ring_slots = 128, .msg_slot_size = 8,
    .blocks = 48, .block_size = 4096,     /* < 2 rings: it runs out */
};

#define FAN_RECORDS (10500u * 1000)

START_TEST(test_fork_two_consumers)
{
    struct broker                  bk;
    struct cons_result            *res = results_map();
    const struct shm_block_handle  end = { UINT32_MAX, 0 };
    pid_t                          pid[NCONS];
    double                         t0;
    uint64_t                       blocks;

    broker_init(&bk, &plan_fan);
    for (uint32_t c = 0; c < NCONS; c++)
        pid[c] = cons_spawn(&bk, c, 0, &res[c]);
    t0 = fu_now();
    while (bk.seq < FAN_RECORDS)
        broker_block(&bk, FAN_RECORDS);
    for (uint32_t c = 0; c < NCONS; c++)
        broker_push(&bk, c, end);
    for (uint32_t c = 0; c < NCONS; c++)
        ck_assert_int_eq(fu_wait(pid[c]), 0);
    t0 = fu_now() - t0;
    for (uint32_t c = 0; c < NCONS; c++) {
        const struct shm_blockpool_wstats *w =
            &bk.p.sh->w[bk.worker[c]];

        check_result(&bk, c, &res[c]);
        ck_assert_uint_eq(atomic_load(&w->released), bk.pushed[c]);
        ck_assert_uint_eq(atomic_load(&w->stale), 0);
        ck_assert_uint_eq(atomic_load(&w->corrupt), 0);
    }
    /* Every block came back; exhaustion was counted exactly. */
    ck_assert_uint_eq(shm_blockpool_free_count(&bk.p), bk.p.nblocks);
    ck_assert_uint_eq(atomic_load(&bk.p.sh->exhausted), bk.enospc);
    blocks = atomic_load(&bk.p.sh->allocs);
    ck_assert_uint_eq(atomic_load(&bk.p.sh->published), blocks);
    ck_assert_uint_eq(atomic_load(&bk.p.sh->w[bk.worker[0]].freed)
                          + atomic_load(&bk.p.sh->w[bk.worker[1]].freed),
                      blocks);
    printf("blockpool: %u records in %llu blocks to 2 consumers "
           "(%llu + %llu records checked) in %.2f s = %.2f M records/s, "
           "%.0f blocks/s; pool exhausted %llu times, %llu held blocks "
           "skipped\n",
           FAN_RECORDS, (unsigned long long)blocks,
           (unsigned long long)res[0].records,
           (unsigned long long)res[1].records, t0, FAN_RECORDS / t0 / 1e6,
           (double)blocks / t0, (unsigned long long)bk.enospc,
           (unsigned long long)atomic_load(&bk.p.sh->skipped));
    fflush(stdout);
    shm_segment_close(&bk.s);
}
END_TEST

/*
 * Consumer 1 holds up to 8 blocks and is killed with -9 at a random point;
 * the broker stops pushing to it, empties its ring, reclaims its
 * references, respawns it, and carries on.  All blocks come back.
 */
START_TEST(test_reclaim_after_kill)
{
    struct broker                  bk;
    struct cons_result            *res = results_map();
    const struct shm_block_handle  end = { UINT32_MAX, 0 };
    struct shm_plan                pl = plan_fan;
    const struct shm_blockpool_wstats *w1;
    pid_t                          pid[NCONS];
    uint64_t                       pushed1, reclaimed, released1, dropped;
    uint64_t                       total = 0;

    pl.blocks = 64;
    pl.block_size = 1024;
    pl.notif_ring_slots = 16;
    broker_init(&bk, &pl);
    w1 = &bk.p.sh->w[bk.worker[1]];
    for (int round = 0; round < 5; round++) {
        uint64_t kill_at = 2000 + fu_mix((uint64_t)round) % 3000;

        pid[0] = round == 0 ? cons_spawn(&bk, 0, 0, &res[0]) : pid[0];
        pid[1] = cons_spawn(&bk, 1, 8, &res[1]);
        bk.up[1] = true;
        pushed1 = bk.pushed[1];
        while (bk.pushed[1] - pushed1 < kill_at)
            broker_block(&bk, UINT64_MAX);
        /* Kill it wherever it is: mid-open, mid-release, asleep. */
        ck_assert_int_eq(kill(pid[1], SIGKILL), 0);
        ck_assert_int_eq(fu_wait(pid[1]), 128 + SIGKILL);
        bk.up[1] = false;
        released1 = atomic_load(&w1->released);
        dropped = shm_ring_reset_dead_consumer(&bk.r[1]);
        reclaimed = shm_blockpool_reclaim_worker(&bk.p, bk.worker[1]);
        /*
         * Every block pushed to it was released by it or reclaimed for
         * it.  (Its released counter may lag by one: it can die between
         * its atomic AND and its counter store.)
         */
        ck_assert_uint_ge(reclaimed, dropped);
        ck_assert_uint_ge(bk.pushed[1], released1 + reclaimed);
        ck_assert_uint_le(bk.pushed[1] - (released1 + reclaimed), 1);
        ck_assert_uint_gt(reclaimed, 0);
        total += reclaimed;
        /* Its successor starts a fresh chain (it never saw the rest). */
        bk.last[1] = UINT64_MAX;
        bk.sent[1] = 0;
        bk.pushed[1] = 0;
        atomic_store((_Atomic uint64_t *)&w1->released, 0);
        atomic_store((_Atomic uint64_t *)&w1->stale, 0);
    }
    /* A last successor runs to the end and must see no stale handle. */
    pid[1] = cons_spawn(&bk, 1, 0, &res[1]);
    bk.up[1] = true;
    for (int i = 0; i < 3000; i++)
        broker_block(&bk, UINT64_MAX);
    for (uint32_t c = 0; c < NCONS; c++)
        broker_push(&bk, c, end);
    for (uint32_t c = 0; c < NCONS; c++)
        ck_assert_int_eq(fu_wait(pid[c]), 0);
    check_result(&bk, 0, &res[0]);
    check_result(&bk, 1, &res[1]);
    ck_assert_uint_eq(atomic_load(&w1->stale), 0);
    ck_assert_uint_eq(atomic_load(&bk.p.sh->w[bk.worker[0]].stale), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&bk.p), bk.p.nblocks);
    ck_assert_uint_eq(atomic_load(&bk.p.sh->reclaimed), total);
    printf("blockpool reclaim: 5 kills, %llu references reclaimed, "
           "pool exhausted %llu times, all %u blocks free at the end\n",
           (unsigned long long)total, (unsigned long long)bk.enospc,
           bk.p.nblocks);
    fflush(stdout);
    shm_segment_close(&bk.s);
}
END_TEST

static Suite *
blockpool_suite(void)
{
    Suite *s = suite_create("Notification block pool");
    TCase *tc;

    tc = tcase_create("geometry");
    tcase_add_test(tc, test_geometry);
    tcase_add_test(tc, test_segment_pool);
    tcase_add_test(tc, test_init_zeroed);
    tcase_add_test(tc, test_prefault);
    suite_add_tcase(s, tc);

    tc = tcase_create("records");
    tcase_add_test(tc, test_records);
    tcase_add_test(tc, test_reserve_commit);
    tcase_add_test(tc, test_corrupt_records);
    suite_add_tcase(s, tc);

    tc = tcase_create("stale, exhaustion, reclaim");
    tcase_add_test(tc, test_stale_handles);
    tcase_add_test(tc, test_exhaustion);
    tcase_add_test(tc, test_disown_and_reclaim);
    suite_add_tcase(s, tc);

    tc = tcase_create("processes");
    tcase_set_timeout(tc, 50);
    tcase_add_test(tc, test_fork_two_consumers);
    tcase_add_test(tc, test_reclaim_after_kill);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(blockpool_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
