/*
 * broker/feed.h: the feed, a data source of the broker
 * (docs/architecture.md §7): text batches of values (the format is
 * broker/feedline.h, docs/feed.md) on a nanomsg NN_PULL socket
 * (shm/feed.c), applied through the value path (broker/value.h,
 * bk_value_write(): one value batch per feed batch) like every other
 * value change.  Blank lines and lines starting with '#' are skipped.
 *
 * Sockets: feed.listen (default ipc://<runtime_dir>/feed.ipc; tcp:// on
 * request) takes batches with no answer, for producers; an NN_REP socket
 * at ipc://<runtime_dir>/feed-ctl.ipc takes a batch and answers a report
 * (one line per refused line, then "ok N failed M"), for `uabroker feed`
 * (broker/feedcmd.h).
 *
 * Back-pressure: before each batch the feed asks the fan-out whether a
 * worker (or the historian) is behind (bk_fanout_backlogged).  While one
 * is, it stops reading both sockets and looks again every millisecond,
 * for at most feed.backpressure_ms per wait; the producers' sends block
 * or queue meanwhile (nanomsg's buffers), so a burst of events reaches
 * the historian whole instead of exhausting the block pool.  A wait that
 * outlasts the limit (a consumer stuck, not slow) lets the feed go on:
 * what the pool cannot hold is then lost and counted as before.  Counted
 * in /stats fanout feed_waits, feed_wait_ms, feed_wait_expired.
 */
#ifndef BK_FEED_H
#define BK_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "addrspace.h"
#include "config.h"
#include "proto/arena.h"
#include "proto/types.h"
#include "shm/feed.h"

#define BK_FEED_CTL_NAME   "feed-ctl.ipc"
#define BK_FEED_PULL_NAME  "feed.ipc"
#define BK_FEED_URL_MAX    (BK_CONF_STR_MAX + 16)

/* The outcome of a batch. */
struct bk_feed_result {
    uint32_t lines;                 /* value lines (not blank, not #) */
    uint32_t ok;
    uint32_t failed;
    uint32_t events;                /* of ok: event lines */
};

struct bk_feed {
    struct bk_addrspace *as;
    struct shm_feed      pull;
    struct shm_feed      rep;
    struct event         pull_ev;
    struct event         rep_ev;
    struct event         hold_ev;       /* the hold's timer */
    struct bk_fanout    *fanout;        /* NULL: never held */
    uint32_t             hold_max_ms;   /* feed.backpressure_ms */
    bool                 holding;       /* sockets not read (timer on) */
    bool                 behind;        /* a wait began, not yet over */
    bool                 expired;       /* it outlasted hold_max_ms */
    uint64_t             behind_ms;     /* monotonic, when it began */
    char                 url[BK_FEED_URL_MAX];
    uint8_t             *buf;           /* one batch */
    size_t               cap;
    char                *report;        /* one report */
    size_t               report_cap;
    struct ua_arena      arena;
    uint8_t             *arena_buf;
    size_t               arena_cap;
};

/*
 * Parse and apply a batch (lines separated by \n, \r\n accepted) at
 * DateTime now.  A report line "line N: STATUS: reason\n" for each refused
 * line goes to report[rcap] (truncated when full; may be NULL); *res
 * counts.  The arena is reset per line.
 */
void bk_feed_batch(struct bk_addrspace *as, const char *text, size_t len,
                   int64_t now, struct ua_arena *a, char *report, size_t rcap,
                   struct bk_feed_result *res);

/*
 * Bind the feed sockets (after the runtime directory exists) and serve
 * them on base.  0, or -1 with a message in err.
 */
int bk_feed_init(struct bk_feed *fd, struct event_base *base,
                 struct bk_addrspace *as, const struct bk_config *c,
                 char *err, size_t errlen);

/* Close the sockets, free the buffers. */
void bk_feed_clear(struct bk_feed *fd);

/*
 * The URL of the feed socket name (BK_FEED_PULL_NAME, BK_FEED_CTL_NAME)
 * of the broker whose configuration is c into url[cap]:
 * ipc://<runtime_dir>/<name>, or feed.listen for the PULL socket when set.
 */
void bk_feed_url(const struct bk_config *c, const char *name, char *url,
                 size_t cap);

#endif /* BK_FEED_H */
