/*
 * proto/codec.h: OPC UA binary encoding (Part 6 §5.2) of every type in
 * ua_types[], table-driven (docs/style.md §7).
 *
 * Decoding never trusts a length: lengths below -1 and lengths that cannot
 * fit in the bytes left are BadDecodingError before anything is allocated;
 * lengths that fit but pass a configured limit, and nesting deeper than the
 * limit, are BadEncodingLimitsExceeded.  Everything decoded is allocated from
 * the caller's arena.
 *
 * Encoding writes into a caller buffer; when it does not fit the call fails
 * with BadEncodingLimitsExceeded and reports the exact size it needed.
 *
 * Pure: no I/O, no clock, no globals that change; safe to call from any
 * number of threads on distinct arguments.
 */
#ifndef UA_CODEC_H
#define UA_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "types.h"

/*
 * Part 6 §5.1.5: "Decoders shall support at least 100 nesting levels";
 * deeper input is an error.  Our bound is exactly 100.
 */
#define UA_NESTING_MAX             100

/* Defaults of the decoding limits (docs/security.md "Default limits"). */
#define UA_LIMIT_STRING_LEN        (1 << 20)       /* 1 MiB */
#define UA_LIMIT_BYTESTRING_LEN    (1 << 20)       /* 1 MiB */
#define UA_LIMIT_ARRAY_LEN         65535
#define UA_LIMIT_MESSAGE_SIZE      (4u << 20)      /* 4 MiB */

struct ua_limits {
    int32_t  max_string_len;        /* String and XmlElement bytes */
    int32_t  max_bytestring_len;
    int32_t  max_array_len;         /* elements of any array */
    uint32_t max_depth;             /* nesting levels, <= UA_NESTING_MAX */
    size_t   max_message_size;      /* bytes one decode call may read */
};

/* The defaults above. */
extern const struct ua_limits ua_limits_default;

/*
 * Decode one value of type t from buf[len] into dst (t->size bytes, written
 * whole).  *used receives the bytes consumed (may be NULL).  lim may be NULL
 * for the defaults.  On failure dst is left in an unspecified state and
 * nothing must be read from it.
 */
ua_status ua_decode(const uint8_t *buf, size_t len, size_t *used, void *dst,
                    const struct ua_type *t, struct ua_arena *a,
                    const struct ua_limits *lim);

/*
 * The usual WriteRequest, for a caller that takes it straight from its
 * bytes (the worker's fused Write, worker/svc_write.c): a RequestHeader in
 * the usual shape (no additionalHeader, a null or empty auditEntryId), then
 * 1..max_n WriteValues, each the usual one (ua_write_value_usual).
 *
 * ua_write_request_head() takes the header and the array's length: true,
 * h decoded, *first at the first WriteValue and *n their number (1..max_n
 * and within lim); false for anything else.  Then the caller walks the
 * WriteValues with ua_write_value_usual(); when the head and all *n of
 * them are taken, ua_decode() of a WriteRequest from buf[len] with lim
 * succeeds and makes the same of them.  Anything declined is left to
 * ua_decode(), which reports what is wrong: nothing here has a status.
 */
struct ua_request_header;              /* types_gen.h */

bool ua_write_request_head(const uint8_t *buf, size_t len,
                           const struct ua_limits *lim, int32_t max_n,
                           struct ua_request_header *h,
                           const uint8_t **first, int32_t *n);

/* The offsets in a usual WriteValue after its NodeId. */
#define UA_WV_USUAL_ATTR   0        /* attributeId, uint32 */
#define UA_WV_USUAL_TYPE   9        /* the Variant's built-in type */
#define UA_WV_USUAL_VALUE  10       /* its value, 1..8 bytes */
#define UA_WV_USUAL_TAIL   10       /* attributeId, indexRange, mask, type */

/*
 * The encoded size of a scalar of Variant encoding byte b in a usual
 * WriteValue: the fixed-size built-in types of at most 8 bytes (not Guid;
 * no array or dimension flags); else 0.
 */
static inline size_t
ua_write_usual_size(uint8_t b)
{
    static const uint8_t sz[UA_BT_STATUSCODE + 1] = {
        [UA_BT_BOOLEAN] = 1, [UA_BT_SBYTE] = 1, [UA_BT_BYTE] = 1,
        [UA_BT_INT16] = 2, [UA_BT_UINT16] = 2, [UA_BT_INT32] = 4,
        [UA_BT_UINT32] = 4, [UA_BT_FLOAT] = 4, [UA_BT_STATUSCODE] = 4,
        [UA_BT_INT64] = 8, [UA_BT_UINT64] = 8, [UA_BT_DOUBLE] = 8,
        [UA_BT_DATETIME] = 8,
    };

    return b <= UA_BT_STATUSCODE ? sz[b] : 0;
}

/*
 * One usual WriteValue at p (before end): a NodeId in the form TwoByte,
 * FourByte, Numeric or String (length 0..max_sl), a null IndexRange, a
 * DataValue that is a Value alone (mask 0x01) holding a scalar that
 * ua_write_usual_size() sizes.  The position after it, its NodeId as
 * parts (what ua_decode() makes of it: a String's bytes in the buffer)
 * and *tail at its bytes after the NodeId (the UA_WV_USUAL_* offsets);
 * NULL for anything else or short.  Inline: the caller's loop keeps the
 * parts in registers.
 */
static inline const uint8_t *
ua_write_value_usual(const uint8_t *p, const uint8_t *end, int32_t max_sl,
                     uint16_t *ns, uint8_t *idtype, uint32_t *num,
                     const uint8_t **bytes, uint32_t *len,
                     const uint8_t **tail)
{
    size_t         left = (size_t)(end - p), idlen, fs;
    const uint8_t *q;
    uint16_t       u16;
    int32_t        sl, ir;

    *idtype = UA_IDTYPE_NUMERIC;
    *bytes = NULL;
    *len = 0;
    /* The NodeId's bytes and UA_WV_USUAL_TAIL + 1 more fit: the shortest
     * form's before its form byte is read, each longer one with its own
     * length. */
    if (left < 2 + UA_WV_USUAL_TAIL + 1)
        return NULL;
    switch (p[0]) {
    case 0x00:
        *ns = 0;
        *num = p[1];
        idlen = 2;
        break;
    case 0x01:
        if (left < 4 + UA_WV_USUAL_TAIL + 1)
            return NULL;
        memcpy(&u16, p + 2, 2);
        *ns = p[1];
        *num = u16;
        idlen = 4;
        break;
    case 0x02:
        if (left < 7 + UA_WV_USUAL_TAIL + 1)
            return NULL;
        memcpy(ns, p + 1, 2);
        memcpy(num, p + 3, 4);
        idlen = 7;
        break;
    case 0x03:
        if (left < 7 + UA_WV_USUAL_TAIL + 1)
            return NULL;
        memcpy(&sl, p + 3, 4);
        if (sl < 0 || sl > max_sl
            || (size_t)sl > left - 7 - UA_WV_USUAL_TAIL - 1)
            return NULL;
        memcpy(ns, p + 1, 2);
        *idtype = UA_IDTYPE_STRING;
        *num = 0;
        *bytes = p + 7;
        *len = (uint32_t)sl;
        idlen = 7 + (size_t)sl;
        break;
    default:
        return NULL;
    }
    q = p + idlen;
    memcpy(&ir, q + 4, 4);
    fs = ua_write_usual_size(q[UA_WV_USUAL_TYPE]);
    if (ir != -1 || q[8] != UA_DV_VALUE || fs == 0
        || left - idlen - UA_WV_USUAL_TAIL < fs)
        return NULL;
    *tail = q;
    return q + UA_WV_USUAL_TAIL + fs;
}

/*
 * Encode src of type t into buf[cap].  On success *len is the bytes written.
 * When cap is too small: UA_BAD_ENCODING_LIMITS_EXCEEDED and *len is the
 * exact size needed (buf holds a prefix).  A value nested deeper than
 * UA_NESTING_MAX, a Variant whose dims do not match its length, or an
 * ExtensionObject with an unknown decoded type give the same status.
 */
ua_status ua_encode(const void *src, const struct ua_type *t, uint8_t *buf,
                    size_t cap, size_t *len);

struct ua_argument;

/*
 * A Method's InputArguments or OutputArguments value, the len encoded
 * Variant bytes at buf, as an Argument array in a: UA_GOOD with *n = 0 for
 * an empty or Null value; BadInternalError when it is not an array of
 * Arguments (decoded or binary bodies); BadOutOfMemory.
 */
ua_status ua_decode_arguments(const uint8_t *buf, size_t len,
                              struct ua_arena *a, struct ua_argument **defs,
                              int32_t *n);

/* The exact encoded size of src, or 0 when it cannot be encoded. */
size_t ua_encoded_size(const void *src, const struct ua_type *t);

#endif /* UA_CODEC_H */
