/*
 * worker/svc_sub.h: the Subscription and MonitoredItem services (Part 4
 * §5.12, §5.13) and the Server object's GetMonitoredItems and ResendData
 * (worker/svc_sub.c), the sub layer's registrations.
 */
#ifndef WK_SVC_SUB_H
#define WK_SVC_SUB_H

#include "worker.h"

/*
 * Register the Subscription and MonitoredItem services with the
 * dispatcher (worker/svc.h), the Server's GetMonitoredItems, ResendData
 * and ConditionType's ConditionRefresh(2) with the Call service
 * (worker/svc_call.h, when w->calls is set), and wk_sub_session_closed
 * (worker/sub.h) with the session layer (worker/session.h).  0 or
 * -EINVAL.
 */
int wk_svc_sub_init(struct wk_worker *w);

#endif /* WK_SVC_SUB_H */
