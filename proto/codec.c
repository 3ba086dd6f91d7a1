/*
 * proto/codec.c: OPC UA binary encoding (Part 6 §5.2), driven by ua_types[].
 *
 * The encoder writes through a cursor that keeps counting past the end of
 * the caller's buffer, so a call that does not fit still learns the exact
 * size it needed.  The decoder reads through a cursor bounded by the input;
 * every length is compared with the bytes left before anything is
 * allocated, and nested Variants, DataValues, ExtensionObjects,
 * DiagnosticInfos and structures share one depth counter.
 *
 * Decoded Strings and ByteStrings point into the input buffer (no copy):
 * the input must outlive the decoded value, which must not be modified in
 * place.  Everything else decoded comes from the caller's arena.
 *
 * The wire is little-endian; so is every host we build for (checked below).
 */
#include "codec.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "status_gen.h"
#include "types_gen.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "proto/codec.c assumes a little-endian host"
#endif

struct ua_enc {
    uint8_t  *buf;
    size_t    cap;
    size_t    pos;          /* may pass cap: then we only count */
    uint32_t  depth;
    ua_status err;
};

struct ua_dec {
    const uint8_t          *p;
    const uint8_t          *end;
    struct ua_arena        *a;
    const struct ua_limits *lim;
    uint32_t                depth;
    uint32_t                max_depth;
};

static void ua_enc_value(struct ua_enc *e, const void *v, const struct ua_type *t);
static void ua_enc_array(struct ua_enc *e, const void *data, int32_t n,
                         const struct ua_type *t);
static ua_status ua_dec_value(struct ua_dec *d, void *v, const struct ua_type *t);
static ua_status ua_dec_array(struct ua_dec *d, void **data, int32_t *n,
                              const struct ua_type *t);
static size_t ua_wire_min(const struct ua_type *t, uint32_t depth);
static inline bool ua_dec_read_value_id_fast(struct ua_dec *d,
                                             struct ua_read_value_id *rv);
static inline bool ua_enc_refdesc_fast(struct ua_enc *e,
                                       const struct ua_reference_description *r);
static inline bool ua_enc_response_header_fast(
    struct ua_enc *e, const struct ua_response_header *h);
static inline bool ua_dec_request_header_fast(struct ua_dec *d,
                                              struct ua_request_header *h);

const struct ua_limits ua_limits_default = {
    .max_string_len = UA_LIMIT_STRING_LEN,
    .max_bytestring_len = UA_LIMIT_BYTESTRING_LEN,
    .max_array_len = UA_LIMIT_ARRAY_LEN,
    .max_depth = UA_NESTING_MAX,
    .max_message_size = UA_LIMIT_MESSAGE_SIZE,
};

/* ------------------------------------------------------------------ */
/* encoding                                                            */
/* ------------------------------------------------------------------ */

static inline void
ua_enc_raw(struct ua_enc *e, const void *p, size_t n)
{
    if (n != 0 && e->pos <= e->cap && n <= e->cap - e->pos)
        memcpy(e->buf + e->pos, p, n);
    e->pos += n;
}

static inline void
ua_enc_u8(struct ua_enc *e, uint8_t x)
{
    if (e->pos < e->cap)
        e->buf[e->pos] = x;
    e->pos++;
}

static inline void
ua_enc_u16(struct ua_enc *e, uint16_t x)
{
    ua_enc_raw(e, &x, 2);
}

static inline void
ua_enc_u32(struct ua_enc *e, uint32_t x)
{
    ua_enc_raw(e, &x, 4);
}

static inline void
ua_enc_i32(struct ua_enc *e, int32_t x)
{
    ua_enc_raw(e, &x, 4);
}

static inline void
ua_enc_string(struct ua_enc *e, const struct ua_string *s)
{
    if (s->len < 0 || (s->len > 0 && s->data == NULL)) {
        ua_enc_i32(e, -1);
        return;
    }
    ua_enc_i32(e, s->len);
    ua_enc_raw(e, s->data, (size_t)s->len);
}

static inline void
ua_enc_fail(struct ua_enc *e, ua_status s)
{
    if (e->err == UA_GOOD)
        e->err = s;
}

/* The NodeId encoding byte's low bits; flags are ExpandedNodeId's. */
static void
ua_enc_nodeid(struct ua_enc *e, const struct ua_nodeid *n, uint8_t flags)
{
    uint8_t b[7];

    switch (n->idtype) {
    case UA_IDTYPE_NUMERIC:
        if (n->ns == 0 && n->id.num <= 0xFF) {
            b[0] = 0x00 | flags;
            b[1] = (uint8_t)n->id.num;
            ua_enc_raw(e, b, 2);
        } else if (n->ns <= 0xFF && n->id.num <= 0xFFFF) {
            b[0] = 0x01 | flags;
            b[1] = (uint8_t)n->ns;
            memcpy(b + 2, &(uint16_t){(uint16_t)n->id.num}, 2);
            ua_enc_raw(e, b, 4);
        } else {
            b[0] = 0x02 | flags;
            memcpy(b + 1, &n->ns, 2);
            memcpy(b + 3, &n->id.num, 4);
            ua_enc_raw(e, b, 7);
        }
        return;
    case UA_IDTYPE_STRING:
        ua_enc_u8(e, 0x03 | flags);
        ua_enc_u16(e, n->ns);
        ua_enc_string(e, &n->id.str);
        return;
    case UA_IDTYPE_GUID:
        ua_enc_u8(e, 0x04 | flags);
        ua_enc_u16(e, n->ns);
        ua_enc_raw(e, &n->id.guid, 16);
        return;
    case UA_IDTYPE_OPAQUE:
        ua_enc_u8(e, 0x05 | flags);
        ua_enc_u16(e, n->ns);
        ua_enc_string(e, &n->id.str);
        return;
    default:
        ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
        return;
    }
}

static inline void
ua_enc_expandednodeid(struct ua_enc *e, const struct ua_expandednodeid *x)
{
    uint8_t f = 0;

    if (x->ns_uri.len >= 0 && (x->ns_uri.len == 0 || x->ns_uri.data))
        f |= 0x80;
    if (x->server_index != 0)
        f |= 0x40;
    ua_enc_nodeid(e, &x->node, f);
    if (f & 0x80)
        ua_enc_string(e, &x->ns_uri);
    if (f & 0x40)
        ua_enc_u32(e, x->server_index);
}

static inline void
ua_enc_qualifiedname(struct ua_enc *e, const struct ua_qualifiedname *q)
{
    ua_enc_u16(e, q->ns);
    ua_enc_string(e, &q->name);
}

static inline void
ua_enc_localizedtext(struct ua_enc *e, const struct ua_localizedtext *l)
{
    uint8_t m = l->mask & (UA_LT_LOCALE | UA_LT_TEXT);

    ua_enc_u8(e, m);
    if (m & UA_LT_LOCALE)
        ua_enc_string(e, &l->locale);
    if (m & UA_LT_TEXT)
        ua_enc_string(e, &l->text);
}

static void
ua_enc_variant(struct ua_enc *e, const struct ua_variant *v)
{
    const struct ua_type *et;
    uint8_t               b;

    if (v->type == UA_BT_NULL) {
        ua_enc_u8(e, 0);
        return;
    }
    if (v->type == UA_VARIANT_RAW) {
        if (v->n <= 0 || v->data == NULL) {
            ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
            return;
        }
        ua_enc_raw(e, v->data, (size_t)v->n);
        return;
    }
    if (v->type > UA_BT_MAX) {
        ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
        return;
    }
    et = &ua_types[v->type - 1];
    b = v->type;
    if (!v->is_array) {
        if (v->type == UA_BT_VARIANT || v->data == NULL) {
            /* Part 6 §5.2.2.16: no Variant directly in a Variant. */
            ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
            return;
        }
        ua_enc_u8(e, b);
        ua_enc_value(e, v->data, et);
        return;
    }
    b |= 0x80;
    if (v->ndims >= 0 && v->n >= 0)
        b |= 0x40;
    ua_enc_u8(e, b);
    ua_enc_array(e, v->data, v->n, et);
    if (b & 0x40) {
        int64_t prod = 1;

        for (int32_t i = 0; i < v->ndims; i++) {
            if (v->dims[i] < 0)
                prod = -1;
            else if (prod >= 0)
                prod *= v->dims[i];
            if (prod > INT32_MAX)
                prod = -1;
        }
        if (v->ndims == 0 || prod != v->n) {
            ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
            return;
        }
        ua_enc_i32(e, v->ndims);
        ua_enc_raw(e, v->dims, (size_t)v->ndims * 4);
    }
}

static void
ua_enc_extobj(struct ua_enc *e, const struct ua_extobj *x)
{
    size_t   start, len;
    uint32_t l32;

    switch (x->encoding) {
    case UA_EO_NONE:
        ua_enc_nodeid(e, &x->type_id, 0);
        ua_enc_u8(e, 0);
        return;
    case UA_EO_BYTES:
    case UA_EO_XML:
        ua_enc_nodeid(e, &x->type_id, 0);
        ua_enc_u8(e, x->encoding == UA_EO_BYTES ? 1 : 2);
        if (x->body.len < 0)
            ua_enc_i32(e, 0);
        else
            ua_enc_string(e, &x->body);
        return;
    case UA_EO_DECODED:
        if (x->type == NULL || x->type->binary_id == 0 || x->obj == NULL) {
            ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
            return;
        }
        ua_enc_nodeid(e, &(struct ua_nodeid){ .ns = 0,
                      .idtype = UA_IDTYPE_NUMERIC,
                      .id.num = x->type->binary_id }, 0);
        ua_enc_u8(e, 1);
        start = e->pos;
        ua_enc_u32(e, 0);               /* patched below */
        ua_enc_value(e, x->obj, x->type);
        len = e->pos - start - 4;
        if (len > INT32_MAX) {
            ua_enc_fail(e, UA_BAD_ENCODING_LIMITS_EXCEEDED);
            return;
        }
        l32 = (uint32_t)len;
        if (start + 4 <= e->cap)
            memcpy(e->buf + start, &l32, 4);
        return;
    default:
        ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
        return;
    }
}

static void
ua_enc_datavalue(struct ua_enc *e, const struct ua_datavalue *dv)
{
    uint8_t m = dv->mask & 0x3F;

    if (dv->mask & UA_DV_ENCODED) {
        if (dv->value.n <= 0 || dv->value.data == NULL) {
            ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
            return;
        }
        ua_enc_raw(e, dv->value.data, (size_t)dv->value.n);
        return;
    }
    ua_enc_u8(e, m);
    if (m & UA_DV_VALUE)
        ua_enc_value(e, &dv->value, &ua_types[UA_TYPE_VARIANT]);
    if (m & UA_DV_STATUS)
        ua_enc_u32(e, dv->status);
    if (m & UA_DV_SOURCE_TS)
        ua_enc_raw(e, &dv->source_ts, 8);
    if (m & UA_DV_SOURCE_PS)
        ua_enc_u16(e, dv->source_ps);
    if (m & UA_DV_SERVER_TS)
        ua_enc_raw(e, &dv->server_ts, 8);
    if (m & UA_DV_SERVER_PS)
        ua_enc_u16(e, dv->server_ps);
}

static void
ua_enc_diaginfo(struct ua_enc *e, const struct ua_diaginfo *di)
{
    uint8_t m = di->mask & 0x7F;

    if ((m & UA_DI_INNER_DIAG) && di->inner == NULL)
        m &= (uint8_t)~UA_DI_INNER_DIAG;
    ua_enc_u8(e, m);
    if (m & UA_DI_SYMBOLIC_ID)
        ua_enc_i32(e, di->symbolic_id);
    if (m & UA_DI_NAMESPACE_URI)
        ua_enc_i32(e, di->namespace_uri);
    if (m & UA_DI_LOCALE)
        ua_enc_i32(e, di->locale);
    if (m & UA_DI_LOCALIZED_TEXT)
        ua_enc_i32(e, di->localized_text);
    if (m & UA_DI_ADDITIONAL)
        ua_enc_string(e, &di->additional_info);
    if (m & UA_DI_INNER_STATUS)
        ua_enc_u32(e, di->inner_status);
    if (m & UA_DI_INNER_DIAG)
        ua_enc_value(e, di->inner, &ua_types[UA_TYPE_DIAGNOSTICINFO]);
}

static void
ua_enc_value(struct ua_enc *e, const void *v, const struct ua_type *t)
{
    switch (t->kind) {
    case UA_BT_BOOLEAN:
        ua_enc_u8(e, *(const bool *)v ? 1 : 0);
        return;
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
        ua_enc_raw(e, v, 1);
        return;
    case UA_BT_INT16:
    case UA_BT_UINT16:
        ua_enc_raw(e, v, 2);
        return;
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_FLOAT:
    case UA_BT_STATUSCODE:
    case UA_KIND_ENUM:
        ua_enc_raw(e, v, 4);
        return;
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_DOUBLE:
    case UA_BT_DATETIME:
        ua_enc_raw(e, v, 8);
        return;
    case UA_BT_GUID:
        ua_enc_raw(e, v, 16);
        return;
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
    case UA_BT_XMLELEMENT:
        ua_enc_string(e, v);
        return;
    case UA_BT_NODEID:
        ua_enc_nodeid(e, v, 0);
        return;
    case UA_BT_EXPANDEDNODEID:
        ua_enc_expandednodeid(e, v);
        return;
    case UA_BT_QUALIFIEDNAME:
        ua_enc_qualifiedname(e, v);
        return;
    case UA_BT_LOCALIZEDTEXT:
        ua_enc_localizedtext(e, v);
        return;
    default:
        break;
    }

    /* The nesting kinds. */
    if (++e->depth > UA_NESTING_MAX) {
        ua_enc_fail(e, UA_BAD_ENCODING_LIMITS_EXCEEDED);
        e->depth--;
        return;
    }
    switch (t->kind) {
    case UA_BT_EXTENSIONOBJECT:
        ua_enc_extobj(e, v);
        break;
    case UA_BT_DATAVALUE:
        ua_enc_datavalue(e, v);
        break;
    case UA_BT_VARIANT:
        ua_enc_variant(e, v);
        break;
    case UA_BT_DIAGNOSTICINFO:
        ua_enc_diaginfo(e, v);
        break;
    case UA_KIND_STRUCT: {
        const uint8_t *base = v;

        if (t == &ua_types[UA_TYPE_RESPONSEHEADER]
            && ua_enc_response_header_fast(e, v))
            break;
        for (uint16_t i = 0; i < t->nmembers && e->err == UA_GOOD; i++) {
            const struct ua_member *m = &t->members[i];
            const struct ua_type   *mt = &ua_types[m->type];

            if (m->is_array) {
                int32_t n;

                memcpy(&n, base + m->count_offset, 4);
                ua_enc_array(e, *(void *const *)(base + m->offset), n, mt);
            } else {
                ua_enc_value(e, base + m->offset, mt);
            }
        }
        break;
    }
    default:
        ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
        break;
    }
    e->depth--;
}

/*
 * The ResponseHeader every response carries, in its usual shape (no
 * diagnostics, no string table, no additional header) with one room
 * check; false, with nothing written, otherwise.
 */
#define UA_RESPHDR_FAST 24  /* ts, handle, result, diag, table, extobj */

static inline bool
ua_enc_response_header_fast(struct ua_enc *e,
                            const struct ua_response_header *h)
{
    const struct ua_extobj *x = &h->additional_header;
    uint8_t                *p;
    int32_t                 nst = h->n_string_table < 0 ? -1 : 0;

    if ((h->service_diagnostics.mask & 0x7F) != 0 || h->n_string_table > 0
        || x->encoding != UA_EO_NONE || x->type_id.idtype != UA_IDTYPE_NUMERIC
        || x->type_id.ns != 0 || x->type_id.id.num > 0xFF
        || e->pos > e->cap || e->cap - e->pos < UA_RESPHDR_FAST)
        return false;
    p = e->buf + e->pos;
    memcpy(p, &h->timestamp, 8);
    memcpy(p + 8, &h->request_handle, 4);
    memcpy(p + 12, &h->service_result, 4);
    p[16] = 0x00;                               /* DiagnosticInfo: empty */
    memcpy(p + 17, &nst, 4);
    p[21] = 0x00;                               /* NodeId, two-byte form */
    p[22] = (uint8_t)x->type_id.id.num;
    p[23] = 0x00;                               /* no body */
    e->pos += UA_RESPHDR_FAST;
    return true;
}

/* True when the C layout of one element is its wire layout. */
static inline bool
ua_wire_is_memory(const struct ua_type *t)
{
    switch (t->kind) {
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
    case UA_BT_INT16:
    case UA_BT_UINT16:
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_FLOAT:
    case UA_BT_DOUBLE:
    case UA_BT_DATETIME:
    case UA_BT_STATUSCODE:
    case UA_BT_GUID:
    case UA_KIND_ENUM:
        return true;
    default:
        return false;
    }
}


/*
 * Hand-written fast paths (docs/style.md §7) for the hottest shapes: arrays of
 * DataValues (ReadResponse) and of MonitoredItemNotifications
 * (PublishResponse) whose values are fixed-size scalars or pre-encoded.
 * They write the same bytes as the table-driven path (the round-trip,
 * vector and codec tests run both) and fall back to it for anything else.
 * Decoding has two: arrays of ReadValueIds (Read) and of WriteValues
 * (Write, scalar fixed-size values inline), in ua_dec_array().
 */

/* Wire size of a fixed-size built-in scalar, 0 for the others. */
static inline size_t
ua_fixed_size(uint8_t bt)
{
    static const uint8_t sz[UA_BT_MAX + 1] = {
        [UA_BT_BOOLEAN] = 1, [UA_BT_SBYTE] = 1, [UA_BT_BYTE] = 1,
        [UA_BT_INT16] = 2, [UA_BT_UINT16] = 2, [UA_BT_INT32] = 4,
        [UA_BT_UINT32] = 4, [UA_BT_FLOAT] = 4, [UA_BT_STATUSCODE] = 4,
        [UA_BT_INT64] = 8, [UA_BT_UINT64] = 8, [UA_BT_DOUBLE] = 8,
        [UA_BT_DATETIME] = 8, [UA_BT_GUID] = 16,
    };

    return bt <= UA_BT_MAX ? sz[bt] : 0;
}

/*
 * Copy n <= 64 bytes with fixed-size moves (overlapping at the tail): a
 * variable-length memcpy of a few bytes becomes `rep movs` here, whose start
 * costs more than the copy.
 */
static inline void
ua_copy_small(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n >= 16) {
        size_t i;

        for (i = 0; i + 16 <= n; i += 16)
            memcpy(d + i, s + i, 16);
        if (i < n)
            memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/*
 * One DataValue; the caller guarantees two levels of nesting room.  Bytes
 * go straight into the output buffer (no staging copy: a staged buffer read
 * back with wide loads stalls on store forwarding); near the end of the
 * buffer, or for values that are not fixed-size scalars, the table path.
 */
#define UA_DV_FAST_MAX 40   /* mask + type + 16 + status + 2 ts + 2 ps */

static void
ua_enc_datavalue_fast(struct ua_enc *e, const struct ua_datavalue *dv)
{
    const struct ua_variant *v = &dv->value;
    uint8_t                  m = dv->mask & 0x3F;
    uint8_t                 *p;
    size_t                   sz = 0;

    if (dv->mask & UA_DV_ENCODED) {
        /* Encoded by the service (a Read from a value slot): copy. */
        if (v->n > 0 && v->n <= 64 && v->data != NULL && e->pos <= e->cap
            && e->cap - e->pos >= 64) {
            ua_copy_small(e->buf + e->pos, v->data, (size_t)v->n);
            e->pos += (size_t)v->n;
        } else {
            ua_enc_datavalue(e, dv);
        }
        return;
    }
    if (m & UA_DV_VALUE) {
        if (v->type == UA_VARIANT_RAW && v->n > 0 && v->data != NULL
            && v->n <= 64)
            sz = (size_t)v->n;          /* encoded once: copy as is */
        else
            sz = v->is_array ? 0 : ua_fixed_size(v->type);
        if (sz == 0 || v->data == NULL) {
            ua_enc_datavalue(e, dv);
            return;
        }
    }
    if (e->pos > e->cap || e->cap - e->pos < UA_DV_FAST_MAX + 64) {
        ua_enc_datavalue(e, dv);
        return;
    }
    p = e->buf + e->pos;
    *p++ = m;
    if ((m & UA_DV_VALUE) && v->type == UA_VARIANT_RAW) {
        ua_copy_small(p, v->data, sz);
        p += sz;
    } else if (m & UA_DV_VALUE) {
        *p++ = v->type;
        switch (sz) {
        case 1:
            *p = v->type == UA_BT_BOOLEAN ? (*(const bool *)v->data ? 1 : 0)
                                          : *(const uint8_t *)v->data;
            break;
        case 2: memcpy(p, v->data, 2); break;
        case 4: memcpy(p, v->data, 4); break;
        case 8: memcpy(p, v->data, 8); break;
        default: memcpy(p, v->data, 16); break;
        }
        p += sz;
    }
    if (m & UA_DV_STATUS) {
        memcpy(p, &dv->status, 4);
        p += 4;
    }
    if (m & UA_DV_SOURCE_TS) {
        memcpy(p, &dv->source_ts, 8);
        p += 8;
    }
    if (m & UA_DV_SOURCE_PS) {
        memcpy(p, &dv->source_ps, 2);
        p += 2;
    }
    if (m & UA_DV_SERVER_TS) {
        memcpy(p, &dv->server_ts, 8);
        p += 8;
    }
    if (m & UA_DV_SERVER_PS) {
        memcpy(p, &dv->server_ps, 2);
        p += 2;
    }
    e->pos = (size_t)(p - e->buf);
}

/* A numeric NodeId in its shortest form at p; the byte after it. */
static inline uint8_t *
ua_put_nodeid_num(uint8_t *p, const struct ua_nodeid *n)
{
    uint16_t id16;

    if (n->ns == 0 && n->id.num <= 0xFF) {
        p[0] = 0x00;
        p[1] = (uint8_t)n->id.num;
        return p + 2;
    }
    if (n->ns <= 0xFF && n->id.num <= 0xFFFF) {
        id16 = (uint16_t)n->id.num;
        p[0] = 0x01;
        p[1] = (uint8_t)n->ns;
        memcpy(p + 2, &id16, 2);
        return p + 4;
    }
    p[0] = 0x02;
    memcpy(p + 1, &n->ns, 2);
    memcpy(p + 3, &n->id.num, 4);
    return p + 7;
}

/* A String at p as ua_enc_string writes it; the byte after it. */
static inline uint8_t *
ua_put_string(uint8_t *p, const struct ua_string *s)
{
    int32_t n = s->len;

    if (n < 0 || (n > 0 && s->data == NULL))
        n = -1;
    memcpy(p, &n, 4);
    if (n <= 0)
        return p + 4;
    if (n <= 64)
        ua_copy_small(p + 4, s->data, (size_t)n);   /* names are short */
    else
        memcpy(p + 4, s->data, (size_t)n);
    return p + 4 + n;
}

/* An ExpandedNodeId that is a local NodeId (no URI, server 0). */
static inline bool
ua_xnodeid_is_local_num(const struct ua_expandednodeid *x)
{
    return x->node.idtype == UA_IDTYPE_NUMERIC && x->server_index == 0
           && !(x->ns_uri.len >= 0 && (x->ns_uri.len == 0 || x->ns_uri.data));
}

/*
 * One ReferenceDescription whose NodeIds are numeric and local (Browse of
 * ns0 and of numeric namespaces), written with one room check; false, with
 * nothing written, for any other shape or near the end of the buffer.
 */
static inline bool
ua_enc_refdesc_fast(struct ua_enc *e, const struct ua_reference_description *r)
{
    const struct ua_localizedtext *dn = &r->display_name;
    uint8_t                        m = dn->mask & (UA_LT_LOCALE | UA_LT_TEXT);
    uint8_t                       *p;
    size_t                         need;

    if (r->reference_type_id.idtype != UA_IDTYPE_NUMERIC
        || !ua_xnodeid_is_local_num(&r->node_id)
        || !ua_xnodeid_is_local_num(&r->type_definition))
        return false;
    /* 3 NodeIds, isForward, BrowseName, DisplayName, NodeClass. */
    need = 3 * 7 + 1 + 6 + 9 + 4;
    if (r->browse_name.name.len > 0)
        need += (size_t)r->browse_name.name.len;
    if ((m & UA_LT_LOCALE) && dn->locale.len > 0)
        need += (size_t)dn->locale.len;
    if ((m & UA_LT_TEXT) && dn->text.len > 0)
        need += (size_t)dn->text.len;
    if (e->pos > e->cap || e->cap - e->pos < need)
        return false;
    p = e->buf + e->pos;
    p = ua_put_nodeid_num(p, &r->reference_type_id);
    *p++ = r->is_forward ? 1 : 0;
    p = ua_put_nodeid_num(p, &r->node_id.node);
    memcpy(p, &r->browse_name.ns, 2);
    p = ua_put_string(p + 2, &r->browse_name.name);
    *p++ = m;
    if (m & UA_LT_LOCALE)
        p = ua_put_string(p, &dn->locale);
    if (m & UA_LT_TEXT)
        p = ua_put_string(p, &dn->text);
    memcpy(p, &r->node_class, 4);
    p = ua_put_nodeid_num(p + 4, &r->type_definition.node);
    e->pos = (size_t)(p - e->buf);
    return true;
}

/* Arrays of DataValue or MonitoredItemNotification; false: not handled. */
static bool
ua_enc_array_fast(struct ua_enc *e, const void *data, int32_t n,
                  const struct ua_type *t)
{
    if (e->depth + 3 > UA_NESTING_MAX)
        return false;
    if (t == &ua_types[UA_TYPE_DATAVALUE]) {
        const struct ua_datavalue *dv = data;

        e->depth++;
        for (int32_t i = 0; i < n && e->err == UA_GOOD; i++)
            ua_enc_datavalue_fast(e, &dv[i]);
        e->depth--;
        return true;
    }
    if (t == &ua_types[UA_TYPE_REFERENCEDESCRIPTION]) {
        const struct ua_reference_description *r = data;

        for (int32_t i = 0; i < n; i++, r++) {
            if (ua_enc_refdesc_fast(e, r))
                continue;
            ua_enc_nodeid(e, &r->reference_type_id, 0);
            ua_enc_u8(e, r->is_forward ? 1 : 0);
            ua_enc_expandednodeid(e, &r->node_id);
            ua_enc_qualifiedname(e, &r->browse_name);
            ua_enc_localizedtext(e, &r->display_name);
            ua_enc_i32(e, r->node_class);
            ua_enc_expandednodeid(e, &r->type_definition);
        }
        return true;
    }
    if (t == &ua_types[UA_TYPE_MONITOREDITEMNOTIFICATION]) {
        const struct ua_monitored_item_notification *mi = data;

        e->depth += 2;
        for (int32_t i = 0; i < n && e->err == UA_GOOD; i++) {
            ua_enc_u32(e, mi[i].client_handle);
            ua_enc_datavalue_fast(e, &mi[i].value);
        }
        e->depth -= 2;
        return true;
    }
    return false;
}

static void
ua_enc_array(struct ua_enc *e, const void *data, int32_t n,
             const struct ua_type *t)
{
    const uint8_t *p = data;

    if (n < 0) {
        ua_enc_i32(e, -1);
        return;
    }
    if (n > 0 && data == NULL) {
        ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
        return;
    }
    ua_enc_i32(e, n);
    if (t == &ua_types[UA_TYPE_REFERENCEDESCRIPTION] && n > 0
        && ((const struct ua_reference_description *)data)
                   ->reference_type_id.idtype == UA_IDTYPE_ENCODED) {
        /* Encoded beforehand (UA_IDTYPE_ENCODED): copy. */
        const struct ua_string *b
            = &((const struct ua_reference_description *)data)
                   ->browse_name.name;

        if (b->len <= 0 || b->data == NULL)
            ua_enc_fail(e, UA_BAD_ENCODING_ERROR);
        else
            ua_enc_raw(e, b->data, (size_t)b->len);
        return;
    }
    if (ua_wire_is_memory(t)) {
        ua_enc_raw(e, data, (size_t)n * t->size);
        return;
    }
    if (ua_enc_array_fast(e, data, n, t))
        return;
    for (int32_t i = 0; i < n && e->err == UA_GOOD; i++)
        ua_enc_value(e, p + (size_t)i * t->size, t);
}

ua_status
ua_encode(const void *src, const struct ua_type *t, uint8_t *buf, size_t cap,
          size_t *len)
{
    struct ua_enc e = { .buf = buf, .cap = buf == NULL ? 0 : cap };

    ua_enc_value(&e, src, t);
    if (len != NULL)
        *len = e.pos;
    if (e.err != UA_GOOD)
        return e.err;
    if (e.pos > cap)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    return UA_GOOD;
}

size_t
ua_encoded_size(const void *src, const struct ua_type *t)
{
    struct ua_enc e = { .buf = NULL, .cap = 0 };

    ua_enc_value(&e, src, t);
    return e.err == UA_GOOD ? e.pos : 0;
}

/* ------------------------------------------------------------------ */
/* decoding                                                            */
/* ------------------------------------------------------------------ */

#define UA_DEC_NEED(d, n)                                               \
    do {                                                                \
        if ((size_t)((d)->end - (d)->p) < (size_t)(n))                  \
            return UA_BAD_DECODING_ERROR;                               \
    } while (0)

#define UA_TRY(x)                                                       \
    do {                                                                \
        ua_status ua_try_s_ = (x);                                      \
        if (ua_try_s_ != UA_GOOD)                                       \
            return ua_try_s_;                                           \
    } while (0)

static inline ua_status
ua_dec_raw(struct ua_dec *d, void *v, size_t n)
{
    UA_DEC_NEED(d, n);
    memcpy(v, d->p, n);
    d->p += n;
    return UA_GOOD;
}

static inline ua_status
ua_dec_u8(struct ua_dec *d, uint8_t *v)
{
    UA_DEC_NEED(d, 1);
    *v = *d->p++;
    return UA_GOOD;
}

static inline ua_status
ua_dec_i32(struct ua_dec *d, int32_t *v)
{
    return ua_dec_raw(d, v, 4);
}

/* Strings point into the input; see the file comment. */
static inline ua_status
ua_dec_string(struct ua_dec *d, struct ua_string *s, int32_t limit)
{
    int32_t n;

    UA_TRY(ua_dec_i32(d, &n));
    if (n < 0) {
        if (n < -1)
            return UA_BAD_DECODING_ERROR;
        s->len = -1;
        s->data = NULL;
        return UA_GOOD;
    }
    UA_DEC_NEED(d, n);
    if (n > limit)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    s->len = n;
    s->data = (uint8_t *)(uintptr_t)d->p;
    d->p += n;
    return UA_GOOD;
}

static void *
ua_dec_alloc(struct ua_dec *d, size_t n)
{
    return ua_arena_alloc(d->a, n == 0 ? 1 : n);
}

static ua_status
ua_dec_nodeid(struct ua_dec *d, struct ua_nodeid *n, uint8_t *flags)
{
    uint8_t b;

    UA_TRY(ua_dec_u8(d, &b));
    if (flags != NULL)
        *flags = b & 0xC0;
    else if (b & 0xC0)
        return UA_BAD_DECODING_ERROR;
    switch (b & 0x3F) {
    case 0x00:
        UA_DEC_NEED(d, 1);
        n->ns = 0;
        n->idtype = UA_IDTYPE_NUMERIC;
        n->id.num = *d->p++;
        return UA_GOOD;
    case 0x01: {
        uint16_t id;

        UA_DEC_NEED(d, 3);
        n->ns = d->p[0];
        memcpy(&id, d->p + 1, 2);
        n->idtype = UA_IDTYPE_NUMERIC;
        n->id.num = id;
        d->p += 3;
        return UA_GOOD;
    }
    case 0x02:
        UA_DEC_NEED(d, 6);
        memcpy(&n->ns, d->p, 2);
        memcpy(&n->id.num, d->p + 2, 4);
        n->idtype = UA_IDTYPE_NUMERIC;
        d->p += 6;
        return UA_GOOD;
    case 0x03:
        UA_TRY(ua_dec_raw(d, &n->ns, 2));
        n->idtype = UA_IDTYPE_STRING;
        return ua_dec_string(d, &n->id.str, d->lim->max_string_len);
    case 0x04:
        UA_TRY(ua_dec_raw(d, &n->ns, 2));
        n->idtype = UA_IDTYPE_GUID;
        return ua_dec_raw(d, &n->id.guid, 16);
    case 0x05:
        UA_TRY(ua_dec_raw(d, &n->ns, 2));
        n->idtype = UA_IDTYPE_OPAQUE;
        return ua_dec_string(d, &n->id.str, d->lim->max_bytestring_len);
    default:
        return UA_BAD_DECODING_ERROR;
    }
}

static ua_status
ua_dec_variant(struct ua_dec *d, struct ua_variant *v)
{
    const struct ua_type *et;
    uint8_t               b, bt;

    UA_TRY(ua_dec_u8(d, &b));
    bt = b & 0x3F;
    v->type = bt;
    v->is_array = 0;
    v->n = 0;
    v->ndims = -1;
    v->dims = NULL;
    v->data = NULL;
    if (bt == UA_BT_NULL) {
        if (b != 0)
            return UA_BAD_DECODING_ERROR;
        return UA_GOOD;
    }
    if (bt > UA_BT_MAX)
        return UA_BAD_DECODING_ERROR;
    et = &ua_types[bt - 1];
    if (!(b & 0x80)) {
        if ((b & 0x40) || bt == UA_BT_VARIANT)
            return UA_BAD_DECODING_ERROR;
        v->data = ua_dec_alloc(d, et->size);
        if (v->data == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        return ua_dec_value(d, v->data, et);
    }
    v->is_array = 1;
    UA_TRY(ua_dec_array(d, &v->data, &v->n, et));
    if (b & 0x40) {
        int32_t nd;
        int64_t prod = 1;

        UA_TRY(ua_dec_i32(d, &nd));
        if (nd < 1 || v->n < 0)
            return UA_BAD_DECODING_ERROR;
        UA_DEC_NEED(d, (size_t)nd * 4);
        if (nd > d->lim->max_array_len)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        v->dims = ua_dec_alloc(d, (size_t)nd * 4);
        if (v->dims == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memcpy(v->dims, d->p, (size_t)nd * 4);
        d->p += (size_t)nd * 4;
        for (int32_t i = 0; i < nd; i++) {
            if (v->dims[i] < 0)
                return UA_BAD_DECODING_ERROR;
            prod *= v->dims[i];
            if (prod > INT32_MAX)
                return UA_BAD_DECODING_ERROR;
        }
        if (prod != v->n)
            return UA_BAD_DECODING_ERROR;
        v->ndims = nd;
    }
    return UA_GOOD;
}

static ua_status
ua_dec_extobj(struct ua_dec *d, struct ua_extobj *x)
{
    uint8_t               enc;
    int32_t               len;
    const struct ua_type *t = NULL;

    UA_TRY(ua_dec_nodeid(d, &x->type_id, NULL));
    UA_TRY(ua_dec_u8(d, &enc));
    x->type = NULL;
    x->obj = NULL;
    x->body.len = -1;
    x->body.data = NULL;
    if (enc == 0) {
        x->encoding = UA_EO_NONE;
        return UA_GOOD;
    }
    if (enc > 2)
        return UA_BAD_DECODING_ERROR;
    UA_TRY(ua_dec_i32(d, &len));
    if (len < 0)
        return UA_BAD_DECODING_ERROR;
    UA_DEC_NEED(d, len);
    if (enc == 1 && x->type_id.ns == 0
        && x->type_id.idtype == UA_IDTYPE_NUMERIC)
        t = ua_types_by_binary_id(x->type_id.id.num);
    if (t == NULL) {
        int32_t limit = enc == 2 ? d->lim->max_string_len
                                 : d->lim->max_bytestring_len;

        if (len > limit)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        x->encoding = enc == 1 ? UA_EO_BYTES : UA_EO_XML;
        x->body.len = len;
        x->body.data = (uint8_t *)(uintptr_t)d->p;
        d->p += len;
        return UA_GOOD;
    }
    {
        /* Decode the body within its declared length only. */
        const uint8_t *end = d->end;

        d->end = d->p + len;
        x->obj = ua_dec_alloc(d, t->size);
        if (x->obj == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        UA_TRY(ua_dec_value(d, x->obj, t));
        d->p = d->end;          /* skip what a newer version appended */
        d->end = end;
    }
    x->encoding = UA_EO_DECODED;
    x->type = t;
    return UA_GOOD;
}

/* A DataValue's fields after its Value, as mask m says. */
static ua_status
ua_dec_datavalue_tail(struct ua_dec *d, struct ua_datavalue *dv, uint8_t m)
{
    if (m & UA_DV_STATUS)
        UA_TRY(ua_dec_raw(d, &dv->status, 4));
    if (m & UA_DV_SOURCE_TS)
        UA_TRY(ua_dec_raw(d, &dv->source_ts, 8));
    if (m & UA_DV_SOURCE_PS)
        UA_TRY(ua_dec_raw(d, &dv->source_ps, 2));
    if (m & UA_DV_SERVER_TS)
        UA_TRY(ua_dec_raw(d, &dv->server_ts, 8));
    if (m & UA_DV_SERVER_PS)
        UA_TRY(ua_dec_raw(d, &dv->server_ps, 2));
    return UA_GOOD;
}

static ua_status
ua_dec_datavalue(struct ua_dec *d, struct ua_datavalue *dv)
{
    uint8_t m;

    UA_TRY(ua_dec_u8(d, &m));
    m &= 0x3F;
    memset(dv, 0, sizeof(*dv));
    dv->mask = m;
    dv->value.ndims = -1;
    if (m & UA_DV_VALUE)
        UA_TRY(ua_dec_value(d, &dv->value, &ua_types[UA_TYPE_VARIANT]));
    return ua_dec_datavalue_tail(d, dv, m);
}

static ua_status
ua_dec_diaginfo(struct ua_dec *d, struct ua_diaginfo *di)
{
    uint8_t m;

    UA_TRY(ua_dec_u8(d, &m));
    m &= 0x7F;
    memset(di, 0, sizeof(*di));
    di->mask = m;
    di->additional_info.len = -1;
    if (m & UA_DI_SYMBOLIC_ID)
        UA_TRY(ua_dec_i32(d, &di->symbolic_id));
    if (m & UA_DI_NAMESPACE_URI)
        UA_TRY(ua_dec_i32(d, &di->namespace_uri));
    if (m & UA_DI_LOCALE)
        UA_TRY(ua_dec_i32(d, &di->locale));
    if (m & UA_DI_LOCALIZED_TEXT)
        UA_TRY(ua_dec_i32(d, &di->localized_text));
    if (m & UA_DI_ADDITIONAL)
        UA_TRY(ua_dec_string(d, &di->additional_info,
                             d->lim->max_string_len));
    if (m & UA_DI_INNER_STATUS)
        UA_TRY(ua_dec_raw(d, &di->inner_status, 4));
    if (m & UA_DI_INNER_DIAG) {
        di->inner = ua_dec_alloc(d, sizeof(*di->inner));
        if (di->inner == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        UA_TRY(ua_dec_value(d, di->inner, &ua_types[UA_TYPE_DIAGNOSTICINFO]));
    }
    return UA_GOOD;
}

static ua_status
ua_dec_struct(struct ua_dec *d, uint8_t *base, const struct ua_type *t)
{
    for (uint16_t i = 0; i < t->nmembers; i++) {
        const struct ua_member *m = &t->members[i];
        const struct ua_type   *mt = &ua_types[m->type];

        if (m->is_array) {
            int32_t n;
            void   *p;

            UA_TRY(ua_dec_array(d, &p, &n, mt));
            memcpy(base + m->count_offset, &n, 4);
            memcpy(base + m->offset, &p, sizeof(p));
        } else {
            UA_TRY(ua_dec_value(d, base + m->offset, mt));
        }
    }
    return UA_GOOD;
}

static ua_status
ua_dec_value(struct ua_dec *d, void *v, const struct ua_type *t)
{
    ua_status s;

    switch (t->kind) {
    case UA_BT_BOOLEAN: {
        uint8_t b;

        UA_TRY(ua_dec_u8(d, &b));
        *(bool *)v = b != 0;
        return UA_GOOD;
    }
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
        return ua_dec_raw(d, v, 1);
    case UA_BT_INT16:
    case UA_BT_UINT16:
        return ua_dec_raw(d, v, 2);
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_FLOAT:
    case UA_BT_STATUSCODE:
    case UA_KIND_ENUM:
        return ua_dec_raw(d, v, 4);
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_DOUBLE:
    case UA_BT_DATETIME:
        return ua_dec_raw(d, v, 8);
    case UA_BT_GUID:
        return ua_dec_raw(d, v, 16);
    case UA_BT_STRING:
    case UA_BT_XMLELEMENT:
        return ua_dec_string(d, v, d->lim->max_string_len);
    case UA_BT_BYTESTRING:
        return ua_dec_string(d, v, d->lim->max_bytestring_len);
    case UA_BT_NODEID:
        return ua_dec_nodeid(d, v, NULL);
    case UA_BT_EXPANDEDNODEID: {
        struct ua_expandednodeid *x = v;
        uint8_t f;

        UA_TRY(ua_dec_nodeid(d, &x->node, &f));
        x->ns_uri.len = -1;
        x->ns_uri.data = NULL;
        x->server_index = 0;
        if (f & 0x80)
            UA_TRY(ua_dec_string(d, &x->ns_uri, d->lim->max_string_len));
        if (f & 0x40)
            UA_TRY(ua_dec_raw(d, &x->server_index, 4));
        return UA_GOOD;
    }
    case UA_BT_QUALIFIEDNAME: {
        struct ua_qualifiedname *q = v;

        UA_TRY(ua_dec_raw(d, &q->ns, 2));
        return ua_dec_string(d, &q->name, d->lim->max_string_len);
    }
    case UA_BT_LOCALIZEDTEXT: {
        struct ua_localizedtext *l = v;
        uint8_t m;

        UA_TRY(ua_dec_u8(d, &m));
        l->mask = m & (UA_LT_LOCALE | UA_LT_TEXT);
        l->locale.len = -1;
        l->locale.data = NULL;
        l->text.len = -1;
        l->text.data = NULL;
        if (m & UA_LT_LOCALE)
            UA_TRY(ua_dec_string(d, &l->locale, d->lim->max_string_len));
        if (m & UA_LT_TEXT)
            UA_TRY(ua_dec_string(d, &l->text, d->lim->max_string_len));
        return UA_GOOD;
    }
    default:
        break;
    }

    if (++d->depth > d->max_depth)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    switch (t->kind) {
    case UA_BT_EXTENSIONOBJECT:
        s = ua_dec_extobj(d, v);
        break;
    case UA_BT_DATAVALUE:
        s = ua_dec_datavalue(d, v);
        break;
    case UA_BT_VARIANT:
        s = ua_dec_variant(d, v);
        break;
    case UA_BT_DIAGNOSTICINFO:
        s = ua_dec_diaginfo(d, v);
        break;
    case UA_KIND_STRUCT:
        if (t == &ua_types[UA_TYPE_REQUESTHEADER]
            && ua_dec_request_header_fast(d, v))
            s = UA_GOOD;
        else
            s = ua_dec_struct(d, v, t);
        break;
    default:
        s = UA_BAD_DECODING_ERROR;
        break;
    }
    d->depth--;
    return s;
}

/*
 * The fewest bytes one value of t can take on the wire: what an array
 * length is checked against before anything is allocated.
 */
static size_t
ua_wire_min(const struct ua_type *t, uint32_t depth)
{
    size_t n = 0;

    switch (t->kind) {
    case UA_BT_BOOLEAN:
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
    case UA_BT_LOCALIZEDTEXT:
    case UA_BT_DATAVALUE:
    case UA_BT_VARIANT:
    case UA_BT_DIAGNOSTICINFO:
        return 1;
    case UA_BT_INT16:
    case UA_BT_UINT16:
    case UA_BT_NODEID:
    case UA_BT_EXPANDEDNODEID:
        return 2;
    case UA_BT_EXTENSIONOBJECT:
        return 3;
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_FLOAT:
    case UA_BT_STATUSCODE:
    case UA_KIND_ENUM:
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
    case UA_BT_XMLELEMENT:
        return 4;
    case UA_BT_QUALIFIEDNAME:
        return 6;
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_DOUBLE:
    case UA_BT_DATETIME:
        return 8;
    case UA_BT_GUID:
        return 16;
    case UA_KIND_STRUCT:
        if (depth > UA_NESTING_MAX)
            return 1;
        for (uint16_t i = 0; i < t->nmembers; i++) {
            const struct ua_member *m = &t->members[i];

            n += m->is_array ? 4 : ua_wire_min(&ua_types[m->type], depth + 1);
        }
        return n == 0 ? 1 : n;
    default:
        return 1;
    }
}

/*
 * Decode fast path for Write: one DataValue of a WriteValue, the caller
 * having accounted for its nesting level and made sure one more (the
 * Variant's) fits.  A scalar of a fixed-size built-in type is decoded
 * here; any other Variant goes through ua_dec_value(), so results and
 * errors are the table path's.
 */
static ua_status
ua_dec_datavalue_fast(struct ua_dec *d, struct ua_datavalue *dv)
{
    uint8_t m, b;
    size_t  fs;

    UA_TRY(ua_dec_u8(d, &m));
    m &= 0x3F;
    memset(dv, 0, sizeof(*dv));
    dv->mask = m;
    dv->value.ndims = -1;
    if (m & UA_DV_VALUE) {
        b = d->p < d->end ? d->p[0] : 0;
        fs = ua_fixed_size(b);
        if (fs != 0) {
            /* Scalar (no array or dimension bits: b is the type id). */
            struct ua_variant *v = &dv->value;

            v->type = b;
            v->data = ua_dec_alloc(d, ua_types[b - 1].size);
            if (v->data == NULL)
                return UA_BAD_OUT_OF_MEMORY;
            UA_DEC_NEED(d, 1 + fs);
            if (b == UA_BT_BOOLEAN)
                *(bool *)v->data = d->p[1] != 0;
            else
                memcpy(v->data, d->p + 1, fs);
            d->p += 1 + fs;
        } else {
            UA_TRY(ua_dec_value(d, &dv->value, &ua_types[UA_TYPE_VARIANT]));
        }
    }
    return ua_dec_datavalue_tail(d, dv, m);
}

/*
 * The common WriteValue in one step: a NodeId in one of its four usual
 * forms, a null IndexRange, a DataValue that is a Value alone (mask byte
 * exactly 0x01), a scalar of a fixed-size built-in type; one bounds check
 * instead of one per field.  The position after it when it decoded wv
 * from p (d only for a GUID's arena space); NULL, with nothing consumed
 * (its NodeId perhaps set), for any other
 * shape or anything short or over a limit: the general path then decodes
 * all of it and reports what is wrong.  What it makes is what the general
 * path makes (check_codec test_write_values_fast_decode).
 */
#define UA_WV_TAIL 10       /* attributeId, indexRange, mask, Variant byte */
#define UA_WV_SCALAR 8      /* bytes per WriteValue after the array for its
                               scalar (ua_dec_array) */
_Static_assert(sizeof(struct ua_write_value) % UA_WV_SCALAR == 0,
               "the scalars after a WriteValue array stay 8-aligned");

/*
 * The usual NodeIds of a fast path (TwoByte, FourByte, Numeric, String):
 * the wire length of the one at p when it and tail more bytes fit in left
 * (a String's length within the limit), n set from it; else 0, n perhaps
 * partly set (the caller's general path then decodes it again, all of
 * it).  One switch that measures and sets: the form is read once.  max_sl:
 * the String limit, which a caller in a loop keeps in a register.
 */
static inline size_t
ua_dec_usual_nodeid(int32_t max_sl, const uint8_t *p, size_t left,
                    size_t tail, struct ua_nodeid *n)
{
    uint16_t u16;
    int32_t  sl;

    if (left < 2 + tail)
        return 0;
    switch (p[0]) {
    case 0x00:
        n->ns = 0;
        n->idtype = UA_IDTYPE_NUMERIC;
        n->id.num = p[1];
        return 2;
    case 0x01:
        if (left < 4 + tail)
            return 0;
        memcpy(&u16, p + 2, 2);
        n->ns = p[1];
        n->idtype = UA_IDTYPE_NUMERIC;
        n->id.num = u16;
        return 4;
    case 0x02:
        if (left < 7 + tail)
            return 0;
        memcpy(&n->ns, p + 1, 2);
        n->idtype = UA_IDTYPE_NUMERIC;
        memcpy(&n->id.num, p + 3, 4);
        return 7;
    case 0x03:
        if (left < 7 + tail)
            return 0;
        memcpy(&sl, p + 3, 4);
        if (sl < 0 || sl > max_sl || (size_t)sl > left - 7 - tail)
            return 0;
        memcpy(&n->ns, p + 1, 2);
        n->idtype = UA_IDTYPE_STRING;
        n->id.str.len = sl;
        n->id.str.data = (uint8_t *)(uintptr_t)(p + 7);
        return 7 + (size_t)sl;
    default:
        return 0;
    }
}

static inline const uint8_t *
ua_dec_write_value_fast(struct ua_dec *d, const uint8_t *p,
                        const uint8_t *end, int32_t max_sl,
                        struct ua_write_value *wv, uint8_t *slot)
{
    const uint8_t     *q;
    size_t             left = (size_t)(end - p), idlen, fs;
    int32_t            ir;
    uint8_t            b;
    void              *data;

    idlen = ua_dec_usual_nodeid(max_sl, p, left, UA_WV_TAIL + 1,
                                &wv->node_id);
    if (idlen == 0)
        return NULL;
    q = p + idlen;
    memcpy(&ir, q + 4, 4);
    if (ir != -1 || q[8] != UA_DV_VALUE)
        return NULL;
    b = q[9];
    fs = ua_fixed_size(b);
    if (fs == 0 || left - idlen - UA_WV_TAIL < fs)
        return NULL;
    /* Up to UA_WV_SCALAR bytes in the WriteValue's own slot (a GUID from
     * the arena). */
    data = fs <= UA_WV_SCALAR ? slot : ua_dec_alloc(d, ua_types[b - 1].size);
    if (data == NULL)
        return NULL;
    memcpy(&wv->attribute_id, q, 4);
    wv->index_range.len = -1;
    wv->index_range.data = NULL;
    /* Field by field: a memset of the DataValue is a `rep stos`, whose
     * start costs more than these stores. */
    wv->value.mask = UA_DV_VALUE;
    wv->value.value.type = b;
    wv->value.value.is_array = 0;
    wv->value.value.n = 0;
    wv->value.value.ndims = -1;
    wv->value.value.dims = NULL;
    wv->value.value.data = data;
    wv->value.status = 0;
    wv->value.source_ts = 0;
    wv->value.server_ts = 0;
    wv->value.source_ps = 0;
    wv->value.server_ps = 0;
    /* Constant sizes: moves, no call; tests, not a switch, whose jump
     * table cost more than the usual 8- and 4-byte values' two tests. */
    if (fs == 8)
        memcpy(data, q + 10, 8);
    else if (fs == 4)
        memcpy(data, q + 10, 4);
    else if (fs == 2)
        memcpy(data, q + 10, 2);
    else if (fs == 16)
        memcpy(data, q + 10, 16);
    else if (b == UA_BT_BOOLEAN)
        *(bool *)data = q[10] != 0;
    else
        memcpy(data, q + 10, 1);
    return q + UA_WV_TAIL + fs;
}

/*
 * Decode fast path for Write: len WriteValues, their members in order,
 * without the table.  The table path nests WriteValue, DataValue and
 * Variant one level each; the caller checked that all three fit.  slots:
 * UA_WV_SCALAR bytes per WriteValue for the one-step decoder's scalar.
 */
static ua_status
ua_dec_write_values(struct ua_dec *d, struct ua_write_value *wv, int32_t len,
                    uint8_t *slots)
{
    ua_status      s = UA_GOOD;
    /* The position, the end and the String limit in locals: d's fields
     * are loaded again after every store through a pointer otherwise. */
    const uint8_t *p = d->p, *np, *end = d->end;
    int32_t        max_sl = d->lim->max_string_len;
    const struct ua_write_value *last = wv + len;

    d->depth += 2;                      /* WriteValue, DataValue */
    for (; wv < last && s == UA_GOOD; wv++, slots += UA_WV_SCALAR) {
        np = ua_dec_write_value_fast(d, p, end, max_sl, wv, slots);
        if (np != NULL) {
            p = np;
            continue;
        }
        d->p = p;
        s = ua_dec_nodeid(d, &wv->node_id, NULL);
        if (s == UA_GOOD)
            s = ua_dec_raw(d, &wv->attribute_id, 4);
        if (s == UA_GOOD)
            s = ua_dec_string(d, &wv->index_range, d->lim->max_string_len);
        if (s == UA_GOOD)
            s = ua_dec_datavalue_fast(d, &wv->value);
        p = d->p;
    }
    d->p = p;
    d->depth -= 2;
    return s;
}

/*
 * The RequestHeader in its usual shape (a null or empty auditEntryId, no
 * additional header) with one bounds check after the token; false, with
 * nothing consumed, for any other shape: the general path decodes it.  An
 * empty auditEntryId comes out as the general path makes it: length 0,
 * data where its bytes would be.
 */
#define UA_REQHDR_TAIL 27   /* ts, handle, diag, audit, timeout, extobj */

static inline bool
ua_dec_request_header_fast(struct ua_dec *d, struct ua_request_header *h)
{
    const uint8_t *start = d->p, *p;
    int32_t        audit;

    if (ua_dec_nodeid(d, &h->authentication_token, NULL) != UA_GOOD
        || (size_t)(d->end - d->p) < UA_REQHDR_TAIL) {
        d->p = start;
        return false;
    }
    p = d->p;
    memcpy(&audit, p + 16, 4);
    if ((audit != -1 && audit != 0) || p[24] != 0x00 || p[25] != 0x00
        || p[26] != 0x00) {
        d->p = start;
        return false;
    }
    memcpy(&h->timestamp, p, 8);
    memcpy(&h->request_handle, p + 8, 4);
    memcpy(&h->return_diagnostics, p + 12, 4);
    h->audit_entry_id.len = audit;
    h->audit_entry_id.data = audit == 0 ? (uint8_t *)(uintptr_t)(p + 20)
                                        : NULL;
    memcpy(&h->timeout_hint, p + 20, 4);
    memset(&h->additional_header, 0, sizeof(h->additional_header));
    h->additional_header.type_id.idtype = UA_IDTYPE_NUMERIC;
    h->additional_header.encoding = UA_EO_NONE;
    h->additional_header.body.len = -1;
    d->p = p + UA_REQHDR_TAIL;
    return true;
}

/*
 * The common ReadValueId in one step: a numeric or String NodeId, no
 * IndexRange, a null DataEncoding name; one bounds check instead of one per
 * field.  True when it decoded rv (and moved d->p); false, with nothing
 * consumed (its NodeId perhaps set), for any other shape or anything short
 * or over a limit: the general path then decodes all of it and reports
 * what is wrong.
 */
#define UA_RVID_TAIL 14     /* attributeId, indexRange, dataEncoding */
/* ua_wire_min of ReadValueId (NodeId 2, UInt32, String, QualifiedName 6)
 * and of BrowseDescription (NodeId, enum, NodeId, Boolean, 2 UInt32);
 * check_codec's test_wire_min_constants decodes at both bounds. */
#define UA_RVID_WIRE_MIN 16
#define UA_BD_WIRE_MIN   17

static inline bool
ua_dec_read_value_id_fast(struct ua_dec *d, struct ua_read_value_id *rv)
{
    const uint8_t *p = d->p, *q;
    size_t         left = (size_t)(d->end - p), idlen;
    int32_t        ir, dn;

    idlen = ua_dec_usual_nodeid(d->lim->max_string_len, p, left,
                                UA_RVID_TAIL, &rv->node_id);
    if (idlen == 0)
        return false;
    q = p + idlen;
    memcpy(&ir, q + 4, 4);
    memcpy(&dn, q + 10, 4);
    if (ir != -1 || dn != -1)
        return false;
    memcpy(&rv->attribute_id, q, 4);
    rv->index_range.len = -1;
    rv->index_range.data = NULL;
    memcpy(&rv->data_encoding.ns, q + 8, 2);
    rv->data_encoding.name.len = -1;
    rv->data_encoding.name.data = NULL;
    d->p = q + UA_RVID_TAIL;
    return true;
}

static ua_status
ua_dec_array(struct ua_dec *d, void **data, int32_t *n,
             const struct ua_type *t)
{
    int32_t  len;
    size_t   left, min, extra;
    uint8_t *p;
    bool     wv;

    UA_TRY(ua_dec_i32(d, &len));
    *data = NULL;
    if (len < 0) {
        if (len < -1)
            return UA_BAD_DECODING_ERROR;
        *n = -1;
        return UA_GOOD;
    }
    *n = len;
    if (len == 0)
        return UA_GOOD;
    left = (size_t)(d->end - d->p);
    /* ua_wire_min walks the members: not per Read or Browse request. */
    if (t == &ua_types[UA_TYPE_READVALUEID])
        min = UA_RVID_WIRE_MIN;
    else if (t == &ua_types[UA_TYPE_BROWSEDESCRIPTION])
        min = UA_BD_WIRE_MIN;
    else
        min = ua_wire_min(t, d->depth);
    if ((size_t)len > left / min)
        return UA_BAD_DECODING_ERROR;
    if (len > d->lim->max_array_len)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    /* WriteValues: UA_WV_SCALAR bytes each after the array for their
     * scalars, one allocation instead of one per value. */
    wv = t == &ua_types[UA_TYPE_WRITEVALUE] && d->depth + 3 <= d->max_depth;
    extra = wv ? UA_WV_SCALAR : 0;
    p = ua_dec_alloc(d, (size_t)len * (t->size + extra));
    if (p == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    *data = p;
    if (ua_wire_is_memory(t)) {
        memcpy(p, d->p, (size_t)len * t->size);     /* len > 0 here */
        d->p += (size_t)len * t->size;
        return UA_GOOD;
    }
    if (t == &ua_types[UA_TYPE_READVALUEID] && d->depth < d->max_depth) {
        /* Fast path for Read: the members in order, without the table. */
        struct ua_read_value_id *rv = (struct ua_read_value_id *)p;

        for (int32_t i = 0; i < len; i++, rv++) {
            if (ua_dec_read_value_id_fast(d, rv))
                continue;
            UA_TRY(ua_dec_nodeid(d, &rv->node_id, NULL));
            UA_TRY(ua_dec_raw(d, &rv->attribute_id, 4));
            UA_TRY(ua_dec_string(d, &rv->index_range,
                                 d->lim->max_string_len));
            UA_TRY(ua_dec_raw(d, &rv->data_encoding.ns, 2));
            UA_TRY(ua_dec_string(d, &rv->data_encoding.name,
                                 d->lim->max_string_len));
        }
        return UA_GOOD;
    }
    if (t == &ua_types[UA_TYPE_BROWSEDESCRIPTION]
        && d->depth + 2 <= d->max_depth) {
        /* Browse: the members in order, without the table (the same
         * checks: NodeIds as ua_dec_nodeid reads them, a non-zero byte is
         * true, the enum and masks as they come). */
        struct ua_browse_description *bd = (struct ua_browse_description *)p;

        for (int32_t i = 0; i < len; i++, bd++) {
            uint8_t b;

            UA_TRY(ua_dec_nodeid(d, &bd->node_id, NULL));
            UA_TRY(ua_dec_raw(d, &bd->browse_direction, 4));
            UA_TRY(ua_dec_nodeid(d, &bd->reference_type_id, NULL));
            UA_TRY(ua_dec_u8(d, &b));
            bd->include_subtypes = b != 0;
            UA_TRY(ua_dec_raw(d, &bd->node_class_mask, 4));
            UA_TRY(ua_dec_raw(d, &bd->result_mask, 4));
        }
        return UA_GOOD;
    }
    if (wv)
        return ua_dec_write_values(d, (struct ua_write_value *)p, len,
                                   p + (size_t)len * t->size);
    for (int32_t i = 0; i < len; i++)
        UA_TRY(ua_dec_value(d, p + (size_t)i * t->size, t));
    return UA_GOOD;
}

/*
 * ua_write_request_head (codec.h): what ua_decode() of a WriteRequest does
 * with such bytes up to its WriteValues.  Depth: the request at 1, its
 * header at 2 (the fast header takes no deeper level), the WriteValue fast
 * path needs 1 + 3 levels: a max_depth under 4 is left to ua_decode().
 * The usual WriteValue (ua_write_value_usual) is what
 * ua_dec_write_value_fast() takes with no allocation, and it is never
 * shorter than ua_wire_min() of a WriteValue: n of them fit the array's
 * length check.
 */
bool
ua_write_request_head(const uint8_t *buf, size_t len,
                      const struct ua_limits *lim, int32_t max_n,
                      struct ua_request_header *h, const uint8_t **first,
                      int32_t *n)
{
    struct ua_dec d;
    int32_t       cnt;

    if (lim == NULL)
        lim = &ua_limits_default;
    if (len > lim->max_message_size || lim->max_depth < 4)
        return false;
    d.p = buf;
    d.end = buf + len;
    d.a = NULL;                         /* the header allocates nothing */
    d.lim = lim;
    d.depth = 2;
    d.max_depth = lim->max_depth;
    if (!ua_dec_request_header_fast(&d, h) || (size_t)(d.end - d.p) < 4)
        return false;
    memcpy(&cnt, d.p, 4);
    if (cnt <= 0 || cnt > max_n || cnt > lim->max_array_len)
        return false;
    *first = d.p + 4;
    *n = cnt;
    return true;
}

ua_status
ua_decode(const uint8_t *buf, size_t len, size_t *used, void *dst,
          const struct ua_type *t, struct ua_arena *a,
          const struct ua_limits *lim)
{
    struct ua_dec d;
    ua_status     s;

    if (lim == NULL)
        lim = &ua_limits_default;
    if (len > lim->max_message_size)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    d.p = buf;
    d.end = buf + len;
    d.a = a;
    d.lim = lim;
    d.depth = 0;
    d.max_depth = lim->max_depth < UA_NESTING_MAX ? lim->max_depth
                                                  : UA_NESTING_MAX;
    s = ua_dec_value(&d, dst, t);
    if (used != NULL)
        *used = (size_t)(d.p - buf);
    return s;
}

ua_status
ua_decode_arguments(const uint8_t *buf, size_t len, struct ua_arena *a,
                    struct ua_argument **defs, int32_t *n)
{
    struct ua_variant       v;
    struct ua_argument     *out;
    const struct ua_extobj *x;
    int32_t                 cnt;

    *defs = NULL;
    *n = 0;
    if (len == 0)
        return UA_GOOD;                 /* no value: no arguments */
    if (ua_decode(buf, len, NULL, &v, &ua_types[UA_TYPE_VARIANT], a, NULL)
        != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    if (v.type == UA_BT_NULL)
        return UA_GOOD;
    if (v.type != UA_BT_EXTENSIONOBJECT)
        return UA_BAD_INTERNAL_ERROR;
    cnt = v.is_array ? (v.n > 0 ? v.n : 0) : 1;
    x = v.data;
    out = ua_arena_alloc(a, (size_t)(cnt > 0 ? cnt : 1) * sizeof(*out));
    if (out == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    for (int32_t k = 0; k < cnt; k++) {
        if (x[k].encoding == UA_EO_DECODED
            && x[k].type == &ua_types[UA_TYPE_ARGUMENT])
            memcpy(&out[k], x[k].obj, sizeof(out[k]));
        else if (x[k].encoding != UA_EO_BYTES || x[k].body.len <= 0
                 || ua_decode(x[k].body.data, (size_t)x[k].body.len, NULL,
                              &out[k], &ua_types[UA_TYPE_ARGUMENT], a, NULL)
                        != UA_GOOD)
            return UA_BAD_INTERNAL_ERROR;
    }
    *defs = out;
    *n = cnt;
    return UA_GOOD;
}
