/*
 * worker/svc_histupd.c: the HistoryUpdate service (Part 4 §5.10.5, Part 11
 * §6.8; issue 18).
 *
 * The history store has one writer, the historian (worker/historian.c).
 * Each HistoryUpdateDetails that passes the checks here becomes one
 * SHM_FO_HUPD record (shm/fanout.h) on the request ring; the broker
 * passes it to the historian, which applies it and answers with a
 * SHM_FO_HUPD_RESULT that the broker passes back to us
 * (docs/design-notes.md D96).  The request is pending (worker/reply.h) in
 * a pending update of this file's pool (history.pending_updates), whose
 * arena holds the response; it leaves when the last details is answered.
 *
 * What is taken: UpdateDataDetails (PerformUpdateType Insert, Replace,
 * Update: a StatusCode per value, GoodEntryInserted, GoodEntryReplaced,
 * BadEntryExists, BadNoEntryExists; a value without a SourceTimestamp
 * BadInvalidTimestamp), DeleteRawModifiedDetails (the values of
 * [startTime, endTime); with isDeleteModified the modified values kept
 * of that range instead), DeleteAtTimeDetails (a StatusCode per time:
 * Good, BadNoEntryExists), UpdateStructureDataDetails of a historized
 * variable's Annotations Property (or of the variable itself; Part 11
 * §6.9.3: Insert, Replace, Update, Remove of Annotations, a StatusCode
 * per value as for UpdateDataDetails, Remove Good; a value that is no
 * Annotation BadTypeMismatch).  Each record carries the session's user
 * name: the historian keeps what a change replaces or deletes with it
 * (hist/modified.h).  Any other details BadHistoryOperationUnsupported
 * (events).
 *
 * Service results: no details BadNothingToDo; more than
 * history.max_update_nodes details (MaxNodesPerHistoryUpdateData) or
 * more than WK_SVC_HISTUPD_VALUES values and times in all
 * BadTooManyOperations; every pending update in use
 * BadResourceUnavailable.  Per details: a session whose user is not an
 * operator BadUserAccessDenied (viewers and anonymous users may not
 * change history); an unknown node BadNodeIdUnknown; a node that is not
 * historized (for UpdateStructureDataDetails: neither a historized
 * variable nor its Annotations Property), or history off,
 * BadHistoryOperationUnsupported; a node
 * without HistoryWrite in its AccessLevel and UserAccessLevel
 * BadUserAccessDenied; no values
 * or times, reversed or missing times BadHistoryOperationInvalid; a
 * details too large for the request ring BadRequestTooLarge; no room in
 * the outbox now BadResourceUnavailable; no answer from the historian
 * within WK_SVC_HISTUPD_TIMEOUT_MS (it died, or the broker dropped the
 * answer) BadTimeout, given when the pool needs the slot.
 *
 * Single-threaded on the worker's loop; the pool is allocated at start.
 */
#include "svc_histupd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "hist/store.h"
#include "histnode.h"
#include "link.h"
#include "node.h"
#include "outbox.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "reply.h"
#include "session.h"
#include "shm/fanout.h"
#include "shm/layout.h"
#include "shm/nodestore.h"
#include "svc.h"

#define WK_SVC_HISTUPD_VALUES      16384u  /* values and times, one request */
#define WK_SVC_HISTUPD_TIMEOUT_MS  10000u  /* the historian's answer */
#define WK_SVC_HISTUPD_WAITING     0xFFFFFFFFu /* a details sent, not back */
#define WK_SVC_HISTUPD_ACCESS_WRITE 0x08u      /* AccessLevel HistoryWrite */

/* One pending HistoryUpdate. */
struct wk_histupd {
    uint32_t                         id;    /* 0: free */
    uint32_t                         n;     /* details */
    uint32_t                         left;  /* ... not answered yet */
    uint64_t                         since_ms;
    struct wk_conn_ref               ref;
    struct ua_history_update_result *res;   /* [n], in arena */
    struct ua_arena                  arena;
    uint8_t                         *buf;
};

struct wk_histupds {
    struct wk_worker  *w;
    struct wk_histupd *pool;
    uint32_t           npool;
    uint32_t           seq;
    size_t             arena_cap;
};

static void wk_svc_histupd(struct wk_svc_ctx *ctx, const void *req,
                           void *resp);
static ua_status wk_svc_histupd_check(struct wk_svc_ctx *ctx,
                                      const struct ua_extobj *eo,
                                      uint32_t id, uint32_t op,
                                      uint8_t *rec, size_t cap,
                                      uint32_t *len);
static ua_status wk_svc_histupd_node(struct wk_svc_ctx *ctx,
                                     const struct ua_nodeid *id,
                                     uint64_t *key);
static ua_status wk_svc_histupd_values(uint8_t **pp, const uint8_t *rec,
                                       size_t cap, int32_t n,
                                       const struct ua_datavalue *v);
static struct wk_histupd *wk_svc_histupd_begin(struct wk_histupds *hs);
static void wk_svc_histupd_done(struct wk_histupds *hs,
                                struct wk_histupd *pu);
static void wk_svc_histupd_reply(void *arg, const uint8_t *rec,
                                 uint32_t len);

int
wk_svc_histupd_init(struct wk_worker *w)
{
    struct wk_histupds *hs;
    uint32_t            np = w->conf->history_pending_updates;
    uint32_t            nn = w->conf->history_max_update_nodes;

    hs = calloc(1, sizeof(*hs));
    if (hs == NULL)
        return -ENOMEM;
    hs->w = w;
    w->histupd = hs;
    if (np == 0)
        np = 1;
    hs->arena_cap = (size_t)nn * (sizeof(struct ua_history_update_result)
                                  + 16)
                    + (size_t)WK_SVC_HISTUPD_VALUES * 4 + 4096;
    hs->pool = calloc(np, sizeof(*hs->pool));
    if (hs->pool == NULL) {
        wk_svc_histupd_fini(w);
        return -ENOMEM;
    }
    hs->npool = np;
    for (uint32_t i = 0; i < np; i++) {
        hs->pool[i].buf = malloc(hs->arena_cap);
        if (hs->pool[i].buf == NULL) {
            wk_svc_histupd_fini(w);
            return -ENOMEM;
        }
    }
    if (wk_svc_register(w, UA_NS0ID_HISTORYUPDATEREQUEST_ENCODING_DEFAULTBINARY,
                        wk_svc_histupd, NULL, NULL) != 0
        || (w->link != NULL && wk_link_on(w->link)
            && wk_link_on_reply(w->link, SHM_FO_HUPD_RESULT,
                                wk_svc_histupd_reply, hs) != 0)) {
        wk_svc_histupd_fini(w);
        return -EINVAL;
    }
    return 0;
}

void
wk_svc_histupd_fini(struct wk_worker *w)
{
    struct wk_histupds *hs = w->histupd;

    if (hs == NULL)
        return;
    if (hs->pool != NULL)
        for (uint32_t i = 0; i < hs->npool; i++)
            free(hs->pool[i].buf);
    free(hs->pool);
    free(hs);
    w->histupd = NULL;
}

/* ------------------------------------------------------------ the service */

static void
wk_svc_histupd(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_history_update_request *req = req_;
    struct ua_history_update_response      *resp = resp_;
    struct ua_response_header              *rh = &resp->response_header;
    struct wk_histupds                     *hs = ctx->w->histupd;
    struct ua_history_update_result        *res;
    struct wk_histupd                      *pu = NULL;
    uint8_t                                *rec = NULL;
    size_t                                  cap = 0;
    int32_t                                 n = req->n_history_update_details;
    uint32_t                                left = 0, len;
    uint64_t                                values = 0;

    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return;
    }
    if ((uint32_t)n > ctx->w->conf->history_max_update_nodes) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        const struct ua_extobj *eo = &req->history_update_details[i];

        if (eo->encoding != UA_EO_DECODED || eo->obj == NULL)
            continue;
        if (eo->type == &ua_types[UA_TYPE_UPDATEDATADETAILS])
            values += (uint32_t)((const struct ua_update_data_details *)
                                     eo->obj)->n_update_values;
        else if (eo->type == &ua_types[UA_TYPE_DELETEATTIMEDETAILS])
            values += (uint32_t)((const struct ua_delete_at_time_details *)
                                     eo->obj)->n_req_times;
        else if (eo->type == &ua_types[UA_TYPE_UPDATESTRUCTUREDATADETAILS])
            values += (uint32_t)(
                (const struct ua_update_structure_data_details *)eo->obj)
                ->n_update_values;
    }
    if (values > WK_SVC_HISTUPD_VALUES) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    res = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*res));
    if (res == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    memset(res, 0, (size_t)n * sizeof(*res));
    if (ctx->session != NULL && ctx->session->user == WK_USER_OPERATOR
        && ctx->w->link != NULL && wk_link_on(ctx->w->link)) {
        /* Something may go to the historian: a pending update for the
         * answers, one record's room (a request ring) to build each in. */
        pu = wk_svc_histupd_begin(hs);
        if (pu == NULL) {
            rh->service_result = UA_BAD_RESOURCE_UNAVAILABLE;
            return;
        }
        cap = (size_t)ctx->w->link->out.ring_slots
              * ctx->w->link->out.slot_size;
        rec = ua_arena_alloc(ctx->arena, cap);
        if (rec == NULL) {
            pu->id = 0;
            rh->service_result = UA_BAD_OUT_OF_MEMORY;
            return;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        ua_status st;
        int       rc;

        st = wk_svc_histupd_check(ctx, &req->history_update_details[i],
                                  pu != NULL ? pu->id : 0, (uint32_t)i, rec,
                                  cap, &len);
        if (st == UA_GOOD) {
            rc = wk_outbox_rec(&ctx->w->link->out, rec, len);
            st = rc == 0 ? WK_SVC_HISTUPD_WAITING
                 : rc == -EMSGSIZE ? UA_BAD_REQUEST_TOO_LARGE
                                   : UA_BAD_RESOURCE_UNAVAILABLE;
            if (rc == 0)
                left++;
        }
        res[i].status_code = st;
    }
    resp->n_results = n;
    resp->results = res;
    if (left == 0) {
        if (pu != NULL)
            pu->id = 0;                 /* nothing went: answered now */
        return;
    }
    if (wk_svc_defer(ctx, &pu->ref) != 0) {
        /* Not from the connection layer: no way to answer later. */
        for (int32_t i = 0; i < n; i++)
            if (res[i].status_code == WK_SVC_HISTUPD_WAITING)
                res[i].status_code = UA_BAD_INTERNAL_ERROR;
        pu->id = 0;
        return;
    }
    /* The answers fill the pending update's copy of the results. */
    pu->n = (uint32_t)n;
    pu->left = left;
    pu->res = ua_arena_alloc(&pu->arena, (size_t)n * sizeof(*pu->res));
    memcpy(pu->res, res, (size_t)n * sizeof(*res));
    wk_link_push(ctx->w->link);
}

/*
 * Check details op and build its SHM_FO_HUPD record (for pending update
 * id) in rec[cap]: UA_GOOD and *len, or the details' StatusCode.
 */
static ua_status
wk_svc_histupd_check(struct wk_svc_ctx *ctx, const struct ua_extobj *eo,
                     uint32_t id, uint32_t op, uint8_t *rec, size_t cap,
                     uint32_t *len)
{
    struct shm_fo_hupd u;
    uint8_t           *p;
    size_t             used;
    ua_status          st;

    if (eo->encoding != UA_EO_DECODED || eo->obj == NULL)
        return UA_BAD_HISTORY_OPERATION_INVALID;
    if (ctx->session == NULL || ctx->session->user != WK_USER_OPERATOR)
        return UA_BAD_USER_ACCESS_DENIED;
    if (rec == NULL)
        return UA_BAD_HISTORY_OPERATION_UNSUPPORTED;    /* no rings */
    memset(&u, 0, sizeof(u));
    u.hdr.kind = SHM_FO_HUPD;
    u.id = id;
    u.op = op;
    /* Who: the ModificationInfo's userName (hist/modified.h). */
    u.user_len = (uint8_t)strnlen(ctx->session->user_id,
                                  sizeof(ctx->session->user_id));
    p = rec + sizeof(u);
    memcpy(p, ctx->session->user_id, u.user_len);
    used = ((size_t)u.user_len + SHM_FO_WOP_ALIGN - 1)
           & ~(size_t)(SHM_FO_WOP_ALIGN - 1);
    memset(p + u.user_len, 0, used - u.user_len);
    p += used;
    if (eo->type == &ua_types[UA_TYPE_UPDATEDATADETAILS]) {
        const struct ua_update_data_details *d = eo->obj;

        st = wk_svc_histupd_node(ctx, &d->node_id, &u.key);
        if (st != UA_GOOD)
            return st;
        if (d->perform_insert_replace < SHM_FO_HUPD_INSERT
            || d->perform_insert_replace > SHM_FO_HUPD_UPDATE
            || d->n_update_values <= 0)
            return UA_BAD_HISTORY_OPERATION_INVALID;
        u.what = (uint16_t)d->perform_insert_replace;
        st = wk_svc_histupd_values(&p, rec, cap, d->n_update_values,
                                   d->update_values);
        if (st != UA_GOOD)
            return st;
        u.count = (uint32_t)d->n_update_values;
    } else if (eo->type == &ua_types[UA_TYPE_UPDATESTRUCTUREDATADETAILS]) {
        const struct ua_update_structure_data_details *d = eo->obj;
        uint32_t node = wk_node_lookup(ctx->w, &d->node_id);
        uint32_t var = wk_histnode_annotated(ctx->w, node);
        struct ua_nodeid vid;

        /* The Annotations Property names its variable; the variable
         * itself is taken too. */
        if (var != SHM_NONE)
            wk_node_id(ctx->w, var, &vid);
        st = wk_svc_histupd_node(ctx, var != SHM_NONE ? &vid : &d->node_id,
                                 &u.key);
        if (st != UA_GOOD)
            return st;
        if (d->perform_insert_replace < 1 || d->perform_insert_replace > 4
            || d->n_update_values <= 0)
            return UA_BAD_HISTORY_OPERATION_INVALID;
        u.what = SHM_FO_HUPD_ANNOT;
        u.annot_op = (uint8_t)d->perform_insert_replace;
        st = wk_svc_histupd_values(&p, rec, cap, d->n_update_values,
                                   d->update_values);
        if (st != UA_GOOD)
            return st;
        u.count = (uint32_t)d->n_update_values;
    } else if (eo->type == &ua_types[UA_TYPE_DELETERAWMODIFIEDDETAILS]) {
        const struct ua_delete_raw_modified_details *d = eo->obj;

        st = wk_svc_histupd_node(ctx, &d->node_id, &u.key);
        if (st != UA_GOOD)
            return st;
        if (d->start_time <= 0 || d->end_time <= 0
            || d->start_time == d->end_time)
            return UA_BAD_HISTORY_OPERATION_INVALID;
        u.what = d->is_delete_modified ? SHM_FO_HUPD_FORGET
                                       : SHM_FO_HUPD_DELETE_RAW;
        u.lo = d->start_time < d->end_time ? d->start_time : d->end_time;
        u.hi = d->start_time < d->end_time ? d->end_time : d->start_time;
    } else if (eo->type == &ua_types[UA_TYPE_DELETEATTIMEDETAILS]) {
        const struct ua_delete_at_time_details *d = eo->obj;

        st = wk_svc_histupd_node(ctx, &d->node_id, &u.key);
        if (st != UA_GOOD)
            return st;
        if (d->n_req_times <= 0)
            return UA_BAD_HISTORY_OPERATION_INVALID;
        if ((size_t)d->n_req_times * 8 > cap - (size_t)(p - rec))
            return UA_BAD_REQUEST_TOO_LARGE;
        u.what = SHM_FO_HUPD_DELETE_AT;
        memcpy(p, d->req_times, (size_t)d->n_req_times * 8);
        p += (size_t)d->n_req_times * 8;
        u.count = (uint32_t)d->n_req_times;
    } else {
        return UA_BAD_HISTORY_OPERATION_UNSUPPORTED;
    }
    memcpy(rec, &u, sizeof(u));
    *len = (uint32_t)(p - rec);
    return UA_GOOD;
}

/* n DataValues v at *pp (in rec[cap]), each a uint32 length and its
 * encoding padded: UA_GOOD, or BadRequestTooLarge. */
static ua_status
wk_svc_histupd_values(uint8_t **pp, const uint8_t *rec, size_t cap,
                      int32_t n, const struct ua_datavalue *v)
{
    uint8_t *p = *pp;
    size_t   used;

    for (int32_t k = 0; k < n; k++) {
        uint32_t dl;
        size_t   room = cap - (size_t)(p - rec);

        if (room < 4 + SHM_FO_WOP_ALIGN
            || ua_encode(&v[k], &ua_types[UA_TYPE_DATAVALUE], p + 4,
                         room - 4, &used) != UA_GOOD
            || used + 4 + SHM_FO_WOP_ALIGN > room)
            return UA_BAD_REQUEST_TOO_LARGE;
        dl = (uint32_t)used;
        memcpy(p, &dl, 4);
        used = (4 + used + SHM_FO_WOP_ALIGN - 1)
               & ~(size_t)(SHM_FO_WOP_ALIGN - 1);
        memset(p + 4 + dl, 0, used - 4 - dl);
        p += used;
    }
    *pp = p;
    return UA_GOOD;
}

/* The history key of node id when it is historized: UA_GOOD, or why
 * not. */
static ua_status
wk_svc_histupd_node(struct wk_svc_ctx *ctx, const struct ua_nodeid *id,
                    uint64_t *key)
{
    const struct shm_node *n;
    struct ua_nodeid       nid;
    uint8_t                idb[4200];
    size_t                 idlen;
    uint32_t               node = wk_node_lookup(ctx->w, id);

    if (node == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    n = shm_nodestore_node(&ctx->w->ns, node);
    if (n->node_class != SHM_NC_VARIABLE || !(n->flags & SHM_NF_HISTORIZING)
        || ctx->w->conf->history_dir[0] == '\0')
        return UA_BAD_HISTORY_OPERATION_UNSUPPORTED;
    /* HistoryWrite (Part 3 §8.57): [history]'s nodes have it, a NodeSet's
     * as its file says. */
    if (!(n->user_access_level & n->access_level_ex
          & WK_SVC_HISTUPD_ACCESS_WRITE))
        return UA_BAD_USER_ACCESS_DENIED;
    /* The key of the node's own NodeId (the historian's, hist/store.h). */
    wk_node_id(ctx->w, node, &nid);
    if (ua_encode(&nid, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb), &idlen)
        != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    *key = hs_store_key(idb, idlen);
    return UA_GOOD;
}

/* ------------------------------------------------------------ the pool */

/*
 * A free pending update (its arena empty), or NULL.  When none is free,
 * the ones waiting longer than WK_SVC_HISTUPD_TIMEOUT_MS are answered
 * (BadTimeout for what did not come back) and taken.
 */
static struct wk_histupd *
wk_svc_histupd_begin(struct wk_histupds *hs)
{
    struct wk_histupd *pu = NULL;
    uint64_t           now = hs->w->now_ms;

    for (uint32_t i = 0; i < hs->npool && pu == NULL; i++)
        if (hs->pool[i].id == 0)
            pu = &hs->pool[i];
    for (uint32_t i = 0; i < hs->npool && pu == NULL; i++) {
        struct wk_histupd *o = &hs->pool[i];

        if (now - o->since_ms < WK_SVC_HISTUPD_TIMEOUT_MS)
            continue;
        for (uint32_t k = 0; k < o->n; k++)
            if (o->res[k].status_code == WK_SVC_HISTUPD_WAITING)
                o->res[k].status_code = UA_BAD_TIMEOUT;
        wk_svc_histupd_done(hs, o);
        pu = o;
    }
    if (pu == NULL)
        return NULL;
    if (++hs->seq == 0 || hs->seq > 0xFFFFu)
        hs->seq = 1;
    pu->id = hs->seq << 16 | (uint32_t)(pu - hs->pool);
    pu->n = 0;
    pu->left = 0;
    pu->res = NULL;
    pu->since_ms = now;
    ua_arena_init(&pu->arena, pu->buf, hs->arena_cap);
    return pu;
}

/* Send pu's HistoryUpdateResponse (when pu is not NULL) and free it. */
static void
wk_svc_histupd_done(struct wk_histupds *hs, struct wk_histupd *pu)
{
    struct ua_history_update_response resp;

    if (pu == NULL)
        return;
    memset(&resp, 0, sizeof(resp));
    resp.response_header.service_result = UA_GOOD;
    resp.n_results = (int32_t)pu->n;
    resp.results = pu->res;
    /* -ESTALE: the client left meanwhile; the history changed anyway. */
    (void)wk_reply_send(hs->w, &pu->ref,
                        &ua_types[UA_TYPE_HISTORYUPDATERESPONSE], &resp);
    pu->id = 0;
}

/*
 * A SHM_FO_HUPD_RESULT from the reply ring (the link's handler): one
 * details answered; the response when it was the last.
 */
static void
wk_svc_histupd_reply(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_histupds              *hs = arg;
    struct shm_fo_hupd_result        h;
    struct wk_histupd               *pu;
    struct ua_history_update_result *r;
    uint32_t                         i;

    if (len < sizeof(h))
        return;
    memcpy(&h, rec, sizeof(h));
    i = h.id & 0xFFFFu;
    if (h.id == 0 || i >= hs->npool || hs->pool[i].id != h.id)
        return;                         /* timed out and taken already */
    pu = &hs->pool[i];
    if (h.op >= pu->n || pu->res[h.op].status_code != WK_SVC_HISTUPD_WAITING)
        return;
    r = &pu->res[h.op];
    r->status_code = h.status;
    if (h.count != 0 && (uint64_t)h.count * 4 <= len - sizeof(h)) {
        r->operation_results = ua_arena_alloc(&pu->arena,
                                              (size_t)h.count * 4);
        if (r->operation_results == NULL) {
            r->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        } else {
            memcpy(r->operation_results, rec + sizeof(h),
                   (size_t)h.count * 4);
            r->n_operation_results = (int32_t)h.count;
        }
    }
    if (--pu->left == 0)
        wk_svc_histupd_done(hs, pu);
}
