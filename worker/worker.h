/*
 * worker/worker.h: the base every file of worker/ may include: the
 * worker's root object, its clock, its allocator and its server-wide
 * budgets.  What each layer keeps is its own (its header); the root
 * only points at it.  The layers, lowest first (worker/LAYERS,
 * docs/architecture.md §5.3):
 *
 *   base    worker.h, clock.c, alloc.c
 *   net     the loop, its timers and statistics; listen and admission;
 *           connections, the RSA step scheduler, buffer pools
 *   link    the shared-memory rings to and from the broker
 *   core    nodes, the attribute reader, sessions, logins, PKI, audit
 *   svc     dispatch and the services
 *   sub     subscriptions and monitored items
 *   main.c  creates everything and wires the handlers
 *
 * A file calls down only; what flows up goes through handlers registered
 * at start-up (main.c wires them).
 *
 * One worker = one process = one libevent loop = one thread.  Nothing here
 * is shared with another process except through `seg` (shared memory).
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
struct wk_roam;
struct wk_session_listeners;
struct wk_conns;
struct wk_reply_hook;
struct wk_link;
struct wk_logins;
struct wk_pki;
struct wk_bcache;
struct wk_svc;
struct wk_writes;
struct wk_calls;
struct wk_history;
struct wk_histevent;
struct wk_histupds;
struct wk_subs;
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
    /* Sessions (worker/session.c) and who listens for a client's
     * CloseSession. */
    struct wk_session        *sessions;     /* pool of conf->max_sessions */
    uint32_t                  nsessions;
    struct wk_session_listeners *session_listeners;
    /* Random bytes for tokens and nonces (worker/session.c). */
    uint64_t                  rng[4];
    /* Sessions that moved here (worker/session.c): an open-addressing
     * table of pool indices keyed by their tokens' random bits. */
    uint32_t                 *guests;       /* [guests_cap], UINT32_MAX:
                                             * empty */
    uint32_t                  guests_cap;   /* a power of two */
    uint32_t                  nguests;
    /* core: sessions moving between workers (worker/roam.c); NULL:
     * they never move (unit tests, one worker). */
    struct wk_roam           *roam;
    /* core: this slot's parked sessions (worker/park.c); NULL: none
     * (unit tests, limits.session_park_bytes 0). */
    struct wk_park           *park;
    /* net: the connections (deferred responses); NULL in unit tests,
     * which may set reply_hook to capture deferred responses instead
     * (worker/reply.h). */
    struct wk_conns          *conns;
    const struct wk_reply_hook *reply_hook;
    /* link: the rings to and from the broker; NULL: none. */
    struct wk_link           *link;
    /* core: logins in steps, per connection (worker/login.c); certificate,
     * key, trust lists (worker/pki.c; NULL: None only). */
    struct wk_logins         *logins;
    struct wk_pki            *pki;
    uint64_t                  audit_seq;    /* EventIds (worker/audit.c) */
    /* svc: the dispatch table (worker/svc.c); encoded Browse results
     * (worker/svc_browse.c; NULL: no cache); pending Writes and Calls
     * (worker/svc_write.h, worker/svc_call.h). */
    struct wk_svc            *svc;
    struct wk_bcache         *bcache;
    struct wk_writes         *writes;
    struct wk_calls          *calls;
    /* HistoryRead's reader of the history store (worker/svc_history.c);
     * NULL: not registered. */
    struct wk_history        *history;
    /* The Value of a SHM_NF_HIST_ARCHIVE node (StartOfArchive,
     * StartOfOnlineArchive), read from the history store by
     * worker/histarchive.c: true when it answered *dv; NULL or false:
     * the slot's value.  Called by worker/attr.c. */
    bool (*archive_value)(struct wk_worker *w, uint32_t node, int32_t ttr,
                          struct ua_arena *arena, struct ua_datavalue *dv);
    /* ReadEventDetails' reader (worker/svc_histevent.c). */
    struct wk_histevent      *histevent;
    /* HistoryUpdate's pending updates (worker/svc_histupd.c). */
    struct wk_histupds       *histupd;
    /* sub: subscriptions and monitored items (worker/sub.h). */
    struct wk_subs           *subs;
    volatile int              stopping;
    int                       retiring;     /* SIGUSR2 (worker/main.c) */
};

/* Monotonic milliseconds and DateTime, read once per loop iteration. */
void wk_clock_update(struct wk_worker *w);

/* The counting allocator: every heap allocation after start-up shows in
 * the worker's `allocations` counter (docs/style.md §5). */
void *wk_alloc(struct wk_worker *w, size_t n);
void *wk_calloc(struct wk_worker *w, size_t n, size_t size);
void *wk_calloc_present(struct wk_worker *w, size_t n, size_t size);
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
