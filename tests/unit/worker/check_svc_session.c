/*
 * tests/unit/worker/check_svc_session.c: worker/svc_session.c through
 * wk_svc_dispatch, with requests encoded as a channel delivers them
 * (tests/unit/worker/fixture.h): CreateSession, ActivateSession,
 * CloseSession, Cancel.  docs/security.md cases 45-47, 51-53, 56, 57 are
 * tests here (65: check_svc.c).
 */
#include "fixture.h"

#include <stdatomic.h>

#define CH_A (&fx.ch[0])
#define CH_B (&fx.ch[1])
#define CH_C (&fx.ch[2])

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

/* ActivateSession with user token x. */
static ua_status
activate_with(struct ua_sc *ch, const struct ua_nodeid *token,
              const struct ua_extobj *x,
              struct ua_activate_session_response *resp)
{
    struct ua_activate_session_request req;

    memset(&req, 0, sizeof(req));
    req.client_signature.algorithm.len = -1;
    req.client_signature.signature.len = -1;
    req.user_token_signature.algorithm.len = -1;
    req.user_token_signature.signature.len = -1;
    if (x != NULL)
        req.user_identity_token = *x;
    return fx_call(ch, token, UA_TYPE_ACTIVATESESSIONREQUEST, &req,
                   UA_TYPE_ACTIVATESESSIONRESPONSE, resp);
}

static struct ua_extobj
token_of(int type, void *obj)
{
    struct ua_extobj x;

    memset(&x, 0, sizeof(x));
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[type];
    x.obj = obj;
    x.type_id = ua_nodeid_num(0, ua_types[type].binary_id);
    return x;
}

/* ------------------------------------------------------------ lifecycle */

START_TEST(test_create_activate_close)
{
    struct ua_create_session_response   cs;
    struct ua_activate_session_response as;
    struct ua_nodeid                    token;
    struct wk_session                  *s;
    uint8_t                             nonce1[32];

    ck_assert_uint_eq(fx_create(CH_A, 120000, &cs, &token), UA_GOOD);
    ck_assert_uint_eq(cs.session_id.ns, 1);
    ck_assert_uint_eq(cs.session_id.idtype, UA_IDTYPE_GUID);
    ck_assert_uint_eq(token.ns, 0);
    ck_assert_uint_eq(token.idtype, UA_IDTYPE_GUID);
    ck_assert(!ua_nodeid_equal(&token, &cs.session_id));
    ck_assert(cs.revised_session_timeout == 120000.0);
    ck_assert_int_eq(cs.server_nonce.len, 32);
    memcpy(nonce1, cs.server_nonce.data, 32);
    ck_assert_int_eq(cs.server_certificate.len, -1);
    ck_assert_int_eq(cs.n_server_endpoints, 1);
    ck_assert(ua_string_eq(&cs.server_endpoints[0].security_policy_uri,
                           "http://opcfoundation.org/UA/SecurityPolicy#None"));
    ck_assert_uint_eq(cs.max_request_message_size,
                      fx.w.conf->max_message_size);
    s = wk_session_find_by_token(&fx.w, &token);
    ck_assert_ptr_nonnull(s);
    ck_assert_mem_eq(s->name, "check", 5);
    ck_assert_uint_eq(atomic_load(&fx.w.row->sessions), 1);

    ck_assert_uint_eq(activate_with(CH_A, &token, NULL, &as), UA_GOOD);
    ck_assert_int_eq(as.server_nonce.len, 32);
    ck_assert(memcmp(as.server_nonce.data, nonce1, 32) != 0);
    ck_assert_int_eq(as.n_results, 0);
    ck_assert_uint_eq(read_server_state(CH_A, &token), UA_GOOD);

    ck_assert_uint_eq(close_session(CH_A, &token), UA_GOOD);
    ck_assert_uint_eq(atomic_load(&fx.w.row->sessions), 0);
    /* CloseSession twice (docs/security.md case 57), and any other use. */
    ck_assert_uint_eq(close_session(CH_A, &token),
                      UA_BAD_SESSION_ID_INVALID);
    ck_assert_uint_eq(read_server_state(CH_A, &token),
                      UA_BAD_SESSION_ID_INVALID);
}
END_TEST

START_TEST(test_close_never_existed)
{
    struct ua_nodeid t = { .ns = 0, .idtype = UA_IDTYPE_GUID };

    ck_assert_uint_eq(close_session(CH_A, &t), UA_BAD_SESSION_ID_INVALID);
    t = fx_ns0(0);
    ck_assert_uint_eq(close_session(CH_A, &t), UA_BAD_SESSION_ID_INVALID);
    ck_assert_uint_eq(read_server_state(CH_A, &t),
                      UA_BAD_SESSION_ID_INVALID);
}
END_TEST

START_TEST(test_close_unactivated)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  token;

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &token), UA_GOOD);
    ck_assert_uint_eq(close_session(CH_A, &token), UA_GOOD);
    ck_assert_uint_eq(fx.w.nsessions, 0);
}
END_TEST

/* ------------------------------------------------------------ binding */

START_TEST(test_hijack_other_channel)
{
    struct ua_nodeid   token = fx_session(CH_A);
    struct wk_session *s = wk_session_find_by_token(&fx.w, &token);

    /* docs/security.md case 46: the token on channel B. */
    ck_assert_uint_eq(read_server_state(CH_B, &token),
                      UA_BAD_SECURE_CHANNEL_ID_INVALID);
    ck_assert_uint_eq(close_session(CH_B, &token),
                      UA_BAD_SECURE_CHANNEL_ID_INVALID);
    ck_assert_uint_eq(s->unauthorized, 2);
    /* The session on A is untouched. */
    ck_assert(s->used);
    ck_assert_uint_eq(s->channel_id, CH_A->channel_id);
    ck_assert_uint_eq(read_server_state(CH_A, &token), UA_GOOD);
}
END_TEST

START_TEST(test_first_activate_other_channel)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  token;
    struct wk_session                *s;

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &token), UA_GOOD);
    s = wk_session_find_by_token(&fx.w, &token);
    /* docs/security.md case 47 */
    ck_assert_uint_eq(fx_activate(CH_B, &token), UA_BAD_SESSION_ID_INVALID);
    ck_assert(!s->activated);
    ck_assert_uint_eq(s->unauthorized, 1);
    /* Still usable from its own channel. */
    ck_assert_uint_eq(fx_activate(CH_A, &token), UA_GOOD);
    ck_assert_uint_eq(read_server_state(CH_A, &token), UA_GOOD);
}
END_TEST

START_TEST(test_rebind_after_channel_loss)
{
    struct ua_nodeid   token = fx_session(CH_A);
    struct wk_session *s = wk_session_find_by_token(&fx.w, &token);

    /* The client lost channel A and comes back on C (Part 4 §5.7.3). */
    wk_session_channel_closed(&fx.w, CH_A->channel_id);
    ck_assert(s->used);
    ck_assert_uint_eq(read_server_state(CH_C, &token),
                      UA_BAD_SECURE_CHANNEL_ID_INVALID);
    ck_assert_uint_eq(fx_activate(CH_C, &token), UA_GOOD);
    ck_assert_uint_eq(read_server_state(CH_C, &token), UA_GOOD);
    /* Moving again while C is open is allowed for the same (anonymous)
     * user; afterwards the old channel is refused (docs/security.md case
     * 50). */
    ck_assert_uint_eq(fx_activate(CH_B, &token), UA_GOOD);
    ck_assert_uint_eq(read_server_state(CH_B, &token), UA_GOOD);
    ck_assert_uint_eq(read_server_state(CH_C, &token),
                      UA_BAD_SECURE_CHANNEL_ID_INVALID);
}
END_TEST

START_TEST(test_not_activated)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  token;

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &token), UA_GOOD);
    /* docs/security.md case 51: refused, and the session is closed. */
    ck_assert_uint_eq(read_server_state(CH_A, &token),
                      UA_BAD_SESSION_NOT_ACTIVATED);
    ck_assert_uint_eq(fx.w.nsessions, 0);
    ck_assert_uint_eq(fx_activate(CH_A, &token), UA_BAD_SESSION_ID_INVALID);
}
END_TEST

START_TEST(test_not_activated_other_channel)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  token;

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &token), UA_GOOD);
    /* From another channel it cannot be killed either. */
    ck_assert_uint_eq(read_server_state(CH_B, &token),
                      UA_BAD_SECURE_CHANNEL_ID_INVALID);
    ck_assert_uint_eq(fx.w.nsessions, 1);
    ck_assert_uint_eq(fx_activate(CH_A, &token), UA_GOOD);
}
END_TEST

/* ------------------------------------------------------------ limits */

START_TEST(test_too_many_sessions)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  first, t;
    uint32_t                          max = fx.w.conf->max_sessions;

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &first), UA_GOOD);
    for (uint32_t i = 1; i < max; i++)
        ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &t), UA_GOOD);
    /* docs/security.md case 52, never activated: the oldest gives way
     * to a new CreateSession (issue 19), the rest stay. */
    ck_assert_uint_eq(fx_create(CH_B, 60000, &cs, &t), UA_GOOD);
    ck_assert_uint_eq(fx_activate(CH_A, &first), UA_BAD_SESSION_ID_INVALID);
    ck_assert_uint_eq(fx.w.nsessions, max);
    /* Unactivated sessions time out, so clients recover. */
    fx.w.now_ms += WK_SESSION_ACTIVATE_MS;
    ck_assert_uint_eq(wk_session_expire(&fx.w, fx.w.now_ms), max);
    /* A pool full of activated sessions refuses the next one. */
    for (uint32_t i = 0; i < max; i++) {
        ck_assert_uint_eq(fx_create(CH_B, 60000, &cs, &t), UA_GOOD);
        ck_assert_uint_eq(fx_activate(CH_B, &t), UA_GOOD);
    }
    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &t),
                      UA_BAD_TOO_MANY_SESSIONS);
}
END_TEST

START_TEST(test_timeout_expiry)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  token;

    ck_assert_uint_eq(fx_create(CH_A, 15000, &cs, &token), UA_GOOD);
    ck_assert(cs.revised_session_timeout == 15000.0);
    ck_assert_uint_eq(fx_activate(CH_A, &token), UA_GOOD);
    fx.w.now_ms += 14000;
    ck_assert_uint_eq(read_server_state(CH_A, &token), UA_GOOD);
    fx.w.now_ms += 14000;           /* 28 s after creation, 14 s idle */
    ck_assert_uint_eq(wk_session_expire(&fx.w, fx.w.now_ms), 0);
    fx.w.now_ms += 1000;
    ck_assert_uint_eq(wk_session_expire(&fx.w, fx.w.now_ms), 1);
    ck_assert_uint_eq(read_server_state(CH_A, &token),
                      UA_BAD_SESSION_ID_INVALID);
}
END_TEST

START_TEST(test_revised_timeouts)
{
    static const double req[] = { 0, -1, NAN, INFINITY, 1e308, 1, 30000 };
    static const double want[] = { 3600000, 3600000, 3600000, 3600000,
                                   3600000, 10000, 30000 };
    struct ua_create_session_response cs;

    for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
        ck_assert_uint_eq(fx_create(CH_A, req[i], &cs, NULL), UA_GOOD);
        ck_assert_msg(cs.revised_session_timeout == want[i],
                      "requested %g: revised %g", req[i],
                      cs.revised_session_timeout);
    }
}
END_TEST

static ua_status
create_with_nonce(int32_t len)
{
    struct ua_create_session_request  req;
    struct ua_create_session_response resp;
    static uint8_t                    bytes[256];

    memset(&req, 0, sizeof(req));
    memset(bytes, 0xA5, sizeof(bytes));
    req.client_nonce.len = len;
    req.client_nonce.data = len > 0 ? bytes : NULL;
    req.client_certificate.len = -1;
    req.requested_session_timeout = 60000;
    return fx_call(CH_A, NULL, UA_TYPE_CREATESESSIONREQUEST, &req,
                   UA_TYPE_CREATESESSIONRESPONSE, &resp);
}

START_TEST(test_client_nonce)
{
    /* docs/security.md case 45 */
    ck_assert_uint_eq(create_with_nonce(31), UA_BAD_NONCE_INVALID);
    ck_assert_uint_eq(create_with_nonce(129), UA_BAD_NONCE_INVALID);
    ck_assert_uint_eq(create_with_nonce(1), UA_BAD_NONCE_INVALID);
    ck_assert_uint_eq(fx.w.nsessions, 0);
    ck_assert_uint_eq(create_with_nonce(32), UA_GOOD);
    ck_assert_uint_eq(create_with_nonce(128), UA_GOOD);
    /* A None channel may go without. */
    ck_assert_uint_eq(create_with_nonce(0), UA_GOOD);
    ck_assert_uint_eq(create_with_nonce(-1), UA_GOOD);
}
END_TEST

/* ------------------------------------------------------------ identity */

START_TEST(test_identity_tokens)
{
    struct ua_create_session_response   cs;
    struct ua_activate_session_response as;
    struct ua_nodeid                    token;
    struct ua_anonymous_identity_token  anon;
    struct ua_user_name_identity_token  user;
    struct ua_x509_identity_token       x509;
    struct ua_extobj                    x;
    static uint8_t                      junk[4] = { 1, 2, 3, 4 };

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &token), UA_GOOD);

    memset(&user, 0, sizeof(user));
    user.policy_id = ua_string_from("username");
    user.user_name = ua_string_from("root");
    user.password = ua_string_from("secret");
    user.encryption_algorithm.len = -1;
    x = token_of(UA_TYPE_USERNAMEIDENTITYTOKEN, &user);
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as),
                      UA_BAD_IDENTITY_TOKEN_REJECTED);
    memset(&x509, 0, sizeof(x509));
    x509.policy_id = ua_string_from("x509");
    x509.certificate_data = ua_string_from("not a certificate");
    x = token_of(UA_TYPE_X509IDENTITYTOKEN, &x509);
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as),
                      UA_BAD_IDENTITY_TOKEN_REJECTED);
    /* An Anonymous token naming a policy we do not offer. */
    anon.policy_id = ua_string_from("Anonymous_Policy_Nope");
    x = token_of(UA_TYPE_ANONYMOUSIDENTITYTOKEN, &anon);
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as),
                      UA_BAD_IDENTITY_TOKEN_INVALID);
    /* Not a token at all: a known structure, and opaque bytes. */
    x = token_of(UA_TYPE_BUILDINFO,
                 &(struct ua_build_info){ .product_uri.len = -1 });
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as),
                      UA_BAD_IDENTITY_TOKEN_INVALID);
    memset(&x, 0, sizeof(x));
    x.encoding = UA_EO_BYTES;
    x.type_id = ua_nodeid_num(0, 99999);
    x.body.len = 4;
    x.body.data = junk;
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as),
                      UA_BAD_IDENTITY_TOKEN_INVALID);
    ck_assert(!wk_session_find_by_token(&fx.w, &token)->activated);

    /* Our policy, and the empty policyId of older clients. */
    anon.policy_id = ua_string_from("anonymous");
    x = token_of(UA_TYPE_ANONYMOUSIDENTITYTOKEN, &anon);
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as), UA_GOOD);
    anon.policy_id.len = -1;
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as), UA_GOOD);
    /* A body-less AnonymousIdentityToken. */
    memset(&x, 0, sizeof(x));
    x.type_id = ua_nodeid_num(
        0, UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY);
    ck_assert_uint_eq(activate_with(CH_A, &token, &x, &as), UA_GOOD);
}
END_TEST

START_TEST(test_software_certificates)
{
    struct ua_create_session_response      cs;
    struct ua_activate_session_response    as;
    struct ua_activate_session_request     req;
    struct ua_signed_software_certificate  sw[2];
    struct ua_nodeid                       token;

    ck_assert_uint_eq(fx_create(CH_A, 60000, &cs, &token), UA_GOOD);
    memset(&req, 0, sizeof(req));
    memset(sw, 0, sizeof(sw));
    req.n_client_software_certificates = 2;
    req.client_software_certificates = sw;
    ck_assert_uint_eq(fx_call(CH_A, &token, UA_TYPE_ACTIVATESESSIONREQUEST,
                              &req, UA_TYPE_ACTIVATESESSIONRESPONSE, &as),
                      UA_GOOD);
    ck_assert_int_eq(as.n_results, 2);
    ck_assert_uint_eq(as.results[0], UA_GOOD);
}
END_TEST

START_TEST(test_cancel)
{
    struct ua_nodeid           token = fx_session(CH_A);
    struct ua_cancel_request   req;
    struct ua_cancel_response  resp;

    memset(&req, 0, sizeof(req));
    req.request_handle = 77;
    ck_assert_uint_eq(fx_call(CH_A, &token, UA_TYPE_CANCELREQUEST, &req,
                              UA_TYPE_CANCELRESPONSE, &resp), UA_GOOD);
    ck_assert_uint_eq(resp.cancel_count, 0);
}
END_TEST

static Suite *
svc_session_suite(void)
{
    Suite *s = suite_create("worker/svc_session");
    TCase *tc;

    tc = tcase_create("lifecycle");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_create_activate_close);
    tcase_add_test(tc, test_close_never_existed);
    tcase_add_test(tc, test_close_unactivated);
    tcase_add_test(tc, test_cancel);
    suite_add_tcase(s, tc);

    tc = tcase_create("binding");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_hijack_other_channel);
    tcase_add_test(tc, test_first_activate_other_channel);
    tcase_add_test(tc, test_rebind_after_channel_loss);
    tcase_add_test(tc, test_not_activated);
    tcase_add_test(tc, test_not_activated_other_channel);
    suite_add_tcase(s, tc);

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_too_many_sessions);
    tcase_add_test(tc, test_timeout_expiry);
    tcase_add_test(tc, test_revised_timeouts);
    tcase_add_test(tc, test_client_nonce);
    suite_add_tcase(s, tc);

    tc = tcase_create("identity");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_identity_tokens);
    tcase_add_test(tc, test_software_certificates);
    suite_add_tcase(s, tc);

    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_session_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
