/*
 * tests/unit/worker/check_svc_sub.c: worker/svc_sub.c, the service layer
 * of subscriptions and monitored items, and the bad input of
 * docs/security.md "Subscriptions": subscription flood (case 76),
 * monitored-item flood (case 77), persistent subscriptions of closed
 * sessions (case 80), service-level
 * status codes, limits per call, and that none of it allocates.
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

/* CreateMonitoredItems of n items on v1, v3, ...; the response. */
static ua_status
create_items(struct ua_sc *ch, const struct ua_nodeid *t, uint32_t sub,
             int32_t n, int32_t ttr,
             struct ua_create_monitored_items_response *resp)
{
    struct ua_create_monitored_items_request req;
    struct ua_monitored_item_create_request *it;

    it = ua_arena_alloc(&fx.rarena, (size_t)(n > 0 ? n : 1) * sizeof(*it));
    ck_assert_ptr_nonnull(it);
    for (int32_t i = 0; i < n; i++) {
        char *name = ua_arena_alloc(&fx.rarena, 16);

        ck_assert_ptr_nonnull(name);
        snprintf(name, 16, "v%d", (i % 50) * 2 + 1);
        memset(&it[i], 0, sizeof(it[i]));
        it[i].item_to_monitor.node_id = fx_ns1(name);
        it[i].item_to_monitor.attribute_id = UA_ATTR_VALUE;
        it[i].item_to_monitor.index_range.len = -1;
        it[i].item_to_monitor.data_encoding.name.len = -1;
        it[i].monitoring_mode = UA_MONITORINGMODE_REPORTING;
        it[i].requested_parameters.client_handle = (uint32_t)i;
        it[i].requested_parameters.queue_size = 1;
    }
    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.timestamps_to_return = ttr;
    req.n_items_to_create = n;
    req.items_to_create = it;
    return sf_call(ch, t, UA_TYPE_CREATEMONITOREDITEMSREQUEST, &req,
                   UA_TYPE_CREATEMONITOREDITEMSRESPONSE, resp);
}

static int32_t
count_status(const struct ua_create_monitored_items_response *r, ua_status s)
{
    int32_t n = 0;

    for (int32_t i = 0; i < r->n_results; i++)
        n += r->results[i].status_code == s;
    return n;
}

/* ------------------------------------------------- docs/security.md case 76 */

static void
tw_subs(struct shm_config *c)
{
    c->max_subscriptions = 30;
}

START_TEST(test_subscription_flood)
{
    struct ua_nodeid tok2;
    uint32_t         id;
    int              ok = 0;

    for (int i = 0; i < 20; i++)
        ck_assert_uint_eq(create_sub(CH, &tok, &id), UA_GOOD);
    /* MaxSubscriptionsPerSession + 1. */
    ck_assert_uint_eq(create_sub(CH, &tok, &id),
                      UA_BAD_TOO_MANY_SUBSCRIPTIONS);
    /* The worker's limit counts every session's (and orphans). */
    sf_teardown();
    sf_setup_with(tw_subs);
    tok = fx_session(CH);
    tok2 = fx_session(CH2);
    for (int i = 0; i < 20; i++)
        ck_assert_uint_eq(create_sub(CH, &tok, &id), UA_GOOD);
    for (int i = 0; i < 20; i++)
        ok += create_sub(CH2, &tok2, &id) == UA_GOOD;
    ck_assert_int_eq(ok, 10);
    ck_assert_uint_eq(create_sub(CH2, &tok2, &id),
                      UA_BAD_TOO_MANY_SUBSCRIPTIONS);
}
END_TEST

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
    ck_assert_uint_eq(create_items(CH, &tok, a, 1001,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_TOO_MANY_OPERATIONS);
    sf_teardown();
    sf_setup_with(tw_items);
    tok = fx_session(CH);
    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    ck_assert_uint_eq(create_sub(CH, &tok, &b), UA_GOOD);
    /* Per subscription, then per worker: per item. */
    ck_assert_uint_eq(create_items(CH, &tok, a, 60,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r), UA_GOOD);
    ck_assert_int_eq(count_status(&r, UA_GOOD), 50);
    ck_assert_int_eq(count_status(&r, UA_BAD_TOO_MANY_MONITORED_ITEMS), 10);
    ck_assert_uint_eq(create_items(CH, &tok, b, 60,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r), UA_GOOD);
    ck_assert_int_eq(count_status(&r, UA_GOOD), 30);
    ck_assert_int_eq(count_status(&r, UA_BAD_TOO_MANY_MONITORED_ITEMS), 30);
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
        ck_assert_uint_eq(create_items(CH, &tok, a, 1000,
                                       UA_TIMESTAMPSTORETURN_BOTH, &r),
                          UA_GOOD);
        good += count_status(&r, UA_GOOD);
        refused += count_status(&r, UA_BAD_TOO_MANY_MONITORED_ITEMS);
    }
    ck_assert_int_eq(good, 5000);
    ck_assert_int_eq(refused, 200000 - 5000);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.items_used, 5000);
    ck_assert_uint_le(m.cells_used, 5000);
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

/* ------------------------------------------------- docs/security.md case 80 */

START_TEST(test_persistent_subscription_loop)
{
    struct ua_create_monitored_items_response r;
    struct ua_close_session_request           creq;
    struct ua_close_session_response          cresp;
    struct wk_sub_mem                         m;
    uint32_t                                  id;
    int                                       refused = 0;

    for (int i = 0; i < 200; i++) {
        struct ua_nodeid t = fx_session(CH);

        for (int k = 0; k < 9; k++) {
            ua_status st = create_sub(CH, &t, &id);

            if (st != UA_GOOD) {
                ck_assert_uint_eq(st, UA_BAD_TOO_MANY_SUBSCRIPTIONS);
                refused++;
                continue;
            }
            ua_arena_reset(&fx.rarena);
            create_items(CH, &t, id, 20, UA_TIMESTAMPSTORETURN_BOTH, &r);
        }
        memset(&creq, 0, sizeof(creq));
        creq.delete_subscriptions = false;
        ck_assert_uint_eq(sf_call(CH, &t, UA_TYPE_CLOSESESSIONREQUEST, &creq,
                                  UA_TYPE_CLOSESESSIONRESPONSE, &cresp),
                          UA_GOOD);
        wk_sub_mem(&fx.w, &m);
        ck_assert_uint_le(m.subs_used, fx.w.conf->max_subscriptions);
    }
    ck_assert_int_eq(refused, 200 * 9 - 500);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 500);
    ck_assert_uint_eq(m.items_used, 500 * 20);
    /* The orphans' lifetime (30 x 100 ms) runs out: all gone. */
    for (int i = 0; i < 40; i++)
        sf_tick(100);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 0);
    ck_assert_uint_eq(m.items_used, 0);
    ck_assert_uint_eq(m.cells_used, 0);
    ck_assert_uint_eq(m.retx_cells_used, 0);
}
END_TEST

/* ------------------------------------------------- service results */

START_TEST(test_service_results)
{
    struct ua_nodeid                          tok2 = fx_session(CH2);
    struct ua_create_monitored_items_response r;
    struct ua_delete_monitored_items_request  dreq;
    struct ua_delete_monitored_items_response dresp;
    struct ua_set_triggering_request          treq;
    struct ua_set_triggering_response         tresp;
    struct ua_modify_subscription_request     mreq;
    struct ua_modify_subscription_response    mresp;
    struct ua_delete_subscriptions_request    sreq;
    struct ua_delete_subscriptions_response   sresp;
    uint32_t                                  a, ids[2];

    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
    ck_assert_uint_eq(create_items(CH, &tok, a, 0,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_NOTHING_TO_DO);
    ck_assert_uint_eq(create_items(CH, &tok, a, 1, 4, &r),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(create_items(CH, &tok, a, 1, -1, &r),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    /* Another session's subscription is not there for us. */
    ck_assert_uint_eq(create_items(CH2, &tok2, a, 1,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(create_items(CH, &tok, a + 1, 1,
                                   UA_TIMESTAMPSTORETURN_BOTH, &r),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(create_items(CH, &tok, a, 2,
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

    memset(&mreq, 0, sizeof(mreq));
    mreq.subscription_id = 999;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_MODIFYSUBSCRIPTIONREQUEST,
                              &mreq, UA_TYPE_MODIFYSUBSCRIPTIONRESPONSE,
                              &mresp), UA_BAD_SUBSCRIPTION_ID_INVALID);
    mreq.subscription_id = a;
    mreq.requested_publishing_interval = 1e308;
    mreq.requested_lifetime_count = 1;
    mreq.requested_max_keep_alive_count = 0;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_MODIFYSUBSCRIPTIONREQUEST,
                              &mreq, UA_TYPE_MODIFYSUBSCRIPTIONRESPONSE,
                              &mresp), UA_GOOD);
    ck_assert(mresp.revised_publishing_interval == 3600000.0);
    ck_assert_uint_eq(mresp.revised_max_keep_alive_count, 10);
    ck_assert_uint_eq(mresp.revised_lifetime_count, 30);

    memset(&sreq, 0, sizeof(sreq));
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_DELETESUBSCRIPTIONSREQUEST,
                              &sreq, UA_TYPE_DELETESUBSCRIPTIONSRESPONSE,
                              &sresp), UA_BAD_NOTHING_TO_DO);
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

static Suite *
svc_sub_suite(void)
{
    Suite *s = suite_create("Subscription services");
    TCase *tc;

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_subscription_flood);
    tcase_add_test(tc, test_monitored_item_flood);
    tcase_add_test(tc, test_monitored_items_spread_over_calls);
    tcase_add_test(tc, test_persistent_subscription_loop);
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
    SRunner *sr = srunner_create(svc_sub_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
