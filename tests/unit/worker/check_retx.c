/*
 * tests/unit/worker/check_retx.c: worker/retx.c, the retransmission
 * queues and their store, through the services with a clock of our own
 * (tests/unit/worker/sub_fixture.h): a subscription keeps its newest
 * messages up to the queue's bound; the store is shared by the worker's
 * subscriptions, the oldest message goes whoever kept it, and every
 * message still listed comes back whole across the ring's wrap.
 */
#include "sub_fixture.h"

#define CH  (&fx.ch[0])

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

static uint32_t
sub_ka(double interval, uint32_t ka, uint32_t lifetime, uint32_t maxn,
       uint8_t prio)
{
    struct ua_create_subscription_response r;

    ck_assert_uint_eq(sf_create_sub_full(CH, &tok, interval, lifetime, ka,
                                         maxn, prio, true, &r), UA_GOOD);
    return r.subscription_id;
}

static ua_status
republish(uint32_t sub, uint32_t seq, struct ua_republish_response *r)
{
    struct ua_republish_request req;

    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.retransmit_sequence_number = seq;
    return sf_call(CH, &tok, UA_TYPE_REPUBLISHREQUEST, &req,
                   UA_TYPE_REPUBLISHRESPONSE, r);
}

START_TEST(test_retransmission_queue_bounded)
{
    struct ua_nodeid             v = sf_var(1);
    uint32_t                     sub = sub_ka(100, 10, 100, 0, 0);
    struct ua_republish_response rr;
    struct sf_got               *g = NULL;
    struct wk_sub_mem            m;

    sf_item(CH, &tok, sub, v, 1, NULL);
    for (int i = 0; i < 25; i++) {
        sf_publish(CH, &tok);
        sf_change_d(v, 100 + i);
        sf_tick(100);
        g = sf_next();
        ck_assert_ptr_nonnull(g);
    }
    /* Never acknowledged: the newest 20 are kept (seq 6 .. 25). */
    ck_assert_int_eq(g->p.n_available_sequence_numbers, 20);
    ck_assert_uint_eq(g->p.available_sequence_numbers[0], 6);
    ck_assert_uint_eq(g->p.available_sequence_numbers[19], 25);
    ck_assert_uint_eq(republish(sub, 5, &rr), UA_BAD_MESSAGE_NOT_AVAILABLE);
    ck_assert_uint_eq(republish(sub, 6, &rr), UA_GOOD);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_le(m.retx_cells_used, 20);
}
END_TEST

/*
 * The retransmission store is shared by the worker's subscriptions: when
 * it is full the oldest message kept goes, whichever subscription kept
 * it, so a subscription that never acknowledges cannot keep another one
 * from keeping its messages.  Two subscriptions (max_subscriptions 2: a
 * store of 2 x 20 x 16 cells = 40 KiB), 100 items each: A's messages of
 * ~3 KiB fill it, then B's first message is kept at A's expense, and
 * every message still listed comes back whole across the ring's wrap.
 */
static void
tw_two_subs(struct shm_config *c)
{
    c->max_subscriptions = 2;
    c->retransmission_store_bytes = 0;      /* sized by the two */
    c->min_sampling_interval_ms = 0;
}

static void
setup_two(void)
{
    sf_setup_with(tw_two_subs);
    tok = fx_session(CH);
}

/* Every message g lists comes back whole: 100 values round * 1000 +
 * handle, one round per message, rounds increasing, the last one last. */
static void
republish_all(uint32_t sub, const struct sf_got *g, double last_round)
{
    struct ua_republish_response rr;
    double                       prev = -1;

    for (int32_t a = 0; a < g->p.n_available_sequence_numbers; a++) {
        const struct ua_data_change_notification *d;
        double                                    r;

        ck_assert_uint_eq(republish(sub, g->p.available_sequence_numbers[a],
                                    &rr), UA_GOOD);
        d = rr.notification_message.notification_data[0].obj;
        ck_assert_int_eq(d->n_monitored_items, 100);
        r = (sf_num(d, 0) - d->monitored_items[0].client_handle) / 1000.0;
        ck_assert(r > prev);
        prev = r;
        for (int32_t k = 0; k < 100; k++)
            ck_assert(sf_num(d, k)
                      == r * 1000.0 + d->monitored_items[k].client_handle);
    }
    ck_assert(prev == last_round);
}

START_TEST(test_retransmission_store_shared)
{
    uint32_t                      a = sub_ka(100, 10, 1000, 0, 0);
    uint32_t                      b = sub_ka(100, 10, 1000, 0, 0);
    struct ua_republish_response  rr;
    struct sf_got                *g, *ga = NULL, *gb = NULL;
    struct wk_sub_mem             m;
    int                           round;

    for (unsigned i = 0; i < 100; i++)
        sf_item(CH, &tok, a, sf_var(i), i, NULL);
    /* A alone: 2 + 14 messages, the store fills and wraps. */
    for (round = 1; round <= 16; round++) {
        sf_publish(CH, &tok);
        for (unsigned i = 0; i < 100; i++)
            sf_change_d(sf_var(i), round * 1000.0 + i);
        fx.w.now_dt += 10;
        sf_tick(100);
        while ((g = sf_next()) != NULL)
            if (g->p.subscription_id == a)
                ga = g;
    }
    ck_assert_ptr_nonnull(ga);
    wk_sub_mem(&fx.w, &m);
    /* Full: fewer than 16 kept, the newest among them. */
    ck_assert_int_lt(ga->p.n_available_sequence_numbers, 16);
    ck_assert_int_gt(ga->p.n_available_sequence_numbers, 2);
    ck_assert_uint_eq(ga->p.available_sequence_numbers
                          [ga->p.n_available_sequence_numbers - 1],
                      ga->p.notification_message.sequence_number);
    republish_all(a, ga, (sf_num(sf_dcn(ga), 0)
                          - sf_dcn(ga)->monitored_items[0].client_handle)
                             / 1000.0);

    /* B's first message of the same size: kept, A's oldest goes. */
    for (unsigned i = 0; i < 100; i++)
        sf_item(CH, &tok, b, sf_var(i), 1000 + i, NULL);
    sf_publish(CH, &tok);
    sf_publish(CH, &tok);
    fx.w.now_dt += 10;
    sf_tick(100);
    while ((g = sf_next()) != NULL)
        if (g->p.subscription_id == b
            && g->p.notification_message.n_notification_data == 1)
            gb = g;
    ck_assert_ptr_nonnull(gb);
    ck_assert_int_eq(gb->p.n_available_sequence_numbers, 1);
    ck_assert_uint_eq(republish(b, gb->p.notification_message
                                       .sequence_number, &rr), UA_GOOD);
    ck_assert_uint_eq(republish(a, ga->p.available_sequence_numbers[0],
                                &rr), UA_BAD_MESSAGE_NOT_AVAILABLE);
    ck_assert_uint_eq(republish(a, ga->p.available_sequence_numbers
                                       [ga->p.n_available_sequence_numbers
                                        - 1], &rr), UA_GOOD);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_le(m.retx_cells_used, m.retx_cells_cap);
}
END_TEST

static Suite *
retx_suite(void)
{
    Suite *s = suite_create("worker/retx");
    TCase *tc;

    tc = tcase_create("queues");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_retransmission_queue_bounded);
    suite_add_tcase(s, tc);

    tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup_two, teardown);
    tcase_add_test(tc, test_retransmission_store_shared);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(retx_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
