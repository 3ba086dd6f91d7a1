/*
 * broker/histcfg.c: the `[history NAME]` sections and the keys that
 * describe a historized node (histcfg.h).
 *
 * Like broker/alarmcfg.c: each key sets one field of the section being
 * read and marks itself seen (a key given twice is refused); the table
 * of sections is broker/section.h's.  The same
 * value parser serves the [history] defaults (broker/config.c checks
 * them with it) and the sections.
 */
#include "histcfg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "section.h"

#define BK_HC_PREFIX "history "

const char *const bk_histcfg_keys[BK_HC_NKEYS] = {
    "stepped", "min_time_interval_ms", "max_time_interval_ms",
    "exception_deviation", "exception_deviation_format",
    "treat_uncertain_as_bad", "percent_data_bad", "percent_data_good",
    "use_sloped_extrapolation"
};

static const char *const bk_hc_formats[] = {
    "absolute_value", "percent_of_value", "percent_of_range",
    "percent_of_eu_range", "unknown"
};

static struct bk_histcfg_one *bk_histcfg_open(struct bk_histcfg *hc,
                                              const char *name, char *err,
                                              size_t errlen);

int
bk_histcfg_is_section(const char *section)
{
    return strncmp(section, BK_HC_PREFIX, sizeof(BK_HC_PREFIX) - 1) == 0;
}

void
bk_histcfg_free(struct bk_histcfg *hc)
{
    bk_free(hc->a);
    hc->a = NULL;
    hc->n = hc->cap = 0;
}

int
bk_histcfg_parse(enum bk_histcfg_key k, const char *value,
                 struct bk_histcfg_def *d)
{
    double x;

    switch (k) {
    case BK_HC_STEPPED:
        return bk_section_bool(value, &d->stepped);
    case BK_HC_TREAT_UNCERTAIN_AS_BAD:
        return bk_section_bool(value, &d->treat_uncertain_as_bad);
    case BK_HC_USE_SLOPED_EXTRAPOLATION:
        return bk_section_bool(value, &d->use_sloped_extrapolation);
    case BK_HC_MIN_TIME_INTERVAL:
    case BK_HC_MAX_TIME_INTERVAL:
        /* A Duration in milliseconds, at most a year. */
        if (bk_section_num(value, 0, 31536000000.0, &x) != 0)
            return -1;
        if (k == BK_HC_MIN_TIME_INTERVAL)
            d->min_time_interval_ms = x;
        else
            d->max_time_interval_ms = x;
        return 0;
    case BK_HC_EXCEPTION_DEVIATION:
        if (bk_section_num(value, 0, INFINITY, &x) != 0)
            return -1;
        d->exception_deviation = x;
        return 0;
    case BK_HC_EXCEPTION_DEVIATION_FORMAT:
        for (size_t i = 0; i < sizeof(bk_hc_formats) / sizeof(*bk_hc_formats);
             i++)
            if (strcmp(value, bk_hc_formats[i]) == 0) {
                d->exception_deviation_format = (uint8_t)i;
                return 0;
            }
        return -1;
    case BK_HC_PERCENT_DATA_BAD:
    case BK_HC_PERCENT_DATA_GOOD:
        if (bk_section_num(value, 0, 100, &x) != 0 || x != floor(x))
            return -1;
        if (k == BK_HC_PERCENT_DATA_BAD)
            d->percent_data_bad = (uint8_t)x;
        else
            d->percent_data_good = (uint8_t)x;
        return 0;
    default:
        return -1;
    }
}

/* The section NAME names: the last one, or a new one (section.h). */
static struct bk_histcfg_one *
bk_histcfg_open(struct bk_histcfg *hc, const char *name, char *err,
                size_t errlen)
{
    static const struct bk_section k = {
        .kind = "history", .size = sizeof(struct bk_histcfg_one),
    };
    struct bk_histcfg_one *a;
    size_t                 len = strlen(name);
    void                  *tab = hc->a;
    bool                   fresh;

    if (len == 0 || len >= BK_HISTCFG_NAME_MAX
        || strchr(name, ' ') != NULL) {
        snprintf(err, errlen, "[history %s]: the name must have 1 to %d "
                 "bytes and no space", name, BK_HISTCFG_NAME_MAX - 1);
        return NULL;
    }
    a = bk_section_open(&k, &tab, &hc->n, &hc->cap, name, &fresh, err,
                        errlen);
    hc->a = tab;
    return a;
}

int
bk_histcfg_key(struct bk_histcfg *hc, const char *section, const char *name,
               const char *value, char *err, size_t errlen)
{
    struct bk_histcfg_one *a;
    size_t                 len = strlen(value);
    int                    k;

    a = bk_histcfg_open(hc, section + sizeof(BK_HC_PREFIX) - 1, err,
                        errlen);
    if (a == NULL)
        return -1;
    if (strcmp(name, "node") == 0) {
        if (a->node[0] != '\0') {
            snprintf(err, errlen, "[%s] node: given twice", section);
            return -1;
        }
        if (len == 0 || len >= BK_HISTCFG_ID_MAX) {
            snprintf(err, errlen, "[%s] node: 1 to %d bytes", section,
                     BK_HISTCFG_ID_MAX - 1);
            return -1;
        }
        memcpy(a->node, value, len + 1);
        return 0;
    }
    for (k = 0; k < BK_HC_NKEYS; k++)
        if (strcmp(name, bk_histcfg_keys[k]) == 0)
            break;
    if (k == BK_HC_NKEYS) {
        snprintf(err, errlen, "unknown setting [%s] %s", section, name);
        return -1;
    }
    if (a->seen & (1u << k)) {
        snprintf(err, errlen, "[%s] %s: given twice", section, name);
        return -1;
    }
    a->seen |= 1u << k;
    if (bk_histcfg_parse((enum bk_histcfg_key)k, value, &a->def) != 0) {
        snprintf(err, errlen, "[%s] %s: bad value \"%s\"", section, name,
                 value);
        return -1;
    }
    return 0;
}

int
bk_histcfg_finish(const struct bk_histcfg *hc, const char *path, char *err,
                  size_t errlen)
{
    for (uint32_t i = 0; i < hc->n; i++)
        if (hc->a[i].node[0] == '\0') {
            snprintf(err, errlen, "%s: [history %s]: no node (the Variable "
                     "it describes)", path, hc->a[i].name);
            return -1;
        }
    return 0;
}

void
bk_histcfg_apply(const struct bk_histcfg_one *one, struct bk_histcfg_def *d)
{
    const struct bk_histcfg_def *s = &one->def;

#define BK_HC_TAKE(key, field)                                            \
    do {                                                                  \
        if (one->seen & (1u << (key)))                                    \
            d->field = s->field;                                          \
    } while (0)
    BK_HC_TAKE(BK_HC_STEPPED, stepped);
    BK_HC_TAKE(BK_HC_MIN_TIME_INTERVAL, min_time_interval_ms);
    BK_HC_TAKE(BK_HC_MAX_TIME_INTERVAL, max_time_interval_ms);
    BK_HC_TAKE(BK_HC_EXCEPTION_DEVIATION, exception_deviation);
    BK_HC_TAKE(BK_HC_EXCEPTION_DEVIATION_FORMAT, exception_deviation_format);
    BK_HC_TAKE(BK_HC_TREAT_UNCERTAIN_AS_BAD, treat_uncertain_as_bad);
    BK_HC_TAKE(BK_HC_PERCENT_DATA_BAD, percent_data_bad);
    BK_HC_TAKE(BK_HC_PERCENT_DATA_GOOD, percent_data_good);
    BK_HC_TAKE(BK_HC_USE_SLOPED_EXTRAPOLATION, use_sloped_extrapolation);
#undef BK_HC_TAKE
}
