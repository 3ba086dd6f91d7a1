/*
 * worker/histev.h: the historian's event recorder (issue 18; Part 11
 * §6.5.2): every event the broker fans out, kept in the history store's
 * event databases (hist/events.h) for ReadEventDetails
 * (worker/svc_histevent.c).  Part of uahistorian (worker/historian.c),
 * which registers wk_histev_on_event with its link and counts the events
 * the broker could not deliver with wk_histev_on_lost
 * and calls the rest from its loop.
 *
 * Single-threaded on the historian's loop; allocation at open only.
 */
#ifndef WK_HISTEV_H
#define WK_HISTEV_H

#include <stdbool.h>
#include <stdint.h>

#include "hist/store.h"
#include "shm/layout.h"
#include "worker.h"

struct wk_histev;

/*
 * The recorder of w's events into store s (its event databases made when
 * missing): batches of at most batch events, retention_s and max_mb from
 * the configuration (shm_config history_event_*).  NULL with a log line.
 */
struct wk_histev *wk_histev_open(struct wk_worker *w, struct hs_store *s,
                                 uint32_t batch, uint32_t retention_s,
                                 uint32_t max_mb);
void wk_histev_close(struct wk_histev *he);

/* The link's event handler (worker/link.h event); arg is he. */
void wk_histev_on_event(void *arg, const uint8_t *rec, uint32_t len);
/* n more events the broker could not deliver (worker/link.h events_lost:
 * the difference of the shared counter since the last call). */
void wk_histev_on_lost(struct wk_histev *he, uint64_t n);

/* The batch into the store, one write transaction: true when there was
 * one (he NULL: none). */
bool wk_histev_flush(struct wk_histev *he);

/* Retention (after the store's own pruning, which frees a full store). */
void wk_histev_prune(struct wk_histev *he, int64_t now);

/* The counters and the events' totals into the historian's row. */
void wk_histev_publish(struct wk_histev *he, struct shm_worker *row);

#endif /* WK_HISTEV_H */
