/*
 * tests/unit/broker/check_fanout.c: the broker's end of the fan-out
 * (broker/fanout.c) in one process: the test plays the workers through the
 * shm API (rings, block pool, lost marks, interest bits).
 *
 *   - a change nobody watches makes no record;
 *   - a watched change is one record (slot, DataValue with value, status,
 *     both timestamps) in a block pushed to exactly the watchers, released
 *     by them; server timestamps of a slot strictly increase;
 *   - a full notification ring: the block is disowned for that worker, the
 *     slot marked lost for it, lost_seq moves only at the end of the
 *     iteration; counted;
 *   - an exhausted pool: marked lost, counted;
 *   - a dead worker: its ring emptied, its references reclaimed, its
 *     interest bits cleared; no push to it afterwards;
 *   - Write records in, result records out (packed per request), malformed
 *     records refused; the watched changes of one record (masks loaded
 *     after one fence) keep their order, a slot written twice included;
 *   - method calls: a SHM_FO_CALL record without a methods module is
 *     answered BadNotImplemented at once; with one it is handed over, and
 *     bk_fanout_call_reply() queues SHM_FO_CALL_RESULT records (bytes,
 *     zero tail) only to the worker generation that asked, refusing one
 *     larger than the reply ring;
 *   - events: a record of SHM_FO_EVENT_SLOT only for workers with event
 *     interest, as built; none without; a full ring bumps events_lost
 *     and lost_seq; a worker's SHM_FO_EVENT record is fanned out when it
 *     parses, dropped when it does not;
 *   - linger (fanout.linger_us): after an iteration that took several
 *     requests (or one while lingering) the request ring stays unmarked (a
 *     pushing worker needs no bell) but the loop never blocks without the
 *     linger timer; a lone request does not linger; the first iteration
 *     that finds nothing marks the ring, and the next push asks for a
 *     bell.
 */
#include <check.h>
#include <errno.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/event.h"
#include "broker/fanout.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/blockpool.h"
#include "shm/fanout.h"
#include "shm/ring.h"

#define T0 INT64_C(133470720000000000)

static struct bk_config    conf;
static struct bk_addrspace as;
static struct bk_fanout    fo;
static struct event_base  *base;
static char                dir[64];

static uint32_t            req_slots = 64;

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    conf.value_heap_mb = 4;
    conf.workers = 2;
    conf.fanout_blocks = 24;
    conf.fanout_block_size = 1024;
    conf.fanout_notif_ring_slots = 16;
    conf.fanout_req_ring_slots = req_slots;
    conf.fanout_reply_ring_slots = 64;
    snprintf(dir, sizeof(dir), "/tmp/uabf-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(conf.runtime_dir, sizeof(conf.runtime_dir), "%s", dir);
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    ck_assert_msg(bk_fanout_init(&fo, &as, base, &conf, err,
                                 sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(fo.n, 2);
    ck_assert_int_eq(bk_fanout_worker_start(&fo, 0), 0);
    ck_assert_int_eq(bk_fanout_worker_start(&fo, 1), 0);
}

static void
teardown(void)
{
    char p[128];

    bk_fanout_clear(&fo);
    event_base_free(base);
    bk_addrspace_close(&as);
    /* nanomsg removes its ipc files on close, but not synchronously. */
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s/w%d.bell", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

static uint32_t
slot_of(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };
    uint32_t           n;

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    n = shm_nodestore_lookup(&as.ns, &k);
    ck_assert_uint_ne(n, SHM_NONE);
    return as.ns.nodes[n].u.var.slot;
}

static uint32_t
node_of(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

static void
set_i32(uint32_t slot, int32_t v, int64_t now)
{
    ck_assert_int_eq(bk_addrspace_write_scalar(&as, slot, UA_BT_INT32, &v,
                                               now), 0);
}

/* Worker w's view: its notification ring as consumer. */
static void
worker_ring(unsigned w, struct shm_ring_ref *r)
{
    ck_assert_int_eq(shm_ring_locate(r, &as.seg, w, SHM_RING_NOTIF), 0);
}

START_TEST(test_unwatched)
{
    struct shm_ring_ref r;
    struct shm_block_handle h;

    set_i32(slot_of("v0"), 1, T0);
    bk_fanout_flush(&fo);
    worker_ring(0, &r);
    ck_assert_int_eq(shm_ring_pop_spsc(&r, &h), -EAGAIN);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 24);
}
END_TEST

START_TEST(test_watched_record)
{
    struct shm_ring_ref      r0, r1;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_blockpool_ref pool;
    struct ua_datavalue      dv;
    static uint8_t           abuf[4096];
    struct ua_arena          a;
    const uint8_t           *bytes;
    uint32_t                 slot = slot_of("v0"), s, len, n = 0;
    int64_t                  last = 0;

    ua_arena_init(&a, abuf, sizeof(abuf));
    shm_interest_set(&as.vals, slot, 1);
    set_i32(slot, 41, T0);
    set_i32(slot, 42, T0);              /* same clock: ts + 1 tick */
    set_i32(slot_of("v2"), 7, T0);      /* nobody watches v2 */
    bk_fanout_flush(&fo);
    worker_ring(0, &r0);
    worker_ring(1, &r1);
    ck_assert_int_eq(shm_ring_pop_spsc(&r0, &h), -EAGAIN);
    ck_assert_int_eq(shm_ring_pop_spsc(&r1, &h), 0);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    ck_assert_int_eq(shm_blockpool_open(&pool, h, 1, &it), 0);
    while (shm_blockpool_next(&it, &s, &bytes, &len) == 1) {
        ck_assert_uint_eq(s, slot);
        ua_arena_reset(&a);
        ck_assert_uint_eq(ua_decode(bytes, len, NULL, &dv,
                                    &ua_types[UA_TYPE_DATAVALUE], &a, NULL),
                          UA_GOOD);
        ck_assert_uint_eq(dv.mask, UA_DV_VALUE | UA_DV_SOURCE_TS
                                       | UA_DV_SERVER_TS);
        ck_assert_int_eq(*(int32_t *)dv.value.data, 41 + (int32_t)n);
        ck_assert_int_eq(dv.source_ts, T0);
        ck_assert_int_gt(dv.server_ts, last);
        last = dv.server_ts;
        n++;
    }
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(shm_blockpool_release(&pool, h, 1), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 24);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 2);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->blocks), 1);
}
END_TEST

START_TEST(test_ring_full_marks_lost)
{
    struct shm_ring_ref r1;
    uint32_t            slot = slot_of("v0");
    uint64_t            seq0 = shm_fanout_lost_seq(&fo.fo, 1);

    shm_interest_set(&as.vals, slot, 1);
    /* 16 handles fill worker 1's ring; the 17th block cannot go (the
     * pool has 24). */
    for (int i = 0; i < 17; i++) {
        set_i32(slot, i, T0 + i);
        bk_fanout_flush(&fo);
    }
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->ring_full), 1);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->w[1].ring_full), 1);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications_dropped), 1);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->w[1].dropped), 1);
    /* Marked now, told at the end of the iteration. */
    ck_assert_uint_eq(shm_fanout_lost_seq(&fo.fo, 1), seq0);
    (void)bk_fanout_prepare(&fo, T0 + 100);
    bk_fanout_wake(&fo);
    ck_assert_uint_gt(shm_fanout_lost_seq(&fo.fo, 1), seq0);
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 1));
    ck_assert(!shm_fanout_lost_take(&fo.fo, slot, 1));
    ck_assert(!shm_fanout_lost_take(&fo.fo, slot, 0));
    /* The refused block went back to the pool: 16 held by the ring. */
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 8);
    worker_ring(1, &r1);
    ck_assert_uint_eq(shm_ring_count_spsc(&r1), 16);
}
END_TEST

START_TEST(test_pool_exhausted)
{
    struct shm_block_handle grab[8];
    uint32_t                slot = slot_of("v0");

    shm_interest_set(&as.vals, slot, 0);
    shm_interest_set(&as.vals, slot, 1);
    /* 16 blocks in both rings (neither worker reads) ... */
    for (int i = 0; i < 16; i++) {
        set_i32(slot, i, T0 + i);
        bk_fanout_flush(&fo);
    }
    /* ... and the other 8 being filled: none left. */
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(shm_blockpool_alloc(&fo.pool, &grab[i]), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 0);
    set_i32(slot, 99, T0 + 99);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->blocks_exhausted), 1);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications_dropped), 2);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->ring_full), 0);
    (void)bk_fanout_prepare(&fo, T0 + 100);
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 0));
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 1));
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(shm_blockpool_publish(&fo.pool, grab[i], 0), 0);
}
END_TEST

START_TEST(test_too_big_for_a_block)
{
    uint32_t slot = slot_of("Demo.Static.Scalar.String");
    char     big[2000];
    struct ua_string s;

    memset(big, 'x', sizeof(big));
    s.len = sizeof(big);
    s.data = (uint8_t *)big;
    shm_interest_set(&as.vals, slot, 0);
    ck_assert_int_eq(bk_addrspace_write_scalar(&as, slot, UA_BT_STRING, &s,
                                               T0), 0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications_dropped), 1);
    (void)bk_fanout_prepare(&fo, T0 + 1);
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 0));
}
END_TEST

START_TEST(test_dead_worker)
{
    struct shm_ring_ref r1;
    struct shm_block_handle h;
    uint32_t            slot = slot_of("v0");

    shm_interest_set(&as.vals, slot, 1);
    for (int i = 0; i < 5; i++) {
        set_i32(slot, i, T0 + i);
        bk_fanout_flush(&fo);
    }
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 19);
    bk_fanout_worker_dead(&fo, 1);
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 24);
    ck_assert_uint_eq(atomic_load(&fo.pool.sh->reclaimed), 5);
    ck_assert_uint_eq(shm_interest_get(&as.vals, slot) & 2, 0);
    worker_ring(1, &r1);
    ck_assert_int_eq(shm_ring_pop_spsc(&r1, &h), -EAGAIN);
    /* Not pushed to any more, even with its bit set again. */
    shm_interest_set(&as.vals, slot, 1);
    set_i32(slot, 9, T0 + 9);
    bk_fanout_flush(&fo);
    ck_assert_int_eq(shm_ring_pop_spsc(&r1, &h), -EAGAIN);
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 24);
    /* Back up: pushed to again. */
    ck_assert_int_eq(bk_fanout_worker_start(&fo, 1), 0);
    set_i32(slot, 10, T0 + 10);
    bk_fanout_flush(&fo);
    ck_assert_int_eq(shm_ring_pop_spsc(&r1, &h), 0);
}
END_TEST

/*
 * A SHM_FO_WRITE record of nops operations op k -> nodes[k] with the
 * encoded DataValue dvs[k] (lens[k] bytes), pushed as worker w.
 */
static void
push_write_dvs(unsigned w, uint32_t id, uint32_t nops, const uint32_t *nodes,
               const uint8_t *const *dvs, const uint32_t *lens)
{
    static uint8_t      buf[256 * 64];
    struct shm_ring_ref req;
    struct shm_fo_write rec;
    uint32_t            off = sizeof(rec), ss;

    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, w, SHM_RING_REQ), 0);
    ss = req.slot_size;
    memset(buf, 0, sizeof(buf));
    for (uint32_t k = 0; k < nops; k++) {
        struct shm_fo_wop wop = { .op = k, .node = nodes[k],
                                  .dv_len = lens[k], .attr = 13,
                                  .range_len = 0 };

        ck_assert_uint_le(off + shm_fo_wop_bytes(0, lens[k]), sizeof(buf));
        memcpy(buf + off, &wop, sizeof(wop));
        memcpy(buf + off + sizeof(wop), dvs[k], lens[k]);
        off += (uint32_t)shm_fo_wop_bytes(0, lens[k]);
    }
    memset(&rec, 0, sizeof(rec));
    rec.hdr.kind = SHM_FO_WRITE;
    rec.hdr.len = off;
    rec.hdr.nslots = (uint16_t)shm_fo_slots(off, ss);
    rec.id = id;
    rec.nops = nops;
    memcpy(buf, &rec, sizeof(rec));
    ck_assert_int_eq(shm_ring_push_n_spsc(&req, buf, rec.hdr.nslots), 0);
}

/* A SHM_FO_WRITE record of Int32 writes ops[i] -> node, pushed as worker w. */
static void
push_write(unsigned w, uint32_t id, uint32_t nops, const uint32_t *nodes,
           const int32_t *vals)
{
    uint8_t        dv[128][6];
    const uint8_t *dvs[128];
    uint32_t       lens[128];

    ck_assert_uint_le(nops, 128);
    for (uint32_t k = 0; k < nops; k++) {
        dv[k][0] = UA_DV_VALUE;
        dv[k][1] = UA_BT_INT32;
        memcpy(&dv[k][2], &vals[k], 4);
        dvs[k] = dv[k];
        lens[k] = 6;
    }
    push_write_dvs(w, id, nops, nodes, dvs, lens);
}

START_TEST(test_write_records)
{
    struct shm_ring_ref   reply;
    struct shm_fo_results r;
    uint8_t               buf[64 * 64];
    uint32_t              nodes[3] = { node_of("v0"), node_of("v1"),
                                       as.ns.nnodes + 5 };
    int32_t               vals[3] = { 77, 78, 79 };
    uint32_t              st[3];
    uint8_t               tmp[32];
    struct shm_value      m;
    int32_t               got;
    int                   n;

    push_write(1, 0x10003, 3, nodes, vals);
    ck_assert(!bk_fanout_prepare(&fo, T0 + 50) || true);
    bk_fanout_wake(&fo);
    ck_assert_int_eq(shm_ring_locate(&reply, &as.seg, 1, SHM_RING_REPLY), 0);
    n = shm_ring_pop_n_spsc(&reply, buf, 64);
    ck_assert_int_eq(n, 1);                 /* one record, one slot */
    memcpy(&r, buf, sizeof(r));
    ck_assert_uint_eq(r.hdr.kind, SHM_FO_RESULTS);
    ck_assert_uint_eq(r.id, 0x10003);
    ck_assert_uint_eq(r.first_op, 0);
    ck_assert_uint_eq(r.count, 3);
    memcpy(st, buf + sizeof(r), sizeof(st));
    ck_assert_uint_eq(st[0], UA_GOOD);
    ck_assert_uint_eq(st[1], UA_BAD_TYPE_MISMATCH);   /* v1 is a Double */
    ck_assert_uint_eq(st[2], UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_int_eq(shm_value_read(&as.vals, slot_of("v0"), &m, tmp,
                                    sizeof(tmp)), 0);
    ck_assert_uint_eq(tmp[0], UA_BT_INT32);
    memcpy(&got, tmp + 1, sizeof(got));
    ck_assert_int_eq(got, 77);
    ck_assert_int_eq(m.server_ts, T0 + 50);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 3);
}
END_TEST

START_TEST(test_bad_record)
{
    struct shm_ring_ref req, reply;
    uint8_t             slot[64];
    struct shm_fo_hdr   h = { .kind = SHM_FO_WRITE, .nslots = 3,
                              .len = 20 };     /* 20 bytes in 3 slots */
    uint8_t             buf[64];

    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, 0, SHM_RING_REQ), 0);
    memset(slot, 0, sizeof(slot));
    memcpy(slot, &h, sizeof(h));
    ck_assert_int_eq(shm_ring_push_spsc(&req, slot), 0);
    (void)bk_fanout_prepare(&fo, T0);
    bk_fanout_wake(&fo);
    /* Dropped: a fresh consumer's view of the ring is empty. */
    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, 0, SHM_RING_REQ), 0);
    ck_assert_uint_eq(shm_ring_count_spsc(&req), 0);
    ck_assert_int_eq(shm_ring_locate(&reply, &as.seg, 0, SHM_RING_REPLY), 0);
    ck_assert_int_eq(shm_ring_pop_spsc(&reply, buf), -EAGAIN);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 0);
}
END_TEST

/* Two Writes of one record to the same watched slot, and one to another. */
START_TEST(test_write_watched_order)
{
    struct shm_ring_ref      r0;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_blockpool_ref pool;
    uint32_t                 nodes[3] = { node_of("v0"), node_of("v2"),
                                          node_of("v0") };
    int32_t                  vals[3] = { 5, 6, 7 };
    uint32_t                 want_slot[3] = { slot_of("v0"), slot_of("v2"),
                                              slot_of("v0") };
    const uint8_t           *bytes;
    uint32_t                 s, len, n = 0;
    int32_t                  v;

    shm_interest_set(&as.vals, slot_of("v0"), 0);
    shm_interest_set(&as.vals, slot_of("v2"), 0);
    push_write(1, 0x10004, 3, nodes, vals);
    (void)bk_fanout_prepare(&fo, T0 + 60);
    bk_fanout_wake(&fo);
    worker_ring(0, &r0);
    ck_assert_int_eq(shm_ring_pop_spsc(&r0, &h), 0);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    ck_assert_int_eq(shm_blockpool_open(&pool, h, 0, &it), 0);
    while (shm_blockpool_next(&it, &s, &bytes, &len) == 1) {
        ck_assert_uint_lt(n, 3);
        ck_assert_uint_eq(s, want_slot[n]);
        /* mask, Variant type, the Int32 */
        ck_assert_uint_ge(len, 6);
        ck_assert_uint_eq(bytes[1], UA_BT_INT32);
        memcpy(&v, bytes + 2, 4);
        ck_assert_int_eq(v, vals[n]);
        n++;
    }
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(shm_blockpool_release(&pool, h, 0), 0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 3);
}
END_TEST

/* setup() with a request ring that takes a record of 300 Writes. */
static void
setup_big(void)
{
    req_slots = 256;
    setup();
    req_slots = 64;
}

/*
 * Worker w's notifications of this iteration, decoded in order: slot[i],
 * the DataValue dv[i] (values in a), at most max; the count.  Every block
 * is released.
 */
static uint32_t
take_notifs(unsigned w, uint32_t *slot, struct ua_datavalue *dv,
            uint32_t max, struct ua_arena *a)
{
    struct shm_ring_ref      r;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_blockpool_ref pool;
    const uint8_t           *bytes;
    uint32_t                 s, len, n = 0;

    worker_ring(w, &r);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    while (shm_ring_pop_spsc(&r, &h) == 0) {
        ck_assert_int_eq(shm_blockpool_open(&pool, h, w, &it), 0);
        while (shm_blockpool_next(&it, &s, &bytes, &len) == 1) {
            ck_assert_uint_lt(n, max);
            slot[n] = s;
            ck_assert_uint_eq(ua_decode(bytes, len, NULL, &dv[n],
                                        &ua_types[UA_TYPE_DATAVALUE], a,
                                        NULL), UA_GOOD);
            n++;
        }
        ck_assert_int_eq(shm_blockpool_release(&pool, h, w), 0);
    }
    return n;
}

/*
 * The Write fast path's changes (a Value alone) and the general path's (a
 * Good StatusCode in the DataValue: decoded) of one record, interleaved on
 * two watched slots: the same notifications, in the order of the Writes;
 * a refused Write makes none.
 */
START_TEST(test_write_fast_general_notify)
{
    static uint8_t      abuf[1 << 16];
    struct ua_arena     a;
    uint32_t            v0 = node_of("v0"), v2 = node_of("v2");
    uint32_t            s0 = slot_of("v0"), s2 = slot_of("v2");
    /* mask, Int32, value (4), then a Good StatusCode for the general
     * form; a Double for v0 (an Int32): BadTypeMismatch. */
    static const uint8_t f5[] = { 1, 6, 5, 0, 0, 0 };
    static const uint8_t g5[] = { 3, 6, 5, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t f6[] = { 1, 6, 6, 0, 0, 0 };
    static const uint8_t f7[] = { 1, 6, 7, 0, 0, 0 };
    static const uint8_t g8[] = { 3, 6, 8, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t fd[] = { 1, 11, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F };
    const uint8_t      *dvs[6] = { f5, g5, f6, f7, g8, fd };
    uint32_t            lens[6] = { 6, 10, 6, 6, 10, 10 };
    uint32_t            nodes[6] = { v0, v0, v2, v0, v2, v0 };
    uint32_t            want_slot[5] = { s0, s0, s2, s0, s2 };
    int32_t             want_val[5] = { 5, 5, 6, 7, 8 };
    int64_t             want_ts[5] = { T0 + 70, T0 + 71, T0 + 70, T0 + 72,
                                       T0 + 71 };
    uint32_t            slot[8];
    struct ua_datavalue dv[8];
    uint32_t            n;

    ua_arena_init(&a, abuf, sizeof(abuf));
    shm_interest_set(&as.vals, s0, 0);
    shm_interest_set(&as.vals, s2, 0);
    push_write_dvs(1, 0x10005, 6, nodes, dvs, lens);
    (void)bk_fanout_prepare(&fo, T0 + 70);
    bk_fanout_wake(&fo);
    n = take_notifs(0, slot, dv, 8, &a);
    ck_assert_uint_eq(n, 5);
    for (uint32_t k = 0; k < n; k++) {
        ck_assert_uint_eq(slot[k], want_slot[k]);
        ck_assert_uint_eq(dv[k].mask, UA_DV_VALUE | UA_DV_SOURCE_TS
                                          | UA_DV_SERVER_TS);
        ck_assert_uint_eq(dv[k].value.type, UA_BT_INT32);
        ck_assert(!dv[k].value.is_array);
        ck_assert_int_eq(*(int32_t *)dv[k].value.data, want_val[k]);
        ck_assert_int_eq(dv[k].source_ts, T0 + 70);
        ck_assert_int_eq(dv[k].server_ts, want_ts[k]);
    }
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 5);
}
END_TEST

/*
 * More watched fast-path changes in one record than the pending array
 * holds (BK_FANOUT_PEND_MAX): every one notified, in order, with the
 * value it wrote (the deferred ones point into the record until it is
 * settled, the ones past the array's room are copied).
 */
START_TEST(test_write_fast_pend_full)
{
    static uint8_t             abuf[1 << 20];
    static uint8_t             dvb[300][6];
    static const uint8_t      *dvs[300];
    static uint32_t            lens[300], nodes[300], slot[320];
    static struct ua_datavalue dv[320];
    struct ua_arena            a;
    uint32_t                   v0 = node_of("v0"), s0 = slot_of("v0"), n;

    ck_assert_uint_gt(300, BK_FANOUT_PEND_MAX);
    ua_arena_init(&a, abuf, sizeof(abuf));
    for (uint32_t k = 0; k < 300; k++) {
        int32_t v = (int32_t)(1000 + k);

        dvb[k][0] = UA_DV_VALUE;
        dvb[k][1] = UA_BT_INT32;
        memcpy(&dvb[k][2], &v, 4);
        dvs[k] = dvb[k];
        lens[k] = 6;
        nodes[k] = v0;
    }
    shm_interest_set(&as.vals, s0, 0);
    push_write_dvs(1, 0x10006, 300, nodes, dvs, lens);
    (void)bk_fanout_prepare(&fo, T0 + 80);
    bk_fanout_wake(&fo);
    n = take_notifs(0, slot, dv, 320, &a);
    ck_assert_uint_eq(n, 300);
    for (uint32_t k = 0; k < n; k++) {
        ck_assert_uint_eq(slot[k], s0);
        ck_assert_int_eq(*(int32_t *)dv[k].value.data, (int32_t)(1000 + k));
        ck_assert_int_eq(dv[k].server_ts, T0 + 80 + k);
    }
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 300);
}
END_TEST

static double
mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Worker 0's request ring as its producer, for needs_bell. */
static bool
worker_needs_bell(struct shm_ring_ref *req)
{
    return shm_ring_needs_bell(req);
}

START_TEST(test_linger)
{
    struct shm_ring_ref req;
    uint32_t            nodes[1] = { node_of("v0") };
    int32_t             vals[1] = { 1 };
    double              t;

    ck_assert_uint_ne(conf.fanout_linger_us, 0);
    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, 0, SHM_RING_REQ), 0);
    /* Idle: prepare marks the ring; a push asks for a bell. */
    ck_assert(bk_fanout_prepare(&fo, T0));
    ck_assert(!fo.linger_armed);
    push_write(0, 0x10001, 1, nodes, vals);
    ck_assert(worker_needs_bell(&req));
    bk_fanout_wake(&fo);
    /* A lone request does not linger (a lone client keeps its bells). */
    ck_assert(bk_fanout_prepare(&fo, T0 + 1));
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 1);
    ck_assert(!fo.linger_armed);
    bk_fanout_wake(&fo);
    /* Two at once: linger: no mark, a timer. */
    push_write(0, 0x10002, 1, nodes, vals);
    push_write(0, 0x10003, 1, nodes, vals);
    ck_assert(bk_fanout_prepare(&fo, T0 + 2));
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 3);
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 0);
    ck_assert(fo.linger_armed);
    vals[0] = 2;
    push_write(0, 0x10004, 1, nodes, vals);
    ck_assert(!worker_needs_bell(&req));     /* found without a bell */
    /* The blocking iteration ends by the timer (a lost wake-up would
     * block here for good). */
    t = mono_s();
    ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
    ck_assert_double_lt(mono_s() - t, 5.0);
    bk_fanout_wake(&fo);
    /* One while lingering: linger on. */
    ck_assert(bk_fanout_prepare(&fo, T0 + 3));
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 4);
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 0);
    ck_assert(fo.linger_armed);
    ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
    bk_fanout_wake(&fo);
    /* Nothing came: marked again, no timer; the next push rings. */
    ck_assert(bk_fanout_prepare(&fo, T0 + 4));
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 1);
    ck_assert(!fo.linger_armed);
    push_write(0, 0x10005, 1, nodes, vals);
    ck_assert(worker_needs_bell(&req));
    bk_fanout_wake(&fo);
}
END_TEST

/* fanout.linger_us = 0: no timer at all; the ring is marked after any
 * iteration, so every Write that finds the broker asleep rings. */
START_TEST(test_linger_off)
{
    struct shm_ring_ref req;
    uint32_t            nodes[1] = { node_of("v0") };
    int32_t             vals[1] = { 1 };
    char                err[256];

    bk_fanout_clear(&fo);
    conf.fanout_linger_us = 0;
    ck_assert_msg(bk_fanout_init(&fo, &as, base, &conf, err,
                                 sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(bk_fanout_worker_start(&fo, 0), 0);
    ck_assert_int_eq(bk_fanout_worker_start(&fo, 1), 0);
    ck_assert_int_eq(fo.linger_fd, -1);
    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, 0, SHM_RING_REQ), 0);
    push_write(0, 0x10001, 1, nodes, vals);
    push_write(0, 0x10002, 1, nodes, vals);
    push_write(0, 0x10003, 1, nodes, vals);
    ck_assert(bk_fanout_prepare(&fo, T0));
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 3);
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 1);
    ck_assert(!fo.linger_armed);
    push_write(0, 0x10004, 1, nodes, vals);
    ck_assert(worker_needs_bell(&req));
    bk_fanout_wake(&fo);
}
END_TEST

/* A SHM_FO_CALL record (no arguments) pushed as worker w. */
static void
push_call(unsigned w, uint32_t id, uint32_t op)
{
    struct shm_ring_ref req;
    struct shm_fo_call  rec;
    uint8_t             buf[64];

    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, w, SHM_RING_REQ), 0);
    memset(buf, 0, sizeof(buf));
    memset(&rec, 0, sizeof(rec));
    rec.hdr.kind = SHM_FO_CALL;
    rec.hdr.len = sizeof(rec);
    rec.hdr.nslots = 1;
    rec.id = id;
    rec.op = op;
    memcpy(buf, &rec, sizeof(rec));
    ck_assert_int_eq(shm_ring_push_spsc(&req, buf), 0);
}

static unsigned call_seen;
static uint32_t call_seen_id;

static void
on_call(void *arg, unsigned worker, const uint8_t *rec, uint32_t len)
{
    struct shm_fo_call r;

    ck_assert_ptr_eq(arg, &fo);
    ck_assert_uint_eq(worker, 0);
    ck_assert_uint_eq(len, sizeof(r));
    memcpy(&r, rec, sizeof(r));
    call_seen++;
    call_seen_id = r.id;
}

START_TEST(test_call_records)
{
    struct shm_ring_ref       reply;
    struct shm_fo_call_result r;
    uint8_t                   buf[64 * 64], out[100];
    uint32_t                  ss;
    int                       n;

    ck_assert_int_eq(shm_ring_locate(&reply, &as.seg, 0, SHM_RING_REPLY), 0);
    ss = reply.slot_size;
    /* No methods module: BadNotImplemented at once. */
    push_call(0, 0x20001, 3);
    (void)bk_fanout_prepare(&fo, T0 + 50);
    bk_fanout_wake(&fo);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&reply, buf, 64), 1);
    memcpy(&r, buf, sizeof(r));
    ck_assert_uint_eq(r.hdr.kind, SHM_FO_CALL_RESULT);
    ck_assert_uint_eq(r.hdr.len, sizeof(r));
    ck_assert_uint_eq(r.id, 0x20001);
    ck_assert_uint_eq(r.op, 3);
    ck_assert_uint_eq(r.status, UA_BAD_NOT_IMPLEMENTED);
    ck_assert_uint_eq(r.nout, 0);
    /* Handed to the module. */
    fo.on_call = on_call;
    fo.call_arg = &fo;
    push_call(0, 0x20002, 0);
    (void)bk_fanout_prepare(&fo, T0 + 51);
    bk_fanout_wake(&fo);
    ck_assert_uint_eq(call_seen, 1);
    ck_assert_uint_eq(call_seen_id, 0x20002);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&reply, buf, 64), -EAGAIN);
    /* Its answer, with outputs over two slots. */
    for (unsigned k = 0; k < sizeof(out); k++)
        out[k] = (uint8_t)(k + 1);
    ck_assert_int_eq(bk_fanout_call_reply(&fo, 0, fo.w[0].gen, 0x20002, 0,
                                          UA_GOOD, out, sizeof(out), 2), 0);
    (void)bk_fanout_prepare(&fo, T0 + 52);
    bk_fanout_wake(&fo);
    n = shm_ring_pop_n_spsc(&reply, buf, 64);
    ck_assert_int_eq(n, (int)shm_fo_slots(sizeof(r) + sizeof(out), ss));
    memcpy(&r, buf, sizeof(r));
    ck_assert_uint_eq(r.hdr.nslots, (uint32_t)n);
    ck_assert_uint_eq(r.hdr.len, sizeof(r) + sizeof(out));
    ck_assert_uint_eq(r.status, UA_GOOD);
    ck_assert_uint_eq(r.nout, 2);
    ck_assert_uint_eq(r.out_len, sizeof(out));
    ck_assert_mem_eq(buf + sizeof(r), out, sizeof(out));
    for (uint32_t k = r.hdr.len; k < (uint32_t)n * ss; k++)
        ck_assert_uint_eq(buf[k], 0);
    /* Another generation of the worker, no such worker, a dead one. */
    ck_assert_int_eq(bk_fanout_call_reply(&fo, 0, fo.w[0].gen + 1, 1, 0,
                                          UA_GOOD, NULL, 0, 0), -EPIPE);
    ck_assert_int_eq(bk_fanout_call_reply(&fo, 7, 0, 1, 0, UA_GOOD, NULL, 0,
                                          0), -EPIPE);
    {
        uint32_t gen = fo.w[1].gen;

        bk_fanout_worker_dead(&fo, 1);
        ck_assert_uint_eq(fo.w[1].gen, gen + 1);
        ck_assert_int_eq(bk_fanout_call_reply(&fo, 1, gen + 1, 1, 0,
                                              UA_GOOD, NULL, 0, 0), -EPIPE);
        ck_assert_int_eq(bk_fanout_worker_start(&fo, 1), 0);
        /* The new worker is not the one that asked. */
        ck_assert_int_eq(bk_fanout_call_reply(&fo, 1, gen, 1, 0, UA_GOOD,
                                              NULL, 0, 0), -EPIPE);
        ck_assert_int_eq(bk_fanout_call_reply(&fo, 1, gen + 1, 1, 0,
                                              UA_GOOD, NULL, 0, 0), 0);
    }
    /* Larger than the reply ring. */
    {
        static uint8_t big[64 * 64 * 2];

        ck_assert_int_eq(bk_fanout_call_reply(&fo, 0, fo.w[0].gen, 1, 0,
                                              UA_GOOD, big, sizeof(big), 1),
                         -EMSGSIZE);
    }
    fo.on_call = NULL;
    fo.call_arg = NULL;
}
END_TEST

/* ------------------------------------------------------------ events */

static uint32_t
build_event(uint8_t *buf, uint32_t cap, uint16_t sev)
{
    struct bk_event    e;
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                             .num = 2253 };
    uint32_t           srv = shm_nodestore_lookup(&as.ns, &k);

    k.num = 2041;
    bk_event_begin(&e, buf, cap, srv, shm_nodestore_lookup(&as.ns, &k));
    ck_assert_int_eq(bk_event_std(&e, &as.ns, T0, sev), 0);
    return e.len;
}

/* The event records in worker w's ring (released); their count. */
static uint32_t
take_events(unsigned w, uint8_t *last, uint32_t *last_len)
{
    struct shm_ring_ref      r;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_blockpool_ref pool;
    const uint8_t           *bytes;
    uint32_t                 s, len, n = 0;

    worker_ring(w, &r);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    while (shm_ring_pop_spsc(&r, &h) == 0) {
        ck_assert_int_eq(shm_blockpool_open(&pool, h, w, &it), 0);
        while (shm_blockpool_next(&it, &s, &bytes, &len) == 1)
            if (s == SHM_FO_EVENT_SLOT) {
                n++;
                if (last != NULL) {
                    memcpy(last, bytes, len);
                    *last_len = len;
                }
            }
        ck_assert_int_eq(shm_blockpool_release(&pool, h, w), 0);
    }
    return n;
}

START_TEST(test_events_interest)
{
    static uint8_t rec[2048], got[2048];
    uint32_t       len = build_event(rec, sizeof(rec), 300), glen = 0;

    /* Nobody interested: nothing. */
    bk_fanout_event(&fo, rec, len);
    bk_fanout_flush(&fo);
    ck_assert_uint_eq(take_events(0, NULL, NULL), 0);
    ck_assert_uint_eq(take_events(1, NULL, NULL), 0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->events), 0);
    /* Worker 1 interested: it alone gets the record, byte for byte. */
    shm_fanout_event_interest(&fo.fo, 1, true);
    bk_fanout_event(&fo, rec, len);
    bk_fanout_flush(&fo);
    ck_assert_uint_eq(take_events(0, NULL, NULL), 0);
    ck_assert_uint_eq(take_events(1, got, &glen), 1);
    ck_assert_uint_eq(glen, len);
    ck_assert(memcmp(got, rec, len) == 0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->events), 1);
    shm_fanout_event_interest(&fo.fo, 1, false);
    bk_fanout_event(&fo, rec, len);
    bk_fanout_flush(&fo);
    ck_assert_uint_eq(take_events(1, NULL, NULL), 0);
    ck_assert_uint_eq(shm_blockpool_free_count(&fo.pool), 24);
}
END_TEST

START_TEST(test_events_ring_full)
{
    static uint8_t rec[2048];
    uint32_t       len = build_event(rec, sizeof(rec), 300);
    uint64_t       seq0 = shm_fanout_lost_seq(&fo.fo, 0);

    shm_fanout_event_interest(&fo.fo, 0, true);
    for (int i = 0; i < 17; i++) {
        bk_fanout_event(&fo, rec, len);
        bk_fanout_flush(&fo);
    }
    ck_assert_uint_eq(shm_fanout_events_lost(&fo.fo, 0), 1);
    ck_assert_uint_eq(shm_fanout_events_lost(&fo.fo, 1), 0);
    (void)bk_fanout_prepare(&fo, T0 + 100);
    bk_fanout_wake(&fo);
    ck_assert_uint_gt(shm_fanout_lost_seq(&fo.fo, 0), seq0);
    ck_assert_uint_eq(take_events(0, NULL, NULL), 16);
    /* A dead worker's interest goes. */
    bk_fanout_worker_dead(&fo, 0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->event_interest), 0);
}
END_TEST

/* A SHM_FO_EVENT record of len bytes pushed as worker w. */
static void
push_event(unsigned w, const uint8_t *ev, uint32_t len)
{
    static uint8_t      buf[64 * 64];
    struct shm_ring_ref req;
    struct shm_fo_hdr   h;

    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, w, SHM_RING_REQ), 0);
    memset(buf, 0, sizeof(buf));
    h.kind = SHM_FO_EVENT;
    h.len = (uint32_t)sizeof(h) + len;
    h.nslots = (uint16_t)shm_fo_slots(h.len, req.slot_size);
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), ev, len);
    ck_assert_int_eq(shm_ring_push_n_spsc(&req, buf, h.nslots), 0);
}

START_TEST(test_events_from_worker)
{
    static uint8_t rec[2048];
    uint32_t       len = build_event(rec, sizeof(rec), 300);

    shm_fanout_event_interest(&fo.fo, 0, true);
    shm_fanout_event_interest(&fo.fo, 1, true);
    push_event(1, rec, len);
    /* Garbage: a field count past the bytes; a source past the store. */
    rec[8] = 99;
    push_event(1, rec, len);
    rec[8] = 8;
    {
        uint32_t bad = UINT32_MAX - 1;

        memcpy(rec, &bad, 4);
        push_event(0, rec, len);
    }
    (void)bk_fanout_prepare(&fo, T0 + 100);
    bk_fanout_wake(&fo);
    ck_assert_uint_eq(take_events(0, NULL, NULL), 1);
    ck_assert_uint_eq(take_events(1, NULL, NULL), 1);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->events), 1);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Fan-out (broker)");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Notifications");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_unwatched);
    tcase_add_test(tc, test_call_records);
    tcase_add_test(tc, test_watched_record);
    tcase_add_test(tc, test_ring_full_marks_lost);
    tcase_add_test(tc, test_events_interest);
    tcase_add_test(tc, test_events_ring_full);
    tcase_add_test(tc, test_events_from_worker);
    tcase_add_test(tc, test_pool_exhausted);
    tcase_add_test(tc, test_too_big_for_a_block);
    tcase_add_test(tc, test_dead_worker);
    suite_add_tcase(s, tc);
    tc = tcase_create("Writes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_write_records);
    tcase_add_test(tc, test_bad_record);
    tcase_add_test(tc, test_write_watched_order);
    tcase_add_test(tc, test_linger);
    tcase_add_test(tc, test_linger_off);
    tcase_add_test(tc, test_write_fast_general_notify);
    suite_add_tcase(s, tc);
    tc = tcase_create("Long Writes");
    tcase_add_checked_fixture(tc, setup_big, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_write_fast_pend_full);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
