/*
 * hist/collect.c: the data collection rules of a historized variable
 * (collect.h; Part 11 §5.2.2).
 *
 * The value is read from the sample's body as it is stored (mask,
 * Variant, StatusCode: hist/sample.h): a scalar number's type and fixed
 * size give the StatusCode's place; any other Variant is skipped by its
 * mask bit only when it has no StatusCode after it, so its status is read
 * only for scalar numbers and taken as Good otherwise (a change of
 * quality of a String is then not seen; the time rules still hold).
 *
 * Pure; one comparison per value for a variable without rules (the
 * caller keeps none for it).
 */
#include "collect.h"

#include <math.h>
#include <string.h>

#define HS_CO_DV_VALUE  0x01        /* DataValue mask bits (Part 6 §5.2.2) */
#define HS_CO_DV_STATUS 0x02

static uint32_t hs_collect_size(uint8_t type);
static double hs_collect_threshold(const struct hs_collect *c);

/* Bytes of a scalar of built-in type Boolean (1) ... Double (11); 0 for
 * any other. */
static uint32_t
hs_collect_size(uint8_t type)
{
    static const uint8_t size[12] = { 0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

    return type < 12 ? size[type] : 0;
}

bool
hs_collect_number(const struct hs_sample *s, double *v, uint32_t *status)
{
    const uint8_t *b = s->body;
    uint8_t        mask = b[0];
    uint32_t       n = s->body_len, sz;
    const uint8_t *p;

    *status = 0;
    if (!(mask & HS_CO_DV_VALUE)) {
        if ((mask & HS_CO_DV_STATUS) && n >= 5)
            memcpy(status, b + 1, 4);
        return false;
    }
    if (n < 2 || (sz = hs_collect_size(b[1])) == 0 || n < 2 + sz)
        return false;
    p = b + 2;
    if ((mask & HS_CO_DV_STATUS) && n >= 2 + sz + 4)
        memcpy(status, p + sz, 4);
    switch (b[1]) {
    case 1: *v = p[0] != 0; break;                          /* Boolean */
    case 2: *v = (int8_t)p[0]; break;                       /* SByte */
    case 3: *v = p[0]; break;                               /* Byte */
    case 4: { int16_t x; memcpy(&x, p, 2); *v = x; break; }
    case 5: { uint16_t x; memcpy(&x, p, 2); *v = x; break; }
    case 6: { int32_t x; memcpy(&x, p, 4); *v = x; break; }
    case 7: { uint32_t x; memcpy(&x, p, 4); *v = x; break; }
    case 8: { int64_t x; memcpy(&x, p, 8); *v = (double)x; break; }
    case 9: { uint64_t x; memcpy(&x, p, 8); *v = (double)x; break; }
    case 10: { float x; memcpy(&x, p, 4); *v = x; break; }
    default: memcpy(v, p, 8); break;                        /* Double */
    }
    return isfinite(*v);
}

bool
hs_collect_any(const struct hs_collect *c)
{
    return c->min_t > 0 || c->max_t > 0 || c->dev > 0;
}

/* The deviation within which a value is not stored; < 0: none applies. */
static double
hs_collect_threshold(const struct hs_collect *c)
{
    switch (c->fmt) {
    case HS_COLLECT_ABSOLUTE:
        return c->dev;
    case HS_COLLECT_PERCENT_OF_VALUE:
        return c->dev / 100.0 * fabs(c->last_v);
    case HS_COLLECT_PERCENT_OF_RANGE:     /* without one, the EURange */
        if (c->range > 0)
            return c->dev / 100.0 * c->range;
        return c->eu_range > 0 ? c->dev / 100.0 * c->eu_range : -1;
    case HS_COLLECT_PERCENT_OF_EU_RANGE:
        return c->eu_range > 0 ? c->dev / 100.0 * c->eu_range : -1;
    default:
        return -1;
    }
}

void
hs_collect_stored(struct hs_collect *c, const struct hs_sample *s)
{
    c->last_num = hs_collect_number(s, &c->last_v, &c->last_status);
    c->last_t = s->t;
    c->last_srv = s->has_srv ? s->srv : s->t;
}

bool
hs_collect_keep(struct hs_collect *c, const struct hs_sample *s)
{
    double   v = 0;
    uint32_t st;
    bool     num = hs_collect_number(s, &v, &st);

    if (c->last_t != 0 && st == c->last_status && s->t >= c->last_t) {
        if (c->min_t > 0 && s->t - c->last_t < c->min_t)
            return false;
        if (c->dev > 0 && num && c->last_num) {
            double thr = hs_collect_threshold(c);

            if (thr >= 0 && fabs(v - c->last_v) <= thr)
                return false;
        }
    }
    c->last_num = num;
    c->last_v = v;
    c->last_status = st;
    c->last_t = s->t;
    c->last_srv = s->has_srv ? s->srv : s->t;
    return true;
}

bool
hs_collect_due(const struct hs_collect *c, int64_t now)
{
    return c->max_t > 0 && c->last_t != 0 && now - c->last_srv >= c->max_t;
}
