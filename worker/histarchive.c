/*
 * worker/histarchive.c: StartOfArchive and StartOfOnlineArchive read from
 * the history store on demand (histarchive.h).
 *
 * The property's HA Configuration is the source of its inverse
 * HasProperty reference, the variable the source of the configuration's
 * inverse HasHistoricalConfiguration (i=56, or a subtype); the oldest
 * sample is the first of a forward read of the variable's key over all
 * time (one seek in the store's B-tree, hist/store.h).  Nothing is kept
 * up to date: retention moves the oldest sample, the next Read sees it.
 *
 * Single-threaded on the worker's loop; one reader (static: no
 * allocation per Read), used between requests' reads of the store, never
 * inside one.
 */
#include "histarchive.h"

#include <string.h>

#include "hist/store.h"
#include "histnode.h"
#include "proto/nodeids_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "shm/nodestore.h"
#include "svc_history.h"

static uint32_t wk_histarchive_source(const struct shm_nodestore *ns,
                                      uint32_t node, uint32_t reftype_id);

static struct hs_read wk_histarchive_read;

void
wk_histarchive_init(struct wk_worker *w)
{
    w->archive_value = wk_histarchive_value;
}

/* The source of node's inverse reference of type reftype_id (a subtype
 * too): its index, or SHM_NONE. */
static uint32_t
wk_histarchive_source(const struct shm_nodestore *ns, uint32_t node,
                      uint32_t reftype_id)
{
    struct shm_nodekey     k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                 .num = reftype_id };
    uint32_t               rn = shm_nodestore_lookup(ns, &k), rt;
    const struct shm_node *n = &ns->nodes[node];

    if (rn == SHM_NONE || (rt = shm_nodestore_reftype_of(ns, rn)) == SHM_NONE)
        return SHM_NONE;
    for (uint32_t i = 0; i < n->nrefs; i++) {
        const struct shm_ref *r = &ns->refs[n->refs + i];

        if ((r->flags & SHM_REF_INVERSE) && r->target < ns->nnodes
            && shm_nodestore_reftype_is(ns, r->reftype, rt))
            return r->target;
    }
    return SHM_NONE;
}

bool
wk_histarchive_value(struct wk_worker *w, uint32_t node, int32_t ttr,
                     struct ua_arena *arena, struct ua_datavalue *dv)
{
    const struct shm_nodestore *ns = &w->ns;
    struct hs_read             *r = &wk_histarchive_read;
    struct hs_sample            smp;
    struct hs_store            *s;
    uint32_t                    cfg, var;
    int64_t                    *t;
    bool                        have;

    if (node >= ns->nnodes
        || !(ns->nodes[node].flags & SHM_NF_HIST_ARCHIVE)
        || (cfg = wk_histarchive_source(ns, node, UA_NS0ID_HASPROPERTY))
               == SHM_NONE
        || (var = wk_histarchive_source(ns, cfg,
                                        UA_NS0ID_HASHISTORICALCONFIGURATION))
               == SHM_NONE
        || (s = wk_svc_history_store(w)) == NULL)
        return false;
    if (hs_read_begin(s, r) != 0)
        return false;
    have = hs_read_seek(r, wk_histnode_key(w, var), INT64_MIN, INT64_MAX,
                        false) == 0
           && hs_read_next(r, &smp) == 0;
    hs_read_end(r);
    memset(dv, 0, sizeof(*dv));
    if (have) {
        t = ua_arena_alloc(arena, sizeof(*t));
        if (t == NULL)
            return false;
        *t = smp.t;
        ua_variant_set_scalar(&dv->value, t, UA_BT_DATETIME);
        dv->mask = UA_DV_VALUE;
    }
    if (ttr == UA_TIMESTAMPSTORETURN_SERVER
        || ttr == UA_TIMESTAMPSTORETURN_BOTH) {
        dv->mask |= UA_DV_SERVER_TS;
        dv->server_ts = w->now_dt;
    }
    return true;
}
