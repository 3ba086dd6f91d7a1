/*
 * tests/bench/uabench.h: what the files of uabench share (private to
 * tests/bench/uabench*.c): limits, the run's state (struct ub), a
 * session (struct ub_sess), a scenario's row (struct ub_scenario), and the
 * functions one file calls in another.  tests/bench/uabench.c describes
 * the program.
 */
#ifndef UABENCH_H
#define UABENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/arena.h"
#include "proto/client.h"
#include "proto/crypto.h"
#include "proto/securechannel.h"
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
#define UB_SUB_ITEMS_MAX  100000        /* --items */
#define UB_ARENA          (8u << 20)
#define UB_RESP_MAX       (1u << 20)    /* reassembled response, per session */
#define UB_NAME_MAX       64
#define UB_NONCE          32            /* CreateSession clientNonce */
#define UB_DISC_MS        5000          /* GetEndpoints, blocking */
#define UB_KEY_BITS       2048          /* a generated client key */
#define UB_RSA_BATCHES    5             /* RSA cost: batches, the best */
#define UB_RSA_BATCH_US   40000         /* CPU time per batch, at least */
#define UB_RSA_SAMPLE_MS  250           /* connect: one in-window sample */

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
    /* sub, fanout: the writer session (--source write), or a
     * subscriber's acknowledgements for its next Publish. */
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

/*
 * connect with security: the server's two private-key operations timed
 * inside the measured window too, one of each every UB_RSA_SAMPLE_MS
 * (ub_rsa_sample; ~8 ms of our loop each time), so that their cost is
 * taken on the machine as the server meets it, not only before and after.
 */
struct ub_rsa_win {
    bool     ready;             /* data, ct made */
    bool     failed;
    uint32_t n;                 /* samples (one sign, one decrypt each) */
    double   sign_sum;          /* thread CPU µs */
    double   decrypt_sum;
    double   cpu_sum;           /* all of it, the untimed first ops too */
    uint64_t next_ns;           /* CLOCK_MONOTONIC of the next sample */
    size_t   ctl;
    uint8_t  data[1024];
    uint8_t  ct[UA_RSA_MAX_BYTES];
};

struct ub_stats_sample {
    bool     ok;
    uint64_t allocations;       /* sum over the workers */
    uint64_t rsa_cpu_us;        /* sum over the workers: CPU inside RSA */
    bool     rsa_cpu_seen;
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
    bool                      source_sim;       /* --source sim: no writer,
                                                   the server's simulation
                                                   changes the variables */
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
    struct ub_rsa_win         rsaw;
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

/* uabench_scen.c: the scenarios, rows of ub_scenarios[]. */
extern const struct ub_scenario ub_scenarios[];
extern const size_t             ub_nscenarios;

/* uabench.c: clocks, histogram */
uint64_t ub_mono_ns(void);
int64_t ub_now_dt(void);
void ub_hist_add(struct ub *b, uint64_t ns);

/* uabench_conn.c: sessions, their connections and messages */
void ub_error(struct ub *b, struct ub_sess *s, ua_status st,
              const char *what);
int ub_sess_start(struct ub *b, struct ub_sess *s);
void ub_sess_kill(struct ub *b, struct ub_sess *s, ua_status st,
                  const char *what);
void ub_sess_dirty(struct ub *b, struct ub_sess *s);
void ub_sess_flush(struct ub *b, struct ub_sess *s);
void ub_sess_readable(struct ub *b, struct ub_sess *s);
void ub_sess_writable(struct ub *b, struct ub_sess *s);
void ub_sess_refill(struct ub *b, struct ub_sess *s);
ua_status ub_send_request(struct ub *b, struct ub_sess *s,
                          const struct ua_type *t, void *req,
                          uint32_t *request_id);
void ub_sess_ready(struct ub *b, struct ub_sess *s);

/* uabench_sec.c: certificates, discovery, session signatures, RSA costs */
int ub_sec_init(struct ub *b);
int ub_discover(struct ub *b);
void ub_anon_policy(struct ub *b,
                    const struct ua_endpoint_description *e,
                    int32_t n);
ua_status ub_session_sigs(struct ub *b, struct ub_sess *s,
                          const struct ua_create_session_response *r,
                          struct ua_signature_data *sig);
int ub_rsa_measure(struct ub *b, struct ub_rsa *r);
void ub_rsa_sample(struct ub *b);
void ub_rsa_report(FILE *f, struct ub *b, double hs, double srv_us,
                   double secs);

/* uabench_scen.c: the scenarios (sub, fanout, connect: their extra steps) */
uint32_t ub_sub_items(const struct ub_scenario *sc);
bool ub_sub_setup(struct ub *b, struct ub_sess *s);
void ub_sub_setup_msg(struct ub *b, struct ub_sess *s,
                      const struct ua_client_event *ev);
void ub_sub_response(struct ub *b, struct ub_sess *s,
                     const struct ua_client_event *ev);
int ub_sub_writer_init(struct ub *b);
uint64_t ub_sub_write(struct ub *b);
int ub_connect_init(struct ub *b, struct ub_sess *s);
void ub_connect_close_session(struct ub *b, struct ub_sess *s);
void ub_connect_closed(struct ub *b, struct ub_sess *s,
                       const struct ua_client_event *ev);
void ub_opn_blocks(struct ub *b, const uint8_t *chunk, size_t len,
                   size_t key_bytes, uint32_t *blocks);

#endif /* UABENCH_H */
