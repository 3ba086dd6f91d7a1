/*
 * worker/retx.c: the retransmission queues (Part 4 §5.13.1.1: the
 * NotificationMessages a subscription keeps for Republish until they are
 * acknowledged) and the one store their bodies live in.
 *
 * Each subscription keeps at most lim.max_retx messages, oldest first
 * (struct wk_sub.retx[], a ring of struct wk_retx); their bodies are kept
 * in the worker's retransmission store, one byte ring (struct wk_rstore,
 * drawn in worker/sub_int.h): a message is copied in with one memcpy and
 * let go in O(1).  When a queue is full its oldest message goes; when the
 * store is full the worker's oldest message goes, whoever owns it
 * (Republish of it is then BadMessageNotAvailable).
 *
 * A parked session's kept message is copied into the park's kept ring
 * (worker/park.h) by the sender, and that copy is the body: the store
 * takes the record's bytes as for any message (the same budget, the same
 * evictions), but the body is not copied a second time into them
 * (wk_retx_body reads it from the park, struct wk_retx.park names it).
 * The park is told when the message goes (wk_park_dropped), after it
 * left the queue; only then does the park let its copy go.
 *
 * Single-threaded, on the worker's loop.  No allocation (the store is
 * allocated by wk_sub_init).
 */
#include <string.h>

#include "park.h"
#include "sub_int.h"

static struct wk_rmsg *wk_retx_msg(struct wk_subs *st, uint64_t at);
static void wk_retx_gc(struct wk_subs *st);
static bool wk_retx_evict(struct wk_subs *st);
static int64_t wk_retx_alloc(struct wk_subs *st, uint32_t need);

/* The store's size: lim->rcells units of a cell (the budget of
 * WK_SUB_RCELLS_PER_MSG per kept message), at most 2 GiB (uint32_t
 * offsets). */
uint32_t
wk_retx_store_cap(const struct wk_sub_limits *l)
{
    uint64_t cap = (uint64_t)l->rcells * WK_CELL_SIZE;

    if (cap > (UINT64_C(1) << 31))
        cap = UINT64_C(1) << 31;
    cap &= ~(uint64_t)(WK_RMSG_ALIGN - 1);
    return cap < 4 * WK_RMSG_ALIGN ? 4 * WK_RMSG_ALIGN : (uint32_t)cap;
}

/* The record at free-running offset at. */
static struct wk_rmsg *
wk_retx_msg(struct wk_subs *st, uint64_t at)
{
    return (struct wk_rmsg *)(void *)(st->rstore.buf
                                      + at % st->rstore.cap);
}

/* Move head over the records let go. */
static void
wk_retx_gc(struct wk_subs *st)
{
    struct wk_rstore *rs = &st->rstore;

    while (rs->head != rs->tail) {
        const struct wk_rmsg *m = wk_retx_msg(st, rs->head);

        if (m->sub != WK_NIL)
            break;
        rs->head += m->size;
    }
}

/* Drop the oldest message kept (its subscription's oldest); false when
 * there is none. */
static bool
wk_retx_evict(struct wk_subs *st)
{
    struct wk_rmsg *m;
    struct wk_sub  *sub;
    int             k;

    wk_retx_gc(st);
    if (st->rstore.head == st->rstore.tail)
        return false;
    m = wk_retx_msg(st, st->rstore.head);
    sub = m->sub < st->lim.max_subs ? &st->subs[m->sub] : NULL;
    k = sub != NULL && sub->used ? wk_retx_find(st, sub, m->seq) : -1;
    if (k >= 0
        && sub->retx[(sub->retx_head + (uint32_t)k) % st->lim.max_retx].off
               == (uint32_t)(st->rstore.head % st->rstore.cap))
        wk_retx_drop(st, sub, (uint32_t)k);
    else
        m->sub = WK_NIL;        /* NEVER: a record nobody holds */
    wk_retx_gc(st);
    return true;
}

/*
 * Room for a record of need bytes (a multiple of WK_RMSG_ALIGN) at the
 * tail, dropping the oldest messages as needed: its offset in buf, or -1
 * when it cannot fit at all.  The caller writes it and moves tail.
 */
static int64_t
wk_retx_alloc(struct wk_subs *st, uint32_t need)
{
    struct wk_rstore *rs = &st->rstore;

    if (need > rs->cap)
        return -1;
    for (;;) {
        uint32_t at = (uint32_t)(rs->tail % rs->cap);
        uint32_t to_end = rs->cap - at;
        uint64_t room = rs->cap - (rs->tail - rs->head);

        if (to_end < need) {
            /* The end of the buffer is too short: skip it. */
            if (room >= to_end) {
                struct wk_rmsg *m = wk_retx_msg(st, rs->tail);

                m->size = to_end;
                m->sub = WK_NIL;
                m->seq = 0;
                m->len = 0;
                rs->tail += to_end;
                wk_retx_gc(st);
                continue;
            }
        } else if (room >= need) {
            return at;
        }
        if (!wk_retx_evict(st))
            return -1;
    }
}

/* Keep a sent message; the oldest goes when the queue is full, and the
 * worker's oldest (any subscription's) when the store is (Republish of it
 * is then BadMessageNotAvailable). */
bool
wk_retx_add(struct wk_subs *st, struct wk_sub *sub, uint32_t seq,
            int64_t time, uint32_t type, const uint8_t *body,
            uint32_t len, uint32_t park)
{
    struct wk_retx *r;
    struct wk_rmsg *m;
    uint64_t        need64 = ((uint64_t)len + sizeof(*m) + WK_RMSG_ALIGN
                              - 1) & ~(uint64_t)(WK_RMSG_ALIGN - 1);
    int64_t         at;

    if (st->lim.max_retx == 0) {
        wk_park_dropped(st->w, WK_NIL, sub->id, seq, park);
        return false;
    }
    if (sub->retx_n == st->lim.max_retx)
        wk_retx_drop(st, sub, 0);
    at = need64 <= st->rstore.cap
             ? wk_retx_alloc(st, (uint32_t)need64) : -1;
    if (at < 0) {
        wk_park_dropped(st->w, WK_NIL, sub->id, seq, park);
        return false;               /* cannot keep this one */
    }
    m = (struct wk_rmsg *)(void *)(st->rstore.buf + at);
    m->size = (uint32_t)need64;
    m->sub = (uint32_t)(sub - st->subs);
    m->seq = seq;
    m->len = len;
    if (len > 0 && park == WK_PARK_NO_KEPT)
        memcpy(m + 1, body, len);   /* else the park's copy is the body */
    st->rstore.tail += need64;
    r = &sub->retx[(sub->retx_head + sub->retx_n) % st->lim.max_retx];
    r->seq = seq;
    r->len = len;
    r->off = (uint32_t)at;
    r->type = type;
    r->park = park;
    r->time = time;
    sub->retx_n++;
    return true;
}

/* The position of seq in sub's queue (0 = oldest), or -1. */
int
wk_retx_find(const struct wk_subs *st, const struct wk_sub *sub,
                 uint32_t seq)
{
    for (uint32_t k = 0; k < sub->retx_n; k++)
        if (sub->retx[(sub->retx_head + k) % st->lim.max_retx].seq == seq)
            return (int)k;
    return -1;
}

void
wk_retx_drop(struct wk_subs *st, struct wk_sub *sub, uint32_t k)
{
    uint32_t max = st->lim.max_retx;
    uint32_t seq = sub->retx[(sub->retx_head + k) % max].seq;
    uint32_t park = sub->retx[(sub->retx_head + k) % max].park;

    ((struct wk_rmsg *)(void *)(st->rstore.buf
        + sub->retx[(sub->retx_head + k) % max].off))->sub = WK_NIL;
    if (k == 0) {
        sub->retx_head = (uint16_t)((sub->retx_head + 1) % max);
    } else {
        for (uint32_t j = k; j + 1 < sub->retx_n; j++)
            sub->retx[(sub->retx_head + j) % max]
                = sub->retx[(sub->retx_head + j + 1) % max];
    }
    sub->retx_n--;
    wk_retx_gc(st);
    wk_park_dropped(st->w, sub->sess, sub->id, seq, park);
}

/* The sequence numbers sub keeps for Republish, oldest first. */
int32_t
wk_retx_avail(struct wk_subs *st, const struct wk_sub *sub, uint32_t *out)
{
    for (uint32_t k = 0; k < sub->retx_n; k++)
        out[k] = sub->retx[(sub->retx_head + k) % st->lim.max_retx].seq;
    return (int32_t)sub->retx_n;
}


const uint8_t *
wk_retx_body(const struct wk_subs *st, const struct wk_retx *r)
{
    if (r->park != WK_PARK_NO_KEPT)
        return wk_park_kept_body(st->w, r->park);
    return (const uint8_t *)((const struct wk_rmsg *)(const void *)
                             (st->rstore.buf + r->off) + 1);
}
