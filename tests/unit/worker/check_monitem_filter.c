/*
 * tests/unit/worker/check_monitem_filter.c: worker/monitem_filter.c, what a
 * monitored item decides about a value, through the services and the
 * link's handlers with a clock of our own: DataChangeFilter triggers,
 * absolute and percent deadbands with EURange, NaN, arrays, the filter
 * errors, timestampsToReturn.
 */
#include "mi_fixture.h"

#include <math.h>
#include <stdatomic.h>

#include "worker/sub_int.h"

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

static Suite *
monitem_filter_suite(void)
{
    Suite *s = suite_create("worker/monitem_filter");
    TCase *tc = tcase_create("filters");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_trigger_status_value_default);
    tcase_add_test(tc, test_trigger_status_only);
    tcase_add_test(tc, test_trigger_status_value_timestamp);
    tcase_add_test(tc, test_deadband_absolute);
    tcase_add_test(tc, test_deadband_status_change_passes);
    tcase_add_test(tc, test_deadband_int_and_array);
    tcase_add_test(tc, test_deadband_percent_eurange);
    tcase_add_test(tc, test_filter_errors);
    tcase_add_test(tc, test_timestamps_to_return);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(monitem_filter_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
