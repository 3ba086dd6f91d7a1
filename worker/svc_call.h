/*
 * worker/svc_call.h: the Call service's pending Calls and its table of
 * server-local methods (worker/svc_call.c).
 *
 * A Call whose methods are forwarded to the broker (their owner answers
 * them, broker/methods.c) is pending in a pool of conf->pending_calls,
 * each with its own arena (conf->max_call_bytes) holding the whole
 * CallResponse; the broker's SHM_FO_CALL_RESULT records (registered with
 * the link at init) complete it.
 *
 * Server-local methods (served by the worker itself, never forwarded) are
 * registered at start-up by the layer that implements them
 * (wk_svc_call_local_add): the subscriptions register GetMonitoredItems,
 * ResendData and ConditionRefresh(2).
 *
 * Single-threaded, on the worker's loop.  No allocation after init.
 */
#ifndef WK_SVC_CALL_H
#define WK_SVC_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "proto/arena.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "worker.h"

struct wk_svc_ctx;
struct wk_session;

/*
 * One Call in flight with methods forwarded to the broker: the
 * CallResponse being built, in its own arena, so the results the worker
 * made itself and the owner's output arguments outlive the request's
 * arena.
 */
struct wk_call {
    struct wk_conn_ref            ref;
    uint32_t                      id;       /* index | sequence << 16;
                                             * 0 = free */
    uint32_t                      n;        /* methods of the request */
    uint32_t                      left;     /* forwarded, not answered */
    uint32_t                      next_free;
    struct ua_call_method_result *results;  /* [n], in arena */
    uint32_t                     *methods;  /* [n] node index, in arena */
    struct ua_arena               arena;    /* over buf */
    uint8_t                      *buf;
};

/*
 * A server-local method: called with the request's context (the session
 * checked), m and its result r.  When `match` (ns=0 numeric ids of the
 * object and the method) says it is one, the Call takes it, after the
 * common checks (the object and the method exist, the method is a
 * component of the object, executable) unless `early`: then before
 * them, with no node check at all (ConditionRefresh on ConditionType).
 */
typedef void (*wk_svc_call_fn)(void *arg, struct wk_svc_ctx *ctx,
                               const struct ua_call_method_request *m,
                               struct ua_call_method_result *r);

#define WK_CALL_LOCAL_MAX 8

struct wk_call_local {
    uint32_t        object;         /* ns=0 numeric */
    uint32_t        method;         /* ns=0 numeric */
    bool            early;
    wk_svc_call_fn  fn;
    void           *arg;
};

struct wk_calls {
    struct wk_worker     *w;
    struct wk_call       *pool;
    uint32_t              n;
    uint32_t              free;         /* index, UINT32_MAX: none */
    uint16_t              seq;          /* 1..32767 */
    uint32_t              bytes;        /* each one's arena */
    uint8_t              *scratch;      /* OutputArguments, read */
    uint32_t              scratch_cap;
    struct wk_call_local  local[WK_CALL_LOCAL_MAX];
    uint32_t              nlocal;
};

/*
 * Register Call with the dispatcher (worker/svc.h) and make its pool of n
 * pending Calls (0: one) of bytes each (0: 65536), and a scratch buffer of
 * scratch bytes to check the owners' answers; the link's
 * SHM_FO_CALL_RESULT records go to it when w->link is up.  The caller
 * points w->calls at cs.  0, -EINVAL without a table, or -ENOMEM.
 */
int wk_svc_call_init(struct wk_calls *cs, struct wk_worker *w, uint32_t n,
                     uint32_t bytes, uint32_t scratch);

/* Free the pool. */
void wk_svc_call_clear(struct wk_calls *cs);

/* Register a server-local method (see above).  0; -ENOSPC. */
int wk_svc_call_local_add(struct wk_calls *cs, uint32_t object,
                          uint32_t method, bool early, wk_svc_call_fn fn,
                          void *arg);

/*
 * Start a Call of n methods (n <= conf->max_nodes_per_method_call) that
 * forwards some of them, answered through ref when the last forwarded one
 * is answered.  Its results array (zeroed) and everything the response
 * points at go into pc->arena.  NULL when every pending Call is in use.
 */
struct wk_call *wk_svc_call_begin(struct wk_calls *cs,
                                  const struct wk_conn_ref *ref, uint32_t n);

/*
 * Queue method op of pending Call pc for the broker: one SHM_FO_CALL
 * record (worker/outbox.h wk_outbox_call) with the role and user name of
 * session s (NULL: none) and the request's auditEntryId audit (NULL:
 * none).  UA_GOOD (the result comes with
 * the reply); BadRequestTooLarge, BadResourceUnavailable,
 * BadEncodingLimitsExceeded as wk_outbox_call says.
 */
ua_status wk_svc_call_add(struct wk_calls *cs, struct wk_call *pc,
                          uint32_t op, uint32_t object, uint32_t method,
                          const struct ua_variant *args, int32_t nargs,
                          const struct wk_session *s,
                          const struct ua_string *audit);

/*
 * Every method of pc is queued or answered: push what fits now; the
 * CallResponse goes out when the last answer is in (at once when none
 * was forwarded).
 */
void wk_svc_call_commit(struct wk_calls *cs, struct wk_call *pc);

/* The pending Call of id, or NULL (answered, dropped, never). */
struct wk_call *wk_svc_call_of(struct wk_calls *cs, uint32_t id);

/*
 * The Call service with its deferral made by the caller: ref NULL when
 * the request cannot wait (forwarded methods are then answered
 * BadResourceUnavailable or BadNotImplemented).  true when the answer
 * goes through ref (a pending Call); false when resp is the answer.
 */
bool wk_svc_call_ref(struct wk_svc_ctx *ctx, const struct ua_call_request *req,
                     struct ua_call_response *resp,
                     const struct wk_conn_ref *ref);

/*
 * The link's SHM_FO_CALL_RESULT handler (arg: struct wk_calls): a forwarded
 * method's answer, rec[len], its header checked by the link; its outputs
 * are checked against the method's OutputArguments.
 */
void wk_svc_call_reply(void *arg, const uint8_t *rec, uint32_t len);

#endif /* WK_SVC_CALL_H */
