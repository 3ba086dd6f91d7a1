/*
 * broker/alarmnset.c: alarm instances of the imported NodeSets
 * (alarmnset.h).
 *
 * One pass over the node store's pending references (every reference of
 * the files is there by now, forward, in node indices) gathers what the
 * search needs: each file node's TypeDefinition, its first hierarchical
 * parent and the Object that HasCondition it, each type's supertype, and
 * the files' (parent, child) pairs, sorted (struct bk_alarmnode_kids, also
 * what the build reads to find an instance's own variables).  Then each
 * Object of the files is classified by its type's supertype chain, and an
 * instance's properties are read from the parsed set's encoded values.
 *
 * The files' nodes are the store's nodes base .. base + nnodes - 1, in
 * set order (broker/nsbuild.c adds them so); checked, not assumed.
 * Broker only, at the build; the temporary tables are freed before
 * return.
 */
#include "alarmnset.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "nodeset_int.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define BK_ANS_DEPTH 64         /* supertype steps followed */
#define BK_ANS_WHY   512

/* What a type makes of an instance. */
enum bk_ans_kind {
    BK_ANS_NONE = 0, BK_ANS_EXCL, BK_ANS_NONEXCL, BK_ANS_OFFNORMAL,
    BK_ANS_DISCRETE, BK_ANS_UNSUPPORTED
};

/* The namespace-0 types the chains end in, first match wins. */
static const struct {
    uint32_t id;
    uint8_t  kind;
} bk_ans_types[] = {
    { UA_NS0ID_EXCLUSIVEDEVIATIONALARMTYPE, BK_ANS_UNSUPPORTED },
    { UA_NS0ID_EXCLUSIVERATEOFCHANGEALARMTYPE, BK_ANS_UNSUPPORTED },
    { UA_NS0ID_NONEXCLUSIVEDEVIATIONALARMTYPE, BK_ANS_UNSUPPORTED },
    { UA_NS0ID_NONEXCLUSIVERATEOFCHANGEALARMTYPE, BK_ANS_UNSUPPORTED },
    { UA_NS0ID_EXCLUSIVELIMITALARMTYPE, BK_ANS_EXCL },
    { UA_NS0ID_NONEXCLUSIVELIMITALARMTYPE, BK_ANS_NONEXCL },
    { UA_NS0ID_OFFNORMALALARMTYPE, BK_ANS_OFFNORMAL },
    { UA_NS0ID_DISCRETEALARMTYPE, BK_ANS_DISCRETE },
};
#define BK_ANS_NTYPES (sizeof(bk_ans_types) / sizeof(bk_ans_types[0]))

/* Their namespace-0 subtypes (for the count, before the node store). */
static const uint32_t bk_ans_subtypes[] = {
    UA_NS0ID_EXCLUSIVELEVELALARMTYPE, UA_NS0ID_NONEXCLUSIVELEVELALARMTYPE,
    UA_NS0ID_TRIPALARMTYPE, UA_NS0ID_SYSTEMOFFNORMALALARMTYPE,
    UA_NS0ID_CERTIFICATEEXPIRATIONALARMTYPE,
    UA_NS0ID_INSTRUMENTDIAGNOSTICALARMTYPE,
    UA_NS0ID_SYSTEMDIAGNOSTICALARMTYPE,
};

/* The search's tables. */
struct bk_ans {
    const struct bk_nodeset    *s;
    const struct shm_nodestore *ns;
    uint32_t                    base;       /* store index of set node 0 */
    uint32_t                   *tdef;       /* [set] TypeDefinition */
    uint32_t                   *parent;     /* [set] hierarchical parent */
    uint32_t                   *condsrc;    /* [set] HasCondition source */
    uint32_t                   *super;      /* [store] supertype */
    uint32_t                    types[BK_ANS_NTYPES];  /* store indices */
    uint8_t                     abuf[4096]; /* a decoded value */
};

static uint32_t bk_ans_ns0(const struct shm_nodestore *ns, uint32_t id);
static bool bk_ans_id_is(const struct bk_nsx_id *id, uint32_t num);
static int bk_ans_kind_cmp(const void *a, const void *b);
static int bk_ans_tables(struct bk_ans *x, struct bk_alarmnode_kids *kids);
static uint8_t bk_ans_kind(const struct bk_ans *x, uint32_t type);
static const struct bk_nsx_node *bk_ans_set(const struct bk_ans *x,
                                            uint32_t node);
static bool bk_ans_value(struct bk_ans *x, const struct bk_alarmnode_kids *k,
                         uint32_t cond, const char *name,
                         struct ua_variant *v);
static bool bk_ans_number(const struct ua_variant *v, double *d);
static uint32_t bk_ans_store(const struct shm_nodestore *ns,
                             const struct ua_nodeid *id);
static void bk_ans_key(const struct shm_nodestore *ns, uint32_t node,
                       char *out, size_t cap);
static const char *bk_ans_instance(struct bk_ans *x,
                                   const struct bk_alarmnode_kids *kids,
                                   uint32_t i, uint8_t kind,
                                   struct bk_alarmnode_adopt *ad,
                                   char *why, size_t whylen);

static uint32_t
bk_ans_ns0(const struct shm_nodestore *ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(ns, &k);
}

static bool
bk_ans_id_is(const struct bk_nsx_id *id, uint32_t num)
{
    return id->ns == 0 && id->idtype == SHM_ID_NUMERIC && id->num == num;
}

/* ------------------------------------------------------------ the count */

uint32_t
bk_alarmnset_count(const struct bk_nodeset *s)
{
    uint32_t direct = 0, custom = 0;
    bool     alarm_types = false;

    if (s == NULL)
        return 0;
    for (uint32_t i = 0; i < s->nrefs; i++) {
        const struct bk_nsx_ref *r = &s->refs[i];
        bool                     ours = false;

        for (size_t t = 0; t < BK_ANS_NTYPES; t++)
            if (bk_ans_id_is(&r->target, bk_ans_types[t].id))
                ours = true;
        for (size_t t = 0; t < sizeof(bk_ans_subtypes) / 4; t++)
            if (bk_ans_id_is(&r->target, bk_ans_subtypes[t]))
                ours = true;
        if (bk_ans_id_is(&r->type, UA_NS0ID_HASSUBTYPE) && ours)
            alarm_types = true;
        if (!bk_ans_id_is(&r->type, UA_NS0ID_HASTYPEDEFINITION)
            || !r->forward
            || s->nodes[r->src].node_class != SHM_NC_OBJECT)
            continue;
        if (ours)
            direct++;
        else if (r->target.ns != 0)
            custom++;
    }
    /* Objects of the files' own types count only when the files
     * subtype an alarm type. */
    return direct + (alarm_types ? custom : 0);
}

/* ------------------------------------------------------------ tables */

static int
bk_ans_kind_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The tables of x and the sorted children kids from the pending
 * references.  0 or -1 (out of memory). */
static int
bk_ans_tables(struct bk_ans *x, struct bk_alarmnode_kids *kids)
{
    const struct shm_nodestore *ns = x->ns;
    uint32_t nset = x->s->nnodes;
    uint32_t td = bk_ans_ns0(ns, UA_NS0ID_HASTYPEDEFINITION);
    uint32_t st = bk_ans_ns0(ns, UA_NS0ID_HASSUBTYPE);
    uint32_t hcond = bk_ans_ns0(ns, UA_NS0ID_HASCONDITION);
    uint32_t hier[4] = {
        bk_ans_ns0(ns, UA_NS0ID_HASCOMPONENT),
        bk_ans_ns0(ns, UA_NS0ID_HASORDEREDCOMPONENT),
        bk_ans_ns0(ns, UA_NS0ID_HASPROPERTY),
        bk_ans_ns0(ns, UA_NS0ID_ORGANIZES)
    };
    uint32_t nk = 0;

    x->tdef = bk_alloc((size_t)nset * 4);
    x->parent = bk_alloc((size_t)nset * 4);
    x->condsrc = bk_alloc((size_t)nset * 4);
    x->super = bk_alloc((size_t)ns->nnodes * 4);
    if (x->tdef == NULL || x->parent == NULL || x->condsrc == NULL
        || x->super == NULL)
        return -1;
    memset(x->tdef, 0xFF, (size_t)nset * 4);
    memset(x->parent, 0xFF, (size_t)nset * 4);
    memset(x->condsrc, 0xFF, (size_t)nset * 4);
    memset(x->super, 0xFF, (size_t)ns->nnodes * 4);
    for (uint32_t i = 0; i < ns->npending; i++) {
        const struct shm_pending_ref *p = &ns->pending[i];
        bool src_in = p->src - x->base < nset;
        bool dst_in = p->dst - x->base < nset;
        bool h = p->reftype_node == hier[0] || p->reftype_node == hier[1]
                 || p->reftype_node == hier[2] || p->reftype_node == hier[3];

        if (p->reftype_node == st && p->dst < ns->nnodes)
            x->super[p->dst] = p->src;
        else if (p->reftype_node == td && src_in)
            x->tdef[p->src - x->base] = p->dst;
        else if (p->reftype_node == hcond && dst_in
                 && x->condsrc[p->dst - x->base] == SHM_NONE)
            x->condsrc[p->dst - x->base] = p->src;
        else if (h && (src_in || dst_in)) {
            if (dst_in && x->parent[p->dst - x->base] == SHM_NONE
                && p->reftype_node != hier[2]
                && ns->nodes[p->src].node_class == SHM_NC_OBJECT)
                x->parent[p->dst - x->base] = p->src;
            if (src_in)
                nk++;
        }
    }
    kids->e = bk_alloc(((size_t)nk + 1) * sizeof(*kids->e));
    if (kids->e == NULL)
        return -1;
    kids->n = 0;
    for (uint32_t i = 0; i < ns->npending; i++) {
        const struct shm_pending_ref *p = &ns->pending[i];

        if (p->src - x->base < nset
            && (p->reftype_node == hier[0] || p->reftype_node == hier[1]
                || p->reftype_node == hier[2] || p->reftype_node == hier[3])) {
            kids->e[kids->n][0] = p->src;
            kids->e[kids->n++][1] = p->dst;
        }
    }
    qsort(kids->e, kids->n, sizeof(*kids->e), bk_ans_kind_cmp);
    for (size_t t = 0; t < BK_ANS_NTYPES; t++)
        x->types[t] = bk_ans_ns0(ns, bk_ans_types[t].id);
    return 0;
}

/* What type makes of its instances: its chain of supertypes up to one of
 * bk_ans_types. */
static uint8_t
bk_ans_kind(const struct bk_ans *x, uint32_t type)
{
    for (int d = 0; d < BK_ANS_DEPTH && type != SHM_NONE; d++) {
        for (size_t t = 0; t < BK_ANS_NTYPES; t++)
            if (x->types[t] == type)
                return bk_ans_types[t].kind;
        type = x->super[type];
    }
    return BK_ANS_NONE;
}

/* ------------------------------------------------------------ values */

/* The set's node of store node node, or NULL (not of the files). */
static const struct bk_nsx_node *
bk_ans_set(const struct bk_ans *x, uint32_t node)
{
    return node != SHM_NONE && node - x->base < x->s->nnodes
               ? &x->s->nodes[node - x->base]
               : NULL;
}

/* The value of cond's property 0:name, decoded into v (x->abuf): false
 * when it has none, or no value. */
static bool
bk_ans_value(struct bk_ans *x, const struct bk_alarmnode_kids *k,
             uint32_t cond, const char *name, struct ua_variant *v)
{
    const struct bk_nsx_node *g = bk_ans_set(
        x, bk_alarmnode_kid(k, x->ns, cond, 0, name));
    struct ua_arena a;

    if (g == NULL || g->node_class != SHM_NC_VARIABLE || !g->has_value)
        return false;
    ua_arena_init(&a, x->abuf, sizeof(x->abuf));
    return ua_decode(x->s->heap + g->value, g->value_len, NULL, v,
                     &ua_types[UA_TYPE_VARIANT], &a, &ua_limits_default)
               == UA_GOOD
           && v->type != 0 && !v->is_array && v->data != NULL;
}

/* A scalar number Variant as a double. */
static bool
bk_ans_number(const struct ua_variant *v, double *d)
{
    const void *p = v->data;

    switch (v->type) {
    case UA_BT_SBYTE: *d = *(const int8_t *)p; return true;
    case UA_BT_BYTE: *d = *(const uint8_t *)p; return true;
    case UA_BT_INT16: *d = *(const int16_t *)p; return true;
    case UA_BT_UINT16: *d = *(const uint16_t *)p; return true;
    case UA_BT_INT32: *d = *(const int32_t *)p; return true;
    case UA_BT_UINT32: *d = *(const uint32_t *)p; return true;
    case UA_BT_INT64: *d = (double)*(const int64_t *)p; return true;
    case UA_BT_UINT64: *d = (double)*(const uint64_t *)p; return true;
    case UA_BT_FLOAT: *d = *(const float *)p; return isfinite(*d);
    case UA_BT_DOUBLE: *d = *(const double *)p; return isfinite(*d);
    case UA_BT_BOOLEAN: *d = *(const bool *)p; return true;
    default: return false;
    }
}

/* The store's node of a decoded NodeId, or SHM_NONE. */
static uint32_t
bk_ans_store(const struct shm_nodestore *ns, const struct ua_nodeid *id)
{
    struct shm_nodekey k = { .ns = id->ns, .idtype = id->idtype };

    if (id->idtype == UA_IDTYPE_NUMERIC) {
        k.num = id->id.num;
    } else if (id->idtype == UA_IDTYPE_GUID) {
        k.bytes = (const uint8_t *)&id->id.guid;
        k.len = sizeof(id->id.guid);
    } else {
        k.bytes = id->id.str.data;
        k.len = id->id.str.len > 0 ? (uint32_t)id->id.str.len : 0;
    }
    return shm_nodestore_lookup(ns, &k);
}

/* node's NodeId as text with no space ("ns=2;i=5001", "ns=2;s=Tank%201.
 * Level"; a Guid or ByteString in hex): the alarm's key. */
static void
bk_ans_key(const struct shm_nodestore *ns, uint32_t node, char *out,
           size_t cap)
{
    struct shm_nodekey k;
    size_t             at;
    int                n;

    shm_nodestore_key(ns, node, &k);
    if (k.idtype == SHM_ID_NUMERIC) {
        snprintf(out, cap, "ns=%u;i=%u", k.ns, k.num);
        return;
    }
    n = snprintf(out, cap, "ns=%u;%c=", k.ns,
                 k.idtype == SHM_ID_STRING ? 's'
                 : k.idtype == SHM_ID_GUID ? 'g' : 'b');
    at = n > 0 ? (size_t)n : 0;
    for (uint32_t i = 0; i < k.len && at + 4 < cap; i++) {
        uint8_t c = k.bytes[i];

        if (k.idtype == SHM_ID_STRING && c > ' ' && c < 0x7F && c != '%')
            out[at++] = (char)c;
        else
            at += (size_t)snprintf(out + at, cap - at,
                                   k.idtype == SHM_ID_STRING ? "%%%02X"
                                                             : "%02x", c);
    }
    out[at < cap ? at : cap - 1] = '\0';
}

/* ------------------------------------------------------------ instances */

/*
 * Set node i (an Object of kind) as ad: NULL, or why it is refused (in
 * why, or a constant).
 */
static const char *
bk_ans_instance(struct bk_ans *x, const struct bk_alarmnode_kids *kids,
                uint32_t i, uint8_t kind, struct bk_alarmnode_adopt *ad,
                char *why, size_t whylen)
{
    static const char *const lims[BK_ALARM_NLIM] = {
        "HighHighLimit", "HighLimit", "LowLimit", "LowLowLimit"
    };
    const struct shm_nodestore *ns = x->ns;
    const struct bk_nsx_node   *g = &x->s->nodes[i];
    struct bk_alarm_def        *d = &ad->def;
    uint32_t                    cond = x->base + i, in;
    struct ua_variant           v;
    double                      num;

    memset(ad, 0, sizeof(*ad));
    ad->cond = cond;
    ad->type = x->tdef[i];
    ad->normal = SHM_NONE;
    d->severity = 500;
    d->max_shelved_ms = BK_ALARMCFG_SHELVED_DEF * 1000.0;
    /* InputNode: a Variable of the address space. */
    if (!bk_ans_value(x, kids, cond, "InputNode", &v))
        return "no InputNode property with a value";
    if (v.type != UA_BT_NODEID)
        return "its InputNode's value is not a NodeId";
    in = bk_ans_store(ns, v.data);
    if (in == SHM_NONE || ns->nodes[in].node_class != SHM_NC_VARIABLE
        || ns->nodes[in].u.var.slot == SHM_NONE)
        return "its InputNode is not a Variable of the address space";
    ad->input = in;
    switch (kind) {
    case BK_ANS_EXCL:
    case BK_ANS_NONEXCL: {
        double prev = INFINITY;

        d->type = kind == BK_ANS_EXCL ? BK_ALARM_EXCLUSIVE_LIMIT
                                      : BK_ALARM_NON_EXCLUSIVE_LIMIT;
        for (int l = 0; l < BK_ALARM_NLIM; l++) {
            if (!bk_ans_value(x, kids, cond, lims[l], &v))
                continue;
            if (!bk_ans_number(&v, &num)) {
                snprintf(why, whylen, "its %s is not a number", lims[l]);
                return why;
            }
            if (num > prev)
                return "its limits are not in order (HighHighLimit >= "
                       "HighLimit > LowLimit >= LowLowLimit)";
            prev = num;
            d->lim[l] = num;
            d->limits |= (uint8_t)(1u << l);
        }
        if (d->limits == 0)
            return "no limit property (HighHighLimit, HighLimit, LowLimit, "
                   "LowLowLimit) with a value";
        if ((d->limits & BK_ALARM_LIM_H) && (d->limits & BK_ALARM_LIM_L)
            && !(d->lim[BK_ALARM_I_H] > d->lim[BK_ALARM_I_L]))
            return "its HighLimit is not above its LowLimit";
        break;
    }
    default:                            /* off-normal, discrete */
        d->type = BK_ALARM_OFF_NORMAL;
        if (!bk_ans_value(x, kids, cond, "NormalState", &v)) {
            if (kind == BK_ANS_OFFNORMAL)
                return "no NormalState property with a value";
            ad->discrete = true;        /* active while not 0 */
            break;
        }
        if (v.type != UA_BT_NODEID)
            return "its NormalState's value is not a NodeId";
        ad->normal = bk_ans_store(ns, v.data);
        if (ad->normal == SHM_NONE
            || ns->nodes[ad->normal].node_class != SHM_NC_VARIABLE)
            return "its NormalState is not a Variable of the address space";
        {
            const struct bk_nsx_node *nv = bk_ans_set(x, ad->normal);
            struct ua_arena           a;

            if (nv == NULL) {
                ad->normal_later = true;    /* not the files': at start */
                break;
            }
            ua_arena_init(&a, x->abuf, sizeof(x->abuf));
            if (!nv->has_value
                || ua_decode(x->s->heap + nv->value, nv->value_len, NULL, &v,
                             &ua_types[UA_TYPE_VARIANT], &a,
                             &ua_limits_default) != UA_GOOD
                || v.is_array || v.data == NULL || !bk_ans_number(&v, &num))
                return "its NormalState's Variable has no number value";
            d->normal = num;
        }
        break;
    }
    /* The optional ones. */
    if (bk_ans_value(x, kids, cond, "Severity", &v) && bk_ans_number(&v, &num)
        && num >= 1 && num <= 1000)
        d->severity = (uint16_t)num;
    if (bk_ans_value(x, kids, cond, "MaxTimeShelved", &v)
        && bk_ans_number(&v, &num) && num > 0)
        d->max_shelved_ms = num;
    d->confirm = bk_alarmnode_kid(kids, ns, cond, 0, "ConfirmedState")
                 != SHM_NONE;
    if (bk_ans_value(x, kids, cond, "ConditionName", &v)
        && v.type == UA_BT_STRING
        && ((const struct ua_string *)v.data)->len > 0) {
        const struct ua_string *t = v.data;

        snprintf(ad->name, sizeof(ad->name), "%.*s",
                 (int)(t->len < (int32_t)sizeof(ad->name) ? t->len
                       : (int32_t)sizeof(ad->name) - 1), (const char *)t->data);
    } else {
        snprintf(ad->name, sizeof(ad->name), "%s",
                 (const char *)x->s->heap + g->browse_name);
    }
    if (bk_ans_value(x, kids, cond, "Message", &v)
        && v.type == UA_BT_LOCALIZEDTEXT
        && ((const struct ua_localizedtext *)v.data)->text.len > 0) {
        const struct ua_string *t =
            &((const struct ua_localizedtext *)v.data)->text;

        snprintf(ad->message, sizeof(ad->message), "%.*s",
                 (int)(t->len < (int32_t)sizeof(ad->message) ? t->len
                       : (int32_t)sizeof(ad->message) - 1),
                 (const char *)t->data);
    } else {
        snprintf(ad->message, sizeof(ad->message), "%s", ad->name);
    }
    /* The source. */
    ad->source = x->condsrc[i];
    ad->has_condition = ad->source != SHM_NONE;
    if (ad->source == SHM_NONE)
        ad->source = x->parent[i];
    if (ad->source == SHM_NONE && bk_ans_set(x, in) != NULL)
        ad->source = x->parent[in - x->base];
    if (ad->source == SHM_NONE
        || ns->nodes[ad->source].node_class != SHM_NC_OBJECT)
        return "no source Object (none HasCondition it, and neither it nor "
               "its input has a parent Object)";
    return NULL;
}

int
bk_alarmnset_find(struct bk_alarmnset *out, const struct bk_nodeset *s,
                  const struct shm_nodestore *ns, uint32_t max,
                  void (*warn)(void *arg, const char *msg), void *arg,
                  char *err, size_t errlen)
{
    struct bk_ans *x;
    uint32_t       cap = 0;
    int            rc = -1;

    memset(out, 0, sizeof(*out));
    /* No more than the plan made room for. */
    if (bk_alarmnset_count(s) < max)
        max = bk_alarmnset_count(s);
    if (s == NULL || s->nnodes == 0 || max == 0)
        return 0;
    x = bk_calloc(1, sizeof(*x));
    if (x == NULL)
        goto oom;
    x->s = s;
    x->ns = ns;
    x->base = s->nodes[0].store;
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].store != x->base + i) {
            snprintf(err, errlen, "nodesets: the files' nodes are not in "
                     "order in the node store");
            goto out;
        }
    if (bk_ans_tables(x, &out->kids) != 0)
        goto oom;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct bk_nsx_node *g = &s->nodes[i];
        struct bk_alarmnode_adopt *ad;
        uint8_t                    kind;
        const char                *why;
        char                       wbuf[BK_ANS_WHY], msg[2048], key[256];
        uint32_t                   tl = 0;
        const uint8_t             *tn;

        if (g->node_class != SHM_NC_OBJECT || x->tdef[i] == SHM_NONE)
            continue;
        kind = bk_ans_kind(x, x->tdef[i]);
        if (kind == BK_ANS_NONE)
            continue;
        if (out->n == cap) {
            uint32_t nc = cap != 0 ? 2 * cap : 16;
            void    *p = bk_realloc(out->ad, (size_t)nc * sizeof(*out->ad));

            if (p == NULL)
                goto oom;
            out->ad = p;
            cap = nc;
        }
        ad = &out->ad[out->n];
        why = kind == BK_ANS_UNSUPPORTED
                  ? "the deviation and rate-of-change alarm types are not "
                    "evaluated"
              : out->n >= max ? "more alarms than alarms.max_alarms"
                              : bk_ans_instance(x, &out->kids, i, kind, ad,
                                                wbuf, sizeof(wbuf));
        bk_ans_key(ns, x->base + i, key, sizeof(key));
        if (why == NULL) {
            snprintf(ad->key, sizeof(ad->key), "%s", key);
            snprintf(ad->where, sizeof(ad->where), "%s:%u: ",
                     s->files[g->file], g->line);
            if (bk_alarmnode_adoptable(ad, &out->kids, ns, wbuf,
                                       sizeof(wbuf))) {
                out->n++;
                continue;
            }
            why = wbuf;
        }
        out->refused++;
        tn = shm_nodestore_string(ns, ns->nodes[x->tdef[i]].browse_name,
                                  &tl);
        snprintf(msg, sizeof(msg), "%s:%u: alarm %s (%.*s) refused: %s; it "
                 "stays an Object of the file, not evaluated",
                 s->files[g->file], g->line, key, tn != NULL ? (int)tl : 1,
                 tn != NULL ? (const char *)tn : "?", why);
        if (warn != NULL)
            warn(arg, msg);
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "nodesets: alarms: out of memory");
out:
    if (x != NULL) {
        bk_free(x->tdef);
        bk_free(x->parent);
        bk_free(x->condsrc);
        bk_free(x->super);
        bk_free(x);
    }
    if (rc != 0)
        bk_alarmnset_free(out);
    return rc;
}

void
bk_alarmnset_free(struct bk_alarmnset *x)
{
    bk_free(x->ad);
    bk_free(x->kids.e);
    memset(x, 0, sizeof(*x));
}
