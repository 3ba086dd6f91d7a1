/*
 * broker/alarm.c: one condition's state machines (alarm.h).
 *
 * Pure: every function works on the definition and state it is given and
 * the time it is told; nothing global, nothing allocated.  Callers are
 * single-threaded (the broker's loop).
 */
#include "alarm.h"

#include <math.h>

#include "proto/status_gen.h"

static uint8_t bk_alarm_limits(const struct bk_alarm_def *d, uint8_t over);
static uint16_t bk_alarm_severity(const struct bk_alarm_def *d,
                                  uint8_t limits);
static int bk_alarm_rank(uint8_t limits);
static uint32_t bk_alarm_retain_ch(const struct bk_alarm_def *d,
                                   struct bk_alarm_state *s, bool before);

void
bk_alarm_init(const struct bk_alarm_def *d, struct bk_alarm_state *s,
              int64_t now)
{
    *s = (struct bk_alarm_state){ 0 };
    s->enabled = true;
    s->acked = true;
    s->confirmed = true;
    s->shelving = BK_ALARM_UNSHELVED;
    s->severity = d->severity;
    s->last_severity = d->severity;
    s->enabled_ts = s->active_ts = s->acked_ts = s->confirmed_ts = now;
    s->limit_ts = s->shelving_ts = s->severity_ts = now;
}

uint8_t
bk_alarm_over(const struct bk_alarm_def *d, uint8_t over, double x)
{
    static const uint8_t bit[BK_ALARM_NLIM] = {
        BK_ALARM_LIM_HH, BK_ALARM_LIM_H, BK_ALARM_LIM_L, BK_ALARM_LIM_LL
    };
    uint8_t out = 0;

    if (isnan(x))
        return over;
    if (d->type == BK_ALARM_OFF_NORMAL)
        return x != d->normal ? BK_ALARM_LIM_H : 0;
    for (int i = 0; i < BK_ALARM_NLIM; i++) {
        bool high = i < BK_ALARM_I_L, was = (over & bit[i]) != 0, now;

        if (!(d->limits & bit[i]))
            continue;
        if (high)
            now = x >= d->lim[i] || (was && x >= d->lim[i] - d->deadband);
        else
            now = x <= d->lim[i] || (was && x <= d->lim[i] + d->deadband);
        if (now)
            out |= bit[i];
    }
    return out;
}

bool
bk_alarm_quiet(const struct bk_alarm_def *d, uint8_t over, double x)
{
    return bk_alarm_over(d, over, x) == over;
}

/* The limit state(s) that the exceeded limits make. */
static uint8_t
bk_alarm_limits(const struct bk_alarm_def *d, uint8_t over)
{
    if (d->type != BK_ALARM_EXCLUSIVE_LIMIT)
        return over;
    if (over & BK_ALARM_LIM_HH)
        return BK_ALARM_LIM_HH;
    if (over & BK_ALARM_LIM_LL)
        return BK_ALARM_LIM_LL;
    if (over & BK_ALARM_LIM_H)
        return BK_ALARM_LIM_H;
    return over & BK_ALARM_LIM_L;
}

/* How severe a limit set is: 2 for HighHigh/LowLow, 1 High/Low, 0. */
static int
bk_alarm_rank(uint8_t limits)
{
    if (limits & (BK_ALARM_LIM_HH | BK_ALARM_LIM_LL))
        return 2;
    return limits != 0;
}

static uint16_t
bk_alarm_severity(const struct bk_alarm_def *d, uint8_t limits)
{
    uint16_t best = 0;

    for (int i = 0; i < BK_ALARM_NLIM; i++)
        if ((limits & (1u << i)) && d->lim_severity[i] > best)
            best = d->lim_severity[i];
    return best != 0 ? best : d->severity;
}

bool
bk_alarm_retain(const struct bk_alarm_def *d, const struct bk_alarm_state *s)
{
    return s->enabled
           && (s->active || !s->acked || (d->confirm && !s->confirmed));
}

/* BK_ALARM_CH_RETAIN when Retain is not what it was (before). */
static uint32_t
bk_alarm_retain_ch(const struct bk_alarm_def *d, struct bk_alarm_state *s,
                   bool before)
{
    return bk_alarm_retain(d, s) != before ? BK_ALARM_CH_RETAIN : 0;
}

uint32_t
bk_alarm_input(const struct bk_alarm_def *d, struct bk_alarm_state *s,
               double x, int64_t now)
{
    bool     retain = bk_alarm_retain(d, s);
    uint8_t  over = bk_alarm_over(d, s->over, x), limits;
    uint16_t sev;
    uint32_t ch = 0;
    bool     active;

    if (over == s->over)
        return 0;
    s->over = over;
    limits = bk_alarm_limits(d, over);
    active = over != 0;
    if (limits != s->limits) {
        /* Worse while active: the operator has not seen this one. */
        if (active && bk_alarm_rank(limits) > bk_alarm_rank(s->limits)) {
            if (s->acked) {
                s->acked = false;
                s->acked_ts = now;
                ch |= BK_ALARM_CH_ACKED;
            }
            if (d->confirm && s->confirmed) {
                s->confirmed = false;
                s->confirmed_ts = now;
                ch |= BK_ALARM_CH_CONFIRM;
            }
        }
        s->limits = limits;
        s->limit_ts = now;
        ch |= BK_ALARM_CH_LIMIT;
    }
    if (active != s->active) {
        s->active = active;
        s->active_ts = now;
        ch |= BK_ALARM_CH_ACTIVE;
        if (!active && s->shelving == BK_ALARM_ONESHOT) {
            s->shelving = BK_ALARM_UNSHELVED;
            s->unshelve_at = 0;
            s->shelving_ts = now;
            ch |= BK_ALARM_CH_SHELVING;
        }
    }
    sev = active ? bk_alarm_severity(d, limits) : d->severity;
    if (sev != s->severity) {
        s->last_severity = s->severity;
        s->severity = sev;
        s->severity_ts = now;
        ch |= BK_ALARM_CH_SEVERITY;
    }
    ch |= bk_alarm_retain_ch(d, s, retain);
    return s->enabled ? ch : 0;
}

uint32_t
bk_alarm_set(const struct bk_alarm_def *d, struct bk_alarm_state *s,
             bool active, uint16_t severity, int64_t now)
{
    bool     retain = bk_alarm_retain(d, s);
    uint16_t sev = severity != 0 ? severity : d->severity;
    uint32_t ch = 0;

    if (active != s->active) {
        s->active = active;
        s->active_ts = now;
        ch |= BK_ALARM_CH_ACTIVE;
        if (active) {
            if (s->acked) {
                s->acked = false;
                s->acked_ts = now;
                ch |= BK_ALARM_CH_ACKED;
            }
            if (d->confirm && s->confirmed) {
                s->confirmed = false;
                s->confirmed_ts = now;
                ch |= BK_ALARM_CH_CONFIRM;
            }
        } else if (s->shelving == BK_ALARM_ONESHOT) {
            s->shelving = BK_ALARM_UNSHELVED;
            s->unshelve_at = 0;
            s->shelving_ts = now;
            ch |= BK_ALARM_CH_SHELVING;
        }
    }
    if (sev != s->severity) {
        s->last_severity = s->severity;
        s->severity = sev;
        s->severity_ts = now;
        ch |= BK_ALARM_CH_SEVERITY;
    }
    ch |= bk_alarm_retain_ch(d, s, retain);
    return s->enabled ? ch : 0;
}

ua_status
bk_alarm_enable(const struct bk_alarm_def *d, struct bk_alarm_state *s,
                bool on, int64_t now, uint32_t *ch)
{
    bool retain = bk_alarm_retain(d, s);

    *ch = 0;
    if (on && s->enabled)
        return UA_BAD_CONDITION_ALREADY_ENABLED;
    if (!on && !s->enabled)
        return UA_BAD_CONDITION_ALREADY_DISABLED;
    s->enabled = on;
    s->enabled_ts = now;
    *ch = BK_ALARM_CH_ENABLED | bk_alarm_retain_ch(d, s, retain);
    return UA_GOOD;
}

ua_status
bk_alarm_ack(const struct bk_alarm_def *d, struct bk_alarm_state *s,
             int64_t now, uint32_t *ch)
{
    bool retain = bk_alarm_retain(d, s);

    *ch = 0;
    if (!s->enabled)
        return UA_BAD_CONDITION_DISABLED;
    if (s->acked)
        return UA_BAD_CONDITION_BRANCH_ALREADY_ACKED;
    s->acked = true;
    s->acked_ts = now;
    *ch = BK_ALARM_CH_ACKED | bk_alarm_retain_ch(d, s, retain);
    return UA_GOOD;
}

ua_status
bk_alarm_confirm(const struct bk_alarm_def *d, struct bk_alarm_state *s,
                 int64_t now, uint32_t *ch)
{
    bool retain = bk_alarm_retain(d, s);

    *ch = 0;
    if (!s->enabled)
        return UA_BAD_CONDITION_DISABLED;
    if (s->confirmed)
        return UA_BAD_CONDITION_BRANCH_ALREADY_CONFIRMED;
    s->confirmed = true;
    s->confirmed_ts = now;
    *ch = BK_ALARM_CH_CONFIRM | bk_alarm_retain_ch(d, s, retain);
    return UA_GOOD;
}

ua_status
bk_alarm_comment(const struct bk_alarm_state *s, uint32_t *ch)
{
    *ch = 0;
    if (!s->enabled)
        return UA_BAD_CONDITION_DISABLED;
    *ch = BK_ALARM_CH_COMMENT;
    return UA_GOOD;
}

ua_status
bk_alarm_shelve_timed(const struct bk_alarm_def *d, struct bk_alarm_state *s,
                      double ms, int64_t now, uint32_t *ch)
{
    *ch = 0;
    if (!s->enabled)
        return UA_BAD_CONDITION_DISABLED;
    if (!(ms > 0) || ms > d->max_shelved_ms)
        return UA_BAD_SHELVING_TIME_OUT_OF_RANGE;
    if (s->shelving == BK_ALARM_TIMED)
        return UA_BAD_CONDITION_ALREADY_SHELVED;
    s->shelving = BK_ALARM_TIMED;
    s->unshelve_at = now + (int64_t)(ms * (double)BK_ALARM_TICKS_MS);
    s->shelving_ts = now;
    *ch = BK_ALARM_CH_SHELVING;
    return UA_GOOD;
}

ua_status
bk_alarm_shelve_oneshot(const struct bk_alarm_def *d,
                        struct bk_alarm_state *s, int64_t now, uint32_t *ch)
{
    *ch = 0;
    if (!s->enabled)
        return UA_BAD_CONDITION_DISABLED;
    if (s->shelving == BK_ALARM_ONESHOT)
        return UA_BAD_CONDITION_ALREADY_SHELVED;
    s->shelving = BK_ALARM_ONESHOT;
    s->unshelve_at = now + (int64_t)(d->max_shelved_ms
                                     * (double)BK_ALARM_TICKS_MS);
    s->shelving_ts = now;
    *ch = BK_ALARM_CH_SHELVING;
    return UA_GOOD;
}

ua_status
bk_alarm_unshelve(struct bk_alarm_state *s, int64_t now, uint32_t *ch)
{
    *ch = 0;
    if (!s->enabled)
        return UA_BAD_CONDITION_DISABLED;
    if (s->shelving == BK_ALARM_UNSHELVED)
        return UA_BAD_CONDITION_NOT_SHELVED;
    s->shelving = BK_ALARM_UNSHELVED;
    s->unshelve_at = 0;
    s->shelving_ts = now;
    *ch = BK_ALARM_CH_SHELVING;
    return UA_GOOD;
}

uint32_t
bk_alarm_tick(struct bk_alarm_state *s, int64_t now)
{
    if (s->shelving == BK_ALARM_UNSHELVED || now < s->unshelve_at)
        return 0;
    s->shelving = BK_ALARM_UNSHELVED;
    s->unshelve_at = 0;
    s->shelving_ts = now;
    return s->enabled ? BK_ALARM_CH_SHELVING : 0;
}
