/*
 * broker/alarm.h: the state machines of one alarm condition (OPC UA
 * Part 9), as pure functions of a definition, a state and the time: no
 * node store, no value path, no clock (now is a parameter, a DateTime in
 * 100 ns ticks).  The evaluator (broker/alarmnode.c) keeps one struct
 * bk_alarm_state per configured alarm and turns the changes these
 * functions report into condition variables and events.
 *
 * Machines (Part 9 §5.5 ConditionType, §5.7 AcknowledgeableConditionType,
 * §5.8 AlarmConditionType and its limit and discrete subtypes):
 *
 *   input     a new value of the input: each configured limit is
 *             exceeded when the value reaches it (high limits: x >= limit,
 *             low limits: x <= limit) and stays exceeded until the value
 *             is back past it by the deadband (x < limit - deadband, x >
 *             limit + deadband); an off-normal alarm is active while x !=
 *             normal.  Exclusive limit alarm: LimitState is the most
 *             severe exceeded limit (HighHigh, LowLow before High, Low);
 *             non-exclusive: every exceeded limit is a state of its own.
 *             ActiveState is "any limit exceeded" (off-normal: not
 *             normal).  Going active, or to a more severe limit while
 *             active, makes the condition unacknowledged (and
 *             unconfirmed, when the alarm uses Confirm).  Going inactive
 *             ends a one-shot shelving.  Severity is the most severe
 *             exceeded limit's (its own severity, else the alarm's).
 *   set       an external alarm (computed elsewhere, the feed): active
 *             or not with a severity, the same rules as input's.
 *   enable    Enable/Disable (Part 9 §5.5.4, §5.5.5): a disabled
 *             condition still follows its input but reports nothing;
 *             Enable reports its current state.
 *   ack       Acknowledge, Confirm (Part 9 §5.7.3, §5.7.4).
 *   shelve    TimedShelve (at most max_shelved), OneShotShelve, Unshelve
 *             (Part 9 §5.8.10); a timed shelving ends by itself at
 *             unshelve_at (bk_alarm_tick).
 *   retain    Retain (Part 9 §5.5.2): enabled and (active, or not
 *             acknowledged, or not confirmed).
 *
 * The functions return the changes they made as BK_ALARM_CH_* bits (0:
 * nothing to report), or a Part 9 StatusCode for the methods.
 */
#ifndef BK_ALARM_H
#define BK_ALARM_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/types.h"

/* Limits, as bits and as indices (BK_ALARM_I_*) of the arrays below. */
#define BK_ALARM_LIM_HH 0x01u
#define BK_ALARM_LIM_H  0x02u
#define BK_ALARM_LIM_L  0x04u
#define BK_ALARM_LIM_LL 0x08u
enum { BK_ALARM_I_HH = 0, BK_ALARM_I_H, BK_ALARM_I_L, BK_ALARM_I_LL,
       BK_ALARM_NLIM };

enum bk_alarm_type {
    BK_ALARM_EXCLUSIVE_LIMIT = 1,   /* ExclusiveLimitAlarmType */
    BK_ALARM_NON_EXCLUSIVE_LIMIT,   /* NonExclusiveLimitAlarmType */
    BK_ALARM_OFF_NORMAL,            /* OffNormalAlarmType */
    BK_ALARM_EXTERNAL               /* AlarmConditionType, set by the feed */
};

enum bk_alarm_shelving {
    BK_ALARM_UNSHELVED = 0,
    BK_ALARM_TIMED,
    BK_ALARM_ONESHOT
};

/* Changes reported (what an event and the condition's variables say). */
#define BK_ALARM_CH_ACTIVE   0x0001u
#define BK_ALARM_CH_LIMIT    0x0002u
#define BK_ALARM_CH_ACKED    0x0004u
#define BK_ALARM_CH_CONFIRM  0x0008u
#define BK_ALARM_CH_ENABLED  0x0010u
#define BK_ALARM_CH_SHELVING 0x0020u
#define BK_ALARM_CH_SEVERITY 0x0040u
#define BK_ALARM_CH_RETAIN   0x0080u
#define BK_ALARM_CH_COMMENT  0x0100u
#define BK_ALARM_CH_MESSAGE  0x0200u

#define BK_ALARM_TICKS_MS INT64_C(10000)   /* DateTime ticks per ms */

/* What the configuration says of an alarm (broker/alarmcfg.h). */
struct bk_alarm_def {
    uint8_t  type;              /* enum bk_alarm_type */
    uint8_t  limits;            /* BK_ALARM_LIM_* of those given */
    bool     confirm;           /* the alarm uses Confirm */
    uint16_t severity;          /* 1..1000 */
    uint16_t lim_severity[BK_ALARM_NLIM];   /* 0: severity */
    double   lim[BK_ALARM_NLIM];
    double   normal;            /* off-normal: the normal value */
    double   deadband;          /* >= 0, in the input's units */
    double   max_shelved_ms;    /* MaxTimeShelved, > 0 */
};

/* One condition's state (one branch: the current one). */
struct bk_alarm_state {
    bool     enabled;
    bool     active;
    bool     acked;
    bool     confirmed;
    uint8_t  over;              /* limits exceeded (hysteresis kept) */
    uint8_t  limits;            /* the limit state(s) in effect */
    uint8_t  shelving;          /* enum bk_alarm_shelving */
    uint16_t severity;
    uint16_t last_severity;
    int64_t  unshelve_at;       /* DateTime, timed shelving */
    /* TransitionTimes (Part 9 §5.4.2, TwoStateVariable) */
    int64_t  enabled_ts;
    int64_t  active_ts;
    int64_t  acked_ts;
    int64_t  confirmed_ts;
    int64_t  limit_ts;
    int64_t  shelving_ts;
    int64_t  severity_ts;
};

/* The state of a new condition: enabled, inactive, acknowledged,
 * confirmed, unshelved, severity def->severity, every time now. */
void bk_alarm_init(const struct bk_alarm_def *d, struct bk_alarm_state *s,
                   int64_t now);

/*
 * The limits exceeded by x given the ones exceeded before (over), with
 * the deadband: pure (BK_ALARM_LIM_* bits; off-normal: BK_ALARM_LIM_H
 * when x is not normal).  A NaN exceeds nothing new and keeps what was
 * exceeded.
 */
uint8_t bk_alarm_over(const struct bk_alarm_def *d, uint8_t over, double x);

/*
 * The input has the value x: the changes (0 while disabled: the state
 * follows the input all the same).
 */
uint32_t bk_alarm_input(const struct bk_alarm_def *d,
                        struct bk_alarm_state *s, double x, int64_t now);

/*
 * An external alarm is active or not, with severity (0: the alarm's):
 * the changes (0 while disabled), as bk_alarm_input().
 */
uint32_t bk_alarm_set(const struct bk_alarm_def *d, struct bk_alarm_state *s,
                      bool active, uint16_t severity, int64_t now);

/* Is x certain to change nothing for a condition with these limits
 * exceeded?  The evaluator's fast test, inline in its hot path. */
bool bk_alarm_quiet(const struct bk_alarm_def *d, uint8_t over, double x);

/* Retain (Part 9 §5.5.2) of s. */
bool bk_alarm_retain(const struct bk_alarm_def *d,
                     const struct bk_alarm_state *s);

/* Enable (on) or Disable: Good and the changes into *ch, or
 * BadConditionAlreadyEnabled / BadConditionAlreadyDisabled. */
ua_status bk_alarm_enable(const struct bk_alarm_def *d,
                          struct bk_alarm_state *s, bool on, int64_t now,
                          uint32_t *ch);

/* Acknowledge: Good, BadConditionDisabled,
 * BadConditionBranchAlreadyAcked. */
ua_status bk_alarm_ack(const struct bk_alarm_def *d,
                       struct bk_alarm_state *s, int64_t now, uint32_t *ch);

/* Confirm: Good, BadConditionDisabled, BadConditionBranchAlreadyConfirmed
 * (also for an alarm that does not use Confirm: it is always confirmed). */
ua_status bk_alarm_confirm(const struct bk_alarm_def *d,
                           struct bk_alarm_state *s, int64_t now,
                           uint32_t *ch);

/* AddComment's state check: Good or BadConditionDisabled. */
ua_status bk_alarm_comment(const struct bk_alarm_state *s, uint32_t *ch);

/*
 * TimedShelve for ms milliseconds: Good, BadConditionDisabled,
 * BadShelvingTimeOutOfRange (ms <= 0 or more than max_shelved_ms),
 * BadConditionAlreadyShelved (timed-shelved already).
 */
ua_status bk_alarm_shelve_timed(const struct bk_alarm_def *d,
                                struct bk_alarm_state *s, double ms,
                                int64_t now, uint32_t *ch);

/* OneShotShelve: Good, BadConditionDisabled, BadConditionAlreadyShelved;
 * it ends when the alarm goes inactive, or at max_shelved_ms. */
ua_status bk_alarm_shelve_oneshot(const struct bk_alarm_def *d,
                                  struct bk_alarm_state *s, int64_t now,
                                  uint32_t *ch);

/* Unshelve: Good, BadConditionDisabled, BadConditionNotShelved. */
ua_status bk_alarm_unshelve(struct bk_alarm_state *s, int64_t now,
                            uint32_t *ch);

/* The time passes: a shelving whose time ran out ends.  The changes. */
uint32_t bk_alarm_tick(struct bk_alarm_state *s, int64_t now);

#endif /* BK_ALARM_H */
