/*
 * tests/unit/worker/check_svc.c: worker/svc.c, the dispatcher, through
 * wk_svc_dispatch with requests encoded as a channel delivers them
 * (tests/unit/worker/fixture.h): the table, unknown and unserved request
 * types (docs/security.md case 65), type ids outside ns=0, undecodable
 * requests and bodies over a limit, no allocation per request.
 */
#include "fixture.h"

#include <stdatomic.h>

#define CH_A (&fx.ch[0])

/* A one-node Read on ch with token: the ServiceResult. */
static ua_status
read_server_state(struct ua_sc *ch, const struct ua_nodeid *token)
{
    struct ua_read_request  req;
    struct ua_read_response resp;
    struct ua_read_value_id rv;

    memset(&req, 0, sizeof(req));
    memset(&rv, 0, sizeof(rv));
    rv.node_id = fx_ns0(UA_NS0ID_SERVER_SERVERSTATUS_STATE);
    rv.attribute_id = 13;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    return fx_call(ch, token, UA_TYPE_READREQUEST, &req,
                   UA_TYPE_READRESPONSE, &resp);
}

static ua_status
close_session(struct ua_sc *ch, const struct ua_nodeid *token)
{
    struct ua_close_session_request  req;
    struct ua_close_session_response resp;

    memset(&req, 0, sizeof(req));
    req.delete_subscriptions = true;
    return fx_call(ch, token, UA_TYPE_CLOSESESSIONREQUEST, &req,
                   UA_TYPE_CLOSESESSIONRESPONSE, &resp);
}

/* ------------------------------------------------------------ dispatch */

START_TEST(test_table_sorted)
{
    for (size_t i = 0; i < wk_svc_table_len; i++) {
        const struct wk_svc_desc *d = &wk_svc_table[i];

        if (i > 0)
            ck_assert_uint_gt(d->request_binary_id,
                              wk_svc_table[i - 1].request_binary_id);
        ck_assert_uint_eq(ua_types[d->request_type].binary_id,
                          d->request_binary_id);
        ck_assert_ptr_nonnull(strstr(ua_types[d->response_type].name,
                                     "Response"));
        ck_assert_uint_lt(d->stat, SHM_SVC_MAX);
    }
    ck_assert_uint_ge(wk_svc_table_len, 30);
}
END_TEST

START_TEST(test_unknown_request_type)
{
    struct ua_request_header  h;
    struct ua_service_fault   f;
    struct ua_nodeid          token = fx_session(CH_A);
    size_t                    len;

    /* docs/security.md case 65: ns=0;i=99999 gets a fault; the channel
     * stays. */
    memset(&h, 0, sizeof(h));
    h.request_handle = 4242;
    h.authentication_token = token;
    len = fx_encode_request(99999, &ua_types[UA_TYPE_REQUESTHEADER], &h);
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, fx.msg, len,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_uint_eq(fx.last_dispatch, UA_GOOD);
    ck_assert_uint_eq(f.response_header.request_handle, 4242);
    /* A response type id as a request: also unknown. */
    len = fx_encode_request(UA_NS0ID_READRESPONSE_ENCODING_DEFAULTBINARY,
                            &ua_types[UA_TYPE_REQUESTHEADER], &h);
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, fx.msg, len,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_SERVICE_UNSUPPORTED);
    /* The channel still works. */
    ck_assert_uint_eq(read_server_state(CH_A, &token), UA_GOOD);
}
END_TEST

START_TEST(test_type_id_not_ns0)
{
    struct ua_request_header h;
    struct ua_service_fault  f;
    struct ua_nodeid         tid = { .ns = 1, .idtype = UA_IDTYPE_STRING };
    size_t                   n1, n2;

    memset(&h, 0, sizeof(h));
    h.request_handle = 5;
    tid.id.str = ua_string_from("ReadRequest");
    ck_assert_uint_eq(ua_encode(&tid, &ua_types[UA_TYPE_NODEID], fx.msg,
                                FX_MSG, &n1), UA_GOOD);
    ck_assert_uint_eq(ua_encode(&h, &ua_types[UA_TYPE_REQUESTHEADER],
                                fx.msg + n1, FX_MSG - n1, &n2), UA_GOOD);
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, fx.msg, n1 + n2,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_uint_eq(f.response_header.request_handle, 5);
}
END_TEST

START_TEST(test_not_implemented_yet)
{
    struct ua_nodeid                token = fx_session(CH_A);
    struct ua_history_update_request  hr;
    struct ua_history_update_response hresp;
    struct ua_query_first_request     qr;
    struct ua_query_first_response    qresp;

    /* Services with no handler yet (Write, Publish and HistoryRead have
     * landed). */
    memset(&hr, 0, sizeof(hr));
    ck_assert_uint_eq(fx_call(CH_A, &token, UA_TYPE_HISTORYUPDATEREQUEST, &hr,
                              UA_TYPE_HISTORYUPDATERESPONSE, &hresp),
                      UA_BAD_SERVICE_UNSUPPORTED);
    memset(&qr, 0, sizeof(qr));
    ck_assert_uint_eq(fx_call(CH_A, &token, UA_TYPE_QUERYFIRSTREQUEST, &qr,
                              UA_TYPE_QUERYFIRSTRESPONSE, &qresp),
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_ptr_eq(fx.last_type, &ua_types[UA_TYPE_SERVICEFAULT]);
}
END_TEST

START_TEST(test_undecodable)
{
    struct ua_service_fault f;
    struct ua_read_request  req;
    struct ua_nodeid        token = fx_session(CH_A);
    uint8_t                 bad[8] = { 0x07, 0, 0, 0, 0, 0, 0, 0 };
    size_t                  len;

    /* No type NodeId: the caller must ERR and close. */
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, bad, 1,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, bad, 0,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_DECODING_ERROR);
    /* A type NodeId and a truncated RequestHeader: likewise. */
    memset(&req, 0, sizeof(req));
    req.request_header.authentication_token = token;
    req.request_header.request_handle = 999;
    req.n_nodes_to_read = 0;
    len = fx_encode_request(UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                            &ua_types[UA_TYPE_READREQUEST], &req);
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, fx.msg, 6,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_DECODING_ERROR);
    /* Header fine, body cut short: a fault echoing the handle. */
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, fx.msg, len - 2,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(fx.last_dispatch, UA_GOOD);
    ck_assert_uint_eq(f.response_header.request_handle, 999);
}
END_TEST

START_TEST(test_body_over_limit)
{
    struct ua_service_fault  f;
    struct ua_read_request   req;
    struct ua_read_value_id *rv;
    struct ua_nodeid         token = fx_session(CH_A);
    int32_t                  n = (int32_t)fx.w.conf->max_array_length + 1;
    size_t                   len;

    rv = calloc((size_t)n, sizeof(*rv));
    ck_assert_ptr_nonnull(rv);
    for (int32_t i = 0; i < n; i++) {
        rv[i].index_range.len = -1;
        rv[i].data_encoding.name.len = -1;
    }
    memset(&req, 0, sizeof(req));
    req.request_header.authentication_token = token;
    req.request_header.request_handle = 31337;
    req.n_nodes_to_read = n;
    req.nodes_to_read = rv;
    len = fx_encode_request(UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                            &ua_types[UA_TYPE_READREQUEST], &req);
    ck_assert_uint_eq(fx_dispatch_raw(CH_A, fx.msg, len,
                                      &ua_types[UA_TYPE_SERVICEFAULT], &f),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ck_assert_uint_eq(f.response_header.request_handle, 31337);
    free(rv);
}
END_TEST

START_TEST(test_no_allocation_per_request)
{
    struct ua_nodeid token = fx_session(CH_A);
    uint64_t         allocs = atomic_load(&fx.w.row->allocations);

    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(read_server_state(CH_A, &token), UA_GOOD);
    ck_assert_uint_eq(close_session(CH_A, &token), UA_GOOD);
    (void)fx_session(CH_A);
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

static Suite *
svc_suite(void)
{
    Suite *s = suite_create("worker/svc");
    TCase *tc = tcase_create("dispatch");

    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_table_sorted);
    tcase_add_test(tc, test_unknown_request_type);
    tcase_add_test(tc, test_type_id_not_ns0);
    tcase_add_test(tc, test_not_implemented_yet);
    tcase_add_test(tc, test_undecodable);
    tcase_add_test(tc, test_body_over_limit);
    tcase_add_test(tc, test_no_allocation_per_request);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
