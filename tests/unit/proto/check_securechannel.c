/*
 * tests/unit/proto/check_securechannel.c: the server-side secure channel
 * state machine (proto/securechannel.c), driven with bytes and a given
 * clock, no sockets.
 *
 * Valid traffic is built with the client state machine (proto/client.h);
 * invalid traffic is built byte by byte (sc_hel(), sc_sym(), sc_opn()) or
 * by patching what the client built.  Every input goes through
 * ua_sc_frame() before ua_sc_process(), the way the worker calls them.
 * The reassembly allocator counts bytes and calls and can be told to fail.
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

#define SC_BUF      (1u << 19)
#define SC_ASM      (1u << 20)
#define SC_NOW_DT   133000000000000000LL    /* some DateTime in 2022 */
#define SC_PLEN     (sizeof(UA_SC_POLICY_NONE) - 1)
#define SC_OPN_REQ_ID  UA_NS0ID_OPENSECURECHANNELREQUEST_ENCODING_DEFAULTBINARY
#define SC_OPN_RESP_ID UA_NS0ID_OPENSECURECHANNELRESPONSE_ENCODING_DEFAULTBINARY
#define SC_BASIC256SHA256 \
    "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256"

/* Everything one conversation needs; malloc'd per test (forked). */
struct sc_h {
    struct ua_sc_config     cfg;
    struct ua_sc            ch;
    struct ua_client_config ccfg;
    struct ua_client        cl;
    int64_t                 now_dt;
    uint64_t                now;
    struct ua_sc_out        sout;       /* server -> client */
    struct ua_sc_out        cout;       /* client -> server */
    struct ua_sc_msg        msg;        /* the last one the server made */
    struct ua_client_event  ev;         /* the last client event */
    struct ua_arena         arena;
    uint8_t                 sbuf[SC_BUF];
    uint8_t                 cbuf[SC_BUF];
    uint8_t                 casm[SC_ASM];
    uint8_t                 raw[SC_BUF];
    uint8_t                 abuf[SC_ASM];
};

/* The counting allocator behind ch->mem. */
struct sc_alloc {
    long   calls;
    long   allocs;              /* calls that returned memory */
    long   frees;
    long   fail_at;             /* fail the n-th call (1-based), 0: never */
    size_t live;
    size_t max_block;
};

static struct sc_h     *h;
static struct sc_alloc  al;

static void *sc_alloc_fn(void *ctx, size_t n);
static void sc_free_fn(void *ctx, void *p);
static void sc_setup(void);
static void sc_teardown(void);
static void sc_init(uint32_t recv, uint32_t send, uint32_t max_msg,
                    uint32_t max_chunks);
static ua_status sc_feed(const uint8_t *p, size_t n);
static ua_status sc_flush_client(void);
static ua_status sc_to_client(void);
static void sc_hello(void);
static void sc_open(void);
static size_t sc_hel(uint8_t *p, uint32_t ver, uint32_t rbuf, uint32_t sbuf,
                     uint32_t maxmsg, uint32_t maxchunks, int32_t ulen,
                     size_t url_bytes);
static size_t sc_sym(uint8_t *p, const char *mt, uint32_t channel,
                     uint32_t token, uint32_t seq, uint32_t request_id,
                     const uint8_t *body, size_t blen);
static size_t sc_opn(uint8_t *p, const char *policy, uint32_t channel,
                     uint32_t seq, int32_t type, int32_t mode,
                     uint32_t lifetime);
static void sc_wr32(uint8_t *p, uint32_t v);
static uint32_t sc_rd32(const uint8_t *p);
static uint32_t sc_read_request(uint32_t nodes);
static void sc_read_response(struct ua_read_response *r, uint32_t n,
                             size_t slen, char *store);

/* ------------------------------------------------------------ harness */

static void *
sc_alloc_fn(void *ctx, size_t n)
{
    size_t *p;

    (void)ctx;
    al.calls++;
    if (al.fail_at != 0 && al.calls == al.fail_at)
        return NULL;
    p = malloc(n + sizeof(size_t) * 2);
    if (p == NULL)
        return NULL;
    p[0] = n;
    al.allocs++;
    al.live += n;
    if (n > al.max_block)
        al.max_block = n;
    return p + 2;
}

static void
sc_free_fn(void *ctx, void *q)
{
    size_t *p = (size_t *)q - 2;

    (void)ctx;
    al.frees++;
    al.live -= p[0];
    free(p);
}

static void
sc_setup(void)
{
    h = calloc(1, sizeof(*h));
    ck_assert_ptr_nonnull(h);
    memset(&al, 0, sizeof(al));
    sc_init(8192, 8192, 65536, 16);
}

static void
sc_teardown(void)
{
    ua_sc_clear(&h->ch);
    ck_assert_int_eq(al.live, 0);
    ck_assert_int_eq(al.allocs, al.frees);
    free(h);
    h = NULL;
}

/* Server limits (recv/send buffers, MaxMessageSize, MaxChunkCount); the
 * client offers 64 KiB buffers and no message limits. */
static void
sc_init(uint32_t recv, uint32_t send, uint32_t max_msg, uint32_t max_chunks)
{
    struct ua_sc_mem mem = { sc_alloc_fn, sc_free_fn, NULL };

    ua_sc_clear(&h->ch);
    memset(&h->cfg, 0, sizeof(h->cfg));
    h->cfg.recv_buffer = recv;
    h->cfg.send_buffer = send;
    h->cfg.max_message = max_msg;
    h->cfg.max_chunks = max_chunks;
    h->cfg.min_lifetime_ms = 1000;
    h->cfg.max_lifetime_ms = 3600000;
    h->cfg.limits = ua_limits_default;
    h->now_dt = SC_NOW_DT;
    h->cfg.now_dt = &h->now_dt;
    h->now = 1000000;
    ua_sc_init(&h->ch, &h->cfg, &mem, 7);
    h->ccfg = ua_client_config_default;
    h->ccfg.max_message = 0;
    h->ccfg.max_chunks = 0;
    ua_client_init(&h->cl, &h->ccfg, h->casm, sizeof(h->casm));
    h->sout = (struct ua_sc_out){ h->sbuf, sizeof(h->sbuf), 0 };
    h->cout = (struct ua_sc_out){ h->cbuf, sizeof(h->cbuf), 0 };
    ua_arena_init(&h->arena, h->abuf, sizeof(h->abuf));
}

/*
 * Frame and process every whole chunk of p[n], like the worker does.
 * Returns the first Bad status (from ua_sc_frame or ua_sc_process), or
 * UA_GOOD; a trailing partial chunk fails the test.
 */
static ua_status
sc_feed(const uint8_t *p, size_t n)
{
    while (n > 0) {
        uint32_t  chunk;
        ua_status s = ua_sc_frame(&h->ch, p, n, &chunk);

        if (s != UA_GOOD)
            return s;
        ck_assert_uint_ne(chunk, 0);
        ck_assert_uint_le(chunk, n);
        s = ua_sc_process(&h->ch, p, chunk, h->now, &h->sout, &h->msg);
        if (s != UA_GOOD)
            return s;
        p += chunk;
        n -= chunk;
    }
    return UA_GOOD;
}

static ua_status
sc_flush_client(void)
{
    ua_status s = sc_feed(h->cbuf, h->cout.len);

    h->cout.len = 0;
    return s;
}

/* Hand everything the server wrote to the client; h->ev is the last
 * event that was not EV_NONE. */
static ua_status
sc_to_client(void)
{
    const uint8_t *p = h->sbuf;
    size_t         n = h->sout.len;

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
    h->sout.len = 0;
    return UA_GOOD;
}

static void
sc_hello(void)
{
    ck_assert_uint_eq(ua_client_hello(&h->cl, "opc.tcp://localhost:4840",
                                      &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_ACKED);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_ACK);
}

static void
sc_open(void)
{
    sc_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     60000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_OPEN);
    ck_assert_uint_eq(h->cl.state, UA_CLIENT_OPEN);
}

static void
sc_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t
sc_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

/* A HEL whose url length field is ulen, followed by url_bytes of 'u'. */
static size_t
sc_hel(uint8_t *p, uint32_t ver, uint32_t rbuf, uint32_t sbuf,
       uint32_t maxmsg, uint32_t maxchunks, int32_t ulen, size_t url_bytes)
{
    memcpy(p, "HELF", 4);
    sc_wr32(p + 4, (uint32_t)(32 + url_bytes));
    sc_wr32(p + 8, ver);
    sc_wr32(p + 12, rbuf);
    sc_wr32(p + 16, sbuf);
    sc_wr32(p + 20, maxmsg);
    sc_wr32(p + 24, maxchunks);
    sc_wr32(p + 28, (uint32_t)ulen);
    memset(p + 32, 'u', url_bytes);
    return 32 + url_bytes;
}

/* A symmetric chunk (MSG/CLO) with the given header fields and body. */
static size_t
sc_sym(uint8_t *p, const char *mt, uint32_t channel, uint32_t token,
       uint32_t seq, uint32_t request_id, const uint8_t *body, size_t blen)
{
    memcpy(p, mt, 4);
    sc_wr32(p + 4, (uint32_t)(24 + blen));
    sc_wr32(p + 8, channel);
    sc_wr32(p + 12, token);
    sc_wr32(p + 16, seq);
    sc_wr32(p + 20, request_id);
    if (blen != 0)
        memmove(p + 24, body, blen);
    return 24 + blen;
}

/* An OPN chunk built by hand, so policy, mode and type can be wrong. */
static size_t
sc_opn(uint8_t *p, const char *policy, uint32_t channel, uint32_t seq,
       int32_t type, int32_t mode, uint32_t lifetime)
{
    struct ua_open_secure_channel_request req;
    size_t                                off = 8, plen = strlen(policy), n;

    memset(&req, 0, sizeof(req));
    req.request_header.request_handle = 77;
    req.request_type = type;
    req.security_mode = mode;
    req.client_nonce.len = -1;
    req.requested_lifetime = lifetime;
    memcpy(p, "OPNF", 4);
    sc_wr32(p + off, channel);
    off += 4;
    sc_wr32(p + off, (uint32_t)plen);
    memcpy(p + off + 4, policy, plen);
    off += 4 + plen;
    sc_wr32(p + off, 0xFFFFFFFFu);
    sc_wr32(p + off + 4, 0xFFFFFFFFu);
    off += 8;
    sc_wr32(p + off, seq);
    sc_wr32(p + off + 4, 1234);
    off += 8;
    p[off] = 0x01;                      /* four-byte NodeId, ns 0 */
    p[off + 1] = 0;
    p[off + 2] = (uint8_t)SC_OPN_REQ_ID;
    p[off + 3] = (uint8_t)(SC_OPN_REQ_ID >> 8);
    off += 4;
    ck_assert_uint_eq(ua_encode(&req,
                                &ua_types[UA_TYPE_OPENSECURECHANNELREQUEST],
                                p + off, 4096, &n), UA_GOOD);
    off += n;
    sc_wr32(p + 4, (uint32_t)off);
    return off;
}

/* Queue a ReadRequest of `nodes` nodes from the client; its request id. */
static uint32_t
sc_read_request(uint32_t nodes)
{
    struct ua_read_request  req;
    struct ua_read_value_id ids[4096];
    uint32_t                id;

    ck_assert_uint_le(nodes, 4096);
    memset(&req, 0, sizeof(req));
    memset(ids, 0, sizeof(ids));
    for (uint32_t i = 0; i < nodes; i++) {
        ids[i].node_id = ua_nodeid_num(1, 100000 + i);
        ids[i].attribute_id = 13;
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
    }
    req.n_nodes_to_read = (int32_t)nodes;
    req.nodes_to_read = ids;
    ck_assert_uint_eq(ua_client_request(&h->cl,
                                        &ua_types[UA_TYPE_READREQUEST], &req,
                                        &id, &h->cout), UA_GOOD);
    return id;
}

/* A ReadResponse of n String values of slen bytes each (store: n*slen). */
static void
sc_read_response(struct ua_read_response *r, uint32_t n, size_t slen,
                 char *store)
{
    static struct ua_datavalue dv[1024];
    static struct ua_string    str[1024];

    ck_assert_uint_le(n, 1024);
    memset(r, 0, sizeof(*r));
    r->response_header.request_handle = 9;
    r->response_header.timestamp = SC_NOW_DT;
    r->n_results = (int32_t)n;
    r->results = dv;
    r->n_diagnostic_infos = -1;
    for (uint32_t i = 0; i < n; i++) {
        memset(store + i * slen, 'a' + (int)(i % 26), slen);
        str[i].len = (int32_t)slen;
        str[i].data = (uint8_t *)store + i * slen;
        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].mask = UA_DV_VALUE;
        ua_variant_set_scalar(&dv[i].value, &str[i], UA_BT_STRING);
    }
}

/* ------------------------------------------------------------ HEL/ACK */

START_TEST(test_hel_negotiation)
{
    size_t n;

    sc_init(65536, 65536, 1 << 20, 64);
    n = sc_hel(h->raw, 0, 16384, 9000, 0, 0, 5, 5);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_ACKED);
    ck_assert_uint_eq(h->ch.send_buffer, 16384);  /* client's receive */
    ck_assert_uint_eq(h->ch.recv_buffer, 9000);   /* client's send */
    ck_assert_uint_eq(h->sout.len, 28);
    ck_assert_mem_eq(h->sbuf, "ACKF", 4);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 4), 28);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 8), 0);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 12), 9000);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 16), 16384);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 20), 1 << 20);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 24), 64);

    /* Huge client buffers are capped to ours. */
    sc_init(65536, 32768, 1 << 20, 64);
    n = sc_hel(h->raw, 0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0, 0, -1, 0);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    ck_assert_uint_eq(h->ch.send_buffer, 32768);
    ck_assert_uint_eq(h->ch.recv_buffer, 65536);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 12), 65536);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 16), 32768);
}
END_TEST

START_TEST(test_hel_protocol_version)
{
    size_t n = sc_hel(h->raw, 0xFFFFFFFFu, 8192, 8192, 0, 0, 0, 0);

    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 8), 0);     /* we answer 0 */
}
END_TEST

START_TEST(test_hel_small_buffers)
{
    static const uint32_t bad[][3] = {
        { 8191, 8192, 0 }, { 8192, 8191, 0 }, { 1024, 1024, 0 },
        { 0, 0, 0 }, { 8192, 8192, 4096 },
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t n;

        sc_init(8192, 8192, 65536, 16);
        n = sc_hel(h->raw, 0, bad[i][0], bad[i][1], bad[i][2], 0, 0, 0);
        ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_CONNECTION_REJECTED);
        ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
        ck_assert_uint_eq(h->sout.len, 0);
    }
    /* Exactly 8192 is fine. */
    sc_init(8192, 8192, 65536, 16);
    ck_assert_uint_eq(sc_feed(h->raw, sc_hel(h->raw, 0, 8192, 8192, 8192, 0,
                                             0, 0)), UA_GOOD);
}
END_TEST

START_TEST(test_hel_url)
{
    size_t n;

    /* 4095 bytes: the longest allowed (the chunk must fit our 8192). */
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 4095, 4095);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);

    sc_init(8192, 8192, 65536, 16);
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 4096, 4096);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_ENDPOINT_URL_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);

    sc_init(8192, 8192, 65536, 16);
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 4097, 4097);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_ENDPOINT_URL_INVALID);

    sc_init(8192, 8192, 65536, 16);     /* negative, not -1 */
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, -2, 0);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_ENDPOINT_URL_INVALID);

    sc_init(8192, 8192, 65536, 16);     /* longer than the bytes left */
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 100, 10);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_ENDPOINT_URL_INVALID);

    sc_init(8192, 8192, 65536, 16);     /* trailing bytes after the url */
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 10, 20);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);

    sc_init(8192, 8192, 65536, 16);     /* truncated HEL */
    n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 0, 0);
    sc_wr32(h->raw + 4, 20);
    ck_assert_uint_eq(sc_feed(h->raw, 20), UA_BAD_DECODING_ERROR);
}
END_TEST

START_TEST(test_hel_twice)
{
    size_t n = sc_hel(h->raw, 0, 8192, 8192, 0, 0, 0, 0);

    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    /* Framing refuses it (ua_sc_frame() changes nothing) ... */
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_ACKED);
    /* ... and so does processing, which closes the channel. */
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, n, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, n, h->now, &h->sout,
                                    &h->msg), UA_BAD_SECURE_CHANNEL_CLOSED);
}
END_TEST

START_TEST(test_msg_before_hel)
{
    uint8_t body[8] = { 1, 2, 3, 4 };
    size_t  n = sc_sym(h->raw, "MSGF", 0, 0, 1, 1, body, sizeof(body));

    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    /* process() refuses it too when called without framing. */
    sc_init(8192, 8192, 65536, 16);
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, n, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    /* OPN and CLO before HEL. */
    sc_init(8192, 8192, 65536, 16);
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    sc_init(8192, 8192, 65536, 16);
    n = sc_sym(h->raw, "CLOF", 0, 0, 1, 1, body, sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

START_TEST(test_msg_before_opn)
{
    uint8_t body[8] = { 1, 0, 0x77, 0x02 };
    size_t  n;

    sc_hello();
    n = sc_sym(h->raw, "MSGF", 0, 0, 1, 1, body, sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

START_TEST(test_garbage_before_hel)
{
    static const char get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    uint32_t          chunk = 99;

    ck_assert_uint_eq(ua_sc_frame(&h->ch, (const uint8_t *)get,
                                  sizeof(get) - 1, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    /* Fewer than 8 bytes: wait, whatever they are. */
    ck_assert_uint_eq(ua_sc_frame(&h->ch, (const uint8_t *)get, 7, &chunk),
                      UA_GOOD);
    ck_assert_uint_eq(chunk, 0);
    /* ACK/ERR/RHE from a client, HEL as 'C'. */
    memcpy(h->raw, "ACKF\x1c\0\0\0", 8);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    memcpy(h->raw, "ERRF\x10\0\0\0", 8);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    memcpy(h->raw, "HELC\x20\0\0\0", 8);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_uint_eq(sc_feed((const uint8_t *)get, sizeof(get) - 1),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

START_TEST(test_size_bounds)
{
    uint32_t chunk = 1;

    /* MSGF with MessageSize 0xFFFFFFFF before HEL: the type is refused. */
    memcpy(h->raw, "MSGF\xff\xff\xff\xff", 8);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    /* HELF with 0xFFFFFFFF: too large, before any body is read. */
    memcpy(h->raw, "HELF\xff\xff\xff\xff", 8);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TOO_LARGE);
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, 8, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TOO_LARGE);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    /* Sizes 0..7. */
    for (uint32_t sz = 0; sz < 8; sz++) {
        sc_init(8192, 8192, 65536, 16);
        memcpy(h->raw, "HELF", 4);
        sc_wr32(h->raw + 4, sz);
        ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                          UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    }
    /* A chunk whose length disagrees with the bytes given. */
    sc_init(8192, 8192, 65536, 16);
    sc_hel(h->raw, 0, 8192, 8192, 0, 0, 0, 0);
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, 31, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    sc_init(8192, 8192, 65536, 16);
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, 5, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

START_TEST(test_chunk_above_negotiated)
{
    uint32_t chunk;

    sc_init(65536, 65536, 1 << 20, 64);
    /* The client sends at most 8192: that is our receive buffer now. */
    ck_assert_uint_eq(sc_feed(h->raw, sc_hel(h->raw, 0, 65536, 8192, 0, 0,
                                             0, 0)), UA_GOOD);
    ck_assert_uint_eq(h->ch.recv_buffer, 8192);
    memcpy(h->raw, "MSGF", 4);
    sc_wr32(h->raw + 4, 8192);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk), UA_GOOD);
    ck_assert_uint_eq(chunk, 8192);
    sc_wr32(h->raw + 4, 8193);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TOO_LARGE);
    sc_wr32(h->raw + 4, 0xFFFFFFFFu);
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, 8, &chunk),
                      UA_BAD_TCP_MESSAGE_TOO_LARGE);
    /* process() checks the header before touching the body. */
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, 8, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TOO_LARGE);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

START_TEST(test_bad_chunk_types)
{
    uint8_t  body[8] = { 0 };
    uint32_t chunk;
    size_t   n;

    sc_open();
    n = sc_sym(h->raw, "MSGX", 7, h->cl.token_id, h->cl.send_seq + 1, 1,
               body, sizeof(body));
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, n, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    n = sc_sym(h->raw, "CLOC", 7, h->cl.token_id, h->cl.send_seq + 1, 1,
               body, sizeof(body));
    ck_assert_uint_eq(ua_sc_frame(&h->ch, h->raw, n, &chunk),
                      UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    /* An OPN as 'C' (docs/security.md case 18). */
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 7, h->cl.send_seq + 1,
               UA_SECURITYTOKENREQUESTTYPE_RENEW,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    h->raw[3] = 'C';
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->raw, n, h->now, &h->sout,
                                    &h->msg), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

/* ------------------------------------------------------------ OPN */

START_TEST(test_opn_issue)
{
    struct ua_open_secure_channel_response r;
    const uint8_t                         *p;
    size_t                                 used;

    sc_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     60000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
    ck_assert_uint_eq(h->ch.token_id, 1);
    ck_assert_uint_eq(h->ch.token_lifetime_ms, 60000);
    ck_assert_uint_eq(h->ch.token_created_ms, h->now);
    /* The response: OPNF, our channel, the None policy, no certificates,
     * sequence number 1, the request's id. */
    p = h->sbuf;
    ck_assert_mem_eq(p, "OPNF", 4);
    ck_assert_uint_eq(sc_rd32(p + 4), h->sout.len);
    ck_assert_uint_eq(sc_rd32(p + 8), 7);
    ck_assert_uint_eq(sc_rd32(p + 12), SC_PLEN);
    ck_assert_mem_eq(p + 16, UA_SC_POLICY_NONE, SC_PLEN);
    ck_assert_uint_eq(sc_rd32(p + 16 + SC_PLEN), 0xFFFFFFFFu);
    ck_assert_uint_eq(sc_rd32(p + 20 + SC_PLEN), 0xFFFFFFFFu);
    ck_assert_uint_eq(sc_rd32(p + 24 + SC_PLEN), 1);
    ck_assert_uint_eq(sc_rd32(p + 28 + SC_PLEN), h->cl.opn_request_id);
    p += 32 + SC_PLEN;
    ck_assert_uint_eq(p[0], 0x01);
    ck_assert_uint_eq(p[2] | p[3] << 8, SC_OPN_RESP_ID);
    ck_assert_uint_eq(ua_decode(p + 4, h->sout.len - (size_t)(p + 4 - h->sbuf),
                                &used, &r,
                                &ua_types[UA_TYPE_OPENSECURECHANNELRESPONSE],
                                &h->arena, NULL), UA_GOOD);
    ck_assert_uint_eq(used, h->sout.len - (size_t)(p + 4 - h->sbuf));
    ck_assert_int_eq(r.response_header.timestamp, SC_NOW_DT);
    ck_assert_uint_eq(r.response_header.service_result, UA_GOOD);
    ck_assert_uint_eq(r.response_header.request_handle, 1);
    ck_assert_uint_eq(r.server_protocol_version, 0);
    ck_assert_uint_eq(r.security_token.channel_id, 7);
    ck_assert_uint_eq(r.security_token.token_id, 1);
    ck_assert_int_eq(r.security_token.created_at, SC_NOW_DT);
    ck_assert_uint_eq(r.security_token.revised_lifetime, 60000);
    ck_assert_int_le(r.server_nonce.len, 0);
    /* The client took it. */
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->cl.channel_id, 7);
    ck_assert_uint_eq(h->cl.token_id, 1);
    ck_assert_uint_eq(h->cl.lifetime_ms, 60000);
}
END_TEST

START_TEST(test_opn_lifetime_revised)
{
    static const uint32_t req[] = { 0, 1, 999, 1000, 5000, 3600000,
                                    3600001, 0xFFFFFFFFu };
    static const uint32_t want[] = { 1000, 1000, 1000, 1000, 5000, 3600000,
                                     3600000, 3600000 };

    for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
        sc_init(8192, 8192, 65536, 16);
        sc_hello();
        ck_assert_uint_eq(sc_feed(h->raw,
                                  sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
                                         UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                         UA_MESSAGESECURITYMODE_NONE,
                                         req[i])), UA_GOOD);
        ck_assert_uint_eq(h->ch.token_lifetime_ms, want[i]);
    }
}
END_TEST

START_TEST(test_opn_rejects)
{
    /* A policy we do not offer. */
    sc_hello();
    ck_assert_uint_eq(sc_feed(h->raw,
        sc_opn(h->raw, SC_BASIC256SHA256, 0, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000)),
        UA_BAD_SECURITY_POLICY_REJECTED);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    /* A prefix of the None URI is not the None URI. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    ck_assert_uint_eq(sc_feed(h->raw,
        sc_opn(h->raw, "http://opcfoundation.org/UA/SecurityPolicy#Non",
               0, 1, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000)),
        UA_BAD_SECURITY_POLICY_REJECTED);
    /* Policy None with mode Sign or SignAndEncrypt (docs/security.md case
     * 33). */
    for (int32_t mode = UA_MESSAGESECURITYMODE_INVALID;
         mode <= UA_MESSAGESECURITYMODE_SIGNANDENCRYPT + 1; mode++) {
        if (mode == UA_MESSAGESECURITYMODE_NONE)
            continue;
        sc_init(8192, 8192, 65536, 16);
        sc_hello();
        ck_assert_uint_eq(sc_feed(h->raw,
            sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
                   UA_SECURITYTOKENREQUESTTYPE_ISSUE, mode, 60000)),
            UA_BAD_SECURITY_MODE_REJECTED);
    }
    /* Renew on a channel that is not open; unknown request types. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    ck_assert_uint_eq(sc_feed(h->raw,
        sc_opn(h->raw, UA_SC_POLICY_NONE, 7, 1,
               UA_SECURITYTOKENREQUESTTYPE_RENEW,
               UA_MESSAGESECURITYMODE_NONE, 60000)),
        UA_BAD_REQUEST_TYPE_INVALID);
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    ck_assert_uint_eq(sc_feed(h->raw,
        sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1, 2,
               UA_MESSAGESECURITYMODE_NONE, 60000)),
        UA_BAD_REQUEST_TYPE_INVALID);
    /* Issue naming a channel id. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    ck_assert_uint_eq(sc_feed(h->raw,
        sc_opn(h->raw, UA_SC_POLICY_NONE, 5, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000)),
        UA_BAD_SECURE_CHANNEL_ID_INVALID);
}
END_TEST

START_TEST(test_opn_malformed)
{
    size_t n;

    /* Policy URI length 256 (§6.7.2.3: at most 255) and -2. */
    sc_hello();
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    sc_wr32(h->raw + 12, 256);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    sc_wr32(h->raw + 12, (uint32_t)-2);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);
    /* A certificate length beyond the chunk. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    sc_wr32(h->raw + 16 + SC_PLEN, 100000);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);
    /* The wrong type NodeId, a truncated body, a trailing byte. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    h->raw[32 + SC_PLEN + 2]++;
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 0, 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    sc_wr32(h->raw + 4, (uint32_t)(n - 3));
    ck_assert_uint_eq(sc_feed(h->raw, n - 3), UA_BAD_DECODING_ERROR);
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    h->raw[n] = 0;
    sc_wr32(h->raw + 4, (uint32_t)(n + 1));
    ck_assert_uint_eq(sc_feed(h->raw, n + 1), UA_BAD_DECODING_ERROR);
    /* Too short for the asymmetric header. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    memcpy(h->raw, "OPNF\x10\0\0\0\0\0\0\0\0\0\0\0", 16);
    ck_assert_uint_eq(sc_feed(h->raw, 16), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

START_TEST(test_opn_issue_twice)
{
    size_t n;

    sc_open();
    /* A second Issue on the open channel (docs/security.md case 26). */
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 0, h->cl.send_seq + 1,
               UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_REQUEST_TYPE_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

START_TEST(test_opn_renew)
{
    uint32_t old, seq_before;

    sc_open();
    old = h->ch.token_id;
    seq_before = h->ch.send_seq;
    h->now += 45000;
    h->now_dt += 450000000;
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
    ck_assert_uint_eq(h->ch.channel_id, 7);
    ck_assert_uint_ne(h->ch.token_id, old);
    ck_assert_uint_eq(h->ch.prev_token_id, old);
    ck_assert_uint_eq(h->ch.token_created_ms, h->now);
    /* Sequence numbers go on across the token change. */
    ck_assert_uint_eq(h->ch.send_seq, seq_before + 1);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->cl.token_id, h->ch.token_id);

    /* The old token is still accepted before the new one is used ... */
    h->cl.token_id = old;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_ne(h->msg.len, 0);
    /* ... and responses still go out under it. */
    {
        struct ua_read_response r;
        char                    store[16];

        sc_read_response(&r, 1, 4, store);
        ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                     &ua_types[UA_TYPE_READRESPONSE], &r,
                                     &h->sout), UA_GOOD);
        ck_assert_uint_eq(sc_rd32(h->sbuf + 12), old);
        h->sout.len = 0;
        /* The new token, once used, retires the old one. */
        h->cl.token_id = h->ch.token_id;
        sc_read_request(1);
        ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
        ck_assert_uint_eq(h->ch.prev_token_id, 0);
        ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                     &ua_types[UA_TYPE_READRESPONSE], &r,
                                     &h->sout), UA_GOOD);
        ck_assert_uint_eq(sc_rd32(h->sbuf + 12), h->ch.token_id);
    }
    h->cl.token_id = old;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

START_TEST(test_opn_renew_wrong_channel)
{
    size_t n;

    sc_open();
    n = sc_opn(h->raw, UA_SC_POLICY_NONE, 8, h->cl.send_seq + 1,
               UA_SECURITYTOKENREQUESTTYPE_RENEW,
               UA_MESSAGESECURITYMODE_NONE, 60000);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN);
}
END_TEST

START_TEST(test_old_token_expires)
{
    uint32_t old;

    sc_open();                          /* lifetime 60 s from now */
    old = h->ch.token_id;
    h->now += 50000;
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    /* Still inside the old token's lifetime: accepted. */
    h->now += 9000;
    h->cl.token_id = old;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    /* Past it (created + 60 s): refused although the new one was never
     * used. */
    h->now += 2000;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
}
END_TEST

START_TEST(test_token_expired)
{
    uint64_t t0;

    sc_open();
    t0 = h->now;
    /* Lifetime 60 s; the current token has a 25 % grace, like the
     * deadline the worker enforces. */
    ck_assert_uint_eq(ua_sc_deadline(&h->ch, 0, 0), t0 + 75000);
    h->now = t0 + 75000;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    h->now = t0 + 75001;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
}
END_TEST

START_TEST(test_token_unknown)
{
    sc_open();
    h->cl.token_id += 5;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    h->cl.token_id = 0;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
}
END_TEST

/* ------------------------------------------------------------ MSG */

START_TEST(test_msg_in_place)
{
    struct ua_read_request r;
    uint32_t               id;
    size_t                 used;

    sc_open();
    id = sc_read_request(3);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->msg.request_id, id);
    /* One chunk: the body is the chunk's own bytes, after 24 of header. */
    ck_assert_ptr_eq(h->msg.body, h->cbuf + UA_SC_SYM_HEADER);
    ck_assert_uint_eq(al.calls, 0);
    ck_assert_uint_eq(h->msg.body[0], 0x01);
    ck_assert_uint_eq(h->msg.body[2] | h->msg.body[3] << 8,
                      ua_types[UA_TYPE_READREQUEST].binary_id);
    ck_assert_uint_eq(ua_decode(h->msg.body + 4, h->msg.len - 4, &used, &r,
                                &ua_types[UA_TYPE_READREQUEST], &h->arena,
                                NULL), UA_GOOD);
    ck_assert_uint_eq(used, h->msg.len - 4);
    ck_assert_int_eq(r.n_nodes_to_read, 3);
    ck_assert_uint_eq(r.nodes_to_read[2].node_id.id.num, 100002);
    ck_assert_uint_eq(r.request_header.request_handle, 2);
}
END_TEST

START_TEST(test_wrong_channel_id)
{
    sc_open();
    h->cl.channel_id = 8;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

START_TEST(test_seq_replay)
{
    size_t n;

    sc_open();
    sc_read_request(1);
    n = h->cout.len;
    memcpy(h->raw, h->cbuf, n);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    /* The same chunk again, byte for byte. */
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_SEQUENCE_NUMBER_INVALID);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
}
END_TEST

START_TEST(test_seq_gap)
{
    sc_open();
    h->cl.send_seq++;                   /* skip one */
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SEQUENCE_NUMBER_INVALID);
    /* Going backwards. */
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    h->cl.send_seq -= 2;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SEQUENCE_NUMBER_INVALID);
}
END_TEST

START_TEST(test_seq_wrap)
{
    /* The client starts near the top: its OPN sets where we begin. */
    sc_hello();
    h->cl.send_seq = 4294967292u;
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     60000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    for (int i = 0; i < 5; i++) {       /* ...94 95 0 1 2 */
        sc_read_request(1);
        ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    }
    ck_assert_uint_eq(h->ch.recv_seq, 2);
    /* A wrap to a small number once past 4294966271. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    h->cl.send_seq = 4294966271u;       /* OPN: 4294966272 */
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     60000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    h->cl.send_seq = 1022;              /* next: 1023 */
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    /* Not to 1024 or above. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    h->cl.send_seq = 4294966271u;
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     60000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    h->cl.send_seq = 1023;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SEQUENCE_NUMBER_INVALID);
    /* And never a wrap from below the threshold. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    h->cl.send_seq = 4294966270u;       /* OPN: 4294966271 */
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     60000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    h->cl.send_seq = 0;
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_SEQUENCE_NUMBER_INVALID);
}
END_TEST

START_TEST(test_chunk_flood)
{
    uint8_t body[1000];
    size_t  n;

    /* max_chunks 16, max_message big enough that only the count trips. */
    sc_init(8192, 8192, 1 << 20, 16);
    sc_open();
    memset(body, 0x55, sizeof(body));
    for (int i = 0; i < 16; i++) {
        n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, h->cl.send_seq + 1, 9,
                   body, sizeof(body));
        h->cl.send_seq++;
        ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
        ck_assert_uint_eq(h->msg.len, 0);
    }
    ck_assert_uint_eq(h->ch.asm_chunks, 16);
    n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, h->cl.send_seq + 1, 9,
               body, sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TOO_LARGE);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    ck_assert_ptr_null(h->ch.asm_buf);
    ck_assert_uint_eq(al.live, 0);
    /* An 'F' as chunk 17 is refused the same way. */
    sc_init(8192, 8192, 1 << 20, 16);
    sc_open();
    for (int i = 0; i < 17; i++) {
        n = sc_sym(h->raw, i == 16 ? "MSGF" : "MSGC", 7, h->ch.token_id,
                   h->cl.send_seq + 1, 9, body, sizeof(body));
        h->cl.send_seq++;
        ck_assert_uint_eq(sc_feed(h->raw, n),
                          i == 16 ? UA_BAD_TCP_MESSAGE_TOO_LARGE : UA_GOOD);
    }
}
END_TEST

START_TEST(test_message_too_large)
{
    uint8_t body[8000];
    size_t  n;

    /* 65536 bytes at most: 8 chunks of 8000 = 64000 fit, the 9th would
     * make 72000 and is refused before it is appended. */
    sc_init(8192, 8192, 65536, 64);
    sc_open();
    memset(body, 0x33, sizeof(body));
    for (int i = 0; i < 8; i++) {
        n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, h->cl.send_seq + 1, 9,
                   body, sizeof(body));
        h->cl.send_seq++;
        ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    }
    ck_assert_uint_eq(h->ch.asm_len, 64000);
    n = sc_sym(h->raw, "MSGF", 7, h->ch.token_id, h->cl.send_seq + 1, 9,
               body, sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TOO_LARGE);
    /* Never more buffered than MaxMessageSize. */
    ck_assert_uint_le(al.max_block, 65536);
    ck_assert_uint_eq(al.live, 0);

    /* Exactly the limit is fine: 8 x 8000 + 1536. */
    sc_init(8192, 8192, 65536, 64);
    sc_open();
    for (int i = 0; i < 9; i++) {
        n = sc_sym(h->raw, i == 8 ? "MSGF" : "MSGC", 7, h->ch.token_id,
                   h->cl.send_seq + 1, 9, body, i == 8 ? 1536 : 8000);
        h->cl.send_seq++;
        ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    }
    ck_assert_uint_eq(h->msg.len, 65536);
    ck_assert_uint_eq(h->msg.request_id, 9);

    /* A single chunk above a MaxMessageSize smaller than the buffer. */
    sc_init(8192, 8192, 4000, 64);
    sc_open();
    n = sc_sym(h->raw, "MSGF", 7, h->ch.token_id, h->cl.send_seq + 1, 9,
               body, 4001);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_MESSAGE_TOO_LARGE);
}
END_TEST

START_TEST(test_abort_chunk)
{
    uint8_t body[1000], abody[16];
    size_t  n;
    long    frees;

    sc_open();
    memset(body, 0x44, sizeof(body));
    for (int i = 0; i < 3; i++) {
        n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq, 9,
                   body, sizeof(body));
        ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    }
    ck_assert_ptr_nonnull(h->ch.asm_buf);
    frees = al.frees;
    sc_wr32(abody, UA_BAD_REQUEST_TOO_LARGE);
    sc_wr32(abody + 4, 4);
    memcpy(abody + 8, "oops", 4);
    n = sc_sym(h->raw, "MSGA", 7, h->ch.token_id, ++h->cl.send_seq, 9,
               abody, 12);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    /* Discarded, freed, no message, no reply, the channel stays. */
    ck_assert_uint_eq(h->msg.len, 0);
    ck_assert_uint_eq(h->sout.len, 0);
    ck_assert_ptr_null(h->ch.asm_buf);
    ck_assert_uint_eq(al.frees, frees + 1);
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
    /* The next request goes through. */
    sc_read_request(2);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_ne(h->msg.len, 0);
    /* An abort with nothing pending is harmless too. */
    n = sc_sym(h->raw, "MSGA", 7, h->ch.token_id, ++h->cl.send_seq, 10,
               abody, 12);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
}
END_TEST

START_TEST(test_mixed_request_ids)
{
    uint8_t body[100];
    size_t  n;

    sc_open();
    memset(body, 1, sizeof(body));
    n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq, 5, body,
               sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    n = sc_sym(h->raw, "MSGF", 7, h->ch.token_id, ++h->cl.send_seq, 6, body,
               sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    ck_assert_uint_eq(al.live, 0);
    /* An abort for another request id is refused as well. */
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq, 5, body,
               sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    n = sc_sym(h->raw, "MSGA", 7, h->ch.token_id, ++h->cl.send_seq, 6, body,
               8);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_SECURITY_CHECKS_FAILED);
}
END_TEST

START_TEST(test_type_change_mid_message)
{
    uint8_t body[100];
    size_t  n;

    sc_open();
    memset(body, 1, sizeof(body));
    n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq, 5, body,
               sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    /* MSG 'C' then CLO 'F' (docs/security.md case 17). */
    ck_assert_uint_eq(ua_client_close(&h->cl, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    /* MSG 'C' then OPN. */
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq, 5, body,
               sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_GOOD);
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW,
                                     0, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

START_TEST(test_multichunk_request)
{
    struct ua_read_request r;
    uint32_t               id;
    size_t                 used;

    sc_init(8192, 8192, 1 << 20, 64);
    sc_open();
    /* The client sends at most our 8192 per chunk. */
    ck_assert_uint_eq(h->cl.send_buffer, 8192);
    id = sc_read_request(1000);         /* ~ 20 KB: 3 chunks */
    ck_assert_uint_gt(h->cout.len, 16384);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->msg.request_id, id);
    ck_assert_ptr_eq(h->msg.body, h->ch.asm_buf);
    ck_assert_uint_eq(al.calls, 1);
    ck_assert_uint_eq(ua_decode(h->msg.body + 4, h->msg.len - 4, &used, &r,
                                &ua_types[UA_TYPE_READREQUEST], &h->arena,
                                NULL), UA_GOOD);
    ck_assert_uint_eq(used, h->msg.len - 4);
    ck_assert_int_eq(r.n_nodes_to_read, 1000);
    ck_assert_uint_eq(r.nodes_to_read[999].node_id.id.num, 100999);
    /* Held until the next call, then given back. */
    ck_assert_uint_ne(al.live, 0);
    sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(al.live, 0);
    ck_assert_ptr_eq(h->msg.body, h->cbuf + UA_SC_SYM_HEADER);
}
END_TEST

START_TEST(test_alloc_failure)
{
    uint8_t body[100];
    size_t  n;

    sc_open();
    al.fail_at = 1;
    memset(body, 1, sizeof(body));
    n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq, 5, body,
               sizeof(body));
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    /* And growth failing half way (first block 32 KiB, then 64 KiB). */
    sc_init(8192, 8192, 1 << 20, 64);
    al = (struct sc_alloc){ 0 };
    al.fail_at = 2;
    sc_open();
    {
        uint8_t big[8000];
        ua_status s = UA_GOOD;

        memset(big, 2, sizeof(big));
        for (int i = 0; i < 10 && s == UA_GOOD; i++) {
            n = sc_sym(h->raw, "MSGC", 7, h->ch.token_id, ++h->cl.send_seq,
                       5, big, sizeof(big));
            s = sc_feed(h->raw, n);
        }
        ck_assert_uint_eq(s, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
        ck_assert_uint_eq(al.live, 0);
    }
}
END_TEST

START_TEST(test_empty_msg)
{
    size_t n;

    sc_open();
    n = sc_sym(h->raw, "MSGF", 7, h->ch.token_id, ++h->cl.send_seq, 5, NULL,
               0);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);
    /* A header cut short: 12 bytes. */
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    memcpy(h->raw, "MSGF\x0c\0\0\0\x07\0\0\0", 12);
    ck_assert_uint_eq(sc_feed(h->raw, 12), UA_BAD_TCP_MESSAGE_TYPE_INVALID);
}
END_TEST

/* ------------------------------------------------------------ CLO */

START_TEST(test_clo)
{
    sc_open();
    ck_assert_uint_eq(ua_client_close(&h->cl, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(h->ch.state, UA_SC_CLOSED);
    ck_assert_uint_eq(h->sout.len, 0);          /* no response */
    ck_assert_uint_eq(h->msg.len, 0);
    /* Nothing is accepted afterwards. */
    ck_assert_uint_eq(ua_sc_process(&h->ch, h->cbuf, 8, h->now, &h->sout,
                                    &h->msg), UA_BAD_SECURE_CHANNEL_CLOSED);
    ck_assert_uint_eq(ua_sc_deadline(&h->ch, 5, 10), 0);
}
END_TEST

START_TEST(test_clo_checks)
{
    uint8_t body[4] = { 0x01, 0x00, 0xC4, 0x01 };    /* i=452 */
    size_t  n;

    /* CLO with a wrong token, a bad sequence number, a wrong type id. */
    sc_open();
    n = sc_sym(h->raw, "CLOF", 7, h->ch.token_id + 1, h->cl.send_seq + 1, 5,
               body, 4);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN);
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    n = sc_sym(h->raw, "CLOF", 7, h->ch.token_id, h->cl.send_seq + 2, 5,
               body, 4);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_SEQUENCE_NUMBER_INVALID);
    sc_init(8192, 8192, 65536, 16);
    sc_open();
    body[2]++;
    n = sc_sym(h->raw, "CLOF", 7, h->ch.token_id, h->cl.send_seq + 1, 5,
               body, 4);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_DECODING_ERROR);
    /* CLO before OPN. */
    sc_init(8192, 8192, 65536, 16);
    sc_hello();
    body[2]--;
    n = sc_sym(h->raw, "CLOF", 0, 0, 1, 5, body, 4);
    ck_assert_uint_eq(sc_feed(h->raw, n), UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN);
}
END_TEST

/* ------------------------------------------------------------ send */

START_TEST(test_send_single)
{
    struct ua_read_response r, got;
    char                    store[64];
    uint32_t                id, seq;

    sc_open();
    id = sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    sc_read_response(&r, 2, 20, store);
    seq = h->ch.send_seq;
    ck_assert_uint_eq(ua_sc_send(&h->ch, h->msg.request_id,
                                 &ua_types[UA_TYPE_READRESPONSE], &r,
                                 &h->sout), UA_GOOD);
    /* One chunk: MSGF, channel, token, next sequence number, request id. */
    ck_assert_mem_eq(h->sbuf, "MSGF", 4);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 4), h->sout.len);
    ck_assert_uint_eq(ua_sc_send_size(&h->ch, &ua_types[UA_TYPE_READRESPONSE],
                                      &r), h->sout.len);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 8), 7);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 12), h->ch.token_id);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 16), seq + 1);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 20), id);
    ck_assert_uint_eq(h->ch.send_seq, seq + 1);
    ck_assert_uint_eq(al.calls, 0);
    /* Round trip through the client. */
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_uint_eq(h->ev.request_id, id);
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_READRESPONSE], &got,
                                       &h->arena), UA_GOOD);
    ck_assert(ua_equal(&r, &got, &ua_types[UA_TYPE_READRESPONSE]));
    /* Sequence numbers run on: a second response is seq + 2. */
    ck_assert_uint_eq(ua_sc_send(&h->ch, 99, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(sc_rd32(h->sbuf + 16), seq + 2);
}
END_TEST

START_TEST(test_send_multi)
{
    struct ua_read_response r, got;
    static char             store[1024 * 100];
    uint32_t                id, seq, nchunks = 0;
    size_t                  off = 0, sum = 0;

    sc_open();
    id = sc_read_request(1);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    sc_read_response(&r, 300, 100, store);      /* ~ 33 KB */
    seq = h->ch.send_seq;
    ck_assert_uint_eq(h->ch.send_buffer, 8192);
    ck_assert_uint_eq(ua_sc_send(&h->ch, id, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    ck_assert_uint_eq(ua_sc_send_size(&h->ch, &ua_types[UA_TYPE_READRESPONSE],
                                      &r), h->sout.len);
    /* C ... C F, each <= the send buffer, consecutive sequence numbers. */
    while (off < h->sout.len) {
        uint32_t sz = sc_rd32(h->sbuf + off + 4);

        ck_assert_uint_le(sz, 8192);
        ck_assert_uint_eq(sc_rd32(h->sbuf + off + 16), seq + 1 + nchunks);
        ck_assert_uint_eq(sc_rd32(h->sbuf + off + 20), id);
        nchunks++;
        sum += sz - UA_SC_SYM_HEADER;
        off += sz;
        ck_assert_int_eq(h->sbuf[off - sz + 3], off == h->sout.len ? 'F'
                                                                   : 'C');
    }
    ck_assert_uint_eq(off, h->sout.len);
    ck_assert_uint_ge(nchunks, 4);
    ck_assert_uint_eq(sum, 4 + ua_encoded_size(&r,
                                      &ua_types[UA_TYPE_READRESPONSE]));
    ck_assert_uint_eq(h->ch.send_seq, seq + nchunks);
    ck_assert_uint_eq(sc_to_client(), UA_GOOD);
    ck_assert_uint_eq(h->ev.kind, UA_CLIENT_EV_MSG);
    ck_assert_ptr_eq(h->ev.body, h->casm);
    ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                       &ua_types[UA_TYPE_READRESPONSE], &got,
                                       &h->arena), UA_GOOD);
    ck_assert(ua_equal(&r, &got, &ua_types[UA_TYPE_READRESPONSE]));
}
END_TEST

START_TEST(test_send_exact_boundary)
{
    struct ua_read_response r, got;
    static char             store[20000];
    size_t                  base, total;

    /* Bodies of exactly one and of one-plus-a-byte chunk payloads. */
    sc_open();
    sc_read_response(&r, 1, 1, store);
    base = 4 + ua_encoded_size(&r, &ua_types[UA_TYPE_READRESPONSE]) - 1;
    for (size_t extra = 0; extra < 3; extra++) {
        size_t want = 8192 - UA_SC_SYM_HEADER - 1 + extra;

        sc_read_response(&r, 1, want - base, store);
        total = 4 + ua_encoded_size(&r, &ua_types[UA_TYPE_READRESPONSE]);
        ck_assert_uint_eq(total, want);
        ck_assert_uint_eq(ua_sc_send(&h->ch, 3,
                                     &ua_types[UA_TYPE_READRESPONSE], &r,
                                     &h->sout), UA_GOOD);
        ck_assert_uint_eq(h->sout.len,
                          total + UA_SC_SYM_HEADER * (total > 8168 ? 2 : 1));
        ck_assert_uint_eq(sc_to_client(), UA_GOOD);
        ck_assert_uint_eq(ua_client_decode(&h->cl, &h->ev,
                                           &ua_types[UA_TYPE_READRESPONSE],
                                           &got, &h->arena), UA_GOOD);
        ck_assert(ua_equal(&r, &got, &ua_types[UA_TYPE_READRESPONSE]));
    }
}
END_TEST

START_TEST(test_send_too_large)
{
    struct ua_read_response r;
    static char             store[1024 * 100];
    uint32_t                seq;
    size_t                  n;

    /* The client takes at most 16384 bytes per message. */
    h->ccfg.max_message = 16384;
    ua_client_init(&h->cl, &h->ccfg, h->casm, sizeof(h->casm));
    sc_open();
    ck_assert_uint_eq(h->ch.peer_max_message, 16384);
    seq = h->ch.send_seq;
    sc_read_response(&r, 300, 100, store);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_BAD_RESPONSE_TOO_LARGE);
    ck_assert_uint_eq(h->sout.len, 0);
    ck_assert_uint_eq(h->ch.send_seq, seq);
    ck_assert_uint_eq(h->ch.state, UA_SC_OPEN);
    /* One that fits one chunk but not the peer's limit. */
    sc_init(65536, 65536, 1 << 20, 64);
    h->ccfg.max_message = 8192;
    ua_client_init(&h->cl, &h->ccfg, h->casm, sizeof(h->casm));
    sc_open();
    sc_read_response(&r, 1, 9000, store);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_BAD_RESPONSE_TOO_LARGE);
    ck_assert_uint_eq(h->sout.len, 0);
    /* The peer's MaxChunkCount: 3 chunks allowed, 4+ needed. */
    sc_init(8192, 8192, 65536, 16);
    h->ccfg.max_message = 0;
    h->ccfg.max_chunks = 3;
    ua_client_init(&h->cl, &h->ccfg, h->casm, sizeof(h->casm));
    sc_open();
    sc_read_response(&r, 300, 100, store);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_BAD_RESPONSE_TOO_LARGE);
    sc_read_response(&r, 200, 100, store);      /* ~ 22 KB: 3 chunks */
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_GOOD);
    /* Our out buffer too small: not the peer's fault. */
    n = h->sout.len;
    h->sout.cap = n + 100;
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ck_assert_uint_eq(h->sout.len, n);
    sc_read_response(&r, 1, 10, store);
    h->sout.cap = n + 50;
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    h->sout.cap = n + 10;
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ck_assert_uint_eq(h->sout.len, n);
}
END_TEST

START_TEST(test_send_size)
{
    struct ua_read_response r;
    static char             store[1024 * 100];
    static const uint32_t   counts[] = { 1, 300 };     /* 1 and 4 chunks */

    sc_open();
    for (size_t i = 0; i < 2; i++) {
        size_t   need;
        uint32_t seq = h->ch.send_seq;

        sc_read_response(&r, counts[i], 100, store);
        need = ua_sc_send_size(&h->ch, &ua_types[UA_TYPE_READRESPONSE], &r);
        ck_assert_uint_gt(need, 0);
        /* One byte less than that: refused, nothing written or counted. */
        h->sout = (struct ua_sc_out){ h->sbuf, need - 1, 0 };
        ck_assert_uint_eq(ua_sc_send(&h->ch, 1,
                                     &ua_types[UA_TYPE_READRESPONSE], &r,
                                     &h->sout),
                          UA_BAD_ENCODING_LIMITS_EXCEEDED);
        ck_assert_uint_eq(h->sout.len, 0);
        ck_assert_uint_eq(h->ch.send_seq, seq);
        /* Exactly that: fits, and uses all of it. */
        h->sout.cap = need;
        ck_assert_uint_eq(ua_sc_send(&h->ch, 1,
                                     &ua_types[UA_TYPE_READRESPONSE], &r,
                                     &h->sout), UA_GOOD);
        ck_assert_uint_eq(h->sout.len, need);
        {
            uint32_t chunks = 0;

            for (size_t off = 0; off < need; off += sc_rd32(h->sbuf + off + 4))
                chunks++;
            ck_assert_uint_eq(chunks, i == 0 ? 1 : 4);
            ck_assert_uint_eq(h->ch.send_seq, seq + chunks);
        }
    }
    ck_assert_uint_eq(ua_sc_send_size(&h->ch, &ua_types[UA_TYPE_INT32], &r),
                      0);
}
END_TEST

START_TEST(test_send_not_open)
{
    struct ua_read_response r;
    char                    store[8];

    sc_read_response(&r, 1, 4, store);
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_BAD_SECURE_CHANNEL_CLOSED);
    sc_hello();
    ck_assert_uint_eq(ua_sc_send(&h->ch, 3, &ua_types[UA_TYPE_READRESPONSE],
                                 &r, &h->sout), UA_BAD_SECURE_CHANNEL_CLOSED);
}
END_TEST

/* ------------------------------------------------------------ misc */

START_TEST(test_write_err)
{
    struct ua_sc_out out;
    uint8_t          buf[64];
    static char      big[5000];

    out = (struct ua_sc_out){ buf, sizeof(buf), 0 };
    ua_sc_write_err(&out, UA_BAD_TCP_MESSAGE_TOO_LARGE, "too big");
    ck_assert_uint_eq(out.len, 16 + 7);
    ck_assert_mem_eq(buf, "ERRF", 4);
    ck_assert_uint_eq(sc_rd32(buf + 4), 23);
    ck_assert_uint_eq(sc_rd32(buf + 8), UA_BAD_TCP_MESSAGE_TOO_LARGE);
    ck_assert_uint_eq(sc_rd32(buf + 12), 7);
    ck_assert_mem_eq(buf + 16, "too big", 7);
    /* NULL reason: a null String. */
    out.len = 0;
    ua_sc_write_err(&out, UA_BAD_DECODING_ERROR, NULL);
    ck_assert_uint_eq(out.len, 16);
    ck_assert_uint_eq(sc_rd32(buf + 12), 0xFFFFFFFFu);
    /* Cut to the room left, and to 4096. */
    out.len = 0;
    memset(big, 'x', sizeof(big) - 1);
    ua_sc_write_err(&out, UA_BAD_DECODING_ERROR, big);
    ck_assert_uint_eq(out.len, 64);
    ck_assert_uint_eq(sc_rd32(buf + 12), 48);
    out.len = 60;
    ua_sc_write_err(&out, UA_BAD_DECODING_ERROR, "x");
    ck_assert_uint_eq(out.len, 60);
    out = (struct ua_sc_out){ h->sbuf, sizeof(h->sbuf), 0 };
    ua_sc_write_err(&out, UA_BAD_DECODING_ERROR, big);
    ck_assert_uint_eq(out.len, 16 + 4096);
}
END_TEST

START_TEST(test_deadline)
{
    ck_assert_uint_eq(ua_sc_deadline(&h->ch, 500, 10000), 10500);
    sc_hello();
    ck_assert_uint_eq(ua_sc_deadline(&h->ch, 500, 10000), 10500);
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     40000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(ua_sc_deadline(&h->ch, 500, 10000),
                      h->now + 40000 + 10000);
}
END_TEST

START_TEST(test_no_clock)
{
    struct ua_open_secure_channel_response r;
    size_t                                 off = 32 + SC_PLEN + 4;

    h->cfg.now_dt = NULL;
    sc_hello();
    ck_assert_uint_eq(ua_client_open(&h->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
                                     40000, NULL, &h->cout), UA_GOOD);
    ck_assert_uint_eq(sc_flush_client(), UA_GOOD);
    ck_assert_uint_eq(ua_decode(h->sbuf + off, h->sout.len - off, NULL, &r,
                                &ua_types[UA_TYPE_OPENSECURECHANNELRESPONSE],
                                &h->arena, NULL), UA_GOOD);
    ck_assert_int_eq(r.response_header.timestamp, 0);
    ck_assert_int_eq(r.security_token.created_at, 0);
}
END_TEST

static Suite *
sc_suite(void)
{
    Suite *s = suite_create("Secure channel");
    TCase *tc;

    tc = tcase_create("HEL/ACK");
    tcase_add_checked_fixture(tc, sc_setup, sc_teardown);
    tcase_add_test(tc, test_hel_negotiation);
    tcase_add_test(tc, test_hel_protocol_version);
    tcase_add_test(tc, test_hel_small_buffers);
    tcase_add_test(tc, test_hel_url);
    tcase_add_test(tc, test_hel_twice);
    tcase_add_test(tc, test_msg_before_hel);
    tcase_add_test(tc, test_msg_before_opn);
    tcase_add_test(tc, test_garbage_before_hel);
    tcase_add_test(tc, test_size_bounds);
    tcase_add_test(tc, test_chunk_above_negotiated);
    tcase_add_test(tc, test_bad_chunk_types);
    suite_add_tcase(s, tc);

    tc = tcase_create("OPN");
    tcase_add_checked_fixture(tc, sc_setup, sc_teardown);
    tcase_add_test(tc, test_opn_issue);
    tcase_add_test(tc, test_opn_lifetime_revised);
    tcase_add_test(tc, test_opn_rejects);
    tcase_add_test(tc, test_opn_malformed);
    tcase_add_test(tc, test_opn_issue_twice);
    tcase_add_test(tc, test_opn_renew);
    tcase_add_test(tc, test_opn_renew_wrong_channel);
    tcase_add_test(tc, test_old_token_expires);
    tcase_add_test(tc, test_token_expired);
    tcase_add_test(tc, test_token_unknown);
    tcase_add_test(tc, test_no_clock);
    suite_add_tcase(s, tc);

    tc = tcase_create("MSG");
    tcase_add_checked_fixture(tc, sc_setup, sc_teardown);
    tcase_add_test(tc, test_msg_in_place);
    tcase_add_test(tc, test_wrong_channel_id);
    tcase_add_test(tc, test_seq_replay);
    tcase_add_test(tc, test_seq_gap);
    tcase_add_test(tc, test_seq_wrap);
    tcase_add_test(tc, test_chunk_flood);
    tcase_add_test(tc, test_message_too_large);
    tcase_add_test(tc, test_abort_chunk);
    tcase_add_test(tc, test_mixed_request_ids);
    tcase_add_test(tc, test_type_change_mid_message);
    tcase_add_test(tc, test_multichunk_request);
    tcase_add_test(tc, test_alloc_failure);
    tcase_add_test(tc, test_empty_msg);
    suite_add_tcase(s, tc);

    tc = tcase_create("CLO");
    tcase_add_checked_fixture(tc, sc_setup, sc_teardown);
    tcase_add_test(tc, test_clo);
    tcase_add_test(tc, test_clo_checks);
    suite_add_tcase(s, tc);

    tc = tcase_create("Send");
    tcase_add_checked_fixture(tc, sc_setup, sc_teardown);
    tcase_add_test(tc, test_send_single);
    tcase_add_test(tc, test_send_multi);
    tcase_add_test(tc, test_send_exact_boundary);
    tcase_add_test(tc, test_send_too_large);
    tcase_add_test(tc, test_send_size);
    tcase_add_test(tc, test_send_not_open);
    tcase_add_test(tc, test_write_err);
    tcase_add_test(tc, test_deadline);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(sc_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
