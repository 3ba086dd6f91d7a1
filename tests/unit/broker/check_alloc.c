/*
 * tests/unit/broker/check_alloc.c: the broker's counting allocator
 * (broker/alloc.c): every allocation counted, frees and failures not;
 * the copies are copies.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/alloc.h"

START_TEST(test_counts)
{
    uint64_t n0 = bk_alloc_count();
    char    *a = bk_alloc(10), *b, *c, *d;
    int     *z = bk_calloc(4, sizeof(int));

    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(z);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(z[i], 0);
    ck_assert_uint_eq(bk_alloc_count(), n0 + 2);
    a = bk_realloc(a, 1000);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(bk_alloc_count(), n0 + 3);
    b = bk_strdup("uabroker");
    c = bk_strndup("uabroker", 2);
    d = bk_strndup("ua", 10);
    ck_assert_str_eq(b, "uabroker");
    ck_assert_str_eq(c, "ua");
    ck_assert_str_eq(d, "ua");
    ck_assert_uint_eq(bk_alloc_count(), n0 + 6);
    bk_free(a);
    bk_free(b);
    bk_free(c);
    bk_free(d);
    bk_free(z);
    bk_free(NULL);
    ck_assert_uint_eq(bk_alloc_count(), n0 + 6);
    /* Size 0 is one byte, counted; an impossible one is refused, not. */
    a = bk_alloc(0);
    ck_assert_ptr_nonnull(a);
    bk_free(a);
    ck_assert_uint_eq(bk_alloc_count(), n0 + 7);
    ck_assert_ptr_null(bk_calloc(SIZE_MAX / 2, 4));
    ck_assert_uint_eq(bk_alloc_count(), n0 + 7);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Allocator (broker)");
    TCase   *tc = tcase_create("Counting");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_counts);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
