/*
 * tests/unit/proto/check_client.c: the client state machine
 * (proto/client.c) against the server state machine (proto/securechannel.c)
 * in memory: whole HEL/OPN/MSG/CLO conversations, multi-chunk messages
 * both ways, renewals, ERR and abort chunks, and the client's own checks
 * on what a (misbehaving) server sends.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/client.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

#define CL_BUF  (1u << 19)
#define CL_ASM  (1u << 20)

struct cl_h {
    struct ua_sc_config     cfg;
    struct ua_sc            ch;
    struct ua_client_config ccfg;
    struct ua_client        cl;
    int64_t                 now_dt;
    uint64_t                now;
    struct ua_sc_out        sout;
    struct ua_sc_out        cout;
    struct ua_sc_msg        msg;
    struct ua_client_event  ev;
    int                     nev;        /* events seen by cl_to_client() */
    struct ua_arena         arena;
    uint8_t                 sbuf[CL_BUF];
    uint8_t                 cbuf[CL_BUF];
    uint8_t                 casm[CL_ASM];
    uint8_t                 abuf[CL_ASM];
    char                    store[CL_BUF];
    struct ua_read_value_id ids[8192];
    struct ua_datavalue     dv[2048];
    struct ua_string        str[2048];
};

static struct cl_h *h;

static void *cl_alloc(void *ctx, size_t n);
static void cl_free(void *ctx, void *p);
static void cl_setup(void);
static void cl_teardown(void);
static void cl_init(size_t asm_cap);
static ua_status cl_to_server(void);
static ua_status cl_to_client(void);
static void cl_open(void);
static uint32_t cl_read(uint32_t nodes);
static void cl_response(struct ua_read_response *r, uint32_t n, size_t slen);
static void cl_wr32(uint8_t *p, uint32_t v);
static uint32_t cl_rd32(const uint8_t *p);

/* ------------------------------------------------------------ harness */

static void *
cl_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}

static void
cl_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void
cl_setup(void)
{
    h = calloc(1, sizeof(*h));
    ck_assert_ptr_nonnull(h);
    h->ccfg = ua_client_config_default;
    cl_init(CL_ASM);
}

static void
cl_teardown(void)
{
    ua_sc_clear(&h->ch);
    free(h);
    h = NULL;
}

/* Server: 8 KiB chunks, 1 MiB / 256 chunks; client: h->ccfg. */
static void
cl_init(size_t asm_cap)
{
    struct ua_sc_mem mem = { cl_alloc, cl_free, NULL };

    ua_sc_clear(&h->ch);
    memset(&h->cfg, 0, sizeof(h->cfg));
    h->cfg.recv_buffer = 8192;
    h->cfg.send_buffer = 8192;
    h->cfg.max_message = 1 << 20;
    h->cfg.max_chunks = 256;
    h->cfg.min_lifetime_ms = 1000;
    h->cfg.max_lifetime_ms = 3600000;
    h->cfg.limits = ua_limits_default;
    h->now_dt = 132000000000000000LL;
    h->cfg.now_dt = &h->now_dt;
    h->now = 5000;
    ua_sc_init(&h->ch, &h->cfg, &mem, 42);
    ua_client_init(&h->cl, &h->ccfg, asm_cap ? h->casm : NULL, asm_cap);
    h->sout = (struct ua_sc_out){ h->sbuf, sizeof(h->sbuf), 0 };
    h->cout = (struct ua_sc_out){ h->cbuf, sizeof(h->cbuf), 0 };
    ua_arena_init(&h->arena, h->abuf, sizeof(h->abuf));
    h->nev = 0;
}

/* Everything the client wrote, through ua_sc_frame/ua_sc_process. */
static ua_status
cl_to_server(void)
{
    const uint8_t *p = h->cbuf;
    size_t         n = h->cout.len;

    h->cout.len = 0;
    while (n > 0) {
        uint32_t  chunk;
        ua_status s = ua_sc_frame(&h->ch, p, n, &chunk);

        if (s != UA_GOOD)
            return s;
        ck_assert_uint_ne(chunk, 0);
        ck_assert_uint_le(chunk, n);
        s = ua_sc_process(&h->ch, p, chunk, h->now, &h->sout, &h->msg);
        while (s == UA_GOOD && ua_sc_busy(&h->ch))    /* a staged OPN */
            s = ua_sc_resume(&h->ch, h->now, &h->sout);
        if (s != UA_GOOD)
            return s;
        p += chunk;
        n -= chunk;
    }
    return UA_GOOD;
}

/* Everything the server wrote, through the client. */
static ua_status
cl_to_client(void)
{
    const uint8_t *p = h->sbuf;
    size_t         n = h->sout.len;

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
        if (ev.kind != UA_CLIENT_EV_NONE) {
            h->ev = ev;
            h->nev++;
        }
        if (s != UA_GOOD)
            return s;
        p += chunk;
        n -= chunk;
    }
    return UA_GOOD;
}

static void
cl_open(void)
{
    ck_assert_uint_eq(ua_client_hello(&h->cl, "opc.tcp://h:4840", &h->cout),
                      UA_GOOD);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_HEL_SENT);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_ACK);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_ACKED);
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_OPN_SENT);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_OPEN);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_OPEN);
}

static uint32_t
cl_read(uint32_t nodes)
{
    struct ua_read_request req;
    uint32_t               id;

    ck_assert_uint_le(nodes, 8192);
    memset(&req, 0, sizeof(req));
    for (uint32_t i = 0; i < nodes; i++) {
        memset(&h->ids[i], 0, sizeof(h->ids[i]));
        h->ids[i].node_id = ua_nodeid_num(2, 70000 + i);
        h->ids[i].attribute_id = 13;
        h->ids[i].index_range.len = -1;
        h->ids[i].data_encoding.name.len = -1;
    }
    req.n_nodes_to_read = (int32_t)nodes;
    req.nodes_to_read = h->ids;
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        &id, &h->cout), UA_GOOD);
    return id;
}

static void
cl_response(struct ua_read_response *r, uint32_t n, size_t slen)
{
    ck_assert_uint_le(n, 2048);
    ck_assert_uint_le(n * slen, sizeof(h->store));
    memset(r, 0, sizeof(*r));
    r->response_header.request_handle = 3;
    r->n_results = (int32_t)n;
    r->results = h->dv;
    r->n_diagnostic_infos = -1;
    for (uint32_t i = 0; i < n; i++) {
        memset(h->store + i * slen, '0' + (int)(i % 10), slen);
        h->str[i].len = (int32_t)slen;
        h->str[i].data = (uint8_t *)h->store + i * slen;
        memset(&h->dv[i], 0, sizeof(h->dv[i]));
        h->dv[i].mask = UA_DV_VALUE;
        ua_variant_set_scalar(&h->dv[i].value, &h->str[i], UA_BT_STRING);
    }
}

static void
cl_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t
cl_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------ tests */

START_TEST(test_conversation)
{
    struct ua_read_request  req;
    struct ua_read_response r, got;
    uint32_t                id, old;
    size_t                  used;

    cl_open();
    /* HEL/ACK: the client offered 64 KiB, the server 8 KiB. */
    ck_assert_uint_eq(h->cl.send_buffer, 8192);
    ck_assert_uint_eq(h->cl.recv_buffer, 8192);
    ck_assert_uint_eq(h->cl.peer_max_message, 1 << 20);
    ck_assert_uint_eq(h->cl.peer_max_chunks, 256);
    ck_assert_uint_eq(h->ch.peer_max_message, CL_ASM);  /* the buffer */
    /* OPN: the server's channel and token; default lifetime 10 min. */
    ck_assert_uint_eq(h->cl.channel_id, 42);
    ck_assert_uint_eq(h->cl.token_id, h->ch.token_id);
    ck_assert_uint_eq(h->cl.lifetime_ms, 600000);
    ck_assert_int_eq(h->cl.token_created_dt, h->now_dt);

    /* MSG: request, response. */
    h->cl.now_dt = 1234567;
    id = cl_read(2);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(h->msg.request_id, id);
    ck_assert_uint_eq(ua_decode(h->msg.body + 4, h->msg.len - 4, &used, &req,
                                &ua_types[UA_TYPE_READREQUEST], &h->arena,
                                NULL), UA_GOOD);
    ck_assert_int_eq(req.request_header.timestamp, 1234567);
    ck_assert_uint_eq(req.request_header.request_handle, 2);
    ck_assert_uint_eq(req.nodes_to_read[1].node_id.id.num, 70001);
    cl_response(&r, 3, 10);
    ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                 &ua_types[UA_TYPE_READRESPONSE], &r,
                                 &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_uint_eq(h->ev.request_id, id);
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_READRESPONSE], &got,
                                       &h->arena), UA_GOOD);
    ck_assert(ua_equal(&r, &got, &ua_types[UA_TYPE_READRESPONSE]));

    /* Renew: new token on both sides, the channel stays. */
    old = h->cl.token_id;
    h->now += 450000;
    ck_assert(ua_client_renew_due(&h->cl, h->now));
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert(!ua_client_renew_due(&h->cl, h->now));   /* one in flight */
    /* A request sent before the response still uses the old token. */
    id = cl_read(1);
    ck_assert_uint_eq(cl_rd32(h->cbuf + cl_rd32(h->cbuf + 4) + 12), old);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(h->ch.prev_token_id, old);
    ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                 &ua_types[UA_TYPE_READRESPONSE], &r,
                                 &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_uint_eq(h->ev.request_id, id);
    ck_assert_uint_ne(h->cl.token_id, old);
    ck_assert_uint_eq(h->cl.token_id, h->ch.token_id);
    ck_assert_uint_eq(h->cl.channel_id, 42);
    ck_assert(!ua_client_renew_due(&h->cl, h->now));
    /* The next request uses the new token; the server drops the old. */
    cl_read(1);
    ck_assert_uint_eq(cl_rd32(h->cbuf + 12), h->ch.token_id);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(h->ch.prev_token_id, 0);
    ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                 &ua_types[UA_TYPE_READRESPONSE], &r,
                                 &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->cl.prev_token_id, 0);

    /* CLO ends it on both sides. */
    ck_assert_uint_eq(ua_client_close(&h->cl, &h->cout), UA_GOOD);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_CLOSED);
    ck_assert_mem_eq(h->cbuf, "CLOF", 4);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    ck_assert_uint_eq(h->sout.len, 0);
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        NULL, &h->cout), UA_BAD_INVALID_STATE);
}
END_TEST

START_TEST(test_multichunk_both_ways)
{
    struct ua_read_request  req;
    struct ua_read_response r, got;
    uint32_t                id, chunks = 0;
    size_t                  used, off;

    cl_open();
    id = cl_read(5000);                 /* ~ 105 KB: 13+ chunks */
    for (off = 0; off < h->cout.len; off += cl_rd32(h->cbuf + off + 4)) {
        ck_assert_uint_le(cl_rd32(h->cbuf + off + 4), 8192);
        ck_assert_uint_eq(cl_rd32(h->cbuf + off + 20), id);
        chunks++;
    }
    ck_assert_uint_ge(chunks, 13);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(h->msg.request_id, id);
    ck_assert_uint_eq(ua_decode(h->msg.body + 4, h->msg.len - 4, &used, &req,
                                &ua_types[UA_TYPE_READREQUEST], &h->arena,
                                NULL), UA_GOOD);
    ck_assert_int_eq(req.n_nodes_to_read, 5000);
    ck_assert_uint_eq(req.nodes_to_read[4999].node_id.id.num, 74999);

    cl_response(&r, 2000, 200);         /* ~ 412 KB */
    ck_assert_uint_eq(ua_sc_send(&h->ch, id, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    h->nev = 0;
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_int_eq(h->nev, 1);        /* one message, many chunks */
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_ptr_eq(h->ev.body, h->casm);
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_READRESPONSE], &got,
                                       &h->arena), UA_GOOD);
    ck_assert(ua_equal(&r, &got, &ua_types[UA_TYPE_READRESPONSE]));
    /* And a small one after it, in place. */
    cl_read(1);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    cl_response(&r, 1, 1);
    ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                 &ua_types[UA_TYPE_READRESPONSE], &r,
                                 &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_ptr_eq(h->ev.body, h->sbuf + UA_SC_SYM_HEADER);
}
END_TEST

START_TEST(test_reassembly_limits)
{
    struct ua_read_response r;

    /* The reassembly buffer bounds what the client announces and takes. */
    cl_init(20000);
    ck_assert_uint_eq(h->cl.cfg.max_message, 20000);
    cl_open();
    ck_assert_uint_eq(h->ch.peer_max_message, 20000);
    cl_response(&r, 100, 100);          /* ~ 10 KB: fits */
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    /* A server ignoring the limit: the client refuses before copying. */
    cl_response(&r, 300, 100);          /* ~ 31 KB */
    h->ch.peer_max_message = 0;
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_MESSAGE_TOO_LARGE);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_CLOSED);

    /* Without a buffer: one chunk per message only. */
    cl_init(0);
    ck_assert_uint_eq(h->cl.cfg.max_chunks, 1);
    cl_open();
    ck_assert_uint_eq(h->ch.peer_max_chunks, 1);
    cl_response(&r, 100, 100);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_BAD_RESPONSE_TOO_LARGE);
    h->ch.peer_max_chunks = 0;
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_MESSAGE_TOO_LARGE);

    /* The client's own MaxChunkCount. */
    h->ccfg.max_chunks = 2;
    cl_init(CL_ASM);
    cl_open();
    cl_response(&r, 200, 100);          /* 3 chunks */
    h->ch.peer_max_chunks = 0;
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_MESSAGE_TOO_LARGE);
}
END_TEST

START_TEST(test_request_too_large)
{
    struct ua_read_request req;
    uint32_t               seq;

    h->cfg.max_message = 0;
    cl_open();
    /* The server announced 1 MiB at init; pretend it said 10000. */
    h->cl.peer_max_message = 10000;
    seq = h->cl.send_seq;
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_read = 1000;
    req.nodes_to_read = h->ids;
    for (int i = 0; i < 1000; i++) {
        memset(&h->ids[i], 0, sizeof(h->ids[i]));
        h->ids[i].node_id = ua_nodeid_num(2, 70000);
        h->ids[i].index_range.len = -1;
    }
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        NULL, &h->cout),
                      UA_BAD_REQUEST_TOO_LARGE);
    ck_assert_uint_eq(h->cout.len, 0);
    ck_assert_uint_eq(h->cl.send_seq, seq);
    h->cl.peer_max_message = 0;
    h->cl.peer_max_chunks = 2;
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        NULL, &h->cout),
                      UA_BAD_REQUEST_TOO_LARGE);
    h->cl.peer_max_chunks = 0;
    h->cout.cap = 1000;
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        NULL, &h->cout),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_OPEN);
}
END_TEST

START_TEST(test_err_from_server)
{
    ck_assert_uint_eq(ua_client_hello(&h->cl, NULL, &h->cout), UA_GOOD);
    ua_sc_write_err(&h->sout, UA_BAD_TCP_ENDPOINT_URL_INVALID, "bad url");
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_ENDPOINT_URL_INVALID);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_ERR);
    ck_assert_uint_eq(h->ev.status, UA_BAD_TCP_ENDPOINT_URL_INVALID);
    ck_assert_int_eq(h->ev.reason.len, 7);
    ck_assert_mem_eq(h->ev.reason.data, "bad url", 7);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_CLOSED);
    /* The server refusing a small buffer end to end. */
    h->ccfg.recv_buffer = 4096;
    cl_init(CL_ASM);
    ck_assert_uint_eq(ua_client_hello(&h->cl, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(cl_to_server(), UA_BAD_CONNECTION_REJECTED);
    ua_sc_write_err(&h->sout, UA_BAD_CONNECTION_REJECTED, NULL);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_CONNECTION_REJECTED);
    ck_assert_int_eq(h->ev.reason.len, -1);
}
END_TEST

START_TEST(test_abort_from_server)
{
    struct ua_read_response r;
    uint8_t                 a[64];
    uint32_t                seq;
    size_t                  first;

    cl_open();
    cl_response(&r, 200, 100);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 9, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    /* Keep only the first chunk, then an abort for the same request. */
    first = cl_rd32(h->sbuf + 4);
    ck_assert_int_eq(h->sbuf[3], 'C');
    seq = cl_rd32(h->sbuf + 16);
    h->sout.len = first;
    memcpy(a, "MSGA", 4);
    cl_wr32(a + 4, 24 + 8 + 5);
    cl_wr32(a + 8, 42);
    cl_wr32(a + 12, h->ch.token_id);
    cl_wr32(a + 16, seq + 1);
    cl_wr32(a + 20, 9);
    cl_wr32(a + 24, UA_BAD_RESPONSE_TOO_LARGE);
    cl_wr32(a + 28, 5);
    memcpy(a + 32, "large", 5);
    memcpy(h->sbuf + first, a, 37);
    h->sout.len += 37;
    h->nev = 0;
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_int_eq(h->nev, 1);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_ABORT);
    ck_assert_uint_eq(h->ev.request_id, 9);
    ck_assert_uint_eq(h->ev.status, UA_BAD_RESPONSE_TOO_LARGE);
    ck_assert_int_eq(h->ev.reason.len, 5);
    ck_assert_uint_eq(h->cl.asm_len, 0);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_OPEN);
    /* The channel goes on: the server's next chunk is seq + 2. */
    h->ch.send_seq = seq + 1;
    cl_response(&r, 1, 3);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 10, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_uint_eq(h->ev.request_id, 10);
}
END_TEST

START_TEST(test_bad_server_chunks)
{
    struct ua_read_response r;
    uint8_t                 copy[256];
    size_t                  n;

    cl_open();
    cl_response(&r, 1, 3);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    n = h->sout.len;
    memcpy(copy, h->sbuf, n);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    /* Replayed: the sequence number is not the next one. */
    memcpy(h->sbuf, copy, n);
    h->sout.len = n;
    ck_assert_uint_eq(cl_to_client(), UA_BAD_SEQUENCE_NUMBER_INVALID);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_CLOSED);
    /* An unknown token, a wrong channel. */
    cl_init(CL_ASM);
    cl_open();
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    cl_wr32(h->sbuf + 12, h->ch.token_id + 1);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
    cl_init(CL_ASM);
    cl_open();
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    cl_wr32(h->sbuf + 8, 43);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN);
    /* Interleaved request ids in a multi-chunk response. */
    cl_init(CL_ASM);
    cl_open();
    cl_response(&r, 200, 100);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 1, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    n = cl_rd32(h->sbuf + 4);
    cl_wr32(h->sbuf + n + 20, 2);
    ck_assert_uint_eq(cl_to_client(), UA_BAD_SECURITY_CHECKS_FAILED);
    /* A MSG before the channel is open, an ACK twice. */
    cl_init(CL_ASM);
    ck_assert_uint_eq(ua_client_hello(&h->cl, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    n = h->sout.len;
    memcpy(h->sbuf + n, h->sbuf, n);
    h->sout.len = 2 * n;
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_int_eq(h->nev, 1);
}
END_TEST

START_TEST(test_frame)
{
    uint8_t  b[16] = { 0 };
    uint32_t chunk = 1;

    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 7, &chunk), UA_GOOD);
    ck_assert_uint_eq(chunk, 0);
    memcpy(b, "HELF\x20\0\0\0", 8);         /* servers do not send HEL */
    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    memcpy(b, "ACKC\x1c\0\0\0", 8);
    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    memcpy(b, "MSGF\x07\0\0\0", 8);
    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    memcpy(b, "MSGF\xff\xff\xff\xff", 8);
    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TOO_LARGE);
    memcpy(b, "MSGA\x00\x00\x01\x00", 8);   /* 65536: our offer */
    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 8, &chunk), UA_GOOD);
    ck_assert_uint_eq(chunk, 65536);
    /* After the ACK, the negotiated 8192 is the limit. */
    cl_open();
    memcpy(b, "MSGF\x01\x20\0\0", 8);
    ck_assert_uint_eq(ua_client_frame(&h->cl, b, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TOO_LARGE);
}
END_TEST

START_TEST(test_states)
{
    struct ua_read_request req;

    memset(&req, 0, sizeof(req));
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_BAD_INVALID_STATE);
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        NULL, &h->cout), UA_BAD_INVALID_STATE);
    ck_assert_uint_eq(ua_client_close(&h->cl, &h->cout), UA_BAD_INVALID_STATE);
    ck_assert_uint_eq(ua_client_hello(&h->cl, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(ua_client_hello(&h->cl, NULL, &h->cout),
                      UA_BAD_INVALID_STATE);
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_BAD_INVALID_STATE);
    ck_assert_uint_eq(ua_client_open(&h->cl, 7, 0, NULL, &h->cout),
                      UA_BAD_REQUEST_TYPE_INVALID);
    /* A request type without a RequestHeader first. */
    cl_init(CL_ASM);
    cl_open();
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READVALUEID],
                                        &h->ids[0], NULL, &h->cout),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_BAD_INVALID_STATE);
}
END_TEST

START_TEST(test_token_and_header)
{
    struct ua_read_request req;
    struct ua_nodeid       tok;
    uint8_t                bytes[32], big[200];
    size_t                 used;

    cl_open();
    memset(bytes, 0xAB, sizeof(bytes));
    tok.ns = 1;
    tok.idtype = UA_IDTYPE_OPAQUE;
    tok.id.str.len = 32;
    tok.id.str.data = bytes;
    ck_assert_uint_eq(ua_client_set_token(&h->cl, &tok), UA_GOOD);
    memset(bytes, 0, sizeof(bytes));        /* the client kept a copy */
    cl_read(1);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(ua_decode(h->msg.body + 4, h->msg.len - 4, &used, &req,
                                &ua_types[UA_TYPE_READREQUEST], &h->arena,
                                NULL), UA_GOOD);
    ck_assert_uint_eq(req.request_header.authentication_token.idtype,
                      UA_IDTYPE_OPAQUE);
    ck_assert_int_eq(req.request_header.authentication_token.id.str.len, 32);
    ck_assert_uint_eq(req.request_header.authentication_token.id.str.data[31],
                      0xAB);
    /* Too long to keep; numeric ones are fine; NULL clears. */
    tok.id.str.len = sizeof(big);
    tok.id.str.data = big;
    ck_assert_uint_eq(ua_client_set_token(&h->cl, &tok),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    tok = ua_nodeid_num(3, 99);
    ck_assert_uint_eq(ua_client_set_token(&h->cl, &tok), UA_GOOD);
    ck_assert(ua_nodeid_equal(&h->cl.auth_token, &tok));
    ck_assert_uint_eq(ua_client_set_token(&h->cl, NULL), UA_GOOD);
    ck_assert_uint_eq(h->cl.auth_token.id.num, 0);

    /* fill_header off: the header goes out as the caller set it. */
    h->cl.fill_header = false;
    memset(&req, 0, sizeof(req));
    req.request_header.request_handle = 4242;
    req.request_header.timeout_hint = 777;
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(ua_decode(h->msg.body + 4, h->msg.len - 4, &used, &req,
                                &ua_types[UA_TYPE_READREQUEST], &h->arena,
                                NULL), UA_GOOD);
    ck_assert_uint_eq(req.request_header.request_handle, 4242);
    ck_assert_uint_eq(req.request_header.timeout_hint, 777);
}
END_TEST

START_TEST(test_decode_fault)
{
    struct ua_service_fault f;
    struct ua_read_response got;
    uint32_t                id;

    cl_open();
    id = cl_read(1);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    memset(&f, 0, sizeof(f));
    f.response_header.request_handle = 2;
    f.response_header.service_result = UA_BAD_SERVICE_UNSUPPORTED;
    ck_assert_uint_eq(ua_sc_send(&h->ch, id, &ua_types[UA_TYPE_SERVICEFAULT],
                                 &f, &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    memset(&got, 0x5A, sizeof(got));
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_READRESPONSE], &got,
                                       &h->arena),
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_uint_eq(got.response_header.service_result,
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_uint_eq(got.response_header.request_handle, 2);
    ck_assert_int_eq(got.n_results, 0);
    ck_assert_ptr_null(got.results);
    /* Asking for a ServiceFault gets it as such. */
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_SERVICEFAULT], &f,
                                       &h->arena), UA_GOOD);
    /* A fault answers any type; a ReadResponse is not a BrowseResponse. */
    cl_read(1);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    memset(&got, 0, sizeof(got));
    got.n_diagnostic_infos = -1;
    ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                 &ua_types[UA_TYPE_READRESPONSE], &got,
                                 &h->sout), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_BROWSERESPONSE],
                                       h->abuf, &h->arena),
                      UA_BAD_UNKNOWN_RESPONSE);
}
END_TEST

START_TEST(test_renew_due)
{
    cl_open();
    ck_assert(!ua_client_renew_due(&h->cl, h->now + 449999));
    ck_assert(ua_client_renew_due(&h->cl, h->now + 450000));
}
END_TEST

START_TEST(test_opn_response_checks)
{
    /* An OPN response for another request id. */
    ck_assert_uint_eq(ua_client_hello(&h->cl, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    ck_assert_uint_eq(cl_to_client(), UA_GOOD);
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    h->cl.opn_request_id++;
    ck_assert_uint_eq(cl_to_client(), UA_BAD_SECURITY_CHECKS_FAILED);
    /* An OPN response nobody asked for. */
    cl_init(CL_ASM);
    cl_open();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(cl_to_server(), UA_GOOD);
    h->cl.opn_request_id = 0;
    ck_assert_uint_eq(cl_to_client(), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

static Suite *
cl_suite(void)
{
    Suite *s = suite_create("Client");
    TCase *tc = tcase_create("Client against server");

    tcase_add_checked_fixture(tc, cl_setup, cl_teardown);
    tcase_add_test(tc, test_conversation);
    tcase_add_test(tc, test_multichunk_both_ways);
    tcase_add_test(tc, test_reassembly_limits);
    tcase_add_test(tc, test_request_too_large);
    tcase_add_test(tc, test_err_from_server);
    tcase_add_test(tc, test_abort_from_server);
    tcase_add_test(tc, test_bad_server_chunks);
    tcase_add_test(tc, test_frame);
    tcase_add_test(tc, test_states);
    tcase_add_test(tc, test_token_and_header);
    tcase_add_test(tc, test_decode_fault);
    tcase_add_test(tc, test_renew_due);
    tcase_add_test(tc, test_opn_response_checks);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(cl_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
