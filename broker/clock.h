/*
 * broker/clock.h: the broker's monotonic clock in milliseconds
 * (CLOCK_MONOTONIC): timeouts, waits and ages, and the time the fan-out
 * stamps on a block, which is the workers' clock too (their now_ms,
 * worker/clock.c).  One reading per call; the broker reads it where it
 * needs it (it has no per-iteration cache).
 */
#ifndef BK_CLOCK_H
#define BK_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t
bk_clock_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#endif /* BK_CLOCK_H */
