/*
 * tests/unit/proto/check_scalar.c: comparable views of encoded scalars
 * (proto/scalar.h): every built-in type read from the codec's own
 * encoding, short and odd bytes refused, the comparisons across kinds and
 * the casts of a where clause.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/scalar.h"
#include "proto/status_gen.h"
#include "proto/types.h"

/* Encoded Variants: the last one in enc, each view in its own buffer
 * (a view points into its bytes). */
static uint8_t  bufs[8][256];
static unsigned nbuf;
static uint8_t *enc = bufs[0];
static size_t   enc_len;

/* The scalar p of type bt, encoded as a Variant, viewed. */
static struct ua_scalar
view(uint8_t bt, void *p)
{
    struct ua_variant v;
    struct ua_scalar  s;

    enc = bufs[nbuf++ % 8];
    ua_variant_set_scalar(&v, p, bt);
    ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], enc,
                                sizeof(bufs[0]), &enc_len), UA_GOOD);
    ck_assert(ua_scalar_view(enc, enc_len, &s));
    ck_assert_uint_eq(s.kind, ua_builtin[bt].cls);
    return s;
}

static struct ua_scalar
num_i(int64_t i)
{
    return view(UA_BT_INT64, &i);
}

static struct ua_scalar
num_u(uint64_t u)
{
    return view(UA_BT_UINT64, &u);
}

static struct ua_scalar
num_d(double d)
{
    return view(UA_BT_DOUBLE, &d);
}

static struct ua_scalar
str(const char *s)
{
    struct ua_string x = ua_string_from(s);

    return view(UA_BT_STRING, &x);
}

static int
cmp(struct ua_scalar a, struct ua_scalar b, bool *ok)
{
    return ua_scalar_compare(&a, &b, ok);
}

/* ------------------------------------------------------------ view */

START_TEST(test_view_numbers)
{
    bool             b = true;
    int8_t           i8 = -5;
    uint8_t          u8 = 200;
    int16_t          i16 = -300;
    uint16_t         u16 = 60000;
    int32_t          i32 = INT32_MIN;
    uint32_t         u32 = UINT32_MAX, sc = 0x80740000u;
    int64_t          i64 = INT64_MIN, dt = 12345;
    uint64_t         u64 = UINT64_MAX;
    float            f = 1.5f;
    double           d = -2.25;
    struct ua_scalar s;

    s = view(UA_BT_BOOLEAN, &b);
    ck_assert(s.u.b);
    ck_assert_int_eq(view(UA_BT_SBYTE, &i8).u.i, -5);
    ck_assert_uint_eq(view(UA_BT_BYTE, &u8).u.u, 200);
    ck_assert_int_eq(view(UA_BT_INT16, &i16).u.i, -300);
    ck_assert_uint_eq(view(UA_BT_UINT16, &u16).u.u, 60000);
    ck_assert_int_eq(view(UA_BT_INT32, &i32).u.i, INT32_MIN);
    ck_assert_uint_eq(view(UA_BT_UINT32, &u32).u.u, UINT32_MAX);
    ck_assert_int_eq(view(UA_BT_INT64, &i64).u.i, INT64_MIN);
    ck_assert_uint_eq(view(UA_BT_UINT64, &u64).u.u, UINT64_MAX);
    ck_assert(view(UA_BT_FLOAT, &f).u.d == 1.5);
    ck_assert(view(UA_BT_DOUBLE, &d).u.d == -2.25);
    s = view(UA_BT_DATETIME, &dt);
    ck_assert_uint_eq(s.kind, UA_BTC_SIGNED);
    ck_assert_int_eq(s.u.i, 12345);
    s = view(UA_BT_STATUSCODE, &sc);
    ck_assert_uint_eq(s.kind, UA_BTC_UNSIGNED);
    ck_assert_uint_eq(s.bt, UA_BT_STATUSCODE);
    ck_assert_uint_eq(s.u.u, 0x80740000u);
}
END_TEST

START_TEST(test_view_strings)
{
    struct ua_string        s = ua_string_from("abc"), nul = { -1, NULL };
    struct ua_localizedtext lt = { UA_LT_LOCALE | UA_LT_TEXT,
                                   ua_string_from("fr"),
                                   ua_string_from("Bonjour") };
    struct ua_qualifiedname q = { 3, ua_string_from("QN") };
    struct ua_scalar        v;

    v = view(UA_BT_STRING, &s);
    ck_assert_uint_eq(v.n, 3);
    ck_assert_mem_eq(v.p, "abc", 3);
    ck_assert_ptr_eq(v.p, enc + 5);         /* a view of the bytes */
    ck_assert_uint_eq(view(UA_BT_BYTESTRING, &s).bt, UA_BT_BYTESTRING);
    ck_assert_uint_eq(view(UA_BT_XMLELEMENT, &s).n, 3);
    v = view(UA_BT_STRING, &nul);
    ck_assert_uint_eq(v.n, 0);              /* null reads as empty */
    v = view(UA_BT_LOCALIZEDTEXT, &lt);
    ck_assert_uint_eq(v.n, 7);
    ck_assert_mem_eq(v.p, "Bonjour", 7);
    lt.mask = UA_LT_LOCALE;
    v = view(UA_BT_LOCALIZEDTEXT, &lt);
    ck_assert_uint_eq(v.n, 0);              /* no text: empty */
    v = view(UA_BT_QUALIFIEDNAME, &q);
    ck_assert_uint_eq(v.ns, 3);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_mem_eq(v.p, "QN", 2);
}
END_TEST

START_TEST(test_view_nodeids)
{
    struct ua_nodeid         id;
    struct ua_expandednodeid x;
    struct ua_guid           g = { 1, 2, 3, { 4, 5, 6, 7, 8, 9, 10, 11 } };
    struct ua_scalar         v;

    id = ua_nodeid_num(0, 85);              /* TwoByte */
    v = view(UA_BT_NODEID, &id);
    ck_assert_uint_eq(v.idt, UA_IDTYPE_NUMERIC);
    ck_assert_uint_eq(v.u.u, 85);
    id = ua_nodeid_num(2, 4000);            /* FourByte */
    v = view(UA_BT_NODEID, &id);
    ck_assert_uint_eq(v.ns, 2);
    ck_assert_uint_eq(v.u.u, 4000);
    id = ua_nodeid_num(300, 70000);         /* Numeric */
    v = view(UA_BT_NODEID, &id);
    ck_assert_uint_eq(v.ns, 300);
    ck_assert_uint_eq(v.u.u, 70000);
    id = ua_nodeid_str(1, "v0");
    v = view(UA_BT_NODEID, &id);
    ck_assert_uint_eq(v.idt, UA_IDTYPE_STRING);
    ck_assert_uint_eq(v.n, 2);
    id.idtype = UA_IDTYPE_OPAQUE;
    ck_assert_uint_eq(view(UA_BT_NODEID, &id).idt, UA_IDTYPE_OPAQUE);
    memset(&id, 0, sizeof(id));
    id.ns = 1;
    id.idtype = UA_IDTYPE_GUID;
    id.id.guid = g;
    v = view(UA_BT_NODEID, &id);
    ck_assert_uint_eq(v.idt, UA_IDTYPE_GUID);
    ck_assert_uint_eq(v.n, 16);
    /* An ExpandedNodeId compares as its NodeId, if it is a local one. */
    memset(&x, 0, sizeof(x));
    x.node = ua_nodeid_num(0, 85);
    x.ns_uri.len = -1;
    v = view(UA_BT_EXPANDEDNODEID, &x);
    ck_assert_uint_eq(v.bt, UA_BT_NODEID);
    ck_assert_uint_eq(v.u.u, 85);
    {
        struct ua_variant var;
        struct ua_scalar  s;

        x.server_index = 1;
        ua_variant_set_scalar(&var, &x, UA_BT_EXPANDEDNODEID);
        ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], enc,
                                    sizeof(bufs[0]), &enc_len), UA_GOOD);
        ck_assert(!ua_scalar_view(enc, enc_len, &s));
        ck_assert_uint_eq(s.kind, UA_BTC_NONE);
    }
    v = view(UA_BT_GUID, &g);
    ck_assert_uint_eq(v.n, 16);
}
END_TEST

START_TEST(test_view_refusals)
{
    int32_t           a[2] = { 1, 2 }, i = 7;
    struct ua_variant v;
    struct ua_scalar  s;
    struct ua_string  x = ua_string_from("abcdef");

    /* Arrays, the empty Variant, types not compared. */
    ua_variant_set_array(&v, a, 2, UA_BT_INT32);
    ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], enc,
                                sizeof(bufs[0]), &enc_len), UA_GOOD);
    ck_assert(!ua_scalar_view(enc, enc_len, &s));
    enc[0] = 0;
    ck_assert(!ua_scalar_view(enc, 1, &s));
    ck_assert(!ua_scalar_view(enc, 0, &s));
    enc[0] = UA_BT_VARIANT;
    ck_assert(!ua_scalar_view(enc, 8, &s));
    enc[0] = 0x3F;
    ck_assert(!ua_scalar_view(enc, 8, &s));
    /* Every prefix that ends too soon is refused, and leaves NULL. */
    ua_variant_set_scalar(&v, &i, UA_BT_INT32);
    ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], enc,
                                sizeof(bufs[0]), &enc_len), UA_GOOD);
    for (size_t k = 0; k < enc_len; k++) {
        ck_assert(!ua_scalar_view(enc, k, &s));
        ck_assert_uint_eq(s.kind, UA_BTC_NONE);
    }
    ua_variant_set_scalar(&v, &x, UA_BT_STRING);
    ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], enc,
                                sizeof(bufs[0]), &enc_len), UA_GOOD);
    for (size_t k = 0; k < enc_len; k++)
        ck_assert(!ua_scalar_view(enc, k, &s));
    ck_assert(ua_scalar_view(enc, enc_len, &s));
    /* A NodeId encoding that does not exist. */
    enc[0] = UA_BT_NODEID;
    enc[1] = 0x06;
    ck_assert(!ua_scalar_view(enc, 20, &s));
    ck_assert_uint_eq(s.kind, UA_BTC_NONE);
}
END_TEST

/* ------------------------------------------------------------ compare */

START_TEST(test_compare_numbers)
{
    bool             ok, t = true;
    struct ua_scalar one_b = view(UA_BT_BOOLEAN, &t);

    ck_assert_int_eq(cmp(num_i(5), num_i(5), &ok), 0);
    ck_assert(ok);
    ck_assert_int_eq(cmp(num_i(4), num_i(5), &ok), -1);
    ck_assert_int_eq(cmp(num_i(6), num_i(5), &ok), 1);
    /* Signed with unsigned exactly, even past 2^53 and 2^63. */
    ck_assert_int_eq(cmp(num_i(-1), num_u(UINT64_MAX), &ok), -1);
    ck_assert_int_eq(cmp(num_u(UINT64_MAX), num_i(INT64_MAX), &ok), 1);
    ck_assert_int_eq(cmp(num_i((INT64_C(1) << 53) + 1),
                         num_u((UINT64_C(1) << 53)), &ok), 1);
    ck_assert_int_eq(cmp(num_i(-2), num_i(-3), &ok), 1);
    /* Boolean is 0 / 1. */
    ck_assert_int_eq(cmp(one_b, num_u(1), &ok), 0);
    ck_assert(ok);
    ck_assert_int_eq(cmp(one_b, num_i(-1), &ok), 1);
    /* A double makes both doubles; NaN compares with nothing. */
    ck_assert_int_eq(cmp(num_d(2.5), num_i(2), &ok), 1);
    ck_assert(ok);
    ck_assert_int_eq(cmp(num_d(NAN), num_d(NAN), &ok), 0);
    ck_assert(!ok);
    /* A String is read as a number when compared with one. */
    ck_assert_int_eq(cmp(str("5.5"), num_i(5), &ok), 1);
    ck_assert(ok);
    ck_assert_int_eq(cmp(num_i(5), str("5"), &ok), 0);
    ck_assert(ok);
    (void)cmp(str("five"), num_i(5), &ok);
    ck_assert(!ok);
    (void)cmp(str(""), num_i(5), &ok);
    ck_assert(!ok);
}
END_TEST

START_TEST(test_compare_others)
{
    bool                    ok;
    struct ua_qualifiedname q1 = { 1, ua_string_from("b") };
    struct ua_qualifiedname q2 = { 2, ua_string_from("a") };
    struct ua_string        bs = ua_string_from("5");
    struct ua_nodeid        n1 = ua_nodeid_num(1, 5), n2 = ua_nodeid_num(1, 5);
    struct ua_nodeid        s1 = ua_nodeid_str(1, "x");
    struct ua_guid          g1 = { 1, 2, 3, { 0 } }, g2 = { 1, 2, 4, { 0 } };
    struct ua_scalar        a, b, null;

    ck_assert_int_eq(cmp(str("abc"), str("abd"), &ok), -1);
    ck_assert(ok);
    ck_assert_int_eq(cmp(str("abc"), str("ab"), &ok), 1);
    ck_assert_int_eq(cmp(str(""), str(""), &ok), 0);
    /* QualifiedNames by namespace first. */
    a = view(UA_BT_QUALIFIEDNAME, &q1);
    b = view(UA_BT_QUALIFIEDNAME, &q2);
    ck_assert_int_eq(cmp(a, b, &ok), -1);
    ck_assert(ok);
    /* A ByteString is no number. */
    a = view(UA_BT_BYTESTRING, &bs);
    (void)cmp(a, num_i(5), &ok);
    ck_assert(!ok);
    /* NodeIds and Guids: equal or not, and no order. */
    a = view(UA_BT_NODEID, &n1);
    b = view(UA_BT_NODEID, &n2);
    ck_assert_int_eq(cmp(a, b, &ok), 0);
    ck_assert(ok);
    ck_assert(!ua_scalar_ordered(&a, &b));
    b = view(UA_BT_NODEID, &s1);
    ck_assert_int_ne(cmp(a, b, &ok), 0);
    a = view(UA_BT_GUID, &g1);
    b = view(UA_BT_GUID, &g1);
    ck_assert_int_eq(cmp(a, b, &ok), 0);
    b = view(UA_BT_GUID, &g2);
    ck_assert_int_eq(cmp(a, b, &ok), 1);
    ck_assert(!ua_scalar_ordered(&a, &b));
    a = num_i(1);
    b = str("x");
    ck_assert(ua_scalar_ordered(&a, &b));
    /* NULL and kinds without a conversion. */
    memset(&null, 0, sizeof(null));
    (void)cmp(null, num_i(1), &ok);
    ck_assert(!ok);
    a = view(UA_BT_GUID, &g1);
    (void)cmp(a, str("x"), &ok);
    ck_assert(!ok);
}
END_TEST

/* ------------------------------------------------------------ cast */

START_TEST(test_cast)
{
    struct ua_scalar a, r;
    double           x;

    a = num_d(2.5);
    ua_scalar_cast(&a, UA_BT_INT32, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_SIGNED);
    ck_assert_uint_eq(r.bt, UA_BT_INT32);
    ck_assert_int_eq(r.u.i, 2);             /* to nearest, ties to even */
    a = num_d(-3);
    ua_scalar_cast(&a, UA_BT_BYTE, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);  /* -3 is no Byte */
    a = num_i(-3);
    ua_scalar_cast(&a, UA_BT_BYTE, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    ua_scalar_cast(&a, UA_BT_SBYTE, &r);
    ck_assert_int_eq(r.u.i, -3);
    a = num_i(128);
    ua_scalar_cast(&a, UA_BT_SBYTE, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    ua_scalar_cast(&a, UA_BT_BYTE, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_UNSIGNED);
    ck_assert_uint_eq(r.u.u, 128);
    /* Integers stay exact through the widest types. */
    a = num_u(UINT64_MAX);
    ua_scalar_cast(&a, UA_BT_UINT64, &r);
    ck_assert_uint_eq(r.u.u, UINT64_MAX);
    a = num_i(INT64_MIN);
    ua_scalar_cast(&a, UA_BT_INT64, &r);
    ck_assert_int_eq(r.u.i, INT64_MIN);
    /* Strings read as numbers; Boolean from any number. */
    a = str("42");
    ua_scalar_cast(&a, UA_BT_UINT16, &r);
    ck_assert_uint_eq(r.u.u, 42);
    ua_scalar_cast(&a, UA_BT_BOOLEAN, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_BOOLEAN);
    ck_assert(r.u.b);
    a = num_d(0);
    ua_scalar_cast(&a, UA_BT_BOOLEAN, &r);
    ck_assert(!r.u.b);
    a = num_d(NAN);
    ua_scalar_cast(&a, UA_BT_BOOLEAN, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    /* Float rounds to float precision; String only from a String. */
    a = num_d(0.1);
    ua_scalar_cast(&a, UA_BT_FLOAT, &r);
    ck_assert(r.u.d == (double)0.1f);
    ua_scalar_cast(&a, UA_BT_STRING, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    a = str("x");
    ua_scalar_cast(&a, UA_BT_STRING, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_STRING);
    ck_assert_uint_eq(r.n, 1);
    /* Casts we do not make, and NULL in: NULL out. */
    a = num_i(1);
    ua_scalar_cast(&a, UA_BT_DATETIME, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    ua_scalar_cast(&a, 0, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    ua_scalar_cast(&a, 99, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    memset(&a, 0, sizeof(a));
    ua_scalar_cast(&a, UA_BT_INT32, &r);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    /* ua_scalar_bool and ua_scalar_number. */
    ua_scalar_bool(&r, -1);
    ck_assert_uint_eq(r.kind, UA_BTC_NONE);
    ua_scalar_bool(&r, 7);
    ck_assert(r.u.b);
    ck_assert(ua_scalar_number(&r, &x));
    ck_assert(x == 1);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Scalars");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("View");
    tcase_add_test(tc, test_view_numbers);
    tcase_add_test(tc, test_view_strings);
    tcase_add_test(tc, test_view_nodeids);
    tcase_add_test(tc, test_view_refusals);
    suite_add_tcase(s, tc);
    tc = tcase_create("Compare");
    tcase_add_test(tc, test_compare_numbers);
    tcase_add_test(tc, test_compare_others);
    suite_add_tcase(s, tc);
    tc = tcase_create("Cast");
    tcase_add_test(tc, test_cast);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
