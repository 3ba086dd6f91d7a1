/*
 * hist/modified.c: the modified values of the history store
 * (hist/modified.h says what is kept and how).
 *
 * Invariant: an entry is written in the write transaction that made the
 * change it records, so a kill -9 leaves both or neither.
 *
 * Concurrency: one thread per store handle (hist/store.h).
 */
#include "modified.h"

#include <errno.h>
#include <string.h>

#include "store_int.h"


/* A delete's context for hs_store_delete_txn()'s each. */
struct hs_modified_del {
    struct hs_store         *s;
    const struct hs_mod_who *who;
};

static int hs_modified_keep(struct hs_store *s, uint64_t key,
                            const struct hs_sample *smp,
                            enum hs_mod_type type,
                            const struct hs_mod_who *who);
static int hs_modified_each(void *arg, uint64_t key,
                            const struct hs_sample *smp);

/*
 * One entry: smp (its body not in the map: the writer's scratch or the
 * caller's) recorded as type by who.  Packed into s->blk2's second half,
 * which hs_store_samples_write() no longer needs once the change is made.
 */
static int
hs_modified_keep(struct hs_store *s, uint64_t key,
                 const struct hs_sample *smp, enum hs_mod_type type,
                 const struct hs_mod_who *who)
{
    size_t   ulen = who->user_len < HS_MOD_USER_MAX ? who->user_len
                                                    : HS_MOD_USER_MAX;
    size_t   need = 2 + ulen + hs_sample_packed_size(smp, smp->t);
    uint8_t *b, *p, sfx[8];
    int64_t  mt = who->time;
    uint64_t u;
    int      rc;

    if (need > HS_BLOCK_BYTES_MAX)
        return -EINVAL;             /* larger than any block takes */
    b = s->blk2 + HS_BLOCK_BYTES_MAX;
    b[0] = (uint8_t)type;
    b[1] = (uint8_t)ulen;
    memcpy(b + 2, who->user, ulen);
    p = hs_sample_pack(smp, smp->t, b + 2 + ulen);
    /* The modification time is the key's suffix: a change of the same
     * tick takes the next free one. */
    for (int tries = 0; tries < 1024; tries++, mt++) {
        u = (uint64_t)mt;
        for (int i = 7; i >= 0; i--, u >>= 8)
            sfx[i] = (uint8_t)u;
        rc = hs_side_put(s, HS_SIDE_MODIFIED, key, smp->t, sfx, 8, b,
                         (size_t)(p - b), true);
        if (rc != -EEXIST)
            return rc;
    }
    return -EIO;
}

int
hs_modified_update(struct hs_store *s, uint64_t key, enum hs_upd op,
                   const uint8_t *dv, size_t len,
                   const struct hs_mod_who *who, enum hs_outcome *out)
{
    struct hs_sample smp, old;
    int              rc;

    if (who == NULL)
        return hs_store_update(s, key, op, dv, len, out);
    if (hs_sample_split(dv, len, &smp) != 0)
        return -EINVAL;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    rc = hs_store_update_txn(s, key, op, &smp, out, &old);
    if (rc == 0 && *out == HS_INSERTED)
        rc = hs_modified_keep(s, key, &smp, HS_MOD_INSERT, who);
    else if (rc == 0 && *out == HS_REPLACED && old.body_len > 0)
        rc = hs_modified_keep(s, key, &old,
                              op == HS_UPD_REPLACE ? HS_MOD_REPLACE
                                                   : HS_MOD_UPDATE, who);
    if (rc != 0) {
        hs_store_wabort(s);
        return rc;
    }
    return hs_store_wcommit(s);
}

/* hs_store_delete_txn()'s each: the value about to go, kept. */
static int
hs_modified_each(void *arg, uint64_t key, const struct hs_sample *smp)
{
    struct hs_modified_del *d = arg;

    return hs_modified_keep(d->s, key, smp, HS_MOD_DELETE, d->who);
}

int
hs_modified_delete_range(struct hs_store *s, uint64_t key, int64_t lo,
                         int64_t hi, const struct hs_mod_who *who,
                         uint64_t *n)
{
    struct hs_modified_del d = { s, who };
    int                    rc;

    *n = 0;
    if (who == NULL)
        return hs_store_delete_range(s, key, lo, hi, n);
    if (lo >= hi)
        return 0;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    if ((rc = hs_store_delete_txn(s, key, lo, hi, n, hs_modified_each, &d))
        != 0) {
        hs_store_wabort(s);
        return rc;
    }
    return hs_store_wcommit(s);
}

int
hs_modified_delete_at(struct hs_store *s, uint64_t key, int64_t t,
                      const struct hs_mod_who *who, uint64_t *n)
{
    if (t < 0 || t == HS_T_MAX)
        return -EINVAL;
    return hs_modified_delete_range(s, key, t, t + 1, who, n);
}

int
hs_modified_forget(struct hs_store *s, uint64_t key, int64_t lo, int64_t hi,
                   uint64_t *n)
{
    int rc;

    *n = 0;
    if ((rc = hs_store_wbegin(s)) != 0)
        return rc;
    if ((rc = hs_side_drop(s, HS_SIDE_MODIFIED, key, lo, hi, n)) != 0) {
        hs_store_wabort(s);
        return rc;
    }
    if (*n == 0) {
        hs_store_wabort(s);
        return 0;
    }
    return hs_store_wcommit(s);
}

int
hs_modified_seek(struct hs_side_read *r, struct hs_read *rd, uint64_t key,
                 int64_t lo, int64_t hi, bool reverse)
{
    return hs_side_seek(r, rd, HS_SIDE_MODIFIED, key, lo, hi, reverse);
}

int
hs_modified_next(struct hs_side_read *r, struct hs_sample *smp,
                 struct hs_mod_info *mi)
{
    struct hs_side_ent e;
    const uint8_t     *p;
    uint64_t           u = 0;
    int                rc;

    if ((rc = hs_side_next(r, &e)) != 0)
        return rc;
    if (e.suffix_len != 8 || e.val_len < 3 || e.val[0] < HS_MOD_INSERT
        || e.val[0] > HS_MOD_DELETE || (size_t)2 + e.val[1] >= e.val_len)
        return -EINVAL;
    for (int i = 0; i < 8; i++)
        u = u << 8 | e.suffix[i];
    mi->time = (int64_t)u;
    mi->type = (enum hs_mod_type)e.val[0];
    mi->user = e.val + 2;
    mi->user_len = e.val[1];
    p = e.val + 2 + e.val[1];
    if (hs_sample_unpack(&p, e.val + e.val_len, e.t, smp) != 0
        || smp->t != e.t)
        return -EINVAL;
    return 0;
}
