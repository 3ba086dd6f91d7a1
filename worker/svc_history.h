/*
 * worker/svc_history.h: the HistoryRead service (Part 4 §5.10.3, Part 11
 * §6.4), answered by the worker itself from the history store's read-only
 * transactions (hist/store.h; issue 18).
 */
#ifndef WK_SVC_HISTORY_H
#define WK_SVC_HISTORY_H

#include "worker.h"

/*
 * Register HistoryRead with the dispatch table and prepare the reader
 * (the store is opened at the first HistoryRead: the historian may make
 * it after we start).  0, or -errno.
 */
int wk_svc_history_init(struct wk_worker *w);

/*
 * ReadEventDetails (Part 11 §6.5.2) is answered by the handler the
 * subscriptions register (worker/svc_histevent.c: the EventFilter is
 * theirs): called with the whole request once the checks common to every
 * HistoryRead passed, and the store (NULL: none yet, or history off).
 */
struct hs_store;
struct wk_svc_ctx;
struct ua_history_read_request;
struct ua_history_read_response;
typedef void (*wk_svc_history_events_fn)(
    void *arg, struct wk_svc_ctx *ctx,
    const struct ua_history_read_request *req,
    struct ua_history_read_response *resp, struct hs_store *s);

void wk_svc_history_on_events(struct wk_worker *w,
                              wk_svc_history_events_fn fn, void *arg);

/* The store for other readers of this worker (worker/histarchive.c),
 * opened when it can be: NULL when it cannot yet.  One read at a time. */
struct hs_store *wk_svc_history_store(struct wk_worker *w);

/*
 * Open the store now if the historian made it already (a restart): the
 * first HistoryRead then finds it open.  Quiet: when it cannot be opened
 * the first HistoryRead tries, as it would have.
 */
void wk_svc_history_warm(struct wk_worker *w);

/* Close the store. */
void wk_svc_history_fini(struct wk_worker *w);

#endif /* WK_SVC_HISTORY_H */
