/*
 * tests/unit/proto/check_nodeid.c: the hand-written NodeId forms
 * (proto/nodeid.h): the ns=0 binary forms message headers carry, checked
 * against the codec's own encoder, and the feed's text form both ways.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/status_gen.h"
#include "proto/types.h"

static uint8_t         mem[4096];
static struct ua_arena arena;

static void
setup(void)
{
    ua_arena_init(&arena, mem, sizeof(mem));
}

/* ------------------------------------------------------------ binary */

START_TEST(test_ns0_put_smallest_form)
{
    static const uint32_t ids[] = { 0, 1, 255, 256, 631, 65535, 65536,
                                    0x12345678, UINT32_MAX };
    uint8_t p[UA_NODEID_NS0_MAX], q[16];

    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        struct ua_nodeid id = ua_nodeid_num(0, ids[i]);
        size_t           n = ua_nodeid_ns0_put(p, ids[i]), m;

        ck_assert_uint_eq(n, ids[i] <= 255 ? 2 : ids[i] <= 65535 ? 4 : 7);
        /* The codec picks the same compact form. */
        ck_assert_uint_eq(ua_encode(&id, &ua_types[UA_TYPE_NODEID], q,
                                    sizeof(q), &m), UA_GOOD);
        ck_assert_uint_eq(m, n);
        ck_assert_mem_eq(p, q, n);
    }
}
END_TEST

START_TEST(test_ns0_get_forms)
{
    static const uint8_t two[] = { 0x00, 0x2A };
    static const uint8_t four[] = { 0x01, 0x00, 0x34, 0x12 };
    static const uint8_t full[] = { 0x02, 0x00, 0x00, 0x78, 0x56, 0x34,
                                    0x12 };
    size_t   used = 0;
    uint32_t id = 0;

    ck_assert_uint_eq(ua_nodeid_ns0_get(two, 2, &used, &id), UA_GOOD);
    ck_assert_uint_eq(id, 42);
    ck_assert_uint_eq(used, 2);
    ck_assert_uint_eq(ua_nodeid_ns0_get(four, 4, &used, &id), UA_GOOD);
    ck_assert_uint_eq(id, 0x1234);
    ck_assert_uint_eq(used, 4);
    ck_assert_uint_eq(ua_nodeid_ns0_get(full, 7, &used, &id), UA_GOOD);
    ck_assert_uint_eq(id, 0x12345678);
    ck_assert_uint_eq(used, 7);
    /* Round trip through put over the whole range's edges. */
    for (uint32_t v = 250; v < 70000; v += 997) {
        uint8_t p[UA_NODEID_NS0_MAX];
        size_t  n = ua_nodeid_ns0_put(p, v);

        ck_assert_uint_eq(ua_nodeid_ns0_get(p, n, &used, &id), UA_GOOD);
        ck_assert_uint_eq(id, v);
        ck_assert_uint_eq(used, n);
    }
}
END_TEST

START_TEST(test_ns0_get_refusals)
{
    static const uint8_t ns1_four[] = { 0x01, 0x01, 0x34, 0x12 };
    static const uint8_t ns1_full[] = { 0x02, 0x01, 0x00, 1, 2, 3, 4 };
    static const uint8_t str[] = { 0x03, 0x00, 0x00, 0, 0, 0, 0 };
    static const uint8_t full[] = { 0x02, 0x00, 0x00, 1, 2, 3, 4 };
    size_t   used = 99;
    uint32_t id = 99;

    ck_assert_uint_eq(ua_nodeid_ns0_get(full, 1, &used, &id),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_nodeid_ns0_get(full, 6, &used, &id),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_nodeid_ns0_get(ns1_four, 3, &used, &id),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_nodeid_ns0_get(ns1_four, 4, &used, &id),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_nodeid_ns0_get(ns1_full, 7, &used, &id),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_nodeid_ns0_get(str, 7, &used, &id),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(used, 99);
    ck_assert_uint_eq(id, 99);
}
END_TEST

/* ------------------------------------------------------------ text */

static ua_status
parse(const char *s, char stop, struct ua_nodeid *id, size_t *used)
{
    return ua_nodeid_parse(s, strlen(s), stop, &arena, id, used);
}

START_TEST(test_parse_forms)
{
    struct ua_nodeid id;
    size_t           used;

    ck_assert_uint_eq(parse("i=2258", 0, &id, &used), UA_GOOD);
    ck_assert_uint_eq(id.ns, 0);
    ck_assert_uint_eq(id.idtype, UA_IDTYPE_NUMERIC);
    ck_assert_uint_eq(id.id.num, 2258);
    ck_assert_uint_eq(used, 6);
    ck_assert_uint_eq(parse("ns=65535;i=4294967295", 0, &id, &used),
                      UA_GOOD);
    ck_assert_uint_eq(id.ns, 65535);
    ck_assert_uint_eq(id.id.num, UINT32_MAX);
    ck_assert_uint_eq(parse("ns=2;s=Line 4.Temp", 0, &id, &used), UA_GOOD);
    ck_assert_uint_eq(id.idtype, UA_IDTYPE_STRING);
    ck_assert(ua_string_eq(&id.id.str, "Line 4.Temp"));
    ck_assert_uint_eq(parse("ns=1;g=09087E75-8e5e-499b-954f-f2a9603db28a",
                            0, &id, &used), UA_GOOD);
    ck_assert_uint_eq(id.idtype, UA_IDTYPE_GUID);
    ck_assert_uint_eq(id.id.guid.data1, 0x09087e75);
    ck_assert_uint_eq(id.id.guid.data4[7], 0x8a);
    ck_assert_uint_eq(parse("ns=1;b=M/RbKBsRVkePCePcx24oRA==", 0, &id, &used),
                      UA_GOOD);
    ck_assert_uint_eq(id.idtype, UA_IDTYPE_OPAQUE);
    ck_assert_int_eq(id.id.str.len, 16);
    ck_assert_uint_eq(id.id.str.data[0], 0x33);
    ck_assert_uint_eq(used, 31);
}
END_TEST

START_TEST(test_parse_stops)
{
    struct ua_nodeid id;
    size_t           used;

    /* A value line: the string id ends at the first '='. */
    ck_assert_uint_eq(parse("ns=1;s=v0=42", '=', &id, &used), UA_GOOD);
    ck_assert(ua_string_eq(&id.id.str, "v0"));
    ck_assert_uint_eq(used, 9);
    /* An event line: at ';'.  Without a stop, to the end. */
    ck_assert_uint_eq(parse("s=src;severity=5", ';', &id, &used), UA_GOOD);
    ck_assert(ua_string_eq(&id.id.str, "src"));
    ck_assert_uint_eq(parse("s=src;severity=5", 0, &id, &used), UA_GOOD);
    ck_assert_uint_eq(used, 16);
    /* Numbers end at the first non-digit; the caller looks at the rest. */
    ck_assert_uint_eq(parse("i=42=7", '=', &id, &used), UA_GOOD);
    ck_assert_uint_eq(used, 4);
    /* Base64 padding is part of the id, a later '=' is not. */
    ck_assert_uint_eq(parse("b=AAE==5", '=', &id, &used), UA_GOOD);
    ck_assert_uint_eq(used, 6);
    ck_assert_int_eq(id.id.str.len, 2);
}
END_TEST

START_TEST(test_parse_refusals)
{
    static const char *bad[] = {
        "", "i", "i=", "x=1", "ns=1", "ns=1;", "ns=;i=1", "ns=65536;i=1",
        "ns=1i=1", "i=4294967296", "i=99999999999999999999", "s=",
        "g=09087e75-8e5e-499b-954f", "g=09087e75x8e5e-499b-954f-f2a9603db28a",
        "b=", "b=AAE", "b=A===", "ns=1;s=", " i=1",
    };
    struct ua_nodeid id;
    size_t           used;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(parse(bad[i], 0, &id, &used) == UA_BAD_NODE_ID_INVALID,
                      "\"%s\"", bad[i]);
    ck_assert_uint_eq(parse("s==", '=', &id, &used), UA_BAD_NODE_ID_INVALID);
    /* An opaque id needs its bytes from the arena. */
    {
        struct ua_arena tiny;
        uint8_t         m[8];

        ua_arena_init(&tiny, m, 0);
        ck_assert_uint_eq(ua_nodeid_parse("b=AAEC", 6, 0, &tiny, &id, &used),
                          UA_BAD_NODE_ID_INVALID);
    }
}
END_TEST

START_TEST(test_print)
{
    struct ua_nodeid id;
    char             buf[128];
    uint8_t          op[] = { 0x33, 0xF4, 0x5B };
    size_t           used;

    id = ua_nodeid_num(0, 2258);
    ck_assert_int_eq(ua_nodeid_print(&id, buf, sizeof(buf)), 6);
    ck_assert_str_eq(buf, "i=2258");
    id = ua_nodeid_str(3, "a;b");
    ck_assert_int_eq(ua_nodeid_print(&id, buf, sizeof(buf)), 10);
    ck_assert_str_eq(buf, "ns=3;s=a;b");
    memset(&id, 0, sizeof(id));
    id.ns = 1;
    id.idtype = UA_IDTYPE_GUID;
    id.id.guid.data1 = 0x09087E75;
    id.id.guid.data2 = 0x8E5E;
    id.id.guid.data3 = 0x499B;
    memcpy(id.id.guid.data4, "\x95\x4f\xf2\xa9\x60\x3d\xb2\x8a", 8);
    ck_assert_int_eq(ua_nodeid_print(&id, buf, sizeof(buf)), 43);
    ck_assert_str_eq(buf, "ns=1;g=09087e75-8e5e-499b-954f-f2a9603db28a");
    id.idtype = UA_IDTYPE_OPAQUE;
    id.id.str.len = 3;
    id.id.str.data = op;
    ck_assert_int_eq(ua_nodeid_print(&id, buf, sizeof(buf)), 11);
    ck_assert_str_eq(buf, "ns=1;b=M/Rb");
    /* What it prints, parse reads back. */
    ck_assert_uint_eq(parse(buf, 0, &id, &used), UA_GOOD);
    ck_assert_int_eq(id.id.str.len, 3);
    ck_assert_mem_eq(id.id.str.data, op, 3);
    /* Too small: -1 and an empty string, never a partial id. */
    id = ua_nodeid_str(1, "long enough");
    ck_assert_int_eq(ua_nodeid_print(&id, buf, 10), -1);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(ua_nodeid_print(&id, buf, 18), -1);
    ck_assert_int_eq(ua_nodeid_print(&id, buf, 19), 18);
    ck_assert_int_eq(ua_nodeid_print(&id, buf, 0), -1);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("NodeId forms");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("ns=0 binary forms");
    tcase_add_test(tc, test_ns0_put_smallest_form);
    tcase_add_test(tc, test_ns0_get_forms);
    tcase_add_test(tc, test_ns0_get_refusals);
    suite_add_tcase(s, tc);
    tc = tcase_create("Text form");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_parse_forms);
    tcase_add_test(tc, test_parse_stops);
    tcase_add_test(tc, test_parse_refusals);
    tcase_add_test(tc, test_print);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
