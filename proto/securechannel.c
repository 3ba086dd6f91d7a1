/*
 * proto/securechannel.c: server side of UACP (Part 6 §7.1) and of the
 * secure channel (Part 6 §6.7) as a pure state machine (see
 * securechannel.h for the states and the statuses): SecurityPolicy None,
 * and the RSA policies of proto/crypto.h in modes Sign and SignAndEncrypt.
 *
 * Chunk layouts (all integers little-endian):
 *
 *   HEL  "HELF" size | version rbuf sbuf maxmsg maxchunks | String url
 *   ACK  "ACKF" size | version rbuf sbuf maxmsg maxchunks
 *   ERR  "ERRF" size | StatusCode | String reason
 *   OPN  "OPNF" size | channel | String policy, ByteString cert, ByteString
 *        thumbprint | seq reqid | NodeId 446/449 | Open...Request/Response
 *        [| padding | signature]   (secured: from seq on RSA-encrypted)
 *   MSG  "MSG"C/F/A size | channel | token | seq reqid | body
 *        [| padding | signature]   (Sign: signature; SignAndEncrypt: from
 *                                   seq on AES-CBC encrypted)
 *   CLO  "CLOF" size | channel | token | seq reqid | NodeId 452 | request
 *        [| padding | signature]
 *
 * A MSG body is the NodeId of the request's DefaultBinary encoding and the
 * request; an abort chunk's body is StatusCode + String reason.  The
 * security footers are drawn in securechannel.h (ua_sc_sym_seal).
 *
 * Tokens (Part 4 §5.5.2, Part 6 §6.7.4): a Renew makes a new token current
 * and keeps the old one as `prev` until the client first uses the new one
 * or the old one's lifetime ends.  The current token is accepted up to its
 * lifetime + 25 % (the same grace as ua_sc_deadline()).  Responses go out
 * under the old token while it is still pending, then under the new one.
 * On a secured channel each token owns one struct ua_cipher (one AES and
 * one HMAC object per direction, keyed once when the token is made):
 * cipher[cipher_cur] for token_id, the other for prev_token_id.
 *
 * No oracle (fail closed, and the same way: docs/security.md cases 24,
 * 32, 36): a chunk that fails decryption, signature, padding or (once
 * authenticated) its sequence number gets BadSecurityChecksFailed, the
 * same status whatever failed; the symmetric HMAC is computed even when
 * the padding is already known to be bad, the RSA signature is verified
 * even when decryption failed.  The cause goes to ch->detail for the log
 * only.
 *
 * Hot path: a one-chunk MSG in is checked (and decrypted) in place and
 * handed out without a copy; ua_sc_send() encodes a one-chunk response
 * straight into out and signs and encrypts it there.  Nothing here
 * allocates except reassembly of multi-chunk requests, through ch->mem,
 * bounded by MaxChunkCount and MaxMessageSize before each append
 * (docs/security.md "Attack classes", class 1).
 */
#include "securechannel.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nodeid.h"
#include "nodeids_gen.h"
#include "status_gen.h"
#include "types_gen.h"

#define UA_SC_ASYM_FIXED   12   /* three length fields of the asym header */
#define UA_SC_HEL_FIXED    32   /* header + 5 UInt32 + url length */
#define UA_SC_ACK_SIZE     28
#define UA_SC_ERR_FIXED    16   /* header + StatusCode + reason length */
#define UA_SC_OPN_ARENA    4096 /* request header extras of an OPN */
#define UA_SC_SEC_HEADER   16   /* header + channel + token: not encrypted */

static_assert(UA_POLICY_COUNT * 4 <= 32, "UA_SC_OFFER bits fit a uint32_t");

/* Table of contents. */
static inline uint32_t ua_sc_rd32(const uint8_t *p);
static inline void ua_sc_wr32(uint8_t *p, uint32_t v);
static inline int64_t ua_sc_now_dt(const struct ua_sc *ch);
static inline bool ua_sc_secured(const struct ua_sc *ch);
static bool ua_sc_offered(const struct ua_sc_config *cfg,
                          const struct ua_policy *p, uint8_t mode);
static bool ua_sc_none_ok(const struct ua_sc *ch);
static ua_status ua_sc_deny(struct ua_sc *ch, ua_status wire,
                            ua_status detail);
static ua_status ua_sc_cert_wire(ua_status s);
static size_t ua_sc_der_len(const uint8_t *p, size_t n);
static inline size_t ua_sc_room(const struct ua_sc_out *out);
static ua_status ua_sc_check_header(const struct ua_sc *ch,
                                    const uint8_t *p, uint32_t *size);
static ua_status ua_sc_fail(struct ua_sc *ch, ua_status s);
static void ua_sc_asm_free(struct ua_sc *ch);
static ua_status ua_sc_seq_check(struct ua_sc *ch, uint32_t seq);
static ua_status ua_sc_token_check(struct ua_sc *ch, uint32_t token,
                                   uint64_t now_ms, unsigned *slot);
static uint32_t ua_sc_lifetime(const struct ua_sc *ch, uint32_t requested);
static void ua_sc_token_commit(struct ua_sc *ch, uint32_t token,
                               uint32_t lifetime, uint64_t now_ms);
static ua_status ua_sc_do_hel(struct ua_sc *ch, const uint8_t *c, size_t len,
                              struct ua_sc_out *out);
static ua_status ua_sc_do_opn(struct ua_sc *ch, const uint8_t *c, size_t len,
                              uint64_t now_ms, struct ua_sc_out *out);
static ua_status ua_sc_opn_secure(struct ua_sc *ch, const struct ua_policy *p,
                                  uint8_t *c, size_t len, uint64_t now_ms,
                                  struct ua_sc_out *out);
static void ua_sc_opn_reset(struct ua_sc *ch);
static struct ua_crypto_key *ua_sc_peer_key_load(struct ua_sc *ch,
                                                 const uint8_t *cert,
                                                 size_t len);
static struct ua_crypto_key *ua_sc_peer_key_staged(struct ua_sc *ch);
static ua_status ua_sc_opn_step(struct ua_sc *ch, uint64_t now_ms,
                                struct ua_sc_out *out);
static ua_status ua_sc_opn_request(struct ua_sc *ch);
static ua_status ua_sc_opn_commit(struct ua_sc *ch, uint64_t now_ms,
                                  struct ua_sc_out *out);
static ua_status ua_sc_asym_want(const struct ua_policy *p,
                                 struct ua_crypto_key *priv,
                                 struct ua_crypto_key *peer, size_t hdr,
                                 size_t len, size_t *want);
static ua_status ua_sc_asym_finish(const struct ua_policy *p,
                                   struct ua_crypto_key *priv,
                                   struct ua_crypto_key *peer, uint8_t *chunk,
                                   size_t hdr, size_t len, size_t want,
                                   size_t plain, bool bad, size_t *body);
static ua_status ua_sc_opn_answer(struct ua_sc *ch,
                                  const struct ua_policy *p,
                                  struct ua_crypto_key *peer,
                                  const uint8_t *thumb, uint32_t request_id,
                                  struct ua_open_secure_channel_response *r,
                                  struct ua_sc_out *out);
static ua_status ua_sc_sym_check(struct ua_sc *ch, const uint8_t *c,
                                 size_t len, uint64_t now_ms, size_t *blen);
static ua_status ua_sc_do_msg(struct ua_sc *ch, const uint8_t *c, size_t len,
                              uint64_t now_ms, struct ua_sc_msg *msg);
static ua_status ua_sc_do_clo(struct ua_sc *ch, const uint8_t *c, size_t len,
                              uint64_t now_ms);
static ua_status ua_sc_asm_append(struct ua_sc *ch, const uint8_t *p,
                                  size_t n);
static uint32_t ua_sc_send_token(const struct ua_sc *ch);
static struct ua_cipher *ua_sc_send_cipher(struct ua_sc *ch);

/* ------------------------------------------------------------ helpers */

static inline uint32_t
ua_sc_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static inline void
ua_sc_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline int64_t
ua_sc_now_dt(const struct ua_sc *ch)
{
    return ch->cfg->now_dt != NULL ? *ch->cfg->now_dt : 0;
}

/* Bytes left in out (none when a caller left len past cap). */
static inline size_t
ua_sc_room(const struct ua_sc_out *out)
{
    return out->len < out->cap ? out->cap - out->len : 0;
}

/* Whether the channel's token is secured (Sign or SignAndEncrypt). */
static inline bool
ua_sc_secured(const struct ua_sc *ch)
{
    return !ua_crypto_policy_is_none(ch->policy)
           && ch->mode >= UA_MESSAGESECURITYMODE_SIGN;
}

/*
 * Whether cfg offers policy p in mode (0: in Sign or SignAndEncrypt):
 * listed in offers, not deprecated unless allowed, and our own key
 * present and of a length the policy takes.
 */
static bool
ua_sc_offered(const struct ua_sc_config *cfg, const struct ua_policy *p,
              uint8_t mode)
{
    uint32_t bits;

    if (ua_crypto_policy_is_none(p))
        return false;
    if (p->deprecated && !cfg->allow_deprecated)
        return false;
    if (cfg->cert == NULL || cfg->cert_len == 0 || cfg->key == NULL
        || !ua_crypto_key_is_private(cfg->key)
        || !ua_crypto_policy_key_ok(p, ua_crypto_key_bits(cfg->key)))
        return false;
    if (mode != 0)
        bits = UA_SC_OFFER(p->id, mode);
    else
        bits = UA_SC_OFFER(p->id, UA_MESSAGESECURITYMODE_SIGN)
               | UA_SC_OFFER(p->id, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    return (cfg->offers & bits) != 0;
}

/* SecurityPolicy None: offered (always when nothing else is), and not a
 * Renew of a secured channel. */
static bool
ua_sc_none_ok(const struct ua_sc *ch)
{
    uint32_t offers = ch->cfg->offers;

    if (offers != 0
        && !(offers & UA_SC_OFFER(UA_POLICY_NONE,
                                  UA_MESSAGESECURITYMODE_NONE)))
        return false;
    return ch->state != UA_SC_OPEN || ua_crypto_policy_is_none(ch->policy);
}

/* Refuse with wire (what the peer sees) and remember detail for the log. */
static ua_status
ua_sc_deny(struct ua_sc *ch, ua_status wire, ua_status detail)
{
    ch->detail = detail;
    return wire;
}

/*
 * What the client sees of the validate hook's verdict.  Part 6 §6.7.6
 * wants trust checked first and Bad_SecurityChecksFailed on error; so do
 * the steps before trust (structure, chain, signature, key length and
 * hash: Part 4 §6.1.3 steps 1-5) and anything unexpected.  The later
 * steps' codes are the OpenSecureChannel results of Part 4 and pass.
 */
static ua_status
ua_sc_cert_wire(ua_status s)
{
    switch (s) {
    case UA_BAD_CERTIFICATE_TIME_INVALID:
    case UA_BAD_CERTIFICATE_ISSUER_TIME_INVALID:
    case UA_BAD_CERTIFICATE_HOST_NAME_INVALID:
    case UA_BAD_CERTIFICATE_URI_INVALID:
    case UA_BAD_CERTIFICATE_USE_NOT_ALLOWED:
    case UA_BAD_CERTIFICATE_ISSUER_USE_NOT_ALLOWED:
    case UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN:
    case UA_BAD_CERTIFICATE_ISSUER_REVOCATION_UNKNOWN:
    case UA_BAD_CERTIFICATE_REVOKED:
    case UA_BAD_CERTIFICATE_ISSUER_REVOKED:
        return s;
    default:
        return UA_BAD_SECURITY_CHECKS_FAILED;
    }
}

/* Size of the DER SEQUENCE at p (tag, length, contents), 0 when p[0..n)
 * does not start with a whole one. */
static size_t
ua_sc_der_len(const uint8_t *p, size_t n)
{
    size_t len, hl, k;

    if (n < 2 || p[0] != 0x30)
        return 0;
    if (p[1] < 0x80) {
        len = p[1];
        hl = 2;
    } else {
        k = p[1] & 0x7Fu;
        if (k == 0 || k > 4 || n < 2 + k)
            return 0;
        len = 0;
        for (size_t i = 0; i < k; i++)
            len = len << 8 | p[2 + i];
        hl = 2 + k;
    }
    if (len > n - hl)
        return 0;
    return hl + len;
}

/*
 * Validate the 8-byte header at p for the state ch is in: message type,
 * chunk type, and size bounds (Part 6 §7.1.2.2: MessageSize is checked
 * against the negotiated ReceiveBufferSize before anything else).
 */
static ua_status
ua_sc_check_header(const struct ua_sc *ch, const uint8_t *p, uint32_t *size)
{
    uint32_t n = ua_sc_rd32(p + 4);
    uint32_t limit;
    uint8_t  ct = p[3];

    if (ch->state == UA_SC_CLOSED)
        return UA_BAD_SECURE_CHANNEL_CLOSED;
    if (p[0] == 'M' && p[1] == 'S' && p[2] == 'G') {
        if (ct != 'F' && ct != 'C' && ct != 'A')
            return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
        if (ch->state == UA_SC_FRESH)
            return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    } else if (p[0] == 'H' && p[1] == 'E' && p[2] == 'L') {
        /* Part 6 §7.1.3: HEL is the first message, sent once. */
        if (ct != 'F' || ch->state != UA_SC_FRESH)
            return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    } else if ((p[0] == 'O' && p[1] == 'P' && p[2] == 'N')
               || (p[0] == 'C' && p[1] == 'L' && p[2] == 'O')) {
        if (ct != 'F' || ch->state == UA_SC_FRESH)
            return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    } else {
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    }
    if (n < UA_TCP_HEADER)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    limit = ch->state == UA_SC_FRESH ? ch->cfg->recv_buffer : ch->recv_buffer;
    if (n > limit)
        return UA_BAD_TCP_MESSAGE_TOO_LARGE;
    *size = n;
    return UA_GOOD;
}

static ua_status
ua_sc_fail(struct ua_sc *ch, ua_status s)
{
    if (ch->detail == UA_GOOD)
        ch->detail = s;
    ch->state = UA_SC_CLOSED;
    ua_sc_asm_free(ch);
    ua_sc_opn_reset(ch);
    return s;
}

static void
ua_sc_asm_free(struct ua_sc *ch)
{
    if (ch->asm_buf != NULL && ch->mem.free != NULL)
        ch->mem.free(ch->mem.ctx, ch->asm_buf);
    ch->asm_buf = NULL;
    ch->asm_len = 0;
    ch->asm_cap = 0;
    ch->asm_chunks = 0;
    ch->asm_request_id = 0;
}

/* Part 6 §6.7.2.4: exactly +1 per chunk; a wrap only from above
 * UA_SC_SEQ_WRAP_ABOVE to below UA_SC_SEQ_WRAP_BELOW. */
static ua_status
ua_sc_seq_check(struct ua_sc *ch, uint32_t seq)
{
    if (ch->seq_started) {
        uint32_t prev = ch->recv_seq;

        if (seq != prev + 1
            && !(prev > UA_SC_SEQ_WRAP_ABOVE && seq < UA_SC_SEQ_WRAP_BELOW))
            return UA_BAD_SEQUENCE_NUMBER_INVALID;
    }
    ch->recv_seq = seq;
    ch->seq_started = 1;
    return UA_GOOD;
}

/*
 * The current token (with its grace) or the previous one while pending;
 * *slot gets the index of its cipher context.
 */
static ua_status
ua_sc_token_check(struct ua_sc *ch, uint32_t token, uint64_t now_ms,
                  unsigned *slot)
{
    uint64_t life = ch->token_lifetime_ms;

    if (ch->prev_token_id != 0 && now_ms > ch->prev_expires_ms)
        ch->prev_token_id = 0;      /* the old token has run out */
    if (token == ch->token_id) {
        if (now_ms > ch->token_created_ms + life + life / 4)
            return UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN;
        ch->prev_token_id = 0;      /* the client switched: drop the old */
        *slot = ch->cipher_cur;
        return UA_GOOD;
    }
    if (token != 0 && token == ch->prev_token_id) {
        *slot = 1u - ch->cipher_cur;
        return UA_GOOD;
    }
    return UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN;
}

/* The requested lifetime within the configured bounds (docs/security.md
 * case 28). */
static uint32_t
ua_sc_lifetime(const struct ua_sc *ch, uint32_t requested)
{
    uint32_t lifetime = requested;

    if (lifetime < ch->cfg->min_lifetime_ms)
        lifetime = ch->cfg->min_lifetime_ms;
    if (ch->cfg->max_lifetime_ms != 0 && lifetime > ch->cfg->max_lifetime_ms)
        lifetime = ch->cfg->max_lifetime_ms;
    return lifetime;
}

/* Make token current; on a Renew the current one becomes the pending
 * previous one (its cipher context is the other slot). */
static void
ua_sc_token_commit(struct ua_sc *ch, uint32_t token, uint32_t lifetime,
                   uint64_t now_ms)
{
    if (ch->state == UA_SC_OPEN) {
        ch->prev_token_id = ch->token_id;
        ch->prev_expires_ms = ch->token_created_ms + ch->token_lifetime_ms;
    }
    ch->token_id = token;
    ch->token_created_ms = now_ms;
    ch->token_lifetime_ms = lifetime;
    ch->state = UA_SC_OPEN;
}

/* The token responses go out under (Part 6 §6.7.4). */
static uint32_t
ua_sc_send_token(const struct ua_sc *ch)
{
    return ch->prev_token_id != 0 ? ch->prev_token_id : ch->token_id;
}

/* That token's cipher context. */
static struct ua_cipher *
ua_sc_send_cipher(struct ua_sc *ch)
{
    return &ch->cipher[ch->prev_token_id != 0 ? 1u - ch->cipher_cur
                                              : ch->cipher_cur];
}

/* ------------------------------------------------------------ public */

void
ua_sc_init(struct ua_sc *ch, const struct ua_sc_config *cfg,
           const struct ua_sc_mem *mem, uint32_t channel_id)
{
    memset(ch, 0, sizeof(*ch));
    ch->state = UA_SC_FRESH;
    ch->cfg = cfg;
    if (mem != NULL)
        ch->mem = *mem;
    ch->channel_id = channel_id;
    ch->next_token_id = 1;
}

void
ua_sc_clear(struct ua_sc *ch)
{
    ua_sc_asm_free(ch);
    ua_sc_opn_reset(ch);
    ua_crypto_key_clear(&ch->peer_key);
    ua_crypto_wipe(ch->peer_key_hash, sizeof(ch->peer_key_hash));
    ua_crypto_cipher_clear(&ch->cipher[0]);
    ua_crypto_cipher_clear(&ch->cipher[1]);
    ua_crypto_wipe(ch->client_nonce, sizeof(ch->client_nonce));
}

ua_status
ua_sc_frame(const struct ua_sc *ch, const uint8_t *p, size_t n,
            uint32_t *chunk)
{
    *chunk = 0;
    if (n < UA_TCP_HEADER)
        return UA_GOOD;
    return ua_sc_check_header(ch, p, chunk);
}

ua_status
ua_sc_process(struct ua_sc *ch, const uint8_t *chunk, size_t len,
              uint64_t now_ms, struct ua_sc_out *out, struct ua_sc_msg *msg)
{
    uint32_t  size;
    ua_status s;

    msg->len = 0;
    msg->body = NULL;
    msg->request_id = 0;
    ch->detail = UA_GOOD;
    if (ch->opn.step != UA_SC_STEP_NONE)    /* ua_sc_resume() first */
        return ua_sc_fail(ch, UA_BAD_INTERNAL_ERROR);
    /* A reassembled message lives until the next call. */
    if (ch->asm_buf != NULL && ch->asm_chunks == 0)
        ua_sc_asm_free(ch);
    if (len < UA_TCP_HEADER)
        return ua_sc_fail(ch, UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    s = ua_sc_check_header(ch, chunk, &size);
    if (s != UA_GOOD)
        return ua_sc_fail(ch, s);
    if (size != len)
        return ua_sc_fail(ch, UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    switch (chunk[0]) {
    case 'M':
        s = ua_sc_do_msg(ch, chunk, len, now_ms, msg);
        break;
    case 'H':
        s = ua_sc_do_hel(ch, chunk, len, out);
        break;
    case 'O':
        s = ua_sc_do_opn(ch, chunk, len, now_ms, out);
        break;
    default:
        s = ua_sc_do_clo(ch, chunk, len, now_ms);
        break;
    }
    if (s != UA_GOOD) {
        msg->len = 0;
        msg->body = NULL;
        return ua_sc_fail(ch, s);
    }
    return UA_GOOD;
}

ua_status
ua_sc_resume(struct ua_sc *ch, uint64_t now_ms, struct ua_sc_out *out)
{
    ua_status s;

    ch->detail = UA_GOOD;
    if (ch->opn.step == UA_SC_STEP_NONE || ch->state == UA_SC_CLOSED)
        return ua_sc_fail(ch, UA_BAD_INTERNAL_ERROR);
    s = ua_sc_opn_step(ch, now_ms, out);
    if (s != UA_GOOD)
        return ua_sc_fail(ch, s);
    return UA_GOOD;
}

/* ------------------------------------------------------------ HEL */

static ua_status
ua_sc_do_hel(struct ua_sc *ch, const uint8_t *c, size_t len,
             struct ua_sc_out *out)
{
    const struct ua_sc_config *cfg = ch->cfg;
    uint32_t                   rbuf, sbuf, maxmsg, maxchunks;
    int32_t                    ulen;
    uint8_t                   *p;

    if (len < UA_SC_HEL_FIXED)
        return UA_BAD_DECODING_ERROR;
    /* c + 8: ProtocolVersion, ignored: we speak 0, the client decides
     * whether that suits it (Part 6 §7.1.2.3). */
    rbuf = ua_sc_rd32(c + 12);
    sbuf = ua_sc_rd32(c + 16);
    maxmsg = ua_sc_rd32(c + 20);
    maxchunks = ua_sc_rd32(c + 24);
    ulen = (int32_t)ua_sc_rd32(c + 28);
    /* EndpointUrl < 4096 bytes (§7.1.2.3); a bad length is the same. */
    if (ulen < -1 || ulen >= UA_TCP_URL_MAX
        || (ulen > 0 && (size_t)ulen > len - UA_SC_HEL_FIXED))
        return UA_BAD_TCP_ENDPOINT_URL_INVALID;
    if (len != UA_SC_HEL_FIXED + (size_t)(ulen > 0 ? ulen : 0))
        return UA_BAD_DECODING_ERROR;
    /* Buffers of at least 8192 bytes (§7.1.2.3, non-ECC); a MaxMessageSize
     * that cannot hold one such chunk is refused too (docs/security.md
     * case 4). */
    if (rbuf < UA_TCP_MIN_BUFFER || sbuf < UA_TCP_MIN_BUFFER
        || (maxmsg != 0 && maxmsg < UA_TCP_MIN_BUFFER))
        return UA_BAD_CONNECTION_REJECTED;
    ch->send_buffer = cfg->send_buffer < rbuf ? cfg->send_buffer : rbuf;
    ch->recv_buffer = cfg->recv_buffer < sbuf ? cfg->recv_buffer : sbuf;
    ch->peer_max_message = maxmsg;
    ch->peer_max_chunks = maxchunks;
    if (ua_sc_room(out) < UA_SC_ACK_SIZE)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    p = out->buf + out->len;
    memcpy(p, "ACKF", 4);
    ua_sc_wr32(p + 4, UA_SC_ACK_SIZE);
    ua_sc_wr32(p + 8, 0);
    ua_sc_wr32(p + 12, ch->recv_buffer);
    ua_sc_wr32(p + 16, ch->send_buffer);
    ua_sc_wr32(p + 20, cfg->max_message);
    ua_sc_wr32(p + 24, cfg->max_chunks);
    out->len += UA_SC_ACK_SIZE;
    ch->state = UA_SC_ACKED;
    return UA_GOOD;
}

/* ------------------------------------------------------------ OPN */

static ua_status
ua_sc_do_opn(struct ua_sc *ch, const uint8_t *c, size_t len,
             uint64_t now_ms, struct ua_sc_out *out)
{
    static const char                     policy[] = UA_SC_POLICY_NONE;
    const size_t                          plen = sizeof(policy) - 1;
    struct ua_open_secure_channel_request req;
    struct ua_open_secure_channel_response resp;
    struct ua_arena                       a;
    uint8_t                               abuf[UA_SC_OPN_ARENA];
    uint32_t channel, seq, request_id, type_id, lifetime, token;
    size_t   off = 12, used, n, room, hdr;
    int32_t  l;
    uint8_t *p;
    ua_status s;

    if (len < 12 + UA_SC_ASYM_FIXED + 8)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (ch->asm_chunks != 0)        /* inside a multi-chunk MSG */
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    channel = ua_sc_rd32(c + 8);
    /* Asymmetric security header (§6.7.2.3). */
    l = (int32_t)ua_sc_rd32(c + off);
    off += 4;
    if (l < -1 || l > UA_SC_POLICY_URI_MAX || (l > 0 && (size_t)l > len - off))
        return UA_BAD_DECODING_ERROR;
    if (l != (int32_t)plen || memcmp(c + off, policy, plen) != 0) {
        const struct ua_policy *sp;

        sp = ua_crypto_policy_find(c + off, l > 0 ? (size_t)l : 0);
        if (sp == NULL || ua_crypto_policy_is_none(sp))
            return UA_BAD_SECURITY_POLICY_REJECTED;
        /* Decrypted in place: the caller's buffer (securechannel.h). */
        return ua_sc_opn_secure(ch, sp, (uint8_t *)(uintptr_t)c, len, now_ms,
                                out);
    }
    if (!ua_sc_none_ok(ch))
        return UA_BAD_SECURITY_POLICY_REJECTED;
    off += plen;
    for (int i = 0; i < 2; i++) {   /* SenderCertificate, Thumbprint */
        if (len - off < 4)
            return UA_BAD_DECODING_ERROR;
        l = (int32_t)ua_sc_rd32(c + off);
        off += 4;
        if (l < -1 || (l > 0 && (size_t)l > len - off))
            return UA_BAD_DECODING_ERROR;
        /* None: certificates are not used, whatever the client sent. */
        if (l > 0)
            off += (size_t)l;
    }
    if (len - off < 8)
        return UA_BAD_DECODING_ERROR;
    seq = ua_sc_rd32(c + off);
    request_id = ua_sc_rd32(c + off + 4);
    off += 8;
    s = ua_nodeid_ns0_get(c + off, len - off, &used, &type_id);
    if (s != UA_GOOD)
        return s;
    if (type_id != UA_NS0ID_OPENSECURECHANNELREQUEST_ENCODING_DEFAULTBINARY)
        return UA_BAD_DECODING_ERROR;
    off += used;
    ua_arena_init(&a, abuf, sizeof(abuf));
    s = ua_decode(c + off, len - off, &used, &req,
                  &ua_types[UA_TYPE_OPENSECURECHANNELREQUEST], &a,
                  &ch->cfg->limits);
    if (s != UA_GOOD)
        return UA_BAD_DECODING_ERROR;
    if (used != len - off)          /* None: no padding, no signature */
        return UA_BAD_DECODING_ERROR;
    if (req.security_mode != UA_MESSAGESECURITYMODE_NONE)
        return UA_BAD_SECURITY_MODE_REJECTED;
    if (req.request_type == UA_SECURITYTOKENREQUESTTYPE_ISSUE) {
        /* One Issue per connection (docs/security.md case 26); the channel id
         * of an Issue is 0 (Part 6 §6.7.2.2). */
        if (ch->state != UA_SC_ACKED)
            return UA_BAD_REQUEST_TYPE_INVALID;
        if (channel != 0)
            return UA_BAD_SECURE_CHANNEL_ID_INVALID;
    } else if (req.request_type == UA_SECURITYTOKENREQUESTTYPE_RENEW) {
        if (ch->state != UA_SC_OPEN)
            return UA_BAD_REQUEST_TYPE_INVALID;
        if (channel != ch->channel_id)
            return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    } else {
        return UA_BAD_REQUEST_TYPE_INVALID;
    }
    s = ua_sc_seq_check(ch, seq);
    if (s != UA_GOOD)
        return s;

    lifetime = ua_sc_lifetime(ch, req.requested_lifetime);
    token = ch->next_token_id++;
    if (ch->next_token_id == 0)
        ch->next_token_id = 1;

    memset(&resp, 0, sizeof(resp));
    resp.response_header.timestamp = ua_sc_now_dt(ch);
    resp.response_header.request_handle = req.request_header.request_handle;
    resp.response_header.service_result = UA_GOOD;
    resp.response_header.n_string_table = 0;
    resp.server_protocol_version = 0;
    resp.security_token.channel_id = ch->channel_id;
    resp.security_token.token_id = token;
    resp.security_token.created_at = ua_sc_now_dt(ch);
    resp.security_token.revised_lifetime = lifetime;
    resp.server_nonce.len = 0;      /* None: no nonce */
    resp.server_nonce.data = NULL;

    /* The response: one 'F' chunk with the same asymmetric header. */
    hdr = 12 + 4 + plen + 4 + 4 + 8;
    room = ua_sc_room(out);
    if (room < hdr + 7)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    p = out->buf + out->len;
    memcpy(p, "OPNF", 4);
    ua_sc_wr32(p + 8, ch->channel_id);
    ua_sc_wr32(p + 12, (uint32_t)plen);
    memcpy(p + 16, policy, plen);
    ua_sc_wr32(p + 16 + plen, 0xFFFFFFFFu);     /* no certificate */
    ua_sc_wr32(p + 20 + plen, 0xFFFFFFFFu);     /* no thumbprint */
    ua_sc_wr32(p + 24 + plen, ch->send_seq + 1);
    ua_sc_wr32(p + 28 + plen, request_id);
    off = hdr;
    off += ua_nodeid_ns0_put(
        p + off, UA_NS0ID_OPENSECURECHANNELRESPONSE_ENCODING_DEFAULTBINARY);
    s = ua_encode(&resp, &ua_types[UA_TYPE_OPENSECURECHANNELRESPONSE],
                  p + off, room - off, &n);
    if (s != UA_GOOD)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    off += n;
    if (off > ch->send_buffer)
        return UA_BAD_TCP_INTERNAL_ERROR;
    ua_sc_wr32(p + 4, (uint32_t)off);
    out->len += off;
    ch->send_seq++;
    ua_sc_token_commit(ch, token, lifetime, now_ms);
    return UA_GOOD;
}

/*
 * An OPN under an RSA policy p: an Issue while ACKED, a Renew while OPEN
 * (the request type must agree, once it can be read).  Checks in the order
 * of Part 6 §6.7.6, the cheap public ones before any private-key work, so
 * an untrusted or malformed sender costs no RSA decryption.  c is the
 * caller's chunk, decrypted in place.
 *
 * The private-key work is staged (docs/architecture.md §4): this call
 * does the checks and decrypts the first ciphertext block, then ch->opn
 * remembers where it is and ua_sc_resume() does one more private-key
 * operation per call:
 *
 *   process: checks, block 0 --> resume: block 1 .. n-1 (the last one also
 *   verifies the signature and reads the request) --> resume: the token,
 *   its keys, the response signed, sealed and committed.
 *
 * Nothing of the channel changes before the last step.
 */
static ua_status
ua_sc_opn_secure(struct ua_sc *ch, const struct ua_policy *p, uint8_t *c,
                 size_t len, uint64_t now_ms, struct ua_sc_out *out)
{
    const struct ua_sc_config *cfg = ch->cfg;
    const bool                 renew = ch->state == UA_SC_OPEN;
    struct ua_sc_opn          *o = &ch->opn;
    struct ua_sc_asym_hdr      h;
    struct ua_crypto_key      *peer;
    uint8_t                    ours[UA_SC_THUMB_LEN];
    size_t                     want;
    ua_status                  s;

    /* SecureChannelId first, then the policy (§6.7.6). */
    if (renew) {
        if (ua_sc_rd32(c + 8) != ch->channel_id)
            return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
        if (p != ch->policy)
            return UA_BAD_SECURITY_POLICY_REJECTED;
    } else if (ua_sc_rd32(c + 8) != 0) {
        return UA_BAD_SECURE_CHANNEL_ID_INVALID;
    }
    if (!ua_sc_offered(cfg, p, 0))
        return UA_BAD_SECURITY_POLICY_REJECTED;
    s = ua_sc_asym_parse(c, len, &h);
    if (s != UA_GOOD)
        return s;
    /* Both present when the mode is not None (§6.7.4). */
    if (h.cert == NULL)
        return ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                          UA_BAD_CERTIFICATE_INVALID);
    ua_sc_opn_reset(ch);
    if (ua_crypto_hash(UA_HASH_SHA256, h.cert, h.cert_len, o->hash)
            != UA_GOOD
        || ua_crypto_hash(UA_HASH_SHA1, cfg->cert, cfg->cert_len, ours)
               != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    /* A Renew comes from the certificate that made the channel. */
    if (renew && !ua_crypto_memeq(o->hash, ch->peer_hash, sizeof(o->hash)))
        return ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                          UA_BAD_CERTIFICATE_INVALID);
    /* It was encrypted for our certificate (§6.7.6, 1.05.06). */
    if (h.thumb_len != UA_SC_THUMB_LEN
        || !ua_crypto_memeq(h.thumb, ours, sizeof(ours)))
        return UA_BAD_CERTIFICATE_INVALID;
    if (ua_sc_leaf_thumbprint(h.cert, h.cert_len, o->leaf) != UA_GOOD)
        return ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                          UA_BAD_CERTIFICATE_INVALID);

    peer = ua_sc_peer_key_load(ch, h.cert, h.cert_len);
    if (peer == NULL) {
        s = ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                       UA_BAD_CERTIFICATE_INVALID);
        goto done;
    }
    if (!ua_crypto_policy_key_ok(p, ua_crypto_key_bits(peer))) {
        s = ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                       UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
        goto done;
    }
    /* Trust and the rest of Part 4 §6.1.3, at Issue and at every Renew
     * (Part 4 §6.1.7).  No hook: nothing is trusted. */
    s = cfg->validate != NULL
            ? cfg->validate(cfg->validate_ctx, h.cert, h.cert_len, p)
            : UA_BAD_CERTIFICATE_UNTRUSTED;
    if (s != UA_GOOD) {
        s = ua_sc_deny(ch, ua_sc_cert_wire(s),
                       UA_STATUS_IS_BAD(s) ? s : UA_BAD_CERTIFICATE_UNTRUSTED);
        goto done;
    }
    /* What the length alone tells, before any private-key work. */
    if (ua_sc_asym_want(p, cfg->key, peer, h.end, len, &want) != UA_GOOD) {
        s = ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                       UA_BAD_SECURITY_CHECKS_FAILED);
        goto done;
    }
    o->step = UA_SC_STEP_DECRYPT;
    o->policy = p;
    o->chunk = c;
    o->len = len;
    o->hdr = h.end;
    s = ua_sc_opn_step(ch, now_ms, out);
done:
    return s;
}

unsigned long ua_sc_peer_key_parses;

/*
 * The public key of the staged OPN's SenderCertificate (SHA-256 in
 * ch->opn.hash): the channel's own when it was parsed from those bytes (a
 * Renew), else parsed now into ch->peer_key.  NULL: not an RSA
 * certificate.
 */
static struct ua_crypto_key *
ua_sc_peer_key_load(struct ua_sc *ch, const uint8_t *cert, size_t len)
{
    struct ua_crypto_key *k = ua_sc_peer_key_staged(ch);

    if (k != NULL)
        return k;
    ua_crypto_wipe(ch->peer_key_hash, sizeof(ch->peer_key_hash));
    ua_sc_peer_key_parses++;
    if (ua_crypto_key_from_cert(&ch->peer_key, cert, len) != UA_GOOD) {
        ua_crypto_key_clear(&ch->peer_key);
        return NULL;
    }
    memcpy(ch->peer_key_hash, ch->opn.hash, sizeof(ch->peer_key_hash));
    return &ch->peer_key;
}

/* The key of the staged OPN's sender, loaded by ua_sc_peer_key_load. */
static struct ua_crypto_key *
ua_sc_peer_key_staged(struct ua_sc *ch)
{
    if (ua_crypto_key_bits(&ch->peer_key) == 0
        || !ua_crypto_memeq(ch->peer_key_hash, ch->opn.hash,
                            sizeof(ch->peer_key_hash)))
        return NULL;
    return &ch->peer_key;
}

struct ua_crypto_key *
ua_sc_peer_key(struct ua_sc *ch)
{
    if (ch->state != UA_SC_OPEN || ua_crypto_policy_is_none(ch->policy)
        || ua_crypto_key_bits(&ch->peer_key) == 0
        || !ua_crypto_memeq(ch->peer_key_hash, ch->peer_hash,
                            sizeof(ch->peer_key_hash)))
        return NULL;
    return &ch->peer_key;
}

/* Forget a staged OPN (its client nonce wiped). */
static void
ua_sc_opn_reset(struct ua_sc *ch)
{
    ua_crypto_wipe(&ch->opn, sizeof(ch->opn));
}

/*
 * One step of a staged OPN: exactly one RSA private-key operation.
 * UA_GOOD with ch->opn.step set: more to do (ua_sc_resume); UA_GOOD with
 * it clear: the response is in out and the token committed; Bad: refuse
 * (the caller closes the channel).
 */
static ua_status
ua_sc_opn_step(struct ua_sc *ch, uint64_t now_ms, struct ua_sc_out *out)
{
    const struct ua_sc_config *cfg = ch->cfg;
    struct ua_sc_opn          *o = &ch->opn;
    const size_t               eb = ua_crypto_key_bytes(cfg->key);
    bool                       bad = o->bad != 0;
    ua_status                  s;

    switch (o->step) {
    case UA_SC_STEP_DECRYPT:
        if (eb == 0
            || ua_crypto_rsa_decrypt_block(cfg->key,
                                           (enum ua_rsa_enc)o->policy->asym_enc,
                                           o->chunk + o->hdr, o->len - o->hdr,
                                           o->block, &o->plain, &bad)
                   != UA_GOOD) {
            s = UA_BAD_INTERNAL_ERROR;
            break;
        }
        o->bad = bad;
        o->block++;
        if (o->block < (o->len - o->hdr) / eb)
            return UA_GOOD;
        s = ua_sc_opn_request(ch);
        if (s == UA_GOOD) {
            o->step = UA_SC_STEP_ANSWER;
            return UA_GOOD;
        }
        break;
    case UA_SC_STEP_ANSWER:
        s = ua_sc_opn_commit(ch, now_ms, out);
        break;
    default:
        s = UA_BAD_INTERNAL_ERROR;
        break;
    }
    ua_sc_opn_reset(ch);
    return s;
}

/*
 * Every block decrypted: the signature, the padding, the sequence number,
 * then the request (mode, type, nonce), kept in ch->opn for the answer.
 */
static ua_status
ua_sc_opn_request(struct ua_sc *ch)
{
    const struct ua_sc_config             *cfg = ch->cfg;
    const bool                             renew = ch->state == UA_SC_OPEN;
    struct ua_sc_opn                      *o = &ch->opn;
    const struct ua_policy                *p = o->policy;
    struct ua_open_secure_channel_request  req;
    struct ua_crypto_key                  *peer;
    struct ua_arena                        a;
    uint8_t   abuf[UA_SC_OPN_ARENA];
    uint8_t  *c;
    uint32_t  type_id;
    size_t    blen, used, n, want;
    uint8_t   z = 0;
    ua_status s;

    /* The sender's key, parsed when the OPN was accepted. */
    peer = ua_sc_peer_key_staged(ch);
    if (peer == NULL
        || ua_sc_asym_want(p, cfg->key, peer, o->hdr, o->len, &want)
               != UA_GOOD) {
        s = UA_BAD_INTERNAL_ERROR;
        goto done;
    }
    /* Signature and padding: one status, the same work (no oracle). */
    if (ua_sc_asym_finish(p, cfg->key, peer, o->chunk, o->hdr, o->len,
                          want, o->plain, o->bad != 0, &blen) != UA_GOOD) {
        s = ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                       UA_BAD_SECURITY_CHECKS_FAILED);
        goto done;
    }
    c = o->chunk;
    /* Authentic now: the sequence number (a replay is a security
     * failure on a secured channel, docs/security.md case 30). */
    if (ua_sc_seq_check(ch, ua_sc_rd32(c + o->hdr)) != UA_GOOD) {
        s = ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                       UA_BAD_SEQUENCE_NUMBER_INVALID);
        goto done;
    }
    o->request_id = ua_sc_rd32(c + o->hdr + 4);
    c += o->hdr + 8;
    s = ua_nodeid_ns0_get(c, blen, &used, &type_id);
    if (s != UA_GOOD)
        goto done;
    if (type_id != UA_NS0ID_OPENSECURECHANNELREQUEST_ENCODING_DEFAULTBINARY) {
        s = UA_BAD_DECODING_ERROR;
        goto done;
    }
    ua_arena_init(&a, abuf, sizeof(abuf));
    s = ua_decode(c + used, blen - used, &n, &req,
                  &ua_types[UA_TYPE_OPENSECURECHANNELREQUEST], &a,
                  &cfg->limits);
    if (s != UA_GOOD || n != blen - used) {
        s = UA_BAD_DECODING_ERROR;
        goto done;
    }
    /* Sign or SignAndEncrypt, offered; a Renew keeps the mode. */
    if ((req.security_mode != UA_MESSAGESECURITYMODE_SIGN
         && req.security_mode != UA_MESSAGESECURITYMODE_SIGNANDENCRYPT)
        || !ua_sc_offered(cfg, p, (uint8_t)req.security_mode)
        || (renew && req.security_mode != ch->mode)) {
        s = UA_BAD_SECURITY_MODE_REJECTED;
        goto done;
    }
    if (req.request_type != (renew ? UA_SECURITYTOKENREQUESTTYPE_RENEW
                                   : UA_SECURITYTOKENREQUESTTYPE_ISSUE)) {
        s = UA_BAD_REQUEST_TYPE_INVALID;
        goto done;
    }
    /* SecureChannelNonceLength exactly, not all zeros, and on a Renew not
     * the previous one (docs/security.md cases 25, 27). */
    if (req.client_nonce.len != p->nonce_len) {
        s = UA_BAD_NONCE_INVALID;
        goto done;
    }
    for (size_t i = 0; i < p->nonce_len; i++)
        z |= req.client_nonce.data[i];
    if (z == 0 || (renew && ua_crypto_memeq(req.client_nonce.data,
                                            ch->client_nonce,
                                            p->nonce_len))) {
        s = UA_BAD_NONCE_INVALID;
        goto done;
    }
    o->mode = (uint8_t)req.security_mode;
    o->lifetime = req.requested_lifetime;
    o->request_handle = req.request_header.request_handle;
    memcpy(o->nonce, req.client_nonce.data, p->nonce_len);
    s = UA_GOOD;
done:
    return s;
}

/*
 * The last step: the token and its keys (§6.7.5), built once into the
 * free cipher slot, the response signed with our key and encrypted with
 * the sender's, then the channel's state committed.
 */
static ua_status
ua_sc_opn_commit(struct ua_sc *ch, uint64_t now_ms, struct ua_sc_out *out)
{
    const bool                             renew = ch->state == UA_SC_OPEN;
    struct ua_sc_opn                      *o = &ch->opn;
    const struct ua_policy                *p = o->policy;
    struct ua_open_secure_channel_response resp;
    struct ua_crypto_key                  *peer;
    struct ua_sym_keys                     ck, sk;
    uint8_t   snonce[UA_NONCE_MAX];
    uint32_t  lifetime, token;
    unsigned  slot;
    ua_status s;

    peer = ua_sc_peer_key_staged(ch);
    if (peer == NULL) {
        s = UA_BAD_INTERNAL_ERROR;
        goto done;
    }
    lifetime = ua_sc_lifetime(ch, o->lifetime);
    token = ch->next_token_id++;
    if (ch->next_token_id == 0)
        ch->next_token_id = 1;
    if (ua_crypto_random(snonce, p->nonce_len) != UA_GOOD) {
        s = UA_BAD_INTERNAL_ERROR;
        goto done;
    }
    slot = renew ? 1u - ch->cipher_cur : 0;
    s = ua_crypto_channel_keys(p, o->nonce, p->nonce_len, snonce,
                               p->nonce_len, &ck, &sk);
    if (s == UA_GOOD)
        s = ua_crypto_cipher_init(&ch->cipher[slot], p, &sk, &ck);
    ua_crypto_sym_keys_clear(&ck);
    ua_crypto_sym_keys_clear(&sk);
    if (s != UA_GOOD) {
        s = UA_BAD_INTERNAL_ERROR;
        goto done;
    }

    memset(&resp, 0, sizeof(resp));
    resp.response_header.timestamp = ua_sc_now_dt(ch);
    resp.response_header.request_handle = o->request_handle;
    resp.response_header.service_result = UA_GOOD;
    resp.security_token.channel_id = ch->channel_id;
    resp.security_token.token_id = token;
    resp.security_token.created_at = ua_sc_now_dt(ch);
    resp.security_token.revised_lifetime = lifetime;
    resp.server_nonce.len = p->nonce_len;
    resp.server_nonce.data = snonce;
    s = ua_sc_opn_answer(ch, p, peer, o->leaf, o->request_id, &resp, out);
    if (s != UA_GOOD)
        goto done;

    /* Commit: the channel's security is fixed by the Issue. */
    if (!renew) {
        ch->policy = p;
        ch->mode = o->mode;
        memcpy(ch->peer_hash, o->hash, sizeof(o->hash));
        memcpy(ch->peer_thumb, o->leaf, sizeof(o->leaf));
    }
    memcpy(ch->client_nonce, o->nonce, p->nonce_len);
    ua_sc_token_commit(ch, token, lifetime, now_ms);
    ch->cipher_cur = (uint8_t)slot;
done:
    ua_crypto_wipe(snonce, sizeof(snonce));
    return s;
}

/*
 * Append the OPN response r to out: our certificate, the client's leaf
 * thumbprint, signed with our key, encrypted with the client's (peer).
 */
static ua_status
ua_sc_opn_answer(struct ua_sc *ch, const struct ua_policy *p,
                 struct ua_crypto_key *peer, const uint8_t *thumb,
                 uint32_t request_id,
                 struct ua_open_secure_channel_response *r,
                 struct ua_sc_out *out)
{
    const struct ua_sc_config *cfg = ch->cfg;
    const size_t               ulen = strlen(p->uri);
    const size_t               hdr = 12 + 4 + ulen + 4 + cfg->cert_len + 4
                                     + UA_SC_THUMB_LEN;
    size_t                     room = ua_sc_room(out), n, nid, size;
    uint8_t                   *o;
    ua_status                  s;

    if (room < hdr + 8 + 7)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    o = out->buf + out->len;
    memcpy(o, "OPNF", 4);
    ua_sc_wr32(o + 8, ch->channel_id);
    ua_sc_wr32(o + 12, (uint32_t)ulen);
    memcpy(o + 16, p->uri, ulen);
    ua_sc_wr32(o + 16 + ulen, (uint32_t)cfg->cert_len);
    memcpy(o + 20 + ulen, cfg->cert, cfg->cert_len);
    ua_sc_wr32(o + 20 + ulen + cfg->cert_len, UA_SC_THUMB_LEN);
    memcpy(o + 24 + ulen + cfg->cert_len, thumb, UA_SC_THUMB_LEN);
    ua_sc_wr32(o + hdr, ch->send_seq + 1);
    ua_sc_wr32(o + hdr + 4, request_id);
    nid = ua_nodeid_ns0_put(
        o + hdr + 8, UA_NS0ID_OPENSECURECHANNELRESPONSE_ENCODING_DEFAULTBINARY);
    s = ua_encode(r, &ua_types[UA_TYPE_OPENSECURECHANNELRESPONSE],
                  o + hdr + 8 + nid, room - hdr - 8 - nid, &n);
    if (s != UA_GOOD)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    size = ua_sc_asym_chunk_size(p, ua_crypto_key_bytes(cfg->key),
                                 ua_crypto_key_bits(peer), hdr, nid + n);
    if (size == 0 || size > ch->send_buffer)
        return UA_BAD_TCP_INTERNAL_ERROR;
    if (size > room)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    s = ua_sc_asym_seal(p, cfg->key, peer, o, hdr, nid + n, room, &size);
    if (s != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    out->len += size;
    ch->send_seq++;
    return UA_GOOD;
}

/* ------------------------------------------------------------ MSG */

/*
 * The checks every MSG and CLO chunk gets, in the order of Part 6 §6.7.6:
 * SecureChannelId, TokenId, then on a secured channel decryption,
 * signature and padding (in place, under that token's keys), then the
 * sequence number.  *blen = the body length at c + 24.
 */
static ua_status
ua_sc_sym_check(struct ua_sc *ch, const uint8_t *c, size_t len,
                uint64_t now_ms, size_t *blen)
{
    unsigned  slot = 0;
    ua_status s;

    if (len < UA_SC_SYM_HEADER)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (ua_sc_rd32(c + 8) != ch->channel_id)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    s = ua_sc_token_check(ch, ua_sc_rd32(c + 12), now_ms, &slot);
    if (s != UA_GOOD)
        return s;
    if (!ua_sc_secured(ch)) {
        s = ua_sc_seq_check(ch, ua_sc_rd32(c + 16));
        if (s != UA_GOOD)
            return s;
        *blen = len - UA_SC_SYM_HEADER;
        return UA_GOOD;
    }
    /* Decrypted in place: the caller's buffer (securechannel.h). */
    if (ua_sc_sym_open(&ch->cipher[slot], ch->mode, (uint8_t *)(uintptr_t)c,
                       len, blen) != UA_GOOD)
        return ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                          UA_BAD_SECURITY_CHECKS_FAILED);
    if (ua_sc_seq_check(ch, ua_sc_rd32(c + 16)) != UA_GOOD)
        return ua_sc_deny(ch, UA_BAD_SECURITY_CHECKS_FAILED,
                          UA_BAD_SEQUENCE_NUMBER_INVALID);
    return UA_GOOD;
}

static ua_status
ua_sc_do_msg(struct ua_sc *ch, const uint8_t *c, size_t len,
             uint64_t now_ms, struct ua_sc_msg *msg)
{
    uint32_t  request_id;
    size_t    blen;
    ua_status s;

    if (ch->state != UA_SC_OPEN)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    s = ua_sc_sym_check(ch, c, len, now_ms, &blen);
    if (s != UA_GOOD)
        return s;
    request_id = ua_sc_rd32(c + 20);

    if (c[3] == 'A') {
        /* Abort (§6.7.3): drop the partial message, keep the channel.
         * Body: Error + Reason, read by nobody. */
        if (ch->asm_chunks != 0 && request_id != ch->asm_request_id)
            return UA_BAD_SECURITY_CHECKS_FAILED;
        ua_sc_asm_free(ch);
        return UA_GOOD;
    }
    if (ch->asm_chunks != 0 && request_id != ch->asm_request_id)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    if (c[3] == 'F' && ch->asm_chunks == 0) {
        /* The common case: one chunk, handed out in place. */
        if (ch->cfg->max_message != 0 && blen > ch->cfg->max_message)
            return UA_BAD_TCP_MESSAGE_TOO_LARGE;
        msg->request_id = request_id;
        msg->body = c + UA_SC_SYM_HEADER;
        msg->len = blen;
        if (blen == 0)              /* an empty request cannot be served */
            return UA_BAD_DECODING_ERROR;
        return UA_GOOD;
    }
    s = ua_sc_asm_append(ch, c + UA_SC_SYM_HEADER, blen);
    if (s != UA_GOOD)
        return s;
    ch->asm_request_id = request_id;
    if (c[3] == 'C')
        return UA_GOOD;
    /* 'F': complete; the buffer is released on the next call. */
    ch->asm_chunks = 0;
    msg->request_id = request_id;
    msg->body = ch->asm_buf;
    msg->len = ch->asm_len;
    if (msg->len == 0)
        return UA_BAD_DECODING_ERROR;
    return UA_GOOD;
}

/*
 * Append n body bytes to the message being reassembled.  MaxChunkCount and
 * MaxMessageSize (ours) are checked on the running totals before anything
 * is copied or allocated.
 */
static ua_status
ua_sc_asm_append(struct ua_sc *ch, const uint8_t *p, size_t n)
{
    const struct ua_sc_config *cfg = ch->cfg;
    size_t                     need = ch->asm_len + n;

    if (cfg->max_chunks != 0 && ch->asm_chunks >= cfg->max_chunks)
        return UA_BAD_TCP_MESSAGE_TOO_LARGE;
    if (need < ch->asm_len
        || (cfg->max_message != 0 && need > cfg->max_message))
        return UA_BAD_TCP_MESSAGE_TOO_LARGE;
    if (need > ch->asm_cap) {
        size_t   cap = ch->asm_cap;
        uint8_t *nb;

        if (cap == 0)
            cap = 4 * (size_t)ch->recv_buffer;
        if (cap < UA_TCP_MIN_BUFFER)
            cap = UA_TCP_MIN_BUFFER;

        while (cap < need) {
            if (cap > SIZE_MAX / 2)
                return UA_BAD_TCP_MESSAGE_TOO_LARGE;
            cap *= 2;
        }
        if (cfg->max_message != 0 && cap > cfg->max_message)
            cap = cfg->max_message;
        if (ch->mem.alloc == NULL)
            return UA_BAD_TCP_NOT_ENOUGH_RESOURCES;
        nb = ch->mem.alloc(ch->mem.ctx, cap);
        if (nb == NULL)
            return UA_BAD_TCP_NOT_ENOUGH_RESOURCES;
        if (ch->asm_len != 0)
            memcpy(nb, ch->asm_buf, ch->asm_len);
        if (ch->asm_buf != NULL && ch->mem.free != NULL)
            ch->mem.free(ch->mem.ctx, ch->asm_buf);
        ch->asm_buf = nb;
        ch->asm_cap = cap;
    }
    if (n != 0)
        memcpy(ch->asm_buf + ch->asm_len, p, n);
    ch->asm_len = need;
    ch->asm_chunks++;
    return UA_GOOD;
}

/* ------------------------------------------------------------ CLO */

static ua_status
ua_sc_do_clo(struct ua_sc *ch, const uint8_t *c, size_t len, uint64_t now_ms)
{
    uint32_t  type_id;
    size_t    used, blen;
    ua_status s;

    if (ch->state != UA_SC_OPEN)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    if (ch->asm_chunks != 0)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    s = ua_sc_sym_check(ch, c, len, now_ms, &blen);
    if (s != UA_GOOD)
        return s;
    s = ua_nodeid_ns0_get(c + UA_SC_SYM_HEADER, blen, &used, &type_id);
    if (s != UA_GOOD)
        return s;
    if (type_id != UA_NS0ID_CLOSESECURECHANNELREQUEST_ENCODING_DEFAULTBINARY)
        return UA_BAD_DECODING_ERROR;
    /* The body (a RequestHeader) changes nothing: the channel ends here,
     * without a response (Part 4 §5.5.3). */
    ch->state = UA_SC_CLOSED;
    ua_sc_asm_free(ch);
    return UA_GOOD;
}

/* ------------------------------------------------------------ send */

ua_status
ua_sc_send(struct ua_sc *ch, uint32_t request_id, const struct ua_type *t,
           const void *resp, struct ua_sc_out *out)
{
    const struct ua_policy *pol = ch->policy;
    const uint8_t           mode = ua_sc_secured(ch)
                                       ? ch->mode : UA_MESSAGESECURITYMODE_NONE;
    size_t                  room = ua_sc_room(out);
    size_t maxb, full, last, nid, n, total, nchunks, need, base, src, size;
    struct ua_cipher       *cipher = NULL;
    uint8_t                 idbuf[UA_NODEID_NS0_MAX];
    uint8_t                *p;
    uint32_t                token;
    ua_status               s;

    if (ch->state != UA_SC_OPEN)
        return UA_BAD_SECURE_CHANNEL_CLOSED;
    if (t->binary_id == 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    maxb = ua_sc_sym_max_body(pol, mode, ch->send_buffer);
    if (maxb < 8)
        return UA_BAD_TCP_INTERNAL_ERROR;
    token = ua_sc_send_token(ch);
    if (mode != UA_MESSAGESECURITYMODE_NONE)
        cipher = ua_sc_send_cipher(ch);
    nid = ua_nodeid_ns0_put(idbuf, t->binary_id);
    /* Bytes a chunk adds to its body: the header, and the footer of a
     * full chunk (a chunk of maxb needs no padding). */
    full = ua_sc_sym_chunk_size(pol, mode, maxb) - maxb;

    /* Try one chunk, encoded straight into out. */
    if (room >= full + nid) {
        size_t cap = room - full;

        if (cap > maxb)
            cap = maxb;
        p = out->buf + out->len;
        (void)ua_nodeid_ns0_put(p + UA_SC_SYM_HEADER, t->binary_id);
        s = ua_encode(resp, t, p + UA_SC_SYM_HEADER + nid, cap - nid, &n);
        if (s == UA_GOOD) {
            total = nid + n;
            if (ch->peer_max_message != 0 && total > ch->peer_max_message)
                return UA_BAD_RESPONSE_TOO_LARGE;
            /* The padding may want a few bytes more than `full`. */
            if (ua_sc_sym_chunk_size(pol, mode, total) > room)
                return UA_BAD_ENCODING_LIMITS_EXCEEDED;
            memcpy(p, "MSGF", 4);
            ua_sc_wr32(p + 8, ch->channel_id);
            ua_sc_wr32(p + 12, token);
            ua_sc_wr32(p + 16, ++ch->send_seq);
            ua_sc_wr32(p + 20, request_id);
            s = ua_sc_sym_seal(cipher, mode, p, total, &size);
            if (s != UA_GOOD)
                return s;
            out->len += size;
            return UA_GOOD;
        }
        if (s != UA_BAD_ENCODING_LIMITS_EXCEEDED || n == 0)
            return s;
    } else {
        n = ua_encoded_size(resp, t);
        if (n == 0)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    }

    /* Several chunks: n is the exact encoded size of the body. */
    total = nid + n;
    if (total <= maxb)      /* it fits one chunk but not in out */
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    if (ch->peer_max_message != 0 && total > ch->peer_max_message)
        return UA_BAD_RESPONSE_TOO_LARGE;
    nchunks = (total + maxb - 1) / maxb;
    if (ch->peer_max_chunks != 0 && nchunks > ch->peer_max_chunks)
        return UA_BAD_RESPONSE_TOO_LARGE;
    last = total - (nchunks - 1) * maxb;
    if (nchunks - 1 > (SIZE_MAX - total) / full)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    need = total + (nchunks - 1) * full
           + (ua_sc_sym_chunk_size(pol, mode, last) - last);
    if (need < total || room < need)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;

    /*
     * Encode the whole body at the far end of the space the chunks will
     * take (its end where the last chunk's body ends), then walk front to
     * back: each chunk's header, body and footer land before the bytes
     * still to be moved (every later chunk's header and footer lie in
     * between), so memmove and the in-place sealing never overwrite
     * anything that has yet to be read.
     */
    base = out->len;
    src = base + need - (ua_sc_sym_chunk_size(pol, mode, last) - last)
          + UA_SC_SYM_HEADER - total;
    (void)ua_nodeid_ns0_put(out->buf + src, t->binary_id);
    s = ua_encode(resp, t, out->buf + src + nid, n, &n);
    if (s != UA_GOOD)
        return s;
    for (size_t i = 0, left = total; i < nchunks; i++) {
        size_t b = left < maxb ? left : maxb;

        p = out->buf + base;
        memmove(p + UA_SC_SYM_HEADER, out->buf + src, b);
        memcpy(p, i + 1 == nchunks ? "MSGF" : "MSGC", 4);
        ua_sc_wr32(p + 8, ch->channel_id);
        ua_sc_wr32(p + 12, token);
        ua_sc_wr32(p + 16, ++ch->send_seq);
        ua_sc_wr32(p + 20, request_id);
        s = ua_sc_sym_seal(cipher, mode, p, b, &size);
        if (s != UA_GOOD)
            return s;
        base += size;
        src += b;
        left -= b;
    }
    out->len = base;
    return UA_GOOD;
}

size_t
ua_sc_send_size(const struct ua_sc *ch, const struct ua_type *t,
                const void *resp)
{
    const struct ua_policy *pol = ch->policy;
    const uint8_t           mode = ua_sc_secured(ch)
                                       ? ch->mode : UA_MESSAGESECURITYMODE_NONE;
    size_t                  maxb, total, nchunks, last;
    uint8_t                 idbuf[UA_NODEID_NS0_MAX];

    maxb = ua_sc_sym_max_body(pol, mode, ch->send_buffer);
    if (t->binary_id == 0 || maxb < 8)
        return 0;
    total = ua_encoded_size(resp, t);
    if (total == 0)
        return 0;
    total += ua_nodeid_ns0_put(idbuf, t->binary_id);
    nchunks = (total + maxb - 1) / maxb;
    last = total - (nchunks - 1) * maxb;
    return (nchunks - 1) * ua_sc_sym_chunk_size(pol, mode, maxb)
           + ua_sc_sym_chunk_size(pol, mode, last);
}

void
ua_sc_write_err(struct ua_sc_out *out, ua_status status, const char *reason)
{
    size_t   rlen = reason != NULL ? strlen(reason) : 0;
    size_t   room = ua_sc_room(out);
    uint8_t *p;

    if (room < UA_SC_ERR_FIXED)
        return;
    if (rlen > UA_SC_REASON_MAX)
        rlen = UA_SC_REASON_MAX;
    if (rlen > room - UA_SC_ERR_FIXED)
        rlen = room - UA_SC_ERR_FIXED;
    p = out->buf + out->len;
    memcpy(p, "ERRF", 4);
    ua_sc_wr32(p + 4, (uint32_t)(UA_SC_ERR_FIXED + rlen));
    ua_sc_wr32(p + 8, status);
    ua_sc_wr32(p + 12, reason != NULL ? (uint32_t)rlen : 0xFFFFFFFFu);
    if (rlen != 0)
        memcpy(p + 16, reason, rlen);
    out->len += UA_SC_ERR_FIXED + rlen;
}

uint64_t
ua_sc_deadline(const struct ua_sc *ch, uint64_t opened_ms, uint32_t hello_ms)
{
    uint64_t life = ch->token_lifetime_ms;

    switch (ch->state) {
    case UA_SC_FRESH:
    case UA_SC_ACKED:
        return opened_ms + hello_ms;
    case UA_SC_OPEN:
        return ch->token_created_ms + life + life / 4;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------ chunks */

size_t
ua_sc_sym_max_body(const struct ua_policy *p, uint8_t mode, size_t chunk_size)
{
    size_t sig;

    if (ua_crypto_policy_is_none(p) || mode < UA_MESSAGESECURITYMODE_SIGN)
        return chunk_size > UA_SC_SYM_HEADER ? chunk_size - UA_SC_SYM_HEADER
                                             : 0;
    sig = p->sym_sig_len;
    if (mode == UA_MESSAGESECURITYMODE_SIGN)
        return chunk_size > UA_SC_SYM_HEADER + sig
                   ? chunk_size - UA_SC_SYM_HEADER - sig : 0;
    /* Part 6 §6.7.2.5: whole blocks after the unencrypted 16 bytes, less
     * the sequence header, PaddingSize and the signature. */
    return ua_crypto_max_body(chunk_size, UA_SC_SEC_HEADER, sig,
                              p->sym_block_len, p->sym_block_len, false);
}

size_t
ua_sc_sym_chunk_size(const struct ua_policy *p, uint8_t mode, size_t body)
{
    size_t sig;

    if (ua_crypto_policy_is_none(p) || mode < UA_MESSAGESECURITYMODE_SIGN)
        return UA_SC_SYM_HEADER + body;
    sig = p->sym_sig_len;
    if (mode == UA_MESSAGESECURITYMODE_SIGN)
        return UA_SC_SYM_HEADER + body + sig;
    return UA_SC_SYM_HEADER + body + 1
           + ua_crypto_padding_len(8 + body, sig, p->sym_block_len, false)
           + sig;
}

ua_status
ua_sc_sym_seal(struct ua_cipher *c, uint8_t mode, uint8_t *chunk,
               size_t body, size_t *size)
{
    const struct ua_policy *p;
    size_t                  end = UA_SC_SYM_HEADER + body, total;

    if (mode < UA_MESSAGESECURITYMODE_SIGN) {
        ua_sc_wr32(chunk + 4, (uint32_t)end);
        *size = end;
        return UA_GOOD;
    }
    p = ua_crypto_cipher_policy(c);
    if (p == NULL)
        return UA_BAD_INTERNAL_ERROR;
    if (mode == UA_MESSAGESECURITYMODE_SIGNANDENCRYPT)
        end += ua_crypto_padding_write(
            chunk + end,
            ua_crypto_padding_len(8 + body, p->sym_sig_len, p->sym_block_len,
                                  false),
            false);
    total = end + p->sym_sig_len;
    if (total > UINT32_MAX)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    ua_sc_wr32(chunk + 4, (uint32_t)total);
    if (p->sym_sign(c, chunk, end, chunk + end) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    if (mode == UA_MESSAGESECURITYMODE_SIGNANDENCRYPT
        && p->sym_encrypt(c, chunk + UA_SC_SEC_HEADER,
                          total - UA_SC_SEC_HEADER) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    *size = total;
    return UA_GOOD;
}

ua_status
ua_sc_sym_open(struct ua_cipher *c, uint8_t mode, uint8_t *chunk, size_t len,
               size_t *body)
{
    const struct ua_policy *p = ua_crypto_cipher_policy(c);
    const bool              enc = mode == UA_MESSAGESECURITYMODE_SIGNANDENCRYPT;
    size_t                  sig, n, footer = 0;
    unsigned                bad;

    if (p == NULL || mode < UA_MESSAGESECURITYMODE_SIGN)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    sig = p->sym_sig_len;
    /* What the length alone tells (it is no secret): too short for a
     * header, PaddingSize and signature, or not whole blocks. */
    if (len < UA_SC_SYM_HEADER + (enc ? 1u : 0u) + sig
        || (enc && (len - UA_SC_SEC_HEADER) % p->sym_block_len != 0))
        return UA_BAD_SECURITY_CHECKS_FAILED;
    if (enc && p->sym_decrypt(c, chunk + UA_SC_SEC_HEADER,
                              len - UA_SC_SEC_HEADER) != UA_GOOD)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    /* The HMAC over everything before the signature, whatever the padding
     * says, then the padding: the same work for either failure. */
    bad = p->sym_verify(c, chunk, len - sig, chunk + len - sig) != UA_GOOD;
    n = len - sig - UA_SC_SYM_HEADER;
    if (enc) {
        bad |= ua_crypto_padding_check(chunk + UA_SC_SYM_HEADER, n, false,
                                       &footer) != UA_GOOD;
        if (bad)
            footer = 0;
    }
    if (bad)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    *body = n - footer;
    return UA_GOOD;
}

ua_status
ua_sc_asym_parse(const uint8_t *chunk, size_t len, struct ua_sc_asym_hdr *h)
{
    static const int32_t max[3] = { UA_SC_POLICY_URI_MAX, UA_SC_CERT_MAX,
                                    INT32_MAX };
    const uint8_t       *f[3] = { NULL, NULL, NULL };
    size_t               fl[3] = { 0, 0, 0 };
    size_t               off = 12;
    int32_t              l;

    memset(h, 0, sizeof(*h));
    for (int i = 0; i < 3; i++) {   /* policy, certificate, thumbprint */
        if (len < off || len - off < 4)
            return UA_BAD_DECODING_ERROR;
        l = (int32_t)ua_sc_rd32(chunk + off);
        off += 4;
        if (l < -1 || l > max[i] || (l > 0 && (size_t)l > len - off))
            return UA_BAD_DECODING_ERROR;
        if (l > 0) {
            f[i] = chunk + off;
            fl[i] = (size_t)l;
            off += (size_t)l;
        }
    }
    h->policy = f[0];
    h->policy_len = fl[0];
    h->cert = f[1];
    h->cert_len = fl[1];
    h->thumb = f[2];
    h->thumb_len = fl[2];
    h->end = off;
    return UA_GOOD;
}

size_t
ua_sc_asym_chunk_size(const struct ua_policy *p, size_t sign_bytes,
                      unsigned enc_bits, size_t hdr, size_t body)
{
    const bool extra = ua_crypto_padding_extra(enc_bits);
    size_t     eb = enc_bits / 8, pb, plain;

    if (ua_crypto_policy_is_none(p) || sign_bytes == 0)
        return 0;
    pb = ua_crypto_rsa_plain_block(p->asym_enc, eb);
    if (pb == 0)
        return 0;
    plain = 8 + body;
    plain += 1 + (extra ? 1u : 0u)
             + ua_crypto_padding_len(plain, sign_bytes, pb, extra)
             + sign_bytes;
    return hdr + ua_crypto_rsa_cipher_len(p->asym_enc, eb, plain);
}

ua_status
ua_sc_asym_seal(const struct ua_policy *p, struct ua_crypto_key *priv,
                struct ua_crypto_key *peer, uint8_t *chunk, size_t hdr,
                size_t body, size_t cap, size_t *size)
{
    const unsigned eb = ua_crypto_key_bits(peer);
    const bool     extra = ua_crypto_padding_extra(eb);
    const size_t   sb = ua_crypto_key_bytes(priv);
    size_t         pb, pad, end, total, sl, n;

    if (ua_crypto_policy_is_none(p) || sb == 0 || eb == 0)
        return UA_BAD_INVALID_ARGUMENT;
    pb = ua_crypto_rsa_plain_block(p->asym_enc, eb / 8);
    total = ua_sc_asym_chunk_size(p, sb, eb, hdr, body);
    if (pb == 0 || total == 0)
        return UA_BAD_INVALID_ARGUMENT;
    pad = ua_crypto_padding_len(8 + body, sb, pb, extra);
    end = hdr + 8 + body;
    /* The plaintext (up to the signature's end) and the ciphertext. */
    if (total > cap || end + pad + 2 + sb > cap || total > UINT32_MAX)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    end += ua_crypto_padding_write(chunk + end, pad, extra);
    ua_sc_wr32(chunk + 4, (uint32_t)total);
    if (p->asym_sign(priv, chunk, end, chunk + end, cap - end, &sl)
        != UA_GOOD || sl != sb)
        return UA_BAD_INTERNAL_ERROR;
    if (p->asym_encrypt(peer, chunk + hdr, end + sb - hdr, chunk + hdr,
                        cap - hdr, &n) != UA_GOOD
        || hdr + n != total)
        return UA_BAD_INTERNAL_ERROR;
    *size = total;
    return UA_GOOD;
}

/*
 * What the length of an OPN chunk alone tells, before any private-key
 * work: whole blocks of our key, room for the sequence header, the padding
 * sizes and the sender's signature.  *want = the plaintext bytes the
 * blocks hold.  UA_BAD_SECURITY_CHECKS_FAILED otherwise.
 */
static ua_status
ua_sc_asym_want(const struct ua_policy *p, struct ua_crypto_key *priv,
                struct ua_crypto_key *peer, size_t hdr, size_t len,
                size_t *want)
{
    const bool   extra = ua_crypto_padding_extra(ua_crypto_key_bits(priv));
    const size_t eb = ua_crypto_key_bytes(priv);
    const size_t sb = ua_crypto_key_bytes(peer);
    size_t       pb;

    if (ua_crypto_policy_is_none(p) || eb == 0 || sb == 0)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    pb = ua_crypto_rsa_plain_block(p->asym_enc, eb);
    if (pb == 0 || len <= hdr || (len - hdr) % eb != 0)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    *want = (len - hdr) / eb * pb;
    if (*want < 8 + 1 + (extra ? 1u : 0u) + sb)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    return UA_GOOD;
}

/*
 * Every block decrypted with priv (plain bytes packed after the header;
 * bad when one failed, then the blocks are wiped): the signature checked
 * with peer over what the blocks should hold even when decryption failed,
 * then the padding.  *body = the body length after the sequence header.
 */
static ua_status
ua_sc_asym_finish(const struct ua_policy *p, struct ua_crypto_key *priv,
                  struct ua_crypto_key *peer, uint8_t *chunk, size_t hdr,
                  size_t len, size_t want, size_t plain, bool bad,
                  size_t *body)
{
    const bool   extra = ua_crypto_padding_extra(ua_crypto_key_bits(priv));
    const size_t sb = ua_crypto_key_bytes(peer);
    size_t       footer = 0;
    unsigned     fail = bad;

    if (bad)
        ua_crypto_wipe(chunk + hdr, len - hdr);
    fail |= plain != want;
    fail |= p->asym_verify(peer, chunk, hdr + want - sb,
                           chunk + hdr + want - sb, sb) != UA_GOOD;
    fail |= ua_crypto_padding_check(chunk + hdr + 8, want - sb - 8, extra,
                                    &footer) != UA_GOOD;
    if (fail)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    *body = want - sb - 8 - footer;
    return UA_GOOD;
}

ua_status
ua_sc_asym_open(const struct ua_policy *p, struct ua_crypto_key *priv,
                struct ua_crypto_key *peer, uint8_t *chunk, size_t hdr,
                size_t len, size_t *body)
{
    const size_t eb = ua_crypto_key_bytes(priv);
    size_t       want, plain = 0;
    bool         bad = false;

    if (ua_sc_asym_want(p, priv, peer, hdr, len, &want) != UA_GOOD)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    for (size_t i = 0; i < (len - hdr) / eb; i++)
        if (ua_crypto_rsa_decrypt_block(priv, (enum ua_rsa_enc)p->asym_enc,
                                        chunk + hdr, len - hdr, i, &plain,
                                        &bad) != UA_GOOD)
            return UA_BAD_SECURITY_CHECKS_FAILED;
    return ua_sc_asym_finish(p, priv, peer, chunk, hdr, len, want, plain,
                             bad, body);
}

ua_status
ua_sc_leaf_thumbprint(const uint8_t *chain, size_t len,
                      uint8_t out[UA_SC_THUMB_LEN])
{
    size_t n = chain != NULL ? ua_sc_der_len(chain, len) : 0;

    if (n == 0)
        return UA_BAD_CERTIFICATE_INVALID;
    return ua_crypto_hash(UA_HASH_SHA1, chain, n, out) == UA_GOOD
               ? UA_GOOD : UA_BAD_INTERNAL_ERROR;
}
