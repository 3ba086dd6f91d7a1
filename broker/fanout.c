/*
 * broker/fanout.c: notification blocks, the Write path and the doorbells
 * on the broker's side (see fanout.h for the picture).
 *
 * Ordering contract (with the workers; the rings' and the pool's own
 * contracts are at the top of shm/ring.c and shm/blockpool.c):
 *  (1) No lost update on subscribe (DESIGN §2).  bk_addrspace_write_value
 *      stores the slot (seqlock, its last store a release), then
 *      bk_fanout_notify issues a seq_cst fence and loads the interest
 *      mask.  A worker sets its bit with a seq_cst RMW, then reads the
 *      slot.  Store-then-load on both sides with a full fence (the RMW is
 *      one) between: the broker sees the bit, or the worker's read sees
 *      the new value.  [notify fence <-> shm_interest_set]
 *      The Write fast path's bk_addrspace_write_small does the same store,
 *      then defers the change (bk_fanout_notify_small) as below.
 *      While a request record is applied (f->defer), the masks of its
 *      small changes are loaded after one fence for the whole record
 *      (bk_fanout_settle): every slot store still precedes the fence and
 *      every mask load follows it.  A worker that set its bit between two
 *      changes of one slot may get both; it drops a record older than
 *      the value it read (worker/monitem.c).
 *  (2) Lost marks are published (shm_fanout_lost_publish, release) only at
 *      the end of an iteration, after the block of that iteration was
 *      pushed: a worker that sees lost_seq move and then drains its ring
 *      has every block pushed before the marks, so the value it reads from
 *      the slot for the overflow is not older than any it got.
 */
#include "fanout.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/codec.h"
#include "proto/status_gen.h"
#include "write.h"

#define BK_FANOUT_REQ_BATCH   4096      /* request records per worker per
                                           iteration: others get a turn */
#define BK_FANOUT_RETRY_US    1000      /* a full reply ring: look again */

static int bk_fanout_rundir(const char *dir, char *err, size_t errlen);
static void bk_fanout_on_bell(evutil_socket_t fd, short what, void *arg);
static inline void bk_fanout_count(_Atomic uint64_t *c, uint64_t n);
static void bk_fanout_lost(struct bk_fanout *f, uint32_t slot, uint64_t mask);
static void bk_fanout_add(struct bk_fanout *f, uint32_t slot, uint64_t mask,
                          const void *bytes, uint32_t len,
                          const struct shm_value *m);
static void bk_fanout_settle(struct bk_fanout *f);
static int bk_fanout_take_block(struct bk_fanout *f);
static void bk_fanout_write_rec(struct bk_fanout *f,
                                struct bk_fanout_worker *fw, uint32_t len);
static uint32_t bk_fanout_drain(struct bk_fanout *f,
                                struct bk_fanout_worker *fw);
static void bk_fanout_call_rec(struct bk_fanout *f,
                               struct bk_fanout_worker *fw, uint32_t len);
static inline bool bk_fanout_result(struct bk_fanout_worker *fw,
                                    uint32_t id, uint32_t op, ua_status st);
static void bk_fanout_notify_any(struct bk_fanout *f, uint32_t slot,
                                 const void *bytes, uint32_t len,
                                 const struct shm_value *m)
    __attribute__((noinline));
static bool bk_fanout_result_open(struct bk_fanout_worker *fw, uint32_t id,
                                  uint32_t op, ua_status st);
static void bk_fanout_push_replies(struct bk_fanout_worker *fw);
static void bk_fanout_close_results(struct bk_fanout_worker *fw);
static uint32_t bk_fanout_room(const struct bk_fanout_worker *fw);
static void bk_fanout_on_retry(evutil_socket_t fd, short what, void *arg);
static void bk_fanout_on_linger(evutil_socket_t fd, short what, void *arg);
static void bk_fanout_linger_arm(struct bk_fanout *f, uint32_t us);
static void bk_fanout_event_rec(struct bk_fanout *f,
                                struct bk_fanout_worker *fw,
                                const uint8_t *rec, uint32_t len);

static const char bk_log[] = "uabroker";

static inline void
bk_fanout_count(_Atomic uint64_t *c, uint64_t n)
{
    /* Single writer (the broker); readers load relaxed. */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed)
                             + n, memory_order_relaxed);
}

/* Make the runtime directory (mode 0700) or check the one that exists. */
static int
bk_fanout_rundir(const char *dir, char *err, size_t errlen)
{
    struct stat st;

    if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
        snprintf(err, errlen, "mkdir(%s) failed: %s", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "runtime directory %s: not a directory", dir);
        return -1;
    }
    return 0;
}

int
bk_fanout_init(struct bk_fanout *f, struct bk_addrspace *as,
               struct event_base *base, const struct bk_config *c,
               char *err, size_t errlen)
{
    int rc;

    memset(f, 0, sizeof(*f));
    f->linger_fd = -1;
    f->as = as;
    f->base = base;
    f->conf = c;
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        f->w[i].f = f;
        f->w[i].slot = i;
        f->w[i].bell.sock = -1;
        f->w[i].bell.fd = -1;
        f->w[i].open_off = UINT32_MAX;
    }
    rc = shm_blockpool_locate(&f->pool, &as->seg);
    if (rc == -ENOENT)
        return 0;                   /* no fan-out in this segment */
    if (rc != 0 || shm_fanout_locate(&f->fo, &as->seg) != 0) {
        snprintf(err, errlen, "fan-out regions do not check out");
        return -1;
    }
    if (bk_fanout_rundir(c->runtime_dir, err, errlen) != 0)
        return -1;
    /* The pool's pages allocated and mapped now, not as the hand first
     * comes round to each of them mid-run. */
    (void)shm_blockpool_prefault(&f->pool);
    f->rec_cap = shm_blockpool_capacity(f->pool.block_size);
    f->cur_max = f->rec_cap / sizeof(struct shm_block_rec) + 1;
    f->rec = malloc(f->rec_cap);
    f->pend = malloc(BK_FANOUT_PEND_MAX * sizeof(*f->pend));
    f->cur_slots = malloc((size_t)f->cur_max * sizeof(*f->cur_slots));
    for (unsigned i = 0; i < c->workers && i < SHM_WORKERS_MAX; i++) {
        struct bk_fanout_worker *fw = &f->w[i];

        if (shm_ring_locate(&fw->req, &as->seg, i, SHM_RING_REQ) != 0
            || shm_ring_locate(&fw->reply, &as->seg, i, SHM_RING_REPLY) != 0
            || shm_ring_locate(&fw->notif, &as->seg, i, SHM_RING_NOTIF) != 0
            || fw->req.slot_size < SHM_FO_SLOT_MIN) {
            snprintf(err, errlen, "worker %u: rings do not check out", i);
            goto fail;
        }
        f->n = i + 1;
        if (fw->req.size * fw->req.slot_size > f->in_cap)
            f->in_cap = fw->req.size * fw->req.slot_size;
    }
    /*
     * The results of the largest request record: one status per operation
     * (at least 16 bytes each in the record), in records of at most a
     * reply ring, each starting on a fresh slot.
     */
    if (f->n != 0) {
        uint32_t ss = f->w[0].reply.slot_size, rs = f->w[0].reply.size;
        uint64_t ops = f->in_cap / sizeof(struct shm_fo_wop) + 1;
        uint64_t per = ((uint64_t)rs * ss - sizeof(struct shm_fo_results))
                       / 4;

        f->res_need = (uint32_t)(ops * 4 + (ops / per + 2)
                                 * (sizeof(struct shm_fo_results) + ss));
    }
    /*
     * Blocks left to workers' promises: at most half of a notification
     * ring, and all workers together at most half of the pool, so that
     * deferring never runs the pool dry for the others.
     */
    if (f->n != 0) {
        uint32_t dm = f->w[0].notif.size / 2;

        if (f->pool.nblocks / (2 * f->n) < dm)
            dm = f->pool.nblocks / (2 * f->n);
        f->defer_max = dm;
    }
    for (unsigned i = 0; i < f->n; i++) {
        struct bk_fanout_worker *fw = &f->w[i];

        fw->out_cap = fw->reply.size * fw->reply.slot_size + f->res_need;
        fw->out = malloc(fw->out_cap);
        if (fw->out == NULL)
            goto nomem;
    }
    /* One Write's decoded value and its merge with the current one. */
    f->arena_cap = 3 * (size_t)f->in_cap + (1u << 20);
    f->in = malloc(f->in_cap);
    /* A record's operations take 16 bytes each at least. */
    f->res_max = f->in_cap / sizeof(struct shm_fo_wop) + 1;
    f->res = malloc((size_t)f->res_max * sizeof(*f->res));
    f->arena_buf = malloc(f->arena_cap);
    if (f->rec == NULL || f->pend == NULL || f->cur_slots == NULL
        || f->in == NULL || f->res == NULL
        || f->arena_buf == NULL)
        goto nomem;
    ua_arena_init(&f->arena, f->arena_buf, f->arena_cap);
    evtimer_assign(&f->retry, base, bk_fanout_on_retry, f);
    f->linger_us = c->fanout_linger_us;
    if (f->linger_us != 0) {
        f->linger_fd = shm_linger_open();
        if (f->linger_fd < 0) {
            snprintf(err, errlen, "timerfd_create() failed: %s",
                     strerror(-f->linger_fd));
            f->linger_fd = -1;
            goto fail;
        }
        event_assign(&f->linger, base, f->linger_fd, EV_READ | EV_PERSIST,
                     bk_fanout_on_linger, f);
        if (event_add(&f->linger, NULL) != 0)
            goto nomem;
    }
    as->fanout = f;
    return 0;
nomem:
    snprintf(err, errlen, "fan-out: out of memory");
fail:
    bk_fanout_clear(f);
    return -1;
}

void
bk_fanout_clear(struct bk_fanout *f)
{
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        struct bk_fanout_worker *fw = &f->w[i];

        if (fw->bell.sock != -1) {
            event_del(&fw->bell_ev);
            shm_doorbell_close(&fw->bell);
        }
        free(fw->out);
        fw->out = NULL;
    }
    if (f->as != NULL && f->as->fanout == f)
        f->as->fanout = NULL;
    if (f->in != NULL)
        evtimer_del(&f->retry);
    if (f->linger_fd != -1) {
        event_del(&f->linger);
        close(f->linger_fd);
        f->linger_fd = -1;
    }
    free(f->rec);
    free(f->pend);
    free(f->cur_slots);
    free(f->in);
    free(f->res);
    free(f->arena_buf);
    f->rec = NULL;
    f->pend = NULL;
    f->pend_n = 0;
    f->cur_slots = NULL;
    f->in = NULL;
    f->res = NULL;
    f->arena_buf = NULL;
    f->n = 0;
    f->up_mask = 0;
}

/* ------------------------------------------------------------ workers */

int
bk_fanout_worker_start(struct bk_fanout *f, unsigned slot)
{
    struct bk_fanout_worker *fw;
    char                     name[24];
    int                      rc;

    if (slot >= f->n)
        return 0;
    fw = &f->w[slot];
    if (fw->bell.sock == -1) {
        snprintf(name, sizeof(name), "w%u.bell", slot);
        rc = shm_doorbell_bind(&fw->bell, f->conf->runtime_dir, name);
        if (rc != 0)
            return rc;
        event_assign(&fw->bell_ev, f->base, shm_doorbell_fd(&fw->bell),
                     EV_READ | EV_PERSIST, bk_fanout_on_bell, fw);
        if (event_add(&fw->bell_ev, NULL) != 0) {
            shm_doorbell_close(&fw->bell);
            return -ENOMEM;
        }
    }
    fw->greeted = false;
    fw->stuck = false;
    fw->up = true;
    f->up_mask |= UINT64_C(1) << slot;
    return 0;
}

void
bk_fanout_worker_dead(struct bk_fanout *f, unsigned slot)
{
    struct bk_fanout_worker *fw;
    struct shm_values       *v = &f->as->vals;
    uint64_t                 bit = UINT64_C(1) << slot;

    if (slot >= f->n)
        return;
    fw = &f->w[slot];
    /* 1. Stop pushing to it; 2. empty its rings; 3. drop its references
     * (blockpool.h "when a worker dies"). */
    fw->up = false;
    fw->gen++;
    f->up_mask &= ~bit;
    (void)shm_ring_reset_dead_consumer(&fw->notif);
    (void)shm_ring_reset_dead_consumer(&fw->reply);
    (void)shm_ring_discard_spsc(&fw->req);      /* its Writes: unanswerable */
    (void)shm_blockpool_reclaim_worker(&f->pool, slot);
    /* Its monitored items are gone: no interest, no lost marks. */
    for (uint32_t i = 0; i < v->nslots; i++)
        if (atomic_load_explicit(&v->interest[i], memory_order_relaxed) & bit)
            shm_interest_clear(v, i, slot);
    shm_fanout_forget_worker(&f->fo, slot);
    atomic_fetch_and(&f->fo.sh->event_interest, ~bit);
    fw->out_len = 0;
    fw->open_off = UINT32_MAX;
    fw->stuck = false;
    fw->pushed_notif = fw->pushed_reply = false;
    /* A fresh doorbell for the next worker (a PAIR takes one peer). */
    if (fw->bell.sock != -1) {
        event_del(&fw->bell_ev);
        shm_doorbell_close(&fw->bell);
    }
}

/* A worker rang: drain; its first bell (the hello) is answered once. */
static void
bk_fanout_on_bell(evutil_socket_t fd, short what, void *arg)
{
    struct bk_fanout_worker *fw = arg;
    int                      n;

    (void)fd;
    (void)what;
    n = shm_doorbell_drain(&fw->bell);
    if (n > 0 && !fw->greeted) {
        /* Until now our rings could have been dropped (doorbell.h). */
        fw->greeted = true;
        (void)shm_doorbell_ring(&fw->bell);
    }
}

/* ------------------------------------------------------------ notify */

/* Tell the workers in mask that they miss a value of slot (at flush). */
static void
bk_fanout_lost(struct bk_fanout *f, uint32_t slot, uint64_t mask)
{
    struct shm_fanout *sh = f->fo.sh;
    uint64_t           m = mask;

    shm_fanout_lost_mark(&f->fo, slot, mask);
    f->lost_pending |= mask;
    bk_fanout_count(&sh->notifications_dropped,
                    (uint64_t)__builtin_popcountll(mask));
    while (m != 0) {
        unsigned w = (unsigned)__builtin_ctzll(m);

        m &= m - 1;
        bk_fanout_count(&sh->w[w].dropped, 1);
    }
}

/* CLOCK_MONOTONIC in ms: the workers' clock (their now_ms). */
static uint64_t
bk_fanout_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Start a block.  0, or -ENOSPC (pool exhausted, counted). */
static int
bk_fanout_take_block(struct bk_fanout *f)
{
    if (shm_blockpool_alloc(&f->pool, &f->cur) != 0) {
        bk_fanout_count(&f->fo.sh->blocks_exhausted, 1);
        return -ENOSPC;
    }
    shm_blockpool_set_ms(&f->pool, f->cur, bk_fanout_mono_ms());
    f->filling = true;
    f->cur_mask = 0;
    f->cur_n = 0;
    f->cur_events = false;
    return 0;
}

/* Tell the workers in mask that they miss an event (at flush). */
static void
bk_fanout_event_lost(struct bk_fanout *f, uint64_t mask)
{
    struct shm_fanout *sh = f->fo.sh;

    f->lost_pending |= mask;
    bk_fanout_count(&sh->notifications_dropped,
                    (uint64_t)__builtin_popcountll(mask));
    for (uint64_t m = mask; m != 0; m &= m - 1) {
        unsigned w = (unsigned)__builtin_ctzll(m);

        shm_fanout_event_lost(&f->fo, w);
        bk_fanout_count(&sh->w[w].dropped, 1);
    }
}

/*
 * A worker's own event (SHM_FO_EVENT): fanned out like the feed's once
 * its bytes are an event record naming nodes we have; else dropped and
 * logged (a worker does not write garbage).
 */
static void
bk_fanout_event_rec(struct bk_fanout *f, struct bk_fanout_worker *fw,
                    const uint8_t *rec, uint32_t len)
{
    struct shm_fo_ev       ev;
    struct shm_fo_ev_field fl[SHM_FO_EV_FIELDS_MAX];

    if (shm_fo_ev_parse(rec, len, &ev, fl, SHM_FO_EV_FIELDS_MAX) < 0
        || ev.source >= f->as->ns.nnodes || ev.type >= f->as->ns.nnodes) {
        fprintf(stderr, "%s: worker %u: bad event record; dropped\n",
                bk_log, fw->slot);
        return;
    }
    bk_fanout_event(f, rec, len);
}

void
bk_fanout_event(struct bk_fanout *f, const uint8_t *rec, uint32_t len)
{
    uint64_t mask;

    if (f->n == 0 || f->fo.sh == NULL)
        return;
    if (f->pend_n != 0)
        bk_fanout_settle(f);            /* older changes first */
    /* The event exists now, then the mask (shm_fanout_event_mask has the
     * fence): a worker whose item came after the load missed nothing it
     * could have had. */
    mask = shm_fanout_event_mask(&f->fo) & f->up_mask;
    if (mask == 0)
        return;
    if (!f->filling && bk_fanout_take_block(f) != 0) {
        bk_fanout_event_lost(f, mask);
        return;
    }
    if (shm_blockpool_append(&f->pool, f->cur, SHM_FO_EVENT_SLOT, rec, len)
        != 0) {
        bk_fanout_flush(f);
        if (bk_fanout_take_block(f) != 0
            || shm_blockpool_append(&f->pool, f->cur, SHM_FO_EVENT_SLOT, rec,
                                    len) != 0) {
            bk_fanout_event_lost(f, mask);
            return;
        }
    }
    f->cur_mask |= mask;
    f->cur_events = true;
    bk_fanout_count(&f->fo.sh->events, 1);
}

void
bk_fanout_notify(struct bk_fanout *f, uint32_t slot, const void *bytes,
                 uint32_t len, const struct shm_value *m)
{
    /* The Write's case, kept lean (no frame for the other path's calls):
     * deferred while the pending array has room. */
    if (f->defer && len <= BK_FANOUT_PEND_BYTES && f->pend != NULL
        && f->pend_n < BK_FANOUT_PEND_MAX) {
        struct bk_fanout_pend *p = &f->pend[f->pend_n++];

        p->slot = slot;
        p->len = len;
        p->m = *m;
        shm_value_copy16(p->copy, bytes, len);
        p->bytes = p->copy;
        return;
    }
    bk_fanout_notify_any(f, slot, bytes, len, m);
}

/* bk_fanout_notify(), every case. */
static void
bk_fanout_notify_any(struct bk_fanout *f, uint32_t slot, const void *bytes,
                     uint32_t len, const struct shm_value *m)
{
    uint64_t mask;

    if (f->defer && len <= BK_FANOUT_PEND_BYTES && f->pend != NULL) {
        struct bk_fanout_pend *p;

        if (f->pend_n == BK_FANOUT_PEND_MAX)
            bk_fanout_settle(f);
        p = &f->pend[f->pend_n++];
        p->slot = slot;
        p->len = len;
        p->m = *m;
        shm_value_copy16(p->copy, bytes, len);
        p->bytes = p->copy;
        return;
    }
    if (f->pend_n != 0)
        bk_fanout_settle(f);            /* older changes first */
    /* Slot stored, then the mask: contract (1) at the top. */
    atomic_thread_fence(memory_order_seq_cst);
    mask = atomic_load_explicit(&f->as->vals.interest[slot],
                                memory_order_relaxed)
           & f->up_mask;
    if (mask != 0)
        bk_fanout_add(f, slot, mask, bytes, len, m);
}

/* The deferred changes: one fence, then their masks (contract (1)). */
static void
bk_fanout_settle(struct bk_fanout *f)
{
    const _Atomic uint64_t *interest = f->as->vals.interest;
    uint32_t                n = f->pend_n;

    f->pend_n = 0;
    atomic_thread_fence(memory_order_seq_cst);
    for (uint32_t i = 0; i < n; i++) {
        const struct bk_fanout_pend *p = &f->pend[i];
        uint64_t                     mask;

        mask = atomic_load_explicit(&interest[p->slot], memory_order_relaxed)
               & f->up_mask;
        if (mask != 0)
            bk_fanout_add(f, p->slot, mask, p->bytes, p->len, &p->m);
    }
}

/* A record of slot's change into the block, for the workers in mask. */
static void
bk_fanout_add(struct bk_fanout *f, uint32_t slot, uint64_t mask,
              const void *bytes, uint32_t len, const struct shm_value *m)
{
    size_t n;

    if ((uint64_t)len + SHM_FO_DV_EXTRA + sizeof(struct shm_block_rec)
        > f->rec_cap) {
        bk_fanout_lost(f, slot, mask);      /* never fits in a block */
        return;
    }
    memcpy(f->rec + 1, bytes, len);
    n = shm_fo_dv_finish_len(f->rec, len, m);
    if (!f->filling && bk_fanout_take_block(f) != 0) {
        bk_fanout_lost(f, slot, mask);
        return;
    }
    if (shm_blockpool_append(&f->pool, f->cur, slot, f->rec, (uint32_t)n)
        != 0) {
        bk_fanout_flush(f);
        if (bk_fanout_take_block(f) != 0
            || shm_blockpool_append(&f->pool, f->cur, slot, f->rec,
                                    (uint32_t)n) != 0) {
            bk_fanout_lost(f, slot, mask);
            return;
        }
    }
    f->cur_mask |= mask;
    if (f->cur_n < f->cur_max)
        f->cur_slots[f->cur_n++] = slot;
    bk_fanout_count(&f->fo.sh->notifications, 1);
}

void
bk_fanout_flush(struct bk_fanout *f)
{
    struct shm_fanout *sh = f->fo.sh;
    uint64_t           mask, m;

    if (f->pend_n != 0)
        bk_fanout_settle(f);
    if (!f->filling)
        return;
    f->filling = false;
    mask = f->cur_mask & f->up_mask;
    (void)shm_blockpool_publish(&f->pool, f->cur, mask);
    if (mask == 0)
        return;                         /* freed again at once */
    bk_fanout_count(&sh->blocks, 1);
    for (m = mask; m != 0; m &= m - 1) {
        unsigned                 w = (unsigned)__builtin_ctzll(m);
        struct bk_fanout_worker *fw = &f->w[w];
        uint64_t                 bit = UINT64_C(1) << w;

        if (shm_ring_push_spsc(&fw->notif, &f->cur) == 0) {
            fw->pushed_notif = true;
            continue;
        }
        /* Ring full: w never gets this block; it learns what it lost. */
        (void)shm_blockpool_disown(&f->pool, f->cur, w);
        bk_fanout_count(&sh->ring_full, 1);
        bk_fanout_count(&sh->w[w].ring_full, 1);
        if (f->cur_events
            && (atomic_load_explicit(&sh->event_interest,
                                     memory_order_relaxed) & bit))
            bk_fanout_event_lost(f, bit);
        for (uint32_t k = 0; k < f->cur_n; k++) {
            uint32_t s = f->cur_slots[k];

            if (atomic_load_explicit(&f->as->vals.interest[s],
                                     memory_order_relaxed) & bit)
                bk_fanout_lost(f, s, bit);
        }
    }
}

/* ------------------------------------------------------------ writes */

/* Reply-outbox bytes left after the records so far (a slot of slack). */
static uint32_t
bk_fanout_room(const struct bk_fanout_worker *fw)
{
    uint32_t used = fw->open_off == UINT32_MAX
                        ? fw->out_len
                        : fw->open_off + fw->open_len + fw->reply.slot_size;

    return used >= fw->out_cap ? 0 : fw->out_cap - used;
}

/* Finish the open results record: header, slots, zeroed tail. */
static void
bk_fanout_close_results(struct bk_fanout_worker *fw)
{
    const uint32_t        ss = fw->reply.slot_size;
    struct shm_fo_results r;
    uint32_t              nslots;

    if (fw->open_off == UINT32_MAX)
        return;
    nslots = shm_fo_slots(fw->open_len, ss);
    memset(&r, 0, sizeof(r));
    r.hdr.kind = SHM_FO_RESULTS;
    r.hdr.nslots = (uint16_t)nslots;
    r.hdr.len = fw->open_len;
    r.id = fw->open_id;
    r.first_op = fw->open_first;
    r.count = fw->open_count;
    memcpy(fw->out + fw->open_off, &r, sizeof(r));
    memset(fw->out + fw->open_off + fw->open_len, 0,
           (size_t)nslots * ss - fw->open_len);
    fw->out_len = fw->open_off + nslots * ss;
    fw->open_off = UINT32_MAX;
}

/*
 * Add one result to fw's reply outbox: to the open record when it is the
 * next operation of the same request and the record stays within a ring,
 * else in a new record.  false when there is no room (the caller checked
 * room before taking the request, so only a broker bug).
 */
static inline bool
bk_fanout_result(struct bk_fanout_worker *fw, uint32_t id, uint32_t op,
                 ua_status st)
{
    /* Inline, the common case: the next result of the open record. */
    if (fw->open_off != UINT32_MAX && fw->open_id == id
        && fw->open_first + fw->open_count == op
        && fw->open_len + 4 <= fw->open_max) {
        memcpy(fw->out + fw->open_off + fw->open_len, &st, 4);
        fw->open_len += 4;
        fw->open_count++;
        return true;
    }
    return bk_fanout_result_open(fw, id, op, st);
}

/* bk_fanout_result() when it starts a record. */
static bool
bk_fanout_result_open(struct bk_fanout_worker *fw, uint32_t id, uint32_t op,
                      ua_status st)
{
    const uint32_t ss = fw->reply.slot_size;
    uint64_t       max;

    bk_fanout_close_results(fw);
    if (fw->out_len + (uint64_t)shm_fo_slots(sizeof(struct shm_fo_results)
                                             + 4, ss) * ss > fw->out_cap)
        return false;
    max = (uint64_t)fw->reply.size * ss;
    if (max > UINT16_MAX * (uint64_t)ss)
        max = UINT16_MAX * (uint64_t)ss;
    if (max > fw->out_cap - fw->out_len)
        max = fw->out_cap - fw->out_len;
    fw->open_off = fw->out_len;
    fw->open_id = id;
    fw->open_first = op;
    fw->open_count = 1;
    fw->open_len = sizeof(struct shm_fo_results) + 4;
    fw->open_max = (uint32_t)max;
    memcpy(fw->out + fw->open_off + sizeof(struct shm_fo_results), &st, 4);
    return true;
}

/* Push fw's reply outbox: all at once, else record by record. */
static void
bk_fanout_push_replies(struct bk_fanout_worker *fw)
{
    const uint32_t    ss = fw->reply.slot_size;
    uint32_t          off = 0;
    struct shm_fo_hdr h;

    bk_fanout_close_results(fw);        /* pushed records are final */
    if (fw->out_len == 0)
        return;
    if (shm_ring_push_n_spsc(&fw->reply, fw->out, fw->out_len / ss) == 0) {
        fw->out_len = 0;
        fw->pushed_reply = true;
        fw->stuck = false;
        return;
    }
    while (off < fw->out_len) {
        memcpy(&h, fw->out + off, sizeof(h));
        if (shm_ring_push_n_spsc(&fw->reply, fw->out + off, h.nslots) != 0)
            break;
        off += (uint32_t)h.nslots * ss;
    }
    if (off != 0) {
        memmove(fw->out, fw->out + off, fw->out_len - off);
        fw->out_len -= off;
        fw->pushed_reply = true;
    }
    /* Room for the results of one more request record, or wait. */
    fw->stuck = fw->out_cap - fw->out_len < fw->f->res_need;
}

/*
 * The open results record of fw while a request record's loop appends to
 * it: the next result goes to p when its operation is next and p < end.
 * bk_fanout_cur_load() takes it from fw (nothing to append to when the
 * open record is another request's), bk_fanout_cur_store() gives back
 * what was appended; the loop calls bk_fanout_result() in between only.
 */
struct bk_fanout_cur {
    uint8_t *start;
    uint8_t *p;
    uint8_t *end;
    uint32_t next;
};

static inline void
bk_fanout_cur_load(struct bk_fanout_worker *fw, uint32_t id,
                   struct bk_fanout_cur *c)
{
    if (fw->open_off == UINT32_MAX || fw->open_id != id) {
        c->start = c->p = c->end = NULL;
        c->next = 0;
        return;
    }
    c->start = c->p = fw->out + fw->open_off + fw->open_len;
    c->end = c->p + ((fw->open_max - fw->open_len) & ~3u);
    c->next = fw->open_first + fw->open_count;
}

static inline void
bk_fanout_cur_store(struct bk_fanout_worker *fw, struct bk_fanout_cur *c)
{
    uint32_t n;

    if (c->p == c->start)
        return;
    n = (uint32_t)(c->p - c->start);
    fw->open_len += n;
    fw->open_count += n / 4;
    c->start = c->p;
}

/* Apply the operations of one SHM_FO_WRITE record in f->in. */
static void
bk_fanout_write_rec(struct bk_fanout *f, struct bk_fanout_worker *fw,
                    uint32_t len)
{
    struct shm_fo_write           rec;
    struct bk_fanout_cur          c;
    const struct bk_write_result *res = f->res;
    uint32_t                      n;

    memcpy(&rec, f->in, sizeof(rec));
    f->defer = true;
    n = bk_write_apply_ops(f->as, f->in + sizeof(rec), len - sizeof(rec),
                           rec.nops < f->res_max ? rec.nops : f->res_max,
                           &f->arena, f->now, f->res);
    f->defer = false;
    if (f->pend_n != 0)
        bk_fanout_settle(f);
    bk_fanout_cur_load(fw, rec.id, &c);
    for (uint32_t k = 0; k < n; k++) {
        /* Most results are the next of the open record: a store. */
        if (res[k].op == c.next && c.p < c.end) {
            memcpy(c.p, &res[k].st, 4);
            c.p += 4;
            c.next++;
        } else {
            bk_fanout_cur_store(fw, &c);
            (void)bk_fanout_result(fw, rec.id, res[k].op, res[k].st);
            bk_fanout_cur_load(fw, rec.id, &c);
        }
    }
    bk_fanout_cur_store(fw, &c);
    bk_fanout_count(&f->fo.sh->writes, rec.nops);
}

int
bk_fanout_call_reply(struct bk_fanout *f, unsigned worker, uint32_t gen,
                     uint32_t id, uint32_t op, ua_status st,
                     const uint8_t *out, uint32_t out_len, uint32_t nout)
{
    struct bk_fanout_worker  *fw;
    struct shm_fo_call_result r;
    uint32_t                  ss, nslots, reserve;
    uint64_t                  len = sizeof(r) + (uint64_t)out_len;
    uint8_t                  *p;

    if (worker >= f->n)
        return -EPIPE;
    fw = &f->w[worker];
    if (!fw->up || fw->gen != gen || fw->out == NULL)
        return -EPIPE;
    ss = fw->reply.slot_size;
    nslots = shm_fo_slots(len, ss);
    if (nslots > fw->reply.size || nslots > UINT16_MAX)
        return -EMSGSIZE;
    bk_fanout_close_results(fw);
    /* The room a Write record's results may need stays free; an answer
     * given while its record is taken may use it (the drain made sure of
     * that room before it took the record, and looks again before the
     * next). */
    reserve = f->calling ? 0 : f->res_need;
    if ((uint64_t)fw->out_len + (uint64_t)nslots * ss + reserve
        > fw->out_cap) {
        bk_fanout_push_replies(fw);
        if ((uint64_t)fw->out_len + (uint64_t)nslots * ss + reserve
            > fw->out_cap) {
            if (!evtimer_pending(&f->retry, NULL)) {
                struct timeval tv = { 0, BK_FANOUT_RETRY_US };

                evtimer_add(&f->retry, &tv);
            }
            return -ENOSPC;
        }
    }
    p = fw->out + fw->out_len;
    memset(&r, 0, sizeof(r));
    r.hdr.kind = SHM_FO_CALL_RESULT;
    r.hdr.nslots = (uint16_t)nslots;
    r.hdr.len = (uint32_t)len;
    r.id = id;
    r.op = op;
    r.status = st;
    r.nout = nout;
    r.out_len = out_len;
    memcpy(p, &r, sizeof(r));
    if (out_len != 0)
        memcpy(p + sizeof(r), out, out_len);
    memset(p + len, 0, (size_t)nslots * ss - (size_t)len);
    fw->out_len += nslots * ss;
    return 0;
}

/* One SHM_FO_CALL record in f->in: to the methods module. */
static void
bk_fanout_call_rec(struct bk_fanout *f, struct bk_fanout_worker *fw,
                   uint32_t len)
{
    struct shm_fo_call rec;

    if (f->on_call != NULL) {
        f->calling = true;
        f->on_call(f->call_arg, fw->slot, f->in, len);
        f->calling = false;
        return;
    }
    memcpy(&rec, f->in, sizeof(rec));
    (void)bk_fanout_call_reply(f, fw->slot, fw->gen, rec.id, rec.op,
                               UA_BAD_NOT_IMPLEMENTED, NULL, 0, 0);
}

/*
 * Take fw's Write records, apply them, gather their results.  The number
 * of records taken.
 */
static uint32_t
bk_fanout_drain(struct bk_fanout *f, struct bk_fanout_worker *fw)
{
    const uint32_t    ss = fw->req.slot_size;
    struct shm_fo_hdr h;
    int               rc, k;

    for (k = 0; k < BK_FANOUT_REQ_BATCH; k++) {
        /* Room for the results of the largest record before taking one. */
        if (bk_fanout_room(fw) < f->res_need) {
            bk_fanout_push_replies(fw);
            if (bk_fanout_room(fw) < f->res_need) {
                fw->stuck = true;
                return (uint32_t)k;
            }
        }
        rc = shm_ring_pop_spsc(&fw->req, f->in);
        if (rc != 0)
            return (uint32_t)k;
        memcpy(&h, f->in, sizeof(h));
        if (!shm_fo_hdr_ok(&h, ss, fw->req.size)
            || (uint64_t)h.nslots * ss > f->in_cap
            || (h.nslots > 1
                && shm_ring_pop_n_spsc(&fw->req, f->in + ss, h.nslots - 1u)
                       != (int)h.nslots - 1)) {
            /* A worker writing garbage: drop what it queued. */
            fprintf(stderr, "%s: worker %u: bad request record; dropping "
                    "its request ring\n", bk_log, fw->slot);
            (void)shm_ring_discard_spsc(&fw->req);
            return (uint32_t)k + 1;
        }
        if (h.kind == SHM_FO_WRITE && h.len >= sizeof(struct shm_fo_write))
            bk_fanout_write_rec(f, fw, h.len);
        else if (h.kind == SHM_FO_CALL
                 && h.len >= sizeof(struct shm_fo_call))
            bk_fanout_call_rec(f, fw, h.len);
        else if (h.kind == SHM_FO_EVENT && h.len > sizeof(h))
            bk_fanout_event_rec(f, fw, f->in + sizeof(h),
                                h.len - (uint32_t)sizeof(h));
    }
    return (uint32_t)k;
}

/* ------------------------------------------------------------ the loop */

bool
bk_fanout_prepare(struct bk_fanout *f, int64_t now)
{
    bool     sleep = true, linger;
    bool     a, b;
    uint32_t took = 0;
    uint64_t mono = 0;

    if (f->n == 0)
        return true;
    f->now = now;
    if (f->on_flush != NULL)
        f->on_flush(f->call_arg);       /* answers waiting for room */
    for (unsigned i = 0; i < f->n; i++)
        if (f->w[i].up)
            took += bk_fanout_drain(f, &f->w[i]);
    bk_fanout_flush(f);
    for (unsigned i = 0; i < f->n; i++)
        if (f->w[i].up
            && (f->w[i].out_len != 0 || f->w[i].open_off != UINT32_MAX))
            bk_fanout_push_replies(&f->w[i]);
    for (uint64_t m = f->lost_pending & f->up_mask; m != 0; m &= m - 1)
        shm_fanout_lost_publish(&f->fo, (uint32_t)__builtin_ctzll(m));
    f->lost_pending = 0;
    /*
     * Linger: several requests came in this iteration (or one while we
     * lingered already): more are likely soon.  Leave the rings unmarked
     * (a worker pushing now rings no bell) and block at most linger_us;
     * the iteration after that finds requests (linger again) or none
     * (mark the rings and sleep).  A lone request from sleep does not
     * linger: a single client's next Write comes a round trip later, and
     * would only wait for the timer.
     */
    linger = (took >= 2 || (took == 1 && f->lingering))
             && f->linger_fd != -1;
    f->lingering = linger;
    for (unsigned i = 0; i < f->n; i++) {
        struct bk_fanout_worker *fw = &f->w[i];

        if (!fw->up)
            continue;
        if (fw->pushed_notif || fw->pushed_reply) {
            /* Both evaluated: each remembers the sleep it rang for.  A
             * worker's promise covers blocks, not Write results. */
            if (fw->pushed_notif && mono == 0)
                mono = bk_fanout_mono_ms();
            a = fw->pushed_notif
                && shm_ring_needs_bell_by(&fw->notif, mono, f->defer_max);
            b = fw->pushed_reply && shm_ring_needs_bell(&fw->reply);
            if (a || b)
                (void)shm_doorbell_ring(&fw->bell);
            fw->pushed_notif = fw->pushed_reply = false;
        }
        if (fw->stuck || fw->out_len != 0) {
            /* The worker will make room: look again in a moment rather
             * than spin (its requests wait in its ring meanwhile). */
            struct timeval tv = { 0, BK_FANOUT_RETRY_US };

            if (!evtimer_pending(&f->retry, NULL))
                evtimer_add(&f->retry, &tv);
        } else if (linger) {
            if (shm_ring_count_spsc(&fw->req) != 0)
                sleep = false;
        } else if (!shm_ring_sleep_prepare(&fw->req)) {
            sleep = false;
        }
    }
    if (linger && sleep)
        bk_fanout_linger_arm(f, f->linger_us);
    else if (!linger && f->linger_armed)
        bk_fanout_linger_arm(f, 0);
    return sleep;
}

/* Arm the linger timer for us microseconds (0: disarm). */
static void
bk_fanout_linger_arm(struct bk_fanout *f, uint32_t us)
{
    if (shm_linger_arm(f->linger_fd, us) == 0)
        f->linger_armed = us != 0;
}

/* The linger timer expired: clear it; the next prepare looks again. */
static void
bk_fanout_on_linger(evutil_socket_t fd, short what, void *arg)
{
    struct bk_fanout *f = arg;

    (void)what;
    f->linger_armed = false;
    shm_linger_clear(fd);
}

/* Only there to end a blocking iteration while a worker is stuck. */
static void
bk_fanout_on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

void
bk_fanout_wake(struct bk_fanout *f)
{
    for (unsigned i = 0; i < f->n; i++)
        if (f->w[i].up)
            shm_ring_wake_clear(&f->w[i].req);
}
