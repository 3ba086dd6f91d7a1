/*
 * worker/histnode.h: the nodes history is about, as HistoryRead and
 * HistoryUpdate see them (issue 18): a historized variable's history key
 * (hist/store.h) and the Annotations Property of a historized variable
 * (Part 11 §5.1.2; the broker adds one to every historized variable,
 * broker/histnode.c).
 *
 * Pure reads of the node store; no allocation.
 */
#ifndef WK_HISTNODE_H
#define WK_HISTNODE_H

#include <stdint.h>

#include "worker.h"

/* Node's history key: its encoded NodeId hashed (hs_store_key). */
uint64_t wk_histnode_key(const struct wk_worker *w, uint32_t node);

/*
 * The historized variable node is the Annotations Property of (a
 * Variable of DataType Annotation, BrowseName 0:Annotations, the target
 * of that variable's HasProperty): its index, or SHM_NONE.
 */
uint32_t wk_histnode_annotated(const struct wk_worker *w, uint32_t node);

#endif /* WK_HISTNODE_H */
