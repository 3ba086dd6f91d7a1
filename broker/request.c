/*
 * broker/request.c: the request rings' drain, the reply outboxes and the
 * broker's step before it may block (see request.h for the picture).
 *
 * A request record is taken only when its worker's reply outbox has room
 * for the results of the largest record (res_need), so a result never
 * waits for room and a reply is never dropped; a worker whose reply ring
 * stays full is "stuck": its requests wait in its ring, and a short
 * timer ends the iteration's block so the broker looks again.
 *
 * The ring protocols (who stores what, which fence pairs with which) are
 * shm/ring.c's; the order of a Write's changes and their notifications is
 * broker/value.c's; this file adds one rule: an iteration's replies are
 * pushed after its block (bk_request_prepare steps 3 and 4), so a worker
 * that reads a Write's result finds its notification already queued.
 */
#include "request.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "proto/status_gen.h"
#include "shm/log.h"
#include "value.h"

#define BK_REQUEST_BATCH    4096        /* request records per worker per
                                           iteration: others get a turn */
#define BK_REQUEST_RETRY_US 1000        /* a full reply ring: look again */

struct bk_request_cur;

static uint32_t bk_request_drain(struct bk_request *r,
                                 struct bk_request_worker *rw);
static void bk_request_write_rec(struct bk_request *r,
                                 struct bk_request_worker *rw, uint32_t len);
static void bk_request_call_rec(struct bk_request *r,
                                struct bk_request_worker *rw, uint32_t len);
static void bk_request_event_rec(struct bk_request *r,
                                 struct bk_request_worker *rw,
                                 const uint8_t *rec, uint32_t len);
static void bk_request_hupd_rec(struct bk_request *r,
                                struct bk_request_worker *rw, uint32_t len);
static int bk_request_relay(struct bk_request_worker *dst, uint8_t *rec,
                            uint32_t len);
static uint32_t bk_request_room(const struct bk_request_worker *rw);
static void bk_request_close_results(struct bk_request_worker *rw);
static inline bool bk_request_result(struct bk_request_worker *rw,
                                     uint32_t id, uint32_t op, ua_status st);
static bool bk_request_result_open(struct bk_request_worker *rw, uint32_t id,
                                   uint32_t op, ua_status st);
static inline void bk_request_cur_load(struct bk_request_worker *rw,
                                       uint32_t id,
                                       struct bk_request_cur *c);
static inline void bk_request_cur_store(struct bk_request_worker *rw,
                                        struct bk_request_cur *c);
static void bk_request_push_replies(struct bk_request_worker *rw);
static void bk_request_retry_arm(struct bk_request *r);
static void bk_request_on_retry(evutil_socket_t fd, short what, void *arg);
static void bk_request_on_linger(evutil_socket_t fd, short what, void *arg);
static void bk_request_linger_arm(struct bk_request *r, uint32_t us);

int
bk_request_init(struct bk_request *r, struct bk_addrspace *as,
                struct bk_fanout *fo, struct event_base *base,
                const struct bk_config *c, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->linger_fd = -1;
    r->historian = c->history_enabled ? c->workers : UINT32_MAX;
    r->as = as;
    r->fo = fo;
    r->base = base;
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        r->w[i].r = r;
        r->w[i].slot = i;
        r->w[i].open_off = UINT32_MAX;
    }
    if (fo->n == 0)
        return 0;                   /* no fan-out in this segment */
    for (unsigned i = 0; i < fo->n; i++) {
        struct bk_request_worker *rw = &r->w[i];

        if (shm_ring_locate(&rw->req, &as->seg, i, SHM_RING_REQ) != 0
            || shm_ring_locate(&rw->reply, &as->seg, i, SHM_RING_REPLY) != 0
            || rw->req.slot_size < SHM_FO_SLOT_MIN) {
            snprintf(err, errlen, "worker %u: rings do not check out", i);
            goto fail;
        }
        r->n = i + 1;
        if (rw->req.size * rw->req.slot_size > r->in_cap)
            r->in_cap = rw->req.size * rw->req.slot_size;
    }
    /*
     * The results of the largest request record: one status per operation
     * (at least 16 bytes each in the record), in records of at most a
     * reply ring, each starting on a fresh slot.
     */
    {
        uint32_t ss = r->w[0].reply.slot_size, rs = r->w[0].reply.size;
        uint64_t ops = r->in_cap / sizeof(struct shm_fo_wop) + 1;
        uint64_t per = ((uint64_t)rs * ss - sizeof(struct shm_fo_results))
                       / 4;

        r->res_need = (uint32_t)(ops * 4 + (ops / per + 2)
                                 * (sizeof(struct shm_fo_results) + ss));
    }
    for (unsigned i = 0; i < r->n; i++) {
        struct bk_request_worker *rw = &r->w[i];

        rw->out_cap = rw->reply.size * rw->reply.slot_size + r->res_need;
        rw->out = bk_alloc(rw->out_cap);
        if (rw->out == NULL)
            goto nomem;
    }
    if (bk_write_init(&r->write, &as->ns, &as->val) != 0)
        goto nomem;
    /* One Write's decoded value and its merge with the current one. */
    r->arena_cap = 3 * (size_t)r->in_cap + (1u << 20);
    r->in = bk_alloc(r->in_cap);
    /* A record's operations take 16 bytes each at least. */
    r->res_max = r->in_cap / sizeof(struct shm_fo_wop) + 1;
    r->res = bk_alloc((size_t)r->res_max * sizeof(*r->res));
    r->arena_buf = bk_alloc(r->arena_cap);
    if (r->in == NULL || r->res == NULL || r->arena_buf == NULL)
        goto nomem;
    ua_arena_init(&r->arena, r->arena_buf, r->arena_cap);
    evtimer_assign(&r->retry, base, bk_request_on_retry, r);
    r->retry_set = true;
    r->linger_us = c->fanout_linger_us;
    if (r->linger_us != 0) {
        r->linger_fd = shm_linger_open();
        if (r->linger_fd < 0) {
            snprintf(err, errlen, "timerfd_create() failed: %s",
                     strerror(-r->linger_fd));
            r->linger_fd = -1;
            goto fail;
        }
        event_assign(&r->linger, base, r->linger_fd, EV_READ | EV_PERSIST,
                     bk_request_on_linger, r);
        if (event_add(&r->linger, NULL) != 0)
            goto nomem;
    }
    return 0;
nomem:
    snprintf(err, errlen, "fan-out: out of memory");
fail:
    bk_request_clear(r);
    return -1;
}

void
bk_request_clear(struct bk_request *r)
{
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        bk_free(r->w[i].out);
        r->w[i].out = NULL;
    }
    if (r->retry_set)
        evtimer_del(&r->retry);
    r->retry_set = false;
    if (r->linger_fd != -1) {
        event_del(&r->linger);
        close(r->linger_fd);
        r->linger_fd = -1;
    }
    bk_write_clear(&r->write);
    bk_free(r->in);
    bk_free(r->res);
    bk_free(r->arena_buf);
    r->in = NULL;
    r->res = NULL;
    r->arena_buf = NULL;
    r->n = 0;
}

void
bk_request_on_call(struct bk_request *r, bk_request_call_fn on_call,
                   bk_request_flush_fn on_flush, void *arg)
{
    r->on_call = on_call;
    r->on_flush = on_flush;
    r->call_arg = arg;
}

/* ------------------------------------------------------------ workers */

int
bk_request_worker_start(struct bk_request *r, unsigned slot)
{
    struct bk_request_worker *rw;
    int                       rc;

    rc = bk_fanout_worker_start(r->fo, slot);
    if (rc != 0 || slot >= r->n)
        return rc;
    rw = &r->w[slot];
    rw->stuck = false;
    rw->up = true;
    return 0;
}

void
bk_request_worker_dead(struct bk_request *r, unsigned slot)
{
    struct bk_request_worker *rw;

    if (slot < r->n) {
        rw = &r->w[slot];
        rw->up = false;
        rw->gen++;
        (void)shm_ring_reset_dead_consumer(&rw->reply);
        (void)shm_ring_discard_spsc(&rw->req);  /* its Writes: unanswerable */
        rw->out_len = 0;
        rw->open_off = UINT32_MAX;
        rw->stuck = false;
        rw->pushed_reply = false;
    }
    bk_fanout_worker_dead(r->fo, slot);
}

/* ------------------------------------------------------------ results */

/* Reply-outbox bytes left after the records so far (a slot of slack). */
static uint32_t
bk_request_room(const struct bk_request_worker *rw)
{
    uint32_t used = rw->open_off == UINT32_MAX
                        ? rw->out_len
                        : rw->open_off + rw->open_len + rw->reply.slot_size;

    return used >= rw->out_cap ? 0 : rw->out_cap - used;
}

/* Finish the open results record: header, slots, zeroed tail. */
static void
bk_request_close_results(struct bk_request_worker *rw)
{
    const uint32_t        ss = rw->reply.slot_size;
    struct shm_fo_results res;
    uint32_t              nslots;

    if (rw->open_off == UINT32_MAX)
        return;
    nslots = shm_fo_slots(rw->open_len, ss);
    memset(&res, 0, sizeof(res));
    res.hdr.kind = SHM_FO_RESULTS;
    res.hdr.nslots = (uint16_t)nslots;
    res.hdr.len = rw->open_len;
    res.id = rw->open_id;
    res.first_op = rw->open_first;
    res.count = rw->open_count;
    memcpy(rw->out + rw->open_off, &res, sizeof(res));
    memset(rw->out + rw->open_off + rw->open_len, 0,
           (size_t)nslots * ss - rw->open_len);
    rw->out_len = rw->open_off + nslots * ss;
    rw->open_off = UINT32_MAX;
}

/*
 * Add one result to rw's reply outbox: to the open record when it is the
 * next operation of the same request and the record stays within a ring,
 * else in a new record.  false when there is no room (the caller checked
 * room before taking the request, so only a broker bug).
 */
static inline bool
bk_request_result(struct bk_request_worker *rw, uint32_t id, uint32_t op,
                  ua_status st)
{
    /* Inline, the common case: the next result of the open record. */
    if (rw->open_off != UINT32_MAX && rw->open_id == id
        && rw->open_first + rw->open_count == op
        && rw->open_len + 4 <= rw->open_max) {
        memcpy(rw->out + rw->open_off + rw->open_len, &st, 4);
        rw->open_len += 4;
        rw->open_count++;
        return true;
    }
    return bk_request_result_open(rw, id, op, st);
}

/* bk_request_result() when it starts a record. */
static bool
bk_request_result_open(struct bk_request_worker *rw, uint32_t id,
                       uint32_t op, ua_status st)
{
    const uint32_t ss = rw->reply.slot_size;
    uint64_t       max;

    bk_request_close_results(rw);
    if (rw->out_len + (uint64_t)shm_fo_slots(sizeof(struct shm_fo_results)
                                             + 4, ss) * ss > rw->out_cap)
        return false;
    max = (uint64_t)rw->reply.size * ss;
    if (max > UINT16_MAX * (uint64_t)ss)
        max = UINT16_MAX * (uint64_t)ss;
    if (max > rw->out_cap - rw->out_len)
        max = rw->out_cap - rw->out_len;
    rw->open_off = rw->out_len;
    rw->open_id = id;
    rw->open_first = op;
    rw->open_count = 1;
    rw->open_len = sizeof(struct shm_fo_results) + 4;
    rw->open_max = (uint32_t)max;
    memcpy(rw->out + rw->open_off + sizeof(struct shm_fo_results), &st, 4);
    return true;
}

/* Push rw's reply outbox: all at once, else record by record. */
static void
bk_request_push_replies(struct bk_request_worker *rw)
{
    const uint32_t    ss = rw->reply.slot_size;
    uint32_t          off = 0;
    struct shm_fo_hdr h;

    bk_request_close_results(rw);       /* pushed records are final */
    if (rw->out_len == 0)
        return;
    if (shm_ring_push_n_spsc(&rw->reply, rw->out, rw->out_len / ss) == 0) {
        rw->out_len = 0;
        rw->pushed_reply = true;
        rw->stuck = false;
        return;
    }
    while (off < rw->out_len) {
        memcpy(&h, rw->out + off, sizeof(h));
        if (shm_ring_push_n_spsc(&rw->reply, rw->out + off, h.nslots) != 0)
            break;
        off += (uint32_t)h.nslots * ss;
    }
    if (off != 0) {
        memmove(rw->out, rw->out + off, rw->out_len - off);
        rw->out_len -= off;
        rw->pushed_reply = true;
    }
    /* Room for the results of one more request record, or wait. */
    rw->stuck = rw->out_cap - rw->out_len < rw->r->res_need;
}

/*
 * The open results record of rw while a request record's loop appends to
 * it: the next result goes to p when its operation is next and p < end.
 * bk_request_cur_load() takes it from rw (nothing to append to when the
 * open record is another request's), bk_request_cur_store() gives back
 * what was appended; the loop calls bk_request_result() in between only.
 */
struct bk_request_cur {
    uint8_t *start;
    uint8_t *p;
    uint8_t *end;
    uint32_t next;
};

static inline void
bk_request_cur_load(struct bk_request_worker *rw, uint32_t id,
                    struct bk_request_cur *c)
{
    if (rw->open_off == UINT32_MAX || rw->open_id != id) {
        c->start = c->p = c->end = NULL;
        c->next = 0;
        return;
    }
    c->start = c->p = rw->out + rw->open_off + rw->open_len;
    c->end = c->p + ((rw->open_max - rw->open_len) & ~3u);
    c->next = rw->open_first + rw->open_count;
}

static inline void
bk_request_cur_store(struct bk_request_worker *rw, struct bk_request_cur *c)
{
    uint32_t n;

    if (c->p == c->start)
        return;
    n = (uint32_t)(c->p - c->start);
    rw->open_len += n;
    rw->open_count += n / 4;
    c->start = c->p;
}

/* ------------------------------------------------------------ records */

/*
 * Apply the operations of one SHM_FO_WRITE record in r->in, in one value
 * batch (the record's bytes stay as they are until it ends: the fast
 * path's changes point into them).
 */
static void
bk_request_write_rec(struct bk_request *r, struct bk_request_worker *rw,
                     uint32_t len)
{
    struct shm_fo_write           rec;
    struct bk_request_cur         c;
    const struct bk_write_result *res = r->res;
    struct bk_value              *val = &r->as->val;
    uint32_t                      n;

    memcpy(&rec, r->in, sizeof(rec));
    bk_value_batch_begin(val);
    n = bk_write_apply_ops(&r->write, r->in + sizeof(rec), len - sizeof(rec),
                           rec.nops < r->res_max ? rec.nops : r->res_max,
                           &r->arena, r->now, r->res);
    bk_value_batch_end(val);
    bk_request_cur_load(rw, rec.id, &c);
    for (uint32_t k = 0; k < n; k++) {
        /* Most results are the next of the open record: a store. */
        if (res[k].op == c.next && c.p < c.end) {
            memcpy(c.p, &res[k].st, 4);
            c.p += 4;
            c.next++;
        } else {
            bk_request_cur_store(rw, &c);
            (void)bk_request_result(rw, rec.id, res[k].op, res[k].st);
            bk_request_cur_load(rw, rec.id, &c);
        }
    }
    bk_request_cur_store(rw, &c);
    bk_fanout_count(&r->fo->fo.sh->writes, rec.nops);
}

int
bk_request_call_reply(struct bk_request *r, unsigned worker, uint32_t gen,
                      uint32_t id, uint32_t op, ua_status st,
                      const uint8_t *out, uint32_t out_len, uint32_t nout)
{
    struct bk_request_worker *rw;
    struct shm_fo_call_result res;
    uint32_t                  ss, nslots, reserve;
    uint64_t                  len = sizeof(res) + (uint64_t)out_len;
    uint8_t                  *p;

    if (worker >= r->n)
        return -EPIPE;
    rw = &r->w[worker];
    if (!rw->up || rw->gen != gen || rw->out == NULL)
        return -EPIPE;
    ss = rw->reply.slot_size;
    nslots = shm_fo_slots(len, ss);
    if (nslots > rw->reply.size || nslots > UINT16_MAX)
        return -EMSGSIZE;
    bk_request_close_results(rw);
    /* The room a Write record's results may need stays free; an answer
     * given while its record is taken may use it (the drain made sure of
     * that room before it took the record, and looks again before the
     * next). */
    reserve = r->calling ? 0 : r->res_need;
    if ((uint64_t)rw->out_len + (uint64_t)nslots * ss + reserve
        > rw->out_cap) {
        bk_request_push_replies(rw);
        if ((uint64_t)rw->out_len + (uint64_t)nslots * ss + reserve
            > rw->out_cap) {
            bk_request_retry_arm(r);
            return -ENOSPC;
        }
    }
    p = rw->out + rw->out_len;
    memset(&res, 0, sizeof(res));
    res.hdr.kind = SHM_FO_CALL_RESULT;
    res.hdr.nslots = (uint16_t)nslots;
    res.hdr.len = (uint32_t)len;
    res.id = id;
    res.op = op;
    res.status = st;
    res.nout = nout;
    res.out_len = out_len;
    memcpy(p, &res, sizeof(res));
    if (out_len != 0)
        memcpy(p + sizeof(res), out, out_len);
    memset(p + len, 0, (size_t)nslots * ss - (size_t)len);
    rw->out_len += nslots * ss;
    return 0;
}

/* One SHM_FO_CALL record in r->in: to the call handler. */
static void
bk_request_call_rec(struct bk_request *r, struct bk_request_worker *rw,
                    uint32_t len)
{
    struct shm_fo_call rec;

    if (r->on_call != NULL) {
        r->calling = true;
        r->on_call(r->call_arg, rw->slot, r->in, len);
        r->calling = false;
        return;
    }
    memcpy(&rec, r->in, sizeof(rec));
    (void)bk_request_call_reply(r, rw->slot, rw->gen, rec.id, rec.op,
                                UA_BAD_NOT_IMPLEMENTED, NULL, 0, 0);
}

/*
 * A worker's own event (SHM_FO_EVENT): fanned out like the feed's once
 * its bytes are an event record naming nodes we have; else dropped and
 * logged (a worker does not write garbage).
 */
static void
bk_request_event_rec(struct bk_request *r, struct bk_request_worker *rw,
                     const uint8_t *rec, uint32_t len)
{
    struct shm_fo_ev       ev;
    struct shm_fo_ev_field fl[SHM_FO_EV_FIELDS_MAX];
    struct bk_value       *val = &r->as->val;

    if (shm_fo_ev_parse(rec, len, &ev, fl, SHM_FO_EV_FIELDS_MAX) < 0
        || ev.source >= r->as->ns.nnodes || ev.type >= r->as->ns.nnodes) {
        shm_log(SHM_LOG_ERROR, "worker %u: bad event record; dropped",
                rw->slot);
        return;
    }
    bk_value_batch_begin(val);
    bk_value_event(val, rec, len);
    bk_value_batch_end(val);
}

/*
 * Copy the record rec[len] into dst's reply outbox as it is (its nslots
 * for dst's slots).  0; -EPIPE when dst is not up; -EMSGSIZE larger than
 * its ring; -ENOSPC no room even after a push.
 */
static int
bk_request_relay(struct bk_request_worker *dst, uint8_t *rec, uint32_t len)
{
    const uint32_t    ss = dst->reply.slot_size;
    struct shm_fo_hdr h;
    uint32_t          nslots = shm_fo_slots(len, ss);

    if (!dst->up || dst->out == NULL)
        return -EPIPE;
    if (nslots > dst->reply.size || nslots > UINT16_MAX)
        return -EMSGSIZE;
    bk_request_close_results(dst);
    if ((uint64_t)dst->out_len + (uint64_t)nslots * ss > dst->out_cap) {
        bk_request_push_replies(dst);
        if ((uint64_t)dst->out_len + (uint64_t)nslots * ss > dst->out_cap)
            return -ENOSPC;
    }
    memcpy(&h, rec, sizeof(h));
    h.nslots = (uint16_t)nslots;
    memcpy(rec, &h, sizeof(h));
    memcpy(dst->out + dst->out_len, rec, len);
    memset(dst->out + dst->out_len + len, 0, (size_t)nslots * ss - len);
    dst->out_len += nslots * ss;
    return 0;
}

/*
 * HistoryUpdate's records (shm/fanout.h): a worker's SHM_FO_HUPD goes to
 * the historian with the asker stamped on it (answered here, Bad, when it
 * cannot: the worker's outbox has the room, the drain made sure); the
 * historian's SHM_FO_HUPD_RESULT goes to the asker when it is still the
 * same process (else, or without room, dropped: the worker gives up on
 * it, worker/svc_histupd.c).
 */
static void
bk_request_hupd_rec(struct bk_request *r, struct bk_request_worker *rw,
                    uint32_t len)
{
    struct shm_fo_hupd        u;
    struct shm_fo_hupd_result res;
    struct bk_request_worker *dst;
    int                       rc = -EPIPE;

    if (rw->slot == r->historian) {
        memcpy(&res, r->in, sizeof(res));
        if (res.hdr.kind != SHM_FO_HUPD_RESULT || res.worker >= r->n
            || res.worker == r->historian || r->w[res.worker].gen != res.gen
            || bk_request_relay(&r->w[res.worker], r->in, len) != 0)
            shm_log(SHM_LOG_WARNING, "history update result for worker %u "
                    "dropped", res.worker);
        return;
    }
    memcpy(&u, r->in, sizeof(u));
    if (u.hdr.kind != SHM_FO_HUPD)      /* a worker sends no results */
        return;
    u.worker = rw->slot;
    u.gen = rw->gen;
    memcpy(r->in, &u, sizeof(u));
    if (r->historian < r->n) {
        dst = &r->w[r->historian];
        rc = bk_request_relay(dst, r->in, len);
    }
    if (rc == 0)
        return;
    memset(&res, 0, sizeof(res));
    res.hdr.kind = SHM_FO_HUPD_RESULT;
    res.hdr.len = sizeof(res);
    res.id = u.id;
    res.op = u.op;
    res.worker = u.worker;
    res.gen = u.gen;
    /* No historian now (restarting), or no room for the record. */
    res.status = rc == -EMSGSIZE ? UA_BAD_REQUEST_TOO_LARGE
                                 : UA_BAD_RESOURCE_UNAVAILABLE;
    (void)bk_request_relay(rw, (uint8_t *)&res, sizeof(res));
}

/*
 * Take rw's request records, apply them, gather their results.  The
 * number of records taken.
 */
static uint32_t
bk_request_drain(struct bk_request *r, struct bk_request_worker *rw)
{
    const uint32_t    ss = rw->req.slot_size;
    struct shm_fo_hdr h;
    int               rc, k;

    for (k = 0; k < BK_REQUEST_BATCH; k++) {
        /* Room for the results of the largest record before taking one. */
        if (bk_request_room(rw) < r->res_need) {
            bk_request_push_replies(rw);
            if (bk_request_room(rw) < r->res_need) {
                rw->stuck = true;
                return (uint32_t)k;
            }
        }
        rc = shm_ring_pop_spsc(&rw->req, r->in);
        if (rc != 0)
            return (uint32_t)k;
        memcpy(&h, r->in, sizeof(h));
        if (!shm_fo_hdr_ok(&h, ss, rw->req.size)
            || (uint64_t)h.nslots * ss > r->in_cap
            || (h.nslots > 1
                && shm_ring_pop_n_spsc(&rw->req, r->in + ss, h.nslots - 1u)
                       != (int)h.nslots - 1)) {
            /* A worker writing garbage: drop what it queued. */
            shm_log(SHM_LOG_ERROR, "worker %u: bad request record; "
                    "dropping its request ring", rw->slot);
            (void)shm_ring_discard_spsc(&rw->req);
            return (uint32_t)k + 1;
        }
        if (h.kind == SHM_FO_WRITE && h.len >= sizeof(struct shm_fo_write))
            bk_request_write_rec(r, rw, h.len);
        else if (h.kind == SHM_FO_CALL
                 && h.len >= sizeof(struct shm_fo_call))
            bk_request_call_rec(r, rw, h.len);
        else if ((h.kind == SHM_FO_HUPD
                  && h.len >= sizeof(struct shm_fo_hupd))
                 || (h.kind == SHM_FO_HUPD_RESULT
                     && h.len >= sizeof(struct shm_fo_hupd_result)))
            bk_request_hupd_rec(r, rw, h.len);
        else if (h.kind == SHM_FO_EVENT && h.len > sizeof(h))
            bk_request_event_rec(r, rw, r->in + sizeof(h),
                                 h.len - (uint32_t)sizeof(h));
    }
    return (uint32_t)k;
}

/* ------------------------------------------------------------ the loop */

bool
bk_request_prepare(struct bk_request *r, int64_t now)
{
    bool     sleep = true, linger;
    uint32_t took = 0;
    uint64_t replies = 0;

    if (r->n == 0)
        return true;
    r->now = now;
    if (r->on_flush != NULL)
        r->on_flush(r->call_arg);       /* answers waiting for room */
    for (unsigned i = 0; i < r->n; i++)
        if (r->w[i].up)
            took += bk_request_drain(r, &r->w[i]);
    bk_fanout_flush(r->fo);
    for (unsigned i = 0; i < r->n; i++)
        if (r->w[i].up
            && (r->w[i].out_len != 0 || r->w[i].open_off != UINT32_MAX))
            bk_request_push_replies(&r->w[i]);
    bk_fanout_lost_publish(r->fo);
    /*
     * Linger: several requests came in this iteration (or one while we
     * lingered already): more are likely soon.  Leave the rings unmarked
     * (a worker pushing now rings no bell) and block at most linger_us;
     * the iteration after that finds requests (linger again) or none
     * (mark the rings and sleep).  A lone request from sleep does not
     * linger: a single client's next Write comes a round trip later, and
     * would only wait for the timer.
     */
    linger = (took >= 2 || (took == 1 && r->lingering))
             && r->linger_fd != -1;
    r->lingering = linger;
    /* Each ring remembers the sleep it rang for: evaluated here, for
     * every reply ring we pushed to, whatever the notification ring
     * says. */
    for (unsigned i = 0; i < r->n; i++) {
        struct bk_request_worker *rw = &r->w[i];

        if (rw->up && rw->pushed_reply) {
            if (shm_ring_needs_bell(&rw->reply))
                replies |= UINT64_C(1) << i;
            rw->pushed_reply = false;
        }
    }
    bk_fanout_bells(r->fo, replies);
    for (unsigned i = 0; i < r->n; i++) {
        struct bk_request_worker *rw = &r->w[i];

        if (!rw->up)
            continue;
        if (rw->stuck || rw->out_len != 0) {
            /* The worker will make room: look again in a moment rather
             * than spin (its requests wait in its ring meanwhile). */
            bk_request_retry_arm(r);
        } else if (linger) {
            if (shm_ring_count_spsc(&rw->req) != 0)
                sleep = false;
        } else if (!shm_ring_sleep_prepare(&rw->req)) {
            sleep = false;
        }
    }
    if (linger && sleep)
        bk_request_linger_arm(r, r->linger_us);
    else if (!linger && r->linger_armed)
        bk_request_linger_arm(r, 0);
    return sleep;
}

/* End the next blocking iteration in BK_REQUEST_RETRY_US (once). */
static void
bk_request_retry_arm(struct bk_request *r)
{
    struct timeval tv = { 0, BK_REQUEST_RETRY_US };

    if (!evtimer_pending(&r->retry, NULL))
        evtimer_add(&r->retry, &tv);
}

/* Arm the linger timer for us microseconds (0: disarm). */
static void
bk_request_linger_arm(struct bk_request *r, uint32_t us)
{
    if (shm_linger_arm(r->linger_fd, us) == 0)
        r->linger_armed = us != 0;
}

/* The linger timer expired: clear it; the next prepare looks again. */
static void
bk_request_on_linger(evutil_socket_t fd, short what, void *arg)
{
    struct bk_request *r = arg;

    (void)what;
    r->linger_armed = false;
    shm_linger_clear(fd);
}

/* Only there to end a blocking iteration while a worker is stuck. */
static void
bk_request_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

void
bk_request_wake(struct bk_request *r)
{
    for (unsigned i = 0; i < r->n; i++)
        if (r->w[i].up)
            shm_ring_wake_clear(&r->w[i].req);
}
