/*
 * worker/clock.c: the worker's cached clocks (docs/style.md §6: read the clock
 * once per loop iteration, like nginx ngx_time_update).
 *
 *   now_ms   CLOCK_MONOTONIC in milliseconds: timeouts and deadlines
 *   now_ns   the same reading in nanoseconds (the loop's busy time)
 *   now_dt   CLOCK_REALTIME as an OPC UA DateTime (100 ns ticks since
 *            1601-01-01 UTC, Part 6 §5.2.2.5): response timestamps
 */
#include "worker.h"

#include <time.h>

#include "proto/types.h"

void
wk_clock_update(struct wk_worker *w)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    w->now_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    w->now_ms = w->now_ns / 1000000u;
    clock_gettime(CLOCK_REALTIME, &ts);
    w->now_dt = UA_DATETIME_UNIX_EPOCH + (int64_t)ts.tv_sec * 10000000
                + ts.tv_nsec / 100;
}
