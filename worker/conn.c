/*
 * worker/conn.c: listener, connection pool, reads, framing, dispatch and
 * the once-per-iteration flush (see conn.h for the picture).
 *
 * Invariants:
 *   - A used connection is on the age list (oldest first) exactly once; it
 *     is on the dirty list iff WK_CONN_DIRTY, on the closing list iff
 *     WK_CONN_CLOSING.  A closing connection is never processed again and
 *     is freed only by the tick (or by a purge, outside its callbacks).
 *   - c->in != NULL iff c->in_len > 0; c->out != NULL iff output is pending
 *     or a chunk is being processed into it.  An idle connection holds
 *     neither.
 *   - Every callback starts with wk_conn_iteration(): the clock is read at
 *     most once per loop iteration, and the tick is active whenever a
 *     callback ran, so nothing dirty or closing outlives its iteration.
 *
 * Counters: this worker is the only writer of its row (W: this worker), so
 * a counter is a relaxed load and a relaxed store, never a locked add.
 */
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/throttle.h"
#include "session.h"
#include "svc.h"

#define WK_CONN_ACCEPT_BATCH  64            /* accepts per listener event */
#define WK_CONN_ARENA_BLOCK   (256u << 10)  /* request arena blocks */
#define WK_CONN_ERR_ROOM      256           /* an ERR with a short reason */
#define WK_CONN_DRAIN_MAX     4             /* reads to drain before close */
#define WK_CONN_ASM_HDR       16            /* size header of asm buffers */

/* Table of contents. */
static inline void wk_conn_stat_add(_Atomic uint64_t *p, uint64_t n);
static inline void wk_conn_stat_sub(_Atomic uint64_t *p, uint64_t n);
static inline uint64_t wk_conn_ns(void);
static unsigned wk_conn_bucket(uint64_t us);
static void wk_conn_iteration(struct wk_conns *cs);
static void wk_conn_iteration_end(struct wk_conns *cs);
static uint64_t wk_conn_cpu_us(void);
static void wk_conn_rsa_cpu(struct wk_conns *cs, uint64_t cpu0,
                            uint64_t ops0);
static bool wk_conn_may_sign(const struct ua_sc_msg *msg);
static void wk_conn_on_accept(evutil_socket_t fd, short what, void *arg);
static void wk_conn_refuse(int fd, ua_status st, const char *reason);
static uint64_t wk_conn_peer_tag(struct wk_conns *cs,
                                 const struct sockaddr_storage *ss,
                                 enum shm_throttle_key_kind kind);
static bool wk_conn_admit(struct wk_conns *cs, int fd, uint64_t tag);
static bool wk_conn_security_failure(ua_status st);
static void wk_conn_opn_failed(struct wk_conn *c, ua_status st);
static struct wk_conn *wk_conn_get(struct wk_conns *cs);
static bool wk_conn_has_session(struct wk_conns *cs, const struct wk_conn *c);
static void wk_conn_open(struct wk_conns *cs, struct wk_conn *c, int fd);
static void wk_conn_on_read(evutil_socket_t fd, short what, void *arg);
static void wk_conn_on_write(evutil_socket_t fd, short what, void *arg);
static void wk_conn_input(struct wk_conn *c, uint8_t *buf, size_t len,
                          bool own);
static int wk_conn_room(struct wk_conn *c);
static int wk_conn_hold(struct wk_conn *c, const uint8_t *p, size_t n);
static int wk_conn_chunk(struct wk_conn *c, const uint8_t *p, size_t n,
                         struct ua_sc_msg *msg);
static int wk_conn_sc_result(struct wk_conn *c, size_t out_len,
                             ua_status st);
static void wk_conn_step_later(struct wk_conn *c);
static void wk_conn_on_step(evutil_socket_t fd, short what, void *arg);
static void wk_conn_step(struct wk_conn *c);
static int wk_conn_request(struct wk_conn *c, const struct ua_sc_msg *msg);
static ua_status wk_conn_send(struct wk_conn *c, uint32_t request_id,
                              const struct ua_type *t, const void *resp);
static int wk_conn_out_grow(struct wk_conn *c, size_t need);
static void wk_conn_dirty(struct wk_conn *c);
static void wk_conn_undirty(struct wk_conn *c);
static void wk_conn_pause(struct wk_conn *c);
static int wk_conn_write(struct wk_conn *c);
static void wk_conn_drained(struct wk_conn *c);
static void wk_conn_fail(struct wk_conn *c, ua_status st);
static void wk_conn_close_later(struct wk_conn *c);
static void wk_conn_release(struct wk_conn *c);
static void wk_conn_on_tick(evutil_socket_t fd, short what, void *arg);
static void wk_conn_flush(struct wk_conns *cs);
static void wk_conn_on_timer(evutil_socket_t fd, short what, void *arg);
static uint8_t *wk_conn_buf_get(struct wk_conns *cs, bool out);
static void wk_conn_buf_put(struct wk_conns *cs, uint8_t *b, bool out);
static void wk_conn_out_put(struct wk_conn *c);
static void *wk_conn_asm_alloc(void *ctx, size_t n);
static void wk_conn_asm_free(void *ctx, void *p);
static void *wk_conn_arena_grow(void *ctx, size_t min, size_t *size);
static void wk_conn_arena_release(void *ctx, void *block);
static void wk_conn_count(struct wk_conns *cs, unsigned stat, uint64_t t0,
                          ua_status service_result);

/* ------------------------------------------------------------ helpers */

static inline void
wk_conn_stat_add(_Atomic uint64_t *p, uint64_t n)
{
    /* Single writer (this worker); the broker reads relaxed. */
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

static inline void
wk_conn_stat_sub(_Atomic uint64_t *p, uint64_t n)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed)
                             - n, memory_order_relaxed);
}

/* Nanoseconds for per-request latency (vDSO, no syscall). */
static inline uint64_t
wk_conn_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Bucket b holds [2^b, 2^(b+1)) µs; 0 and 1 µs share bucket 0. */
static unsigned
wk_conn_bucket(uint64_t us)
{
    unsigned b = 0;

    while (us > 1 && b < SHM_LAT_BUCKETS - 1) {
        us >>= 1;
        b++;
    }
    return b;
}

/*
 * Called first by every callback: read the clock once per loop iteration
 * and make sure the tick (flush + reap) runs at the end of it.  The tick is
 * activated after the callbacks epoll reported this iteration, so it runs
 * after all of them.
 */
static void
wk_conn_iteration(struct wk_conns *cs)
{
    if (cs->tick_pending)
        return;
    cs->tick_pending = true;
    wk_clock_update(cs->w);
    cs->iter_t0 = cs->w->now_ns;
    cs->iter_ops = ua_crypto_private_ops();
    cs->iter_stepped = false;
    event_active(&cs->tick, EV_TIMEOUT, 1);
}

/*
 * The end of a loop iteration (the tick): its busy time, from the first
 * callback to the flush, goes to the row's loop_iterations histogram and
 * loop_stall_max_us (the longest so far: a request that arrived meanwhile
 * waited that long to be read, a response that long to leave, DESIGN §4);
 * the RSA private-key operations it did to rsa_private_ops and
 * loop_rsa_ops_max (1 at most, by design: RSA work runs only in steps).
 * One clock read per iteration.
 */
static void
wk_conn_iteration_end(struct wk_conns *cs)
{
    struct shm_worker *row = cs->w->row;
    uint64_t           us = (wk_conn_ns() - cs->iter_t0) / 1000;
    uint64_t           ops = ua_crypto_private_ops();

    wk_conn_stat_add(&row->loop_iterations[wk_conn_bucket(us)], 1);
    wk_conn_stat_add(&row->loop_busy_us, us);
    if (us > cs->stall_max_us) {
        cs->stall_max_us = us;
        atomic_store_explicit(&row->loop_stall_max_us, us,
                              memory_order_relaxed);
    }
    if (ops != cs->ops_seen) {
        cs->ops_seen = ops;
        atomic_store_explicit(&row->rsa_private_ops, ops,
                              memory_order_relaxed);
        atomic_store_explicit(&row->rsa_cpu_us,
                              ua_crypto_rsa_cpu_ns() / 1000u,
                              memory_order_relaxed);
        if (ops - cs->iter_ops > cs->iter_ops_max) {
            cs->iter_ops_max = ops - cs->iter_ops;
            atomic_store_explicit(&row->loop_rsa_ops_max, cs->iter_ops_max,
                                  memory_order_relaxed);
        }
    }
}

/* This thread's CPU time in µs: a syscall, so only around RSA work. */
static uint64_t
wk_conn_cpu_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * After a step (an OPN chunk or stage, CreateSession, ActivateSession: RSA
 * work or a slice of a password hash) begun at CPU time cpu0 with ops0
 * private-key operations done: its CPU time feeds loop_rsa_cpu_max_us;
 * if it did any private-key operation the row's rsa_private_ops is
 * brought up to date.
 * CPU time, not wall time: preemption on a busy host does not count, so
 * this shows what the code makes the loop wait (DESIGN §4).
 */
static void
wk_conn_rsa_cpu(struct wk_conns *cs, uint64_t cpu0, uint64_t ops0)
{
    uint64_t us;

    /* Published before the reply leaves (the tick would do it after);
     * the public-key operations of a step with none are published with
     * the next one that has one. */
    if (ua_crypto_private_ops() != ops0) {
        atomic_store_explicit(&cs->w->row->rsa_private_ops,
                              ua_crypto_private_ops(), memory_order_relaxed);
        atomic_store_explicit(&cs->w->row->rsa_cpu_us,
                              ua_crypto_rsa_cpu_ns() / 1000u,
                              memory_order_relaxed);
    }
    us = wk_conn_cpu_us() - cpu0;
    if (us > cs->rsa_cpu_max_us) {
        cs->rsa_cpu_max_us = us;
        atomic_store_explicit(&cs->w->row->loop_rsa_cpu_max_us, us,
                              memory_order_relaxed);
    }
}

/*
 * CreateSession or ActivateSession, the requests that sign or decrypt:
 * the type NodeId of the encoding in its four-byte or full numeric form
 * (dispatch takes either; the two-byte form cannot hold either id).
 */
static bool
wk_conn_may_sign(const struct ua_sc_msg *msg)
{
    const uint8_t *b = msg->body;
    uint32_t       id;

    if (msg->len >= 4 && b[0] == 0x01 && b[1] == 0)
        id = (uint32_t)b[2] | (uint32_t)b[3] << 8;
    else if (msg->len >= 7 && b[0] == 0x02 && b[1] == 0 && b[2] == 0)
        id = (uint32_t)b[3] | (uint32_t)b[4] << 8 | (uint32_t)b[5] << 16
             | (uint32_t)b[6] << 24;
    else
        return false;
    return id == UA_NS0ID_CREATESESSIONREQUEST_ENCODING_DEFAULTBINARY
           || id == UA_NS0ID_ACTIVATESESSIONREQUEST_ENCODING_DEFAULTBINARY;
}

/* ------------------------------------------------------------ init */

int
wk_conn_init(struct wk_conns *cs, struct wk_worker *w, int listen_fd)
{
    const struct shm_config *conf = w->conf;
    struct timeval           one = { 1, 0 };
    uint32_t                 n = conf->max_secure_channels;

    memset(cs, 0, sizeof(*cs));
    cs->w = w;
    w->conns = cs;
    cs->listen_fd = listen_fd;
    if (n == 0)
        return -EINVAL;
    if (evutil_make_socket_nonblocking(listen_fd) != 0)
        return -errno;
    cs->in_cap = w->sc_conf.recv_buffer;
    cs->out_cap = 2 * (size_t)w->sc_conf.send_buffer + WK_CONN_ERR_ROOM;
    cs->headroom = (size_t)w->sc_conf.send_buffer + WK_CONN_ERR_ROOM;
    cs->asm_budget = 4 * (size_t)conf->max_message_size;
    if (cs->asm_budget < (16u << 20))
        cs->asm_budget = 16u << 20;
    cs->mem.alloc = wk_conn_asm_alloc;
    cs->mem.free = wk_conn_asm_free;
    cs->pool = wk_alloc(w, (size_t)n * sizeof(*cs->pool));
    cs->scratch = wk_alloc(w, cs->in_cap);
    cs->arena_block = WK_CONN_ARENA_BLOCK;
    cs->arena_buf = wk_alloc(w, cs->arena_block);
    if (cs->pool == NULL || cs->scratch == NULL || cs->arena_buf == NULL) {
        wk_conn_clear(cs);
        return -ENOMEM;
    }
    memset(cs->pool, 0, (size_t)n * sizeof(*cs->pool));
    cs->npool = n;
    for (uint32_t i = n; i-- > 0;) {
        struct wk_conn *c = &cs->pool[i];

        c->cs = cs;
        c->fd = -1;
        c->next = cs->free;
        cs->free = c;
    }
    ua_arena_init(&cs->arena, cs->arena_buf, cs->arena_block);
    cs->arena.grow = wk_conn_arena_grow;
    cs->arena.release = wk_conn_arena_release;
    cs->arena.ctx = cs;
    /* A request and its response together never need more than this;
     * a runaway response fails with BadOutOfMemory, not the worker. */
    cs->arena.limit = 16 * (size_t)conf->max_message_size;

    /* Channel ids: the slot in the top byte keeps them unique per host. */
    w->next_channel_id = 1;

    event_assign(&cs->tick, w->base, -1, 0, wk_conn_on_tick, cs);
    event_assign(&cs->timer, w->base, -1, EV_PERSIST, wk_conn_on_timer, cs);
    event_assign(&cs->lev, w->base, listen_fd, EV_READ | EV_PERSIST,
                 wk_conn_on_accept, cs);
    if (event_add(&cs->timer, &one) != 0 || event_add(&cs->lev, NULL) != 0) {
        wk_conn_clear(cs);
        return -ENOMEM;
    }
    cs->accepting = true;
    return 0;
}

void
wk_conn_stop_accepting(struct wk_conns *cs)
{
    if (!cs->accepting)
        return;
    cs->accepting = false;
    event_del(&cs->lev);
}

void
wk_conn_close_all(struct wk_conns *cs)
{
    while (cs->oldest != NULL)
        wk_conn_release(cs->oldest);
    cs->dirty = NULL;
    cs->closing = NULL;
}

void
wk_conn_clear(struct wk_conns *cs)
{
    struct wk_worker      *w = cs->w;
    struct wk_conn_buf    *b;
    struct ua_arena_block *blk;

    if (w == NULL)
        return;
    if (cs->pool != NULL) {
        wk_conn_close_all(cs);
        event_del(&cs->tick);
        event_del(&cs->timer);
        wk_conn_stop_accepting(cs);
    }
    while ((b = cs->free_in) != NULL) {
        cs->free_in = b->next;
        wk_free(w, b);
    }
    while ((b = cs->free_out) != NULL) {
        cs->free_out = b->next;
        wk_free(w, b);
    }
    while ((blk = cs->free_blocks) != NULL) {
        cs->free_blocks = blk->next;
        wk_free(w, blk);
    }
    if (cs->arena_buf != NULL)
        ua_arena_reset(&cs->arena);
    wk_free(w, cs->big_spare);
    wk_free(w, cs->arena_buf);
    wk_free(w, cs->scratch);
    wk_free(w, cs->pool);
    if (w->conns == cs)
        w->conns = NULL;
    memset(cs, 0, sizeof(*cs));
}

/* ------------------------------------------------------------ accept */

static void
wk_conn_on_accept(evutil_socket_t lfd, short what, void *arg)
{
    struct wk_conns        *cs = arg;
    struct wk_conn         *c;
    struct sockaddr_storage ss;
    socklen_t               sl;
    uint64_t                tag;
    int                     fd;

    (void)what;
    wk_conn_iteration(cs);
    for (int i = 0; i < WK_CONN_ACCEPT_BATCH && cs->accepting; i++) {
        sl = sizeof(ss);
        fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd == -1) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
                || errno == ENOMEM) {
                /* Out of descriptors: stop accepting for a second rather
                 * than spin on a level-triggered listener. */
                fprintf(stderr, "uaworker %u: accept4() failed: %s; "
                        "pausing accept for 1 s\n", cs->w->slot,
                        strerror(errno));
                event_del(&cs->lev);
                cs->accepting = false;
                cs->accept_paused = true;
            }
            break;
        }
        if (sl > sizeof(ss))
            ss.ss_family = AF_UNSPEC;
        tag = wk_conn_peer_tag(cs, &ss, SHM_THR_KEY_IP);
        if (!wk_conn_admit(cs, fd, tag))
            continue;
        c = wk_conn_get(cs);
        if (c == NULL) {
            wk_conn_refuse(fd, UA_BAD_TCP_SERVER_TOO_BUSY,
                           "too many channels");
            wk_conn_stat_add(&cs->w->row->rejected_connections, 1);
            continue;
        }
        wk_conn_open(cs, c, fd);
        c->peer_tag = tag;
        c->login_tag = cs->w->conf->login_failure_ip_threshold != 0
                           ? wk_conn_peer_tag(cs, &ss, SHM_THR_KEY_LOGIN_IP)
                           : 0;
    }
}

/*
 * Tell the client why (an ERR) and hang up.  What it sent already (its
 * HEL) is read first: closing with unread input would reset the
 * connection, and the reset could cost the client our ERR.
 */
static void
wk_conn_refuse(int fd, ua_status st, const char *reason)
{
    uint8_t          buf[256];
    struct ua_sc_out out = { buf, 64, 0 };

    ua_sc_write_err(&out, st, reason);
    (void)send(fd, buf, out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    for (int i = 0; i < WK_CONN_DRAIN_MAX; i++)
        if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
            break;
    close(fd);
}

/*
 * The tag of the peer's address in the shared throttle, in the key space
 * `kind` (OPN failures or failed logins): IPv4 as the IPv4-mapped IPv6
 * address, so a dual-stack listener and an IPv4 one give one key per
 * host.  0 (never throttled) for anything else.
 */
static uint64_t
wk_conn_peer_tag(struct wk_conns *cs, const struct sockaddr_storage *ss,
                 enum shm_throttle_key_kind kind)
{
    uint8_t a[16];

    if (cs->w->throttle == NULL)
        return 0;
    if (ss->ss_family == AF_INET6) {
        memcpy(a, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
    } else if (ss->ss_family == AF_INET) {
        memset(a, 0, 10);
        a[10] = a[11] = 0xff;
        memcpy(a + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else {
        return 0;
    }
    return shm_throttle_tag(cs->w->throttle, kind, a, sizeof(a));
}

/*
 * Whether a new connection from tag may be served: its address is not
 * blocked (security.failure_*) and the server-wide accept rate
 * (limits.accept_rate) has room.  Otherwise it gets ERR
 * BadTcpServerTooBusy at once (Part 6 §7.1.5: the client is to retry
 * later, which is what a block or a full rate asks of it; nothing of its
 * own was checked, so nothing about its security is said), is closed
 * before it costs any RSA work, and is counted.
 */
static bool
wk_conn_admit(struct wk_conns *cs, int fd, uint64_t tag)
{
    struct wk_worker        *w = cs->w;
    struct shm_throttle     *t = w->throttle;
    const struct shm_config *conf = w->conf;

    if (t == NULL)
        return true;
    if (tag != 0 && conf->failure_threshold != 0
        && shm_throttle_blocked(t, tag, w->now_ms)) {
        wk_conn_refuse(fd, UA_BAD_TCP_SERVER_TOO_BUSY, "try later");
        shm_throttle_count(t, w->slot, SHM_THR_C_REFUSED_BLOCKED);
        return false;
    }
    if (!shm_throttle_accept(t, conf->accept_rate, conf->accept_burst,
                             w->now_ns / 1000u)) {
        wk_conn_refuse(fd, UA_BAD_TCP_SERVER_TOO_BUSY, "try later");
        shm_throttle_count(t, w->slot, SHM_THR_C_REFUSED_RATE);
        return false;
    }
    return true;
}

/*
 * The OPN results that count against the peer's address: the security
 * checks (a bad RSA block, padding or signature all give
 * BadSecurityChecksFailed) and certificate rejections.
 */
static bool
wk_conn_security_failure(ua_status st)
{
    switch (st & 0xFFFF0000u) {
    case UA_BAD_SECURITY_CHECKS_FAILED:
    case UA_BAD_CERTIFICATE_INVALID:
    case UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED:
    case UA_BAD_CERTIFICATE_TIME_INVALID:
    case UA_BAD_CERTIFICATE_ISSUER_TIME_INVALID:
    case UA_BAD_CERTIFICATE_HOST_NAME_INVALID:
    case UA_BAD_CERTIFICATE_URI_INVALID:
    case UA_BAD_CERTIFICATE_USE_NOT_ALLOWED:
    case UA_BAD_CERTIFICATE_ISSUER_USE_NOT_ALLOWED:
    case UA_BAD_CERTIFICATE_UNTRUSTED:
    case UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN:
    case UA_BAD_CERTIFICATE_ISSUER_REVOCATION_UNKNOWN:
    case UA_BAD_CERTIFICATE_REVOKED:
    case UA_BAD_CERTIFICATE_ISSUER_REVOKED:
    case UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE:
        return true;
    default:
        return false;
    }
}

/* An OPN step of c ended with st: a security failure counts against its
 * peer's address (security.failure_*). */
static void
wk_conn_opn_failed(struct wk_conn *c, ua_status st)
{
    struct wk_worker        *w = c->cs->w;
    struct shm_throttle_rule r = { w->conf->failure_threshold,
                                   w->conf->failure_window_ms,
                                   w->conf->failure_block_ms };
    int                      rc;

    if (w->throttle == NULL || c->peer_tag == 0 || r.threshold == 0
        || !wk_conn_security_failure(st))
        return;
    shm_throttle_count(w->throttle, w->slot, SHM_THR_C_OPN_FAILURES);
    rc = shm_throttle_fail(w->throttle, c->peer_tag, &r, w->now_ms);
    if (rc == -ENOSPC)
        shm_throttle_count(w->throttle, w->slot, SHM_THR_C_TABLE_FULL);
    else if (rc == 1)
        shm_throttle_count(w->throttle, w->slot, SHM_THR_C_BLOCKS);
}

/*
 * A free connection.  At max_secure_channels: connections already closing
 * are reaped first; then the oldest connection without a session is purged
 * (SECURITY.md #34: channels carrying sessions are never purged).  NULL
 * when every connection carries a session.
 */
static struct wk_conn *
wk_conn_get(struct wk_conns *cs)
{
    struct wk_conn *c;

    if (cs->free == NULL && cs->closing != NULL) {
        /* Not inside any of their callbacks: reap them now. */
        while ((c = cs->closing) != NULL) {
            cs->closing = c->next_closing;
            wk_conn_release(c);
        }
    }
    if (cs->free == NULL) {
        for (c = cs->oldest; c != NULL; c = c->next)
            if (!(c->flags & WK_CONN_CLOSING) && !wk_conn_has_session(cs, c))
                break;
        if (c == NULL)
            return NULL;
        wk_conn_release(c);
    }
    c = cs->free;
    cs->free = c->next;
    return c;
}

static bool
wk_conn_has_session(struct wk_conns *cs, const struct wk_conn *c)
{
    const struct wk_worker *w = cs->w;
    uint32_t                id = c->sc.channel_id;

    if (w->sessions == NULL)
        return false;
    for (uint32_t i = 0; i < w->conf->max_sessions; i++)
        if (w->sessions[i].used && w->sessions[i].channel_id == id)
            return true;
    return false;
}

static void
wk_conn_open(struct wk_conns *cs, struct wk_conn *c, int fd)
{
    struct wk_worker *w = cs->w;
    struct ua_sc_mem  mem = cs->mem;
    uint32_t          id;
    int               one = 1;

    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* The slot in the top byte keeps channel ids unique on the host. */
    id = w->next_channel_id++ & 0xFFFFFFu;
    if (id == 0)
        id = w->next_channel_id++ & 0xFFFFFFu;
    id |= (uint32_t)(w->slot + 1) << 24;
    c->fd = fd;
    c->flags = WK_CONN_USED;
    c->gen++;
    c->opened_ms = w->now_ms;
    c->asm_bytes = 0;
    c->in = NULL;
    c->in_len = 0;
    c->stage_len = 0;
    c->stage = WK_STAGE_NONE;
    c->out = NULL;
    c->out_cap = c->out_len = c->out_off = 0;
    c->next_dirty = c->prev_dirty = NULL;
    c->next_closing = NULL;
    mem.ctx = c;
    ua_sc_init(&c->sc, &w->sc_conf, &mem, id);
    event_assign(&c->rev, w->base, fd, EV_READ | EV_PERSIST, wk_conn_on_read,
                 c);
    event_assign(&c->wev, w->base, fd, EV_WRITE | EV_PERSIST,
                 wk_conn_on_write, c);
    event_assign(&c->sev, w->base, -1, 0, wk_conn_on_step, c);
    /* Append to the age list. */
    c->next = NULL;
    c->prev = cs->newest;
    if (cs->newest != NULL)
        cs->newest->next = c;
    else
        cs->oldest = c;
    cs->newest = c;
    cs->nused++;
    wk_conn_stat_add(&w->row->connections, 1);
    wk_conn_stat_add(&w->row->connections_total, 1);
    if (event_add(&c->rev, NULL) != 0)
        wk_conn_close_later(c);
}

/* ------------------------------------------------------------ input */

static void
wk_conn_on_read(evutil_socket_t fd, short what, void *arg)
{
    struct wk_conn  *c = arg;
    struct wk_conns *cs = c->cs;
    uint8_t         *buf;
    size_t           off;
    ssize_t          n;

    (void)what;
    wk_conn_iteration(cs);
    if (c->flags & (WK_CONN_CLOSING | WK_CONN_PAUSED | WK_CONN_BUSY))
        return;
    if (c->flags & WK_CONN_STASH) {
        /* Resumed after a pause: finish what was read before. */
        c->flags &= ~WK_CONN_STASH;
        wk_conn_input(c, c->in, c->in_len, true);
        return;
    }
    /*
     * An incomplete chunk is completed in its own buffer; otherwise read
     * into the worker's scratch buffer, so an idle connection holds none.
     */
    if (c->in != NULL) {
        buf = c->in;
        off = c->in_len;
    } else {
        buf = cs->scratch;
        off = 0;
    }
    n = recv(fd, buf + off, cs->in_cap - off, 0);
    if (n == 0) {
        wk_conn_close_later(c);         /* the peer closed */
        return;
    }
    if (n == -1) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            wk_conn_close_later(c);
        return;
    }
    wk_conn_stat_add(&cs->w->row->bytes_in, (uint64_t)n);
    wk_conn_input(c, buf, off + (size_t)n, buf == c->in);
}

/*
 * Process the whole chunks in buf[len] (c->in when own, else scratch);
 * keep the rest in c->in: an incomplete chunk, or, when the output backlog
 * paused the connection, everything not processed yet.  RSA work is never
 * done here: an OPN chunk, or a request that may sign or decrypt, is held
 * at the front of c->in with what follows it, for a step
 * (wk_conn_on_step); reading stops until it is done.
 */
static void
wk_conn_input(struct wk_conn *c, uint8_t *buf, size_t len, bool own)
{
    struct wk_conns *cs = c->cs;
    struct ua_sc_msg msg;
    size_t           off = 0, rest, boff;
    uint32_t         chunk;
    ua_status        st;
    int              rc;

    while (off < len) {
        st = ua_sc_frame(&c->sc, buf + off, len - off, &chunk);
        if (UA_STATUS_IS_BAD(st)) {
            wk_conn_fail(c, st);
            return;
        }
        if (chunk == 0 || chunk > len - off)
            break;                      /* incomplete */
        rc = wk_conn_room(c);
        if (rc < 0)
            return;                     /* closing */
        if (rc == 0) {
            wk_conn_pause(c);
            break;
        }
        if (buf[off] == 'O') {
            c->stage = WK_STAGE_OPN;
        } else {
            rc = wk_conn_chunk(c, buf + off, chunk, &msg);
            if (rc < 0)
                return;                 /* closing: drop the rest */
            if (rc == 0) {
                off += chunk;
                continue;
            }
            /* Held: where its body is (in the chunk, or reassembled in
             * the channel's buffer, untouched until the next chunk). */
            boff = msg.body >= buf + off && msg.body < buf + off + chunk
                       ? (size_t)(msg.body - (buf + off)) : SIZE_MAX;
            c->stage = WK_STAGE_REQUEST;
            c->held_off = boff;
            c->held_len = msg.len;
            c->held_id = msg.request_id;
        }
        if (own && off != 0) {
            memmove(c->in, c->in + off, len - off);
            c->in_len = len - off;
        } else if (!own && wk_conn_hold(c, buf + off, len - off) != 0) {
            return;                     /* closing */
        } else if (own) {
            c->in_len = len;
        }
        c->stage_len = chunk;
        wk_conn_step_later(c);
        return;
    }
    /* Chunks that made no reply (a 'C' chunk, an Abort) keep no buffer. */
    if (c->out != NULL && c->out_len == 0)
        wk_conn_out_put(c);
    rest = len - off;
    if (own) {
        if (rest == 0) {
            wk_conn_buf_put(cs, c->in, false);
            c->in = NULL;
        } else if (off != 0) {
            memmove(c->in, c->in + off, rest);
        }
        c->in_len = rest;
        return;
    }
    if (rest == 0)
        return;
    c->in = wk_conn_buf_get(cs, false);
    if (c->in == NULL) {
        wk_conn_fail(c, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
        return;
    }
    memcpy(c->in, buf + off, rest);
    c->in_len = rest;
}

/*
 * The n bytes at p (in the scratch buffer) to the front of c->in, which c
 * gets (it has none while reads go to scratch).  0, or -1 when closing.
 */
static int
wk_conn_hold(struct wk_conn *c, const uint8_t *p, size_t n)
{
    if (c->in == NULL) {
        c->in = wk_conn_buf_get(c->cs, false);
        if (c->in == NULL) {
            wk_conn_fail(c, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
            return -1;
        }
    }
    memmove(c->in, p, n);
    c->in_len = n;
    return 0;
}

/*
 * Make sure c has an output buffer with room for one more chunk's replies.
 * Writes early only when the buffer is that full.  1: room; 0: the peer
 * does not take enough (pause); -1: the connection is closing.
 */
static int
wk_conn_room(struct wk_conn *c)
{
    struct wk_conns *cs = c->cs;

    if (c->out == NULL) {
        c->out = wk_conn_buf_get(cs, true);
        if (c->out == NULL) {
            wk_conn_fail(c, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
            return -1;
        }
        c->out_cap = cs->out_cap;
        c->out_len = c->out_off = 0;
    }
    if (c->out_cap - c->out_len >= cs->headroom)
        return 1;
    if (wk_conn_write(c) < 0) {
        wk_conn_close_later(c);
        return -1;
    }
    if (c->out_off != 0) {
        /* Partly written: keep the unwritten bytes at the front. */
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    return c->out_cap - c->out_len >= cs->headroom;
}

/*
 * One whole MSG or CLO chunk: 0 when done; 1 when it completed a request
 * that may do RSA work (CreateSession, ActivateSession), left in *msg for
 * a step; -1 when the connection is closing.
 */
static int
wk_conn_chunk(struct wk_conn *c, const uint8_t *p, size_t n,
              struct ua_sc_msg *msg)
{
    struct wk_worker *w = c->cs->w;
    struct ua_sc_out  out = { c->out, c->out_cap, c->out_len };
    ua_status         st;

    msg->len = 0;
    st = ua_sc_process(&c->sc, p, n, w->now_ms, &out, msg);
    if (wk_conn_sc_result(c, out.len, st) != 0)
        return -1;
    if (msg->len == 0)
        return 0;
    if (wk_conn_may_sign(msg))
        return 1;
    return wk_conn_request(c, msg);
}

/*
 * What ua_sc_process/ua_sc_resume left: out_len bytes of output, status
 * st.  0, or -1 when the connection is closing (an ERR, or a CLO).
 */
static int
wk_conn_sc_result(struct wk_conn *c, size_t out_len, ua_status st)
{
    struct wk_worker *w = c->cs->w;

    if (out_len != c->out_len) {
        c->out_len = out_len;
        wk_conn_dirty(c);
    }
    if (c->sc.state == UA_SC_OPEN && !(c->flags & WK_CONN_CHANNEL)) {
        c->flags |= WK_CONN_CHANNEL;
        wk_conn_stat_add(&w->row->channels, 1);
    }
    if (UA_STATUS_IS_BAD(st)) {
        wk_conn_fail(c, st);
        return -1;
    }
    if (c->sc.state == UA_SC_CLOSED) {
        wk_conn_close_later(c);         /* CLO: no ERR */
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------- steps */

/*
 * The next step of c in a later loop iteration: reading stops (the kernel
 * keeps what arrives), sev fires after an epoll.  A zero timeout, not
 * event_active(): an active event would run in this very iteration,
 * before any other channel had a chance to be read.
 */
static void
wk_conn_step_later(struct wk_conn *c)
{
    static const struct timeval now = { 0, 0 };

    if (c->flags & WK_CONN_CLOSING)
        return;
    if (!(c->flags & WK_CONN_BUSY)) {
        c->flags |= WK_CONN_BUSY;
        event_del(&c->rev);
    }
    if (event_add(&c->sev, &now) != 0)
        wk_conn_fail(c, UA_BAD_TCP_INTERNAL_ERROR);
}

/*
 * sev: one step of c's held RSA work, unless another connection did RSA
 * work in this iteration already; then c waits for the next one.  Steps
 * queue on zero timeouts, so they take turns in arrival order.
 */
static void
wk_conn_on_step(evutil_socket_t fd, short what, void *arg)
{
    struct wk_conn  *c = arg;
    struct wk_conns *cs = c->cs;

    (void)fd;
    (void)what;
    wk_conn_iteration(cs);
    if ((c->flags & (WK_CONN_CLOSING | WK_CONN_BUSY | WK_CONN_PAUSED))
        != WK_CONN_BUSY)
        return;
    if (ua_crypto_private_ops() != cs->iter_ops || cs->iter_stepped) {
        wk_conn_step_later(c);          /* one step per iteration */
        return;
    }
    wk_conn_step(c);
}

/*
 * One step: the held OPN chunk (ua_sc_process), its next stage
 * (ua_sc_resume), or the held request (dispatch): at most one RSA
 * private-key operation.  Its reply needs room in the output: a peer that
 * reads nothing pauses the step until the output drains
 * (wk_conn_drained schedules it again).  When the held work is done its
 * chunk leaves c->in and the rest is processed like a read.
 */
static void
wk_conn_step(struct wk_conn *c)
{
    struct wk_conns *cs = c->cs;
    struct ua_sc_out out;
    struct ua_sc_msg msg;
    ua_status        st;
    uint64_t         cpu0, ops0;
    size_t           rest;
    int              rc;

    /* What this iteration's reads answered leaves now, not after the
     * ~2 ms of this step (the tick would send it only then). */
    wk_conn_flush(cs);
    if (c->flags & (WK_CONN_CLOSING | WK_CONN_PAUSED))
        return;
    rc = wk_conn_room(c);
    if (rc < 0)
        return;
    if (rc == 0) {
        c->flags |= WK_CONN_PAUSED;
        if (!(c->flags & WK_CONN_WRITING)) {
            c->flags |= WK_CONN_WRITING;
            event_add(&c->wev, NULL);
        }
        return;
    }
    cs->iter_stepped = true;
    cpu0 = wk_conn_cpu_us();
    ops0 = ua_crypto_private_ops();
    out = (struct ua_sc_out){ c->out, c->out_cap, c->out_len };
    switch (c->stage) {
    case WK_STAGE_OPN:
        if (c->sc.state != UA_SC_OPEN && c->peer_tag != 0
            && cs->w->conf->failure_threshold != 0
            && shm_throttle_blocked(cs->w->throttle, c->peer_tag,
                                    cs->w->now_ms)) {
            /* Blocked since it connected: no RSA work for it either. */
            shm_throttle_count(cs->w->throttle, cs->w->slot,
                               SHM_THR_C_REFUSED_BLOCKED);
            wk_conn_fail(c, UA_BAD_TCP_SERVER_TOO_BUSY);
            return;
        }
        st = ua_sc_process(&c->sc, c->in, c->stage_len, cs->w->now_ms, &out,
                           &msg);
        wk_conn_opn_failed(c, st);
        rc = wk_conn_sc_result(c, out.len, st);
        c->stage = WK_STAGE_RESUME;
        break;
    case WK_STAGE_RESUME:
        st = ua_sc_resume(&c->sc, cs->w->now_ms, &out);
        wk_conn_opn_failed(c, st);
        rc = wk_conn_sc_result(c, out.len, st);
        break;
    case WK_STAGE_REQUEST:
        msg.request_id = c->held_id;
        msg.len = c->held_len;
        msg.body = c->held_off == SIZE_MAX ? c->sc.asm_buf
                                           : c->in + c->held_off;
        rc = wk_conn_request(c, &msg);
        break;
    default:
        rc = 0;
        break;
    }
    wk_conn_rsa_cpu(cs, cpu0, ops0);
    if (rc < 0)
        return;                         /* closing */
    if (c->out != NULL && c->out_len == 0)
        wk_conn_out_put(c);
    if ((c->stage == WK_STAGE_RESUME && ua_sc_busy(&c->sc)) || rc > 0) {
        wk_conn_step_later(c);          /* RSA stage or password slice */
        return;
    }
    wk_login_clear(&c->login);
    /* Done: the held chunk leaves the input; the rest is read now. */
    rest = c->in_len - c->stage_len;
    if (rest == 0) {
        wk_conn_buf_put(cs, c->in, false);
        c->in = NULL;
    } else {
        memmove(c->in, c->in + c->stage_len, rest);
    }
    c->in_len = rest;
    c->stage_len = 0;
    c->stage = WK_STAGE_NONE;
    c->flags &= ~WK_CONN_BUSY;
    if (event_add(&c->rev, NULL) != 0) {
        wk_conn_close_later(c);
        return;
    }
    if (rest != 0)
        wk_conn_input(c, c->in, c->in_len, true);
}

/*
 * One complete service request: dispatch, send the response, reset the
 * arena, count.  0; 1 when the held request wants another step (nothing
 * sent: a UserName login's next slice); -1 when the connection is
 * closing.
 */
static int
wk_conn_request(struct wk_conn *c, const struct ua_sc_msg *msg)
{
    struct wk_conns        *cs = c->cs;
    struct wk_worker       *w = cs->w;
    struct wk_svc_result    res;
    struct ua_service_fault fault;
    uint64_t                t0;
    ua_status               st;

    t0 = wk_conn_ns();
    memset(&res, 0, sizeof(res));
    cs->dispatching = c;
    cs->dispatch_t0 = t0;
    st = wk_svc_dispatch(w, &c->sc, msg, &cs->arena, &res);
    cs->dispatching = NULL;
    if (!UA_STATUS_IS_BAD(st) && res.again) {
        /* A step of the held request's work; dispatched again. */
        ua_arena_reset(&cs->arena);
        return 1;
    }
    if (!UA_STATUS_IS_BAD(st) && res.pending) {
        /* Answered later by wk_conn_respond(), and counted there. */
        ua_arena_reset(&cs->arena);
        return 0;
    }
    if (!UA_STATUS_IS_BAD(st) && (res.type == NULL || res.resp == NULL))
        st = UA_BAD_INTERNAL_ERROR;
    if (UA_STATUS_IS_BAD(st)) {
        ua_arena_reset(&cs->arena);
        wk_conn_fail(c, st);
        return -1;
    }
    st = wk_conn_send(c, msg->request_id, res.type, res.resp);
    if (st == UA_BAD_RESPONSE_TOO_LARGE || st == UA_BAD_OUT_OF_MEMORY
        || st == UA_BAD_ENCODING_LIMITS_EXCEEDED) {
        /* Part 4 §7.31 / Part 6 §6.7.2: answer with a ServiceFault. */
        const struct ua_response_header *h = res.resp;

        memset(&fault, 0, sizeof(fault));
        fault.response_header.timestamp = w->now_dt;
        fault.response_header.request_handle =
            h != NULL ? h->request_handle : 0;
        fault.response_header.service_result = st;
        res.service_result = st;
        st = wk_conn_send(c, msg->request_id, &ua_types[UA_TYPE_SERVICEFAULT],
                          &fault);
    }
    ua_arena_reset(&cs->arena);
    wk_conn_count(cs, res.stat, t0, res.service_result);
    if (UA_STATUS_IS_BAD(st)) {
        wk_conn_fail(c, st);
        return -1;
    }
    return 0;
}

/* Count one answered request of service stat that arrived at t0 (ns). */
static void
wk_conn_count(struct wk_conns *cs, unsigned stat, uint64_t t0,
              ua_status service_result)
{
    struct shm_worker *row = cs->w->row;
    uint64_t           us = (wk_conn_ns() - t0) / 1000;

    if (stat >= SHM_SVC_MAX)
        stat = SHM_SVC_OTHER;
    wk_conn_stat_add(&row->requests[stat], 1);
    wk_conn_stat_add(&row->latency[stat][wk_conn_bucket(us)], 1);
    wk_conn_stat_add(&row->latency_sum_us[stat], us);
    if (UA_STATUS_IS_BAD(service_result))
        wk_conn_stat_add(&row->bad_requests, 1);
}

/* ------------------------------------------------------- deferred */

int
wk_conn_defer(struct wk_svc_ctx *ctx, struct wk_conn_ref *ref)
{
    struct wk_conns *cs = ctx->w->conns;
    struct wk_conn  *c = cs != NULL ? cs->dispatching : NULL;

    memset(ref, 0, sizeof(*ref));
    ref->index = UINT32_MAX;
    if (c == NULL || &c->sc != ctx->ch)
        return -EINVAL;
    ref->index = (uint32_t)(c - cs->pool);
    ref->gen = c->gen;
    ref->channel_id = c->sc.channel_id;
    ref->request_id = ctx->request_id;
    ref->request_handle = ctx->request_handle;
    ref->t0_ns = cs->dispatch_t0;
    ref->stat = ctx->stat;
    ctx->pending = true;
    return 0;
}

struct wk_login *
wk_conn_login(struct wk_svc_ctx *ctx)
{
    struct wk_conns *cs = ctx->w->conns;
    struct wk_conn  *c = cs != NULL ? cs->dispatching : NULL;

    if (c == NULL || &c->sc != ctx->ch || c->stage != WK_STAGE_REQUEST)
        return NULL;
    return &c->login;
}

uint64_t
wk_conn_login_tag(const struct wk_svc_ctx *ctx)
{
    struct wk_conns *cs = ctx->w->conns;
    struct wk_conn  *c = cs != NULL ? cs->dispatching : NULL;

    if (c == NULL || &c->sc != ctx->ch)
        return 0;
    return c->login_tag;
}

/* The connection of ref if it is still the request's, else NULL. */
static struct wk_conn *
wk_conn_of_ref(const struct wk_conns *cs, const struct wk_conn_ref *ref)
{
    struct wk_conn *c;

    if (cs == NULL || ref->index >= cs->npool)
        return NULL;
    c = &cs->pool[ref->index];
    if (!(c->flags & WK_CONN_USED) || (c->flags & WK_CONN_CLOSING)
        || c->gen != ref->gen || c->sc.channel_id != ref->channel_id)
        return NULL;
    return c;
}

bool
wk_conn_ref_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    return wk_conn_of_ref(w->conns, ref) != NULL;
}

int
wk_conn_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
                const struct ua_type *t, void *resp)
{
    struct wk_conns           *cs = w->conns;
    struct wk_conn            *c = wk_conn_of_ref(cs, ref);
    struct ua_response_header *rh = resp;
    struct ua_service_fault    fault;
    ua_status                  st, result;

    if (c == NULL)
        return -ESTALE;
    /* We may run outside any callback (an idle hook): clock and tick. */
    wk_conn_iteration(cs);
    rh->request_handle = ref->request_handle;
    rh->timestamp = w->now_dt;
    result = rh->service_result;
    if (UA_STATUS_IS_BAD(result))
        t = &ua_types[UA_TYPE_SERVICEFAULT];
    if (c->out == NULL) {
        c->out = wk_conn_buf_get(cs, true);
        if (c->out == NULL) {
            wk_conn_fail(c, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
            return -EIO;
        }
        c->out_cap = cs->out_cap;
        c->out_len = c->out_off = 0;
    }
    st = wk_conn_send(c, ref->request_id, t, resp);
    if (st == UA_BAD_RESPONSE_TOO_LARGE || st == UA_BAD_OUT_OF_MEMORY
        || st == UA_BAD_ENCODING_LIMITS_EXCEEDED) {
        memset(&fault, 0, sizeof(fault));
        fault.response_header.timestamp = w->now_dt;
        fault.response_header.request_handle = ref->request_handle;
        fault.response_header.service_result = st;
        result = st;
        st = wk_conn_send(c, ref->request_id,
                          &ua_types[UA_TYPE_SERVICEFAULT], &fault);
    }
    if (c->out != NULL && c->out_len == 0)
        wk_conn_out_put(c);
    wk_conn_count(cs, ref->stat, ref->t0_ns, result);
    if (UA_STATUS_IS_BAD(st)) {
        wk_conn_fail(c, st);
        return -EIO;
    }
    return 0;
}

/* ------------------------------------------------------- the loop */

int
wk_conn_hook_add(struct wk_conns *cs, wk_conn_prepare_fn prepare,
                 wk_conn_wake_fn wake, void *arg)
{
    if (cs->nhooks == WK_CONN_HOOKS_MAX || prepare == NULL)
        return -ENOSPC;
    cs->hooks[cs->nhooks].prepare = prepare;
    cs->hooks[cs->nhooks].wake = wake;
    cs->hooks[cs->nhooks].arg = arg;
    cs->nhooks++;
    return 0;
}

/*
 * Why a loop of our own: libevent 2.1 offers no callback "before the
 * backend blocks" (evwatch_prepare came with 2.2).  One event_base_loop()
 * call with EVLOOP_ONCE is one iteration that may block; with
 * EVLOOP_NONBLOCK one that only polls.  The hooks run between iterations,
 * which is exactly "before sleeping" (DESIGN §3, the consumer side).
 */
int
wk_conn_loop(struct wk_conns *cs)
{
    struct wk_worker *w = cs->w;
    bool              sleep;
    int               rc;

    while (!w->stopping) {
        sleep = true;
        for (uint32_t i = 0; i < cs->nhooks; i++) {
            if (!cs->hooks[i].prepare(w, cs->hooks[i].arg))
                sleep = false;
        }
        rc = event_base_loop(w->base, sleep ? EVLOOP_ONCE : EVLOOP_NONBLOCK);
        if (rc == -1)
            return -1;
        for (uint32_t i = 0; i < cs->nhooks; i++)
            if (cs->hooks[i].wake != NULL)
                cs->hooks[i].wake(w, cs->hooks[i].arg);
        if (event_base_got_break(w->base))
            break;
    }
    return 0;
}

/*
 * ua_sc_send into c's output; a response larger than the room left moves
 * the output to an oversize buffer (rare: large Browse or Read results).
 */
static ua_status
wk_conn_send(struct wk_conn *c, uint32_t request_id, const struct ua_type *t,
             const void *resp)
{
    struct ua_sc_out out = { c->out, c->out_cap, c->out_len };
    size_t           size, maxb, chunks;
    ua_status        st;

    st = ua_sc_send(&c->sc, request_id, t, resp, &out);
    if (st == UA_BAD_ENCODING_LIMITS_EXCEEDED) {
        size = ua_encoded_size(resp, t);
        if (size == 0)
            return st;
        size += 8;                              /* the type NodeId */
        maxb = c->sc.send_buffer > UA_SC_SYM_HEADER + 512
                   ? c->sc.send_buffer - UA_SC_SYM_HEADER - 512
                   : 512;
        chunks = size / maxb + 1;
        if (wk_conn_out_grow(c, c->out_len + size
                                    + chunks * (UA_SC_SYM_HEADER + 512)
                                    + WK_CONN_ERR_ROOM) != 0)
            return UA_BAD_OUT_OF_MEMORY;
        out.buf = c->out;
        out.cap = c->out_cap;
        out.len = c->out_len;
        st = ua_sc_send(&c->sc, request_id, t, resp, &out);
    }
    if (out.len != c->out_len) {
        c->out_len = out.len;
        wk_conn_dirty(c);
    }
    return st;
}

/* Move c's output into a buffer of at least need bytes.  0 or -ENOMEM. */
static int
wk_conn_out_grow(struct wk_conn *c, size_t need)
{
    struct wk_conns *cs = c->cs;
    uint8_t         *nb;
    size_t           cap, pending;

    need = (need + 4095) & ~(size_t)4095;
    if (cs->big_spare != NULL && cs->big_spare_cap >= need) {
        nb = cs->big_spare;
        cap = cs->big_spare_cap;
        cs->big_spare = NULL;
        cs->big_spare_cap = 0;
    } else {
        nb = wk_alloc(cs->w, need);
        if (nb == NULL)
            return -ENOMEM;
        cap = need;
    }
    pending = c->out_len - c->out_off;
    memcpy(nb, c->out + c->out_off, pending);
    wk_conn_out_put(c);                 /* resets out_len and out_off */
    c->out = nb;
    c->out_cap = cap;
    c->out_len = pending;
    c->out_off = 0;
    return 0;
}

/* ------------------------------------------------------------ output */

static void
wk_conn_dirty(struct wk_conn *c)
{
    struct wk_conns *cs = c->cs;

    if (c->flags & (WK_CONN_DIRTY | WK_CONN_CLOSING))
        return;
    c->flags |= WK_CONN_DIRTY;
    c->prev_dirty = NULL;
    c->next_dirty = cs->dirty;
    if (cs->dirty != NULL)
        cs->dirty->prev_dirty = c;
    cs->dirty = c;
}

static void
wk_conn_undirty(struct wk_conn *c)
{
    struct wk_conns *cs = c->cs;

    if (!(c->flags & WK_CONN_DIRTY))
        return;
    c->flags &= ~WK_CONN_DIRTY;
    if (c->prev_dirty != NULL)
        c->prev_dirty->next_dirty = c->next_dirty;
    else
        cs->dirty = c->next_dirty;
    if (c->next_dirty != NULL)
        c->next_dirty->prev_dirty = c->prev_dirty;
    c->next_dirty = c->prev_dirty = NULL;
}

/* The peer does not read: stop reading until the output has drained. */
static void
wk_conn_pause(struct wk_conn *c)
{
    if (c->flags & WK_CONN_CLOSING)
        return;
    c->flags |= WK_CONN_PAUSED | WK_CONN_STASH;
    event_del(&c->rev);
    if (!(c->flags & WK_CONN_WRITING)) {
        c->flags |= WK_CONN_WRITING;
        event_add(&c->wev, NULL);
    }
}

/*
 * Write the pending output: 0 when all of it is gone, 1 when some is left
 * (the socket is full), -1 when the connection is lost.  One send(2) in the
 * normal case: a partial write means the socket buffer is full.
 */
static int
wk_conn_write(struct wk_conn *c)
{
    size_t  left = c->out_len - c->out_off;
    ssize_t n;

    if (left == 0)
        return 0;
    do
        n = send(c->fd, c->out + c->out_off, left, MSG_NOSIGNAL);
    while (n == -1 && errno == EINTR);
    if (n == -1)
        return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
    wk_conn_stat_add(&c->cs->w->row->bytes_out, (uint64_t)n);
    c->out_off += (size_t)n;
    if ((size_t)n < left)
        return 1;
    c->out_len = c->out_off = 0;
    return 0;
}

/* Everything written: give the buffer back, resume a paused connection. */
static void
wk_conn_drained(struct wk_conn *c)
{
    wk_conn_out_put(c);
    if (c->flags & WK_CONN_WRITING) {
        c->flags &= ~WK_CONN_WRITING;
        event_del(&c->wev);
    }
    if (c->flags & WK_CONN_PAUSED) {
        c->flags &= ~WK_CONN_PAUSED;
        if (c->flags & WK_CONN_BUSY) {
            wk_conn_step_later(c);      /* a step waited for room */
            return;
        }
        event_add(&c->rev, NULL);
        /* Process the stash in a read callback of its own. */
        if (c->flags & WK_CONN_STASH)
            event_active(&c->rev, EV_READ, 1);
    }
}

static void
wk_conn_on_write(evutil_socket_t fd, short what, void *arg)
{
    struct wk_conn *c = arg;
    int             rc;

    (void)fd;
    (void)what;
    wk_conn_iteration(c->cs);
    if (c->flags & WK_CONN_CLOSING)
        return;
    rc = wk_conn_write(c);
    if (rc < 0)
        wk_conn_close_later(c);
    else if (rc == 0)
        wk_conn_drained(c);
}

/* ------------------------------------------------------------ close */

/* A Bad status from the channel: ERR, then close (Part 6 §7.1.5). */
static void
wk_conn_fail(struct wk_conn *c, ua_status st)
{
    struct wk_conns *cs = c->cs;
    struct ua_sc_out out;

    if (c->flags & WK_CONN_CLOSING)
        return;
    wk_conn_stat_add(&cs->w->row->bad_requests, 1);
    if (c->out == NULL) {
        c->out = wk_conn_buf_get(cs, true);
        c->out_cap = c->out != NULL ? cs->out_cap : 0;
        c->out_len = c->out_off = 0;
    }
    if (c->out != NULL) {
        out.buf = c->out;
        out.cap = c->out_cap;
        out.len = c->out_len;
        ua_sc_write_err(&out, st, NULL);
        c->out_len = out.len;
    }
    wk_conn_close_later(c);
}

/* Stop processing c; the tick writes what is pending once and frees it. */
static void
wk_conn_close_later(struct wk_conn *c)
{
    struct wk_conns *cs = c->cs;

    if (c->flags & WK_CONN_CLOSING)
        return;
    wk_conn_undirty(c);
    c->flags |= WK_CONN_CLOSING;
    event_del(&c->rev);
    event_del(&c->sev);
    if (c->flags & WK_CONN_WRITING) {
        c->flags &= ~WK_CONN_WRITING;
        event_del(&c->wev);
    }
    c->next_closing = cs->closing;
    cs->closing = c;
    wk_conn_iteration(cs);
}

/*
 * Free c now: sessions learn their channel is gone, buffers go back to
 * their pools, c to the free list.  Never called from c's own callbacks.
 */
static void
wk_conn_release(struct wk_conn *c)
{
    struct wk_conns  *cs = c->cs;
    struct wk_worker *w = cs->w;

    if (!(c->flags & WK_CONN_USED))
        return;
    wk_conn_undirty(c);
    if (c->flags & WK_CONN_CLOSING) {
        /* Unlink from the closing list (short: this iteration's). */
        struct wk_conn **pp = &cs->closing;

        while (*pp != NULL && *pp != c)
            pp = &(*pp)->next_closing;
        if (*pp == c)
            *pp = c->next_closing;
    }
    event_del(&c->rev);
    event_del(&c->wev);
    event_del(&c->sev);
    /* The login first: it wipes its secret in the held request, which
     * may be in the channel's reassembly buffer. */
    wk_login_clear(&c->login);
    wk_session_channel_closed(w, c->sc.channel_id);
    ua_sc_clear(&c->sc);
    close(c->fd);
    if (c->in != NULL)
        wk_conn_buf_put(cs, c->in, false);
    wk_conn_out_put(c);
    if (c->flags & WK_CONN_CHANNEL)
        wk_conn_stat_sub(&w->row->channels, 1);
    wk_conn_stat_sub(&w->row->connections, 1);
    /* Off the age list, onto the free list. */
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        cs->oldest = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    else
        cs->newest = c->prev;
    cs->nused--;
    c->fd = -1;
    c->flags = 0;
    c->in = NULL;
    c->in_len = 0;
    c->stage_len = 0;
    c->stage = WK_STAGE_NONE;
    c->prev = NULL;
    c->next_closing = NULL;
    c->next = cs->free;
    cs->free = c;
}

/* ------------------------------------------------------------ tick */

/*
 * The end of a loop iteration: one write per dirty connection, then the
 * closing connections get one last write (an ERR) and are freed.
 */
static void
wk_conn_on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct wk_conns *cs = arg;
    struct wk_conn  *c;
    uint8_t          sink[512];

    (void)fd;
    (void)what;
    wk_conn_flush(cs);
    while ((c = cs->closing) != NULL) {
        cs->closing = c->next_closing;
        c->flags &= ~WK_CONN_CLOSING;
        if (c->out_len > c->out_off) {
            /* Best effort, never blocking: typically an ERR.  Read what
             * the peer sent meanwhile so close(2) does not reset the
             * connection before the ERR is read. */
            if (wk_conn_write(c) == 0) {
                shutdown(c->fd, SHUT_WR);
                for (int i = 0; i < WK_CONN_DRAIN_MAX; i++)
                    if (recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
                        break;
            }
        }
        wk_conn_release(c);
    }
    wk_conn_iteration_end(cs);
    cs->tick_pending = false;
}

/* One write per dirty connection (the tick, and before an RSA step). */
static void
wk_conn_flush(struct wk_conns *cs)
{
    struct wk_conn *c;
    int             rc;

    while ((c = cs->dirty) != NULL) {
        wk_conn_undirty(c);
        rc = wk_conn_write(c);
        if (rc < 0) {
            wk_conn_close_later(c);
        } else if (rc == 0) {
            wk_conn_drained(c);
        } else if (!(c->flags & WK_CONN_WRITING)) {
            c->flags |= WK_CONN_WRITING;
            event_add(&c->wev, NULL);
        }
    }
}

/*
 * Once a second: heartbeat, session timeouts, the HEL/OPN handshake
 * deadline and token expiry of every channel (a scan of the used list).
 */
static void
wk_conn_on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct wk_conns  *cs = arg;
    struct wk_worker *w = cs->w;
    struct wk_conn   *c, *next;
    uint64_t          d;

    (void)fd;
    (void)what;
    wk_conn_iteration(cs);
    atomic_store_explicit(&w->row->heartbeat, w->now_dt,
                          memory_order_relaxed);
    wk_session_expire(w, w->now_ms);
    for (c = cs->oldest; c != NULL; c = next) {
        next = c->next;
        if (c->flags & WK_CONN_CLOSING)
            continue;
        d = ua_sc_deadline(&c->sc, c->opened_ms, w->conf->hello_timeout_ms);
        if (d == 0 || w->now_ms <= d)
            continue;
        if (c->sc.state == UA_SC_OPEN)
            wk_conn_close_later(c);     /* token expired, never renewed */
        else
            wk_conn_fail(c, UA_BAD_TIMEOUT);    /* HEL/OPN too slow */
    }
    if (cs->accept_paused && !cs->accepting) {
        cs->accept_paused = false;
        if (event_add(&cs->lev, NULL) == 0)
            cs->accepting = true;
    }
}

/* ------------------------------------------------------------ pools */

/* A pooled `in` (in_cap) or `out` (out_cap) buffer, or NULL. */
static uint8_t *
wk_conn_buf_get(struct wk_conns *cs, bool out)
{
    struct wk_conn_buf **fl = out ? &cs->free_out : &cs->free_in;
    struct wk_conn_buf  *b = *fl;
    uint32_t            *n = out ? &cs->nbuf_out : &cs->nbuf_in;

    if (b != NULL) {
        *fl = b->next;
        return (uint8_t *)b;
    }
    /* Filled lazily, at most one per connection; never given back. */
    if (*n >= cs->npool)
        return NULL;
    b = wk_alloc(cs->w, out ? cs->out_cap : cs->in_cap);
    if (b != NULL)
        (*n)++;
    return (uint8_t *)b;
}

static void
wk_conn_buf_put(struct wk_conns *cs, uint8_t *p, bool out)
{
    struct wk_conn_buf *b = (struct wk_conn_buf *)p;

    if (p == NULL)
        return;
    if (out) {
        b->next = cs->free_out;
        cs->free_out = b;
    } else {
        b->next = cs->free_in;
        cs->free_in = b;
    }
}

/* Give c's output buffer back: pooled, or the oversize spare. */
static void
wk_conn_out_put(struct wk_conn *c)
{
    struct wk_conns *cs = c->cs;

    if (c->out == NULL)
        return;
    if (c->out_cap == cs->out_cap) {
        wk_conn_buf_put(cs, c->out, true);
    } else if (c->out_cap > cs->big_spare_cap) {
        /* Keep the largest oversize buffer for the next large response. */
        wk_free(cs->w, cs->big_spare);
        cs->big_spare = c->out;
        cs->big_spare_cap = c->out_cap;
    } else {
        wk_free(cs->w, c->out);
    }
    c->out = NULL;
    c->out_cap = c->out_len = c->out_off = 0;
}

/* Reassembly memory for multi-chunk requests, within the worker budget. */
static void *
wk_conn_asm_alloc(void *ctx, size_t n)
{
    struct wk_conn  *c = ctx;
    struct wk_conns *cs = c->cs;
    uint8_t         *p;

    if (n > cs->asm_budget - cs->asm_used)
        return NULL;                /* BadTcpNotEnoughResources */
    p = wk_alloc(cs->w, n + WK_CONN_ASM_HDR);
    if (p == NULL)
        return NULL;
    memcpy(p, &n, sizeof(n));
    cs->asm_used += n;
    c->asm_bytes += n;
    return p + WK_CONN_ASM_HDR;
}

static void
wk_conn_asm_free(void *ctx, void *q)
{
    struct wk_conn  *c = ctx;
    struct wk_conns *cs = c->cs;
    uint8_t         *p;
    size_t           n;

    if (q == NULL)
        return;
    p = (uint8_t *)q - WK_CONN_ASM_HDR;
    memcpy(&n, p, sizeof(n));
    cs->asm_used -= n;
    c->asm_bytes -= n;
    wk_free(cs->w, p);
}

/* Arena blocks: WK_CONN_ARENA_BLOCK ones are recycled, larger ones freed. */
static void *
wk_conn_arena_grow(void *ctx, size_t min, size_t *size)
{
    struct wk_conns       *cs = ctx;
    struct ua_arena_block *b;
    size_t                 n = min <= cs->arena_block ? cs->arena_block : min;

    if (n == cs->arena_block && cs->free_blocks != NULL) {
        b = cs->free_blocks;
        cs->free_blocks = b->next;
    } else {
        b = wk_alloc(cs->w, n);
        if (b == NULL)
            return NULL;
    }
    *size = n;
    return b;
}

static void
wk_conn_arena_release(void *ctx, void *block)
{
    struct wk_conns       *cs = ctx;
    struct ua_arena_block *b = block;
    size_t hdr = (sizeof(*b) + UA_ARENA_ALIGN - 1)
                 & ~(size_t)(UA_ARENA_ALIGN - 1);

    if (b->size + hdr == cs->arena_block) {
        b->next = cs->free_blocks;
        cs->free_blocks = b;
    } else {
        wk_free(cs->w, b);
    }
}
