/*
 * worker/svc_sub.c: the Subscription services (Part 4 §5.13): service-
 * level checks and the per-operation loops, the revisions and results;
 * what changes the subscriptions' state is in worker/sub.c (through
 * sub_int.h).  The MonitoredItem services (§5.12) are in
 * worker/svc_monitem.c, registered from here.
 * And the Server object's two methods the worker serves itself (Part 5
 * §9.1), registered with the Call service (worker/svc_call.h):
 *
 *   GetMonitoredItems (i=11492)   in: subscriptionId UInt32
 *                                 out: serverHandles UInt32[],
 *                                      clientHandles UInt32[]
 *   ResendData (i=12873)          in: subscriptionId UInt32
 *                                 (the next Publish carries the current
 *                                 value of every enabled item)
 *
 * Their statuses: the input argument as the Call service checks others
 * (BadArgumentsMissing, BadTooManyArguments, BadInvalidArgument with
 * BadTypeMismatch), BadSubscriptionIdInvalid, or BadUserAccessDenied for
 * a subscription of another session.
 *
 * Service results, in this order: BadNothingToDo (no operations);
 * BadTooManyOperations (more than the configured limit: MonitoredItem
 * services conf->max_monitored_items_per_call, SetTriggering links each
 * the same, subscription id lists conf->max_subscriptions);
 * BadSubscriptionIdInvalid (a subscription that is not this session's);
 * BadTimestampsToReturnInvalid.  A client's CloseSession reaches the
 * subscriptions through the session layer's listener
 * (wk_sub_session_closed): its deleteSubscriptions flag is ours to
 * honour.
 *
 * Results live in the request arena; no heap.
 */
#include <errno.h>
#include <string.h>

#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "roam.h"
#include "session.h"
#include "sub.h"
#include "sub_int.h"
#include "svc.h"
#include "svc_call.h"
#include "svc_sub.h"

static void wk_svc_sub_revise(struct wk_subs *st, struct wk_sub *sub,
                              double interval, uint32_t keepalive,
                              uint32_t lifetime, uint32_t notifs,
                              uint8_t priority);
static void wk_svc_create_subscription(struct wk_svc_ctx *ctx,
                                       const void *req, void *resp);
static void wk_svc_modify_subscription(struct wk_svc_ctx *ctx,
                                       const void *req, void *resp);
static void wk_svc_delete_subscriptions(struct wk_svc_ctx *ctx,
                                        const void *req, void *resp);
static void wk_svc_set_publishing_mode(struct wk_svc_ctx *ctx,
                                       const void *req, void *resp);
static void wk_svc_publish(struct wk_svc_ctx *ctx, const void *req,
                           void *resp);
static void wk_svc_republish(struct wk_svc_ctx *ctx, const void *req,
                             void *resp);
static void wk_svc_transfer_subscriptions(struct wk_svc_ctx *ctx,
                                          const void *req, void *resp);
static void wk_svc_sub_transfer(struct wk_svc_ctx *ctx, struct wk_subs *st,
                                uint32_t id, bool initial,
                                struct ua_transfer_result *res);
static ua_status wk_svc_sub_server_args(struct wk_svc_ctx *ctx,
                                        const struct ua_call_method_request
                                            *m,
                                        struct ua_call_method_result *r,
                                        uint32_t *sub_id);
static void wk_svc_sub_server(void *arg, struct wk_svc_ctx *ctx,
                              const struct ua_call_method_request *m,
                              struct ua_call_method_result *r);
static ua_status wk_svc_sub_get_items(struct wk_svc_ctx *ctx,
                                      struct wk_subs *st, struct wk_sub *sub,
                                      struct ua_call_method_result *r);

int
wk_svc_sub_init(struct wk_worker *w)
{
#define WK_REQ(name) UA_NS0ID_##name##REQUEST_ENCODING_DEFAULTBINARY
    static const struct {
        uint32_t  id;
        wk_svc_fn fn;
    } reg[] = {
        { WK_REQ(CREATESUBSCRIPTION), wk_svc_create_subscription },
        { WK_REQ(MODIFYSUBSCRIPTION), wk_svc_modify_subscription },
        { WK_REQ(DELETESUBSCRIPTIONS), wk_svc_delete_subscriptions },
        { WK_REQ(SETPUBLISHINGMODE), wk_svc_set_publishing_mode },
        { WK_REQ(PUBLISH), wk_svc_publish },
        { WK_REQ(REPUBLISH), wk_svc_republish },
        { WK_REQ(TRANSFERSUBSCRIPTIONS), wk_svc_transfer_subscriptions },
    };
#undef WK_REQ

    for (size_t i = 0; i < sizeof(reg) / sizeof(reg[0]); i++)
        if (wk_svc_register(w, reg[i].id, reg[i].fn, NULL, NULL) != 0)
            return -EINVAL;
    if (wk_svc_monitem_init(w) != 0)
        return -EINVAL;
    if (w->calls != NULL
        && (wk_svc_call_local_add(w->calls, UA_NS0ID_SERVER,
                                  UA_NS0ID_SERVER_GETMONITOREDITEMS, false,
                                  wk_svc_sub_server, w) != 0
            || wk_svc_call_local_add(w->calls, UA_NS0ID_SERVER,
                                     UA_NS0ID_SERVER_RESENDDATA, false,
                                     wk_svc_sub_server, w) != 0
            || wk_svc_call_local_add(w->calls, UA_NS0ID_CONDITIONTYPE,
                                     UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH,
                                     true, wk_ev_refresh_call, w) != 0
            || wk_svc_call_local_add(w->calls, UA_NS0ID_CONDITIONTYPE,
                                     UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH2,
                                     true, wk_ev_refresh_call, w) != 0))
        return -EINVAL;
    return wk_session_on_closing(w, wk_sub_session_closed, w) == 0
               ? 0 : -EINVAL;
}

bool
wk_svc_sub_count(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
                 int32_t n, uint32_t max)
{
    (void)ctx;
    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return false;
    }
    if ((uint32_t)n > max) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return false;
    }
    return true;
}

void *
wk_svc_sub_array(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
                 int32_t n, size_t size)
{
    void *p = ua_arena_alloc(ctx->arena, (size_t)n * size);

    if (p == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return NULL;
    }
    memset(p, 0, (size_t)n * size);
    return p;
}

/* ------------------------------------------------------ subscriptions */

/* CreateSubscription (Part 4 §5.13.2): the requested parameters revised
 * (§5.13.2.2, docs/security.md case 82). */
static void
wk_svc_create_subscription(struct wk_svc_ctx *ctx, const void *req_,
                           void *resp_)
{
    const struct ua_create_subscription_request *req = req_;
    struct ua_create_subscription_response      *resp = resp_;
    struct wk_subs    *st = wk_subs_need(ctx->w);
    struct wk_subsess *e;
    struct wk_sub     *sub;

    if (st == NULL) {
        resp->response_header.service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    e = wk_sub_ss(st, ctx->session);
    sub = wk_sub_open(st, e);
    if (sub == NULL) {
        resp->response_header.service_result = UA_BAD_TOO_MANY_SUBSCRIPTIONS;
        return;
    }
    wk_svc_sub_revise(st, sub, req->requested_publishing_interval,
                      req->requested_max_keep_alive_count,
                      req->requested_lifetime_count,
                      req->max_notifications_per_publish, req->priority);
    sub->enabled = req->publishing_enabled;
    sub->user = ctx->session->user;
    wk_sub_start(st, e, sub);

    resp->subscription_id = sub->id;
    resp->revised_publishing_interval = sub->interval;
    resp->revised_lifetime_count = sub->lifetime;
    resp->revised_max_keep_alive_count = sub->keepalive;
}

/* The revised parameters of a Create- or ModifySubscription request
 * (Part 4 §5.13.2, §5.13.3) set on sub. */
static void
wk_svc_sub_revise(struct wk_subs *st, struct wk_sub *sub, double interval,
                  uint32_t keepalive, uint32_t lifetime, uint32_t notifs,
                  uint8_t priority)
{
    wk_sub_set_interval(st, sub, wk_sub_revise_interval(&st->lim, interval));
    sub->keepalive = wk_sub_revise_keepalive(&st->lim, keepalive);
    sub->lifetime = wk_sub_revise_lifetime(&st->lim, sub->interval,
                                           sub->keepalive, lifetime);
    sub->max_notifs = wk_sub_revise_notifs(&st->lim, notifs);
    sub->priority = priority;
}

/* ModifySubscription (Part 4 §5.13.3). */
static void
wk_svc_modify_subscription(struct wk_svc_ctx *ctx, const void *req_,
                           void *resp_)
{
    const struct ua_modify_subscription_request *req = req_;
    struct ua_modify_subscription_response      *resp = resp_;
    struct wk_subs *st = wk_subs_need(ctx->w);
    struct wk_sub  *sub = st != NULL ? wk_sub_of_session(st, ctx->session,
                                                         req->subscription_id)
                                     : NULL;

    if (sub == NULL) {
        resp->response_header.service_result = UA_BAD_SUBSCRIPTION_ID_INVALID;
        return;
    }
    wk_svc_sub_revise(st, sub, req->requested_publishing_interval,
                      req->requested_max_keep_alive_count,
                      req->requested_lifetime_count,
                      req->max_notifications_per_publish, req->priority);
    wk_sub_touch(st, sub);
    resp->revised_publishing_interval = sub->interval;
    resp->revised_lifetime_count = sub->lifetime;
    resp->revised_max_keep_alive_count = sub->keepalive;
}

static void
wk_svc_delete_subscriptions(struct wk_svc_ctx *ctx, const void *req_,
                            void *resp_)
{
    const struct ua_delete_subscriptions_request *req = req_;
    struct ua_delete_subscriptions_response      *resp = resp_;
    struct ua_response_header                    *rh = &resp->response_header;
    struct wk_subs                               *st = wk_subs_need(ctx->w);
    int32_t                                       n = req->n_subscription_ids;

    if (st == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    if (!wk_svc_sub_count(ctx, rh, n, st->lim.max_subs))
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(ua_status));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++) {
        struct wk_sub *sub = wk_sub_of_session(st, ctx->session,
                                               req->subscription_ids[i]);

        if (sub == NULL) {
            resp->results[i] = UA_BAD_SUBSCRIPTION_ID_INVALID;
            continue;
        }
        wk_sub_delete(st, sub);
        resp->results[i] = UA_GOOD;
    }
    wk_sub_deleted_check(st, wk_sub_ss(st, ctx->session));
}

static void
wk_svc_set_publishing_mode(struct wk_svc_ctx *ctx, const void *req_,
                           void *resp_)
{
    const struct ua_set_publishing_mode_request *req = req_;
    struct ua_set_publishing_mode_response      *resp = resp_;
    struct ua_response_header                   *rh = &resp->response_header;
    struct wk_subs                              *st = wk_subs_need(ctx->w);
    int32_t                                      n = req->n_subscription_ids;

    if (st == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    if (!wk_svc_sub_count(ctx, rh, n, st->lim.max_subs))
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(ua_status));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++) {
        struct wk_sub *sub = wk_sub_of_session(st, ctx->session,
                                               req->subscription_ids[i]);

        if (sub == NULL) {
            resp->results[i] = UA_BAD_SUBSCRIPTION_ID_INVALID;
            continue;
        }
        wk_sub_set_enabled(st, sub, req->publishing_enabled);
        resp->results[i] = UA_GOOD;
    }
}

/*
 * Publish (Part 4 §5.13.5): the acknowledgements are processed on
 * arrival, their results wait with the request, which the subscriptions
 * answer (worker/sub.c) through a deferred response.
 */
static void
wk_svc_publish(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_publish_request *req = req_;
    struct ua_publish_response      *resp = resp_;
    struct wk_subs    *st = wk_subs_need(ctx->w);
    struct wk_subsess *e;
    struct wk_pubreq  *pr;
    int32_t            n = req->n_subscription_acknowledgements;

    if (st == NULL) {
        resp->response_header.service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    e = wk_sub_ss(st, ctx->session);
    if (n > WK_SUB_ACKS_MAX) {
        resp->response_header.service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    if (e->nsubs == 0 && e->nnotices == 0) {
        resp->response_header.service_result = UA_BAD_NO_SUBSCRIPTION;
        return;
    }
    pr = wk_sub_pub_slot(st, e);
    if (wk_svc_defer(ctx, &pr->ref) != 0) {
        resp->response_header.service_result = UA_BAD_INTERNAL_ERROR;
        return;
    }
    pr->nacks = n > 0 ? (uint32_t)n : 0;
    memset(pr->acks, 0, (pr->nacks + 3) / 4);
    for (uint32_t k = 0; k < pr->nacks; k++) {
        const struct ua_subscription_acknowledgement *a =
            &req->subscription_acknowledgements[k];

        pr->acks[k / 4] |= (uint8_t)(wk_sub_ack(st, e, a->subscription_id,
                                                a->sequence_number)
                                     << (2 * (k % 4)));
    }
    wk_sub_pub_push(st, e);
}

/* Republish (Part 4 §5.13.6): a kept message, copied into the arena. */
static void
wk_svc_republish(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_republish_request *req = req_;
    struct ua_republish_response      *resp = resp_;
    struct wk_subs   *st = wk_subs_need(ctx->w);
    struct wk_sub    *sub = st != NULL
                                ? wk_sub_of_session(st, ctx->session,
                                                    req->subscription_id)
                                : NULL;
    struct wk_retx   *r;
    struct ua_extobj *eo;
    uint8_t          *body;
    int               k;

    if (sub == NULL) {
        resp->response_header.service_result = UA_BAD_SUBSCRIPTION_ID_INVALID;
        return;
    }
    wk_sub_touch(st, sub);
    k = wk_retx_find(st, sub, req->retransmit_sequence_number);
    if (k < 0) {
        resp->response_header.service_result = UA_BAD_MESSAGE_NOT_AVAILABLE;
        return;
    }
    r = &sub->retx[(sub->retx_head + (uint32_t)k) % st->lim.max_retx];
    eo = ua_arena_alloc(ctx->arena, sizeof(*eo));
    body = ua_arena_alloc(ctx->arena, r->len ? r->len : 1);
    if (eo == NULL || body == NULL) {
        resp->response_header.service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    memcpy(body, wk_retx_body(st, r), r->len);
    memset(eo, 0, sizeof(*eo));
    eo->type_id = ua_nodeid_num(0, r->type);
    eo->encoding = UA_EO_BYTES;
    eo->body.len = (int32_t)r->len;
    eo->body.data = body;
    resp->notification_message.sequence_number = r->seq;
    resp->notification_message.publish_time = r->time;
    resp->notification_message.n_notification_data = 1;
    resp->notification_message.notification_data = eo;
}

static void
wk_svc_transfer_subscriptions(struct wk_svc_ctx *ctx, const void *req_,
                              void *resp_)
{
    const struct ua_transfer_subscriptions_request *req = req_;
    struct ua_transfer_subscriptions_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_subs            *st = wk_subs_need(ctx->w);
    int32_t                    n = req->n_subscription_ids;

    if (st == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    if (!wk_svc_sub_count(ctx, rh, n, st->lim.max_subs))
        return;
    /* Subscriptions another worker holds come here first, one at a
     * time, the request waiting for each (worker/roam.h); a claim that
     * fails leaves the id unknown here: BadSubscriptionIdInvalid. */
    for (int32_t i = 0; i < n; i++) {
        uint32_t id = req->subscription_ids[i];
        bool     wait = false;

        if (ctx->w->roam == NULL || wk_sub_find(st, id) != NULL)
            continue;
        (void)wk_roam_claim_sub(ctx->w, ctx->rq, ctx->session, id, &wait);
        if (wait) {
            ctx->again = true;
            ctx->wait = true;
            return;
        }
    }
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(*resp->results));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_svc_sub_transfer(ctx, st, req->subscription_ids[i],
                            req->send_initial_values, &resp->results[i]);
}

/* One subscription of TransferSubscriptions (Part 4 §5.13.7). */
static void
wk_svc_sub_transfer(struct wk_svc_ctx *ctx, struct wk_subs *st, uint32_t id,
                    bool initial, struct ua_transfer_result *res)
{
    struct wk_session *s = ctx->session;
    struct wk_sub     *sub = wk_sub_find(st, id);
    uint32_t          *seqs;

    res->n_available_sequence_numbers = 0;
    if (sub == NULL || wk_sub_roam_moving(st, sub)) {
        res->status_code = UA_BAD_SUBSCRIPTION_ID_INVALID;
        return;
    }
    /* Only to a session of the same user identity. */
    if (sub->user != s->user) {
        res->status_code = UA_BAD_USER_ACCESS_DENIED;
        return;
    }
    res->status_code = wk_sub_move(st, sub, s);
    if (res->status_code != UA_GOOD)
        return;
    wk_sub_touch(st, sub);
    if (initial)
        wk_mi_resend(st, sub, s);
    seqs = ua_arena_alloc(ctx->arena, (size_t)st->lim.max_retx * 4 + 4);
    if (seqs != NULL) {
        res->n_available_sequence_numbers = wk_retx_avail(st, sub, seqs);
        res->available_sequence_numbers = seqs;
    }
    wk_sub_kick(st, sub);
}

/* ------------------------------------------------------ Server methods */

/* The one input argument both methods take: a scalar UInt32. */
static ua_status
wk_svc_sub_server_args(struct wk_svc_ctx *ctx,
                       const struct ua_call_method_request *m,
                       struct ua_call_method_result *r, uint32_t *sub_id)
{
    const struct ua_variant *a;
    int32_t                  na = m->n_input_arguments > 0
                                      ? m->n_input_arguments : 0;

    if (na < 1)
        return UA_BAD_ARGUMENTS_MISSING;
    if (na > 1)
        return UA_BAD_TOO_MANY_ARGUMENTS;
    a = &m->input_arguments[0];
    if (a->type != UA_BT_UINT32 || a->is_array || a->data == NULL) {
        r->input_argument_results = ua_arena_alloc(ctx->arena,
                                                   sizeof(ua_status));
        if (r->input_argument_results == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        r->input_argument_results[0] = UA_BAD_TYPE_MISMATCH;
        r->n_input_argument_results = 1;
        return UA_BAD_INVALID_ARGUMENT;
    }
    memcpy(sub_id, a->data, 4);
    return UA_GOOD;
}

/* GetMonitoredItems or ResendData (the Call service's local method; arg:
 * the worker): the method's status in r. */
static void
wk_svc_sub_server(void *arg, struct wk_svc_ctx *ctx,
                  const struct ua_call_method_request *m,
                  struct ua_call_method_result *r)
{
    struct wk_subs *st;
    struct wk_sub  *sub;
    uint32_t        sub_id = 0;
    ua_status       s;

    (void)arg;
    s = wk_svc_sub_server_args(ctx, m, r, &sub_id);
    if (s != UA_GOOD) {
        r->status_code = s;
        return;
    }
    st = ctx->w->subs;
    sub = st != NULL ? wk_sub_find(st, sub_id) : NULL;
    if (sub == NULL) {
        r->status_code = UA_BAD_SUBSCRIPTION_ID_INVALID;
        return;
    }
    if (wk_sub_of_session(st, ctx->session, sub_id) == NULL) {
        r->status_code = UA_BAD_USER_ACCESS_DENIED;
        return;
    }
    wk_sub_touch(st, sub);
    if (m->method_id.id.num == UA_NS0ID_SERVER_GETMONITOREDITEMS) {
        r->status_code = wk_svc_sub_get_items(ctx, st, sub, r);
        return;
    }
    wk_mi_resend(st, sub, ctx->session);
    r->status_code = UA_GOOD;
}

/* serverHandles (our ids) and clientHandles of sub's items. */
static ua_status
wk_svc_sub_get_items(struct wk_svc_ctx *ctx, struct wk_subs *st,
                     struct wk_sub *sub, struct ua_call_method_result *r)
{
    struct ua_variant *out;
    uint32_t          *sh, *ch, k = 0;

    out = ua_arena_alloc(ctx->arena, 2 * sizeof(*out));
    sh = ua_arena_alloc(ctx->arena, (size_t)sub->nitems * 4 + 4);
    ch = ua_arena_alloc(ctx->arena, (size_t)sub->nitems * 4 + 4);
    if (out == NULL || sh == NULL || ch == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    for (uint32_t i = sub->ihead; i != WK_NIL && k < sub->nitems;
         i = st->items[i].snext, k++) {
        sh[k] = st->items[i].id;
        ch[k] = st->items[i].client_handle;
    }
    ua_variant_set_array(&out[0], sh, (int32_t)k, UA_BT_UINT32);
    ua_variant_set_array(&out[1], ch, (int32_t)k, UA_BT_UINT32);
    r->n_output_arguments = 2;
    r->output_arguments = out;
    return UA_GOOD;
}

