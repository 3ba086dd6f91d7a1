/*
 * worker/svc.c: service dispatch (worker/svc.h).
 *
 * One request, in order:
 *
 *   1. the type NodeId                 undecodable -> return Bad: ERR, close
 *   2. the table entry (bsearch)        not ns=0 numeric, unknown, or not
 *                                       implemented -> ServiceFault
 *                                       BadServiceUnsupported (stays open)
 *   3. the whole request, w->limits     fails -> the RequestHeader alone:
 *      (or, for a service with a scan,
 *      its usual requests checked in
 *      their bytes, not decoded: the
 *      handler's raw form reads them)
 *                                       decodes -> ServiceFault with the
 *                                       decoder's status, requestHandle
 *                                       echoed, channel stays open;
 *                                       does not -> return Bad: ERR, close
 *   4. the session (if the service      unknown token -> BadSessionIdInvalid
 *      needs one)                       token of another channel ->
 *                                       BadSecureChannelIdInvalid, counted
 *                                       in s->unauthorized, session intact
 *                                       (ActivateSession: its handler
 *                                       decides, it may rebind)
 *                                       not activated -> BadSessionNotActivated
 *                                       and the session is closed
 *                                       (ActivateSession of a token of
 *                                       ours not found here: its handler
 *                                       claims it, worker/roam.h)
 *   5. the handler, on a response whose ResponseHeader is filled
 *   6. a Bad ServiceResult turns the response into a ServiceFault (Part 4:
 *      a service-level error is answered with a ServiceFault)
 *
 * Why a broken RequestHeader closes the channel (3): every request starts
 * with one, so a message whose header does not decode is not an OPC UA
 * request at all; answering it would only help a fuzzer probe us.  A body
 * that breaks a limit is an ordinary client mistake and gets a fault.
 *
 * Everything decoded and every response lives in the request arena; strings
 * decoded from msg point into msg->body (proto/codec.c), which the caller
 * keeps until the response is sent.  No heap allocation here (the table
 * is allocated once, by wk_svc_init).
 */
#include "svc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "park.h"
#include "reply.h"
#include "session.h"

static int wk_svc_desc_cmp(const void *key, const void *elem);
static struct wk_svc_desc *wk_svc_find(const struct wk_svc *t,
                                       uint32_t binary_id);
static ua_status wk_svc_fault(struct wk_worker *w, struct wk_conn_result *res,
                              struct ua_service_fault *f,
                              uint32_t request_handle, ua_status status,
                              uint8_t stat);
static ua_status wk_svc_session(struct wk_worker *w, struct ua_sc *ch,
                                const struct wk_svc_desc *d,
                                const struct ua_request_header *h,
                                struct wk_session **out);

#define WK_SVC(name, st, sess)                                             \
    { UA_NS0ID_##name##REQUEST_ENCODING_DEFAULTBINARY,                     \
      UA_TYPE_##name##REQUEST, UA_TYPE_##name##RESPONSE, st,               \
      WK_SVC_SESSION_##sess, NULL, NULL, NULL }

/*
 * Every request type of Part 4, sorted by DefaultBinary id, with the
 * session each needs (Part 4 §5.7).  A service nobody registers a handler
 * for is named here all the same, so its requests are counted under the
 * right service and answered BadServiceUnsupported.  OpenSecureChannel and
 * CloseSecureChannel never get here (the channel layer takes OPN and CLO).
 */
const struct wk_svc_desc wk_svc_table[] = {
    WK_SVC(FINDSERVERS, SHM_SVC_FIND_SERVERS, NONE),
    WK_SVC(GETENDPOINTS, SHM_SVC_GET_ENDPOINTS, NONE),
    WK_SVC(REGISTERSERVER, SHM_SVC_OTHER, NONE),
    WK_SVC(CREATESESSION, SHM_SVC_CREATE_SESSION, NONE),
    WK_SVC(ACTIVATESESSION, SHM_SVC_ACTIVATE_SESSION, REBIND),
    WK_SVC(CLOSESESSION, SHM_SVC_CLOSE_SESSION, CREATED),
    WK_SVC(CANCEL, SHM_SVC_CANCEL, ACTIVE),
    WK_SVC(ADDNODES, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(ADDREFERENCES, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(DELETENODES, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(DELETEREFERENCES, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(BROWSE, SHM_SVC_BROWSE, ACTIVE),
    WK_SVC(BROWSENEXT, SHM_SVC_BROWSE_NEXT, ACTIVE),
    WK_SVC(TRANSLATEBROWSEPATHSTONODEIDS, SHM_SVC_TRANSLATE, ACTIVE),
    WK_SVC(REGISTERNODES, SHM_SVC_REGISTER_NODES, ACTIVE),
    WK_SVC(UNREGISTERNODES, SHM_SVC_UNREGISTER_NODES, ACTIVE),
    WK_SVC(QUERYFIRST, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(QUERYNEXT, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(READ, SHM_SVC_READ, ACTIVE),
    WK_SVC(HISTORYREAD, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(WRITE, SHM_SVC_WRITE, ACTIVE),
    WK_SVC(HISTORYUPDATE, SHM_SVC_OTHER, ACTIVE),
    WK_SVC(CALL, SHM_SVC_CALL, ACTIVE),
    WK_SVC(CREATEMONITOREDITEMS, SHM_SVC_CREATE_MONITORED_ITEMS, ACTIVE),
    WK_SVC(MODIFYMONITOREDITEMS, SHM_SVC_MODIFY_MONITORED_ITEMS, ACTIVE),
    WK_SVC(SETMONITORINGMODE, SHM_SVC_SET_MONITORING_MODE, ACTIVE),
    WK_SVC(SETTRIGGERING, SHM_SVC_SET_TRIGGERING, ACTIVE),
    WK_SVC(DELETEMONITOREDITEMS, SHM_SVC_DELETE_MONITORED_ITEMS, ACTIVE),
    WK_SVC(CREATESUBSCRIPTION, SHM_SVC_CREATE_SUBSCRIPTION, ACTIVE),
    WK_SVC(MODIFYSUBSCRIPTION, SHM_SVC_MODIFY_SUBSCRIPTION, ACTIVE),
    WK_SVC(SETPUBLISHINGMODE, SHM_SVC_SET_PUBLISHING_MODE, ACTIVE),
    WK_SVC(PUBLISH, SHM_SVC_PUBLISH, ACTIVE),
    WK_SVC(REPUBLISH, SHM_SVC_REPUBLISH, ACTIVE),
    WK_SVC(TRANSFERSUBSCRIPTIONS, SHM_SVC_TRANSFER_SUBSCRIPTIONS, ACTIVE),
    WK_SVC(DELETESUBSCRIPTIONS, SHM_SVC_DELETE_SUBSCRIPTIONS, ACTIVE),
    WK_SVC(FINDSERVERSONNETWORK, SHM_SVC_OTHER, NONE),
    WK_SVC(REGISTERSERVER2, SHM_SVC_OTHER, NONE),
};
const size_t wk_svc_table_len = sizeof(wk_svc_table) / sizeof(wk_svc_table[0]);

#undef WK_SVC

/* ------------------------------------------------------------------ */
/* dispatch                                                            */
/* ------------------------------------------------------------------ */

static int
wk_svc_desc_cmp(const void *key, const void *elem)
{
    uint32_t                  id = *(const uint32_t *)key;
    const struct wk_svc_desc *d = elem;

    return id < d->request_binary_id ? -1 : id > d->request_binary_id;
}

static struct wk_svc_desc *
wk_svc_find(const struct wk_svc *t, uint32_t binary_id)
{
    return bsearch(&binary_id, t->d, t->n, sizeof(t->d[0]), wk_svc_desc_cmp);
}

/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

int
wk_svc_init(struct wk_worker *w)
{
    struct wk_svc *t = wk_alloc(w, sizeof(*t));

    if (t == NULL)
        return -ENOMEM;
    t->n = wk_svc_table_len;
    t->d = wk_alloc(w, sizeof(wk_svc_table));
    if (t->d == NULL) {
        wk_free(w, t);
        return -ENOMEM;
    }
    memcpy(t->d, wk_svc_table, sizeof(wk_svc_table));
    w->svc = t;
    return 0;
}

void
wk_svc_fini(struct wk_worker *w)
{
    if (w->svc == NULL)
        return;
    wk_free(w, w->svc->d);
    wk_free(w, w->svc);
    w->svc = NULL;
}

int
wk_svc_register(struct wk_worker *w, uint32_t binary_id, wk_svc_fn fn,
                wk_svc_scan_fn scan, wk_svc_raw_fn raw)
{
    struct wk_svc_desc *d;

    if (w->svc == NULL)
        return -EINVAL;
    d = wk_svc_find(w->svc, binary_id);
    if (d == NULL)
        return -ENOENT;
    d->fn = fn;
    d->scan = scan;
    d->raw = raw;
    return 0;
}

/* ------------------------------------------------------------------ */
/* dispatch                                                            */
/* ------------------------------------------------------------------ */

static ua_status
wk_svc_fault(struct wk_worker *w, struct wk_conn_result *res,
             struct ua_service_fault *f, uint32_t request_handle,
             ua_status status, uint8_t stat)
{
    memset(f, 0, sizeof(*f));
    f->response_header.timestamp = w->now_dt;
    f->response_header.request_handle = request_handle;
    f->response_header.service_result = status;
    res->type = &ua_types[UA_TYPE_SERVICEFAULT];
    res->resp = f;
    res->stat = stat;
    res->service_result = status;
    return UA_GOOD;
}

/* Find and check the session a request names (see the file comment). */
static ua_status
wk_svc_session(struct wk_worker *w, struct ua_sc *ch,
               const struct wk_svc_desc *d,
               const struct ua_request_header *h, struct wk_session **out)
{
    struct wk_session *s;

    *out = NULL;
    s = wk_session_find_by_token(w, &h->authentication_token);
    if (s == NULL) {
        /* ActivateSession of a session that may live in another worker
         * (its token has the shape of one): its handler claims it
         * (worker/roam.h). */
        if (d->session == WK_SVC_SESSION_REBIND && w->roam != NULL
            && wk_session_token_slot(w, &h->authentication_token) >= 0)
            return UA_GOOD;
        return UA_BAD_SESSION_ID_INVALID;
    }
    if (s->channel_id != ch->channel_id) {
        /* ActivateSession may move a session to a new channel: its handler
         * decides.  Anything else is a token used where it was not issued
         * (docs/security.md case 46): refuse, count, leave the session
         * alone. */
        if (d->session != WK_SVC_SESSION_REBIND) {
            s->unauthorized++;
            return UA_BAD_SECURE_CHANNEL_ID_INVALID;
        }
        *out = s;
        return UA_GOOD;
    }
    if (!s->activated && d->session == WK_SVC_SESSION_ACTIVE) {
        /* Part 4 §5.7.3 / docs/security.md case 51: the session is
         * closed. */
        wk_session_close(w, s);
        return UA_BAD_SESSION_NOT_ACTIVATED;
    }
    wk_session_touch(w, s);
    *out = s;
    return UA_GOOD;
}

ua_status
wk_svc_dispatch(struct wk_worker *w, struct ua_sc *ch,
                const struct wk_conn_req *rq, const struct ua_sc_msg *msg,
                struct ua_arena *a, struct wk_conn_result *res)
{
    const struct wk_svc_desc  *d = NULL;
    const struct ua_type      *rt;
    struct ua_service_fault   *fault;
    struct ua_nodeid           tid;
    struct ua_request_header   hdr;
    struct ua_response_header *rh;
    struct wk_svc_ctx          ctx;
    const uint8_t             *body;
    size_t                     used = 0, blen;
    void                      *req, *resp;
    ua_status                  s;

    memset(res, 0, sizeof(*res));
    /* The fault first: any later failure can still be answered. */
    fault = ua_arena_alloc(a, sizeof(*fault));
    if (fault == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    if (msg->body == NULL
        || ua_decode(msg->body, msg->len, &used, &tid,
                     &ua_types[UA_TYPE_NODEID], a, &w->limits) != UA_GOOD)
        return UA_BAD_DECODING_ERROR;
    body = msg->body + used;
    blen = msg->len - used;
    if (tid.ns == 0 && tid.idtype == UA_IDTYPE_NUMERIC && w->svc != NULL)
        d = wk_svc_find(w->svc, tid.id.num);

    if (d == NULL || d->fn == NULL) {
        /* Unknown or not served: the header is all we need. */
        s = ua_decode(body, blen, NULL, &hdr,
                      &ua_types[UA_TYPE_REQUESTHEADER], a, &w->limits);
        if (s != UA_GOOD)
            return UA_BAD_DECODING_ERROR;
        return wk_svc_fault(w, res, fault, hdr.request_handle,
                            UA_BAD_SERVICE_UNSUPPORTED,
                            d != NULL ? d->stat : SHM_SVC_OTHER);
    }

    memset(&ctx, 0, sizeof(ctx));
    ctx.w = w;
    ctx.ch = ch;
    ctx.rq = rq;
    ctx.arena = a;
    ctx.request_id = msg->request_id;
    ctx.stat = d->stat;
    if (d->scan != NULL && d->scan(&ctx, body, blen, &hdr)) {
        req = NULL;                     /* taken from the bytes: d->raw */
    } else {
        rt = &ua_types[d->request_type];
        req = ua_arena_alloc(a, rt->size);
        if (req == NULL)
            return wk_svc_fault(w, res, fault, 0, UA_BAD_OUT_OF_MEMORY,
                                d->stat);
        s = ua_decode(body, blen, NULL, req, rt, a, &w->limits);
        if (s != UA_GOOD) {
            ua_status hs = ua_decode(body, blen, NULL, &hdr,
                                     &ua_types[UA_TYPE_REQUESTHEADER], a,
                                     &w->limits);

            if (hs != UA_GOOD)
                return UA_BAD_DECODING_ERROR;
            return wk_svc_fault(w, res, fault, hdr.request_handle, s,
                                d->stat);
        }
        /* Every request starts with its RequestHeader. */
        memcpy(&hdr, req, sizeof(hdr));
    }
    ctx.request_handle = hdr.request_handle;
    if (d->session != WK_SVC_SESSION_NONE) {
        s = wk_svc_session(w, ch, d, &hdr, &ctx.session);
        if (s != UA_GOOD)
            return wk_svc_fault(w, res, fault, hdr.request_handle, s,
                                d->stat);
    }

    rt = &ua_types[d->response_type];
    resp = ua_arena_alloc(a, rt->size);
    if (resp == NULL)
        return wk_svc_fault(w, res, fault, hdr.request_handle,
                            UA_BAD_OUT_OF_MEMORY, d->stat);
    memset(resp, 0, rt->size);
    /* Every response starts with its ResponseHeader. */
    rh = resp;
    rh->timestamp = w->now_dt;
    rh->request_handle = hdr.request_handle;
    rh->service_result = UA_GOOD;
    if (req != NULL)
        d->fn(&ctx, req, resp);
    else
        d->raw(&ctx, resp);
    /* What a successor would take over changed (worker/park.h). */
    if (ctx.session != NULL && wk_park_service(d->stat))
        wk_park_touch(w, ctx.session);

    res->stat = d->stat;
    if (ctx.again) {
        res->again = true;
        res->wait = ctx.wait;
        return UA_GOOD;
    }
    if (ctx.pending) {
        /* Deferred (worker/conn.h): nothing to send now. */
        res->pending = true;
        return UA_GOOD;
    }
    res->service_result = rh->service_result;
    if (UA_STATUS_IS_BAD(rh->service_result)) {
        /* A ServiceFault is a ResponseHeader alone: the same memory. */
        res->type = &ua_types[UA_TYPE_SERVICEFAULT];
        res->resp = resp;
    } else {
        res->type = rt;
        res->resp = resp;
    }
    return UA_GOOD;
}

int
wk_svc_defer(struct wk_svc_ctx *ctx, struct wk_conn_ref *ref)
{
    int rc = wk_reply_defer(ctx->rq, ctx->request_id, ctx->request_handle,
                           ctx->stat, ref);

    if (rc == 0)
        ctx->pending = true;
    return rc;
}
