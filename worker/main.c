/*
 * worker/main.c: uaworker, one worker process (docs/architecture.md §1).
 *
 *   uaworker --slot N --segment-fd FD --listen-fd FD
 *
 * Started by uabroker only (vfork + exec), which passes the worker's slot,
 * the shared-memory segment fd and the slot's listening socket.  Start-up:
 * PR_SET_PDEATHSIG and a check that the parent is still the broker; attach
 * the segment; wait until the address space is ready; take the
 * configuration snapshot and this slot's row; create the event_base (after
 * exec: libevent state never crosses a fork); create every layer, lowest
 * first, and wire the handlers through which a lower layer calls up
 * (worker/LAYERS, docs/architecture.md §5.3); mark the row UP; run (the
 * loop's first iteration opens the history store when the historian made
 * it already, wk_svc_history_warm; the block pool is mapped a second
 * later, worker/link.c).
 *
 *   net  -> svc   the request handler (wk_svc_dispatch); a held request
 *                 done or its connection gone -> its login
 *                 (wk_login_release); a channel closed -> its sessions
 *                 (wk_session_channel_closed); may a channel be purged
 *                 (wk_session_on_channel); once a second -> session
 *                 timeouts (wk_session_expire)
 *   link -> svc   reply records: Write results, Call results (registered
 *                 by wk_svc_write_init, wk_svc_call_init)
 *   link -> sub   notification records (registered by wk_sub_init)
 *   svc  <- sub   the subscription services, the Server's local methods,
 *                 the CloseSession listener (wk_svc_sub_init)
 *   core <- sub   a moving session's subscriptions (wk_sub_roam_init)
 *   svc  <- sub   HistoryRead's ReadEventDetails, with the event items'
 *                 EventFilter (wk_svc_histevent_init)
 *   net  -> core  claims and hand-overs between workers (wk_roam_init
 *                 registers with the transport, worker/xfer.h)
 *
 * SIGTERM / SIGINT: stop accepting (the broker keeps the listening socket,
 * so queued connections wait for the next worker), close every channel,
 * exit 0.  SIGUSR2 (a rolling restart, the broker's restart-workers):
 * the same, but first every activated session goes to another worker
 * (wk_roam_retire), where its client's reconnect finds it.  Any start-up failure exits 2, which the broker does not respawn
 * (docs/style.md §4, nginx's convention).
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
#include "histarchive.h"
#include "link.h"
#include "listen.h"
#include "login.h"
#include "loop.h"
#include "pki.h"
#include "proto/codec.h"
#include "proto/version.h"
#include "park.h"
#include "roam.h"
#include "session.h"
#include "shm/layout.h"
#include "shm/log.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "shm/segment.h"
#include "shm/throttle.h"
#include "shm/value.h"
#include "sub.h"
#include "svc.h"
#include "svc_browse.h"
#include "svc_call.h"
#include "svc_discovery.h"
#include "svc_histupd.h"
#include "svc_histevent.h"
#include "svc_history.h"
#include "svc_read.h"
#include "svc_session.h"
#include "svc_sub.h"
#include "svc_write.h"
#include "worker.h"

#define WK_EXIT_NO_RESPAWN 2
#define WK_READY_WAIT_MS   10000    /* the broker builds before forking */
#define WK_BROKER_PID_ENV  "UABROKER_PID"

struct wk_main {
    struct wk_worker w;
    struct wk_loop   loop;
    struct wk_conns  cs;
    struct wk_listen ls;
    struct wk_link   link;
    struct wk_pki    pki;
    struct wk_writes writes;
    struct wk_calls  calls;
    struct event     sigterm;
    struct event     sigint;
    struct event     sigusr2;
};

static void wk_main_usage(const char *prog);
static int wk_main_num(const char *s, long max, long *out);
static int wk_main_args(int argc, char **argv, long *slot, long *segfd,
                        long *lfd);
static int wk_main_parent(void);
static int wk_main_attach(struct wk_worker *w, int segfd, unsigned slot);
static int32_t wk_main_i32(uint32_t v);
static void wk_main_limits(struct wk_worker *w);
static ua_status wk_main_request(void *arg, struct ua_sc *ch,
                                 const struct wk_conn_req *rq,
                                 const struct ua_sc_msg *msg,
                                 struct ua_arena *a,
                                 struct wk_conn_result *res);
static void wk_main_held_done(void *arg, uint32_t conn);
static void wk_main_closed(void *arg, uint32_t channel_id);
static bool wk_main_busy(void *arg, uint32_t channel_id);
static void wk_main_second(void *arg);
static int wk_main_layers(struct wk_main *m, int lfd);
static void wk_main_clear(struct wk_main *m);
static void wk_main_on_signal(evutil_socket_t fd, short what, void *arg);
static void wk_main_on_retire(evutil_socket_t fd, short what, void *arg);
static void wk_main_retired(void *arg);
static void wk_main_on_warm(evutil_socket_t fd, short what, void *arg);

/* Said to whoever runs uaworker by hand (the log is not open yet). */
static void
wk_main_usage(const char *prog)
{
    shm_log(SHM_LOG_ERROR, "usage: %s --slot N --segment-fd FD --listen-fd FD",
            prog);
    shm_log(SHM_LOG_ERROR, "%s (%s %s) is started by uabroker only; run "
            "uabroker instead", prog, UA_PRODUCT_NAME, UA_VERSION);
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
wk_main_parent(void)
{
    const char *env = getenv(WK_BROKER_PID_ENV);
    pid_t       ppid;
    long        want;

    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1) {
        shm_log(SHM_LOG_ERROR, "prctl(PR_SET_PDEATHSIG) failed: %s",
                strerror(errno));
        return -1;
    }
    ppid = getppid();
    if (env != NULL && wk_main_num(env, INT_MAX, &want) == 0) {
        if (ppid != (pid_t)want) {
            shm_log(SHM_LOG_ERROR, "parent %d is not the broker %ld",
                    (int)ppid, want);
            return -1;
        }
    } else if (ppid == 1) {
        shm_log(SHM_LOG_ERROR, "the broker is gone");
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
        shm_log(SHM_LOG_ERROR, "shared memory (fd %d): %s", segfd,
                rc == -EPROTO ? "unknown segment layout" : strerror(-rc));
        return -1;
    }
    /* The address space is complete before the broker forks; the wait
     * only covers a broker that someday forks earlier. */
    for (int i = 0; (rc = shm_nodestore_open(&w->ns, &w->seg)) == -EAGAIN;
         i++) {
        if (i * 10 >= WK_READY_WAIT_MS) {
            shm_log(SHM_LOG_ERROR, "address space never became ready");
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    if (rc != 0 || shm_values_open(&w->vals, &w->seg) != 0) {
        shm_log(SHM_LOG_ERROR, "shared memory: bad node store");
        return -1;
    }
    w->conf = shm_segment_region(&w->seg, SHM_R_CONFIG);
    w->row = (struct shm_worker *)shm_segment_region(&w->seg, SHM_R_WORKERS)
             + slot;
    w->budget = shm_limits_of(&w->seg);
    w->throttle = shm_throttle_of(&w->seg);
    if (w->conf->workers != 0 && slot >= w->conf->workers) {
        shm_log(SHM_LOG_ERROR, "slot beyond the %u workers",
                w->conf->workers);
        return -1;
    }
    if (w->conf->receive_buffer_size < UA_TCP_MIN_BUFFER
        || w->conf->max_secure_channels == 0 || w->conf->max_sessions == 0) {
        shm_log(SHM_LOG_ERROR, "configuration snapshot out of bounds");
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

/* ------------------------------------------------ the handlers (net) */

/* The connection layer's request handler: the dispatcher. */
static ua_status
wk_main_request(void *arg, struct ua_sc *ch, const struct wk_conn_req *rq,
                const struct ua_sc_msg *msg, struct ua_arena *a,
                struct wk_conn_result *res)
{
    return wk_svc_dispatch(arg, ch, rq, msg, a, res);
}

/* A held request is done, or its connection goes: its login goes. */
static void
wk_main_held_done(void *arg, uint32_t conn)
{
    wk_login_release(arg, conn);
    wk_roam_release(arg, conn);
}

/* A channel closed: its sessions are unbound (or closed). */
static void
wk_main_closed(void *arg, uint32_t channel_id)
{
    wk_session_channel_closed(arg, channel_id);
}

/* A channel that carries a session is never purged. */
static bool
wk_main_busy(void *arg, uint32_t channel_id)
{
    return wk_session_on_channel(arg, channel_id);
}

/* Once a second: session timeouts. */
static void
wk_main_second(void *arg)
{
    struct wk_worker *w = arg;

    wk_session_expire(w, w->now_ms);
}

/* ------------------------------------------------ start-up */

/*
 * Every layer above the sessions, lowest first, then the registrations
 * that go up.  0, or -1 with the failure logged (the worker exits 2).
 */
static int
wk_main_layers(struct wk_main *m, int lfd)
{
    struct wk_worker             *w = &m->w;
    const struct wk_conn_handlers h = {
        .request = wk_main_request,
        .held_done = wk_main_held_done,
        .closed = wk_main_closed,
        .busy = wk_main_busy,
        .arg = w,
    };
    const char                   *what;
    int                           rc;

    /* net */
    what = "loop";
    rc = wk_loop_init(&m->loop, w);
    if (rc == 0) {
        what = "connections";
        rc = wk_conn_init(&m->cs, w, &m->loop, &h);
    }
    if (rc == 0) {
        what = "listener";
        rc = wk_listen_init(&m->ls, w, &m->cs, &m->loop, lfd);
    }
    if (rc == 0) {
        what = "loop";
        rc = wk_loop_on_second(&m->loop, wk_main_second, w);
    }
    /* link */
    if (rc == 0) {
        what = "fan-out (rings, doorbell)";
        rc = wk_link_init(&m->link, w, &m->loop);
    }
    /* core (the sessions and the PKI came first: the channels need the
     * keys): a login per connection */
    if (rc == 0) {
        what = "logins";
        rc = wk_login_init(w, w->conf->max_secure_channels);
    }
    /* core: sessions kept for a successor (before the sub layer: its
     * pools leave a dead predecessor's interest bits to the park). */
    if (rc == 0) {
        what = "park";
        rc = wk_park_init(w, &m->loop);
    }
    /* core: sessions that move between workers (none with one worker;
     * without the transport the worker runs on, its sessions stay). */
    if (rc == 0 && w->conf->workers > 1) {
        int rr = wk_roam_init(w, &m->loop);

        if (rr != 0)
            shm_log(SHM_LOG_WARNING, "sessions cannot move: %s",
                    strerror(-rr));
    }
    /* svc */
    if (rc == 0) {
        what = "services";
        rc = wk_svc_init(w);
    }
    if (rc == 0)
        rc = wk_svc_discovery_init(w);
    if (rc == 0)
        rc = wk_svc_session_init(w);
    if (rc == 0)
        rc = wk_svc_read_init(w);
    if (rc == 0) {
        what = "history";
        rc = wk_svc_history_init(w);
        if (rc == 0)
            wk_histarchive_init(w);
        if (rc == 0)
            rc = wk_svc_histupd_init(w);
    }
    if (rc == 0) {
        what = "browse cache";
        rc = wk_svc_browse_init(w);
    }
    if (rc == 0) {
        what = "pending writes";
        rc = wk_svc_write_init(&m->writes, w, w->conf->pending_writes);
        if (rc == 0)
            w->writes = &m->writes;
    }
    if (rc == 0) {
        what = "pending calls";
        rc = wk_svc_call_init(&m->calls, w, w->conf->pending_calls,
                              w->conf->max_call_bytes,
                              wk_link_on(w->link) ? m->link.out.cap : 65536);
        if (rc == 0)
            w->calls = &m->calls;
    }
    /* sub: the pools now, not at the first CreateSubscription: the
     * allocation happens at start-up and a dead predecessor's interest
     * bits are cleared before the first value arrives. */
    if (rc == 0) {
        what = "subscription pools";
        rc = wk_sub_init(w);
    }
    if (rc == 0) {
        what = "subscription services";
        rc = wk_svc_sub_init(w);
    }
    if (rc == 0) {
        what = "moving subscriptions";
        rc = wk_sub_roam_init(w);
    }
    if (rc == 0) {
        what = "event history";
        rc = wk_svc_histevent_init(w);
    }
    /* A dead predecessor's sessions, before anybody is served. */
    if (rc == 0)
        (void)wk_park_inherit(w);
    if (rc != 0) {
        shm_log(SHM_LOG_ERROR, "%s: %s", what, strerror(-rc));
        return -1;
    }
    return 0;
}

/* Every layer, highest first. */
static void
wk_main_clear(struct wk_main *m)
{
    struct wk_worker *w = &m->w;

    wk_svc_histevent_fini(w);
    wk_sub_fini(w);
    wk_svc_call_clear(&m->calls);
    wk_svc_write_clear(&m->writes);
    wk_svc_browse_fini(w);
    wk_svc_histupd_fini(w);
    wk_svc_history_fini(w);
    wk_svc_fini(w);
    wk_login_fini(w);
    wk_roam_fini(w);
    wk_park_fini(w);
    wk_link_clear(&m->link);
    wk_listen_stop(&m->ls);
    wk_conn_clear(&m->cs);
    wk_loop_clear(&m->loop);
}

static void
wk_main_on_signal(evutil_socket_t fd, short what, void *arg)
{
    struct wk_main *m = arg;

    (void)what;
    if (m->w.stopping)
        return;
    m->w.stopping = 1;
    shm_log(SHM_LOG_NOTICE, "signal %d, stopping", (int)fd);
    wk_listen_stop(&m->ls);
    wk_conn_close_all(&m->cs);
    event_base_loopbreak(m->w.base);
}

/* The loop's first iteration: what the first requests would otherwise
 * do, done while no client waits yet (the history store opened). */
static void
wk_main_on_warm(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wk_svc_history_warm(arg);
}

/* SIGUSR2: retire (sessions to peers), then stop as for SIGTERM. */
static void
wk_main_on_retire(evutil_socket_t fd, short what, void *arg)
{
    struct wk_main *m = arg;

    (void)fd;
    (void)what;
    if (m->w.stopping || m->w.retiring)
        return;
    m->w.retiring = 1;
    shm_log(SHM_LOG_NOTICE, "retiring: handing the sessions over");
    wk_listen_stop(&m->ls);
    wk_conn_close_all(&m->cs);
    if (wk_roam_retire(&m->w, wk_main_retired, m) != 0)
        wk_main_retired(m);
}

static void
wk_main_retired(void *arg)
{
    struct wk_main *m = arg;

    m->w.stopping = 1;
    event_base_loopbreak(m->w.base);
}

int
main(int argc, char **argv)
{
    static struct wk_main m;
    struct wk_worker     *w = &m.w;
    struct sigaction      sa;
    const char           *prog = argc > 0 ? argv[0] : "uaworker";
    char                  ident[SHM_LOG_IDENT_MAX];
    long                  slot, segfd, lfd;
    int                   rc, exit_code = WK_EXIT_NO_RESPAWN;

    if (wk_main_args(argc, argv, &slot, &segfd, &lfd) != 0) {
        wk_main_usage(prog);
        return WK_EXIT_NO_RESPAWN;
    }
    w->slot = (unsigned)slot;
    w->seg.fd = -1;
    snprintf(ident, sizeof(ident), "uaworker %u", w->slot);
    shm_log_open(ident, 2);
    if (wk_main_parent() != 0)
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
        shm_log(SHM_LOG_ERROR, "sessions: %s", strerror(-rc));
        goto out_seg;
    }
    w->base = event_base_new();
    if (w->base == NULL) {
        shm_log(SHM_LOG_ERROR, "event_base_new() failed");
        goto out_sessions;
    }
    if (wk_main_layers(&m, (int)lfd) != 0)
        goto out_layers;
    evsignal_assign(&m.sigterm, w->base, SIGTERM, wk_main_on_signal, &m);
    evsignal_assign(&m.sigint, w->base, SIGINT, wk_main_on_signal, &m);
    evsignal_assign(&m.sigusr2, w->base, SIGUSR2, wk_main_on_retire, &m);
    if (event_add(&m.sigterm, NULL) != 0 || event_add(&m.sigint, NULL) != 0
        || event_add(&m.sigusr2, NULL) != 0) {
        shm_log(SHM_LOG_ERROR, "evsignal failed");
        goto out_layers;
    }

    wk_clock_update(w);
    atomic_store_explicit(&w->row->started, w->now_dt, memory_order_relaxed);
    atomic_store_explicit(&w->row->heartbeat, w->now_dt,
                          memory_order_relaxed);
    /* Serving; pairs with the broker's acquire load in its stats. */
    atomic_store_explicit(&w->row->state, SHM_WS_UP, memory_order_release);
    {
        const struct timeval now = { 0, 0 };

        (void)event_base_once(w->base, -1, EV_TIMEOUT, wk_main_on_warm, w,
                              &now);
    }

    if (wk_loop_run(&m.loop) != 0)
        shm_log(SHM_LOG_ERROR, "event_base_loop() failed");
    else
        exit_code = 0;

    event_del(&m.sigterm);
    event_del(&m.sigint);
    event_del(&m.sigusr2);
out_layers:
    wk_main_clear(&m);
    event_base_free(w->base);
    w->base = NULL;
out_sessions:
    wk_session_fini(w);
out_seg:
    wk_pki_fini(&m.pki);
    shm_log_level_at(NULL);
    shm_segment_close(&w->seg);
out:
    return exit_code;
}
