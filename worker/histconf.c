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
 * The data collection rules: Double (Duration) and Int32 (the
 * ExceptionDeviationFormat enumeration) scalars, and a Range (Part 8
 * §5.6.2: low and high, Doubles) as its ExtensionObject's binary body.
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
static bool wk_histconf_value(const struct wk_worker *w,
                              const struct shm_nodestore *ns, uint32_t node,
                              const char *name, uint8_t *buf, uint32_t cap,
                              uint32_t *len);
static bool wk_histconf_double(const struct wk_worker *w,
                               const struct shm_nodestore *ns, uint32_t node,
                               const char *name, double *out);
static double wk_histconf_span(const struct wk_worker *w,
                               const struct shm_nodestore *ns, uint32_t node,
                               const char *name);

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

/* Property 0:name of node's value (its Variant) into buf: true and *len,
 * or false. */
static bool
wk_histconf_value(const struct wk_worker *w, const struct shm_nodestore *ns,
                  uint32_t node, const char *name, uint8_t *buf, uint32_t cap,
                  uint32_t *len)
{
    uint32_t         p = shm_nodestore_property(ns, node, name);
    struct shm_value m;

    if (p == SHM_NONE || ns->nodes[p].u.var.slot == SHM_NONE
        || shm_value_read(&w->vals, ns->nodes[p].u.var.slot, &m, buf, cap)
               != 0
        || m.len > cap)
        return false;
    *len = m.len;
    return true;
}

/* Property 0:name as a finite Double (Duration) scalar, or an Int32 one
 * (an enumeration): true and *out. */
static bool
wk_histconf_double(const struct wk_worker *w, const struct shm_nodestore *ns,
                   uint32_t node, const char *name, double *out)
{
    uint8_t  buf[SHM_VALUE_INLINE + 16];
    uint32_t len;
    double   d;
    int32_t  i;

    if (!wk_histconf_value(w, ns, node, name, buf, sizeof(buf), &len))
        return false;
    if (len == 9 && buf[0] == UA_BT_DOUBLE) {
        memcpy(&d, buf + 1, 8);
        if (d != d)
            return false;
        *out = d;
        return true;
    }
    if (len == 5 && buf[0] == UA_BT_INT32) {
        memcpy(&i, buf + 1, 4);
        *out = i;
        return true;
    }
    return false;
}

/* The span (high - low) of node's Range property 0:name; 0 when it has
 * none or it is not a Range. */
static double
wk_histconf_span(const struct wk_worker *w, const struct shm_nodestore *ns,
                 uint32_t node, const char *name)
{
    uint8_t  buf[SHM_VALUE_INLINE + 64];
    uint32_t len, at, blen;
    uint16_t id;
    double   lo, hi;

    /* ExtensionObject: NodeId (two- or four-byte form), 0x01, Int32
     * length 16, low, high (Part 6 §5.2.2.15). */
    if (!wk_histconf_value(w, ns, node, name, buf, sizeof(buf), &len)
        || len < 2 || buf[0] != UA_BT_EXTENSIONOBJECT)
        return 0;
    if (buf[1] == 0x00 && len >= 3) {
        id = buf[2];
        at = 3;
    } else if (buf[1] == 0x01 && len >= 5 && buf[2] == 0) {
        memcpy(&id, buf + 3, 2);
        at = 5;
    } else {
        return 0;
    }
    if (id != UA_NS0ID_RANGE_ENCODING_DEFAULTBINARY || len != at + 1 + 4 + 16
        || buf[at] != 0x01)
        return 0;
    memcpy(&blen, buf + at + 1, 4);
    if (blen != 16)
        return 0;
    memcpy(&lo, buf + at + 5, 8);
    memcpy(&hi, buf + at + 13, 8);
    return hi > lo && hi - lo < 1e300 ? hi - lo : 0;
}

bool
wk_histconf_collect(const struct wk_worker *w, uint32_t node,
                    struct hs_collect *c)
{
    const struct shm_nodestore *ns = &w->ns;
    uint32_t                    hc;
    double                      d;

    memset(c, 0, sizeof(*c));
    if (node >= ns->nnodes)
        return false;
    hc = wk_histconf_target(ns, node, UA_NS0ID_HASHISTORICALCONFIGURATION,
                            "HA Configuration");
    if (hc == SHM_NONE)
        return false;
    /* Durations in ms, at most a year (broker/histcfg.c's bound), as
     * DateTime ticks (100 ns). */
    if (wk_histconf_double(w, ns, hc, "MinTimeInterval", &d) && d > 0
        && d <= 31536000000.0)
        c->min_t = (int64_t)(d * 10000.0);
    if (wk_histconf_double(w, ns, hc, "MaxTimeInterval", &d) && d > 0
        && d <= 31536000000.0)
        c->max_t = (int64_t)(d * 10000.0);
    if (wk_histconf_double(w, ns, hc, "ExceptionDeviation", &d) && d > 0
        && d < 1e300)
        c->dev = d;
    if (wk_histconf_double(w, ns, hc, "ExceptionDeviationFormat", &d)
        && d >= HS_COLLECT_ABSOLUTE && d <= HS_COLLECT_UNKNOWN)
        c->fmt = (uint8_t)d;
    else
        c->fmt = HS_COLLECT_ABSOLUTE;
    c->range = wk_histconf_span(w, ns, node, "InstrumentRange");
    c->eu_range = wk_histconf_span(w, ns, node, "EURange");
    return hs_collect_any(c);
}
