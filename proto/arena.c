/*
 * proto/arena.c: the request arena (see arena.h).
 */
#include "arena.h"

#include <stddef.h>
#include <stdint.h>

#define UA_ARENA_GROW_MIN 4096

static size_t ua_arena_round(size_t n);

static size_t
ua_arena_round(size_t n)
{
    return (n + (UA_ARENA_ALIGN - 1)) & ~(size_t)(UA_ARENA_ALIGN - 1);
}

void
ua_arena_init(struct ua_arena *a, void *buf, size_t cap)
{
    uint8_t *b = buf;
    size_t   skew = (size_t)((uintptr_t)b & (UA_ARENA_ALIGN - 1));

    if (skew != 0 && cap >= UA_ARENA_ALIGN - skew) {
        b += UA_ARENA_ALIGN - skew;
        cap -= UA_ARENA_ALIGN - skew;
    }
    a->base = b;
    a->cap = cap;
    a->p = b;
    a->end = b + cap;
    a->grown = NULL;
    a->used = 0;
    a->limit = 0;
    a->grow = NULL;
    a->release = NULL;
    a->ctx = NULL;
}

void *
ua_arena_alloc_slow(struct ua_arena *a, size_t n)
{
    size_t                 r = ua_arena_round(n);
    size_t                 want, got = 0;
    struct ua_arena_block *blk;
    uint8_t               *q;

    if (r < n)
        return NULL;                            /* overflow */
    if (a->limit != 0 && (a->used > a->limit || r > a->limit - a->used))
        return NULL;
    if ((size_t)(a->end - a->p) >= r) {         /* only the limit path */
        q = a->p;
        a->p += r;
        a->used += r;
        return q;
    }
    if (a->grow == NULL)
        return NULL;
    want = ua_arena_round(sizeof(*blk)) + r;
    if (want < UA_ARENA_GROW_MIN)
        want = UA_ARENA_GROW_MIN;
    blk = a->grow(a->ctx, want, &got);
    if (blk == NULL || got < want)  {
        if (blk != NULL && a->release != NULL)
            a->release(a->ctx, blk);
        return NULL;
    }
    blk->size = got - ua_arena_round(sizeof(*blk));
    blk->next = a->grown;
    a->grown = blk;
    a->p = (uint8_t *)blk + ua_arena_round(sizeof(*blk));
    a->end = a->p + blk->size;
    q = a->p;
    a->p += r;
    a->used += r;
    return q;
}

void
ua_arena_reset(struct ua_arena *a)
{
    struct ua_arena_block *b, *next;

    for (b = a->grown; b != NULL; b = next) {
        next = b->next;
        if (a->release != NULL)
            a->release(a->ctx, b);
    }
    a->grown = NULL;
    a->p = a->base;
    a->end = a->base + a->cap;
    a->used = 0;
}
