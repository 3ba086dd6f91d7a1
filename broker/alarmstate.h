/*
 * broker/alarmstate.h: the alarms' state across a restart (Part 9 keeps
 * no state itself; an operator expects an alarm list to be the same after
 * a restart): what the operators did and what was active -- enabled,
 * active and its limits, acknowledged, confirmed, shelved and until when,
 * severities, the last EventId and Time, Comment and ClientUserId -- of
 * every condition, by its name.
 *
 * A text file, `alarms.state` in the runtime directory: a first line
 * "uabroker-alarms 2", then one line per condition (its fields in the
 * order of struct bk_alarmnode_saved, numbers in decimal, the EventId,
 * the user, the comment and the message (an external alarm's, the feed's)
 * in hex, "-" for empty).  Written whole: into
 * a temporary file beside it, fsync, rename (a crash leaves the old file
 * or the new one, never half of one).  The broker writes it once a
 * second while something changed (bk_alarmnode's dirty flag) and when it
 * stops.  At start a damaged file (a line that does not parse) is
 * reported with its line and ignored whole: the conditions start from
 * their inputs' values; a condition the file does not name (a new
 * section) starts so too, and a line of a condition no longer configured
 * is dropped.
 *
 * Broker only, on its loop.  stdio: not on a hot path.
 */
#ifndef BK_ALARMSTATE_H
#define BK_ALARMSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "alarmnode.h"

#define BK_ALARMSTATE_NAME "alarms.state"

/*
 * Read the file at path into an's conditions (their variables written
 * again, in a value batch of their own).  The number of conditions
 * restored; 0 when there is no file; -1 when it is damaged (nothing
 * restored; err says "PATH line N: what").
 */
int bk_alarmstate_load(struct bk_alarmnode *an, const char *path,
                       int64_t now, char *err, size_t errlen);

/* Write an's state to path (atomically).  0, or -1 with err. */
int bk_alarmstate_save(struct bk_alarmnode *an, const char *path, char *err,
                       size_t errlen);

#endif /* BK_ALARMSTATE_H */
