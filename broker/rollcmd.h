/*
 * broker/rollcmd.h: the broker's pid file and the `uabroker
 * restart-workers` command that reads it (docs/operations.md "Rolling
 * restart"; the restart itself: broker/supervisor.h bk_supervisor_roll).
 */
#ifndef BK_ROLLCMD_H
#define BK_ROLLCMD_H

#include <stdio.h>

#include "config.h"

#define BK_ROLLCMD_PIDFILE "uabroker.pid"   /* in server.runtime_dir */

/* Write <runtime_dir>/uabroker.pid (this process).  0 or -errno. */
int bk_rollcmd_pidfile_write(const struct bk_config *c);

/* Remove it (when it still names this process). */
void bk_rollcmd_pidfile_remove(const struct bk_config *c);

/*
 * `uabroker [options] restart-workers`: SIGUSR2 to the broker of
 * configuration c (its pid file in server.runtime_dir).  Exit code: 0
 * (asked), 1 (no broker running there).
 */
int bk_rollcmd_run(const struct bk_config *c, FILE *out, FILE *err);

#endif /* BK_ROLLCMD_H */
