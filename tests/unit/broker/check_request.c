/*
 * tests/unit/broker/check_request.c: the request drain (broker/request.c)
 * in one process (value_fixture.h): the test plays the workers through
 * the shm API (request and reply rings, notification blocks).
 *
 *   - Write records in, result records out (packed per request), malformed
 *     records refused; the watched changes of one record (one value batch:
 *     masks loaded after one fence) keep their order, a slot written twice
 *     included, fast-path and general-path changes interleaved, more of
 *     them than the batch's pending array holds;
 *   - method calls: a SHM_FO_CALL record without a call handler is
 *     answered BadNotImplemented at once; with one it is handed over, and
 *     bk_request_call_reply() queues SHM_FO_CALL_RESULT records (bytes,
 *     zero tail) only to the worker generation that asked, refusing one
 *     larger than the reply ring;
 *   - a worker's SHM_FO_EVENT record is fanned out when it parses,
 *     dropped when it does not;
 *   - linger (fanout.linger_us): after an iteration that took several
 *     requests (or one while lingering) the request ring stays unmarked (a
 *     pushing worker needs no bell) but the loop never blocks without the
 *     linger timer; a lone request does not linger; the first iteration
 *     that finds nothing marks the ring, and the next push asks for a
 *     bell.
 */
#include "value_fixture.h"

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
    ck_assert(!bk_request_prepare(&rq, T0 + 50) || true);
    bk_request_wake(&rq);
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
    (void)bk_request_prepare(&rq, T0);
    bk_request_wake(&rq);
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
    (void)bk_request_prepare(&rq, T0 + 60);
    bk_request_wake(&rq);
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
    (void)bk_request_prepare(&rq, T0 + 70);
    bk_request_wake(&rq);
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
 * holds (BK_VALUE_PEND_MAX): every one notified, in order, with the
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

    ck_assert_uint_gt(300, BK_VALUE_PEND_MAX);
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
    (void)bk_request_prepare(&rq, T0 + 80);
    bk_request_wake(&rq);
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
    ck_assert(bk_request_prepare(&rq, T0));
    ck_assert(!rq.linger_armed);
    push_write(0, 0x10001, 1, nodes, vals);
    ck_assert(worker_needs_bell(&req));
    bk_request_wake(&rq);
    /* A lone request does not linger (a lone client keeps its bells). */
    ck_assert(bk_request_prepare(&rq, T0 + 1));
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 1);
    ck_assert(!rq.linger_armed);
    bk_request_wake(&rq);
    /* Two at once: linger: no mark, a timer. */
    push_write(0, 0x10002, 1, nodes, vals);
    push_write(0, 0x10003, 1, nodes, vals);
    ck_assert(bk_request_prepare(&rq, T0 + 2));
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 3);
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 0);
    ck_assert(rq.linger_armed);
    vals[0] = 2;
    push_write(0, 0x10004, 1, nodes, vals);
    ck_assert(!worker_needs_bell(&req));     /* found without a bell */
    /* The blocking iteration ends by the timer (a lost wake-up would
     * block here for good). */
    t = mono_s();
    ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
    ck_assert_double_lt(mono_s() - t, 5.0);
    bk_request_wake(&rq);
    /* One while lingering: linger on. */
    ck_assert(bk_request_prepare(&rq, T0 + 3));
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 4);
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 0);
    ck_assert(rq.linger_armed);
    ck_assert_int_ne(event_base_loop(base, EVLOOP_ONCE), -1);
    bk_request_wake(&rq);
    /* Nothing came: marked again, no timer; the next push rings. */
    ck_assert(bk_request_prepare(&rq, T0 + 4));
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 1);
    ck_assert(!rq.linger_armed);
    push_write(0, 0x10005, 1, nodes, vals);
    ck_assert(worker_needs_bell(&req));
    bk_request_wake(&rq);
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

    bk_request_clear(&rq);
    conf.fanout_linger_us = 0;
    ck_assert_msg(bk_request_init(&rq, &as, &fo, base, &conf, err,
                                  sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(bk_request_worker_start(&rq, 0), 0);
    ck_assert_int_eq(bk_request_worker_start(&rq, 1), 0);
    ck_assert_int_eq(rq.linger_fd, -1);
    ck_assert_int_eq(shm_ring_locate(&req, &as.seg, 0, SHM_RING_REQ), 0);
    push_write(0, 0x10001, 1, nodes, vals);
    push_write(0, 0x10002, 1, nodes, vals);
    push_write(0, 0x10003, 1, nodes, vals);
    ck_assert(bk_request_prepare(&rq, T0));
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->writes), 3);
    ck_assert_uint_eq(atomic_load(&req.sh->consumer_sleeping) & 1u, 1);
    ck_assert(!rq.linger_armed);
    push_write(0, 0x10004, 1, nodes, vals);
    ck_assert(worker_needs_bell(&req));
    bk_request_wake(&rq);
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

    ck_assert_ptr_eq(arg, &rq);
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
    (void)bk_request_prepare(&rq, T0 + 50);
    bk_request_wake(&rq);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&reply, buf, 64), 1);
    memcpy(&r, buf, sizeof(r));
    ck_assert_uint_eq(r.hdr.kind, SHM_FO_CALL_RESULT);
    ck_assert_uint_eq(r.hdr.len, sizeof(r));
    ck_assert_uint_eq(r.id, 0x20001);
    ck_assert_uint_eq(r.op, 3);
    ck_assert_uint_eq(r.status, UA_BAD_NOT_IMPLEMENTED);
    ck_assert_uint_eq(r.nout, 0);
    /* Handed to the module. */
    bk_request_on_call(&rq, on_call, NULL, &rq);
    push_call(0, 0x20002, 0);
    (void)bk_request_prepare(&rq, T0 + 51);
    bk_request_wake(&rq);
    ck_assert_uint_eq(call_seen, 1);
    ck_assert_uint_eq(call_seen_id, 0x20002);
    ck_assert_int_eq(shm_ring_pop_n_spsc(&reply, buf, 64), -EAGAIN);
    /* Its answer, with outputs over two slots. */
    for (unsigned k = 0; k < sizeof(out); k++)
        out[k] = (uint8_t)(k + 1);
    ck_assert_int_eq(bk_request_call_reply(&rq, 0, rq.w[0].gen, 0x20002, 0,
                                          UA_GOOD, out, sizeof(out), 2), 0);
    (void)bk_request_prepare(&rq, T0 + 52);
    bk_request_wake(&rq);
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
    ck_assert_int_eq(bk_request_call_reply(&rq, 0, rq.w[0].gen + 1, 1, 0,
                                          UA_GOOD, NULL, 0, 0), -EPIPE);
    ck_assert_int_eq(bk_request_call_reply(&rq, 7, 0, 1, 0, UA_GOOD, NULL, 0,
                                          0), -EPIPE);
    {
        uint32_t gen = rq.w[1].gen;

        bk_request_worker_dead(&rq, 1);
        ck_assert_uint_eq(rq.w[1].gen, gen + 1);
        ck_assert_int_eq(bk_request_call_reply(&rq, 1, gen + 1, 1, 0,
                                              UA_GOOD, NULL, 0, 0), -EPIPE);
        ck_assert_int_eq(bk_request_worker_start(&rq, 1), 0);
        /* The new worker is not the one that asked. */
        ck_assert_int_eq(bk_request_call_reply(&rq, 1, gen, 1, 0, UA_GOOD,
                                              NULL, 0, 0), -EPIPE);
        ck_assert_int_eq(bk_request_call_reply(&rq, 1, gen + 1, 1, 0,
                                              UA_GOOD, NULL, 0, 0), 0);
    }
    /* Larger than the reply ring. */
    {
        static uint8_t big[64 * 64 * 2];

        ck_assert_int_eq(bk_request_call_reply(&rq, 0, rq.w[0].gen, 1, 0,
                                              UA_GOOD, big, sizeof(big), 1),
                         -EMSGSIZE);
    }
    bk_request_on_call(&rq, NULL, NULL, NULL);
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
    (void)bk_request_prepare(&rq, T0 + 100);
    bk_request_wake(&rq);
    ck_assert_uint_eq(take_events(0, NULL, NULL), 1);
    ck_assert_uint_eq(take_events(1, NULL, NULL), 1);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->events), 1);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Request drain (broker)");
    TCase   *tc;
    SRunner *sr;
    int      failed;

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
    tc = tcase_create("Calls and events");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_call_records);
    tcase_add_test(tc, test_events_from_worker);
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
