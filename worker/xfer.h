/*
 * worker/xfer.h: the worker-to-worker transport (docs/architecture.md
 * §11): one Unix stream socket per worker, <runtime_dir>/w<slot>.xfer,
 * through which another worker claims a session (or a subscription) this
 * worker holds, and gets it.  libevent-driven, non-blocking, bounded.
 *
 * One exchange per connection, the claimer connecting:
 *
 *   claimer                                  owner
 *     claim   hdr{kind, len} body  ------->  serve(kind, body)
 *             <-------  hdr{status, len} blob (len 0 unless Good)
 *     answer(status, blob) -> adopted?
 *     ack     1 byte (1: adopted, 0: not) ->  done(ticket, adopted)
 *     close                                  close
 *
 * The owner never times out once it sent a blob: it learns the outcome
 * from the ack byte, or from EOF (the claimer gave up, timed out or died:
 * not adopted).  The claimer times out (limits.session_move_timeout_ms)
 * only before its blob is complete; after adopting it writes the ack,
 * and an owner gone by then has nothing left to restore.  So a session is
 * never held by both, and lost only with a worker that dies holding it
 * (issue 19 item 2).
 *
 * Checks: the peer's uid (SO_PEERCRED) must be ours; a header with
 * another magic or version, a claim body over WK_XFER_CLAIM_MAX, a blob
 * over limits.max_session_move_bytes end the exchange (nothing adopted).
 * At most WK_XFER_LINKS exchanges at a time, both directions together; a
 * claim beyond is refused at once, an accept beyond closed at once.
 *
 * Upward only through the handlers registered at start-up (the session
 * layer, worker/roam.c).  A blob is allocated per exchange (wk_alloc,
 * counted): a hand-over is rare, never per request.
 *
 * Single-threaded, on the worker's loop.
 */
#ifndef WK_XFER_H
#define WK_XFER_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "loop.h"
#include "proto/types.h"
#include "worker.h"

#define WK_XFER_LINKS      16       /* exchanges at a time */
#define WK_XFER_CLAIM_MAX  1024     /* claim body bytes */
#define WK_XFER_MAGIC      0x46584155u  /* "UAXF" */
#define WK_XFER_VERSION    1u
#define WK_XFER_HDR        16

/*
 * The layer above (arg theirs):
 *
 * serve   owner side: a claim of kind (body[len]) came: fill *blob (from
 *         wk_alloc; the transport frees it) and *blob_len, and *ticket
 *         naming the hand-over, and return Good; or return the Bad
 *         status to answer (nothing handed over, done never called).
 * done    owner side: the claimer adopted what ticket names (true), or
 *         not (false: refused, gone, closed).
 * answer  claimer side: the answer to claim cookie: status and blob
 *         (NULL, 0 unless Good); the transport's own failures come as
 *         BadTimeout (no answer in time) or BadCommunicationError.
 *         Returns whether it adopted what the blob holds.
 */
struct wk_xfer_handlers {
    ua_status (*serve)(void *arg, uint32_t kind, const uint8_t *body,
                       uint32_t len, uint8_t **blob, uint32_t *blob_len,
                       uint64_t *ticket);
    void      (*done)(void *arg, uint64_t ticket, bool adopted);
    bool      (*answer)(void *arg, uint64_t cookie, ua_status st,
                        const uint8_t *blob, uint32_t len);
    void       *arg;
};

struct wk_xfer;

/* One exchange. */
struct wk_xfer_link {
    struct event     ev;            /* EV_READ or EV_WRITE on fd */
    struct event     tmo;           /* the claimer's deadline */
    struct wk_xfer  *x;
    int              fd;            /* -1: free */
    uint8_t          state;         /* enum in xfer.c */
    uint8_t          ev_on, tmo_on;
    uint8_t          hdr[WK_XFER_HDR];
    uint32_t         kind;
    uint64_t         cookie;        /* claimer: the caller's;
                                     * owner: the ticket */
    uint8_t         *buf;           /* body being read or written */
    uint32_t         len, pos;
    ua_status        status;
};

struct wk_xfer {
    struct wk_worker       *w;
    struct wk_loop         *loop;
    struct wk_xfer_handlers h;
    int                     lfd;    /* the listening socket, -1: none */
    struct event            lev;
    bool                    lev_on;
    char                    path[SHM_CONF_STR + 16];
    struct wk_xfer_link     links[WK_XFER_LINKS];
    /* Counters (worker/roam.c reports them). */
    uint64_t                claims, served, refused_peer, failed;
    uint64_t                bytes_out, bytes_in;
};

/*
 * Bind and listen on <runtime_dir>/w<slot>.xfer (an old file of that name
 * is removed first) and register the handlers.  0 or -errno.
 */
int wk_xfer_init(struct wk_xfer *x, struct wk_worker *w, struct wk_loop *l,
                 const struct wk_xfer_handlers *h);

/* Close every exchange (the owner side counts as not adopted: nothing is
 * restored any more, the worker stops) and the socket; remove the file. */
void wk_xfer_clear(struct wk_xfer *x);

/*
 * Claim kind (body[len], at most WK_XFER_CLAIM_MAX) from the worker in
 * slot; the answer comes through the answer handler with cookie, never
 * from inside this call.  0; -EBUSY (no free exchange), -EINVAL, or
 * -errno of the socket (the worker is not there: ENOENT, ECONNREFUSED).
 */
int wk_xfer_claim(struct wk_xfer *x, unsigned slot, uint32_t kind,
                  const void *body, uint32_t len, uint64_t cookie);

#endif /* WK_XFER_H */
