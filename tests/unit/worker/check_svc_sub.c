/*
 * tests/unit/worker/check_svc_sub.c: worker/svc_sub.c, the Subscription
 * services, and the bad input of docs/security.md "Subscriptions":
 * subscription flood (case 76), persistent subscriptions of closed
 * sessions (case 80), service-level status codes, limits per call, and
 * that none of it allocates.  The MonitoredItem services are in
 * check_svc_monitem.c.
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

/* ------------------------------------------------- docs/security.md case 80 */

/* The limit this test was written for (the default was 500 then). */
static void
tw_subs500(struct shm_config *c)
{
    c->max_subscriptions = 500;
}

START_TEST(test_persistent_subscription_loop)
{
    struct ua_create_monitored_items_response r;
    struct ua_close_session_request           creq;
    struct ua_close_session_response          cresp;
    struct wk_sub_mem                         m;
    uint32_t                                  id;
    int                                       refused = 0;

    sf_teardown();
    sf_setup_with(tw_subs500);
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
            sf_create_items(CH, &t, id, 20, UA_TIMESTAMPSTORETURN_BOTH, &r);
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
    struct ua_modify_subscription_request     mreq;
    struct ua_modify_subscription_response    mresp;
    struct ua_delete_subscriptions_request    sreq;
    struct ua_delete_subscriptions_response   sresp;
    uint32_t                                  a;

    ck_assert_uint_eq(create_sub(CH, &tok, &a), UA_GOOD);
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


static Suite *
svc_sub_suite(void)
{
    Suite *s = suite_create("Subscription services");
    TCase *tc;

    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_subscription_flood);
    tcase_add_test(tc, test_persistent_subscription_loop);
    suite_add_tcase(s, tc);

    tc = tcase_create("results");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_service_results);
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
