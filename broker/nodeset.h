/*
 * broker/nodeset.h: import OPC UA NodeSet2 XML files (Part 6 Annex F) at
 * start, after namespace 0 and namespace 1.
 *
 * Two steps around the segment's plan: bk_nodeset_load parses every file
 * into process-local memory (namespace tables mapped onto the server's
 * NamespaceArray, aliases resolved, values encoded as Binary Variants) and
 * counts what the segment needs; then broker/nsbuild.h puts the set into
 * the node store: bk_nsbuild_add the nodes and their references before
 * shm_nodestore_finish, bk_nsbuild_values every value checked against its
 * DataType (the subtype chains are known after finish) into the value
 * slots.
 *
 * Every error is "FILE:LINE: what".  Broker only; libxml2 is used in
 * broker/nodeset.c and nowhere else.
 */
#ifndef BK_NODESET_H
#define BK_NODESET_H

#include <stddef.h>
#include <stdint.h>

#include "shm/nodestore.h"

/* The parsed files (opaque, process-local). */
struct bk_nodeset;

/* What the segment needs for a set, beyond namespaces 0 and 1. */
struct bk_nodeset_counts {
    uint32_t nodes;
    uint32_t refs;          /* references as written (both ends: x 2) */
    uint32_t slots;         /* Variables and VariableTypes */
    uint64_t strings;       /* string heap bytes, padding included */
    uint64_t vheap;         /* value heap blocks of the values */
    uint32_t historizing;   /* Variables with Historizing="true" */
};

/*
 * Parse the space-separated files of paths in order.  ns1_uri is the
 * server's namespace 1 (namespace 0 is the OPC UA URI); max_nodes bounds
 * the nodes of all files together (0: no bound).  *out is the set (free
 * it with bk_nodeset_free), also for an empty list.  0, or -1 with
 * "FILE:LINE: what" in err.
 */
int bk_nodeset_load(struct bk_nodeset **out, const char *paths,
                    const char *ns1_uri, uint32_t max_nodes, char *err,
                    size_t errlen);

void bk_nodeset_free(struct bk_nodeset *s);

/* The set's counts (for bk_addrspace_plan's sizes). */
void bk_nodeset_counts(const struct bk_nodeset *s,
                       struct bk_nodeset_counts *c);

/* The NamespaceArray past namespace 1: n URIs, uri(i) for i < n. */
uint32_t bk_nodeset_nuris(const struct bk_nodeset *s);
const char *bk_nodeset_uri(const struct bk_nodeset *s, uint32_t i);

#endif /* BK_NODESET_H */
