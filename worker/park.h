/*
 * worker/park.h: sessions that outlive their worker (issue 19 item 2,
 * docs/architecture.md §11 "A worker's death").
 *
 * Each worker keeps every activated session of its own, as the blob that
 * moves a session between workers (worker/roam.h), in its slot's park: a
 * shared-memory region the broker owns (shm/park.h), so it outlives a
 * worker killed at any instruction.  A session is marked when it changes
 * (wk_park_touch: a service that changes its structure) and written once
 * at the end of the loop iteration, whatever the number of changes.
 *
 * A NotificationMessage sent changes only the session's progress, written
 * when it is sent (wk_park_sent, before the response goes out): the
 * message is copied once into the park's kept ring, where it stays until
 * the client acknowledges it or the retransmission queue lets it go
 * (wk_park_dropped), and an entry naming it, with the watermarks of the
 * items whose queue it emptied, is appended to the session's progress
 * journal.  A journal that is full is replaced by a snapshot of the
 * subscriptions' progress (the sub layer's).  The successor applies
 * blob, snapshot and journal, in that order (struct wk_park_prog).
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
 * park; the progress is written straight into it.
 */
#ifndef WK_PARK_H
#define WK_PARK_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"
#include "shm/layout.h"
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

/* One kept message of a parked session's progress (successor). */
struct wk_park_kept {
    uint32_t       seq, type, len;
    int64_t        time;
    const uint8_t *body;            /* in the park */
};

/* A parked session's progress, decoded by the successor (park.c). */
struct wk_park_prog;

/*
 * The sub layer's part (registered at start-up; arg theirs):
 *   pack, unpack  a session's subscriptions into / out of a blob, as for
 *                 a move (worker/roam.h); unpack sees b->park set and
 *                 leaves the values missed to replay, and b->prog: the
 *                 progress to apply to the blob (or NULL)
 *   snapshot      a session's progress as snapshot entries (format in
 *                 worker/park.c), each kept message named by the handle
 *                 wk_park_sent gave it
 *   snapshot_bytes  its exact size (written straight into the park)
 *   replay        every logged change in lg for the items adopted: the
 *                 value changes that could not be given back (counted)
 *   settle        adoption done: drop interest in what nobody here
 *                 watches (a dead predecessor's bits)
 */
struct wk_park_handlers {
    void     (*pack)(void *arg, struct wk_session *s, struct wk_roam_buf *b);
    int      (*unpack)(void *arg, struct wk_session *s,
                       struct wk_roam_buf *b);
    void     (*snapshot)(void *arg, struct wk_session *s,
                         struct wk_roam_buf *b);
    uint64_t (*snapshot_bytes)(void *arg, struct wk_session *s);
    uint64_t (*replay)(void *arg, const struct wk_park_log *lg);
    void     (*settle)(void *arg);
    void      *arg;
};

/* The progress entries (little-endian u32 unless said; worker/park.c):
 * a snapshot of one subscription, a message sent, one let go. */
#define WK_PARK_E_SUB   3u
#define WK_PARK_E_SEND  1u
#define WK_PARK_E_DROP  2u
#define WK_PARK_NO_KEPT UINT32_MAX      /* a handle: not in the park */

/* Items first .. first + count - 1 (ids) emptied by a message, each
 * with watermark wm (stored as is: 16 bytes, little-endian). */
struct wk_park_run {
    uint32_t first, count;
    int64_t  wm;
};

/* A NotificationMessage sent (wk_park_sent). */
struct wk_park_msg {
    uint32_t                  sub_id, seq, type, len;
    int64_t                   time;     /* publishTime */
    const uint8_t            *body;
    const struct wk_park_run *runs;     /* the items whose queue it
                                         * emptied, and their watermarks */
    uint32_t                  nruns;
    uint32_t                  kept;     /* wk_park_keep's handle */
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

/*
 * s is sending a NotificationMessage of body[len] (emitted; before it is
 * kept): a copy into the park's kept ring.  Its handle (for the kept
 * message, wk_park_sent, wk_park_dropped) or WK_PARK_NO_KEPT (no park,
 * not parked, no room).  wk_park_sent follows before anything else.
 */
uint32_t wk_park_keep(struct wk_worker *w, const struct wk_session *s,
                      const uint8_t *body, uint32_t len);

/* The body of the copy of handle kept (not WK_PARK_NO_KEPT), live
 * until wk_park_dropped lets it go: the retransmission store's body of
 * that message (worker/retx.c keeps no second copy). */
const uint8_t *wk_park_kept_body(const struct wk_worker *w, uint32_t kept);

/* s sent m (kept; before the response goes out): the progress journal
 * told (m->kept WK_PARK_NO_KEPT: the whole record is rewritten at the
 * end of the iteration). */
void wk_park_sent(struct wk_worker *w, const struct wk_session *s,
                  const struct wk_park_msg *m);

/* A kept message of subscription sub_id of session index sess (WK_NIL:
 * none) was let go (acknowledged, or dropped from the queue): the
 * journal told, then the copy of handle kept freed. */
void wk_park_dropped(struct wk_worker *w, uint32_t sess, uint32_t sub_id,
                     uint32_t seq, uint32_t kept);

/* The successor, unpacking a blob with b->prog set: */
/* sub_id's sequence number and sent flag from the progress; false: none. */
bool wk_park_prog_sub(const struct wk_park_prog *g, uint32_t sub_id,
                      uint32_t *seq, uint8_t *sent);
/* Is the blob's kept message seq of sub_id still kept? */
bool wk_park_prog_keeps(const struct wk_park_prog *g, uint32_t sub_id,
                        uint32_t seq);
/* sub_id's kept messages the park holds, oldest first: *k from 0;
 * false past the last. */
bool wk_park_prog_kept(const struct wk_park_prog *g, uint32_t sub_id,
                       uint32_t *k, struct wk_park_kept *out);
/* Item item_id of sub_id: its sent watermark, 0 unknown. */
int64_t wk_park_prog_wm(const struct wk_park_prog *g, uint32_t sub_id,
                        uint32_t item_id);

/* Does a request of service stat (SHM_SVC_*) change what is parked?
 * Inline, a mask: every request with a session asks (worker/svc.c). */
#define WK_PARK_SERVICES                                                   \
    ((UINT64_C(1) << SHM_SVC_ACTIVATE_SESSION)                             \
     | (UINT64_C(1) << SHM_SVC_CREATE_SUBSCRIPTION)                        \
     | (UINT64_C(1) << SHM_SVC_MODIFY_SUBSCRIPTION)                        \
     | (UINT64_C(1) << SHM_SVC_SET_PUBLISHING_MODE)                        \
     | (UINT64_C(1) << SHM_SVC_DELETE_SUBSCRIPTIONS)                       \
     | (UINT64_C(1) << SHM_SVC_TRANSFER_SUBSCRIPTIONS)                     \
     | (UINT64_C(1) << SHM_SVC_CREATE_MONITORED_ITEMS)                     \
     | (UINT64_C(1) << SHM_SVC_MODIFY_MONITORED_ITEMS)                     \
     | (UINT64_C(1) << SHM_SVC_SET_MONITORING_MODE)                        \
     | (UINT64_C(1) << SHM_SVC_SET_TRIGGERING)                             \
     | (UINT64_C(1) << SHM_SVC_DELETE_MONITORED_ITEMS))

static inline bool
wk_park_service(uint8_t stat)
{
    _Static_assert(SHM_SVC_MAX <= 64, "one bit per service");
    return stat < 64 && ((WK_PARK_SERVICES >> stat) & 1u) != 0;
}

/* Count n value changes a taken-over session missed (the sub layer). */
void wk_park_lost(struct wk_worker *w, uint64_t n);

/* The last record written (bytes; tests, benchmarks). */
uint32_t wk_park_last_bytes(const struct wk_worker *w);

/* The last progress snapshot written (bytes; tests, benchmarks). */
uint32_t wk_park_last_progress_bytes(const struct wk_worker *w);

#endif /* WK_PARK_H */
