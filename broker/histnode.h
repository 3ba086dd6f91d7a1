/*
 * broker/histnode.h: the nodes the history adds to the address space
 * (issue 18): an Annotations Property (Part 11 §5.1.2) under every
 * historized variable, through which HistoryUpdate writes and HistoryRead
 * reads its annotations (worker/histnode.h finds the variable again).
 */
#ifndef BK_HISTNODE_H
#define BK_HISTNODE_H

#include <stddef.h>
#include <stdint.h>

#include "shm/nodestore.h"
#include "shm/plan.h"

/*
 * Room in plan p for the properties of at most vars historized variables
 * whose NodeIds take at most id_bytes bytes in all.
 */
void bk_histnode_plan(uint32_t vars, uint64_t id_bytes, struct shm_plan *p);

/*
 * An Annotations Property for every historized variable of the node store
 * being built (after the variables are marked, before
 * shm_nodestore_finish): Variable ns=1;s=<the variable's NodeId>.Annotations
 * ("<id>.Annotations" for a String NodeId of namespace 1), BrowseName
 * 0:Annotations, DataType Annotation, AccessLevel HistoryRead and
 * HistoryWrite (UserAccessLevel as the variable's), by HasProperty, of
 * PropertyType.  The number added, or -1 with err (the segment is full).
 * A variable whose property's NodeId is taken already gets none.
 */
int bk_histnode_add(struct shm_nodestore *ns, char *err, size_t errlen);

#endif /* BK_HISTNODE_H */
