/*
 * tests/unit/proto/check_sc_stage.c: a secured OpenSecureChannel is done
 * in steps of at most one RSA private-key operation (docs/architecture.md
 * §4), so the worker can serve its other channels between them.
 *
 * The server state machine (proto/securechannel.c) is driven with the
 * bytes of the real client (proto/client.c), in memory: ua_sc_process()
 * takes the OPN chunk, then ua_sc_resume() is called while ua_sc_busy().
 * ua_crypto_private_ops() counts RSA signatures and decrypted blocks: every
 * call must add at most one, the whole OPN as many as its ciphertext
 * blocks plus the one signature, and the channel must be open at the end
 * (a Read round trip proves its keys).  Also: a Renew is staged the same
 * way; a refused certificate costs no private operation; a block that
 * fails to decrypt still takes every step and ends in
 * BadSecurityChecksFailed; a busy channel takes no other chunk; clearing a
 * channel mid-OPN leaves nothing behind.
 *
 * Keys: the committed test PKI (pki/pki_gen.h), server `app` (RSA 2048),
 * clients `app` and `rsa3072` (a longer signature: one block more).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/client.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/unit/proto/pki/pki_gen.h"

#define ST_BUF     (1u << 17)
#define ST_ASM     (1u << 18)
#define ST_CHUNK   8192
#define ST_TIMEOUT 60

enum st_id {
    ST_APP = 0,             /* RSA 2048 */
    ST_3072,                /* RSA 3072 */
    ST_NID
};

struct st_h {
    struct ua_sc_config       cfg;
    struct ua_sc              ch;
    struct ua_client_config   ccfg;
    struct ua_client          cl;
    struct ua_client_security sec;
    struct ua_crypto_key      key[ST_NID];
    bool                      trust;
    int64_t                   now_dt;
    uint64_t                  now;
    struct ua_sc_out          sout;
    struct ua_sc_out          cout;
    struct ua_sc_msg          msg;
    struct ua_client_event    ev;
    struct ua_arena           arena;
    uint8_t                   sbuf[ST_BUF];
    uint8_t                   cbuf[ST_BUF];
    uint8_t                   casm[ST_ASM];
    uint8_t                   abuf[ST_ASM];
};

static struct st_h *h;

static const uint8_t *const st_cert[ST_NID] = { pki_app_der,
                                                pki_rsa3072_der };
static const size_t st_cert_len[ST_NID] = { sizeof(pki_app_der),
                                            sizeof(pki_rsa3072_der) };

/* Policy x mode x client key: the blocks of an OPN request differ. */
static const struct {
    uint8_t policy;
    uint8_t mode;
    uint8_t client;
} st_matrix[] = {
    { UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
      ST_APP },
    { UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGN, ST_3072 },
    { UA_POLICY_AES128_SHA256_RSAOAEP, UA_MESSAGESECURITYMODE_SIGN,
      ST_APP },
    { UA_POLICY_AES256_SHA256_RSAPSS, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
      ST_3072 },
};
#define ST_NMATRIX (sizeof(st_matrix) / sizeof(st_matrix[0]))

static void *st_alloc(void *ctx, size_t n);
static void st_free(void *ctx, void *p);
static ua_status st_validate(void *ctx, const uint8_t *chain, size_t len,
                             const struct ua_policy *p);
static void st_setup(void);
static void st_teardown(void);
static void st_init(unsigned policy, uint8_t mode, enum st_id client);
static ua_status st_to_server(unsigned *steps, uint64_t *ops);
static ua_status st_to_client(void);
static void st_hello(void);
static void st_roundtrip(void);

/* ------------------------------------------------------------ harness */

static void *
st_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}

static void
st_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

/* Trust the two test certificates, or nothing (h->trust false). */
static ua_status
st_validate(void *ctx, const uint8_t *chain, size_t len,
            const struct ua_policy *p)
{
    (void)ctx;
    (void)p;
    if (!h->trust)
        return UA_BAD_CERTIFICATE_UNTRUSTED;
    for (int i = 0; i < ST_NID; i++)
        if (len >= st_cert_len[i]
            && memcmp(chain, st_cert[i], st_cert_len[i]) == 0)
            return UA_GOOD;
    return UA_BAD_CERTIFICATE_UNTRUSTED;
}

static void
st_setup(void)
{
    h = calloc(1, sizeof(*h));
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(ua_crypto_init(), UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_load(&h->key[ST_APP], pki_app_key_der,
                                         sizeof(pki_app_key_der)), UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_load(&h->key[ST_3072],
                                         pki_rsa3072_key_der,
                                         sizeof(pki_rsa3072_key_der)),
                      UA_GOOD);
}

static void
st_teardown(void)
{
    ua_sc_clear(&h->ch);
    ua_client_clear(&h->cl);
    for (int i = 0; i < ST_NID; i++)
        ua_crypto_key_clear(&h->key[i]);
    free(h);
    h = NULL;
}

/* Server `app` offering every current policy x mode; the client asks for
 * policy/mode with its certificate and key. */
static void
st_init(unsigned policy, uint8_t mode, enum st_id client)
{
    struct ua_sc_mem mem = { st_alloc, st_free, NULL };

    ua_sc_clear(&h->ch);
    ua_client_clear(&h->cl);
    memset(&h->cfg, 0, sizeof(h->cfg));
    h->cfg.recv_buffer = ST_CHUNK;
    h->cfg.send_buffer = ST_CHUNK;
    h->cfg.max_message = 1 << 20;
    h->cfg.max_chunks = 64;
    h->cfg.min_lifetime_ms = 1000;
    h->cfg.max_lifetime_ms = 3600000;
    h->cfg.limits = ua_limits_default;
    h->now_dt = 132000000000000000LL;
    h->cfg.now_dt = &h->now_dt;
    for (unsigned p = UA_POLICY_BASIC256SHA256; p < UA_POLICY_COUNT; p++) {
        h->cfg.offers |= UA_SC_OFFER(p, UA_MESSAGESECURITYMODE_SIGN);
        h->cfg.offers |= UA_SC_OFFER(p, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    }
    h->cfg.cert = pki_app_der;
    h->cfg.cert_len = sizeof(pki_app_der);
    h->cfg.key = &h->key[ST_APP];
    h->cfg.validate = st_validate;
    h->trust = true;
    h->now = 5000;
    ua_sc_init(&h->ch, &h->cfg, &mem, 42);

    h->ccfg = ua_client_config_default;
    ua_client_init(&h->cl, &h->ccfg, h->casm, ST_ASM);
    memset(&h->sec, 0, sizeof(h->sec));
    h->sec.policy = ua_crypto_policy_get(policy);
    h->sec.mode = mode;
    h->sec.cert = st_cert[client];
    h->sec.cert_len = st_cert_len[client];
    h->sec.key = &h->key[client];
    h->sec.server_cert = pki_app_der;
    h->sec.server_cert_len = sizeof(pki_app_der);
    ck_assert_uint_eq(ua_client_set_security(&h->cl, &h->sec), UA_GOOD);
    h->sout = (struct ua_sc_out){ h->sbuf, sizeof(h->sbuf), 0 };
    h->cout = (struct ua_sc_out){ h->cbuf, sizeof(h->cbuf), 0 };
    ua_arena_init(&h->arena, h->abuf, sizeof(h->abuf));
}

/*
 * Everything the client wrote into the server, a staged OPN step by step
 * as the worker runs it: each call (process or resume) may do at most one
 * private-key operation, and nothing leaves before the last step.  *steps
 * = calls for the last chunk, *ops = private operations in all.
 */
static ua_status
st_to_server(unsigned *steps, uint64_t *ops)
{
    uint8_t *p = h->cbuf;
    size_t   n = h->cout.len;
    uint64_t o0 = ua_crypto_private_ops(), before;

    h->cout.len = 0;
    while (n > 0) {
        uint32_t  chunk;
        size_t    out0 = h->sout.len;
        ua_status s = ua_sc_frame(&h->ch, p, n, &chunk);

        if (s != UA_GOOD)
            return s;
        ck_assert_uint_ne(chunk, 0);
        ck_assert_uint_le(chunk, n);
        before = ua_crypto_private_ops();
        s = ua_sc_process(&h->ch, p, chunk, h->now, &h->sout, &h->msg);
        ck_assert_uint_le(ua_crypto_private_ops() - before, 1);
        *steps = 1;
        while (s == UA_GOOD && ua_sc_busy(&h->ch)) {
            /* Between steps: nothing sent yet, the channel unchanged. */
            ck_assert_uint_eq(h->sout.len, out0);
            ck_assert_uint_eq(h->msg.len, 0);
            before = ua_crypto_private_ops();
            s = ua_sc_resume(&h->ch, h->now, &h->sout);
            ck_assert_uint_le(ua_crypto_private_ops() - before, 1);
            (*steps)++;
        }
        if (s != UA_GOOD) {
            ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
            ck_assert(!ua_sc_busy(&h->ch));
            *ops = ua_crypto_private_ops() - o0;
            return s;
        }
        p += chunk;
        n -= chunk;
    }
    *ops = ua_crypto_private_ops() - o0;
    return UA_GOOD;
}

static ua_status
st_to_client(void)
{
    uint8_t *p = h->sbuf;
    size_t   n = h->sout.len;

    h->sout.len = 0;
    while (n > 0) {
        struct ua_client_event ev;
        uint32_t               chunk;
        ua_status              s = ua_client_frame(&h->cl, p, n, &chunk);

        if (s != UA_GOOD)
            return s;
        ck_assert_uint_ne(chunk, 0);
        ck_assert_uint_le(chunk, n);
        s = ua_client_process(&h->cl, p, chunk, h->now, &ev);
        if (ev.kind != UA_CLIENT_EV_NONE)
            h->ev = ev;
        if (s != UA_GOOD)
            return s;
        p += chunk;
        n -= chunk;
    }
    return UA_GOOD;
}

static void
st_hello(void)
{
    unsigned steps;
    uint64_t ops;

    ck_assert_uint_eq(ua_client_hello(&h->cl, "opc.tcp://h:4840", &h->cout),
                      UA_GOOD);
    ck_assert_uint_eq(st_to_server(&steps, &ops), UA_GOOD);
    ck_assert_uint_eq(ops, 0);
    ck_assert_uint_eq(st_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_ACKED);
}

/* The ciphertext blocks of the OPN chunk the client wrote (the server's
 * key is 2048 bits: 256-byte blocks after the asymmetric header). */
static size_t
st_blocks(void)
{
    struct ua_sc_asym_hdr ah;

    ck_assert_uint_eq(ua_sc_asym_parse(h->cbuf, h->cout.len, &ah), UA_GOOD);
    ck_assert_uint_eq((h->cout.len - ah.end) % 256, 0);
    return (h->cout.len - ah.end) / 256;
}

/* A Read and its response through the open channel. */
static void
st_roundtrip(void)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response r;
    unsigned                steps;
    uint64_t                ops;
    uint32_t                id;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_num(0, 2258);
    rv.attribute_id = 13;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        &id, &h->cout), UA_GOOD);
    ck_assert_uint_eq(st_to_server(&steps, &ops), UA_GOOD);
    ck_assert_uint_eq(ops, 0);          /* the symmetric path: no RSA */
    ck_assert_uint_eq(steps, 1);
    ck_assert_uint_eq(h->msg.request_id, id);
    memset(&r, 0, sizeof(r));
    r.response_header.request_handle = 1;
    r.n_results = 0;
    r.n_diagnostic_infos = -1;
    ck_assert_uint_eq(ua_sc_send(&h->ch, id, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(st_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_uint_eq(h->ev.request_id, id);
}

/* ------------------------------------------------------------ tests */

/* Issue: one private operation per step, blocks + 1 in all, open after. */
START_TEST(test_issue_steps)
{
    unsigned steps = 0;
    uint64_t ops = 0;
    size_t   blocks;

    st_init(st_matrix[_i].policy, st_matrix[_i].mode, st_matrix[_i].client);
    st_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    blocks = st_blocks();
    ck_assert_uint_ge(blocks, 2);       /* the inline code did > 1 at once */
    ck_assert_uint_eq(st_to_server(&steps, &ops), UA_GOOD);
    ck_assert_uint_eq(ops, blocks + 1);     /* decrypt each, sign once */
    ck_assert_uint_eq(steps, blocks + 1);
    ck_assert(!ua_sc_busy(&h->ch));
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
    ck_assert_uint_eq(h->ch.mode, st_matrix[_i].mode);
    ck_assert_uint_eq(st_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_OPEN);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_OPEN);
    st_roundtrip();
}
END_TEST

/* Renew: staged the same way; the new token works afterwards. */
START_TEST(test_renew_steps)
{
    unsigned steps = 0;
    uint64_t ops = 0;
    uint32_t token;
    size_t   blocks;

    st_init(UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
            ST_APP);
    st_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(st_to_server(&steps, &ops), UA_GOOD);
    ck_assert_uint_eq(st_to_client(), UA_GOOD);
    token = h->ch.token_id;
    h->now += 10000;
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_GOOD);
    blocks = st_blocks();
    ck_assert_uint_eq(st_to_server(&steps, &ops), UA_GOOD);
    ck_assert_uint_eq(ops, blocks + 1);
    ck_assert_uint_eq(steps, blocks + 1);
    ck_assert_uint_ne(h->ch.token_id, token);
    ck_assert_uint_eq(st_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_OPEN);
    st_roundtrip();
}
END_TEST

/* An untrusted sender is refused by the first call, before any private
 * operation (the cheap checks come first). */
START_TEST(test_untrusted_free)
{
    unsigned steps = 0;
    uint64_t ops = 99;

    st_init(UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
            ST_APP);
    st_hello();
    h->trust = false;
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(st_to_server(&steps, &ops),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ops, 0);
    ck_assert_uint_eq(steps, 1);
    ck_assert_uint_eq(h->ch.detail, UA_BAD_CERTIFICATE_UNTRUSTED);
}
END_TEST

/* A corrupted first block: every block is still decrypted, one per step,
 * and only then BadSecurityChecksFailed (no shortcut to time). */
START_TEST(test_bad_block_same_steps)
{
    struct ua_sc_asym_hdr ah;
    unsigned              steps = 0;
    uint64_t              ops = 0;
    size_t                blocks;

    st_init(UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
            ST_APP);
    st_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    blocks = st_blocks();
    ck_assert_uint_eq(ua_sc_asym_parse(h->cbuf, h->cout.len, &ah), UA_GOOD);
    h->cbuf[ah.end + 10] ^= 0x55;
    ck_assert_uint_eq(st_to_server(&steps, &ops),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ops, blocks);
    ck_assert_uint_eq(steps, blocks);
    ck_assert_uint_eq(h->sout.len, 0);
}
END_TEST

/* While busy the channel takes no chunk; ua_sc_resume() without a staged
 * OPN is refused; clearing mid-OPN leaves the channel idle. */
START_TEST(test_busy_rules)
{
    uint8_t   copy[ST_CHUNK];
    size_t    n;
    ua_status s;

    st_init(UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
            ST_APP);
    st_hello();
    ck_assert_uint_eq(ua_sc_resume(&h->ch, h->now, &h->sout),
                      UA_BAD_INTERNAL_ERROR);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);

    /* A fresh channel: OPN, first step only, then clear. */
    st_init(UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
            ST_APP);
    st_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    n = h->cout.len;
    ck_assert_uint_le(n, sizeof(copy));
    memcpy(copy, h->cbuf, n);
    s = ua_sc_process(&h->ch, h->cbuf, n, h->now, &h->sout, &h->msg);
    ck_assert_uint_eq(s, UA_GOOD);
    ck_assert(ua_sc_busy(&h->ch));
    ck_assert_uint_eq(h->ch.state, UA_SC_ACKED);
    ck_assert_uint_eq(h->sout.len, 0);
    /* Another chunk now is a caller bug: refused, channel closed. */
    s = ua_sc_process(&h->ch, copy, n, h->now, &h->sout, &h->msg);
    ck_assert_uint_eq(s, UA_BAD_INTERNAL_ERROR);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    ck_assert(!ua_sc_busy(&h->ch));

    /* Cleared mid-OPN: nothing staged, the client nonce wiped. */
    st_init(UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
            ST_APP);
    st_hello();
    memcpy(h->cbuf, copy, n);
    s = ua_sc_process(&h->ch, h->cbuf, n, h->now, &h->sout, &h->msg);
    ck_assert_uint_eq(s, UA_GOOD);
    ck_assert(ua_sc_busy(&h->ch));
    ua_sc_clear(&h->ch);
    ck_assert(!ua_sc_busy(&h->ch));
    ck_assert_ptr_null(h->ch.opn.chunk);
}
END_TEST

static Suite *
st_suite(void)
{
    Suite *s = suite_create("Staged OpenSecureChannel");
    TCase *tc;

    tc = tcase_create("issue: one private-key operation per step");
    tcase_add_checked_fixture(tc, st_setup, st_teardown);
    tcase_set_timeout(tc, ST_TIMEOUT);
    tcase_add_loop_test(tc, test_issue_steps, 0, (int)ST_NMATRIX);
    suite_add_tcase(s, tc);

    tc = tcase_create("renew: staged alike");
    tcase_add_checked_fixture(tc, st_setup, st_teardown);
    tcase_set_timeout(tc, ST_TIMEOUT);
    tcase_add_test(tc, test_renew_steps);
    suite_add_tcase(s, tc);

    tc = tcase_create("refusals: none or every step");
    tcase_add_checked_fixture(tc, st_setup, st_teardown);
    tcase_set_timeout(tc, ST_TIMEOUT);
    tcase_add_test(tc, test_untrusted_free);
    tcase_add_test(tc, test_bad_block_same_steps);
    suite_add_tcase(s, tc);

    tc = tcase_create("busy channel");
    tcase_add_checked_fixture(tc, st_setup, st_teardown);
    tcase_set_timeout(tc, ST_TIMEOUT);
    tcase_add_test(tc, test_busy_rules);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(st_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
