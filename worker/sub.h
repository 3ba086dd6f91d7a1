/*
 * worker/sub.h: subscriptions and monitored items of this worker's
 * sessions (Part 4 §5.12, §5.13), as main.c and the tests see them.  The
 * sub layer's files (worker/LAYERS):
 *
 *   worker/sub.c            subscriptions: pools, publish queues, the
 *                           publishing timers (worker/timerheap.h), the
 *                           state machine, NotificationMessages, transfer,
 *                           lifetime
 *   worker/retx.c           the retransmission queues and their store
 *   worker/monitem.c        monitored items: pools, the per-slot index,
 *                           where values come from, what the services
 *                           change, the link's value and overflow
 *                           handlers
 *   worker/monitem_filter.c a value taken apart, DataChangeFilter
 *   worker/monitem_queue.c  queues, cells, NotificationMessage bodies
 *   worker/monitem_event.c  event items, EventFilter, ConditionRefresh,
 *                           the link's event handlers
 *   worker/monitem_where.c  the where clause (ContentFilter)
 *   worker/svc_monitem.c    the MonitoredItem services: checks, filters,
 *                           revisions, results
 *   worker/svc_sub.c        the Subscription services, the Server's
 *                           GetMonitoredItems and ResendData
 *
 * Registered at start-up: with the link (wk_sub_init: values, overflows,
 * events, losses, the time of a block, the promise to wake), with the
 * dispatcher, the Call service and the session layer (wk_svc_sub_init,
 * worker/svc_sub.h).
 *
 * Design and the sampling semantics: docs/subscriptions.md.
 *
 * Memory (docs/style.md §5): every pool is sized from the configuration
 * snapshot and allocated once by wk_sub_init(); big arrays are malloc'ed
 * untouched, so the kernel backs only the pages that get used.  Nothing is
 * allocated per notification, per Publish or per monitored item
 * afterwards.
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

/*
 * Allocate the pools (conf->max_subscriptions subscriptions,
 * conf->max_monitored_items items, their queues, the per-session publish
 * queues, the per-slot index) into w->subs and, when w->base exists, the
 * publishing timer; register the notification handlers with w->link when
 * it is up.  Idempotent; the services call it on first use when the
 * worker's start-up did not.  0 or -ENOMEM.
 */
int wk_sub_init(struct wk_worker *w);

/* Clear every interest bit we set and free everything. */
void wk_sub_fini(struct wk_worker *w);

/*
 * Session s goes away (its client's CloseSession; the session layer's
 * listener, arg: the worker): its queued Publish requests are answered
 * BadSessionClosed; its subscriptions are deleted when delete_subs, else
 * they live on without a session until TransferSubscriptions takes them
 * or their lifetime runs out (Part 4 §5.7.4).  A session that disappears
 * without this call (timeout, its channel closed before activation) is
 * noticed by the scheduler: same as delete_subs false.
 */
void wk_sub_session_closed(void *arg, struct wk_session *s,
                           bool delete_subs);

/*
 * Run every publishing timer due at w->now_ms (the libevent timer does
 * this; tests call it with a clock they set).  Returns the number of
 * subscriptions handled.
 */
unsigned wk_sub_run(struct wk_worker *w);

/*
 * Register the subscriptions' part of a moving session with the session
 * layer (worker/sub_roam.c, worker/roam.h): at start-up, after
 * wk_roam_init.  0 (nothing to do without w->roam); -EINVAL.
 */
int wk_sub_roam_init(struct wk_worker *w);

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
    uint64_t reserved_bytes;    /* bytes they asked for (the pools: items,
                                 * queue pool, retransmission store...;
                                 * backed by the kernel as they are used) */
};
void wk_sub_mem(struct wk_worker *w, struct wk_sub_mem *m);

#endif /* WK_SUB_H */
