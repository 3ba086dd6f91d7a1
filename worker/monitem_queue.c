/*
 * worker/monitem_queue.c: the queues of monitored items (Part 4
 * §5.12.1.5), the values they hold, the ready lists of subscriptions and
 * the DataChangeNotification a Publish carries.
 *
 *   record from the broker (one per change, per worker)
 *        |  the first item that queues it copies it into cells: a value
 *        v  (struct wk_val, refcounted); every other item on the slot
 *   value  <---- entry (8 bytes) <---- entry <---- ...  of each item's queue
 *        |
 *        v  Publish: each entry's value is copied into the message, shaped
 *           for that item (timestampsToReturn, Overflow bit), then let go
 *
 * So a change watched by K items of this worker costs one copy of its
 * bytes and K small entries, not K copies; and an idle queue of 1 holds
 * nothing but its entry.
 *
 * Queue semantics: a full queue of 1 keeps the newest value (no Overflow
 * bit); a longer one drops its oldest (discardOldest: the new oldest gets
 * the bit) or replaces its newest (the new value gets the bit).  Sampling:
 * a value inside the sampling interval of the newest queued one replaces
 * it (the latest of an interval wins).  An exhausted pool loses a value
 * the way a full queue does, Overflow bit included.
 *
 * The fan-out path (wk_mi_fanout, once per record and worker) walks the
 * slot's items (a batch at a time, their cache lines loading side by
 * side) and does, inline, everything the common item needs: the
 * stale check, the default filter (StatusValue, no deadband), remembering
 * the value, and an append or a replacement in its queue.  An item that
 * is not common (another mode, a deadband or another trigger, triggered
 * items, an IndexRange, an overflow to report) or a queue operation that
 * is not (a full longer queue, exhausted pools) takes the general path:
 * wk_mi_take_any (monitem.c), wk_mi_enqueue.  Both give the same result;
 * the inline one only leaves out calls and the tests no common item
 * needs.
 *
 * Counts: sub->nqueued is the number of entries in reportable items
 * (REPORTING, or SAMPLING and triggered), which are exactly the items on
 * the subscription's ready list with entries.
 *
 * No allocation: cells, entries and their free stacks come from
 * wk_sub_init().
 */
#include <string.h>

#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "sub_int.h"

static uint32_t wk_mi_idx(const struct wk_subs *st, const struct wk_mi *mi);
static uint32_t wk_val_make(struct wk_subs *st, const struct wk_rec *r);
static void wk_val_unref(struct wk_subs *st, uint32_t v);
static uint32_t wk_ent_take(struct wk_subs *st, uint32_t val);
static void wk_mi_ready_add(struct wk_subs *st, struct wk_sub *sub,
                            struct wk_mi *mi);
static uint32_t wk_mi_qpop(struct wk_subs *st, struct wk_mi *mi);
static void wk_mi_mark(struct wk_subs *st, uint32_t e);
static void wk_mi_run_put(struct wk_subs *st, uint32_t first, uint32_t count,
                          int64_t wm);
static bool wk_mi_replace(struct wk_subs *st, uint32_t e,
                          const struct wk_rec *r, uint32_t *vref,
                          uint32_t flags);

/* ------------------------------------------------------------------ */
/* cells                                                               */
/* ------------------------------------------------------------------ */

static inline uint32_t
wk_cells_need(uint32_t total)
{
    return total <= WK_CELL_DATA ? 1 : (total + WK_CELL_DATA - 1)
                                           / WK_CELL_DATA;
}

/* One cell: the last freed first (hot), reading no cell to find it. */
static inline uint32_t
wk_cells_take(struct wk_cells *p)
{
    p->used++;
    return p->nfree > 0 ? p->stack[--p->nfree] : p->hw++;
}

/* Two byte ranges read as one (a header, then the data). */
struct wk_src {
    const uint8_t *a;
    uint32_t       al;
    const uint8_t *b;
    uint32_t       bl;
};

static inline void
wk_src_fill(struct wk_src *s, uint8_t *dst, uint32_t room)
{
    uint32_t m = s->al < room ? s->al : room;

    if (m > 0) {
        memcpy(dst, s->a, m);
        s->a += m;
        s->al -= m;
        dst += m;
        room -= m;
    }
    m = s->bl < room ? s->bl : room;
    if (m > 0) {
        memcpy(dst, s->b, m);
        s->b += m;
        s->bl -= m;
    }
}

uint32_t
wk_cells_put(struct wk_cells *p, const void *hdr, uint32_t hlen,
             const void *data, uint32_t len)
{
    struct wk_src s = { hdr, hlen, data, len };
    uint32_t      n = wk_cells_need(hlen + len), first = WK_NIL;
    uint32_t      prev = WK_NIL;

    if (p->cap - p->used < n) {
        p->refused++;
        return WK_NIL;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = wk_cells_take(p);

        p->c[i].next = WK_NIL;
        if (prev == WK_NIL)
            first = i;
        else
            p->c[prev].next = i;
        prev = i;
        if (s.al == 0 && s.bl >= WK_CELL_DATA) {
            /* A whole cell of data (a message body): a fixed-size move. */
            memcpy(p->c[i].data, s.b, WK_CELL_DATA);
            s.b += WK_CELL_DATA;
            s.bl -= WK_CELL_DATA;
        } else {
            wk_src_fill(&s, p->c[i].data, WK_CELL_DATA);
        }
    }
    return first;
}

void
wk_cells_get(const struct wk_cells *p, uint32_t i, uint32_t off, void *dst,
             uint32_t len)
{
    uint8_t *d = dst;

    while (i != WK_NIL && off >= WK_CELL_DATA) {
        off -= WK_CELL_DATA;
        i = p->c[i].next;
    }
    while (i != WK_NIL && len > 0) {
        uint32_t m = WK_CELL_DATA - off;

        if (m > len)
            m = len;
        memcpy(d, p->c[i].data + off, m);
        d += m;
        len -= m;
        off = 0;
        i = p->c[i].next;
    }
}

void
wk_cells_free(struct wk_cells *p, uint32_t i)
{
    while (i != WK_NIL) {
        p->stack[p->nfree++] = i;
        p->used--;
        i = p->c[i].next;
    }
}

/* ------------------------------------------------------------------ */
/* values and entries                                                  */
/* ------------------------------------------------------------------ */

static inline struct wk_val *
wk_val(const struct wk_subs *st, uint32_t v)
{
    return (struct wk_val *)(void *)st->cells.c[v].data;
}

/* r's bytes as a value with no holder yet; WK_NIL when no cells are left. */
static uint32_t
wk_val_make(struct wk_subs *st, const struct wk_rec *r)
{
    struct wk_val h = { 0, r->len, r->vend };

    return wk_cells_put(&st->cells, &h, sizeof(h), r->p, r->len);
}

static void
wk_val_unref(struct wk_subs *st, uint32_t v)
{
    if (--wk_val(st, v)->refs == 0)
        wk_cells_free(&st->cells, v);
}

void
wk_val_done(struct wk_subs *st, uint32_t v)
{
    if (v != WK_NIL && wk_val(st, v)->refs == 0)
        wk_cells_free(&st->cells, v);
}

/* A new entry holding value val (one more reference); WK_NIL: none. */
static uint32_t
wk_ent_take(struct wk_subs *st, uint32_t val)
{
    struct wk_ents *p = &st->ents;
    uint32_t        e;

    if (p->used == p->cap) {
        p->refused++;
        return WK_NIL;
    }
    p->used++;
    e = p->nfree > 0 ? p->stack[--p->nfree] : p->hw++;
    p->e[e].val = val;
    p->e[e].next = WK_NIL;
    wk_val(st, val & WK_QE_VAL)->refs++;
    return e;
}

static inline void
wk_ent_free(struct wk_subs *st, uint32_t e)
{
    wk_val_unref(st, st->ents.e[e].val & WK_QE_VAL);
    st->ents.stack[st->ents.nfree++] = e;
    st->ents.used--;
}

/* *vref made of r once (shared by every item queueing the same record). */
static inline uint32_t
wk_val_of(struct wk_subs *st, const struct wk_rec *r, uint32_t *vref)
{
    if (*vref == WK_NIL)
        *vref = wk_val_make(st, r);
    return *vref;
}

/* ------------------------------------------------------------------ */
/* ready lists                                                         */
/* ------------------------------------------------------------------ */

static uint32_t
wk_mi_idx(const struct wk_subs *st, const struct wk_mi *mi)
{
    return (uint32_t)(mi - st->items);
}

bool
wk_mi_reportable(const struct wk_mi *mi)
{
    return mi->mode == UA_MONITORINGMODE_REPORTING
           || (mi->mode == UA_MONITORINGMODE_SAMPLING
               && (mi->flags & WK_MI_TRIGGERED));
}

static void
wk_mi_ready_add(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi)
{
    uint32_t idx = wk_mi_idx(st, mi);

    if (mi->flags & WK_MI_READY)
        return;
    mi->flags |= WK_MI_READY;
    mi->rnext = WK_NIL;
    if (mi->flags & WK_MI_EVENT) {
        if (sub->ertail != WK_NIL)
            st->items[sub->ertail].rnext = idx;
        else
            sub->erhead = idx;
        sub->ertail = idx;
        return;
    }
    if (sub->rtail != WK_NIL)
        st->items[sub->rtail].rnext = idx;
    else
        sub->rhead = idx;
    sub->rtail = idx;
}

void
wk_mi_ready_del(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi)
{
    uint32_t idx = wk_mi_idx(st, mi), prev = WK_NIL, i;

    uint32_t *head = (mi->flags & WK_MI_EVENT) ? &sub->erhead : &sub->rhead;
    uint32_t *tail = (mi->flags & WK_MI_EVENT) ? &sub->ertail : &sub->rtail;

    if (!(mi->flags & WK_MI_READY))
        return;
    for (i = *head; i != WK_NIL && i != idx; i = st->items[i].rnext)
        prev = i;
    if (i == idx) {
        if (prev == WK_NIL)
            *head = mi->rnext;
        else
            st->items[prev].rnext = mi->rnext;
        if (*tail == idx)
            *tail = prev;
    }
    mi->rnext = WK_NIL;
    mi->flags &= (uint16_t)~WK_MI_READY;
}

void
wk_mi_counted(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
              bool was)
{
    bool now = wk_mi_reportable(mi);

    if (was == now)
        return;
    if (now) {
        if (mi->qlen == 0)
            return;
        sub->nqueued += mi->qlen;
        if (mi->flags & WK_MI_EVENT)
            sub->nevq += mi->qlen;
        wk_mi_ready_add(st, sub, mi);
        if (sub->nqueued == mi->qlen)
            wk_sub_ready(st, sub);
    } else {
        sub->nqueued -= mi->qlen;
        if (mi->flags & WK_MI_EVENT)
            sub->nevq -= mi->qlen;
        wk_mi_ready_del(st, sub, mi);
    }
}

/* ------------------------------------------------------------------ */
/* queues                                                              */
/* ------------------------------------------------------------------ */

/* Drop mi's oldest queued value (the caller keeps the counts); the new
 * first entry or WK_NIL. */
static uint32_t
wk_mi_qpop(struct wk_subs *st, struct wk_mi *mi)
{
    uint32_t e = mi->qhead;

    if (e == WK_NIL)
        return WK_NIL;
    mi->qhead = st->ents.e[e].next;
    if (mi->qhead == WK_NIL)
        mi->qtail = WK_NIL;
    mi->qlen--;
    wk_ent_free(st, e);
    return mi->qhead;
}

void
wk_mi_purge(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi)
{
    if (wk_mi_reportable(mi)) {
        sub->nqueued -= mi->qlen;
        if (mi->flags & WK_MI_EVENT)
            sub->nevq -= mi->qlen;
    }
    while (mi->qlen > 0)
        wk_mi_qpop(st, mi);
    wk_mi_ready_del(st, sub, mi);
    mi->flags &= (uint16_t)~WK_MI_TRIGGERED;
    if (mi->flags & WK_MI_EVENT)
        mi->flags &= (uint16_t)~WK_MI_OVERFLOW;
}

/* The value of entry e is reported after a loss. */
static void
wk_mi_mark(struct wk_subs *st, uint32_t e)
{
    if (e != WK_NIL)
        st->ents.e[e].val |= WK_QE_OVERFLOW;
}

/*
 * Entry e holds r from now on (flags: WK_QE_OVERFLOW or 0).  False when
 * no value could be made: e keeps what it had.
 */
static bool
wk_mi_replace(struct wk_subs *st, uint32_t e, const struct wk_rec *r,
              uint32_t *vref, uint32_t flags)
{
    uint32_t v = wk_val_of(st, r, vref), old = st->ents.e[e].val & WK_QE_VAL;

    if (v == WK_NIL) {
        /* No cells: when e alone holds its value and the new one needs
         * no more cells, the old one makes the room. */
        uint32_t have = 0;

        if (wk_val(st, old)->refs != 1)
            return false;
        for (uint32_t i = old; i != WK_NIL; i = st->cells.c[i].next)
            have++;
        if (wk_cells_need(sizeof(struct wk_val) + r->len)
            > have + (st->cells.cap - st->cells.used))
            return false;
        wk_val_unref(st, old);
        v = wk_val_of(st, r, vref);
        wk_val(st, v)->refs++;
        st->ents.e[e].val = v | flags;
        return true;
    }
    wk_val(st, v)->refs++;
    st->ents.e[e].val = v | flags;
    wk_val_unref(st, old);
    return true;
}

void
wk_mi_enqueue(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
              const struct wk_rec *r, uint32_t *vref, bool overflow)
{
    uint64_t now = WK_SUB_NOW(st);
    uint32_t flag = 0, v, e;
    bool     rep = wk_mi_reportable(mi);

    if ((overflow || (mi->flags & WK_MI_OVERFLOW)) && mi->qsize > 1)
        flag = WK_QE_OVERFLOW;      /* a queue of 1 never shows gaps */
    mi->flags &= (uint16_t)~WK_MI_OVERFLOW;

    if (mi->qlen > 0 && (mi->flags & WK_MI_ON_SLOT) && mi->interval_ms > 0
        && now < mi->next_ms) {
        /* Same sampling interval as the newest queued value: replace. */
        uint32_t t = mi->qtail;

        if (!wk_mi_replace(st, t, r, vref,
                           flag | (st->ents.e[t].val & WK_QE_OVERFLOW))) {
            st->dropped++;
            if (mi->qsize > 1)
                wk_mi_mark(st, t);
        }
        return;
    }
    if ((mi->flags & WK_MI_ON_SLOT) && mi->interval_ms > 0
        && now >= mi->next_ms)
        mi->next_ms = now + mi->interval_ms;

    if (mi->qlen >= mi->qsize) {
        if (mi->qsize <= 1) {
            /* A buffer for the newest value (§5.12.1.5). */
            if (!wk_mi_replace(st, mi->qtail, r, vref, 0))
                st->dropped++;
            return;
        }
        if (!(mi->flags & WK_MI_DISCARD_OLD)) {
            if (!wk_mi_replace(st, mi->qtail, r, vref, WK_QE_OVERFLOW)) {
                st->dropped++;
                wk_mi_mark(st, mi->qtail);
            }
            return;
        }
        /* discardOldest: the next value in the queue gets the bit. */
        wk_mi_mark(st, wk_mi_qpop(st, mi));
        if (rep)
            sub->nqueued--;
    }
    v = wk_val_of(st, r, vref);
    e = v != WK_NIL ? wk_ent_take(st, v | flag) : WK_NIL;
    if (e == WK_NIL) {
        /* Nothing left: lost like a full queue loses a value; the newest
         * replaces the last queued one and carries the bit. */
        st->dropped++;
        if (mi->qlen == 0)
            mi->flags |= WK_MI_OVERFLOW;
        else if (!wk_mi_replace(st, mi->qtail, r, vref,
                                mi->qsize > 1 ? WK_QE_OVERFLOW : 0)
                 && mi->qsize > 1)
            wk_mi_mark(st, mi->qtail);
        return;
    }
    if (mi->qtail != WK_NIL)
        st->ents.e[mi->qtail].next = e;
    else
        mi->qhead = e;
    mi->qtail = e;
    mi->qlen++;
    if (rep) {
        sub->nqueued++;
        wk_mi_ready_add(st, sub, mi);
        if (sub->nqueued == 1)
            wk_sub_ready(st, sub);
    }
}

/*
 * The fan-out path.  An item is taken inline when it is on its slot's
 * list, REPORTING, with the default filter (StatusValue, no deadband), no
 * IndexRange, no triggered items and no overflow to report; everything
 * else about it goes through the general wk_mi_take_any().  Inline, for
 * such an item, is exactly what the general path does: the stale check,
 * the StatusValue filter, remembering the value, and a queue append (room
 * in the queue) or replacement (inside the sampling interval of the
 * newest value, or a queue of 1); a full longer queue or an exhausted
 * pool go the general way.
 */
#define WK_MI_FAST_MASK (WK_MI_ON_SLOT | WK_MI_READ | WK_MI_LINKED \
                         | WK_MI_OVERFLOW)

/* mode, ttr, trigger and dbtype are four bytes in a row (struct wk_mi):
 * the three that matter compared in one load, ttr masked out. */
static_assert(offsetof(struct wk_mi, ttr) == offsetof(struct wk_mi, mode) + 1
              && offsetof(struct wk_mi, trigger)
                     == offsetof(struct wk_mi, mode) + 2
              && offsetof(struct wk_mi, dbtype)
                     == offsetof(struct wk_mi, mode) + 3,
              "wk_mi_fast: mode, ttr, trigger, dbtype in a row");
#define WK_MI_FAST_MODES                                                   \
    ((uint32_t)UA_MONITORINGMODE_REPORTING                                 \
     | (uint32_t)UA_DATACHANGETRIGGER_STATUSVALUE << 16                    \
     | (uint32_t)UA_DEADBANDTYPE_NONE << 24)

static inline bool
wk_mi_fast(const struct wk_mi *mi)
{
    uint32_t m;

    memcpy(&m, &mi->mode, 4);       /* little-endian host: mode first */
    return (mi->flags & WK_MI_FAST_MASK) == WK_MI_ON_SLOT
           && (m & 0xFFFF00FFu) == WK_MI_FAST_MODES;
}

/*
 * A slot's items are taken up to WK_MI_BATCH at a time: their indices
 * first, from the slot's chunks (7 a chunk, or a lone item in the head:
 * sub_int.h), each item's line
 * prefetched as its index is read; then, those lines arriving, the lines
 * each item touches next; then the items one after the other.  The items
 * of a slot are far apart (one per subscription) and cold after the
 * worker slept; a chain through the items would wait for each line in
 * turn, this way their loads overlap.  Nothing here changes a slot's
 * list (only the services do), so the indices stay valid.
 */
#define WK_MI_BATCH 32

void
wk_mi_fanout(struct wk_subs *st, uint32_t c, const struct wk_rec *r,
             uint32_t *vref)
{
    struct wk_mi   *items = st->items;
    struct wk_ents *ep = &st->ents;
    uint64_t        now = WK_SUB_NOW(st);
    uint64_t        k0 = r->key[0], k1 = r->key[1];
    bool            srv = (r->mask & UA_DV_SERVER_TS) != 0;
    uint32_t        batch[WK_MI_BATCH], n, k;

    while (c != WK_NIL) {
        n = 0;
        do {
            const struct wk_chunk *ch;

            if (c & WK_LIST_ONE) {
                /* One item (a whole list: c was its head). */
                batch[n++] = c & ~WK_LIST_ONE;
                c = WK_NIL;
                break;
            }
            ch = &st->chunks[c];
            c = ch->next;
            if (c != WK_NIL)
                __builtin_prefetch(&st->chunks[c]);
            for (k = 0; k < WK_CHUNK_ITEMS && ch->it[k] != WK_NIL; k++) {
                __builtin_prefetch(&items[ch->it[k]]);
                batch[n++] = ch->it[k];
            }
        } while (c != WK_NIL && n + WK_CHUNK_ITEMS <= WK_MI_BATCH);
        /* Then, their lines arriving together, what an append touches
         * next: the newest entry, the subscription, the entries the free
         * stack gives next. */
        for (k = 0; k < n; k++) {
            const struct wk_mi *m = &items[batch[k]];

            if (m->qtail != WK_NIL)
                __builtin_prefetch(&ep->e[m->qtail]);
            __builtin_prefetch(&st->subs[m->sub]);
            if (k < ep->nfree)
                __builtin_prefetch(&ep->e[ep->stack[ep->nfree - 1 - k]]);
        }
        for (k = 0; k < n; k++) {
            uint32_t       idx = batch[k];
            struct wk_mi  *mi = &items[idx];
            struct wk_sub *sub;
            uint64_t       lk[2];
            uint32_t       e, old;
            bool           repl;

            if (!srv || !wk_mi_fast(mi)) {
                wk_mi_take_any(st, mi, r, vref);
                continue;
            }
            if (r->srv_ts < mi->wm_ts) {
                st->stale++;
                continue;
            }
            mi->wm_ts = r->srv_ts;
            memcpy(lk, mi->lastv, sizeof(lk));
            if ((mi->flags & WK_MI_HAS_LAST) && r->status == mi->last_status
                && lk[0] == k0 && lk[1] == k1)
                continue;           /* StatusValue: nothing changed */
            memcpy(mi->lastv, r->key, sizeof(mi->lastv));
            mi->last_status = r->status;
            mi->flags |= WK_MI_HAS_LAST;
            sub = &st->subs[mi->sub];
            /* Which queue operation (wk_mi_enqueue's order): a
             * replacement inside the sampling interval, a queue of 1
             * keeping the newest, or an append; the rest (a full longer
             * queue, no room in the pools) is left to wk_mi_enqueue,
             * before anything changed. */
            repl = mi->interval_ms > 0 && mi->qlen > 0 && now < mi->next_ms;
            if ((!repl && mi->qlen >= mi->qsize && mi->qsize > 1)
                || (!repl && mi->qlen < mi->qsize && ep->used == ep->cap)
                || (*vref == WK_NIL
                    && wk_cells_need(sizeof(struct wk_val) + r->len)
                           > st->cells.cap - st->cells.used)) {
                wk_mi_enqueue(st, sub, mi, r, vref, false);
                continue;
            }
            if (*vref == WK_NIL)
                *vref = wk_val_make(st, r);     /* room checked above */
            wk_val(st, *vref)->refs++;
            if (!repl && mi->interval_ms > 0 && now >= mi->next_ms)
                mi->next_ms = now + mi->interval_ms;    /* a new interval */
            if (repl || mi->qlen >= mi->qsize) {
                /* The newest queued value is replaced (keeping its
                 * Overflow bit inside an interval; a queue of 1 never
                 * shows one). */
                e = mi->qtail;
                old = ep->e[e].val;
                ep->e[e].val = *vref | (repl ? old & WK_QE_OVERFLOW : 0);
                wk_val_unref(st, old & WK_QE_VAL);
                continue;
            }
            ep->used++;
            e = ep->nfree > 0 ? ep->stack[--ep->nfree] : ep->hw++;
            ep->e[e].val = *vref;
            ep->e[e].next = WK_NIL;
            if (mi->qtail != WK_NIL)
                ep->e[mi->qtail].next = e;
            else
                mi->qhead = e;
            mi->qtail = e;
            mi->qlen++;
            sub->nqueued++;
            if (!(mi->flags & WK_MI_READY)) {
                mi->flags |= WK_MI_READY;
                mi->rnext = WK_NIL;
                if (sub->rtail != WK_NIL)
                    items[sub->rtail].rnext = idx;
                else
                    sub->rhead = idx;
                sub->rtail = idx;
            }
            if (sub->nqueued == 1)
                wk_sub_ready(st, sub);
        }
    }
}

void
wk_mi_queue_trim(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi)
{
    bool rep = wk_mi_reportable(mi);

    while (mi->qlen > mi->qsize) {
        if (mi->flags & WK_MI_DISCARD_OLD) {
            wk_mi_mark(st, wk_mi_qpop(st, mi));
        } else {
            /* Drop the one before the newest; the newest gets the bit. */
            uint32_t prev = WK_NIL, pp = WK_NIL, e = mi->qhead;

            while (e != mi->qtail) {
                pp = prev;
                prev = e;
                e = st->ents.e[e].next;
            }
            if (pp == WK_NIL)
                mi->qhead = mi->qtail;
            else
                st->ents.e[pp].next = mi->qtail;
            wk_ent_free(st, prev);
            mi->qlen--;
            wk_mi_mark(st, mi->qtail);
        }
        if (rep)
            sub->nqueued--;
    }
    if (mi->qlen == 0)
        wk_mi_ready_del(st, sub, mi);
}

void
wk_mi_trigger(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *from)
{
    for (uint32_t l = from->links; l != WK_NIL; l = st->links[l].next) {
        struct wk_mi *t = wk_mi_find(st, sub, st->links[l].to);
        bool          was;

        if (t == NULL || t->mode != UA_MONITORINGMODE_SAMPLING
            || (t->flags & WK_MI_TRIGGERED) || t->qlen == 0)
            continue;
        was = wk_mi_reportable(t);
        t->flags |= WK_MI_TRIGGERED;
        wk_mi_counted(st, sub, t, was);
    }
}

/* ------------------------------------------------------------------ */
/* the DataChangeNotification of a message                              */
/* ------------------------------------------------------------------ */

/* A run of the items a message emptied (wk_mi_emit), for the park's
 * progress (worker/park.h).  Past st->sent_cap (a message's notifications
 * at most) a run is not named: its items keep their older watermarks (a
 * successor may send values again, never fewer). */
static void
wk_mi_run_put(struct wk_subs *st, uint32_t first, uint32_t count,
              int64_t wm)
{
    if (st->nsent < st->sent_cap) {
        st->sent[st->nsent].first = first;
        st->sent[st->nsent].count = count;
        st->sent[st->nsent++].wm = wm;
    }
}

/*
 * Body layout (Part 6 §5.2, DataChangeNotification): Int32 n, n x
 * (UInt32 clientHandle, DataValue), Int32 diagnosticInfos (0).
 */
uint32_t
wk_mi_emit(struct wk_subs *st, struct wk_sub *sub, uint32_t max, size_t cap,
           size_t *len)
{
    uint8_t *o = st->out;
    size_t   pos = 4;
    uint32_t n = 0, run_first = 0, run_next = 0;   /* ids [first, next) */
    int64_t  run_wm = 0;
    int32_t  v;

    if (cap > st->out_cap)
        cap = st->out_cap;
    st->nsent = 0;
    if (sub->rhead != WK_NIL && st->items[sub->rhead].rnext != WK_NIL) {
        const struct wk_mi *nx = &st->items[st->items[sub->rhead].rnext];

        __builtin_prefetch(nx);
        __builtin_prefetch((const char *)nx + 64);
    }
    while (sub->rhead != WK_NIL && n < max) {
        struct wk_mi *mi = &st->items[sub->rhead];

        /* A pipeline over the ready list (written a publishing interval
         * ago, often out of the caches): both lines of the item after the
         * next one load while this one is copied, and the next one's
         * first entry, its lines loaded by the previous step. */
        if (mi->rnext != WK_NIL) {
            const struct wk_mi *nx = &st->items[mi->rnext];

            if (nx->qhead != WK_NIL)
                __builtin_prefetch(&st->ents.e[nx->qhead]);
            if (nx->rnext != WK_NIL) {
                const struct wk_mi *nn = &st->items[nx->rnext];

                __builtin_prefetch(nn);
                __builtin_prefetch((const char *)nn + 64);
            }
        }
        while (mi->qlen > 0 && n < max) {
            uint32_t              e = mi->qhead;
            const struct wk_qent *q = &st->ents.e[e];
            uint32_t              vi = q->val & WK_QE_VAL;
            const struct wk_val  *val = wk_val(st, vi);
            bool                  ovf = (q->val & WK_QE_OVERFLOW) != 0;
            uint32_t              dl = val->len;

            if (q->next != WK_NIL)
                __builtin_prefetch(&st->ents.e[q->next]);
            if (pos + 4 + dl + 4 + 4 > cap) {
                if (n > 0)
                    goto done;
                /* Alone too big for a response: say so, drop it. */
                memcpy(o + pos, &mi->client_handle, 4);
                o[pos + 4] = UA_DV_STATUS;
                v = (int32_t)UA_BAD_RESPONSE_TOO_LARGE;
                memcpy(o + pos + 5, &v, 4);
                pos += 9;
            } else {
                memcpy(o + pos, &mi->client_handle, 4);
                if (sizeof(struct wk_val) + dl <= WK_CELL_DATA
                    && pos + 4 + WK_VAL_INLINE <= cap)
                    /* One cell: copy all it can hold (a fixed-size move,
                     * no call); the bytes past dl are overwritten next. */
                    memcpy(o + pos + 4, val + 1, WK_VAL_INLINE);
                else if (sizeof(struct wk_val) + dl <= WK_CELL_DATA)
                    memcpy(o + pos + 4, val + 1, dl);
                else
                    wk_cells_get(&st->cells, vi, sizeof(struct wk_val),
                                 o + pos + 4, dl);
                if (ovf || mi->ttr != UA_TIMESTAMPSTORETURN_BOTH)
                    dl = wk_mi_shape(o + pos + 4, dl, val->vend, mi->ttr,
                                     ovf);
                pos += 4 + dl;
            }
            /* wk_mi_qpop() inline: the entry and its value let go. */
            mi->qhead = q->next;
            mi->qlen--;
            st->ents.stack[st->ents.nfree++] = e;
            st->ents.used--;
            if (--((struct wk_val *)(void *)val)->refs == 0)
                wk_cells_free(&st->cells, vi);
            sub->nqueued--;
            n++;
        }
        if (mi->qhead == WK_NIL)
            mi->qtail = WK_NIL;
        if (mi->qlen > 0)
            break;                  /* max reached: it stays first */
        /* Its queue emptied: everything it took is in this message (or
         * was filtered out), for the park's progress (worker/park.h),
         * in runs of consecutive ids with one watermark; the run being
         * built is kept in locals, st->sent takes it when the next one
         * starts and at the end (one item here is a few instructions). */
        if (mi->id == run_next && mi->wm_ts == run_wm) {
            run_next++;             /* (an empty run at 0 with watermark
                                     * 0 is item 0's run: still right) */
        } else {
            if (run_next != run_first)
                wk_mi_run_put(st, run_first, run_next - run_first, run_wm);
            run_first = mi->id;
            run_next = run_first + 1;
            run_wm = mi->wm_ts;
        }
        sub->rhead = mi->rnext;
        if (sub->rhead == WK_NIL)
            sub->rtail = WK_NIL;
        mi->rnext = WK_NIL;
        mi->flags &= (uint16_t)~(WK_MI_READY | WK_MI_TRIGGERED);
    }
done:
    if (run_next != run_first)
        wk_mi_run_put(st, run_first, run_next - run_first, run_wm);
    v = (int32_t)n;
    memcpy(o, &v, 4);
    v = 0;                          /* diagnosticInfos: none */
    memcpy(o + pos, &v, 4);
    *len = pos + 4;
    return n;
}

/* ------------------------------------------------------------------ */
/* event items                                                         */
/* ------------------------------------------------------------------ */

/* A new entry of mi holding b[len] (flag: WK_QE_OVERFLOW or 0); at the
 * front or the end.  False when the pools are exhausted. */
static bool
wk_mi_ev_put(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
             const uint8_t *b, uint32_t len, uint32_t flag, bool front)
{
    struct wk_val h = { 0, len, 0 };
    uint32_t      v = wk_cells_put(&st->cells, &h, sizeof(h), b, len), e;

    if (v == WK_NIL)
        return false;
    e = wk_ent_take(st, v | flag);
    if (e == WK_NIL) {
        wk_cells_free(&st->cells, v);
        return false;
    }
    if (front) {
        st->ents.e[e].next = mi->qhead;
        mi->qhead = e;
        if (mi->qtail == WK_NIL)
            mi->qtail = e;
    } else {
        if (mi->qtail != WK_NIL)
            st->ents.e[mi->qtail].next = e;
        else
            mi->qhead = e;
        mi->qtail = e;
    }
    mi->qlen++;
    if (wk_mi_reportable(mi)) {
        sub->nqueued++;
        sub->nevq++;
        wk_mi_ready_add(st, sub, mi);
        if (sub->nqueued == 1)
            wk_sub_ready(st, sub);
    }
    return true;
}

bool
wk_mi_queue_put(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
                const uint8_t *b, uint32_t len, uint32_t vend, uint32_t flag)
{
    struct wk_val h = { 0, len, vend };
    uint32_t      v = wk_cells_put(&st->cells, &h, sizeof(h), b, len), e;

    if (v == WK_NIL)
        return false;
    e = wk_ent_take(st, v | (flag & WK_QE_OVERFLOW));
    if (e == WK_NIL) {
        wk_cells_free(&st->cells, v);
        return false;
    }
    if (mi->qtail != WK_NIL)
        st->ents.e[mi->qtail].next = e;
    else
        mi->qhead = e;
    mi->qtail = e;
    mi->qlen++;
    if (wk_mi_reportable(mi)) {
        sub->nqueued++;
        if (mi->flags & WK_MI_EVENT)
            sub->nevq++;
        wk_mi_ready_add(st, sub, mi);
        if (sub->nqueued == 1)
            wk_sub_ready(st, sub);
    }
    return true;
}

/* Drop mi's oldest event that is not the overflow event. */
static void
wk_mi_ev_drop_oldest(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi)
{
    uint32_t e = mi->qhead, prev = WK_NIL;

    while (e != WK_NIL && (st->ents.e[e].val & WK_QE_OVERFLOW)) {
        prev = e;
        e = st->ents.e[e].next;
    }
    if (e == WK_NIL)
        return;
    if (prev == WK_NIL)
        mi->qhead = st->ents.e[e].next;
    else
        st->ents.e[prev].next = st->ents.e[e].next;
    if (mi->qtail == e)
        mi->qtail = prev;
    mi->qlen--;
    wk_ent_free(st, e);
    if (wk_mi_reportable(mi)) {
        sub->nqueued--;
        sub->nevq--;
    }
}

void
wk_mi_event_enqueue(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
                    const uint8_t *b, uint32_t len, const uint8_t *ovf,
                    uint32_t ovf_len, bool is_ovf)
{
    uint32_t room = mi->qsize + ((mi->flags & WK_MI_OVERFLOW) ? 1u : 0u);
    bool     old = (mi->flags & WK_MI_DISCARD_OLD) != 0;

    if (is_ovf) {
        /* b is an overflow event itself (events lost upstream). */
        if (mi->flags & WK_MI_OVERFLOW)
            return;                 /* one is waiting already */
        if (wk_mi_ev_put(st, sub, mi, b, len, WK_QE_OVERFLOW, old))
            mi->flags |= WK_MI_OVERFLOW;
        else
            st->dropped++;
        return;
    }
    if (mi->qlen >= room) {
        st->dropped++;
        if (old)
            wk_mi_ev_drop_oldest(st, sub, mi);
        if (!(mi->flags & WK_MI_OVERFLOW) && ovf != NULL
            && wk_mi_ev_put(st, sub, mi, ovf, ovf_len, WK_QE_OVERFLOW, old))
            mi->flags |= WK_MI_OVERFLOW;
        if (!old)
            return;                 /* the new event is the one lost */
    }
    if (!wk_mi_ev_put(st, sub, mi, b, len, 0, false)) {
        /* No cells or entries: lost like an overflow. */
        st->dropped++;
        if (!(mi->flags & WK_MI_OVERFLOW) && ovf != NULL
            && wk_mi_ev_put(st, sub, mi, ovf, ovf_len, WK_QE_OVERFLOW, old))
            mi->flags |= WK_MI_OVERFLOW;
    }
}

void
wk_mi_event_trim(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi)
{
    uint32_t room = mi->qsize + ((mi->flags & WK_MI_OVERFLOW) ? 1u : 0u);

    while (mi->qlen > room) {
        uint32_t before = mi->qlen;

        wk_mi_ev_drop_oldest(st, sub, mi);
        if (mi->qlen == before)
            break;
    }
    if (mi->qlen == 0)
        wk_mi_ready_del(st, sub, mi);
}

/*
 * Body layout (Part 6 §5.2, EventNotificationList): Int32 n, n x
 * EventFieldList (UInt32 clientHandle, Int32 nfields, Variants); the
 * queued body is the part after the clientHandle.
 */
uint32_t
wk_mi_emit_events(struct wk_subs *st, struct wk_sub *sub, uint32_t max,
                  size_t cap, size_t *len)
{
    uint8_t *o = st->out;
    size_t   pos = 4;
    uint32_t n = 0;
    int32_t  v;

    if (cap > st->out_cap)
        cap = st->out_cap;
    while (sub->erhead != WK_NIL && n < max) {
        struct wk_mi *mi = &st->items[sub->erhead];

        while (mi->qlen > 0 && n < max) {
            uint32_t              e = mi->qhead;
            const struct wk_qent *q = &st->ents.e[e];
            uint32_t              vi = q->val & WK_QE_VAL;
            const struct wk_val  *val = wk_val(st, vi);
            uint32_t              dl = val->len;

            if (pos + 4 + dl > cap) {
                if (n > 0)
                    goto done;
                /* Alone too big for a response: its fields go as one
                 * null each?  No: the event is dropped, counted. */
                st->dropped++;
            } else {
                memcpy(o + pos, &mi->client_handle, 4);
                wk_cells_get(&st->cells, vi, sizeof(struct wk_val),
                             o + pos + 4, dl);
                pos += 4 + dl;
                n++;
            }
            if (q->val & WK_QE_OVERFLOW)
                mi->flags &= (uint16_t)~WK_MI_OVERFLOW;
            mi->qhead = q->next;
            mi->qlen--;
            wk_ent_free(st, e);
            sub->nqueued--;
            sub->nevq--;
        }
        if (mi->qhead == WK_NIL)
            mi->qtail = WK_NIL;
        if (mi->qlen > 0)
            break;
        sub->erhead = mi->rnext;
        if (sub->erhead == WK_NIL)
            sub->ertail = WK_NIL;
        mi->rnext = WK_NIL;
        mi->flags &= (uint16_t)~(WK_MI_READY | WK_MI_TRIGGERED);
    }
done:
    v = (int32_t)n;
    memcpy(o, &v, 4);
    *len = pos;
    return n;
}
