/*
 * hist/side.h: the side databases of the history store: what it keeps
 * beside the samples, in the same LMDB environment (hist/store.h), so
 * that one write transaction changes both (docs/architecture.md §5.5):
 *
 *   modified  the values HistoryUpdate inserted, replaced or deleted
 *             (hist/modified.h; Part 11 §6.5.3.3 isReadModified)
 *   annots    the annotations of historized nodes (hist/annot.h; Part 11
 *             §5.1.2)
 *
 * A side key is the node key (8 bytes, big-endian), a time (8 bytes,
 * big-endian, DateTime ticks) and a suffix of at most HS_SIDE_SUFFIX_MAX
 * bytes that tells entries of one time apart; the value is the file's
 * own.  Retention (hs_side_prune) drops the entries of a node older than
 * its retention and older than its oldest sample, with the samples they
 * belong to.
 *
 * Errors as hist/store.h's: negative errnos, the text in
 * hs_store_error().
 *
 * Concurrency: as hist/store.h; a reader iterates in the snapshot of an
 * hs_read_begin() (its recycled read transaction), with a cursor per
 * database recycled too: no allocation per read after the first.
 */
#ifndef HS_SIDE_H
#define HS_SIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define HS_SIDE_SUFFIX_MAX 255u

enum hs_side {
    HS_SIDE_MODIFIED = 0,
    HS_SIDE_ANNOTS = 1
};

/* An iteration over one node's entries of one side database. */
struct hs_side_read {
    struct hs_store *s;
    void            *cur;       /* MDB_cursor */
    uint64_t         key;
    int64_t          lo, hi;    /* inclusive */
    bool             reverse;
    bool             done;
    bool             first;     /* the cursor is on the next entry */
};

/* One entry as the iteration gives it (pointers into the map, valid
 * until hs_read_end()). */
struct hs_side_ent {
    int64_t        t;
    const uint8_t *suffix;
    size_t         suffix_len;
    const uint8_t *val;
    size_t         val_len;
};

/*
 * The side databases opened (the writer creates them): 0, -ENOENT for a
 * reader of a store that has none yet (nothing to read), -EIO.
 */
int hs_side_open(struct hs_store *s);

/*
 * Readers: position r at node key's entries of db between lo and hi
 * (inclusive), oldest first or newest first, in rd's snapshot (after
 * hs_read_begin()); hs_side_next() gives the next: 0, -ENOENT at the end.
 */
int hs_side_seek(struct hs_side_read *r, struct hs_read *rd, enum hs_side db,
                 uint64_t key, int64_t lo, int64_t hi, bool reverse);
int hs_side_next(struct hs_side_read *r, struct hs_side_ent *e);

/*
 * Writer, inside the open write transaction (hist/store_int.h): put an
 * entry (-EEXIST when noover and the key is there), get one (-ENOENT),
 * delete one (-ENOENT), delete node key's entries of [lo, hi) (*n).
 */
int hs_side_put(struct hs_store *s, enum hs_side db, uint64_t key,
                int64_t t, const uint8_t *suffix, size_t slen,
                const uint8_t *val, size_t vlen, bool noover);
int hs_side_get(struct hs_store *s, enum hs_side db, uint64_t key,
                int64_t t, const uint8_t *suffix, size_t slen,
                const uint8_t **val, size_t *vlen);
int hs_side_del(struct hs_store *s, enum hs_side db, uint64_t key,
                int64_t t, const uint8_t *suffix, size_t slen);
int hs_side_drop(struct hs_store *s, enum hs_side db, uint64_t key,
                 int64_t lo, int64_t hi, uint64_t *n);

/*
 * Retention (its own write transaction, after hs_store_prune()): every
 * node's side entries older than now minus its retention (the store's
 * default when it has none; nothing when neither) and older than its
 * oldest sample dropped; while the store is over its max_bytes (the
 * samples and the side databases), every entry older than its node's
 * oldest sample (all of a node without samples), whatever its age.  *n
 * entries dropped.
 */
int hs_side_prune(struct hs_store *s, int64_t now, uint64_t *n);

/* Entries and bytes (pages) of db, for the stats and the benchmarks. */
int hs_side_stat(struct hs_store *s, enum hs_side db, uint64_t *entries,
                 uint64_t *bytes);

#endif /* HS_SIDE_H */
