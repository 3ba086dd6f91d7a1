/*
 * tests/unit/broker/check_fanout.c: the broker's end of the notification
 * path (broker/fanout.c) in one process (value_fixture.h): the test plays
 * the workers through the shm API (rings, block pool, lost marks,
 * interest bits).
 *
 *   - a full notification ring: the block is disowned for that worker, the
 *     slot marked lost for it, lost_seq moves only when the iteration's
 *     marks are published; counted;
 *   - an exhausted pool: marked lost, counted;
 *   - a dead worker: its ring emptied, its references reclaimed, its
 *     interest bits cleared; no push to it afterwards;
 *   - events: a record of SHM_FO_EVENT_SLOT only for workers with event
 *     interest, as built; none without; a full ring bumps events_lost
 *     by the events of the block it lost, and lost_seq;
 *   - backlogged (the feed's wait): a live worker's ring half full of
 *     what it and the pool can hold; not once taken, nor when dead;
 *   - the change log: a change a worker watches is logged with the
 *     record its block carries; one only the historian watches is not
 *     (it parks no session), and still reaches it.
 */
#include "shm/park.h"
#include "value_fixture.h"

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
    bk_fanout_lost_publish(&fo);
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
    ck_assert_uint_eq(atomic_load(&fo.pool.sh->exhausted), 1);
    /* The rest of the iteration does not walk the empty pool again ... */
    set_i32(slot, 100, T0 + 100);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->blocks_exhausted), 2);
    ck_assert_uint_eq(atomic_load(&fo.pool.sh->exhausted), 1);
    bk_fanout_lost_publish(&fo);
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 0));
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 1));
    /* ... the next one does. */
    set_i32(slot, 101, T0 + 101);
    ck_assert_uint_eq(atomic_load(&fo.pool.sh->exhausted), 2);
    bk_fanout_lost_publish(&fo);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(shm_blockpool_publish(&fo.pool, grab[i], 0), 0);
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

/* The feed's question (broker/feed.c): is a live worker's ring half of
 * min(its ring, the pool) behind?  Ring 16, pool 24: from 8 on. */
START_TEST(test_backlogged)
{
    static uint8_t rec[2048];
    uint32_t       len = build_event(rec, sizeof(rec), 300);

    ck_assert(!bk_fanout_backlogged(&fo));
    shm_fanout_event_interest(&fo.fo, 1, true);
    for (int i = 0; i < 7; i++) {
        bk_fanout_event(&fo, rec, len);
        bk_fanout_flush(&fo);
    }
    ck_assert(!bk_fanout_backlogged(&fo));
    bk_fanout_event(&fo, rec, len);
    bk_fanout_flush(&fo);
    ck_assert(bk_fanout_backlogged(&fo));
    /* Taken by the worker: caught up. */
    ck_assert_uint_eq(take_events(1, NULL, NULL), 8);
    ck_assert(!bk_fanout_backlogged(&fo));
    /* A dead worker's ring is nobody's backlog. */
    for (int i = 0; i < 8; i++) {
        bk_fanout_event(&fo, rec, len);
        bk_fanout_flush(&fo);
    }
    ck_assert(bk_fanout_backlogged(&fo));
    bk_fanout_worker_dead(&fo, 1);
    ck_assert(!bk_fanout_backlogged(&fo));
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
    /* A lost block counts each of its events, not once. */
    for (int i = 0; i < 3; i++)
        bk_fanout_event(&fo, rec, len);
    bk_fanout_flush(&fo);
    ck_assert_uint_eq(shm_fanout_events_lost(&fo.fo, 0), 4);
    bk_fanout_lost_publish(&fo);
    ck_assert_uint_gt(shm_fanout_lost_seq(&fo.fo, 0), seq0);
    ck_assert_uint_eq(take_events(0, NULL, NULL), 16);
    /* A dead worker's interest goes. */
    bk_fanout_worker_dead(&fo, 0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->event_interest), 0);
}
END_TEST

START_TEST(test_change_log_workers_only)
{
    struct shm_park     *k = shm_park_of(&as.seg);
    struct shm_clog_ent  e;
    struct ua_datavalue  dv[4];
    struct ua_arena      a;
    uint8_t              abuf[4096];
    uint32_t             slots[4];
    uint32_t             slot = slot_of("v0");
    uint64_t             head;

    ck_assert_ptr_nonnull(k);
    ua_arena_init(&a, abuf, sizeof(abuf));
    head = shm_park_head(k);
    /* The historian (slot 1) alone: delivered, not logged. */
    shm_interest_set(&as.vals, slot, 1);
    set_i32(slot, 7, T0 + 1);
    bk_fanout_flush(&fo);
    ck_assert_uint_eq(shm_park_head(k), head);
    ck_assert_uint_eq(take_notifs(1, slots, dv, 4, &a), 1);
    ck_assert_int_eq(*(const int32_t *)dv[0].value.data, 7);
    /* Worker 0 too: logged once, the block's record byte for byte. */
    shm_interest_set(&as.vals, slot, 0);
    set_i32(slot, 8, T0 + 2);
    bk_fanout_flush(&fo);
    ck_assert_uint_eq(shm_park_head(k), head + 1);
    ck_assert_int_eq(shm_park_read(k, head, &e), 0);
    ck_assert_uint_eq(e.slot, slot);
    {
        struct shm_ring_ref      r;
        struct shm_block_handle  h;
        struct shm_block_iter    it;
        struct shm_blockpool_ref pool;
        const uint8_t           *bytes;
        uint32_t                 s, len;

        worker_ring(0, &r);
        ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
        ck_assert_int_eq(shm_ring_pop_spsc(&r, &h), 0);
        ck_assert_int_eq(shm_blockpool_open(&pool, h, 0, &it), 0);
        ck_assert_int_eq(shm_blockpool_next(&it, &s, &bytes, &len), 1);
        ck_assert_uint_eq(s, slot);
        ck_assert_uint_eq(e.len, len);
        ck_assert_int_eq(memcmp(e.rec, bytes, len), 0);
        ck_assert_int_eq(shm_blockpool_release(&pool, h, 0), 0);
    }
    ck_assert_uint_eq(take_notifs(1, slots, dv, 4, &a), 1);
    ck_assert_int_eq(*(const int32_t *)dv[0].value.data, 8);
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
    tcase_add_test(tc, test_ring_full_marks_lost);
    tcase_add_test(tc, test_events_interest);
    tcase_add_test(tc, test_events_ring_full);
    tcase_add_test(tc, test_backlogged);
    tcase_add_test(tc, test_pool_exhausted);
    tcase_add_test(tc, test_dead_worker);
    suite_add_tcase(s, tc);
    tc = tcase_create("Change log");
    tcase_add_checked_fixture(tc, setup_hist, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_change_log_workers_only);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
