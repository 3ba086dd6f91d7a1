/*
 * tests/unit/broker/check_section.c: the table of named configuration
 * sections (broker/section.c): a new name makes a zeroed entry with its
 * name, the same name again just after goes on with it, a name seen
 * before is refused, the table grows past its first 16 entries with
 * every entry kept.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/alloc.h"
#include "broker/section.h"

struct cs_one {
    char     name[16];
    uint32_t value;
};

static const struct bk_section cs_k = { .kind = "test",
                                        .size = sizeof(struct cs_one) };

START_TEST(test_open)
{
    struct cs_one *tab = NULL, *e;
    void          *t;
    uint32_t       n = 0, cap = 0;
    bool           fresh;
    char           err[128], name[16];

    t = tab;
    e = bk_section_open(&cs_k, &t, &n, &cap, "a", &fresh, err, sizeof(err));
    tab = t;
    ck_assert_ptr_nonnull(e);
    ck_assert(fresh);
    ck_assert_str_eq(e->name, "a");
    ck_assert_uint_eq(e->value, 0);
    e->value = 7;
    /* The same section again: its entry, not a new one. */
    e = bk_section_open(&cs_k, &t, &n, &cap, "a", &fresh, err, sizeof(err));
    ck_assert_ptr_nonnull(e);
    ck_assert(!fresh);
    ck_assert_uint_eq(e->value, 7);
    ck_assert_uint_eq(n, 1);
    /* Many more: the table doubles, every entry stays. */
    for (uint32_t i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "s%u", i);
        e = bk_section_open(&cs_k, &t, &n, &cap, name, &fresh, err,
                            sizeof(err));
        ck_assert_ptr_nonnull(e);
        ck_assert(fresh);
        e->value = 100 + i;
    }
    tab = t;
    ck_assert_uint_eq(n, 41);
    ck_assert_uint_ge(cap, 41);
    ck_assert_uint_eq(tab[0].value, 7);
    for (uint32_t i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "s%u", i);
        ck_assert_str_eq(tab[1 + i].name, name);
        ck_assert_uint_eq(tab[1 + i].value, 100 + i);
    }
    /* A name seen before, not just before: refused, nothing added. */
    err[0] = '\0';
    e = bk_section_open(&cs_k, &t, &n, &cap, "a", &fresh, err, sizeof(err));
    ck_assert_ptr_null(e);
    ck_assert(!fresh);
    ck_assert_str_eq(err, "[test a]: a second section of that name");
    ck_assert_uint_eq(n, 41);
    bk_free(t);
}
END_TEST

/* The keys' values: true/false only; a finite number in its range,
 * nothing after it. */
START_TEST(test_values)
{
    bool   b = false;
    double d = -1;

    ck_assert_int_eq(bk_section_bool("true", &b), 0);
    ck_assert(b);
    ck_assert_int_eq(bk_section_bool("false", &b), 0);
    ck_assert(!b);
    ck_assert_int_eq(bk_section_bool("yes", &b), -1);
    ck_assert_int_eq(bk_section_bool("", &b), -1);
    ck_assert_int_eq(bk_section_num("1000", 1, 1000, &d), 0);
    ck_assert(d == 1000);
    ck_assert_int_eq(bk_section_num("0.5", 0, 1, &d), 0);
    ck_assert(d == 0.5);
    d = -1;
    ck_assert_int_eq(bk_section_num("1000.5", 1, 1000, &d), -1);
    ck_assert_int_eq(bk_section_num("0", 1, 1000, &d), -1);
    ck_assert_int_eq(bk_section_num("5x", 1, 1000, &d), -1);
    ck_assert_int_eq(bk_section_num("", 1, 1000, &d), -1);
    ck_assert_int_eq(bk_section_num("nan", -INFINITY, INFINITY, &d), -1);
    ck_assert_int_eq(bk_section_num("inf", -INFINITY, INFINITY, &d), -1);
    ck_assert_int_eq(bk_section_num("1e999", -INFINITY, INFINITY, &d), -1);
    ck_assert(d == -1);         /* untouched by a refusal */
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Configuration sections (broker)");
    TCase   *tc = tcase_create("Table");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_open);
    tcase_add_test(tc, test_values);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
