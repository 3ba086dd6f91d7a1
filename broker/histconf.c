/*
 * broker/histconf.c: the historized variables, their
 * HistoricalDataConfiguration objects and the aggregate functions in the
 * address space (histconf.h).
 *
 * The configuration nodes live in namespace 1 with String NodeIds made
 * from the variable's ("<id>.HAConfiguration", "<id>.HAConfiguration.
 * Stepped", ...; a variable outside namespace 1 or with no String id
 * contributes its NodeId text, "ns=2;i=5.HAConfiguration").  Their values
 * are read-only (AccessLevel CurrentRead): the configuration file is
 * where they change.
 *
 * Broker only, once, during the build.  One scan of the references
 * recorded so far finds the variables a NodeSet gave a configuration of
 * their own; the [history NAME] sections are resolved one by one.
 */
#include "histconf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "histcfg.h"
#include "proto/aggregate.h"
#include "proto/arena.h"
#include "proto/nodeid.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"

/* AccessLevel's HistoryRead and HistoryWrite bits (Part 3 §8.57). */
#define BK_HN_ACCESS_HISTORY_READ  0x04u
#define BK_HN_ACCESS_HISTORY_WRITE 0x08u
#define BK_HN_ID_MAX               1024    /* a configuration node's id */
#define BK_HN_NODES                14      /* per configuration */
#define BK_HN_SLOTS                12

static uint32_t bk_hn_ns0(const struct shm_nodestore *ns, uint32_t id);
static uint32_t bk_hn_lookup(const struct shm_nodestore *ns,
                             const char *text, size_t len);
static int bk_hn_mark(struct shm_nodestore *ns, uint32_t idx);
static int bk_hn_id(const struct shm_nodestore *ns, uint32_t var, char *out,
                    size_t cap);
static uint32_t bk_hn_node(struct shm_nodestore *ns, const char *id,
                           uint8_t nc, const char *bname, uint32_t parent,
                           uint32_t reftype, uint32_t type_def);
static int bk_hn_prop(struct shm_nodestore *ns, struct bk_value *val,
                      const char *base, const char *name, uint32_t parent,
                      uint32_t data_type, uint8_t bt, const void *v,
                      uint32_t *slot, int64_t now);
static int bk_hn_config(struct shm_nodestore *ns, struct bk_value *val,
                        uint32_t var, const struct bk_histcfg_def *d,
                        uint32_t *slot, int64_t now);
static int bk_hn_mark_config(struct shm_nodestore *ns,
                             const struct bk_config *c,
                             const struct bk_histconf_demo *demo, char *err,
                             size_t errlen);
static int bk_hn_functions(struct shm_nodestore *ns);

static uint32_t
bk_hn_ns0(const struct shm_nodestore *ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(ns, &k);
}

/* The node a NodeId text of len bytes names, or SHM_NONE. */
static uint32_t
bk_hn_lookup(const struct shm_nodestore *ns, const char *text, size_t len)
{
    uint8_t            abuf[BK_HISTCFG_ID_MAX + 64];
    struct ua_arena    a;
    struct ua_nodeid   id;
    struct shm_nodekey k = { 0 };
    size_t             used;

    ua_arena_init(&a, abuf, sizeof(abuf));
    if (ua_nodeid_parse(text, len, 0, &a, &id, &used) != UA_GOOD
        || used != len)
        return SHM_NONE;
    k.ns = id.ns;
    k.idtype = id.idtype;
    if (id.idtype == UA_IDTYPE_NUMERIC) {
        k.num = id.id.num;
    } else if (id.idtype == UA_IDTYPE_GUID) {
        k.bytes = (const uint8_t *)&id.id.guid;
        k.len = sizeof(id.id.guid);
    } else {
        k.bytes = id.id.str.data;
        k.len = id.id.str.len > 0 ? (uint32_t)id.id.str.len : 0;
    }
    return shm_nodestore_lookup(ns, &k);
}

/* Node idx historized: 0, or -1 when it is not a Variable with a value. */
static int
bk_hn_mark(struct shm_nodestore *ns, uint32_t idx)
{
    struct shm_node *n;

    if (idx == SHM_NONE || idx >= ns->nnodes)
        return -1;
    n = shm_nodestore_node(ns, idx);
    if (n->node_class != SHM_NC_VARIABLE || n->u.var.slot == SHM_NONE)
        return -1;
    n->flags |= SHM_NF_HISTORIZING;
    return 0;
}

/* The id text the configuration nodes of variable var start with. */
static int
bk_hn_id(const struct shm_nodestore *ns, uint32_t var, char *out,
         size_t cap)
{
    struct shm_nodekey k;
    int                n = 0;

    shm_nodestore_key(ns, var, &k);
    if (k.ns == 1 && k.idtype == SHM_ID_STRING) {
        n = snprintf(out, cap, "%.*s", (int)k.len, (const char *)k.bytes);
    } else if (k.idtype == SHM_ID_NUMERIC) {
        n = snprintf(out, cap, "ns=%u;i=%u", k.ns, k.num);
    } else if (k.idtype == SHM_ID_STRING) {
        n = snprintf(out, cap, "ns=%u;s=%.*s", k.ns, (int)k.len,
                     (const char *)k.bytes);
    } else {
        n = snprintf(out, cap, "ns=%u;%c=", k.ns,
                     k.idtype == SHM_ID_GUID ? 'g' : 'b');
        for (uint32_t i = 0; i < k.len && n > 0 && (size_t)n + 3 < cap; i++)
            n += snprintf(out + n, cap - (size_t)n, "%02x", k.bytes[i]);
    }
    /* Room for the longest suffix. */
    return n < 0 || (size_t)n + 64 >= cap ? -1 : 0;
}

/* A node ns=1;s=id of class nc, browse name 0:bname, from parent by
 * reftype, of type type_def (ns=0 ids). */
static uint32_t
bk_hn_node(struct shm_nodestore *ns, const char *id, uint8_t nc,
           const char *bname, uint32_t parent, uint32_t reftype,
           uint32_t type_def)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };
    struct shm_node   *n;
    uint32_t           idx;

    k.bytes = (const uint8_t *)id;
    k.len = (uint32_t)strlen(id);
    idx = shm_nodestore_add(ns, &k, nc);
    if (idx == SHM_NONE)
        return SHM_NONE;
    n = shm_nodestore_node(ns, idx);
    n->browse_ns = 0;
    n->browse_name = shm_nodestore_intern(ns, bname,
                                          (uint32_t)strlen(bname));
    n->dn_text = n->browse_name;
    if (n->browse_name == 0
        || shm_nodestore_add_ref(ns, parent, bk_hn_ns0(ns, reftype), idx)
               != 0
        || shm_nodestore_add_ref(ns, idx,
                                 bk_hn_ns0(ns, UA_NS0ID_HASTYPEDEFINITION),
                                 bk_hn_ns0(ns, type_def)) != 0)
        return SHM_NONE;
    return idx;
}

/* A read-only property base.name of parent with the scalar value v. */
static int
bk_hn_prop(struct shm_nodestore *ns, struct bk_value *val, const char *base,
           const char *name, uint32_t parent, uint32_t data_type, uint8_t bt,
           const void *v, uint32_t *slot, int64_t now)
{
    char             id[BK_HN_ID_MAX + 64];
    struct shm_node *n;
    uint32_t         idx;

    snprintf(id, sizeof(id), "%s.%s", base, name);
    idx = bk_hn_node(ns, id, SHM_NC_VARIABLE, name, parent,
                     UA_NS0ID_HASPROPERTY, UA_NS0ID_PROPERTYTYPE);
    if (idx == SHM_NONE)
        return -1;
    n = shm_nodestore_node(ns, idx);
    n->u.var.data_type = bk_hn_ns0(ns, data_type);
    n->u.var.value_rank = -1;
    n->access_level_ex = 1;
    n->user_access_level = 1;
    n->u.var.slot = *slot;
    if (bk_value_write_scalar(val, *slot, bt, v, now) != 0)
        return -1;
    (*slot)++;
    return 0;
}

/* Variable var's HA Configuration with the values d. */
static int
bk_hn_config(struct shm_nodestore *ns, struct bk_value *val, uint32_t var,
             const struct bk_histcfg_def *d, uint32_t *slot, int64_t now)
{
    char     vid[BK_HN_ID_MAX], cid[BK_HN_ID_MAX + 64];
    char     aid[BK_HN_ID_MAX + 128];
    uint32_t cfg, agg;
    int32_t  fmt = d->exception_deviation_format;
    int64_t  never = 0;
    bool     yes = true;
    int      rc = 0;

    if (bk_hn_id(ns, var, vid, sizeof(vid)) != 0)
        return -1;
    snprintf(cid, sizeof(cid), "%s.HAConfiguration", vid);
    snprintf(aid, sizeof(aid), "%s.AggregateConfiguration", cid);
    cfg = bk_hn_node(ns, cid, SHM_NC_OBJECT, "HA Configuration", var,
                     UA_NS0ID_HASHISTORICALCONFIGURATION,
                     UA_NS0ID_HISTORICALDATACONFIGURATIONTYPE);
    if (cfg == SHM_NONE)
        return -1;
    agg = bk_hn_node(ns, aid, SHM_NC_OBJECT, "AggregateConfiguration", cfg,
                     UA_NS0ID_HASCOMPONENT,
                     UA_NS0ID_AGGREGATECONFIGURATIONTYPE);
    if (agg == SHM_NONE)
        return -1;
    rc |= bk_hn_prop(ns, val, cid, "Stepped", cfg, UA_NS0ID_BOOLEAN,
                     UA_BT_BOOLEAN, &d->stepped, slot, now);
    rc |= bk_hn_prop(ns, val, cid, "MinTimeInterval", cfg, UA_NS0ID_DURATION,
                     UA_BT_DOUBLE, &d->min_time_interval_ms, slot, now);
    rc |= bk_hn_prop(ns, val, cid, "MaxTimeInterval", cfg, UA_NS0ID_DURATION,
                     UA_BT_DOUBLE, &d->max_time_interval_ms, slot, now);
    rc |= bk_hn_prop(ns, val, cid, "ExceptionDeviation", cfg,
                     UA_NS0ID_DOUBLE, UA_BT_DOUBLE, &d->exception_deviation,
                     slot, now);
    rc |= bk_hn_prop(ns, val, cid, "ExceptionDeviationFormat", cfg,
                     UA_NS0ID_EXCEPTIONDEVIATIONFORMAT, UA_BT_INT32, &fmt,
                     slot, now);
    /* Both timestamps of every value are kept (hist/sample.h). */
    rc |= bk_hn_prop(ns, val, cid, "ServerTimestampSupported", cfg,
                     UA_NS0ID_BOOLEAN, UA_BT_BOOLEAN, &yes, slot, now);
    /* The oldest sample kept: the workers read it from the store when a
     * client reads these (SHM_NF_HIST_ARCHIVE; worker/histarchive.c);
     * the slot's MinDateTime is what a monitored item samples. */
    rc |= bk_hn_prop(ns, val, cid, "StartOfArchive", cfg, UA_NS0ID_UTCTIME,
                     UA_BT_DATETIME, &never, slot, now);
    rc |= bk_hn_prop(ns, val, cid, "StartOfOnlineArchive", cfg,
                     UA_NS0ID_UTCTIME, UA_BT_DATETIME, &never, slot, now);
    if (rc == 0) {
        static const char *const arch[] = { "StartOfArchive",
                                            "StartOfOnlineArchive" };

        for (int i = 0; i < 2; i++) {
            char               pid[BK_HN_ID_MAX + 96];
            struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };
            uint32_t           p;

            snprintf(pid, sizeof(pid), "%s.%s", cid, arch[i]);
            k.bytes = (const uint8_t *)pid;
            k.len = (uint32_t)strlen(pid);
            p = shm_nodestore_lookup(ns, &k);
            if (p == SHM_NONE)
                return -1;
            shm_nodestore_node(ns, p)->flags |= SHM_NF_HIST_ARCHIVE;
        }
    }
    rc |= bk_hn_prop(ns, val, aid, "TreatUncertainAsBad", agg,
                     UA_NS0ID_BOOLEAN, UA_BT_BOOLEAN,
                     &d->treat_uncertain_as_bad, slot, now);
    rc |= bk_hn_prop(ns, val, aid, "PercentDataBad", agg, UA_NS0ID_BYTE,
                     UA_BT_BYTE, &d->percent_data_bad, slot, now);
    rc |= bk_hn_prop(ns, val, aid, "PercentDataGood", agg, UA_NS0ID_BYTE,
                     UA_BT_BYTE, &d->percent_data_good, slot, now);
    rc |= bk_hn_prop(ns, val, aid, "UseSlopedExtrapolation", agg,
                     UA_NS0ID_BOOLEAN, UA_BT_BOOLEAN,
                     &d->use_sloped_extrapolation, slot, now);
    return rc != 0 ? -1 : 0;
}

void
bk_histconf_plan(const struct bk_config *c, uint32_t nodeset,
                 struct shm_plan *p)
{
    uint64_t    n = nodeset;
    const char *s;

    if (!c->history_enabled)
        return;
    n += c->history_simulation ? 8 : 0;
    n += c->history_demo_vars;
    n += c->histnodes != NULL ? c->histnodes->n : 0;
    for (s = c->history_nodes; *s != '\0'; s++)
        n += *s != ' ' && *s != ',' && (s[1] == '\0' || s[1] == ' '
                                        || s[1] == ',');
    p->nodes += (uint32_t)(n * BK_HN_NODES);
    /* Each node's parent and type, at both ends; the functions. */
    p->refs += (uint32_t)(2 * (n * 2 * BK_HN_NODES + 2 * UA_AGG_COUNT_));
    /* The ids: the variable's (up to 48 bytes counted) and a suffix. */
    p->strings += n * BK_HN_NODES * 96 + 4096;
    p->slots += (uint32_t)(n * BK_HN_SLOTS);
}

/*
 * Mark what the configuration historizes: history.simulation,
 * history.demo_vars, history.nodes, the [history NAME] sections.
 */
static int
bk_hn_mark_config(struct shm_nodestore *ns, const struct bk_config *c,
                  const struct bk_histconf_demo *demo, char *err,
                  size_t errlen)
{
    const char *s = c->history_nodes, *end = s + strlen(s);

    if (c->history_simulation)
        for (uint32_t i = 0; i < demo->nsim; i++)
            (void)bk_hn_mark(ns, demo->sim[i]);
    for (uint32_t i = 0; i < c->history_demo_vars; i++)
        (void)bk_hn_mark(ns, demo->vars_first + i);
    while (s < end) {
        size_t len;

        if (*s == ' ' || *s == ',') {
            s++;
            continue;
        }
        len = strcspn(s, " ,");
        /* A String id may hold a space: the parse says where it ends. */
        {
            uint8_t          abuf[512];
            struct ua_arena  a;
            struct ua_nodeid id;
            size_t           used;

            ua_arena_init(&a, abuf, sizeof(abuf));
            if (ua_nodeid_parse(s, (size_t)(end - s), ' ', &a, &id, &used)
                    != UA_GOOD
                || (s[used] != '\0' && s[used] != ' ' && s[used] != ',')) {
                snprintf(err, errlen, "history.nodes: \"%.40s\" is not a "
                         "NodeId", s);
                return -1;
            }
            len = used;
        }
        if (bk_hn_mark(ns, bk_hn_lookup(ns, s, len)) != 0) {
            snprintf(err, errlen, "history.nodes: %.*s is not a Variable "
                     "of the address space", (int)len, s);
            return -1;
        }
        s += len;
    }
    for (uint32_t i = 0; c->histnodes != NULL && i < c->histnodes->n; i++) {
        const struct bk_histcfg_one *h = &c->histnodes->a[i];

        if (bk_hn_mark(ns, bk_hn_lookup(ns, h->node, strlen(h->node)))
            != 0) {
            snprintf(err, errlen, "[history %s]: node %s is not a Variable "
                     "of the address space", h->name, h->node);
            return -1;
        }
    }
    return 0;
}

/* The aggregates HistoryRead computes, organized where Part 11 §5.4.2
 * (HistoryServerCapabilities) and Part 5 (ServerCapabilities) list them. */
static int
bk_hn_functions(struct shm_nodestore *ns)
{
    uint32_t org = bk_hn_ns0(ns, UA_NS0ID_ORGANIZES);
    uint32_t hsc, sc;

    hsc = bk_hn_ns0(ns, UA_NS0ID_HISTORYSERVERCAPABILITIES_AGGREGATEFUNCTIONS);
    sc = bk_hn_ns0(ns, UA_NS0ID_SERVER_SERVERCAPABILITIES_AGGREGATEFUNCTIONS);

    for (int a = 0; a < UA_AGG_COUNT_; a++) {
        const struct ua_agg_info *info = ua_aggregate_info((enum ua_agg)a);
        uint32_t                  f;

        if (info == NULL)
            continue;
        f = bk_hn_ns0(ns, info->nodeid);
        if (f == SHM_NONE)
            continue;
        if ((hsc != SHM_NONE && shm_nodestore_add_ref(ns, hsc, org, f) != 0)
            || (sc != SHM_NONE && shm_nodestore_add_ref(ns, sc, org, f) != 0))
            return -1;
    }
    return 0;
}

int
bk_histconf_add(struct shm_nodestore *ns, struct bk_value *val,
                const struct bk_config *c,
                const struct bk_histconf_demo *demo, uint32_t *slot,
                int64_t now, char *err, size_t errlen)
{
    struct bk_histcfg_def def;
    uint32_t              hhc = bk_hn_ns0(ns,
                                          UA_NS0ID_HASHISTORICALCONFIGURATION);
    uint32_t              nvars = ns->nnodes;
    uint64_t             *own;      /* has a configuration already */

    if (!c->history_enabled)
        return 0;
    if (bk_hn_mark_config(ns, c, demo, err, errlen) != 0)
        return -1;
    own = bk_calloc((nvars + 63) / 64, 8);
    if (own == NULL) {
        snprintf(err, errlen, "history: out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < ns->npending; i++) {
        const struct shm_pending_ref *p = &ns->pending[i];

        if (p->reftype_node == hhc && p->src < nvars)
            own[p->src / 64] |= UINT64_C(1) << (p->src % 64);
    }
    /* The sections first: their nodes with their own keys. */
    for (uint32_t i = 0; c->histnodes != NULL && i < c->histnodes->n; i++) {
        const struct bk_histcfg_one *h = &c->histnodes->a[i];
        uint32_t v = bk_hn_lookup(ns, h->node, strlen(h->node));

        if (own[v / 64] & (UINT64_C(1) << (v % 64))) {
            snprintf(err, errlen, "[history %s]: node %s has its "
                     "HistoricalDataConfiguration already (from its "
                     "NodeSet, or an earlier section)", h->name, h->node);
            goto fail;
        }
        bk_config_history_def(c, &def);
        bk_histcfg_apply(h, &def);
        if (bk_hn_config(ns, val, v, &def, slot, now) != 0)
            goto full;
        own[v / 64] |= UINT64_C(1) << (v % 64);
    }
    bk_config_history_def(c, &def);
    for (uint32_t v = 0; v < nvars; v++) {
        struct shm_node *n = shm_nodestore_node(ns, v);

        if (n->node_class != SHM_NC_VARIABLE
            || !(n->flags & SHM_NF_HISTORIZING) || n->u.var.slot == SHM_NONE)
            continue;
        n->access_level_ex |= BK_HN_ACCESS_HISTORY_READ
                              | BK_HN_ACCESS_HISTORY_WRITE;
        n->user_access_level |= BK_HN_ACCESS_HISTORY_READ
                                | BK_HN_ACCESS_HISTORY_WRITE;
        if (own[v / 64] & (UINT64_C(1) << (v % 64)))
            continue;
        if (bk_hn_config(ns, val, v, &def, slot, now) != 0)
            goto full;
    }
    if (bk_hn_functions(ns) != 0)
        goto full;
    bk_free(own);
    return 0;
full:
    snprintf(err, errlen, "history: the HistoricalDataConfiguration nodes "
             "do not fit (segment full, or a node id taken)");
fail:
    bk_free(own);
    return -1;
}
