/*
 * broker/nsbuild.h: a parsed NodeSet set (broker/nodeset.h) put into the
 * node store at the address-space build (broker/addrspace.c).
 */
#ifndef BK_NSBUILD_H
#define BK_NSBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "nodeset.h"
#include "shm/nodestore.h"
#include "value.h"

/*
 * Add every node and reference of s to node store ns (before
 * shm_nodestore_finish); value slots are numbered from *slot on, *slot is
 * left past the last.  0 or -1 with a message in err.
 */
int bk_nsbuild_add(struct bk_nodeset *s, struct shm_nodestore *ns,
                   uint32_t *slot, char *err, size_t errlen);

/*
 * After shm_nodestore_finish: check each value against its node's
 * DataType and write the value slots through val (timestamps now, inside
 * the caller's value batch).  0 or -1.
 */
int bk_nsbuild_values(struct bk_nodeset *s, const struct shm_nodestore *ns,
                      struct bk_value *val, int64_t now, char *err,
                      size_t errlen);

#endif /* BK_NSBUILD_H */
