/*
 * tests/unit/proto/check_text.c: the lexical pieces of built-in values
 * as text (proto/text.h), each in the feed's syntax and the XML one, with
 * the places where the two differ.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/text.h"
#include "proto/types.h"

#define UNIX UA_DATETIME_UNIX_EPOCH
#define SEC  INT64_C(10000000)

static int
b64(const char *s, enum ua_text_syntax syn, uint8_t *out, size_t *olen)
{
    return ua_text_b64_decode(s, strlen(s), syn, out, olen);
}

static int
dt(const char *s, enum ua_text_syntax syn, int64_t *v)
{
    return ua_text_datetime_parse(s, strlen(s), syn, v);
}

START_TEST(test_trim)
{
    const char *s = " \tab c\t \r";
    size_t      n = strlen(s);

    s = ua_text_trim(s, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert_mem_eq(s, "ab c", 4);
    /* A leading '\r' or '\n' is not a feed blank. */
    s = "\rx";
    n = 2;
    ck_assert_ptr_eq(ua_text_trim(s, &n), s);
    ck_assert_uint_eq(n, 2);
    n = 0;
    (void)ua_text_trim("", &n);
    ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_quote_round_trip)
{
    static const char *q[] = { "\"\"", "\"a;b=c\"", "\"\\\"q\\\"\\n\\t\\r\"",
                               "\"\\\\\"" };
    static const char *v[] = { "", "a;b=c", "\"q\"\n\t\r", "\\" };
    uint8_t out[64];
    char    buf[64];
    size_t  n;

    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        ck_assert_int_eq(ua_text_unquote(q[i], strlen(q[i]), out, &n), 0);
        ck_assert_uint_eq(n, strlen(v[i]));
        ck_assert_mem_eq(out, v[i], n);
        ck_assert_int_eq(ua_text_quote(out, n, buf, sizeof(buf)),
                         (int)strlen(q[i]));
        ck_assert_str_eq(buf, q[i]);
    }
    /* An unknown escape is the character; a backslash before the closing
     * quote is itself. */
    ck_assert_int_eq(ua_text_unquote("\"\\x\\\"", 5, out, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_mem_eq(out, "x\\", 2);
    /* Refusals. */
    ck_assert_int_eq(ua_text_unquote("\"open", 5, out, &n), -1);
    ck_assert_int_eq(ua_text_unquote("\"", 1, out, &n), -1);
    ck_assert_int_eq(ua_text_unquote("bare", 4, out, &n), -1);
    ck_assert_int_eq(ua_text_unquote("\"a\"b\"", 5, out, &n), -1);
    /* Quoting into too little room. */
    ck_assert_int_eq(ua_text_quote((const uint8_t *)"abc", 3, buf, 5), -1);
    ck_assert_int_eq(ua_text_quote((const uint8_t *)"abc", 3, buf, 6), 5);
    ck_assert_int_eq(ua_text_quote((const uint8_t *)"\n", 1, buf, 4), -1);
}
END_TEST

START_TEST(test_b64_feed_exact)
{
    uint8_t out[64];
    size_t  n;
    char    buf[64];

    ck_assert_int_eq(b64("AAEC", UA_TEXT_FEED, out, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(out[2], 2);
    ck_assert_int_eq(b64("AAE=", UA_TEXT_FEED, out, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(b64("AA==", UA_TEXT_FEED, out, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(b64("", UA_TEXT_FEED, out, &n), 0);
    ck_assert_uint_eq(n, 0);
    /* Length, alphabet, padding and whitespace are exact. */
    ck_assert_int_eq(b64("AAE", UA_TEXT_FEED, out, &n), -1);
    ck_assert_int_eq(b64("A===", UA_TEXT_FEED, out, &n), -1);
    ck_assert_int_eq(b64("A=AA", UA_TEXT_FEED, out, &n), -1);
    ck_assert_int_eq(b64("-_AA", UA_TEXT_FEED, out, &n), -1);
    ck_assert_int_eq(b64("AA EC", UA_TEXT_FEED, out, &n), -1);
    /* Encoding reads back. */
    ck_assert_int_eq(ua_text_b64_encode((const uint8_t *)"\xfb\xff", 2, buf,
                                        sizeof(buf)), 4);
    ck_assert_str_eq(buf, "+/8=");
    ck_assert_int_eq(b64(buf, UA_TEXT_FEED, out, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(out[0], 0xfb);
    ck_assert_int_eq(ua_text_b64_encode(out, 0, buf, 1), 0);
    ck_assert_int_eq(ua_text_b64_encode(out, 2, buf, 4), -1);
    ck_assert_int_eq(ua_text_b64_encode(out, 2, buf, 5), 4);
}
END_TEST

START_TEST(test_b64_xml_lenient)
{
    uint8_t out[64];
    size_t  n;

    /* Whitespace anywhere, the URL-safe alphabet, optional padding. */
    ck_assert_int_eq(b64(" AA\nE C\t", UA_TEXT_XML, out, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(out[2], 2);
    ck_assert_int_eq(b64("-_8", UA_TEXT_XML, out, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(out[0], 0xfb);
    ck_assert_uint_eq(out[1], 0xff);
    ck_assert_int_eq(b64("AAE", UA_TEXT_XML, out, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(b64("AAE= \n", UA_TEXT_XML, out, &n), 0);
    ck_assert_uint_eq(n, 2);
    /* Nothing but padding after padding; no other characters. */
    ck_assert_int_eq(b64("AA=A", UA_TEXT_XML, out, &n), -1);
    ck_assert_int_eq(b64("AA*A", UA_TEXT_XML, out, &n), -1);
}
END_TEST

START_TEST(test_guid)
{
    static const char *g1 = "00000001-0002-0003-0405-060708090a0B";
    struct ua_guid     g;
    char               buf[40];

    ck_assert_int_eq(ua_text_guid_parse(g1, 36, UA_TEXT_FEED, &g), 0);
    ck_assert_uint_eq(g.data1, 1);
    ck_assert_uint_eq(g.data2, 2);
    ck_assert_uint_eq(g.data3, 3);
    ck_assert_uint_eq(g.data4[0], 4);
    ck_assert_uint_eq(g.data4[7], 0x0b);
    ck_assert_int_eq(ua_text_guid_print(&g, buf, sizeof(buf)), 36);
    ck_assert_str_eq(buf, "00000001-0002-0003-0405-060708090a0b");
    ck_assert_int_eq(ua_text_guid_print(&g, buf, 36), -1);
    memset(&g, 0, sizeof(g));
    ck_assert_int_eq(ua_text_guid_parse(g1, 36, UA_TEXT_XML, &g), 0);
    ck_assert_uint_eq(g.data1, 1);
    ck_assert_uint_eq(g.data4[7], 0x0b);
    /* Both: 36 characters, dashes in place, hex digits. */
    ck_assert_int_eq(ua_text_guid_parse(g1, 35, UA_TEXT_FEED, &g), -1);
    ck_assert_int_eq(ua_text_guid_parse(g1, 35, UA_TEXT_XML, &g), -1);
    ck_assert_int_eq(ua_text_guid_parse("00000001x0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_FEED, &g), -1);
    ck_assert_int_eq(ua_text_guid_parse("00000001x0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_XML, &g), -1);
    ck_assert_int_eq(ua_text_guid_parse("0000000g-0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_FEED, &g), -1);
    ck_assert_int_eq(ua_text_guid_parse("0000000g-0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_XML, &g), -1);
    /* Where they differ: sscanf lets a group carry a sign or 0x. */
    ck_assert_int_eq(ua_text_guid_parse("+0000001-0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_FEED, &g), -1);
    ck_assert_int_eq(ua_text_guid_parse("+0000001-0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_XML, &g), 0);
    ck_assert_uint_eq(g.data1, 1);
    ck_assert_int_eq(ua_text_guid_parse("0x000001-0002-0003-0405-060708090a0b",
                                        36, UA_TEXT_XML, &g), 0);
}
END_TEST

START_TEST(test_datetime_feed)
{
    int64_t v;
    char    buf[64];

    ck_assert_int_eq(dt("1970-01-01T00:00:01Z", UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC);
    ck_assert_int_eq(dt("1970-01-01 00:00:01.5z", UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC + SEC / 2);
    ck_assert_int_eq(dt("1970-01-01T01:00:00+01:00", UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(v, UNIX);
    ck_assert_int_eq(dt("1969-12-31T23:00:00-01:00", UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(v, UNIX);
    /* Eight fraction digits: the eighth is dropped, not rounded. */
    ck_assert_int_eq(dt("1970-01-01T00:00:00.00000019Z", UA_TEXT_FEED, &v),
                     0);
    ck_assert_int_eq(v, UNIX + 1);
    ck_assert_int_eq(dt("1601-01-01T00:00:00Z", UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(v, 0);
    /* Refusals: a zone is required, fields have their widths. */
    ck_assert_int_eq(dt("1970-01-01T00:00:01", UA_TEXT_FEED, &v), -1);
    ck_assert_int_eq(dt("1970-1-01T00:00:01Z", UA_TEXT_FEED, &v), -1);
    ck_assert_int_eq(dt("1600-12-31T23:59:59Z", UA_TEXT_FEED, &v), -1);
    ck_assert_int_eq(dt("1970-13-01T00:00:00Z", UA_TEXT_FEED, &v), -1);
    ck_assert_int_eq(dt("1970-01-01T00:00:00.Z", UA_TEXT_FEED, &v), -1);
    ck_assert_int_eq(dt("1970-01-01T00:00:00Zx", UA_TEXT_FEED, &v), -1);
    ck_assert_int_eq(dt("1970-01-01T00:00:00+1:00", UA_TEXT_FEED, &v), -1);
    /* Printing reads back. */
    ck_assert_int_eq(ua_text_datetime_print(UNIX + SEC + SEC / 2, buf,
                                            sizeof(buf)), 28);
    ck_assert_str_eq(buf, "1970-01-01T00:00:01.5000000Z");
    ck_assert_int_eq(dt(buf, UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC + SEC / 2);
    ck_assert_int_eq(ua_text_datetime_print(UNIX - 1, buf, sizeof(buf)), 28);
    ck_assert_str_eq(buf, "1969-12-31T23:59:59.9999999Z");
    ck_assert_int_eq(ua_text_datetime_print(UNIX, buf, 28), -1);
    ck_assert_int_eq(ua_text_datetime_print(INT64_MIN, buf, sizeof(buf)), -1);
}
END_TEST

START_TEST(test_datetime_xml)
{
    int64_t v;

    ck_assert_int_eq(dt("2023-12-15T00:00:01.5Z", UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(dt("2023-12-15T00:00:01.5Z", UA_TEXT_FEED, &v), 0);
    ck_assert_int_eq(dt("2023-12-15T01:00:00+01:00", UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(dt("1970-01-01T00:00:01Z", UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC);
    /* Where they differ: no zone is UTC, unpadded fields, seconds
     * rounded to 100 ns. */
    ck_assert_int_eq(dt("1970-01-01T00:00:01", UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC);
    ck_assert_int_eq(dt("1970-1-1T0:0:1Z", UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC);
    ck_assert_int_eq(dt("1970-01-01T00:00:00.00000019Z", UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(v, UNIX + 2);
    /* Refusals. */
    ck_assert_int_eq(dt("1600-12-31T23:59:59Z", UA_TEXT_XML, &v), -1);
    ck_assert_int_eq(dt("10000-01-01T00:00:00Z", UA_TEXT_XML, &v), -1);
    ck_assert_int_eq(dt("1970-01-01T00:00:61Z", UA_TEXT_XML, &v), -1);
    ck_assert_int_eq(dt("1970-01-01T00:00:00Zx", UA_TEXT_XML, &v), -1);
    ck_assert_int_eq(dt("1970-01-01 00:00:00Z", UA_TEXT_XML, &v), -1);
    ck_assert_int_eq(dt("1970-01-01T00:00:00+01", UA_TEXT_XML, &v), -1);
    /* No NUL needed: the text ends at n. */
    ck_assert_int_eq(ua_text_datetime_parse("1970-01-01T00:00:01Zjunk", 20,
                                            UA_TEXT_XML, &v), 0);
    ck_assert_int_eq(v, UNIX + SEC);
    {
        char long_text[300];

        memset(long_text, '0', sizeof(long_text));
        ck_assert_int_eq(ua_text_datetime_parse(long_text, sizeof(long_text),
                                                UA_TEXT_XML, &v), -1);
    }
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Text forms");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Strings");
    tcase_add_test(tc, test_trim);
    tcase_add_test(tc, test_quote_round_trip);
    suite_add_tcase(s, tc);
    tc = tcase_create("Base64");
    tcase_add_test(tc, test_b64_feed_exact);
    tcase_add_test(tc, test_b64_xml_lenient);
    suite_add_tcase(s, tc);
    tc = tcase_create("Guid");
    tcase_add_test(tc, test_guid);
    suite_add_tcase(s, tc);
    tc = tcase_create("DateTime");
    tcase_add_test(tc, test_datetime_feed);
    tcase_add_test(tc, test_datetime_xml);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
