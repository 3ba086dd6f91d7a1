/*
 * worker/park.c: sessions that outlive their worker (worker/park.h,
 * docs/architecture.md §11 "A worker's death"): this slot's park written
 * as sessions change, and taken over by the next worker of the slot.
 *
 * A record (struct shm_park_rec, one per session pool index) holds the
 * session's blob (worker/roam.c's format: u32 version, u8 type 1, the
 * session, the sub layer's part) in the slot's data bytes.  A rewrite
 * packs into `buf`, takes free bytes (first fit over `ext`, the extents
 * in use sorted by offset, kept here: the park is ours alone while we
 * live), copies, fills the half `cur` does not name, stores `cur`
 * (release), and only then frees the old half's bytes.
 *
 * The data bytes: the first `area` for blobs and progress records (first
 * fit), the rest (a quarter of them) the kept ring: a copy of each
 * NotificationMessage a parked session keeps for Republish, taken when it
 * is sent (wk_park_keep), let go when the retransmission queue lets it go
 * (wk_park_dropped).  A byte ring like the retransmission store's
 * (worker/retx.c): records of struct wk_park_khdr + body, in the order
 * sent, the head moving over let-go ones; no room, no copy (the record
 * is then rewritten whole at the end of the iteration).
 *
 * The progress (worker/park.h) is a second record beside the blob, the
 * same two halves named by `pcur`: a header (u32 WK_PARK_PROGRESS_VERSION,
 * u32 the `cur` of the blob it goes with, u32 cap, u32 jlen) and cap
 * bytes of entries, of which the first jlen are written.  A snapshot
 * (the sub layer's) opens it; each message sent (SEND) or let go (DROP)
 * appends an entry, its bytes first, then jlen (one release store): a
 * worker killed in between leaves jlen naming the entries before, whole.
 * A journal that is full is replaced: a new record, a snapshot of the
 * session's progress now, published by pcur.  A rewrite of the blob
 * drops the progress (the blob holds all of it then).  The entries:
 *
 *   SUB   u32 3, sub id, seq, sent, nkept, per kept message: u32 seq,
 *         i64 publishTime, u32 type, u32 len, u32 handle (its offset in
 *         the data bytes; WK_PARK_NO_KEPT: the blob's message of that
 *         seq), u32 nitems, per item: u32 id, i64 sent watermark (0
 *         unknown): the subscription's whole progress (what the blob and
 *         earlier entries said of it no longer counts)
 *   SEND  u32 1, sub id, seq, type, i64 publishTime, u32 len, handle,
 *         u32 nruns, per run of the items whose queue the message
 *         emptied: u32 first id, u32 count (ids first .. first + count
 *         - 1), i64 their watermark (struct wk_park_run)
 *   DROP  u32 2, sub id, seq: a kept message let go
 *
 * An item's sent watermark: its newest ServerTimestamp taken, when the
 * message emptied its queue: every value before it is in a message kept
 * or was filtered out.
 *
 * Torn writes: a SEND or DROP is committed by its jlen store; a snapshot
 * by pcur.  Between a message's emit and its SEND (a send in progress,
 * `sending`) no snapshot of that session is taken: a DROP that does not
 * fit then drops the progress (the blob alone is older, never ahead),
 * and the SEND writes the snapshot.  A kept copy is freed only after the
 * entry that lets it go is committed (or no progress names it).
 *
 * Invariants:
 *   - rec[i].pcur != 0 only while rec[i].cur != 0; the progress it names
 *     was written after the blob rec[i].cur names and names that cur.
 *   - rec[i].cur != 0 exactly when tok[i] names the session parked at
 *     pool index i; p->nparked counts them (a predecessor's records,
 *     before wk_park_inherit, are not counted: they are not ours), and
 *     the slot's nparked shows that count.
 *   - ext[] holds one extent per record half in use (blob and
 *     progress), sorted by offset, none overlapping, all below `area`.
 *   - dirty[] bits name pool indices to rewrite at the end of the
 *     iteration; a session gone by then (closed, moved, timed out) is
 *     dropped instead.
 *
 * Single-threaded, on the worker's loop.
 */
#include "park.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/crypto.h"
#include "roam.h"
#include "shm/log.h"
#include "shm/park.h"

#define WK_PARK_SCRATCH_MAX (16u << 20)    /* one blob, at most */
#define WK_PARK_PROGRESS_VERSION 2u   /* 1: the kept messages copied
                                        * into each progress, no journal */
#define WK_PARK_PHDR        16u        /* the progress record's header */
#define WK_PARK_JOURNAL_MIN 1024u      /* journal bytes past a snapshot:
                                        * this more than the snapshot's */
#define WK_PARK_NONE        UINT32_MAX

struct wk_park_ext {
    uint32_t off, len;
};

/* Before each copy in the kept ring. */
struct wk_park_khdr {
    uint32_t size;                  /* header + body, padded to 8 */
    uint32_t live;                  /* 0: let go */
};

/* The successor's view of one progress (worker/park.h). */
struct wk_park_gsub {
    uint32_t id, seq;
    uint8_t  sent, reset;           /* reset: a SUB entry said it all */
};

enum { WK_PARK_G_PARK = 1, WK_PARK_G_BLOB, WK_PARK_G_BLOBDROP };

struct wk_park_gkept {
    uint32_t sub_id, seq, type, len, off;
    int64_t  time;
    uint8_t  kind;                  /* WK_PARK_G_*, 0: let go */
};

struct wk_park_gwm {
    uint32_t sub_id, item_id, ord;
    int64_t  wm;
};

struct wk_park_prog {
    const uint8_t        *data;
    uint64_t              data_bytes;
    struct wk_park_gsub  *subs;
    struct wk_park_gkept *kept;
    struct wk_park_gwm   *wm;
    uint32_t              nsubs, nkept, nwm;
    uint32_t              cap_subs, cap_kept, cap_wm;
    bool                  counting;     /* a first pass: counts only */
    struct wk_park_gsub   dummy;
};

#define WK_PARK_WM_MAX (1u << 26)      /* watermarks in one progress */

struct wk_park {
    struct wk_worker        *w;
    struct wk_loop          *loop;
    struct shm_park         *k;
    struct shm_park_rec     *rec;
    uint8_t                 *data;
    uint32_t                 nrec;
    uint64_t                 data_bytes;
    struct wk_park_handlers  subs;
    uint8_t                 *buf;           /* one packed blob */
    uint32_t                 buf_cap;
    struct wk_park_ext      *ext;           /* [4 * nrec], sorted */
    uint32_t                 next;
    struct ua_guid          *tok;           /* [nrec] */
    uint8_t                 *unfit;         /* [nrec]: counted as not
                                             * parked already */
    uint64_t                *dirty;         /* [nrec / 64 + 1] bits */
    uint32_t                 ndirty_words;
    uint64_t                 area;          /* blobs and progress */
    uint32_t                 ring_off;      /* the kept ring: data bytes */
    uint32_t                 ring_cap;
    uint64_t                 ring_head;     /* free-running */
    uint64_t                 ring_tail;
    uint32_t                 sending;       /* the session index between
                                             * wk_park_keep and _sent */
    bool                     any_dirty;
    bool                     pending;       /* a predecessor's records */
    uint32_t                 last_bytes;
    uint32_t                 last_pbytes;
    uint64_t                 used;          /* data bytes in use */
    uint32_t                 nparked;       /* records i < nrec with cur
                                             * != 0 written by us */
};

static int64_t wk_park_alloc(struct wk_park *p, uint32_t len);
static void wk_park_free(struct wk_park *p, uint32_t off, uint32_t len);
static void wk_park_drop(struct wk_park *p, uint32_t i);
static void wk_park_write(struct wk_park *p, struct wk_session *s);
static void wk_park_unprogress(struct wk_park *p, uint32_t i);
static bool wk_park_snapshot(struct wk_park *p, struct wk_session *s);
static uint8_t *wk_park_jroom(struct wk_park *p, uint32_t i, uint32_t n);
static void wk_park_jcommit(struct wk_park *p, uint32_t i, uint32_t n);
static void wk_park_ring_gc(struct wk_park *p);
static uint32_t wk_park_ring_alloc(struct wk_park *p, uint32_t len);
static void wk_park_ring_free(struct wk_park *p, uint32_t handle);
static bool wk_park_prog_decode(struct wk_park *p, struct wk_park_prog *g,
                                const uint8_t *e, uint32_t len);
static int wk_park_gwm_cmp(const void *a, const void *b);
static struct wk_park_gsub *wk_park_gsub_of(struct wk_park_prog *g,
                                            uint32_t id, bool add);
static bool wk_park_gkept_add(struct wk_park_prog *g, uint32_t sub_id,
                              uint32_t seq, uint32_t type, uint32_t len,
                              uint32_t off, int64_t t, uint8_t kind);
static bool wk_park_gwm_add(struct wk_park_prog *g, uint32_t sub_id,
                            uint32_t id, int64_t wm);
static bool wk_park_prog_load(struct wk_park *p, uint32_t i,
                              struct wk_park_prog *g);
static void wk_park_prog_free(struct wk_park *p, struct wk_park_prog *g);
static void wk_park_end(void *arg);
static void wk_park_second(void *arg);
static void wk_park_closing(void *arg, struct wk_session *s,
                            bool delete_subs);
static void wk_park_count(struct wk_park *p);
static void wk_park_gauge(struct wk_park *p);
static struct wk_session *wk_park_adopt(struct wk_park *p, uint32_t i,
                                        struct wk_park_log *lg);

/* Count n in the worker row's field f (none in unit tests). */
#define WK_PARK_COUNT(w, f, n)                                             \
    do {                                                                   \
        if ((w)->row != NULL)                                              \
            atomic_fetch_add_explicit(&(w)->row->f, (n),                   \
                                      memory_order_relaxed);               \
    } while (0)

/* ------------------------------------------------------------------ */
/* set-up                                                              */
/* ------------------------------------------------------------------ */

int
wk_park_init(struct wk_worker *w, struct wk_loop *l)
{
    struct shm_park *k = shm_park_of(&w->seg);
    struct wk_park  *p;
    uint32_t         cap;

    if (k == NULL || w->slot >= k->nslots || k->data_bytes == 0)
        return 0;
    if (k->nrec < w->conf->max_sessions)
        return -EPROTO;
    p = wk_alloc(w, sizeof(*p));
    if (p == NULL)
        return -ENOMEM;
    memset(p, 0, sizeof(*p));
    p->w = w;
    p->loop = l;
    p->k = k;
    p->rec = shm_park_recs(k, w->slot);
    p->data = shm_park_data(k, w->slot);
    p->nrec = w->conf->max_sessions;
    p->data_bytes = k->data_bytes;
    /* A quarter of the bytes (at most 2 GiB) for the kept ring, the
     * rest for blobs and progress records. */
    p->ring_cap = (uint32_t)((p->data_bytes / 4 > (UINT64_C(1) << 31)
                                  ? (UINT64_C(1) << 31) : p->data_bytes / 4)
                             & ~(uint64_t)7);
    p->area = (p->data_bytes - p->ring_cap) & ~(uint64_t)7;
    p->ring_off = (uint32_t)p->area;
    p->sending = WK_PARK_NONE;
    cap = w->conf->max_session_move_bytes;
    if (cap == 0 || cap > WK_PARK_SCRATCH_MAX)
        cap = WK_PARK_SCRATCH_MAX;
    if (cap > p->area)
        cap = (uint32_t)p->area;
    p->buf_cap = cap;
    p->ndirty_words = p->nrec / 64 + 1;
    p->buf = wk_alloc(w, cap);
    p->ext = wk_alloc(w, (size_t)p->nrec * 4 * sizeof(*p->ext));
    p->tok = wk_alloc(w, (size_t)p->nrec * sizeof(*p->tok));
    p->unfit = wk_alloc(w, p->nrec);
    p->dirty = wk_alloc(w, (size_t)p->ndirty_words * sizeof(*p->dirty));
    if (p->buf == NULL || p->ext == NULL || p->tok == NULL
        || p->unfit == NULL || p->dirty == NULL) {
        w->park = p;
        wk_park_fini(w);
        return -ENOMEM;
    }
    memset(p->tok, 0, (size_t)p->nrec * sizeof(*p->tok));
    memset(p->unfit, 0, p->nrec);
    memset(p->dirty, 0, (size_t)p->ndirty_words * sizeof(*p->dirty));
    for (uint32_t i = 0; i < k->nrec && !p->pending; i++)
        p->pending = atomic_load_explicit(&p->rec[i].cur,
                                          memory_order_acquire) != 0;
    /* The kept ring's pages now, not one by one as sends first reach
     * them (its bytes kept: a predecessor's are still to be read). */
    shm_park_prefault(p->data + p->ring_off, p->ring_cap);
    w->park = p;
    if (wk_loop_on_end(l, wk_park_end, p) != 0
        || wk_loop_on_second(l, wk_park_second, p) != 0
        || wk_session_on_closing(w, wk_park_closing, p) != 0) {
        wk_park_fini(w);
        return -ENOSPC;
    }
    return 0;
}

void
wk_park_fini(struct wk_worker *w)
{
    struct wk_park *p = w->park;

    if (p == NULL)
        return;
    wk_free(w, p->buf);
    wk_free(w, p->ext);
    wk_free(w, p->tok);
    wk_free(w, p->unfit);
    wk_free(w, p->dirty);
    wk_free(w, p);
    w->park = NULL;
}

bool
wk_park_pending(const struct wk_worker *w)
{
    return w->park != NULL && w->park->pending;
}

int
wk_park_on_subs(struct wk_worker *w, const struct wk_park_handlers *h)
{
    if (w->park == NULL)
        return -EINVAL;
    w->park->subs = *h;
    return 0;
}

void
wk_park_lost(struct wk_worker *w, uint64_t n)
{
    if (n > 0)
        WK_PARK_COUNT(w, session_park_values_lost, n);
}

uint32_t
wk_park_last_bytes(const struct wk_worker *w)
{
    return w->park != NULL ? w->park->last_bytes : 0;
}

uint32_t
wk_park_last_progress_bytes(const struct wk_worker *w)
{
    return w->park != NULL ? w->park->last_pbytes : 0;
}

/* ------------------------------------------------------------------ */
/* marking                                                             */
/* ------------------------------------------------------------------ */

void
wk_park_touch_index(struct wk_worker *w, uint32_t index)
{
    struct wk_park *p = w->park;

    if (p == NULL || index >= p->nrec)
        return;
    p->dirty[index / 64] |= UINT64_C(1) << (index % 64);
    if (!p->any_dirty) {
        p->any_dirty = true;
        wk_loop_iteration(p->loop);     /* the end comes this iteration */
    }
}

void
wk_park_touch(struct wk_worker *w, const struct wk_session *s)
{
    if (s != NULL)
        wk_park_touch_index(w, s->index);
}

/* ------------------------------------------------------------------ */
/* the data bytes                                                      */
/* ------------------------------------------------------------------ */

/* First fit: an offset of len free bytes, or -1. */
static int64_t
wk_park_alloc(struct wk_park *p, uint32_t len)
{
    uint64_t at = 0;
    uint32_t i;

    len = (len + 7) & ~7u;
    for (i = 0; i < p->next; i++) {
        if (p->ext[i].off - at >= len)
            break;
        at = (uint64_t)p->ext[i].off + p->ext[i].len;
    }
    if (i == p->next && p->area - at < len)
        return -1;
    if (p->next == p->nrec * 4)
        return -1;
    memmove(&p->ext[i + 1], &p->ext[i], (p->next - i) * sizeof(*p->ext));
    p->ext[i].off = (uint32_t)at;
    p->ext[i].len = len;
    p->next++;
    p->used += len;
    return (int64_t)at;
}

static void
wk_park_free(struct wk_park *p, uint32_t off, uint32_t len)
{
    for (uint32_t i = 0; i < p->next; i++)
        if (p->ext[i].off == off) {
            (void)len;
            p->used -= p->ext[i].len;
            memmove(&p->ext[i], &p->ext[i + 1],
                    (p->next - i - 1) * sizeof(*p->ext));
            p->next--;
            return;
        }
}

/* The sessions parked (p->nparked, kept as records come and go: not a
 * walk of every record per session) shown to the broker. */
static void
wk_park_count(struct wk_park *p)
{
    atomic_store_explicit(&p->k->s[p->w->slot].nparked, p->nparked,
                          memory_order_release);
    wk_park_gauge(p);
}

/* /stats session_park_bytes: records and the kept ring's bytes. */
static void
wk_park_gauge(struct wk_park *p)
{
    if (p->w->row != NULL)
        atomic_store_explicit(&p->w->row->session_park_bytes,
                              p->used + (p->ring_tail - p->ring_head),
                              memory_order_relaxed);
}

/* Record i no longer holds a session. */
static void
wk_park_drop(struct wk_park *p, uint32_t i)
{
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_relaxed);

    if (cur == 0)
        return;
    wk_park_unprogress(p, i);
    atomic_store_explicit(&r->cur, 0, memory_order_release);
    wk_park_free(p, r->off[cur & 1], r->len[cur & 1]);
    memset(&p->tok[i], 0, sizeof(p->tok[i]));
    if (p->nparked > 0)             /* (0: a predecessor's record, before
                                     * wk_park_inherit starts over) */
        p->nparked--;
    wk_park_count(p);
}

/* ------------------------------------------------------------------ */
/* writing                                                             */
/* ------------------------------------------------------------------ */

static void
wk_park_write(struct wk_park *p, struct wk_session *s)
{
    struct wk_worker    *w = p->w;
    struct shm_park_rec *r = &p->rec[s->index];
    struct wk_roam_buf   b = { .w = w, .p = p->buf, .cap = p->buf_cap,
                               .max = p->buf_cap, .parking = true };
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_relaxed);
    uint32_t             h = cur != 0 ? (cur & 1) ^ 1 : 0, ver;
    uint64_t             head = shm_park_head(p->k);
    int64_t              off = -1;

    /* (The log's head when packed: kept in the record, for the log.) */
    wk_roam_put_u32(&b, WK_ROAM_VERSION);
    wk_roam_put_u8(&b, 1);          /* a session (worker/roam.c) */
    wk_roam_session_pack(s, &b);
    if (p->subs.pack != NULL)
        p->subs.pack(p->subs.arg, s, &b);
    if (!b.bad)
        off = wk_park_alloc(p, b.len);
    if (off < 0) {
        /* Too large, or the park is full: not parked (counted once). */
        wk_park_drop(p, s->index);
        if (!p->unfit[s->index]) {
            p->unfit[s->index] = 1;
            WK_PARK_COUNT(w, sessions_not_parked, 1);
            shm_log(SHM_LOG_WARNING, "session %08x not parked (%s): it "
                    "would not survive this worker",
                    (unsigned)s->token.data1,
                    b.bad ? "too large" : "park full");
        }
        return;
    }
    p->unfit[s->index] = 0;
    memcpy(p->data + off, p->buf, b.len);
    r->off[h] = (uint32_t)off;
    r->len[h] = b.len;
    r->head[h] = head;
    ver = (cur >> 1) + 1;
    if (ver > (UINT32_MAX >> 1))
        ver = 1;
    atomic_store_explicit(&r->cur, (ver << 1) | h, memory_order_release);
    if (cur != 0)
        wk_park_free(p, r->off[cur & 1], r->len[cur & 1]);
    wk_park_unprogress(p, s->index);    /* the blob holds it all now */
    p->tok[s->index] = s->token;
    p->last_bytes = b.len;
    WK_PARK_COUNT(w, session_park_writes, 1);
    if (cur == 0) {
        p->nparked++;
        wk_park_count(p);
    } else {
        wk_park_gauge(p);
    }
}

/* Record i's progress no longer counts (the blob is newer, or gone). */
static void
wk_park_unprogress(struct wk_park *p, uint32_t i)
{
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_relaxed);

    if (pc == 0)
        return;
    atomic_store_explicit(&r->pcur, 0, memory_order_release);
    wk_park_free(p, r->poff[pc & 1], r->plen[pc & 1]);
}

/*
 * s's progress beside its parked blob, opened anew: a record of its
 * own (its size asked first: a snapshot, and room for a journal at least
 * as long), the snapshot written straight into it, published by one
 * release store of pcur; then the old half's bytes are freed.  false:
 * it did not fit (the caller drops the progress and rewrites the blob).
 */
static bool
wk_park_snapshot(struct wk_park *p, struct wk_session *s)
{
    struct shm_park_rec *r = &p->rec[s->index];
    struct wk_roam_buf   b = { .w = p->w, .parking = true };
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_relaxed);
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_relaxed);
    uint32_t             h = pc != 0 ? (pc & 1) ^ 1 : 0, ver, hdr[3];
    int64_t              off = -1;
    uint64_t             need, cap;
    uint8_t             *at;

    if (cur == 0 || p->subs.snapshot == NULL
        || p->subs.snapshot_bytes == NULL)
        return false;
    need = p->subs.snapshot_bytes(p->subs.arg, s);
    cap = 2 * need + WK_PARK_JOURNAL_MIN;
    if (WK_PARK_PHDR + cap > p->area / 4
        || (off = wk_park_alloc(p, (uint32_t)(WK_PARK_PHDR + cap))) < 0)
        return false;
    at = p->data + off;
    hdr[0] = WK_PARK_PROGRESS_VERSION;
    hdr[1] = cur;
    hdr[2] = (uint32_t)cap;
    memcpy(at, hdr, sizeof(hdr));
    b.p = at + WK_PARK_PHDR;
    b.cap = b.max = (uint32_t)need;
    p->subs.snapshot(p->subs.arg, s, &b);
    if (b.bad || b.len != need) {
        wk_park_free(p, (uint32_t)off, 0);
        return false;
    }
    atomic_store_explicit((_Atomic uint32_t *)(void *)(at + 12),
                          (uint32_t)need, memory_order_relaxed);
    r->poff[h] = (uint32_t)off;
    r->plen[h] = (uint32_t)(WK_PARK_PHDR + cap);
    ver = (pc >> 1) + 1;
    if (ver > (UINT32_MAX >> 1))
        ver = 1;
    atomic_store_explicit(&r->pcur, (ver << 1) | h, memory_order_release);
    if (pc != 0)
        wk_park_free(p, r->poff[pc & 1], r->plen[pc & 1]);
    p->last_pbytes = (uint32_t)need;
    WK_PARK_COUNT(p->w, session_park_writes, 1);
    wk_park_gauge(p);
    return true;
}

/* Room for an entry of n bytes at the end of record i's journal: where
 * to write it, or NULL (no progress, or full). */
static uint8_t *
wk_park_jroom(struct wk_park *p, uint32_t i, uint32_t n)
{
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_relaxed);
    uint8_t             *at;
    uint32_t             cap, jlen;

    if (pc == 0)
        return NULL;
    at = p->data + r->poff[pc & 1];
    memcpy(&cap, at + 8, 4);
    jlen = atomic_load_explicit((_Atomic uint32_t *)(void *)(at + 12),
                                memory_order_relaxed);
    if (cap - jlen < n)
        return NULL;
    return at + WK_PARK_PHDR + jlen;
}

/* The n bytes written at wk_park_jroom count: one release store. */
static void
wk_park_jcommit(struct wk_park *p, uint32_t i, uint32_t n)
{
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_relaxed);
    _Atomic uint32_t    *jl = (_Atomic uint32_t *)(void *)
                              (p->data + r->poff[pc & 1] + 12);

    atomic_store_explicit(jl, atomic_load_explicit(jl, memory_order_relaxed)
                                  + n, memory_order_release);
}

/* ------------------------------------------------------------------ */
/* the kept ring                                                       */
/* ------------------------------------------------------------------ */

static void
wk_park_ring_gc(struct wk_park *p)
{
    while (p->ring_head != p->ring_tail) {
        const struct wk_park_khdr *k = (const struct wk_park_khdr *)(void *)
            (p->data + p->ring_off + p->ring_head % p->ring_cap);

        if (k->live)
            break;
        p->ring_head += k->size;
    }
}

/* A copy of len bytes: its handle (the body's offset in the data bytes),
 * or WK_PARK_NO_KEPT when the ring has no room. */
static uint32_t
wk_park_ring_alloc(struct wk_park *p, uint32_t len)
{
    uint64_t need = ((uint64_t)len + sizeof(struct wk_park_khdr) + 7)
                    & ~(uint64_t)7;

    if (need > p->ring_cap)
        return WK_PARK_NO_KEPT;
    for (;;) {
        uint32_t             at = (uint32_t)(p->ring_tail % p->ring_cap);
        uint32_t             to_end = p->ring_cap - at;
        uint64_t             room = p->ring_cap
                                    - (p->ring_tail - p->ring_head);
        struct wk_park_khdr *k = (struct wk_park_khdr *)(void *)
                                 (p->data + p->ring_off + at);

        if (room < need && room < to_end)
            return WK_PARK_NO_KEPT;
        if (to_end < need) {
            /* The end of the ring is too short: skip it. */
            k->size = to_end;
            k->live = 0;
            p->ring_tail += to_end;
            wk_park_ring_gc(p);
            continue;
        }
        if (room < need)
            return WK_PARK_NO_KEPT;
        k->size = (uint32_t)need;
        k->live = 1;
        p->ring_tail += need;
        return p->ring_off + at + (uint32_t)sizeof(*k);
    }
}

static void
wk_park_ring_free(struct wk_park *p, uint32_t handle)
{
    if (handle == WK_PARK_NO_KEPT || handle < p->ring_off + sizeof(
            struct wk_park_khdr) || handle >= p->ring_off + p->ring_cap)
        return;
    ((struct wk_park_khdr *)(void *)(p->data + handle
                                     - sizeof(struct wk_park_khdr)))->live
        = 0;
    wk_park_ring_gc(p);
}

uint32_t
wk_park_keep(struct wk_worker *w, const struct wk_session *s,
             const uint8_t *body, uint32_t len)
{
    struct wk_park *p = w->park;
    uint32_t        h;

    if (p == NULL || s == NULL || s->index >= p->nrec
        || atomic_load_explicit(&p->rec[s->index].cur,
                                memory_order_relaxed) == 0)
        return WK_PARK_NO_KEPT;
    p->sending = s->index;
    h = wk_park_ring_alloc(p, len);
    if (h != WK_PARK_NO_KEPT && len > 0)
        memcpy(p->data + h, body, len);
    return h;
}

const uint8_t *
wk_park_kept_body(const struct wk_worker *w, uint32_t kept)
{
    return w->park->data + kept;
}

void
wk_park_sent(struct wk_worker *w, const struct wk_session *s,
             const struct wk_park_msg *m)
{
    struct wk_park    *p = w->park;
    struct wk_roam_buf b = { .w = w };
    uint64_t           n;

    if (p == NULL || s == NULL || s->index >= p->nrec)
        return;
    p->sending = WK_PARK_NONE;
    if (atomic_load_explicit(&p->rec[s->index].cur,
                             memory_order_relaxed) == 0)
        return;                     /* not parked (yet: its blob has it) */
    if (m->kept == WK_PARK_NO_KEPT) {
        /* Not in the ring: the whole record at the end of the
         * iteration. */
        wk_park_touch_index(w, s->index);
        return;
    }
    n = 36 + sizeof(struct wk_park_run) * (uint64_t)m->nruns;
    if (n <= UINT32_MAX
        && (b.p = wk_park_jroom(p, s->index, (uint32_t)n)) != NULL) {
        b.cap = b.max = (uint32_t)n;
        wk_roam_put_u32(&b, WK_PARK_E_SEND);
        wk_roam_put_u32(&b, m->sub_id);
        wk_roam_put_u32(&b, m->seq);
        wk_roam_put_u32(&b, m->type);
        wk_roam_put_u64(&b, (uint64_t)m->time);
        wk_roam_put_u32(&b, m->len);
        wk_roam_put_u32(&b, m->kept);
        wk_roam_put_u32(&b, m->nruns);
        /* The runs as they are (u32, u32, i64: little-endian host, as
         * wk_roam_put). */
        wk_roam_put(&b, m->runs,
                    (uint32_t)(sizeof(struct wk_park_run) * m->nruns));
        wk_park_jcommit(p, s->index, (uint32_t)n);
        return;
    }
    /* The journal is full (or there is none): a snapshot of everything,
     * this message included. */
    if (!wk_park_snapshot(p, (struct wk_session *)s)) {
        wk_park_unprogress(p, s->index);
        wk_park_touch_index(w, s->index);
    }
}

void
wk_park_dropped(struct wk_worker *w, uint32_t sess, uint32_t sub_id,
                uint32_t seq, uint32_t kept)
{
    struct wk_park    *p = w->park;
    struct wk_roam_buf b = { .w = w };

    if (p == NULL)
        return;
    if (sess < p->nrec
        && atomic_load_explicit(&p->rec[sess].cur,
                                memory_order_relaxed) != 0) {
        struct wk_session *s = &w->sessions[sess];

        if ((b.p = wk_park_jroom(p, sess, 12)) != NULL) {
            b.cap = b.max = 12;
            wk_roam_put_u32(&b, WK_PARK_E_DROP);
            wk_roam_put_u32(&b, sub_id);
            wk_roam_put_u32(&b, seq);
            wk_park_jcommit(p, sess, 12);
        } else if (sess == p->sending) {
            /* In the middle of a send: no snapshot now (its items are
             * emptied, its message not yet journalled); the blob alone
             * until the send writes one. */
            wk_park_unprogress(p, sess);
        } else if (!s->used || !s->activated
                   || !wk_park_snapshot(p, s)) {
            wk_park_unprogress(p, sess);
            wk_park_touch_index(w, sess);
        }
    }
    wk_park_ring_free(p, kept);
}

/* The end of an iteration: every session marked, written once. */
static void
wk_park_end(void *arg)
{
    struct wk_park   *p = arg;
    struct wk_worker *w = p->w;

    if (!p->any_dirty)
        return;
    p->any_dirty = false;
    for (uint32_t k = 0; k < p->ndirty_words; k++) {
        uint64_t m = p->dirty[k];

        p->dirty[k] = 0;
        for (; m != 0; m &= m - 1) {
            uint32_t           bit = (uint32_t)__builtin_ctzll(m);
            uint32_t           i = k * 64 + bit;
            struct wk_session *s;

            if (i >= p->nrec)
                break;
            s = &w->sessions[i];
            if (!s->used || !s->activated || wk_roam_moving(w, s))
                wk_park_drop(p, i);
            else
                wk_park_write(p, s);
        }
    }
}

/* Once a second: records of sessions gone (timed out) go too. */
static void
wk_park_second(void *arg)
{
    struct wk_park   *p = arg;
    struct wk_worker *w = p->w;

    for (uint32_t i = 0; i < p->nrec; i++) {
        const struct wk_session *s = &w->sessions[i];

        if (atomic_load_explicit(&p->rec[i].cur, memory_order_relaxed) == 0)
            continue;
        if (!s->used || !s->activated
            || !ua_crypto_memeq(&s->token, &p->tok[i], sizeof(s->token)))
            wk_park_drop(p, i);
    }
}

static void
wk_park_closing(void *arg, struct wk_session *s, bool delete_subs)
{
    struct wk_park *p = arg;

    (void)delete_subs;
    if (s->index < p->nrec)
        wk_park_drop(p, s->index);
}

/* ------------------------------------------------------------------ */
/* the successor                                                       */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* a progress, read back                                               */
/* ------------------------------------------------------------------ */

static struct wk_park_gsub *
wk_park_gsub_of(struct wk_park_prog *g, uint32_t id, bool add)
{
    if (g->counting) {
        g->nsubs++;
        memset(&g->dummy, 0, sizeof(g->dummy));
        return &g->dummy;
    }
    for (uint32_t i = 0; i < g->nsubs; i++)
        if (g->subs[i].id == id)
            return &g->subs[i];
    if (!add || g->nsubs == g->cap_subs)
        return NULL;
    memset(&g->subs[g->nsubs], 0, sizeof(g->subs[0]));
    g->subs[g->nsubs].id = id;
    return &g->subs[g->nsubs++];
}

static bool
wk_park_gkept_add(struct wk_park_prog *g, uint32_t sub_id, uint32_t seq,
                  uint32_t type, uint32_t len, uint32_t off, int64_t t,
                  uint8_t kind)
{
    struct wk_park_gkept *k;

    if (g->counting) {
        g->nkept++;
        return true;
    }
    if (g->nkept == g->cap_kept)
        return false;
    if (kind == WK_PARK_G_PARK
        && ((uint64_t)off + len > g->data_bytes || off == WK_PARK_NO_KEPT))
        return true;                /* a bad handle: not kept */
    k = &g->kept[g->nkept++];
    k->sub_id = sub_id;
    k->seq = seq;
    k->type = type;
    k->len = len;
    k->off = off;
    k->time = t;
    k->kind = kind;
    return true;
}

static bool
wk_park_gwm_add(struct wk_park_prog *g, uint32_t sub_id, uint32_t id,
                int64_t wm)
{
    if (g->nwm >= (g->counting ? WK_PARK_WM_MAX : g->cap_wm))
        return false;
    if (g->counting) {
        g->nwm++;
        return true;
    }
    g->wm[g->nwm].sub_id = sub_id;
    g->wm[g->nwm].item_id = id;
    g->wm[g->nwm].ord = g->nwm;
    g->wm[g->nwm].wm = wm;
    g->nwm++;
    return true;
}

static int
wk_park_gwm_cmp(const void *a, const void *b)
{
    const struct wk_park_gwm *x = a, *y = b;

    if (x->sub_id != y->sub_id)
        return x->sub_id < y->sub_id ? -1 : 1;
    if (x->item_id != y->item_id)
        return x->item_id < y->item_id ? -1 : 1;
    return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* The entries e[len] (the format above) into g (g->counting: only
 * counted, for the arrays' sizes).  false: malformed. */
static bool
wk_park_prog_decode(struct wk_park *p, struct wk_park_prog *g,
                    const uint8_t *e, uint32_t len)
{
    struct wk_roam_buf b = { .w = p->w, .p = (uint8_t *)(uintptr_t)e,
                             .cap = len, .max = len, .len = len };

    while (b.pos < b.len && !b.bad) {
        uint32_t             tag = wk_roam_get_u32(&b);
        uint32_t             sub_id = wk_roam_get_u32(&b);
        uint32_t             seq = wk_roam_get_u32(&b), n, k;
        struct wk_park_gsub *gs = wk_park_gsub_of(g, sub_id, true);

        if (gs == NULL || b.bad)
            return false;
        switch (tag) {
        case WK_PARK_E_SUB:
            gs->seq = seq;
            gs->sent = wk_roam_get_u32(&b) != 0;
            gs->reset = 2;
            for (k = 0; k < g->nkept && !g->counting; k++)
                if (g->kept[k].sub_id == sub_id)
                    g->kept[k].kind = 0;
            n = wk_roam_get_u32(&b);
            for (k = 0; k < n && !b.bad; k++) {
                uint32_t q = wk_roam_get_u32(&b);
                int64_t  t = (int64_t)wk_roam_get_u64(&b);
                uint32_t type = wk_roam_get_u32(&b);
                uint32_t l = wk_roam_get_u32(&b);
                uint32_t h = wk_roam_get_u32(&b);

                if (!wk_park_gkept_add(g, sub_id, q, type, l, h, t,
                                       h == WK_PARK_NO_KEPT
                                           ? WK_PARK_G_BLOB
                                           : WK_PARK_G_PARK))
                    return false;
            }
            n = wk_roam_get_u32(&b);
            for (k = 0; k < n && !b.bad; k++) {
                uint32_t id = wk_roam_get_u32(&b);

                if (!wk_park_gwm_add(g, sub_id, id,
                                     (int64_t)wk_roam_get_u64(&b)))
                    return false;
            }
            break;
        case WK_PARK_E_SEND: {
            uint32_t type = wk_roam_get_u32(&b);
            int64_t  t = (int64_t)wk_roam_get_u64(&b);
            uint32_t l = wk_roam_get_u32(&b);
            uint32_t h = wk_roam_get_u32(&b);

            gs->seq = seq;
            gs->sent = 1;
            if (gs->reset == 0)
                gs->reset = 1;
            if (!wk_park_gkept_add(g, sub_id, seq, type, l, h, t,
                                   WK_PARK_G_PARK))
                return false;
            n = wk_roam_get_u32(&b);
            for (k = 0; k < n && !b.bad; k++) {
                uint32_t first = wk_roam_get_u32(&b);
                uint32_t count = wk_roam_get_u32(&b);
                int64_t  wm = (int64_t)wk_roam_get_u64(&b);

                if (count > WK_PARK_WM_MAX)
                    return false;
                for (uint32_t j = 0; j < count && !b.bad; j++)
                    if (!wk_park_gwm_add(g, sub_id, first + j, wm))
                        return false;
            }
            break;
        }
        case WK_PARK_E_DROP:
            if (g->counting) {
                (void)wk_park_gkept_add(g, sub_id, seq, 0, 0, 0, 0,
                                        WK_PARK_G_BLOBDROP);
                break;
            }
            for (k = 0; k < g->nkept; k++)
                if (g->kept[k].sub_id == sub_id && g->kept[k].seq == seq
                    && (g->kept[k].kind == WK_PARK_G_PARK
                        || g->kept[k].kind == WK_PARK_G_BLOB))
                    break;
            if (k < g->nkept)
                g->kept[k].kind = 0;
            else if (gs->reset != 2
                     && !wk_park_gkept_add(g, sub_id, seq, 0, 0, 0, 0,
                                           WK_PARK_G_BLOBDROP))
                return false;
            break;
        default:
            return false;
        }
    }
    if (b.bad)
        return false;
    if (!g->counting)
        qsort(g->wm, g->nwm, sizeof(*g->wm), wk_park_gwm_cmp);
    return true;
}

bool
wk_park_prog_sub(const struct wk_park_prog *g, uint32_t sub_id,
                 uint32_t *seq, uint8_t *sent)
{
    for (uint32_t i = 0; i < g->nsubs; i++)
        if (g->subs[i].id == sub_id && g->subs[i].reset != 0) {
            *seq = g->subs[i].seq;
            *sent = g->subs[i].sent;
            return true;
        }
    return false;
}

bool
wk_park_prog_keeps(const struct wk_park_prog *g, uint32_t sub_id,
                   uint32_t seq)
{
    bool reset = false;

    for (uint32_t i = 0; i < g->nsubs; i++)
        if (g->subs[i].id == sub_id)
            reset = g->subs[i].reset == 2;
    for (uint32_t k = 0; k < g->nkept; k++) {
        const struct wk_park_gkept *e = &g->kept[k];

        if (e->sub_id != sub_id || e->seq != seq)
            continue;
        if (reset && e->kind == WK_PARK_G_BLOB)
            return true;
        if (!reset && e->kind == WK_PARK_G_BLOBDROP)
            return false;
    }
    return !reset;
}

bool
wk_park_prog_kept(const struct wk_park_prog *g, uint32_t sub_id,
                  uint32_t *k, struct wk_park_kept *out)
{
    for (uint32_t i = *k; i < g->nkept; i++) {
        const struct wk_park_gkept *e = &g->kept[i];

        if (e->sub_id != sub_id || e->kind != WK_PARK_G_PARK)
            continue;
        out->seq = e->seq;
        out->type = e->type;
        out->len = e->len;
        out->time = e->time;
        out->body = g->data + e->off;
        *k = i + 1;
        return true;
    }
    *k = g->nkept;
    return false;
}

int64_t
wk_park_prog_wm(const struct wk_park_prog *g, uint32_t sub_id,
                uint32_t item_id)
{
    uint32_t lo = 0, hi = g->nwm;

    /* The last entry of (sub_id, item_id): the first one past it, less
     * one. */
    while (lo < hi) {
        uint32_t                  mid = lo + (hi - lo) / 2;
        const struct wk_park_gwm *e = &g->wm[mid];

        if (e->sub_id < sub_id
            || (e->sub_id == sub_id && e->item_id <= item_id))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || g->wm[lo - 1].sub_id != sub_id
        || g->wm[lo - 1].item_id != item_id)
        return 0;
    return g->wm[lo - 1].wm;
}

/* ------------------------------------------------------------------ */
/* the successor                                                       */
/* ------------------------------------------------------------------ */

/* Record i's progress into g when it goes with the blob `cur` names
 * (arrays allocated here: wk_park_prog_free).  false: none, or not
 * usable (the blob alone). */
static bool
wk_park_prog_load(struct wk_park *p, uint32_t i, struct wk_park_prog *g)
{
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_acquire);
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_acquire);
    uint32_t             plen = r->plen[pc & 1], poff = r->poff[pc & 1];
    uint32_t             hdr[3], jlen;
    const uint8_t       *at;

    memset(g, 0, sizeof(*g));
    if (pc == 0 || plen < WK_PARK_PHDR
        || (uint64_t)poff + plen > p->data_bytes || (poff & 3) != 0)
        return false;
    at = p->data + poff;
    memcpy(hdr, at, sizeof(hdr));
    jlen = atomic_load_explicit((_Atomic uint32_t *)(void *)
                                (uintptr_t)(at + 12), memory_order_acquire);
    if (hdr[0] != WK_PARK_PROGRESS_VERSION || hdr[1] != cur
        || jlen > hdr[2] || (uint64_t)WK_PARK_PHDR + hdr[2] > plen)
        return false;
    g->data = p->data;
    g->data_bytes = p->data_bytes;
    /* Counted first, then read into arrays of those sizes. */
    g->counting = true;
    if (wk_park_prog_decode(p, g, at + WK_PARK_PHDR, jlen)) {
        g->cap_subs = g->nsubs + 1;
        g->cap_kept = g->nkept + 1;
        g->cap_wm = g->nwm + 1;
        g->nsubs = g->nkept = g->nwm = 0;
        g->counting = false;
        g->subs = wk_alloc(p->w, (size_t)g->cap_subs * sizeof(*g->subs));
        g->kept = wk_alloc(p->w, (size_t)g->cap_kept * sizeof(*g->kept));
        g->wm = wk_alloc(p->w, (size_t)g->cap_wm * sizeof(*g->wm));
    }
    if (g->counting || g->subs == NULL || g->kept == NULL || g->wm == NULL
        || !wk_park_prog_decode(p, g, at + WK_PARK_PHDR, jlen)) {
        shm_log(SHM_LOG_WARNING, "parked session %u: its progress is "
                "malformed, taken without it", i);
        return false;
    }
    return true;
}

static void
wk_park_prog_free(struct wk_park *p, struct wk_park_prog *g)
{
    wk_free(p->w, g->subs);
    wk_free(p->w, g->kept);
    wk_free(p->w, g->wm);
    memset(g, 0, sizeof(*g));
}

/* Record i of the dead predecessor into a session here, or NULL. */
static struct wk_session *
wk_park_adopt(struct wk_park *p, uint32_t i, struct wk_park_log *lg)
{
    struct wk_worker    *w = p->w;
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_acquire);
    uint32_t             h = cur & 1, len = r->len[h], off = r->off[h];
    struct wk_roam_buf   b = { .w = w, .p = p->buf, .cap = p->buf_cap,
                               .max = p->buf_cap, .park = lg };
    struct wk_roam_handlers subs = { .unpack = p->subs.unpack,
                                     .arg = p->subs.arg };
    struct wk_park_prog     g;
    struct wk_session      *sess;
    bool                    with;

    if (cur == 0)
        return NULL;
    if (len > p->buf_cap || (uint64_t)off + len > p->data_bytes) {
        shm_log(SHM_LOG_WARNING, "parked session %u: a bad record", i);
        return NULL;
    }
    memcpy(p->buf, p->data + off, len);
    b.len = len;
    /* Its progress, read in place (the writer is dead), when it goes
     * with this blob. */
    with = wk_park_prog_load(p, i, &g);
    if (with)
        b.prog = &g;
    /* A predecessor of an older build (a rolling upgrade) wrote version 1:
     * read as worker/roam.c reads a moved one. */
    b.version = wk_roam_get_u32(&b);
    if ((b.version != WK_ROAM_VERSION && b.version != 1)
        || wk_roam_get_u8(&b) != 1) {
        wk_park_prog_free(p, &g);
        return NULL;
    }
    sess = wk_roam_session_adopt(w, &b, &subs);
    wk_park_prog_free(p, &g);
    if (sess != NULL || !with)
        return sess;
    /* A progress that does not match its blob: the blob alone. */
    shm_log(SHM_LOG_WARNING, "parked session %u: its progress does not "
            "match its record, taken without it", i);
    memset(&b, 0, sizeof(b));
    b.w = w;
    b.p = p->buf;
    b.cap = b.max = p->buf_cap;
    b.park = lg;
    memcpy(p->buf, p->data + off, len);
    b.len = len;
    b.version = wk_roam_get_u32(&b);
    (void)wk_roam_get_u8(&b);
    return wk_roam_session_adopt(w, &b, &subs);
}

uint32_t
wk_park_inherit(struct wk_worker *w)
{
    struct wk_park     *p = w->park;
    struct wk_park_log  lg;
    struct shm_clog_ent e;
    uint64_t            head, cut, lost = 0;
    uint32_t            n = 0, failed = 0;

    if (p == NULL || !p->pending)
        return 0;
    p->pending = false;
    wk_clock_update(w);             /* the replay maps times onto it */
    /* What the log holds: from its oldest entry (with slack: the broker
     * writes on meanwhile) to its head now.  Changes logged after our
     * cut are in our ring too: the replay takes each once (the items'
     * watermarks, wk_mi_replay). */
    memset(&lg, 0, sizeof(lg));
    lg.k = p->k;
    head = shm_park_head(p->k);
    lg.to = head;
    cut = atomic_load_explicit(&p->k->s[w->slot].cut, memory_order_acquire);
    lg.oldest_ts = INT64_MIN;
    if (head > p->k->clog_n - p->k->clog_n / 8) {
        lg.from = head - (p->k->clog_n - p->k->clog_n / 8);
        lg.oldest_ts = INT64_MAX;
        if (lg.from < lg.to && shm_park_read(p->k, lg.from, &e) == 0)
            lg.oldest_ts = e.srv_ts;
    }
    if (lg.from > lg.to)
        lg.from = lg.to;
    for (uint32_t i = 0; i < p->nrec; i++) {
        struct wk_session *s = wk_park_adopt(p, i, &lg);

        if (s != NULL) {
            n++;
            wk_park_touch(w, s);
            shm_log(SHM_LOG_INFO, "session %08x taken over from a dead "
                    "worker", (unsigned)s->token.data1);
        } else if (atomic_load_explicit(&p->rec[i].cur,
                                        memory_order_relaxed) != 0) {
            failed++;
        }
    }
    if (p->subs.replay != NULL)
        lost = p->subs.replay(p->subs.arg, &lg);
    if (p->subs.settle != NULL)
        p->subs.settle(p->subs.arg);
    /* Ours now: the park starts over and holds them again at once. */
    for (uint32_t i = 0; i < p->k->nrec; i++) {
        atomic_store_explicit(&p->rec[i].pcur, 0, memory_order_relaxed);
        atomic_store_explicit(&p->rec[i].cur, 0, memory_order_relaxed);
    }
    p->next = 0;
    p->used = 0;
    p->nparked = 0;
    p->ring_head = p->ring_tail = 0;
    wk_park_count(p);
    wk_park_end(p);
    WK_PARK_COUNT(w, sessions_inherited, n);
    wk_park_lost(w, lost);
    shm_log(n > 0 || failed > 0 ? SHM_LOG_NOTICE : SHM_LOG_INFO,
            "took over %u session(s) of a dead worker (%u not: no room or "
            "malformed), %llu value change(s) lost, log %llu..%llu (cut "
            "%llu)", n, failed, (unsigned long long)lost,
            (unsigned long long)lg.from, (unsigned long long)lg.to,
            (unsigned long long)cut);
    return n;
}
