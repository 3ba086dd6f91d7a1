/*
 * broker/fanout.c: notification blocks, notification rings, lost marks
 * and the doorbells on the broker's side (see fanout.h for the picture).
 *
 * Ordering contract (with the workers; the rings' and the pool's own
 * contracts are at the top of shm/ring.c and shm/blockpool.c; the
 * store-then-mask rule of a change is broker/value.c's contract (1)):
 *  (2) Lost marks are published (shm_fanout_lost_publish, release) only at
 *      the end of an iteration, after the block of that iteration was
 *      pushed: a worker that sees lost_seq move and then drains its ring
 *      has every block pushed before the marks, so the value it reads from
 *      the slot for the overflow is not older than any it got.
 *  (3) An event record goes to the workers whose event-interest bit is
 *      set when the event exists (shm_fanout_event_mask has the fence): a
 *      worker whose item came after the load missed nothing it could have
 *      had.
 *  (4) The change log (shm/park.h): every record added to a block for a
 *      worker (a bit of log_mask: not the historian's, which parks no
 *      session and reads no log) is logged before the block is
 *      published, in the same order.  A worker slot's cut is taken
 *      after the block being filled was flushed and before the slot is
 *      up: what was logged before the cut never reaches its new worker's
 *      ring, what is logged after it does (when its bit is set).  A dead
 *      worker with parked sessions keeps its interest bits, so the
 *      changes its sessions watch are logged until its successor has
 *      taken them over (it clears what it does not watch).
 */
#include "fanout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "shm/park.h"

static int bk_fanout_rundir(const char *dir, char *err, size_t errlen);
static void bk_fanout_on_bell(evutil_socket_t fd, short what, void *arg);
static void bk_fanout_lost(struct bk_fanout *f, uint32_t slot, uint64_t mask);
static void bk_fanout_event_lost(struct bk_fanout *f, uint64_t mask,
                                 uint32_t n);
static int bk_fanout_take_block(struct bk_fanout *f);
static uint8_t *bk_fanout_room(struct bk_fanout *f, uint32_t max);

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
bk_fanout_init(struct bk_fanout *f, const struct shm_segment *seg,
               const struct shm_values *vals, struct event_base *base,
               const struct bk_config *c, char *err, size_t errlen)
{
    int rc;

    memset(f, 0, sizeof(*f));
    f->base = base;
    f->conf = c;
    f->vals = *vals;
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        f->w[i].f = f;
        f->w[i].slot = i;
        f->w[i].bell.sock = -1;
        f->w[i].bell.fd = -1;
    }
    rc = shm_blockpool_locate(&f->pool, seg);
    if (rc == -ENOENT)
        return 0;                   /* no fan-out in this segment */
    if (rc != 0 || shm_fanout_locate(&f->fo, seg) != 0) {
        snprintf(err, errlen, "fan-out regions do not check out");
        return -1;
    }
    if (bk_fanout_rundir(c->runtime_dir, err, errlen) != 0)
        return -1;
    /* The pool's pages are allocated and mapped by the build's thread
     * (broker/addrspace.c), not as the hand first comes round to each of
     * them mid-run. */
    f->rec_cap = shm_blockpool_capacity(f->pool.block_size);
    f->cur_max = f->rec_cap / sizeof(struct shm_block_rec) + 1;
    f->park = shm_park_of(seg);
    /* The workers' slots; the historian's after them (bk_config_slots)
     * is not logged. */
    f->log_mask = c->workers >= 64 ? ~UINT64_C(0)
                                   : (UINT64_C(1) << c->workers) - 1;
    f->rec = bk_alloc(f->rec_cap);
    f->cur_slots = bk_alloc((size_t)f->cur_max * sizeof(*f->cur_slots));
    if (f->rec == NULL || f->cur_slots == NULL) {
        snprintf(err, errlen, "fan-out: out of memory");
        goto fail;
    }
    /* The workers' slots and the historian's (bk_config_slots). */
    for (unsigned i = 0; i < bk_config_slots(c) && i < SHM_WORKERS_MAX;
         i++) {
        if (shm_ring_locate(&f->w[i].notif, seg, i, SHM_RING_NOTIF) != 0) {
            snprintf(err, errlen, "worker %u: rings do not check out", i);
            goto fail;
        }
        f->n = i + 1;
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
    return 0;
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
    }
    bk_free(f->rec);
    bk_free(f->cur_slots);
    f->rec = NULL;
    f->cur_slots = NULL;
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
    /* Contract (4): nothing logged before the cut reaches the new ring. */
    if (f->park != NULL) {
        bk_fanout_flush(f);
        shm_park_cut(f->park, slot);
    }
    f->up_mask |= UINT64_C(1) << slot;
    return 0;
}

void
bk_fanout_worker_dead(struct bk_fanout *f, unsigned slot)
{
    struct bk_fanout_worker *fw;
    struct shm_values       *v = &f->vals;
    uint64_t                 bit = UINT64_C(1) << slot;

    if (slot >= f->n)
        return;
    fw = &f->w[slot];
    /* 1. Stop pushing to it; 2. empty its ring; 3. drop its references
     * (blockpool.h "when a worker dies"). */
    f->up_mask &= ~bit;
    (void)shm_ring_reset_dead_consumer(&fw->notif);
    (void)shm_blockpool_reclaim_worker(&f->pool, slot);
    /* Its monitored items are gone: no interest, no lost marks.  Unless
     * it parked sessions: then its successor takes them over and the
     * changes they watch are logged meanwhile (contract (4)). */
    if (f->park == NULL || shm_park_parked(f->park, slot) == 0)
        for (uint32_t i = 0; i < v->nslots; i++)
            if (atomic_load_explicit(&v->interest[i], memory_order_relaxed)
                & bit)
                shm_interest_clear(v, i, slot);
    shm_fanout_forget_worker(&f->fo, slot);
    atomic_fetch_and(&f->fo.sh->event_interest, ~bit);
    fw->pushed_notif = false;
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

/* ------------------------------------------------------------ blocks */

/* Tell the workers in mask that they miss a value of slot (at publish). */
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

/* Tell the workers in mask that they miss n events (at publish). */
static void
bk_fanout_event_lost(struct bk_fanout *f, uint64_t mask, uint32_t n)
{
    struct shm_fanout *sh = f->fo.sh;

    f->lost_pending |= mask;
    bk_fanout_count(&sh->notifications_dropped,
                    (uint64_t)__builtin_popcountll(mask) * n);
    for (uint64_t m = mask; m != 0; m &= m - 1) {
        unsigned w = (unsigned)__builtin_ctzll(m);

        shm_fanout_event_lost(&f->fo, w, n);
        bk_fanout_count(&sh->w[w].dropped, n);
    }
}

/*
 * Start a block.  0, or -ENOSPC (pool exhausted, counted).  After a
 * failure the pool is not probed again before the end of the iteration
 * (bk_fanout_lost_publish): a probe of an exhausted pool walks every
 * block, and a batch of thousands of changes would walk it once per
 * change (two thirds of the broker's CPU with a historian behind).
 */
static int
bk_fanout_take_block(struct bk_fanout *f)
{
    if (f->dry || shm_blockpool_alloc(&f->pool, &f->cur) != 0
        || (f->cur_b = shm_blockpool_filling_block(&f->pool, f->cur))
               == NULL) {
        f->dry = true;
        bk_fanout_count(&f->fo.sh->blocks_exhausted, 1);
        return -ENOSPC;
    }
    shm_blockpool_set_ms(&f->pool, f->cur, bk_clock_ms());
    f->filling = true;
    f->cur_mask = 0;
    f->cur_n = 0;
    f->cur_events = 0;
    return 0;
}

/*
 * Room for a record of up to max bytes in the block being filled (one
 * taken, or the full one flushed and another taken): where its bytes go
 * (shm_block_reserve on the block's header, which we keep while we fill
 * it), or NULL when the pool has no block.
 */
static uint8_t *
bk_fanout_room(struct bk_fanout *f, uint32_t max)
{
    uint8_t *p;

    if (!f->filling && bk_fanout_take_block(f) != 0)
        return NULL;
    p = shm_block_reserve(f->cur_b, f->rec_cap, max);
    if (p != NULL)
        return p;
    bk_fanout_flush(f);
    if (bk_fanout_take_block(f) != 0)
        return NULL;
    return shm_block_reserve(f->cur_b, f->rec_cap, max);
}

/*
 * The record is written in its place in the block (no copy through a
 * buffer) and logged from there; only a change that goes to no block (a
 * dead worker's bits alone, the pool exhausted) is put together in
 * f->rec to be logged.
 */
void
bk_fanout_add(struct bk_fanout *f, uint32_t slot, uint64_t mask,
              const void *bytes, uint32_t len, const struct shm_value *m)
{
    uint64_t live = mask & f->up_mask;  /* a dead worker's: logged only */
    bool     log = f->park != NULL && (mask & f->log_mask) != 0;
    uint8_t *p;
    size_t   n;

    if ((uint64_t)len + SHM_FO_DV_EXTRA + sizeof(struct shm_block_rec)
        > f->rec_cap) {
        if (log)                    /* its time, for a successor */
            shm_park_log(f->park, slot, m->server_ts, NULL, UINT32_MAX);
        if (live != 0)
            bk_fanout_lost(f, slot, live);  /* never fits in a block */
        return;
    }
    if (live == 0
        || (p = bk_fanout_room(f, len + SHM_FO_DV_EXTRA)) == NULL) {
        if (log) {                  /* contract (4) */
            memcpy(f->rec + 1, bytes, len);
            n = shm_fo_dv_finish_len(f->rec, len, m);
            shm_park_log(f->park, slot, m->server_ts, f->rec, (uint32_t)n);
        }
        if (live != 0)
            bk_fanout_lost(f, slot, live);
        return;
    }
    memcpy(p + 1, bytes, len);
    n = shm_fo_dv_finish_len(p, len, m);
    if (log)                        /* contract (4) */
        shm_park_log(f->park, slot, m->server_ts, p, (uint32_t)n);
    shm_block_commit(f->cur_b, slot, (uint32_t)n);
    f->cur_mask |= live;
    if (f->cur_n < f->cur_max)
        f->cur_slots[f->cur_n++] = slot;
    bk_fanout_count(&f->fo.sh->notifications, 1);
}

void
bk_fanout_event(struct bk_fanout *f, const uint8_t *rec, uint32_t len)
{
    uint64_t mask;

    if (f->n == 0 || f->fo.sh == NULL)
        return;
    /* The event exists now, then the mask: contract (3). */
    mask = shm_fanout_event_mask(&f->fo) & f->up_mask;
    if (mask == 0)
        return;
    if (!f->filling && bk_fanout_take_block(f) != 0) {
        bk_fanout_event_lost(f, mask, 1);
        return;
    }
    if (shm_blockpool_append(&f->pool, f->cur, SHM_FO_EVENT_SLOT, rec, len)
        != 0) {
        bk_fanout_flush(f);
        if (bk_fanout_take_block(f) != 0
            || shm_blockpool_append(&f->pool, f->cur, SHM_FO_EVENT_SLOT, rec,
                                    len) != 0) {
            bk_fanout_event_lost(f, mask, 1);
            return;
        }
    }
    f->cur_mask |= mask;
    f->cur_events++;
    bk_fanout_count(&f->fo.sh->events, 1);
}

void
bk_fanout_flush(struct bk_fanout *f)
{
    struct shm_fanout *sh = f->fo.sh;
    uint64_t           mask, m;

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
        if (f->cur_events != 0
            && (atomic_load_explicit(&sh->event_interest,
                                     memory_order_relaxed) & bit))
            bk_fanout_event_lost(f, bit, f->cur_events);
        for (uint32_t k = 0; k < f->cur_n; k++) {
            uint32_t s = f->cur_slots[k];

            if (atomic_load_explicit(&f->vals.interest[s],
                                     memory_order_relaxed) & bit)
                bk_fanout_lost(f, s, bit);
        }
    }
}

bool
bk_fanout_backlogged(const struct bk_fanout *f)
{
    uint32_t lim;

    if (f == NULL || f->n == 0)
        return false;
    lim = f->pool.nblocks;
    for (uint64_t m = f->up_mask; m != 0; m &= m - 1) {
        const struct bk_fanout_worker *fw = &f->w[__builtin_ctzll(m)];
        uint32_t l = fw->notif.size < lim ? fw->notif.size : lim;

        if (shm_ring_backlog_spsc(&fw->notif) >= l / 2)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------ the end of
 * an iteration */

void
bk_fanout_lost_publish(struct bk_fanout *f)
{
    f->dry = false;             /* the pool may have room again */
    for (uint64_t m = f->lost_pending & f->up_mask; m != 0; m &= m - 1)
        shm_fanout_lost_publish(&f->fo, (uint32_t)__builtin_ctzll(m));
    f->lost_pending = 0;
}

void
bk_fanout_bells(struct bk_fanout *f, uint64_t replies)
{
    uint64_t mono = 0;

    for (unsigned i = 0; i < f->n; i++) {
        struct bk_fanout_worker *fw = &f->w[i];
        uint64_t                 bit = UINT64_C(1) << i;
        bool                     a;

        if (!(f->up_mask & bit) || !(fw->pushed_notif || (replies & bit)))
            continue;
        /* A worker's promise covers blocks, not Write results. */
        if (fw->pushed_notif && mono == 0)
            mono = bk_clock_ms();
        a = fw->pushed_notif
            && shm_ring_needs_bell_by(&fw->notif, mono, f->defer_max);
        if (a || (replies & bit))
            (void)shm_doorbell_ring(&fw->bell);
        fw->pushed_notif = false;
    }
}

void
bk_fanout_count_feed(struct bk_fanout *f, uint64_t values, uint64_t events)
{
    if (f == NULL || f->fo.sh == NULL)
        return;
    if (values != 0)
        bk_fanout_count(&f->fo.sh->feed_values, values);
    if (events != 0)
        atomic_fetch_add_explicit(&f->fo.sh->feed_events, events,
                                  memory_order_relaxed);
}
