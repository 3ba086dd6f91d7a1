/*
 * hist/store.c: the history store on LMDB (hist/store.h says what is
 * where).  With its insides (hist/store_int.h) and the side databases'
 * files (hist/side.c, modified.c, annot.c), the only files that include
 * LMDB.
 *
 * Invariants:
 *   - a node's blocks do not overlap in time: every sample of a block is
 *     at or after its key time and at or before the next block's key
 *     time; the key time is the block's first sample's time;
 *   - a block holds at most HS_READ_OFFS_MAX samples and closes at
 *     block_bytes, except one whose samples all have one time (it may
 *     grow to HS_BLOCK_BYTES_MAX, as its successor could not take another
 *     key) or that holds a single sample larger than that;
 *   - struct hs_node and struct hs_totals count exactly the blocks kept:
 *     bytes = 16 key bytes + the block's bytes, for every block.
 *
 * Transactions: every writing call is one LMDB write transaction, aborted
 * whole on any error, so a kill -9 at any moment leaves the store as the
 * last commit left it.  Readers recycle one read-only transaction
 * (mdb_txn_reset / mdb_txn_renew) and one cursor: no allocation per read.
 * mdb_reader_check() at open clears the reader slots of dead processes.
 *
 * Concurrency: one thread per handle (MDB_NOTLS, so a handle may move
 * between threads when its owner says so); one writing process per
 * directory (LMDB's writer lock serialises any second one).
 */
#include "store.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_int.h"

/* A node's meta as loaded for an update. */
struct hs_store_nm {
    struct hs_node n;
    uint8_t       *id;              /* the NodeId bytes (s->nodebuf) */
};

static int hs_store_nm_get(struct hs_store *s, uint64_t key,
                           struct hs_store_nm *nm);
static int hs_store_nm_put(struct hs_store *s, uint64_t key,
                           const struct hs_store_nm *nm);
static int hs_store_bounds(struct hs_store *s, MDB_cursor *c, uint64_t key,
                           struct hs_node *n);
static int hs_store_block_find(MDB_cursor *c, uint64_t key, int64_t t,
                               MDB_val *k, MDB_val *v);
static int hs_store_block_last(MDB_cursor *c, uint64_t key, MDB_val *k,
                               MDB_val *v);
static int hs_store_block_put(struct hs_store *s, uint64_t key,
                              int64_t first, const uint8_t *b, size_t len);
static int hs_store_block_del(struct hs_store *s, uint64_t key,
                              int64_t first, size_t len);
static int hs_store_block_decode(const uint8_t *b, size_t len,
                                 int64_t first, struct hs_sample *out,
                                 uint32_t *n);
static int hs_store_samples_write(struct hs_store *s, uint64_t key,
                                  const struct hs_sample *smp, uint32_t n);
static int hs_store_edit(struct hs_store *s, uint64_t key,
                         const struct hs_sample *in, enum hs_upd op,
                         enum hs_outcome *out, struct hs_sample *old);
static int hs_store_run(struct hs_store *s, MDB_cursor *c,
                        const struct hs_in *in, const uint32_t *idx,
                        size_t n);
static int hs_store_cmp_in(const void *a, const void *b, void *arg);
static void hs_store_order(struct hs_store *s, const struct hs_in *in,
                           size_t n);
static int hs_store_delete_range_txn(
    struct hs_store *s, uint64_t key, int64_t lo, int64_t hi, uint64_t *n,
    int (*each)(void *arg, uint64_t key, const struct hs_sample *smp),
    void *arg);
static int hs_store_delete(struct hs_store *s, uint64_t key, int64_t lo,
                           int64_t hi, uint64_t *n);
static int hs_store_drop_first(struct hs_store *s, MDB_cursor *c,
                               uint64_t key, struct hs_store_nm *nm,
                               int64_t *next_first);
static int hs_store_totals_load(struct hs_store *s, MDB_txn *txn,
                                struct hs_totals *t);
static int hs_read_load(struct hs_read *r, const MDB_val *k,
                        const MDB_val *v);

int
hs_store_lmdb(struct hs_store *s, int rc, const char *what)
{
    snprintf(s->err, sizeof(s->err), "%s: %s", what, mdb_strerror(rc));
    if (rc == MDB_MAP_FULL || rc == ENOSPC) {
        s->full = true;
        return -ENOSPC;
    }
    if (rc == MDB_NOTFOUND)
        return -ENOENT;
    return -EIO;
}

void
hs_store_key_make(uint8_t *k, uint64_t key, int64_t t)
{
    uint64_t u = (uint64_t)t;

    for (int i = 7; i >= 0; i--, key >>= 8)
        k[i] = (uint8_t)key;
    for (int i = 15; i >= 8; i--, u >>= 8)
        k[i] = (uint8_t)u;
}

uint64_t
hs_store_key_node(const uint8_t *k)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | k[i];
    return v;
}

int64_t
hs_store_key_time(const uint8_t *k)
{
    uint64_t v = 0;

    for (int i = 8; i < 16; i++)
        v = v << 8 | k[i];
    return (int64_t)v;
}

uint64_t
hs_store_key(const uint8_t *nodeid, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < len; i++) {
        h ^= nodeid[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

struct hs_store *
hs_store_open(const struct hs_store_config *c, char *err, size_t errlen)
{
    struct hs_store *s;
    unsigned         flags = MDB_NOTLS;
    int              rc, dead;
    MDB_stat         st;

    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->readonly = c->readonly;
    s->max_bytes = c->max_bytes;
    s->retention = c->retention;
    s->batch_max = c->batch_max ? c->batch_max : 65536;
    snprintf(s->path, sizeof(s->path), "%s", c->dir);
    if ((rc = mdb_env_create(&s->env)) != 0)
        goto fail;
    if ((rc = mdb_env_set_maxdbs(s->env, 3 + HS_SIDE_N + 3)) != 0)
        goto fail;
    if (!c->readonly && c->map_bytes
        && (rc = mdb_env_set_mapsize(s->env, c->map_bytes)) != 0)
        goto fail;
    if (c->readonly)
        flags |= MDB_RDONLY;
    if (c->nosync)
        flags |= MDB_NOSYNC;
    if ((rc = mdb_env_open(s->env, c->dir, flags, 0640)) != 0)
        goto fail;
    /* Reader slots of processes that died mid-read (kill -9). */
    if ((rc = mdb_reader_check(s->env, &dead)) != 0)
        goto fail;
    if ((rc = mdb_env_stat(s->env, &st)) != 0)
        goto fail;
    /* A full block fills one overflow page: LMDB's page header is 16
     * bytes (OVPAGES in mdb.c). */
    s->block_bytes = c->block_bytes ? c->block_bytes : st.ms_psize - 16;
    if (s->block_bytes < 64)
        s->block_bytes = 64;
    if (s->block_bytes > HS_BLOCK_BYTES_MAX)
        s->block_bytes = HS_BLOCK_BYTES_MAX;
    if (!c->readonly) {
        s->order = malloc(sizeof(*s->order) * s->batch_max);
        s->pairs = malloc(sizeof(*s->pairs) * 2 * (size_t)s->batch_max);
        s->blk = malloc(HS_BLOCK_BYTES_MAX * 2);
        s->blk2 = malloc(HS_BLOCK_BYTES_MAX * 2);
        s->smp = malloc(sizeof(*s->smp) * (HS_READ_OFFS_MAX + 1));
        s->nodebuf = malloc(sizeof(struct hs_node) + HS_NODEID_MAX);
        if (!s->order || !s->pairs || !s->blk || !s->blk2 || !s->smp
            || !s->nodebuf) {
            snprintf(err, errlen, "out of memory");
            hs_store_close(s);
            return NULL;
        }
    }
    if (hs_store_dbis_open(s) != 0 && !c->readonly) {
        snprintf(err, errlen, "%s", s->err);
        hs_store_close(s);
        return NULL;
    }
    return s;
fail:
    snprintf(err, errlen, "%s: %s", c->dir, mdb_strerror(rc));
    hs_store_close(s);
    return NULL;
}

void
hs_store_close(struct hs_store *s)
{
    if (s == NULL)
        return;
    if (s->w != NULL)
        mdb_txn_abort(s->w);
    if (s->rcur != NULL)
        mdb_cursor_close(s->rcur);
    for (unsigned i = 0; i < HS_SIDE_N; i++)
        if (s->side_cur[i] != NULL)
            mdb_cursor_close(s->side_cur[i]);
    if (s->rtxn != NULL)
        mdb_txn_abort(s->rtxn);
    if (s->env != NULL)
        mdb_env_close(s->env);
    free(s->order);
    free(s->pairs);
    free(s->blk);
    free(s->blk2);
    free(s->smp);
    free(s->nodebuf);
    free(s);
}

const char *
hs_store_error(const struct hs_store *s)
{
    return s->err;
}

/*
 * The named databases: created by the writer; a reader of a store no
 * writer has made yet finds none and tries again at its next read.
 */
int
hs_store_dbis_open(struct hs_store *s)
{
    static const char *const side[HS_SIDE_N] = HS_SIDE_NAMES;
    MDB_txn *txn;
    unsigned f = s->readonly ? 0 : MDB_CREATE;
    int      rc;

    if (s->dbis)
        return 0;
    rc = mdb_txn_begin(s->env, NULL, s->readonly ? MDB_RDONLY : 0, &txn);
    if (rc == MDB_MAP_RESIZED) {
        mdb_env_set_mapsize(s->env, 0);
        rc = mdb_txn_begin(s->env, NULL, s->readonly ? MDB_RDONLY : 0,
                           &txn);
    }
    if (rc != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_begin");
    if ((rc = mdb_dbi_open(txn, "samples", f, &s->samples)) != 0
        || (rc = mdb_dbi_open(txn, "nodes", f, &s->nodes)) != 0
        || (rc = mdb_dbi_open(txn, "meta", f, &s->meta)) != 0) {
        mdb_txn_abort(txn);
        return hs_store_lmdb(s, rc, "mdb_dbi_open");
    }
    /* The side databases (hist/side.h); a store written before them has
     * none until its writer opens it. */
    s->side_have = true;
    for (unsigned i = 0; i < HS_SIDE_N && s->side_have; i++) {
        rc = mdb_dbi_open(txn, side[i], f, &s->side[i]);
        if (rc == MDB_NOTFOUND && s->readonly) {
            s->side_have = false;
        } else if (rc != 0) {
            mdb_txn_abort(txn);
            return hs_store_lmdb(s, rc, "mdb_dbi_open");
        }
    }
    if ((rc = mdb_txn_commit(txn)) != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_commit");
    s->dbis = true;
    return 0;
}

uint64_t
hs_store_side_bytes(struct hs_store *s)
{
    uint64_t b = 0;

    if (s->w == NULL || !s->side_have)
        return 0;
    for (unsigned i = 0; i < HS_SIDE_N; i++) {
        MDB_stat st;

        if (mdb_stat(s->w, s->side[i], &st) == 0)
            b += (uint64_t)(st.ms_branch_pages + st.ms_leaf_pages
                            + st.ms_overflow_pages) * st.ms_psize;
    }
    return b;
}

int
hs_store_wbegin(struct hs_store *s)
{
    int rc;

    if (s->readonly)
        return -EPERM;
    if (s->full)
        return -ENOSPC;
    if ((rc = mdb_txn_begin(s->env, NULL, 0, &s->w)) != 0) {
        s->w = NULL;
        return hs_store_lmdb(s, rc, "mdb_txn_begin");
    }
    rc = hs_store_totals_load(s, s->w, &s->tot);
    if (rc != 0) {
        hs_store_wabort(s);
        return rc;
    }
    return 0;
}

int
hs_store_wcommit(struct hs_store *s)
{
    MDB_val k = { 6, "totals" }, v = { sizeof(s->tot), &s->tot };
    int     rc;

    if ((rc = mdb_put(s->w, s->meta, &k, &v, 0)) != 0) {
        hs_store_wabort(s);
        return hs_store_lmdb(s, rc, "mdb_put totals");
    }
    rc = mdb_txn_commit(s->w);
    s->w = NULL;
    if (rc != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_commit");
    return 0;
}

void
hs_store_wabort(struct hs_store *s)
{
    if (s->w != NULL)
        mdb_txn_abort(s->w);
    s->w = NULL;
}

static int
hs_store_totals_load(struct hs_store *s, MDB_txn *txn, struct hs_totals *t)
{
    MDB_val k = { 6, "totals" }, v;
    int     rc;

    rc = mdb_get(txn, s->meta, &k, &v);
    if (rc == MDB_NOTFOUND) {
        memset(t, 0, sizeof(*t));
        return 0;
    }
    if (rc != 0)
        return hs_store_lmdb(s, rc, "mdb_get totals");
    if (v.mv_size != sizeof(*t)) {
        snprintf(s->err, sizeof(s->err), "totals: wrong size");
        return -EIO;
    }
    memcpy(t, v.mv_data, sizeof(*t));
    return 0;
}

static int
hs_store_nm_get(struct hs_store *s, uint64_t key, struct hs_store_nm *nm)
{
    uint8_t k[HS_KEY_LEN];
    MDB_val kv = { 8, k }, v;
    int     rc;

    hs_store_key_make(k, key, 0);
    rc = mdb_get(s->w, s->nodes, &kv, &v);
    if (rc != 0)
        return hs_store_lmdb(s, rc, "mdb_get node");
    if (v.mv_size < sizeof(struct hs_node)
        || v.mv_size > sizeof(struct hs_node) + HS_NODEID_MAX)
        return -EIO;
    memcpy(s->nodebuf, v.mv_data, v.mv_size);
    memcpy(&nm->n, s->nodebuf, sizeof(nm->n));
    if (nm->n.nodeid_len != v.mv_size - sizeof(struct hs_node))
        return -EIO;
    nm->id = s->nodebuf + sizeof(struct hs_node);
    return 0;
}

static int
hs_store_nm_put(struct hs_store *s, uint64_t key, const struct hs_store_nm *nm)
{
    uint8_t k[16];
    MDB_val kv = { 8, k }, v;
    int     rc;

    hs_store_key_make(k, key, 0);
    memcpy(s->nodebuf, &nm->n, sizeof(nm->n));
    if (nm->id != s->nodebuf + sizeof(struct hs_node))
        memcpy(s->nodebuf + sizeof(struct hs_node), nm->id,
               nm->n.nodeid_len);
    v.mv_size = sizeof(struct hs_node) + nm->n.nodeid_len;
    v.mv_data = s->nodebuf;
    if ((rc = mdb_put(s->w, s->nodes, &kv, &v, 0)) != 0)
        return hs_store_lmdb(s, rc, "mdb_put node");
    return 0;
}

/* Node nodeid registered in the open write transaction: 0, 1 when it is
 * there already with this retention (nothing written), -EEXIST (another
 * NodeId has its key; nothing written) or an error. */
static int
hs_store_node_put(struct hs_store *s, const uint8_t *nodeid, size_t len,
                  int64_t retention, uint64_t key)
{
    struct hs_store_nm nm;
    int                rc;

    rc = hs_store_nm_get(s, key, &nm);
    if (rc == 0) {
        if (nm.n.nodeid_len != len || memcmp(nm.id, nodeid, len) != 0)
            return -EEXIST;
        if (nm.n.retention == retention)
            return 1;
    } else if (rc == -ENOENT) {
        memset(&nm.n, 0, sizeof(nm.n));
        nm.n.nodeid_len = (uint32_t)len;
        nm.id = (uint8_t *)nodeid;
        s->tot.nodes++;
    } else {
        return rc;
    }
    nm.n.retention = retention;
    return hs_store_nm_put(s, key, &nm);
}

int
hs_store_node_add(struct hs_store *s, const uint8_t *nodeid, size_t len,
                  int64_t retention, uint64_t *key)
{
    int rc;

    if (len == 0 || len > HS_NODEID_MAX)
        return -EINVAL;
    *key = hs_store_key(nodeid, len);
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    rc = hs_store_node_put(s, nodeid, len, retention, *key);
    if (rc != 0) {
        /* Unchanged: nothing to commit. */
        hs_store_wabort(s);
        return rc == 1 ? 0 : rc;
    }
    return hs_store_wcommit(s);
}

int
hs_store_nodes_add(struct hs_store *s, const uint8_t *const *nodeids,
                   const size_t *lens, size_t n, int64_t retention,
                   uint64_t *keys)
{
    bool written = false;
    int  rc;

    for (size_t i = 0; i < n; i++)
        if (lens[i] == 0 || lens[i] > HS_NODEID_MAX)
            return -EINVAL;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        keys[i] = hs_store_key(nodeids[i], lens[i]);
        rc = hs_store_node_put(s, nodeids[i], lens[i], retention, keys[i]);
        if (rc == -EEXIST) {
            keys[i] = 0;
        } else if (rc < 0) {
            hs_store_wabort(s);
            return rc;
        }
        written |= rc == 0;
    }
    if (!written) {
        /* Every node there already as it was (a restart): no commit, no
         * fsync (docs/benchmarks.md "Start-up of the whole server"). */
        hs_store_wabort(s);
        return 0;
    }
    return hs_store_wcommit(s);
}

/* The last block of node key with first time <= t into k, v; else the
 * node's first block after t; MDB_NOTFOUND when the node has none. */
static int
hs_store_block_find(MDB_cursor *c, uint64_t key, int64_t t, MDB_val *k,
                    MDB_val *v)
{
    uint8_t kb[HS_KEY_LEN];
    int     rc;

    hs_store_key_make(kb, key, t);
    k->mv_size = HS_KEY_LEN;
    k->mv_data = kb;
    rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc == 0 && k->mv_size == HS_KEY_LEN
        && memcmp(k->mv_data, kb, HS_KEY_LEN) == 0)
        return 0;
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rc;
    rc = mdb_cursor_get(c, k, v, rc == 0 ? MDB_PREV : MDB_LAST);
    if (rc == 0 && k->mv_size == HS_KEY_LEN
        && hs_store_key_node(k->mv_data) == key)
        return 0;
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rc;
    /* None at or before t: the first after it. */
    hs_store_key_make(kb, key, t);
    k->mv_size = HS_KEY_LEN;
    k->mv_data = kb;
    rc = mdb_cursor_get(c, k, v, MDB_SET_RANGE);
    if (rc != 0)
        return rc;
    if (k->mv_size != HS_KEY_LEN || hs_store_key_node(k->mv_data) != key)
        return MDB_NOTFOUND;
    return 0;
}

static int
hs_store_block_last(MDB_cursor *c, uint64_t key, MDB_val *k, MDB_val *v)
{
    return hs_store_block_find(c, key, HS_T_MAX, k, v);
}

/* The node's first and last times from its first and last blocks. */
static int
hs_store_bounds(struct hs_store *s, MDB_cursor *c, uint64_t key,
                struct hs_node *n)
{
    MDB_val k, v;
    int     rc;

    (void)s;
    rc = hs_store_block_find(c, key, 0, &k, &v);
    if (rc == MDB_NOTFOUND) {
        n->first = n->last = 0;
        return 0;
    }
    if (rc != 0)
        return rc;
    n->first = hs_store_key_time(k.mv_data);
    if ((rc = hs_store_block_last(c, key, &k, &v)) != 0)
        return rc;
    if (v.mv_size < HS_BLOCK_HDR)
        return MDB_CORRUPTED;
    n->last = hs_block_last(v.mv_data);
    return 0;
}

static int
hs_store_block_put(struct hs_store *s, uint64_t key, int64_t first,
                   const uint8_t *b, size_t len)
{
    uint8_t kb[HS_KEY_LEN];
    MDB_val k = { HS_KEY_LEN, kb }, v = { len, (void *)b };

    hs_store_key_make(kb, key, first);
    return mdb_put(s->w, s->samples, &k, &v, 0);
}

static int
hs_store_block_del(struct hs_store *s, uint64_t key, int64_t first,
                   size_t len)
{
    uint8_t kb[HS_KEY_LEN];
    MDB_val k = { HS_KEY_LEN, kb };
    int     rc;

    hs_store_key_make(kb, key, first);
    rc = mdb_del(s->w, s->samples, &k, NULL);
    if (rc == 0) {
        s->tot.blocks--;
        s->tot.bytes -= HS_KEY_LEN + len;
    }
    return rc;
}

/* Unpack a block (copied out of the map by the caller when it will
 * write) into out[], *n samples. */
static int
hs_store_block_decode(const uint8_t *b, size_t len, int64_t first,
                      struct hs_sample *out, uint32_t *n)
{
    const uint8_t *p = b + HS_BLOCK_HDR, *end = b + len;
    int64_t        prev = first;
    uint32_t       i = 0;

    if (len < HS_BLOCK_HDR)
        return -EINVAL;
    while (p < end) {
        if (i == HS_READ_OFFS_MAX
            || hs_sample_unpack(&p, end, prev, &out[i]) != 0)
            return -EINVAL;
        prev = out[i++].t;
    }
    *n = i;
    return 0;
}

/*
 * Write n samples (time order) as one or more blocks of node key, the
 * first block keyed by smp[0].t; counts the blocks and bytes.  The
 * samples' bodies must not point into the map (the caller copied).
 */
static int
hs_store_samples_write(struct hs_store *s, uint64_t key,
                       const struct hs_sample *smp, uint32_t n)
{
    uint32_t i = 0;
    int      rc;

    while (i < n) {
        uint8_t *p = s->blk2 + HS_BLOCK_HDR;
        int64_t  first = smp[i].t, prev = first;
        uint32_t cnt = 0;
        size_t   len;

        while (i < n) {
            size_t sz = hs_sample_packed_size(&smp[i], prev);
            size_t used = (size_t)(p - s->blk2);

            /* The first sample always goes in; a sample of the block's
             * first time too (no other block may take that key). */
            if (cnt > 0 && smp[i].t != first
                && (used + sz > s->block_bytes || cnt == HS_READ_OFFS_MAX))
                break;
            if (cnt > 0 && (used + sz > HS_BLOCK_BYTES_MAX * 2
                            || cnt == HS_READ_OFFS_MAX))
                return -EINVAL;
            p = hs_sample_pack(&smp[i], prev, p);
            prev = smp[i].t;
            cnt++;
            i++;
        }
        len = (size_t)(p - s->blk2);
        hs_block_hdr_set(s->blk2, cnt, prev);
        if ((rc = hs_store_block_put(s, key, first, s->blk2, len)) != 0)
            return rc;
        s->tot.blocks++;
        s->tot.bytes += HS_KEY_LEN + len;
    }
    return 0;
}

/*
 * One value into its place among node key's samples (an insert in time
 * order, a replace of the value at its time): the block it falls in is
 * read, changed and written again (split when it grows too big, keyed
 * anew when its first time changes).
 */
static int
hs_store_edit(struct hs_store *s, uint64_t key, const struct hs_sample *in,
              enum hs_upd op, enum hs_outcome *out, struct hs_sample *old)
{
    MDB_cursor *c;
    MDB_val     k, v;
    int64_t     first = 0;
    uint32_t    n = 0, at, j;
    size_t      oldlen = 0;
    bool        have = false, found = false;
    int         rc;

    if ((rc = mdb_cursor_open(s->w, s->samples, &c)) != 0)
        return rc;
    rc = hs_store_block_find(c, key, in->t, &k, &v);
    if (rc == 0) {
        have = true;
        first = hs_store_key_time(k.mv_data);
        oldlen = v.mv_size;
        if (oldlen > HS_BLOCK_BYTES_MAX * 2) {
            mdb_cursor_close(c);
            return MDB_CORRUPTED;
        }
        memcpy(s->blk, v.mv_data, oldlen);
        if (hs_store_block_decode(s->blk, oldlen, first, s->smp, &n) != 0) {
            mdb_cursor_close(c);
            return MDB_CORRUPTED;
        }
    } else if (rc != MDB_NOTFOUND) {
        mdb_cursor_close(c);
        return rc;
    }
    mdb_cursor_close(c);
    /* The first sample later than in->t, and whether one has its time. */
    for (at = 0; at < n && s->smp[at].t <= in->t; at++)
        if (s->smp[at].t == in->t) {
            found = true;
            break;
        }
    if (found && op == HS_UPD_INSERT) {
        *out = HS_EXISTS;
        return 0;
    }
    if (!found && op == HS_UPD_REPLACE) {
        *out = HS_NO_ENTRY;
        return 0;
    }
    if (found) {
        if (old != NULL)
            *old = s->smp[at];      /* its body stays in s->blk */
        s->smp[at] = *in;
        *out = HS_REPLACED;
    } else {
        if (n == HS_READ_OFFS_MAX)
            return MDB_CORRUPTED;
        for (j = n; j > at; j--)
            s->smp[j] = s->smp[j - 1];
        s->smp[at] = *in;
        n++;
        *out = HS_INSERTED;
        s->tot.samples++;
    }
    if (have && (rc = hs_store_block_del(s, key, first, oldlen)) != 0)
        return rc;
    return hs_store_samples_write(s, key, s->smp, n);
}

static int
hs_store_cmp_in(const void *a, const void *b, void *arg)
{
    const struct hs_in *in = arg;
    uint32_t            x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    if (in[x].key != in[y].key)
        return in[x].key < in[y].key ? -1 : 1;
    return x < y ? -1 : x > y;
}

/*
 * s->order[0..n): the indexes of in[] grouped by node, each node's in
 * arrival order.  A batch of a million values sorted by qsort_r with an
 * indirect comparison was a third of the historian's CPU; a large batch
 * is an LSD radix sort of (the key's high 32 bits, index) pairs, three
 * stable passes of 11 bits: ordered by the high bits, then by arrival.
 * Two nodes whose keys share their high 32 bits (rare) interleave and
 * make more, shorter runs (hs_store_append takes equal keys in a row),
 * each still in arrival order: slower, never wrong.
 */
static void
hs_store_order(struct hs_store *s, const struct hs_in *in, size_t n)
{
    enum { BITS = 11, BUCKETS = 1 << BITS };
    uint32_t        count[BUCKETS];
    uint64_t       *a = s->pairs, *b = s->pairs + s->batch_max, *t;

    if (n < 4 * BUCKETS) {
        for (size_t i = 0; i < n; i++)
            s->order[i] = (uint32_t)i;
        qsort_r(s->order, n, sizeof(*s->order), hs_store_cmp_in,
                (void *)in);
        return;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = (in[i].key & UINT64_C(0xFFFFFFFF00000000)) | (uint32_t)i;
    for (unsigned shift = 32; shift < 64; shift += BITS) {
        uint32_t sum = 0;

        memset(count, 0, sizeof(count));
        for (size_t i = 0; i < n; i++)
            count[(a[i] >> shift) & (BUCKETS - 1)]++;
        for (unsigned d = 0; d < BUCKETS; d++) {
            uint32_t c = count[d];

            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            b[count[(a[i] >> shift) & (BUCKETS - 1)]++] = a[i];
        t = a;
        a = b;
        b = t;
    }
    for (size_t i = 0; i < n; i++)
        s->order[i] = (uint32_t)a[i];
}

/*
 * The values idx[0..n) of one node, in arrival order: appended to its
 * last block while they come in time order, put in their place when not.
 */
static int
hs_store_run(struct hs_store *s, MDB_cursor *c, const struct hs_in *in,
             const uint32_t *idx, size_t n)
{
    struct hs_store_nm nm;
    uint64_t           key = in[idx[0]].key, before, bytes0;
    MDB_val            k, v;
    int64_t            first = 0, last = 0;
    uint32_t           cnt = 0;
    size_t             len = 0, oldlen = 0;
    bool               tail = false, loaded = false, dirty = false;
    int                rc;

    rc = hs_store_nm_get(s, key, &nm);
    if (rc == -ENOENT) {
        s->tot.rejected += n;
        return 0;
    }
    if (rc != 0)
        return rc;
    before = s->tot.samples;
    bytes0 = s->tot.bytes;
    for (size_t i = 0; i < n; i++) {
        struct hs_sample smp;
        size_t           sz;

        if (hs_sample_split(in[idx[i]].dv, in[idx[i]].len, &smp) != 0) {
            s->tot.rejected++;
            continue;
        }
        if (!loaded) {
            rc = hs_store_block_last(c, key, &k, &v);
            if (rc == 0) {
                if (v.mv_size < HS_BLOCK_HDR
                    || v.mv_size > HS_BLOCK_BYTES_MAX * 2)
                    return MDB_CORRUPTED;
                tail = true;
                first = hs_store_key_time(k.mv_data);
                oldlen = len = v.mv_size;
                memcpy(s->blk, v.mv_data, len);
                cnt = hs_block_count(s->blk);
                last = hs_block_last(s->blk);
            } else if (rc != MDB_NOTFOUND) {
                return rc;
            }
            loaded = true;
        }
        if (tail && smp.t < last) {
            enum hs_outcome o;

            /* Out of order: the tail written, the value put in its
             * place, the tail read again for the next. */
            if (dirty) {
                if ((rc = hs_store_block_put(s, key, first, s->blk, len))
                    != 0)
                    return rc;
                s->tot.bytes += len - oldlen;
                dirty = false;
            }
            /* A value at the time of a kept one replaces it (the later
             * arrival wins). */
            if ((rc = hs_store_edit(s, key, &smp, HS_UPD_UPDATE, &o,
                                    NULL)) != 0)
                return rc;
            loaded = false;
            tail = false;
            continue;
        }
        sz = hs_sample_packed_size(&smp, tail ? last : smp.t);
        if (tail && cnt < HS_READ_OFFS_MAX
            && (len + sz <= s->block_bytes
                || (smp.t == first && len + sz <= HS_BLOCK_BYTES_MAX))) {
            hs_sample_pack(&smp, last, s->blk + len);
            len += sz;
            cnt++;
            last = smp.t;
            hs_block_hdr_set(s->blk, cnt, last);
            dirty = true;
            s->tot.samples++;
            continue;
        }
        if (tail && smp.t == first) {
            s->tot.rejected++;      /* a block's worth at one time */
            continue;
        }
        /* A new block. */
        if (dirty) {
            if ((rc = hs_store_block_put(s, key, first, s->blk, len)) != 0)
                return rc;
            s->tot.bytes += len - oldlen;
        }
        if (HS_BLOCK_HDR + hs_sample_packed_size(&smp, smp.t)
            > HS_BLOCK_BYTES_MAX * 2) {
            s->tot.rejected++;
            dirty = false;
            tail = false;
            loaded = false;
            continue;
        }
        first = last = smp.t;
        len = HS_BLOCK_HDR;
        len = (size_t)(hs_sample_pack(&smp, first, s->blk + len) - s->blk);
        cnt = 1;
        oldlen = 0;
        hs_block_hdr_set(s->blk, cnt, last);
        s->tot.blocks++;
        s->tot.bytes += HS_KEY_LEN;
        tail = loaded = dirty = true;
        s->tot.samples++;
    }
    if (dirty) {
        if ((rc = hs_store_block_put(s, key, first, s->blk, len)) != 0)
            return rc;
        s->tot.bytes += len - oldlen;
    }
    if (s->tot.samples == before && s->tot.bytes == bytes0)
        return 0;
    /* The node's counts: what the totals gained in this run. */
    nm.n.samples += s->tot.samples - before;
    nm.n.bytes += s->tot.bytes - bytes0;
    if ((rc = hs_store_bounds(s, c, key, &nm.n)) != 0)
        return rc;
    return hs_store_nm_put(s, key, &nm);
}

int
hs_store_append(struct hs_store *s, const struct hs_in *in, size_t n)
{
    MDB_cursor *c;
    size_t      i, j;
    int         rc;

    if (n == 0)
        return 0;
    if (n > s->batch_max)
        return -EINVAL;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    hs_store_order(s, in, n);
    if ((rc = mdb_cursor_open(s->w, s->samples, &c)) != 0) {
        hs_store_wabort(s);
        return hs_store_lmdb(s, rc, "mdb_cursor_open");
    }
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && in[s->order[j]].key == in[s->order[i]].key;
             j++)
            ;
        if ((rc = hs_store_run(s, c, in, s->order + i, j - i)) != 0) {
            mdb_cursor_close(c);
            hs_store_wabort(s);
            if (rc < 0)
                return rc;
            return hs_store_lmdb(s, rc, "append");
        }
    }
    mdb_cursor_close(c);
    return hs_store_wcommit(s);
}

int
hs_store_update(struct hs_store *s, uint64_t key, enum hs_upd op,
                const uint8_t *dv, size_t len, enum hs_outcome *out)
{
    struct hs_sample smp, old;
    int              rc;

    if (hs_sample_split(dv, len, &smp) != 0)
        return -EINVAL;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    if ((rc = hs_store_update_txn(s, key, op, &smp, out, &old)) != 0) {
        hs_store_wabort(s);
        return rc;
    }
    return hs_store_wcommit(s);
}

int
hs_store_update_txn(struct hs_store *s, uint64_t key, enum hs_upd op,
                    const struct hs_sample *in, enum hs_outcome *out,
                    struct hs_sample *old)
{
    struct hs_store_nm nm;
    MDB_cursor        *c;
    uint64_t           n0, b0;
    int                rc;

    memset(old, 0, sizeof(*old));
    if ((rc = hs_store_nm_get(s, key, &nm)) != 0)
        return rc;
    n0 = s->tot.samples;
    b0 = s->tot.bytes;
    rc = hs_store_edit(s, key, in, op, out, old);
    if (rc == 0)
        rc = mdb_cursor_open(s->w, s->samples, &c);
    if (rc == 0) {
        rc = hs_store_bounds(s, c, key, &nm.n);
        mdb_cursor_close(c);
    }
    if (rc != 0)
        return rc < 0 ? rc : hs_store_lmdb(s, rc, "update");
    nm.n.samples += s->tot.samples - n0;
    nm.n.bytes += s->tot.bytes - b0;
    return hs_store_nm_put(s, key, &nm);
}

/*
 * In the open write transaction: every value of node key in [lo, hi)
 * deleted, block by block (a block left empty is deleted, one that lost
 * its first sample keyed anew), each shown to each first.
 */
static int
hs_store_delete_range_txn(
    struct hs_store *s, uint64_t key, int64_t lo, int64_t hi,
    uint64_t *ndel,
    int (*each)(void *arg, uint64_t key, const struct hs_sample *smp),
    void *arg)
{
    MDB_cursor *c;
    MDB_val     k, v;
    uint8_t     kb[HS_KEY_LEN];
    int64_t     first = 0;
    bool        started = false;
    int         rc;

    *ndel = 0;
    if ((rc = mdb_cursor_open(s->w, s->samples, &c)) != 0)
        return rc;
    for (;;) {
        uint32_t n, m, i;
        size_t   len;

        /* The block holding lo first, then each block keyed after the
         * one before (a block keyed anew may be met again: it then has
         * nothing in the range). */
        if (!started) {
            rc = hs_store_block_find(c, key, lo, &k, &v);
            started = true;
        } else {
            if (first == HS_T_MAX)
                break;
            hs_store_key_make(kb, key, first + 1);
            k.mv_size = HS_KEY_LEN;
            k.mv_data = kb;
            rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
            if (rc == 0 && (k.mv_size != HS_KEY_LEN
                            || hs_store_key_node(k.mv_data) != key))
                rc = MDB_NOTFOUND;
        }
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            break;
        }
        if (rc != 0)
            break;
        first = hs_store_key_time(k.mv_data);
        if (first >= hi)
            break;
        len = v.mv_size;
        if (len < HS_BLOCK_HDR || len > HS_BLOCK_BYTES_MAX * 2) {
            rc = MDB_CORRUPTED;
            break;
        }
        if (hs_block_last(v.mv_data) < lo)
            continue;
        memcpy(s->blk, v.mv_data, len);
        if (hs_store_block_decode(s->blk, len, first, s->smp, &n) != 0) {
            rc = MDB_CORRUPTED;
            break;
        }
        for (i = m = 0; i < n && rc == 0; i++)
            if (s->smp[i].t < lo || s->smp[i].t >= hi)
                s->smp[m++] = s->smp[i];
            else if (each != NULL)
                rc = each(arg, key, &s->smp[i]);
        if (rc != 0)
            break;
        if (m == n)
            continue;
        *ndel += n - m;
        s->tot.samples -= n - m;
        if ((rc = hs_store_block_del(s, key, first, len)) != 0)
            break;
        if (m > 0 && (rc = hs_store_samples_write(s, key, s->smp, m)) != 0)
            break;
    }
    mdb_cursor_close(c);
    return rc;
}

static int
hs_store_delete(struct hs_store *s, uint64_t key, int64_t lo, int64_t hi,
                uint64_t *n)
{
    int rc;

    *n = 0;
    if (lo >= hi)
        return 0;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    if ((rc = hs_store_delete_txn(s, key, lo, hi, n, NULL, NULL)) != 0) {
        hs_store_wabort(s);
        return rc;
    }
    return hs_store_wcommit(s);
}

int
hs_store_delete_txn(struct hs_store *s, uint64_t key, int64_t lo,
                    int64_t hi, uint64_t *n,
                    int (*each)(void *arg, uint64_t key,
                                const struct hs_sample *smp),
                    void *arg)
{
    struct hs_store_nm nm;
    MDB_cursor        *c;
    uint64_t           b0;
    int                rc;

    *n = 0;
    if (lo >= hi)
        return 0;
    if ((rc = hs_store_nm_get(s, key, &nm)) != 0)
        return rc;
    b0 = s->tot.bytes;
    rc = hs_store_delete_range_txn(s, key, lo, hi, n, each, arg);
    if (rc == 0)
        rc = mdb_cursor_open(s->w, s->samples, &c);
    if (rc == 0) {
        rc = hs_store_bounds(s, c, key, &nm.n);
        mdb_cursor_close(c);
    }
    if (rc != 0)
        return rc < 0 ? rc : hs_store_lmdb(s, rc, "delete");
    nm.n.samples -= *n;
    nm.n.bytes -= b0 - s->tot.bytes;
    return hs_store_nm_put(s, key, &nm);
}

int
hs_store_delete_range(struct hs_store *s, uint64_t key, int64_t lo,
                      int64_t hi, uint64_t *n)
{
    return hs_store_delete(s, key, lo, hi, n);
}

int
hs_store_delete_at(struct hs_store *s, uint64_t key, int64_t t, uint64_t *n)
{
    if (t < 0 || t == HS_T_MAX)
        return -EINVAL;
    return hs_store_delete(s, key, t, t + 1, n);
}

/* Drop node key's first block; *next_first the time of its next one
 * (HS_T_MAX when none).  nm counted down. */
static int
hs_store_drop_first(struct hs_store *s, MDB_cursor *c, uint64_t key,
                    struct hs_store_nm *nm, int64_t *next_first)
{
    MDB_val  k, v;
    int64_t  first;
    uint32_t cnt;
    size_t   len;
    int      rc;

    *next_first = HS_T_MAX;
    rc = hs_store_block_find(c, key, 0, &k, &v);
    if (rc != 0)
        return rc;
    first = hs_store_key_time(k.mv_data);
    len = v.mv_size;
    cnt = len >= HS_BLOCK_HDR ? hs_block_count(v.mv_data) : 0;
    if ((rc = hs_store_block_del(s, key, first, len)) != 0)
        return rc;
    s->tot.samples -= cnt;
    s->tot.dropped += cnt;
    nm->n.samples -= cnt;
    nm->n.dropped += cnt;
    nm->n.bytes -= HS_KEY_LEN + len;
    rc = hs_store_block_find(c, key, 0, &k, &v);
    if (rc == 0)
        *next_first = hs_store_key_time(k.mv_data);
    else if (rc != MDB_NOTFOUND)
        return rc;
    return 0;
}

/* A node's place in the size pruning's heap. */
struct hs_store_hn {
    uint64_t key;
    int64_t  first;
};

static void hs_store_heap_down(struct hs_store_hn *h, size_t n, size_t i);

static void
hs_store_heap_down(struct hs_store_hn *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;

        if (l < n && h[l].first < h[m].first)
            m = l;
        if (l + 1 < n && h[l + 1].first < h[m].first)
            m = l + 1;
        if (m == i)
            return;
        struct hs_store_hn t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

int
hs_store_prune(struct hs_store *s, int64_t now, uint64_t *ndrop)
{
    struct hs_store_hn *heap = NULL;
    MDB_cursor         *nc = NULL, *c = NULL;
    MDB_val             k, v;
    size_t              nh = 0, cap = 0;
    uint64_t            d0, side;
    int                 rc;

    *ndrop = 0;
    /* A reader killed mid-read (a worker's kill -9) pins the pages of its
     * snapshot until its slot is freed: free such slots first. */
    {
        int dead;

        (void)mdb_reader_check(s->env, &dead);
    }
    /* Pruning frees room: it may run on a full store. */
    s->full = false;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    d0 = s->tot.dropped;
    if ((rc = mdb_cursor_open(s->w, s->nodes, &nc)) != 0
        || (rc = mdb_cursor_open(s->w, s->samples, &c)) != 0)
        goto out;
    /* By age, node by node; the survivors' first times into the heap. */
    for (rc = mdb_cursor_get(nc, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(nc, &k, &v, MDB_NEXT)) {
        struct hs_store_nm nm;
        uint64_t           key;
        int64_t            ret, nf;
        MDB_val            bk, bv;
        bool               changed = false;

        if (k.mv_size != 8 || v.mv_size < sizeof(struct hs_node)) {
            rc = MDB_CORRUPTED;
            goto out;
        }
        key = hs_store_key_node(k.mv_data);
        if ((rc = hs_store_nm_get(s, key, &nm)) != 0)
            goto out;
        ret = nm.n.retention ? nm.n.retention : s->retention;
        while (ret > 0 && nm.n.samples > 0) {
            rc = hs_store_block_find(c, key, 0, &bk, &bv);
            if (rc != 0 || bv.mv_size < HS_BLOCK_HDR
                || hs_block_last(bv.mv_data) >= now - ret)
                break;
            if ((rc = hs_store_drop_first(s, c, key, &nm, &nf)) != 0)
                goto out;
            changed = true;
        }
        if (rc == MDB_NOTFOUND)
            rc = 0;
        if (rc != 0)
            goto out;
        if (changed) {
            if ((rc = hs_store_bounds(s, c, key, &nm.n)) != 0)
                goto out;
            if ((rc = hs_store_nm_put(s, key, &nm)) != 0)
                goto out;
            /* The put may move the nodes cursor: find it again. */
            uint8_t kb[16];
            hs_store_key_make(kb, key, 0);
            k.mv_size = 8;
            k.mv_data = kb;
            if ((rc = mdb_cursor_get(nc, &k, &v, MDB_SET)) != 0)
                goto out;
        }
        if (s->max_bytes && nm.n.samples > 0) {
            if (nh == cap) {
                size_t              nc2 = cap ? cap * 2 : 256;
                struct hs_store_hn *h2 = realloc(heap, nc2 * sizeof(*h2));

                if (h2 == NULL) {
                    rc = ENOMEM;
                    goto out;
                }
                heap = h2;
                cap = nc2;
            }
            heap[nh].key = key;
            heap[nh++].first = nm.n.first;
        }
    }
    if (rc != MDB_NOTFOUND)
        goto out;
    rc = 0;
    /* By size: the oldest block of the store first, until the samples
     * and the side databases (modified values, annotations: hs_side_prune
     * then drops theirs older than each node's oldest sample) fit. */
    for (size_t i = nh / 2; i-- > 0;)
        hs_store_heap_down(heap, nh, i);
    side = s->max_bytes ? hs_store_side_bytes(s) : 0;
    while (s->max_bytes && s->tot.bytes + side > s->max_bytes && nh > 0) {
        struct hs_store_nm nm;
        int64_t            nf;

        if ((rc = hs_store_nm_get(s, heap[0].key, &nm)) != 0)
            goto out;
        if ((rc = hs_store_drop_first(s, c, heap[0].key, &nm, &nf)) != 0)
            goto out;
        if ((rc = hs_store_bounds(s, c, heap[0].key, &nm.n)) != 0
            || (rc = hs_store_nm_put(s, heap[0].key, &nm)) != 0)
            goto out;
        s->size_pruned = true;
        if (nf == HS_T_MAX)
            heap[0] = heap[--nh];
        else
            heap[0].first = nf;
        hs_store_heap_down(heap, nh, 0);
    }
out:
    free(heap);
    if (c != NULL)
        mdb_cursor_close(c);
    if (nc != NULL)
        mdb_cursor_close(nc);
    if (rc != 0) {
        hs_store_wabort(s);
        return rc < 0 ? rc : hs_store_lmdb(s, rc, "prune");
    }
    *ndrop = s->tot.dropped - d0;
    if (*ndrop == 0) {
        hs_store_wabort(s);
        return 0;
    }
    return hs_store_wcommit(s);
}

bool
hs_store_full(const struct hs_store *s)
{
    return s->full;
}

void
hs_store_full_clear(struct hs_store *s)
{
    s->full = false;
}

int
hs_store_totals(struct hs_store *s, struct hs_totals *t)
{
    MDB_txn *txn;
    int      rc;

    if ((rc = hs_store_dbis_open(s)) != 0)
        return rc;
    if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_begin");
    rc = hs_store_totals_load(s, txn, t);
    mdb_txn_abort(txn);
    return rc;
}

int
hs_store_node(struct hs_store *s, uint64_t key, struct hs_node *nd,
              uint8_t *nodeid, size_t cap)
{
    MDB_txn *txn;
    uint8_t  kb[16];
    MDB_val  k = { 8, kb }, v;
    int      rc;

    if ((rc = hs_store_dbis_open(s)) != 0)
        return rc;
    if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_begin");
    hs_store_key_make(kb, key, 0);
    rc = mdb_get(txn, s->nodes, &k, &v);
    if (rc == 0 && v.mv_size >= sizeof(*nd)) {
        memcpy(nd, v.mv_data, sizeof(*nd));
        if (nodeid != NULL)
            memcpy(nodeid, (uint8_t *)v.mv_data + sizeof(*nd),
                   nd->nodeid_len < cap ? nd->nodeid_len : cap);
    } else if (rc == 0) {
        rc = MDB_CORRUPTED;
    }
    mdb_txn_abort(txn);
    return rc == 0 ? 0 : hs_store_lmdb(s, rc, "mdb_get node");
}

int
hs_store_nodes(struct hs_store *s,
               int (*f)(void *arg, uint64_t key, const struct hs_node *,
                        const uint8_t *nodeid, size_t len),
               void *arg)
{
    MDB_txn    *txn;
    MDB_cursor *c;
    MDB_val     k, v;
    int         rc;

    if ((rc = hs_store_dbis_open(s)) != 0)
        return rc;
    if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_begin");
    if ((rc = mdb_cursor_open(txn, s->nodes, &c)) != 0) {
        mdb_txn_abort(txn);
        return hs_store_lmdb(s, rc, "mdb_cursor_open");
    }
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        struct hs_node nd;

        if (k.mv_size != 8 || v.mv_size < sizeof(nd)) {
            rc = MDB_CORRUPTED;
            break;
        }
        memcpy(&nd, v.mv_data, sizeof(nd));
        if (nd.nodeid_len != v.mv_size - sizeof(nd)) {
            rc = MDB_CORRUPTED;
            break;
        }
        if (f(arg, hs_store_key_node(k.mv_data), &nd,
              (const uint8_t *)v.mv_data + sizeof(nd), nd.nodeid_len))
            break;
    }
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    return rc == 0 ? 0 : hs_store_lmdb(s, rc, "nodes");
}

uint64_t
hs_store_file_bytes(struct hs_store *s)
{
    char        p[4200];
    struct stat st;

    snprintf(p, sizeof(p), "%s/data.mdb", s->path);
    if (stat(p, &st) == -1)
        return 0;
    return (uint64_t)st.st_size;
}

/* ---------------------------------------------------------------- reads */

int
hs_read_begin(struct hs_store *s, struct hs_read *r)
{
    int rc;

    r->s = s;
    r->open = false;
    r->done = true;
    if ((rc = hs_store_dbis_open(s)) != 0)
        return rc;
    if (s->rtxn == NULL) {
        rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->rtxn);
        if (rc == MDB_MAP_RESIZED) {
            mdb_env_set_mapsize(s->env, 0);
            rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &s->rtxn);
        }
        if (rc != 0) {
            s->rtxn = NULL;
            return hs_store_lmdb(s, rc, "mdb_txn_begin");
        }
        if ((rc = mdb_cursor_open(s->rtxn, s->samples, &s->rcur)) != 0) {
            mdb_txn_abort(s->rtxn);
            s->rtxn = NULL;
            return hs_store_lmdb(s, rc, "mdb_cursor_open");
        }
    } else {
        rc = mdb_txn_renew(s->rtxn);
        if (rc == MDB_MAP_RESIZED) {
            mdb_env_set_mapsize(s->env, 0);
            rc = mdb_txn_renew(s->rtxn);
        }
        if (rc != 0)
            return hs_store_lmdb(s, rc, "mdb_txn_renew");
        if ((rc = mdb_cursor_renew(s->rtxn, s->rcur)) != 0) {
            mdb_txn_reset(s->rtxn);
            return hs_store_lmdb(s, rc, "mdb_cursor_renew");
        }
    }
    r->txn = s->rtxn;
    r->cur = s->rcur;
    r->open = true;
    return 0;
}

void
hs_read_end(struct hs_read *r)
{
    if (r->open)
        mdb_txn_reset(r->txn);
    r->open = false;
    r->done = true;
}

/* Make the block at k, v the current one. */
static int
hs_read_load(struct hs_read *r, const MDB_val *k, const MDB_val *v)
{
    if (v->mv_size < HS_BLOCK_HDR)
        return -EINVAL;
    r->blk = v->mv_data;
    r->blk_len = v->mv_size;
    r->prev = hs_store_key_time(k->mv_data);
    r->p = r->blk + HS_BLOCK_HDR;
    if (r->reverse) {
        const uint8_t   *p = r->p, *end = r->blk + r->blk_len;
        struct hs_sample smp;
        int64_t          prev = r->prev;
        uint32_t         n = 0;

        while (p < end) {
            if (n == HS_READ_OFFS_MAX)
                return -EINVAL;
            r->off[n] = (uint32_t)(p - r->blk);
            r->prevt[n] = prev;
            if (hs_sample_unpack(&p, end, prev, &smp) != 0)
                return -EINVAL;
            prev = smp.t;
            n++;
        }
        r->n = r->i = n;
    }
    return 0;
}

int
hs_read_seek(struct hs_read *r, uint64_t key, int64_t lo, int64_t hi,
             bool reverse)
{
    MDB_val k, v;
    int     rc;

    r->key = key;
    r->lo = lo < 0 ? 0 : lo;
    r->hi = hi;
    r->reverse = reverse;
    r->done = true;
    if (!r->open || r->lo > r->hi)
        return 0;
    rc = hs_store_block_find(r->cur, key, reverse ? r->hi : r->lo, &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc != 0)
        return hs_store_lmdb(r->s, rc, "seek");
    if (hs_read_load(r, &k, &v) != 0)
        return -EINVAL;
    r->done = false;
    return 0;
}

int
hs_read_next(struct hs_read *r, struct hs_sample *smp)
{
    MDB_val k, v;
    int     rc;

    while (!r->done) {
        if (!r->reverse) {
            if (r->p < r->blk + r->blk_len) {
                if (hs_sample_unpack(&r->p, r->blk + r->blk_len, r->prev,
                                     smp) != 0) {
                    r->done = true;
                    return -EINVAL;
                }
                r->prev = smp->t;
                if (smp->t < r->lo)
                    continue;
                if (smp->t > r->hi)
                    break;
                return 0;
            }
            rc = mdb_cursor_get(r->cur, &k, &v, MDB_NEXT);
        } else {
            if (r->i > 0) {
                const uint8_t *p = r->blk + r->off[--r->i];

                if (hs_sample_unpack(&p, r->blk + r->blk_len,
                                     r->prevt[r->i], smp) != 0) {
                    r->done = true;
                    return -EINVAL;
                }
                if (smp->t > r->hi)
                    continue;
                if (smp->t < r->lo)
                    break;
                return 0;
            }
            rc = mdb_cursor_get(r->cur, &k, &v, MDB_PREV);
        }
        if (rc != 0 || k.mv_size != HS_KEY_LEN
            || hs_store_key_node(k.mv_data) != r->key)
            break;
        if (!r->reverse && hs_store_key_time(k.mv_data) > r->hi)
            break;
        if (r->reverse && v.mv_size >= HS_BLOCK_HDR
            && hs_block_last(v.mv_data) < r->lo)
            break;
        if (hs_read_load(r, &k, &v) != 0) {
            r->done = true;
            return -EINVAL;
        }
    }
    r->done = true;
    return -ENOENT;
}
