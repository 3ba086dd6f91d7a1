/*
 * worker/histarchive.h: StartOfArchive and StartOfOnlineArchive of a
 * historized variable's HA Configuration (Part 11 §5.2.2), read from the
 * history store when a client reads them (issue 18).
 *
 * broker/histconf.c gives every HA Configuration it makes these two
 * properties, flagged SHM_NF_HIST_ARCHIVE; worker/attr.c hands the Value
 * of such a node to wk_histarchive_value() (through wk_worker's
 * archive_value, set by wk_histarchive_init()).
 */
#ifndef WK_HISTARCHIVE_H
#define WK_HISTARCHIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "worker.h"

/* Register the reader (after wk_svc_history_init()). */
void wk_histarchive_init(struct wk_worker *w);

/*
 * The Value of StartOfArchive or StartOfOnlineArchive node: the time of
 * the oldest sample the store keeps of its variable (both are the same:
 * every sample kept is online), a null Value when it keeps none; the
 * server timestamp as ttr asks.  False (the slot's value answers) when
 * the node is not one of those or the store cannot be read yet.
 */
bool wk_histarchive_value(struct wk_worker *w, uint32_t node, int32_t ttr,
                          struct ua_arena *arena, struct ua_datavalue *dv);

#endif /* WK_HISTARCHIVE_H */
