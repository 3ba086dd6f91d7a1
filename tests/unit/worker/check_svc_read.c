/*
 * tests/unit/worker/check_svc_read.c: worker/svc_read.c through
 * wk_svc_dispatch on the real address space: every attribute of every node
 * class we keep, the service- and operation-level status codes, IndexRange
 * (docs/security.md case 69), dataEncoding, timestamps, the operation limit
 * (docs/security.md case 66), a slot stuck mid-write, and the cost of a Read.
 */
#include "fixture.h"

#include <stdatomic.h>
#include <time.h>

#include "proto/attrs_gen.h"
#include "worker/node.h"
#include "worker/svc_read.h"

#define CH (&fx.ch[0])

static struct ua_nodeid tok;

static void
setup(void)
{
    fx_setup();
    tok = fx_session(CH);
}

static void
teardown(void)
{
    fx_teardown();
}

/* One ReadValueId. */
static struct ua_read_value_id
rvid(struct ua_nodeid n, uint32_t attr, const char *range)
{
    struct ua_read_value_id rv;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = n;
    rv.attribute_id = attr;
    rv.index_range = ua_string_from(range);
    rv.data_encoding.name.len = -1;
    return rv;
}

/* Read n ReadValueIds: the ServiceResult; results in *resp. */
static ua_status
read_n(struct ua_read_value_id *rv, int32_t n, int32_t ttr, double max_age,
       struct ua_read_response *resp)
{
    struct ua_read_request req;

    memset(&req, 0, sizeof(req));
    req.max_age = max_age;
    req.timestamps_to_return = ttr;
    req.n_nodes_to_read = n;
    req.nodes_to_read = rv;
    return fx_call(CH, &tok, UA_TYPE_READREQUEST, &req,
                   UA_TYPE_READRESPONSE, resp);
}

/* Read one attribute; its DataValue (status in dv->status, 0 if Good). */
static struct ua_datavalue
read1(struct ua_nodeid n, uint32_t attr, const char *range, int32_t ttr)
{
    struct ua_read_response resp;
    struct ua_read_value_id rv = rvid(n, attr, range);

    ck_assert_uint_eq(read_n(&rv, 1, ttr, 0, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, 1);
    return resp.results[0];
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
    ck_assert_uint_eq(*(const uint8_t *)attr(n, UA_ATTR_EVENTNOTIFIER,
                                             UA_BT_BYTE), 1);
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

START_TEST(test_service_results)
{
    struct ua_read_response resp;
    struct ua_read_value_id rv = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);

    ck_assert_uint_eq(read_n(&rv, 1, 4, 0, &resp),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, -1, 0, &resp),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, 99, 0, &resp),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, UA_TIMESTAMPSTORETURN_BOTH, -1, &resp),
                      UA_BAD_MAX_AGE_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, UA_TIMESTAMPSTORETURN_BOTH, NAN, &resp),
                      UA_BAD_MAX_AGE_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, UA_TIMESTAMPSTORETURN_BOTH, 1e300,
                             &resp), UA_GOOD);
    ck_assert_uint_eq(read_n(&rv, 0, UA_TIMESTAMPSTORETURN_BOTH, 0, &resp),
                      UA_BAD_NOTHING_TO_DO);
    ck_assert_uint_eq(read_n(NULL, -1, UA_TIMESTAMPSTORETURN_BOTH, 0, &resp),
                      UA_BAD_NOTHING_TO_DO);
}
END_TEST

START_TEST(test_too_many_operations)
{
    uint32_t                 max = fx.w.conf->max_nodes_per_read;
    struct ua_read_value_id *rv = calloc(max + 1, sizeof(*rv));
    struct ua_read_response  resp;

    ck_assert_ptr_nonnull(rv);
    for (uint32_t i = 0; i <= max; i++) {
        char *id = malloc(16);

        snprintf(id, 16, "v%u", i % 100);
        rv[i] = rvid(fx_ns1(id), UA_ATTR_VALUE, NULL);
    }
    /* docs/security.md case 66: N is fine, N+1 is not. */
    ck_assert_uint_eq(read_n(rv, (int32_t)max, UA_TIMESTAMPSTORETURN_BOTH,
                             0, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, (int32_t)max);
    for (uint32_t i = 0; i < max; i++)
        ck_assert(!(resp.results[i].mask & UA_DV_STATUS));
    ck_assert_int_eq(*(const int32_t *)resp.results[98].value.data, 98);
    ck_assert_uint_eq(read_n(rv, (int32_t)max + 1,
                             UA_TIMESTAMPSTORETURN_BOTH, 0, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    for (uint32_t i = 0; i <= max; i++)
        free(rv[i].node_id.id.str.data);
    free(rv);
}
END_TEST

START_TEST(test_operation_errors)
{
    struct ua_nodeid        n = fx_ns1("Demo.Static.Scalar.Int32");
    struct ua_nodeid        g = { .ns = 1, .idtype = UA_IDTYPE_GUID };
    struct ua_read_response resp;
    struct ua_read_value_id rv[4];

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
    /* One bad operation does not spoil the others. */
    rv[0] = rvid(n, UA_ATTR_VALUE, NULL);
    rv[1] = rvid(fx_ns1("nope"), UA_ATTR_VALUE, NULL);
    rv[2] = rvid(n, 99, NULL);
    rv[3] = rvid(fx_ns1("v2"), UA_ATTR_VALUE, NULL);
    ck_assert_uint_eq(read_n(rv, 4, UA_TIMESTAMPSTORETURN_SOURCE, 0, &resp),
                      UA_GOOD);
    ck_assert_int_eq(resp.n_results, 4);
    ck_assert_int_eq(*(const int32_t *)resp.results[0].value.data, -1);
    ck_assert_uint_eq(resp.results[1].status, UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(resp.results[2].status, UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_int_eq(*(const int32_t *)resp.results[3].value.data, 2);
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
    struct ua_read_response resp;
    struct ua_read_value_id rv[5];

    rv[0] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[0].data_encoding.name = ua_string_from("Default Binary");
    rv[1] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[1].data_encoding.name = ua_string_from("Default XML");
    rv[2] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[2].data_encoding.ns = 1;
    rv[2].data_encoding.name = ua_string_from("Default Binary");
    rv[3] = rvid(fx_ns1("v0"), UA_ATTR_DISPLAYNAME, NULL);
    rv[3].data_encoding.name = ua_string_from("Default Binary");
    rv[4] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[4].data_encoding.name = ua_string_from("");      /* empty: null */
    ck_assert_uint_eq(read_n(rv, 5, UA_TIMESTAMPSTORETURN_NEITHER, 0, &resp),
                      UA_GOOD);
    ck_assert(!(resp.results[0].mask & UA_DV_STATUS));
    ck_assert_int_eq(*(const int32_t *)resp.results[0].value.data, 0);
    ck_assert_uint_eq(resp.results[1].status,
                      UA_BAD_DATA_ENCODING_UNSUPPORTED);
    ck_assert_uint_eq(resp.results[2].status,
                      UA_BAD_DATA_ENCODING_UNSUPPORTED);
    ck_assert_uint_eq(resp.results[3].status, UA_BAD_DATA_ENCODING_INVALID);
    ck_assert(!(resp.results[4].mask & UA_DV_STATUS));
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

/* ------------------------------------------------------------ cost */

START_TEST(test_read_cost)
{
    struct ua_read_request   req;
    struct ua_read_response  resp;
    struct ua_read_value_id  rv = rvid(fx_ns1("v42"), UA_ATTR_VALUE, NULL);
    struct wk_svc_ctx        ctx;
    struct timespec          t0, t1;
    uint64_t                 allocs = atomic_load(&fx.w.row->allocations);
    const int                iters = 200000;
    double                   ns;
#if defined(__SANITIZE_ADDRESS__)
    const double             budget = 20000;
#else
    const double             budget = 2000;
#endif

    memset(&req, 0, sizeof(req));
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    memset(&ctx, 0, sizeof(ctx));
    ctx.w = &fx.w;
    ctx.ch = CH;
    ctx.session = wk_session_find_by_token(&fx.w, &tok);
    ctx.arena = &fx.arena;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < iters; i++) {
        ua_arena_reset(&fx.arena);
        memset(&resp, 0, sizeof(resp));
        wk_svc_read(&ctx, &req, &resp);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_uint_eq(resp.response_header.service_result, UA_GOOD);
    ck_assert_uint_eq(resp.results[0].value.type, UA_VARIANT_RAW);
    ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9
          + (double)(t1.tv_nsec - t0.tv_nsec)) / iters;
    printf("check_svc_read: Read of 1 Int32, handler only: %.0f ns\n", ns);
    ck_assert_msg(ns < budget, "%.0f ns per Read", ns);
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);

    /* The whole dispatch (decode, session, handler), for the record. */
    {
        size_t len;

        req.request_header.authentication_token = tok;
        len = fx_encode_request(UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                                &ua_types[UA_TYPE_READREQUEST], &req);
        int bad = 0;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < iters; i++) {
            struct wk_conn_result res;
            struct ua_sc_msg     m = { 1, fx.msg, len };

            ua_arena_reset(&fx.arena);
            /* No ck_assert in the loop: Check reports every one. */
            bad += wk_svc_dispatch(&fx.w, CH, NULL, &m, &fx.arena, &res)
                       != UA_GOOD
                   || res.service_result != UA_GOOD;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ck_assert_int_eq(bad, 0);
        ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9
              + (double)(t1.tv_nsec - t0.tv_nsec)) / iters;
        printf("check_svc_read: Read of 1 Int32, whole dispatch: %.0f ns\n",
               ns);
    }
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

static Suite *
svc_read_suite(void)
{
    Suite *s = suite_create("worker/svc_read");
    TCase *tc;

    tc = tcase_create("node classes");
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

    tc = tcase_create("status codes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_service_results);
    tcase_add_test(tc, test_too_many_operations);
    tcase_add_test(tc, test_operation_errors);
    tcase_add_test(tc, test_access_level);
    tcase_add_test(tc, test_data_encoding);
    tcase_add_test(tc, test_slot_stuck_mid_write);
    tcase_add_test(tc, test_bad_value_status);
    tcase_add_test(tc, test_timestamps);
    suite_add_tcase(s, tc);

    tc = tcase_create("index range");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_range_arrays);
    tcase_add_test(tc, test_range_syntax);
    tcase_add_test(tc, test_range_many_dimensions);
    tcase_add_test(tc, test_range_scalars_and_strings);
    tcase_add_test(tc, test_range_matrix);
    tcase_add_test(tc, test_range_other_attributes);
    suite_add_tcase(s, tc);

    tc = tcase_create("cost");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_read_cost);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_read_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
