/*
 * proto/types.c: lookups in the generated type table and deep equality.
 */
#include "types.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "nodeids_gen.h"

static const struct ua_type *ua_types_lookup(const struct ua_type_index *ix,
                                             size_t n, uint32_t id);
static bool ua_equal_array(const void *a, int32_t na, const void *b,
                           int32_t nb, const struct ua_type *t);

static const struct ua_type *
ua_types_lookup(const struct ua_type_index *ix, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (ix[mid].id == id)
            return &ua_types[ix[mid].type];
        if (ix[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const struct ua_type *
ua_types_by_binary_id(uint32_t id)
{
    return ua_types_lookup(ua_types_binary_index, ua_types_binary_index_count,
                           id);
}

const struct ua_type *
ua_types_by_type_id(uint32_t id)
{
    return ua_types_lookup(ua_types_typeid_index, ua_types_typeid_index_count,
                           id);
}

bool
ua_types_root_admits(uint32_t root, uint8_t bt)
{
    if (root == UA_NS0ID_BASEDATATYPE)
        return true;
    if (bt == UA_BT_NULL || bt > UA_BT_MAX)
        return false;
    switch (root) {
    case 0:
        return false;
    case UA_NS0ID_NUMBER:
        return bt >= UA_BT_SBYTE && bt <= UA_BT_DOUBLE;
    case UA_NS0ID_INTEGER:
        return bt == UA_BT_SBYTE || bt == UA_BT_INT16 || bt == UA_BT_INT32
               || bt == UA_BT_INT64;
    case UA_NS0ID_UINTEGER:
        return bt == UA_BT_BYTE || bt == UA_BT_UINT16 || bt == UA_BT_UINT32
               || bt == UA_BT_UINT64;
    case UA_NS0ID_ENUMERATION:
        return bt == UA_BT_INT32;
    case UA_NS0ID_STRUCTURE:
        return bt == UA_BT_EXTENSIONOBJECT;
    default:
        return bt == root;          /* built-in ids are DataType ids */
    }
}

struct ua_string
ua_string_from(const char *s)
{
    struct ua_string r;

    if (s == NULL) {
        r.len = -1;
        r.data = NULL;
        return r;
    }
    r.len = (int32_t)strlen(s);
    r.data = (uint8_t *)(uintptr_t)s;
    return r;
}

bool
ua_string_eq(const struct ua_string *a, const char *s)
{
    size_t n;

    if (s == NULL)
        return a->len < 0;
    n = strlen(s);
    return a->len >= 0 && (size_t)a->len == n
           && (n == 0 || memcmp(a->data, s, n) == 0);
}

static bool
ua_string_equal(const struct ua_string *a, const struct ua_string *b)
{
    if (a->len < 0 || b->len < 0)
        return a->len < 0 && b->len < 0;
    return a->len == b->len
           && (a->len == 0 || memcmp(a->data, b->data, (size_t)a->len) == 0);
}

bool
ua_nodeid_equal(const struct ua_nodeid *a, const struct ua_nodeid *b)
{
    if (a->ns != b->ns || a->idtype != b->idtype)
        return false;
    switch (a->idtype) {
    case UA_IDTYPE_NUMERIC:
        return a->id.num == b->id.num;
    case UA_IDTYPE_STRING:
    case UA_IDTYPE_OPAQUE:
        return ua_string_equal(&a->id.str, &b->id.str);
    case UA_IDTYPE_GUID:
        return memcmp(&a->id.guid, &b->id.guid, sizeof(a->id.guid)) == 0;
    default:
        return false;
    }
}

static bool
ua_equal_array(const void *a, int32_t na, const void *b, int32_t nb,
               const struct ua_type *t)
{
    if (na < 0 || nb < 0)
        return na < 0 && nb < 0;
    if (na != nb)
        return false;
    for (int32_t i = 0; i < na; i++)
        if (!ua_equal((const uint8_t *)a + (size_t)i * t->size,
                      (const uint8_t *)b + (size_t)i * t->size, t))
            return false;
    return true;
}

static bool
ua_variant_equal(const struct ua_variant *a, const struct ua_variant *b)
{
    const struct ua_type *et;

    if (a->type != b->type)
        return false;
    if (a->type == UA_BT_NULL)
        return true;
    if (a->type == UA_VARIANT_RAW)
        return a->n == b->n && a->n > 0
               && memcmp(a->data, b->data, (size_t)a->n) == 0;
    if (a->type > UA_BT_MAX || a->is_array != b->is_array)
        return false;
    et = &ua_types[a->type - 1];
    if (!a->is_array)
        return ua_equal(a->data, b->data, et);
    if (!ua_equal_array(a->data, a->n, b->data, b->n, et))
        return false;
    if ((a->ndims >= 0) != (b->ndims >= 0))
        return false;
    if (a->ndims >= 0)
        return a->ndims == b->ndims
               && memcmp(a->dims, b->dims, (size_t)a->ndims * 4) == 0;
    return true;
}

bool
ua_equal(const void *a, const void *b, const struct ua_type *t)
{
    switch (t->kind) {
    case UA_BT_BOOLEAN:
        return *(const bool *)a == *(const bool *)b;
    case UA_BT_FLOAT:
    case UA_BT_DOUBLE:
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
    case UA_BT_INT16:
    case UA_BT_UINT16:
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_DATETIME:
    case UA_BT_STATUSCODE:
    case UA_BT_GUID:
    case UA_KIND_ENUM:
        return memcmp(a, b, t->size) == 0;      /* NaN == NaN bitwise */
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
    case UA_BT_XMLELEMENT:
        return ua_string_equal(a, b);
    case UA_BT_NODEID:
        return ua_nodeid_equal(a, b);
    case UA_BT_EXPANDEDNODEID: {
        const struct ua_expandednodeid *x = a, *y = b;

        return ua_nodeid_equal(&x->node, &y->node)
               && ua_string_equal(&x->ns_uri, &y->ns_uri)
               && x->server_index == y->server_index;
    }
    case UA_BT_QUALIFIEDNAME: {
        const struct ua_qualifiedname *x = a, *y = b;

        return x->ns == y->ns && ua_string_equal(&x->name, &y->name);
    }
    case UA_BT_LOCALIZEDTEXT: {
        const struct ua_localizedtext *x = a, *y = b;
        uint8_t mx = x->mask & 3, my = y->mask & 3;

        return mx == my
               && (!(mx & UA_LT_LOCALE)
                   || ua_string_equal(&x->locale, &y->locale))
               && (!(mx & UA_LT_TEXT) || ua_string_equal(&x->text, &y->text));
    }
    case UA_BT_EXTENSIONOBJECT: {
        const struct ua_extobj *x = a, *y = b;

        if (x->encoding != y->encoding)
            return false;
        switch (x->encoding) {
        case UA_EO_NONE:
            return ua_nodeid_equal(&x->type_id, &y->type_id);
        case UA_EO_DECODED:
            return x->type == y->type && ua_equal(x->obj, y->obj, x->type);
        default:
            return ua_nodeid_equal(&x->type_id, &y->type_id)
                   && ua_string_equal(&x->body, &y->body);
        }
    }
    case UA_BT_DATAVALUE: {
        const struct ua_datavalue *x = a, *y = b;
        uint8_t m = x->mask & 0x3F;

        if (m != (y->mask & 0x3F))
            return false;
        return (!(m & UA_DV_VALUE) || ua_variant_equal(&x->value, &y->value))
               && (!(m & UA_DV_STATUS) || x->status == y->status)
               && (!(m & UA_DV_SOURCE_TS) || x->source_ts == y->source_ts)
               && (!(m & UA_DV_SERVER_TS) || x->server_ts == y->server_ts)
               && (!(m & UA_DV_SOURCE_PS) || x->source_ps == y->source_ps)
               && (!(m & UA_DV_SERVER_PS) || x->server_ps == y->server_ps);
    }
    case UA_BT_VARIANT:
        return ua_variant_equal(a, b);
    case UA_BT_DIAGNOSTICINFO: {
        const struct ua_diaginfo *x = a, *y = b;
        uint8_t m = x->mask & 0x7F;

        if (m != (y->mask & 0x7F))
            return false;
        return (!(m & UA_DI_SYMBOLIC_ID) || x->symbolic_id == y->symbolic_id)
               && (!(m & UA_DI_NAMESPACE_URI)
                   || x->namespace_uri == y->namespace_uri)
               && (!(m & UA_DI_LOCALIZED_TEXT)
                   || x->localized_text == y->localized_text)
               && (!(m & UA_DI_LOCALE) || x->locale == y->locale)
               && (!(m & UA_DI_ADDITIONAL)
                   || ua_string_equal(&x->additional_info, &y->additional_info))
               && (!(m & UA_DI_INNER_STATUS)
                   || x->inner_status == y->inner_status)
               && (!(m & UA_DI_INNER_DIAG)
                   || ua_equal(x->inner, y->inner, t));
    }
    case UA_KIND_STRUCT: {
        const uint8_t *pa = a, *pb = b;

        for (uint16_t i = 0; i < t->nmembers; i++) {
            const struct ua_member *m = &t->members[i];
            const struct ua_type   *mt = &ua_types[m->type];

            if (m->is_array) {
                int32_t na, nb;
                const void *da, *db;

                memcpy(&na, pa + m->count_offset, 4);
                memcpy(&nb, pb + m->count_offset, 4);
                memcpy(&da, pa + m->offset, sizeof(da));
                memcpy(&db, pb + m->offset, sizeof(db));
                if (!ua_equal_array(da, na, db, nb, mt))
                    return false;
            } else if (!ua_equal(pa + m->offset, pb + m->offset, mt)) {
                return false;
            }
        }
        return true;
    }
    default:
        return false;
    }
}
