/*
 * tests/unit/worker/check_monitem.c: worker/monitem.c through the services
 * and the fan-out hooks, on the real address space with a clock of our
 * own: queue semantics (queueSize 1, discardOldest true / false and the
 * Overflow bit, revision), sampling intervals, DataChangeFilter (triggers,
 * absolute and percent deadbands with EURange, NaN, arrays),
 * timestampsToReturn, stale records and the "no lost update" rule,
 * overflow reports, interest bits, monitoring modes and triggering,
 * attributes other than Value, IndexRange, memory per item.
 */
#include "sub_fixture.h"

#include <stdatomic.h>

#include "worker/sub_int.h"

#define CH (&fx.ch[0])

static struct ua_nodeid tok;

/* Every change its own sample, 50 ms publishing. */
static void
tw_fast(struct shm_config *c)
{
    c->min_sampling_interval_ms = 0;
    c->min_publishing_interval_ms = 50;
}

static void
setup(void)
{
    sf_setup_with(tw_fast);
    tok = fx_session(CH);
}

static void
teardown(void)
{
    sf_teardown();
}

/* Queue a Publish, run one publishing interval; the response. */
static struct sf_got *
pub_tick(uint32_t ms)
{
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    ck_assert(sf.pending);
    sf_tick(ms);
    return sf_next();
}

/* The data of the next message (after one interval), asserting one. */
static const struct ua_data_change_notification *
data_tick(uint32_t ms)
{
    struct sf_got                            *g = pub_tick(ms);
    const struct ua_data_change_notification *d;

    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->result, UA_GOOD);
    d = sf_dcn(g);
    ck_assert_ptr_nonnull(d);
    return d;
}

static bool
overflow(const struct ua_data_change_notification *d, int32_t k)
{
    const struct ua_datavalue *v = &d->monitored_items[k].value;

    return (v->mask & UA_DV_STATUS) && (v->status & 0xFFFF) == 0x0480;
}

/* ------------------------------------------------------------ queues */

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
    ck_assert_uint_eq(r.revised_queue_size, 100);
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

/* ------------------------------------------------------------ sampling */

START_TEST(test_sampling_latest_per_interval)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub = sf_create_sub(CH, &tok,
                                                                  1000);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10,
                                                    .sampling = 100 };
    const struct ua_data_change_notification *d;

    sf_item(CH, &tok, sub, v, 1, &p);
    /* t=0: the initial value opens an interval; 2 and 3 fall into it
     * and replace each other's sample; t=150: a new interval. */
    fx.w.now_ms += 10;
    sf_change_d(v, 2);
    fx.w.now_ms += 10;
    sf_change_d(v, 3);
    fx.w.now_ms += 130;
    sf_change_d(v, 4);
    fx.w.now_ms += 10;
    sf_change_d(v, 5);
    fx.w.now_ms -= 160;
    d = data_tick(1000);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert(sf_num(d, 0) == 3 && sf_num(d, 1) == 5);
    ck_assert(!overflow(d, 0) && !overflow(d, 1));
}
END_TEST

/* A value replaced inside its sampling interval keeps the Overflow bit
 * the one it replaces carried (the fan-out's inline replacement). */
START_TEST(test_sampling_replace_keeps_overflow)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub = sf_create_sub(CH, &tok,
                                                                  1000);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 2,
                                                    .discard_oldest = false,
                                                    .sampling = 100 };
    const struct ua_data_change_notification *d;

    sf_item(CH, &tok, sub, v, 1, &p);   /* t=0: the initial value */
    fx.w.now_ms += 100;
    sf_change_d(v, 2);                  /* t=100: queue full (2) */
    fx.w.now_ms += 100;
    sf_change_d(v, 3);                  /* t=200: replaces 2, with the bit */
    fx.w.now_ms += 50;
    sf_change_d(v, 4);                  /* t=250: same interval: replaces 3 */
    fx.w.now_ms -= 250;
    d = data_tick(1000);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert(sf_num(d, 1) == 4);
    ck_assert(!overflow(d, 0) && overflow(d, 1));
}
END_TEST

/* A value into an empty queue inside the interval its predecessor (sent
 * already) opened is queued and does not start an interval of its own:
 * the next change after that interval is a new sample. */
START_TEST(test_sampling_empty_queue_keeps_interval)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub = sf_create_sub(CH, &tok,
                                                                  100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10,
                                                    .sampling = 500 };
    const struct ua_data_change_notification *d;

    sf_item(CH, &tok, sub, v, 1, &p);   /* t=0: opens [0, 500) */
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 1);
    fx.w.now_ms += 50;                  /* t=150, the queue is empty */
    fx.w.now_dt += 1;
    sf_change_d(v, 2);
    fx.w.now_ms += 400;                 /* t=550: the next interval */
    fx.w.now_dt += 1;
    sf_change_d(v, 3);
    fx.w.now_ms -= 450;
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert(sf_num(d, 0) == 2 && sf_num(d, 1) == 3);
}
END_TEST

START_TEST(test_sampling_revision)
{
    uint32_t                               sub = sf_create_sub(CH, &tok, 250);
    struct sf_mi                           p = { .mode = -1, .ttr = -1 };
    struct ua_monitored_item_create_result r;

    p.sampling = -1;                    /* the publishing interval */
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert(r.revised_sampling_interval == 250);
    p.sampling = NAN;                   /* docs/security.md case 82 */
    sf_item_res(CH, &tok, sub, sf_var(1), 2, &p, &r);
    ck_assert(r.revised_sampling_interval == 250);
    p.sampling = 1e300;
    sf_item_res(CH, &tok, sub, sf_var(1), 3, &p, &r);
    ck_assert(r.revised_sampling_interval == 86400000.0);
    p.sampling = 33.3;
    sf_item_res(CH, &tok, sub, sf_var(1), 4, &p, &r);
    ck_assert(r.revised_sampling_interval >= 33.3);
}
END_TEST

static void
tw_min_sampling(struct shm_config *c)
{
    c->min_sampling_interval_ms = 75;
}

START_TEST(test_sampling_configured_minimum)
{
    uint32_t                               sub;
    struct sf_mi                           p = { .mode = -1, .ttr = -1 };
    struct ua_monitored_item_create_result r;

    sf_teardown();
    sf_setup_with(tw_min_sampling);
    tok = fx_session(CH);
    sub = sf_create_sub(CH, &tok, 100);
    p.sampling = 0;                     /* fastest: the configured one */
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert(r.revised_sampling_interval == 75);
}
END_TEST

/* ------------------------------------------------------------ filters */

START_TEST(test_trigger_status_value_default)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    const struct ua_data_change_notification *d;
    struct sf_got                            *g;

    sf_item(CH, &tok, sub, v, 1, NULL);
    data_tick(100);
    sf_change_d(v, 1.5);                /* same value, newer timestamp */
    g = pub_tick(100);
    ck_assert_ptr_null(g);              /* nothing due: keep-alive later */
    sf_change_d(v, 2.5);
    sf_tick(100);
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    d = sf_dcn(g);
    ck_assert(sf_num(d, 0) == 2.5);
}
END_TEST

START_TEST(test_trigger_status_only)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1 };
    const struct ua_data_change_notification *d;
    uint8_t                                   b[32];
    double                                    x = 7;
    uint32_t                                  l = sf_variant(UA_BT_DOUBLE, &x,
                                                             b, sizeof(b));

    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUS, 0, 0);
    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);
    sf_change_d(v, 5);                  /* value only: not reported */
    ck_assert_ptr_null(pub_tick(100));
    sf_change_raw(v, b, l, UA_BAD_NO_COMMUNICATION, fx.w.now_dt,
                  fx.w.now_dt);
    sf_tick(100);
    d = sf_dcn(sf_next());
    ck_assert_uint_eq(d->monitored_items[0].value.status,
                      UA_BAD_NO_COMMUNICATION);
}
END_TEST

START_TEST(test_trigger_status_value_timestamp)
{
    struct ua_nodeid                          v = sf_var(1), w2 = sf_var(3);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1 };
    const struct ua_data_change_notification *d;

    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUETIMESTAMP, 0, 0);
    sf_item(CH, &tok, sub, v, 1, &p);
    sf_item(CH, &tok, sub, w2, 2, NULL);        /* StatusValue */
    data_tick(100);
    fx.w.now_dt += 10;
    sf_change_d(v, 1.5);                /* same value, new source ts */
    sf_change_d(w2, 3.5);               /* same value: filtered */
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 1);
    ck_assert_uint_eq(d->monitored_items[0].client_handle, 1);
}
END_TEST

START_TEST(test_deadband_absolute)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10 };
    const struct ua_data_change_notification *d;
    static const double in[] = { 2.0, 2.4, 2.6, 1.6, 1.59, 3.0, NAN, NAN,
                                 5.0 };

    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_ABSOLUTE, 1.0);
    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);                     /* 1.5 */
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
        sf_change_d(v, in[i]);
    /* 1.5 -> 2.0 no; 2.4 no; 2.6 yes (1.1); 1.6 no (1.0 is not > 1);
     * 1.59 yes; 3.0 yes; NaN yes (enters NaN); NaN no; 5.0 yes. */
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 5);
    ck_assert(sf_num(d, 0) == 2.6);
    ck_assert(sf_num(d, 1) == 1.59);
    ck_assert(sf_num(d, 2) == 3.0);
    ck_assert(isnan(sf_num(d, 3)));
    ck_assert(sf_num(d, 4) == 5.0);
}
END_TEST

START_TEST(test_deadband_status_change_passes)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10 };
    const struct ua_data_change_notification *d;
    uint8_t                                   b[32];
    double                                    x = 1.6;
    uint32_t                                  l = sf_variant(UA_BT_DOUBLE, &x,
                                                             b, sizeof(b));

    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_ABSOLUTE, 10.0);
    sf_item(CH, &tok, sub, v, 1, &p);
    data_tick(100);
    sf_change_raw(v, b, l, UA_UNCERTAIN_LAST_USABLE_VALUE, fx.w.now_dt,
                  fx.w.now_dt);
    d = data_tick(100);                 /* deadband ignored: status moved */
    ck_assert_int_eq(d->n_monitored_items, 1);
}
END_TEST

START_TEST(test_deadband_int_and_array)
{
    struct ua_nodeid                          v = sf_var(0);   /* Int32 */
    struct ua_nodeid                          a =
        fx_ns1("Demo.Static.Array.Double");
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10 };
    const struct ua_data_change_notification *d;
    struct ua_variant                         var;
    double                                    arr[3] = { 1, 2, 3 };
    uint8_t                                   b[128];
    size_t                                    l;

    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_ABSOLUTE, 5);
    sf_item(CH, &tok, sub, v, 1, &p);
    sf_item(CH, &tok, sub, a, 2, &p);
    data_tick(100);
    sf_change_i(v, 5);                  /* 0 -> 5: not > 5 */
    sf_change_i(v, 6);                  /* yes */
    ua_variant_set_array(&var, arr, 3, UA_BT_DOUBLE);
    ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], b,
                                sizeof(b), &l), UA_GOOD);
    sf_change_raw(a, b, (uint32_t)l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
    arr[1] = 6.5;                       /* one element moves by 4.5: no */
    ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], b,
                                sizeof(b), &l), UA_GOOD);
    sf_change_raw(a, b, (uint32_t)l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
    arr[2] = 9.5;                       /* 3 -> 9.5: yes, the whole array */
    ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], b,
                                sizeof(b), &l), UA_GOOD);
    sf_change_raw(a, b, (uint32_t)l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
    ua_variant_set_array(&var, arr, 2, UA_BT_DOUBLE);   /* size: yes */
    ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], b,
                                sizeof(b), &l), UA_GOOD);
    sf_change_raw(a, b, (uint32_t)l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
    d = data_tick(100);
    /* v0: 6; the array: [1,2,3] (first: the initial was something else),
     * [1,6.5,9.5], [1,6.5]. */
    ck_assert_int_eq(d->n_monitored_items, 4);
    for (int32_t k = 0; k < d->n_monitored_items; k++)
        if (d->monitored_items[k].client_handle == 1)
            ck_assert(sf_num(d, k) == 6);
}
END_TEST

/* Give AnalogItemType's EURange property a Range value. */
static void
set_eurange(double lo, double hi)
{
    struct ua_range   r = { lo, hi };
    struct ua_extobj  x;
    struct ua_variant v;
    uint8_t           b[64];
    size_t            l;
    struct shm_value  meta;

    memset(&x, 0, sizeof(x));
    x.type_id = ua_nodeid_num(0, UA_NS0ID_RANGE_ENCODING_DEFAULTBINARY);
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[UA_TYPE_RANGE];
    x.obj = &r;
    ua_variant_set_scalar(&v, &x, UA_BT_EXTENSIONOBJECT);
    ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], b, sizeof(b),
                                &l), UA_GOOD);
    memset(&meta, 0, sizeof(meta));
    meta.flags = SHM_VF_SERVER_TS;
    meta.server_ts = fx.w.now_dt;
    ck_assert_int_eq(shm_value_write(&fx.w.vals,
                                     sf_slot(fx_ns0(
                                         UA_NS0ID_ANALOGITEMTYPE_EURANGE)),
                                     b, (uint32_t)l, &meta), 0);
}

START_TEST(test_deadband_percent_eurange)
{
    struct ua_nodeid                          n =
        fx_ns0(UA_NS0ID_ANALOGITEMTYPE);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10 };
    const struct ua_data_change_notification *d;

    set_eurange(0, 200);                /* 10 % = 20 */
    sf_change_d(n, 100);
    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_PERCENT, 10);
    sf_item(CH, &tok, sub, n, 1, &p);
    data_tick(100);                     /* 100 */
    sf_change_d(n, 119);                /* no */
    sf_change_d(n, 121);                /* yes */
    sf_change_d(n, 101.5);              /* no: 19.5 */
    sf_change_d(n, 100.5);              /* yes: 20.5 */
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert(sf_num(d, 0) == 121 && sf_num(d, 1) == 100.5);
}
END_TEST

START_TEST(test_filter_errors)
{
    uint32_t                               sub = sf_create_sub(CH, &tok, 100);
    struct sf_mi                           p = { .mode = -1, .ttr = -1 };
    struct ua_monitored_item_create_result r;
    struct ua_event_filter                 ef;

    /* Percent without an EURange (Part 8 §6.2). */
    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_PERCENT, 10);
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_DEADBAND_FILTER_INVALID);
    /* Percent past 100, with an EURange. */
    set_eurange(0, 1);
    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_PERCENT, 100.5);
    sf_item_res(CH, &tok, sub, fx_ns0(UA_NS0ID_ANALOGITEMTYPE), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_DEADBAND_FILTER_INVALID);
    /* Unknown deadband type, negative value. */
    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE, 3, 1);
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_DEADBAND_FILTER_INVALID);
    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_ABSOLUTE, -1);
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_DEADBAND_FILTER_INVALID);
    /* A deadband on a String, a filter on DisplayName, a bad trigger. */
    p.filter = sf_filter(UA_DATACHANGETRIGGER_STATUSVALUE,
                         UA_DEADBANDTYPE_ABSOLUTE, 1);
    sf_item_res(CH, &tok, sub, fx_ns1("Demo.Static.Scalar.String"), 1, &p,
                &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_FILTER_NOT_ALLOWED);
    p.attr = UA_ATTR_DISPLAYNAME;
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_FILTER_NOT_ALLOWED);
    p.attr = 0;
    p.filter = sf_filter(7, 0, 0);
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_MONITORED_ITEM_FILTER_INVALID);
    /* An EventFilter on a Value. */
    memset(&ef, 0, sizeof(ef));
    ef.n_select_clauses = 0;
    ef.where_clause.n_elements = 0;
    memset(&p.filter, 0, sizeof(p.filter));
    p.filter.type_id = ua_nodeid_num(0,
        UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
    p.filter.encoding = UA_EO_DECODED;
    p.filter.type = &ua_types[UA_TYPE_EVENTFILTER];
    p.filter.obj = &ef;
    sf_item_res(CH, &tok, sub, sf_var(1), 1, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_FILTER_NOT_ALLOWED);
}
END_TEST

/* ------------------------------------------------------- timestamps */

START_TEST(test_timestamps_to_return)
{
    static const int32_t ttr[4] = {
        UA_TIMESTAMPSTORETURN_SOURCE, UA_TIMESTAMPSTORETURN_SERVER,
        UA_TIMESTAMPSTORETURN_BOTH, UA_TIMESTAMPSTORETURN_NEITHER
    };
    struct ua_nodeid                          v = sf_var(1);
    const struct ua_data_change_notification *d;
    uint32_t                                  sub;
    int64_t                                   t;

    for (int i = 0; i < 4; i++) {
        struct sf_mi p = { .mode = -1, .ttr = ttr[i] };

        sub = sf_create_sub(CH, &tok, 100);
        sf_item(CH, &tok, sub, v, (uint32_t)i, &p);
    }
    for (int i = 0; i < 4; i++)         /* the 4 initial values */
        sf_publish(CH, &tok);
    sf_tick(100);
    ck_assert_uint_eq(sf_unseen(), 4);
    while (sf_unseen() > 0)
        sf_next();
    fx.w.now_dt += 1000;
    t = fx.w.now_dt;
    sf_change_raw(v, (const uint8_t[]){ UA_BT_DOUBLE, 0, 0, 0, 0, 0, 0,
                                        0xF0, 0x3F }, 9, UA_GOOD, t - 5, t);
    for (int i = 0; i < 4; i++)
        sf_publish(CH, &tok);
    sf_tick(100);
    ck_assert_uint_eq(sf_unseen(), 4);
    for (int i = 0; i < 4; i++) {
        const struct ua_datavalue *dv;
        uint32_t                   h;

        d = sf_dcn(sf_next());
        ck_assert_int_eq(d->n_monitored_items, 1);
        h = d->monitored_items[0].client_handle;
        dv = &d->monitored_items[0].value;
        ck_assert(sf_num(d, 0) == 1.0);
        ck_assert_int_eq(!!(dv->mask & UA_DV_SOURCE_TS),
                         ttr[h] == UA_TIMESTAMPSTORETURN_SOURCE
                         || ttr[h] == UA_TIMESTAMPSTORETURN_BOTH);
        ck_assert_int_eq(!!(dv->mask & UA_DV_SERVER_TS),
                         ttr[h] == UA_TIMESTAMPSTORETURN_SERVER
                         || ttr[h] == UA_TIMESTAMPSTORETURN_BOTH);
        if (dv->mask & UA_DV_SOURCE_TS)
            ck_assert(dv->source_ts == t - 5);
        if (dv->mask & UA_DV_SERVER_TS)
            ck_assert(dv->server_ts == t);
    }
}
END_TEST

/* --------------------------------------------- no lost update, stale */

START_TEST(test_interest_bit_before_initial_read)
{
    struct ua_nodeid v = sf_var(2);
    uint32_t         slot = sf_slot(v), sub = sf_create_sub(CH, &tok, 100);
    uint32_t         a, b;
    struct ua_delete_monitored_items_request  req;
    struct ua_delete_monitored_items_response resp;

    ck_assert_uint_eq(shm_interest_get(&fx.w.vals, slot) & 1, 0);
    a = sf_item(CH, &tok, sub, v, 1, NULL);
    ck_assert_uint_eq(shm_interest_get(&fx.w.vals, slot) & 1, 1);
    b = sf_item(CH, &tok, sub, v, 2, NULL);
    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.n_monitored_item_ids = 1;
    req.monitored_item_ids = &a;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_DELETEMONITOREDITEMSREQUEST,
                              &req, UA_TYPE_DELETEMONITOREDITEMSRESPONSE,
                              &resp), UA_GOOD);
    ck_assert_uint_eq(resp.results[0], UA_GOOD);
    /* One item left on the slot: still interested. */
    ck_assert_uint_eq(shm_interest_get(&fx.w.vals, slot) & 1, 1);
    req.monitored_item_ids = &b;
    sf_call(CH, &tok, UA_TYPE_DELETEMONITOREDITEMSREQUEST, &req,
            UA_TYPE_DELETEMONITOREDITEMSRESPONSE, &resp);
    ck_assert_uint_eq(shm_interest_get(&fx.w.vals, slot) & 1, 0);
    /* Deleting again: the id is gone. */
    sf_call(CH, &tok, UA_TYPE_DELETEMONITOREDITEMSREQUEST, &req,
            UA_TYPE_DELETEMONITOREDITEMSRESPONSE, &resp);
    ck_assert_uint_eq(resp.results[0], UA_BAD_MONITORED_ITEM_ID_INVALID);
}
END_TEST

/* Delete one item by id through the service. */
static void
del_item(uint32_t sub, uint32_t id)
{
    struct ua_delete_monitored_items_request  req;
    struct ua_delete_monitored_items_response resp;

    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.n_monitored_item_ids = 1;
    req.monitored_item_ids = &id;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_DELETEMONITOREDITEMSREQUEST,
                              &req, UA_TYPE_DELETEMONITOREDITEMSRESPONSE,
                              &resp), UA_GOOD);
    ck_assert_uint_eq(resp.results[0], UA_GOOD);
}

/* A change reaches exactly the items in live[] (by client handle). */
static void
slot_items_are(struct ua_nodeid v, double d, const bool *live, uint32_t n)
{
    const struct ua_data_change_notification *dcn;
    uint32_t                                  want = 0;
    bool                                      seen[128];

    memset(seen, 0, sizeof(seen));
    for (uint32_t h = 0; h < n; h++)
        want += live[h];
    sf_change_d(v, d);
    dcn = data_tick(100);
    ck_assert_int_eq(dcn->n_monitored_items, (int32_t)want);
    for (int32_t k = 0; k < dcn->n_monitored_items; k++) {
        uint32_t h = dcn->monitored_items[k].client_handle;

        ck_assert_uint_lt(h, n);
        ck_assert_msg(live[h] && !seen[h], "item %u", h);
        seen[h] = true;
        ck_assert(sf_num(dcn, k) == d);
    }
}

/*
 * A slot's items are a list of chunks (sub_int.h), walked by the fan-out
 * in batches (monitem_queue.c): items added and deleted in any order,
 * more of them than a batch, leave exactly the live ones on the slot,
 * each notified once.
 */
START_TEST(test_slot_list_add_delete_any_order)
{
    struct ua_nodeid v = sf_var(3);
    uint32_t         slot = sf_slot(v), sub = sf_create_sub(CH, &tok, 100);
    static const uint32_t gone[] = { 79, 0, 40, 41, 31, 32, 33, 64, 10,
                                     63, 1, 78 };
    uint32_t         id[128];
    bool             live[128];

    memset(live, 0, sizeof(live));
    for (uint32_t h = 0; h < 80; h++) {
        id[h] = sf_item(CH, &tok, sub, v, h, NULL);
        live[h] = true;
    }
    data_tick(100);                 /* the initial values */
    slot_items_are(v, 1.0, live, 128);
    for (size_t k = 0; k < sizeof(gone) / sizeof(gone[0]); k++) {
        del_item(sub, id[gone[k]]);
        live[gone[k]] = false;
    }
    slot_items_are(v, 2.0, live, 128);
    for (uint32_t h = 100; h < 110; h++) {
        id[h] = sf_item(CH, &tok, sub, v, h, NULL);
        live[h] = true;
    }
    del_item(sub, id[105]);
    live[105] = false;
    del_item(sub, id[109]);
    live[109] = false;
    data_tick(100);                 /* the new items' initial values */
    slot_items_are(v, 3.0, live, 128);
    /* All of them, odd handles first: the slot ends empty. */
    for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t h = 0; h < 128; h++)
            if (live[h] && h % 2 != pass) {
                ck_assert_uint_eq(shm_interest_get(&fx.w.vals, slot) & 1, 1);
                del_item(sub, id[h]);
                live[h] = false;
            }
    ck_assert_uint_eq(shm_interest_get(&fx.w.vals, slot) & 1, 0);
    /* One item, two, one again (a lone item needs no chunk), two. */
    id[1] = sf_item(CH, &tok, sub, v, 1, NULL);
    id[2] = sf_item(CH, &tok, sub, v, 2, NULL);
    live[1] = live[2] = true;
    data_tick(100);
    slot_items_are(v, 4.0, live, 128);
    del_item(sub, id[1]);
    live[1] = false;
    slot_items_are(v, 5.0, live, 128);
    id[3] = sf_item(CH, &tok, sub, v, 3, NULL);
    live[3] = true;
    data_tick(100);
    slot_items_are(v, 6.0, live, 128);
    del_item(sub, id[3]);
    live[3] = false;
    slot_items_are(v, 7.0, live, 128);
}
END_TEST

START_TEST(test_stale_and_duplicate_records)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 10 };
    const struct ua_data_change_notification *d;
    uint8_t                                   b[32];
    double                                    x;
    uint32_t                                  l;
    int64_t                                   t0 = fx.w.now_dt;

    /* The slot moved to 42 at t0 while older records are still in our
     * ring: what the item reads first is 42. */
    x = 42;
    l = sf_variant(UA_BT_DOUBLE, &x, b, sizeof(b));
    sf_change_raw(v, b, l, UA_GOOD, t0, t0);
    sf_item(CH, &tok, sub, v, 1, &p);
    x = 41;                             /* older than what we read: dropped */
    l = sf_variant(UA_BT_DOUBLE, &x, b, sizeof(b));
    wk_mi_on_value(fx.w.subs, sf_slot(v),
                       (const uint8_t[]){ 0x0D, UA_BT_DOUBLE, 0, 0, 0, 0,
                                          0, 0x80, 0x44, 0x40,
                                          0, 0, 0, 0, 0, 0, 0, 0,
                                          0, 0, 0, 0, 0, 0, 0, 0 }, 26);
    x = 42;                             /* the same record again: dropped */
    l = sf_variant(UA_BT_DOUBLE, &x, b, sizeof(b));
    sf_change_raw(v, b, l, UA_GOOD, t0, t0);
    x = 43;
    l = sf_variant(UA_BT_DOUBLE, &x, b, sizeof(b));
    sf_change_raw(v, b, l, UA_GOOD, t0 + 1, t0 + 1);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 2);
    ck_assert(sf_num(d, 0) == 42 && sf_num(d, 1) == 43);
}
END_TEST

START_TEST(test_overflow_hook)
{
    struct ua_nodeid                          v = sf_var(1);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1,
                                                    .queue = 5 };
    const struct ua_data_change_notification *d;
    uint8_t                                   b[32];
    double                                    x = 77;
    uint32_t                                  l = sf_variant(UA_BT_DOUBLE, &x,
                                                             b, sizeof(b));
    struct shm_value                          meta;

    sf_item(CH, &tok, sub, v, 1, &p);
    sf_item(CH, &tok, sub, v, 2, NULL);         /* queue of 1 */
    data_tick(100);
    sf_change_d(v, 2);
    /* The broker lost changes for us: the slot holds 77 now. */
    memset(&meta, 0, sizeof(meta));
    meta.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    meta.source_ts = meta.server_ts = fx.w.now_dt + 5;
    shm_value_write(&fx.w.vals, sf_slot(v), b, l, &meta);
    wk_mi_on_overflow(fx.w.subs, sf_slot(v));
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 3);
    for (int32_t k = 0; k < 3; k++) {
        if (d->monitored_items[k].client_handle == 2) {
            ck_assert(sf_num(d, k) == 77 && !overflow(d, k));
        } else if (sf_num(d, k) == 77) {
            ck_assert(overflow(d, k));
        } else {
            ck_assert(sf_num(d, k) == 2 && !overflow(d, k));
        }
    }
}
END_TEST

/* ------------------------------------------------ modes, triggering */

START_TEST(test_modes_and_triggering)
{
    struct ua_nodeid                          t = sf_var(1), s = sf_var(3);
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1 };
    struct ua_set_triggering_request          req;
    struct ua_set_triggering_response         resp;
    struct ua_set_monitoring_mode_request     mreq;
    struct ua_set_monitoring_mode_response    mresp;
    const struct ua_data_change_notification *d;
    uint32_t                                  tid, sid, bogus = 999;

    tid = sf_item(CH, &tok, sub, t, 1, NULL);
    p.mode = UA_MONITORINGMODE_SAMPLING;
    sid = sf_item(CH, &tok, sub, s, 2, &p);
    d = data_tick(100);                 /* t's initial value only */
    ck_assert_int_eq(d->n_monitored_items, 1);
    ck_assert_uint_eq(d->monitored_items[0].client_handle, 1);

    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.triggering_item_id = tid;
    req.n_links_to_add = 1;
    req.links_to_add = &sid;
    req.n_links_to_remove = 1;
    req.links_to_remove = &bogus;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETTRIGGERINGREQUEST, &req,
                              UA_TYPE_SETTRIGGERINGRESPONSE, &resp), UA_GOOD);
    ck_assert_uint_eq(resp.add_results[0], UA_GOOD);
    ck_assert_uint_eq(resp.remove_results[0],
                      UA_BAD_MONITORED_ITEM_ID_INVALID);

    sf_change_d(s, 10);                 /* sampled, not reported */
    ck_assert_ptr_null(pub_tick(100));
    sf_change_d(t, 20);                 /* triggers s */
    sf_tick(100);
    d = sf_dcn(sf_next());
    ck_assert_int_eq(d->n_monitored_items, 2);

    /* Disabled: nothing; enabled again: the current value at once. */
    memset(&mreq, 0, sizeof(mreq));
    mreq.subscription_id = sub;
    mreq.monitoring_mode = UA_MONITORINGMODE_DISABLED;
    mreq.n_monitored_item_ids = 1;
    mreq.monitored_item_ids = &tid;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETMONITORINGMODEREQUEST,
                              &mreq, UA_TYPE_SETMONITORINGMODERESPONSE,
                              &mresp), UA_GOOD);
    ck_assert_uint_eq(mresp.results[0], UA_GOOD);
    sf_change_d(t, 21);
    ck_assert_ptr_null(pub_tick(100));
    mreq.monitoring_mode = UA_MONITORINGMODE_REPORTING;
    sf_call(CH, &tok, UA_TYPE_SETMONITORINGMODEREQUEST, &mreq,
            UA_TYPE_SETMONITORINGMODERESPONSE, &mresp);
    sf_tick(100);
    d = sf_dcn(sf_next());
    ck_assert_int_eq(d->n_monitored_items, 1);
    ck_assert(sf_num(d, 0) == 21);
    mreq.monitoring_mode = 3;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_SETMONITORINGMODEREQUEST,
                              &mreq, UA_TYPE_SETMONITORINGMODERESPONSE,
                              &mresp), UA_BAD_MONITORING_MODE_INVALID);
}
END_TEST

/* ------------------------------------------- other attributes, ranges */

START_TEST(test_other_attribute_and_range)
{
    struct ua_nodeid                          a =
        fx_ns1("Demo.Static.Array.Int32");
    uint32_t                                  sub =
        sf_create_sub(CH, &tok, 100);
    struct sf_mi                              p = { .mode = -1, .ttr = -1 };
    const struct ua_data_change_notification *d;
    struct ua_monitored_item_create_result    r;
    struct ua_variant                         var;
    int32_t                                   arr[4] = { 5, 6, 7, 8 };
    uint8_t                                   b[64];
    size_t                                    l;

    p.attr = UA_ATTR_DISPLAYNAME;
    sf_item(CH, &tok, sub, sf_var(1), 1, &p);
    p.attr = 0;
    p.range = "1:2";
    sf_item(CH, &tok, sub, a, 2, &p);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 2);
    for (int32_t k = 0; k < 2; k++) {
        const struct ua_variant *x = &d->monitored_items[k].value.value;

        if (d->monitored_items[k].client_handle == 1) {
            ck_assert_uint_eq(x->type, UA_BT_LOCALIZEDTEXT);
            ck_assert(ua_string_eq(
                &((const struct ua_localizedtext *)x->data)->text, "v1"));
        } else {
            ck_assert_uint_eq(x->type, UA_BT_INT32);
            ck_assert(x->is_array);
        }
    }
    /* DisplayName never changes: sampled, never reported (keep-alives
     * only). */
    for (int i = 0; i < 5; i++) {
        struct sf_got *g;

        sf_publish(CH, &tok);
        sf_tick(1000);
        while ((g = sf_next()) != NULL)
            ck_assert_ptr_null(sf_dcn(g));
    }
    /* A change of the array: the range is cut from the current value. */
    ua_variant_set_array(&var, arr, 4, UA_BT_INT32);
    ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], b,
                                sizeof(b), &l), UA_GOOD);
    sf_change_raw(a, b, (uint32_t)l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
    d = data_tick(100);
    ck_assert_int_eq(d->n_monitored_items, 1);
    ck_assert_int_eq(d->monitored_items[0].value.value.n, 2);
    ck_assert_int_eq(((int32_t *)d->monitored_items[0].value.value.data)[0],
                     6);
    /* Create-time failures come from the Read service's checks. */
    p.range = "2:1";
    sf_item_res(CH, &tok, sub, a, 3, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_INDEX_RANGE_INVALID);
    p.range = NULL;
    p.attr = UA_ATTR_VALUE;
    sf_item_res(CH, &tok, sub, fx_ns0(UA_NS0ID_SERVER), 3, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_ATTRIBUTE_ID_INVALID);
    sf_item_res(CH, &tok, sub, fx_ns1("nope"), 3, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_NODE_ID_UNKNOWN);
    p.attr = 99;
    sf_item_res(CH, &tok, sub, sf_var(1), 3, &p, &r);
    ck_assert_uint_eq(r.status_code, UA_BAD_ATTRIBUTE_ID_INVALID);
}
END_TEST

/* ------------------------------------------------------------ memory */

START_TEST(test_memory_per_item)
{
    struct wk_sub_mem m;
    uint32_t          sub = sf_create_sub(CH, &tok, 100);
    uint64_t          allocs;

    wk_sub_mem(&fx.w, &m);
    allocs = atomic_load(&fx.w.row->allocations);
    for (unsigned i = 0; i < 50; i++)
        sf_item(CH, &tok, sub, sf_var(i * 2 + 1), i, NULL);
    for (int k = 0; k < 3; k++) {
        for (unsigned i = 0; i < 50; i++)
            sf_change_d(sf_var(i * 2 + 1), k * 100.0 + i);
        data_tick(100);
    }
    for (unsigned i = 0; i < 50; i++)
        sf_change_d(sf_var(i * 2 + 1), 1000.0 + i);
    wk_sub_mem(&fx.w, &m);
    /* 50 items, queueSize 1, each holding one Double value of its own:
     * one entry and one cell each (and a free-stack slot for each). */
    ck_assert_uint_eq(m.items_used, 50);
    ck_assert_uint_eq(m.cells_used, 50);
    ck_assert_uint_eq(m.entries_used, 50);
    ck_assert_uint_le(m.item_bytes + m.entry_bytes + 4 + m.cell_bytes + 4,
                      256);
    fprintf(stderr, "monitored item: %zu bytes + a queued scalar value: "
            "entry %zu + 4, value %zu + 4 = %zu bytes (queueSize 1)\n",
            m.item_bytes, m.entry_bytes, m.cell_bytes,
            m.item_bytes + m.entry_bytes + 4 + m.cell_bytes + 4);
    /* Nothing was allocated for any of it. */
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
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
    st->cells.cap = cap;
}
END_TEST

static Suite *
monitem_suite(void)
{
    Suite *s = suite_create("Monitored items");
    TCase *tc;

    tc = tcase_create("queues");
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

    tc = tcase_create("sampling");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_sampling_latest_per_interval);
    tcase_add_test(tc, test_sampling_replace_keeps_overflow);
    tcase_add_test(tc, test_sampling_empty_queue_keeps_interval);
    tcase_add_test(tc, test_sampling_revision);
    tcase_add_test(tc, test_sampling_configured_minimum);
    suite_add_tcase(s, tc);

    tc = tcase_create("filters");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_trigger_status_value_default);
    tcase_add_test(tc, test_trigger_status_only);
    tcase_add_test(tc, test_trigger_status_value_timestamp);
    tcase_add_test(tc, test_deadband_absolute);
    tcase_add_test(tc, test_deadband_status_change_passes);
    tcase_add_test(tc, test_deadband_int_and_array);
    tcase_add_test(tc, test_deadband_percent_eurange);
    tcase_add_test(tc, test_filter_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("values");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_timestamps_to_return);
    tcase_add_test(tc, test_interest_bit_before_initial_read);
    tcase_add_test(tc, test_slot_list_add_delete_any_order);
    tcase_add_test(tc, test_stale_and_duplicate_records);
    tcase_add_test(tc, test_overflow_hook);
    tcase_add_test(tc, test_modes_and_triggering);
    tcase_add_test(tc, test_other_attribute_and_range);
    tcase_add_test(tc, test_memory_per_item);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(monitem_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
