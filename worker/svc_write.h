/*
 * worker/svc_write.h: the Write service's pending Writes (worker/
 * svc_write.c): a fixed pool of conf->pending_writes answers-to-be, each
 * with the results of its operations, completed by the broker's
 * SHM_FO_RESULTS records (registered with the link at init).
 *
 *   wk_svc_write_begin ---> a pending Write (id), the request deferred
 *   operations queued into the outbox (worker/outbox.h) or answered here
 *   wk_svc_write_commit --> push; the WriteResponse leaves when the last
 *                           result is in (at once when all were answered
 *                           here)
 *
 * Single-threaded, on the worker's loop.  No allocation after init.
 */
#ifndef WK_SVC_WRITE_H
#define WK_SVC_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "worker.h"

/* One Write in flight: its answer-to-be. */
struct wk_write {
    struct wk_conn_ref ref;
    uint32_t           id;          /* index | sequence (15 bits) << 16;
                                     * 0 = free */
    uint32_t           n;           /* operations */
    uint32_t           left;        /* results still to come */
    uint32_t           next_free;   /* free list (index), UINT32_MAX end */
    ua_status         *results;     /* [conf->max_nodes_per_write] */
};

struct wk_writes {
    struct wk_worker *w;
    struct wk_write  *pool;
    ua_status        *results;      /* n x max_nodes_per_write, one block */
    uint32_t          n;
    uint32_t          free;         /* index, UINT32_MAX: none */
    uint16_t          seq;          /* 1..32767 */
};

/*
 * Register Write with the dispatcher (worker/svc.h) and make its pool of
 * n pending Writes (0: one), each with room for conf->max_nodes_per_write
 * results; the link's SHM_FO_RESULTS records go to it when w->link is up.
 * The caller points w->writes at ws.  0, -EINVAL without a table, or
 * -ENOMEM.
 */
int wk_svc_write_init(struct wk_writes *ws, struct wk_worker *w, uint32_t n);

/* Free the pool. */
void wk_svc_write_clear(struct wk_writes *ws);

/*
 * Start a Write of n operations (n <= conf->max_nodes_per_write), answered
 * through ref when its last result is in.  Its id (> 0); -ENOSPC when
 * every pending Write is in use (the caller answers BadServerTooBusy).
 */
int wk_svc_write_begin(struct wk_writes *ws, const struct wk_conn_ref *ref,
                       uint32_t n);

/* Answer operation op of Write id here (no record for the broker). */
void wk_svc_write_result(struct wk_writes *ws, int id, uint32_t op,
                         ua_status st);

/*
 * Every operation of Write id is queued or answered: push the outbox (the
 * rest at the next iteration, in order); the WriteResponse goes out when
 * the last result is in (at once when all were answered here).
 */
void wk_svc_write_commit(struct wk_writes *ws, int id);

/*
 * The Write loops after the checks (w->link up, Write id begun): the
 * operations of n decoded WriteValues, or of n usual ones in their wire
 * bytes whose keys wk_svc_write_scan hashed, queued or answered; the
 * caller commits.  The same records and results for the same request
 * (check_svc_write test_fused_same).
 */
struct wk_node_pipe_key;
void wk_svc_write_ops(struct wk_worker *w, int id,
                      const struct ua_write_value *wvs, int32_t n);
void wk_svc_write_ops_keys(struct wk_worker *w, int id,
                           const struct wk_node_pipe_key *k, int32_t n);

/* The fused form's scan (worker/svc.h wk_svc_scan_fn; see svc_write.c). */
struct wk_svc_ctx;
bool wk_svc_write_scan(struct wk_svc_ctx *ctx, const uint8_t *body,
                       size_t blen, struct ua_request_header *hdr);

#endif /* WK_SVC_WRITE_H */
