/*
 * tests/unit/worker/check_svc_monitem.c: worker/svc_monitem.c, the
 * MonitoredItem services through the dispatcher: the monitored-item flood
 * of docs/security.md case 77 (BadTooManyOperations per call,
 * BadTooManyMonitoredItems per item past the per-subscription and the
 * worker's caps, nothing allocated over many calls), the service-level
 * status codes (no operations, TimestampsToReturn, another session's
 * subscription, SetTriggering's limits), and per-item statuses of
 * CreateMonitoredItems.  Filters, deadbands, queues and sampling are in
 * check_monitem*.c.
 */
#include "sub_fixture.h"

#include <stdatomic.h>

#define CH  (&fx.ch[0])
#define CH2 (&fx.ch[1])

static struct ua_nodeid tok;

static void
setup(void)
{
    sf_setup();
    tok = fx_session(CH);
}

static void
teardown(void)
{
    sf_teardown();
}

static ua_status
create_sub(struct ua_sc *ch, const struct ua_nodeid *t, uint32_t *id)
{
    struct ua_create_subscription_response r;
    ua_status st = sf_create_sub_full(ch, t, 100, 30, 10, 0, 0, true, &r);

    if (id != NULL)
        *id = r.subscription_id;
    return st;
}

/* ------------------------------------------------- docs/security.md case 77 */

static void
tw_items(struct shm_config *c)
{
    c->max_monitored_items_per_subscription = 50;
    c->max_monitored_items = 80;
}

START_TEST(test_monitored_item_flood)
{
    struct ua_create_monitored_items_response r;
    uint32_t                                  a, b;

    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    /* MaxMonitoredItemsPerCall + 1: the whole call. */
    ck_assert_uint_eq(sf_create_items(CH, &tok, a, 1001,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_TOO_MANY_OPERATIONS);
    sf_teardown();
    sf_setup_with(tw_items);
    tok = fx_session(CH);
    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    ck_assert_uint_eq(create_sub(CH, &tok, &b), UA_GOOD);
    /* Per subscription, then per worker: per item. */
    ck_assert_uint_eq(sf_create_items(CH, &tok, a, 60,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r), UA_GOOD);
    ck_assert_int_eq(sf_count_status(&r, UA_GOOD), 50);
    ck_assert_int_eq(sf_count_status(&r, UA_BAD_TOO_MANY_MONITORED_ITEMS), 10);
    ck_assert_uint_eq(sf_create_items(CH, &tok, b, 60,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r), UA_GOOD);
    ck_assert_int_eq(sf_count_status(&r, UA_GOOD), 30);
    ck_assert_int_eq(sf_count_status(&r, UA_BAD_TOO_MANY_MONITORED_ITEMS), 30);
}
END_TEST

static void
tw_many(struct shm_config *c)
{
    c->max_monitored_items = 5000;
    c->max_monitored_items_per_subscription = 10000;
}

START_TEST(test_monitored_items_spread_over_calls)
{
    struct ua_create_monitored_items_response r;
    struct wk_sub_mem                         m;
    uint32_t                                  a;
    int32_t                                   good = 0, refused = 0;
    uint64_t                                  allocs;

    sf_teardown();
    sf_setup_with(tw_many);
    tok = fx_session(CH);
    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    allocs = atomic_load(&fx.w.row->allocations);
    /* 200 calls of 1000: bounded by the worker's pool, nothing grows. */
    for (int i = 0; i < 200; i++) {
        ua_arena_reset(&fx.rarena);
        ck_assert_uint_eq(sf_create_items(CH, &tok, a, 1000,
                                       UA_TIMESTAMPSTORETURN_BOTH, &r),
                          UA_GOOD);
        good += sf_count_status(&r, UA_GOOD);
        refused += sf_count_status(&r, UA_BAD_TOO_MANY_MONITORED_ITEMS);
    }
    ck_assert_int_eq(good, 5000);
    ck_assert_int_eq(refused, 200000 - 5000);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.items_used, 5000);
    ck_assert_uint_le(m.cells_used, 5000);
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

START_TEST(test_create_item_statuses)
{
    struct ua_create_monitored_items_request  req;
    struct ua_create_monitored_items_response r;
    struct ua_monitored_item_create_request   it[4];
    uint32_t                                  a;

    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    memset(it, 0, sizeof(it));
    for (int i = 0; i < 4; i++) {
        it[i].item_to_monitor.node_id = sf_var(1);
        it[i].item_to_monitor.attribute_id = UA_ATTR_VALUE;
        it[i].item_to_monitor.index_range.len = -1;
        it[i].item_to_monitor.data_encoding.name.len = -1;
        it[i].monitoring_mode = UA_MONITORINGMODE_REPORTING;
    }
    it[0].monitoring_mode = 7;
    it[3].requested_parameters.sampling_interval = -1;
    it[1].item_to_monitor.data_encoding.name = ua_string_from("Default XML");
    it[2].item_to_monitor.node_id = fx_ns0(UA_NS0ID_SERVER);
    it[2].item_to_monitor.attribute_id = UA_ATTR_EVENTNOTIFIER;
    memset(&req, 0, sizeof(req));
    req.subscription_id = a;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
    req.n_items_to_create = 4;
    req.items_to_create = it;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_CREATEMONITOREDITEMSREQUEST,
                              &req, UA_TYPE_CREATEMONITOREDITEMSRESPONSE,
                              &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code,
                      UA_BAD_MONITORING_MODE_INVALID);
    ck_assert_uint_eq(r.results[1].status_code,
                      UA_BAD_DATA_ENCODING_UNSUPPORTED);
    /* EventNotifier is an event item: it needs an EventFilter. */
    ck_assert_uint_eq(r.results[2].status_code, UA_BAD_EVENT_FILTER_INVALID);
    ck_assert_uint_eq(r.results[3].status_code, UA_GOOD);
    ck_assert(r.results[3].revised_sampling_interval == 100);
}
END_TEST

START_TEST(test_service_results)
{
    struct ua_nodeid                          tok2 = fx_session(CH2);
    struct ua_create_monitored_items_response r;
    struct ua_delete_monitored_items_request  dreq;
    struct ua_delete_monitored_items_response dresp;
    struct ua_set_triggering_request          treq;
    struct ua_set_triggering_response         tresp;
    uint32_t                                  a, ids[2];

    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    ck_assert_uint_eq(sf_create_items(CH, &tok, a, 0,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_NOTHING_TO_DO);
    ck_assert_uint_eq(sf_create_items(CH, &tok, a, 1, 4, &r),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(sf_create_items(CH, &tok, a, 1, -1, &r),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    /* Another session's subscription is not there for us. */
    ck_assert_uint_eq(sf_create_items(CH2, &tok2, a, 1,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(sf_create_items(CH, &tok, a + 1, 1,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(sf_create_items(CH, &tok, a, 2,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r), UA_GOOD);
    ids[0] = r.results[0].monitored_item_id;
    ids[1] = r.results[1].monitored_item_id;
    ck_assert_uint_ne(ids[0], ids[1]);

    memset(&dreq, 0, sizeof(dreq));
    dreq.subscription_id = a;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_DELETEMONITOREDITEMSREQUEST,
                              &dreq, UA_TYPE_DELETEMONITOREDITEMSRESPONSE,
                              &dresp), UA_BAD_NOTHING_TO_DO);
    memset(&treq, 0, sizeof(treq));
    treq.subscription_id = a;
    treq.triggering_item_id = ids[0];
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETTRIGGERINGREQUEST, &treq,
                              UA_TYPE_SETTRIGGERINGRESPONSE, &tresp),
                      UA_BAD_NOTHING_TO_DO);
    treq.n_links_to_add = 1;
    treq.links_to_add = &ids[1];
    treq.triggering_item_id = 12345;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETTRIGGERINGREQUEST, &treq,
                              UA_TYPE_SETTRIGGERINGRESPONSE, &tresp),
                      UA_BAD_MONITORED_ITEM_ID_INVALID);
    treq.n_links_to_add = 1001;
    treq.links_to_add = ua_arena_alloc(&fx.rarena, 1001 * sizeof(uint32_t));
    ck_assert_ptr_nonnull(treq.links_to_add);
    memset(treq.links_to_add, 0, 1001 * sizeof(uint32_t));
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETTRIGGERINGREQUEST, &treq,
                              UA_TYPE_SETTRIGGERINGRESPONSE, &tresp),
                      UA_BAD_TOO_MANY_OPERATIONS);
}
END_TEST

static Suite *
svc_monitem_suite(void)
{
    Suite *s = suite_create("worker/svc_monitem");
    TCase *tc;

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_monitored_item_flood);
    tcase_add_test(tc, test_monitored_items_spread_over_calls);
    suite_add_tcase(s, tc);

    tc = tcase_create("results");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_service_results);
    tcase_add_test(tc, test_create_item_statuses);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_monitem_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
