/*
 * tests/integ/integ_security.c: secured channels and sessions on loopback.
 *
 * Starts `uabroker -w 1` with a fresh runtime directory (its PKI under
 * it) whose trusted/certs holds tests/unit/proto/pki/der/app.der, then:
 *
 *   1. GetEndpoints on a None channel: one endpoint per policy x mode,
 *      our certificate on the secured ones, SignAndEncrypt ranked above
 *      Sign; anonymous Read works;
 *   2. with app.der/app.key.der: Basic256Sha256 SignAndEncrypt,
 *      Aes128_Sha256_RsaOaep Sign, Aes256_Sha256_RsaPss SignAndEncrypt:
 *      OPN, CreateSession (serverSignature verified), ActivateSession
 *      (clientSignature), Read;
 *   3. a wrong ApplicationUri: BadCertificateUriInvalid;
 *   4. a fresh, untrusted client certificate: BadSecurityChecksFailed, and
 *      after a second it is in rejected/<thumbprint>.der;
 *   5. moved to trusted/certs and SIGHUP: accepted;
 *   6. users (a users file written here): anonymous may not write
 *      (BadUserAccessDenied) and sees no CurrentWrite in UserAccessLevel; a
 *      viewer logs in on None (password encrypted with Basic256Sha256) and
 *      may not write; an operator logs in on Basic256Sha256
 *      SignAndEncrypt and writes; a wrong password is
 *      BadIdentityTokenRejected, the fourth try within 10 s
 *      BadUserAccessDenied (throttled); six wrong logins of another client
 *      sent at once on six connections: three tries, three refused;
 *   7. X509 user tokens: a certificate in trusted_users/certs logs in
 *      (role viewer: no Write), one that is not there is
 *      BadIdentityTokenRejected;
 *   8. then a broker with 2 workers on the same directory: per-IP
 *      throttling of OPN security failures (2 and still served, 3 and
 *      every new connection of 127.0.0.1 is refused by either worker,
 *      127.0.0.2 served, served again after the block) and failed
 *      logins counted over both workers (see is_throttle);
 *   9. failed logins counted per source address too: a brute force from
 *      127.0.0.1 under a new ApplicationUri each time is stopped at
 *      security.login_failure_ip_threshold (default 10), 127.0.0.2 logs
 *      in meanwhile (see is_login_ip);
 *  10. a broker accepting 5 connections a second after 10: a burst of 30
 *      connects is shed with ERR BadTcpServerTooBusy, an established
 *      session keeps working (see is_accept_rate).
 *
 * Prints "ok N - what" / "FAIL N - what" and a closing "integ_security:
 * N passed, M failed"; exits non-zero on any failure.  The broker's
 * process group is killed on every way out; its log is printed on
 * failure; the temporary directory is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/cert.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IS_WATCHDOG_S 180
#define IS_START_MS   30000
#define IS_ARENA      (4u << 20)
#define IS_PKI_SRC    "tests/unit/proto/pki/der/"
#define IS_PARALLEL   6
#define IS_THROTTLE_FAILS 3     /* security.login_failure_threshold */

static pid_t           is_broker = -1;
static char            is_dir[PATH_MAX];
static char            is_run[PATH_MAX + 8];
static char            is_log[PATH_MAX + 16];
static uint16_t        is_port, is_sport;
static struct ua_arena is_arena;
static uint8_t         is_server_cert[UA_CERT_DER_MAX];
static size_t          is_server_cert_len;
static const char     *is_src;          /* client source address; NULL:
                                         * the kernel's (127.0.0.1) */


static void is_start_broker(const char *bin);
static ua_status is_read_time(struct uaconn *c);
static void is_endpoints(void);
static void is_user_line(FILE *f, const char *name, const char *role,
                         const char *pw);
static ua_status is_write_v0(struct uaconn *c, int32_t v, ua_status *res);
static void is_parallel_logins(void);
static ua_status is_read_ual(struct uaconn *c, uint8_t *ual);
static ua_status is_login(const struct ua_policy *p, uint8_t mode,
                          const uint8_t *cert, size_t cert_len,
                          struct ua_crypto_key *key, const char *uri,
                          const char *user, const char *pw, bool write,
                          ua_status *wres, uint8_t *ual);
static ua_status is_login_x509(const uint8_t *cert, size_t len,
                               struct ua_crypto_key *key, ua_status *wres);
static ua_status is_secure(const struct ua_policy *p, uint8_t mode,
                           const uint8_t *cert, size_t cert_len,
                           struct ua_crypto_key *key, const char *uri,
                           ua_status *sig);
static int is_stats_workers(const char *key, unsigned long *v, int max);
static ua_status is_refused(const char *src, uint64_t *ms);
static void is_throttle(const char *bin, const uint8_t *app, size_t app_len,
                        struct ua_crypto_key *key, const char *uri);
static void is_login_ip(const char *bin);
static void is_accept_rate(const char *bin);

static void
is_start_broker(const char *bin)
{
    char port[8], stats[32];

    is_port = itest_free_port();
    is_sport = itest_free_port();
    if (is_port == 0 || is_sport == 0 || is_port == is_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", is_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", is_sport);
    {
        char *const argv[] = { (char *)bin, "-w", "1", "-p", port, "--stats",
                                stats, "--runtime-dir", is_run, "--vars", "10",
                                NULL };

        is_broker = itest_spawn(is_log, argv);
    }
    printf("# broker %s pid %d, opc.tcp port %u\n", bin, (int)is_broker,
           is_port);
}

/* Read Server_ServerStatus_CurrentTime on an activated session. */
static ua_status
is_read_time(struct uaconn *c)
{
    return uaconn_read_time(c, &is_arena);
}

static void
is_endpoints(void)
{
    struct uaconn                    c;
    struct ua_get_endpoints_request  ge;
    struct ua_get_endpoints_response ger;
    char                             url[64];
    ua_status                        s = UA_BAD_TIMEOUT;
    int                              none = 0, secured = 0;
    int                              lvl_sign = -1, lvl_sae = -1;
    bool                             certs_ok = true;
    int32_t                          none_cert = -1;
    const uint8_t                   *none_data = NULL;

    for (int i = 0; i < IS_START_MS / 100; i++) {
        uaconn_init(&c);
        s = uaconn_start(&c, "127.0.0.1", is_port);
        if (s == UA_GOOD)
            break;
        uaconn_clear(&c);
        itest_sleep_ms(100);
    }
    if (s != UA_GOOD)
        itest_fatal("anonymous session on None: 0x%08X", s);
    itest_check(true, "anonymous session on a None channel");
    memset(&ge, 0, sizeof(ge));
    ge.request_header.audit_entry_id.len = -1;
    snprintf(url, sizeof(url), "opc.tcp://127.0.0.1:%u", is_port);
    ge.endpoint_url = ua_string_from(url);
    ge.n_locale_ids = -1;
    ge.n_profile_uris = -1;
    ua_arena_reset(&is_arena);
    s = uaconn_call(&c, &ua_types[UA_TYPE_GETENDPOINTSREQUEST], &ge,
                    &ua_types[UA_TYPE_GETENDPOINTSRESPONSE], &ger, &is_arena);
    if (!itest_check(s == UA_GOOD, "GetEndpoints: 0x%08X", s))
        itest_fatal("no endpoints");
    for (int32_t i = 0; i < ger.n_endpoints; i++) {
        const struct ua_endpoint_description *e = &ger.endpoints[i];

        if (ua_string_eq(&e->security_policy_uri, UA_SC_POLICY_NONE)) {
            none++;
            none_cert = e->server_certificate.len;
            none_data = e->server_certificate.data;
            continue;
        }
        secured++;
        if (e->server_certificate.len <= 0
            || (size_t)e->server_certificate.len > sizeof(is_server_cert)) {
            certs_ok = false;
            continue;
        }
        memcpy(is_server_cert, e->server_certificate.data,
               (size_t)e->server_certificate.len);
        is_server_cert_len = (size_t)e->server_certificate.len;
        if (e->security_mode == UA_MESSAGESECURITYMODE_SIGN
            && (int)e->security_level > lvl_sign)
            lvl_sign = e->security_level;
        if (e->security_mode == UA_MESSAGESECURITYMODE_SIGNANDENCRYPT
            && (lvl_sae < 0 || (int)e->security_level < lvl_sae))
            lvl_sae = e->security_level;
    }
    itest_check(none == 1 && secured == 6,
             "GetEndpoints: %d None and %d secured endpoints (1 and 6)",
             none, secured);
    itest_check(certs_ok && is_server_cert_len > 0,
             "every secured endpoint carries the server certificate");
    /* The None endpoint too (a client ignores it there, Part 4 §5.5.4.1;
     * node-opcua's reconnection reads it: docs/design-notes.md D109). */
    itest_check(none_cert > 0 && (size_t)none_cert == is_server_cert_len
                && memcmp(none_data, is_server_cert, is_server_cert_len) == 0,
             "the None endpoint carries the server certificate too (%d "
             "bytes)", (int)none_cert);
    itest_check(lvl_sae > lvl_sign && lvl_sign > 0,
             "SecurityLevel: SignAndEncrypt (lowest %d) above Sign "
             "(highest %d)", lvl_sae, lvl_sign);
    s = is_read_time(&c);
    itest_check(s == UA_GOOD, "anonymous Read on None: 0x%08X", s);
    uaconn_close_session(&c);
    uaconn_close(&c);
    uaconn_clear(&c);
}

/* name:role:pbkdf2-sha256:iterations:salt_hex:hash_hex */
static void
is_user_line(FILE *f, const char *name, const char *role, const char *pw)
{
    uint8_t salt[16], hash[32];

    if (ua_crypto_random(salt, sizeof(salt)) != UA_GOOD
        || ua_crypto_pbkdf2((const uint8_t *)pw, strlen(pw), salt,
                            sizeof(salt), 1000, hash, sizeof(hash))
               != UA_GOOD)
        itest_fatal("PBKDF2");
    fprintf(f, "%s:%s:pbkdf2-sha256:1000:", name, role);
    for (size_t i = 0; i < sizeof(salt); i++)
        fprintf(f, "%02x", salt[i]);
    fputc(':', f);
    for (size_t i = 0; i < sizeof(hash); i++)
        fprintf(f, "%02x", hash[i]);
    fputc('\n', f);
}

/*
 * IS_PARALLEL wrong-password logins of one client on as many None
 * connections, their ActivateSessions sent at once: the worker runs them
 * in steps, interleaved, yet the throttle lets exactly
 * IS_THROTTLE_FAILS of them try (BadIdentityTokenRejected) and refuses the
 * rest (BadUserAccessDenied), as if they had come one after another.
 */
static void
is_parallel_logins(void)
{
    static struct uaconn c[IS_PARALLEL];
    ua_status            s[IS_PARALLEL];
    int                  invalid = 0, denied = 0, ready = 0;

    for (int i = 0; i < IS_PARALLEL; i++) {
        uaconn_init(&c[i]);
        c[i].app_uri = "urn:integ:parallel";
        c[i].user = "op";
        c[i].password = "wrong";
        c[i].activate_later = true;
        s[i] = uaconn_start(&c[i], "127.0.0.1", is_port);
        if (s[i] == UA_GOOD)
            ready++;
    }
    for (int i = 0; i < IS_PARALLEL; i++)
        if (s[i] == UA_GOOD)
            s[i] = uaconn_activate_send(&c[i]);
    for (int i = 0; i < IS_PARALLEL; i++) {
        if (s[i] == UA_GOOD)
            s[i] = uaconn_activate_wait(&c[i]);
        if (s[i] == UA_BAD_IDENTITY_TOKEN_REJECTED)
            invalid++;
        else if (s[i] == UA_BAD_USER_ACCESS_DENIED)
            denied++;
        uaconn_close(&c[i]);
        ua_client_clear(&c[i].cl);
        uaconn_clear(&c[i]);
    }
    itest_check(ready == IS_PARALLEL && invalid == IS_THROTTLE_FAILS
                && denied == IS_PARALLEL - IS_THROTTLE_FAILS,
                "%d parallel wrong logins of one client: %d sessions, %d "
                "BadIdentityTokenRejected (want %d), %d BadUserAccessDenied",
                IS_PARALLEL, ready, invalid, IS_THROTTLE_FAILS, denied);
}

/* Write ns=1;s=v0 (Int32); *res its result. */
static ua_status
is_write_v0(struct uaconn *c, int32_t v, ua_status *res)
{
    struct ua_write_value    wv;
    struct ua_write_request  req;
    struct ua_write_response resp;
    ua_status                s;

    memset(&wv, 0, sizeof(wv));
    wv.node_id.ns = 1;
    wv.node_id.idtype = UA_IDTYPE_STRING;
    wv.node_id.id.str = ua_string_from("v0");
    wv.attribute_id = UA_ATTR_VALUE;
    wv.index_range.len = -1;
    wv.value.mask = UA_DV_VALUE;
    ua_variant_set_scalar(&wv.value.value, &v, UA_BT_INT32);
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_write = 1;
    req.nodes_to_write = &wv;
    ua_arena_reset(&is_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_WRITEREQUEST], &req,
                    &ua_types[UA_TYPE_WRITERESPONSE], &resp, &is_arena);
    *res = s == UA_GOOD && resp.n_results == 1 ? resp.results[0]
                                               : UA_BAD_UNEXPECTED_ERROR;
    return s;
}

/* UserAccessLevel of ns=1;s=v0. */
static ua_status
is_read_ual(struct uaconn *c, uint8_t *ual)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;
    ua_status               s;

    memset(&rv, 0, sizeof(rv));
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    rv.attribute_id = UA_ATTR_USERACCESSLEVEL;
    rv.node_id.ns = 1;
    rv.node_id.idtype = UA_IDTYPE_STRING;
    rv.node_id.id.str = ua_string_from("v0");
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(&is_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &is_arena);
    if (s == UA_GOOD && (resp.n_results != 1 || resp.results[0].status != 0
                         || resp.results[0].value.type != UA_BT_BYTE))
        s = UA_BAD_UNEXPECTED_ERROR;
    if (s == UA_GOOD)
        *ual = *(const uint8_t *)resp.results[0].value.data;
    return s;
}

/* A session as user (NULL: anonymous) on policy p (NULL: None); a Write
 * of v0 when write; UserAccessLevel of v0. */
static ua_status
is_login(const struct ua_policy *p, uint8_t mode, const uint8_t *cert,
         size_t cert_len, struct ua_crypto_key *key, const char *uri,
         const char *user, const char *pw, bool write, ua_status *wres,
         uint8_t *ual)
{
    struct uaconn             c;
    struct ua_client_security sec;
    ua_status                 s;

    memset(&sec, 0, sizeof(sec));
    sec.policy = p;
    sec.mode = mode;
    sec.cert = cert;
    sec.cert_len = cert_len;
    sec.key = key;
    sec.server_cert = is_server_cert;
    sec.server_cert_len = is_server_cert_len;
    uaconn_init(&c);
    c.src_addr = is_src;
    c.sec = p != NULL ? &sec : NULL;
    c.app_uri = uri;
    c.user = user;
    c.password = pw;
    *wres = UA_BAD_UNEXPECTED_ERROR;
    s = uaconn_start(&c, "127.0.0.1", is_port);
    if (s == UA_GOOD && write)
        s = is_write_v0(&c, 42, wres);
    if (s == UA_GOOD && ual != NULL)
        s = is_read_ual(&c, ual);
    if (s == UA_GOOD) {
        uaconn_close_session(&c);
        uaconn_close(&c);
    }
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    return s;
}

/* An X509 user on a None channel; a Write of v0. */
static ua_status
is_login_x509(const uint8_t *cert, size_t len, struct ua_crypto_key *key,
              ua_status *wres)
{
    struct uaconn c;
    ua_status     s;

    uaconn_init(&c);
    c.user_cert = cert;
    c.user_cert_len = len;
    c.user_key = key;
    *wres = UA_BAD_UNEXPECTED_ERROR;
    s = uaconn_start(&c, "127.0.0.1", is_port);
    if (s == UA_GOOD)
        s = is_write_v0(&c, 7, wres);
    if (s == UA_GOOD) {
        uaconn_close_session(&c);
        uaconn_close(&c);
    }
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    return s;
}

/* One secured connection: OPN, sessions, a Read.  *sig: the
 * serverSignature's check. */
static ua_status
is_secure(const struct ua_policy *p, uint8_t mode, const uint8_t *cert,
          size_t cert_len, struct ua_crypto_key *key, const char *uri,
          ua_status *sig)
{
    struct uaconn             c;
    struct ua_client_security sec;
    ua_status                 s;

    memset(&sec, 0, sizeof(sec));
    sec.policy = p;
    sec.mode = mode;
    sec.cert = cert;
    sec.cert_len = cert_len;
    sec.key = key;
    sec.server_cert = is_server_cert;
    sec.server_cert_len = is_server_cert_len;
    uaconn_init(&c);
    c.src_addr = is_src;
    c.sec = &sec;
    c.app_uri = uri;
    c.server_sig_status = UA_BAD_UNEXPECTED_ERROR;
    s = uaconn_start(&c, "127.0.0.1", is_port);
    *sig = c.server_sig_status;
    if (s == UA_GOOD)
        s = is_read_time(&c);
    if (s == UA_GOOD) {
        uaconn_close_session(&c);
        uaconn_close(&c);
    }
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    return s;
}

/*
 * The value of `key` in each worker's "throttle" object of /stats (in
 * slot order): the number of workers found, -1 when /stats cannot be had.
 */
static int
is_stats_workers(const char *key, unsigned long *v, int max)
{
    static char        buf[1 << 20];
    struct sockaddr_in sa = { .sin_family = AF_INET };
    const char         req[] = "GET /stats HTTP/1.0\r\n\r\n";
    const char        *p, *q;
    size_t             len = 0;
    ssize_t            r;
    char               pat[64];
    int                fd, n = 0;

    sa.sin_port = htons(is_sport);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1
        || write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1)) {
        close(fd);
        return -1;
    }
    while (len < sizeof(buf) - 1
           && (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    buf[len] = '\0';
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    p = strstr(buf, "\"workers\": [");
    while (p != NULL && n < max && (p = strstr(p, "\"throttle\": {")) != NULL) {
        q = strstr(p, pat);
        if (q == NULL)
            break;
        v[n++] = strtoul(q + strlen(pat), NULL, 10);
        p = q;
    }
    return p == NULL && n == 0 ? -1 : n;
}

/*
 * Connect from src and send nothing: a refused connection gets an ERR at
 * once.  Its status (BadCommunicationError when the connection was not
 * refused: nothing came within 2 s, or no ERR), *ms the time it took.
 */
static ua_status
is_refused(const char *src, uint64_t *ms)
{
    struct sockaddr_in sa = { .sin_family = AF_INET }, la = { 0 };
    uint8_t            b[64];
    uint64_t           t0 = itest_ms();
    ssize_t            r = 0;
    size_t             len = 0;
    int                fd;

    *ms = 0;
    sa.sin_port = htons(is_port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    la.sin_family = AF_INET;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1 || inet_pton(AF_INET, src, &la.sin_addr) != 1
        || bind(fd, (struct sockaddr *)&la, sizeof(la)) == -1
        || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
        if (fd != -1)
            close(fd);
        return UA_BAD_COMMUNICATION_ERROR;
    }
    {
        struct timeval tv = { 2, 0 };

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    }
    while (len < 16 && (r = read(fd, b + len, sizeof(b) - len)) > 0)
        len += (size_t)r;
    close(fd);
    *ms = itest_ms() - t0;
    if (len < 12 || memcmp(b, "ERRF", 4) != 0)
        return UA_BAD_COMMUNICATION_ERROR;
    return (ua_status)b[8] | (ua_status)b[9] << 8 | (ua_status)b[10] << 16
           | (ua_status)b[11] << 24;
}

/*
 * 8. Throttling on a broker with two workers (the same runtime directory,
 * so the same certificates), its blocks short: two OPN security failures
 * from 127.0.0.1 (an untrusted certificate) and it is still served; the
 * third blocks it: every new connection from it, on either worker, gets
 * ERR BadTcpServerTooBusy at once, and so does an OPN on a connection it
 * opened before; 127.0.0.2 is served meanwhile; after the block
 * 127.0.0.1 is served again.  Failed logins of one client count on both
 * workers together: two and the right password works; three and every
 * login of that client, on either worker, is BadUserAccessDenied.
 */
#define IS_BLOCK_MS      4000
#define IS_BOTH_TRIES    40

static void
is_throttle(const char *bin, const uint8_t *app, size_t app_len,
            struct ua_crypto_key *key, const char *uri)
{
    static uint8_t              bad[UA_CERT_DER_MAX];
    static struct ua_crypto_key bkey;
    const struct ua_policy     *b256 = ua_crypto_policy_get(
        UA_POLICY_BASIC256SHA256);
    struct ua_client_security   sec;
    struct ua_cert_params       cp;
    struct uaconn               pre;
    unsigned long               n[2];
    uint64_t                    ms, slowest = 0, t_block;
    size_t                      bad_len;
    char                        port[8], stats[32], blk[64];
    ua_status                   s, sig, w;
    int                         tries, wrong = 0;

    is_port = itest_free_port();
    is_sport = itest_free_port();
    if (is_port == 0 || is_sport == 0 || is_port == is_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", is_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", is_sport);
    snprintf(blk, sizeof(blk), "security.failure_block_ms=%u", IS_BLOCK_MS);
    {
        char *const argv[] = { (char *)bin, "-w", "2", "-p", port, "--stats",
                                stats, "--runtime-dir", is_run, "--vars", "10",
                                "--set", blk, NULL };

        is_broker = itest_spawn(is_log, argv);
    }
    printf("# broker (2 workers) pid %d, opc.tcp port %u\n", (int)is_broker,
           is_port);
    memset(&cp, 0, sizeof(cp));
    cp.app_uri = "urn:integ:security:bad";
    cp.common_name = "integ_security bad";
    cp.not_before = (int64_t)time(NULL) - 3600;
    cp.days = 2;
    if (ua_crypto_key_generate(&bkey, 2048) != UA_GOOD
        || ua_cert_create(&cp, &bkey, bad, sizeof(bad), &bad_len) != UA_GOOD)
        itest_fatal("cannot make a client certificate");
    s = UA_BAD_TIMEOUT;
    for (int i = 0; i < IS_START_MS / 100 && s != UA_GOOD; i++) {
        itest_sleep_ms(100);
        s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app,
                      app_len, key, uri, &sig);
    }
    if (s != UA_GOOD)
        itest_fatal("2 workers: no secured session: 0x%08X", s);

    /* A connection of 127.0.0.1 that sends its OPN after the block. */
    memset(&sec, 0, sizeof(sec));
    sec.policy = b256;
    sec.mode = UA_MESSAGESECURITYMODE_SIGNANDENCRYPT;
    sec.cert = app;
    sec.cert_len = app_len;
    sec.key = key;
    sec.server_cert = is_server_cert;
    sec.server_cert_len = is_server_cert_len;
    uaconn_init(&pre);
    pre.sec = &sec;
    pre.app_uri = uri;
    s = uaconn_connect(&pre, "127.0.0.1", is_port) == 0
            ? uaconn_hello(&pre, NULL) : UA_BAD_COMMUNICATION_ERROR;
    itest_check(s == UA_GOOD, "a connection of 127.0.0.1 says HEL: 0x%08X",
                s);

    /* At the limit: threshold - 1 failures, still served. */
    for (int i = 0; i < 2; i++) {
        s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, bad,
                      bad_len, &bkey, cp.app_uri, &sig);
        itest_check(s == UA_BAD_SECURITY_CHECKS_FAILED,
                    "untrusted OPN %d from 127.0.0.1: 0x%08X", i + 1, s);
    }
    s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app, app_len,
                  key, uri, &sig);
    itest_check(s == UA_GOOD, "2 failures (threshold 3): 127.0.0.1 still "
                "served: 0x%08X", s);
    s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, bad, bad_len,
                  &bkey, cp.app_uri, &sig);
    t_block = itest_ms();
    itest_check(s == UA_BAD_SECURITY_CHECKS_FAILED,
                "untrusted OPN 3 from 127.0.0.1: 0x%08X", s);

    /* Blocked: refused at once, by both workers. */
    n[0] = n[1] = 0;
    for (tries = 0; tries < IS_BOTH_TRIES && (n[0] == 0 || n[1] == 0);
         tries++) {
        s = is_refused("127.0.0.1", &ms);
        if (s != UA_BAD_TCP_SERVER_TOO_BUSY)
            wrong++;
        if (ms > slowest)
            slowest = ms;
        if (is_stats_workers("refused_blocked", n, 2) != 2)
            n[0] = n[1] = 0;
    }
    itest_check(wrong == 0 && n[0] > 0 && n[1] > 0,
                "blocked 127.0.0.1: %d connections, %d not refused with "
                "BadTcpServerTooBusy; refused by worker 0: %lu, worker 1: "
                "%lu", tries, wrong, n[0], n[1]);
    itest_check(slowest < 1000, "refused within %llu ms",
                (unsigned long long)slowest);
    wrong = 0;
    for (int i = 0; i < 10; i++) {
        s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app,
                      app_len, key, uri, &sig);
        if (s != UA_BAD_TCP_SERVER_TOO_BUSY)
            wrong++;
    }
    itest_check(wrong == 0, "blocked 127.0.0.1, a client that sends HEL at "
                "once: %d of 10 did not read BadTcpServerTooBusy", wrong);
    s = uaconn_open(&pre, 0);
    itest_check(s == UA_BAD_TCP_SERVER_TOO_BUSY,
                "OPN on a connection opened before the block: 0x%08X "
                "(BadTcpServerTooBusy)", s);
    ua_client_clear(&pre.cl);
    uaconn_clear(&pre);
    is_src = "127.0.0.2";
    s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app, app_len,
                  key, uri, &sig);
    is_src = NULL;
    itest_check(s == UA_GOOD, "127.0.0.2 is served meanwhile: 0x%08X", s);
    itest_check(itest_ms() - t_block < IS_BLOCK_MS,
                "(the checks above ran within the block: %llu ms of %u)",
                (unsigned long long)(itest_ms() - t_block), IS_BLOCK_MS);

    /* After the block. */
    ms = itest_ms() - t_block;
    if (ms < IS_BLOCK_MS + 300)
        itest_sleep_ms((unsigned)(IS_BLOCK_MS + 300 - ms));
    s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app, app_len,
                  key, uri, &sig);
    itest_check(s == UA_GOOD, "after the block 127.0.0.1 is served: "
                "0x%08X", s);

    /* Logins: two failures and the right password works ... */
    for (int i = 0; i < 2; i++) {
        s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:edge", "op",
                     "wrong", false, &w, NULL);
        itest_check(s == UA_BAD_IDENTITY_TOKEN_REJECTED,
                    "2 workers: wrong password %d: 0x%08X", i + 1, s);
    }
    s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:edge", "op", "op-secret",
                 false, &w, NULL);
    itest_check(s == UA_GOOD, "2 failed logins (threshold 3), then the right "
                "password: 0x%08X", s);
    /* ... three, counted on both workers together, block the client. */
    for (int i = 0; i < 3; i++) {
        s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:global", "op",
                     "wrong", false, &w, NULL);
        itest_check(s == UA_BAD_IDENTITY_TOKEN_REJECTED,
                    "2 workers: wrong password %d of another client: "
                    "0x%08X", i + 1, s);
    }
    wrong = 0;
    n[0] = n[1] = 0;
    for (tries = 0; tries < IS_BOTH_TRIES && (n[0] == 0 || n[1] == 0);
         tries++) {
        s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:global", "op",
                     "op-secret", false, &w, NULL);
        if (s != UA_BAD_USER_ACCESS_DENIED)
            wrong++;
        if (is_stats_workers("logins_blocked", n, 2) != 2)
            n[0] = n[1] = 0;
    }
    itest_check(wrong == 0 && n[0] > 0 && n[1] > 0,
                "blocked client: %d logins, %d not BadUserAccessDenied; "
                "refused by worker 0: %lu, worker 1: %lu", tries, wrong,
                n[0], n[1]);
    itest_check(itest_stop(is_broker, 5000) == 0,
                "SIGTERM: the 2-worker broker exits 0");
    is_broker = -1;
    ua_crypto_key_clear(&bkey);
}

/*
 * 9. Failed logins per source address, on a broker with two workers and
 * the default thresholds (3 per ApplicationUri, 10 per address; the
 * window made longer than the test).  127.0.0.1 tries a wrong password
 * under a new ApplicationUri each time, so the per-client count never
 * reaches 3: 9 failures (threshold - 1) and the right password still logs
 * in (and takes back only its own provisional failure: the 9 stay); the
 * 10th failure blocks the address: every UserName login from it, on
 * either worker, whatever its ApplicationUri and password, is
 * BadUserAccessDenied, while 127.0.0.2 logs in and 127.0.0.1 may still
 * open anonymous sessions.
 */
#define IS_IP_FAILS 10          /* login_failure_ip_threshold's default */

static void
is_login_ip(const char *bin)
{
    unsigned long n[2];
    char          port[8], stats[32], app[64];
    ua_status     s = UA_BAD_TIMEOUT, w;
    int           tries, wrong = 0, k = 0;

    is_port = itest_free_port();
    is_sport = itest_free_port();
    if (is_port == 0 || is_sport == 0 || is_port == is_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", is_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", is_sport);
    {
        char *const argv[] = { (char *)bin, "-w", "2", "-p", port, "--stats",
                                stats, "--runtime-dir", is_run, "--vars", "10",
                                "--set", "security.login_failure_window_ms="
                                         "120000", NULL };

        is_broker = itest_spawn(is_log, argv);
    }
    printf("# broker (2 workers, login throttle per address) pid %d, "
           "opc.tcp port %u\n", (int)is_broker, is_port);
    for (int i = 0; i < IS_START_MS / 100 && s != UA_GOOD; i++) {
        itest_sleep_ms(100);
        s = is_login(NULL, 0, NULL, 0, NULL, NULL, NULL, NULL, false, &w,
                     NULL);
    }
    if (s != UA_GOOD)
        itest_fatal("login per address: no session: 0x%08X", s);

    /* threshold - 1 failures, each under a fresh ApplicationUri ... */
    for (int i = 0; i < IS_IP_FAILS - 1; i++) {
        snprintf(app, sizeof(app), "urn:integ:rotate:%d", k++);
        s = is_login(NULL, 0, NULL, 0, NULL, app, "op", "wrong", false, &w,
                     NULL);
        if (s != UA_BAD_IDENTITY_TOKEN_REJECTED)
            wrong++;
    }
    itest_check(wrong == 0, "%d wrong passwords from 127.0.0.1 under %d "
                "ApplicationUris: %d not BadIdentityTokenRejected",
                IS_IP_FAILS - 1, IS_IP_FAILS - 1, wrong);
    /* ... still allowed ... */
    snprintf(app, sizeof(app), "urn:integ:rotate:%d", k++);
    s = is_login(NULL, 0, NULL, 0, NULL, app, "op", "op-secret", false, &w,
                 NULL);
    itest_check(s == UA_GOOD, "%d failures of 127.0.0.1 (threshold %d): the "
                "right password logs in: 0x%08X", IS_IP_FAILS - 1,
                IS_IP_FAILS, s);
    /* ... the threshold-th blocks the address (the success above took
     * back its own failure only). */
    snprintf(app, sizeof(app), "urn:integ:rotate:%d", k++);
    s = is_login(NULL, 0, NULL, 0, NULL, app, "op", "wrong", false, &w,
                 NULL);
    itest_check(s == UA_BAD_IDENTITY_TOKEN_REJECTED,
                "wrong password %d from 127.0.0.1: 0x%08X", IS_IP_FAILS, s);
    wrong = 0;
    n[0] = n[1] = 0;
    for (tries = 0; tries < IS_BOTH_TRIES && (n[0] == 0 || n[1] == 0);
         tries++) {
        snprintf(app, sizeof(app), "urn:integ:rotate:%d", k++);
        s = is_login(NULL, 0, NULL, 0, NULL, app, "op", "op-secret", false,
                     &w, NULL);
        if (s != UA_BAD_USER_ACCESS_DENIED)
            wrong++;
        if (is_stats_workers("logins_blocked", n, 2) != 2)
            n[0] = n[1] = 0;
    }
    itest_check(wrong == 0 && n[0] > 0 && n[1] > 0,
                "127.0.0.1 blocked: %d logins (the right password, a new "
                "ApplicationUri each), %d not BadUserAccessDenied; refused "
                "by worker 0: %lu, worker 1: %lu", tries, wrong, n[0], n[1]);
    s = is_login(NULL, 0, NULL, 0, NULL, NULL, NULL, NULL, false, &w, NULL);
    itest_check(s == UA_GOOD, "127.0.0.1 blocked: an anonymous session "
                "(no credentials) still works: 0x%08X", s);
    is_src = "127.0.0.2";
    s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:rotate:0", "op",
                 "op-secret", false, &w, NULL);
    is_src = NULL;
    itest_check(s == UA_GOOD, "127.0.0.2 logs in meanwhile (an "
                "ApplicationUri 127.0.0.1 failed with): 0x%08X", s);
    itest_check(itest_stop(is_broker, 5000) == 0,
                "SIGTERM: the login-throttled broker exits 0");
    is_broker = -1;
}

/*
 * 10. The accept rate (docs/security.md cases 10 and 86 in miniature): a broker
 * taking 5 connections a second after a burst of 10.  An established
 * session first; then 30 connects at once: about 10 are taken, the rest
 * get ERR BadTcpServerTooBusy at once and /stats counts them; the session
 * keeps reading; a second later a new session is served.  The answers
 * are read once the worker has taken or refused all 30 (its
 * connections_total and throttle.refused_rate in /stats): a connection
 * still in the listen queue would look taken.
 */
#define IS_FLOOD    30
#define IS_FLOOD_MS 20000       /* for the worker to see all 30 */

static void
is_accept_rate(const char *bin)
{
    static int         fds[IS_FLOOD];
    struct sockaddr_in sa = { .sin_family = AF_INET };
    struct uaconn      ctl;
    unsigned long      n[2];
    uint64_t           t0, conn0 = 0, conn = 0, ref0 = 0, ref = 0;
    uint8_t            b[64];
    char               port[8], stats[32];
    ua_status          s = UA_BAD_TIMEOUT;
    int                refused = 0, taken = 0, other = 0;
    ssize_t            r;

    is_port = itest_free_port();
    is_sport = itest_free_port();
    if (is_port == 0 || is_sport == 0 || is_port == is_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", is_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", is_sport);
    {
        char *const argv[] = { (char *)bin, "-w", "1", "-p", port, "--stats",
                                stats, "--runtime-dir", is_run, "--vars", "10",
                                "--set", "limits.accept_rate=5",
                                "--set", "limits.accept_burst=10", NULL };

        is_broker = itest_spawn(is_log, argv);
    }
    for (int i = 0; i < IS_START_MS / 200 && s != UA_GOOD; i++) {
        itest_sleep_ms(200);
        uaconn_init(&ctl);
        s = uaconn_start(&ctl, "127.0.0.1", is_port);
        if (s != UA_GOOD)
            uaconn_clear(&ctl);
    }
    if (s != UA_GOOD)
        itest_fatal("accept rate: no session: 0x%08X", s);
    /* The burst back (the start-up took some). */
    itest_sleep_ms(2500);
    if (!itest_worker_u64(is_sport, 0, "connections_total", &conn0)
        || !itest_worker_u64(is_sport, 0, "refused_rate", &ref0))
        itest_fatal("accept rate: no connections_total in /stats");
    sa.sin_port = htons(is_port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    t0 = itest_ms();
    for (int i = 0; i < IS_FLOOD; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] == -1
            || connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) == -1)
            itest_fatal("connect: %s", strerror(errno));
    }
    /* Until the worker took or refused every one. */
    do {
        itest_sleep_ms(50);
        if (!itest_worker_u64(is_sport, 0, "connections_total", &conn)
            || !itest_worker_u64(is_sport, 0, "refused_rate", &ref))
            conn = conn0, ref = ref0;
        ref -= ref0;
    } while (conn - conn0 + ref < IS_FLOOD && itest_ms() - t0 < IS_FLOOD_MS);
    itest_check(conn - conn0 + ref == IS_FLOOD, "the worker took %llu and "
                "refused %llu of %d connects", (unsigned long long)(conn
                - conn0), (unsigned long long)ref, IS_FLOOD);
    for (int i = 0; i < IS_FLOOD; i++) {
        r = recv(fds[i], b, sizeof(b), MSG_DONTWAIT);
        if (r >= 12 && memcmp(b, "ERRF", 4) == 0
            && ((ua_status)b[8] | (ua_status)b[9] << 8
                | (ua_status)b[10] << 16 | (ua_status)b[11] << 24)
                   == UA_BAD_TCP_SERVER_TOO_BUSY)
            refused++;
        else if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
            taken++;
        else
            other++;
        close(fds[i]);
    }
    /* 10 at once, then one per 200 ms while they arrived and were read. */
    itest_check(other == 0 && taken >= 10
                    && taken <= 10 + 1 + (int)((itest_ms() - t0) / 200),
                "%d connects at once (rate 5/s, burst 10): %d taken, %d "
                "refused with BadTcpServerTooBusy, %d other", IS_FLOOD,
                taken, refused, other);
    if (is_stats_workers("refused_rate", n, 1) != 1)
        n[0] = ULONG_MAX;
    itest_check(n[0] - ref0 == (unsigned long)refused,
                "/stats throttle.refused_rate %lu (want %d)", n[0], refused);
    s = is_read_time(&ctl);
    itest_check(s == UA_GOOD, "the established session keeps reading: "
                "0x%08X", s);
    uaconn_close_session(&ctl);
    uaconn_close(&ctl);
    ua_client_clear(&ctl.cl);
    uaconn_clear(&ctl);
    itest_sleep_ms(1000);
    uaconn_init(&ctl);
    s = uaconn_start(&ctl, "127.0.0.1", is_port);
    if (s == UA_GOOD)
        s = is_read_time(&ctl);
    itest_check(s == UA_GOOD, "a second later a new session is served: "
                "0x%08X", s);
    if (s == UA_GOOD) {
        uaconn_close_session(&ctl);
        uaconn_close(&ctl);
    }
    ua_client_clear(&ctl.cl);
    uaconn_clear(&ctl);
    itest_check(itest_stop(is_broker, 5000) == 0,
                "SIGTERM: the rate-limited broker exits 0");
    is_broker = -1;
}

int
main(int argc, char **argv)
{
    static uint8_t        app[UA_CERT_DER_MAX];
    static uint8_t        fresh[UA_CERT_DER_MAX];
    static struct ua_crypto_key key, fkey, ukey;
    static uint8_t        ucert[UA_CERT_DER_MAX];
    size_t                ucert_len = 0;
    static const struct {
        unsigned policy;
        uint8_t  mode;
        const char *name;
    } combos[] = {
        { UA_POLICY_BASIC256SHA256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
          "Basic256Sha256 SignAndEncrypt" },
        { UA_POLICY_AES128_SHA256_RSAOAEP, UA_MESSAGESECURITYMODE_SIGN,
          "Aes128_Sha256_RsaOaep Sign" },
        { UA_POLICY_AES256_SHA256_RSAPSS,
          UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
          "Aes256_Sha256_RsaPss SignAndEncrypt" },
    };
    const struct ua_policy *b256 = ua_crypto_policy_get(
        UA_POLICY_BASIC256SHA256);
    struct ua_cert_params   cp;
    char                    bin[PATH_MAX], buf[PATH_MAX + 128];
    char                    path[PATH_MAX + 128];
    char                    uri[256], name[UA_CERT_REJECTED_NAME_LEN];
    uint8_t                 thumb[UA_CERT_THUMB_LEN];
    size_t                  app_len, fresh_len;
    struct stat             st;
    ua_status               s, sig;
    bool                    found = false;

    itest_init("integ_security");
    (void)argc;
    itest_guard(IS_WATCHDOG_S, is_log);
    ua_arena_init(&is_arena, malloc(IS_ARENA), IS_ARENA);
    if (ua_crypto_init() != UA_GOOD)
        itest_fatal("ua_crypto_init");
    itest_broker_bin(argv[0], bin, sizeof(bin));
    /* The client's certificate and key (tests/unit/proto/pki). */
    itest_client_identity(IS_PKI_SRC, app, sizeof(app), &app_len, &key, uri,
                          sizeof(uri));

    /* The runtime directory with the client certificate trusted. */
    itest_tmpdir("uabroker-sec", is_dir, sizeof(is_dir));
    snprintf(is_run, sizeof(is_run), "%s/run", is_dir);
    snprintf(is_log, sizeof(is_log), "%s/broker.log", is_dir);
    snprintf(path, sizeof(path), "%s/run/pki/trusted/certs", is_dir);
    itest_mkdirs(path);
    snprintf(path, sizeof(path), "%s/run/pki/trusted/certs/app.der", is_dir);
    if (itest_write_file(path, app, app_len) != 0)
        itest_fatal("cannot write %s", path);
    /* An X509 user, trusted in trusted_users/certs. */
    memset(&cp, 0, sizeof(cp));
    cp.app_uri = "urn:integ:security:user";
    cp.common_name = "integ_security user";
    cp.not_before = (int64_t)time(NULL) - 3600;
    cp.days = 2;
    if (ua_crypto_key_generate(&ukey, 2048) != UA_GOOD
        || ua_cert_create(&cp, &ukey, ucert, sizeof(ucert), &ucert_len)
               != UA_GOOD)
        itest_fatal("cannot make a user certificate");
    snprintf(path, sizeof(path), "%s/run/pki/trusted_users", is_dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/run/pki/trusted_users/certs", is_dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/run/pki/trusted_users/certs/user.der",
             is_dir);
    if (itest_write_file(path, ucert, ucert_len) != 0)
        itest_fatal("cannot write %s", path);
    /* The users file beside pki/ (security.users_file = users). */
    {
        FILE *f;

        snprintf(path, sizeof(path), "%s/run/users", is_dir);
        f = fopen(path, "w");
        if (f == NULL)
            itest_fatal("cannot write %s", path);
        is_user_line(f, "op", "operator", "op-secret");
        is_user_line(f, "view", "viewer", "view-secret");
        fclose(f);
    }

    is_start_broker(bin);
    is_endpoints();

    /* 2. The three policies with the trusted certificate. */
    for (size_t i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
        s = is_secure(ua_crypto_policy_get(combos[i].policy), combos[i].mode,
                      app, app_len, &key, uri, &sig);
        itest_check(s == UA_GOOD, "%s: session and Read: 0x%08X (%s)",
                 combos[i].name, s, ua_status_name(s));
        itest_check(sig == UA_GOOD, "%s: serverSignature verifies: 0x%08X",
                 combos[i].name, sig);
    }

    /* 3. The certificate's URI must be the client's ApplicationUri. */
    s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app, app_len,
                  &key, "urn:not:the:certificates", &sig);
    itest_check(s == UA_BAD_CERTIFICATE_URI_INVALID,
             "a foreign ApplicationUri: 0x%08X (BadCertificateUriInvalid)",
             s);

    /* 4. An untrusted certificate: refused, then in rejected/. */
    memset(&cp, 0, sizeof(cp));
    cp.app_uri = "urn:integ:security:fresh";
    cp.common_name = "integ_security fresh";
    cp.not_before = (int64_t)time(NULL) - 3600;
    cp.days = 2;
    if (ua_crypto_key_generate(&fkey, 2048) != UA_GOOD
        || ua_cert_create(&cp, &fkey, fresh, sizeof(fresh), &fresh_len)
               != UA_GOOD
        || ua_cert_thumbprint(fresh, fresh_len, thumb) != UA_GOOD)
        itest_fatal("cannot make a client certificate");
    ua_cert_rejected_name(thumb, name);
    s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, fresh,
                  fresh_len, &fkey, cp.app_uri, &sig);
    itest_check(s == UA_BAD_SECURITY_CHECKS_FAILED,
             "untrusted client certificate: 0x%08X (BadSecurityChecksFailed)",
             s);
    snprintf(path, sizeof(path), "%s/run/pki/rejected/%s", is_dir, name);
    for (int i = 0; i < 40 && !found; i++) {
        found = stat(path, &st) == 0;
        if (!found)
            itest_sleep_ms(100);
    }
    itest_check(found, "rejected/%s written by the broker", name);

    /* 5. Trusted by the operator: moved, SIGHUP, accepted. */
    snprintf(buf, sizeof(buf), "%s/run/pki/trusted/certs/%s", is_dir, name);
    itest_check(found && rename(path, buf) == 0, "moved to trusted/certs");
    kill(is_broker, SIGHUP);
    s = UA_BAD_UNEXPECTED_ERROR;
    for (int i = 0; i < 20 && s != UA_GOOD; i++) {
        itest_sleep_ms(100);
        s = is_secure(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, fresh,
                      fresh_len, &fkey, cp.app_uri, &sig);
    }
    itest_check(s == UA_GOOD, "after SIGHUP the certificate is trusted: "
             "0x%08X", s);

    /* 6. Users and roles. */
    {
        uint8_t   ual = 0xFF;
        ua_status w;

        s = is_login(NULL, 0, NULL, 0, NULL, NULL, NULL, NULL, true, &w,
                     &ual);
        itest_check(s == UA_GOOD && w == UA_BAD_USER_ACCESS_DENIED,
                 "anonymous Write: 0x%08X / 0x%08X (BadUserAccessDenied)", s,
                 w);
        itest_check(s == UA_GOOD && (ual & 0x01) && !(ual & 0x02),
                 "anonymous UserAccessLevel 0x%02X: CurrentRead, no "
                 "CurrentWrite", ual);
        ual = 0xFF;
        s = is_login(NULL, 0, NULL, 0, NULL, NULL, "view", "view-secret",
                     true, &w, &ual);
        itest_check(s == UA_GOOD, "viewer logs in on None (Basic256Sha256 "
                 "secret): 0x%08X", s);
        itest_check(w == UA_BAD_USER_ACCESS_DENIED,
                 "viewer Write: 0x%08X (BadUserAccessDenied)", w);
        itest_check((ual & 0x01) && !(ual & 0x02),
                 "viewer UserAccessLevel 0x%02X: no CurrentWrite", ual);
        ual = 0;
        s = is_login(b256, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT, app,
                     app_len, &key, uri, "op", "op-secret", true, &w, &ual);
        itest_check(s == UA_GOOD && w == UA_GOOD,
                 "operator on Basic256Sha256 SignAndEncrypt writes: "
                 "0x%08X / 0x%08X", s, w);
        itest_check((ual & 0x03) == 0x03,
                 "operator UserAccessLevel 0x%02X: CurrentRead and "
                 "CurrentWrite", ual);
        s = is_login(ua_crypto_policy_get(UA_POLICY_AES256_SHA256_RSAPSS),
                     UA_MESSAGESECURITYMODE_SIGN, app, app_len, &key, uri,
                     "op", "op-secret", false, &w, NULL);
        itest_check(s == UA_GOOD, "operator on Aes256_Sha256_RsaPss Sign "
                 "(OAEP-SHA256 secret): 0x%08X", s);
        for (int i = 0; i < 4; i++) {
            ua_status want = i < 3 ? UA_BAD_IDENTITY_TOKEN_REJECTED
                                   : UA_BAD_USER_ACCESS_DENIED;

            s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:throttled",
                         i == 1 ? "nobody" : "op", "wrong", false, &w,
                         NULL);
            itest_check(s == want, "wrong password, try %d: 0x%08X (%s)",
                     i + 1, s, ua_status_name(want));
        }
        s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:throttled", "op",
                     "op-secret", false, &w, NULL);
        itest_check(s == UA_BAD_USER_ACCESS_DENIED,
                 "throttled client, right password: 0x%08X", s);
        s = is_login(NULL, 0, NULL, 0, NULL, "urn:integ:other", "op",
                     "op-secret", false, &w, NULL);
        itest_check(s == UA_GOOD, "another client is not throttled: 0x%08X",
                 s);
        is_parallel_logins();
    }

    /* 7. X509 user tokens. */
    {
        ua_status w;

        s = is_login_x509(ucert, ucert_len, &ukey, &w);
        itest_check(s == UA_GOOD, "X509 user from trusted_users/ logs in: "
                 "0x%08X", s);
        itest_check(w == UA_BAD_USER_ACCESS_DENIED,
                 "X509 user (x509_role viewer) Write: 0x%08X", w);
        s = is_login_x509(fresh, fresh_len, &fkey, &w);
        itest_check(s == UA_BAD_IDENTITY_TOKEN_REJECTED,
                 "X509 user not in trusted_users/: 0x%08X "
                 "(BadIdentityTokenRejected)", s);
        s = is_login_x509(ucert, ucert_len, &fkey, &w);
        itest_check(s == UA_BAD_USER_SIGNATURE_INVALID,
                 "X509 user token signed by another key: 0x%08X "
                 "(BadUserSignatureInvalid)", s);
    }

    /* Clean stop. */
    itest_check(itest_stop(is_broker, 5000) == 0,
                "SIGTERM: the broker exits 0");
    is_broker = -1;

    /* 8. Throttling across two workers. */
    is_throttle(bin, app, app_len, &key, uri);
    /* 9. Failed logins per source address. */
    is_login_ip(bin);
    /* 10. The accept rate. */
    is_accept_rate(bin);
    ua_crypto_key_clear(&key);
    ua_crypto_key_clear(&fkey);
    ua_crypto_key_clear(&ukey);
    return itest_finish();
}
