/*
 * worker/svc_call.c: the Call service (Part 4 §5.11.2).
 *
 * Server-local methods are served by the worker itself, by whoever
 * registered them in the table (wk_svc_call_local_add, worker/svc_call.h):
 * the subscriptions register the Server object's GetMonitoredItems
 * (i=11492) and ResendData (i=12873) (worker/svc_sub.c) and
 * ConditionRefresh/ConditionRefresh2 on ConditionType
 * (worker/monitem_event.c, taken before the node checks).
 *
 * Every other method is forwarded: checked here, then sent to the broker
 * as a SHM_FO_CALL record (shm/fanout.h, built in the link's outbox) on
 * the request ring; the broker hands it to the method's owner
 * (broker/methods.c, docs/feed.md "Methods") and its answer comes back as
 * a SHM_FO_CALL_RESULT on the reply ring, which the link hands to this
 * file (wk_svc_call_reply).  A Call with forwarded methods is pending
 * (worker/conn.h) in a pending Call of this file's pool
 * (conf->pending_calls, worker/svc_call.h), whose arena holds the whole
 * response (the results made here too); the CallResponse leaves when
 * the last forwarded method is answered.  The broker always answers (its
 * timeout, methods.timeout_ms, is BadTimeout).  Local and forwarded
 * methods may be mixed in one request; a client's other requests are
 * served meanwhile.
 *
 * Service results: no methodsToCall BadNothingToDo, more than
 * conf->max_nodes_per_method_call BadTooManyOperations (docs/security.md case
 * 70).
 *
 * Operation results, in this order (the arguments are checked before the method
 * runs, docs/security.md case 70): objectId unknown BadNodeIdUnknown, not an
 * Object or ObjectType BadNodeIdInvalid; methodId unknown or not a Method
 * BadMethodInvalid; the method not a component (HasComponent or a subtype,
 * forward from the object) of the object, of its TypeDefinition or of one of
 * that type's supertypes BadMethodInvalid; Executable or UserExecutable false
 * BadNotExecutable; the input arguments against the method's InputArguments
 * property (absent: none): fewer BadArgumentsMissing, more BadTooManyArguments;
 * any argument whose type or shape does not match BadInvalidArgument with
 * inputArgumentResults (BadTypeMismatch for each offending one, Good for the
 * others).
 *
 * Type rule for an argument (the Write's, broker/write.h, no implicit
 * conversion: Part 4 §5.11.2 "BadTypeMismatch: the argument's DataType
 * does not match"): the Argument's DataType's supertype chain is walked
 * to its first namespace-0 type with an id in 1..29; a built-in matches
 * exactly (an Int32 is no Double), Number any of SByte..Double, Integer
 * and UInteger the signed and unsigned integers, an Enumeration an Int32,
 * BaseDataType anything, a Structure an ExtensionObject of that DataType
 * or a subtype (by its decoded type, or by its encoding's HasEncoding
 * DataType).  ValueRank (-1 scalar, -2 any, -3 scalar or one dimension,
 * 0 one or more, n exactly n) and ArrayDimensions (each the most that
 * dimension may hold, 0 any) as Part 3 §5.6.2.
 *
 * Then, forwarded methods only: a session that may not write
 * (wk_session_may_write: anonymous unless security.anonymous_write, role
 * viewer) BadUserAccessDenied; every pending Call in use
 * BadResourceUnavailable; arguments too large for the request ring or
 * conf->max_call_bytes BadRequestTooLarge; no room in the outbox now
 * BadResourceUnavailable; a segment without the fan-out BadNotImplemented.
 * The owner's answer: its status, or BadTimeout / BadNoCommunication
 * from the broker; outputs that do not match the OutputArguments (count,
 * type, shape) or do not decode BadInternalError (counted in the broker
 * too).  A local method's statuses are its own (worker/svc_sub.c,
 * worker/monitem_event.c).
 *
 * Outputs live in the request arena, or in the pending Call's; no heap.
 */
#include "svc_call.h"

#include <assert.h>
#include <errno.h>
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

#define WK_CALL_ARGS_READ 4096      /* first try at an Arguments value */

static_assert((int)SHM_FO_ROLE_ANONYMOUS == (int)WK_USER_ANONYMOUS
                  && (int)SHM_FO_ROLE_VIEWER == (int)WK_USER_VIEWER
                  && (int)SHM_FO_ROLE_OPERATOR == (int)WK_USER_OPERATOR,
              "shm_fo_role mirrors wk_session_user");

static const struct wk_call_local *wk_svc_call_local(
    const struct wk_calls *cs, const struct ua_call_method_request *m);
static uint32_t wk_svc_call_forwarded(struct wk_worker *w,
                                      const struct ua_call_method_request *m);
static void wk_svc_call_one(struct wk_svc_ctx *ctx, struct ua_arena *req_a,
                            struct wk_call *pc, uint32_t op,
                            const struct ua_call_method_request *m,
                            struct ua_call_method_result *r,
                            const struct ua_string *audit);
static bool wk_svc_call_component(const struct shm_nodestore *ns,
                                  uint32_t obj, uint32_t meth);
static uint32_t wk_svc_call_ns0(const struct shm_nodestore *ns, uint32_t i);
static uint32_t wk_svc_call_reftype(const struct shm_nodestore *ns,
                                    uint32_t id);
static uint32_t wk_svc_call_encoding_type(const struct shm_nodestore *ns,
                                          uint32_t enc);
static bool wk_svc_call_struct_ok(const struct wk_worker *w, uint32_t dt,
                                  const struct ua_variant *v);
static bool wk_svc_call_rank_ok(const struct ua_argument *d,
                                const struct ua_variant *v);
static ua_status wk_svc_call_argdefs(const struct wk_worker *w,
                                     uint32_t meth, const char *name,
                                     struct ua_arena *a,
                                     struct ua_argument **defs, int32_t *n);
static bool wk_svc_call_type_ok(const struct wk_worker *w,
                                const struct ua_argument *d,
                                const struct ua_variant *v);
static bool wk_svc_call_arg_ok(const struct wk_worker *w,
                               const struct ua_argument *d,
                               const struct ua_variant *v);
static ua_status wk_svc_call_check_in(struct wk_svc_ctx *ctx,
                                      struct ua_arena *req_a, uint32_t meth,
                                      const struct ua_call_method_request *m,
                                      struct ua_call_method_result *r);
static void wk_svc_call_done(struct wk_calls *cs, struct wk_call *pc);
static void wk_svc_call_answered(struct wk_calls *cs, struct wk_call *pc);
static void wk_svc_call(struct wk_svc_ctx *ctx, const void *req,
                        void *resp);

/* ------------------------------------------------------------ the service */

static void
wk_svc_call(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_call_request *req = req_;
    struct ua_call_response      *resp = resp_;
    struct wk_conn_ref            ref;
    bool                          fwd = false;
    int32_t                       n = req->n_methods_to_call;

    if (n > 0 && (uint32_t)n <= ctx->w->conf->max_nodes_per_method_call
        && wk_link_on(ctx->w->link) && ctx->w->calls != NULL)
        for (int32_t i = 0; i < n && !fwd; i++)
            fwd = wk_svc_call_forwarded(ctx->w, &req->methods_to_call[i])
                  != SHM_NONE;
    if (!fwd || wk_svc_defer(ctx, &ref) != 0) {
        (void)wk_svc_call_ref(ctx, req, resp, NULL);
        return;
    }
    if (!wk_svc_call_ref(ctx, req, resp, &ref))
        ctx->pending = false;           /* answered now after all */
}

bool
wk_svc_call_ref(struct wk_svc_ctx *ctx, const struct ua_call_request *req,
                struct ua_call_response *resp, const struct wk_conn_ref *ref)
{
    struct ua_response_header *rh = &resp->response_header;
    struct wk_calls           *cs = ctx->w->calls;
    struct wk_call            *pc = NULL;
    struct ua_arena           *keep = ctx->arena;
    int32_t                    n = req->n_methods_to_call;

    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return false;
    }
    if ((uint32_t)n > ctx->w->conf->max_nodes_per_method_call) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return false;
    }
    if (ref != NULL && cs != NULL)
        pc = wk_svc_call_begin(cs, ref, (uint32_t)n);
    if (pc != NULL) {
        /* Everything the response points at outlives the request. */
        ctx->arena = &pc->arena;
        resp->results = pc->results;
    } else {
        resp->results = ua_arena_alloc(ctx->arena,
                                       (size_t)n * sizeof(*resp->results));
        if (resp->results == NULL) {
            rh->service_result = UA_BAD_OUT_OF_MEMORY;
            return false;
        }
        memset(resp->results, 0, (size_t)n * sizeof(*resp->results));
    }
    resp->n_results = n;
    for (int32_t i = 0; i < n; i++)
        wk_svc_call_one(ctx, keep, pc, (uint32_t)i, &req->methods_to_call[i],
                        &resp->results[i],
                        &req->request_header.audit_entry_id);
    ctx->arena = keep;
    if (pc == NULL)
        return false;
    wk_svc_call_commit(cs, pc);
    return true;
}

/* ------------------------------------------------------------ one method */

/* The server-local method m names (ids checked, not nodes), or NULL. */
static const struct wk_call_local *
wk_svc_call_local(const struct wk_calls *cs,
                  const struct ua_call_method_request *m)
{
    if (cs == NULL || m->object_id.ns != 0
        || m->object_id.idtype != UA_IDTYPE_NUMERIC || m->method_id.ns != 0
        || m->method_id.idtype != UA_IDTYPE_NUMERIC)
        return NULL;
    for (uint32_t i = 0; i < cs->nlocal; i++)
        if (cs->local[i].object == m->object_id.id.num
            && cs->local[i].method == m->method_id.id.num)
            return &cs->local[i];
    return NULL;
}

/* The method node of m when m would be forwarded (if it passes the
 * checks), else SHM_NONE. */
static uint32_t
wk_svc_call_forwarded(struct wk_worker *w,
                      const struct ua_call_method_request *m)
{
    uint32_t meth;

    if (wk_svc_call_local(w->calls, m) != NULL)
        return SHM_NONE;
    meth = wk_node_lookup(w, &m->method_id);
    if (meth == SHM_NONE || w->ns.nodes[meth].node_class != SHM_NC_METHOD)
        return SHM_NONE;
    return meth;
}

static void
wk_svc_call_one(struct wk_svc_ctx *ctx, struct ua_arena *req_a,
                struct wk_call *pc, uint32_t op,
                const struct ua_call_method_request *m,
                struct ua_call_method_result *r, const struct ua_string *audit)
{
    struct wk_worker           *w = ctx->w;
    const struct wk_call_local *loc = wk_svc_call_local(w->calls, m);
    const struct shm_node      *mn;
    uint32_t                    obj, meth;
    uint8_t                     nc;
    ua_status                   s;

    /* A local method taken before the node checks (ConditionRefresh(2)
     * on ConditionType, monitem_event.c). */
    if (loc != NULL && loc->early) {
        loc->fn(loc->arg, ctx, m, r);
        return;
    }
    obj = wk_node_lookup(w, &m->object_id);
    if (obj == SHM_NONE) {
        r->status_code = UA_BAD_NODE_ID_UNKNOWN;
        return;
    }
    nc = w->ns.nodes[obj].node_class;
    if (nc != SHM_NC_OBJECT && nc != SHM_NC_OBJECTTYPE) {
        r->status_code = UA_BAD_NODE_ID_INVALID;
        return;
    }
    meth = wk_node_lookup(w, &m->method_id);
    if (meth == SHM_NONE || w->ns.nodes[meth].node_class != SHM_NC_METHOD
        || !wk_svc_call_component(&w->ns, obj, meth)) {
        r->status_code = UA_BAD_METHOD_INVALID;
        return;
    }
    mn = &w->ns.nodes[meth];
    if ((mn->flags & SHM_NF_EXECUTABLE) == 0
        || (mn->flags & SHM_NF_USER_EXECUTABLE) == 0) {
        r->status_code = UA_BAD_NOT_EXECUTABLE;
        return;
    }
    if (loc != NULL) {
        loc->fn(loc->arg, ctx, m, r);
        return;
    }
    s = wk_svc_call_check_in(ctx, req_a, meth, m, r);
    if (s != UA_GOOD) {
        r->status_code = s;
        return;
    }
    if (!wk_session_may_write(w, ctx->session)) {
        r->status_code = UA_BAD_USER_ACCESS_DENIED;
        return;
    }
    if (pc == NULL) {
        r->status_code = wk_link_on(w->link) && w->calls != NULL
                             ? UA_BAD_RESOURCE_UNAVAILABLE
                             : UA_BAD_NOT_IMPLEMENTED;
        return;
    }
    s = wk_svc_call_add(w->calls, pc, op, obj, meth, m->input_arguments,
                        m->n_input_arguments > 0 ? m->n_input_arguments : 0,
                        ctx->session, audit);
    /* Good: its result comes with the broker's reply. */
    r->status_code = s;
}

/* ------------------------------------------------------------ checks */

/* The ns=0 numeric id of node i, or 0. */
static uint32_t
wk_svc_call_ns0(const struct shm_nodestore *ns, uint32_t i)
{
    const struct shm_node *n;

    if (i >= ns->nnodes)
        return 0;
    n = &ns->nodes[i];
    return n->ns == 0 && n->idtype == SHM_ID_NUMERIC ? n->id : 0;
}

/* The reftype index of ns=0 reference type id, or SHM_NONE. */
static uint32_t
wk_svc_call_reftype(const struct shm_nodestore *ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };
    uint32_t           i = shm_nodestore_lookup(ns, &k);

    return i == SHM_NONE ? SHM_NONE : shm_nodestore_reftype_of(ns, i);
}

/*
 * Is meth a component of obj, of obj's TypeDefinition or of one of its
 * supertypes (an inherited method: Part 4 §5.11.2 "the Method shall be a
 * component of the Object or of its ObjectType")?  The method's inverse
 * HasComponent references (a method has one or two parents).
 */
static bool
wk_svc_call_component(const struct shm_nodestore *ns, uint32_t obj,
                      uint32_t meth)
{
    const struct shm_node *mn = &ns->nodes[meth];
    uint32_t               hc = wk_svc_call_reftype(ns, UA_NS0ID_HASCOMPONENT);
    uint32_t               td = ns->nodes[obj].type_def;

    if (hc == SHM_NONE)
        return false;
    for (uint32_t k = 0; k < mn->nrefs; k++) {
        const struct shm_ref *r = &ns->refs[mn->refs + k];
        uint32_t              t = r->target;

        if ((r->flags & SHM_REF_INVERSE) == 0
            || !shm_nodestore_reftype_is(ns, r->reftype, hc))
            continue;
        if (t == obj)
            return true;
        /* The type definition and its supertypes. */
        for (uint32_t d = 0, x = td; d < 32 && x < ns->nnodes;
             d++, x = ns->nodes[x].super)
            if (t == x)
                return true;
    }
    return false;
}

/*
 * The Argument array of method meth's property named name (InputArguments
 * or OutputArguments), decoded in a: UA_GOOD with *n = 0 when there is no
 * such property; BadInternalError when its value is not an Argument array.
 */
static ua_status
wk_svc_call_argdefs(const struct wk_worker *w, uint32_t meth,
                    const char *name, struct ua_arena *a,
                    struct ua_argument **defs, int32_t *n)
{
    const struct shm_nodestore *ns = &w->ns;
    uint32_t                    p = shm_nodestore_property(ns, meth, name);
    uint32_t                    slot;
    size_t                      cap = WK_CALL_ARGS_READ;
    struct shm_value            m;
    uint8_t                    *buf;
    int                         rc;

    *defs = NULL;
    *n = 0;
    slot = p == SHM_NONE ? SHM_NONE : ns->nodes[p].u.var.slot;
    if (slot == SHM_NONE)
        return UA_GOOD;
    for (int tries = 0;; tries++) {
        buf = ua_arena_alloc(a, cap);
        if (buf == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        rc = shm_value_read(&w->vals, slot, &m, buf, cap);
        if (rc == -ENOSPC && tries < 4) {
            cap = (size_t)m.len + 16;
            continue;
        }
        if (rc == -EAGAIN && tries < 4)
            continue;
        break;
    }
    if (rc != 0)
        return UA_BAD_INTERNAL_ERROR;
    return ua_decode_arguments(buf, m.len, a, defs, n);
}

/* The DataType of an encoding node (its inverse HasEncoding), or
 * SHM_NONE. */
static uint32_t
wk_svc_call_encoding_type(const struct shm_nodestore *ns, uint32_t enc)
{
    uint32_t               he = wk_svc_call_reftype(ns, UA_NS0ID_HASENCODING);
    const struct shm_node *n = &ns->nodes[enc];

    for (uint32_t k = 0; k < n->nrefs && he != SHM_NONE; k++) {
        const struct shm_ref *r = &ns->refs[n->refs + k];

        if ((r->flags & SHM_REF_INVERSE) != 0
            && shm_nodestore_reftype_is(ns, r->reftype, he))
            return r->target;
    }
    return SHM_NONE;
}

/* Every element an ExtensionObject of DataType dt or a subtype. */
static bool
wk_svc_call_struct_ok(const struct wk_worker *w, uint32_t dt,
                      const struct ua_variant *v)
{
    const struct shm_nodestore *ns = &w->ns;
    const struct ua_extobj     *x = v->data;
    int32_t                     n = v->is_array ? (v->n > 0 ? v->n : 0) : 1;
    bool                        any = wk_svc_call_ns0(ns, dt)
                                      == UA_NS0ID_STRUCTURE;

    for (int32_t k = 0; k < n; k++) {
        uint32_t t;

        if (any && x[k].encoding != UA_EO_NONE)
            continue;
        if (x[k].encoding == UA_EO_DECODED && x[k].type != NULL) {
            struct shm_nodekey key = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                       .num = x[k].type->type_id };

            t = shm_nodestore_lookup(ns, &key);
        } else if (x[k].encoding == UA_EO_BYTES) {
            uint32_t enc = wk_node_lookup(w, &x[k].type_id);

            t = enc == SHM_NONE ? SHM_NONE
                                : wk_svc_call_encoding_type(ns, enc);
        } else {
            return false;
        }
        if (t == SHM_NONE || !shm_nodestore_is_subtype(ns, t, dt))
            return false;
    }
    return true;
}

/* v against the Argument's DataType (the rule at the top). */
static bool
wk_svc_call_type_ok(const struct wk_worker *w, const struct ua_argument *d,
                    const struct ua_variant *v)
{
    uint32_t dt = wk_node_lookup(w, &d->data_type);
    uint32_t root = dt == SHM_NONE ? 0
                    : shm_nodestore_type_root(&w->ns, dt, SHM_TYPE_ROOT_DEPTH);

    if (!ua_types_root_admits(root, v->type))
        return false;
    return root != UA_NS0ID_STRUCTURE || wk_svc_call_struct_ok(w, dt, v);
}

/* v's shape against the Argument's ValueRank and ArrayDimensions. */
static bool
wk_svc_call_rank_ok(const struct ua_argument *d, const struct ua_variant *v)
{
    int32_t rank = d->value_rank;
    int32_t nd = !v->is_array ? 0 : v->ndims > 0 ? v->ndims : 1;

    switch (rank) {
    case -1:                        /* Scalar */
        if (nd != 0)
            return false;
        break;
    case -2:                        /* Any */
        break;
    case -3:                        /* ScalarOrOneDimension */
        if (nd > 1)
            return false;
        break;
    case 0:                         /* OneOrMoreDimensions */
        if (nd < 1)
            return false;
        break;
    default:
        if (rank < 0 || nd != rank)
            return false;
        break;
    }
    if (nd == 0 || d->n_array_dimensions != nd)
        return true;
    /* ArrayDimensions: the longest each dimension may be, 0 = any. */
    for (int32_t k = 0; k < nd; k++) {
        uint32_t got = v->ndims > 0 ? (uint32_t)v->dims[k]
                                    : (uint32_t)(v->n > 0 ? v->n : 0);

        if (d->array_dimensions[k] != 0 && got > d->array_dimensions[k])
            return false;
    }
    return true;
}

static bool
wk_svc_call_arg_ok(const struct wk_worker *w, const struct ua_argument *d,
                   const struct ua_variant *v)
{
    return wk_svc_call_type_ok(w, d, v) && wk_svc_call_rank_ok(d, v);
}

/* m's input arguments against meth's InputArguments (the top comment). */
static ua_status
wk_svc_call_check_in(struct wk_svc_ctx *ctx, struct ua_arena *req_a,
                     uint32_t meth,
                     const struct ua_call_method_request *m,
                     struct ua_call_method_result *r)
{
    struct ua_argument *defs;
    int32_t             nd, na = m->n_input_arguments > 0
                                     ? m->n_input_arguments : 0;
    ua_status           s, *res;
    bool                bad = false;

    /* The definitions are read in the request's arena (req_a): the
     * response does not point at them. */
    s = wk_svc_call_argdefs(ctx->w, meth, "InputArguments", req_a, &defs,
                            &nd);
    if (s != UA_GOOD)
        return s;
    if (na < nd)
        return UA_BAD_ARGUMENTS_MISSING;
    if (na > nd)
        return UA_BAD_TOO_MANY_ARGUMENTS;
    if (na == 0)
        return UA_GOOD;
    res = ua_arena_alloc(ctx->arena, (size_t)na * sizeof(*res));
    if (res == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    for (int32_t k = 0; k < na; k++) {
        res[k] = wk_svc_call_arg_ok(ctx->w, &defs[k], &m->input_arguments[k])
                     ? UA_GOOD : UA_BAD_TYPE_MISMATCH;
        bad = bad || res[k] != UA_GOOD;
    }
    if (!bad)
        return UA_GOOD;
    r->input_argument_results = res;
    r->n_input_argument_results = na;
    return UA_BAD_INVALID_ARGUMENT;
}


/* ------------------------------------------------------------ the pool */

int
wk_svc_call_init(struct wk_calls *cs, struct wk_worker *w, uint32_t n,
                 uint32_t bytes, uint32_t scratch)
{
    memset(cs, 0, sizeof(*cs));
    cs->w = w;
    cs->free = UINT32_MAX;
    cs->n = n != 0 ? n : 1;
    cs->bytes = bytes != 0 ? bytes : 65536;
    cs->scratch_cap = scratch;
    cs->pool = wk_alloc(w, (size_t)cs->n * sizeof(*cs->pool));
    cs->scratch = wk_alloc(w, scratch);
    if (cs->pool == NULL || cs->scratch == NULL)
        goto nomem;
    memset(cs->pool, 0, (size_t)cs->n * sizeof(*cs->pool));
    for (uint32_t i = cs->n; i-- > 0;) {
        struct wk_call *pc = &cs->pool[i];

        pc->buf = wk_alloc(w, cs->bytes);
        if (pc->buf == NULL)
            goto nomem;
        pc->next_free = cs->free;
        cs->free = i;
    }
    if (wk_link_on(w->link))
        (void)wk_link_on_reply(w->link, SHM_FO_CALL_RESULT,
                               wk_svc_call_reply, cs);
    if (wk_svc_register(w, UA_NS0ID_CALLREQUEST_ENCODING_DEFAULTBINARY,
                        wk_svc_call, NULL, NULL) != 0) {
        wk_svc_call_clear(cs);
        return -EINVAL;
    }
    return 0;
nomem:
    wk_svc_call_clear(cs);
    return -ENOMEM;
}

void
wk_svc_call_clear(struct wk_calls *cs)
{
    if (cs->w == NULL)
        return;
    if (cs->pool != NULL)
        for (uint32_t i = 0; i < cs->n; i++)
            wk_free(cs->w, cs->pool[i].buf);
    wk_free(cs->w, cs->pool);
    wk_free(cs->w, cs->scratch);
    if (cs->w->calls == cs)
        cs->w->calls = NULL;
    memset(cs, 0, sizeof(*cs));
}

int
wk_svc_call_local_add(struct wk_calls *cs, uint32_t object, uint32_t method,
                      bool early, wk_svc_call_fn fn, void *arg)
{
    struct wk_call_local *l;

    if (cs->nlocal == WK_CALL_LOCAL_MAX || fn == NULL)
        return -ENOSPC;
    l = &cs->local[cs->nlocal++];
    l->object = object;
    l->method = method;
    l->early = early;
    l->fn = fn;
    l->arg = arg;
    return 0;
}

struct wk_call *
wk_svc_call_begin(struct wk_calls *cs, const struct wk_conn_ref *ref,
                  uint32_t n)
{
    struct wk_call *pc;
    uint32_t        i = cs->free;

    if (i == UINT32_MAX || n == 0
        || n > cs->w->conf->max_nodes_per_method_call)
        return NULL;
    pc = &cs->pool[i];
    ua_arena_init(&pc->arena, pc->buf, cs->bytes);
    pc->results = ua_arena_alloc(&pc->arena, (size_t)n
                                                 * sizeof(*pc->results));
    pc->methods = ua_arena_alloc(&pc->arena, (size_t)n * 4);
    if (pc->results == NULL || pc->methods == NULL)
        return NULL;                    /* n too large for bytes */
    memset(pc->results, 0, (size_t)n * sizeof(*pc->results));
    memset(pc->methods, 0xFF, (size_t)n * 4);
    cs->free = pc->next_free;
    cs->seq = (uint16_t)((cs->seq + 1) & 0x7FFF);
    if (cs->seq == 0)
        cs->seq = 1;
    pc->id = i | (uint32_t)cs->seq << 16;
    pc->ref = *ref;
    pc->n = n;
    pc->left = 0;
    pc->next_free = UINT32_MAX;
    return pc;
}

struct wk_call *
wk_svc_call_of(struct wk_calls *cs, uint32_t id)
{
    uint32_t i = id & 0xFFFFu;

    if (cs == NULL || id == 0 || cs->pool == NULL || i >= cs->n
        || cs->pool[i].id != id)
        return NULL;
    return &cs->pool[i];
}

ua_status
wk_svc_call_add(struct wk_calls *cs, struct wk_call *pc, uint32_t op,
                uint32_t object, uint32_t method,
                const struct ua_variant *args, int32_t nargs,
                const struct wk_session *s, const struct ua_string *audit)
{
    ua_status st;

    if (op >= pc->n || cs->w->link == NULL)
        return UA_BAD_INTERNAL_ERROR;
    /* The role values are the session's (shm/fanout.h enum
     * shm_fo_role mirrors enum wk_session_user). */
    st = wk_outbox_call(&cs->w->link->out, pc->id, op, object, method, args,
                        nargs, cs->bytes, s != NULL ? s->user : 0,
                        s != NULL ? s->user_id : NULL, audit);
    if (st != UA_GOOD)
        return st;
    pc->methods[op] = method;
    pc->left++;
    return UA_GOOD;
}

/* Every answer is in: the CallResponse, then the pending Call is free. */
static void
wk_svc_call_done(struct wk_calls *cs, struct wk_call *pc)
{
    struct ua_call_response resp;

    memset(&resp, 0, sizeof(resp));
    resp.response_header.service_result = UA_GOOD;
    resp.n_results = (int32_t)pc->n;
    resp.results = pc->results;
    /* -ESTALE: the client left meanwhile; the methods ran all the same. */
    (void)wk_reply_send(cs->w, &pc->ref, &ua_types[UA_TYPE_CALLRESPONSE],
                          &resp);
    pc->id = 0;
    pc->next_free = cs->free;
    cs->free = (uint32_t)(pc - cs->pool);
}

/* Method op of pc was answered (its result set): the response when it
 * was the last one. */
static void
wk_svc_call_answered(struct wk_calls *cs, struct wk_call *pc)
{
    if (pc->left != 0)
        pc->left--;
    if (pc->left == 0)
        wk_svc_call_done(cs, pc);
}

void
wk_svc_call_commit(struct wk_calls *cs, struct wk_call *pc)
{
    if (pc->left == 0) {
        wk_svc_call_done(cs, pc);       /* nothing went to the broker */
        return;
    }
    wk_link_push(cs->w->link);
}

/* ------------------------------------------------------------ replies */

/*
 * A SHM_FO_CALL_RESULT record from the reply ring (the link's handler):
 * the method's result, its outputs checked against the method's
 * OutputArguments.
 */
void
wk_svc_call_reply(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_calls              *cs = arg;
    struct wk_worker             *w = cs->w;
    struct shm_fo_call_result     h;
    struct wk_call               *pc;
    struct ua_call_method_result *r;
    struct ua_argument           *defs;
    struct ua_variant            *out;
    struct ua_arena               scratch;
    const uint8_t                *p = rec + sizeof(h);
    size_t                        left = len - sizeof(h), used;
    uint32_t                      meth;
    int32_t                       nd;
    ua_status                     st;

    if (len < sizeof(h))
        return;
    memcpy(&h, rec, sizeof(h));
    pc = wk_svc_call_of(cs, h.id);
    if (pc == NULL || h.op >= pc->n || pc->methods[h.op] == SHM_NONE)
        return;                         /* answered or dropped already */
    r = &pc->results[h.op];
    meth = pc->methods[h.op];
    pc->methods[h.op] = SHM_NONE;       /* a second answer is dropped */
    r->status_code = h.status;
    if ((h.status & 0x80000000u) != 0) {
        wk_svc_call_answered(cs, pc);   /* Bad: no outputs */
        return;
    }
    /* Outputs: checked against the OutputArguments (read in a scratch
     * arena), decoded into the pending Call's arena. */
    ua_arena_init(&scratch, cs->scratch, cs->scratch_cap);
    st = wk_svc_call_argdefs(w, meth, "OutputArguments", &scratch, &defs,
                             &nd);
    if (st != UA_GOOD || h.out_len > left || (int32_t)h.nout != nd
        || h.nout > (uint32_t)w->limits.max_array_len) {
        r->status_code = UA_BAD_INTERNAL_ERROR;
        wk_svc_call_answered(cs, pc);
        return;
    }
    if (h.nout == 0) {
        wk_svc_call_answered(cs, pc);
        return;
    }
    out = ua_arena_alloc(&pc->arena, (size_t)h.nout * sizeof(*out));
    left = h.out_len;
    for (uint32_t k = 0; out != NULL && k < h.nout; k++) {
        if (ua_decode(p, left, &used, &out[k], &ua_types[UA_TYPE_VARIANT],
                      &pc->arena, &w->limits) != UA_GOOD
            || !wk_svc_call_arg_ok(w, &defs[k], &out[k])) {
            out = NULL;
            break;
        }
        p += used;
        left -= used;
    }
    if (out == NULL || left != 0) {
        /* The broker checks them too: an owner's bad answer is counted
         * there (methods_errors_total). */
        r->status_code = UA_BAD_INTERNAL_ERROR;
    } else {
        r->output_arguments = out;
        r->n_output_arguments = (int32_t)h.nout;
    }
    wk_svc_call_answered(cs, pc);
}
