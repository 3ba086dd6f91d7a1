/*
 * tests/lib/itest.h: what every integration program needs besides a
 * client: numbered ok/FAIL lines, the closing "NAME: N passed, M failed"
 * line, a monotonic clock, sleeping, and a free loopback port.
 *
 * Test programs only; link tests/lib/itest.c.  Not thread-safe: checks are
 * made from the main thread.
 */
#ifndef ITEST_H
#define ITEST_H

#include <stdbool.h>
#include <stdint.h>

/* Name the program (for the closing line); call first in main(), before
 * the program's own atexit() handlers (the scratch directories below are
 * removed after those have stopped the broker). */
void itest_init(const char *name);

/* Register dir (made by the program, e.g. with mkdtemp) as scratch: it is
 * removed with everything in it (logs, sockets, PKI folders with private
 * keys) when the program exits with no failure, and kept, with a line
 * naming it, when a check failed.  Up to 32 directories. */
void itest_scratch(const char *dir);

/* Print "ok N - ..." or "FAIL N - ..." and count it; returns ok. */
bool itest_check(bool ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A failure the rest cannot do without: report it, the totals, exit 1. */
void itest_fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Failures so far. */
unsigned itest_failures(void);

/* Print the closing line; the exit status for main(). */
int itest_finish(void);

/* Monotonic milliseconds. */
uint64_t itest_ms(void);

/* Sleep ms milliseconds (EINTR-safe). */
void itest_sleep_ms(unsigned ms);

/* A port of 127.0.0.1 nobody listens on now (the kernel's choice); 0 on
 * failure. */
uint16_t itest_free_port(void);

#endif /* ITEST_H */
