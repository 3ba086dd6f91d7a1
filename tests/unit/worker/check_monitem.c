/*
 * tests/unit/worker/check_monitem.c: worker/monitem.c through the services
 * and the link's handlers, on the real address space with a clock of our
 * own: sampling intervals, stale records and the "no lost update" rule,
 * overflow reports, interest bits, monitoring modes and triggering,
 * attributes other than Value, IndexRange, memory per item.  Queues:
 * check_monitem_queue.c; filters and timestampsToReturn:
 * check_monitem_filter.c.
 */
#include "sub_fixture.h"

#include <stdatomic.h>

#include "worker/sub_int.h"

#include "mi_fixture.h"







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


/*
 * Issue 19: a monitored item at rest costs at most 256 bytes of worker
 * memory whatever its queueSize: the pools grow by at most that per
 * configured item (the queue pool is limits.max_queued_values, apart),
 * and an item with queueSize 1000 whose values were published holds
 * nothing of the queue pool.  (Before, the pool was 4 cells and entries
 * per configured item: 472 bytes an item, make bench-mem.)
 */
static uint64_t
reserved_for_items(uint32_t items)
{
    struct shm_config *c = (struct shm_config *)fx.w.conf;
    struct wk_sub_mem  m;

    c->max_monitored_items = items;
    wk_sub_fini(&fx.w);
    ck_assert_int_eq(wk_sub_init(&fx.w), 0);
    wk_sub_mem(&fx.w, &m);
    return m.reserved_bytes;
}

START_TEST(test_memory_at_rest_any_queue_size)
{
    struct shm_config *c = (struct shm_config *)fx.w.conf;
    uint32_t           was = c->max_monitored_items, sub;
    struct sf_mi       p = { .mode = -1, .ttr = -1, .queue = 1000,
                             .discard_oldest = true };
    struct wk_sub_mem  m;
    uint64_t           a, b;

    ck_assert_uint_ne(c->max_queued_values, 0);
    a = reserved_for_items(10000);
    b = reserved_for_items(30000);
    fprintf(stderr, "monitored item at rest: %.1f bytes reserved per "
            "configured item\n", (double)(b - a) / 20000);
    ck_assert_uint_le(b - a, 20000ull * 256);
    c->max_monitored_items = was;
    wk_sub_fini(&fx.w);
    ck_assert_int_eq(wk_sub_init(&fx.w), 0);
    /* queueSize 1000 granted, values queued, published: nothing held. */
    sub = sf_create_sub(CH, &tok, 100);
    for (unsigned i = 0; i < 20; i++) {
        struct ua_monitored_item_create_result r;

        ck_assert_uint_eq(sf_item_res(CH, &tok, sub, sf_var(i * 2 + 1), i,
                                      &p, &r), UA_GOOD);
        ck_assert_uint_eq(r.revised_queue_size, 1000);
    }
    for (int k = 0; k < 50; k++)
        for (unsigned i = 0; i < 20; i++)
            sf_change_d(sf_var(i * 2 + 1), k * 100.0 + i + 0.25);
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.entries_used, 20 * 51);
    for (int k = 0; k < 2; k++) {
        sf_publish(CH, &tok);
        sf_tick(100);
    }
    wk_sub_mem(&fx.w, &m);
    ck_assert_uint_eq(m.entries_used, 0);
    ck_assert_uint_eq(m.cells_used, 0);
    ck_assert_uint_le(m.item_bytes + sizeof(struct wk_mi_link), 256);
}
END_TEST


static Suite *
monitem_suite(void)
{
    Suite *s = suite_create("Monitored items");
    TCase *tc;

    tc = tcase_create("sampling");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_sampling_latest_per_interval);
    tcase_add_test(tc, test_sampling_replace_keeps_overflow);
    tcase_add_test(tc, test_sampling_empty_queue_keeps_interval);
    tcase_add_test(tc, test_sampling_revision);
    tcase_add_test(tc, test_sampling_configured_minimum);
    suite_add_tcase(s, tc);

    tc = tcase_create("values");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_interest_bit_before_initial_read);
    tcase_add_test(tc, test_slot_list_add_delete_any_order);
    tcase_add_test(tc, test_stale_and_duplicate_records);
    tcase_add_test(tc, test_overflow_hook);
    tcase_add_test(tc, test_modes_and_triggering);
    tcase_add_test(tc, test_other_attribute_and_range);
    tcase_add_test(tc, test_memory_per_item);
    tcase_add_test(tc, test_memory_at_rest_any_queue_size);
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
