/*
 * broker/feed.h: the feed, a data source of the broker
 * (docs/architecture.md §7): text batches of values on a nanomsg NN_PULL
 * socket (shm/feed.c), applied through the value path (broker/value.h,
 * bk_value_write(): one value batch per feed batch) like every other value
 * change.  The format is in docs/feed.md:
 *
 *   NODEID=VALUE[;status=STATUSCODE][;ts=ISO8601]      one per line
 *
 * NODEID is the standard string form (i=2258, ns=1;s=v0, ns=1;g=GUID,
 * ns=1;b=BASE64); VALUE is typed by the node's DataType (numbers,
 * true/false, strings quoted or bare, [a,b,c] arrays, ISO 8601 DateTimes,
 * GUIDs, base64 ByteStrings).  Blank lines and lines starting with '#' are
 * skipped.
 *
 * Sockets: feed.listen (default ipc://<runtime_dir>/feed.ipc; tcp:// on
 * request) takes batches with no answer, for producers; an NN_REP socket
 * at ipc://<runtime_dir>/feed-ctl.ipc takes a batch and answers a report
 * (one line per refused line, then "ok N failed M"), for `uabroker feed`.
 *
 * The feed is the values' owner: it writes Variables whatever their
 * AccessLevel (but never namespace 0, the server's own), with the type,
 * ValueRank and ArrayDimensions checks of a Write (broker/write.h).
 */
#ifndef BK_FEED_H
#define BK_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
#define BK_FEED_WHY_MAX    160

/* One parsed line. */
struct bk_feed_value {
    uint32_t          node;         /* node index */
    uint32_t          slot;
    struct ua_variant v;            /* in the arena */
    ua_status         status;       /* ;status= or Good */
    int64_t           source_ts;    /* ;ts= or 0 (now) */
    bool              has_ts;
};

/* The outcome of a batch. */
struct bk_feed_result {
    uint32_t lines;                 /* value lines (not blank, not #) */
    uint32_t ok;
    uint32_t failed;
    uint32_t events;                /* of ok: event lines */
};

#define BK_FEED_EVENT_MAX      8192     /* bytes of one event record */
#define BK_FEED_EVENT_SEVERITY 500      /* no severity= */

struct bk_feed {
    struct bk_addrspace *as;
    struct shm_feed      pull;
    struct shm_feed      rep;
    struct event         pull_ev;
    struct event         rep_ev;
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
 * Parse one line (no newline) against the node store: NodeId, value typed
 * by the node's DataType, options.  UA_GOOD with *out filled (the Variant
 * in a); else the line's status with a reason in why[whylen].  Pure.
 */
ua_status bk_feed_parse_line(const struct shm_nodestore *ns, const char *line,
                             size_t len, struct ua_arena *a,
                             struct bk_feed_value *out, char *why,
                             size_t whylen);

/*
 * The value text s[n] as a Variant typed by DataType node dt (scalar or
 * [a,b,c]; the syntax of a line's VALUE), in a.  UA_GOOD, or the status
 * with a reason in why.  The methods' output arguments use it
 * (broker/methods.c).
 */
ua_status bk_feed_value_dt(const struct shm_nodestore *ns, uint32_t dt,
                           const char *s, size_t n, struct ua_arena *a,
                           struct ua_variant *v, char *why, size_t whylen);

/*
 * Print v in the VALUE syntax (what bk_feed_value_dt reads back) into
 * buf[cap], NUL-terminated: its length, or -1 when it does not fit or has
 * a type the syntax has no form for.  An empty Variant prints nothing.
 */
int bk_feed_print(const struct ua_variant *v, char *buf, size_t cap);

/* A NodeId in its standard string form (i=, ns=1;s=, g=, b=) into buf. */
void bk_feed_print_nodeid(const struct ua_nodeid *id, char *buf, size_t cap);

/*
 * Parse an event line (docs/feed.md "Events"), `event=SOURCE[;key=value]...`
 * at DateTime now into an event record built in buf[cap] (*ev).  UA_GOOD,
 * or the line's status with a reason in why[whylen].  Pure.
 */
struct bk_event;
ua_status bk_feed_parse_event(const struct shm_nodestore *ns,
                              const char *line, size_t len, int64_t now,
                              struct ua_arena *a, struct bk_event *ev,
                              uint8_t *buf, uint32_t cap, char *why,
                              size_t whylen);

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
 * `uabroker [options] feed [--push] [--url URL] (LINE... | -)`: send the
 * lines (each argument one line; "-": standard input) to the broker whose
 * configuration is c.  Default: to its control socket, waiting for the
 * report, printed on err (one line per refused line).  --push: fire and
 * forget to the feed socket (feed.listen, or --url).  Exit code: 0 all
 * applied, 1 some refused, 2 usage error or no broker.
 */
int bk_feed_command(const struct bk_config *c, int argc, char **argv,
                    FILE *in, FILE *out, FILE *err);

#endif /* BK_FEED_H */
