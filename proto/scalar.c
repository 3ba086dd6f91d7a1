/*
 * proto/scalar.c: comparable views of encoded scalars (scalar.h).
 *
 * The fixed-size types are read by their row of ua_builtin[] (class and
 * encoded size); strings, LocalizedTexts, QualifiedNames and NodeIds by
 * their encodings (Part 6 §5.2.2).  Every length is checked against the
 * bytes left before it is used.  The wire is little-endian, and so is
 * every host we build for (proto/codec.c checks it too).
 */
#include "scalar.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "proto/scalar.c assumes a little-endian host"
#endif

static bool ua_scalar_view_of(uint8_t t, const uint8_t *v, size_t n,
                              struct ua_scalar *out);
static bool ua_scalar_isnum(const struct ua_scalar *a);

/* v[n] after the encoding byte, type t; out is zeroed with bt set. */
static bool
ua_scalar_view_of(uint8_t t, const uint8_t *v, size_t n,
                  struct ua_scalar *out)
{
    const struct ua_builtin_type *d = &ua_builtin[t];
    int32_t                       l;

    if (n < d->size)
        return false;
    switch (d->cls) {
    case UA_BTC_BOOLEAN:
        if (n < 1)
            return false;
        out->u.b = v[0] != 0;
        break;
    case UA_BTC_SIGNED:
        switch (d->size) {
        case 1: { int8_t x; memcpy(&x, v, 1); out->u.i = x; break; }
        case 2: { int16_t x; memcpy(&x, v, 2); out->u.i = x; break; }
        case 4: { int32_t x; memcpy(&x, v, 4); out->u.i = x; break; }
        default: memcpy(&out->u.i, v, 8); break;
        }
        break;
    case UA_BTC_UNSIGNED:
        switch (d->size) {
        case 1: out->u.u = v[0]; break;
        case 2: { uint16_t x; memcpy(&x, v, 2); out->u.u = x; break; }
        case 4: { uint32_t x; memcpy(&x, v, 4); out->u.u = x; break; }
        default: memcpy(&out->u.u, v, 8); break;
        }
        break;
    case UA_BTC_REAL:
        if (d->size == 4) {
            float f;

            memcpy(&f, v, 4);
            out->u.d = f;
        } else {
            memcpy(&out->u.d, v, 8);
        }
        break;
    case UA_BTC_GUID:
        out->p = v;
        out->n = 16;
        break;
    case UA_BTC_STRING:
        if (t == UA_BT_LOCALIZEDTEXT) {
            size_t off = 1;

            if (n < 1)
                return false;
            if (v[0] & UA_LT_LOCALE) {          /* skip the locale */
                if (n < off + 4)
                    return false;
                memcpy(&l, v + off, 4);
                off += 4 + (l > 0 ? (size_t)l : 0);
                if (off > n)
                    return false;
            }
            out->p = v + off;
            out->n = 0;
            if (v[0] & UA_LT_TEXT) {
                if (n - off < 4)
                    return false;
                memcpy(&l, v + off, 4);
                if (l < 0)
                    l = 0;
                if ((size_t)l > n - off - 4)
                    return false;
                out->p = v + off + 4;
                out->n = (uint32_t)l;
            }
            break;
        }
        if (t == UA_BT_QUALIFIEDNAME) {
            if (n < 6)
                return false;
            memcpy(&out->ns, v, 2);
            v += 2;
            n -= 2;
        }
        if (n < 4)
            return false;
        memcpy(&l, v, 4);
        if (l < 0)
            l = 0;                              /* null: empty */
        if ((size_t)l > n - 4)
            return false;
        out->p = v + 4;
        out->n = (uint32_t)l;
        break;
    case UA_BTC_NODEID: {
        uint8_t  enc;
        uint16_t ns;
        uint32_t num;

        if (n < 1)
            return false;
        enc = v[0];
        if (t == UA_BT_EXPANDEDNODEID && (enc & 0xC0) != 0)
            return false;           /* with a URI / server: not compared */
        out->bt = UA_BT_NODEID;
        switch (enc & 0x3F) {
        case 0x00:                  /* TwoByte */
            if (n < 2)
                return false;
            out->idt = UA_IDTYPE_NUMERIC;
            out->u.u = v[1];
            break;
        case 0x01:                  /* FourByte */
            if (n < 4)
                return false;
            out->idt = UA_IDTYPE_NUMERIC;
            out->ns = v[1];
            memcpy(&ns, v + 2, 2);
            out->u.u = ns;
            break;
        case 0x02:                  /* Numeric */
            if (n < 7)
                return false;
            out->idt = UA_IDTYPE_NUMERIC;
            memcpy(&out->ns, v + 1, 2);
            memcpy(&num, v + 3, 4);
            out->u.u = num;
            break;
        case 0x04:                  /* Guid */
            if (n < 19)
                return false;
            out->idt = UA_IDTYPE_GUID;
            memcpy(&out->ns, v + 1, 2);
            out->p = v + 3;
            out->n = 16;
            break;
        case 0x03:                  /* String */
        case 0x05:                  /* ByteString */
            if (n < 7)
                return false;
            out->idt = (enc & 0x3F) == 0x03 ? UA_IDTYPE_STRING
                                            : UA_IDTYPE_OPAQUE;
            memcpy(&out->ns, v + 1, 2);
            memcpy(&l, v + 3, 4);
            if (l < 0)
                l = 0;
            if ((size_t)l > n - 7)
                return false;
            out->p = v + 7;
            out->n = (uint32_t)l;
            break;
        default:
            return false;
        }
        break;
    }
    default:
        return false;               /* not compared */
    }
    out->kind = d->cls;
    return true;
}

bool
ua_scalar_view(const uint8_t *v, size_t n, struct ua_scalar *out)
{
    uint8_t t;

    memset(out, 0, sizeof(*out));
    if (n < 1 || (v[0] & 0xC0) != 0)
        return false;               /* null, or an array */
    t = v[0] & 0x3F;
    if (t == UA_BT_NULL || t > UA_BT_MAX)
        return false;
    out->bt = t;
    if (!ua_scalar_view_of(t, v + 1, n - 1, out)) {
        memset(out, 0, sizeof(*out));
        return false;
    }
    return true;
}

void
ua_scalar_bool(struct ua_scalar *out, int v)
{
    memset(out, 0, sizeof(*out));
    if (v < 0)
        return;                     /* NULL */
    out->kind = UA_BTC_BOOLEAN;
    out->bt = UA_BT_BOOLEAN;
    out->u.b = v != 0;
}

bool
ua_scalar_number(const struct ua_scalar *a, double *d)
{
    char  buf[64];
    char *end;

    switch (a->kind) {
    case UA_BTC_BOOLEAN:
        *d = a->u.b ? 1 : 0;
        return true;
    case UA_BTC_SIGNED:
        *d = (double)a->u.i;
        return true;
    case UA_BTC_UNSIGNED:
        *d = (double)a->u.u;
        return true;
    case UA_BTC_REAL:
        *d = a->u.d;
        return true;
    case UA_BTC_STRING:
        if (a->bt != UA_BT_STRING || a->n == 0 || a->n >= sizeof(buf))
            return false;
        memcpy(buf, a->p, a->n);
        buf[a->n] = '\0';
        *d = strtod(buf, &end);
        return *end == '\0';
    default:
        return false;
    }
}

static bool
ua_scalar_isnum(const struct ua_scalar *a)
{
    return a->kind == UA_BTC_BOOLEAN || a->kind == UA_BTC_SIGNED
           || a->kind == UA_BTC_UNSIGNED || a->kind == UA_BTC_REAL;
}

int
ua_scalar_compare(const struct ua_scalar *a, const struct ua_scalar *b,
                  bool *ok)
{
    *ok = true;
    if (a->kind == UA_BTC_NONE || b->kind == UA_BTC_NONE) {
        *ok = false;
        return 0;
    }
    if (ua_scalar_isnum(a) && ua_scalar_isnum(b) && a->kind != UA_BTC_REAL
        && b->kind != UA_BTC_REAL) {
        /* Integers (Boolean 0/1) exactly, signed with unsigned. */
        bool    an = a->kind == UA_BTC_SIGNED && a->u.i < 0;
        bool    bn = b->kind == UA_BTC_SIGNED && b->u.i < 0;
        int64_t ai = a->kind == UA_BTC_BOOLEAN ? a->u.b : a->u.i;
        int64_t bi = b->kind == UA_BTC_BOOLEAN ? b->u.b : b->u.i;

        if (an || bn) {
            if (an && bn)
                return ai < bi ? -1 : ai > bi;
            return an ? -1 : 1;
        }
        {
            uint64_t au = a->kind == UA_BTC_BOOLEAN ? a->u.b : a->u.u;
            uint64_t bu = b->kind == UA_BTC_BOOLEAN ? b->u.b : b->u.u;

            return au < bu ? -1 : au > bu;
        }
    }
    if (ua_scalar_isnum(a) || ua_scalar_isnum(b)) {
        double x, y;

        if (!ua_scalar_number(a, &x) || !ua_scalar_number(b, &y)
            || isnan(x) || isnan(y)) {
            *ok = false;
            return 0;
        }
        return x < y ? -1 : x > y;
    }
    if (a->kind == UA_BTC_STRING && b->kind == UA_BTC_STRING) {
        uint32_t m = a->n < b->n ? a->n : b->n;
        int      c;

        if (a->bt == UA_BT_QUALIFIEDNAME && b->bt == UA_BT_QUALIFIEDNAME
            && a->ns != b->ns)
            return a->ns < b->ns ? -1 : 1;
        c = m > 0 ? memcmp(a->p, b->p, m) : 0;
        if (c != 0)
            return c < 0 ? -1 : 1;
        return a->n < b->n ? -1 : a->n > b->n;
    }
    if (a->kind == UA_BTC_GUID && b->kind == UA_BTC_GUID)
        return memcmp(a->p, b->p, 16) != 0;
    if (a->kind == UA_BTC_NODEID && b->kind == UA_BTC_NODEID) {
        if (a->ns != b->ns || a->idt != b->idt)
            return 1;
        if (a->idt == UA_IDTYPE_NUMERIC)
            return a->u.u != b->u.u;
        return a->n != b->n || (a->n > 0 && memcmp(a->p, b->p, a->n) != 0);
    }
    *ok = false;
    return 0;
}

bool
ua_scalar_ordered(const struct ua_scalar *a, const struct ua_scalar *b)
{
    return a->kind != UA_BTC_NODEID && a->kind != UA_BTC_GUID
           && b->kind != UA_BTC_NODEID && b->kind != UA_BTC_GUID;
}

void
ua_scalar_cast(const struct ua_scalar *a, uint32_t bt, struct ua_scalar *r)
{
    const struct ua_builtin_type *d;
    double                        x;

    memset(r, 0, sizeof(*r));
    if (a->kind == UA_BTC_NONE || bt == UA_BT_NULL || bt > UA_BT_MAX)
        return;
    d = &ua_builtin[bt];
    if (bt == UA_BT_BOOLEAN) {
        if (!ua_scalar_number(a, &x) || isnan(x))
            return;
        ua_scalar_bool(r, x != 0);
        return;
    }
    if (d->flags & UA_BTF_INTEGER) {
        bool sgn = d->cls == UA_BTC_SIGNED;

        if (a->kind == UA_BTC_SIGNED || a->kind == UA_BTC_UNSIGNED
            || a->kind == UA_BTC_BOOLEAN) {
            /* Integers stay exact. */
            bool neg = a->kind == UA_BTC_SIGNED && a->u.i < 0;

            if (neg && !sgn)
                return;
            x = a->kind == UA_BTC_BOOLEAN ? a->u.b
                : a->kind == UA_BTC_SIGNED ? (double)a->u.i
                                           : (double)a->u.u;
        } else if (!ua_scalar_number(a, &x) || isnan(x)) {
            return;
        } else {
            x = nearbyint(x);
        }
        if (x < (double)d->min || x > (double)d->max)
            return;                 /* out of range: NULL */
        r->bt = (uint8_t)bt;
        r->kind = d->cls;
        if (sgn)
            r->u.i = a->kind == UA_BTC_SIGNED ? a->u.i
                     : a->kind == UA_BTC_UNSIGNED ? (int64_t)a->u.u
                     : a->kind == UA_BTC_BOOLEAN ? a->u.b : (int64_t)x;
        else
            r->u.u = a->kind == UA_BTC_UNSIGNED ? a->u.u
                     : a->kind == UA_BTC_SIGNED ? (uint64_t)a->u.i
                     : a->kind == UA_BTC_BOOLEAN ? a->u.b : (uint64_t)x;
        return;
    }
    if (bt == UA_BT_FLOAT || bt == UA_BT_DOUBLE) {
        if (!ua_scalar_number(a, &x))
            return;
        r->kind = UA_BTC_REAL;
        r->bt = (uint8_t)bt;
        r->u.d = bt == UA_BT_FLOAT ? (double)(float)x : x;
        return;
    }
    if (bt == UA_BT_STRING && a->kind == UA_BTC_STRING) {
        *r = *a;
        r->bt = UA_BT_STRING;
    }
}
