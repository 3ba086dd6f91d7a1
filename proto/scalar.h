/*
 * proto/scalar.h: one built-in scalar as a comparable value, the operands
 * of a ContentFilter (Part 4 §7.7), straight from its encoded Variant
 * bytes and without allocation.
 *
 * A value is a view: a number (Boolean, the integers, Float, Double,
 * DateTime, StatusCode), a string (String, ByteString, XmlElement, the
 * text of a LocalizedText, the name of a QualifiedName with its
 * namespace), a NodeId or a Guid, pointing into the bytes it was read
 * from; or NULL (kind UA_BTC_NONE) for an array, an empty Variant, or a
 * type that is not compared.  The kind of each type is its class in
 * ua_builtin[] (proto/builtin.h).
 *
 * Comparisons follow a subset of Part 4's implicit conversions (§7.7.3,
 * the conversion table): numbers compare as numbers (Boolean as 0 / 1;
 * a Float or Double makes both doubles; signed with unsigned exactly); a
 * String compared with a number is read as a number (not one: the
 * comparison fails); strings compare by bytes, QualifiedNames by
 * namespace first; NodeIds and Guids are only equal or not.
 */
#ifndef UA_SCALAR_H
#define UA_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "builtin.h"

struct ua_scalar {
    uint8_t        kind;            /* enum ua_builtin_class */
    uint8_t        bt;              /* the built-in type it came from */
    uint8_t        idt;             /* NodeId: enum ua_idtype */
    uint8_t        pad;
    uint16_t       ns;              /* NodeId, QualifiedName */
    uint32_t       n;               /* bytes at p */
    const uint8_t *p;               /* strings, Guids, NodeId identifiers */
    union {
        bool     b;
        int64_t  i;                 /* UA_BTC_SIGNED */
        uint64_t u;                 /* UA_BTC_UNSIGNED; numeric NodeIds */
        double   d;                 /* UA_BTC_REAL */
    } u;
};

/*
 * The scalar Variant v[n] (its encoding byte first) as a value in out:
 * true; false with out NULL for an array, an empty Variant, a type that is
 * not compared, an ExpandedNodeId with a URI or server index, or bytes
 * that end too soon.  A null String reads as empty.  out points into v.
 */
bool ua_scalar_view(const uint8_t *v, size_t n, struct ua_scalar *out);

/* out as the Boolean v (0 or 1), or NULL when v < 0. */
void ua_scalar_bool(struct ua_scalar *out, int v);

/* a as a double: numbers, and a String that is one entirely. */
bool ua_scalar_number(const struct ua_scalar *a, double *d);

/*
 * -1, 0 or 1 as a is less than, equal to or greater than b; *ok false
 * (and 0) when they do not compare: a NULL, a NaN, kinds with no
 * conversion between them.  NodeIds and Guids give 0 or 1 (equal or not).
 */
int ua_scalar_compare(const struct ua_scalar *a, const struct ua_scalar *b,
                      bool *ok);

/* Whether a and b have an order (neither is a NodeId or a Guid). */
bool ua_scalar_ordered(const struct ua_scalar *a, const struct ua_scalar *b);

/*
 * a converted to built-in type bt into r (Part 4 §7.7.3 Cast): Boolean,
 * the integers (a float rounded to nearest; out of bt's range NULL),
 * Float, Double, and String from a String.  Anything else is NULL.
 */
void ua_scalar_cast(const struct ua_scalar *a, uint32_t bt,
                    struct ua_scalar *r);

#endif /* UA_SCALAR_H */
