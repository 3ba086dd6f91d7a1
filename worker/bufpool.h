/*
 * worker/bufpool.h: the connections' buffers (docs/style.md §5): fixed-
 * size `in` buffers (the largest chunk we accept) and `out` buffers (two
 * chunks and an ERR), the one oversize output buffer kept for large
 * responses, the reassembly memory of multi-chunk requests within a
 * worker-wide budget, and the request arena's blocks.
 *
 * Each buffer is allocated once, through wk_alloc, lazily (at most one of
 * each kind per connection) and recycled forever on a free list: an idle
 * connection holds none, and in steady state a request costs no heap
 * allocation.  A reassembly buffer and an arena block larger than the
 * usual one are the exceptions (allocated and freed; counted).
 *
 * Single-threaded, on the worker's loop.
 */
#ifndef WK_BUFPOOL_H
#define WK_BUFPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/securechannel.h"
#include "worker.h"

/* A free buffer on one of the free lists. */
struct wk_bufpool_buf {
    struct wk_bufpool_buf *next;
};

struct wk_bufpool {
    struct wk_worker      *w;
    uint32_t               max;         /* buffers of each kind */
    size_t                 in_cap;      /* the largest chunk we accept */
    size_t                 out_cap;     /* 2 chunks + room for an ERR */
    struct wk_bufpool_buf *free_in;
    struct wk_bufpool_buf *free_out;
    uint32_t               nbuf_in;     /* allocated so far */
    uint32_t               nbuf_out;
    uint8_t               *big_spare;   /* one kept oversize `out` buffer */
    size_t                 big_spare_cap;
    /* Reassembly of multi-chunk requests: a worker-wide byte budget. */
    struct ua_sc_mem       mem;         /* ctx: this pool */
    size_t                 asm_used;
    size_t                 asm_budget;
    /* The request arena's blocks. */
    size_t                 arena_block;
    struct ua_arena_block *free_blocks; /* spare grown blocks */
};

/*
 * A pool of at most max `in` buffers of in_cap bytes and max `out`
 * buffers of out_cap bytes, asm_budget bytes of reassembly memory, arena
 * blocks of arena_block bytes.  Allocates nothing yet.
 */
void wk_bufpool_init(struct wk_bufpool *bp, struct wk_worker *w, uint32_t max,
                     size_t in_cap, size_t out_cap, size_t asm_budget,
                     size_t arena_block);

/* Free every buffer on the free lists and the spare. */
void wk_bufpool_clear(struct wk_bufpool *bp);

/* A pooled `in` (in_cap) or `out` (out_cap) buffer, or NULL. */
uint8_t *wk_bufpool_get(struct wk_bufpool *bp, bool out);

/* Give a pooled buffer back (NULL: nothing). */
void wk_bufpool_put(struct wk_bufpool *bp, uint8_t *p, bool out);

/*
 * An output buffer of at least need bytes (a multiple of 4096): the
 * oversize spare when it is large enough, else a new one.  *cap its size;
 * NULL when out of memory.
 */
uint8_t *wk_bufpool_big(struct wk_bufpool *bp, size_t need, size_t *cap);

/* Give an output buffer of cap bytes back: pooled, kept as the spare (the
 * largest oversize one), or freed. */
void wk_bufpool_out_put(struct wk_bufpool *bp, uint8_t *buf, size_t cap);

/* Let arena a grow in this pool's blocks (recycled when arena_block
 * bytes, freed when larger). */
void wk_bufpool_arena(struct wk_bufpool *bp, struct ua_arena *a);

#endif /* WK_BUFPOOL_H */
