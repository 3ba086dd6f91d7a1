/*
 * tests/fuzz/fuzz_sc_security.c: libFuzzer target for Sign and
 * SignAndEncrypt on the server-side secure channel (proto/securechannel.c),
 * with a fixed key pair: the server is the test PKI's `app` (RSA 2048,
 * tests/unit/proto/pki/pki_gen.h) and trusts every certificate that gets
 * as far as its validate hook.
 *
 * Input layout:
 *
 *   +-------+---------------------------------------------------------+
 *   | flags | rest                                                    |
 *   +-------+---------------------------------------------------------+
 *
 * flags bits 0-1: the policy: Basic256Sha256, Aes128_Sha256_RsaOaep,
 *                 Aes256_Sha256_RsaPss, Basic256 (with allow_deprecated);
 * flags bit 2:    mode Sign (0) or SignAndEncrypt (1);
 * flags bit 3:    scenario.
 *   0 handshake:  a valid HEL is done; rest is the raw byte stream the
 *                 client sends next (an OPN, anything after it), cut into
 *                 chunks by ua_sc_frame() and fed to ua_sc_process() as the
 *                 worker does.  Reaches the asymmetric header, thumbprint,
 *                 certificate and key checks, RSA decryption and
 *                 verification, the OPN body and the response.
 *   1 open:       the channel is made OPEN without RSA (what an Issue
 *                 leaves: token 1, keys from fixed nonces) and rest is a
 *                 list of records, each sealed into one chunk with the
 *                 client's keys, so the fuzzer controls decrypted,
 *                 authentic content:
 *
 *     | op | len (2, LE) | pos (2, LE) | len bytes of body |
 *
 *     op bits 0-1: MSG, CLO, MSG, raw (the body is the whole chunk, not
 *                  sealed);
 *     op bits 2-3: chunk type F, C, A, F;
 *     op bit 4:    flip the byte at pos (mod the chunk's size) after
 *                  sealing;
 *     op bit 5:    use token 2 (unknown) instead of 1;
 *     op bit 6:    skip one sequence number;
 *     op bit 7:    cut the sealed chunk to pos bytes (MessageSize fixed).
 * flags bit 4:    64 KiB chunks and no message limits instead of 8 KiB,
 *                 64 KiB / 16 chunks.
 *
 * Every complete request is answered with ua_sc_send() (a ReadResponse
 * carrying the request's bytes); every response chunk must open with the
 * client's keys (abort() otherwise) and stay inside the send buffer.  Every
 * refusal must be Bad and leave the channel CLOSED.  Reassembly memory and
 * keys must all be released by the end (ASan's leak check).
 *
 * Seeds: build this file with -DFUZZ_SC_SEEDS into a program that writes
 * them (OPNs for every policy and mode from the client state machine,
 * record lists for the open scenario):
 *
 *   cc -std=c11 -D_GNU_SOURCE -O1 -I. -DFUZZ_SC_SEEDS -o /tmp/sc_seeds \
 *      tests/fuzz/fuzz_sc_security.c proto/[a-z]*.c -lwolfssl -lm
 *   rm -rf tests/fuzz/corpus/fuzz_sc_security
 *   /tmp/sc_seeds tests/fuzz/corpus/fuzz_sc_security
 *
 * The OPN seeds hold a random client nonce and an RSA signature, so each
 * run writes different bytes; any run's seeds do.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/client.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/unit/proto/pki/pki_gen.h"

#define FUZZ_OUT   (1u << 20)
#define FUZZ_CHUNK 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static void *fuzz_alloc(void *ctx, size_t n);
static void fuzz_free(void *ctx, void *p);
static ua_status fuzz_validate(void *ctx, const uint8_t *chain, size_t len,
                               const struct ua_policy *p);
static void fuzz_setup(void);
static const struct ua_policy *fuzz_policy(uint8_t flags);
static void fuzz_config(struct ua_sc_config *cfg, uint8_t flags);
static int fuzz_hello(struct ua_sc *ch, struct ua_sc_out *out);
static int fuzz_inject(struct ua_sc *ch, struct ua_cipher *cl,
                       const struct ua_policy *p, uint8_t mode);
static int fuzz_feed(struct ua_sc *ch, uint8_t *chunk, size_t len,
                     uint64_t now, struct ua_sc_out *out,
                     struct ua_cipher *cl);
static void fuzz_answer(struct ua_sc *ch, const struct ua_sc_msg *msg,
                        struct ua_sc_out *out, struct ua_cipher *cl);
static void fuzz_stream(struct ua_sc *ch, const uint8_t *data, size_t size,
                        struct ua_sc_out *out);
static void fuzz_records(struct ua_sc *ch, struct ua_cipher *cl,
                         const uint8_t *data, size_t size,
                         struct ua_sc_out *out);

static uint8_t              fuzz_out[FUZZ_OUT];
static uint8_t              fuzz_in[FUZZ_OUT];
static uint8_t              fuzz_chunk[FUZZ_CHUNK];
static struct ua_crypto_key fuzz_key;       /* the server's, app */
static bool                 fuzz_ready;
static long                 fuzz_live;

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

/* Trust whatever gets here: the fuzzer should reach the RSA work. */
static ua_status
fuzz_validate(void *ctx, const uint8_t *chain, size_t len,
              const struct ua_policy *p)
{
    (void)ctx;
    (void)chain;
    (void)len;
    (void)p;
    return UA_GOOD;
}

static void
fuzz_setup(void)
{
    if (fuzz_ready)
        return;
    if (ua_crypto_init() != UA_GOOD
        || ua_crypto_key_load(&fuzz_key, pki_app_key_der,
                              sizeof(pki_app_key_der)) != UA_GOOD)
        abort();
    fuzz_ready = true;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_setup();
    return 0;
}

static const struct ua_policy *
fuzz_policy(uint8_t flags)
{
    static const uint8_t ids[4] = { UA_POLICY_BASIC256SHA256,
                                    UA_POLICY_AES128_SHA256_RSAOAEP,
                                    UA_POLICY_AES256_SHA256_RSAPSS,
                                    UA_POLICY_BASIC256 };

    return ua_crypto_policy_get(ids[flags & 3]);
}

static void
fuzz_config(struct ua_sc_config *cfg, uint8_t flags)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->recv_buffer = 8192;
    cfg->send_buffer = 8192;
    cfg->max_message = 65536;
    cfg->max_chunks = 16;
    if (flags & 0x10) {
        cfg->recv_buffer = cfg->send_buffer = FUZZ_CHUNK;
        cfg->max_message = 0;
        cfg->max_chunks = 0;
    }
    cfg->min_lifetime_ms = 1000;
    cfg->max_lifetime_ms = 600000;
    cfg->limits = ua_limits_default;
    for (unsigned id = UA_POLICY_BASIC128RSA15; id < UA_POLICY_COUNT; id++)
        cfg->offers |= UA_SC_OFFER(id, UA_MESSAGESECURITYMODE_SIGN)
                       | UA_SC_OFFER(id, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    cfg->allow_deprecated = true;
    cfg->cert = pki_app_der;
    cfg->cert_len = sizeof(pki_app_der);
    cfg->key = &fuzz_key;
    cfg->validate = fuzz_validate;
}

/* A valid HEL; 0 when the channel is ACKED. */
static int
fuzz_hello(struct ua_sc *ch, struct ua_sc_out *out)
{
    struct ua_client c;
    struct ua_sc_msg msg;
    uint8_t          buf[256];
    struct ua_sc_out o = { buf, sizeof(buf), 0 };

    ua_client_init(&c, NULL, NULL, 0);
    if (ua_client_hello(&c, "opc.tcp://fuzz:4840", &o) != UA_GOOD
        || ua_sc_process(ch, buf, o.len, 0, out, &msg) != UA_GOOD
        || ch->state != UA_SC_ACKED)
        return -1;
    out->len = 0;
    return 0;
}

/*
 * What a successful Issue leaves (securechannel.c ua_sc_opn_secure), set
 * by hand so no RSA is needed: token 1, the client's OPN was sequence
 * number 1, keys from fixed nonces; cl gets the client's side of them.
 */
static int
fuzz_inject(struct ua_sc *ch, struct ua_cipher *cl, const struct ua_policy *p,
            uint8_t mode)
{
    uint8_t            cn[UA_NONCE_MAX], sn[UA_NONCE_MAX];
    struct ua_sym_keys ck, sk;

    for (int i = 0; i < UA_NONCE_MAX; i++) {
        cn[i] = (uint8_t)(0x20 + i);
        sn[i] = (uint8_t)(0x80 + i);
    }
    if (ua_crypto_channel_keys(p, cn, p->nonce_len, sn, p->nonce_len, &ck,
                               &sk) != UA_GOOD
        || ua_crypto_cipher_init(&ch->cipher[0], p, &sk, &ck) != UA_GOOD
        || ua_crypto_cipher_init(cl, p, &ck, &sk) != UA_GOOD)
        return -1;
    ch->state = UA_SC_OPEN;
    ch->policy = p;
    ch->mode = mode;
    ch->cipher_cur = 0;
    ch->token_id = 1;
    ch->next_token_id = 2;
    ch->token_created_ms = 0;
    ch->token_lifetime_ms = 600000;
    ch->recv_seq = 1;
    ch->seq_started = 1;
    ch->send_seq = 1;
    return 0;
}

/*
 * One whole chunk into the server: 0 to go on, -1 when the channel is
 * closed (a refusal or a CLO).
 */
static int
fuzz_feed(struct ua_sc *ch, uint8_t *chunk, size_t len, uint64_t now,
          struct ua_sc_out *out, struct ua_cipher *cl)
{
    struct ua_sc_msg msg;
    ua_status        st;

    out->len = 0;
    st = ua_sc_process(ch, chunk, len, now, out, &msg);
    while (st == UA_GOOD && ua_sc_busy(ch))     /* a staged OPN */
        st = ua_sc_resume(ch, now, out);
    if (st != UA_GOOD) {
        /* Every refusal is Bad and leaves the channel closed. */
        if (!UA_STATUS_IS_BAD(st) || ch->state != UA_SC_CLOSED
            || msg.len != 0 || !UA_STATUS_IS_BAD(ch->detail))
            abort();
        out->len = 0;
        ua_sc_write_err(out, st, "fuzz");
        return -1;
    }
    if (msg.len != 0) {
        if (msg.body == NULL || ch->state != UA_SC_OPEN)
            abort();
        fuzz_answer(ch, &msg, out, cl);
    }
    return ch->state == UA_SC_CLOSED ? -1 : 0;
}

/* Answer with the request's bytes; every chunk must open with cl. */
static void
fuzz_answer(struct ua_sc *ch, const struct ua_sc_msg *msg,
            struct ua_sc_out *out, struct ua_cipher *cl)
{
    struct ua_read_response r;
    struct ua_datavalue     dv;
    struct ua_string        s;
    size_t                  off = 0, body;
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
    if (st == UA_BAD_RESPONSE_TOO_LARGE)
        return;
    if (st != UA_GOOD
        || ua_sc_send_size(ch, &ua_types[UA_TYPE_READRESPONSE], &r)
               != out->len)
        abort();
    while (off < out->len) {
        uint32_t n = (uint32_t)out->buf[off + 4]
                     | (uint32_t)out->buf[off + 5] << 8
                     | (uint32_t)out->buf[off + 6] << 16
                     | (uint32_t)out->buf[off + 7] << 24;

        if (n < UA_SC_SYM_HEADER || n > ch->send_buffer
            || n > out->len - off)
            abort();
        if (cl != NULL && ua_sc_sym_open(cl, ch->mode, out->buf + off, n,
                                         &body) != UA_GOOD)
            abort();
        off += n;
    }
}

/* Scenario 0: the raw stream after HEL. */
static void
fuzz_stream(struct ua_sc *ch, const uint8_t *data, size_t size,
            struct ua_sc_out *out)
{
    uint64_t now = 1000;

    /* The chunks are decrypted in place: a copy, never the fuzzer's
     * const input. */
    if (size > sizeof(fuzz_in))
        size = sizeof(fuzz_in);
    memcpy(fuzz_in, data, size);
    for (uint8_t *p = fuzz_in; size > 0;) {
        uint32_t  chunk;
        ua_status st = ua_sc_frame(ch, p, size, &chunk);

        if (st != UA_GOOD) {
            if (!UA_STATUS_IS_BAD(st))
                abort();
            return;
        }
        if (chunk == 0 || chunk > size)
            return;
        if (chunk < UA_TCP_HEADER)
            abort();
        if (fuzz_feed(ch, p, chunk, now, out, NULL) != 0)
            return;
        p += chunk;
        size -= chunk;
        now += 1000;
    }
}

/* Scenario 1: records sealed with the client's keys. */
static void
fuzz_records(struct ua_sc *ch, struct ua_cipher *cl, const uint8_t *data,
             size_t size, struct ua_sc_out *out)
{
    static const char ct[4] = { 'F', 'C', 'A', 'F' };
    uint32_t          seq = 1;
    uint64_t          now = 1000;

    while (size >= 5) {
        uint8_t  op = data[0];
        size_t   len = (size_t)data[1] | (size_t)data[2] << 8;
        size_t   pos = (size_t)data[3] | (size_t)data[4] << 8;
        size_t   n;
        uint8_t *b = fuzz_chunk;

        data += 5;
        size -= 5;
        if (len > size)
            len = size;
        if ((op & 3) == 3) {
            /* Raw bytes as one chunk, if they frame as one. */
            uint32_t chunk;

            if (len < UA_TCP_HEADER)
                return;
            memcpy(b, data, len);
            if (ua_sc_frame(ch, b, len, &chunk) != UA_GOOD || chunk != len)
                return;
            n = len;
        } else {
            if (UA_SC_SYM_HEADER + len + 64 > sizeof(fuzz_chunk))
                return;
            memcpy(b, (op & 3) == 1 ? "CLO" : "MSG", 3);
            b[3] = (op & 3) == 1 ? 'F' : ct[(op >> 2) & 3];
            memset(b + 4, 0, 4);
            b[8] = (uint8_t)ch->channel_id;
            b[9] = (uint8_t)(ch->channel_id >> 8);
            b[10] = (uint8_t)(ch->channel_id >> 16);
            b[11] = (uint8_t)(ch->channel_id >> 24);
            b[12] = (op & 0x20) ? 2 : 1;
            b[13] = b[14] = b[15] = 0;
            seq += (op & 0x40) ? 2 : 1;
            b[16] = (uint8_t)seq;
            b[17] = (uint8_t)(seq >> 8);
            b[18] = (uint8_t)(seq >> 16);
            b[19] = (uint8_t)(seq >> 24);
            b[20] = 7;                          /* RequestId 7 */
            b[21] = b[22] = b[23] = 0;
            memcpy(b + UA_SC_SYM_HEADER, data, len);
            if (ua_sc_sym_seal(cl, ch->mode, b, len, &n) != UA_GOOD)
                abort();
            if ((op & 0x80) && pos < n) {
                n = pos < UA_TCP_HEADER ? UA_TCP_HEADER : pos;
                b[4] = (uint8_t)n;
                b[5] = (uint8_t)(n >> 8);
                b[6] = (uint8_t)(n >> 16);
                b[7] = (uint8_t)(n >> 24);
            }
            if (op & 0x10)
                b[pos % n] ^= (uint8_t)(1u << (pos & 7));
            if (n > ch->recv_buffer) {
                uint32_t chunk;

                /* The worker frames first: too large never gets here. */
                if (ua_sc_frame(ch, b, n, &chunk) == UA_GOOD)
                    abort();
                return;
            }
        }
        data += len;
        size -= len;
        if (fuzz_feed(ch, b, n, now, out, cl) != 0)
            return;
        now += 500;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ua_sc_config     cfg;
    struct ua_sc_mem        mem = { fuzz_alloc, fuzz_free, NULL };
    struct ua_sc_out        out = { fuzz_out, sizeof(fuzz_out), 0 };
    struct ua_sc            ch;
    struct ua_cipher        cl;
    const struct ua_policy *p;
    int64_t                 now_dt = 1;
    uint8_t                 flags, mode;

    fuzz_setup();
    if (size < 1)
        return 0;
    flags = data[0];
    data++;
    size--;
    p = fuzz_policy(flags);
    mode = (flags & 4) ? UA_MESSAGESECURITYMODE_SIGNANDENCRYPT
                       : UA_MESSAGESECURITYMODE_SIGN;
    fuzz_config(&cfg, flags);
    cfg.now_dt = &now_dt;
    fuzz_live = 0;
    memset(&cl, 0, sizeof(cl));
    ua_sc_init(&ch, &cfg, &mem, 1);
    if (fuzz_hello(&ch, &out) != 0)
        abort();
    if (flags & 8) {
        if (fuzz_inject(&ch, &cl, p, mode) != 0)
            abort();
        fuzz_records(&ch, &cl, data, size, &out);
    } else {
        fuzz_stream(&ch, data, size, &out);
    }
    (void)ua_sc_deadline(&ch, 0, 10000);
    ua_sc_clear(&ch);
    ua_crypto_cipher_clear(&cl);
    if (fuzz_live != 0 || ch.asm_buf != NULL)
        abort();
    return 0;
}

#ifdef FUZZ_SC_SEEDS
/* ------------------------------------------------------------ seeds */

static int fuzz_seed_write(const char *dir, const char *name, uint8_t flags,
                           const uint8_t *b, size_t n);
static size_t fuzz_seed_opn(uint8_t flags, uint8_t *buf, size_t cap);
static size_t fuzz_seed_rec(uint8_t *b, uint8_t op, size_t len, size_t pos,
                            uint8_t fill);

static int
fuzz_seed_write(const char *dir, const char *name, uint8_t flags,
                const uint8_t *b, size_t n)
{
    char  path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(&flags, 1, 1, f) != 1
        || fwrite(b, 1, n, f) != n) {
        perror(path);
        if (f != NULL)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* The client state machine's OPN Issue (client `app`) for the policy and
 * mode in flags. */
static size_t
fuzz_seed_opn(uint8_t flags, uint8_t *buf, size_t cap)
{
    static struct ua_client         c;
    static struct ua_crypto_key     ck;
    struct ua_client_security       sec;
    struct ua_sc_out                o = { buf, cap, 0 };
    uint8_t                         ack[28] = "ACKF\x1c\0\0\0";
    struct ua_client_event          ev;

    if (ua_crypto_key_load(&ck, pki_app_key_der, sizeof(pki_app_key_der))
        != UA_GOOD)
        return 0;
    ua_client_init(&c, NULL, NULL, 0);
    memset(&sec, 0, sizeof(sec));
    sec.policy = fuzz_policy(flags);
    sec.mode = (flags & 4) ? UA_MESSAGESECURITYMODE_SIGNANDENCRYPT
                           : UA_MESSAGESECURITYMODE_SIGN;
    sec.cert = pki_app_der;
    sec.cert_len = sizeof(pki_app_der);
    sec.key = &ck;
    sec.server_cert = pki_app_der;
    sec.server_cert_len = sizeof(pki_app_der);
    if (ua_client_set_security(&c, &sec) != UA_GOOD
        || ua_client_hello(&c, NULL, &o) != UA_GOOD)
        return 0;
    /* An ACK for 8 KiB both ways. */
    for (int i = 0; i < 4; i++) {
        uint32_t v = i == 0 ? 0 : i < 3 ? 8192 : 65536;

        ack[8 + 4 * i] = (uint8_t)v;
        ack[9 + 4 * i] = (uint8_t)(v >> 8);
        ack[10 + 4 * i] = (uint8_t)(v >> 16);
        ack[11 + 4 * i] = (uint8_t)(v >> 24);
    }
    memset(ack + 24, 0, 4);
    if (ua_client_process(&c, ack, sizeof(ack), 0, &ev) != UA_GOOD)
        return 0;
    o.len = 0;
    if (ua_client_open(&c, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 60000, NULL,
                       &o) != UA_GOOD)
        return 0;
    ua_client_clear(&c);
    ua_crypto_key_clear(&ck);
    return o.len;
}

static size_t
fuzz_seed_rec(uint8_t *b, uint8_t op, size_t len, size_t pos, uint8_t fill)
{
    b[0] = op;
    b[1] = (uint8_t)len;
    b[2] = (uint8_t)(len >> 8);
    b[3] = (uint8_t)pos;
    b[4] = (uint8_t)(pos >> 8);
    memset(b + 5, fill, len);
    /* A plausible start: the NodeId of ReadRequest (of
     * CloseSecureChannelRequest for a CLO). */
    if (len >= 4) {
        uint16_t id = (op & 3) == 1 ? 452 : 631;

        b[5] = 0x01;
        b[6] = 0;
        b[7] = (uint8_t)id;
        b[8] = (uint8_t)(id >> 8);
    }
    return 5 + len;
}

int
main(int argc, char **argv)
{
    static uint8_t buf[1u << 16];
    char           name[64];
    size_t         n;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    fuzz_setup();
    for (uint8_t flags = 0; flags < 8; flags++) {
        n = fuzz_seed_opn(flags, buf, sizeof(buf));
        snprintf(name, sizeof(name), "opn-%u", flags);
        if (n == 0 || fuzz_seed_write(argv[1], name, flags, buf, n) != 0)
            return 1;
    }
    for (uint8_t flags = 8; flags < 16; flags++) {
        n = 0;
        n += fuzz_seed_rec(buf + n, 0x00, 60, 0, 0x11);     /* MSG F */
        n += fuzz_seed_rec(buf + n, 0x04, 7000, 0, 0x22);   /* MSG C */
        n += fuzz_seed_rec(buf + n, 0x04, 3000, 0, 0x33);   /* MSG C */
        n += fuzz_seed_rec(buf + n, 0x00, 100, 0, 0x44);    /* MSG F */
        n += fuzz_seed_rec(buf + n, 0x04, 100, 0, 0x55);    /* MSG C */
        n += fuzz_seed_rec(buf + n, 0x08, 8, 0, 0x00);      /* MSG A */
        n += fuzz_seed_rec(buf + n, 0x00, 30, 0, 0x66);     /* MSG F */
        n += fuzz_seed_rec(buf + n, 0x01, 24, 0, 0x00);     /* CLO */
        snprintf(name, sizeof(name), "open-%u", flags);
        if (fuzz_seed_write(argv[1], name, flags, buf, n) != 0)
            return 1;
        n = 0;
        n += fuzz_seed_rec(buf + n, 0x00, 40, 0, 0x11);
        n += fuzz_seed_rec(buf + n, 0x10, 40, 30, 0x11);    /* flipped */
        snprintf(name, sizeof(name), "flip-%u", flags);
        if (fuzz_seed_write(argv[1], name, flags, buf, n) != 0)
            return 1;
        n = fuzz_seed_rec(buf, 0x80, 40, 70, 0x11);         /* cut */
        snprintf(name, sizeof(name), "cut-%u", flags);
        if (fuzz_seed_write(argv[1], name, flags, buf, n) != 0)
            return 1;
    }
    ua_crypto_key_clear(&fuzz_key);
    return 0;
}
#endif /* FUZZ_SC_SEEDS */
