/*
 * tests/lib/uaconn.h: a small BLOCKING OPC UA client over one TCP socket,
 * built on the pure client state machine of proto/client.h.  For the
 * integration tests, the bad-input tests and the benchmark tool; never
 * part of libproto or of the server.
 *
 * Link: the test program + tests/lib/uaconn.c + libproto.a (or the proto
 * .c files).
 *
 *   struct uaconn c;
 *   uaconn_init(&c);
 *   uaconn_connect(&c, "127.0.0.1", 4840)      // -errno on failure
 *   uaconn_hello(&c, NULL)                      // HEL/ACK
 *   uaconn_open(&c, 0)                          // OPN Issue
 *   uaconn_session(&c)                          // CreateSession + anonymous
 *                                               //   ActivateSession
 *   uaconn_call(&c, &ua_types[UA_TYPE_READREQUEST], &req,
 *               &ua_types[UA_TYPE_READRESPONSE], &resp, &arena)
 *   uaconn_close_session(&c); uaconn_close(&c); uaconn_clear(&c);
 *   (uaconn_start() does connect..session in one call.)
 *
 * Every wait is bounded by c.timeout_ms (default 5000): a timeout is
 * UA_BAD_TIMEOUT.  A ServiceFault comes back as its ServiceResult with
 * the response's ResponseHeader filled (ua_client_decode()).  An ERR from
 * the server is returned as its status; c.err_reason holds the reason.
 *
 * Raw mode, for bad-input tests: uaconn_raw_send() writes any bytes,
 * uaconn_raw_recv() reads what comes back, uaconn_raw_chunk() reads one
 * whole UACP chunk (and decodes an ERR), uaconn_raw_closed() tells whether
 * the server closed the connection.
 *
 * Not thread-safe: one uaconn per thread.
 */
#ifndef UACONN_H
#define UACONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/arena.h"
#include "proto/client.h"
#include "proto/types.h"

#define UACONN_TIMEOUT_MS   5000
#define UACONN_REASON_MAX   256
#define UACONN_URL_MAX      512

struct uaconn {
    int               fd;               /* -1: not connected */
    int               timeout_ms;       /* every blocking wait */
    struct ua_client  cl;               /* the state machine */
    struct ua_client_config cfg;        /* set before uaconn_hello() */
    char              url[UACONN_URL_MAX];  /* EndpointUrl sent in HEL */
    /* Receive buffer: one chunk at most is kept between calls. */
    uint8_t          *rbuf;
    size_t            rcap;
    size_t            rlen;
    size_t            rskip;            /* consumed bytes still in rbuf */
    /* Send buffer, grown as needed. */
    uint8_t          *wbuf;
    size_t            wcap;
    /* Reassembly buffer handed to the client (cfg.max_message bytes). */
    uint8_t          *abuf;
    size_t            acap;
    /* Session (after uaconn_session()). */
    struct ua_nodeid  session_id;
    uint8_t           session_buf[UA_CLIENT_TOKEN_MAX];
    bool              session_active;
    double            session_timeout_ms;   /* revised */
    /* Scratch arena for the session handshake. */
    struct ua_arena   arena;
    uint8_t          *arena_buf;
    /* The last ERR the server sent (status and reason). */
    ua_status         err;
    char              err_reason[UACONN_REASON_MAX];
    /*
     * Message security (NULL: None), set on the client by uaconn_connect().
     * With it uaconn_session() sends sec->cert as clientCertificate and
     * app_uri as ApplicationUri, checks the serverSignature
     * (server_sig_status) and signs ActivateSession.
     */
    const struct ua_client_security *sec;
    const char       *app_uri;
    ua_status         server_sig_status;
    /* user != NULL: uaconn_session() logs in with a UserNameIdentityToken,
     * the password encrypted for the server's certificate (from
     * CreateSession) by the channel's policy, or Basic256Sha256 on None. */
    const char       *user;
    const char       *password;
    /* user_cert != NULL: an X509IdentityToken with this certificate and a
     * userTokenSignature by user_key (same policy choice as above). */
    const uint8_t    *user_cert;
    size_t            user_cert_len;
    struct ua_crypto_key *user_key;
    /* activate_later: uaconn_session() encodes ActivateSession but sends
     * nothing (uaconn_activate_send, then uaconn_activate_wait): several
     * connections' logins can reach the server at once. */
    bool              activate_later;
    /* src_addr != NULL: the local IPv4 address to connect from (another
     * loopback address than 127.0.0.1: the server sees another client). */
    const char       *src_addr;
    uint32_t          activate_id;
    size_t            activate_len;     /* encoded bytes in wbuf */
};

/* A disconnected uaconn with default settings (no allocation). */
void uaconn_init(struct uaconn *c);

/* Close the socket and free every buffer; c may be reused after init. */
void uaconn_clear(struct uaconn *c);

/*
 * Connect to host:port (numeric or a name; TCP_NODELAY set) and allocate
 * the buffers from c->cfg.  Returns 0 or a negative errno (-ETIMEDOUT).
 * Sets c->url to "opc.tcp://host:port" unless already set.
 */
int uaconn_connect(struct uaconn *c, const char *host, uint16_t port);

/* HEL, wait for ACK.  url NULL: c->url. */
ua_status uaconn_hello(struct uaconn *c, const char *url);

/* OPN Issue (lifetime_ms 0: c->cfg.lifetime_ms); wait for the response. */
ua_status uaconn_open(struct uaconn *c, uint32_t lifetime_ms);

/* OPN Renew; wait for the response. */
ua_status uaconn_renew(struct uaconn *c);

/*
 * CreateSession (32-byte client nonce) and ActivateSession with an
 * AnonymousIdentityToken whose policyId is that of the endpoint's
 * anonymous UserTokenPolicy (or "anonymous" when none is listed).
 */
ua_status uaconn_session(struct uaconn *c);

/* connect + hello + open + session; the first failure is returned (a
 * connect failure as UA_BAD_COMMUNICATION_ERROR). */
ua_status uaconn_start(struct uaconn *c, const char *host, uint16_t port);

/* uaconn_init + uaconn_start, tried every 200 ms for up to ms (a broker
 * still starting): the last status; on failure c is cleared. */
ua_status uaconn_start_retry(struct uaconn *c, const char *host,
                             uint16_t port, unsigned ms);

/*
 * Send req (type req_t, RequestHeader filled from the session) and wait
 * for its response, decoded as resp_t into resp in arena a.  Returns the
 * response's ServiceResult (Good, or the ServiceFault's code), or the
 * transport/channel error.  Responses to other request ids that arrive
 * meanwhile are dropped.
 */
ua_status uaconn_call(struct uaconn *c, const struct ua_type *req_t,
                      void *req, const struct ua_type *resp_t, void *resp,
                      struct ua_arena *a);

/* Pipelining: send one request without waiting (id in *request_id) ... */
ua_status uaconn_send(struct uaconn *c, const struct ua_type *req_t,
                      void *req, uint32_t *request_id);

/* ... and wait for the next complete event (EV_MSG, EV_OPEN, ...).  The
 * event's body is valid until the next receive on c. */
ua_status uaconn_recv(struct uaconn *c, struct ua_client_event *ev);

/* CloseSession(deleteSubscriptions = true). */
ua_status uaconn_close_session(struct uaconn *c);

/* Read Server_ServerStatus_CurrentTime's Value (arena reset first): the
 * service result, else the operation's status (Bad when not one result). */
ua_status uaconn_read_time(struct uaconn *c, struct ua_arena *arena);

struct ua_create_subscription_response;

/*
 * CreateSubscription (interval ms, lifetime and keep-alive counts,
 * publishing on), then one monitored item on node's Value (client handle
 * 1, sampling ms, queue 100, discardOldest): the first Bad status, else the
 * item's.  *sub gets the subscription's response (its id and revisions)
 * when it was created.  The arena is reset first.
 */
ua_status uaconn_subscribe1(struct uaconn *c, struct ua_arena *arena,
                            double interval, uint32_t lifetime,
                            uint32_t keep_alive, struct ua_nodeid node,
                            double sampling,
                            struct ua_create_subscription_response *sub);

/*
 * The values one monitored item reports, checked as a sequence: each a
 * scalar of the integer type given to uaconn_seq_init (Int32 or UInt32)
 * one more than the last (a counter).
 * uaconn_seq_take() runs every MonitoredItemNotification of m's
 * DataChangeNotifications through q and returns how many there were.
 */
struct uaconn_seq {
    uint8_t  type;              /* UA_BT_INT32 or UA_BT_UINT32 */
    int64_t  last;              /* INT64_MIN: none yet */
    int64_t  last_src;          /* its source timestamp (0: none) */
    int64_t  oldest_src;        /* the oldest source timestamp of the last
                                 * message taken (INT64_MAX: none) */
    uint64_t values;
    uint64_t breaks;            /* not a scalar of type, or not last + 1 */
    uint64_t src_breaks;        /* no source timestamp, or not newer */
    uint64_t overflows;         /* with the Overflow InfoBits */
};

struct ua_notification_message;
void uaconn_seq_init(struct uaconn_seq *q, uint8_t type);
uint32_t uaconn_seq_take(struct uaconn_seq *q,
                         const struct ua_notification_message *m);

/* With activate_later: send the encoded ActivateSession; wait for its
 * response (its ServiceResult, or a transport/channel error). */
ua_status uaconn_activate_send(struct uaconn *c);
ua_status uaconn_activate_wait(struct uaconn *c);

/* CLO, then close the socket (buffers stay until uaconn_clear()). */
ua_status uaconn_close(struct uaconn *c);

/* ------------------------------------------------------------ raw mode */

/* Write all n bytes (blocking, bounded by timeout_ms): 0 or -errno
 * (-EPIPE/-ECONNRESET when the server has closed). */
int uaconn_raw_send(struct uaconn *c, const void *p, size_t n);

/* Read what is there (waits up to timeout_ms for the first byte):
 * > 0 bytes, 0 on orderly close, -ETIMEDOUT, or -errno (-ECONNRESET). */
ssize_t uaconn_raw_recv(struct uaconn *c, void *buf, size_t cap);

/*
 * Read one whole UACP chunk (up to cap bytes) into buf; *len its size.
 * Returns UA_GOOD, UA_BAD_CONNECTION_CLOSED (closed first), UA_BAD_TIMEOUT;
 * when the chunk is an ERR, c->err/err_reason are set and c->err returned.
 */
ua_status uaconn_raw_chunk(struct uaconn *c, uint8_t *buf, size_t cap,
                           size_t *len);

/* True when the server closed the connection within timeout_ms (reads and
 * discards anything that arrives meanwhile). */
bool uaconn_raw_closed(struct uaconn *c);

#endif /* UACONN_H */
