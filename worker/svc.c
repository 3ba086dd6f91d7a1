/*
 * worker/svc.c: service dispatch (worker/svc.h) and the helpers the service
 * files share (worker/svc_int.h).
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
 *                                       not activated -> BadSessionNotActivated
 *                                       and the session is closed
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
 * keeps until the response is sent.  No heap allocation here.
 */
#include "svc.h"

#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "session.h"
#include "sub.h"
#include "svc_int.h"

/* wk_svc_desc.session */
#define WK_SVC_SESSION_NONE    0    /* discovery, CreateSession */
#define WK_SVC_SESSION_ACTIVE  1    /* an activated session of this channel */
#define WK_SVC_SESSION_CREATED 2    /* any session (ActivateSession,
                                       CloseSession); channel checked by
                                       the handler for ActivateSession */

static int wk_svc_desc_cmp(const void *key, const void *elem);
static const struct wk_svc_desc *wk_svc_find(uint32_t binary_id);
static ua_status wk_svc_fault(struct wk_worker *w, struct wk_svc_result *res,
                              struct ua_service_fault *f,
                              uint32_t request_handle, ua_status status,
                              uint8_t stat);
static ua_status wk_svc_session(struct wk_worker *w, struct ua_sc *ch,
                                const struct wk_svc_desc *d,
                                const struct ua_request_header *h,
                                struct wk_session **out);

#define WK_SVC(name, st, sess, fn)                                         \
    { UA_NS0ID_##name##REQUEST_ENCODING_DEFAULTBINARY,                     \
      UA_TYPE_##name##REQUEST, UA_TYPE_##name##RESPONSE, st,               \
      WK_SVC_SESSION_##sess, fn, NULL, NULL }
/* A service whose usual requests may skip the decode (wk_svc_scan_fn). */
#define WK_SVC_RAW(name, st, sess, fn, scan, raw)                          \
    { UA_NS0ID_##name##REQUEST_ENCODING_DEFAULTBINARY,                     \
      UA_TYPE_##name##REQUEST, UA_TYPE_##name##RESPONSE, st,               \
      WK_SVC_SESSION_##sess, fn, scan, raw }

/*
 * Every request type of Part 4, sorted by DefaultBinary id.  A NULL handler
 * is a service that has not landed yet: named here so its requests are
 * counted under the right service and answered BadServiceUnsupported.
 * OpenSecureChannel and CloseSecureChannel never get here (the channel
 * layer takes OPN and CLO).
 */
const struct wk_svc_desc wk_svc_table[] = {
    WK_SVC(FINDSERVERS, SHM_SVC_FIND_SERVERS, NONE, wk_svc_find_servers),
    WK_SVC(GETENDPOINTS, SHM_SVC_GET_ENDPOINTS, NONE, wk_svc_get_endpoints),
    WK_SVC(REGISTERSERVER, SHM_SVC_OTHER, NONE, NULL),
    WK_SVC(CREATESESSION, SHM_SVC_CREATE_SESSION, NONE,
           wk_svc_create_session),
    WK_SVC(ACTIVATESESSION, SHM_SVC_ACTIVATE_SESSION, CREATED,
           wk_svc_activate_session),
    WK_SVC(CLOSESESSION, SHM_SVC_CLOSE_SESSION, CREATED,
           wk_svc_close_session_subs),
    WK_SVC(CANCEL, SHM_SVC_CANCEL, ACTIVE, wk_svc_cancel),
    WK_SVC(ADDNODES, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(ADDREFERENCES, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(DELETENODES, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(DELETEREFERENCES, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(BROWSE, SHM_SVC_BROWSE, ACTIVE, wk_svc_browse),
    WK_SVC(BROWSENEXT, SHM_SVC_BROWSE_NEXT, ACTIVE, wk_svc_browse_next),
    WK_SVC(TRANSLATEBROWSEPATHSTONODEIDS, SHM_SVC_TRANSLATE, ACTIVE,
           wk_svc_translate),
    WK_SVC(REGISTERNODES, SHM_SVC_REGISTER_NODES, ACTIVE,
           wk_svc_register_nodes),
    WK_SVC(UNREGISTERNODES, SHM_SVC_UNREGISTER_NODES, ACTIVE,
           wk_svc_unregister_nodes),
    WK_SVC(QUERYFIRST, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(QUERYNEXT, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(READ, SHM_SVC_READ, ACTIVE, wk_svc_read),
    WK_SVC(HISTORYREAD, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC_RAW(WRITE, SHM_SVC_WRITE, ACTIVE, wk_svc_write,
               wk_svc_write_scan, wk_svc_write_raw),
    WK_SVC(HISTORYUPDATE, SHM_SVC_OTHER, ACTIVE, NULL),
    WK_SVC(CALL, SHM_SVC_CALL, ACTIVE, wk_svc_call),
    WK_SVC(CREATEMONITOREDITEMS, SHM_SVC_CREATE_MONITORED_ITEMS, ACTIVE,
           wk_svc_create_monitored_items),
    WK_SVC(MODIFYMONITOREDITEMS, SHM_SVC_MODIFY_MONITORED_ITEMS, ACTIVE,
           wk_svc_modify_monitored_items),
    WK_SVC(SETMONITORINGMODE, SHM_SVC_SET_MONITORING_MODE, ACTIVE,
           wk_svc_set_monitoring_mode),
    WK_SVC(SETTRIGGERING, SHM_SVC_SET_TRIGGERING, ACTIVE,
           wk_svc_set_triggering),
    WK_SVC(DELETEMONITOREDITEMS, SHM_SVC_DELETE_MONITORED_ITEMS, ACTIVE,
           wk_svc_delete_monitored_items),
    WK_SVC(CREATESUBSCRIPTION, SHM_SVC_CREATE_SUBSCRIPTION, ACTIVE,
           wk_svc_create_subscription),
    WK_SVC(MODIFYSUBSCRIPTION, SHM_SVC_MODIFY_SUBSCRIPTION, ACTIVE,
           wk_svc_modify_subscription),
    WK_SVC(SETPUBLISHINGMODE, SHM_SVC_SET_PUBLISHING_MODE, ACTIVE,
           wk_svc_set_publishing_mode),
    WK_SVC(PUBLISH, SHM_SVC_PUBLISH, ACTIVE, wk_svc_publish),
    WK_SVC(REPUBLISH, SHM_SVC_REPUBLISH, ACTIVE, wk_svc_republish),
    WK_SVC(TRANSFERSUBSCRIPTIONS, SHM_SVC_TRANSFER_SUBSCRIPTIONS, ACTIVE,
           wk_svc_transfer_subscriptions),
    WK_SVC(DELETESUBSCRIPTIONS, SHM_SVC_DELETE_SUBSCRIPTIONS, ACTIVE,
           wk_svc_delete_subscriptions),
    WK_SVC(FINDSERVERSONNETWORK, SHM_SVC_OTHER, NONE, NULL),
    WK_SVC(REGISTERSERVER2, SHM_SVC_OTHER, NONE, NULL),
};
const size_t wk_svc_table_len = sizeof(wk_svc_table) / sizeof(wk_svc_table[0]);

#undef WK_SVC
#undef WK_SVC_RAW

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

static const struct wk_svc_desc *
wk_svc_find(uint32_t binary_id)
{
    return bsearch(&binary_id, wk_svc_table, wk_svc_table_len,
                   sizeof(wk_svc_table[0]), wk_svc_desc_cmp);
}

static ua_status
wk_svc_fault(struct wk_worker *w, struct wk_svc_result *res,
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
    if (s == NULL)
        return UA_BAD_SESSION_ID_INVALID;
    if (s->channel_id != ch->channel_id) {
        /* ActivateSession may move a session to a new channel: its handler
         * decides.  Anything else is a token used where it was not issued
         * (SECURITY.md 46): refuse, count, leave the session alone. */
        if (d->fn != wk_svc_activate_session) {
            s->unauthorized++;
            return UA_BAD_SECURE_CHANNEL_ID_INVALID;
        }
        *out = s;
        return UA_GOOD;
    }
    if (!s->activated && d->session == WK_SVC_SESSION_ACTIVE) {
        /* Part 4 §5.7.3 / SECURITY.md 51: the session is closed. */
        wk_session_close(w, s);
        return UA_BAD_SESSION_NOT_ACTIVATED;
    }
    wk_session_touch(w, s);
    *out = s;
    return UA_GOOD;
}

ua_status
wk_svc_dispatch(struct wk_worker *w, struct ua_sc *ch,
                const struct ua_sc_msg *msg, struct ua_arena *a,
                struct wk_svc_result *res)
{
    const struct wk_svc_desc  *d = NULL;
    const struct ua_type      *rt;
    struct ua_service_fault   *fault;
    struct ua_nodeid           tid;
    struct ua_request_header   hdr;
    struct ua_response_header *rh;
    struct wk_svc_ctx          ctx;
    struct ua_nodeid           closed = ua_nodeid_num(0, 0);
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
    if (tid.ns == 0 && tid.idtype == UA_IDTYPE_NUMERIC)
        d = wk_svc_find(tid.id.num);

    if (d == NULL || d->fn == NULL) {
        /* Unknown or not implemented yet: the header is all we need. */
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
    if (d->stat == SHM_SVC_CLOSE_SESSION && ctx.session != NULL)
        closed = wk_session_id(ctx.session);
    if (req != NULL)
        d->fn(&ctx, req, resp);
    else
        d->raw(&ctx, resp);

    res->stat = d->stat;
    if (ctx.again) {
        res->again = true;
        return UA_GOOD;
    }
    if (d->stat == SHM_SVC_CREATE_SESSION
        || d->stat == SHM_SVC_ACTIVATE_SESSION
        || d->stat == SHM_SVC_CLOSE_SESSION)
        wk_audit_session(&ctx, d->stat, req, resp, &closed);
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

/* ------------------------------------------------------------------ */
/* helpers (svc_int.h)                                                 */
/* ------------------------------------------------------------------ */

bool
wk_svc_key(const struct ua_nodeid *n, struct shm_nodekey *k)
{
    k->ns = n->ns;
    k->idtype = n->idtype;
    k->num = 0;
    k->bytes = NULL;
    k->len = 0;
    switch (n->idtype) {
    case UA_IDTYPE_NUMERIC:
        k->num = n->id.num;
        return true;
    case UA_IDTYPE_STRING:
    case UA_IDTYPE_OPAQUE:
        if (n->id.str.len < 0 || (n->id.str.len > 0 && !n->id.str.data))
            return false;
        k->bytes = n->id.str.data;
        k->len = (uint32_t)n->id.str.len;
        return true;
    case UA_IDTYPE_GUID:
        k->bytes = (const uint8_t *)&n->id.guid;
        k->len = sizeof(n->id.guid);
        return true;
    default:
        return false;
    }
}

uint32_t
wk_svc_lookup(const struct wk_worker *w, const struct ua_nodeid *n)
{
    struct shm_nodekey k;

    if (!wk_svc_key(n, &k))
        return SHM_NONE;
    return shm_nodestore_lookup(&w->ns, &k);
}

void
wk_svc_node_id(const struct wk_worker *w, uint32_t i, struct ua_nodeid *out)
{
    const struct shm_node *n = &w->ns.nodes[i];
    struct shm_nodekey     k;

    memset(out, 0, sizeof(*out));
    if (n->idtype == SHM_ID_NUMERIC) {
        /* Most NodeIds (all of ns0): no key to build. */
        out->ns = n->ns;
        out->idtype = UA_IDTYPE_NUMERIC;
        out->id.num = n->id;
        return;
    }
    shm_nodestore_key(&w->ns, i, &k);
    out->ns = k.ns;
    out->idtype = k.idtype;
    switch (k.idtype) {
    case SHM_ID_NUMERIC:
        out->id.num = k.num;
        break;
    case SHM_ID_GUID:
        if (k.bytes != NULL && k.len == sizeof(out->id.guid))
            memcpy(&out->id.guid, k.bytes, sizeof(out->id.guid));
        break;
    default:                        /* String, Opaque */
        out->id.str.len = k.bytes != NULL ? (int32_t)k.len : 0;
        out->id.str.data = (uint8_t *)(uintptr_t)k.bytes;
        break;
    }
}

void
wk_svc_node_expanded(const struct wk_worker *w, uint32_t i,
                     struct ua_expandednodeid *out)
{
    wk_svc_node_id(w, i, &out->node);
    out->ns_uri.len = -1;
    out->ns_uri.data = NULL;
    out->server_index = 0;
}

void
wk_svc_node_browse_name(const struct wk_worker *w, uint32_t i,
                        struct ua_qualifiedname *out)
{
    const struct shm_node *n = &w->ns.nodes[i];
    uint32_t               len;
    const uint8_t         *p = shm_nodestore_string(&w->ns, n->browse_name,
                                                    &len);

    out->ns = n->browse_ns;
    out->name.len = p != NULL ? (int32_t)len : -1;
    out->name.data = (uint8_t *)(uintptr_t)p;
}

void
wk_svc_localized(const struct wk_worker *w, uint32_t text_off,
                 uint32_t locale_off, struct ua_localizedtext *out)
{
    uint32_t       len;
    const uint8_t *p;

    memset(out, 0, sizeof(*out));
    out->locale.len = -1;
    out->text.len = -1;
    p = shm_nodestore_string(&w->ns, text_off, &len);
    if (p != NULL) {
        out->mask |= UA_LT_TEXT;
        out->text.len = (int32_t)len;
        out->text.data = (uint8_t *)(uintptr_t)p;
    }
    p = shm_nodestore_string(&w->ns, locale_off, &len);
    if (p != NULL) {
        out->mask |= UA_LT_LOCALE;
        out->locale.len = (int32_t)len;
        out->locale.data = (uint8_t *)(uintptr_t)p;
    }
}
