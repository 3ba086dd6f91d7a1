/*
 * worker/histconf.c: a historized variable's Stepped and
 * AggregateConfiguration from its HA Configuration (histconf.h).
 *
 * The object is the target of the variable's forward
 * HasHistoricalConfiguration (ns=0;i=56, or a subtype) reference, the one
 * named 0:"HA Configuration" when there are several (Part 11 §5.2.4);
 * its AggregateConfiguration the target of a forward HasComponent named
 * 0:AggregateConfiguration; the values are read from their slots like
 * any Read (a Boolean or Byte scalar Variant; anything else is ignored).
 *
 * No state; single-threaded on the worker's loop.
 */
#include "histconf.h"

#include <string.h>

#include "proto/nodeids_gen.h"
#include "proto/types.h"
#include "shm/nodestore.h"
#include "shm/value.h"

static uint32_t wk_histconf_target(const struct shm_nodestore *ns,
                                   uint32_t node, uint32_t reftype_id,
                                   const char *name);
static bool wk_histconf_scalar(const struct wk_worker *w,
                               const struct shm_nodestore *ns, uint32_t node,
                               const char *name, uint8_t bt, uint8_t *out);

/*
 * The target of node's forward reference of type reftype_id (a subtype
 * too) that is an Object, the one with BrowseName 0:name first, else the
 * first; SHM_NONE when there is none.
 */
static uint32_t
wk_histconf_target(const struct shm_nodestore *ns, uint32_t node,
                   uint32_t reftype_id, const char *name)
{
    struct shm_nodekey     k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                 .num = reftype_id };
    uint32_t               rn = shm_nodestore_lookup(ns, &k);
    uint32_t               rt, first = SHM_NONE;
    const struct shm_node *n = &ns->nodes[node];
    size_t                 nl = strlen(name);

    if (rn == SHM_NONE || (rt = shm_nodestore_reftype_of(ns, rn)) == SHM_NONE)
        return SHM_NONE;
    for (uint32_t i = 0; i < n->nrefs; i++) {
        const struct shm_ref  *r = &ns->refs[n->refs + i];
        const struct shm_node *t;
        const uint8_t         *bn;
        uint32_t               bl;

        if ((r->flags & SHM_REF_INVERSE) || r->target >= ns->nnodes
            || !shm_nodestore_reftype_is(ns, r->reftype, rt))
            continue;
        t = &ns->nodes[r->target];
        if (t->node_class != SHM_NC_OBJECT)
            continue;
        bn = shm_nodestore_string(ns, t->browse_name, &bl);
        if (t->browse_ns == 0 && bn != NULL && bl == nl
            && memcmp(bn, name, nl) == 0)
            return r->target;
        if (first == SHM_NONE)
            first = r->target;
    }
    return first;
}

/* Property 0:name of node as a scalar of built-in type bt (Boolean or
 * Byte): true and *out, or false. */
static bool
wk_histconf_scalar(const struct wk_worker *w, const struct shm_nodestore *ns,
                   uint32_t node, const char *name, uint8_t bt, uint8_t *out)
{
    uint32_t         p = shm_nodestore_property(ns, node, name);
    struct shm_value m;
    uint8_t          buf[SHM_VALUE_INLINE + 8];

    if (p == SHM_NONE || ns->nodes[p].u.var.slot == SHM_NONE)
        return false;
    if (shm_value_read(&w->vals, ns->nodes[p].u.var.slot, &m, buf,
                       sizeof(buf)) != 0
        || m.len != 2 || buf[0] != bt)
        return false;
    *out = buf[1];
    return true;
}

bool
wk_histconf_get(const struct wk_worker *w, uint32_t node, bool agg,
                struct ua_agg_config *cfg)
{
    const struct shm_nodestore *ns = &w->ns;
    uint32_t                    hc, ac;
    uint8_t                     b;

    if (node >= ns->nnodes)
        return false;
    hc = wk_histconf_target(ns, node, UA_NS0ID_HASHISTORICALCONFIGURATION,
                            "HA Configuration");
    if (hc == SHM_NONE)
        return false;
    if (wk_histconf_scalar(w, ns, hc, "Stepped", UA_BT_BOOLEAN, &b))
        cfg->stepped = b != 0;
    if (!agg)
        return true;
    ac = wk_histconf_target(ns, hc, UA_NS0ID_HASCOMPONENT,
                            "AggregateConfiguration");
    if (ac == SHM_NONE)
        return true;
    if (wk_histconf_scalar(w, ns, ac, "TreatUncertainAsBad", UA_BT_BOOLEAN,
                           &b))
        cfg->treat_uncertain_as_bad = b != 0;
    if (wk_histconf_scalar(w, ns, ac, "PercentDataBad", UA_BT_BYTE, &b))
        cfg->percent_data_bad = b;
    if (wk_histconf_scalar(w, ns, ac, "PercentDataGood", UA_BT_BYTE, &b))
        cfg->percent_data_good = b;
    if (wk_histconf_scalar(w, ns, ac, "UseSlopedExtrapolation",
                           UA_BT_BOOLEAN, &b))
        cfg->use_sloped_extrapolation = b != 0;
    return true;
}
