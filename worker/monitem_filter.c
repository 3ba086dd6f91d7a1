/*
 * worker/monitem_filter.c: what a monitored item decides about one value
 * (Part 4 §7.22.2 DataChangeFilter, §7.10 DataChangeTrigger) and how a
 * queued value is shaped for the client (timestampsToReturn, the
 * Overflow InfoBits), without decoding anything but the numbers a
 * deadband needs.
 *
 * A DataValue (Part 6 §5.2.2.17) is mask, [Variant], [status 4], [source
 * ts 8][source ps 2], [server ts 8][server ps 2]: everything after the
 * Variant has a size the mask tells, so the Variant's end is found from
 * the tail and never walked.
 *
 * Value comparison (DataChangeTrigger StatusValue): Variants up to 15
 * bytes (every scalar number with its type byte) are kept and compared
 * as bytes; longer ones by a keyed SipHash-2-4 (a per-worker random key):
 * 8 bytes per item whatever the value's size, and no writer can choose
 * two different values that look equal.
 *
 * Pure functions of their arguments and the item; no allocation (an
 * array deadband keeps its reference array in cells).
 */
#include <math.h>
#include <string.h>

#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "sub_int.h"

static uint64_t wk_mi_siphash(const uint64_t key[2], const uint8_t *p,
                              size_t n);
static bool wk_mi_lastv_eq(const struct wk_mi *mi, const struct wk_rec *r);
static uint32_t wk_mi_num_size(uint8_t t);
static bool wk_mi_numbers(const uint8_t *v, uint32_t vl, uint8_t *type,
                          bool *array, int32_t *n, const uint8_t **el);
static double wk_mi_number(uint8_t type, const uint8_t *p);
static bool wk_mi_exceeds(double last, double now, double db);
static bool wk_mi_db_changed(struct wk_subs *st, const struct wk_mi *mi,
                             const struct wk_rec *r);

/* ------------------------------------------------------------------ */
/* records                                                             */
/* ------------------------------------------------------------------ */

static inline uint32_t
wk_mi_u32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);               /* little-endian host (proto/codec.c) */
    return v;
}

static inline int64_t
wk_mi_i64(const uint8_t *p)
{
    int64_t v;

    memcpy(&v, p, 8);
    return v;
}

/*
 * Take an encoded DataValue apart from its tail: mask, [Variant], [status
 * 4], [source ts 8][source ps 2], [server ts 8][server ps 2].  False when
 * the bytes cannot be one (the record is skipped).
 */
bool
wk_mi_parse(const struct wk_subs *st, const uint8_t *p, uint32_t len,
            struct wk_rec *r)
{
    uint8_t  m;
    uint32_t tail, off;

    if (len < 1)
        return false;
    m = p[0];
    r->p = p;
    r->len = len;
    r->mask = m;
    r->st_len = (m & UA_DV_STATUS) ? 4 : 0;
    r->src_len = ((m & UA_DV_SOURCE_TS) ? 8 : 0)
                 + ((m & UA_DV_SOURCE_PS) ? 2 : 0);
    r->srv_len = ((m & UA_DV_SERVER_TS) ? 8 : 0)
                 + ((m & UA_DV_SERVER_PS) ? 2 : 0);
    tail = r->st_len + r->src_len + r->srv_len;
    if (tail >= len)
        return false;
    r->vend = len - tail;
    if ((m & UA_DV_VALUE) ? r->vend < 2 : r->vend != 1)
        return false;
    off = r->vend;
    r->status = r->st_len ? wk_mi_u32(p + off) : UA_GOOD;
    off += r->st_len;
    r->src_off = off;
    r->src_ts = (m & UA_DV_SOURCE_TS) ? wk_mi_i64(p + off) : 0;
    off += r->src_len;
    r->srv_off = off;
    r->srv_ts = (m & UA_DV_SERVER_TS) ? wk_mi_i64(p + off) : 0;
    /* The key: up to 15 bytes of Variant as they are, longer ones by
     * their keyed hash (struct wk_mi.lastv). */
    {
        uint8_t  k[16] = { 0 };
        uint32_t vl = r->vend - 1;

        if (vl <= sizeof(k) - 1) {
            k[0] = (uint8_t)vl;
            memcpy(k + 1, p + 1, vl);
        } else {
            uint64_t h = wk_mi_siphash(st->key, p + 1, vl);

            k[0] = WK_MI_LASTV_HASH;
            memcpy(k + 8, &h, 8);
        }
        memcpy(r->key, k, sizeof(k));
    }
    return true;
}

/*
 * Shape the DataValue d[len] for the client in place: drop the timestamp
 * groups timestampsToReturn does not want (mask bits off, bytes closed
 * up) and, for a value after a loss, set the Overflow InfoBits
 * (InfoType DataValue 0x400 | Overflow 0x80, Part 4 §5.12.1.5, §7.39) in
 * its status, inserting a status (Good + bits) when it had none.
 */
uint32_t
wk_mi_shape(uint8_t *d, uint32_t len, uint32_t vend, uint8_t ttr, bool ovf)
{
    uint8_t  m = d[0];
    bool     src = ttr == UA_TIMESTAMPSTORETURN_SOURCE
                   || ttr == UA_TIMESTAMPSTORETURN_BOTH;
    bool     srv = ttr == UA_TIMESTAMPSTORETURN_SERVER
                   || ttr == UA_TIMESTAMPSTORETURN_BOTH;
    uint32_t st_len = (m & UA_DV_STATUS) ? 4 : 0;
    uint32_t src_len = ((m & UA_DV_SOURCE_TS) ? 8 : 0)
                       + ((m & UA_DV_SOURCE_PS) ? 2 : 0);
    uint32_t srv_len = ((m & UA_DV_SERVER_TS) ? 8 : 0)
                       + ((m & UA_DV_SERVER_PS) ? 2 : 0);
    uint32_t src_off = vend + st_len, srv_off = src_off + src_len, n;

    if (srv_off + srv_len != len)
        return len;                 /* not what we made: leave it */
    n = src_off;
    if (src) {
        n += src_len;
    } else {
        m &= (uint8_t)~(UA_DV_SOURCE_TS | UA_DV_SOURCE_PS);
    }
    if (srv) {
        if (n != srv_off)
            memmove(d + n, d + srv_off, srv_len);
        n += srv_len;
    } else {
        m &= (uint8_t)~(UA_DV_SERVER_TS | UA_DV_SERVER_PS);
    }
    if (ovf) {
        uint32_t s32;

        if (m & UA_DV_STATUS) {
            s32 = wk_mi_u32(d + vend) | WK_OVERFLOW_BITS;
        } else {
            memmove(d + vend + 4, d + vend, n - vend);
            s32 = WK_OVERFLOW_BITS;
            m |= UA_DV_STATUS;
            n += 4;
        }
        memcpy(d + vend, &s32, 4);
    }
    d[0] = m;
    return n;
}

/* ------------------------------------------------------------------ */
/* filter                                                              */
/* ------------------------------------------------------------------ */

#define WK_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define WK_SIPROUND                                                        \
    do {                                                                   \
        v0 += v1; v1 = WK_ROTL64(v1, 13); v1 ^= v0;                        \
        v0 = WK_ROTL64(v0, 32);                                            \
        v2 += v3; v3 = WK_ROTL64(v3, 16); v3 ^= v2;                        \
        v0 += v3; v3 = WK_ROTL64(v3, 21); v3 ^= v0;                        \
        v2 += v1; v1 = WK_ROTL64(v1, 17); v1 ^= v2;                        \
        v2 = WK_ROTL64(v2, 32);                                            \
    } while (0)

/*
 * SipHash-2-4 of p[n] under a per-worker random key: values longer than
 * 15 bytes are compared by it, and nobody who writes values can make two
 * different ones collide on purpose.
 */
static uint64_t
wk_mi_siphash(const uint64_t key[2], const uint8_t *p, size_t n)
{
    uint64_t v0 = key[0] ^ UINT64_C(0x736f6d6570736575);
    uint64_t v1 = key[1] ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = key[0] ^ UINT64_C(0x6c7967656e657261);
    uint64_t v3 = key[1] ^ UINT64_C(0x7465646279746573);
    uint64_t m, b = (uint64_t)n << 56;
    size_t   i;

    for (i = 0; i + 8 <= n; i += 8) {
        memcpy(&m, p + i, 8);
        v3 ^= m;
        WK_SIPROUND;
        WK_SIPROUND;
        v0 ^= m;
    }
    for (size_t k = 0; i + k < n; k++)
        b |= (uint64_t)p[i + k] << (8 * k);
    v3 ^= b;
    WK_SIPROUND;
    WK_SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    WK_SIPROUND;
    WK_SIPROUND;
    WK_SIPROUND;
    WK_SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* Is r's Variant the one mi took last?  Two words, whatever its size. */
static bool
wk_mi_lastv_eq(const struct wk_mi *mi, const struct wk_rec *r)
{
    uint64_t k[2];

    memcpy(k, mi->lastv, sizeof(k));
    return k[0] == r->key[0] && k[1] == r->key[1];
}

/* Bytes of one element of the Number built-ins (Part 6 §5.1.2), else 0. */
static uint32_t
wk_mi_num_size(uint8_t t)
{
    switch (t) {
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
        return 1;
    case UA_BT_INT16:
    case UA_BT_UINT16:
        return 2;
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_FLOAT:
        return 4;
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_DOUBLE:
        return 8;
    default:
        return 0;
    }
}

/*
 * The numbers of an encoded Variant v[vl] (Part 6 §5.2.2.16): a scalar or
 * an array of a Number built-in.  False for anything else.
 */
static bool
wk_mi_numbers(const uint8_t *v, uint32_t vl, uint8_t *type, bool *array,
              int32_t *n, const uint8_t **el)
{
    uint8_t  t;
    uint32_t esz;
    int32_t  cnt;

    if (vl < 1)
        return false;
    t = v[0] & 0x3F;
    esz = wk_mi_num_size(t);
    if (esz == 0)
        return false;
    *type = t;
    *array = (v[0] & 0x80) != 0;
    if (!*array) {
        if (vl < 1 + esz)
            return false;
        *n = 1;
        *el = v + 1;
        return true;
    }
    if (vl < 5)
        return false;
    memcpy(&cnt, v + 1, 4);
    if (cnt < 0)
        cnt = 0;                    /* null array: no elements */
    if ((uint64_t)cnt * esz > vl - 5)
        return false;
    *n = cnt;
    *el = v + 5;
    return true;
}

static double
wk_mi_number(uint8_t type, const uint8_t *p)
{
    union {
        int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32;
        uint32_t u32; int64_t i64; uint64_t u64; float f; double d;
    } u;

    memcpy(&u, p, wk_mi_num_size(type));
    switch (type) {
    case UA_BT_SBYTE:  return u.i8;
    case UA_BT_BYTE:   return u.u8;
    case UA_BT_INT16:  return u.i16;
    case UA_BT_UINT16: return u.u16;
    case UA_BT_INT32:  return u.i32;
    case UA_BT_UINT32: return u.u32;
    case UA_BT_INT64:  return (double)u.i64;
    case UA_BT_UINT64: return (double)u.u64;
    case UA_BT_FLOAT:  return u.f;
    default:           return u.d;
    }
}

/*
 * Part 4 §7.22.2: a change passes an (absolute) deadband db when
 * |last - now| > db.  DataChangeTrigger (§7.10): a value entering or
 * leaving NaN is a change, NaN to NaN is not.
 */
static bool
wk_mi_exceeds(double last, double now, double db)
{
    if (isnan(last) || isnan(now))
        return isnan(last) != isnan(now);
    return fabs(last - now) > db;
}

/* Does v[vl] leave mi's deadband around the last reported value? */
static bool
wk_mi_db_changed(struct wk_subs *st, const struct wk_mi *mi,
                 const struct wk_rec *r)
{
    const uint8_t *v = r->p + 1;
    uint32_t       vl = r->vend - 1;
    const uint8_t *el, *rel;
    uint8_t        t, rt;
    bool           arr, rarr;
    int32_t        n, rn;
    uint32_t       esz, rlen;

    if (!wk_mi_numbers(v, vl, &t, &arr, &n, &el))
        return !wk_mi_lastv_eq(mi, r);      /* not a number */
    if (!arr) {
        if (mi->flags & WK_MI_LAST_REF)
            return true;            /* was an array */
        return wk_mi_exceeds(mi->last.num, wk_mi_number(t, el),
                             mi->deadband);
    }
    if (!(mi->flags & WK_MI_LAST_REF))
        return true;
    /* The reference array: its Variant bytes after a 4-byte length. */
    wk_cells_get(&st->cells, mi->last.ref, 0, &rlen, 4);
    if (rlen > st->tmp_cap || rlen != vl)
        return true;                /* size changed */
    wk_cells_get(&st->cells, mi->last.ref, 4, st->tmp, rlen);
    if (!wk_mi_numbers(st->tmp, rlen, &rt, &rarr, &rn, &rel) || rt != t
        || !rarr || rn != n || memcmp(st->tmp, v, 5) != 0)
        return true;
    esz = wk_mi_num_size(t);
    for (int32_t k = 0; k < n; k++)
        if (wk_mi_exceeds(wk_mi_number(t, rel + (size_t)k * esz),
                          wk_mi_number(t, el + (size_t)k * esz),
                          mi->deadband))
            return true;
    /* Same shape: ArrayDimensions (after the elements) must match too. */
    return memcmp(st->tmp + 5 + (size_t)n * esz, v + 5 + (size_t)n * esz,
                  vl - 5 - (size_t)n * esz) != 0;
}

/* The DataChangeFilter of mi on r (Part 4 §7.22.2, §7.10). */
bool
wk_mi_passes(struct wk_subs *st, const struct wk_mi *mi,
             const struct wk_rec *r)
{
    if (!(mi->flags & WK_MI_HAS_LAST))
        return true;
    if (r->status != mi->last_status)
        return true;                /* a deadband is ignored then */
    if (mi->trigger == UA_DATACHANGETRIGGER_STATUS)
        return false;
    if (mi->dbtype != UA_DEADBANDTYPE_NONE)
        return wk_mi_db_changed(st, mi, r);
    if (!wk_mi_lastv_eq(mi, r))
        return true;
    return mi->trigger == UA_DATACHANGETRIGGER_STATUSVALUETIMESTAMP
           && r->src_ts != mi->last.src_ts;
}

/* r passed: it is what the next change is compared with. */
void
wk_mi_remember(struct wk_subs *st, struct wk_mi *mi, const struct wk_rec *r)
{
    const uint8_t *v = r->p + 1, *el;
    uint32_t       vl = r->vend - 1, len;
    uint8_t        t;
    bool           arr;
    int32_t        n;

    memcpy(mi->lastv, r->key, sizeof(mi->lastv));
    mi->last_status = r->status;
    mi->flags |= WK_MI_HAS_LAST;
    if (mi->dbtype == UA_DEADBANDTYPE_NONE) {
        if (mi->trigger == UA_DATACHANGETRIGGER_STATUSVALUETIMESTAMP)
            mi->last.src_ts = r->src_ts;    /* (line 2: only then) */
        return;
    }
    if (mi->flags & WK_MI_LAST_REF) {
        wk_cells_free(&st->cells, mi->last.ref);
        mi->flags &= (uint16_t)~WK_MI_LAST_REF;
    }
    mi->last.num = NAN;
    if (!wk_mi_numbers(v, vl, &t, &arr, &n, &el))
        return;
    if (!arr) {
        mi->last.num = wk_mi_number(t, el);
        return;
    }
    len = vl;
    mi->last.ref = wk_cells_put(&st->cells, &len, 4, v, vl);
    if (mi->last.ref != WK_NIL)
        mi->flags |= WK_MI_LAST_REF;
    /* No room: no reference, so the next array counts as a change. */
}
