/*
 * broker/section.c: a table of named configuration sections (section.h).
 *
 * An entry's NAME is the NUL-terminated char array at its start; the
 * names are compared with strcmp.  A search of every name per new
 * section: tables of a configuration file's sections, read once.
 */
#include "section.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static const char *bk_section_name(const void *tab, size_t size,
                                   uint32_t i);

/* Entry i's NAME. */
static const char *
bk_section_name(const void *tab, size_t size, uint32_t i)
{
    return (const char *)tab + (size_t)i * size;
}

void *
bk_section_open(const struct bk_section *k, void **tab, uint32_t *n,
                uint32_t *cap, const char *name, bool *fresh, char *err,
                size_t errlen)
{
    uint8_t *e;

    *fresh = false;
    if (*n != 0 && strcmp(bk_section_name(*tab, k->size, *n - 1), name) == 0)
        return (uint8_t *)*tab + (size_t)(*n - 1) * k->size;
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(bk_section_name(*tab, k->size, i), name) == 0) {
            snprintf(err, errlen, "[%s %s]: a second section of that name",
                     k->kind, name);
            return NULL;
        }
    if (*n == *cap) {
        uint32_t c = *cap != 0 ? 2 * *cap : 16;
        void    *p = bk_realloc(*tab, (size_t)c * k->size);

        if (p == NULL) {
            snprintf(err, errlen, "%s sections: out of memory", k->kind);
            return NULL;
        }
        *tab = p;
        *cap = c;
    }
    e = (uint8_t *)*tab + (size_t)(*n)++ * k->size;
    memset(e, 0, k->size);
    memcpy(e, name, strlen(name) + 1);
    *fresh = true;
    return e;
}

int
bk_section_bool(const char *value, bool *out)
{
    if (strcmp(value, "true") == 0)
        *out = true;
    else if (strcmp(value, "false") == 0)
        *out = false;
    else
        return -1;
    return 0;
}

int
bk_section_num(const char *value, double lo, double hi, double *out)
{
    char  *end;
    double d;

    errno = 0;
    d = strtod(value, &end);
    if (end == value || *end != '\0' || errno != 0 || !isfinite(d)
        || d < lo || d > hi)
        return -1;
    *out = d;
    return 0;
}
