/*
 * worker/step.c: the RSA step scheduler (worker/step.h).
 *
 * Single-threaded, on the worker's loop.
 */
#include "step.h"

static void wk_step_on(evutil_socket_t fd, short what, void *arg);

void
wk_step_init(struct wk_step *s, struct wk_loop *l, wk_step_ready_fn ready,
             wk_step_run_fn run, void *arg)
{
    s->loop = l;
    s->ready = ready;
    s->run = run;
    s->arg = arg;
    event_assign(&s->ev, l->w->base, -1, 0, wk_step_on, s);
}

int
wk_step_later(struct wk_step *s)
{
    static const struct timeval now = { 0, 0 };

    return event_add(&s->ev, &now) == 0 ? 0 : -1;
}

void
wk_step_cancel(struct wk_step *s)
{
    event_del(&s->ev);
}

/*
 * The step's event: run it, unless its owner no longer wants it or
 * another step did RSA work in this iteration already; then it waits for
 * the next one.
 */
static void
wk_step_on(evutil_socket_t fd, short what, void *arg)
{
    struct wk_step *s = arg;

    (void)fd;
    (void)what;
    wk_loop_iteration(s->loop);
    if (!s->ready(s->arg))
        return;
    /* One step per iteration.  Should the event not be added again (out
     * of memory in libevent), the step runs now rather than never. */
    if (wk_loopstat_busy(&s->loop->stat) && wk_step_later(s) == 0)
        return;
    s->run(s->arg);
}

void
wk_step_begin(struct wk_step *s, uint64_t *cpu0, uint64_t *ops0)
{
    wk_loopstat_step_begin(&s->loop->stat, cpu0, ops0);
}

void
wk_step_end(struct wk_step *s, uint64_t cpu0, uint64_t ops0)
{
    wk_loopstat_step_end(&s->loop->stat, s->loop->w, cpu0, ops0);
}
