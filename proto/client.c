/*
 * proto/client.c: client side of UACP and of the secure channel, policy
 * None or an RSA policy in Sign / SignAndEncrypt, as a pure state machine
 * (see client.h).  The chunk layouts are the ones drawn at the top of
 * securechannel.c; securing and checking a chunk (ua_sc_sym_*,
 * ua_sc_asym_*) is shared with the server through securechannel.h.
 *
 * Multi-chunk requests are encoded the way ua_sc_send() does it: the body
 * is encoded once at the far end of the room the chunks need, then moved
 * front to back under the chunk headers and sealed there, so nothing is
 * allocated.
 *
 * Tokens: the client sends under the newest token as soon as its OPN
 * response is in, and accepts responses under the previous one until the
 * server uses the new one (Part 4 §5.5.2); each token has its own cipher
 * context, cipher[cipher_cur] the newest.
 */
#include "client.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nodeid.h"
#include "nodeids_gen.h"
#include "status_gen.h"
#include "types_gen.h"

#define UA_CLIENT_HEL_FIXED  32
#define UA_CLIENT_ACK_SIZE   28
#define UA_CLIENT_ARENA      4096   /* decoding an OPN response */

/* Table of contents. */
static inline uint32_t ua_client_rd32(const uint8_t *p);
static inline void ua_client_wr32(uint8_t *p, uint32_t v);
static inline bool ua_client_secured(const struct ua_client *c);
static ua_status ua_client_fail(struct ua_client *c, ua_status s);
static uint32_t ua_client_next_id(struct ua_client *c);
static ua_status ua_client_seq_check(struct ua_client *c, uint32_t seq);
static ua_status ua_client_chunks(struct ua_client *c, const char *mt,
                                  uint32_t request_id,
                                  const struct ua_type *t, const void *v,
                                  struct ua_sc_out *out);
static ua_status ua_client_do_ack(struct ua_client *c, const uint8_t *p,
                                  size_t len, struct ua_client_event *ev);
static ua_status ua_client_do_err(struct ua_client *c, const uint8_t *p,
                                  size_t len, struct ua_client_event *ev);
static ua_status ua_client_open_secure(struct ua_client *c,
                                       struct ua_open_secure_channel_request *r,
                                       uint32_t channel, uint32_t *id,
                                       struct ua_sc_out *out);
static ua_status ua_client_do_opn(struct ua_client *c, const uint8_t *p,
                                  size_t len, uint64_t now_ms,
                                  struct ua_client_event *ev);
static ua_status ua_client_opn_check(struct ua_client *c, uint8_t *p,
                                     size_t len, size_t *off, size_t *blen);
static ua_status ua_client_opn_keys(struct ua_client *c,
                                    const struct ua_string *server_nonce,
                                    unsigned slot);
static ua_status ua_client_do_msg(struct ua_client *c, const uint8_t *p,
                                  size_t len, struct ua_client_event *ev);

const struct ua_client_config ua_client_config_default = {
    .recv_buffer = 65536,
    .send_buffer = 65536,
    .max_message = 4u << 20,
    .max_chunks = 0,
    .lifetime_ms = 600000,
    .limits = {
        .max_string_len = UA_LIMIT_STRING_LEN,
        .max_bytestring_len = UA_LIMIT_BYTESTRING_LEN,
        .max_array_len = UA_LIMIT_ARRAY_LEN,
        .max_depth = UA_NESTING_MAX,
        .max_message_size = UA_LIMIT_MESSAGE_SIZE,
    },
};

/* ------------------------------------------------------------ helpers */

static inline uint32_t
ua_client_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static inline void
ua_client_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Whether the channel is secured (Sign or SignAndEncrypt). */
static inline bool
ua_client_secured(const struct ua_client *c)
{
    return !ua_crypto_policy_is_none(c->policy)
           && c->mode >= UA_MESSAGESECURITYMODE_SIGN;
}

static ua_status
ua_client_fail(struct ua_client *c, ua_status s)
{
    if (c->detail == UA_GOOD)
        c->detail = s;
    c->state = UA_CLIENT_CLOSED;
    c->asm_len = 0;
    c->asm_chunks = 0;
    return s;
}

static uint32_t
ua_client_next_id(struct ua_client *c)
{
    uint32_t id = c->next_request_id++;

    if (c->next_request_id == 0)
        c->next_request_id = 1;
    return id;
}

/* Part 6 §6.7.2.4, as on the server side. */
static ua_status
ua_client_seq_check(struct ua_client *c, uint32_t seq)
{
    if (c->seq_started) {
        uint32_t prev = c->recv_seq;

        if (seq != prev + 1
            && !(prev > UA_SC_SEQ_WRAP_ABOVE && seq < UA_SC_SEQ_WRAP_BELOW))
            return UA_BAD_SEQUENCE_NUMBER_INVALID;
    }
    c->recv_seq = seq;
    c->seq_started = 1;
    return UA_GOOD;
}

/*
 * Append value v of type t (its DefaultBinary NodeId first) as symmetric
 * chunks of message type mt ("MSG" or "CLO"; CLO must fit one chunk).
 */
static ua_status
ua_client_chunks(struct ua_client *c, const char *mt, uint32_t request_id,
                 const struct ua_type *t, const void *v,
                 struct ua_sc_out *out)
{
    const struct ua_policy *pol = c->policy;
    const uint8_t           mode = ua_client_secured(c)
                                       ? c->mode : UA_MESSAGESECURITYMODE_NONE;
    struct ua_cipher       *cipher = NULL;
    size_t room, maxb, full, tail, nid, n, total, nchunks, need, base, src;
    size_t                  size;
    uint8_t                 idbuf[UA_NODEID_NS0_MAX];
    uint8_t                *p;
    ua_status               s;

    if (out->len > out->cap || t->binary_id == 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    room = out->cap - out->len;
    maxb = ua_sc_sym_max_body(pol, mode, c->send_buffer);
    if (maxb < 8)
        return UA_BAD_TCP_INTERNAL_ERROR;
    if (mode != UA_MESSAGESECURITYMODE_NONE)
        cipher = &c->cipher[c->cipher_cur];
    nid = ua_nodeid_ns0_put(idbuf, t->binary_id);
    n = ua_encoded_size(v, t);
    if (n == 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    total = nid + n;
    if (c->peer_max_message != 0 && total > c->peer_max_message)
        return UA_BAD_REQUEST_TOO_LARGE;
    nchunks = (total + maxb - 1) / maxb;
    if (c->peer_max_chunks != 0 && nchunks > c->peer_max_chunks)
        return UA_BAD_REQUEST_TOO_LARGE;
    if (nchunks > 1 && mt[0] != 'M')
        return UA_BAD_REQUEST_TOO_LARGE;
    /* Every chunk but the last is full (no padding); the last one's
     * header and footer: tail. */
    full = ua_sc_sym_chunk_size(pol, mode, maxb) - maxb;
    tail = total - (nchunks - 1) * maxb;
    tail = ua_sc_sym_chunk_size(pol, mode, tail) - tail;
    if (nchunks - 1 > (SIZE_MAX - total - tail) / full)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    need = total + (nchunks - 1) * full + tail;
    if (room < need)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    base = out->len;
    src = base + need - tail + UA_SC_SYM_HEADER - total;
    memcpy(out->buf + src, idbuf, nid);
    s = ua_encode(v, t, out->buf + src + nid, n, &n);
    if (s != UA_GOOD)
        return s;
    for (size_t i = 0, left = total; i < nchunks; i++) {
        size_t b = left < maxb ? left : maxb;

        p = out->buf + base;
        memmove(p + UA_SC_SYM_HEADER, out->buf + src, b);
        memcpy(p, mt, 3);
        p[3] = i + 1 == nchunks ? 'F' : 'C';
        ua_client_wr32(p + 8, c->channel_id);
        ua_client_wr32(p + 12, c->token_id);
        ua_client_wr32(p + 16, ++c->send_seq);
        ua_client_wr32(p + 20, request_id);
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

/* ------------------------------------------------------------ public */

void
ua_client_init(struct ua_client *c, const struct ua_client_config *cfg,
               uint8_t *asm_buf, size_t asm_cap)
{
    memset(c, 0, sizeof(*c));
    c->cfg = cfg != NULL ? *cfg : ua_client_config_default;
    c->state = UA_CLIENT_FRESH;
    c->fill_header = true;
    c->next_request_id = 1;
    c->next_handle = 1;
    c->asm_buf = asm_buf;
    c->asm_cap = asm_buf != NULL ? asm_cap : 0;
    /* We can take no more than the reassembly buffer holds. */
    if (c->asm_cap == 0) {
        c->cfg.max_chunks = 1;
    } else if (c->cfg.max_message == 0 || c->cfg.max_message > c->asm_cap) {
        c->cfg.max_message =
            c->asm_cap > UINT32_MAX ? UINT32_MAX : (uint32_t)c->asm_cap;
    }
    c->recv_buffer = c->cfg.recv_buffer;
    c->send_buffer = c->cfg.send_buffer;
    c->auth_token = ua_nodeid_num(0, 0);
}

ua_status
ua_client_set_security(struct ua_client *c,
                       const struct ua_client_security *sec)
{
    const struct ua_policy *p = sec != NULL ? sec->policy : NULL;
    ua_status               s;

    if (c->state > UA_CLIENT_ACKED)
        return UA_BAD_INVALID_STATE;
    /* None until everything below has passed. */
    c->policy = NULL;
    c->mode = UA_MESSAGESECURITYMODE_NONE;
    if (ua_crypto_policy_is_none(p))
        return UA_GOOD;
    if (sec->mode != UA_MESSAGESECURITYMODE_SIGN
        && sec->mode != UA_MESSAGESECURITYMODE_SIGNANDENCRYPT)
        return UA_BAD_SECURITY_MODE_REJECTED;
    if (sec->key == NULL || !ua_crypto_key_is_private(sec->key)
        || sec->cert == NULL || sec->server_cert == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    s = ua_sc_leaf_thumbprint(sec->cert, sec->cert_len, c->own_thumb);
    if (s == UA_GOOD)
        s = ua_sc_leaf_thumbprint(sec->server_cert, sec->server_cert_len,
                                  c->server_thumb);
    if (s != UA_GOOD)
        return s;
    if (ua_crypto_key_from_cert(&c->server_key, sec->server_cert,
                                sec->server_cert_len) != UA_GOOD)
        return UA_BAD_CERTIFICATE_INVALID;
    if (!ua_crypto_policy_key_ok(p, ua_crypto_key_bits(&c->server_key))) {
        ua_crypto_key_clear(&c->server_key);
        return UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED;
    }
    c->policy = p;
    c->mode = sec->mode;
    c->cert = sec->cert;
    c->cert_len = sec->cert_len;
    c->key = sec->key;
    return UA_GOOD;
}

void
ua_client_clear(struct ua_client *c)
{
    ua_crypto_key_clear(&c->server_key);
    ua_crypto_cipher_clear(&c->cipher[0]);
    ua_crypto_cipher_clear(&c->cipher[1]);
    ua_crypto_wipe(c->nonce, sizeof(c->nonce));
    c->policy = NULL;
    c->mode = UA_MESSAGESECURITYMODE_NONE;
    c->state = UA_CLIENT_CLOSED;
}

ua_status
ua_client_hello(struct ua_client *c, const char *endpoint_url,
                struct ua_sc_out *out)
{
    size_t   ulen = endpoint_url != NULL ? strlen(endpoint_url) : 0;
    uint8_t *p;

    if (c->state != UA_CLIENT_FRESH)
        return UA_BAD_INVALID_STATE;
    if (ulen > INT32_MAX - UA_CLIENT_HEL_FIXED || out->len > out->cap
        || out->cap - out->len < UA_CLIENT_HEL_FIXED + ulen)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    p = out->buf + out->len;
    memcpy(p, "HELF", 4);
    ua_client_wr32(p + 4, (uint32_t)(UA_CLIENT_HEL_FIXED + ulen));
    ua_client_wr32(p + 8, 0);
    ua_client_wr32(p + 12, c->cfg.recv_buffer);
    ua_client_wr32(p + 16, c->cfg.send_buffer);
    ua_client_wr32(p + 20, c->cfg.max_message);
    ua_client_wr32(p + 24, c->cfg.max_chunks);
    ua_client_wr32(p + 28, (uint32_t)ulen);
    if (ulen != 0)
        memcpy(p + 32, endpoint_url, ulen);
    out->len += UA_CLIENT_HEL_FIXED + ulen;
    c->state = UA_CLIENT_HEL_SENT;
    return UA_GOOD;
}

ua_status
ua_client_open(struct ua_client *c, int32_t request_type,
               uint32_t lifetime_ms, uint32_t *request_id,
               struct ua_sc_out *out)
{
    static const char                     policy[] = UA_SC_POLICY_NONE;
    const size_t                          plen = sizeof(policy) - 1;
    const size_t                          hdr = 12 + 4 + plen + 4 + 4 + 8;
    struct ua_open_secure_channel_request req;
    size_t                                room, off, n;
    uint32_t                              id;
    uint8_t                              *p;
    ua_status                             s;

    if (request_type == UA_SECURITYTOKENREQUESTTYPE_ISSUE) {
        if (c->state != UA_CLIENT_ACKED)
            return UA_BAD_INVALID_STATE;
    } else if (request_type == UA_SECURITYTOKENREQUESTTYPE_RENEW) {
        if (c->state != UA_CLIENT_OPEN || c->opn_request_id != 0)
            return UA_BAD_INVALID_STATE;
    } else {
        return UA_BAD_REQUEST_TYPE_INVALID;
    }
    memset(&req, 0, sizeof(req));
    req.request_header.authentication_token = ua_nodeid_num(0, 0);
    req.request_header.timestamp = c->now_dt;
    req.request_header.request_handle = c->next_handle++;
    req.request_header.audit_entry_id.len = -1;
    req.client_protocol_version = 0;
    req.request_type = request_type;
    req.security_mode = UA_MESSAGESECURITYMODE_NONE;
    req.client_nonce.len = 0;
    req.requested_lifetime = lifetime_ms != 0 ? lifetime_ms
                                              : c->cfg.lifetime_ms;
    if (out->len > out->cap)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    if (ua_client_secured(c)) {
        s = ua_client_open_secure(
            c, &req, request_type == UA_SECURITYTOKENREQUESTTYPE_ISSUE
                         ? 0 : c->channel_id, &id, out);
        if (s != UA_GOOD)
            return s;
        c->opn_request_id = id;
        if (request_type == UA_SECURITYTOKENREQUESTTYPE_ISSUE)
            c->state = UA_CLIENT_OPN_SENT;
        if (request_id != NULL)
            *request_id = id;
        return UA_GOOD;
    }
    room = out->cap - out->len;
    if (room < hdr + 7)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    p = out->buf + out->len;
    off = hdr;
    off += ua_nodeid_ns0_put(
        p + off, UA_NS0ID_OPENSECURECHANNELREQUEST_ENCODING_DEFAULTBINARY);
    s = ua_encode(&req, &ua_types[UA_TYPE_OPENSECURECHANNELREQUEST], p + off,
                  room - off, &n);
    if (s != UA_GOOD)
        return s;
    off += n;
    if (off > c->send_buffer)
        return UA_BAD_REQUEST_TOO_LARGE;
    id = ua_client_next_id(c);
    memcpy(p, "OPNF", 4);
    ua_client_wr32(p + 4, (uint32_t)off);
    ua_client_wr32(p + 8, request_type == UA_SECURITYTOKENREQUESTTYPE_ISSUE
                              ? 0 : c->channel_id);
    ua_client_wr32(p + 12, (uint32_t)plen);
    memcpy(p + 16, policy, plen);
    ua_client_wr32(p + 16 + plen, 0xFFFFFFFFu);
    ua_client_wr32(p + 20 + plen, 0xFFFFFFFFu);
    ua_client_wr32(p + 24 + plen, ++c->send_seq);
    ua_client_wr32(p + 28 + plen, id);
    out->len += off;
    c->opn_request_id = id;
    if (request_type == UA_SECURITYTOKENREQUESTTYPE_ISSUE)
        c->state = UA_CLIENT_OPN_SENT;
    if (request_id != NULL)
        *request_id = id;
    return UA_GOOD;
}

/*
 * The OPN request r as a secured chunk: our certificate, the server's
 * thumbprint, a fresh client nonce (kept for the keys), signed with our
 * key and encrypted for the server's.  *id: its RequestId.
 */
static ua_status
ua_client_open_secure(struct ua_client *c,
                      struct ua_open_secure_channel_request *r,
                      uint32_t channel, uint32_t *id, struct ua_sc_out *out)
{
    const struct ua_policy *p = c->policy;
    const size_t            ulen = strlen(p->uri);
    const size_t            hdr = 12 + 4 + ulen + 4 + c->cert_len + 4
                                  + UA_SC_THUMB_LEN;
    size_t                  room = out->cap - out->len, n, nid, size;
    uint8_t                *o;
    ua_status               s;

    if (c->cert_len > UA_SC_CERT_MAX || room < hdr + 8 + 7)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    if (ua_crypto_random(c->nonce, p->nonce_len) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    r->security_mode = c->mode;
    r->client_nonce.len = p->nonce_len;
    r->client_nonce.data = c->nonce;
    o = out->buf + out->len;
    memcpy(o, "OPNF", 4);
    ua_client_wr32(o + 8, channel);
    ua_client_wr32(o + 12, (uint32_t)ulen);
    memcpy(o + 16, p->uri, ulen);
    ua_client_wr32(o + 16 + ulen, (uint32_t)c->cert_len);
    memcpy(o + 20 + ulen, c->cert, c->cert_len);
    ua_client_wr32(o + 20 + ulen + c->cert_len, UA_SC_THUMB_LEN);
    memcpy(o + 24 + ulen + c->cert_len, c->server_thumb, UA_SC_THUMB_LEN);
    nid = ua_nodeid_ns0_put(
        o + hdr + 8, UA_NS0ID_OPENSECURECHANNELREQUEST_ENCODING_DEFAULTBINARY);
    s = ua_encode(r, &ua_types[UA_TYPE_OPENSECURECHANNELREQUEST],
                  o + hdr + 8 + nid, room - hdr - 8 - nid, &n);
    if (s != UA_GOOD)
        return s;
    size = ua_sc_asym_chunk_size(p, ua_crypto_key_bytes(c->key),
                                 ua_crypto_key_bits(&c->server_key), hdr,
                                 nid + n);
    if (size == 0 || size > c->send_buffer)
        return UA_BAD_REQUEST_TOO_LARGE;
    if (size > room)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    *id = ua_client_next_id(c);
    ua_client_wr32(o + hdr, c->send_seq + 1);
    ua_client_wr32(o + hdr + 4, *id);
    s = ua_sc_asym_seal(p, c->key, &c->server_key, o, hdr, nid + n, room,
                        &size);
    if (s != UA_GOOD)
        return s;
    c->send_seq++;
    out->len += size;
    return UA_GOOD;
}

ua_status
ua_client_request(struct ua_client *c, const struct ua_type *t, void *req,
                  uint32_t *request_id, struct ua_sc_out *out)
{
    uint32_t  id;
    ua_status s;

    if (c->state != UA_CLIENT_OPEN)
        return UA_BAD_INVALID_STATE;
    if (c->fill_header) {
        struct ua_request_header *h = req;

        if (t->kind != UA_KIND_STRUCT || t->nmembers == 0
            || t->members[0].type != UA_TYPE_REQUESTHEADER
            || t->members[0].offset != 0)
            return UA_BAD_INVALID_ARGUMENT;
        h->request_handle = c->next_handle++;
        if (c->next_handle == 0)
            c->next_handle = 1;
        h->timestamp = c->now_dt;
        h->authentication_token = c->auth_token;
    }
    id = ua_client_next_id(c);
    s = ua_client_chunks(c, "MSG", id, t, req, out);
    if (s != UA_GOOD)
        return s;
    if (request_id != NULL)
        *request_id = id;
    return UA_GOOD;
}

ua_status
ua_client_close(struct ua_client *c, struct ua_sc_out *out)
{
    struct ua_close_secure_channel_request req;
    ua_status                              s;

    if (c->state != UA_CLIENT_OPEN)
        return UA_BAD_INVALID_STATE;
    memset(&req, 0, sizeof(req));
    req.request_header.authentication_token = c->auth_token;
    req.request_header.timestamp = c->now_dt;
    req.request_header.request_handle = c->next_handle++;
    req.request_header.audit_entry_id.len = -1;
    s = ua_client_chunks(c, "CLO", ua_client_next_id(c),
                         &ua_types[UA_TYPE_CLOSESECURECHANNELREQUEST], &req,
                         out);
    if (s != UA_GOOD)
        return s;
    c->state = UA_CLIENT_CLOSED;
    return UA_GOOD;
}

ua_status
ua_client_frame(const struct ua_client *c, const uint8_t *p, size_t n,
                uint32_t *chunk)
{
    uint32_t size, limit;
    uint8_t  ct;

    *chunk = 0;
    if (n < UA_TCP_HEADER)
        return UA_GOOD;
    ct = p[3];
    if (memcmp(p, "MSG", 3) == 0) {
        if (ct != 'F' && ct != 'C' && ct != 'A')
            return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    } else if (memcmp(p, "ACK", 3) == 0 || memcmp(p, "ERR", 3) == 0
               || memcmp(p, "OPN", 3) == 0) {
        if (ct != 'F')
            return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    } else {
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    }
    size = ua_client_rd32(p + 4);
    if (size < UA_TCP_HEADER)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    /* Before the ACK: what we offered in HEL; after: the negotiated. */
    limit = c->recv_buffer;
    if (size > limit)
        return UA_BAD_TCP_MESSAGE_TOO_LARGE;
    *chunk = size;
    return UA_GOOD;
}

ua_status
ua_client_process(struct ua_client *c, const uint8_t *chunk, size_t len,
                  uint64_t now_ms, struct ua_client_event *ev)
{
    uint32_t  size;
    ua_status s;

    memset(ev, 0, sizeof(*ev));
    if (c->state == UA_CLIENT_CLOSED)
        return UA_BAD_SECURE_CHANNEL_CLOSED;
    c->detail = UA_GOOD;
    if (len < UA_TCP_HEADER)
        return ua_client_fail(c, UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    s = ua_client_frame(c, chunk, len, &size);
    if (s != UA_GOOD)
        return ua_client_fail(c, s);
    if (size != len)
        return ua_client_fail(c, UA_BAD_TCP_MESSAGE_TYPE_INVALID);
    switch (chunk[0]) {
    case 'M':
        s = ua_client_do_msg(c, chunk, len, ev);
        break;
    case 'A':
        s = ua_client_do_ack(c, chunk, len, ev);
        break;
    case 'E':
        return ua_client_do_err(c, chunk, len, ev);
    default:
        s = ua_client_do_opn(c, chunk, len, now_ms, ev);
        break;
    }
    if (s != UA_GOOD)
        return ua_client_fail(c, s);
    return UA_GOOD;
}

/* ------------------------------------------------------------ receive */

static ua_status
ua_client_do_ack(struct ua_client *c, const uint8_t *p, size_t len,
                 struct ua_client_event *ev)
{
    uint32_t rbuf, sbuf;

    if (c->state != UA_CLIENT_HEL_SENT)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (len != UA_CLIENT_ACK_SIZE)
        return UA_BAD_DECODING_ERROR;
    c->server_protocol_version = ua_client_rd32(p + 8);
    rbuf = ua_client_rd32(p + 12);
    sbuf = ua_client_rd32(p + 16);
    if (rbuf < UA_TCP_MIN_BUFFER || sbuf < UA_TCP_MIN_BUFFER)
        return UA_BAD_CONNECTION_REJECTED;
    c->send_buffer = rbuf < c->cfg.send_buffer ? rbuf : c->cfg.send_buffer;
    c->recv_buffer = sbuf < c->cfg.recv_buffer ? sbuf : c->cfg.recv_buffer;
    c->peer_max_message = ua_client_rd32(p + 20);
    c->peer_max_chunks = ua_client_rd32(p + 24);
    c->state = UA_CLIENT_ACKED;
    ev->kind = UA_CLIENT_EV_ACK;
    return UA_GOOD;
}

static ua_status
ua_client_do_err(struct ua_client *c, const uint8_t *p, size_t len,
                 struct ua_client_event *ev)
{
    int32_t   l;
    ua_status s;

    if (len < 16)
        return ua_client_fail(c, UA_BAD_DECODING_ERROR);
    s = ua_client_rd32(p + 8);
    l = (int32_t)ua_client_rd32(p + 12);
    ev->kind = UA_CLIENT_EV_ERR;
    ev->status = s;
    ev->reason.len = -1;
    if (l > 0 && (size_t)l <= len - 16) {
        ev->reason.len = l;
        ev->reason.data = (uint8_t *)(uintptr_t)(p + 16);
    }
    return ua_client_fail(c, UA_STATUS_IS_BAD(s) ? s
                                                 : UA_BAD_UNKNOWN_RESPONSE);
}

static ua_status
ua_client_do_opn(struct ua_client *c, const uint8_t *p, size_t len,
                 uint64_t now_ms, struct ua_client_event *ev)
{
    static const char                      policy[] = UA_SC_POLICY_NONE;
    const size_t                           plen = sizeof(policy) - 1;
    const bool                             secured = ua_client_secured(c);
    struct ua_open_secure_channel_response resp;
    struct ua_arena                        a;
    uint8_t                                abuf[UA_CLIENT_ARENA];
    size_t                                 off = 12, used, blen;
    uint32_t                               channel, request_id, type_id;
    unsigned                               slot;
    int32_t                                l;
    ua_status                              s;

    if (c->opn_request_id == 0)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (len < 12 + 12 + 8)
        return UA_BAD_DECODING_ERROR;
    channel = ua_client_rd32(p + 8);
    if (secured) {
        /* Decrypted in place: the caller's buffer (client.h). */
        s = ua_client_opn_check(c, (uint8_t *)(uintptr_t)p, len, &off,
                                &blen);
        if (s != UA_GOOD)
            return s;
    } else {
        l = (int32_t)ua_client_rd32(p + off);
        off += 4;
        if (l != (int32_t)plen || len - off < plen
            || memcmp(p + off, policy, plen) != 0)
            return UA_BAD_SECURITY_POLICY_REJECTED;
        off += plen;
        for (int i = 0; i < 2; i++) {
            if (len - off < 4)
                return UA_BAD_DECODING_ERROR;
            l = (int32_t)ua_client_rd32(p + off);
            off += 4;
            if (l < -1 || (l > 0 && (size_t)l > len - off))
                return UA_BAD_DECODING_ERROR;
            if (l > 0)
                off += (size_t)l;
        }
        if (len - off < 8)
            return UA_BAD_DECODING_ERROR;
        s = ua_client_seq_check(c, ua_client_rd32(p + off));
        if (s != UA_GOOD)
            return s;
        blen = len - off - 8;
    }
    request_id = ua_client_rd32(p + off + 4);
    off += 8;
    if (request_id != c->opn_request_id)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    s = ua_nodeid_ns0_get(p + off, blen, &used, &type_id);
    if (s != UA_GOOD)
        return s;
    off += used;
    blen -= used;
    ua_arena_init(&a, abuf, sizeof(abuf));
    if (type_id == UA_NS0ID_SERVICEFAULT_ENCODING_DEFAULTBINARY) {
        struct ua_service_fault f;

        s = ua_decode(p + off, blen, NULL, &f,
                      &ua_types[UA_TYPE_SERVICEFAULT], &a, &c->cfg.limits);
        if (s != UA_GOOD)
            return UA_BAD_DECODING_ERROR;
        ev->kind = UA_CLIENT_EV_OPEN;
        ev->request_id = request_id;
        ev->status = f.response_header.service_result;
        return UA_STATUS_IS_BAD(ev->status) ? ev->status
                                            : UA_BAD_UNKNOWN_RESPONSE;
    }
    if (type_id != UA_NS0ID_OPENSECURECHANNELRESPONSE_ENCODING_DEFAULTBINARY)
        return UA_BAD_UNKNOWN_RESPONSE;
    s = ua_decode(p + off, blen, &used, &resp,
                  &ua_types[UA_TYPE_OPENSECURECHANNELRESPONSE], &a,
                  &c->cfg.limits);
    if (s != UA_GOOD || used != blen)
        return UA_BAD_DECODING_ERROR;
    if (UA_STATUS_IS_BAD(resp.response_header.service_result))
        return resp.response_header.service_result;
    if (resp.security_token.channel_id != channel || channel == 0
        || resp.security_token.token_id == 0)
        return UA_BAD_SECURE_CHANNEL_ID_INVALID;
    if (c->state == UA_CLIENT_OPEN && channel != c->channel_id)
        return UA_BAD_SECURE_CHANNEL_ID_INVALID;
    /* The new token's keys go to the free slot (the Issue: slot 0). */
    slot = c->state == UA_CLIENT_OPEN ? 1u - c->cipher_cur : 0;
    if (secured) {
        s = ua_client_opn_keys(c, &resp.server_nonce, slot);
        if (s != UA_GOOD)
            return s;
        c->cipher_cur = (uint8_t)slot;
    }
    if (c->state == UA_CLIENT_OPEN)         /* Renew */
        c->prev_token_id = c->token_id;
    c->channel_id = channel;
    c->token_id = resp.security_token.token_id;
    c->lifetime_ms = resp.security_token.revised_lifetime;
    c->token_created_dt = resp.security_token.created_at;
    c->token_at_ms = now_ms;
    c->opn_request_id = 0;
    c->state = UA_CLIENT_OPEN;
    ev->kind = UA_CLIENT_EV_OPEN;
    ev->request_id = request_id;
    ev->status = resp.response_header.service_result;
    return UA_GOOD;
}

/*
 * The security of an OPN response, as the server checks a request (Part 6
 * §6.7.6): our policy, signed with the certificate we encrypted for (the
 * Client "shall close the SecureChannel if the Certificate used to sign
 * the response is not the same as the Certificate used to encrypt the
 * request", §6.7.4), our thumbprint, then decryption, signature and
 * padding, then the sequence number.  *off = the sequence header's
 * offset, *blen = the body length after it.
 */
static ua_status
ua_client_opn_check(struct ua_client *c, uint8_t *p, size_t len,
                    size_t *off, size_t *blen)
{
    const struct ua_policy *pol = c->policy;
    struct ua_sc_asym_hdr   h;
    uint8_t                 leaf[UA_SC_THUMB_LEN];
    ua_status               s;

    s = ua_sc_asym_parse(p, len, &h);
    if (s != UA_GOOD)
        return s;
    if (h.policy_len != strlen(pol->uri)
        || memcmp(h.policy, pol->uri, h.policy_len) != 0)
        return UA_BAD_SECURITY_POLICY_REJECTED;
    if (h.cert == NULL
        || ua_sc_leaf_thumbprint(h.cert, h.cert_len, leaf) != UA_GOOD
        || !ua_crypto_memeq(leaf, c->server_thumb, sizeof(leaf))) {
        c->detail = UA_BAD_CERTIFICATE_INVALID;
        return UA_BAD_SECURITY_CHECKS_FAILED;
    }
    if (h.thumb_len != UA_SC_THUMB_LEN
        || !ua_crypto_memeq(h.thumb, c->own_thumb, UA_SC_THUMB_LEN))
        return UA_BAD_CERTIFICATE_INVALID;
    if (ua_sc_asym_open(pol, c->key, &c->server_key, p, h.end, len, blen)
        != UA_GOOD)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    if (ua_client_seq_check(c, ua_client_rd32(p + h.end)) != UA_GOOD) {
        c->detail = UA_BAD_SEQUENCE_NUMBER_INVALID;
        return UA_BAD_SECURITY_CHECKS_FAILED;
    }
    *off = h.end;
    return UA_GOOD;
}

/* Key the token in cipher[slot]: the server's nonce must be the policy's
 * SecureChannelNonceLength; our keys sign and encrypt what we send. */
static ua_status
ua_client_opn_keys(struct ua_client *c, const struct ua_string *server_nonce,
                   unsigned slot)
{
    const struct ua_policy *p = c->policy;
    struct ua_sym_keys      ck, sk;
    ua_status               s;

    if (server_nonce->len != p->nonce_len)
        return UA_BAD_NONCE_INVALID;
    s = ua_crypto_channel_keys(p, c->nonce, p->nonce_len, server_nonce->data,
                               p->nonce_len, &ck, &sk);
    if (s == UA_GOOD)
        s = ua_crypto_cipher_init(&c->cipher[slot], p, &ck, &sk);
    ua_crypto_sym_keys_clear(&ck);
    ua_crypto_sym_keys_clear(&sk);
    ua_crypto_wipe(c->nonce, sizeof(c->nonce));
    return s == UA_GOOD ? UA_GOOD : UA_BAD_INTERNAL_ERROR;
}

static ua_status
ua_client_do_msg(struct ua_client *c, const uint8_t *p, size_t len,
                 struct ua_client_event *ev)
{
    uint32_t  token, request_id;
    size_t    blen, need;
    unsigned  slot;
    ua_status s;

    if (c->state != UA_CLIENT_OPEN)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (len < UA_SC_SYM_HEADER)
        return UA_BAD_TCP_MESSAGE_TYPE_INVALID;
    if (ua_client_rd32(p + 8) != c->channel_id)
        return UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN;
    token = ua_client_rd32(p + 12);
    if (token == c->token_id) {
        c->prev_token_id = 0;       /* the server switched too */
        slot = c->cipher_cur;
    } else if (token == 0 || token != c->prev_token_id) {
        return UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN;
    } else {
        slot = 1u - c->cipher_cur;
    }
    if (ua_client_secured(c)) {
        /* Decrypted in place: the caller's buffer (client.h). */
        if (ua_sc_sym_open(&c->cipher[slot], c->mode, (uint8_t *)(uintptr_t)p,
                           len, &blen) != UA_GOOD)
            return UA_BAD_SECURITY_CHECKS_FAILED;
        if (ua_client_seq_check(c, ua_client_rd32(p + 16)) != UA_GOOD) {
            c->detail = UA_BAD_SEQUENCE_NUMBER_INVALID;
            return UA_BAD_SECURITY_CHECKS_FAILED;
        }
    } else {
        s = ua_client_seq_check(c, ua_client_rd32(p + 16));
        if (s != UA_GOOD)
            return s;
        blen = len - UA_SC_SYM_HEADER;
    }
    request_id = ua_client_rd32(p + 20);
    if (c->asm_chunks != 0 && request_id != c->asm_request_id)
        return UA_BAD_SECURITY_CHECKS_FAILED;

    if (p[3] == 'A') {
        /* Abort (§6.7.3): Error + Reason; that response is lost. */
        c->asm_len = 0;
        c->asm_chunks = 0;
        ev->kind = UA_CLIENT_EV_ABORT;
        ev->request_id = request_id;
        ev->reason.len = -1;
        if (blen >= 8) {
            int32_t l = (int32_t)ua_client_rd32(p + UA_SC_SYM_HEADER + 4);

            ev->status = ua_client_rd32(p + UA_SC_SYM_HEADER);
            if (l > 0 && (size_t)l <= blen - 8) {
                ev->reason.len = l;
                ev->reason.data =
                    (uint8_t *)(uintptr_t)(p + UA_SC_SYM_HEADER + 8);
            }
        }
        return UA_GOOD;
    }
    if (p[3] == 'F' && c->asm_chunks == 0) {
        if (c->cfg.max_message != 0 && blen > c->cfg.max_message)
            return UA_BAD_TCP_MESSAGE_TOO_LARGE;
        ev->kind = UA_CLIENT_EV_MSG;
        ev->request_id = request_id;
        ev->body = p + UA_SC_SYM_HEADER;
        ev->len = blen;
        return UA_GOOD;
    }
    /* Reassembly: our limits first, then the caller's buffer. */
    need = c->asm_len + blen;
    if (c->cfg.max_chunks != 0 && c->asm_chunks >= c->cfg.max_chunks)
        return UA_BAD_TCP_MESSAGE_TOO_LARGE;
    if ((c->cfg.max_message != 0 && need > c->cfg.max_message)
        || need > c->asm_cap)
        return UA_BAD_TCP_MESSAGE_TOO_LARGE;
    memcpy(c->asm_buf + c->asm_len, p + UA_SC_SYM_HEADER, blen);
    c->asm_len = need;
    c->asm_chunks++;
    c->asm_request_id = request_id;
    if (p[3] == 'C')
        return UA_GOOD;
    ev->kind = UA_CLIENT_EV_MSG;
    ev->request_id = request_id;
    ev->body = c->asm_buf;
    ev->len = c->asm_len;
    c->asm_len = 0;
    c->asm_chunks = 0;
    return UA_GOOD;
}

/* ------------------------------------------------------------ misc */

ua_status
ua_client_decode(const struct ua_client *c, const struct ua_client_event *ev,
                 const struct ua_type *t, void *dst, struct ua_arena *a)
{
    uint32_t  type_id;
    size_t    used, n;
    ua_status s;

    if (ev->kind != UA_CLIENT_EV_MSG)
        return UA_BAD_INVALID_STATE;
    s = ua_nodeid_ns0_get(ev->body, ev->len, &used, &type_id);
    if (s != UA_GOOD)
        return s;
    if (type_id == t->binary_id) {
        s = ua_decode(ev->body + used, ev->len - used, &n, dst, t, a,
                      &c->cfg.limits);
        if (s != UA_GOOD)
            return s;
        return n == ev->len - used ? UA_GOOD : UA_BAD_DECODING_ERROR;
    }
    if (type_id == UA_NS0ID_SERVICEFAULT_ENCODING_DEFAULTBINARY) {
        struct ua_service_fault f;

        s = ua_decode(ev->body + used, ev->len - used, NULL, &f,
                      &ua_types[UA_TYPE_SERVICEFAULT], a, &c->cfg.limits);
        if (s != UA_GOOD)
            return s;
        memset(dst, 0, t->size);
        if (t->kind == UA_KIND_STRUCT && t->nmembers != 0
            && t->members[0].type == UA_TYPE_RESPONSEHEADER
            && t->members[0].offset == 0)
            memcpy(dst, &f.response_header, sizeof(f.response_header));
        return UA_STATUS_IS_BAD(f.response_header.service_result)
                   ? f.response_header.service_result
                   : UA_BAD_UNKNOWN_RESPONSE;
    }
    return UA_BAD_UNKNOWN_RESPONSE;
}

ua_status
ua_client_set_token(struct ua_client *c, const struct ua_nodeid *token)
{
    if (token == NULL) {
        c->auth_token = ua_nodeid_num(0, 0);
        return UA_GOOD;
    }
    if (token->idtype == UA_IDTYPE_STRING
        || token->idtype == UA_IDTYPE_OPAQUE) {
        int32_t l = token->id.str.len;

        if (l > UA_CLIENT_TOKEN_MAX)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        c->auth_token = *token;
        if (l > 0) {
            memcpy(c->token_buf, token->id.str.data, (size_t)l);
            c->auth_token.id.str.data = c->token_buf;
        } else {
            c->auth_token.id.str.data = NULL;
        }
        return UA_GOOD;
    }
    c->auth_token = *token;
    return UA_GOOD;
}

bool
ua_client_renew_due(const struct ua_client *c, uint64_t now_ms)
{
    if (c->state != UA_CLIENT_OPEN || c->opn_request_id != 0)
        return false;
    return now_ms >= c->token_at_ms + (uint64_t)c->lifetime_ms * 3 / 4;
}
