/*
 * worker/conn.c: the connection pool, reads, framing, requests handed to
 * the layer above, held work in steps, output, answers to deferred
 * requests (for worker/reply.c) and closing (see conn.h for the picture).
 *
 * Invariants:
 *   - A used connection is on the age list (oldest first) exactly once; it
 *     is on the dirty list iff WK_CONN_DIRTY, on the closing list iff
 *     WK_CONN_CLOSING.  A closing connection is never processed again and
 *     is freed only by the end of the iteration (or by a purge, outside
 *     its callbacks).
 *   - A free connection is on the free list, or in pool[cs->fresh ..]
 *     (never used: zero, its pages perhaps not yet faulted in); the free
 *     list is taken first, then the fresh ones in pool order.
 *   - c->in != NULL iff c->in_len > 0; c->out != NULL iff output is pending
 *     or a chunk is being processed into it.  An idle connection holds
 *     neither.
 *   - Every callback starts with wk_loop_iteration(): the clock is read at
 *     most once per loop iteration, and the tick is active whenever a
 *     callback ran, so nothing dirty or closing outlives its iteration.
 *
 * Counters: this worker is the only writer of its row (W: this worker), so
 * a counter is a relaxed load and a relaxed store, never a locked add
 * (worker/loopstat.h).
 */
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admit.h"
#include "loopstat.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define WK_CONN_ARENA_BLOCK   (256u << 10)  /* request arena blocks */
#define WK_CONN_ERR_ROOM      256           /* an ERR with a short reason */
#define WK_CONN_DRAIN_MAX     4             /* reads to drain before close */

/* Table of contents. */
static bool wk_conn_may_sign(const struct ua_sc_msg *msg);
static struct wk_conn *wk_conn_get(struct wk_conns *cs);
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
static bool wk_conn_step_ready(void *arg);
static void wk_conn_step(void *arg);
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
static void wk_conn_end(void *arg);
static void wk_conn_flush(struct wk_conns *cs);
static void wk_conn_second(void *arg);
static void wk_conn_out_put(struct wk_conn *c);

/* ------------------------------------------------------------ helpers */

/*
 * CreateSession or ActivateSession, the requests that sign or decrypt,
 * and TransferSubscriptions, which may wait for another worker
 * (worker/roam.h): held for a step.  The type NodeId of the encoding in
 * its four-byte or full numeric form (dispatch takes either; the
 * two-byte form cannot hold any of these ids).
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
           || id == UA_NS0ID_ACTIVATESESSIONREQUEST_ENCODING_DEFAULTBINARY
           || id == UA_NS0ID_TRANSFERSUBSCRIPTIONSREQUEST_ENCODING_DEFAULTBINARY;
}

/* ------------------------------------------------------------ init */

int
wk_conn_init(struct wk_conns *cs, struct wk_worker *w, struct wk_loop *l,
             const struct wk_conn_handlers *h)
{
    const struct shm_config *conf = w->conf;
    uint32_t                 n = conf->max_secure_channels;
    size_t                   asm_budget;

    memset(cs, 0, sizeof(*cs));
    cs->w = w;
    cs->loop = l;
    cs->h = *h;
    w->conns = cs;
    if (n == 0)
        return -EINVAL;
    cs->headroom = (size_t)w->sc_conf.send_buffer + WK_CONN_ERR_ROOM;
    asm_budget = 4 * (size_t)conf->max_message_size;
    if (asm_budget < (16u << 20))
        asm_budget = 16u << 20;
    wk_bufpool_init(&cs->bufs, w, n, w->sc_conf.recv_buffer,
                    2 * (size_t)w->sc_conf.send_buffer + WK_CONN_ERR_ROOM,
                    asm_budget, WK_CONN_ARENA_BLOCK);
    /* Zeroed, not touched: 10 KiB a connection, a connection's pages
     * are faulted in when it is first taken (wk_conn_get), not here. */
    cs->pool = wk_calloc(w, n, sizeof(*cs->pool));
    cs->scratch = wk_alloc(w, cs->bufs.in_cap);
    cs->arena_buf = wk_alloc(w, WK_CONN_ARENA_BLOCK);
    if (cs->pool == NULL || cs->scratch == NULL || cs->arena_buf == NULL) {
        wk_conn_clear(cs);
        return -ENOMEM;
    }
    cs->npool = n;
    cs->fresh = 0;
    ua_arena_init(&cs->arena, cs->arena_buf, WK_CONN_ARENA_BLOCK);
    wk_bufpool_arena(&cs->bufs, &cs->arena);
    /* A request and its response together never need more than this;
     * a runaway response fails with BadOutOfMemory, not the worker. */
    cs->arena.limit = 16 * (size_t)conf->max_message_size;

    /* Channel ids: the slot in the top byte keeps them unique per host. */
    w->next_channel_id = 1;

    if (wk_loop_on_end(l, wk_conn_end, cs) != 0
        || wk_loop_on_second(l, wk_conn_second, cs) != 0) {
        wk_conn_clear(cs);
        return -ENOMEM;
    }
    return 0;
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
    struct wk_worker *w = cs->w;

    if (w == NULL)
        return;
    if (cs->pool != NULL)
        wk_conn_close_all(cs);
    if (cs->arena_buf != NULL)
        ua_arena_reset(&cs->arena);
    wk_bufpool_clear(&cs->bufs);
    wk_free(w, cs->arena_buf);
    wk_free(w, cs->scratch);
    wk_free(w, cs->pool);
    if (w->conns == cs)
        w->conns = NULL;
    memset(cs, 0, sizeof(*cs));
}

/* ------------------------------------------------------------ open */

struct wk_conn *
wk_conn_accept(struct wk_conns *cs, int fd, uint64_t peer_tag,
               uint64_t login_tag)
{
    struct wk_conn *c = wk_conn_get(cs);

    if (c == NULL)
        return NULL;
    wk_conn_open(cs, c, fd);
    c->peer_tag = peer_tag;
    c->login_tag = login_tag;
    return c;
}

/*
 * A free connection.  At max_secure_channels: connections already closing
 * are reaped first; then the oldest connection without a session is
 * purged.  NULL when every connection carries a session.
 */
static struct wk_conn *
wk_conn_get(struct wk_conns *cs)
{
    struct wk_conn *c;

    if (cs->free == NULL && cs->fresh < cs->npool) {
        /* One never used, in pool order (as the free list first was). */
        c = &cs->pool[cs->fresh++];
        c->cs = cs;
        c->fd = -1;
        return c;
    }
    if (cs->free == NULL && cs->closing != NULL) {
        /* Not inside any of their callbacks: reap them now. */
        while ((c = cs->closing) != NULL) {
            cs->closing = c->next_closing;
            wk_conn_release(c);
        }
    }
    if (cs->free == NULL) {
        for (c = cs->oldest; c != NULL; c = c->next)
            if (!(c->flags & WK_CONN_CLOSING)
                && (cs->h.busy == NULL
                    || !cs->h.busy(cs->h.arg, c->sc.channel_id)))
                break;
        if (c == NULL)
            return NULL;
        wk_conn_release(c);
    }
    c = cs->free;
    cs->free = c->next;
    return c;
}

static void
wk_conn_open(struct wk_conns *cs, struct wk_conn *c, int fd)
{
    struct wk_worker *w = cs->w;
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
    c->in = NULL;
    c->in_len = 0;
    c->stage_len = 0;
    c->stage = WK_STAGE_NONE;
    c->out = NULL;
    c->out_cap = c->out_len = c->out_off = 0;
    c->next_dirty = c->prev_dirty = NULL;
    c->next_closing = NULL;
    ua_sc_init(&c->sc, &w->sc_conf, &cs->bufs.mem, id);
    event_assign(&c->rev, w->base, fd, EV_READ | EV_PERSIST, wk_conn_on_read,
                 c);
    event_assign(&c->wev, w->base, fd, EV_WRITE | EV_PERSIST,
                 wk_conn_on_write, c);
    wk_step_init(&c->step, cs->loop, wk_conn_step_ready, wk_conn_step, c);
    /* Append to the age list. */
    c->next = NULL;
    c->prev = cs->newest;
    if (cs->newest != NULL)
        cs->newest->next = c;
    else
        cs->oldest = c;
    cs->newest = c;
    cs->nused++;
    wk_loopstat_add(&w->row->connections, 1);
    wk_loopstat_add(&w->row->connections_total, 1);
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
    wk_loop_iteration(cs->loop);
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
    n = recv(fd, buf + off, cs->bufs.in_cap - off, 0);
    if (n == 0) {
        wk_conn_close_later(c);         /* the peer closed */
        return;
    }
    if (n == -1) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            wk_conn_close_later(c);
        return;
    }
    wk_loopstat_add(&cs->w->row->bytes_in, (uint64_t)n);
    wk_conn_input(c, buf, off + (size_t)n, buf == c->in);
}

/*
 * Process the whole chunks in buf[len] (c->in when own, else scratch);
 * keep the rest in c->in: an incomplete chunk, or, when the output backlog
 * paused the connection, everything not processed yet.  RSA work is never
 * done here: an OPN chunk, or a request that may sign or decrypt, is held
 * at the front of c->in with what follows it, for a step
 * (wk_conn_step); reading stops until it is done.
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
            wk_bufpool_put(&cs->bufs, c->in, false);
            c->in = NULL;
        } else if (off != 0) {
            memmove(c->in, c->in + off, rest);
        }
        c->in_len = rest;
        return;
    }
    if (rest == 0)
        return;
    c->in = wk_bufpool_get(&cs->bufs, false);
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
        c->in = wk_bufpool_get(&c->cs->bufs, false);
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
        c->out = wk_bufpool_get(&cs->bufs, true);
        if (c->out == NULL) {
            wk_conn_fail(c, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
            return -1;
        }
        c->out_cap = cs->bufs.out_cap;
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
        wk_loopstat_add(&w->row->channels, 1);
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
 * The next step of c in a later loop iteration (worker/step.h): reading
 * stops (the kernel keeps what arrives).
 */
static void
wk_conn_step_later(struct wk_conn *c)
{
    if (c->flags & WK_CONN_CLOSING)
        return;
    if (!(c->flags & WK_CONN_BUSY)) {
        c->flags |= WK_CONN_BUSY;
        event_del(&c->rev);
    }
    if (wk_step_later(&c->step) != 0)
        wk_conn_fail(c, UA_BAD_TCP_INTERNAL_ERROR);
}

/* Does c still want its step (not closing, not paused)? */
static bool
wk_conn_step_ready(void *arg)
{
    struct wk_conn *c = arg;

    return (c->flags & (WK_CONN_CLOSING | WK_CONN_BUSY | WK_CONN_PAUSED))
           == WK_CONN_BUSY;
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
wk_conn_step(void *arg)
{
    struct wk_conn   *c = arg;
    struct wk_conns  *cs = c->cs;
    struct wk_worker *w = cs->w;
    struct ua_sc_out  out;
    struct ua_sc_msg  msg;
    ua_status         st;
    uint64_t          cpu0, ops0;
    size_t            rest;
    int               rc;

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
    wk_step_begin(&c->step, &cpu0, &ops0);
    out = (struct ua_sc_out){ c->out, c->out_cap, c->out_len };
    switch (c->stage) {
    case WK_STAGE_OPN:
        if (c->sc.state != UA_SC_OPEN && wk_admit_blocked(w, c->peer_tag)) {
            /* Blocked since it connected: no RSA work for it either. */
            wk_conn_fail(c, UA_BAD_TCP_SERVER_TOO_BUSY);
            return;
        }
        st = ua_sc_process(&c->sc, c->in, c->stage_len, w->now_ms, &out,
                           &msg);
        wk_admit_opn_result(w, c->peer_tag, st);
        rc = wk_conn_sc_result(c, out.len, st);
        c->stage = WK_STAGE_RESUME;
        break;
    case WK_STAGE_RESUME:
        st = ua_sc_resume(&c->sc, w->now_ms, &out);
        wk_admit_opn_result(w, c->peer_tag, st);
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
    wk_step_end(&c->step, cpu0, ops0);
    if (rc < 0)
        return;                         /* closing */
    if (c->out != NULL && c->out_len == 0)
        wk_conn_out_put(c);
    if (rc == 2)
        return;                         /* waits: BUSY until wk_conn_wake */
    if ((c->stage == WK_STAGE_RESUME && ua_sc_busy(&c->sc)) || rc > 0) {
        wk_conn_step_later(c);          /* RSA stage or password slice */
        return;
    }
    if (cs->h.held_done != NULL)
        cs->h.held_done(cs->h.arg, (uint32_t)(c - cs->pool));
    /* Done: the held chunk leaves the input; the rest is read now. */
    rest = c->in_len - c->stage_len;
    if (rest == 0) {
        wk_bufpool_put(&cs->bufs, c->in, false);
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

/* ------------------------------------------------------- requests */

/*
 * One complete service request: hand it to the layer above, send the
 * response, reset the arena, count.  0; 1 when the held request wants
 * another step (nothing sent: a UserName login's next slice); 2 when it
 * waits for wk_conn_wake; -1 when the connection is closing.
 */
static int
wk_conn_request(struct wk_conn *c, const struct ua_sc_msg *msg)
{
    struct wk_conns        *cs = c->cs;
    struct wk_worker       *w = cs->w;
    struct wk_conn_result   res;
    struct wk_conn_req      rq;
    struct ua_service_fault fault;
    ua_status               st;

    rq.conn = (uint32_t)(c - cs->pool);
    rq.gen = c->gen;
    rq.channel_id = c->sc.channel_id;
    rq.t0_ns = wk_loopstat_ns();
    rq.login_tag = c->login_tag;
    rq.peer_tag = c->peer_tag;
    rq.held = c->stage == WK_STAGE_REQUEST;
    memset(&res, 0, sizeof(res));
    st = cs->h.request(cs->h.arg, &c->sc, &rq, msg, &cs->arena, &res);
    if (!UA_STATUS_IS_BAD(st) && res.again) {
        /* A step of the held request's work; handed over again. */
        ua_arena_reset(&cs->arena);
        return rq.held && res.wait ? 2 : 1;
    }
    if (!UA_STATUS_IS_BAD(st) && res.pending) {
        /* Answered later by wk_reply_send(), and counted there. */
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
    wk_loopstat_request(w, res.stat, rq.t0_ns, res.service_result);
    if (UA_STATUS_IS_BAD(st)) {
        wk_conn_fail(c, st);
        return -1;
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
    uint8_t *nb;
    size_t   cap, pending;

    nb = wk_bufpool_big(&c->cs->bufs, need, &cap);
    if (nb == NULL)
        return -ENOMEM;
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
    wk_loopstat_add(&c->cs->w->row->bytes_out, (uint64_t)n);
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
    wk_loop_iteration(c->cs->loop);
    if (c->flags & WK_CONN_CLOSING)
        return;
    rc = wk_conn_write(c);
    if (rc < 0)
        wk_conn_close_later(c);
    else if (rc == 0)
        wk_conn_drained(c);
}

/* Give c's output buffer back: pooled, or the oversize spare. */
static void
wk_conn_out_put(struct wk_conn *c)
{
    if (c->out == NULL)
        return;
    wk_bufpool_out_put(&c->cs->bufs, c->out, c->out_cap);
    c->out = NULL;
    c->out_cap = c->out_len = c->out_off = 0;
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
    wk_loopstat_add(&cs->w->row->bad_requests, 1);
    if (c->out == NULL) {
        c->out = wk_bufpool_get(&cs->bufs, true);
        c->out_cap = c->out != NULL ? cs->bufs.out_cap : 0;
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
    wk_step_cancel(&c->step);
    if (c->flags & WK_CONN_WRITING) {
        c->flags &= ~WK_CONN_WRITING;
        event_del(&c->wev);
    }
    c->next_closing = cs->closing;
    cs->closing = c;
    wk_loop_iteration(cs->loop);
}

/*
 * Free c now: the layer above learns its held request and its channel
 * are gone, buffers go back to their pools, c to the free list.  Never
 * called from c's own callbacks.
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
    wk_step_cancel(&c->step);
    /* The held request's state first: it wipes its secret in the held
     * request, which may be in the channel's reassembly buffer. */
    if (cs->h.held_done != NULL)
        cs->h.held_done(cs->h.arg, (uint32_t)(c - cs->pool));
    if (cs->h.closed != NULL && c->sc.channel_id != 0)
        cs->h.closed(cs->h.arg, c->sc.channel_id);
    ua_sc_clear(&c->sc);
    close(c->fd);
    if (c->in != NULL)
        wk_bufpool_put(&cs->bufs, c->in, false);
    wk_conn_out_put(c);
    if (c->flags & WK_CONN_CHANNEL)
        wk_loopstat_sub(&w->row->channels, 1);
    wk_loopstat_sub(&w->row->connections, 1);
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

/* ------------------------------------------------------------ the loop */

/*
 * The end of a loop iteration (worker/loop.h): one write per dirty
 * connection, then the closing connections get one last write (an ERR)
 * and are freed.
 */
static void
wk_conn_end(void *arg)
{
    struct wk_conns *cs = arg;
    struct wk_conn  *c;
    uint8_t          sink[512];

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
 * Once a second: the HEL/OPN handshake deadline and token expiry of
 * every channel (a scan of the used list).
 */
static void
wk_conn_second(void *arg)
{
    struct wk_conns  *cs = arg;
    struct wk_worker *w = cs->w;
    struct wk_conn   *c, *next;
    uint64_t          d;

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
}

void
wk_conn_wake(struct wk_conns *cs, uint32_t conn, uint32_t gen)
{
    struct wk_conn *c;

    if (cs == NULL || conn >= cs->npool)
        return;
    c = &cs->pool[conn];
    if ((c->flags & (WK_CONN_USED | WK_CONN_CLOSING | WK_CONN_BUSY))
            != (WK_CONN_USED | WK_CONN_BUSY)
        || c->gen != gen || c->stage != WK_STAGE_REQUEST)
        return;
    wk_conn_step_later(c);
}

/* ------------------------------------------------------- answers */

struct wk_conn *
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

int
wk_conn_answer(struct wk_conn *c, const struct wk_conn_ref *ref,
               const struct ua_type *t, void *resp)
{
    struct wk_conns           *cs = c->cs;
    struct wk_worker          *w = cs->w;
    struct ua_response_header *rh = resp;
    struct ua_service_fault    fault;
    ua_status                  st, result;

    /* We may run outside any callback (an idle hook): clock and tick. */
    wk_loop_iteration(cs->loop);
    rh->request_handle = ref->request_handle;
    rh->timestamp = w->now_dt;
    result = rh->service_result;
    if (UA_STATUS_IS_BAD(result))
        t = &ua_types[UA_TYPE_SERVICEFAULT];
    if (c->out == NULL) {
        c->out = wk_bufpool_get(&cs->bufs, true);
        if (c->out == NULL) {
            wk_conn_fail(c, UA_BAD_TCP_NOT_ENOUGH_RESOURCES);
            return -EIO;
        }
        c->out_cap = cs->bufs.out_cap;
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
    wk_loopstat_request(w, ref->stat, ref->t0_ns, result);
    if (UA_STATUS_IS_BAD(st)) {
        wk_conn_fail(c, st);
        return -EIO;
    }
    return 0;
}
