/*
 * worker/svc.h: service dispatch.
 *
 * The connection layer (worker/conn.c) hands every complete service request
 * of a channel to wk_svc_dispatch() and sends back the response it returns.
 * Dispatch decodes the request into the request arena, finds the session
 * by its authentication token (bound to the channel: a token used on
 * another channel is BadSecureChannelIdInvalid; services before activation
 * are BadSessionNotActivated), runs the handler and returns the response,
 * also built in the arena.  Unknown request types and services that have
 * not landed yet get a ServiceFault with BadServiceUnsupported; the channel
 * stays open.
 *
 * The table is keyed by the request's DefaultBinary encoding id (STYLE §7:
 * {request type, response type, handler}).
 */
#ifndef WK_SVC_H
#define WK_SVC_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/crypto.h"
#include "proto/securechannel.h"
#include "proto/types.h"
#include "shm/layout.h"
#include "worker.h"

/* What a handler sees. */
struct wk_svc_ctx {
    struct wk_worker  *w;
    struct ua_sc      *ch;          /* the channel the request came on */
    struct wk_session *session;     /* NULL for session-less services */
    struct ua_arena   *arena;       /* request arena: decode and respond */
    uint32_t           request_id;
    uint32_t           request_handle;
    uint8_t            stat;        /* enum shm_svc of the service */
    bool               pending;     /* wk_conn_defer() was called */
    bool               again;       /* not answered: dispatch the held
                                     * request again in the next step
                                     * (a UserName login, struct wk_login) */
    const void        *raw;         /* a scanned request (wk_svc_scan_fn):
                                     * what the scan made of its
                                     * operations, in the arena */
    int32_t            raw_n;       /* ... and how many */
};

/*
 * A UserName login in steps (worker/svc_session.c): the connection keeps
 * it while its ActivateSession is held (wk_conn_login, worker/conn.h);
 * each step decrypts one RSA block of the secret (in place, in the held
 * request), then each runs a slice of the PBKDF2.  wk_login_clear() wipes
 * it, and the secret: call it before the held request's buffer goes.
 */
enum { WK_LOGIN_NONE, WK_LOGIN_DECRYPTING, WK_LOGIN_HASHING };

struct wk_login {
    uint8_t          phase;         /* WK_LOGIN_* */
    bool             ok;            /* nothing failed so far */
    uint8_t          role;          /* the user's SHM_ROLE_* */
    uint8_t          hash_len;      /* bytes of hash to compare */
    bool             blocked;       /* its provisional failure blocked the
                                     * client (undone if it succeeds) */
    bool             ip_blocked;    /* ... blocked the peer address's
                                     * logins (undone if it succeeds) */
    uint8_t          enc;           /* DECRYPTING: enum ua_rsa_enc */
    bool             bad;           /* DECRYPTING: a block failed */
    uint16_t         block;         /* DECRYPTING: the next block */
    uint16_t         blocks;        /* DECRYPTING: of how many */
    uint32_t         pos;           /* DECRYPTING: plaintext bytes so far */
    uint32_t         secret_len;    /* DECRYPTING: ciphertext bytes */
    uint8_t         *secret;        /* DECRYPTING: the password's bytes in
                                     * the held request, decrypted in
                                     * place (wiped when done) */
    uint8_t          hash[UA_PBKDF2_STEP_OUT_MAX];
    struct ua_pbkdf2 kdf;
};

void wk_login_clear(struct wk_login *l);

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

struct wk_svc_desc {
    uint32_t        request_binary_id;  /* *_Encoding_DefaultBinary */
    uint16_t        request_type;       /* index into ua_types[] */
    uint16_t        response_type;
    uint8_t         stat;               /* enum shm_svc */
    uint8_t         session;            /* needs an activated session */
    wk_svc_fn       fn;
    wk_svc_scan_fn  scan;               /* NULL for most */
    wk_svc_raw_fn   raw;
};

/* The result of one dispatch, ready for ua_sc_send(). */
struct wk_svc_result {
    const struct ua_type *type;     /* response type (may be ServiceFault) */
    void                 *resp;     /* in the arena */
    uint8_t               stat;     /* enum shm_svc, for the counters */
    ua_status             service_result;
    /*
     * The handler deferred its answer (wk_conn_defer, worker/conn.h):
     * type and resp are NULL, nothing is sent now, and the request is
     * counted when wk_conn_respond() answers it.
     */
    bool                  pending;
    /* The handler wants another step (wk_svc_ctx.again): nothing sent,
     * nothing counted; the held request is dispatched again. */
    bool                  again;
};

/*
 * Decode msg and run its service.  Returns UA_GOOD with *res filled (a
 * ServiceFault counts as a result), or a Bad status when the message
 * cannot even be answered (undecodable type id or header): the caller
 * closes the channel with an ERR carrying that status.
 */
ua_status wk_svc_dispatch(struct wk_worker *w, struct ua_sc *ch,
                          const struct ua_sc_msg *msg, struct ua_arena *a,
                          struct wk_svc_result *res);

/* The table itself (sorted by request_binary_id). */
extern const struct wk_svc_desc wk_svc_table[];
extern const size_t             wk_svc_table_len;

/*
 * The Browse cache (worker/svc_browse.c): conf->browse_cache_kb of encoded
 * whole Browse results, allocated once at start.  0 or -ENOMEM; 0 KiB
 * leaves w->bcache NULL (no cache).
 */
int wk_svc_browse_cache_init(struct wk_worker *w);
void wk_svc_browse_cache_fini(struct wk_worker *w);

/* Browse operations answered from the cache so far. */
uint64_t wk_svc_browse_cache_hits(const struct wk_worker *w);

#endif /* WK_SVC_H */
