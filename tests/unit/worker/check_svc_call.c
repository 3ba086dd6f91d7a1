/*
 * tests/unit/worker/check_svc_call.c: worker/svc_call.c, the Call service for
 * the Server object's GetMonitoredItems and ResendData: outputs, the next
 * Publish after ResendData, the operation limit (docs/security.md case 70: a
 * Call of 0x6FFF methods), argument checks before the method runs, other
 * methods and objects, another session's subscription.
 *
 * Forwarded methods (every other Method, answered by the broker's method
 * owner): the checks before anything travels (arguments missing, too
 * many, of the wrong type or shape, per argument; a method that is not a
 * component of the object or of its type; not executable), the
 * SHM_FO_CALL record's bytes on a real request ring, the reply
 * (SHM_FO_CALL_RESULT) completing the CallResponse with local and
 * forwarded results mixed, outputs checked against OutputArguments, the
 * pending-Call limit and the record size limit.
 */
#include "sub_fixture.h"

#include "shm/ring.h"
#include "worker/link.h"
#include "worker/node.h"
#include "worker/svc_call.h"

#define CH  (&fx.ch[0])
#define CH2 (&fx.ch[1])

static struct ua_nodeid tok;

static void
setup(void)
{
    sf_setup();
    tok = fx_session(CH);
}

static void
teardown(void)
{
    sf_teardown();
}

/* One method call on (obj, meth) with the given arguments. */
static ua_status
call1(struct ua_sc *ch, const struct ua_nodeid *t, struct ua_nodeid obj,
      struct ua_nodeid meth, struct ua_variant *args, int32_t nargs,
      struct ua_call_method_result *out)
{
    struct ua_call_request        req;
    struct ua_call_response       resp;
    struct ua_call_method_request m;
    ua_status                     st;

    memset(&m, 0, sizeof(m));
    m.object_id = obj;
    m.method_id = meth;
    m.n_input_arguments = nargs;
    m.input_arguments = args;
    memset(&req, 0, sizeof(req));
    req.n_methods_to_call = 1;
    req.methods_to_call = &m;
    st = sf_call(ch, t, UA_TYPE_CALLREQUEST, &req, UA_TYPE_CALLRESPONSE,
                 &resp);
    if (st == UA_GOOD) {
        ck_assert_int_eq(resp.n_results, 1);
        *out = resp.results[0];
    }
    return st;
}

static ua_status
call_sub(struct ua_sc *ch, const struct ua_nodeid *t, uint32_t method,
         uint32_t *sub, struct ua_call_method_result *out)
{
    struct ua_variant a;

    ua_variant_set_scalar(&a, sub, UA_BT_UINT32);
    ck_assert_uint_eq(call1(ch, t, fx_ns0(UA_NS0ID_SERVER),
                            fx_ns0(method), &a, 1, out), UA_GOOD);
    return out->status_code;
}

START_TEST(test_get_monitored_items)
{
    uint32_t                     sub = sf_create_sub(CH, &tok, 100), ids[3];
    struct ua_call_method_result r;
    const uint32_t              *sh, *chh;
    int                          seen = 0;

    for (unsigned i = 0; i < 3; i++)
        ids[i] = sf_item(CH, &tok, sub, sf_var(i), 100 + i, NULL);
    ck_assert_uint_eq(call_sub(CH, &tok, UA_NS0ID_SERVER_GETMONITOREDITEMS,
                               &sub, &r), UA_GOOD);
    ck_assert_int_eq(r.n_output_arguments, 2);
    ck_assert_uint_eq(r.output_arguments[0].type, UA_BT_UINT32);
    ck_assert(r.output_arguments[0].is_array);
    ck_assert_int_eq(r.output_arguments[0].n, 3);
    ck_assert_int_eq(r.output_arguments[1].n, 3);
    sh = r.output_arguments[0].data;
    chh = r.output_arguments[1].data;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++)
            if (sh[k] == ids[i]) {
                ck_assert_uint_eq(chh[k], 100u + (uint32_t)i);
                seen++;
            }
    ck_assert_int_eq(seen, 3);
}
END_TEST

START_TEST(test_resend_data)
{
    uint32_t                     sub = sf_create_sub(CH, &tok, 100);
    struct ua_call_method_result r;
    struct sf_got               *g;

    sf_item(CH, &tok, sub, sf_var(1), 1, NULL);
    sf_item(CH, &tok, sub, sf_var(2), 2, NULL);
    sf_publish(CH, &tok);
    sf_tick(100);
    ck_assert_int_eq(sf_dcn(sf_next())->n_monitored_items, 2);
    sf_publish(CH, &tok);
    sf_tick(100);
    ck_assert_ptr_null(sf_next());      /* nothing changed */
    ck_assert_uint_eq(call_sub(CH, &tok, UA_NS0ID_SERVER_RESENDDATA, &sub,
                               &r), UA_GOOD);
    ck_assert_int_le(r.n_output_arguments, 0);
    sf_tick(100);
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(sf_dcn(g)->n_monitored_items, 2);  /* unchanged, sent */
}
END_TEST

START_TEST(test_other_session)
{
    struct ua_nodeid             tok2 = fx_session(CH2);
    uint32_t                     sub = sf_create_sub(CH, &tok, 100);
    uint32_t                     bogus = 0x0ABCDEF;
    struct ua_call_method_result r;

    ck_assert_uint_eq(call_sub(CH2, &tok2, UA_NS0ID_SERVER_GETMONITOREDITEMS,
                               &sub, &r), UA_BAD_USER_ACCESS_DENIED);
    ck_assert_uint_eq(call_sub(CH2, &tok2, UA_NS0ID_SERVER_RESENDDATA, &sub,
                               &r), UA_BAD_USER_ACCESS_DENIED);
    ck_assert_uint_eq(call_sub(CH, &tok, UA_NS0ID_SERVER_GETMONITOREDITEMS,
                               &bogus, &r), UA_BAD_SUBSCRIPTION_ID_INVALID);
}
END_TEST

START_TEST(test_arguments_checked_first)
{
    uint32_t                     sub = sf_create_sub(CH, &tok, 100);
    struct ua_call_method_result r;
    struct ua_variant            a[2];
    int32_t                      i32 = (int32_t)sub;
    uint32_t                     arr[1] = { sub };
    struct ua_nodeid             srv = fx_ns0(UA_NS0ID_SERVER);
    struct ua_nodeid             gmi =
        fx_ns0(UA_NS0ID_SERVER_GETMONITOREDITEMS);

    ck_assert_uint_eq(call1(CH, &tok, srv, gmi, NULL, 0, &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_BAD_ARGUMENTS_MISSING);
    ua_variant_set_scalar(&a[0], &sub, UA_BT_UINT32);
    ua_variant_set_scalar(&a[1], &sub, UA_BT_UINT32);
    call1(CH, &tok, srv, gmi, a, 2, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_TOO_MANY_ARGUMENTS);
    ua_variant_set_scalar(&a[0], &i32, UA_BT_INT32);
    call1(CH, &tok, srv, gmi, a, 1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_INVALID_ARGUMENT);
    ck_assert_int_eq(r.n_input_argument_results, 1);
    ck_assert_uint_eq(r.input_argument_results[0], UA_BAD_TYPE_MISMATCH);
    ua_variant_set_array(&a[0], arr, 1, UA_BT_UINT32);
    call1(CH, &tok, srv, gmi, a, 1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_other_methods_and_objects)
{
    uint32_t                     sub = sf_create_sub(CH, &tok, 100);
    struct ua_call_method_result r;
    struct ua_variant            a;

    ua_variant_set_scalar(&a, &sub, UA_BT_UINT32);
    /* An object that does not exist, one that is a Variable. */
    call1(CH, &tok, fx_ns1("nope"), fx_ns0(UA_NS0ID_SERVER_RESENDDATA), &a,
          1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_NODE_ID_UNKNOWN);
    call1(CH, &tok, sf_var(1), fx_ns0(UA_NS0ID_SERVER_RESENDDATA), &a, 1,
          &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_NODE_ID_INVALID);
    /* The method on another object; a method we do not run; no method. */
    call1(CH, &tok, fx_ns0(UA_NS0ID_OBJECTSFOLDER),
          fx_ns0(UA_NS0ID_SERVER_RESENDDATA), &a, 1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_METHOD_INVALID);
    /* Another method of the Server: forwarded, so its arguments are
     * checked against its InputArguments first (it takes five). */
    call1(CH, &tok, fx_ns0(UA_NS0ID_SERVER),
          fx_ns0(UA_NS0ID_SERVER_REQUESTSERVERSTATECHANGE), &a, 1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_ARGUMENTS_MISSING);
    call1(CH, &tok, fx_ns0(UA_NS0ID_SERVER), fx_ns1("nope"), &a, 1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_METHOD_INVALID);
    call1(CH, &tok, fx_ns0(UA_NS0ID_SERVER), fx_ns0(UA_NS0ID_SERVER), &a, 1,
          &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_METHOD_INVALID);
}
END_TEST

START_TEST(test_operation_limits)
{
    struct ua_call_request         req;
    struct ua_call_response        resp;
    struct ua_call_method_request *m;
    int32_t                        n = 0x6FFF;

    memset(&req, 0, sizeof(req));
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_CALLREQUEST, &req,
                              UA_TYPE_CALLRESPONSE, &resp),
                      UA_BAD_NOTHING_TO_DO);
    m = ua_arena_alloc(&fx.rarena, (size_t)n * sizeof(*m));
    ck_assert_ptr_nonnull(m);
    memset(m, 0, (size_t)n * sizeof(*m));
    req.n_methods_to_call = n;          /* docs/security.md case 70 */
    req.methods_to_call = m;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_CALLREQUEST, &req,
                              UA_TYPE_CALLRESPONSE, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    req.n_methods_to_call = (int32_t)fx.w.conf->max_nodes_per_method_call;
    for (int32_t i = 0; i < req.n_methods_to_call; i++) {
        m[i].object_id = fx_ns0(UA_NS0ID_SERVER);
        m[i].method_id = fx_ns0(UA_NS0ID_SERVER_GETMONITOREDITEMS);
    }
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_CALLREQUEST, &req,
                              UA_TYPE_CALLRESPONSE, &resp), UA_GOOD);
    ck_assert_uint_eq(resp.results[0].status_code, UA_BAD_ARGUMENTS_MISSING);
}
END_TEST

/* ------------------------------------------------ forwarded methods */

#define TF_SS     64u
#define TF_SLOTS  64u

/* A link with a real request ring (TF_SLOTS slots of TF_SS bytes) and a
 * consumer on it, a pool of ncalls pending Calls, responses captured. */
static struct {
    struct wk_link      l;
    struct wk_calls     calls;
    struct wk_calls    *saved;
    struct shm_ring_ref cons;
    uint8_t            *ring;
    uint8_t            *rec;
    uint32_t            ngot;
    struct ua_call_response got;        /* the last one, decoded */
    uint32_t            got_ref;
} tf;

static int
tf_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
           const struct ua_type *t, void *resp)
{
    size_t   len, used;
    uint8_t *out;

    (void)w;
    ck_assert_ptr_eq(t, &ua_types[UA_TYPE_CALLRESPONSE]);
    len = ua_encoded_size(resp, t);
    ck_assert_uint_gt(len, 0);
    out = ua_arena_alloc(&fx.rarena, len);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(ua_encode(resp, t, out, len, &len), UA_GOOD);
    ck_assert_uint_eq(ua_decode(out, len, &used, &tf.got, t, &fx.rarena,
                                NULL), UA_GOOD);
    tf.ngot++;
    tf.got_ref = ref->index;
    return 0;
}

static bool
tf_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    (void)w;
    (void)ref;
    return true;
}

static const struct wk_reply_hook tf_hook = { tf_respond, tf_alive };

static void
tf_make(uint32_t ncalls)
{
    struct wk_link *l = &tf.l;
    uint64_t        rb = shm_ring_bytes(TF_SLOTS, TF_SS);

    memset(&tf, 0, sizeof(tf));
    tf.ring = aligned_alloc(4096, ((size_t)rb + 4095) & ~(size_t)4095);
    tf.rec = malloc(TF_SLOTS * TF_SS);
    ck_assert_ptr_nonnull(tf.ring);
    ck_assert_int_eq(shm_ring_init(tf.ring, rb, TF_SLOTS, TF_SS), 0);
    ck_assert_int_eq(shm_ring_attach(&l->req, tf.ring, rb, TF_SS), 0);
    ck_assert_int_eq(shm_ring_attach(&tf.cons, tf.ring, rb, TF_SS), 0);
    l->w = &fx.w;
    l->on = true;
    ck_assert_int_eq(wk_outbox_init(&l->out, &fx.w, TF_SS, TF_SLOTS), 0);
    fx.w.link = l;
    ck_assert_int_eq(wk_svc_call_init(&tf.calls, &fx.w, ncalls, 65536,
                                      1u << 20), 0);
    /* The local methods the subscriptions registered (fixture.h) go with
     * the pool. */
    memcpy(tf.calls.local, fx.calls.local, sizeof(tf.calls.local));
    tf.calls.nlocal = fx.calls.nlocal;
    tf.saved = fx.w.calls;
    fx.w.calls = &tf.calls;
    fx.w.reply_hook = &tf_hook;
}

static void
tf_free(void)
{
    fx.w.calls = tf.saved;
    wk_svc_call_clear(&tf.calls);
    wk_outbox_clear(&tf.l.out);
    free(tf.ring);
    free(tf.rec);
    fx.w.link = NULL;
}

static void
fsetup(void)
{
    setup();
    tf_make(2);
}

static void
fteardown(void)
{
    tf_free();
    teardown();
}

/* Server.SetSubscriptionDurable (i=12749): in SubscriptionId UInt32,
 * LifetimeInHours UInt32; out RevisedLifetimeInHours UInt32.  Not one the
 * worker serves: forwarded. */
#define SSD UA_NS0ID_SERVER_SETSUBSCRIPTIONDURABLE

/* Run one Call of n methods through wk_svc_call_ref with a ref numbered
 * refno; true when it went pending (then tf.got is set later), false with
 * *resp the answer. */
static bool
tf_call(struct ua_call_method_request *m, int32_t n, uint32_t refno,
        struct ua_call_response *resp)
{
    struct ua_call_request req;
    struct wk_svc_ctx      ctx;
    struct wk_conn_ref     ref;

    memset(&req, 0, sizeof(req));
    req.n_methods_to_call = n;
    req.methods_to_call = m;
    memset(&ctx, 0, sizeof(ctx));
    ctx.w = &fx.w;
    ctx.ch = CH;
    ctx.session = wk_session_find_by_token(&fx.w, &tok);
    ck_assert_ptr_nonnull(ctx.session);
    ua_arena_reset(&fx.arena);
    ctx.arena = &fx.arena;
    memset(&ref, 0, sizeof(ref));
    ref.index = refno;
    memset(resp, 0, sizeof(*resp));
    return wk_svc_call_ref(&ctx, &req, resp, &ref);
}

static void
tf_method(struct ua_call_method_request *m, uint32_t obj, uint32_t meth,
          struct ua_variant *args, int32_t nargs)
{
    memset(m, 0, sizeof(*m));
    m->object_id = fx_ns0(obj);
    m->method_id = fx_ns0(meth);
    m->input_arguments = args;
    m->n_input_arguments = nargs;
}

/* One method alone, answered at once: its result. */
static struct ua_call_method_result
tf_now(uint32_t obj, uint32_t meth, struct ua_variant *args, int32_t nargs)
{
    struct ua_call_method_request m;
    struct ua_call_response       resp;

    uint32_t                      before = tf.ngot;

    tf_method(&m, obj, meth, args, nargs);
    /* Nothing forwarded: the pending Call is answered at once. */
    ck_assert(tf_call(&m, 1, 1, &resp));
    ck_assert_uint_eq(tf.ngot, before + 1);
    ck_assert_int_eq(tf.got.n_results, 1);
    ck_assert_ptr_null(wk_svc_call_of(&tf.calls, tf.calls.pool[0].id));
    return tf.got.results[0];
}

/* Pop one record from the request ring into tf.rec: its header. */
static struct shm_fo_hdr
tf_pop(void)
{
    struct shm_fo_hdr h;

    ck_assert_int_eq(shm_ring_pop_spsc(&tf.cons, tf.rec), 0);
    memcpy(&h, tf.rec, sizeof(h));
    ck_assert(shm_fo_hdr_ok(&h, TF_SS, TF_SLOTS));
    if (h.nslots > 1)
        ck_assert_int_eq(shm_ring_pop_n_spsc(&tf.cons, tf.rec + TF_SS,
                                             h.nslots - 1u),
                         (int)h.nslots - 1);
    return h;
}

START_TEST(test_fwd_argument_checks)
{
    uint32_t                     u[3] = { 7, 5, 1 }, arr[2] = { 1, 2 };
    int32_t                      i32 = 7;
    double                       d = 7.0;
    struct ua_variant            a[3];
    struct ua_call_method_result r;

    for (int k = 0; k < 3; k++)
        ua_variant_set_scalar(&a[k], &u[k], UA_BT_UINT32);
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 1);
    ck_assert_uint_eq(r.status_code, UA_BAD_ARGUMENTS_MISSING);
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 0);
    ck_assert_uint_eq(r.status_code, UA_BAD_ARGUMENTS_MISSING);
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 3);
    ck_assert_uint_eq(r.status_code, UA_BAD_TOO_MANY_ARGUMENTS);
    /* The wrong type: an Int32 for a UInt32 (no conversion). */
    ua_variant_set_scalar(&a[0], &i32, UA_BT_INT32);
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_INVALID_ARGUMENT);
    ck_assert_int_eq(r.n_input_argument_results, 2);
    ck_assert_uint_eq(r.input_argument_results[0], UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(r.input_argument_results[1], UA_GOOD);
    /* A Double for the second; the first right again. */
    ua_variant_set_scalar(&a[0], &u[0], UA_BT_UINT32);
    ua_variant_set_scalar(&a[1], &d, UA_BT_DOUBLE);
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_INVALID_ARGUMENT);
    ck_assert_int_eq(r.n_input_argument_results, 2);
    ck_assert_uint_eq(r.input_argument_results[0], UA_GOOD);
    ck_assert_uint_eq(r.input_argument_results[1], UA_BAD_TYPE_MISMATCH);
    /* The wrong rank: an array for a scalar; an empty Variant. */
    ua_variant_set_array(&a[1], arr, 2, UA_BT_UINT32);
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(r.input_argument_results[1], UA_BAD_TYPE_MISMATCH);
    memset(&a[1], 0, sizeof(a[1]));
    a[1].ndims = -1;
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(r.input_argument_results[1], UA_BAD_TYPE_MISMATCH);
    /* Nothing travelled. */
    ck_assert_uint_eq(shm_ring_count_spsc(&tf.cons), 0);
}
END_TEST

START_TEST(test_fwd_component_executable)
{
    uint32_t                     u[2] = { 7, 5 };
    struct ua_variant            a[2];
    struct ua_call_method_result r;
    struct ua_nodeid             mid = fx_ns0(SSD);
    struct shm_node             *mn = &fx.w.ns.nodes[fx_index(&mid)];

    for (int k = 0; k < 2; k++)
        ua_variant_set_scalar(&a[k], &u[k], UA_BT_UINT32);
    /* Not a component of the Objects folder (nor of FolderType). */
    r = tf_now(UA_NS0ID_OBJECTSFOLDER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_METHOD_INVALID);
    /* ServerType's own method on the Server object: a component of the
     * object's type, so valid (its arguments then checked). */
    r = tf_now(UA_NS0ID_SERVER, UA_NS0ID_SERVERTYPE_SETSUBSCRIPTIONDURABLE,
               a, 1);
    ck_assert_uint_eq(r.status_code, UA_BAD_ARGUMENTS_MISSING);
    /* Not executable; not executable by this user. */
    mn->flags &= (uint8_t)~SHM_NF_EXECUTABLE;
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_NOT_EXECUTABLE);
    mn->flags |= SHM_NF_EXECUTABLE;
    mn->flags &= (uint8_t)~SHM_NF_USER_EXECUTABLE;
    r = tf_now(UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert_uint_eq(r.status_code, UA_BAD_NOT_EXECUTABLE);
    mn->flags |= SHM_NF_USER_EXECUTABLE;
    ck_assert_uint_eq(shm_ring_count_spsc(&tf.cons), 0);
}
END_TEST

/* The record of a forwarded method, byte for byte. */
START_TEST(test_fwd_record)
{
    uint32_t                      u[2] = { 7, 5 };
    struct ua_variant             a[2];
    struct ua_call_method_request m;
    struct ua_call_response       resp;
    struct shm_fo_call            rec;
    struct shm_fo_hdr             h;
    struct ua_nodeid              srv = fx_ns0(UA_NS0ID_SERVER);
    struct ua_nodeid              mid = fx_ns0(SSD);
    uint8_t                       want[64];
    size_t                        l0, l1;

    for (int k = 0; k < 2; k++)
        ua_variant_set_scalar(&a[k], &u[k], UA_BT_UINT32);
    tf_method(&m, UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert(tf_call(&m, 1, 9, &resp));
    ck_assert_uint_eq(tf.ngot, 0);
    h = tf_pop();
    ck_assert_uint_eq(h.kind, SHM_FO_CALL);
    memcpy(&rec, tf.rec, sizeof(rec));
    ck_assert_uint_eq(rec.op, 0);
    ck_assert_uint_eq(rec.object, fx_index(&srv));
    ck_assert_uint_eq(rec.method, fx_index(&mid));
    ck_assert_uint_eq(rec.nargs, 2);
    ck_assert_ptr_nonnull(wk_svc_call_of(&tf.calls, rec.id));
    ck_assert_uint_eq(ua_encode(&a[0], &ua_types[UA_TYPE_VARIANT], want,
                                sizeof(want), &l0), UA_GOOD);
    ck_assert_uint_eq(ua_encode(&a[1], &ua_types[UA_TYPE_VARIANT],
                                want + l0, sizeof(want) - l0, &l1), UA_GOOD);
    ck_assert_uint_eq(rec.args_len, l0 + l1);
    ck_assert_uint_eq(h.len, sizeof(rec) + l0 + l1);
    ck_assert_mem_eq(tf.rec + sizeof(rec), want, l0 + l1);
    /* No stale bytes past the record in its last slot. */
    for (uint32_t k = h.len; k < (uint32_t)h.nslots * TF_SS; k++)
        ck_assert_uint_eq(tf.rec[k], 0);
    ck_assert_uint_eq(shm_ring_count_spsc(&tf.cons), 0);
}
END_TEST

/* A SHM_FO_CALL_RESULT for id/op with nout UInt32/Int32 outputs. */
static void
tf_reply(uint32_t id, uint32_t op, ua_status st, const uint32_t *outs,
         uint32_t nout, uint8_t type)
{
    uint8_t                   buf[256];
    struct shm_fo_call_result r;
    size_t                    len = sizeof(r), used;

    for (uint32_t k = 0; k < nout; k++) {
        struct ua_variant v;

        ua_variant_set_scalar(&v, (void *)(uintptr_t)&outs[k], type);
        ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT],
                                    buf + len, sizeof(buf) - len, &used),
                          UA_GOOD);
        len += used;
    }
    memset(&r, 0, sizeof(r));
    r.hdr.kind = SHM_FO_CALL_RESULT;
    r.hdr.len = (uint32_t)len;
    r.hdr.nslots = (uint16_t)shm_fo_slots(len, TF_SS);
    r.id = id;
    r.op = op;
    r.status = st;
    r.nout = nout;
    r.out_len = (uint32_t)(len - sizeof(r));
    memcpy(buf, &r, sizeof(r));
    wk_svc_call_reply(&tf.calls, buf, (uint32_t)len);
}

/* Forward one SetSubscriptionDurable as method op of a Call of two whose
 * other one is the Server's GetMonitoredItems (local); its record's id. */
static uint32_t
tf_mixed(uint32_t refno)
{
    static uint32_t               u[2] = { 7, 5 }, sub = 12345;
    static struct ua_variant      a[2], g;
    struct ua_call_method_request m[2];
    struct ua_call_response       resp;
    struct shm_fo_call            rec;

    for (int k = 0; k < 2; k++)
        ua_variant_set_scalar(&a[k], &u[k], UA_BT_UINT32);
    ua_variant_set_scalar(&g, &sub, UA_BT_UINT32);
    tf_method(&m[0], UA_NS0ID_SERVER, UA_NS0ID_SERVER_GETMONITOREDITEMS, &g,
              1);
    tf_method(&m[1], UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert(tf_call(m, 2, refno, &resp));
    (void)tf_pop();
    memcpy(&rec, tf.rec, sizeof(rec));
    ck_assert_uint_eq(rec.op, 1);
    return rec.id;
}

START_TEST(test_fwd_reply)
{
    uint32_t out = 24, id;

    /* Good with its output: both results, the local one made at once. */
    id = tf_mixed(3);
    tf_reply(id + 0x10000u, 1, UA_GOOD, &out, 1, UA_BT_UINT32); /* stale */
    tf_reply(id, 0, UA_GOOD, &out, 1, UA_BT_UINT32);    /* not forwarded */
    ck_assert_uint_eq(tf.ngot, 0);
    tf_reply(id, 1, UA_GOOD, &out, 1, UA_BT_UINT32);
    ck_assert_uint_eq(tf.ngot, 1);
    ck_assert_uint_eq(tf.got_ref, 3);
    ck_assert_int_eq(tf.got.n_results, 2);
    ck_assert_uint_eq(tf.got.results[0].status_code,
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(tf.got.results[1].status_code, UA_GOOD);
    ck_assert_int_eq(tf.got.results[1].n_output_arguments, 1);
    ck_assert_uint_eq(tf.got.results[1].output_arguments[0].type,
                      UA_BT_UINT32);
    ck_assert_uint_eq(*(uint32_t *)tf.got.results[1].output_arguments[0].data,
                      24);
    ck_assert_ptr_null(wk_svc_call_of(&tf.calls, id));
    /* A second answer for it: dropped. */
    tf_reply(id, 1, UA_GOOD, &out, 1, UA_BT_UINT32);
    ck_assert_uint_eq(tf.ngot, 1);
    /* The owner's Bad status: no outputs. */
    id = tf_mixed(4);
    tf_reply(id, 1, UA_BAD_TIMEOUT, NULL, 0, UA_BT_UINT32);
    ck_assert_uint_eq(tf.ngot, 2);
    ck_assert_uint_eq(tf.got.results[1].status_code, UA_BAD_TIMEOUT);
    ck_assert_int_eq(tf.got.results[1].n_output_arguments, 0);
    /* Outputs that do not match OutputArguments: a type, a count. */
    id = tf_mixed(5);
    tf_reply(id, 1, UA_GOOD, &out, 1, UA_BT_INT32);
    ck_assert_uint_eq(tf.ngot, 3);
    ck_assert_uint_eq(tf.got.results[1].status_code, UA_BAD_INTERNAL_ERROR);
    ck_assert_int_eq(tf.got.results[1].n_output_arguments, 0);
    id = tf_mixed(6);
    tf_reply(id, 1, UA_GOOD, NULL, 0, UA_BT_UINT32);
    ck_assert_uint_eq(tf.ngot, 4);
    ck_assert_uint_eq(tf.got.results[1].status_code, UA_BAD_INTERNAL_ERROR);
}
END_TEST

/* Two pending Calls (the pool): the third's forwarded method is refused
 * at once, the local one still answered; one answer frees a slot. */
START_TEST(test_fwd_pending_limit)
{
    static uint32_t               u[2] = { 7, 5 }, sub = 1, out = 1;
    struct ua_variant             a[2], g;
    struct ua_call_method_request m[2];
    struct ua_call_response       resp;
    uint32_t                      id1;

    id1 = tf_mixed(1);
    (void)tf_mixed(2);
    for (int k = 0; k < 2; k++)
        ua_variant_set_scalar(&a[k], &u[k], UA_BT_UINT32);
    ua_variant_set_scalar(&g, &sub, UA_BT_UINT32);
    tf_method(&m[0], UA_NS0ID_SERVER, UA_NS0ID_SERVER_GETMONITOREDITEMS, &g,
              1);
    tf_method(&m[1], UA_NS0ID_SERVER, SSD, a, 2);
    ck_assert(!tf_call(m, 2, 3, &resp));
    ck_assert_int_eq(resp.n_results, 2);
    ck_assert_uint_eq(resp.results[0].status_code,
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(resp.results[1].status_code,
                      UA_BAD_RESOURCE_UNAVAILABLE);
    ck_assert_uint_eq(shm_ring_count_spsc(&tf.cons), 0);
    tf_reply(id1, 1, UA_GOOD, &out, 1, UA_BT_UINT32);
    ck_assert_uint_eq(tf.ngot, 1);
    (void)tf_mixed(4);
}
END_TEST

/* Arguments whose record would take more slots than the ring has. */
START_TEST(test_fwd_too_large)
{
    struct ua_nodeid              mid = fx_ns0(SSD), srv = fx_ns0(0);
    struct ua_call_method_request m;
    struct ua_call_response       resp;
    struct ua_variant             a[2];
    struct wk_call               *pc;
    struct wk_conn_ref            ref;
    static uint8_t                big[TF_SLOTS * TF_SS];
    struct ua_string              bs = { (int32_t)sizeof(big), big };

    ua_variant_set_scalar(&a[0], &bs, UA_BT_BYTESTRING);
    memset(&ref, 0, sizeof(ref));
    pc = wk_svc_call_begin(&tf.calls, &ref, 1);
    ck_assert_ptr_nonnull(pc);
    srv = fx_ns0(UA_NS0ID_SERVER);
    ck_assert_uint_eq(wk_svc_call_add(&tf.calls, pc, 0, fx_index(&srv),
                                         fx_index(&mid), a, 1, NULL, NULL),
                      UA_BAD_REQUEST_TOO_LARGE);
    /* One that fits exactly in the ring (record = all its slots). */
    bs.len = (int32_t)(TF_SLOTS * TF_SS - sizeof(struct shm_fo_call) - 5);
    ck_assert_uint_eq(wk_svc_call_add(&tf.calls, pc, 0, fx_index(&srv),
                                         fx_index(&mid), a, 1, NULL, NULL),
                      UA_GOOD);
    ck_assert_uint_eq(tf.l.out.len, TF_SLOTS * TF_SS);
    bs.len = 1;
    ck_assert_uint_eq(wk_svc_call_add(&tf.calls, pc, 0, fx_index(&srv),
                                         fx_index(&mid), a, 1, NULL, NULL),
                      UA_BAD_RESOURCE_UNAVAILABLE);
    wk_svc_call_commit(&tf.calls, pc);
    ck_assert_uint_eq(tf.l.out.len, 0);
    ck_assert_uint_eq(tf_pop().nslots, TF_SLOTS);
    (void)m;
    (void)resp;
}
END_TEST

static Suite *
svc_call_suite(void)
{
    Suite *s = suite_create("Call");
    TCase *tc = tcase_create("server methods");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_get_monitored_items);
    tcase_add_test(tc, test_resend_data);
    tcase_add_test(tc, test_other_session);
    tcase_add_test(tc, test_arguments_checked_first);
    tcase_add_test(tc, test_other_methods_and_objects);
    tcase_add_test(tc, test_operation_limits);
    suite_add_tcase(s, tc);
    tc = tcase_create("forwarded methods");
    tcase_add_checked_fixture(tc, fsetup, fteardown);
    tcase_add_test(tc, test_fwd_argument_checks);
    tcase_add_test(tc, test_fwd_component_executable);
    tcase_add_test(tc, test_fwd_record);
    tcase_add_test(tc, test_fwd_reply);
    tcase_add_test(tc, test_fwd_pending_limit);
    tcase_add_test(tc, test_fwd_too_large);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_call_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
