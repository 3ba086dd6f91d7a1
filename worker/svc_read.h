/*
 * worker/svc_read.h: the Read service (Part 4 §5.11.2;
 * worker/svc_read.c).
 */
#ifndef WK_SVC_READ_H
#define WK_SVC_READ_H

#include "svc.h"
#include "worker.h"

/* Register Read with the dispatcher (worker/svc.h).  0 or -EINVAL
 * without a table. */
int wk_svc_read_init(struct wk_worker *w);

/* The handler itself (tests measure it alone). */
void wk_svc_read(struct wk_svc_ctx *ctx, const void *req, void *resp);

#endif /* WK_SVC_READ_H */
