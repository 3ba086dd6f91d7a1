/*
 * proto/client.h: the client side of OPC UA TCP (UACP, Part 6 §7.1) and of
 * the secure channel (Part 6 §6.7), as a pure state machine: it builds the
 * bytes to send and digests the bytes received, and never does I/O or
 * reads a clock.  Used by the unit tests, the integration tests
 * (tests/lib/uaconn.c puts a blocking socket under it) and uabench.
 *
 * SecurityPolicy None unless ua_client_set_security() chose an RSA policy
 * and Sign or SignAndEncrypt: then the OPN is signed with our key and
 * encrypted for the server's certificate, the response checked the same
 * way (the server's certificate, our thumbprint, decryption, signature,
 * padding, sequence number), and every MSG/CLO chunk is signed (and
 * encrypted) in place, every response chunk decrypted in place and
 * verified, with the keys of the token it names (Part 6 §6.7.5).  The
 * chunk code is securechannel.h's, shared with the server.
 *
 *   ua_client_init
 *   ua_client_hello ----> HEL          ua_client_process(ACK)   -> EV_ACK
 *   ua_client_open  ----> OPN Issue    ua_client_process(OPN)   -> EV_OPEN
 *   ua_client_request --> MSG ...      ua_client_process(MSG F) -> EV_MSG
 *   ua_client_open  ----> OPN Renew    (at 75 % of the lifetime:
 *                                       ua_client_renew_due)
 *   ua_client_close ----> CLO          then close the socket
 *
 * States:
 *
 *   FRESH --hello--> HEL_SENT --ACK--> ACKED --open--> OPN_SENT --OPN--> OPEN
 *                                                                  |
 *   any ERR, any violation ---------------------> CLOSED <--close--+
 *
 * Received bytes are framed with ua_client_frame() exactly like the server
 * side frames them.  A response that fits one chunk is handed out in place
 * (ev->body points into the chunk); a multi-chunk response is reassembled
 * into the buffer given to ua_client_init() (no allocation, ever).  With
 * security, received chunks are decrypted in place: pass writable memory
 * to ua_client_process().
 *
 * Sequence numbers start at 1 and grow by one per chunk sent, across
 * OPN/MSG/CLO; received ones must grow by one too (wrap per Part 6
 * §6.7.2.4).  After a Renew the client sends with the new token as soon as
 * the response arrives and accepts responses under both tokens.
 *
 * A secured client holds keys: ua_client_clear() when done with it.
 *
 * Not thread-safe: one client per thread.
 */
#ifndef UA_CLIENT_H
#define UA_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "codec.h"
#include "crypto.h"
#include "securechannel.h"
#include "types.h"

/* Longest authenticationToken identifier (String/Opaque) the client keeps. */
#define UA_CLIENT_TOKEN_MAX 128

enum ua_client_state {
    UA_CLIENT_FRESH = 0,        /* nothing sent */
    UA_CLIENT_HEL_SENT,         /* waiting for ACK */
    UA_CLIENT_ACKED,            /* ACK received; open the channel */
    UA_CLIENT_OPN_SENT,         /* waiting for the OPN response (Issue) */
    UA_CLIENT_OPEN,             /* a token is valid: send requests */
    UA_CLIENT_CLOSED            /* CLO sent, ERR received or a violation */
};

/* What ua_client_process() found in one chunk. */
enum ua_client_ev_kind {
    UA_CLIENT_EV_NONE = 0,      /* an intermediate chunk was absorbed */
    UA_CLIENT_EV_ACK,           /* ACK: sizes negotiated */
    UA_CLIENT_EV_OPEN,          /* OPN response (Issue or Renew) */
    UA_CLIENT_EV_MSG,           /* a complete service response */
    UA_CLIENT_EV_ERR,           /* ERR from the server: status, reason */
    UA_CLIENT_EV_ABORT          /* an 'A' chunk: that response is lost */
};

struct ua_client_event {
    uint8_t          kind;          /* enum ua_client_ev_kind */
    uint32_t         request_id;    /* EV_OPEN, EV_MSG, EV_ABORT */
    const uint8_t   *body;          /* EV_MSG: type NodeId + response */
    size_t           len;
    ua_status        status;        /* EV_ERR / EV_ABORT: the server's code;
                                       EV_OPEN: the ServiceResult */
    struct ua_string reason;        /* EV_ERR / EV_ABORT; points into the
                                       chunk */
};

/* What the client offers in HEL; 0 in a max_ field means "no limit". */
struct ua_client_config {
    uint32_t         recv_buffer;       /* ReceiveBufferSize, >= 8192 */
    uint32_t         send_buffer;       /* SendBufferSize, >= 8192 */
    uint32_t         max_message;       /* MaxMessageSize we accept */
    uint32_t         max_chunks;        /* MaxChunkCount we accept */
    uint32_t         lifetime_ms;       /* requested token lifetime */
    struct ua_limits limits;            /* for decoding OPN responses */
};

/* Sensible defaults: 64 KiB chunks, 4 MiB / 64 chunks, 10 min tokens. */
extern const struct ua_client_config ua_client_config_default;

/* Message security for ua_client_set_security(); the pointers are
 * borrowed and must outlive the client. */
struct ua_client_security {
    const struct ua_policy *policy;     /* NULL or None: no security */
    uint8_t                 mode;       /* UA_MESSAGESECURITYMODE_SIGN or
                                           _SIGNANDENCRYPT */
    const uint8_t          *cert;       /* ours, DER, a chain leaf first */
    size_t                  cert_len;
    struct ua_crypto_key   *key;        /* its private key */
    const uint8_t          *server_cert;    /* the server's, DER (leaf
                                               first), e.g. from an
                                               EndpointDescription */
    size_t                  server_cert_len;
};

struct ua_client {
    uint8_t                        state;   /* enum ua_client_state */
    /* Fill the RequestHeader of every ua_client_request() (default true):
     * requestHandle (a counter), timestamp (now_dt) and
     * authenticationToken (set by ua_client_set_token()). */
    bool                           fill_header;
    struct ua_client_config        cfg;
    /* Caller's DateTime for RequestHeader timestamps; the client never
     * reads a clock.  Set it before each request if you care. */
    int64_t                        now_dt;
    /* Negotiated in ACK. */
    uint32_t                       recv_buffer;     /* chunks we accept */
    uint32_t                       send_buffer;     /* chunks we send */
    uint32_t                       peer_max_message;    /* 0: no limit */
    uint32_t                       peer_max_chunks;     /* 0: no limit */
    uint32_t                       server_protocol_version;
    /* Channel and tokens. */
    uint32_t                       channel_id;
    uint32_t                       token_id;
    uint32_t                       prev_token_id;   /* 0: none */
    uint32_t                       lifetime_ms;     /* revised */
    uint64_t                       token_at_ms;     /* now_ms when received */
    int64_t                        token_created_dt;
    uint32_t                       opn_request_id;  /* OPN in flight, 0: none */
    /* Sequence numbers and ids. */
    uint32_t                       send_seq;        /* last one sent */
    uint32_t                       recv_seq;        /* last one received */
    uint8_t                        seq_started;
    uint32_t                       next_request_id;
    uint32_t                       next_handle;
    /* Session token, copied (identifiers live in token_buf). */
    struct ua_nodeid               auth_token;
    uint8_t                        token_buf[UA_CLIENT_TOKEN_MAX];
    /* Reassembly of multi-chunk responses into the caller's buffer. */
    uint8_t                       *asm_buf;
    size_t                         asm_cap;
    size_t                         asm_len;
    uint32_t                       asm_chunks;
    uint32_t                       asm_request_id;
    /* Security (ua_client_set_security()); policy NULL: None.
     * cipher[cipher_cur] belongs to token_id, the other to prev_token_id.
     * A test may change cert/key/policy between OPNs to play a
     * misbehaving client. */
    const struct ua_policy        *policy;
    uint8_t                        mode;        /* MessageSecurityMode */
    uint8_t                        cipher_cur;
    ua_status                      detail;      /* cause of the last Bad */
    const uint8_t                 *cert;
    size_t                         cert_len;
    struct ua_crypto_key          *key;
    uint8_t                        server_thumb[UA_SC_THUMB_LEN];
    uint8_t                        own_thumb[UA_SC_THUMB_LEN];
    uint8_t                        nonce[UA_NONCE_MAX];  /* OPN in flight */
    struct ua_crypto_key           server_key;
    struct ua_cipher               cipher[2];
};

/*
 * A fresh client.  cfg NULL: ua_client_config_default.  asm_buf[asm_cap]
 * receives multi-chunk responses (may be NULL/0: then only single-chunk
 * responses are accepted); the HEL's MaxMessageSize is min(cfg->max_message,
 * asm_cap) when asm_cap is non-zero.  The buffer stays the caller's.
 */
void ua_client_init(struct ua_client *c, const struct ua_client_config *cfg,
                    uint8_t *asm_buf, size_t asm_cap);

/*
 * Secure the channel about to be opened: before the Issue (FRESH, HEL_SENT
 * or ACKED; BadInvalidState after).  sec NULL or policy None: None.  The
 * mode must be Sign or SignAndEncrypt (BadSecurityModeRejected); key a
 * private key (BadInvalidArgument); both certificates must start with a
 * whole DER certificate and the server's key must fit the policy
 * (BadCertificateInvalid, BadCertificatePolicyCheckFailed).  On failure
 * the client is left with SecurityPolicy None.  Validating the server's
 * certificate against a trust list is the caller's business.
 */
ua_status ua_client_set_security(struct ua_client *c,
                                 const struct ua_client_security *sec);

/* Wipe the keys and cipher contexts; the client is unusable after. */
void ua_client_clear(struct ua_client *c);

/* Append HEL for endpoint_url (NULL: empty) to out.  FRESH -> HEL_SENT. */
ua_status ua_client_hello(struct ua_client *c, const char *endpoint_url,
                          struct ua_sc_out *out);

/*
 * Append an OPN request to out: Issue (request_type
 * UA_SECURITYTOKENREQUESTTYPE_ISSUE) from ACKED, Renew from OPEN.
 * lifetime_ms 0: cfg.lifetime_ms.  *request_id (may be NULL) receives the
 * OPN's RequestId.
 */
ua_status ua_client_open(struct ua_client *c, int32_t request_type,
                         uint32_t lifetime_ms, uint32_t *request_id,
                         struct ua_sc_out *out);

/*
 * Append the MSG chunk(s) of request req of type t (a *Request structure,
 * its first member a RequestHeader) to out.  With fill_header the
 * RequestHeader is filled in place first (req is modified).  *request_id
 * (may be NULL) receives the RequestId to match the response with.  Splits
 * into several chunks above the negotiated send buffer; BadRequestTooLarge
 * past the server's MaxMessageSize/MaxChunkCount, BadEncodingLimitsExceeded
 * when out lacks room.  Only in OPEN.
 */
ua_status ua_client_request(struct ua_client *c, const struct ua_type *t,
                            void *req, uint32_t *request_id,
                            struct ua_sc_out *out);

/* Append CLO (CloseSecureChannelRequest) to out; -> CLOSED. */
ua_status ua_client_close(struct ua_client *c, struct ua_sc_out *out);

/*
 * Frame received bytes: UA_GOOD with *chunk = 0 when fewer than 8 bytes
 * are there, else the chunk's whole size (may exceed n: read more).  An
 * unknown message or chunk type, or a size below 8, is
 * BadTcpMessageTypeInvalid; a size above our ReceiveBufferSize is
 * BadTcpMessageTooLarge.
 */
ua_status ua_client_frame(const struct ua_client *c, const uint8_t *p,
                          size_t n, uint32_t *chunk);

/*
 * Digest one whole chunk received at now_ms (monotonic, for the renewal
 * timer).  Fills *ev; the body/reason point into chunk or the reassembly
 * buffer and stay valid until the next call.  A Bad return closes the
 * client (state CLOSED); for an ERR message it is the server's code and
 * ev->kind is UA_CLIENT_EV_ERR.  With security the chunk is decrypted in
 * place (writable memory), and a chunk that fails decryption, signature,
 * padding or sequence number is BadSecurityChecksFailed (the cause in
 * c->detail).
 */
ua_status ua_client_process(struct ua_client *c, const uint8_t *chunk,
                            size_t len, uint64_t now_ms,
                            struct ua_client_event *ev);

/*
 * Decode an EV_MSG body as response type t into dst (in arena a).  When
 * the server sent a ServiceFault instead, dst's ResponseHeader (the first
 * member of every response) receives the fault's, the rest of dst is
 * zeroed and the fault's ServiceResult is returned.  A different type is
 * BadUnknownResponse; undecodable bytes BadDecodingError.
 */
ua_status ua_client_decode(const struct ua_client *c,
                           const struct ua_client_event *ev,
                           const struct ua_type *t, void *dst,
                           struct ua_arena *a);

/* Use this authenticationToken in RequestHeaders (copied; NULL clears). */
ua_status ua_client_set_token(struct ua_client *c,
                              const struct ua_nodeid *token);

/* True once 75 % of the token's lifetime has passed (Part 4 §5.5.2). */
bool ua_client_renew_due(const struct ua_client *c, uint64_t now_ms);

#endif /* UA_CLIENT_H */
