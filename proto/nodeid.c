/*
 * proto/nodeid.c: NodeId forms outside the codec (nodeid.h): the small
 * binary forms of ns=0 numeric ids and the feed's text form.
 *
 * The wire is little-endian; the binary helpers write it byte by byte, so
 * they hold on any host.  Pure functions: safe from any thread.
 */
#include "nodeid.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "status_gen.h"
#include "text.h"

static int ua_nodeid_put(char *buf, size_t cap, size_t *k, const char *s,
                         size_t n);

/* ------------------------------------------------------------ binary */

ua_status
ua_nodeid_ns0_get(const uint8_t *p, size_t n, size_t *used, uint32_t *id)
{
    if (n < 2)
        return UA_BAD_DECODING_ERROR;
    switch (p[0]) {
    case 0x00:
        *id = p[1];
        *used = 2;
        return UA_GOOD;
    case 0x01:
        if (n < 4 || p[1] != 0)
            return UA_BAD_DECODING_ERROR;
        *id = (uint32_t)p[2] | (uint32_t)p[3] << 8;
        *used = 4;
        return UA_GOOD;
    case 0x02:
        if (n < 7 || p[1] != 0 || p[2] != 0)
            return UA_BAD_DECODING_ERROR;
        *id = (uint32_t)p[3] | (uint32_t)p[4] << 8 | (uint32_t)p[5] << 16
              | (uint32_t)p[6] << 24;
        *used = 7;
        return UA_GOOD;
    default:
        return UA_BAD_DECODING_ERROR;
    }
}

/* ------------------------------------------------------------ text */

ua_status
ua_nodeid_parse(const char *s, size_t n, char stop, struct ua_arena *a,
                struct ua_nodeid *id, size_t *used)
{
    const char *p = s, *end = s + n, *start;
    uint64_t    v = 0;
    char        t;

    memset(id, 0, sizeof(*id));
    if (end - p >= 3 && memcmp(p, "ns=", 3) == 0) {
        p += 3;
        start = p;
        while (p < end && *p >= '0' && *p <= '9' && v <= 65535)
            v = v * 10 + (uint64_t)(*p++ - '0');
        if (p == start || v > 65535 || p >= end || *p != ';')
            return UA_BAD_NODE_ID_INVALID;
        id->ns = (uint16_t)v;
        p++;
    }
    if (end - p < 2 || p[1] != '=')
        return UA_BAD_NODE_ID_INVALID;
    t = p[0];
    p += 2;
    start = p;
    switch (t) {
    case 'i':
        v = 0;
        while (p < end && *p >= '0' && *p <= '9' && v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(*p++ - '0');
        if (p == start || v > UINT32_MAX)
            return UA_BAD_NODE_ID_INVALID;
        id->idtype = UA_IDTYPE_NUMERIC;
        id->id.num = (uint32_t)v;
        break;
    case 's':
        while (p < end && !(stop != 0 && *p == stop))
            p++;
        if (p == start)
            return UA_BAD_NODE_ID_INVALID;
        id->idtype = UA_IDTYPE_STRING;
        id->id.str.len = (int32_t)(p - start);
        id->id.str.data = (uint8_t *)(uintptr_t)start;
        break;
    case 'g':
        if (end - p < 36
            || ua_text_guid_parse(p, 36, UA_TEXT_FEED, &id->id.guid) != 0)
            return UA_BAD_NODE_ID_INVALID;
        id->idtype = UA_IDTYPE_GUID;
        p += 36;
        break;
    case 'b': {
        size_t   k, olen;
        uint8_t *out;

        while (p < end && ua_text_b64_value((unsigned char)*p) >= 0)
            p++;
        while (p < end && *p == '=' && (p - start) % 4 != 0)
            p++;                        /* padding, not the separator */
        k = (size_t)(p - start);
        if (k == 0 || (out = ua_arena_alloc(a, k)) == NULL
            || ua_text_b64_decode(start, k, UA_TEXT_FEED, out, &olen) != 0)
            return UA_BAD_NODE_ID_INVALID;
        id->idtype = UA_IDTYPE_OPAQUE;
        id->id.str.len = (int32_t)olen;
        id->id.str.data = out;
        break;
    }
    default:
        return UA_BAD_NODE_ID_INVALID;
    }
    *used = (size_t)(p - s);
    return UA_GOOD;
}

/* Append s[n] at buf[*k] with room for a NUL: 0, or -1. */
static int
ua_nodeid_put(char *buf, size_t cap, size_t *k, const char *s, size_t n)
{
    if (*k >= cap || n >= cap - *k)
        return -1;
    if (n != 0)
        memcpy(buf + *k, s, n);
    *k += n;
    buf[*k] = '\0';
    return 0;
}

int
ua_nodeid_print(const struct ua_nodeid *id, char *buf, size_t cap)
{
    char   tmp[24];
    size_t k = 0;
    int    w;

    if (cap == 0)
        return -1;
    buf[0] = '\0';
    if (id->ns != 0) {
        w = snprintf(tmp, sizeof(tmp), "ns=%u;", (unsigned)id->ns);
        if (ua_nodeid_put(buf, cap, &k, tmp, (size_t)w) != 0)
            goto full;
    }
    switch (id->idtype) {
    case UA_IDTYPE_NUMERIC:
        w = snprintf(tmp, sizeof(tmp), "i=%u", (unsigned)id->id.num);
        if (ua_nodeid_put(buf, cap, &k, tmp, (size_t)w) != 0)
            goto full;
        break;
    case UA_IDTYPE_STRING:
        if (ua_nodeid_put(buf, cap, &k, "s=", 2) != 0
            || ua_nodeid_put(buf, cap, &k, (const char *)id->id.str.data,
                             id->id.str.len > 0 ? (size_t)id->id.str.len
                                                : 0) != 0)
            goto full;
        break;
    case UA_IDTYPE_GUID:
        if (ua_nodeid_put(buf, cap, &k, "g=", 2) != 0
            || ua_text_guid_print(&id->id.guid, buf + k, cap - k) < 0)
            goto full;
        k += 36;
        break;
    default:
        if (ua_nodeid_put(buf, cap, &k, "b=", 2) != 0
            || (w = ua_text_b64_encode(id->id.str.data,
                                       id->id.str.len > 0
                                           ? (size_t)id->id.str.len : 0,
                                       buf + k, cap - k)) < 0)
            goto full;
        k += (size_t)w;
        break;
    }
    return (int)k;
full:
    buf[0] = '\0';
    return -1;
}
