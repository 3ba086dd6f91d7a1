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
#include "worker.h"

/* struct wk_conn.flags */
#define WK_CONN_USED     0x01   /* taken from the pool */
#define WK_CONN_DIRTY    0x02   /* on the dirty list: output to flush */
#define WK_CONN_CLOSING  0x04   /* on the closing list: reap at the tick */
#define WK_CONN_PAUSED   0x08   /* reading stopped: output backlog */
#define WK_CONN_STASH    0x10   /* `in` holds input not yet processed */
#define WK_CONN_WRITING  0x20   /* wev is added: waiting for POLLOUT */
#define WK_CONN_CHANNEL  0x40   /* counted in the row's `channels` */

struct wk_conns;

/* One TCP connection = one secure channel.  Lives in the pool forever. */
struct wk_conn {
    struct event      rev;          /* EV_READ | EV_PERSIST on fd */
    struct event      wev;          /* EV_WRITE | EV_PERSIST, when blocked */
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

#endif /* WK_CONN_H */
