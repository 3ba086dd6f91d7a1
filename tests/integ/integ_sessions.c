/*
 * tests/integ/integ_sessions.c: sessions never activated cannot lock out
 * real clients (issue 19; docs/security.md case 52), on loopback.  The
 * flooders connect from other loopback addresses (127.0.0.2 and up: the
 * server sees other clients), the real client from 127.0.0.1.
 *
 * Broker A, `uabroker -w 1`, limits.max_sessions = SS_TABLE,
 * limits.max_unactivated_per_address = SS_CAP:
 *   1. the cap at the limit: from 127.0.0.2, on one channel, SS_CAP
 *      CreateSessions are Good, the next is BadTooManySessions; from
 *      127.0.0.3 one more is Good (another address is not affected);
 *   2. the flood from several addresses: SS_ADDRS addresses x SS_CAP
 *      CreateSessions (SS_FLOOD in all), never activated, every one Good:
 *      the table gives its oldest unactivated session's slot to each new
 *      one (/stats sessions_evicted counts them); a session of the
 *      first round is gone (its ActivateSession: BadSessionIdInvalid),
 *      one of the last can still be activated;
 *   3. a real client gets in, activates and reads.
 *
 * Broker B, the same with limits.max_unactivated_per_address above the
 * flood: SS_FLOOD CreateSessions from one address on one channel, all
 * Good; then a real client from that address gets in and reads.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_sessions: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define SS_TABLE      100         /* limits.max_sessions */
#define SS_CAP        10          /* limits.max_unactivated_per_address */
#define SS_ADDRS      50
#define SS_FLOOD      (SS_ADDRS * SS_CAP)
#define SS_ARENA      (1u << 20)
#define SS_WATCHDOG_S 120

static char            ss_dir[PATH_MAX - 64], ss_log[PATH_MAX];
static char            ss_run[PATH_MAX];
static char            ss_bin[PATH_MAX];
static uint16_t        ss_port, ss_sport;
static struct ua_arena ss_arena;
static struct uaconn   ss_c[SS_ADDRS];
static char            ss_addr[SS_ADDRS][32];
static struct ua_nodeid ss_tok[SS_ADDRS];   /* each one's newest session */
static struct ua_nodeid ss_first[SS_ADDRS]; /* and its first */

/* A channel from src (NULL: 127.0.0.1): Good or the failure. */
static ua_status
ss_channel(struct uaconn *c, const char *src)
{
    ua_status s;

    uaconn_init(c);
    c->src_addr = src;
    if (uaconn_connect(c, "127.0.0.1", ss_port) != 0)
        return UA_BAD_COMMUNICATION_ERROR;
    s = uaconn_hello(c, NULL);
    if (s == UA_GOOD)
        s = uaconn_open(c, 0);
    return s;
}

/* CreateSession only on c's channel (a 32-byte nonce); *tok its
 * authenticationToken (a GUID).  The ServiceResult. */
static ua_status
ss_create(struct uaconn *c, struct ua_nodeid *tok)
{
    struct ua_create_session_request  r;
    struct ua_create_session_response resp;
    uint8_t                           nonce[32];
    ua_status                         s;

    memset(&r, 0, sizeof(r));
    memset(nonce, 0x5A, sizeof(nonce));
    r.request_header.audit_entry_id.len = -1;
    r.client_description.application_uri = ua_string_from("urn:flood");
    r.client_description.product_uri = ua_string_from("urn:flood");
    r.client_description.application_name.mask = UA_LT_TEXT;
    r.client_description.application_name.text = ua_string_from("flood");
    r.client_description.application_type = UA_APPLICATIONTYPE_CLIENT;
    r.client_description.gateway_server_uri.len = -1;
    r.client_description.discovery_profile_uri.len = -1;
    r.client_description.n_discovery_urls = -1;
    r.server_uri.len = -1;
    r.endpoint_url = ua_string_from(c->url);
    r.session_name = ua_string_from("flood");
    r.client_nonce.len = (int32_t)sizeof(nonce);
    r.client_nonce.data = nonce;
    r.client_certificate.len = -1;
    r.requested_session_timeout = 60000;
    ua_client_set_token(&c->cl, NULL);
    ua_arena_reset(&ss_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATESESSIONREQUEST], &r,
                    &ua_types[UA_TYPE_CREATESESSIONRESPONSE], &resp,
                    &ss_arena);
    if (s == UA_GOOD && resp.authentication_token.idtype != UA_IDTYPE_GUID)
        s = UA_BAD_UNEXPECTED_ERROR;        /* a GUID is kept by value */
    if (s == UA_GOOD && tok != NULL)
        *tok = resp.authentication_token;
    return s;
}

/* ActivateSession (anonymous) of the session tok on c's channel. */
static ua_status
ss_activate(struct uaconn *c, const struct ua_nodeid *tok)
{
    struct ua_activate_session_request  r;
    struct ua_activate_session_response resp;
    struct ua_anonymous_identity_token  anon;

    memset(&r, 0, sizeof(r));
    memset(&anon, 0, sizeof(anon));
    anon.policy_id = ua_string_from("anonymous");
    r.request_header.audit_entry_id.len = -1;
    r.client_signature.algorithm.len = -1;
    r.client_signature.signature.len = -1;
    r.user_identity_token.encoding = UA_EO_DECODED;
    r.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
    r.user_identity_token.obj = &anon;
    r.user_identity_token.type_id = ua_nodeid_num(
        0, UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY);
    r.user_token_signature.algorithm.len = -1;
    r.user_token_signature.signature.len = -1;
    ua_client_set_token(&c->cl, tok);
    ua_arena_reset(&ss_arena);
    return uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &r,
                       &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &resp,
                       &ss_arena);
}

/* A real client from src: connect, create, activate, read. */
static ua_status
ss_real(const char *src)
{
    struct uaconn c;
    ua_status     s;

    uaconn_init(&c);
    c.src_addr = src;
    s = uaconn_start(&c, "127.0.0.1", ss_port);
    if (s == UA_GOOD)
        s = uaconn_read_time(&c, &ss_arena);
    if (s == UA_GOOD)
        s = uaconn_close_session(&c);
    (void)uaconn_close(&c);
    uaconn_clear(&c);
    return s;
}

static uint64_t
ss_evicted(void)
{
    uint64_t n = 0;

    if (!itest_worker_u64(ss_sport, 0, "sessions_evicted", &n))
        itest_check(false, "/stats: worker 0 sessions_evicted");
    return n;
}

static pid_t
ss_broker(const char *cap)
{
    char        table[64], capset[64];
    const char *extra[] = { "--set", table, "--set", capset, NULL };

    snprintf(table, sizeof(table), "limits.max_sessions=%d", SS_TABLE);
    snprintf(capset, sizeof(capset), "limits.max_unactivated_per_address=%s",
             cap);
    return itest_broker_start(ss_bin, 1, ss_run, ss_log, extra, 10000,
                              &ss_port, &ss_sport);
}

/* Broker A: the cap, the flood from SS_ADDRS addresses, a real client. */
static void
ss_addresses(void)
{
    struct uaconn *c = &ss_c[0];
    ua_status      s = UA_GOOD;
    int            good = 0, bad = 0;
    pid_t          broker = ss_broker("10");
    uint64_t       ev0;

    /* 1. The cap at the limit. */
    s = ss_channel(c, "127.0.0.2");
    itest_check(s == UA_GOOD, "a channel from 127.0.0.2: 0x%08X", s);
    for (int i = 0; i < SS_CAP && s == UA_GOOD; i++) {
        s = ss_create(c, NULL);
        if (s == UA_GOOD)
            good++;
    }
    itest_check(good == SS_CAP, "cap: %d of %d CreateSessions from one "
                "address Good", good, SS_CAP);
    s = ss_create(c, NULL);
    itest_check(s == UA_BAD_TOO_MANY_SESSIONS, "cap: CreateSession number "
                "%d from that address: 0x%08X (BadTooManySessions)",
                SS_CAP + 1, s);
    s = ss_channel(&ss_c[1], "127.0.0.3");
    if (s == UA_GOOD)
        s = ss_create(&ss_c[1], NULL);
    itest_check(s == UA_GOOD, "cap: another address is not affected: "
                "0x%08X", s);
    (void)uaconn_close(c);
    (void)uaconn_close(&ss_c[1]);
    uaconn_clear(c);
    uaconn_clear(&ss_c[1]);
    itest_sleep_ms(200);            /* their sessions go with the channels */

    /* 2. The flood: SS_CAP from each of SS_ADDRS addresses, round-robin,
     * never activated. */
    ev0 = ss_evicted();
    good = 0;
    for (int a = 0; a < SS_ADDRS; a++) {
        snprintf(ss_addr[a], sizeof(ss_addr[a]), "127.0.0.%d", 10 + a);
        s = ss_channel(&ss_c[a], ss_addr[a]);
        if (s != UA_GOOD)
            itest_fatal("flood channel from %s: 0x%08X", ss_addr[a], s);
    }
    for (int k = 0; k < SS_CAP; k++)
        for (int a = 0; a < SS_ADDRS; a++) {
            s = ss_create(&ss_c[a], k == 0 ? &ss_first[a] : &ss_tok[a]);
            if (s == UA_GOOD)
                good++;
            else
                bad++;
        }
    itest_check(good == SS_FLOOD && bad == 0, "flood: %d of %d "
                "CreateSessions from %d addresses Good (%d refused) with "
                "a table of %d", good, SS_FLOOD, SS_ADDRS, bad, SS_TABLE);
    itest_check(ss_evicted() - ev0 == (uint64_t)(SS_FLOOD - SS_TABLE),
                "flood: %llu sessions evicted (expected %d)",
                (unsigned long long)(ss_evicted() - ev0),
                SS_FLOOD - SS_TABLE);
    /* The first round's sessions went long ago; the last round's are the
     * newest. */
    s = ss_activate(&ss_c[0], &ss_first[0]);
    itest_check(s == UA_BAD_SESSION_ID_INVALID, "flood: an evicted "
                "session's ActivateSession: 0x%08X (BadSessionIdInvalid)", s);
    s = ss_activate(&ss_c[SS_ADDRS - 1], &ss_tok[SS_ADDRS - 1]);
    itest_check(s == UA_GOOD, "flood: the newest session is activated: "
                "0x%08X", s);

    /* 3. A real client gets in. */
    s = ss_real(NULL);
    itest_check(s == UA_GOOD, "flood: a real client from 127.0.0.1 creates, "
                "activates and reads: 0x%08X", s);
    for (int a = 0; a < SS_ADDRS; a++) {
        (void)uaconn_close(&ss_c[a]);
        uaconn_clear(&ss_c[a]);
    }
    itest_check(itest_stop(broker, 5000) == 0, "broker A exits 0");
}

/* Broker B: SS_FLOOD from one address, the cap out of the way. */
static void
ss_one_address(void)
{
    struct uaconn *c = &ss_c[0];
    ua_status      s;
    int            good = 0;
    char           cap[16];
    pid_t          broker;

    snprintf(cap, sizeof(cap), "%d", SS_FLOOD + 100);
    broker = ss_broker(cap);
    s = ss_channel(c, "127.0.0.2");
    itest_check(s == UA_GOOD, "a channel from 127.0.0.2: 0x%08X", s);
    for (int i = 0; i < SS_FLOOD && s == UA_GOOD; i++) {
        s = ss_create(c, NULL);
        if (s == UA_GOOD)
            good++;
    }
    itest_check(good == SS_FLOOD, "one address: %d of %d CreateSessions "
                "Good with a table of %d", good, SS_FLOOD, SS_TABLE);
    itest_check(ss_evicted() == (uint64_t)(SS_FLOOD - SS_TABLE),
                "one address: %llu sessions evicted (expected %d)",
                (unsigned long long)ss_evicted(), SS_FLOOD - SS_TABLE);
    s = ss_real("127.0.0.2");
    itest_check(s == UA_GOOD, "one address: a real client from the same "
                "address gets in: 0x%08X", s);
    s = ss_real(NULL);
    itest_check(s == UA_GOOD, "one address: and one from 127.0.0.1: 0x%08X",
                s);
    (void)uaconn_close(c);
    uaconn_clear(c);
    itest_check(itest_stop(broker, 5000) == 0, "broker B exits 0");
}

int
main(int argc, char **argv)
{
    (void)argc;
    itest_init("integ_sessions");
    itest_guard(SS_WATCHDOG_S, ss_log);
    ua_arena_init(&ss_arena, malloc(SS_ARENA), SS_ARENA);
    itest_broker_bin(argv[0], ss_bin, sizeof(ss_bin));
    itest_tmpdir("uabroker-sessions", ss_dir, sizeof(ss_dir));
    snprintf(ss_run, sizeof(ss_run), "%s/run", ss_dir);
    snprintf(ss_log, sizeof(ss_log), "%s/broker.log", ss_dir);
    ss_addresses();
    ss_one_address();
    free(ss_arena.base);
    return itest_finish();
}
