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

#endif /* WK_SVC_INT_H */
