/*
 * broker/histnode.c: the Annotations Properties of the historized
 * variables (broker/histnode.h).
 *
 * Single-threaded: the broker's address-space build only.
 */
#include "histnode.h"

#include <stdio.h>
#include <string.h>

#include "proto/nodeid.h"
#include "proto/nodeids_gen.h"
#include "proto/types.h"
#include "shm/layout.h"

#define BK_HISTNODE_NAME   ".Annotations"
#define BK_HISTNODE_ID_MAX 4200u
/* AccessLevel HistoryRead and HistoryWrite (Part 3 §8.57). */
#define BK_HISTNODE_ACCESS 0x0Cu

static uint32_t bk_histnode_ns0(const struct shm_nodestore *ns, uint32_t id);
static int bk_histnode_one(struct shm_nodestore *ns, uint32_t var);

void
bk_histnode_plan(uint32_t vars, uint64_t id_bytes, struct shm_plan *p)
{
    p->nodes += vars;
    /* HasProperty and HasTypeDefinition, both ends. */
    p->refs += 4 * vars;
    /* The NodeId's text (at most twice its bytes, "ns=...;s=" and the
     * suffix) and the BrowseName (interned once). */
    p->strings += 2 * id_bytes + 48 * (uint64_t)vars + 64;
}

static uint32_t
bk_histnode_ns0(const struct shm_nodestore *ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(ns, &k);
}

/* Variable var's property: 1 added, 0 its NodeId taken, -1 full. */
static int
bk_histnode_one(struct shm_nodestore *ns, uint32_t var)
{
    struct shm_nodekey k, pk = { .ns = 1, .idtype = SHM_ID_STRING };
    struct ua_nodeid   id;
    struct shm_node   *n;
    char               text[BK_HISTNODE_ID_MAX];
    uint32_t           idx;
    int                len;

    shm_nodestore_key(ns, var, &k);
    if (k.ns == 1 && k.idtype == SHM_ID_STRING) {
        if (k.len + sizeof(BK_HISTNODE_NAME) > sizeof(text))
            return 0;
        memcpy(text, k.bytes, k.len);
        len = (int)k.len;
    } else {
        memset(&id, 0, sizeof(id));
        id.ns = k.ns;
        id.idtype = k.idtype;
        if (k.idtype == SHM_ID_NUMERIC) {
            id.id.num = k.num;
        } else if (k.idtype == SHM_ID_GUID) {
            if (k.bytes == NULL || k.len != sizeof(id.id.guid))
                return 0;
            memcpy(&id.id.guid, k.bytes, sizeof(id.id.guid));
        } else {
            id.id.str.len = (int32_t)k.len;
            id.id.str.data = (uint8_t *)(uintptr_t)k.bytes;
        }
        len = ua_nodeid_print(&id, text, sizeof(text)
                                         - sizeof(BK_HISTNODE_NAME));
        if (len < 0)
            return 0;
    }
    memcpy(text + len, BK_HISTNODE_NAME, sizeof(BK_HISTNODE_NAME));
    len += (int)sizeof(BK_HISTNODE_NAME) - 1;
    pk.bytes = (const uint8_t *)text;
    pk.len = (uint32_t)len;
    if (shm_nodestore_lookup(ns, &pk) != SHM_NONE)
        return 0;
    idx = shm_nodestore_add(ns, &pk, SHM_NC_VARIABLE);
    if (idx == SHM_NONE)
        return -1;
    n = shm_nodestore_node(ns, idx);
    n->browse_ns = 0;
    n->browse_name = shm_nodestore_intern(ns, "Annotations", 11);
    n->dn_text = n->browse_name;
    n->u.var.data_type = bk_histnode_ns0(ns, UA_NS0ID_ANNOTATION);
    n->u.var.value_rank = -1;
    n->u.var.slot = SHM_NONE;
    n->access_level_ex = BK_HISTNODE_ACCESS;
    n->user_access_level = (uint8_t)(shm_nodestore_node(ns, var)
                                         ->user_access_level
                                     & BK_HISTNODE_ACCESS);
    n->min_sampling = 0;
    if (n->browse_name == 0
        || shm_nodestore_add_ref(ns, var,
                                 bk_histnode_ns0(ns, UA_NS0ID_HASPROPERTY),
                                 idx) != 0
        || shm_nodestore_add_ref(ns, idx,
                                 bk_histnode_ns0(ns,
                                                 UA_NS0ID_HASTYPEDEFINITION),
                                 bk_histnode_ns0(ns, UA_NS0ID_PROPERTYTYPE))
               != 0)
        return -1;
    return 1;
}

int
bk_histnode_add(struct shm_nodestore *ns, char *err, size_t errlen)
{
    uint32_t nnodes = ns->nnodes;
    int      added = 0;

    for (uint32_t i = 0; i < nnodes; i++) {
        const struct shm_node *n = shm_nodestore_node(ns, i);
        int                    rc;

        if (n->node_class != SHM_NC_VARIABLE
            || !(n->flags & SHM_NF_HISTORIZING))
            continue;
        rc = bk_histnode_one(ns, i);
        if (rc < 0) {
            snprintf(err, errlen, "history: no room for the Annotations "
                     "Properties (the segment is full)");
            return -1;
        }
        added += rc;
    }
    return added;
}
