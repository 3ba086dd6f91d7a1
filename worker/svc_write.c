/*
 * worker/svc_write.c: the Write service (Part 4 §5.10.4), applied by the
 * broker (docs/architecture.md §1: the broker is the only writer of values).
 *
 * The handler checks the request, resolves each NodeId in the node store
 * (an unknown one is answered BadNodeIdUnknown here, without the broker),
 * queues one SHM_FO_WRITE record per remaining WriteValue on the request
 * ring (the link's outbox, worker/outbox.h; record format in
 * shm/fanout.h) and defers its answer (worker/conn.h).  The pending Write
 * (worker/svc_write.h) is completed by the SHM_FO_RESULTS records the
 * link hands back (wk_svc_write_results).  The broker checks and applies
 * each one (broker/write.c) and sends the results back on the reply ring;
 * when the
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
 * without the link's rings BadServiceUnsupported.
 *
 * No heap: the pending Write and its results live in this file's pool,
 * the records are encoded straight into the link's outbox.  The lookups are
 * pipelined (wk_node_pipe, worker/node.h).  The usual WriteValue (a Value
 * alone, a fixed-size scalar, no IndexRange) is appended through a run
 * (struct wk_outbox_run, outbox.h): the open record's state stays in
 * locals through the loop and the record's header, tail and counters are
 * brought up to date once, when the run closes; anything else closes the
 * run, takes the general path (wk_outbox_write_any) and opens it again.
 * The same record bytes either way (check_outbox).  A reader's session
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
#include "svc_write.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "link.h"
#include "outbox.h"
#include "session.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "reply.h"
#include "node.h"
#include "svc.h"

static int wk_svc_write_start(struct wk_svc_ctx *ctx, int32_t n,
                              struct ua_response_header *rh);
static ua_status __attribute__((noinline))
wk_svc_write_wire_any(struct wk_outbox *ob, struct wk_outbox_run *r, int id,
                      uint32_t op, uint32_t node, uint32_t attr, uint8_t t,
                      const uint8_t *v, uint32_t fixed);
static struct wk_write *wk_svc_write_of(struct wk_writes *ws, uint32_t id);
static void wk_svc_write(struct wk_svc_ctx *ctx, const void *req,
                         void *resp);
static void wk_svc_write_raw(struct wk_svc_ctx *ctx, void *resp);
static void wk_svc_write_done(struct wk_writes *ws, struct wk_write *pw);
static void wk_svc_write_results(void *arg, const uint8_t *rec,
                                 uint32_t len);

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
    struct wk_writes  *ws = w->writes;
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
    if (!wk_link_on(w->link) || ws == NULL
        || wk_svc_defer(ctx, &ref) != 0) {
        rh->service_result = UA_BAD_SERVICE_UNSUPPORTED;
        return -1;
    }
    id = wk_svc_write_begin(ws, &ref, (uint32_t)n);
    if (id < 0) {
        ctx->pending = false;           /* answered now after all */
        rh->service_result = UA_BAD_SERVER_TOO_BUSY;
        return -1;
    }
    if (!wk_session_may_write(w, ctx->session)) {
        /* A reader's session: every operation, without a lookup. */
        for (int32_t i = 0; i < n; i++)
            wk_svc_write_result(ws, id, (uint32_t)i,
                                UA_BAD_USER_ACCESS_DENIED);
        wk_svc_write_commit(ws, id);
        return -1;
    }
    return id;
}

static void
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
    wk_svc_write_commit(ctx->w->writes, id);
}

/* Flattened: GCC left the node store's probe out of line in one of the
 * two loops, whose call cost ~20 instructions per WriteValue. */
__attribute__((flatten)) void
wk_svc_write_ops(struct wk_worker *w, int id,
                 const struct ua_write_value *wvs, int32_t n)
{
    struct wk_outbox    *ob = &w->link->out;
    struct wk_node_pipe  pipe;
    struct wk_outbox_run run;

    wk_node_pipe_init(&pipe, w, &wvs[0].node_id, sizeof(wvs[0]), n);
    wk_outbox_run_open(ob, id, &run);
    for (int32_t i = 0; i < n; i++) {
        const struct ua_write_value *wv = &wvs[i];
        uint32_t                     node = wk_node_pipe_lookup(&pipe, i);
        ua_status                    st;

        if (node == SHM_NONE)
            st = UA_BAD_NODE_ID_UNKNOWN;
        else
            st = wk_outbox_run_add(ob, &run, id, (uint32_t)i, node,
                                   wv->attribute_id, &wv->index_range,
                                   &wv->value);
        if (st != UA_GOOD)
            wk_svc_write_result(w->writes, id, (uint32_t)i, st);
    }
    wk_outbox_run_close(ob, &run);
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
    struct wk_node_pipe_key *k;

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
        wk_node_pipe_set(NULL, &k[i], ns, idtype, num, bytes, len);
    }
    ctx->raw = k;
    ctx->raw_n = n;
    return true;
}

/*
 * The fused form (wk_svc_raw_fn): wk_svc_write() without the decoded
 * request, from the keys the scan made.
 */
static void
wk_svc_write_raw(struct wk_svc_ctx *ctx, void *resp_)
{
    struct ua_write_response *resp = resp_;
    int                       id;

    id = wk_svc_write_start(ctx, ctx->raw_n, &resp->response_header);
    if (id < 0)
        return;
    wk_svc_write_ops_keys(ctx->w, id, ctx->raw, ctx->raw_n);
    wk_svc_write_commit(ctx->w->writes, id);
}

/*
 * wk_svc_write_ops()'s loop over the scan's keys: the lookup pipeline's
 * prefetches at its distances (index entry WK_NODE_AHEAD on, node half as
 * far, identifier a quarter), the probe, and the run, which copies each
 * value's wire bytes.  No decoded request, so none of its
 * stores and loads.
 */
__attribute__((flatten)) void
wk_svc_write_ops_keys(struct wk_worker *w, int id,
                      const struct wk_node_pipe_key *k, int32_t n)
{
    struct wk_outbox    *ob = &w->link->out;
    struct wk_outbox_run run;
    /* A copy, as in wk_node_pipe: the records' byte stores would make the
     * compiler load the store's fields from w again per lookup. */
    struct shm_nodestore nst = w->ns;

    for (int32_t i = 0; i < n && i < WK_NODE_AHEAD; i++)
        shm_nodestore_prefetch(&nst, k[i].hash);
    for (int32_t i = 0; i < n && i < WK_NODE_AHEAD / 2; i++) {
        shm_nodestore_prefetch_node(&nst, k[i].hash);
        if (i < WK_NODE_AHEAD / 4)
            shm_nodestore_prefetch_id(&nst, k[i].hash);
    }
    wk_outbox_run_open(ob, id, &run);
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *q = k[i].tail;
        uint32_t       node, attr, fixed;
        uint8_t        t = q[UA_WV_USUAL_TYPE];
        ua_status      st;

        if (i + WK_NODE_AHEAD < n)
            shm_nodestore_prefetch(&nst, k[i + WK_NODE_AHEAD].hash);
        if (i + WK_NODE_AHEAD / 2 < n)
            shm_nodestore_prefetch_node(&nst, k[i + WK_NODE_AHEAD / 2].hash);
        if (i + WK_NODE_AHEAD / 4 < n)
            shm_nodestore_prefetch_id(&nst, k[i + WK_NODE_AHEAD / 4].hash);
        node = shm_nodestore_lookup_hashed(&nst, &k[i].key, k[i].hash);
        fixed = (uint32_t)wk_outbox_type_size(t);
        memcpy(&attr, q + UA_WV_USUAL_ATTR, 4);
        if (node == SHM_NONE)
            st = UA_BAD_NODE_ID_UNKNOWN;
        else if (wk_outbox_run_wire(&run, (uint32_t)i, node, attr, t,
                                    q + UA_WV_USUAL_VALUE, fixed))
            continue;
        else
            st = wk_svc_write_wire_any(ob, &run, id, (uint32_t)i, node,
                                       attr, t, q + UA_WV_USUAL_VALUE, fixed);
        if (st != UA_GOOD)
            wk_svc_write_result(w->writes, id, (uint32_t)i, st);
    }
    wk_outbox_run_close(ob, &run);
}

/*
 * wk_outbox_run_add()'s fallback for a wire value the run cannot take
 * (its record is full): the DataValue the decoder would have made, then
 * the general path, as there.
 */
static ua_status
wk_svc_write_wire_any(struct wk_outbox *ob, struct wk_outbox_run *r, int id,
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
    wk_outbox_run_close(ob, r);
    st = wk_outbox_write_any(ob, id, op, node, attr, &null_range, &dv);
    wk_outbox_run_open(ob, id, r);
    return st;
}

/* ------------------------------------------------- the pending Writes */

int
wk_svc_write_init(struct wk_writes *ws, struct wk_worker *w, uint32_t n)
{
    memset(ws, 0, sizeof(*ws));
    ws->w = w;
    ws->free = UINT32_MAX;
    ws->n = n != 0 ? n : 1;
    ws->pool = wk_calloc(w, ws->n, sizeof(*ws->pool));
    /* Every Write's results in one block, not touched until used (one
     * allocation each faulted a page in at the start). */
    ws->results = wk_calloc(w, ws->n, (size_t)w->conf->max_nodes_per_write
                                          * sizeof(ua_status));
    if (ws->pool == NULL || ws->results == NULL) {
        wk_svc_write_clear(ws);
        return -ENOMEM;
    }
    for (uint32_t i = ws->n; i-- > 0;) {
        struct wk_write *pw = &ws->pool[i];

        pw->results = ws->results + (size_t)i * w->conf->max_nodes_per_write;
        pw->next_free = ws->free;
        ws->free = i;
    }
    if (wk_link_on(w->link))
        (void)wk_link_on_reply(w->link, SHM_FO_RESULTS,
                               wk_svc_write_results, ws);
    if (wk_svc_register(w, UA_NS0ID_WRITEREQUEST_ENCODING_DEFAULTBINARY,
                        wk_svc_write, wk_svc_write_scan,
                        wk_svc_write_raw) != 0) {
        wk_svc_write_clear(ws);
        return -EINVAL;
    }
    return 0;
}

void
wk_svc_write_clear(struct wk_writes *ws)
{
    if (ws->w == NULL)
        return;
    wk_free(ws->w, ws->results);
    wk_free(ws->w, ws->pool);
    if (ws->w->writes == ws)
        ws->w->writes = NULL;
    memset(ws, 0, sizeof(*ws));
}

int
wk_svc_write_begin(struct wk_writes *ws, const struct wk_conn_ref *ref,
                   uint32_t n)
{
    struct wk_write *pw;
    uint32_t         i = ws->free;

    if (i == UINT32_MAX || n == 0 || n > ws->w->conf->max_nodes_per_write)
        return -ENOSPC;
    pw = &ws->pool[i];
    ws->free = pw->next_free;
    /* 15 bits of sequence: an id is a positive int (and never 0). */
    ws->seq = (uint16_t)((ws->seq + 1) & 0x7FFF);
    if (ws->seq == 0)
        ws->seq = 1;
    pw->id = i | (uint32_t)ws->seq << 16;
    if (ws->w->link != NULL)
        wk_link_inflight(ws->w->link, 1);
    pw->ref = *ref;
    pw->n = n;
    pw->left = n;
    pw->next_free = UINT32_MAX;
    /* Every result is set before the response leaves; this one stays only
     * if a broker answered an operation twice and another never.  Two at
     * a time: the loop runs per WriteValue. */
    {
        const uint64_t two = (uint64_t)UA_BAD_INTERNAL_ERROR << 32
                             | UA_BAD_INTERNAL_ERROR;
        uint32_t       k;

        for (k = 0; k + 1 < n; k += 2)
            memcpy(&pw->results[k], &two, 8);
        if (k < n)
            pw->results[k] = UA_BAD_INTERNAL_ERROR;
    }
    return (int)pw->id;
}

static struct wk_write *
wk_svc_write_of(struct wk_writes *ws, uint32_t id)
{
    uint32_t i = id & 0xFFFFu;

    if (id == 0 || i >= ws->n || ws->pool[i].id != id)
        return NULL;
    return &ws->pool[i];
}

/* Out of line (noinline: the Write loops are flattened, and this, their
 * rare path, inlined there cost registers in the common one). */
__attribute__((noinline)) void
wk_svc_write_result(struct wk_writes *ws, int id, uint32_t op, ua_status st)
{
    struct wk_write *pw = wk_svc_write_of(ws, (uint32_t)id);

    if (pw == NULL || op >= pw->n || pw->left == 0)
        return;
    pw->results[op] = st;
    pw->left--;
}

void
wk_svc_write_commit(struct wk_writes *ws, int id)
{
    struct wk_write *pw = wk_svc_write_of(ws, (uint32_t)id);

    if (pw == NULL)
        return;
    if (pw->left == 0) {
        wk_svc_write_done(ws, pw);      /* nothing went to the broker */
        return;
    }
    wk_link_push(ws->w->link);
}

/* Every result is in: the WriteResponse, then the pending Write is free. */
static void
wk_svc_write_done(struct wk_writes *ws, struct wk_write *pw)
{
    struct ua_write_response resp;

    memset(&resp, 0, sizeof(resp));
    resp.response_header.service_result = UA_GOOD;
    resp.n_results = (int32_t)pw->n;
    resp.results = pw->results;
    resp.n_diagnostic_infos = 0;
    /* -ESTALE: the client left meanwhile; the write stands all the same. */
    (void)wk_reply_send(ws->w, &pw->ref, &ua_types[UA_TYPE_WRITERESPONSE],
                          &resp);
    pw->id = 0;
    pw->next_free = ws->free;
    ws->free = (uint32_t)(pw - ws->pool);
    if (ws->w->link != NULL)
        wk_link_inflight(ws->w->link, -1);
}

/*
 * A SHM_FO_RESULTS record from the reply ring (the link's handler): the
 * codes of operations first_op.. as far as the Write has operations and
 * results to come, in one copy (a broker that sends more cannot write
 * past the results or complete a Write twice).
 */
static void
wk_svc_write_results(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_writes     *ws = arg;
    struct shm_fo_results r;
    struct wk_write      *pw;
    uint32_t              k;

    if (len < sizeof(r))
        return;
    memcpy(&r, rec, sizeof(r));
    if (r.count > (len - sizeof(r)) / 4)
        return;
    pw = wk_svc_write_of(ws, r.id);
    if (pw == NULL)
        return;                         /* answered or dropped already */
    if (r.first_op < pw->n) {
        k = r.count;
        if (k > pw->n - r.first_op)
            k = pw->n - r.first_op;
        if (k > pw->left)
            k = pw->left;
        memcpy(&pw->results[r.first_op], rec + sizeof(r), 4 * (size_t)k);
        pw->left -= k;
    }
    if (pw->left == 0)
        wk_svc_write_done(ws, pw);
}
