/*
 * proto/indexrange.c: IndexRange parsing, extraction and splicing (range.h).
 *
 * Everything is bounded by the input: the parser is one pass over the
 * text, extraction walks only the selected block, splicing copies the
 * value once.  Nothing is allocated but from the caller's arena, and no
 * size is computed that could overflow: a block's element count is at
 * most the value's.
 */
#include "indexrange.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "status_gen.h"

static void ua_indexrange_substring(struct ua_string *s, uint64_t lo,
                                    uint64_t hi);

ua_status
ua_indexrange_parse(const uint8_t *s, size_t len, struct ua_indexrange *r)
{
    const uint8_t *p = s, *end = s + len;

    r->n = 0;
    if (p == NULL || len == 0)
        return UA_BAD_INDEX_RANGE_INVALID;
    for (;;) {
        uint64_t v[2] = { 0, 0 };
        int      k;

        for (k = 0; k < 2; k++) {
            const uint8_t *start = p;

            while (p < end && *p >= '0' && *p <= '9') {
                v[k] = v[k] * 10 + (uint64_t)(*p - '0');
                if (v[k] > UA_INDEXRANGE_BOUND)
                    v[k] = UA_INDEXRANGE_BOUND;
                p++;
            }
            if (p == start)
                return UA_BAD_INDEX_RANGE_INVALID;
            if (k == 1 || p == end || *p != ':')
                break;
            p++;
        }
        if (k == 1 && v[0] >= v[1])
            return UA_BAD_INDEX_RANGE_INVALID;
        if (k == 0)
            v[1] = v[0];
        if (r->n < UA_INDEXRANGE_DIMS_MAX) {
            r->lo[r->n] = v[0];
            r->hi[r->n] = v[1];
        }
        if (r->n < UINT32_MAX)
            r->n++;
        if (p == end)
            return UA_GOOD;
        if (*p != ',')
            return UA_BAD_INDEX_RANGE_INVALID;
        p++;
    }
}

/* Cut s to bytes [lo, hi], hi cut at its end; nothing when lo is past. */
static void
ua_indexrange_substring(struct ua_string *s, uint64_t lo, uint64_t hi)
{
    if (s->len <= 0 || lo >= (uint64_t)s->len) {
        s->len = 0;                 /* nothing of this element */
        return;
    }
    if (hi >= (uint64_t)s->len)
        hi = (uint64_t)s->len - 1;
    s->data += lo;
    s->len = (int32_t)(hi - lo + 1);
}

ua_status
ua_indexrange_extract(struct ua_arena *a, const struct ua_indexrange *r,
                      const struct ua_variant *v, struct ua_variant *out)
{
    const struct ua_type *et;
    const int32_t        *dims;
    int32_t               one, nd;
    int32_t               cnt[UA_INDEXRANGE_DIMS_MAX];
    int32_t               idx[UA_INDEXRANGE_DIMS_MAX];
    size_t                total = 1, esz;
    size_t                stride[UA_INDEXRANGE_DIMS_MAX];
    bool                  strs;
    uint8_t              *dst;
    const uint8_t        *src;

    if (r->n > UA_INDEXRANGE_DIMS_MAX || v->type == UA_BT_NULL
        || v->type > UA_BT_MAX)
        return UA_BAD_INDEX_RANGE_NO_DATA;
    strs = v->type == UA_BT_STRING || v->type == UA_BT_BYTESTRING;
    et = &ua_types[v->type - 1];
    esz = et->size;

    if (!v->is_array) {
        struct ua_string *s;

        if (!strs || r->n != 1)
            return UA_BAD_INDEX_RANGE_NO_DATA;
        s = v->data;
        if (s->len <= 0 || r->lo[0] >= (uint64_t)s->len)
            return UA_BAD_INDEX_RANGE_NO_DATA;
        *out = *v;
        out->data = ua_arena_alloc(a, sizeof(*s));
        if (out->data == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        *(struct ua_string *)out->data = *s;
        ua_indexrange_substring(out->data, r->lo[0], r->hi[0]);
        return UA_GOOD;
    }

    if (v->ndims > 1) {
        nd = v->ndims;
        dims = v->dims;
    } else {
        one = v->n > 0 ? v->n : 0;
        nd = 1;
        dims = &one;
    }
    if (nd > UA_INDEXRANGE_DIMS_MAX
        || !((uint32_t)nd == r->n || (strs && (uint32_t)nd + 1 == r->n)))
        return UA_BAD_INDEX_RANGE_NO_DATA;
    for (int32_t d = 0; d < nd; d++) {
        uint64_t hi = r->hi[d];

        if (r->lo[d] >= (uint64_t)dims[d])
            return UA_BAD_INDEX_RANGE_NO_DATA;
        if (hi >= (uint64_t)dims[d])
            hi = (uint64_t)dims[d] - 1;     /* partial result */
        cnt[d] = (int32_t)(hi - r->lo[d] + 1);
        total *= (size_t)cnt[d];            /* <= v->n: no overflow */
        idx[d] = 0;
    }
    stride[nd - 1] = 1;
    for (int32_t d = nd - 1; d > 0; d--)
        stride[d - 1] = stride[d] * (size_t)dims[d];

    dst = ua_arena_alloc(a, total * esz);
    if (dst == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    src = v->data;
    /* Walk the block, last dimension fastest (Part 6 §5.2.2.16). */
    for (size_t k = 0; k < total; k++) {
        size_t off = 0;

        for (int32_t d = 0; d < nd; d++)
            off += ((size_t)r->lo[d] + (size_t)idx[d]) * stride[d];
        memcpy(dst + k * esz, src + off * esz, esz);
        if (strs && (uint32_t)nd < r->n)
            ua_indexrange_substring((struct ua_string *)(dst + k * esz),
                                    r->lo[nd], r->hi[nd]);
        for (int32_t d = nd - 1; d >= 0; d--) {
            if (++idx[d] < cnt[d])
                break;
            idx[d] = 0;
        }
    }
    memset(out, 0, sizeof(*out));
    out->type = v->type;
    out->is_array = 1;
    out->n = (int32_t)total;
    out->data = dst;
    out->ndims = -1;
    if (nd > 1) {
        int32_t *od = ua_arena_alloc(a, (size_t)nd * sizeof(int32_t));

        if (od == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memcpy(od, cnt, (size_t)nd * sizeof(int32_t));
        out->ndims = nd;
        out->dims = od;
    }
    return UA_GOOD;
}

ua_status
ua_indexrange_splice(struct ua_arena *a, const struct ua_indexrange *r,
                     const struct ua_variant *cur,
                     const struct ua_variant *piece, struct ua_variant *out)
{
    uint64_t lo, hi, cnt;

    if (r->n != 1 || cur->type == UA_BT_NULL || cur->type > UA_BT_MAX)
        return UA_BAD_INDEX_RANGE_NO_DATA;
    lo = r->lo[0];
    hi = r->hi[0];
    cnt = hi - lo + 1;
    if (!cur->is_array) {
        const struct ua_string *s = cur->data, *p = piece->data;
        struct ua_string       *ns;
        uint8_t                *bytes;

        if (cur->type != UA_BT_STRING && cur->type != UA_BT_BYTESTRING)
            return UA_BAD_INDEX_RANGE_NO_DATA;
        if (s->len <= 0 || hi >= (uint64_t)s->len)
            return UA_BAD_INDEX_RANGE_NO_DATA;
        if (piece->is_array || piece->type != cur->type || p->len < 0
            || (uint64_t)p->len != cnt)
            return UA_BAD_INDEX_RANGE_DATA_MISMATCH;
        bytes = ua_arena_alloc(a, (size_t)s->len);
        ns = ua_arena_alloc(a, sizeof(*ns));
        if (bytes == NULL || ns == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memcpy(bytes, s->data, (size_t)s->len);
        memcpy(bytes + lo, p->data, (size_t)cnt);
        ns->len = s->len;
        ns->data = bytes;
        *out = *cur;
        out->data = ns;
    } else {
        size_t esz;
        void  *d;

        if (cur->ndims > 1 || cur->n <= 0 || hi >= (uint64_t)cur->n)
            return UA_BAD_INDEX_RANGE_NO_DATA;
        if (!piece->is_array || piece->type != cur->type
            || piece->ndims > 1 || piece->n < 0
            || (uint64_t)piece->n != cnt)
            return UA_BAD_INDEX_RANGE_DATA_MISMATCH;
        esz = ua_types[cur->type - 1].size;
        d = ua_arena_alloc(a, (size_t)cur->n * esz);
        if (d == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memcpy(d, cur->data, (size_t)cur->n * esz);
        memcpy((uint8_t *)d + lo * esz, piece->data, (size_t)cnt * esz);
        *out = *cur;
        out->data = d;
    }
    return UA_GOOD;
}
