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
 * The progress (worker/park.h) is a second record beside the blob, the
 * same two halves named by `pcur`: u32 WK_PARK_PROGRESS_VERSION, u32 the
 * `cur` of the blob it goes with, the sub layer's part.  A rewrite of
 * the blob drops the progress (the blob holds all of it then); a
 * progress that does not fit rewrites the blob instead.
 *
 * Invariants:
 *   - rec[i].pcur != 0 only while rec[i].cur != 0; the progress it names
 *     was written after the blob rec[i].cur names and names that cur.
 *   - rec[i].cur != 0 exactly when tok[i] names the session parked at
 *     pool index i; nparked counts them.
 *   - ext[] holds one extent per record half in use (blob and
 *     progress), sorted by offset,
 *     none overlapping.
 *   - dirty[] bits name pool indices to rewrite at the end of the
 *     iteration, pdirty[] those whose progress to write; a session gone
 *     by then (closed, moved, timed out) is dropped instead.
 *
 * Single-threaded, on the worker's loop.
 */
#include "park.h"

#include <errno.h>
#include <string.h>

#include "proto/crypto.h"
#include "roam.h"
#include "shm/log.h"
#include "shm/park.h"

#define WK_PARK_SCRATCH_MAX (16u << 20)    /* one blob, at most */
#define WK_PARK_PROGRESS_VERSION 1u

struct wk_park_ext {
    uint32_t off, len;
};

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
    uint64_t                *pdirty;        /* the same, progress */
    uint32_t                 ndirty_words;
    bool                     any_dirty;
    bool                     pending;       /* a predecessor's records */
    uint32_t                 last_bytes;
    uint32_t                 last_pbytes;
    uint64_t                 used;          /* data bytes in use */
};

static int64_t wk_park_alloc(struct wk_park *p, uint32_t len);
static void wk_park_free(struct wk_park *p, uint32_t off, uint32_t len);
static void wk_park_drop(struct wk_park *p, uint32_t i);
static void wk_park_write(struct wk_park *p, struct wk_session *s);
static void wk_park_unprogress(struct wk_park *p, uint32_t i);
static bool wk_park_write_progress(struct wk_park *p, struct wk_session *s);
static void wk_park_end(void *arg);
static void wk_park_second(void *arg);
static void wk_park_closing(void *arg, struct wk_session *s,
                            bool delete_subs);
static void wk_park_count(struct wk_park *p);
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
    cap = w->conf->max_session_move_bytes;
    if (cap == 0 || cap > WK_PARK_SCRATCH_MAX)
        cap = WK_PARK_SCRATCH_MAX;
    if (cap > p->data_bytes)
        cap = (uint32_t)p->data_bytes;
    p->buf_cap = cap;
    p->ndirty_words = p->nrec / 64 + 1;
    p->buf = wk_alloc(w, cap);
    p->ext = wk_alloc(w, (size_t)p->nrec * 4 * sizeof(*p->ext));
    p->tok = wk_alloc(w, (size_t)p->nrec * sizeof(*p->tok));
    p->unfit = wk_alloc(w, p->nrec);
    p->dirty = wk_alloc(w, (size_t)p->ndirty_words * sizeof(*p->dirty));
    p->pdirty = wk_alloc(w, (size_t)p->ndirty_words * sizeof(*p->pdirty));
    if (p->buf == NULL || p->ext == NULL || p->tok == NULL
        || p->unfit == NULL || p->dirty == NULL || p->pdirty == NULL) {
        w->park = p;
        wk_park_fini(w);
        return -ENOMEM;
    }
    memset(p->tok, 0, (size_t)p->nrec * sizeof(*p->tok));
    memset(p->unfit, 0, p->nrec);
    memset(p->dirty, 0, (size_t)p->ndirty_words * sizeof(*p->dirty));
    memset(p->pdirty, 0, (size_t)p->ndirty_words * sizeof(*p->pdirty));
    for (uint32_t i = 0; i < k->nrec && !p->pending; i++)
        p->pending = atomic_load_explicit(&p->rec[i].cur,
                                          memory_order_acquire) != 0;
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
    wk_free(w, p->pdirty);
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

bool
wk_park_service(uint8_t stat)
{
    switch (stat) {
    case SHM_SVC_ACTIVATE_SESSION:
    case SHM_SVC_CREATE_SUBSCRIPTION:
    case SHM_SVC_MODIFY_SUBSCRIPTION:
    case SHM_SVC_SET_PUBLISHING_MODE:
    case SHM_SVC_DELETE_SUBSCRIPTIONS:
    case SHM_SVC_TRANSFER_SUBSCRIPTIONS:
    case SHM_SVC_CREATE_MONITORED_ITEMS:
    case SHM_SVC_MODIFY_MONITORED_ITEMS:
    case SHM_SVC_SET_MONITORING_MODE:
    case SHM_SVC_SET_TRIGGERING:
    case SHM_SVC_DELETE_MONITORED_ITEMS:
        return true;
    default:
        return false;
    }
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

void
wk_park_progress(struct wk_worker *w, const struct wk_session *s)
{
    struct wk_park *p = w->park;

    if (p == NULL || s == NULL || s->index >= p->nrec)
        return;
    p->pdirty[s->index / 64] |= UINT64_C(1) << (s->index % 64);
    if (!p->any_dirty) {
        p->any_dirty = true;
        wk_loop_iteration(p->loop);
    }
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
    if (i == p->next && p->data_bytes - at < len)
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

static void
wk_park_count(struct wk_park *p)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < p->nrec; i++)
        n += atomic_load_explicit(&p->rec[i].cur, memory_order_relaxed) != 0;
    atomic_store_explicit(&p->k->s[p->w->slot].nparked, n,
                          memory_order_release);
    if (p->w->row != NULL)
        atomic_store_explicit(&p->w->row->session_park_bytes, p->used,
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
    if (cur == 0)
        wk_park_count(p);
    else if (w->row != NULL)
        atomic_store_explicit(&w->row->session_park_bytes, p->used,
                              memory_order_relaxed);
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
 * s's progress beside its parked blob: packed into free bytes (its size
 * asked first), published by one release store of pcur; then the old
 * half's bytes are freed.  false: it did not fit (the caller rewrites
 * the blob).
 */
static bool
wk_park_write_progress(struct wk_park *p, struct wk_session *s)
{
    struct shm_park_rec *r = &p->rec[s->index];
    struct wk_roam_buf   b = { .w = p->w, .p = p->buf, .cap = p->buf_cap,
                               .max = p->buf_cap, .parking = true };
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_relaxed);
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_relaxed);
    uint32_t             h = pc != 0 ? (pc & 1) ^ 1 : 0, ver;
    int64_t              off = -1;
    uint64_t             need;

    if (cur == 0 || p->subs.progress == NULL
        || p->subs.progress_bytes == NULL)
        return false;
    /* Packed straight into its free bytes (one copy of the kept
     * messages): its size first. */
    need = 8 + p->subs.progress_bytes(p->subs.arg, s);
    if (need > p->buf_cap || (off = wk_park_alloc(p, (uint32_t)need)) < 0)
        return false;
    b.p = p->data + off;
    b.cap = b.max = (uint32_t)need;
    wk_roam_put_u32(&b, WK_PARK_PROGRESS_VERSION);
    wk_roam_put_u32(&b, cur);
    p->subs.progress(p->subs.arg, s, &b);
    if (b.bad || b.len != need) {
        wk_park_free(p, (uint32_t)off, (uint32_t)need);
        return false;
    }
    r->poff[h] = (uint32_t)off;
    r->plen[h] = b.len;
    ver = (pc >> 1) + 1;
    if (ver > (UINT32_MAX >> 1))
        ver = 1;
    atomic_store_explicit(&r->pcur, (ver << 1) | h, memory_order_release);
    if (pc != 0)
        wk_park_free(p, r->poff[pc & 1], r->plen[pc & 1]);
    p->last_pbytes = b.len;
    WK_PARK_COUNT(p->w, session_park_writes, 1);
    if (p->w->row != NULL)
        atomic_store_explicit(&p->w->row->session_park_bytes, p->used,
                              memory_order_relaxed);
    return true;
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
        uint64_t m = p->dirty[k] | p->pdirty[k], whole = p->dirty[k];

        p->dirty[k] = 0;
        p->pdirty[k] = 0;
        for (; m != 0; m &= m - 1) {
            uint32_t           bit = (uint32_t)__builtin_ctzll(m);
            uint32_t           i = k * 64 + bit;
            struct wk_session *s;

            if (i >= p->nrec)
                break;
            s = &w->sessions[i];
            if (!s->used || !s->activated || wk_roam_moving(w, s))
                wk_park_drop(p, i);
            else if ((whole & (UINT64_C(1) << bit))
                     || !wk_park_write_progress(p, s))
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

/* Record i of the dead predecessor into a session here, or NULL. */
static struct wk_session *
wk_park_adopt(struct wk_park *p, uint32_t i, struct wk_park_log *lg)
{
    struct wk_worker    *w = p->w;
    struct shm_park_rec *r = &p->rec[i];
    uint32_t             cur = atomic_load_explicit(&r->cur,
                                                    memory_order_acquire);
    uint32_t             h = cur & 1, len = r->len[h], off = r->off[h];
    uint32_t             pc = atomic_load_explicit(&r->pcur,
                                                   memory_order_acquire);
    uint32_t             plen = r->plen[pc & 1], poff = r->poff[pc & 1];
    struct wk_roam_buf   b = { .w = w, .p = p->buf, .cap = p->buf_cap,
                               .max = p->buf_cap, .park = lg };
    struct wk_roam_buf   pb = { .w = w, .p = p->data + poff, .cap = plen,
                                .max = plen, .len = plen };
    struct wk_roam_handlers subs = { .unpack = p->subs.unpack,
                                     .arg = p->subs.arg };
    struct wk_session      *sess;

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
    if (pc != 0 && (uint64_t)poff + plen <= p->data_bytes
        && wk_roam_get_u32(&pb) == WK_PARK_PROGRESS_VERSION
        && wk_roam_get_u32(&pb) == cur && !pb.bad)
        b.prog = &pb;
    /* A predecessor of an older build (a rolling upgrade) wrote version 1:
     * read as worker/roam.c reads a moved one. */
    b.version = wk_roam_get_u32(&b);
    if ((b.version != WK_ROAM_VERSION && b.version != 1)
        || wk_roam_get_u8(&b) != 1)
        return NULL;
    sess = wk_roam_session_adopt(w, &b, &subs);
    if (sess != NULL || b.prog == NULL)
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
