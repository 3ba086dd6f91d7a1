/*
 * broker/addrspace.c: the address-space build and the live Server nodes.
 *
 * Order of the build: namespace 0 exactly as generated (node index i is
 * bk_ns0_nodes[i]), its references, then namespace 1: Objects/Demo with
 * Static (every built-in type, scalar and array), Analog (AnalogItemType
 * variables with EURange and EngineeringUnits), Simulation and Vars.
 * Every Variable and VariableType gets a value slot holding its encoded
 * Variant.  Last, the live Server nodes are written from the configuration.
 */
#include "addrspace.h"
#include "pki.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "fanout.h"
#include "nodeset.h"
#include "ns0_gen.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "proto/version.h"
#include "shm/throttle.h"
#include "write.h"

#define BK_NS0_URI        "http://opcfoundation.org/UA/"
#define BK_ENC_BUF        (64 * 1024)
#define BK_DEMO_FOLDERS   7
#define BK_DEMO_BUILTINS  25
#define BK_DEMO_ANALOG    3     /* AnalogItems, each with 2 properties */

static int bk_as_ns0_index(uint32_t id);
static uint32_t bk_as_str(struct bk_addrspace *as, const char *s);
static int bk_as_build_ns0(struct bk_addrspace *as, int64_t now, char *err,
                           size_t errlen);
static int bk_as_build_demo(struct bk_addrspace *as,
                            const struct bk_config *c, uint32_t slot,
                            int64_t now, char *err, size_t errlen);
static int bk_as_live_init(struct bk_addrspace *as, const struct bk_config *c,
                           int64_t now);
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

static uint8_t bk_as_encbuf[BK_ENC_BUF];

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

uint32_t
bk_addrspace_ns0_slot(const struct bk_addrspace *as, uint32_t id)
{
    int i = bk_as_ns0_index(id);
    const struct shm_node *n;

    if (i < 0 || (uint32_t)i >= as->ns.nnodes)
        return SHM_NONE;
    n = &as->ns.nodes[i];
    if (n->node_class != SHM_NC_VARIABLE
        && n->node_class != SHM_NC_VARIABLETYPE)
        return SHM_NONE;
    return n->u.var.slot;
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
    p->ring_workers = c->workers;
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
}

int
bk_addrspace_write_value(struct bk_addrspace *as, uint32_t slot,
                         const void *bytes, uint32_t len,
                         const struct shm_value *m)
{
    const struct shm_value *use = m;
    struct shm_value        mm;
    int64_t                 prev;
    int                     rc;

    if (slot >= as->vals.nslots)
        return -EINVAL;
    if (m->flags & SHM_VF_SERVER_TS) {
        /* Only the broker writes slots: a relaxed load of our own store. */
        prev = atomic_load_explicit(&as->vals.slots[slot].server_ts,
                                    memory_order_relaxed);
        if (m->server_ts <= prev) {
            /* A copy only then: the caller has just stored *m field by
             * field, and a whole-struct load of it stalls. */
            mm = *m;
            mm.server_ts = prev + 1;
            mm.server_ps = 0;
            use = &mm;
        }
    }
    rc = shm_value_write(&as->vals, slot, bytes, len, use);
    if (rc == 0 && as->fanout != NULL)
        bk_fanout_notify(as->fanout, slot, bytes, len, use);
    return rc;
}

/*
 * bk_addrspace_write_small() past its inline case: the slot's old value
 * lives in the heap (store) or the change cannot wait in the pending
 * array (notify only, the slot is written).
 */
int
bk_addrspace_write_small_any(struct bk_addrspace *as, uint32_t slot,
                             const uint8_t *bytes, uint32_t len, int64_t now,
                             int64_t sts, bool store)
{
    struct shm_value m = { 0 };

    m.status = UA_GOOD;
    m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    m.source_ts = now;
    m.server_ts = sts;
    m.len = len;
    if (store)
        return bk_addrspace_write_value(as, slot, bytes, len, &m);
    bk_fanout_notify(as->fanout, slot, bytes, len, &m);
    return 0;
}

int
bk_addrspace_write_raw(struct bk_addrspace *as, uint32_t slot,
                       const void *bytes, uint32_t len, int64_t now)
{
    struct shm_value m = { 0 };

    m.status = UA_GOOD;
    m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    m.source_ts = now;
    m.server_ts = now;
    return bk_addrspace_write_value(as, slot, bytes, len, &m);
}

static int
bk_as_write_variant(struct bk_addrspace *as, uint32_t slot,
                    const struct ua_variant *v, int64_t now)
{
    size_t len;

    if (slot == SHM_NONE)
        return -EINVAL;
    if (ua_encode(v, &ua_types[UA_TYPE_VARIANT], bk_as_encbuf,
                  sizeof(bk_as_encbuf), &len) != UA_GOOD)
        return -EINVAL;
    return bk_addrspace_write_raw(as, slot, bk_as_encbuf, (uint32_t)len, now);
}

int
bk_addrspace_write_scalar(struct bk_addrspace *as, uint32_t slot, uint8_t bt,
                          const void *value, int64_t now)
{
    struct ua_variant v;

    ua_variant_set_scalar(&v, (void *)(uintptr_t)value, bt);
    return bk_as_write_variant(as, slot, &v, now);
}

int
bk_addrspace_write_array(struct bk_addrspace *as, uint32_t slot, uint8_t bt,
                         const void *values, int32_t n, int64_t now)
{
    struct ua_variant v;

    ua_variant_set_array(&v, (void *)(uintptr_t)values, n, bt);
    return bk_as_write_variant(as, slot, &v, now);
}

/* An ExtensionObject of a generated structure type as a scalar value. */
static int
bk_as_write_struct(struct bk_addrspace *as, uint32_t slot, int type,
                   void *obj, int64_t now)
{
    struct ua_extobj x = { 0 };

    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[type];
    x.obj = obj;
    x.type_id = ua_nodeid_num(0, ua_types[type].binary_id);
    return bk_addrspace_write_scalar(as, slot, UA_BT_EXTENSIONOBJECT, &x, now);
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
            if (bk_addrspace_write_raw(as, slot, bk_ns0_values + g->value,
                                       g->value_len, now) != 0) {
                snprintf(err, errlen, "ns=0;i=%u: value heap full", g->id);
                return -1;
            }
        } else {
            bk_addrspace_write_raw(as, slot, &null_variant, 1, now);
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
        if (bk_addrspace_write_scalar(as, slot, an[i].bt, val, now) != 0)
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
                rc = bk_as_write_struct(as, slot, UA_TYPE_RANGE, &rg, now);
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
                rc = bk_as_write_struct(as, slot, UA_TYPE_EUINFORMATION, &eu,
                                        now);
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
                rc = a ? bk_addrspace_write_array(as, slot, bt, vv, 3, now)
                       : bk_addrspace_write_scalar(as, slot, UA_BT_INT32,
                                                   &iv, now);
            } else if (a) {
                rc = bk_addrspace_write_array(as, slot, bt, samples, 3, now);
            } else {
                rc = bk_addrspace_write_scalar(as, slot, bt, samples, now);
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
        rc = i == BK_SIM_COUNTER
                 ? bk_addrspace_write_scalar(as, slot, UA_BT_UINT32, &u, now)
                 : bk_addrspace_write_scalar(as, slot, UA_BT_DOUBLE, &d, now);
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

            rc = bk_addrspace_write_scalar(as, slot, UA_BT_DOUBLE, &d, now);
        } else {
            int32_t x = (int32_t)v;

            rc = bk_addrspace_write_scalar(as, slot, UA_BT_INT32, &x, now);
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
 * BuildInfo.BuildDate: when this binary was compiled, from __DATE__ and
 * __TIME__ ("Nov 30 2026", "20:36:48", the compiler's local time, taken as
 * UTC).  0 if the strings are not in that form.
 */
static int64_t
bk_as_build_date(void)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char       *d = __DATE__, *t = __TIME__;
    struct tm         tm;
    const char       *m;
    time_t            secs;

    memset(&tm, 0, sizeof(tm));
    m = strstr(months, (char[4]){ d[0], d[1], d[2], '\0' });
    if (m == NULL || sscanf(d + 4, "%d %d", &tm.tm_mday, &tm.tm_year) != 2
        || sscanf(t, "%d:%d:%d", &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 3)
        return 0;
    tm.tm_mon = (int)(m - months) / 3;
    tm.tm_year -= 1900;
    secs = timegm(&tm);
    return (int64_t)secs * 10000000 + UA_DATETIME_UNIX_EPOCH;
}

/* ServerStatus as one structure value and as its children. */
static void
bk_as_status(struct bk_addrspace *as, int64_t now)
{
    struct ua_server_status_data_type st;
    static struct ua_string           pu, mn, pn, sv, bn;
    int64_t                           build = bk_as_build_date();
    uint32_t                          zero = 0;
    int32_t                           running = 0;
    struct ua_localizedtext           reason = { 0 };

    pu = ua_string_from(UA_PRODUCT_URI);
    mn = ua_string_from(UA_MANUFACTURER);
    pn = ua_string_from(UA_PRODUCT_NAME);
    sv = ua_string_from(UA_VERSION);
    bn = ua_string_from(UA_VERSION);
    memset(&st, 0, sizeof(st));
    st.start_time = as->start_time;
    st.current_time = now;
    st.state = running;
    st.build_info.product_uri = pu;
    st.build_info.manufacturer_name = mn;
    st.build_info.product_name = pn;
    st.build_info.software_version = sv;
    st.build_info.build_number = bn;
    st.build_info.build_date = build;
    st.shutdown_reason = reason;
    bk_as_write_struct(as, bk_addrspace_ns0_slot(as,
                       UA_NS0ID_SERVER_SERVERSTATUS),
                       UA_TYPE_SERVERSTATUSDATATYPE, &st, now);
    bk_as_write_struct(as, bk_addrspace_ns0_slot(as,
                       UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO),
                       UA_TYPE_BUILDINFO, &st.build_info, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                              UA_NS0ID_SERVER_SERVERSTATUS_STARTTIME),
                              UA_BT_DATETIME, &st.start_time, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                              UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME),
                              UA_BT_DATETIME, &now, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                              UA_NS0ID_SERVER_SERVERSTATUS_STATE),
                              UA_BT_INT32, &running, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                              UA_NS0ID_SERVER_SERVERSTATUS_SECONDSTILLSHUTDOWN),
                              UA_BT_UINT32, &zero, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                              UA_NS0ID_SERVER_SERVERSTATUS_SHUTDOWNREASON),
                              UA_BT_LOCALIZEDTEXT, &reason, now);
#define BK_BI(id, bt, v)                                                   \
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as, id), bt, v, now)
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_PRODUCTURI, UA_BT_STRING,
          &pu);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_MANUFACTURERNAME,
          UA_BT_STRING, &mn);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_PRODUCTNAME, UA_BT_STRING,
          &pn);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_SOFTWAREVERSION,
          UA_BT_STRING, &sv);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_BUILDNUMBER, UA_BT_STRING,
          &bn);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_BUILDDATE, UA_BT_DATETIME,
          &build);
#undef BK_BI
}

static int
bk_as_live_init(struct bk_addrspace *as, const struct bk_config *c,
                int64_t now)
{
    struct ua_string *ns, locale = ua_string_from("en");
    uint32_t         nns = 2;
    struct ua_server_diagnostics_summary_data_type diag;
    uint8_t          service_level = 255;
    uint16_t         cps = (uint16_t)c->max_browse_continuation_points;
    uint16_t         zero16 = 0;
    double           min_rate = c->min_sampling_interval_ms;
    uint32_t         zero = 0;
    static const struct { uint32_t id; size_t off; } lim[] = {
#define BK_L(id, f) { id, offsetof(struct bk_config, f) }
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXARRAYLENGTH,
             max_array_length),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSTRINGLENGTH,
             max_string_length),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXBYTESTRINGLENGTH,
             max_bytestring_length),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSESSIONS, max_sessions),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSUBSCRIPTIONS,
             max_subscriptions),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMS,
             max_monitored_items),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSUBSCRIPTIONSPERSESSION,
             max_subscriptions_per_session),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMSPERSUBSCRIPTION,
             max_monitored_items_per_subscription),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERREAD,
             max_nodes_per_read),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERWRITE,
             max_nodes_per_write),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERMETHODCALL,
             max_nodes_per_method_call),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERBROWSE,
             max_nodes_per_browse),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERREGISTERNODES,
             max_nodes_per_register_nodes),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERTRANSLATEBROWSEPATHSTONODEIDS,
             max_nodes_per_translate),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXMONITOREDITEMSPERCALL,
             max_monitored_items_per_call),
#undef BK_L
    };
    /* Services we do not offer: a limit of 0 says "none" (Part 5). */
    static const uint32_t none[] = {
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYREADDATA,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYREADEVENTS,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYUPDATEDATA,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYUPDATEEVENTS,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERNODEMANAGEMENT,
    };

    /* 0, 1 (this server), then the nodesets' namespaces in order. */
    if (as->nodesets != NULL)
        nns += bk_nodeset_nuris(as->nodesets);
    ns = calloc(nns, sizeof(*ns));
    if (ns == NULL)
        return -1;
    ns[0] = ua_string_from(BK_NS0_URI);
    ns[1] = ua_string_from(c->application_uri);
    for (uint32_t i = 2; i < nns; i++)
        ns[i] = ua_string_from(bk_nodeset_uri(as->nodesets, i - 2));
    if (bk_addrspace_write_array(as, bk_addrspace_ns0_slot(as,
                                 UA_NS0ID_SERVER_NAMESPACEARRAY),
                                 UA_BT_STRING, ns, (int32_t)nns, now) != 0
        || bk_addrspace_write_array(as, bk_addrspace_ns0_slot(as,
                                    UA_NS0ID_SERVER_SERVERARRAY),
                                    UA_BT_STRING, &ns[1], 1, now) != 0) {
        free(ns);
        return -1;
    }
    free(ns);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                              UA_NS0ID_SERVER_SERVICELEVEL), UA_BT_BYTE,
                              &service_level, now);
    {
        bool auditing = c->events_audit;    /* Server.Auditing (i=2994) */

        bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                                  UA_NS0ID_SERVER_AUDITING), UA_BT_BOOLEAN,
                                  &auditing, now);
    }
    bk_as_status(as, now);
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
        const uint32_t *v = (const uint32_t *)((const char *)c + lim[i].off);

        bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as, lim[i].id),
                                  UA_BT_UINT32, v, now);
    }
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
        bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as, none[i]),
                                  UA_BT_UINT32, &zero, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMSQUEUESIZE),
        UA_BT_UINT32, &c->max_monitored_item_queue_size, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXBROWSECONTINUATIONPOINTS),
        UA_BT_UINT16, &cps, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXQUERYCONTINUATIONPOINTS),
        UA_BT_UINT16, &zero16, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXHISTORYCONTINUATIONPOINTS),
        UA_BT_UINT16, &zero16, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_MINSUPPORTEDSAMPLERATE),
        UA_BT_DOUBLE, &min_rate, now);
    bk_addrspace_write_array(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_LOCALEIDARRAY), UA_BT_STRING,
        &locale, 1, now);
    bk_addrspace_write_array(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_SERVERPROFILEARRAY), UA_BT_STRING,
        NULL, 0, now);
    bk_addrspace_write_array(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_SOFTWARECERTIFICATES),
        UA_BT_EXTENSIONOBJECT, NULL, 0, now);
    /* ServerDiagnosticsSummary: zero until workers report (issue 4). */
    memset(&diag, 0, sizeof(diag));
    bk_as_write_struct(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY),
        UA_TYPE_SERVERDIAGNOSTICSSUMMARYDATATYPE, &diag, now);
    {
        static const uint32_t counters[] = {
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SERVERVIEWCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CUMULATEDSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SECURITYREJECTEDSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SESSIONTIMEOUTCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SESSIONABORTCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_PUBLISHINGINTERVALCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSUBSCRIPTIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CUMULATEDSUBSCRIPTIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SECURITYREJECTEDREQUESTSCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDREQUESTSCOUNT,
        };

        for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
            bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
                                      counters[i]), UA_BT_UINT32, &zero, now);
    }
    return 0;
}

/*
 * ServerDiagnosticsSummary from the workers' rows (summed; a respawned
 * worker starts its counters again).  Fields we do not count stay 0.
 */
static void
bk_as_diagnostics(struct bk_addrspace *as, int64_t now)
{
    const struct shm_worker *rows = shm_segment_region(&as->seg,
                                                       SHM_R_WORKERS);
    struct ua_server_diagnostics_summary_data_type d;
    uint64_t sessions = 0, rejected = 0;

    for (int i = 0; i < SHM_WORKERS_MAX; i++) {
        if (atomic_load_explicit(&rows[i].state, memory_order_relaxed)
            == SHM_WS_EMPTY)
            continue;
        sessions += atomic_load_explicit(&rows[i].sessions,
                                         memory_order_relaxed);
        rejected += atomic_load_explicit(&rows[i].bad_requests,
                                         memory_order_relaxed);
    }
    /* Write only changes: a watched value should not tick for nothing. */
    if (as->diag_last[0] == sessions + 1 && as->diag_last[1] == rejected + 1)
        return;
    as->diag_last[0] = sessions + 1;
    as->diag_last[1] = rejected + 1;
    memset(&d, 0, sizeof(d));
    d.current_session_count = (uint32_t)sessions;
    d.rejected_requests_count = (uint32_t)rejected;
    bk_as_write_struct(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY),
        UA_TYPE_SERVERDIAGNOSTICSSUMMARYDATATYPE, &d, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSESSIONCOUNT),
        UA_BT_UINT32, &d.current_session_count, now);
    bk_addrspace_write_scalar(as, bk_addrspace_ns0_slot(as,
        UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDREQUESTSCOUNT),
        UA_BT_UINT32, &d.rejected_requests_count, now);
}

void
bk_addrspace_tick(struct bk_addrspace *as, int64_t now)
{
    uint32_t slot = bk_addrspace_ns0_slot(as,
                                          UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);

    bk_addrspace_write_scalar(as, slot, UA_BT_DATETIME, &now, now);
    bk_as_status(as, now);
    bk_as_diagnostics(as, now);
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
    as->start_time = now;
    /* The nodesets first: the segment is planned with their counts. */
    if (bk_nodeset_load(&as->nodesets, c->nodesets, c->application_uri,
                        c->max_nodeset_nodes, err, errlen) != 0) {
        as->nodeset_failed = true;
        bk_nodeset_free(as->nodesets);
        as->nodesets = NULL;
        return -1;
    }
    bk_addrspace_plan(c, &p);
    {
        struct bk_nodeset_counts nc;

        bk_nodeset_counts(as->nodesets, &nc);
        p.nodes += nc.nodes;
        p.refs += 2 * nc.refs;
        p.strings += nc.strings + 8 * (uint64_t)nc.nodes;
        p.slots += nc.slots;
        /* The NamespaceArray grows by a string per namespace. */
        p.vheap += nc.vheap + 4096
                   + 2 * (uint64_t)bk_nodeset_nuris(as->nodesets) * 256;
    }
    rc = shm_segment_create(&as->seg, &p, "uabroker");
    if (rc != 0) {
        snprintf(err, errlen, "shared memory (%zu bytes): %s",
                 shm_segment_size(&p), strerror(-rc));
        bk_nodeset_free(as->nodesets);
        as->nodesets = NULL;
        return -1;
    }
    if (shm_nodestore_build_init(&as->ns, &as->seg) != 0
        || shm_values_open(&as->vals, &as->seg) != 0) {
        snprintf(err, errlen, "address space: out of memory");
        goto fail;
    }
    rc = bk_as_build_ns0(as, now, err, errlen);
    if (rc < 0 || bk_as_build_demo(as, c, (uint32_t)rc, now, err, errlen) != 0)
        goto fail;
    {
        uint32_t slot = as->vars_slot_first + as->vars;

        if (bk_nodeset_add(as->nodesets, as, &slot, err, errlen) != 0) {
            as->nodeset_failed = true;
            goto fail;
        }
    }
    if (shm_nodestore_finish(&as->ns) != 0) {
        snprintf(err, errlen, "address space: references do not fit, or "
                 "more than %d reference types", SHM_REFTYPES_MAX);
        /* Only the nodesets can add reference types. */
        as->nodeset_failed = c->nodesets[0] != '\0';
        goto fail;
    }
    if (bk_nodeset_values(as->nodesets, as, now, err, errlen) != 0) {
        as->nodeset_failed = true;
        goto fail;
    }
    bk_config_snapshot(c, shm_segment_region(&as->seg, SHM_R_CONFIG));
    if (bk_as_throttle_init(as, c, err, errlen) != 0)
        goto fail;
    if (bk_as_live_init(as, c, now) != 0) {
        snprintf(err, errlen, "address space: Server values do not fit");
        goto fail;
    }
    if (bk_write_nodes_build(as) != 0) {
        snprintf(err, errlen, "address space: out of memory");
        goto fail;
    }
    bk_nodeset_free(as->nodesets);
    as->nodesets = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    as->build_seconds = (double)(t1.tv_sec - t0.tv_sec)
                        + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return 0;
fail:
    bk_nodeset_free(as->nodesets);
    as->nodesets = NULL;
    shm_nodestore_build_abort(&as->ns);
    shm_segment_close(&as->seg);
    return -1;
}

void
bk_addrspace_close(struct bk_addrspace *as)
{
    free(as->wnodes);
    as->wnodes = NULL;
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
