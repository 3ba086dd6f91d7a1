/*
 * worker/histside.c: the historian's figures of the side databases
 * (worker/histside.h).
 *
 * Invariant: the row's figures are those of the last committed state the
 * historian saw (hs_side_stat() reads them in a read transaction of its
 * own); a store without side databases yet publishes zeros.
 *
 * Concurrency: the historian's loop writes the row's counters (relaxed
 * atomics); the broker's /stats reads them.
 */
#include "histside.h"

#include <stdatomic.h>

#include "hist/side.h"

void
wk_histside_publish(struct hs_store *s, struct shm_worker *r)
{
    uint64_t n, b;

    if (hs_side_stat(s, HS_SIDE_MODIFIED, &n, &b) == 0) {
        atomic_store_explicit(&r->hist_modified, n, memory_order_relaxed);
        atomic_store_explicit(&r->hist_modified_bytes, b,
                              memory_order_relaxed);
    }
    if (hs_side_stat(s, HS_SIDE_ANNOTS, &n, &b) == 0) {
        atomic_store_explicit(&r->hist_annotations, n, memory_order_relaxed);
        atomic_store_explicit(&r->hist_annotation_bytes, b,
                              memory_order_relaxed);
    }
}
