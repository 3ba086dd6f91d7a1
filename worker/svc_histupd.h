/*
 * worker/svc_histupd.h: the HistoryUpdate service (Part 4 §5.10.5, Part 11
 * §6.8), carried out by the historian, the history store's one writer,
 * through the broker (issue 18; docs/design-notes.md D96).
 */
#ifndef WK_SVC_HISTUPD_H
#define WK_SVC_HISTUPD_H

#include "worker.h"

/*
 * Register HistoryUpdate with the dispatch table and the historian's
 * answers with the link (after wk_link_init), and allocate the pending
 * updates (conf->history_pending_updates).  0, or -errno.
 */
int wk_svc_histupd_init(struct wk_worker *w);

/* Free the pending updates (nothing is answered any more). */
void wk_svc_histupd_fini(struct wk_worker *w);

#endif /* WK_SVC_HISTUPD_H */
