/*
 * worker/loop.c: the worker's event loop (worker/loop.h).
 *
 * Invariants: tick_pending is true from an iteration's first callback
 * (wk_loop_begin) until its tick ran; the tick is active exactly then,
 * so nothing a callback left for the end of the iteration (a dirty
 * connection, one closing) outlives it.
 *
 * Single-threaded, on the worker's loop.
 */
#include "loop.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "shm/layout.h"

static void wk_loop_on_tick(evutil_socket_t fd, short what, void *arg);
static void wk_loop_on_timer(evutil_socket_t fd, short what, void *arg);
static int wk_loop_add(struct wk_loop_call *t, uint32_t *n, wk_loop_fn fn,
                       void *arg);

int
wk_loop_init(struct wk_loop *l, struct wk_worker *w)
{
    struct timeval one = { 1, 0 };

    memset(l, 0, sizeof(*l));
    l->w = w;
    event_assign(&l->tick, w->base, -1, 0, wk_loop_on_tick, l);
    event_assign(&l->timer, w->base, -1, EV_PERSIST, wk_loop_on_timer, l);
    if (event_add(&l->timer, &one) != 0) {
        memset(l, 0, sizeof(*l));
        return -ENOMEM;
    }
    return 0;
}

void
wk_loop_clear(struct wk_loop *l)
{
    if (l->w == NULL)
        return;
    event_del(&l->tick);
    event_del(&l->timer);
    memset(l, 0, sizeof(*l));
}

/*
 * The first callback of an iteration: read the clock and activate the
 * tick.  The tick is activated after the callbacks epoll reported this
 * iteration, so it runs after all of them.
 */
void
wk_loop_begin(struct wk_loop *l)
{
    l->tick_pending = true;
    wk_clock_update(l->w);
    wk_loopstat_begin(&l->stat, l->w);
    event_active(&l->tick, EV_TIMEOUT, 1);
}

static int
wk_loop_add(struct wk_loop_call *t, uint32_t *n, wk_loop_fn fn, void *arg)
{
    if (*n == WK_LOOP_FNS_MAX || fn == NULL)
        return -ENOSPC;
    t[*n].fn = fn;
    t[*n].arg = arg;
    (*n)++;
    return 0;
}

int
wk_loop_on_end(struct wk_loop *l, wk_loop_fn fn, void *arg)
{
    return wk_loop_add(l->ends, &l->nends, fn, arg);
}

int
wk_loop_on_second(struct wk_loop *l, wk_loop_fn fn, void *arg)
{
    return wk_loop_add(l->seconds, &l->nseconds, fn, arg);
}

int
wk_loop_hook_add(struct wk_loop *l, wk_loop_prepare_fn prepare,
                 wk_loop_wake_fn wake, void *arg)
{
    if (l->nhooks == WK_LOOP_HOOKS_MAX || prepare == NULL)
        return -ENOSPC;
    l->hooks[l->nhooks].prepare = prepare;
    l->hooks[l->nhooks].wake = wake;
    l->hooks[l->nhooks].arg = arg;
    l->nhooks++;
    return 0;
}

/* The end of a loop iteration: its handlers, then its statistics. */
static void
wk_loop_on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct wk_loop *l = arg;

    (void)fd;
    (void)what;
    for (uint32_t i = 0; i < l->nends; i++)
        l->ends[i].fn(l->ends[i].arg);
    wk_loopstat_end(&l->stat, l->w);
    l->tick_pending = false;
}

/* Once a second: the heartbeat, then the second handlers. */
static void
wk_loop_on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct wk_loop   *l = arg;
    struct wk_worker *w = l->w;

    (void)fd;
    (void)what;
    wk_loop_iteration(l);
    atomic_store_explicit(&w->row->heartbeat, w->now_dt,
                          memory_order_relaxed);
    for (uint32_t i = 0; i < l->nseconds; i++)
        l->seconds[i].fn(l->seconds[i].arg);
}

int
wk_loop_run(struct wk_loop *l)
{
    struct wk_worker *w = l->w;
    bool              sleep;
    int               rc;

    while (!w->stopping) {
        sleep = true;
        for (uint32_t i = 0; i < l->nhooks; i++) {
            if (!l->hooks[i].prepare(w, l->hooks[i].arg))
                sleep = false;
        }
        rc = event_base_loop(w->base, sleep ? EVLOOP_ONCE : EVLOOP_NONBLOCK);
        if (rc == -1)
            return -1;
        for (uint32_t i = 0; i < l->nhooks; i++)
            if (l->hooks[i].wake != NULL)
                l->hooks[i].wake(w, l->hooks[i].arg);
        if (event_base_got_break(w->base))
            break;
    }
    return 0;
}
