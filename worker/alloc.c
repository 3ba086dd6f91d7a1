/*
 * worker/alloc.c: the worker's one allocation wrapper (docs/style.md §5).
 *
 * Every heap allocation of the worker goes through wk_alloc so the count
 * shows in its stats row (`allocations`, W: this worker, relaxed; R:
 * broker) and so a test can see that the request path makes none.  Pools
 * and buffers are allocated at start; after that the counter must stay
 * still.
 *
 * Big pools are not memset (a page fault per page: about 15 us each on a
 * virtual machine, docs/benchmarks.md "Start-up of the whole server"):
 * wk_calloc leaves them untouched (glibc's calloc does not clear fresh
 * mmap'd memory), their pages faulted in as entries are first used: for
 * a pool taken by index (the connections).  wk_calloc_present has the
 * kernel allocate every page in one call (MADV_POPULATE_WRITE, a tenth of
 * the faults' cost): for a pool scanned whole (the sessions), which must
 * not be read through the shared zero page, one TLB entry per page of
 * nothing.
 */
#include "worker.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "shm/segment.h"

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

void *
wk_calloc(struct wk_worker *w, size_t n, size_t size)
{
    void *p = calloc(n != 0 ? n : 1, size != 0 ? size : 1);

    if (p != NULL && w != NULL && w->row != NULL)
        atomic_fetch_add_explicit(&w->row->allocations, 1,
                                  memory_order_relaxed);
    return p;
}

void *
wk_calloc_present(struct wk_worker *w, size_t n, size_t size)
{
    void *p = wk_calloc(w, n, size);

    /* The whole pages inside [p, p + n * size): the rest is touched by
     * calloc's own bookkeeping or shared with other allocations. */
    if (p != NULL && (size == 0 || n <= SIZE_MAX / size))
        (void)shm_mem_populate(p, (uint64_t)n * size, true);
    return p;
}
