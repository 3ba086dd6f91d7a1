/*
 * proto/attrs.h: which attributes each NodeClass has (Part 3 §5, one
 * table per NodeClass), as one table over the attribute ids of
 * proto/attrs_gen.h.
 *
 * An attribute a NodeClass has, mandatory or optional, is in the table;
 * whether a particular node holds an optional one (and whether the server
 * keeps it at all) is the caller's business: Part 4 §7.39 answers both
 * with BadAttributeIdInvalid ("not supported for the specified Node").
 */
#ifndef UA_ATTRS_H
#define UA_ATTRS_H

#include <stdbool.h>
#include <stdint.h>

#include "attrs_gen.h"

/* Every bit of the NodeClass enumeration (UA_NODECLASS_* in types_gen.h). */
#define UA_ATTRS_ALL_CLASSES 0xFF

/*
 * Per attribute id, the NodeClass bits (UA_NODECLASS_OBJECT ...
 * UA_NODECLASS_VIEW) of the classes that have it; index 0 is no attribute.
 */
extern const uint8_t ua_attrs_classes[UA_ATTR_MAX + 1];

/* True when a node of class node_class (one bit) has attribute aid. */
static inline bool
ua_attrs_valid(uint8_t node_class, uint32_t aid)
{
    return aid >= 1 && aid <= UA_ATTR_MAX
           && (ua_attrs_classes[aid] & node_class) != 0;
}

#endif /* UA_ATTRS_H */
