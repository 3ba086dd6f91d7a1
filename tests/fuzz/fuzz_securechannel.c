/*
 * tests/fuzz/fuzz_securechannel.c: libFuzzer target for the server-side
 * secure channel (proto/securechannel.c): the input is a TCP byte stream
 * cut into chunks by ua_sc_frame() and fed to ua_sc_process(), exactly
 * as the worker does.
 *
 * Input layout:
 *
 *   +-------+-------+--------------------------------------------+
 *   | flags | step  | stream: the bytes the "client" sends        |
 *   +-------+-------+--------------------------------------------+
 *
 * flags bit 0: first run a valid HEL + OPN Issue (built with the client
 *              state machine: channel id 1, token 1, the client's next
 *              sequence number is 2, lifetime 60 s), so the stream starts
 *              on an open channel;
 * flags bits 1-2: the server limits: 0 = 8 KiB chunks, 64 KiB / 16
 *              chunks; 1 = MaxChunkCount 2; 2 = MaxMessageSize 10000;
 *              3 = 64 KiB chunks, no message limits;
 * step:        the clock advances step * 500 ms per chunk (token expiry).
 *
 * Every complete request is answered with ua_sc_send() (a ReadResponse
 * carrying the request's bytes, so big requests make multi-chunk replies,
 * cut at 64 KiB); every Bad status gets an ERR.  Reassembly memory comes
 * from malloc and must all be back by the end (ASan's leak check).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/client.h"
#include "proto/codec.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

#define FUZZ_OUT (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void *fuzz_alloc(void *ctx, size_t n);
static void fuzz_free(void *ctx, void *p);
static int fuzz_prefix(struct ua_sc *ch, struct ua_sc_out *out);
static void fuzz_answer(struct ua_sc *ch, const struct ua_sc_msg *msg,
                        struct ua_sc_out *out);

static uint8_t fuzz_out[FUZZ_OUT];
static long    fuzz_live;

static void *
fuzz_alloc(void *ctx, size_t n)
{
    (void)ctx;
    fuzz_live++;
    return malloc(n);
}

static void
fuzz_free(void *ctx, void *p)
{
    (void)ctx;
    fuzz_live--;
    free(p);
}

/* HEL and OPN from the client state machine; 0 when both succeed. */
static int
fuzz_prefix(struct ua_sc *ch, struct ua_sc_out *out)
{
    static uint8_t         asm_buf[1u << 20];
    struct ua_client       c;
    struct ua_client_event ev;
    struct ua_sc_msg       msg;
    uint8_t                buf[1024];
    struct ua_sc_out       o = { buf, sizeof(buf), 0 };

    ua_client_init(&c, NULL, asm_buf, sizeof(asm_buf));
    if (ua_client_hello(&c, "opc.tcp://fuzz:4840", &o) != UA_GOOD
        || ua_sc_process(ch, buf, o.len, 0, out, &msg) != UA_GOOD
        || ua_client_process(&c, out->buf, out->len, 0, &ev) != UA_GOOD)
        return -1;
    o.len = 0;
    out->len = 0;
    if (ua_client_open(&c, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 60000, NULL,
                       &o) != UA_GOOD
        || ua_sc_process(ch, buf, o.len, 0, out, &msg) != UA_GOOD
        || ua_client_process(&c, out->buf, out->len, 0, &ev) != UA_GOOD
        || ch->state != UA_SC_OPEN || c.state != UA_CLIENT_OPEN)
        return -1;
    out->len = 0;
    return 0;
}

static void
fuzz_answer(struct ua_sc *ch, const struct ua_sc_msg *msg,
            struct ua_sc_out *out)
{
    struct ua_read_response r;
    struct ua_datavalue     dv;
    struct ua_string        s;
    ua_status               st;

    memset(&r, 0, sizeof(r));
    memset(&dv, 0, sizeof(dv));
    s.len = (int32_t)(msg->len < 65536 ? msg->len : 65536);
    s.data = (uint8_t *)(uintptr_t)msg->body;
    dv.mask = UA_DV_VALUE;
    ua_variant_set_scalar(&dv.value, &s, UA_BT_BYTESTRING);
    r.n_results = 1;
    r.results = &dv;
    r.n_diagnostic_infos = -1;
    out->len = 0;
    st = ua_sc_send(ch, msg->request_id, &ua_types[UA_TYPE_READRESPONSE], &r,
                    out);
    if (st == UA_GOOD) {
        /* The chunks must add up and stay inside the send buffer. */
        size_t off = 0;

        while (off < out->len) {
            uint32_t n = (uint32_t)out->buf[off + 4]
                         | (uint32_t)out->buf[off + 5] << 8
                         | (uint32_t)out->buf[off + 6] << 16
                         | (uint32_t)out->buf[off + 7] << 24;

            if (n < UA_SC_SYM_HEADER || n > ch->send_buffer)
                abort();
            off += n;
        }
        if (off != out->len)
            abort();
    } else if (st != UA_BAD_RESPONSE_TOO_LARGE) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct ua_sc_config base = {
        .recv_buffer = 8192,
        .send_buffer = 8192,
        .max_message = 65536,
        .max_chunks = 16,
        .min_lifetime_ms = 1000,
        .max_lifetime_ms = 600000,
    };
    struct ua_sc_config cfg = base;
    struct ua_sc_mem    mem = { fuzz_alloc, fuzz_free, NULL };
    struct ua_sc_out    out = { fuzz_out, sizeof(fuzz_out), 0 };
    struct ua_sc        ch;
    int64_t             now_dt = 1;
    uint64_t            now = 1000, step;
    uint8_t             flags;

    if (size < 2)
        return 0;
    flags = data[0];
    step = (uint64_t)data[1] * 500;
    data += 2;
    size -= 2;
    cfg.limits = ua_limits_default;
    cfg.now_dt = &now_dt;
    switch ((flags >> 1) & 3) {
    case 1:
        cfg.max_chunks = 2;
        break;
    case 2:
        cfg.max_message = 10000;
        break;
    case 3:
        cfg.recv_buffer = cfg.send_buffer = 65536;
        cfg.max_message = 0;
        cfg.max_chunks = 0;
        break;
    }
    fuzz_live = 0;
    ua_sc_init(&ch, &cfg, &mem, 1);
    if ((flags & 1) && fuzz_prefix(&ch, &out) != 0)
        abort();

    while (size > 0) {
        struct ua_sc_msg msg;
        uint32_t         chunk;
        ua_status        st;

        st = ua_sc_frame(&ch, data, size, &chunk);
        if (st != UA_GOOD) {
            if (!UA_STATUS_IS_BAD(st))
                abort();
            break;                              /* the worker sends ERR */
        }
        if (chunk == 0 || chunk > size)
            break;                              /* incomplete: wait */
        if (chunk < UA_TCP_HEADER)
            abort();
        out.len = 0;
        st = ua_sc_process(&ch, data, chunk, now, &out, &msg);
        if (st != UA_GOOD) {
            /* Every refusal is Bad and leaves the channel closed. */
            if (!UA_STATUS_IS_BAD(st) || ch.state != UA_SC_CLOSED
                || msg.len != 0)
                abort();
            out.len = 0;
            ua_sc_write_err(&out, st, "fuzz");
            break;
        }
        if (msg.len != 0) {
            if (msg.body == NULL || ch.state != UA_SC_OPEN)
                abort();
            fuzz_answer(&ch, &msg, &out);
        }
        if (ch.state == UA_SC_CLOSED)
            break;                              /* CLO */
        data += chunk;
        size -= chunk;
        now += step;
        now_dt += (int64_t)step * 10000;
    }
    (void)ua_sc_deadline(&ch, 0, 10000);
    ua_sc_clear(&ch);
    if (fuzz_live != 0 || ch.asm_buf != NULL)
        abort();
    return 0;
}
