/*
 * tests/bench/uabench.c: an OPC UA load generator for any OPC UA server
 * (opc.tcp, anonymous sessions; SecurityPolicy None, or with --security
 * POLICY:MODE an RSA policy in Sign or SignAndEncrypt mode).
 *
 * One process, one thread, one epoll loop over non-blocking sockets.  Every
 * session is its own TCP connection with its own secure channel and session;
 * proto/client.h frames, secures (None) and sequences the chunks, the codec
 * encodes the requests and checks the responses.  Nothing blocks on the hot
 * path: the only blocking calls are the stats endpoint's HTTP GETs at the
 * edges of the measuring window, and the discovery below.
 *
 *   DISCOVER with --security: GetEndpoints on a None channel (blocking),
 *            the endpoint of our policy and mode, its server certificate
 *            checked (ub_server_cert_check: chain, signatures, policy,
 *            validity, ApplicationUri, usage; trusted through
 *            --server-trust FILE or as its own anchor)
 *   SETUP    connect, HEL/ACK, OPN, CreateSession, ActivateSession (all
 *            sessions at once, through the same loop); secured: our
 *            certificate in OPN and CreateSession, the CreateSession's
 *            serverCertificate must be the discovered one and its
 *            serverSignature must verify, ActivateSession carries our
 *            clientSignature
 *   WARMUP   load, not measured (--warmup S)
 *   MEASURE  load; latency, ops, client and server CPU, server allocations
 *   DRAIN    no new requests; wait (bounded) for those in flight
 *   CLOSE    CloseSession + CLO on every session, close the sockets
 *
 * Load: each session keeps --depth requests in flight (pipelined on its
 * channel).  Every response is checked (type, ServiceResult, number of
 * results, the first result's status) and immediately replaced by a new
 * request; all requests made ready in one loop iteration leave in one send()
 * per connection.  Latency is taken from just before that send() to just
 * after the read() that brought the response, into a log-linear histogram
 * (no allocation per request).
 *
 * An op is one service call (a Read of 100 values is one op).  In the
 * subscription scenarios (sub, fanout) an op is one delivered notification
 * (a MonitoredItemNotification in a PublishResponse) and the latency is
 * from the value's source timestamp (the broker stamps it when it applies
 * the writer's Write) to the read() that brought the notification (both
 * clocks are this machine's CLOCK_REALTIME):
 *
 *   sub      every session subscribes to --items variables (v0 ...) at
 *            --interval ms (samplingInterval 0, queue --queue) and keeps
 *            --depth Publish requests in flight, acknowledging what came;
 *            one more session, the writer, changes every one of those
 *            variables --rate times a second (one Write of all of them)
 *   fanout   the same with 1,000 variables: K sessions (--sessions), spread
 *            over the workers, all watching the same 1,000 nodes
 *
 *   connect  each session is a connector that cycles: connect, HEL, OPN
 *            (the --security policy), CreateSession, ActivateSession
 *            (anonymous), CloseSession, CLO, close; an op is one such
 *            handshake, its latency from the connect() to the
 *            CloseSession response.  With security, one more line: the
 *            RSA ceiling (ub_rsa_report: what the server's RSA operations
 *            alone allow, their costs measured with proto/crypto.h right
 *            before and after the run)
 *
 * Client certificate (--security): --cert FILE --key FILE (DER or PEM), or
 * a fresh RSA-2048 key and self-signed certificate, which --write-cert
 * FILE / --write-key FILE write out (without --url uabench only writes
 * them: a script puts the certificate into the server's trust list).
 *
 * A server that coalesces changes inside a sampling interval (uabroker's
 * limits.min_sampling_interval_ms, default 50) delivers fewer than it was
 * sent; bench_server.sh runs uabroker with that limit at 0.
 *
 * Server CPU: utime+stime from /proc/PID/stat of every --server-pid and of
 * every pid the uabroker stats endpoint (--stats) lists, over the window,
 * per op (10 ms ticks: use windows of seconds).  Server allocations: the
 * uabroker workers' `allocations` counters from /stats, before and after
 * the window, per op.
 *
 * Scenarios are rows of ub_scenarios[]: a request type, a response type, the
 * type of the response's results and three small functions (build the
 * request, advance it before each send, read the first result's status).
 *
 * Output: one line per run,
 *   scenario=read1 sessions=20 depth=1 ops/s=... p50_us=... p90_us=...
 *   p99_us=... client_cpu_us/op=... server_cpu_us/op=... server_allocs/op=...
 *   errors=N other_load_cores=... security=None
 * (connect with security: a second line, rsa_ceiling: ...)
 * or, with --markdown, one Markdown table row (--markdown-header prints the
 * header).  other_load_cores is the CPU the rest of the machine used during
 * the window (busy time in /proc/stat less ours and the server's): a run
 * that others disturbed shows it.  "-" marks a figure that could not be
 * measured (no server pid known, no stats endpoint).  Exit status:
 * 0 when the run completed without errors, 1 when errors were counted,
 * 2 on a usage error or when no session could be set up.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/cert.h"
#include "proto/client.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

#define UB_SESSIONS_MAX   10000
#define UB_DEPTH_MAX      256
#define UB_SECONDS_MAX    3600
#define UB_SETUP_MS       15000         /* every session set up by then */
#define UB_DRAIN_MS       2000          /* in-flight responses waited for */
#define UB_STATS_MS       2000          /* one stats GET */
#define UB_PIDS_MAX       80
#define UB_READ_N         100           /* values in one read100 Read */
#define UB_WRITE_N        100           /* values in one write100 Write */
#define UB_SUB_ACKS       16            /* acknowledgements kept per session */
#define UB_SUB_ITEMS_MAX  10000         /* --items */
#define UB_ARENA          (1u << 20)
#define UB_RESP_MAX       (256u << 10)  /* reassembled response, per session */
#define UB_NAME_MAX       64
#define UB_NONCE          32            /* CreateSession clientNonce */
#define UB_DISC_MS        5000          /* GetEndpoints, blocking */
#define UB_KEY_BITS       2048          /* a generated client key */
#define UB_RSA_BATCHES    5             /* RSA cost: batches, the best */
#define UB_RSA_BATCH_US   40000         /* CPU time per batch, at least */

/* Latency histogram: 64 linear buckets, then 32 per power of two. */
#define UB_H_LINEAR       64
#define UB_H_SUB          32
#define UB_H_BUCKETS      (UB_H_LINEAR + 42 * UB_H_SUB)


enum ub_phase { UB_SETUP, UB_WARMUP, UB_MEASURE, UB_DRAIN, UB_DONE };

enum ub_sstate {
    UB_S_CONNECTING = 0,
    UB_S_HEL,               /* HEL sent, waiting for ACK */
    UB_S_OPN,               /* OPN sent */
    UB_S_CREATE,            /* CreateSession sent */
    UB_S_ACTIVATE,          /* ActivateSession sent */
    UB_S_SUBSCRIBE,         /* sub, fanout: CreateSubscription sent */
    UB_S_ITEMS,             /* sub, fanout: CreateMonitoredItems sent */
    UB_S_CLOSING,           /* connect: CloseSession sent */
    UB_S_READY,             /* load */
    UB_S_DEAD,              /* closed after an error */
    UB_S_IDLE               /* connect: cycle done, socket closed */
};

/* One request in flight. */
struct ub_slot {
    uint32_t request_id;    /* 0: free */
    uint64_t sent_ns;       /* 0: not sent yet (stamped at the send()) */
};

struct ub;

struct ub_sess {
    struct ub         *b;
    int                fd;
    uint32_t           idx;
    uint8_t            state;           /* enum ub_sstate */
    bool               counted;         /* in b->ready */
    bool               dirty;           /* on the flush list */
    bool               want_out;        /* EPOLLOUT armed */
    struct ua_client   cl;
    uint32_t           setup_request;   /* CreateSession / ActivateSession */
    uint8_t            nonce[UB_NONCE]; /* our CreateSession clientNonce */
    uint64_t           cycle_ns;        /* connect: this cycle's connect() */
    /* Received bytes: at most one partial chunk is kept between reads. */
    uint8_t           *rbuf;
    size_t             rcap;
    size_t             rlen;
    /* Bytes to send: requests queued since the last send(). */
    uint8_t           *wbuf;
    struct ua_sc_out   out;
    uint8_t           *abuf;            /* multi-chunk responses */
    /* Requests in flight. */
    struct ub_slot     slots[UB_DEPTH_MAX];
    uint32_t           inflight;
    uint32_t           unstamped;       /* queued, not yet sent */
    /* The request, built once and advanced before every send. */
    void              *req;
    uint32_t           cursor;          /* rotation over the variables */
    uint32_t           next_renew_check_ms;
    /* sub, fanout: the writer session, or a subscriber's acknowledgements
     * for its next Publish. */
    bool               writer;
    uint64_t           write_next_ns;   /* writer: when the next Write goes */
    uint32_t           nacks;
    struct ua_subscription_acknowledgement acks[UB_SUB_ACKS];
};

struct ub_scenario {
    const char *name;
    const char *what;
    uint16_t    req_type;               /* index into ua_types[] */
    uint16_t    resp_type;
    uint16_t    result_type;            /* element of the results array */
    int32_t     nresults;               /* results expected per response */
    /* Allocate and fill s->req (from b's arena-free heap, at setup). */
    int       (*init)(struct ub *b, struct ub_sess *s);
    /* Advance s->req before it is sent again (rotate node ids). */
    void      (*next)(struct ub *b, struct ub_sess *s);
    /* The status of the first result (decoded, of result_type). */
    ua_status (*status)(const void *result);
};

/*
 * What the server's RSA operations cost on this machine (µs of CPU each,
 * measured with proto/crypto.h on keys of the sizes in play): private ops
 * with a key of the server's size, public ops with one of the client's.
 */
struct ub_rsa {
    bool   ok;
    double sign_us;             /* the policy's signature, private */
    double decrypt_us;          /* one block, private */
    double verify_us;           /* the policy's signature, public */
    double encrypt_us;          /* one block, public */
    double cert_us;             /* a certificate's signature (PKCS#1
                                   SHA-256), public */
    double csign_us;            /* the client's: sign, decrypt a block */
    double cdecrypt_us;         /*   (its key), verify, encrypt a block */
    double cverify_us;          /*   (the server's key) */
    double cencrypt_us;
};

struct ub_stats_sample {
    bool     ok;
    uint64_t allocations;       /* sum over the workers */
    int      npids;
    int      pids[UB_PIDS_MAX];
};

struct ub {
    /* Options. */
    char                      url[512];
    char                      host[256];
    char                      port[16];
    uint32_t                  nsess;
    uint32_t                  depth;
    double                    seconds;
    double                    warmup;
    const struct ub_scenario *sc;
    uint16_t                  vars_ns;
    char                      vars_prefix[32];
    uint32_t                  vars_count;
    int32_t                   timestamps;       /* TimestampsToReturn */
    uint32_t                  items;            /* sub, fanout: --items */
    double                    interval;         /* --interval ms */
    double                    rate;             /* --rate changes/s */
    uint32_t                  queue;            /* --queue */
    uint32_t                  nsub;             /* subscriber sessions */
    bool                      is_sub;           /* sub, fanout */
    bool                      markdown;
    bool                      quiet;
    char                      stats_host[256];
    char                      stats_port[16];
    bool                      stats;
    int                       npids;            /* --server-pid */
    int                       pids[UB_PIDS_MAX];
    bool                      is_connect;       /* connect */
    /* Security (--security, --cert, --key).  policy NULL: None. */
    const struct ua_policy   *policy;
    uint8_t                   mode;             /* MessageSecurityMode */
    const char               *cert_file;
    const char               *key_file;
    const char               *write_cert;
    const char               *write_key;
    const char               *trust_file;       /* --server-trust */
    uint8_t                  *cert;             /* ours, DER */
    size_t                    cert_len;
    struct ua_crypto_key      key;              /* ours, private */
    struct ua_crypto_key      key2;             /* RSA costs: a key of the
                                                   server's size */
    struct ua_crypto_key      cpub;             /* ours, public (cert) */
    struct ua_crypto_key      key2pub;          /* key2's public half */
    char                      app_uri[256];     /* our certificate's URI */
    uint8_t                  *server_cert;      /* from GetEndpoints */
    size_t                    server_cert_len;
    unsigned                  server_bits;
    char                      anon_policy[128]; /* anonymous PolicyId */
    uint8_t                  *scratch;          /* session signatures */
    /* connect: RSA blocks of the OPN request and response (per the chunk
     * sizes seen), the RSA costs before and after the window. */
    uint32_t                  opn_req_blocks;
    uint32_t                  opn_resp_blocks;
    struct ub_rsa             rsa0, rsa1;
    /* Variables' node ids: "v0" ... */
    struct ua_string         *vars;
    char                     *vars_mem;
    /* Runtime. */
    struct addrinfo          *ai;
    int                       ep;
    struct ub_sess           *sess;
    struct ub_sess          **flush;            /* dirty sessions */
    uint32_t                  nflush;
    enum ub_phase             phase;
    uint64_t                  now_ns;           /* CLOCK_MONOTONIC */
    int64_t                   now_dt;           /* DateTime, per iteration */
    uint32_t                  ready;
    uint32_t                  dead;
    struct ua_arena           arena;
    uint8_t                  *arena_buf;
    /* sub, fanout: the writer's request, values and round. */
    struct ua_write_request   wreq;
    struct ua_write_value    *wv;
    int32_t                  *wi;
    double                   *wd;
    uint32_t                  wround;
    uint64_t                  lag_writes;       /* Writes sent late */
    uint64_t                  overflows;        /* notifications with the
                                                   Overflow bit */
    /* Counters. */
    uint64_t                  ops;              /* in the window */
    uint64_t                  errors;
    uint64_t                  hist[UB_H_BUCKETS];
    uint64_t                  hist_n;
    ua_status                 first_error;
    char                      first_error_what[128];
    /* Window samples. */
    uint64_t                  t0_ns, t1_ns;
    double                    cli_cpu0, cli_cpu1;   /* µs */
    double                    srv_cpu0, srv_cpu1;   /* µs */
    double                    all_cpu0, all_cpu1;   /* µs, whole machine */
    bool                      all_cpu_ok;
    bool                      srv_cpu_ok;
    struct ub_stats_sample    st0, st1;
};

static void ub_usage(FILE *f);
static int ub_args(struct ub *b, int argc, char **argv);
static int ub_security_arg(struct ub *b, const char *arg);
static int ub_load_cert(const char *path, uint8_t **der, size_t *len);
static int ub_parse_url(const char *url, const char *scheme, char *host,
                        size_t hcap, char *port, size_t pcap);
static uint64_t ub_mono_ns(void);
static int64_t ub_now_dt(void);
static double ub_self_cpu_us(void);
static bool ub_pid_cpu_us(int pid, double *us);
static bool ub_server_cpu_us(struct ub *b, double *us);
static bool ub_machine_cpu_us(double *us);
static bool ub_stats_fetch(struct ub *b, struct ub_stats_sample *st);
static void ub_hist_add(struct ub *b, uint64_t ns);
static double ub_hist_pct(const struct ub *b, double pct);
static void ub_error(struct ub *b, struct ub_sess *s, ua_status st,
                     const char *what);
static int ub_sess_start(struct ub *b, struct ub_sess *s);
static void ub_sess_kill(struct ub *b, struct ub_sess *s, ua_status st,
                         const char *what);
static void ub_sess_dirty(struct ub *b, struct ub_sess *s);
static void ub_sess_flush(struct ub *b, struct ub_sess *s);
static void ub_sess_readable(struct ub *b, struct ub_sess *s);
static void ub_sess_writable(struct ub *b, struct ub_sess *s);
static void ub_sess_event(struct ub *b, struct ub_sess *s,
                          const struct ua_client_event *ev);
static void ub_sess_setup_msg(struct ub *b, struct ub_sess *s,
                              const struct ua_client_event *ev);
static void ub_sess_response(struct ub *b, struct ub_sess *s,
                             const struct ua_client_event *ev);
static void ub_sess_refill(struct ub *b, struct ub_sess *s);
static ua_status ub_send_request(struct ub *b, struct ub_sess *s,
                                 const struct ua_type *t, void *req,
                                 uint32_t *request_id);
static ua_status ub_check(struct ub *b, const struct ub_scenario *sc,
                          const uint8_t *body, size_t len);
static void ub_phase_to(struct ub *b, enum ub_phase p);
static void ub_close_all(struct ub *b);
static void ub_report(struct ub *b);
static void ub_sess_ready(struct ub *b, struct ub_sess *s);

static int ub_sec_init(struct ub *b);
static int ub_read_file(const char *path, uint8_t **buf, size_t *len);
static int ub_write_file(const char *path, const uint8_t *buf, size_t len);
static int ub_discover(struct ub *b);
static ua_status ub_disc_wait(int fd, struct ua_client *cl, uint8_t *rbuf,
                              size_t rcap, size_t *rlen, size_t *used,
                              struct ua_client_event *ev);
static ua_status ub_server_cert_check(struct ub *b,
                                      const struct ua_endpoint_description *e);
static void ub_anon_policy(struct ub *b,
                           const struct ua_endpoint_description *e,
                           int32_t n);
static ua_status ub_session_sigs(struct ub *b, struct ub_sess *s,
                                 const struct ua_create_session_response *r,
                                 struct ua_signature_data *sig);
static int ub_connect_init(struct ub *b, struct ub_sess *s);
static void ub_connect_next(struct ub *b, struct ub_sess *s);
static void ub_connect_close_session(struct ub *b, struct ub_sess *s);
static void ub_connect_closed(struct ub *b, struct ub_sess *s,
                              const struct ua_client_event *ev);
static void ub_opn_blocks(struct ub *b, const uint8_t *chunk, size_t len,
                          size_t key_bytes, uint32_t *blocks);
static double ub_cpu_now_us(void);
static int ub_rsa_measure(struct ub *b, struct ub_rsa *r);
static void ub_rsa_report(FILE *f, struct ub *b, double hs, double srv_us,
                          double secs);

static int ub_read_init(struct ub *b, struct ub_sess *s, int32_t n);
static int ub_read1_init(struct ub *b, struct ub_sess *s);
static int ub_read100_init(struct ub *b, struct ub_sess *s);
static void ub_read_next(struct ub *b, struct ub_sess *s);
static ua_status ub_read_status(const void *result);
static int ub_browse_init(struct ub *b, struct ub_sess *s);
static void ub_browse_next(struct ub *b, struct ub_sess *s);
static ua_status ub_browse_status(const void *result);
static int ub_write100_init(struct ub *b, struct ub_sess *s);
static void ub_write_next(struct ub *b, struct ub_sess *s);
static ua_status ub_write_status(const void *result);
static int ub_sub_init(struct ub *b, struct ub_sess *s);
static void ub_sub_next(struct ub *b, struct ub_sess *s);
static ua_status ub_sub_status(const void *result);
static bool ub_sub_setup(struct ub *b, struct ub_sess *s);
static void ub_sub_setup_msg(struct ub *b, struct ub_sess *s,
                             const struct ua_client_event *ev);
static void ub_sub_response(struct ub *b, struct ub_sess *s,
                            const struct ua_client_event *ev);
static int ub_sub_writer_init(struct ub *b);
static uint32_t ub_sub_items(const struct ub_scenario *sc);
static uint64_t ub_sub_write(struct ub *b);

/* ------------------------------------------------------------ scenarios */

static const struct ub_scenario ub_scenarios[] = {
    { "read1", "Read of 1 Value attribute, rotating over the variables",
      UA_TYPE_READREQUEST, UA_TYPE_READRESPONSE, UA_TYPE_DATAVALUE, 1,
      ub_read1_init, ub_read_next, ub_read_status },
    { "read100", "one Read of 100 Value attributes",
      UA_TYPE_READREQUEST, UA_TYPE_READRESPONSE, UA_TYPE_DATAVALUE,
      UB_READ_N, ub_read100_init, ub_read_next, ub_read_status },
    { "browse", "Browse of the Server object (ns=0;i=2253), all references, "
      "forward, all result fields",
      UA_TYPE_BROWSEREQUEST, UA_TYPE_BROWSERESPONSE, UA_TYPE_BROWSERESULT, 1,
      ub_browse_init, ub_browse_next, ub_browse_status },
    { "write100", "one Write of 100 Values (Int32 to even vN, Double to "
      "odd), new values every time, rotating over the variables",
      UA_TYPE_WRITEREQUEST, UA_TYPE_WRITERESPONSE, UA_TYPE_STATUSCODE,
      UB_WRITE_N, ub_write100_init, ub_write_next, ub_write_status },
    { "sub", "each session subscribes to --items variables (100) at "
      "--interval ms and keeps --depth Publishes in flight; a writer "
      "session changes them --rate times a second; op = a notification",
      UA_TYPE_PUBLISHREQUEST, UA_TYPE_PUBLISHRESPONSE, UA_TYPE_STATUSCODE,
      0, ub_sub_init, ub_sub_next, ub_sub_status },
    { "fanout", "sub with all sessions watching the same 1,000 variables",
      UA_TYPE_PUBLISHREQUEST, UA_TYPE_PUBLISHRESPONSE, UA_TYPE_STATUSCODE,
      0, ub_sub_init, ub_sub_next, ub_sub_status },
    { "connect", "connect, HEL, OpenSecureChannel (--security), "
      "CreateSession, ActivateSession (anonymous), CloseSession, CLO, "
      "close; op = one such handshake, per --sessions connector",
      UA_TYPE_CLOSESESSIONREQUEST, UA_TYPE_CLOSESESSIONRESPONSE,
      UA_TYPE_STATUSCODE, 0, ub_connect_init, ub_connect_next, NULL },
};

/* The subscription scenarios and their default --items. */
static uint32_t
ub_sub_items(const struct ub_scenario *sc)
{
    if (sc->init != ub_sub_init)
        return 0;
    return strcmp(sc->name, "fanout") == 0 ? 1000 : 100;
}
#define UB_NSCENARIOS (sizeof(ub_scenarios) / sizeof(ub_scenarios[0]))

static int
ub_read_init(struct ub *b, struct ub_sess *s, int32_t n)
{
    struct ua_read_request  *r = calloc(1, sizeof(*r));
    struct ua_read_value_id *ids = calloc((size_t)n, sizeof(*ids));

    if (r == NULL || ids == NULL) {
        free(r);
        free(ids);
        return -1;
    }
    r->max_age = 0;
    r->timestamps_to_return = b->timestamps;
    r->n_nodes_to_read = n;
    r->nodes_to_read = ids;
    for (int32_t i = 0; i < n; i++) {
        ids[i].node_id.ns = b->vars_ns;
        ids[i].node_id.idtype = UA_IDTYPE_STRING;
        ids[i].attribute_id = UA_ATTR_VALUE;
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
    }
    s->req = r;
    /* Spread the sessions over the variables. */
    s->cursor = (uint32_t)(((uint64_t)s->idx * 7919u) % b->vars_count);
    ub_read_next(b, s);
    return 0;
}

static int
ub_read1_init(struct ub *b, struct ub_sess *s)
{
    return ub_read_init(b, s, 1);
}

static int
ub_read100_init(struct ub *b, struct ub_sess *s)
{
    return ub_read_init(b, s, UB_READ_N);
}

static void
ub_read_next(struct ub *b, struct ub_sess *s)
{
    struct ua_read_request *r = s->req;

    for (int32_t i = 0; i < r->n_nodes_to_read; i++) {
        r->nodes_to_read[i].node_id.id.str = b->vars[s->cursor];
        if (++s->cursor == b->vars_count)
            s->cursor = 0;
    }
}

static ua_status
ub_read_status(const void *result)
{
    const struct ua_datavalue *dv = result;

    if (dv->mask & UA_DV_STATUS)
        return dv->status;
    if (!(dv->mask & UA_DV_VALUE))
        return UA_BAD_UNEXPECTED_ERROR;     /* Good but no value */
    return UA_GOOD;
}

static int
ub_browse_init(struct ub *b, struct ub_sess *s)
{
    struct ua_browse_request     *r = calloc(1, sizeof(*r));
    struct ua_browse_description *d = calloc(1, sizeof(*d));

    (void)b;
    if (r == NULL || d == NULL) {
        free(r);
        free(d);
        return -1;
    }
    r->view.view_id = ua_nodeid_num(0, 0);
    r->requested_max_references_per_node = 0;
    r->n_nodes_to_browse = 1;
    r->nodes_to_browse = d;
    d->node_id = ua_nodeid_num(0, UA_NS0ID_SERVER);
    d->browse_direction = 0;                        /* Forward */
    d->reference_type_id = ua_nodeid_num(0, 0);     /* all references */
    d->include_subtypes = true;
    d->node_class_mask = 0;                         /* all classes */
    d->result_mask = 0x3F;                          /* BrowseResultMask All */
    s->req = r;
    return 0;
}

static void
ub_browse_next(struct ub *b, struct ub_sess *s)
{
    (void)b;
    (void)s;
}

static ua_status
ub_browse_status(const void *result)
{
    const struct ua_browse_result *r = result;

    if (UA_STATUS_IS_BAD(r->status_code))
        return r->status_code;
    if (r->n_references <= 0)
        return UA_BAD_UNEXPECTED_ERROR;     /* the Server object has some */
    if (r->continuation_point.len > 0)
        return UA_BAD_UNEXPECTED_ERROR;     /* would leak a point per op */
    return UA_GOOD;
}

/* A write100 request and the values it points at. */
struct ub_write100 {
    struct ua_write_request r;          /* first: s->req points here */
    struct ua_write_value   wv[UB_WRITE_N];
    int32_t                 iv[UB_WRITE_N];
    double                  dv[UB_WRITE_N];
    uint32_t                round;
};

static int
ub_write100_init(struct ub *b, struct ub_sess *s)
{
    struct ub_write100 *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return -1;
    w->r.n_nodes_to_write = UB_WRITE_N;
    w->r.nodes_to_write = w->wv;
    for (int32_t i = 0; i < UB_WRITE_N; i++) {
        w->wv[i].node_id.ns = b->vars_ns;
        w->wv[i].node_id.idtype = UA_IDTYPE_STRING;
        w->wv[i].attribute_id = UA_ATTR_VALUE;
        w->wv[i].index_range.len = -1;
        w->wv[i].value.mask = UA_DV_VALUE;
    }
    s->req = &w->r;
    s->cursor = (uint32_t)(((uint64_t)s->idx * 7919u) % b->vars_count);
    ub_write_next(b, s);
    return 0;
}

/* The next 100 variables, new values: Int32 for even N, Double for odd. */
static void
ub_write_next(struct ub *b, struct ub_sess *s)
{
    struct ub_write100 *w = s->req;

    w->round++;
    for (int32_t i = 0; i < UB_WRITE_N; i++) {
        struct ua_variant *v = &w->wv[i].value.value;

        w->wv[i].node_id.id.str = b->vars[s->cursor];
        if (s->cursor % 2 == 0) {
            w->iv[i] = (int32_t)(w->round + (uint32_t)i);
            ua_variant_set_scalar(v, &w->iv[i], UA_BT_INT32);
        } else {
            w->dv[i] = w->round + i + 0.5;
            ua_variant_set_scalar(v, &w->dv[i], UA_BT_DOUBLE);
        }
        if (++s->cursor == b->vars_count)
            s->cursor = 0;
    }
}

static ua_status
ub_write_status(const void *result)
{
    return *(const ua_status *)result;
}

/* ------------------------------------------------------------ sub, fanout */

/* A subscriber's PublishRequest and the acknowledgements it carries. */
struct ub_publish {
    struct ua_publish_request              r;      /* first: s->req */
    struct ua_subscription_acknowledgement acks[UB_SUB_ACKS];
};

static int
ub_sub_init(struct ub *b, struct ub_sess *s)
{
    struct ub_publish *p = calloc(1, sizeof(*p));

    (void)b;
    if (p == NULL)
        return -1;
    s->req = &p->r;
    return 0;
}

/* The next Publish acknowledges what came since the last one. */
static void
ub_sub_next(struct ub *b, struct ub_sess *s)
{
    struct ub_publish *p = s->req;

    (void)b;
    memcpy(p->acks, s->acks, s->nacks * sizeof(s->acks[0]));
    p->r.n_subscription_acknowledgements = (int32_t)s->nacks;
    p->r.subscription_acknowledgements = p->acks;
    s->nacks = 0;
}

static ua_status
ub_sub_status(const void *result)
{
    return *(const ua_status *)result;
}

/*
 * After ActivateSession: a subscriber creates its subscription (true);
 * the writer, and every session of the other scenarios, is ready (false).
 */
static bool
ub_sub_setup(struct ub *b, struct ub_sess *s)
{
    struct ua_create_subscription_request r;
    ua_status                             st;

    if (!b->is_sub || s->writer)
        return false;
    memset(&r, 0, sizeof(r));
    r.requested_publishing_interval = b->interval;
    r.requested_lifetime_count = 3000;
    r.requested_max_keep_alive_count = 10;
    r.max_notifications_per_publish = 0;
    r.publishing_enabled = true;
    st = ub_send_request(b, s, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST],
                         &r, &s->setup_request);
    if (st != UA_GOOD)
        ub_sess_kill(b, s, st, "cannot encode CreateSubscription");
    else
        s->state = UB_S_SUBSCRIBE;
    return true;
}

/* CreateSubscription, then CreateMonitoredItems of --items variables. */
static void
ub_sub_setup_msg(struct ub *b, struct ub_sess *s,
                 const struct ua_client_event *ev)
{
    ua_status st;

    if (ev->request_id != s->setup_request) {
        ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request");
        return;
    }
    ua_arena_reset(&b->arena);
    if (s->state == UB_S_SUBSCRIBE) {
        struct ua_create_subscription_response   r;
        struct ua_create_monitored_items_request m;
        struct ua_monitored_item_create_request *it;

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE],
                              &r, &b->arena);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "CreateSubscription failed");
            return;
        }
        it = ua_arena_alloc(&b->arena, (size_t)b->items * sizeof(*it));
        if (it == NULL) {
            ub_sess_kill(b, s, UA_BAD_OUT_OF_MEMORY, "--items too many");
            return;
        }
        memset(it, 0, (size_t)b->items * sizeof(*it));
        for (uint32_t j = 0; j < b->items; j++) {
            it[j].item_to_monitor.node_id.ns = b->vars_ns;
            it[j].item_to_monitor.node_id.idtype = UA_IDTYPE_STRING;
            it[j].item_to_monitor.node_id.id.str = b->vars[j % b->vars_count];
            it[j].item_to_monitor.attribute_id = UA_ATTR_VALUE;
            it[j].item_to_monitor.index_range.len = -1;
            it[j].item_to_monitor.data_encoding.name.len = -1;
            it[j].monitoring_mode = 2;                  /* Reporting */
            it[j].requested_parameters.client_handle = j;
            it[j].requested_parameters.sampling_interval = 0;
            it[j].requested_parameters.queue_size = b->queue;
            it[j].requested_parameters.discard_oldest = true;
        }
        memset(&m, 0, sizeof(m));
        m.subscription_id = r.subscription_id;
        m.timestamps_to_return = b->timestamps;
        m.n_items_to_create = (int32_t)b->items;
        m.items_to_create = it;
        st = ub_send_request(b, s,
                             &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST],
                             &m, &s->setup_request);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "cannot encode CreateMonitoredItems");
            return;
        }
        s->state = UB_S_ITEMS;
        return;
    }
    {
        struct ua_create_monitored_items_response r;

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE],
                              &r, &b->arena);
        if (st == UA_GOOD && r.n_results != (int32_t)b->items)
            st = UA_BAD_UNEXPECTED_ERROR;
        for (int32_t i = 0; st == UA_GOOD && i < r.n_results; i++)
            st = r.results[i].status_code;
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "CreateMonitoredItems failed");
            return;
        }
        s->state = UB_S_READY;
        ub_sess_ready(b, s);
        ub_sess_refill(b, s);
    }
}

/*
 * A PublishResponse (subscriber) or WriteResponse (writer).  A subscriber
 * counts every notification as an op and its latency from the source
 * timestamp; the Publish is replaced by the next one at once.
 */
static void
ub_sub_response(struct ub *b, struct ub_sess *s,
                const struct ua_client_event *ev)
{
    struct ua_publish_response            r;
    const struct ua_notification_message *m = &r.notification_message;
    int64_t                               now_dt;
    uint32_t                              i;
    ua_status                             st;

    for (i = 0; i < b->depth; i++)
        if (s->slots[i].request_id == ev->request_id)
            break;
    if (i == b->depth || ev->request_id == 0) {
        if (b->phase < UB_DRAIN)
            ub_error(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request id");
        return;
    }
    s->slots[i].request_id = 0;
    s->inflight--;
    ua_arena_reset(&b->arena);
    if (s->writer) {
        struct ua_write_response w;

        st = ua_client_decode(&s->cl, ev, &ua_types[UA_TYPE_WRITERESPONSE],
                              &w, &b->arena);
        for (int32_t k = 0; st == UA_GOOD && k < w.n_results; k++)
            st = w.results[k];
        if (st != UA_GOOD)
            ub_error(b, s, st, "the writer's Write failed");
        return;
    }
    st = ua_client_decode(&s->cl, ev, &ua_types[UA_TYPE_PUBLISHRESPONSE], &r,
                          &b->arena);
    if (st != UA_GOOD) {
        if (b->phase < UB_DRAIN)
            ub_error(b, s, st, "Publish failed");
        ub_sess_refill(b, s);
        return;
    }
    for (int32_t k = 0; k < r.n_results; k++)
        if (r.results[k] != UA_GOOD)
            ub_error(b, s, r.results[k], "an acknowledgement failed");
    if (m->n_notification_data > 0 && s->nacks < UB_SUB_ACKS) {
        s->acks[s->nacks].subscription_id = r.subscription_id;
        s->acks[s->nacks].sequence_number = m->sequence_number;
        s->nacks++;
    }
    now_dt = ub_now_dt();
    for (int32_t k = 0; k < m->n_notification_data; k++) {
        const struct ua_data_change_notification *d;

        if (m->notification_data[k].type
            != &ua_types[UA_TYPE_DATACHANGENOTIFICATION])
            continue;
        d = m->notification_data[k].obj;
        for (int32_t j = 0; j < d->n_monitored_items; j++) {
            const struct ua_datavalue *v = &d->monitored_items[j].value;

            if ((v->mask & UA_DV_STATUS) && (v->status & 0x0480) == 0x0480)
                b->overflows++;             /* the server lost some */
            if (b->phase != UB_MEASURE)
                continue;
            b->ops++;
            if ((v->mask & UA_DV_SOURCE_TS) && now_dt >= v->source_ts)
                ub_hist_add(b, (uint64_t)(now_dt - v->source_ts) * 100u);
        }
    }
    ub_sess_refill(b, s);
}

/* The writer's Write: every watched variable, a new value each time. */
static int
ub_sub_writer_init(struct ub *b)
{
    b->wv = calloc(b->items, sizeof(*b->wv));
    b->wi = calloc(b->items, sizeof(*b->wi));
    b->wd = calloc(b->items, sizeof(*b->wd));
    if (b->wv == NULL || b->wi == NULL || b->wd == NULL)
        return -1;
    for (uint32_t j = 0; j < b->items; j++) {
        b->wv[j].node_id.ns = b->vars_ns;
        b->wv[j].node_id.idtype = UA_IDTYPE_STRING;
        b->wv[j].node_id.id.str = b->vars[j % b->vars_count];
        b->wv[j].attribute_id = UA_ATTR_VALUE;
        b->wv[j].index_range.len = -1;
        /* The broker stamps the source timestamp when it applies the
         * value (a client may not write timestamps to the Vars). */
        b->wv[j].value.mask = UA_DV_VALUE;
    }
    b->wreq.n_nodes_to_write = (int32_t)b->items;
    b->wreq.nodes_to_write = b->wv;
    return 0;
}

/*
 * Send the writer's next Write when it is due (one in flight at most); the
 * milliseconds until the next one is due (for the loop's timeout).
 */
static uint64_t
ub_sub_write(struct ub *b)
{
    struct ub_sess *s = &b->sess[b->nsess - 1];
    uint64_t        period = (uint64_t)(1e9 / b->rate), now = ub_mono_ns();
    uint32_t        id;
    ua_status       st;

    if (!s->writer || s->state != UB_S_READY
        || (b->phase != UB_WARMUP && b->phase != UB_MEASURE))
        return 100;
    if (s->write_next_ns == 0)
        s->write_next_ns = now;
    if (now < s->write_next_ns)
        return (s->write_next_ns - now) / 1000000u + 1;
    if (s->inflight > 0)
        return 1;
    b->wround++;
    for (uint32_t j = 0; j < b->items; j++) {
        struct ua_variant *v = &b->wv[j].value.value;
        uint32_t           n = j % b->vars_count;

        if (n % 2 == 0) {
            b->wi[j] = (int32_t)(b->wround + j);
            ua_variant_set_scalar(v, &b->wi[j], UA_BT_INT32);
        } else {
            b->wd[j] = b->wround + j + 0.5;
            ua_variant_set_scalar(v, &b->wd[j], UA_BT_DOUBLE);
        }
    }
    st = ub_send_request(b, s, &ua_types[UA_TYPE_WRITEREQUEST], &b->wreq,
                         &id);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "cannot encode the writer's Write");
        return 100;
    }
    s->slots[0].request_id = id;
    s->slots[0].sent_ns = 0;
    s->inflight = 1;
    s->write_next_ns += period;
    if (s->write_next_ns + period < now) {
        s->write_next_ns = now + period;        /* behind: start over */
        b->lag_writes++;
    }
    return period / 1000000u + 1;
}

/* ------------------------------------------------------------ connect */

static int
ub_connect_init(struct ub *b, struct ub_sess *s)
{
    (void)b;
    (void)s;
    return 0;
}

static void
ub_connect_next(struct ub *b, struct ub_sess *s)
{
    (void)b;
    (void)s;
}

/* The session is active: close it, the last service call of the cycle. */
static void
ub_connect_close_session(struct ub *b, struct ub_sess *s)
{
    struct ua_close_session_request r;
    ua_status                       st;

    memset(&r, 0, sizeof(r));
    r.delete_subscriptions = true;
    st = ub_send_request(b, s, &ua_types[UA_TYPE_CLOSESESSIONREQUEST], &r,
                         &s->setup_request);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "cannot encode CloseSession");
        return;
    }
    s->state = UB_S_CLOSING;
}

/*
 * CloseSession answered: one handshake done (its latency runs from the
 * connect()).  CLO, close the socket and, while loading, start the next
 * cycle on a new connection; else the connector rests (IDLE).
 */
static void
ub_connect_closed(struct ub *b, struct ub_sess *s,
                  const struct ua_client_event *ev)
{
    struct ua_close_session_response r;
    ua_status                        st;

    if (ev->request_id != s->setup_request) {
        ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request");
        return;
    }
    ua_arena_reset(&b->arena);
    st = ua_client_decode(&s->cl, ev, &ua_types[UA_TYPE_CLOSESESSIONRESPONSE],
                          &r, &b->arena);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "CloseSession failed");
        return;
    }
    if (b->phase == UB_MEASURE) {
        b->ops++;
        if (b->now_ns >= s->cycle_ns)
            ub_hist_add(b, b->now_ns - s->cycle_ns);
    }
    st = ua_client_close(&s->cl, &s->out);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "cannot encode CLO");
        return;
    }
    ub_sess_flush(b, s);
    if (s->state == UB_S_DEAD)
        return;
    epoll_ctl(b->ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->fd = -1;
    s->state = UB_S_IDLE;
    if (b->phase == UB_WARMUP || b->phase == UB_MEASURE) {
        if (ub_sess_start(b, s) != 0)
            ub_sess_kill(b, s, UA_BAD_COMMUNICATION_ERROR,
                         "cannot start the connection");
    }
}

/*
 * The RSA blocks of an OPN chunk (request or response) of a secured
 * channel: the bytes after the asymmetric security header, in blocks of
 * the receiver's key.  Kept the first time, for the RSA ceiling.
 */
static void
ub_opn_blocks(struct ub *b, const uint8_t *chunk, size_t len,
              size_t key_bytes, uint32_t *blocks)
{
    struct ua_sc_asym_hdr h;

    if (b->policy == NULL || *blocks != 0 || key_bytes == 0 || len < 12
        || memcmp(chunk, "OPN", 3) != 0
        || ua_sc_asym_parse(chunk, len, &h) != UA_GOOD || h.end >= len
        || (len - h.end) % key_bytes != 0)
        return;
    *blocks = (uint32_t)((len - h.end) / key_bytes);
}

/* ------------------------------------------------------------ security */

static int
ub_read_file(const char *path, uint8_t **buf, size_t *len)
{
    FILE  *f = fopen(path, "rb");
    long   n;

    *buf = NULL;
    if (f == NULL) {
        fprintf(stderr, "uabench: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0
        || n > (long)(UA_CERT_DER_MAX * UA_CERT_CHAIN_MAX)
        || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "uabench: %s: not a certificate or key file\n",
                path);
        fclose(f);
        return -1;
    }
    *buf = malloc((size_t)n + 1);
    if (*buf == NULL || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "uabench: %s: cannot read it\n", path);
        free(*buf);
        *buf = NULL;
        fclose(f);
        return -1;
    }
    (*buf)[n] = '\0';
    *len = (size_t)n;
    fclose(f);
    return 0;
}

static int
ub_write_file(const char *path, const uint8_t *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd == -1 || write(fd, buf, len) != (ssize_t)len) {
        fprintf(stderr, "uabench: %s: %s\n", path, strerror(errno));
        if (fd != -1)
            close(fd);
        return -1;
    }
    return close(fd) == 0 ? 0 : -1;
}

/* A certificate file, DER (a chain, leaf first) or PEM (the first one),
 * into a fresh DER buffer. */
static int
ub_load_cert(const char *path, uint8_t **der, size_t *len)
{
    uint8_t *buf;
    size_t   n;

    if (ub_read_file(path, &buf, &n) != 0)
        return -1;
    if (n > 10 && memcmp(buf, "-----BEGIN", 10) == 0) {
        *der = malloc(UA_CERT_DER_MAX);
        if (*der == NULL
            || ua_cert_from_pem((const char *)buf, n, *der, UA_CERT_DER_MAX,
                                len) != UA_GOOD) {
            fprintf(stderr, "uabench: %s: no PEM certificate\n", path);
            free(buf);
            return -1;
        }
        free(buf);
        return 0;
    }
    *der = buf;
    *len = n;
    return 0;
}

/*
 * Our certificate and key: --cert/--key, or a fresh RSA key and a
 * self-signed application instance certificate (written out with
 * --write-cert/--write-key, for a server's trust list).  Checks that the
 * key belongs to the certificate.
 */
static int
ub_sec_init(struct ub *b)
{
    struct ua_cert_der    chain[UA_CERT_CHAIN_MAX];
    struct ua_cert        c;
    size_t                n = 0, sl = 0;
    uint8_t               sig[UA_RSA_MAX_BYTES];
    static const uint8_t  probe[] = "uabench";
    ua_status             st;

    if (ua_crypto_init() != UA_GOOD) {
        fprintf(stderr, "uabench: cannot initialise the crypto library\n");
        return -1;
    }
    if (b->cert_file != NULL) {
        uint8_t *kbuf;
        size_t   klen;

        if (ub_load_cert(b->cert_file, &b->cert, &b->cert_len) != 0
            || ub_read_file(b->key_file, &kbuf, &klen) != 0)
            return -1;
        st = ua_crypto_key_load(&b->key, kbuf, klen);
        ua_crypto_wipe(kbuf, klen);
        free(kbuf);
        if (st != UA_GOOD) {
            fprintf(stderr, "uabench: %s: %s\n", b->key_file,
                    ua_status_name(st));
            return -1;
        }
    } else {
        char                 host[64] = "localhost";
        const char          *dns[1] = { host };
        struct ua_cert_params cp;

        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        snprintf(b->app_uri, sizeof(b->app_uri), "urn:%s:uabench", host);
        memset(&cp, 0, sizeof(cp));
        cp.app_uri = b->app_uri;
        cp.common_name = "uabench";
        cp.organization = "uabench";
        cp.dns = dns;
        cp.n_dns = 1;
        cp.not_before = (int64_t)time(NULL) - 3600;
        cp.days = 365;
        b->cert = malloc(UA_CERT_DER_MAX);
        if (b->cert == NULL)
            return -1;
        st = ua_crypto_key_generate(&b->key, UB_KEY_BITS);
        if (st == UA_GOOD)
            st = ua_cert_create(&cp, &b->key, b->cert, UA_CERT_DER_MAX,
                                &b->cert_len);
        if (st != UA_GOOD) {
            fprintf(stderr, "uabench: cannot make a client certificate: "
                    "%s\n", ua_status_name(st));
            return -1;
        }
    }
    if (ua_cert_chain_split(b->cert, b->cert_len, chain, UA_CERT_CHAIN_MAX,
                            &n) != UA_GOOD || n == 0
        || ua_cert_parse(chain[0].der, chain[0].len, &c) != UA_GOOD
        || c.uri == NULL || c.uri_len >= sizeof(b->app_uri)) {
        fprintf(stderr, "uabench: the client certificate does not parse or "
                "has no SubjectAltName URI (the ApplicationUri)\n");
        return -1;
    }
    memcpy(b->app_uri, c.uri, c.uri_len);
    b->app_uri[c.uri_len] = '\0';
    /* The key must be the certificate's: sign, verify with the cert. */
    if (ua_crypto_key_from_cert(&b->cpub, chain[0].der, chain[0].len)
            != UA_GOOD
        || ua_crypto_rsa_sign(&b->key, UA_RSA_SIG_PKCS1_SHA256, probe,
                              sizeof(probe), sig, sizeof(sig), &sl)
               != UA_GOOD
        || ua_crypto_rsa_verify(&b->cpub, UA_RSA_SIG_PKCS1_SHA256, probe,
                                sizeof(probe), sig, sl) != UA_GOOD) {
        fprintf(stderr, "uabench: the key is not the certificate's\n");
        return -1;
    }
    if (b->write_cert != NULL
        && ub_write_file(b->write_cert, b->cert, b->cert_len) != 0)
        return -1;
    if (b->write_key != NULL) {
        uint8_t kbuf[4 * UA_RSA_MAX_BYTES + 1024];
        size_t  klen = 0;

        if (ua_crypto_key_write(&b->key, false, kbuf, sizeof(kbuf), &klen)
                != UA_GOOD
            || ub_write_file(b->write_key, kbuf, klen) != 0)
            return -1;
        ua_crypto_wipe(kbuf, sizeof(kbuf));
    }
    return 0;
}

/*
 * The next event of a blocking discovery connection: drops the chunk of
 * the previous one (*used bytes), reads until a chunk gives an event.
 */
static ua_status
ub_disc_wait(int fd, struct ua_client *cl, uint8_t *rbuf, size_t rcap,
             size_t *rlen, size_t *used, struct ua_client_event *ev)
{
    for (;;) {
        uint32_t  chunk;
        ssize_t   n;
        ua_status st;

        if (*used > 0) {
            memmove(rbuf, rbuf + *used, *rlen - *used);
            *rlen -= *used;
            *used = 0;
        }
        st = ua_client_frame(cl, rbuf, *rlen, &chunk);
        if (st != UA_GOOD)
            return st;
        if (chunk != 0 && chunk <= *rlen) {
            st = ua_client_process(cl, rbuf, chunk, ub_mono_ns() / 1000000u,
                                   ev);
            *used = chunk;
            if (st != UA_GOOD || ev->kind != UA_CLIENT_EV_NONE)
                return st;
            continue;
        }
        if (chunk > rcap)
            return UA_BAD_TCP_MESSAGE_TOO_LARGE;
        n = read(fd, rbuf + *rlen, rcap - *rlen);
        if (n == -1 && errno == EINTR)
            continue;
        if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return UA_BAD_TIMEOUT;
        if (n <= 0)
            return UA_BAD_CONNECTION_CLOSED;
        *rlen += (size_t)n;
    }
}

/*
 * The server certificate of the chosen endpoint, checked as a client
 * checks a server's (Part 4 §6.1.3): structure, chain, signatures, the
 * policy's key length and hash, validity, the endpoint's ApplicationUri in
 * the SubjectAltName, key usage for a server.  Trust: --server-trust FILE,
 * or else the leaf itself (trust on first use: the benchmark has no trust
 * list of its own).  Revocation is not checked (no CRLs here).
 */
static ua_status
ub_server_cert_check(struct ub *b, const struct ua_endpoint_description *e)
{
    const struct ua_string *sc = &e->server_certificate;
    struct ua_cert_der      chain[UA_CERT_CHAIN_MAX], trust;
    struct ua_cert_store    store;
    struct ua_cert_check    chk;
    struct ua_cert_verdict  v;
    struct ua_cert          leaf;
    uint8_t                *tbuf = NULL;
    size_t                  n = 0, tlen = 0;
    ua_status               st;

    if (sc->len <= 0
        || ua_cert_chain_split(sc->data, (size_t)sc->len, chain,
                               UA_CERT_CHAIN_MAX, &n) != UA_GOOD || n == 0
        || ua_cert_parse(chain[0].der, chain[0].len, &leaf) != UA_GOOD)
        return UA_BAD_CERTIFICATE_INVALID;
    memset(&store, 0, sizeof(store));
    if (b->trust_file != NULL) {
        if (ub_load_cert(b->trust_file, &tbuf, &tlen) != 0)
            return UA_BAD_CERTIFICATE_UNTRUSTED;
        trust.der = tbuf;
        trust.len = tlen;
    } else {
        trust = chain[0];
    }
    store.trusted = &trust;
    store.n_trusted = 1;
    store.issuers = chain + 1;
    store.n_issuers = n - 1;
    ua_cert_check_init(&chk, b->policy, (int64_t)time(NULL));
    chk.role = UA_CERT_ROLE_SERVER;
    chk.suppress = UA_CERT_SUPPRESS_REVOCATION_UNKNOWN
                   | UA_CERT_SUPPRESS_ISSUER_REVOCATION_UNKNOWN;
    if (e->server.application_uri.len > 0) {
        chk.app_uri = e->server.application_uri.data;
        chk.app_uri_len = (size_t)e->server.application_uri.len;
    }
    memset(&v, 0, sizeof(v));
    st = ua_cert_validate(sc->data, (size_t)sc->len, &store, &chk, &v);
    free(tbuf);
    if (st != UA_GOOD) {
        fprintf(stderr, "uabench: the server certificate (%s) fails the "
                "check at depth %u: %s (0x%08X)%s\n", leaf.subject_str,
                (unsigned)v.depth, ua_status_name(st), st,
                st == UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE
                    ? "; --server-trust FILE names its CA" : "");
        return st;
    }
    b->server_cert = malloc((size_t)sc->len);
    if (b->server_cert == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(b->server_cert, sc->data, (size_t)sc->len);
    b->server_cert_len = (size_t)sc->len;
    b->server_bits = leaf.key_bits;
    if (!b->quiet)
        fprintf(stderr, "uabench: server certificate %s, RSA %u, checked%s\n",
                leaf.subject_str, leaf.key_bits,
                b->trust_file != NULL ? " against --server-trust"
                                      : " (its own trust anchor)");
    return UA_GOOD;
}

/* The PolicyId of an anonymous UserTokenPolicy: of an endpoint with our
 * policy and mode first, then of any; kept in b->anon_policy. */
static void
ub_anon_policy(struct ub *b, const struct ua_endpoint_description *e,
               int32_t n)
{
    const char *uri = b->policy != NULL ? b->policy->uri : UA_SC_POLICY_NONE;
    uint8_t     mode = b->policy != NULL ? b->mode
                                         : UA_MESSAGESECURITYMODE_NONE;

    if (b->anon_policy[0] != '\0')
        return;
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < n; i++) {
            if (pass == 0 && (e[i].security_mode != mode
                              || !ua_string_eq(&e[i].security_policy_uri,
                                               uri)))
                continue;
            for (int32_t j = 0; j < e[i].n_user_identity_tokens; j++) {
                const struct ua_user_token_policy *t =
                    &e[i].user_identity_tokens[j];

                if (t->token_type == UA_USERTOKENTYPE_ANONYMOUS
                    && t->policy_id.len > 0
                    && (size_t)t->policy_id.len < sizeof(b->anon_policy)) {
                    memcpy(b->anon_policy, t->policy_id.data,
                           (size_t)t->policy_id.len);
                    b->anon_policy[t->policy_id.len] = '\0';
                    return;
                }
            }
        }
}

/*
 * GetEndpoints on a SecurityPolicy None channel (discovery needs no
 * security, Part 4 §5.4.1), before any session: the endpoint with our
 * policy and mode, its server certificate checked, its anonymous
 * PolicyId.  Blocking, bounded by UB_DISC_MS per step.
 */
static int
ub_discover(struct ub *b)
{
    struct ua_client                 cl;
    struct ua_client_config          cfg = ua_client_config_default;
    struct ua_sc_out                 out;
    struct ua_client_event           ev;
    struct ua_get_endpoints_request  ge;
    struct ua_get_endpoints_response ger;
    struct timeval tv = { UB_DISC_MS / 1000, (UB_DISC_MS % 1000) * 1000 };
    const struct ua_endpoint_description *e = NULL;
    uint8_t   *rbuf = malloc((size_t)cfg.recv_buffer * 2);
    uint8_t   *wbuf = malloc(65536);
    uint8_t   *abuf = malloc(UB_RESP_MAX);
    size_t     rlen = 0, used = 0;
    int        fd = -1, rc = -1;
    ua_status  st = UA_BAD_OUT_OF_MEMORY;
    const char *what = "out of memory";

    memset(&cl, 0, sizeof(cl));
    if (rbuf == NULL || wbuf == NULL || abuf == NULL)
        goto done;
    out.buf = wbuf;
    out.cap = 65536;
    out.len = 0;
    ua_client_init(&cl, &cfg, abuf, UB_RESP_MAX);
    cl.fill_header = true;
    what = "connect()";
    st = UA_BAD_COMMUNICATION_ERROR;
    fd = socket(b->ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        goto done;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, b->ai->ai_addr, b->ai->ai_addrlen) == -1)
        goto done;
    /* HEL/ACK, OPN (None), GetEndpoints: one exchange each. */
    for (int step = 0; step < 3; step++) {
        static const uint8_t want[3] = { UA_CLIENT_EV_ACK, UA_CLIENT_EV_OPEN,
                                         UA_CLIENT_EV_MSG };
        static const char *const names[3] = { "HEL", "OpenSecureChannel",
                                              "GetEndpoints" };

        what = names[step];
        out.len = 0;
        if (step == 0) {
            st = ua_client_hello(&cl, b->url, &out);
        } else if (step == 1) {
            st = ua_client_open(&cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 0,
                                NULL, &out);
        } else {
            memset(&ge, 0, sizeof(ge));
            ge.request_header.audit_entry_id.len = -1;
            ge.endpoint_url = ua_string_from(b->url);
            ge.n_locale_ids = -1;
            ge.n_profile_uris = -1;
            cl.now_dt = ub_now_dt();
            st = ua_client_request(&cl, &ua_types[UA_TYPE_GETENDPOINTSREQUEST],
                                   &ge, NULL, &out);
        }
        if (st != UA_GOOD)
            goto done;
        if (send(fd, out.buf, out.len, MSG_NOSIGNAL) != (ssize_t)out.len) {
            st = UA_BAD_CONNECTION_CLOSED;
            goto done;
        }
        st = ub_disc_wait(fd, &cl, rbuf, (size_t)cfg.recv_buffer * 2, &rlen,
                          &used, &ev);
        if (st == UA_GOOD && ev.kind != want[step])
            st = UA_BAD_UNKNOWN_RESPONSE;
        if (st == UA_GOOD && step == 1 && UA_STATUS_IS_BAD(ev.status))
            st = ev.status;
        if (st != UA_GOOD)
            goto done;
    }
    ua_arena_reset(&b->arena);
    st = ua_client_decode(&cl, &ev, &ua_types[UA_TYPE_GETENDPOINTSRESPONSE],
                          &ger, &b->arena);
    if (st != UA_GOOD)
        goto done;
    for (int32_t i = 0; i < ger.n_endpoints && e == NULL; i++)
        if (ger.endpoints[i].security_mode == b->mode
            && ua_string_eq(&ger.endpoints[i].security_policy_uri,
                            b->policy->uri))
            e = &ger.endpoints[i];
    if (e == NULL) {
        fprintf(stderr, "uabench: the server offers no %s endpoint in "
                "mode %s\n", b->policy->name,
                b->mode == UA_MESSAGESECURITYMODE_SIGN ? "Sign"
                                                       : "SignAndEncrypt");
        goto done_quiet;
    }
    what = "server certificate";
    st = ub_server_cert_check(b, e);
    if (st != UA_GOOD)
        goto done_quiet;
    ub_anon_policy(b, e, 1);
    out.len = 0;
    if (ua_client_close(&cl, &out) == UA_GOOD)
        (void)send(fd, out.buf, out.len, MSG_NOSIGNAL);
    rc = 0;
    goto done_quiet;
done:
    fprintf(stderr, "uabench: discovery (GetEndpoints) failed at %s: %s "
            "(0x%08X)\n", what, ua_status_name(st), st);
done_quiet:
    if (fd != -1)
        close(fd);
    ua_client_clear(&cl);
    free(rbuf);
    free(wbuf);
    free(abuf);
    return rc;
}

/*
 * Secured CreateSession answered: its serverCertificate must be the one
 * GetEndpoints gave, its serverSignature sign(clientCertificate ||
 * clientNonce) with that certificate's key (Part 4 §5.7.2); then our
 * clientSignature = sign(serverCertificate || serverNonce) (in the arena).
 */
static ua_status
ub_session_sigs(struct ub *b, struct ub_sess *s,
                const struct ua_create_session_response *r,
                struct ua_signature_data *sig)
{
    const struct ua_policy *p = b->policy;
    const struct ua_string *sc = &r->server_certificate;
    const struct ua_string *sn = &r->server_nonce;
    size_t                  n, sl = 0;
    uint8_t                *buf, *out;

    if (sc->len <= 0 || (size_t)sc->len != b->server_cert_len
        || memcmp(sc->data, b->server_cert, b->server_cert_len) != 0)
        return UA_BAD_CERTIFICATE_INVALID;
    if (sn->len < UB_NONCE)
        return UA_BAD_NONCE_INVALID;
    n = b->cert_len + UB_NONCE;
    if ((size_t)sc->len + (size_t)sn->len > n)
        n = (size_t)sc->len + (size_t)sn->len;
    buf = ua_arena_alloc(&b->arena, n);
    out = ua_arena_alloc(&b->arena, UA_RSA_MAX_BYTES);
    if (buf == NULL || out == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(buf, b->cert, b->cert_len);
    memcpy(buf + b->cert_len, s->nonce, UB_NONCE);
    if (r->server_signature.signature.len <= 0
        || !ua_string_eq(&r->server_signature.algorithm, p->asym_sig_uri)
        || p->asym_verify(&s->cl.server_key, buf, b->cert_len + UB_NONCE,
                          r->server_signature.signature.data,
                          (size_t)r->server_signature.signature.len)
               != UA_GOOD)
        return UA_BAD_APPLICATION_SIGNATURE_INVALID;
    memcpy(buf, sc->data, (size_t)sc->len);
    memcpy(buf + sc->len, sn->data, (size_t)sn->len);
    if (p->asym_sign(&b->key, buf, (size_t)sc->len + (size_t)sn->len, out,
                     UA_RSA_MAX_BYTES, &sl) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    sig->algorithm = ua_string_from(p->asym_sig_uri);
    sig->signature.len = (int32_t)sl;
    sig->signature.data = out;
    return UA_GOOD;
}

/* ------------------------------------------------------------ RSA costs */

static double
ub_cpu_now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

enum ub_rsa_op { UB_RSA_SIGN, UB_RSA_DECRYPT, UB_RSA_VERIFY, UB_RSA_ENCRYPT,
                 UB_RSA_CERT };

/*
 * CPU µs of one operation: UB_RSA_BATCHES batches of at least
 * UB_RSA_BATCH_US each, the best batch's mean (the least disturbed by
 * the rest of the machine).  priv signs and decrypts; pub (its public
 * half, from a certificate) verifies and encrypts.  -1 when an operation
 * fails.
 */
static double
ub_rsa_cost(const struct ua_policy *p, enum ub_rsa_op op,
            struct ua_crypto_key *priv, struct ua_crypto_key *pub)
{
    static uint8_t data[1024];
    uint8_t        sig[UA_RSA_MAX_BYTES], csig[UA_RSA_MAX_BYTES];
    uint8_t        ct[UA_RSA_MAX_BYTES], work[2 * UA_RSA_MAX_BYTES];
    size_t         sl = 0, csl = 0, ctl = 0, n, pb;
    double         best = -1;

    pb = ua_crypto_rsa_plain_block(p->asym_enc, ua_crypto_key_bytes(pub));
    if (pb == 0 || ua_crypto_random(data, sizeof(data)) != UA_GOOD
        || p->asym_sign(priv, data, sizeof(data), sig, sizeof(sig), &sl)
               != UA_GOOD
        || ua_crypto_rsa_sign(priv, UA_RSA_SIG_PKCS1_SHA256, data,
                              sizeof(data), csig, sizeof(csig), &csl)
               != UA_GOOD
        || p->asym_encrypt(pub, data, pb, ct, sizeof(ct), &ctl) != UA_GOOD)
        return -1;
    for (int k = 0; k < UB_RSA_BATCHES; k++) {
        double   t0 = ub_cpu_now_us(), t;
        unsigned it = 0;
        ua_status st;

        do {
            switch (op) {
            case UB_RSA_SIGN:
                st = p->asym_sign(priv, data, sizeof(data), work,
                                  sizeof(work), &n);
                break;
            case UB_RSA_DECRYPT:
                memcpy(work, ct, ctl);
                st = p->asym_decrypt(priv, work, ctl, &n);
                break;
            case UB_RSA_VERIFY:
                st = p->asym_verify(pub, data, sizeof(data), sig, sl);
                break;
            case UB_RSA_ENCRYPT:
                st = p->asym_encrypt(pub, data, pb, work, sizeof(work), &n);
                break;
            case UB_RSA_CERT:
            default:
                st = ua_crypto_rsa_verify(pub, UA_RSA_SIG_PKCS1_SHA256, data,
                                          sizeof(data), csig, csl);
                break;
            }
            if (st != UA_GOOD)
                return -1;
            it++;
        } while ((t = ub_cpu_now_us() - t0) < UB_RSA_BATCH_US);
        if (best < 0 || t / it < best)
            best = t / it;
    }
    return best;
}

/*
 * The RSA operations of a handshake on this machine.  Server: private
 * ones with a key of the server certificate's size (ours when the sizes
 * match, else one made for this), public ones with our certificate's key
 * (the server works with that one).  Client: the other way round.
 */
static int
ub_rsa_measure(struct ub *b, struct ub_rsa *r)
{
    struct ua_crypto_key *spriv = &b->key, *spub = &b->cpub;
    const struct ua_policy *p = b->policy;

    memset(r, 0, sizeof(*r));
    if (p == NULL)
        return -1;
    if (b->server_bits != ua_crypto_key_bits(&b->key)) {
        if (ua_crypto_key_bits(&b->key2) != b->server_bits) {
            struct ua_cert_params cp;
            uint8_t              *der = malloc(UA_CERT_DER_MAX);
            size_t                len = 0;
            ua_status             st;

            memset(&cp, 0, sizeof(cp));
            cp.app_uri = "urn:uabench:rsa";
            cp.common_name = "uabench rsa";
            cp.not_before = (int64_t)time(NULL) - 3600;
            cp.days = 1;
            st = der == NULL ? UA_BAD_OUT_OF_MEMORY
                             : ua_crypto_key_generate(&b->key2,
                                                      b->server_bits);
            if (st == UA_GOOD)
                st = ua_cert_create(&cp, &b->key2, der, UA_CERT_DER_MAX,
                                    &len);
            if (st == UA_GOOD)
                st = ua_crypto_key_from_cert(&b->key2pub, der, len);
            free(der);
            if (st != UA_GOOD)
                return -1;
        }
        spriv = &b->key2;
        spub = &b->key2pub;
    }
    r->sign_us = ub_rsa_cost(p, UB_RSA_SIGN, spriv, spub);
    r->decrypt_us = ub_rsa_cost(p, UB_RSA_DECRYPT, spriv, spub);
    r->verify_us = ub_rsa_cost(p, UB_RSA_VERIFY, &b->key, &b->cpub);
    r->encrypt_us = ub_rsa_cost(p, UB_RSA_ENCRYPT, &b->key, &b->cpub);
    r->cert_us = ub_rsa_cost(p, UB_RSA_CERT, &b->key, &b->cpub);
    r->csign_us = ub_rsa_cost(p, UB_RSA_SIGN, &b->key, &b->cpub);
    r->cdecrypt_us = ub_rsa_cost(p, UB_RSA_DECRYPT, &b->key, &b->cpub);
    r->cverify_us = ub_rsa_cost(p, UB_RSA_VERIFY, spriv, spub);
    r->cencrypt_us = ub_rsa_cost(p, UB_RSA_ENCRYPT, spriv, spub);
    r->ok = r->sign_us > 0 && r->decrypt_us > 0 && r->verify_us > 0
            && r->encrypt_us > 0 && r->cert_us > 0 && r->csign_us > 0
            && r->cdecrypt_us > 0 && r->cverify_us > 0 && r->cencrypt_us > 0;
    return r->ok ? 0 : -1;
}

/*
 * The RSA ceiling of the connect scenario (one line after the result).
 * The server's RSA work per handshake, from its code paths:
 *
 *   OpenSecureChannel  the client certificate's self-signature (trust-list
 *                      validation: one public op for a self-signed leaf),
 *                      decrypt the request (N private ops, one per block),
 *                      verify its signature (public), sign the response
 *                      (private), encrypt it (M public ops)
 *   CreateSession      sign clientCertificate || clientNonce (private)
 *   ActivateSession    verify the clientSignature (public)
 *
 * N and M are counted from the OPN chunks this run sent and received.
 * rsa_us/hs is that work at the costs measured here (the lower of the
 * measurements before and after the window: the least disturbed, so the
 * ratio below errs low when the machine is busy); the ceiling is the
 * handshake rate the server's measured CPU would give if it did nothing
 * but those operations: server_cores / rsa_us, and ratio = measured rate
 * / ceiling = rsa_us/hs / server_cpu_us/hs, the share of the server's
 * handshake CPU that is RSA.  The client's RSA work (N + 2 public, M + 2
 * private ops) is on the same cores: machine_ceiling is what the
 * machine's cores allow for both sides' RSA alone.
 */
static void
ub_rsa_report(FILE *f, struct ub *b, double hs, double srv_us, double secs)
{
    const struct ub_rsa *r0 = &b->rsa0, *r1 = &b->rsa1;
    uint32_t N = b->opn_req_blocks, M = b->opn_resp_blocks;
    double   sign, dec, ver, enc, cert, cs, cd, cv, ce, srsa, crsa;
    double   cores = 0, ceil = 0;
    long     ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char     per[32] = "-", cl[32] = "-", ratio[32] = "-";

    if (!r0->ok || !r1->ok || N == 0 || M == 0) {
        fprintf(f, "rsa_ceiling: not measured (%s)\n",
               N == 0 || M == 0 ? "no OPN blocks seen"
                                : "an RSA measurement failed");
        return;
    }
    sign = fmin(r0->sign_us, r1->sign_us);
    dec = fmin(r0->decrypt_us, r1->decrypt_us);
    ver = fmin(r0->verify_us, r1->verify_us);
    enc = fmin(r0->encrypt_us, r1->encrypt_us);
    cert = fmin(r0->cert_us, r1->cert_us);
    cs = fmin(r0->csign_us, r1->csign_us);
    cd = fmin(r0->cdecrypt_us, r1->cdecrypt_us);
    cv = fmin(r0->cverify_us, r1->cverify_us);
    ce = fmin(r0->cencrypt_us, r1->cencrypt_us);
    srsa = N * dec + 2 * sign + cert + 2 * ver + M * enc;
    crsa = M * cd + 2 * cs + N * ce + 2 * cv;
    if (secs > 0 && srv_us > 0)
        cores = srv_us / secs / 1e6;
    if (cores > 0 && hs > 0) {
        ceil = cores * 1e6 / srsa;
        snprintf(per, sizeof(per), "%.0f", srv_us / (hs * secs));
        snprintf(cl, sizeof(cl), "%.0f", ceil);
        snprintf(ratio, sizeof(ratio), "%.3f", hs / ceil);
    }
    fprintf(f, "rsa_ceiling: policy=%s server_private_ops/hs=%u "
           "server_public_ops/hs=%u sign_us=%.0f decrypt_us/block=%.0f "
           "verify_us=%.0f encrypt_us/block=%.0f cert_verify_us=%.0f "
           "sign_us_before/after=%.0f/%.0f "
           "decrypt_us_before/after=%.0f/%.0f server_rsa_us/hs=%.0f "
           "server_cpu_us/hs=%s server_cores=%.2f ceiling_hs/s=%s "
           "measured_hs/s=%.0f ratio=%s client_rsa_us/hs=%.0f "
           "machine_ceiling_hs/s=%.0f\n",
           b->policy->name, N + 2, M + 3, sign, dec, ver, enc, cert,
           r0->sign_us, r1->sign_us, r0->decrypt_us, r1->decrypt_us, srsa,
           per, cores, cl, hs, ratio, crsa,
           ncpu > 0 ? (double)ncpu * 1e6 / (srsa + crsa) : 0.0);
}

/* ------------------------------------------------------------ options */

static void
ub_usage(FILE *f)
{
    fprintf(f,
        "Usage: uabench --url opc.tcp://HOST:PORT [options]\n"
        "\n"
        "  --url URL            server endpoint (anonymous sessions)\n"
        "  --security P:M       POLICY:MODE, POLICY Basic256Sha256 |\n"
        "                       Aes128_Sha256_RsaOaep | Aes256_Sha256_RsaPss,"
        "\n"
        "                       MODE Sign | SignAndEncrypt; or None (None)\n"
        "  --cert FILE          our certificate, DER or PEM (with --key;\n"
        "                       default: a fresh self-signed one)\n"
        "  --key FILE           its private key, DER or PEM\n"
        "  --write-cert FILE    write our certificate (DER) there; without\n"
        "                       --url, only write it (and --write-key)\n"
        "  --write-key FILE     write our private key (PKCS#1 DER) there\n"
        "  --server-trust FILE  the server certificate must chain to this\n"
        "                       one (default: the server's own leaf)\n"
        "  --sessions N         connections, each with its own channel and "
        "session (1)\n"
        "  --depth D            requests in flight per session (1)\n"
        "  --seconds S          measuring window (10)\n"
        "  --warmup S           load before the window, not measured (1)\n"
        "  --scenario NAME      read1 | read100 | browse | write100 | sub |\n"
        "                       fanout | connect (read1)\n"
        "  --vars-ns NS         namespace of the variables (1)\n"
        "  --vars-prefix P      string node ids P0, P1, ... (v)\n"
        "  --vars-count N       variables to rotate over (1000)\n"
        "  --timestamps T       source | server | both | neither (both)\n"
        "  --items M            sub, fanout: variables each session watches\n"
        "                       (sub 100, fanout 1000)\n"
        "  --interval P         sub, fanout: publishing interval, ms (100)\n"
        "  --rate R             sub, fanout: changes per second of each "
        "variable (50)\n"
        "  --queue Q            sub, fanout: monitored-item queue size (100)\n"
        "  --server-pid PID     add PID's utime+stime to the server CPU "
        "(repeatable)\n"
        "  --stats URL          uabroker stats endpoint "
        "(http://127.0.0.1:9840):\n"
        "                       its pids count as server CPU, its workers'\n"
        "                       allocation counters give server_allocs/op\n"
        "  --markdown           print a Markdown table row instead of "
        "key=value\n"
        "  --markdown-header    print the table header and exit\n"
        "  --quiet              no progress on stderr\n"
        "  --help\n"
        "\n"
        "Scenarios (an op is one service call; sub, fanout: a notification;"
        "\n"
        "connect: a handshake):\n");
    for (size_t i = 0; i < UB_NSCENARIOS; i++)
        fprintf(f, "  %-9s %s\n", ub_scenarios[i].name, ub_scenarios[i].what);
}

static void
ub_markdown_header(void)
{
    printf("| scenario | sessions | depth | ops/s | p50 µs | p90 µs | "
           "p99 µs | client CPU µs/op | server CPU µs/op | "
           "server allocs/op | errors | other load (cores) |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
           "---: | ---: | ---: |\n");
}

/* "scheme://host:port[/path]" (host may be [v6]); 0 or -1. */
static int
ub_parse_url(const char *url, const char *scheme, char *host, size_t hcap,
             char *port, size_t pcap)
{
    size_t      sl = strlen(scheme);
    const char *h, *e, *c;

    if (strncmp(url, scheme, sl) != 0 || strncmp(url + sl, "://", 3) != 0)
        return -1;
    h = url + sl + 3;
    e = h + strcspn(h, "/");
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(e - h));

        if (rb == NULL || rb[1] != ':')
            return -1;
        if ((size_t)(rb - h - 1) >= hcap)
            return -1;
        memcpy(host, h + 1, (size_t)(rb - h - 1));
        host[rb - h - 1] = '\0';
        c = rb + 1;
    } else {
        c = memchr(h, ':', (size_t)(e - h));
        if (c == NULL || (size_t)(c - h) >= hcap || c == h)
            return -1;
        memcpy(host, h, (size_t)(c - h));
        host[c - h] = '\0';
    }
    if ((size_t)(e - c - 1) >= pcap || e - c - 1 <= 0)
        return -1;
    memcpy(port, c + 1, (size_t)(e - c - 1));
    port[e - c - 1] = '\0';
    if (strspn(port, "0123456789") != strlen(port))
        return -1;
    return 0;
}

static int
ub_num(const char *opt, const char *s, double lo, double hi, double *v)
{
    char *end;

    errno = 0;
    *v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(*v >= lo && *v <= hi)) {
        fprintf(stderr, "uabench: %s wants a number in [%g, %g], not '%s'\n",
                opt, lo, hi, s);
        return -1;
    }
    return 0;
}

/* --security POLICY:MODE (POLICY a name of ua_crypto_policy_get(), or
 * None alone). */
static int
ub_security_arg(struct ub *b, const char *arg)
{
    const char *colon = strchr(arg, ':');
    size_t      pl = colon != NULL ? (size_t)(colon - arg) : strlen(arg);

    b->policy = NULL;
    if (pl == 4 && strncmp(arg, "None", 4) == 0
        && (colon == NULL || strcmp(colon + 1, "None") == 0))
        return 0;
    for (unsigned i = 1; i < UA_POLICY_COUNT && b->policy == NULL; i++) {
        const struct ua_policy *p = ua_crypto_policy_get(i);

        if (p != NULL && strlen(p->name) == pl
            && strncmp(p->name, arg, pl) == 0)
            b->policy = p;
    }
    if (b->policy == NULL || colon == NULL) {
        fprintf(stderr, "uabench: --security wants POLICY:MODE (Basic256Sha256,"
                " Aes128_Sha256_RsaOaep or Aes256_Sha256_RsaPss; Sign or "
                "SignAndEncrypt) or None, not '%s'\n", arg);
        b->policy = NULL;
        return -1;
    }
    if (strcmp(colon + 1, "Sign") == 0) {
        b->mode = UA_MESSAGESECURITYMODE_SIGN;
    } else if (strcmp(colon + 1, "SignAndEncrypt") == 0) {
        b->mode = UA_MESSAGESECURITYMODE_SIGNANDENCRYPT;
    } else {
        fprintf(stderr, "uabench: --security: mode Sign or SignAndEncrypt, "
                "not '%s'\n", colon + 1);
        b->policy = NULL;
        return -1;
    }
    return 0;
}

static int
ub_args(struct ub *b, int argc, char **argv)
{
    enum { O_URL = 256, O_SESS, O_DEPTH, O_SECS, O_WARM, O_SCEN, O_NS,
           O_PREFIX, O_COUNT, O_TS, O_PID, O_STATS, O_MD, O_MDH, O_QUIET,
           O_HELP, O_ITEMS, O_INTERVAL, O_RATE, O_QUEUE, O_SECURITY, O_CERT,
           O_KEY, O_WCERT, O_WKEY, O_TRUST };
    static const struct option opts[] = {
        { "url", required_argument, NULL, O_URL },
        { "sessions", required_argument, NULL, O_SESS },
        { "depth", required_argument, NULL, O_DEPTH },
        { "seconds", required_argument, NULL, O_SECS },
        { "warmup", required_argument, NULL, O_WARM },
        { "scenario", required_argument, NULL, O_SCEN },
        { "vars-ns", required_argument, NULL, O_NS },
        { "vars-prefix", required_argument, NULL, O_PREFIX },
        { "vars-count", required_argument, NULL, O_COUNT },
        { "timestamps", required_argument, NULL, O_TS },
        { "server-pid", required_argument, NULL, O_PID },
        { "stats", required_argument, NULL, O_STATS },
        { "markdown", no_argument, NULL, O_MD },
        { "markdown-header", no_argument, NULL, O_MDH },
        { "quiet", no_argument, NULL, O_QUIET },
        { "help", no_argument, NULL, O_HELP },
        { "items", required_argument, NULL, O_ITEMS },
        { "interval", required_argument, NULL, O_INTERVAL },
        { "rate", required_argument, NULL, O_RATE },
        { "queue", required_argument, NULL, O_QUEUE },
        { "security", required_argument, NULL, O_SECURITY },
        { "cert", required_argument, NULL, O_CERT },
        { "key", required_argument, NULL, O_KEY },
        { "write-cert", required_argument, NULL, O_WCERT },
        { "write-key", required_argument, NULL, O_WKEY },
        { "server-trust", required_argument, NULL, O_TRUST },
        { NULL, 0, NULL, 0 }
    };
    int    c;
    double v;

    b->nsess = 1;
    b->depth = 1;
    b->seconds = 10;
    b->warmup = 1;
    b->sc = &ub_scenarios[0];
    b->vars_ns = 1;
    strcpy(b->vars_prefix, "v");
    b->vars_count = 1000;
    b->timestamps = 2;      /* Both */
    b->interval = 100;
    b->rate = 50;
    b->queue = 100;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_URL:
            if (strlen(optarg) >= sizeof(b->url)
                || ub_parse_url(optarg, "opc.tcp", b->host, sizeof(b->host),
                                b->port, sizeof(b->port)) != 0) {
                fprintf(stderr, "uabench: --url wants opc.tcp://HOST:PORT, "
                        "not '%s'\n", optarg);
                return -1;
            }
            strcpy(b->url, optarg);
            break;
        case O_SESS:
            if (ub_num("--sessions", optarg, 1, UB_SESSIONS_MAX, &v) != 0)
                return -1;
            b->nsess = (uint32_t)v;
            break;
        case O_DEPTH:
            if (ub_num("--depth", optarg, 1, UB_DEPTH_MAX, &v) != 0)
                return -1;
            b->depth = (uint32_t)v;
            break;
        case O_SECS:
            if (ub_num("--seconds", optarg, 0.1, UB_SECONDS_MAX, &v) != 0)
                return -1;
            b->seconds = v;
            break;
        case O_WARM:
            if (ub_num("--warmup", optarg, 0, UB_SECONDS_MAX, &v) != 0)
                return -1;
            b->warmup = v;
            break;
        case O_SCEN:
            b->sc = NULL;
            for (size_t i = 0; i < UB_NSCENARIOS; i++)
                if (strcmp(optarg, ub_scenarios[i].name) == 0)
                    b->sc = &ub_scenarios[i];
            if (b->sc == NULL) {
                fprintf(stderr, "uabench: unknown scenario '%s'\n", optarg);
                return -1;
            }
            break;
        case O_NS:
            if (ub_num("--vars-ns", optarg, 0, 65535, &v) != 0)
                return -1;
            b->vars_ns = (uint16_t)v;
            break;
        case O_PREFIX:
            if (strlen(optarg) >= sizeof(b->vars_prefix)) {
                fprintf(stderr, "uabench: --vars-prefix too long\n");
                return -1;
            }
            strcpy(b->vars_prefix, optarg);
            break;
        case O_COUNT:
            if (ub_num("--vars-count", optarg, 1, 10000000, &v) != 0)
                return -1;
            b->vars_count = (uint32_t)v;
            break;
        case O_TS:
            if (strcmp(optarg, "source") == 0)
                b->timestamps = 0;
            else if (strcmp(optarg, "server") == 0)
                b->timestamps = 1;
            else if (strcmp(optarg, "both") == 0)
                b->timestamps = 2;
            else if (strcmp(optarg, "neither") == 0)
                b->timestamps = 3;
            else {
                fprintf(stderr, "uabench: --timestamps wants source, server, "
                        "both or neither\n");
                return -1;
            }
            break;
        case O_PID:
            if (ub_num("--server-pid", optarg, 1, 4194304, &v) != 0)
                return -1;
            if (b->npids == UB_PIDS_MAX) {
                fprintf(stderr, "uabench: too many --server-pid\n");
                return -1;
            }
            b->pids[b->npids++] = (int)v;
            break;
        case O_STATS:
            if (ub_parse_url(optarg, "http", b->stats_host,
                             sizeof(b->stats_host), b->stats_port,
                             sizeof(b->stats_port)) != 0) {
                fprintf(stderr, "uabench: --stats wants http://HOST:PORT, "
                        "not '%s'\n", optarg);
                return -1;
            }
            b->stats = true;
            break;
        case O_MD:
            b->markdown = true;
            break;
        case O_MDH:
            ub_markdown_header();
            exit(0);
        case O_QUIET:
            b->quiet = true;
            break;
        case O_HELP:
            ub_usage(stdout);
            exit(0);
        case O_ITEMS:
            if (ub_num("--items", optarg, 1, UB_SUB_ITEMS_MAX, &v) != 0)
                return -1;
            b->items = (uint32_t)v;
            break;
        case O_INTERVAL:
            if (ub_num("--interval", optarg, 1, 3600000, &v) != 0)
                return -1;
            b->interval = v;
            break;
        case O_RATE:
            if (ub_num("--rate", optarg, 0.1, 100000, &v) != 0)
                return -1;
            b->rate = v;
            break;
        case O_QUEUE:
            if (ub_num("--queue", optarg, 1, 100000, &v) != 0)
                return -1;
            b->queue = (uint32_t)v;
            break;
        case O_SECURITY:
            if (ub_security_arg(b, optarg) != 0)
                return -1;
            break;
        case O_CERT:
            b->cert_file = optarg;
            break;
        case O_KEY:
            b->key_file = optarg;
            break;
        case O_WCERT:
            b->write_cert = optarg;
            break;
        case O_WKEY:
            b->write_key = optarg;
            break;
        case O_TRUST:
            b->trust_file = optarg;
            break;
        default:
            ub_usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "uabench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if ((b->cert_file == NULL) != (b->key_file == NULL)) {
        fprintf(stderr, "uabench: --cert and --key go together\n");
        return -1;
    }
    if (b->url[0] == '\0' && (b->write_cert != NULL || b->write_key != NULL))
        return 0;               /* only write a certificate and key */
    if (b->url[0] == '\0') {
        fprintf(stderr, "uabench: --url is required\n");
        ub_usage(stderr);
        return -1;
    }
    b->is_sub = ub_sub_items(b->sc) > 0;
    b->is_connect = b->sc->init == ub_connect_init;
    if (b->items == 0)
        b->items = ub_sub_items(b->sc);
    if (b->is_sub && b->items > b->vars_count) {
        fprintf(stderr, "uabench: %s needs --vars-count >= --items (%u)\n",
                b->sc->name, b->items);
        return -1;
    }
    if (b->sc->nresults > 1 && (uint32_t)b->sc->nresults > b->vars_count) {
        fprintf(stderr, "uabench: %s needs --vars-count >= %d\n",
                b->sc->name, b->sc->nresults);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ clocks, CPU */

static uint64_t
ub_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t
ub_now_dt(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 10000000 + ts.tv_nsec / 100
           + INT64_C(116444736000000000);
}

static double
ub_self_cpu_us(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec
           + (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

/* utime+stime of one process (not its children), µs. */
static bool
ub_pid_cpu_us(int pid, double *us)
{
    char               path[64], buf[1024], *p;
    int                fd;
    ssize_t            n;
    unsigned long long ut, st;
    long               hz = sysconf(_SC_CLK_TCK);

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: skip to the last
     * ')'; then state is field 3, utime field 14, stime field 15. */
    p = strrchr(buf, ')');
    if (p == NULL
        || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                  "%llu %llu", &ut, &st) != 2
        || hz <= 0)
        return false;
    *us = (double)(ut + st) * 1e6 / (double)hz;
    return true;
}

/*
 * Busy time of the whole machine (every CPU's user, nice, system, irq,
 * softirq and steal from /proc/stat), µs: what neither we nor the server
 * used of it is other load that disturbed the run.
 */
static bool
ub_machine_cpu_us(double *us)
{
    unsigned long long v[8] = { 0 };
    long               hz = sysconf(_SC_CLK_TCK);
    char               buf[512];
    int                fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    ssize_t            n;

    if (fd == -1)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0 || hz <= 0)
        return false;
    buf[n] = '\0';
    /* cpu  user nice system idle iowait irq softirq steal */
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
        return false;
    *us = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1e6
          / (double)hz;
    return true;
}

/* The sum over --server-pid and the stats endpoint's pids. */
static bool
ub_server_cpu_us(struct ub *b, double *us)
{
    double sum = 0, v;
    int    n = 0;

    for (int i = 0; i < b->npids; i++) {
        if (!ub_pid_cpu_us(b->pids[i], &v))
            return false;
        sum += v;
        n++;
    }
    for (int i = 0; b->st0.ok && i < b->st0.npids; i++) {
        bool dup = false;

        for (int j = 0; j < b->npids; j++)
            dup |= b->pids[j] == b->st0.pids[i];
        if (dup)
            continue;
        if (!ub_pid_cpu_us(b->st0.pids[i], &v))
            return false;
        sum += v;
        n++;
    }
    *us = sum;
    return n > 0;
}

/* ------------------------------------------------------------ stats */

/* Skip JSON whitespace. */
static const char *
ub_js_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* The number after `"key":` at p (p at the key's opening quote). */
static bool
ub_js_num_after(const char *p, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    char  *end;

    if (p[0] != '"' || strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '"')
        return false;
    p = ub_js_ws(p + 2 + kl);
    if (*p != ':')
        return false;
    p = ub_js_ws(p + 1);
    if (*p < '0' || *p > '9')
        return false;
    *v = strtoull(p, &end, 10);
    return true;
}

/*
 * GET /stats from the uabroker stats endpoint (blocking, bounded by
 * UB_STATS_MS; called at the window's edges only) and take from it:
 * every "pid" (the broker's and each worker's: their CPU is the server's)
 * and, inside the "workers" array, the sum of the "allocations" counters.
 */
static bool
ub_stats_fetch(struct ub *b, struct ub_stats_sample *st)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai = NULL;
    struct timeval   tv = { UB_STATS_MS / 1000, (UB_STATS_MS % 1000) * 1000 };
    char             req[512];
    static char      buf[1 << 20];
    size_t           len = 0;
    int              fd = -1, depth = 0, wdepth = -1;
    const char      *p;
    bool             in_str = false;

    memset(st, 0, sizeof(*st));
    if (getaddrinfo(b->stats_host, b->stats_port, &hints, &ai) != 0)
        return false;
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        goto fail;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1)
        goto fail;
    snprintf(req, sizeof(req), "GET /stats HTTP/1.0\r\nHost: %s:%s\r\n"
             "Connection: close\r\n\r\n", b->stats_host, b->stats_port);
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
        goto fail;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

        if (n == 0)
            break;
        if (n == -1) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        len += (size_t)n;
        if (len == sizeof(buf) - 1)
            break;
    }
    close(fd);
    fd = -1;
    freeaddrinfo(ai);
    ai = NULL;
    buf[len] = '\0';
    if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 9, "200", 3) != 0)
        return false;
    p = strstr(buf, "\r\n\r\n");
    if (p == NULL)
        return false;
    /* A small scanner: track nesting and strings, look at keys. */
    for (p += 4; *p != '\0'; p++) {
        uint64_t v;

        if (in_str) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                in_str = false;
            continue;
        }
        switch (*p) {
        case '{':
        case '[':
            depth++;
            break;
        case '}':
        case ']':
            depth--;
            if (depth < wdepth)
                wdepth = -1;
            break;
        case '"':
            if (ub_js_num_after(p, "pid", &v)) {
                if (st->npids < UB_PIDS_MAX && v > 0 && v < INT32_MAX) {
                    bool dup = false;

                    for (int i = 0; i < st->npids; i++)
                        dup |= st->pids[i] == (int)v;
                    if (!dup)
                        st->pids[st->npids++] = (int)v;
                }
            } else if (wdepth >= 0
                       && ub_js_num_after(p, "allocations", &v)) {
                st->allocations += v;
                st->ok = true;
            } else if (strncmp(p, "\"workers\"", 9) == 0) {
                const char *q = ub_js_ws(p + 9);

                if (*q == ':' && *ub_js_ws(q + 1) == '[')
                    wdepth = depth + 1;
            }
            in_str = true;
            break;
        default:
            break;
        }
    }
    return st->ok;
fail:
    if (fd != -1)
        close(fd);
    if (ai != NULL)
        freeaddrinfo(ai);
    return false;
}

/* ------------------------------------------------------------ histogram */

static void
ub_hist_add(struct ub *b, uint64_t ns)
{
    unsigned idx;

    if (ns < UB_H_LINEAR) {
        idx = (unsigned)ns;
    } else {
        unsigned msb = 63u - (unsigned)__builtin_clzll(ns);   /* >= 6 */
        unsigned shift = msb - 5;                              /* >= 1 */

        idx = UB_H_LINEAR + (shift - 1) * UB_H_SUB
              + (unsigned)((ns >> shift) - UB_H_SUB);
        if (idx >= UB_H_BUCKETS)
            idx = UB_H_BUCKETS - 1;
    }
    b->hist[idx]++;
    b->hist_n++;
}

/* The pct-th percentile in µs (bucket midpoint). */
static double
ub_hist_pct(const struct ub *b, double pct)
{
    uint64_t want, seen = 0;

    if (b->hist_n == 0)
        return 0;
    want = (uint64_t)ceil(pct / 100.0 * (double)b->hist_n);
    if (want == 0)
        want = 1;
    for (unsigned i = 0; i < UB_H_BUCKETS; i++) {
        seen += b->hist[i];
        if (seen >= want) {
            double lo, width;

            if (i < UB_H_LINEAR) {
                lo = i;
                width = 1;
            } else {
                unsigned shift = (i - UB_H_LINEAR) / UB_H_SUB + 1;

                lo = (double)(((i - UB_H_LINEAR) % UB_H_SUB + UB_H_SUB)
                              * (1ull << shift));
                width = (double)(1ull << shift);
            }
            return (lo + width / 2) / 1000.0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ sessions */

static void
ub_error(struct ub *b, struct ub_sess *s, ua_status st, const char *what)
{
    b->errors++;
    if (b->errors == 1) {
        b->first_error = st;
        snprintf(b->first_error_what, sizeof(b->first_error_what),
                 "session %u: %s", s != NULL ? s->idx : 0, what);
    }
}

static void
ub_sess_kill(struct ub *b, struct ub_sess *s, ua_status st, const char *what)
{
    if (s->state == UB_S_DEAD)
        return;
    ub_error(b, s, st, what);
    if (!b->quiet)
        fprintf(stderr, "uabench: session %u: %s: %s (0x%08X)\n", s->idx,
                what, ua_status_name(st), st);
    if (s->counted) {
        s->counted = false;
        b->ready--;
    }
    s->state = UB_S_DEAD;
    b->dead++;
    if (s->fd != -1) {
        epoll_ctl(b->ep, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        s->fd = -1;
    }
    s->out.len = 0;
    s->inflight = 0;
    s->unstamped = 0;
}

/*
 * Connect (non-blocking) with a fresh client; the buffers and the request
 * are made the first time.  The connect scenario calls it again for every
 * cycle.
 */
static int
ub_sess_start(struct ub *b, struct ub_sess *s)
{
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
                              .data.ptr = s };
    int                one = 1;
    struct ua_client_config cfg = ua_client_config_default;
    ua_status          st;

    if (s->rbuf == NULL) {
        s->b = b;
        s->rcap = (size_t)cfg.recv_buffer * 2;
        s->rbuf = malloc(s->rcap);
        /* Room for depth requests of any scenario, plus the setup ones. */
        s->out.cap = 65536 + (size_t)b->depth * 16384;
        s->wbuf = malloc(s->out.cap);
        s->out.buf = s->wbuf;
        s->abuf = malloc(UB_RESP_MAX);
        if (s->rbuf == NULL || s->wbuf == NULL || s->abuf == NULL)
            return -1;
        if (b->sc->init(b, s) != 0)
            return -1;
    }
    s->rlen = 0;
    s->out.len = 0;
    s->inflight = 0;
    s->unstamped = 0;
    ua_client_clear(&s->cl);
    ua_client_init(&s->cl, &cfg, s->abuf, UB_RESP_MAX);
    s->cl.fill_header = true;
    if (b->policy != NULL) {
        struct ua_client_security sec;

        memset(&sec, 0, sizeof(sec));
        sec.policy = b->policy;
        sec.mode = b->mode;
        sec.cert = b->cert;
        sec.cert_len = b->cert_len;
        sec.key = &b->key;
        sec.server_cert = b->server_cert;
        sec.server_cert_len = b->server_cert_len;
        st = ua_client_set_security(&s->cl, &sec);
        if (st != UA_GOOD) {
            fprintf(stderr, "uabench: ua_client_set_security(): %s\n",
                    ua_status_name(st));
            return -1;
        }
    }
    s->cycle_ns = ub_mono_ns();
    s->fd = socket(b->ai->ai_family,
                   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd == -1)
        return -1;
    setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(s->fd, b->ai->ai_addr, b->ai->ai_addrlen) == -1
        && errno != EINPROGRESS) {
        close(s->fd);
        s->fd = -1;
        return -1;
    }
    s->want_out = true;
    s->state = UB_S_CONNECTING;
    if (epoll_ctl(b->ep, EPOLL_CTL_ADD, s->fd, &ev) == -1)
        return -1;
    return 0;
}

static void
ub_sess_dirty(struct ub *b, struct ub_sess *s)
{
    if (!s->dirty) {
        s->dirty = true;
        b->flush[b->nflush++] = s;
    }
}

/* Send what is queued: one send() per connection per loop iteration. */
static void
ub_sess_flush(struct ub *b, struct ub_sess *s)
{
    ssize_t n;

    s->dirty = false;
    if (s->fd == -1 || s->out.len == 0 || s->state == UB_S_CONNECTING)
        return;
    if (s->unstamped > 0) {
        /* The requests queued since the last send leave now. */
        uint64_t now = ub_mono_ns();

        for (uint32_t i = 0; i < b->depth && s->unstamped > 0; i++)
            if (s->slots[i].request_id != 0 && s->slots[i].sent_ns == 0) {
                s->slots[i].sent_ns = now;
                s->unstamped--;
            }
        s->unstamped = 0;
    }
    n = send(s->fd, s->out.buf, s->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == -1) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            n = 0;
        else {
            ub_sess_kill(b, s, UA_BAD_CONNECTION_CLOSED, "send() failed");
            return;
        }
    }
    if ((size_t)n < s->out.len) {
        memmove(s->out.buf, s->out.buf + n, s->out.len - (size_t)n);
        s->out.len -= (size_t)n;
        if (!s->want_out) {
            struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT,
                                      .data.ptr = s };

            epoll_ctl(b->ep, EPOLL_CTL_MOD, s->fd, &ev);
            s->want_out = true;
        }
    } else {
        s->out.len = 0;
    }
}

static void
ub_sess_writable(struct ub *b, struct ub_sess *s)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

    if (s->state == UB_S_CONNECTING) {
        int       err = 0;
        socklen_t el = sizeof(err);
        ua_status st;

        if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) == -1
            || err != 0) {
            ub_sess_kill(b, s, UA_BAD_COMMUNICATION_ERROR,
                         "connect() failed");
            return;
        }
        st = ua_client_hello(&s->cl, b->url, &s->out);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "ua_client_hello()");
            return;
        }
        s->state = UB_S_HEL;
        ub_sess_dirty(b, s);
    } else if (s->out.len > 0) {
        ub_sess_dirty(b, s);
        return;             /* the flush decides whether EPOLLOUT stays */
    }
    epoll_ctl(b->ep, EPOLL_CTL_MOD, s->fd, &ev);
    s->want_out = false;
}

static void
ub_sess_readable(struct ub *b, struct ub_sess *s)
{
    ssize_t n;
    size_t  off = 0;
    uint64_t recv_ns;

    n = read(s->fd, s->rbuf + s->rlen, s->rcap - s->rlen);
    if (n == 0) {
        ub_sess_kill(b, s, UA_BAD_CONNECTION_CLOSED,
                     "the server closed the connection");
        return;
    }
    if (n == -1) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        ub_sess_kill(b, s, UA_BAD_CONNECTION_CLOSED, "read() failed");
        return;
    }
    recv_ns = ub_mono_ns();
    b->now_ns = recv_ns;
    s->rlen += (size_t)n;
    while (s->state != UB_S_DEAD) {
        uint32_t               chunk;
        struct ua_client_event ev;
        ua_status              st;

        st = ua_client_frame(&s->cl, s->rbuf + off, s->rlen - off, &chunk);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "bad chunk header from the server");
            return;
        }
        if (chunk == 0 || chunk > s->rlen - off)
            break;
        if (b->is_connect && b->opn_resp_blocks == 0)
            ub_opn_blocks(b, s->rbuf + off, chunk, b->cert_len > 0
                          ? ua_crypto_key_bytes(&b->cpub) : 0,
                          &b->opn_resp_blocks);
        st = ua_client_process(&s->cl, s->rbuf + off, chunk,
                               recv_ns / 1000000u, &ev);
        off += chunk;
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, ev.kind == UA_CLIENT_EV_ERR
                         ? "ERR from the server" : "bad chunk from the server");
            return;
        }
        ub_sess_event(b, s, &ev);
        /* connect: the cycle ended, the socket and buffer are new. */
        if (s->state == UB_S_CONNECTING || s->state == UB_S_IDLE)
            return;
    }
    if (s->state == UB_S_DEAD)
        return;
    if (off > 0) {
        memmove(s->rbuf, s->rbuf + off, s->rlen - off);
        s->rlen -= off;
    }
}

static ua_status
ub_send_request(struct ub *b, struct ub_sess *s, const struct ua_type *t,
                void *req, uint32_t *request_id)
{
    ua_status st;

    s->cl.now_dt = b->now_dt;
    st = ua_client_request(&s->cl, t, req, request_id, &s->out);
    if (st == UA_GOOD)
        ub_sess_dirty(b, s);
    return st;
}

/* Keep depth requests in flight (READY, while loading). */
static void
ub_sess_refill(struct ub *b, struct ub_sess *s)
{
    const struct ub_scenario *sc = b->sc;

    if (b->phase != UB_WARMUP && b->phase != UB_MEASURE)
        return;
    if (s->writer)
        return;                 /* paced by ub_sub_write() */
    if (b->is_connect) {
        if (s->state == UB_S_READY)
            ub_connect_close_session(b, s);     /* the first cycle's end */
        return;
    }
    while (s->state == UB_S_READY && s->inflight < b->depth) {
        uint32_t  id;
        ua_status st;
        uint32_t  i;

        sc->next(b, s);
        st = ub_send_request(b, s, &ua_types[sc->req_type], s->req, &id);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "cannot encode the request");
            return;
        }
        for (i = 0; i < b->depth; i++)
            if (s->slots[i].request_id == 0)
                break;
        s->slots[i].request_id = id;
        s->slots[i].sent_ns = 0;
        s->inflight++;
        s->unstamped++;
    }
}

static void
ub_sess_event(struct ub *b, struct ub_sess *s,
              const struct ua_client_event *ev)
{
    ua_status st;

    switch (ev->kind) {
    case UA_CLIENT_EV_NONE:
        return;
    case UA_CLIENT_EV_ACK:
        if (s->state != UB_S_HEL) {
            ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE, "unexpected ACK");
            return;
        }
        {
            size_t before = s->out.len;

            st = ua_client_open(&s->cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 0,
                                NULL, &s->out);
            if (st != UA_GOOD) {
                ub_sess_kill(b, s, st, "ua_client_open()");
                return;
            }
            if (b->is_connect && b->opn_req_blocks == 0)
                ub_opn_blocks(b, s->out.buf + before, s->out.len - before,
                              ua_crypto_key_bytes(&s->cl.server_key),
                              &b->opn_req_blocks);
        }
        s->state = UB_S_OPN;
        ub_sess_dirty(b, s);
        return;
    case UA_CLIENT_EV_OPEN:
        if (UA_STATUS_IS_BAD(ev->status)) {
            ub_sess_kill(b, s, ev->status, "OpenSecureChannel failed");
            return;
        }
        if (s->state == UB_S_OPN) {
            struct ua_create_session_request r;

            memset(&r, 0, sizeof(r));
            if (b->policy == NULL
                || ua_crypto_random(s->nonce, sizeof(s->nonce)) != UA_GOOD)
                for (size_t i = 0; i < sizeof(s->nonce); i++)
                    s->nonce[i] = (uint8_t)rand();
            r.client_description.application_uri = ua_string_from(
                b->app_uri[0] != '\0' ? b->app_uri : "urn:uabroker:uabench");
            r.client_description.product_uri = ua_string_from(
                "urn:uabroker:uabench");
            r.client_description.application_name.mask = UA_LT_TEXT;
            r.client_description.application_name.text = ua_string_from(
                "uabench");
            r.client_description.application_type = 1;     /* Client */
            r.client_description.gateway_server_uri.len = -1;
            r.client_description.discovery_profile_uri.len = -1;
            r.client_description.n_discovery_urls = -1;
            r.server_uri.len = -1;
            r.endpoint_url = ua_string_from(b->url);
            r.session_name = ua_string_from("uabench");
            r.client_nonce.len = (int32_t)sizeof(s->nonce);
            r.client_nonce.data = s->nonce;
            r.client_certificate.len = -1;
            if (b->policy != NULL) {
                r.client_certificate.len = (int32_t)b->cert_len;
                r.client_certificate.data = b->cert;
            }
            r.requested_session_timeout = 600000;
            r.max_response_message_size = 0;
            st = ub_send_request(b, s,
                                 &ua_types[UA_TYPE_CREATESESSIONREQUEST], &r,
                                 &s->setup_request);
            if (st != UA_GOOD) {
                ub_sess_kill(b, s, st, "cannot encode CreateSession");
                return;
            }
            s->state = UB_S_CREATE;
        }
        /* A Renew: nothing to do, the client switches tokens itself. */
        return;
    case UA_CLIENT_EV_MSG:
        if (s->state == UB_S_READY)
            ub_sess_response(b, s, ev);
        else if (s->state == UB_S_CREATE || s->state == UB_S_ACTIVATE)
            ub_sess_setup_msg(b, s, ev);
        else if (s->state == UB_S_SUBSCRIBE || s->state == UB_S_ITEMS)
            ub_sub_setup_msg(b, s, ev);
        else if (s->state == UB_S_CLOSING)
            ub_connect_closed(b, s, ev);
        else
            ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                         "unexpected response");
        return;
    case UA_CLIENT_EV_ABORT:
        /* That response is lost; its slot is freed and refilled. */
        ub_error(b, s, ev->status, "abort chunk from the server");
        for (uint32_t i = 0; i < b->depth; i++)
            if (s->slots[i].request_id == ev->request_id
                && ev->request_id != 0) {
                s->slots[i].request_id = 0;
                s->inflight--;
            }
        ub_sess_refill(b, s);
        return;
    case UA_CLIENT_EV_ERR:
    default:
        ub_sess_kill(b, s, ev->status, "ERR from the server");
        return;
    }
}

/* CreateSession and ActivateSession responses. */
static void
ub_sess_setup_msg(struct ub *b, struct ub_sess *s,
                  const struct ua_client_event *ev)
{
    ua_status st;

    if (ev->request_id != s->setup_request) {
        ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request");
        return;
    }
    ua_arena_reset(&b->arena);
    if (s->state == UB_S_CREATE) {
        struct ua_create_session_response   r;
        struct ua_activate_session_request  a;
        struct ua_anonymous_identity_token  tok;
        struct ua_signature_data            sig = { { -1, NULL },
                                                    { -1, NULL } };

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_CREATESESSIONRESPONSE], &r,
                              &b->arena);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "CreateSession failed");
            return;
        }
        /* The anonymous PolicyId (GetEndpoints may have given it). */
        ub_anon_policy(b, r.server_endpoints, r.n_server_endpoints);
        if (b->policy != NULL) {
            st = ub_session_sigs(b, s, &r, &sig);
            if (st != UA_GOOD) {
                ub_sess_kill(b, s, st, "CreateSession: the server's "
                             "certificate or signature");
                return;
            }
        }
        st = ua_client_set_token(&s->cl, &r.authentication_token);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "authenticationToken too long");
            return;
        }
        memset(&a, 0, sizeof(a));
        memset(&tok, 0, sizeof(tok));
        tok.policy_id = ua_string_from(b->anon_policy[0] != '\0'
                                       ? b->anon_policy : "anonymous");
        a.client_signature = sig;
        a.n_client_software_certificates = 0;
        a.n_locale_ids = 0;
        a.user_identity_token.encoding = UA_EO_DECODED;
        a.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
        a.user_identity_token.obj = &tok;
        a.user_identity_token.type_id = ua_nodeid_num(
            0, ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN].binary_id);
        a.user_token_signature.algorithm.len = -1;
        a.user_token_signature.signature.len = -1;
        st = ub_send_request(b, s, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST],
                             &a, &s->setup_request);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "cannot encode ActivateSession");
            return;
        }
        s->state = UB_S_ACTIVATE;
        return;
    }
    {
        struct ua_activate_session_response r;

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &r,
                              &b->arena);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "ActivateSession failed");
            return;
        }
        if (ub_sub_setup(b, s))
            return;
        if (b->is_connect && b->phase != UB_SETUP) {
            ub_connect_close_session(b, s);
            return;
        }
        s->state = UB_S_READY;
        ub_sess_ready(b, s);
        ub_sess_refill(b, s);
    }
}

static void
ub_sess_ready(struct ub *b, struct ub_sess *s)
{
    if (!s->counted) {
        s->counted = true;
        b->ready++;
    }
}

/*
 * Check one response body (type NodeId + response): its type, the
 * ServiceResult, the number of results and the first result's status.
 * Only the header and the first result are decoded.
 */
static ua_status
ub_check(struct ub *b, const struct ub_scenario *sc, const uint8_t *body,
         size_t len)
{
    struct ua_nodeid          tid;
    struct ua_response_header h;
    int32_t                   n;
    size_t                    used, off = 0;
    ua_status                 st;
    void                     *first;
    const struct ua_type     *rt = &ua_types[sc->result_type];

    ua_arena_reset(&b->arena);
    st = ua_decode(body, len, &used, &tid, &ua_types[UA_TYPE_NODEID],
                   &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    off += used;
    if (tid.ns != 0 || tid.idtype != UA_IDTYPE_NUMERIC)
        return UA_BAD_UNKNOWN_RESPONSE;
    st = ua_decode(body + off, len - off, &used, &h,
                   &ua_types[UA_TYPE_RESPONSEHEADER], &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    off += used;
    if (tid.id.num == UA_NS0ID_SERVICEFAULT_ENCODING_DEFAULTBINARY)
        return UA_STATUS_IS_BAD(h.service_result) ? h.service_result
                                                  : UA_BAD_UNKNOWN_RESPONSE;
    if (tid.id.num != ua_types[sc->resp_type].binary_id)
        return UA_BAD_UNKNOWN_RESPONSE;
    if (UA_STATUS_IS_BAD(h.service_result))
        return h.service_result;
    st = ua_decode(body + off, len - off, &used, &n,
                   &ua_types[UA_TYPE_INT32], &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    off += used;
    if (n != sc->nresults)
        return UA_BAD_UNEXPECTED_ERROR;
    first = ua_arena_alloc(&b->arena, rt->size);
    if (first == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    st = ua_decode(body + off, len - off, &used, first, rt, &b->arena, NULL);
    if (st != UA_GOOD)
        return st;
    return sc->status(first);
}

static void
ub_sess_response(struct ub *b, struct ub_sess *s,
                 const struct ua_client_event *ev)
{
    uint32_t  i;
    ua_status st;

    for (i = 0; i < b->depth; i++)
        if (s->slots[i].request_id == ev->request_id)
            break;
    if (b->is_sub) {
        ub_sub_response(b, s, ev);
        return;
    }
    if (i == b->depth || ev->request_id == 0) {
        /* A CloseSession response while draining, or a stray one. */
        if (b->phase < UB_DRAIN)
            ub_error(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request id");
        return;
    }
    if (b->phase == UB_MEASURE) {
        uint64_t sent = s->slots[i].sent_ns;

        b->ops++;
        if (sent != 0 && b->now_ns >= sent)
            ub_hist_add(b, b->now_ns - sent);
    }
    s->slots[i].request_id = 0;
    s->inflight--;
    st = ub_check(b, b->sc, ev->body, ev->len);
    if (st != UA_GOOD) {
        char what[96];

        snprintf(what, sizeof(what), "%s response: %s (0x%08X)", b->sc->name,
                 ua_status_name(st), st);
        ub_error(b, s, st, what);
    }
    ub_sess_refill(b, s);
}

/* ------------------------------------------------------------ run */

static void
ub_phase_to(struct ub *b, enum ub_phase p)
{
    b->phase = p;
    if (p == UB_WARMUP || p == UB_MEASURE) {
        for (uint32_t i = 0; i < b->nsess; i++)
            ub_sess_refill(b, &b->sess[i]);
    }
    if (p == UB_MEASURE) {
        if (b->stats && !ub_stats_fetch(b, &b->st0) && !b->quiet)
            fprintf(stderr, "uabench: cannot read the stats endpoint\n");
        b->srv_cpu_ok = ub_server_cpu_us(b, &b->srv_cpu0);
        b->all_cpu_ok = ub_machine_cpu_us(&b->all_cpu0);
        b->cli_cpu0 = ub_self_cpu_us();
        memset(b->hist, 0, sizeof(b->hist));
        b->hist_n = 0;
        b->ops = 0;
        b->t0_ns = ub_mono_ns();
    } else if (p == UB_DRAIN) {
        b->t1_ns = ub_mono_ns();
        b->cli_cpu1 = ub_self_cpu_us();
        if (b->srv_cpu_ok)
            b->srv_cpu_ok = ub_server_cpu_us(b, &b->srv_cpu1);
        if (b->all_cpu_ok)
            b->all_cpu_ok = ub_machine_cpu_us(&b->all_cpu1);
        if (b->stats && b->st0.ok)
            (void)ub_stats_fetch(b, &b->st1);
    }
}

/* CloseSession + CLO on every live session, then close the sockets. */
static void
ub_close_all(struct ub *b)
{
    for (uint32_t i = 0; i < b->nsess; i++) {
        struct ub_sess                 *s = &b->sess[i];
        struct ua_close_session_request r;

        if (s->fd == -1)
            continue;
        if (s->state == UB_S_READY) {
            memset(&r, 0, sizeof(r));
            r.delete_subscriptions = true;
            (void)ub_send_request(b, s, &ua_types[UA_TYPE_CLOSESESSIONREQUEST],
                                  &r, NULL);
        }
        if (s->state >= UB_S_OPN && s->state <= UB_S_READY)
            (void)ua_client_close(&s->cl, &s->out);
        if (s->out.len > 0)
            (void)send(s->fd, s->out.buf, s->out.len,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(s->fd, SHUT_WR);
    }
    /* Give the server a moment to read what was sent, then close. */
    usleep(20000);
    for (uint32_t i = 0; i < b->nsess; i++)
        if (b->sess[i].fd != -1) {
            close(b->sess[i].fd);
            b->sess[i].fd = -1;
        }
}

static void
ub_report(struct ub *b)
{
    double secs = (double)(b->t1_ns - b->t0_ns) / 1e9;
    double ops = (double)b->ops;
    double rate = secs > 0 ? ops / secs : 0;
    char   cli[32], srv[32], alloc[32], other[32], sec[96], name[128];

    if (ops > 0)
        snprintf(cli, sizeof(cli), "%.2f", (b->cli_cpu1 - b->cli_cpu0) / ops);
    else
        strcpy(cli, "-");
    if (ops > 0 && b->srv_cpu_ok)
        snprintf(srv, sizeof(srv), "%.2f", (b->srv_cpu1 - b->srv_cpu0) / ops);
    else
        strcpy(srv, "-");
    if (ops > 0 && b->st0.ok && b->st1.ok)
        snprintf(alloc, sizeof(alloc), "%.3f",
                 (double)(b->st1.allocations - b->st0.allocations) / ops);
    else
        strcpy(alloc, "-");
    /* Other load: machine busy time that was neither ours nor the
     * server's (only meaningful when the server's CPU is known). */
    if (secs > 0 && b->all_cpu_ok && b->srv_cpu_ok) {
        double o = (b->all_cpu1 - b->all_cpu0) - (b->cli_cpu1 - b->cli_cpu0)
                   - (b->srv_cpu1 - b->srv_cpu0);

        snprintf(other, sizeof(other), "%.2f", o > 0 ? o / secs / 1e6 : 0.0);
    } else {
        strcpy(other, "-");
    }
    if (b->policy != NULL)
        snprintf(sec, sizeof(sec), "%s:%s", b->policy->name,
                 b->mode == UA_MESSAGESECURITYMODE_SIGN ? "Sign"
                                                        : "SignAndEncrypt");
    else
        strcpy(sec, "None");
    if (b->policy != NULL)
        snprintf(name, sizeof(name), "%s (%s)", b->sc->name, sec);
    else
        snprintf(name, sizeof(name), "%s", b->sc->name);
    if (b->markdown)
        printf("| %s | %u | %u | %.0f | %.1f | %.1f | %.1f | %s | %s | %s | "
               "%" PRIu64 " | %s |\n", name, b->nsub, b->depth, rate,
               ub_hist_pct(b, 50), ub_hist_pct(b, 90), ub_hist_pct(b, 99),
               cli, srv, alloc, b->errors, other);
    else
        printf("scenario=%s sessions=%u depth=%u ops/s=%.0f p50_us=%.1f "
               "p90_us=%.1f p99_us=%.1f client_cpu_us/op=%s "
               "server_cpu_us/op=%s server_allocs/op=%s errors=%" PRIu64
               " other_load_cores=%s security=%s\n",
               b->sc->name, b->nsub, b->depth, rate, ub_hist_pct(b, 50),
               ub_hist_pct(b, 90), ub_hist_pct(b, 99), cli, srv, alloc,
               b->errors, other, sec);
    if (b->is_connect && b->policy != NULL) {
        /* A second line (stdout; stderr with --markdown). */
        ub_rsa_report(b->markdown ? stderr : stdout, b, rate,
                      b->srv_cpu_ok ? b->srv_cpu1 - b->srv_cpu0 : 0, secs);
    }
    if (b->is_sub)
        fprintf(stderr, "uabench: %s: %u items per session, interval %.0f "
                "ms, %.0f changes/s per variable; %" PRIu64 " notifications"
                " with the Overflow bit, %" PRIu64 " late Writes\n",
                b->sc->name, b->items, b->interval, b->rate, b->overflows,
                b->lag_writes);
    fflush(stdout);
    if (b->errors > 0 && !b->quiet)
        fprintf(stderr, "uabench: %" PRIu64 " errors; the first: %s (%s)\n",
                b->errors, b->first_error_what,
                ua_status_name(b->first_error));
}

int
main(int argc, char **argv)
{
    static struct ub   b;
    struct addrinfo    hints = { .ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM };
    struct epoll_event evs[256];
    uint64_t           start, deadline = 0, wait_ms = 1;
    int                rc;
    size_t             plen;

    if (ub_args(&b, argc, argv) != 0)
        return 2;
    if ((b.policy != NULL || b.write_cert != NULL || b.write_key != NULL)
        && ub_sec_init(&b) != 0)
        return 2;
    if (b.url[0] == '\0')
        return 0;               /* --write-cert/--write-key only */
    signal(SIGPIPE, SIG_IGN);
    /* The whole run is bounded, whatever the server does. */
    alarm((unsigned)(UB_SETUP_MS / 1000 + b.warmup + b.seconds
                     + UB_DRAIN_MS / 1000 + 30
                     + (b.policy != NULL ? 2 * UB_DISC_MS / 1000 + 20 : 0)));
    srand((unsigned)ub_mono_ns());
    if ((rc = getaddrinfo(b.host, b.port, &hints, &b.ai)) != 0) {
        fprintf(stderr, "uabench: %s:%s: %s\n", b.host, b.port,
                gai_strerror(rc));
        return 2;
    }
    /* sub, fanout: one more session, the writer (the last one). */
    b.nsub = b.nsess;
    if (b.is_sub)
        b.nsess++;
    /* "v0" ... "v<count-1>", in one block. */
    plen = strlen(b.vars_prefix);
    b.vars = calloc(b.vars_count, sizeof(*b.vars));
    b.vars_mem = malloc((size_t)b.vars_count * (plen + 11));
    b.sess = calloc(b.nsess, sizeof(*b.sess));
    b.flush = calloc(b.nsess, sizeof(*b.flush));
    b.arena_buf = malloc(UB_ARENA);
    if (b.vars == NULL || b.vars_mem == NULL || b.sess == NULL
        || b.flush == NULL || b.arena_buf == NULL) {
        fprintf(stderr, "uabench: out of memory\n");
        return 2;
    }
    for (uint32_t i = 0; i < b.vars_count; i++) {
        char *p = b.vars_mem + (size_t)i * (plen + 11);
        int   n = snprintf(p, plen + 11, "%s%u", b.vars_prefix, i);

        b.vars[i].len = n;
        b.vars[i].data = (uint8_t *)p;
    }
    ua_arena_init(&b.arena, b.arena_buf, UB_ARENA);
    if (b.policy != NULL && ub_discover(&b) != 0)
        return 2;
    if (b.is_sub && ub_sub_writer_init(&b) != 0) {
        fprintf(stderr, "uabench: out of memory\n");
        return 2;
    }
    b.ep = epoll_create1(EPOLL_CLOEXEC);
    if (b.ep == -1) {
        perror("uabench: epoll_create1()");
        return 2;
    }
    if (b.is_connect && b.policy != NULL) {
        if (!b.quiet)
            fprintf(stderr, "uabench: measuring the RSA operations\n");
        (void)ub_rsa_measure(&b, &b.rsa0);
    }
    b.phase = UB_SETUP;
    b.now_dt = ub_now_dt();
    for (uint32_t i = 0; i < b.nsess; i++) {
        b.sess[i].idx = i;
        b.sess[i].fd = -1;
        b.sess[i].writer = b.is_sub && i == b.nsess - 1;
        if (ub_sess_start(&b, &b.sess[i]) != 0)
            ub_sess_kill(&b, &b.sess[i], UA_BAD_COMMUNICATION_ERROR,
                         "cannot start the connection");
    }
    start = ub_mono_ns();
    if (!b.quiet)
        fprintf(stderr, "uabench: %s, %u sessions, depth %u, %s\n", b.url,
                b.nsess, b.depth, b.sc->name);
    while (b.phase != UB_DONE) {
        int      n, timeout;
        uint64_t now = ub_mono_ns();

        b.now_ns = now;
        /* Phase changes. */
        if (b.phase == UB_SETUP) {
            if (b.ready + b.dead == b.nsess
                || now - start > (uint64_t)UB_SETUP_MS * 1000000u) {
                if (b.ready == 0) {
                    fprintf(stderr, "uabench: no session could be set up%s"
                            "\n", b.policy != NULL
                            && b.first_error == UA_BAD_SECURITY_CHECKS_FAILED
                            ? " (is our certificate in the server's trust "
                              "list?)" : "");
                    return 2;
                }
                if (b.ready + b.dead < b.nsess)
                    for (uint32_t i = 0; i < b.nsess; i++)
                        if (b.sess[i].state < UB_S_READY)
                            ub_sess_kill(&b, &b.sess[i], UA_BAD_TIMEOUT,
                                         "setup timed out");
                if (!b.quiet)
                    fprintf(stderr, "uabench: %u sessions ready; warm-up "
                            "%.1f s, then %.1f s measured\n", b.ready,
                            b.warmup, b.seconds);
                deadline = now + (uint64_t)(b.warmup * 1e9);
                ub_phase_to(&b, UB_WARMUP);
            }
        } else if (b.phase == UB_WARMUP && now >= deadline) {
            ub_phase_to(&b, UB_MEASURE);
            now = b.t0_ns;
            deadline = now + (uint64_t)(b.seconds * 1e9);
        } else if (b.phase == UB_MEASURE && now >= deadline) {
            ub_phase_to(&b, UB_DRAIN);
            deadline = ub_mono_ns() + (uint64_t)UB_DRAIN_MS * 1000000u;
        } else if (b.phase == UB_DRAIN) {
            uint32_t left = 0;

            for (uint32_t i = 0; i < b.nsess; i++) {
                if (b.is_connect)           /* cycles not finished */
                    left += b.sess[i].counted
                            && b.sess[i].state != UB_S_IDLE;
                else if (b.sess[i].state == UB_S_READY
                         && (!b.is_sub || b.sess[i].writer))
                    left += b.sess[i].inflight;     /* not parked Publishes */
            }
            if (left == 0 || now >= deadline)
                b.phase = UB_DONE;
            if (b.phase == UB_DONE)
                break;
        }
        /* Channel renewal at 75 % of the token lifetime (long runs). */
        for (uint32_t i = 0; b.phase != UB_SETUP && i < b.nsess; i++) {
            struct ub_sess *s = &b.sess[i];
            uint32_t        now_ms = (uint32_t)(now / 1000000u);

            if (s->state != UB_S_READY
                || (int32_t)(now_ms - s->next_renew_check_ms) < 0)
                continue;
            s->next_renew_check_ms = now_ms + 1000;
            if (ua_client_renew_due(&s->cl, now / 1000000u)
                && s->cl.opn_request_id == 0) {
                ua_status st = ua_client_open(
                    &s->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW, 0, NULL,
                    &s->out);

                if (st != UA_GOOD)
                    ub_sess_kill(&b, s, st, "cannot renew the channel");
                else
                    ub_sess_dirty(&b, s);
            }
        }
        if (b.ready == 0 && b.phase != UB_SETUP) {
            fprintf(stderr, "uabench: every session failed\n");
            break;
        }
        timeout = 100;
        if (b.is_sub && wait_ms < (uint64_t)timeout)
            timeout = (int)wait_ms;
        if (b.phase != UB_SETUP && deadline > now
            && (deadline - now) / 1000000u < (uint64_t)timeout)
            timeout = (int)((deadline - now) / 1000000u) + 1;
        n = epoll_wait(b.ep, evs, (int)(sizeof(evs) / sizeof(evs[0])),
                       timeout);
        if (n == -1) {
            if (errno == EINTR)
                continue;
            perror("uabench: epoll_wait()");
            return 2;
        }
        b.now_dt = ub_now_dt();
        for (int i = 0; i < n; i++) {
            struct ub_sess *s = evs[i].data.ptr;

            if (s->state == UB_S_DEAD)
                continue;
            if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)
                && s->want_out)
                ub_sess_writable(&b, s);
            if (s->state != UB_S_DEAD && s->state != UB_S_CONNECTING
                && evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                ub_sess_readable(&b, s);
        }
        if (b.is_sub)
            wait_ms = ub_sub_write(&b);
        for (uint32_t i = 0; i < b.nflush; i++)
            ub_sess_flush(&b, b.flush[i]);
        b.nflush = 0;
    }
    if (b.phase != UB_DONE && b.t1_ns == 0)
        ub_phase_to(&b, UB_DRAIN);
    ub_close_all(&b);
    if (b.is_connect && b.policy != NULL)
        (void)ub_rsa_measure(&b, &b.rsa1);
    ub_report(&b);
    return b.errors > 0 ? 1 : 0;
}
