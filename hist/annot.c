/*
 * hist/annot.c: annotations in the history store (hist/annot.h says what
 * is kept and how).
 *
 * Invariant: a node's annotation exists only while the node is
 * registered (a store without the node refuses it).
 *
 * Concurrency: one thread per store handle (hist/store.h).
 */
#include "annot.h"

#include <errno.h>
#include <string.h>

#include "store_int.h"

int
hs_annot_update(struct hs_store *s, uint64_t key, int op, const uint8_t *dv,
                size_t len, const uint8_t *user, size_t user_len,
                enum hs_outcome *out)
{
    struct hs_sample smp;
    const uint8_t   *v;
    size_t           vlen, need;
    uint8_t          kb[HS_KEY_LEN];
    MDB_val          k = { 8, kb }, nv;
    bool             there;
    int              rc;

    if (op < HS_UPD_INSERT || op > HS_ANNOT_REMOVE
        || user_len > HS_ANNOT_USER_MAX
        || hs_sample_split(dv, len, &smp) != 0 || !smp.has_src)
        return -EINVAL;
    need = hs_sample_packed_size(&smp, smp.t);
    if (need > HS_BLOCK_BYTES_MAX)
        return -EINVAL;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    hs_store_key_make(kb, key, 0);
    rc = mdb_get(s->w, s->nodes, &k, &nv);
    if (rc != 0) {
        hs_store_wabort(s);
        return hs_store_lmdb(s, rc, "mdb_get node");
    }
    rc = hs_side_get(s, HS_SIDE_ANNOTS, key, smp.t, user, user_len, &v,
                     &vlen);
    if (rc != 0 && rc != -ENOENT) {
        hs_store_wabort(s);
        return rc;
    }
    there = rc == 0;
    if ((op == HS_UPD_INSERT && there)
        || ((op == HS_UPD_REPLACE || op == HS_ANNOT_REMOVE) && !there)) {
        hs_store_wabort(s);
        *out = there ? HS_EXISTS : HS_NO_ENTRY;
        return 0;
    }
    *out = there ? HS_REPLACED : HS_INSERTED;
    if (op == HS_ANNOT_REMOVE) {
        rc = hs_side_del(s, HS_SIDE_ANNOTS, key, smp.t, user, user_len);
    } else {
        hs_sample_pack(&smp, smp.t, s->blk2);
        rc = hs_side_put(s, HS_SIDE_ANNOTS, key, smp.t, user, user_len,
                         s->blk2, need, false);
    }
    if (rc != 0) {
        hs_store_wabort(s);
        return rc;
    }
    return hs_store_wcommit(s);
}

int
hs_annot_seek(struct hs_side_read *r, struct hs_read *rd, uint64_t key,
              int64_t lo, int64_t hi, bool reverse)
{
    return hs_side_seek(r, rd, HS_SIDE_ANNOTS, key, lo, hi, reverse);
}

int
hs_annot_next(struct hs_side_read *r, struct hs_sample *smp,
              const uint8_t **user, size_t *user_len)
{
    struct hs_side_ent e;
    const uint8_t     *p;
    int                rc;

    if ((rc = hs_side_next(r, &e)) != 0)
        return rc;
    p = e.val;
    if (hs_sample_unpack(&p, e.val + e.val_len, e.t, smp) != 0
        || smp->t != e.t)
        return -EINVAL;
    *user = e.suffix;
    *user_len = e.suffix_len;
    return 0;
}
