/*
 * proto/indexrange.h: IndexRange, the NumericRange of Part 4 §7.27
 * (grammar in Part 4 Annex A.3): one parser and the two operations on a
 * value that the services need, reading a sub-range (Read, monitored items) and
 * writing one (Write).
 *
 *   <numeric-range> ::= <dimension> [',' <dimension>]...
 *   <dimension>     ::= <index> [':' <index>]      first < second
 *   <index>         ::= <digit> [<digit>]...
 *
 * Statuses (Part 4 §7.27): BadIndexRangeInvalid is for the syntax only;
 * every other range that selects nothing is BadIndexRangeNoData, and a
 * written piece that does not fit the range is BadIndexRangeDataMismatch.
 * When reading, an upper bound past the data is cut (a partial result).
 *
 * Strings and ByteStrings are arrays of bytes to a range: a scalar one
 * takes one dimension, an array of them one more than the array has.
 *
 * Pure: no I/O, no allocation but from the caller's arena.
 */
#ifndef UA_INDEXRANGE_H
#define UA_INDEXRANGE_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "types.h"

/*
 * The dimensions a range may address: ua_indexrange_parse() keeps this
 * many bounds (checking and counting the rest), and a range of more
 * selects nothing (valid syntax: BadIndexRangeNoData).  The spec sets no
 * limit; 32 bounds the fixed arrays here and in the callers' frames and
 * is more than any ArrayDimensions we serve.
 */
#define UA_INDEXRANGE_DIMS_MAX 32

/* Bounds saturate here: far past any array, and no sum of two overflows. */
#define UA_INDEXRANGE_BOUND    (UINT64_C(1) << 40)

/* A parsed NumericRange. */
struct ua_indexrange {
    uint32_t n;                         /* dimensions given (saturating) */
    uint64_t lo[UA_INDEXRANGE_DIMS_MAX];    /* the first ones' bounds */
    uint64_t hi[UA_INDEXRANGE_DIMS_MAX];    /* hi == lo: a single index */
};

/*
 * Parse s[len] into r: UA_GOOD, or BadIndexRangeInvalid for anything but
 * the grammar above (also for NULL or len 0: an absent range is the
 * caller's to skip).  Linear in len; a bound past UA_INDEXRANGE_BOUND reads as
 * UA_INDEXRANGE_BOUND, so "99999999999999" is a lower bound past any data.
 */
ua_status ua_indexrange_parse(const uint8_t *s, size_t len,
                              struct ua_indexrange *r);

/*
 * The part of v (decoded, not UA_VARIANT_RAW) that r selects, into out:
 * an array (ArrayDimensions when more than one) of the same type, or a
 * String / ByteString scalar cut to its bytes.  Elements are copied
 * shallowly into a: what they point to stays where v has it.
 * UA_GOOD; BadIndexRangeNoData when a lower bound is past the data, the
 * dimensions do not match v's, r has more than UA_INDEXRANGE_DIMS_MAX, or v is
 * a scalar of another type or empty; BadOutOfMemory when a is exhausted.
 */
ua_status ua_indexrange_extract(struct ua_arena *a,
                                const struct ua_indexrange *r,
                                const struct ua_variant *v,
                                struct ua_variant *out);

/*
 * cur (decoded) with piece written over the one-dimensional range r, into
 * out: a copy of cur's elements (or bytes) in a, r's part replaced by
 * piece's; out's other fields are cur's.  Arrays of one dimension and
 * String / ByteString scalars only.
 * UA_GOOD; BadIndexRangeNoData when r has another number of dimensions,
 * cur is not such a value, is empty, or r's upper bound is past its end;
 * BadIndexRangeDataMismatch when piece is not exactly r's length of cur's
 * type (an array for an array, a scalar for a string); BadOutOfMemory.
 */
ua_status ua_indexrange_splice(struct ua_arena *a,
                               const struct ua_indexrange *r,
                               const struct ua_variant *cur,
                               const struct ua_variant *piece,
                               struct ua_variant *out);

#endif /* UA_INDEXRANGE_H */
