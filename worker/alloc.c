/*
 * worker/alloc.c: the worker's one allocation wrapper (docs/style.md §5).
 *
 * Every heap allocation of the worker goes through wk_alloc so the count
 * shows in its stats row (`allocations`, W: this worker, relaxed; R:
 * broker) and so a test can see that the request path makes none.  Pools
 * and buffers are allocated at start; after that the counter must stay
 * still.
 */
#include "worker.h"

#include <stdatomic.h>
#include <stdlib.h>

void *
wk_alloc(struct wk_worker *w, size_t n)
{
    void *p = malloc(n != 0 ? n : 1);

    if (p != NULL && w != NULL && w->row != NULL)
        atomic_fetch_add_explicit(&w->row->allocations, 1,
                                  memory_order_relaxed);
    return p;
}

void
wk_free(struct wk_worker *w, void *p)
{
    (void)w;
    free(p);
}
