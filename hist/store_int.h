/*
 * hist/store_int.h: the history store's insides, for the files of hist/
 * that keep more beside the samples in the same LMDB environment
 * (hist/side.c and the files on it: modified values, annotations).
 * Nothing outside hist/ includes it.
 *
 * Concurrency: as hist/store.h, one thread per handle.
 */
#ifndef HS_STORE_INT_H
#define HS_STORE_INT_H

#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

#define HS_NODEID_MAX     4096u
#define HS_KEY_LEN        16u
#define HS_T_MAX          INT64_MAX
#define HS_SIDE_N         2u        /* side databases (hist/side.h) */
#define HS_SIDE_NAMES     { "modified", "annots" }

struct hs_store {
    MDB_env         *env;
    MDB_dbi          samples, nodes, meta;
    bool             dbis;          /* the three are open */
    bool             readonly;
    bool             full;
    uint32_t         block_bytes;
    uint32_t         batch_max;
    uint64_t         max_bytes;
    int64_t          retention;
    MDB_txn         *rtxn;          /* the recycled read transaction */
    MDB_cursor      *rcur;
    bool             rtxn_live;
    char             err[128];
    char             path[4096];
    /* writer scratch */
    MDB_txn         *w;             /* the open write transaction */
    struct hs_totals tot;
    uint32_t        *order;         /* batch_max indexes */
    uint64_t        *pairs;         /* batch_max * 2: the radix sort's */
    uint8_t         *blk;           /* HS_BLOCK_BYTES_MAX * 2 */
    uint8_t         *blk2;          /* HS_BLOCK_BYTES_MAX * 2 */
    struct hs_sample *smp;          /* HS_READ_OFFS_MAX + 1 */
    uint8_t         *nodebuf;       /* struct hs_node + HS_NODEID_MAX */
    const struct hs_in *sort_in;
    /* The side databases (hist/side.c), opened at their first use. */
    MDB_dbi          side[HS_SIDE_N];
    bool             side_have;     /* open */
    MDB_cursor      *side_cur[HS_SIDE_N];  /* readers', recycled */
    bool             size_pruned;   /* hs_store_prune() dropped samples
                                       for max_bytes: hs_side_prune()
                                       drops their entries */
};

/* An LMDB error into s->err and a negative errno (hist/store.h). */
int hs_store_lmdb(struct hs_store *s, int rc, const char *what);

/* A samples key: node key and time, both big-endian (16 bytes). */
void hs_store_key_make(uint8_t *k, uint64_t key, int64_t t);
uint64_t hs_store_key_node(const uint8_t *k);
int64_t hs_store_key_time(const uint8_t *k);

/* The named databases opened (once; the writer creates them): 0, or the
 * error.  A reader of a store without the side databases opens the
 * others (side_have stays false). */
int hs_store_dbis_open(struct hs_store *s);

/* The bytes (pages) the side databases take in the open write
 * transaction: what history.max_mb counts besides s->tot.bytes (0 before
 * they exist). */
uint64_t hs_store_side_bytes(struct hs_store *s);

/* The write transaction (s->w) with the totals loaded; committed with the
 * totals, or aborted. */
int hs_store_wbegin(struct hs_store *s);
int hs_store_wcommit(struct hs_store *s);
void hs_store_wabort(struct hs_store *s);

/*
 * hs_store_update() inside the open write transaction, the node's meta
 * kept: *old the value replaced (its body in the writer's scratch, valid
 * until the next call of the store; old->body_len 0 when none was).  On
 * an error the caller aborts.
 */
int hs_store_update_txn(struct hs_store *s, uint64_t key, enum hs_upd op,
                        const struct hs_sample *in, enum hs_outcome *out,
                        struct hs_sample *old);

/*
 * Every value of node key with lo <= time < hi deleted inside the open
 * write transaction, the node's meta kept, each deleted value shown to
 * each (NULL: none) first: its nonzero return stops the delete with that
 * return.  *n deleted.  On an error the caller aborts.
 */
int hs_store_delete_txn(struct hs_store *s, uint64_t key, int64_t lo,
                        int64_t hi, uint64_t *n,
                        int (*each)(void *arg, uint64_t key,
                                    const struct hs_sample *smp),
                        void *arg);

#endif /* HS_STORE_INT_H */
