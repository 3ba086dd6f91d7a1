/*
 * hist/store_int.h: what hist/events.c takes of a store (hist/store.h):
 * the LMDB environment the two share (one per process: LMDB forbids
 * opening an environment twice in one process), whether the handle is a
 * reader's, and the store's error text and full flag for an LMDB error of
 * the events' databases.
 */
#ifndef HS_STORE_INT_H
#define HS_STORE_INT_H

#include <stdbool.h>

#include "store.h"

/* The MDB_env of s. */
void *hs_store_env(struct hs_store *s);

bool hs_store_readonly(const struct hs_store *s);

/*
 * LMDB error rc of what: the store's error text set, the store marked
 * full on MDB_MAP_FULL or ENOSPC; -ENOSPC, -ENOENT (MDB_NOTFOUND) or
 * -EIO.
 */
int hs_store_fail(struct hs_store *s, int rc, const char *what);

#endif /* HS_STORE_INT_H */
