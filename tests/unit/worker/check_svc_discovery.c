/*
 * tests/unit/worker/check_svc_discovery.c: worker/svc_discovery.c,
 * GetEndpoints and FindServers through wk_svc_dispatch
 * (tests/unit/worker/fixture.h): the endpoints offered, an IPv6 host in
 * the EndpointUrl, the server's ApplicationDescription.
 */
#include "fixture.h"

#define CH_A (&fx.ch[0])

/* ------------------------------------------------------------ discovery */

START_TEST(test_get_endpoints)
{
    struct ua_get_endpoints_request  req;
    struct ua_get_endpoints_response resp;
    const struct ua_endpoint_description *e;
    struct ua_string                 profiles[2];
    char                             url[600];

    memset(&req, 0, sizeof(req));
    req.endpoint_url = ua_string_from("opc.tcp://attacker.example:1/");
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_GETENDPOINTSREQUEST, &req,
                              UA_TYPE_GETENDPOINTSRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_endpoints, 1);
    e = &resp.endpoints[0];
    snprintf(url, sizeof(url), "opc.tcp://%s:%u", fx.w.conf->hostname,
             fx.w.conf->port);
    ck_assert(ua_string_eq(&e->endpoint_url, url));
    ck_assert(ua_string_eq(&e->server.application_uri,
                           fx.w.conf->application_uri));
    ck_assert(ua_string_eq(&e->server.product_uri, "urn:uabroker"));
    ck_assert(ua_string_eq(&e->server.application_name.text, "uabroker"));
    ck_assert_int_eq(e->server.application_type,
                     UA_APPLICATIONTYPE_SERVER);
    ck_assert_int_eq(e->server.n_discovery_urls, 1);
    ck_assert(ua_string_eq(&e->server.discovery_urls[0], url));
    ck_assert_int_eq(e->server_certificate.len, -1);
    ck_assert_int_eq(e->security_mode, UA_MESSAGESECURITYMODE_NONE);
    ck_assert(ua_string_eq(&e->security_policy_uri,
                           "http://opcfoundation.org/UA/SecurityPolicy#None"));
    ck_assert_int_eq(e->n_user_identity_tokens, 1);
    ck_assert(ua_string_eq(&e->user_identity_tokens[0].policy_id,
                           "anonymous"));
    ck_assert_int_eq(e->user_identity_tokens[0].token_type,
                     UA_USERTOKENTYPE_ANONYMOUS);
    ck_assert(ua_string_eq(&e->transport_profile_uri,
        "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary"));
    ck_assert_uint_eq(e->security_level, 0);

    /* profileUris filter. */
    profiles[0] = ua_string_from("http://opcfoundation.org/UA-Profile/"
                                 "Transport/https-uabinary");
    profiles[1] = ua_string_from("http://opcfoundation.org/UA-Profile/"
                                 "Transport/uatcp-uasc-uabinary");
    req.n_profile_uris = 1;
    req.profile_uris = profiles;
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_GETENDPOINTSREQUEST, &req,
                              UA_TYPE_GETENDPOINTSRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_endpoints, 0);
    req.n_profile_uris = 2;
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_GETENDPOINTSREQUEST, &req,
                              UA_TYPE_GETENDPOINTSRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_endpoints, 1);
}
END_TEST

static void
tweak_v6(struct shm_config *c)
{
    snprintf(c->hostname, sizeof(c->hostname), "fe80::1");
    c->port = 4841;
}

START_TEST(test_endpoint_url_v6)
{
    struct ua_get_endpoints_request  req;
    struct ua_get_endpoints_response resp;

    fx_teardown();
    fx_setup_with(tweak_v6);
    memset(&req, 0, sizeof(req));
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_GETENDPOINTSREQUEST, &req,
                              UA_TYPE_GETENDPOINTSRESPONSE, &resp), UA_GOOD);
    ck_assert(ua_string_eq(&resp.endpoints[0].endpoint_url,
                           "opc.tcp://[fe80::1]:4841"));
}
END_TEST

START_TEST(test_find_servers)
{
    struct ua_find_servers_request  req;
    struct ua_find_servers_response resp;
    struct ua_string                uris[2];

    memset(&req, 0, sizeof(req));
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_FINDSERVERSREQUEST, &req,
                              UA_TYPE_FINDSERVERSRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_servers, 1);
    ck_assert(ua_string_eq(&resp.servers[0].application_uri,
                           fx.w.conf->application_uri));
    ck_assert_int_eq(resp.servers[0].n_discovery_urls, 1);
    uris[0] = ua_string_from("urn:someone:else");
    uris[1] = ua_string_from(fx.w.conf->application_uri);
    req.n_server_uris = 1;
    req.server_uris = uris;
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_FINDSERVERSREQUEST, &req,
                              UA_TYPE_FINDSERVERSRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_servers, 0);
    req.n_server_uris = 2;
    ck_assert_uint_eq(fx_call(CH_A, NULL, UA_TYPE_FINDSERVERSREQUEST, &req,
                              UA_TYPE_FINDSERVERSRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_servers, 1);
}
END_TEST

static Suite *
svc_discovery_suite(void)
{
    Suite *s = suite_create("worker/svc_discovery");
    TCase *tc = tcase_create("discovery");

    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_get_endpoints);
    tcase_add_test(tc, test_endpoint_url_v6);
    tcase_add_test(tc, test_find_servers);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_discovery_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
