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

/* Close the store. */
void wk_svc_history_fini(struct wk_worker *w);

#endif /* WK_SVC_HISTORY_H */
