/*
 * tests/bench/bench_sc_security.c: what message security costs the server,
 * measured on the state machines in memory (no sockets, no worker):
 *
 *   - per request of a Read of one node: the server's ua_sc_process() of
 *     the request chunk (decrypt + verify, or verify) plus ua_sc_send() of
 *     the response chunk (sign + encrypt), for None and every RSA policy x
 *     Sign / SignAndEncrypt;
 *   - per OpenSecureChannel: the server's ua_sc_process() of an Issue
 *     (certificate checks, RSA decrypt, verify, sign, encrypt, key
 *     derivation) with a validate hook that trusts everything, the same
 *     with proto/cert.c's ua_cert_validate() as the hook, and the client's
 *     side of the handshake.
 *
 *   make bench-security [BENCH_ARGS="<round trips> <handshakes>"]
 *
 * Keys: the test PKI's `app` (RSA 2048) on both sides
 * (tests/unit/proto/pki/pki_gen.h).  Only the server calls are timed; the
 * client makes the requests and checks the responses in between.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/cert.h"
#include "proto/client.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/bench/benchlib.h"
#include "tests/unit/proto/pki/pki_gen.h"

#define BS_BUF (1u << 17)

struct bs {
    struct ua_sc_config       cfg;
    struct ua_sc              ch;
    struct ua_client          cl;
    struct ua_client_security sec;
    struct ua_crypto_key      key;
    struct ua_cert_der        trusted;
    struct ua_cert_store      store;
    bool                      cert_hook;
    int64_t                   now_dt;
    struct ua_sc_out          sout, cout;
    uint8_t                   sbuf[BS_BUF], cbuf[BS_BUF];
    uint8_t                   casm[BS_BUF];
    uint8_t                   abuf[1u << 16];
};

static struct bs b;

static ua_status bs_validate(void *ctx, const uint8_t *chain, size_t len,
                             const struct ua_policy *p);
static void bs_die(const char *what, ua_status s);
static double bs_now(void);
static void bs_init(unsigned policy, uint8_t mode);
static double bs_to_server(struct ua_sc_msg *msg);
static void bs_to_client(struct ua_client_event *ev);
static double bs_open(void);
static void bs_roundtrips(unsigned policy, uint8_t mode, unsigned n);
static void bs_handshakes(unsigned n, bool cert_hook);

static ua_status
bs_validate(void *ctx, const uint8_t *chain, size_t len,
            const struct ua_policy *p)
{
    struct ua_cert_check chk;

    (void)ctx;
    if (!b.cert_hook)
        return UA_GOOD;
    ua_cert_check_init(&chk, p, PKI_NOW);
    return ua_cert_validate(chain, len, &b.store, &chk, NULL);
}

static void
bs_die(const char *what, ua_status s)
{
    fprintf(stderr, "bench_sc_security: %s: 0x%08x\n", what, (unsigned)s);
    exit(1);
}

/* CLOCK_MONOTONIC in µs. */
static double
bs_now(void)
{
    return (double)benchlib_now() / 1e3;
}

static void
bs_init(unsigned policy, uint8_t mode)
{
    ua_sc_clear(&b.ch);
    ua_client_clear(&b.cl);
    memset(&b.cfg, 0, sizeof(b.cfg));
    b.cfg.recv_buffer = b.cfg.send_buffer = 65536;
    b.cfg.max_message = 1 << 20;
    b.cfg.max_chunks = 64;
    b.cfg.min_lifetime_ms = 1000;
    b.cfg.max_lifetime_ms = 3600000;
    b.cfg.limits = ua_limits_default;
    b.cfg.now_dt = &b.now_dt;
    b.cfg.offers = UA_SC_OFFER(UA_POLICY_NONE, UA_MESSAGESECURITYMODE_NONE);
    for (unsigned p = UA_POLICY_BASIC256SHA256; p < UA_POLICY_COUNT; p++)
        b.cfg.offers |= UA_SC_OFFER(p, UA_MESSAGESECURITYMODE_SIGN)
                        | UA_SC_OFFER(p, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    b.cfg.cert = pki_app_der;
    b.cfg.cert_len = sizeof(pki_app_der);
    b.cfg.key = &b.key;
    b.cfg.validate = bs_validate;
    ua_sc_init(&b.ch, &b.cfg, NULL, 42);
    ua_client_init(&b.cl, NULL, b.casm, sizeof(b.casm));
    memset(&b.sec, 0, sizeof(b.sec));
    b.sec.policy = ua_crypto_policy_get(policy);
    b.sec.mode = mode;
    b.sec.cert = pki_app_der;
    b.sec.cert_len = sizeof(pki_app_der);
    b.sec.key = &b.key;
    b.sec.server_cert = pki_app_der;
    b.sec.server_cert_len = sizeof(pki_app_der);
    if (ua_client_set_security(&b.cl, &b.sec) != UA_GOOD)
        bs_die("ua_client_set_security", UA_BAD_INTERNAL_ERROR);
    b.sout = (struct ua_sc_out){ b.sbuf, sizeof(b.sbuf), 0 };
    b.cout = (struct ua_sc_out){ b.cbuf, sizeof(b.cbuf), 0 };
}

/* The client's bytes through the server; the µs the server took. */
static double
bs_to_server(struct ua_sc_msg *msg)
{
    uint8_t  *p = b.cbuf;
    size_t    n = b.cout.len;
    double    t = 0, t0;
    uint32_t  chunk;
    ua_status s;

    b.cout.len = 0;
    while (n > 0) {
        s = ua_sc_frame(&b.ch, p, n, &chunk);
        if (s != UA_GOOD || chunk == 0 || chunk > n)
            bs_die("ua_sc_frame", s);
        t0 = bs_now();
        s = ua_sc_process(&b.ch, p, chunk, 1000, &b.sout, msg);
        /* A secured OPN comes in steps (one RSA private-key operation
         * each); the worker runs them in later loop iterations. */
        while (s == UA_GOOD && ua_sc_busy(&b.ch))
            s = ua_sc_resume(&b.ch, 1000, &b.sout);
        t += bs_now() - t0;
        if (s != UA_GOOD)
            bs_die("ua_sc_process", s);
        p += chunk;
        n -= chunk;
    }
    return t;
}

static void
bs_to_client(struct ua_client_event *ev)
{
    uint8_t  *p = b.sbuf;
    size_t    n = b.sout.len;
    uint32_t  chunk;
    ua_status s;

    b.sout.len = 0;
    while (n > 0) {
        s = ua_client_frame(&b.cl, p, n, &chunk);
        if (s != UA_GOOD || chunk == 0 || chunk > n)
            bs_die("ua_client_frame", s);
        s = ua_client_process(&b.cl, p, chunk, 1000, ev);
        if (s != UA_GOOD)
            bs_die("ua_client_process", s);
        p += chunk;
        n -= chunk;
    }
}

/* HEL + OPN Issue; the µs the server spent on the OPN. */
static double
bs_open(void)
{
    struct ua_sc_msg       msg;
    struct ua_client_event ev;
    double                 t;

    if (ua_client_hello(&b.cl, "opc.tcp://bench:4840", &b.cout) != UA_GOOD)
        bs_die("ua_client_hello", UA_BAD_INTERNAL_ERROR);
    bs_to_server(&msg);
    bs_to_client(&ev);
    if (ua_client_open(&b.cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 0, NULL,
                       &b.cout) != UA_GOOD)
        bs_die("ua_client_open", UA_BAD_INTERNAL_ERROR);
    t = bs_to_server(&msg);
    bs_to_client(&ev);
    if (b.cl.state != UA_CLIENT_OPEN || b.ch.state != UA_SC_OPEN)
        bs_die("open", ev.status);
    return t;
}

/* n Read round trips of one node; prints the server's µs per request. */
static void
bs_roundtrips(unsigned policy, uint8_t mode, unsigned n)
{
    static const char *const modes[] = { "", "None", "Sign",
                                         "SignAndEncrypt" };
    struct ua_read_request   req;
    struct ua_read_value_id  id;
    struct ua_read_response  resp;
    struct ua_datavalue      dv;
    struct ua_sc_msg         msg;
    struct ua_client_event   ev;
    double                   v = 42.5, tin = 0, tout = 0, t0;
    size_t                   req_len = 0, resp_len = 0;

    bs_init(policy, mode);
    bs_open();
    memset(&req, 0, sizeof(req));
    memset(&id, 0, sizeof(id));
    id.node_id = ua_nodeid_num(2, 70000);
    id.attribute_id = 13;
    id.index_range.len = -1;
    id.data_encoding.name.len = -1;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &id;
    req.timestamps_to_return = 2;
    memset(&resp, 0, sizeof(resp));
    memset(&dv, 0, sizeof(dv));
    dv.mask = UA_DV_VALUE | UA_DV_SOURCE_TS;
    dv.source_ts = 133000000000000000LL;
    ua_variant_set_scalar(&dv.value, &v, UA_BT_DOUBLE);
    resp.n_results = 1;
    resp.results = &dv;
    resp.n_diagnostic_infos = -1;
    for (unsigned i = 0; i < n; i++) {
        if (ua_client_request(&b.cl, &ua_types[UA_TYPE_READREQUEST], &req,
                              NULL, &b.cout) != UA_GOOD)
            bs_die("ua_client_request", UA_BAD_INTERNAL_ERROR);
        req_len = b.cout.len;
        tin += bs_to_server(&msg);
        if (msg.len == 0)
            bs_die("no request", UA_BAD_INTERNAL_ERROR);
        resp.response_header.request_handle = i;
        t0 = bs_now();
        if (ua_sc_send(&b.ch, msg.request_id, &ua_types[UA_TYPE_READRESPONSE],
                       &resp, &b.sout) != UA_GOOD)
            bs_die("ua_sc_send", UA_BAD_INTERNAL_ERROR);
        tout += bs_now() - t0;
        resp_len = b.sout.len;
        bs_to_client(&ev);
        if (ev.kind != UA_CLIENT_EV_MSG)
            bs_die("no response", ev.status);
    }
    printf("  %-22s %-15s  %6.2f us  (in %5.2f + out %5.2f; chunks %zu/%zu "
           "B)\n",
           ua_crypto_policy_get(policy)->name, modes[mode],
           (tin + tout) / n, tin / n, tout / n, req_len, resp_len);
}

/* n OPN Issues; the server's and the client's µs per handshake. */
static void
bs_handshakes(unsigned n, bool cert_hook)
{
    double ts = 0, tc = 0, t0, t1;

    b.cert_hook = cert_hook;
    for (unsigned i = 0; i < n; i++) {
        bs_init(UA_POLICY_BASIC256SHA256,
                UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
        t0 = bs_now();
        t1 = bs_open();
        ts += t1;
        tc += bs_now() - t0 - t1;
    }
    printf("  Basic256Sha256 OPN Issue, %s hook: server %8.1f us, client "
           "%8.1f us (%u handshakes)\n",
           cert_hook ? "ua_cert_validate" : "trusting", ts / n, tc / n, n);
    b.cert_hook = false;
}

int
main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
    unsigned k = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 50;

    if (n == 0 || k == 0) {
        fprintf(stderr, "usage: %s [round trips] [handshakes]\n", argv[0]);
        return 2;
    }
    if (ua_crypto_init() != UA_GOOD
        || ua_crypto_key_load(&b.key, pki_app_key_der,
                              sizeof(pki_app_key_der)) != UA_GOOD)
        bs_die("key", UA_BAD_INTERNAL_ERROR);
    b.trusted = (struct ua_cert_der){ pki_app_der, sizeof(pki_app_der) };
    b.store.trusted = &b.trusted;
    b.store.n_trusted = 1;

    printf("bench_sc_security: server CPU per Read of one node "
           "(decode and service excluded), %u round trips each\n", n);
    bs_roundtrips(UA_POLICY_NONE, UA_MESSAGESECURITYMODE_NONE, n);
    for (unsigned p = UA_POLICY_BASIC256SHA256; p < UA_POLICY_COUNT; p++) {
        bs_roundtrips(p, UA_MESSAGESECURITYMODE_SIGN, n);
        bs_roundtrips(p, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, n);
    }
    printf("bench_sc_security: OpenSecureChannel (RSA 2048 both sides)\n");
    bs_handshakes(k, false);
    bs_handshakes(k, true);
    ua_sc_clear(&b.ch);
    ua_client_clear(&b.cl);
    ua_crypto_key_clear(&b.key);
    ua_crypto_cleanup();
    return 0;
}
