/*
 * broker/request.h: the workers' request rings, drained by the broker
 * (docs/architecture.md §10): worker -> broker records in, their answers
 * back on each worker's reply ring.  Record formats: shm/fanout.h.
 *
 *   SHM_FO_WRITE   the WriteValues of one request: applied in one value
 *                  batch (broker/write.c, broker/value.c), one status per
 *                  operation into that worker's reply outbox
 *                  (consecutive operations of one request share a
 *                  SHM_FO_RESULTS record)
 *   SHM_FO_CALL    a method call: handed to the registered call handler
 *                  (the methods module, broker/methods.c; none: answered
 *                  BadNotImplemented), whose answers come back through
 *                  bk_request_call_reply() as SHM_FO_CALL_RESULT records
 *   SHM_FO_EVENT   a worker's own event (audit): checked, then fanned out
 *                  like the feed's (bk_value_event)
 *
 * Every loop iteration, before the broker may block (bk_request_prepare):
 *   1. the call handler's flush (answers waiting for room);
 *   2. drain every live worker's request ring as above (at most
 *      BK_REQUEST_BATCH records each: the others get a turn);
 *   3. the fan-out pushes the block of the iteration (bk_fanout_flush);
 *   4. push the reply outboxes;
 *   5. the fan-out publishes the lost marks (bk_fanout_lost_publish);
 *   6. ring a worker's doorbell only when it sleeps on a ring we pushed
 *      to (bk_fanout_bells, told which reply rings want one);
 *   7. mark every request ring sleeping; block only if all stayed empty.
 *      After an iteration that took several requests (or one while
 *      lingering): linger instead (leave the rings unmarked, block at
 *      most fanout.linger_us, look again).
 *
 * Replies are never dropped: when a worker's reply ring is full the
 * broker stops taking that worker's requests until it has room.  When a
 * worker dies (broker/supervisor.c) bk_request_worker_dead() empties its
 * rings, forgets its outbox and bumps its generation (a call's answer goes
 * only to the worker that asked); bk_request_worker_start() counts it
 * live again.  Each also tells the fan-out (bk_fanout_worker_start /
 * _dead).
 *
 * Broker only, single-threaded, on its event loop.  Allocates at init
 * only.
 */
#ifndef BK_REQUEST_H
#define BK_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "addrspace.h"
#include "config.h"
#include "fanout.h"
#include "proto/arena.h"
#include "proto/types.h"
#include "shm/ring.h"
#include "write.h"

struct bk_request;

/* The broker's side of one worker slot's request and reply rings. */
struct bk_request_worker {
    struct bk_request   *r;
    unsigned             slot;
    struct shm_ring_ref  req;           /* consumer */
    struct shm_ring_ref  reply;         /* producer */
    bool                 up;            /* alive: take its requests */
    bool                 pushed_reply;  /* this iteration */
    bool                 stuck;         /* reply outbox full: wait */
    uint32_t             gen;           /* +1 per death: a call's answer
                                         * goes only to the worker that
                                         * asked (bk_request_call_reply) */
    /* Results not pushed yet: whole SHM_FO_RESULTS records at slot
     * boundaries; the last one (at open_off) may still grow. */
    uint8_t             *out;
    uint32_t             out_cap;
    uint32_t             out_len;       /* closed records */
    uint32_t             open_off;      /* UINT32_MAX: no open record */
    uint32_t             open_id;       /* the open record: its request, */
    uint32_t             open_first;    /* first operation, */
    uint32_t             open_count;    /* results, */
    uint32_t             open_len;      /* bytes so far, */
    uint32_t             open_max;      /* and the most it may take */
};

/*
 * The call handler (the methods module): a SHM_FO_CALL record of len
 * bytes from worker, and the retry of answers it could not queue yet, at
 * the start of every iteration.
 */
typedef void (*bk_request_call_fn)(void *arg, unsigned worker,
                                   const uint8_t *rec, uint32_t len);
typedef void (*bk_request_flush_fn)(void *arg);

struct bk_request {
    struct bk_addrspace    *as;
    struct bk_fanout       *fo;
    struct event_base      *base;
    unsigned                n;          /* worker slots with rings */
    unsigned                historian;  /* its slot, UINT32_MAX: none */
    struct bk_request_worker w[SHM_WORKERS_MAX];
    struct bk_write         write;      /* the Write service */
    int64_t                 now;        /* DateTime of this iteration */
    struct ua_arena         arena;      /* one Write's decoding */
    uint8_t                *arena_buf;
    size_t                  arena_cap;
    uint8_t                *in;         /* one request record */
    uint32_t                in_cap;
    struct bk_write_result *res;        /* its operations' results */
    uint32_t                res_max;
    uint32_t                res_need;   /* reply outbox room one request
                                           record's results may take */
    struct event            retry;      /* a stuck worker: look again */
    bool                    retry_set;  /* retry assigned */
    /* Lingering (fanout.linger_us): after an iteration that took requests
     * the request rings are not marked sleeping; the loop blocks at most
     * linger_us, and only an iteration that found none marks them. */
    struct event            linger;     /* on linger_fd */
    int                     linger_fd;  /* timerfd, -1: no lingering */
    uint32_t                linger_us;
    bool                    linger_armed;
    bool                    lingering;  /* the last iteration lingered */
    /* Method calls: the registered handler (NULL: BadNotImplemented). */
    bk_request_call_fn      on_call;
    bk_request_flush_fn     on_flush;
    void                   *call_arg;
    bool                    calling;    /* inside on_call */
    /* The methods' counters, kept here for /stats (broker/methods.c). */
    struct {
        uint64_t calls;                 /* forwarded methods received */
        uint64_t answered;              /* answers from the owner taken */
        uint64_t timeouts;              /* BadTimeout given */
        uint64_t no_owner;              /* refused: no owner ever came */
        uint64_t errors;                /* owner answers refused */
        uint64_t late;                  /* answers after the timeout */
    } mstat;
};

/*
 * Attach the request and reply rings of as's segment for c's workers,
 * build the Write service's node table (bk_write_init) and the buffers.
 * fo is the fan-out (bk_fanout_init first): a segment without it (fo->n
 * == 0) leaves the drain off too (n == 0) and returns 0.  0, or -1 with
 * a message in err.
 */
int bk_request_init(struct bk_request *r, struct bk_addrspace *as,
                    struct bk_fanout *fo, struct event_base *base,
                    const struct bk_config *c, char *err, size_t errlen);

/* Free the buffers and the timers. */
void bk_request_clear(struct bk_request *r);

/*
 * Register the call handler (NULL: none).  Its counters are r->mstat.
 */
void bk_request_on_call(struct bk_request *r, bk_request_call_fn on_call,
                        bk_request_flush_fn on_flush, void *arg);

/*
 * Before (re)spawning the worker of slot: the fan-out's start (its
 * doorbell), then count it live here.  0 or -errno (logged by the
 * caller).
 */
int bk_request_worker_start(struct bk_request *r, unsigned slot);

/* After the worker of slot was reaped (see the top comment). */
void bk_request_worker_dead(struct bk_request *r, unsigned slot);

/*
 * The work of one iteration, before the loop may block (top comment);
 * now is the DateTime for Writes.  true when every request ring stayed
 * empty and is marked sleeping; false when more work is waiting.
 */
bool bk_request_prepare(struct bk_request *r, int64_t now);

/* After the iteration: clear the sleeping marks. */
void bk_request_wake(struct bk_request *r);

/*
 * The answer to method op of pending Call id of worker (whose generation
 * was gen when it asked): a SHM_FO_CALL_RESULT into its reply outbox,
 * pushed with the iteration's replies.  0; -EPIPE when that worker is
 * gone (dropped); -ENOSPC when the outbox has no room now (retry; never
 * for a result without outputs given from inside on_call);
 * -EMSGSIZE when the record is larger than the reply ring.
 */
int bk_request_call_reply(struct bk_request *r, unsigned worker,
                          uint32_t gen, uint32_t id, uint32_t op,
                          ua_status st, const uint8_t *out, uint32_t out_len,
                          uint32_t nout);

#endif /* BK_REQUEST_H */
