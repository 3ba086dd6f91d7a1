/*
 * worker/histside.h: the historian's figures of the history store's side
 * databases (hist/side.h: the modified values and annotations
 * HistoryUpdate keeps), published into its row for /stats and /metrics
 * (broker/stats.c).  Part of uahistorian (worker/historian.c).
 *
 * Single-threaded on the historian's loop; no allocation.
 */
#ifndef WK_HISTSIDE_H
#define WK_HISTSIDE_H

#include "hist/store.h"
#include "shm/layout.h"

/* The side databases' entries and bytes (pages) of s into row. */
void wk_histside_publish(struct hs_store *s, struct shm_worker *row);

#endif /* WK_HISTSIDE_H */
