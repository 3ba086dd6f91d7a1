/*
 * worker/svc_session.h: the session services, CreateSession,
 * ActivateSession, CloseSession and Cancel (Part 4 §5.7;
 * worker/svc_session.c), and where their audit events are raised.
 */
#ifndef WK_SVC_SESSION_H
#define WK_SVC_SESSION_H

#include "worker.h"

/* Register the four services with the dispatcher (worker/svc.h).  0 or
 * -EINVAL without a table. */
int wk_svc_session_init(struct wk_worker *w);

#endif /* WK_SVC_SESSION_H */
