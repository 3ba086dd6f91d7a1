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
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* A port nobody holds now, below the kernel's ephemeral range (so no
 * outgoing connection takes it before the broker binds it); never the
 * same one twice in a program; 0 on failure. */
uint16_t itest_free_port(void);

/*
 * Processes under test.  itest_spawn() starts a program (the broker) in a
 * process group of its own, killed with this program (PR_SET_PDEATHSIG),
 * its stdout and stderr in log; itest_own() registers another child (a
 * load generator this program forked).  Every registered process is killed
 * on each way out: itest_guard()'s watchdog and signals, and at exit.
 */

/* After seconds (the watchdog), or on SIGINT/SIGTERM: kill every registered
 * process and _exit(1).  At exit: kill them, and print the file log names
 * (the broker's log, read then; may be NULL or empty) when a check failed.
 * Call once, after itest_init(). */
void itest_guard(unsigned seconds, const char *log);

/* fork + exec argv[0] with argv (NULL-terminated) as said above; the pid
 * (fatal when fork fails). */
pid_t itest_spawn(const char *log, char *const argv[]);

/* Kill pid as well on every way out (a child that leads no group). */
void itest_own(pid_t pid);

/* Whether pid still runs (when it ended: reaped and forgotten). */
bool itest_alive(pid_t pid);

/* Wait for pid to end by itself, forget it; its wait status. */
int itest_wait(pid_t pid);

/* SIGKILL pid (and its group when it leads one), reap it, forget it. */
void itest_kill(pid_t pid);

/* SIGTERM pid and wait up to ms for it: its exit status (0..255), or -1
 * when it did not exit by itself in time (it is then killed).  Either way
 * it is reaped and forgotten. */
int itest_stop(pid_t pid, unsigned ms);

/* The uabroker to test: $UABROKER_BIN when set, else ../../uabroker beside
 * the directory of argv0 (build/tests/integ/ -> build/). */
void itest_broker_bin(const char *argv0, char *out, size_t cap);

/* Make a fresh directory $TMPDIR/prefix-XXXXXX (/tmp without TMPDIR),
 * registered with itest_scratch(); fatal when it cannot be made. */
void itest_tmpdir(const char *prefix, char *out, size_t cap);

/* Read a whole file of 1..cap-1 bytes into buf: 0, or -1 (missing, empty,
 * too big).  Write len bytes to path (created or truncated): 0 or -1. */
int itest_read_file(const char *path, uint8_t *buf, size_t cap, size_t *len);
int itest_write_file(const char *path, const uint8_t *buf, size_t len);

/*
 * The broker's stats endpoint on 127.0.0.1:sport.  itest_http(): one
 * HTTP/1.0 exchange; the status code (-1: no answer), *body (malloc'd,
 * NUL-terminated, the part after the headers) when body != NULL.
 * itest_json_find(): just after the first `"key": ` at or after from (NULL:
 * none; from may be NULL); itest_json_u64() parses the number there.
 * itest_worker_u64(): a counter of worker slot's row of GET /stats.
 * itest_wait_health(): poll GET /health until 200 (true), ms passing or
 * broker (when > 0) having exited (false; it is then reaped and forgotten).
 */
int itest_http(uint16_t sport, const char *method, const char *path,
               char **body);
const char *itest_json_find(const char *from, const char *key);
bool itest_json_u64(const char *from, const char *key, uint64_t *out);
bool itest_worker_u64(uint16_t sport, int slot, const char *key,
                      uint64_t *out);
bool itest_wait_health(uint16_t sport, pid_t broker, unsigned ms);

/*
 * Start `bin -w workers -p PORT --stats 127.0.0.1:SPORT --runtime-dir dir`
 * followed by extra (NULL-terminated, may be NULL) on two free loopback
 * ports, its output in log (itest_spawn), and wait up to ms for /health:
 * fatal when it does not come.  The pid; *port and *sport get the ports.
 */
pid_t itest_broker_start(const char *bin, unsigned workers, const char *dir,
                         const char *log, const char *const *extra,
                         unsigned ms, uint16_t *port, uint16_t *sport);

/* mkdir -p path (mode 0700); fatal when path is not a directory after. */
void itest_mkdirs(const char *path);

/*
 * The test client identity in dir (tests/unit/proto/pki): dir/app.der into
 * cert (cap bytes; *len set), dir/app.key.der loaded into key, the
 * certificate's ApplicationUri into uri (NUL-terminated); fatal when any
 * of it fails.  Needs proto/ (ua_crypto_init() first).
 */
struct ua_crypto_key;
void itest_client_identity(const char *dir, uint8_t *cert, size_t cap,
                           size_t *len, struct ua_crypto_key *key,
                           char *uri, size_t uri_cap);

#endif /* ITEST_H */
