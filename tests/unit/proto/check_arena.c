/*
 * tests/unit/proto/check_arena.c: the request arena.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"

static int grows, releases;

static void *
grow_hook(void *ctx, size_t min, size_t *size)
{
    (void)ctx;
    grows++;
    *size = min;
    return malloc(min);
}

static void
release_hook(void *ctx, void *block)
{
    (void)ctx;
    releases++;
    free(block);
}

START_TEST(test_alignment_and_bounds)
{
    uint8_t         buf[256];
    struct ua_arena a;
    uint8_t        *p, *q;

    ua_arena_init(&a, buf + 3, sizeof(buf) - 3);    /* misaligned start */
    p = ua_arena_alloc(&a, 1);
    q = ua_arena_alloc(&a, 13);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq((uintptr_t)p % UA_ARENA_ALIGN, 0);
    ck_assert_uint_eq((uintptr_t)q % UA_ARENA_ALIGN, 0);
    ck_assert(q >= p + 1);
    ck_assert(p >= buf && q + 13 <= buf + sizeof(buf));
}
END_TEST

START_TEST(test_exhaustion_without_grow)
{
    uint8_t         buf[64];
    struct ua_arena a;

    ua_arena_init(&a, buf, sizeof(buf));
    ck_assert_ptr_nonnull(ua_arena_alloc(&a, 64));
    ck_assert_ptr_null(ua_arena_alloc(&a, 1));
    ck_assert_ptr_null(ua_arena_alloc(&a, SIZE_MAX));
    ua_arena_reset(&a);
    ck_assert_ptr_nonnull(ua_arena_alloc(&a, 64));
}
END_TEST

START_TEST(test_grow_and_release)
{
    uint8_t         buf[64];
    struct ua_arena a;
    uint8_t        *p;

    grows = releases = 0;
    ua_arena_init(&a, buf, sizeof(buf));
    a.grow = grow_hook;
    a.release = release_hook;
    p = ua_arena_alloc(&a, 10000);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, 10000);
    ck_assert_ptr_nonnull(ua_arena_alloc(&a, 5000));
    ck_assert_int_eq(grows, 2);
    ua_arena_reset(&a);
    ck_assert_int_eq(releases, 2);
    ck_assert_ptr_eq(ua_arena_alloc(&a, 8), a.base);
}
END_TEST

START_TEST(test_limit)
{
    uint8_t         buf[1024];
    struct ua_arena a;

    ua_arena_init(&a, buf, sizeof(buf));
    a.limit = 128;
    ck_assert_ptr_nonnull(ua_arena_alloc(&a, 128));
    ck_assert_ptr_null(ua_arena_alloc(&a, 1));
    ua_arena_reset(&a);
    ck_assert_ptr_null(ua_arena_alloc(&a, 129));
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Request arena");
    TCase   *tc = tcase_create("Allocation");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_alignment_and_bounds);
    tcase_add_test(tc, test_exhaustion_without_grow);
    tcase_add_test(tc, test_grow_and_release);
    tcase_add_test(tc, test_limit);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
