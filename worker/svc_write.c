/*
 * worker/svc_write.c: the Write service (Part 4 §5.10.4), applied by the
 * broker (DESIGN §1: the broker is the only writer of values).
 *
 * The handler checks the request, resolves each NodeId in the node store
 * (an unknown one is answered BadNodeIdUnknown here, without the broker),
 * queues one SHM_FO_WRITE record per remaining WriteValue on the request
 * ring (worker/fanout.c; record format in shm/fanout.h) and defers its
 * answer (worker/conn.h).  The broker checks and applies each one
 * (broker/write.c) and sends the results back on the reply ring; when the
 * last one is in, the WriteResponse leaves.  So a WriteResponse means the
 * values are in shared memory: a Read on any worker afterwards sees them.
 *
 * A session that may not write (wk_session_may_write: anonymous unless
 * security.anonymous_write, role viewer) gets BadUserAccessDenied for
 * every WriteValue, without the broker.
 *
 * Service results: no nodesToWrite BadNothingToDo; more than
 * conf->max_nodes_per_write BadTooManyOperations; every pending-Write slot
 * of this worker in use (conf->pending_writes) BadServerTooBusy; a segment
 * without the fan-out rings BadServiceUnsupported.
 *
 * No heap: the pending Write and its results live in the fan-out's pool,
 * the records are encoded straight into its outbox.  The lookups are
 * pipelined (wk_svc_pipe, svc_int.h).  The usual WriteValue (a Value
 * alone, a fixed-size scalar, no IndexRange) is appended through a run
 * (struct wk_fanout_run, fanout.h): the open record's state stays in
 * locals through the loop and the record's header, tail and counters are
 * brought up to date once, when the run closes; anything else closes the
 * run, takes the general path (wk_fanout_write_any) and opens it again.
 * The same record bytes either way (check_svc_write).  A reader's session
 * is answered without lookups.
 */
#include <string.h>

#include "fanout.h"
#include "session.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "svc_int.h"

void
wk_svc_write(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_write_request *req = req_;
    struct ua_write_response      *resp = resp_;
    struct ua_response_header     *rh = &resp->response_header;
    struct wk_worker              *w = ctx->w;
    struct wk_fanout              *f = w->fanout;
    struct wk_conn_ref             ref;
    int32_t                        n = req->n_nodes_to_write;
    /* In a local: the loop's stores through byte pointers would make
     * the compiler load it from req again per WriteValue. */
    const struct ua_write_value   *wvs = req->nodes_to_write;
    int                            id;
    struct wk_svc_pipe             pipe;
    struct wk_fanout_run           run;
    bool                           may = wk_session_may_write(w,
                                                              ctx->session);

    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return;
    }
    if ((uint32_t)n > w->conf->max_nodes_per_write) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    if (!wk_fanout_on(f) || wk_conn_defer(ctx, &ref) != 0) {
        rh->service_result = UA_BAD_SERVICE_UNSUPPORTED;
        return;
    }
    id = wk_fanout_write_begin(f, &ref, (uint32_t)n);
    if (id < 0) {
        ctx->pending = false;           /* answered now after all */
        rh->service_result = UA_BAD_SERVER_TOO_BUSY;
        return;
    }
    if (!may) {
        /* A reader's session: every operation, without a lookup. */
        for (int32_t i = 0; i < n; i++)
            wk_fanout_write_result(f, id, (uint32_t)i,
                                   UA_BAD_USER_ACCESS_DENIED);
        wk_fanout_write_commit(f, id);
        return;
    }
    wk_svc_pipe_init(&pipe, w, &wvs[0].node_id, sizeof(wvs[0]), n);
    wk_fanout_run_open(f, id, &run);
    for (int32_t i = 0; i < n; i++) {
        const struct ua_write_value *wv = &wvs[i];
        uint32_t                     node = wk_svc_pipe_lookup(&pipe, i);
        ua_status                    st;

        if (node == SHM_NONE)
            st = UA_BAD_NODE_ID_UNKNOWN;
        else
            st = wk_fanout_run_add(f, &run, id, (uint32_t)i, node,
                                   wv->attribute_id, &wv->index_range,
                                   &wv->value);
        if (st != UA_GOOD)
            wk_fanout_write_result(f, id, (uint32_t)i, st);
    }
    wk_fanout_run_close(f, &run);
    wk_fanout_write_commit(f, id);
}
