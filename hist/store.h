/*
 * hist/store.h: the history store, an LMDB environment in one directory
 * (docs/architecture.md §5.5).  One process writes (the historian; the
 * `uabroker history` tool when no server runs), any number read
 * (workers answering HistoryRead), without locks between them: LMDB's
 * MVCC gives each reader a snapshot.
 *
 * What is where (LMDB named databases):
 *   samples  key: node key (8 bytes, big-endian) + the block's first time
 *            (8 bytes, big-endian); value: a block of samples
 *            (hist/sample.h)
 *   nodes    key: node key; value: struct hs_node then the NodeId bytes
 *   meta     "totals": struct hs_totals
 *   modified, annots  the side databases (hist/side.h): what HistoryUpdate
 *            keeps beside the samples
 *
 * A node key is a 64-bit hash of the node's encoded NodeId (Part 6
 * §5.2.2.9), stable across builds and address-space changes (the node
 * store's index is not); hs_store_node_add() refuses a second NodeId with
 * the same hash.
 *
 * Blocks close at block_bytes (by default what fits in one LMDB overflow
 * page), so a full block is one page on disk and the open one, rewritten
 * by each batch that appends to it, costs one page per write
 * transaction.
 *
 * Errors are negative errnos: -ENOSPC when the map or the disk is full
 * (the store then refuses writes until hs_store_full_clear()), -EINVAL for
 * bad input, -EIO for anything else LMDB reports (the text in
 * hs_store_error()).  The store never logs: its caller decides.
 *
 * Concurrency: a store handle belongs to one thread.  Readers of other
 * processes are never blocked by the writer nor block it.
 */
#ifndef HS_STORE_H
#define HS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

#define HS_READ_OFFS_MAX     4096u  /* samples in one block, at most */
#define HS_BLOCK_BYTES_MAX   65536u

struct hs_store;

struct hs_store_config {
    const char *dir;            /* the environment's directory (exists) */
    uint64_t    map_bytes;      /* LMDB map size (writer) */
    uint64_t    max_bytes;      /* total size kept (keys + blocks, and the
                                   side databases' pages); 0 none */
    int64_t     retention;      /* default age kept, DateTime ticks; 0 all */
    uint32_t    block_bytes;    /* a block closes at this; 0: one page's */
    uint32_t    batch_max;      /* samples one hs_store_append() takes */
    bool        readonly;       /* a reader: no write transactions */
    bool        nosync;         /* no fsync per commit (kill -9 safe,
                                   not power-loss safe) */
};

/* One historized node as the store keeps it. */
struct hs_node {
    uint64_t samples;           /* kept now */
    uint64_t bytes;             /* keys and blocks kept now */
    int64_t  first;             /* time of the oldest sample, 0 when none */
    int64_t  last;              /* time of the newest */
    int64_t  retention;         /* ticks, 0: the store's default */
    uint64_t dropped;           /* samples retention dropped */
    uint32_t nodeid_len;        /* the encoded NodeId's bytes that follow */
    uint32_t pad;
};

/* The whole store. */
struct hs_totals {
    uint64_t samples;
    uint64_t bytes;
    uint64_t blocks;
    uint64_t dropped;           /* samples dropped by age or size */
    uint64_t rejected;          /* samples refused: bad bytes, no node */
    uint64_t nodes;
};

/* A batch's input: the node key and the encoded DataValue. */
struct hs_in {
    uint64_t       key;
    const uint8_t *dv;
    uint32_t       len;
};

/* HistoryUpdate's operations (Part 11 §6.8), and their outcomes. */
enum hs_upd {
    HS_UPD_INSERT = 1,
    HS_UPD_REPLACE = 2,
    HS_UPD_UPDATE = 3
};

enum hs_outcome {
    HS_INSERTED = 0,
    HS_REPLACED = 1,
    HS_EXISTS = 2,              /* Insert found a value at that time */
    HS_NO_ENTRY = 3             /* Replace or delete found none */
};

/* A read position: one node, one time range, one direction. */
struct hs_read {
    struct hs_store *s;
    void            *txn;       /* MDB_txn, read-only */
    void            *cur;       /* MDB_cursor on samples */
    uint64_t         key;
    int64_t          lo, hi;    /* inclusive */
    bool             reverse;
    bool             done;
    bool             open;
    const uint8_t   *blk;       /* the current block (in the map) */
    size_t           blk_len;
    const uint8_t   *p;         /* forward: the next sample */
    int64_t          prev;
    uint32_t         i, n;      /* reverse: next index, samples */
    uint32_t         off[HS_READ_OFFS_MAX];
    int64_t          prevt[HS_READ_OFFS_MAX];
};

/* Open (the writer creates the databases) or NULL with the reason. */
struct hs_store *hs_store_open(const struct hs_store_config *c, char *err,
                               size_t errlen);
void hs_store_close(struct hs_store *s);

/* The last LMDB error's text ("" when none). */
const char *hs_store_error(const struct hs_store *s);

/* A node key: FNV-1a 64 of the encoded NodeId. */
uint64_t hs_store_key(const uint8_t *nodeid, size_t len);

/*
 * Writer.  Register a node (its own transaction): 0 and *key, also when it
 * is there already (its retention set to retention; nothing is written
 * when it has that retention already); -EEXIST when another NodeId has the
 * same key.
 */
int hs_store_node_add(struct hs_store *s, const uint8_t *nodeid,
                      size_t len, int64_t retention, uint64_t *key);

/*
 * The same for n nodes in one transaction (one commit, one fsync: a
 * historian's start with thousands of nodes): keys[i] for nodeids[i] of
 * lens[i] bytes, 0 for one whose key is another NodeId's (not
 * registered).  No commit when every node is there already with that
 * retention (a restart).  0, or an error (none registered).
 */
int hs_store_nodes_add(struct hs_store *s, const uint8_t *const *nodeids,
                       const size_t *lens, size_t n, int64_t retention,
                       uint64_t *keys);

/*
 * Append n <= batch_max values in one write transaction, each to its
 * registered node; a value older than its node's newest goes into its
 * place.  A value that does not split (hist/sample.h) or whose node is
 * not registered is counted in rejected and skipped.  0, or -ENOSPC
 * (nothing of the batch is kept; the store stays full), -EIO.
 */
int hs_store_append(struct hs_store *s, const struct hs_in *in, size_t n);

/*
 * HistoryUpdate of one value of node key (its own write transaction):
 * 0 and *out, or -EINVAL (the DataValue has no timestamp), -ENOENT (not
 * registered), -ENOSPC, -EIO.
 */
int hs_store_update(struct hs_store *s, uint64_t key, enum hs_upd op,
                    const uint8_t *dv, size_t len, enum hs_outcome *out);

/* Delete every value of node key with lo <= time < hi (hi exclusive,
 * DeleteRawModifiedDetails): *n deleted. */
int hs_store_delete_range(struct hs_store *s, uint64_t key, int64_t lo,
                          int64_t hi, uint64_t *n);

/* Delete the values at exactly time t (DeleteAtTimeDetails): *n. */
int hs_store_delete_at(struct hs_store *s, uint64_t key, int64_t t,
                       uint64_t *n);

/*
 * Retention: drop whole blocks older than each node's retention before
 * now, then the oldest blocks of the store while the samples and the
 * side databases (hist/side.h) together are over max_bytes.
 * *n samples dropped.  Frees the reader slots of dead processes first
 * (mdb_reader_check), so a reader killed mid-read pins nothing for long.
 */
int hs_store_prune(struct hs_store *s, int64_t now, uint64_t *n);

/* Writing refused since -ENOSPC; cleared when a write succeeds again
 * after hs_store_full_clear(). */
bool hs_store_full(const struct hs_store *s);
void hs_store_full_clear(struct hs_store *s);

/* Totals and one node (readers and the writer): 0, -ENOENT, -EIO. */
int hs_store_totals(struct hs_store *s, struct hs_totals *t);
int hs_store_node(struct hs_store *s, uint64_t key, struct hs_node *nd,
                  uint8_t *nodeid, size_t cap);

/*
 * Every registered node in key order, f called with its key, meta and
 * NodeId bytes until it returns nonzero.
 */
int hs_store_nodes(struct hs_store *s,
                   int (*f)(void *arg, uint64_t key, const struct hs_node *,
                            const uint8_t *nodeid, size_t len),
                   void *arg);

/* The file's size in bytes (the data file), for the stats. */
uint64_t hs_store_file_bytes(struct hs_store *s);

/*
 * Readers.  hs_read_begin() opens a snapshot (a read-only transaction,
 * recycled: no allocation after the first); hs_read_seek() positions r at
 * node key's samples between lo and hi (inclusive), oldest first or newest
 * first; hs_read_next() gives the next: 0, -ENOENT at the end, -EINVAL on
 * a damaged block.  s->body stays valid until hs_read_end().
 */
int hs_read_begin(struct hs_store *s, struct hs_read *r);
int hs_read_seek(struct hs_read *r, uint64_t key, int64_t lo, int64_t hi,
                 bool reverse);
int hs_read_next(struct hs_read *r, struct hs_sample *smp);
void hs_read_end(struct hs_read *r);

#endif /* HS_STORE_H */
