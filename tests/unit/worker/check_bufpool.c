/*
 * tests/unit/worker/check_bufpool.c: worker/bufpool.c, the connections'
 * buffers: `in` and `out` buffers allocated lazily, at most max of each,
 * and recycled (a buffer given back is the next one handed out, with no
 * new allocation); the oversize output buffer rounded to pages and the
 * largest one kept as the spare; reassembly memory within the worker-wide
 * budget; arena blocks of the usual size recycled, larger ones freed.
 * Allocations are counted in the worker's stats row (worker/alloc.c).
 */
#include <check.h>
#include <stdatomic.h>
#include <string.h>

#include "proto/arena.h"
#include "shm/layout.h"
#include "worker/bufpool.h"
#include "worker/worker.h"

#define BP_MAX    3
#define BP_IN     1000
#define BP_OUT    2000
#define BP_ASM    10000
#define BP_BLOCK  4096

static struct shm_worker bp_row;
static struct wk_worker  bp_w;
static struct wk_bufpool bp;

static uint64_t
bp_allocs(void)
{
    return atomic_load(&bp_row.allocations);
}

static void
setup(void)
{
    memset(&bp_row, 0, sizeof(bp_row));
    memset(&bp_w, 0, sizeof(bp_w));
    bp_w.row = &bp_row;
    wk_bufpool_init(&bp, &bp_w, BP_MAX, BP_IN, BP_OUT, BP_ASM, BP_BLOCK);
    ck_assert_uint_eq(bp_allocs(), 0);  /* nothing before it is needed */
}

static void
teardown(void)
{
    wk_bufpool_clear(&bp);
}

START_TEST(test_in_out_recycled)
{
    uint8_t *in[BP_MAX], *out[BP_MAX], *p;

    for (int i = 0; i < BP_MAX; i++) {
        in[i] = wk_bufpool_get(&bp, false);
        out[i] = wk_bufpool_get(&bp, true);
        ck_assert_ptr_nonnull(in[i]);
        ck_assert_ptr_nonnull(out[i]);
        memset(in[i], 0xa5, BP_IN);     /* the sizes asked for (ASan) */
        memset(out[i], 0x5a, BP_OUT);
    }
    ck_assert_uint_eq(bp.nbuf_in, BP_MAX);
    ck_assert_uint_eq(bp.nbuf_out, BP_MAX);
    ck_assert_uint_eq(bp_allocs(), 2 * BP_MAX);
    /* At most max of each kind. */
    ck_assert_ptr_null(wk_bufpool_get(&bp, false));
    ck_assert_ptr_null(wk_bufpool_get(&bp, true));
    /* Given back, handed out again: the same memory, no allocation. */
    wk_bufpool_put(&bp, in[1], false);
    wk_bufpool_put(&bp, out[2], true);
    wk_bufpool_put(&bp, NULL, true);    /* nothing */
    p = wk_bufpool_get(&bp, false);
    ck_assert_ptr_eq(p, in[1]);
    p = wk_bufpool_get(&bp, true);
    ck_assert_ptr_eq(p, out[2]);
    ck_assert_ptr_null(wk_bufpool_get(&bp, true));
    ck_assert_uint_eq(bp_allocs(), 2 * BP_MAX);
    for (int i = 0; i < BP_MAX; i++) {
        wk_bufpool_put(&bp, in[i], false);
        wk_bufpool_put(&bp, out[i], true);
    }
}
END_TEST

START_TEST(test_big_and_spare)
{
    size_t   cap, cap2;
    uint8_t *a, *b, *o;

    a = wk_bufpool_big(&bp, 5000, &cap);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(cap, 8192);       /* whole pages */
    memset(a, 1, cap);
    b = wk_bufpool_big(&bp, 20000, &cap2);
    ck_assert_uint_eq(cap2, 20480);
    ck_assert_uint_eq(bp_allocs(), 2);
    /* The largest given back is kept as the spare, the smaller freed. */
    wk_bufpool_out_put(&bp, b, cap2);
    ck_assert_ptr_eq(bp.big_spare, b);
    wk_bufpool_out_put(&bp, a, cap);
    ck_assert_ptr_eq(bp.big_spare, b);
    ck_assert_uint_eq(bp.big_spare_cap, 20480);
    /* A request the spare can hold takes it, without an allocation. */
    a = wk_bufpool_big(&bp, 10000, &cap);
    ck_assert_ptr_eq(a, b);
    ck_assert_uint_eq(cap, 20480);
    ck_assert_ptr_null(bp.big_spare);
    ck_assert_uint_eq(bp_allocs(), 2);
    /* One the spare cannot hold: a new buffer, the spare stays. */
    wk_bufpool_out_put(&bp, a, cap);
    b = wk_bufpool_big(&bp, 30000, &cap2);
    ck_assert_uint_eq(cap2, 32768);
    ck_assert_ptr_ne(b, a);
    ck_assert_ptr_eq(bp.big_spare, a);
    ck_assert_uint_eq(bp_allocs(), 3);
    wk_bufpool_out_put(&bp, b, cap2);   /* larger: the new spare */
    ck_assert_ptr_eq(bp.big_spare, b);
    /* A usual `out` buffer goes back to its free list. */
    o = wk_bufpool_get(&bp, true);
    wk_bufpool_out_put(&bp, o, BP_OUT);
    ck_assert_ptr_eq(wk_bufpool_get(&bp, true), o);
    wk_bufpool_put(&bp, o, true);
    wk_bufpool_out_put(&bp, NULL, 0);   /* nothing */
}
END_TEST

START_TEST(test_reassembly_budget)
{
    void *a, *b, *c;

    a = bp.mem.alloc(bp.mem.ctx, 6000);
    ck_assert_ptr_nonnull(a);
    memset(a, 1, 6000);
    ck_assert_uint_eq(bp.asm_used, 6000);
    /* Past the budget: refused (BadTcpNotEnoughResources upstream). */
    ck_assert_ptr_null(bp.mem.alloc(bp.mem.ctx, 4001));
    b = bp.mem.alloc(bp.mem.ctx, 4000);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(bp.asm_used, BP_ASM);
    ck_assert_ptr_null(bp.mem.alloc(bp.mem.ctx, 1));
    bp.mem.free(bp.mem.ctx, a);
    ck_assert_uint_eq(bp.asm_used, 4000);
    c = bp.mem.alloc(bp.mem.ctx, 6000);
    ck_assert_ptr_nonnull(c);
    bp.mem.free(bp.mem.ctx, b);
    bp.mem.free(bp.mem.ctx, c);
    bp.mem.free(bp.mem.ctx, NULL);      /* nothing */
    ck_assert_uint_eq(bp.asm_used, 0);
    ck_assert_uint_eq(bp_allocs(), 3);
}
END_TEST

START_TEST(test_arena_blocks)
{
    static uint8_t  first[256];
    struct ua_arena a;
    uint64_t        n0;
    void           *p;

    ua_arena_init(&a, first, sizeof(first));
    wk_bufpool_arena(&bp, &a);
    /* Past the first block: one usual block from the pool. */
    p = ua_arena_alloc(&a, 1000);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, 1000);
    ck_assert_uint_eq(bp_allocs(), 1);
    ua_arena_reset(&a);
    ck_assert_ptr_nonnull(bp.free_blocks);  /* recycled */
    n0 = bp_allocs();
    for (int i = 0; i < 5; i++) {
        p = ua_arena_alloc(&a, 1000);
        ck_assert_ptr_nonnull(p);
        ua_arena_reset(&a);
    }
    ck_assert_uint_eq(bp_allocs(), n0);     /* no new allocation */
    /* Larger than a block: its own allocation, freed on reset. */
    p = ua_arena_alloc(&a, 3 * BP_BLOCK);
    ck_assert_ptr_nonnull(p);
    memset(p, 2, 3 * BP_BLOCK);
    ck_assert_uint_eq(bp_allocs(), n0 + 1);
    ua_arena_reset(&a);
    ck_assert_ptr_nonnull(bp.free_blocks);
    ck_assert_ptr_null(bp.free_blocks->next);   /* only the usual one */
    p = ua_arena_alloc(&a, 3 * BP_BLOCK);
    ck_assert_uint_eq(bp_allocs(), n0 + 2);
    ua_arena_reset(&a);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/bufpool");
    TCase   *tc = tcase_create("pool");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_in_out_recycled);
    tcase_add_test(tc, test_big_and_spare);
    tcase_add_test(tc, test_reassembly_budget);
    tcase_add_test(tc, test_arena_blocks);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
