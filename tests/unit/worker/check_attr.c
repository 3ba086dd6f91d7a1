/*
 * tests/unit/worker/check_attr.c: worker/attr.c, the attribute reader, on
 * the real address space (tests/unit/worker/fixture.h) through its public
 * API (worker/attr.h): every attribute of every node class we keep, the
 * operation-level status codes, AccessLevel and UserAccessLevel,
 * DataEncoding, a slot stuck mid-write, a Bad value status, timestamps,
 * and IndexRange (docs/security.md case 69).  Each read goes through
 * wk_attr_read; a plain Value read also through wk_attr_read_value,
 * which must give the same bytes.  A DataValue read is encoded and
 * decoded again, as the Read service's response would be (values the
 * reader leaves encoded, UA_VARIANT_RAW, come back decoded).  The Read
 * service around it (service results, the operation limit, one bad
 * operation among good ones) is tested in check_svc_read.c.
 */
#include "fixture.h"

#include <stdatomic.h>

#include "proto/attrs_gen.h"
#include "worker/attr.h"
#include "worker/node.h"
#include "worker/session.h"

#define CH (&fx.ch[0])

static struct ua_nodeid   tok;
static struct wk_session *sess;

static const struct ua_limits at_limits = {
    .max_string_len = INT32_MAX,
    .max_bytestring_len = INT32_MAX,
    .max_array_len = INT32_MAX,
    .max_depth = UA_NESTING_MAX,
    .max_message_size = SIZE_MAX,
};

static void
setup(void)
{
    fx_setup();
    tok = fx_session(CH);
    sess = wk_session_find_by_token(&fx.w, &tok);
    ck_assert_ptr_nonnull(sess);
}

static void
teardown(void)
{
    fx_teardown();
}

/* dv encoded into the response arena; its length in *len. */
static uint8_t *
at_encode(const struct ua_datavalue *dv, size_t *len)
{
    size_t   need = ua_encoded_size(dv, &ua_types[UA_TYPE_DATAVALUE]);
    uint8_t *b = ua_arena_alloc(&fx.rarena, need > 0 ? need : 1);

    ck_assert_uint_gt(need, 0);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(ua_encode(dv, &ua_types[UA_TYPE_DATAVALUE], b, need,
                                len), UA_GOOD);
    return b;
}

/*
 * Attribute aid of node n with IndexRange range (NULL: none) and
 * DataEncoding enc (NULL: none) as the Read service answers it: a failed
 * operation is its status alone; else the DataValue, encoded and decoded.
 */
static struct ua_datavalue
read_enc(struct ua_nodeid n, uint32_t aid, const char *range,
         const struct ua_qualifiedname *enc, int32_t ttr)
{
    struct wk_attr_ctx      ac = { &fx.w, sess, &fx.arena };
    struct ua_string        r = ua_string_from(range);
    struct ua_qualifiedname none;
    struct ua_datavalue     dv, out;
    uint32_t                i = fx_index(&n);
    uint8_t                *b;
    size_t                  len, used;
    ua_status               s;

    memset(&none, 0, sizeof(none));
    none.name.len = -1;
    ua_arena_reset(&fx.arena);
    memset(&dv, 0, sizeof(dv));
    dv.value.ndims = -1;
    s = wk_attr_read(&ac, i, aid, &r, enc != NULL ? enc : &none, ttr, &dv);
    memset(&out, 0, sizeof(out));
    out.value.ndims = -1;
    if (s != UA_GOOD) {
        out.mask = UA_DV_STATUS;
        out.status = s;
        dv = out;
    }
    b = at_encode(&dv, &len);
    /* The usual operation: the shortcut must read the same. */
    if (aid == UA_ATTR_VALUE && range == NULL && enc == NULL) {
        struct ua_datavalue dv2;
        size_t              len2;
        uint8_t            *b2;

        memset(&dv2, 0, sizeof(dv2));
        dv2.value.ndims = -1;
        s = wk_attr_read_value(&ac, i, ttr, &dv2);
        if (s != UA_GOOD) {
            memset(&dv2, 0, sizeof(dv2));
            dv2.value.ndims = -1;
            dv2.mask = UA_DV_STATUS;
            dv2.status = s;
        }
        b2 = at_encode(&dv2, &len2);
        ck_assert_uint_eq(len2, len);
        ck_assert_mem_eq(b2, b, len);
    }
    ck_assert_uint_eq(ua_decode(b, len, &used, &out,
                                &ua_types[UA_TYPE_DATAVALUE], &fx.rarena,
                                &at_limits), UA_GOOD);
    ck_assert_uint_eq(used, len);
    return out;
}

static struct ua_datavalue
read1(struct ua_nodeid n, uint32_t aid, const char *range, int32_t ttr)
{
    return read_enc(n, aid, range, NULL, ttr);
}

static ua_status
read1_status(struct ua_nodeid n, uint32_t attr, const char *range)
{
    struct ua_datavalue dv = read1(n, attr, range,
                                   UA_TIMESTAMPSTORETURN_NEITHER);

    if (UA_STATUS_IS_BAD(dv.status)) {
        /* A failed operation carries its status only. */
        ck_assert_uint_eq(dv.mask, UA_DV_STATUS);
    }
    return (dv.mask & UA_DV_STATUS) ? dv.status : UA_GOOD;
}

/* The scalar of built-in type bt in a Good DataValue. */
static const void *
scalar(const struct ua_datavalue *dv, uint8_t bt)
{
    ck_assert_msg(!(dv->mask & UA_DV_STATUS) || dv->status == UA_GOOD,
                  "status 0x%08x", dv->status);
    ck_assert(dv->mask & UA_DV_VALUE);
    ck_assert_uint_eq(dv->value.type, bt);
    ck_assert(!dv->value.is_array);
    return dv->value.data;
}

/* The attribute as a fresh DataValue kept in a static, for readability. */
static struct ua_datavalue g_dv;

static const void *
attr(struct ua_nodeid n, uint32_t aid, uint8_t bt)
{
    g_dv = read1(n, aid, NULL, UA_TIMESTAMPSTORETURN_NEITHER);
    return scalar(&g_dv, bt);
}

static bool
attr_bool(struct ua_nodeid n, uint32_t aid)
{
    return *(const bool *)attr(n, aid, UA_BT_BOOLEAN);
}

static const struct ua_localizedtext *
attr_lt(struct ua_nodeid n, uint32_t aid)
{
    return attr(n, aid, UA_BT_LOCALIZEDTEXT);
}

/* ------------------------------------------------------------ classes */

START_TEST(test_variable_all_attributes)
{
    struct ua_nodeid               n = fx_ns1("Demo.Static.Scalar.Int32");
    const struct ua_nodeid        *id;
    const struct ua_qualifiedname *qn;
    struct ua_datavalue            dv;

    id = attr(n, UA_ATTR_NODEID, UA_BT_NODEID);
    ck_assert(ua_nodeid_equal(id, &n));
    ck_assert_int_eq(*(const int32_t *)attr(n, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 2);
    qn = attr(n, UA_ATTR_BROWSENAME, UA_BT_QUALIFIEDNAME);
    ck_assert_uint_eq(qn->ns, 1);
    ck_assert(ua_string_eq(&qn->name, "Int32"));
    ck_assert(ua_string_eq(&attr_lt(n, UA_ATTR_DISPLAYNAME)->text, "Int32"));
    ck_assert_uint_eq(attr_lt(n, UA_ATTR_DESCRIPTION)->mask, 0);
    ck_assert_uint_eq(*(const uint32_t *)attr(n, UA_ATTR_WRITEMASK,
                                              UA_BT_UINT32), 0);
    ck_assert_uint_eq(*(const uint32_t *)attr(n, UA_ATTR_USERWRITEMASK,
                                              UA_BT_UINT32), 0);
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_int_eq(*(const int32_t *)scalar(&dv, UA_BT_INT32), -1);
    id = attr(n, UA_ATTR_DATATYPE, UA_BT_NODEID);
    ck_assert(ua_nodeid_equal(id, &(struct ua_nodeid){ .idtype = 0,
                                                        .id.num = 6 }));
    ck_assert_int_eq(*(const int32_t *)attr(n, UA_ATTR_VALUERANK,
                                            UA_BT_INT32), -1);
    dv = read1(n, UA_ATTR_ARRAYDIMENSIONS, NULL,
               UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert(!(dv.mask & UA_DV_STATUS));
    ck_assert_uint_eq(dv.value.type, UA_BT_NULL);       /* scalar: none */
    ck_assert_uint_eq(*(const uint8_t *)attr(n, UA_ATTR_ACCESSLEVEL,
                                             UA_BT_BYTE), 3);
    ck_assert_uint_eq(*(const uint8_t *)attr(n, UA_ATTR_USERACCESSLEVEL,
                                             UA_BT_BYTE), 3);
    ck_assert(*(const double *)attr(n, UA_ATTR_MINIMUMSAMPLINGINTERVAL,
                                    UA_BT_DOUBLE) == 0.0);
    ck_assert(!attr_bool(n, UA_ATTR_HISTORIZING));
    ck_assert_uint_eq(*(const uint32_t *)attr(n, UA_ATTR_ACCESSLEVELEX,
                                              UA_BT_UINT32), 3);
    /* Attributes a Variable does not have. */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_ISABSTRACT, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_EVENTNOTIFIER, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_EXECUTABLE, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    /* Optional ones our store does not keep. */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_ROLEPERMISSIONS, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_USERROLEPERMISSIONS, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_ACCESSRESTRICTIONS, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

START_TEST(test_variable_ns0)
{
    struct ua_nodeid    n = fx_ns0(UA_NS0ID_SERVER_NAMESPACEARRAY);
    struct ua_datavalue dv;
    const struct ua_string *s;

    /* NamespaceArray: live String[2]; rank 1, ArrayDimensions [0]. */
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.value.type, UA_BT_STRING);
    ck_assert(dv.value.is_array);
    ck_assert_int_eq(dv.value.n, 2);
    s = dv.value.data;
    ck_assert(ua_string_eq(&s[0], "http://opcfoundation.org/UA/"));
    ck_assert(ua_string_eq(&s[1], fx.w.conf->application_uri));
    ck_assert_int_eq(*(const int32_t *)attr(n, UA_ATTR_VALUERANK,
                                            UA_BT_INT32), 1);
    dv = read1(n, UA_ATTR_ARRAYDIMENSIONS, NULL,
               UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.value.type, UA_BT_UINT32);
    ck_assert(dv.value.is_array);
    ck_assert_int_eq(dv.value.n, 1);
    ck_assert_uint_eq(((const uint32_t *)dv.value.data)[0], 0);
    ck_assert_uint_eq(*(const uint8_t *)attr(n, UA_ATTR_ACCESSLEVEL,
                                             UA_BT_BYTE), 1);
    ck_assert(*(const double *)attr(n, UA_ATTR_MINIMUMSAMPLINGINTERVAL,
                                    UA_BT_DOUBLE) == 1000.0);
    /* v0 and v1 of the benchmark set. */
    dv = read1(fx_ns1("v0"), UA_ATTR_VALUE, NULL,
               UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_int_eq(*(const int32_t *)scalar(&dv, UA_BT_INT32), 0);
    dv = read1(fx_ns1("v1"), UA_ATTR_VALUE, NULL,
               UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert(*(const double *)scalar(&dv, UA_BT_DOUBLE) == 1.5);
    /* A structure value: ServerStatus is an ExtensionObject. */
    dv = read1(fx_ns0(UA_NS0ID_SERVER_SERVERSTATUS), UA_ATTR_VALUE, NULL,
               UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(((const struct ua_extobj *)scalar(
                          &dv, UA_BT_EXTENSIONOBJECT))->encoding,
                      UA_EO_DECODED);
}
END_TEST

START_TEST(test_object_all_attributes)
{
    struct ua_nodeid               n = fx_ns0(UA_NS0ID_SERVER);
    const struct ua_qualifiedname *qn;

    ck_assert_int_eq(*(const int32_t *)attr(n, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 1);
    qn = attr(n, UA_ATTR_BROWSENAME, UA_BT_QUALIFIEDNAME);
    ck_assert_uint_eq(qn->ns, 0);
    ck_assert(ua_string_eq(&qn->name, "Server"));
    ck_assert(ua_string_eq(&attr_lt(n, UA_ATTR_DISPLAYNAME)->text,
                           "Server"));
    /* SubscribeToEvents, and HistoryRead: history keeps events by
     * default (history.events, broker/addrspace.c). */
    ck_assert_uint_eq(*(const uint8_t *)attr(n, UA_ATTR_EVENTNOTIFIER,
                                             UA_BT_BYTE), 5);
    ck_assert_uint_eq(*(const uint32_t *)attr(n, UA_ATTR_WRITEMASK,
                                              UA_BT_UINT32), 0);
    for (uint32_t a = UA_ATTR_ISABSTRACT; a <= UA_ATTR_ACCESSLEVELEX; a++) {
        if (a == UA_ATTR_EVENTNOTIFIER)
            continue;
        ck_assert_msg(read1_status(n, a, NULL)
                          == UA_BAD_ATTRIBUTE_ID_INVALID,
                      "attribute %u of an Object", a);
    }
}
END_TEST

START_TEST(test_reference_type_attributes)
{
    struct ua_nodeid hs = fx_ns0(UA_NS0ID_HASSUBTYPE);
    struct ua_nodeid refs = fx_ns0(UA_NS0ID_REFERENCES);

    ck_assert_int_eq(*(const int32_t *)attr(hs, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 32);
    ck_assert(!attr_bool(hs, UA_ATTR_ISABSTRACT));
    ck_assert(!attr_bool(hs, UA_ATTR_SYMMETRIC));
    ck_assert(ua_string_eq(&attr_lt(hs, UA_ATTR_INVERSENAME)->text,
                           "SubtypeOf"));
    ck_assert(attr_bool(refs, UA_ATTR_ISABSTRACT));
    ck_assert(attr_bool(refs, UA_ATTR_SYMMETRIC));
    ck_assert_uint_eq(attr_lt(refs, UA_ATTR_INVERSENAME)->mask, 0);
    ck_assert_uint_eq(read1_status(hs, UA_ATTR_VALUE, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(hs, UA_ATTR_CONTAINSNOLOOPS, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

START_TEST(test_data_type_attributes)
{
    struct ua_nodeid n = fx_ns0(UA_NS0ID_INT32);

    ck_assert_int_eq(*(const int32_t *)attr(n, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 64);
    ck_assert(!attr_bool(n, UA_ATTR_ISABSTRACT));
    ck_assert(attr_bool(fx_ns0(UA_NS0ID_NUMBER), UA_ATTR_ISABSTRACT));
    ck_assert(ua_string_eq(&attr_lt(n, UA_ATTR_DISPLAYNAME)->text,
                           "Int32"));
    /* Not stored: acceptable per the file comment of svc_read.c. */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_DATATYPEDEFINITION, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_SYMMETRIC, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

START_TEST(test_method_attributes)
{
    struct ua_nodeid n = fx_ns0(UA_NS0ID_SERVER_GETMONITOREDITEMS);

    ck_assert_int_eq(*(const int32_t *)attr(n, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 4);
    ck_assert(attr_bool(n, UA_ATTR_EXECUTABLE));
    ck_assert(attr_bool(n, UA_ATTR_USEREXECUTABLE));
    ck_assert(ua_string_eq(
        &((const struct ua_qualifiedname *)attr(n, UA_ATTR_BROWSENAME,
                                                UA_BT_QUALIFIEDNAME))->name,
        "GetMonitoredItems"));
    ck_assert_uint_eq(read1_status(n, UA_ATTR_VALUE, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

START_TEST(test_type_attributes)
{
    struct ua_nodeid    ot = fx_ns0(UA_NS0ID_SERVERTYPE);
    struct ua_nodeid    vt = fx_ns0(UA_NS0ID_BASEDATAVARIABLETYPE);
    struct ua_nodeid    bdt = fx_ns0(UA_NS0ID_BASEDATATYPE);
    struct ua_datavalue dv;

    ck_assert_int_eq(*(const int32_t *)attr(ot, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 8);
    ck_assert(!attr_bool(ot, UA_ATTR_ISABSTRACT));
    ck_assert_uint_eq(read1_status(ot, UA_ATTR_EVENTNOTIFIER, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_int_eq(*(const int32_t *)attr(vt, UA_ATTR_NODECLASS,
                                            UA_BT_INT32), 16);
    ck_assert(!attr_bool(vt, UA_ATTR_ISABSTRACT));
    ck_assert(ua_nodeid_equal(attr(vt, UA_ATTR_DATATYPE, UA_BT_NODEID),
                              &bdt));
    ck_assert_int_eq(*(const int32_t *)attr(vt, UA_ATTR_VALUERANK,
                                            UA_BT_INT32), -2);
    /* A VariableType's Value: no AccessLevel to check; null here. */
    dv = read1(vt, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert(!(dv.mask & UA_DV_STATUS));
    ck_assert_uint_eq(dv.value.type, UA_BT_NULL);
    ck_assert_uint_eq(read1_status(vt, UA_ATTR_ACCESSLEVEL, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

/* ------------------------------------------------------------ status */

START_TEST(test_operation_errors)
{
    struct ua_nodeid n = fx_ns1("Demo.Static.Scalar.Int32");
    struct ua_nodeid g = { .ns = 1, .idtype = UA_IDTYPE_GUID };

    ck_assert_uint_eq(read1_status(fx_ns1("nope"), UA_ATTR_VALUE, NULL),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(read1_status(fx_ns0(999999), UA_ATTR_NODEID, NULL),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(read1_status(g, UA_ATTR_NODEID, NULL),
                      UA_BAD_NODE_ID_UNKNOWN);
    /* docs/security.md case 62: AttributeId 0 or 99. */
    ck_assert_uint_eq(read1_status(n, 0, NULL), UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, 28, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, 99, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, 0xFFFFFFFF, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

START_TEST(test_access_level)
{
    struct ua_nodeid n = fx_ns1("v4");
    uint32_t         i = fx_index(&n);
    struct shm_node *node = &fx.w.ns.nodes[i];

    ck_assert_uint_ne(i, SHM_NONE);
    node->access_level_ex = 0x02;           /* CurrentWrite only */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_VALUE, NULL),
                      UA_BAD_NOT_READABLE);
    /* Other attributes stay readable. */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_DISPLAYNAME, NULL), UA_GOOD);
    node->access_level_ex = 0x03;
    node->user_access_level = 0x02;
    ck_assert_uint_eq(read1_status(n, UA_ATTR_VALUE, NULL),
                      UA_BAD_USER_ACCESS_DENIED);
    ck_assert_uint_eq(*(const uint8_t *)attr(n, UA_ATTR_USERACCESSLEVEL,
                                             UA_BT_BYTE), 2);
}
END_TEST

START_TEST(test_data_encoding)
{
    struct ua_qualifiedname enc;
    struct ua_datavalue     dv;

    memset(&enc, 0, sizeof(enc));
    enc.name = ua_string_from("Default Binary");
    dv = read_enc(fx_ns1("v0"), UA_ATTR_VALUE, NULL, &enc,
                  UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert(!(dv.mask & UA_DV_STATUS));
    ck_assert_int_eq(*(const int32_t *)dv.value.data, 0);
    enc.name = ua_string_from("Default XML");
    dv = read_enc(fx_ns1("v0"), UA_ATTR_VALUE, NULL, &enc,
                  UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.status, UA_BAD_DATA_ENCODING_UNSUPPORTED);
    enc.ns = 1;
    enc.name = ua_string_from("Default Binary");
    dv = read_enc(fx_ns1("v0"), UA_ATTR_VALUE, NULL, &enc,
                  UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.status, UA_BAD_DATA_ENCODING_UNSUPPORTED);
    enc.ns = 0;
    dv = read_enc(fx_ns1("v0"), UA_ATTR_DISPLAYNAME, NULL, &enc,
                  UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.status, UA_BAD_DATA_ENCODING_INVALID);
    enc.name = ua_string_from("");          /* empty: null */
    dv = read_enc(fx_ns1("v0"), UA_ATTR_VALUE, NULL, &enc,
                  UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert(!(dv.mask & UA_DV_STATUS));
}
END_TEST

START_TEST(test_slot_stuck_mid_write)
{
    struct ua_nodeid       n = fx_ns1("v6");
    uint32_t               slot = fx.w.ns.nodes[fx_index(&n)].u.var.slot;
    struct shm_value_slot *s = &fx.w.vals.slots[slot];
    uint32_t               seq = atomic_load(&s->seq);

    atomic_store(&s->seq, seq + 1);         /* a writer died mid-write */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_VALUE, NULL),
                      UA_BAD_NO_COMMUNICATION);
    /* Its other attributes, and other values, are fine. */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_BROWSENAME, NULL), UA_GOOD);
    ck_assert_uint_eq(read1_status(fx_ns1("v8"), UA_ATTR_VALUE, NULL),
                      UA_GOOD);
    atomic_store(&s->seq, seq + 2);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_VALUE, NULL), UA_GOOD);
}
END_TEST

START_TEST(test_bad_value_status)
{
    struct ua_nodeid    n = fx_ns1("v10");
    uint32_t            slot = fx.w.ns.nodes[fx_index(&n)].u.var.slot;
    struct shm_value    m = { .status = UA_BAD_WAITING_FOR_INITIAL_DATA,
                              .flags = SHM_VF_SOURCE_TS,
                              .source_ts = FX_NOW_DT - 5 };
    static const uint8_t v[] = { 0x06, 1, 0, 0, 0 };   /* Int32 1 */
    struct ua_datavalue dv;

    ck_assert_int_eq(shm_value_write(&fx.w.vals, slot, v, sizeof(v), &m),
                     0);
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_BOTH);
    /* Part 4 §7.11.1: a Bad status and no value; timestamps stay. */
    ck_assert_uint_eq(dv.status, UA_BAD_WAITING_FOR_INITIAL_DATA);
    ck_assert(!(dv.mask & UA_DV_VALUE));
    ck_assert(dv.mask & UA_DV_SOURCE_TS);
    ck_assert(dv.source_ts == FX_NOW_DT - 5);
    /* No server timestamp in the slot: the time of the request. */
    ck_assert(dv.mask & UA_DV_SERVER_TS);
    ck_assert(dv.server_ts == fx.w.now_dt);
    /* With an IndexRange: still the slot's status, not a range error. */
    dv = read1(n, UA_ATTR_VALUE, "0", UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.status, UA_BAD_WAITING_FOR_INITIAL_DATA);
    ck_assert(!(dv.mask & UA_DV_VALUE));
    m.status = UA_UNCERTAIN;
    ck_assert_int_eq(shm_value_write(&fx.w.vals, slot, v, sizeof(v), &m),
                     0);
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.status, UA_UNCERTAIN);
    ck_assert(dv.mask & UA_DV_VALUE);
    ck_assert_int_eq(*(const int32_t *)dv.value.data, 1);
}
END_TEST

/* ------------------------------------------------------------ timestamps */

START_TEST(test_timestamps)
{
    struct ua_nodeid    n = fx_ns1("v0");
    struct ua_datavalue dv;

    fx.w.now_dt = FX_NOW_DT + 777;
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_SOURCE);
    ck_assert_uint_eq(dv.mask & (UA_DV_SOURCE_TS | UA_DV_SERVER_TS),
                      UA_DV_SOURCE_TS);
    ck_assert(dv.source_ts == FX_NOW_DT);
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_SERVER);
    ck_assert_uint_eq(dv.mask & (UA_DV_SOURCE_TS | UA_DV_SERVER_TS),
                      UA_DV_SERVER_TS);
    ck_assert(dv.server_ts == FX_NOW_DT);   /* the slot's */
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_BOTH);
    ck_assert_uint_eq(dv.mask & (UA_DV_SOURCE_TS | UA_DV_SERVER_TS),
                      UA_DV_SOURCE_TS | UA_DV_SERVER_TS);
    dv = read1(n, UA_ATTR_VALUE, NULL, UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert_uint_eq(dv.mask, UA_DV_VALUE);
    /* Other attributes: never a source timestamp; server = now. */
    dv = read1(n, UA_ATTR_BROWSENAME, NULL, UA_TIMESTAMPSTORETURN_BOTH);
    ck_assert_uint_eq(dv.mask, UA_DV_VALUE | UA_DV_SERVER_TS);
    ck_assert(dv.server_ts == FX_NOW_DT + 777);
    dv = read1(n, UA_ATTR_BROWSENAME, NULL, UA_TIMESTAMPSTORETURN_SOURCE);
    ck_assert_uint_eq(dv.mask, UA_DV_VALUE);
}
END_TEST

/* ------------------------------------------------------------ IndexRange */

static struct ua_datavalue
range_read(const char *node, const char *range)
{
    return read1(fx_ns1(node), UA_ATTR_VALUE, range,
                 UA_TIMESTAMPSTORETURN_NEITHER);
}

START_TEST(test_range_arrays)
{
    const char         *arr = "Demo.Static.Array.Int32";
    struct ua_datavalue dv;
    const int32_t      *v;

    dv = range_read(arr, NULL);
    ck_assert_int_eq(dv.value.n, 3);
    dv = range_read(arr, "1");
    ck_assert(dv.value.is_array);
    ck_assert_int_eq(dv.value.n, 1);
    ck_assert_int_eq(((const int32_t *)dv.value.data)[0], -2);
    dv = range_read(arr, "1:2");
    v = dv.value.data;
    ck_assert_int_eq(dv.value.n, 2);
    ck_assert_int_eq(v[0], -2);
    ck_assert_int_eq(v[1], -3);
    /* Upper bound past the end: partial result (docs/security.md case 69). */
    dv = range_read(arr, "0:4294967295");
    ck_assert_int_eq(dv.value.n, 3);
    dv = range_read(arr, "2:99999999999999");
    ck_assert_int_eq(dv.value.n, 1);
    ck_assert_int_eq(((const int32_t *)dv.value.data)[0], -3);
    /* Lower bound past the end: no data. */
    ck_assert_uint_eq(range_read(arr, "3").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read(arr, "3:5").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read(arr, "99999999999999").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read(arr, "4294967295").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    /* Dimensions the value does not have. */
    ck_assert_uint_eq(range_read(arr, "0,0").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_range_syntax)
{
    static const char *bad[] = {
        "5:2", "5:5", "-1", "1:", ":1", "1,,2", "1,", ",1", "a", " 1",
        "1 ", "1:2:3", "0x1", "+1", "1;2", "1:-2", "１",
    };
    const char *arr = "Demo.Static.Array.Int32";

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(range_read(arr, bad[i]).status
                          == UA_BAD_INDEX_RANGE_INVALID,
                      "range \"%s\"", bad[i]);
    /* The syntax is checked before anything else about the value. */
    ck_assert_uint_eq(range_read("Demo.Static.Scalar.Int32", "5:2").status,
                      UA_BAD_INDEX_RANGE_INVALID);
}
END_TEST

START_TEST(test_range_many_dimensions)
{
    char  buf[1024];
    char *p = buf;

    /* docs/security.md case 69: "1,2,3,..." over 100 dimensions. */
    for (int i = 1; i <= 100; i++)
        p += sprintf(p, i == 1 ? "%d" : ",%d", i);
    ck_assert_uint_eq(range_read("Demo.Static.Array.Int32", buf).status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    /* 100 000 dimensions: still linear, still no data. */
    {
        size_t n = 200000;
        char  *big = malloc(n + 1);

        for (size_t i = 0; i < n; i += 2) {
            big[i] = '0';
            big[i + 1] = ',';
        }
        big[n - 1] = '\0';
        ck_assert_uint_eq(range_read("Demo.Static.Array.Int32", big).status,
                          UA_BAD_INDEX_RANGE_NO_DATA);
        free(big);
    }
}
END_TEST

START_TEST(test_range_scalars_and_strings)
{
    struct ua_datavalue     dv;
    const struct ua_string *s;

    /* A scalar that is not a String: no data. */
    ck_assert_uint_eq(range_read("Demo.Static.Scalar.Int32", "0").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read("Demo.Static.Scalar.Double", "0:1").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    /* A String is an array of bytes (Part 4 §7.27): "uabroker". */
    dv = range_read("Demo.Static.Scalar.String", "2:5");
    s = scalar(&dv, UA_BT_STRING);
    ck_assert(ua_string_eq(s, "brok"));
    dv = range_read("Demo.Static.Scalar.String", "6:100");
    ck_assert(ua_string_eq(scalar(&dv, UA_BT_STRING), "er"));
    ck_assert_uint_eq(range_read("Demo.Static.Scalar.String", "8").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read("Demo.Static.Scalar.String", "0,0").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    dv = range_read("Demo.Static.Scalar.ByteString", "0:1");
    s = scalar(&dv, UA_BT_BYTESTRING);
    ck_assert_int_eq(s->len, 2);
    ck_assert_mem_eq(s->data, "ua", 2);
    /* An array of Strings takes one more dimension: substrings. */
    dv = range_read("Demo.Static.Array.String", "0:1,1:2");
    ck_assert(dv.value.is_array);
    ck_assert_int_eq(dv.value.n, 2);
    s = dv.value.data;
    ck_assert(ua_string_eq(&s[0], "ab"));
    ck_assert(ua_string_eq(&s[1], "em"));
    dv = range_read("Demo.Static.Array.String", "1:2");
    ck_assert_int_eq(dv.value.n, 2);
    s = dv.value.data;
    ck_assert(ua_string_eq(&s[0], "demo"));
}
END_TEST

START_TEST(test_range_matrix)
{
    struct ua_nodeid    n = fx_ns1("Demo.Static.Array.Int32");
    uint32_t            slot = fx.w.ns.nodes[fx_index(&n)].u.var.slot;
    int32_t             m[12], dims[2] = { 3, 4 };
    struct ua_variant   v;
    uint8_t             buf[256];
    size_t              len;
    struct ua_datavalue dv;
    const int32_t      *r;

    for (int i = 0; i < 12; i++)
        m[i] = i;                   /* m[row][col] = 4 * row + col */
    ua_variant_set_array(&v, m, 12, UA_BT_INT32);
    v.ndims = 2;
    v.dims = dims;
    ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], buf,
                                sizeof(buf), &len), UA_GOOD);
    ck_assert_int_eq(fx_write_raw(slot, buf, (uint32_t)len, FX_NOW_DT), 0);
    /* The whole matrix goes out RAW, dimensions included. */
    dv = range_read("Demo.Static.Array.Int32", NULL);
    ck_assert_int_eq(dv.value.ndims, 2);
    ck_assert_int_eq(dv.value.dims[1], 4);
    /* Rows 1..2, columns 0..1. */
    dv = range_read("Demo.Static.Array.Int32", "1:2,0:1");
    ck_assert_int_eq(dv.value.n, 4);
    ck_assert_int_eq(dv.value.ndims, 2);
    ck_assert_int_eq(dv.value.dims[0], 2);
    ck_assert_int_eq(dv.value.dims[1], 2);
    r = dv.value.data;
    ck_assert_int_eq(r[0], 4);
    ck_assert_int_eq(r[1], 5);
    ck_assert_int_eq(r[2], 8);
    ck_assert_int_eq(r[3], 9);
    /* One element; a cut upper bound; a bad lower bound. */
    dv = range_read("Demo.Static.Array.Int32", "2,3");
    ck_assert_int_eq(dv.value.n, 1);
    ck_assert_int_eq(((const int32_t *)dv.value.data)[0], 11);
    dv = range_read("Demo.Static.Array.Int32", "0:9,3:9");
    ck_assert_int_eq(dv.value.n, 3);
    ck_assert_int_eq(((const int32_t *)dv.value.data)[2], 11);
    ck_assert_uint_eq(range_read("Demo.Static.Array.Int32", "0,4").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read("Demo.Static.Array.Int32", "1").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(range_read("Demo.Static.Array.Int32", "1,1,1").status,
                      UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

START_TEST(test_range_other_attributes)
{
    struct ua_nodeid    n = fx_ns0(UA_NS0ID_SERVER_NAMESPACEARRAY);
    struct ua_datavalue dv;

    /* ArrayDimensions is an array attribute: ranges apply. */
    dv = read1(n, UA_ATTR_ARRAYDIMENSIONS, "0",
               UA_TIMESTAMPSTORETURN_NEITHER);
    ck_assert(!(dv.mask & UA_DV_STATUS));
    ck_assert_int_eq(dv.value.n, 1);
    /* Scalar attributes: no data; syntax still checked first. */
    ck_assert_uint_eq(read1_status(n, UA_ATTR_DISPLAYNAME, "0"),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_NODEID, "0:1"),
                      UA_BAD_INDEX_RANGE_NO_DATA);
    ck_assert_uint_eq(read1_status(n, UA_ATTR_NODEID, "1:0"),
                      UA_BAD_INDEX_RANGE_INVALID);
    /* No ArrayDimensions at all. */
    ck_assert_uint_eq(read1_status(fx_ns1("v0"), UA_ATTR_ARRAYDIMENSIONS,
                                   "0"), UA_BAD_INDEX_RANGE_NO_DATA);
}
END_TEST

static Suite *
attr_suite(void)
{
    Suite *s = suite_create("worker/attr");
    TCase *tc = tcase_create("classes");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_variable_all_attributes);
    tcase_add_test(tc, test_variable_ns0);
    tcase_add_test(tc, test_object_all_attributes);
    tcase_add_test(tc, test_reference_type_attributes);
    tcase_add_test(tc, test_data_type_attributes);
    tcase_add_test(tc, test_method_attributes);
    tcase_add_test(tc, test_type_attributes);
    suite_add_tcase(s, tc);
    tc = tcase_create("status");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_operation_errors);
    tcase_add_test(tc, test_access_level);
    tcase_add_test(tc, test_data_encoding);
    tcase_add_test(tc, test_slot_stuck_mid_write);
    tcase_add_test(tc, test_bad_value_status);
    tcase_add_test(tc, test_timestamps);
    suite_add_tcase(s, tc);
    tc = tcase_create("range");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_range_arrays);
    tcase_add_test(tc, test_range_syntax);
    tcase_add_test(tc, test_range_many_dimensions);
    tcase_add_test(tc, test_range_scalars_and_strings);
    tcase_add_test(tc, test_range_matrix);
    tcase_add_test(tc, test_range_other_attributes);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(attr_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
