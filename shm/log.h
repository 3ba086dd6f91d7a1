/*
 * shm/log.h: the one log of a uabroker process (broker or worker), with
 * levels.
 *
 * Every line goes to one file descriptor (standard error), whole, in one
 * write(2), so the lines of the broker and its workers, which share that
 * descriptor, never interleave inside a line.  A line is
 *
 *   on a terminal:      "uabroker: warning: message\n"
 *   anywhere else:      "<4>uabroker: message\n"
 *
 * The "<N>" prefix is the syslog priority (sd-daemon(3) SD_WARNING and
 * the others), which journald reads off the line and strips
 * (SyslogLevelPrefix=, on by default), so a unit's log keeps its levels
 * in `journalctl -p`.  The identity is the process's: "uabroker",
 * "uaworker 3".
 *
 * The threshold is one number: a line is written when its level is at or
 * below it (error 3 ... debug 7, the syslog order).  It is read through a
 * pointer at every call, so it may live in the shared-memory
 * configuration snapshot (struct shm_config.log_level), where the broker
 * changes it on SIGHUP and every worker sees the change at once.  Until a
 * process points it there it is a local default (SHM_LOG_INFO).
 *
 * This is the one file of shm/ that does I/O (docs/architecture.md
 * "Modules"): the log is the helper both processes need, and a process
 * has one log, so its state (identity, threshold pointer, terminal or
 * not) is process-wide.  Lines are cut at SHM_LOG_LINE_MAX bytes; no
 * allocation, safe to call at any time after shm_log_open() (and before
 * it, as "uabroker").  Not from a signal handler.
 */
#ifndef SHM_LOG_H
#define SHM_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* The levels: syslog(3) priorities, as journald reads them. */
enum shm_log_level {
    SHM_LOG_ERROR   = 3,        /* the process, or a part of it, fails */
    SHM_LOG_WARNING = 4,        /* something refused, lost or degraded */
    SHM_LOG_NOTICE  = 5,        /* normal but significant: start, stop,
                                 * reload, a worker respawned */
    SHM_LOG_INFO    = 6,        /* what an operator may want to follow */
    SHM_LOG_DEBUG   = 7,        /* what a developer wants */
};

#define SHM_LOG_DEFAULT  SHM_LOG_INFO
#define SHM_LOG_LINE_MAX 1024   /* bytes of one line, prefix included */
#define SHM_LOG_IDENT_MAX 32

/*
 * Name this process's lines (ident, cut at SHM_LOG_IDENT_MAX - 1 bytes)
 * and send them to fd.  Whether fd is a terminal is decided here, once.
 */
void shm_log_open(const char *ident, int fd);

/*
 * Read the threshold through level from now on (a field that another
 * process may store to, read relaxed); NULL: back to the local one.
 */
void shm_log_level_at(const _Atomic uint32_t *level);

/* Set the local threshold (used while no shared one is set). */
void shm_log_set_level(enum shm_log_level max);

/* Whether a line at level l is written now. */
bool shm_log_on(enum shm_log_level l);

/* Write one line at level l (a newline is added; a trailing one is not
 * doubled). */
void shm_log(enum shm_log_level l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void shm_log_v(enum shm_log_level l, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/*
 * "error", "warning", "notice", "info", "debug" to their level; -1 for
 * anything else.  shm_log_level_name is the inverse ("?" out of range).
 */
int shm_log_level_parse(const char *s);
const char *shm_log_level_name(int l);

#endif /* SHM_LOG_H */
