/*
 * worker/histnode.c: the nodes history is about (worker/histnode.h).
 *
 * Single-threaded on the worker's loop; reads the node store only.
 */
#include "histnode.h"

#include <string.h>

#include "hist/store.h"
#include "node.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/layout.h"
#include "shm/nodestore.h"

#define WK_HISTNODE_ID_MAX 4200u

static uint32_t wk_histnode_ns0(const struct wk_worker *w, uint32_t id);

static uint32_t
wk_histnode_ns0(const struct wk_worker *w, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&w->ns, &k);
}

uint64_t
wk_histnode_key(const struct wk_worker *w, uint32_t node)
{
    struct ua_nodeid id;
    uint8_t          idb[WK_HISTNODE_ID_MAX];
    size_t           len;

    wk_node_id(w, node, &id);
    if (ua_encode(&id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb), &len)
        != UA_GOOD)
        return 0;
    return hs_store_key(idb, len);
}

uint32_t
wk_histnode_annotated(const struct wk_worker *w, uint32_t node)
{
    const struct shm_node *n;
    const uint8_t         *name;
    uint32_t               len, hp;

    if (node == SHM_NONE || node >= w->ns.nnodes)
        return SHM_NONE;
    n = &w->ns.nodes[node];
    if (n->node_class != SHM_NC_VARIABLE || n->browse_ns != 0
        || n->u.var.data_type != wk_histnode_ns0(w, UA_NS0ID_ANNOTATION))
        return SHM_NONE;
    name = shm_nodestore_string(&w->ns, n->browse_name, &len);
    if (name == NULL || len != 11 || memcmp(name, "Annotations", 11) != 0)
        return SHM_NONE;
    hp = wk_histnode_ns0(w, UA_NS0ID_HASPROPERTY);
    if (n->refs > w->ns.nrefs || n->nrefs > w->ns.nrefs - n->refs)
        return SHM_NONE;
    for (uint32_t i = 0; i < n->nrefs; i++) {
        const struct shm_ref *r = &w->ns.refs[n->refs + i];

        if ((r->flags & SHM_REF_INVERSE) && r->target < w->ns.nnodes
            && w->ns.reftypes->node[r->reftype] == hp
            && w->ns.nodes[r->target].node_class == SHM_NC_VARIABLE
            && (w->ns.nodes[r->target].flags & SHM_NF_HISTORIZING))
            return r->target;
    }
    return SHM_NONE;
}
