/*
 * proto/builtin.c: the built-in type table and its text rules
 * (builtin.h).
 *
 * ua_builtin_parse() is one switch over the built-in type with the
 * syntax's differences inside each case, so the two syntaxes can be read
 * side by side; the lexical pieces (base64, Guid, DateTime, quoting) are
 * proto/text.c's, the NodeId text form proto/nodeid.c's.  Numbers go
 * through the C library's strto* on a NUL-terminated copy, which is what
 * both callers did before and what keeps their readings exact.
 */
#include "builtin.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodeid.h"
#include "nodeids_gen.h"
#include "status_gen.h"

/* Feed numbers: longer text is not a number (as the feed always had). */
#define UA_BUILTIN_NUM_MAX 64

static const char *ua_builtin_xml_trim(const char *s, size_t *n);
static const char *ua_builtin_cstr(const char *s, size_t n, char *buf,
                                   size_t cap, struct ua_arena *a);
static ua_status ua_builtin_integer(uint8_t bt, enum ua_text_syntax syn,
                                    const char *s, size_t n,
                                    struct ua_arena *a, void *out, char *why,
                                    size_t whylen);
static ua_status ua_builtin_real(uint8_t bt, enum ua_text_syntax syn,
                                 const char *s, size_t n, struct ua_arena *a,
                                 void *out, char *why, size_t whylen);
static ua_status ua_builtin_bytes(uint8_t bt, enum ua_text_syntax syn,
                                  const char *s, size_t n,
                                  struct ua_arena *a, void *out, char *why,
                                  size_t whylen);

#define INT_T(nm, sz, lo, hi)                                               \
    { nm, sz, UA_BTC_SIGNED, UA_BTF_INTEGER | UA_BTF_NUMBER, lo, hi }
#define UINT_T(nm, sz, hi)                                                  \
    { nm, sz, UA_BTC_UNSIGNED, UA_BTF_INTEGER | UA_BTF_NUMBER, 0, hi }

const struct ua_builtin_type ua_builtin[UA_BT_MAX + 1] = {
    [UA_BT_NULL] = { NULL, 0, UA_BTC_NONE, 0, 0, 0 },
    [UA_BT_BOOLEAN] = { "Boolean", 1, UA_BTC_BOOLEAN, 0, 0, 0 },
    [UA_BT_SBYTE] = INT_T("SByte", 1, INT8_MIN, INT8_MAX),
    [UA_BT_BYTE] = UINT_T("Byte", 1, UINT8_MAX),
    [UA_BT_INT16] = INT_T("Int16", 2, INT16_MIN, INT16_MAX),
    [UA_BT_UINT16] = UINT_T("UInt16", 2, UINT16_MAX),
    [UA_BT_INT32] = INT_T("Int32", 4, INT32_MIN, INT32_MAX),
    [UA_BT_UINT32] = UINT_T("UInt32", 4, UINT32_MAX),
    [UA_BT_INT64] = INT_T("Int64", 8, INT64_MIN, INT64_MAX),
    [UA_BT_UINT64] = UINT_T("UInt64", 8, UINT64_MAX),
    [UA_BT_FLOAT] = { "Float", 4, UA_BTC_REAL, UA_BTF_NUMBER, 0, 0 },
    [UA_BT_DOUBLE] = { "Double", 8, UA_BTC_REAL, UA_BTF_NUMBER, 0, 0 },
    [UA_BT_STRING] = { "String", 0, UA_BTC_STRING, 0, 0, 0 },
    [UA_BT_DATETIME] = { "DateTime", 8, UA_BTC_SIGNED, 0, 0, 0 },
    [UA_BT_GUID] = { "Guid", 16, UA_BTC_GUID, 0, 0, 0 },
    [UA_BT_BYTESTRING] = { "ByteString", 0, UA_BTC_STRING, 0, 0, 0 },
    [UA_BT_XMLELEMENT] = { "XmlElement", 0, UA_BTC_STRING, 0, 0, 0 },
    [UA_BT_NODEID] = { "NodeId", 0, UA_BTC_NODEID, 0, 0, 0 },
    [UA_BT_EXPANDEDNODEID] = { "ExpandedNodeId", 0, UA_BTC_NODEID, 0, 0,
                               0 },
    [UA_BT_STATUSCODE] = { "StatusCode", 4, UA_BTC_UNSIGNED, 0, 0,
                           UINT32_MAX },
    [UA_BT_QUALIFIEDNAME] = { "QualifiedName", 0, UA_BTC_STRING, 0, 0, 0 },
    [UA_BT_LOCALIZEDTEXT] = { "LocalizedText", 0, UA_BTC_STRING, 0, 0, 0 },
    [UA_BT_EXTENSIONOBJECT] = { "ExtensionObject", 0, UA_BTC_NONE, 0, 0,
                                0 },
    [UA_BT_DATAVALUE] = { "DataValue", 0, UA_BTC_NONE, 0, 0, 0 },
    [UA_BT_VARIANT] = { "Variant", 0, UA_BTC_NONE, 0, 0, 0 },
    [UA_BT_DIAGNOSTICINFO] = { "DiagnosticInfo", 0, UA_BTC_NONE, 0, 0, 0 },
};

#undef INT_T
#undef UINT_T

uint8_t
ua_builtin_by_name(const char *s, size_t n)
{
    for (uint8_t bt = 1; bt <= UA_BT_MAX; bt++)
        if (strlen(ua_builtin[bt].name) == n
            && memcmp(ua_builtin[bt].name, s, n) == 0)
            return bt;
    return 0;
}

/* ------------------------------------------------------------ helpers */

ua_status
ua_builtin_why(char *why, size_t whylen, ua_status st, const char *fmt, ...)
{
    va_list ap;

    if (why != NULL && whylen != 0) {
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* s[*n] without XML whitespace at either end (what isspace() calls so). */
static const char *
ua_builtin_xml_trim(const char *s, size_t *n)
{
#define UA_XML_WS(c) ((c) == ' ' || (c) == '\t' || (c) == '\n'            \
                      || (c) == '\v' || (c) == '\f' || (c) == '\r')
    while (*n > 0 && UA_XML_WS(*s)) {
        s++;
        (*n)--;
    }
    while (*n > 0 && UA_XML_WS(s[*n - 1]))
        (*n)--;
#undef UA_XML_WS
    return s;
}

/* s[n] NUL-terminated in buf[cap], or in a when longer; NULL: no room. */
static const char *
ua_builtin_cstr(const char *s, size_t n, char *buf, size_t cap,
                struct ua_arena *a)
{
    char *d = n < cap ? buf : a != NULL ? ua_arena_alloc(a, n + 1) : NULL;

    if (d == NULL)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* ------------------------------------------------------------ parse */

/* The integers and StatusCode. */
static ua_status
ua_builtin_integer(uint8_t bt, enum ua_text_syntax syn, const char *s,
                   size_t n, struct ua_arena *a, void *out, char *why,
                   size_t whylen)
{
    const struct ua_builtin_type *d = &ua_builtin[bt];
    bool               sgn = d->cls == UA_BTC_SIGNED;
    int                base = syn == UA_TEXT_FEED ? 0 : 10;
    char               num[UA_BUILTIN_NUM_MAX];
    const char        *c;
    char              *endp;
    long long          sv = 0;
    unsigned long long uv = 0;

    if (n == 0 || (syn == UA_TEXT_FEED && n >= sizeof(num)))
        goto notnum;
    c = ua_builtin_cstr(s, n, num, sizeof(num),
                        syn == UA_TEXT_XML ? a : NULL);
    if (c == NULL)
        return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_MEMORY,
                              "out of memory");
    errno = 0;
    if (sgn)
        sv = strtoll(c, &endp, base);
    else if (c[0] == '-')
        goto range;
    else
        uv = strtoull(c, &endp, base);
    if (*endp != '\0' || endp == c)
        goto notnum;
    if (errno == ERANGE)
        goto range;
    if (sgn ? sv < d->min || sv > (long long)d->max : uv > d->max)
        goto range;
    switch (d->size) {
    case 1:
        if (sgn)
            *(int8_t *)out = (int8_t)sv;
        else
            *(uint8_t *)out = (uint8_t)uv;
        break;
    case 2:
        if (sgn)
            *(int16_t *)out = (int16_t)sv;
        else
            *(uint16_t *)out = (uint16_t)uv;
        break;
    case 4:
        if (sgn)
            *(int32_t *)out = (int32_t)sv;
        else
            *(uint32_t *)out = (uint32_t)uv;
        break;
    default:
        if (sgn)
            *(int64_t *)out = sv;
        else
            *(uint64_t *)out = uv;
        break;
    }
    return UA_GOOD;
notnum:
    return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                          "\"%.*s\" is not a %s", (int)n, s, d->name);
range:
    if (syn == UA_TEXT_XML)
        return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                              "\"%.*s\" is not a %s", (int)n, s, d->name);
    return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                          "%.*s is out of range for %s", (int)n, s, d->name);
}

/* Float and Double. */
static ua_status
ua_builtin_real(uint8_t bt, enum ua_text_syntax syn, const char *s, size_t n,
                struct ua_arena *a, void *out, char *why, size_t whylen)
{
    char        num[UA_BUILTIN_NUM_MAX];
    const char *c;
    char       *endp;
    double      d;

    if (n == 0 || (syn == UA_TEXT_FEED && n >= sizeof(num)))
        goto notnum;
    if (syn == UA_TEXT_XML && n == 3 && memcmp(s, "INF", 3) == 0) {
        d = INFINITY;
    } else if (syn == UA_TEXT_XML && n == 4 && memcmp(s, "-INF", 4) == 0) {
        d = -INFINITY;
    } else if (syn == UA_TEXT_XML && n == 3 && memcmp(s, "NaN", 3) == 0) {
        d = NAN;
    } else {
        c = ua_builtin_cstr(s, n, num, sizeof(num),
                            syn == UA_TEXT_XML ? a : NULL);
        if (c == NULL)
            return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_MEMORY,
                                  "out of memory");
        d = strtod(c, &endp);
        if (*endp != '\0' || endp == c)
            goto notnum;
    }
    if (bt == UA_BT_FLOAT) {
        if (syn == UA_TEXT_FEED && isfinite(d)
            && fabs(d) > 3.4028234663852886e38)
            return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                                  "%.*s is out of range for %s", (int)n, s,
                                  ua_builtin[bt].name);
        *(float *)out = (float)d;
    } else {
        *(double *)out = d;
    }
    return UA_GOOD;
notnum:
    return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                          "\"%.*s\" is not a %s", (int)n, s,
                          ua_builtin[bt].name);
}

/* String, XmlElement and LocalizedText (feed), String (XML), ByteString. */
static ua_status
ua_builtin_bytes(uint8_t bt, enum ua_text_syntax syn, const char *s,
                 size_t n, struct ua_arena *a, void *out, char *why,
                 size_t whylen)
{
    bool             quoted = syn == UA_TEXT_FEED && n >= 1 && s[0] == '"';
    struct ua_string str;
    uint8_t         *d;
    size_t           olen;

    if (bt == UA_BT_BYTESTRING) {
        if (quoted) {
            s++;
            n -= n >= 2 ? 2 : n;
        }
        d = ua_arena_alloc(a, n + 3);
        if (d == NULL && syn == UA_TEXT_XML)
            return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_MEMORY,
                                  "out of memory");
        if (d == NULL || ua_text_b64_decode(s, n, syn, d, &olen) != 0)
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  syn == UA_TEXT_XML
                                      ? "ByteString is not base64"
                                      : "a ByteString is base64");
        str.len = (int32_t)olen;
        str.data = d;
        *(struct ua_string *)out = str;
        return UA_GOOD;
    }
    if (quoted) {
        d = ua_arena_alloc(a, n);
        if (d == NULL || ua_text_unquote(s, n, d, &olen) != 0)
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  "unterminated or bad quoted string");
        str.len = (int32_t)olen;
        str.data = d;
    } else {
        str.len = (int32_t)n;
        str.data = (uint8_t *)(uintptr_t)s;
    }
    if (bt == UA_BT_LOCALIZEDTEXT) {
        struct ua_localizedtext *lt = out;

        memset(lt, 0, sizeof(*lt));
        lt->mask = UA_LT_TEXT;
        lt->locale.len = -1;
        lt->text = str;
    } else {
        *(struct ua_string *)out = str;
    }
    return UA_GOOD;
}

ua_status
ua_builtin_parse(uint8_t bt, enum ua_text_syntax syn, const char *s,
                 size_t n, struct ua_arena *a, void *out, char *why,
                 size_t whylen)
{
    const bool feed = syn == UA_TEXT_FEED;

    if (why != NULL && whylen != 0)
        why[0] = '\0';
    if (bt == UA_BT_NULL || bt > UA_BT_MAX)
        return ua_builtin_why(why, whylen, UA_BAD_NOT_SUPPORTED,
                              "no built-in type %u", bt);
    if (feed)
        s = ua_text_trim(s, &n);
    else if (bt != UA_BT_STRING)
        s = ua_builtin_xml_trim(s, &n);
    switch (bt) {
    case UA_BT_BOOLEAN:
        if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 1 && s[0] == '1'))
            *(bool *)out = true;
        else if ((n == 5 && memcmp(s, "false", 5) == 0)
                 || (n == 1 && s[0] == '0'))
            *(bool *)out = false;
        else if (feed)
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  "\"%.*s\" is not true or false", (int)n, s);
        else
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  "\"%.*s\" is not a Boolean", (int)n, s);
        return UA_GOOD;
    case UA_BT_SBYTE: case UA_BT_INT16: case UA_BT_INT32: case UA_BT_INT64:
    case UA_BT_BYTE: case UA_BT_UINT16: case UA_BT_UINT32: case UA_BT_UINT64:
    case UA_BT_STATUSCODE:
        return ua_builtin_integer(bt, syn, s, n, a, out, why, whylen);
    case UA_BT_FLOAT:
    case UA_BT_DOUBLE:
        return ua_builtin_real(bt, syn, s, n, a, out, why, whylen);
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
        return ua_builtin_bytes(bt, syn, s, n, a, out, why, whylen);
    case UA_BT_XMLELEMENT:
    case UA_BT_LOCALIZEDTEXT:
        if (!feed)
            break;
        return ua_builtin_bytes(bt, syn, s, n, a, out, why, whylen);
    case UA_BT_DATETIME:
        if (feed && n >= 1 && s[0] == '"') {
            s++;
            n -= n >= 2 ? 2 : n;
        }
        if (ua_text_datetime_parse(s, n, syn, out) != 0)
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  feed ? "\"%.*s\" is not an ISO 8601 date "
                                         "and time"
                                       : "\"%.*s\" is not a DateTime",
                                  (int)n, s);
        return UA_GOOD;
    case UA_BT_GUID:
        if (ua_text_guid_parse(s, n, syn, out) != 0)
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  feed ? "\"%.*s\" is not a GUID"
                                       : "\"%.*s\" is not a Guid",
                                  (int)n, s);
        return UA_GOOD;
    case UA_BT_NODEID: {
        size_t used = 0;

        if (!feed)
            break;
        if (ua_nodeid_parse(s, n, 0, a, out, &used) != UA_GOOD || used != n)
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                  "\"%.*s\" is not a NodeId", (int)n, s);
        return UA_GOOD;
    }
    default:
        break;
    }
    if (feed)
        return ua_builtin_why(why, whylen, UA_BAD_NOT_SUPPORTED,
                              "the feed does not write %s values",
                              ua_builtin[bt].name);
    return ua_builtin_why(why, whylen, UA_BAD_NOT_SUPPORTED,
                          "values of type %s are not supported",
                          ua_builtin[bt].name);
}

uint8_t
ua_builtin_infer(const char *s, size_t n, uint32_t root)
{
    char      num[UA_BUILTIN_NUM_MAX];
    char     *endp;
    long long v;

    s = ua_text_trim(s, &n);
    if ((n == 4 && memcmp(s, "true", 4) == 0)
        || (n == 5 && memcmp(s, "false", 5) == 0))
        return UA_BT_BOOLEAN;
    if (n >= 1 && s[0] == '"')
        return UA_BT_STRING;
    if (n == 0 || n >= sizeof(num))
        return UA_BT_STRING;
    if (memchr(s, '.', n) != NULL || memchr(s, 'e', n) != NULL
        || memchr(s, 'E', n) != NULL || memchr(s, 'n', n) != NULL
        || memchr(s, 'N', n) != NULL || memchr(s, 'i', n) != NULL
        || memchr(s, 'I', n) != NULL)
        return UA_BT_DOUBLE;
    memcpy(num, s, n);
    num[n] = '\0';
    errno = 0;
    v = strtoll(num, &endp, 0);
    if (root == UA_NS0ID_UINTEGER)
        return (unsigned long long)v > UINT32_MAX ? UA_BT_UINT64
                                                  : UA_BT_UINT32;
    return errno == 0 && v >= INT32_MIN && v <= INT32_MAX ? UA_BT_INT32
                                                          : UA_BT_INT64;
}

/* ------------------------------------------------------------ print */

int
ua_builtin_print(uint8_t bt, const void *p, char *buf, size_t cap)
{
    int k;

    if (cap > 0)
        buf[0] = '\0';
    switch (bt) {
    case UA_BT_BOOLEAN:
        k = snprintf(buf, cap, "%s", *(const bool *)p ? "true" : "false");
        break;
    case UA_BT_SBYTE:
        k = snprintf(buf, cap, "%d", *(const int8_t *)p);
        break;
    case UA_BT_BYTE:
        k = snprintf(buf, cap, "%u", *(const uint8_t *)p);
        break;
    case UA_BT_INT16:
        k = snprintf(buf, cap, "%d", *(const int16_t *)p);
        break;
    case UA_BT_UINT16:
        k = snprintf(buf, cap, "%u", *(const uint16_t *)p);
        break;
    case UA_BT_INT32:
        k = snprintf(buf, cap, "%" PRId32, *(const int32_t *)p);
        break;
    case UA_BT_UINT32:
        k = snprintf(buf, cap, "%" PRIu32, *(const uint32_t *)p);
        break;
    case UA_BT_STATUSCODE:
        k = snprintf(buf, cap, "0x%08" PRIX32, *(const uint32_t *)p);
        break;
    case UA_BT_INT64:
        k = snprintf(buf, cap, "%" PRId64, *(const int64_t *)p);
        break;
    case UA_BT_UINT64:
        k = snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)p);
        break;
    case UA_BT_FLOAT:
        k = snprintf(buf, cap, "%.9g", (double)*(const float *)p);
        break;
    case UA_BT_DOUBLE:
        k = snprintf(buf, cap, "%.17g", *(const double *)p);
        break;
    case UA_BT_STRING:
    case UA_BT_XMLELEMENT:
    case UA_BT_LOCALIZEDTEXT: {
        const struct ua_string *s =
            bt == UA_BT_LOCALIZEDTEXT
                ? &((const struct ua_localizedtext *)p)->text : p;

        return ua_text_quote(s->data, s->len > 0 ? (size_t)s->len : 0, buf,
                             cap);
    }
    case UA_BT_BYTESTRING: {
        const struct ua_string *b = p;

        return ua_text_b64_encode(b->data, b->len > 0 ? (size_t)b->len : 0,
                                  buf, cap);
    }
    case UA_BT_GUID:
        return ua_text_guid_print(p, buf, cap);
    case UA_BT_DATETIME:
        return ua_text_datetime_print(*(const int64_t *)p, buf, cap);
    case UA_BT_NODEID:
        return ua_nodeid_print(p, buf, cap);
    default:
        return -1;                  /* the feed has no syntax for it */
    }
    return k < 0 || (size_t)k >= cap ? -1 : k;
}
