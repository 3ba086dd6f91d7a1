/*
 * worker/sub_roam.c: a session's subscriptions packed into, and rebuilt
 * from, the blob that moves the session to another worker (worker/roam.h,
 * docs/architecture.md §11).  Registered with the session layer at
 * start-up (wk_sub_roam_init).
 *
 * The sub layer's part of the blob (little-endian, after the session's):
 *   (version 2) u8 has_last, the EventId (16) of the last event the
 *   sender's event items saw when has_last; then
 *   u32 nsubs, then per subscription:
 *     u32 id, f64 interval, u32 keepalive, lifetime, max_notifs, seq,
 *     u8 priority, enabled, sent, u8 user,
 *     u32 nretx, per kept message: u32 seq, i64 publishTime, u32 type,
 *       u32 len, body
 *     u32 nitems, per item:
 *       u32 id, client_handle, node, u8 attr, mode, ttr, trigger, dbtype,
 *       u16 flags (WK_MI_DISCARD_OLD | EVENT | HAS_LAST | OVERFLOW |
 *       TRIGGERED), u16 qsize, u32 interval_ms, f64 deadband,
 *       lastv 16, u32 last_status, u64 last (the union's bytes),
 *       i64 wm_ts, u32 slot sequence, u8 behind,
 *       u32 range bytes + the range chain (its u32 length first),
 *       u32 queued, per entry: u8 overflow, u32 len, u32 vend, bytes
 *     u32 nlinks, per SetTriggering link: u32 from id, u32 to id
 * One subscription alone (TransferSubscriptions): the same has_last and
 * EventId, then that subscription as above.
 *
 * A parked session's progress (worker/park.h; the entries' format in
 * worker/park.c): this file writes its snapshot (wk_sub_roam_snapshot:
 * per subscription a SUB entry, its sequence number, sent flag, kept
 * messages by their handles in the park, and per item its sent
 * watermark: its wm_ts when its queue is empty, else 0, unknown: every
 * value it took went into a message sent (and kept) or was filtered
 * out), and applies what the successor read of it (struct wk_park_prog)
 * while it unpacks the blob (wk_sub_roam_unpack_sub, wk_sub_roam_item):
 * the sequence number, sent flag and kept messages it names replace the
 * blob's; an item with a watermark drops the blob's queue (sent since),
 * takes the watermark and forgets its last value (its deadband and
 * change filters compare the next value with nothing); one without keeps
 * the blob's queue and watermark (values sent since may come again,
 * never fewer).
 *
 * What moves keeps its ids: a subscription's id carries the slot of the
 * worker that created it, so here it is marked `moved` and found through
 * the table of moved ones (wk_sub_moved_add, wk_sub_find); its items' ids
 * are found in its own list (wk_mi_find).  Indices never travel: nodes
 * and value slots are the same in every worker (one address space),
 * everything else is rebuilt.
 *
 * No value lost in the window: the old worker drains its ring and packs,
 * per slot item, the slot's change sequence; here the item joins its slot
 * (the interest bit) and then compares (wk_mi_catch_up).
 *
 * Events have no slot to catch up from: while a claim of ours is out
 * (the roam layer's window handler) every event record that reaches us
 * is kept (st->evwin, limits.session_move_event_bytes; our event
 * interest bit is set meanwhile), the sender packs the EventId of the
 * last event its items saw, and the items that arrive get the kept ones
 * after it (wk_sub_roam_evreplay; /stats session_move_events, and
 * session_move_events_lost for those past the window's room).
 *
 * TransferSubscriptions of a subscription another worker holds moves that
 * one subscription the same way (pack_sub, unpack_sub): while it is in
 * the hand-over it is detached from its old session (an orphan, so that
 * session publishes none of it) and listed in st->moving; adopted, the
 * old session gets GoodSubscriptionTransferred and it is deleted here
 * (wk_sub_handed); not, it goes back.
 *
 * Single-threaded, on the worker's loop.  A move allocates nothing here
 * (the pools are the worker's; the blob is the session layer's).
 */
#include <errno.h>
#include <string.h>

#include "link.h"
#include "park.h"
#include "proto/status_gen.h"
#include "roam.h"
#include "shm/park.h"
#include "sub.h"
#include "sub_int.h"

#define WK_MI_MOVE_FLAGS (WK_MI_DISCARD_OLD | WK_MI_EVENT | WK_MI_HAS_LAST \
                          | WK_MI_OVERFLOW | WK_MI_TRIGGERED)

static void wk_sub_roam_pack_item(struct wk_subs *st, struct wk_mi *mi,
                                  struct wk_roam_buf *b);
static void wk_sub_roam_pack(void *arg, struct wk_session *s,
                             struct wk_roam_buf *b);
static int wk_sub_roam_item(struct wk_subs *st, struct wk_sub *sub,
                            struct wk_session *s, struct wk_roam_buf *b,
                            uint64_t *lost);
static int wk_sub_roam_unpack(void *arg, struct wk_session *s,
                              struct wk_roam_buf *b);
static void wk_sub_roam_pack_sub(struct wk_subs *st, struct wk_sub *sub,
                                 struct wk_roam_buf *b);
static struct wk_sub *wk_sub_roam_unpack_sub(struct wk_subs *st,
                                             struct wk_subsess *e,
                                             struct wk_session *s,
                                             struct wk_roam_buf *b,
                                             uint64_t *lost);
static ua_status wk_sub_roam_pack_one(void *arg, uint32_t sub_id,
                                      uint8_t user, struct wk_roam_buf *b,
                                      uint64_t *ticket);
static void wk_sub_roam_done_one(void *arg, uint64_t ticket, bool adopted);
static int wk_sub_roam_unpack_one(void *arg, struct wk_session *s,
                                  struct wk_roam_buf *b);
static uint64_t wk_sub_roam_replay(void *arg, const struct wk_park_log *lg);
static void wk_sub_roam_settle(void *arg);
static void wk_sub_roam_snapshot(void *arg, struct wk_session *s,
                                 struct wk_roam_buf *b);
static uint64_t wk_sub_roam_snapshot_bytes(void *arg, struct wk_session *s);
static uint32_t wk_sub_roam_ids(void *arg, struct wk_session *s,
                                uint32_t *ids, uint32_t max);
static void wk_sub_roam_put_last(struct wk_subs *st, struct wk_roam_buf *b);
static bool wk_sub_roam_get_last(struct wk_roam_buf *b, uint8_t last[16]);
static void wk_sub_roam_window(void *arg, bool on);
static void wk_sub_roam_evreplay(struct wk_subs *st, struct wk_sub *sub,
                               const uint8_t last[16]);

static void
wk_sub_roam_pack_item(struct wk_subs *st, struct wk_mi *mi,
                      struct wk_roam_buf *b)
{
    uint32_t rl = 0;
    bool     behind = true;
    uint32_t seq = 0;
    uint64_t last;

    /* A move's catch-up compares the slot's sequence; a successor
     * replays the change log instead (no shared slot read per item on
     * every park write). */
    if (!b->parking)
        seq = wk_mi_slot_seq(st, mi, &behind);

    wk_roam_put_u32(b, mi->id);
    wk_roam_put_u32(b, mi->client_handle);
    wk_roam_put_u32(b, mi->node);
    wk_roam_put_u8(b, mi->attr);
    wk_roam_put_u8(b, mi->mode);
    wk_roam_put_u8(b, mi->ttr);
    wk_roam_put_u8(b, mi->trigger);
    wk_roam_put_u8(b, mi->dbtype);
    /* A deadband's array reference is a chain of ours: forgotten (the
     * next value is compared with nothing and reported). */
    wk_roam_put_u16(b, (uint16_t)(mi->flags & WK_MI_MOVE_FLAGS
                                  & ((mi->flags & WK_MI_LAST_REF)
                                         ? ~WK_MI_HAS_LAST : 0xFFFF)));
    wk_roam_put_u16(b, mi->qsize);
    wk_roam_put_u32(b, mi->interval_ms);
    wk_roam_put_f64(b, mi->deadband);
    wk_roam_put(b, mi->lastv, sizeof(mi->lastv));
    wk_roam_put_u32(b, mi->last_status);
    memcpy(&last, &mi->last, sizeof(last));
    wk_roam_put_u64(b, last);
    wk_roam_put_u64(b, (uint64_t)mi->wm_ts);
    wk_roam_put_u32(b, seq);
    wk_roam_put_u8(b, behind);
    if (mi->range != WK_NIL) {
        wk_cells_get(&st->cells, mi->range, 0, &rl, 4);
        if (rl > st->tmp_cap) {
            b->bad = true;
            return;
        }
        wk_roam_put_u32(b, rl);
        wk_cells_get(&st->cells, mi->range, 4, st->tmp, rl);
        wk_roam_put(b, st->tmp, rl);
    } else {
        wk_roam_put_u32(b, UINT32_MAX);
    }
    wk_roam_put_u32(b, mi->qlen);
    for (uint32_t e = mi->qhead; e != WK_NIL; e = st->ents.e[e].next) {
        uint32_t      v = st->ents.e[e].val & WK_QE_VAL;
        struct wk_val h;

        wk_cells_get(&st->cells, v, 0, &h, sizeof(h));
        if (h.len > st->tmp_cap) {
            b->bad = true;
            return;
        }
        wk_roam_put_u8(b, (st->ents.e[e].val & WK_QE_OVERFLOW) != 0);
        wk_roam_put_u32(b, h.len);
        wk_roam_put_u32(b, h.vend);
        wk_cells_get(&st->cells, v, sizeof(h), st->tmp, h.len);
        wk_roam_put(b, st->tmp, h.len);
    }
}

/* One subscription into b (its part of the format above). */
static void
wk_sub_roam_pack_sub(struct wk_subs *st, struct wk_sub *sub,
                     struct wk_roam_buf *b)
{
    uint32_t n = 0;

    wk_roam_put_u32(b, sub->id);
    wk_roam_put_f64(b, sub->interval);
    wk_roam_put_u32(b, sub->keepalive);
    wk_roam_put_u32(b, sub->lifetime);
    wk_roam_put_u32(b, sub->max_notifs);
    wk_roam_put_u32(b, sub->seq);
    wk_roam_put_u8(b, sub->priority);
    wk_roam_put_u8(b, sub->enabled);
    wk_roam_put_u8(b, sub->sent);
    wk_roam_put_u8(b, sub->user);
    wk_roam_put_u32(b, sub->retx_n);
    for (uint32_t k = 0; k < sub->retx_n; k++) {
        const struct wk_retx *r =
            &sub->retx[(sub->retx_head + k) % st->lim.max_retx];

        wk_roam_put_u32(b, r->seq);
        wk_roam_put_u64(b, (uint64_t)r->time);
        wk_roam_put_u32(b, r->type);
        wk_roam_put_u32(b, r->len);
        wk_roam_put(b, wk_retx_body(st, r), r->len);
    }
    wk_roam_put_u32(b, sub->nitems);
    for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext)
        wk_sub_roam_pack_item(st, &st->items[m], b);
    /* SetTriggering links: (from id, to id) pairs. */
    for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext)
        for (uint32_t l = st->items[m].links; l != WK_NIL;
             l = st->links[l].next)
            n++;
    wk_roam_put_u32(b, n);
    for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext)
        for (uint32_t l = st->items[m].links; l != WK_NIL;
             l = st->links[l].next) {
            wk_roam_put_u32(b, st->items[m].id);
            wk_roam_put_u32(b, st->links[l].to);
        }
}

static void
wk_sub_roam_pack(void *arg, struct wk_session *s, struct wk_roam_buf *b)
{
    struct wk_worker  *w = arg;
    struct wk_subs    *st = wk_subs_get(w);
    struct wk_subsess *e;
    uint32_t           n = 0;

    if (st == NULL) {
        wk_roam_put_u8(b, 0);
        wk_roam_put_u32(b, 0);
        return;
    }
    /* What the broker handed us already is in the queues first (a
     * move; the park's successor replays the change log). */
    if (w->link != NULL && !b->parking)
        wk_link_drain(w->link);
    wk_sub_roam_put_last(st, b);
    e = wk_sub_ss(st, s);
    for (uint32_t i = e->shead; i != WK_NIL; i = st->subs[i].snext)
        n++;
    wk_roam_put_u32(b, n);
    for (uint32_t i = e->shead; i != WK_NIL; i = st->subs[i].snext)
        wk_sub_roam_pack_sub(st, &st->subs[i], b);
}

/* One item of sub from b; 0, or -1 (b->bad, or no room). */
static int
wk_sub_roam_item(struct wk_subs *st, struct wk_sub *sub,
                 struct wk_session *s, struct wk_roam_buf *b, uint64_t *lost)
{
    struct wk_mi  *mi;
    uint32_t       id, rl, nq, seq;
    uint64_t       last;
    uint8_t        behind;
    const uint8_t *p;
    bool           skipq = false;

    id = wk_roam_get_u32(b);
    mi = wk_mi_new(st, sub);
    if (mi == NULL || b->bad)
        return -1;
    mi->id = id;
    mi->client_handle = wk_roam_get_u32(b);
    mi->node = wk_roam_get_u32(b);
    mi->attr = wk_roam_get_u8(b);
    mi->mode = wk_roam_get_u8(b);
    mi->ttr = wk_roam_get_u8(b);
    mi->trigger = wk_roam_get_u8(b);
    mi->dbtype = wk_roam_get_u8(b);
    mi->flags = (uint16_t)(WK_MI_USED
                           | (wk_roam_get_u16(b) & WK_MI_MOVE_FLAGS));
    mi->qsize = wk_roam_get_u16(b);
    mi->interval_ms = wk_roam_get_u32(b);
    mi->deadband = wk_roam_get_f64(b);
    wk_roam_get(b, mi->lastv, sizeof(mi->lastv));
    mi->last_status = wk_roam_get_u32(b);
    last = wk_roam_get_u64(b);
    memcpy(&mi->last, &last, sizeof(last));
    mi->wm_ts = (int64_t)wk_roam_get_u64(b);
    seq = wk_roam_get_u32(b);
    behind = wk_roam_get_u8(b);
    rl = wk_roam_get_u32(b);
    if (mi->node >= st->w->ns.nnodes || mi->qsize == 0) {
        wk_mi_drop(st, mi);
        return -1;
    }
    if (rl != UINT32_MAX) {
        p = wk_roam_get_span(b, rl);
        if (p != NULL)
            mi->range = wk_cells_put(&st->cells, &rl, 4, p, rl);
        if (p == NULL || mi->range == WK_NIL) {
            wk_mi_drop(st, mi);
            return -1;
        }
    }
    /* The progress: sent since the blob, with everything it took. */
    if (b->prog != NULL) {
        int64_t sent_wm = wk_park_prog_wm(b->prog, sub->id, mi->id);

        if (sent_wm != 0) {
            if (sent_wm > mi->wm_ts)
                mi->wm_ts = sent_wm;
            mi->flags &= (uint16_t)~WK_MI_HAS_LAST;
            skipq = true;
        }
    }
    /* Its lists, its slot (interest first), then its queue. */
    wk_mi_resume(st, mi);
    nq = wk_roam_get_u32(b);
    for (uint32_t k = 0; k < nq && !b->bad; k++) {
        uint8_t  ovf = wk_roam_get_u8(b);
        uint32_t len = wk_roam_get_u32(b), vend = wk_roam_get_u32(b);

        p = wk_roam_get_span(b, len);
        if (p == NULL || vend > len)
            return -1;
        if (!skipq && !wk_mi_queue_put(st, sub, mi, p, len, vend,
                                       ovf ? WK_QE_OVERFLOW : 0))
            return -1;
    }
    if (b->park == NULL || (mi->flags & WK_MI_READ)) {
        *lost += wk_mi_catch_up(st, mi, s, seq, behind != 0);
    } else if (mi->flags & WK_MI_ON_SLOT) {
        /* A dead worker's item: the change log replays what it missed
         * (wk_sub_roam_replay), each change in a sampling interval of its
         * own time, unless the log no longer reaches back to the item's
         * last value: then the current one, with the Overflow bit. */
        (void)behind;
        mi->next_ms = 0;
        if (b->park->oldest_ts > mi->wm_ts)
            *lost += wk_mi_gap(st, mi);
    }
    return b->bad ? -1 : 0;
}

/* One subscription from b for session entry e of s; NULL (b->bad) when
 * it does not fit or b is wrong (what was rebuilt of it is deleted). */
static struct wk_sub *
wk_sub_roam_unpack_sub(struct wk_subs *st, struct wk_subsess *e,
                       struct wk_session *s, struct wk_roam_buf *b,
                       uint64_t *lost)
{
    struct wk_sub             *sub = wk_sub_open(st, e);
    const struct wk_park_prog *pr = b->prog;
    uint32_t            nretx, nitems, nlinks;

    if (sub == NULL) {
        b->bad = true;
        return NULL;
    }
    sub->id = wk_roam_get_u32(b);
    wk_sub_moved_add(st, sub);
    wk_sub_set_interval(st, sub,
                        wk_sub_revise_interval(&st->lim,
                                               wk_roam_get_f64(b)));
    sub->keepalive = wk_roam_get_u32(b);
    sub->lifetime = wk_roam_get_u32(b);
    sub->max_notifs = wk_roam_get_u32(b);
    sub->seq = wk_roam_get_u32(b);
    sub->priority = wk_roam_get_u8(b);
    sub->enabled = wk_roam_get_u8(b);
    sub->sent = wk_roam_get_u8(b);
    sub->user = wk_roam_get_u8(b);
    wk_sub_start(st, e, sub);
    if (b->bad || wk_sub_find(st, sub->id) != sub)
        goto fail;                  /* an id we hold already */
    /* The kept messages: the blob's the progress still keeps, then
     * those it names in the park (sent since). */
    if (pr != NULL)
        (void)wk_park_prog_sub(pr, sub->id, &sub->seq, &sub->sent);
    nretx = wk_roam_get_u32(b);
    for (uint32_t k = 0; k < nretx && !b->bad; k++) {
        uint32_t       seq = wk_roam_get_u32(b);
        int64_t        t = (int64_t)wk_roam_get_u64(b);
        uint32_t       type = wk_roam_get_u32(b);
        uint32_t       len = wk_roam_get_u32(b);
        const uint8_t *body = wk_roam_get_span(b, len);

        if (body != NULL
            && (pr == NULL || wk_park_prog_keeps(pr, sub->id, seq)))
            (void)wk_retx_add(st, sub, seq, t, type, body, len,
                              WK_PARK_NO_KEPT);
    }
    if (pr != NULL) {
        struct wk_park_kept kept;
        uint32_t            k = 0;

        while (wk_park_prog_kept(pr, sub->id, &k, &kept))
            (void)wk_retx_add(st, sub, kept.seq, kept.time, kept.type,
                              kept.body, kept.len, WK_PARK_NO_KEPT);
    }
    nitems = wk_roam_get_u32(b);
    for (uint32_t k = 0; k < nitems && !b->bad; k++)
        if (wk_sub_roam_item(st, sub, s, b, lost) != 0)
            goto fail;
    nlinks = wk_roam_get_u32(b);
    if (nlinks > st->lim.links)
        b->bad = true;
    for (uint32_t k = 0; k < nlinks && !b->bad; k++) {
        uint32_t      from_id = wk_roam_get_u32(b);
        uint32_t      to_id = wk_roam_get_u32(b);
        struct wk_mi *from = wk_mi_find(st, sub, from_id);

        if (from != NULL)
            (void)wk_mi_link(st, sub, from, to_id);
    }
    if (b->bad)
        goto fail;
    wk_sub_kick(st, sub);
    return sub;
fail:
    b->bad = true;
    wk_sub_delete(st, sub);
    wk_sub_deleted_check(st, e);
    return NULL;
}

static int
wk_sub_roam_unpack(void *arg, struct wk_session *s, struct wk_roam_buf *b)
{
    struct wk_worker  *w = arg;
    struct wk_subs    *st = wk_subs_need(w);
    struct wk_subsess *e;
    uint32_t           nsubs;
    uint64_t           lost = 0;
    uint8_t            last[16];
    bool               has_last;

    if (st == NULL)
        return -1;
    e = wk_sub_ss(st, s);
    has_last = wk_sub_roam_get_last(b, last);
    nsubs = wk_roam_get_u32(b);
    for (uint32_t i = 0; i < nsubs && !b->bad; i++)
        if (wk_sub_roam_unpack_sub(st, e, s, b, &lost) == NULL)
            break;
    if (b->bad) {
        /* Everything of s rebuilt so far goes again. */
        wk_sub_session_closed(w, s, true);
        return -1;
    }
    if (b->park != NULL)
        wk_park_lost(w, lost);
    else
        wk_roam_lost(w, lost);
    if (has_last)
        for (uint32_t i = e->shead; i != WK_NIL; i = st->subs[i].snext)
            wk_sub_roam_evreplay(st, &st->subs[i], last);
    return 0;
}

/* ------------------------------------------------------------------ */
/* one subscription: TransferSubscriptions from another worker         */
/* ------------------------------------------------------------------ */

bool
wk_sub_roam_moving(const struct wk_subs *st, const struct wk_sub *sub)
{
    for (unsigned i = 0; i < WK_SUB_ROAM_MOVING; i++)
        if (st->moving[i].id != 0 && st->moving[i].id == sub->id
            && &st->subs[st->moving[i].idx] == sub)
            return true;
    return false;
}

static ua_status
wk_sub_roam_pack_one(void *arg, uint32_t sub_id, uint8_t user,
                     struct wk_roam_buf *b, uint64_t *ticket)
{
    struct wk_worker       *w = arg;
    struct wk_subs         *st = wk_subs_get(w);
    struct wk_sub          *sub;
    struct wk_sub_leaving  *m = NULL;

    *ticket = 0;
    if (st == NULL || (sub = wk_sub_find(st, sub_id)) == NULL
        || wk_sub_roam_moving(st, sub))
        return UA_BAD_SUBSCRIPTION_ID_INVALID;
    /* Part 4 §5.13.7: only to a session of the same user identity. */
    if (sub->user != user)
        return UA_BAD_USER_ACCESS_DENIED;
    for (unsigned i = 0; i < WK_SUB_ROAM_MOVING; i++)
        if (st->moving[i].id == 0) {
            m = &st->moving[i];
            break;
        }
    if (m == NULL)
        return UA_BAD_SUBSCRIPTION_ID_INVALID;
    if (w->link != NULL)
        wk_link_drain(w->link);
    wk_sub_roam_put_last(st, b);
    wk_sub_roam_pack_sub(st, sub, b);
    m->id = sub->id;
    m->idx = (uint32_t)(sub - st->subs);
    m->sess = sub->sess;
    if (sub->sess != WK_NIL)
        m->token = st->ss[sub->sess].token;
    else
        memset(&m->token, 0, sizeof(m->token));
    /* Its old session publishes none of it any more meanwhile. */
    if (sub->sess != WK_NIL)
        wk_sub_detach(st, sub);
    *ticket = (uint64_t)(m - st->moving) + 1;
    return UA_GOOD;
}

static void
wk_sub_roam_done_one(void *arg, uint64_t ticket, bool adopted)
{
    struct wk_worker      *w = arg;
    struct wk_subs        *st = wk_subs_get(w);
    struct wk_sub_leaving *m;
    struct wk_sub         *sub;

    if (st == NULL || ticket == 0 || ticket > WK_SUB_ROAM_MOVING)
        return;
    m = &st->moving[ticket - 1];
    sub = &st->subs[m->idx];
    if (m->id != 0 && sub->used && sub->id == m->id)
        wk_sub_handed(st, sub, m->sess, &m->token, adopted);
    memset(m, 0, sizeof(*m));
}

static int
wk_sub_roam_unpack_one(void *arg, struct wk_session *s, struct wk_roam_buf *b)
{
    struct wk_worker *w = arg;
    struct wk_subs   *st = wk_subs_need(w);
    uint64_t          lost = 0;
    uint8_t           last[16];
    bool              has_last;
    struct wk_sub    *sub;

    if (st == NULL)
        return -1;
    has_last = wk_sub_roam_get_last(b, last);
    sub = wk_sub_roam_unpack_sub(st, wk_sub_ss(st, s), s, b, &lost);
    if (sub == NULL)
        return -1;
    wk_roam_lost(w, lost);
    if (has_last)
        wk_sub_roam_evreplay(st, sub, last);
    return 0;
}

/* ------------------------------------------------------------------ */
/* a dead worker's sessions (worker/park.h)                            */
/* ------------------------------------------------------------------ */

/* Every logged change in lg for the items taken over: the changes lost. */
static uint64_t
wk_sub_roam_replay(void *arg, const struct wk_park_log *lg)
{
    struct wk_subs     *st = wk_subs_get(arg);
    struct shm_clog_ent e;
    uint64_t            lost = 0;

    if (st == NULL)
        return 0;
    for (uint64_t i = lg->from; i < lg->to; i++) {
        if (shm_park_read(lg->k, i, &e) != 0) {
            /* The broker wrote past us meanwhile: what is left, late,
             * with the Overflow bit. */
            for (uint32_t m = 0; m < st->items_hw; m++)
                if (st->items[m].flags & WK_MI_USED)
                    lost += wk_mi_gap(st, &st->items[m]);
            break;
        }
        if (e.slot >= st->nslots || st->slot_head[e.slot] == WK_NIL)
            continue;
        lost += wk_mi_replay(st, e.slot, e.srv_ts,
                             e.len == SHM_CLOG_BIG ? NULL : e.rec,
                             e.len == SHM_CLOG_BIG ? 0 : e.len);
    }
    return lost;
}

static void
wk_sub_roam_settle(void *arg)
{
    struct wk_subs *st = wk_subs_get(arg);

    if (st != NULL)
        wk_mi_settle(st);
}

/* The bytes wk_sub_roam_snapshot writes for s. */
static uint64_t
wk_sub_roam_snapshot_bytes(void *arg, struct wk_session *s)
{
    struct wk_subs    *st = wk_subs_get(arg);
    struct wk_subsess *e;
    uint64_t           n = 0;

    if (st == NULL)
        return n;
    e = wk_sub_ss(st, s);
    for (uint32_t i = e->shead; i != WK_NIL; i = st->subs[i].snext)
        n += 24 + 24 * (uint64_t)st->subs[i].retx_n
             + 12 * (uint64_t)st->subs[i].nitems;
    return n;
}

/* s's progress as a snapshot: a SUB entry per subscription (worker/park.c
 * has the format). */
static void
wk_sub_roam_snapshot(void *arg, struct wk_session *s, struct wk_roam_buf *b)
{
    struct wk_subs    *st = wk_subs_get(arg);
    struct wk_subsess *e;

    if (st == NULL)
        return;
    e = wk_sub_ss(st, s);
    for (uint32_t i = e->shead; i != WK_NIL; i = st->subs[i].snext) {
        const struct wk_sub *sub = &st->subs[i];

        wk_roam_put_u32(b, WK_PARK_E_SUB);
        wk_roam_put_u32(b, sub->id);
        wk_roam_put_u32(b, sub->seq);
        wk_roam_put_u32(b, sub->sent);
        wk_roam_put_u32(b, sub->retx_n);
        for (uint32_t k = 0; k < sub->retx_n; k++) {
            const struct wk_retx *r =
                &sub->retx[(sub->retx_head + k) % st->lim.max_retx];

            wk_roam_put_u32(b, r->seq);
            wk_roam_put_u64(b, (uint64_t)r->time);
            wk_roam_put_u32(b, r->type);
            wk_roam_put_u32(b, r->len);
            wk_roam_put_u32(b, r->park);
        }
        wk_roam_put_u32(b, sub->nitems);
        if ((uint64_t)b->len + 12 * (uint64_t)sub->nitems > b->cap) {
            b->bad = true;          /* (written straight into the park) */
            return;
        }
        /* The items: straight stores (little-endian host, as
         * wk_roam_put). */
        for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext) {
            const struct wk_mi *mi = &st->items[m];
            int64_t             wm = mi->qlen == 0 ? mi->wm_ts : 0;

            memcpy(b->p + b->len, &mi->id, 4);
            memcpy(b->p + b->len + 4, &wm, 8);
            b->len += 12;
        }
    }
}

/* ------------------------------------------------------------------ */
/* the events of a move's window                                       */
/* ------------------------------------------------------------------ */

/* The last event our items saw, for the blob: u8 1 + its EventId, or 0
 * (version 2 of the blob). */
static void
wk_sub_roam_put_last(struct wk_subs *st, struct wk_roam_buf *b)
{
    wk_roam_put_u8(b, st->ev_last_set ? 1 : 0);
    if (st->ev_last_set)
        wk_roam_put(b, st->ev_last, 16);
}

/* The same from b (version 1 has none: false). */
static bool
wk_sub_roam_get_last(struct wk_roam_buf *b, uint8_t last[16])
{
    if (b->version < 2 || wk_roam_get_u8(b) == 0)
        return false;
    wk_roam_get(b, last, 16);
    return !b->bad;
}

static void
wk_sub_roam_window(void *arg, bool on)
{
    struct wk_worker *w = arg;
    struct wk_subs   *st = wk_subs_need(w);

    if (st == NULL || st->evwin_cap == 0 || st->evwin_on == on)
        return;
    st->evwin_on = on;
    st->evwin_len = 0;
    st->evwin_dropped = 0;
    /* The broker sends us events from now on, items or not. */
    if (st->ev_head == WK_NIL)
        wk_link_event_interest(w->link, on);
}

void
wk_sub_roam_keep(struct wk_subs *st, const uint8_t *rec, uint32_t len)
{
    if (len > st->evwin_cap - st->evwin_len
        || 4 > st->evwin_cap - st->evwin_len - len) {
        st->evwin_dropped++;
        return;
    }
    memcpy(st->evwin + st->evwin_len, &len, 4);
    memcpy(st->evwin + st->evwin_len + 4, rec, len);
    st->evwin_len += 4 + len;
}

/*
 * sub arrived from a worker whose event items last saw event `last`: the
 * events kept since our claim went out that come after it (the same
 * order on every worker: one broker, the same blocks to every ring) go
 * into sub's event items, as they would have there.  `last` not kept:
 * it came before our claim, so every kept one is newer.  Events past the
 * window's room were not kept: counted lost, the items told (an
 * EventQueueOverflowEvent).  Residual, not counted: an event the broker
 * made before our claim went out and had not yet handed to the old
 * worker when it packed (the broker's flush, fanout.linger_us).
 */
static void
wk_sub_roam_evreplay(struct wk_subs *st, struct wk_sub *sub,
                   const uint8_t last[16])
{
    uint32_t         pos = 0, len, carried = 0;
    bool             after, any = false;
    uint8_t          id[16];
    struct shm_fo_ev ev;
    int              nf;

    for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext)
        any |= (st->items[m].flags & WK_MI_EVENT) != 0;
    if (!any || !st->evwin_on)
        return;
    /* Is `last` among the kept ones? */
    after = true;
    for (pos = 0; pos + 4 <= st->evwin_len; pos += 4 + len) {
        memcpy(&len, st->evwin + pos, 4);
        nf = shm_fo_ev_parse(st->evwin + pos + 4, len, &ev, st->evf,
                             SHM_FO_EV_FIELDS_MAX);
        if (nf >= 0 && wk_ev_id(st->evf, (uint32_t)nf, id)
            && memcmp(id, last, 16) == 0) {
            after = false;
            break;
        }
    }
    for (pos = 0; pos + 4 <= st->evwin_len; pos += 4 + len) {
        memcpy(&len, st->evwin + pos, 4);
        nf = shm_fo_ev_parse(st->evwin + pos + 4, len, &ev, st->evf,
                             SHM_FO_EV_FIELDS_MAX);
        if (nf < 0)
            continue;
        if (!after) {
            after = wk_ev_id(st->evf, (uint32_t)nf, id)
                    && memcmp(id, last, 16) == 0;
            continue;
        }
        carried++;
        for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext)
            if (st->items[m].flags & WK_MI_EVENT)
                wk_ev_take(st, &st->items[m], &ev, st->evf, (uint32_t)nf);
    }
    if (st->evwin_dropped > 0)
        for (uint32_t m = sub->ihead; m != WK_NIL; m = st->items[m].snext)
            if (st->items[m].flags & WK_MI_EVENT)
                wk_ev_overflow(st, &st->items[m]);
    wk_roam_events(st->w, carried, st->evwin_dropped);
}

static uint32_t
wk_sub_roam_ids(void *arg, struct wk_session *s, uint32_t *ids, uint32_t max)
{
    struct wk_subs    *st = wk_subs_get(arg);
    struct wk_subsess *e;
    uint32_t           n = 0;

    if (st == NULL || s->index >= st->nss)
        return 0;
    e = &st->ss[s->index];
    if (!e->live || memcmp(&e->token, &s->token, sizeof(e->token)) != 0)
        return 0;
    for (uint32_t i = e->shead; i != WK_NIL && n < max;
         i = st->subs[i].snext)
        ids[n++] = st->subs[i].id;
    return n;
}

void
wk_sub_roam_handlers(struct wk_worker *w, struct wk_roam_handlers *h)
{
    memset(h, 0, sizeof(*h));
    h->pack = wk_sub_roam_pack;
    h->unpack = wk_sub_roam_unpack;
    h->pack_sub = wk_sub_roam_pack_one;
    h->done_sub = wk_sub_roam_done_one;
    h->unpack_sub = wk_sub_roam_unpack_one;
    h->sub_ids = wk_sub_roam_ids;
    h->window = wk_sub_roam_window;
    h->arg = w;
}

int
wk_sub_roam_init(struct wk_worker *w)
{
    struct wk_roam_handlers h;
    const struct wk_park_handlers k = {
        .pack = wk_sub_roam_pack,
        .unpack = wk_sub_roam_unpack,
        .snapshot = wk_sub_roam_snapshot,
        .snapshot_bytes = wk_sub_roam_snapshot_bytes,
        .replay = wk_sub_roam_replay,
        .settle = wk_sub_roam_settle,
        .arg = w,
    };

    if (w->park != NULL && wk_park_on_subs(w, &k) != 0)
        return -EINVAL;
    if (w->roam == NULL)
        return 0;                   /* sessions never move (one worker) */
    wk_sub_roam_handlers(w, &h);
    return wk_roam_on_subs(w, &h);
}
