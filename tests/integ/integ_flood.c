/*
 * tests/integ/integ_flood.c: a connect flood against the accept limiter
 * (docs/security.md cases 10 and 86, scaled to this test's few seconds).
 *
 * Starts `uabroker -w 2` with the default accept limit (limits.accept_rate
 * 200/s after a burst of limits.accept_burst 1000), then:
 *
 *   1. a subscriber: a subscription at a 100 ms publishing interval and a
 *      keep-alive count of 1 (so every publishing cycle answers a Publish:
 *      with data or as a keep-alive) on Demo.Simulation.Counter (changed
 *      every 300 ms by the broker, sampled every 50 ms), three Publish
 *      requests in flight;
 *   2. a forked child floods connects for FL_FLOOD_MS: up to FL_INFLIGHT
 *      connections at once, each connect + HEL, then it reads what comes
 *      back (ACK: accepted; ERR BadTcpServerTooBusy: refused; any other
 *      ERR; the connection closed or reset; nothing within 2 s: stalled)
 *      and resets the connection (SO_LINGER 0, as a flooder would: no
 *      TIME_WAIT to run out of ports);
 *   3. meanwhile and for a second after, the subscriber's PublishResponses
 *      are timed and checked; the broker's and the workers' RSS and open
 *      descriptors are sampled (/proc).
 *
 * Asserted: the limiter shed load (accepted <= burst + rate x the flood's
 * seconds + 1; most connects refused with BadTcpServerTooBusy; /stats
 * counted the refusals); the subscription kept publishing (no gap between
 * PublishResponses above FL_GAP_MS, keep-alives counting as arriving;
 * NotificationMessage sequence numbers contiguous; every Counter value
 * once, in order); RSS and descriptors bounded during the flood and back
 * after it.  Figures are printed as "# ..." lines.
 *
 * Prints "ok N - what" / "FAIL N - what" and a closing "integ_flood: N
 * passed, M failed"; exits non-zero on any failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define FL_WATCHDOG_S   90
#define FL_START_MS     30000
#define FL_ARENA        (1u << 20)
#define FL_WORKERS      2
#define FL_RATE         200     /* limits.accept_rate's default */
#define FL_BURST        1000    /* limits.accept_burst's default */
#define FL_FLOOD_MS     5000
#define FL_INFLIGHT     64      /* the flooder's connections at once */
#define FL_STALL_MS     2000
#define FL_INTERVAL_MS  100     /* publishing interval */
#define FL_SIM_MS       "300"   /* addrspace.simulation_interval_ms: the
                                 * Counter is sampled (50 ms, the least
                                 * limits.min_sampling_interval_ms
                                 * allows), so a value is missed only
                                 * when a sample comes 250 ms late */
#define FL_INFLIGHT_PUB 3
/*
 * The longest wait between two PublishResponses (one is due every
 * interval, keep-alive count 1): three publishing intervals (a response
 * late by one whole interval after one early by one, plus the interval
 * itself) and 200 ms for this 2-core machine, where
 * the flooder, both workers and the broker share the cores with other
 * jobs.  Without the limiter every flooded connect costs a worker a
 * connection, HEL/ACK and close, on the loop that also publishes.
 */
#define FL_GAP_MS       (3 * FL_INTERVAL_MS + 200)
#define FL_RSS_SLACK_KB (16u * 1024)    /* RSS growth allowed per process */
#define FL_FD_SLACK     16              /* descriptors after the flood */

struct fl_counts {
    uint64_t tried;         /* connects started */
    uint64_t accepted;      /* ACK */
    uint64_t refused;       /* ERR BadTcpServerTooBusy */
    uint64_t other_err;     /* another ERR */
    uint64_t closed;        /* closed or reset before any answer */
    uint64_t stalled;       /* no answer within FL_STALL_MS */
    uint64_t no_connect;    /* socket()/connect() failed at once */
    uint64_t ms;            /* from the first connect to the last answer */
};

struct fl_proc {
    pid_t    pid;
    uint64_t rss0_kb, rss_max_kb, rss1_kb;
    int      fd0, fd_max, fd1;
};

static pid_t           fl_broker = -1;
static char            fl_dir[PATH_MAX];
static char            fl_run[PATH_MAX + 8];
static char            fl_log[PATH_MAX + 16];
static uint16_t        fl_port, fl_sport;
static struct ua_arena fl_arena;
static struct fl_proc  fl_procs[1 + FL_WORKERS];

/* ------------------------------------------------------------ /proc */

static const char *
fl_name(int i)
{
    static const char *const names[] = { "broker", "worker 0", "worker 1" };

    return i >= 0 && i < (int)(sizeof(names) / sizeof(names[0])) ? names[i]
                                                                 : "worker";
}

static uint64_t
fl_rss_kb(pid_t pid)
{
    char     path[64], line[256];
    uint64_t kb = 0;
    FILE    *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtoull(line + 6, NULL, 10);
    fclose(f);
    return kb;
}

static int
fl_fds(pid_t pid)
{
    char           path[64];
    DIR           *d;
    struct dirent *e;
    int            n = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* Sample every process: phase 0 baseline, 1 during (max), 2 after. */
static void
fl_sample(int phase)
{
    for (int i = 0; i < 1 + FL_WORKERS; i++) {
        struct fl_proc *p = &fl_procs[i];
        uint64_t        rss = fl_rss_kb(p->pid);
        int             fds = fl_fds(p->pid);

        if (phase == 0) {
            p->rss0_kb = p->rss_max_kb = rss;
            p->fd0 = p->fd_max = fds;
        } else if (phase == 1) {
            if (rss > p->rss_max_kb)
                p->rss_max_kb = rss;
            if (fds > p->fd_max)
                p->fd_max = fds;
        } else {
            p->rss1_kb = rss;
            p->fd1 = fds;
            if (rss > p->rss_max_kb)
                p->rss_max_kb = rss;
            if (fds > p->fd_max)
                p->fd_max = fds;
        }
    }
}

/* ------------------------------------------------------------ flooder */

struct fl_slot {
    int      fd;
    bool     sent;          /* HEL written */
    uint64_t t0;
    size_t   got;
    uint8_t  b[64];
};

/* A HEL for opc.tcp://127.0.0.1:port (Part 6 §7.1.2.3). */
static size_t
fl_hel(uint8_t *b, size_t cap, uint16_t port)
{
    char     url[64];
    int      ul = snprintf(url, sizeof(url), "opc.tcp://127.0.0.1:%u", port);
    uint32_t w[5] = { 0, 65536, 65536, 0, 0 };
    size_t   n = 8;

    if (ul < 0 || (size_t)ul + 32 > cap)
        return 0;
    memcpy(b, "HELF", 4);
    for (int i = 0; i < 5; i++, n += 4)
        for (int k = 0; k < 4; k++)
            b[n + (size_t)k] = (uint8_t)(w[i] >> (8 * k));
    for (int k = 0; k < 4; k++)
        b[n + (size_t)k] = (uint8_t)((uint32_t)ul >> (8 * k));
    n += 4;
    memcpy(b + n, url, (size_t)ul);
    n += (size_t)ul;
    for (int k = 0; k < 4; k++)
        b[4 + k] = (uint8_t)((uint32_t)n >> (8 * k));
    return n;
}

static void
fl_reset(struct fl_slot *s)
{
    struct linger lg = { 1, 0 };

    setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(s->fd);
    s->fd = -1;
}

/* The answer in s->b: counted; true when the connection is done. */
static bool
fl_answer(struct fl_slot *s, struct fl_counts *c, bool eof)
{
    uint32_t st;

    if (s->got >= 4 && memcmp(s->b, "ACKF", 4) == 0) {
        c->accepted++;
        return true;
    }
    if (s->got >= 12 && memcmp(s->b, "ERRF", 4) == 0) {
        st = (uint32_t)s->b[8] | (uint32_t)s->b[9] << 8
             | (uint32_t)s->b[10] << 16 | (uint32_t)s->b[11] << 24;
        if (st == UA_BAD_TCP_SERVER_TOO_BUSY)
            c->refused++;
        else
            c->other_err++;
        return true;
    }
    if (eof || s->got >= sizeof(s->b)) {
        c->closed++;
        return true;
    }
    return false;
}

/* The child: flood for ms, then write the counts to wfd. */
static void
fl_flood(uint16_t port, unsigned ms, int wfd)
{
    static struct fl_slot slots[FL_INFLIGHT];
    struct pollfd         pfd[FL_INFLIGHT];
    struct sockaddr_in    sa = { .sin_family = AF_INET };
    struct fl_counts      c;
    uint8_t               hel[128];
    size_t                hl = fl_hel(hel, sizeof(hel), port);
    uint64_t              t0 = itest_ms(), end = t0 + ms, now, last = t0;
    int                   live = 0, n;
    ssize_t               r;

    memset(&c, 0, sizeof(c));
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < FL_INFLIGHT; i++)
        slots[i].fd = -1;
    for (;;) {
        now = itest_ms();
        for (int i = 0; i < FL_INFLIGHT && now < end; i++) {
            struct fl_slot *s = &slots[i];

            if (s->fd != -1)
                continue;
            s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                           0);
            c.tried++;
            if (s->fd == -1) {
                c.no_connect++;
                continue;
            }
            if (connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1
                && errno != EINPROGRESS) {
                c.no_connect++;
                fl_reset(s);
                continue;
            }
            s->sent = false;
            s->got = 0;
            s->t0 = now;
            live++;
        }
        if (live == 0 && now >= end)
            break;
        for (int i = 0; i < FL_INFLIGHT; i++) {
            pfd[i].fd = slots[i].fd;
            pfd[i].events = slots[i].sent ? POLLIN : POLLOUT;
            pfd[i].revents = 0;
        }
        n = poll(pfd, FL_INFLIGHT, 50);
        now = itest_ms();
        for (int i = 0; i < FL_INFLIGHT && n >= 0; i++) {
            struct fl_slot *s = &slots[i];
            bool            done = false;

            if (s->fd == -1)
                continue;
            if (!s->sent && (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP))) {
                if (send(s->fd, hel, hl, MSG_NOSIGNAL) == (ssize_t)hl) {
                    s->sent = true;
                } else {
                    c.closed++;
                    done = true;
                }
            } else if (s->sent && (pfd[i].revents & (POLLIN | POLLERR
                                                     | POLLHUP))) {
                r = recv(s->fd, s->b + s->got, sizeof(s->b) - s->got, 0);
                if (r > 0)
                    s->got += (size_t)r;
                done = fl_answer(s, &c, r <= 0);
            }
            if (!done && now - s->t0 >= FL_STALL_MS) {
                c.stalled++;
                done = true;
            }
            if (done) {
                fl_reset(s);
                live--;
                last = now;
            }
        }
    }
    c.ms = last - t0;
    if (write(wfd, &c, sizeof(c)) != (ssize_t)sizeof(c))
        _exit(2);
    _exit(0);
}

/* ------------------------------------------------------------ subscriber */


static ua_status
fl_subscribe(struct uaconn *c)
{
    struct ua_create_subscription_response csr;
    ua_status                              s;

    s = uaconn_subscribe1(c, &fl_arena, FL_INTERVAL_MS, 600, 1,
                          ua_nodeid_str(1, "Demo.Simulation.Counter"), 0,
                          &csr);
    if (s == UA_GOOD
        && (csr.revised_publishing_interval != FL_INTERVAL_MS
            || csr.revised_max_keep_alive_count != 1))
        s = UA_BAD_UNEXPECTED_ERROR;
    return s;
}

struct fl_pub {
    uint64_t responses, keepalives, messages;
    uint64_t max_gap_ms;
    uint64_t seq_breaks;        /* a data message's number not last + 1 */
    struct uaconn_seq q;        /* the Counter's values */
    uint32_t last_seq;
    uint64_t last_ms;
    ua_status error;
};

/* Publish on c until `until`, sampling /proc after each response when
 * phase != 0; FL_INFLIGHT_PUB requests in flight. */
static void
fl_publish(struct uaconn *c, struct fl_pub *p, uint64_t until, int phase)
{
    static struct ua_subscription_acknowledgement ack;
    struct ua_publish_request req;
    uint32_t                  id;
    bool                      have_ack = false;
    uint64_t                  now;

    while (p->error == UA_GOOD && (now = itest_ms()) < until) {
        struct ua_client_event     ev;
        struct ua_publish_response resp;
        const struct ua_notification_message *m;
        ua_status                  s = uaconn_recv(c, &ev);

        if (s != UA_GOOD) {
            p->error = s;
            return;
        }
        if (ev.kind != UA_CLIENT_EV_MSG)
            continue;
        ua_arena_reset(&fl_arena);
        s = ua_client_decode(&c->cl, &ev, &ua_types[UA_TYPE_PUBLISHRESPONSE],
                             &resp, &fl_arena);
        if (s != UA_GOOD) {
            p->error = s;
            return;
        }
        now = itest_ms();
        if (p->last_ms != 0 && now - p->last_ms > p->max_gap_ms)
            p->max_gap_ms = now - p->last_ms;
        p->last_ms = now;
        p->responses++;
        m = &resp.notification_message;
        if (m->n_notification_data == 0) {
            p->keepalives++;
        } else {
            if (p->last_seq != 0 && m->sequence_number != p->last_seq + 1)
                p->seq_breaks++;
            p->last_seq = m->sequence_number;
            p->messages++;
            ack.subscription_id = resp.subscription_id;
            ack.sequence_number = m->sequence_number;
            have_ack = true;
        }
        uaconn_seq_take(&p->q, m);
        memset(&req, 0, sizeof(req));
        if (have_ack) {
            req.n_subscription_acknowledgements = 1;
            req.subscription_acknowledgements = &ack;
            have_ack = false;
        }
        if (uaconn_send(c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id)
            != UA_GOOD) {
            p->error = UA_BAD_COMMUNICATION_ERROR;
            return;
        }
        if (phase != 0)
            fl_sample(phase);
    }
}

/* ------------------------------------------------------------ main */

int
main(int argc, char **argv)
{
    struct ua_publish_request req;
    struct uaconn             sub;
    struct fl_counts          fc;
    struct fl_pub             pub;
    uint64_t                  u, refused_rate = 0, rejected = 0, bound;
    uint64_t                  t_flood, t_done;
    char                      bin[PATH_MAX];
    ua_status                 s = UA_BAD_TIMEOUT;
    uint32_t                  id;
    int                       pfd[2], status;
    pid_t                     child;
    ssize_t                   r;

    itest_init("integ_flood");
    (void)argc;
    itest_guard(FL_WATCHDOG_S, fl_log);
    ua_arena_init(&fl_arena, malloc(FL_ARENA), FL_ARENA);
    itest_broker_bin(argv[0], bin, sizeof(bin));
    itest_tmpdir("uabroker-flood", fl_dir, sizeof(fl_dir));
    snprintf(fl_run, sizeof(fl_run), "%s/run", fl_dir);
    snprintf(fl_log, sizeof(fl_log), "%s/broker.log", fl_dir);
    {
        const char *const extra[] = {
            "--vars", "10",
            "--set", "addrspace.simulation_interval_ms=" FL_SIM_MS, NULL
        };

        fl_broker = itest_broker_start(bin, 2, fl_run, fl_log, extra,
                                       FL_START_MS, &fl_port, &fl_sport);
    }

    /* 1. The subscriber. */
    s = uaconn_start_retry(&sub, "127.0.0.1", fl_port, FL_START_MS);
    if (s != UA_GOOD)
        itest_fatal("no session: 0x%08X", s);
    s = fl_subscribe(&sub);
    if (s != UA_GOOD)
        itest_fatal("no subscription on Demo.Simulation.Counter at %u ms: "
                    "0x%08X", FL_INTERVAL_MS, s);
    memset(&req, 0, sizeof(req));
    for (int i = 0; i < FL_INFLIGHT_PUB; i++)
        if (uaconn_send(&sub, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id)
            != UA_GOOD)
            itest_fatal("Publish");
    memset(&pub, 0, sizeof(pub));
    uaconn_seq_init(&pub.q, UA_BT_UINT32);
    /* A second of normal publishing first; then the baseline. */
    fl_publish(&sub, &pub, itest_ms() + 1000, 0);
    fl_procs[0].pid = fl_broker;
    for (int i = 0; i < FL_WORKERS; i++) {
        if (!itest_worker_u64(fl_sport, i, "pid", &u) || u == 0)
            itest_fatal("no pid of worker %d in /stats", i);
        fl_procs[1 + i].pid = (pid_t)u;
    }
    fl_sample(0);
    itest_check(pub.error == UA_GOOD && pub.responses >= 8,
                "before the flood: %llu PublishResponses in 1 s, max gap "
                "%llu ms", (unsigned long long)pub.responses,
                (unsigned long long)pub.max_gap_ms);
    memset(&pub, 0, sizeof(pub));
    uaconn_seq_init(&pub.q, UA_BT_UINT32);

    /* 2. The flood, from a child. */
    if (pipe(pfd) != 0)
        itest_fatal("pipe");
    t_flood = itest_ms();
    child = fork();
    if (child == -1)
        itest_fatal("fork");
    if (child == 0) {
        close(pfd[0]);
        fl_flood(fl_port, FL_FLOOD_MS, pfd[1]);
    }
    itest_own(child);
    close(pfd[1]);

    /* 3. Publishing meanwhile and for a second after. */
    fl_publish(&sub, &pub, t_flood + FL_FLOOD_MS + FL_STALL_MS, 1);
    status = itest_wait(child);
    t_done = itest_ms();
    memset(&fc, 0, sizeof(fc));
    r = read(pfd[0], &fc, sizeof(fc));
    close(pfd[0]);
    if (r != (ssize_t)sizeof(fc) || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0)
        itest_fatal("the flooder failed (status 0x%x)", status);
    if (t_done < t_flood + FL_FLOOD_MS + FL_STALL_MS + 1000)
        fl_publish(&sub, &pub, t_flood + FL_FLOOD_MS + FL_STALL_MS + 1000, 1);
    else
        fl_publish(&sub, &pub, itest_ms() + 1000, 1);
    fl_sample(2);

    printf("# flood: %llu connects in %llu ms (%llu/s): %llu accepted (ACK), "
           "%llu refused (ERR BadTcpServerTooBusy), %llu other ERR, %llu "
           "closed, %llu stalled, %llu failed to connect\n",
           (unsigned long long)fc.tried, (unsigned long long)fc.ms,
           (unsigned long long)(fc.ms ? fc.tried * 1000 / fc.ms : 0),
           (unsigned long long)fc.accepted, (unsigned long long)fc.refused,
           (unsigned long long)fc.other_err, (unsigned long long)fc.closed,
           (unsigned long long)fc.stalled, (unsigned long long)fc.no_connect);
    printf("# subscriber: %llu PublishResponses (%llu keep-alives), %llu "
           "values, max gap %llu ms\n", (unsigned long long)pub.responses,
           (unsigned long long)pub.keepalives,
           (unsigned long long)pub.q.values,
           (unsigned long long)pub.max_gap_ms);
    for (int i = 0; i < 1 + FL_WORKERS; i++)
        printf("# %s pid %d: RSS %llu -> max %llu -> %llu kB, fds %d -> "
               "max %d -> %d\n", fl_name(i),
               (int)fl_procs[i].pid, (unsigned long long)fl_procs[i].rss0_kb,
               (unsigned long long)fl_procs[i].rss_max_kb,
               (unsigned long long)fl_procs[i].rss1_kb, fl_procs[i].fd0,
               fl_procs[i].fd_max, fl_procs[i].fd1);

    /* The limiter shed the load. */
    bound = FL_BURST + FL_RATE * fc.ms / 1000 + 1;
    itest_check(fc.accepted <= bound, "accepted %llu <= burst %u + %u/s x "
                "%llu ms + 1 = %llu", (unsigned long long)fc.accepted,
                FL_BURST, FL_RATE, (unsigned long long)fc.ms,
                (unsigned long long)bound);
    itest_check(fc.tried > 2 * bound && fc.refused > fc.tried / 2,
                "the flood outran the limit: %llu connects, %llu refused "
                "with BadTcpServerTooBusy", (unsigned long long)fc.tried,
                (unsigned long long)fc.refused);
    itest_check(fc.other_err == 0 && fc.stalled == 0,
                "no other ERR (%llu), nothing stalled (%llu)",
                (unsigned long long)fc.other_err,
                (unsigned long long)fc.stalled);
    for (int i = 0; i < FL_WORKERS; i++) {
        if (itest_worker_u64(fl_sport, i, "refused_rate", &u))
            refused_rate += u;
        else
            refused_rate = UINT64_MAX / 2;
        if (itest_worker_u64(fl_sport, i, "rejected_connections", &u))
            rejected += u;
    }
    /* Every refusal the flooder read was counted; those it saw as closed
     * (the ERR lost to the reset) may be counted too. */
    itest_check(refused_rate + rejected >= fc.refused
                    && refused_rate <= fc.refused + fc.closed
                    && refused_rate > 0,
                "/stats throttle.refused_rate %llu (+ rejected_connections "
                "%llu) for %llu refusals read, %llu closed",
                (unsigned long long)refused_rate,
                (unsigned long long)rejected,
                (unsigned long long)fc.refused,
                (unsigned long long)fc.closed);

    /* The subscription kept publishing on time, nothing lost. */
    itest_check(pub.error == UA_GOOD, "the subscriber's connection held: "
                "0x%08X", pub.error);
    itest_check(pub.max_gap_ms <= FL_GAP_MS, "longest wait between two "
                "PublishResponses %llu ms <= %u (3 x %u ms + 200)",
                (unsigned long long)pub.max_gap_ms, FL_GAP_MS,
                FL_INTERVAL_MS);
    itest_check(pub.responses * FL_INTERVAL_MS
                    >= (t_flood + FL_FLOOD_MS + FL_STALL_MS - t_flood) * 8
                           / 10,
                "%llu PublishResponses over %u ms (one per %u ms: at least "
                "80%%)", (unsigned long long)pub.responses,
                FL_FLOOD_MS + FL_STALL_MS, FL_INTERVAL_MS);
    itest_check(pub.seq_breaks == 0 && pub.messages > 0,
                "sequence numbers contiguous over %llu NotificationMessages "
                "(%llu breaks)", (unsigned long long)pub.messages,
                (unsigned long long)pub.seq_breaks);
    itest_check(pub.q.breaks == 0 && pub.q.overflows == 0
                    && pub.q.values > 0,
                "every Counter value once, in order: %llu values, %llu "
                "breaks, %llu overflows", (unsigned long long)pub.q.values,
                (unsigned long long)pub.q.breaks,
                (unsigned long long)pub.q.overflows);

    /* Memory and descriptors bounded. */
    for (int i = 0; i < 1 + FL_WORKERS; i++) {
        struct fl_proc *p = &fl_procs[i];

        itest_check(p->rss0_kb > 0 && p->rss_max_kb <= p->rss0_kb
                                                         + FL_RSS_SLACK_KB,
                    "%s: RSS at most %llu kB (baseline %llu + %u)",
                    fl_name(i),
                    (unsigned long long)p->rss_max_kb,
                    (unsigned long long)p->rss0_kb, FL_RSS_SLACK_KB);
        itest_check(p->fd0 > 0 && p->fd_max <= p->fd0 + FL_INFLIGHT
                                                   + FL_FD_SLACK
                        && p->fd1 <= p->fd0 + FL_FD_SLACK,
                    "%s: descriptors %d, at most %d during the flood "
                    "(<= %d + %d in flight + %d), %d after (<= %d + %d)",
                    fl_name(i), p->fd0, p->fd_max,
                    p->fd0, FL_INFLIGHT, FL_FD_SLACK, p->fd1, p->fd0,
                    FL_FD_SLACK);
    }

    uaconn_close(&sub);
    ua_client_clear(&sub.cl);
    uaconn_clear(&sub);
    itest_check(itest_stop(fl_broker, 5000) == 0,
                "SIGTERM: the broker exits 0");
    fl_broker = -1;
    return itest_finish();
}
