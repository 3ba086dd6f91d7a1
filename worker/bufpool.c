/*
 * worker/bufpool.c: the connections' buffers (worker/bufpool.h).
 *
 * Invariants: nbuf_in / nbuf_out count the buffers ever allocated, never
 * more than max each; a buffer is on its free list or held by one
 * connection, never both.  asm_used is the reassembly memory held by all
 * channels, never past asm_budget.
 *
 * Single-threaded, on the worker's loop.
 */
#include "bufpool.h"

#include <string.h>

#define WK_BUFPOOL_ASM_HDR 16       /* size header of asm buffers */

static void *wk_bufpool_asm_alloc(void *ctx, size_t n);
static void wk_bufpool_asm_free(void *ctx, void *p);
static void *wk_bufpool_arena_grow(void *ctx, size_t min, size_t *size);
static void wk_bufpool_arena_release(void *ctx, void *block);

void
wk_bufpool_init(struct wk_bufpool *bp, struct wk_worker *w, uint32_t max,
                size_t in_cap, size_t out_cap, size_t asm_budget,
                size_t arena_block)
{
    memset(bp, 0, sizeof(*bp));
    bp->w = w;
    bp->max = max;
    bp->in_cap = in_cap;
    bp->out_cap = out_cap;
    bp->asm_budget = asm_budget;
    bp->arena_block = arena_block;
    bp->mem.alloc = wk_bufpool_asm_alloc;
    bp->mem.free = wk_bufpool_asm_free;
    bp->mem.ctx = bp;
}

void
wk_bufpool_clear(struct wk_bufpool *bp)
{
    struct wk_bufpool_buf *b;
    struct ua_arena_block *blk;

    if (bp->w == NULL)
        return;
    while ((b = bp->free_in) != NULL) {
        bp->free_in = b->next;
        wk_free(bp->w, b);
    }
    while ((b = bp->free_out) != NULL) {
        bp->free_out = b->next;
        wk_free(bp->w, b);
    }
    while ((blk = bp->free_blocks) != NULL) {
        bp->free_blocks = blk->next;
        wk_free(bp->w, blk);
    }
    wk_free(bp->w, bp->big_spare);
    memset(bp, 0, sizeof(*bp));
}

uint8_t *
wk_bufpool_get(struct wk_bufpool *bp, bool out)
{
    struct wk_bufpool_buf **fl = out ? &bp->free_out : &bp->free_in;
    struct wk_bufpool_buf  *b = *fl;
    uint32_t               *n = out ? &bp->nbuf_out : &bp->nbuf_in;

    if (b != NULL) {
        *fl = b->next;
        return (uint8_t *)b;
    }
    /* Filled lazily, at most one per connection; never given back. */
    if (*n >= bp->max)
        return NULL;
    b = wk_alloc(bp->w, out ? bp->out_cap : bp->in_cap);
    if (b != NULL)
        (*n)++;
    return (uint8_t *)b;
}

void
wk_bufpool_put(struct wk_bufpool *bp, uint8_t *p, bool out)
{
    struct wk_bufpool_buf *b = (struct wk_bufpool_buf *)p;

    if (p == NULL)
        return;
    if (out) {
        b->next = bp->free_out;
        bp->free_out = b;
    } else {
        b->next = bp->free_in;
        bp->free_in = b;
    }
}

uint8_t *
wk_bufpool_big(struct wk_bufpool *bp, size_t need, size_t *cap)
{
    uint8_t *nb;

    need = (need + 4095) & ~(size_t)4095;
    if (bp->big_spare != NULL && bp->big_spare_cap >= need) {
        nb = bp->big_spare;
        *cap = bp->big_spare_cap;
        bp->big_spare = NULL;
        bp->big_spare_cap = 0;
        return nb;
    }
    nb = wk_alloc(bp->w, need);
    *cap = need;
    return nb;
}

void
wk_bufpool_out_put(struct wk_bufpool *bp, uint8_t *buf, size_t cap)
{
    if (buf == NULL)
        return;
    if (cap == bp->out_cap) {
        wk_bufpool_put(bp, buf, true);
    } else if (cap > bp->big_spare_cap) {
        /* Keep the largest oversize buffer for the next large response. */
        wk_free(bp->w, bp->big_spare);
        bp->big_spare = buf;
        bp->big_spare_cap = cap;
    } else {
        wk_free(bp->w, buf);
    }
}

/* Reassembly memory for multi-chunk requests, within the worker budget. */
static void *
wk_bufpool_asm_alloc(void *ctx, size_t n)
{
    struct wk_bufpool *bp = ctx;
    uint8_t           *p;

    if (n > bp->asm_budget - bp->asm_used)
        return NULL;                /* BadTcpNotEnoughResources */
    p = wk_alloc(bp->w, n + WK_BUFPOOL_ASM_HDR);
    if (p == NULL)
        return NULL;
    memcpy(p, &n, sizeof(n));
    bp->asm_used += n;
    return p + WK_BUFPOOL_ASM_HDR;
}

static void
wk_bufpool_asm_free(void *ctx, void *q)
{
    struct wk_bufpool *bp = ctx;
    uint8_t           *p;
    size_t             n;

    if (q == NULL)
        return;
    p = (uint8_t *)q - WK_BUFPOOL_ASM_HDR;
    memcpy(&n, p, sizeof(n));
    bp->asm_used -= n;
    wk_free(bp->w, p);
}

void
wk_bufpool_arena(struct wk_bufpool *bp, struct ua_arena *a)
{
    a->grow = wk_bufpool_arena_grow;
    a->release = wk_bufpool_arena_release;
    a->ctx = bp;
}

/* Arena blocks: arena_block ones are recycled, larger ones freed. */
static void *
wk_bufpool_arena_grow(void *ctx, size_t min, size_t *size)
{
    struct wk_bufpool     *bp = ctx;
    struct ua_arena_block *b;
    size_t                 n = min <= bp->arena_block ? bp->arena_block
                                                      : min;

    if (n == bp->arena_block && bp->free_blocks != NULL) {
        b = bp->free_blocks;
        bp->free_blocks = b->next;
    } else {
        b = wk_alloc(bp->w, n);
        if (b == NULL)
            return NULL;
    }
    *size = n;
    return b;
}

static void
wk_bufpool_arena_release(void *ctx, void *block)
{
    struct wk_bufpool     *bp = ctx;
    struct ua_arena_block *b = block;
    size_t hdr = (sizeof(*b) + UA_ARENA_ALIGN - 1)
                 & ~(size_t)(UA_ARENA_ALIGN - 1);

    if (b->size + hdr == bp->arena_block) {
        b->next = bp->free_blocks;
        bp->free_blocks = b;
    } else {
        wk_free(bp->w, b);
    }
}
