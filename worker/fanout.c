/*
 * worker/fanout.c: the worker's end of the fan-out (worker/fanout.h;
 * record formats in shm/fanout.h).
 *
 * One idle hook (worker/conn.c wk_conn_loop) does everything, every loop
 * iteration, before the loop may block:
 *
 *   1. push the outbox (request records not pushed yet), in order;
 *   2. lost = lost_seq (acquire); drain the notification ring: open each
 *      block, hand its records to wk_fanout_on_value() (records of slots
 *      we have no interest bit on are skipped), release it at once;
 *   3. if the ring is empty now and lost moved: take our lost marks and
 *      report each as an overflow (after step 2, so no older block is
 *      still queued for us: shm/fanout.h);
 *   4. drain the reply ring: results into their pending Writes; a Write
 *      whose last result came in is answered (wk_conn_respond);
 *   5. ring the broker if we pushed and it sleeps (shm_ring_needs_bell);
 *   6. mark both inbound rings sleeping (shm_ring_sleep_prepare): block
 *      only if both stayed empty.  Linger (fanout.linger_us): while
 *      two or more Writes are with the broker and this iteration pushed
 *      requests or took results, the reply ring is not marked; the loop blocks at
 *      most linger_us (a timerfd) and the broker's results come without a
 *      doorbell.  An iteration that moved nothing marks it as before.
 *      The notification ring is marked with a promise: the time the
 *      publishing timer wakes us anyway (wk_fanout_wake_by, the subs'
 *      code); the broker rings for blocks alone only after it.
 *
 * After the iteration the wake function clears the marks.  The doorbell's
 * fd sits in the loop; its callback only drains the doorbell (DESIGN §3:
 * drain the latch, then look at the rings, which the next hook call does).
 *
 * Memory: everything is allocated in wk_fanout_init() (the pending-Write
 * pool, the outbox, the pop buffers); nothing per Write or per block.
 */
#include "fanout.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/value.h"

#define WK_FANOUT_CONNECT_MS 5000   /* the broker bound the bell already */
#define WK_FANOUT_RETRY_US   1000   /* outbox waiting for ring room */
#define WK_FANOUT_IN_SLOTS   512    /* reply-ring slots popped at once */

static void wk_fanout_on_bell(evutil_socket_t fd, short what, void *arg);
static void wk_fanout_on_retry(evutil_socket_t fd, short what, void *arg);
static void wk_fanout_on_linger(evutil_socket_t fd, short what, void *arg);
static void wk_fanout_linger_arm(struct wk_fanout *f, uint32_t us);
static bool wk_fanout_prepare(struct wk_worker *w, void *arg);
static void wk_fanout_wake(struct wk_worker *w, void *arg);
static void wk_fanout_push(struct wk_fanout *f);
static bool wk_fanout_drain_notif(struct wk_fanout *f);
static void wk_fanout_lost(struct wk_fanout *f);
static bool wk_fanout_drain_replies(struct wk_fanout *f);
static void wk_fanout_results(struct wk_fanout *f,
                              const struct shm_fo_results *r,
                              const uint8_t *codes);
static struct wk_fanout_write *wk_fanout_write_of(struct wk_fanout *f,
                                                  uint32_t id);
static void wk_fanout_write_done(struct wk_fanout *f,
                                 struct wk_fanout_write *pw);
static inline void wk_fanout_count(_Atomic uint64_t *c, uint64_t n);

/* ------------------------------------------------ the subscriptions hooks
 *
 * Weak no-op defaults: the subscriptions code (worker/sub*.c) defines the
 * real ones, which the linker prefers.  Until then values are dropped here
 * (and still counted as delivered notifications).
 */

__attribute__((weak)) void
wk_fanout_on_value(struct wk_worker *w, uint32_t slot, const uint8_t *dv,
                   uint32_t len)
{
    (void)w;
    (void)slot;
    (void)dv;
    (void)len;
}

__attribute__((weak)) void
wk_fanout_on_overflow(struct wk_worker *w, uint32_t slot)
{
    (void)w;
    (void)slot;
}

__attribute__((weak)) void
wk_fanout_on_event(struct wk_worker *w, const uint8_t *rec, uint32_t len)
{
    (void)w;
    (void)rec;
    (void)len;
}

__attribute__((weak)) void
wk_fanout_on_events_lost(struct wk_worker *w)
{
    (void)w;
}

int
wk_fanout_send_event(struct wk_worker *w, const uint8_t *rec, uint32_t len)
{
    struct wk_fanout *f = w->fanout;
    struct shm_fo_hdr h;
    uint32_t          ss, nslots, start;

    if (f == NULL || !f->on)
        return -ENOTCONN;
    ss = f->slot_size;
    nslots = shm_fo_slots((uint64_t)len + sizeof(h), ss);
    if (nslots > f->req.size || nslots > UINT16_MAX)
        return -EMSGSIZE;
    f->open_off = UINT32_MAX;           /* a Write after it starts anew */
    start = f->outbox_len;
    if ((uint64_t)start + (uint64_t)nslots * ss > f->outbox_cap)
        return -ENOSPC;
    h.kind = SHM_FO_EVENT;
    h.nslots = (uint16_t)nslots;
    h.len = (uint32_t)sizeof(h) + len;
    memcpy(f->outbox + start, &h, sizeof(h));
    memcpy(f->outbox + start + sizeof(h), rec, len);
    memset(f->outbox + start + h.len, 0, (size_t)nslots * ss - h.len);
    f->outbox_len = start + nslots * ss;
    wk_fanout_push(f);
    return 0;
}

void
wk_fanout_event_interest(struct wk_worker *w, bool on)
{
    struct wk_fanout *f = w->fanout;

    if (f != NULL && f->on)
        shm_fanout_event_interest(&f->fo, w->slot, on);
}

__attribute__((weak)) void
wk_fanout_on_time(struct wk_worker *w, uint64_t ms)
{
    (void)w;
    (void)ms;
}

__attribute__((weak)) uint64_t
wk_fanout_wake_by(struct wk_worker *w)
{
    (void)w;
    return 0;
}

/* ------------------------------------------------------------ helpers */

static inline void
wk_fanout_count(_Atomic uint64_t *c, uint64_t n)
{
    /* Single writer (this worker); the broker reads relaxed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

int
wk_fanout_current(struct wk_worker *w, uint32_t slot, uint8_t *buf,
                  size_t cap, size_t *len)
{
    struct shm_value m;
    int              rc;

    *len = 0;
    if (cap < SHM_FO_DV_EXTRA)
        return -ENOSPC;
    /* The Variant lands where the DataValue wants it, after the mask. */
    rc = shm_value_read(&w->vals, slot, &m, buf + 1, cap - SHM_FO_DV_EXTRA);
    if (rc == -ENOSPC)
        *len = (size_t)m.len + SHM_FO_DV_EXTRA;
    if (rc != 0)
        return rc;
    *len = shm_fo_dv_finish(buf, &m);
    return 0;
}

/* ------------------------------------------------------------ init */

int
wk_fanout_init(struct wk_fanout *f, struct wk_worker *w, struct wk_conns *cs)
{
    const struct shm_config *c = w->conf;
    char                     name[24];
    int                      rc;

    memset(f, 0, sizeof(*f));
    f->w = w;
    f->linger_fd = -1;
    f->bell.sock = -1;
    f->bell.fd = -1;
    f->free_write = UINT32_MAX;
    f->free_call = UINT32_MAX;
    f->open_off = UINT32_MAX;
    rc = shm_ring_locate(&f->req, &w->seg, w->slot, SHM_RING_REQ);
    if (rc == -ENOENT)
        return 0;                       /* no rings: no fan-out */
    if (rc != 0
        || shm_ring_locate(&f->reply, &w->seg, w->slot, SHM_RING_REPLY) != 0
        || shm_ring_locate(&f->notif, &w->seg, w->slot, SHM_RING_NOTIF) != 0
        || shm_blockpool_locate(&f->pool, &w->seg) != 0
        || shm_fanout_locate(&f->fo, &w->seg) != 0
        || f->req.slot_size < SHM_FO_SLOT_MIN
        || f->reply.slot_size < SHM_FO_SLOT_MIN)
        return -EPROTO;
    (void)shm_blockpool_prefault(&f->pool);    /* no faults mid-run */
    f->bit = UINT64_C(1) << w->slot;
    f->slot_size = f->req.slot_size;
    f->outbox_cap = f->req.size * f->req.slot_size;
    f->in_cap = WK_FANOUT_IN_SLOTS * f->reply.slot_size;
    if (f->in_cap < f->reply.size * f->reply.slot_size)
        f->in_cap = f->reply.size * f->reply.slot_size;
    f->scratch_cap = f->outbox_cap;
    f->nwrites = c->pending_writes != 0 ? c->pending_writes : 1;
    f->outbox = wk_alloc(w, f->outbox_cap);
    f->in = wk_alloc(w, f->in_cap);
    f->scratch = wk_alloc(w, f->scratch_cap);
    f->handles = wk_alloc(w, WK_FANOUT_DRAIN_MAX * sizeof(*f->handles));
    f->writes = wk_alloc(w, (size_t)f->nwrites * sizeof(*f->writes));
    if (f->outbox == NULL || f->in == NULL || f->scratch == NULL
        || f->handles == NULL || f->writes == NULL)
        goto nomem;
    memset(f->writes, 0, (size_t)f->nwrites * sizeof(*f->writes));
    /* Pending Calls, each with its response arena. */
    f->ncalls = c->pending_calls != 0 ? c->pending_calls : 1;
    f->call_bytes = c->max_call_bytes != 0 ? c->max_call_bytes : 65536;
    f->calls = wk_alloc(w, (size_t)f->ncalls * sizeof(*f->calls));
    if (f->calls == NULL)
        goto nomem;
    memset(f->calls, 0, (size_t)f->ncalls * sizeof(*f->calls));
    for (uint32_t i = f->ncalls; i-- > 0;) {
        struct wk_fanout_call *pc = &f->calls[i];

        pc->buf = wk_alloc(w, f->call_bytes);
        if (pc->buf == NULL)
            goto nomem;
        pc->next_free = f->free_call;
        f->free_call = i;
    }
    for (uint32_t i = f->nwrites; i-- > 0;) {
        struct wk_fanout_write *pw = &f->writes[i];

        pw->results = wk_alloc(w, (size_t)c->max_nodes_per_write
                                      * sizeof(ua_status));
        if (pw->results == NULL)
            goto nomem;
        pw->next_free = f->free_write;
        f->free_write = i;
    }
    /* Our end of the doorbell; the broker bound it before forking us. */
    snprintf(name, sizeof(name), "w%u.bell", w->slot);
    rc = shm_doorbell_connect(&f->bell, c->runtime_dir, name,
                              WK_FANOUT_CONNECT_MS);
    if (rc != 0)
        goto fail;
    event_assign(&f->bell_ev, w->base, shm_doorbell_fd(&f->bell),
                 EV_READ | EV_PERSIST, wk_fanout_on_bell, f);
    evtimer_assign(&f->retry_ev, w->base, wk_fanout_on_retry, f);
    f->linger_us = c->linger_us;
    if (f->linger_us != 0) {
        /* libevent's timers round to the millisecond under epoll. */
        f->linger_fd = shm_linger_open();
        if (f->linger_fd < 0) {
            rc = f->linger_fd;
            f->linger_fd = -1;
            goto fail;
        }
        event_assign(&f->linger_ev, w->base, f->linger_fd,
                     EV_READ | EV_PERSIST, wk_fanout_on_linger, f);
        if (event_add(&f->linger_ev, NULL) != 0) {
            rc = -ENOMEM;
            goto fail;
        }
    }
    if (event_add(&f->bell_ev, NULL) != 0) {
        rc = -ENOMEM;
        goto fail;
    }
    rc = wk_conn_hook_add(cs, wk_fanout_prepare, wk_fanout_wake, f);
    if (rc != 0)
        goto fail;
    f->lost_seen = shm_fanout_lost_seq(&f->fo, w->slot);
    f->events_lost_seen = shm_fanout_events_lost(&f->fo, w->slot);
    /* A dead predecessor's event interest is not ours. */
    shm_fanout_event_interest(&f->fo, w->slot, false);
    f->on = true;
    w->fanout = f;
    return 0;
nomem:
    rc = -ENOMEM;
fail:
    wk_fanout_clear(f);
    return rc;
}

void
wk_fanout_clear(struct wk_fanout *f)
{
    struct wk_worker *w = f->w;

    if (w == NULL)
        return;
    if (f->bell.sock != -1) {
        if (event_initialized(&f->bell_ev))
            event_del(&f->bell_ev);
        shm_doorbell_close(&f->bell);
    }
    if (event_initialized(&f->retry_ev))
        event_del(&f->retry_ev);
    if (f->linger_fd != -1) {
        if (event_initialized(&f->linger_ev))
            event_del(&f->linger_ev);
        close(f->linger_fd);
    }
    if (f->writes != NULL)
        for (uint32_t i = 0; i < f->nwrites; i++)
            wk_free(w, f->writes[i].results);
    wk_free(w, f->writes);
    if (f->calls != NULL)
        for (uint32_t i = 0; i < f->ncalls; i++)
            wk_free(w, f->calls[i].buf);
    wk_free(w, f->calls);
    wk_free(w, f->handles);
    wk_free(w, f->scratch);
    wk_free(w, f->in);
    wk_free(w, f->outbox);
    if (w->fanout == f)
        w->fanout = NULL;
    memset(f, 0, sizeof(*f));
    f->linger_fd = -1;
    f->bell.sock = -1;
    f->bell.fd = -1;
    f->open_off = UINT32_MAX;
}

/* ------------------------------------------------------------ the loop */

/* The doorbell: drain it; the idle hook looks at the rings next. */
static void
wk_fanout_on_bell(evutil_socket_t fd, short what, void *arg)
{
    struct wk_fanout *f = arg;

    (void)fd;
    (void)what;
    (void)shm_doorbell_drain(&f->bell);
}

/* Only there to end a blocking iteration while the outbox waits. */
static void
wk_fanout_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* Arm the linger timer for us microseconds (0: disarm). */
static void
wk_fanout_linger_arm(struct wk_fanout *f, uint32_t us)
{
    if (shm_linger_arm(f->linger_fd, us) == 0)
        f->linger_armed = us != 0;
}

/* The linger timer expired: clear it; the next prepare looks again. */
static void
wk_fanout_on_linger(evutil_socket_t fd, short what, void *arg)
{
    struct wk_fanout *f = arg;

    (void)what;
    f->linger_armed = false;
    shm_linger_clear(fd);
}

static bool
wk_fanout_prepare(struct wk_worker *w, void *arg)
{
    struct wk_fanout *f = arg;
    uint64_t          lost;
    bool              more, sleep, moved, linger;

    (void)w;
    if (f->outbox_len != 0)
        wk_fanout_push(f);
    moved = f->bell_owed;
    lost = shm_fanout_lost_seq(&f->fo, f->w->slot);
    more = wk_fanout_drain_notif(f);
    if (!more && lost != f->lost_seen) {
        uint64_t el = shm_fanout_events_lost(&f->fo, f->w->slot);

        f->lost_seen = lost;
        wk_fanout_lost(f);
        if (el != f->events_lost_seen) {
            f->events_lost_seen = el;
            wk_fanout_on_events_lost(f->w);
        }
    }
    if (wk_fanout_drain_replies(f))
        moved = true;
    if (f->bell_owed) {
        f->bell_owed = false;
        if (shm_ring_needs_bell(&f->req))
            (void)shm_doorbell_ring(&f->bell);
    }
    if (f->outbox_len != 0) {
        struct timeval tv = { 0, WK_FANOUT_RETRY_US };

        /* The broker will drain its ring; look again in a moment. */
        if (!evtimer_pending(&f->retry_ev, NULL))
            evtimer_add(&f->retry_ev, &tv);
    }
    if (more)
        return false;
    /* Several Writes with the broker: a lone one would only wait for
     * the timer where a doorbell brings its result sooner. */
    linger = f->linger_fd != -1 && moved && f->inflight >= 2;
    sleep = shm_ring_sleep_prepare_by(&f->notif, wk_fanout_wake_by(f->w));
    if (linger) {
        if (shm_ring_count_spsc(&f->reply) != 0)
            sleep = false;
        else if (sleep)
            wk_fanout_linger_arm(f, f->linger_us);
    } else {
        if (!shm_ring_sleep_prepare(&f->reply))
            sleep = false;
        if (f->linger_armed)
            wk_fanout_linger_arm(f, 0);
    }
    return sleep;
}

static void
wk_fanout_wake(struct wk_worker *w, void *arg)
{
    struct wk_fanout *f = arg;

    (void)w;
    shm_ring_wake_clear(&f->notif);
    shm_ring_wake_clear(&f->reply);
}

/* ------------------------------------------------------------ notifications */

void
wk_fanout_drain(struct wk_fanout *f)
{
    while (wk_fanout_drain_notif(f))
        ;
}

/* Drain up to WK_FANOUT_DRAIN_MAX handles; true when more may be waiting. */
static bool
wk_fanout_drain_notif(struct wk_fanout *f)
{
    struct wk_worker      *w = f->w;
    struct shm_block_iter  it;
    const uint8_t         *bytes;
    uint32_t               slot, len, got = 0;
    uint64_t               recs = 0, blocks = 0;
    int                    n, rc;

    while (got < WK_FANOUT_DRAIN_MAX) {
        n = shm_ring_pop_n_spsc(&f->notif, f->handles,
                                WK_FANOUT_DRAIN_MAX - got);
        if (n <= 0)
            break;                      /* -EAGAIN empty, -EPROTO corrupt */
        got += (uint32_t)n;
        for (int i = 0; i < n; i++) {
            struct shm_block_handle h = f->handles[i];

            /* Stale and corrupt handles are counted by the pool. */
            if (shm_blockpool_open(&f->pool, h, w->slot, &it) != 0)
                continue;
            wk_fanout_on_time(w, it.ms <= w->now_ms ? it.ms : w->now_ms);
            while ((rc = shm_blockpool_next(&it, &slot, &bytes, &len)) == 1) {
                if (slot == SHM_FO_EVENT_SLOT) {
                    wk_fanout_on_event(w, bytes, len);
                    recs++;
                    continue;
                }
                if ((shm_interest_get(&w->vals, slot) & f->bit) == 0)
                    continue;           /* another worker's slot */
                wk_fanout_on_value(w, slot, bytes, len);
                recs++;
            }
            /* Blocks return: at once, whatever the records did. */
            (void)shm_blockpool_release(&f->pool, h, w->slot);
            blocks++;
        }
    }
    if (blocks != 0) {
        wk_fanout_on_time(w, 0);
        wk_fanout_count(&w->row->notif_blocks, blocks);
        wk_fanout_count(&w->row->notifications, recs);
    }
    return got == WK_FANOUT_DRAIN_MAX;
}

/* Take our lost marks; report the slots we watch (shm/fanout.h). */
static void
wk_fanout_lost(struct wk_fanout *f)
{
    struct wk_worker *w = f->w;
    uint64_t          n = 0;

    for (uint32_t i = 0; i < f->fo.nslots; i++) {
        if (!shm_fanout_lost_take(&f->fo, i, w->slot))
            continue;
        if ((shm_interest_get(&w->vals, i) & f->bit) == 0)
            continue;
        wk_fanout_on_overflow(w, i);
        n++;
    }
    if (n != 0)
        wk_fanout_count(&w->row->overflows, n);
}

/* ------------------------------------------------------------ replies */

/* Take the broker's results; true when any record came. */
static bool
wk_fanout_drain_replies(struct wk_fanout *f)
{
    const uint32_t    ss = f->reply.slot_size;
    struct shm_fo_hdr h;
    bool              took = false;
    int               rc;

    for (;; took = true) {
        rc = shm_ring_pop_spsc(&f->reply, f->in);
        if (rc != 0)
            return took;
        memcpy(&h, f->in, sizeof(h));
        if (!shm_fo_hdr_ok(&h, ss, f->reply.size)
            || (uint64_t)h.nslots * ss > f->in_cap) {
            /* A broker that writes garbage: drop the ring's contents. */
            (void)shm_ring_discard_spsc(&f->reply);
            return true;
        }
        if (h.nslots > 1) {
            /* The producer pushed the whole record at once. */
            rc = shm_ring_pop_n_spsc(&f->reply, f->in + ss, h.nslots - 1u);
            if (rc != (int)h.nslots - 1) {
                (void)shm_ring_discard_spsc(&f->reply);
                return true;
            }
        }
        if (h.kind == SHM_FO_RESULTS
            && h.len >= sizeof(struct shm_fo_results)) {
            struct shm_fo_results r;

            memcpy(&r, f->in, sizeof(r));
            if (r.count <= (h.len - sizeof(r)) / 4)
                wk_fanout_results(f, &r, f->in + sizeof(r));
        } else if (h.kind == SHM_FO_CALL_RESULT
                   && h.len >= sizeof(struct shm_fo_call_result)) {
            wk_svc_call_reply(f->w, f->in, h.len);
        }
    }
}

static struct wk_fanout_write *
wk_fanout_write_of(struct wk_fanout *f, uint32_t id)
{
    uint32_t i = id & 0xFFFFu;

    if (id == 0 || i >= f->nwrites || f->writes[i].id != id)
        return NULL;
    return &f->writes[i];
}

static void
wk_fanout_results(struct wk_fanout *f, const struct shm_fo_results *r,
                  const uint8_t *codes)
{
    struct wk_fanout_write *pw = wk_fanout_write_of(f, r->id);
    uint32_t                k;

    if (pw == NULL)
        return;                         /* answered or dropped already */
    /* The codes of operations first_op.. as far as the Write has
     * operations and results to come, in one copy (a broker that sends
     * more cannot write past the results or complete a Write twice). */
    if (r->first_op < pw->n) {
        k = r->count;
        if (k > pw->n - r->first_op)
            k = pw->n - r->first_op;
        if (k > pw->left)
            k = pw->left;
        memcpy(&pw->results[r->first_op], codes, 4 * (size_t)k);
        pw->left -= k;
    }
    if (pw->left == 0)
        wk_fanout_write_done(f, pw);
}

/* Every result is in: the WriteResponse, then the pending Write is free. */
static void
wk_fanout_write_done(struct wk_fanout *f, struct wk_fanout_write *pw)
{
    struct ua_write_response resp;

    memset(&resp, 0, sizeof(resp));
    resp.response_header.service_result = UA_GOOD;
    resp.n_results = (int32_t)pw->n;
    resp.results = pw->results;
    resp.n_diagnostic_infos = 0;
    /* -ESTALE: the client left meanwhile; the write stands all the same. */
    (void)wk_conn_respond(f->w, &pw->ref, &ua_types[UA_TYPE_WRITERESPONSE],
                          &resp);
    pw->id = 0;
    pw->next_free = f->free_write;
    f->free_write = (uint32_t)(pw - f->writes);
    f->inflight--;
}

/* ------------------------------------------------------------ writes */

int
wk_fanout_write_begin(struct wk_fanout *f, const struct wk_conn_ref *ref,
                      uint32_t n)
{
    struct wk_fanout_write *pw;
    uint32_t                i = f->free_write;

    if (i == UINT32_MAX || n == 0 || n > f->w->conf->max_nodes_per_write)
        return -ENOSPC;
    pw = &f->writes[i];
    f->free_write = pw->next_free;
    /* 15 bits of sequence: an id is a positive int (and never 0). */
    f->write_seq = (uint16_t)((f->write_seq + 1) & 0x7FFF);
    if (f->write_seq == 0)
        f->write_seq = 1;
    pw->id = i | (uint32_t)f->write_seq << 16;
    f->inflight++;
    pw->ref = *ref;
    pw->n = n;
    pw->left = n;
    pw->next_free = UINT32_MAX;
    /* Every result is set before the response leaves; this one stays only
     * if a broker answered an operation twice and another never.  Two at
     * a time: the loop runs per WriteValue. */
    {
        const uint64_t two = (uint64_t)UA_BAD_INTERNAL_ERROR << 32
                             | UA_BAD_INTERNAL_ERROR;
        uint32_t       k;

        for (k = 0; k + 1 < n; k += 2)
            memcpy(&pw->results[k], &two, 8);
        if (k < n)
            pw->results[k] = UA_BAD_INTERNAL_ERROR;
    }
    return (int)pw->id;
}

/* Every operation of a Write, worker/fanout.h (the run's fallback). */
ua_status
wk_fanout_write_any(struct wk_fanout *f, int id, uint32_t op, uint32_t node,
                    uint32_t attr, const struct ua_string *range,
                    const struct ua_datavalue *dv)
{
    const uint32_t      ss = f->slot_size;
    struct shm_fo_write rec;
    struct shm_fo_wop   wop;
    uint32_t            rlen = range != NULL && range->len > 0
                                   ? (uint32_t)range->len : 0;
    uint32_t            start, room, nslots, maxslots;
    uint64_t            len, oplen;
    size_t              dvlen, fixed;
    uint8_t            *p, *q;
    bool                open;

    if (rlen > SHM_FO_RANGE_MAX)
        return UA_BAD_INDEX_RANGE_INVALID;
    maxslots = f->req.size < UINT16_MAX ? f->req.size : UINT16_MAX;
    /* Continue this request's open record, or start one. */
    open = f->open_off != UINT32_MAX && f->open_id == (uint32_t)id;
    if (open) {
        /* The header's fields live in f meanwhile: reading the header
         * back right after its narrow stores would stall on store
         * forwarding, once per operation. */
        start = f->open_off;
        len = f->open_len;
    } else {
        start = f->outbox_len;
        len = sizeof(rec);
    }
    room = f->outbox_cap - start;
    if (room < len + shm_fo_wop_bytes(rlen, 0))
        return UA_BAD_SERVER_TOO_BUSY;
    p = f->outbox + start;
    q = p + len + sizeof(wop) + rlen;       /* where the DataValue goes */
    fixed = wk_fanout_fixed_size(dv);
    if (fixed != 0 && room >= len + shm_fo_wop_bytes(rlen, 2 + fixed)) {
        /* The common case without the codec: mask, type, the value. */
        wk_fanout_put_fixed(q, dv->value.type, dv->value.data,
                            (uint32_t)fixed);
        dvlen = 2 + fixed;
    } else if (ua_encode(dv, &ua_types[UA_TYPE_DATAVALUE], q,
                         room - (size_t)(q - p), &dvlen) != UA_GOOD) {
        /* Too big for what is left; for a whole record, for good. */
        size_t need = ua_encoded_size(dv, &ua_types[UA_TYPE_DATAVALUE]);

        /* The encoder may have left bytes past the record's data. */
        if (open)
            memset(p + len, 0, (size_t)f->open_nslots * ss - len);
        if (need == 0)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        if (sizeof(rec) + shm_fo_wop_bytes(rlen, (uint32_t)need)
            > (uint64_t)maxslots * ss)
            return UA_BAD_REQUEST_TOO_LARGE;
        if (open) {
            /* Another record for the rest of this request. */
            f->open_off = UINT32_MAX;
            return wk_fanout_write_any(f, id, op, node, attr, range, dv);
        }
        return UA_BAD_SERVER_TOO_BUSY;
    }
    oplen = shm_fo_wop_bytes(rlen, (uint32_t)dvlen);
    /* The open record's slots, or one more, without a division. */
    if (open && len + oplen <= (uint64_t)f->open_nslots * ss)
        nslots = f->open_nslots;
    else if (open && len + oplen <= (uint64_t)(f->open_nslots + 1) * ss)
        nslots = f->open_nslots + 1;
    else
        nslots = shm_fo_slots(len + oplen, ss);
    if (nslots > maxslots || (uint64_t)nslots * ss > room) {
        if (open)           /* as above: no stale bytes in its tail */
            memset(p + len, 0, (size_t)f->open_nslots * ss - len);
        if (open) {
            f->open_off = UINT32_MAX;
            return wk_fanout_write_any(f, id, op, node, attr, range, dv);
        }
        return nslots > maxslots ? UA_BAD_REQUEST_TOO_LARGE
                                 : UA_BAD_SERVER_TOO_BUSY;
    }
    wop.op = op;
    wop.node = node;
    wop.dv_len = (uint32_t)dvlen;
    wop.attr = attr > UINT16_MAX ? UINT16_MAX : (uint16_t)attr;
    wop.range_len = (uint16_t)rlen;
    memcpy(p + len, &wop, sizeof(wop));
    if (rlen != 0)
        memcpy(p + len + sizeof(wop), range->data, rlen);
    /*
     * Zero the padding and the last slot's tail: no stale bytes travel.
     * Only when the record gets a slot: the slots it has are zero past
     * its data already (the op that took each one zeroed it to its end,
     * and a failed op clears what it left, above).
     */
    if (!open || nslots != f->open_nslots)
        memset(q + dvlen, 0, (size_t)nslots * ss - (len + sizeof(wop) + rlen
                                                     + dvlen));
    if (!open) {
        memset(&rec, 0, sizeof(rec));
        rec.hdr.kind = SHM_FO_WRITE;
        rec.id = (uint32_t)id;
        memcpy(p, &rec, sizeof(rec));
        f->open_nops = 0;
    }
    f->open_nops++;
    f->open_len = (uint32_t)(len + oplen);
    /* The header's changing fields, each stored alone. */
    {
        uint16_t ns16 = (uint16_t)nslots;

        memcpy(p + offsetof(struct shm_fo_write, hdr.nslots), &ns16, 2);
        memcpy(p + offsetof(struct shm_fo_write, hdr.len), &f->open_len, 4);
        memcpy(p + offsetof(struct shm_fo_write, nops), &f->open_nops, 4);
    }
    f->open_off = start;
    f->open_id = (uint32_t)id;
    f->open_nslots = nslots;
    f->outbox_len = start + nslots * ss;
    wk_fanout_count(&f->w->row->write_ops, 1);
    return UA_GOOD;
}

/* wk_fanout_run_close(), worker/fanout.h: the run's operations are in
 * the open record's bytes; now its header, its last slot's tail and f. */
void
wk_fanout_run_end(struct wk_fanout *f, uint32_t len, uint32_t nops,
                  uint32_t added)
{
    const uint32_t ss = f->slot_size;
    uint8_t       *p = f->outbox + f->open_off;
    uint32_t       nslots = shm_fo_slots(len, ss);
    uint16_t       ns16 = (uint16_t)nslots;

    /* Every byte up to len was stored by an operation (padding
     * included); past it, up to the end of the last slot, zero. */
    memset(p + len, 0, (size_t)nslots * ss - len);
    memcpy(p + offsetof(struct shm_fo_write, hdr.nslots), &ns16, 2);
    memcpy(p + offsetof(struct shm_fo_write, hdr.len), &len, 4);
    memcpy(p + offsetof(struct shm_fo_write, nops), &nops, 4);
    f->open_len = len;
    f->open_nops = nops;
    f->open_nslots = nslots;
    f->outbox_len = f->open_off + nslots * ss;
    wk_fanout_count(&f->w->row->write_ops, added);
}

void
wk_fanout_write_result(struct wk_fanout *f, int id, uint32_t op,
                       ua_status st)
{
    struct wk_fanout_write *pw = wk_fanout_write_of(f, (uint32_t)id);

    if (pw == NULL || op >= pw->n || pw->left == 0)
        return;
    pw->results[op] = st;
    pw->left--;
}

void
wk_fanout_write_commit(struct wk_fanout *f, int id)
{
    struct wk_fanout_write *pw = wk_fanout_write_of(f, (uint32_t)id);

    if (pw == NULL)
        return;
    if (pw->left == 0) {
        wk_fanout_write_done(f, pw);    /* nothing went to the broker */
        return;
    }
    wk_fanout_push(f);
}

/*
 * Push the outbox: all of it in one batch when it fits (one tail store),
 * else record by record as far as the ring has room (each record all or
 * nothing); keep the rest, in order, for the next iteration.
 */
static void
wk_fanout_push(struct wk_fanout *f)
{
    const uint32_t ss = f->slot_size;
    uint32_t       off = 0, total = f->outbox_len / ss;
    struct shm_fo_hdr h;

    f->open_off = UINT32_MAX;           /* pushed records are final */
    if (total == 0)
        return;
    if (shm_ring_push_n_spsc(&f->req, f->outbox, total) == 0) {
        f->outbox_len = 0;
        f->bell_owed = true;
        return;
    }
    while (off < f->outbox_len) {
        memcpy(&h, f->outbox + off, sizeof(h));
        if (shm_ring_push_n_spsc(&f->req, f->outbox + off, h.nslots) != 0)
            break;
        off += (uint32_t)h.nslots * ss;
    }
    if (off != 0) {
        memmove(f->outbox, f->outbox + off, f->outbox_len - off);
        f->outbox_len -= off;
        f->bell_owed = true;
    }
}

/* ------------------------------------------------------------ calls */

struct wk_fanout_call *
wk_fanout_call_begin(struct wk_fanout *f, const struct wk_conn_ref *ref,
                     uint32_t n)
{
    struct wk_fanout_call *pc;
    uint32_t               i = f->free_call;

    if (i == UINT32_MAX || n == 0
        || n > f->w->conf->max_nodes_per_method_call)
        return NULL;
    pc = &f->calls[i];
    ua_arena_init(&pc->arena, pc->buf, f->call_bytes);
    pc->results = ua_arena_alloc(&pc->arena, (size_t)n
                                                 * sizeof(*pc->results));
    pc->methods = ua_arena_alloc(&pc->arena, (size_t)n * 4);
    if (pc->results == NULL || pc->methods == NULL)
        return NULL;                    /* n too large for call_bytes */
    memset(pc->results, 0, (size_t)n * sizeof(*pc->results));
    memset(pc->methods, 0xFF, (size_t)n * 4);
    f->free_call = pc->next_free;
    f->call_seq = (uint16_t)((f->call_seq + 1) & 0x7FFF);
    if (f->call_seq == 0)
        f->call_seq = 1;
    pc->id = i | (uint32_t)f->call_seq << 16;
    pc->ref = *ref;
    pc->n = n;
    pc->left = 0;
    pc->next_free = UINT32_MAX;
    return pc;
}

struct wk_fanout_call *
wk_fanout_call_of(struct wk_fanout *f, uint32_t id)
{
    uint32_t i = id & 0xFFFFu;

    if (id == 0 || f->calls == NULL || i >= f->ncalls
        || f->calls[i].id != id)
        return NULL;
    return &f->calls[i];
}

ua_status
wk_fanout_call_add(struct wk_fanout *f, struct wk_fanout_call *pc,
                   uint32_t op, uint32_t object, uint32_t method,
                   const struct ua_variant *args, int32_t nargs)
{
    const uint32_t     ss = f->slot_size;
    struct shm_fo_call rec;
    uint32_t           maxslots, nslots, start = f->outbox_len;
    uint64_t           alen = 0, len;
    uint8_t           *p;

    if (op >= pc->n || ss == 0)
        return UA_BAD_INTERNAL_ERROR;
    for (int32_t k = 0; k < nargs; k++) {
        size_t sz = ua_encoded_size(&args[k], &ua_types[UA_TYPE_VARIANT]);

        if (sz == 0)
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        alen += sz;
    }
    len = sizeof(rec) + alen;
    maxslots = f->req.size < UINT16_MAX ? f->req.size : UINT16_MAX;
    nslots = shm_fo_slots(len, ss);
    if (alen > f->call_bytes || nslots > maxslots)
        return UA_BAD_REQUEST_TOO_LARGE;
    if ((uint64_t)start + (uint64_t)nslots * ss > f->outbox_cap)
        return UA_BAD_RESOURCE_UNAVAILABLE;
    p = f->outbox + start;
    {
        size_t off = sizeof(rec);

        for (int32_t k = 0; k < nargs; k++) {
            size_t used;

            if (ua_encode(&args[k], &ua_types[UA_TYPE_VARIANT], p + off,
                          (size_t)(len - off), &used) != UA_GOOD)
                return UA_BAD_ENCODING_LIMITS_EXCEEDED;
            off += used;
        }
    }
    memset(p + len, 0, (size_t)nslots * ss - (size_t)len);
    memset(&rec, 0, sizeof(rec));
    rec.hdr.kind = SHM_FO_CALL;
    rec.hdr.nslots = (uint16_t)nslots;
    rec.hdr.len = (uint32_t)len;
    rec.id = pc->id;
    rec.op = op;
    rec.object = object;
    rec.method = method;
    rec.nargs = (uint32_t)nargs;
    rec.args_len = (uint32_t)alen;
    memcpy(p, &rec, sizeof(rec));
    /* A Write's open record before it is final: no Write continues it
     * past this one. */
    f->open_off = UINT32_MAX;
    f->outbox_len = start + nslots * ss;
    pc->methods[op] = method;
    pc->left++;
    return UA_GOOD;
}

/* Every answer is in: the CallResponse, then the pending Call is free. */
static void
wk_fanout_call_done(struct wk_fanout *f, struct wk_fanout_call *pc)
{
    struct ua_call_response resp;
    wk_fanout_respond_fn    respond = f->respond != NULL ? f->respond
                                                         : wk_conn_respond;

    memset(&resp, 0, sizeof(resp));
    resp.response_header.service_result = UA_GOOD;
    resp.n_results = (int32_t)pc->n;
    resp.results = pc->results;
    /* -ESTALE: the client left meanwhile; the methods ran all the same. */
    (void)respond(f->w, &pc->ref, &ua_types[UA_TYPE_CALLRESPONSE], &resp);
    pc->id = 0;
    pc->next_free = f->free_call;
    f->free_call = (uint32_t)(pc - f->calls);
}

void
wk_fanout_call_answered(struct wk_fanout *f, struct wk_fanout_call *pc)
{
    if (pc->left != 0)
        pc->left--;
    if (pc->left == 0)
        wk_fanout_call_done(f, pc);
}

void
wk_fanout_call_commit(struct wk_fanout *f, struct wk_fanout_call *pc)
{
    if (pc->left == 0) {
        wk_fanout_call_done(f, pc);     /* nothing went to the broker */
        return;
    }
    wk_fanout_push(f);
}
