/*
 * worker/svc_monitem.c: the MonitoredItem services (Part 4 §5.12):
 * CreateMonitoredItems, ModifyMonitoredItems, DeleteMonitoredItems,
 * SetMonitoringMode, SetTriggering.  The service-level checks (shared
 * with the Subscription services, worker/svc_sub.c, which registers
 * these through wk_svc_monitem_init), and per item: the request checked,
 * its filter parsed (DataChangeFilter, the EURange of a Percent deadband;
 * EventFilters are compiled by worker/monitem_event.c), samplingInterval
 * and queueSize revised, the result filled.  What an item is and does
 * once it exists (where its values come from, its initial value, its
 * queue) is worker/monitem.c's, reached through sub_int.h.
 *
 * Results live in the request arena; no heap.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "node.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/nodestore.h"
#include "sub_int.h"
#include "svc.h"

/* A parsed DataChangeFilter. */
struct wk_svc_monitem_filter {
    uint8_t trigger;
    uint8_t dbtype;
    double  deadband;               /* absolute, after Percent */
};

static struct wk_sub *wk_svc_monitem_open(struct wk_svc_ctx *ctx,
                                          struct ua_response_header *rh,
                                          int32_t n, uint32_t id);
static struct wk_sub *wk_svc_monitem_sub(struct wk_svc_ctx *ctx,
                                         struct ua_response_header *rh,
                                         uint32_t id);
static bool wk_svc_monitem_ttr(struct ua_response_header *rh, int32_t ttr);
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
static double wk_svc_monitem_sampling(const struct wk_subs *st,
                                      const struct wk_sub *sub, uint32_t node,
                                      bool by_read, double req);
static uint16_t wk_svc_monitem_queue(const struct wk_subs *st, uint32_t req);
static ua_status wk_svc_monitem_eurange(struct wk_subs *st,
                                        struct wk_session *s, uint32_t node,
                                        double *span);
static ua_status wk_svc_monitem_filter(struct wk_subs *st,
                                       struct wk_session *s, uint32_t node,
                                       uint32_t attr,
                                       const struct ua_extobj *x,
                                       struct wk_svc_monitem_filter *f);
static void wk_svc_monitem_create(
    struct wk_svc_ctx *ctx, struct wk_sub *sub, int32_t ttr,
    const struct ua_monitored_item_create_request *r,
    struct ua_monitored_item_create_result *res);
static void wk_svc_monitem_create_event(
    struct wk_svc_ctx *ctx, struct wk_subs *st, struct wk_sub *sub,
    uint32_t node, const struct ua_monitored_item_create_request *r,
    struct ua_monitored_item_create_result *res);
static void wk_svc_monitem_modify(
    struct wk_svc_ctx *ctx, struct wk_sub *sub, int32_t ttr,
    const struct ua_monitored_item_modify_request *r,
    struct ua_monitored_item_modify_result *res);

int
wk_svc_monitem_init(struct wk_worker *w)
{
#define WK_REQ(name) UA_NS0ID_##name##REQUEST_ENCODING_DEFAULTBINARY
    static const struct {
        uint32_t  id;
        wk_svc_fn fn;
    } reg[] = {
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
    return 0;
}

/* This session's subscription id, or BadSubscriptionIdInvalid. */
static struct wk_sub *
wk_svc_monitem_sub(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
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

/* The operation count within max_monitored_items_per_call, then the
 * subscription: the prologue of the services on a list of items. */
static struct wk_sub *
wk_svc_monitem_open(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
                    int32_t n, uint32_t id)
{
    if (!wk_svc_sub_count(ctx, rh, n,
                          ctx->w->conf->max_monitored_items_per_call))
        return NULL;
    return wk_svc_monitem_sub(ctx, rh, id);
}

static bool
wk_svc_monitem_ttr(struct ua_response_header *rh, int32_t ttr)
{
    if (ttr < UA_TIMESTAMPSTORETURN_SOURCE
        || ttr > UA_TIMESTAMPSTORETURN_NEITHER) {
        rh->service_result = UA_BAD_TIMESTAMPS_TO_RETURN_INVALID;
        return false;
    }
    return true;
}

/* ------------------------------------------------------ the services */

static void
wk_svc_create_monitored_items(struct wk_svc_ctx *ctx, const void *req_,
                              void *resp_)
{
    const struct ua_create_monitored_items_request *req = req_;
    struct ua_create_monitored_items_response      *resp = resp_;
    struct ua_response_header *rh = &resp->response_header;
    struct wk_sub             *sub;
    int32_t                    n = req->n_items_to_create;

    sub = wk_svc_monitem_open(ctx, rh, n, req->subscription_id);
    if (sub == NULL || !wk_svc_monitem_ttr(rh, req->timestamps_to_return))
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(*resp->results));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_svc_monitem_create(ctx, sub, req->timestamps_to_return,
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

    sub = wk_svc_monitem_open(ctx, rh, n, req->subscription_id);
    if (sub == NULL || !wk_svc_monitem_ttr(rh, req->timestamps_to_return))
        return;
    resp->results = wk_svc_sub_array(ctx, rh, n, sizeof(*resp->results));
    if (resp->results == NULL)
        return;
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_svc_monitem_modify(ctx, sub, req->timestamps_to_return,
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

    sub = wk_svc_monitem_open(ctx, rh, n, req->subscription_id);
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

    sub = wk_svc_monitem_open(ctx, rh, n, req->subscription_id);
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
    sub = wk_svc_monitem_sub(ctx, rh, req->subscription_id);
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

/* ------------------------------------------------------ one item */

/* One MonitoredItemCreateRequest (Part 4 §5.12.2). */
static void
wk_svc_monitem_create(struct wk_svc_ctx *ctx, struct wk_sub *sub, int32_t ttr,
                      const struct ua_monitored_item_create_request *r,
                      struct ua_monitored_item_create_result *res)
{
    struct wk_subs                        *st = ctx->w->subs;
    const struct ua_monitoring_parameters *mp = &r->requested_parameters;
    const struct ua_read_value_id         *rv = &r->item_to_monitor;
    struct wk_svc_monitem_filter           f;
    struct wk_mi                          *mi;
    uint32_t                               node;
    double                                 si;
    ua_status                              s;

    res->filter_result.encoding = UA_EO_NONE;
    if (r->monitoring_mode < UA_MONITORINGMODE_DISABLED
        || r->monitoring_mode > UA_MONITORINGMODE_REPORTING) {
        res->status_code = UA_BAD_MONITORING_MODE_INVALID;
        return;
    }
    node = wk_node_lookup(ctx->w, &rv->node_id);
    if (node == SHM_NONE) {
        res->status_code = UA_BAD_NODE_ID_UNKNOWN;
        return;
    }
    if (rv->attribute_id < 1 || rv->attribute_id > UA_ATTR_MAX) {
        res->status_code = UA_BAD_ATTRIBUTE_ID_INVALID;
        return;
    }
    if (rv->attribute_id == UA_ATTR_EVENTNOTIFIER) {
        wk_svc_monitem_create_event(ctx, st, sub, node, r, res);
        return;
    }
    s = wk_svc_monitem_filter(st, ctx->session, node, rv->attribute_id,
                              &mp->filter, &f);
    if (s != UA_GOOD) {
        res->status_code = s;
        return;
    }
    mi = wk_mi_new(st, sub);
    if (mi == NULL) {
        res->status_code = UA_BAD_TOO_MANY_MONITORED_ITEMS;
        return;
    }
    mi->client_handle = mp->client_handle;
    mi->node = node;
    mi->attr = (uint8_t)rv->attribute_id;
    mi->mode = (uint8_t)r->monitoring_mode;
    mi->ttr = (uint8_t)ttr;
    mi->trigger = f.trigger;
    mi->dbtype = f.dbtype;
    mi->deadband = f.deadband;
    si = wk_svc_monitem_sampling(st, sub, node,
                                 !wk_mi_from_slot(st, node,
                                                  rv->attribute_id),
                                 mp->sampling_interval);
    mi->interval_ms = (uint32_t)ceil(si);
    mi->qsize = wk_svc_monitem_queue(st, mp->queue_size);
    if (mp->discard_oldest)
        mi->flags |= WK_MI_DISCARD_OLD;
    if (rv->index_range.len > 0) {
        uint32_t rl = (uint32_t)rv->index_range.len;

        mi->range = wk_cells_put(&st->cells, &rl, 4, rv->index_range.data,
                                 rl);
        if (mi->range == WK_NIL) {
            wk_mi_drop(st, mi);
            res->status_code = UA_BAD_OUT_OF_MEMORY;
            return;
        }
    }
    /* Its values start: the initial one read (the checks Read makes). */
    s = wk_mi_start(st, mi, ctx->session, rv);
    if (s != UA_GOOD) {
        res->status_code = s;
        return;
    }
    res->status_code = UA_GOOD;
    res->monitored_item_id = mi->id;
    res->revised_sampling_interval = si;
    res->revised_queue_size = mi->qsize;
}

/*
 * CreateMonitoredItems on EventNotifier (Part 4 §5.12.2): an Object with
 * SubscribeToEvents, an EventFilter; events come from the fan-out
 * (monitem_event.c).  The samplingInterval of an event item is 0 (events
 * are queued as they come).
 */
static void
wk_svc_monitem_create_event(struct wk_svc_ctx *ctx, struct wk_subs *st,
                            struct wk_sub *sub, uint32_t node,
                            const struct ua_monitored_item_create_request *r,
                            struct ua_monitored_item_create_result *res)
{
    const struct ua_monitoring_parameters *mp = &r->requested_parameters;
    struct wk_mi                          *mi;
    uint32_t                               chain;
    ua_status                              s;

    if (r->item_to_monitor.index_range.len > 0) {
        res->status_code = UA_BAD_INDEX_RANGE_NO_DATA;
        return;
    }
    if (r->item_to_monitor.data_encoding.name.len > 0) {
        res->status_code = UA_BAD_DATA_ENCODING_INVALID;
        return;
    }
    s = wk_ev_node_ok(st, node);
    if (s != UA_GOOD) {
        res->status_code = s;
        return;
    }
    mi = wk_mi_new(st, sub);
    if (mi == NULL) {
        res->status_code = UA_BAD_TOO_MANY_MONITORED_ITEMS;
        return;
    }
    s = wk_ev_filter(st, ctx->arena, &mp->filter, &chain,
                     &res->filter_result);
    if (s != UA_GOOD) {
        wk_cells_free(&st->cells, chain);
        wk_mi_drop(st, mi);
        res->status_code = s;
        return;
    }
    mi->client_handle = mp->client_handle;
    mi->node = node;
    mi->attr = UA_ATTR_EVENTNOTIFIER;
    mi->mode = (uint8_t)r->monitoring_mode;
    mi->range = chain;
    mi->flags |= WK_MI_EVENT;
    if (mp->discard_oldest)
        mi->flags |= WK_MI_DISCARD_OLD;
    mi->qsize = wk_ev_revise_queue(st, mp->queue_size);
    (void)wk_mi_start(st, mi, ctx->session, &r->item_to_monitor);
    res->status_code = UA_GOOD;
    res->monitored_item_id = mi->id;
    res->revised_sampling_interval = 0;
    res->revised_queue_size = mi->qsize;
}

/* One MonitoredItemModifyRequest (Part 4 §5.12.3). */
static void
wk_svc_monitem_modify(struct wk_svc_ctx *ctx, struct wk_sub *sub, int32_t ttr,
                      const struct ua_monitored_item_modify_request *r,
                      struct ua_monitored_item_modify_result *res)
{
    struct wk_subs                        *st = ctx->w->subs;
    const struct ua_monitoring_parameters *mp = &r->requested_parameters;
    struct wk_mi                          *mi;
    struct wk_svc_monitem_filter           f;
    double                                 si;
    ua_status                              s;

    res->filter_result.encoding = UA_EO_NONE;
    mi = wk_mi_find(st, sub, r->monitored_item_id);
    if (mi == NULL) {
        res->status_code = UA_BAD_MONITORED_ITEM_ID_INVALID;
        return;
    }
    if (mi->flags & WK_MI_EVENT) {
        uint32_t chain;

        s = wk_ev_filter(st, ctx->arena, &mp->filter, &chain,
                         &res->filter_result);
        if (s != UA_GOOD) {
            wk_cells_free(&st->cells, chain);
            res->status_code = s;
            return;
        }
        wk_cells_free(&st->cells, mi->range);
        mi->range = chain;
        mi->client_handle = mp->client_handle;
        if (mp->discard_oldest)
            mi->flags |= WK_MI_DISCARD_OLD;
        else
            mi->flags &= (uint16_t)~WK_MI_DISCARD_OLD;
        mi->qsize = wk_ev_revise_queue(st, mp->queue_size);
        wk_mi_event_trim(st, sub, mi);
        res->status_code = UA_GOOD;
        res->revised_sampling_interval = 0;
        res->revised_queue_size = mi->qsize;
        return;
    }
    s = wk_svc_monitem_filter(st, ctx->session, mi->node, mi->attr,
                              &mp->filter, &f);
    if (s != UA_GOOD) {
        res->status_code = s;
        return;
    }
    if (f.trigger != mi->trigger || f.dbtype != mi->dbtype
        || f.deadband != mi->deadband) {
        /* A new filter compares from the next value on. */
        wk_mi_forget_last(st, mi);
        mi->trigger = f.trigger;
        mi->dbtype = f.dbtype;
        mi->deadband = f.deadband;
    }
    mi->client_handle = mp->client_handle;
    mi->ttr = (uint8_t)ttr;
    si = wk_svc_monitem_sampling(st, sub, mi->node,
                                 (mi->flags & WK_MI_ON_SAMPLED) != 0,
                                 mp->sampling_interval);
    if (mp->discard_oldest)
        mi->flags |= WK_MI_DISCARD_OLD;
    else
        mi->flags &= (uint16_t)~WK_MI_DISCARD_OLD;
    mi->qsize = wk_svc_monitem_queue(st, mp->queue_size);
    wk_mi_queue_trim(st, sub, mi);
    wk_mi_set_interval(st, mi, (uint32_t)ceil(si));
    res->status_code = UA_GOOD;
    res->revised_sampling_interval = si;
    res->revised_queue_size = mi->qsize;
}

/* ------------------------------------------------------ revisions, filter */

/* samplingInterval (Part 4 §7.21): -1 (any negative, NaN) is the
 * publishing interval, 0 the fastest we do; never below the node's
 * MinimumSamplingInterval nor the configured minimum; at most 24 h. */
static double
wk_svc_monitem_sampling(const struct wk_subs *st, const struct wk_sub *sub,
                        uint32_t node, bool by_read, double req)
{
    double min = st->lim.min_sampling, ns = st->w->ns.nodes[node].min_sampling;

    if (isnan(req) || req < 0)
        req = sub->interval;
    if (ns > 0 && ns > min && !isnan(ns))
        min = ns;
    if (by_read && min < WK_MI_READ_MIN_MS)
        min = WK_MI_READ_MIN_MS;    /* polled: never a busy loop */
    if (req < min)
        req = min;
    if (req > WK_MI_SAMPLING_MAX_MS)
        req = WK_MI_SAMPLING_MAX_MS;
    return req;
}

/* queueSize: 0 and 1 are 1; at most the configured maximum. */
static uint16_t
wk_svc_monitem_queue(const struct wk_subs *st, uint32_t req)
{
    uint32_t max = st->lim.max_queue;

    if (max > UINT16_MAX)
        max = UINT16_MAX;
    if (req < 1)
        req = 1;
    if (req > max)
        req = max;
    return (uint16_t)req;
}

/*
 * The EURange (a Range ExtensionObject, Part 8 §5.3.2) of node, found as
 * its HasProperty child named "EURange": *span = high - low.  Anything
 * else is BadDeadbandFilterInvalid (Part 8: Percent needs an EURange).
 */
static ua_status
wk_svc_monitem_eurange(struct wk_subs *st, struct wk_session *s,
                       uint32_t node, double *span)
{
    struct wk_worker       *w = st->w;
    const struct shm_node  *n = &w->ns.nodes[node];
    struct ua_nodeid        hpid = ua_nodeid_num(0, UA_NS0ID_HASPROPERTY);
    uint32_t                hp = shm_nodestore_reftype_of(&w->ns,
                                    wk_node_lookup(w, &hpid));

    if (hp == SHM_NONE)
        return UA_BAD_DEADBAND_FILTER_INVALID;
    for (uint32_t k = 0; k < n->nrefs; k++) {
        const struct shm_ref   *ref = &w->ns.refs[n->refs + k];
        struct ua_qualifiedname qn;
        struct ua_variant       v;
        const struct ua_range  *rg;

        if ((ref->flags & SHM_REF_INVERSE) || ref->reftype != hp)
            continue;
        wk_node_browse_name(w, ref->target, &qn);
        if (qn.ns != 0 || !ua_string_eq(&qn.name, "EURange"))
            continue;
        if (wk_mi_read_value(st, s, ref->target, &v) != UA_GOOD)
            return UA_BAD_DEADBAND_FILTER_INVALID;
        if (v.type != UA_BT_EXTENSIONOBJECT || v.is_array || v.data == NULL)
            return UA_BAD_DEADBAND_FILTER_INVALID;
        {
            const struct ua_extobj *x = v.data;

            if (x->encoding != UA_EO_DECODED
                || x->type != &ua_types[UA_TYPE_RANGE])
                return UA_BAD_DEADBAND_FILTER_INVALID;
            rg = x->obj;
        }
        if (isnan(rg->low) || isnan(rg->high) || rg->high < rg->low
            || isinf(rg->high - rg->low))
            return UA_BAD_DEADBAND_FILTER_INVALID;
        *span = rg->high - rg->low;
        return UA_GOOD;
    }
    return UA_BAD_DEADBAND_FILTER_INVALID;
}

/*
 * The filter of a MonitoredItemCreate/ModifyRequest (Part 4 §7.22): none,
 * or a DataChangeFilter on the Value of a Variable.  Deadbands only on
 * Number data types; Percent needs an EURange (Part 8 §6.2).
 */
static ua_status
wk_svc_monitem_filter(struct wk_subs *st, struct wk_session *s, uint32_t node,
                      uint32_t attr, const struct ua_extobj *x,
                      struct wk_svc_monitem_filter *f)
{
    const struct shm_node        *n = &st->w->ns.nodes[node];
    const struct ua_data_change_filter *dc;
    struct ua_nodeid              numid = ua_nodeid_num(0, UA_NS0ID_NUMBER);
    double                        span;
    ua_status                     rc;

    f->trigger = UA_DATACHANGETRIGGER_STATUSVALUE;
    f->dbtype = UA_DEADBANDTYPE_NONE;
    f->deadband = 0;
    if (x->encoding == UA_EO_NONE && wk_node_is_null(&x->type_id))
        return UA_GOOD;
    if (x->encoding != UA_EO_DECODED) {
        /* Not a filter we know (or XML): none we could apply. */
        return UA_BAD_MONITORED_ITEM_FILTER_UNSUPPORTED;
    }
    if (x->type == &ua_types[UA_TYPE_EVENTFILTER])
        return attr == UA_ATTR_EVENTNOTIFIER
                   ? UA_BAD_MONITORED_ITEM_FILTER_UNSUPPORTED
                   : UA_BAD_FILTER_NOT_ALLOWED;
    if (x->type == &ua_types[UA_TYPE_AGGREGATEFILTER])
        return UA_BAD_MONITORED_ITEM_FILTER_UNSUPPORTED;
    if (x->type != &ua_types[UA_TYPE_DATACHANGEFILTER])
        return UA_BAD_MONITORED_ITEM_FILTER_INVALID;
    if (attr != UA_ATTR_VALUE)
        return UA_BAD_FILTER_NOT_ALLOWED;
    dc = x->obj;
    if (dc->trigger < UA_DATACHANGETRIGGER_STATUS
        || dc->trigger > UA_DATACHANGETRIGGER_STATUSVALUETIMESTAMP)
        return UA_BAD_MONITORED_ITEM_FILTER_INVALID;
    f->trigger = (uint8_t)dc->trigger;
    if (dc->deadband_type == UA_DEADBANDTYPE_NONE)
        return UA_GOOD;
    if (dc->deadband_type > UA_DEADBANDTYPE_PERCENT || isnan(dc->deadband_value)
        || dc->deadband_value < 0 || isinf(dc->deadband_value))
        return UA_BAD_DEADBAND_FILTER_INVALID;
    if (dc->trigger == UA_DATACHANGETRIGGER_STATUS)
        return UA_GOOD;             /* deadband applies to values only */
    if ((n->node_class != SHM_NC_VARIABLE
         && n->node_class != SHM_NC_VARIABLETYPE)
        || n->u.var.data_type >= st->w->ns.nnodes
        || !shm_nodestore_is_subtype(&st->w->ns, n->u.var.data_type,
                                     wk_node_lookup(st->w, &numid)))
        return UA_BAD_FILTER_NOT_ALLOWED;   /* not a Number */
    f->dbtype = (uint8_t)dc->deadband_type;
    f->deadband = dc->deadband_value;
    if (dc->deadband_type == UA_DEADBANDTYPE_PERCENT) {
        if (dc->deadband_value > 100.0)
            return UA_BAD_DEADBAND_FILTER_INVALID;
        rc = wk_svc_monitem_eurange(st, s, node, &span);
        if (rc != UA_GOOD)
            return rc;
        f->deadband = dc->deadband_value / 100.0 * span;
    }
    return UA_GOOD;
}
