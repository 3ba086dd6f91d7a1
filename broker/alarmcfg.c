/*
 * broker/alarmcfg.c: the `[alarm NAME]` sections (alarmcfg.h).
 *
 * A key table like config.c's: each key sets one field of the alarm being
 * read and marks itself seen (a key given twice is refused).  The table of
 * alarms is broker/section.h's (it grows while the file is read, at start
 * only).
 */
#include "alarmcfg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "section.h"

#define BK_AC_PREFIX "alarm "

enum bk_ac_key {
    BK_AC_TYPE = 0, BK_AC_INPUT, BK_AC_SOURCE, BK_AC_HH, BK_AC_H, BK_AC_L,
    BK_AC_LL, BK_AC_NORMAL, BK_AC_SEVERITY, BK_AC_HH_SEV, BK_AC_H_SEV,
    BK_AC_L_SEV, BK_AC_LL_SEV, BK_AC_MESSAGE, BK_AC_DEADBAND, BK_AC_CONFIRM,
    BK_AC_SHELVED, BK_AC_NKEYS
};

static const char *const bk_ac_keys[BK_AC_NKEYS] = {
    "type", "input", "source", "high_high", "high", "low", "low_low",
    "normal", "severity", "high_high_severity", "high_severity",
    "low_severity", "low_low_severity", "message", "deadband", "confirm",
    "max_time_shelved"
};

static struct bk_alarmcfg_one *bk_alarmcfg_open(struct bk_alarmcfg *ac,
                                                const char *name, char *err,
                                                size_t errlen);
static int bk_alarmcfg_set(struct bk_alarmcfg_one *a, int k,
                           const char *value, char *err, size_t errlen);
static uint32_t bk_alarmcfg_line(const char *path, const char *name);
static const char *bk_alarmcfg_check(const struct bk_alarmcfg_one *a);

int
bk_alarmcfg_is_section(const char *section)
{
    return strncmp(section, BK_AC_PREFIX, sizeof(BK_AC_PREFIX) - 1) == 0;
}

void
bk_alarmcfg_free(struct bk_alarmcfg *ac)
{
    bk_free(ac->a);
    ac->a = NULL;
    ac->n = ac->cap = 0;
}

/* The alarm NAME names: the last one, or a new one (section.h). */
static struct bk_alarmcfg_one *
bk_alarmcfg_open(struct bk_alarmcfg *ac, const char *name, char *err,
                 size_t errlen)
{
    static const struct bk_section k = {
        .kind = "alarm", .size = sizeof(struct bk_alarmcfg_one),
    };
    struct bk_alarmcfg_one *a;
    size_t                  len = strlen(name);
    void                   *tab = ac->a;
    bool                    fresh;

    if (len == 0 || len >= BK_ALARMCFG_NAME_MAX) {
        snprintf(err, errlen, "[alarm %s]: the name must have 1 to %d bytes",
                 name, BK_ALARMCFG_NAME_MAX - 1);
        return NULL;
    }
    /* A NodeId text part and a BrowseName: no separators of either. */
    if (strpbrk(name, ";/.:[]&!#") != NULL || strchr(name, ' ') != NULL) {
        snprintf(err, errlen, "[alarm %s]: the name may not hold spaces or "
                 "any of ;/.:[]&!#", name);
        return NULL;
    }
    a = bk_section_open(&k, &tab, &ac->n, &ac->cap, name, &fresh, err,
                        errlen);
    ac->a = tab;
    if (a != NULL && fresh) {
        a->def.severity = 500;
        a->def.max_shelved_ms = BK_ALARMCFG_SHELVED_DEF * 1000.0;
    }
    return a;
}

static int
bk_alarmcfg_set(struct bk_alarmcfg_one *a, int k, const char *value,
                char *err, size_t errlen)
{
    struct bk_alarm_def *d = &a->def;
    double               x;
    size_t               len = strlen(value);

    switch (k) {
    case BK_AC_TYPE:
        if (strcmp(value, "exclusive_limit") == 0)
            d->type = BK_ALARM_EXCLUSIVE_LIMIT;
        else if (strcmp(value, "non_exclusive_limit") == 0)
            d->type = BK_ALARM_NON_EXCLUSIVE_LIMIT;
        else if (strcmp(value, "off_normal") == 0)
            d->type = BK_ALARM_OFF_NORMAL;
        else if (strcmp(value, "external") == 0)
            d->type = BK_ALARM_EXTERNAL;
        else
            goto bad;
        return 0;
    case BK_AC_INPUT:
    case BK_AC_SOURCE:
    case BK_AC_MESSAGE: {
        char  *out = k == BK_AC_INPUT    ? a->input
                     : k == BK_AC_SOURCE ? a->source
                                         : a->message;
        size_t cap = k == BK_AC_MESSAGE ? BK_ALARMCFG_MSG_MAX
                                        : BK_ALARMCFG_ID_MAX;

        if (len == 0 || len >= cap) {
            snprintf(err, errlen, "[alarm %s] %s: 1 to %zu bytes", a->name,
                     bk_ac_keys[k], cap - 1);
            return -1;
        }
        memcpy(out, value, len + 1);
        return 0;
    }
    case BK_AC_HH: case BK_AC_H: case BK_AC_L: case BK_AC_LL:
        if (bk_section_num(value, -INFINITY, INFINITY, &x) != 0)
            goto bad;
        d->lim[k - BK_AC_HH] = x;
        d->limits |= (uint8_t)(1u << (k - BK_AC_HH));
        return 0;
    case BK_AC_NORMAL:
        if (strcmp(value, "true") == 0)
            x = 1;
        else if (strcmp(value, "false") == 0)
            x = 0;
        else if (bk_section_num(value, -INFINITY, INFINITY, &x) != 0)
            goto bad;
        d->normal = x;
        return 0;
    case BK_AC_SEVERITY:
    case BK_AC_HH_SEV: case BK_AC_H_SEV: case BK_AC_L_SEV: case BK_AC_LL_SEV:
        if (bk_section_num(value, 1, 1000, &x) != 0 || x != floor(x)) {
            snprintf(err, errlen, "[alarm %s] %s: \"%s\" is not an integer "
                     "in [1, 1000]", a->name, bk_ac_keys[k], value);
            return -1;
        }
        if (k == BK_AC_SEVERITY)
            d->severity = (uint16_t)x;
        else
            d->lim_severity[k - BK_AC_HH_SEV] = (uint16_t)x;
        return 0;
    case BK_AC_DEADBAND:
        if (bk_section_num(value, 0, INFINITY, &x) != 0)
            goto bad;
        d->deadband = x;
        return 0;
    case BK_AC_CONFIRM:
        if (bk_section_bool(value, &d->confirm) != 0)
            goto bad;
        return 0;
    case BK_AC_SHELVED:
        /* Positive, at most a year. */
        if (bk_section_num(value, 0.001, 31536000.0, &x) != 0)
            goto bad;
        d->max_shelved_ms = x * 1000.0;
        return 0;
    default:
        break;
    }
bad:
    snprintf(err, errlen, "[alarm %s] %s: bad value \"%s\"", a->name,
             bk_ac_keys[k], value);
    return -1;
}

int
bk_alarmcfg_key(struct bk_alarmcfg *ac, const char *section,
                const char *name, const char *value, char *err,
                size_t errlen)
{
    struct bk_alarmcfg_one *a;
    int                     k;

    a = bk_alarmcfg_open(ac, section + sizeof(BK_AC_PREFIX) - 1, err,
                         errlen);
    if (a == NULL)
        return -1;
    for (k = 0; k < BK_AC_NKEYS; k++)
        if (strcmp(name, bk_ac_keys[k]) == 0)
            break;
    if (k == BK_AC_NKEYS) {
        snprintf(err, errlen, "unknown setting [%s] %s", section, name);
        return -1;
    }
    if (a->seen & (1u << k)) {
        snprintf(err, errlen, "[%s] %s: given twice", section, name);
        return -1;
    }
    a->seen |= 1u << k;
    return bk_alarmcfg_set(a, k, value, err, errlen);
}

/* The line of [alarm NAME] in the file at path (0: not found). */
static uint32_t
bk_alarmcfg_line(const char *path, const char *name)
{
    char     buf[512], want[BK_ALARMCFG_NAME_MAX + 16];
    uint32_t line = 0;
    FILE    *f = fopen(path, "r");

    if (f == NULL)
        return 0;
    snprintf(want, sizeof(want), "[" BK_AC_PREFIX "%s]", name);
    while (fgets(buf, sizeof(buf), f) != NULL) {
        const char *p = buf;

        line++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, want, strlen(want)) == 0) {
            fclose(f);
            return line;
        }
    }
    fclose(f);
    return 0;
}

/* What is wrong with a as a whole, or NULL. */
static const char *
bk_alarmcfg_check(const struct bk_alarmcfg_one *a)
{
    const struct bk_alarm_def *d = &a->def;
    const double              *l = d->lim;

    if (!(a->seen & (1u << BK_AC_TYPE)))
        return "no type (exclusive_limit, non_exclusive_limit, off_normal "
               "or external)";
    if (d->type == BK_ALARM_EXTERNAL) {
        if (a->seen & ((1u << BK_AC_INPUT) | (1u << BK_AC_NORMAL)
                       | (1u << BK_AC_DEADBAND)))
            return "an external alarm has no input, normal or deadband "
                   "(the feed sets it)";
        if (!(a->seen & (1u << BK_AC_SOURCE)))
            return "an external alarm needs its source";
        if (d->limits != 0)
            return "an external alarm has no limits";
        return NULL;
    }
    if (!(a->seen & (1u << BK_AC_INPUT)))
        return "no input";
    if (d->type == BK_ALARM_OFF_NORMAL) {
        if (!(a->seen & (1u << BK_AC_NORMAL)))
            return "an off_normal alarm needs its normal value";
        if (d->limits != 0)
            return "an off_normal alarm has no limits";
        return NULL;
    }
    if (a->seen & (1u << BK_AC_NORMAL))
        return "normal is for off_normal alarms";
    if (d->limits == 0)
        return "a limit alarm needs at least one of high_high, high, low, "
               "low_low";
    /* In order where given: high_high >= high > low >= low_low. */
    {
        double prev = INFINITY;

        for (int i = 0; i < BK_ALARM_NLIM; i++) {
            if (!(d->limits & (1u << i)))
                continue;
            if (l[i] > prev)
                return "the limits are not in order (high_high >= high > "
                       "low >= low_low)";
            prev = l[i];
        }
        if ((d->limits & BK_ALARM_LIM_H) && (d->limits & BK_ALARM_LIM_L)
            && !(l[BK_ALARM_I_H] > l[BK_ALARM_I_L]))
            return "high must be above low";
    }
    for (int i = 0; i < BK_ALARM_NLIM; i++)
        if (d->lim_severity[i] != 0 && !(d->limits & (1u << i)))
            return "a severity for a limit that is not given";
    return NULL;
}

void
bk_alarmcfg_where(const struct bk_alarmcfg *ac, uint32_t i, char *out,
                  size_t cap)
{
    if (i >= ac->n || ac->file[0] == '\0') {
        if (cap > 0)
            out[0] = '\0';
        return;
    }
    snprintf(out, cap, "%s line %u: ", ac->file,
             bk_alarmcfg_line(ac->file, ac->a[i].name));
}

int
bk_alarmcfg_finish(struct bk_alarmcfg *ac, const char *path, uint32_t max,
                   char *err, size_t errlen)
{
    snprintf(ac->file, sizeof(ac->file), "%s", path);
    if (ac->n > max) {
        snprintf(err, errlen, "%s line %u: [alarm %s]: more than "
                 "alarms.max_alarms (%u) alarms", path,
                 bk_alarmcfg_line(path, ac->a[max].name), ac->a[max].name,
                 max);
        return -1;
    }
    for (uint32_t i = 0; i < ac->n; i++) {
        const char *why = bk_alarmcfg_check(&ac->a[i]);

        if (why != NULL) {
            snprintf(err, errlen, "%s line %u: [alarm %s]: %s", path,
                     bk_alarmcfg_line(path, ac->a[i].name), ac->a[i].name,
                     why);
            return -1;
        }
    }
    return 0;
}
