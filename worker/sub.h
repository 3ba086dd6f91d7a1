/*
 * worker/sub.h: subscriptions and monitored items of this worker's
 * sessions (Part 4 §5.12, §5.13), as the rest of the worker sees them.
 *
 *   worker/sub.c       subscriptions: pool, publish queues, the publishing
 *                      timer heap, the state machine, NotificationMessages,
 *                      retransmission queues, transfer, lifetime
 *   worker/monitem.c   monitored items: pools, the per-slot index, filters,
 *                      queues, sampling, triggering, the fan-out hooks
 *                      wk_fanout_on_value / wk_fanout_on_overflow
 *   worker/svc_sub.c   the Subscription and MonitoredItem services
 *   worker/svc_call.c  the Call service (GetMonitoredItems, ResendData)
 *
 * Design and the sampling semantics: docs/subscriptions.md.
 *
 * Memory (STYLE §5): every pool is sized from the configuration snapshot
 * and allocated once by wk_sub_init(); big arrays are malloc'ed untouched,
 * so the kernel backs only the pages that get used.  Nothing is allocated
 * per notification, per Publish or per monitored item afterwards.
 *
 * Single-threaded, on the worker's loop like everything in worker/.
 */
#ifndef WK_SUB_H
#define WK_SUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/types.h"
#include "worker.h"

struct wk_session;
struct wk_svc_ctx;
struct wk_conn_ref;

/*
 * Allocate the pools (conf->max_subscriptions subscriptions,
 * conf->max_monitored_items items, their queues, the per-session publish
 * queues, the per-slot index) and, when w->base exists, the publishing
 * timer.  Idempotent; the services call it on first use when the worker's
 * start-up did not.  0 or -ENOMEM.
 */
int wk_sub_init(struct wk_worker *w);

/* Clear every interest bit we set and free everything. */
void wk_sub_fini(struct wk_worker *w);

/*
 * Session s goes away (CloseSession): its queued Publish requests are
 * answered BadSessionClosed; its subscriptions are deleted when
 * delete_subs, else they live on without a session until TransferSub-
 * scriptions takes them or their lifetime runs out (Part 4 §5.7.4).  A
 * session that disappears without this call (timeout, its channel closed
 * before activation) is noticed by the scheduler: same as delete_subs
 * false.
 */
void wk_sub_session_closed(struct wk_worker *w, struct wk_session *s,
                           bool delete_subs);

/*
 * Run every publishing timer due at w->now_ms (the libevent timer does
 * this; tests call it with a clock they set).  Returns the number of
 * subscriptions handled.
 */
unsigned wk_sub_run(struct wk_worker *w);

/* ------------------------------------------- service handlers (svc.c) */

void wk_svc_create_subscription(struct wk_svc_ctx *ctx, const void *req,
                                void *resp);
void wk_svc_modify_subscription(struct wk_svc_ctx *ctx, const void *req,
                                void *resp);
void wk_svc_delete_subscriptions(struct wk_svc_ctx *ctx, const void *req,
                                 void *resp);
void wk_svc_set_publishing_mode(struct wk_svc_ctx *ctx, const void *req,
                                void *resp);
void wk_svc_publish(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_republish(struct wk_svc_ctx *ctx, const void *req, void *resp);
void wk_svc_transfer_subscriptions(struct wk_svc_ctx *ctx, const void *req,
                                   void *resp);
void wk_svc_create_monitored_items(struct wk_svc_ctx *ctx, const void *req,
                                   void *resp);
void wk_svc_modify_monitored_items(struct wk_svc_ctx *ctx, const void *req,
                                   void *resp);
void wk_svc_delete_monitored_items(struct wk_svc_ctx *ctx, const void *req,
                                   void *resp);
void wk_svc_set_monitoring_mode(struct wk_svc_ctx *ctx, const void *req,
                                void *resp);
void wk_svc_set_triggering(struct wk_svc_ctx *ctx, const void *req,
                           void *resp);
/* CloseSession: deleteSubscriptions, then wk_svc_close_session. */
void wk_svc_close_session_subs(struct wk_svc_ctx *ctx, const void *req,
                               void *resp);
/* Call (worker/svc_call.c): the Server object's GetMonitoredItems and
 * ResendData methods. */
void wk_svc_call(struct wk_svc_ctx *ctx, const void *req, void *resp);

/* ------------------------------------------------------------ testing */

/*
 * How Publish responses leave: the connection layer's deferred responses
 * (worker/conn.h) by default.  A unit test replaces them to capture the
 * responses with a clock of its own.
 */
struct wk_sub_io {
    int  (*defer)(struct wk_svc_ctx *ctx, struct wk_conn_ref *ref);
    int  (*respond)(struct wk_worker *w, const struct wk_conn_ref *ref,
                    const struct ua_type *t, void *resp);
    bool (*alive)(const struct wk_worker *w, const struct wk_conn_ref *ref);
};

/* Use io (copied) instead of the connection layer; NULL restores it. */
void wk_sub_set_io(struct wk_worker *w, const struct wk_sub_io *io);

/* Memory accounting, for tests, benchmarks and docs. */
struct wk_sub_mem {
    size_t item_bytes;          /* one monitored item, with its share of
                                 * the slot list chunks (at most half a
                                 * chunk) */
    size_t cell_bytes;          /* one value cell (+4 on its free stack) */
    size_t entry_bytes;         /* one queue entry (+4 on its free stack) */
    size_t sub_bytes;           /* sizeof one subscription */
    uint32_t items_used;
    uint32_t cells_used;        /* value cells in use */
    uint32_t entries_used;      /* queued notifications */
    uint32_t retx_cells_used;   /* retransmission store in use (64 B) */
    uint32_t subs_used;
    uint32_t cells_cap;
    uint32_t retx_cells_cap;    /* its size (64 B units) */
    uint64_t allocations;       /* wk_alloc calls made by wk_sub_init */
};
void wk_sub_mem(struct wk_worker *w, struct wk_sub_mem *m);

#endif /* WK_SUB_H */
