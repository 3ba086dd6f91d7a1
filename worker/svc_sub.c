/*
 * worker/svc_sub.c: the Subscription services (Part 4 §5.13) and the
 * MonitoredItem services (§5.12): service-level checks and the per-
 * operation loops; the work is in worker/sub.c and worker/monitem.c.
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
#include "session.h"
#include "sub.h"
#include "sub_int.h"
#include "svc.h"
#include "svc_call.h"
#include "svc_sub.h"

static bool wk_svc_sub_count(struct wk_svc_ctx *ctx,
                             struct ua_response_header *rh, int32_t n,
                             uint32_t max);
static void *wk_svc_sub_array(struct wk_svc_ctx *ctx,
                              struct ua_response_header *rh, int32_t n,
                              size_t size);
static struct wk_sub *wk_svc_sub_get(struct wk_svc_ctx *ctx,
                                     struct ua_response_header *rh,
                                     uint32_t id);
static bool wk_svc_sub_ttr(struct ua_response_header *rh, int32_t ttr);
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
static void wk_svc_create_monitored_items(struct wk_svc_ctx *ctx,
                                          const void *req, void *resp);
static void wk_svc_modify_monitored_items(struct wk_svc_ctx *ctx,
                                          const void *req, void *resp);
static void wk_svc_delete_monitored_items(struct wk_svc_ctx *ctx,
                                          const void *req, void *resp);
static void wk_svc_set_monitoring_mode(struct wk_svc_ctx *ctx,
                                       const void *req, void *resp);
static void wk_svc_set_triggering(struct wk_svc_ctx *ctx, const void *req,
                                  void *resp);
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
        { WK_REQ(CREATEMONITOREDITEMS), wk_svc_create_monitored_items },
        { WK_REQ(MODIFYMONITOREDITEMS), wk_svc_modify_monitored_items },
        { WK_REQ(DELETEMONITOREDITEMS), wk_svc_delete_monitored_items },
        { WK_REQ(SETMONITORINGMODE), wk_svc_set_monitoring_mode },
        { WK_REQ(SETTRIGGERING), wk_svc_set_triggering },
    };
#undef WK_REQ

    for (size_t i = 0; i < sizeof(reg) / sizeof(reg[0]); i++)
        if (wk_svc_register(w, reg[i].id, reg[i].fn, NULL, NULL) != 0)
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

/* n operations: none is BadNothingToDo, more than max BadTooManyOperations. */
static bool
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

/* n zeroed elements in the arena, or BadOutOfMemory. */
static void *
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

/* This session's subscription id, or BadSubscriptionIdInvalid. */
static struct wk_sub *
wk_svc_sub_get(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
               uint32_t id)
{
    struct wk_subs *st = wk_subs_need(ctx->w);
    struct wk_sub  *sub;

    if (st == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return NULL;
    }
    sub = wk_sub_of_session(st, ctx->session, id);
    if (sub == NULL)
        rh->service_result = UA_BAD_SUBSCRIPTION_ID_INVALID;
    else
        wk_sub_touch(st, sub);      /* client activity (§5.13.1.2) */
    return sub;
}

static bool
wk_svc_sub_ttr(struct ua_response_header *rh, int32_t ttr)
{
    if (ttr < UA_TIMESTAMPSTORETURN_SOURCE
        || ttr > UA_TIMESTAMPSTORETURN_NEITHER) {
        rh->service_result = UA_BAD_TIMESTAMPS_TO_RETURN_INVALID;
        return false;
    }
    return true;
}

/* ------------------------------------------------------ subscriptions */

static void
wk_svc_create_subscription(struct wk_svc_ctx *ctx, const void *req,
                           void *resp)
{
    wk_sub_create(ctx, req, resp);
}

static void
wk_svc_modify_subscription(struct wk_svc_ctx *ctx, const void *req,
                           void *resp)
{
    wk_sub_modify(ctx, req, resp);
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
    for (int32_t i = 0; i < n; i++)
        resp->results[i] = wk_sub_delete_one(ctx, req->subscription_ids[i]);
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
    for (int32_t i = 0; i < n; i++)
        resp->results[i] = wk_sub_set_publishing(ctx,
                                                 req->subscription_ids[i],
                                                 req->publishing_enabled);
}

static void
wk_svc_publish(struct wk_svc_ctx *ctx, const void *req, void *resp)
{
    wk_sub_publish(ctx, req, resp);
}

static void
wk_svc_republish(struct wk_svc_ctx *ctx, const void *req, void *resp)
{
    wk_sub_republish(ctx, req, resp);
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
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(*resp->results));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_sub_transfer_one(ctx, req->subscription_ids[i],
                            req->send_initial_values, &resp->results[i]);
}

/* ------------------------------------------------------ monitored items */

static void
wk_svc_create_monitored_items(struct wk_svc_ctx *ctx, const void *req_,
                              void *resp_)
{
    const struct ua_create_monitored_items_request *req = req_;
    struct ua_create_monitored_items_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_sub             *sub;
    int32_t                    n = req->n_items_to_create;

    if (!wk_svc_sub_count(ctx, rh, n,
                          ctx->w->conf->max_monitored_items_per_call))
        return;
    sub = wk_svc_sub_get(ctx, rh, req->subscription_id);
    if (sub == NULL || !wk_svc_sub_ttr(rh, req->timestamps_to_return))
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(*resp->results));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_mi_create(ctx, sub, req->timestamps_to_return,
                     &req->items_to_create[i], &resp->results[i]);
}

static void
wk_svc_modify_monitored_items(struct wk_svc_ctx *ctx, const void *req_,
                              void *resp_)
{
    const struct ua_modify_monitored_items_request *req = req_;
    struct ua_modify_monitored_items_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_sub             *sub;
    int32_t                    n = req->n_items_to_modify;

    if (!wk_svc_sub_count(ctx, rh, n,
                          ctx->w->conf->max_monitored_items_per_call))
        return;
    sub = wk_svc_sub_get(ctx, rh, req->subscription_id);
    if (sub == NULL || !wk_svc_sub_ttr(rh, req->timestamps_to_return))
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(*resp->results));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_mi_modify(ctx, sub, req->timestamps_to_return,
                     &req->items_to_modify[i], &resp->results[i]);
}

static void
wk_svc_delete_monitored_items(struct wk_svc_ctx *ctx, const void *req_,
                              void *resp_)
{
    const struct ua_delete_monitored_items_request *req = req_;
    struct ua_delete_monitored_items_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_sub             *sub;
    int32_t                    n = req->n_monitored_item_ids;

    if (!wk_svc_sub_count(ctx, rh, n,
                          ctx->w->conf->max_monitored_items_per_call))
        return;
    sub = wk_svc_sub_get(ctx, rh, req->subscription_id);
    if (sub == NULL)
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(ua_status));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        resp->results[i] = wk_mi_delete_id(ctx->w->subs, sub,
                                           req->monitored_item_ids[i]);
}

static void
wk_svc_set_monitoring_mode(struct wk_svc_ctx *ctx, const void *req_,
                           void *resp_)
{
    const struct ua_set_monitoring_mode_request *req = req_;
    struct ua_set_monitoring_mode_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_sub             *sub;
    int32_t                    n = req->n_monitored_item_ids;

    if (!wk_svc_sub_count(ctx, rh, n,
                          ctx->w->conf->max_monitored_items_per_call))
        return;
    sub = wk_svc_sub_get(ctx, rh, req->subscription_id);
    if (sub == NULL)
        return;
    if (req->monitoring_mode < UA_MONITORINGMODE_DISABLED
        || req->monitoring_mode > UA_MONITORINGMODE_REPORTING) {
        rh->service_result = UA_BAD_MONITORING_MODE_INVALID;
        return;
    }
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(ua_status));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        resp->results[i] = wk_mi_set_mode(ctx->w->subs, sub,
                                          req->monitored_item_ids[i],
                                          req->monitoring_mode,
                                          ctx->session);
}

static void
wk_svc_set_triggering(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_set_triggering_request *req = req_;
    struct ua_set_triggering_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_subs            *st;
    struct wk_sub             *sub;
    struct wk_mi              *from;
    int32_t                    na = req->n_links_to_add > 0
                                        ? req->n_links_to_add : 0;
    int32_t                    nr = req->n_links_to_remove > 0
                                        ? req->n_links_to_remove : 0;
    uint32_t                   max = ctx->w->conf->max_monitored_items_per_call;

    if (na == 0 && nr == 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return;
    }
    if ((uint32_t)na > max || (uint32_t)nr > max) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    sub = wk_svc_sub_get(ctx, rh, req->subscription_id);
    if (sub == NULL)
        return;
    st = ctx->w->subs;
    from = wk_mi_find(st, sub, req->triggering_item_id);
    if (from == NULL) {
        rh->service_result = UA_BAD_MONITORED_ITEM_ID_INVALID;
        return;
    }
    if (na > 0) {
        resp->add_results = wk_svc_sub_array(ctx, rh, na, sizeof(ua_status));
        if (resp->add_results == NULL)
            return;
    }
    if (nr > 0) {
        resp->remove_results = wk_svc_sub_array(ctx, rh, nr,
                                                sizeof(ua_status));
        if (resp->remove_results == NULL)
            return;
    }
    resp->n_add_results = na;
    resp->n_remove_results = nr;
    /* Removals first, so a request that swaps links ends as asked. */
    for (int32_t i = 0; i < nr; i++)
        resp->remove_results[i] = wk_mi_unlink(st, from,
                                               req->links_to_remove[i]);
    for (int32_t i = 0; i < na; i++)
        resp->add_results[i] = wk_mi_link(st, sub, from,
                                          req->links_to_add[i]);
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

