/*
 * worker/link.c: the worker's end of the link to the broker
 * (worker/link.h; record formats in shm/fanout.h).
 *
 * One idle hook (worker/loop.h) does everything, every loop iteration,
 * before the loop may block:
 *
 *   1. push the outbox (request records not pushed yet), in order;
 *   2. lost = lost_seq (acquire); drain the notification ring: open each
 *      block, hand its records to the notify handlers (records of slots
 *      we have no interest bit on are skipped), release it at once;
 *   3. if the ring is empty now and lost moved: take our lost marks and
 *      report each as an overflow (after step 2, so no older block is
 *      still queued for us: shm/fanout.h);
 *   4. drain the reply ring: each record to the handler of its kind;
 *   5. ring the broker if we pushed and it sleeps (shm_ring_needs_bell);
 *   6. mark both inbound rings sleeping (shm_ring_sleep_prepare): block
 *      only if both stayed empty.  Linger (fanout.linger_us): while
 *      two or more requests are with the broker (wk_link_inflight) and
 *      this iteration pushed requests or took replies, the reply ring is
 *      not marked; the loop blocks at most linger_us (a timerfd) and the
 *      broker's replies come without a doorbell.  An iteration that moved
 *      nothing marks it as before.  The notification ring is marked with
 *      a promise: the time the publishing timer wakes us anyway (the
 *      wake_by handler); the broker rings for blocks alone only after it.
 *
 * After the iteration the wake function clears the marks.  The doorbell's
 * fd sits in the loop; its callback only drains the doorbell
 * (docs/architecture.md §3: drain the latch, then look at the rings,
 * which the next hook call does).
 *
 * Clock: each block's time goes to the time handler capped at
 * w->now_ms (a block stamped in the future by a broker's clock is taken
 * as now), and sampling intervals count from it.  w->now_ms is read by
 * the callbacks that begin a loop iteration (worker/loop.h) and by the
 * publishing timer, not by the doorbell's callback nor by this hook, so
 * on a worker woken by doorbells alone (no client traffic on it, e.g. a
 * subscriber whose connection dropped) it is the time of its last client
 * callback, up to a second old.  A block newer than it is the sign: the
 * drain reads the clock then (at most once per millisecond of blocks;
 * docs/design-notes.md D85).  Capped at a stale clock, every block got
 * that one time and each value replaced the one before it as if inside
 * one sampling interval.
 *
 * Memory: everything is allocated in wk_link_init() (the outbox, the pop
 * buffers); nothing per record or per block.
 */
#include "link.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shm/value.h"

#define WK_LINK_PREFAULT_S 1        /* the pool mapped, after the start */
#define WK_LINK_CONNECT_MS 5000     /* the broker bound the bell already */
#define WK_LINK_RETRY_US   1000     /* outbox waiting for ring room */
#define WK_LINK_IN_SLOTS   512      /* reply-ring slots popped at once */

static void wk_link_on_bell(evutil_socket_t fd, short what, void *arg);
static void wk_link_on_retry(evutil_socket_t fd, short what, void *arg);
static void wk_link_on_prefault(evutil_socket_t fd, short what, void *arg);
static void wk_link_on_linger(evutil_socket_t fd, short what, void *arg);
static void wk_link_linger_arm(struct wk_link *l, uint32_t us);
static bool wk_link_prepare(struct wk_worker *w, void *arg);
static void wk_link_wake(struct wk_worker *w, void *arg);
static bool wk_link_drain_notif(struct wk_link *l);
static void wk_link_lost(struct wk_link *l);
static bool wk_link_drain_replies(struct wk_link *l);
static inline void wk_link_count(_Atomic uint64_t *c, uint64_t n);

/* ------------------------------------------------------------ helpers */

static inline void
wk_link_count(_Atomic uint64_t *c, uint64_t n)
{
    /* Single writer (this worker); the broker reads relaxed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

/* ------------------------------------------------------------ init */

int
wk_link_init(struct wk_link *l, struct wk_worker *w, struct wk_loop *lp)
{
    const struct shm_config *c = w->conf;
    char                     name[24];
    int                      rc;

    memset(l, 0, sizeof(*l));
    l->w = w;
    l->linger_fd = -1;
    l->bell.sock = -1;
    l->bell.fd = -1;
    l->out.open_off = UINT32_MAX;
    rc = shm_ring_locate(&l->req, &w->seg, w->slot, SHM_RING_REQ);
    if (rc == -ENOENT)
        return 0;                       /* no rings: no link */
    if (rc != 0
        || shm_ring_locate(&l->reply, &w->seg, w->slot, SHM_RING_REPLY) != 0
        || shm_ring_locate(&l->notif, &w->seg, w->slot, SHM_RING_NOTIF) != 0
        || shm_blockpool_locate(&l->pool, &w->seg) != 0
        || shm_fanout_locate(&l->fo, &w->seg) != 0
        || l->req.slot_size < SHM_FO_SLOT_MIN
        || l->reply.slot_size < SHM_FO_SLOT_MIN)
        return -EPROTO;
    l->bit = UINT64_C(1) << w->slot;
    l->in_cap = WK_LINK_IN_SLOTS * l->reply.slot_size;
    if (l->in_cap < l->reply.size * l->reply.slot_size)
        l->in_cap = l->reply.size * l->reply.slot_size;
    l->in = wk_alloc(w, l->in_cap);
    l->handles = wk_alloc(w, WK_LINK_DRAIN_MAX * sizeof(*l->handles));
    if (wk_outbox_init(&l->out, w, l->req.slot_size, l->req.size) != 0
        || l->in == NULL || l->handles == NULL) {
        rc = -ENOMEM;
        goto fail;
    }
    /* Our end of the doorbell; the broker bound it before forking us. */
    snprintf(name, sizeof(name), "w%u.bell", w->slot);
    rc = shm_doorbell_connect(&l->bell, c->runtime_dir, name,
                              WK_LINK_CONNECT_MS);
    if (rc != 0)
        goto fail;
    event_assign(&l->bell_ev, w->base, shm_doorbell_fd(&l->bell),
                 EV_READ | EV_PERSIST, wk_link_on_bell, l);
    /* No faults mid-run: the pool's pages mapped, a second after the
     * start (not on the way up nor while the first clients come:
     * docs/benchmarks.md "Start-up of the whole server"; a drain before
     * then faults its pages in itself). */
    {
        const struct timeval later = { WK_LINK_PREFAULT_S, 0 };

        if (event_base_once(w->base, -1, EV_TIMEOUT, wk_link_on_prefault, l,
                            &later) != 0)
            (void)shm_blockpool_prefault(&l->pool);
    }
    evtimer_assign(&l->retry_ev, w->base, wk_link_on_retry, l);
    l->linger_us = c->linger_us;
    if (l->linger_us != 0) {
        /* libevent's timers round to the millisecond under epoll. */
        l->linger_fd = shm_linger_open();
        if (l->linger_fd < 0) {
            rc = l->linger_fd;
            l->linger_fd = -1;
            goto fail;
        }
        event_assign(&l->linger_ev, w->base, l->linger_fd,
                     EV_READ | EV_PERSIST, wk_link_on_linger, l);
        if (event_add(&l->linger_ev, NULL) != 0) {
            rc = -ENOMEM;
            goto fail;
        }
    }
    if (event_add(&l->bell_ev, NULL) != 0) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = wk_loop_hook_add(lp, wk_link_prepare, wk_link_wake, l);
    if (rc != 0)
        goto fail;
    l->lost_seen = shm_fanout_lost_seq(&l->fo, w->slot);
    l->events_lost_seen = shm_fanout_events_lost(&l->fo, w->slot);
    /* A dead predecessor's event interest is not ours. */
    shm_fanout_event_interest(&l->fo, w->slot, false);
    l->on = true;
    w->link = l;
    return 0;
fail:
    wk_link_clear(l);
    return rc;
}

void
wk_link_clear(struct wk_link *l)
{
    struct wk_worker *w = l->w;

    if (w == NULL)
        return;
    if (l->bell.sock != -1) {
        if (event_initialized(&l->bell_ev))
            event_del(&l->bell_ev);
        shm_doorbell_close(&l->bell);
    }
    if (event_initialized(&l->retry_ev))
        event_del(&l->retry_ev);
    if (l->linger_fd != -1) {
        if (event_initialized(&l->linger_ev))
            event_del(&l->linger_ev);
        close(l->linger_fd);
    }
    wk_outbox_clear(&l->out);
    wk_free(w, l->handles);
    wk_free(w, l->in);
    if (w->link == l)
        w->link = NULL;
    memset(l, 0, sizeof(*l));
    l->linger_fd = -1;
    l->bell.sock = -1;
    l->bell.fd = -1;
    l->out.open_off = UINT32_MAX;
}

void
wk_link_set_notify(struct wk_link *l, const struct wk_link_notify *n,
                   void *arg)
{
    l->notify = *n;
    l->notify_arg = arg;
}

int
wk_link_on_reply(struct wk_link *l, uint16_t kind, wk_link_reply_fn fn,
                 void *arg)
{
    if (kind >= WK_LINK_KINDS)
        return -EINVAL;
    l->reply_fn[kind].fn = fn;
    l->reply_fn[kind].arg = arg;
    return 0;
}

/* ------------------------------------------------------------ requests */

void
wk_link_push(struct wk_link *l)
{
    struct wk_outbox *ob = &l->out;
    const uint32_t    ss = ob->slot_size;
    uint32_t          off = 0, total = ob->len / ss;
    struct shm_fo_hdr h;

    wk_outbox_close(ob);                /* pushed records are final */
    if (total == 0)
        return;
    if (shm_ring_push_n_spsc(&l->req, ob->buf, total) == 0) {
        ob->len = 0;
        l->bell_owed = true;
        return;
    }
    while (off < ob->len) {
        memcpy(&h, ob->buf + off, sizeof(h));
        if (shm_ring_push_n_spsc(&l->req, ob->buf + off, h.nslots) != 0)
            break;
        off += (uint32_t)h.nslots * ss;
    }
    if (off != 0) {
        memmove(ob->buf, ob->buf + off, ob->len - off);
        ob->len -= off;
        l->bell_owed = true;
    }
}

int
wk_link_send_event(struct wk_link *l, const uint8_t *rec, uint32_t len)
{
    int rc;

    if (l == NULL || !l->on)
        return -ENOTCONN;
    rc = wk_outbox_event(&l->out, rec, len);
    if (rc != 0)
        return rc;
    wk_link_push(l);
    return 0;
}

void
wk_link_event_interest(struct wk_link *l, bool on)
{
    if (l != NULL && l->on)
        shm_fanout_event_interest(&l->fo, l->w->slot, on);
}

/* ------------------------------------------------------------ the loop */

/* The doorbell: drain it; the idle hook looks at the rings next. */
static void
wk_link_on_bell(evutil_socket_t fd, short what, void *arg)
{
    struct wk_link *l = arg;

    (void)fd;
    (void)what;
    (void)shm_doorbell_drain(&l->bell);
}

/* Only there to end a blocking iteration while the outbox waits. */
/* Every page of the block pool mapped now (a wk_link_clear() before this
 * left no pool: nothing done). */
static void
wk_link_on_prefault(evutil_socket_t fd, short what, void *arg)
{
    struct wk_link *l = arg;

    (void)fd;
    (void)what;
    (void)shm_blockpool_prefault(&l->pool);
}

static void
wk_link_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* Arm the linger timer for us microseconds (0: disarm). */
static void
wk_link_linger_arm(struct wk_link *l, uint32_t us)
{
    if (shm_linger_arm(l->linger_fd, us) == 0)
        l->linger_armed = us != 0;
}

/* The linger timer expired: clear it; the next prepare looks again. */
static void
wk_link_on_linger(evutil_socket_t fd, short what, void *arg)
{
    struct wk_link *l = arg;

    (void)what;
    l->linger_armed = false;
    shm_linger_clear(fd);
}

static bool
wk_link_prepare(struct wk_worker *w, void *arg)
{
    struct wk_link *l = arg;
    uint64_t        lost, by;
    bool            more, sleep, moved, linger;

    (void)w;
    if (l->out.len != 0)
        wk_link_push(l);
    moved = l->bell_owed;
    lost = shm_fanout_lost_seq(&l->fo, l->w->slot);
    more = wk_link_drain_notif(l);
    if (!more && lost != l->lost_seen) {
        uint64_t el = shm_fanout_events_lost(&l->fo, l->w->slot);

        l->lost_seen = lost;
        wk_link_lost(l);
        if (el != l->events_lost_seen) {
            l->events_lost_seen = el;
            if (l->notify.events_lost != NULL)
                l->notify.events_lost(l->notify_arg);
        }
    }
    if (wk_link_drain_replies(l))
        moved = true;
    if (l->bell_owed) {
        l->bell_owed = false;
        if (shm_ring_needs_bell(&l->req))
            (void)shm_doorbell_ring(&l->bell);
    }
    if (l->out.len != 0) {
        struct timeval tv = { 0, WK_LINK_RETRY_US };

        /* The broker will drain its ring; look again in a moment. */
        if (!evtimer_pending(&l->retry_ev, NULL))
            evtimer_add(&l->retry_ev, &tv);
    }
    if (more)
        return false;
    /* Several requests with the broker: a lone one would only wait for
     * the timer where a doorbell brings its result sooner. */
    linger = l->linger_fd != -1 && moved && l->inflight >= 2;
    by = l->notify.wake_by != NULL ? l->notify.wake_by(l->notify_arg) : 0;
    sleep = shm_ring_sleep_prepare_by(&l->notif, by);
    if (linger) {
        if (shm_ring_count_spsc(&l->reply) != 0)
            sleep = false;
        else if (sleep)
            wk_link_linger_arm(l, l->linger_us);
    } else {
        if (!shm_ring_sleep_prepare(&l->reply))
            sleep = false;
        if (l->linger_armed)
            wk_link_linger_arm(l, 0);
    }
    return sleep;
}

static void
wk_link_wake(struct wk_worker *w, void *arg)
{
    struct wk_link *l = arg;

    (void)w;
    shm_ring_wake_clear(&l->notif);
    shm_ring_wake_clear(&l->reply);
}

/* ------------------------------------------------------------ notifications */

void
wk_link_drain(struct wk_link *l)
{
    while (wk_link_drain_notif(l))
        ;
}

/* Drain up to WK_LINK_DRAIN_MAX handles; true when more may be waiting. */
static bool
wk_link_drain_notif(struct wk_link *l)
{
    struct wk_worker      *w = l->w;
    struct shm_block_iter  it;
    const uint8_t         *bytes;
    void                  *arg = l->notify_arg;
    /* Loaded once: a handler may store anywhere, so the compiler would
     * load them again per record. */
    void (*value)(void *, uint32_t, const uint8_t *, uint32_t) =
        l->notify.value;
    void (*event)(void *, const uint8_t *, uint32_t) = l->notify.event;
    uint32_t               slot, len, got = 0;
    uint64_t               recs = 0, blocks = 0;
    int                    n, rc;

    while (got < WK_LINK_DRAIN_MAX) {
        n = shm_ring_pop_n_spsc(&l->notif, l->handles,
                                WK_LINK_DRAIN_MAX - got);
        if (n <= 0)
            break;                      /* -EAGAIN empty, -EPROTO corrupt */
        got += (uint32_t)n;
        for (int i = 0; i < n; i++) {
            struct shm_block_handle h = l->handles[i];

            /* Stale and corrupt handles are counted by the pool. */
            if (shm_blockpool_open(&l->pool, h, w->slot, &it) != 0)
                continue;
            if (l->notify.time != NULL) {
                /* Newer than our clock: the clock is stale, read it. */
                if (it.ms > w->now_ms)
                    wk_clock_update(w);
                l->notify.time(arg, it.ms <= w->now_ms ? it.ms : w->now_ms);
            }
            while ((rc = shm_blockpool_next(&it, &slot, &bytes, &len)) == 1) {
                if (slot == SHM_FO_EVENT_SLOT) {
                    if (event != NULL)
                        event(arg, bytes, len);
                    recs++;
                    continue;
                }
                if ((shm_interest_get(&w->vals, slot) & l->bit) == 0)
                    continue;           /* another worker's slot */
                if (value != NULL)
                    value(arg, slot, bytes, len);
                recs++;
            }
            /* Blocks return: at once, whatever the records did. */
            (void)shm_blockpool_release(&l->pool, h, w->slot);
            blocks++;
        }
    }
    if (blocks != 0) {
        if (l->notify.time != NULL)
            l->notify.time(arg, 0);
        wk_link_count(&w->row->notif_blocks, blocks);
        wk_link_count(&w->row->notifications, recs);
    }
    return got == WK_LINK_DRAIN_MAX;
}

/* Take our lost marks; report the slots we watch (shm/fanout.h). */
static void
wk_link_lost(struct wk_link *l)
{
    struct wk_worker *w = l->w;
    uint64_t          n = 0;

    for (uint32_t i = 0; i < l->fo.nslots; i++) {
        if (!shm_fanout_lost_take(&l->fo, i, w->slot))
            continue;
        if ((shm_interest_get(&w->vals, i) & l->bit) == 0)
            continue;
        if (l->notify.overflow != NULL)
            l->notify.overflow(l->notify_arg, i);
        n++;
    }
    if (n != 0)
        wk_link_count(&w->row->overflows, n);
}

/* ------------------------------------------------------------ replies */

/* Hand the broker's replies to their handlers; true when any came. */
static bool
wk_link_drain_replies(struct wk_link *l)
{
    const uint32_t    ss = l->reply.slot_size;
    struct shm_fo_hdr h;
    bool              took = false;
    int               rc;

    for (;; took = true) {
        rc = shm_ring_pop_spsc(&l->reply, l->in);
        if (rc != 0)
            return took;
        memcpy(&h, l->in, sizeof(h));
        if (!shm_fo_hdr_ok(&h, ss, l->reply.size)
            || (uint64_t)h.nslots * ss > l->in_cap) {
            /* A broker that writes garbage: drop the ring's contents. */
            (void)shm_ring_discard_spsc(&l->reply);
            return true;
        }
        if (h.nslots > 1) {
            /* The producer pushed the whole record at once. */
            rc = shm_ring_pop_n_spsc(&l->reply, l->in + ss, h.nslots - 1u);
            if (rc != (int)h.nslots - 1) {
                (void)shm_ring_discard_spsc(&l->reply);
                return true;
            }
        }
        if (h.kind < WK_LINK_KINDS && l->reply_fn[h.kind].fn != NULL)
            l->reply_fn[h.kind].fn(l->reply_fn[h.kind].arg, l->in, h.len);
    }
}
