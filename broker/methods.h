/*
 * broker/methods.h: method calls forwarded to their owner (docs/feed.md
 * "Methods").  The workers check a Call's methods and send the ones they
 * do not serve themselves as SHM_FO_CALL records (worker/svc_call.c,
 * shm/fanout.h); the request drain (broker/request.c) hands each to
 * bk_methods_on_call(), which sends it as text on the methods socket, an
 * NN_PAIR (methods.listen, default ipc://<runtime_dir>/methods.ipc), to
 * the method owner: the process that feeds the plant's values (`uabroker
 * methods`, or any nanomsg PAIR peer).  Many calls are in flight at once; each carries a
 * call id:
 *
 *   broker -> owner    call ID
 *                      OBJECT_NODEID
 *                      METHOD_NODEID
 *                      VALUE                      one per input argument
 *   owner -> broker    result ID STATUS
 *                      VALUE                      one per output argument
 *                                                 (only when STATUS is not
 *                                                 Bad)
 *   owner -> broker    hello                      (optional, on connect)
 *
 * One message per call or answer, lines separated by \n.  VALUE is the
 * feed's value syntax (broker/feedline.h), printed by
 * bk_feedline_print_value and read with bk_feedline_parse_value typed by
 * the method's OutputArguments DataTypes.
 * STATUS is a StatusCode name (Good, BadInvalidArgument, ...) or number
 * (0x80AB0000, decimal).
 *
 * Outcomes the owner does not give: no owner has sent anything since the
 * broker started: BadNoCommunication at once (a namespace-0 method:
 * BadNotImplemented); otherwise no answer within methods.timeout_ms:
 * BadTimeout (also when the owner went away meanwhile); an answer that
 * does not parse, has the wrong number of outputs or an output of the
 * wrong type or shape: BadInternalError (counted as an error); an answer
 * after the timeout, or for an unknown id: dropped (counted as late).
 * Counters in /stats ("methods") and /metrics (uabroker_methods_*).
 *
 * Single-threaded, on the broker's loop.  Allocates at init only: one
 * table of calls in flight (workers x methods.pending_calls), each with
 * room for its encoded outputs (methods.max_call_bytes).
 */
#ifndef BK_METHODS_H
#define BK_METHODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "addrspace.h"
#include "config.h"
#include "feed.h"
#include "request.h"
#include "proto/arena.h"
#include "proto/types.h"
#include "shm/feed.h"

#define BK_METHODS_NAME "methods.ipc"

/* One call in flight. */
struct bk_methods_call {
    uint32_t  seq;              /* the call id on the wire; 0: free */
    uint32_t  worker;
    uint32_t  gen;              /* the worker's generation when it asked */
    uint32_t  wid;              /* the worker's pending-Call id */
    uint32_t  op;
    uint32_t  object;           /* node indices */
    uint32_t  method;
    uint64_t  deadline_ms;      /* CLOCK_MONOTONIC */
    uint32_t  next_free;
    bool      done;             /* answered; waiting for reply room */
    ua_status status;
    uint32_t  nout;
    uint32_t  out_len;
    uint8_t  *out;              /* [out_cap] encoded output Variants */
};

struct bk_methods;

/* How an answer reaches its worker (tests capture it); as
 * bk_request_call_reply. */
typedef int (*bk_methods_deliver_fn)(struct bk_methods *m,
                                     const struct bk_methods_call *c);
/* How a message reaches the owner (tests capture it): 0 or -errno. */
typedef int (*bk_methods_send_fn)(struct bk_methods *m, const char *msg,
                                  size_t len);

struct bk_methods {
    struct bk_addrspace    *as;
    struct bk_request      *rq;
    struct shm_feed         sock;
    struct event            sock_ev;
    struct event            timer_ev;
    bool                    events;         /* sock_ev/timer_ev assigned */
    char                    url[BK_FEED_URL_MAX + 16];
    uint32_t                timeout_ms;
    bool                    owner_seen;     /* any message came */
    struct bk_methods_call *calls;
    uint32_t                ncalls;
    uint32_t                free_call;      /* UINT32_MAX: none */
    uint32_t                busy;           /* in flight or done */
    uint32_t                ndone;          /* done, not delivered */
    uint32_t                round;          /* seq = round * ncalls + i */
    uint32_t                out_cap;
    char                   *msg;            /* one message, in or out */
    size_t                  msg_cap;
    struct ua_arena         arena;
    uint8_t                *arena_buf;
    size_t                  arena_cap;
    uint64_t              (*clock)(void);   /* CLOCK_MONOTONIC ms */
    bk_methods_deliver_fn   deliver;
    bk_methods_send_fn      send;
};

/*
 * The table and buffers for c, no socket (tests; bk_methods_init does
 * this first).  Registers itself as rq's call handler (NULL: none).  0 or
 * -1 with err.
 */
int bk_methods_setup(struct bk_methods *m, struct bk_addrspace *as,
                     struct bk_request *rq, const struct bk_config *c,
                     char *err, size_t errlen);

/* bk_methods_setup, then bind the methods socket and serve it on base. */
int bk_methods_init(struct bk_methods *m, struct event_base *base,
                    struct bk_addrspace *as, struct bk_request *rq,
                    const struct bk_config *c, char *err, size_t errlen);

/* Unhook, close, free. */
void bk_methods_clear(struct bk_methods *m);

/* A SHM_FO_CALL record (len bytes) from worker (the request drain's
 * call handler). */
void bk_methods_on_call(struct bk_methods *m, unsigned worker,
                        const uint8_t *rec, uint32_t len);

/* One message from the owner (text, len bytes). */
void bk_methods_on_message(struct bk_methods *m, const char *text,
                           size_t len);

/* Time out the calls whose deadline is at or before now_ms. */
void bk_methods_tick(struct bk_methods *m, uint64_t now_ms);

/* Deliver the answers that waited for reply room (the request drain's
 * on_flush). */
void bk_methods_flush(struct bk_methods *m);

/* A StatusCode by name ("Good", "BadTimeout") or number; false if none. */
bool bk_methods_status(const char *s, size_t n, ua_status *out);

/*
 * `uabroker [options] methods [--url URL] (--exec PROGRAM | --stdio)`:
 * serve the method calls of the broker whose configuration is c (see
 * docs/feed.md "Methods").  --exec: PROGRAM runs once per call with
 * argv METHOD_NODEID ARG... (UABROKER_OBJECT: the object's NodeId); the
 * lines it prints are the output arguments, a first line status=STATUS
 * sets the status (else exit 0 Good, other exit codes BadInternalError);
 * one still running after methods.timeout_ms is killed.  --stdio: the
 * protocol itself, each call on stdout followed by a line "end", answers
 * read from stdin, each followed by "end" (a coprocess).  Runs until
 * SIGTERM (or, --stdio, the end of stdin).  Exit code 2 for a usage
 * error or no socket.
 */
int bk_methods_command(const struct bk_config *c, int argc, char **argv,
                       FILE *in, FILE *out, FILE *err);

#endif /* BK_METHODS_H */
