/*
 * tests/unit/broker/check_write.c: the Write checks and their application
 * (broker/write.c) on the real address space, without processes: the
 * IndexRange grammar, every DataType rule (built-ins exact, subtypes of
 * built-ins, Number / Integer / UInteger, enumerations, BaseDataType,
 * structures and their subtypes), ValueRank and ArrayDimensions at the
 * limit and past it, AccessLevel / AccessLevelEx, the DataValue fields a
 * client may not write, and bk_write_apply end to end (slot contents,
 * IndexRange splices, timestamps, statuses).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/write.h"
#include "proto/attrs_gen.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define T0 INT64_C(133470720000000000)      /* 2023-12-15 */

static struct bk_config    conf;
static struct bk_addrspace as;
static struct bk_write     wr;
static uint8_t             arena_buf[1 << 20];
static struct ua_arena     arena;
static uint8_t             enc[1 << 16];

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    conf.value_heap_mb = 4;
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(bk_write_init(&wr, &as.ns, &as.val), 0);
    ua_arena_init(&arena, arena_buf, sizeof(arena_buf));
    /* Every Write of a test in one value batch (no fan-out here). */
    bk_value_batch_begin(&as.val);
}

static void
teardown(void)
{
    bk_value_batch_end(&as.val);
    bk_write_clear(&wr);
    bk_addrspace_close(&as);
}

static uint32_t
num(uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&as.ns, &k);
}

static uint32_t
str(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

/* A scalar Variant of bt pointing at p. */
static struct ua_variant
scalar(uint8_t bt, void *p)
{
    struct ua_variant v;

    ua_variant_set_scalar(&v, p, bt);
    return v;
}

static struct ua_variant
array(uint8_t bt, void *p, int32_t n)
{
    struct ua_variant v;

    ua_variant_set_array(&v, p, n, bt);
    return v;
}

/* bk_write_type_ok against DataType ns=0;i=dt. */
static bool
type_ok(uint32_t dt, struct ua_variant v)
{
    uint32_t i = num(dt);

    ck_assert_uint_ne(i, SHM_NONE);
    return bk_write_type_ok(&as.ns, i, &v);
}

/* bk_write_check of a DataValue with value v and mask extra. */
static ua_status
check(uint32_t node, uint32_t attr, struct ua_variant v, uint8_t extra)
{
    struct ua_datavalue dv;

    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE | extra;
    dv.value = v;
    dv.status = UA_UNCERTAIN_INITIAL_VALUE;
    return bk_write_check(&as.ns, node, attr, &dv, false);
}

/* bk_write_apply of a whole DataValue (encoded here). */
static ua_status
apply_dv(uint32_t node, const char *range, const struct ua_datavalue *dv)
{
    struct bk_write_req r;
    size_t              len;
    ua_status           s;

    ck_assert_uint_eq(ua_encode(dv, &ua_types[UA_TYPE_DATAVALUE], enc,
                                sizeof(enc), &len), UA_GOOD);
    memset(&r, 0, sizeof(r));
    r.node = node;
    r.attr = UA_ATTR_VALUE;
    r.range = (const uint8_t *)range;
    r.range_len = range != NULL ? (uint32_t)strlen(range) : 0;
    r.dv = enc;
    r.dv_len = (uint32_t)len;
    s = bk_write_apply(&wr, &r, &arena, T0 + 1000);
    ua_arena_reset(&arena);
    return s;
}

static ua_status
apply(uint32_t node, const char *range, struct ua_variant v)
{
    struct ua_datavalue dv;

    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE;
    dv.value = v;
    return apply_dv(node, range, &dv);
}

/* The value in node's slot, decoded into the arena. */
static struct ua_variant
slot_value(uint32_t node, struct shm_value *m)
{
    static uint8_t    buf[1 << 16];
    struct ua_variant v;

    ck_assert_int_eq(shm_value_read(&as.vals, as.ns.nodes[node].u.var.slot,
                                    m, buf, sizeof(buf)), 0);
    ck_assert_uint_eq(ua_decode(buf, m->len, NULL, &v,
                                &ua_types[UA_TYPE_VARIANT], &arena, NULL),
                      UA_GOOD);
    return v;
}

/* ------------------------------------------------------------ tests */

START_TEST(test_type_builtins)
{
    double   d = 1;
    float    f = 1;
    int32_t  i32 = 1;
    uint32_t u32 = 1;
    int64_t  dt = T0;
    struct ua_string s = ua_string_from("x");

    /* A built-in DataType takes exactly its own type. */
    ck_assert(type_ok(UA_NS0ID_DOUBLE, scalar(UA_BT_DOUBLE, &d)));
    ck_assert(!type_ok(UA_NS0ID_DOUBLE, scalar(UA_BT_FLOAT, &f)));
    ck_assert(!type_ok(UA_NS0ID_DOUBLE, scalar(UA_BT_INT32, &i32)));
    ck_assert(type_ok(UA_NS0ID_INT32, scalar(UA_BT_INT32, &i32)));
    ck_assert(!type_ok(UA_NS0ID_INT32, scalar(UA_BT_UINT32, &u32)));
    ck_assert(type_ok(UA_NS0ID_STRING, scalar(UA_BT_STRING, &s)));
    ck_assert(!type_ok(UA_NS0ID_STRING, scalar(UA_BT_BYTESTRING, &s)));
    ck_assert(type_ok(UA_NS0ID_INT32, array(UA_BT_INT32, &i32, 1)));
    /* Subtypes of built-ins: their base type. */
    ck_assert(type_ok(UA_NS0ID_DURATION, scalar(UA_BT_DOUBLE, &d)));
    ck_assert(!type_ok(UA_NS0ID_DURATION, scalar(UA_BT_FLOAT, &f)));
    ck_assert(type_ok(UA_NS0ID_UTCTIME, scalar(UA_BT_DATETIME, &dt)));
    ck_assert(!type_ok(UA_NS0ID_UTCTIME, scalar(UA_BT_INT64, &dt)));
    ck_assert(type_ok(UA_NS0ID_LOCALEID, scalar(UA_BT_STRING, &s)));
    /* The empty Variant: only BaseDataType. */
    {
        struct ua_variant e;

        memset(&e, 0, sizeof(e));
        e.ndims = -1;
        ck_assert(!type_ok(UA_NS0ID_INT32, e));
        ck_assert(type_ok(UA_NS0ID_BASEDATATYPE, e));
    }
}
END_TEST

START_TEST(test_type_abstract)
{
    int8_t   i8 = 1;
    uint8_t  u8 = 1;
    int16_t  i16 = 1;
    uint16_t u16 = 1;
    int32_t  i32 = 1;
    uint32_t u32 = 1;
    int64_t  i64 = 1;
    uint64_t u64 = 1;
    float    f = 1;
    double   d = 1;
    bool     b = true;
    struct ua_string s = ua_string_from("x");

    /* Number: every numeric built-in, nothing else. */
    ck_assert(type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_SBYTE, &i8)));
    ck_assert(type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_BYTE, &u8)));
    ck_assert(type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_INT64, &i64)));
    ck_assert(type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_FLOAT, &f)));
    ck_assert(type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_DOUBLE, &d)));
    ck_assert(!type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_BOOLEAN, &b)));
    ck_assert(!type_ok(UA_NS0ID_NUMBER, scalar(UA_BT_STRING, &s)));
    /* Integer: the signed ones. */
    ck_assert(type_ok(UA_NS0ID_INTEGER, scalar(UA_BT_SBYTE, &i8)));
    ck_assert(type_ok(UA_NS0ID_INTEGER, scalar(UA_BT_INT16, &i16)));
    ck_assert(type_ok(UA_NS0ID_INTEGER, scalar(UA_BT_INT32, &i32)));
    ck_assert(type_ok(UA_NS0ID_INTEGER, scalar(UA_BT_INT64, &i64)));
    ck_assert(!type_ok(UA_NS0ID_INTEGER, scalar(UA_BT_UINT32, &u32)));
    ck_assert(!type_ok(UA_NS0ID_INTEGER, scalar(UA_BT_DOUBLE, &d)));
    /* UInteger: the unsigned ones. */
    ck_assert(type_ok(UA_NS0ID_UINTEGER, scalar(UA_BT_BYTE, &u8)));
    ck_assert(type_ok(UA_NS0ID_UINTEGER, scalar(UA_BT_UINT16, &u16)));
    ck_assert(type_ok(UA_NS0ID_UINTEGER, scalar(UA_BT_UINT32, &u32)));
    ck_assert(type_ok(UA_NS0ID_UINTEGER, scalar(UA_BT_UINT64, &u64)));
    ck_assert(!type_ok(UA_NS0ID_UINTEGER, scalar(UA_BT_INT32, &i32)));
    /* Enumerations: Int32. */
    ck_assert(type_ok(UA_NS0ID_SERVERSTATE, scalar(UA_BT_INT32, &i32)));
    ck_assert(!type_ok(UA_NS0ID_SERVERSTATE, scalar(UA_BT_UINT32, &u32)));
    ck_assert(type_ok(UA_NS0ID_ENUMERATION, scalar(UA_BT_INT32, &i32)));
    /* BaseDataType: anything. */
    ck_assert(type_ok(UA_NS0ID_BASEDATATYPE, scalar(UA_BT_STRING, &s)));
    ck_assert(type_ok(UA_NS0ID_BASEDATATYPE, scalar(UA_BT_BOOLEAN, &b)));
}
END_TEST

static struct ua_extobj
eo(int type, void *obj)
{
    struct ua_extobj x;

    memset(&x, 0, sizeof(x));
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[type];
    x.obj = obj;
    x.type_id = ua_nodeid_num(0, ua_types[type].binary_id);
    return x;
}

START_TEST(test_type_structures)
{
    struct ua_build_info                bi;
    struct ua_anonymous_identity_token  an;
    struct ua_extobj                    xb, xa, xs[2], none, bytes;
    int32_t                             i32 = 1;

    memset(&bi, 0, sizeof(bi));
    memset(&an, 0, sizeof(an));
    xb = eo(UA_TYPE_BUILDINFO, &bi);
    xa = eo(UA_TYPE_ANONYMOUSIDENTITYTOKEN, &an);
    memset(&none, 0, sizeof(none));
    bytes = none;
    bytes.encoding = UA_EO_BYTES;
    /* The DataType itself. */
    ck_assert(type_ok(UA_NS0ID_BUILDINFO,
                      scalar(UA_BT_EXTENSIONOBJECT, &xb)));
    ck_assert(!type_ok(UA_NS0ID_BUILDINFO,
                       scalar(UA_BT_EXTENSIONOBJECT, &xa)));
    ck_assert(!type_ok(UA_NS0ID_BUILDINFO, scalar(UA_BT_INT32, &i32)));
    ck_assert(!type_ok(UA_NS0ID_BUILDINFO,
                       scalar(UA_BT_EXTENSIONOBJECT, &bytes)));
    /* A subtype: AnonymousIdentityToken is a UserIdentityToken. */
    ck_assert(type_ok(UA_NS0ID_USERIDENTITYTOKEN,
                      scalar(UA_BT_EXTENSIONOBJECT, &xa)));
    ck_assert(!type_ok(UA_NS0ID_USERIDENTITYTOKEN,
                       scalar(UA_BT_EXTENSIONOBJECT, &xb)));
    /* Structure: any structure body, not an empty one. */
    ck_assert(type_ok(UA_NS0ID_STRUCTURE,
                      scalar(UA_BT_EXTENSIONOBJECT, &xb)));
    ck_assert(type_ok(UA_NS0ID_STRUCTURE,
                      scalar(UA_BT_EXTENSIONOBJECT, &bytes)));
    ck_assert(!type_ok(UA_NS0ID_STRUCTURE,
                       scalar(UA_BT_EXTENSIONOBJECT, &none)));
    /* Arrays: every element. */
    xs[0] = xb;
    xs[1] = xb;
    ck_assert(type_ok(UA_NS0ID_BUILDINFO,
                      array(UA_BT_EXTENSIONOBJECT, xs, 2)));
    xs[1] = xa;
    ck_assert(!type_ok(UA_NS0ID_BUILDINFO,
                       array(UA_BT_EXTENSIONOBJECT, xs, 2)));
}
END_TEST

START_TEST(test_value_rank)
{
    uint32_t          n = str("v0");
    struct shm_node  *node = &as.ns.nodes[n];
    int32_t           a[6] = { 0 }, dims2[2] = { 2, 3 }, dims3[3] = { 1, 2,
                                                                     3 };
    struct ua_variant s = scalar(UA_BT_INT32, a), a1 = array(UA_BT_INT32, a,
                                                             3);
    struct ua_variant m2 = array(UA_BT_INT32, a, 6), m3 = array(UA_BT_INT32,
                                                                a, 6);

    m2.ndims = 2;
    m2.dims = dims2;
    m3.ndims = 3;
    m3.dims = dims3;
    node->u.var.value_rank = -1;                /* Scalar */
    ck_assert(bk_write_rank_ok(&as.ns, n, &s));
    ck_assert(!bk_write_rank_ok(&as.ns, n, &a1));
    node->u.var.value_rank = -2;                /* Any */
    ck_assert(bk_write_rank_ok(&as.ns, n, &s));
    ck_assert(bk_write_rank_ok(&as.ns, n, &a1));
    ck_assert(bk_write_rank_ok(&as.ns, n, &m3));
    node->u.var.value_rank = -3;                /* ScalarOrOneDimension */
    ck_assert(bk_write_rank_ok(&as.ns, n, &s));
    ck_assert(bk_write_rank_ok(&as.ns, n, &a1));
    ck_assert(!bk_write_rank_ok(&as.ns, n, &m2));
    node->u.var.value_rank = 0;                 /* OneOrMoreDimensions */
    ck_assert(!bk_write_rank_ok(&as.ns, n, &s));
    ck_assert(bk_write_rank_ok(&as.ns, n, &a1));
    ck_assert(bk_write_rank_ok(&as.ns, n, &m2));
    node->u.var.value_rank = 1;
    ck_assert(!bk_write_rank_ok(&as.ns, n, &s));
    ck_assert(bk_write_rank_ok(&as.ns, n, &a1));
    ck_assert(!bk_write_rank_ok(&as.ns, n, &m2));
    node->u.var.value_rank = 2;
    ck_assert(!bk_write_rank_ok(&as.ns, n, &a1));
    ck_assert(bk_write_rank_ok(&as.ns, n, &m2));
    ck_assert(!bk_write_rank_ok(&as.ns, n, &m3));
    node->u.var.value_rank = -4;                /* no such rank */
    ck_assert(!bk_write_rank_ok(&as.ns, n, &s));
    node->u.var.value_rank = -1;
}
END_TEST

START_TEST(test_array_dimensions)
{
    uint32_t          n = str("Demo.Static.Array.Int32");
    const uint8_t    *d;
    uint8_t          *w;
    uint32_t          len, max = 3;
    int32_t           a[4] = { 1, 2, 3, 4 };
    struct ua_variant v3 = array(UA_BT_INT32, a, 3), v4 = array(UA_BT_INT32,
                                                                a, 4);

    ck_assert_uint_ne(n, SHM_NONE);
    /* {1, 0}: one dimension of any length. */
    ck_assert(bk_write_rank_ok(&as.ns, n, &v4));
    d = shm_nodestore_string(&as.ns, as.ns.nodes[n].u.var.array_dims, &len);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(len, 8);
    /* The same record with a maximum of 3: at the limit, and past it. */
    w = (uint8_t *)(uintptr_t)d;
    memcpy(w + 4, &max, 4);
    ck_assert(bk_write_rank_ok(&as.ns, n, &v3));
    ck_assert(!bk_write_rank_ok(&as.ns, n, &v4));
    ck_assert_uint_eq(apply(n, NULL, v3), UA_GOOD);
    ck_assert_uint_eq(apply(n, NULL, v4), UA_BAD_TYPE_MISMATCH);
    max = 0;
    memcpy(w + 4, &max, 4);
}
END_TEST

START_TEST(test_check_statuses)
{
    int32_t  i32 = 1;
    uint8_t  u8 = 1;
    uint32_t v0 = str("v0");
    struct ua_variant s = scalar(UA_BT_INT32, &i32);

    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, 0), UA_GOOD);
    ck_assert_uint_eq(check(as.ns.nnodes, UA_ATTR_VALUE, s, 0),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(check(v0, 0, s, 0), UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(check(v0, UA_ATTR_MAX + 1, s, 0),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(check(v0, UA_ATTR_SYMMETRIC, s, 0),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(check(v0, UA_ATTR_EXECUTABLE, s, 0),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(check(v0, UA_ATTR_DISPLAYNAME, s, 0),
                      UA_BAD_NOT_WRITABLE);
    ck_assert_uint_eq(check(v0, UA_ATTR_ACCESSLEVEL, s, 0),
                      UA_BAD_NOT_WRITABLE);
    /* Objects have no Value; VariableTypes' Values are not writable. */
    ck_assert_uint_eq(check(num(UA_NS0ID_SERVER), UA_ATTR_VALUE, s, 0),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(check(num(UA_NS0ID_BASEDATAVARIABLETYPE),
                            UA_ATTR_VALUE, s, 0), UA_BAD_NOT_WRITABLE);
    /* AccessLevel without CurrentWrite. */
    ck_assert_uint_eq(check(num(UA_NS0ID_SERVER_SERVICELEVEL), UA_ATTR_VALUE,
                            scalar(UA_BT_BYTE, &u8), 0),
                      UA_BAD_NOT_WRITABLE);
    /* UserAccessLevel without CurrentWrite. */
    as.ns.nodes[v0].user_access_level = BK_AL_CURRENTREAD;
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, 0),
                      UA_BAD_USER_ACCESS_DENIED);
    as.ns.nodes[v0].user_access_level = 3;
    /* The DataValue fields. */
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_SERVER_TS),
                      UA_BAD_WRITE_NOT_SUPPORTED);
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_SERVER_PS),
                      UA_BAD_WRITE_NOT_SUPPORTED);
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_STATUS),
                      UA_BAD_WRITE_NOT_SUPPORTED);
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_SOURCE_TS),
                      UA_BAD_WRITE_NOT_SUPPORTED);
    as.ns.nodes[v0].access_level_ex |= BK_AL_STATUSWRITE;
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_STATUS), UA_GOOD);
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_SOURCE_TS),
                      UA_BAD_WRITE_NOT_SUPPORTED);
    as.ns.nodes[v0].access_level_ex |= BK_AL_TIMESTAMPWRITE;
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s,
                            UA_DV_STATUS | UA_DV_SOURCE_TS | UA_DV_SOURCE_PS),
                      UA_GOOD);
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, s, UA_DV_SERVER_TS),
                      UA_BAD_WRITE_NOT_SUPPORTED);
    /* Type, then rank. */
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, scalar(UA_BT_UINT32, &i32), 0),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(check(v0, UA_ATTR_VALUE, array(UA_BT_INT32, &i32, 1),
                            0), UA_BAD_TYPE_MISMATCH);
}
END_TEST

START_TEST(test_apply_value)
{
    uint32_t            v0 = str("v0"), v1 = str("v1");
    int32_t             i32 = -12345;
    double              d = 6.25;
    struct ua_datavalue dv;
    struct shm_value    m;
    struct ua_variant   v;

    ck_assert_uint_eq(apply(v0, NULL, scalar(UA_BT_INT32, &i32)), UA_GOOD);
    v = slot_value(v0, &m);
    ck_assert_uint_eq(v.type, UA_BT_INT32);
    ck_assert_int_eq(*(int32_t *)v.data, -12345);
    ck_assert_uint_eq(m.status, UA_GOOD);
    ck_assert_int_eq(m.server_ts, T0 + 1000);
    ck_assert_int_eq(m.source_ts, T0 + 1000);       /* none given: now */
    ck_assert_uint_eq(apply(v1, NULL, scalar(UA_BT_DOUBLE, &d)), UA_GOOD);
    v = slot_value(v1, &m);
    ck_assert(*(double *)v.data == 6.25);
    /* Server timestamps of one slot only grow (same now twice). */
    ck_assert_uint_eq(apply(v1, NULL, scalar(UA_BT_DOUBLE, &d)), UA_GOOD);
    v = slot_value(v1, &m);
    ck_assert_int_eq(m.server_ts, T0 + 1001);
    /* Refusals leave the value alone. */
    ck_assert_uint_eq(apply(v0, NULL, scalar(UA_BT_DOUBLE, &d)),
                      UA_BAD_TYPE_MISMATCH);
    v = slot_value(v0, &m);
    ck_assert_int_eq(*(int32_t *)v.data, -12345);
    /* Status and source timestamp, where AccessLevelEx allows. */
    as.ns.nodes[v0].access_level_ex |= BK_AL_STATUSWRITE
                                       | BK_AL_TIMESTAMPWRITE;
    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE | UA_DV_STATUS | UA_DV_SOURCE_TS;
    dv.value = scalar(UA_BT_INT32, &i32);
    dv.status = UA_UNCERTAIN_INITIAL_VALUE;
    dv.source_ts = T0 - 5;
    ck_assert_uint_eq(apply_dv(v0, NULL, &dv), UA_GOOD);
    v = slot_value(v0, &m);
    ck_assert_uint_eq(m.status, UA_UNCERTAIN_INITIAL_VALUE);
    ck_assert_int_eq(m.source_ts, T0 - 5);
    ck_assert_int_eq(m.server_ts, T0 + 1001);   /* after v0's first one */
    /* No value at all: only BaseDataType takes it. */
    memset(&dv, 0, sizeof(dv));
    dv.value.ndims = -1;
    ck_assert_uint_eq(apply_dv(v0, NULL, &dv), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(apply_dv(str("Demo.Static.Scalar.Variant"), NULL, &dv),
                      UA_GOOD);
}
END_TEST

START_TEST(test_apply_decode)
{
    struct bk_write_req r;
    static const uint8_t junk[] = { 0x01, 0x06, 0x01 };  /* Int32, 1 byte */

    memset(&r, 0, sizeof(r));
    r.node = str("v0");
    r.attr = UA_ATTR_VALUE;
    r.dv = junk;
    r.dv_len = sizeof(junk);
    ck_assert_uint_eq(bk_write_apply(&wr, &r, &arena, T0),
                      UA_BAD_DECODING_ERROR);
    r.node = as.ns.nnodes + 7;
    ck_assert_uint_eq(bk_write_apply(&wr, &r, &arena, T0),
                      UA_BAD_NODE_ID_UNKNOWN);
    ua_arena_reset(&arena);
}
END_TEST

START_TEST(test_apply_index_range)
{
    uint32_t          n = str("Demo.Static.Array.Int32");
    uint32_t          sn = str("Demo.Static.Scalar.String");
    int32_t           all[5] = { 10, 11, 12, 13, 14 }, two[2] = { 7, 8 };
    int32_t           three[3] = { 1, 2, 3 };
    double            dd[2] = { 1, 2 };
    struct ua_string  s = ua_string_from("abcdef"), p = ua_string_from("XY");
    struct ua_string  p3 = ua_string_from("XYZ");
    struct shm_value  m;
    struct ua_variant v;

    ck_assert_uint_eq(apply(n, NULL, array(UA_BT_INT32, all, 5)), UA_GOOD);
    ck_assert_uint_eq(apply(n, "1:2", array(UA_BT_INT32, two, 2)), UA_GOOD);
    v = slot_value(n, &m);
    ck_assert_int_eq(v.n, 5);
    ck_assert_int_eq(((int32_t *)v.data)[0], 10);
    ck_assert_int_eq(((int32_t *)v.data)[1], 7);
    ck_assert_int_eq(((int32_t *)v.data)[2], 8);
    ck_assert_int_eq(((int32_t *)v.data)[3], 13);
    /* At the end (the limit), and one past it. */
    ck_assert_uint_eq(apply(n, "3:4", array(UA_BT_INT32, two, 2)), UA_GOOD);
    ck_assert_uint_eq(apply(n, "4:5", array(UA_BT_INT32, two, 2)),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(apply(n, "5", array(UA_BT_INT32, two, 1)),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(apply(n, "4", array(UA_BT_INT32, two, 1)), UA_GOOD);
    /* The piece must be exactly as long as the range, of the same type. */
    ck_assert_uint_eq(apply(n, "0:2", array(UA_BT_INT32, two, 2)),
                      UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    ck_assert_uint_eq(apply(n, "0:1", array(UA_BT_INT32, three, 3)),
                      UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    ck_assert_uint_eq(apply(n, "0:1", array(UA_BT_DOUBLE, dd, 2)),
                      UA_BAD_TYPE_MISMATCH);
    /* Syntax, and dimensions we do not write. */
    ck_assert_uint_eq(apply(n, "1:0", array(UA_BT_INT32, two, 2)),
                      UA_BAD_INDEX_RANGE_INVALID);
    ck_assert_uint_eq(apply(n, "0:1,0", array(UA_BT_INT32, two, 2)),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    /* Strings: a substring of the same length. */
    ck_assert_uint_eq(apply(sn, NULL, scalar(UA_BT_STRING, &s)), UA_GOOD);
    ck_assert_uint_eq(apply(sn, "2:3", scalar(UA_BT_STRING, &p)), UA_GOOD);
    v = slot_value(sn, &m);
    ck_assert(ua_string_eq(v.data, "abXYef"));
    ck_assert_uint_eq(apply(sn, "4:5", scalar(UA_BT_STRING, &p)), UA_GOOD);
    ck_assert_uint_eq(apply(sn, "5:6", scalar(UA_BT_STRING, &p)),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(apply(sn, "0:1", scalar(UA_BT_STRING, &p3)),
                      UA_BAD_INDEX_RANGE_DATA_MISMATCH);
    /* A scalar that is no string has no range. */
    ck_assert_uint_eq(apply(str("v0"), "0", scalar(UA_BT_INT32, all)),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    /* Node errors outrank a bad range. */
    ck_assert_uint_eq(apply(num(UA_NS0ID_SERVER_SERVICELEVEL), "x",
                            scalar(UA_BT_INT32, all)), UA_BAD_NOT_WRITABLE);
}
END_TEST

/*
 * The fast path of bk_write_apply (a Value alone, a fixed-size scalar)
 * answers what bk_write_check answers for the same DataValue, on every
 * node of the address space, for every fixed-size type and a few
 * attributes.
 */
START_TEST(test_fast_path_statuses)
{
    static const uint8_t bts[] = {
        UA_BT_BOOLEAN, UA_BT_SBYTE, UA_BT_BYTE, UA_BT_INT16, UA_BT_UINT16,
        UA_BT_INT32, UA_BT_UINT32, UA_BT_INT64, UA_BT_UINT64, UA_BT_FLOAT,
        UA_BT_DOUBLE, UA_BT_DATETIME, UA_BT_STATUSCODE, UA_BT_GUID };
    static const uint32_t attrs[] = { UA_ATTR_VALUE, UA_ATTR_NODEID,
                                      UA_ATTR_DATATYPE, 99 };
    uint8_t               val[16] = { 1 };
    uint32_t              tried = 0, good = 0;

    for (uint32_t node = 0; node < as.ns.nnodes; node++) {
        for (size_t k = 0; k < sizeof(bts); k++) {
            for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
                struct ua_datavalue dv;
                struct bk_write_req r;
                size_t              len;
                ua_status           want, got;

                memset(&dv, 0, sizeof(dv));
                dv.mask = UA_DV_VALUE;
                ua_variant_set_scalar(&dv.value, val, bts[k]);
                want = bk_write_check(&as.ns, node, attrs[a], &dv, false);
                ck_assert_uint_eq(ua_encode(&dv, &ua_types[UA_TYPE_DATAVALUE],
                                            enc, sizeof(enc), &len),
                                  UA_GOOD);
                ck_assert_uint_eq(len, 2 + ua_types[bts[k] - 1].size
                                           - (bts[k] == UA_BT_BOOLEAN
                                                  ? ua_types[0].size - 1
                                                  : 0));
                memset(&r, 0, sizeof(r));
                r.node = node;
                r.attr = attrs[a];
                r.dv = enc;
                r.dv_len = (uint32_t)len;
                got = bk_write_apply(&wr, &r, &arena, T0 + 2000);
                ua_arena_reset(&arena);
                ck_assert_msg(got == want, "node %u bt %u attr %u: apply "
                              "0x%08X, check 0x%08X", node, bts[k],
                              attrs[a], got, want);
                tried++;
                good += got == UA_GOOD;
            }
        }
    }
    ck_assert_uint_gt(good, 0);
    ck_assert_uint_gt(tried, good);
}
END_TEST

/* bk_write_apply of encoded DataValue bytes at now; the arena kept. */
static ua_status
apply_raw(uint32_t node, const uint8_t *dv, size_t len, int64_t now)
{
    struct bk_write_req r;

    memset(&r, 0, sizeof(r));
    r.node = node;
    r.attr = UA_ATTR_VALUE;
    r.dv = dv;
    r.dv_len = (uint32_t)len;
    return bk_write_apply(&wr, &r, &arena, now);
}

/* Encode a scalar of bt (value bytes val) as a DataValue with mask. */
static size_t
enc_scalar(uint8_t *buf, size_t cap, uint8_t bt, void *val, uint8_t mask)
{
    struct ua_datavalue dv;
    size_t              len;

    memset(&dv, 0, sizeof(dv));
    dv.mask = mask;
    dv.status = UA_GOOD;
    ua_variant_set_scalar(&dv.value, val, bt);
    ck_assert_uint_eq(ua_encode(&dv, &ua_types[UA_TYPE_DATAVALUE], buf, cap,
                                &len), UA_GOOD);
    ck_assert_uint_eq(buf[0], mask);
    return len;
}

/* The fixed-size built-in types of the fast path. */
static const uint8_t fixed_bts[] = {
    UA_BT_BOOLEAN, UA_BT_SBYTE, UA_BT_BYTE, UA_BT_INT16, UA_BT_UINT16,
    UA_BT_INT32, UA_BT_UINT32, UA_BT_INT64, UA_BT_UINT64, UA_BT_FLOAT,
    UA_BT_DOUBLE, UA_BT_DATETIME, UA_BT_STATUSCODE };

#define B(bt) (UINT32_C(1) << (bt))
#define NUMBERS (B(UA_BT_SBYTE) | B(UA_BT_BYTE) | B(UA_BT_INT16) \
                 | B(UA_BT_UINT16) | B(UA_BT_INT32) | B(UA_BT_UINT32) \
                 | B(UA_BT_INT64) | B(UA_BT_UINT64) | B(UA_BT_FLOAT) \
                 | B(UA_BT_DOUBLE))

/*
 * The Write fast path against the general path, on two writable Variables
 * (v0, v1) given every DataType, ValueRank and access of the table in turn
 * (its per-node entry rebuilt each time, as the build does): for every
 * fixed-size type, the same DataValue once as the fast path takes it
 * (the Value alone) and once with a Good StatusCode in it (the general
 * path: decoded and checked).  Same status; on Good the same slot
 * contents (bytes, status, flags, both timestamps = now); the fast one
 * decoded nothing (it was taken), the general one did.  The accepted
 * types are also checked against the type rule of write.h, so a fast
 * path and a general path that agree on a wrong answer fail too.
 */
START_TEST(test_fast_matches_general)
{
    static const struct {
        uint32_t dt;
        uint32_t takes;         /* fixed-size scalars it accepts */
    } dts[] = {
        { UA_NS0ID_BOOLEAN, B(UA_BT_BOOLEAN) },
        { UA_NS0ID_SBYTE, B(UA_BT_SBYTE) },
        { UA_NS0ID_BYTE, B(UA_BT_BYTE) },
        { UA_NS0ID_INT16, B(UA_BT_INT16) },
        { UA_NS0ID_UINT16, B(UA_BT_UINT16) },
        { UA_NS0ID_INT32, B(UA_BT_INT32) },
        { UA_NS0ID_UINT32, B(UA_BT_UINT32) },
        { UA_NS0ID_INT64, B(UA_BT_INT64) },
        { UA_NS0ID_UINT64, B(UA_BT_UINT64) },
        { UA_NS0ID_FLOAT, B(UA_BT_FLOAT) },
        { UA_NS0ID_DOUBLE, B(UA_BT_DOUBLE) },
        { UA_NS0ID_DATETIME, B(UA_BT_DATETIME) },
        { UA_NS0ID_STATUSCODE, B(UA_BT_STATUSCODE) },
        { UA_NS0ID_NUMBER, NUMBERS },
        { UA_NS0ID_INTEGER, B(UA_BT_SBYTE) | B(UA_BT_INT16)
                            | B(UA_BT_INT32) | B(UA_BT_INT64) },
        { UA_NS0ID_UINTEGER, B(UA_BT_BYTE) | B(UA_BT_UINT16)
                             | B(UA_BT_UINT32) | B(UA_BT_UINT64) },
        { UA_NS0ID_BASEDATATYPE, 0xFFFFFFFFu },
        { UA_NS0ID_ENUMERATION, B(UA_BT_INT32) },
        { UA_NS0ID_SERVERSTATE, B(UA_BT_INT32) },   /* an enumeration */
        { UA_NS0ID_DURATION, B(UA_BT_DOUBLE) },     /* Double's subtype */
        { UA_NS0ID_UTCTIME, B(UA_BT_DATETIME) },    /* DateTime's */
        { UA_NS0ID_STRING, 0 },
        { UA_NS0ID_GUID, 0 },
        { UA_NS0ID_STRUCTURE, 0 },
        { UA_NS0ID_BUILDINFO, 0 },
    };
    static const int32_t ranks[] = { -1, -2, -3, 0, 1, 2, -4 };
    static const struct {
        uint8_t   al, ual;
        ua_status refusal;      /* UA_GOOD: writable */
    } accs[] = {
        { 3, 3, UA_GOOD },
        { 2, 2, UA_GOOD },                      /* CurrentWrite alone */
        { 1, 1, UA_BAD_NOT_WRITABLE },
        { 1, 3, UA_BAD_NOT_WRITABLE },
        { 3, 1, UA_BAD_USER_ACCESS_DENIED },
    };
    uint8_t          fast[64], gen[64], b1[64], b2[64];
    uint8_t          val[16];
    int64_t          now = T0 + 10000;
    uint32_t         goods = 0, cases = 0;
    /* Two nodes (an even and an odd index, v0 and v1 are neighbours),
     * so that a slot taken from the wrong entry shows. */
    const char      *names[2] = { "v0", "v1" };

    for (size_t k = 0; k < sizeof(val); k++)
        val[k] = (uint8_t)(0xA1 + 7 * k);
    for (size_t d = 0; d < 2 * sizeof(dts) / sizeof(dts[0]); d++) {
        uint32_t         node = str(names[d & 1]);
        uint32_t         slot = as.ns.nodes[node].u.var.slot;
        struct shm_node *n = &as.ns.nodes[node];

        for (size_t r = 0; r < sizeof(ranks) / sizeof(ranks[0]); r++) {
            for (size_t c = 0; c < sizeof(accs) / sizeof(accs[0]); c++) {
                n->u.var.data_type = num(dts[d / 2].dt);
                n->u.var.value_rank = ranks[r];
                n->access_level_ex = accs[c].al;
                n->user_access_level = accs[c].ual;
                bk_write_clear(&wr);
                ck_assert_int_eq(bk_write_init(&wr, &as.ns, &as.val), 0);
                for (size_t k = 0; k < sizeof(fixed_bts); k++) {
                    uint8_t          bt = fixed_bts[k];
                    size_t           lf, lg, used_f, used_g;
                    ua_status        sf, sg, want;
                    struct shm_value m1, m2;
                    int64_t          t1 = now += 10, t2 = now += 10;

                    val[0] = bt == UA_BT_BOOLEAN ? 1 : 0x5A;
                    lf = enc_scalar(fast, sizeof(fast), bt, val,
                                    UA_DV_VALUE);
                    lg = enc_scalar(gen, sizeof(gen), bt, val,
                                    UA_DV_VALUE | UA_DV_STATUS);
                    ua_arena_reset(&arena);
                    sf = apply_raw(node, fast, lf, t1);
                    used_f = arena.used;
                    ck_assert_int_eq(shm_value_read(&as.vals, slot, &m1, b1,
                                                    sizeof(b1)), 0);
                    ua_arena_reset(&arena);
                    sg = apply_raw(node, gen, lg, t2);
                    used_g = arena.used;
                    ck_assert_int_eq(shm_value_read(&as.vals, slot, &m2, b2,
                                                    sizeof(b2)), 0);
                    ua_arena_reset(&arena);
                    /* What write.h's rules say. */
                    want = accs[c].refusal;
                    if (want == UA_GOOD
                        && (!(dts[d / 2].takes & B(bt)) || ranks[r] >= 0
                            || ranks[r] < -3))
                        want = UA_BAD_TYPE_MISMATCH;
                    ck_assert_msg(sf == want && sg == want,
                                  "dt %u rank %d al %u/%u bt %u: fast "
                                  "0x%08X general 0x%08X want 0x%08X",
                                  dts[d / 2].dt, ranks[r], accs[c].al,
                                  accs[c].ual, bt, sf, sg, want);
                    cases++;
                    if (want != UA_GOOD)
                        continue;
                    goods++;
                    ck_assert_uint_eq(used_f, 0);       /* nothing decoded */
                    ck_assert_uint_gt(used_g, 0);
                    ck_assert_uint_eq(m1.len, lf - 1);
                    ck_assert_mem_eq(b1, fast + 1, lf - 1);
                    ck_assert_uint_eq(m2.len, m1.len);
                    ck_assert_mem_eq(b2, b1, m1.len);
                    ck_assert_uint_eq(m1.status, UA_GOOD);
                    ck_assert_uint_eq(m2.status, UA_GOOD);
                    ck_assert_uint_eq(m1.flags, m2.flags);
                    ck_assert_int_eq(m1.source_ts, t1);
                    ck_assert_int_eq(m1.server_ts, t1);
                    ck_assert_int_eq(m2.source_ts, t2);
                    ck_assert_int_eq(m2.server_ts, t2);
                    ck_assert_uint_eq(m1.source_ps, 0);
                    ck_assert_uint_eq(m1.server_ps, 0);
                    ck_assert_uint_eq(m2.source_ps, 0);
                    ck_assert_uint_eq(m2.server_ps, 0);
                }
            }
        }
    }
    ck_assert_uint_gt(goods, 100);
    ck_assert_uint_gt(cases, 2 * goods);
}
END_TEST

/*
 * The fast path's ServerTimestamp rule is the general path's: a second
 * Write of a slot at the same now gets now + 1 tick, whichever path made
 * the first; and a Boolean that is neither 0 nor 1 is not the fast
 * path's (it gets what the codec says, like any decoded Boolean).
 */
START_TEST(test_fast_server_ts_and_bool)
{
    uint32_t         v0 = str("v0"), slot = as.ns.nodes[v0].u.var.slot;
    uint32_t         bnode = str("Demo.Static.Scalar.Boolean");
    int32_t          i32 = 7;
    uint8_t          fast[32], gen[32], b[32];
    size_t           lf, lg;
    struct shm_value m;
    int64_t          t = T0 + 5000;
    ua_status        s2;

    lf = enc_scalar(fast, sizeof(fast), UA_BT_INT32, &i32, UA_DV_VALUE);
    lg = enc_scalar(gen, sizeof(gen), UA_BT_INT32, &i32,
                    UA_DV_VALUE | UA_DV_STATUS);
    ck_assert_uint_eq(apply_raw(v0, fast, lf, t), UA_GOOD);
    ck_assert_uint_eq(apply_raw(v0, gen, lg, t), UA_GOOD);
    ck_assert_uint_eq(apply_raw(v0, fast, lf, t), UA_GOOD);
    ua_arena_reset(&arena);
    ck_assert_int_eq(shm_value_read(&as.vals, slot, &m, b, sizeof(b)), 0);
    ck_assert_int_eq(m.server_ts, t + 2);
    ck_assert_int_eq(m.source_ts, t);
    /* An earlier now than the slot's: still later than the slot's. */
    ck_assert_uint_eq(apply_raw(v0, fast, lf, t - 100), UA_GOOD);
    ck_assert_int_eq(shm_value_read(&as.vals, slot, &m, b, sizeof(b)), 0);
    ck_assert_int_eq(m.server_ts, t + 3);
    ck_assert_int_eq(m.source_ts, t - 100);
    /* Boolean 2: decoded (not the fast path's), and the same as the
     * general path's answer for it. */
    ck_assert_uint_ne(bnode, SHM_NONE);
    fast[0] = UA_DV_VALUE;
    fast[1] = UA_BT_BOOLEAN;
    fast[2] = 2;
    memcpy(gen, fast, 3);
    gen[0] = UA_DV_VALUE | UA_DV_STATUS;
    memset(gen + 3, 0, 4);                          /* Good */
    ua_arena_reset(&arena);
    s2 = apply_raw(bnode, fast, 3, t);
    ck_assert_uint_gt(arena.used, 0);              /* it was decoded */
    ua_arena_reset(&arena);
    ck_assert_int_eq(shm_value_read(&as.vals, as.ns.nodes[bnode].u.var.slot,
                                    &m, b, sizeof(b)), 0);
    ck_assert_uint_eq(apply_raw(bnode, gen, 7, t), s2);
    ua_arena_reset(&arena);
    ck_assert_int_eq(shm_value_read(&as.vals, as.ns.nodes[bnode].u.var.slot,
                                    &m, gen, sizeof(gen)), 0);
    ck_assert_mem_eq(b, gen, m.len);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Write (broker)");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Checks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fast_path_statuses);
    tcase_add_test(tc, test_fast_matches_general);
    tcase_add_test(tc, test_fast_server_ts_and_bool);
    tcase_add_test(tc, test_type_builtins);
    tcase_add_test(tc, test_type_abstract);
    tcase_add_test(tc, test_type_structures);
    tcase_add_test(tc, test_value_rank);
    tcase_add_test(tc, test_array_dimensions);
    tcase_add_test(tc, test_check_statuses);
    suite_add_tcase(s, tc);
    tc = tcase_create("Apply");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_apply_value);
    tcase_add_test(tc, test_apply_decode);
    tcase_add_test(tc, test_apply_index_range);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
