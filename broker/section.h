/*
 * broker/section.h: a table of named configuration sections, `[KIND
 * NAME]` (the `[alarm NAME]` of broker/alarmcfg.c, the `[history NAME]`
 * of broker/histcfg.c): each entry begins with its NAME as a char array,
 * the table grows by doubling while the file is read; and the parsers of
 * their keys' true/false and number values.
 *
 * Broker only, at start.  The table is the caller's (bk_free).
 */
#ifndef BK_SECTION_H
#define BK_SECTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the table holds. */
struct bk_section {
    const char *kind;       /* "alarm": the messages' [alarm NAME] */
    size_t      size;       /* bytes of an entry, its NAME first */
};

/*
 * The entry of section name in the table *tab of *n entries (room for
 * *cap): the last one when it has that name (its keys go on), else a new
 * one at the end, zeroed, with name copied (*fresh true), the table
 * doubled first when full (16 entries the first time; *tab may move).
 * NULL with a message in err: a name seen before, not just before (a
 * second section of that name), or no memory.  The caller has checked
 * the name's form (its length fits the entry's array).
 */
void *bk_section_open(const struct bk_section *k, void **tab, uint32_t *n,
                      uint32_t *cap, const char *name, bool *fresh,
                      char *err, size_t errlen);

/* A section key's true or false: 0, else -1. */
int bk_section_bool(const char *value, bool *out);

/* A section key's finite number in [lo, hi]: 0, else -1. */
int bk_section_num(const char *value, double lo, double hi, double *out);

#endif /* BK_SECTION_H */
