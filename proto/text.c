/*
 * proto/text.c: base64, Guid, DateTime and quoted strings as text
 * (text.h), in the feed's syntax and in the XML encoding's.
 *
 * The XML forms keep the NodeSet importer's historical readings (sscanf
 * conversions) so that every file it loaded still loads; the feed's are
 * exact.  Neither allocates: callers hand in the output room.
 */
#include "text.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The longest xs:dateTime text the XML reading takes. */
#define UA_TEXT_XML_DATETIME_MAX 255

static int ua_text_hex(char c);
static int ua_text_guid_feed(const char *s, size_t n, struct ua_guid *g);
static int ua_text_guid_xml(const char *s, size_t n, struct ua_guid *g);
static int ua_text_datetime_feed(const char *s, size_t n, int64_t *dt);
static int ua_text_datetime_xml(const char *s, size_t n, int64_t *dt);

const char *
ua_text_trim(const char *s, size_t *n)
{
    while (*n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        (*n)--;
    }
    while (*n > 0
           && (s[*n - 1] == ' ' || s[*n - 1] == '\t' || s[*n - 1] == '\r'))
        (*n)--;
    return s;
}

int
ua_text_unquote(const char *s, size_t n, uint8_t *out, size_t *olen)
{
    size_t k = 0;

    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return -1;
    for (size_t i = 1; i + 1 < n; i++) {
        char ch = s[i];

        /* A backslash just before the closing quote is itself. */
        if (ch == '\\' && i + 2 < n) {
            ch = s[++i];
            ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'r' ? '\r' : ch;
        } else if (ch == '"') {
            return -1;
        }
        out[k++] = (uint8_t)ch;
    }
    *olen = k;
    return 0;
}

int
ua_text_quote(const uint8_t *s, size_t n, char *buf, size_t cap)
{
    size_t k = 0;

#define UA_TEXT_PUT(c)                                                     \
    do {                                                                   \
        if (k + 1 >= cap)                                                  \
            goto full;                                                     \
        buf[k++] = (c);                                                    \
    } while (0)
    UA_TEXT_PUT('"');
    for (size_t i = 0; i < n; i++) {
        char c = (char)s[i];

        if (c == '"' || c == '\\') {
            UA_TEXT_PUT('\\');
            UA_TEXT_PUT(c);
        } else if (c == '\n' || c == '\r' || c == '\t') {
            UA_TEXT_PUT('\\');
            UA_TEXT_PUT(c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else {
            UA_TEXT_PUT(c);
        }
    }
    UA_TEXT_PUT('"');
#undef UA_TEXT_PUT
    buf[k] = '\0';
    return (int)k;
full:
    if (cap > 0)
        buf[k < cap ? k : cap - 1] = '\0';
    return -1;
}

/* ------------------------------------------------------------ base64 */

int
ua_text_b64_value(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

int
ua_text_b64_decode(const char *s, size_t n, enum ua_text_syntax syn,
                   uint8_t *out, size_t *olen)
{
    uint32_t acc = 0;
    size_t   o = 0;

    if (syn == UA_TEXT_XML) {
        int  bits = 0;
        bool pad = false;

        for (size_t i = 0; i < n; i++) {
            int c = (unsigned char)s[i], v;

            if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f'
                || c == '\r')
                continue;
            if (c == '=') {
                pad = true;
                continue;
            }
            v = c == '-' ? 62 : c == '_' ? 63 : ua_text_b64_value(c);
            if (v < 0 || pad)
                return -1;
            acc = (acc << 6) | (uint32_t)v;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                out[o++] = (uint8_t)(acc >> bits);
            }
        }
        *olen = o;
        return 0;
    }

    {
        size_t pad = 0;

        if (n % 4 != 0)
            return -1;
        while (pad < 2 && n > pad && s[n - 1 - pad] == '=')
            pad++;
        for (size_t i = 0; i < n - pad; i++) {
            int v = ua_text_b64_value((unsigned char)s[i]);

            if (v < 0)
                return -1;
            acc = acc << 6 | (uint32_t)v;
            if (i % 4 == 3) {
                out[o++] = (uint8_t)(acc >> 16);
                out[o++] = (uint8_t)(acc >> 8);
                out[o++] = (uint8_t)acc;
                acc = 0;
            }
        }
        if (pad == 1) {
            acc <<= 6;
            out[o++] = (uint8_t)(acc >> 16);
            out[o++] = (uint8_t)(acc >> 8);
        } else if (pad == 2) {
            acc <<= 12;
            out[o++] = (uint8_t)(acc >> 16);
        }
        *olen = o;
        return 0;
    }
}

int
ua_text_b64_encode(const uint8_t *d, size_t n, char *buf, size_t cap)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "abcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t            k = 0;

    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16;
        size_t   left = n - i;

        if (k + 4 >= cap) {
            if (cap > 0)
                buf[k] = '\0';
            return -1;
        }
        if (left > 1)
            v |= (uint32_t)d[i + 1] << 8;
        if (left > 2)
            v |= d[i + 2];
        buf[k++] = t[v >> 18 & 63];
        buf[k++] = t[v >> 12 & 63];
        buf[k++] = left > 1 ? t[v >> 6 & 63] : '=';
        buf[k++] = left > 2 ? t[v & 63] : '=';
    }
    if (k >= cap)
        return -1;
    buf[k] = '\0';
    return (int)k;
}

/* ------------------------------------------------------------ Guid */

static int
ua_text_hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* 8-4-4-4-12 hex digits.  0 or -1. */
static int
ua_text_guid_feed(const char *s, size_t n, struct ua_guid *g)
{
    uint8_t b[16];
    int     k = 0;

    if (n != 36)
        return -1;
    for (size_t i = 0; i < 36; i++) {
        int hi, lo;

        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return -1;
            continue;
        }
        if (i + 1 >= 36 || s[i + 1] == '-')
            return -1;
        hi = ua_text_hex(s[i]);
        lo = ua_text_hex(s[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[k++] = (uint8_t)(hi << 4 | lo);
        i++;
    }
    g->data1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16
               | (uint32_t)b[2] << 8 | b[3];
    g->data2 = (uint16_t)(b[4] << 8 | b[5]);
    g->data3 = (uint16_t)(b[6] << 8 | b[7]);
    memcpy(g->data4, b + 8, 8);
    return 0;
}

/* The importer's sscanf reading, on a NUL-terminated copy. */
static int
ua_text_guid_xml(const char *s, size_t n, struct ua_guid *g)
{
    char         t[37];
    unsigned int d[11];
    int          used = 0;

    if (n != 36 || memchr(s, '\0', n) != NULL)
        return -1;
    memcpy(t, s, 36);
    t[36] = '\0';
    if (sscanf(t, "%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x%n", &d[0], &d[1],
               &d[2], &d[3], &d[4], &d[5], &d[6], &d[7], &d[8], &d[9], &d[10],
               &used) != 11 || used != 36)
        return -1;
    g->data1 = d[0];
    g->data2 = (uint16_t)d[1];
    g->data3 = (uint16_t)d[2];
    for (int i = 0; i < 8; i++)
        g->data4[i] = (uint8_t)d[3 + i];
    return 0;
}

int
ua_text_guid_parse(const char *s, size_t n, enum ua_text_syntax syn,
                   struct ua_guid *g)
{
    return syn == UA_TEXT_XML ? ua_text_guid_xml(s, n, g)
                              : ua_text_guid_feed(s, n, g);
}

int
ua_text_guid_print(const struct ua_guid *g, char *buf, size_t cap)
{
    int k = snprintf(buf, cap,
                     "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                     (unsigned)g->data1, (unsigned)g->data2,
                     (unsigned)g->data3, g->data4[0], g->data4[1],
                     g->data4[2], g->data4[3], g->data4[4], g->data4[5],
                     g->data4[6], g->data4[7]);

    return k < 0 || (size_t)k >= cap ? -1 : k;
}

/* ------------------------------------------------------------ DateTime */

/*
 * RFC 3339: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm), up to 7
 * fraction digits (100 ns), year 1601..9999.  0 or -1.
 */
static int
ua_text_datetime_feed(const char *s, size_t n, int64_t *dt)
{
    static const int  w[6] = { 4, 2, 2, 2, 2, 2 };
    static const char sep[6] = { '-', '-', 'T', ':', ':', 0 };
    int               f[6] = { 0 };
    size_t            i = 0;
    int64_t           days, secs, frac = 0, off = 0;
    int               y, m, fd = 0;

    for (int k = 0; k < 6; k++) {
        for (int d = 0; d < w[k]; d++, i++) {
            if (i >= n || s[i] < '0' || s[i] > '9')
                return -1;
            f[k] = f[k] * 10 + (s[i] - '0');
        }
        if (sep[k] != 0) {
            if (i >= n || (s[i] != sep[k] && !(k == 2 && s[i] == ' ')))
                return -1;
            i++;
        }
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (fd < 7) {
                frac = frac * 10 + (s[i] - '0');
                fd++;
            }
            i++;
        }
        if (fd == 0)
            return -1;
        for (; fd < 7; fd++)
            frac *= 10;
    }
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':'
               && s[i + 1] >= '0' && s[i + 1] <= '9' && s[i + 2] >= '0'
               && s[i + 2] <= '9' && s[i + 4] >= '0' && s[i + 4] <= '9'
               && s[i + 5] >= '0' && s[i + 5] <= '9') {
        off = ((s[i + 1] - '0') * 10 + (s[i + 2] - '0')) * 3600
              + ((s[i + 4] - '0') * 10 + (s[i + 5] - '0')) * 60;
        if (s[i] == '-')
            off = -off;
        i += 6;
    } else {
        return -1;
    }
    if (i != n)
        return -1;
    y = f[0];
    m = f[1];
    if (y < 1601 || m < 1 || m > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23
        || f[4] > 59 || f[5] > 60)
        return -1;
    /* Days from 1970-01-01 (Howard Hinnant's days_from_civil). */
    {
        int      yy = y - (m <= 2);
        int      era = (yy >= 0 ? yy : yy - 399) / 400;
        unsigned yoe = (unsigned)(yy - era * 400);
        unsigned doy = (unsigned)((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5
                                  + f[2] - 1);
        unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

        days = (int64_t)era * 146097 + (int64_t)doe - 719468;
    }
    secs = days * 86400 + f[3] * 3600 + f[4] * 60 + f[5] - off;
    *dt = secs * 10000000 + frac + UA_DATETIME_UNIX_EPOCH;
    return 0;
}

/* The importer's sscanf reading, on a NUL-terminated copy. */
static int
ua_text_datetime_xml(const char *s, size_t n, int64_t *dt)
{
    char        t[UA_TEXT_XML_DATETIME_MAX + 1];
    struct tm   tm;
    int         y, mo, d, h, mi, used = 0;
    double      sec;
    int64_t     ticks;
    time_t      secs;
    const char *p;

    if (n > UA_TEXT_XML_DATETIME_MAX || memchr(s, '\0', n) != NULL)
        return -1;
    memcpy(t, s, n);
    t[n] = '\0';
    memset(&tm, 0, sizeof(tm));
    if (sscanf(t, "%d-%d-%dT%d:%d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &used)
        != 6 || y < 1601 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31
        || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec >= 61)
        return -1;
    p = t + used;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = 0;
    secs = timegm(&tm);
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om, n2 = 0;

        if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &n2) != 2)
            return -1;
        secs -= (*p == '+' ? 1 : -1) * (time_t)(oh * 3600 + om * 60);
        p += 1 + n2;
    }
    if (*p != '\0')
        return -1;
    ticks = (int64_t)secs * 10000000 + UA_DATETIME_UNIX_EPOCH
            + (int64_t)llround(sec * 1e7);
    *dt = ticks < 0 ? 0 : ticks;
    return 0;
}

int
ua_text_datetime_parse(const char *s, size_t n, enum ua_text_syntax syn,
                       int64_t *dt)
{
    return syn == UA_TEXT_XML ? ua_text_datetime_xml(s, n, dt)
                              : ua_text_datetime_feed(s, n, dt);
}

int
ua_text_datetime_print(int64_t dt, char *buf, size_t cap)
{
    int64_t   secs, frac;
    time_t    t;
    struct tm tm;
    int       k;

    /* Keep dt - epoch - 9999999 inside int64_t. */
    if (dt < INT64_MIN + UA_DATETIME_UNIX_EPOCH + 10000000) {
        if (cap > 0)
            buf[0] = '\0';
        return -1;
    }
    dt -= UA_DATETIME_UNIX_EPOCH;
    secs = dt >= 0 ? dt / 10000000 : (dt - 9999999) / 10000000;
    frac = dt - secs * 10000000;
    t = (time_t)secs;
    if (gmtime_r(&t, &tm) == NULL) {
        if (cap > 0)
            buf[0] = '\0';
        return -1;
    }
    k = snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%07lldZ",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec, (long long)frac);
    return k < 0 || (size_t)k >= cap ? -1 : k;
}
