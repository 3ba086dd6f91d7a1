/*
 * worker/svc_call.c: the Call service (Part 4 §5.11.2), for the two
 * methods of the Server object the subscriptions need:
 *
 *   GetMonitoredItems (i=11492)   in: subscriptionId UInt32
 *                                 out: serverHandles UInt32[],
 *                                      clientHandles UInt32[]
 *   ResendData (i=12873)          in: subscriptionId UInt32
 *                                 (the next Publish carries the current
 *                                 value of every enabled item)
 *
 * Service results: no methodsToCall BadNothingToDo, more than
 * conf->max_nodes_per_method_call BadTooManyOperations (SECURITY.md 70).
 *
 * Operation results, in this order (the arguments are checked before the
 * method runs, SECURITY.md 70): objectId unknown BadNodeIdUnknown, not an
 * Object or ObjectType BadNodeIdInvalid; methodId unknown, not a Method,
 * or not one of the two above on the Server object BadMethodInvalid;
 * fewer input arguments BadArgumentsMissing, more BadTooManyArguments;
 * an argument that is not a scalar UInt32 BadInvalidArgument with
 * inputArgumentResults [BadTypeMismatch]; then the method's own:
 * BadSubscriptionIdInvalid, or BadUserAccessDenied for a subscription of
 * another session.
 *
 * Outputs live in the request arena; no heap.
 */
#include <string.h>

#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "sub_int.h"
#include "svc_int.h"

static void wk_svc_call_one(struct wk_svc_ctx *ctx,
                            const struct ua_call_method_request *m,
                            struct ua_call_method_result *r);
static ua_status wk_svc_call_args(struct wk_svc_ctx *ctx,
                                  const struct ua_call_method_request *m,
                                  struct ua_call_method_result *r,
                                  uint32_t *sub_id);
static ua_status wk_svc_call_get_items(struct wk_svc_ctx *ctx,
                                       struct wk_subs *st, struct wk_sub *sub,
                                       struct ua_call_method_result *r);

void
wk_svc_call(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_call_request *req = req_;
    struct ua_call_response      *resp = resp_;
    struct ua_response_header    *rh = &resp->response_header;
    int32_t                       n = req->n_methods_to_call;

    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return;
    }
    if ((uint32_t)n > ctx->w->conf->max_nodes_per_method_call) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    resp->results = ua_arena_alloc(ctx->arena,
                                   (size_t)n * sizeof(*resp->results));
    if (resp->results == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    memset(resp->results, 0, (size_t)n * sizeof(*resp->results));
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_svc_call_one(ctx, &req->methods_to_call[i], &resp->results[i]);
}

/* The one input argument both methods take: a scalar UInt32. */
static ua_status
wk_svc_call_args(struct wk_svc_ctx *ctx, const struct ua_call_method_request *m,
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

static void
wk_svc_call_one(struct wk_svc_ctx *ctx, const struct ua_call_method_request *m,
                struct ua_call_method_result *r)
{
    struct wk_worker *w = ctx->w;
    struct wk_subs   *st;
    struct wk_sub    *sub;
    uint32_t          obj, meth, sub_id = 0, which = 0;
    uint8_t           nc;
    ua_status         s;

    if (wk_ev_refresh_call(ctx, m, r))
        return;                 /* ConditionRefresh(2): monitem_event.c */
    obj = wk_svc_lookup(w, &m->object_id);
    if (obj == SHM_NONE) {
        r->status_code = UA_BAD_NODE_ID_UNKNOWN;
        return;
    }
    nc = w->ns.nodes[obj].node_class;
    if (nc != SHM_NC_OBJECT && nc != SHM_NC_OBJECTTYPE) {
        r->status_code = UA_BAD_NODE_ID_INVALID;
        return;
    }
    meth = wk_svc_lookup(w, &m->method_id);
    if (meth == SHM_NONE || w->ns.nodes[meth].node_class != SHM_NC_METHOD
        || m->object_id.ns != 0 || m->object_id.idtype != UA_IDTYPE_NUMERIC
        || m->object_id.id.num != UA_NS0ID_SERVER
        || m->method_id.ns != 0 || m->method_id.idtype != UA_IDTYPE_NUMERIC
        || (m->method_id.id.num != UA_NS0ID_SERVER_GETMONITOREDITEMS
            && m->method_id.id.num != UA_NS0ID_SERVER_RESENDDATA)) {
        r->status_code = UA_BAD_METHOD_INVALID;
        return;
    }
    which = m->method_id.id.num;
    s = wk_svc_call_args(ctx, m, r, &sub_id);
    if (s != UA_GOOD) {
        r->status_code = s;
        return;
    }
    st = wk_subs_get(w);
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
    if (which == UA_NS0ID_SERVER_GETMONITOREDITEMS) {
        r->status_code = wk_svc_call_get_items(ctx, st, sub, r);
        return;
    }
    wk_mi_resend(st, sub, ctx->session);
    r->status_code = UA_GOOD;
}

/* serverHandles (our ids) and clientHandles of sub's items. */
static ua_status
wk_svc_call_get_items(struct wk_svc_ctx *ctx, struct wk_subs *st,
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
