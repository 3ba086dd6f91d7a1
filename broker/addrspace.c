/*
 * broker/addrspace.c: the address-space build.
 *
 * Order of the build: namespace 0 exactly as generated (node index i is
 * bk_ns0_nodes[i]), its references, then namespace 1: Objects/Demo with
 * Static (every built-in type, scalar and array), Analog (AnalogItemType
 * variables with EURange and EngineeringUnits), Simulation and Vars.
 * Every Variable and VariableType gets a value slot holding its encoded
 * Variant, written through the value path (broker/value.h) in the build's
 * one value batch.  Then the nodesets (broker/nodeset.h parses them,
 * broker/nsbuild.h puts them in the node store), the conditions of the
 * [alarm NAME] sections (broker/alarmnode.h), and last the Server
 * object's values from the configuration (broker/server.h).
 *
 * Meanwhile a thread maps the fan-out's block pool into the broker
 * (shm_blockpool_prefault: 4,096 pages with the defaults, every one
 * allocated), on the core the build leaves idle: not as the hand first
 * comes round to each block mid-run, not a /stats that counts the free
 * blocks faulting them in, and not on the start's critical path
 * (docs/benchmarks.md "Start-up of the whole server").  It touches
 * nothing but the pool's pages; bk_addrspace_close() joins it.
 */
#include "addrspace.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "alarmnset.h"
#include "histcfg.h"
#include "histconf.h"
#include "histnode.h"
#include "ns0_gen.h"
#include "nsbuild.h"
#include "pki.h"
#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/blockpool.h"
#include "shm/log.h"
#include "shm/plan.h"
#include "shm/throttle.h"

#define BK_DEMO_FOLDERS   7
#define BK_DEMO_BUILTINS  25
#define BK_DEMO_ANALOG    3     /* AnalogItems, each with 2 properties */

static int bk_as_ns0_index(uint32_t id);
static void bk_as_alarm_refused(void *arg, const char *msg);
static uint32_t bk_as_str(struct bk_addrspace *as, const char *s);
static int bk_as_build_ns0(struct bk_addrspace *as, int64_t now, char *err,
                           size_t errlen);
static int bk_as_build_demo(struct bk_addrspace *as,
                            const struct bk_config *c, uint32_t slot,
                            int64_t now, char *err, size_t errlen);
static void bk_as_history_notifiers(struct bk_addrspace *as);
static void *bk_as_prefault_run(void *arg);
static void bk_as_prefault_join(struct bk_addrspace *as);
static int bk_as_throttle_init(struct bk_addrspace *as,
                               const struct bk_config *c, char *err,
                               size_t errlen);
static uint32_t bk_as_add_node(struct bk_addrspace *as, const char *id,
                               uint8_t nc, const char *name, uint32_t parent,
                               uint32_t reftype, uint32_t typedef_id);
static uint32_t bk_as_add_variable(struct bk_addrspace *as, const char *id,
                                   const char *name, uint32_t parent,
                                   uint32_t data_type, int32_t rank,
                                   uint8_t access);

/* Node index of ns=0;i=id: namespace 0 is loaded first, in table order. */
static int
bk_as_ns0_index(uint32_t id)
{
    size_t lo = 0, hi = BK_NS0_NODES;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (bk_ns0_nodes[mid].id == id)
            return (int)mid;
        if (bk_ns0_nodes[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static uint32_t
bk_as_str(struct bk_addrspace *as, const char *s)
{
    return shm_nodestore_intern(&as->ns, s, (uint32_t)strlen(s));
}

/* The value-heap block a value of len bytes takes (0 when inline). */
static uint64_t
bk_as_block(uint32_t len)
{
    uint64_t b = UINT64_C(1) << SHM_VHEAP_MIN_SHIFT;

    if (len <= SHM_VALUE_INLINE)
        return 0;
    while (b < (uint64_t)len + sizeof(struct shm_vblock))
        b <<= 1;
    return b;
}

void
bk_addrspace_plan(const struct bk_config *c, struct shm_plan *p)
{
    uint64_t slots = 0, heap = 0;
    uint64_t demo = BK_DEMO_FOLDERS + 2 * BK_DEMO_BUILTINS + BK_SIM_MAX
                    + 3 * BK_DEMO_ANALOG;

    memset(p, 0, sizeof(*p));
    for (size_t i = 0; i < BK_NS0_NODES; i++) {
        const struct bk_ns0_node *n = &bk_ns0_nodes[i];

        if (n->node_class == SHM_NC_VARIABLE
            || n->node_class == SHM_NC_VARIABLETYPE) {
            slots++;
            heap += bk_as_block(n->value_len);
        }
    }
    p->nodes = (uint32_t)(BK_NS0_NODES + demo + c->vars);
    p->refs = (uint32_t)(2 * (BK_NS0_REFS + 2 * (demo + c->vars)));
    p->strings = 2 * (uint64_t)BK_NS0_STRINGS_SIZE + 16 * BK_NS0_NODES
                 + 64 * demo + 16 * (uint64_t)c->vars + 8192;
    p->slots = (uint32_t)(slots + demo + c->vars);
    /* Live Server values (ServerStatus, arrays) and the Static demo. */
    heap += 64 * 1024 + 2 * BK_DEMO_BUILTINS * 1024 + BK_DEMO_ANALOG * 1024;
    p->vheap = heap + (uint64_t)c->value_heap_mb * 1024 * 1024;
    /* The fan-out: a ring triple per worker slot, the block pool. */
    p->ring_workers = bk_config_slots(c);   /* and the historian's */
    p->req_ring_slots = c->fanout_req_ring_slots;
    p->reply_ring_slots = c->fanout_reply_ring_slots;
    p->notif_ring_slots = c->fanout_notif_ring_slots;
    p->msg_slot_size = c->fanout_msg_slot_size;
    p->blocks = c->workers != 0 ? c->fanout_blocks : 0;
    p->block_size = c->fanout_block_size;
    /* Certificates, key and trust lists for the workers (broker/pki.c). */
    p->pki_list_bytes = BK_PKI_LIST_BYTES;
    p->pki_workers = c->workers;
    /* Failures per client, shared by the workers (shm/throttle.h). */
    p->throttle_entries = c->throttle_entries;
    /* Parked sessions and the change log (shm/park.h). */
    p->park_workers = c->workers;
    p->park_records = c->max_sessions;
    p->park_bytes = c->session_park_bytes;
    p->change_log_entries = c->change_log_entries;
}

static int
bk_as_build_ns0(struct bk_addrspace *as, int64_t now, char *err,
                size_t errlen)
{
    struct shm_nodestore *ns = &as->ns;
    uint32_t              slot = 0;
    static const uint8_t  null_variant = 0;

    for (size_t i = 0; i < BK_NS0_NODES; i++) {
        const struct bk_ns0_node *g = &bk_ns0_nodes[i];
        struct shm_nodekey        k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                        .num = g->id };
        struct shm_node          *n;
        uint32_t                  idx;

        idx = shm_nodestore_add(ns, &k, g->node_class);
        if (idx != i) {
            snprintf(err, errlen, "ns=0;i=%u: cannot add node", g->id);
            return -1;
        }
        n = shm_nodestore_node(ns, idx);
        n->browse_name = bk_as_str(as, bk_ns0_strings + g->browse_name);
        n->browse_ns = 0;
        n->dn_text = bk_as_str(as, bk_ns0_strings + g->display_name);
        n->dn_locale = g->display_locale == 0
                           ? 0 : bk_as_str(as, bk_ns0_strings
                                                   + g->display_locale);
        if (g->description != 0)
            n->desc_text = bk_as_str(as, bk_ns0_strings + g->description);
        n->flags = g->flags & (SHM_NF_ABSTRACT | SHM_NF_SYMMETRIC
                               | SHM_NF_CONTAINS_NO_LOOPS
                               | SHM_NF_HISTORIZING | SHM_NF_EXECUTABLE);
        if (n->flags & SHM_NF_EXECUTABLE)
            n->flags |= SHM_NF_USER_EXECUTABLE;
        n->event_notifier = g->event_notifier;
        n->write_mask = g->write_mask;
        n->user_write_mask = g->write_mask;
        if (g->node_class == SHM_NC_REFERENCETYPE && g->inverse_name != 0)
            n->u.ref.inv_text = bk_as_str(as, bk_ns0_strings
                                                  + g->inverse_name);
        if (g->node_class != SHM_NC_VARIABLE
            && g->node_class != SHM_NC_VARIABLETYPE)
            continue;
        n->u.var.value_rank = g->value_rank;
        if (g->array_dims != 0) {
            const uint32_t *d = &bk_ns0_u32[g->array_dims];

            n->u.var.array_dims = shm_nodestore_intern(ns, d,
                                                       4 * (d[0] + 1));
        }
        n->access_level_ex = g->access_level;
        n->user_access_level = g->access_level;
        n->min_sampling = g->min_sampling;
        n->u.var.slot = slot;
        if (g->value_len != 0) {
            if (bk_value_write_raw(&as->val, slot, bk_ns0_values + g->value,
                                       g->value_len, now) != 0) {
                snprintf(err, errlen, "ns=0;i=%u: value heap full", g->id);
                return -1;
            }
        } else {
            bk_value_write_raw(&as->val, slot, &null_variant, 1, now);
        }
        slot++;
    }
    /* Data types and references need every ns0 node present first. */
    for (size_t i = 0; i < BK_NS0_NODES; i++) {
        const struct bk_ns0_node *g = &bk_ns0_nodes[i];

        if ((g->node_class == SHM_NC_VARIABLE
             || g->node_class == SHM_NC_VARIABLETYPE) && g->data_type != 0) {
            int dt = bk_as_ns0_index(g->data_type);

            ns->nodes[i].u.var.data_type = dt < 0 ? SHM_NONE : (uint32_t)dt;
        }
        for (uint32_t r = g->refs; r < g->refs + g->nrefs; r++) {
            int t = bk_as_ns0_index(bk_ns0_refs[r].type);
            int d = bk_as_ns0_index(bk_ns0_refs[r].target);

            if (t < 0 || d < 0
                || shm_nodestore_add_ref(ns, (uint32_t)i, (uint32_t)t,
                                         (uint32_t)d) != 0) {
                snprintf(err, errlen, "ns=0;i=%u: bad reference", g->id);
                return -1;
            }
        }
    }
    as->vals.hdr->ns0_nodes = BK_NS0_NODES;
    return (int)slot;
}

/* A node with a ns=1 string NodeId, its parent reference and type. */
static uint32_t
bk_as_add_node(struct bk_addrspace *as, const char *id, uint8_t nc,
               const char *name, uint32_t parent, uint32_t reftype,
               uint32_t typedef_id)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };
    struct shm_node   *n;
    uint32_t           idx;

    k.bytes = (const uint8_t *)id;
    k.len = (uint32_t)strlen(id);
    idx = shm_nodestore_add(&as->ns, &k, nc);
    if (idx == SHM_NONE)
        return SHM_NONE;
    n = shm_nodestore_node(&as->ns, idx);
    n->browse_ns = 1;
    n->browse_name = bk_as_str(as, name);
    n->dn_text = n->browse_name;
    if (shm_nodestore_add_ref(&as->ns, parent,
                              (uint32_t)bk_as_ns0_index(reftype), idx) != 0
        || shm_nodestore_add_ref(&as->ns, idx,
                                 (uint32_t)bk_as_ns0_index(
                                     UA_NS0ID_HASTYPEDEFINITION),
                                 (uint32_t)bk_as_ns0_index(typedef_id)) != 0)
        return SHM_NONE;
    return idx;
}

static uint32_t
bk_as_add_variable(struct bk_addrspace *as, const char *id, const char *name,
                   uint32_t parent, uint32_t data_type, int32_t rank,
                   uint8_t access)
{
    static const uint32_t dims1[2] = { 1, 0 };
    struct shm_node      *n;
    uint32_t              idx;

    idx = bk_as_add_node(as, id, SHM_NC_VARIABLE, name, parent,
                         UA_NS0ID_ORGANIZES, UA_NS0ID_BASEDATAVARIABLETYPE);
    if (idx == SHM_NONE)
        return SHM_NONE;
    n = shm_nodestore_node(&as->ns, idx);
    n->u.var.data_type = (uint32_t)bk_as_ns0_index(data_type);
    n->u.var.value_rank = rank;
    if (rank == 1)
        n->u.var.array_dims = shm_nodestore_intern(&as->ns, dims1,
                                                   sizeof(dims1));
    n->access_level_ex = access;
    n->user_access_level = access;
    n->min_sampling = 0;
    return idx;
}

/* Built-in type names in id order, for the Static folder. */
static const char *const bk_as_bt_names[BK_DEMO_BUILTINS] = {
    "Boolean", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32",
    "Int64", "UInt64", "Float", "Double", "String", "DateTime", "Guid",
    "ByteString", "XmlElement", "NodeId", "ExpandedNodeId", "StatusCode",
    "QualifiedName", "LocalizedText", "ExtensionObject", "DataValue",
    "Variant", "DiagnosticInfo"
};

/*
 * Three sample values of built-in type bt into out (element size from the
 * type table); element 0 is the scalar's value.
 */
static_assert(sizeof(struct ua_datavalue) <= 128, "sample buffer");

static void
bk_as_samples(uint8_t bt, void *out, int64_t now)
{
    size_t sz = ua_types[bt - 1].size;
    uint8_t *p = out;

    memset(out, 0, 3 * sz);
    for (int i = 0; i < 3; i++, p += sz) {
        switch (bt) {
        case UA_BT_BOOLEAN: *(bool *)p = i != 1; break;
        case UA_BT_SBYTE: *(int8_t *)p = (int8_t)(-i); break;
        case UA_BT_BYTE: *(uint8_t *)p = (uint8_t)(i + 1); break;
        case UA_BT_INT16: *(int16_t *)p = (int16_t)(-i - 1); break;
        case UA_BT_UINT16: *(uint16_t *)p = (uint16_t)(i + 1); break;
        case UA_BT_INT32: *(int32_t *)p = -i - 1; break;
        case UA_BT_UINT32: *(uint32_t *)p = (uint32_t)i + 1; break;
        case UA_BT_INT64: *(int64_t *)p = -(int64_t)i - 1; break;
        case UA_BT_UINT64: *(uint64_t *)p = (uint64_t)i + 1; break;
        case UA_BT_FLOAT: *(float *)p = 0.5f + (float)i; break;
        case UA_BT_DOUBLE: *(double *)p = 0.25 + i; break;
        case UA_BT_STRING:
        case UA_BT_XMLELEMENT:
        case UA_BT_BYTESTRING:
            *(struct ua_string *)p = ua_string_from(
                bt == UA_BT_XMLELEMENT ? "<a/>" : i == 0 ? "uabroker"
                                                         : "demo");
            break;
        case UA_BT_DATETIME: *(int64_t *)p = now; break;
        case UA_BT_GUID: ((struct ua_guid *)p)->data1 = (uint32_t)i + 1; break;
        case UA_BT_NODEID:
            *(struct ua_nodeid *)p = ua_nodeid_num(0, UA_NS0ID_SERVER);
            break;
        case UA_BT_EXPANDEDNODEID: {
            struct ua_expandednodeid *x = (void *)p;

            x->node = ua_nodeid_num(0, UA_NS0ID_SERVER);
            x->ns_uri.len = -1;
            break;
        }
        case UA_BT_STATUSCODE: *(uint32_t *)p = UA_GOOD; break;
        case UA_BT_QUALIFIEDNAME: {
            struct ua_qualifiedname *q = (void *)p;

            q->ns = 1;
            q->name = ua_string_from("demo");
            break;
        }
        case UA_BT_LOCALIZEDTEXT: {
            struct ua_localizedtext *l = (void *)p;

            l->mask = UA_LT_LOCALE | UA_LT_TEXT;
            l->locale = ua_string_from("en");
            l->text = ua_string_from("demo");
            break;
        }
        case UA_BT_EXTENSIONOBJECT: {
            struct ua_extobj *x = (void *)p;

            x->encoding = UA_EO_NONE;
            break;
        }
        case UA_BT_DATAVALUE: {
            struct ua_datavalue *d = (void *)p;

            d->mask = UA_DV_STATUS;
            d->status = UA_GOOD;
            break;
        }
        case UA_BT_VARIANT:
            break;                      /* filled by the caller */
        case UA_BT_DIAGNOSTICINFO:
            break;                      /* empty */
        }
    }
}

/*
 * Objects/Demo/Analog: writable AnalogItemType variables (Part 8 §5.3.2.3)
 * of three Number types, each with its EURange (Range) and
 * EngineeringUnits (EUInformation, UNECE codes) properties, so a
 * PercentDeadband (Part 8 §7.2) has a range to work with.  Properties
 * have browse names in namespace 0 (0:EURange, 0:EngineeringUnits).
 * Returns the next free slot, or SHM_NONE when the segment is full.
 */
static uint32_t
bk_as_build_analog(struct bk_addrspace *as, uint32_t parent, uint32_t slot,
                   int64_t now)
{
    static const struct {
        const char *name;
        uint32_t    data_type;
        uint8_t     bt;
        double      low, high, init;
        const char *unit;       /* display name */
        const char *desc;
        int32_t     unit_id;    /* UNECE common code, Part 8 §5.6.3 */
    } an[BK_DEMO_ANALOG] = {
        /* CEL: degree Celsius; PAL: pascal; RPM: revolutions per minute */
        { "Double", UA_NS0ID_DOUBLE, UA_BT_DOUBLE, 0.0, 100.0, 50.0,
          "\xC2\xB0" "C", "degree Celsius", ('C' << 16) | ('E' << 8) | 'L' },
        { "Float", UA_NS0ID_FLOAT, UA_BT_FLOAT, -50.0, 50.0, 0.0,
          "Pa", "pascal", ('P' << 16) | ('A' << 8) | 'L' },
        { "Int32", UA_NS0ID_INT32, UA_BT_INT32, 0.0, 1000.0, 500.0,
          "r/min", "revolutions per minute", ('R' << 16) | ('P' << 8) | 'M' },
    };
    char id[64];

    for (int i = 0; i < BK_DEMO_ANALOG; i++) {
        struct ua_range          rg = { an[i].low, an[i].high };
        struct ua_eu_information eu;
        struct shm_node         *n;
        uint32_t                 v, p;
        float                    f = (float)an[i].init;
        int32_t                  x = (int32_t)an[i].init;
        const void              *val = an[i].bt == UA_BT_DOUBLE
                                           ? (const void *)&an[i].init
                                       : an[i].bt == UA_BT_FLOAT
                                           ? (const void *)&f
                                           : (const void *)&x;

        snprintf(id, sizeof(id), "Demo.Analog.%s", an[i].name);
        v = bk_as_add_node(as, id, SHM_NC_VARIABLE, an[i].name, parent,
                           UA_NS0ID_ORGANIZES, UA_NS0ID_ANALOGITEMTYPE);
        if (v == SHM_NONE)
            return SHM_NONE;
        n = shm_nodestore_node(&as->ns, v);
        n->u.var.data_type = (uint32_t)bk_as_ns0_index(an[i].data_type);
        n->u.var.value_rank = -1;
        n->access_level_ex = 3;
        n->user_access_level = 3;
        n->min_sampling = 0;
        n->u.var.slot = slot;
        if (bk_value_write_scalar(&as->val, slot, an[i].bt, val, now) != 0)
            return SHM_NONE;
        slot++;

        for (int k = 0; k < 2; k++) {
            const char *pn = k == 0 ? "EURange" : "EngineeringUnits";
            int         rc;

            snprintf(id, sizeof(id), "Demo.Analog.%s.%s", an[i].name, pn);
            p = bk_as_add_node(as, id, SHM_NC_VARIABLE, pn, v,
                               UA_NS0ID_HASPROPERTY, UA_NS0ID_PROPERTYTYPE);
            if (p == SHM_NONE)
                return SHM_NONE;
            n = shm_nodestore_node(&as->ns, p);
            n->browse_ns = 0;
            n->u.var.data_type = (uint32_t)bk_as_ns0_index(
                k == 0 ? UA_NS0ID_RANGE : UA_NS0ID_EUINFORMATION);
            n->u.var.value_rank = -1;
            n->access_level_ex = 1;
            n->user_access_level = 1;
            n->min_sampling = 0;
            n->u.var.slot = slot;
            if (k == 0) {
                rc = bk_value_write_struct(&as->val, slot, UA_TYPE_RANGE,
                                           &rg, now);
            } else {
                memset(&eu, 0, sizeof(eu));
                eu.namespace_uri = ua_string_from(
                    "http://www.opcfoundation.org/UA/units/un/cefact");
                eu.unit_id = an[i].unit_id;
                eu.display_name.mask = UA_LT_LOCALE | UA_LT_TEXT;
                eu.display_name.locale = ua_string_from("en");
                eu.display_name.text = ua_string_from(an[i].unit);
                eu.description.mask = UA_LT_LOCALE | UA_LT_TEXT;
                eu.description.locale = ua_string_from("en");
                eu.description.text = ua_string_from(an[i].desc);
                rc = bk_value_write_struct(&as->val, slot,
                                           UA_TYPE_EUINFORMATION, &eu, now);
            }
            if (rc != 0)
                return SHM_NONE;
            slot++;
        }
    }
    return slot;
}

static int
bk_as_build_demo(struct bk_addrspace *as, const struct bk_config *c,
                 uint32_t slot, int64_t now, char *err, size_t errlen)
{
    static const char *const sim[BK_SIM_MAX] = { "Counter", "Ramp", "Sine",
                                                 "Random" };
    static const uint32_t    sim_type[BK_SIM_MAX] = {
        UA_NS0ID_UINT32, UA_NS0ID_DOUBLE, UA_NS0ID_DOUBLE, UA_NS0ID_DOUBLE };
    uint32_t objects = (uint32_t)bk_as_ns0_index(UA_NS0ID_OBJECTSFOLDER);
    uint32_t demo, stat, scal, arr, anaf, simf, vars, idx;
    uint8_t  samples[3 * 128] __attribute__((aligned(16)));
    char     id[64];
    int      rc = 0;
#define BK_FOLDER(var, sid, name, parent)                                  \
    do {                                                                  \
        var = bk_as_add_node(as, sid, SHM_NC_OBJECT, name, parent,        \
                             UA_NS0ID_ORGANIZES, UA_NS0ID_FOLDERTYPE);    \
        if (var == SHM_NONE)                                              \
            goto full;                                                    \
    } while (0)
    BK_FOLDER(demo, "Demo", "Demo", objects);
    BK_FOLDER(stat, "Demo.Static", "Static", demo);
    BK_FOLDER(scal, "Demo.Static.Scalar", "Scalar", stat);
    BK_FOLDER(arr, "Demo.Static.Array", "Array", stat);
    BK_FOLDER(anaf, "Demo.Analog", "Analog", demo);
    BK_FOLDER(simf, "Demo.Simulation", "Simulation", demo);
    BK_FOLDER(vars, "Demo.Vars", "Vars", demo);
#undef BK_FOLDER

    for (uint8_t bt = 1; bt <= BK_DEMO_BUILTINS; bt++) {
        uint32_t dt = bt;               /* DataType ids 1..25 = built-ins */

        for (int a = 0; a < 2; a++) {
            struct ua_variant vv[3];

            snprintf(id, sizeof(id), "Demo.Static.%s.%s",
                     a ? "Array" : "Scalar", bk_as_bt_names[bt - 1]);
            idx = bk_as_add_variable(as, id, bk_as_bt_names[bt - 1],
                                     a ? arr : scal, dt, a ? 1 : -1, 3);
            if (idx == SHM_NONE)
                goto full;
            as->ns.nodes[idx].u.var.slot = slot;
            bk_as_samples(bt, samples, now);
            if (bt == UA_BT_VARIANT) {
                static int32_t iv = 7;
                static double  dv = 2.5;
                static struct ua_string sv = { 4, (uint8_t *)"demo" };

                ua_variant_set_scalar(&vv[0], &iv, UA_BT_INT32);
                ua_variant_set_scalar(&vv[1], &sv, UA_BT_STRING);
                ua_variant_set_scalar(&vv[2], &dv, UA_BT_DOUBLE);
                rc = a ? bk_value_write_array(&as->val, slot, bt, vv, 3, now)
                       : bk_value_write_scalar(&as->val, slot, UA_BT_INT32,
                                                   &iv, now);
            } else if (a) {
                rc = bk_value_write_array(&as->val, slot, bt, samples, 3, now);
            } else {
                rc = bk_value_write_scalar(&as->val, slot, bt, samples, now);
            }
            if (rc != 0)
                goto full;
            slot++;
        }
    }
    slot = bk_as_build_analog(as, anaf, slot, now);
    if (slot == SHM_NONE) {
        rc = -1;
        goto full;
    }
    for (int i = 0; i < BK_SIM_MAX; i++) {
        double   d = 0;
        uint32_t u = 0;

        snprintf(id, sizeof(id), "Demo.Simulation.%s", sim[i]);
        idx = bk_as_add_variable(as, id, sim[i], simf, sim_type[i], -1, 1);
        if (idx == SHM_NONE)
            goto full;
        as->ns.nodes[idx].u.var.slot = slot;
        as->sim_slot[i] = slot;
        as->sim_node[i] = idx;
        rc = i == BK_SIM_COUNTER
                 ? bk_value_write_scalar(&as->val, slot, UA_BT_UINT32, &u, now)
                 : bk_value_write_scalar(&as->val, slot, UA_BT_DOUBLE, &d, now);
        if (rc != 0)
            goto full;
        slot++;
    }
    as->vars = c->vars;
    as->ns1_vars_first = as->ns.nnodes;
    as->vars_slot_first = slot;
    for (uint32_t v = 0; v < c->vars; v++) {
        int len = snprintf(id, sizeof(id), "v%u", v);

        (void)len;
        idx = bk_as_add_variable(as, id, id, vars,
                                 v % 2 ? UA_NS0ID_DOUBLE : UA_NS0ID_INT32, -1,
                                 3);
        if (idx == SHM_NONE)
            goto full;
        as->ns.nodes[idx].u.var.slot = slot;
        if (v % 2) {
            double d = v + 0.5;

            rc = bk_value_write_scalar(&as->val, slot, UA_BT_DOUBLE, &d, now);
        } else {
            int32_t x = (int32_t)v;

            rc = bk_value_write_scalar(&as->val, slot, UA_BT_INT32, &x, now);
        }
        if (rc != 0)
            goto full;
        slot++;
    }
    return 0;
full:
    snprintf(err, errlen, "namespace 1: the segment is too small (%s)",
             rc != 0 ? "value heap" : "nodes, references or strings");
    return -1;
}


/*
 * Event history (history.events; worker/histev.c keeps every event): the
 * server's own event notifiers (SubscribeToEvents in namespaces 0 and 1:
 * the Server, the Demo objects, alarm sources there) get HistoryRead in
 * their EventNotifier (Part 3 §5.4; worker/svc_histevent.c reads them); a
 * NodeSet's notifiers keep the EventNotifier their file gives, as its
 * variables keep their AccessLevel.
 */
static void
bk_as_history_notifiers(struct bk_addrspace *as)
{
    for (uint32_t i = 0; i < as->ns.nnodes; i++) {
        struct shm_node   *n = shm_nodestore_node(&as->ns, i);
        struct shm_nodekey k;

        if ((n->node_class != SHM_NC_OBJECT && n->node_class != SHM_NC_VIEW)
            || !(n->event_notifier & UA_EVENTNOTIFIERTYPE_SUBSCRIBETOEVENTS))
            continue;
        shm_nodestore_key(&as->ns, i, &k);
        if (k.ns <= 1)
            n->event_notifier |= UA_EVENTNOTIFIERTYPE_HISTORYREAD;
    }
}

/*
 * The build's companion: the block pool's pages, then each block's
 * header read once as /stats reads them (shm_blockpool_free_count): on a
 * virtual machine the first touch of a page costs this process an exit
 * even when the page is present, 1,024 of them 8 ms of the first /stats
 * otherwise.
 */
static void *
bk_as_prefault_run(void *arg)
{
    struct shm_blockpool_ref p;

    if (shm_blockpool_locate(&p, arg) == 0) {
        (void)shm_blockpool_prefault(&p);
        (void)shm_blockpool_free_count(&p);
    }
    return NULL;
}

static void
bk_as_prefault_join(struct bk_addrspace *as)
{
    if (as->prefaulting)
        (void)pthread_join(as->prefault, NULL);
    as->prefaulting = false;
}

/*
 * The shared failure table (shm/throttle.h), before any worker starts:
 * a fresh SipHash key (nobody outside can aim addresses at one entry) and
 * the longest window, past which a count is free for another key.
 */
static int
bk_as_throttle_init(struct bk_addrspace *as, const struct bk_config *c,
                    char *err, size_t errlen)
{
    struct shm_throttle *t = shm_throttle_of(&as->seg);
    uint64_t             seed[2];
    uint32_t             stale = c->failure_window_ms;

    if (t == NULL)
        return 0;
    if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        snprintf(err, errlen, "getrandom() failed: %s", strerror(errno));
        return -1;
    }
    if (c->login_failure_window_ms > stale)
        stale = c->login_failure_window_ms;
    shm_throttle_configure(t, seed, stale);
    return 0;
}

/* A NodeSet alarm instance refused (broker/alarmnset.h): a warning. */
static void
bk_as_alarm_refused(void *arg, const char *msg)
{
    struct bk_addrspace *as = arg;

    as->alarms_refused++;
    snprintf(as->alarms_refused_last, sizeof(as->alarms_refused_last), "%s",
             msg);
    shm_log(SHM_LOG_WARNING, "%s", msg);
}

int
bk_addrspace_build(struct bk_addrspace *as, const struct bk_config *c,
                   int64_t now, char *err, size_t errlen)
{
    struct shm_plan p;
    struct timespec t0, t1;
    int             rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(as, 0, sizeof(*as));
    as->seg.fd = -1;
    /* The nodesets first: the segment is planned with their counts. */
    if (bk_nodeset_load(&as->nodesets, c->nodesets, c->application_uri,
                        c->max_nodeset_nodes, err, errlen) != 0) {
        as->nodeset_failed = true;
        bk_nodeset_free(as->nodesets);
        as->nodesets = NULL;
        return -1;
    }
    bk_addrspace_plan(c, &p);
    bk_alarmnode_plan(c->alarms, bk_alarmnset_count(as->nodesets), &p);
    {
        struct bk_nodeset_counts nc;

        bk_nodeset_counts(as->nodesets, &nc);
        /* The historized variables' Annotations Properties: at most the
         * simulation's, [history]'s (history.demo_vars, history.nodes,
         * the [history NAME] sections) and every NodeSet variable. */
        if (c->history_enabled) {
            uint32_t sections = c->histnodes != NULL ? c->histnodes->n : 0;

            bk_histnode_plan(BK_SIM_MAX + nc.slots
                                 + (uint32_t)strlen(c->history_nodes) / 2
                                 + 1 + c->history_demo_vars + sections,
                             nc.strings + strlen(c->history_nodes)
                                 + 64 * BK_SIM_MAX
                                 + 16 * (uint64_t)c->history_demo_vars
                                 + (uint64_t)sections * BK_HISTCFG_ID_MAX,
                             &p);
        }
        p.nodes += nc.nodes;
        p.refs += 2 * nc.refs;
        p.strings += nc.strings + 8 * (uint64_t)nc.nodes;
        p.slots += nc.slots;
        bk_histconf_plan(c, nc.historizing, &p);
        /* The NamespaceArray grows by a string per namespace. */
        p.vheap += nc.vheap + 4096
                   + 2 * (uint64_t)bk_nodeset_nuris(as->nodesets) * 256;
    }
    /* The build writes the estimate's values; value_heap_mb is room for
     * the values to come (and is not populated: shm/plan.c). */
    p.vheap_build = p.vheap - (uint64_t)c->value_heap_mb * 1024 * 1024;
    rc = shm_plan_create(&as->seg, &p, "uabroker");
    if (rc != 0) {
        snprintf(err, errlen, "shared memory (%zu bytes): %s",
                 shm_plan_size(&p), strerror(-rc));
        bk_nodeset_free(as->nodesets);
        as->nodesets = NULL;
        return -1;
    }
    /* The pool's pages while the build runs (see the top of this file);
     * without a thread, the fan-out's first blocks fault them in. */
    as->prefaulting = pthread_create(&as->prefault, NULL, bk_as_prefault_run,
                                     &as->seg) == 0;
    if (shm_nodestore_build_init(&as->ns, &as->seg) != 0
        || shm_values_open(&as->vals, &as->seg) != 0
        || bk_value_init(&as->val, &as->seg) != 0) {
        snprintf(err, errlen, "address space: out of memory");
        goto fail;
    }
    /* Every initial value in one batch (nobody to tell yet). */
    bk_value_batch_begin(&as->val);
    rc = bk_as_build_ns0(as, now, err, errlen);
    if (rc < 0 || bk_as_build_demo(as, c, (uint32_t)rc, now, err, errlen) != 0)
        goto fail;
    {
        uint32_t slot = as->vars_slot_first + as->vars;

        struct bk_alarmnset nsa;
        uint32_t            ncfg = c->alarms != NULL ? c->alarms->n : 0;

        if (bk_nsbuild_add(as->nodesets, &as->ns, &slot, err, errlen)
            != 0) {
            as->nodeset_failed = true;
            goto fail;
        }
        /* The files' alarm instances, then the sections' alarms. */
        if (bk_alarmnset_find(&nsa, as->nodesets, &as->ns,
                              c->alarms_max > ncfg ? c->alarms_max - ncfg
                                                   : 0,
                              bk_as_alarm_refused, as, err, errlen) != 0) {
            as->nodeset_failed = true;
            goto fail;
        }
        rc = bk_alarmnode_add(&as->alarms, c->alarms, nsa.ad, nsa.n,
                              &nsa.kids, &as->ns, &slot, err, errlen);
        bk_alarmnset_free(&nsa);
        if (rc != 0) {
            as->nodeset_failed = true;
            goto fail;
        }
        {
            struct bk_histconf_demo demo = { as->sim_node, BK_SIM_MAX,
                                             as->ns1_vars_first };

            /* What is historized, and how (a configuration error when it
             * names no variable). */
            if (bk_histconf_add(&as->ns, &as->val, c, &demo, &slot, now, err,
                                errlen) != 0) {
                as->nodeset_failed = true;
                goto fail;
            }
        }
    }
    /* The historized variables' Annotations Properties (nodes: before
     * the store is finished; bk_histconf_add marked them). */
    if (c->history_enabled && bk_histnode_add(&as->ns, err, errlen) < 0)
        goto fail;
    if (c->history_enabled && c->history_events)
        bk_as_history_notifiers(as);
    if (shm_nodestore_finish(&as->ns) != 0) {
        snprintf(err, errlen, "address space: references do not fit, or "
                 "more than %d reference types", SHM_REFTYPES_MAX);
        /* Only the nodesets can add reference types. */
        as->nodeset_failed = c->nodesets[0] != '\0';
        goto fail;
    }
    if (bk_nsbuild_values(as->nodesets, &as->ns, &as->val, now, err,
                          errlen) != 0) {
        as->nodeset_failed = true;
        goto fail;
    }
    if (bk_alarmnode_start(&as->alarms, &as->ns, &as->val, now, err, errlen)
        != 0)
        goto fail;
    bk_config_snapshot(c, shm_segment_region(&as->seg, SHM_R_CONFIG));
    if (bk_as_throttle_init(as, c, err, errlen) != 0)
        goto fail;
    if (bk_server_init(&as->server, &as->ns, &as->val, &as->seg, c,
                       as->nodesets, now) != 0) {
        snprintf(err, errlen, "address space: Server values do not fit");
        goto fail;
    }
    bk_value_batch_end(&as->val);
    bk_nodeset_free(as->nodesets);
    as->nodesets = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    as->build_seconds = (double)(t1.tv_sec - t0.tv_sec)
                        + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return 0;
fail:
    if (as->val.open)
        bk_value_batch_end(&as->val);
    bk_nodeset_free(as->nodesets);
    as->nodesets = NULL;
    bk_alarmnode_clear(&as->alarms);
    shm_nodestore_build_abort(&as->ns);
    bk_as_prefault_join(as);
    shm_segment_close(&as->seg);
    return -1;
}

void
bk_addrspace_close(struct bk_addrspace *as)
{
    bk_alarmnode_clear(&as->alarms);
    bk_as_prefault_join(as);
    shm_segment_close(&as->seg);
}

uint32_t
bk_addrspace_lookup(const struct shm_nodestore *ns, const struct ua_nodeid *id)
{
    struct shm_nodekey k = { .ns = id->ns, .idtype = id->idtype };

    if (id->idtype == UA_IDTYPE_NUMERIC) {
        k.num = id->id.num;
    } else if (id->idtype == UA_IDTYPE_GUID) {
        k.bytes = (const uint8_t *)&id->id.guid;
        k.len = sizeof(id->id.guid);
    } else {
        k.bytes = id->id.str.data;
        k.len = (uint32_t)(id->id.str.len > 0 ? id->id.str.len : 0);
    }
    return shm_nodestore_lookup(ns, &k);
}
