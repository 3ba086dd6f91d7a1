/*
 * proto/securechannel.h: the server side of OPC UA TCP (UACP, Part 6 §7.1)
 * and of the secure channel (Part 6 §6.7), as a pure state machine.
 *
 * It takes bytes and the time as parameters and never does I/O, so it is
 * driven alike by the worker's sockets, by unit tests and by the fuzzer
 * (docs/style.md §1; open62541's ua_securechannel.h does the same).
 *
 *   bytes --ua_sc_frame--> one whole chunk --ua_sc_process--> either
 *     - nothing yet (an intermediate chunk was absorbed),
 *     - protocol replies appended to `out` (ACK, OpenSecureChannel response),
 *     - a complete service request (msg->body: the type NodeId and body),
 *     - a Bad status: send ua_sc_write_err() and close the connection.
 *   ua_sc_send() chunks a service response into `out`; on a secured channel
 *   each chunk is padded, signed and encrypted in place in `out`.
 *
 * Security (Part 6 §6.7, SecurityPolicy + MessageSecurityMode): the
 * configuration offers policy x mode pairs (UA_SC_OFFER); an OPN with an
 * RSA policy is parsed, checked and decrypted as Part 6 §6.7.6 orders it:
 *
 *   SecureChannelId -> SecurityPolicyUri offered (on Renew: the channel's)
 *   -> ReceiverCertificateThumbprint is ours (BadCertificateInvalid)
 *   -> on Renew the SenderCertificate is the channel's
 *   -> the sender's key length fits the policy, the validate hook trusts
 *      the certificate (untrusted and structural failures are
 *      BadSecurityChecksFailed on the wire, the cause in ch->detail)
 *   -> RSA decrypt, signature, padding (one status, the same work)
 *   -> sequence number -> the request (mode, type, nonce, lifetime)
 *
 * and answered signed with our key, encrypted with the client's.  Each
 * token gets its own symmetric keys (Part 6 §6.7.5) in one struct
 * ua_cipher, built once; the previous token's context stays until the new
 * token is first used or the old one expires (Part 6 §6.7.4).  A MSG/CLO
 * chunk on a secured channel is decrypted in place, its signature checked
 * in constant time, its padding checked, then its sequence number: any
 * failure is BadSecurityChecksFailed, whatever failed, after the same work.
 *
 * States:
 *
 *   FRESH --HEL--> ACKED --OPN(Issue)--> OPEN --CLO--> CLOSED
 *                                         |  ^
 *                                         +--+ OPN(Renew), MSG
 *
 * Any violation moves to CLOSED and returns the status the spec names:
 *   BadTcpMessageTypeInvalid   a message other than HEL first, HEL twice, ...
 *   BadTcpMessageTooLarge      a chunk above the negotiated buffer, or a
 *                              message above MaxMessageSize / MaxChunkCount
 *   BadTcpEndpointUrlInvalid   EndpointUrl of 4096 bytes or more
 *   BadProtocolVersionUnsupported
 *   BadTcpSecureChannelUnknown / BadSecureChannelIdInvalid   wrong channel id
 *   BadSecureChannelTokenUnknown   unknown or expired token id
 *   BadSequenceNumberInvalid   a sequence number that is not the next one
 *   BadSecurityPolicyRejected  a policy we do not offer
 *   BadSecurityModeRejected, BadRequestTypeInvalid, BadNonceInvalid
 *   BadDecodingError           a malformed header or body
 *   BadCertificateInvalid      a ReceiverCertificateThumbprint not ours
 *   BadSecurityChecksFailed    decryption, signature, padding, replay on a
 *                              secured channel; an untrusted or unusable
 *                              SenderCertificate; a Renew from another one
 *   BadCertificate...          the hook's verdict after trust (time, URI,
 *                              usage, revocation), passed through
 * ch->detail keeps the cause behind the returned status for the log
 * (BadCertificateUntrusted, BadCertificatePolicyCheckFailed,
 * BadSequenceNumberInvalid, ...): never send it.
 */
#ifndef UA_SECURECHANNEL_H
#define UA_SECURECHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "codec.h"
#include "crypto.h"
#include "types.h"

#define UA_TCP_HEADER        8          /* MessageType(3) Chunk(1) Size(4) */
#define UA_TCP_MIN_BUFFER    8192       /* Part 6 §7.1.2.3 */
#define UA_TCP_URL_MAX       4096       /* EndpointUrl < 4096 bytes */
#define UA_SC_POLICY_NONE    "http://opcfoundation.org/UA/SecurityPolicy#None"
#define UA_SC_POLICY_URI_MAX 255        /* Part 6 §6.7.2.3 */
#define UA_SC_REASON_MAX     4096       /* ERR/Abort reason, Part 6 §6.7.3 */
/* Part 6 §6.7.2.4, LegacySequenceNumbers (None and the RSA policies): no
 * wrap before this value is passed; the first number after a wrap < 1024. */
#define UA_SC_SEQ_WRAP_ABOVE 4294966271u
#define UA_SC_SEQ_WRAP_BELOW 1024u
/* MSG/CLO chunk: header(8) SecureChannelId(4) TokenId(4) SequenceHeader(8). */
#define UA_SC_SYM_HEADER     24
/* The largest SenderCertificate (a chain, leaf first) an OPN may carry:
 * UA_CERT_CHAIN_MAX certificates of a few KiB; checked before any DER is
 * parsed (docs/security.md case 20), and the chunk must hold it anyway. */
#define UA_SC_CERT_MAX       32768
#define UA_SC_THUMB_LEN      20         /* SHA-1, Part 6 §6.7.2.3 */

/*
 * A policy x MessageSecurityMode pair the server offers, for
 * ua_sc_config.offers: UA_SC_OFFER(UA_POLICY_BASIC256SHA256,
 * UA_MESSAGESECURITYMODE_SIGNANDENCRYPT).
 */
#define UA_SC_OFFER(policy, mode) \
    (1u << ((unsigned)(policy) * 4u + (unsigned)(mode)))

/*
 * The certificate check of an OPN sender (Part 4 §6.1.3): chain is the
 * SenderCertificate as received (leaf first, possibly followed by its
 * issuers), p the policy asked for.  UA_GOOD trusts it; any Bad status
 * refuses the channel (see the top of this file for what the client sees).
 * Called for Issue and for every Renew (Part 4 §6.1.7: re-verify at
 * renewal).  The worker validates against its PKI store; tests use
 * ua_cert_validate() directly.
 */
typedef ua_status ua_sc_validate_fn(void *ctx, const uint8_t *chain,
                                    size_t len, const struct ua_policy *p);

enum ua_sc_state {
    UA_SC_FRESH = 0,        /* waiting for HEL */
    UA_SC_ACKED,            /* HEL answered; waiting for OPN */
    UA_SC_OPEN,             /* a token is valid */
    UA_SC_CLOSED            /* CLO received or an error happened */
};

/* What the server offers; limits are ours, the peer's come in HEL. */
struct ua_sc_config {
    uint32_t         recv_buffer;       /* ReceiveBufferSize we offer */
    uint32_t         send_buffer;       /* SendBufferSize we offer */
    uint32_t         max_message;       /* MaxMessageSize we accept */
    uint32_t         max_chunks;        /* MaxChunkCount we accept */
    uint32_t         min_lifetime_ms;   /* revised token lifetime bounds */
    uint32_t         max_lifetime_ms;
    struct ua_limits limits;            /* for decoding OPN/CLO bodies */
    /* The caller's cached DateTime (wk_worker.now_dt), read for the OPN
     * response's timestamp and the token's CreatedAt; proto/ never reads
     * a clock.  NULL: both are 0. */
    const int64_t   *now_dt;
    /*
     * Security.  All zero: SecurityPolicy None only, exactly as before.
     * offers: UA_SC_OFFER bits; None is accepted when offers is 0 or holds
     * UA_SC_OFFER(UA_POLICY_NONE, UA_MESSAGESECURITYMODE_NONE).  A policy is
     * offered only when cert and key are set and the key's length fits it;
     * Basic128Rsa15 and Basic256 only with allow_deprecated, whatever offers
     * says (docs/security.md "Attack classes" 12): otherwise
     * BadSecurityPolicyRejected.  Without a validate hook every client
     * certificate is refused.  The pointers are borrowed for the channel's
     * life; key is not const because RSA private operations attach the process
     * RNG to it.
     */
    uint32_t              offers;
    bool                  allow_deprecated;
    const uint8_t        *cert;         /* our certificate, DER */
    size_t                cert_len;
    struct ua_crypto_key *key;          /* its private key */
    ua_sc_validate_fn    *validate;
    void                 *validate_ctx;
};

/*
 * A secured OPN between two of its steps (ua_sc_resume).  Each step does
 * one RSA private-key operation (~2 ms at 2048 bits, docs/architecture.md §4):
 *
 *   ua_sc_process:  checks, decrypt block 0         --> STEP_DECRYPT
 *   ua_sc_resume:   decrypt block 1 .. n-1; after the last one the
 *                   signature, padding and request   --> STEP_ANSWER
 *   ua_sc_resume:   token, keys, response signed and encrypted into out,
 *                   channel committed                --> STEP_NONE
 *
 * The chunk stays the caller's (decrypted in place, read again by later
 * steps); nothing of the channel changes before the last step.
 */
enum ua_sc_step {
    UA_SC_STEP_NONE = 0,
    UA_SC_STEP_DECRYPT,         /* next: ciphertext block `block` */
    UA_SC_STEP_ANSWER           /* next: the signed response */
};

struct ua_sc_opn {
    uint8_t                 step;       /* enum ua_sc_step */
    uint8_t                 mode;       /* the request's SecurityMode */
    uint8_t                 bad;        /* a block failed to decrypt */
    const struct ua_policy *policy;
    uint8_t                *chunk;      /* the caller's chunk */
    size_t                  len;
    size_t                  hdr;        /* offset of the sequence header */
    size_t                  block;      /* next ciphertext block */
    size_t                  plain;      /* plaintext bytes so far */
    uint32_t                request_id;
    uint32_t                request_handle;
    uint32_t                lifetime;   /* requested */
    uint8_t                 hash[UA_SHA256_LEN];        /* SenderCertificate */
    uint8_t                 leaf[UA_SC_THUMB_LEN];      /* its thumbprint */
    uint8_t                 nonce[UA_NONCE_MAX];        /* the client's */
};

/* A complete service request, valid until the next call on the channel. */
struct ua_sc_msg {
    uint32_t       request_id;
    const uint8_t *body;                /* type NodeId + encoded request */
    size_t         len;                 /* 0: no message yet */
};

/* Where replies are written; len grows, never past cap. */
struct ua_sc_out {
    uint8_t *buf;
    size_t   cap;
    size_t   len;
};

/* Memory for reassembling multi-chunk messages (the worker's pool). */
struct ua_sc_mem {
    void *(*alloc)(void *ctx, size_t n);
    void  (*free)(void *ctx, void *p);
    void   *ctx;
};

struct ua_sc {
    uint8_t                    state;   /* enum ua_sc_state */
    const struct ua_sc_config *cfg;
    struct ua_sc_mem           mem;
    uint32_t                   channel_id;
    /* Negotiated in HEL/ACK (Part 6 §7.1.2.3, §7.1.2.4). */
    uint32_t                   recv_buffer;     /* chunks we accept */
    uint32_t                   send_buffer;     /* chunks we send */
    uint32_t                   peer_max_message;    /* 0: no limit */
    uint32_t                   peer_max_chunks;     /* 0: no limit */
    /* Tokens (Part 4 §5.5.2); the previous one stays valid until the new
     * one is first used or the old one expires. */
    uint32_t                   token_id;
    uint64_t                   token_created_ms;
    uint32_t                   token_lifetime_ms;
    uint32_t                   prev_token_id;   /* 0: none */
    uint64_t                   prev_expires_ms;
    uint32_t                   next_token_id;
    /* Sequence numbers (Part 6 §6.7.2.4). */
    uint32_t                   recv_seq;        /* last one received */
    uint32_t                   send_seq;        /* last one sent */
    uint8_t                    seq_started;
    /* Reassembly of a multi-chunk message. */
    uint8_t                   *asm_buf;
    size_t                     asm_len;
    size_t                     asm_cap;
    uint32_t                   asm_chunks;
    uint32_t                   asm_request_id;
    /* Security, fixed by the Issue: policy NULL (or None) and mode 0 (or
     * NONE) mean no security.  cipher[cipher_cur] belongs to token_id,
     * the other one to prev_token_id while that is pending. */
    const struct ua_policy    *policy;
    uint8_t                    mode;            /* MessageSecurityMode */
    uint8_t                    cipher_cur;
    ua_status                  detail;          /* cause of the last Bad */
    uint8_t                    peer_hash[UA_SHA256_LEN];    /* the Issue's
                                                   SenderCertificate bytes */
    uint8_t                    peer_thumb[UA_SC_THUMB_LEN]; /* its leaf's
                                                   thumbprint (CreateSession
                                                   compares it) */
    uint8_t                    client_nonce[UA_NONCE_MAX];  /* the last one:
                                                   a Renew needs another */
    struct ua_cipher           cipher[2];
    struct ua_sc_opn           opn;             /* a staged OPN */
    /* The public key of the SenderCertificate whose SHA-256 is
     * peer_key_hash, parsed once when an OPN brings that certificate and
     * kept (no re-parse in the OPN's later steps, at a Renew by the same
     * certificate, at ActivateSession); cleared by ua_sc_clear.  A public
     * key is its modulus and exponent (~0.5 KB), not an RsaKey. */
    uint8_t                    peer_key_hash[UA_SHA256_LEN];
    struct ua_crypto_key       peer_key;
};

/* A fresh channel with the given id (unique per worker, never 0). */
void ua_sc_init(struct ua_sc *ch, const struct ua_sc_config *cfg,
                const struct ua_sc_mem *mem, uint32_t channel_id);

/* Release reassembly memory and wipe the channel's keys. */
void ua_sc_clear(struct ua_sc *ch);

/* The public key of the open channel's SenderCertificate leaf (the one
 * whose thumbprint is peer_thumb); NULL when the channel has none. */
struct ua_crypto_key *ua_sc_peer_key(struct ua_sc *ch);

/* How many times a channel parsed a peer certificate's public key, all
 * channels of the process together (the handshake's cost; tests). */
extern unsigned long ua_sc_peer_key_parses;

/*
 * Look at the bytes at p[n]: UA_GOOD with *chunk = 0 when fewer than 8
 * header bytes are there, else *chunk = the chunk's whole size (which may
 * be more than n: wait for it).  A size below 8 or above what this state
 * accepts is BadTcpMessageTooLarge / BadTcpMessageTypeInvalid.
 */
ua_status ua_sc_frame(const struct ua_sc *ch, const uint8_t *p, size_t n,
                      uint32_t *chunk);

/*
 * Process one whole chunk.  now_ms is a monotonic clock in milliseconds.
 * Replies are appended to out (BadEncodingLimitsExceeded when out is too
 * small: the caller gives it room for at least one send_buffer chunk).
 * msg->len == 0 unless a complete service request is ready.
 *
 * A CLO returns UA_GOOD with ch->state == UA_SC_CLOSED and nothing in out:
 * close the socket without an ERR.  An Abort chunk ('A') returns UA_GOOD
 * with no message and the channel still OPEN.  A multi-chunk message is
 * reassembled in memory from ch->mem, held until the next call.
 *
 * On a secured channel (and for a secured OPN) the chunk is decrypted in
 * place: its bytes change, so `chunk` must point at writable memory (the
 * parameter stays const for the callers that only speak None).
 *
 * A secured OPN is staged (struct ua_sc_opn): this call does at most one
 * RSA private-key operation and may return UA_GOOD with ua_sc_busy(ch)
 * and nothing in out.  Then the caller calls ua_sc_resume() until the
 * channel is no longer busy, leaving the chunk's bytes where they are, and
 * nothing else on ch meanwhile (ua_sc_process() on a busy channel fails
 * with BadInternalError); it may serve other channels in between, which is
 * the point (docs/architecture.md §4).  ua_sc_clear() drops a staged OPN.
 */
ua_status ua_sc_process(struct ua_sc *ch, const uint8_t *chunk, size_t len,
                        uint64_t now_ms, struct ua_sc_out *out,
                        struct ua_sc_msg *msg);

/* Whether an OPN is between two steps: ua_sc_resume() is due. */
static inline bool
ua_sc_busy(const struct ua_sc *ch)
{
    return ch->opn.step != UA_SC_STEP_NONE;
}

/*
 * The next step of a staged OPN: at most one RSA private-key operation.
 * Returns like ua_sc_process() (never a service request): UA_GOOD with
 * ua_sc_busy(ch) when more is to come; UA_GOOD and not busy when the
 * response is in out; a Bad status (the channel CLOSED): send
 * ua_sc_write_err() and close.  BadInternalError when nothing is staged.
 */
ua_status ua_sc_resume(struct ua_sc *ch, uint64_t now_ms,
                       struct ua_sc_out *out);

/*
 * Encode a service response (its type NodeId, then the body) as MSG chunks
 * into out, each signed (and encrypted) in place on a secured channel with
 * the keys of the token responses go out under.  Fails with
 * BadResponseTooLarge when it exceeds the peer's MaxMessageSize or
 * MaxChunkCount (the caller then sends a ServiceFault),
 * BadEncodingLimitsExceeded when out lacks room.
 */
ua_status ua_sc_send(struct ua_sc *ch, uint32_t request_id,
                     const struct ua_type *t, const void *resp,
                     struct ua_sc_out *out);

/*
 * The exact number of bytes ua_sc_send() will append for this response
 * (every chunk header and the per-chunk security room included), or 0
 * when it cannot be encoded.  For sizing an output buffer beforehand.
 */
size_t ua_sc_send_size(const struct ua_sc *ch, const struct ua_type *t,
                       const void *resp);

/* Append an ERR message with status and reason (reason may be NULL; cut
 * to UA_SC_REASON_MAX and to the room left).  Nothing when even the fixed
 * 16 bytes do not fit. */
void ua_sc_write_err(struct ua_sc_out *out, ua_status status,
                     const char *reason);

/*
 * The deadline (ms) by which the client must act: the HEL/OPN handshake
 * deadline while FRESH/ACKED (hello_ms after `opened`), the token's expiry
 * (+25 %) while OPEN.  The worker closes the channel past it.
 */
uint64_t ua_sc_deadline(const struct ua_sc *ch, uint64_t opened_ms,
                        uint32_t hello_ms);

/* ------------------------------------------------------------ chunks
 *
 * The message security of Part 6 §6.7.2, shared by this file and
 * proto/client.c (and usable by tests to build chunks by hand).  Pure:
 * bytes, keys and cipher contexts in, no channel state.
 *
 * Symmetric chunk (MSG, CLO), mode Sign / SignAndEncrypt:
 *
 *   0        8        12      16        24          +b
 *   | header | channel | token | seq reqid | body ... | [PaddingSize
 *     Padding] | Signature (HMAC over everything before it) |
 *                      |<------ AES-CBC (SignAndEncrypt) ---------->|
 *
 * Asymmetric chunk (OPN), always signed and encrypted:
 *
 *   | header | channel | policy | cert | thumbprint | seq reqid | body |
 *     PaddingSize Padding [ExtraPaddingSize] | Signature (RSA, sender) |
 *                                  |<-- RSA, receiver's key --------->|
 *
 * MessageSize is the final (encrypted) size and is written before the
 * signature is computed.
 */

/* The largest body (after the 24-byte header) one chunk of chunk_size
 * bytes carries; 0 when none fits.  p NULL or None / mode None: no
 * security. */
size_t ua_sc_sym_max_body(const struct ua_policy *p, uint8_t mode,
                          size_t chunk_size);

/* The exact size of a chunk with body bytes of body. */
size_t ua_sc_sym_chunk_size(const struct ua_policy *p, uint8_t mode,
                            size_t body);

/*
 * Secure one symmetric chunk in place: chunk[0..24) holds the header
 * (MessageSize aside), chunk[24..24+body) the body; the buffer has room for
 * ua_sc_sym_chunk_size() bytes.  Writes the footer and MessageSize, signs
 * with c's local key, encrypts (SignAndEncrypt); *size = the chunk's size.
 * c may be NULL for mode None (only MessageSize is written).
 */
ua_status ua_sc_sym_seal(struct ua_cipher *c, uint8_t mode, uint8_t *chunk,
                         size_t body, size_t *size);

/*
 * Check one received symmetric chunk of len bytes in place: decrypt
 * (SignAndEncrypt), verify the signature with c's remote key in constant
 * time, check the padding.  *body = the body length at chunk + 24.  Every
 * failure is UA_BAD_SECURITY_CHECKS_FAILED, and once the length is a whole
 * number of blocks the same work is done whatever failed (the HMAC is
 * computed even when the padding is wrong).
 */
ua_status ua_sc_sym_open(struct ua_cipher *c, uint8_t mode, uint8_t *chunk,
                         size_t len, size_t *body);

/* The asymmetric security header of an OPN chunk (pointers into it). */
struct ua_sc_asym_hdr {
    const uint8_t *policy;          /* SecurityPolicyUri, not terminated */
    size_t         policy_len;
    const uint8_t *cert;            /* SenderCertificate; NULL: none */
    size_t         cert_len;
    const uint8_t *thumb;           /* ReceiverCertificateThumbprint */
    size_t         thumb_len;
    size_t         end;             /* offset of the sequence header */
};

/* Parse it from a whole OPN chunk: lengths below -1, a policy URI above
 * 255 bytes, a certificate above UA_SC_CERT_MAX or any field past the end
 * is BadDecodingError. */
ua_status ua_sc_asym_parse(const uint8_t *chunk, size_t len,
                           struct ua_sc_asym_hdr *h);

/* The exact size of an OPN chunk with hdr bytes of headers (up to the
 * sequence header) and body bytes after it, signed with a key of
 * sign_bytes and encrypted with one of enc_bits; 0 when impossible. */
size_t ua_sc_asym_chunk_size(const struct ua_policy *p, size_t sign_bytes,
                             unsigned enc_bits, size_t hdr, size_t body);

/*
 * Secure an OPN chunk in place: chunk[0..hdr) holds the headers
 * (MessageSize aside), chunk[hdr..hdr+8+body) the sequence header and the
 * body; cap bytes are writable from chunk.  Pads (Part 6 §6.7.2.5, with
 * ExtraPaddingSize when peer's key is longer than 2048 bits), writes
 * MessageSize, signs with priv, encrypts with peer's public key.
 */
ua_status ua_sc_asym_seal(const struct ua_policy *p,
                          struct ua_crypto_key *priv,
                          struct ua_crypto_key *peer, uint8_t *chunk,
                          size_t hdr, size_t body, size_t cap, size_t *size);

/*
 * Check a received OPN chunk of len bytes in place: decrypt chunk[hdr..len)
 * with priv, verify the sender's signature with peer, check the padding.
 * *body = the body length after the sequence header at chunk + hdr.  Every
 * failure is UA_BAD_SECURITY_CHECKS_FAILED, with the signature checked even
 * when decryption failed (no padding oracle of ours).
 */
ua_status ua_sc_asym_open(const struct ua_policy *p,
                          struct ua_crypto_key *priv,
                          struct ua_crypto_key *peer, uint8_t *chunk,
                          size_t hdr, size_t len, size_t *body);

/* SHA-1 of the first certificate of a DER chain (the leaf's thumbprint,
 * what ReceiverCertificateThumbprint holds).  BadCertificateInvalid when
 * chain does not start with a whole DER SEQUENCE. */
ua_status ua_sc_leaf_thumbprint(const uint8_t *chain, size_t len,
                                uint8_t out[UA_SC_THUMB_LEN]);

#endif /* UA_SECURECHANNEL_H */
