/*
 * tests/unit/worker/check_svc_call.c: worker/svc_call.c, the Call service
 * for the Server object's GetMonitoredItems and ResendData: outputs, the
 * next Publish after ResendData, the operation limit (SECURITY.md 70: a
 * Call of 0x6FFF methods), argument checks before the method runs, other
 * methods and objects, another session's subscription.
 */
#include "sub_fixture.h"

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
    call1(CH, &tok, fx_ns0(UA_NS0ID_SERVER),
          fx_ns0(UA_NS0ID_SERVER_REQUESTSERVERSTATECHANGE), &a, 1, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_METHOD_INVALID);
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
    req.n_methods_to_call = n;          /* SECURITY.md 70 */
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
