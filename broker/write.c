/*
 * broker/write.c: checks and application of WriteValues (write.h).
 *
 * Two paths, one answer.  The general path (bk_write_apply_any) decodes
 * the DataValue, checks it (bk_write_check) and stores it through
 * bk_value_write().  The fast path (bk_write_apply_small) takes the
 * WriteValue nearly every client sends, the Value alone, a scalar of a
 * fixed-size built-in type, no IndexRange, when the node is known to take
 * that type: w->wnodes, one entry per node built once after the address
 * space (bk_write_init), holds the node's value slot and the set of such
 * types bk_write_check() itself accepts for it, so the per-write checks
 * are a table lookup and the two paths cannot disagree.  It stores the
 * Variant bytes as they came (bk_value_write_small: the same slot
 * contents, ServerTimestamp rule and notification, inline).  Anything it
 * does not take, refusals included, goes the general way, which gives
 * every status.  bk_write_apply_ops() runs a request record's operations
 * in one loop with the fast path inline (no call per operation).
 *
 * Broker only, on its loop; everything decoded lives in the caller's
 * arena.  No heap but the node table, allocated once at start-up.
 */
#include "write.h"

#include <errno.h>
#include <string.h>

#include "alloc.h"

#include "proto/attrs.h"
#include "proto/builtin.h"
#include "proto/nodeids_gen.h"
#include "proto/indexrange.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"
#include "shm/value.h"

static inline uint32_t bk_write_ns0_id(const struct shm_nodestore *ns,
                                       uint32_t i);
static bool bk_write_struct_ok(const struct shm_nodestore *ns, uint32_t dt,
                               const struct ua_variant *v);
static ua_status bk_write_decode(const struct bk_write_req *r,
                                 struct ua_arena *a, struct ua_datavalue *dv,
                                 const uint8_t **vbytes, size_t *vlen);
static inline bool bk_write_apply_small(struct bk_write *w,
                                        uint32_t node, uint32_t attr,
                                        uint32_t range_len,
                                        const uint8_t *dv, uint32_t dv_len,
                                        int64_t now, ua_status *st);
static ua_status bk_write_apply_wop(struct bk_write *w,
                                    const struct shm_fo_wop *wop,
                                    const uint8_t *range, const uint8_t *dv,
                                    struct ua_arena *a, int64_t now)
    __attribute__((noinline));
static ua_status bk_write_apply_any(struct bk_write *w,
                                    const struct bk_write_req *r,
                                    struct ua_arena *a, int64_t now);
static ua_status bk_write_splice(struct bk_write *w, uint32_t node,
                                 const struct ua_indexrange *rg,
                                 const struct ua_variant *piece,
                                 struct ua_arena *a, const uint8_t **out,
                                 size_t *outlen);

/* Our own slot bytes: the broker sized them, not the client. */
static const struct ua_limits bk_write_slot_limits = {
    .max_string_len = INT32_MAX,
    .max_bytestring_len = INT32_MAX,
    .max_array_len = INT32_MAX,
    .max_depth = UA_NESTING_MAX,
    .max_message_size = SIZE_MAX,
};


/* ns=0 numeric id of node i, or 0. */
static inline uint32_t
bk_write_ns0_id(const struct shm_nodestore *ns, uint32_t i)
{
    const struct shm_node *n;

    if (i >= ns->nnodes)
        return 0;
    n = &ns->nodes[i];
    return n->ns == 0 && n->idtype == SHM_ID_NUMERIC ? n->id : 0;
}

_Static_assert(SHM_NC_OBJECT == UA_NODECLASS_OBJECT
               && SHM_NC_VARIABLE == UA_NODECLASS_VARIABLE
               && SHM_NC_METHOD == UA_NODECLASS_METHOD
               && SHM_NC_OBJECTTYPE == UA_NODECLASS_OBJECTTYPE
               && SHM_NC_VARIABLETYPE == UA_NODECLASS_VARIABLETYPE
               && SHM_NC_REFERENCETYPE == UA_NODECLASS_REFERENCETYPE
               && SHM_NC_DATATYPE == UA_NODECLASS_DATATYPE
               && SHM_NC_VIEW == UA_NODECLASS_VIEW,
               "node classes are the NodeClass bits (ua_attrs_valid)");
_Static_assert(SHM_NS0_TYPE_ROOT_MAX == UA_NS0ID_ENUMERATION,
               "shm_nodestore_type_root stops at Enumeration");

uint32_t
bk_write_type_root(const struct shm_nodestore *ns, uint32_t dt)
{
    return shm_nodestore_type_root(ns, dt, SHM_TYPE_ROOT_DEPTH);
}

/* Every element an ExtensionObject of DataType dt or a subtype. */
static bool
bk_write_struct_ok(const struct shm_nodestore *ns, uint32_t dt,
                   const struct ua_variant *v)
{
    const struct ua_extobj *x = v->data;
    int32_t                 n = v->is_array ? v->n : 1;
    bool                    any = bk_write_ns0_id(ns, dt)
                                  == UA_NS0ID_STRUCTURE;

    for (int32_t k = 0; k < n; k++) {
        struct shm_nodekey key = { .ns = 0, .idtype = SHM_ID_NUMERIC };
        uint32_t           t;

        if (any && x[k].encoding != UA_EO_NONE)
            continue;
        if (x[k].encoding != UA_EO_DECODED || x[k].type == NULL)
            return false;
        key.num = x[k].type->type_id;
        t = shm_nodestore_lookup(ns, &key);
        if (t == SHM_NONE || !shm_nodestore_is_subtype(ns, t, dt))
            return false;
    }
    return true;
}

bool
bk_write_type_ok(const struct shm_nodestore *ns, uint32_t dt,
                 const struct ua_variant *v)
{
    uint32_t root = bk_write_type_root(ns, dt);

    if (!ua_types_root_admits(root, v->type))
        return false;
    return root != UA_NS0ID_STRUCTURE || bk_write_struct_ok(ns, dt, v);
}

bool
bk_write_rank_ok(const struct shm_nodestore *ns, uint32_t i,
                 const struct ua_variant *v)
{
    const struct shm_node *n = &ns->nodes[i];
    int32_t                rank = n->u.var.value_rank;
    int32_t                nd = !v->is_array ? 0 : v->ndims > 0 ? v->ndims
                                                                : 1;
    const uint8_t         *d;
    uint32_t               len, cnt;

    if (v->type == UA_BT_NULL)
        return true;                /* BaseDataType's empty value */
    switch (rank) {
    case -1:                        /* Scalar */
        if (nd != 0)
            return false;
        break;
    case -2:                        /* Any */
        break;
    case -3:                        /* ScalarOrOneDimension */
        if (nd > 1)
            return false;
        break;
    case 0:                         /* OneOrMoreDimensions */
        if (nd < 1)
            return false;
        break;
    default:
        if (rank < 0 || nd != rank)
            return false;
        break;
    }
    if (nd == 0)
        return true;
    /* ArrayDimensions: the longest each dimension may be, 0 = any. */
    d = shm_nodestore_string(ns, n->u.var.array_dims, &len);
    if (d == NULL || len < 4)
        return true;
    memcpy(&cnt, d, 4);
    if (cnt > (len - 4) / 4 || (int32_t)cnt != nd)
        return true;                /* not about this shape */
    for (int32_t k = 0; k < nd; k++) {
        uint32_t max;
        int32_t  have = nd == 1 ? (v->n < 0 ? 0 : v->n) : v->dims[k];

        memcpy(&max, d + 4 + 4 * (size_t)k, 4);
        if (max != 0 && (uint32_t)have > max)
            return false;
    }
    return true;
}

/* The checks of bk_write_check() that look at the node alone. */
static inline ua_status
bk_write_node_ok(const struct shm_node *n, uint32_t attr)
{
    if (!ua_attrs_valid(n->node_class, attr))
        return UA_BAD_ATTRIBUTE_ID_INVALID;
    if (attr != UA_ATTR_VALUE || n->node_class != SHM_NC_VARIABLE)
        return UA_BAD_NOT_WRITABLE;
    if (!(n->access_level_ex & BK_AL_CURRENTWRITE))
        return UA_BAD_NOT_WRITABLE;
    if (!(n->user_access_level & BK_AL_CURRENTWRITE))
        return UA_BAD_USER_ACCESS_DENIED;
    return UA_GOOD;
}

ua_status
bk_write_check(const struct shm_nodestore *ns, uint32_t node, uint32_t attr,
               const struct ua_datavalue *dv, bool has_range)
{
    const struct shm_node *n;
    uint32_t               al;
    struct ua_variant      empty = { 0 };
    const struct ua_variant *v;
    ua_status              s;

    if (node >= ns->nnodes)
        return UA_BAD_NODE_ID_UNKNOWN;
    n = &ns->nodes[node];
    s = bk_write_node_ok(n, attr);
    if (s != UA_GOOD)
        return s;
    al = n->access_level_ex;
    if (dv->mask & (UA_DV_SERVER_TS | UA_DV_SERVER_PS))
        return UA_BAD_WRITE_NOT_SUPPORTED;
    if ((dv->mask & UA_DV_STATUS) && dv->status != UA_GOOD
        && !(al & BK_AL_STATUSWRITE))
        return UA_BAD_WRITE_NOT_SUPPORTED;
    if ((dv->mask & (UA_DV_SOURCE_TS | UA_DV_SOURCE_PS))
        && !(al & BK_AL_TIMESTAMPWRITE))
        return UA_BAD_WRITE_NOT_SUPPORTED;
    empty.ndims = -1;
    v = (dv->mask & UA_DV_VALUE) ? &dv->value : &empty;
    if (!bk_write_type_ok(ns, n->u.var.data_type, v))
        return UA_BAD_TYPE_MISMATCH;
    if (!has_range && !bk_write_rank_ok(ns, node, v))
        return UA_BAD_TYPE_MISMATCH;
    return UA_GOOD;
}

/*
 * Decode r's DataValue into *dv; *vbytes and *vlen: the encoded Variant inside
 * it (to be stored as it is when no IndexRange is given: encode once).
 */
static ua_status
bk_write_decode(const struct bk_write_req *r, struct ua_arena *a,
                struct ua_datavalue *dv, const uint8_t **vbytes, size_t *vlen)
{
    size_t used = 0;

    *vbytes = NULL;
    *vlen = 0;
    if (ua_decode(r->dv, r->dv_len, &used, dv, &ua_types[UA_TYPE_DATAVALUE],
                  a, &bk_write_slot_limits) != UA_GOOD || used != r->dv_len)
        return UA_BAD_DECODING_ERROR;
    if (dv->mask & UA_DV_VALUE) {
        /* The Variant starts after the mask byte; decode it again alone
         * to learn its length (cheap next to a re-encode). */
        struct ua_variant v;

        used = 0;
        if (r->dv_len < 1
            || ua_decode(r->dv + 1, r->dv_len - 1, &used, &v,
                         &ua_types[UA_TYPE_VARIANT], a,
                         &bk_write_slot_limits) != UA_GOOD)
            return UA_BAD_DECODING_ERROR;
        *vbytes = r->dv + 1;
        *vlen = used;
    }
    return UA_GOOD;
}

/*
 * The current value of node with piece written over range rg, encoded in
 * the arena.  Arrays of one dimension and String / ByteString scalars; the
 * piece has exactly the range's length and the value's element type.
 */
static ua_status
bk_write_splice(struct bk_write *w, uint32_t node,
                const struct ua_indexrange *rg,
                const struct ua_variant *piece, struct ua_arena *a,
                const uint8_t **out, size_t *outlen)
{
    const struct shm_node *n = &w->ns->nodes[node];
    struct shm_value       m;
    struct ua_variant      cur, nv;
    uint8_t               *buf, *enc;
    size_t                 cap = 256, need;
    ua_status              s;
    int                    rc;

    if (rg->n != 1)
        return UA_BAD_INDEX_RANGE_NO_DATA;
    for (int t = 0; t < 4; t++) {
        buf = ua_arena_alloc(a, cap);
        if (buf == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        rc = shm_value_read(&w->val->vals, n->u.var.slot, &m, buf, cap);
        if (rc != -ENOSPC)
            break;
        cap = m.len;
    }
    if (rc != 0 || UA_STATUS_IS_BAD(m.status) || m.len == 0)
        return UA_BAD_INDEX_RANGE_NO_DATA;
    if (ua_decode(buf, m.len, NULL, &cur, &ua_types[UA_TYPE_VARIANT], a,
                  &bk_write_slot_limits) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    s = ua_indexrange_splice(a, rg, &cur, piece, &nv);
    if (s != UA_GOOD)
        return s;
    need = ua_encoded_size(&nv, &ua_types[UA_TYPE_VARIANT]);
    if (need == 0)
        return UA_BAD_INTERNAL_ERROR;
    enc = ua_arena_alloc(a, need);
    if (enc == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    if (ua_encode(&nv, &ua_types[UA_TYPE_VARIANT], enc, need, outlen)
        != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    *out = enc;
    return UA_GOOD;
}

int
bk_write_init(struct bk_write *w, const struct shm_nodestore *ns,
              struct bk_value *v)
{
    struct bk_write_node *t;
    uint8_t               val[8] = { 0 };

    w->ns = ns;
    w->nnodes = ns->nnodes;
    w->val = v;
    w->wnodes = NULL;
    /* Mask, encoding byte and the value's fixed encoded size (Part 6
     * §5.2.2), for the built-in types of at most 8 bytes. */
    memset(w->small_dv, 0, sizeof(w->small_dv));
    for (unsigned bt = 1; bt <= UA_BT_MAX; bt++)
        if (ua_builtin[bt].size != 0 && ua_builtin[bt].size <= 8)
            w->small_dv[bt] = (uint8_t)(2 + ua_builtin[bt].size);
    t = bk_calloc(ns->nnodes, sizeof(*t));
    if (t == NULL)
        return -ENOMEM;
    for (uint32_t i = 0; i < ns->nnodes; i++) {
        const struct shm_node *n = &ns->nodes[i];

        t[i].slot = SHM_NONE;
        if (n->node_class != SHM_NC_VARIABLE
            || n->u.var.slot >= v->vals.nslots)
            continue;                   /* the general path's business */
        t[i].slot = n->u.var.slot;
        /* The general path's own checks decide, so the two cannot
         * disagree; the value's content plays no part in them. */
        for (unsigned bt = 1; bt < 32; bt++) {
            struct ua_datavalue dv;

            if (w->small_dv[bt] == 0)
                continue;
            memset(&dv, 0, sizeof(dv));
            dv.mask = UA_DV_VALUE;
            ua_variant_set_scalar(&dv.value, val, (uint8_t)bt);
            if (bk_write_check(ns, i, UA_ATTR_VALUE, &dv, false) == UA_GOOD)
                t[i].types |= UINT32_C(1) << bt;
        }
    }
    w->wnodes = t;
    return 0;
}

void
bk_write_clear(struct bk_write *w)
{
    bk_free(w->wnodes);
    w->wnodes = NULL;
}

/*
 * The fast path: a WriteValue of the Value alone, a scalar of a
 * fixed-size type node is known to take (w->wnodes, worked out by
 * bk_write_check itself), no IndexRange.  Nothing to decode and nothing
 * else to check: store the Variant bytes as they are
 * (bk_value_write_small), set *st, true.  false for anything else,
 * refusals included: bk_write_apply_any() gives those their statuses.  A
 * Boolean other than 0 or 1 is the codec's business.
 */
static inline __attribute__((always_inline)) bool
bk_write_apply_small(struct bk_write *w, uint32_t node, uint32_t attr,
                     uint32_t range_len, const uint8_t *dv, uint32_t dv_len,
                     int64_t now, ua_status *st)
{
    const struct bk_write_node *wn;
    uint32_t                    bt;
    int                         rc;

    if (attr != UA_ATTR_VALUE || range_len != 0 || dv_len < 3
        || dv[0] != UA_DV_VALUE || node >= w->nnodes)
        return false;
    bt = dv[1];
    wn = &w->wnodes[node];
    if (w->small_dv[bt] != dv_len || (wn->types >> bt & 1) == 0
        || (bt == UA_BT_BOOLEAN && dv[2] > 1))
        return false;
    rc = bk_value_write_small(w->val, wn->slot, dv + 1, dv_len - 1, now);
    *st = rc == 0 ? UA_GOOD
          : rc == -ENOSPC ? UA_BAD_OUT_OF_MEMORY : UA_BAD_INTERNAL_ERROR;
    return true;
}

uint32_t
bk_write_apply_ops(struct bk_write *w, const uint8_t *p, uint32_t len,
                   uint32_t nops, struct ua_arena *a, int64_t now,
                   struct bk_write_result *res)
{
    uint32_t off = 0, k;

    for (k = 0; k < nops; k++) {
        struct shm_fo_wop wop;
        const uint8_t    *range, *dv;
        uint64_t          n;

        if (len - off < sizeof(wop))
            break;                      /* truncated: the rest is lost */
        memcpy(&wop, p + off, sizeof(wop));
        res[k].op = wop.op;
        n = shm_fo_wop_bytes(wop.range_len, wop.dv_len);
        if (n > len - off) {
            res[k++].st = UA_BAD_DECODING_ERROR;
            break;
        }
        range = p + off + sizeof(wop);
        dv = range + wop.range_len;
        if (!bk_write_apply_small(w, wop.node, wop.attr, wop.range_len, dv,
                                  wop.dv_len, now, &res[k].st))
            res[k].st = bk_write_apply_wop(w, &wop, range, dv, a, now);
        off += (uint32_t)n;
    }
    return k;
}

/* bk_write_apply() of an operation of a record; out of the loop's way. */
static ua_status
bk_write_apply_wop(struct bk_write *w, const struct shm_fo_wop *wop,
                   const uint8_t *range, const uint8_t *dv,
                   struct ua_arena *a, int64_t now)
{
    struct bk_write_req r;
    ua_status           s;

    r.node = wop->node;
    r.attr = wop->attr;
    r.range = range;
    r.range_len = wop->range_len;
    r.dv = dv;
    r.dv_len = wop->dv_len;
    s = bk_write_apply(w, &r, a, now);
    if (a->used != 0)
        ua_arena_reset(a);
    return s;
}

ua_status
bk_write_apply(struct bk_write *w, const struct bk_write_req *r,
               struct ua_arena *a, int64_t now)
{
    ua_status s;

    if (r->node >= w->nnodes)
        return UA_BAD_NODE_ID_UNKNOWN;
    if (bk_write_apply_small(w, r->node, r->attr, r->range_len, r->dv,
                             r->dv_len, now, &s))
        return s;
    return bk_write_apply_any(w, r, a, now);
}

/*
 * bk_write_apply() past the fast path: decode, check, an IndexRange
 * merged, store.  Its own function: its locals (a DataValue, a parsed
 * range) would make every fast-path call pay their frame.
 */
static ua_status
bk_write_apply_any(struct bk_write *w, const struct bk_write_req *r,
                   struct ua_arena *a, int64_t now)
{
    const struct shm_nodestore *ns = w->ns;
    struct ua_datavalue         dv;
    struct ua_indexrange        rg;
    struct shm_value            m;
    const uint8_t              *vbytes;
    size_t                      vlen;
    ua_status                   s;
    int                         rc;

    if (r->range_len != 0) {
        s = ua_indexrange_parse(r->range, r->range_len, &rg);
        if (s != UA_GOOD) {
            /* Node and attribute errors outrank a bad range. */
            memset(&dv, 0, sizeof(dv));
            dv.value.ndims = -1;
            dv.mask = 0;
            s = bk_write_check(ns, r->node, r->attr, &dv, true);
            if (s != UA_GOOD && s != UA_BAD_TYPE_MISMATCH)
                return s;
            return UA_BAD_INDEX_RANGE_INVALID;
        }
    }
    s = bk_write_decode(r, a, &dv, &vbytes, &vlen);
    if (s != UA_GOOD)
        return s;
    s = bk_write_check(ns, r->node, r->attr, &dv, r->range_len != 0);
    if (s != UA_GOOD)
        return s;
    if (r->range_len != 0) {
        if (!(dv.mask & UA_DV_VALUE))
            return UA_BAD_INDEX_RANGE_DATA_MISMATCH;
        s = bk_write_splice(w, r->node, &rg, &dv.value, a, &vbytes, &vlen);
        if (s != UA_GOOD)
            return s;
    } else if (!(dv.mask & UA_DV_VALUE)) {
        static const uint8_t null_variant = 0;

        vbytes = &null_variant;
        vlen = 1;
    }
    memset(&m, 0, sizeof(m));
    m.status = (dv.mask & UA_DV_STATUS) ? dv.status : UA_GOOD;
    m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    if (dv.mask & UA_DV_SOURCE_TS) {
        m.source_ts = dv.source_ts;
        m.source_ps = (dv.mask & UA_DV_SOURCE_PS) ? dv.source_ps : 0;
    } else {
        m.source_ts = now;
    }
    m.server_ts = now;
    rc = bk_value_write(w->val, ns->nodes[r->node].u.var.slot, vbytes,
                        (uint32_t)vlen, &m);
    if (rc == -ENOSPC)
        return UA_BAD_OUT_OF_MEMORY;
    if (rc != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}
