/*
 * broker/alloc.c: the broker's allocation wrapper (alloc.h).
 *
 * The count is the process's own (the broker serves /stats itself): a
 * plain counter, written and read on the broker's one thread.
 */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm/segment.h"

static uint64_t bk_alloc_n;

void *
bk_alloc(size_t n)
{
    void *p = malloc(n != 0 ? n : 1);

    if (p != NULL)
        bk_alloc_n++;
    return p;
}

void *
bk_calloc_present(size_t n, size_t size)
{
    void *p = bk_calloc(n, size);

    if (p != NULL)                  /* bk_calloc refused an overflow */
        (void)shm_mem_populate(p, (uint64_t)n * size, true);
    return p;
}

void *
bk_calloc(size_t n, size_t size)
{
    void *p;

    /* Refused here, not by libc: an overflow is the caller's bug. */
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    p = calloc(n != 0 ? n : 1, size != 0 ? size : 1);

    if (p != NULL)
        bk_alloc_n++;
    return p;
}

void *
bk_realloc(void *p, size_t n)
{
    void *q = realloc(p, n != 0 ? n : 1);

    if (q != NULL)
        bk_alloc_n++;
    return q;
}

char *
bk_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char  *p = bk_alloc(n);

    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

char *
bk_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char  *p = bk_alloc(len + 1);

    if (p != NULL) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

void
bk_free(void *p)
{
    free(p);
}

uint64_t
bk_alloc_count(void)
{
    return bk_alloc_n;
}
