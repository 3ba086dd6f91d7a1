/*
 * broker/feedline.h: the feed's text format (docs/feed.md), parsed
 * against the node store and printed back:
 *
 *   NODEID=VALUE[;status=STATUSCODE][;ts=ISO8601]      a value line
 *   event=SOURCE[;key=value]...                        an event line
 *
 * NODEID is the standard string form (i=2258, ns=1;s=v0, ns=1;g=GUID,
 * ns=1;b=BASE64); VALUE is typed by the node's DataType (numbers,
 * true/false, strings quoted or bare, [a,b,c] arrays, ISO 8601 DateTimes,
 * GUIDs, base64 ByteStrings; the rules per built-in type are
 * proto/builtin.h's UA_TEXT_FEED).
 *
 * The feed is the values' owner: a value line may name any Variable
 * whatever its AccessLevel (but never namespace 0, the server's own),
 * with the type and ValueRank checks of a Write (broker/write.h).
 *
 * Pure: no I/O; values are built in the caller's arena.
 */
#ifndef BK_FEEDLINE_H
#define BK_FEEDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/types.h"
#include "shm/nodestore.h"

struct bk_event;

#define BK_FEEDLINE_WHY_MAX    160

/* One parsed line. */
struct bk_feedline_value {
    uint32_t          node;         /* node index */
    uint32_t          slot;
    struct ua_variant v;            /* in the arena */
    ua_status         status;       /* ;status= or Good */
    int64_t           source_ts;    /* ;ts= or 0 (now) */
    bool              has_ts;
};

#define BK_FEEDLINE_EVENT_MAX      8192     /* bytes of one event record */
#define BK_FEEDLINE_EVENT_SEVERITY 500      /* no severity= */

/*
 * Parse one line (no newline) against the node store: NodeId, value typed
 * by the node's DataType, options.  UA_GOOD with *out filled (the Variant
 * in a); else the line's status with a reason in why[whylen].  Pure.
 */
ua_status bk_feedline_parse(const struct shm_nodestore *ns, const char *line,
                            size_t len, struct ua_arena *a,
                            struct bk_feedline_value *out, char *why,
                            size_t whylen);

/*
 * The value text s[n] as a Variant typed by DataType node dt (scalar or
 * [a,b,c]; the syntax of a line's VALUE), in a.  UA_GOOD, or the status
 * with a reason in why.  The methods' output arguments use it
 * (broker/methods.c).
 */
ua_status bk_feedline_parse_value(const struct shm_nodestore *ns, uint32_t dt,
                                  const char *s, size_t n, struct ua_arena *a,
                                  struct ua_variant *v, char *why,
                                  size_t whylen);

/*
 * Print v in the VALUE syntax (what bk_feedline_parse_value reads back)
 * into buf[cap], NUL-terminated: its length, or -1 when it does not fit or
 * has a type the syntax has no form for.  An empty Variant prints nothing.
 */
int bk_feedline_print_value(const struct ua_variant *v, char *buf,
                            size_t cap);

/* A NodeId in its standard string form (i=, ns=1;s=, g=, b=) into buf. */
void bk_feedline_print_nodeid(const struct ua_nodeid *id, char *buf,
                              size_t cap);

/*
 * Parse an event line (docs/feed.md "Events"), `event=SOURCE[;key=value]...`
 * at DateTime now into an event record built in buf[cap] (*ev).  UA_GOOD,
 * or the line's status with a reason in why[whylen].  Pure.
 */
ua_status bk_feedline_parse_event(const struct shm_nodestore *ns,
                                  const char *line, size_t len, int64_t now,
                                  struct ua_arena *a, struct bk_event *ev,
                                  uint8_t *buf, uint32_t cap, char *why,
                                  size_t whylen);

#endif /* BK_FEEDLINE_H */
