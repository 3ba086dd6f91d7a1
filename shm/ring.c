/*
 * shm/ring.c: SPSC rings in shared memory and their wake-up protocol.
 *
 * Ordering contract.  Every shared index has one writer; the other side
 * only loads it.
 *
 *  (1) Publish.  The producer copies an item into slot tail & mask, then
 *      release-stores tail + 1.  The consumer acquire-loads tail before it
 *      copies any slot below it.  [push release -> pop acquire]
 *  (2) Consume.  The consumer copies slots out, then release-stores
 *      head + n.  The producer acquire-loads head before it overwrites any
 *      slot below head + size, so the consumer's reads of a slot happen
 *      before the producer's next write to it.  [pop release -> push acquire]
 *  (3) Wake-up (Dekker, PG latch discipline, io_uring SQ_NEED_WAKEUP):
 *        consumer: store consumer_sleeping := odd; FENCE(seq_cst);
 *                  load tail; block only if it still equals head.
 *        producer: store tail (1); FENCE(seq_cst); load consumer_sleeping;
 *                  ring only if odd.
 *      With a full fence on both sides at least one of them sees the other's
 *      store: either the consumer sees the new tail and does not block, or
 *      the producer sees the mark and rings.  A release/acquire pair is not
 *      enough here: each side stores one word and then loads another.
 *      [sleep_prepare fence <-> needs_bell fence]
 *  (4) The consumer drains its doorbell before it clears the mark and looks
 *      at the ring again, so a ring that arrives after the look is still
 *      pending when it next blocks (no wake-up is consumed unseen).
 *  (5) A promise (shm_ring_sleep_prepare_by): the consumer stores wake_ms,
 *      then release-stores the new odd mark; the producer acquire-loads
 *      the mark, loads wake_ms, and loads the mark again.  Seeing mark s
 *      (acquire) it sees at least the promise stored before s; seeing s
 *      again after reading wake_ms, no later sleep has stored another
 *      promise over it (the next sleep stores its promise only after the
 *      consumer woke from s, which moves the mark to even first).  A
 *      deferred bell is not remembered: the next push asks again.  The
 *      consumer keeps its promise (it blocks at most until wake_ms and
 *      then looks at the ring), so a deferred item waits no longer than
 *      that.
 *
 * consumer_sleeping counts: +1 on every sleep (to odd) and every wake (to
 * even).  The producer remembers the odd value it last rang for and rings
 * once per sleep; a new sleep is always a new value, so no needed ring is
 * suppressed (a respawned consumer that finds the word odd skips to the
 * next odd value).  Doorbells that get lost (a full nanomsg queue) do not
 * matter: a full queue means unread bells, which keep the consumer's fd
 * readable.
 *
 * Corruption: each side trusts only its own index and the geometry it
 * checked at attach.  A peer index is accepted only when tail - head <= size
 * (unsigned, free-running); otherwise the call returns -EPROTO and touches
 * no slot.
 */
#include "ring.h"

#include <errno.h>
#include <string.h>

static bool shm_ring_geometry_ok(uint32_t slots, uint32_t slot_size);
static void shm_ring_copy_in(struct shm_ring_ref *r, uint32_t at,
                             const uint8_t *src, uint32_t n);
static void shm_ring_copy_out(const struct shm_ring_ref *r, uint32_t at,
                              uint8_t *dst, uint32_t n);
static uint32_t shm_ring_round_pow2(uint32_t x);
static int shm_ring_plan_norm(const struct shm_plan *p,
                              struct shm_rings *t);

static bool
shm_ring_geometry_ok(uint32_t slots, uint32_t slot_size)
{
    return slots >= SHM_RING_SLOTS_MIN && slots <= SHM_RING_SLOTS_MAX
           && (slots & (slots - 1)) == 0 && slot_size != 0
           && slot_size <= SHM_RING_SLOT_MAX
           && slot_size % SHM_RING_SLOT_ALIGN == 0;
}

uint64_t
shm_ring_bytes(uint32_t slots, uint32_t slot_size)
{
    uint64_t b;

    if (!shm_ring_geometry_ok(slots, slot_size))
        return 0;
    b = sizeof(struct shm_ring) + (uint64_t)slots * slot_size;
    return (b + SHM_CACHELINE - 1) & ~(uint64_t)(SHM_CACHELINE - 1);
}

int
shm_ring_init(void *mem, uint64_t avail, uint32_t slots, uint32_t slot_size)
{
    struct shm_ring *sh = mem;
    uint64_t         need = shm_ring_bytes(slots, slot_size);

    if (need == 0 || need > avail || (uintptr_t)mem % SHM_CACHELINE != 0)
        return -EINVAL;
    memset(sh, 0, sizeof(*sh));
    sh->size = slots;
    sh->mask = slots - 1;
    sh->slot_size = slot_size;
    atomic_store_explicit(&sh->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&sh->head, 0, memory_order_relaxed);
    atomic_store_explicit(&sh->consumer_sleeping, 0, memory_order_relaxed);
    /* Peers attach later, after fork/exec or a handshake that orders this. */
    sh->magic = SHM_RING_MAGIC;
    return 0;
}

int
shm_ring_attach(struct shm_ring_ref *r, void *mem, uint64_t avail,
                uint32_t slot_size)
{
    struct shm_ring *sh = mem;
    uint32_t         size, mask, ss, head, tail;

    memset(r, 0, sizeof(*r));
    if (mem == NULL || avail < sizeof(*sh)
        || (uintptr_t)mem % SHM_CACHELINE != 0)
        return -EPROTO;
    /* Read the geometry once; the ref keeps the copy it checked. */
    size = sh->size;
    mask = sh->mask;
    ss = sh->slot_size;
    if (sh->magic != SHM_RING_MAGIC || !shm_ring_geometry_ok(size, ss)
        || mask != size - 1 || ss != slot_size
        || shm_ring_bytes(size, ss) > avail)
        return -EPROTO;
    /* Pairs with the release stores in pop (head) and push (tail). */
    head = atomic_load_explicit(&sh->head, memory_order_acquire);
    tail = atomic_load_explicit(&sh->tail, memory_order_acquire);
    if (tail - head > size)
        return -EPROTO;
    r->sh = sh;
    r->slots = (uint8_t *)mem + sizeof(*sh);
    r->size = size;
    r->mask = mask;
    r->slot_size = ss;
    r->head = head;
    r->tail = tail;
    r->sleep_seq = atomic_load_explicit(&sh->consumer_sleeping,
                                        memory_order_relaxed);
    r->bell_seq = 0;            /* even: never equals a sleeping value */
    return 0;
}

/* Copy n items into the slots from index `at` on, wrapping once. */
static void
shm_ring_copy_in(struct shm_ring_ref *r, uint32_t at, const uint8_t *src,
                 uint32_t n)
{
    uint32_t i = at & r->mask;
    uint32_t first = r->size - i < n ? r->size - i : n;

    memcpy(r->slots + (size_t)i * r->slot_size, src,
           (size_t)first * r->slot_size);
    if (first < n)
        memcpy(r->slots, src + (size_t)first * r->slot_size,
               (size_t)(n - first) * r->slot_size);
}

static void
shm_ring_copy_out(const struct shm_ring_ref *r, uint32_t at, uint8_t *dst,
                  uint32_t n)
{
    uint32_t i = at & r->mask;
    uint32_t first = r->size - i < n ? r->size - i : n;

    memcpy(dst, r->slots + (size_t)i * r->slot_size,
           (size_t)first * r->slot_size);
    if (first < n)
        memcpy(dst + (size_t)first * r->slot_size, r->slots,
               (size_t)(n - first) * r->slot_size);
}

int
shm_ring_push_spsc(struct shm_ring_ref *r, const void *item)
{
    uint32_t tail = r->tail, head;

    if (tail - r->head >= r->size) {
        /*
         * Looks full: fetch the consumer's index.  Pairs with the release
         * store in shm_ring_pop_n_spsc(): its reads of the slots we are
         * about to reuse are done.
         */
        head = atomic_load_explicit(&r->sh->head, memory_order_acquire);
        if (tail - head > r->size)
            return -EPROTO;
        r->head = head;
        if (tail - head == r->size) {
            atomic_store_explicit(
                &r->sh->full,
                atomic_load_explicit(&r->sh->full, memory_order_relaxed) + 1,
                memory_order_relaxed);
            return -ENOSPC;
        }
    }
    memcpy(r->slots + (size_t)(tail & r->mask) * r->slot_size, item,
           r->slot_size);
    /* Publish the slot; pairs with the acquire load in pop. */
    atomic_store_explicit(&r->sh->tail, tail + 1, memory_order_release);
    r->tail = tail + 1;
    return 0;
}

int
shm_ring_push_n_spsc(struct shm_ring_ref *r, const void *items, uint32_t n)
{
    uint32_t tail = r->tail, head;

    if (n > r->size)
        return -EINVAL;
    if (n == 0)
        return 0;
    if (r->size - (tail - r->head) < n) {
        /* Pairs with the release store in shm_ring_pop_n_spsc(). */
        head = atomic_load_explicit(&r->sh->head, memory_order_acquire);
        if (tail - head > r->size)
            return -EPROTO;
        r->head = head;
        if (r->size - (tail - head) < n) {
            atomic_store_explicit(
                &r->sh->full,
                atomic_load_explicit(&r->sh->full, memory_order_relaxed) + 1,
                memory_order_relaxed);
            return -ENOSPC;
        }
    }
    shm_ring_copy_in(r, tail, items, n);
    /* Publish the batch; pairs with the acquire load in pop. */
    atomic_store_explicit(&r->sh->tail, tail + n, memory_order_release);
    r->tail = tail + n;
    return 0;
}

int
shm_ring_pop_spsc(struct shm_ring_ref *r, void *item)
{
    int rc = shm_ring_pop_n_spsc(r, item, 1);

    return rc < 0 ? rc : 0;
}

int
shm_ring_pop_n_spsc(struct shm_ring_ref *r, void *items, uint32_t n)
{
    uint32_t head = r->head, tail, avail = r->tail - head;

    if (n == 0)
        return 0;
    if (avail < n) {
        /*
         * Fetch the producer's index; pairs with the release store in
         * push: the slots below it are written.
         */
        tail = atomic_load_explicit(&r->sh->tail, memory_order_acquire);
        if (tail - head > r->size)
            return -EPROTO;
        r->tail = tail;
        avail = tail - head;
        if (avail == 0)
            return -EAGAIN;
    }
    if (avail > n)
        avail = n;
    shm_ring_copy_out(r, head, items, avail);
    /* Hand the slots back; pairs with the acquire load of head in push. */
    atomic_store_explicit(&r->sh->head, head + avail, memory_order_release);
    r->head = head + avail;
    return (int)avail;
}

uint32_t
shm_ring_count_spsc(struct shm_ring_ref *r)
{
    /* Pairs with the release store of tail in push. */
    uint32_t tail = atomic_load_explicit(&r->sh->tail, memory_order_acquire);

    if (tail - r->head > r->size)
        return 0;
    r->tail = tail;
    return tail - r->head;
}

uint32_t
shm_ring_backlog_spsc(const struct shm_ring_ref *r)
{
    uint32_t head = atomic_load_explicit(&r->sh->head, memory_order_relaxed);

    return r->tail - head > r->size ? 0 : r->tail - head;
}

bool
shm_ring_sleep_prepare(struct shm_ring_ref *r)
{
    return shm_ring_sleep_prepare_by(r, 0);
}

bool
shm_ring_sleep_prepare_by(struct shm_ring_ref *r, uint64_t wake_ms)
{
    struct shm_ring *sh = r->sh;
    uint32_t         s = (r->sleep_seq + 1) | 1u;  /* a new odd value */
    uint32_t         tail;

    r->sleep_seq = s;
    /*
     * The promise before the mark, the mark with release order: a
     * producer that sees this mark (acquire) sees this promise (5).
     */
    atomic_store_explicit(&sh->wake_ms, wake_ms, memory_order_relaxed);
    atomic_store_explicit(&sh->consumer_sleeping, s, memory_order_release);
    /*
     * Mark, then look: pairs with the fence in shm_ring_needs_bell() (the
     * producer stores tail, then looks at the mark).
     */
    atomic_thread_fence(memory_order_seq_cst);
    tail = atomic_load_explicit(&sh->tail, memory_order_relaxed);
    if (tail != r->head) {
        /* Items (or a corrupt tail, which the next pop reports). */
        r->sleep_seq = s + 1;
        atomic_store_explicit(&sh->consumer_sleeping, s + 1,
                              memory_order_relaxed);
        return false;
    }
    atomic_store_explicit(
        &sh->sleeps,
        atomic_load_explicit(&sh->sleeps, memory_order_relaxed) + 1,
        memory_order_relaxed);
    return true;
}

void
shm_ring_wake_clear(struct shm_ring_ref *r)
{
    if ((r->sleep_seq & 1u) == 0)
        return;
    r->sleep_seq++;
    /*
     * No fence needed: an awake consumer pops (acquire on tail) before it
     * can sleep again, and sleeping again goes through sleep_prepare.
     */
    atomic_store_explicit(&r->sh->consumer_sleeping, r->sleep_seq,
                          memory_order_relaxed);
}

bool
shm_ring_needs_bell(struct shm_ring_ref *r)
{
    return shm_ring_needs_bell_by(r, 0, 0);     /* no promise honoured */
}

bool
shm_ring_needs_bell_by(struct shm_ring_ref *r, uint64_t now_ms,
                       uint32_t max_wait)
{
    struct shm_ring *sh = r->sh;
    uint32_t         s;
    uint64_t         by;

    /*
     * Publish, then look at the mark: pairs with the fence in
     * shm_ring_sleep_prepare_by() (3).
     */
    atomic_thread_fence(memory_order_seq_cst);
    s = atomic_load_explicit(&sh->consumer_sleeping, memory_order_acquire);
    if ((s & 1u) == 0 || s == r->bell_seq)
        return false;
    by = atomic_load_explicit(&sh->wake_ms, memory_order_relaxed);
    /* Only the same sleep's promise counts: a mark read again unchanged
     * after the promise means the promise was this sleep's (5). */
    if (by != 0 && now_ms < by
        && r->tail - atomic_load_explicit(&sh->head, memory_order_relaxed)
               < max_wait
        && atomic_load_explicit(&sh->consumer_sleeping,
                                memory_order_acquire) == s) {
        atomic_store_explicit(
            &sh->deferred,
            atomic_load_explicit(&sh->deferred, memory_order_relaxed) + 1,
            memory_order_relaxed);
        return false;
    }
    r->bell_seq = s;
    atomic_store_explicit(
        &sh->bells, atomic_load_explicit(&sh->bells, memory_order_relaxed) + 1,
        memory_order_relaxed);
    return true;
}

uint32_t
shm_ring_discard_spsc(struct shm_ring_ref *r)
{
    /* Pairs with the release store of tail in push. */
    uint32_t tail = atomic_load_explicit(&r->sh->tail, memory_order_acquire);
    uint32_t n = tail - r->head;

    if (n > r->size)
        n = 0;
    /* Pairs with the acquire load of head in push. */
    atomic_store_explicit(&r->sh->head, tail, memory_order_release);
    r->head = tail;
    r->tail = tail;
    return n;
}

uint32_t
shm_ring_reset_dead_consumer(struct shm_ring_ref *r)
{
    struct shm_ring *sh = r->sh;
    uint32_t head = atomic_load_explicit(&sh->head, memory_order_relaxed);
    uint32_t n = r->tail - head;
    uint32_t s;

    if (n > r->size)
        n = 0;
    /* The consumer is gone: we are the only process touching the ring. */
    atomic_store_explicit(&sh->head, r->tail, memory_order_release);
    r->head = r->tail;
    s = atomic_load_explicit(&sh->consumer_sleeping, memory_order_relaxed);
    if (s & 1u)
        atomic_store_explicit(&sh->consumer_sleeping, s + 1,
                              memory_order_relaxed);
    return n;
}

/* ---------------------------------------------------- segment region */

static uint32_t
shm_ring_round_pow2(uint32_t x)
{
    uint32_t p = SHM_RING_SLOTS_MIN;

    while (p < x && p < SHM_RING_SLOTS_MAX)
        p <<= 1;
    return p;
}

/*
 * The region table plan p asks for, sizes normalised.  0; -EINVAL past a
 * limit (t is then filled with clamped values, so sizes stay finite);
 * t->workers == 0 means no rings.
 */
static int
shm_ring_plan_norm(const struct shm_plan *p, struct shm_rings *t)
{
    uint32_t want[SHM_RING_KINDS] = { p->req_ring_slots, p->reply_ring_slots,
                                      p->notif_ring_slots };
    uint32_t msg = p->msg_slot_size;
    uint64_t off = 0;
    int      rc = 0;

    memset(t, 0, sizeof(*t));
    t->magic = SHM_RINGS_MAGIC;
    t->workers = p->ring_workers;
    if (t->workers > SHM_WORKERS_MAX) {
        t->workers = SHM_WORKERS_MAX;
        rc = -EINVAL;
    }
    if (msg > SHM_RING_SLOT_MAX) {
        msg = SHM_RING_SLOT_MAX;
        rc = -EINVAL;
    }
    msg = (msg + SHM_RING_SLOT_ALIGN - 1) & ~(SHM_RING_SLOT_ALIGN - 1);
    if (msg == 0)
        msg = SHM_RING_SLOT_ALIGN;
    t->slot_size[SHM_RING_REQ] = msg;
    t->slot_size[SHM_RING_REPLY] = msg;
    t->slot_size[SHM_RING_NOTIF] = sizeof(struct shm_block_handle);
    for (int k = 0; k < SHM_RING_KINDS; k++) {
        if (want[k] > SHM_RING_SLOTS_MAX)
            rc = -EINVAL;
        t->slots[k] = shm_ring_round_pow2(want[k]);
        t->off[k] = off;
        t->ring_bytes[k] = shm_ring_bytes(t->slots[k], t->slot_size[k]);
        off += t->ring_bytes[k];
    }
    t->stride = off;
    return rc;
}

uint64_t
shm_ring_region_bytes(const struct shm_plan *p)
{
    struct shm_rings t;

    (void)shm_ring_plan_norm(p, &t);
    if (t.workers == 0)
        return 0;
    return sizeof(t) + (uint64_t)t.workers * t.stride;
}

int
shm_ring_region_init(void *mem, uint64_t avail, const struct shm_plan *p)
{
    struct shm_rings  t;
    struct shm_rings *h = mem;
    uint8_t          *base = mem;
    int               rc;

    rc = shm_ring_plan_norm(p, &t);
    if (rc != 0)
        return rc;
    if (t.workers == 0)
        return 0;
    if (sizeof(t) + (uint64_t)t.workers * t.stride > avail)
        return -EINVAL;
    for (uint32_t w = 0; w < t.workers; w++)
        for (int k = 0; k < SHM_RING_KINDS; k++) {
            rc = shm_ring_init(base + sizeof(t) + w * t.stride + t.off[k],
                               t.ring_bytes[k], t.slots[k], t.slot_size[k]);
            if (rc != 0)
                return rc;
        }
    memcpy(h, &t, sizeof(t));
    return 0;
}

int
shm_ring_locate(struct shm_ring_ref *r, const struct shm_segment *s,
                uint32_t worker, enum shm_ring_kind kind)
{
    const struct shm_region_desc *d = &s->hdr->regions[SHM_R_RINGS];
    struct shm_rings              t;
    uint8_t                      *base;
    uint64_t                      off, end;

    memset(r, 0, sizeof(*r));
    if (d->size == 0)
        return -ENOENT;
    if (d->size < sizeof(t))
        return -EPROTO;
    base = shm_segment_region(s, SHM_R_RINGS);
    memcpy(&t, base, sizeof(t));
    if (t.magic != SHM_RINGS_MAGIC || t.workers > SHM_WORKERS_MAX)
        return -EPROTO;
    if ((unsigned)kind >= SHM_RING_KINDS || worker >= t.workers)
        return -ENOENT;
    /* Every number below came from shm: bound each before using it. */
    if (t.stride > d->size || t.off[kind] > t.stride
        || t.ring_bytes[kind] > t.stride - t.off[kind])
        return -EPROTO;
    off = sizeof(t) + (uint64_t)worker * t.stride + t.off[kind];
    end = off + t.ring_bytes[kind];
    if (end > d->size || off % SHM_CACHELINE != 0)
        return -EPROTO;
    return shm_ring_attach(r, base + off, t.ring_bytes[kind],
                           t.slot_size[kind]);
}
