/*
 * tests/unit/broker/check_value.c: the value path (broker/value.c) with
 * the real fan-out behind it, in one process (value_fixture.h):
 *
 *   - a change nobody watches makes no record;
 *   - a watched change is one record (slot, DataValue with value, status,
 *     both timestamps) in a block pushed to exactly the watchers, released
 *     by them; server timestamps of a slot strictly increase;
 *   - a value larger than a block: marked lost, counted;
 *   - a batch: its changes wait for its end (nothing before, every one
 *     after), in the order they were made, small and large mixed, an
 *     event between them, past the room of the pending array;
 *   - without a fan-out the slots are written and nothing waits.
 */
#include "value_fixture.h"

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

START_TEST(test_too_big_for_a_block)
{
    uint32_t slot = slot_of("Demo.Static.Scalar.String");
    char     big[2000];
    struct ua_string s;

    memset(big, 'x', sizeof(big));
    s.len = sizeof(big);
    s.data = (uint8_t *)big;
    shm_interest_set(&as.vals, slot, 0);
    bk_value_batch_begin(&as.val);
    ck_assert_int_eq(bk_value_write_scalar(&as.val, slot, UA_BT_STRING, &s,
                                           T0), 0);
    bk_value_batch_end(&as.val);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications_dropped), 1);
    (void)bk_request_prepare(&rq, T0 + 1);
    ck_assert(shm_fanout_lost_take(&fo.fo, slot, 0));
}
END_TEST

/*
 * One batch: v0 (small), a String of 40 bytes (too large to wait), an
 * event, v0 again: nothing before the end, then the records in that
 * order.
 */
START_TEST(test_batch_order)
{
    static uint8_t      abuf[1 << 16], rec[2048];
    struct ua_arena     a;
    uint32_t            s0 = slot_of("v0");
    uint32_t            ss = slot_of("Demo.Static.Scalar.String");
    uint32_t            elen = build_event(rec, sizeof(rec), 300);
    char                text[40];
    struct ua_string    str = { sizeof(text), (uint8_t *)text };
    int32_t             x = 1;
    struct shm_ring_ref r;
    struct shm_block_handle h;
    struct shm_block_iter it;
    struct shm_blockpool_ref pool;
    const uint8_t      *bytes;
    uint32_t            s, len, n = 0;
    const uint32_t      want[4] = { s0, ss, SHM_FO_EVENT_SLOT, s0 };

    ua_arena_init(&a, abuf, sizeof(abuf));
    memset(text, 'y', sizeof(text));
    shm_interest_set(&as.vals, s0, 0);
    shm_interest_set(&as.vals, ss, 0);
    shm_fanout_event_interest(&fo.fo, 0, true);
    bk_value_batch_begin(&as.val);
    ck_assert_int_eq(bk_value_write_scalar(&as.val, s0, UA_BT_INT32, &x, T0),
                     0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 0);
    ck_assert_int_eq(bk_value_write_scalar(&as.val, ss, UA_BT_STRING, &str,
                                           T0), 0);
    bk_value_event(&as.val, rec, elen);
    x = 2;
    ck_assert_int_eq(bk_value_write_scalar(&as.val, s0, UA_BT_INT32, &x, T0),
                     0);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 2);
    bk_value_batch_end(&as.val);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 3);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->events), 1);
    bk_fanout_flush(&fo);
    worker_ring(0, &r);
    ck_assert_int_eq(shm_ring_pop_spsc(&r, &h), 0);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    ck_assert_int_eq(shm_blockpool_open(&pool, h, 0, &it), 0);
    while (shm_blockpool_next(&it, &s, &bytes, &len) == 1) {
        ck_assert_uint_lt(n, 4);
        ck_assert_uint_eq(s, want[n]);
        n++;
    }
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(shm_blockpool_release(&pool, h, 0), 0);
}
END_TEST

/*
 * More small changes in one batch than the pending array holds: all of
 * them, in order, each with the value it wrote (copied: the caller's
 * variable changes in between).
 */
START_TEST(test_batch_past_room)
{
    static uint8_t             abuf[1 << 20];
    static uint32_t            slot[BK_VALUE_PEND_MAX + 64];
    static struct ua_datavalue dv[BK_VALUE_PEND_MAX + 64];
    struct ua_arena            a;
    uint32_t                   s0 = slot_of("v0"), n;
    const uint32_t             total = BK_VALUE_PEND_MAX + 44;

    /* Blocks of 1 KiB hold ~40 records: room in the pool and ring. */
    ua_arena_init(&a, abuf, sizeof(abuf));
    shm_interest_set(&as.vals, s0, 0);
    for (uint32_t k = 0; k < total; k += 100) {
        bk_value_batch_begin(&as.val);
        for (uint32_t j = k; j < total && j < k + 100; j++) {
            int32_t x = (int32_t)(5000 + j);

            ck_assert_int_eq(bk_value_write_scalar(&as.val, s0, UA_BT_INT32,
                                                   &x, T0), 0);
        }
        bk_value_batch_end(&as.val);
        bk_fanout_flush(&fo);
        n = take_notifs(0, slot, dv, BK_VALUE_PEND_MAX + 64, &a);
        for (uint32_t i = 0; i < n; i++)
            ck_assert_int_eq(*(int32_t *)dv[i].value.data,
                             (int32_t)(5000 + k + i));
        ck_assert_uint_eq(n, total - k < 100 ? total - k : 100);
    }
    /* And one batch past the room at once. */
    bk_value_batch_begin(&as.val);
    for (uint32_t j = 0; j < BK_VALUE_PEND_MAX + 20; j++) {
        int32_t x = (int32_t)j;

        ck_assert_int_eq(bk_value_write_scalar(&as.val, s0, UA_BT_INT32, &x,
                                               T0), 0);
    }
    /* The full array was settled to make room; the rest waits. */
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications),
                      total + BK_VALUE_PEND_MAX);
    bk_value_batch_end(&as.val);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications),
                      total + BK_VALUE_PEND_MAX + 20);
}
END_TEST

/* No fan-out: the slot changes, nothing waits, nothing is counted. */
START_TEST(test_no_fanout)
{
    uint32_t         s0 = slot_of("v0");
    uint8_t          tmp[32];
    struct shm_value m;
    int32_t          got;

    bk_value_set_fanout(&as.val, NULL);
    shm_interest_set(&as.vals, s0, 0);
    set_i32(s0, 123, T0 + 5);
    ck_assert_uint_eq(as.val.pend_n, 0);
    ck_assert_int_eq(shm_value_read(&as.vals, s0, &m, tmp, sizeof(tmp)), 0);
    memcpy(&got, tmp + 1, sizeof(got));
    ck_assert_int_eq(got, 123);
    ck_assert_int_eq(m.source_ts, T0 + 5);
    ck_assert_uint_eq(atomic_load(&fo.fo.sh->notifications), 0);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Value path");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Changes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_unwatched);
    tcase_add_test(tc, test_watched_record);
    tcase_add_test(tc, test_too_big_for_a_block);
    tcase_add_test(tc, test_no_fanout);
    suite_add_tcase(s, tc);
    tc = tcase_create("Batches");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_batch_order);
    tcase_add_test(tc, test_batch_past_room);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
