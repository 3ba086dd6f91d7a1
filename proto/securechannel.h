/*
 * proto/securechannel.h: the server side of OPC UA TCP (UACP, Part 6 §7.1)
 * and of the secure channel (Part 6 §6.7), as a pure state machine.
 *
 * It takes bytes and the time as parameters and never does I/O, so it is
 * driven alike by the worker's sockets, by unit tests and by the fuzzer
 * (STYLE §1; open62541's ua_securechannel.h does the same).
 *
 *   bytes --ua_sc_frame--> one whole chunk --ua_sc_process--> either
 *     - nothing yet (an intermediate chunk was absorbed),
 *     - protocol replies appended to `out` (ACK, OpenSecureChannel response),
 *     - a complete service request (msg->body: the type NodeId and body),
 *     - a Bad status: send ua_sc_write_err() and close the connection.
 *   ua_sc_send() chunks a service response into `out`, leaving room in each
 *   chunk for the security header, padding and signature that the security
 *   policies fill in place (issue "Security").
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
 */
#ifndef UA_SECURECHANNEL_H
#define UA_SECURECHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "codec.h"
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
};

/* A fresh channel with the given id (unique per worker, never 0). */
void ua_sc_init(struct ua_sc *ch, const struct ua_sc_config *cfg,
                const struct ua_sc_mem *mem, uint32_t channel_id);

/* Release reassembly memory. */
void ua_sc_clear(struct ua_sc *ch);

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
 */
ua_status ua_sc_process(struct ua_sc *ch, const uint8_t *chunk, size_t len,
                        uint64_t now_ms, struct ua_sc_out *out,
                        struct ua_sc_msg *msg);

/*
 * Encode a service response (its type NodeId, then the body) as MSG chunks
 * into out.  Fails with BadResponseTooLarge when it exceeds the peer's
 * MaxMessageSize or MaxChunkCount (the caller then sends a ServiceFault),
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

#endif /* UA_SECURECHANNEL_H */
