/*
 * worker/worker.h: the worker process's state, shared by its files.
 *
 * One worker = one process = one libevent loop = one thread.  Nothing here
 * is shared with another process except through `seg` (shared memory).
 *
 *   worker/main.c      start-up: args, attach the segment, loop
 *   worker/conn.c      listener, connections, reads, writes (libevent)
 *   worker/session.c   sessions: pool, tokens, timeouts, binding
 *   worker/svc.c       service dispatch (decode, session check, handler)
 *   worker/svc_*.c     the service handlers
 *   worker/fanout.c    rings to and from the broker, notification blocks
 *   worker/stats.c     this worker's row of the worker table
 *   worker/alloc.c     the counting allocator
 */
#ifndef WK_WORKER_H
#define WK_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/securechannel.h"
#include "shm/layout.h"
#include "shm/limits.h"
#include "shm/nodestore.h"
#include "shm/segment.h"
#include "shm/value.h"

struct wk_session;
struct wk_conn;
struct wk_conns;
struct wk_fanout;
struct wk_pki;
struct wk_bcache;
struct event_base;

/* The whole worker. */
struct wk_worker {
    unsigned                  slot;         /* worker slot 0..63 */
    struct shm_segment        seg;
    struct shm_nodestore      ns;
    struct shm_values         vals;
    const struct shm_config  *conf;         /* the broker's snapshot */
    struct shm_worker        *row;          /* our stats row */
    struct shm_limits        *budget;       /* server-wide budgets
                                             * (shm/limits.h); NULL: the
                                             * pools alone limit */
    struct shm_throttle      *throttle;     /* failures per client, shared
                                             * (shm/throttle.h); NULL: none */
    struct ua_limits          limits;       /* decoding limits from conf */
    struct ua_sc_config       sc_conf;      /* channel limits from conf */
    struct event_base        *base;
    uint64_t                  now_ms;       /* monotonic, per loop iteration */
    uint64_t                  now_ns;       /* the same clock in ns */
    int64_t                   now_dt;       /* DateTime, per loop iteration */
    uint32_t                  next_channel_id;
    /* Sessions (worker/session.c). */
    struct wk_session        *sessions;     /* pool of conf->max_sessions */
    uint32_t                  nsessions;
    /* Random bytes for tokens and nonces (worker/session.c). */
    uint64_t                  rng[4];
    /* The connection layer (deferred responses) and the fan-out (rings,
     * doorbell, pending Writes); NULL in unit tests without them. */
    struct wk_conns          *conns;
    struct wk_fanout         *fanout;
    /* Certificate, key, trust lists (worker/pki.c); NULL: None only. */
    struct wk_pki            *pki;
    /* Encoded Browse results (worker/svc_browse.c); NULL: no cache. */
    struct wk_bcache         *bcache;
    volatile int              stopping;
};

/* Monotonic milliseconds and DateTime, read once per loop iteration. */
void wk_clock_update(struct wk_worker *w);

/* The counting allocator: every heap allocation after start-up shows in
 * the worker's `allocations` counter (STYLE §5). */
void *wk_alloc(struct wk_worker *w, size_t n);
void  wk_free(struct wk_worker *w, void *p);

/*
 * One unit of a server-wide budget (shm/limits.h) for a pool entry about
 * to be used: 0, or -ENOSPC when the server is at `max`.  Give it back when
 * the entry goes.  No budget (unit tests): always 0.
 */
static inline int
wk_budget_take(struct wk_worker *w, enum shm_limit_kind k, uint32_t max)
{
    return w->budget != NULL ? shm_limits_take(w->budget, w->slot, k, 1, max)
                             : 0;
}

static inline void
wk_budget_give(struct wk_worker *w, enum shm_limit_kind k)
{
    if (w->budget != NULL)
        shm_limits_give(w->budget, w->slot, k, 1);
}

#endif /* WK_WORKER_H */
