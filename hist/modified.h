/*
 * hist/modified.h: the modified values of the history store (Part 11
 * §3.1.7 ModifiedValues, §6.5.3.3 "Read modified functionality"): what
 * HistoryUpdate inserted, replaced, updated or deleted, each with its
 * ModificationInfo (modificationTime, updateType, userName), kept in the
 * store's side database "modified" (hist/side.h) by the same write
 * transaction that changes the samples.
 *
 * What is kept (Part 11 §6.5.3.3): for an insert (or an update that
 * inserted) the value inserted, updateType Insert; for a replace the
 * value it replaced, Replace; for an update that replaced the value it
 * replaced, Update; for a delete each value deleted, Delete.  The values
 * the historian appends from the address space are not modifications.
 *
 * An entry's key suffix is its modification time (8 bytes, big-endian:
 * entries of one time in the order they were made; a later one of the
 * same tick takes the next tick); its value is
 *
 *   uint8  updateType (HistoryUpdateType, Part 11 §6.6.4)
 *   uint8  userName length, then the name's bytes
 *   the sample packed after its own time (hist/sample.h)
 *
 * Concurrency and errors as hist/store.h.
 */
#ifndef HS_MODIFIED_H
#define HS_MODIFIED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "side.h"
#include "store.h"

#define HS_MOD_USER_MAX 255u

/* HistoryUpdateType (Part 11 §6.6.4). */
enum hs_mod_type {
    HS_MOD_INSERT = 1,
    HS_MOD_REPLACE = 2,
    HS_MOD_UPDATE = 3,
    HS_MOD_DELETE = 4
};

/* Who changes history, and when (DateTime ticks). */
struct hs_mod_who {
    int64_t     time;
    const char *user;
    size_t      user_len;       /* at most HS_MOD_USER_MAX used */
};

/* A kept modification as read back (user points into the map). */
struct hs_mod_info {
    int64_t          time;
    enum hs_mod_type type;
    const uint8_t   *user;
    size_t           user_len;
};

/*
 * hs_store_update(), hs_store_delete_range() and hs_store_delete_at()
 * that keep what they change, with who, in the same transaction.
 */
int hs_modified_update(struct hs_store *s, uint64_t key, enum hs_upd op,
                       const uint8_t *dv, size_t len,
                       const struct hs_mod_who *who, enum hs_outcome *out);
int hs_modified_delete_range(struct hs_store *s, uint64_t key, int64_t lo,
                             int64_t hi, const struct hs_mod_who *who,
                             uint64_t *n);
int hs_modified_delete_at(struct hs_store *s, uint64_t key, int64_t t,
                          const struct hs_mod_who *who, uint64_t *n);

/* The modified values of node key with lo <= time < hi forgotten
 * (DeleteRawModifiedDetails with isDeleteModified): *n. */
int hs_modified_forget(struct hs_store *s, uint64_t key, int64_t lo,
                       int64_t hi, uint64_t *n);

/*
 * Readers: node key's modified values between lo and hi (inclusive), in
 * rd's snapshot, as hs_side_seek(); hs_modified_next(): the next, its
 * sample (body in the map) and its info: 0, -ENOENT at the end, -EINVAL
 * for an entry that does not parse.
 */
int hs_modified_seek(struct hs_side_read *r, struct hs_read *rd,
                     uint64_t key, int64_t lo, int64_t hi, bool reverse);
int hs_modified_next(struct hs_side_read *r, struct hs_sample *smp,
                     struct hs_mod_info *mi);

#endif /* HS_MODIFIED_H */
