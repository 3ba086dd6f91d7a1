/*
 * worker/step.h: the RSA step scheduler (docs/architecture.md §4).
 *
 * A private-key operation costs ~2 ms, so it never runs in a read
 * callback: work that needs one (an OPN, a CreateSession or
 * ActivateSession request) is held and done in steps of at most one
 * private-key operation (or one slice of a password hash), each in a loop
 * iteration of its own:
 *
 *   - a step runs after an epoll, never in the iteration that queued it
 *     (a zero timeout, not event_active(): an active event would run in
 *     this very iteration, before any other channel had a chance to be
 *     read);
 *   - a step runs only if no other step did RSA work in this iteration
 *     (one RSA operation per loop iteration, worker-wide, so every other
 *     channel waits for one operation at most); otherwise it waits for
 *     the next one.  Steps queue on zero timeouts, so they take turns in
 *     arrival order;
 *   - a step's CPU time and private-key operations go to the loop's
 *     statistics (worker/loopstat.h).
 *
 * The scheduler knows nothing of connections: the owner of a step (a
 * connection, worker/conn.c) says whether it still wants it (ready) and
 * does it (run), calling wk_step_begin() just before its RSA work and
 * wk_step_end() after.
 *
 * Single-threaded, on the worker's loop.
 */
#ifndef WK_STEP_H
#define WK_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "loop.h"

typedef bool (*wk_step_ready_fn)(void *arg);
typedef void (*wk_step_run_fn)(void *arg);

/* One owner's step (embedded in it). */
struct wk_step {
    struct event      ev;           /* zero timeout: the next step */
    struct wk_loop   *loop;
    wk_step_ready_fn  ready;        /* still wants the step? */
    wk_step_run_fn    run;          /* the step itself */
    void             *arg;
};

/* Bind s to the loop and its owner's two functions (no event added). */
void wk_step_init(struct wk_step *s, struct wk_loop *l, wk_step_ready_fn ready,
                  wk_step_run_fn run, void *arg);

/* The next step, in a later loop iteration.  0; -1 when the event could
 * not be added (the owner gives up on its work). */
int wk_step_later(struct wk_step *s);

/* No step is due any more (the owner closes). */
void wk_step_cancel(struct wk_step *s);

/* Inside run: the RSA work begins now (it is this iteration's). */
void wk_step_begin(struct wk_step *s, uint64_t *cpu0, uint64_t *ops0);

/* Inside run: the RSA work ended (its cost, to the statistics). */
void wk_step_end(struct wk_step *s, uint64_t cpu0, uint64_t ops0);

#endif /* WK_STEP_H */
