/*
 * worker/attr.c: one attribute of one node, read straight from shared
 * memory (worker/attr.h): what the Read service (worker/svc_read.c) and
 * the monitored items that sample by reading (worker/monitem.c) both
 * call.
 *
 * Encode once: a Value is copied out of its slot as the encoded Variant the
 * broker stored and goes into the result as a UA_VARIANT_RAW, so the
 * encoder copies the bytes again and nothing is decoded.  A small inline
 * value (the common case) goes further: its whole DataValue is encoded
 * into the arena as the slot is read (UA_DV_ENCODED) and the encoder only
 * copies it.  Only an IndexRange makes us decode the Variant, cut it and
 * let the encoder re-encode the piece.
 *
 * Operation results, checked in this order: BadNodeIdUnknown;
 * BadAttributeIdInvalid (an id outside 1..27, an attribute the node class
 * does not have, and the attributes our node store does not keep:
 * DataTypeDefinition, RolePermissions, UserRolePermissions,
 * AccessRestrictions: Part 4 defines BadAttributeIdInvalid as "the
 * attribute is not supported for the specified Node", which is what an
 * optional attribute a node lacks is, and those four we lack on every
 * node); BadIndexRangeInvalid (syntax, ua_indexrange_parse);
 * BadDataEncodingInvalid / BadDataEncodingUnsupported (below);
 * BadNotReadable / BadUserAccessDenied (Variables without CurrentRead in
 * AccessLevel / UserAccessLevel); BadIndexRangeNoData (a valid range that
 * selects nothing); BadNoCommunication (below).
 *
 * Optional attributes we always answer: Description (empty LocalizedText:
 * ns0 is loaded without its documentation text), WriteMask and
 * UserWriteMask, InverseName (empty for symmetric types),
 * MinimumSamplingInterval, AccessLevelEx, ArrayDimensions (a null Variant
 * when the node has none).
 *
 * dataEncoding: in v1.04 a client may ask for a DataTypeEncoding of a
 * Value by BrowseName: null or "Default Binary" (ns 0) is served; another
 * name is BadDataEncodingUnsupported; any name on another attribute is
 * BadDataEncodingInvalid.  v1.05 (ReadValueId, §7.28) deprecates the
 * parameter ("the Server shall ignore it"); we keep the v1.04 checks,
 * which only reject what no binary client sends.
 *
 * Timestamps (Part 4 §7.11.3, §7.11.4, §7.40): a Value carries the slot's
 * source timestamp (Source, Both) and its server timestamp, or the request
 * time when the broker stored none (Server, Both).  Other attributes never
 * carry a source timestamp; they carry the request time as server
 * timestamp for Server and Both.  A failed operation carries its status
 * only.
 *
 * A slot that stays mid-write (shm_value_read gives up with -EAGAIN after
 * its bounded retries) is read once more, then answered
 * BadNoCommunication: the value's owner, the broker, is not giving us a
 * consistent copy (preempted or dead mid-write); the client may retry.
 *
 * IndexRange (Part 4 §7.27, parsed and applied by proto/indexrange.c):
 * "n", "a:b" with a < b, one per dimension, separated by ','; digits
 * only.  A lower bound past the data is BadIndexRangeNoData, an upper
 * bound past it is cut (partial result).
 * Strings and ByteStrings are arrays of bytes for a range: a scalar takes
 * one dimension, an array of them one more than the array has.  A range on
 * any other scalar, with the wrong number of dimensions, or on a non-array
 * attribute is BadIndexRangeNoData ("all other invalid requests with a
 * valid syntax").  Bounds beyond 2^32-1 saturate: "99999999999999" is a
 * lower bound past any data (NoData), "0:99999999999999" reads everything.
 *
 * No heap: every result, slot copy and decoded value is in the arena.
 */
#include "attr.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "node.h"
#include "proto/codec.h"
#include "proto/indexrange.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "session.h"
#include "shm/value.h"

#define WK_AL_CURRENTREAD 0x01      /* AccessLevelType bit 0, CurrentRead */
#define WK_SLOT_TRIES     4         /* slot reads: growth and one -EAGAIN */
/* An encoded DataValue of an inline value: mask, Variant, status, two
 * timestamps with picoseconds. */
#define WK_DV_ENC_MAX     (1 + SHM_VALUE_INLINE + 4 + 2 * (8 + 2))

static ua_status wk_attr_encoding_check(const struct ua_qualifiedname *q,
                                        uint32_t aid);
static ua_status wk_attr_variant(const struct wk_attr_ctx *ctx, uint32_t i,
                                 uint32_t aid, struct ua_variant *v);
static int wk_attr_slot_read(const struct wk_attr_ctx *ctx, uint32_t slot,
                             struct shm_value *m, uint8_t **bytes);

/* Decoding our own slot bytes: the broker sized them, not the client. */
const struct ua_limits wk_attr_slot_limits = {
    .max_string_len = INT32_MAX,
    .max_bytestring_len = INT32_MAX,
    .max_array_len = INT32_MAX,
    .max_depth = UA_NESTING_MAX,
    .max_message_size = SIZE_MAX,
};

static ua_status
wk_attr_encoding_check(const struct ua_qualifiedname *q, uint32_t aid)
{
    if (q->ns == 0 && q->name.len <= 0)
        return UA_GOOD;             /* null: the default */
    if (aid != UA_ATTR_VALUE)
        return UA_BAD_DATA_ENCODING_INVALID;
    if (q->ns != 0 || !ua_string_eq(&q->name, "Default Binary"))
        return UA_BAD_DATA_ENCODING_UNSUPPORTED;
    return UA_GOOD;
}

/* One ReadValueId (its node i, or SHM_NONE) into dv; a Bad return is the
 * operation's status. */
ua_status
wk_attr_read(const struct wk_attr_ctx *ctx, uint32_t i, uint32_t aid,
             const struct ua_string *index_range,
             const struct ua_qualifiedname *encoding, int32_t ttr,
             struct ua_datavalue *dv)
{
    struct wk_worker      *w = ctx->w;
    const struct shm_node *n;
    struct ua_indexrange   range, *r = NULL;
    struct ua_variant      v;
    ua_status              s;

    if (i == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    n = &w->ns.nodes[i];
    if (!wk_attr_valid(n->node_class, aid))
        return UA_BAD_ATTRIBUTE_ID_INVALID;
    if (index_range != NULL && index_range->len > 0) {
        s = ua_indexrange_parse(index_range->data, (size_t)index_range->len,
                                &range);
        if (s != UA_GOOD)
            return s;
        r = &range;
    }
    if (encoding != NULL) {
        s = wk_attr_encoding_check(encoding, aid);
        if (s != UA_GOOD)
            return s;
    }
    if (aid == UA_ATTR_VALUE && r == NULL) {
        s = wk_attr_value_enc(ctx, n, ttr, dv);
        if (s != UA_BAD_ENCODING_LIMITS_EXCEEDED)
            return s;
        /* Not a small inline value, or a slot mid-write: the long way. */
    }
    if (aid == UA_ATTR_VALUE)
        return wk_attr_value(ctx, i, r, ttr, dv);

    s = wk_attr_variant(ctx, i, aid, &v);
    if (s != UA_GOOD)
        return s;
    if (r != NULL) {
        s = ua_indexrange_extract(ctx->arena, r, &v, &dv->value);
        if (s != UA_GOOD)
            return s;
    } else {
        dv->value = v;
    }
    dv->mask = UA_DV_VALUE;
    if (ttr == UA_TIMESTAMPSTORETURN_SERVER
        || ttr == UA_TIMESTAMPSTORETURN_BOTH) {
        dv->mask |= UA_DV_SERVER_TS;
        dv->server_ts = w->now_dt;
    }
    return UA_GOOD;
}

/* Every attribute but Value, as a Variant built in the arena. */
static ua_status
wk_attr_variant(const struct wk_attr_ctx *ctx, uint32_t i, uint32_t aid,
                  struct ua_variant *v)
{
    struct wk_worker      *w = ctx->w;
    const struct shm_node *n = &w->ns.nodes[i];
    uint8_t                bt;
    void                  *p;

    switch (aid) {
    case UA_ATTR_NODEID:
    case UA_ATTR_DATATYPE:
        bt = UA_BT_NODEID;
        break;
    case UA_ATTR_NODECLASS:
    case UA_ATTR_VALUERANK:
        bt = UA_BT_INT32;
        break;
    case UA_ATTR_BROWSENAME:
        bt = UA_BT_QUALIFIEDNAME;
        break;
    case UA_ATTR_DISPLAYNAME:
    case UA_ATTR_DESCRIPTION:
    case UA_ATTR_INVERSENAME:
        bt = UA_BT_LOCALIZEDTEXT;
        break;
    case UA_ATTR_WRITEMASK:
    case UA_ATTR_USERWRITEMASK:
    case UA_ATTR_ACCESSLEVELEX:
        bt = UA_BT_UINT32;
        break;
    case UA_ATTR_ISABSTRACT:
    case UA_ATTR_SYMMETRIC:
    case UA_ATTR_CONTAINSNOLOOPS:
    case UA_ATTR_HISTORIZING:
    case UA_ATTR_EXECUTABLE:
    case UA_ATTR_USEREXECUTABLE:
        bt = UA_BT_BOOLEAN;
        break;
    case UA_ATTR_EVENTNOTIFIER:
    case UA_ATTR_ACCESSLEVEL:
    case UA_ATTR_USERACCESSLEVEL:
        bt = UA_BT_BYTE;
        break;
    case UA_ATTR_MINIMUMSAMPLINGINTERVAL:
        bt = UA_BT_DOUBLE;
        break;
    case UA_ATTR_ARRAYDIMENSIONS: {
        uint32_t       len, cnt;
        const uint8_t *d = shm_nodestore_string(&w->ns, n->u.var.array_dims,
                                                &len);

        memset(v, 0, sizeof(*v));
        v->ndims = -1;              /* none: a null Variant */
        if (d == NULL || len < 4)
            return UA_GOOD;
        memcpy(&cnt, d, 4);
        if (cnt > (len - 4) / 4 || cnt > INT32_MAX)
            return UA_BAD_INTERNAL_ERROR;
        p = ua_arena_alloc(ctx->arena, (size_t)cnt * 4 + 4);
        if (p == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memcpy(p, d + 4, (size_t)cnt * 4);
        ua_variant_set_array(v, p, (int32_t)cnt, UA_BT_UINT32);
        return UA_GOOD;
    }
    default:
        return UA_BAD_ATTRIBUTE_ID_INVALID;
    }

    p = ua_arena_alloc(ctx->arena, ua_types[bt - 1].size);
    if (p == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memset(p, 0, ua_types[bt - 1].size);
    switch (aid) {
    case UA_ATTR_NODEID:
        wk_node_id(w, i, p);
        break;
    case UA_ATTR_DATATYPE:
        if (n->u.var.data_type < w->ns.nnodes)
            wk_node_id(w, n->u.var.data_type, p);
        else        /* none recorded: the root of all data types */
            *(struct ua_nodeid *)p = ua_nodeid_num(0, UA_NS0ID_BASEDATATYPE);
        break;
    case UA_ATTR_NODECLASS:
        *(int32_t *)p = n->node_class;
        break;
    case UA_ATTR_VALUERANK:
        *(int32_t *)p = n->u.var.value_rank;
        break;
    case UA_ATTR_BROWSENAME:
        wk_node_browse_name(w, i, p);
        break;
    case UA_ATTR_DISPLAYNAME:
        wk_node_localized(w, n->dn_text, n->dn_locale, p);
        break;
    case UA_ATTR_DESCRIPTION:
        wk_node_localized(w, n->desc_text, n->desc_locale, p);
        break;
    case UA_ATTR_INVERSENAME:
        wk_node_localized(w, n->u.ref.inv_text, n->u.ref.inv_locale, p);
        break;
    case UA_ATTR_WRITEMASK:
        *(uint32_t *)p = n->write_mask;
        break;
    case UA_ATTR_USERWRITEMASK:
        *(uint32_t *)p = wk_session_may_write(w, ctx->session)
                             ? n->user_write_mask & n->write_mask : 0;
        break;
    case UA_ATTR_ACCESSLEVELEX:
        *(uint32_t *)p = n->access_level_ex;
        break;
    case UA_ATTR_ISABSTRACT:
        *(bool *)p = (n->flags & SHM_NF_ABSTRACT) != 0;
        break;
    case UA_ATTR_SYMMETRIC:
        *(bool *)p = (n->flags & SHM_NF_SYMMETRIC) != 0;
        break;
    case UA_ATTR_CONTAINSNOLOOPS:
        *(bool *)p = (n->flags & SHM_NF_CONTAINS_NO_LOOPS) != 0;
        break;
    case UA_ATTR_HISTORIZING:
        *(bool *)p = (n->flags & SHM_NF_HISTORIZING) != 0;
        break;
    case UA_ATTR_EXECUTABLE:
        *(bool *)p = (n->flags & SHM_NF_EXECUTABLE) != 0;
        break;
    case UA_ATTR_USEREXECUTABLE:
        *(bool *)p = (n->flags & SHM_NF_USER_EXECUTABLE) != 0
                     && (n->flags & SHM_NF_EXECUTABLE) != 0;
        break;
    case UA_ATTR_EVENTNOTIFIER:
        *(uint8_t *)p = n->event_notifier;
        break;
    case UA_ATTR_ACCESSLEVEL:
        *(uint8_t *)p = (uint8_t)(n->access_level_ex & 0xFF);
        break;
    case UA_ATTR_USERACCESSLEVEL:
        *(uint8_t *)p = (uint8_t)(n->user_access_level
                                  & n->access_level_ex & 0xFF);
        /* Readers: no CurrentWrite, HistoryWrite, StatusWrite,
         * TimestampWrite (Part 3 §8.57). */
        if (!wk_session_may_write(w, ctx->session))
            *(uint8_t *)p &= (uint8_t)~(0x02 | 0x08 | 0x20 | 0x40);
        /* HistoryWrite: operators only (worker/svc_histupd.c). */
        if (ctx->session == NULL || ctx->session->user != WK_USER_OPERATOR)
            *(uint8_t *)p &= (uint8_t)~0x08;
        break;
    case UA_ATTR_MINIMUMSAMPLINGINTERVAL:
        *(double *)p = n->min_sampling;
        break;
    default:
        break;
    }
    ua_variant_set_scalar(v, p, bt);
    return UA_GOOD;
}

/*
 * Copy slot's bytes into the arena.  The slot's current length sizes the
 * buffer; a value that grew meanwhile (-ENOSPC) gets a bigger one.  0,
 * -EAGAIN (still mid-write after one more try), -EINVAL, -ENOMEM.
 */
static int
wk_attr_slot_read(const struct wk_attr_ctx *ctx, uint32_t slot,
                  struct shm_value *m, uint8_t **bytes)
{
    const struct shm_values *vals = &ctx->w->vals;
    size_t                   cap;
    int                      rc = -EAGAIN;

    if (slot >= vals->nslots)
        return -EINVAL;
    cap = atomic_load_explicit(&vals->slots[slot].len, memory_order_relaxed);
    if (cap < SHM_VALUE_INLINE)
        cap = SHM_VALUE_INLINE;
    for (int t = 0; t < WK_SLOT_TRIES; t++) {
        uint8_t *buf = ua_arena_alloc(ctx->arena, cap);

        if (buf == NULL)
            return -ENOMEM;
        rc = shm_value_read(vals, slot, m, buf, cap);
        if (rc == 0) {
            *bytes = buf;
            return 0;
        }
        if (rc == -ENOSPC)
            cap = m->len;
        else if (rc != -EAGAIN || t > 0)
            break;
    }
    return rc == -ENOSPC ? -EAGAIN : rc;
}

/*
 * The whole Value of node n (a Variable or a VariableType) when its slot
 * holds a small inline value: the DataValue is encoded straight into the
 * arena (mask, the slot's Variant bytes, status, timestamps: the fields
 * and order of wk_attr_value) and marked UA_DV_ENCODED, so the encoder
 * copies it.  BadEncodingLimitsExceeded (never an operation result here)
 * asks the caller to take wk_attr_value: a heap value, a slot that did not
 * read consistently at once, no slot.
 */
ua_status
wk_attr_value_enc(const struct wk_attr_ctx *ctx, const struct shm_node *n,
                 int32_t ttr, struct ua_datavalue *dv)
{
    struct wk_worker *w = ctx->w;
    struct shm_value  m;
    uint8_t          *b, *q, mask = 0;

    if (n->node_class == SHM_NC_VARIABLE) {
        if (!(n->access_level_ex & WK_AL_CURRENTREAD))
            return UA_BAD_NOT_READABLE;
        if (!(n->user_access_level & WK_AL_CURRENTREAD))
            return UA_BAD_USER_ACCESS_DENIED;
    }
    /* StartOfArchive and StartOfOnlineArchive: the history store's
     * (worker/histarchive.c), else the slot's. */
    if ((n->flags & SHM_NF_HIST_ARCHIVE) && w->archive_value != NULL
        && w->archive_value(w, (uint32_t)(n - w->ns.nodes), ttr, ctx->arena,
                            dv))
        return UA_GOOD;
    b = ua_arena_alloc(ctx->arena, WK_DV_ENC_MAX);
    if (b == NULL
        || shm_value_read(&w->vals, n->u.var.slot, &m, b + 1,
                          SHM_VALUE_INLINE) != 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    q = b + 1;
    /* Part 4 §7.11.1: with a Bad status the value is null. */
    if (!UA_STATUS_IS_BAD(m.status) && m.len > 0) {
        mask |= UA_DV_VALUE;
        q += m.len;
    }
    if (m.status != UA_GOOD) {
        mask |= UA_DV_STATUS;
        memcpy(q, &m.status, 4);
        q += 4;
    }
    if ((ttr == UA_TIMESTAMPSTORETURN_SOURCE
         || ttr == UA_TIMESTAMPSTORETURN_BOTH)
        && (m.flags & SHM_VF_SOURCE_TS)) {
        mask |= UA_DV_SOURCE_TS;
        memcpy(q, &m.source_ts, 8);
        q += 8;
        if (m.source_ps != 0) {
            mask |= UA_DV_SOURCE_PS;
            memcpy(q, &m.source_ps, 2);
            q += 2;
        }
    }
    if (ttr == UA_TIMESTAMPSTORETURN_SERVER
        || ttr == UA_TIMESTAMPSTORETURN_BOTH) {
        mask |= UA_DV_SERVER_TS;
        if (m.flags & SHM_VF_SERVER_TS) {
            memcpy(q, &m.server_ts, 8);
            q += 8;
            if (m.server_ps != 0) {
                mask |= UA_DV_SERVER_PS;
                memcpy(q, &m.server_ps, 2);
                q += 2;
            }
        } else {
            memcpy(q, &w->now_dt, 8);
            q += 8;
        }
    }
    b[0] = mask;
    dv->mask = UA_DV_ENCODED;
    dv->value.type = UA_VARIANT_RAW;
    dv->value.n = (int32_t)(q - b);
    dv->value.data = b;
    return UA_GOOD;
}

/* The Value attribute of node i (a Variable or a VariableType). */
ua_status
wk_attr_value(const struct wk_attr_ctx *ctx, uint32_t i,
              const struct ua_indexrange *r, int32_t ttr,
              struct ua_datavalue *dv)
{
    struct wk_worker      *w = ctx->w;
    const struct shm_node *n = &w->ns.nodes[i];
    struct shm_value       m;
    uint8_t               *bytes;
    int                    rc;

    if (n->node_class == SHM_NC_VARIABLE) {
        if (!(n->access_level_ex & WK_AL_CURRENTREAD))
            return UA_BAD_NOT_READABLE;
        if (!(n->user_access_level & WK_AL_CURRENTREAD))
            return UA_BAD_USER_ACCESS_DENIED;
    }
    rc = wk_attr_slot_read(ctx, n->u.var.slot, &m, &bytes);
    switch (rc) {
    case 0:
        break;
    case -ENOMEM:
        return UA_BAD_OUT_OF_MEMORY;
    case -EAGAIN:
        return UA_BAD_NO_COMMUNICATION;
    default:
        return UA_BAD_INTERNAL_ERROR;   /* a Variable without a slot */
    }

    /* Part 4 §7.11.1: with a Bad status the value is null. */
    if (!UA_STATUS_IS_BAD(m.status) && m.len > 0) {
        if (r != NULL) {
            struct ua_variant v;

            if (ua_decode(bytes, m.len, NULL, &v, &ua_types[UA_TYPE_VARIANT],
                          ctx->arena, &wk_attr_slot_limits) != UA_GOOD)
                return UA_BAD_INTERNAL_ERROR;
            rc = (int)ua_indexrange_extract(ctx->arena, r, &v, &dv->value);
            if ((ua_status)rc != UA_GOOD)
                return (ua_status)rc;
        } else {
            dv->value.type = UA_VARIANT_RAW;
            dv->value.n = (int32_t)m.len;
            dv->value.data = bytes;
        }
        dv->mask |= UA_DV_VALUE;
    } else if (r != NULL && !UA_STATUS_IS_BAD(m.status)) {
        return UA_BAD_INDEX_RANGE_NO_DATA;      /* no value to cut */
    }
    if (m.status != UA_GOOD) {
        dv->mask |= UA_DV_STATUS;
        dv->status = m.status;
    }
    if ((ttr == UA_TIMESTAMPSTORETURN_SOURCE
         || ttr == UA_TIMESTAMPSTORETURN_BOTH)
        && (m.flags & SHM_VF_SOURCE_TS)) {
        dv->mask |= UA_DV_SOURCE_TS;
        dv->source_ts = m.source_ts;
        if (m.source_ps != 0) {
            dv->mask |= UA_DV_SOURCE_PS;
            dv->source_ps = m.source_ps;
        }
    }
    if (ttr == UA_TIMESTAMPSTORETURN_SERVER
        || ttr == UA_TIMESTAMPSTORETURN_BOTH) {
        dv->mask |= UA_DV_SERVER_TS;
        if (m.flags & SHM_VF_SERVER_TS) {
            dv->server_ts = m.server_ts;
            if (m.server_ps != 0) {
                dv->mask |= UA_DV_SERVER_PS;
                dv->server_ps = m.server_ps;
            }
        } else {
            dv->server_ts = w->now_dt;
        }
    }
    return UA_GOOD;
}
