/*
 * tests/bench/benchlib.h: what the micro benchmarks share (bench_codec.c,
 * bench_addrspace.c, bench_sc_security.c): the clock, the median of the
 * timed runs, the date and machine of a table's caption, and the rewrite
 * of one marked section of a Markdown file (--markdown FILE).
 */
#ifndef BENCHLIB_H
#define BENCHLIB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The machine line of the Markdown captions. */
#define BENCHLIB_MACHINE "2 vCPU KVM guest, shared; ratios within one run " \
                         "are what count"

/* CLOCK_MONOTONIC in ns. */
uint64_t benchlib_now(void);

/* Sorts v[0..n) in place (n > 0) and returns its median, v[n / 2]. */
double benchlib_median(double *v, size_t n);

/*
 * Today's UTC date (YYYY-MM-DD) into date, uname()'s machine (or
 * "unknown") into machine; both always terminated.
 */
void benchlib_stamp(char *date, size_t dcap, char *machine, size_t mcap);

/*
 * Write the section begin, section(f, ctx), end (each marker on a line of
 * its own) into the Markdown file path: in place of the text from begin to
 * end when both markers are there, else appended after a blank line (path
 * created when missing).  The rest of the file is kept byte for byte; the
 * file is replaced through path.tmp and rename().  0, or -1 with a message
 * on stderr.
 */
int benchlib_markdown(const char *path, const char *begin, const char *end,
                      void (*section)(FILE *f, void *ctx), void *ctx);

#endif /* BENCHLIB_H */
