/*
 * tests/unit/proto/check_builtin.c: the built-in type table
 * (proto/builtin.h) and its text rules: every type in the feed's syntax
 * and in the XML one, the places they differ, the feed's type inference,
 * and printing what the feed reads back.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/builtin.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"

#define UNIX UA_DATETIME_UNIX_EPOCH
#define SEC  INT64_C(10000000)

static uint8_t         mem[1 << 16];
static struct ua_arena arena;
static union {
    uint8_t                 raw[64];
    bool                    b;
    int8_t                  i8;
    uint8_t                 u8;
    int16_t                 i16;
    uint16_t                u16;
    int32_t                 i32;
    uint32_t                u32;
    int64_t                 i64;
    uint64_t                u64;
    float                   f;
    double                  d;
    struct ua_string        s;
    struct ua_guid          g;
    struct ua_nodeid        id;
    struct ua_localizedtext lt;
} out;
static char why[128];

static void
setup(void)
{
    ua_arena_init(&arena, mem, sizeof(mem));
    memset(&out, 0, sizeof(out));
}

static ua_status
feed(uint8_t bt, const char *s)
{
    return ua_builtin_parse(bt, UA_TEXT_FEED, s, strlen(s), &arena, &out,
                            why, sizeof(why));
}

static ua_status
xml(uint8_t bt, const char *s)
{
    return ua_builtin_parse(bt, UA_TEXT_XML, s, strlen(s), &arena, &out,
                            why, sizeof(why));
}

/* ------------------------------------------------------------ table */

START_TEST(test_table)
{
    for (uint8_t bt = 1; bt <= UA_BT_MAX; bt++) {
        const struct ua_builtin_type *d = &ua_builtin[bt];

        /* One name per type: the generated type table's. */
        ck_assert_str_eq(d->name, ua_types[bt - 1].name);
        ck_assert_uint_eq(ua_builtin_by_name(d->name, strlen(d->name)), bt);
        /* A fixed encoded size is the C size of a flat type. */
        if (d->size != 0)
            ck_assert_uint_eq(d->size, ua_types[bt - 1].size);
        if (d->flags & UA_BTF_INTEGER)
            ck_assert(d->cls == UA_BTC_SIGNED || d->cls == UA_BTC_UNSIGNED);
    }
    ck_assert_ptr_null(ua_builtin[UA_BT_NULL].name);
    ck_assert_uint_eq(ua_builtin[UA_BT_DATETIME].size, 8);
    ck_assert_uint_eq(ua_builtin[UA_BT_GUID].size, 16);
    ck_assert_uint_eq(ua_builtin[UA_BT_STRING].size, 0);
    ck_assert_uint_eq(ua_builtin[UA_BT_STATUSCODE].cls, UA_BTC_UNSIGNED);
    ck_assert_uint_eq(ua_builtin[UA_BT_DATETIME].cls, UA_BTC_SIGNED);
    ck_assert(!(ua_builtin[UA_BT_DATETIME].flags & UA_BTF_NUMBER));
    ck_assert(ua_builtin[UA_BT_FLOAT].flags & UA_BTF_NUMBER);
    ck_assert_int_eq(ua_builtin[UA_BT_INT16].min, INT16_MIN);
    ck_assert_uint_eq(ua_builtin[UA_BT_UINT64].max, UINT64_MAX);
    ck_assert_uint_eq(ua_builtin_by_name("Int3", 4), 0);
    ck_assert_uint_eq(ua_builtin_by_name("ListOfInt32", 11), 0);
    ck_assert_uint_eq(ua_builtin_by_name("Int32x", 5), UA_BT_INT32);
}
END_TEST

/* ------------------------------------------------------------ numbers */

START_TEST(test_integers_both)
{
    static const struct {
        uint8_t     bt;
        const char *lo, *hi, *below, *above;
    } w[] = {
        { UA_BT_SBYTE, "-128", "127", "-129", "128" },
        { UA_BT_BYTE, "0", "255", "-1", "256" },
        { UA_BT_INT16, "-32768", "32767", "-32769", "32768" },
        { UA_BT_UINT16, "0", "65535", "-1", "65536" },
        { UA_BT_INT32, "-2147483648", "2147483647", "-2147483649",
          "2147483648" },
        { UA_BT_UINT32, "0", "4294967295", "-1", "4294967296" },
        { UA_BT_INT64, "-9223372036854775808", "9223372036854775807",
          "-9223372036854775809", "9223372036854775808" },
        { UA_BT_UINT64, "0", "18446744073709551615", "-1",
          "18446744073709551616" },
    };

    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
        ck_assert_uint_eq(feed(w[i].bt, w[i].lo), UA_GOOD);
        ck_assert_uint_eq(feed(w[i].bt, w[i].hi), UA_GOOD);
        ck_assert_uint_eq(feed(w[i].bt, w[i].below), UA_BAD_OUT_OF_RANGE);
        ck_assert_uint_eq(feed(w[i].bt, w[i].above), UA_BAD_OUT_OF_RANGE);
        ck_assert_uint_eq(xml(w[i].bt, w[i].lo), UA_GOOD);
        ck_assert_uint_eq(xml(w[i].bt, w[i].hi), UA_GOOD);
        ck_assert_uint_eq(xml(w[i].bt, w[i].below), UA_BAD_OUT_OF_RANGE);
        ck_assert_uint_eq(xml(w[i].bt, w[i].above), UA_BAD_OUT_OF_RANGE);
        ck_assert_uint_eq(feed(w[i].bt, "abc"), UA_BAD_TYPE_MISMATCH);
        ck_assert_uint_eq(xml(w[i].bt, "abc"), UA_BAD_TYPE_MISMATCH);
        ck_assert_uint_eq(feed(w[i].bt, ""), UA_BAD_TYPE_MISMATCH);
        ck_assert_uint_eq(xml(w[i].bt, ""), UA_BAD_TYPE_MISMATCH);
        ck_assert_uint_eq(feed(w[i].bt, "1.5"), UA_BAD_TYPE_MISMATCH);
        ck_assert_uint_eq(xml(w[i].bt, "1.5"), UA_BAD_TYPE_MISMATCH);
    }
    ck_assert_uint_eq(feed(UA_BT_INT32, "-2147483648"), UA_GOOD);
    ck_assert_int_eq(out.i32, INT32_MIN);
    ck_assert_uint_eq(xml(UA_BT_INT64, "-9223372036854775808"), UA_GOOD);
    ck_assert_int_eq(out.i64, INT64_MIN);
    ck_assert_uint_eq(xml(UA_BT_UINT64, "18446744073709551615"), UA_GOOD);
    ck_assert_uint_eq(out.u64, UINT64_MAX);
    ck_assert_uint_eq(feed(UA_BT_BYTE, "255"), UA_GOOD);
    ck_assert_uint_eq(out.u8, 255);
    ck_assert_uint_eq(xml(UA_BT_INT16, "-32768"), UA_GOOD);
    ck_assert_int_eq(out.i16, INT16_MIN);
    /* Blanks around the number are trimmed in both. */
    ck_assert_uint_eq(feed(UA_BT_INT32, " \t7\r"), UA_GOOD);
    ck_assert_int_eq(out.i32, 7);
    ck_assert_uint_eq(xml(UA_BT_INT32, "\n  7\n"), UA_GOOD);
    ck_assert_int_eq(out.i32, 7);
}
END_TEST

START_TEST(test_integers_differ)
{
    /* The feed reads C constants: 0x hex (and a leading 0 as octal). */
    ck_assert_uint_eq(feed(UA_BT_INT32, "0x10"), UA_GOOD);
    ck_assert_int_eq(out.i32, 16);
    ck_assert_uint_eq(feed(UA_BT_UINT32, "0x80740000"), UA_GOOD);
    ck_assert_uint_eq(out.u32, 0x80740000u);
    ck_assert_uint_eq(feed(UA_BT_INT32, "010"), UA_GOOD);
    ck_assert_int_eq(out.i32, 8);
    /* XML reads decimal only, leading zeros included. */
    ck_assert_uint_eq(xml(UA_BT_INT32, "0x10"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_INT32, "010"), UA_GOOD);
    ck_assert_int_eq(out.i32, 10);
    ck_assert_uint_eq(xml(UA_BT_INT32, "+5"), UA_GOOD);
    ck_assert_int_eq(out.i32, 5);
    /* The feed refuses 64 characters and more; XML takes any length. */
    {
        char long_num[80];

        memset(long_num, '0', sizeof(long_num) - 2);
        long_num[sizeof(long_num) - 2] = '7';
        long_num[sizeof(long_num) - 1] = '\0';
        ck_assert_uint_eq(feed(UA_BT_INT32, long_num), UA_BAD_TYPE_MISMATCH);
        ck_assert_uint_eq(xml(UA_BT_INT32, long_num), UA_GOOD);
        ck_assert_int_eq(out.i32, 7);
        long_num[60] = '\0';
        ck_assert_uint_eq(feed(UA_BT_INT32, long_num), UA_GOOD);
    }
    /* StatusCode: UInt32 in both. */
    ck_assert_uint_eq(feed(UA_BT_STATUSCODE, "0x80740000"), UA_GOOD);
    ck_assert_uint_eq(out.u32, UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_STATUSCODE, "2155085824"), UA_GOOD);
    ck_assert_uint_eq(out.u32, 0x80740000u);
    ck_assert_uint_eq(feed(UA_BT_STATUSCODE, "0x100000000"),
                      UA_BAD_OUT_OF_RANGE);
}
END_TEST

START_TEST(test_reals)
{
    ck_assert_uint_eq(feed(UA_BT_DOUBLE, "1.25"), UA_GOOD);
    ck_assert(out.d == 1.25);
    ck_assert_uint_eq(feed(UA_BT_DOUBLE, "-1e300"), UA_GOOD);
    ck_assert_uint_eq(feed(UA_BT_DOUBLE, "nan"), UA_GOOD);
    ck_assert(isnan(out.d));
    ck_assert_uint_eq(feed(UA_BT_FLOAT, "3.5"), UA_GOOD);
    ck_assert(out.f == 3.5f);
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, "-2.25e3"), UA_GOOD);
    ck_assert(out.d == -2250);
    ck_assert_uint_eq(xml(UA_BT_FLOAT, "-0.25"), UA_GOOD);
    ck_assert(out.f == -0.25f);
    ck_assert_uint_eq(feed(UA_BT_DOUBLE, "x"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, "x"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_DOUBLE, ""), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, "1.5x"), UA_BAD_TYPE_MISMATCH);
    /* XML's INF, -INF, NaN. */
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, "INF"), UA_GOOD);
    ck_assert(isinf(out.d) && out.d > 0);
    ck_assert_uint_eq(xml(UA_BT_FLOAT, " -INF "), UA_GOOD);
    ck_assert(isinf(out.f) && out.f < 0);
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, "NaN"), UA_GOOD);
    ck_assert(isnan(out.d));
    /* A Float beyond its range: refused by the feed, infinite in XML. */
    ck_assert_uint_eq(feed(UA_BT_FLOAT, "1e39"), UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(feed(UA_BT_FLOAT, "inf"), UA_GOOD);
    ck_assert_uint_eq(xml(UA_BT_FLOAT, "1e39"), UA_GOOD);
    ck_assert(isinf(out.f));
}
END_TEST

/* ------------------------------------------------------------ others */

START_TEST(test_boolean)
{
    static const char *t[] = { "true", "1" }, *f[] = { "false", "0" };

    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(feed(UA_BT_BOOLEAN, t[i]), UA_GOOD);
        ck_assert(out.b);
        ck_assert_uint_eq(xml(UA_BT_BOOLEAN, t[i]), UA_GOOD);
        ck_assert(out.b);
        ck_assert_uint_eq(feed(UA_BT_BOOLEAN, f[i]), UA_GOOD);
        ck_assert(!out.b);
        ck_assert_uint_eq(xml(UA_BT_BOOLEAN, f[i]), UA_GOOD);
        ck_assert(!out.b);
    }
    ck_assert_uint_eq(feed(UA_BT_BOOLEAN, "yes"), UA_BAD_TYPE_MISMATCH);
    ck_assert_str_eq(why, "\"yes\" is not true or false");
    ck_assert_uint_eq(xml(UA_BT_BOOLEAN, "TRUE"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_BOOLEAN, ""), UA_BAD_TYPE_MISMATCH);
}
END_TEST

START_TEST(test_strings)
{
    /* Feed: bare to the end (trimmed), or quoted with escapes. */
    ck_assert_uint_eq(feed(UA_BT_STRING, " hello world "), UA_GOOD);
    ck_assert(ua_string_eq(&out.s, "hello world"));
    ck_assert_uint_eq(feed(UA_BT_STRING, "\"a;status=1 \\\"q\\\"\\n\""),
                      UA_GOOD);
    ck_assert(ua_string_eq(&out.s, "a;status=1 \"q\"\n"));
    ck_assert_uint_eq(feed(UA_BT_STRING, "\"open"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_XMLELEMENT, "<a/>"), UA_GOOD);
    ck_assert(ua_string_eq(&out.s, "<a/>"));
    ck_assert_uint_eq(feed(UA_BT_LOCALIZEDTEXT, "hi"), UA_GOOD);
    ck_assert_uint_eq(out.lt.mask, UA_LT_TEXT);
    ck_assert_int_eq(out.lt.locale.len, -1);
    ck_assert(ua_string_eq(&out.lt.text, "hi"));
    /* A bare string points into the text; a quoted one is made. */
    {
        const char *s = "bare";

        ck_assert_uint_eq(ua_builtin_parse(UA_BT_STRING, UA_TEXT_FEED, s, 4,
                                           &arena, &out, NULL, 0), UA_GOOD);
        ck_assert_ptr_eq(out.s.data, s);
    }
    /* XML: the text as it stands, blanks and quotes included. */
    ck_assert_uint_eq(xml(UA_BT_STRING, " \"x\" \n"), UA_GOOD);
    ck_assert(ua_string_eq(&out.s, " \"x\" \n"));
    /* XML's structured types are the caller's elements. */
    ck_assert_uint_eq(xml(UA_BT_XMLELEMENT, "<a/>"), UA_BAD_NOT_SUPPORTED);
    ck_assert_uint_eq(xml(UA_BT_LOCALIZEDTEXT, "hi"), UA_BAD_NOT_SUPPORTED);
}
END_TEST

START_TEST(test_bytestrings)
{
    ck_assert_uint_eq(feed(UA_BT_BYTESTRING, "AAEC"), UA_GOOD);
    ck_assert_int_eq(out.s.len, 3);
    ck_assert_uint_eq(out.s.data[2], 2);
    ck_assert_uint_eq(feed(UA_BT_BYTESTRING, "\"AAEC/w==\""), UA_GOOD);
    ck_assert_int_eq(out.s.len, 4);
    ck_assert_uint_eq(out.s.data[3], 0xff);
    ck_assert_uint_eq(feed(UA_BT_BYTESTRING, "AAE"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_BYTESTRING, "AA-_"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_BYTESTRING, ""), UA_GOOD);
    ck_assert_int_eq(out.s.len, 0);
    ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "AAEC/w=="), UA_GOOD);
    ck_assert_int_eq(out.s.len, 4);
    /* XML: whitespace, the URL-safe alphabet, no padding. */
    ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "\n  YW\nJj\n"), UA_GOOD);
    ck_assert_int_eq(out.s.len, 3);
    ck_assert_mem_eq(out.s.data, "abc", 3);
    ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "AA-_"), UA_GOOD);
    ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "AAE"), UA_GOOD);
    ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "AA*"), UA_BAD_TYPE_MISMATCH);
    ck_assert_str_eq(why, "ByteString is not base64");
}
END_TEST

START_TEST(test_datetimes)
{
    ck_assert_uint_eq(feed(UA_BT_DATETIME, "1970-01-01T00:00:01Z"), UA_GOOD);
    ck_assert_int_eq(out.i64, UNIX + SEC);
    ck_assert_uint_eq(feed(UA_BT_DATETIME, "\"1970-01-01T00:00:01Z\""),
                      UA_GOOD);
    ck_assert_int_eq(out.i64, UNIX + SEC);
    ck_assert_uint_eq(feed(UA_BT_DATETIME, "1970-01-01T00:00:01"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_DATETIME, " 2023-12-15T00:00:01.5Z\n"),
                      UA_GOOD);
    ck_assert_uint_eq(xml(UA_BT_DATETIME, "1970-01-01T00:00:01"), UA_GOOD);
    ck_assert_int_eq(out.i64, UNIX + SEC);
    ck_assert_uint_eq(xml(UA_BT_DATETIME, "yesterday"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_str_eq(why, "\"yesterday\" is not a DateTime");
}
END_TEST

START_TEST(test_guids_and_nodeids)
{
    ck_assert_uint_eq(feed(UA_BT_GUID,
                           "00000001-0002-0003-0405-060708090a0b"), UA_GOOD);
    ck_assert_uint_eq(out.g.data1, 1);
    ck_assert_uint_eq(out.g.data4[7], 0x0b);
    ck_assert_uint_eq(xml(UA_BT_GUID,
                          "\n72962B91-FA75-4AE6-8D28-B404DC7DAF63 "), UA_GOOD);
    ck_assert_uint_eq(out.g.data1, 0x72962B91);
    ck_assert_uint_eq(feed(UA_BT_GUID, "0001-0002"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_GUID, "0001-0002"), UA_BAD_TYPE_MISMATCH);
    /* NodeIds: the feed's text form; XML's are elements. */
    ck_assert_uint_eq(feed(UA_BT_NODEID, "ns=1;s=v0"), UA_GOOD);
    ck_assert_uint_eq(out.id.ns, 1);
    ck_assert(ua_string_eq(&out.id.id.str, "v0"));
    ck_assert_uint_eq(feed(UA_BT_NODEID, "ns=1;i=5x"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_NODEID, "v0"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(xml(UA_BT_NODEID, "i=85"), UA_BAD_NOT_SUPPORTED);
}
END_TEST

START_TEST(test_not_supported)
{
    static const uint8_t none[] = {
        UA_BT_EXPANDEDNODEID, UA_BT_QUALIFIEDNAME, UA_BT_EXTENSIONOBJECT,
        UA_BT_DATAVALUE, UA_BT_VARIANT, UA_BT_DIAGNOSTICINFO,
    };

    for (size_t i = 0; i < sizeof(none); i++) {
        ck_assert_uint_eq(feed(none[i], "x"), UA_BAD_NOT_SUPPORTED);
        ck_assert_uint_eq(xml(none[i], "x"), UA_BAD_NOT_SUPPORTED);
    }
    ck_assert_str_eq(why, "values of type DiagnosticInfo are not supported");
    ck_assert_uint_eq(feed(UA_BT_QUALIFIEDNAME, "x"), UA_BAD_NOT_SUPPORTED);
    ck_assert_str_eq(why, "the feed does not write QualifiedName values");
    ck_assert_uint_eq(feed(UA_BT_NULL, "x"), UA_BAD_NOT_SUPPORTED);
    ck_assert_uint_eq(xml(UA_BT_MAX + 1, "x"), UA_BAD_NOT_SUPPORTED);
}
END_TEST

START_TEST(test_messages)
{
    /* What the callers show a person (broker/feed.c, broker/nodeset.c). */
    ck_assert_uint_eq(xml(UA_BT_BYTE, "256"), UA_BAD_OUT_OF_RANGE);
    ck_assert_str_eq(why, "\"256\" is not a Byte");
    ck_assert_uint_eq(xml(UA_BT_INT32, " x "), UA_BAD_TYPE_MISMATCH);
    ck_assert_str_eq(why, "\"x\" is not a Int32");
    ck_assert_uint_eq(feed(UA_BT_BYTE, "256"), UA_BAD_OUT_OF_RANGE);
    ck_assert_str_eq(why, "256 is out of range for Byte");
    ck_assert_uint_eq(feed(UA_BT_DOUBLE, "abc"), UA_BAD_TYPE_MISMATCH);
    ck_assert_str_eq(why, "\"abc\" is not a Double");
    /* Success leaves no sentence; why may be NULL or short. */
    ck_assert_uint_eq(feed(UA_BT_INT32, "1"), UA_GOOD);
    ck_assert_str_eq(why, "");
    ck_assert_uint_eq(ua_builtin_parse(UA_BT_INT32, UA_TEXT_FEED, "x", 1,
                                       &arena, &out, NULL, 0),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(ua_builtin_parse(UA_BT_INT32, UA_TEXT_FEED, "x", 1,
                                       &arena, &out, why, 4),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_str_eq(why, "\"x\"");
}
END_TEST

START_TEST(test_arena_exhausted)
{
    uint8_t small[8];
    char    big[200];

    ua_arena_init(&arena, small, 0);
    /* The feed has always answered a full arena with a type mismatch. */
    ck_assert_uint_eq(feed(UA_BT_BYTESTRING, "AAEC"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_STRING, "\"q\""), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(feed(UA_BT_STRING, "bare"), UA_GOOD);
    /* XML says what it is. */
    ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "AAEC"), UA_BAD_OUT_OF_MEMORY);
    memset(big, '1', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, big), UA_BAD_OUT_OF_MEMORY);
    ck_assert_uint_eq(xml(UA_BT_DOUBLE, "1"), UA_GOOD);
    /* UA_BUILTIN_ROOM(n) is always enough. */
    {
        uint8_t room[UA_BUILTIN_ROOM(199)];

        ua_arena_init(&arena, room, sizeof(room));
        ck_assert_uint_eq(xml(UA_BT_DOUBLE, big), UA_GOOD);
        ua_arena_init(&arena, room, UA_BUILTIN_ROOM(4));
        ck_assert_uint_eq(xml(UA_BT_BYTESTRING, "AAEC"), UA_GOOD);
        ua_arena_init(&arena, room, UA_BUILTIN_ROOM(4));
        ck_assert_uint_eq(feed(UA_BT_BYTESTRING, "AAEC"), UA_GOOD);
    }
}
END_TEST

/* ------------------------------------------------------------ infer */

static uint8_t
infer(const char *s, uint32_t root)
{
    return ua_builtin_infer(s, strlen(s), root);
}

START_TEST(test_infer)
{
    const uint32_t b = UA_NS0ID_BASEDATATYPE, u = UA_NS0ID_UINTEGER;

    ck_assert_uint_eq(infer("true", b), UA_BT_BOOLEAN);
    ck_assert_uint_eq(infer(" false ", b), UA_BT_BOOLEAN);
    ck_assert_uint_eq(infer("\"s\"", b), UA_BT_STRING);
    ck_assert_uint_eq(infer("\"5\"", b), UA_BT_STRING);
    ck_assert_uint_eq(infer("2.5", b), UA_BT_DOUBLE);
    ck_assert_uint_eq(infer("1e3", b), UA_BT_DOUBLE);
    ck_assert_uint_eq(infer("nan", b), UA_BT_DOUBLE);
    ck_assert_uint_eq(infer("-inf", b), UA_BT_DOUBLE);
    ck_assert_uint_eq(infer("5", b), UA_BT_INT32);
    ck_assert_uint_eq(infer("-2147483648", b), UA_BT_INT32);
    ck_assert_uint_eq(infer("5000000000", b), UA_BT_INT64);
    ck_assert_uint_eq(infer("99999999999999999999", b), UA_BT_INT64);
    ck_assert_uint_eq(infer("0x10", b), UA_BT_INT32);
    ck_assert_uint_eq(infer("5", UA_NS0ID_INTEGER), UA_BT_INT32);
    ck_assert_uint_eq(infer("5", UA_NS0ID_NUMBER), UA_BT_INT32);
    ck_assert_uint_eq(infer("5", u), UA_BT_UINT32);
    ck_assert_uint_eq(infer("5000000000", u), UA_BT_UINT64);
    /* The rule is by characters, not by what parses: a bare word is an
     * Int32, or a Double when it has n, e or i (either then fails to
     * parse as one); only empty or long text is a String. */
    ck_assert_uint_eq(infer("word", b), UA_BT_INT32);
    ck_assert_uint_eq(infer("hello", b), UA_BT_DOUBLE);
    ck_assert_uint_eq(infer("", b), UA_BT_STRING);
    {
        char long_text[80];

        memset(long_text, '1', sizeof(long_text) - 1);
        long_text[sizeof(long_text) - 1] = '\0';
        ck_assert_uint_eq(infer(long_text, b), UA_BT_STRING);
    }
}
END_TEST

/* ------------------------------------------------------------ print */

/* Print p as bt, then parse it back and compare the first bytes. */
static void
round_trip(uint8_t bt, const void *p, size_t cmp, const char *want)
{
    char buf[256];
    int  k = ua_builtin_print(bt, p, buf, sizeof(buf));

    ck_assert_int_ge(k, 0);
    ck_assert_uint_eq((size_t)k, strlen(buf));
    if (want != NULL)
        ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(feed(bt, buf), UA_GOOD);
    if (cmp != 0)
        ck_assert_mem_eq(&out, p, cmp);
}

START_TEST(test_print)
{
    bool             t = true;
    int8_t           i8 = -128;
    uint16_t         u16 = 65535;
    int32_t          i32 = INT32_MIN;
    uint32_t         sc = 0x80740000u;
    int64_t          i64 = INT64_MIN, dt = UNIX + SEC + SEC / 2;
    uint64_t         u64 = UINT64_MAX;
    float            f = 0.1f;
    double           d = 0.1;
    struct ua_string s = ua_string_from("a\"b\\c\n"), e = ua_string_from("");
    struct ua_string b = { 3, (uint8_t *)"\xfb\xff\x00" };
    struct ua_guid   g = { 0x09087e75, 0x8e5e, 0x499b,
                           { 0x95, 0x4f, 0xf2, 0xa9, 0x60, 0x3d, 0xb2,
                             0x8a } };
    struct ua_nodeid id = ua_nodeid_str(1, "v0");
    struct ua_localizedtext lt = { UA_LT_TEXT, { -1, NULL },
                                   { 2, (uint8_t *)"hi" } };
    char             buf[8];

    round_trip(UA_BT_BOOLEAN, &t, 1, "true");
    round_trip(UA_BT_SBYTE, &i8, 1, "-128");
    round_trip(UA_BT_UINT16, &u16, 2, "65535");
    round_trip(UA_BT_INT32, &i32, 4, "-2147483648");
    round_trip(UA_BT_STATUSCODE, &sc, 4, "0x80740000");
    round_trip(UA_BT_INT64, &i64, 8, "-9223372036854775808");
    round_trip(UA_BT_UINT64, &u64, 8, "18446744073709551615");
    round_trip(UA_BT_FLOAT, &f, 4, NULL);
    round_trip(UA_BT_DOUBLE, &d, 8, NULL);
    round_trip(UA_BT_DATETIME, &dt, 8, "1970-01-01T00:00:01.5000000Z");
    round_trip(UA_BT_GUID, &g, 16, "09087e75-8e5e-499b-954f-f2a9603db28a");
    round_trip(UA_BT_STRING, &s, 0, "\"a\\\"b\\\\c\\n\"");
    ck_assert(ua_string_eq(&out.s, "a\"b\\c\n"));
    round_trip(UA_BT_STRING, &e, 0, "\"\"");
    ck_assert_int_eq(out.s.len, 0);
    round_trip(UA_BT_BYTESTRING, &b, 0, "+/8A");
    ck_assert_int_eq(out.s.len, 3);
    ck_assert_mem_eq(out.s.data, b.data, 3);
    round_trip(UA_BT_NODEID, &id, 0, "ns=1;s=v0");
    ck_assert(ua_string_eq(&out.id.id.str, "v0"));
    round_trip(UA_BT_LOCALIZEDTEXT, &lt, 0, "\"hi\"");
    ck_assert(ua_string_eq(&out.lt.text, "hi"));
    /* No feed text, or no room: -1. */
    ck_assert_int_eq(ua_builtin_print(UA_BT_QUALIFIEDNAME, &s, buf,
                                      sizeof(buf)), -1);
    ck_assert_int_eq(ua_builtin_print(UA_BT_INT64, &i64, buf, sizeof(buf)),
                     -1);
    ck_assert_int_eq(ua_builtin_print(UA_BT_BOOLEAN, &t, buf, 4), -1);
    ck_assert_int_eq(ua_builtin_print(UA_BT_BOOLEAN, &t, buf, 5), 4);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Built-in types");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Table");
    tcase_add_test(tc, test_table);
    suite_add_tcase(s, tc);
    tc = tcase_create("Parse");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_integers_both);
    tcase_add_test(tc, test_integers_differ);
    tcase_add_test(tc, test_reals);
    tcase_add_test(tc, test_boolean);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_bytestrings);
    tcase_add_test(tc, test_datetimes);
    tcase_add_test(tc, test_guids_and_nodeids);
    tcase_add_test(tc, test_not_supported);
    tcase_add_test(tc, test_messages);
    tcase_add_test(tc, test_arena_exhausted);
    suite_add_tcase(s, tc);
    tc = tcase_create("Infer");
    tcase_add_test(tc, test_infer);
    suite_add_tcase(s, tc);
    tc = tcase_create("Print");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_print);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
