/*
 * hist/events.c: event history in the store's LMDB environment
 * (hist/events.h says what is where), on the store's insides
 * (hist/store_int.h: its environment, error text and full flag).
 *
 * Invariants:
 *   - every evnotif entry names an event of `events` with its Time and
 *     id, and that event's value lists the entry's notifier: an event and
 *     its entries are put and dropped in one transaction;
 *   - the totals count exactly what is kept: per event 16 key bytes and
 *     its value, per entry 24 key bytes.
 *
 * Transactions: every writing call is one LMDB write transaction, aborted
 * whole on any error (a kill -9 leaves the last commit).  Readers recycle
 * one read-only transaction and two cursors (mdb_txn_reset / renew): no
 * allocation per read.  The store's own read transaction is another one
 * of the same thread (the environment is MDB_NOTLS).
 *
 * Concurrency: one thread per handle, as the store.
 */
#include "events.h"

#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

#define HS_EV_KEY      16u      /* time + id */
#define HS_EV_IKEY     24u      /* notifier + time + id */
#define HS_EV_T_MAX    INT64_MAX

struct hs_events {
    struct hs_store *s;
    MDB_env         *env;
    MDB_dbi          ev, ix, meta;
    bool             dbis;
    MDB_txn         *rtxn;      /* the recycled read transaction */
    MDB_cursor      *rcur;      /* on events */
    MDB_cursor      *ricur;     /* on evnotif */
    MDB_txn         *w;         /* the open write transaction */
    struct hs_ev_totals tot;
};

static void hs_events_put64(uint8_t *p, uint64_t v);
static uint64_t hs_events_get64(const uint8_t *p);
static void hs_events_key(uint8_t *k, int64_t t, uint64_t id);
static int hs_events_dbis(struct hs_events *e);
static int hs_events_wbegin(struct hs_events *e);
static int hs_events_wcommit(struct hs_events *e);
static void hs_events_wabort(struct hs_events *e);
static int hs_events_tot_load(struct hs_events *e, MDB_txn *txn,
                              struct hs_ev_totals *t);
static int hs_events_one(struct hs_events *e, const struct hs_ev_in *in);
static int hs_events_drop(struct hs_events *e, MDB_cursor *c,
                          const MDB_val *k, const MDB_val *v);
static int hs_evread_pos(struct hs_evread *r, MDB_cursor *c, size_t pfx,
                         const uint8_t *start, bool inclusive);
static int hs_evread_take(struct hs_evread *r, const MDB_val *k,
                          const MDB_val *v, struct hs_event *ev);

static void
hs_events_put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t
hs_events_get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void
hs_events_key(uint8_t *k, int64_t t, uint64_t id)
{
    hs_events_put64(k, (uint64_t)t);
    hs_events_put64(k + 8, id);
}

uint64_t
hs_events_notifier(const uint8_t *nodeid, size_t len)
{
    /* i=2253 in the four-byte form, and in the numeric form. */
    static const uint8_t four[] = { 0x01, 0x00, 0xCD, 0x08 };
    static const uint8_t num[] = { 0x02, 0x00, 0x00, 0xCD, 0x08, 0x00,
                                   0x00 };

    if ((len == sizeof(four) && memcmp(nodeid, four, len) == 0)
        || (len == sizeof(num) && memcmp(nodeid, num, len) == 0))
        return HS_EV_ALL;
    return hs_store_key(nodeid, len);
}

uint64_t
hs_events_id(const uint8_t *eventid, size_t len)
{
    return hs_store_key(eventid, len);
}

struct hs_events *
hs_events_open(struct hs_store *s, char *err, size_t errlen)
{
    struct hs_events *e = calloc(1, sizeof(*e));

    if (e == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->s = s;
    e->env = s->env;
    if (hs_events_dbis(e) != 0 && !s->readonly) {
        snprintf(err, errlen, "%s", hs_store_error(s));
        hs_events_close(e);
        return NULL;
    }
    return e;
}

void
hs_events_close(struct hs_events *e)
{
    if (e == NULL)
        return;
    if (e->w != NULL)
        mdb_txn_abort(e->w);
    if (e->rcur != NULL)
        mdb_cursor_close(e->rcur);
    if (e->ricur != NULL)
        mdb_cursor_close(e->ricur);
    if (e->rtxn != NULL)
        mdb_txn_abort(e->rtxn);
    free(e);
}

/* The databases: the writer creates them; a reader that finds none tries
 * again at its next read. */
static int
hs_events_dbis(struct hs_events *e)
{
    bool     ro = e->s->readonly;
    unsigned f = ro ? 0 : MDB_CREATE;
    MDB_txn *txn;
    int      rc;

    if (e->dbis)
        return 0;
    rc = mdb_txn_begin(e->env, NULL, ro ? MDB_RDONLY : 0, &txn);
    if (rc == MDB_MAP_RESIZED) {
        mdb_env_set_mapsize(e->env, 0);
        rc = mdb_txn_begin(e->env, NULL, ro ? MDB_RDONLY : 0, &txn);
    }
    if (rc != 0)
        return hs_store_lmdb(e->s, rc, "mdb_txn_begin");
    if ((rc = mdb_dbi_open(txn, "events", f, &e->ev)) != 0
        || (rc = mdb_dbi_open(txn, "evnotif", f, &e->ix)) != 0
        || (rc = mdb_dbi_open(txn, "meta", f, &e->meta)) != 0) {
        mdb_txn_abort(txn);
        return hs_store_lmdb(e->s, rc, "mdb_dbi_open events");
    }
    if ((rc = mdb_txn_commit(txn)) != 0)
        return hs_store_lmdb(e->s, rc, "mdb_txn_commit");
    e->dbis = true;
    return 0;
}

static int
hs_events_tot_load(struct hs_events *e, MDB_txn *txn, struct hs_ev_totals *t)
{
    MDB_val k = { 8, "evtotals" }, v;
    int     rc;

    rc = mdb_get(txn, e->meta, &k, &v);
    if (rc == MDB_NOTFOUND) {
        memset(t, 0, sizeof(*t));
        return 0;
    }
    if (rc != 0)
        return hs_store_lmdb(e->s, rc, "mdb_get evtotals");
    if (v.mv_size != sizeof(*t))
        return -EIO;
    memcpy(t, v.mv_data, sizeof(*t));
    return 0;
}

static int
hs_events_wbegin(struct hs_events *e)
{
    int rc;

    if (e->s->readonly)
        return -EPERM;
    if ((rc = hs_events_dbis(e)) != 0)
        return rc;
    if ((rc = mdb_txn_begin(e->env, NULL, 0, &e->w)) != 0) {
        e->w = NULL;
        return hs_store_lmdb(e->s, rc, "mdb_txn_begin");
    }
    if ((rc = hs_events_tot_load(e, e->w, &e->tot)) != 0) {
        hs_events_wabort(e);
        return rc;
    }
    return 0;
}

static int
hs_events_wcommit(struct hs_events *e)
{
    MDB_val k = { 8, "evtotals" }, v = { sizeof(e->tot), &e->tot };
    int     rc;

    if ((rc = mdb_put(e->w, e->meta, &k, &v, 0)) != 0) {
        hs_events_wabort(e);
        return hs_store_lmdb(e->s, rc, "mdb_put evtotals");
    }
    rc = mdb_txn_commit(e->w);
    e->w = NULL;
    return rc != 0 ? hs_store_lmdb(e->s, rc, "mdb_txn_commit") : 0;
}

static void
hs_events_wabort(struct hs_events *e)
{
    if (e->w != NULL)
        mdb_txn_abort(e->w);
    e->w = NULL;
}

/* One event and its notifier entries into the open transaction: 0 (kept,
 * or counted), or an LMDB error. */
static int
hs_events_one(struct hs_events *e, const struct hs_ev_in *in)
{
    uint8_t  kb[HS_EV_IKEY];
    MDB_val  k = { HS_EV_KEY, kb + 8 }, v, ik = { HS_EV_IKEY, kb }, iv;
    uint8_t *p;
    int      rc;

    if (in->time < 0 || in->len == 0 || in->len > HS_EV_REC_MAX
        || in->nnotifiers > HS_EV_NOTIFIERS_MAX || in->rec == NULL) {
        e->tot.rejected++;
        return 0;
    }
    hs_events_key(kb + 8, in->time, in->id);
    v.mv_size = 1 + (size_t)in->nnotifiers * 8 + in->len;
    v.mv_data = NULL;
    rc = mdb_put(e->w, e->ev, &k, &v, MDB_NOOVERWRITE | MDB_RESERVE);
    if (rc == MDB_KEYEXIST) {
        e->tot.duplicates++;
        return 0;
    }
    if (rc != 0)
        return rc;
    p = v.mv_data;
    p[0] = (uint8_t)in->nnotifiers;
    for (uint32_t i = 0; i < in->nnotifiers; i++)
        hs_events_put64(p + 1 + 8 * i, in->notifiers[i]);
    memcpy(p + 1 + (size_t)in->nnotifiers * 8, in->rec, in->len);
    e->tot.events++;
    e->tot.bytes += HS_EV_KEY + v.mv_size;
    for (uint32_t i = 0; i < in->nnotifiers; i++) {
        hs_events_put64(kb, in->notifiers[i]);
        iv.mv_size = 0;
        iv.mv_data = NULL;
        rc = mdb_put(e->w, e->ix, &ik, &iv, MDB_NOOVERWRITE);
        if (rc == MDB_KEYEXIST)
            continue;               /* a notifier named twice */
        if (rc != 0)
            return rc;
        e->tot.refs++;
        e->tot.bytes += HS_EV_IKEY;
    }
    return 0;
}

int
hs_events_append(struct hs_events *e, const struct hs_ev_in *in, size_t n)
{
    int rc;

    if (n == 0)
        return 0;
    if (hs_store_full(e->s))
        return -ENOSPC;
    if ((rc = hs_events_wbegin(e)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = hs_events_one(e, &in[i])) != 0) {
            hs_events_wabort(e);
            return hs_store_lmdb(e->s, rc, "mdb_put event");
        }
    return hs_events_wcommit(e);
}

/* Drop the event at the cursor (key k, value v) and its entries. */
static int
hs_events_drop(struct hs_events *e, MDB_cursor *c, const MDB_val *k,
               const MDB_val *v)
{
    const uint8_t *p = v->mv_data;
    uint8_t        kb[HS_EV_IKEY];
    size_t         vlen = v->mv_size;
    uint32_t       nn;
    int            rc;

    if (k->mv_size != HS_EV_KEY || vlen < 1
        || vlen < 1 + (size_t)p[0] * 8)
        return MDB_CORRUPTED;
    nn = p[0];
    memcpy(kb + 8, k->mv_data, HS_EV_KEY);
    for (uint32_t i = 0; i < nn; i++) {
        MDB_val ik = { HS_EV_IKEY, kb };

        memcpy(kb, p + 1 + 8 * i, 8);
        rc = mdb_del(e->w, e->ix, &ik, NULL);
        if (rc == MDB_NOTFOUND)
            continue;
        if (rc != 0)
            return rc;
        e->tot.refs--;
        e->tot.bytes -= HS_EV_IKEY;
    }
    if ((rc = mdb_cursor_del(c, 0)) != 0)
        return rc;
    e->tot.events--;
    e->tot.bytes -= HS_EV_KEY + vlen;
    e->tot.dropped++;
    return 0;
}

int
hs_events_prune(struct hs_events *e, int64_t now, int64_t retention,
                uint64_t max_bytes, uint64_t *n)
{
    MDB_cursor *c = NULL;
    MDB_val     k, v;
    uint64_t    d0;
    int         rc;

    *n = 0;
    if ((rc = hs_events_wbegin(e)) != 0)
        return rc;
    d0 = e->tot.dropped;
    if ((rc = mdb_cursor_open(e->w, e->ev, &c)) != 0)
        goto out;
    /* Oldest first: by age, then by size. */
    for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) {
        int64_t t;

        if (k.mv_size != HS_EV_KEY) {
            rc = MDB_CORRUPTED;
            break;
        }
        t = (int64_t)hs_events_get64(k.mv_data);
        if (!(retention > 0 && t < now - retention)
            && !(max_bytes != 0 && e->tot.bytes > max_bytes))
            break;
        if ((rc = hs_events_drop(e, c, &k, &v)) != 0)
            break;
    }
    if (rc == MDB_NOTFOUND || rc == 0)
        rc = 0;
out:
    if (c != NULL)
        mdb_cursor_close(c);
    if (rc != 0) {
        hs_events_wabort(e);
        return hs_store_lmdb(e->s, rc, "prune events");
    }
    *n = e->tot.dropped - d0;
    if (*n == 0) {
        hs_events_wabort(e);
        return 0;
    }
    return hs_events_wcommit(e);
}

int
hs_events_totals(struct hs_events *e, struct hs_ev_totals *t)
{
    MDB_txn    *txn;
    MDB_cursor *c;
    MDB_val     k, v;
    int         rc;

    memset(t, 0, sizeof(*t));
    if ((rc = hs_events_dbis(e)) != 0)
        return rc;
    if ((rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &txn)) != 0)
        return hs_store_lmdb(e->s, rc, "mdb_txn_begin");
    rc = hs_events_tot_load(e, txn, t);
    if (rc == 0 && mdb_cursor_open(txn, e->ev, &c) == 0) {
        if (mdb_cursor_get(c, &k, &v, MDB_FIRST) == 0
            && k.mv_size == HS_EV_KEY)
            t->first = (int64_t)hs_events_get64(k.mv_data);
        if (mdb_cursor_get(c, &k, &v, MDB_LAST) == 0
            && k.mv_size == HS_EV_KEY)
            t->last = (int64_t)hs_events_get64(k.mv_data);
        mdb_cursor_close(c);
    }
    mdb_txn_abort(txn);
    return rc;
}

/* ---------------------------------------------------------------- reads */

int
hs_evread_begin(struct hs_events *e, struct hs_evread *r)
{
    int rc;

    memset(r, 0, sizeof(*r));
    r->e = e;
    r->done = true;
    /* No databases yet (a reader before the writer made them): no
     * events, r not open. */
    if ((rc = hs_events_dbis(e)) != 0)
        return rc == -ENOENT ? 0 : rc;
    if (e->rtxn == NULL) {
        rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &e->rtxn);
        if (rc == MDB_MAP_RESIZED) {
            mdb_env_set_mapsize(e->env, 0);
            rc = mdb_txn_begin(e->env, NULL, MDB_RDONLY, &e->rtxn);
        }
        if (rc != 0) {
            e->rtxn = NULL;
            return hs_store_lmdb(e->s, rc, "mdb_txn_begin");
        }
        if ((rc = mdb_cursor_open(e->rtxn, e->ev, &e->rcur)) != 0
            || (rc = mdb_cursor_open(e->rtxn, e->ix, &e->ricur)) != 0) {
            if (e->rcur != NULL)
                mdb_cursor_close(e->rcur);
            e->rcur = NULL;
            mdb_txn_abort(e->rtxn);
            e->rtxn = NULL;
            return hs_store_lmdb(e->s, rc, "mdb_cursor_open");
        }
    } else {
        rc = mdb_txn_renew(e->rtxn);
        if (rc == MDB_MAP_RESIZED) {
            mdb_env_set_mapsize(e->env, 0);
            rc = mdb_txn_renew(e->rtxn);
        }
        if (rc != 0)
            return hs_store_lmdb(e->s, rc, "mdb_txn_renew");
        if ((rc = mdb_cursor_renew(e->rtxn, e->rcur)) != 0
            || (rc = mdb_cursor_renew(e->rtxn, e->ricur)) != 0) {
            mdb_txn_reset(e->rtxn);
            return hs_store_lmdb(e->s, rc, "mdb_cursor_renew");
        }
    }
    r->txn = e->rtxn;
    r->open = true;
    return 0;
}

void
hs_evread_end(struct hs_evread *r)
{
    if (r->open)
        mdb_txn_reset(r->txn);
    r->open = false;
    r->done = true;
}

/*
 * Put cursor c (keys with a pfx-byte prefix) on the first key to read
 * from start (pfx + 16 bytes): forward the first key >= start (> when
 * not inclusive), backward the last <= start (< when not inclusive).
 * 0 (r->pending), MDB_NOTFOUND, or an LMDB error.
 */
static int
hs_evread_pos(struct hs_evread *r, MDB_cursor *c, size_t pfx,
              const uint8_t *start, bool inclusive)
{
    MDB_val k = { pfx + HS_EV_KEY, (void *)start }, v;
    int     rc;

    rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return rc;
    if (!r->reverse) {
        if (rc == 0 && !inclusive && k.mv_size == pfx + HS_EV_KEY
            && memcmp(k.mv_data, start, pfx + HS_EV_KEY) == 0)
            rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    } else if (rc == MDB_NOTFOUND) {
        rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    } else if (!inclusive || k.mv_size != pfx + HS_EV_KEY
               || memcmp(k.mv_data, start, pfx + HS_EV_KEY) != 0) {
        rc = mdb_cursor_get(c, &k, &v, MDB_PREV);
    }
    if (rc == 0)
        r->pending = true;
    return rc;
}

int
hs_evread_seek(struct hs_evread *r, uint64_t notifier, int64_t lo,
               int64_t hi, bool reverse, bool after, int64_t after_time,
               uint64_t after_id)
{
    struct hs_events *e = r->e;
    uint8_t           kb[HS_EV_IKEY];
    size_t            pfx = notifier == HS_EV_ALL ? 0 : 8;
    bool              inclusive = true;
    int               rc;

    r->notifier = notifier;
    r->lo = lo < 0 ? 0 : lo;
    r->hi = hi;
    r->reverse = reverse;
    r->done = true;
    r->pending = false;
    if (!r->open || r->lo > r->hi)
        return 0;
    hs_events_put64(kb, notifier);
    if (!reverse) {
        hs_events_key(kb + pfx, r->lo, 0);
        if (after && after_time >= r->lo) {
            hs_events_key(kb + pfx, after_time, after_id);
            inclusive = false;
        }
    } else {
        hs_events_key(kb + pfx, r->hi, UINT64_MAX);
        if (after && after_time <= r->hi) {
            hs_events_key(kb + pfx, after_time, after_id);
            inclusive = false;
        }
    }
    rc = hs_evread_pos(r, pfx ? e->ricur : e->rcur, pfx, kb, inclusive);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc != 0)
        return hs_store_lmdb(e->s, rc, "seek events");
    r->done = false;
    return 0;
}

/* The event of key k, value v (an events entry; an evnotif entry's
 * event is looked up): 0, MDB_NOTFOUND when it is gone, or an error. */
static int
hs_evread_take(struct hs_evread *r, const MDB_val *k, const MDB_val *kv,
               struct hs_event *ev)
{
    MDB_val        ek, v = *kv;
    const uint8_t *p;
    int            rc;

    ek.mv_size = HS_EV_KEY;
    ek.mv_data = (uint8_t *)k->mv_data + (k->mv_size - HS_EV_KEY);
    if (r->notifier != HS_EV_ALL
        && (rc = mdb_get(r->txn, r->e->ev, &ek, &v)) != 0)
        return rc;
    p = v.mv_data;
    if (v.mv_size < 1 || v.mv_size <= 1 + (size_t)p[0] * 8)
        return MDB_CORRUPTED;
    ev->time = (int64_t)hs_events_get64(ek.mv_data);
    ev->id = hs_events_get64((const uint8_t *)ek.mv_data + 8);
    ev->rec = p + 1 + (size_t)p[0] * 8;
    ev->len = (uint32_t)(v.mv_size - 1 - (size_t)p[0] * 8);
    return 0;
}

int
hs_evread_next(struct hs_evread *r, struct hs_event *ev)
{
    struct hs_events *e = r->e;
    size_t            pfx = r->notifier == HS_EV_ALL ? 0 : 8;
    MDB_cursor       *c = pfx ? e->ricur : e->rcur;
    MDB_val           k, v;
    int               rc;

    while (!r->done) {
        int64_t t;

        if (r->pending) {
            rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
            r->pending = false;
        } else {
            rc = mdb_cursor_get(c, &k, &v, r->reverse ? MDB_PREV : MDB_NEXT);
        }
        if (rc != 0 || k.mv_size != pfx + HS_EV_KEY
            || (pfx && hs_events_get64(k.mv_data) != r->notifier))
            break;
        t = (int64_t)hs_events_get64((const uint8_t *)k.mv_data + pfx);
        if (r->reverse ? t < r->lo : t > r->hi)
            break;
        if (r->reverse ? t > r->hi : t < r->lo)
            continue;
        rc = hs_evread_take(r, &k, &v, ev);
        if (rc == MDB_NOTFOUND)
            continue;               /* cannot be: the invariant */
        if (rc != 0) {
            r->done = true;
            return hs_store_lmdb(e->s, rc, "read event");
        }
        return 0;
    }
    r->done = true;
    return -ENOENT;
}
