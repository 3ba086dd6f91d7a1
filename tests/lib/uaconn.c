/*
 * tests/lib/uaconn.c: blocking OPC UA client for tests and uabench (see
 * uaconn.h).
 *
 * Link it into test programs only: the program's objects +
 * tests/lib/uaconn.c + libproto.a (or the proto .c files), e.g.
 *
 *   cc -I. -o t t.c tests/lib/uaconn.c build/libproto.a -lm
 *
 * The socket is non-blocking; every wait is a poll() bounded by
 * c->timeout_ms, so a silent server makes a call fail with UA_BAD_TIMEOUT
 * instead of hanging the test.  Allocation is plain malloc: this is test
 * code, never the server.
 */
#include "uaconn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define UACONN_ARENA      (256u << 10)
#define UACONN_WBUF_MIN   (64u << 10)
#define UACONN_WBUF_MAX   (256u << 20)
#define UACONN_NONCE      32

/* Table of contents. */
static uint64_t uaconn_now_ms(void);
static int64_t uaconn_now_dt(void);
static int uaconn_wait(struct uaconn *c, short ev, uint64_t deadline);
static int uaconn_write_all(struct uaconn *c, const uint8_t *p, size_t n);
static ua_status uaconn_read_chunk(struct uaconn *c, const uint8_t **chunk,
                                   uint32_t *size);
static ua_status uaconn_flush(struct uaconn *c, struct ua_sc_out *out);
static ua_status uaconn_wait_open(struct uaconn *c, uint32_t id);
static void uaconn_set_err(struct uaconn *c, ua_status s,
                           const struct ua_string *reason);
static void uaconn_nonce(uint8_t *p, size_t n);

/* ------------------------------------------------------------ helpers */

static uint64_t
uaconn_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* DateTime: 100 ns since 1601-01-01 (Part 6 §5.2.2.5). */
static int64_t
uaconn_now_dt(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ((int64_t)ts.tv_sec + 11644473600LL) * 10000000LL
           + ts.tv_nsec / 100;
}

/* 1: ready, 0: timed out, -errno: failed. */
static int
uaconn_wait(struct uaconn *c, short ev, uint64_t deadline)
{
    struct pollfd pfd = { .fd = c->fd, .events = ev };

    for (;;) {
        uint64_t now = uaconn_now_ms();
        int      rc;

        if (now >= deadline)
            return 0;
        rc = poll(&pfd, 1, (int)(deadline - now));
        if (rc == -1) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        return rc > 0 ? 1 : 0;
    }
}

static int
uaconn_write_all(struct uaconn *c, const uint8_t *p, size_t n)
{
    uint64_t deadline = uaconn_now_ms() + (uint64_t)c->timeout_ms;

    if (c->fd == -1)
        return -ENOTCONN;
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);

        if (w == -1) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                int rc = uaconn_wait(c, POLLOUT, deadline);

                if (rc == 0)
                    return -ETIMEDOUT;
                if (rc < 0)
                    return rc;
                continue;
            }
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
 * Make one whole chunk available at the front of rbuf.  The previous
 * chunk is dropped first, so what an event points into stays valid until
 * the next read.
 */
static ua_status
uaconn_read_chunk(struct uaconn *c, const uint8_t **chunk, uint32_t *size)
{
    uint64_t  deadline = uaconn_now_ms() + (uint64_t)c->timeout_ms;
    ua_status s;

    if (c->rskip != 0) {
        memmove(c->rbuf, c->rbuf + c->rskip, c->rlen - c->rskip);
        c->rlen -= c->rskip;
        c->rskip = 0;
    }
    for (;;) {
        ssize_t r;
        int     rc;

        s = ua_client_frame(&c->cl, c->rbuf, c->rlen, size);
        if (s != UA_GOOD)
            return s;
        if (*size != 0 && c->rlen >= *size) {
            *chunk = c->rbuf;
            c->rskip = *size;
            return UA_GOOD;
        }
        if (*size > c->rcap)
            return UA_BAD_TCP_MESSAGE_TOO_LARGE;
        if (c->fd == -1)
            return UA_BAD_CONNECTION_CLOSED;
        r = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
        if (r > 0) {
            c->rlen += (size_t)r;
            continue;
        }
        if (r == 0)
            return UA_BAD_CONNECTION_CLOSED;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return UA_BAD_CONNECTION_CLOSED;
        rc = uaconn_wait(c, POLLIN, deadline);
        if (rc == 0)
            return UA_BAD_TIMEOUT;
        if (rc < 0)
            return UA_BAD_COMMUNICATION_ERROR;
    }
}

static ua_status
uaconn_flush(struct uaconn *c, struct ua_sc_out *out)
{
    int rc = uaconn_write_all(c, out->buf, out->len);

    out->len = 0;
    if (rc == -ETIMEDOUT)
        return UA_BAD_TIMEOUT;
    return rc == 0 ? UA_GOOD : UA_BAD_CONNECTION_CLOSED;
}

static void
uaconn_set_err(struct uaconn *c, ua_status s, const struct ua_string *reason)
{
    size_t n = 0;

    c->err = s;
    if (reason != NULL && reason->len > 0) {
        n = (size_t)reason->len;
        if (n >= sizeof(c->err_reason))
            n = sizeof(c->err_reason) - 1;
        memcpy(c->err_reason, reason->data, n);
    }
    c->err_reason[n] = '\0';
}

/* Not cryptographic: a test client on SecurityPolicy None. */
static void
uaconn_nonce(uint8_t *p, size_t n)
{
    static uint64_t x;
    int             fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd != -1) {
        ssize_t r = read(fd, p, n);

        close(fd);
        if (r == (ssize_t)n)
            return;
    }
    if (x == 0)
        x = uaconn_now_ms() * 0x9E3779B97F4A7C15ull | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)x;
    }
}

/* ------------------------------------------------------------ setup */

void
uaconn_init(struct uaconn *c)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->timeout_ms = UACONN_TIMEOUT_MS;
    c->cfg = ua_client_config_default;
    c->session_id = ua_nodeid_num(0, 0);
}

void
uaconn_clear(struct uaconn *c)
{
    if (c->fd != -1)
        close(c->fd);
    c->fd = -1;
    free(c->rbuf);
    free(c->wbuf);
    free(c->abuf);
    free(c->arena_buf);
    c->rbuf = c->wbuf = c->abuf = c->arena_buf = NULL;
    c->rcap = c->wcap = c->acap = 0;
    c->rlen = c->rskip = 0;
}

int
uaconn_connect(struct uaconn *c, const char *host, uint16_t port)
{
    struct addrinfo  hints = { 0 }, *res = NULL, *ai;
    char             ports[8];
    int              fd = -1, rc, one = 1;

    if (c->fd != -1) {
        close(c->fd);
        c->fd = -1;
    }
    snprintf(ports, sizeof(ports), "%u", (unsigned)port);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(host, ports, &hints, &res);
    if (rc != 0)
        return -EHOSTUNREACH;
    rc = -ECONNREFUSED;
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK
                                       | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd == -1) {
            rc = -errno;
            continue;
        }
        if (c->src_addr != NULL && ai->ai_family == AF_INET) {
            struct sockaddr_in sa = { .sin_family = AF_INET };

            if (inet_pton(AF_INET, c->src_addr, &sa.sin_addr) != 1
                || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
                rc = -EADDRNOTAVAIL;
                close(fd);
                fd = -1;
                continue;
            }
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            int       err = 0;
            socklen_t l = sizeof(err);

            c->fd = fd;
            rc = uaconn_wait(c, POLLOUT,
                             uaconn_now_ms() + (uint64_t)c->timeout_ms);
            c->fd = -1;
            if (rc == 1
                && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0
                && err == 0)
                break;
            rc = rc == 0 ? -ETIMEDOUT : -(err != 0 ? err : ECONNREFUSED);
        } else {
            rc = -errno;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd == -1)
        return rc;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));

    uaconn_clear(c);
    c->rcap = c->cfg.recv_buffer;
    c->rbuf = malloc(c->rcap);
    c->wcap = c->cfg.send_buffer > UACONN_WBUF_MIN ? c->cfg.send_buffer
                                                   : UACONN_WBUF_MIN;
    c->wbuf = malloc(c->wcap);
    c->acap = c->cfg.max_message != 0 ? c->cfg.max_message : (16u << 20);
    c->abuf = malloc(c->acap);
    c->arena_buf = malloc(UACONN_ARENA);
    if (c->rbuf == NULL || c->wbuf == NULL || c->abuf == NULL
        || c->arena_buf == NULL) {
        close(fd);
        uaconn_clear(c);
        return -ENOMEM;
    }
    ua_arena_init(&c->arena, c->arena_buf, UACONN_ARENA);
    c->fd = fd;
    c->err = UA_GOOD;
    c->err_reason[0] = '\0';
    c->session_active = false;
    ua_client_init(&c->cl, &c->cfg, c->abuf, c->acap);
    c->cl.now_dt = uaconn_now_dt();
    if (c->sec != NULL && ua_client_set_security(&c->cl, c->sec) != UA_GOOD) {
        close(fd);
        c->fd = -1;
        return -EINVAL;
    }
    if (c->url[0] == '\0')
        snprintf(c->url, sizeof(c->url), "opc.tcp://%s:%u", host,
                 (unsigned)port);
    return 0;
}

/* ------------------------------------------------------------ channel */

ua_status
uaconn_recv(struct uaconn *c, struct ua_client_event *ev)
{
    for (;;) {
        const uint8_t *chunk;
        uint32_t       size;
        ua_status      s;

        s = uaconn_read_chunk(c, &chunk, &size);
        if (s != UA_GOOD)
            return s;
        s = ua_client_process(&c->cl, chunk, size, uaconn_now_ms(), ev);
        if (s != UA_GOOD) {
            if (ev->kind == UA_CLIENT_EV_ERR)
                uaconn_set_err(c, s, &ev->reason);
            return s;
        }
        if (ev->kind != UA_CLIENT_EV_NONE)
            return UA_GOOD;
    }
}

ua_status
uaconn_hello(struct uaconn *c, const char *url)
{
    struct ua_sc_out       out = { c->wbuf, c->wcap, 0 };
    struct ua_client_event ev;
    ua_status              s;

    if (url != NULL)
        snprintf(c->url, sizeof(c->url), "%s", url);
    s = ua_client_hello(&c->cl, c->url, &out);
    if (s == UA_GOOD)
        s = uaconn_flush(c, &out);
    if (s == UA_GOOD)
        s = uaconn_recv(c, &ev);
    if (s == UA_GOOD && ev.kind != UA_CLIENT_EV_ACK)
        s = UA_BAD_UNKNOWN_RESPONSE;
    return s;
}

static ua_status
uaconn_wait_open(struct uaconn *c, uint32_t id)
{
    struct ua_client_event ev;
    ua_status              s;

    for (;;) {
        s = uaconn_recv(c, &ev);
        if (s != UA_GOOD)
            return s;
        if (ev.kind == UA_CLIENT_EV_OPEN && ev.request_id == id)
            return ev.status;
    }
}

ua_status
uaconn_open(struct uaconn *c, uint32_t lifetime_ms)
{
    struct ua_sc_out out = { c->wbuf, c->wcap, 0 };
    uint32_t         id;
    ua_status        s;

    s = ua_client_open(&c->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                       lifetime_ms, &id, &out);
    if (s == UA_GOOD)
        s = uaconn_flush(c, &out);
    if (s == UA_GOOD)
        s = uaconn_wait_open(c, id);
    return s;
}

ua_status
uaconn_renew(struct uaconn *c)
{
    struct ua_sc_out out = { c->wbuf, c->wcap, 0 };
    uint32_t         id;
    ua_status        s;

    s = ua_client_open(&c->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                       c->cl.lifetime_ms, &id, &out);
    if (s == UA_GOOD)
        s = uaconn_flush(c, &out);
    if (s == UA_GOOD)
        s = uaconn_wait_open(c, id);
    return s;
}

ua_status
uaconn_send(struct uaconn *c, const struct ua_type *req_t, void *req,
            uint32_t *request_id)
{
    for (;;) {
        struct ua_sc_out out = { c->wbuf, c->wcap, 0 };
        ua_status        s;
        uint8_t         *nb;

        c->cl.now_dt = uaconn_now_dt();
        s = ua_client_request(&c->cl, req_t, req, request_id, &out);
        if (s == UA_GOOD)
            return uaconn_flush(c, &out);
        if (s != UA_BAD_ENCODING_LIMITS_EXCEEDED || c->wcap >= UACONN_WBUF_MAX)
            return s;
        nb = realloc(c->wbuf, c->wcap * 2);
        if (nb == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        c->wbuf = nb;
        c->wcap *= 2;
    }
}

ua_status
uaconn_call(struct uaconn *c, const struct ua_type *req_t, void *req,
            const struct ua_type *resp_t, void *resp, struct ua_arena *a)
{
    struct ua_client_event ev;
    uint32_t               id;
    ua_status              s;

    s = uaconn_send(c, req_t, req, &id);
    if (s != UA_GOOD)
        return s;
    for (;;) {
        s = uaconn_recv(c, &ev);
        if (s != UA_GOOD)
            return s;
        if (ev.request_id != id)
            continue;
        if (ev.kind == UA_CLIENT_EV_ABORT)
            return UA_STATUS_IS_BAD(ev.status) ? ev.status
                                               : UA_BAD_UNKNOWN_RESPONSE;
        if (ev.kind == UA_CLIENT_EV_MSG)
            break;
    }
    s = ua_client_decode(&c->cl, &ev, resp_t, resp, a);
    if (s != UA_GOOD)
        return s;
    /* Every response starts with its ResponseHeader. */
    return ((const struct ua_response_header *)resp)->service_result;
}

/* ------------------------------------------------------------ session */

/*
 * Secured session: check serverSignature = sign(our cert || our nonce) with
 * the server's key (c->server_sig_status), and make clientSignature =
 * sign(server cert || serverNonce) with ours (in c->arena).
 */
static int uaconn_session_secret(struct uaconn *c,
                                 const struct ua_create_session_response *cs,
                                 uint8_t *out, size_t cap, size_t *len,
                                 const char **alg);
static void uaconn_session_sigs(struct uaconn *c,
                                const struct ua_create_session_response *cs,
                                const uint8_t *nonce,
                                struct ua_signature_data *sig, uint8_t *out);

/* The legacy encrypted secret: len | password | serverNonce, RSA-encrypted
 * for the server certificate of cs.  0 or -1. */
static int
uaconn_session_secret(struct uaconn *c,
                      const struct ua_create_session_response *cs,
                      uint8_t *out, size_t cap, size_t *len,
                      const char **alg)
{
    static struct ua_crypto_key key;
    const struct ua_policy     *p = c->sec != NULL ? c->sec->policy : NULL;
    uint8_t                     plain[1536];
    size_t                      pl = strlen(c->password);
    size_t                      nl = cs->server_nonce.len > 0
                                         ? (size_t)cs->server_nonce.len : 0;
    uint32_t                    l = (uint32_t)(pl + nl);
    ua_status                   s;

    if (ua_crypto_policy_is_none(p))
        p = ua_crypto_policy_get(UA_POLICY_BASIC256SHA256);
    if (4 + pl + nl > sizeof(plain) || cs->server_certificate.len <= 0)
        return -1;
    plain[0] = (uint8_t)l;
    plain[1] = (uint8_t)(l >> 8);
    plain[2] = (uint8_t)(l >> 16);
    plain[3] = (uint8_t)(l >> 24);
    memcpy(plain + 4, c->password, pl);
    if (nl > 0)
        memcpy(plain + 4 + pl, cs->server_nonce.data, nl);
    if (ua_crypto_key_from_cert(&key, cs->server_certificate.data,
                                (size_t)cs->server_certificate.len)
        != UA_GOOD)
        return -1;
    s = p->asym_encrypt(&key, plain, 4 + pl + nl, out, cap, len);
    ua_crypto_key_clear(&key);
    *alg = p->asym_enc_uri;
    return s == UA_GOOD ? 0 : -1;
}

static void
uaconn_session_sigs(struct uaconn *c,
                    const struct ua_create_session_response *cs,
                    const uint8_t *nonce, struct ua_signature_data *sig,
                    uint8_t *out)
{
    static struct ua_crypto_key key;
    const struct ua_policy     *p = c->sec->policy;
    size_t                      n1, n2, siglen = 0;
    uint8_t                    *buf;

    sig->algorithm.len = -1;
    sig->signature.len = -1;
    c->server_sig_status = UA_BAD_APPLICATION_SIGNATURE_INVALID;
    n1 = c->sec->cert_len + UACONN_NONCE;
    n2 = (cs->server_certificate.len > 0 ? (size_t)cs->server_certificate.len
                                         : 0)
         + (cs->server_nonce.len > 0 ? (size_t)cs->server_nonce.len : 0);
    buf = ua_arena_alloc(&c->arena, n1 > n2 ? n1 : n2);
    if (buf == NULL || cs->server_certificate.len <= 0)
        return;
    memcpy(buf, c->sec->cert, c->sec->cert_len);
    memcpy(buf + c->sec->cert_len, nonce, UACONN_NONCE);
    if (cs->server_signature.signature.len > 0
        && ua_string_eq(&cs->server_signature.algorithm, p->asym_sig_uri)
        && ua_crypto_key_from_cert(&key, cs->server_certificate.data,
                                   (size_t)cs->server_certificate.len)
               == UA_GOOD) {
        c->server_sig_status = p->asym_verify(
            &key, buf, n1, cs->server_signature.signature.data,
            (size_t)cs->server_signature.signature.len);
        ua_crypto_key_clear(&key);
    }
    memcpy(buf, cs->server_certificate.data,
           (size_t)cs->server_certificate.len);
    if (cs->server_nonce.len > 0)
        memcpy(buf + cs->server_certificate.len, cs->server_nonce.data,
               (size_t)cs->server_nonce.len);
    if (p->asym_sign(c->sec->key, buf, n2, out, UA_RSA_MAX_BYTES, &siglen)
        != UA_GOOD)
        return;
    sig->algorithm = ua_string_from(p->asym_sig_uri);
    sig->signature.len = (int32_t)siglen;
    sig->signature.data = out;
}

ua_status
uaconn_session(struct uaconn *c)
{
    struct ua_create_session_request     cr;
    struct ua_create_session_response    cs;
    struct ua_activate_session_request   ar;
    struct ua_activate_session_response  as;
    struct ua_anonymous_identity_token   anon;
    uint8_t                              nonce[UACONN_NONCE];
    char                                 policy[128] = "anonymous";
    struct ua_signature_data             sig;
    static uint8_t                       sigbuf[UA_RSA_MAX_BYTES];
    struct ua_user_name_identity_token   un;
    struct ua_x509_identity_token        x5;
    static uint8_t                       usigbuf[UA_RSA_MAX_BYTES];
    struct ua_signature_data             usig = { { -1, NULL }, { -1, NULL } };
    static uint8_t                       secret[2048];
    size_t                               secret_len = 0;
    const char                          *alg = NULL;
    ua_status                            s;

    memset(&cr, 0, sizeof(cr));
    cr.client_description.application_uri = ua_string_from(
        c->app_uri != NULL ? c->app_uri : "urn:uaconn");
    cr.client_description.product_uri = ua_string_from("urn:uaconn");
    cr.client_description.application_name.mask = UA_LT_TEXT;
    cr.client_description.application_name.text = ua_string_from("uaconn");
    cr.client_description.application_type = UA_APPLICATIONTYPE_CLIENT;
    cr.client_description.gateway_server_uri.len = -1;
    cr.client_description.discovery_profile_uri.len = -1;
    cr.client_description.n_discovery_urls = -1;
    cr.request_header.audit_entry_id.len = -1;
    cr.server_uri.len = -1;
    cr.endpoint_url = ua_string_from(c->url);
    cr.session_name = ua_string_from("uaconn");
    uaconn_nonce(nonce, sizeof(nonce));
    cr.client_nonce.len = (int32_t)sizeof(nonce);
    cr.client_nonce.data = nonce;
    cr.client_certificate.len = -1;
    if (c->sec != NULL) {
        cr.client_certificate.len = (int32_t)c->sec->cert_len;
        cr.client_certificate.data = (uint8_t *)c->sec->cert;
    }
    cr.requested_session_timeout = 60000.0;
    cr.max_response_message_size = 0;
    ua_client_set_token(&c->cl, NULL);
    ua_arena_reset(&c->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATESESSIONREQUEST], &cr,
                    &ua_types[UA_TYPE_CREATESESSIONRESPONSE], &cs, &c->arena);
    if (s != UA_GOOD)
        return s;
    /* Keep what we need before the arena and rbuf are reused. */
    c->session_id = cs.session_id;
    if ((cs.session_id.idtype == UA_IDTYPE_STRING
         || cs.session_id.idtype == UA_IDTYPE_OPAQUE)) {
        int32_t l = cs.session_id.id.str.len;

        if (l > (int32_t)sizeof(c->session_buf))
            l = (int32_t)sizeof(c->session_buf);
        if (l > 0)
            memcpy(c->session_buf, cs.session_id.id.str.data, (size_t)l);
        c->session_id.id.str.len = l;
        c->session_id.id.str.data = l > 0 ? c->session_buf : NULL;
    }
    c->session_timeout_ms = cs.revised_session_timeout;
    s = ua_client_set_token(&c->cl, &cs.authentication_token);
    if (s != UA_GOOD)
        return s;
    if (c->sec != NULL)
        uaconn_session_sigs(c, &cs, nonce, &sig, sigbuf);
    if (c->user != NULL
        && uaconn_session_secret(c, &cs, secret, sizeof(secret),
                                 &secret_len, &alg) != 0)
        return UA_BAD_INTERNAL_ERROR;
    if (c->user_cert != NULL) {
        const struct ua_policy *up = c->sec != NULL ? c->sec->policy : NULL;
        size_t                  n = 0, ul = 0;
        uint8_t                *buf;

        if (ua_crypto_policy_is_none(up))
            up = ua_crypto_policy_get(UA_POLICY_BASIC256SHA256);
        if (cs.server_certificate.len <= 0 || cs.server_nonce.len <= 0)
            return UA_BAD_INTERNAL_ERROR;
        n = (size_t)cs.server_certificate.len + (size_t)cs.server_nonce.len;
        buf = ua_arena_alloc(&c->arena, n);
        if (buf == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memcpy(buf, cs.server_certificate.data,
               (size_t)cs.server_certificate.len);
        memcpy(buf + cs.server_certificate.len, cs.server_nonce.data,
               (size_t)cs.server_nonce.len);
        if (up->asym_sign(c->user_key, buf, n, usigbuf, sizeof(usigbuf), &ul)
            != UA_GOOD)
            return UA_BAD_INTERNAL_ERROR;
        usig.algorithm = ua_string_from(up->asym_sig_uri);
        usig.signature.len = (int32_t)ul;
        usig.signature.data = usigbuf;
    }
    for (int32_t i = 0; i < cs.n_server_endpoints; i++) {
        const struct ua_endpoint_description *e = &cs.server_endpoints[i];

        if (!ua_string_eq(&e->security_policy_uri, UA_SC_POLICY_NONE))
            continue;
        for (int32_t j = 0; j < e->n_user_identity_tokens; j++) {
            const struct ua_user_token_policy *t = &e->user_identity_tokens[j];

            if (t->token_type == UA_USERTOKENTYPE_ANONYMOUS
                && t->policy_id.len > 0
                && (size_t)t->policy_id.len < sizeof(policy)) {
                memcpy(policy, t->policy_id.data, (size_t)t->policy_id.len);
                policy[t->policy_id.len] = '\0';
                goto found;
            }
        }
    }
found:
    memset(&ar, 0, sizeof(ar));
    memset(&anon, 0, sizeof(anon));
    anon.policy_id = ua_string_from(policy);
    ar.request_header.audit_entry_id.len = -1;
    ar.client_signature.algorithm.len = -1;
    ar.client_signature.signature.len = -1;
    if (c->sec != NULL)
        ar.client_signature = sig;
    ar.n_client_software_certificates = 0;
    ar.n_locale_ids = 0;
    ar.user_identity_token.encoding = UA_EO_DECODED;
    ar.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
    ar.user_identity_token.obj = &anon;
    ar.user_identity_token.type_id = ua_nodeid_num(
        0, ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN].binary_id);
    if (c->user != NULL) {
        memset(&un, 0, sizeof(un));
        un.policy_id = ua_string_from("username");
        un.user_name = ua_string_from(c->user);
        un.password.len = (int32_t)secret_len;
        un.password.data = secret;
        un.encryption_algorithm = ua_string_from(alg);
        ar.user_identity_token.type =
            &ua_types[UA_TYPE_USERNAMEIDENTITYTOKEN];
        ar.user_identity_token.obj = &un;
        ar.user_identity_token.type_id = ua_nodeid_num(
            0, ua_types[UA_TYPE_USERNAMEIDENTITYTOKEN].binary_id);
    }
    if (c->user_cert != NULL) {
        memset(&x5, 0, sizeof(x5));
        x5.policy_id = ua_string_from("x509");
        x5.certificate_data.len = (int32_t)c->user_cert_len;
        x5.certificate_data.data = (uint8_t *)c->user_cert;
        ar.user_identity_token.type = &ua_types[UA_TYPE_X509IDENTITYTOKEN];
        ar.user_identity_token.obj = &x5;
        ar.user_identity_token.type_id = ua_nodeid_num(
            0, ua_types[UA_TYPE_X509IDENTITYTOKEN].binary_id);
    }
    ar.user_token_signature.algorithm.len = -1;
    ar.user_token_signature.signature.len = -1;
    if (c->user_cert != NULL)
        ar.user_token_signature = usig;
    ua_arena_reset(&c->arena);
    if (c->activate_later) {
        for (;;) {
            struct ua_sc_out out = { c->wbuf, c->wcap, 0 };
            uint8_t         *nb;

            c->cl.now_dt = uaconn_now_dt();
            s = ua_client_request(&c->cl,
                                  &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST],
                                  &ar, &c->activate_id, &out);
            if (s == UA_GOOD)
                c->activate_len = out.len;
            if (s != UA_BAD_ENCODING_LIMITS_EXCEEDED
                || c->wcap >= UACONN_WBUF_MAX)
                break;
            nb = realloc(c->wbuf, c->wcap * 2);
            if (nb == NULL)
                return UA_BAD_OUT_OF_MEMORY;
            c->wbuf = nb;
            c->wcap *= 2;
        }
        ua_arena_reset(&c->arena);
        return s;
    }
    s = uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &ar,
                    &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &as,
                    &c->arena);
    ua_arena_reset(&c->arena);
    if (s != UA_GOOD)
        return s;
    c->session_active = true;
    return UA_GOOD;
}

ua_status
uaconn_activate_send(struct uaconn *c)
{
    struct ua_sc_out out = { c->wbuf, c->wcap, c->activate_len };

    return uaconn_flush(c, &out);
}

ua_status
uaconn_activate_wait(struct uaconn *c)
{
    struct ua_activate_session_response as;
    struct ua_client_event              ev;
    ua_status                           s;

    for (;;) {
        s = uaconn_recv(c, &ev);
        if (s != UA_GOOD)
            return s;
        if (ev.request_id != c->activate_id)
            continue;
        if (ev.kind == UA_CLIENT_EV_ABORT)
            return UA_STATUS_IS_BAD(ev.status) ? ev.status
                                               : UA_BAD_UNKNOWN_RESPONSE;
        if (ev.kind == UA_CLIENT_EV_MSG)
            break;
    }
    ua_arena_reset(&c->arena);
    s = ua_client_decode(&c->cl, &ev,
                         &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &as,
                         &c->arena);
    if (s == UA_GOOD)
        s = as.response_header.service_result;
    ua_arena_reset(&c->arena);
    if (s == UA_GOOD)
        c->session_active = true;
    return s;
}

ua_status
uaconn_start(struct uaconn *c, const char *host, uint16_t port)
{
    ua_status s;

    if (uaconn_connect(c, host, port) != 0)
        return UA_BAD_COMMUNICATION_ERROR;
    s = uaconn_hello(c, NULL);
    if (s == UA_GOOD)
        s = uaconn_open(c, 0);
    if (s == UA_GOOD)
        s = uaconn_session(c);
    return s;
}

void
uaconn_seq_init(struct uaconn_seq *q, uint8_t type)
{
    memset(q, 0, sizeof(*q));
    q->type = type;
    q->last = INT64_MIN;
    q->oldest_src = INT64_MAX;
}

uint32_t
uaconn_seq_take(struct uaconn_seq *q, const struct ua_notification_message *m)
{
    uint32_t n = 0;

    q->oldest_src = INT64_MAX;
    for (int32_t k = 0; k < m->n_notification_data; k++) {
        const struct ua_data_change_notification *d;

        if (m->notification_data[k].type
            != &ua_types[UA_TYPE_DATACHANGENOTIFICATION])
            continue;
        d = m->notification_data[k].obj;
        for (int32_t j = 0; j < d->n_monitored_items; j++, n++) {
            const struct ua_datavalue *v = &d->monitored_items[j].value;
            int64_t                    x;

            if ((v->mask & UA_DV_STATUS) && (v->status & 0x0480) != 0)
                q->overflows++;
            if (!(v->mask & UA_DV_SOURCE_TS) || v->source_ts <= q->last_src)
                q->src_breaks++;
            if (v->mask & UA_DV_SOURCE_TS) {
                q->last_src = v->source_ts;
                if (v->source_ts < q->oldest_src)
                    q->oldest_src = v->source_ts;
            }
            if (!(v->mask & UA_DV_VALUE) || v->value.is_array
                || v->value.type != q->type
                || (q->type != UA_BT_INT32 && q->type != UA_BT_UINT32)) {
                q->breaks++;
                continue;
            }
            x = v->value.type == UA_BT_INT32
                    ? *(const int32_t *)v->value.data
                    : (int64_t)*(const uint32_t *)v->value.data;
            if (q->last != INT64_MIN && x != q->last + 1)
                q->breaks++;
            q->last = x;
            q->values++;
        }
    }
    return n;
}

ua_status
uaconn_start_retry(struct uaconn *c, const char *host, uint16_t port,
                   unsigned ms)
{
    struct timespec pause = { 0, 200 * 1000000L };
    ua_status       s = UA_BAD_TIMEOUT;

    for (unsigned t = 0; t == 0 || t < ms / 200; t++) {
        if (t != 0)
            nanosleep(&pause, NULL);
        uaconn_init(c);
        s = uaconn_start(c, host, port);
        if (s == UA_GOOD)
            return s;
        uaconn_clear(c);
    }
    return s;
}

ua_status
uaconn_close_session(struct uaconn *c)
{
    struct ua_close_session_request  req;
    struct ua_close_session_response resp;
    ua_status                        s;

    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.delete_subscriptions = true;
    ua_arena_reset(&c->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CLOSESESSIONREQUEST], &req,
                    &ua_types[UA_TYPE_CLOSESESSIONRESPONSE], &resp,
                    &c->arena);
    ua_arena_reset(&c->arena);
    ua_client_set_token(&c->cl, NULL);
    c->session_active = false;
    return s;
}

ua_status
uaconn_close(struct uaconn *c)
{
    struct ua_sc_out out = { c->wbuf, c->wcap, 0 };
    ua_status        s = UA_GOOD;

    if (c->fd == -1)
        return UA_BAD_CONNECTION_CLOSED;
    if (c->cl.state == UA_CLIENT_OPEN) {
        s = ua_client_close(&c->cl, &out);
        if (s == UA_GOOD)
            s = uaconn_flush(c, &out);
    }
    close(c->fd);
    c->fd = -1;
    return s;
}

/* ------------------------------------------------------------ raw */

int
uaconn_raw_send(struct uaconn *c, const void *p, size_t n)
{
    return uaconn_write_all(c, p, n);
}

ssize_t
uaconn_raw_recv(struct uaconn *c, void *buf, size_t cap)
{
    uint64_t deadline = uaconn_now_ms() + (uint64_t)c->timeout_ms;

    if (c->fd == -1)
        return -ENOTCONN;
    for (;;) {
        ssize_t r = recv(c->fd, buf, cap, 0);
        int     rc;

        if (r >= 0)
            return r;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        rc = uaconn_wait(c, POLLIN, deadline);
        if (rc == 0)
            return -ETIMEDOUT;
        if (rc < 0)
            return rc;
    }
}

ua_status
uaconn_raw_chunk(struct uaconn *c, uint8_t *buf, size_t cap, size_t *len)
{
    size_t got = 0, need = UA_TCP_HEADER;

    *len = 0;
    while (got < need) {
        ssize_t r;

        if (need > cap)
            return UA_BAD_TCP_MESSAGE_TOO_LARGE;
        r = uaconn_raw_recv(c, buf + got, need - got);
        if (r == -ETIMEDOUT)
            return UA_BAD_TIMEOUT;
        if (r <= 0)
            return UA_BAD_CONNECTION_CLOSED;
        got += (size_t)r;
        if (got >= UA_TCP_HEADER && need == UA_TCP_HEADER) {
            need = (size_t)buf[4] | (size_t)buf[5] << 8
                   | (size_t)buf[6] << 16 | (size_t)buf[7] << 24;
            if (need < UA_TCP_HEADER)
                return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
        }
    }
    *len = got;
    if (got >= 16 && memcmp(buf, "ERRF", 4) == 0) {
        struct ua_string r = { -1, NULL };
        int32_t          l;
        ua_status        s;

        s = (ua_status)buf[8] | (ua_status)buf[9] << 8
            | (ua_status)buf[10] << 16 | (ua_status)buf[11] << 24;
        l = (int32_t)((uint32_t)buf[12] | (uint32_t)buf[13] << 8
                      | (uint32_t)buf[14] << 16 | (uint32_t)buf[15] << 24);
        if (l > 0 && (size_t)l <= got - 16) {
            r.len = l;
            r.data = buf + 16;
        }
        uaconn_set_err(c, s, &r);
        return s;
    }
    return UA_GOOD;
}

bool
uaconn_raw_closed(struct uaconn *c)
{
    uint8_t buf[4096];

    for (;;) {
        ssize_t r = uaconn_raw_recv(c, buf, sizeof(buf));

        if (r > 0)
            continue;
        /* EOF, a reset or no socket at all: closed; a timeout: open. */
        return r != -ETIMEDOUT;
    }
}

ua_status
uaconn_read_time(struct uaconn *c, struct ua_arena *arena)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;
    ua_status               s;

    memset(&rv, 0, sizeof(rv));
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    rv.attribute_id = UA_ATTR_VALUE;
    rv.node_id = ua_nodeid_num(0, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, arena);
    if (s == UA_GOOD && (resp.n_results != 1 || resp.results[0].status != 0))
        s = resp.n_results == 1 ? resp.results[0].status
                                : UA_BAD_UNEXPECTED_ERROR;
    return s;
}

ua_status
uaconn_subscribe1(struct uaconn *c, struct ua_arena *arena, double interval,
                  uint32_t lifetime, uint32_t keep_alive,
                  struct ua_nodeid node, double sampling,
                  struct ua_create_subscription_response *sub)
{
    struct ua_create_subscription_request     cs;
    struct ua_create_monitored_items_request  cm;
    struct ua_create_monitored_items_response cmr;
    struct ua_monitored_item_create_request   it;
    ua_status                                 s;

    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = interval;
    cs.requested_lifetime_count = lifetime;
    cs.requested_max_keep_alive_count = keep_alive;
    cs.publishing_enabled = true;
    ua_arena_reset(arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST], &cs,
                    &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE], sub,
                    arena);
    if (s != UA_GOOD)
        return s;
    memset(&it, 0, sizeof(it));
    it.item_to_monitor.node_id = node;
    it.item_to_monitor.attribute_id = UA_ATTR_VALUE;
    it.item_to_monitor.index_range.len = -1;
    it.item_to_monitor.data_encoding.name.len = -1;
    it.monitoring_mode = UA_MONITORINGMODE_REPORTING;
    it.requested_parameters.client_handle = 1;
    it.requested_parameters.sampling_interval = sampling;
    it.requested_parameters.queue_size = 100;
    it.requested_parameters.discard_oldest = true;
    memset(&cm, 0, sizeof(cm));
    cm.subscription_id = sub->subscription_id;
    cm.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    cm.n_items_to_create = 1;
    cm.items_to_create = &it;
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST], &cm,
                    &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE], &cmr,
                    arena);
    if (s != UA_GOOD)
        return s;
    return cmr.n_results == 1 ? cmr.results[0].status_code
                              : UA_BAD_UNEXPECTED_ERROR;
}
