/*
 * worker/svc_discovery.h: GetEndpoints and FindServers (Part 4 §5.5;
 * worker/svc_discovery.c), and the endpoint list and application
 * description CreateSession returns too.
 */
#ifndef WK_SVC_DISCOVERY_H
#define WK_SVC_DISCOVERY_H

#include <stdint.h>

#include "proto/types_gen.h"
#include "svc.h"
#include "worker.h"

/* Register the two services with the dispatcher (worker/svc.h).  0 or
 * -EINVAL without a table. */
int wk_svc_discovery_init(struct wk_worker *w);

/*
 * The endpoint list we offer (GetEndpoints, CreateSession), built in the
 * arena.  0, or -ENOMEM with *n = 0.
 */
int wk_svc_endpoints(struct wk_svc_ctx *ctx, int32_t *n,
                     struct ua_endpoint_description **eps);

/* Our ApplicationDescription (GetEndpoints, FindServers), in the arena. */
int wk_svc_app_description(struct wk_svc_ctx *ctx,
                           struct ua_application_description *d);

#endif /* WK_SVC_DISCOVERY_H */
