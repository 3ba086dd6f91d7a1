/*
 * tests/integ/integ_rsa.c: RSA work does not stall a worker's loop
 * (docs/architecture.md §4: no longer than one private-key operation).
 *
 * Starts `uabroker -w 1` with tests/unit/proto/pki/der/app.der trusted,
 * then for IR_RUN_MS:
 *
 *   - IR_LOADERS child processes each loop over one whole Basic256Sha256
 *     SignAndEncrypt session (OPN: 2 ciphertext blocks to decrypt and a
 *     signature;
 *     CreateSession: a signature; anonymous ActivateSession: a
 *     verification; CloseSession; CLO) and IR_REPLAYS OPNs replayed on
 *     fresh connections (the server's whole OPN work, no client RSA);
 *   - one more child loops over UserName logins on None (a users file made
 *     by `uabroker passwd`: PBKDF2-HMAC-SHA256, 10 000 iterations; the
 *     password encrypted with Basic256Sha256), each a whole session (OPN,
 *     CreateSession, ActivateSession, CloseSession, CLO), taking turns
 *     between IR_USER (a short password: one block to decrypt) and
 *     IR_LONG_USER (an IR_LONG_PW_LEN-byte password: 3 blocks, one per
 *     loop step);
 *   - the parent, on one None channel with a session on the same worker,
 *     reads Server_ServerStatus_CurrentTime in a loop, timing each call.
 *
 * Then, from the worker's row in /stats:
 *
 *   1. loop_rsa_ops_max is 1: no loop iteration (so no callback) did more
 *      than one RSA private-key operation (the inline OPN did 3 in one
 *      callback);
 *   2. rsa_private_ops grew by at least 4 per session, 3 per replayed
 *      OPN and 1 per UserName login: the load was real;
 *   3. loop_rsa_cpu_max_us, the most CPU time one piece of RSA work took
 *      in the loop, is below IR_CPU_FACTOR (4) x the CPU time of one RSA-2048
 *      signature measured here during the run (the median of
 *      IR_CALIBRATE): one
 *      operation and its small change, where the inline OPN took 3 and
 *      a UserName login's decryption and PBKDF2 in one step ~6 (and a
 *      3-block secret decrypted in one step 3).  CPU
 *      time, not wall time: on a loaded 2-core machine a 2 ms callback is
 *      often preempted past 4 ms, which says nothing about the code;
 *   4. the None reader was served throughout: every Read Good, the 99th
 *      percentile round trip below IR_P99_MS (a wedge, not a measure: the
 *      sanitizer build on a busy host is slow);
 *   5. afterwards, IR_LONG_USER with a wrong password of the same length:
 *      BadIdentityTokenRejected;
 *   6. afterwards, on one Basic256Sha256 SignAndEncrypt session and on one
 *      None session: IR_READS Reads of one node after a warm-up cost the
 *      worker no heap allocation (its allocations counter is flat), and
 *      the worker's CPU time per Read (utime + stime from /proc) is
 *      printed for both.
 *
 * The reader's round trips (p50/p99/max, how many above IR_SLOW_MS) and
 * the worker's wall-clock figures (loop_stall_max_us, iterations of 4 ms
 * or more) are printed as "# ..." lines: they compare builds on a quiet
 * machine, not in CI.  UABROKER_BIN runs another broker (an older build:
 * its /stats lacks the loop fields, so items 1-3 fail there by design).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/cert.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IR_WATCHDOG_S   120
#define IR_START_MS     30000
#define IR_RUN_MS       5000
#define IR_ARENA        (1u << 20)
#define IR_RTT_MAX      1000000
#define IR_SLOW_MS      3
#define IR_CALIBRATE    15
/* Below the ~6 signatures of a UserName login's decryption and PBKDF2 in
 * one step; above the 3.2 x seen once for one operation under load (a
 * thread's CPU clock also runs while the host steals its vCPU).  Three
 * operations in one step are caught by loop_rsa_ops_max (check 1). */
#define IR_CPU_FACTOR   4.0
#define IR_ATTEMPTS     3       /* measured runs, for checks 7-9 */
#define IR_P99_MS       250
#define IR_MIN_SESSIONS 10
#define IR_REPLAYS      3
#define IR_LOADERS      2
#define IR_CHILDREN     (IR_LOADERS + 1)    /* + the UserName loader */
#define IR_MIN_LOGINS   5
#define IR_USER         "iruser"
#define IR_PASSWORD     "ir-password-1"
#define IR_LONG_USER    "irlong"
#define IR_LONG_PW_LEN  600     /* + 4 + 32 bytes: 3 RSA-OAEP-2048 blocks */
#define IR_PKI_SRC      "tests/unit/proto/pki/der/"
#define IR_BUCKETS      24
#define IR_WARMUP       500
#define IR_READS        20000

/* What /stats shows of worker 0. */
struct ir_row {
    uint64_t pid;
    uint64_t allocations;
    uint64_t rsa_ops;
    uint64_t rsa_cpu_us;
    uint64_t rsa_cpu_max_us;
    uint64_t rsa_cb_max;
    uint64_t stall_max_us;
    uint64_t loop[IR_BUCKETS];
    bool     ok;
};

static pid_t           ir_broker = -1;
static pid_t           ir_child[IR_CHILDREN] = { -1, -1, -1 };
static char            ir_dir[PATH_MAX];
static char            ir_run[PATH_MAX + 8];
static char            ir_log[PATH_MAX + 16];
static char            ir_long_pw[IR_LONG_PW_LEN + 1];
static uint16_t        ir_port, ir_sport;
static struct ua_arena ir_arena;
static uint8_t         ir_server_cert[UA_CERT_DER_MAX];
static size_t          ir_server_cert_len;
static uint32_t        ir_rtt[IR_RTT_MAX];      /* µs */

static void ir_start_broker(const char *bin);
static struct ir_row ir_stats(void);
static ua_status ir_read_time(struct uaconn *c);
static ua_status ir_endpoints(struct uaconn *c);
static bool ir_replay(const uint8_t *bytes, size_t len);
static void ir_secured_loop(const uint8_t *cert, size_t cert_len,
                            struct ua_crypto_key *key, const char *uri,
                            int fd);
static void ir_user_loop(int fd);
static void ir_passwd(const char *bin, const char *user, const char *pw);
static int ir_cmp_u32(const void *a, const void *b);
static uint64_t ir_proc_cpu_ms(uint64_t pid);
static void ir_steady(const char *what, const struct ua_policy *p,
                      const uint8_t *cert, size_t cert_len,
                      struct ua_crypto_key *key, const char *uri);
static uint64_t ir_us(void);
static uint64_t ir_cpu_us(void);
static uint32_t ir_sign_cpu_us(struct ua_crypto_key *key);
static bool ir_round(const uint8_t *app, size_t app_len,
                     struct ua_crypto_key *key, const char *uri,
                     int attempt, bool last);

static void
ir_start_broker(const char *bin)
{
    char port[8], stats[32];

    ir_port = itest_free_port();
    ir_sport = itest_free_port();
    if (ir_port == 0 || ir_sport == 0 || ir_port == ir_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", ir_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", ir_sport);
    {
        char *const argv[] = { (char *)bin, "-w", "1", "-p", port, "--stats",
                                stats, "--runtime-dir", ir_run, "--vars", "10",
                                NULL };

        ir_broker = itest_spawn(ir_log, argv);
    }
    printf("# broker %s pid %d, opc.tcp port %u\n", bin, (int)ir_broker,
           ir_port);
}

/* GET /stats: 0 and *body (malloc'd), or -1. */
/* Worker 0's row of /stats. */
static struct ir_row
ir_stats(void)
{
    struct ir_row r;
    char         *body = NULL;
    const char   *row, *p;

    memset(&r, 0, sizeof(r));
    if (itest_http(ir_sport, "GET", "/stats", &body) != 200
        || body == NULL) {
        free(body);
        return r;
    }
    row = strstr(body, "{\"slot\": 0,");
    r.ok = row != NULL && itest_json_u64(row, "pid", &r.pid)
           && itest_json_u64(row, "allocations", &r.allocations)
           && itest_json_u64(row, "rsa_private_ops", &r.rsa_ops)
           && itest_json_u64(row, "rsa_cpu_us", &r.rsa_cpu_us)
           && itest_json_u64(row, "loop_rsa_ops_max", &r.rsa_cb_max)
           && itest_json_u64(row, "loop_stall_max_us", &r.stall_max_us)
           && itest_json_u64(row, "loop_rsa_cpu_max_us", &r.rsa_cpu_max_us);
    p = row != NULL ? strstr(row, "\"loop_iterations_us\": ") : NULL;
    p = p != NULL ? strstr(p, "\"buckets\": [") : NULL;
    if (p == NULL) {
        r.ok = false;
    } else {
        p += strlen("\"buckets\": [");
        for (int i = 0; i < IR_BUCKETS && r.ok; i++) {
            char *end;

            r.loop[i] = strtoull(p, &end, 10);
            if (end == p)
                r.ok = false;
            p = end + (*end == ',' ? 2 : 0);
        }
    }
    free(body);
    return r;
}

/* Read Server_ServerStatus_CurrentTime on an activated session. */
static ua_status
ir_read_time(struct uaconn *c)
{
    return uaconn_read_time(c, &ir_arena);
}

/* GetEndpoints: the server certificate of a secured endpoint. */
static ua_status
ir_endpoints(struct uaconn *c)
{
    struct ua_get_endpoints_request  ge;
    struct ua_get_endpoints_response ger;
    char                             url[64];
    ua_status                        s;

    memset(&ge, 0, sizeof(ge));
    ge.request_header.audit_entry_id.len = -1;
    snprintf(url, sizeof(url), "opc.tcp://127.0.0.1:%u", ir_port);
    ge.endpoint_url = ua_string_from(url);
    ge.n_locale_ids = -1;
    ge.n_profile_uris = -1;
    ua_arena_reset(&ir_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_GETENDPOINTSREQUEST], &ge,
                    &ua_types[UA_TYPE_GETENDPOINTSRESPONSE], &ger,
                    &ir_arena);
    if (s != UA_GOOD)
        return s;
    for (int32_t i = 0; i < ger.n_endpoints; i++) {
        const struct ua_endpoint_description *e = &ger.endpoints[i];

        if (e->server_certificate.len > 0
            && (size_t)e->server_certificate.len <= sizeof(ir_server_cert)) {
            memcpy(ir_server_cert, e->server_certificate.data,
                   (size_t)e->server_certificate.len);
            ir_server_cert_len = (size_t)e->server_certificate.len;
            return UA_GOOD;
        }
    }
    return UA_BAD_NOT_FOUND;
}

/*
 * One OPN Issue replayed on a fresh connection (HEL and OPN sent at once,
 * the ACK and the OPN response read, then a hang-up): the server's whole
 * OPN work (2 blocks decrypted, a signature) for no client RSA at all.
 */
static bool
ir_replay(const uint8_t *bytes, size_t len)
{
    static uint8_t buf[16384];
    struct uaconn  c;
    size_t         n;
    bool           ok = false;

    uaconn_init(&c);
    if (uaconn_connect(&c, "127.0.0.1", ir_port) == 0
        && uaconn_raw_send(&c, bytes, len) == 0
        && uaconn_raw_chunk(&c, buf, sizeof(buf), &n) == UA_GOOD
        && memcmp(buf, "ACKF", 4) == 0
        && uaconn_raw_chunk(&c, buf, sizeof(buf), &n) == UA_GOOD)
        ok = memcmp(buf, "OPNF", 4) == 0;
    uaconn_clear(&c);
    return ok;
}

/*
 * The child: for IR_RUN_MS, a whole secured session (OPN, CreateSession,
 * ActivateSession, CloseSession, CLO) and IR_REPLAYS replayed OPNs, in a
 * loop.  Writes { sessions, failures, replays } to fd, then exits.
 */
static void
ir_secured_loop(const uint8_t *cert, size_t cert_len,
                struct ua_crypto_key *key, const char *uri, int fd)
{
    static uint8_t            opn[16384];
    struct ua_client_security sec;
    struct ua_client          cl;
    struct ua_sc_out          out = { opn, sizeof(opn), 0 };
    char                      url[64];
    uint64_t                  end = itest_ms() + IR_RUN_MS;
    uint32_t                  counts[4] = { 0, 0, 0, 0 };
    ua_status                 s;

    memset(&sec, 0, sizeof(sec));
    sec.policy = ua_crypto_policy_get(UA_POLICY_BASIC256SHA256);
    sec.mode = UA_MESSAGESECURITYMODE_SIGNANDENCRYPT;
    sec.cert = cert;
    sec.cert_len = cert_len;
    sec.key = key;
    sec.server_cert = ir_server_cert;
    sec.server_cert_len = ir_server_cert_len;
    /* The HEL and OPN bytes to replay, made once. */
    snprintf(url, sizeof(url), "opc.tcp://127.0.0.1:%u", ir_port);
    ua_client_init(&cl, NULL, NULL, 0);
    if (ua_client_set_security(&cl, &sec) != UA_GOOD
        || ua_client_hello(&cl, url, &out) != UA_GOOD)
        _exit(3);
    cl.state = UA_CLIENT_ACKED;         /* no ACK comes: we only write */
    if (ua_client_open(&cl, UA_SECURITYTOKENREQUESTTYPE_ISSUE, 0, NULL,
                       &out) != UA_GOOD)
        _exit(3);
    ua_client_clear(&cl);
    while (itest_ms() < end) {
        struct uaconn c;

        uaconn_init(&c);
        c.sec = &sec;
        c.app_uri = uri;
        s = uaconn_start(&c, "127.0.0.1", ir_port);
        if (s == UA_GOOD) {
            uaconn_close_session(&c);
            uaconn_close(&c);
            counts[0]++;
        } else {
            if (counts[1] == 0)
                fprintf(stderr, "# secured session: 0x%08X (%s)\n", s,
                        ua_status_name(s));
            counts[1]++;
        }
        ua_client_clear(&c.cl);
        uaconn_clear(&c);
        for (int i = 0; i < IR_REPLAYS; i++) {
            if (ir_replay(opn, out.len))
                counts[2]++;
            else
                counts[1]++;
        }
    }
    (void)!write(fd, counts, sizeof(counts));
    _exit(0);
}

/*
 * The UserName child: for IR_RUN_MS, a whole None session logging in as
 * IR_USER and IR_LONG_USER in turns (the password encrypted with
 * Basic256Sha256) in a loop.
 * Writes { 0, failures, 0, logins } to fd, then exits.
 */
static void
ir_user_loop(int fd)
{
    uint64_t end = itest_ms() + IR_RUN_MS;
    uint32_t counts[4] = { 0, 0, 0, 0 };
    ua_status s;

    while (itest_ms() < end) {
        struct uaconn c;

        uaconn_init(&c);
        c.user = (counts[3] + counts[1]) % 2 == 0 ? IR_USER : IR_LONG_USER;
        c.password = (counts[3] + counts[1]) % 2 == 0 ? IR_PASSWORD
                                                      : ir_long_pw;
        s = uaconn_start(&c, "127.0.0.1", ir_port);
        if (s == UA_GOOD) {
            uaconn_close_session(&c);
            uaconn_close(&c);
            counts[3]++;
        } else {
            if (counts[1] == 0)
                fprintf(stderr, "# UserName login: 0x%08X (%s)\n", s,
                        ua_status_name(s));
            counts[1]++;
        }
        ua_client_clear(&c.cl);
        uaconn_clear(&c);
    }
    (void)!write(fd, counts, sizeof(counts));
    _exit(0);
}

/* user in ir_run/users, made the operator's way: `uabroker passwd`
 * (its default iteration count). */
static void
ir_passwd(const char *bin, const char *user, const char *pw)
{
    char  cmd[3 * PATH_MAX];
    FILE *p;

    snprintf(cmd, sizeof(cmd), "'%s' --runtime-dir '%s' passwd %s viewer "
             ">/dev/null", bin, ir_run, user);
    fflush(NULL);
    p = popen(cmd, "w");
    if (p == NULL || fprintf(p, "%s\n", pw) < 0 || pclose(p) != 0)
        itest_fatal("%s passwd failed", bin);
}

/* utime + stime of pid in milliseconds (/proc/PID/stat), 0 on failure. */
static uint64_t
ir_proc_cpu_ms(uint64_t pid)
{
    char               path[64], line[1024], *p;
    unsigned long long ut = 0, st = 0;
    long               hz = sysconf(_SC_CLK_TCK);
    FILE              *f;

    snprintf(path, sizeof(path), "/proc/%llu/stat", (unsigned long long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    p = fgets(line, sizeof(line), f);
    fclose(f);
    p = p != NULL ? strrchr(line, ')') : NULL;
    /* After ") ": state, then fields 4..13, then utime (14) stime (15). */
    if (p == NULL || hz <= 0
        || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
                  "%llu", &ut, &st) != 2)
        return 0;
    return (ut + st) * 1000u / (unsigned long long)hz;
}

/*
 * Item 5: one session on policy p (NULL: None), IR_WARMUP Reads, then
 * IR_READS more: the worker's allocations must not move; its CPU time per
 * Read is printed.
 */
static void
ir_steady(const char *what, const struct ua_policy *p, const uint8_t *cert,
          size_t cert_len, struct ua_crypto_key *key, const char *uri)
{
    struct ua_client_security sec;
    struct uaconn             c;
    struct ir_row             r0, r1;
    uint64_t                  cpu0, cpu1, t0;
    ua_status                 s;
    int                       i;

    memset(&sec, 0, sizeof(sec));
    sec.policy = p;
    sec.mode = UA_MESSAGESECURITYMODE_SIGNANDENCRYPT;
    sec.cert = cert;
    sec.cert_len = cert_len;
    sec.key = key;
    sec.server_cert = ir_server_cert;
    sec.server_cert_len = ir_server_cert_len;
    uaconn_init(&c);
    c.sec = p != NULL ? &sec : NULL;
    c.app_uri = uri;
    s = uaconn_start(&c, "127.0.0.1", ir_port);
    for (i = 0; s == UA_GOOD && i < IR_WARMUP; i++)
        s = ir_read_time(&c);
    r0 = ir_stats();
    cpu0 = ir_proc_cpu_ms(r0.pid);
    t0 = ir_us();
    for (i = 0; s == UA_GOOD && i < IR_READS; i++)
        s = ir_read_time(&c);
    t0 = ir_us() - t0;
    cpu1 = ir_proc_cpu_ms(r0.pid);
    r1 = ir_stats();
    itest_check(s == UA_GOOD && r0.ok && r1.ok
                && r1.allocations == r0.allocations,
                "%s: %d Reads in steady state, worker allocations %llu -> "
                "%llu (0x%08X)", what, IR_READS,
                (unsigned long long)r0.allocations,
                (unsigned long long)r1.allocations, s);
    if (s == UA_GOOD && cpu0 != 0)
        printf("# %s: worker CPU %.2f us per Read (%llu ms for %d), "
               "round trip %.1f us\n", what,
               (double)(cpu1 - cpu0) * 1000.0 / IR_READS,
               (unsigned long long)(cpu1 - cpu0), IR_READS,
               (double)t0 / IR_READS);
    if (s == UA_GOOD) {
        uaconn_close_session(&c);
        uaconn_close(&c);
    }
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
}

/* Monotonic microseconds. */
static uint64_t
ir_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* This thread's CPU time in microseconds. */
static uint64_t
ir_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The CPU time of one RSA signature with key (the server's key has the
 * same size: 2048 bits), made while the worker is loaded so that both
 * see the same machine (a busy SMT sibling slows either alike). */
static uint32_t
ir_sign_cpu_us(struct ua_crypto_key *key)
{
    uint8_t  data[64], sig[UA_RSA_MAX_BYTES];
    size_t   sl;
    uint64_t t0;

    memset(data, 0x5A, sizeof(data));
    t0 = ir_cpu_us();
    if (ua_crypto_rsa_sign(key, UA_RSA_SIG_PKCS1_SHA256, data, sizeof(data),
                           sig, sizeof(sig), &sl) != UA_GOOD)
        itest_fatal("RSA sign");
    return (uint32_t)(ir_cpu_us() - t0);
}

static int
ir_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return x < y ? -1 : x > y;
}

/* One measured run on the broker just started (checks 1-4 of the header):
 * the None reader's session (and the server certificate), the loaders,
 * the reader's loop, worker 0's /stats row before and after.  The CPU and
 * round-trip bounds compare clocks of a shared machine whose host may
 * steal the vCPU mid-signature: when one of them is out of bounds and this
 * is not the last attempt, the figures are printed and false returned, and
 * main measures again on a fresh broker (a build that does several RSA
 * operations in one step is out of bounds in every run).  The other checks
 * are reported in every attempt. */
static bool
ir_round(const uint8_t *app, size_t app_len, struct ua_crypto_key *key,
         const char *uri, int attempt, bool last)
{
    struct uaconn        c;
    struct ir_row        before, after;
    size_t               n = 0, slow = 0;
    uint32_t             counts[4] = { 0, 0, 0, 0 };
    uint64_t             end, t0, slow4 = 0, ops, op_us;
    uint64_t             wcpu0, wcpu1, rsa_ms;
    uint32_t             cal[IR_CALIBRATE];
    int                  ncal = 0;
    int                  pfd[2];
    bool                 cpu_ok, max_ok, p99_ok;
    ua_status            s = UA_BAD_TIMEOUT;

    for (int i = 0; i < IR_START_MS / 100; i++) {
        uaconn_init(&c);
        s = uaconn_start(&c, "127.0.0.1", ir_port);
        if (s == UA_GOOD)
            break;
        uaconn_clear(&c);
        itest_sleep_ms(100);
    }
    if (s != UA_GOOD)
        itest_fatal("anonymous session on None: 0x%08X", s);
    s = ir_endpoints(&c);
    if (s != UA_GOOD)
        itest_fatal("GetEndpoints: no server certificate: 0x%08X", s);
    before = ir_stats();
    wcpu0 = ir_proc_cpu_ms(before.pid);

    if (pipe(pfd) != 0)
        itest_fatal("pipe: %s", strerror(errno));
    fflush(NULL);
    for (int i = 0; i < IR_CHILDREN; i++) {
        ir_child[i] = fork();
        if (ir_child[i] == -1)
            itest_fatal("fork: %s", strerror(errno));
        if (ir_child[i] == 0) {
            close(pfd[0]);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            /* IR_LOADER_NICE (for comparing builds by hand, e.g. under
             * chrt): the loaders' own RSA then competes less with the
             * worker and the reader (normal policy, that niceness). */
            if (getenv("IR_LOADER_NICE") != NULL) {
                struct sched_param sp = { 0 };

                (void)sched_setscheduler(0, SCHED_OTHER, &sp);
                (void)!nice(atoi(getenv("IR_LOADER_NICE")));
            }
            if (i == IR_LOADERS)
                ir_user_loop(pfd[1]);
            ir_secured_loop(app, app_len, key, uri, pfd[1]);
        }
        itest_own(ir_child[i]);
    }
    close(pfd[1]);

    /* Read while the child does RSA work on the same worker; now and
     * then a signature of our own, timed. */
    end = itest_ms() + IR_RUN_MS;
    while (itest_ms() < end && n < IR_RTT_MAX) {
        uint64_t us;

        if (ncal < IR_CALIBRATE
            && itest_ms() + (IR_CALIBRATE - ncal) * IR_RUN_MS / IR_CALIBRATE
                   >= end)
            cal[ncal++] = ir_sign_cpu_us(key);

        t0 = ir_us();
        s = ir_read_time(&c);
        if (s != UA_GOOD)
            break;
        us = ir_us() - t0;
        ir_rtt[n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
        if (us > IR_SLOW_MS * 1000u)
            slow++;
    }
    itest_check(s == UA_GOOD, "None reader: %zu Reads, all Good (0x%08X)",
                n, s);
    for (int i = 0; i < IR_CHILDREN; i++) {
        uint32_t one[4];

        /* 16 bytes: one atomic write per loader. */
        if (read(pfd[0], one, sizeof(one)) == (ssize_t)sizeof(one))
            for (int k = 0; k < 4; k++)
                counts[k] += one[k];
        else
            counts[1]++;
        (void)itest_wait(ir_child[i]);
        ir_child[i] = -1;
    }
    close(pfd[0]);
    after = ir_stats();
    wcpu1 = ir_proc_cpu_ms(after.pid);
    while (ncal < IR_CALIBRATE)
        cal[ncal++] = ir_sign_cpu_us(key);
    qsort(cal, IR_CALIBRATE, sizeof(cal[0]), ir_cmp_u32);
    op_us = cal[IR_CALIBRATE / 2];
    uaconn_close_session(&c);
    uaconn_close(&c);
    uaconn_clear(&c);

    itest_check(counts[0] >= IR_MIN_SESSIONS && counts[1] == 0,
                "secured sessions (Basic256Sha256 SignAndEncrypt): %u, "
                "replayed OPNs: %u, UserName logins: %u, %u failed",
                counts[0], counts[2], counts[3], counts[1]);
    itest_check(counts[3] >= IR_MIN_LOGINS,
                "UserName logins on None (PBKDF2 of `uabroker passwd`): %u",
                counts[3]);
    if (n > 0) {
        qsort(ir_rtt, n, sizeof(ir_rtt[0]), ir_cmp_u32);
        printf("# None reader round trips: %zu, p50 %u us, p99 %u us, "
               "p99.9 %u us, max %u us; %zu above %u ms = %.2f per OPN\n",
               n, ir_rtt[n / 2], ir_rtt[n - 1 - n / 100],
               ir_rtt[n - 1 - n / 1000], ir_rtt[n - 1], slow, IR_SLOW_MS,
               counts[0] + counts[2] > 0
                   ? (double)slow / (counts[0] + counts[2]) : 0.0);
    }
    for (int b = 12; b < IR_BUCKETS; b++)
        slow4 += after.loop[b] - before.loop[b];
    ops = after.rsa_ops - before.rsa_ops;
    printf("# worker: %llu RSA private-key operations, at most %llu in one "
           "iteration, longest iteration %llu us, %llu iterations of 4 ms or "
           "more\n", (unsigned long long)ops,
           (unsigned long long)after.rsa_cb_max,
           (unsigned long long)after.stall_max_us,
           (unsigned long long)slow4);
    itest_check(after.ok, "/stats shows the worker's loop fields");
    itest_check(after.ok && after.rsa_cb_max == 1,
                "no loop iteration did more than one RSA private-key "
                "operation (loop_rsa_ops_max %llu)",
                (unsigned long long)after.rsa_cb_max);
    itest_check(after.ok
                && ops >= 4u * counts[0] + 3u * counts[2] + counts[3],
                "rsa_private_ops grew by %llu: at least 4 per secured "
                "session (%u), 3 per OPN (%u), 1 per UserName login (%u)",
                (unsigned long long)ops, counts[0], counts[2], counts[3]);
    /* rsa_cpu_us: each private-key operation took at least a quarter of
     * the signature timed here, and all of it fits in the worker's CPU
     * (/proc, whole ticks: one tick of slack). */
    rsa_ms = (after.rsa_cpu_us - before.rsa_cpu_us) / 1000u;
    cpu_ok = after.ok && after.pid == before.pid
             && (after.rsa_cpu_us - before.rsa_cpu_us) * 4u >= ops * op_us
             && rsa_ms <= wcpu1 - wcpu0 + 10u;
    max_ok = after.ok
             && (double)after.rsa_cpu_max_us < IR_CPU_FACTOR * (double)op_us;
    p99_ok = n > 0 && ir_rtt[n - 1 - n / 100] < IR_P99_MS * 1000u;
    if (!last && !(cpu_ok && max_ok && p99_ok)) {
        printf("# attempt %d: a CPU or round-trip figure out of bounds "
               "(rsa_cpu_us %llu ms for %llu operations of %llu us, worker "
               "CPU %llu ms; most CPU in one step %llu us; p99 %u us): "
               "again on a fresh broker\n", attempt,
               (unsigned long long)rsa_ms, (unsigned long long)ops,
               (unsigned long long)op_us,
               (unsigned long long)(wcpu1 - wcpu0),
               (unsigned long long)after.rsa_cpu_max_us,
               n > 0 ? ir_rtt[n - 1 - n / 100] : 0);
        return false;
    }
    itest_check(cpu_ok,
                "rsa_cpu_us grew by %llu ms: at least a quarter of %llu "
                "us for each of the %llu operations, within the worker's "
                "%llu ms of CPU", (unsigned long long)rsa_ms,
                (unsigned long long)op_us, (unsigned long long)ops,
                (unsigned long long)(wcpu1 - wcpu0));
    itest_check(max_ok,
                "the most CPU one step of RSA or password work took in the "
                "loop: %llu us, below %.1f x one signature (%llu us)",
                (unsigned long long)after.rsa_cpu_max_us, IR_CPU_FACTOR,
                (unsigned long long)op_us);
    itest_check(p99_ok,
                "None reader served throughout: p99 %u us (below %u ms)",
                n > 0 ? ir_rtt[n - 1 - n / 100] : 0, IR_P99_MS);
    return true;
}

int
main(int argc, char **argv)
{
    static uint8_t       app[UA_CERT_DER_MAX];
    static struct ua_crypto_key key;
    struct uaconn        c;
    char                 bin[PATH_MAX], path[PATH_MAX + 128];
    char                 uri[256];
    size_t               app_len;
    ua_status            s;

    itest_init("integ_rsa");
    (void)argc;
    itest_guard(IR_WATCHDOG_S, ir_log);
    ua_arena_init(&ir_arena, malloc(IR_ARENA), IR_ARENA);
    if (ua_crypto_init() != UA_GOOD)
        itest_fatal("ua_crypto_init");
    itest_broker_bin(argv[0], bin, sizeof(bin));
    itest_client_identity(IR_PKI_SRC, app, sizeof(app), &app_len, &key, uri,
                          sizeof(uri));

    /* The runtime directory with the client certificate trusted. */
    itest_tmpdir("uabroker-rsa", ir_dir, sizeof(ir_dir));
    snprintf(ir_run, sizeof(ir_run), "%s/run", ir_dir);
    snprintf(ir_log, sizeof(ir_log), "%s/broker.log", ir_dir);
    snprintf(path, sizeof(path), "%s/run/pki/trusted/certs", ir_dir);
    itest_mkdirs(path);
    snprintf(path, sizeof(path), "%s/run/pki/trusted/certs/app.der", ir_dir);
    {
        FILE *f = fopen(path, "wb");

        if (f == NULL || fwrite(app, 1, app_len, f) != app_len
            || fclose(f) != 0)
            itest_fatal("cannot write %s", path);
    }
    for (int i = 0; i < IR_LONG_PW_LEN; i++)
        ir_long_pw[i] = (char)('a' + (i * 7) % 26);
    ir_passwd(bin, IR_USER, IR_PASSWORD);
    ir_passwd(bin, IR_LONG_USER, ir_long_pw);
    ir_start_broker(bin);

    for (int attempt = 1; attempt <= IR_ATTEMPTS; attempt++) {
        if (attempt > 1) {
            if (itest_stop(ir_broker, 5000) != 0)
                itest_fatal("the broker of attempt %d did not stop",
                            attempt - 1);
            ir_broker = -1;
            ir_start_broker(bin);
        }
        if (ir_round(app, app_len, &key, uri, attempt,
                     attempt == IR_ATTEMPTS))
            break;
    }

    /* 5. A wrong long password: refused after all its blocks. */
    ir_long_pw[IR_LONG_PW_LEN - 1] = '!';
    uaconn_init(&c);
    c.user = IR_LONG_USER;
    c.password = ir_long_pw;
    s = uaconn_start(&c, "127.0.0.1", ir_port);
    itest_check(s == UA_BAD_IDENTITY_TOKEN_REJECTED,
                "%s with a wrong %d-byte password: 0x%08X (%s)",
                IR_LONG_USER, IR_LONG_PW_LEN, s, ua_status_name(s));
    if (s == UA_GOOD) {
        uaconn_close_session(&c);
        uaconn_close(&c);
    }
    ua_client_clear(&c.cl);
    uaconn_clear(&c);

    /* 6. No allocation per secured Read; CPU per Read. */
    ir_steady("Basic256Sha256 SignAndEncrypt",
              ua_crypto_policy_get(UA_POLICY_BASIC256SHA256), app, app_len,
              &key, uri);
    ir_steady("None", NULL, NULL, 0, NULL, NULL);

    itest_check(itest_stop(ir_broker, 5000) == 0,
                "SIGTERM: the broker exits 0");
    ir_broker = -1;
    ua_crypto_key_clear(&key);
    return itest_finish();
}
