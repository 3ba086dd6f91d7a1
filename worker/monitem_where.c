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
 * (struct ua_scalar): numbers, strings (String, ByteString, XmlElement, the
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

static int wk_where_ops(int32_t op);
static bool wk_like(const uint8_t *s, uint32_t sn, const uint8_t *p,
                    uint32_t pn);
static int wk_fv_truth(const struct ua_scalar *v);

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

/* 1 true, 0 false, -1 NULL (a non-Boolean is NULL). */
static int
wk_fv_truth(const struct ua_scalar *v)
{
    if (v->kind != UA_BTC_BOOLEAN)
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

/* ------------------------------------------------------------------ */
/* evaluate                                                            */
/* ------------------------------------------------------------------ */

/* The value of operand o (at *at, moved past it). */
static void
wk_where_value(struct wk_subs *st, const uint8_t *w, uint32_t *at,
               const struct shm_fo_ev *ev, const struct shm_fo_ev_field *f,
               uint32_t nf, struct ua_scalar *out)
{
    uint8_t kind = w[(*at)++];

    memset(out, 0, sizeof(*out));
    if (kind == WK_OP_LIT) {
        uint32_t len;

        memcpy(&len, w + *at, 4);
        (void)ua_scalar_view(w + *at + 4, len, out);
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
                    (void)ua_scalar_view(f[k].var, f[k].vlen, out);
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
        struct ua_scalar a, b, c, *r = &st->evv[i];
        bool         ok;
        int          cmp, ta, tb;

        at = offs[i] + 2;
        wk_where_value(st, w, &at, ev, f, nf, &a);
        if (nops >= 2)
            wk_where_value(st, w, &at, ev, f, nf, &b);
        switch (op) {
        case UA_FILTEROPERATOR_EQUALS:
            cmp = ua_scalar_compare(&a, &b, &ok);
            ua_scalar_bool(r, ok ? cmp == 0 : (a.kind == UA_BTC_NONE
                                           || b.kind == UA_BTC_NONE) ? -1 : 0);
            break;
        case UA_FILTEROPERATOR_ISNULL:
            ua_scalar_bool(r, a.kind == UA_BTC_NONE);
            break;
        case UA_FILTEROPERATOR_GREATERTHAN:
        case UA_FILTEROPERATOR_LESSTHAN:
        case UA_FILTEROPERATOR_GREATERTHANOREQUAL:
        case UA_FILTEROPERATOR_LESSTHANOREQUAL:
            cmp = ua_scalar_compare(&a, &b, &ok);
            if (!ok || !ua_scalar_ordered(&a, &b)) {
                ua_scalar_bool(r, -1);
                break;
            }
            ua_scalar_bool(r, op == UA_FILTEROPERATOR_GREATERTHAN ? cmp > 0
                          : op == UA_FILTEROPERATOR_LESSTHAN ? cmp < 0
                          : op == UA_FILTEROPERATOR_GREATERTHANOREQUAL
                              ? cmp >= 0 : cmp <= 0);
            break;
        case UA_FILTEROPERATOR_LIKE:
            if (a.kind != UA_BTC_STRING || b.kind != UA_BTC_STRING)
                ua_scalar_bool(r, -1);
            else
                ua_scalar_bool(r, wk_like(a.p, a.n, b.p, b.n));
            break;
        case UA_FILTEROPERATOR_NOT:
            ta = wk_fv_truth(&a);
            ua_scalar_bool(r, ta < 0 ? -1 : !ta);
            break;
        case UA_FILTEROPERATOR_BETWEEN: {
            bool ok2;
            int  c1, c2;

            wk_where_value(st, w, &at, ev, f, nf, &c);
            c1 = ua_scalar_compare(&a, &b, &ok);
            c2 = ua_scalar_compare(&a, &c, &ok2);
            if (!ok || !ok2 || !ua_scalar_ordered(&a, &b)
                || !ua_scalar_ordered(&a, &c))
                ua_scalar_bool(r, -1);
            else
                ua_scalar_bool(r, c1 >= 0 && c2 <= 0);
            break;
        }
        case UA_FILTEROPERATOR_INLIST: {
            int res = 0;

            cmp = ua_scalar_compare(&a, &b, &ok);
            if (ok && cmp == 0)
                res = 1;
            for (uint32_t k = 2; k < nops; k++) {
                wk_where_value(st, w, &at, ev, f, nf, &c);
                cmp = ua_scalar_compare(&a, &c, &ok);
                if (ok && cmp == 0)
                    res = 1;
            }
            ua_scalar_bool(r, a.kind == UA_BTC_NONE ? -1 : res);
            break;
        }
        case UA_FILTEROPERATOR_AND:
            ta = wk_fv_truth(&a);
            tb = wk_fv_truth(&b);
            ua_scalar_bool(r, ta == 0 || tb == 0 ? 0
                              : ta < 0 || tb < 0 ? -1 : 1);
            break;
        case UA_FILTEROPERATOR_OR:
            ta = wk_fv_truth(&a);
            tb = wk_fv_truth(&b);
            ua_scalar_bool(r, ta == 1 || tb == 1 ? 1
                              : ta < 0 || tb < 0 ? -1 : 0);
            break;
        case UA_FILTEROPERATOR_CAST: {
            uint32_t bt = 0;

            /* b: the DataType's NodeId; its built-in type. */
            if (b.kind == UA_BTC_NODEID && b.ns == 0
                && b.idt == UA_IDTYPE_NUMERIC && b.u.u >= 1 && b.u.u <= 25)
                bt = (uint32_t)b.u.u;
            ua_scalar_cast(&a, bt, r);
            break;
        }
        case UA_FILTEROPERATOR_OFTYPE: {
            struct ua_nodeid id;
            uint32_t         t;

            memset(&id, 0, sizeof(id));
            if (a.kind != UA_BTC_NODEID || a.idt != UA_IDTYPE_NUMERIC) {
                /* Other identifier forms: look the bytes up. */
                if (a.kind == UA_BTC_NODEID) {
                    id.ns = a.ns;
                    id.idtype = a.idt;
                    if (a.idt == UA_IDTYPE_GUID)
                        memcpy(&id.id.guid, a.p, 16);
                    else {
                        id.id.str.len = (int32_t)a.n;
                        id.id.str.data = (uint8_t *)(uintptr_t)a.p;
                    }
                } else {
                    ua_scalar_bool(r, 0);
                    break;
                }
            } else {
                id = ua_nodeid_num(a.ns, (uint32_t)a.u.u);
            }
            t = wk_node_lookup(st->w, &id);
            ua_scalar_bool(r, t != SHM_NONE && ev->type < st->w->ns.nnodes
                              && shm_nodestore_is_subtype(&st->w->ns,
                                                          ev->type, t));
            break;
        }
        case UA_FILTEROPERATOR_BITWISEAND:
        case UA_FILTEROPERATOR_BITWISEOR:
            memset(r, 0, sizeof(*r));
            if ((a.kind == UA_BTC_SIGNED || a.kind == UA_BTC_UNSIGNED)
                && (b.kind == UA_BTC_SIGNED || b.kind == UA_BTC_UNSIGNED)) {
                uint64_t x = a.u.u, y = b.u.u;

                r->kind = a.kind == UA_BTC_SIGNED && b.kind == UA_BTC_SIGNED
                              ? UA_BTC_SIGNED : UA_BTC_UNSIGNED;
                r->bt = r->kind == UA_BTC_SIGNED ? UA_BT_INT64 : UA_BT_UINT64;
                r->u.u = op == UA_FILTEROPERATOR_BITWISEAND ? x & y : x | y;
            }
            break;
        default:
            ua_scalar_bool(r, -1);
            break;
        }
    }
    return wk_fv_truth(&st->evv[0]) == 1;
}
