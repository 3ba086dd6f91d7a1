/*
 * worker/reply.c: deferred replies (worker/reply.h): a pending request's
 * ref captured, checked and answered, through the connection layer
 * (wk_conn_of_ref, wk_conn_answer) or, without connections, through
 * w->reply_hook.
 *
 * Invariant: a ref answers at most the request it was captured for: the
 * connection must be the same pool entry, generation and channel id, or
 * the answer is dropped.
 *
 * Single-threaded, on the worker's loop.  No allocation.
 */
#include "reply.h"

#include <errno.h>
#include <string.h>

int
wk_reply_defer(const struct wk_conn_req *rq, uint32_t request_id,
               uint32_t request_handle, uint8_t stat, struct wk_conn_ref *ref)
{
    memset(ref, 0, sizeof(*ref));
    ref->index = UINT32_MAX;
    if (rq == NULL)
        return -EINVAL;
    ref->index = rq->conn;
    ref->gen = rq->gen;
    ref->channel_id = rq->channel_id;
    ref->request_id = request_id;
    ref->request_handle = request_handle;
    ref->t0_ns = rq->t0_ns;
    ref->stat = stat;
    return 0;
}

bool
wk_reply_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    if (w->reply_hook != NULL)
        return w->reply_hook->alive(w, ref);
    return wk_conn_of_ref(w->conns, ref) != NULL;
}

int
wk_reply_send(struct wk_worker *w, const struct wk_conn_ref *ref,
              const struct ua_type *t, void *resp)
{
    struct wk_conn *c;

    if (w->reply_hook != NULL)
        return w->reply_hook->respond(w, ref, t, resp);
    c = wk_conn_of_ref(w->conns, ref);
    if (c == NULL)
        return -ESTALE;
    return wk_conn_answer(c, ref, t, resp);
}
