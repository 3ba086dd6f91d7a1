/*
 * tests/unit/proto/check_codec.c: the binary codec's built-in encodings and
 * every decoding limit, each at the limit and one past it.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define ARENA_SIZE (8u << 20)

static uint8_t         arena_buf[ARENA_SIZE];
static struct ua_arena arena;

static void
setup(void)
{
    ua_arena_init(&arena, arena_buf, sizeof(arena_buf));
}

/* Encode v, compare with the expected bytes, decode back, compare values. */
static void
check_bytes(const void *v, int ti, const uint8_t *want, size_t wlen)
{
    uint8_t   buf[512];
    uint8_t   back[512] __attribute__((aligned(16)));
    size_t    len = 0, used = 0;
    ua_status s;

    s = ua_encode(v, &ua_types[ti], buf, sizeof(buf), &len);
    ck_assert_uint_eq(s, UA_GOOD);
    ck_assert_uint_eq(len, wlen);
    ck_assert_mem_eq(buf, want, wlen);
    memset(back, 0, sizeof(back));
    s = ua_decode(buf, len, &used, back, &ua_types[ti], &arena, NULL);
    ck_assert_uint_eq(s, UA_GOOD);
    ck_assert_uint_eq(used, len);
    ck_assert(ua_equal(v, back, &ua_types[ti]));
}

static ua_status
dec(const uint8_t *b, size_t n, int ti, const struct ua_limits *lim)
{
    static uint8_t out[4096] __attribute__((aligned(16)));

    memset(out, 0, sizeof(out));
    ua_arena_reset(&arena);
    return ua_decode(b, n, NULL, out, &ua_types[ti], &arena, lim);
}

/* --- built-ins -------------------------------------------------------- */

START_TEST(test_scalars)
{
    bool        t = true;
    int16_t     i16 = -2;
    uint32_t    u32 = 0x01020304;
    int64_t     i64 = -1;
    double      d = 1.5;
    float       f = -0.5f;
    ua_datetime dt = 0x01D2A3B4C5D6E7F8LL;

    check_bytes(&t, UA_TYPE_BOOLEAN, (const uint8_t *)"\x01", 1);
    check_bytes(&i16, UA_TYPE_INT16, (const uint8_t *)"\xFE\xFF", 2);
    check_bytes(&u32, UA_TYPE_UINT32, (const uint8_t *)"\x04\x03\x02\x01", 4);
    check_bytes(&i64, UA_TYPE_INT64,
                (const uint8_t *)"\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF", 8);
    check_bytes(&d, UA_TYPE_DOUBLE,
                (const uint8_t *)"\x00\x00\x00\x00\x00\x00\xF8\x3F", 8);
    check_bytes(&f, UA_TYPE_FLOAT, (const uint8_t *)"\x00\x00\x00\xBF", 4);
    check_bytes(&dt, UA_TYPE_DATETIME,
                (const uint8_t *)"\xF8\xE7\xD6\xC5\xB4\xA3\xD2\x01", 8);
}
END_TEST

START_TEST(test_boolean_nonzero_is_true)
{
    bool    b = false;
    size_t  used;

    ck_assert_uint_eq(ua_decode((const uint8_t *)"\x7F", 1, &used, &b,
                                &ua_types[UA_TYPE_BOOLEAN], &arena, NULL),
                      UA_GOOD);
    ck_assert(b == true);
}
END_TEST

START_TEST(test_strings)
{
    struct ua_string s = ua_string_from("abc");
    struct ua_string n = { -1, NULL };
    struct ua_string e = { 0, NULL };

    check_bytes(&s, UA_TYPE_STRING,
                (const uint8_t *)"\x03\x00\x00\x00" "abc", 7);
    check_bytes(&n, UA_TYPE_STRING,
                (const uint8_t *)"\xFF\xFF\xFF\xFF", 4);
    check_bytes(&e, UA_TYPE_BYTESTRING,
                (const uint8_t *)"\x00\x00\x00\x00", 4);
}
END_TEST

START_TEST(test_guid)
{
    struct ua_guid g = { 0x72962B91, 0xFA75, 0x4AE6,
                         { 0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF, 0x63 } };

    check_bytes(&g, UA_TYPE_GUID,
                (const uint8_t *)"\x91\x2B\x96\x72\x75\xFA\xE6\x4A"
                                 "\x8D\x28\xB4\x04\xDC\x7D\xAF\x63", 16);
}
END_TEST

START_TEST(test_nodeid_forms)
{
    struct ua_nodeid n;

    n = ua_nodeid_num(0, 72);                       /* two-byte */
    check_bytes(&n, UA_TYPE_NODEID, (const uint8_t *)"\x00\x48", 2);
    n = ua_nodeid_num(5, 1025);                     /* four-byte */
    check_bytes(&n, UA_TYPE_NODEID, (const uint8_t *)"\x01\x05\x01\x04", 4);
    n = ua_nodeid_num(0, 256);                      /* four-byte, ns 0 */
    check_bytes(&n, UA_TYPE_NODEID, (const uint8_t *)"\x01\x00\x00\x01", 4);
    n = ua_nodeid_num(256, 1);                      /* numeric */
    check_bytes(&n, UA_TYPE_NODEID,
                (const uint8_t *)"\x02\x00\x01\x01\x00\x00\x00", 7);
    n = ua_nodeid_num(1, 0x10000);                  /* numeric */
    check_bytes(&n, UA_TYPE_NODEID,
                (const uint8_t *)"\x02\x01\x00\x00\x00\x01\x00", 7);
    n.ns = 1;
    n.idtype = UA_IDTYPE_STRING;
    n.id.str = ua_string_from("Hot");
    check_bytes(&n, UA_TYPE_NODEID,
                (const uint8_t *)"\x03\x01\x00\x03\x00\x00\x00Hot", 10);
    n.idtype = UA_IDTYPE_OPAQUE;
    check_bytes(&n, UA_TYPE_NODEID,
                (const uint8_t *)"\x05\x01\x00\x03\x00\x00\x00Hot", 10);
    n.idtype = UA_IDTYPE_GUID;
    memset(&n.id.guid, 0xAB, sizeof(n.id.guid));
    check_bytes(&n, UA_TYPE_NODEID,
                (const uint8_t *)"\x04\x01\x00\xAB\xAB\xAB\xAB\xAB\xAB\xAB"
                                 "\xAB\xAB\xAB\xAB\xAB\xAB\xAB\xAB\xAB", 19);
}
END_TEST

START_TEST(test_nodeid_bad)
{
    /* An unknown encoding, ExpandedNodeId flags on a NodeId, truncation. */
    ck_assert_uint_eq(dec((const uint8_t *)"\x06\x00", 2, UA_TYPE_NODEID, 0),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(dec((const uint8_t *)"\x80\x00", 2, UA_TYPE_NODEID, 0),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(dec((const uint8_t *)"\x02\x00\x01", 3, UA_TYPE_NODEID,
                          0), UA_BAD_DECODING_ERROR);
}
END_TEST

START_TEST(test_expandednodeid)
{
    struct ua_expandednodeid x = { 0 };

    x.node = ua_nodeid_num(0, 1);
    x.ns_uri = ua_string_from("urn:a");
    x.server_index = 2;
    check_bytes(&x, UA_TYPE_EXPANDEDNODEID,
                (const uint8_t *)"\xC0\x01\x05\x00\x00\x00urn:a"
                                 "\x02\x00\x00\x00", 15);
    x.ns_uri.len = -1;
    x.ns_uri.data = NULL;
    x.server_index = 0;
    check_bytes(&x, UA_TYPE_EXPANDEDNODEID, (const uint8_t *)"\x00\x01", 2);
}
END_TEST

START_TEST(test_localizedtext_and_qname)
{
    struct ua_localizedtext l = { .mask = UA_LT_LOCALE | UA_LT_TEXT };
    struct ua_qualifiedname q = { 2, ua_string_from("N") };

    l.locale = ua_string_from("en");
    l.text = ua_string_from("Hi");
    check_bytes(&l, UA_TYPE_LOCALIZEDTEXT,
                (const uint8_t *)"\x03\x02\x00\x00\x00" "en"
                                 "\x02\x00\x00\x00" "Hi", 13);
    l.mask = 0;
    check_bytes(&l, UA_TYPE_LOCALIZEDTEXT, (const uint8_t *)"\x00", 1);
    check_bytes(&q, UA_TYPE_QUALIFIEDNAME,
                (const uint8_t *)"\x02\x00\x01\x00\x00\x00N", 7);
}
END_TEST

START_TEST(test_variant_forms)
{
    struct ua_variant v;
    int32_t           a[6] = { 1, 2, 3, 4, 5, 6 };
    int32_t           dims[2] = { 2, 3 };
    int32_t           x = 7;

    memset(&v, 0, sizeof(v));
    check_bytes(&v, UA_TYPE_VARIANT, (const uint8_t *)"\x00", 1);
    ua_variant_set_scalar(&v, &x, UA_BT_INT32);
    check_bytes(&v, UA_TYPE_VARIANT, (const uint8_t *)"\x06\x07\x00\x00\x00",
                5);
    ua_variant_set_array(&v, a, 2, UA_BT_INT32);
    check_bytes(&v, UA_TYPE_VARIANT,
                (const uint8_t *)"\x86\x02\x00\x00\x00\x01\x00\x00\x00"
                                 "\x02\x00\x00\x00", 13);
    ua_variant_set_array(&v, a, 6, UA_BT_INT32);
    v.ndims = 2;
    v.dims = dims;
    check_bytes(&v, UA_TYPE_VARIANT,
                (const uint8_t *)"\xC6\x06\x00\x00\x00"
                "\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00"
                "\x04\x00\x00\x00\x05\x00\x00\x00\x06\x00\x00\x00"
                "\x02\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 41);
    ua_variant_set_array(&v, NULL, -1, UA_BT_STRING);
    check_bytes(&v, UA_TYPE_VARIANT,
                (const uint8_t *)"\x8C\xFF\xFF\xFF\xFF", 5);
}
END_TEST

START_TEST(test_variant_raw)
{
    /* A pre-encoded Variant inside a DataValue is copied as it is. */
    struct ua_datavalue dv;
    uint8_t             enc[] = { 0x06, 0x2A, 0x00, 0x00, 0x00 };
    uint8_t             buf[32];
    size_t              len;
    struct ua_datavalue back;

    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE;
    dv.value.type = UA_VARIANT_RAW;
    dv.value.n = sizeof(enc);
    dv.value.data = enc;
    ck_assert_uint_eq(ua_encode(&dv, &ua_types[UA_TYPE_DATAVALUE], buf,
                                sizeof(buf), &len), UA_GOOD);
    ck_assert_uint_eq(len, 6);
    ck_assert_mem_eq(buf, "\x01\x06\x2A\x00\x00\x00", 6);
    ck_assert_uint_eq(ua_decode(buf, len, NULL, &back,
                                &ua_types[UA_TYPE_DATAVALUE], &arena, NULL),
                      UA_GOOD);
    ck_assert_uint_eq(back.value.type, UA_BT_INT32);
    ck_assert_int_eq(*(int32_t *)back.value.data, 42);
    /* An empty raw value is refused. */
    dv.value.n = 0;
    ck_assert_uint_eq(ua_encode(&dv, &ua_types[UA_TYPE_DATAVALUE], buf,
                                sizeof(buf), &len), UA_BAD_ENCODING_ERROR);
}
END_TEST

START_TEST(test_variant_bad)
{
    /* Built-in type 26..63 does not exist. */
    ck_assert_uint_eq(dec((const uint8_t *)"\x1A\x00", 2, UA_TYPE_VARIANT, 0),
                      UA_BAD_DECODING_ERROR);
    /* A Variant directly inside a Variant. */
    ck_assert_uint_eq(dec((const uint8_t *)"\x18\x00", 2, UA_TYPE_VARIANT, 0),
                      UA_BAD_DECODING_ERROR);
    /* Dimensions flag on a scalar. */
    ck_assert_uint_eq(dec((const uint8_t *)"\x46\x00\x00\x00\x00", 5,
                          UA_TYPE_VARIANT, 0), UA_BAD_DECODING_ERROR);
    /* Dimensions product not equal to the length: [2,2] for 3 elements. */
    ck_assert_uint_eq(dec((const uint8_t *)"\xC3\x03\x00\x00\x00\x01\x02\x03"
                          "\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00",
                          20, UA_TYPE_VARIANT, 0), UA_BAD_DECODING_ERROR);
    /* Dimensions [65536,65536,65536] overflow. */
    ck_assert_uint_eq(dec((const uint8_t *)"\xC3\x01\x00\x00\x00\x01"
                          "\x03\x00\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00"
                          "\x00\x00\x01\x00", 22, UA_TYPE_VARIANT, 0),
                      UA_BAD_DECODING_ERROR);
    /* A negative dimension. */
    ck_assert_uint_eq(dec((const uint8_t *)"\xC3\x00\x00\x00\x00"
                          "\x01\x00\x00\x00\xFF\xFF\xFF\xFF", 13,
                          UA_TYPE_VARIANT, 0), UA_BAD_DECODING_ERROR);
}
END_TEST

START_TEST(test_datavalue)
{
    struct ua_datavalue dv;
    int32_t             x = 1;

    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE | UA_DV_STATUS | UA_DV_SOURCE_TS | UA_DV_SOURCE_PS
              | UA_DV_SERVER_TS | UA_DV_SERVER_PS;
    ua_variant_set_scalar(&dv.value, &x, UA_BT_INT32);
    dv.status = UA_BAD_NODE_ID_UNKNOWN;
    dv.source_ts = 1;
    dv.source_ps = 2;
    dv.server_ts = 3;
    dv.server_ps = 4;
    check_bytes(&dv, UA_TYPE_DATAVALUE,
                (const uint8_t *)"\x3F\x06\x01\x00\x00\x00\x00\x00\x34\x80"
                "\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00"
                "\x03\x00\x00\x00\x00\x00\x00\x00\x04\x00", 30);
    memset(&dv, 0, sizeof(dv));
    check_bytes(&dv, UA_TYPE_DATAVALUE, (const uint8_t *)"\x00", 1);
}
END_TEST

START_TEST(test_diaginfo)
{
    struct ua_diaginfo inner = { .mask = UA_DI_INNER_STATUS,
                                 .inner_status = UA_BAD_INTERNAL_ERROR };
    struct ua_diaginfo di = { 0 };

    di.mask = UA_DI_SYMBOLIC_ID | UA_DI_LOCALE | UA_DI_LOCALIZED_TEXT
              | UA_DI_INNER_DIAG;
    di.symbolic_id = 1;
    di.locale = 2;
    di.localized_text = 3;
    di.inner = &inner;
    /* Wire order: SymbolicId, NamespaceUri, Locale, LocalizedText, ... */
    check_bytes(&di, UA_TYPE_DIAGNOSTICINFO,
                (const uint8_t *)"\x4D\x01\x00\x00\x00\x02\x00\x00\x00"
                "\x03\x00\x00\x00\x20\x00\x00\x02\x80", 18);
}
END_TEST

START_TEST(test_extobj)
{
    struct ua_extobj         x = { 0 };
    struct ua_read_value_id  rv = { 0 };
    uint8_t                  buf[128];
    size_t                   len;

    /* Known type: decoded, with the body length patched in. */
    rv.node_id = ua_nodeid_num(0, 2258);
    rv.attribute_id = 13;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[UA_TYPE_READVALUEID];
    x.obj = &rv;
    x.type_id = ua_nodeid_num(0, UA_NS0ID_READVALUEID_ENCODING_DEFAULTBINARY);
    check_bytes(&x, UA_TYPE_EXTENSIONOBJECT,
                (const uint8_t *)"\x01\x00\x74\x02\x01\x12\x00\x00\x00"
                "\x01\x00\xD2\x08\x0D\x00\x00\x00\xFF\xFF\xFF\xFF"
                "\x00\x00\xFF\xFF\xFF\xFF", 27);
    /* Unknown type: kept as bytes. */
    memset(&x, 0, sizeof(x));
    x.type_id = ua_nodeid_num(3, 9);
    x.encoding = UA_EO_BYTES;
    x.body.len = 2;
    x.body.data = (uint8_t *)"\xAA\xBB";
    check_bytes(&x, UA_TYPE_EXTENSIONOBJECT,
                (const uint8_t *)"\x01\x03\x09\x00\x01\x02\x00\x00\x00\xAA\xBB",
                11);
    /* Body longer than the bytes left. */
    ck_assert_uint_eq(dec((const uint8_t *)"\x00\x01\x01\x09\x00\x00\x00\xAA",
                          8, UA_TYPE_EXTENSIONOBJECT, 0),
                      UA_BAD_DECODING_ERROR);
    /* Body shorter than its decoded type consumes (ReadValueId in 3 bytes). */
    ck_assert_uint_eq(dec((const uint8_t *)"\x01\x00\x74\x02\x01\x03\x00\x00"
                          "\x00\x00\x01\x0D\x00\x00\x00\xFF\xFF\xFF\xFF",
                          19, UA_TYPE_EXTENSIONOBJECT, 0),
                      UA_BAD_DECODING_ERROR);
    /* Unknown encoding byte. */
    ck_assert_uint_eq(dec((const uint8_t *)"\x00\x01\x03", 3,
                          UA_TYPE_EXTENSIONOBJECT, 0), UA_BAD_DECODING_ERROR);
    (void)buf;
    (void)len;
}
END_TEST

/* --- lengths and limits ----------------------------------------------- */

static size_t
put_i32(uint8_t *p, int32_t v)
{
    memcpy(p, &v, 4);
    return 4;
}

START_TEST(test_negative_lengths)
{
    uint8_t b[16];

    put_i32(b, -2);
    ck_assert_uint_eq(dec(b, 4, UA_TYPE_STRING, 0), UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(dec(b, 4, UA_TYPE_BYTESTRING, 0), UA_BAD_DECODING_ERROR);
    put_i32(b, INT32_MIN);
    ck_assert_uint_eq(dec(b, 4, UA_TYPE_STRING, 0), UA_BAD_DECODING_ERROR);
    /* An array length below -1 in a structure (ReadRequest.nodes_to_read). */
    b[0] = 0x86;
    put_i32(b + 1, -5);
    ck_assert_uint_eq(dec(b, 5, UA_TYPE_VARIANT, 0), UA_BAD_DECODING_ERROR);
}
END_TEST

START_TEST(test_lying_lengths)
{
    uint8_t b[32] = { 0 };

    /* String of 0x7FFFFFFF with 10 bytes left: no allocation, DecodingError */
    put_i32(b, INT32_MAX);
    ck_assert_uint_eq(dec(b, 14, UA_TYPE_STRING, 0), UA_BAD_DECODING_ERROR);
    /* Array of 0x7FFFFFFF Int32 with 10 bytes left. */
    b[0] = 0x86;
    put_i32(b + 1, INT32_MAX);
    ck_assert_uint_eq(dec(b, 15, UA_TYPE_VARIANT, 0), UA_BAD_DECODING_ERROR);
    /* Array of 3 Doubles with 23 bytes: one byte short. */
    b[0] = 0x8B;
    put_i32(b + 1, 3);
    ck_assert_uint_eq(dec(b, 5 + 23, UA_TYPE_VARIANT, 0),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(arena.used, 0);
}
END_TEST

static uint8_t big[(1 << 20) + 64];

START_TEST(test_string_limit)
{
    struct ua_limits lim = ua_limits_default;

    lim.max_string_len = 1000;
    memset(big, 'x', sizeof(big));
    put_i32(big, 1000);
    ck_assert_uint_eq(dec(big, 1004, UA_TYPE_STRING, &lim), UA_GOOD);
    put_i32(big, 1001);
    ck_assert_uint_eq(dec(big, 1005, UA_TYPE_STRING, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    /* The default limit itself: 1 MiB at, 1 MiB + 1 past. */
    put_i32(big, UA_LIMIT_STRING_LEN);
    ck_assert_uint_eq(dec(big, 4 + UA_LIMIT_STRING_LEN, UA_TYPE_STRING, NULL),
                      UA_GOOD);
    put_i32(big, UA_LIMIT_STRING_LEN + 1);
    ck_assert_uint_eq(dec(big, 5 + UA_LIMIT_STRING_LEN, UA_TYPE_STRING, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

START_TEST(test_bytestring_limit)
{
    struct ua_limits lim = ua_limits_default;

    lim.max_bytestring_len = 16;
    lim.max_string_len = 1;
    memset(big, 0, 64);
    put_i32(big, 16);
    ck_assert_uint_eq(dec(big, 20, UA_TYPE_BYTESTRING, &lim), UA_GOOD);
    put_i32(big, 17);
    ck_assert_uint_eq(dec(big, 21, UA_TYPE_BYTESTRING, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

START_TEST(test_array_limit)
{
    struct ua_limits lim = ua_limits_default;
    size_t           n;

    lim.max_array_len = 100;
    memset(big, 0, 1024);
    big[0] = 0x83;                              /* Byte array */
    put_i32(big + 1, 100);
    ck_assert_uint_eq(dec(big, 105, UA_TYPE_VARIANT, &lim), UA_GOOD);
    put_i32(big + 1, 101);
    ck_assert_uint_eq(dec(big, 106, UA_TYPE_VARIANT, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    /* The default, 65535 elements. */
    n = 5 + UA_LIMIT_ARRAY_LEN;
    memset(big, 0, n + 1);
    big[0] = 0x83;
    put_i32(big + 1, UA_LIMIT_ARRAY_LEN);
    ck_assert_uint_eq(dec(big, n, UA_TYPE_VARIANT, NULL), UA_GOOD);
    put_i32(big + 1, UA_LIMIT_ARRAY_LEN + 1);
    ck_assert_uint_eq(dec(big, n + 1, UA_TYPE_VARIANT, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

START_TEST(test_message_limit)
{
    struct ua_limits lim = ua_limits_default;

    lim.max_message_size = 5;
    put_i32(big, 1);
    big[4] = 'a';
    ck_assert_uint_eq(dec(big, 5, UA_TYPE_STRING, &lim), UA_GOOD);
    ck_assert_uint_eq(dec(big, 6, UA_TYPE_STRING, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

/* n Variants, each an array of one Variant, around an empty Variant. */
static size_t
nested_variants(uint8_t *b, int n)
{
    size_t k = 0;

    for (int i = 0; i < n - 1; i++) {
        b[k++] = 0x98;
        k += put_i32(b + k, 1);
    }
    b[k++] = 0x00;
    return k;
}

static uint8_t deep[64 * 50000 + 16];

START_TEST(test_nesting_variant)
{
    size_t n;

    n = nested_variants(deep, UA_NESTING_MAX);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_VARIANT, NULL), UA_GOOD);
    n = nested_variants(deep, UA_NESTING_MAX + 1);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_VARIANT, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    n = nested_variants(deep, 10000);           /* Team82's bomb */
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_VARIANT, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

START_TEST(test_nesting_configured)
{
    struct ua_limits lim = ua_limits_default;
    size_t           n;

    lim.max_depth = 10;
    n = nested_variants(deep, 10);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_VARIANT, &lim), UA_GOOD);
    n = nested_variants(deep, 11);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_VARIANT, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

static size_t
nested_diaginfo(uint8_t *b, int n)
{
    for (int i = 0; i < n - 1; i++)
        b[i] = UA_DI_INNER_DIAG;
    b[n - 1] = 0;
    return (size_t)n;
}

START_TEST(test_nesting_diaginfo)
{
    size_t n;

    n = nested_diaginfo(deep, UA_NESTING_MAX);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_DIAGNOSTICINFO, NULL), UA_GOOD);
    n = nested_diaginfo(deep, UA_NESTING_MAX + 1);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_DIAGNOSTICINFO, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    n = nested_diaginfo(deep, 50000);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_DIAGNOSTICINFO, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

/* DataValue -> Variant -> DataValue -> ...: two levels per DataValue. */
static size_t
nested_datavalues(uint8_t *b, int levels)
{
    size_t k = 0;

    for (int i = 0; i < levels - 1; i++) {
        b[k++] = UA_DV_VALUE;
        b[k++] = UA_BT_DATAVALUE;
    }
    b[k++] = 0;
    return k;
}

START_TEST(test_nesting_datavalue)
{
    size_t n;

    /* 50 DataValues + 49 Variants = 99 levels; 51 + 50 = 101. */
    n = nested_datavalues(deep, 50);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_DATAVALUE, NULL), UA_GOOD);
    n = nested_datavalues(deep, 51);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_DATAVALUE, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    n = nested_datavalues(deep, 20000);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_DATAVALUE, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

/*
 * ExtensionObject(KeyValuePair{ Key, Value = Variant(ExtensionObject(...)) }):
 * three levels (ExtensionObject, structure, Variant) per step.
 */
static size_t
nested_extobjs(uint8_t *b, int steps)
{
    size_t   k = 0;
    size_t   lenpos[20000];
    uint32_t id = UA_NS0ID_KEYVALUEPAIR_ENCODING_DEFAULTBINARY;

    for (int i = 0; i < steps; i++) {
        b[k++] = 0x01;                          /* four-byte NodeId */
        b[k++] = 0x00;
        b[k++] = (uint8_t)id;
        b[k++] = (uint8_t)(id >> 8);
        b[k++] = 0x01;                          /* binary body */
        lenpos[i] = k;
        k += 4;
        b[k++] = 0;                             /* Key: ns 0, null name */
        b[k++] = 0;
        k += put_i32(b + k, -1);
        b[k++] = i == steps - 1 ? 0x00 : UA_BT_EXTENSIONOBJECT;
    }
    for (int i = steps - 1; i >= 0; i--)
        put_i32(b + lenpos[i], (int32_t)(k - lenpos[i] - 4));
    return k;
}

START_TEST(test_nesting_extobj)
{
    size_t n;

    /* 33 steps = 99 levels: fine.  34 steps = 102 levels: refused. */
    n = nested_extobjs(deep, 33);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_EXTENSIONOBJECT, NULL), UA_GOOD);
    n = nested_extobjs(deep, 34);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_EXTENSIONOBJECT, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    n = nested_extobjs(deep, 5000);
    ck_assert_uint_eq(dec(deep, n, UA_TYPE_EXTENSIONOBJECT, NULL),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

START_TEST(test_nesting_encode)
{
    static struct ua_variant vs[UA_NESTING_MAX + 2];
    uint8_t                  buf[2048];
    size_t                   len;
    int                      i;

    /* A chain of UA_NESTING_MAX Variants encodes; one more does not. */
    for (i = 0; i < UA_NESTING_MAX + 1; i++)
        ua_variant_set_array(&vs[i], &vs[i + 1], 1, UA_BT_VARIANT);
    memset(&vs[UA_NESTING_MAX + 1], 0, sizeof(vs[0]));
    memset(&vs[UA_NESTING_MAX - 1], 0, sizeof(vs[0]));
    ck_assert_uint_eq(ua_encode(&vs[0], &ua_types[UA_TYPE_VARIANT], buf,
                                sizeof(buf), &len), UA_GOOD);
    ua_variant_set_array(&vs[UA_NESTING_MAX - 1], &vs[UA_NESTING_MAX], 1,
                         UA_BT_VARIANT);
    ck_assert_uint_eq(ua_encode(&vs[0], &ua_types[UA_TYPE_VARIANT], buf,
                                sizeof(buf), &len),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST


/*
 * The WriteValue decode fast path gives what the table path gives: a
 * WriteRequest of varied WriteValues (every fixed-size scalar type, a
 * Boolean byte of 2, strings, arrays, an ExtensionObject, no value,
 * status and timestamps, index ranges) decoded whole (fast path) equals,
 * element by element, each WriteValue decoded alone (table path), by
 * re-encoding both; every prefix is a BadDecodingError; the nesting limit
 * is honoured at the same depth.
 */
START_TEST(test_write_values_fast_decode)
{
    enum { N = 48 };
    static struct ua_write_value wv[N];
    static uint8_t               full[16384], a[512], b[512];
    static uint8_t               fixed[N][16];
    static struct ua_string      strs[N];
    static int32_t               arr[3] = { 1, -2, 3 };
    static struct ua_range       rg = { -1.0, 1.0 };
    static struct ua_write_request req, back;
    static uint8_t               one[8192];
    struct ua_limits             lim = ua_limits_default;
    size_t                       len, hdr, off, used, la, lb;
    static const uint8_t         fixed_types[] = {
        UA_BT_BOOLEAN, UA_BT_SBYTE, UA_BT_BYTE, UA_BT_INT16, UA_BT_UINT16,
        UA_BT_INT32, UA_BT_UINT32, UA_BT_INT64, UA_BT_UINT64, UA_BT_FLOAT,
        UA_BT_DOUBLE, UA_BT_DATETIME, UA_BT_STATUSCODE, UA_BT_GUID };

    memset(&req, 0, sizeof(req));
    /* The header's length: the request without WriteValues, less 4. */
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], full,
                                sizeof(full), &hdr), UA_GOOD);
    hdr -= 4;
    for (int i = 0; i < N; i++) {
        struct ua_datavalue *dv = &wv[i].value;

        memset(&wv[i], 0, sizeof(wv[i]));
        wv[i].node_id = i % 2 ? ua_nodeid_num(1, (uint32_t)i * 1000)
                              : ua_nodeid_num(0, (uint32_t)i);
        if (i % 7 == 3) {
            wv[i].node_id.idtype = UA_IDTYPE_STRING;
            wv[i].node_id.id.str = ua_string_from("Demo.Analog.Double");
        }
        wv[i].attribute_id = i % 9 ? 13 : 5;
        wv[i].index_range = i % 11 == 4 ? ua_string_from("1:2")
                                        : (struct ua_string){ -1, NULL };
        dv->mask = (uint8_t)((i % 13 == 6 ? 0 : UA_DV_VALUE)
                             | (i % 3 ? UA_DV_SOURCE_TS : 0)
                             | (i % 5 ? 0 : UA_DV_STATUS | UA_DV_SERVER_TS
                                            | UA_DV_SOURCE_PS
                                            | UA_DV_SERVER_PS));
        dv->status = UA_BAD_NODE_ID_UNKNOWN;
        dv->source_ts = 1000 + i;
        dv->server_ts = 2000 + i;
        dv->source_ps = (uint16_t)i;
        dv->server_ps = (uint16_t)(i + 3);
        for (int k = 0; k < 16; k++)
            fixed[i][k] = (uint8_t)(i * 16 + k + 1);
        if (i < (int)sizeof(fixed_types)) {
            if (fixed_types[i] == UA_BT_BOOLEAN)
                fixed[i][0] = 1;
            ua_variant_set_scalar(&dv->value, fixed[i], fixed_types[i]);
        } else if (i % 4 == 0) {
            strs[i] = ua_string_from("a string value");
            ua_variant_set_scalar(&dv->value, &strs[i], UA_BT_STRING);
        } else if (i % 4 == 1) {
            ua_variant_set_array(&dv->value, arr, 3, UA_BT_INT32);
        } else if (i % 4 == 2) {
            static struct ua_extobj x;

            x.encoding = UA_EO_DECODED;
            x.type = &ua_types[UA_TYPE_RANGE];
            x.type_id = ua_nodeid_num(0, ua_types[UA_TYPE_RANGE].binary_id);
            x.obj = &rg;
            ua_variant_set_scalar(&dv->value, &x, UA_BT_EXTENSIONOBJECT);
        } else {
            ua_variant_set_scalar(&dv->value, fixed[i], UA_BT_DOUBLE);
        }
    }
    req.n_nodes_to_write = N;
    req.nodes_to_write = wv;
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], full,
                                sizeof(full), &len), UA_GOOD);
    /* A Boolean sent as 2 (true on decode) by the first WriteValue. */
    {
        size_t p = hdr + 4;

        ua_arena_reset(&arena);
        ck_assert_uint_eq(ua_decode(full + p, len - p, &used, &back,
                                    &ua_types[UA_TYPE_WRITEVALUE], &arena,
                                    NULL), UA_GOOD);
        /* NodeId i=0 (2 bytes), AttributeId, null IndexRange, mask. */
        ck_assert_uint_eq(full[p + 11], UA_BT_BOOLEAN);
        ck_assert_uint_eq(full[p + 12], 1);
        full[p + 12] = 2;
    }
    ua_arena_reset(&arena);
    ck_assert_uint_eq(ua_decode(full, len, &used, &back,
                                &ua_types[UA_TYPE_WRITEREQUEST], &arena,
                                NULL), UA_GOOD);
    ck_assert_uint_eq(used, len);
    ck_assert_int_eq(back.n_nodes_to_write, N);
    ck_assert_uint_eq(back.nodes_to_write[0].value.value.type,
                      UA_BT_BOOLEAN);
    ck_assert(*(bool *)back.nodes_to_write[0].value.value.data);
    off = hdr + 4;
    for (int i = 0; i < N; i++) {
        static struct ua_write_value t;
        static uint8_t               abuf[65536];
        struct ua_arena              ta;

        ua_arena_init(&ta, abuf, sizeof(abuf));
        ck_assert_uint_eq(ua_decode(full + off, len - off, &used, &t,
                                    &ua_types[UA_TYPE_WRITEVALUE], &ta,
                                    NULL), UA_GOOD);
        off += used;
        ck_assert_uint_eq(ua_encode(&back.nodes_to_write[i],
                                    &ua_types[UA_TYPE_WRITEVALUE], a,
                                    sizeof(a), &la), UA_GOOD);
        ck_assert_uint_eq(ua_encode(&t, &ua_types[UA_TYPE_WRITEVALUE], b,
                                    sizeof(b), &lb), UA_GOOD);
        ck_assert_uint_eq(la, lb);
        ck_assert_mem_eq(a, b, la);
        ck_assert_uint_eq(back.nodes_to_write[i].value.mask, t.value.mask);
        ck_assert_uint_eq(back.nodes_to_write[i].value.value.type,
                          t.value.value.type);
        ck_assert_int_eq(back.nodes_to_write[i].value.value.ndims,
                         t.value.value.ndims);
        ck_assert_int_eq(back.nodes_to_write[i].value.value.is_array,
                         t.value.value.is_array);
    }
    ck_assert_uint_eq(off, len);
    /* Every prefix of the request: a decoding error, never a crash. */
    for (size_t cut = hdr + 4; cut < len; cut++) {
        memcpy(one, full, cut < sizeof(one) ? cut : sizeof(one));
        if (cut > sizeof(one))
            break;
        ua_arena_reset(&arena);
        ck_assert_uint_eq(ua_decode(one, cut, NULL, &back,
                                    &ua_types[UA_TYPE_WRITEREQUEST], &arena,
                                    NULL), UA_BAD_DECODING_ERROR);
    }
    /* Nesting: WriteRequest, WriteValue, DataValue, Variant = 4 levels;
     * a Range in a Variant needs two more levels. */
    req.n_nodes_to_write = 1;
    req.nodes_to_write = &wv[5];        /* Int32 scalar */
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], one,
                                sizeof(one), &len), UA_GOOD);
    lim.max_depth = 3;
    ck_assert_uint_eq(dec(one, len, UA_TYPE_WRITEREQUEST, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    lim.max_depth = 4;
    ck_assert_uint_eq(dec(one, len, UA_TYPE_WRITEREQUEST, &lim), UA_GOOD);
    req.nodes_to_write = &wv[18];       /* i % 4 == 2: the Range */
    ck_assert_uint_eq(wv[18].value.value.type, UA_BT_EXTENSIONOBJECT);
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], one,
                                sizeof(one), &len), UA_GOOD);
    lim.max_depth = 5;
    ck_assert_uint_eq(dec(one, len, UA_TYPE_WRITEREQUEST, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    lim.max_depth = 6;
    ck_assert_uint_eq(dec(one, len, UA_TYPE_WRITEREQUEST, &lim), UA_GOOD);
}
END_TEST

/*
 * The one-step WriteValue (ua_dec_write_value_fast): every NodeId form it
 * takes or hands over (2-, 4-, 7-byte numeric, String, empty String, null
 * String) times every fixed-size scalar type and a Boolean sent as 2, plus
 * the shapes it must leave to the general path (a reserved mask bit, an
 * empty IndexRange, a Variant array bit): each WriteValue of the whole
 * request equals the same bytes decoded alone by the table path (fields,
 * the String's place in the buffer, the re-encoding); every prefix of the
 * request is a BadDecodingError; a String NodeId over max_string_len is
 * refused as the table path refuses it.
 */
START_TEST(test_write_values_fast_shapes)
{
    enum { NID = 6, NTY = 15, NODD = 3, N = NID * NTY + NODD };
    static const uint8_t types[NTY] = {
        UA_BT_BOOLEAN, UA_BT_SBYTE, UA_BT_BYTE, UA_BT_INT16, UA_BT_UINT16,
        UA_BT_INT32, UA_BT_UINT32, UA_BT_INT64, UA_BT_UINT64, UA_BT_FLOAT,
        UA_BT_DOUBLE, UA_BT_DATETIME, UA_BT_STATUSCODE, UA_BT_GUID,
        UA_BT_BOOLEAN };
    static struct ua_write_value   wv[N];
    static struct ua_write_request req, back;
    static uint8_t                 full[16384], a[256], b[256];
    static uint8_t                 vals[N][16];
    static size_t                  at[N + 1];
    struct ua_limits               lim = ua_limits_default;
    size_t                         len, hdr, used, la, lb;

    memset(&req, 0, sizeof(req));
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], full,
                                sizeof(full), &hdr), UA_GOOD);
    hdr -= 4;
    for (int i = 0; i < N; i++) {
        struct ua_nodeid *id = &wv[i].node_id;

        memset(&wv[i], 0, sizeof(wv[i]));
        switch (i % NID) {
        case 0: *id = ua_nodeid_num(0, 200); break;
        case 1: *id = ua_nodeid_num(1, 300); break;
        case 2: *id = ua_nodeid_num(2, 70000); break;
        case 3:
            *id = ua_nodeid_num(1, 0);
            id->idtype = UA_IDTYPE_STRING;
            id->id.str = ua_string_from("v17");
            break;
        case 4:
            *id = ua_nodeid_num(1, 0);
            id->idtype = UA_IDTYPE_STRING;
            id->id.str = (struct ua_string){ 0, (uint8_t *)"" };
            break;
        default:
            *id = ua_nodeid_num(1, 0);
            id->idtype = UA_IDTYPE_STRING;
            id->id.str = (struct ua_string){ -1, NULL };
            break;
        }
        wv[i].attribute_id = 13;
        wv[i].index_range = (struct ua_string){ -1, NULL };
        wv[i].value.mask = UA_DV_VALUE;
        for (int k = 0; k < 16; k++)
            vals[i][k] = (uint8_t)(i * 7 + k + 1);
        vals[i][0] = 1;             /* a Boolean's byte: 1, patched to 2 */
        ua_variant_set_scalar(&wv[i].value.value, vals[i],
                              i < NID * NTY ? types[i / NID] : UA_BT_INT32);
    }
    /* The odd ones (Int32 values): an empty IndexRange; the others are
     * patched below (a reserved mask bit, the Variant's array bit). */
    wv[NID * NTY].index_range = (struct ua_string){ 0, (uint8_t *)"" };
    req.n_nodes_to_write = N;
    req.nodes_to_write = wv;
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], full,
                                sizeof(full), &len), UA_GOOD);
    /* Where each WriteValue starts (table path, one at a time). */
    at[0] = hdr + 4;
    for (int i = 0; i < N; i++) {
        ck_assert_uint_eq(ua_encode(&wv[i], &ua_types[UA_TYPE_WRITEVALUE], a,
                                    sizeof(a), &la), UA_GOOD);
        at[i + 1] = at[i] + la;
    }
    ck_assert_uint_eq(at[N], len);
    /* The last NTY-block's Booleans as 2; a reserved mask bit (0x41) on
     * NODD 1, the array bit on NODD 2 (with an element count of 1). */
    for (int i = NID * (NTY - 1); i < NID * NTY; i++) {
        ck_assert_uint_eq(full[at[i + 1] - 2], UA_BT_BOOLEAN);
        ck_assert_uint_eq(full[at[i + 1] - 1], 1);
        full[at[i + 1] - 1] = 2;
    }
    ck_assert_uint_eq(full[at[N - 2] - 6], UA_DV_VALUE);
    ck_assert_uint_eq(full[at[N - 1] - 6], UA_DV_VALUE);
    full[at[N - 1] - 6] = 0x41;
    {
        /* NODD 2: mask, 0x86 (Int32 array), count 1, the Int32. */
        uint8_t  tail[10] = { UA_DV_VALUE, 0x80 | UA_BT_INT32, 1, 0, 0, 0 };

        memcpy(tail + 6, vals[N - 1], 4);
        memcpy(full + at[N] - 6, tail, 10);
        len += 4;
        at[N] += 4;
    }
    ua_arena_reset(&arena);
    ck_assert_uint_eq(ua_decode(full, len, &used, &back,
                                &ua_types[UA_TYPE_WRITEREQUEST], &arena,
                                NULL), UA_GOOD);
    ck_assert_uint_eq(used, len);
    ck_assert_int_eq(back.n_nodes_to_write, N);
    for (int i = 0; i < N; i++) {
        static struct ua_write_value t;
        static uint8_t               abuf[4096];
        const struct ua_write_value *f = &back.nodes_to_write[i];
        struct ua_arena              ta;

        ua_arena_init(&ta, abuf, sizeof(abuf));
        ck_assert_uint_eq(ua_decode(full + at[i], len - at[i], &used, &t,
                                    &ua_types[UA_TYPE_WRITEVALUE], &ta,
                                    NULL), UA_GOOD);
        ck_assert_uint_eq(used, at[i + 1] - at[i]);
        ck_assert_uint_eq(f->node_id.idtype, t.node_id.idtype);
        ck_assert_uint_eq(f->node_id.ns, t.node_id.ns);
        if (t.node_id.idtype == UA_IDTYPE_STRING) {
            ck_assert_int_eq(f->node_id.id.str.len, t.node_id.id.str.len);
            ck_assert_ptr_eq(f->node_id.id.str.data, t.node_id.id.str.data);
        } else {
            ck_assert_uint_eq(f->node_id.id.num, t.node_id.id.num);
        }
        ck_assert_uint_eq(f->attribute_id, t.attribute_id);
        ck_assert_int_eq(f->index_range.len, t.index_range.len);
        ck_assert_ptr_eq(f->index_range.data, t.index_range.data);
        ck_assert_uint_eq(f->value.mask, t.value.mask);
        ck_assert_uint_eq(f->value.value.type, t.value.value.type);
        ck_assert_uint_eq(f->value.value.is_array, t.value.value.is_array);
        ck_assert_int_eq(f->value.value.n, t.value.value.n);
        ck_assert_int_eq(f->value.value.ndims, t.value.value.ndims);
        if (!t.value.value.is_array && t.value.value.data != NULL)
            ck_assert_mem_eq(f->value.value.data, t.value.value.data,
                             ua_types[t.value.value.type - 1].size);
        ck_assert_uint_eq(ua_encode(f, &ua_types[UA_TYPE_WRITEVALUE], a,
                                    sizeof(a), &la), UA_GOOD);
        ck_assert_uint_eq(ua_encode(&t, &ua_types[UA_TYPE_WRITEVALUE], b,
                                    sizeof(b), &lb), UA_GOOD);
        ck_assert_uint_eq(la, lb);
        ck_assert_mem_eq(a, b, la);
    }
    /* A Boolean sent as 2 is true, as the table path makes it. */
    ck_assert(*(bool *)back.nodes_to_write[NID * (NTY - 1)].value.value.data);
    /* Every prefix: a decoding error. */
    for (size_t cut = hdr + 4; cut < len; cut++) {
        ua_arena_reset(&arena);
        ck_assert_uint_eq(ua_decode(full, cut, NULL, &back,
                                    &ua_types[UA_TYPE_WRITEREQUEST], &arena,
                                    NULL), UA_BAD_DECODING_ERROR);
    }
    /* "v17" over a max_string_len of 2: refused as the table path does. */
    lim.max_string_len = 2;
    req.n_nodes_to_write = 1;
    req.nodes_to_write = &wv[3];
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_WRITEREQUEST], full,
                                sizeof(full), &len), UA_GOOD);
    ck_assert_uint_eq(dec(full + hdr + 4, len - hdr - 4, UA_TYPE_WRITEVALUE,
                          &lim), UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ck_assert_uint_eq(dec(full, len, UA_TYPE_WRITEREQUEST, &lim),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    lim.max_string_len = 3;
    ck_assert_uint_eq(dec(full, len, UA_TYPE_WRITEREQUEST, &lim), UA_GOOD);
}
END_TEST

/*
 * The hand-written array fast paths (DataValue, MonitoredItemNotification)
 * write exactly what the table path writes for each element, at every
 * buffer size.
 */
START_TEST(test_fast_paths_match)
{
    static struct ua_datavalue             dv[40];
    static struct ua_monitored_item_notification mi[40];
    static uint8_t                         full[4096], part[4096], one[128];
    static bool                            bools[40];
    static int32_t                         ints[40];
    static double                          dbls[40];
    static struct ua_guid                  guids[40];
    static struct ua_string                strs[40];
    struct ua_variant                      arr;
    size_t                                 len, need, k, n1;

    for (int i = 0; i < 40; i++) {
        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].mask = (uint8_t)(UA_DV_VALUE | (i % 3 ? UA_DV_SOURCE_TS : 0)
                               | (i % 4 ? UA_DV_SERVER_TS : 0)
                               | (i % 5 ? 0 : UA_DV_STATUS | UA_DV_SOURCE_PS
                                              | UA_DV_SERVER_PS));
        dv[i].source_ts = 1000 + i;
        dv[i].server_ts = 2000 + i;
        dv[i].status = UA_BAD_NODE_ID_UNKNOWN;
        dv[i].source_ps = (uint16_t)i;
        dv[i].server_ps = (uint16_t)(i + 1);
        bools[i] = i & 1;
        ints[i] = -i;
        dbls[i] = i + 0.5;
        memset(&guids[i], i, sizeof(guids[i]));
        strs[i] = ua_string_from("x");
        switch (i % 6) {
        case 0: ua_variant_set_scalar(&dv[i].value, &bools[i], UA_BT_BOOLEAN);
                break;
        case 1: ua_variant_set_scalar(&dv[i].value, &ints[i], UA_BT_INT32);
                break;
        case 2: ua_variant_set_scalar(&dv[i].value, &dbls[i], UA_BT_DOUBLE);
                break;
        case 3: ua_variant_set_scalar(&dv[i].value, &guids[i], UA_BT_GUID);
                break;
        case 4: ua_variant_set_scalar(&dv[i].value, &strs[i], UA_BT_STRING);
                break;         /* not fixed-size: the table path */
        case 5: {
            /* Pre-encoded values of 1, 5, 9, 20 and 40 bytes, and none. */
            static uint8_t raw[5][40] = {
                { 0x00 },
                { 0x06, 0x2A, 0x00, 0x00, 0x00 },
                { 0x0B, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F },
                { 0x0C, 15, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h',
                  'i', 'j', 'k', 'l', 'm', 'n', 'o' },
                { 0x0C, 35, 0, 0, 0, '0', '1', '2', '3', '4', '5', '6', '7',
                  '8', '9', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
                  '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '1',
                  '2', '3', '4' },
            };
            static const int32_t rawlen[5] = { 1, 5, 9, 20, 40 };
            int r = (i / 6) % 6;

            if (r == 5) {
                dv[i].mask &= (uint8_t)~UA_DV_VALUE;
                break;
            }
            dv[i].value.type = UA_VARIANT_RAW;
            dv[i].value.n = rawlen[r];
            dv[i].value.data = raw[r];
            break;
        }
        }
        mi[i].client_handle = (uint32_t)(7 * i);
        mi[i].value = dv[i];
    }
    /* DataValues: the array equals the concatenated single encodings. */
    ua_variant_set_array(&arr, dv, 40, UA_BT_DATAVALUE);
    ck_assert_uint_eq(ua_encode(&arr, &ua_types[UA_TYPE_VARIANT], full,
                                sizeof(full), &len), UA_GOOD);
    k = 5;
    for (int i = 0; i < 40; i++) {
        ck_assert_uint_eq(ua_encode(&dv[i], &ua_types[UA_TYPE_DATAVALUE], one,
                                    sizeof(one), &n1), UA_GOOD);
        ck_assert_mem_eq(full + k, one, n1);
        k += n1;
    }
    ck_assert_uint_eq(k, len);
    for (size_t cap = len - 80; cap < len; cap++) {
        ck_assert_uint_eq(ua_encode(&arr, &ua_types[UA_TYPE_VARIANT], part,
                                    cap, &need),
                          UA_BAD_ENCODING_LIMITS_EXCEEDED);
        ck_assert_uint_eq(need, len);
        /* What was written is the start of the encoding (the field that
         * did not fit may be missing). */
        ck_assert_mem_eq(part, full, cap - 64);
    }
    /* MonitoredItemNotifications inside a DataChangeNotification. */
    {
        struct ua_data_change_notification dcn = { 0 };

        dcn.n_monitored_items = 40;
        dcn.monitored_items = mi;
        dcn.n_diagnostic_infos = -1;
        ck_assert_uint_eq(ua_encode(&dcn,
                                    &ua_types[UA_TYPE_DATACHANGENOTIFICATION],
                                    full, sizeof(full), &len), UA_GOOD);
        k = 4;
        for (int i = 0; i < 40; i++) {
            ck_assert_uint_eq(ua_encode(&mi[i],
                              &ua_types[UA_TYPE_MONITOREDITEMNOTIFICATION],
                              one, sizeof(one), &n1), UA_GOOD);
            ck_assert_mem_eq(full + k, one, n1);
            k += n1;
        }
        ck_assert_uint_eq(k + 4, len);          /* + diagnosticInfos */
    }
}
END_TEST

/*
 * A DataValue the service encoded already (UA_DV_ENCODED, the Read of a
 * value slot) encodes as its bytes, alone, in an array and through the
 * table path, exactly as the same DataValue in fields does.
 */
START_TEST(test_datavalue_encoded)
{
    static struct ua_datavalue dv[12], pre[12];
    static uint8_t             enc[12][160], a[4096], b[4096];
    static uint8_t             raw[100];
    static int32_t             ints[12];
    struct ua_variant          va, vb;
    size_t                     la, lb, n1;

    for (int i = 0; i < 100; i++)
        raw[i] = (uint8_t)i;
    raw[0] = 0x0F;                          /* a ByteString of 95 bytes */
    memcpy(raw + 1, &(int32_t){ 95 }, 4);
    for (int i = 0; i < 12; i++) {
        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].value.ndims = -1;
        ints[i] = i * 1000;
        dv[i].mask = (uint8_t)((i % 4 ? UA_DV_VALUE : 0)
                               | (i % 3 ? UA_DV_SOURCE_TS : 0)
                               | (i & 1 ? UA_DV_SERVER_TS : 0)
                               | (i % 5 ? 0 : UA_DV_STATUS | UA_DV_SERVER_PS));
        if (i == 7) {
            dv[i].value.type = UA_VARIANT_RAW;  /* > 64 bytes: table path */
            dv[i].value.n = 100;
            dv[i].value.data = raw;
        } else {
            ua_variant_set_scalar(&dv[i].value, &ints[i], UA_BT_INT32);
        }
        dv[i].status = UA_BAD_NO_COMMUNICATION;
        dv[i].source_ts = 7000 + i;
        dv[i].server_ts = 9000 + i;
        dv[i].server_ps = 3;
        ck_assert_uint_eq(ua_encode(&dv[i], &ua_types[UA_TYPE_DATAVALUE],
                                    enc[i], sizeof(enc[i]), &n1), UA_GOOD);
        memset(&pre[i], 0xA5, sizeof(pre[i]));  /* nothing else is read */
        pre[i].mask = UA_DV_ENCODED;
        pre[i].value.n = (int32_t)n1;
        pre[i].value.data = enc[i];
        ck_assert_uint_eq(ua_encoded_size(&pre[i],
                                          &ua_types[UA_TYPE_DATAVALUE]), n1);
    }
    ua_variant_set_array(&va, dv, 12, UA_BT_DATAVALUE);
    ua_variant_set_array(&vb, pre, 12, UA_BT_DATAVALUE);
    ck_assert_uint_eq(ua_encode(&va, &ua_types[UA_TYPE_VARIANT], a, sizeof(a),
                                &la), UA_GOOD);
    ck_assert_uint_eq(ua_encode(&vb, &ua_types[UA_TYPE_VARIANT], b, sizeof(b),
                                &lb), UA_GOOD);
    ck_assert_uint_eq(la, lb);
    ck_assert_mem_eq(a, b, la);
    /* Near the end of the buffer the fast path hands over: same bytes. */
    for (size_t cap = lb - 70; cap < lb; cap++) {
        ck_assert_uint_eq(ua_encode(&vb, &ua_types[UA_TYPE_VARIANT], b, cap,
                                    &n1), UA_BAD_ENCODING_LIMITS_EXCEEDED);
        ck_assert_uint_eq(n1, la);
    }
    /* No bytes: an encoding error, not an empty DataValue. */
    pre[0].value.n = 0;
    ck_assert_uint_eq(ua_encode(&pre[0], &ua_types[UA_TYPE_DATAVALUE], b,
                                sizeof(b), &n1), UA_BAD_ENCODING_ERROR);
    ck_assert_uint_eq(ua_encode(&vb, &ua_types[UA_TYPE_VARIANT], b, sizeof(b),
                                &n1), UA_BAD_ENCODING_ERROR);
}
END_TEST

/*
 * ReadValueIds in every NodeId form the one-step decoder takes, and in the
 * shapes it leaves to the general path (an IndexRange, a DataEncoding
 * name, a GUID); every truncation fails.
 */
START_TEST(test_read_value_ids)
{
    static const uint8_t wire[] = {
        6, 0, 0, 0,                                     /* 6 ReadValueIds */
        0x00, 85, 13, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,  /* i=85 */
        0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        0x01, 2, 0x34, 0x12, 13, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        0, 0, 0xFF, 0xFF, 0xFF, 0xFF,                   /* ns=2;i=0x1234 */
        0x02, 3, 0, 0x78, 0x56, 0x34, 0x12, 13, 0, 0, 0,
        0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        0x03, 1, 0, 4, 0, 0, 0, 'v', '9', '9', '9', 13, 0, 0, 0,
        0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        0x03, 1, 0, 2, 0, 0, 0, 'v', '1', 13, 0, 0, 0,  /* range "1:2" */
        3, 0, 0, 0, '1', ':', '2', 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        0x03, 1, 0, 0, 0, 0, 0, 13, 0, 0, 0,            /* s="" named */
        0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 14, 0, 0, 0, 'D', 'e', 'f', 'a',
        'u', 'l', 't', ' ', 'B', 'i', 'n', 'a', 'r', 'y',
    };
    static uint8_t      out[2048] __attribute__((aligned(16)));
    struct ua_read_request *rq;
    uint8_t             msg[sizeof(wire) + 64];
    size_t              hdr, used;
    struct ua_read_request empty;

    /* A ReadRequest around them: header, maxAge, timestamps. */
    memset(&empty, 0, sizeof(empty));
    empty.n_nodes_to_read = -1;
    ck_assert_uint_eq(ua_encode(&empty, &ua_types[UA_TYPE_READREQUEST], msg,
                                sizeof(msg), &hdr), UA_GOOD);
    hdr -= 4;                                   /* drop the null array */
    memcpy(msg + hdr, wire, sizeof(wire));
    ua_arena_reset(&arena);
    memset(out, 0, sizeof(out));
    ck_assert_uint_eq(ua_decode(msg, hdr + sizeof(wire), &used, out,
                                &ua_types[UA_TYPE_READREQUEST], &arena, NULL),
                      UA_GOOD);
    ck_assert_uint_eq(used, hdr + sizeof(wire));
    rq = (struct ua_read_request *)out;
    ck_assert_int_eq(rq->n_nodes_to_read, 6);
    ck_assert_uint_eq(rq->nodes_to_read[0].node_id.idtype, UA_IDTYPE_NUMERIC);
    ck_assert_uint_eq(rq->nodes_to_read[0].node_id.id.num, 85);
    ck_assert_uint_eq(rq->nodes_to_read[1].node_id.ns, 2);
    ck_assert_uint_eq(rq->nodes_to_read[1].node_id.id.num, 0x1234);
    ck_assert_uint_eq(rq->nodes_to_read[2].node_id.ns, 3);
    ck_assert_uint_eq(rq->nodes_to_read[2].node_id.id.num, 0x12345678);
    ck_assert_uint_eq(rq->nodes_to_read[3].node_id.idtype, UA_IDTYPE_STRING);
    ck_assert_uint_eq(rq->nodes_to_read[3].node_id.ns, 1);
    ck_assert_int_eq(rq->nodes_to_read[3].node_id.id.str.len, 4);
    ck_assert_mem_eq(rq->nodes_to_read[3].node_id.id.str.data, "v999", 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(rq->nodes_to_read[i].attribute_id, 13);
        ck_assert_int_eq(rq->nodes_to_read[i].index_range.len, -1);
        ck_assert_int_eq(rq->nodes_to_read[i].data_encoding.name.len, -1);
    }
    ck_assert_int_eq(rq->nodes_to_read[4].index_range.len, 3);
    ck_assert_mem_eq(rq->nodes_to_read[4].index_range.data, "1:2", 3);
    ck_assert_int_eq(rq->nodes_to_read[5].node_id.id.str.len, 0);
    ck_assert_int_eq(rq->nodes_to_read[5].data_encoding.name.len, 14);
    for (size_t n = hdr; n < hdr + sizeof(wire); n++) {
        ua_arena_reset(&arena);
        ck_assert_uint_ne(ua_decode(msg, n, NULL, out,
                                    &ua_types[UA_TYPE_READREQUEST], &arena,
                                    NULL), UA_GOOD);
    }
    /* A NodeId string over the limit: the limit's status, as before. */
    {
        struct ua_limits lim = ua_limits_default;

        lim.max_string_len = 3;
        ua_arena_reset(&arena);
        ck_assert_uint_eq(ua_decode(msg, hdr + sizeof(wire), NULL, out,
                                    &ua_types[UA_TYPE_READREQUEST], &arena,
                                    &lim), UA_BAD_ENCODING_LIMITS_EXCEEDED);
    }
}
END_TEST

/*
 * Arrays of ReferenceDescriptions (BrowseResult): the one-step writer for
 * numeric local NodeIds and the field-by-field path for the rest give the
 * bytes of the single-element (table) encodings, also near the end of the
 * buffer.
 */
START_TEST(test_refdesc_fast_match)
{
    static struct ua_reference_description rd[24];
    static uint8_t                         full[8192], part[8192], one[512];
    static const uint32_t ids[4] = { 7, 300, 70000, 0x12345678 };
    static const uint16_t nss[4] = { 0, 1, 300, 2 };
    struct ua_browse_result                br;
    size_t                                 len, need, k, n1;

    for (int i = 0; i < 24; i++) {
        struct ua_reference_description *r = &rd[i];

        memset(r, 0, sizeof(*r));
        r->reference_type_id = ua_nodeid_num(nss[i % 4], ids[(i + 1) % 4]);
        r->is_forward = i & 1;
        r->node_id.node = ua_nodeid_num(nss[(i / 4) % 4], ids[i % 4]);
        r->node_id.ns_uri.len = -1;
        r->type_definition.node = ua_nodeid_num(0, 58 + i);
        r->type_definition.ns_uri.len = -1;
        r->browse_name.ns = (uint16_t)i;
        r->browse_name.name = i % 5 == 0 ? (struct ua_string){ -1, NULL }
                              : ua_string_from("ServerStatus");
        r->display_name.mask = (uint8_t)(i % 4);
        r->display_name.locale = ua_string_from("en");
        r->display_name.text = i % 7 == 0 ? (struct ua_string){ 0, NULL }
                               : ua_string_from("Server Status");
        r->node_class = 1 << (i % 8);
        switch (i % 6) {                /* shapes left to the slow path */
        case 1:
            r->node_id.node.idtype = UA_IDTYPE_STRING;
            r->node_id.node.id.str = ua_string_from("v42");
            break;
        case 2:
            r->type_definition.ns_uri = ua_string_from("urn:x");
            break;
        case 3:
            r->node_id.server_index = 3;
            break;
        default:
            break;
        }
    }
    memset(&br, 0, sizeof(br));
    br.continuation_point.len = -1;
    br.n_references = 24;
    br.references = rd;
    ck_assert_uint_eq(ua_encode(&br, &ua_types[UA_TYPE_BROWSERESULT], full,
                                sizeof(full), &len), UA_GOOD);
    k = 4 + 4 + 4;                      /* status, continuation, count */
    for (int i = 0; i < 24; i++) {
        ck_assert_uint_eq(ua_encode(&rd[i],
                                    &ua_types[UA_TYPE_REFERENCEDESCRIPTION],
                                    one, sizeof(one), &n1), UA_GOOD);
        ck_assert_mem_eq(full + k, one, n1);
        k += n1;
    }
    ck_assert_uint_eq(k, len);
    for (size_t cap = len - 120; cap < len; cap++) {
        ck_assert_uint_eq(ua_encode(&br, &ua_types[UA_TYPE_BROWSERESULT],
                                    part, cap, &need),
                          UA_BAD_ENCODING_LIMITS_EXCEEDED);
        ck_assert_uint_eq(need, len);
        ck_assert_mem_eq(part, full, cap - 64);
    }
}
END_TEST

/*
 * BrowseDescription arrays take a fast path: every NodeId form, boolean
 * bytes other than 0 and 1, any enum value decode as the table path
 * decodes one BrowseDescription alone, and a request cut anywhere is
 * undecodable.
 */
START_TEST(test_browse_descriptions_fast)
{
    enum { N = 12 };
    static struct ua_browse_description bd[N];
    static uint8_t                      msg[4096], dbuf[1 << 16];
    static const struct ua_guid         gu = { 1, 2, 3, { 4, 5, 6, 7 } };
    struct ua_browse_request            req, out;
    struct ua_arena                     a;
    size_t                              len, off, used;
    const struct ua_type *bt = &ua_types[UA_TYPE_BROWSEDESCRIPTION];

    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.request_header.additional_header.body.len = -1;
    for (int i = 0; i < N; i++) {
        struct ua_nodeid *n = &bd[i].node_id, *r = &bd[i].reference_type_id;

        memset(&bd[i], 0, sizeof(bd[i]));
        switch (i % 6) {
        case 0: *n = ua_nodeid_num(0, 2253); break;          /* 4-byte */
        case 1: *n = ua_nodeid_num(0, 85); break;            /* 2-byte */
        case 2: *n = ua_nodeid_num(300, 70000); break;       /* full */
        case 3:
            n->ns = 1;
            n->idtype = UA_IDTYPE_STRING;
            n->id.str = ua_string_from("Demo.Static.Scalar");
            break;
        case 4:
            n->ns = 2;
            n->idtype = UA_IDTYPE_GUID;
            n->id.guid = gu;
            break;
        default:
            n->ns = 3;
            n->idtype = UA_IDTYPE_OPAQUE;
            n->id.str = ua_string_from("\x01\x02");
            break;
        }
        *r = ua_nodeid_num((uint16_t)(i % 2), (uint32_t)(33 + i * 100));
        bd[i].browse_direction = i - 2;             /* -2 .. 9 */
        bd[i].include_subtypes = i & 1;
        bd[i].node_class_mask = 0xFFu << i;
        bd[i].result_mask = (uint32_t)i * 7;
    }
    req.n_nodes_to_browse = N;
    req.nodes_to_browse = bd;
    ck_assert_uint_eq(ua_encode(&req, &ua_types[UA_TYPE_BROWSEREQUEST], msg,
                                sizeof(msg), &len), UA_GOOD);
    /* includeSubtypes of the last as 0x02: true all the same. */
    ck_assert_uint_eq(msg[len - 9], 1);
    msg[len - 9] = 2;
    ua_arena_init(&a, dbuf, sizeof(dbuf));
    ck_assert_uint_eq(ua_decode(msg, len, NULL, &out,
                                &ua_types[UA_TYPE_BROWSEREQUEST], &a, NULL),
                      UA_GOOD);
    ck_assert_int_eq(out.n_nodes_to_browse, N);
    /* The descriptions start after the header, view, max and count. */
    off = len;
    for (int i = N - 1; i >= 0; i--) {
        size_t n1;

        ck_assert_uint_eq(ua_encode(&bd[i], bt, NULL, 0, &n1),
                          UA_BAD_ENCODING_LIMITS_EXCEEDED);
        off -= n1;
    }
    for (int i = 0; i < N; i++) {
        struct ua_browse_description one;
        const struct ua_browse_description *f = &out.nodes_to_browse[i];

        ck_assert_uint_eq(ua_decode(msg + off, len - off, &used, &one, bt,
                                    &a, NULL), UA_GOOD);
        off += used;
        ck_assert(ua_nodeid_equal(&f->node_id, &one.node_id));
        ck_assert(ua_nodeid_equal(&f->node_id, &bd[i].node_id));
        ck_assert(ua_nodeid_equal(&f->reference_type_id,
                                  &one.reference_type_id));
        ck_assert_int_eq(f->browse_direction, one.browse_direction);
        ck_assert_int_eq(f->browse_direction, bd[i].browse_direction);
        ck_assert(f->include_subtypes == one.include_subtypes);
        ck_assert(f->include_subtypes == (i == N - 1 || (i & 1)));
        ck_assert_uint_eq(f->node_class_mask, one.node_class_mask);
        ck_assert_uint_eq(f->result_mask, bd[i].result_mask);
    }
    ck_assert_uint_eq(off, len);
    for (size_t cut = 0; cut < len; cut++) {
        ua_arena_init(&a, dbuf, sizeof(dbuf));
        ck_assert_uint_ne(ua_decode(msg, cut, NULL, &out,
                                    &ua_types[UA_TYPE_BROWSEREQUEST], &a,
                                    NULL), UA_GOOD);
    }
}
END_TEST

/*
 * A ReferenceDescription array encoded beforehand (UA_IDTYPE_ENCODED, the
 * worker's Browse cache): the encoder writes the count and copies the
 * bytes, the same BrowseResult bytes as the structures give; no bytes is
 * an encoding error, not an empty array.
 */
START_TEST(test_refdesc_encoded)
{
    static struct ua_reference_description rd[3];
    static uint8_t full[1024], pre[1024], out[1024];
    struct ua_reference_description        m;
    struct ua_browse_result                br;
    size_t                                 len, n1, k = 0, olen;

    for (int i = 0; i < 3; i++) {
        memset(&rd[i], 0, sizeof(rd[i]));
        rd[i].reference_type_id = ua_nodeid_num(0, 47);
        rd[i].is_forward = true;
        rd[i].node_id.node = ua_nodeid_num(0, 2256 + (uint32_t)i);
        rd[i].node_id.ns_uri.len = -1;
        rd[i].browse_name.name = ua_string_from("ServerStatus");
        rd[i].display_name.mask = UA_LT_TEXT;
        rd[i].display_name.text = ua_string_from("ServerStatus");
        rd[i].node_class = 2;
        rd[i].type_definition.node = ua_nodeid_num(0, 2138);
        rd[i].type_definition.ns_uri.len = -1;
        ck_assert_uint_eq(ua_encode(&rd[i],
                                    &ua_types[UA_TYPE_REFERENCEDESCRIPTION],
                                    pre + k, sizeof(pre) - k, &n1), UA_GOOD);
        k += n1;
    }
    memset(&br, 0, sizeof(br));
    br.continuation_point.len = -1;
    br.n_references = 3;
    br.references = rd;
    ck_assert_uint_eq(ua_encode(&br, &ua_types[UA_TYPE_BROWSERESULT], full,
                                sizeof(full), &len), UA_GOOD);
    memset(&m, 0, sizeof(m));
    m.reference_type_id.idtype = UA_IDTYPE_ENCODED;
    m.browse_name.name.len = (int32_t)k;
    m.browse_name.name.data = pre;
    br.references = &m;
    ck_assert_uint_eq(ua_encoded_size(&br, &ua_types[UA_TYPE_BROWSERESULT]),
                      len);
    ck_assert_uint_eq(ua_encode(&br, &ua_types[UA_TYPE_BROWSERESULT], out,
                                sizeof(out), &olen), UA_GOOD);
    ck_assert_uint_eq(olen, len);
    ck_assert_mem_eq(out, full, len);
    /* Too small a buffer: the limit, as for the structures. */
    ck_assert_uint_eq(ua_encode(&br, &ua_types[UA_TYPE_BROWSERESULT], out,
                                len - 1, &olen),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    m.browse_name.name.len = 0;
    ck_assert_uint_eq(ua_encode(&br, &ua_types[UA_TYPE_BROWSERESULT], out,
                                sizeof(out), &olen), UA_BAD_ENCODING_ERROR);
}
END_TEST

/*
 * The smallest wire sizes the decoder assumes for ReadValueId (16 bytes)
 * and BrowseDescription (17) before it allocates an array: n minimal
 * elements in n * min bytes decode; n + 1 claimed over the same bytes are
 * refused as undecodable before anything is allocated (a smaller assumed
 * minimum would try the allocation and run out of a small arena).
 */
static void
wire_min_case(int req_t, size_t min, int32_t n)
{
    static uint8_t  msg[8192], out[4096] __attribute__((aligned(16)));
    static uint8_t  roomy[1 << 16], small[256];
    struct ua_arena a;
    uint8_t         empty[512] __attribute__((aligned(16)));
    size_t          hdr;
    int32_t         cnt;

    memset(empty, 0, sizeof(empty));
    /* A request whose last member, the array, is null: drop its length. */
    memset((uint8_t *)empty + ua_types[req_t].members[
               ua_types[req_t].nmembers - 1].count_offset, 0xFF, 4);
    ck_assert_uint_eq(ua_encode(empty, &ua_types[req_t], msg, sizeof(msg),
                                &hdr), UA_GOOD);
    hdr -= 4;
    memset(msg + hdr + 4, 0, (size_t)n * min);
    for (int32_t i = 0; i < n; i++) {
        uint8_t *e = msg + hdr + 4 + (size_t)i * min;

        if (min == 16) {        /* i=0, Value, null range, null name */
            e[2] = 13;
            memset(e + 6, 0xFF, 4);
            memset(e + 12, 0xFF, 4);
        } else {                /* i=0, Forward, i=0, false, 0, 0 */
            e[2] = 0;
        }
    }
    cnt = n;
    memcpy(msg + hdr, &cnt, 4);
    ua_arena_init(&a, roomy, sizeof(roomy));
    ck_assert_uint_eq(ua_decode(msg, hdr + 4 + (size_t)n * min, NULL, out,
                                &ua_types[req_t], &a, NULL), UA_GOOD);
    cnt = n + 1;
    memcpy(msg + hdr, &cnt, 4);
    ua_arena_init(&a, small, sizeof(small));
    ck_assert_uint_eq(ua_decode(msg, hdr + 4 + (size_t)n * min, NULL, out,
                                &ua_types[req_t], &a, NULL),
                      UA_BAD_DECODING_ERROR);
}

START_TEST(test_wire_min_constants)
{
    wire_min_case(UA_TYPE_READREQUEST, 16, 100);
    wire_min_case(UA_TYPE_BROWSEREQUEST, 17, 100);
}
END_TEST

/*
 * Request and response headers in the usual shape (the one-step paths) and
 * in the others (an auditEntryId, a string table, diagnostics, an
 * additional header): the bytes of Part 6 §5.2, and back.
 */
START_TEST(test_headers)
{
    static const uint8_t rq_usual[] = {
        0x01, 1, 0x39, 0x30,                            /* token ns=1;i=12345 */
        8, 7, 6, 5, 4, 3, 2, 1, 42, 0, 0, 0, 0, 0, 0, 0,
        0xFF, 0xFF, 0xFF, 0xFF, 0x10, 0x27, 0, 0, 0, 0, 0,
    };
    static const uint8_t rq_audit[] = {
        0x05, 0, 0, 2, 0, 0, 0, 0xAB, 0xCD,             /* opaque token */
        8, 7, 6, 5, 4, 3, 2, 1, 42, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0, 'a', 0x10, 0x27, 0, 0, 0, 0, 0,
    };
    static const uint8_t rs_usual[] = {
        8, 7, 6, 5, 4, 3, 2, 1, 42, 0, 0, 0, 0, 0, 0x34, 0x80,
        0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0,
    };
    static const uint8_t rs_table[] = {
        8, 7, 6, 5, 4, 3, 2, 1, 42, 0, 0, 0, 0, 0, 0x34, 0x80,
        0x20, 0, 0, 0x34, 0x80, 1, 0, 0, 0, 1, 0, 0, 0, 'a', 0, 0, 0,
    };
    struct ua_request_header  rq;
    struct ua_response_header rs;
    struct ua_string          tab = ua_string_from("a");
    uint8_t                   cut[64];

    memset(&rq, 0, sizeof(rq));
    rq.authentication_token = ua_nodeid_num(1, 12345);
    rq.timestamp = 0x0102030405060708;
    rq.request_handle = 42;
    rq.audit_entry_id.len = -1;
    rq.timeout_hint = 10000;
    rq.additional_header.body.len = -1;
    check_bytes(&rq, UA_TYPE_REQUESTHEADER, rq_usual, sizeof(rq_usual));
    rq.authentication_token.idtype = UA_IDTYPE_OPAQUE;
    rq.authentication_token.ns = 0;
    rq.authentication_token.id.str.len = 2;
    rq.authentication_token.id.str.data = (uint8_t *)"\xAB\xCD";
    rq.audit_entry_id = ua_string_from("a");
    check_bytes(&rq, UA_TYPE_REQUESTHEADER, rq_audit, sizeof(rq_audit));
    /* Every truncation of either shape fails. */
    for (size_t n = 0; n < sizeof(rq_usual); n++) {
        memcpy(cut, rq_usual, n);
        ck_assert_uint_ne(dec(cut, n, UA_TYPE_REQUESTHEADER, NULL), UA_GOOD);
    }
    for (size_t n = 0; n < sizeof(rq_audit); n++) {
        memcpy(cut, rq_audit, n);
        ck_assert_uint_ne(dec(cut, n, UA_TYPE_REQUESTHEADER, NULL), UA_GOOD);
    }
    /* An empty auditEntryId (length 0, as a zeroed request encodes): the
     * fields of the null one, the empty string where its bytes would be,
     * and truncations fail the same. */
    {
        uint8_t                  e[sizeof(rq_usual)];
        struct ua_request_header h;
        struct ua_arena          a;
        static uint8_t           abuf[4096];
        size_t                   used;

        memcpy(e, rq_usual, sizeof(e));
        memset(e + 4 + 16, 0, 4);
        ua_arena_init(&a, abuf, sizeof(abuf));
        memset(&h, 0xA5, sizeof(h));
        ck_assert_uint_eq(ua_decode(e, sizeof(e), &used, &h,
                                    &ua_types[UA_TYPE_REQUESTHEADER], &a,
                                    NULL), UA_GOOD);
        ck_assert_uint_eq(used, sizeof(e));
        ck_assert_int_eq(h.audit_entry_id.len, 0);
        ck_assert_ptr_eq(h.audit_entry_id.data, e + 4 + 20);
        ck_assert_uint_eq(h.request_handle, 42);
        ck_assert_uint_eq(h.timeout_hint, 10000);
        ck_assert_uint_eq((uint64_t)h.timestamp, 0x0102030405060708u);
        ck_assert_uint_eq(h.return_diagnostics, 0);
        ck_assert_uint_eq(h.additional_header.encoding, UA_EO_NONE);
        ck_assert_uint_eq(h.additional_header.type_id.id.num, 0);
        ck_assert(ua_nodeid_equal(&h.authentication_token,
                                  &(struct ua_nodeid){ .ns = 1,
                                                       .id.num = 12345 }));
        for (size_t n = 0; n < sizeof(e); n++) {
            memcpy(cut, e, n);
            ck_assert_uint_ne(dec(cut, n, UA_TYPE_REQUESTHEADER, NULL),
                              UA_GOOD);
        }
    }

    memset(&rs, 0, sizeof(rs));
    rs.timestamp = 0x0102030405060708;
    rs.request_handle = 42;
    rs.service_result = UA_BAD_NODE_ID_UNKNOWN;
    rs.n_string_table = -1;
    rs.additional_header.body.len = -1;
    rs.service_diagnostics.additional_info.len = -1;
    check_bytes(&rs, UA_TYPE_RESPONSEHEADER, rs_usual, sizeof(rs_usual));
    rs.n_string_table = 1;
    rs.string_table = &tab;
    rs.service_diagnostics.mask = UA_DI_INNER_STATUS;
    rs.service_diagnostics.inner_status = UA_BAD_NODE_ID_UNKNOWN;
    check_bytes(&rs, UA_TYPE_RESPONSEHEADER, rs_table, sizeof(rs_table));
}
END_TEST

START_TEST(test_encode_too_small)
{
    struct ua_read_request rq;
    struct ua_read_value_id ids[3];
    uint8_t                buf[256];
    size_t                 len = 0, need = 0;

    memset(&rq, 0, sizeof(rq));
    memset(ids, 0, sizeof(ids));
    rq.request_header.audit_entry_id.len = -1;
    for (int i = 0; i < 3; i++) {
        ids[i].node_id.ns = 1;
        ids[i].node_id.idtype = UA_IDTYPE_STRING;
        ids[i].node_id.id.str = ua_string_from("v17");
        ids[i].attribute_id = 13;
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
    }
    rq.n_nodes_to_read = 3;
    rq.nodes_to_read = ids;
    ck_assert_uint_eq(ua_encode(&rq, &ua_types[UA_TYPE_READREQUEST], buf,
                                sizeof(buf), &len), UA_GOOD);
    for (size_t cap = 0; cap < len; cap++) {
        ck_assert_uint_eq(ua_encode(&rq, &ua_types[UA_TYPE_READREQUEST], buf,
                                    cap, &need),
                          UA_BAD_ENCODING_LIMITS_EXCEEDED);
        ck_assert_uint_eq(need, len);
    }
    ck_assert_uint_eq(ua_encoded_size(&rq, &ua_types[UA_TYPE_READREQUEST]),
                      len);
}
END_TEST

START_TEST(test_arena_exhausted)
{
    static uint8_t   small[64];
    struct ua_arena  a;
    uint8_t          b[64];
    struct ua_variant v;

    ua_arena_init(&a, small, sizeof(small));
    b[0] = 0x8C;                                /* String array of 10 */
    put_i32(b + 1, 10);
    for (int i = 0; i < 10; i++)
        put_i32(b + 5 + 4 * i, -1);
    ck_assert_uint_eq(ua_decode(b, 45, NULL, &v, &ua_types[UA_TYPE_VARIANT],
                                &a, NULL), UA_BAD_OUT_OF_MEMORY);
}
END_TEST

START_TEST(test_truncated_everywhere)
{
    /* Every proper prefix of a valid ReadRequest fails cleanly. */
    struct ua_read_request rq;
    struct ua_read_value_id id;
    uint8_t                buf[256];
    size_t                 len;

    memset(&rq, 0, sizeof(rq));
    memset(&id, 0, sizeof(id));
    rq.request_header.audit_entry_id.len = -1;
    id.node_id = ua_nodeid_num(0, 2258);
    id.attribute_id = 13;
    id.index_range = ua_string_from("1:2");
    id.data_encoding.name.len = -1;
    rq.n_nodes_to_read = 1;
    rq.nodes_to_read = &id;
    ck_assert_uint_eq(ua_encode(&rq, &ua_types[UA_TYPE_READREQUEST], buf,
                                sizeof(buf), &len), UA_GOOD);
    for (size_t n = 0; n < len; n++)
        ck_assert_uint_eq(dec(buf, n, UA_TYPE_READREQUEST, NULL),
                          UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(dec(buf, len, UA_TYPE_READREQUEST, NULL), UA_GOOD);
}
END_TEST

static Suite *
codec_suite(void)
{
    Suite *s = suite_create("Binary codec");
    TCase *tc;

    tc = tcase_create("Built-in encodings");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_scalars);
    tcase_add_test(tc, test_boolean_nonzero_is_true);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_guid);
    tcase_add_test(tc, test_nodeid_forms);
    tcase_add_test(tc, test_nodeid_bad);
    tcase_add_test(tc, test_expandednodeid);
    tcase_add_test(tc, test_localizedtext_and_qname);
    tcase_add_test(tc, test_variant_forms);
    tcase_add_test(tc, test_variant_raw);
    tcase_add_test(tc, test_variant_bad);
    tcase_add_test(tc, test_datavalue);
    tcase_add_test(tc, test_datavalue_encoded);
    tcase_add_test(tc, test_read_value_ids);
    tcase_add_test(tc, test_refdesc_fast_match);
    tcase_add_test(tc, test_refdesc_encoded);
    tcase_add_test(tc, test_browse_descriptions_fast);
    tcase_add_test(tc, test_wire_min_constants);
    tcase_add_test(tc, test_headers);
    tcase_add_test(tc, test_diaginfo);
    tcase_add_test(tc, test_extobj);
    suite_add_tcase(s, tc);

    tc = tcase_create("Lengths and limits");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_negative_lengths);
    tcase_add_test(tc, test_lying_lengths);
    tcase_add_test(tc, test_string_limit);
    tcase_add_test(tc, test_bytestring_limit);
    tcase_add_test(tc, test_array_limit);
    tcase_add_test(tc, test_message_limit);
    tcase_add_test(tc, test_arena_exhausted);
    tcase_add_test(tc, test_truncated_everywhere);
    suite_add_tcase(s, tc);

    tc = tcase_create("Nesting depth");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_nesting_variant);
    tcase_add_test(tc, test_nesting_configured);
    tcase_add_test(tc, test_nesting_diaginfo);
    tcase_add_test(tc, test_nesting_datavalue);
    tcase_add_test(tc, test_nesting_extobj);
    tcase_add_test(tc, test_nesting_encode);
    suite_add_tcase(s, tc);

    tc = tcase_create("Encoding into a caller buffer");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_encode_too_small);
    tcase_add_test(tc, test_fast_paths_match);
    tcase_add_test(tc, test_write_values_fast_decode);
    tcase_add_test(tc, test_write_values_fast_shapes);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(codec_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
