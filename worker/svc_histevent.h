/*
 * worker/svc_histevent.h: HistoryRead's ReadEventDetails (Part 11
 * §6.5.2), the events the historian kept (worker/histev.c) filtered with
 * the event items' EventFilter code (worker/monitem_event.c).  In the sub
 * layer because the filter is theirs; registered with the HistoryRead
 * service (worker/svc_history.h) by main.c.
 */
#ifndef WK_SVC_HISTEVENT_H
#define WK_SVC_HISTEVENT_H

#include "worker.h"

/* Register with HistoryRead (after wk_svc_history_init and wk_sub_init).
 * 0 or -ENOMEM. */
int wk_svc_histevent_init(struct wk_worker *w);
void wk_svc_histevent_fini(struct wk_worker *w);

#endif /* WK_SVC_HISTEVENT_H */
