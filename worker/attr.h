/*
 * worker/attr.h: the attribute reader (worker/attr.c): one attribute of
 * one node, read from the shared-memory node store and value slots into a
 * DataValue, the way the Read service answers it (Part 4 §5.11.2).  The
 * Read service (worker/svc_read.c) reads each of its operations through
 * it; the monitored items that sample an attribute, or a Value with an
 * IndexRange, read through it too (worker/monitem.c).
 *
 * Results live in the caller's arena.  Pure reads of shared memory: no
 * message to the broker, no allocation but the arena's.
 */
#ifndef WK_ATTR_H
#define WK_ATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/attrs.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "worker.h"

struct wk_session;
struct ua_indexrange;

/* Who reads, and where the results go. */
struct wk_attr_ctx {
    struct wk_worker        *w;
    const struct wk_session *session;   /* UserAccessLevel, UserWriteMask
                                         * (NULL: a reader) */
    struct ua_arena         *arena;
};

/*
 * Attributes of Part 3 §5 (proto/attrs.h) our node store does not keep on
 * any node: BadAttributeIdInvalid (see attr.c's file comment).
 */
#define WK_ATTR_UNKEPT                                                      \
    (UINT32_C(1) << UA_ATTR_DATATYPEDEFINITION                              \
     | UINT32_C(1) << UA_ATTR_ROLEPERMISSIONS                               \
     | UINT32_C(1) << UA_ATTR_USERROLEPERMISSIONS                           \
     | UINT32_C(1) << UA_ATTR_ACCESSRESTRICTIONS)

/* Does a node of node_class have attribute aid (as we keep nodes)? */
static inline bool
wk_attr_valid(uint8_t node_class, uint32_t aid)
{
    return ua_attrs_valid(node_class, aid) && (WK_ATTR_UNKEPT >> aid & 1) == 0;
}

/* The decoding limits of a value slot's own bytes (the broker sized
 * them, not a client): for whoever decodes what wk_attr_read() handed
 * over raw. */
extern const struct ua_limits wk_attr_slot_limits;

/*
 * Attribute aid of node i (SHM_NONE: no such node) into dv (zeroed by the
 * caller, value.ndims -1), with the IndexRange index_range (NULL or empty:
 * none) and the DataEncoding encoding (NULL: none), timestamps per ttr
 * (TimestampsToReturn).  UA_GOOD, or the operation's Bad status (dv is
 * then not to be used).  The order of the checks is the file comment's
 * (attr.c).
 */
ua_status wk_attr_read(const struct wk_attr_ctx *ctx, uint32_t i,
                       uint32_t aid, const struct ua_string *index_range,
                       const struct ua_qualifiedname *encoding, int32_t ttr,
                       struct ua_datavalue *dv);

/* The Value of node n when its slot holds a small inline value, encoded
 * whole; BadEncodingLimitsExceeded: take wk_attr_value (attr.c). */
ua_status wk_attr_value_enc(const struct wk_attr_ctx *ctx,
                            const struct shm_node *n, int32_t ttr,
                            struct ua_datavalue *dv);

/* The Value of node i (a Variable or VariableType), cut by r (NULL:
 * whole). */
ua_status wk_attr_value(const struct wk_attr_ctx *ctx, uint32_t i,
                        const struct ua_indexrange *r, int32_t ttr,
                        struct ua_datavalue *dv);

/*
 * wk_attr_read for the usual operation, the Value attribute without
 * IndexRange or DataEncoding (the caller checked): the same steps without
 * the ones that shape makes moot.  Inline: the Read loop's per-operation
 * path.
 */
static inline ua_status
wk_attr_read_value(const struct wk_attr_ctx *ctx, uint32_t i, int32_t ttr,
                   struct ua_datavalue *dv)
{
    const struct shm_node *n;
    ua_status              s;

    if (i == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    n = &ctx->w->ns.nodes[i];
    if (!wk_attr_valid(n->node_class, UA_ATTR_VALUE))
        return UA_BAD_ATTRIBUTE_ID_INVALID;
    s = wk_attr_value_enc(ctx, n, ttr, dv);
    if (s != UA_BAD_ENCODING_LIMITS_EXCEEDED)
        return s;
    return wk_attr_value(ctx, i, NULL, ttr, dv);
}

#endif /* WK_ATTR_H */
