/*
 * tests/bench/uabench_conn.c: uabench's sessions (tests/bench/uabench.c
 * describes the program): each one's non-blocking connection and secure
 * channel through proto/client.h, the setup messages (HEL, OPN,
 * CreateSession, ActivateSession), the requests kept in flight, the
 * batched send()s, the reads, and every response checked against the
 * scenario (type, ServiceResult, number of results, the first result's
 * status) with its latency into the histogram.
 */
#include "uabench.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/client.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

static void ub_sess_event(struct ub *b, struct ub_sess *s,
                          const struct ua_client_event *ev);
static void ub_sess_setup_msg(struct ub *b, struct ub_sess *s,
                              const struct ua_client_event *ev);
static void ub_sess_response(struct ub *b, struct ub_sess *s,
                             const struct ua_client_event *ev);
static ua_status ub_check(struct ub *b, const struct ub_scenario *sc,
                          const uint8_t *body, size_t len);

/* ------------------------------------------------------------ sessions */

void
ub_error(struct ub *b, struct ub_sess *s, ua_status st, const char *what)
{
    b->errors++;
    if (b->errors == 1) {
        b->first_error = st;
        snprintf(b->first_error_what, sizeof(b->first_error_what),
                 "session %u: %s", s != NULL ? s->idx : 0, what);
    }
}

void
ub_sess_kill(struct ub *b, struct ub_sess *s, ua_status st, const char *what)
{
    if (s->state == UB_S_DEAD)
        return;
    ub_error(b, s, st, what);
    if (!b->quiet)
        fprintf(stderr, "uabench: session %u: %s: %s (0x%08X)\n", s->idx,
                what, ua_status_name(st), st);
    if (s->counted) {
        s->counted = false;
        b->ready--;
    }
    s->state = UB_S_DEAD;
    b->dead++;
    if (s->fd != -1) {
        epoll_ctl(b->ep, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        s->fd = -1;
    }
    s->out.len = 0;
    s->inflight = 0;
    s->unstamped = 0;
}

/*
 * Connect (non-blocking) with a fresh client; the buffers and the request
 * are made the first time.  The connect scenario calls it again for every
 * cycle.
 */
int
ub_sess_start(struct ub *b, struct ub_sess *s)
{
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
                              .data.ptr = s };
    int                one = 1;
    struct ua_client_config cfg = ua_client_config_default;
    ua_status          st;

    if (s->rbuf == NULL) {
        s->b = b;
        s->rcap = (size_t)cfg.recv_buffer * 2;
        s->rbuf = malloc(s->rcap);
        /* Room for depth requests of any scenario, plus the setup ones
         * (CreateMonitoredItems: under 64 bytes an item). */
        s->out.cap = 65536 + (size_t)b->depth * 16384
                     + (size_t)b->items * 64;
        s->wbuf = malloc(s->out.cap);
        s->out.buf = s->wbuf;
        s->abuf = malloc(UB_RESP_MAX);
        if (s->rbuf == NULL || s->wbuf == NULL || s->abuf == NULL)
            return -1;
        if (b->sc->init(b, s) != 0)
            return -1;
    }
    s->rlen = 0;
    s->out.len = 0;
    s->inflight = 0;
    s->unstamped = 0;
    ua_client_clear(&s->cl);
    ua_client_init(&s->cl, &cfg, s->abuf, UB_RESP_MAX);
    s->cl.fill_header = true;
    if (b->policy != NULL) {
        struct ua_client_security sec;

        memset(&sec, 0, sizeof(sec));
        sec.policy = b->policy;
        sec.mode = b->mode;
        sec.cert = b->cert;
        sec.cert_len = b->cert_len;
        sec.key = &b->key;
        sec.server_cert = b->server_cert;
        sec.server_cert_len = b->server_cert_len;
        st = ua_client_set_security(&s->cl, &sec);
        if (st != UA_GOOD) {
            fprintf(stderr, "uabench: ua_client_set_security(): %s\n",
                    ua_status_name(st));
            return -1;
        }
    }
    s->cycle_ns = ub_mono_ns();
    s->fd = socket(b->ai->ai_family,
                   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd == -1)
        return -1;
    setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(s->fd, b->ai->ai_addr, b->ai->ai_addrlen) == -1
        && errno != EINPROGRESS) {
        close(s->fd);
        s->fd = -1;
        return -1;
    }
    s->want_out = true;
    s->state = UB_S_CONNECTING;
    if (epoll_ctl(b->ep, EPOLL_CTL_ADD, s->fd, &ev) == -1)
        return -1;
    return 0;
}

void
ub_sess_dirty(struct ub *b, struct ub_sess *s)
{
    if (!s->dirty) {
        s->dirty = true;
        b->flush[b->nflush++] = s;
    }
}

/* Send what is queued: one send() per connection per loop iteration. */
void
ub_sess_flush(struct ub *b, struct ub_sess *s)
{
    ssize_t n;

    s->dirty = false;
    if (s->fd == -1 || s->out.len == 0 || s->state == UB_S_CONNECTING)
        return;
    if (s->unstamped > 0) {
        /* The requests queued since the last send leave now. */
        uint64_t now = ub_mono_ns();

        for (uint32_t i = 0; i < b->depth && s->unstamped > 0; i++)
            if (s->slots[i].request_id != 0 && s->slots[i].sent_ns == 0) {
                s->slots[i].sent_ns = now;
                s->unstamped--;
            }
        s->unstamped = 0;
    }
    n = send(s->fd, s->out.buf, s->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == -1) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            n = 0;
        else {
            ub_sess_kill(b, s, UA_BAD_CONNECTION_CLOSED, "send() failed");
            return;
        }
    }
    if ((size_t)n < s->out.len) {
        memmove(s->out.buf, s->out.buf + n, s->out.len - (size_t)n);
        s->out.len -= (size_t)n;
        if (!s->want_out) {
            struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
                                      .data.ptr = s };

            epoll_ctl(b->ep, EPOLL_CTL_MOD, s->fd, &ev);
            s->want_out = true;
        }
    } else {
        s->out.len = 0;
    }
}

void
ub_sess_writable(struct ub *b, struct ub_sess *s)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

    if (s->state == UB_S_CONNECTING) {
        int       err = 0;
        socklen_t el = sizeof(err);
        ua_status st;

        if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) == -1
            || err != 0) {
            ub_sess_kill(b, s, UA_BAD_COMMUNICATION_ERROR,
                         "connect() failed");
            return;
        }
        st = ua_client_hello(&s->cl, b->url, &s->out);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "ua_client_hello()");
            return;
        }
        s->state = UB_S_HEL;
        ub_sess_dirty(b, s);
    } else if (s->out.len > 0) {
        ub_sess_dirty(b, s);
        return;             /* the flush decides whether EPOLLOUT stays */
    }
    epoll_ctl(b->ep, EPOLL_CTL_MOD, s->fd, &ev);
    s->want_out = false;
}

void
ub_sess_readable(struct ub *b, struct ub_sess *s)
{
    ssize_t n;
    size_t  off = 0;
    uint64_t recv_ns;

    n = read(s->fd, s->rbuf + s->rlen, s->rcap - s->rlen);
    if (n == 0) {
        ub_sess_kill(b, s, UA_BAD_CONNECTION_CLOSED,
                     "the server closed the connection");
        return;
    }
    if (n == -1) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        ub_sess_kill(b, s, UA_BAD_CONNECTION_CLOSED, "read() failed");
        return;
    }
    recv_ns = ub_mono_ns();
    b->now_ns = recv_ns;
    s->rlen += (size_t)n;
    while (s->state != UB_S_DEAD) {
        uint32_t               chunk;
        struct ua_client_event ev;
        ua_status              st;

        st = ua_client_frame(&s->cl, s->rbuf + off, s->rlen - off, &chunk);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "bad chunk header from the server");
            return;
        }
        if (chunk == 0 || chunk > s->rlen - off)
            break;
        if (b->is_connect && b->opn_resp_blocks == 0)
            ub_opn_blocks(b, s->rbuf + off, chunk, b->cert_len > 0
                          ? ua_crypto_key_bytes(&b->cpub) : 0,
                          &b->opn_resp_blocks);
        st = ua_client_process(&s->cl, s->rbuf + off, chunk,
                               recv_ns / 1000000u, &ev);
        off += chunk;
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, ev.kind == UA_CLIENT_EV_ERR
                         ? "ERR from the server" : "bad chunk from the server");
            return;
        }
        ub_sess_event(b, s, &ev);
        /* connect: the cycle ended, the socket and buffer are new. */
        if (s->state == UB_S_CONNECTING || s->state == UB_S_IDLE)
            return;
    }
    if (s->state == UB_S_DEAD)
        return;
    if (off > 0) {
        memmove(s->rbuf, s->rbuf + off, s->rlen - off);
        s->rlen -= off;
    }
}

ua_status
ub_send_request(struct ub *b, struct ub_sess *s, const struct ua_type *t,
                void *req, uint32_t *request_id)
{
    ua_status st;

    s->cl.now_dt = b->now_dt;
    st = ua_client_request(&s->cl, t, req, request_id, &s->out);
    if (st == UA_GOOD)
        ub_sess_dirty(b, s);
    return st;
}

/* Keep depth requests in flight (READY, while loading). */
void
ub_sess_refill(struct ub *b, struct ub_sess *s)
{
    const struct ub_scenario *sc = b->sc;

    if (b->phase != UB_WARMUP && b->phase != UB_MEASURE)
        return;
    if (s->writer)
        return;                 /* paced by ub_sub_write() */
    if (b->is_connect) {
        if (s->state == UB_S_READY)
            ub_connect_close_session(b, s);     /* the first cycle's end */
        return;
    }
    while (s->state == UB_S_READY && s->inflight < b->depth) {
        uint32_t  id;
        ua_status st;
        uint32_t  i;

        sc->next(b, s);
        st = ub_send_request(b, s, &ua_types[sc->req_type], s->req, &id);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "cannot encode the request");
            return;
        }
        for (i = 0; i < b->depth; i++)
            if (s->slots[i].request_id == 0)
                break;
        s->slots[i].request_id = id;
        s->slots[i].sent_ns = 0;
        s->inflight++;
        s->unstamped++;
    }
}

static void
ub_sess_event(struct ub *b, struct ub_sess *s,
              const struct ua_client_event *ev)
{
    ua_status st;

    switch (ev->kind) {
    case UA_CLIENT_EV_NONE:
        return;
    case UA_CLIENT_EV_ACK:
        if (s->state != UB_S_HEL) {
            ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE, "unexpected ACK");
            return;
        }
        {
            size_t before = s->out.len;

            st = ua_client_open(&s->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 0,
                                NULL, &s->out);
            if (st != UA_GOOD) {
                ub_sess_kill(b, s, st, "ua_client_open()");
                return;
            }
            if (b->is_connect && b->opn_req_blocks == 0)
                ub_opn_blocks(b, s->out.buf + before, s->out.len - before,
                              ua_crypto_key_bytes(&s->cl.server_key),
                              &b->opn_req_blocks);
        }
        s->state = UB_S_OPN;
        ub_sess_dirty(b, s);
        return;
    case UA_CLIENT_EV_OPEN:
        if (UA_STATUS_IS_BAD(ev->status)) {
            ub_sess_kill(b, s, ev->status, "OpenSecureChannel failed");
            return;
        }
        if (s->state == UB_S_OPN) {
            struct ua_create_session_request r;

            memset(&r, 0, sizeof(r));
            if (b->policy == NULL
                || ua_crypto_random(s->nonce, sizeof(s->nonce)) != UA_GOOD)
                for (size_t i = 0; i < sizeof(s->nonce); i++)
                    s->nonce[i] = (uint8_t)rand();
            r.client_description.application_uri = ua_string_from(
                b->app_uri[0] != '\0' ? b->app_uri : "urn:uabroker:uabench");
            r.client_description.product_uri = ua_string_from(
                "urn:uabroker:uabench");
            r.client_description.application_name.mask = UA_LT_TEXT;
            r.client_description.application_name.text = ua_string_from(
                "uabench");
            r.client_description.application_type = 1;     /* Client */
            r.client_description.gateway_server_uri.len = -1;
            r.client_description.discovery_profile_uri.len = -1;
            r.client_description.n_discovery_urls = -1;
            r.server_uri.len = -1;
            r.endpoint_url = ua_string_from(b->url);
            r.session_name = ua_string_from("uabench");
            r.client_nonce.len = (int32_t)sizeof(s->nonce);
            r.client_nonce.data = s->nonce;
            r.client_certificate.len = -1;
            if (b->policy != NULL) {
                r.client_certificate.len = (int32_t)b->cert_len;
                r.client_certificate.data = b->cert;
            }
            r.requested_session_timeout = 600000;
            r.max_response_message_size = 0;
            st = ub_send_request(b, s,
                                 &ua_types[UA_TYPE_CREATESESSIONREQUEST], &r,
                                 &s->setup_request);
            if (st != UA_GOOD) {
                ub_sess_kill(b, s, st, "cannot encode CreateSession");
                return;
            }
            s->state = UB_S_CREATE;
        }
        /* A Renew: nothing to do, the client switches tokens itself. */
        return;
    case UA_CLIENT_EV_MSG:
        if (s->state == UB_S_READY)
            ub_sess_response(b, s, ev);
        else if (s->state == UB_S_CREATE || s->state == UB_S_ACTIVATE)
            ub_sess_setup_msg(b, s, ev);
        else if (s->state == UB_S_SUBSCRIBE || s->state == UB_S_ITEMS)
            ub_sub_setup_msg(b, s, ev);
        else if (s->state == UB_S_CLOSING)
            ub_connect_closed(b, s, ev);
        else
            ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                         "unexpected response");
        return;
    case UA_CLIENT_EV_ABORT:
        /* That response is lost; its slot is freed and refilled. */
        ub_error(b, s, ev->status, "abort chunk from the server");
        for (uint32_t i = 0; i < b->depth; i++)
            if (s->slots[i].request_id == ev->request_id
                && ev->request_id != 0) {
                s->slots[i].request_id = 0;
                s->inflight--;
            }
        ub_sess_refill(b, s);
        return;
    case UA_CLIENT_EV_ERR:
    default:
        ub_sess_kill(b, s, ev->status, "ERR from the server");
        return;
    }
}

/* CreateSession and ActivateSession responses. */
static void
ub_sess_setup_msg(struct ub *b, struct ub_sess *s,
                  const struct ua_client_event *ev)
{
    ua_status st;

    if (ev->request_id != s->setup_request) {
        ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request");
        return;
    }
    ua_arena_reset(&b->arena);
    if (s->state == UB_S_CREATE) {
        struct ua_create_session_response   r;
        struct ua_activate_session_request  a;
        struct ua_anonymous_identity_token  tok;
        struct ua_signature_data            sig = { { -1, NULL },
                                                    { -1, NULL } };

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_CREATESESSIONRESPONSE], &r,
                              &b->arena);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "CreateSession failed");
            return;
        }
        /* The anonymous PolicyId (GetEndpoints may have given it). */
        ub_anon_policy(b, r.server_endpoints, r.n_server_endpoints);
        if (b->policy != NULL) {
            st = ub_session_sigs(b, s, &r, &sig);
            if (st != UA_GOOD) {
                ub_sess_kill(b, s, st, "CreateSession: the server's "
                             "certificate or signature");
                return;
            }
        }
        st = ua_client_set_token(&s->cl, &r.authentication_token);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "authenticationToken too long");
            return;
        }
        memset(&a, 0, sizeof(a));
        memset(&tok, 0, sizeof(tok));
        tok.policy_id = ua_string_from(b->anon_policy[0] != '\0'
                                       ? b->anon_policy : "anonymous");
        a.client_signature = sig;
        a.n_client_software_certificates = 0;
        a.n_locale_ids = 0;
        a.user_identity_token.encoding = UA_EO_DECODED;
        a.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
        a.user_identity_token.obj = &tok;
        a.user_identity_token.type_id = ua_nodeid_num(
            0, ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN].binary_id);
        a.user_token_signature.algorithm.len = -1;
        a.user_token_signature.signature.len = -1;
        st = ub_send_request(b, s, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST],
                             &a, &s->setup_request);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "cannot encode ActivateSession");
            return;
        }
        s->state = UB_S_ACTIVATE;
        return;
    }
    {
        struct ua_activate_session_response r;

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &r,
                              &b->arena);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "ActivateSession failed");
            return;
        }
        if (ub_sub_setup(b, s))
            return;
        if (b->is_connect && b->phase != UB_SETUP) {
            ub_connect_close_session(b, s);
            return;
        }
        s->state = UB_S_READY;
        ub_sess_ready(b, s);
        ub_sess_refill(b, s);
    }
}

void
ub_sess_ready(struct ub *b, struct ub_sess *s)
{
    if (!s->counted) {
        s->counted = true;
        b->ready++;
    }
}

/*
 * Check one response body (type NodeId + response): its type, the
 * ServiceResult, the number of results and the first result's status.
 * Only the header and the first result are decoded.
 */
static ua_status
ub_check(struct ub *b, const struct ub_scenario *sc, const uint8_t *body,
         size_t len)
{
    struct ua_nodeid          tid;
    struct ua_response_header h;
    int32_t                   n;
    size_t                    used, off = 0;
    ua_status                 st;
    void                     *first;
    const struct ua_type     *rt = &ua_types[sc->result_type];

    ua_arena_reset(&b->arena);
    st = ua_decode(body, len, &used, &tid, &ua_types[UA_TYPE_NODEID],
                   &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    off += used;
    if (tid.ns != 0 || tid.idtype != UA_IDTYPE_NUMERIC)
        return UA_BAD_UNKNOWN_RESPONSE;
    st = ua_decode(body + off, len - off, &used, &h,
                   &ua_types[UA_TYPE_RESPONSEHEADER], &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    off += used;
    if (tid.id.num == UA_NS0ID_SERVICEFAULT_ENCODING_DEFAULTBINARY)
        return UA_STATUS_IS_BAD(h.service_result) ? h.service_result
                                                  : UA_BAD_UNKNOWN_RESPONSE;
    if (tid.id.num != ua_types[sc->resp_type].binary_id)
        return UA_BAD_UNKNOWN_RESPONSE;
    if (UA_STATUS_IS_BAD(h.service_result))
        return h.service_result;
    st = ua_decode(body + off, len - off, &used, &n,
                   &ua_types[UA_TYPE_INT32], &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    off += used;
    if (n != sc->nresults)
        return UA_BAD_UNEXPECTED_ERROR;
    first = ua_arena_alloc(&b->arena, rt->size);
    if (first == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    st = ua_decode(body + off, len - off, &used, first, rt, &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    return sc->status(first);
}

static void
ub_sess_response(struct ub *b, struct ub_sess *s,
                 const struct ua_client_event *ev)
{
    uint32_t  i;
    ua_status st;

    for (i = 0; i < b->depth; i++)
        if (s->slots[i].request_id == ev->request_id)
            break;
    if (b->is_sub) {
        ub_sub_response(b, s, ev);
        return;
    }
    if (i == b->depth || ev->request_id == 0) {
        /* A CloseSession response while draining, or a stray one. */
        if (b->phase < UB_DRAIN)
            ub_error(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request id");
        return;
    }
    if (b->phase == UB_MEASURE) {
        uint64_t sent = s->slots[i].sent_ns;

        b->ops++;
        if (sent != 0 && b->now_ns >= sent)
            ub_hist_add(b, b->now_ns - sent);
    }
    s->slots[i].request_id = 0;
    s->inflight--;
    st = ub_check(b, b->sc, ev->body, ev->len);
    if (st != UA_GOOD) {
        char what[96];

        snprintf(what, sizeof(what), "%s response: %s (0x%08X)", b->sc->name,
                 ua_status_name(st), st);
        ub_error(b, s, st, what);
    }
    ub_sess_refill(b, s);
}
