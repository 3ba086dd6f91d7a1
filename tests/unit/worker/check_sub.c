/*
 * tests/unit/worker/check_sub.c: worker/sub.c, the publishing side, with a
 * clock of our own: parameter revision (docs/security.md case 82), the first
 * keep-alive, keep-alive counts, sequence numbers, late Publish requests,
 * lifetime expiry with its StatusChangeNotification, MaxNotificationsPer-
 * Publish and moreNotifications, Republish and the retransmission bound,
 * acknowledgements (docs/security.md case 79), priority, the Publish queue
 * limit (docs/security.md case 78), SetPublishingMode, TransferSubscriptions,
 * CloseSession with and without deleteSubscriptions, what an idle
 * subscription costs the timer, and the table of subscriptions that came
 * from another worker.
 */
#include "sub_fixture.h"

#include "worker/sub_int.h"

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

static uint32_t
sub_ka(double interval, uint32_t ka, uint32_t lifetime, uint32_t maxn,
       uint8_t prio)
{
    struct ua_create_subscription_response r;

    ck_assert_uint_eq(sf_create_sub_full(CH, &tok, interval, lifetime, ka,
                                         maxn, prio, true, &r), UA_GOOD);
    return r.subscription_id;
}

/* n Publish requests, all deferred. */
static void
publish_n(const struct ua_nodeid *t, struct ua_sc *ch, int n)
{
    for (int i = 0; i < n; i++) {
        ck_assert_uint_eq(sf_publish(ch, t), UA_GOOD);
        ck_assert(sf.pending);
    }
}

static bool
is_keepalive(const struct sf_got *g)
{
    return g != NULL && g->result == UA_GOOD && sf_dcn(g) == NULL
           && g->p.notification_message.n_notification_data <= 0;
}

/* ------------------------------------------------------------ revision */

START_TEST(test_revision)
{
    struct ua_create_subscription_response r;
    struct wk_subs                        *st;

    sf_create_sub_full(CH, &tok, 0, 0, 0, 0, 0, true, &r);
    ck_assert(r.revised_publishing_interval == 50);     /* fastest */
    ck_assert_uint_eq(r.revised_max_keep_alive_count, 10);
    ck_assert_uint_eq(r.revised_lifetime_count, 30);    /* >= 3 x 10 */
    sf_create_sub_full(CH, &tok, -1, 1, 7, 0, 0, true, &r);
    ck_assert(r.revised_publishing_interval == 50);
    ck_assert_uint_eq(r.revised_lifetime_count, 21);
    sf_create_sub_full(CH, &tok, NAN, 100, 1000000, 0, 0, true, &r);
    ck_assert(r.revised_publishing_interval == 50);
    ck_assert_uint_eq(r.revised_max_keep_alive_count, 100);
    ck_assert_uint_eq(r.revised_lifetime_count, 300);
    sf_create_sub_full(CH, &tok, 1e308, 0xFFFFFFFFu, 5, 0, 0, true, &r);
    ck_assert(r.revised_publishing_interval == 3600000.0);
    ck_assert_uint_eq(r.revised_lifetime_count, 15);    /* 3 x 5 wins */
    sf_create_sub_full(CH, &tok, 100, 0xFFFFFFFFu, 5, 0, 0, true, &r);
    ck_assert_uint_eq(r.revised_lifetime_count, 15000);
    sf_create_sub_full(CH, &tok, 1000, 0xFFFFFFFFu, 5, 0, 0, true, &r);
    ck_assert_uint_eq(r.revised_lifetime_count, 3600);  /* <= 1 h */
    sf_create_sub_full(CH, &tok, 123.4, 100, 5, 0, 0, true, &r);
    ck_assert(r.revised_publishing_interval == 123.4);

    st = wk_subs_get(&fx.w);
    ck_assert_uint_eq(wk_sub_revise_notifs(&st->lim, 0), 1000);
    ck_assert_uint_eq(wk_sub_revise_notifs(&st->lim, 5), 5);
    ck_assert_uint_eq(wk_sub_revise_notifs(&st->lim, 5000), 1000);
    ck_assert(wk_sub_revise_interval(&st->lim, INFINITY) == 3600000.0);
    ck_assert(wk_sub_revise_interval(&st->lim, -INFINITY) == 50);
}
END_TEST

/* Items and cells sit on cache lines (their layout assumes it). */
START_TEST(test_pools_line_aligned)
{
    struct wk_subs *st = wk_subs_get(&fx.w);

    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq((uintptr_t)st->items % 64, 0);
    ck_assert_uint_eq((uintptr_t)st->cells.c % 64, 0);
}
END_TEST

/* ------------------------------------------------- keep-alives, seqs */

START_TEST(test_first_keepalive_then_count)
{
    struct sf_got *g;

    sub_ka(100, 5, 100, 0, 0);
    publish_n(&tok, CH, 3);
    ck_assert_uint_eq(sf_tick(100), 1);
    g = sf_next();
    ck_assert(is_keepalive(g));         /* the first expiry sends one */
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 1);
    ck_assert_int_le(g->p.n_available_sequence_numbers, 0);
    /* Then one per 5 expiries, and the timer sleeps in between. */
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(sf_tick(100), 0);
        ck_assert_ptr_null(sf_next());
    }
    ck_assert_uint_eq(sf_tick(100), 1);
    g = sf_next();
    ck_assert(is_keepalive(g));
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 1);
    for (int i = 0; i < 4; i++)
        sf_tick(100);
    ck_assert_ptr_null(sf_next());
    sf_tick(100);
    ck_assert(is_keepalive(sf_next()));
}
END_TEST

START_TEST(test_sequence_numbers)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sub_ka(100, 3, 100, 0, 0);
    struct sf_got   *g;

    sf_item(CH, &tok, sub, v, 1, NULL);
    publish_n(&tok, CH, 5);
    sf_tick(100);
    g = sf_next();
    ck_assert_uint_eq(g->p.subscription_id, sub);
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 1);
    ck_assert_int_eq(g->p.n_available_sequence_numbers, 1);
    ck_assert(!g->p.more_notifications);
    sf_change_d(v, 2);
    sf_tick(100);
    g = sf_next();
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 2);
    ck_assert_int_eq(g->p.n_available_sequence_numbers, 2);
    ck_assert_uint_eq(g->p.available_sequence_numbers[0], 1);
    ck_assert_uint_eq(g->p.available_sequence_numbers[1], 2);
    /* The keep-alive three expiries later names the next number. */
    sf_tick(100);
    sf_tick(100);
    ck_assert_ptr_null(sf_next());
    sf_tick(100);
    g = sf_next();
    ck_assert(is_keepalive(g));
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 3);
    sf_change_d(v, 3);
    sf_tick(100);
    g = sf_next();
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 3);
}
END_TEST

START_TEST(test_late_publish_answered_at_once)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sub_ka(100, 10, 100, 0, 0);
    struct sf_got   *g;

    sf_item(CH, &tok, sub, v, 1, NULL);
    sf_tick(100);                       /* data, no Publish: late */
    sf_tick(100);
    sf_change_d(v, 8);
    ck_assert_uint_eq(sf_unseen(), 0);
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    g = sf_next();                      /* answered inside the Publish */
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->ref, sf.last_ref);
    ck_assert(sf_num(sf_dcn(g), 0) == 8);
    /* Back to normal: the next one waits for the timer. */
    sf_change_d(v, 9);
    sf_publish(CH, &tok);
    ck_assert_ptr_null(sf_next());
    sf_tick(100);
    ck_assert(sf_num(sf_dcn(sf_next()), 0) == 9);
}
END_TEST

START_TEST(test_lifetime_expiry)
{
    struct wk_sub_mem m;
    uint32_t          sub = sub_ka(100, 10, 30, 0, 0);
    unsigned          handled = 0;
    struct sf_got    *g;
    const struct ua_status_change_notification *sc;

    sf_item(CH, &tok, sub, sf_var(1), 1, NULL);
    /* No Publish ever: late at the first expiry, deleted 30 later. */
    for (int i = 0; i < 30; i++)
        handled += sf_tick(100);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 1);
    ck_assert_uint_le(handled, 2);      /* late: the timer sleeps */
    sf_tick(100);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 0);
    ck_assert_uint_eq(m.items_used, 0);
    ck_assert_uint_eq(m.cells_used, 0);
    /* The session hears of it on its next Publish... */
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->p.subscription_id, sub);
    ck_assert_int_eq(g->p.notification_message.n_notification_data, 1);
    ck_assert_ptr_eq(g->p.notification_message.notification_data[0].type,
                     &ua_types[UA_TYPE_STATUSCHANGENOTIFICATION]);
    sc = g->p.notification_message.notification_data[0].obj;
    ck_assert_uint_eq(sc->status, UA_BAD_TIMEOUT);
    /* ...and then has nothing left. */
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_BAD_NO_SUBSCRIPTION);
}
END_TEST

START_TEST(test_max_notifications_and_more)
{
    uint32_t       sub = sub_ka(100, 10, 100, 3, 0);
    struct sf_got *g;
    int32_t        total = 0;

    for (unsigned i = 0; i < 10; i++)
        sf_item(CH, &tok, sub, sf_var(i), i, NULL);
    publish_n(&tok, CH, 5);
    sf_tick(100);
    /* 3 + 3 + 3 + 1, one right after the other while requests wait. */
    for (int k = 0; k < 4; k++) {
        g = sf_next();
        ck_assert_ptr_nonnull(g);
        ck_assert_uint_eq(g->p.notification_message.sequence_number,
                          (uint32_t)k + 1);
        ck_assert_int_eq(sf_dcn(g)->n_monitored_items, k < 3 ? 3 : 1);
        ck_assert_int_eq(g->p.more_notifications, k < 3);
        total += sf_dcn(g)->n_monitored_items;
    }
    ck_assert_int_eq(total, 10);
    ck_assert_ptr_null(sf_next());
}
END_TEST

START_TEST(test_more_notifications_without_requests)
{
    uint32_t       sub = sub_ka(100, 10, 100, 4, 0);
    struct sf_got *g;

    for (unsigned i = 0; i < 10; i++)
        sf_item(CH, &tok, sub, sf_var(i), i, NULL);
    publish_n(&tok, CH, 1);
    sf_tick(100);
    g = sf_next();
    ck_assert(g->p.more_notifications);
    /* Late with more to send: the next Publish is answered at once. */
    sf_publish(CH, &tok);
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(sf_dcn(g)->n_monitored_items, 4);
    sf_publish(CH, &tok);
    g = sf_next();
    ck_assert_int_eq(sf_dcn(g)->n_monitored_items, 2);
    ck_assert(!g->p.more_notifications);
}
END_TEST

/* ------------------------------------------------- republish, acks */

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

START_TEST(test_republish_and_acks)
{
    struct ua_nodeid                         v = sf_var(1);
    uint32_t                                 sub = sub_ka(100, 10, 100, 0, 0);
    struct ua_republish_response             rr;
    struct ua_subscription_acknowledgement   acks[3];
    const struct ua_data_change_notification *d;
    struct sf_got                            *g;

    sf_item(CH, &tok, sub, v, 1, NULL);
    publish_n(&tok, CH, 3);
    sf_tick(100);
    sf_change_d(v, 20);
    sf_tick(100);
    sf_change_d(v, 30);
    sf_tick(100);
    ck_assert_uint_eq(sf_unseen(), 3);
    ck_assert_uint_eq(republish(sub, 2, &rr), UA_GOOD);
    ck_assert_uint_eq(rr.notification_message.sequence_number, 2);
    ck_assert_ptr_eq(rr.notification_message.notification_data[0].type,
                     &ua_types[UA_TYPE_DATACHANGENOTIFICATION]);
    d = rr.notification_message.notification_data[0].obj;
    ck_assert(sf_num(d, 0) == 20);
    ck_assert_uint_eq(republish(sub, 9, &rr), UA_BAD_MESSAGE_NOT_AVAILABLE);
    ck_assert_uint_eq(republish(sub + 1, 2, &rr),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);

    /* Acknowledge 2, a sequence number never sent, another id. */
    acks[0].subscription_id = sub;
    acks[0].sequence_number = 2;
    acks[1].subscription_id = sub;
    acks[1].sequence_number = 77;
    acks[2].subscription_id = 0x12345;
    acks[2].sequence_number = 1;
    while (sf_unseen())
        sf_next();
    ck_assert_uint_eq(sf_publish_acks(CH, &tok, acks, 3), UA_GOOD);
    sf_change_d(v, 40);
    sf_tick(100);
    g = sf_next();
    ck_assert_int_eq(g->p.n_results, 3);
    ck_assert_uint_eq(g->p.results[0], UA_GOOD);
    ck_assert_uint_eq(g->p.results[1], UA_BAD_SEQUENCE_NUMBER_UNKNOWN);
    ck_assert_uint_eq(g->p.results[2], UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_int_eq(g->p.n_available_sequence_numbers, 3);  /* 1, 3, 4 */
    ck_assert_uint_eq(g->p.available_sequence_numbers[0], 1);
    ck_assert_uint_eq(g->p.available_sequence_numbers[1], 3);
    ck_assert_uint_eq(g->p.available_sequence_numbers[2], 4);
    ck_assert_uint_eq(republish(sub, 2, &rr), UA_BAD_MESSAGE_NOT_AVAILABLE);
    ck_assert_uint_eq(republish(sub, 3, &rr), UA_GOOD);
}
END_TEST

/* A kept message spanning many retransmission cells comes back whole:
 * every notification, in order, with its value. */
START_TEST(test_republish_long_message)
{
    uint32_t                                  sub = sub_ka(100, 10, 100,
                                                           0, 0);
    struct ua_republish_response              rr;
    const struct ua_data_change_notification *d;
    struct sf_got                            *g;

    for (unsigned i = 0; i < 40; i++)
        sf_item(CH, &tok, sub, sf_var(i), i, NULL);
    publish_n(&tok, CH, 2);
    sf_tick(100);                       /* 1: the initial values */
    for (unsigned i = 0; i < 40; i++)
        sf_change_d(sf_var(i), 1000.25 + i);
    sf_tick(100);                       /* 2: the 40 changes */
    while ((g = sf_next()) != NULL
           && g->p.notification_message.sequence_number != 2)
        ;
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(republish(sub, 2, &rr), UA_GOOD);
    d = rr.notification_message.notification_data[0].obj;
    ck_assert_int_eq(d->n_monitored_items, 40);
    for (int32_t k = 0; k < 40; k++) {
        ck_assert_uint_eq(d->monitored_items[k].client_handle,
                          sf_dcn(g)->monitored_items[k].client_handle);
        ck_assert(sf_num(d, k)
                  == 1000.25 + d->monitored_items[k].client_handle);
    }
}
END_TEST



/* ------------------------------------------------------------ priority */

START_TEST(test_priority)
{
    uint32_t       lo = sub_ka(100, 10, 100, 0, 10);
    uint32_t       hi = sub_ka(100, 10, 100, 0, 200);
    struct sf_got *g;

    sf_item(CH, &tok, lo, sf_var(1), 1, NULL);
    sf_item(CH, &tok, hi, sf_var(3), 2, NULL);
    sf_tick(100);                       /* both ready, no request */
    sf_publish(CH, &tok);
    g = sf_next();
    ck_assert_uint_eq(g->p.subscription_id, hi);
    sf_publish(CH, &tok);
    g = sf_next();
    ck_assert_uint_eq(g->p.subscription_id, lo);
}
END_TEST

/* --------------------------------------------------- Publish flood */

START_TEST(test_publish_flood)
{
    struct wk_subs *st;
    int             faults = 0;

    sub_ka(100, 100, 1000, 0, 0);
    sf_tick(100);                       /* its first keep-alive: late */
    publish_n(&tok, CH, 1);             /* takes it */
    ck_assert(is_keepalive(sf_next()));
    /* 10,000 requests, never acknowledged (docs/security.md case 78). */
    for (int i = 0; i < 10000; i++)
        sf_publish(CH, &tok);
    st = wk_subs_get(&fx.w);
    ck_assert_uint_eq(st->ss[0].qlen, 20);
    for (struct sf_got *g; (g = sf_next()) != NULL;) {
        ck_assert_uint_eq(g->result, UA_BAD_TOO_MANY_PUBLISH_REQUESTS);
        /* Always the oldest one waiting. */
        ck_assert_uint_eq(g->ref, (uint32_t)faults + 2);
        faults++;
    }
    ck_assert_uint_eq((uint32_t)faults + sf.extra_faults, 10000 - 20);
    ck_assert_uint_eq(sf.extra, sf.extra_faults);
    ck_assert(sf.extra_ordered);
    ck_assert_uint_eq(sf.extra_last_ref, 1 + 10000 - 20);
}
END_TEST

START_TEST(test_dead_connection_skipped)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sub_ka(100, 10, 100, 0, 0);
    struct sf_got   *g;

    sf_item(CH, &tok, sub, v, 1, NULL);
    publish_n(&tok, CH, 2);
    sf.dead[1] = true;                  /* the first one's channel went */
    sf_tick(100);
    g = sf_next();
    ck_assert_uint_eq(g->ref, 2);
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 1);
}
END_TEST

/* ---------------------------------------------------- publishing mode */

START_TEST(test_set_publishing_mode)
{
    struct ua_nodeid                       v = sf_var(1);
    uint32_t                               sub = sub_ka(100, 2, 100, 0, 0);
    struct ua_set_publishing_mode_request  req;
    struct ua_set_publishing_mode_response resp;
    uint32_t                               ids[2] = { sub, 4242 };

    sf_item(CH, &tok, sub, v, 1, NULL);
    memset(&req, 0, sizeof(req));
    req.publishing_enabled = false;
    req.n_subscription_ids = 2;
    req.subscription_ids = ids;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETPUBLISHINGMODEREQUEST,
                              &req, UA_TYPE_SETPUBLISHINGMODERESPONSE,
                              &resp), UA_GOOD);
    ck_assert_uint_eq(resp.results[0], UA_GOOD);
    ck_assert_uint_eq(resp.results[1], UA_BAD_SUBSCRIPTION_ID_INVALID);
    publish_n(&tok, CH, 3);
    sf_tick(100);
    ck_assert(is_keepalive(sf_next()));     /* data held back */
    sf_tick(100);
    sf_tick(100);
    ck_assert(is_keepalive(sf_next()));
    req.publishing_enabled = true;
    req.n_subscription_ids = 1;
    sf_call(CH, &tok, UA_TYPE_SETPUBLISHINGMODEREQUEST, &req,
            UA_TYPE_SETPUBLISHINGMODERESPONSE, &resp);
    sf_tick(100);
    ck_assert(sf_num(sf_dcn(sf_next()), 0) == 1.5);
}
END_TEST

/* ------------------------------------------------------------ transfer */

static ua_status
transfer(struct ua_sc *ch, const struct ua_nodeid *t, uint32_t *ids,
         int32_t n, bool initial, struct ua_transfer_subscriptions_response *r)
{
    struct ua_transfer_subscriptions_request req;

    memset(&req, 0, sizeof(req));
    req.n_subscription_ids = n;
    req.subscription_ids = ids;
    req.send_initial_values = initial;
    return sf_call(ch, t, UA_TYPE_TRANSFERSUBSCRIPTIONSREQUEST, &req,
                   UA_TYPE_TRANSFERSUBSCRIPTIONSRESPONSE, r);
}

START_TEST(test_transfer)
{
    struct ua_nodeid                          tok2 = fx_session(CH2);
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub = sub_ka(100, 10, 100, 0, 0);
    uint32_t                                  ids[3];
    struct ua_transfer_subscriptions_response r;
    const struct ua_status_change_notification *sc;
    struct sf_got                            *g;

    sf_item(CH, &tok, sub, v, 1, NULL);
    publish_n(&tok, CH, 2);
    sf_tick(100);
    g = sf_next();                      /* seq 1: the initial value */
    ck_assert_ptr_nonnull(sf_dcn(g));
    ids[0] = sub;
    ids[1] = 0x0FFFFFFFu;               /* nobody's */
    ids[2] = sub ^ (1u << 26);          /* another worker's */
    ck_assert_uint_eq(transfer(CH2, &tok2, ids, 3, true, &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code, UA_GOOD);
    ck_assert_int_eq(r.results[0].n_available_sequence_numbers, 1);
    ck_assert_uint_eq(r.results[1].status_code,
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(r.results[2].status_code,
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    /* The old session is told (its waiting Publish carries it). */
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->p.subscription_id, sub);
    sc = g->p.notification_message.notification_data[0].obj;
    ck_assert_uint_eq(sc->status, UA_GOOD_SUBSCRIPTION_TRANSFERRED);
    /* The new one gets the current values (sendInitialValues). */
    publish_n(&tok2, CH2, 1);
    sf_tick(100);
    g = sf_next();
    ck_assert_uint_eq(g->p.subscription_id, sub);
    ck_assert_uint_eq(g->p.notification_message.sequence_number, 2);
    ck_assert(sf_num(sf_dcn(g), 0) == 1.5);
    /* The old session has nothing any more. */
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_BAD_NO_SUBSCRIPTION);
}
END_TEST

/*
 * The server-wide budgets (shm/limits.h): with another worker holding all
 * but one subscription and one monitored item, the second of each is
 * refused here with the pool's codes; TransferSubscriptions within the
 * worker moves nothing; DeleteSubscriptions gives both back.
 */
START_TEST(test_budget_and_transfer)
{
    struct shm_limits                        *l = shm_limits_of(&fx.w.seg);
    uint32_t                                  ms, mi;
    unsigned                                  me = fx.w.slot, other = me + 1;
    struct ua_nodeid                          tok2 = fx_session(CH2);
    struct ua_create_subscription_response    cr;
    struct ua_monitored_item_create_result    res;
    struct sf_mi                              d = { .mode = -1, .ttr = -1 };
    struct ua_transfer_subscriptions_response r;
    struct ua_delete_subscriptions_request    dreq;
    struct ua_delete_subscriptions_response   dresp;
    uint32_t                                  sub;

    ms = fx.w.conf->max_subscriptions;
    mi = fx.w.conf->max_monitored_items;
    ck_assert_uint_ge(ms, 2);
    ck_assert_uint_ge(mi, 2);
    fx.w.budget = l;
    ck_assert_int_eq(shm_limits_take(l, other, SHM_LIM_SUBSCRIPTIONS, ms - 1,
                                     ms), 0);
    ck_assert_int_eq(shm_limits_take(l, other, SHM_LIM_MONITORED_ITEMS,
                                     mi - 1, mi), 0);
    sub = sub_ka(100, 10, 100, 0, 0);
    ck_assert_uint_eq(sf_create_sub_full(CH, &tok, 100, 100, 10, 0, 0, true,
                                         &cr), UA_BAD_TOO_MANY_SUBSCRIPTIONS);
    sf_item(CH, &tok, sub, sf_var(1), 1, NULL);
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub, sf_var(2), 2, &d, &res),
                      UA_GOOD);
    ck_assert_uint_eq(res.status_code, UA_BAD_TOO_MANY_MONITORED_ITEMS);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SUBSCRIPTIONS), 1);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_MONITORED_ITEMS), 1);
    /* Transfer to another session of this worker: counts unchanged. */
    ck_assert_uint_eq(transfer(CH2, &tok2, &sub, 1, false, &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code, UA_GOOD);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SUBSCRIPTIONS), 1);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_MONITORED_ITEMS), 1);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SUBSCRIPTIONS), ms);
    /* Deleted: its item and itself given back. */
    memset(&dreq, 0, sizeof(dreq));
    dreq.n_subscription_ids = 1;
    dreq.subscription_ids = &sub;
    ck_assert_uint_eq(sf_call(CH2, &tok2, UA_TYPE_DELETESUBSCRIPTIONSREQUEST,
                              &dreq, UA_TYPE_DELETESUBSCRIPTIONSRESPONSE,
                              &dresp), UA_GOOD);
    ck_assert_uint_eq(dresp.results[0], UA_GOOD);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SUBSCRIPTIONS), 0);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_MONITORED_ITEMS), 0);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SUBSCRIPTIONS), ms - 1);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_MONITORED_ITEMS), mi - 1);
    sub = sub_ka(100, 10, 100, 0, 0);
    ck_assert_uint_ne(sub, 0);
}
END_TEST

/* docs/security.md case 83: a subscription of another user identity. */
START_TEST(test_transfer_other_user)
{
    struct ua_nodeid                          tok2 = fx_session(CH2);
    uint32_t                                  sub = sub_ka(100, 10, 100, 0, 0);
    struct ua_transfer_subscriptions_response r;
    struct wk_sub                            *ps;

    ps = wk_sub_find(wk_subs_get(&fx.w), sub);
    ck_assert_ptr_nonnull(ps);
    ps->user = 77;                      /* as if a named user made it */
    ck_assert_uint_eq(transfer(CH2, &tok2, &sub, 1, false, &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code, UA_BAD_USER_ACCESS_DENIED);
    ps->user = WK_USER_ANONYMOUS;
    ck_assert_uint_eq(transfer(CH2, &tok2, &sub, 1, false, &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code, UA_GOOD);
}
END_TEST

static ua_status
close_session(struct ua_sc *ch, const struct ua_nodeid *t, bool del)
{
    struct ua_close_session_request  req;
    struct ua_close_session_response resp;

    memset(&req, 0, sizeof(req));
    req.delete_subscriptions = del;
    return sf_call(ch, t, UA_TYPE_CLOSESESSIONREQUEST, &req,
                   UA_TYPE_CLOSESESSIONRESPONSE, &resp);
}

START_TEST(test_close_session_keeps_or_deletes)
{
    struct ua_nodeid                          tok2;
    uint32_t                                  a, b;
    struct ua_transfer_subscriptions_response r;
    struct wk_sub_mem                         m;
    struct sf_got                            *g;

    a = sub_ka(100, 10, 100, 0, 0);
    sf_item(CH, &tok, a, sf_var(1), 1, NULL);
    publish_n(&tok, CH, 1);
    /* CloseSession(false): the waiting Publish is answered, the
     * subscription stays for a transfer. */
    ck_assert_uint_eq(close_session(CH, &tok, false), UA_GOOD);
    g = sf_next();
    ck_assert_uint_eq(g->result, UA_BAD_SESSION_CLOSED);
    tok2 = fx_session(CH2);
    ck_assert_uint_eq(transfer(CH2, &tok2, &a, 1, false, &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code, UA_GOOD);

    /* CloseSession(true): gone. */
    tok = fx_session(CH);
    b = sub_ka(100, 10, 100, 0, 0);
    sf_item(CH, &tok, b, sf_var(3), 1, NULL);
    ck_assert_uint_eq(close_session(CH, &tok, true), UA_GOOD);
    ck_assert_uint_eq(transfer(CH2, &tok2, &b, 1, false, &r), UA_GOOD);
    ck_assert_uint_eq(r.results[0].status_code,
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 1);
    ck_assert_uint_eq(m.items_used, 1);
}
END_TEST

START_TEST(test_orphan_expires)
{
    struct wk_sub_mem m;

    sub_ka(100, 10, 30, 0, 0);
    ck_assert_uint_eq(close_session(CH, &tok, false), UA_GOOD);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 1);
    for (int i = 0; i < 32; i++)
        sf_tick(100);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.subs_used, 0);
}
END_TEST

START_TEST(test_delete_answers_waiting_publishes)
{
    uint32_t                                 sub = sub_ka(100, 10, 100, 0, 0);
    uint32_t                                 ids[2];
    struct ua_delete_subscriptions_request   req;
    struct ua_delete_subscriptions_response  resp;
    struct sf_got                           *g;

    sf_tick(100);                       /* a keep-alive waits */
    publish_n(&tok, CH, 1);
    ck_assert(is_keepalive(sf_next()));
    publish_n(&tok, CH, 2);
    ids[0] = sub;
    ids[1] = sub;
    memset(&req, 0, sizeof(req));
    req.n_subscription_ids = 2;
    req.subscription_ids = ids;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_DELETESUBSCRIPTIONSREQUEST,
                              &req, UA_TYPE_DELETESUBSCRIPTIONSRESPONSE,
                              &resp), UA_GOOD);
    ck_assert_uint_eq(resp.results[0], UA_GOOD);
    ck_assert_uint_eq(resp.results[1], UA_BAD_SUBSCRIPTION_ID_INVALID);
    for (int i = 0; i < 2; i++) {
        g = sf_next();
        ck_assert_ptr_nonnull(g);
        ck_assert_uint_eq(g->result, UA_BAD_NO_SUBSCRIPTION);
    }
}
END_TEST

START_TEST(test_other_session_cannot_touch)
{
    struct ua_nodeid                        tok2 = fx_session(CH2);
    uint32_t                                sub = sub_ka(100, 10, 100, 0, 0);
    struct ua_delete_subscriptions_request  req;
    struct ua_delete_subscriptions_response resp;
    struct ua_republish_response            rr;
    struct ua_republish_request             rq;

    memset(&req, 0, sizeof(req));
    req.n_subscription_ids = 1;
    req.subscription_ids = &sub;
    sf_call(CH2, &tok2, UA_TYPE_DELETESUBSCRIPTIONSREQUEST, &req,
            UA_TYPE_DELETESUBSCRIPTIONSRESPONSE, &resp);
    ck_assert_uint_eq(resp.results[0], UA_BAD_SUBSCRIPTION_ID_INVALID);
    memset(&rq, 0, sizeof(rq));
    rq.subscription_id = sub;
    rq.retransmit_sequence_number = 1;
    ck_assert_uint_eq(sf_call(CH2, &tok2, UA_TYPE_REPUBLISHREQUEST, &rq,
                              UA_TYPE_REPUBLISHRESPONSE, &rr),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    /* Publish of a session without subscriptions. */
    ck_assert_uint_eq(sf_publish(CH2, &tok2), UA_BAD_NO_SUBSCRIPTION);
}
END_TEST

/* ------------------------------------------------------------ cost */

START_TEST(test_idle_subscriptions_cost_one_wakeup_per_keepalive)
{
    unsigned handled = 0;

    for (int i = 0; i < 20; i++)
        sub_ka(100, 10, 100, 0, 0);
    publish_n(&tok, CH, 20);
    sf_tick(100);                       /* 20 first keep-alives */
    ck_assert_uint_eq(sf_unseen(), 20);
    while (sf_next() != NULL)
        publish_n(&tok, CH, 1);
    /* 10 s: 100 expiries each, handled once per keep-alive (10); every
     * answer is replaced by a new request, as a client does. */
    for (int i = 0; i < 100; i++) {
        handled += sf_tick(100);
        for (struct sf_got *g; (g = sf_next()) != NULL;) {
            ck_assert(is_keepalive(g));
            publish_n(&tok, CH, 1);
        }
    }
    ck_assert_uint_le(handled, 20 * 11);
    ck_assert_uint_ge(handled, 20 * 9);
}
END_TEST

/* ------------------------------------------------- the promise to wake */

/* The least next tick over the periods of subs[0..n). */
static uint64_t
least_next_tick(struct wk_subs *st, const uint32_t *subs, int n)
{
    uint64_t now = fx.w.now_ms, least = UINT64_MAX;

    for (int i = 0; i < n; i++) {
        uint64_t p = wk_sub_find(st, subs[i])->period;

        if ((now / p + 1) * p < least)
            least = (now / p + 1) * p;
    }
    return least;
}

/*
 * wk_sub_wake_by(): the timer's due time when no subscription ticks
 * before it, else 0; 0 without a timer, and 0 once more distinct
 * intervals are in use than it tracks (WK_SUB_PERIODS), until one goes.
 */
START_TEST(test_wake_by_promise)
{
    struct ua_delete_subscriptions_request  dreq;
    struct ua_delete_subscriptions_response dresp;
    struct wk_subs                         *st;
    uint32_t                                subs[WK_SUB_PERIODS + 1];
    uint64_t                                least;

    subs[0] = sub_ka(100, 10, 100, 0, 0);
    st = wk_subs_get(&fx.w);
    ck_assert_ptr_nonnull(st);
    st->timer_set = false;
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), 0);     /* no timer */
    least = least_next_tick(st, subs, 1);
    st->timer_set = true;
    st->timer_due = least;
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), least);
    st->timer_due = least + 1;                          /* a tick before */
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), 0);
    st->timer_due = fx.w.now_ms;                        /* due already */
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), 0);
    /* Up to WK_SUB_PERIODS distinct intervals: the least next tick. */
    for (int i = 1; i < WK_SUB_PERIODS; i++)
        subs[i] = sub_ka(100 + 37 * i, 10, 100, 0, 0);
    least = least_next_tick(st, subs, WK_SUB_PERIODS);
    st->timer_due = least;
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), least);
    /* One more: untracked, so no promise, even at the least next tick. */
    subs[WK_SUB_PERIODS] = sub_ka(100 + 37 * WK_SUB_PERIODS, 10, 100, 0, 0);
    least = least_next_tick(st, subs, WK_SUB_PERIODS + 1);
    st->timer_due = least;
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), 0);
    /* Deleted again: tracked intervals only, a promise again. */
    memset(&dreq, 0, sizeof(dreq));
    dreq.n_subscription_ids = 1;
    dreq.subscription_ids = &subs[WK_SUB_PERIODS];
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_DELETESUBSCRIPTIONSREQUEST,
                              &dreq, UA_TYPE_DELETESUBSCRIPTIONSRESPONSE,
                              &dresp), UA_GOOD);
    ck_assert_uint_eq(dresp.results[0], UA_GOOD);
    least = least_next_tick(st, subs, WK_SUB_PERIODS);
    st->timer_due = least;
    ck_assert_uint_eq(wk_sub_wake_by(fx.w.subs), least);
    st->timer_set = false;
}
END_TEST

/* ------------------------------------------- the retransmission store */

static void tweak_many(struct shm_config *c);
static void tweak_sized(struct shm_config *c);

static void
tweak_store(struct shm_config *c)
{
    c->max_subscriptions = 4000;
    c->retransmission_store_bytes = 1u << 20;
}

/*
 * limits.retransmission_store_bytes sizes the store whatever
 * max_subscriptions is (a ring that cycles through all of it: every byte
 * of it becomes resident and every message's lines are cold, so it must
 * not grow with the subscriptions a worker may hold); 0 sizes it by them
 * as before (max_subscriptions x max_retransmission_queue x 1 KiB).
 */
START_TEST(test_store_apart_from_subscriptions)
{
    struct wk_subs *st = wk_subs_get(&fx.w);

    ck_assert_uint_eq(fx.w.conf->retransmission_store_bytes, 10240000);
    ck_assert_uint_eq(st->rstore.cap, 10240000);
    sf_teardown();
    sf_setup_with(tweak_store);
    st = wk_subs_get(&fx.w);
    ck_assert_uint_eq(st->rstore.cap, 1u << 20);
    sf_teardown();
    sf_setup_with(tweak_many);
    st = wk_subs_get(&fx.w);
    ck_assert_uint_eq(st->rstore.cap, 10240000);
    sf_teardown();
    sf_setup_with(tweak_sized);
    st = wk_subs_get(&fx.w);
    ck_assert_uint_eq(st->rstore.cap, 100u * st->lim.max_retx * 16 * 64);
    tok = fx_session(CH);
}
END_TEST

/* ------------------------------------------- moved subscriptions */

#define MOVED_N 300

static void
tweak_many(struct shm_config *c)
{
    c->max_subscriptions = MOVED_N + 8;
    c->max_subscriptions_per_session = MOVED_N + 8;
}

static void
tweak_sized(struct shm_config *c)
{
    c->max_subscriptions = 100;
    c->retransmission_store_bytes = 0;
}

static void
setup_many(void)
{
    sf_setup_with(tweak_many);
    tok = fx_session(CH);
}

/* An id another worker gave: slot 9 (the fixture's worker is not), or
 * our own slot with an index beyond the pool (a worker of the same slot
 * before a restart). */
static uint32_t
moved_id(uint32_t i)
{
    if (i % 10 == 0)
        return ((fx.w.slot & 63u) << 26) | (1u << 25) | (i + 1);
    return (9u << 26) | (i * 977u + 1);
}

/*
 * Subscriptions that came from another worker are found through a hash
 * table (each Publish acknowledgement looks one up: a scan of the pool
 * before), through deletions in any order (the table's backward shift),
 * and an id held twice (a duplicate in a move, refused by
 * wk_sub_roam_unpack_sub) leaves the first one in place.
 */
START_TEST(test_moved_found_by_table)
{
    struct wk_subs *st = wk_subs_get(&fx.w);
    struct wk_sub  *subs[MOVED_N], *dup;
    bool            gone[MOVED_N] = { false };
    struct wk_session *s = wk_session_find_by_token(&fx.w, &tok);

    ck_assert_uint_ne(fx.w.slot & 63u, 9);
    ck_assert_uint_ge(st->moved_cap, 2 * st->lim.max_subs);
    for (uint32_t i = 0; i < MOVED_N; i++) {
        subs[i] = wk_sub_find(st, sub_ka(100, 10, 100, 0, 0));
        ck_assert_ptr_nonnull(subs[i]);
        ck_assert_ptr_null(wk_sub_find(st, moved_id(i)));
        subs[i]->id = moved_id(i);
        wk_sub_moved_add(st, subs[i]);
    }
    ck_assert_uint_eq(st->nmoved, MOVED_N);
    for (uint32_t i = 0; i < MOVED_N; i++) {
        ck_assert(subs[i]->moved);
        ck_assert_ptr_eq(wk_sub_find(st, moved_id(i)), subs[i]);
        ck_assert_ptr_eq(wk_sub_of_session(st, s, moved_id(i)), subs[i]);
    }
    ck_assert_ptr_null(wk_sub_find(st, (9u << 26) | 2));
    ck_assert_ptr_null(wk_sub_find(st, (9u << 26) | (MOVED_N * 977u + 1)));

    /* Deleted in a stride: every other one still found each time. */
    for (uint32_t k = 0; k < MOVED_N; k++) {
        uint32_t d = (k * 7u) % MOVED_N;

        ck_assert(!gone[d]);
        wk_sub_delete(st, subs[d]);
        gone[d] = true;
        ck_assert_uint_eq(st->nmoved, MOVED_N - k - 1);
        for (uint32_t i = 0; i < MOVED_N; i++)
            if (gone[i])
                ck_assert_ptr_null(wk_sub_find(st, moved_id(i)));
            else
                ck_assert_ptr_eq(wk_sub_find(st, moved_id(i)), subs[i]);
    }

    /* An id twice: the later one goes, the first stays. */
    subs[0] = wk_sub_find(st, sub_ka(100, 10, 100, 0, 0));
    dup = wk_sub_find(st, sub_ka(100, 10, 100, 0, 0));
    subs[0]->id = dup->id = moved_id(3);
    wk_sub_moved_add(st, subs[0]);
    wk_sub_moved_add(st, dup);
    ck_assert_ptr_eq(wk_sub_find(st, moved_id(3)), subs[0]);
    wk_sub_delete(st, dup);
    ck_assert_ptr_eq(wk_sub_find(st, moved_id(3)), subs[0]);
    ck_assert_uint_eq(st->nmoved, 1);
}
END_TEST

static Suite *
sub_suite(void)
{
    Suite *s = suite_create("Subscriptions");
    TCase *tc;

    tc = tcase_create("publishing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_revision);
    tcase_add_test(tc, test_pools_line_aligned);
    tcase_add_test(tc, test_store_apart_from_subscriptions);
    tcase_add_test(tc, test_first_keepalive_then_count);
    tcase_add_test(tc, test_wake_by_promise);
    tcase_add_test(tc, test_sequence_numbers);
    tcase_add_test(tc, test_late_publish_answered_at_once);
    tcase_add_test(tc, test_lifetime_expiry);
    tcase_add_test(tc, test_max_notifications_and_more);
    tcase_add_test(tc, test_more_notifications_without_requests);
    tcase_add_test(tc, test_priority);
    tcase_add_test(tc, test_set_publishing_mode);
    tcase_add_test(tc, test_idle_subscriptions_cost_one_wakeup_per_keepalive);
    suite_add_tcase(s, tc);

    tc = tcase_create("requests");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_republish_and_acks);
    tcase_add_test(tc, test_republish_long_message);
    tcase_add_test(tc, test_publish_flood);
    tcase_add_test(tc, test_dead_connection_skipped);
    tcase_add_test(tc, test_delete_answers_waiting_publishes);
    tcase_add_test(tc, test_other_session_cannot_touch);
    suite_add_tcase(s, tc);

    tc = tcase_create("sessions");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_transfer);
    tcase_add_test(tc, test_budget_and_transfer);
    tcase_add_test(tc, test_transfer_other_user);
    tcase_add_test(tc, test_close_session_keeps_or_deletes);
    tcase_add_test(tc, test_orphan_expires);
    suite_add_tcase(s, tc);

    tc = tcase_create("moved");
    tcase_add_checked_fixture(tc, setup_many, teardown);
    tcase_add_test(tc, test_moved_found_by_table);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(sub_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
