/*
 * worker/svc_int.h: what the service files share (STYLE §3: intra-module
 * sharing goes in an _int.h): the handlers the dispatch table names and
 * small helpers that turn node-store entries into wire values.
 *
 * Helpers never copy strings: a NodeId, BrowseName or DisplayName they fill
 * points into the shared-memory node store, which stays mapped and
 * unchanged for the worker's life, so a response can hold it until sent.
 */
#ifndef WK_SVC_INT_H
#define WK_SVC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/types.h"
#include "proto/types_gen.h"
#include "svc.h"

/* Handlers (the dispatch table in svc.c). */
void wk_svc_get_endpoints(struct wk_svc_ctx *ctx, const void *req,
                          void *resp);
void wk_svc_find_servers(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_create_session(struct wk_svc_ctx *ctx, const void *req,
                           void *resp);
void wk_svc_activate_session(struct wk_svc_ctx *ctx, const void *req,
                             void *resp);
void wk_svc_close_session(struct wk_svc_ctx *ctx, const void *req,
                          void *resp);
void wk_svc_cancel(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_read(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_browse(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_browse_next(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_translate(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_register_nodes(struct wk_svc_ctx *ctx, const void *req,
                           void *resp);
void wk_svc_unregister_nodes(struct wk_svc_ctx *ctx, const void *req,
                             void *resp);
void wk_svc_write(struct wk_svc_ctx *ctx, const void *req, void *resp);
bool wk_svc_write_scan(struct wk_svc_ctx *ctx, const uint8_t *body,
                       size_t blen, struct ua_request_header *hdr);
void wk_svc_write_raw(struct wk_svc_ctx *ctx, void *resp);

/*
 * The Write loops after the checks (w->fanout, Write id begun): the
 * operations of n decoded WriteValues, or of n usual ones in their wire
 * bytes, their keys hashed by wk_svc_write_scan, queued or answered; the caller
 * commits.  The same records and results for the same request
 * (check_svc_write test_fused_same).
 */
/*
 * The Call service (svc_call.c) with its deferral made by the caller: ref
 * NULL when the request cannot wait (forwarded methods are then answered
 * BadResourceUnavailable or BadNotImplemented).  true when the answer
 * goes through ref (a pending Call); false when resp is the answer.
 */
struct wk_conn_ref;
bool wk_svc_call_ref(struct wk_svc_ctx *ctx, const struct ua_call_request *req,
                     struct ua_call_response *resp,
                     const struct wk_conn_ref *ref);

/*
 * The Arguments of method meth's property name ("InputArguments",
 * "OutputArguments"), decoded in a: UA_GOOD (*n 0 without the property),
 * or BadInternalError for a value that is no Argument array.
 */
ua_status wk_svc_call_argdefs(const struct wk_worker *w, uint32_t meth,
                              const char *name, struct ua_arena *a,
                              struct ua_argument **defs, int32_t *n);

/* v against Argument d: its DataType (svc_call.c's rule), and also its
 * ValueRank and ArrayDimensions (_arg_ok). */
bool wk_svc_call_type_ok(const struct wk_worker *w,
                         const struct ua_argument *d,
                         const struct ua_variant *v);
bool wk_svc_call_arg_ok(const struct wk_worker *w,
                        const struct ua_argument *d,
                        const struct ua_variant *v);

void wk_svc_write_ops(struct wk_worker *w, int id,
                      const struct ua_write_value *wvs, int32_t n);
struct wk_svc_pipe_key;
void wk_svc_write_ops_keys(struct wk_worker *w, int id,
                           const struct wk_svc_pipe_key *k, int32_t n);

/*
 * The endpoint list we offer (GetEndpoints, CreateSession), built in the
 * arena.  0, or -ENOMEM with *n = 0.
 */
int wk_svc_endpoints(struct wk_svc_ctx *ctx, int32_t *n,
                     struct ua_endpoint_description **eps);

/* Our ApplicationDescription (GetEndpoints, FindServers), in the arena. */
int wk_svc_app_description(struct wk_svc_ctx *ctx,
                           struct ua_application_description *d);

/* The null String (length -1). */
static inline struct ua_string
wk_svc_null_str(void)
{
    struct ua_string s = { -1, NULL };

    return s;
}

/* True for the null NodeId (ns=0;i=0), the "not specified" value. */
static inline bool
wk_svc_nodeid_is_null(const struct ua_nodeid *n)
{
    return n->ns == 0 && n->idtype == UA_IDTYPE_NUMERIC && n->id.num == 0;
}

/* The node index of n, or SHM_NONE. */
uint32_t wk_svc_lookup(const struct wk_worker *w, const struct ua_nodeid *n);

/*
 * n as a node store key: false for a NodeId no node can have (a bad
 * length, an unknown identifier type), whose lookup is SHM_NONE.
 */
bool wk_svc_key(const struct ua_nodeid *n, struct shm_nodekey *k);

/*
 * Lookups of n NodeIds (at first, first + stride, ...) pipelined three
 * deep: a key is hashed and its index entry prefetched WK_SVC_AHEAD
 * operations before its lookup, that entry's node half as far ahead, the
 * node's identifier bytes a quarter as far: a lookup's three dependent
 * misses (entry, node, string) overlap with the work of the operations
 * before it.  wk_svc_pipe_init() once, then wk_svc_pipe_lookup() for
 * i = 0, 1, ... n - 1 in order: node i's index or SHM_NONE.
 */
#define WK_SVC_AHEAD 8      /* a power of two: the ring is indexed by a
                               mask, not a signed % */

struct wk_svc_pipe_key {
    struct shm_nodekey key;         /* WK_SVC_NO_KEY's idtype: no node */
    uint32_t           hash;
    const uint8_t     *tail;        /* the fused Write's keys: the
                                       WriteValue's bytes after its
                                       NodeId (svc_write.c) */
};

/*
 * The key of a NodeId no node can have (wk_svc_key false): an identifier
 * type no node has (none of SHM_ID_*), so its lookup fails like any
 * unknown NodeId's and the stages need no flag to test.
 */
#define WK_SVC_NO_KEY_IDTYPE 0xFF
_Static_assert(WK_SVC_NO_KEY_IDTYPE > SHM_ID_NUMERIC
               && WK_SVC_NO_KEY_IDTYPE > SHM_ID_STRING
               && WK_SVC_NO_KEY_IDTYPE > SHM_ID_GUID
               && WK_SVC_NO_KEY_IDTYPE > SHM_ID_OPAQUE,
               "WK_SVC_NO_KEY_IDTYPE: no node's identifier type");

struct wk_svc_pipe {
    /* A copy: the caller's stores through byte pointers (a Write's
     * records) would make the compiler load the store's fields from the
     * worker again per lookup; a local's cannot change under them. */
    struct shm_nodestore        ns;
    const uint8_t              *first;
    size_t                      stride;
    uint32_t                    n;
    struct wk_svc_pipe_key      k[WK_SVC_AHEAD];
};

_Static_assert((WK_SVC_AHEAD & (WK_SVC_AHEAD - 1)) == 0 && WK_SVC_AHEAD >= 4,
               "WK_SVC_AHEAD: a power of two, a quarter of it at least 1");

/* Key entry e from its parts: stored field by field and hashed from
 * registers (a key built in a local and copied whole was read back as one
 * 16-byte load across its narrower stores, which the CPU cannot forward:
 * a store-forwarding stall per key, a third of the Write loop's samples),
 * its index entry prefetched (nst NULL: not now). */
static inline __attribute__((always_inline)) void
wk_svc_pipe_set(const struct shm_nodestore *nst, struct wk_svc_pipe_key *e,
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
wk_svc_pipe_key(struct wk_svc_pipe *p, uint32_t i)
{
    const struct ua_nodeid *id = (const struct ua_nodeid *)(const void *)
        (p->first + (size_t)i * p->stride);
    const uint8_t          *bytes = NULL;
    uint32_t                num = 0, len = 0;
    uint16_t                ns = id->ns;
    uint8_t                 idtype = id->idtype;

    /* wk_svc_key() for the usual String and numeric NodeIds without the
     * call; the same key (its other cases there). */
    if (idtype == UA_IDTYPE_STRING && id->id.str.len >= 0
        && (id->id.str.len == 0 || id->id.str.data != NULL)) {
        bytes = id->id.str.data;
        len = (uint32_t)id->id.str.len;
    } else if (idtype == UA_IDTYPE_NUMERIC) {
        num = id->id.num;
    } else {
        struct shm_nodekey key;         /* the rare forms: by the call */

        if (wk_svc_key(id, &key)) {
            ns = key.ns;
            idtype = key.idtype;
            num = key.num;
            bytes = key.bytes;
            len = key.len;
        } else {
            ns = 0;
            idtype = WK_SVC_NO_KEY_IDTYPE;
        }
    }
    wk_svc_pipe_set(&p->ns, &p->k[i & (WK_SVC_AHEAD - 1)], ns, idtype, num,
                    bytes, len);
}

static inline void
wk_svc_pipe_init(struct wk_svc_pipe *p, const struct wk_worker *w,
                 const void *first, size_t stride, int32_t n)
{
    p->ns = w->ns;
    p->first = first;
    p->stride = stride;
    p->n = n > 0 ? (uint32_t)n : 0;
    for (uint32_t i = 0; i < p->n && i < WK_SVC_AHEAD; i++)
        wk_svc_pipe_key(p, i);
}

static inline uint32_t
wk_svc_pipe_lookup(struct wk_svc_pipe *p, int32_t i_)
{
    const struct shm_nodestore   *ns = &p->ns;
    uint32_t                      i = (uint32_t)i_, j;
    const struct wk_svc_pipe_key *e = &p->k[i & (WK_SVC_AHEAD - 1)];
    uint32_t                      node;

    node = shm_nodestore_lookup_hashed(ns, &e->key, e->hash);
    /* Its entry now takes the key WK_SVC_AHEAD on. */
    if (i + WK_SVC_AHEAD < p->n)
        wk_svc_pipe_key(p, i + WK_SVC_AHEAD);
    j = i + WK_SVC_AHEAD / 2;
    if (j < p->n)
        shm_nodestore_prefetch_node(ns, p->k[j & (WK_SVC_AHEAD - 1)].hash);
    j = i + WK_SVC_AHEAD / 4;
    if (j < p->n)
        shm_nodestore_prefetch_id(ns, p->k[j & (WK_SVC_AHEAD - 1)].hash);
    return node;
}

/* Node i's NodeId, BrowseName, DisplayName (pointing into the store). */
void wk_svc_node_id(const struct wk_worker *w, uint32_t i,
                    struct ua_nodeid *out);
void wk_svc_node_browse_name(const struct wk_worker *w, uint32_t i,
                             struct ua_qualifiedname *out);
void wk_svc_localized(const struct wk_worker *w, uint32_t text_off,
                      uint32_t locale_off, struct ua_localizedtext *out);

/* Node i's NodeId as a local ExpandedNodeId (no URI, server 0). */
void wk_svc_node_expanded(const struct wk_worker *w, uint32_t i,
                          struct ua_expandednodeid *out);

/* ------------------------------------------------------ audit.c */

#define WK_AUDIT_REC_MAX 8192       /* bytes of one audit event record */

/* What a session audit event says (Part 5 §6.4.3, §6.4.7-6.4.9). */
struct wk_audit {
    uint32_t         type;          /* its EventType (ns0 numeric) */
    bool             status;        /* the action succeeded */
    struct ua_string audit_entry_id;
    struct ua_string user_id;
    struct ua_nodeid session_id;
    uint32_t         channel_id;
    struct ua_string client_cert;   /* CreateSession */
    double           revised_timeout;
};

/* The event record of a into b[cap] (shm/fanout.h); its length, 0 when
 * it does not fit.  Pure but for the EventId counter. */
uint32_t wk_audit_build(struct wk_worker *w, const struct wk_audit *a,
                        uint8_t *b, uint32_t cap);

/*
 * After CreateSession / ActivateSession / CloseSession (stat, the
 * service's SHM_SVC_*; req and resp as the handler had them; closed: the
 * SessionId CloseSession closed): raise its audit event when events.audit
 * is on.
 */
void wk_audit_session(struct wk_svc_ctx *ctx, uint32_t stat, const void *req,
                      const void *resp, const struct ua_nodeid *closed);

#endif /* WK_SVC_INT_H */
