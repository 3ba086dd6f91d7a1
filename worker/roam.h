/*
 * worker/roam.h: sessions that move between workers (issue 19, Part 4
 * §5.7.3, §6.7; docs/architecture.md §11).
 *
 * A client whose connection dropped reconnects and, through SO_REUSEPORT,
 * lands on any worker B; its ActivateSession names a session that worker
 * A holds (the token's top byte names the worker that created it; A may
 * have handed it on, then A forwards the claim).  B holds the request
 * (its connection reads nothing: wk_conn_result.wait), claims the session
 * over the transport (worker/xfer.h), and A, after its checks, serializes
 * the session and its subscriptions into a blob, unbinds it from its old
 * channel and waits.  B rebuilds it (the sub layer's handlers registered
 * here), acknowledges, and only then finishes the held ActivateSession as
 * if the session had always been here (client signature over the moved
 * nonce, user token, rebind rules).  A forgets the session on the ack, or
 * keeps it, unbound, without one.
 *
 * Rules (docs/architecture.md §11 gives the reasons):
 *   - A claim is made only for a token of the right shape (ns=0 GUID, a
 *     worker slot byte 1..workers, an index inside the pool): anything
 *     else is BadSessionIdInvalid at once, nobody asked.
 *   - The owner refuses (nothing moves): an unknown token or a session
 *     never activated (BadSessionIdInvalid), one being moved already
 *     (BadSessionIdInvalid: the second of two claims at once), a secured
 *     session claimed for a channel of another certificate or of no
 *     security, or an unsecured one for a secured channel
 *     (BadSecurityChecksFailed).
 *   - An ActivateSession that fails on B after the move (a bad signature,
 *     a rejected user token) leaves the session on B, unbound, exactly as
 *     a failed ActivateSession on A would have left it on A.
 *   - No owner, or no answer within limits.session_move_timeout_ms:
 *     BadSessionIdInvalid, the held connection goes on.
 *
 * The blob is versioned and self-contained (no pointer, no index of the
 * sender's pools): the same bytes could be parked in shared memory or
 * handed to a successor worker (items 2 and 3 of issue 19).
 *
 * Single-threaded, on the worker's loop.
 */
#ifndef WK_ROAM_H
#define WK_ROAM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "conn.h"
#include "loop.h"
#include "proto/types.h"
#include "session.h"
#include "worker.h"

#define WK_ROAM_VERSION   2u        /* of the blob (2: the user id) */
#define WK_ROAM_PENDING   16        /* claims waiting at a time */
#define WK_ROAM_HOPS      4         /* forwards a claim follows */
#define WK_ROAM_SUB_TRIED 16        /* subscriptions one request claims */

struct wk_park_log;
struct wk_park_prog;

/* A blob being written or read: bounds-checked, little-endian. */
struct wk_roam_buf {
    struct wk_worker *w;
    uint8_t          *p;            /* writing: wk_alloc'd, grows */
    uint32_t          len;          /* written / readable bytes */
    uint32_t          cap;
    uint32_t          pos;          /* reading */
    uint32_t          max;          /* limits.max_session_move_bytes */
    bool              bad;          /* overrun, or out of room */
    const struct wk_park_log *park; /* reading a parked session of a dead
                                     * worker (worker/park.h), NULL: a
                                     * move */
    bool              parking;      /* writing one into the park: what
                                     * only a move needs is left out */
    const struct wk_park_prog *prog; /* reading a parked session: its
                                     * progress (worker/park.h), or NULL */
    uint32_t          version;      /* reading: the blob's */
};

/*
 * Writing: n bytes at the end, the buffer grown as needed (up to max;
 * past it, or out of memory: b->bad, nothing written from then on).
 * Inline, the room there checked first: a session's blob is a few
 * hundred of these per monitored item, and the park writes one per
 * structure change (worker/park.h).
 */
void wk_roam_put_grow(struct wk_roam_buf *b, const void *p, uint32_t n);

static inline void
wk_roam_put(struct wk_roam_buf *b, const void *p, uint32_t n)
{
    if (n != 0 && !b->bad && b->cap - b->len >= n) {
        memcpy(b->p + b->len, p, n);
        b->len += n;
    } else {
        wk_roam_put_grow(b, p, n);
    }
}

/* Numbers as the host has them: little-endian (x86-64, arm64). */
static inline void
wk_roam_put_u8(struct wk_roam_buf *b, uint8_t v)
{
    wk_roam_put(b, &v, 1);
}

static inline void
wk_roam_put_u16(struct wk_roam_buf *b, uint16_t v)
{
    wk_roam_put(b, &v, 2);
}

static inline void
wk_roam_put_u32(struct wk_roam_buf *b, uint32_t v)
{
    wk_roam_put(b, &v, 4);
}

static inline void
wk_roam_put_u64(struct wk_roam_buf *b, uint64_t v)
{
    wk_roam_put(b, &v, 8);
}

static inline void
wk_roam_put_f64(struct wk_roam_buf *b, double v)
{
    wk_roam_put(b, &v, 8);
}
/* Reading: zeroes past the end, and b->bad set. */
void wk_roam_get(struct wk_roam_buf *b, void *p, uint32_t n);
uint8_t wk_roam_get_u8(struct wk_roam_buf *b);
uint16_t wk_roam_get_u16(struct wk_roam_buf *b);
uint32_t wk_roam_get_u32(struct wk_roam_buf *b);
uint64_t wk_roam_get_u64(struct wk_roam_buf *b);
double wk_roam_get_f64(struct wk_roam_buf *b);
/* n bytes in place (NULL and b->bad when fewer are left). */
const uint8_t *wk_roam_get_span(struct wk_roam_buf *b, uint32_t n);

/*
 * What the layer above (the subscriptions) keeps of a session, moved with
 * it (registered at start-up; arg theirs):
 *   pack    append s's state to b (b->bad on failure)
 *   unpack  rebuild it from b for s (adopted here): 0, or -1 when it does
 *           not fit (then everything of s it rebuilt is gone again)
 *   lost    value changes its items missed in the move so far (stats)
 */
struct wk_roam_handlers {
    void      (*pack)(void *arg, struct wk_session *s, struct wk_roam_buf *b);
    int       (*unpack)(void *arg, struct wk_session *s,
                        struct wk_roam_buf *b);
    /* One subscription (TransferSubscriptions from another worker):
     * pack_sub: subscription sub_id for a session of user: Good with
     * *ticket (it is detached from its session until done_sub), or the
     * Bad status to answer; unpack_sub: rebuild it for s: 0 or -1. */
    ua_status (*pack_sub)(void *arg, uint32_t sub_id, uint8_t user,
                          struct wk_roam_buf *b, uint64_t *ticket);
    void      (*done_sub)(void *arg, uint64_t ticket, bool adopted);
    int       (*unpack_sub)(void *arg, struct wk_session *s,
                            struct wk_roam_buf *b);
    /* The ids of s's subscriptions (at most max into ids): where they
     * went is remembered with the session's forward. */
    uint32_t  (*sub_ids)(void *arg, struct wk_session *s, uint32_t *ids,
                         uint32_t max);
    /* A claim goes out (on: before it is sent) / none waits any more
     * (off): what comes meanwhile may belong to what arrives (the sub
     * layer keeps the events of the window, worker/sub_roam.c). */
    void      (*window)(void *arg, bool on);
    void       *arg;
};

struct wk_roam;

/*
 * Create w->roam: the transport (worker/xfer.h) on the loop, the pending
 * claims, the forwarding table (conf->max_sessions entries).  0 or
 * -errno (the worker runs on without moving sessions).
 */
int wk_roam_init(struct wk_worker *w, struct wk_loop *l);
void wk_roam_fini(struct wk_worker *w);

/* The sub layer's handlers (at start-up).  0; -EINVAL without w->roam. */
int wk_roam_on_subs(struct wk_worker *w, const struct wk_roam_handlers *h);

/*
 * ActivateSession of a token not found here (worker/svc_session.c; rq the
 * held request, ch its channel, secured: whether it is secured).  Returns
 * UA_GOOD with *wait set: the request waits (ctx->again, ctx->wait) until
 * the claim is answered; a Bad status: answer it (BadSessionIdInvalid,
 * BadSecurityChecksFailed...); UA_GOOD without *wait: the session is here
 * now, look it up again.
 */
ua_status wk_roam_claim(struct wk_worker *w, const struct wk_conn_req *rq,
                        const struct ua_nodeid *token,
                        const uint8_t *peer_thumb, bool secured,
                        bool *wait);

/*
 * TransferSubscriptions to session s of subscription sub_id, which
 * another worker holds (its id's top bits name it; worker/svc_sub.c):
 * like wk_roam_claim, the request waits (UA_GOOD, *wait) while the
 * subscription comes; afterwards it is found here, or it is not (the
 * claim failed: the status).  An id claimed once for this request is not
 * claimed again (BadSubscriptionIdInvalid without waiting).
 */
ua_status wk_roam_claim_sub(struct wk_worker *w,
                            const struct wk_conn_req *rq,
                            struct wk_session *s, uint32_t sub_id,
                            bool *wait);

/* Is s being handed to another worker (requests on it: as if unknown)? */
bool wk_roam_moving(const struct wk_worker *w, const struct wk_session *s);

/* Held request of connection conn done, or the connection gone. */
void wk_roam_release(struct wk_worker *w, uint32_t conn);

/* Count n value changes lost in a move (the sub layer). */
void wk_roam_lost(struct wk_worker *w, uint64_t n);
/* Count events of a move's window carried and (maybe) lost. */
void wk_roam_events(struct wk_worker *w, uint64_t carried, uint64_t lost);

/*
 * Retire (a rolling restart, docs/operations.md "Rolling restart"): the
 * caller has stopped accepting and closed every connection; every
 * activated session here is pushed to a peer (a notice on the peer's
 * socket; the peer claims it back like a client's ActivateSession would,
 * without a channel), round robin over the other workers, a session
 * again after 1 s if it is still here.  done(arg) once none is left, or
 * after 5 s (the rest are lost: logged), or at once with no other worker.
 * 0, or -errno (then done is never called).
 */
int wk_roam_retire(struct wk_worker *w, void (*done)(void *arg), void *arg);

/*
 * The session's part of the blob (after its version and type; the format
 * at the top of worker/roam.c), and a session rebuilt from it here with
 * its subscriptions (subs->unpack): the session, or NULL (nothing of it
 * stays).  worker/park.c keeps sessions in this format.
 */
void wk_roam_session_pack(const struct wk_session *s, struct wk_roam_buf *b);
struct wk_session *wk_roam_session_adopt(struct wk_worker *w,
                                         struct wk_roam_buf *b,
                                         const struct wk_roam_handlers *subs);

/* The last hand-over's blob size (bytes; tests, benchmarks). */
uint32_t wk_roam_last_bytes(const struct wk_worker *w);

#endif /* WK_ROAM_H */
