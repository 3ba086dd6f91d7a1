/*
 * tests/unit/worker/check_svc_write.c: the worker's side of the Write
 * service (worker/svc_write.c) as far as it goes without a broker: the
 * service-level refusals (BadNothingToDo, BadTooManyOperations at the
 * limit and past it, an activated session required) and the answer of a
 * worker whose segment has no fan-out (BadServiceUnsupported, never a
 * hang).  The whole path through the broker is tests/integ/integ_fanout.c;
 * the broker's checks are tests/unit/broker/check_write.c.
 */
#include "fixture.h"

static void
setup(void)
{
    fx_setup();
}

static void
teardown(void)
{
    fx_teardown();
}

/* A WriteRequest of n Int32 writes to v0. */
static ua_status
write_n(struct ua_nodeid *token, int32_t n, struct ua_write_response *resp)
{
    static int32_t           v = 5;
    struct ua_write_request  req;
    struct ua_write_value   *wv = calloc((size_t)(n > 0 ? n : 1),
                                         sizeof(*wv));
    ua_status                st;

    ck_assert_ptr_nonnull(wv);
    for (int32_t i = 0; i < n; i++) {
        wv[i].node_id.ns = 1;
        wv[i].node_id.idtype = UA_IDTYPE_STRING;
        wv[i].node_id.id.str = ua_string_from("v0");
        wv[i].attribute_id = 13;
        wv[i].index_range.len = -1;
        wv[i].value.mask = UA_DV_VALUE;
        ua_variant_set_scalar(&wv[i].value.value, &v, UA_BT_INT32);
    }
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_write = n;
    req.nodes_to_write = n > 0 ? wv : NULL;
    st = fx_call(&fx.ch[0], token, UA_TYPE_WRITEREQUEST, &req,
                 UA_TYPE_WRITERESPONSE, resp);
    free(wv);
    return st;
}

START_TEST(test_service_results)
{
    struct ua_nodeid         token = fx_session(&fx.ch[0]);
    struct ua_write_response resp;
    uint32_t                 max = fx.w.conf->max_nodes_per_write;

    ck_assert_uint_eq(write_n(&token, 0, &resp), UA_BAD_NOTHING_TO_DO);
    ck_assert_uint_eq(write_n(&token, (int32_t)max + 1, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    /* At the limit the request passes the checks; with no fan-out in
     * this process it is refused as a whole, at once. */
    ck_assert_uint_eq(write_n(&token, (int32_t)max, &resp),
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_uint_eq(write_n(&token, 1, &resp), UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_ptr_eq(fx.last_type, &ua_types[UA_TYPE_SERVICEFAULT]);
}
END_TEST

START_TEST(test_needs_session)
{
    struct ua_nodeid         none = ua_nodeid_num(0, 0);
    struct ua_write_response resp;

    ck_assert_uint_eq(write_n(&none, 1, &resp), UA_BAD_SESSION_ID_INVALID);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/svc_write");
    TCase   *tc = tcase_create("Write without a broker");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_service_results);
    tcase_add_test(tc, test_needs_session);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
