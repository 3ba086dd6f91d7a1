/*
 * hist/side.c: the side databases of the history store (hist/side.h says
 * what they hold and how they are keyed).
 *
 * Invariants: every key is 16 to 16 + HS_SIDE_SUFFIX_MAX bytes, node key
 * and time first, so one node's entries are contiguous and in time order
 * (entries of one time in suffix order).
 *
 * Transactions: the writer's calls run inside the store's open write
 * transaction (s->w, hist/store_int.h) except hs_side_prune(), which is
 * its own; readers run in the store's recycled read transaction with one
 * recycled cursor per database (mdb_cursor_renew: no allocation).
 *
 * Concurrency: one thread per store handle (hist/store.h).
 */
#include "side.h"

#include <errno.h>
#include <lmdb.h>
#include <string.h>

#include "store_int.h"

static void hs_side_key(uint8_t *k, uint64_t key, int64_t t,
                        const uint8_t *suffix, size_t slen);
static bool hs_side_ours(const struct hs_side_read *r, const MDB_val *k);
static int hs_side_prune_node(struct hs_store *s, uint64_t key,
                              int64_t cutoff, uint64_t *n);

static void
hs_side_key(uint8_t *k, uint64_t key, int64_t t, const uint8_t *suffix,
            size_t slen)
{
    hs_store_key_make(k, key, t);
    if (slen > 0)
        memcpy(k + HS_KEY_LEN, suffix, slen);
}

int
hs_side_open(struct hs_store *s)
{
    int rc;

    /* hs_store_dbis_open() opens them with the samples' (a transaction
     * sees only the databases opened before it began). */
    if ((rc = hs_store_dbis_open(s)) != 0)
        return rc;
    return s->side_have ? 0 : -ENOENT;
}

/* k is an entry of r's node within its times. */
static bool
hs_side_ours(const struct hs_side_read *r, const MDB_val *k)
{
    int64_t t;

    if (k->mv_size < HS_KEY_LEN
        || hs_store_key_node(k->mv_data) != r->key)
        return false;
    t = hs_store_key_time(k->mv_data);
    return t >= r->lo && t <= r->hi;
}

int
hs_side_seek(struct hs_side_read *r, struct hs_read *rd, enum hs_side db,
             uint64_t key, int64_t lo, int64_t hi, bool reverse)
{
    struct hs_store *s = rd->s;
    MDB_cursor     **c = &s->side_cur[db];
    uint8_t          kb[HS_KEY_LEN];
    MDB_val          k = { HS_KEY_LEN, kb }, v;
    int              rc;

    r->s = s;
    r->key = key;
    r->lo = lo < 0 ? 0 : lo;
    r->hi = hi;
    r->reverse = reverse;
    r->done = true;
    r->first = false;
    if (!rd->open || r->lo > r->hi)
        return 0;
    if ((rc = hs_side_open(s)) != 0)
        return rc == -ENOENT ? 0 : rc;
    if (*c == NULL)
        rc = mdb_cursor_open(rd->txn, s->side[db], c);
    else
        rc = mdb_cursor_renew(rd->txn, *c);
    if (rc != 0) {
        *c = NULL;
        return hs_store_lmdb(s, rc, "side cursor");
    }
    r->cur = *c;
    if (!reverse) {
        hs_store_key_make(kb, key, r->lo);
        rc = mdb_cursor_get(*c, &k, &v, MDB_SET_RANGE);
    } else {
        /* The last entry at or before hi: the one before the first
         * after it. */
        if (r->hi == HS_T_MAX)
            hs_store_key_make(kb, key + 1, 0);
        else
            hs_store_key_make(kb, key, r->hi + 1);
        rc = key == UINT64_MAX && r->hi == HS_T_MAX
                 ? MDB_NOTFOUND
                 : mdb_cursor_get(*c, &k, &v, MDB_SET_RANGE);
        if (rc == 0)
            rc = mdb_cursor_get(*c, &k, &v, MDB_PREV);
        else if (rc == MDB_NOTFOUND)
            rc = mdb_cursor_get(*c, &k, &v, MDB_LAST);
    }
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc != 0)
        return hs_store_lmdb(s, rc, "side seek");
    r->done = !hs_side_ours(r, &k);
    r->first = true;
    return 0;
}

int
hs_side_next(struct hs_side_read *r, struct hs_side_ent *e)
{
    MDB_val k, v;
    int     rc;

    if (r->done)
        return -ENOENT;
    rc = mdb_cursor_get(r->cur, &k, &v,
                        r->first ? MDB_GET_CURRENT
                        : r->reverse ? MDB_PREV : MDB_NEXT);
    r->first = false;
    if (rc != 0 || !hs_side_ours(r, &k)) {
        r->done = true;
        return -ENOENT;
    }
    e->t = hs_store_key_time(k.mv_data);
    e->suffix = (const uint8_t *)k.mv_data + HS_KEY_LEN;
    e->suffix_len = k.mv_size - HS_KEY_LEN;
    e->val = v.mv_data;
    e->val_len = v.mv_size;
    return 0;
}

int
hs_side_put(struct hs_store *s, enum hs_side db, uint64_t key, int64_t t,
            const uint8_t *suffix, size_t slen, const uint8_t *val,
            size_t vlen, bool noover)
{
    uint8_t kb[HS_KEY_LEN + HS_SIDE_SUFFIX_MAX];
    MDB_val k = { HS_KEY_LEN + slen, kb }, v = { vlen, (void *)val };
    int     rc;

    if (slen > HS_SIDE_SUFFIX_MAX || s->w == NULL)
        return -EINVAL;
    if ((rc = hs_side_open(s)) != 0)
        return rc;
    hs_side_key(kb, key, t, suffix, slen);
    rc = mdb_put(s->w, s->side[db], &k, &v, noover ? MDB_NOOVERWRITE : 0);
    if (rc == MDB_KEYEXIST)
        return -EEXIST;
    return rc == 0 ? 0 : hs_store_lmdb(s, rc, "side put");
}

int
hs_side_get(struct hs_store *s, enum hs_side db, uint64_t key, int64_t t,
            const uint8_t *suffix, size_t slen, const uint8_t **val,
            size_t *vlen)
{
    uint8_t kb[HS_KEY_LEN + HS_SIDE_SUFFIX_MAX];
    MDB_val k = { HS_KEY_LEN + slen, kb }, v;
    int     rc;

    if (slen > HS_SIDE_SUFFIX_MAX || s->w == NULL)
        return -EINVAL;
    if ((rc = hs_side_open(s)) != 0)
        return rc;
    hs_side_key(kb, key, t, suffix, slen);
    rc = mdb_get(s->w, s->side[db], &k, &v);
    if (rc == MDB_NOTFOUND)
        return -ENOENT;
    if (rc != 0)
        return hs_store_lmdb(s, rc, "side get");
    *val = v.mv_data;
    *vlen = v.mv_size;
    return 0;
}

int
hs_side_del(struct hs_store *s, enum hs_side db, uint64_t key, int64_t t,
            const uint8_t *suffix, size_t slen)
{
    uint8_t kb[HS_KEY_LEN + HS_SIDE_SUFFIX_MAX];
    MDB_val k = { HS_KEY_LEN + slen, kb };
    int     rc;

    if (slen > HS_SIDE_SUFFIX_MAX || s->w == NULL)
        return -EINVAL;
    if ((rc = hs_side_open(s)) != 0)
        return rc;
    hs_side_key(kb, key, t, suffix, slen);
    rc = mdb_del(s->w, s->side[db], &k, NULL);
    if (rc == MDB_NOTFOUND)
        return -ENOENT;
    return rc == 0 ? 0 : hs_store_lmdb(s, rc, "side del");
}

int
hs_side_drop(struct hs_store *s, enum hs_side db, uint64_t key, int64_t lo,
             int64_t hi, uint64_t *n)
{
    MDB_cursor *c;
    uint8_t     kb[HS_KEY_LEN];
    MDB_val     k = { HS_KEY_LEN, kb }, v;
    int         rc;

    *n = 0;
    if (s->w == NULL)
        return -EINVAL;
    if (lo >= hi)
        return 0;
    if ((rc = hs_side_open(s)) != 0)
        return rc;
    if ((rc = mdb_cursor_open(s->w, s->side[db], &c)) != 0)
        return hs_store_lmdb(s, rc, "side cursor");
    hs_store_key_make(kb, key, lo < 0 ? 0 : lo);
    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    while (rc == 0 && k.mv_size >= HS_KEY_LEN
           && hs_store_key_node(k.mv_data) == key
           && hs_store_key_time(k.mv_data) < hi) {
        /* mdb_cursor_del leaves the cursor on the next entry. */
        if ((rc = mdb_cursor_del(c, 0)) != 0)
            break;
        (*n)++;
        rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
    }
    mdb_cursor_close(c);
    if (rc != 0 && rc != MDB_NOTFOUND && rc != EINVAL)
        return hs_store_lmdb(s, rc, "side drop");
    return 0;
}

/* One node's entries before cutoff, in both databases. */
static int
hs_side_prune_node(struct hs_store *s, uint64_t key, int64_t cutoff,
                   uint64_t *n)
{
    for (unsigned i = 0; i < HS_SIDE_N; i++) {
        uint64_t m;
        int      rc = hs_side_drop(s, (enum hs_side)i, key, 0, cutoff, &m);

        if (rc != 0)
            return rc;
        *n += m;
    }
    return 0;
}

int
hs_side_prune(struct hs_store *s, int64_t now, uint64_t *n)
{
    MDB_cursor *nc;
    MDB_val     k, v;
    uint64_t    keys[64], n0;
    int64_t     cuts[64];
    size_t      nk = 0;
    uint8_t     from[8];
    bool        more = true, over = false;
    int         rc;

    *n = 0;
    if ((rc = hs_side_open(s)) != 0)
        return rc;
    /* hs_store_prune() dropped samples for the size limit: the entries
     * older than what is left go too. */
    over = s->size_pruned;
    s->size_pruned = false;
    memset(from, 0, sizeof(from));
    /* The nodes in rounds of 64 (the drops move no nodes cursor). */
    while (more) {
        if ((rc = hs_store_wbegin(s)) != 0)
            return rc;
        if ((rc = mdb_cursor_open(s->w, s->nodes, &nc)) != 0) {
            hs_store_wabort(s);
            return hs_store_lmdb(s, rc, "prune side");
        }
        k.mv_size = 8;
        k.mv_data = from;
        nk = 0;
        for (rc = mdb_cursor_get(nc, &k, &v, MDB_SET_RANGE);
             rc == 0 && nk < 64;
             rc = mdb_cursor_get(nc, &k, &v, MDB_NEXT)) {
            struct hs_node nd;
            int64_t        ret, cut;

            if (k.mv_size != 8 || v.mv_size < sizeof(nd))
                continue;
            memcpy(&nd, v.mv_data, sizeof(nd));
            ret = nd.retention ? nd.retention : s->retention;
            if (over) {
                cut = nd.samples > 0 ? nd.first : HS_T_MAX;
            } else {
                if (ret <= 0 || now - ret <= 0)
                    continue;
                cut = now - ret;
                if (nd.samples > 0 && nd.first < cut)
                    cut = nd.first;
            }
            keys[nk] = hs_store_key_node(k.mv_data);
            cuts[nk++] = cut;
        }
        more = rc == 0;
        if (more)
            memcpy(from, k.mv_data, 8);
        mdb_cursor_close(nc);
        if (rc != 0 && rc != MDB_NOTFOUND) {
            hs_store_wabort(s);
            return hs_store_lmdb(s, rc, "prune side");
        }
        rc = 0;
        n0 = *n;
        for (size_t i = 0; i < nk && rc == 0; i++)
            rc = hs_side_prune_node(s, keys[i], cuts[i], n);
        /* A round that dropped nothing commits nothing (no fsync). */
        if (rc != 0 || *n == n0) {
            hs_store_wabort(s);
            if (rc != 0)
                return rc;
        } else if ((rc = hs_store_wcommit(s)) != 0) {
            return rc;
        }
    }
    return 0;
}

int
hs_side_stat(struct hs_store *s, enum hs_side db, uint64_t *entries,
             uint64_t *bytes)
{
    MDB_txn *txn;
    MDB_stat st;
    int      rc;

    *entries = *bytes = 0;
    if ((rc = hs_side_open(s)) != 0)
        return rc == -ENOENT ? 0 : rc;
    if ((rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn)) != 0)
        return hs_store_lmdb(s, rc, "mdb_txn_begin");
    rc = mdb_stat(txn, s->side[db], &st);
    mdb_txn_abort(txn);
    if (rc != 0)
        return hs_store_lmdb(s, rc, "mdb_stat");
    *entries = st.ms_entries;
    *bytes = (uint64_t)(st.ms_branch_pages + st.ms_leaf_pages
                        + st.ms_overflow_pages) * st.ms_psize;
    return 0;
}
