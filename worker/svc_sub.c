/*
 * worker/svc_sub.c: the Subscription services (Part 4 §5.13) and the
 * MonitoredItem services (§5.12): service-level checks and the per-
 * operation loops; the work is in worker/sub.c and worker/monitem.c.
 *
 * Service results, in this order: BadNothingToDo (no operations);
 * BadTooManyOperations (more than the configured limit: MonitoredItem
 * services conf->max_monitored_items_per_call, SetTriggering links each
 * the same, subscription id lists conf->max_subscriptions);
 * BadSubscriptionIdInvalid (a subscription that is not this session's);
 * BadTimestampsToReturnInvalid.  CloseSession is wrapped here too: its
 * deleteSubscriptions flag is ours to honour.
 *
 * Results live in the request arena; no heap.
 */
#include <string.h>

#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "sub_int.h"
#include "svc_int.h"

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

void
wk_svc_create_subscription(struct wk_svc_ctx *ctx, const void *req,
                           void *resp)
{
    wk_sub_create(ctx, req, resp);
}

void
wk_svc_modify_subscription(struct wk_svc_ctx *ctx, const void *req,
                           void *resp)
{
    wk_sub_modify(ctx, req, resp);
}

void
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

void
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

void
wk_svc_publish(struct wk_svc_ctx *ctx, const void *req, void *resp)
{
    wk_sub_publish(ctx, req, resp);
}

void
wk_svc_republish(struct wk_svc_ctx *ctx, const void *req, void *resp)
{
    wk_sub_republish(ctx, req, resp);
}

void
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

void
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

void
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

void
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
        resp->results[i] = wk_mi_delete_id(wk_subs_get(ctx->w), sub,
                                           req->monitored_item_ids[i]);
}

void
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
        resp->results[i] = wk_mi_set_mode(wk_subs_get(ctx->w), sub,
                                          req->monitored_item_ids[i],
                                          req->monitoring_mode,
                                          ctx->session);
}

void
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
    st = wk_subs_get(ctx->w);
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

/* ------------------------------------------------------ CloseSession */

void
wk_svc_close_session_subs(struct wk_svc_ctx *ctx, const void *req_,
                          void *resp)
{
    const struct ua_close_session_request *req = req_;

    /* The session's subscriptions first: deleted, or orphaned to wait for
     * TransferSubscriptions (Part 4 §5.7.4); then the session itself. */
    if (ctx->session != NULL && ctx->session->channel_id == ctx->ch->channel_id)
        wk_sub_session_closed(ctx->w, ctx->session, req->delete_subscriptions);
    wk_svc_close_session(ctx, req_, resp);
}
