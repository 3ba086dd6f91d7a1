/*
 * shm/throttle.c: the failure table and the accept limiter (see
 * throttle.h; the entry layout is in layout.h).
 *
 * Ordering contract.  An entry's state word changes only by CAS.  Its tag
 * word changes only while the state is CLAIM, by the claimer, and carries
 * the generation of the claim that wrote it in its low bits
 * (SHM_THR_TAG_GEN):
 *
 *   claim:  CAS state S -> C = CLAIM(g = gen(S) + 1, now)     (acq_rel)
 *           store tag = new | g                               (release)
 *           CAS state C -> first state, generation g          (acq_rel;
 *                                               pairs with the readers'
 *                                               acquire load of state)
 *   reader: s = load state (acquire), then tag = load tag (acquire); the
 *           entry is the key's only when the tag matches the key AND its
 *           generation is gen(s)
 *
 * A reader that sees the new state therefore sees the new tag.  A reader
 * that read S and then the new tag sees two generations: no match (it
 * would otherwise see a block of the old key as the new key's).  A reader
 * that read S and the old tag will CAS from S, which fails once the claim
 * began (the generation makes S never come back: 2^14 claims of the same
 * entry would have to happen between the two loads).  A claimer stopped
 * past SHM_THROTTLE_LEASE_MS loses its claim to the next one: its final
 * CAS fails (the failure is counted again from the start), and its late
 * tag store, should it land after the next claimer's, carries a
 * generation no state has, so that entry matches no key until it is
 * stale.  So a failure is never counted on another key's entry, nor a
 * block seen on one.  A claimer killed between its steps leaves CLAIM,
 * stale after SHM_THROTTLE_LEASE_MS; its key's failure is lost (the block
 * comes later, never earlier).
 *
 * Two workers claiming entries for the same new key at the same instant
 * may make two entries of one tag; later failures go to the first one in
 * probe order, and a block is looked for in all of them.
 *
 * When every entry a tag may use holds a count of another key, the oldest
 * count is evicted (an attacker filling the table with fresh addresses
 * cannot stop the counting of others); entries of running blocks are
 * never evicted: with all of them blocked the failure is not counted
 * (-ENOSPC, counted in SHM_THR_C_TABLE_FULL by the caller).
 */
#include "throttle.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#define SHM_THR_RETRIES  (4 * SHM_THROTTLE_PROBE)   /* CAS races per call */

static inline uint64_t shm_throttle_rotl(uint64_t x, unsigned b);
static uint64_t shm_throttle_siphash(uint64_t k0, uint64_t k1,
                                     const uint8_t *p, size_t len);
static inline uint64_t shm_throttle_pack(uint64_t gen, unsigned kind,
                                         unsigned fails, uint64_t t);
static inline unsigned shm_throttle_kind(uint64_t s);
static inline unsigned shm_throttle_fails(uint64_t s);
static inline uint64_t shm_throttle_t(uint64_t s);
static inline uint64_t shm_throttle_gen(uint64_t s);
static inline uint64_t shm_throttle_now(uint64_t now_ms);
static inline bool shm_throttle_match(const struct shm_throttle_entry *e,
                                      uint64_t s, uint64_t tag);
static bool shm_throttle_stale(const struct shm_throttle *t, uint64_t s,
                               uint64_t now);
static uint64_t shm_throttle_next(uint64_t s, uint64_t gen,
                                  const struct shm_throttle_rule *r,
                                  uint64_t now, bool *began);
static struct shm_throttle_entry *shm_throttle_entries(
    const struct shm_throttle *t);
static uint32_t shm_throttle_entries_for(uint32_t n);

/* ------------------------------------------------------------ helpers */

static inline uint64_t
shm_throttle_rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

#define SHM_THR_SIPROUND                                                   \
    do {                                                                   \
        v0 += v1; v1 = shm_throttle_rotl(v1, 13); v1 ^= v0;                \
        v0 = shm_throttle_rotl(v0, 32);                                    \
        v2 += v3; v3 = shm_throttle_rotl(v3, 16); v3 ^= v2;                \
        v0 += v3; v3 = shm_throttle_rotl(v3, 21); v3 ^= v0;                \
        v2 += v1; v1 = shm_throttle_rotl(v1, 17); v1 ^= v2;                \
        v2 = shm_throttle_rotl(v2, 32);                                    \
    } while (0)

/* SipHash-2-4 of p[len] under the key (k0, k1), words little-endian. */
static uint64_t
shm_throttle_siphash(uint64_t k0, uint64_t k1, const uint8_t *p, size_t len)
{
    uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    uint64_t v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    uint64_t v3 = k1 ^ UINT64_C(0x7465646279746573);
    uint64_t m, b = (uint64_t)len << 56;
    size_t   i, n = len & ~(size_t)7;

    for (i = 0; i < n; i += 8) {
        m = 0;
        for (unsigned j = 0; j < 8; j++)
            m |= (uint64_t)p[i + j] << (8 * j);
        v3 ^= m;
        SHM_THR_SIPROUND;
        SHM_THR_SIPROUND;
        v0 ^= m;
    }
    for (unsigned j = 0; i + j < len; j++)
        b |= (uint64_t)p[i + j] << (8 * j);
    v3 ^= b;
    SHM_THR_SIPROUND;
    SHM_THR_SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SHM_THR_SIPROUND;
    SHM_THR_SIPROUND;
    SHM_THR_SIPROUND;
    SHM_THR_SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static inline uint64_t
shm_throttle_pack(uint64_t gen, unsigned kind, unsigned fails, uint64_t t)
{
    return (gen & SHM_THR_GEN_MASK) << SHM_THR_GEN_SHIFT
           | (uint64_t)(kind & 3u) << SHM_THR_KIND_SHIFT
           | (uint64_t)(fails & SHM_THR_FAILS_MAX) << SHM_THR_FAILS_SHIFT
           | (t & SHM_THR_T_MASK);
}

static inline unsigned
shm_throttle_kind(uint64_t s)
{
    return (unsigned)(s >> SHM_THR_KIND_SHIFT) & 3u;
}

static inline unsigned
shm_throttle_fails(uint64_t s)
{
    return (unsigned)(s >> SHM_THR_FAILS_SHIFT) & SHM_THR_FAILS_MAX;
}

static inline uint64_t
shm_throttle_t(uint64_t s)
{
    return s & SHM_THR_T_MASK;
}

static inline uint64_t
shm_throttle_gen(uint64_t s)
{
    return (s >> SHM_THR_GEN_SHIFT) & SHM_THR_GEN_MASK;
}

/* 40 bits of ms: 34 years after boot; later readings stick at the top. */
static inline uint64_t
shm_throttle_now(uint64_t now_ms)
{
    return now_ms < SHM_THR_T_MASK ? now_ms : SHM_THR_T_MASK - 1;
}

/*
 * Whether entry e, read in state s (load acquire, before this), is tag's:
 * the tag word's key bits and the generation of the claim that wrote it
 * (see the contract at the top).
 */
static inline bool
shm_throttle_match(const struct shm_throttle_entry *e, uint64_t s,
                   uint64_t tag)
{
    uint64_t w = atomic_load_explicit(&e->tag, memory_order_acquire);

    return (w & ~SHM_THR_TAG_GEN) == (tag & ~SHM_THR_TAG_GEN)
           && (w & SHM_THR_TAG_GEN) == shm_throttle_gen(s);
}

/*
 * Whether an entry in state s may take another key at now: nothing
 * counted, a count older than the longest window, a block over, a claim
 * past its lease.  A time a little ahead of now (another worker read the
 * clock later in its loop) is not stale.
 */
static bool
shm_throttle_stale(const struct shm_throttle *t, uint64_t s, uint64_t now)
{
    uint64_t at = shm_throttle_t(s);

    switch (shm_throttle_kind(s)) {
    case SHM_THR_IDLE:
        return true;
    case SHM_THR_COUNT:
        return now >= at && now - at >= t->stale_ms;
    case SHM_THR_BLOCKED:
        return now >= at;
    default:
        return now >= at && now - at >= SHM_THROTTLE_LEASE_MS;
    }
}

/*
 * The state after one more failure of the key in state s (its own entry;
 * IDLE for a fresh one), with generation gen; *began when it starts a
 * block.
 */
static uint64_t
shm_throttle_next(uint64_t s, uint64_t gen, const struct shm_throttle_rule *r,
                  uint64_t now, bool *began)
{
    unsigned fails = 0;
    uint64_t first = now;
    uint32_t threshold = r->threshold < SHM_THR_FAILS_MAX
                             ? r->threshold : SHM_THR_FAILS_MAX;

    *began = false;
    if (shm_throttle_kind(s) == SHM_THR_COUNT) {
        first = shm_throttle_t(s);
        fails = shm_throttle_fails(s);
        /* A window over, or one that starts ahead of us, begins anew. */
        if (now < first || now - first >= r->window_ms) {
            fails = 0;
            first = now;
        }
    }
    if (++fails >= threshold) {
        *began = true;
        return shm_throttle_pack(gen, SHM_THR_BLOCKED, 0,
                                 shm_throttle_now(now + r->block_ms));
    }
    return shm_throttle_pack(gen, SHM_THR_COUNT, fails, first);
}

static struct shm_throttle_entry *
shm_throttle_entries(const struct shm_throttle *t)
{
    return (struct shm_throttle_entry *)((uint8_t *)t + sizeof(*t));
}

/* n rounded up to a power of two within the bounds. */
static uint32_t
shm_throttle_entries_for(uint32_t n)
{
    uint32_t cap = SHM_THROTTLE_ENTRIES_MIN;

    while (cap < n && cap < SHM_THROTTLE_ENTRIES_MAX)
        cap <<= 1;
    return cap;
}

/* ------------------------------------------------------------ region */

uint64_t
shm_throttle_region_bytes(const struct shm_plan *p)
{
    if (p->throttle_entries == 0)
        return 0;
    return sizeof(struct shm_throttle)
           + (uint64_t)shm_throttle_entries_for(p->throttle_entries)
                 * sizeof(struct shm_throttle_entry);
}

int
shm_throttle_region_init(void *region, uint64_t size,
                         const struct shm_plan *p)
{
    struct shm_throttle *t = region;
    uint32_t             n = shm_throttle_entries_for(p->throttle_entries);

    if (p->throttle_entries == 0
        || size < sizeof(*t) + (uint64_t)n * sizeof(struct shm_throttle_entry))
        return -EINVAL;
    t->magic = SHM_THROTTLE_MAGIC;
    t->nentries = n;
    t->mask = n - 1;
    t->stale_ms = 10000;
    return 0;
}

struct shm_throttle *
shm_throttle_of(const struct shm_segment *s)
{
    const struct shm_region_desc *r = &s->hdr->regions[SHM_R_THROTTLE];
    struct shm_throttle          *t;

    if (r->size < sizeof(*t))
        return NULL;
    t = shm_segment_region(s, SHM_R_THROTTLE);
    if (t->magic != SHM_THROTTLE_MAGIC || t->nentries == 0
        || (t->nentries & t->mask) != 0 || t->mask != t->nentries - 1
        || sizeof(*t) + (uint64_t)t->nentries
                            * sizeof(struct shm_throttle_entry) > r->size)
        return NULL;
    return t;
}

void
shm_throttle_configure(struct shm_throttle *t, const uint64_t seed[2],
                       uint64_t stale_ms)
{
    t->seed[0] = seed[0];
    t->seed[1] = seed[1];
    t->stale_ms = stale_ms;
}

uint64_t
shm_throttle_tag(const struct shm_throttle *t,
                 enum shm_throttle_key_kind kind, const void *key, size_t len)
{
    uint64_t h = shm_throttle_siphash(t->seed[0],
                                      t->seed[1] ^ (uint64_t)kind, key, len);

    /* The bits an entry keeps (the others hold its generation). */
    return (h & ~SHM_THR_TAG_GEN) != 0 ? h : h | (SHM_THR_TAG_GEN + 1);
}

/* ------------------------------------------------------------ table */

bool
shm_throttle_blocked(const struct shm_throttle *t, uint64_t tag,
                     uint64_t now_ms)
{
    struct shm_throttle_entry *e, *es = shm_throttle_entries(t);
    uint64_t                   s, now = shm_throttle_now(now_ms);

    for (uint32_t j = 0; j < SHM_THROTTLE_PROBE; j++) {
        e = &es[(tag + j) & t->mask];
        s = atomic_load_explicit(&e->state, memory_order_acquire);
        if (shm_throttle_kind(s) == SHM_THR_BLOCKED
            && now < shm_throttle_t(s) && shm_throttle_match(e, s, tag))
            return true;
    }
    return false;
}

int
shm_throttle_fail(struct shm_throttle *t, uint64_t tag,
                  const struct shm_throttle_rule *r, uint64_t now_ms)
{
    struct shm_throttle_entry *e, *mine, *victim, *oldest;
    struct shm_throttle_entry *es = shm_throttle_entries(t);
    uint64_t                   s, ms = 0, vs = 0, os = 0, ns, gen;
    uint64_t                   now = shm_throttle_now(now_ms);
    bool                       began;

    if (r->threshold == 0)
        return 0;
    for (unsigned tries = 0; tries < SHM_THR_RETRIES; tries++) {
        mine = victim = oldest = NULL;
        for (uint32_t j = 0; j < SHM_THROTTLE_PROBE; j++) {
            e = &es[(tag + j) & t->mask];
            /* State first, then tag: see the contract at the top. */
            s = atomic_load_explicit(&e->state, memory_order_acquire);
            if (shm_throttle_kind(s) != SHM_THR_CLAIM
                && shm_throttle_match(e, s, tag)) {
                mine = e;
                ms = s;
                break;
            }
            if (victim == NULL && shm_throttle_stale(t, s, now)) {
                victim = e;
                vs = s;
            } else if (shm_throttle_kind(s) == SHM_THR_COUNT
                       && (oldest == NULL
                           || shm_throttle_t(s) < shm_throttle_t(os))) {
                oldest = e;
                os = s;
            }
        }
        if (mine != NULL) {
            if (shm_throttle_kind(ms) == SHM_THR_BLOCKED
                && now < shm_throttle_t(ms))
                return 0;                       /* blocked already */
            ns = shm_throttle_next(ms, shm_throttle_gen(ms), r, now, &began);
            if (atomic_compare_exchange_strong_explicit(
                    &mine->state, &ms, ns, memory_order_acq_rel,
                    memory_order_relaxed))
                return began ? 1 : 0;
            continue;                           /* changed: look again */
        }
        if (victim == NULL) {
            victim = oldest;                    /* evict the oldest count */
            vs = os;
        }
        if (victim == NULL)
            return -ENOSPC;                     /* all blocked */
        gen = (shm_throttle_gen(vs) + 1) & SHM_THR_GEN_MASK;
        s = shm_throttle_pack(gen, SHM_THR_CLAIM, 0, now);
        if (!atomic_compare_exchange_strong_explicit(
                &victim->state, &vs, s, memory_order_acq_rel,
                memory_order_relaxed))
            continue;
        atomic_store_explicit(&victim->tag, (tag & ~SHM_THR_TAG_GEN) | gen,
                              memory_order_release);
        ns = shm_throttle_next(0, gen, r, now, &began);
        /* Pairs with the acquire loads of state in every reader.  A CAS:
         * stopped past the lease, we may have lost the claim. */
        if (atomic_compare_exchange_strong_explicit(
                &victim->state, &s, ns, memory_order_acq_rel,
                memory_order_relaxed))
            return began ? 1 : 0;
    }
    return -EAGAIN;
}

void
shm_throttle_forget(struct shm_throttle *t, uint64_t tag, bool unblock,
                    uint64_t now_ms)
{
    struct shm_throttle_entry *e, *es = shm_throttle_entries(t);
    uint64_t                   s, now = shm_throttle_now(now_ms);
    unsigned                   k;

    for (uint32_t j = 0; j < SHM_THROTTLE_PROBE; j++) {
        e = &es[(tag + j) & t->mask];
        for (unsigned tries = 0; tries < SHM_THR_RETRIES; tries++) {
            s = atomic_load_explicit(&e->state, memory_order_acquire);
            k = shm_throttle_kind(s);
            if ((k != SHM_THR_COUNT && k != SHM_THR_BLOCKED)
                || !shm_throttle_match(e, s, tag))
                break;
            if (k == SHM_THR_BLOCKED && now < shm_throttle_t(s) && !unblock)
                break;                          /* someone else's block */
            if (atomic_compare_exchange_strong_explicit(
                    &e->state, &s,
                    shm_throttle_pack(shm_throttle_gen(s), SHM_THR_IDLE, 0,
                                      0),
                    memory_order_acq_rel, memory_order_relaxed))
                break;
        }
    }
}

void
shm_throttle_undo(struct shm_throttle *t, uint64_t tag,
                  const struct shm_throttle_rule *r, bool unblock,
                  uint64_t now_ms)
{
    struct shm_throttle_entry *e, *es = shm_throttle_entries(t);
    uint64_t                   s, ns, now = shm_throttle_now(now_ms);
    uint32_t                   threshold = r->threshold < SHM_THR_FAILS_MAX
                                               ? r->threshold
                                               : SHM_THR_FAILS_MAX;
    unsigned                   k, fails;
    bool                       mine = false;

    for (uint32_t j = 0; j < SHM_THROTTLE_PROBE; j++) {
        e = &es[(tag + j) & t->mask];
        for (unsigned tries = 0; tries < SHM_THR_RETRIES; tries++) {
            s = atomic_load_explicit(&e->state, memory_order_acquire);
            k = shm_throttle_kind(s);
            if ((k != SHM_THR_COUNT && k != SHM_THR_BLOCKED)
                || !shm_throttle_match(e, s, tag))
                break;
            if (k == SHM_THR_BLOCKED) {
                if (!unblock || now >= shm_throttle_t(s))
                    return;             /* not ours, or over anyway */
                fails = threshold > 1 ? threshold - 1 : 0;
                ns = shm_throttle_pack(shm_throttle_gen(s),
                                       fails > 0 ? SHM_THR_COUNT
                                                 : SHM_THR_IDLE,
                                       fails, fails > 0 ? now : 0);
            } else {
                fails = shm_throttle_fails(s);
                if (fails == 0)
                    return;
                fails--;
                ns = shm_throttle_pack(shm_throttle_gen(s),
                                       fails > 0 ? SHM_THR_COUNT
                                                 : SHM_THR_IDLE,
                                       fails,
                                       fails > 0 ? shm_throttle_t(s) : 0);
            }
            if (atomic_compare_exchange_strong_explicit(
                    &e->state, &s, ns, memory_order_acq_rel,
                    memory_order_relaxed))
                return;
            mine = true;                /* changed under us: again */
        }
        if (mine)
            return;                     /* only the tag's first entry */
    }
}

uint32_t
shm_throttle_blocked_count(const struct shm_throttle *t, uint64_t now_ms)
{
    struct shm_throttle_entry *es = shm_throttle_entries(t);
    uint64_t                   s, now = shm_throttle_now(now_ms);
    uint32_t                   n = 0;

    for (uint32_t i = 0; i < t->nentries; i++) {
        s = atomic_load_explicit(&es[i].state, memory_order_relaxed);
        if (shm_throttle_kind(s) == SHM_THR_BLOCKED
            && now < shm_throttle_t(s))
            n++;
    }
    return n;
}

/* ------------------------------------------------------------ accept */

bool
shm_throttle_accept(struct shm_throttle *t, uint32_t rate, uint32_t burst,
                    uint64_t now_us)
{
    uint64_t step, span, tat, base, next;

    if (rate == 0)
        return true;
    step = 1000000u / rate;
    if (step == 0)
        step = 1;
    span = (uint64_t)(burst != 0 ? burst : 1) * step;
    tat = atomic_load_explicit(&t->accept_tat_us, memory_order_relaxed);
    do {
        base = tat > now_us ? tat : now_us;
        next = base + step;
        if (next - now_us > span)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(
        &t->accept_tat_us, &tat, next, memory_order_relaxed,
        memory_order_relaxed));
    return true;
}

/* ------------------------------------------------------------ counters */

void
shm_throttle_count(struct shm_throttle *t, unsigned worker,
                   enum shm_throttle_counter c)
{
    _Atomic uint64_t *p;

    if (worker >= SHM_WORKERS_MAX || (unsigned)c >= SHM_THR_C_MAX)
        return;
    p = &t->w[worker].c[c];
    /* Single writer (that worker); the broker reads relaxed. */
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

uint64_t
shm_throttle_total(const struct shm_throttle *t, enum shm_throttle_counter c)
{
    struct shm_throttle *tt = (struct shm_throttle *)t;
    uint64_t             n = 0;

    if ((unsigned)c >= SHM_THR_C_MAX)
        return 0;
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++)
        n += atomic_load_explicit(&tt->w[i].c[c], memory_order_relaxed);
    return n;
}
