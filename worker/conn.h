/*
 * worker/conn.h: the worker's listener and its connections (libevent).
 *
 * One worker accepts on its slot's listening socket (inherited from the
 * broker, SO_REUSEPORT) and owns a fixed pool of conf->max_secure_channels
 * connections; each connection carries exactly one secure channel.
 *
 *   accept4 ----> pool (free list) ----> wk_conn: rev/wev events, ua_sc
 *   read(2) ----> ONE per-worker scratch buffer ----> ua_sc_frame
 *                   |  incomplete chunk: copied to a pooled `in` buffer
 *                   v
 *                 ua_sc_process ---> wk_svc_dispatch (request arena)
 *                                      |
 *                 ua_sc_send <---------+  into the pooled `out` buffer
 *                   |
 *   end of the loop iteration: one write(2) per dirty connection
 *
 * Memory (STYLE §5): an idle connection holds no buffer at all.  `in` and
 * `out` come from per-worker free lists of fixed-size buffers, filled
 * lazily (each buffer is allocated once, through wk_alloc, and recycled
 * forever); the request arena is reset after every response.  In steady
 * state a request costs no heap allocation.
 *
 * Iteration (STYLE §6): the first callback of a loop iteration reads the
 * clock (wk_clock_update) and activates one `tick` event, which runs after
 * every other callback of that iteration: it flushes the dirty connections
 * (one write each) and reaps the connections marked closing.  A connection
 * is never freed inside its own callback chain.
 *
 * Backpressure: when a connection's output cannot be written and its
 * buffer has less than one chunk of room, the connection stops reading
 * (its unprocessed input is kept in its `in` buffer) until the peer has
 * read enough.
 *
 * RSA work (DESIGN §4): ~2 ms per private-key operation, so it never runs
 * in a read callback.  An OPN chunk, or a CreateSession/ActivateSession
 * request once decrypted, is held at the front of the connection's `in`
 * buffer with whatever followed it (stage, stage_len, held_*); the
 * connection stops reading (WK_CONN_BUSY: the kernel keeps what arrives)
 * and its `sev` event, a zero timeout, runs the work as steps of at most
 * one private-key operation (an OPN is staged by the channel:
 * ua_sc_busy/ua_sc_resume).  A step runs after an epoll, never in the
 * iteration that queued it, and only if no other step did RSA work in
 * this iteration: one RSA operation per loop iteration, worker-wide, so
 * every other channel waits for one operation at most.  A step first
 * flushes the replies made so far in its iteration.  When the held work
 * is done its chunk leaves `in`, reading resumes and the rest is processed
 * like a read.  A connection closed, timed out or purged while BUSY is
 * released like any other (sev deleted, `in` back to its pool, a staged
 * OPN dropped by ua_sc_clear).  The symmetric path (MSG, None) pays a
 * four-byte type check per request and one clock read per iteration (the
 * loop statistics: busy time, RSA operations per iteration, CPU per RSA
 * step, in the row).
 *
 * Deferred responses: a handler that cannot answer at once (Write waits
 * for the broker; Publish waits for notifications) captures a
 * struct wk_conn_ref with wk_conn_defer() and returns; dispatch then
 * reports the request as pending (struct wk_svc_result.pending) and the
 * connection sends nothing for it.  Later, from anywhere on the loop (a
 * ring drain, a timer, another request), wk_conn_respond() encodes the
 * response into that connection's output, to leave with the iteration's
 * write, if the connection is still the one the request came on (same
 * pool index, same generation, same channel id); otherwise the response is
 * dropped (-ESTALE): the client is gone, or reconnected on another
 * connection.  Nothing is allocated for a pending request: the ref is a
 * few words the handler keeps where it likes.  The request's arena and its
 * bytes are gone when the handler returns; copy out what the answer needs.
 * A pending request is counted (requests, latency from its arrival) when
 * it is answered.
 *
 * The loop (wk_conn_loop): libevent 2.1 has no "before sleeping" hook, so
 * the worker drives event_base_loop() one iteration at a time.  Before
 * each iteration it calls every registered idle hook (wk_conn_hook_add):
 * a hook does its pending work (drains its rings) and arms its wake-up
 * (shm_ring_sleep_prepare); when every hook says it may sleep, the
 * iteration blocks (EVLOOP_ONCE), otherwise it only polls
 * (EVLOOP_NONBLOCK) and the hooks run again right after.  After each
 * iteration every hook's wake function runs (shm_ring_wake_clear; the
 * doorbell fd's own callback drained the doorbell first, DESIGN §3).
 * Responses a hook produces flush in the same iteration: wk_conn_respond
 * activates the tick, and an active event keeps the iteration from
 * blocking.
 *
 * Single-threaded: everything here runs on the worker's one event loop.
 */
#ifndef WK_CONN_H
#define WK_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "proto/arena.h"
#include "proto/securechannel.h"
#include "svc.h"
#include "worker.h"

/* struct wk_conn.flags */
#define WK_CONN_USED     0x01   /* taken from the pool */
#define WK_CONN_DIRTY    0x02   /* on the dirty list: output to flush */
#define WK_CONN_CLOSING  0x04   /* on the closing list: reap at the tick */
#define WK_CONN_PAUSED   0x08   /* reading stopped: output backlog */
#define WK_CONN_STASH    0x10   /* `in` holds input not yet processed */
#define WK_CONN_WRITING  0x20   /* wev is added: waiting for POLLOUT */
#define WK_CONN_CHANNEL  0x40   /* counted in the row's `channels` */
#define WK_CONN_BUSY     0x80   /* a step is due (sev): reading stopped */

/* struct wk_conn.stage: the RSA work held for steps */
#define WK_STAGE_NONE    0
#define WK_STAGE_OPN     1      /* an OPN chunk not yet processed */
#define WK_STAGE_RESUME  2      /* the channel is busy: ua_sc_resume */
#define WK_STAGE_REQUEST 3      /* CreateSession/ActivateSession held */

struct wk_conns;

/* One TCP connection = one secure channel.  Lives in the pool forever. */
struct wk_conn {
    struct event      rev;          /* EV_READ | EV_PERSIST on fd */
    struct event      wev;          /* EV_WRITE | EV_PERSIST, when blocked */
    struct event      sev;          /* zero timeout: the next step, one
                                     * loop iteration later (BUSY) */
    struct wk_conns  *cs;
    int               fd;           /* -1 when free */
    uint8_t           flags;        /* WK_CONN_* */
    struct ua_sc      sc;
    uint64_t          opened_ms;    /* monotonic, for ua_sc_deadline */
    size_t            asm_bytes;    /* reassembly memory held (ch->mem) */
    /* Unprocessed input: an incomplete chunk, or input stashed while
     * paused.  NULL when there is none. */
    uint8_t          *in;
    size_t            in_len;
    /* RSA work held for steps (BUSY): in[0..stage_len) is its chunk. */
    uint8_t           stage;        /* WK_STAGE_* */
    size_t            stage_len;
    size_t            held_off;     /* REQUEST: body at in + held_off, or
                                     * SIZE_MAX: in sc.asm_buf */
    size_t            held_len;
    uint32_t          held_id;      /* its RequestId */
    /* Output not yet written: bytes [out_off, out_len) of out[out_cap]. */
    uint8_t          *out;
    size_t            out_cap;
    size_t            out_len;
    size_t            out_off;
    /* Lists: all used connections in accept order (oldest first), and
     * the dirty / closing lists of the current iteration. */
    struct wk_conn   *prev;
    struct wk_conn   *next;
    struct wk_conn   *prev_dirty;
    struct wk_conn   *next_dirty;
    struct wk_conn   *next_closing;
    uint32_t          gen;          /* +1 on every open: wk_conn_ref check */
    uint64_t          peer_tag;     /* the peer IP address's tag in the
                                     * shared throttle; 0: none */
    uint64_t          login_tag;    /* its tag for failed logins (another
                                     * key space); 0: none */
    struct wk_login   login;        /* the held ActivateSession's UserName
                                     * check, between steps */
};

/*
 * A pending request's way back to its connection (see the top comment).
 * Plain data: copy it, keep it anywhere; never dereferenced, only checked.
 */
struct wk_conn_ref {
    uint32_t index;             /* in the pool */
    uint32_t gen;               /* wk_conn.gen at capture */
    uint32_t channel_id;
    uint32_t request_id;        /* the secure channel's RequestId */
    uint32_t request_handle;    /* the client's RequestHandle */
    uint8_t  stat;              /* enum shm_svc, for the counters */
    uint8_t  pad[3];
    uint64_t t0_ns;             /* arrival, for the latency histogram */
};

/*
 * Idle hooks (wk_conn_hook_add).  prepare: do the pending work, then arm
 * the wake-up; true when the loop may block until an fd or timer fires,
 * false when more work is already waiting.  wake (may be NULL): after the
 * iteration, before the next prepare.
 */
typedef bool (*wk_conn_prepare_fn)(struct wk_worker *w, void *arg);
typedef void (*wk_conn_wake_fn)(struct wk_worker *w, void *arg);

#define WK_CONN_HOOKS_MAX 4

struct wk_conn_hook {
    wk_conn_prepare_fn prepare;
    wk_conn_wake_fn    wake;
    void              *arg;
};

/* A free buffer on one of the pool's free lists. */
struct wk_conn_buf {
    struct wk_conn_buf *next;
};

/* The connection layer of one worker. */
struct wk_conns {
    struct wk_worker   *w;
    int                 listen_fd;
    struct event        lev;            /* accept */
    struct event        tick;           /* end of iteration: flush, reap */
    struct event        timer;          /* once a second: deadlines */
    bool                tick_pending;   /* tick is active this iteration */
    bool                accepting;
    bool                accept_paused;  /* out of fds: retry in 1 s */
    struct wk_conn     *pool;           /* [npool] */
    uint32_t            npool;
    struct wk_conn     *free;           /* free connections (via next) */
    struct wk_conn     *oldest;         /* used connections, accept order */
    struct wk_conn     *newest;
    struct wk_conn     *dirty;
    struct wk_conn     *closing;
    uint32_t            nused;
    /* Buffers: scratch for every read, pooled `in` and `out` buffers. */
    uint8_t            *scratch;
    size_t              in_cap;         /* the largest chunk we accept */
    size_t              out_cap;        /* 2 chunks + room for an ERR */
    size_t              headroom;       /* what must be free before a chunk */
    struct wk_conn_buf *free_in;
    struct wk_conn_buf *free_out;
    uint32_t            nbuf_in;        /* allocated so far */
    uint32_t            nbuf_out;
    uint8_t            *big_spare;      /* one kept oversize `out` buffer */
    size_t              big_spare_cap;
    /* Reassembly of multi-chunk requests: a worker-wide byte budget. */
    struct ua_sc_mem    mem;
    size_t              asm_used;
    size_t              asm_budget;
    /* One request arena, reset after each response. */
    struct ua_arena     arena;
    uint8_t            *arena_buf;
    size_t              arena_block;
    struct ua_arena_block *free_blocks; /* spare grown blocks */
    /* Pending requests: the one being dispatched, then idle hooks. */
    struct wk_conn     *dispatching;    /* set around wk_svc_dispatch */
    uint64_t            dispatch_t0;
    struct wk_conn_hook hooks[WK_CONN_HOOKS_MAX];
    uint32_t            nhooks;
    /* Loop statistics (the row's loop_* and rsa_private_ops). */
    uint64_t            iter_t0;        /* ns: this iteration's start */
    uint64_t            iter_ops;       /* private ops before it */
    bool                iter_stepped;   /* a step ran in it */
    uint64_t            iter_ops_max;   /* the most one iteration did */
    uint64_t            stall_max_us;   /* the longest iteration so far */
    uint64_t            ops_seen;       /* ua_crypto_private_ops() shown */
    uint64_t            rsa_cpu_max_us; /* the most CPU of one step */
};

/*
 * Set up the pool (conf->max_secure_channels connections), the scratch
 * buffer, the request arena and the events on w->base; start accepting on
 * listen_fd (non-blocking afterwards).  Allocates only here.  0 or -errno.
 */
int wk_conn_init(struct wk_conns *cs, struct wk_worker *w, int listen_fd);

/* Stop accepting (the broker keeps the socket: queued connections wait
 * there for the next worker on this slot). */
void wk_conn_stop_accepting(struct wk_conns *cs);

/* Close every connection now (nothing special is sent). */
void wk_conn_close_all(struct wk_conns *cs);

/* Close everything and free every buffer; after wk_conn_close_all. */
void wk_conn_clear(struct wk_conns *cs);

struct wk_svc_ctx;

/*
 * Inside a handler only: answer this request later.  Fills *ref and marks
 * the request pending (ctx->pending), so dispatch returns no response for
 * it now.  0; -EINVAL outside a dispatch by the connection layer (a unit
 * test calling the handler directly: *ref is then zeroed and never
 * matches a connection).
 */
int wk_conn_defer(struct wk_svc_ctx *ctx, struct wk_conn_ref *ref);
/*
 * The login state of the connection whose held request (a step) is being
 * dispatched, or NULL (not dispatched from a step: do the work at once).
 */
struct wk_login *wk_conn_login(struct wk_svc_ctx *ctx);
/*
 * The failed-login key of the peer address of the connection whose
 * request is being dispatched (shm/throttle.h, SHM_THR_KEY_LOGIN_IP), or
 * 0 (none: not dispatched by the connection layer, no IPv4/IPv6 peer, or
 * security.login_failure_ip_threshold 0).
 */
uint64_t wk_conn_login_tag(const struct wk_svc_ctx *ctx);

/*
 * Answer a pending request: encode resp (of type t; its ResponseHeader's
 * requestHandle and timestamp are set here, its ServiceResult is the
 * caller's: a Bad one sends a ServiceFault) into the connection of ref,
 * flushed with this iteration's writes.  resp stays the caller's; nothing
 * else is touched (not the request arena).  0; -ESTALE when that
 * connection is gone, closing or carries another channel (the response is
 * dropped); -EIO when encoding failed and the connection is being closed.
 */
int wk_conn_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
                    const struct ua_type *t, void *resp);

/* True while the connection of ref is the one the request came on. */
bool wk_conn_ref_alive(const struct wk_worker *w,
                       const struct wk_conn_ref *ref);

/* Register an idle hook (see the top comment).  0; -ENOSPC. */
int wk_conn_hook_add(struct wk_conns *cs, wk_conn_prepare_fn prepare,
                     wk_conn_wake_fn wake, void *arg);

/*
 * Run the loop until w->stopping: hooks, one libevent iteration, wakes.
 * 0, or -1 when event_base_loop() failed.
 */
int wk_conn_loop(struct wk_conns *cs);

#endif /* WK_CONN_H */
