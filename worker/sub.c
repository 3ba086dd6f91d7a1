/*
 * worker/sub.c: subscriptions (Part 4 §5.13): the pools, the per-session
 * Publish queues, the publishing timers, the subscription state machine,
 * NotificationMessages, transfer and lifetime.  The services that drive
 * it (worker/svc_sub.c) see it through sub_int.h: they check requests and
 * fill responses, this file keeps the state consistent.
 *
 * The state machine (§5.13.1.2) with two states kept:
 *
 *   NORMAL  the publishing timer runs.  At each expiry the subscription
 *           wants to send when publishing is enabled and notifications
 *           are ready, when it never sent anything yet (the first expiry
 *           sends a keep-alive), or when maxKeepAliveCount expiries have
 *           passed since its last message.  Wanting to send makes it
 *           LATE; the session's Publish queue is served right after, by
 *           priority.
 *   LATE    a message waits for a Publish request: the next one the
 *           session queues is answered at once (§5.13.1.1 case a/b).
 *           Every expiry without a message counts down the lifetime; at
 *           zero the subscription is deleted and the session gets a
 *           StatusChangeNotification with BadTimeout.
 *
 * KEEPALIVE of the spec's table is NORMAL with nothing to send: the timer
 * then sleeps until the keep-alive is due (or until a notification
 * arrives: wk_sub_ready() pulls the timer in to the next tick), so an
 * idle subscription costs one heap entry and one wake-up per keep-alive,
 * not one per publishing interval.  Ticks are t0 + k * period; a timer
 * that slept counts every tick it missed (k_done).
 *
 * Sessions: ss[] is indexed like the session pool; an entry remembers the
 * token of the session it serves, so a slot that changed hands (session
 * closed or timed out, slot reused) is noticed and its subscriptions
 * become orphans: no session, lifetime counting down, waiting for
 * TransferSubscriptions (Part 4 §5.13.7).
 *
 * Publish queue (docs/security.md case 78): at most
 * conf->max_publish_requests_per_session requests per session wait; one
 * more answers the oldest with BadTooManyPublishRequests.
 * Acknowledgements are processed on arrival; their results wait with the
 * request (2 bits each).
 *
 * Responses leave through the connection layer's deferred responses
 * (worker/reply.h wk_reply_send).  The DataChangeNotification
 * of a message is written by hand from the queued DataValues (the records
 * the broker encoded once) into one ExtensionObject body.
 *
 * No allocation after wk_sub_init().
 */
#include "sub.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "link.h"
#include "park.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "reply.h"
#include "session.h"
#include "sub_int.h"

#define WK_SUB_ID_BITS     26      /* below the worker slot's 6 bits */
#define WK_SUB_BODY_SLACK  1024    /* headers around a notification body */

static void *wk_sub_alloc_mem(struct wk_subs *st, size_t n);
static void wk_sub_limits(const struct shm_config *c,
                          struct wk_sub_limits *l);
static void wk_sub_on_timer(evutil_socket_t fd, short what, void *arg);
static void wk_sub_period_add(struct wk_subs *st, uint32_t p);
static void wk_sub_period_del(struct wk_subs *st, uint32_t p);
static void wk_sub_arm(struct wk_subs *st);
static struct wk_sub *wk_sub_new(struct wk_subs *st);
static uint32_t wk_sub_moved_hash(uint32_t id);
static void wk_sub_moved_del(struct wk_subs *st, struct wk_sub *sub);
static uint64_t wk_sub_phase(uint64_t now, uint32_t period);
static uint64_t wk_sub_tick_now(const struct wk_sub *sub, uint64_t now);
static void wk_sub_sync(struct wk_subs *st, struct wk_sub *sub);
static void wk_sub_schedule(struct wk_subs *st, struct wk_sub *sub);
static void wk_sub_expire(struct wk_subs *st, struct wk_sub *sub);
static void wk_sub_timeout(struct wk_subs *st, struct wk_sub *sub);
static uint32_t wk_sub_next_seq(const struct wk_sub *sub);
static bool wk_sub_ss_alive(struct wk_subs *st, uint32_t idx);
static void wk_sub_ss_reset(struct wk_subs *st, struct wk_subsess *e);
static void wk_sub_ss_link(struct wk_subs *st, struct wk_subsess *e,
                           struct wk_sub *sub);
static void wk_sub_ss_unlink(struct wk_subs *st, struct wk_sub *sub);
static void wk_sub_touch_ss(struct wk_subs *st, struct wk_subsess *e);
static bool wk_sub_pub_take(struct wk_subs *st, struct wk_subsess *e,
                            struct wk_pubreq *out);
static void wk_sub_pub_fail(struct wk_subs *st, struct wk_pubreq *pr,
                            ua_status s);
static void wk_sub_notice(struct wk_subs *st, struct wk_subsess *e,
                          uint32_t sub_id, uint32_t seq, ua_status status);
static void wk_sub_serve(struct wk_subs *st, struct wk_subsess *e);
static void wk_sub_send(struct wk_subs *st, struct wk_subsess *e,
                        struct wk_sub *sub, struct wk_pubreq *pr);
static void wk_sub_send_notice(struct wk_subs *st, struct wk_subsess *e,
                               struct wk_pubreq *pr);
static void wk_sub_respond(struct wk_subs *st, struct wk_pubreq *pr,
                           struct ua_publish_response *resp);

/* ------------------------------------------------------------------ */
/* state, init, fini                                                   */
/* ------------------------------------------------------------------ */

struct wk_subs *
wk_subs_need(struct wk_worker *w)
{
    if (w->subs == NULL && wk_sub_init(w) != 0)
        return NULL;
    return w->subs;
}

static void *
wk_sub_alloc_mem(struct wk_subs *st, size_t n)
{
    void *p = wk_alloc(st->w, n);

    if (p != NULL) {
        st->allocations++;
        st->bytes += n;
    }
    return p;
}

/*
 * n bytes on a cache-line boundary (*mem: the block to free).  Monitored
 * items and cells are laid out by cache line (struct wk_mi's fan-out
 * fields on its first line, a cell a line): a large malloc() block starts
 * 16 bytes into a page, which would put each of them across two lines.
 */
static void *
wk_sub_alloc_lines(struct wk_subs *st, size_t n, void **mem)
{
    uint8_t *p = wk_sub_alloc_mem(st, n + 63);

    *mem = p;
    if (p == NULL)
        return NULL;
    return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* The limits in force: the snapshot, then the defaults of sub_int.h. */
static void
wk_sub_limits(const struct shm_config *c, struct wk_sub_limits *l)
{
    memset(l, 0, sizeof(*l));
    l->max_subs = c->max_subscriptions ? c->max_subscriptions : 1;
    if (l->max_subs >= (1u << 20))
        l->max_subs = (1u << 20) - 1;       /* 20 index bits in an id */
    l->max_subs_per_session = c->max_subscriptions_per_session
                                  ? c->max_subscriptions_per_session : 1;
    l->max_items = c->max_monitored_items ? c->max_monitored_items : 1;
    if (l->max_items >= (1u << 28))
        l->max_items = (1u << 28) - 1;
    l->max_items_per_sub = c->max_monitored_items_per_subscription
                               ? c->max_monitored_items_per_subscription : 1;
    l->max_items_per_call = c->max_monitored_items_per_call
                                ? c->max_monitored_items_per_call : 1;
    l->max_publish = c->max_publish_requests_per_session
                         ? c->max_publish_requests_per_session : 1;
    l->max_notifs = c->max_notifications_per_publish
                        ? c->max_notifications_per_publish
                        : WK_SUB_NOTIFS_MAX_DEF;
    l->max_retx = c->max_retransmission_queue ? c->max_retransmission_queue
                                              : WK_SUB_RETX_DEF;
    l->max_queue = c->max_monitored_item_queue_size
                       ? c->max_monitored_item_queue_size
                       : WK_MI_QUEUE_MAX_DEF;
    l->max_evq = c->max_event_queue_size ? c->max_event_queue_size
                                         : WK_MI_EVQ_MAX_DEF;
    l->def_evq = c->default_event_queue_size ? c->default_event_queue_size
                                             : WK_MI_EVQ_DEF;
    if (l->def_evq > l->max_evq)
        l->def_evq = l->max_evq;
    l->max_where = c->max_filter_elements ? c->max_filter_elements
                                          : WK_EV_WHERE_DEF;
    if (l->max_where > WK_EV_WHERE_MAX)
        l->max_where = WK_EV_WHERE_MAX;
    l->max_keepalive = c->max_keep_alive_count ? c->max_keep_alive_count
                                               : WK_SUB_KEEPALIVE_MAX_DEF;
    l->max_lifetime = c->max_lifetime_count ? c->max_lifetime_count
                                            : WK_SUB_LIFETIME_MAX_DEF;
    /* The queue pool: limits.max_queued_values, apart from the items (an
     * item at rest holds none of it); 0 sizes it by the items, as before
     * issue 19 (4 values an item). */
    l->cells = c->max_queued_values ? c->max_queued_values
                                    : l->max_items * WK_SUB_CELLS_PER_ITEM;
    if (l->cells < 1024)
        l->cells = 1024;
    if (l->cells > WK_QE_VAL)
        l->cells = WK_QE_VAL;               /* 31 bits in an entry */
    /* The retransmission store: limits.retransmission_store_bytes, apart
     * from the subscriptions (its ring cycles through all of it, so all of
     * it becomes resident and each message's lines are cold); 0 sizes it
     * by them, ~1 KiB per message each subscription may keep. */
    l->rcells = c->retransmission_store_bytes != 0
                    ? c->retransmission_store_bytes / WK_CELL_SIZE
                    : l->max_subs * l->max_retx * WK_SUB_RCELLS_PER_MSG;
    l->links = l->max_items;
    l->min_interval = c->min_publishing_interval_ms > 0
                          ? c->min_publishing_interval_ms : 1;
    l->min_sampling = c->min_sampling_interval_ms >= 0
                          ? c->min_sampling_interval_ms : 0;
}

int
wk_sub_init(struct wk_worker *w)
{
    struct wk_subs *st;
    size_t          msg;
    uint32_t        nss;

    if (w->subs != NULL)
        return 0;
    st = wk_alloc(w, sizeof(*st));
    if (st == NULL)
        return -ENOMEM;
    memset(st, 0, sizeof(*st));
    st->w = w;
    st->allocations = 1;
    wk_sub_limits(w->conf, &st->lim);
    msg = w->conf->max_message_size ? w->conf->max_message_size
                                    : UA_LIMIT_MESSAGE_SIZE;
    if (msg < 65536)
        msg = 65536;
    nss = w->conf->max_sessions ? w->conf->max_sessions : 1;
    st->nss = nss;
    st->out_cap = st->tmp_cap = msg;
    w->subs = st;

    /* Big arrays: malloc'ed, never walked here, so untouched pages stay
     * unbacked until the pool grows into them. */
    st->subs = wk_sub_alloc_mem(st, (size_t)st->lim.max_subs
                                        * sizeof(*st->subs));
    st->retx_all = wk_sub_alloc_mem(st, (size_t)st->lim.max_subs
                                            * st->lim.max_retx
                                            * sizeof(*st->retx_all));
    st->ss = wk_sub_alloc_mem(st, (size_t)nss * sizeof(*st->ss));
    st->pub_all = wk_sub_alloc_mem(st, (size_t)nss * st->lim.max_publish
                                           * sizeof(*st->pub_all));
    st->items = wk_sub_alloc_lines(st, (size_t)st->lim.max_items
                                           * sizeof(*st->items),
                                   &st->items_mem);
    st->slot_head = wk_sub_alloc_mem(st, (size_t)(w->vals.nslots + 1)
                                             * sizeof(uint32_t));
    st->chunks = wk_sub_alloc_lines(st, ((size_t)st->lim.max_items / 2 + 1)
                                            * sizeof(struct wk_chunk),
                                    &st->chunks_mem);
    st->cells.c = wk_sub_alloc_lines(st, (size_t)st->lim.cells
                                             * sizeof(struct wk_cell),
                                     &st->cells_mem);
    st->rstore.cap = wk_retx_store_cap(&st->lim);
    st->rstore.buf = wk_sub_alloc_mem(st, st->rstore.cap);
    st->cells.stack = wk_sub_alloc_mem(st, (size_t)st->lim.cells
                                               * sizeof(uint32_t));
    st->ents.e = wk_sub_alloc_mem(st, (size_t)st->lim.cells
                                          * sizeof(struct wk_qent));
    st->ents.stack = wk_sub_alloc_mem(st, (size_t)st->lim.cells
                                              * sizeof(uint32_t));
    st->links = wk_sub_alloc_mem(st, (size_t)st->lim.links
                                         * sizeof(*st->links));
    st->out = wk_sub_alloc_mem(st, st->out_cap);
    st->tmp = wk_sub_alloc_mem(st, st->tmp_cap);
    st->evf = wk_sub_alloc_mem(st, SHM_FO_EV_FIELDS_MAX * sizeof(*st->evf));
    st->evc = wk_sub_alloc_mem(st, WK_EV_FILTER_MAX);
    st->evv = wk_sub_alloc_mem(st, WK_EV_WHERE_MAX * sizeof(*st->evv));
    st->arena_buf = wk_sub_alloc_mem(st, 2 * msg + 65536);
    st->acks_out = wk_sub_alloc_mem(st, WK_SUB_ACKS_MAX * sizeof(ua_status));
    st->seqs_out = wk_sub_alloc_mem(st, (size_t)st->lim.max_retx
                                            * sizeof(uint32_t));
    /* The park's progress (worker/park.h): the items one message emptied
     * (at most one per notification). */
    if (w->park != NULL) {
        st->sent_cap = st->lim.max_notifs;
        st->sent = wk_sub_alloc_mem(st, (size_t)st->sent_cap
                                            * sizeof(*st->sent));
        if (st->sent == NULL)
            st->sent_cap = 0;
    }
    st->moved_cap = 4;
    while (st->moved_cap < 2 * st->lim.max_subs)
        st->moved_cap *= 2;
    st->moved_tab = wk_sub_alloc_mem(st, (size_t)st->moved_cap
                                             * sizeof(uint32_t));
    st->evwin_cap = w->conf->session_move_event_bytes;
    if (st->evwin_cap > 0)
        st->evwin = wk_sub_alloc_mem(st, st->evwin_cap);
    if (st->subs == NULL || st->retx_all == NULL
        || wk_timerheap_init(&st->timers, w, st->lim.max_subs,
                             &st->allocations) != 0
        || st->ss == NULL || st->pub_all == NULL || st->items == NULL
        || st->slot_head == NULL || st->chunks == NULL
        || st->cells.c == NULL
        || st->rstore.buf == NULL || st->cells.stack == NULL
        || st->ents.e == NULL || st->ents.stack == NULL
        || st->links == NULL || st->out == NULL
        || st->tmp == NULL || st->arena_buf == NULL || st->acks_out == NULL
        || st->evf == NULL || st->evc == NULL || st->evv == NULL
        || st->seqs_out == NULL || st->moved_tab == NULL
        || (st->evwin_cap > 0 && st->evwin == NULL)) {
        wk_sub_fini(w);
        return -ENOMEM;
    }
    ua_arena_init(&st->arena, st->arena_buf, 2 * msg + 65536);
    st->cells.cap = st->lim.cells;
    st->ents.cap = st->lim.cells;
    memset(st->ss, 0, (size_t)nss * sizeof(*st->ss));
    memset(st->moved_tab, 0xFF, (size_t)st->moved_cap * sizeof(uint32_t));
    for (uint32_t i = 0; i < nss; i++) {
        st->ss[i].shead = WK_NIL;
        st->ss[i].serve_next = WK_NIL;
        st->ss[i].pub = st->pub_all + (size_t)i * st->lim.max_publish;
    }
    st->subs_free = WK_NIL;
    st->serve_head = WK_NIL;
    st->sub_bits = 1;
    while ((1u << st->sub_bits) <= st->lim.max_subs)
        st->sub_bits++;
    wk_session_random(w, st->key, sizeof(st->key));
    wk_mi_init(st);
    if (w->base != NULL) {
        evtimer_assign(&st->timer, w->base, wk_sub_on_timer, st);
        st->timer_on = true;
    }
    if (wk_link_on(w->link)) {
        static const struct wk_link_notify notify = {
            .value = wk_mi_on_value,
            .overflow = wk_mi_on_overflow,
            .event = wk_ev_on_event,
            .events_lost = wk_ev_on_events_lost,
            .time = wk_sub_on_time,
            .wake_by = wk_sub_wake_by,
        };

        wk_link_set_notify(w->link, &notify, st);
    }
    return 0;
}

void
wk_sub_fini(struct wk_worker *w)
{
    struct wk_subs *st = w->subs;

    if (st == NULL)
        return;
    if (st->timer_on)
        evtimer_del(&st->timer);
    if (st->slot_head != NULL)
        wk_mi_fini(st);
    wk_free(w, st->subs);
    wk_free(w, st->retx_all);
    wk_timerheap_clear(&st->timers, w);
    wk_free(w, st->ss);
    wk_free(w, st->pub_all);
    wk_free(w, st->items_mem);
    wk_free(w, st->slot_head);
    wk_free(w, st->chunks_mem);
    wk_free(w, st->cells_mem);
    wk_free(w, st->rstore.buf);
    wk_free(w, st->cells.stack);
    wk_free(w, st->ents.e);
    wk_free(w, st->ents.stack);
    wk_free(w, st->links);
    wk_free(w, st->out);
    wk_free(w, st->tmp);
    wk_free(w, st->evf);
    wk_free(w, st->evc);
    wk_free(w, st->conds);
    wk_free(w, st->evv);
    wk_free(w, st->arena_buf);
    wk_free(w, st->acks_out);
    wk_free(w, st->seqs_out);
    wk_free(w, st->sent);
    wk_free(w, st->moved_tab);
    wk_free(w, st->evwin);
    w->subs = NULL;
    wk_free(w, st);
}

void
wk_sub_mem(struct wk_worker *w, struct wk_sub_mem *m)
{
    struct wk_subs *st = w->subs;

    memset(m, 0, sizeof(*m));
    /* An item and, at worst (two on a slot), half a chunk. */
    m->item_bytes = sizeof(struct wk_mi) + sizeof(struct wk_chunk) / 2;
    m->cell_bytes = sizeof(struct wk_cell);
    m->entry_bytes = sizeof(struct wk_qent);
    m->sub_bytes = sizeof(struct wk_sub);
    if (st == NULL)
        return;
    m->items_used = st->nitems;
    m->cells_used = st->cells.used;
    m->entries_used = st->ents.used;
    m->retx_cells_used = (uint32_t)((st->rstore.tail - st->rstore.head
                                     + WK_CELL_SIZE - 1) / WK_CELL_SIZE);
    m->subs_used = st->nsubs;
    m->cells_cap = st->cells.cap;
    m->retx_cells_cap = st->rstore.cap / WK_CELL_SIZE;
    m->allocations = st->allocations;
    m->reserved_bytes = st->bytes;
}

/* ------------------------------------------------------------------ */
/* the timer                                                           */
/* ------------------------------------------------------------------ */

static void
wk_sub_on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct wk_subs *st = arg;

    (void)fd;
    (void)what;
    st->timer_set = false;
    wk_clock_update(st->w);
    /* Blocks the broker left to our promise (wk_sub_wake_by) first. */
    if (wk_link_on(st->w->link))
        wk_link_drain(st->w->link);
    wk_sub_run(st->w);
}

/* ------------------------------------------------------------------ */
/* the promise to the broker (worker/link.h)                            */
/* ------------------------------------------------------------------ */

static void
wk_sub_period_add(struct wk_subs *st, uint32_t p)
{
    int free_at = -1;

    for (int i = 0; i < WK_SUB_PERIODS; i++) {
        if (st->per_n[i] != 0 && st->per_ms[i] == p) {
            st->per_n[i]++;
            return;
        }
        if (st->per_n[i] == 0 && free_at < 0)
            free_at = i;
    }
    if (free_at < 0) {
        st->per_over++;
        return;
    }
    st->per_ms[free_at] = p;
    st->per_n[free_at] = 1;
}

static void
wk_sub_period_del(struct wk_subs *st, uint32_t p)
{
    for (int i = 0; i < WK_SUB_PERIODS; i++) {
        if (st->per_n[i] != 0 && st->per_ms[i] == p) {
            st->per_n[i]--;
            return;
        }
    }
    if (st->per_over > 0)
        st->per_over--;
}

/*
 * Every subscription ticks on multiples of its period (wk_sub_phase), so
 * the next tick of any of them is the least next multiple over the
 * periods in use.  The timer is due no later than that: until then no
 * subscription can publish, and the timer's first act is to drain the
 * ring.  A subscription idling towards its keep-alive has its timer far
 * out: then there is no promise, and the first block of a change rings
 * as always (pulling that timer in, wk_sub_ready).
 */
uint64_t
wk_sub_wake_by(void *arg)
{
    struct wk_subs *st = arg;
    uint64_t        now, due;

    if (!st->timer_set || st->per_over != 0 || st->nsubs == 0)
        return 0;
    now = st->w->now_ms;
    due = st->timer_due;
    if (due <= now)
        return 0;
    for (int i = 0; i < WK_SUB_PERIODS; i++) {
        uint64_t p = st->per_ms[i];

        if (st->per_n[i] != 0 && p != 0 && (now / p + 1) * p < due)
            return 0;
    }
    return due;
}

/* The link's time handler: the changes that follow were applied at ms
 * (0: now). */
void
wk_sub_on_time(void *arg, uint64_t ms)
{
    struct wk_subs *st = arg;

    st->rec_ms = ms;
}

/* Arm the libevent timer for the earliest thing due (heap top, sampler). */
static void
wk_sub_arm(struct wk_subs *st)
{
    uint64_t       due = st->sampled_due, now = st->w->now_ms;
    struct timeval tv;

    if (wk_timerheap_next(&st->timers) < due)
        due = wk_timerheap_next(&st->timers);
    if (!st->timer_on || due == UINT64_MAX)
        return;
    if (st->timer_set && st->timer_due == due)
        return;
    due = due > now ? due - now : 0;
    tv.tv_sec = (time_t)(due / 1000);
    tv.tv_usec = (suseconds_t)(due % 1000) * 1000;
    evtimer_add(&st->timer, &tv);
    st->timer_set = true;
    st->timer_due = now + due;
}

/* ------------------------------------------------------------------ */
/* the pool                                                            */
/* ------------------------------------------------------------------ */

struct wk_sub *
wk_sub_at(struct wk_subs *st, uint32_t idx)
{
    return idx < st->subs_hw && st->subs[idx].used ? &st->subs[idx] : NULL;
}

static struct wk_sub *
wk_sub_new(struct wk_subs *st)
{
    struct wk_sub *sub;
    uint32_t       idx, gen, genbits = WK_SUB_ID_BITS - st->sub_bits;

    if (st->nsubs >= st->lim.max_subs
        || wk_budget_take(st->w, SHM_LIM_SUBSCRIPTIONS,
                          st->w->conf->max_subscriptions) != 0)
        return NULL;
    if (st->subs_free != WK_NIL) {
        idx = st->subs_free;
        sub = &st->subs[idx];
        st->subs_free = sub->snext;
    } else {
        idx = st->subs_hw++;
        sub = &st->subs[idx];
        sub->id = 0;
    }
    gen = ((sub->id & ((1u << WK_SUB_ID_BITS) - 1)) >> st->sub_bits) + 1;
    if (gen >= (1u << genbits))
        gen = 1;
    memset(sub, 0, sizeof(*sub));
    sub->id = ((uint32_t)(st->w->slot & 63) << WK_SUB_ID_BITS)
              | (gen << st->sub_bits) | (idx + 1);
    sub->used = 1;
    sub->sess = sub->snext = WK_NIL;
    sub->ihead = sub->rhead = sub->rtail = WK_NIL;
    sub->erhead = sub->ertail = WK_NIL;
    sub->retx = st->retx_all + (size_t)idx * st->lim.max_retx;
    st->nsubs++;
    return sub;
}

/* An id's bits mixed (Fibonacci hashing): ids differ mostly in their
 * low (index) bits and in the slot's top bits. */
static uint32_t
wk_sub_moved_hash(uint32_t id)
{
    return (id * 0x9E3779B1u) >> 7;
}

struct wk_sub *
wk_sub_find(struct wk_subs *st, uint32_t id)
{
    uint32_t low = id & ((1u << st->sub_bits) - 1);
    struct wk_sub *sub;

    if ((id >> WK_SUB_ID_BITS) == (st->w->slot & 63) && low != 0
        && low - 1 < st->subs_hw) {
        sub = &st->subs[low - 1];
        if (sub->used && sub->id == id)
            return sub;
    }
    /* One that came from another worker keeps its id: the table of
     * those, while there are any (worker/sub_roam.c). */
    if (st->nmoved > 0) {
        uint32_t m = st->moved_cap - 1, i = wk_sub_moved_hash(id) & m;

        while (st->moved_tab[i] != UINT32_MAX) {
            sub = &st->subs[st->moved_tab[i]];
            if (sub->id == id)
                return sub;
            i = (i + 1) & m;
        }
    }
    return NULL;
}

void
wk_sub_moved_add(struct wk_subs *st, struct wk_sub *sub)
{
    uint32_t m = st->moved_cap - 1, i = wk_sub_moved_hash(sub->id) & m;

    while (st->moved_tab[i] != UINT32_MAX)
        i = (i + 1) & m;
    st->moved_tab[i] = (uint32_t)(sub - st->subs);
    sub->moved = 1;
    st->nmoved++;
}

/* Backward-shift deletion (as worker/session.c's guest table): no
 * tombstones.  Found by index: two entries may share an id while
 * wk_sub_roam_unpack_sub finds out that one is a duplicate. */
static void
wk_sub_moved_del(struct wk_subs *st, struct wk_sub *sub)
{
    uint32_t m = st->moved_cap - 1, i = wk_sub_moved_hash(sub->id) & m;
    uint32_t idx = (uint32_t)(sub - st->subs), j;

    while (st->moved_tab[i] != idx) {
        if (st->moved_tab[i] == UINT32_MAX)
            return;                     /* not there (cannot happen) */
        i = (i + 1) & m;
    }
    st->moved_tab[i] = UINT32_MAX;
    j = i;
    for (;;) {
        uint32_t h;

        j = (j + 1) & m;
        if (st->moved_tab[j] == UINT32_MAX)
            break;
        h = wk_sub_moved_hash(st->subs[st->moved_tab[j]].id) & m;
        /* Entry j may move to i when its home is not in (i, j]. */
        if ((i < j) ? (h <= i || h > j) : (h <= i && h > j)) {
            st->moved_tab[i] = st->moved_tab[j];
            st->moved_tab[j] = UINT32_MAX;
            i = j;
        }
    }
    sub->moved = 0;
    st->nmoved--;
}

struct wk_sub *
wk_sub_of_session(struct wk_subs *st, struct wk_session *s, uint32_t id)
{
    struct wk_sub *sub = wk_sub_find(st, id);

    if (sub == NULL || s == NULL || sub->sess != s->index)
        return NULL;
    wk_sub_ss(st, s);           /* a reused slot orphans the old ones */
    return sub->sess == s->index ? sub : NULL;
}

void
wk_sub_delete(struct wk_subs *st, struct wk_sub *sub)
{
    uint32_t idx = (uint32_t)(sub - st->subs), id = sub->id;

    while (sub->ihead != WK_NIL)
        wk_mi_delete(st, &st->items[sub->ihead]);
    while (sub->retx_n > 0)
        wk_retx_drop(st, sub, 0);
    wk_timerheap_del(&st->timers, idx);
    wk_sub_ss_unlink(st, sub);
    wk_sub_period_del(st, sub->period);
    if (sub->moved)
        wk_sub_moved_del(st, sub);
    memset(sub, 0, sizeof(*sub));
    sub->id = id;
    sub->snext = st->subs_free;
    st->subs_free = idx;
    st->nsubs--;
    wk_budget_give(st->w, SHM_LIM_SUBSCRIPTIONS);
}

/* ------------------------------------------------------------------ */
/* revisions (Part 4 §5.13.2.2, docs/security.md case 82)            */
/* ------------------------------------------------------------------ */

double
wk_sub_revise_interval(const struct wk_sub_limits *l, double req)
{
    if (isnan(req) || req <= 0 || req < l->min_interval)
        return l->min_interval;
    if (req > WK_SUB_INTERVAL_MAX_MS)
        return WK_SUB_INTERVAL_MAX_MS;
    return req;
}

uint32_t
wk_sub_revise_keepalive(const struct wk_sub_limits *l, uint32_t req)
{
    if (req == 0)
        req = WK_SUB_KEEPALIVE_DEF;
    if (req > l->max_keepalive)
        req = l->max_keepalive;
    return req < 1 ? 1 : req;
}

uint32_t
wk_sub_revise_lifetime(const struct wk_sub_limits *l, double interval,
                       uint32_t keepalive, uint32_t req)
{
    uint64_t cap = l->max_lifetime, min = 3ull * keepalive;
    double   by_time = floor(WK_SUB_LIFETIME_MS_MAX / interval);

    if (by_time < (double)cap)
        cap = by_time < 1 ? 1 : (uint64_t)by_time;
    if (req > cap)
        req = (uint32_t)cap;
    if (req < min)
        req = (uint32_t)(min > UINT32_MAX ? UINT32_MAX : min);
    return req;
}

uint32_t
wk_sub_revise_notifs(const struct wk_sub_limits *l, uint32_t req)
{
    return req == 0 || req > l->max_notifs ? l->max_notifs : req;
}

/* ------------------------------------------------------------------ */
/* ticks and scheduling                                                 */
/* ------------------------------------------------------------------ */

/*
 * Tick 0 of a new timer: now rounded down to a multiple of the period, so
 * subscriptions of one interval expire together, in one loop iteration
 * (one wake-up for all, their responses in one flush).  The first tick
 * then comes a little less than a period after creation.
 */
static uint64_t
wk_sub_phase(uint64_t now, uint32_t period)
{
    return now - now % period;
}

/* The number of the last tick at or before now. */
static uint64_t
wk_sub_tick_now(const struct wk_sub *sub, uint64_t now)
{
    return now > sub->t0 ? (now - sub->t0) / sub->period : 0;
}

/* Account the ticks up to now (a NORMAL subscription idles through them). */
static void
wk_sub_sync(struct wk_subs *st, struct wk_sub *sub)
{
    uint64_t k = wk_sub_tick_now(sub, st->w->now_ms);

    if (k > sub->k_done) {
        if (sub->state == WK_SUB_NORMAL) {
            uint64_t idle = sub->idle + (k - sub->k_done);

            sub->idle = idle > UINT32_MAX ? UINT32_MAX : (uint32_t)idle;
        }
        sub->k_done = k;
    }
}

/* When the timer must look at sub next (see the file comment). */
static void
wk_sub_schedule(struct wk_subs *st, struct wk_sub *sub)
{
    uint64_t k;

    if (sub->state == WK_SUB_LATE) {
        k = sub->life_left > 0 ? sub->life_left : 1;
    } else if ((sub->enabled && sub->nqueued > 0) || !sub->sent
               || sub->hot) {
        k = 1;
    } else {
        k = sub->keepalive > sub->idle ? sub->keepalive - sub->idle : 1;
    }
    sub->due = sub->t0 + (sub->k_done + k) * sub->period;
    wk_timerheap_set(&st->timers, (uint32_t)(sub - st->subs), sub->due);
    wk_sub_arm(st);
}

void
wk_sub_ready(struct wk_subs *st, struct wk_sub *sub)
{
    uint64_t next;

    if (sub->state != WK_SUB_NORMAL || !sub->enabled)
        return;
    /* The next tick after the change (now, or when the broker applied a
     * block drained late), not one of those the timer slept over. */
    next = sub->t0 + (wk_sub_tick_now(sub, WK_SUB_NOW(st)) + 1) * sub->period;
    if (next < sub->due) {
        sub->due = next;
        wk_timerheap_set(&st->timers, (uint32_t)(sub - st->subs),
                         sub->due);
        wk_sub_arm(st);
    }
}

void
wk_sub_touch(struct wk_subs *st, struct wk_sub *sub)
{
    wk_sub_sync(st, sub);
    sub->life_left = sub->lifetime;
    wk_sub_schedule(st, sub);
}

static uint32_t
wk_sub_next_seq(const struct wk_sub *sub)
{
    return sub->seq == UINT32_MAX ? 1 : sub->seq + 1;   /* 0 is skipped */
}

/* One or more ticks of sub's timer passed. */
static void
wk_sub_expire(struct wk_subs *st, struct wk_sub *sub)
{
    uint64_t k = wk_sub_tick_now(sub, st->w->now_ms), n;

    if (sub->sess != WK_NIL && !wk_sub_ss_alive(st, sub->sess))
        wk_sub_ss_reset(st, &st->ss[sub->sess]);
    if (k <= sub->k_done) {
        wk_sub_schedule(st, sub);
        return;
    }
    n = k - sub->k_done;
    sub->k_done = k;
    if (sub->sess == WK_NIL)
        sub->state = WK_SUB_LATE;           /* nobody can publish it */
    if (sub->state == WK_SUB_NORMAL) {
        uint64_t idle = sub->idle + n;

        sub->idle = idle > UINT32_MAX ? UINT32_MAX : (uint32_t)idle;
        if ((sub->enabled && sub->nqueued > 0) || !sub->sent
            || sub->idle >= sub->keepalive) {
            sub->state = WK_SUB_LATE;
            sub->late_since = st->w->now_ms;
            wk_sub_touch_ss(st, &st->ss[sub->sess]);
            wk_sub_schedule(st, sub);
            return;
        }
        if (sub->hot) {
            /* The tick after a message with notifications, and nothing
             * came: idle from now on (towards the keep-alive). */
            sub->hot = 0;
            wk_sub_schedule(st, sub);
            return;
        }
    }
    /* Nothing sent at this expiry: the lifetime runs down. */
    sub->life_left = n >= sub->life_left ? 0 : sub->life_left - (uint32_t)n;
    if (sub->life_left == 0) {
        wk_sub_timeout(st, sub);
        return;
    }
    wk_sub_schedule(st, sub);
}

/* The lifetime ran out (§5.13.1.2): tell the session, delete. */
static void
wk_sub_timeout(struct wk_subs *st, struct wk_sub *sub)
{
    if (sub->sess != WK_NIL) {
        struct wk_subsess *e = &st->ss[sub->sess];

        wk_sub_notice(st, e, sub->id, wk_sub_next_seq(sub), UA_BAD_TIMEOUT);
        wk_sub_touch_ss(st, e);
    }
    wk_sub_delete(st, sub);
}

unsigned
wk_sub_run(struct wk_worker *w)
{
    struct wk_subs *st = w->subs;
    unsigned        n = 0;

    if (st == NULL)
        return 0;
    while (wk_timerheap_next(&st->timers) <= w->now_ms) {
        wk_sub_expire(st, &st->subs[wk_timerheap_top(&st->timers)]);
        n++;
    }
    wk_mi_sample_due(st);
    if (st->dropped != st->dropped_shown && w->row != NULL) {
        /* /stats notif_dropped: the pools ran out (rare; a store then). */
        atomic_store_explicit(&w->row->notif_dropped, st->dropped,
                              memory_order_relaxed);
        st->dropped_shown = st->dropped;
    }
    while (st->serve_head != WK_NIL) {
        struct wk_subsess *e = &st->ss[st->serve_head];

        st->serve_head = e->serve_next;
        e->serve_next = WK_NIL;
        e->touched = 0;
        if (e->live)
            wk_sub_serve(st, e);
    }
    wk_sub_arm(st);
    return n;
}

/* ------------------------------------------------------------------ */
/* sessions                                                            */
/* ------------------------------------------------------------------ */

struct wk_subsess *
wk_sub_ss(struct wk_subs *st, struct wk_session *s)
{
    struct wk_subsess *e = &st->ss[s->index];

    if (!e->live || memcmp(&e->token, &s->token, sizeof(e->token)) != 0) {
        wk_sub_ss_reset(st, e);
        e->token = s->token;
        e->user = s->user;
        e->live = 1;
    }
    return e;
}

/* Is the session ss[idx] was made for still there? */
static bool
wk_sub_ss_alive(struct wk_subs *st, uint32_t idx)
{
    const struct wk_subsess *e = &st->ss[idx];
    const struct wk_session *s;

    if (!e->live || st->w->sessions == NULL || idx >= st->nss)
        return false;
    s = &st->w->sessions[idx];
    return s->used && memcmp(&e->token, &s->token, sizeof(e->token)) == 0;
}

/* The session of e is gone: its subscriptions become orphans, its
 * Publish requests are forgotten (nobody can be answered any more). */
static void
wk_sub_ss_reset(struct wk_subs *st, struct wk_subsess *e)
{
    while (e->shead != WK_NIL) {
        struct wk_sub *sub = &st->subs[e->shead];

        e->shead = sub->snext;
        sub->snext = WK_NIL;
        sub->sess = WK_NIL;
        sub->state = WK_SUB_LATE;
        wk_sub_schedule(st, sub);
    }
    e->nsubs = 0;
    e->qhead = e->qlen = 0;
    e->nnotices = 0;
    e->live = 0;
    memset(&e->token, 0, sizeof(e->token));
}

static void
wk_sub_ss_link(struct wk_subs *st, struct wk_subsess *e, struct wk_sub *sub)
{
    sub->sess = (uint32_t)(e - st->ss);
    sub->snext = e->shead;
    e->shead = (uint32_t)(sub - st->subs);
    e->nsubs++;
    wk_park_touch_index(st->w, sub->sess);  /* its structure changed */
}

static void
wk_sub_ss_unlink(struct wk_subs *st, struct wk_sub *sub)
{
    struct wk_subsess *e;
    uint32_t          *p, idx = (uint32_t)(sub - st->subs);

    if (sub->sess == WK_NIL)
        return;
    wk_park_touch_index(st->w, sub->sess);  /* its structure changed */
    e = &st->ss[sub->sess];
    for (p = &e->shead; *p != WK_NIL; p = &st->subs[*p].snext)
        if (*p == idx) {
            *p = sub->snext;
            e->nsubs--;
            break;
        }
    sub->snext = WK_NIL;
    sub->sess = WK_NIL;
}

/* Serve e at the end of this run. */
static void
wk_sub_touch_ss(struct wk_subs *st, struct wk_subsess *e)
{
    if (e->touched)
        return;
    e->touched = 1;
    e->serve_next = st->serve_head;
    st->serve_head = (uint32_t)(e - st->ss);
}

void
wk_sub_session_closed(void *arg, struct wk_session *s, bool delete_subs)
{
    struct wk_worker  *w = arg;
    struct wk_subs    *st = w->subs;
    struct wk_subsess *e;
    struct wk_pubreq   pr;

    if (st == NULL || s == NULL || s->index >= st->nss)
        return;
    e = &st->ss[s->index];
    if (!e->live || memcmp(&e->token, &s->token, sizeof(e->token)) != 0)
        return;
    while (wk_sub_pub_take(st, e, &pr))
        wk_sub_pub_fail(st, &pr, UA_BAD_SESSION_CLOSED);
    if (delete_subs)
        while (e->shead != WK_NIL)
            wk_sub_delete(st, &st->subs[e->shead]);
    wk_sub_ss_reset(st, e);
    wk_sub_arm(st);
}

/* ------------------------------------------------------------------ */
/* Publish requests                                                    */
/* ------------------------------------------------------------------ */

/* The oldest queued request whose connection is still there. */
static bool
wk_sub_pub_take(struct wk_subs *st, struct wk_subsess *e,
                struct wk_pubreq *out)
{
    while (e->qlen > 0) {
        struct wk_pubreq *pr = &e->pub[e->qhead];

        e->qhead = (e->qhead + 1) % st->lim.max_publish;
        e->qlen--;
        if (wk_reply_alive(st->w, &pr->ref)) {
            memcpy(out, pr, offsetof(struct wk_pubreq, acks)
                                + (pr->nacks + 3) / 4);
            return true;
        }
        /* Its connection is gone: nothing can carry an answer. */
    }
    return false;
}

/* Answer pr with a ServiceFault. */
static void
wk_sub_pub_fail(struct wk_subs *st, struct wk_pubreq *pr, ua_status s)
{
    struct ua_publish_response resp;

    memset(&resp, 0, sizeof(resp));
    resp.response_header.service_result = s;
    (void)wk_reply_send(st->w, &pr->ref,
                          &ua_types[UA_TYPE_PUBLISHRESPONSE], &resp);
}

static void
wk_sub_notice(struct wk_subs *st, struct wk_subsess *e, uint32_t sub_id,
              uint32_t seq, ua_status status)
{
    (void)st;
    if (e->nnotices == WK_SUB_NOTICES) {
        memmove(&e->notices[0], &e->notices[1],
                (WK_SUB_NOTICES - 1) * sizeof(e->notices[0]));
        e->nnotices--;
    }
    e->notices[e->nnotices].sub_id = sub_id;
    e->notices[e->nnotices].seq = seq;
    e->notices[e->nnotices].status = status;
    e->nnotices++;
}

/*
 * Hand e's queued Publish requests to what waits: status changes first,
 * then LATE subscriptions by priority (the highest, then the one late
 * longest).  A subscription with more to send stays LATE.
 */
static void
wk_sub_serve(struct wk_subs *st, struct wk_subsess *e)
{
    struct wk_pubreq pr;

    while (e->qlen > 0) {
        struct wk_sub *best = NULL;

        if (e->nnotices > 0) {
            if (!wk_sub_pub_take(st, e, &pr))
                break;
            wk_sub_send_notice(st, e, &pr);
            continue;
        }
        for (uint32_t i = e->shead; i != WK_NIL; i = st->subs[i].snext) {
            struct wk_sub *sub = &st->subs[i];

            if (sub->state != WK_SUB_LATE)
                continue;
            if (best == NULL || sub->priority > best->priority
                || (sub->priority == best->priority
                    && sub->late_since < best->late_since))
                best = sub;
        }
        if (best == NULL || !wk_sub_pub_take(st, e, &pr))
            break;
        wk_sub_send(st, e, best, &pr);
        if (best->enabled && best->nqueued > 0) {
            best->late_since = st->w->now_ms;   /* fair among equals */
        } else {
            best->state = WK_SUB_NORMAL;
        }
        wk_sub_schedule(st, best);
    }
}

static void
wk_sub_respond(struct wk_subs *st, struct wk_pubreq *pr,
               struct ua_publish_response *resp)
{
    static const ua_status codes[4] = {
        UA_GOOD, UA_BAD_SUBSCRIPTION_ID_INVALID,
        UA_BAD_SEQUENCE_NUMBER_UNKNOWN, UA_BAD_INTERNAL_ERROR
    };

    for (uint32_t k = 0; k < pr->nacks; k++)
        st->acks_out[k] = codes[(pr->acks[k / 4] >> (2 * (k % 4))) & 3];
    resp->n_results = (int32_t)pr->nacks;
    resp->results = pr->nacks > 0 ? st->acks_out : NULL;
    resp->n_diagnostic_infos = 0;
    (void)wk_reply_send(st->w, &pr->ref,
                          &ua_types[UA_TYPE_PUBLISHRESPONSE], resp);
}

/* A NotificationMessage (or a keep-alive) of sub on pr. */
static void
wk_sub_send(struct wk_subs *st, struct wk_subsess *e, struct wk_sub *sub,
            struct wk_pubreq *pr)
{
    struct ua_publish_response resp;
    struct ua_extobj           eo;
    struct wk_session         *s = &st->w->sessions[e - st->ss];
    struct wk_park_msg         pm;
    size_t                     cap = st->out_cap, len = 0;
    uint32_t                   type =
        UA_NS0ID_DATACHANGENOTIFICATION_ENCODING_DEFAULTBINARY;

    memset(&resp, 0, sizeof(resp));
    resp.subscription_id = sub->id;
    resp.notification_message.publish_time = st->w->now_dt;
    if (sub->enabled && sub->nqueued > 0) {
        if (s->max_response > WK_SUB_BODY_SLACK * 2
            && s->max_response - WK_SUB_BODY_SLACK < cap)
            cap = s->max_response - WK_SUB_BODY_SLACK;
        if (cap > WK_SUB_BODY_SLACK * 2)
            cap -= WK_SUB_BODY_SLACK;
        /* One kind per message (the retransmission store keeps one body
         * and its type): data changes and events take turns when both
         * wait. */
        if (sub->nevq > 0
            && (sub->nevq == sub->nqueued || sub->ev_next)) {
            type = UA_NS0ID_EVENTNOTIFICATIONLIST_ENCODING_DEFAULTBINARY;
            st->nsent = 0;
            wk_mi_emit_events(st, sub, sub->max_notifs, cap, &len);
            sub->ev_next = 0;
        } else {
            wk_mi_emit(st, sub, sub->max_notifs, cap, &len);
            sub->ev_next = sub->nevq > 0;
        }
        sub->seq = wk_sub_next_seq(sub);
        /* Kept here and in the park, and the park's progress told,
         * before the response goes out (worker/park.h). */
        pm.kept = wk_park_keep(st->w, s, st->out, (uint32_t)len);
        if (!wk_retx_add(st, sub, sub->seq, st->w->now_dt, type, st->out,
                         (uint32_t)len, pm.kept))
            pm.kept = WK_PARK_NO_KEPT;
        if (st->w->park != NULL) {
            pm.sub_id = sub->id;
            pm.seq = sub->seq;
            pm.type = type;
            pm.len = (uint32_t)len;
            pm.time = st->w->now_dt;
            pm.body = st->out;
            pm.runs = st->sent;
            pm.nruns = st->nsent;
            wk_park_sent(st->w, s, &pm);
        }
        memset(&eo, 0, sizeof(eo));
        eo.type_id = ua_nodeid_num(0, type);
        eo.encoding = UA_EO_BYTES;
        eo.body.len = (int32_t)len;
        eo.body.data = st->out;
        resp.notification_message.sequence_number = sub->seq;
        resp.notification_message.n_notification_data = 1;
        resp.notification_message.notification_data = &eo;
        resp.more_notifications = sub->enabled && sub->nqueued > 0;
        sub->hot = 1;
    } else {
        /* Keep-alive: no data, the sequence number that comes next. */
        sub->hot = 0;
        resp.notification_message.sequence_number = wk_sub_next_seq(sub);
        resp.notification_message.n_notification_data = 0;
    }
    resp.n_available_sequence_numbers = wk_retx_avail(st, sub, st->seqs_out);
    resp.available_sequence_numbers = st->seqs_out;
    sub->sent = 1;
    wk_sub_sync(st, sub);
    sub->idle = 0;
    sub->life_left = sub->lifetime;
    wk_sub_respond(st, pr, &resp);
}

/* A StatusChangeNotification (Part 4 §7.20.4) from e's notices. */
static void
wk_sub_send_notice(struct wk_subs *st, struct wk_subsess *e,
                   struct wk_pubreq *pr)
{
    struct ua_publish_response resp;
    struct ua_extobj           eo;
    struct wk_sub_notice       n = e->notices[0];
    uint8_t                    body[5];

    memmove(&e->notices[0], &e->notices[1],
            (WK_SUB_NOTICES - 1) * sizeof(e->notices[0]));
    e->nnotices--;
    memcpy(body, &n.status, 4);
    body[4] = 0;                    /* DiagnosticInfo: empty mask */
    memset(&eo, 0, sizeof(eo));
    eo.type_id = ua_nodeid_num(0,
        UA_NS0ID_STATUSCHANGENOTIFICATION_ENCODING_DEFAULTBINARY);
    eo.encoding = UA_EO_BYTES;
    eo.body.len = (int32_t)sizeof(body);
    eo.body.data = body;
    memset(&resp, 0, sizeof(resp));
    resp.subscription_id = n.sub_id;
    resp.notification_message.sequence_number = n.seq;
    resp.notification_message.publish_time = st->w->now_dt;
    resp.notification_message.n_notification_data = 1;
    resp.notification_message.notification_data = &eo;
    resp.n_available_sequence_numbers = 0;
    wk_sub_respond(st, pr, &resp);
}

/* ------------------------------------------------------------------ */
/* what the services change (worker/svc_sub.c)                         */
/* ------------------------------------------------------------------ */

struct wk_sub *
wk_sub_open(struct wk_subs *st, struct wk_subsess *e)
{
    if (e->nsubs >= st->lim.max_subs_per_session)
        return NULL;
    return wk_sub_new(st);
}

void
wk_sub_set_interval(struct wk_subs *st, struct wk_sub *sub, double iv)
{
    if (sub->period != 0)
        wk_sub_sync(st, sub);
    if (iv == sub->interval)
        return;
    /* A new timer: ticks count from now. */
    if (sub->period != 0)
        wk_sub_period_del(st, sub->period);
    sub->interval = iv;
    sub->period = (uint32_t)ceil(iv);
    wk_sub_period_add(st, sub->period);
    sub->t0 = wk_sub_phase(st->w->now_ms, sub->period);
    sub->k_done = 0;
}

void
wk_sub_start(struct wk_subs *st, struct wk_subsess *e, struct wk_sub *sub)
{
    sub->life_left = sub->lifetime;
    sub->state = WK_SUB_NORMAL;
    wk_sub_ss_link(st, e, sub);
    wk_sub_schedule(st, sub);
}

void
wk_sub_set_enabled(struct wk_subs *st, struct wk_sub *sub, bool enabled)
{
    sub->enabled = enabled;
    wk_sub_touch(st, sub);
    if (enabled && sub->nqueued > 0)
        wk_sub_ready(st, sub);
}

/* After deletions: a session left with nothing to publish answers its
 * waiting Publish requests BadNoSubscription (Part 4 §5.13.5). */
void
wk_sub_deleted_check(struct wk_subs *st, struct wk_subsess *e)
{
    struct wk_pubreq pr;

    if (e->nsubs == 0 && e->nnotices == 0)
        while (wk_sub_pub_take(st, e, &pr))
            wk_sub_pub_fail(st, &pr, UA_BAD_NO_SUBSCRIPTION);
    wk_sub_arm(st);
}

struct wk_pubreq *
wk_sub_pub_slot(struct wk_subs *st, struct wk_subsess *e)
{
    struct wk_pubreq old;

    /* Full: the oldest waiting request makes room (docs/security.md
     * case 78). */
    if (e->qlen == st->lim.max_publish) {
        old = e->pub[e->qhead];
        e->qhead = (e->qhead + 1) % st->lim.max_publish;
        e->qlen--;
        wk_sub_pub_fail(st, &old, UA_BAD_TOO_MANY_PUBLISH_REQUESTS);
    }
    return &e->pub[(e->qhead + e->qlen) % st->lim.max_publish];
}

void
wk_sub_pub_push(struct wk_subs *st, struct wk_subsess *e)
{
    e->qlen++;
    wk_sub_serve(st, e);
    wk_sub_arm(st);
}

uint8_t
wk_sub_ack(struct wk_subs *st, struct wk_subsess *e, uint32_t sub_id,
           uint32_t seq)
{
    struct wk_sub *sub = wk_sub_find(st, sub_id);
    int            k;

    if (sub == NULL || sub->sess != (uint32_t)(e - st->ss))
        return WK_ACK_SUB;
    k = wk_retx_find(st, sub, seq);
    if (k < 0)
        return WK_ACK_SEQ;
    wk_retx_drop(st, sub, (uint32_t)k);
    return WK_ACK_GOOD;
}

ua_status
wk_sub_move(struct wk_subs *st, struct wk_sub *sub, struct wk_session *s)
{
    struct wk_subsess *e;

    if (sub->sess != WK_NIL && !wk_sub_ss_alive(st, sub->sess))
        wk_sub_ss_reset(st, &st->ss[sub->sess]);
    e = wk_sub_ss(st, s);
    if (sub->sess == s->index)
        return UA_GOOD;
    if (e->nsubs >= st->lim.max_subs_per_session)
        return UA_BAD_TOO_MANY_SUBSCRIPTIONS;
    if (sub->sess != WK_NIL) {
        struct wk_subsess *old = &st->ss[sub->sess];

        wk_sub_ss_unlink(st, sub);
        wk_sub_notice(st, old, sub->id, wk_sub_next_seq(sub),
                      UA_GOOD_SUBSCRIPTION_TRANSFERRED);
        wk_sub_serve(st, old);
        wk_sub_deleted_check(st, old);
    }
    wk_sub_ss_link(st, e, sub);
    return UA_GOOD;
}

void
wk_sub_detach(struct wk_subs *st, struct wk_sub *sub)
{
    wk_sub_ss_unlink(st, sub);
    sub->state = WK_SUB_LATE;
    wk_sub_schedule(st, sub);
}

void
wk_sub_handed(struct wk_subs *st, struct wk_sub *sub, uint32_t sess,
              const struct ua_guid *token, bool adopted)
{
    struct wk_subsess *e = sess < st->nss ? &st->ss[sess] : NULL;
    bool               alive = e != NULL && wk_sub_ss_alive(st, sess)
                               && memcmp(&e->token, token,
                                         sizeof(*token)) == 0;

    if (adopted) {
        /* Part 4 §5.13.7: the old session learns where it went. */
        if (alive) {
            wk_sub_notice(st, e, sub->id, wk_sub_next_seq(sub),
                          UA_GOOD_SUBSCRIPTION_TRANSFERRED);
            wk_sub_serve(st, e);
        }
        wk_sub_delete(st, sub);
        if (alive)
            wk_sub_deleted_check(st, e);
        return;
    }
    if (alive && sub->sess == WK_NIL
        && e->nsubs < st->lim.max_subs_per_session) {
        wk_sub_ss_link(st, e, sub);
        sub->state = WK_SUB_NORMAL;
        wk_sub_schedule(st, sub);
    }
}

void
wk_sub_kick(struct wk_subs *st, struct wk_sub *sub)
{
    if (sub->state == WK_SUB_LATE && sub->sess != WK_NIL)
        wk_sub_serve(st, &st->ss[sub->sess]);
    wk_sub_arm(st);
}
