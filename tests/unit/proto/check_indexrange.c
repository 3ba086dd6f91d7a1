/*
 * tests/unit/proto/check_indexrange.c: IndexRange (proto/indexrange.h): the
 * grammar of Part 4 Annex A.3, the dimension limit, reading a sub-range
 * out of arrays, matrices and strings, and writing one into a value, with
 * the status each refusal gets (Part 4 §7.27).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/indexrange.h"
#include "proto/status_gen.h"
#include "proto/types.h"

static uint8_t         mem[1 << 16];
static struct ua_arena arena;

static void
setup(void)
{
    ua_arena_init(&arena, mem, sizeof(mem));
}

static ua_status
parse(const char *s, struct ua_indexrange *r)
{
    return ua_indexrange_parse((const uint8_t *)s, strlen(s), r);
}

/* v's sub-range by text; the status of parse or extract. */
static ua_status
extract(const char *s, const struct ua_variant *v, struct ua_variant *out)
{
    struct ua_indexrange r;
    ua_status            st = parse(s, &r);

    return st != UA_GOOD ? st : ua_indexrange_extract(&arena, &r, v, out);
}

static ua_status
splice(const char *s, const struct ua_variant *cur,
       const struct ua_variant *piece, struct ua_variant *out)
{
    struct ua_indexrange r;
    ua_status            st = parse(s, &r);

    return st != UA_GOOD ? st
                         : ua_indexrange_splice(&arena, &r, cur, piece, out);
}

static struct ua_variant
array(void *data, int32_t n, uint8_t bt)
{
    struct ua_variant v;

    ua_variant_set_array(&v, data, n, bt);
    return v;
}

static struct ua_variant
scalar(void *data, uint8_t bt)
{
    struct ua_variant v;

    ua_variant_set_scalar(&v, data, bt);
    return v;
}

/* ------------------------------------------------------------ grammar */

START_TEST(test_parse_values)
{
    struct ua_indexrange r;

    ck_assert_uint_eq(parse("5", &r), UA_GOOD);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(r.lo[0], 5);
    ck_assert_uint_eq(r.hi[0], 5);
    ck_assert_uint_eq(parse("1:3,0:2", &r), UA_GOOD);
    ck_assert_uint_eq(r.n, 2);
    ck_assert_uint_eq(r.lo[0], 1);
    ck_assert_uint_eq(r.hi[0], 3);
    ck_assert_uint_eq(r.lo[1], 0);
    ck_assert_uint_eq(r.hi[1], 2);
    ck_assert_uint_eq(parse("007:0010", &r), UA_GOOD);
    ck_assert_uint_eq(r.lo[0], 7);
    ck_assert_uint_eq(r.hi[0], 10);
    /* Bounds saturate: a lower bound past any data, an upper one cut. */
    ck_assert_uint_eq(parse("99999999999999999999", &r), UA_GOOD);
    ck_assert_uint_eq(r.lo[0], UA_INDEXRANGE_BOUND);
    ck_assert_uint_eq(parse("0:99999999999999999999999999", &r), UA_GOOD);
    ck_assert_uint_eq(r.hi[0], UA_INDEXRANGE_BOUND);
    ck_assert_uint_eq(parse("0:4294967295", &r), UA_GOOD);
    ck_assert_uint_eq(r.hi[0], UINT32_MAX);
}
END_TEST

START_TEST(test_parse_syntax)
{
    static const char *bad[] = {
        "5:2", "5:5", "3:3", "3:1", "-1", "1:", ":1", "1,,2", "1,", ",1",
        "a", " 1", "1 ", "1:2:3", "0x1", "+1", "1;2", "1:-2", "\xef\xbc\x91",
        ",", ":", "1:2,",
    };
    struct ua_indexrange r;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(parse(bad[i], &r) == UA_BAD_INDEX_RANGE_INVALID,
                      "range \"%s\"", bad[i]);
    ck_assert_uint_eq(ua_indexrange_parse(NULL, 0, &r),
                      UA_BAD_INDEX_RANGE_INVALID);
    ck_assert_uint_eq(ua_indexrange_parse((const uint8_t *)"1", 0, &r),
                      UA_BAD_INDEX_RANGE_INVALID);
    /* The text ends at len, not at a NUL. */
    ck_assert_uint_eq(ua_indexrange_parse((const uint8_t *)"1:2x", 3, &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.hi[0], 2);
}
END_TEST

START_TEST(test_many_dimensions)
{
    char                 buf[1024], *p = buf;
    struct ua_indexrange r;
    int32_t              a[3] = { 1, 2, 3 };
    struct ua_variant    v = array(a, 3, UA_BT_INT32), out;

    /* "1,2,3,..." over 100 dimensions: valid syntax, counted, no data. */
    for (int i = 1; i <= 100; i++)
        p += sprintf(p, i == 1 ? "%d" : ",%d", i);
    ck_assert_uint_eq(parse(buf, &r), UA_GOOD);
    ck_assert_uint_eq(r.n, 100);
    ck_assert_uint_eq(r.lo[UA_INDEXRANGE_DIMS_MAX - 1], UA_INDEXRANGE_DIMS_MAX);
    ck_assert_uint_eq(ua_indexrange_extract(&arena, &r, &v, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(ua_indexrange_splice(&arena, &r, &v, &v, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    /* Past the limit the syntax is still checked. */
    p[0] = ',';
    p[1] = '\0';
    ck_assert_uint_eq(parse(buf, &r), UA_BAD_INDEX_RANGE_INVALID);
    /* 100 000 dimensions: still linear, still no data. */
    {
        size_t n = 200000;
        char  *big = malloc(n + 1);

        for (size_t i = 0; i < n; i += 2) {
            big[i] = '0';
            big[i + 1] = ',';
        }
        big[n - 1] = '\0';
        ck_assert_uint_eq(parse(big, &r), UA_GOOD);
        ck_assert_uint_eq(r.n, 100000);
        ck_assert_uint_eq(ua_indexrange_extract(&arena, &r, &v, &out),
                          UA_BAD_INDEX_RANGE_NO_DATA);
        free(big);
    }
}
END_TEST

/* ------------------------------------------------------------ extract */

START_TEST(test_extract_arrays)
{
    int32_t           a[3] = { -1, -2, -3 };
    struct ua_variant v = array(a, 3, UA_BT_INT32), out;
    const int32_t    *o;

    ck_assert_uint_eq(extract("1", &v, &out), UA_GOOD);
    ck_assert(out.is_array);
    ck_assert_int_eq(out.n, 1);
    ck_assert_int_eq(out.ndims, -1);
    ck_assert_int_eq(((const int32_t *)out.data)[0], -2);
    ck_assert_uint_eq(extract("1:2", &v, &out), UA_GOOD);
    o = out.data;
    ck_assert_int_eq(out.n, 2);
    ck_assert_int_eq(o[0], -2);
    ck_assert_int_eq(o[1], -3);
    ck_assert_ptr_ne(out.data, (void *)&a[1]);      /* a copy */
    /* Upper bound past the end: a partial result. */
    ck_assert_uint_eq(extract("0:4294967295", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 3);
    ck_assert_uint_eq(extract("2:99999999999999", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 1);
    ck_assert_int_eq(((const int32_t *)out.data)[0], -3);
    /* Lower bound past the end, or dimensions v lacks: no data. */
    ck_assert_uint_eq(extract("3", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("3:5", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("99999999999999", &v, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("4294967295", &v, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("0,0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    /* Empty and null arrays have nothing to select. */
    v.n = 0;
    ck_assert_uint_eq(extract("0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    v.n = -1;
    ck_assert_uint_eq(extract("0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_extract_scalars_and_strings)
{
    int32_t           i = 5;
    double            d = 1;
    struct ua_string  s = ua_string_from("uabroker"), e = ua_string_from("");
    struct ua_string  b = { 3, (uint8_t *)"uab" };
    struct ua_string  sa[3] = { ua_string_from("abc"), ua_string_from("demo"),
                                ua_string_from("x") };
    struct ua_variant v, out;
    const struct ua_string *o;

    /* A scalar that is not a String or ByteString: no data. */
    v = scalar(&i, UA_BT_INT32);
    ck_assert_uint_eq(extract("0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    v = scalar(&d, UA_BT_DOUBLE);
    ck_assert_uint_eq(extract("0:1", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    memset(&v, 0, sizeof(v));
    ck_assert_uint_eq(extract("0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    /* A String is an array of bytes (Part 4 §7.27). */
    v = scalar(&s, UA_BT_STRING);
    ck_assert_uint_eq(extract("2:5", &v, &out), UA_GOOD);
    ck_assert(!out.is_array);
    ck_assert_uint_eq(out.type, UA_BT_STRING);
    ck_assert(ua_string_eq(out.data, "brok"));
    ck_assert(ua_string_eq(&s, "uabroker"));        /* v untouched */
    ck_assert_uint_eq(extract("6:100", &v, &out), UA_GOOD);
    ck_assert(ua_string_eq(out.data, "er"));
    ck_assert_uint_eq(extract("8", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("0,0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    v = scalar(&e, UA_BT_STRING);
    ck_assert_uint_eq(extract("0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    v = scalar(&b, UA_BT_BYTESTRING);
    ck_assert_uint_eq(extract("0:1", &v, &out), UA_GOOD);
    o = out.data;
    ck_assert_int_eq(o->len, 2);
    ck_assert_mem_eq(o->data, "ua", 2);
    /* An array of Strings takes one more dimension: substrings, and an
     * element too short for it is empty. */
    v = array(sa, 3, UA_BT_STRING);
    ck_assert_uint_eq(extract("0:2,1:2", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 3);
    o = out.data;
    ck_assert(ua_string_eq(&o[0], "bc"));
    ck_assert(ua_string_eq(&o[1], "em"));
    ck_assert_int_eq(o[2].len, 0);
    ck_assert_uint_eq(extract("1:2", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 2);
    o = out.data;
    ck_assert(ua_string_eq(&o[0], "demo"));
    ck_assert_uint_eq(extract("0,0,0", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_extract_matrix)
{
    int32_t           m[12], dims[2] = { 3, 4 };
    struct ua_variant v = array(m, 12, UA_BT_INT32), out;
    const int32_t    *o;

    for (int i = 0; i < 12; i++)
        m[i] = i;                   /* m[row][col] = 4 * row + col */
    v.ndims = 2;
    v.dims = dims;
    /* Rows 1..2, columns 0..1: a 2 x 2 block, last dimension fastest. */
    ck_assert_uint_eq(extract("1:2,0:1", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 4);
    ck_assert_int_eq(out.ndims, 2);
    ck_assert_int_eq(out.dims[0], 2);
    ck_assert_int_eq(out.dims[1], 2);
    o = out.data;
    ck_assert_int_eq(o[0], 4);
    ck_assert_int_eq(o[1], 5);
    ck_assert_int_eq(o[2], 8);
    ck_assert_int_eq(o[3], 9);
    /* One element; a cut upper bound; refusals. */
    ck_assert_uint_eq(extract("2,3", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 1);
    ck_assert_int_eq(((const int32_t *)out.data)[0], 11);
    ck_assert_uint_eq(extract("0:9,3:9", &v, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 3);
    ck_assert_int_eq(((const int32_t *)out.data)[2], 11);
    ck_assert_uint_eq(extract("0,4", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("1", &v, &out), UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(extract("1,1,1", &v, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_extract_out_of_memory)
{
    int32_t           a[3] = { 1, 2, 3 };
    struct ua_string  s = ua_string_from("abc");
    struct ua_variant v = array(a, 3, UA_BT_INT32), out;
    uint8_t           small[8];

    ua_arena_init(&arena, small, 0);
    ck_assert_uint_eq(extract("0:1", &v, &out), UA_BAD_OUT_OF_MEMORY);
    v = scalar(&s, UA_BT_STRING);
    ck_assert_uint_eq(extract("0:1", &v, &out), UA_BAD_OUT_OF_MEMORY);
}
END_TEST

/* ------------------------------------------------------------ splice */

START_TEST(test_splice_arrays)
{
    int32_t           all[5] = { 10, 11, 12, 13, 14 }, two[2] = { 7, 8 };
    int32_t           three[3] = { 1, 2, 3 };
    double            dd[2] = { 1, 2 };
    struct ua_variant cur = array(all, 5, UA_BT_INT32), out;
    struct ua_variant p2 = array(two, 2, UA_BT_INT32);
    const int32_t    *o;

    ck_assert_uint_eq(splice("1:2", &cur, &p2, &out), UA_GOOD);
    ck_assert_int_eq(out.n, 5);
    ck_assert(out.is_array);
    o = out.data;
    ck_assert_int_eq(o[0], 10);
    ck_assert_int_eq(o[1], 7);
    ck_assert_int_eq(o[2], 8);
    ck_assert_int_eq(o[3], 13);
    ck_assert_int_eq(all[1], 11);                   /* cur untouched */
    /* At the end, and one past it. */
    ck_assert_uint_eq(splice("3:4", &cur, &p2, &out), UA_GOOD);
    ck_assert_int_eq(((const int32_t *)out.data)[4], 8);
    ck_assert_uint_eq(splice("4:5", &cur, &p2, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    p2.n = 1;
    ck_assert_uint_eq(splice("5", &cur, &p2, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(splice("4", &cur, &p2, &out), UA_GOOD);
    p2.n = 2;
    /* The piece: exactly the range's length, the same type, an array. */
    ck_assert_uint_eq(splice("0:2", &cur, &p2, &out),
                      UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    {
        struct ua_variant p3 = array(three, 3, UA_BT_INT32);
        struct ua_variant pd = array(dd, 2, UA_BT_DOUBLE);
        struct ua_variant ps = scalar(two, UA_BT_INT32);

        ck_assert_uint_eq(splice("0:1", &cur, &p3, &out),
                          UA_BAD_INDEX_RANGE_DATA_MISMATCH);
        ck_assert_uint_eq(splice("0:1", &cur, &pd, &out),
                          UA_BAD_INDEX_RANGE_DATA_MISMATCH);
        ck_assert_uint_eq(splice("0", &cur, &ps, &out),
                          UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    }
    /* One dimension only; no matrix; no empty value. */
    ck_assert_uint_eq(splice("0:1,0", &cur, &p2, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    {
        int32_t           m[4] = { 0 }, dims[2] = { 2, 2 };
        struct ua_variant mx = array(m, 4, UA_BT_INT32);

        mx.ndims = 2;
        mx.dims = dims;
        ck_assert_uint_eq(splice("0:1", &mx, &p2, &out),
                          UA_BAD_INDEX_RANGE_NO_DATA);
    }
    cur.n = 0;
    ck_assert_uint_eq(splice("0:1", &cur, &p2, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_splice_strings)
{
    struct ua_string  s = ua_string_from("abcdef"), p = ua_string_from("XY");
    struct ua_string  p3 = ua_string_from("XYZ"), e = ua_string_from("");
    int32_t           i = 1;
    struct ua_variant cur = scalar(&s, UA_BT_STRING), out;
    struct ua_variant pv = scalar(&p, UA_BT_STRING);
    struct ua_variant pb = scalar(&p, UA_BT_BYTESTRING);

    ck_assert_uint_eq(splice("2:3", &cur, &pv, &out), UA_GOOD);
    ck_assert(!out.is_array);
    ck_assert(ua_string_eq(out.data, "abXYef"));
    ck_assert(ua_string_eq(&s, "abcdef"));          /* cur untouched */
    ck_assert_uint_eq(splice("4:5", &cur, &pv, &out), UA_GOOD);
    ck_assert(ua_string_eq(out.data, "abcdXY"));
    /* Writing is exact: no cut upper bound. */
    ck_assert_uint_eq(splice("5:6", &cur, &pv, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    {
        struct ua_variant p3v = scalar(&p3, UA_BT_STRING);

        ck_assert_uint_eq(splice("0:1", &cur, &p3v, &out),
                          UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    }
    ck_assert_uint_eq(splice("0:1", &cur, &pb, &out),
                      UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    {
        struct ua_variant arr = array(&p, 1, UA_BT_STRING);

        ck_assert_uint_eq(splice("0:1", &cur, &arr, &out),
                          UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    }
    /* ByteStrings the same way. */
    cur.type = UA_BT_BYTESTRING;
    ck_assert_uint_eq(splice("0:1", &cur, &pb, &out), UA_GOOD);
    ck_assert_mem_eq(((const struct ua_string *)out.data)->data, "XYcdef",
                     6);
    /* Empty strings and other scalars have no range. */
    cur = scalar(&e, UA_BT_STRING);
    ck_assert_uint_eq(splice("0", &cur, &pv, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    cur = scalar(&i, UA_BT_INT32);
    ck_assert_uint_eq(splice("0", &cur, &pv, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    memset(&cur, 0, sizeof(cur));
    ck_assert_uint_eq(splice("0", &cur, &pv, &out),
                      UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_splice_out_of_memory)
{
    int32_t           all[5] = { 10, 11, 12, 13, 14 }, two[2] = { 7, 8 };
    struct ua_string  s = ua_string_from("abcdef"), p = ua_string_from("XY");
    struct ua_variant cur = array(all, 5, UA_BT_INT32), out;
    struct ua_variant p2 = array(two, 2, UA_BT_INT32);
    uint8_t           small[8];

    ua_arena_init(&arena, small, 0);
    ck_assert_uint_eq(splice("1:2", &cur, &p2, &out), UA_BAD_OUT_OF_MEMORY);
    cur = scalar(&s, UA_BT_STRING);
    p2 = scalar(&p, UA_BT_STRING);
    ck_assert_uint_eq(splice("1:2", &cur, &p2, &out), UA_BAD_OUT_OF_MEMORY);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("IndexRange");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Grammar");
    tcase_add_test(tc, test_parse_values);
    tcase_add_test(tc, test_parse_syntax);
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_many_dimensions);
    suite_add_tcase(s, tc);
    tc = tcase_create("Extract");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_extract_arrays);
    tcase_add_test(tc, test_extract_scalars_and_strings);
    tcase_add_test(tc, test_extract_matrix);
    tcase_add_test(tc, test_extract_out_of_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("Splice");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_splice_arrays);
    tcase_add_test(tc, test_splice_strings);
    tcase_add_test(tc, test_splice_out_of_memory);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
