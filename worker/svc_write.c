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
 *
 * The fused form: a WriteRequest whose every WriteValue is the usual one
 * (a NodeId in a usual form, no IndexRange, a Value alone that is a
 * fixed-size scalar of at most 8 bytes) is never decoded.  The dispatch
 * offers its bytes to wk_svc_write_scan() first (struct wk_svc_desc scan),
 * which walks them once (proto/codec.h ua_write_request_head,
 * ua_write_value_usual) and runs the lookup pipeline's first stage for all
 * of them: each key hashed and stored with where its value is in an array
 * in the request arena.  Any WriteValue it does
 * not take, any limit, anything short: it declines, having touched nothing
 * but the arena, and the request is decoded and takes wk_svc_write() as
 * before, so every status is the decoder's or this file's as it was.
 * Taken, the dispatch checks the session and calls wk_svc_write_raw(): the
 * same checks (wk_svc_write_start), then wk_svc_write_ops_keys(): the
 * prefetches as far ahead as the pipeline makes them (index entry 8, node
 * 4, identifier 2), the probe, and the run, which copies each value's wire
 * bytes.  It saves the decoded WriteValue array's stores, the loop's loads
 * of it and the NodeIds' second reading (callgrind, write100: ~357 -> ~323
 * instructions per WriteValue in the worker).  check_svc_write
 * test_fused_* compare both forms' records, state and results.
 */
#include <stdint.h>
#include <string.h>

#include "fanout.h"
#include "session.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "svc_int.h"

static int wk_svc_write_start(struct wk_svc_ctx *ctx, int32_t n,
                              struct ua_response_header *rh);
static ua_status __attribute__((noinline))
wk_svc_write_wire_any(struct wk_fanout *f,
                                       struct wk_fanout_run *r, int id,
                                       uint32_t op, uint32_t node,
                                       uint32_t attr, uint8_t t,
                                       const uint8_t *v, uint32_t fixed);

/*
 * What both forms do before their loop: the service-level checks, the
 * deferral, the pending Write, a reader's answer.  Write id for the loop;
 * -1 when the request is answered (rh's ServiceResult or every result).
 */
static int
wk_svc_write_start(struct wk_svc_ctx *ctx, int32_t n,
                   struct ua_response_header *rh)
{
    struct wk_worker  *w = ctx->w;
    struct wk_fanout  *f = w->fanout;
    struct wk_conn_ref ref;
    int                id;

    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return -1;
    }
    if ((uint32_t)n > w->conf->max_nodes_per_write) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return -1;
    }
    if (!wk_fanout_on(f) || wk_conn_defer(ctx, &ref) != 0) {
        rh->service_result = UA_BAD_SERVICE_UNSUPPORTED;
        return -1;
    }
    id = wk_fanout_write_begin(f, &ref, (uint32_t)n);
    if (id < 0) {
        ctx->pending = false;           /* answered now after all */
        rh->service_result = UA_BAD_SERVER_TOO_BUSY;
        return -1;
    }
    if (!wk_session_may_write(w, ctx->session)) {
        /* A reader's session: every operation, without a lookup. */
        for (int32_t i = 0; i < n; i++)
            wk_fanout_write_result(f, id, (uint32_t)i,
                                   UA_BAD_USER_ACCESS_DENIED);
        wk_fanout_write_commit(f, id);
        return -1;
    }
    return id;
}

void
wk_svc_write(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_write_request *req = req_;
    struct ua_write_response      *resp = resp_;
    int32_t                        n = req->n_nodes_to_write;
    int                            id;

    id = wk_svc_write_start(ctx, n, &resp->response_header);
    if (id < 0)
        return;
    wk_svc_write_ops(ctx->w, id, req->nodes_to_write, n);
    wk_fanout_write_commit(ctx->w->fanout, id);
}

/* Flattened: GCC left the node store's probe out of line in one of the
 * two loops, whose call cost ~20 instructions per WriteValue. */
__attribute__((flatten)) void
wk_svc_write_ops(struct wk_worker *w, int id,
                 const struct ua_write_value *wvs, int32_t n)
{
    struct wk_fanout    *f = w->fanout;
    struct wk_svc_pipe   pipe;
    struct wk_fanout_run run;

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
}

/*
 * The fused form's scan (wk_svc_scan_fn): a WriteRequest whose every
 * WriteValue is the usual one (ua_write_request_head and
 * ua_write_value_usual, proto/codec.h) and at most
 * conf->max_nodes_per_write of them; anything else, including every error
 * and limit, is declined and takes the decode and wk_svc_write().  Taking
 * them is the pipeline's first stage for all of them at once: each one's
 * key hashed into an array in the arena (ctx->raw), the loop's stages
 * after it run from there.  No prefetch here: all of a request's index
 * entries at once came out no cheaper in CPU time than the pipeline's
 * distance (A/B, write100), and the loop issues them 8 ahead.  Nothing
 * outside the arena is touched before the request is known to be taken.
 */
bool
wk_svc_write_scan(struct wk_svc_ctx *ctx, const uint8_t *body, size_t blen,
                  struct ua_request_header *hdr)
{
    const struct wk_worker *w = ctx->w;
    const uint8_t          *p, *end = body + blen;
    uint32_t                max = w->conf->max_nodes_per_write;
    int32_t                 n, max_sl = w->limits.max_string_len;
    struct wk_svc_pipe_key *k;

    if (!ua_write_request_head(body, blen, &w->limits,
                               max > INT32_MAX ? INT32_MAX : (int32_t)max,
                               hdr, &p, &n))
        return false;
    k = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*k));
    if (k == NULL)
        return false;
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *bytes, *q;
        uint32_t       num, len;
        uint16_t       ns;
        uint8_t        idtype;

        p = ua_write_value_usual(p, end, max_sl, &ns, &idtype, &num, &bytes,
                                 &len, &q);
        if (p == NULL)
            return false;
        k[i].tail = q;
        wk_svc_pipe_set(NULL, &k[i], ns, idtype, num, bytes, len);
    }
    ctx->raw = k;
    ctx->raw_n = n;
    return true;
}

/*
 * The fused form (wk_svc_raw_fn): wk_svc_write() without the decoded
 * request, from the keys the scan made.
 */
void
wk_svc_write_raw(struct wk_svc_ctx *ctx, void *resp_)
{
    struct ua_write_response *resp = resp_;
    int                       id;

    id = wk_svc_write_start(ctx, ctx->raw_n, &resp->response_header);
    if (id < 0)
        return;
    wk_svc_write_ops_keys(ctx->w, id, ctx->raw, ctx->raw_n);
    wk_fanout_write_commit(ctx->w->fanout, id);
}

/*
 * wk_svc_write_ops()'s loop over the scan's keys: the lookup pipeline's
 * prefetches at its distances (index entry WK_SVC_AHEAD on, node half as
 * far, identifier a quarter), the probe, and the run, which copies each
 * value's wire bytes.  No decoded request, so none of its
 * stores and loads.
 */
__attribute__((flatten)) void
wk_svc_write_ops_keys(struct wk_worker *w, int id,
                      const struct wk_svc_pipe_key *k, int32_t n)
{
    struct wk_fanout    *f = w->fanout;
    struct wk_fanout_run run;
    /* A copy, as in wk_svc_pipe: the records' byte stores would make the
     * compiler load the store's fields from w again per lookup. */
    struct shm_nodestore nst = w->ns;

    for (int32_t i = 0; i < n && i < WK_SVC_AHEAD; i++)
        shm_nodestore_prefetch(&nst, k[i].hash);
    for (int32_t i = 0; i < n && i < WK_SVC_AHEAD / 2; i++) {
        shm_nodestore_prefetch_node(&nst, k[i].hash);
        if (i < WK_SVC_AHEAD / 4)
            shm_nodestore_prefetch_id(&nst, k[i].hash);
    }
    wk_fanout_run_open(f, id, &run);
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *q = k[i].tail;
        uint32_t       node, attr, fixed;
        uint8_t        t = q[UA_WV_USUAL_TYPE];
        ua_status      st;

        if (i + WK_SVC_AHEAD < n)
            shm_nodestore_prefetch(&nst, k[i + WK_SVC_AHEAD].hash);
        if (i + WK_SVC_AHEAD / 2 < n)
            shm_nodestore_prefetch_node(&nst, k[i + WK_SVC_AHEAD / 2].hash);
        if (i + WK_SVC_AHEAD / 4 < n)
            shm_nodestore_prefetch_id(&nst, k[i + WK_SVC_AHEAD / 4].hash);
        node = shm_nodestore_lookup_hashed(&nst, &k[i].key, k[i].hash);
        fixed = (uint32_t)wk_fanout_type_size(t);
        memcpy(&attr, q + UA_WV_USUAL_ATTR, 4);
        if (node == SHM_NONE)
            st = UA_BAD_NODE_ID_UNKNOWN;
        else if (wk_fanout_run_wire(&run, (uint32_t)i, node, attr, t,
                                    q + UA_WV_USUAL_VALUE, fixed))
            continue;
        else
            st = wk_svc_write_wire_any(f, &run, id, (uint32_t)i, node, attr,
                                       t, q + UA_WV_USUAL_VALUE, fixed);
        if (st != UA_GOOD)
            wk_fanout_write_result(f, id, (uint32_t)i, st);
    }
    wk_fanout_run_close(f, &run);
}

/*
 * wk_fanout_run_add()'s fallback for a wire value the run cannot take
 * (its record is full): the DataValue the decoder would have made, then
 * the general path, as there.
 */
static ua_status
wk_svc_write_wire_any(struct wk_fanout *f, struct wk_fanout_run *r, int id,
                      uint32_t op, uint32_t node, uint32_t attr, uint8_t t,
                      const uint8_t *v, uint32_t fixed)
{
    static const struct ua_string null_range = { -1, NULL };
    struct ua_datavalue           dv;
    _Alignas(8) uint8_t           val[8];       /* aligned, as decoded */
    bool                          b = v[0] != 0;
    ua_status                     st;

    memcpy(val, v, fixed);
    if (t == UA_BT_BOOLEAN)
        memcpy(val, &b, 1);
    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE;
    dv.value.type = t;
    dv.value.ndims = -1;
    dv.value.data = val;
    wk_fanout_run_close(f, r);
    st = wk_fanout_write_any(f, id, op, node, attr, &null_range, &dv);
    wk_fanout_run_open(f, id, r);
    return st;
}
