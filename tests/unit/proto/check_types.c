/*
 * tests/unit/proto/check_types.c: type-table lookups, deep equality and the
 * generated name tables (status codes, attribute ids).
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

START_TEST(test_builtins_first)
{
    ck_assert_uint_ge(ua_types_count, 25);
    for (int i = 0; i < 25; i++) {
        ck_assert_uint_eq(ua_types[i].kind, i + 1);
        ck_assert_uint_eq(ua_types[i].type_id, (uint32_t)i + 1);
    }
    ck_assert_str_eq(ua_types[UA_TYPE_DIAGNOSTICINFO].name, "DiagnosticInfo");
    ck_assert_uint_eq(ua_types[UA_TYPE_VARIANT].size,
                      sizeof(struct ua_variant));
}
END_TEST

START_TEST(test_lookup_by_binary_id)
{
    const struct ua_type *t;

    t = ua_types_by_binary_id(UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY);
    ck_assert_ptr_eq(t, &ua_types[UA_TYPE_READREQUEST]);
    t = ua_types_by_binary_id(UA_NS0ID_PUBLISHRESPONSE_ENCODING_DEFAULTBINARY);
    ck_assert_ptr_eq(t, &ua_types[UA_TYPE_PUBLISHRESPONSE]);
    ck_assert_ptr_null(ua_types_by_binary_id(0));
    ck_assert_ptr_null(ua_types_by_binary_id(UA_NS0ID_READREQUEST));
    ck_assert_ptr_null(ua_types_by_binary_id(UINT32_MAX));
    /* The index is sorted and every entry points back at its type. */
    for (size_t i = 0; i < ua_types_binary_index_count; i++) {
        const struct ua_type_index *x = &ua_types_binary_index[i];

        ck_assert_uint_eq(ua_types[x->type].binary_id, x->id);
        if (i > 0)
            ck_assert_uint_lt(ua_types_binary_index[i - 1].id, x->id);
        ck_assert_ptr_eq(ua_types_by_binary_id(x->id), &ua_types[x->type]);
    }
}
END_TEST

START_TEST(test_lookup_by_type_id)
{
    ck_assert_ptr_eq(ua_types_by_type_id(UA_NS0ID_READREQUEST),
                     &ua_types[UA_TYPE_READREQUEST]);
    ck_assert_ptr_eq(ua_types_by_type_id(UA_NS0ID_INT32),
                     &ua_types[UA_TYPE_INT32]);
    ck_assert_ptr_null(ua_types_by_type_id(UA_NS0ID_SERVER));
    for (size_t i = 1; i < ua_types_typeid_index_count; i++)
        ck_assert_uint_lt(ua_types_typeid_index[i - 1].id,
                          ua_types_typeid_index[i].id);
}
END_TEST

START_TEST(test_equal_strings_and_nodeids)
{
    struct ua_string a = ua_string_from("x"), b = ua_string_from("x");
    struct ua_string n = { -1, NULL }, e = { 0, NULL };
    struct ua_nodeid x = ua_nodeid_num(1, 5), y = ua_nodeid_num(1, 5);

    ck_assert(ua_equal(&a, &b, &ua_types[UA_TYPE_STRING]));
    ck_assert(!ua_equal(&n, &e, &ua_types[UA_TYPE_STRING]));
    ck_assert(ua_equal(&n, &n, &ua_types[UA_TYPE_STRING]));
    ck_assert(ua_string_eq(&a, "x"));
    ck_assert(!ua_string_eq(&a, "xy"));
    ck_assert(ua_string_eq(&n, NULL));
    ck_assert(ua_nodeid_equal(&x, &y));
    y.ns = 2;
    ck_assert(!ua_nodeid_equal(&x, &y));
    y = x;
    y.idtype = UA_IDTYPE_STRING;
    y.id.str = a;
    ck_assert(!ua_nodeid_equal(&x, &y));
}
END_TEST

START_TEST(test_equal_nan_and_masks)
{
    double                  d1 = NAN, d2 = NAN;
    struct ua_localizedtext l1 = { 0 }, l2 = { 0 };

    ck_assert(ua_equal(&d1, &d2, &ua_types[UA_TYPE_DOUBLE]));
    /* Fields that the mask marks absent do not take part. */
    l1.mask = l2.mask = UA_LT_TEXT;
    l1.text = l2.text = ua_string_from("t");
    l1.locale = ua_string_from("en");
    l2.locale.len = -1;
    ck_assert(ua_equal(&l1, &l2, &ua_types[UA_TYPE_LOCALIZEDTEXT]));
    l1.mask |= UA_LT_LOCALE;
    ck_assert(!ua_equal(&l1, &l2, &ua_types[UA_TYPE_LOCALIZEDTEXT]));
}
END_TEST

START_TEST(test_equal_structs)
{
    struct ua_read_value_id a[2], b[2];
    struct ua_read_request  r1, r2;

    memset(a, 0, sizeof(a));
    a[0].node_id = ua_nodeid_num(0, 2258);
    a[1].node_id = ua_nodeid_num(0, 2259);
    a[0].index_range.len = a[1].index_range.len = -1;
    a[0].data_encoding.name.len = a[1].data_encoding.name.len = -1;
    memcpy(b, a, sizeof(a));
    memset(&r1, 0, sizeof(r1));
    r1.n_nodes_to_read = 2;
    r1.nodes_to_read = a;
    r2 = r1;
    r2.nodes_to_read = b;
    ck_assert(ua_equal(&r1, &r2, &ua_types[UA_TYPE_READREQUEST]));
    b[1].attribute_id = 13;
    ck_assert(!ua_equal(&r1, &r2, &ua_types[UA_TYPE_READREQUEST]));
    b[1].attribute_id = 0;
    r2.n_nodes_to_read = -1;                    /* null array != 2 elements */
    ck_assert(!ua_equal(&r1, &r2, &ua_types[UA_TYPE_READREQUEST]));
}
END_TEST

START_TEST(test_status_names)
{
    ck_assert_str_eq(ua_status_name(UA_GOOD), "Good");
    ck_assert_str_eq(ua_status_name(UA_BAD_DECODING_ERROR),
                     "BadDecodingError");
    ck_assert_str_eq(ua_status_name(UA_BAD_TCP_MESSAGE_TOO_LARGE),
                     "BadTcpMessageTooLarge");
    /* Info bits in the low word do not hide the code. */
    ck_assert_str_eq(ua_status_name(UA_BAD_NODE_ID_UNKNOWN | 0x0400),
                     "BadNodeIdUnknown");
    ck_assert_str_eq(ua_status_name(0x80FF0000u), "Unknown");
    ck_assert(UA_STATUS_IS_BAD(UA_BAD_DECODING_ERROR));
    ck_assert(UA_STATUS_IS_GOOD(UA_GOOD));
    ck_assert(UA_STATUS_IS_UNCERTAIN(0x40000000u));
}
END_TEST

START_TEST(test_attribute_names)
{
    ck_assert_int_eq(UA_ATTR_NODEID, 1);
    ck_assert_int_eq(UA_ATTR_VALUE, 13);
    ck_assert_int_eq(UA_ATTR_ACCESSLEVELEX, 27);
    ck_assert_str_eq(ua_attr_name(UA_ATTR_BROWSENAME), "BrowseName");
    ck_assert_ptr_null(ua_attr_name(0));
    ck_assert_ptr_null(ua_attr_name(UA_ATTR_MAX + 1));
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Types");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Type table");
    tcase_add_test(tc, test_builtins_first);
    tcase_add_test(tc, test_lookup_by_binary_id);
    tcase_add_test(tc, test_lookup_by_type_id);
    suite_add_tcase(s, tc);
    tc = tcase_create("Equality");
    tcase_add_test(tc, test_equal_strings_and_nodeids);
    tcase_add_test(tc, test_equal_nan_and_masks);
    tcase_add_test(tc, test_equal_structs);
    suite_add_tcase(s, tc);
    tc = tcase_create("Generated names");
    tcase_add_test(tc, test_status_names);
    tcase_add_test(tc, test_attribute_names);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
