/*
 * hist/sample.c: a historized value split from its DataValue, packed into
 * a block, unpacked and written back as a DataValue (the format is in
 * hist/sample.h).
 *
 * Invariants: a packed sample's body is at least the mask byte, the mask
 * has no time bits; times are never negative; a block's samples never go
 * back in time.  Unpacking trusts nothing: a store can be damaged, so
 * every length is checked against the end of the block.
 *
 * Pure: no I/O, no clock, no globals.
 */
#include "sample.h"

#include <errno.h>
#include <string.h>

static uint8_t *hs_sample_varint_put(uint8_t *p, uint64_t v);
static size_t hs_sample_varint_size(uint64_t v);
static int hs_sample_varint_get(const uint8_t **p, const uint8_t *end,
                                uint64_t *v);
static uint64_t hs_sample_zigzag(int64_t v);
static int64_t hs_sample_unzigzag(uint64_t v);
static int64_t hs_sample_le64(const uint8_t *p);
static void hs_sample_le64_put(uint8_t *p, int64_t v);

static uint8_t *
hs_sample_varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t
hs_sample_varint_size(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static int
hs_sample_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    uint64_t       r = 0;
    unsigned       shift = 0;

    for (;;) {
        if (q == end || shift > 63)
            return -EINVAL;
        r |= (uint64_t)(*q & 0x7F) << shift;
        if (!(*q++ & 0x80))
            break;
        shift += 7;
    }
    *p = q;
    *v = r;
    return 0;
}

static uint64_t
hs_sample_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t
hs_sample_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int64_t
hs_sample_le64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static void
hs_sample_le64_put(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;

    for (int i = 0; i < 8; i++, u >>= 8)
        p[i] = (uint8_t)u;
}

int
hs_sample_split(const uint8_t *dv, size_t len, struct hs_sample *s)
{
    uint8_t m;
    size_t  end;

    if (len < 1)
        return -EINVAL;
    m = dv[0];
    if (m & 0xC0)
        return -EINVAL;
    if (!(m & (HS_DV_SOURCE_TS | HS_DV_SERVER_TS)))
        return -EINVAL;
    end = len;
    memset(s, 0, sizeof(*s));
    if (m & HS_DV_SERVER_PS) {
        if (end < 1 + 2)
            return -EINVAL;
        end -= 2;
        s->srv_ps = (uint16_t)(dv[end] | dv[end + 1] << 8);
    }
    if (m & HS_DV_SERVER_TS) {
        if (end < 1 + 8)
            return -EINVAL;
        end -= 8;
        s->srv = hs_sample_le64(dv + end);
        s->has_srv = true;
        if (s->srv < 0)
            return -EINVAL;
    }
    if (m & HS_DV_SOURCE_PS) {
        if (end < 1 + 2)
            return -EINVAL;
        end -= 2;
        s->src_ps = (uint16_t)(dv[end] | dv[end + 1] << 8);
    }
    if (m & HS_DV_SOURCE_TS) {
        if (end < 1 + 8)
            return -EINVAL;
        end -= 8;
        s->t = hs_sample_le64(dv + end);
        s->has_src = true;
        if (s->t < 0)
            return -EINVAL;
    } else {
        s->t = s->srv;
    }
    if (end > HS_BODY_MAX)
        return -EINVAL;
    s->body = dv;
    s->body_len = (uint32_t)end;
    return 0;
}

size_t
hs_sample_dv_size(const struct hs_sample *s, enum hs_ts ts)
{
    size_t n = s->body_len;

    if (s->has_src && (ts == HS_TS_SOURCE || ts == HS_TS_BOTH))
        n += 8 + (s->src_ps ? 2 : 0);
    if (s->has_srv && (ts == HS_TS_SERVER || ts == HS_TS_BOTH))
        n += 8 + (s->srv_ps ? 2 : 0);
    return n;
}

size_t
hs_sample_dv_write(const struct hs_sample *s, enum hs_ts ts, uint8_t *buf,
                   size_t cap)
{
    size_t  n = hs_sample_dv_size(s, ts);
    uint8_t m = (uint8_t)(s->body[0] & ~HS_DV_TIMES);
    uint8_t *p;

    if (n > cap)
        return 0;
    memcpy(buf, s->body, s->body_len);
    p = buf + s->body_len;
    if (s->has_src && (ts == HS_TS_SOURCE || ts == HS_TS_BOTH)) {
        m |= HS_DV_SOURCE_TS;
        hs_sample_le64_put(p, s->t);
        p += 8;
        if (s->src_ps) {
            m |= HS_DV_SOURCE_PS;
            p[0] = (uint8_t)s->src_ps;
            p[1] = (uint8_t)(s->src_ps >> 8);
            p += 2;
        }
    }
    if (s->has_srv && (ts == HS_TS_SERVER || ts == HS_TS_BOTH)) {
        m |= HS_DV_SERVER_TS;
        hs_sample_le64_put(p, s->srv);
        p += 8;
        if (s->srv_ps) {
            m |= HS_DV_SERVER_PS;
            p[0] = (uint8_t)s->srv_ps;
            p[1] = (uint8_t)(s->srv_ps >> 8);
        }
    }
    buf[0] = m;
    return n;
}

uint32_t
hs_sample_status(const struct hs_sample *s)
{
    /* The status is the 4 bytes before the timestamps, which the body
     * ends with. */
    const uint8_t *p;

    if (!(s->body[0] & HS_DV_STATUS) || s->body_len < 5)
        return 0;
    p = s->body + s->body_len - 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

size_t
hs_sample_packed_size(const struct hs_sample *s, int64_t prev)
{
    size_t n = hs_sample_varint_size((uint64_t)(s->t - prev))
               + hs_sample_varint_size((uint64_t)(s->body_len - 1) << 3)
               + s->body_len;

    if (s->has_src && s->has_srv && s->srv != s->t)
        n += hs_sample_varint_size(hs_sample_zigzag(s->srv - s->t));
    if (s->src_ps || s->srv_ps)
        n += 1 + (s->src_ps ? 2 : 0) + (s->srv_ps ? 2 : 0);
    return n;
}

uint8_t *
hs_sample_pack(const struct hs_sample *s, int64_t prev, uint8_t *p)
{
    unsigned f = HS_SF_SAME;

    if (!s->has_src)
        f = HS_SF_SRV_ONLY;
    else if (!s->has_srv)
        f = HS_SF_SRC_ONLY;
    else if (s->srv != s->t)
        f = HS_SF_DELTA;
    if (s->src_ps || s->srv_ps)
        f |= HS_SF_PS;
    p = hs_sample_varint_put(p, (uint64_t)(s->t - prev));
    p = hs_sample_varint_put(p, (uint64_t)(s->body_len - 1) << 3 | f);
    if ((f & HS_SF_FORM) == HS_SF_DELTA)
        p = hs_sample_varint_put(p, hs_sample_zigzag(s->srv - s->t));
    if (f & HS_SF_PS) {
        *p++ = (uint8_t)((s->src_ps ? 1 : 0) | (s->srv_ps ? 2 : 0));
        if (s->src_ps) {
            *p++ = (uint8_t)s->src_ps;
            *p++ = (uint8_t)(s->src_ps >> 8);
        }
        if (s->srv_ps) {
            *p++ = (uint8_t)s->srv_ps;
            *p++ = (uint8_t)(s->srv_ps >> 8);
        }
    }
    memcpy(p, s->body, s->body_len);
    /* The mask as stored carries no time bits. */
    *p &= (uint8_t)~HS_DV_TIMES;
    return p + s->body_len;
}

int
hs_sample_unpack(const uint8_t **pp, const uint8_t *end, int64_t prev,
                 struct hs_sample *s)
{
    const uint8_t *p = *pp;
    uint64_t       dt, lf, d;
    unsigned       f;

    if (hs_sample_varint_get(&p, end, &dt) != 0 || dt > (uint64_t)INT64_MAX
        || (int64_t)dt > INT64_MAX - prev
        || hs_sample_varint_get(&p, end, &lf) != 0)
        return -EINVAL;
    f = (unsigned)(lf & 0x07);
    lf = (lf >> 3) + 1;
    if (lf > HS_BODY_MAX)
        return -EINVAL;
    s->t = prev + (int64_t)dt;
    s->has_src = (f & HS_SF_FORM) != HS_SF_SRV_ONLY;
    s->has_srv = (f & HS_SF_FORM) != HS_SF_SRC_ONLY;
    s->srv = s->t;
    if ((f & HS_SF_FORM) == HS_SF_DELTA) {
        if (hs_sample_varint_get(&p, end, &d) != 0)
            return -EINVAL;
        s->srv = s->t + hs_sample_unzigzag(d);
    }
    s->src_ps = s->srv_ps = 0;
    if (f & HS_SF_PS) {
        unsigned w;

        if (p == end)
            return -EINVAL;
        w = *p++;
        if ((size_t)(end - p) < ((w & 1) ? 2u : 0u) + ((w & 2) ? 2u : 0u))
            return -EINVAL;
        if (w & 1) {
            s->src_ps = (uint16_t)(p[0] | p[1] << 8);
            p += 2;
        }
        if (w & 2) {
            s->srv_ps = (uint16_t)(p[0] | p[1] << 8);
            p += 2;
        }
    }
    if ((uint64_t)(end - p) < lf)
        return -EINVAL;
    s->body = p;
    s->body_len = (uint32_t)lf;
    *pp = p + lf;
    return 0;
}

void
hs_block_hdr_set(uint8_t *b, uint32_t count, int64_t last)
{
    b[0] = (uint8_t)count;
    b[1] = (uint8_t)(count >> 8);
    b[2] = (uint8_t)(count >> 16);
    b[3] = (uint8_t)(count >> 24);
    hs_sample_le64_put(b + 4, last);
}

int
hs_block_check(const uint8_t *b, size_t len, int64_t first)
{
    const uint8_t   *p, *end = b + len;
    struct hs_sample s;
    int64_t          prev = first;
    uint32_t         n = 0;

    if (len < HS_BLOCK_HDR)
        return -EINVAL;
    p = b + HS_BLOCK_HDR;
    while (p < end) {
        if (hs_sample_unpack(&p, end, prev, &s) != 0)
            return -EINVAL;
        if (n == 0 && s.t != first)
            return -EINVAL;
        prev = s.t;
        n++;
    }
    if (n == 0 || n != hs_block_count(b) || prev != hs_block_last(b))
        return -EINVAL;
    return 0;
}
