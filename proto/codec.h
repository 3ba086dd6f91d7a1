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

#include <stddef.h>
#include <stdint.h>

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
