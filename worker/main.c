/*
 * worker/main.c: uaworker, one worker process (DESIGN.md §1).
 *
 *   uaworker --slot N --segment-fd FD --listen-fd FD
 *
 * Started by uabroker only (fork + exec), which passes the worker's slot,
 * the shared-memory segment fd and the slot's listening socket.  Start-up:
 * PR_SET_PDEATHSIG and a check that the parent is still the broker; attach
 * the segment; wait until the address space is ready; take the
 * configuration snapshot and this slot's row; create the event_base (after
 * exec: libevent state never crosses a fork); mark the row UP; run.
 *
 * SIGTERM / SIGINT: stop accepting (the broker keeps the listening socket,
 * so queued connections wait for the next worker), close every channel,
 * exit 0.  Any start-up failure exits 2, which the broker does not respawn
 * (STYLE §4, nginx's convention).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "conn.h"
#include "fanout.h"
#include "pki.h"
#include "proto/codec.h"
#include "proto/version.h"
#include "session.h"
#include "sub.h"
#include "shm/layout.h"
#include "shm/log.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "shm/segment.h"
#include "shm/throttle.h"
#include "shm/value.h"
#include "worker.h"

#define WK_EXIT_NO_RESPAWN 2
#define WK_READY_WAIT_MS   10000    /* the broker builds before forking */
#define WK_BROKER_PID_ENV  "UABROKER_PID"

struct wk_main {
    struct wk_worker w;
    struct wk_conns  cs;
    struct wk_fanout fo;
    struct wk_pki    pki;
    struct event     sigterm;
    struct event     sigint;
};

static void wk_main_usage(const char *prog);
static int wk_main_num(const char *s, long max, long *out);
static int wk_main_args(int argc, char **argv, long *slot, long *segfd,
                        long *lfd);
static int wk_main_parent(unsigned slot);
static int wk_main_attach(struct wk_worker *w, int segfd, unsigned slot);
static int32_t wk_main_i32(uint32_t v);
static void wk_main_limits(struct wk_worker *w);
static void wk_main_on_signal(evutil_socket_t fd, short what, void *arg);

static void
wk_main_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s --slot N --segment-fd FD --listen-fd FD\n"
            "%s (%s %s) is started by uabroker only; run uabroker instead\n",
            prog, prog, UA_PRODUCT_NAME, UA_VERSION);
}

/* A decimal number in [0, max]: 0, or -1. */
static int
wk_main_num(const char *s, long max, long *out)
{
    char *end;
    long  v;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Exactly the three options, each once, in any order.  0 or -1. */
static int
wk_main_args(int argc, char **argv, long *slot, long *segfd, long *lfd)
{
    int seen = 0;

    if (argc != 7)
        return -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *o = argv[i];
        long       *dst;
        long        max;
        int         bit;

        if (strcmp(o, "--slot") == 0) {
            dst = slot, max = SHM_WORKERS_MAX - 1, bit = 1;
        } else if (strcmp(o, "--segment-fd") == 0) {
            dst = segfd, max = INT_MAX, bit = 2;
        } else if (strcmp(o, "--listen-fd") == 0) {
            dst = lfd, max = INT_MAX, bit = 4;
        } else {
            return -1;
        }
        if ((seen & bit) || wk_main_num(argv[i + 1], max, dst) != 0)
            return -1;
        seen |= bit;
    }
    return seen == 7 ? 0 : -1;
}

/*
 * Die with the broker (PR_SET_PDEATHSIG), and make sure it has not died
 * already: the broker passes its pid in UABROKER_PID.
 */
static int
wk_main_parent(unsigned slot)
{
    const char *env = getenv(WK_BROKER_PID_ENV);
    pid_t       ppid;
    long        want;

    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1) {
        fprintf(stderr, "uaworker %u: prctl(PR_SET_PDEATHSIG) failed: %s\n",
                slot, strerror(errno));
        return -1;
    }
    ppid = getppid();
    if (env != NULL && wk_main_num(env, INT_MAX, &want) == 0) {
        if (ppid != (pid_t)want) {
            fprintf(stderr, "uaworker %u: parent %d is not the broker %ld\n",
                    slot, (int)ppid, want);
            return -1;
        }
    } else if (ppid == 1) {
        fprintf(stderr, "uaworker %u: the broker is gone\n", slot);
        return -1;
    }
    return 0;
}

/* Attach the segment and bind the worker's views of it.  0 or -1. */
static int
wk_main_attach(struct wk_worker *w, int segfd, unsigned slot)
{
    struct timespec nap = { 0, 10 * 1000 * 1000 };
    int             rc;

    rc = shm_plan_attach(&w->seg, segfd, 1);
    if (rc != 0) {
        fprintf(stderr, "uaworker %u: shared memory (fd %d): %s\n", slot,
                segfd, rc == -EPROTO ? "unknown segment layout"
                                     : strerror(-rc));
        return -1;
    }
    /* The address space is complete before the broker forks; the wait
     * only covers a broker that someday forks earlier. */
    for (int i = 0; (rc = shm_nodestore_open(&w->ns, &w->seg)) == -EAGAIN;
         i++) {
        if (i * 10 >= WK_READY_WAIT_MS) {
            fprintf(stderr, "uaworker %u: address space never became "
                    "ready\n", slot);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    if (rc != 0 || shm_values_open(&w->vals, &w->seg) != 0) {
        fprintf(stderr, "uaworker %u: shared memory: bad node store\n", slot);
        return -1;
    }
    w->conf = shm_segment_region(&w->seg, SHM_R_CONFIG);
    w->row = (struct shm_worker *)shm_segment_region(&w->seg, SHM_R_WORKERS)
             + slot;
    w->budget = shm_limits_of(&w->seg);
    w->throttle = shm_throttle_of(&w->seg);
    if (w->conf->workers != 0 && slot >= w->conf->workers) {
        fprintf(stderr, "uaworker %u: slot beyond the %u workers\n", slot,
                w->conf->workers);
        return -1;
    }
    if (w->conf->receive_buffer_size < UA_TCP_MIN_BUFFER
        || w->conf->max_secure_channels == 0 || w->conf->max_sessions == 0) {
        fprintf(stderr, "uaworker %u: configuration snapshot out of "
                "bounds\n", slot);
        return -1;
    }
    return 0;
}

static int32_t
wk_main_i32(uint32_t v)
{
    return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* Decoding and channel limits from the broker's snapshot. */
static void
wk_main_limits(struct wk_worker *w)
{
    const struct shm_config *c = w->conf;

    w->limits.max_string_len = wk_main_i32(c->max_string_length);
    w->limits.max_bytestring_len = wk_main_i32(c->max_bytestring_length);
    w->limits.max_array_len = wk_main_i32(c->max_array_length);
    w->limits.max_depth = UA_NESTING_MAX;
    w->limits.max_message_size = c->max_message_size;
    w->sc_conf.recv_buffer = c->receive_buffer_size;
    w->sc_conf.send_buffer = c->receive_buffer_size;
    w->sc_conf.max_message = c->max_message_size;
    w->sc_conf.max_chunks = c->max_chunk_count;
    w->sc_conf.min_lifetime_ms = c->min_token_lifetime_ms;
    w->sc_conf.max_lifetime_ms = c->max_token_lifetime_ms;
    w->sc_conf.limits = w->limits;
    w->sc_conf.now_dt = &w->now_dt;
}

static void
wk_main_on_signal(evutil_socket_t fd, short what, void *arg)
{
    struct wk_main *m = arg;

    (void)what;
    if (m->w.stopping)
        return;
    m->w.stopping = 1;
    fprintf(stderr, "uaworker %u: signal %d, stopping\n", m->w.slot,
            (int)fd);
    wk_conn_stop_accepting(&m->cs);
    wk_conn_close_all(&m->cs);
    event_base_loopbreak(m->w.base);
}

int
main(int argc, char **argv)
{
    static struct wk_main m;
    struct wk_worker     *w = &m.w;
    struct sigaction      sa;
    const char           *prog = argc > 0 ? argv[0] : "uaworker";
    long                  slot, segfd, lfd;
    int                   rc, exit_code = WK_EXIT_NO_RESPAWN;

    if (wk_main_args(argc, argv, &slot, &segfd, &lfd) != 0) {
        wk_main_usage(prog);
        return WK_EXIT_NO_RESPAWN;
    }
    w->slot = (unsigned)slot;
    w->seg.fd = -1;
    {
        char ident[SHM_LOG_IDENT_MAX];

        snprintf(ident, sizeof(ident), "uaworker %u", w->slot);
        shm_log_open(ident, 2);
    }
    if (wk_main_parent(w->slot) != 0)
        return WK_EXIT_NO_RESPAWN;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    if (wk_main_attach(w, (int)segfd, w->slot) != 0)
        goto out;
    /* The broker's log.level, live (SIGHUP changes it for us too). */
    shm_log_level_at(&w->conf->log_level);
    wk_main_limits(w);
    wk_clock_update(w);
    if (wk_pki_init(&m.pki, w) != 0)
        goto out_seg;
    rc = wk_session_init(w);
    if (rc != 0) {
        fprintf(stderr, "uaworker %u: sessions: %s\n", w->slot,
                strerror(-rc));
        goto out_seg;
    }
    rc = wk_svc_browse_cache_init(w);
    if (rc != 0) {
        fprintf(stderr, "uaworker %u: browse cache: %s\n", w->slot,
                strerror(-rc));
        goto out_sessions;
    }
    w->base = event_base_new();
    if (w->base == NULL) {
        fprintf(stderr, "uaworker %u: event_base_new() failed\n", w->slot);
        goto out_sessions;
    }
    rc = wk_conn_init(&m.cs, w, (int)lfd);
    if (rc != 0) {
        fprintf(stderr, "uaworker %u: listener (fd %ld): %s\n", w->slot, lfd,
                strerror(-rc));
        goto out_base;
    }
    rc = wk_fanout_init(&m.fo, w, &m.cs);
    if (rc != 0) {
        fprintf(stderr, "uaworker %u: fan-out (rings, doorbell): %s\n",
                w->slot, strerror(-rc));
        goto out_conn;
    }
    /* Subscription pools now, not at the first CreateSubscription: the
     * allocation happens at start-up and a dead predecessor's interest
     * bits are cleared before the first value arrives. */
    rc = wk_sub_init(w);
    if (rc != 0) {
        fprintf(stderr, "uaworker %u: subscription pools: %s\n", w->slot,
                strerror(-rc));
        goto out_conn;
    }
    evsignal_assign(&m.sigterm, w->base, SIGTERM, wk_main_on_signal, &m);
    evsignal_assign(&m.sigint, w->base, SIGINT, wk_main_on_signal, &m);
    if (event_add(&m.sigterm, NULL) != 0 || event_add(&m.sigint, NULL) != 0) {
        fprintf(stderr, "uaworker %u: evsignal failed\n", w->slot);
        goto out_conn;
    }

    wk_clock_update(w);
    atomic_store_explicit(&w->row->started, w->now_dt, memory_order_relaxed);
    atomic_store_explicit(&w->row->heartbeat, w->now_dt,
                          memory_order_relaxed);
    /* Serving; pairs with the broker's acquire load in its stats. */
    atomic_store_explicit(&w->row->state, SHM_WS_UP, memory_order_release);

    if (wk_conn_loop(&m.cs) != 0)
        fprintf(stderr, "uaworker %u: event_base_loop() failed\n",
                w->slot);
    else
        exit_code = 0;

    event_del(&m.sigterm);
    event_del(&m.sigint);
out_conn:
    wk_fanout_clear(&m.fo);
    wk_conn_clear(&m.cs);
out_base:
    event_base_free(w->base);
    w->base = NULL;
out_sessions:
    wk_svc_browse_cache_fini(w);
    wk_session_fini(w);
out_seg:
    wk_pki_fini(&m.pki);
    shm_log_level_at(NULL);
    shm_segment_close(&w->seg);
out:
    return exit_code;
}
