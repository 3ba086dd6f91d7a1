/*
 * tests/unit/worker/check_monitem_queue.c: worker/monitem_queue.c, the
 * monitored items' queues, through the services and the link's handlers
 * with a clock of our own: queueSize 1 keeps the newest, discardOldest
 * true and false with the Overflow bit, revision, a smaller queue on
 * Modify, the value cells exhausted (an overflow), values shared by the
 * items that queue one change.
 */
#include "mi_fixture.h"

#include <stdatomic.h>

#include "worker/sub_int.h"

START_TEST(test_queue_size_one_keeps_newest)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    const struct ua_data_change_notification *d;

    sf_item(CH, &tok, sub, v, 7, NULL);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 1);
    ck_assert_uint_eq(d->monitored_items[0].client_handle, 7);
    ck_assert(sf_num(d, 0) == 1.5);             /* the initial value */
    for (int i = 10; i <= 14; i++)
        sf_change_d(v, i);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 1);
    ck_assert(sf_num(d, 0) == 14);
    ck_assert(!overflow(d, 0));                 /* never for a queue of 1 */
}
END_TEST

START_TEST(test_queue_discard_oldest)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 3,
                                                    .discard_oldest = true };
    const struct ua_data_change_notification *d;

    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);                             /* initial value */
    for (int i = 1; i <= 5; i++)
        sf_change_d(v, i);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 3);
    ck_assert(sf_num(d, 0) == 3 && sf_num(d, 1) == 4 && sf_num(d, 2) == 5);
    /* The oldest kept value carries the bit (Part 4 §5.12.1.5). */
    ck_assert(overflow(d, 0));
    ck_assert(!overflow(d, 1) && !overflow(d, 2));
    ck_assert_uint_eq(d->monitored_items[0].value.status, 0x00000480);
}
END_TEST

START_TEST(test_queue_discard_newest)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 3,
                                                    .discard_oldest = false };
    const struct ua_data_change_notification *d;

    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);
    for (int i = 1; i <= 5; i++)
        sf_change_d(v, i);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 3);
    /* The newest replaces the last one queued and carries the bit. */
    ck_assert(sf_num(d, 0) == 1 && sf_num(d, 1) == 2 && sf_num(d, 2) == 5);
    ck_assert(!overflow(d, 0) && !overflow(d, 1));
    ck_assert(overflow(d, 2));
}
END_TEST

START_TEST(test_queue_overflow_with_bad_status)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 2,
                                                    .discard_oldest = true };
    const struct ua_data_change_notification *d;
    uint8_t                                   b[32];
    double                                    x = 9;
    uint32_t                                  l = sf_variant(UA_BT_DOUBLE, &x,
                                                             b, sizeof(b));

    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);
    sf_change_d(v, 1);
    sf_change_raw(v, b, l, UA_UNCERTAIN_LAST_USABLE_VALUE, fx.w.now_dt,
                  fx.w.now_dt);
    sf_change_d(v, 3);
    /* Kept: the uncertain one (now first, with the bit OR-ed in), 3. */
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert_uint_eq(d->monitored_items[0].value.status,
                      UA_UNCERTAIN_LAST_USABLE_VALUE | 0x0480);
    ck_assert(sf_num(d, 1) == 3);
}
END_TEST

START_TEST(test_queue_revision)
{
    uint32_t                               sub = sf_create_sub(CH, &tok, 100);
    struct sf_mi                           p = { .mode = -1, .ttr = -1 };
    struct ua_monitored_item_create_result r;

    p.queue = 0;
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.revised_queue_size, 1);
    p.queue = 0xFFFFFFFFu;                      /* docs/security.md case 82 */
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub, sf_var(1), 2, &p, &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.revised_queue_size, 1000);
    p.queue = 7;
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub, sf_var(1), 3, &p, &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.revised_queue_size, 7);
}
END_TEST

START_TEST(test_modify_shrinks_queue)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10,
                                                    .discard_oldest = true };
    struct ua_modify_monitored_items_request  req;
    struct ua_modify_monitored_items_response resp;
    struct ua_monitored_item_modify_request   m;
    const struct ua_data_change_notification *d;
    uint32_t                                  id;

    id = sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);
    for (int i = 1; i <= 6; i++)
        sf_change_d(v, i);
    memset(&m, 0, sizeof(m));
    m.monitored_item_id = id;
    m.requested_parameters.client_handle = 5;
    m.requested_parameters.queue_size = 2;
    m.requested_parameters.discard_oldest = true;
    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_items_to_modify = 1;
    req.items_to_modify = &m;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_MODIFYMONITOREDITEMSREQUEST,
                              &req, UA_TYPE_MODIFYMONITOREDITEMSRESPONSE,
                              &resp), UA_GOOD);
    ck_assert_uint_eq(resp.results[0].status_code, UA_GOOD);
    ck_assert_uint_eq(resp.results[0].revised_queue_size, 2);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert_uint_eq(d->monitored_items[0].client_handle, 5);
    ck_assert(sf_num(d, 0) == 5 && overflow(d, 0));
    ck_assert(sf_num(d, 1) == 6);
}
END_TEST

START_TEST(test_cells_exhausted_is_an_overflow)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 100 };
    struct wk_subs                           *st = wk_subs_get(&fx.w);
    const struct ua_data_change_notification *d;
    uint32_t                                  cap = st->cells.cap;

    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);
    st->cells.cap = st->cells.used + 3;         /* room for 3 values */
    for (int i = 1; i <= 6; i++)
        sf_change_d(v, i);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 3);
    ck_assert(sf_num(d, 2) == 6 && overflow(d, 2));
    ck_assert_uint_gt(st->dropped, 0);
    /* Counted in /stats (the worker row's notif_dropped). */
    ck_assert_uint_eq(atomic_load(&fx.w.row->notif_dropped), st->dropped);
    st->cells.cap = cap;
}
END_TEST

START_TEST(test_values_shared_by_items)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p[3] = {
        { .mode = -1, .ttr = UA_TIMESTAMPSTORETURN_BOTH, .queue = 5 },
        { .mode = -1, .ttr = UA_TIMESTAMPSTORETURN_NEITHER, .queue = 5 },
        { .mode = -1, .ttr = UA_TIMESTAMPSTORETURN_SERVER, .queue = 5 },
    };
    const struct ua_data_change_notification *d;
    struct wk_sub_mem                         m;

    for (uint32_t i = 0; i < 20; i++)
        sf_item(CH, &tok, sub, v, i, &p[i % 3]);
    data_tick(100);
    for (int k = 1; k <= 4; k++)
        sf_change_d(v, k);
    /* 20 items x 4 changes: 80 entries, 4 values (one copy per change). */
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.entries_used, 80);
    ck_assert_uint_eq(m.cells_used, 4);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 80);
    for (int32_t k = 0; k < 80; k++) {
        const struct ua_datavalue *dv = &d->monitored_items[k].value;
        uint32_t                   h = d->monitored_items[k].client_handle;

        ck_assert_int_eq(!!(dv->mask & UA_DV_SOURCE_TS), h % 3 == 0);
        ck_assert_int_eq(!!(dv->mask & UA_DV_SERVER_TS), h % 3 != 1);
    }
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.entries_used, 0);
    ck_assert_uint_eq(m.cells_used, 0);
}
END_TEST

static Suite *
monitem_queue_suite(void)
{
    Suite *s = suite_create("worker/monitem_queue");
    TCase *tc = tcase_create("queues");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_queue_size_one_keeps_newest);
    tcase_add_test(tc, test_queue_discard_oldest);
    tcase_add_test(tc, test_queue_discard_newest);
    tcase_add_test(tc, test_queue_overflow_with_bad_status);
    tcase_add_test(tc, test_queue_revision);
    tcase_add_test(tc, test_modify_shrinks_queue);
    tcase_add_test(tc, test_cells_exhausted_is_an_overflow);
    tcase_add_test(tc, test_values_shared_by_items);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(monitem_queue_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
