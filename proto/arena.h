/*
 * proto/arena.h: bump allocator for everything a decoded message holds.
 *
 * The first block is the caller's buffer.  When it runs out the arena asks
 * the caller's grow hook for another block (a worker hands out pooled
 * blocks); without a hook an exhausted arena fails.  ua_arena_reset() gives
 * every grown block back through the release hook and starts over, so a
 * request costs no malloc and nothing is freed field by field.
 *
 * Not thread-safe; one arena per request in flight.
 */
#ifndef UA_ARENA_H
#define UA_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define UA_ARENA_ALIGN 8

/* A grown block: its header sits at the start of the block. */
struct ua_arena_block {
    struct ua_arena_block *next;
    size_t                 size;    /* usable bytes after the header */
};

struct ua_arena {
    uint8_t               *base;    /* caller's first block */
    size_t                 cap;
    uint8_t               *p;       /* next free byte of the current block */
    uint8_t               *end;
    struct ua_arena_block *grown;   /* blocks from grow(), newest first */
    size_t                 used;    /* bytes handed out since reset */
    size_t                 limit;   /* 0: no limit beyond the blocks */
    /* Return a block of at least min bytes (header included) in *size. */
    void                *(*grow)(void *ctx, size_t min, size_t *size);
    void                 (*release)(void *ctx, void *block);
    void                  *ctx;
};

/* Start an arena over buf[cap]; grow/release may be NULL. */
void ua_arena_init(struct ua_arena *a, void *buf, size_t cap);

/* n bytes aligned to UA_ARENA_ALIGN, or NULL when exhausted. Not zeroed. */
void *ua_arena_alloc_slow(struct ua_arena *a, size_t n);

static inline void *
ua_arena_alloc(struct ua_arena *a, size_t n)
{
    size_t r = (n + (UA_ARENA_ALIGN - 1)) & ~(size_t)(UA_ARENA_ALIGN - 1);
    if (r >= n && (size_t)(a->end - a->p) >= r
        && (a->limit == 0 || a->used + r <= a->limit)) {
        void *q = a->p;
        a->p += r;
        a->used += r;
        return q;
    }
    return ua_arena_alloc_slow(a, n);
}

/* Forget every allocation; release grown blocks. */
void ua_arena_reset(struct ua_arena *a);

#endif /* UA_ARENA_H */
