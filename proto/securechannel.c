/*
 * proto/securechannel.c: server side of UACP (Part 6 §7.1) and of the
 * secure channel (Part 6 §6.7) for SecurityPolicy None, as a pure state
 * machine (see securechannel.h for the states and the statuses).
 *
 * Chunk layouts (all integers little-endian):
 *
 *   HEL  "HELF" size | version rbuf sbuf maxmsg maxchunks | String url
 *   ACK  "ACKF" size | version rbuf sbuf maxmsg maxchunks
 *   ERR  "ERRF" size | StatusCode | String reason
 *   OPN  "OPNF" size | channel | String policy, ByteString cert, ByteString
 *        thumbprint | seq reqid | NodeId 446/449 | Open...Request/Response
 *   MSG  "MSG"C/F/A size | channel | token | seq reqid | body
 *   CLO  "CLOF" size | channel | token | seq reqid | NodeId 452 | request
 *
 * A MSG body is the NodeId of the request's DefaultBinary encoding and the
 * request; an abort chunk's body is StatusCode + String reason.
 *
 * Tokens (Part 4 §5.5.2, Part 6 §6.7.4): a Renew makes a new token current
 * and keeps the old one as `prev` until the client first uses the new one
 * or the old one's lifetime ends.  The current token is accepted up to its
 * lifetime + 25 % (the same grace as ua_sc_deadline()).  Responses go out
 * under the old token while it is still pending, then under the new one.
 *
 * Hot path: a one-chunk MSG in is checked in place and handed out without
 * a copy; ua_sc_send() encodes a one-chunk response straight into out.
 * Nothing here allocates except reassembly of multi-chunk requests, through
 * ch->mem, bounded by MaxChunkCount and MaxMessageSize before each append
 * (SECURITY.md (a) class 1).
 */
#include "securechannel.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nodeids_gen.h"
#include "status_gen.h"
#include "types_gen.h"

#define UA_SC_ASYM_FIXED   12   /* three length fields of the asym header */
#define UA_SC_HEL_FIXED    32   /* header + 5 UInt32 + url length */
#define UA_SC_ACK_SIZE     28
#define UA_SC_ERR_FIXED    16   /* header + StatusCode + reason length */
#define UA_SC_OPN_ARENA    4096 /* request header extras of an OPN */

/* Table of contents. */
static inline uint32_t ua_sc_rd32(const uint8_t *p);
static inline void ua_sc_wr32(uint8_t *p, uint32_t v);
static inline int64_t ua_sc_now_dt(const struct ua_sc *ch);
static size_t ua_sc_overhead(const struct ua_sc *ch);
static inline size_t ua_sc_room(const struct ua_sc_out *out);
static ua_status ua_sc_check_header(const struct ua_sc *ch,
                                    const uint8_t *p, uint32_t *size);
static ua_status ua_sc_fail(struct ua_sc *ch, ua_status s);
static void ua_sc_asm_free(struct ua_sc *ch);
static ua_status ua_sc_seq_check(struct ua_sc *ch, uint32_t seq);
static ua_status ua_sc_token_check(struct ua_sc *ch, uint32_t token,
                                   uint64_t now_ms);
static size_t ua_sc_nodeid_put(uint8_t *p, uint32_t id);
static ua_status ua_sc_nodeid_get(const uint8_t *p, size_t n, size_t *used,
                                  uint32_t *id);
static ua_status ua_sc_do_hel(struct ua_sc *ch, const uint8_t *c, size_t len,
                              struct ua_sc_out *out);
static ua_status ua_sc_do_opn(struct ua_sc *ch, const uint8_t *c, size_t len,
                              uint64_t now_ms, struct ua_sc_out *out);
static ua_status ua_sc_do_msg(struct ua_sc *ch, const uint8_t *c, size_t len,
                              uint64_t now_ms, struct ua_sc_msg *msg);
static ua_status ua_sc_do_clo(struct ua_sc *ch, const uint8_t *c, size_t len,
                              uint64_t now_ms);
static ua_status ua_sc_asm_append(struct ua_sc *ch, const uint8_t *p,
                                  size_t n);
static uint32_t ua_sc_send_token(const struct ua_sc *ch);

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

/*
 * Bytes per chunk that the security policy adds after the body (padding
 * and signature).  None adds nothing; Sign/SignAndEncrypt will compute
 * theirs here, and every chunking decision goes through this one place.
 */
static size_t
ua_sc_overhead(const struct ua_sc *ch)
{
    (void)ch;
    return 0;
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
    ch->state = UA_SC_CLOSED;
    ua_sc_asm_free(ch);
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

/* The current token (with its grace) or the previous one while pending. */
static ua_status
ua_sc_token_check(struct ua_sc *ch, uint32_t token, uint64_t now_ms)
{
    uint64_t life = ch->token_lifetime_ms;

    if (ch->prev_token_id != 0 && now_ms > ch->prev_expires_ms)
        ch->prev_token_id = 0;      /* the old token has run out */
    if (token == ch->token_id) {
        if (now_ms > ch->token_created_ms + life + life / 4)
            return UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN;
        ch->prev_token_id = 0;      /* the client switched: drop the old */
        return UA_GOOD;
    }
    if (token != 0 && token == ch->prev_token_id)
        return UA_GOOD;
    return UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN;
}

/* The token responses go out under (Part 6 §6.7.4). */
static uint32_t
ua_sc_send_token(const struct ua_sc *ch)
{
    return ch->prev_token_id != 0 ? ch->prev_token_id : ch->token_id;
}

/* Numeric ns=0 NodeId in the smallest form: two-byte, four-byte, full. */
static size_t
ua_sc_nodeid_put(uint8_t *p, uint32_t id)
{
    if (id <= 0xFF) {
        p[0] = 0x00;
        p[1] = (uint8_t)id;
        return 2;
    }
    if (id <= 0xFFFF) {
        p[0] = 0x01;
        p[1] = 0;
        p[2] = (uint8_t)id;
        p[3] = (uint8_t)(id >> 8);
        return 4;
    }
    p[0] = 0x02;
    p[1] = 0;
    p[2] = 0;
    ua_sc_wr32(p + 3, id);
    return 7;
}

/* A numeric ns=0 NodeId in any of its three forms; others are refused. */
static ua_status
ua_sc_nodeid_get(const uint8_t *p, size_t n, size_t *used, uint32_t *id)
{
    if (n < 2)
        return UA_BAD_DECODING_ERROR;
    switch (p[0]) {
    case 0x00:
        *id = p[1];
        *used = 2;
        return UA_GOOD;
    case 0x01:
        if (n < 4 || p[1] != 0)
            return UA_BAD_DECODING_ERROR;
        *id = (uint32_t)p[2] | (uint32_t)p[3] << 8;
        *used = 4;
        return UA_GOOD;
    case 0x02:
        if (n < 7 || p[1] != 0 || p[2] != 0)
            return UA_BAD_DECODING_ERROR;
        *id = ua_sc_rd32(p + 3);
        *used = 7;
        return UA_GOOD;
    default:
        return UA_BAD_DECODING_ERROR;
    }
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
     * that cannot hold one such chunk is refused too (SECURITY.md (b) 4). */
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
    if (l != (int32_t)plen || memcmp(c + off, policy, plen) != 0)
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
    s = ua_sc_nodeid_get(c + off, len - off, &used, &type_id);
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
        /* One Issue per connection (SECURITY.md (b) 26); the channel id
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

    lifetime = req.requested_lifetime;
    if (lifetime < ch->cfg->min_lifetime_ms)
        lifetime = ch->cfg->min_lifetime_ms;
    if (ch->cfg->max_lifetime_ms != 0 && lifetime > ch->cfg->max_lifetime_ms)
        lifetime = ch->cfg->max_lifetime_ms;
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
    off += ua_sc_nodeid_put(
        p + off, UA_NS0ID_OPENSECURECHANNELRESPONSE_ENCODING_DEFAULTBINARY);
    s = ua_encode(&resp, &ua_types[UA_TYPE_OPENSECURECHANNELRESPONSE],
                  p + off, room - off, &n);
    if (s != UA_GOOD)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    off += n;
    if (off + ua_sc_overhead(ch) > ch->send_buffer)
        return UA_BAD_TCP_INTERNAL_ERROR;
    ua_sc_wr32(p + 4, (uint32_t)off);
    out->len += off;
    ch->send_seq++;

    /* Commit the token. */
    if (ch->state == UA_SC_OPEN) {
        ch->prev_token_id = ch->token_id;
        ch->prev_expires_ms = ch->token_created_ms + ch->token_lifetime_ms;
    }
    ch->token_id = token;
    ch->token_created_ms = now_ms;
    ch->token_lifetime_ms = lifetime;
    ch->state = UA_SC_OPEN;
    return UA_GOOD;
}

/* ------------------------------------------------------------ MSG */

static ua_status
ua_sc_do_msg(struct ua_sc *ch, const uint8_t *c, size_t len,
             uint64_t now_ms, struct ua_sc_msg *msg)
{
    uint32_t  request_id;
    size_t    blen;
    ua_status s;

    if (ch->state != UA_SC_OPEN)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    if (len < UA_SC_SYM_HEADER)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    /* §6.7.6 order: channel, token, then sequence and request ids. */
    if (ua_sc_rd32(c + 8) != ch->channel_id)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    s = ua_sc_token_check(ch, ua_sc_rd32(c + 12), now_ms);
    if (s != UA_GOOD)
        return s;
    s = ua_sc_seq_check(ch, ua_sc_rd32(c + 16));
    if (s != UA_GOOD)
        return s;
    request_id = ua_sc_rd32(c + 20);
    blen = len - UA_SC_SYM_HEADER - ua_sc_overhead(ch);

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
    size_t    used;
    ua_status s;

    if (ch->state != UA_SC_OPEN)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    if (ch->asm_chunks != 0)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (len < UA_SC_SYM_HEADER)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (ua_sc_rd32(c + 8) != ch->channel_id)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    s = ua_sc_token_check(ch, ua_sc_rd32(c + 12), now_ms);
    if (s != UA_GOOD)
        return s;
    s = ua_sc_seq_check(ch, ua_sc_rd32(c + 16));
    if (s != UA_GOOD)
        return s;
    s = ua_sc_nodeid_get(c + UA_SC_SYM_HEADER, len - UA_SC_SYM_HEADER, &used,
                         &type_id);
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
    const size_t over = ua_sc_overhead(ch);
    size_t       room = ua_sc_room(out);
    size_t       maxb, nid, n, total, nchunks, base, src;
    uint8_t      idbuf[8];
    uint8_t     *p;
    uint32_t     token;
    ua_status    s;

    if (ch->state != UA_SC_OPEN)
        return UA_BAD_SECURE_CHANNEL_CLOSED;
    if (t->binary_id == 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    if (ch->send_buffer < UA_SC_SYM_HEADER + over + 8)
        return UA_BAD_TCP_INTERNAL_ERROR;
    maxb = ch->send_buffer - UA_SC_SYM_HEADER - over;
    token = ua_sc_send_token(ch);
    nid = ua_sc_nodeid_put(idbuf, t->binary_id);

    /* Try one chunk, encoded straight into out. */
    if (room >= UA_SC_SYM_HEADER + over + nid) {
        size_t cap = room - UA_SC_SYM_HEADER - over;

        if (cap > maxb)
            cap = maxb;
        p = out->buf + out->len;
        memcpy(p + UA_SC_SYM_HEADER, idbuf, nid);
        s = ua_encode(resp, t, p + UA_SC_SYM_HEADER + nid, cap - nid, &n);
        if (s == UA_GOOD) {
            total = nid + n;
            if (ch->peer_max_message != 0 && total > ch->peer_max_message)
                return UA_BAD_RESPONSE_TOO_LARGE;
            memcpy(p, "MSGF", 4);
            ua_sc_wr32(p + 4, (uint32_t)(UA_SC_SYM_HEADER + total + over));
            ua_sc_wr32(p + 8, ch->channel_id);
            ua_sc_wr32(p + 12, token);
            ua_sc_wr32(p + 16, ++ch->send_seq);
            ua_sc_wr32(p + 20, request_id);
            out->len += UA_SC_SYM_HEADER + total + over;
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
    if (nchunks > (SIZE_MAX - total) / (UA_SC_SYM_HEADER + over)
        || room < total + nchunks * (UA_SC_SYM_HEADER + over))
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;

    /*
     * Encode the whole body at the far end of the space the chunks will
     * take, then walk front to back: each chunk's header and body land at
     * or before the bytes still to be moved, so memmove never overwrites
     * anything it has yet to read.
     */
    base = out->len;
    src = base + nchunks * (UA_SC_SYM_HEADER + over);
    memcpy(out->buf + src, idbuf, nid);
    s = ua_encode(resp, t, out->buf + src + nid, n, &n);
    if (s != UA_GOOD)
        return s;
    for (size_t i = 0, left = total; i < nchunks; i++) {
        size_t b = left < maxb ? left : maxb;

        p = out->buf + base;
        memmove(p + UA_SC_SYM_HEADER, out->buf + src, b);
        memcpy(p, i + 1 == nchunks ? "MSGF" : "MSGC", 4);
        ua_sc_wr32(p + 4, (uint32_t)(UA_SC_SYM_HEADER + b + over));
        ua_sc_wr32(p + 8, ch->channel_id);
        ua_sc_wr32(p + 12, token);
        ua_sc_wr32(p + 16, ++ch->send_seq);
        ua_sc_wr32(p + 20, request_id);
        base += UA_SC_SYM_HEADER + b + over;
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
    const size_t over = ua_sc_overhead(ch);
    size_t       maxb, total, nchunks;
    uint8_t      idbuf[8];

    if (t->binary_id == 0 || ch->send_buffer < UA_SC_SYM_HEADER + over + 8)
        return 0;
    maxb = ch->send_buffer - UA_SC_SYM_HEADER - over;
    total = ua_encoded_size(resp, t);
    if (total == 0)
        return 0;
    total += ua_sc_nodeid_put(idbuf, t->binary_id);
    nchunks = (total + maxb - 1) / maxb;
    return total + nchunks * (UA_SC_SYM_HEADER + over);
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
