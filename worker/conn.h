/*
 * worker/conn.h: the worker's connections (libevent).
 *
 * A fixed pool of conf->max_secure_channels connections; each connection
 * carries exactly one secure channel.  Connections come from the listener
 * (worker/listen.h, wk_conn_accept).
 *
 *   read(2) ----> ONE per-worker scratch buffer ----> ua_sc_frame
 *                   |  incomplete chunk: copied to a pooled `in` buffer
 *                   v
 *                 ua_sc_process ---> the request handler (the layer
 *                                      |   above: dispatch, worker/svc.h)
 *                 ua_sc_send <---------+  into the pooled `out` buffer
 *                   |
 *   end of the loop iteration: one write(2) per dirty connection
 *
 * Memory (docs/style.md §5): an idle connection holds no buffer at all.
 * `in` and `out` come from the worker's buffer pool (worker/bufpool.h);
 * the request arena is reset after every response.  In steady state a
 * request costs no heap allocation.
 *
 * Iteration (docs/style.md §6): every callback starts with
 * wk_loop_iteration() (worker/loop.h); at the end of the iteration the
 * loop's tick calls this layer's end handler: it flushes the dirty
 * connections (one write each) and reaps the connections marked closing.
 * A connection is never freed inside its own callback chain.
 *
 * Backpressure: when a connection's output cannot be written and its
 * buffer has less than one chunk of room, the connection stops reading
 * (its unprocessed input is kept in its `in` buffer) until the peer has
 * read enough.
 *
 * RSA work (docs/architecture.md §4): an OPN chunk, or a CreateSession/
 * ActivateSession request once decrypted, is held at the front of the
 * connection's `in` buffer with whatever followed it (stage, stage_len,
 * held_*); the connection stops reading (WK_CONN_BUSY: the kernel keeps
 * what arrives) and its step (worker/step.h) runs the work as steps of at
 * most one private-key operation (an OPN is staged by the channel:
 * ua_sc_busy/ua_sc_resume; a held request is dispatched again while the
 * layer above asks for another step).  A step first flushes the replies
 * made so far in its iteration.  When the held work is done its chunk
 * leaves `in`, reading resumes and the rest is processed like a read.  A
 * connection closed, timed out or purged while BUSY is released like any
 * other (step cancelled, `in` back to its pool, a staged OPN dropped by
 * ua_sc_clear).  The symmetric path (MSG, None) pays a four-byte type
 * check per request.
 *
 * Upward, only through the handlers registered at start-up
 * (struct wk_conn_handlers): the request handler, "held request done",
 * "channel closed" and "does this channel carry a session".  The layer
 * above gets an opaque per-request context (struct wk_conn_req) and
 * nothing else of a connection.
 *
 * Deferred responses (worker/reply.h): a handler that cannot answer at
 * once (Write waits for the broker; Publish waits for notifications)
 * captures a struct wk_conn_ref (below) and returns; the request is
 * reported pending (struct wk_conn_result.pending) and the connection
 * sends nothing for it.  Later the reply layer finds the connection again
 * (wk_conn_of_ref) and has this layer encode the answer into its output
 * (wk_conn_answer), to leave with the iteration's write.
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

#include "bufpool.h"
#include "loop.h"
#include "proto/arena.h"
#include "proto/securechannel.h"
#include "proto/types.h"
#include "step.h"
#include "worker.h"

/* struct wk_conn.flags */
#define WK_CONN_USED     0x01   /* taken from the pool */
#define WK_CONN_DIRTY    0x02   /* on the dirty list: output to flush */
#define WK_CONN_CLOSING  0x04   /* on the closing list: reap at the tick */
#define WK_CONN_PAUSED   0x08   /* reading stopped: output backlog */
#define WK_CONN_STASH    0x10   /* `in` holds input not yet processed */
#define WK_CONN_WRITING  0x20   /* wev is added: waiting for POLLOUT */
#define WK_CONN_CHANNEL  0x40   /* counted in the row's `channels` */
#define WK_CONN_BUSY     0x80   /* a step is due: reading stopped */

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
    struct wk_step    step;         /* the next step, one loop iteration
                                     * later (BUSY) */
    struct wk_conns  *cs;
    int               fd;           /* -1 when free */
    uint8_t           flags;        /* WK_CONN_* */
    struct ua_sc      sc;
    uint64_t          opened_ms;    /* monotonic, for ua_sc_deadline */
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
};

/*
 * What the connection layer tells the layer above about the request it
 * hands over: enough to defer it (wk_reply_defer) and to key state kept
 * per held request (a login in steps), nothing of the connection itself.
 */
struct wk_conn_req {
    uint32_t conn;              /* the connection's index in the pool */
    uint32_t gen;               /* its generation */
    uint32_t channel_id;        /* its channel's */
    uint64_t t0_ns;             /* arrival, for the latency histogram */
    uint64_t login_tag;         /* the peer address's failed-login key
                                 * (shm/throttle.h SHM_THR_KEY_LOGIN_IP),
                                 * 0: none */
    uint64_t peer_tag;          /* the peer address's tag (SHM_THR_KEY_IP,
                                 * sessions not activated per address),
                                 * 0: none */
    bool     held;              /* a held request (CreateSession,
                                 * ActivateSession) dispatched in steps */
};

/* What the request handler answers. */
struct wk_conn_result {
    const struct ua_type *type;     /* response type (may be ServiceFault) */
    void                 *resp;     /* in the arena */
    uint8_t               stat;     /* enum shm_svc, for the counters */
    ua_status             service_result;
    /*
     * The handler deferred its answer (wk_reply_defer): type and resp are
     * NULL, nothing is sent now, and the request is counted when
     * wk_reply_send() answers it.
     */
    bool                  pending;
    /* The handler wants another step (a held request only): nothing
     * sent, nothing counted; the held request is handed over again. */
    bool                  again;
    /* With again: not in the next iteration but when the layer above
     * calls wk_conn_wake (it waits for another worker, worker/roam.h);
     * the connection reads nothing meanwhile. */
    bool                  wait;
};

/*
 * The handlers of the layer above, registered at start-up (arg theirs):
 *
 * request    a complete service request of channel ch (msg->body valid
 *            until the response is sent): UA_GOOD with *res filled (the
 *            response in arena a), or a Bad status when the message
 *            cannot even be answered: ERR and close.  rq is the request's
 *            context.
 * held_done  the held request of connection conn is done (or its
 *            connection goes): state kept for it goes (and a secret it
 *            points at in the held request is wiped: called before the
 *            request's buffers are released).
 * closed     channel channel_id closed (its connection is released).
 * busy       does channel channel_id carry a session?  Such channels are
 *            never purged to make room for a new connection.
 */
struct wk_conn_handlers {
    ua_status (*request)(void *arg, struct ua_sc *ch,
                         const struct wk_conn_req *rq,
                         const struct ua_sc_msg *msg, struct ua_arena *a,
                         struct wk_conn_result *res);
    void      (*held_done)(void *arg, uint32_t conn);
    void      (*closed)(void *arg, uint32_t channel_id);
    bool      (*busy)(void *arg, uint32_t channel_id);
    void       *arg;
};

/*
 * A pending request's way back to its connection (worker/reply.h).
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

/* The connection layer of one worker. */
struct wk_conns {
    struct wk_worker       *w;
    struct wk_loop         *loop;
    struct wk_conn_handlers h;
    struct wk_conn         *pool;           /* [npool] */
    uint32_t                npool;
    struct wk_conn         *free;           /* free connections (via next) */
    uint32_t                fresh;          /* pool[fresh ..] never used:
                                             * zero, not on the free list */
    struct wk_conn         *oldest;         /* used connections, accept
                                             * order */
    struct wk_conn         *newest;
    struct wk_conn         *dirty;
    struct wk_conn         *closing;
    uint32_t                nused;
    /* Buffers: scratch for every read, pooled `in` and `out` buffers. */
    uint8_t                *scratch;
    size_t                  headroom;       /* what must be free before a
                                             * chunk */
    struct wk_bufpool       bufs;
    /* One request arena, reset after each response. */
    struct ua_arena         arena;
    uint8_t                *arena_buf;
};

/*
 * Set up the pool (conf->max_secure_channels connections), the scratch
 * buffer, the request arena, and this layer's end-of-iteration and
 * once-a-second handlers on the loop; h are the handlers of the layer
 * above.  Allocates only here.  0 or -errno.
 */
int wk_conn_init(struct wk_conns *cs, struct wk_worker *w, struct wk_loop *l,
                 const struct wk_conn_handlers *h);

/*
 * A new connection on fd (non-blocking, from accept4) with its peer
 * address's tags (worker/admit.h): opened in a free connection; at
 * max_secure_channels, connections already closing are reaped first, then
 * the oldest connection without a session is purged (docs/security.md
 * case 34: channels carrying sessions are never purged).  NULL, fd left
 * to the caller, when every connection carries a session.
 */
struct wk_conn *wk_conn_accept(struct wk_conns *cs, int fd, uint64_t peer_tag,
                               uint64_t login_tag);

/* Close every connection now (nothing special is sent). */
void wk_conn_close_all(struct wk_conns *cs);

/* Close everything and free every buffer; after wk_conn_close_all. */
void wk_conn_clear(struct wk_conns *cs);

/*
 * The connection of ref (struct wk_conn_ref, captured by wk_reply_defer,
 * worker/reply.h) if it is still the one the request came on (same pool
 * index, same generation, same channel id, not closing), else NULL.
 */
/*
 * The held request of connection conn (its generation gen) that waits
 * (struct wk_conn_result.wait) gets its next step.  Nothing when that
 * connection is gone or holds nothing that waits.
 */
void wk_conn_wake(struct wk_conns *cs, uint32_t conn, uint32_t gen);

struct wk_conn *wk_conn_of_ref(const struct wk_conns *cs,
                               const struct wk_conn_ref *ref);

/*
 * Answer ref's request on c (from wk_conn_of_ref): encode resp (of type
 * t; its ResponseHeader's requestHandle and timestamp set here, a Bad
 * ServiceResult sends a ServiceFault, one too large a ServiceFault of
 * its own) into c's output, flushed with this iteration's writes; the
 * request counted.  resp stays the caller's; nothing else is touched
 * (not the request arena).  0; -EIO when encoding failed and the
 * connection is being closed.  worker/reply.h wk_reply_send is the way in.
 */
int wk_conn_answer(struct wk_conn *c, const struct wk_conn_ref *ref,
                   const struct ua_type *t, void *resp);

#endif /* WK_CONN_H */
