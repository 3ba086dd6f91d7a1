/*
 * tests/integ/check_badinput.c: the bad-input cases of docs/security.md
 * (transport, chunk reassembly, secure channel, decoding, session) against
 * a running uabroker with 2 workers.
 *
 * The program starts its own broker (the uabroker next to this binary's
 * build directory, or $UABROKER) on free loopback ports with a temporary
 * runtime directory and two settings that make the limits reachable in a
 * test: limits.hello_timeout_ms=1000 and limits.max_message_size=1 MiB.
 *
 * Each case opens its own connections, sends the bad input and asserts what
 * the spec says must happen: the status of the ERR (or ServiceFault) and
 * whether the connection is closed.  Between cases, control clients (each
 * with an activated session, spread over both workers) read ns=1;s=v0 and
 * ns=1;s=v1 and must get Int32 0 and Double 1.5 back: the server keeps
 * serving OTHER clients throughout.  After every case the broker and both
 * workers must still run under the same pids (no crash, no respawn).
 *
 * Output: "ok N - name", "not ok N - name: why", "skip N - name: why", then
 * one closing line "N passed, M failed, K skipped"; exit status 1 when any
 * case failed.  Every wait is bounded; the whole run is bounded by alarm().
 *
 *   build/tests/integ/check_badinput [-v] [CASE-SUBSTRING...]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/client.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define BI_WORKERS        2
#define BI_UNACTIVATED_MAX 50         /* limits.max_unactivated_per_address */
#define BI_HELLO_MS       1000          /* limits.hello_timeout_ms */
#define BI_MAX_MESSAGE    (1u << 20)    /* limits.max_message_size */
#define BI_CTL_MIN        4             /* control clients, at least */
#define BI_CTL_MAX        24            /* ... and at most */
#define BI_CONNS          16            /* connections one case may hold */
#define BI_MANY           200           /* idle / half-message connections */
#define BI_BUF            (4u << 20)
#define BI_WHY            512
#define BI_RUN_SECONDS    600           /* the whole program */
#define BI_CTL_SLOW_MS    2000          /* two control Reads slower: failure */
#define BI_NEST           10000         /* nesting-bomb depth */

#define BI_STATUS_ANY_BAD 0xFFFFFFFFu   /* in a list of accepted codes */

struct bi {
    char             broker[PATH_MAX];
    char             dir[PATH_MAX];
    char             log[PATH_MAX + 32];
    pid_t            pid;
    uint16_t         port;
    uint16_t         sport;
    bool             verbose;
    /* Control clients. */
    struct uaconn    ctl[BI_CTL_MAX];
    int              nctl;
    double           ctl_base_us;       /* median control Read, at start */
    /* Per-case connections, cleared after each case. */
    struct uaconn    c[BI_CONNS];
    int              nc;
    /* Worker pids from /stats at the start; must not change. */
    int              wpids[16];
    int              nwpids;
    bool             stats_ok;
    uint32_t         max_nodes_per_read;
    /* Scratch. */
    uint8_t         *buf;
    uint8_t         *buf2;
    struct ua_arena  arena;
    uint8_t         *arena_buf;
    char             why[BI_WHY];
    bool             skipped;
};

struct bi_case {
    const char *name;
    int       (*fn)(struct bi *t);
};


/* Table of contents. */
static uint64_t bi_us(void);
static void bi_put32(uint8_t *p, uint32_t v);
static uint32_t bi_get32(const uint8_t *p);
static int bi_fail(struct bi *t, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bi_skip(struct bi *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *bi_sn(ua_status s);
static bool bi_in(ua_status s, const ua_status *set, size_t n);
static int bi_broker_start(struct bi *t);
static void bi_broker_stop(struct bi *t);
static bool bi_broker_alive(struct bi *t);
static int bi_http_get(struct bi *t, const char *path, char *out, size_t cap);
static int bi_stats_workers(struct bi *t, const char *key, long *vals,
                            int max);
static int bi_stats_pids(struct bi *t, int *pids, int max);
static long bi_rss_kb(int pid);
static long bi_workers_rss_kb(struct bi *t);
static struct uaconn *bi_conn(struct bi *t);
static void bi_conns_clear(struct bi *t);
static int bi_tcp(struct bi *t, struct uaconn *c);
static int bi_channel(struct bi *t, struct uaconn *c);
static int bi_session(struct bi *t, struct uaconn *c);
static size_t bi_hel(uint8_t *p, uint32_t ver, uint32_t rbuf, uint32_t sbuf,
                     uint32_t maxmsg, uint32_t maxch, int32_t ulen_field,
                     const char *url, size_t ulen);
static size_t bi_opn(uint8_t *p, uint32_t channel, const char *policy,
                     int32_t plen_field, int32_t mode, int32_t type,
                     uint32_t seq, uint32_t reqid);
static size_t bi_msg(uint8_t *p, const char *mt, char ct, uint32_t channel,
                     uint32_t token, uint32_t seq, uint32_t reqid,
                     const uint8_t *body, size_t blen);
static size_t bi_msg_next(struct uaconn *c, char ct, const uint8_t *body,
                          size_t blen, uint8_t *p, uint32_t *reqid);
static size_t bi_put_nodeid(uint8_t *p, size_t cap,
                            const struct ua_nodeid *n);
static size_t bi_put_header(struct uaconn *c, uint8_t *p, size_t cap,
                            uint32_t handle);
static size_t bi_put_value(uint8_t *p, size_t cap, const void *v,
                           const struct ua_type *ty);
static ua_status bi_expect_err(struct bi *t, struct uaconn *c,
                               const ua_status *codes, size_t n,
                               ua_status *got);
static int bi_err_close(struct bi *t, struct uaconn *c, const char *what,
                        const ua_status *codes, size_t n);
static ua_status bi_response(struct bi *t, struct uaconn *c, uint32_t reqid,
                             const struct ua_type *rt, void *resp,
                             uint32_t *handle);
static ua_status bi_read(struct bi *t, struct uaconn *c, const char *sid,
                         uint32_t attr, struct ua_datavalue *out);
static int bi_read_ok(struct bi *t, struct uaconn *c, const char *what);
static ua_status bi_create_session(struct bi *t, struct uaconn *c,
                                   int32_t nonce_len, double timeout,
                                   struct ua_nodeid *token, double *revised);
static ua_status bi_activate(struct bi *t, struct uaconn *c);
static ua_status bi_close_session(struct bi *t, struct uaconn *c);
static int bi_ctl_check(struct bi *t, const char *after);
static int bi_ctl_latency(struct bi *t, int rounds, double *p50_us,
                          double *max_us);
static size_t bi_bomb_variant(uint8_t *p, size_t cap, int depth);
static size_t bi_bomb_extobj(uint8_t *p, size_t cap, int depth);
static size_t bi_read_tail(uint8_t *p, int32_t ttr);
static int bi_raw_request(struct bi *t, struct uaconn *c,
                          uint32_t type_binary_id, uint32_t handle,
                          const uint8_t *tail, size_t tlen, uint32_t *reqid);
static int bi_expect_fault(struct bi *t, struct uaconn *c, uint32_t reqid,
                           uint32_t handle, const struct ua_type *rt,
                           const ua_status *codes, size_t n,
                           const char *what);
static int bi_log_clean(struct bi *t);
static size_t bi_read_chunk(struct bi *t, struct uaconn *c, uint8_t *out);

/* ------------------------------------------------------------ helpers */

static uint64_t
bi_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void
bi_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t
bi_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static int
bi_fail(struct bi *t, int line, const char *fmt, ...)
{
    va_list ap;
    int     n;

    n = snprintf(t->why, sizeof(t->why), "line %d: ", line);
    va_start(ap, fmt);
    vsnprintf(t->why + n, sizeof(t->why) - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int
bi_skip(struct bi *t, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->why, sizeof(t->why), fmt, ap);
    va_end(ap);
    t->skipped = true;
    return 0;
}

#define BI_CHECK(cond, ...)                                                \
    do {                                                                   \
        if (!(cond))                                                       \
            return bi_fail(t, __LINE__, __VA_ARGS__);                      \
    } while (0)

#define BI_TRY(expr)                                                       \
    do {                                                                   \
        if ((expr) != 0)                                                   \
            return -1;                                                     \
    } while (0)

#define BI_N(a) (sizeof(a) / sizeof((a)[0]))

static const char *
bi_sn(ua_status s)
{
    static char buf[4][80];
    static int  k;
    const char *n = ua_status_name(s);

    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s (0x%08X)", n != NULL ? n : "?", s);
    return buf[k];
}

static bool
bi_in(ua_status s, const ua_status *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == s || (set[i] == BI_STATUS_ANY_BAD && UA_STATUS_IS_BAD(s)))
            return true;
    return false;
}

/* ------------------------------------------------------------ broker */

static int
bi_broker_start(struct bi *t)
{
    char  portarg[16], statsarg[64], hello[64], maxmsg[64], workers[8];
    char *argv[20];
    int   i = 0;

    t->port = itest_free_port();
    do
        t->sport = itest_free_port();
    while (t->sport == t->port);
    if (t->port == 0 || t->sport == 0)
        return -1;
    snprintf(portarg, sizeof(portarg), "%u", t->port);
    snprintf(statsarg, sizeof(statsarg), "127.0.0.1:%u", t->sport);
    snprintf(hello, sizeof(hello), "limits.hello_timeout_ms=%u", BI_HELLO_MS);
    snprintf(maxmsg, sizeof(maxmsg), "limits.max_message_size=%u",
             BI_MAX_MESSAGE);
    snprintf(workers, sizeof(workers), "%d", BI_WORKERS);
    argv[i++] = t->broker;
    argv[i++] = "-w";
    argv[i++] = workers;
    argv[i++] = "-p";
    argv[i++] = portarg;
    argv[i++] = "--stats";
    argv[i++] = statsarg;
    argv[i++] = "--runtime-dir";
    argv[i++] = t->dir;
    argv[i++] = "--set";
    argv[i++] = hello;
    argv[i++] = "--set";
    argv[i++] = maxmsg;
    /* Anonymous sessions write here (security.anonymous_write).  Policy
     * None only: seven endpoints with a certificate each would not fit
     * the 8 KiB single-chunk CreateSession response of
     * bi_t_response_too_large. */
    argv[i++] = "--set";
    argv[i++] = "security.anonymous_write=true";
    argv[i++] = "--set";
    argv[i++] = "security.policies=None";
    argv[i] = NULL;
    t->pid = itest_spawn(t->log, argv);
    return 0;
}

static bool
bi_broker_alive(struct bi *t)
{
    if (t->pid > 0 && !itest_alive(t->pid))
        t->pid = -1;
    return t->pid > 0;
}

static void
bi_broker_stop(struct bi *t)
{
    if (t->pid <= 0)
        return;
    if (itest_stop(t->pid, 10000) == -1)
        fprintf(stderr, "check_badinput: the broker did not stop by itself "
                "in 10 s\n");
    t->pid = -1;
}

/* ------------------------------------------------------------ stats */

/* GET path from the stats endpoint into out (the body); 0 or -1. */
static int
bi_http_get(struct bi *t, const char *path, char *out, size_t cap)
{
    char  *body = NULL;
    size_t n;

    if (itest_http(t->sport, "GET", path, &body) != 200 || body == NULL
        || (n = strlen(body)) >= cap) {
        free(body);
        return -1;
    }
    memcpy(out, body, n + 1);
    free(body);
    return 0;
}

/*
 * The value of key in each object of the "workers" array of /stats (keys
 * of the worker objects themselves, not of their nested objects), in
 * order; the number of workers found, or -1 when the endpoint does not
 * answer.
 */
static int
bi_stats_workers(struct bi *t, const char *key, long *vals, int max)
{
    static char buf[1 << 18];
    const char *p, *w;
    size_t      kl = strlen(key);
    int         n = 0, depth = 0;

    if (bi_http_get(t, "/stats", buf, sizeof(buf)) != 0)
        return -1;
    /* The "workers" key whose value is an array (the broker's own
     * "workers" is a count). */
    for (w = strstr(buf, "\"workers\""), p = NULL; w != NULL && p == NULL;
         w = strstr(w + 1, "\"workers\"")) {
        const char *q = w + 9;

        while (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r')
            q++;
        if (*q != ':')
            continue;
        q++;
        while (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r')
            q++;
        if (*q == '[')
            p = q;
    }
    if (p == NULL)
        return 0;
    for (; *p != '\0'; p++) {
        if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (--depth == 0)
                break;
        } else if (depth == 2 && *p == '"' && strncmp(p + 1, key, kl) == 0
                   && p[1 + kl] == '"') {
            const char *q = p + 2 + kl;

            while (*q == ' ' || *q == ':')
                q++;
            if (n < max)
                vals[n++] = strtol(q, NULL, 10);
            p += 1 + kl;
        }
    }
    return n;
}

/* The workers' pids from /stats (see bi_stats_workers). */
static int
bi_stats_pids(struct bi *t, int *pids, int max)
{
    long v[16];
    int  n = bi_stats_workers(t, "pid", v, max < 16 ? max : 16);

    for (int i = 0; i < n; i++)
        pids[i] = (int)v[i];
    return n;
}

static long
bi_rss_kb(int pid)
{
    char  path[64], line[256];
    FILE *f;
    long  kb = -1;

    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    f = fopen(path, "re");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

static long
bi_workers_rss_kb(struct bi *t)
{
    long sum = 0;

    for (int i = 0; i < t->nwpids; i++) {
        long kb = bi_rss_kb(t->wpids[i]);

        if (kb < 0)
            return -1;
        sum += kb;
    }
    return t->nwpids > 0 ? sum : -1;
}

/* ------------------------------------------------------------ connections */

static struct uaconn *
bi_conn(struct bi *t)
{
    struct uaconn *c;

    if (t->nc == BI_CONNS)
        abort();            /* a case holds more than it may: a test bug */
    c = &t->c[t->nc++];
    uaconn_init(c);
    c->timeout_ms = 5000;
    return c;
}

static void
bi_conns_clear(struct bi *t)
{
    for (int i = 0; i < t->nc; i++)
        uaconn_clear(&t->c[i]);
    t->nc = 0;
}

static int
bi_tcp(struct bi *t, struct uaconn *c)
{
    int rc = uaconn_connect(c, "127.0.0.1", t->port);

    if (rc != 0)
        return bi_fail(t, __LINE__, "connect: %s", strerror(-rc));
    return 0;
}

/* TCP, HEL/ACK, OPN. */
static int
bi_channel(struct bi *t, struct uaconn *c)
{
    ua_status s;

    BI_TRY(bi_tcp(t, c));
    s = uaconn_hello(c, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    s = uaconn_open(c, 0);
    BI_CHECK(s == UA_GOOD, "OPN: %s", bi_sn(s));
    return 0;
}

/* A channel with an activated anonymous session. */
static int
bi_session(struct bi *t, struct uaconn *c)
{
    ua_status s;

    BI_TRY(bi_channel(t, c));
    s = uaconn_session(c);
    BI_CHECK(s == UA_GOOD, "CreateSession/ActivateSession: %s", bi_sn(s));
    return 0;
}

/* ------------------------------------------------------------ builders */

static size_t
bi_hel(uint8_t *p, uint32_t ver, uint32_t rbuf, uint32_t sbuf,
       uint32_t maxmsg, uint32_t maxch, int32_t ulen_field, const char *url,
       size_t ulen)
{
    memcpy(p, "HELF", 4);
    bi_put32(p + 4, (uint32_t)(32 + ulen));
    bi_put32(p + 8, ver);
    bi_put32(p + 12, rbuf);
    bi_put32(p + 16, sbuf);
    bi_put32(p + 20, maxmsg);
    bi_put32(p + 24, maxch);
    bi_put32(p + 28, (uint32_t)ulen_field);
    if (ulen > 0)
        memcpy(p + 32, url, ulen);
    return 32 + ulen;
}

/* An OPN chunk with policy (its length field may lie), mode and type. */
static size_t
bi_opn(uint8_t *p, uint32_t channel, const char *policy, int32_t plen_field,
       int32_t mode, int32_t type, uint32_t seq, uint32_t reqid)
{
    struct ua_open_secure_channel_request r;
    struct ua_nodeid                      tid = ua_nodeid_num(
        0, UA_NS0ID_OPENSECURECHANNELREQUEST_ENCODING_DEFAULTBINARY);
    size_t                                plen = strlen(policy), off, n;

    memcpy(p, "OPNF", 4);
    bi_put32(p + 8, channel);
    bi_put32(p + 12, (uint32_t)plen_field);
    memcpy(p + 16, policy, plen);
    off = 16 + plen;
    bi_put32(p + off, 0xFFFFFFFFu);         /* no certificate */
    bi_put32(p + off + 4, 0xFFFFFFFFu);     /* no thumbprint */
    bi_put32(p + off + 8, seq);
    bi_put32(p + off + 12, reqid);
    off += 16;
    off += bi_put_nodeid(p + off, 64, &tid);
    memset(&r, 0, sizeof(r));
    r.request_header.authentication_token = ua_nodeid_num(0, 0);
    r.request_header.request_handle = 1;
    r.request_header.audit_entry_id.len = -1;
    r.request_type = type;
    r.security_mode = mode;
    r.client_nonce.len = 0;
    r.requested_lifetime = 600000;
    n = bi_put_value(p + off, 4096, &r,
                     &ua_types[UA_TYPE_OPENSECURECHANNELREQUEST]);
    off += n;
    bi_put32(p + 4, (uint32_t)off);
    return off;
}

static size_t
bi_msg(uint8_t *p, const char *mt, char ct, uint32_t channel, uint32_t token,
       uint32_t seq, uint32_t reqid, const uint8_t *body, size_t blen)
{
    memcpy(p, mt, 3);
    p[3] = (uint8_t)ct;
    bi_put32(p + 4, (uint32_t)(UA_SC_SYM_HEADER + blen));
    bi_put32(p + 8, channel);
    bi_put32(p + 12, token);
    bi_put32(p + 16, seq);
    bi_put32(p + 20, reqid);
    if (blen > 0)
        memmove(p + UA_SC_SYM_HEADER, body, blen);
    return UA_SC_SYM_HEADER + blen;
}

/*
 * A MSG chunk on c's channel with the next sequence number (kept in c's
 * client so later ordinary requests stay in sequence) and, for a first or
 * only chunk, a new request id (*reqid; pass the same one for later
 * chunks with *reqid != 0).
 */
static size_t
bi_msg_next(struct uaconn *c, char ct, const uint8_t *body, size_t blen,
            uint8_t *p, uint32_t *reqid)
{
    if (*reqid == 0) {
        *reqid = c->cl.next_request_id++;
        if (c->cl.next_request_id == 0)
            c->cl.next_request_id = 1;
    }
    return bi_msg(p, "MSG", ct, c->cl.channel_id, c->cl.token_id,
                  ++c->cl.send_seq, *reqid, body, blen);
}

static size_t
bi_put_value(uint8_t *p, size_t cap, const void *v, const struct ua_type *ty)
{
    size_t    n = 0;
    ua_status s = ua_encode(v, ty, p, cap, &n);

    return s == UA_GOOD ? n : 0;
}

static size_t
bi_put_nodeid(uint8_t *p, size_t cap, const struct ua_nodeid *n)
{
    return bi_put_value(p, cap, n, &ua_types[UA_TYPE_NODEID]);
}

/* A RequestHeader with c's authentication token and the given handle. */
static size_t
bi_put_header(struct uaconn *c, uint8_t *p, size_t cap, uint32_t handle)
{
    struct ua_request_header h;

    memset(&h, 0, sizeof(h));
    h.authentication_token = c->cl.auth_token;
    h.timestamp = 0;
    h.request_handle = handle;
    h.audit_entry_id.len = -1;
    h.timeout_hint = 10000;
    h.additional_header.type_id = ua_nodeid_num(0, 0);
    h.additional_header.encoding = UA_EO_NONE;
    return bi_put_value(p, cap, &h, &ua_types[UA_TYPE_REQUESTHEADER]);
}

/*
 * A Variant that nests depth arrays of one Variant each (Team82's
 * complex_nested_message: 98 01000000, repeated), ending in a null Variant.
 */
static size_t
bi_bomb_variant(uint8_t *p, size_t cap, int depth)
{
    size_t off = 0;

    for (int i = 0; i < depth && off + 6 <= cap; i++) {
        p[off] = 0x80 | UA_BT_VARIANT;      /* array of Variant */
        bi_put32(p + off + 1, 1);
        off += 5;
    }
    p[off++] = 0;                           /* the innermost: null */
    return off;
}

/* An ExtensionObject holding a KeyValuePair whose Value is the bomb. */
static size_t
bi_bomb_extobj(uint8_t *p, size_t cap, int depth)
{
    struct ua_nodeid tid = ua_nodeid_num(
        0, UA_NS0ID_KEYVALUEPAIR_ENCODING_DEFAULTBINARY);
    size_t           off = bi_put_nodeid(p, cap, &tid), start;

    p[off++] = 1;                           /* binary body */
    start = off;
    off += 4;                               /* length, patched */
    p[off++] = 0;                           /* Key: QualifiedName ns 0 */
    p[off++] = 0;
    bi_put32(p + off, 1);
    p[off + 4] = 'k';
    off += 5;
    off += bi_bomb_variant(p + off, cap - off, depth);
    bi_put32(p + start, (uint32_t)(off - start - 4));
    return off;
}

/* ------------------------------------------------------------ expectations */

/*
 * Read chunks until an ERR arrives (its status in *got) or the connection
 * ends (UA_BAD_CONNECTION_CLOSED) or nothing comes (UA_BAD_TIMEOUT).  Other
 * chunks (responses already in flight) are skipped.
 */
static ua_status
bi_expect_err(struct bi *t, struct uaconn *c, const ua_status *codes,
              size_t n, ua_status *got)
{
    (void)codes;
    (void)n;
    for (int i = 0; i < 64; i++) {
        size_t    len;
        ua_status s = uaconn_raw_chunk(c, t->buf2, BI_BUF, &len);

        if (s == UA_GOOD)
            continue;       /* an ACK or a response: not what we wait for */
        *got = s;
        return s;
    }
    *got = UA_BAD_UNEXPECTED_ERROR;
    return *got;
}

/*
 * The server must answer with an ERR whose code is in codes (BI_STATUS_ANY_BAD
 * accepts any Bad code), then close the connection.
 */
static int
bi_err_close(struct bi *t, struct uaconn *c, const char *what,
             const ua_status *codes, size_t n)
{
    ua_status got;

    bi_expect_err(t, c, codes, n, &got);
    BI_CHECK(got != UA_BAD_CONNECTION_CLOSED,
             "%s: the connection was closed without an ERR", what);
    BI_CHECK(got != UA_BAD_TIMEOUT, "%s: no ERR within %d ms", what,
             c->timeout_ms);
    BI_CHECK(bi_in(got, codes, n), "%s: ERR %s is not the expected %s", what,
             bi_sn(got), bi_sn(codes[0]));
    BI_CHECK(uaconn_raw_closed(c), "%s: the connection stays open after "
             "ERR %s", what, bi_sn(got));
    return 0;
}

/*
 * Wait for the response to reqid and decode it as rt into resp (in the
 * arena).  Returns its ServiceResult (a ServiceFault's code), or a channel
 * error (ERR status, BadConnectionClosed, BadTimeout).  *handle receives
 * the echoed requestHandle when not NULL.
 */
static ua_status
bi_response(struct bi *t, struct uaconn *c, uint32_t reqid,
            const struct ua_type *rt, void *resp, uint32_t *handle)
{
    struct ua_client_event ev;
    ua_status              s;

    for (;;) {
        s = uaconn_recv(c, &ev);
        if (s != UA_GOOD)
            return s;
        if (ev.kind == UA_CLIENT_EV_MSG && ev.request_id == reqid)
            break;
        if (ev.kind == UA_CLIENT_EV_ABORT && ev.request_id == reqid)
            return ev.status != 0 ? ev.status : UA_BAD_UNEXPECTED_ERROR;
    }
    ua_arena_reset(&t->arena);
    s = ua_client_decode(&c->cl, &ev, rt, resp, &t->arena);
    if (handle != NULL)
        *handle = ((const struct ua_response_header *)resp)->request_handle;
    return s;
}

/* Read one attribute of ns=1;s=<sid> (ns 0 numeric when sid is "i=N"). */
static ua_status
bi_read(struct bi *t, struct uaconn *c, const char *sid, uint32_t attr,
        struct ua_datavalue *out)
{
    struct ua_read_request  r;
    struct ua_read_response resp;
    struct ua_read_value_id id;
    ua_status               s;

    memset(&r, 0, sizeof(r));
    memset(&id, 0, sizeof(id));
    if (strncmp(sid, "i=", 2) == 0) {
        id.node_id = ua_nodeid_num(0, (uint32_t)strtoul(sid + 2, NULL, 10));
    } else {
        id.node_id.ns = 1;
        id.node_id.idtype = UA_IDTYPE_STRING;
        id.node_id.id.str = ua_string_from(sid);
    }
    id.attribute_id = attr;
    id.index_range.len = -1;
    id.data_encoding.name.len = -1;
    r.request_header.audit_entry_id.len = -1;
    r.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    r.n_nodes_to_read = 1;
    r.nodes_to_read = &id;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &r,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &t->arena);
    if (s != UA_GOOD)
        return s;
    if (resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    if (out != NULL)
        *out = resp.results[0];
    return UA_GOOD;
}

/* c still works: v0 reads Int32 0 and v1 reads Double 1.5. */
static int
bi_read_ok(struct bi *t, struct uaconn *c, const char *what)
{
    struct ua_datavalue dv;
    ua_status           s;

    s = bi_read(t, c, "v0", UA_ATTR_VALUE, &dv);
    BI_CHECK(s == UA_GOOD, "%s: Read v0: %s", what, bi_sn(s));
    BI_CHECK(!(dv.mask & UA_DV_STATUS) || dv.status == UA_GOOD,
             "%s: v0 status %s", what, bi_sn(dv.status));
    BI_CHECK((dv.mask & UA_DV_VALUE) && dv.value.type == UA_BT_INT32
             && !dv.value.is_array && *(int32_t *)dv.value.data == 0,
             "%s: v0 is not Int32 0", what);
    s = bi_read(t, c, "v1", UA_ATTR_VALUE, &dv);
    BI_CHECK(s == UA_GOOD, "%s: Read v1: %s", what, bi_sn(s));
    BI_CHECK((dv.mask & UA_DV_VALUE) && dv.value.type == UA_BT_DOUBLE
             && *(double *)dv.value.data == 1.5,
             "%s: v1 is not Double 1.5", what);
    return 0;
}

/* CreateSession only, with a client nonce of nonce_len bytes (-1: null). */
static ua_status
bi_create_session(struct bi *t, struct uaconn *c, int32_t nonce_len,
                  double timeout, struct ua_nodeid *token, double *revised)
{
    struct ua_create_session_request  r;
    struct ua_create_session_response resp;
    uint8_t                           nonce[256];
    ua_status                         s;

    memset(&r, 0, sizeof(r));
    for (size_t i = 0; i < sizeof(nonce); i++)
        nonce[i] = (uint8_t)(i * 37 + 11);
    r.request_header.audit_entry_id.len = -1;
    r.client_description.application_uri = ua_string_from("urn:badinput");
    r.client_description.product_uri = ua_string_from("urn:badinput");
    r.client_description.application_name.mask = UA_LT_TEXT;
    r.client_description.application_name.text = ua_string_from("badinput");
    r.client_description.application_type = UA_APPLICATIONTYPE_CLIENT;
    r.client_description.gateway_server_uri.len = -1;
    r.client_description.discovery_profile_uri.len = -1;
    r.client_description.n_discovery_urls = -1;
    r.server_uri.len = -1;
    r.endpoint_url = ua_string_from(c->url);
    r.session_name = ua_string_from("badinput");
    r.client_nonce.len = nonce_len;
    r.client_nonce.data = nonce_len > 0 ? nonce : NULL;
    r.client_certificate.len = -1;
    r.requested_session_timeout = timeout;
    ua_client_set_token(&c->cl, NULL);
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATESESSIONREQUEST], &r,
                    &ua_types[UA_TYPE_CREATESESSIONRESPONSE], &resp,
                    &t->arena);
    if (s != UA_GOOD)
        return s;
    if (revised != NULL)
        *revised = resp.revised_session_timeout;
    /* Keep the token (a GUID: no pointer into the arena). */
    if (resp.authentication_token.idtype == UA_IDTYPE_STRING
        || resp.authentication_token.idtype == UA_IDTYPE_OPAQUE)
        return UA_BAD_UNEXPECTED_ERROR;     /* this test wants a GUID */
    if (token != NULL)
        *token = resp.authentication_token;
    return ua_client_set_token(&c->cl, &resp.authentication_token);
}

/* ActivateSession (anonymous) with the token c's client holds. */
static ua_status
bi_activate(struct bi *t, struct uaconn *c)
{
    struct ua_activate_session_request  r;
    struct ua_activate_session_response resp;
    struct ua_anonymous_identity_token  anon;

    memset(&r, 0, sizeof(r));
    memset(&anon, 0, sizeof(anon));
    anon.policy_id = ua_string_from("anonymous");
    r.request_header.audit_entry_id.len = -1;
    r.client_signature.algorithm.len = -1;
    r.client_signature.signature.len = -1;
    r.user_identity_token.encoding = UA_EO_DECODED;
    r.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
    r.user_identity_token.obj = &anon;
    r.user_identity_token.type_id = ua_nodeid_num(
        0, UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY);
    r.user_token_signature.algorithm.len = -1;
    r.user_token_signature.signature.len = -1;
    ua_arena_reset(&t->arena);
    return uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &r,
                       &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &resp,
                       &t->arena);
}

static ua_status
bi_close_session(struct bi *t, struct uaconn *c)
{
    struct ua_close_session_request  r;
    struct ua_close_session_response resp;

    memset(&r, 0, sizeof(r));
    r.request_header.audit_entry_id.len = -1;
    r.delete_subscriptions = true;
    ua_arena_reset(&t->arena);
    return uaconn_call(c, &ua_types[UA_TYPE_CLOSESESSIONREQUEST], &r,
                       &ua_types[UA_TYPE_CLOSESESSIONRESPONSE], &resp,
                       &t->arena);
}

/* ------------------------------------------------------------ control */

/*
 * Every control client reads v0 and v1 and gets the right values, each
 * pair of Reads within BI_CTL_SLOW_MS.  A control client whose connection
 * died is a failure (and is replaced, so the next case starts clean).
 */
static int
bi_ctl_check(struct bi *t, const char *after)
{
    int rc = 0;

    for (int i = 0; i < t->nctl; i++) {
        uint64_t t0 = itest_ms();
        char     what[160];

        snprintf(what, sizeof(what), "control client %d after %s", i, after);
        if (bi_read_ok(t, &t->ctl[i], what) != 0) {
            rc = -1;
            uaconn_clear(&t->ctl[i]);
            uaconn_init(&t->ctl[i]);
            if (uaconn_start(&t->ctl[i], "127.0.0.1", t->port) != UA_GOOD)
                fprintf(stderr, "check_badinput: control client %d cannot "
                        "reconnect\n", i);
            continue;
        }
        if (itest_ms() - t0 > BI_CTL_SLOW_MS) {
            rc = bi_fail(t, __LINE__, "%s: two Reads took %" PRIu64 " ms",
                         what, itest_ms() - t0);
        }
    }
    return rc;
}

/* rounds Reads on every control client: median and max latency. */
static int
bi_ctl_latency(struct bi *t, int rounds, double *p50_us, double *max_us)
{
    double *v = calloc((size_t)rounds * (size_t)t->nctl, sizeof(*v));
    int     n = 0;

    if (v == NULL)
        return -1;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < t->nctl; i++) {
            struct ua_datavalue dv;
            uint64_t            t0 = bi_us();
            ua_status           s = bi_read(t, &t->ctl[i], "v0",
                                            UA_ATTR_VALUE, &dv);

            if (s != UA_GOOD) {
                free(v);
                return bi_fail(t, __LINE__, "control client %d: Read: %s", i,
                               bi_sn(s));
            }
            v[n++] = (double)(bi_us() - t0);
        }
    for (int i = 1; i < n; i++)         /* insertion sort: n is small */
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];

            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    *p50_us = v[n / 2];
    *max_us = v[n - 1];
    free(v);
    return 0;
}

/* ------------------------------------------------------------ harness */

/*
 * The checks themselves: a healthy exchange must not pass for the error a
 * case expects.  A valid HEL gets an ACK, so "ERR + close" must fail on
 * it; a good Read must not pass for a ServiceFault.
 */
static int
bi_t_harness(struct bi *t)
{
    static const ua_status want[] = { BI_STATUS_ANY_BAD };
    struct uaconn         *c = bi_conn(t), *d = bi_conn(t);
    uint8_t                p[64], tail[64];
    size_t                 n;
    uint32_t               reqid;

    BI_TRY(bi_tcp(t, c));
    c->timeout_ms = 500;
    n = bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    BI_CHECK(bi_err_close(t, c, "a valid HEL", want, BI_N(want)) != 0,
             "the ERR check passed on a valid HEL");
    BI_TRY(bi_session(t, d));
    /* A raw Read of ns=1;s=v0, well formed: Good, not a fault. */
    n = bi_read_tail(tail, UA_TIMESTAMPSTORETURN_BOTH);
    bi_put32(tail + n, 1);
    n += 4;
    tail[n++] = 0x03;
    tail[n++] = 1;
    tail[n++] = 0;
    bi_put32(tail + n, 2);
    memcpy(tail + n + 4, "v0", 2);
    n += 6;
    bi_put32(tail + n, UA_ATTR_VALUE);
    bi_put32(tail + n + 4, 0xFFFFFFFFu);
    n += 8;
    tail[n++] = 0;
    tail[n++] = 0;
    bi_put32(tail + n, 0xFFFFFFFFu);
    n += 4;
    BI_TRY(bi_raw_request(t, d, UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                          90, tail, n, &reqid));
    BI_CHECK(bi_expect_fault(t, d, reqid, 90, &ua_types[UA_TYPE_READRESPONSE],
                             want, BI_N(want), "a good Read") != 0,
             "the fault check passed on a good raw Read");
    t->why[0] = '\0';
    return bi_read_ok(t, d, "a healthy session");
}

/* ------------------------------------------------------------ transport */

static int
bi_t_garbage_before_hel(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    struct uaconn         *c = bi_conn(t);
    uint8_t                p[128];
    size_t                 n;

    BI_TRY(bi_tcp(t, c));
    memcpy(p, "GARBAGE!", 8);
    n = bi_hel(p + 8, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    BI_CHECK(uaconn_raw_send(c, p, 8 + n) == 0, "send");
    return bi_err_close(t, c, "garbage before HEL", want, BI_N(want));
}

static int
bi_t_size_ffffffff(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TOO_LARGE,
                                      UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    struct uaconn         *c = bi_conn(t), *d = bi_conn(t);
    uint8_t                p[64];

    /* A HEL header claiming 4 GiB: refused on the header alone. */
    BI_TRY(bi_tcp(t, c));
    bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    bi_put32(p + 4, 0xFFFFFFFFu);
    BI_CHECK(uaconn_raw_send(c, p, 32) == 0, "send");
    BI_TRY(bi_err_close(t, c, "HEL with MessageSize 0xFFFFFFFF", want,
                        BI_N(want)));
    /* The same as a MSG before any HEL (docs/security.md case 1). */
    BI_TRY(bi_tcp(t, d));
    memcpy(p, "MSGF\xff\xff\xff\xff", 8);
    BI_CHECK(uaconn_raw_send(d, p, 8) == 0, "send");
    return bi_err_close(t, d, "MSGF with MessageSize 0xFFFFFFFF", want,
                        BI_N(want));
}

static int
bi_t_size_small(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    static const ua_status want2[] = { UA_BAD_TCP_MESSAGE_TYPE_INVALID,
                                       UA_BAD_DECODING_ERROR,
                                       UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN };
    struct uaconn         *c;
    uint8_t                p[64];

    for (uint32_t size = 0; size < 8; size += 7) {
        c = bi_conn(t);
        BI_TRY(bi_tcp(t, c));
        bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
        bi_put32(p + 4, size);
        BI_CHECK(uaconn_raw_send(c, p, 32) == 0, "send");
        BI_TRY(bi_err_close(t, c, "HEL with MessageSize < 8", want,
                            BI_N(want)));
    }
    /* After the handshake: an OPN and a MSG shorter than their headers. */
    for (int k = 0; k < 2; k++) {
        c = bi_conn(t);
        BI_TRY(bi_channel(t, c));
        memcpy(p, k == 0 ? "MSGF" : "OPNF", 4);
        bi_put32(p + 4, 11);
        memset(p + 8, 0, 3);
        BI_CHECK(uaconn_raw_send(c, p, 11) == 0, "send");
        BI_TRY(bi_err_close(t, c, k == 0 ? "MSG of 11 bytes"
                                         : "OPN of 11 bytes",
                            want2, BI_N(want2)));
    }
    return 0;
}

static int
bi_t_hel_small_buffers(struct bi *t)
{
    static const ua_status want[] = { BI_STATUS_ANY_BAD };
    static const struct {
        uint32_t    rbuf, sbuf, maxmsg;
        const char *what;
    } v[] = {
        { 8191, 65536, 0, "ReceiveBufferSize 8191" },
        { 65536, 1024, 0, "SendBufferSize 1024" },
        { 0, 0, 0, "both buffers 0" },
        { 65536, 65536, 100, "MaxMessageSize 100" },
    };

    for (size_t i = 0; i < BI_N(v); i++) {
        struct uaconn *c = bi_conn(t);
        uint8_t        p[64];

        BI_TRY(bi_tcp(t, c));
        bi_hel(p, 0, v[i].rbuf, v[i].sbuf, v[i].maxmsg, 0, -1, NULL, 0);
        BI_CHECK(uaconn_raw_send(c, p, 32) == 0, "send");
        BI_TRY(bi_err_close(t, c, v[i].what, want, BI_N(want)));
    }
    return 0;
}

static int
bi_t_hel_url(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_ENDPOINT_URL_INVALID };
    struct uaconn         *c;
    char                  *url = (char *)t->buf2;
    size_t                 n;
    uint8_t                ack[64];
    ua_status              s;

    memset(url, 'a', 8192);
    memcpy(url, "opc.tcp://", 10);
    /* 4096 bytes (and more): EndpointUrl must be < 4096 bytes. */
    for (size_t len = 4096; len <= 5000; len += 904) {
        c = bi_conn(t);
        BI_TRY(bi_tcp(t, c));
        n = bi_hel(t->buf, 0, 65536, 65536, 0, 0, (int32_t)len, url, len);
        BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
        BI_TRY(bi_err_close(t, c, "HEL with a long EndpointUrl", want,
                            BI_N(want)));
    }
    /* A length of -2, and one that runs past the message. */
    c = bi_conn(t);
    BI_TRY(bi_tcp(t, c));
    n = bi_hel(t->buf, 0, 65536, 65536, 0, 0, -2, NULL, 0);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    BI_TRY(bi_err_close(t, c, "HEL with EndpointUrl length -2", want,
                        BI_N(want)));
    c = bi_conn(t);
    BI_TRY(bi_tcp(t, c));
    n = bi_hel(t->buf, 0, 65536, 65536, 0, 0, 100, url, 10);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    BI_TRY(bi_err_close(t, c, "HEL with EndpointUrl length past the end",
                        want, BI_N(want)));
    /* The boundary: 4095 bytes is accepted. */
    c = bi_conn(t);
    BI_TRY(bi_tcp(t, c));
    n = bi_hel(t->buf, 0, 65536, 65536, 0, 0, 4095, url, 4095);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    s = uaconn_raw_chunk(c, ack, sizeof(ack), &n);
    BI_CHECK(s == UA_GOOD && n == 28 && memcmp(ack, "ACKF", 4) == 0,
             "HEL with a 4095-byte EndpointUrl: no ACK (%s)", bi_sn(s));
    return 0;
}

static int
bi_t_hel_version_and_sizes(struct bi *t)
{
    struct uaconn *c = bi_conn(t);
    uint8_t        p[64];
    size_t         n;
    ua_status      s;

    /* ProtocolVersion 0xFFFFFFFF and 16 MiB buffers: an ACK that speaks
     * version 0 and caps the buffers to the server's own. */
    BI_TRY(bi_tcp(t, c));
    n = bi_hel(p, 0xFFFFFFFFu, 16u << 20, 16u << 20, 0, 0, -1, NULL, 0);
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    s = uaconn_raw_chunk(c, p, sizeof(p), &n);
    BI_CHECK(s == UA_GOOD && n == 28 && memcmp(p, "ACKF", 4) == 0,
             "no ACK: %s", bi_sn(s));
    BI_CHECK(bi_get32(p + 8) == 0, "ACK ProtocolVersion %u, not 0",
             bi_get32(p + 8));
    BI_CHECK(bi_get32(p + 12) >= 8192 && bi_get32(p + 12) <= (1u << 20),
             "ACK ReceiveBufferSize %u not capped", bi_get32(p + 12));
    BI_CHECK(bi_get32(p + 16) >= 8192 && bi_get32(p + 16) <= (1u << 20),
             "ACK SendBufferSize %u not capped", bi_get32(p + 16));
    BI_CHECK(bi_get32(p + 20) == BI_MAX_MESSAGE,
             "ACK MaxMessageSize %u, configured %u", bi_get32(p + 20),
             BI_MAX_MESSAGE);
    return 0;
}

static int
bi_t_hel_twice(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    struct uaconn         *c = bi_conn(t);
    uint8_t                p[64];
    size_t                 n;
    ua_status              s;

    BI_TRY(bi_tcp(t, c));
    s = uaconn_hello(c, NULL);
    BI_CHECK(s == UA_GOOD, "first HEL: %s", bi_sn(s));
    n = bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    return bi_err_close(t, c, "second HEL", want, BI_N(want));
}

static int
bi_t_before_hel(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    struct uaconn         *c = bi_conn(t), *d = bi_conn(t), *e = bi_conn(t);
    uint8_t                body[8] = { 1, 0, 0x77, 0x02 }, p[512];
    size_t                 n;

    /* MSG, OPN and an unknown type XYZ as the first message. */
    BI_TRY(bi_tcp(t, c));
    n = bi_msg(p, "MSG", 'F', 1, 1, 1, 1, body, sizeof(body));
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    BI_TRY(bi_err_close(t, c, "MSG before HEL", want, BI_N(want)));
    BI_TRY(bi_tcp(t, d));
    n = bi_opn(p, 0, UA_SC_POLICY_NONE, (int32_t)strlen(UA_SC_POLICY_NONE),
               UA_MESSAGESECURITYMODE_NONE, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               1, 1);
    BI_CHECK(uaconn_raw_send(d, p, n) == 0, "send");
    BI_TRY(bi_err_close(t, d, "OPN before HEL", want, BI_N(want)));
    BI_TRY(bi_tcp(t, e));
    n = bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    memcpy(p, "XYZF", 4);
    BI_CHECK(uaconn_raw_send(e, p, n) == 0, "send");
    return bi_err_close(t, e, "unknown message type XYZF", want, BI_N(want));
}

static int
bi_t_msg_before_opn(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                                      UA_BAD_TCP_MESSAGE_TYPE_INVALID,
                                      UA_BAD_SECURE_CHANNEL_ID_INVALID };
    struct uaconn         *c = bi_conn(t);
    uint8_t                body[64], p[256];
    size_t                 n;
    ua_status              s;

    BI_TRY(bi_tcp(t, c));
    s = uaconn_hello(c, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    n = bi_put_nodeid(body, sizeof(body), &(struct ua_nodeid){
        .idtype = UA_IDTYPE_NUMERIC,
        .id.num = UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY });
    n += bi_put_header(c, body + n, sizeof(body) - n, 1);
    n = bi_msg(p, "MSG", 'F', 1, 1, 1, 1, body, n);
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    return bi_err_close(t, c, "MSG before OPN", want, BI_N(want));
}

static int
bi_t_wrong_chunk_types(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    struct uaconn         *c = bi_conn(t), *d = bi_conn(t);
    uint8_t                p[512];
    size_t                 n;
    ua_status              s;

    /* HEL as an intermediate chunk. */
    BI_TRY(bi_tcp(t, c));
    n = bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    p[3] = 'C';
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    BI_TRY(bi_err_close(t, c, "HEL with chunk type C", want, BI_N(want)));
    /* OPN as an intermediate chunk (it must be one 'F' chunk). */
    BI_TRY(bi_tcp(t, d));
    s = uaconn_hello(d, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    n = bi_opn(p, 0, UA_SC_POLICY_NONE, (int32_t)strlen(UA_SC_POLICY_NONE),
               UA_MESSAGESECURITYMODE_NONE, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               1, 1);
    p[3] = 'C';
    BI_CHECK(uaconn_raw_send(d, p, n) == 0, "send");
    return bi_err_close(t, d, "OPN with chunk type C", want, BI_N(want));
}

/* ------------------------------------------------------------ channel */

static int
bi_t_opn_policy(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SECURITY_POLICY_REJECTED };
    static const char     *pol[] = {
        "http://opcfoundation.org/UA/SecurityPolicy#Basic128Rsa15",
        "http://example.com/UA/SecurityPolicy#Unknown",
        "",
    };

    for (size_t i = 0; i < BI_N(pol); i++) {
        struct uaconn *c = bi_conn(t);
        uint8_t        p[512];
        size_t         n;
        ua_status      s;

        BI_TRY(bi_tcp(t, c));
        s = uaconn_hello(c, NULL);
        BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
        n = bi_opn(p, 0, pol[i], (int32_t)strlen(pol[i]),
                   UA_MESSAGESECURITYMODE_NONE,
                   UA_SECURITYTOKENREQUESTTYPE_ISSUE, 1, 1);
        BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
        BI_TRY(bi_err_close(t, c, pol[i][0] ? pol[i] : "empty policy URI",
                            want, BI_N(want)));
    }
    return 0;
}

static int
bi_t_opn_policy_length(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR,
                                      UA_BAD_SECURITY_POLICY_REJECTED,
                                      UA_BAD_TCP_MESSAGE_TYPE_INVALID };
    static const int32_t   lens[] = { 256, -2, 0x7FFFFFFF };
    char                   pol[300];

    memset(pol, 'p', 256);
    pol[256] = '\0';
    for (size_t i = 0; i < BI_N(lens); i++) {
        struct uaconn *c = bi_conn(t);
        uint8_t        p[1024];
        size_t         n;
        ua_status      s;
        char           what[64];

        BI_TRY(bi_tcp(t, c));
        s = uaconn_hello(c, NULL);
        BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
        n = bi_opn(p, 0, lens[i] == 256 ? pol : "", lens[i],
                   UA_MESSAGESECURITYMODE_NONE,
                   UA_SECURITYTOKENREQUESTTYPE_ISSUE, 1, 1);
        BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
        snprintf(what, sizeof(what), "OPN SecurityPolicyUri length %d",
                 lens[i]);
        BI_TRY(bi_err_close(t, c, what, want, BI_N(want)));
    }
    return 0;
}

static int
bi_t_opn_mode_sign(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SECURITY_MODE_REJECTED };
    static const int32_t   modes[] = { UA_MESSAGESECURITYMODE_SIGN,
                                       UA_MESSAGESECURITYMODE_SIGNANDENCRYPT,
                                       UA_MESSAGESECURITYMODE_INVALID, 0xFF };

    for (size_t i = 0; i < BI_N(modes); i++) {
        struct uaconn *c = bi_conn(t);
        uint8_t        p[512];
        size_t         n;
        ua_status      s;

        BI_TRY(bi_tcp(t, c));
        s = uaconn_hello(c, NULL);
        BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
        n = bi_opn(p, 0, UA_SC_POLICY_NONE,
                   (int32_t)strlen(UA_SC_POLICY_NONE), modes[i],
                   UA_SECURITYTOKENREQUESTTYPE_ISSUE, 1, 1);
        BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
        BI_TRY(bi_err_close(t, c, "OPN with a mode other than None on None",
                            want, BI_N(want)));
    }
    return 0;
}

static int
bi_t_opn_issue_twice(struct bi *t)
{
    static const ua_status want[] = { BI_STATUS_ANY_BAD };
    static const ua_status want_id[] = { UA_BAD_SECURE_CHANNEL_ID_INVALID,
                                         UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN };
    struct uaconn         *c = bi_conn(t), *d = bi_conn(t);
    uint8_t                p[512];
    size_t                 n;
    ua_status              s;

    /* A second Issue on an open channel. */
    BI_TRY(bi_channel(t, c));
    n = bi_opn(p, 0, UA_SC_POLICY_NONE, (int32_t)strlen(UA_SC_POLICY_NONE),
               UA_MESSAGESECURITYMODE_NONE, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               ++c->cl.send_seq, c->cl.next_request_id++);
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    BI_TRY(bi_err_close(t, c, "second OPN Issue", want, BI_N(want)));
    /* An Issue naming a channel id (it must be 0). */
    BI_TRY(bi_tcp(t, d));
    s = uaconn_hello(d, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    n = bi_opn(p, 12345, UA_SC_POLICY_NONE,
               (int32_t)strlen(UA_SC_POLICY_NONE),
               UA_MESSAGESECURITYMODE_NONE, UA_SECURITYTOKENREQUESTTYPE_ISSUE,
               1, 1);
    BI_CHECK(uaconn_raw_send(d, p, n) == 0, "send");
    return bi_err_close(t, d, "OPN Issue with SecureChannelId 12345",
                        want_id, BI_N(want_id));
}

static int
bi_t_chunk_flood(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TOO_LARGE,
                                      UA_BAD_REQUEST_TOO_LARGE };
    struct uaconn         *c = bi_conn(t);
    uint8_t                body[100];
    size_t                 n = 0;
    uint32_t               reqid = 0, maxch;
    int                    sent;

    BI_TRY(bi_channel(t, c));
    maxch = c->cl.peer_max_chunks;
    BI_CHECK(maxch > 0 && maxch <= 4096, "ACK MaxChunkCount %u: the server "
             "must bound chunks per message", maxch);
    memset(body, 0x55, sizeof(body));
    /* MaxChunkCount + 1 intermediate chunks and no final one. */
    for (uint32_t i = 0; i <= maxch; i++)
        n += bi_msg_next(c, 'C', body, sizeof(body), t->buf + n, &reqid);
    sent = uaconn_raw_send(c, t->buf, n);
    BI_CHECK(sent == 0 || sent == -EPIPE || sent == -ECONNRESET, "send");
    return bi_err_close(t, c, "MaxChunkCount + 1 'C' chunks", want,
                        BI_N(want));
}

static int
bi_t_message_too_large(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TOO_LARGE,
                                      UA_BAD_REQUEST_TOO_LARGE };
    struct uaconn         *c = bi_conn(t);
    uint32_t               reqid = 0, maxmsg, maxch, per, need;
    size_t                 n = 0;
    int                    sent;

    BI_TRY(bi_channel(t, c));
    maxmsg = c->cl.peer_max_message;
    maxch = c->cl.peer_max_chunks;
    per = c->cl.send_buffer - UA_SC_SYM_HEADER;
    BI_CHECK(maxmsg == BI_MAX_MESSAGE, "ACK MaxMessageSize %u, configured %u",
             maxmsg, BI_MAX_MESSAGE);
    need = maxmsg / per + 1;        /* the chunk that crosses the limit */
    BI_CHECK(maxch == 0 || need < maxch, "test setup: %u chunks of %u bytes "
             "exceed MaxChunkCount %u first", need, per, maxch);
    memset(t->buf2, 0x33, per);
    /* Fewer chunks than MaxChunkCount, more bytes than MaxMessageSize. */
    for (uint32_t i = 0; i < need; i++)
        n += bi_msg_next(c, 'C', t->buf2, per, t->buf + n, &reqid);
    sent = uaconn_raw_send(c, t->buf, n);
    BI_CHECK(sent == 0 || sent == -EPIPE || sent == -ECONNRESET, "send");
    return bi_err_close(t, c, "'C' chunks beyond MaxMessageSize", want,
                        BI_N(want));
}

static int
bi_t_chunk_above_buffer(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_MESSAGE_TOO_LARGE };
    struct uaconn         *c = bi_conn(t);
    uint32_t               reqid = 0;
    size_t                 n;
    ua_status              s;

    /* We offer SendBufferSize 8192: the server's receive buffer is 8192. */
    c->cfg.send_buffer = 8192;
    BI_TRY(bi_tcp(t, c));
    s = uaconn_hello(c, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    s = uaconn_open(c, 0);
    BI_CHECK(s == UA_GOOD, "OPN: %s", bi_sn(s));
    memset(t->buf2, 0x44, 8192);
    n = bi_msg_next(c, 'F', t->buf2, 8192 - UA_SC_SYM_HEADER + 1, t->buf,
                    &reqid);
    BI_CHECK(n == 8193, "chunk size");
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "a 8193-byte chunk on a 8192-byte buffer", want,
                        BI_N(want));
}

/* Send a valid Read as raw bytes, with fields patched after encoding. */
static size_t
bi_read_chunk(struct bi *t, struct uaconn *c, uint8_t *out)
{
    struct ua_read_request  r;
    struct ua_read_value_id id;
    struct ua_sc_out        o = { out, BI_BUF, 0 };

    memset(&r, 0, sizeof(r));
    memset(&id, 0, sizeof(id));
    id.node_id.ns = 1;
    id.node_id.idtype = UA_IDTYPE_STRING;
    id.node_id.id.str = ua_string_from("v0");
    id.attribute_id = UA_ATTR_VALUE;
    id.index_range.len = -1;
    id.data_encoding.name.len = -1;
    r.request_header.audit_entry_id.len = -1;
    r.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    r.n_nodes_to_read = 1;
    r.nodes_to_read = &id;
    (void)t;
    if (ua_client_request(&c->cl, &ua_types[UA_TYPE_READREQUEST], &r, NULL,
                          &o) != UA_GOOD)
        return 0;
    return o.len;
}

static int
bi_t_wrong_channel_id(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                                      UA_BAD_SECURE_CHANNEL_ID_INVALID };
    struct uaconn         *c = bi_conn(t);
    size_t                 n;

    BI_TRY(bi_session(t, c));
    n = bi_read_chunk(t, c, t->buf);
    BI_CHECK(n > 0, "encode");
    bi_put32(t->buf + 8, c->cl.channel_id + 1000);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "MSG with a wrong SecureChannelId", want,
                        BI_N(want));
}

static int
bi_t_wrong_token(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN };
    struct uaconn         *c = bi_conn(t);
    size_t                 n;

    BI_TRY(bi_session(t, c));
    n = bi_read_chunk(t, c, t->buf);
    BI_CHECK(n > 0, "encode");
    bi_put32(t->buf + 12, c->cl.token_id + 7);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "MSG with a wrong TokenId", want, BI_N(want));
}

static int
bi_t_replay(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SEQUENCE_NUMBER_INVALID,
                                      UA_BAD_SECURITY_CHECKS_FAILED };
    struct uaconn         *c = bi_conn(t);
    struct ua_read_response resp;
    size_t                 n;
    ua_status              s;

    BI_TRY(bi_session(t, c));
    n = bi_read_chunk(t, c, t->buf);
    BI_CHECK(n > 0, "encode");
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    s = bi_response(t, c, bi_get32(t->buf + 20),
                    &ua_types[UA_TYPE_READRESPONSE], &resp, NULL);
    BI_CHECK(s == UA_GOOD, "the original Read: %s", bi_sn(s));
    /* The same chunk again, byte for byte. */
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "a replayed MSG chunk", want, BI_N(want));
}

static int
bi_t_seq_gap(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SEQUENCE_NUMBER_INVALID,
                                      UA_BAD_SECURITY_CHECKS_FAILED };
    struct uaconn         *c = bi_conn(t);
    size_t                 n;

    BI_TRY(bi_session(t, c));
    c->cl.send_seq++;               /* skip one */
    n = bi_read_chunk(t, c, t->buf);
    BI_CHECK(n > 0, "encode");
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "a sequence number gap of 2", want,
                        BI_N(want));
}

static int
bi_t_abort_chunk(struct bi *t)
{
    struct uaconn          *c = bi_conn(t);
    uint8_t                 body[64];
    uint32_t                reqid = 0;
    size_t                  n, bl;
    ua_status               s;
    struct ua_client_event  ev;
    int                     tmo;

    BI_TRY(bi_session(t, c));
    /* Half of a Read in a 'C' chunk, then an abort chunk for it. */
    bl = bi_read_chunk(t, c, t->buf2) - UA_SC_SYM_HEADER;
    c->cl.send_seq--;               /* that chunk is not sent */
    c->cl.next_request_id--;
    n = bi_msg_next(c, 'C', t->buf2 + UA_SC_SYM_HEADER, bl / 2, t->buf,
                    &reqid);
    bi_put32(body, UA_BAD_REQUEST_CANCELLED_BY_CLIENT);
    bi_put32(body + 4, 5);
    memcpy(body + 8, "abort", 5);
    n += bi_msg_next(c, 'A', body, 13, t->buf + n, &reqid);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    /* No response for the aborted request, and the channel stays. */
    tmo = c->timeout_ms;
    c->timeout_ms = 300;
    s = uaconn_recv(c, &ev);
    c->timeout_ms = tmo;
    BI_CHECK(s == UA_BAD_TIMEOUT, "after an abort chunk the server sent "
             "something: %s, event %d for request %u", bi_sn(s), ev.kind,
             ev.request_id);
    return bi_read_ok(t, c, "the channel after an abort chunk");
}

static int
bi_t_interleaved_requests(struct bi *t)
{
    static const ua_status want[] = { BI_STATUS_ANY_BAD };
    struct uaconn         *c = bi_conn(t);
    uint8_t                body[32];
    uint32_t               r1 = 0, r2 = 0;
    size_t                 n;

    BI_TRY(bi_session(t, c));
    memset(body, 0x66, sizeof(body));
    n = bi_msg_next(c, 'C', body, sizeof(body), t->buf, &r1);
    n += bi_msg_next(c, 'F', body, sizeof(body), t->buf + n, &r2);
    BI_CHECK(r1 != r2, "ids");
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "chunks of two RequestIds interleaved", want,
                        BI_N(want));
}

static int
bi_t_clo(struct bi *t)
{
    struct uaconn *c = bi_conn(t);
    ua_status      s;

    /* CLO ends the channel without a response (Part 4 §5.5.3). */
    BI_TRY(bi_session(t, c));
    {
        struct ua_sc_out o = { t->buf, BI_BUF, 0 };

        s = ua_client_close(&c->cl, &o);
        BI_CHECK(s == UA_GOOD, "CLO: %s", bi_sn(s));
        BI_CHECK(uaconn_raw_send(c, t->buf, o.len) == 0, "send");
    }
    BI_CHECK(uaconn_raw_closed(c), "the connection stays open after CLO");
    return 0;
}

static int
bi_t_response_too_large(struct bi *t)
{
    struct uaconn            *c = bi_conn(t);
    struct ua_browse_request  r;
    struct ua_browse_response resp;
    struct ua_browse_description d;
    ua_status                 s;

    /* We take one 8192-byte chunk per response; 1000 references of
     * Demo.Vars do not fit: BadResponseTooLarge in a ServiceFault, and the
     * channel stays (Part 6 §6.7.2). */
    c->cfg.recv_buffer = 8192;
    c->cfg.max_chunks = 1;
    BI_TRY(bi_tcp(t, c));
    s = uaconn_hello(c, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    s = uaconn_open(c, 0);
    BI_CHECK(s == UA_GOOD, "OPN: %s", bi_sn(s));
    s = uaconn_session(c);
    BI_CHECK(s == UA_GOOD, "session: %s", bi_sn(s));
    memset(&r, 0, sizeof(r));
    memset(&d, 0, sizeof(d));
    r.request_header.audit_entry_id.len = -1;
    r.view.view_id = ua_nodeid_num(0, 0);
    r.n_nodes_to_browse = 1;
    r.nodes_to_browse = &d;
    d.node_id.ns = 1;
    d.node_id.idtype = UA_IDTYPE_STRING;
    d.node_id.id.str = ua_string_from("Demo.Vars");
    d.browse_direction = UA_BROWSEDIRECTION_FORWARD;
    d.reference_type_id = ua_nodeid_num(0, 0);
    d.include_subtypes = true;
    d.result_mask = 0x3F;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_BROWSEREQUEST], &r,
                    &ua_types[UA_TYPE_BROWSERESPONSE], &resp, &t->arena);
    BI_CHECK(s == UA_BAD_RESPONSE_TOO_LARGE, "a Browse response beyond the "
             "client's MaxChunkCount 1: %s", bi_sn(s));
    return bi_read_ok(t, c, "after BadResponseTooLarge");
}

static int
bi_t_multichunk(struct bi *t)
{
    struct uaconn           *c = bi_conn(t);
    struct ua_read_request   r;
    struct ua_read_response  resp;
    struct ua_read_value_id *ids;
    int32_t                  n = 1000;
    char                     names[1000][8];
    ua_status                s;

    /* 8192-byte chunks both ways: a Read of 1000 nodes goes out in two
     * chunks and its answer comes back in three or more; every value must
     * be the right one (reassembly, not only survival). */
    c->cfg.recv_buffer = 8192;
    c->cfg.send_buffer = 8192;
    BI_TRY(bi_tcp(t, c));
    s = uaconn_hello(c, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    BI_CHECK(c->cl.send_buffer == 8192 && c->cl.recv_buffer == 8192,
             "negotiated %u/%u, not 8192", c->cl.send_buffer,
             c->cl.recv_buffer);
    s = uaconn_open(c, 0);
    BI_CHECK(s == UA_GOOD, "OPN: %s", bi_sn(s));
    s = uaconn_session(c);
    BI_CHECK(s == UA_GOOD, "session: %s", bi_sn(s));
    if ((uint32_t)n > t->max_nodes_per_read)
        n = (int32_t)t->max_nodes_per_read;
    ids = calloc((size_t)n, sizeof(*ids));
    BI_CHECK(ids != NULL, "calloc");
    for (int32_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof(names[i]), "v%d", (int)i);
        ids[i].node_id.ns = 1;
        ids[i].node_id.idtype = UA_IDTYPE_STRING;
        ids[i].node_id.id.str = ua_string_from(names[i]);
        ids[i].attribute_id = UA_ATTR_VALUE;
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
    }
    memset(&r, 0, sizeof(r));
    r.request_header.audit_entry_id.len = -1;
    r.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    r.n_nodes_to_read = n;
    r.nodes_to_read = ids;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &r,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &t->arena);
    free(ids);
    BI_CHECK(s == UA_GOOD, "a Read of %d nodes in 8192-byte chunks: %s", n,
             bi_sn(s));
    BI_CHECK(resp.n_results == n, "%d results for %d nodes", resp.n_results,
             n);
    for (int32_t i = 0; i < n; i++) {
        const struct ua_datavalue *dv = &resp.results[i];
        bool                       ok = (dv->mask & UA_DV_VALUE) != 0;

        if (ok && i % 2 == 0)
            ok = dv->value.type == UA_BT_INT32
                 && *(int32_t *)dv->value.data == i;
        else if (ok)
            ok = dv->value.type == UA_BT_DOUBLE
                 && *(double *)dv->value.data == i + 0.5;
        BI_CHECK(ok, "result %d (v%d) has the wrong value", (int)i, (int)i);
    }
    return 0;
}

static int
bi_t_pipelined(struct bi *t)
{
    struct uaconn *c = bi_conn(t);
    enum { N = 2000 };
    static uint8_t seen[N];
    uint32_t       first = 0;
    size_t         len = 0;
    int            got = 0;

    /* 2000 Reads in one write, nothing read meanwhile: every one answered,
     * each exactly once, all Good (docs/architecture.md §4: pipelined
     * requests). */
    BI_TRY(bi_session(t, c));
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < N; i++) {
        size_t n = bi_read_chunk(t, c, t->buf + len);

        BI_CHECK(n > 0 && len + n + 256 < BI_BUF, "encode");
        if (i == 0)
            first = bi_get32(t->buf + 20);
        len += n;
    }
    BI_CHECK(uaconn_raw_send(c, t->buf, len) == 0, "send %zu bytes", len);
    while (got < N) {
        struct ua_client_event ev;
        struct ua_read_response resp;
        ua_status              s = uaconn_recv(c, &ev);
        uint32_t               k;

        BI_CHECK(s == UA_GOOD, "after %d of %d responses: %s", got, N,
                 bi_sn(s));
        if (ev.kind != UA_CLIENT_EV_MSG)
            continue;
        k = ev.request_id - first;
        BI_CHECK(k < N && !seen[k], "response to request id %u (%s)",
                 ev.request_id, k < N ? "twice" : "unknown");
        seen[k] = 1;
        ua_arena_reset(&t->arena);
        s = ua_client_decode(&c->cl, &ev, &ua_types[UA_TYPE_READRESPONSE],
                             &resp, &t->arena);
        BI_CHECK(s == UA_GOOD && resp.n_results == 1
                 && (resp.results[0].mask & UA_DV_VALUE),
                 "response %d: %s", got, bi_sn(s));
        got++;
    }
    return bi_read_ok(t, c, "after 2000 pipelined Reads");
}

static int
bi_t_token_lifetime(struct bi *t)
{
    static const uint32_t req[] = { 0, 1, 0xFFFFFFFFu };

    /* RequestedLifetime 0, 1 and 0xFFFFFFFF: revised into the server's
     * bounds (1 min .. 1 h by default; docs/security.md case 28). */
    for (size_t i = 0; i < BI_N(req); i++) {
        struct uaconn *c = bi_conn(t);
        ua_status      s;

        c->cfg.lifetime_ms = req[i];
        BI_TRY(bi_tcp(t, c));
        s = uaconn_hello(c, NULL);
        BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
        s = uaconn_open(c, req[i]);
        BI_CHECK(s == UA_GOOD, "OPN with RequestedLifetime %u: %s", req[i],
                 bi_sn(s));
        BI_CHECK(c->cl.lifetime_ms >= 60000 && c->cl.lifetime_ms <= 3600000,
                 "RequestedLifetime %u revised to %u ms, outside [60000, "
                 "3600000]", req[i], c->cl.lifetime_ms);
    }
    return 0;
}

static int
bi_t_token_rollover(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SECURE_CHANNEL_TOKEN_UNKNOWN };
    struct uaconn         *c = bi_conn(t);
    struct ua_read_response resp;
    uint32_t               old, reqid;
    size_t                 n;
    ua_status              s;

    BI_TRY(bi_session(t, c));
    old = c->cl.token_id;
    s = uaconn_renew(c);
    BI_CHECK(s == UA_GOOD, "OPN Renew: %s", bi_sn(s));
    BI_CHECK(c->cl.token_id != old, "Renew gave the same TokenId %u", old);
    /* The old token is still good until the new one is used... */
    n = bi_read_chunk(t, c, t->buf);
    BI_CHECK(n > 0, "encode");
    bi_put32(t->buf + 12, old);
    reqid = bi_get32(t->buf + 20);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    s = bi_response(t, c, reqid, &ua_types[UA_TYPE_READRESPONSE], &resp,
                    NULL);
    BI_CHECK(s == UA_GOOD, "a Read under the previous token right after the "
             "Renew: %s", bi_sn(s));
    /* ...the new one works... */
    BI_TRY(bi_read_ok(t, c, "the new token"));
    /* ...and once it was used, the old one is gone. */
    n = bi_read_chunk(t, c, t->buf);
    BI_CHECK(n > 0, "encode");
    bi_put32(t->buf + 12, old);
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    return bi_err_close(t, c, "the previous token after the new one was used",
                        want, BI_N(want));
}

static int
bi_t_renew_other_channel(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TCP_SECURE_CHANNEL_UNKNOWN,
                                      UA_BAD_SECURE_CHANNEL_ID_INVALID };
    struct uaconn         *c = bi_conn(t);
    uint8_t                p[512];
    size_t                 n;

    BI_TRY(bi_channel(t, c));
    n = bi_opn(p, c->cl.channel_id + 1, UA_SC_POLICY_NONE,
               (int32_t)strlen(UA_SC_POLICY_NONE),
               UA_MESSAGESECURITYMODE_NONE, UA_SECURITYTOKENREQUESTTYPE_RENEW,
               ++c->cl.send_seq, c->cl.next_request_id++);
    BI_CHECK(uaconn_raw_send(c, p, n) == 0, "send");
    return bi_err_close(t, c, "OPN Renew naming another SecureChannelId",
                        want, BI_N(want));
}

/* ------------------------------------------------------------ decoding */

/*
 * A raw request: type NodeId, a RequestHeader with c's token and handle,
 * then tail[tlen].  Sent as one MSGF; the request id in *reqid.
 */
static int
bi_raw_request(struct bi *t, struct uaconn *c, uint32_t type_binary_id,
               uint32_t handle, const uint8_t *tail, size_t tlen,
               uint32_t *reqid)
{
    uint8_t *b = t->buf2;
    size_t   n;

    n = bi_put_nodeid(b, 64, &(struct ua_nodeid){
        .idtype = UA_IDTYPE_NUMERIC, .id.num = type_binary_id });
    n += bi_put_header(c, b + n, 4096, handle);
    memcpy(b + n, tail, tlen);
    n += tlen;
    *reqid = 0;
    n = bi_msg_next(c, 'F', b, n, t->buf, reqid);
    if (uaconn_raw_send(c, t->buf, n) != 0)
        return bi_fail(t, __LINE__, "send");
    return 0;
}

/* The fault (or result) of a raw request, and the channel still works. */
static int
bi_expect_fault(struct bi *t, struct uaconn *c, uint32_t reqid,
                uint32_t handle, const struct ua_type *rt,
                const ua_status *codes, size_t n, const char *what)
{
    static uint8_t resp[4096];
    uint32_t       h = 0;
    ua_status      s;

    s = bi_response(t, c, reqid, rt, resp, &h);
    BI_CHECK(bi_in(s, codes, n), "%s: %s, expected %s", what, bi_sn(s),
             bi_sn(codes[0]));
    BI_CHECK(h == handle, "%s: requestHandle %u not echoed (%u)", what, h,
             handle);
    return bi_read_ok(t, c, what);
}

static int
bi_t_nesting_read(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR,
                                      UA_BAD_ENCODING_LIMITS_EXCEEDED };
    struct uaconn         *c = bi_conn(t);
    uint8_t               *b = t->buf2 + (BI_BUF / 2);
    size_t                 n = 0;
    uint32_t               reqid = 0;
    ua_status              got;
    uint64_t               t0;

    BI_TRY(bi_session(t, c));
    /* A Read whose RequestHeader.additionalHeader is a KeyValuePair with
     * 10,000 nested Variant arrays. */
    n += bi_put_nodeid(b, 64, &(struct ua_nodeid){
        .idtype = UA_IDTYPE_NUMERIC,
        .id.num = UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY });
    n += bi_put_nodeid(b + n, 64, &c->cl.auth_token);
    memset(b + n, 0, 8);                        /* timestamp */
    bi_put32(b + n + 8, 77);                    /* requestHandle */
    bi_put32(b + n + 12, 0);                    /* returnDiagnostics */
    bi_put32(b + n + 16, 0xFFFFFFFFu);          /* auditEntryId */
    bi_put32(b + n + 20, 10000);                /* timeoutHint */
    n += 24;
    n += bi_bomb_extobj(b + n, 60000, BI_NEST);
    memset(b + n, 0, 8);                        /* maxAge */
    bi_put32(b + n + 8, UA_TIMESTAMPSTORETURN_BOTH);
    bi_put32(b + n + 12, 0);                    /* no nodes */
    n += 16;
    BI_CHECK(n + UA_SC_SYM_HEADER <= c->cl.send_buffer, "bomb too big: %zu",
             n);
    n = bi_msg_next(c, 'F', b, n, t->buf, &reqid);
    t0 = itest_ms();
    BI_CHECK(uaconn_raw_send(c, t->buf, n) == 0, "send");
    /* Either a ServiceFault (the channel stays) or, since the bomb sits in
     * the RequestHeader itself, ERR + close; never a crash or a hang. */
    {
        struct ua_read_response resp;

        got = bi_response(t, c, reqid, &ua_types[UA_TYPE_READRESPONSE],
                          &resp, NULL);
    }
    BI_CHECK(bi_in(got, want, BI_N(want)), "nesting bomb in a Read: %s",
             bi_sn(got));
    BI_CHECK(itest_ms() - t0 < 2000, "the answer took %" PRIu64 " ms",
             itest_ms() - t0);
    if (c->err == got)                  /* it was an ERR: closed? */
        BI_CHECK(uaconn_raw_closed(c), "ERR but the connection stays open");
    return 0;
}

static int
bi_t_nesting_activate(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR,
                                      UA_BAD_ENCODING_LIMITS_EXCEEDED };
    struct uaconn         *c = bi_conn(t);
    uint8_t                tail[60000];
    size_t                 n = 0;
    uint32_t               reqid;

    BI_TRY(bi_session(t, c));
    /* ActivateSession whose userIdentityToken nests 10,000 Variants: the
     * body breaks the limit, the header is fine -> ServiceFault. */
    bi_put32(tail + n, 0xFFFFFFFFu);            /* clientSignature.alg */
    bi_put32(tail + n + 4, 0xFFFFFFFFu);        /* .signature */
    bi_put32(tail + n + 8, 0);                  /* software certs */
    bi_put32(tail + n + 12, 0);                 /* localeIds */
    n += 16;
    n += bi_bomb_extobj(tail + n, sizeof(tail) - n - 8, BI_NEST);
    bi_put32(tail + n, 0xFFFFFFFFu);            /* userTokenSignature */
    bi_put32(tail + n + 4, 0xFFFFFFFFu);
    n += 8;
    BI_TRY(bi_raw_request(
        t, c, UA_NS0ID_ACTIVATESESSIONREQUEST_ENCODING_DEFAULTBINARY, 78, tail,
        n, &reqid));
    return bi_expect_fault(t, c, reqid, 78,
                           &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], want,
                           BI_N(want), "nesting bomb in ActivateSession");
}

static int
bi_t_nesting_write(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR,
                                      UA_BAD_ENCODING_LIMITS_EXCEEDED };
    struct uaconn         *c = bi_conn(t);
    uint8_t                tail[60000];
    size_t                 n = 0;
    uint32_t               reqid;
    static uint8_t         resp[4096];
    ua_status              s;

    BI_TRY(bi_session(t, c));
    /* Does the server implement Write?  An empty Write tells. */
    bi_put32(tail, 0);
    BI_TRY(bi_raw_request(t, c, UA_NS0ID_WRITEREQUEST_ENCODING_DEFAULTBINARY,
                          79, tail, 4, &reqid));
    s = bi_response(t, c, reqid, &ua_types[UA_TYPE_WRITERESPONSE], resp,
                    NULL);
    if (s == UA_BAD_SERVICE_UNSUPPORTED)
        return bi_skip(t, "Write is not implemented yet (an empty Write "
                       "gets BadServiceUnsupported)");
    BI_CHECK(s == UA_BAD_NOTHING_TO_DO || s == UA_GOOD,
             "an empty Write: %s", bi_sn(s));
    /* WriteValue { v0, Value, null range, DataValue { the bomb } }. */
    n = 0;
    bi_put32(tail + n, 1);
    n += 4;
    tail[n++] = 0x03;                           /* string NodeId */
    tail[n++] = 1;
    tail[n++] = 0;
    bi_put32(tail + n, 2);
    memcpy(tail + n + 4, "v0", 2);
    n += 6;
    bi_put32(tail + n, UA_ATTR_VALUE);
    bi_put32(tail + n + 4, 0xFFFFFFFFu);
    n += 8;
    tail[n++] = UA_DV_VALUE;
    n += bi_bomb_variant(tail + n, sizeof(tail) - n, BI_NEST);
    BI_TRY(bi_raw_request(t, c, UA_NS0ID_WRITEREQUEST_ENCODING_DEFAULTBINARY,
                          80, tail, n, &reqid));
    return bi_expect_fault(t, c, reqid, 80,
                           &ua_types[UA_TYPE_WRITERESPONSE], want,
                           BI_N(want), "nesting bomb in a Write");
}

/* A Read tail: maxAge, TimestampsToReturn, then the array as given. */
static size_t
bi_read_tail(uint8_t *p, int32_t ttr)
{
    memset(p, 0, 8);
    bi_put32(p + 8, (uint32_t)ttr);
    return 12;
}

static int
bi_t_lying_array(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR,
                                      UA_BAD_ENCODING_LIMITS_EXCEEDED };
    struct uaconn         *c = bi_conn(t);
    uint8_t                tail[64];
    size_t                 n;
    uint32_t               reqid;

    BI_TRY(bi_session(t, c));
    /* nodesToRead claims 0x7FFFFFFF elements; 10 bytes follow. */
    n = bi_read_tail(tail, UA_TIMESTAMPSTORETURN_BOTH);
    bi_put32(tail + n, 0x7FFFFFFFu);
    n += 4;
    memset(tail + n, 0x01, 10);
    n += 10;
    BI_TRY(bi_raw_request(t, c, UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                          81, tail, n, &reqid));
    return bi_expect_fault(t, c, reqid, 81, &ua_types[UA_TYPE_READRESPONSE],
                           want, 1, "array length 0x7FFFFFFF with 10 bytes "
                           "left");
}

static int
bi_t_lying_string(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR,
                                      UA_BAD_ENCODING_LIMITS_EXCEEDED };
    struct uaconn         *c = bi_conn(t);
    uint8_t                tail[64];
    size_t                 n;
    uint32_t               reqid;

    BI_TRY(bi_session(t, c));
    /* One ReadValueId whose string NodeId claims 0x7FFFFFFF bytes. */
    n = bi_read_tail(tail, UA_TIMESTAMPSTORETURN_BOTH);
    bi_put32(tail + n, 1);
    n += 4;
    tail[n++] = 0x03;
    tail[n++] = 1;
    tail[n++] = 0;
    bi_put32(tail + n, 0x7FFFFFFFu);
    n += 4;
    memcpy(tail + n, "v0", 2);
    n += 2;
    BI_TRY(bi_raw_request(t, c, UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                          82, tail, n, &reqid));
    return bi_expect_fault(t, c, reqid, 82, &ua_types[UA_TYPE_READRESPONSE],
                           want, 1, "String length 0x7FFFFFFF");
}

static int
bi_t_negative_lengths(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_DECODING_ERROR };
    struct uaconn         *c = bi_conn(t);
    uint8_t                tail[64];
    size_t                 n;
    uint32_t               reqid;

    BI_TRY(bi_session(t, c));
    /* An array length of -2. */
    n = bi_read_tail(tail, UA_TIMESTAMPSTORETURN_BOTH);
    bi_put32(tail + n, 0xFFFFFFFEu);
    n += 4;
    BI_TRY(bi_raw_request(t, c, UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                          83, tail, n, &reqid));
    BI_TRY(bi_expect_fault(t, c, reqid, 83, &ua_types[UA_TYPE_READRESPONSE],
                           want, BI_N(want), "array length -2"));
    /* A String (IndexRange) length of -5. */
    n = bi_read_tail(tail, UA_TIMESTAMPSTORETURN_BOTH);
    bi_put32(tail + n, 1);
    n += 4;
    tail[n++] = 0x01;                   /* four-byte NodeId ns=1;i=1 */
    tail[n++] = 1;
    tail[n++] = 1;
    tail[n++] = 0;
    bi_put32(tail + n, UA_ATTR_VALUE);
    bi_put32(tail + n + 4, 0xFFFFFFFBu);
    n += 8;
    BI_TRY(bi_raw_request(t, c, UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                          84, tail, n, &reqid));
    return bi_expect_fault(t, c, reqid, 84, &ua_types[UA_TYPE_READRESPONSE],
                           want, BI_N(want), "String length -5");
}

static int
bi_t_unknown_type(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_SERVICE_UNSUPPORTED };
    struct uaconn         *c = bi_conn(t);
    uint8_t                tail[8] = { 0 };
    uint32_t               reqid;

    BI_TRY(bi_session(t, c));
    BI_TRY(bi_raw_request(t, c, 99999, 85, tail, sizeof(tail), &reqid));
    /* A ServiceFault (decoded as any response type: the fault wins). */
    return bi_expect_fault(t, c, reqid, 85, &ua_types[UA_TYPE_READRESPONSE],
                           want, BI_N(want), "request TypeId i=99999");
}

static int
bi_t_timestamps_invalid(struct bi *t)
{
    static const ua_status want[] = { UA_BAD_TIMESTAMPS_TO_RETURN_INVALID };
    static const int32_t   ttr[] = { 99, -1, 4 };

    for (size_t i = 0; i < BI_N(ttr); i++) {
        struct uaconn *c = bi_conn(t);
        uint8_t        tail[64];
        size_t         n;
        uint32_t       reqid;
        char           what[64];

        BI_TRY(bi_session(t, c));
        n = bi_read_tail(tail, ttr[i]);
        bi_put32(tail + n, 1);
        n += 4;
        tail[n++] = 0x03;
        tail[n++] = 1;
        tail[n++] = 0;
        bi_put32(tail + n, 2);
        memcpy(tail + n + 4, "v0", 2);
        n += 6;
        bi_put32(tail + n, UA_ATTR_VALUE);
        bi_put32(tail + n + 4, 0xFFFFFFFFu);
        n += 8;
        tail[n++] = 0;                  /* dataEncoding: ns 0, null name */
        tail[n++] = 0;
        bi_put32(tail + n, 0xFFFFFFFFu);
        n += 4;
        BI_TRY(bi_raw_request(t, c,
                              UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                              86, tail, n, &reqid));
        snprintf(what, sizeof(what), "TimestampsToReturn %d", ttr[i]);
        BI_TRY(bi_expect_fault(t, c, reqid, 86,
                               &ua_types[UA_TYPE_READRESPONSE], want,
                               BI_N(want), what));
    }
    return 0;
}

static int
bi_t_attribute_invalid(struct bi *t)
{
    static const uint32_t attrs[] = { 0, 99, 0xFFFFFFFFu, 28 };
    struct uaconn        *c = bi_conn(t);

    BI_TRY(bi_session(t, c));
    for (size_t i = 0; i < BI_N(attrs); i++) {
        struct ua_datavalue dv;
        ua_status           s = bi_read(t, c, "v0", attrs[i], &dv);

        BI_CHECK(s == UA_GOOD, "Read of attribute %u: ServiceResult %s",
                 attrs[i], bi_sn(s));
        BI_CHECK((dv.mask & UA_DV_STATUS)
                 && dv.status == UA_BAD_ATTRIBUTE_ID_INVALID,
                 "attribute %u: %s, expected BadAttributeIdInvalid",
                 attrs[i], bi_sn(dv.mask & UA_DV_STATUS ? dv.status : 0));
        BI_CHECK(!(dv.mask & UA_DV_VALUE), "attribute %u has a value",
                 attrs[i]);
    }
    return bi_read_ok(t, c, "after invalid AttributeIds");
}

static int
bi_t_too_many_operations(struct bi *t)
{
    struct uaconn          *c = bi_conn(t);
    struct ua_read_request  r;
    struct ua_read_response resp;
    struct ua_read_value_id *ids;
    uint32_t                max = t->max_nodes_per_read;
    ua_status               s;

    BI_TRY(bi_session(t, c));
    BI_CHECK(max > 0 && max <= 100000, "MaxNodesPerRead %u", max);
    ids = calloc(max + 1, sizeof(*ids));
    BI_CHECK(ids != NULL, "calloc");
    for (uint32_t i = 0; i <= max; i++) {
        ids[i].node_id.ns = 1;
        ids[i].node_id.idtype = UA_IDTYPE_STRING;
        ids[i].node_id.id.str = ua_string_from("v0");
        ids[i].attribute_id = UA_ATTR_VALUE;
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
    }
    memset(&r, 0, sizeof(r));
    r.request_header.audit_entry_id.len = -1;
    r.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
    r.nodes_to_read = ids;
    /* Exactly the limit is served... */
    r.n_nodes_to_read = (int32_t)max;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &r,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &t->arena);
    if (s == UA_GOOD && resp.n_results != (int32_t)max)
        s = UA_BAD_UNEXPECTED_ERROR;
    if (s != UA_GOOD) {
        free(ids);
        return bi_fail(t, __LINE__, "Read of MaxNodesPerRead = %u nodes: %s",
                       max, bi_sn(s));
    }
    /* ...one more is BadTooManyOperations... */
    r.n_nodes_to_read = (int32_t)max + 1;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &r,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &t->arena);
    free(ids);
    BI_CHECK(s == UA_BAD_TOO_MANY_OPERATIONS, "Read of %u nodes: %s", max + 1,
             bi_sn(s));
    /* ...and none at all is BadNothingToDo. */
    r.n_nodes_to_read = 0;
    r.nodes_to_read = NULL;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &r,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &t->arena);
    BI_CHECK(s == UA_BAD_NOTHING_TO_DO, "Read of 0 nodes: %s", bi_sn(s));
    return bi_read_ok(t, c, "after BadTooManyOperations");
}

/* ------------------------------------------------------------ session */

static int
bi_t_hijack(struct bi *t)
{
    struct uaconn   *a = bi_conn(t);
    struct ua_nodeid tok;
    bool             same_worker = false;
    ua_status        s;

    BI_TRY(bi_session(t, a));
    tok = a->cl.auth_token;
    /* The token on other channels.  A channel on the same worker must get
     * BadSecureChannelIdInvalid; on the other worker the session does not
     * exist (BadSessionIdInvalid).  Retry until one lands on the same
     * worker (SO_REUSEPORT spreads connections by their ports). */
    for (int i = 0; i < 24 && !same_worker; i++) {
        struct uaconn b;

        uaconn_init(&b);
        if (uaconn_connect(&b, "127.0.0.1", t->port) != 0
            || uaconn_hello(&b, NULL) != UA_GOOD
            || uaconn_open(&b, 0) != UA_GOOD) {
            uaconn_clear(&b);
            return bi_fail(t, __LINE__, "second channel");
        }
        ua_client_set_token(&b.cl, &tok);
        s = bi_read(t, &b, "v0", UA_ATTR_VALUE, NULL);
        uaconn_clear(&b);
        BI_CHECK(s == UA_BAD_SECURE_CHANNEL_ID_INVALID
                 || s == UA_BAD_SESSION_ID_INVALID,
                 "a Read with another channel's session token: %s",
                 bi_sn(s));
        same_worker = s == UA_BAD_SECURE_CHANNEL_ID_INVALID;
    }
    BI_CHECK(same_worker, "no hijack attempt got BadSecureChannelIdInvalid "
             "in 24 tries (all on the other worker?)");
    return bi_read_ok(t, a, "the hijacked session's own channel");
}

static int
bi_t_activate_other_channel(struct bi *t)
{
    struct uaconn   *a = bi_conn(t);
    struct ua_nodeid tok;
    ua_status        s;

    BI_TRY(bi_channel(t, a));
    s = bi_create_session(t, a, 32, 60000, &tok, NULL);
    BI_CHECK(s == UA_GOOD, "CreateSession: %s", bi_sn(s));
    /* First activation from other channels: refused every time. */
    for (int i = 0; i < 6; i++) {
        struct uaconn b;

        uaconn_init(&b);
        if (uaconn_connect(&b, "127.0.0.1", t->port) != 0
            || uaconn_hello(&b, NULL) != UA_GOOD
            || uaconn_open(&b, 0) != UA_GOOD) {
            uaconn_clear(&b);
            return bi_fail(t, __LINE__, "second channel");
        }
        ua_client_set_token(&b.cl, &tok);
        s = bi_activate(t, &b);
        uaconn_clear(&b);
        BI_CHECK(s == UA_BAD_SESSION_ID_INVALID, "first ActivateSession on "
                 "another channel: %s", bi_sn(s));
    }
    /* The session is still there for its own channel. */
    s = bi_activate(t, a);
    BI_CHECK(s == UA_GOOD, "ActivateSession on the creating channel "
             "afterwards: %s", bi_sn(s));
    return bi_read_ok(t, a, "the session activated on its own channel");
}

static int
bi_t_read_before_activate(struct bi *t)
{
    struct uaconn *c = bi_conn(t);
    ua_status      s;

    BI_TRY(bi_channel(t, c));
    s = bi_create_session(t, c, 32, 60000, NULL, NULL);
    BI_CHECK(s == UA_GOOD, "CreateSession: %s", bi_sn(s));
    s = bi_read(t, c, "v0", UA_ATTR_VALUE, NULL);
    BI_CHECK(s == UA_BAD_SESSION_NOT_ACTIVATED, "Read before "
             "ActivateSession: %s", bi_sn(s));
    /* Part 4 §5.7.3: that closed the session. */
    s = bi_activate(t, c);
    BI_CHECK(s == UA_BAD_SESSION_ID_INVALID, "ActivateSession after the "
             "refused Read: %s (the session must be closed)", bi_sn(s));
    /* The channel itself is fine: a new session works. */
    s = uaconn_session(c);
    BI_CHECK(s == UA_GOOD, "a new session on the same channel: %s",
             bi_sn(s));
    return bi_read_ok(t, c, "the new session");
}

static int
bi_t_close_session_twice(struct bi *t)
{
    struct uaconn   *c = bi_conn(t);
    struct ua_nodeid fake = { .ns = 0, .idtype = UA_IDTYPE_GUID };
    ua_status        s;

    BI_TRY(bi_session(t, c));
    s = bi_close_session(t, c);
    BI_CHECK(s == UA_GOOD, "first CloseSession: %s", bi_sn(s));
    s = bi_close_session(t, c);
    BI_CHECK(s == UA_BAD_SESSION_ID_INVALID, "second CloseSession: %s",
             bi_sn(s));
    s = bi_read(t, c, "v0", UA_ATTR_VALUE, NULL);
    BI_CHECK(s == UA_BAD_SESSION_ID_INVALID, "Read on a closed session: %s",
             bi_sn(s));
    /* A token that was never issued. */
    for (int i = 0; i < 8; i++)
        fake.id.guid.data4[i] = (uint8_t)(0xA5 ^ i);
    fake.id.guid.data1 = 0;
    ua_client_set_token(&c->cl, &fake);
    s = bi_close_session(t, c);
    BI_CHECK(s == UA_BAD_SESSION_ID_INVALID, "CloseSession with an unknown "
             "token: %s", bi_sn(s));
    s = bi_read(t, c, "v0", UA_ATTR_VALUE, NULL);
    BI_CHECK(s == UA_BAD_SESSION_ID_INVALID, "Read with an unknown token: "
             "%s", bi_sn(s));
    /* Still the same channel: a new session works. */
    s = uaconn_session(c);
    BI_CHECK(s == UA_GOOD, "new session: %s", bi_sn(s));
    return bi_read_ok(t, c, "after CloseSession twice");
}

static int
bi_t_nonce(struct bi *t)
{
    /* None channel: a client may send no nonce; one it sends must be
     * 32..128 bytes (Part 4 §5.7.2; worker/svc_session.c). */
    static const struct {
        int32_t   len;
        ua_status want;
    } v[] = {
        { 31, UA_BAD_NONCE_INVALID }, { 129, UA_BAD_NONCE_INVALID },
        { 1, UA_BAD_NONCE_INVALID }, { -1, UA_GOOD }, { 0, UA_GOOD },
        { 32, UA_GOOD }, { 128, UA_GOOD },
    };
    struct uaconn *c = bi_conn(t);

    BI_TRY(bi_channel(t, c));
    for (size_t i = 0; i < BI_N(v); i++) {
        ua_status s = bi_create_session(t, c, v[i].len, 60000, NULL, NULL);

        BI_CHECK(s == v[i].want, "CreateSession with a %d-byte clientNonce: "
                 "%s, expected %s", v[i].len, bi_sn(s), bi_sn(v[i].want));
        if (s == UA_GOOD) {
            s = bi_close_session(t, c);
            BI_CHECK(s == UA_GOOD, "CloseSession: %s", bi_sn(s));
        }
    }
    return 0;
}

static int
bi_t_session_timeout(struct bi *t)
{
    static const double v[] = { NAN, -1, 0, INFINITY, -INFINITY, 1e308, 1,
                                5e9 };
    struct uaconn      *c = bi_conn(t);
    double              lo = 1e300, hi = 0;

    BI_TRY(bi_channel(t, c));
    for (size_t i = 0; i < BI_N(v); i++) {
        double    rev = -1;
        ua_status s = bi_create_session(t, c, 32, v[i], NULL, &rev);

        BI_CHECK(s == UA_GOOD, "CreateSession with timeout %g: %s", v[i],
                 bi_sn(s));
        BI_CHECK(isfinite(rev) && rev >= 1000 && rev <= 86400000,
                 "RequestedSessionTimeout %g revised to %g", v[i], rev);
        if (rev < lo)
            lo = rev;
        if (rev > hi)
            hi = rev;
        s = bi_close_session(t, c);
        BI_CHECK(s == UA_GOOD, "CloseSession: %s", bi_sn(s));
    }
    /* The server's bounds are 10 s and 1 h by default. */
    BI_CHECK(lo == 10000 && hi == 3600000, "revised timeouts span "
             "[%g, %g], expected [10000, 3600000]", lo, hi);
    return 0;
}

static int
bi_t_too_many_sessions(struct bi *t)
{
    struct uaconn *c = bi_conn(t);
    int            created = 0, limit = 100000;
    ua_status      s = UA_GOOD;

    /* Unactivated sessions on one channel (docs/security.md case 52) until
     * the address holds limits.max_unactivated_per_address (50) of them on
     * the worker: BadTooManySessions, never a crash (a full pool would
     * close the oldest instead, issue 19); sessions already active on
     * that worker (control clients) keep working; once the channel
     * closes, its unactivated sessions go and new sessions can be made
     * again. */
    BI_TRY(bi_channel(t, c));
    {
        struct ua_datavalue dv;
        char                id[32];

        snprintf(id, sizeof(id), "i=%u",
                 UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSESSIONS);
        if (bi_read(t, &t->ctl[0], id, UA_ATTR_VALUE, &dv) == UA_GOOD
            && (dv.mask & UA_DV_VALUE) && dv.value.type == UA_BT_UINT32)
            limit = (int)*(uint32_t *)dv.value.data;
    }
    BI_CHECK(limit > 0 && limit <= 10000, "MaxSessions %d", limit);
    while (created <= limit * BI_WORKERS) {
        s = bi_create_session(t, c, 32, 60000, NULL, NULL);
        if (s != UA_GOOD)
            break;
        created++;
    }
    BI_CHECK(s == UA_BAD_TOO_MANY_SESSIONS, "CreateSession number %d: %s",
             created + 1, bi_sn(s));
    BI_CHECK(created == BI_UNACTIVATED_MAX,
             "BadTooManySessions after %d sessions; %d unactivated per "
             "address (MaxSessions %d)", created, BI_UNACTIVATED_MAX, limit);
    if (t->verbose)
        fprintf(stderr, "  sessions: BadTooManySessions after %d "
                "(MaxSessions %d)\n", created, limit);
    BI_TRY(bi_ctl_check(t, "the session pool ran full"));
    uaconn_close(c);
    itest_sleep_ms(200);
    for (int i = 0; i < 6; i++) {
        struct uaconn *d = bi_conn(t);

        BI_TRY(bi_session(t, d));
        BI_TRY(bi_read_ok(t, d, "a new session after the pool was full"));
        uaconn_clear(d);
    }
    return 0;
}

static int
bi_t_identity_tokens(struct bi *t)
{
    struct uaconn                      *c = bi_conn(t);
    struct ua_activate_session_request  r;
    struct ua_activate_session_response resp;
    struct ua_user_name_identity_token  un;
    struct ua_anonymous_identity_token  anon;
    struct ua_read_value_id             rv;
    ua_status                           s;

    BI_TRY(bi_channel(t, c));
    s = bi_create_session(t, c, 32, 60000, NULL, NULL);
    BI_CHECK(s == UA_GOOD, "CreateSession: %s", bi_sn(s));
    memset(&r, 0, sizeof(r));
    r.request_header.audit_entry_id.len = -1;
    r.client_signature.algorithm.len = -1;
    r.client_signature.signature.len = -1;
    r.user_token_signature.algorithm.len = -1;
    r.user_token_signature.signature.len = -1;
    r.user_identity_token.encoding = UA_EO_DECODED;
    /* A UserName token (no endpoint offers one; docs/security.md cases 55,
     * 56). */
    memset(&un, 0, sizeof(un));
    un.policy_id = ua_string_from("username");
    un.user_name = ua_string_from("admin");
    un.password = ua_string_from("admin");
    un.encryption_algorithm.len = -1;
    r.user_identity_token.type = &ua_types[UA_TYPE_USERNAMEIDENTITYTOKEN];
    r.user_identity_token.obj = &un;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &r,
                    &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &resp,
                    &t->arena);
    BI_CHECK(s == UA_BAD_IDENTITY_TOKEN_REJECTED
             || s == UA_BAD_IDENTITY_TOKEN_INVALID
             || s == UA_BAD_USER_ACCESS_DENIED,
             "a UserName token on None: %s", bi_sn(s));
    /* An Anonymous token naming a policy we do not offer. */
    memset(&anon, 0, sizeof(anon));
    anon.policy_id = ua_string_from("no-such-policy");
    r.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
    r.user_identity_token.obj = &anon;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &r,
                    &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &resp,
                    &t->arena);
    BI_CHECK(s == UA_BAD_IDENTITY_TOKEN_INVALID, "an Anonymous token with "
             "an unknown policyId: %s", bi_sn(s));
    /* A structure that is no identity token at all. */
    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_num(0, 85);
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    r.user_identity_token.type = &ua_types[UA_TYPE_READVALUEID];
    r.user_identity_token.obj = &rv;
    ua_arena_reset(&t->arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &r,
                    &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &resp,
                    &t->arena);
    BI_CHECK(s == UA_BAD_IDENTITY_TOKEN_INVALID, "a ReadValueId as the "
             "identity token: %s", bi_sn(s));
    /* None of that closed the session: the right token activates it. */
    s = bi_activate(t, c);
    BI_CHECK(s == UA_GOOD, "ActivateSession (anonymous) afterwards: %s",
             bi_sn(s));
    return bi_read_ok(t, c, "after refused identity tokens");
}

/* ------------------------------------------------------------ resources */

/* Milliseconds until fd is closed by the peer (reads and drops what
 * comes), or UINT64_MAX after limit_ms. */
static uint64_t
bi_wait_closed(int fd, uint64_t start, uint64_t limit_ms)
{
    uint8_t buf[256];

    for (;;) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        uint64_t      now = itest_ms();
        ssize_t       r;

        if (now - start > limit_ms)
            return UINT64_MAX;
        if (poll(&pfd, 1, 50) <= 0)
            continue;
        r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (r == 0 || (r == -1 && errno != EAGAIN && errno != EINTR))
            return itest_ms() - start;
    }
}

static int
bi_t_hel_trickle(struct bi *t)
{
    struct uaconn *c = bi_conn(t);
    uint8_t        p[64];
    size_t         n = bi_hel(p, 0, 65536, 65536, 0, 0, -1, NULL, 0);
    uint64_t       start, closed = UINT64_MAX;
    size_t         i;

    /* One byte every 100 ms: 32 bytes would take 3.2 s, the deadline is
     * 1 s after accept, however many bytes arrive in between. */
    BI_TRY(bi_tcp(t, c));
    start = itest_ms();
    for (i = 0; i < n; i++) {
        struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

        if (send(c->fd, p + i, 1, MSG_NOSIGNAL) != 1)
            break;
        if (poll(&pfd, 1, 100) == 1) {
            uint8_t b[64];
            ssize_t r = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);

            if (r == 0 || (r == -1 && errno != EAGAIN)) {
                closed = itest_ms() - start;
                break;
            }
            if (r > 0 && memcmp(b, "ACKF", 4) == 0)
                return bi_fail(t, __LINE__, "an ACK for a trickled HEL");
        }
    }
    if (closed == UINT64_MAX)
        closed = bi_wait_closed(c->fd, start, 6000);
    BI_CHECK(closed != UINT64_MAX, "a HEL trickled byte by byte: the "
             "connection is still open after 6 s (%zu bytes sent)", i);
    BI_CHECK(closed >= BI_HELLO_MS - 100 && closed <= BI_HELLO_MS + 2500,
             "closed after %" PRIu64 " ms, the deadline is %u ms", closed,
             BI_HELLO_MS);
    BI_CHECK(i < n, "the whole HEL went out before the close");
    return 0;
}

static int
bi_t_silent(struct bi *t)
{
    struct uaconn *c = bi_conn(t), *d = bi_conn(t);
    uint64_t       start, closed;
    ua_status      s;

    /* Connect and send nothing; and HEL but no OPN. */
    BI_TRY(bi_tcp(t, c));
    start = itest_ms();
    BI_TRY(bi_tcp(t, d));
    s = uaconn_hello(d, NULL);
    BI_CHECK(s == UA_GOOD, "HEL: %s", bi_sn(s));
    closed = bi_wait_closed(c->fd, start, 6000);
    BI_CHECK(closed != UINT64_MAX && closed >= BI_HELLO_MS - 100
             && closed <= BI_HELLO_MS + 2500, "a silent connection closed "
             "after %" PRIu64 " ms, the deadline is %u ms",
             closed == UINT64_MAX ? 0 : closed, BI_HELLO_MS);
    closed = bi_wait_closed(d->fd, start, 6000);
    BI_CHECK(closed != UINT64_MAX && closed <= BI_HELLO_MS + 2500,
             "HEL without OPN: closed after %" PRIu64 " ms, the deadline "
             "is %u ms", closed == UINT64_MAX ? 0 : closed, BI_HELLO_MS);
    return 0;
}

/* Open n plain TCP connections to the server; their fds in fds. */
static int
bi_many_connect(struct bi *t, int *fds, int n)
{
    struct sockaddr_in a = { .sin_family = AF_INET };

    a.sin_port = htons(t->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    for (int i = 0; i < n; i++) {
        int one = 1;

        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] == -1)
            return bi_fail(t, __LINE__, "socket: %s", strerror(errno));
        setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)) == -1)
            return bi_fail(t, __LINE__, "connect %d: %s", i,
                           strerror(errno));
    }
    return 0;
}

static void
bi_many_close(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] != -1) {
            close(fds[i]);
            fds[i] = -1;
        }
}

static int
bi_t_idle_200(struct bi *t)
{
    static int fds[BI_MANY];
    double     p50_0, max_0, p50, max;
    long       rss0, rss1;
    uint64_t   start;
    int        open_left, rc = 0;

    BI_TRY(bi_ctl_latency(t, 10, &p50_0, &max_0));
    rss0 = bi_workers_rss_kb(t);
    start = itest_ms();
    if (bi_many_connect(t, fds, BI_MANY) != 0) {
        bi_many_close(fds, BI_MANY);
        return -1;
    }
    /* While they sit there, the control clients are served as before. */
    if (bi_ctl_latency(t, 5, &p50, &max) != 0) {
        bi_many_close(fds, BI_MANY);
        return -1;
    }
    rss1 = bi_workers_rss_kb(t);
    if (max > 500000 || p50 > 20 * p50_0 + 5000)
        rc = bi_fail(t, __LINE__, "control Reads with %d idle connections: "
                     "p50 %.0f µs (before %.0f), max %.0f µs", BI_MANY, p50,
                     p50_0, max);
    if (rc == 0 && rss0 > 0 && rss1 > 0 && rss1 - rss0 > 32 * 1024)
        rc = bi_fail(t, __LINE__, "workers' RSS grew by %ld KiB for %d idle "
                     "connections", rss1 - rss0, BI_MANY);
    /* All of them are closed at the handshake deadline. */
    open_left = 0;
    for (int i = 0; i < BI_MANY; i++)
        if (bi_wait_closed(fds[i], start, BI_HELLO_MS + 4000) == UINT64_MAX)
            open_left++;
    bi_many_close(fds, BI_MANY);
    if (rc == 0 && open_left > 0)
        rc = bi_fail(t, __LINE__, "%d of %d idle connections still open %u "
                     "ms after the deadline", open_left, BI_MANY, 4000);
    if (t->verbose)
        fprintf(stderr, "  idle: control p50 %.0f -> %.0f µs, max %.0f µs, "
                "RSS %ld -> %ld KiB\n", p50_0, p50, max, rss0, rss1);
    return rc;
}

static int
bi_t_half_message_200(struct bi *t)
{
    static int    fds[BI_MANY];
    struct uaconn c;
    double        p50_0, max_0, p50, max;
    long          rss0, rss1;
    int           rc = 0, opened = 0;

    BI_TRY(bi_ctl_latency(t, 10, &p50_0, &max_0));
    rss0 = bi_workers_rss_kb(t);
    for (int i = 0; i < BI_MANY; i++)
        fds[i] = -1;
    /* Each: HEL, OPN, then half of a 4000-byte MSG chunk, then silence. */
    for (int i = 0; i < BI_MANY; i++) {
        uint32_t reqid = 0;
        size_t   n;

        uaconn_init(&c);
        if (uaconn_connect(&c, "127.0.0.1", t->port) != 0
            || uaconn_hello(&c, NULL) != UA_GOOD
            || uaconn_open(&c, 0) != UA_GOOD) {
            uaconn_clear(&c);
            rc = bi_fail(t, __LINE__, "connection %d: handshake", i);
            break;
        }
        memset(t->buf2, 0x21, 4000);
        n = bi_msg_next(&c, 'F', t->buf2, 4000 - UA_SC_SYM_HEADER, t->buf,
                        &reqid);
        if (uaconn_raw_send(&c, t->buf, n / 2) != 0) {
            uaconn_clear(&c);
            rc = bi_fail(t, __LINE__, "connection %d: send", i);
            break;
        }
        fds[i] = c.fd;              /* keep the socket, drop the rest */
        c.fd = -1;
        uaconn_clear(&c);
        opened++;
    }
    if (rc == 0 && bi_ctl_latency(t, 5, &p50, &max) != 0)
        rc = -1;
    rss1 = bi_workers_rss_kb(t);
    if (rc == 0 && (max > 500000 || p50 > 20 * p50_0 + 5000))
        rc = bi_fail(t, __LINE__, "control Reads with %d half messages "
                     "pending: p50 %.0f µs (before %.0f), max %.0f µs",
                     opened, p50, p50_0, max);
    if (rc == 0 && rss0 > 0 && rss1 > 0 && rss1 - rss0 > 64 * 1024)
        rc = bi_fail(t, __LINE__, "workers' RSS grew by %ld KiB for %d half "
                     "messages", rss1 - rss0, opened);
    if (t->verbose)
        fprintf(stderr, "  half: control p50 %.0f -> %.0f µs, max %.0f µs, "
                "RSS %ld -> %ld KiB\n", p50_0, p50, max, rss0, rss1);
    bi_many_close(fds, BI_MANY);
    return rc;
}

/* ------------------------------------------------------------ main */

static const struct bi_case bi_cases[] = {
    { "harness: healthy exchanges are not errors", bi_t_harness },
    /* Transport. */
    { "transport: garbage before HEL", bi_t_garbage_before_hel },
    { "transport: MessageSize 0xFFFFFFFF", bi_t_size_ffffffff },
    { "transport: MessageSize < 8 / < 12", bi_t_size_small },
    { "transport: HEL buffers < 8192", bi_t_hel_small_buffers },
    { "transport: HEL EndpointUrl >= 4096 bytes", bi_t_hel_url },
    { "transport: HEL version 0xFFFFFFFF, huge buffers",
      bi_t_hel_version_and_sizes },
    { "transport: HEL twice", bi_t_hel_twice },
    { "transport: MSG/OPN/XYZ before HEL", bi_t_before_hel },
    { "transport: MSG before OPN", bi_t_msg_before_opn },
    { "transport: HEL and OPN as 'C' chunks", bi_t_wrong_chunk_types },
    { "transport: HEL trickled byte by byte", bi_t_hel_trickle },
    { "transport: silent connection, HEL without OPN", bi_t_silent },
    /* Secure channel and chunks. */
    { "channel: OPN with an unknown policy", bi_t_opn_policy },
    { "channel: OPN policy URI length 256 / -2 / huge",
      bi_t_opn_policy_length },
    { "channel: OPN mode Sign on None", bi_t_opn_mode_sign },
    { "channel: second OPN Issue, Issue with a channel id",
      bi_t_opn_issue_twice },
    { "channel: chunk flood beyond MaxChunkCount", bi_t_chunk_flood },
    { "channel: message beyond MaxMessageSize", bi_t_message_too_large },
    { "channel: chunk above the receive buffer", bi_t_chunk_above_buffer },
    { "channel: wrong SecureChannelId", bi_t_wrong_channel_id },
    { "channel: wrong TokenId", bi_t_wrong_token },
    { "channel: replayed sequence number", bi_t_replay },
    { "channel: sequence number gap", bi_t_seq_gap },
    { "channel: abort chunk keeps the channel", bi_t_abort_chunk },
    { "channel: interleaved RequestIds", bi_t_interleaved_requests },
    { "channel: CLO closes without a response", bi_t_clo },
    { "channel: multi-chunk request and response (8192-byte chunks)",
      bi_t_multichunk },
    { "channel: 2000 pipelined requests in one write", bi_t_pipelined },
    { "channel: response above the client's MaxChunkCount",
      bi_t_response_too_large },
    { "channel: RequestedLifetime 0 / 1 / 0xFFFFFFFF", bi_t_token_lifetime },
    { "channel: token rollover after Renew", bi_t_token_rollover },
    { "channel: Renew naming another channel", bi_t_renew_other_channel },
    /* Decoding. */
    { "decoding: nesting bomb in a Read", bi_t_nesting_read },
    { "decoding: nesting bomb in ActivateSession", bi_t_nesting_activate },
    { "decoding: nesting bomb in a Write", bi_t_nesting_write },
    { "decoding: array length 0x7FFFFFFF", bi_t_lying_array },
    { "decoding: String length 0x7FFFFFFF", bi_t_lying_string },
    { "decoding: lengths < -1", bi_t_negative_lengths },
    { "decoding: unknown request TypeId", bi_t_unknown_type },
    { "decoding: TimestampsToReturn out of range", bi_t_timestamps_invalid },
    { "decoding: AttributeId 0 / 99", bi_t_attribute_invalid },
    { "decoding: MaxNodesPerRead + 1", bi_t_too_many_operations },
    /* Session. */
    { "session: hijack across channels", bi_t_hijack },
    { "session: first ActivateSession on another channel",
      bi_t_activate_other_channel },
    { "session: Read before ActivateSession", bi_t_read_before_activate },
    { "session: CloseSession twice, unknown token",
      bi_t_close_session_twice },
    { "session: clientNonce lengths", bi_t_nonce },
    { "session: RequestedSessionTimeout NaN/-1/Inf/1e308",
      bi_t_session_timeout },
    { "session: identity tokens refused, session kept",
      bi_t_identity_tokens },
    { "session: MaxSessions + 1, then recovery", bi_t_too_many_sessions },
    /* Resources. */
    { "resources: 200 idle connections", bi_t_idle_200 },
    { "resources: 200 half messages", bi_t_half_message_200 },
};

/* The broker next to our build directory: <build>/tests/integ/ -> <build>. */
static void
bi_print_log(struct bi *t)
{
    char  line[512];
    FILE *f = fopen(t->log, "re");
    int   n = 0;

    if (f == NULL)
        return;
    fprintf(stderr, "---- broker log (last lines)\n");
    while (fgets(line, sizeof(line), f) != NULL)
        n++;
    rewind(f);
    for (int i = 0; fgets(line, sizeof(line), f) != NULL; i++)
        if (i >= n - 40)
            fputs(line, stderr);
    fclose(f);
}

/* No sanitizer report, no crash message in the broker's log. */
static int
bi_log_clean(struct bi *t)
{
    static const char *const bad[] = {
        "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
        "runtime error:", "Segmentation fault", "core dumped",
    };
    char  line[1024];
    FILE *f = fopen(t->log, "re");
    int   rc = 0;

    if (f == NULL)
        return bi_fail(t, __LINE__, "cannot read %s", t->log);
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL)
        for (size_t i = 0; i < BI_N(bad); i++)
            if (strstr(line, bad[i]) != NULL) {
                line[strcspn(line, "\n")] = '\0';
                rc = bi_fail(t, __LINE__, "%s", line);
                break;
            }
    fclose(f);
    return rc;
}

/* Start the broker, wait for it, open the control clients. */
static int
bi_setup(struct bi *t)
{
    uint64_t  end;
    ua_status s = UA_BAD_TIMEOUT;
    int       got = 0;

    if (bi_broker_start(t) != 0) {
        fprintf(stderr, "check_badinput: cannot start %s\n", t->broker);
        return -1;
    }
    end = itest_ms() + 20000;
    while (itest_ms() < end) {
        if (!bi_broker_alive(t)) {
            fprintf(stderr, "check_badinput: the broker exited\n");
            return -1;
        }
        uaconn_init(&t->ctl[0]);
        s = uaconn_start(&t->ctl[0], "127.0.0.1", t->port);
        if (s == UA_GOOD)
            break;
        uaconn_clear(&t->ctl[0]);
        itest_sleep_ms(100);
    }
    if (s != UA_GOOD) {
        fprintf(stderr, "check_badinput: no session within 20 s: %s\n",
                bi_sn(s));
        return -1;
    }
    t->nctl = 1;
    /* Worker pids, to see crashes and respawns (when /stats has them). */
    for (int i = 0; i < 50 && got < BI_WORKERS; i++) {
        got = bi_stats_pids(t, t->wpids, (int)BI_N(t->wpids));
        if (got < BI_WORKERS)
            itest_sleep_ms(100);
    }
    t->nwpids = got > 0 ? got : 0;
    t->stats_ok = got >= BI_WORKERS;
    if (!t->stats_ok)
        fprintf(stderr, "check_badinput: /stats names no worker pids; "
                "crash detection relies on the control clients only\n");
    /* Control clients: SO_REUSEPORT spreads them over the workers; open
     * at least BI_CTL_MIN, and more until every worker serves one (as far
     * as /stats tells), at most BI_CTL_MAX. */
    for (int i = 1; i < BI_CTL_MAX; i++) {
        long sess[16];
        int  nw, covered = 0;

        if (i >= BI_CTL_MIN) {
            nw = bi_stats_workers(t, "sessions", sess, (int)BI_N(sess));
            for (int j = 0; j < nw; j++)
                covered += sess[j] > 0;
            if (nw < BI_WORKERS || covered == nw)
                break;
        }
        uaconn_init(&t->ctl[i]);
        s = uaconn_start(&t->ctl[i], "127.0.0.1", t->port);
        if (s != UA_GOOD) {
            fprintf(stderr, "check_badinput: control client %d: %s\n", i,
                    bi_sn(s));
            return -1;
        }
        t->nctl++;
    }
    /* MaxNodesPerRead from the server's OperationLimits. */
    {
        struct ua_datavalue dv;
        char                id[32];

        snprintf(
            id, sizeof(id), "i=%u",
            UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERREAD);
        s = bi_read(t, &t->ctl[0], id, UA_ATTR_VALUE, &dv);
        if (s == UA_GOOD && (dv.mask & UA_DV_VALUE)
            && dv.value.type == UA_BT_UINT32)
            t->max_nodes_per_read = *(uint32_t *)dv.value.data;
        else
            t->max_nodes_per_read = 1000;       /* the default */
    }
    {
        double p50, max;

        if (bi_ctl_latency(t, 20, &p50, &max) != 0) {
            fprintf(stderr, "check_badinput: %s\n", t->why);
            return -1;
        }
        t->ctl_base_us = p50;
    }
    return 0;
}

/* After a case: the broker and the same workers run, controls are served. */
static int
bi_after_case(struct bi *t, const char *name)
{
    if (!bi_broker_alive(t))
        return bi_fail(t, __LINE__, "the broker died");
    if (t->stats_ok) {
        int pids[16], n = bi_stats_pids(t, pids, (int)BI_N(pids));

        if (n < 0)
            return bi_fail(t, __LINE__, "/stats does not answer");
        for (int i = 0; i < t->nwpids; i++) {
            bool found = false;

            for (int j = 0; j < n; j++)
                found |= pids[j] == t->wpids[i];
            if (!found || kill(t->wpids[i], 0) != 0) {
                int gone = t->wpids[i];

                /* Judge the next cases by the respawned workers. */
                for (int k = 0; k < 50; k++) {
                    n = bi_stats_pids(t, t->wpids, (int)BI_N(t->wpids));
                    if (n >= BI_WORKERS)
                        break;
                    itest_sleep_ms(100);
                }
                t->nwpids = n > 0 ? n : 0;
                return bi_fail(t, __LINE__, "worker pid %d is gone (crash "
                               "or respawn)", gone);
            }
        }
    }
    return bi_ctl_check(t, name);
}

int
main(int argc, char **argv)
{
    static struct bi t;
    int              pass = 0, fail = 0, skip = 0, k = 0;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-v") == 0)
            t.verbose = true;
    t.pid = -1;
    itest_init("check_badinput");
    signal(SIGPIPE, SIG_IGN);
    itest_guard(BI_RUN_SECONDS, NULL);
    itest_broker_bin(argv[0], t.broker, sizeof(t.broker));
    itest_tmpdir("uabroker-badinput", t.dir, sizeof(t.dir));
    snprintf(t.log, sizeof(t.log), "%s/broker.log", t.dir);
    t.buf = malloc(BI_BUF);
    t.buf2 = malloc(BI_BUF);
    t.arena_buf = malloc(4u << 20);
    if (t.buf == NULL || t.buf2 == NULL || t.arena_buf == NULL)
        return 1;
    ua_arena_init(&t.arena, t.arena_buf, 4u << 20);
    printf("check_badinput: starting %s -w %d\n", t.broker, BI_WORKERS);
    if (bi_setup(&t) != 0) {
        bi_print_log(&t);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    printf("check_badinput: broker pid %d, port %u, stats %u, %d control "
           "clients, control Read p50 %.0f µs, MaxNodesPerRead %u\n",
           (int)t.pid, t.port, t.sport, t.nctl, t.ctl_base_us,
           t.max_nodes_per_read);
    for (size_t i = 0; i < BI_N(bi_cases); i++) {
        const struct bi_case *cs = &bi_cases[i];
        bool                  chosen = argc <= 1;
        int                   rc;
        uint64_t              t0;

        for (int j = 1; j < argc; j++)
            if (argv[j][0] != '-' && strstr(cs->name, argv[j]) != NULL)
                chosen = true;
        if (argc > 1 && !chosen) {
            bool only_flags = true;

            for (int j = 1; j < argc; j++)
                only_flags &= argv[j][0] == '-';
            if (!only_flags)
                continue;
        }
        k++;
        t.why[0] = '\0';
        t.skipped = false;
        t0 = itest_ms();
        rc = cs->fn(&t);
        bi_conns_clear(&t);
        {
            /* Always: a crash the case itself only saw as a closed
             * connection is named here. */
            char why[BI_WHY];

            snprintf(why, sizeof(why), "%s", t.why);
            if (bi_after_case(&t, cs->name) != 0) {
                if (rc != 0) {
                    size_t l = strlen(why);

                    snprintf(why + l, sizeof(why) - l, "; then %s", t.why);
                } else {
                    snprintf(why, sizeof(why), "%s", t.why);
                }
                rc = -1;
            }
            snprintf(t.why, sizeof(t.why), "%s", why);
        }
        if (rc != 0) {
            printf("not ok %d - %s: %s\n", k, cs->name, t.why);
            fail++;
            if (!bi_broker_alive(&t))
                break;
        } else if (t.skipped) {
            printf("skip %d - %s: %s\n", k, cs->name, t.why);
            skip++;
        } else {
            printf("ok %d - %s (%" PRIu64 " ms)\n", k, cs->name,
                   itest_ms() - t0);
            pass++;
        }
        fflush(stdout);
    }
    for (int i = 0; i < t.nctl; i++)
        uaconn_clear(&t.ctl[i]);
    /* A clean stop, then nothing from a sanitizer in the broker's log. */
    bi_broker_stop(&t);
    if (bi_log_clean(&t) != 0) {
        printf("not ok %d - broker log: %s\n", ++k, t.why);
        fail++;
    }
    if (fail > 0) {
        bi_print_log(&t);
        /* Counted by the harness too: it keeps the runtime directory. */
        itest_check(false, "%d bad-input cases failed", fail);
    }
    printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
    return fail > 0 ? 1 : 0;
}
