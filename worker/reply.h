/*
 * worker/reply.h: deferred replies.  A service handler that cannot answer
 * at once (Write waits for the broker; Publish waits for notifications;
 * a Call for the broker's methods) captures a struct wk_conn_ref
 * (worker/conn.h) with wk_reply_defer() and returns; the request is
 * reported pending and its connection sends nothing for it.  Later, from
 * anywhere on the loop (a ring drain, a timer, another request),
 * wk_reply_send() encodes the response into that connection's output, to
 * leave with the iteration's write, if the connection is still the one
 * the request came on (same pool index, same generation, same channel
 * id); otherwise the response is dropped (-ESTALE): the client is gone,
 * or reconnected on another connection.
 *
 * Nothing is allocated for a pending request: the ref is a few words the
 * handler keeps where it likes.  The request's arena and its bytes are
 * gone when the handler returns; copy out what the answer needs.  A
 * pending request is counted (requests, latency from its arrival) when it
 * is answered.
 *
 * Without connections (unit tests of the layers above, benchmarks) the
 * replies go to w->reply_hook instead (struct wk_reply_hook).
 *
 * Single-threaded: on the worker's one event loop.
 */
#ifndef WK_REPLY_H
#define WK_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "proto/types.h"
#include "worker.h"

/*
 * Where deferred responses go when there are no connections: a unit test
 * of the layers above sets w->reply_hook to capture them (NULL: the
 * connection layer's).
 */
struct wk_reply_hook {
    int  (*respond)(struct wk_worker *w, const struct wk_conn_ref *ref,
                    const struct ua_type *t, void *resp);
    bool (*alive)(const struct wk_worker *w, const struct wk_conn_ref *ref);
};

/*
 * Inside a request handler only: answer this request (rq, its RequestId,
 * RequestHandle and service stat) later.  Fills *ref.  0; -EINVAL when rq
 * is NULL (not handed over by the connection layer: a unit test calling
 * the dispatcher directly; *ref is then zeroed and never matches a
 * connection).
 */
int wk_reply_defer(const struct wk_conn_req *rq, uint32_t request_id,
                   uint32_t request_handle, uint8_t stat,
                   struct wk_conn_ref *ref);

/*
 * Answer a pending request: encode resp (of type t; its ResponseHeader's
 * requestHandle and timestamp are set here, its ServiceResult is the
 * caller's: a Bad one sends a ServiceFault) into the connection of ref,
 * flushed with this iteration's writes.  resp stays the caller's; nothing
 * else is touched (not the request arena).  0; -ESTALE when that
 * connection is gone, closing or carries another channel (the response is
 * dropped); -EIO when encoding failed and the connection is being closed.
 */
int wk_reply_send(struct wk_worker *w, const struct wk_conn_ref *ref,
                  const struct ua_type *t, void *resp);

/* True while the connection of ref is the one the request came on. */
bool wk_reply_alive(const struct wk_worker *w, const struct wk_conn_ref *ref);

#endif /* WK_REPLY_H */
