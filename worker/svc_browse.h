/*
 * worker/svc_browse.h: the View service set, Browse, BrowseNext,
 * TranslateBrowsePathsToNodeIds, RegisterNodes, UnregisterNodes (Part 4
 * §5.9; worker/svc_browse.c), and its cache of encoded Browse results.
 */
#ifndef WK_SVC_BROWSE_H
#define WK_SVC_BROWSE_H

#include <stdint.h>

#include "worker.h"

/*
 * Register the five services with the dispatcher (worker/svc.h) and
 * allocate the Browse cache: conf->browse_cache_kb of encoded whole
 * Browse results, at start-up (0 KiB leaves w->bcache NULL: no cache).
 * 0, -EINVAL without a table, or -ENOMEM.
 */
int wk_svc_browse_init(struct wk_worker *w);

/* Free the cache. */
void wk_svc_browse_fini(struct wk_worker *w);

/* Browse operations answered from the cache so far. */
uint64_t wk_svc_browse_cache_hits(const struct wk_worker *w);

#endif /* WK_SVC_BROWSE_H */
