/*
 * proto/codec.h: OPC UA binary encoding (Part 6 §5.2) of every type in
 * ua_types[], table-driven (STYLE §7).
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

/* Defaults of the decoding limits (SECURITY.md (d), suggested values). */
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
 * 1..max_n WriteValues, each a NodeId in one of the forms TwoByte,
 * FourByte, Numeric, String (length >= 0), a null IndexRange and a
 * DataValue that is a Value alone (mask 0x01), a scalar of a fixed-size
 * built-in type of at most 8 bytes (not a Guid).  True, h decoded, *first
 * at the first WriteValue and *n their number, when buf[len] is that and
 * ua_decode() of a WriteRequest from it with lim would succeed; false for
 * anything else, nothing decoded that the caller may use: ua_decode() then
 * decodes it (and reports what is wrong).  The WriteValues of a true
 * answer are walked without checks by ua_write_value_usual() and
 * ua_write_value_tail().
 */
struct ua_request_header;              /* types_gen.h */

bool ua_write_request_scan(const uint8_t *buf, size_t len,
                           const struct ua_limits *lim, int32_t max_n,
                           struct ua_request_header *h,
                           const uint8_t **first, int32_t *n);

/* The offsets in a usual WriteValue after its NodeId. */
#define UA_WV_USUAL_ATTR   0        /* attributeId, uint32 */
#define UA_WV_USUAL_TYPE   9        /* the Variant's built-in type */
#define UA_WV_USUAL_VALUE  10       /* its value, 1..8 bytes */

/*
 * The NodeId of a usual WriteValue at p (ua_write_request_scan() said so)
 * as its parts, what ua_decode() makes of it (the String's bytes in buf);
 * the position after it, where the UA_WV_USUAL_* offsets start.  Inline:
 * the caller's loop keeps the parts in registers.
 */
static inline const uint8_t *
ua_write_value_usual(const uint8_t *p, uint16_t *ns, uint8_t *idtype,
                     uint32_t *num, const uint8_t **bytes, uint32_t *len)
{
    uint16_t u16;
    int32_t  sl;

    *idtype = UA_IDTYPE_NUMERIC;
    *bytes = NULL;
    *len = 0;
    switch (p[0]) {
    case 0x00:
        *ns = 0;
        *num = p[1];
        return p + 2;
    case 0x01:
        memcpy(&u16, p + 2, 2);
        *ns = p[1];
        *num = u16;
        return p + 4;
    case 0x02:
        memcpy(ns, p + 1, 2);
        memcpy(num, p + 3, 4);
        return p + 7;
    default:                        /* 0x03, the scan took no other */
        memcpy(ns, p + 1, 2);
        memcpy(&sl, p + 3, 4);
        *idtype = UA_IDTYPE_STRING;
        *num = 0;
        *bytes = p + 7;
        *len = (uint32_t)sl;
        return p + 7 + (uint32_t)sl;
    }
}

/*
 * The next WriteValue after the one whose NodeId ended at q, given the
 * encoded size of its value (1, 2, 4 or 8 for its type).
 */
static inline const uint8_t *
ua_write_value_tail(const uint8_t *q, size_t fixed)
{
    return q + UA_WV_USUAL_VALUE + fixed;
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

/* The exact encoded size of src, or 0 when it cannot be encoded. */
size_t ua_encoded_size(const void *src, const struct ua_type *t);

#endif /* UA_CODEC_H */
