/*
 * worker/loop.h: the worker's event loop, one iteration at a time
 * (libevent 2.1).
 *
 *   wk_loop_run:   idle hooks (prepare) -> one event_base_loop() pass
 *                  (EVLOOP_ONCE when every hook may sleep, else
 *                  EVLOOP_NONBLOCK) -> idle hooks (wake) -> again
 *
 *   one pass:      the first callback calls wk_loop_iteration(): the
 *                  clock is read (once per iteration, docs/style.md §6)
 *                  and the `tick` event is activated, so it runs after
 *                  every other callback of the pass: the end-of-iteration
 *                  handlers (the connections' flush and reaping), then
 *                  the loop's statistics (worker/loopstat.h)
 *
 *   once a second: the heartbeat in the row, then the second handlers
 *                  (session timeouts, channel deadlines, accept resumed)
 *
 * Why a loop of our own: libevent 2.1 offers no callback "before the
 * backend blocks" (evwatch_prepare came with 2.2).  One event_base_loop()
 * call with EVLOOP_ONCE is one iteration that may block; with
 * EVLOOP_NONBLOCK one that only polls.  The hooks run between iterations,
 * which is exactly "before sleeping" (docs/architecture.md §3, the
 * consumer side): a hook does its pending work (drains its rings) and arms
 * its wake-up (shm_ring_sleep_prepare); when every hook says it may sleep,
 * the iteration blocks, otherwise it only polls and the hooks run again
 * right after.  After each iteration every hook's wake function runs
 * (shm_ring_wake_clear).  Work a hook produces (a response) flushes in the
 * same iteration: it calls wk_loop_iteration(), and an active event keeps
 * the iteration from blocking.
 *
 * The handlers are registered at start-up (fixed tables, no allocation).
 * Single-threaded: everything runs on the worker's one event loop.
 */
#ifndef WK_LOOP_H
#define WK_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "loopstat.h"
#include "worker.h"

/*
 * Idle hooks (wk_loop_hook_add).  prepare: do the pending work, then arm
 * the wake-up; true when the loop may block until an fd or timer fires,
 * false when more work is already waiting.  wake (may be NULL): after the
 * iteration, before the next prepare.
 */
typedef bool (*wk_loop_prepare_fn)(struct wk_worker *w, void *arg);
typedef void (*wk_loop_wake_fn)(struct wk_worker *w, void *arg);
/* An end-of-iteration or once-a-second handler. */
typedef void (*wk_loop_fn)(void *arg);

#define WK_LOOP_HOOKS_MAX   4
#define WK_LOOP_FNS_MAX     4

struct wk_loop_hook {
    wk_loop_prepare_fn prepare;
    wk_loop_wake_fn    wake;
    void              *arg;
};

struct wk_loop_call {
    wk_loop_fn fn;
    void      *arg;
};

struct wk_loop {
    struct wk_worker   *w;
    struct event        tick;           /* end of iteration */
    struct event        timer;          /* once a second */
    bool                tick_pending;   /* tick is active this iteration */
    struct wk_loop_hook hooks[WK_LOOP_HOOKS_MAX];
    uint32_t            nhooks;
    struct wk_loop_call ends[WK_LOOP_FNS_MAX];
    uint32_t            nends;
    struct wk_loop_call seconds[WK_LOOP_FNS_MAX];
    uint32_t            nseconds;
    struct wk_loopstat  stat;
};

/* Set up the tick and the one-second timer on w->base.  0 or -ENOMEM. */
int wk_loop_init(struct wk_loop *l, struct wk_worker *w);

/* Delete the events. */
void wk_loop_clear(struct wk_loop *l);

/*
 * Called first by every callback (and by anything that may run outside
 * one: an idle hook producing a response): read the clock once per loop
 * iteration and make sure the tick runs at the end of it.
 */
static inline void wk_loop_iteration(struct wk_loop *l);

/* Register an idle hook (see the top comment).  0; -ENOSPC. */
int wk_loop_hook_add(struct wk_loop *l, wk_loop_prepare_fn prepare,
                     wk_loop_wake_fn wake, void *arg);

/* Register an end-of-iteration handler (run by the tick, in order of
 * registration).  0; -ENOSPC. */
int wk_loop_on_end(struct wk_loop *l, wk_loop_fn fn, void *arg);

/* Register a once-a-second handler.  0; -ENOSPC. */
int wk_loop_on_second(struct wk_loop *l, wk_loop_fn fn, void *arg);

/*
 * Run the loop until w->stopping: hooks, one libevent iteration, wakes.
 * 0, or -1 when event_base_loop() failed.
 */
int wk_loop_run(struct wk_loop *l);

/* Out of line: the first callback of an iteration. */
void wk_loop_begin(struct wk_loop *l);

static inline void
wk_loop_iteration(struct wk_loop *l)
{
    if (!l->tick_pending)
        wk_loop_begin(l);
}

#endif /* WK_LOOP_H */
