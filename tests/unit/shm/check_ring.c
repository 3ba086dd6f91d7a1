/*
 * tests/unit/shm/check_ring.c: shm/ring.c: push/pop/full/empty/wrap,
 * batches, attach checks, corrupt indices refused, the sleep/bell protocol,
 * the segment's ring region, and two forked processes moving >= 10 million
 * checksummed records through a ring (single and batched) and racing on
 * the sleeping flag with a pipe as the doorbell.
 *
 * Single-process cases use a ring in private memory with guard bytes after
 * it; the cross-process cases use a real segment, which the child maps a
 * second time by fd (another address: nothing in the ring is a pointer).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/plan.h"
#include "shm/ring.h"
#include "shm/segment.h"

#include "fanout_util.h"

#define GUARD 256

/* A ring in private memory, followed by GUARD bytes of 0xEE. */
static uint8_t *
ring_new(uint32_t slots, uint32_t slot_size, uint64_t *bytes)
{
    uint64_t b = shm_ring_bytes(slots, slot_size);
    uint8_t *m;

    ck_assert_uint_ne(b, 0);
    m = aligned_alloc(SHM_CACHELINE, b + GUARD);
    ck_assert_ptr_nonnull(m);
    memset(m, 0x55, b);
    memset(m + b, 0xEE, GUARD);
    ck_assert_int_eq(shm_ring_init(m, b, slots, slot_size), 0);
    *bytes = b;
    return m;
}

static void
guard_intact(const uint8_t *m, uint64_t bytes)
{
    int i = 0;

    while (i < GUARD && m[bytes + i] == 0xEE)
        i++;
    ck_assert_int_eq(i, GUARD);
}

struct item16 {
    uint64_t seq;
    uint64_t sum;
};

static struct item16
item16(uint64_t seq)
{
    struct item16 it = { .seq = seq, .sum = fu_mix(seq) };

    return it;
}

/* ------------------------------------------------------------ basics */

START_TEST(test_geometry)
{
    uint8_t *m;
    uint64_t b;

    ck_assert_uint_eq(shm_ring_bytes(8, 16), sizeof(struct shm_ring) + 128);
    ck_assert_uint_eq(shm_ring_bytes(2, 8), sizeof(struct shm_ring) + 128);
    ck_assert_uint_eq(shm_ring_bytes(1024, 8) % SHM_CACHELINE, 0);
    ck_assert_uint_eq(shm_ring_bytes(0, 16), 0);
    ck_assert_uint_eq(shm_ring_bytes(1, 16), 0);
    ck_assert_uint_eq(shm_ring_bytes(12, 16), 0);
    ck_assert_uint_eq(shm_ring_bytes(SHM_RING_SLOTS_MAX * 2u, 8), 0);
    ck_assert_uint_ne(shm_ring_bytes(SHM_RING_SLOTS_MAX, 8), 0);
    ck_assert_uint_eq(shm_ring_bytes(8, 0), 0);
    ck_assert_uint_eq(shm_ring_bytes(8, 12), 0);
    ck_assert_uint_eq(shm_ring_bytes(8, SHM_RING_SLOT_MAX + 8), 0);
    ck_assert_uint_ne(shm_ring_bytes(8, SHM_RING_SLOT_MAX), 0);

    m = ring_new(8, 16, &b);
    ck_assert_int_eq(shm_ring_init(m, b - 1, 8, 16), -EINVAL);
    ck_assert_int_eq(shm_ring_init(m + 8, b, 2, 8), -EINVAL);
    ck_assert_int_eq(shm_ring_init(m, b, 6, 16), -EINVAL);
    free(m);
}
END_TEST

START_TEST(test_push_pop_full_empty)
{
    struct shm_ring_ref p, c;
    struct item16       it;
    uint64_t            b;
    uint8_t            *m = ring_new(8, 16, &b);

    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), -EAGAIN);
    ck_assert_uint_eq(shm_ring_count_spsc(&c), 0);
    for (uint64_t i = 0; i < 8; i++) {
        it = item16(i);
        ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    }
    ck_assert_uint_eq(shm_ring_count_spsc(&c), 8);
    it = item16(99);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), -ENOSPC);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), -ENOSPC);
    ck_assert_uint_eq(atomic_load(&p.sh->full), 2);
    /* One out, one in, then FIFO to the end. */
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), 0);
    ck_assert_uint_eq(it.seq, 0);
    it = item16(8);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    for (uint64_t i = 1; i <= 8; i++) {
        ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), 0);
        ck_assert_uint_eq(it.seq, i);
        ck_assert_uint_eq(it.sum, fu_mix(i));
    }
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), -EAGAIN);
    ck_assert_uint_eq(atomic_load(&p.sh->tail), 9);
    ck_assert_uint_eq(atomic_load(&p.sh->head), 9);
    guard_intact(m, b);
    free(m);
}
END_TEST

/* Free-running indices across 2^32 and the slot array's end. */
START_TEST(test_wrap)
{
    struct shm_ring_ref p, c;
    struct item16       batch[8], it;
    uint64_t            b, next_in = 0, next_out = 0, bad = 0;
    uint8_t            *m = ring_new(8, 16, &b);
    struct shm_ring    *sh = (struct shm_ring *)m;
    unsigned            seed = 7;

    atomic_store(&sh->tail, UINT32_MAX - 20);
    atomic_store(&sh->head, UINT32_MAX - 20);
    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    while (next_out < 20000 && bad == 0) {
        uint32_t n = (uint32_t)(rand_r(&seed) % 8) + 1;
        int      rc;

        for (uint32_t i = 0; i < n; i++)
            batch[i] = item16(next_in + i);
        if (rand_r(&seed) & 1) {
            rc = shm_ring_push_n_spsc(&p, batch, n);
            bad += !(rc == 0 || rc == -ENOSPC);
            if (rc == 0)
                next_in += n;
        } else if (shm_ring_push_spsc(&p, &batch[0]) == 0) {
            next_in++;
        }
        bad += next_in - next_out > 8;
        n = (uint32_t)(rand_r(&seed) % 8) + 1;
        rc = shm_ring_pop_n_spsc(&c, batch, n);
        bad += !(rc > 0 || rc == -EAGAIN);
        for (int i = 0; i < rc; i++) {
            bad += batch[i].seq != next_out
                   || batch[i].sum != fu_mix(next_out);
            next_out++;
        }
    }
    ck_assert_uint_eq(bad, 0);
    /* The indices really went past 2^32. */
    ck_assert_uint_lt(atomic_load(&sh->tail), 20000);
    while (shm_ring_pop_spsc(&c, &it) == 0)
        ck_assert_uint_eq(it.seq, next_out++);
    ck_assert_uint_eq(next_out, next_in);
    guard_intact(m, b);
    free(m);
}
END_TEST

START_TEST(test_batch)
{
    struct shm_ring_ref p, c;
    struct item16       in[16], out[16];
    uint64_t            b;
    uint8_t            *m = ring_new(8, 16, &b);

    for (int i = 0; i < 16; i++)
        in[i] = item16((uint64_t)i);
    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in, 0), 0);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, out, 0), 0);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, out, 4), -EAGAIN);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in, 9), -EINVAL);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in, 5), 0);
    /* All or nothing: 4 do not fit in the 3 left, nothing is written. */
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in + 5, 4), -ENOSPC);
    ck_assert_uint_eq(atomic_load(&p.sh->tail), 5);
    ck_assert_uint_eq(atomic_load(&p.sh->full), 1);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in + 5, 3), 0);
    /* Up to n: 8 waiting, 16 asked. */
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, out, 16), 8);
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq(out[i].seq, (uint64_t)i);
    /* A batch that wraps the slot array: 6 in at index 8 -> slots 0..5. */
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in, 6), 0);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in + 6, 2), 0);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, out, 3), 3);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, in + 8, 3), 0);  /* wraps */
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, out + 3, 16), 8);
    for (int i = 0; i < 11; i++)
        ck_assert_uint_eq(out[i].seq, (uint64_t)i);
    guard_intact(m, b);
    free(m);
}
END_TEST

/* ------------------------------------------------------------ refusals */

START_TEST(test_attach_refuses)
{
    struct shm_ring_ref r;
    uint64_t            b;
    uint8_t            *m = ring_new(8, 16, &b);
    struct shm_ring    *sh = (struct shm_ring *)m;
    struct shm_ring     keep;

    memcpy(&keep, sh, sizeof(keep));
    ck_assert_int_eq(shm_ring_attach(&r, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&r, m, b, 24), -EPROTO);   /* slot */
    ck_assert_int_eq(shm_ring_attach(&r, m, b - 1, 16), -EPROTO);
    ck_assert_int_eq(shm_ring_attach(&r, m, 64, 16), -EPROTO);
    ck_assert_int_eq(shm_ring_attach(&r, NULL, b, 16), -EPROTO);
    ck_assert_int_eq(shm_ring_attach(&r, m + 8, b - 8, 16), -EPROTO);
#define BAD(field, val)                                                   \
    do {                                                                  \
        memcpy(sh, &keep, sizeof(keep));                                  \
        sh->field = (val);                                                \
        ck_assert_int_eq(shm_ring_attach(&r, m, b, 16), -EPROTO);         \
        ck_assert_ptr_null(r.sh);                                         \
    } while (0)
    BAD(magic, 0);
    BAD(size, 6);
    BAD(size, 0);
    BAD(size, 16);                      /* slots past the region */
    BAD(size, SHM_RING_SLOTS_MAX * 2u);
    BAD(mask, 3);
    BAD(mask, 15);
    BAD(slot_size, 12);
    BAD(slot_size, 0);
#undef BAD
    memcpy(sh, &keep, sizeof(keep));
    atomic_store(&sh->tail, 9);                 /* 9 items in 8 slots */
    ck_assert_int_eq(shm_ring_attach(&r, m, b, 16), -EPROTO);
    atomic_store(&sh->tail, 100);
    atomic_store(&sh->head, 101);               /* head past tail */
    ck_assert_int_eq(shm_ring_attach(&r, m, b, 16), -EPROTO);
    atomic_store(&sh->head, 92);                /* exactly full: fine */
    ck_assert_int_eq(shm_ring_attach(&r, m, b, 16), 0);
    ck_assert_uint_eq(shm_ring_count_spsc(&r), 8);
    guard_intact(m, b);
    free(m);
}
END_TEST

/*
 * A peer that writes nonsense into its index: every call refuses with
 * -EPROTO, touches no slot out of bounds, and never crashes.
 */
START_TEST(test_corrupt_indices)
{
    struct shm_ring_ref p, c;
    struct item16       it = item16(1), buf[8];
    uint64_t            b;
    uint8_t            *m = ring_new(8, 16, &b);
    struct shm_ring    *sh = (struct shm_ring *)m;
    unsigned            seed = 11;
    uint64_t            odd = 0, refused = 0;

    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    /* Producer's tail more than size ahead of the consumer. */
    atomic_store(&sh->tail, 9);
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), -EPROTO);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, buf, 8), -EPROTO);
    ck_assert_uint_eq(shm_ring_count_spsc(&c), 0);
    ck_assert(!shm_ring_sleep_prepare(&c));
    /* Behind the consumer (tail - head wraps to huge). */
    atomic_store(&sh->tail, UINT32_MAX);
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), -EPROTO);
    ck_assert_uint_eq(c.head, 0);
    ck_assert_uint_eq(atomic_load(&sh->head), 0);
    atomic_store(&sh->tail, 0);
    /* Consumer's head ahead of the producer's tail. */
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    atomic_store(&sh->head, 11);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), -EPROTO);
    ck_assert_int_eq(shm_ring_push_n_spsc(&p, buf, 2), -EPROTO);
    ck_assert_uint_eq(atomic_load(&sh->tail), 8);
    /*
     * Random indices: only the documented answers, and (ASan, guard) no
     * access outside the ring.  Counted, then asserted once: a passing
     * ck_assert costs a write(2).
     */
    for (int i = 0; i < 200000; i++) {
        struct shm_ring_ref rp, rc;
        int                 r1, r2;

        atomic_store(&sh->tail, 0);
        atomic_store(&sh->head, 0);
        if (shm_ring_attach(&rp, m, b, 16) != 0
            || shm_ring_attach(&rc, m, b, 16) != 0) {
            odd++;
            continue;
        }
        atomic_store(&sh->tail, (uint32_t)rand_r(&seed) % 32 - 16);
        atomic_store(&sh->head, (uint32_t)rand_r(&seed) % 32 - 16);
        /* The consumer looks first (the push would overwrite tail). */
        r2 = (i & 4) ? shm_ring_pop_n_spsc(&rc, buf, 8)
                     : shm_ring_pop_spsc(&rc, &it);
        /* Make the producer's cache say "full", so it reads head. */
        rp.head = rp.tail - 8;
        r1 = (i & 2) ? shm_ring_push_n_spsc(&rp, buf, 3)
                     : shm_ring_push_spsc(&rp, &it);
        if (!(r1 == 0 || r1 == -ENOSPC || r1 == -EPROTO))
            odd++;
        if (!(r2 >= 0 || r2 == -EAGAIN || r2 == -EPROTO) || r2 > 8)
            odd++;
        refused += (r1 == -EPROTO) + (r2 == -EPROTO);
    }
    ck_assert_uint_eq(odd, 0);
    ck_assert_uint_gt(refused, 10000);
    guard_intact(m, b);
    free(m);
}
END_TEST

/* --------------------------------------------------- sleep / bell flag */

START_TEST(test_bell_protocol)
{
    struct shm_ring_ref p, c, c2;
    struct item16       it = item16(5);
    uint64_t            b;
    uint8_t            *m = ring_new(8, 16, &b);
    struct shm_ring    *sh = (struct shm_ring *)m;

    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    /* Awake consumer: nobody rings. */
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(!shm_ring_needs_bell(&p));
    /* Items waiting: sleep_prepare says no and withdraws the mark. */
    ck_assert(!shm_ring_sleep_prepare(&c));
    ck_assert_uint_eq(atomic_load(&sh->consumer_sleeping) & 1, 0);
    ck_assert(!shm_ring_needs_bell(&p));
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), 0);
    /* Empty: sleep; the producer's next publish needs exactly one bell. */
    ck_assert(shm_ring_sleep_prepare(&c));
    ck_assert_uint_eq(atomic_load(&sh->consumer_sleeping) & 1, 1);
    ck_assert_uint_eq(atomic_load(&sh->sleeps), 1);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(shm_ring_needs_bell(&p));
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(!shm_ring_needs_bell(&p));        /* rung for this sleep */
    ck_assert_uint_eq(atomic_load(&sh->bells), 1);
    shm_ring_wake_clear(&c);
    shm_ring_wake_clear(&c);                    /* idempotent */
    ck_assert_uint_eq(atomic_load(&sh->consumer_sleeping) & 1, 0);
    ck_assert(!shm_ring_needs_bell(&p));
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    /* The next sleep is a new one: it gets its own bell. */
    ck_assert(shm_ring_sleep_prepare(&c));
    ck_assert(shm_ring_needs_bell(&p));
    /*
     * The consumer dies asleep; its successor attaches, finds the mark
     * odd, and its first sleep is still a new value the producer rings for.
     */
    ck_assert_int_eq(shm_ring_attach(&c2, m, b, 16), 0);
    ck_assert(shm_ring_sleep_prepare(&c2));
    ck_assert(shm_ring_needs_bell(&p));
    ck_assert_uint_eq(atomic_load(&sh->bells), 3);
    free(m);
}
END_TEST

/* A promise to wake by a time (shm_ring_sleep_prepare_by). */
START_TEST(test_bell_by_promise)
{
    struct shm_ring_ref p, c;
    struct item16       it = item16(9);
    uint64_t            b;
    uint8_t            *m = ring_new(16, 16, &b);
    struct shm_ring    *sh = (struct shm_ring *)m;

    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    /* Asleep, wakes by 1000: pushes before then are left to it while
     * fewer than 3 items wait; each one counted, none remembered. */
    ck_assert(shm_ring_sleep_prepare_by(&c, 1000));
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(!shm_ring_needs_bell_by(&p, 999, 3));
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(!shm_ring_needs_bell_by(&p, 999, 3));
    ck_assert_uint_eq(atomic_load(&sh->deferred), 2);
    ck_assert_uint_eq(atomic_load(&sh->bells), 0);
    /* The third waiting item: ring, once for this sleep. */
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(shm_ring_needs_bell_by(&p, 999, 3));
    ck_assert(!shm_ring_needs_bell_by(&p, 999, 3));
    ck_assert(!shm_ring_needs_bell(&p));
    ck_assert_uint_eq(atomic_load(&sh->bells), 1);
    shm_ring_wake_clear(&c);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    /* The promised time reached: ring. */
    ck_assert(shm_ring_sleep_prepare_by(&c, 1000));
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(shm_ring_needs_bell_by(&p, 1000, 3));
    shm_ring_wake_clear(&c);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    /* No promise (0), or the plain call: ring at once. */
    ck_assert(shm_ring_sleep_prepare_by(&c, 0));
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(shm_ring_needs_bell_by(&p, 5, 3));
    shm_ring_wake_clear(&c);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    ck_assert(shm_ring_sleep_prepare_by(&c, 1000));
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(shm_ring_needs_bell(&p));
    shm_ring_wake_clear(&c);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&c, &it, 1), 1);
    /* A later sleep without a promise does not inherit the old one. */
    ck_assert(shm_ring_sleep_prepare(&c));
    ck_assert_uint_eq(atomic_load(&sh->wake_ms), 0);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(shm_ring_needs_bell_by(&p, 5, 3));
    /* Awake: nothing to ring, nothing deferred. */
    shm_ring_wake_clear(&c);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert(!shm_ring_needs_bell_by(&p, 5, 3));
    ck_assert_uint_eq(atomic_load(&sh->deferred), 2);
    ck_assert_uint_eq(atomic_load(&sh->bells), 5);
    free(m);
}
END_TEST

START_TEST(test_discard_and_reset)
{
    struct shm_ring_ref p, c, c2;
    struct item16       it = item16(3);
    uint64_t            b;
    uint8_t            *m = ring_new(8, 16, &b);
    struct shm_ring    *sh = (struct shm_ring *)m;

    ck_assert_int_eq(shm_ring_attach(&p, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_attach(&c, m, b, 16), 0);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert_uint_eq(shm_ring_discard_spsc(&c), 5);
    ck_assert_int_eq(shm_ring_pop_spsc(&c, &it), -EAGAIN);
    ck_assert_uint_eq(shm_ring_discard_spsc(&c), 0);
    /* A consumer dies asleep with 3 items waiting. */
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    atomic_store(&sh->consumer_sleeping, 7);
    ck_assert_uint_eq(shm_ring_reset_dead_consumer(&p), 3);
    ck_assert_uint_eq(atomic_load(&sh->consumer_sleeping) & 1, 0);
    ck_assert_int_eq(shm_ring_attach(&c2, m, b, 16), 0);
    ck_assert_int_eq(shm_ring_pop_spsc(&c2, &it), -EAGAIN);
    /* The producer's cache of head moved too: all 8 slots are free. */
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(shm_ring_push_spsc(&p, &it), 0);
    ck_assert_int_eq(shm_ring_push_spsc(&p, &it), -ENOSPC);
    free(m);
}
END_TEST

/* ------------------------------------------------------ segment region */

static const struct shm_plan plan_rings = {
    .nodes = 10, .refs = 10, .strings = 64, .slots = 4, .vheap = 4096,
    .ring_workers = 3, .req_ring_slots = 100, .reply_ring_slots = 16,
    .notif_ring_slots = 1000, .msg_slot_size = 60,
};

START_TEST(test_segment_rings)
{
    struct shm_segment  s, a;
    struct shm_ring_ref r[3][SHM_RING_KINDS], x;
    const uint32_t      want_slots[] = { 128, 16, 1024 };
    const uint32_t      want_size[] = { 64, 64, 8 };
    struct shm_plan     p = plan_rings;
    struct shm_rings   *t;
    uint64_t            lo = UINT64_MAX, hi = 0, sum = 0, v = 42;
    uint8_t            *rb;

    ck_assert_int_eq(shm_plan_create(&s, &p, "check_ring"), 0);
    ck_assert_uint_eq(s.hdr->regions[SHM_R_RINGS].size,
                      shm_ring_region_bytes(&p));
    rb = shm_segment_region(&s, SHM_R_RINGS);
    for (uint32_t w = 0; w < 3; w++)
        for (int k = 0; k < SHM_RING_KINDS; k++) {
            uint8_t *start;

            ck_assert_int_eq(shm_ring_locate(&r[w][k], &s, w, k), 0);
            ck_assert_uint_eq(r[w][k].size, want_slots[k]);
            ck_assert_uint_eq(r[w][k].slot_size, want_size[k]);
            start = (uint8_t *)r[w][k].sh;
            ck_assert_uint_eq((uintptr_t)start % SHM_CACHELINE, 0);
            if ((uint64_t)(start - rb) < lo)
                lo = (uint64_t)(start - rb);
            if ((uint64_t)(start - rb) + shm_ring_bytes(want_slots[k],
                                                        want_size[k])
                > hi)
                hi = (uint64_t)(start - rb)
                     + shm_ring_bytes(want_slots[k], want_size[k]);
            sum += shm_ring_bytes(want_slots[k], want_size[k]);
        }
    /* Nine rings, back to back after the table, none overlapping. */
    ck_assert_uint_eq(lo, sizeof(struct shm_rings));
    ck_assert_uint_eq(hi - lo, sum);
    ck_assert_uint_le(hi, s.hdr->regions[SHM_R_RINGS].size);
    ck_assert_int_eq(shm_ring_locate(&x, &s, 3, SHM_RING_REQ), -ENOENT);
    ck_assert_int_eq(shm_ring_locate(&x, &s, 0, SHM_RING_KINDS), -ENOENT);

    /* A second mapping elsewhere sees the same rings. */
    ck_assert_int_eq(shm_segment_attach(&a, dup(s.fd), 1), 0);
    ck_assert_ptr_ne(a.base, s.base);
    ck_assert_int_eq(shm_ring_locate(&x, &a, 2, SHM_RING_NOTIF), 0);
    ck_assert_int_eq(shm_ring_push_spsc(&r[2][SHM_RING_NOTIF], &v), 0);
    v = 0;
    ck_assert_int_eq(shm_ring_pop_spsc(&x, &v), 0);
    ck_assert_uint_eq(v, 42);
    ck_assert_int_eq(shm_ring_pop_spsc(&x, &v), -EAGAIN);
    shm_segment_close(&a);

    /* A damaged table is refused. */
    t = (struct shm_rings *)rb;
    t->magic ^= 1;
    ck_assert_int_eq(shm_ring_locate(&x, &s, 0, SHM_RING_REQ), -EPROTO);
    t->magic ^= 1;
    t->stride = UINT64_MAX / 2;
    ck_assert_int_eq(shm_ring_locate(&x, &s, 1, SHM_RING_REQ), -EPROTO);
    t->stride = 128;
    ck_assert_int_eq(shm_ring_locate(&x, &s, 1, SHM_RING_NOTIF), -EPROTO);
    t->stride = UINT64_MAX;
    t->workers = 99;
    ck_assert_int_eq(shm_ring_locate(&x, &s, 1, SHM_RING_REQ), -EPROTO);
    shm_segment_close(&s);

    /* No rings planned: an empty region, nothing to locate. */
    p.ring_workers = 0;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_ring"), 0);
    ck_assert_uint_eq(s.hdr->regions[SHM_R_RINGS].size, 0);
    ck_assert_int_eq(shm_ring_locate(&x, &s, 0, SHM_RING_REQ), -ENOENT);
    shm_segment_close(&s);

    /* Plans past the limits are refused. */
    p = plan_rings;
    p.ring_workers = SHM_WORKERS_MAX + 1;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_ring"), -EINVAL);
    p = plan_rings;
    p.notif_ring_slots = SHM_RING_SLOTS_MAX + 1;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_ring"), -EINVAL);
    p = plan_rings;
    p.msg_slot_size = SHM_RING_SLOT_MAX + 1;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_ring"), -EINVAL);
    /* Zero sizes with workers: the smallest ring. */
    p = plan_rings;
    p.req_ring_slots = 0;
    p.msg_slot_size = 0;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_ring"), 0);
    ck_assert_int_eq(shm_ring_locate(&x, &s, 0, SHM_RING_REQ), 0);
    ck_assert_uint_eq(x.size, SHM_RING_SLOTS_MIN);
    ck_assert_uint_eq(x.slot_size, SHM_RING_SLOT_ALIGN);
    shm_segment_close(&s);
}
END_TEST

/* ---------------------------------------------- two processes, stress */

struct rec32 {
    uint64_t seq;
    uint64_t a;
    uint64_t b;
    uint64_t sum;
};

static void
rec32_make(struct rec32 *r, uint64_t seq)
{
    r->seq = seq;
    r->a = fu_mix(seq);
    r->b = fu_mix(r->a ^ 0x5555);
    r->sum = fu_fnv(r, 24);
}

static bool
rec32_ok(const struct rec32 *r)
{
    return r->a == fu_mix(r->seq) && r->b == fu_mix(r->a ^ 0x5555)
           && r->sum == fu_fnv(r, 24);
}

static const struct shm_plan plan_stress = {
    .nodes = 1, .refs = 1, .strings = 8, .slots = 1, .vheap = 64,
    .ring_workers = 1, .req_ring_slots = 4096, .reply_ring_slots = 2,
    .notif_ring_slots = 2, .msg_slot_size = sizeof(struct rec32),
};

/* The child: map the segment again by fd and produce n records. */
static int
stress_producer(int fd, uint64_t n, bool batched, unsigned seed)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    struct rec32        buf[64];
    uint64_t            seq = 0;
    unsigned            spins = 0;

    if (shm_segment_attach(&s, fd, 1) != 0
        || shm_ring_locate(&r, &s, 0, SHM_RING_REQ) != 0)
        return 10;
    while (seq < n) {
        uint32_t k = batched ? (uint32_t)(rand_r(&seed) % 64) + 1 : 1;
        int      rc;

        if (k > n - seq)
            k = (uint32_t)(n - seq);
        for (uint32_t i = 0; i < k; i++)
            rec32_make(&buf[i], seq + i);
        do {
            rc = batched ? shm_ring_push_n_spsc(&r, buf, k)
                         : shm_ring_push_spsc(&r, buf);
            if (rc == -ENOSPC)
                fu_backoff(&spins);
        } while (rc == -ENOSPC);
        if (rc != 0)
            return 11;
        spins = 0;
        seq += k;
    }
    return 0;
}

static void
stress_run(uint64_t n, bool batched)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    struct rec32        buf[64];
    uint64_t            next = 0, bad = 0, full;
    unsigned            spins = 0, seed = 1234;
    double              t0;
    pid_t               pid;
    int                 rc;

    ck_assert_int_eq(shm_plan_create(&s, &plan_stress, "check_ring"), 0);
    ck_assert_int_eq(shm_ring_locate(&r, &s, 0, SHM_RING_REQ), 0);
    t0 = fu_now();
    pid = fu_fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0)
        _exit(stress_producer(s.fd, n, batched, 99));
    while (next < n) {
        uint32_t want = batched ? (uint32_t)(rand_r(&seed) % 64) + 1 : 1;

        rc = batched ? shm_ring_pop_n_spsc(&r, buf, want)
                     : shm_ring_pop_spsc(&r, buf);
        if (rc == -EAGAIN) {
            fu_backoff(&spins);
            continue;
        }
        /*
         * No ck_assert in this loop: a passing Check assertion reports its
         * location to the runner with a write(2).
         */
        if (rc < 0) {
            bad++;
            break;
        }
        if (!batched)
            rc = 1;
        spins = 0;
        for (int i = 0; i < rc; i++) {
            if (buf[i].seq != next || !rec32_ok(&buf[i]))
                bad++;
            next = buf[i].seq + 1;  /* resynchronise after a bad one */
        }
        if (bad != 0)
            break;
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(next, n);
    t0 = fu_now() - t0;
    ck_assert_int_eq(fu_wait(pid), 0);
    ck_assert_int_eq(shm_ring_pop_spsc(&r, buf), -EAGAIN);  /* no extra */
    full = atomic_load(&r.sh->full);
    printf("ring %s: %llu records of %zu B in %.2f s = %.1f M/s "
           "(producer found it full %llu times)\n",
           batched ? "batched" : "single", (unsigned long long)n,
           sizeof(struct rec32), t0, (double)n / t0 / 1e6,
           (unsigned long long)full);
    fflush(stdout);
    shm_segment_close(&s);
}

START_TEST(test_fork_stress_single)
{
    stress_run(12u * 1000 * 1000, false);
}
END_TEST

START_TEST(test_fork_stress_batched)
{
    stress_run(20u * 1000 * 1000, true);
}
END_TEST

/*
 * Lost wake-up: the producer publishes in bursts with random pauses, the
 * consumer goes to sleep whenever the ring looks empty and blocks in
 * poll() on a pipe (the doorbell).  A poll timeout while items wait is a
 * lost wake-up.  shm/doorbell.c's nanomsg variant is in check_doorbell.c.
 */
#define LW_ITEMS   (1200u * 1000)
#define LW_TIMEOUT 2000             /* ms */
#define LWP_ITEMS  (400u * 1000)    /* the promise variant */
#define LWP_MAX    16u

static uint64_t
lwp_ms(void)
{
    return (uint64_t)(fu_now() * 1000.0);
}

/* promise: ask shm_ring_needs_bell_by (its own clock, LWP_MAX). */
static int
lw_producer(int fd, int bell, unsigned seed, uint64_t items, bool promise)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    struct rec32        buf[8];
    uint64_t            seq = 0;
    unsigned            spins = 0;

    if (shm_segment_attach(&s, fd, 1) != 0
        || shm_ring_locate(&r, &s, 0, SHM_RING_REQ) != 0)
        return 10;
    while (seq < items) {
        uint32_t k = (uint32_t)(rand_r(&seed) % 8) + 1;
        uint32_t d = (uint32_t)rand_r(&seed) % 100;
        int      rc;

        if (k > items - seq)
            k = (uint32_t)(items - seq);
        for (uint32_t i = 0; i < k; i++)
            rec32_make(&buf[i], seq + i);
        while ((rc = shm_ring_push_n_spsc(&r, buf, k)) == -ENOSPC)
            fu_backoff(&spins);
        if (rc != 0)
            return 11;
        spins = 0;
        seq += k;
        if ((promise ? shm_ring_needs_bell_by(&r, lwp_ms(), LWP_MAX)
                     : shm_ring_needs_bell(&r))
            && write(bell, "b", 1) == -1 && errno != EAGAIN)
            return 12;
        /* Mostly back-to-back, sometimes long enough for a real sleep. */
        if (d < 60)
            fu_spin_ns((uint64_t)(rand_r(&seed) % 2000));
        else if (d < 95)
            fu_spin_ns(2000 + (uint64_t)(rand_r(&seed) % 18000));
        else
            fu_spin_ns(50000 + (uint64_t)(rand_r(&seed) % 50000));
    }
    return 0;
}

/*
 * A lost-wakeup run's set-up: the segment, its request ring, a pipe as
 * the doorbell (pfd its read end) and the producer forked (items, seed,
 * promise as in lw_producer).  The producer's pid.
 */
static pid_t
lw_start(struct shm_segment *s, struct shm_ring_ref *r, struct pollfd *pfd,
         unsigned seed, uint64_t items, bool promise)
{
    struct shm_plan p = plan_stress;
    int             pipefd[2];
    pid_t           pid;

    p.req_ring_slots = 256;
    ck_assert_int_eq(shm_plan_create(s, &p, "check_ring"), 0);
    ck_assert_int_eq(shm_ring_locate(r, s, 0, SHM_RING_REQ), 0);
    ck_assert_int_eq(pipe2(pipefd, O_NONBLOCK | O_CLOEXEC), 0);
    pid = fu_fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        close(pipefd[0]);
        _exit(lw_producer(s->fd, pipefd[1], seed, items, promise));
    }
    close(pipefd[1]);
    pfd->fd = pipefd[0];
    pfd->events = POLLIN;
    return pid;
}

/* Pop what waits, checking each record is *next, intact (*bad counts
 * those that are not): the pop's result. */
static int
lw_take(struct shm_ring_ref *r, uint64_t *next, uint64_t *bad)
{
    struct rec32 buf[64];
    int          rc = shm_ring_pop_n_spsc(r, buf, 64);

    for (int i = 0; i < rc; i++) {
        if (buf[i].seq != *next || !rec32_ok(&buf[i]))
            (*bad)++;
        *next = buf[i].seq + 1;
    }
    return rc;
}

START_TEST(test_lost_wakeup_pipe)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    uint64_t            next = 0, bad = 0, lost = 0, idle = 0, wakes = 0;
    struct pollfd       pfd;
    char                junk[256];
    int                 rc;
    double              t0;
    pid_t               pid;

    t0 = fu_now();
    pid = lw_start(&s, &r, &pfd, 4321, LW_ITEMS, false);
    while (next < LW_ITEMS) {
        rc = lw_take(&r, &next, &bad);
        if (rc > 0)
            continue;
        ck_assert_int_eq(rc, -EAGAIN);
        if (!shm_ring_sleep_prepare(&r))
            continue;
        rc = poll(&pfd, 1, LW_TIMEOUT);
        if (rc == 0) {
            if (shm_ring_count_spsc(&r) != 0)
                lost++;             /* items waited, nobody rang */
            else
                idle++;
        } else {
            wakes++;
        }
        /* Latch discipline: reset the doorbell, then unmark, then look. */
        while (read(pfd.fd, junk, sizeof(junk)) > 0)
            ;
        shm_ring_wake_clear(&r);
        if (lost != 0)
            break;
    }
    t0 = fu_now() - t0;
    ck_assert_int_eq(fu_wait(pid), 0);
    printf("ring lost-wakeup (pipe): %u hand-offs in %.2f s = %.2f M/s; "
           "consumer slept %llu times, producer rang %llu times, "
           "%llu wakes, %llu idle timeouts, %llu lost\n",
           LW_ITEMS, t0, LW_ITEMS / t0 / 1e6,
           (unsigned long long)atomic_load(&r.sh->sleeps),
           (unsigned long long)atomic_load(&r.sh->bells),
           (unsigned long long)wakes, (unsigned long long)idle,
           (unsigned long long)lost);
    fflush(stdout);
    ck_assert_uint_eq(lost, 0);
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(next, LW_ITEMS);
    ck_assert_uint_gt(atomic_load(&r.sh->sleeps), 1000);
    close(pfd.fd);
    shm_segment_close(&s);
}
END_TEST

/*
 * Lost wake-up with promises: the consumer's sleeps mix no promise, a
 * long promise (it blocks up to LW_TIMEOUT, so only the max_wait rule can
 * wake it early) and a short one (1-2 ms, it wakes by itself).  The
 * producer asks shm_ring_needs_bell_by with its own clock.  Lost: a
 * sleep without a promise that timed out with items waiting, or a long
 * promise that timed out with max_wait or more waiting (a stale promise
 * must never hold back a bell the current sleep needs).
 */


START_TEST(test_lost_wakeup_promise)
{
    struct shm_segment  s;
    struct shm_ring_ref r;
    uint64_t            next = 0, bad = 0, lost = 0, kept = 0, n = 0;
    unsigned            seed = 99;
    struct pollfd       pfd;
    char                junk[256];
    int                 rc;
    pid_t               pid;

    pid = lw_start(&s, &r, &pfd, 8765, LWP_ITEMS, true);
    while (next < LWP_ITEMS) {
        uint64_t by = 0;
        int      kind, tmo = LW_TIMEOUT;

        rc = lw_take(&r, &next, &bad);
        if (rc > 0)
            continue;
        ck_assert_int_eq(rc, -EAGAIN);
        kind = (int)(rand_r(&seed) % 3);
        if (kind == 1) {
            by = lwp_ms() + LW_TIMEOUT;
        } else if (kind == 2) {
            tmo = 1 + (int)(rand_r(&seed) % 2);
            by = lwp_ms() + (uint64_t)tmo;
        }
        if (!shm_ring_sleep_prepare_by(&r, by))
            continue;
        n++;
        rc = poll(&pfd, 1, tmo);
        if (rc == 0) {
            uint32_t waiting = shm_ring_count_spsc(&r);

            if ((kind == 0 && waiting != 0)
                || (kind == 1 && waiting >= LWP_MAX))
                lost++;
            else if (kind == 2 && waiting != 0)
                kept++;             /* woke by itself, as promised */
        }
        while (read(pfd.fd, junk, sizeof(junk)) > 0)
            ;
        shm_ring_wake_clear(&r);
        if (lost != 0)
            break;
    }
    ck_assert_int_eq(fu_wait(pid), 0);
    printf("ring lost-wakeup (promises): %u hand-offs, %llu sleeps, "
           "%llu bells, %llu deferred, %llu short promises kept with "
           "items waiting, %llu lost\n",
           LWP_ITEMS, (unsigned long long)n,
           (unsigned long long)atomic_load(&r.sh->bells),
           (unsigned long long)atomic_load(&r.sh->deferred),
           (unsigned long long)kept, (unsigned long long)lost);
    fflush(stdout);
    ck_assert_uint_eq(lost, 0);
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(next, LWP_ITEMS);
    ck_assert_uint_gt(atomic_load(&r.sh->deferred), 100);
    ck_assert_uint_gt(atomic_load(&r.sh->bells), 100);
    close(pfd.fd);
    shm_segment_close(&s);
}
END_TEST

static Suite *
ring_suite(void)
{
    Suite *s = suite_create("SPSC rings");
    TCase *tc;

    tc = tcase_create("push/pop/full/empty");
    tcase_add_test(tc, test_geometry);
    tcase_add_test(tc, test_push_pop_full_empty);
    tcase_add_test(tc, test_wrap);
    tcase_add_test(tc, test_batch);
    suite_add_tcase(s, tc);

    tc = tcase_create("refusals");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_attach_refuses);
    tcase_add_test(tc, test_corrupt_indices);
    suite_add_tcase(s, tc);

    tc = tcase_create("sleep and bell");
    tcase_add_test(tc, test_bell_protocol);
    tcase_add_test(tc, test_bell_by_promise);
    tcase_add_test(tc, test_discard_and_reset);
    suite_add_tcase(s, tc);

    tc = tcase_create("segment region");
    tcase_add_test(tc, test_segment_rings);
    suite_add_tcase(s, tc);

    tc = tcase_create("two processes");
    tcase_set_timeout(tc, 50);
    tcase_add_test(tc, test_fork_stress_single);
    tcase_add_test(tc, test_fork_stress_batched);
    tcase_add_test(tc, test_lost_wakeup_pipe);
    tcase_add_test(tc, test_lost_wakeup_promise);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(ring_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
