/*
 * tests/bench/uabench_sec.c: uabench's --security part (tests/bench/
 * uabench.c describes the program): our client certificate (loaded, or
 * made and written out), the discovery (GetEndpoints on a None channel,
 * the endpoint of our policy and mode, the anonymous token's PolicyId),
 * the server certificate's checks, the session signatures, and the RSA
 * costs behind the connect scenario's RSA ceiling line.
 */
#include "uabench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/cert.h"
#include "proto/client.h"
#include "proto/crypto.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

static int ub_load_cert(const char *path, uint8_t **der, size_t *len);
static int ub_read_file(const char *path, uint8_t **buf, size_t *len);
static int ub_write_file(const char *path, const uint8_t *buf, size_t len);
static ua_status ub_disc_wait(int fd, struct ua_client *cl, uint8_t *rbuf,
                              size_t rcap, size_t *rlen, size_t *used,
                              struct ua_client_event *ev);
static ua_status ub_server_cert_check(struct ub *b,
                                      const struct ua_endpoint_description *e);
static double ub_cpu_now_us(void);
static double ub_thread_cpu_us(void);
static bool ub_rsa_server_keys(struct ub *b, struct ua_crypto_key **priv,
                               struct ua_crypto_key **pub);

/* ------------------------------------------------------------ security */

static int
ub_read_file(const char *path, uint8_t **buf, size_t *len)
{
    FILE  *f = fopen(path, "rb");
    long   n;

    *buf = NULL;
    if (f == NULL) {
        fprintf(stderr, "uabench: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0
        || n > (long)(UA_CERT_DER_MAX * UA_CERT_CHAIN_MAX)
        || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "uabench: %s: not a certificate or key file\n",
                path);
        fclose(f);
        return -1;
    }
    *buf = malloc((size_t)n + 1);
    if (*buf == NULL || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "uabench: %s: cannot read it\n", path);
        free(*buf);
        *buf = NULL;
        fclose(f);
        return -1;
    }
    (*buf)[n] = '\0';
    *len = (size_t)n;
    fclose(f);
    return 0;
}

static int
ub_write_file(const char *path, const uint8_t *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd == -1 || write(fd, buf, len) != (ssize_t)len) {
        fprintf(stderr, "uabench: %s: %s\n", path, strerror(errno));
        if (fd != -1)
            close(fd);
        return -1;
    }
    return close(fd) == 0 ? 0 : -1;
}

/* A certificate file, DER (a chain, leaf first) or PEM (the first one),
 * into a fresh DER buffer. */
static int
ub_load_cert(const char *path, uint8_t **der, size_t *len)
{
    uint8_t *buf;
    size_t   n;

    if (ub_read_file(path, &buf, &n) != 0)
        return -1;
    if (n > 10 && memcmp(buf, "-----BEGIN", 10) == 0) {
        *der = malloc(UA_CERT_DER_MAX);
        if (*der == NULL
            || ua_cert_from_pem((const char *)buf, n, *der, UA_CERT_DER_MAX,
                                len) != UA_GOOD) {
            fprintf(stderr, "uabench: %s: no PEM certificate\n", path);
            free(buf);
            return -1;
        }
        free(buf);
        return 0;
    }
    *der = buf;
    *len = n;
    return 0;
}

/*
 * Our certificate and key: --cert/--key, or a fresh RSA key and a
 * self-signed application instance certificate (written out with
 * --write-cert/--write-key, for a server's trust list).  Checks that the
 * key belongs to the certificate.
 */
int
ub_sec_init(struct ub *b)
{
    struct ua_cert_der    chain[UA_CERT_CHAIN_MAX];
    struct ua_cert        c;
    size_t                n = 0, sl = 0;
    uint8_t               sig[UA_RSA_MAX_BYTES];
    static const uint8_t  probe[] = "uabench";
    ua_status             st;

    if (ua_crypto_init() != UA_GOOD) {
        fprintf(stderr, "uabench: cannot initialise the crypto library\n");
        return -1;
    }
    if (b->cert_file != NULL) {
        uint8_t *kbuf;
        size_t   klen;

        if (ub_load_cert(b->cert_file, &b->cert, &b->cert_len) != 0
            || ub_read_file(b->key_file, &kbuf, &klen) != 0)
            return -1;
        st = ua_crypto_key_load(&b->key, kbuf, klen);
        ua_crypto_wipe(kbuf, klen);
        free(kbuf);
        if (st != UA_GOOD) {
            fprintf(stderr, "uabench: %s: %s\n", b->key_file,
                    ua_status_name(st));
            return -1;
        }
    } else {
        char                 host[64] = "localhost";
        const char          *dns[1] = { host };
        struct ua_cert_params cp;

        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        snprintf(b->app_uri, sizeof(b->app_uri), "urn:%s:uabench", host);
        memset(&cp, 0, sizeof(cp));
        cp.app_uri = b->app_uri;
        cp.common_name = "uabench";
        cp.organization = "uabench";
        cp.dns = dns;
        cp.n_dns = 1;
        cp.not_before = (int64_t)time(NULL) - 3600;
        cp.days = 365;
        b->cert = malloc(UA_CERT_DER_MAX);
        if (b->cert == NULL)
            return -1;
        st = ua_crypto_key_generate(&b->key, UB_KEY_BITS);
        if (st == UA_GOOD)
            st = ua_cert_create(&cp, &b->key, b->cert, UA_CERT_DER_MAX,
                                &b->cert_len);
        if (st != UA_GOOD) {
            fprintf(stderr, "uabench: cannot make a client certificate: "
                    "%s\n", ua_status_name(st));
            return -1;
        }
    }
    if (ua_cert_chain_split(b->cert, b->cert_len, chain, UA_CERT_CHAIN_MAX,
                            &n) != UA_GOOD || n == 0
        || ua_cert_parse(chain[0].der, chain[0].len, &c) != UA_GOOD
        || c.uri == NULL || c.uri_len >= sizeof(b->app_uri)) {
        fprintf(stderr, "uabench: the client certificate does not parse or "
                "has no SubjectAltName URI (the ApplicationUri)\n");
        return -1;
    }
    memcpy(b->app_uri, c.uri, c.uri_len);
    b->app_uri[c.uri_len] = '\0';
    /* The key must be the certificate's: sign, verify with the cert. */
    if (ua_crypto_key_from_cert(&b->cpub, chain[0].der, chain[0].len)
            != UA_GOOD
        || ua_crypto_rsa_sign(&b->key, UA_RSA_SIG_PKCS1_SHA256, probe,
                              sizeof(probe), sig, sizeof(sig), &sl)
               != UA_GOOD
        || ua_crypto_rsa_verify(&b->cpub, UA_RSA_SIG_PKCS1_SHA256, probe,
                                sizeof(probe), sig, sl) != UA_GOOD) {
        fprintf(stderr, "uabench: the key is not the certificate's\n");
        return -1;
    }
    if (b->write_cert != NULL
        && ub_write_file(b->write_cert, b->cert, b->cert_len) != 0)
        return -1;
    if (b->write_key != NULL) {
        uint8_t kbuf[4 * UA_RSA_MAX_BYTES + 1024];
        size_t  klen = 0;

        if (ua_crypto_key_write(&b->key, false, kbuf, sizeof(kbuf), &klen)
                != UA_GOOD
            || ub_write_file(b->write_key, kbuf, klen) != 0)
            return -1;
        ua_crypto_wipe(kbuf, sizeof(kbuf));
    }
    return 0;
}

/*
 * The next event of a blocking discovery connection: drops the chunk of
 * the previous one (*used bytes), reads until a chunk gives an event.
 */
static ua_status
ub_disc_wait(int fd, struct ua_client *cl, uint8_t *rbuf, size_t rcap,
             size_t *rlen, size_t *used, struct ua_client_event *ev)
{
    for (;;) {
        uint32_t  chunk;
        ssize_t   n;
        ua_status st;

        if (*used > 0) {
            memmove(rbuf, rbuf + *used, *rlen - *used);
            *rlen -= *used;
            *used = 0;
        }
        st = ua_client_frame(cl, rbuf, *rlen, &chunk);
        if (st != UA_GOOD)
            return st;
        if (chunk != 0 && chunk <= *rlen) {
            st = ua_client_process(cl, rbuf, chunk, ub_mono_ns() / 1000000u,
                                   ev);
            *used = chunk;
            if (st != UA_GOOD || ev->kind != UA_CLIENT_EV_NONE)
                return st;
            continue;
        }
        if (chunk > rcap)
            return UA_BAD_TCP_MESSAGE_TOO_LARGE;
        n = read(fd, rbuf + *rlen, rcap - *rlen);
        if (n == -1 && errno == EINTR)
            continue;
        if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return UA_BAD_TIMEOUT;
        if (n <= 0)
            return UA_BAD_CONNECTION_CLOSED;
        *rlen += (size_t)n;
    }
}

/*
 * The server certificate of the chosen endpoint, checked as a client
 * checks a server's (Part 4 §6.1.3): structure, chain, signatures, the
 * policy's key length and hash, validity, the endpoint's ApplicationUri in
 * the SubjectAltName, key usage for a server.  Trust: --server-trust FILE,
 * or else the leaf itself (trust on first use: the benchmark has no trust
 * list of its own).  Revocation is not checked (no CRLs here).
 */
static ua_status
ub_server_cert_check(struct ub *b, const struct ua_endpoint_description *e)
{
    const struct ua_string *sc = &e->server_certificate;
    struct ua_cert_der      chain[UA_CERT_CHAIN_MAX], trust;
    struct ua_cert_store    store;
    struct ua_cert_check    chk;
    struct ua_cert_verdict  v;
    struct ua_cert          leaf;
    uint8_t                *tbuf = NULL;
    size_t                  n = 0, tlen = 0;
    ua_status               st;

    if (sc->len <= 0
        || ua_cert_chain_split(sc->data, (size_t)sc->len, chain,
                               UA_CERT_CHAIN_MAX, &n) != UA_GOOD || n == 0
        || ua_cert_parse(chain[0].der, chain[0].len, &leaf) != UA_GOOD)
        return UA_BAD_CERTIFICATE_INVALID;
    memset(&store, 0, sizeof(store));
    if (b->trust_file != NULL) {
        if (ub_load_cert(b->trust_file, &tbuf, &tlen) != 0)
            return UA_BAD_CERTIFICATE_UNTRUSTED;
        trust.der = tbuf;
        trust.len = tlen;
    } else {
        trust = chain[0];
    }
    store.trusted = &trust;
    store.n_trusted = 1;
    store.issuers = chain + 1;
    store.n_issuers = n - 1;
    ua_cert_check_init(&chk, b->policy, (int64_t)time(NULL));
    chk.role = UA_CERT_ROLE_SERVER;
    chk.suppress = UA_CERT_SUPPRESS_REVOCATION_UNKNOWN
                   | UA_CERT_SUPPRESS_ISSUER_REVOCATION_UNKNOWN;
    if (e->server.application_uri.len > 0) {
        chk.app_uri = e->server.application_uri.data;
        chk.app_uri_len = (size_t)e->server.application_uri.len;
    }
    memset(&v, 0, sizeof(v));
    st = ua_cert_validate(sc->data, (size_t)sc->len, &store, &chk, &v);
    free(tbuf);
    if (st != UA_GOOD) {
        fprintf(stderr, "uabench: the server certificate (%s) fails the "
                "check at depth %u: %s (0x%08X)%s\n", leaf.subject_str,
                (unsigned)v.depth, ua_status_name(st), st,
                st == UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE
                    ? "; --server-trust FILE names its CA" : "");
        return st;
    }
    b->server_cert = malloc((size_t)sc->len);
    if (b->server_cert == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(b->server_cert, sc->data, (size_t)sc->len);
    b->server_cert_len = (size_t)sc->len;
    b->server_bits = leaf.key_bits;
    if (!b->quiet)
        fprintf(stderr, "uabench: server certificate %s, RSA %u, checked%s\n",
                leaf.subject_str, leaf.key_bits,
                b->trust_file != NULL ? " against --server-trust"
                                      : " (its own trust anchor)");
    return UA_GOOD;
}

/* The PolicyId of an anonymous UserTokenPolicy: of an endpoint with our
 * policy and mode first, then of any; kept in b->anon_policy. */
void
ub_anon_policy(struct ub *b, const struct ua_endpoint_description *e,
               int32_t n)
{
    const char *uri = b->policy != NULL ? b->policy->uri : UA_SC_POLICY_NONE;
    uint8_t     mode = b->policy != NULL ? b->mode
                                         : UA_MESSAGESECURITYMODE_NONE;

    if (b->anon_policy[0] != '\0')
        return;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < n; i++) {
            if (pass == 0 && (e[i].security_mode != mode
                              || !ua_string_eq(&e[i].security_policy_uri,
                                               uri)))
                continue;
            for (int32_t j = 0; j < e[i].n_user_identity_tokens; j++) {
                const struct ua_user_token_policy *t =
                    &e[i].user_identity_tokens[j];

                if (t->token_type == UA_USERTOKENTYPE_ANONYMOUS
                    && t->policy_id.len > 0
                    && (size_t)t->policy_id.len < sizeof(b->anon_policy)) {
                    memcpy(b->anon_policy, t->policy_id.data,
                           (size_t)t->policy_id.len);
                    b->anon_policy[t->policy_id.len] = '\0';
                    return;
                }
            }
        }
}

/*
 * GetEndpoints on a SecurityPolicy None channel (discovery needs no
 * security, Part 4 §5.4.1), before any session: the endpoint with our
 * policy and mode, its server certificate checked, its anonymous
 * PolicyId.  Blocking, bounded by UB_DISC_MS per step.
 */
int
ub_discover(struct ub *b)
{
    struct ua_client                 cl;
    struct ua_client_config          cfg = ua_client_config_default;
    struct ua_sc_out                 out;
    struct ua_client_event           ev;
    struct ua_get_endpoints_request  ge;
    struct ua_get_endpoints_response ger;
    struct timeval tv = { UB_DISC_MS / 1000, (UB_DISC_MS % 1000) * 1000 };
    const struct ua_endpoint_description *e = NULL;
    uint8_t   *rbuf = malloc((size_t)cfg.recv_buffer * 2);
    uint8_t   *wbuf = malloc(65536);
    uint8_t   *abuf = malloc(UB_RESP_MAX);
    size_t     rlen = 0, used = 0;
    int        fd = -1, rc = -1;
    ua_status  st = UA_BAD_OUT_OF_MEMORY;
    const char *what = "out of memory";

    memset(&cl, 0, sizeof(cl));
    if (rbuf == NULL || wbuf == NULL || abuf == NULL)
        goto done;
    out.buf = wbuf;
    out.cap = 65536;
    out.len = 0;
    ua_client_init(&cl, &cfg, abuf, UB_RESP_MAX);
    cl.fill_header = true;
    what = "connect()";
    st = UA_BAD_COMMUNICATION_ERROR;
    fd = socket(b->ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        goto done;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, b->ai->ai_addr, b->ai->ai_addrlen) == -1)
        goto done;
    /* HEL/ACK, OPN (None), GetEndpoints: one exchange each. */
    for (int step = 0; step < 3; step++) {
        static const uint8_t want[3] = { UA_CLIENT_EV_ACK, UA_CLIENT_EV_OPEN,
                                         UA_CLIENT_EV_MSG };
        static const char *const names[3] = { "HEL", "OpenSecureChannel",
                                              "GetEndpoints" };

        what = names[step];
        out.len = 0;
        if (step == 0) {
            st = ua_client_hello(&cl, b->url, &out);
        } else if (step == 1) {
            st = ua_client_open(&cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 0,
                                NULL, &out);
        } else {
            memset(&ge, 0, sizeof(ge));
            ge.request_header.audit_entry_id.len = -1;
            ge.endpoint_url = ua_string_from(b->url);
            ge.n_locale_ids = -1;
            ge.n_profile_uris = -1;
            cl.now_dt = ub_now_dt();
            st = ua_client_request(&cl, &ua_types[UA_TYPE_GETENDPOINTSREQUEST],
                                   &ge, NULL, &out);
        }
        if (st != UA_GOOD)
            goto done;
        if (send(fd, out.buf, out.len, MSG_NOSIGNAL) != (ssize_t)out.len) {
            st = UA_BAD_CONNECTION_CLOSED;
            goto done;
        }
        st = ub_disc_wait(fd, &cl, rbuf, (size_t)cfg.recv_buffer * 2, &rlen,
                          &used, &ev);
        if (st == UA_GOOD && ev.kind != want[step])
            st = UA_BAD_UNKNOWN_RESPONSE;
        if (st == UA_GOOD && step == 1 && UA_STATUS_IS_BAD(ev.status))
            st = ev.status;
        if (st != UA_GOOD)
            goto done;
    }
    ua_arena_reset(&b->arena);
    st = ua_client_decode(&cl, &ev, &ua_types[UA_TYPE_GETENDPOINTSRESPONSE],
                          &ger, &b->arena);
    if (st != UA_GOOD)
        goto done;
    for (int32_t i = 0; i < ger.n_endpoints && e == NULL; i++)
        if (ger.endpoints[i].security_mode == b->mode
            && ua_string_eq(&ger.endpoints[i].security_policy_uri,
                            b->policy->uri))
            e = &ger.endpoints[i];
    if (e == NULL) {
        fprintf(stderr, "uabench: the server offers no %s endpoint in "
                "mode %s\n", b->policy->name,
                b->mode == UA_MESSAGESECURITYMODE_SIGN ? "Sign"
                                                       : "SignAndEncrypt");
        goto done_quiet;
    }
    what = "server certificate";
    st = ub_server_cert_check(b, e);
    if (st != UA_GOOD)
        goto done_quiet;
    ub_anon_policy(b, e, 1);
    out.len = 0;
    if (ua_client_close(&cl, &out) == UA_GOOD)
        (void)send(fd, out.buf, out.len, MSG_NOSIGNAL);
    rc = 0;
    goto done_quiet;
done:
    fprintf(stderr, "uabench: discovery (GetEndpoints) failed at %s: %s "
            "(0x%08X)\n", what, ua_status_name(st), st);
done_quiet:
    if (fd != -1)
        close(fd);
    ua_client_clear(&cl);
    free(rbuf);
    free(wbuf);
    free(abuf);
    return rc;
}

/*
 * Secured CreateSession answered: its serverCertificate must be the one
 * GetEndpoints gave, its serverSignature sign(clientCertificate ||
 * clientNonce) with that certificate's key (Part 4 §5.7.2); then our
 * clientSignature = sign(serverCertificate || serverNonce) (in the arena).
 */
ua_status
ub_session_sigs(struct ub *b, struct ub_sess *s,
                const struct ua_create_session_response *r,
                struct ua_signature_data *sig)
{
    const struct ua_policy *p = b->policy;
    const struct ua_string *sc = &r->server_certificate;
    const struct ua_string *sn = &r->server_nonce;
    size_t                  n, sl = 0;
    uint8_t                *buf, *out;

    if (sc->len <= 0 || (size_t)sc->len != b->server_cert_len
        || memcmp(sc->data, b->server_cert, b->server_cert_len) != 0)
        return UA_BAD_CERTIFICATE_INVALID;
    if (sn->len < UB_NONCE)
        return UA_BAD_NONCE_INVALID;
    n = b->cert_len + UB_NONCE;
    if ((size_t)sc->len + (size_t)sn->len > n)
        n = (size_t)sc->len + (size_t)sn->len;
    buf = ua_arena_alloc(&b->arena, n);
    out = ua_arena_alloc(&b->arena, UA_RSA_MAX_BYTES);
    if (buf == NULL || out == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(buf, b->cert, b->cert_len);
    memcpy(buf + b->cert_len, s->nonce, UB_NONCE);
    if (r->server_signature.signature.len <= 0
        || !ua_string_eq(&r->server_signature.algorithm, p->asym_sig_uri)
        || p->asym_verify(&s->cl.server_key, buf, b->cert_len + UB_NONCE,
                          r->server_signature.signature.data,
                          (size_t)r->server_signature.signature.len)
               != UA_GOOD)
        return UA_BAD_APPLICATION_SIGNATURE_INVALID;
    memcpy(buf, sc->data, (size_t)sc->len);
    memcpy(buf + sc->len, sn->data, (size_t)sn->len);
    if (p->asym_sign(&b->key, buf, (size_t)sc->len + (size_t)sn->len, out,
                     UA_RSA_MAX_BYTES, &sl) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    sig->algorithm = ua_string_from(p->asym_sig_uri);
    sig->signature.len = (int32_t)sl;
    sig->signature.data = out;
    return UA_GOOD;
}

/* ------------------------------------------------------------ RSA costs */

static double
ub_cpu_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* This thread's CPU time in µs. */
static double
ub_thread_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

enum ub_rsa_op { UB_RSA_SIGN, UB_RSA_DECRYPT, UB_RSA_VERIFY, UB_RSA_ENCRYPT,
                 UB_RSA_CERT };

/*
 * CPU µs of one operation: UB_RSA_BATCHES batches of at least
 * UB_RSA_BATCH_US each, the best batch's mean (the least disturbed by
 * the rest of the machine).  priv signs and decrypts; pub (its public
 * half, from a certificate) verifies and encrypts.  -1 when an operation
 * fails.
 */
static double
ub_rsa_cost(const struct ua_policy *p, enum ub_rsa_op op,
            struct ua_crypto_key *priv, struct ua_crypto_key *pub)
{
    static uint8_t data[1024];
    uint8_t        sig[UA_RSA_MAX_BYTES], csig[UA_RSA_MAX_BYTES];
    uint8_t        ct[UA_RSA_MAX_BYTES], work[2 * UA_RSA_MAX_BYTES];
    size_t         sl = 0, csl = 0, ctl = 0, n, pb;
    double         best = -1;

    pb = ua_crypto_rsa_plain_block(p->asym_enc, ua_crypto_key_bytes(pub));
    if (pb == 0 || ua_crypto_random(data, sizeof(data)) != UA_GOOD
        || p->asym_sign(priv, data, sizeof(data), sig, sizeof(sig), &sl)
               != UA_GOOD
        || ua_crypto_rsa_sign(priv, UA_RSA_SIG_PKCS1_SHA256, data,
                              sizeof(data), csig, sizeof(csig), &csl)
               != UA_GOOD
        || p->asym_encrypt(pub, data, pb, ct, sizeof(ct), &ctl) != UA_GOOD)
        return -1;
    for (int k = 0; k < UB_RSA_BATCHES; k++) {
        double   t0 = ub_cpu_now_us(), t;
        unsigned it = 0;
        ua_status st;

        do {
            switch (op) {
            case UB_RSA_SIGN:
                st = p->asym_sign(priv, data, sizeof(data), work,
                                  sizeof(work), &n);
                break;
            case UB_RSA_DECRYPT:
                memcpy(work, ct, ctl);
                st = p->asym_decrypt(priv, work, ctl, &n);
                break;
            case UB_RSA_VERIFY:
                st = p->asym_verify(pub, data, sizeof(data), sig, sl);
                break;
            case UB_RSA_ENCRYPT:
                st = p->asym_encrypt(pub, data, pb, work, sizeof(work), &n);
                break;
            case UB_RSA_CERT:
            default:
                st = ua_crypto_rsa_verify(pub, UA_RSA_SIG_PKCS1_SHA256, data,
                                          sizeof(data), csig, csl);
                break;
            }
            if (st != UA_GOOD)
                return -1;
            it++;
        } while ((t = ub_cpu_now_us() - t0) < UB_RSA_BATCH_US);
        if (best < 0 || t / it < best)
            best = t / it;
    }
    return best;
}

/*
 * The RSA operations of a handshake on this machine.  Server: private
 * ones with a key of the server certificate's size (ours when the sizes
 * match, else one made for this), public ones with our certificate's key
 * (the server works with that one).  Client: the other way round.
 */
/*
 * The keys the server's operations are timed with: ours when the server
 * certificate's size is ours, else key2 (made by ub_rsa_measure).  false
 * when key2 is needed but missing.
 */
static bool
ub_rsa_server_keys(struct ub *b, struct ua_crypto_key **priv,
                   struct ua_crypto_key **pub)
{
    *priv = &b->key;
    *pub = &b->cpub;
    if (b->server_bits == ua_crypto_key_bits(&b->key))
        return true;
    if (ua_crypto_key_bits(&b->key2) != b->server_bits)
        return false;
    *priv = &b->key2;
    *pub = &b->key2pub;
    return true;
}

int
ub_rsa_measure(struct ub *b, struct ub_rsa *r)
{
    struct ua_crypto_key *spriv = &b->key, *spub = &b->cpub;
    const struct ua_policy *p = b->policy;

    memset(r, 0, sizeof(*r));
    if (p == NULL)
        return -1;
    if (b->server_bits != ua_crypto_key_bits(&b->key)) {
        if (ua_crypto_key_bits(&b->key2) != b->server_bits) {
            struct ua_cert_params cp;
            uint8_t              *der = malloc(UA_CERT_DER_MAX);
            size_t                len = 0;
            ua_status             st;

            memset(&cp, 0, sizeof(cp));
            cp.app_uri = "urn:uabench:rsa";
            cp.common_name = "uabench rsa";
            cp.not_before = (int64_t)time(NULL) - 3600;
            cp.days = 1;
            st = der == NULL ? UA_BAD_OUT_OF_MEMORY
                             : ua_crypto_key_generate(&b->key2,
                                                      b->server_bits);
            if (st == UA_GOOD)
                st = ua_cert_create(&cp, &b->key2, der, UA_CERT_DER_MAX,
                                    &len);
            if (st == UA_GOOD)
                st = ua_crypto_key_from_cert(&b->key2pub, der, len);
            free(der);
            if (st != UA_GOOD)
                return -1;
        }
    }
    if (!ub_rsa_server_keys(b, &spriv, &spub))
        return -1;
    r->sign_us = ub_rsa_cost(p, UB_RSA_SIGN, spriv, spub);
    r->decrypt_us = ub_rsa_cost(p, UB_RSA_DECRYPT, spriv, spub);
    r->verify_us = ub_rsa_cost(p, UB_RSA_VERIFY, &b->key, &b->cpub);
    r->encrypt_us = ub_rsa_cost(p, UB_RSA_ENCRYPT, &b->key, &b->cpub);
    r->cert_us = ub_rsa_cost(p, UB_RSA_CERT, &b->key, &b->cpub);
    r->csign_us = ub_rsa_cost(p, UB_RSA_SIGN, &b->key, &b->cpub);
    r->cdecrypt_us = ub_rsa_cost(p, UB_RSA_DECRYPT, &b->key, &b->cpub);
    r->cverify_us = ub_rsa_cost(p, UB_RSA_VERIFY, spriv, spub);
    r->cencrypt_us = ub_rsa_cost(p, UB_RSA_ENCRYPT, spriv, spub);
    r->ok = r->sign_us > 0 && r->decrypt_us > 0 && r->verify_us > 0
            && r->encrypt_us > 0 && r->cert_us > 0 && r->csign_us > 0
            && r->cdecrypt_us > 0 && r->cverify_us > 0 && r->cencrypt_us > 0;
    return r->ok ? 0 : -1;
}

/*
 * One in-window sample (struct ub_rsa_win): the policy's signature and one
 * block's decryption with the server-sized key, as ub_rsa_cost does them,
 * each done twice and the second timed with this thread's CPU clock (the
 * first brings the code and the key back into the caches our own loop
 * took: a cost of this process, not of the operation).  A failure stops
 * the sampling (the report then says so).
 */
void
ub_rsa_sample(struct ub *b)
{
    struct ub_rsa_win      *w = &b->rsaw;
    const struct ua_policy *p = b->policy;
    struct ua_crypto_key   *priv, *pub;
    uint8_t                 work[2 * UA_RSA_MAX_BYTES];
    size_t                  n, pb;
    double                  t0, ts, sign = 0, dec = 0;
    bool                    ok = true;

    if (w->failed)
        return;
    if (p == NULL || !ub_rsa_server_keys(b, &priv, &pub)) {
        w->failed = true;
        return;
    }
    if (!w->ready) {
        pb = ua_crypto_rsa_plain_block(p->asym_enc, ua_crypto_key_bytes(pub));
        if (pb == 0 || ua_crypto_random(w->data, sizeof(w->data)) != UA_GOOD
            || p->asym_encrypt(pub, w->data, pb, w->ct, sizeof(w->ct),
                               &w->ctl) != UA_GOOD
            || w->ctl > sizeof(work)) {
            w->failed = true;
            return;
        }
        w->ready = true;
    }
    t0 = ub_thread_cpu_us();
    for (int k = 0; k < 2 && ok; k++) {
        ts = ub_thread_cpu_us();
        ok = p->asym_sign(priv, w->data, sizeof(w->data), work,
                          sizeof(work), &n) == UA_GOOD;
        sign = ub_thread_cpu_us() - ts;
    }
    for (int k = 0; k < 2 && ok; k++) {
        memcpy(work, w->ct, w->ctl);
        ts = ub_thread_cpu_us();
        ok = p->asym_decrypt(priv, work, w->ctl, &n) == UA_GOOD;
        dec = ub_thread_cpu_us() - ts;
    }
    w->cpu_sum += ub_thread_cpu_us() - t0;
    if (!ok) {
        w->failed = true;
        return;
    }
    w->sign_sum += sign;
    w->decrypt_sum += dec;
    w->n++;
}

/*
 * The RSA ceiling of the connect scenario (one line after the result).
 * The server's RSA work per handshake, from its code paths:
 *
 *   OpenSecureChannel  the client certificate's self-signature (trust-list
 *                      validation: one public op for a self-signed leaf),
 *                      decrypt the request (N private ops, one per block),
 *                      verify its signature (public), sign the response
 *                      (private), encrypt it (M public ops)
 *   CreateSession      sign clientCertificate || clientNonce (private)
 *   ActivateSession    verify the clientSignature (public)
 *
 * N and M are counted from the OPN chunks this run sent and received.
 * rsa_us/hs is that work at the costs measured here (the lower of the
 * measurements before and after the window: the least disturbed, so the
 * ratio below errs low when the machine is busy); the ceiling is the
 * handshake rate the server's measured CPU would give if it did nothing
 * but those operations: server_cores / rsa_us, and ratio = measured rate
 * / ceiling = rsa_us/hs / server_cpu_us/hs, the share of the server's
 * handshake CPU that is RSA.  The client's RSA work (N + 2 public, M + 2
 * private ops) is on the same cores: machine_ceiling is what the
 * machine's cores allow for both sides' RSA alone.
 *
 * The same with the private-key costs sampled inside the window (struct
 * ub_rsa_win: the mean of the samples, the public ones as above):
 * server_rsa_us/hs_window and ratio_window.  The server's CPU is a mean
 * over the window, on a machine whose speed drifts by 10-20 % within
 * seconds when other work shares it; the lowest of ten batches taken
 * before and after is compared with it above, the window's own mean here.
 *
 * And as the server itself measured it, when it is uabroker: the workers
 * time every RSA operation they do (their thread's CPU clock around each
 * call, /stats rsa_cpu_us), so server_rsa_us/hs_server is the CPU the RSA
 * operations took in this very window and ratio_server = that /
 * server_cpu_us/hs: the share of the server's handshake CPU that went to
 * RSA, the rest being everything else a handshake costs.
 */
void
ub_rsa_report(FILE *f, struct ub *b, double hs, double srv_us, double secs)
{
    const struct ub_rsa *r0 = &b->rsa0, *r1 = &b->rsa1;
    uint32_t N = b->opn_req_blocks, M = b->opn_resp_blocks;
    const struct ub_rsa_win *w = &b->rsaw;
    double   sign, dec, ver, enc, cert, cs, cd, cv, ce, srsa, crsa;
    double   cores = 0, ceil = 0, wsign = 0, wdec = 0, wrsa = 0;
    long     ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char     per[32] = "-", cl[32] = "-", ratio[32] = "-", wr[32] = "-";
    char     wcl[32] = "-", srsa_s[32] = "-", sratio[32] = "-";

    if (!r0->ok || !r1->ok || N == 0 || M == 0) {
        fprintf(f, "rsa_ceiling: not measured (%s)\n",
               N == 0 || M == 0 ? "no OPN blocks seen"
                                : "an RSA measurement failed");
        return;
    }
    sign = fmin(r0->sign_us, r1->sign_us);
    dec = fmin(r0->decrypt_us, r1->decrypt_us);
    ver = fmin(r0->verify_us, r1->verify_us);
    enc = fmin(r0->encrypt_us, r1->encrypt_us);
    cert = fmin(r0->cert_us, r1->cert_us);
    cs = fmin(r0->csign_us, r1->csign_us);
    cd = fmin(r0->cdecrypt_us, r1->cdecrypt_us);
    cv = fmin(r0->cverify_us, r1->cverify_us);
    ce = fmin(r0->cencrypt_us, r1->cencrypt_us);
    srsa = N * dec + 2 * sign + cert + 2 * ver + M * enc;
    crsa = M * cd + 2 * cs + N * ce + 2 * cv;
    if (!w->failed && w->n > 0) {
        wsign = w->sign_sum / w->n;
        wdec = w->decrypt_sum / w->n;
        wrsa = N * wdec + 2 * wsign + cert + 2 * ver + M * enc;
    }
    if (secs > 0 && srv_us > 0)
        cores = srv_us / secs / 1e6;
    if (cores > 0 && hs > 0) {
        ceil = cores * 1e6 / srsa;
        snprintf(per, sizeof(per), "%.0f", srv_us / (hs * secs));
        snprintf(cl, sizeof(cl), "%.0f", ceil);
        snprintf(ratio, sizeof(ratio), "%.3f", hs / ceil);
        if (b->st0.rsa_cpu_seen && b->st1.rsa_cpu_seen
            && b->st1.rsa_cpu_us > b->st0.rsa_cpu_us) {
            double m = (double)(b->st1.rsa_cpu_us - b->st0.rsa_cpu_us)
                       / (hs * secs);

            snprintf(srsa_s, sizeof(srsa_s), "%.0f", m);
            snprintf(sratio, sizeof(sratio), "%.3f",
                     m / (srv_us / (hs * secs)));
        }
        if (wrsa > 0) {
            snprintf(wcl, sizeof(wcl), "%.0f", cores * 1e6 / wrsa);
            snprintf(wr, sizeof(wr), "%.3f", wrsa / (srv_us / (hs * secs)));
        }
    }
    fprintf(f, "rsa_ceiling: policy=%s server_private_ops/hs=%u "
           "server_public_ops/hs=%u sign_us=%.0f decrypt_us/block=%.0f "
           "verify_us=%.0f encrypt_us/block=%.0f cert_verify_us=%.0f "
           "sign_us_before/after=%.0f/%.0f "
           "decrypt_us_before/after=%.0f/%.0f server_rsa_us/hs=%.0f "
           "server_cpu_us/hs=%s server_cores=%.2f ceiling_hs/s=%s "
           "measured_hs/s=%.0f ratio=%s client_rsa_us/hs=%.0f "
           "machine_ceiling_hs/s=%.0f window_samples=%u "
           "sign_us_window=%.0f decrypt_us_window=%.0f "
           "server_rsa_us/hs_window=%.0f ceiling_hs/s_window=%s "
           "ratio_window=%s server_rsa_us/hs_server=%s ratio_server=%s\n",
           b->policy->name, N + 2, M + 3, sign, dec, ver, enc, cert,
           r0->sign_us, r1->sign_us, r0->decrypt_us, r1->decrypt_us, srsa,
           per, cores, cl, hs, ratio, crsa,
           ncpu > 0 ? (double)ncpu * 1e6 / (srsa + crsa) : 0.0,
           w->failed ? 0 : w->n, wsign, wdec, wrsa, wcl, wr, srsa_s,
           sratio);
}
