/*
 * tests/unit/broker/check_addrspace.c: the address space as built into the
 * shared-memory segment: namespace 0 complete (against the independently
 * made fixture ns0_expected.h), namespace 1 (Demo), the size knob, and
 * unknown-NodeId lookups.  The Server object's values: check_server.c.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "ns0_expected.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/aggregate.h"
#include "proto/types_gen.h"
#include "proto/version.h"

#define T0 INT64_C(133470720000000000)      /* 2023-12-15 */

static struct bk_config    conf;
static struct bk_addrspace as;
static uint8_t             arena_buf[1 << 20];
static struct ua_arena     arena;

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    snprintf(conf.application_uri, sizeof(conf.application_uri),
             "urn:test:uabroker");
    conf.value_heap_mb = 4;
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    ua_arena_init(&arena, arena_buf, sizeof(arena_buf));
}

static void
teardown(void)
{
    bk_addrspace_close(&as);
}

static uint32_t
lookup_num(uint16_t ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = ns, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&as.ns, &k);
}

static uint32_t
lookup_str(uint16_t ns, const char *s)
{
    struct shm_nodekey k = { .ns = ns, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

static int
str_is(uint32_t off, const char *want)
{
    uint32_t       len;
    const uint8_t *p = shm_nodestore_string(&as.ns, off, &len);

    return p != NULL && len == strlen(want) && memcmp(p, want, len) == 0;
}

/* The numeric id of node index i in namespace 0 (0 when not ns0). */
static uint32_t
id_of(uint32_t i)
{
    if (i == SHM_NONE || i >= as.ns.nnodes || as.ns.nodes[i].ns != 0)
        return 0;
    return as.ns.nodes[i].id;
}

/* Decode node i's value slot into v (arena). */
static int
read_value(uint32_t i, struct ua_variant *v, struct shm_value *meta)
{
    static uint8_t buf[1 << 20];
    uint32_t       slot = as.ns.nodes[i].u.var.slot;

    if (shm_value_read(&as.vals, slot, meta, buf, sizeof(buf)) != 0)
        return -1;
    if (ua_decode(buf, meta->len, NULL, v, &ua_types[UA_TYPE_VARIANT], &arena,
                  NULL) != UA_GOOD)
        return -1;
    return 0;
}

/* Server-instance nodes the broker overwrites with live values. */
static int
is_live(uint32_t id)
{
    return (id >= 2254 && id <= 2300) || (id >= 2735 && id <= 2737)
           || id == 2992 || id == 2993 || id == 3704
           || (id >= 11702 && id <= 11714) || (id >= 12165 && id <= 12168)
           || id == 12911 || (id >= 24095 && id <= 24104) || id == 31916;
}

START_TEST(test_ns0_counts)
{
    uint32_t classes[256] = { 0 };
    uint32_t ns0 = 0, refs = 0;

    for (uint32_t i = 0; i < as.ns.nnodes; i++) {
        if (as.ns.nodes[i].ns != 0)
            continue;
        ns0++;
        classes[as.ns.nodes[i].node_class]++;
        /* ns0 references among ns0 nodes, counted at both ends */
        for (uint32_t r = 0; r < as.ns.nodes[i].nrefs; r++) {
            const struct shm_ref *ref = &as.ns.refs[as.ns.nodes[i].refs + r];

            if (as.ns.nodes[ref->target].ns == 0)
                refs++;
        }
    }
    ck_assert_uint_eq(ns0, NS0_EXP_NODES);
    ck_assert_uint_eq(as.vals.hdr->ns0_nodes, NS0_EXP_NODES);
    /* The generated references, and the aggregate functions organized
     * under both AggregateFunctions folders (broker/histconf.c), each at
     * both ends. */
    ck_assert_uint_eq(refs, NS0_EXP_REFS + 4 * UA_AGG_COUNT_);
    for (size_t c = 0; c < sizeof(ns0_exp_classes) / sizeof(ns0_exp_classes[0]);
         c++)
        ck_assert_uint_eq(classes[ns0_exp_classes[c].node_class],
                          ns0_exp_classes[c].count);
}
END_TEST

START_TEST(test_ns0_sample)
{
    ck_assert_uint_ge(NS0_EXP_COUNT, 200);
    for (size_t k = 0; k < NS0_EXP_COUNT; k++) {
        const struct ns0_exp *e = &ns0_exp[k];
        uint32_t              i = lookup_num(0, e->id);
        const struct shm_node *n;

        ck_assert_msg(i != SHM_NONE, "i=%u missing", e->id);
        n = &as.ns.nodes[i];
        ck_assert_msg(n->node_class == e->node_class, "i=%u class", e->id);
        ck_assert_msg(str_is(n->browse_name, e->browse_name),
                      "i=%u BrowseName", e->id);
        ck_assert_msg(str_is(n->dn_text, e->display_name),
                      "i=%u DisplayName", e->id);
        ck_assert_msg(!!(n->flags & SHM_NF_ABSTRACT) == e->abstract,
                      "i=%u IsAbstract", e->id);
        ck_assert_msg(!!(n->flags & SHM_NF_SYMMETRIC) == e->symmetric,
                      "i=%u Symmetric", e->id);
        ck_assert_msg(id_of(n->type_def) == e->type_def, "i=%u TypeDef",
                      e->id);
        ck_assert_msg(id_of(n->super) == e->super, "i=%u supertype", e->id);
        if (e->node_class == SHM_NC_VARIABLE
            || e->node_class == SHM_NC_VARIABLETYPE) {
            struct ua_variant v;
            struct shm_value  m;

            ck_assert_msg(id_of(n->u.var.data_type) == e->data_type,
                          "i=%u DataType", e->id);
            ck_assert_msg(n->u.var.value_rank == e->value_rank,
                          "i=%u ValueRank", e->id);
            if (is_live(e->id) || e->vtype == 0)
                continue;
            ua_arena_reset(&arena);
            ck_assert_msg(read_value(i, &v, &m) == 0, "i=%u value", e->id);
            ck_assert_msg(v.type == e->vtype, "i=%u value type %u != %u",
                          e->id, v.type, e->vtype);
            ck_assert_msg(v.is_array == e->is_array, "i=%u array", e->id);
            if (e->is_array)
                ck_assert_msg(v.n == e->array_len, "i=%u length", e->id);
            if (e->has_ival && !e->is_array) {
                int64_t x = 0;

                switch (v.type) {
                case UA_BT_BOOLEAN: x = *(bool *)v.data; break;
                case UA_BT_INT32: x = *(int32_t *)v.data; break;
                case UA_BT_UINT32: x = *(uint32_t *)v.data; break;
                case UA_BT_DATETIME: x = *(int64_t *)v.data; break;
                case UA_BT_BYTESTRING:
                    x = ((struct ua_string *)v.data)->len;
                    break;
                default: continue;
                }
                ck_assert_msg(x == e->ival, "i=%u value %lld", e->id,
                              (long long)x);
            }
            if (e->sval != NULL && v.type == UA_BT_STRING && !v.is_array)
                ck_assert_msg(ua_string_eq(v.data, e->sval), "i=%u string",
                              e->id);
            if (e->sval != NULL && v.type == UA_BT_LOCALIZEDTEXT
                && v.n > 0)
                ck_assert_msg(ua_string_eq(
                                  &((struct ua_localizedtext *)v.data)->text,
                                  e->sval), "i=%u text", e->id);
            if (e->eo != 0 && v.type == UA_BT_EXTENSIONOBJECT && v.n > 0) {
                struct ua_extobj *x = v.data;

                ck_assert_msg(x->encoding == UA_EO_DECODED
                              && x->type->binary_id == e->eo,
                              "i=%u ExtensionObject", e->id);
            }
        }
    }
}
END_TEST

START_TEST(test_reftype_closure)
{
    uint32_t hc = shm_nodestore_reftype_of(&as.ns,
                                           lookup_num(0, UA_NS0ID_HASCOMPONENT));
    uint32_t hr = shm_nodestore_reftype_of(&as.ns,
                      lookup_num(0, UA_NS0ID_HIERARCHICALREFERENCES));
    uint32_t nh = shm_nodestore_reftype_of(&as.ns,
                      lookup_num(0, UA_NS0ID_NONHIERARCHICALREFERENCES));
    uint32_t td = shm_nodestore_reftype_of(&as.ns,
                      lookup_num(0, UA_NS0ID_HASTYPEDEFINITION));

    ck_assert(shm_nodestore_reftype_is(&as.ns, hc, hr));
    ck_assert(shm_nodestore_reftype_is(&as.ns, hc, hc));
    ck_assert(!shm_nodestore_reftype_is(&as.ns, hr, hc));
    ck_assert(shm_nodestore_reftype_is(&as.ns, td, nh));
    ck_assert(!shm_nodestore_reftype_is(&as.ns, td, hr));
    /* Data types: Int32 < Integer < Number < BaseDataType. */
    ck_assert(shm_nodestore_is_subtype(&as.ns, lookup_num(0, UA_NS0ID_INT32),
                                       lookup_num(0, UA_NS0ID_NUMBER)));
    ck_assert(!shm_nodestore_is_subtype(&as.ns,
                                        lookup_num(0, UA_NS0ID_STRING),
                                        lookup_num(0, UA_NS0ID_NUMBER)));
}
END_TEST

START_TEST(test_demo_namespace)
{
    struct ua_variant v;
    struct shm_value  m;
    uint32_t          i, demo, objects;
    bool              organized = false;

    objects = lookup_num(0, UA_NS0ID_OBJECTSFOLDER);
    demo = lookup_str(1, "Demo");
    ck_assert_uint_ne(demo, SHM_NONE);
    for (uint32_t r = 0; r < as.ns.nodes[objects].nrefs; r++) {
        const struct shm_ref *ref = &as.ns.refs[as.ns.nodes[objects].refs + r];

        if (ref->target == demo && !(ref->flags & SHM_REF_INVERSE))
            organized = true;
    }
    ck_assert(organized);
    ck_assert_uint_eq(id_of(as.ns.nodes[demo].type_def), UA_NS0ID_FOLDERTYPE);
    i = lookup_str(1, "v0");
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_INT32);
    ck_assert_int_eq(*(int32_t *)v.data, 0);
    ck_assert_uint_eq(id_of(as.ns.nodes[i].u.var.data_type), UA_NS0ID_INT32);
    ck_assert_uint_eq(as.ns.nodes[i].access_level_ex & 3, 3);
    ck_assert(str_is(as.ns.nodes[i].browse_name, "v0"));
    ck_assert_uint_eq(as.ns.nodes[i].browse_ns, 1);
    i = lookup_str(1, "v999");
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_DOUBLE);
    ck_assert(*(double *)v.data == 999.5);
    ck_assert_uint_eq(lookup_str(1, "v1000"), SHM_NONE);
    /* The simulation finds v<n>'s slot at vars_slot_first + n. */
    for (uint32_t n = 0; n < 1000; n += 333) {
        char id[16];

        snprintf(id, sizeof(id), "v%u", n);
        i = lookup_str(1, id);
        ck_assert_uint_eq(as.ns.nodes[i].u.var.slot,
                          as.vars_slot_first + n);
    }
    /* Static: a scalar and an array of every built-in type. */
    for (int bt = 1; bt <= 25; bt++) {
        static const char *const names[] = {
            "Boolean", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32",
            "Int64", "UInt64", "Float", "Double", "String", "DateTime",
            "Guid", "ByteString", "XmlElement", "NodeId", "ExpandedNodeId",
            "StatusCode", "QualifiedName", "LocalizedText",
            "ExtensionObject", "DataValue", "Variant", "DiagnosticInfo" };
        char id[64];

        snprintf(id, sizeof(id), "Demo.Static.Scalar.%s", names[bt - 1]);
        i = lookup_str(1, id);
        ck_assert_msg(i != SHM_NONE, "%s", id);
        ua_arena_reset(&arena);
        ck_assert_int_eq(read_value(i, &v, &m), 0);
        ck_assert(!v.is_array);
        ck_assert_uint_eq(v.type, bt == 24 ? UA_BT_INT32 : bt);
        snprintf(id, sizeof(id), "Demo.Static.Array.%s", names[bt - 1]);
        i = lookup_str(1, id);
        ck_assert_msg(i != SHM_NONE, "%s", id);
        ck_assert_int_eq(as.ns.nodes[i].u.var.value_rank, 1);
        ck_assert_int_eq(read_value(i, &v, &m), 0);
        ck_assert(v.is_array);
        ck_assert_uint_eq(v.type, bt);
        ck_assert_int_eq(v.n, 3);
    }
    i = lookup_str(1, "Demo.Simulation.Counter");
    ck_assert_uint_ne(i, SHM_NONE);
    ck_assert_uint_eq(as.ns.nodes[i].access_level_ex & 3, 1);
}
END_TEST

/* Demo/Analog: AnalogItems with 0:EURange and 0:EngineeringUnits. */
START_TEST(test_demo_analog)
{
    static const struct {
        const char *name;
        uint32_t    dt;
        double      low, high;
    } want[] = { { "Double", UA_NS0ID_DOUBLE, 0, 100 },
                 { "Float", UA_NS0ID_FLOAT, -50, 50 },
                 { "Int32", UA_NS0ID_INT32, 0, 1000 } };
    uint32_t folder = lookup_str(1, "Demo.Analog");

    ck_assert_uint_ne(folder, SHM_NONE);
    ck_assert_uint_eq(id_of(as.ns.nodes[folder].type_def),
                      UA_NS0ID_FOLDERTYPE);
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        char              id[64];
        uint32_t          i, p, props = 0;
        struct ua_variant v;
        struct shm_value  m;

        snprintf(id, sizeof(id), "Demo.Analog.%s", want[k].name);
        i = lookup_str(1, id);
        ck_assert_msg(i != SHM_NONE, "%s", id);
        ck_assert_uint_eq(id_of(as.ns.nodes[i].type_def),
                          UA_NS0ID_ANALOGITEMTYPE);
        ck_assert_uint_eq(id_of(as.ns.nodes[i].u.var.data_type), want[k].dt);
        ck_assert_uint_eq(as.ns.nodes[i].access_level_ex & 3, 3);
        for (uint32_t r = 0; r < as.ns.nodes[i].nrefs; r++) {
            const struct shm_ref *ref = &as.ns.refs[as.ns.nodes[i].refs + r];

            if (!(ref->flags & SHM_REF_INVERSE)
                && ref->reftype == shm_nodestore_reftype_of(
                       &as.ns, lookup_num(0, UA_NS0ID_HASPROPERTY))) {
                props++;
                ck_assert_uint_eq(as.ns.nodes[ref->target].browse_ns, 0);
            }
        }
        ck_assert_uint_eq(props, 2);
        snprintf(id, sizeof(id), "Demo.Analog.%s.EURange", want[k].name);
        p = lookup_str(1, id);
        ck_assert_msg(p != SHM_NONE, "%s", id);
        ck_assert(str_is(as.ns.nodes[p].browse_name, "EURange"));
        ck_assert_uint_eq(id_of(as.ns.nodes[p].type_def),
                          UA_NS0ID_PROPERTYTYPE);
        ua_arena_reset(&arena);
        ck_assert_int_eq(read_value(p, &v, &m), 0);
        ck_assert_uint_eq(v.type, UA_BT_EXTENSIONOBJECT);
        {
            const struct ua_extobj *x = v.data;
            const struct ua_range  *rg;

            ck_assert(x->encoding == UA_EO_DECODED
                      && x->type == &ua_types[UA_TYPE_RANGE]);
            rg = x->obj;
            ck_assert(rg->low == want[k].low && rg->high == want[k].high);
        }
        snprintf(id, sizeof(id), "Demo.Analog.%s.EngineeringUnits",
                 want[k].name);
        p = lookup_str(1, id);
        ck_assert_msg(p != SHM_NONE, "%s", id);
        ck_assert_uint_eq(id_of(as.ns.nodes[p].u.var.data_type),
                          UA_NS0ID_EUINFORMATION);
        ua_arena_reset(&arena);
        ck_assert_int_eq(read_value(p, &v, &m), 0);
        {
            const struct ua_extobj         *x = v.data;
            const struct ua_eu_information *eu;

            ck_assert(x->encoding == UA_EO_DECODED
                      && x->type == &ua_types[UA_TYPE_EUINFORMATION]);
            eu = x->obj;
            ck_assert_int_gt(eu->unit_id, 0);
            ck_assert_int_gt(eu->display_name.text.len, 0);
        }
    }
}
END_TEST

START_TEST(test_unknown_nodeids)
{
    struct shm_nodekey k = { 0 };
    uint8_t            guid[16] = { 1, 2, 3 };

    ck_assert_uint_eq(lookup_num(0, 99999999), SHM_NONE);
    ck_assert_uint_eq(lookup_num(1, 84), SHM_NONE);     /* Root is ns 0 */
    ck_assert_uint_eq(lookup_num(65535, 84), SHM_NONE);
    ck_assert_uint_eq(lookup_num(2, 1), SHM_NONE);
    ck_assert_uint_eq(lookup_str(1, "v-1"), SHM_NONE);
    ck_assert_uint_eq(lookup_str(0, "v0"), SHM_NONE);
    ck_assert_uint_eq(lookup_str(65535, "v0"), SHM_NONE);
    ck_assert_uint_eq(lookup_str(1, ""), SHM_NONE);
    k.ns = 1;
    k.idtype = SHM_ID_GUID;
    k.bytes = guid;
    k.len = 16;
    ck_assert_uint_eq(shm_nodestore_lookup(&as.ns, &k), SHM_NONE);
    k.idtype = SHM_ID_OPAQUE;
    k.bytes = (const uint8_t *)"v0";
    k.len = 2;
    ck_assert_uint_eq(shm_nodestore_lookup(&as.ns, &k), SHM_NONE);
}
END_TEST

START_TEST(test_size_knob)
{
    struct bk_addrspace big;
    char                err[256];

    conf.vars = 100000;
    ck_assert_msg(bk_addrspace_build(&big, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_uint_eq(big.ns.nnodes, as.ns.nnodes - 1000 + 100000);
    {
        struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING,
                                 .bytes = (const uint8_t *)"v99999",
                                 .len = 6 };

        ck_assert_uint_ne(shm_nodestore_lookup(&big.ns, &k), SHM_NONE);
    }
    bk_addrspace_close(&big);
    conf.vars = 0;
    ck_assert_msg(bk_addrspace_build(&big, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_uint_eq(big.ns.nnodes, as.ns.nnodes - 1000);
    bk_addrspace_close(&big);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Address space");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Namespace 0 in the segment");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_ns0_counts);
    tcase_add_test(tc, test_ns0_sample);
    tcase_add_test(tc, test_reftype_closure);
    suite_add_tcase(s, tc);
    tc = tcase_create("Namespace 1");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_demo_namespace);
    tcase_add_test(tc, test_demo_analog);
    tcase_add_test(tc, test_unknown_nodeids);
    tcase_add_test(tc, test_size_knob);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
