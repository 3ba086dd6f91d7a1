/*
 * worker/monitem_where.c: the where clause of an EventFilter (Part 4
 * §7.7 ContentFilter, §7.22.3), compiled when an event item is created or
 * modified and evaluated per event without allocation.
 *
 * Compiled form (after the select clauses in the item's filter chain,
 * monitem_event.c), per element:
 *
 *   uint8 operator | uint8 noperands | operands, each uint8 kind then
 *     WK_OP_LIT    uint32 len, the encoded Variant (Part 6 §5.2.2.16)
 *     WK_OP_ELEM   uint32 element index (always greater than its own)
 *     WK_OP_FIELD  uint32 TypeDefinition node (SHM_NONE: any), uint8
 *                  attribute, uint8 0, uint16 path length, the path text
 *
 * Evaluation: an ElementOperand may only name a later element (checked at
 * compile time: BadFilterOperandInvalid otherwise), so the elements are
 * evaluated once each from the last to the first into st->evv[] and the
 * result is element 0's: no recursion, no repeated work, at most
 * limits.max_filter_elements elements.  Values are views of the bytes
 * (struct wk_fv): numbers, strings (String, ByteString, XmlElement, the
 * text of a LocalizedText, the name of a QualifiedName), NodeIds, GUIDs,
 * and NULL (a missing field, an array, a type we do not compare).
 *
 * Comparisons (a subset of Part 4 Table 120's implicit conversions):
 * Boolean, the integers, Float, Double, DateTime and StatusCode compare
 * as numbers (Boolean 0/1; a Float or Double makes both doubles; signed
 * with unsigned exactly); a String compared with a number is read as a
 * number (not a number: the comparison is false); strings compare by
 * bytes, QualifiedNames by namespace then name; NodeIds and GUIDs are
 * only equal or not.  Anything else, or a NULL operand, makes the
 * comparison NULL (false at the top).  And / Or / Not are three-valued
 * (Part 4 Tables 122, 123).  Like takes % _ [list] [^list] (Table 118).
 * Cast converts to Boolean, the integers, Float, Double, String (from a
 * String only) by the same rules; OfType is the event's EventType being
 * the type or a subtype (shm_nodestore_is_subtype).  InView and RelatedTo
 * are BadFilterOperatorUnsupported, an AttributeOperand
 * BadFilterOperandInvalid.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proto/attrs_gen.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "shm/nodestore.h"
#include "sub_int.h"
#include "node.h"

#define WK_OP_LIT   1
#define WK_OP_ELEM  2
#define WK_OP_FIELD 3

enum wk_fv_kind {
    WK_FV_NULL = 0,
    WK_FV_BOOL,
    WK_FV_I,            /* signed integers, DateTime */
    WK_FV_U,            /* unsigned integers, StatusCode */
    WK_FV_D,            /* Float, Double */
    WK_FV_S,            /* strings (bt tells which) */
    WK_FV_NODEID,
    WK_FV_GUID
};

static int wk_where_ops(int32_t op);
static bool wk_fv_of(const uint8_t *v, uint32_t n, struct wk_fv *out);
static int wk_fv_cmp(const struct wk_fv *a, const struct wk_fv *b, bool *ok);
static bool wk_fv_num(const struct wk_fv *a, double *d);
static bool wk_like(const uint8_t *s, uint32_t sn, const uint8_t *p,
                    uint32_t pn);
static void wk_fv_bool(struct wk_fv *r, int v);
static int wk_fv_truth(const struct wk_fv *v);
static void wk_fv_cast(const struct wk_fv *a, uint32_t bt, struct wk_fv *r);

/* Operands an operator takes: n, or -n for "at least n". */
static int
wk_where_ops(int32_t op)
{
    switch (op) {
    case UA_FILTEROPERATOR_ISNULL:
    case UA_FILTEROPERATOR_NOT:
    case UA_FILTEROPERATOR_OFTYPE:
    case UA_FILTEROPERATOR_INVIEW:
        return 1;
    case UA_FILTEROPERATOR_BETWEEN:
        return 3;
    case UA_FILTEROPERATOR_INLIST:
        return -2;
    case UA_FILTEROPERATOR_RELATEDTO:
        return 6;
    default:
        return 2;
    }
}

/* ------------------------------------------------------------------ */
/* compile                                                             */
/* ------------------------------------------------------------------ */

/* Room check and append. */
#define WK_PUT(src, len)                                                  \
    do {                                                                  \
        if (*pos + (uint32_t)(len) > cap)                                 \
            return UA_BAD_EVENT_FILTER_INVALID;                           \
        memcpy(b + *pos, (src), (len));                                   \
        *pos += (uint32_t)(len);                                          \
    } while (0)

/* A literal NodeId operand's node (SHM_NONE: not one). */
static uint32_t
wk_where_lit_node(struct wk_subs *st, const struct ua_extobj *x)
{
    const struct ua_literal_operand *l;

    if (x->encoding != UA_EO_DECODED
        || x->type != &ua_types[UA_TYPE_LITERALOPERAND])
        return SHM_NONE;
    l = x->obj;
    if (l->value.type != UA_BT_NODEID || l->value.is_array
        || l->value.data == NULL)
        return SHM_NONE;
    return wk_node_lookup(st->w, l->value.data);
}

/*
 * One operand k of element i (n elements) into b: its status (Good, or
 * what goes into operandStatusCodes).
 */
static ua_status
wk_where_operand(struct wk_subs *st, const struct ua_extobj *x, int32_t i,
                 int32_t n, uint8_t *b, uint32_t *pos, uint32_t cap)
{
    uint8_t kind;

    if (x->encoding != UA_EO_DECODED || x->obj == NULL)
        return UA_BAD_FILTER_OPERAND_INVALID;
    if (x->type == &ua_types[UA_TYPE_LITERALOPERAND]) {
        const struct ua_literal_operand *l = x->obj;
        size_t   need = ua_encoded_size(&l->value,
                                        &ua_types[UA_TYPE_VARIANT]), got;
        uint32_t len;

        kind = WK_OP_LIT;
        if (need == 0 || *pos + 5 + need > cap)
            return UA_BAD_FILTER_OPERAND_INVALID;
        b[(*pos)++] = kind;
        if (ua_encode(&l->value, &ua_types[UA_TYPE_VARIANT], b + *pos + 4,
                      cap - *pos - 4, &got) != UA_GOOD)
            return UA_BAD_FILTER_OPERAND_INVALID;
        len = (uint32_t)got;
        memcpy(b + *pos, &len, 4);
        *pos += 4 + len;
        return UA_GOOD;
    }
    if (x->type == &ua_types[UA_TYPE_ELEMENTOPERAND]) {
        const struct ua_element_operand *e = x->obj;

        if (e->index <= (uint32_t)i || e->index >= (uint32_t)n)
            return UA_BAD_FILTER_OPERAND_INVALID;  /* a loop, or none */
        if (*pos + 5 > cap)
            return UA_BAD_FILTER_OPERAND_INVALID;
        b[(*pos)++] = WK_OP_ELEM;
        memcpy(b + *pos, &e->index, 4);
        *pos += 4;
        return UA_GOOD;
    }
    if (x->type == &ua_types[UA_TYPE_SIMPLEATTRIBUTEOPERAND]) {
        const struct ua_simple_attribute_operand *op = x->obj;
        uint32_t  type = SHM_NONE;
        uint8_t   attr = (uint8_t)op->attribute_id, z = 0;
        uint16_t  pl = 0;
        char      path[SHM_FO_EV_PATH_MAX + 1];
        ua_status rc = wk_ev_operand_path(st, op, &type, path, &pl);

        if (rc != UA_GOOD)
            return rc;
        if (*pos + 1 + 4 + 1 + 1 + 2 + pl > cap)
            return UA_BAD_FILTER_OPERAND_INVALID;
        b[(*pos)++] = WK_OP_FIELD;
        memcpy(b + *pos, &type, 4);
        b[*pos + 4] = attr;
        b[*pos + 5] = z;
        memcpy(b + *pos + 6, &pl, 2);
        memcpy(b + *pos + 8, path, pl);
        *pos += 8u + pl;
        return UA_GOOD;
    }
    /* AttributeOperand (not for events), or not an operand at all. */
    return UA_BAD_FILTER_OPERAND_INVALID;
}

ua_status
wk_ev_where_compile(struct wk_subs *st, struct ua_arena *a,
                    const struct ua_content_filter *wc, uint8_t *b,
                    uint32_t *pos, uint32_t cap, uint16_t *nwhere,
                    struct ua_content_filter_result *res)
{
    int32_t n = wc->n_elements;
    bool    bad = false;

    memset(res, 0, sizeof(*res));
    *nwhere = 0;
    if (n <= 0)
        return UA_GOOD;
    if ((uint32_t)n > st->lim.max_where)
        return UA_BAD_EVENT_FILTER_INVALID;     /* limits.max_filter_elements */
    if (a != NULL) {
        res->element_results = ua_arena_alloc(
            a, (size_t)n * sizeof(*res->element_results));
        if (res->element_results != NULL) {
            memset(res->element_results, 0,
                   (size_t)n * sizeof(*res->element_results));
            res->n_element_results = n;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        const struct ua_content_filter_element *e = &wc->elements[i];
        struct ua_content_filter_element_result *er =
            res->element_results != NULL ? &res->element_results[i] : NULL;
        int       want = wk_where_ops(e->filter_operator);
        ua_status est = UA_GOOD;
        ua_status *ops = NULL;

        if (er != NULL && e->n_filter_operands > 0) {
            ops = ua_arena_alloc(a, (size_t)e->n_filter_operands
                                        * sizeof(ua_status));
            if (ops != NULL) {
                er->operand_status_codes = ops;
                er->n_operand_status_codes = e->n_filter_operands;
                for (int32_t k = 0; k < e->n_filter_operands; k++)
                    ops[k] = UA_GOOD;
            }
        }
        if (e->filter_operator < UA_FILTEROPERATOR_EQUALS
            || e->filter_operator > UA_FILTEROPERATOR_BITWISEOR)
            est = UA_BAD_FILTER_OPERATOR_INVALID;
        else if (e->filter_operator == UA_FILTEROPERATOR_INVIEW
                 || e->filter_operator == UA_FILTEROPERATOR_RELATEDTO)
            est = UA_BAD_FILTER_OPERATOR_UNSUPPORTED;
        else if (want > 0 ? e->n_filter_operands != want
                          : e->n_filter_operands < -want
                            || e->n_filter_operands > 255)
            est = UA_BAD_FILTER_OPERAND_COUNT_MISMATCH;
        if (est == UA_GOOD && *pos + 2 > cap)
            return UA_BAD_EVENT_FILTER_INVALID;
        if (est == UA_GOOD) {
            b[(*pos)++] = (uint8_t)e->filter_operator;
            b[(*pos)++] = (uint8_t)e->n_filter_operands;
        }
        for (int32_t k = 0; est == UA_GOOD && k < e->n_filter_operands;
             k++) {
            ua_status os = wk_where_operand(st, &e->filter_operands[k], i, n,
                                            b, pos, cap);

            if (os == UA_GOOD
                && ((e->filter_operator == UA_FILTEROPERATOR_OFTYPE
                     && k == 0)
                    || (e->filter_operator == UA_FILTEROPERATOR_CAST
                        && k == 1))) {
                /* A type: a literal NodeId of an ObjectType / DataType. */
                uint32_t t = wk_where_lit_node(st, &e->filter_operands[k]);
                uint8_t  want_nc = e->filter_operator
                                           == UA_FILTEROPERATOR_OFTYPE
                                       ? SHM_NC_OBJECTTYPE
                                       : SHM_NC_DATATYPE;

                if (t == SHM_NONE
                    || st->w->ns.nodes[t].node_class != want_nc)
                    os = UA_BAD_FILTER_OPERAND_INVALID;
            }
            if (os != UA_GOOD) {
                if (ops != NULL)
                    ops[k] = os;
                est = UA_BAD_FILTER_OPERAND_INVALID;
            }
        }
        if (est != UA_GOOD) {
            bad = true;
            if (er != NULL)
                er->status_code = est;
        }
    }
    if (bad)
        return UA_BAD_MONITORED_ITEM_FILTER_INVALID;
    /* All good: no element results (Part 4 allows them empty). */
    res->n_element_results = 0;
    res->element_results = NULL;
    *nwhere = (uint16_t)n;
    return UA_GOOD;
}

/* ------------------------------------------------------------------ */
/* values                                                              */
/* ------------------------------------------------------------------ */

/* The scalar Variant v[n] as a value (NULL for what we do not compare). */
static bool
wk_fv_of(const uint8_t *v, uint32_t n, struct wk_fv *out)
{
    uint8_t  t;
    int32_t  l;

    memset(out, 0, sizeof(*out));
    if (n < 1 || (v[0] & 0xC0) != 0)
        return false;               /* null, or an array */
    t = v[0] & 0x3F;
    out->bt = t;
    v++;
    n--;
#define NEED(k) do { if (n < (k)) return false; } while (0)
    switch (t) {
    case UA_BT_BOOLEAN:
        NEED(1);
        out->k = WK_FV_BOOL;
        out->u.b = v[0] != 0;
        return true;
    case UA_BT_SBYTE:
        NEED(1);
        out->k = WK_FV_I;
        out->u.i = (int8_t)v[0];
        return true;
    case UA_BT_BYTE:
        NEED(1);
        out->k = WK_FV_U;
        out->u.u = v[0];
        return true;
    case UA_BT_INT16: {
        int16_t x;

        NEED(2);
        memcpy(&x, v, 2);
        out->k = WK_FV_I;
        out->u.i = x;
        return true;
    }
    case UA_BT_UINT16: {
        uint16_t x;

        NEED(2);
        memcpy(&x, v, 2);
        out->k = WK_FV_U;
        out->u.u = x;
        return true;
    }
    case UA_BT_INT32: {
        int32_t x;

        NEED(4);
        memcpy(&x, v, 4);
        out->k = WK_FV_I;
        out->u.i = x;
        return true;
    }
    case UA_BT_UINT32:
    case UA_BT_STATUSCODE: {
        uint32_t x;

        NEED(4);
        memcpy(&x, v, 4);
        out->k = WK_FV_U;
        out->u.u = x;
        return true;
    }
    case UA_BT_INT64:
    case UA_BT_DATETIME:
        NEED(8);
        memcpy(&out->u.i, v, 8);
        out->k = WK_FV_I;
        return true;
    case UA_BT_UINT64:
        NEED(8);
        memcpy(&out->u.u, v, 8);
        out->k = WK_FV_U;
        return true;
    case UA_BT_FLOAT: {
        float f;

        NEED(4);
        memcpy(&f, v, 4);
        out->k = WK_FV_D;
        out->u.d = f;
        return true;
    }
    case UA_BT_DOUBLE:
        NEED(8);
        memcpy(&out->u.d, v, 8);
        out->k = WK_FV_D;
        return true;
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
    case UA_BT_XMLELEMENT:
        NEED(4);
        memcpy(&l, v, 4);
        if (l < 0)
            l = 0;                  /* null string: empty */
        if ((uint32_t)l > n - 4)
            return false;
        out->k = WK_FV_S;
        out->p = v + 4;
        out->n = (uint32_t)l;
        return true;
    case UA_BT_GUID:
        NEED(16);
        out->k = WK_FV_GUID;
        out->p = v;
        out->n = 16;
        return true;
    case UA_BT_LOCALIZEDTEXT: {
        uint32_t off = 1;

        NEED(1);
        if (v[0] & 0x01) {          /* locale: skip it */
            NEED(off + 4);
            memcpy(&l, v + off, 4);
            off += 4 + (l > 0 ? (uint32_t)l : 0);
            if (off > n)
                return false;
        }
        out->k = WK_FV_S;
        out->n = 0;
        out->p = v + off;
        if (v[0] & 0x02) {
            if (n - off < 4)
                return false;
            memcpy(&l, v + off, 4);
            if (l < 0)
                l = 0;
            if ((uint32_t)l > n - off - 4)
                return false;
            out->p = v + off + 4;
            out->n = (uint32_t)l;
        }
        return true;
    }
    case UA_BT_QUALIFIEDNAME: {
        uint16_t ns;

        NEED(6);
        memcpy(&ns, v, 2);
        memcpy(&l, v + 2, 4);
        if (l < 0)
            l = 0;
        if ((uint32_t)l > n - 6)
            return false;
        out->k = WK_FV_S;
        out->ns = ns;
        out->p = v + 6;
        out->n = (uint32_t)l;
        return true;
    }
    case UA_BT_NODEID:
    case UA_BT_EXPANDEDNODEID: {
        uint8_t  enc;
        uint16_t ns;
        uint32_t num;

        NEED(1);
        enc = v[0];
        if (t == UA_BT_EXPANDEDNODEID && (enc & 0xC0) != 0)
            return false;           /* with a URI / server: not compared */
        out->k = WK_FV_NODEID;
        out->bt = UA_BT_NODEID;
        switch (enc & 0x3F) {
        case 0x00:
            NEED(2);
            out->idt = UA_IDTYPE_NUMERIC;
            out->u.u = v[1];
            return true;
        case 0x01:
            NEED(4);
            out->idt = UA_IDTYPE_NUMERIC;
            out->ns = v[1];
            memcpy(&ns, v + 2, 2);
            out->u.u = ns;
            return true;
        case 0x02:
            NEED(7);
            out->idt = UA_IDTYPE_NUMERIC;
            memcpy(&out->ns, v + 1, 2);
            memcpy(&num, v + 3, 4);
            out->u.u = num;
            return true;
        case 0x04:
            NEED(19);
            out->idt = UA_IDTYPE_GUID;
            memcpy(&out->ns, v + 1, 2);
            out->p = v + 3;
            out->n = 16;
            return true;
        case 0x03:
        case 0x05:
            NEED(7);
            out->idt = (enc & 0x3F) == 0x03 ? UA_IDTYPE_STRING
                                            : UA_IDTYPE_OPAQUE;
            memcpy(&out->ns, v + 1, 2);
            memcpy(&l, v + 3, 4);
            if (l < 0)
                l = 0;
            if ((uint32_t)l > n - 7)
                return false;
            out->p = v + 7;
            out->n = (uint32_t)l;
            return true;
        default:
            out->k = WK_FV_NULL;
            return false;
        }
    }
    default:
        return false;
    }
#undef NEED
}

/* a as a number (strings are read as one). */
static bool
wk_fv_num(const struct wk_fv *a, double *d)
{
    char  buf[64];
    char *end;

    switch (a->k) {
    case WK_FV_BOOL:
        *d = a->u.b ? 1 : 0;
        return true;
    case WK_FV_I:
        *d = (double)a->u.i;
        return true;
    case WK_FV_U:
        *d = (double)a->u.u;
        return true;
    case WK_FV_D:
        *d = a->u.d;
        return true;
    case WK_FV_S:
        if (a->bt != UA_BT_STRING || a->n == 0 || a->n >= sizeof(buf))
            return false;
        memcpy(buf, a->p, a->n);
        buf[a->n] = '\0';
        *d = strtod(buf, &end);
        return *end == '\0';
    default:
        return false;
    }
}

static bool
wk_fv_isnum(const struct wk_fv *a)
{
    return a->k == WK_FV_BOOL || a->k == WK_FV_I || a->k == WK_FV_U
           || a->k == WK_FV_D;
}

/* -1, 0, 1; *ok false when a and b do not compare. */
static int
wk_fv_cmp(const struct wk_fv *a, const struct wk_fv *b, bool *ok)
{
    *ok = true;
    if (a->k == WK_FV_NULL || b->k == WK_FV_NULL) {
        *ok = false;
        return 0;
    }
    if (wk_fv_isnum(a) && wk_fv_isnum(b) && a->k != WK_FV_D
        && b->k != WK_FV_D) {
        /* Integers (Boolean 0/1) exactly, signed with unsigned. */
        bool    an = a->k == WK_FV_I && a->u.i < 0;
        bool    bn = b->k == WK_FV_I && b->u.i < 0;
        int64_t ai = a->k == WK_FV_BOOL ? a->u.b : a->u.i;
        int64_t bi = b->k == WK_FV_BOOL ? b->u.b : b->u.i;

        if (an || bn) {
            if (an && bn)
                return ai < bi ? -1 : ai > bi;
            return an ? -1 : 1;
        }
        {
            uint64_t au = a->k == WK_FV_BOOL ? a->u.b : a->u.u;
            uint64_t bu = b->k == WK_FV_BOOL ? b->u.b : b->u.u;

            return au < bu ? -1 : au > bu;
        }
    }
    if (wk_fv_isnum(a) || wk_fv_isnum(b)) {
        double x, y;

        if (!wk_fv_num(a, &x) || !wk_fv_num(b, &y) || isnan(x) || isnan(y)) {
            *ok = false;
            return 0;
        }
        return x < y ? -1 : x > y;
    }
    if (a->k == WK_FV_S && b->k == WK_FV_S) {
        uint32_t m = a->n < b->n ? a->n : b->n;
        int      c;

        if (a->bt == UA_BT_QUALIFIEDNAME && b->bt == UA_BT_QUALIFIEDNAME
            && a->ns != b->ns)
            return a->ns < b->ns ? -1 : 1;
        c = m > 0 ? memcmp(a->p, b->p, m) : 0;
        if (c != 0)
            return c < 0 ? -1 : 1;
        return a->n < b->n ? -1 : a->n > b->n;
    }
    if (a->k == WK_FV_GUID && b->k == WK_FV_GUID)
        return memcmp(a->p, b->p, 16) != 0;
    if (a->k == WK_FV_NODEID && b->k == WK_FV_NODEID) {
        if (a->ns != b->ns || a->idt != b->idt)
            return 1;
        if (a->idt == UA_IDTYPE_NUMERIC)
            return a->u.u != b->u.u;
        return a->n != b->n || (a->n > 0 && memcmp(a->p, b->p, a->n) != 0);
    }
    *ok = false;
    return 0;
}

/* NodeIds and GUIDs have no order: only Equals takes them. */
static bool
wk_fv_ordered(const struct wk_fv *a, const struct wk_fv *b)
{
    return a->k != WK_FV_NODEID && a->k != WK_FV_GUID
           && b->k != WK_FV_NODEID && b->k != WK_FV_GUID;
}

static void
wk_fv_bool(struct wk_fv *r, int v)
{
    memset(r, 0, sizeof(*r));
    if (v < 0)
        return;                     /* NULL */
    r->k = WK_FV_BOOL;
    r->bt = UA_BT_BOOLEAN;
    r->u.b = v != 0;
}

/* 1 true, 0 false, -1 NULL (a non-Boolean is NULL). */
static int
wk_fv_truth(const struct wk_fv *v)
{
    if (v->k != WK_FV_BOOL)
        return -1;
    return v->u.b ? 1 : 0;
}

/*
 * Like (Part 4 Table 118): % any run, _ one character, [abc] [a-z] one
 * of, [^...] none of; everything else itself.  Bytes, not code points.
 * One backtrack point for the last %: linear in practice, bounded by
 * sn * pn.
 */
static bool
wk_like(const uint8_t *s, uint32_t sn, const uint8_t *p, uint32_t pn)
{
    uint32_t si = 0, pi = 0, star_p = UINT32_MAX, star_s = 0;

    while (si < sn) {
        if (pi < pn && p[pi] == '%') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < pn) {
            bool     hit = false;
            uint32_t next = pi + 1;

            if (p[pi] == '_') {
                hit = true;
            } else if (p[pi] == '[') {
                uint32_t k = pi + 1;
                bool     neg = k < pn && p[k] == '^', in = false;

                if (neg)
                    k++;
                for (; k < pn && p[k] != ']'; k++) {
                    if (k + 2 < pn && p[k + 1] == '-' && p[k + 2] != ']') {
                        if (s[si] >= p[k] && s[si] <= p[k + 2])
                            in = true;
                        k += 2;
                    } else if (s[si] == p[k]) {
                        in = true;
                    }
                }
                if (k < pn) {
                    hit = in != neg;
                    next = k + 1;
                } else {
                    hit = s[si] == '[';     /* no ]: a plain [ */
                }
            } else {
                hit = p[pi] == s[si];
            }
            if (hit) {
                si++;
                pi = next;
                continue;
            }
        }
        if (star_p == UINT32_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '%')
        pi++;
    return pi == pn;
}

/* Cast a to built-in type bt (Part 4 §7.7.3 Cast; Table 120 subset). */
static void
wk_fv_cast(const struct wk_fv *a, uint32_t bt, struct wk_fv *r)
{
    double d;

    memset(r, 0, sizeof(*r));
    if (a->k == WK_FV_NULL)
        return;
    switch (bt) {
    case UA_BT_BOOLEAN:
        if (!wk_fv_num(a, &d) || isnan(d))
            return;
        wk_fv_bool(r, d != 0);
        return;
    case UA_BT_SBYTE: case UA_BT_INT16: case UA_BT_INT32: case UA_BT_INT64:
    case UA_BT_BYTE: case UA_BT_UINT16: case UA_BT_UINT32:
    case UA_BT_UINT64: {
        static const double lo[] = { 0, 0, -128, 0, -32768, 0,
                                     -2147483648.0, 0,
                                     -9223372036854775808.0, 0 };
        static const double hi[] = { 0, 0, 127, 255, 32767, 65535,
                                     2147483647.0, 4294967295.0,
                                     9223372036854775807.0,
                                     18446744073709551615.0 };

        if (a->k == WK_FV_I || a->k == WK_FV_U || a->k == WK_FV_BOOL) {
            /* Integers stay exact. */
            bool neg = a->k == WK_FV_I && a->u.i < 0;
            bool sgn = bt == UA_BT_SBYTE || bt == UA_BT_INT16
                       || bt == UA_BT_INT32 || bt == UA_BT_INT64;

            if (neg && !sgn)
                return;
            d = a->k == WK_FV_BOOL ? a->u.b
                : a->k == WK_FV_I ? (double)a->u.i : (double)a->u.u;
        } else if (!wk_fv_num(a, &d) || isnan(d)) {
            return;
        } else {
            d = nearbyint(d);
        }
        if (d < lo[bt] || d > hi[bt])
            return;                 /* out of range: NULL */
        r->bt = (uint8_t)bt;
        if (bt == UA_BT_SBYTE || bt == UA_BT_INT16 || bt == UA_BT_INT32
            || bt == UA_BT_INT64) {
            r->k = WK_FV_I;
            r->u.i = a->k == WK_FV_I ? a->u.i
                     : a->k == WK_FV_U ? (int64_t)a->u.u
                     : a->k == WK_FV_BOOL ? a->u.b : (int64_t)d;
        } else {
            r->k = WK_FV_U;
            r->u.u = a->k == WK_FV_U ? a->u.u
                     : a->k == WK_FV_I ? (uint64_t)a->u.i
                     : a->k == WK_FV_BOOL ? a->u.b : (uint64_t)d;
        }
        return;
    }
    case UA_BT_FLOAT:
    case UA_BT_DOUBLE:
        if (!wk_fv_num(a, &d))
            return;
        r->k = WK_FV_D;
        r->bt = (uint8_t)bt;
        r->u.d = bt == UA_BT_FLOAT ? (double)(float)d : d;
        return;
    case UA_BT_STRING:
        if (a->k == WK_FV_S) {
            *r = *a;
            r->bt = UA_BT_STRING;
        }
        return;
    default:
        return;                     /* not a cast we make: NULL */
    }
}

/* ------------------------------------------------------------------ */
/* evaluate                                                            */
/* ------------------------------------------------------------------ */

/* The value of operand o (at *at, moved past it). */
static void
wk_where_value(struct wk_subs *st, const uint8_t *w, uint32_t *at,
               const struct shm_fo_ev *ev, const struct shm_fo_ev_field *f,
               uint32_t nf, struct wk_fv *out)
{
    uint8_t kind = w[(*at)++];

    memset(out, 0, sizeof(*out));
    if (kind == WK_OP_LIT) {
        uint32_t len;

        memcpy(&len, w + *at, 4);
        (void)wk_fv_of(w + *at + 4, len, out);
        *at += 4 + len;
    } else if (kind == WK_OP_ELEM) {
        uint32_t idx;

        memcpy(&idx, w + *at, 4);
        *at += 4;
        *out = st->evv[idx];
    } else {
        uint32_t type;
        uint8_t  attr = w[*at + 4];
        uint16_t pl;

        memcpy(&type, w + *at, 4);
        memcpy(&pl, w + *at + 6, 2);
        if (attr == UA_ATTR_VALUE
            && (type == SHM_NONE
                || (ev->type < st->w->ns.nnodes
                    && shm_nodestore_is_subtype(&st->w->ns, ev->type, type))))
            for (uint32_t k = 0; k < nf; k++)
                if (f[k].plen == pl
                    && memcmp(f[k].path, w + *at + 8, pl) == 0) {
                    (void)wk_fv_of(f[k].var, f[k].vlen, out);
                    break;
                }
        *at += 8u + pl;
    }
}

bool
wk_ev_where_eval(struct wk_subs *st, const uint8_t *w, uint32_t n,
                 const struct shm_fo_ev *ev, const struct shm_fo_ev_field *f,
                 uint32_t nf)
{
    uint32_t offs[WK_EV_WHERE_MAX], at = 0;

    if (n == 0)
        return true;
    if (n > WK_EV_WHERE_MAX)
        return false;
    /* Where each element starts (the operands have their lengths). */
    for (uint32_t i = 0; i < n; i++) {
        uint8_t nops = w[at + 1];

        offs[i] = at;
        at += 2;
        for (uint32_t k = 0; k < nops; k++) {
            uint8_t  kind = w[at++];
            uint32_t len;
            uint16_t pl;

            if (kind == WK_OP_LIT) {
                memcpy(&len, w + at, 4);
                at += 4 + len;
            } else if (kind == WK_OP_ELEM) {
                at += 4;
            } else {
                memcpy(&pl, w + at + 6, 2);
                at += 8u + pl;
            }
        }
    }
    /* Last to first: an element only names later ones. */
    for (uint32_t i = n; i-- > 0;) {
        uint8_t      op = w[offs[i]], nops = w[offs[i] + 1];
        struct wk_fv a, b, c, *r = &st->evv[i];
        bool         ok;
        int          cmp, ta, tb;

        at = offs[i] + 2;
        wk_where_value(st, w, &at, ev, f, nf, &a);
        if (nops >= 2)
            wk_where_value(st, w, &at, ev, f, nf, &b);
        switch (op) {
        case UA_FILTEROPERATOR_EQUALS:
            cmp = wk_fv_cmp(&a, &b, &ok);
            wk_fv_bool(r, ok ? cmp == 0 : (a.k == WK_FV_NULL
                                           || b.k == WK_FV_NULL) ? -1 : 0);
            break;
        case UA_FILTEROPERATOR_ISNULL:
            wk_fv_bool(r, a.k == WK_FV_NULL);
            break;
        case UA_FILTEROPERATOR_GREATERTHAN:
        case UA_FILTEROPERATOR_LESSTHAN:
        case UA_FILTEROPERATOR_GREATERTHANOREQUAL:
        case UA_FILTEROPERATOR_LESSTHANOREQUAL:
            cmp = wk_fv_cmp(&a, &b, &ok);
            if (!ok || !wk_fv_ordered(&a, &b)) {
                wk_fv_bool(r, -1);
                break;
            }
            wk_fv_bool(r, op == UA_FILTEROPERATOR_GREATERTHAN ? cmp > 0
                          : op == UA_FILTEROPERATOR_LESSTHAN ? cmp < 0
                          : op == UA_FILTEROPERATOR_GREATERTHANOREQUAL
                              ? cmp >= 0 : cmp <= 0);
            break;
        case UA_FILTEROPERATOR_LIKE:
            if (a.k != WK_FV_S || b.k != WK_FV_S)
                wk_fv_bool(r, -1);
            else
                wk_fv_bool(r, wk_like(a.p, a.n, b.p, b.n));
            break;
        case UA_FILTEROPERATOR_NOT:
            ta = wk_fv_truth(&a);
            wk_fv_bool(r, ta < 0 ? -1 : !ta);
            break;
        case UA_FILTEROPERATOR_BETWEEN: {
            bool ok2;
            int  c1, c2;

            wk_where_value(st, w, &at, ev, f, nf, &c);
            c1 = wk_fv_cmp(&a, &b, &ok);
            c2 = wk_fv_cmp(&a, &c, &ok2);
            if (!ok || !ok2 || !wk_fv_ordered(&a, &b)
                || !wk_fv_ordered(&a, &c))
                wk_fv_bool(r, -1);
            else
                wk_fv_bool(r, c1 >= 0 && c2 <= 0);
            break;
        }
        case UA_FILTEROPERATOR_INLIST: {
            int res = 0;

            cmp = wk_fv_cmp(&a, &b, &ok);
            if (ok && cmp == 0)
                res = 1;
            for (uint32_t k = 2; k < nops; k++) {
                wk_where_value(st, w, &at, ev, f, nf, &c);
                cmp = wk_fv_cmp(&a, &c, &ok);
                if (ok && cmp == 0)
                    res = 1;
            }
            wk_fv_bool(r, a.k == WK_FV_NULL ? -1 : res);
            break;
        }
        case UA_FILTEROPERATOR_AND:
            ta = wk_fv_truth(&a);
            tb = wk_fv_truth(&b);
            wk_fv_bool(r, ta == 0 || tb == 0 ? 0 : ta < 0 || tb < 0 ? -1 : 1);
            break;
        case UA_FILTEROPERATOR_OR:
            ta = wk_fv_truth(&a);
            tb = wk_fv_truth(&b);
            wk_fv_bool(r, ta == 1 || tb == 1 ? 1 : ta < 0 || tb < 0 ? -1 : 0);
            break;
        case UA_FILTEROPERATOR_CAST: {
            uint32_t bt = 0;

            /* b: the DataType's NodeId; its built-in type. */
            if (b.k == WK_FV_NODEID && b.ns == 0
                && b.idt == UA_IDTYPE_NUMERIC && b.u.u >= 1 && b.u.u <= 25)
                bt = (uint32_t)b.u.u;
            wk_fv_cast(&a, bt, r);
            break;
        }
        case UA_FILTEROPERATOR_OFTYPE: {
            struct ua_nodeid id;
            uint32_t         t;

            memset(&id, 0, sizeof(id));
            if (a.k != WK_FV_NODEID || a.idt != UA_IDTYPE_NUMERIC) {
                /* Other identifier forms: look the bytes up. */
                if (a.k == WK_FV_NODEID) {
                    id.ns = a.ns;
                    id.idtype = a.idt;
                    if (a.idt == UA_IDTYPE_GUID)
                        memcpy(&id.id.guid, a.p, 16);
                    else {
                        id.id.str.len = (int32_t)a.n;
                        id.id.str.data = (uint8_t *)(uintptr_t)a.p;
                    }
                } else {
                    wk_fv_bool(r, 0);
                    break;
                }
            } else {
                id = ua_nodeid_num(a.ns, (uint32_t)a.u.u);
            }
            t = wk_node_lookup(st->w, &id);
            wk_fv_bool(r, t != SHM_NONE && ev->type < st->w->ns.nnodes
                              && shm_nodestore_is_subtype(&st->w->ns,
                                                          ev->type, t));
            break;
        }
        case UA_FILTEROPERATOR_BITWISEAND:
        case UA_FILTEROPERATOR_BITWISEOR:
            memset(r, 0, sizeof(*r));
            if ((a.k == WK_FV_I || a.k == WK_FV_U)
                && (b.k == WK_FV_I || b.k == WK_FV_U)) {
                uint64_t x = a.u.u, y = b.u.u;

                r->k = a.k == WK_FV_I && b.k == WK_FV_I ? WK_FV_I : WK_FV_U;
                r->bt = r->k == WK_FV_I ? UA_BT_INT64 : UA_BT_UINT64;
                r->u.u = op == UA_FILTEROPERATOR_BITWISEAND ? x & y : x | y;
            }
            break;
        default:
            wk_fv_bool(r, -1);
            break;
        }
    }
    return wk_fv_truth(&st->evv[0]) == 1;
}
