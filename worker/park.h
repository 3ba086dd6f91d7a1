/*
 * worker/park.h: sessions that outlive their worker (issue 19 item 2,
 * docs/architecture.md §11 "A worker's death").
 *
 * Each worker keeps every activated session of its own, as the blob that
 * moves a session between workers (worker/roam.h), in its slot's park: a
 * shared-memory region the broker owns (shm/park.h), so it outlives a
 * worker killed at any instruction.  A session is marked when it changes
 * (wk_park_touch: a service that changes its structure) and written once
 * at the end of the loop iteration, whatever the number of changes.  A
 * NotificationMessage sent changes only the session's progress
 * (wk_park_progress): its subscriptions' sequence numbers and kept
 * messages and its items' sent watermarks, a small record of its own
 * beside the blob, rewritten at the end of the iteration; the successor
 * applies it to the blob it goes with.
 *
 * The worker the broker starts in the slot of a dead one takes every
 * parked session over at start-up (wk_park_inherit), before it serves
 * anybody: the sessions are its own then, unbound, and time out as usual
 * or are activated by their clients, here or on any other worker (the
 * usual claim, worker/roam.h, finds them here: the token names this
 * slot).  The values their monitored items missed come from the broker's
 * change log (the sub layer's replay handler); what the log no longer
 * holds is counted and reported with the Overflow bit.
 *
 * Single-threaded, on the worker's loop.  No allocation after start-up:
 * the blob is packed into a buffer allocated once, then copied into the
 * park.
 */
#ifndef WK_PARK_H
#define WK_PARK_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"
#include "session.h"
#include "worker.h"

struct shm_park;
struct wk_roam_buf;

/* What a successor replays (handed to the sub layer). */
struct wk_park_log {
    const struct shm_park *k;
    uint64_t               from, to;    /* log entries [from, to) */
    int64_t                oldest_ts;   /* ServerTimestamp of entry from
                                         * (INT64_MIN: the log holds every
                                         * change since it began) */
};

/*
 * The sub layer's part (registered at start-up; arg theirs):
 *   pack, unpack  a session's subscriptions into / out of a blob, as for
 *                 a move (worker/roam.h); unpack sees b->park set and
 *                 leaves the values missed to replay, and b->prog: the
 *                 progress to apply to the blob (or NULL)
 *   progress      a session's progress (format in worker/sub_roam.c)
 *   progress_bytes  its exact size (packed straight into the park)
 *   replay        every logged change in lg for the items adopted: the
 *                 value changes that could not be given back (counted)
 *   settle        adoption done: drop interest in what nobody here
 *                 watches (a dead predecessor's bits)
 */
struct wk_park_handlers {
    void     (*pack)(void *arg, struct wk_session *s, struct wk_roam_buf *b);
    int      (*unpack)(void *arg, struct wk_session *s,
                       struct wk_roam_buf *b);
    void     (*progress)(void *arg, struct wk_session *s,
                         struct wk_roam_buf *b);
    uint64_t (*progress_bytes)(void *arg, struct wk_session *s);
    uint64_t (*replay)(void *arg, const struct wk_park_log *lg);
    void     (*settle)(void *arg);
    void      *arg;
};

/*
 * Map this slot's park (none in the segment, or limits.session_park_bytes
 * 0: w->park stays NULL and nothing is parked), register the
 * end-of-iteration writer, the once-a-second sweep and the session
 * listener.  0 or -errno.
 */
int wk_park_init(struct wk_worker *w, struct wk_loop *l);
void wk_park_fini(struct wk_worker *w);

/* Does a dead predecessor's park hold sessions (before wk_park_inherit)? */
bool wk_park_pending(const struct wk_worker *w);

/* The sub layer's handlers (at start-up).  0; -EINVAL without a park. */
int wk_park_on_subs(struct wk_worker *w, const struct wk_park_handlers *h);

/*
 * Take over the sessions a dead predecessor parked, then park them anew.
 * At start-up, after every layer and its handlers, before serving.
 * The number of sessions taken over.
 */
uint32_t wk_park_inherit(struct wk_worker *w);

/* s changed: its record is written at the end of this iteration. */
void wk_park_touch(struct wk_worker *w, const struct wk_session *s);
void wk_park_touch_index(struct wk_worker *w, uint32_t index);

/* s sent a NotificationMessage: its progress is written at the end of
 * this iteration (its whole record when it has none parked). */
void wk_park_progress(struct wk_worker *w, const struct wk_session *s);

/* Does a request of service stat (SHM_SVC_*) change what is parked? */
bool wk_park_service(uint8_t stat);

/* Count n value changes a taken-over session missed (the sub layer). */
void wk_park_lost(struct wk_worker *w, uint64_t n);

/* The last record written (bytes; tests, benchmarks). */
uint32_t wk_park_last_bytes(const struct wk_worker *w);

/* The last progress record written (bytes; tests, benchmarks). */
uint32_t wk_park_last_progress_bytes(const struct wk_worker *w);

#endif /* WK_PARK_H */
