/*
 * worker/monitem.c: monitored items (Part 4 §5.12): their pool and ids,
 * the per-slot index the fan-out hooks walk, where values come from, what
 * the MonitoredItem services (worker/svc_monitem.c) change (an item
 * started, deleted, its mode, its triggering links), and the link's value
 * and overflow handlers (worker/link.h, registered by wk_sub_init).  What
 * an item decides about a value is in worker/monitem_filter.c, how it
 * queues and publishes it in worker/monitem_queue.c.
 *
 * Where values come from (docs/subscriptions.md):
 *
 *   Value of a Variable   the broker pushes every change of its slot
 *   (no IndexRange)       (wk_mi_on_value): the record is parsed
 *                         once, each item on the slot filters it, the
 *                         first one to queue it copies its bytes once
 *                         for all of them (encoded once, by the broker)
 *   Value + IndexRange    each change of the slot makes the item read
 *                         the current value through the attribute
 *                         reader (worker/attr.h), which cuts the range
 *   EventNotifier         an event item: events from the fan-out
 *                         (monitem_event.c), never read
 *   any other attribute   read by the attribute reader every sampling
 *                         interval (at least WK_MI_READ_MIN_MS; the node
 *                         store does not change while the worker runs,
 *                         so this finds nothing new; a later reload of
 *                         the address space would)
 *
 * Initial value, "no lost update" (docs/architecture.md §2): the item
 * goes on its
 * slot's list first, which sets our interest bit (seq_cst) when it is the
 * first one there; only then is the slot read.  A record older than what
 * was read may still arrive: records whose server timestamp is older
 * than the newest one an item took are dropped, and one equal to it is
 * dropped by the filter (same value, same status).
 *
 * Allocation: none.  Items, cells, entries and links come from the pools
 * of wk_sub_init().
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "attr.h"
#include "link.h"
#include "node.h"
#include "park.h"
#include "proto/attrs_gen.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "shm/nodestore.h"
#include "shm/value.h"
#include "sub_int.h"

static uint32_t wk_mi_idx(const struct wk_subs *st, const struct wk_mi *mi);
static struct wk_mi *wk_mi_alloc(struct wk_subs *st);
static void wk_mi_free(struct wk_subs *st, struct wk_mi *mi);
static void wk_mi_slot_add(struct wk_subs *st, struct wk_mi *mi);
static void wk_mi_slot_del(struct wk_subs *st, struct wk_mi *mi);
static void wk_mi_sampled_add(struct wk_subs *st, struct wk_mi *mi);
static void wk_mi_sampled_del(struct wk_subs *st, struct wk_mi *mi);
static void wk_mi_take(struct wk_subs *st, struct wk_mi *mi,
                       const struct wk_rec *r, uint32_t *vref, bool force,
                       bool overflow);
static ua_status wk_mi_read_dv(struct wk_subs *st, struct wk_session *s,
                               uint32_t node, uint32_t attr,
                               const struct ua_string *range,
                               const struct ua_qualifiedname *enc,
                               struct ua_datavalue *dv);
static ua_status wk_mi_read_rec(struct wk_subs *st, struct wk_session *s,
                                uint32_t node, uint32_t attr,
                                const struct ua_string *range,
                                const struct ua_qualifiedname *enc,
                                struct wk_rec *r);
static ua_status wk_mi_read_item(struct wk_subs *st, const struct wk_mi *mi,
                                 struct wk_session *s, struct wk_rec *r);
static void wk_mi_read_take(struct wk_subs *st, struct wk_mi *mi,
                            struct wk_session *s, bool force, bool overflow);
static bool wk_mi_start_fatal(ua_status s);

/* ------------------------------------------------------------------ */
/* pool                                                                */
/* ------------------------------------------------------------------ */

static uint32_t
wk_mi_idx(const struct wk_subs *st, const struct wk_mi *mi)
{
    return (uint32_t)(mi - st->items);
}

struct wk_mi *
wk_mi_at(struct wk_subs *st, uint32_t idx)
{
    return idx < st->items_hw ? &st->items[idx] : NULL;
}

static struct wk_mi *
wk_mi_alloc(struct wk_subs *st)
{
    struct wk_mi *mi;
    uint32_t      idx, gen, mask = (1u << st->item_bits) - 1;

    if (st->nitems >= st->lim.max_items
        || wk_budget_take(st->w, SHM_LIM_MONITORED_ITEMS,
                          st->w->conf->max_monitored_items) != 0)
        return NULL;
    if (st->items_free != WK_NIL) {
        idx = st->items_free;
        mi = &st->items[idx];
        st->items_free = mi->snext;
    } else {
        idx = st->items_hw++;
        mi = &st->items[idx];
        mi->id = 0;
    }
    gen = (st->item_bits >= 32 ? 0 : (mi->id >> st->item_bits)) + 1;
    if (st->item_bits < 32 && gen >= (1u << (32 - st->item_bits)))
        gen = 1;
    memset(mi, 0, sizeof(*mi));
    mi->id = st->item_bits >= 32 ? idx + 1
                                  : (gen << st->item_bits) | ((idx + 1) & mask);
    mi->flags = WK_MI_USED;
    mi->lpos = mi->snext = mi->sprev = mi->rnext = WK_NIL;
    mi->qhead = mi->qtail = mi->links = mi->range = WK_NIL;
    mi->slot = SHM_NONE;
    st->nitems++;
    return mi;
}

static void
wk_mi_free(struct wk_subs *st, struct wk_mi *mi)
{
    uint32_t id = mi->id;

    memset(mi, 0, sizeof(*mi));
    mi->id = id;                    /* the next generation starts here */
    mi->snext = st->items_free;
    st->items_free = wk_mi_idx(st, mi);
    st->nitems--;
    wk_budget_give(st->w, SHM_LIM_MONITORED_ITEMS);
}

struct wk_mi *
wk_mi_find(struct wk_subs *st, const struct wk_sub *sub, uint32_t id)
{
    uint32_t      mask = st->item_bits >= 32 ? UINT32_MAX
                                             : (1u << st->item_bits) - 1;
    uint32_t      low = id & mask;
    struct wk_mi *mi;

    if (low != 0 && low - 1 < st->items_hw) {
        mi = &st->items[low - 1];
        if ((mi->flags & WK_MI_USED) && mi->id == id
            && &st->subs[mi->sub] == sub)
            return mi;
    }
    /* A subscription that came from another worker: its items kept their
     * ids (worker/sub_roam.c); a scan of its own items. */
    if (sub->moved)
        for (uint32_t i = sub->ihead; i != WK_NIL; i = st->items[i].snext)
            if (st->items[i].id == id)
                return &st->items[i];
    return NULL;
}

int
wk_mi_init(struct wk_subs *st)
{
    uint32_t cap = st->lim.max_items;

    st->item_bits = 1;
    while (st->item_bits < 32 && (1ull << st->item_bits) <= cap)
        st->item_bits++;
    st->items_free = WK_NIL;
    st->sampled_head = WK_NIL;
    st->ev_head = WK_NIL;
    {
        struct ua_nodeid id = ua_nodeid_num(0, UA_NS0ID_SERVER);

        st->n_server = wk_node_lookup(st->w, &id);
        id.id.num = UA_NS0ID_HASEVENTSOURCE;
        st->rt_hes = shm_nodestore_reftype_of(&st->w->ns,
                                              wk_node_lookup(st->w, &id));
        id.id.num = UA_NS0ID_HASCOMPONENT;
        st->rt_hc = shm_nodestore_reftype_of(&st->w->ns,
                                             wk_node_lookup(st->w, &id));
    }
    st->chunks_hw = 0;
    st->chunks_free = WK_NIL;
    st->sampled_due = UINT64_MAX;
    st->links_free = WK_NIL;
    st->nslots = st->w->vals.nslots;
    for (uint32_t i = 0; i < st->nslots; i++) {
        st->slot_head[i] = WK_NIL;
        /* A bit of ours set now is a dead predecessor's in this slot:
         * nobody here watches anything yet.  Unless it parked sessions:
         * the bits stay (the broker logs what they watch) until they are
         * taken over (wk_mi_settle). */
        if (st->w->slot < 64 && !wk_park_pending(st->w)
            && (shm_interest_get(&st->w->vals, i) >> st->w->slot) & 1)
            shm_interest_clear(&st->w->vals, i, st->w->slot);
    }
    return 0;
}

void
wk_mi_settle(struct wk_subs *st)
{
    for (uint32_t i = 0; i < st->nslots; i++)
        if (st->slot_head[i] == WK_NIL && st->w->slot < 64
            && (shm_interest_get(&st->w->vals, i) >> st->w->slot) & 1)
            shm_interest_clear(&st->w->vals, i, st->w->slot);
}

void
wk_mi_fini(struct wk_subs *st)
{
    struct wk_worker *w = st->w;

    if (st->ev_head != WK_NIL) {
        wk_link_event_interest(w->link, false);
        st->ev_head = WK_NIL;
    }
    /* Take our interest bits back: the broker stops sending us those. */
    for (uint32_t i = 0; i < st->nslots; i++)
        if (st->slot_head[i] != WK_NIL) {
            shm_interest_clear(&w->vals, i, w->slot);
            st->slot_head[i] = WK_NIL;
        }
}

/* ------------------------------------------------------------------ */
/* lists                                                               */
/* ------------------------------------------------------------------ */

/* A new chunk holding nothing, before first; its index. */
static uint32_t
wk_chunk_new(struct wk_subs *st, uint32_t first)
{
    uint32_t         h;
    struct wk_chunk *c;

    if (st->chunks_free != WK_NIL) {
        h = st->chunks_free;
        st->chunks_free = st->chunks[h].next;
    } else {
        h = st->chunks_hw++;
    }
    c = &st->chunks[h];
    c->next = first;
    for (uint32_t p = 0; p < WK_CHUNK_ITEMS; p++)
        c->it[p] = WK_NIL;
    return h;
}

static void
wk_chunk_free(struct wk_subs *st, uint32_t h)
{
    st->chunks[h].next = st->chunks_free;
    st->chunks_free = h;
}

/* The items of the list at *i (a head or a chunk), WK_NIL after the last
 * one; *i moves to what follows.  one: room for a lone item. */
const uint32_t *
wk_list_step(const struct wk_subs *st, uint32_t *i, uint32_t one[2])
{
    const struct wk_chunk *c;

    if (*i & WK_LIST_ONE) {
        one[0] = *i & ~WK_LIST_ONE;
        one[1] = WK_NIL;
        *i = WK_NIL;
        return one;
    }
    c = &st->chunks[*i];
    *i = c->next;
    return c->it;
}

/*
 * Item idx joins the list *head (sub_int.h, struct wk_chunk): alone, in
 * the head itself; else in the first chunk, or a new first chunk when
 * that one is full.  There is always a chunk: a list of k >= 2 items
 * holds at most k / 2 chunks, and there are half as many chunks as items.
 */
void
wk_list_add(struct wk_subs *st, uint32_t *head, uint32_t idx)
{
    uint32_t         h = *head, p = 0;
    struct wk_chunk *c;

    if (h == WK_NIL) {
        *head = idx | WK_LIST_ONE;
        st->items[idx].lpos = WK_NIL;
        return;
    }
    if (h & WK_LIST_ONE) {
        uint32_t one = h & ~WK_LIST_ONE;

        h = wk_chunk_new(st, WK_NIL);
        st->chunks[h].it[0] = one;
        st->items[one].lpos = h * 8;
        *head = h;
    }
    c = &st->chunks[h];
    while (p < WK_CHUNK_ITEMS && c->it[p] != WK_NIL)
        p++;
    if (p == WK_CHUNK_ITEMS) {
        h = wk_chunk_new(st, h);
        c = &st->chunks[h];
        *head = h;
        p = 0;
    }
    c->it[p] = idx;
    st->items[idx].lpos = h * 8 + p;
}

/* Item idx leaves the list *head: the last item of the first chunk takes
 * its place; a first chunk left empty is freed, and the last item of a
 * list goes back into the head. */
void
wk_list_del(struct wk_subs *st, uint32_t *head, uint32_t idx)
{
    uint32_t         pos = st->items[idx].lpos, h = *head, last, moved;
    struct wk_chunk *hc;

    st->items[idx].lpos = WK_NIL;
    if (h & WK_LIST_ONE) {
        *head = WK_NIL;             /* idx was alone */
        return;
    }
    hc = &st->chunks[h];
    for (last = WK_CHUNK_ITEMS - 1; hc->it[last] == WK_NIL; last--)
        ;
    moved = hc->it[last];
    hc->it[last] = WK_NIL;
    if (moved != idx) {
        st->chunks[pos / 8].it[pos % 8] = moved;
        st->items[moved].lpos = pos;
    }
    if (last == 0) {
        *head = hc->next;
        wk_chunk_free(st, h);
        h = *head;
        hc = h != WK_NIL ? &st->chunks[h] : NULL;
    }
    if (hc != NULL && hc->next == WK_NIL && hc->it[1] == WK_NIL) {
        /* One item left: back into the head, no chunk. */
        *head = hc->it[0] | WK_LIST_ONE;
        st->items[hc->it[0]].lpos = WK_NIL;
        wk_chunk_free(st, h);
    }
}

/* Put mi on its slot's list; the first item there sets our interest bit
 * (seq_cst, before the caller reads the slot: docs/architecture.md §2). */
static void
wk_mi_slot_add(struct wk_subs *st, struct wk_mi *mi)
{
    if (st->slot_head[mi->slot] == WK_NIL)
        shm_interest_set(&st->w->vals, mi->slot, st->w->slot);
    wk_list_add(st, &st->slot_head[mi->slot], wk_mi_idx(st, mi));
    mi->flags |= WK_MI_ON_SLOT;
}

/* Take mi off its slot's list; the last one clears our interest bit. */
static void
wk_mi_slot_del(struct wk_subs *st, struct wk_mi *mi)
{
    if (!(mi->flags & WK_MI_ON_SLOT))
        return;
    wk_list_del(st, &st->slot_head[mi->slot], wk_mi_idx(st, mi));
    mi->flags &= (uint16_t)~WK_MI_ON_SLOT;
    if (st->slot_head[mi->slot] == WK_NIL)
        shm_interest_clear(&st->w->vals, mi->slot, st->w->slot);
}

static void
wk_mi_sampled_add(struct wk_subs *st, struct wk_mi *mi)
{
    wk_list_add(st, &st->sampled_head, wk_mi_idx(st, mi));
    mi->flags |= WK_MI_ON_SAMPLED;
    if (mi->next_ms < st->sampled_due)
        st->sampled_due = mi->next_ms;
}

static void
wk_mi_sampled_del(struct wk_subs *st, struct wk_mi *mi)
{
    if (!(mi->flags & WK_MI_ON_SAMPLED))
        return;
    wk_list_del(st, &st->sampled_head, wk_mi_idx(st, mi));
    mi->flags &= (uint16_t)~WK_MI_ON_SAMPLED;
}

/*
 * One value for mi: drop it when it is older than one taken already,
 * filter it (unless force), queue it, fire the triggers.  *vref: the
 * value made of r so far (shared by the items that queue it).
 */
static void
wk_mi_take(struct wk_subs *st, struct wk_mi *mi, const struct wk_rec *r,
           uint32_t *vref, bool force, bool overflow)
{
    struct wk_sub *sub = &st->subs[mi->sub];

    if (r->mask & UA_DV_SERVER_TS) {
        if (r->srv_ts < mi->wm_ts && !force) {
            st->stale++;
            return;
        }
        if (r->srv_ts > mi->wm_ts)
            mi->wm_ts = r->srv_ts;
    }
    if (!force && !wk_mi_passes(st, mi, r)) {
        if (overflow)
            mi->flags |= WK_MI_OVERFLOW;
        return;
    }
    wk_mi_remember(st, mi, r);
    wk_mi_enqueue(st, sub, mi, r, vref, overflow);
    if (mi->flags & WK_MI_LINKED)
        wk_mi_trigger(st, sub, mi);
}

/* ------------------------------------------------------------------ */
/* reading through the attribute reader                                */
/* ------------------------------------------------------------------ */

/*
 * Read attribute attr of node (IndexRange range, DataEncoding enc; NULL:
 * none) the way the Read service does (both timestamps; worker/attr.h)
 * into dv, in st->arena
 * (reset here: the result is valid until the next read).  The operation's
 * status: Good, or the Bad code of a failed operation (dv then holds that
 * status alone).
 */
static ua_status
wk_mi_read_dv(struct wk_subs *st, struct wk_session *s, uint32_t node,
              uint32_t attr, const struct ua_string *range,
              const struct ua_qualifiedname *enc, struct ua_datavalue *dv)
{
    struct wk_attr_ctx ac = { st->w, s, &st->arena };
    ua_status          op;

    ua_arena_reset(&st->arena);
    memset(dv, 0, sizeof(*dv));
    dv->value.ndims = -1;
    op = wk_attr_read(&ac, node, attr, range, enc,
                      UA_TIMESTAMPSTORETURN_BOTH, dv);
    if (op != UA_GOOD) {
        memset(dv, 0, sizeof(*dv));
        dv->value.ndims = -1;
        dv->mask = UA_DV_STATUS;
        dv->status = op;
    }
    return op;
}

ua_status
wk_mi_read_value(struct wk_subs *st, struct wk_session *s, uint32_t node,
                 struct ua_variant *v)
{
    struct ua_datavalue dv;

    if (wk_mi_read_dv(st, s, node, UA_ATTR_VALUE, NULL, NULL, &dv)
        != UA_GOOD
        || !(dv.mask & UA_DV_VALUE))
        return UA_BAD_NO_DATA;
    if (dv.value.type != UA_VARIANT_RAW) {
        *v = dv.value;
        return UA_GOOD;
    }
    return ua_decode(dv.value.data, (size_t)dv.value.n, NULL, v,
                     &ua_types[UA_TYPE_VARIANT], &st->arena,
                     &wk_attr_slot_limits) == UA_GOOD
               ? UA_GOOD : UA_BAD_DECODING_ERROR;
}

/* Read an attribute and encode its DataValue into the arena as a
 * record. */
static ua_status
wk_mi_read_rec(struct wk_subs *st, struct wk_session *s, uint32_t node,
               uint32_t attr, const struct ua_string *range,
               const struct ua_qualifiedname *enc, struct wk_rec *r)
{
    struct ua_datavalue dv;
    ua_status           op = wk_mi_read_dv(st, s, node, attr, range, enc,
                                           &dv);
    size_t              need, len;
    uint8_t            *b;

    need = ua_encoded_size(&dv, &ua_types[UA_TYPE_DATAVALUE]);
    b = need > 0 ? ua_arena_alloc(&st->arena, need) : NULL;
    if (b == NULL || ua_encode(&dv, &ua_types[UA_TYPE_DATAVALUE], b, need,
                               &len) != UA_GOOD
        || !wk_mi_parse(st, b, (uint32_t)len, r)) {
        /* A DataValue of status BadOutOfMemory (0x80030000) alone. */
        static const uint8_t oom[5] = { UA_DV_STATUS, 0x00, 0x00, 0x03,
                                        0x80 };

        wk_mi_parse(st, oom, sizeof(oom), r);
        return op != UA_GOOD ? op : UA_BAD_OUT_OF_MEMORY;
    }
    return op;
}

/* What mi monitors, read now. */
static ua_status
wk_mi_read_item(struct wk_subs *st, const struct wk_mi *mi,
                struct wk_session *s, struct wk_rec *r)
{
    struct ua_string range = { -1, NULL };
    uint8_t         *rb = NULL;
    uint32_t         rl = 0;

    if (mi->range != WK_NIL) {
        wk_cells_get(&st->cells, mi->range, 0, &rl, 4);
        rb = st->tmp;
        if (rl <= st->tmp_cap) {
            wk_cells_get(&st->cells, mi->range, 4, rb, rl);
            range.len = (int32_t)rl;
            range.data = rb;
        }
    }
    return wk_mi_read_rec(st, s, mi->node, mi->attr, &range, NULL, r);
}

/* Read what mi monitors and take it (a value of its own). */
static void
wk_mi_read_take(struct wk_subs *st, struct wk_mi *mi, struct wk_session *s,
                bool force, bool overflow)
{
    struct wk_rec r;
    uint32_t      v = WK_NIL;

    wk_mi_read_item(st, mi, s, &r);
    wk_mi_take(st, mi, &r, &v, force, overflow);
    wk_val_done(st, v);
}

/* ------------------------------------------------------------------ */
/* the link's handlers (worker/link.h)                                 */
/* ------------------------------------------------------------------ */

void
wk_mi_on_value(void *arg, uint32_t slot, const uint8_t *dv, uint32_t len)
{
    struct wk_subs *st = arg;
    struct wk_rec   r;
    uint32_t        i, v = WK_NIL;

    if (slot >= st->nslots)
        return;
    i = st->slot_head[slot];
    if (i == WK_NIL || !wk_mi_parse(st, dv, len, &r))
        return;
    /* The common items inline (monitem_queue.c); the others come back
     * through wk_mi_take_any(). */
    wk_mi_fanout(st, i, &r, &v);
    wk_val_done(st, v);
}

void
wk_mi_take_any(struct wk_subs *st, struct wk_mi *mi, const struct wk_rec *r,
               uint32_t *vref)
{
    if (mi->mode == UA_MONITORINGMODE_DISABLED)
        return;
    if (mi->flags & WK_MI_READ)
        wk_mi_read_take(st, mi, NULL, false, false);    /* IndexRange */
    else
        wk_mi_take(st, mi, r, vref, false, false);
}

void
wk_mi_on_overflow(void *arg, uint32_t slot)
{
    struct wk_subs *st = arg;
    struct wk_rec   r;
    uint32_t        i, v = WK_NIL, one[2];
    bool            have = false;

    if (slot >= st->nslots)
        return;
    /* Changes were lost: the current value goes out with the Overflow
     * bit, whatever the filter says (the client must see the gap). */
    for (i = st->slot_head[slot]; i != WK_NIL;) {
        const uint32_t *it = wk_list_step(st, &i, one);

        for (uint32_t p = 0; p < WK_CHUNK_ITEMS && it[p] != WK_NIL; p++) {
            struct wk_mi *mi = &st->items[it[p]];

            if (mi->mode == UA_MONITORINGMODE_DISABLED)
                continue;
            if (mi->flags & WK_MI_READ) {
                wk_mi_read_take(st, mi, NULL, true, true);
                have = false;           /* the arena was reused */
                continue;
            }
            if (!have) {
                wk_val_done(st, v);
                v = WK_NIL;
                wk_mi_read_item(st, mi, NULL, &r);
                have = true;
            }
            wk_mi_take(st, mi, &r, &v, true, true);
        }
    }
    wk_val_done(st, v);
}

/* ------------------------------------------------------------------ */
/* sampling by reading                                                  */
/* ------------------------------------------------------------------ */

void
wk_mi_sample_due(struct wk_subs *st)
{
    uint64_t now = st->w->now_ms, due = UINT64_MAX;
    uint32_t one[2];

    if (now < st->sampled_due)
        return;
    for (uint32_t i = st->sampled_head; i != WK_NIL;) {
        const uint32_t *it = wk_list_step(st, &i, one);

        for (uint32_t p = 0; p < WK_CHUNK_ITEMS && it[p] != WK_NIL; p++) {
            struct wk_mi *mi = &st->items[it[p]];

            if (mi->mode != UA_MONITORINGMODE_DISABLED && now >= mi->next_ms) {
                mi->next_ms = now + (mi->interval_ms ? mi->interval_ms : 1);
                wk_mi_read_take(st, mi, NULL, false, false);
            }
            if (mi->next_ms < due)
                due = mi->next_ms;
        }
    }
    st->sampled_due = due;
}

void
wk_mi_resend(struct wk_subs *st, struct wk_sub *sub, struct wk_session *s)
{
    for (uint32_t i = sub->ihead; i != WK_NIL;) {
        struct wk_mi *mi = &st->items[i];

        i = mi->snext;
        if (mi->mode == UA_MONITORINGMODE_DISABLED
            || (mi->flags & WK_MI_EVENT))
            continue;               /* events are not resent */
        wk_mi_read_take(st, mi, s, true, false);
    }
}

/* ------------------------------------------------------------------ */
/* create, modify, delete                                               */
/* ------------------------------------------------------------------ */

struct wk_mi *
wk_mi_new(struct wk_subs *st, struct wk_sub *sub)
{
    struct wk_mi *mi;

    if (sub->nitems >= st->lim.max_items_per_sub
        || (mi = wk_mi_alloc(st)) == NULL)
        return NULL;
    mi->sub = (uint32_t)(sub - st->subs);
    /* In a subscription that came from another worker, a new id must not
     * be one of the ids its items brought: the next generation then. */
    if (sub->moved && st->item_bits < 32) {
        uint32_t i = sub->ihead;

        while (i != WK_NIL) {
            if (st->items[i].id == mi->id) {
                mi->id += 1u << st->item_bits;
                i = sub->ihead;         /* again, with the new id */
            } else {
                i = st->items[i].snext;
            }
        }
    }
    return mi;
}

void
wk_mi_drop(struct wk_subs *st, struct wk_mi *mi)
{
    wk_mi_free(st, mi);
}

bool
wk_mi_from_slot(const struct wk_subs *st, uint32_t node, uint32_t attr)
{
    const struct shm_node *n = &st->w->ns.nodes[node];

    return attr == UA_ATTR_VALUE
           && (n->node_class == SHM_NC_VARIABLE
               || n->node_class == SHM_NC_VARIABLETYPE)
           && n->u.var.slot < st->nslots;
}

/* Operation results of the Read that make a create fail (the others are
 * the value's status and go out in its first notification). */
static bool
wk_mi_start_fatal(ua_status s)
{
    switch (s) {
    case UA_BAD_NODE_ID_UNKNOWN:
    case UA_BAD_ATTRIBUTE_ID_INVALID:
    case UA_BAD_INDEX_RANGE_INVALID:
    case UA_BAD_DATA_ENCODING_INVALID:
    case UA_BAD_DATA_ENCODING_UNSUPPORTED:
    case UA_BAD_NOT_READABLE:
    case UA_BAD_USER_ACCESS_DENIED:
    case UA_BAD_OUT_OF_MEMORY:
    case UA_BAD_TIMESTAMPS_TO_RETURN_INVALID:
        return true;
    default:
        return false;
    }
}

ua_status
wk_mi_start(struct wk_subs *st, struct wk_mi *mi, struct wk_session *s,
            const struct ua_read_value_id *rv)
{
    struct wk_sub *sub = &st->subs[mi->sub];
    struct wk_rec  rec;
    ua_status      rc;

    /* Into the subscription's list. */
    mi->snext = sub->ihead;
    mi->sprev = WK_NIL;
    if (sub->ihead != WK_NIL)
        st->items[sub->ihead].sprev = (uint32_t)(mi - st->items);
    sub->ihead = (uint32_t)(mi - st->items);
    sub->nitems++;
    if (mi->flags & WK_MI_EVENT) {
        wk_ev_add(st, mi);
        return UA_GOOD;
    }

    /* Where values come from; for a slot, interest first
     * (docs/architecture.md §2). */
    if (wk_mi_from_slot(st, mi->node, mi->attr)) {
        mi->slot = st->w->ns.nodes[mi->node].u.var.slot;
        if (mi->range != WK_NIL)
            mi->flags |= WK_MI_READ;
        wk_mi_slot_add(st, mi);
    } else {
        mi->flags |= WK_MI_READ;
        mi->next_ms = st->w->now_ms + mi->interval_ms;
        wk_mi_sampled_add(st, mi);
    }
    /* Then the slot: the initial value; and the checks Read makes. */
    rc = wk_mi_read_rec(st, s, mi->node, rv->attribute_id, &rv->index_range,
                        &rv->data_encoding, &rec);
    if (wk_mi_start_fatal(rc)) {
        wk_mi_delete(st, mi);
        return rc;
    }
    if (mi->mode != UA_MONITORINGMODE_DISABLED) {
        uint32_t v = WK_NIL;

        if (mi->flags & WK_MI_ON_SLOT)
            mi->next_ms = st->w->now_ms;    /* the first sample starts it */
        wk_mi_take(st, mi, &rec, &v, true, false);
        wk_val_done(st, v);
    }
    return UA_GOOD;
}

void
wk_mi_resume(struct wk_subs *st, struct wk_mi *mi)
{
    struct wk_sub *sub = &st->subs[mi->sub];

    mi->snext = sub->ihead;
    mi->sprev = WK_NIL;
    if (sub->ihead != WK_NIL)
        st->items[sub->ihead].sprev = (uint32_t)(mi - st->items);
    sub->ihead = (uint32_t)(mi - st->items);
    sub->nitems++;
    if (mi->flags & WK_MI_EVENT) {
        wk_ev_add(st, mi);
        return;
    }
    if (wk_mi_from_slot(st, mi->node, mi->attr)) {
        mi->slot = st->w->ns.nodes[mi->node].u.var.slot;
        if (mi->range != WK_NIL)
            mi->flags |= WK_MI_READ;
        wk_mi_slot_add(st, mi);         /* interest first */
        mi->next_ms = st->w->now_ms;
    } else {
        mi->flags |= WK_MI_READ;
        mi->next_ms = st->w->now_ms + mi->interval_ms;
        wk_mi_sampled_add(st, mi);
    }
}

uint32_t
wk_mi_slot_seq(const struct wk_subs *st, const struct wk_mi *mi,
               bool *behind)
{
    const struct shm_value_slot *v;
    uint32_t                     seq;

    *behind = false;
    if (!(mi->flags & WK_MI_ON_SLOT) || mi->slot >= st->nslots)
        return 0;
    v = &st->w->vals.slots[mi->slot];
    seq = atomic_load_explicit(&v->seq, memory_order_acquire);
    /* A write in progress counts as done: its record may be missed. */
    seq = (seq + 1) & ~1u;
    *behind = atomic_load_explicit(&v->server_ts, memory_order_relaxed)
              > mi->wm_ts;
    return seq;
}

uint64_t
wk_mi_catch_up(struct wk_subs *st, struct wk_mi *mi, struct wk_session *s,
               uint32_t seq_then, bool behind)
{
    struct wk_rec r;
    uint32_t      seq_now, n, v = WK_NIL;
    bool          b;
    uint64_t      lost;

    if (!(mi->flags & WK_MI_ON_SLOT)
        || mi->mode == UA_MONITORINGMODE_DISABLED)
        return 0;
    seq_now = wk_mi_slot_seq(st, mi, &b);
    n = (seq_now - seq_then) / 2;           /* changes since the pack */
    wk_mi_read_item(st, mi, s, &r);
    if (!(r.mask & UA_DV_SERVER_TS) || r.srv_ts <= mi->wm_ts)
        return 0;                           /* nothing new */
    lost = (n > 1 ? n - 1 : 0) + (behind ? 1 : 0);
    wk_mi_take(st, mi, &r, &v, false, lost > 0);
    wk_val_done(st, v);
    return lost;
}

uint64_t
wk_mi_gap(struct wk_subs *st, struct wk_mi *mi)
{
    struct wk_rec r;
    uint32_t      v = WK_NIL;

    if (!(mi->flags & WK_MI_ON_SLOT)
        || mi->mode == UA_MONITORINGMODE_DISABLED)
        return 0;
    wk_mi_read_item(st, mi, NULL, &r);
    if (!(r.mask & UA_DV_SERVER_TS) || r.srv_ts <= mi->wm_ts)
        return 0;                           /* nothing new: none lost */
    wk_mi_take(st, mi, &r, &v, true, true);
    wk_val_done(st, v);
    return 1;
}

uint64_t
wk_mi_replay(struct wk_subs *st, uint32_t slot, int64_t srv_ts,
             const uint8_t *dv, uint32_t len)
{
    struct wk_rec r;
    uint32_t      i, v = WK_NIL, one[2];
    uint64_t      lost = 0, saved;
    bool          have;

    if (slot >= st->nslots || st->slot_head[slot] == WK_NIL)
        return 0;
    have = dv != NULL && wk_mi_parse(st, dv, len, &r);
    /* Sampling intervals count from the change's time, as for a block's
     * (wk_sub_on_time): the ServerTimestamp on the monotonic clock. */
    saved = st->rec_ms;
    if (srv_ts > 0) {
        int64_t ms = (int64_t)st->w->now_ms
                     - (st->w->now_dt - srv_ts) / 10000;

        st->rec_ms = ms > 0 ? (uint64_t)ms : 1;
    }
    for (i = st->slot_head[slot]; i != WK_NIL;) {
        const uint32_t *it = wk_list_step(st, &i, one);

        for (uint32_t p = 0; p < WK_CHUNK_ITEMS && it[p] != WK_NIL; p++) {
            struct wk_mi *mi = &st->items[it[p]];

            if (mi->mode == UA_MONITORINGMODE_DISABLED
                || (mi->flags & WK_MI_READ) || srv_ts <= mi->wm_ts)
                continue;           /* taken before it was parked */
            if (!have) {
                /* Not in the log (too long): the current value, late,
                 * with the Overflow bit. */
                wk_val_done(st, v);
                v = WK_NIL;
                lost += wk_mi_gap(st, mi);
                continue;
            }
            wk_mi_take(st, mi, &r, &v, false, false);
            /* The same change may come through our ring too (logged
             * after our cut): one tick past it, it is stale there. */
            if (mi->wm_ts == srv_ts)
                mi->wm_ts = srv_ts + 1;
        }
    }
    wk_val_done(st, v);
    st->rec_ms = saved;
    return lost;
}

void
wk_mi_forget_last(struct wk_subs *st, struct wk_mi *mi)
{
    if (mi->flags & WK_MI_LAST_REF)
        wk_cells_free(&st->cells, mi->last.ref);
    mi->flags &= (uint16_t)~(WK_MI_LAST_REF | WK_MI_HAS_LAST);
}

void
wk_mi_set_interval(struct wk_subs *st, struct wk_mi *mi, uint32_t ms)
{
    mi->interval_ms = ms;
    if (mi->flags & WK_MI_ON_SAMPLED) {
        mi->next_ms = st->w->now_ms + mi->interval_ms;
        if (mi->next_ms < st->sampled_due)
            st->sampled_due = mi->next_ms;
    }
}

void
wk_mi_delete(struct wk_subs *st, struct wk_mi *mi)
{
    struct wk_sub *sub = &st->subs[mi->sub];
    uint32_t       idx = wk_mi_idx(st, mi);

    wk_mi_purge(st, sub, mi);
    wk_mi_slot_del(st, mi);
    wk_mi_sampled_del(st, mi);
    wk_ev_del(st, mi);
    while (mi->links != WK_NIL) {
        uint32_t l = mi->links;

        mi->links = st->links[l].next;
        st->links[l].next = st->links_free;
        st->links_free = l;
        st->nlinks--;
    }
    wk_cells_free(&st->cells, mi->range);
    if (mi->flags & WK_MI_LAST_REF)
        wk_cells_free(&st->cells, mi->last.ref);
    if (mi->sprev != WK_NIL)
        st->items[mi->sprev].snext = mi->snext;
    else if (sub->ihead == idx)
        sub->ihead = mi->snext;
    if (mi->snext != WK_NIL)
        st->items[mi->snext].sprev = mi->sprev;
    sub->nitems--;
    wk_mi_free(st, mi);
}

ua_status
wk_mi_delete_id(struct wk_subs *st, struct wk_sub *sub, uint32_t id)
{
    struct wk_mi *mi = wk_mi_find(st, sub, id);

    if (mi == NULL)
        return UA_BAD_MONITORED_ITEM_ID_INVALID;
    wk_mi_delete(st, mi);
    return UA_GOOD;
}

ua_status
wk_mi_set_mode(struct wk_subs *st, struct wk_sub *sub, uint32_t id,
               int32_t mode, struct wk_session *s)
{
    struct wk_mi *mi = wk_mi_find(st, sub, id);
    bool          was;
    uint8_t       old;

    if (mi == NULL)
        return UA_BAD_MONITORED_ITEM_ID_INVALID;
    old = mi->mode;
    if (old == (uint8_t)mode)
        return UA_GOOD;
    was = wk_mi_reportable(mi);
    if (mode == UA_MONITORINGMODE_DISABLED) {
        /* Disabled: nothing sampled, nothing kept (§5.12.1.3). */
        wk_mi_purge(st, sub, mi);
        mi->mode = (uint8_t)mode;
        return UA_GOOD;
    }
    mi->mode = (uint8_t)mode;
    if (mode == UA_MONITORINGMODE_REPORTING)
        mi->flags &= (uint16_t)~WK_MI_TRIGGERED;
    wk_mi_counted(st, sub, mi, was);
    if (old == UA_MONITORINGMODE_DISABLED && !(mi->flags & WK_MI_EVENT)) {
        /* Enabled again: the first sample goes out as soon as possible. */
        mi->flags &= (uint16_t)~WK_MI_HAS_LAST;
        mi->next_ms = st->w->now_ms;
        wk_mi_read_take(st, mi, s, true, false);
    }
    return UA_GOOD;
}

ua_status
wk_mi_link(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *from,
           uint32_t to_id)
{
    struct wk_mi *to = wk_mi_find(st, sub, to_id);
    uint32_t      l;

    if (to == NULL || to == from)
        return UA_BAD_MONITORED_ITEM_ID_INVALID;
    for (l = from->links; l != WK_NIL; l = st->links[l].next)
        if (st->links[l].to == to_id)
            return UA_GOOD;         /* already linked */
    if (st->links_free != WK_NIL) {
        l = st->links_free;
        st->links_free = st->links[l].next;
    } else if (st->links_hw < st->lim.links) {
        l = st->links_hw++;
    } else {
        return UA_BAD_TOO_MANY_MONITORED_ITEMS;
    }
    st->links[l].to = to_id;
    st->links[l].next = from->links;
    from->links = l;
    from->flags |= WK_MI_LINKED;
    st->nlinks++;
    return UA_GOOD;
}

ua_status
wk_mi_unlink(struct wk_subs *st, struct wk_mi *from, uint32_t to_id)
{
    uint32_t *pl = &from->links;

    while (*pl != WK_NIL) {
        uint32_t l = *pl;

        if (st->links[l].to == to_id) {
            *pl = st->links[l].next;
            st->links[l].next = st->links_free;
            st->links_free = l;
            st->nlinks--;
            if (from->links == WK_NIL)
                from->flags &= (uint16_t)~WK_MI_LINKED;
            return UA_GOOD;
        }
        pl = &st->links[l].next;
    }
    return UA_BAD_MONITORED_ITEM_ID_INVALID;
}
