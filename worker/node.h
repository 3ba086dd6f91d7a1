/*
 * worker/node.h: nodes of the shared-memory node store as the services
 * see them: a NodeId's index (one lookup, or pipelined lookups of many),
 * and a node's NodeId, BrowseName and DisplayName as wire values.
 *
 * Helpers never copy strings: a NodeId, BrowseName or DisplayName they
 * fill points into the shared-memory node store, which stays mapped and
 * unchanged for the worker's life, so a response can hold it until sent.
 *
 * Pure reads of the store; no allocation.
 */
#ifndef WK_NODE_H
#define WK_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/types.h"
#include "shm/nodestore.h"
#include "worker.h"

/* The null String (length -1). */
static inline struct ua_string
wk_node_null_str(void)
{
    struct ua_string s = { -1, NULL };

    return s;
}

/* True for the null NodeId (ns=0;i=0), the "not specified" value. */
static inline bool
wk_node_is_null(const struct ua_nodeid *n)
{
    return n->ns == 0 && n->idtype == UA_IDTYPE_NUMERIC && n->id.num == 0;
}

/* The node index of n, or SHM_NONE. */
uint32_t wk_node_lookup(const struct wk_worker *w,
                        const struct ua_nodeid *n);

/*
 * n as a node store key: false for a NodeId no node can have (a bad
 * length, an unknown identifier type), whose lookup is SHM_NONE.
 */
bool wk_node_key(const struct ua_nodeid *n, struct shm_nodekey *k);

/*
 * Lookups of n NodeIds (at first, first + stride, ...) pipelined three
 * deep: a key is hashed and its index entry prefetched WK_NODE_AHEAD
 * operations before its lookup, that entry's node half as far ahead, the
 * node's identifier bytes a quarter as far: a lookup's three dependent
 * misses (entry, node, string) overlap with the work of the operations
 * before it.  wk_node_pipe_init() once, then wk_node_pipe_lookup() for
 * i = 0, 1, ... n - 1 in order: node i's index or SHM_NONE.
 */
#define WK_NODE_AHEAD 8     /* a power of two: the ring is indexed by a
                               mask, not a signed % */

struct wk_node_pipe_key {
    struct shm_nodekey key;         /* WK_NODE_NO_KEY's idtype: no node */
    uint32_t           hash;
    const uint8_t     *tail;        /* the fused Write's keys: the
                                       WriteValue's bytes after its
                                       NodeId (svc_write.c) */
};

/*
 * The key of a NodeId no node can have (wk_node_key false): an identifier
 * type no node has (none of SHM_ID_*), so its lookup fails like any
 * unknown NodeId's and the stages need no flag to test.
 */
#define WK_NODE_NO_KEY_IDTYPE 0xFF
_Static_assert(WK_NODE_NO_KEY_IDTYPE > SHM_ID_NUMERIC
               && WK_NODE_NO_KEY_IDTYPE > SHM_ID_STRING
               && WK_NODE_NO_KEY_IDTYPE > SHM_ID_GUID
               && WK_NODE_NO_KEY_IDTYPE > SHM_ID_OPAQUE,
               "WK_NODE_NO_KEY_IDTYPE: no node's identifier type");

struct wk_node_pipe {
    /* A copy: the caller's stores through byte pointers (a Write's
     * records) would make the compiler load the store's fields from the
     * worker again per lookup; a local's cannot change under them. */
    struct shm_nodestore        ns;
    const uint8_t              *first;
    size_t                      stride;
    uint32_t                    n;
    struct wk_node_pipe_key     k[WK_NODE_AHEAD];
};

_Static_assert((WK_NODE_AHEAD & (WK_NODE_AHEAD - 1)) == 0
                   && WK_NODE_AHEAD >= 4,
               "WK_NODE_AHEAD: a power of two, a quarter of it at least 1");

/* Key entry e from its parts: stored field by field and hashed from
 * registers (a key built in a local and copied whole was read back as one
 * 16-byte load across its narrower stores, which the CPU cannot forward:
 * a store-forwarding stall per key, a third of the Write loop's samples),
 * its index entry prefetched (nst NULL: not now). */
static inline __attribute__((always_inline)) void
wk_node_pipe_set(const struct shm_nodestore *nst, struct wk_node_pipe_key *e,
                 uint16_t ns, uint8_t idtype, uint32_t num,
                 const uint8_t *bytes, uint32_t len)
{
    uint32_t h;

    e->key.ns = ns;
    e->key.idtype = idtype;
    e->key.num = num;
    e->key.bytes = bytes;
    e->key.len = len;
    h = shm_nodekey_hash_parts(ns, idtype, num, bytes, len);
    e->hash = h;
    if (nst != NULL)
        shm_nodestore_prefetch(nst, h);
}

/* Always inline: a call frame per key cost more than the key (GCC, as
 * __builtin_prefetch). */
static inline __attribute__((always_inline)) void
wk_node_pipe_key(struct wk_node_pipe *p, uint32_t i)
{
    const struct ua_nodeid *id = (const struct ua_nodeid *)(const void *)
        (p->first + (size_t)i * p->stride);
    const uint8_t          *bytes = NULL;
    uint32_t                num = 0, len = 0;
    uint16_t                ns = id->ns;
    uint8_t                 idtype = id->idtype;

    /* wk_node_key() for the usual String and numeric NodeIds without the
     * call; the same key (its other cases there). */
    if (idtype == UA_IDTYPE_STRING && id->id.str.len >= 0
        && (id->id.str.len == 0 || id->id.str.data != NULL)) {
        bytes = id->id.str.data;
        len = (uint32_t)id->id.str.len;
    } else if (idtype == UA_IDTYPE_NUMERIC) {
        num = id->id.num;
    } else {
        struct shm_nodekey key;         /* the rare forms: by the call */

        if (wk_node_key(id, &key)) {
            ns = key.ns;
            idtype = key.idtype;
            num = key.num;
            bytes = key.bytes;
            len = key.len;
        } else {
            ns = 0;
            idtype = WK_NODE_NO_KEY_IDTYPE;
        }
    }
    wk_node_pipe_set(&p->ns, &p->k[i & (WK_NODE_AHEAD - 1)], ns, idtype, num,
                     bytes, len);
}

static inline void
wk_node_pipe_init(struct wk_node_pipe *p, const struct wk_worker *w,
                  const void *first, size_t stride, int32_t n)
{
    p->ns = w->ns;
    p->first = first;
    p->stride = stride;
    p->n = n > 0 ? (uint32_t)n : 0;
    for (uint32_t i = 0; i < p->n && i < WK_NODE_AHEAD; i++)
        wk_node_pipe_key(p, i);
}

static inline uint32_t
wk_node_pipe_lookup(struct wk_node_pipe *p, int32_t i_)
{
    const struct shm_nodestore    *ns = &p->ns;
    uint32_t                       i = (uint32_t)i_, j;
    const struct wk_node_pipe_key *e = &p->k[i & (WK_NODE_AHEAD - 1)];
    uint32_t                       node;

    node = shm_nodestore_lookup_hashed(ns, &e->key, e->hash);
    /* Its entry now takes the key WK_NODE_AHEAD on. */
    if (i + WK_NODE_AHEAD < p->n)
        wk_node_pipe_key(p, i + WK_NODE_AHEAD);
    j = i + WK_NODE_AHEAD / 2;
    if (j < p->n)
        shm_nodestore_prefetch_node(ns, p->k[j & (WK_NODE_AHEAD - 1)].hash);
    j = i + WK_NODE_AHEAD / 4;
    if (j < p->n)
        shm_nodestore_prefetch_id(ns, p->k[j & (WK_NODE_AHEAD - 1)].hash);
    return node;
}

/* Node i's NodeId, BrowseName, DisplayName (pointing into the store). */
void wk_node_id(const struct wk_worker *w, uint32_t i,
                struct ua_nodeid *out);
void wk_node_browse_name(const struct wk_worker *w, uint32_t i,
                         struct ua_qualifiedname *out);
void wk_node_localized(const struct wk_worker *w, uint32_t text_off,
                       uint32_t locale_off, struct ua_localizedtext *out);

/* Node i's NodeId as a local ExpandedNodeId (no URI, server 0). */
void wk_node_expanded(const struct wk_worker *w, uint32_t i,
                      struct ua_expandednodeid *out);

#endif /* WK_NODE_H */
