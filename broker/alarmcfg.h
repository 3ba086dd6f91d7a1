/*
 * broker/alarmcfg.h: the `[alarm NAME]` sections of the configuration
 * file, one alarm each (docs/configuration.md "Alarms"):
 *
 *   [alarm Level1]          NAME: the ConditionName and BrowseName
 *   type = exclusive_limit  exclusive_limit | non_exclusive_limit |
 *                           off_normal
 *   input = ns=1;s=v1       the Variable it watches (InputNode)
 *   source = ns=1;s=Tank1   SourceNode; default the input's parent Object
 *   high_high = 90          limit types: at least one of high_high, high,
 *   high = 80                 low, low_low (high_high >= high > low >=
 *   low = 20                  low_low where given)
 *   low_low = 10
 *   normal = 0              off_normal: the input's normal value (needed)
 *   severity = 500          1-1000 (default 500)
 *   high_high_severity = 900  optional, per limit (default severity)
 *   message = Level 1 out of range   the events' Message (default the
 *                                    name and the state)
 *   deadband = 0.5          >= 0, in the input's units (default 0)
 *   confirm = false         the alarm uses Confirm (default false)
 *   max_time_shelved = 3600  seconds, MaxTimeShelved (default 28800)
 *
 * The configuration reader (broker/config.c, the one user of inih) hands
 * the keys of these sections to bk_alarmcfg_key() when the configuration
 * has an alarm table (struct bk_config.alarms), and bk_alarmcfg_finish()
 * checks each section as a whole at the end.  Errors name the file and
 * the line: a key's own line (the reader adds it), or, for a section that
 * misses a key, the section's line.  The NodeIds are resolved against the
 * address space at the build (broker/alarmnode.c).
 *
 * Broker only, at start.  Allocates the table (bk_alarmcfg_free).
 */
#ifndef BK_ALARMCFG_H
#define BK_ALARMCFG_H

#include <stddef.h>
#include <stdint.h>

#include "alarm.h"

#define BK_ALARMCFG_NAME_MAX 64     /* bytes of NAME, NUL included */
#define BK_ALARMCFG_ID_MAX   256    /* bytes of a NodeId's text */
#define BK_ALARMCFG_MSG_MAX  256    /* bytes of message */
#define BK_ALARMCFG_SHELVED_DEF 28800.0     /* seconds */

/* One alarm as configured. */
struct bk_alarmcfg_one {
    char                name[BK_ALARMCFG_NAME_MAX];
    char                input[BK_ALARMCFG_ID_MAX];
    char                source[BK_ALARMCFG_ID_MAX];    /* "": default */
    char                message[BK_ALARMCFG_MSG_MAX];  /* "": default */
    struct bk_alarm_def def;
    uint32_t            seen;       /* keys given (alarmcfg.c) */
};

/* Every alarm of a file. */
struct bk_alarmcfg {
    struct bk_alarmcfg_one *a;
    uint32_t                n;
    uint32_t                cap;
    char                    file[1024];     /* read from (finish) */
};

/*
 * The key name = value of section ("alarm NAME"): a new NAME opens a new
 * alarm (a NAME seen before, not just before, is refused).  0, or -1 with
 * a message in err (the caller adds the line).
 */
int bk_alarmcfg_key(struct bk_alarmcfg *ac, const char *section,
                    const char *name, const char *value, char *err,
                    size_t errlen);

/*
 * After the file at path was read: each alarm complete and consistent
 * (input given; a limit type with a limit and the limits in order; an
 * off-normal alarm with its normal value), at most max alarms.  0, or -1
 * with "PATH line N: [alarm NAME]: ..." in err.
 */
int bk_alarmcfg_finish(struct bk_alarmcfg *ac, const char *path,
                       uint32_t max, char *err, size_t errlen);

/* "FILE line N: " of alarm i's section, for a later message. */
void bk_alarmcfg_where(const struct bk_alarmcfg *ac, uint32_t i, char *out,
                       size_t cap);

/* Free ac's table (ac is empty after). */
void bk_alarmcfg_free(struct bk_alarmcfg *ac);

/* Is section an alarm's ("alarm NAME")?  For the main reader. */
int bk_alarmcfg_is_section(const char *section);

#endif /* BK_ALARMCFG_H */
