/*
 * proto/text.h: the lexical pieces of built-in values written as text,
 * in the two text syntaxes the server reads (the per-type rules that use
 * them are in proto/builtin.h, which tabulates where the syntaxes differ).
 *
 *   UA_TEXT_FEED  the feed's value syntax (docs/feed.md): what a producer
 *                 types on a line.
 *   UA_TEXT_XML   the leaf text of the XML encoding (Part 6 §5.3) as
 *                 UANodeSet files write it.
 *
 * Every function takes a pointer and a length (no NUL needed) and reads
 * nothing past them; none allocates, logs or reads the clock.
 */
#ifndef UA_TEXT_H
#define UA_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

enum ua_text_syntax {
    UA_TEXT_FEED = 0,
    UA_TEXT_XML = 1
};

/*
 * s[*n] without the feed's blanks: ' ' and '\t' at both ends, '\r' at the
 * end (a CRLF line).  Returns the new start; *n is the new length.
 */
const char *ua_text_trim(const char *s, size_t *n);

/*
 * The content of a feed quoted string s[n] ("..." with \" \\ \n \t \r
 * escapes; any other escaped character is itself) into out, which holds
 * at least n bytes; *olen its length.  0, or -1 when s is not one quoted
 * string (no closing quote, an unescaped quote inside).
 */
int ua_text_unquote(const char *s, size_t n, uint8_t *out, size_t *olen);

/*
 * s[n] quoted the way ua_text_unquote() reads it back (\" \\ \n \r \t
 * escaped) into buf[cap], NUL-terminated: its length, or -1 when it does
 * not fit (buf then holds a prefix).
 */
int ua_text_quote(const uint8_t *s, size_t n, char *buf, size_t cap);

/* The 6-bit value of base64 character c (RFC 4648 §4 alphabet), or -1. */
int ua_text_b64_value(int c);

/*
 * Base64 s[n] into out (at least n bytes); *olen the bytes decoded.
 *   UA_TEXT_FEED: RFC 4648 §4 exactly: n a multiple of 4, '=' padding
 *                 only at the end (at most two), the standard alphabet.
 *   UA_TEXT_XML:  xs:base64Binary as NodeSet writers emit it: whitespace
 *                 anywhere is skipped, '-' and '_' (the URL-safe alphabet,
 *                 RFC 4648 §5) are read as '+' and '/', padding is
 *                 optional, and bits of an incomplete last group dropped.
 * 0, or -1 for anything else.
 */
int ua_text_b64_decode(const char *s, size_t n, enum ua_text_syntax syn,
                       uint8_t *out, size_t *olen);

/*
 * d[n] in base64 with padding (RFC 4648 §4) into buf[cap], NUL-terminated:
 * its length, or -1 when it does not fit.
 */
int ua_text_b64_encode(const uint8_t *d, size_t n, char *buf, size_t cap);

/*
 * A Guid in its text form (Part 6 §5.1.3, 8-4-4-4-12 hex digits, either
 * case).  UA_TEXT_FEED: exactly that.  UA_TEXT_XML: what sscanf's "%8x-"
 * conversions take in 36 characters (as the NodeSet importer has always
 * read it: a group may also carry a sign or a 0x prefix).  0 or -1.
 */
int ua_text_guid_parse(const char *s, size_t n, enum ua_text_syntax syn,
                       struct ua_guid *g);

/* g as 8-4-4-4-12 lower-case hex into buf[cap]: 36, or -1. */
int ua_text_guid_print(const struct ua_guid *g, char *buf, size_t cap);

/*
 * A DateTime (100 ns ticks since 1601-01-01 UTC) from its text.
 *   UA_TEXT_FEED: RFC 3339: YYYY-MM-DD('T'|' ')HH:MM:SS[.f](Z|z|+hh:mm|
 *                 -hh:mm), every field at its width, up to 7 fraction
 *                 digits kept (more are read and dropped), year >= 1601.
 *   UA_TEXT_XML:  xs:dateTime (Part 6 §5.3.1.6) as the NodeSet importer
 *                 has always read it: sscanf "%d-%d-%dT%d:%d:%lf", so a
 *                 field may be unpadded; the seconds a decimal rounded to
 *                 100 ns; then Z, +hh:mm, -hh:mm or nothing (UTC); year
 *                 1601..9999; a result before 1601 is 0 (MinDateTime).
 * 0, or -1 when s is not such a time.  s[n] needs no NUL.
 */
int ua_text_datetime_parse(const char *s, size_t n, enum ua_text_syntax syn,
                           int64_t *dt);

/*
 * dt as RFC 3339 UTC with 7 fraction digits ("2024-05-01T12:00:00.5000000Z")
 * into buf[cap]: its length, or -1 when it does not fit or the year cannot
 * be represented.
 */
int ua_text_datetime_print(int64_t dt, char *buf, size_t cap);

#endif /* UA_TEXT_H */
