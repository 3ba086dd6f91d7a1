/*
 * proto/builtin.h: the 25 built-in types (Part 6 §5.1.2 Table 1) as one
 * table indexed by built-in type id, and the per-type rules the server
 * applies in more than one place:
 *
 *   text -> value   ua_builtin_parse(): the feed's value syntax
 *                   (broker/feed.c, docs/feed.md) and the leaf text of the
 *                   XML encoding in NodeSet files (broker/nodeset.c,
 *                   Part 6 §5.3);
 *   value -> text   ua_builtin_print(): the feed's syntax, which the feed
 *                   reads back (the `uabroker feed` tool, method messages);
 *   bytes -> value  the class column below, for the comparisons and casts
 *                   of a where clause (proto/scalar.h).
 *
 * Where the two text syntaxes differ, type by type (the lexical pieces
 * are in proto/text.h).  "On purpose" marks a difference each syntax
 * needs; "kept" one the NodeSet importer has always had and that is kept
 * so every file it loaded still loads.
 *
 *   type          UA_TEXT_FEED                  UA_TEXT_XML
 *   ------------- ----------------------------- ---------------------------
 *   all           ' ', '\t' trimmed (and a      XML whitespace trimmed
 *                 final '\r')                   (xs:whiteSpace collapse),
 *                                               but not from a String
 *   Boolean       true false 1 0                the same (xs:boolean)
 *   SByte..UInt64 C constants: decimal, 0x hex  decimal only (xs:integer),
 *                 (on purpose: StatusCodes are  any length
 *                 written 0x80740000) and, kept
 *                 from strtoll base 0, a leading
 *                 0 makes octal; under 64 chars
 *   out of range  BadOutOfRange                 BadOutOfRange
 *   Float Double  strtod (nan, inf, exponents,  INF -INF NaN (xs:double),
 *                 hex); a finite Float beyond   else strtod; a Float beyond
 *                 its range is BadOutOfRange    its range is +-INF (kept)
 *   String        bare, or "quoted" with \" \\  the text as it stands (XML
 *                 \n \t \r (docs/feed.md)       has its own escapes)
 *   XmlElement    as String                     an element: the caller's
 *   LocalizedText as String, no locale          elements: the caller's
 *   ByteString    base64 exactly (RFC 4648 §4), base64 with whitespace,
 *                 may be quoted                 '-' '_' (RFC 4648 §5),
 *                                               padding optional (kept)
 *   DateTime      RFC 3339, a zone required,    xs:dateTime as sscanf reads
 *                 may be quoted                 it, no zone is UTC (kept)
 *   Guid          8-4-4-4-12 exactly            the same, as sscanf reads
 *                                               it (kept: sign, 0x in a
 *                                               group)
 *   StatusCode    as UInt32 (0x...)             the <Code> text, as UInt32
 *   NodeId        the text form (nodeid.h)      an element: the caller's
 *   the others    BadNotSupported               BadNotSupported (elements:
 *                                               the caller's)
 *
 * Everything is pure: no I/O, no globals that change, allocation only
 * from the caller's arena.
 */
#ifndef UA_BUILTIN_H
#define UA_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "text.h"
#include "types.h"

/* How values of a type compare and convert (proto/scalar.h). */
enum ua_builtin_class {
    UA_BTC_NONE = 0,    /* not compared: the value is NULL */
    UA_BTC_BOOLEAN,
    UA_BTC_SIGNED,      /* SByte, Int16, Int32, Int64, DateTime */
    UA_BTC_UNSIGNED,    /* Byte, UInt16, UInt32, UInt64, StatusCode */
    UA_BTC_REAL,        /* Float, Double */
    UA_BTC_STRING,      /* String, ByteString, XmlElement; LocalizedText
                         * by its text, QualifiedName by namespace, name */
    UA_BTC_NODEID,      /* NodeId; ExpandedNodeId without URI or server */
    UA_BTC_GUID
};

/* ua_builtin_type.flags */
#define UA_BTF_INTEGER 0x01 /* SByte..UInt64: min and max are its range */
#define UA_BTF_NUMBER  0x02 /* the integers, Float, Double (Part 5 Number) */

struct ua_builtin_type {
    const char *name;       /* the DataType's BrowseName, the XML element
                             * name (ua_types[id - 1].name) */
    uint8_t     size;       /* encoded bytes when fixed (Part 6 §5.2.2),
                             * 0 when variable */
    uint8_t     cls;        /* enum ua_builtin_class */
    uint8_t     flags;      /* UA_BTF_* */
    int64_t     min;        /* UA_BTF_INTEGER: the least value */
    uint64_t    max;        /* UA_BTF_INTEGER: the greatest */
};

/* By built-in type id; [0] (Null) has no name and nothing else. */
extern const struct ua_builtin_type ua_builtin[UA_BT_MAX + 1];

/*
 * The built-in type id whose name is s[n] ("Int32"), or 0: how an XML
 * value element names its type (Part 6 §5.3.1; "ListOf" is the caller's).
 */
uint8_t ua_builtin_by_name(const char *s, size_t n);

/*
 * Arena room that always suffices for one ua_builtin_parse() of n
 * characters: it makes at most one allocation, of at most n + 3 bytes.
 */
#define UA_BUILTIN_ROOM(n) ((size_t)(n) + 3 + 2 * UA_ARENA_ALIGN)

/* st, after writing fmt's message into why (when why is not NULL and
 * whylen not 0): the parsers' way of saying why a text was refused. */
ua_status ua_builtin_why(char *why, size_t whylen, ua_status st,
                         const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * One value of built-in type bt from the text s[n] in syntax syn (the
 * table above) into out, which has ua_types[bt - 1].size bytes.  Bytes the
 * text holds as they stand (a bare feed String, an XML String, a NodeId's
 * s= identifier) are pointed at, not copied: s must outlive the value;
 * bytes that had to be made (unquoted, decoded) come from a.
 * UA_GOOD; BadTypeMismatch when s is not a bt; BadOutOfRange when it is a
 * number outside bt; BadNotSupported for a type without a text form in
 * syn.  A feed value whose bytes do not fit in a is BadTypeMismatch (as
 * the feed has always answered); an XML one BadOutOfMemory.  When why is
 * not NULL it receives a sentence for a person (why[whylen], cut to fit).
 */
ua_status ua_builtin_parse(uint8_t bt, enum ua_text_syntax syn,
                           const char *s, size_t n, struct ua_arena *a,
                           void *out, char *why, size_t whylen);

/*
 * The built-in type the feed gives a value written to a Variable whose
 * DataType is abstract (docs/feed.md): root is the type root
 * (UA_NS0ID_BASEDATATYPE, _NUMBER, _INTEGER or _UINTEGER).  true or false
 * is Boolean; a quoted text String; empty text, or 64 characters or more,
 * String; text with '.', 'e', 'E', 'n', 'N', 'i' or 'I' (a fraction, an
 * exponent, nan, inf) Double; any other text Int32, or Int64 when strtoll
 * reads a number beyond Int32 (UInt32 or UInt64 under UInteger).  The
 * rule looks at characters only: a bare word becomes an Int32 or a Double
 * that ua_builtin_parse() then refuses (BadTypeMismatch).
 */
uint8_t ua_builtin_infer(const char *s, size_t n, uint32_t root);

/*
 * The value of built-in type bt at p in the feed's syntax, the way
 * ua_builtin_parse() reads it back (StatusCode as 0x%08X, Float with 9
 * and Double with 17 significant digits, strings quoted, DateTime in UTC
 * with 7 fraction digits), into buf[cap], NUL-terminated: its length, or
 * -1 when it does not fit or bt has no feed text.
 */
int ua_builtin_print(uint8_t bt, const void *p, char *buf, size_t cap);

#endif /* UA_BUILTIN_H */
