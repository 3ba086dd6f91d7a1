/*
 * tests/unit/shm/check_value.c: shm/value.c: value slots under a seqlock,
 * the value heap and the interest masks.
 *
 * Single-process cases pin the API: inline and heap values, short read
 * buffers, bad slots, heap reuse and exhaustion, the reader's bounds checks
 * on a slot it cannot trust, interest bits.  Two cross-process cases test
 * the protocol (docs/style.md §9, ck regressions/ck_sequence):
 *
 *   stress        one writer process rewrites values at full speed (8-byte
 *                 scalars, strings of 1..2000 bytes, arrays) while two reader
 *                 processes, attached read-only by fd as workers are, read
 *                 random slots and verify every value against a checksum
 *                 that covers its slot index; zero torn reads are allowed.
 *   killed writer a writer is SIGKILLed with a slot's seq odd and half its
 *                 bytes written; a reader gets -EAGAIN in bounded time,
 *                 other slots read fine, and a new writer's complete write
 *                 makes the slot readable again.
 *
 * Children never use ck_assert (they are not Check's own process): they
 * report through exit status and a MAP_SHARED result block, and die with
 * their parent (PR_SET_PDEATHSIG) or an alarm() if a test goes wrong.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/plan.h"
#include "shm/segment.h"
#include "shm/value.h"

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
vseg(struct shm_segment *s, struct shm_values *v, uint32_t slots,
     uint64_t vheap)
{
    struct shm_plan p = { .nodes = 1, .refs = 1, .strings = 8,
                          .slots = slots, .vheap = vheap };

    ck_assert_int_eq(shm_plan_create(s, &p, "check_value"), 0);
    ck_assert_int_eq(shm_values_open(v, s), 0);
    ck_assert_uint_eq(v->nslots, slots);
}

static struct shm_value
meta_for(uint32_t status, int64_t ts)
{
    struct shm_value m = {
        .status = status, .flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS,
        .source_ts = ts, .server_ts = ts + 1, .source_ps = 7,
        .server_ps = 9,
    };

    return m;
}

static uint32_t
slot_seq(const struct shm_values *v, uint32_t i)
{
    return atomic_load_explicit(&v->slots[i].seq, memory_order_acquire);
}

static void
fill_pattern(uint8_t *p, uint32_t n, uint32_t salt)
{
    for (uint32_t k = 0; k < n; k++)
        p[k] = (uint8_t)(k * 131u + salt * 7u + (k >> 8));
}

/* Write len pattern bytes to slot i, read back, compare everything. */
static void
roundtrip(struct shm_values *v, uint32_t i, uint32_t len, uint32_t salt)
{
    static uint8_t   in[(1u << 20) + 4096], out[(1u << 20) + 4096];
    struct shm_value m = meta_for(0x80350000u + salt, 1000 + salt), r;
    uint32_t         seq = slot_seq(v, i);

    ck_assert_uint_le(len, sizeof(in));
    fill_pattern(in, len, salt);
    memset(out, 0xEE, sizeof(out));
    ck_assert_int_eq(shm_value_write(v, i, in, len, &m), 0);
    ck_assert_uint_eq(slot_seq(v, i), seq + 2);
    ck_assert_uint_eq(slot_seq(v, i) & 1, 0);
    memset(&r, 0x55, sizeof(r));
    ck_assert_int_eq(shm_value_read(v, i, &r, out, sizeof(out)), 0);
    ck_assert_uint_eq(r.len, len);
    ck_assert_uint_eq(r.status, m.status);
    ck_assert_uint_eq(r.flags, m.flags);
    ck_assert_int_eq(r.source_ts, m.source_ts);
    ck_assert_int_eq(r.server_ts, m.server_ts);
    ck_assert_uint_eq(r.source_ps, m.source_ps);
    ck_assert_uint_eq(r.server_ps, m.server_ps);
    ck_assert_int_eq(memcmp(in, out, len), 0);
    /* Nothing past len; an inline value may fill the inline size
     * (value.h: a fixed-size copy). */
    ck_assert_uint_eq(out[len > SHM_VALUE_INLINE ? len : SHM_VALUE_INLINE],
                      0xEE);
    if (len < SHM_VALUE_INLINE) {
        /* A buffer smaller than the inline size gets len bytes only. */
        memset(out, 0xEE, SHM_VALUE_INLINE + 1);
        ck_assert_int_eq(shm_value_read(v, i, &r, out, len), 0);
        ck_assert_int_eq(memcmp(in, out, len), 0);
        ck_assert_uint_eq(out[len], 0xEE);
    }
    ck_assert_uint_eq(!!(v->slots[i].flags & SHM_VF_HEAP),
                      len > SHM_VALUE_INLINE);
}

/* ------------------------------------------------------------------ */
/* Single process                                                      */
/* ------------------------------------------------------------------ */

START_TEST(test_inline)
{
    struct shm_segment s;
    struct shm_values  v;
    uint32_t           lens[SHM_VALUE_INLINE + 1];

    /* Every inline length: the slot copy takes words of 1, 4 and 8. */
    for (uint32_t k = 0; k <= SHM_VALUE_INLINE; k++)
        lens[k] = k;
    vseg(&s, &v, 32, 4096);
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
        roundtrip(&v, (uint32_t)k, lens[k], (uint32_t)k);
    /* Inline values never touch the heap. */
    ck_assert_uint_eq(s.hdr->vheap.blocks_used, 0);
    ck_assert_uint_eq(s.hdr->vheap.top, 0);
    /* Rewrite a slot with a shorter value; the old bytes do not show. */
    roundtrip(&v, 0, SHM_VALUE_INLINE, 40);
    roundtrip(&v, 0, 3, 41);
    roundtrip(&v, 0, 17, 42);
    roundtrip(&v, 0, 9, 43);
    /* Every slot kept its own value. */
    for (size_t k = 1; k < sizeof(lens) / sizeof(lens[0]); k++) {
        uint8_t          want[SHM_VALUE_INLINE], got[SHM_VALUE_INLINE];
        struct shm_value r;

        fill_pattern(want, lens[k], (uint32_t)k);
        ck_assert_int_eq(shm_value_read(&v, (uint32_t)k, &r, got,
                                        sizeof(got)), 0);
        ck_assert_uint_eq(r.len, lens[k]);
        ck_assert_int_eq(memcmp(want, got, lens[k]), 0);
    }
    /* Only the timestamp flags are taken from meta. */
    {
        struct shm_value m = meta_for(1, 2), r;
        uint8_t          b[4] = { 1, 2, 3, 4 };

        m.flags = 0xFFFFFFFFu;
        ck_assert_int_eq(shm_value_write(&v, 30, b, 4, &m), 0);
        ck_assert_uint_eq(v.slots[30].flags & SHM_VF_HEAP, 0);
        ck_assert_int_eq(shm_value_read(&v, 30, &r, b, sizeof(b)), 0);
        ck_assert_uint_eq(r.flags, SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS);
        m.flags = 0;
        ck_assert_int_eq(shm_value_write(&v, 30, b, 4, &m), 0);
        ck_assert_int_eq(shm_value_read(&v, 30, &r, b, sizeof(b)), 0);
        ck_assert_uint_eq(r.flags, 0);
    }
    /* A never-written slot reads as an empty value. */
    {
        struct shm_segment s2;
        struct shm_values  v2;
        struct shm_value   r;

        vseg(&s2, &v2, 2, 0);
        ck_assert_int_eq(shm_value_read(&v2, 1, &r, NULL, 0), 0);
        ck_assert_uint_eq(r.len, 0);
        shm_segment_close(&s2);
    }
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_heap)
{
    struct shm_segment s;
    struct shm_values  v;
    static const uint32_t lens[] = {
        SHM_VALUE_INLINE + 1, 56, 57, 100, 1000, 2040, 2041, 4096,
        3 * 1024, 1u << 20,
    };
    uint64_t           bytes = 0;

    vseg(&s, &v, 16, 8u << 20);
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        uint64_t cls = 64;

        while (cls < (uint64_t)lens[k] + sizeof(struct shm_vblock))
            cls <<= 1;
        roundtrip(&v, (uint32_t)k, lens[k], (uint32_t)k + 100);
        bytes += cls;
        ck_assert_uint_eq(s.hdr->vheap.blocks_used, k + 1);
        ck_assert_uint_eq(s.hdr->vheap.bytes_used, bytes);
        /* The bytes sit in the heap, inside it. */
        ck_assert_uint_ne(v.slots[k].heap, 0);
        ck_assert_uint_le((uint64_t)v.slots[k].heap + cls, v.heap_size);
    }
    /* Earlier values survive later allocations. */
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        static uint8_t   want[1u << 20], got[1u << 20];
        struct shm_value r;

        fill_pattern(want, lens[k], (uint32_t)k + 100);
        ck_assert_int_eq(shm_value_read(&v, (uint32_t)k, &r, got,
                                        sizeof(got)), 0);
        ck_assert_uint_eq(r.len, lens[k]);
        ck_assert_int_eq(memcmp(want, got, lens[k]), 0);
    }
    /* Heap -> heap -> inline: the old blocks go back. */
    roundtrip(&v, 4, 1500, 7);
    ck_assert_uint_eq(s.hdr->vheap.blocks_used,
                      sizeof(lens) / sizeof(lens[0]));
    roundtrip(&v, 4, 10, 8);
    ck_assert_uint_eq(s.hdr->vheap.blocks_used,
                      sizeof(lens) / sizeof(lens[0]) - 1);
    roundtrip(&v, 9, 0, 9);                     /* the 1 MiB one */
    ck_assert_uint_eq(s.hdr->vheap.blocks_used,
                      sizeof(lens) / sizeof(lens[0]) - 2);
    /* The freed 2 MiB block is reused, not carved anew. */
    {
        uint64_t top = s.hdr->vheap.top;

        roundtrip(&v, 15, (1u << 20) + 100, 10);
        ck_assert_uint_eq(s.hdr->vheap.top, top);
    }
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_short_buffer)
{
    struct shm_segment s;
    struct shm_values  v;
    struct shm_value   m = meta_for(0, 1), r;
    uint8_t            in[3000], out[3001];

    vseg(&s, &v, 4, 65536);
    fill_pattern(in, sizeof(in), 3);
    ck_assert_int_eq(shm_value_write(&v, 0, in, 10, &m), 0);
    ck_assert_int_eq(shm_value_write(&v, 1, in, 3000, &m), 0);
    ck_assert_int_eq(shm_value_write(&v, 2, in, 0, &m), 0);

    for (uint32_t i = 0; i < 2; i++) {
        uint32_t len = i == 0 ? 10 : 3000;

        memset(out, 0xEE, sizeof(out));
        r.len = 0;
        ck_assert_int_eq(shm_value_read(&v, i, &r, out, len - 1), -ENOSPC);
        ck_assert_uint_eq(r.len, len);          /* says how much is needed */
        for (size_t k = 0; k < sizeof(out); k++)
            ck_assert_uint_eq(out[k], 0xEE);    /* and wrote nothing */
        r.len = 0;
        ck_assert_int_eq(shm_value_read(&v, i, &r, NULL, 0), -ENOSPC);
        ck_assert_uint_eq(r.len, len);
        /* Exactly enough is enough. */
        ck_assert_int_eq(shm_value_read(&v, i, &r, out, len), 0);
        ck_assert_int_eq(memcmp(in, out, len), 0);
        ck_assert_uint_eq(out[len], 0xEE);
    }
    ck_assert_int_eq(shm_value_read(&v, 2, &r, NULL, 0), 0);
    ck_assert_uint_eq(r.len, 0);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_bad_slot)
{
    struct shm_segment s;
    struct shm_values  v;
    struct shm_value   m = meta_for(0, 1), r;
    uint8_t            b[64] = { 1 };
    static const uint32_t bad[] = { 4, 5, 1000, UINT32_MAX };

    vseg(&s, &v, 4, 65536);
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        ck_assert_int_eq(shm_value_read(&v, bad[k], &r, b, sizeof(b)),
                         -EINVAL);
        ck_assert_int_eq(shm_value_write(&v, bad[k], b, 8, &m), -EINVAL);
        /* A heap-sized value to a bad slot allocates nothing. */
        ck_assert_int_eq(shm_value_write(&v, bad[k], b, 64, &m), -EINVAL);
    }
    ck_assert_uint_eq(s.hdr->vheap.blocks_used, 0);
    ck_assert_uint_eq(s.hdr->vheap.top, 0);
    for (uint32_t i = 0; i < 4; i++)
        ck_assert_uint_eq(slot_seq(&v, i), 0);
    ck_assert_int_eq(shm_value_read(&v, 3, &r, b, sizeof(b)), 0);
    shm_segment_close(&s);
}
END_TEST

/*
 * 100,000 rewrites of growing and shrinking strings on 4 slots: freed
 * blocks are reused, so the bump pointer stops moving and bytes_used is
 * exactly what the live values hold.
 */
START_TEST(test_heap_reuse)
{
    enum { NS = 4, N = 100000, MAXLEN = 3000 };
    struct shm_segment s;
    struct shm_values  v;
    static uint8_t     in[MAXLEN], out[MAXLEN];
    uint32_t           len[NS] = { 0 };
    uint64_t           top_warm = 0, max_bytes = 0;

    vseg(&s, &v, NS, 256 * 1024);   /* without reuse, full within 200 writes */
    for (uint32_t w = 0; w < N; w++) {
        uint32_t         i = w % NS;
        /* A triangle wave 1..MAXLEN..1, a different phase per slot. */
        uint32_t         t = (w * 37u + i * 911u) % (2 * MAXLEN);
        uint32_t         l = t < MAXLEN ? t + 1 : 2 * MAXLEN - t;
        struct shm_value m = meta_for(w, w), r;
        uint64_t         bytes = 0, blocks = 0;

        fill_pattern(in, l, w);
        if (shm_value_write(&v, i, in, l, &m) != 0)
            ck_abort_msg("write %u (slot %u, %u bytes) failed", w, i, l);
        len[i] = l;
        for (uint32_t j = 0; j < NS; j++) {
            uint64_t cls = 64;

            if (len[j] <= SHM_VALUE_INLINE)
                continue;
            while (cls < (uint64_t)len[j] + sizeof(struct shm_vblock))
                cls <<= 1;
            bytes += cls;
            blocks++;
        }
        if (s.hdr->vheap.bytes_used != bytes
            || s.hdr->vheap.blocks_used != blocks)
            ck_abort_msg("write %u: bytes_used %llu (want %llu), blocks %llu "
                         "(want %llu)", w,
                         (unsigned long long)s.hdr->vheap.bytes_used,
                         (unsigned long long)bytes,
                         (unsigned long long)s.hdr->vheap.blocks_used,
                         (unsigned long long)blocks);
        if (s.hdr->vheap.bytes_used > max_bytes)
            max_bytes = s.hdr->vheap.bytes_used;
        if ((w & 63) == 0 || l > 2000) {
            if (shm_value_read(&v, i, &r, out, sizeof(out)) != 0
                || r.len != l || r.status != w || memcmp(in, out, l) != 0)
                ck_abort_msg("write %u: slot %u reads back wrong", w, i);
        }
        /*
         * Every slot's lengths repeat after 1500 of its writes, so the
         * whole pattern repeats every 6000 writes: by half-way each class
         * has met its peak demand and nothing more is carved.
         */
        if (w == N / 2)
            top_warm = s.hdr->vheap.top;
    }
    ck_assert_uint_ne(top_warm, 0);
    ck_assert_uint_eq(s.hdr->vheap.top, top_warm);
    ck_assert_uint_le(max_bytes, NS * 4096);
    /*
     * A class never holds more than NS + 1 blocks at once (every slot, plus
     * the one a write allocates before it frees the old): 64 + ... + 4096
     * is 8128 bytes per round.
     */
    ck_assert_uint_le(s.hdr->vheap.top, (NS + 1) * 8128 + 64);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_heap_full)
{
    struct shm_segment s;
    struct shm_values  v;
    struct shm_value   m = meta_for(0x11, 1), r;
    static uint8_t     in[8192], out[8192];
    uint64_t           top, blocks, bytes;
    uint32_t           seq;

    vseg(&s, &v, 4, 4096);
    fill_pattern(in, sizeof(in), 1);
    ck_assert_int_eq(shm_value_write(&v, 2, "old", 3, &m), 0);
    ck_assert_int_eq(shm_value_write(&v, 0, in, 1000, &m), 0);    /* 1024 */
    ck_assert_int_eq(shm_value_write(&v, 1, in, 2000, &m), 0);    /* 2048 */
    top = s.hdr->vheap.top;
    blocks = s.hdr->vheap.blocks_used;
    bytes = s.hdr->vheap.bytes_used;
    ck_assert_uint_eq(top, 64 + 1024 + 2048);

    /* No room for a 2048-byte block: refused, slot 2 keeps "old". */
    seq = slot_seq(&v, 2);
    m.status = 0x22;
    ck_assert_int_eq(shm_value_write(&v, 2, in, 1500, &m), -ENOSPC);
    ck_assert_uint_eq(slot_seq(&v, 2), seq);
    ck_assert_int_eq(shm_value_read(&v, 2, &r, out, sizeof(out)), 0);
    ck_assert_uint_eq(r.len, 3);
    ck_assert_uint_eq(r.status, 0x11);
    ck_assert_int_eq(memcmp(out, "old", 3), 0);
    /* A heap slot that cannot grow keeps its old heap value. */
    seq = slot_seq(&v, 0);
    ck_assert_int_eq(shm_value_write(&v, 0, in + 1, 3000, &m), -ENOSPC);
    ck_assert_uint_eq(slot_seq(&v, 0), seq);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), 0);
    ck_assert_uint_eq(r.len, 1000);
    ck_assert_uint_eq(r.status, 0x11);
    ck_assert_int_eq(memcmp(out, in, 1000), 0);
    /* Larger than the largest class. */
    ck_assert_int_eq(shm_value_write(&v, 3, in, UINT32_MAX, &m), -ENOSPC);
    ck_assert_int_eq(shm_value_write(&v, 3, in,
                                     (1u << (SHM_VHEAP_MIN_SHIFT
                                             + SHM_VHEAP_CLASSES - 1)),
                                     &m), -ENOSPC);
    ck_assert_uint_eq(slot_seq(&v, 3), 0);
    /* Nothing leaked by the failures. */
    ck_assert_uint_eq(s.hdr->vheap.top, top);
    ck_assert_uint_eq(s.hdr->vheap.blocks_used, blocks);
    ck_assert_uint_eq(s.hdr->vheap.bytes_used, bytes);
    /* Smaller values still fit in what is left, and freed blocks return. */
    ck_assert_int_eq(shm_value_write(&v, 2, in, 500, &m), 0);      /* 512 */
    ck_assert_int_eq(shm_value_write(&v, 1, in, 5, &m), 0);       /* frees */
    ck_assert_int_eq(shm_value_write(&v, 2, in, 1500, &m), 0);    /* reuses */
    ck_assert_int_eq(shm_value_read(&v, 2, &r, out, sizeof(out)), 0);
    ck_assert_uint_eq(r.len, 1500);
    ck_assert_int_eq(memcmp(out, in, 1500), 0);
    shm_segment_close(&s);
}
END_TEST

/*
 * A reader must survive a slot it cannot trust (another process wrote it):
 * an odd seq, a heap offset or length outside the heap, an inline length
 * larger than the slot.  It reports -EAGAIN and never copies out of bounds.
 */
START_TEST(test_reader_bounds)
{
    struct shm_segment     s;
    struct shm_values      v;
    struct shm_value       m = meta_for(0, 1), r;
    struct shm_value_slot *sl;
    static uint8_t         out[1u << 16];
    uint64_t               t0;

    vseg(&s, &v, 2, 4096);
    ck_assert_int_eq(shm_value_write(&v, 0, "abcdefgh", 8, &m), 0);
    sl = &v.slots[0];

    /* Stuck odd: bounded, -EAGAIN. */
    atomic_store(&sl->seq, 3);
    t0 = now_ns();
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    ck_assert_uint_lt(now_ns() - t0, 1000000000u);
    atomic_store(&sl->seq, 4);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), 0);
    ck_assert_int_eq(memcmp(out, "abcdefgh", 8), 0);

    /* Inline length beyond the slot. */
    atomic_store(&sl->len, SHM_VALUE_INLINE + 1);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    /* Heap flag with offset 0, an offset past the heap, a length past it. */
    atomic_store(&sl->flags, SHM_VF_HEAP);
    atomic_store(&sl->len, 100);
    atomic_store(&sl->heap, 0);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    atomic_store(&sl->heap, (uint32_t)v.heap_size);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    atomic_store(&sl->heap, UINT32_MAX);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    atomic_store(&sl->heap, 64);
    atomic_store(&sl->len, (uint32_t)v.heap_size);
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    atomic_store(&sl->len, (uint32_t)(v.heap_size - 64 - 8 + 1));
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), -EAGAIN);
    /* The last in-bounds length is fine. */
    atomic_store(&sl->len, (uint32_t)(v.heap_size - 64 - 8));
    ck_assert_int_eq(shm_value_read(&v, 0, &r, out, sizeof(out)), 0);
    /* The neighbour slot is untouched throughout. */
    ck_assert_int_eq(shm_value_read(&v, 1, &r, out, sizeof(out)), 0);
    ck_assert_uint_eq(r.len, 0);
    shm_segment_close(&s);
}
END_TEST

START_TEST(test_interest)
{
    struct shm_segment s, a;
    struct shm_values  v, va;
    pid_t              pid;
    int                st;
    enum { ROUNDS = 200000 };

    vseg(&s, &v, 8, 4096);
    for (uint32_t i = 0; i < 8; i++)
        ck_assert_uint_eq(shm_interest_get(&v, i), 0);
    shm_interest_set(&v, 3, 0);
    shm_interest_set(&v, 3, 5);
    shm_interest_set(&v, 3, 63);
    shm_interest_set(&v, 3, 5);                 /* idempotent */
    ck_assert_uint_eq(shm_interest_get(&v, 3),
                      (UINT64_C(1) << 0) | (UINT64_C(1) << 5)
                          | (UINT64_C(1) << 63));
    shm_interest_clear(&v, 3, 5);
    ck_assert_uint_eq(shm_interest_get(&v, 3),
                      (UINT64_C(1) << 0) | (UINT64_C(1) << 63));
    shm_interest_clear(&v, 3, 5);               /* idempotent */
    shm_interest_clear(&v, 3, 1);               /* never set */
    ck_assert_uint_eq(shm_interest_get(&v, 3),
                      (UINT64_C(1) << 0) | (UINT64_C(1) << 63));
    for (uint32_t i = 0; i < 8; i++)
        if (i != 3)
            ck_assert_uint_eq(shm_interest_get(&v, i), 0);
    /* Values and interest are separate. */
    ck_assert_int_eq(shm_value_write(&v, 3, "x", 1, &(struct shm_value){ 0 }),
                     0);
    ck_assert_uint_eq(shm_interest_get(&v, 3),
                      (UINT64_C(1) << 0) | (UINT64_C(1) << 63));

    /*
     * A worker process with its own read-write attachment toggles its bit
     * on slot 4 while this process toggles bit 1; neither loses the
     * other's updates (atomic OR / AND-NOT on one word).
     */
    ck_assert_int_eq(shm_segment_attach(&a, dup(s.fd), 1), 0);
    ck_assert_int_eq(shm_values_open(&va, &a), 0);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        for (int k = 0; k < ROUNDS; k++) {
            shm_interest_set(&va, 4, 2);
            shm_interest_clear(&va, 4, 2);
        }
        shm_interest_set(&va, 4, 2);
        shm_interest_set(&va, 5, 7);
        _exit(0);
    }
    for (int k = 0; k < ROUNDS; k++) {
        shm_interest_set(&v, 4, 1);
        shm_interest_clear(&v, 4, 1);
        if ((k & 1023) == 0 && (shm_interest_get(&v, 4) & ~UINT64_C(6)) != 0)
            ck_abort_msg("foreign bit in slot 4's mask");
    }
    shm_interest_set(&v, 4, 1);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_uint_eq(shm_interest_get(&v, 4), 6);
    ck_assert_uint_eq(shm_interest_get(&v, 5), UINT64_C(1) << 7);
    ck_assert_uint_eq(shm_interest_get(&va, 4), 6);
    shm_segment_close(&a);
    shm_segment_close(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Checksummed values for the cross-process tests                      */
/* ------------------------------------------------------------------ */

#define VAL_MAX 2048

static inline uint64_t
mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/* Bytes of the value with this seed: scalar, string or array. */
static inline uint32_t
val_len(uint64_t seed)
{
    switch (seed % 3) {
    case 0:  return 8;                                  /* Int64/Double */
    case 1:  return 1 + (uint32_t)((seed >> 8) % 2000); /* String */
    default: return 5 + 8 * (1 + (uint32_t)((seed >> 8) % 200)); /* array */
    }
}

/* A hash of p[0..n) that depends on the slot index. */
static uint64_t
val_hash(uint32_t slot, const uint8_t *p, uint32_t n)
{
    uint64_t h = UINT64_C(0x243f6a8885a308d3) ^ ((uint64_t)slot << 32) ^ n;
    uint32_t k = 0;

    for (; k + 8 <= n; k += 8) {
        uint64_t w;

        memcpy(&w, p + k, 8);
        h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 32;
    }
    for (; k < n; k++)
        h = (h ^ p[k]) * UINT64_C(0x100000001b3);
    return mix64(h);
}

/*
 * The value (slot, seed): len = val_len(seed) bytes from a stream seeded by
 * both.  From 24 bytes up it carries its own check: bytes 0..3 the length,
 * 4..11 the seed, the last 8 a hash of everything before and of the slot.
 */
static void
val_make(uint32_t slot, uint64_t seed, uint8_t *p, uint32_t len)
{
    uint64_t x = mix64(seed ^ ((uint64_t)slot * UINT64_C(0x9e3779b97f4a7c15)));
    uint32_t k = 0;

    for (; k + 8 <= len; k += 8) {
        x += UINT64_C(0x9e3779b97f4a7c15);
        uint64_t w = mix64(x);

        memcpy(p + k, &w, 8);
    }
    if (k < len) {
        uint64_t w = mix64(x + 1);

        memcpy(p + k, &w, len - k);
    }
    if (len >= 24) {
        uint64_t h;

        memcpy(p, &len, 4);
        memcpy(p + 4, &seed, 8);
        h = val_hash(slot, p, len - 8);
        memcpy(p + len - 8, &h, 8);
    }
}

static struct shm_value
val_meta(uint32_t slot, uint64_t seed, uint32_t len)
{
    struct shm_value m = {
        .status = (uint32_t)(seed >> 32) ^ len,
        .flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS,
        .source_ts = (int64_t)seed,
        .server_ts = (int64_t)mix64(seed ^ slot),
        .source_ps = (uint16_t)slot,
        .server_ps = (uint16_t)(seed >> 16),
        .len = len,
    };

    return m;
}

static int
val_write(struct shm_values *v, uint32_t slot, uint64_t seed)
{
    uint8_t          b[VAL_MAX];
    uint32_t         len = val_len(seed);
    struct shm_value m = val_meta(slot, seed, len);

    val_make(slot, seed, b, len);
    return shm_value_write(v, slot, b, len, &m);
}

/*
 * True when (m, p) read from slot is one whole value: its metadata and
 * bytes all belong to the seed in source_ts and to this slot.
 */
static bool
val_ok(uint32_t slot, const struct shm_value *m, const uint8_t *p)
{
    uint64_t         seed = (uint64_t)m->source_ts;
    uint32_t         len = val_len(seed);
    struct shm_value want = val_meta(slot, seed, len);
    uint8_t          b[VAL_MAX];

    if (m->len != len || m->status != want.status || m->flags != want.flags
        || m->server_ts != want.server_ts || m->source_ps != want.source_ps
        || m->server_ps != want.server_ps)
        return false;
    if (len >= 24) {
        uint32_t l;
        uint64_t s, h;

        memcpy(&l, p, 4);
        memcpy(&s, p + 4, 8);
        memcpy(&h, p + len - 8, 8);
        if (l != len || s != seed || h != val_hash(slot, p, len - 8))
            return false;
    }
    val_make(slot, seed, b, len);
    return memcmp(b, p, len) == 0;
}

/* The checker catches every kind of tear the stress test looks for. */
START_TEST(test_checksum_catches_tears)
{
    uint8_t          a[VAL_MAX], b[VAL_MAX], t[VAL_MAX];
    uint64_t         sa = 0, sb = 0;
    struct shm_value ma, mb, mt;

    /* Two string seeds of different lengths >= 24, one scalar seed. */
    for (uint64_t s = 1; sa == 0 || sb == 0; s++) {
        uint64_t x = mix64(s);

        if (x % 3 == 1 && val_len(x) > 100 && sa == 0)
            sa = x;
        else if (x % 3 == 1 && val_len(x) > 100 && val_len(x) != val_len(sa))
            sb = x;
    }
    val_make(3, sa, a, val_len(sa));
    val_make(3, sb, b, val_len(sb));
    ma = val_meta(3, sa, val_len(sa));
    mb = val_meta(3, sb, val_len(sb));
    ck_assert(val_ok(3, &ma, a));
    ck_assert(val_ok(3, &mb, b));
    /* Read from the wrong slot. */
    ck_assert(!val_ok(4, &ma, a));
    /* Metadata of one write, bytes of another. */
    ck_assert(!val_ok(3, &ma, b));
    mt = ma;
    mt.len = mb.len;
    ck_assert(!val_ok(3, &mt, a));
    mt = ma;
    mt.status ^= 1;
    ck_assert(!val_ok(3, &mt, a));
    /* Bytes half from each write, at several split points. */
    for (uint32_t cut = 1; cut < val_len(sa) && cut < val_len(sb); cut += 7) {
        memcpy(t, a, val_len(sa));
        memcpy(t, b, cut);
        if (memcmp(t, a, val_len(sa)) != 0)
            ck_assert(!val_ok(3, &ma, t));
        memcpy(t, b, val_len(sb));
        memcpy(t, a, cut);
        if (memcmp(t, b, val_len(sb)) != 0)
            ck_assert(!val_ok(3, &mb, t));
    }
    /* The tail of one write on the head of another. */
    memcpy(t, a, val_len(sa));
    memcpy(t + 12, b + 12, val_len(sa) / 2);
    ck_assert(!val_ok(3, &ma, t));
    /* One flipped bit anywhere. */
    for (uint32_t k = 0; k < val_len(sa); k++) {
        memcpy(t, a, val_len(sa));
        t[k] ^= 0x10;
        ck_assert(!val_ok(3, &ma, t));
    }
    /* Short values: a 1-byte string and a scalar still carry their seed. */
    for (uint64_t s = 1;; s++) {
        uint64_t x = mix64(s);

        if (x % 3 == 1 && val_len(x) < 24) {
            uint32_t l = val_len(x);

            val_make(9, x, a, l);
            ma = val_meta(9, x, l);
            ck_assert(val_ok(9, &ma, a));
            ck_assert(!val_ok(8, &ma, a));
            a[l - 1] ^= 1;
            ck_assert(!val_ok(9, &ma, a));
            break;
        }
    }
    ck_assert_uint_eq(val_len(3), 8);
    ck_assert_uint_eq(val_len(256), 2);         /* string: 1 + 1 */
    ck_assert_uint_eq(val_len(257), 21);        /* array: 5 + 8 * 2 */
}
END_TEST

/* ------------------------------------------------------------------ */
/* Stress: one writer, two readers, three processes                    */
/* ------------------------------------------------------------------ */

#define ST_SLOTS         64
#define ST_READERS       2
#define ST_READS_EACH    5000000ull     /* >= 10,000,000 in total */
#define ST_DEADLINE_NS   100000000000ull
#define ST_VHEAP         (1u << 20)

struct st_reader {
    uint64_t ok;            /* reads that returned 0 */
    uint64_t torn;          /* ... whose value failed the checksum */
    uint64_t eagain;
    uint64_t other;         /* any other return code */
    uint64_t raced;         /* a write ran while the read was in progress */
    uint64_t changed;       /* a slot held a new value since the last look */
    uint64_t ns;
};

struct st_shared {
    _Atomic int      go;
    _Atomic int      stop;
    uint64_t         writes;
    uint64_t         write_fail;
    uint64_t         heap_writes;
    struct st_reader rd[ST_READERS];
};

static void
child_guard(unsigned seconds)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(seconds);
}

static void
st_writer(struct shm_values *v, struct st_shared *sh)
{
    uint64_t x = 12345, n = 0, fail = 0, heap = 0;

    while (!atomic_load_explicit(&sh->go, memory_order_acquire))
        ;
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
        for (int k = 0; k < 64; k++) {
            uint64_t seed = mix64(++x);
            uint32_t slot = (uint32_t)(mix64(seed) % ST_SLOTS);

            if (val_write(v, slot, seed) != 0)
                fail++;
            heap += val_len(seed) > SHM_VALUE_INLINE;
            n++;
        }
    }
    sh->writes = n;
    sh->write_fail = fail;
    sh->heap_writes = heap;
    _exit(fail == 0 ? 0 : 1);
}

static void
st_reader(int fd, struct st_shared *sh, int id)
{
    struct shm_segment seg;
    struct shm_values  v;
    struct st_reader   c = { 0 };
    uint64_t           rng = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
    uint64_t           last[ST_SLOTS] = { 0 }, t0;
    uint8_t            buf[VAL_MAX];

    if (shm_segment_attach(&seg, fd, 0) != 0 || shm_values_open(&v, &seg) != 0)
        _exit(20);
    while (!atomic_load_explicit(&sh->go, memory_order_acquire))
        ;
    t0 = now_ns();
    while (c.ok < ST_READS_EACH) {
        for (int k = 0; k < 256; k++) {
            struct shm_value m;
            uint32_t         slot, s0, s1;
            int              rc;

            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            slot = (uint32_t)(rng % ST_SLOTS);
            s0 = atomic_load_explicit(&v.slots[slot].seq,
                                      memory_order_acquire);
            rc = shm_value_read(&v, slot, &m, buf, sizeof(buf));
            s1 = atomic_load_explicit(&v.slots[slot].seq,
                                      memory_order_acquire);
            if (rc == 0) {
                c.ok++;
                if (!val_ok(slot, &m, buf)) {
                    if (c.torn < 5)
                        fprintf(stderr, "reader %d: TORN read of slot %u "
                                "(len %u, seed %#llx)\n", id, slot, m.len,
                                (unsigned long long)m.source_ts);
                    c.torn++;
                }
                c.raced += s0 != s1;
                c.changed += (uint64_t)m.source_ts != last[slot];
                last[slot] = (uint64_t)m.source_ts;
            } else if (rc == -EAGAIN) {
                c.eagain++;
            } else {
                c.other++;
            }
        }
        if (now_ns() - t0 > ST_DEADLINE_NS)
            break;
    }
    c.ns = now_ns() - t0;
    sh->rd[id] = c;
    _exit(c.torn == 0 && c.other == 0 && c.ok >= ST_READS_EACH ? 0 : 1);
}

START_TEST(test_stress_cross_process)
{
    struct shm_segment s;
    struct shm_values  v;
    struct st_shared  *sh;
    pid_t              writer, readers[ST_READERS];
    int                st;
    uint64_t           ok = 0, torn = 0, eagain = 0, other = 0, raced = 0,
                       changed = 0, t0, dt;

    vseg(&s, &v, ST_SLOTS, ST_VHEAP);
    for (uint32_t i = 0; i < ST_SLOTS; i++)
        ck_assert_int_eq(val_write(&v, i, mix64(i + 1000000)), 0);
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(sh, MAP_FAILED);
    memset(sh, 0, sizeof(*sh));

    writer = fork();
    ck_assert_int_ne(writer, -1);
    if (writer == 0) {
        child_guard(150);
        st_writer(&v, sh);          /* the broker's mapping, inherited */
    }
    for (int r = 0; r < ST_READERS; r++) {
        int fd = dup(s.fd);

        ck_assert_int_ge(fd, 0);
        readers[r] = fork();
        ck_assert_int_ne(readers[r], -1);
        if (readers[r] == 0) {
            child_guard(150);
            st_reader(fd, sh, r);   /* a worker: attach by fd, read-only */
        }
        close(fd);
    }
    t0 = now_ns();
    atomic_store_explicit(&sh->go, 1, memory_order_release);
    for (int r = 0; r < ST_READERS; r++) {
        ck_assert_int_eq(waitpid(readers[r], &st, 0), readers[r]);
        ck_assert_msg(WIFEXITED(st),
                      "reader %d died (status %#x)", r, st);
        ok += sh->rd[r].ok;
        torn += sh->rd[r].torn;
        eagain += sh->rd[r].eagain;
        other += sh->rd[r].other;
        raced += sh->rd[r].raced;
        changed += sh->rd[r].changed;
    }
    dt = now_ns() - t0;
    atomic_store_explicit(&sh->stop, 1, memory_order_relaxed);
    ck_assert_int_eq(waitpid(writer, &st, 0), writer);
    printf("stress: %.1f s, %llu writes (%llu to the heap, %llu failed); "
           "reads: %llu ok, %llu torn, %llu EAGAIN, %llu other; "
           "%llu raced a write, %llu saw a new value\n",
           (double)dt / 1e9, (unsigned long long)sh->writes,
           (unsigned long long)sh->heap_writes,
           (unsigned long long)sh->write_fail, (unsigned long long)ok,
           (unsigned long long)torn, (unsigned long long)eagain,
           (unsigned long long)other, (unsigned long long)raced,
           (unsigned long long)changed);
    fflush(stdout);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "writer failed (status %#x, %llu failed writes)", st,
                  (unsigned long long)sh->write_fail);
    ck_assert_uint_eq(torn, 0);
    ck_assert_uint_eq(other, 0);
    ck_assert_uint_ge(ok, ST_READERS * ST_READS_EACH);
    /*
     * -EAGAIN is allowed, but rare: under 1% of the reads.  (It comes from
     * the writer being preempted with a slot odd; typically ~0.03%.)
     */
    ck_assert_msg(eagain * 100 < ok, "%llu EAGAIN in %llu reads",
                  (unsigned long long)eagain, (unsigned long long)ok);
    /*
     * The test raced for real: values changed under the readers, and reads
     * overlapped writes to their slot.  The floors are low on purpose: on a
     * loaded 2-core machine the three processes mostly time-share, and
     * races then come from preemption (hundreds, not millions; 14 seen
     * with two other jobs busy on both cores).
     */
    ck_assert_uint_ge(sh->writes, 100000);
    ck_assert_uint_ge(sh->heap_writes, sh->writes / 2);
    ck_assert_uint_ge(changed, 10000);
    ck_assert_uint_ge(raced, 5);
    /* The heap is still consistent: every slot reads back whole. */
    for (uint32_t i = 0; i < ST_SLOTS; i++) {
        struct shm_value m;
        uint8_t          b[VAL_MAX];

        ck_assert_int_eq(shm_value_read(&v, i, &m, b, sizeof(b)), 0);
        ck_assert(val_ok(i, &m, b));
    }
    ck_assert_uint_le(s.hdr->vheap.bytes_used, ST_SLOTS * 2048);
    munmap(sh, sizeof(*sh));
    shm_segment_close(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A writer killed in the middle of a write                            */
/* ------------------------------------------------------------------ */

#define KW_SLOTS 4
#define KW_VICTIM 1

/* Seeds giving a value of the wanted kind for each slot. */
static uint64_t
seed_with_len(uint64_t start, uint32_t lo, uint32_t hi)
{
    for (uint64_t s = start;; s++) {
        uint64_t x = mix64(s);

        if (val_len(x) >= lo && val_len(x) <= hi)
            return x;
    }
}

struct kw_report {
    int      victim_rc;
    int      others_ok;
    uint64_t worst_ns;
};

/* A reader process: slot KW_VICTIM must give want_rc, the others read ok. */
static pid_t
kw_reader(int fd, int pfd, int want_rc)
{
    pid_t pid = fork();

    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        struct shm_segment seg;
        struct shm_values  v;
        struct kw_report   rep = { .others_ok = 1 };
        uint8_t            b[VAL_MAX];

        child_guard(10);            /* a hang dies of SIGALRM */
        if (shm_segment_attach(&seg, fd, 0) != 0
            || shm_values_open(&v, &seg) != 0)
            _exit(30);
        for (int k = 0; k < 100; k++) {
            struct shm_value m;
            uint64_t         t0 = now_ns(), dt;

            rep.victim_rc = shm_value_read(&v, KW_VICTIM, &m, b, sizeof(b));
            dt = now_ns() - t0;
            if (dt > rep.worst_ns)
                rep.worst_ns = dt;
            if (rep.victim_rc != want_rc
                || (want_rc == 0 && !val_ok(KW_VICTIM, &m, b)))
                break;
        }
        for (uint32_t i = 0; i < KW_SLOTS; i++) {
            struct shm_value m;

            if (i != KW_VICTIM
                && (shm_value_read(&v, i, &m, b, sizeof(b)) != 0
                    || !val_ok(i, &m, b)))
                rep.others_ok = 0;
        }
        if (write(pfd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
            _exit(31);
        _exit(0);
    }
    return pid;
}

static struct kw_report
kw_read(struct shm_segment *s, int want_rc)
{
    int              p[2], st;
    pid_t            pid;
    struct kw_report rep;

    ck_assert_int_eq(pipe(p), 0);
    pid = kw_reader(dup(s->fd), p[1], want_rc);
    close(p[1]);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "reader process failed or hung (status %#x)", st);
    ck_assert_int_eq(read(p[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
    close(p[0]);
    return rep;
}

START_TEST(test_killed_writer)
{
    struct shm_segment s;
    struct shm_values  v;
    uint64_t           seeds[KW_SLOTS], fresh;
    int                p[2], st;
    pid_t              pid;
    struct kw_report   rep;

    vseg(&s, &v, KW_SLOTS, 65536);
    seeds[0] = seed_with_len(1, 8, 8);                  /* inline scalar */
    seeds[1] = seed_with_len(100, 200, 1500);           /* heap: victim */
    seeds[2] = seed_with_len(200, 1000, 2000);          /* heap */
    seeds[3] = seed_with_len(300, 10, 20);              /* inline string */
    for (uint32_t i = 0; i < KW_SLOTS; i++)
        ck_assert_int_eq(val_write(&v, i, seeds[i]), 0);
    rep = kw_read(&s, 0);
    ck_assert(rep.others_ok);

    /* The writer: seq odd, half the new bytes, then SIGKILL. */
    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        struct shm_value_slot *sl = &v.slots[KW_VICTIM];
        uint64_t               seed = seed_with_len(400, 200, 1500);
        uint32_t               len = val_len(seed);
        uint8_t                b[VAL_MAX];
        uint32_t               seq, old = sl->len;

        child_guard(10);
        val_make(KW_VICTIM, seed, b, len);
        seq = atomic_load_explicit(&sl->seq, memory_order_relaxed);
        atomic_store_explicit(&sl->seq, seq + 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        atomic_store_explicit(&sl->len, len, memory_order_relaxed);
        atomic_store_explicit(&sl->source_ts, (int64_t)seed,
                              memory_order_relaxed);
        /* Half the bytes, into the old block (never past its end). */
        memcpy(v.heap + sl->heap + sizeof(struct shm_vblock), b,
               (len < old ? len : old) / 2);
        if (write(p[1], "k", 1) != 1)
            _exit(1);
        for (;;)
            pause();                /* killed here, mid-write */
    }
    close(p[1]);
    {
        char c;

        ck_assert_int_eq(read(p[0], &c, 1), 1);
    }
    close(p[0]);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    ck_assert_uint_eq(slot_seq(&v, KW_VICTIM) & 1, 1);

    /* A reader gives up on the slot in bounded time; the rest read fine. */
    rep = kw_read(&s, -EAGAIN);
    ck_assert_int_eq(rep.victim_rc, -EAGAIN);
    ck_assert(rep.others_ok);
    ck_assert_uint_lt(rep.worst_ns, 1000000000u);
    printf("killed writer: stuck slot gives -EAGAIN in at most %.1f us\n",
           (double)rep.worst_ns / 1e3);
    fflush(stdout);

    /* A new writer process completes a write: readable again. */
    fresh = seed_with_len(500, 100, 1500);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        child_guard(10);
        _exit(val_write(&v, KW_VICTIM, fresh) == 0 ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_uint_eq(slot_seq(&v, KW_VICTIM) & 1, 0);
    rep = kw_read(&s, 0);
    ck_assert_int_eq(rep.victim_rc, 0);
    ck_assert(rep.others_ok);
    {
        struct shm_value m;
        uint8_t          b[VAL_MAX];

        ck_assert_int_eq(shm_value_read(&v, KW_VICTIM, &m, b, sizeof(b)), 0);
        ck_assert_uint_eq((uint64_t)m.source_ts, fresh);
        ck_assert(val_ok(KW_VICTIM, &m, b));
    }
    /* And it stays a normal slot: more writes, each readable. */
    for (uint64_t k = 0; k < 10; k++) {
        ck_assert_int_eq(val_write(&v, KW_VICTIM, mix64(k + 77)), 0);
        ck_assert_uint_eq(slot_seq(&v, KW_VICTIM) & 1, 0);
    }
    rep = kw_read(&s, 0);
    ck_assert(rep.others_ok);
    shm_segment_close(&s);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Value slots");
    TCase   *tc_api = tcase_create("Slots and heap");
    TCase   *tc_stress = tcase_create("Cross-process stress");
    TCase   *tc_kill = tcase_create("Killed writer");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc_api, test_inline);
    tcase_add_test(tc_api, test_heap);
    tcase_add_test(tc_api, test_short_buffer);
    tcase_add_test(tc_api, test_bad_slot);
    tcase_add_test(tc_api, test_heap_reuse);
    tcase_add_test(tc_api, test_heap_full);
    tcase_add_test(tc_api, test_reader_bounds);
    tcase_add_test(tc_api, test_interest);
    tcase_add_test(tc_api, test_checksum_catches_tears);
    tcase_set_timeout(tc_api, 30);
    suite_add_tcase(s, tc_api);

    tcase_add_test(tc_stress, test_stress_cross_process);
    tcase_set_timeout(tc_stress, 120);
    suite_add_tcase(s, tc_stress);

    tcase_add_test(tc_kill, test_killed_writer);
    tcase_set_timeout(tc_kill, 30);
    suite_add_tcase(s, tc_kill);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
