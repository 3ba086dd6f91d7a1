/*
 * worker/timerheap.c: a min-heap of timers (worker/timerheap.h).
 *
 * Invariants: h[0..n) is a binary min-heap on due; pos[h[i].id] == i for
 * every i < n, and pos[id] == WK_TIMERHEAP_NONE for an id not in it.
 *
 * Single-threaded.
 */
#include "timerheap.h"

#include <errno.h>
#include <string.h>

static void wk_timerheap_swap(struct wk_timerheap *th, uint32_t a,
                              uint32_t b);
static void wk_timerheap_up(struct wk_timerheap *th, uint32_t i);
static void wk_timerheap_down(struct wk_timerheap *th, uint32_t i);

int
wk_timerheap_init(struct wk_timerheap *th, struct wk_worker *w, uint32_t cap,
                  uint64_t *allocs)
{
    memset(th, 0, sizeof(*th));
    th->h = wk_alloc(w, (size_t)cap * sizeof(*th->h));
    if (th->h != NULL)
        (*allocs)++;
    th->pos = wk_alloc(w, (size_t)cap * sizeof(*th->pos));
    if (th->pos != NULL)
        (*allocs)++;
    if (th->h == NULL || th->pos == NULL) {
        wk_timerheap_clear(th, w);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < cap; i++)
        th->pos[i] = WK_TIMERHEAP_NONE;
    th->cap = cap;
    return 0;
}

void
wk_timerheap_clear(struct wk_timerheap *th, struct wk_worker *w)
{
    wk_free(w, th->h);
    wk_free(w, th->pos);
    memset(th, 0, sizeof(*th));
}

static void
wk_timerheap_swap(struct wk_timerheap *th, uint32_t a, uint32_t b)
{
    struct wk_timerheap_ent t = th->h[a];

    th->h[a] = th->h[b];
    th->h[b] = t;
    th->pos[th->h[a].id] = a;
    th->pos[th->h[b].id] = b;
}

static void
wk_timerheap_up(struct wk_timerheap *th, uint32_t i)
{
    while (i > 0) {
        uint32_t p = (i - 1) / 2;

        if (th->h[p].due <= th->h[i].due)
            break;
        wk_timerheap_swap(th, i, p);
        i = p;
    }
}

static void
wk_timerheap_down(struct wk_timerheap *th, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;

        if (l < th->n && th->h[l].due < th->h[m].due)
            m = l;
        if (r < th->n && th->h[r].due < th->h[m].due)
            m = r;
        if (m == i)
            return;
        wk_timerheap_swap(th, i, m);
        i = m;
    }
}

void
wk_timerheap_set(struct wk_timerheap *th, uint32_t id, uint64_t due)
{
    uint32_t i = th->pos[id];

    if (i == WK_TIMERHEAP_NONE) {
        i = th->n++;
        th->h[i].id = id;
        th->pos[id] = i;
    }
    th->h[i].due = due;
    wk_timerheap_up(th, i);
    wk_timerheap_down(th, th->pos[id]);
}

void
wk_timerheap_del(struct wk_timerheap *th, uint32_t id)
{
    uint32_t i = th->pos[id];

    if (i == WK_TIMERHEAP_NONE)
        return;
    th->n--;
    if (i != th->n) {
        wk_timerheap_swap(th, i, th->n);
        wk_timerheap_up(th, i);
        wk_timerheap_down(th, i);
    }
    th->pos[id] = WK_TIMERHEAP_NONE;
}
