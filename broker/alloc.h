/*
 * broker/alloc.h: the broker's one allocation wrapper (docs/style.md §5).
 *
 * Every heap allocation of the broker goes through these, so the count
 * shows in /stats ("broker": "allocations") and /metrics
 * (uabroker_broker_allocations_total), as the worker's do (worker/
 * alloc.c).  The broker allocates at start (the request drain's and the
 * fan-out's buffers, the feed's arena, the NodeSet import, the stats
 * endpoint's view); in steady state the counter stays still
 * (tests/integ/integ_fanout.c checks it).  libxml2's, libmosquitto's and
 * libevent's own allocations are theirs, not counted.
 *
 * Broker only, single-threaded.
 */
#ifndef BK_ALLOC_H
#define BK_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* malloc(n) (at least 1 byte), counted; NULL when out of memory. */
void *bk_alloc(size_t n);

/* n elements of size bytes, zeroed; NULL on overflow or no memory. */
void *bk_calloc(size_t n, size_t size);

/* The same, its whole pages made present in one call (MADV_POPULATE_WRITE)
 * rather than a page fault each at first use (about 15 us each on a
 * virtual machine, docs/benchmarks.md "Start-up of the whole server"). */
void *bk_calloc_present(size_t n, size_t size);

/* realloc(p, n) (at least 1 byte), counted; NULL: p is left as it was. */
void *bk_realloc(void *p, size_t n);

/* A copy of s (of at most its first n bytes), counted; NULL when out of
 * memory. */
char *bk_strdup(const char *s);
char *bk_strndup(const char *s, size_t n);

/* Free p (NULL: nothing). */
void bk_free(void *p);

/* Allocations so far (every successful call above but bk_free). */
uint64_t bk_alloc_count(void);

#endif /* BK_ALLOC_H */
