/*
 * worker/svc.h: service dispatch.
 *
 * The connection layer (worker/conn.h) hands every complete service
 * request of a channel to the request handler main.c registers, which is
 * wk_svc_dispatch().  Dispatch decodes the request into the request
 * arena, finds the session by its authentication token (bound to the
 * channel: a token used on another channel is BadSecureChannelIdInvalid;
 * services before activation are BadSessionNotActivated), runs the
 * handler and returns the response, also built in the arena.  Unknown
 * request types and services that have no handler get a ServiceFault with
 * BadServiceUnsupported; the channel stays open.
 *
 * The table is keyed by the request's DefaultBinary encoding id
 * (docs/style.md §7: {request type, response type, handler}).  It lists
 * every request type of Part 4 with the session it needs; the handlers are
 * registered at start-up by the layer that implements them
 * (wk_svc_register): the svc layer its own services, the subscriptions
 * theirs.
 */
#ifndef WK_SVC_H
#define WK_SVC_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "proto/arena.h"
#include "proto/securechannel.h"
#include "proto/types.h"
#include "shm/layout.h"
#include "worker.h"

/* What a handler sees. */
struct wk_svc_ctx {
    struct wk_worker         *w;
    struct ua_sc             *ch;       /* the channel the request came on */
    const struct wk_conn_req *rq;       /* the connection layer's context,
                                         * NULL when not dispatched by it
                                         * (unit tests) */
    struct wk_session        *session;  /* NULL for session-less services */
    struct ua_arena          *arena;    /* request arena: decode, respond */
    uint32_t                  request_id;
    uint32_t                  request_handle;
    uint8_t                   stat;     /* enum shm_svc of the service */
    bool                      pending;  /* wk_svc_defer() was called */
    bool                      again;    /* not answered: dispatch the held
                                         * request again in the next step
                                         * (a UserName login,
                                         * worker/login.h) */
    bool                      wait;     /* with again: when the layer
                                         * above wakes it (worker/roam.h),
                                         * not in the next step */
    const void               *raw;      /* a scanned request
                                         * (wk_svc_scan_fn): what the scan
                                         * made of its operations, in the
                                         * arena */
    int32_t                   raw_n;    /* ... and how many */
};

/*
 * A handler fills resp (zeroed, with its ResponseHeader already set from
 * the request's RequestHeader: timestamp, requestHandle, ServiceResult
 * Good).  It sets resp's ServiceResult itself for a service-level failure.
 */
typedef void (*wk_svc_fn)(struct wk_svc_ctx *ctx, const void *req,
                          void *resp);

/*
 * Optional, a service's usual requests taken straight from their bytes
 * (the fused Write, worker/svc_write.c), skipping the decoded request:
 * scan looks at the body after the type NodeId and either takes it (true:
 * hdr decoded, ctx->raw and raw_n set, and decoding the body would have
 * succeeded) or declines (false, nothing done: the table decode and fn
 * take the request, as if there were no scan).  Taken, the dispatch goes
 * on as for a decoded request (session, response) and calls raw instead
 * of fn: the same answer fn would give.
 */
typedef bool (*wk_svc_scan_fn)(struct wk_svc_ctx *ctx, const uint8_t *body,
                               size_t blen, struct ua_request_header *hdr);
typedef void (*wk_svc_raw_fn)(struct wk_svc_ctx *ctx, void *resp);

/* struct wk_svc_desc.session: what the service needs */
#define WK_SVC_SESSION_NONE    0    /* discovery, CreateSession */
#define WK_SVC_SESSION_ACTIVE  1    /* an activated session of this channel */
#define WK_SVC_SESSION_CREATED 2    /* any session of this channel
                                       (CloseSession) */
#define WK_SVC_SESSION_REBIND  3    /* any session, any channel: the handler
                                       decides (ActivateSession); also no
                                       session here but a token that may
                                       name one elsewhere (NULL session:
                                       worker/roam.h) */

struct wk_svc_desc {
    uint32_t        request_binary_id;  /* *_Encoding_DefaultBinary */
    uint16_t        request_type;       /* index into ua_types[] */
    uint16_t        response_type;
    uint8_t         stat;               /* enum shm_svc */
    uint8_t         session;            /* WK_SVC_SESSION_* */
    wk_svc_fn       fn;                 /* NULL: not served */
    wk_svc_scan_fn  scan;               /* NULL for most */
    wk_svc_raw_fn   raw;
};

/* The dispatch table of one worker (the spec's list, handlers filled in
 * by registration). */
struct wk_svc {
    struct wk_svc_desc *d;              /* a copy of wk_svc_table */
    size_t              n;
};

/* Every request type of Part 4, sorted by request_binary_id, without
 * handlers (the template each worker's table starts from). */
extern const struct wk_svc_desc wk_svc_table[];
extern const size_t             wk_svc_table_len;

/* The worker's table (w->svc), no handler yet.  0 or -ENOMEM. */
int wk_svc_init(struct wk_worker *w);
void wk_svc_fini(struct wk_worker *w);

/*
 * The handler of the request type whose DefaultBinary encoding id is
 * binary_id (scan and raw may be NULL).  0; -ENOENT for an id the table
 * does not list; -EINVAL without a table.
 */
int wk_svc_register(struct wk_worker *w, uint32_t binary_id, wk_svc_fn fn,
                    wk_svc_scan_fn scan, wk_svc_raw_fn raw);

/*
 * Decode msg and run its service.  Returns UA_GOOD with *res filled (a
 * ServiceFault counts as a result), or a Bad status when the message
 * cannot even be answered (undecodable type id or header): the caller
 * closes the channel with an ERR carrying that status.  rq: the
 * connection layer's context (NULL: none, nothing can be deferred).
 */
ua_status wk_svc_dispatch(struct wk_worker *w, struct ua_sc *ch,
                          const struct wk_conn_req *rq,
                          const struct ua_sc_msg *msg, struct ua_arena *a,
                          struct wk_conn_result *res);

/*
 * Inside a handler only: answer this request later through *ref
 * (worker/reply.h wk_reply_send); the request is reported pending.  0;
 * -EINVAL when the request did not come from the connection layer (*ref
 * zeroed, never matching a connection; nothing pending).
 */
int wk_svc_defer(struct wk_svc_ctx *ctx, struct wk_conn_ref *ref);

#endif /* WK_SVC_H */
