/*
 * tests/unit/broker/check_server.c: the Server object's values
 * (broker/server.c) as the address-space build writes them from the
 * configuration (NamespaceArray, ServerStatus, capabilities and
 * operation limits, ServiceLevel) and as bk_server_tick() keeps them
 * live (CurrentTime, ServerStatus, the diagnostics summary summed from
 * the workers' rows); BuildDate from the compiler.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/server.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "proto/version.h"

#define T0 INT64_C(133470720000000000)      /* 2023-12-15 */

static struct bk_config    conf;
static struct bk_addrspace as;
static uint8_t             arena_buf[1 << 20];
static struct ua_arena     arena;

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    snprintf(conf.application_uri, sizeof(conf.application_uri),
             "urn:test:uabroker");
    conf.value_heap_mb = 4;
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    ua_arena_init(&arena, arena_buf, sizeof(arena_buf));
}

static void
teardown(void)
{
    bk_addrspace_close(&as);
}

static uint32_t
lookup_num(uint16_t ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = ns, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&as.ns, &k);
}

/* Decode node i's value slot into v (arena). */
static int
read_value(uint32_t i, struct ua_variant *v, struct shm_value *meta)
{
    static uint8_t buf[1 << 20];
    uint32_t       slot = as.ns.nodes[i].u.var.slot;

    if (shm_value_read(&as.vals, slot, meta, buf, sizeof(buf)) != 0)
        return -1;
    if (ua_decode(buf, meta->len, NULL, v, &ua_types[UA_TYPE_VARIANT], &arena,
                  NULL) != UA_GOOD)
        return -1;
    return 0;
}

START_TEST(test_live_nodes)
{
    struct ua_variant v;
    struct shm_value  m;
    uint32_t          i;

    i = lookup_num(0, UA_NS0ID_SERVER_NAMESPACEARRAY);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_STRING);
    ck_assert_int_eq(v.n, 2);
    ck_assert(ua_string_eq(&((struct ua_string *)v.data)[0],
                           "http://opcfoundation.org/UA/"));
    ck_assert(ua_string_eq(&((struct ua_string *)v.data)[1],
                           "urn:test:uabroker"));
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_int_eq(*(int64_t *)v.data, T0);
    bk_server_tick(&as.server, T0 + 10000000);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_int_eq(*(int64_t *)v.data, T0 + 10000000);
    ck_assert_int_eq(m.source_ts, T0 + 10000000);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERSTATUS);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_EXTENSIONOBJECT);
    {
        struct ua_extobj                  *x = v.data;
        struct ua_server_status_data_type *st = x->obj;

        ck_assert_ptr_eq(x->type, &ua_types[UA_TYPE_SERVERSTATUSDATATYPE]);
        ck_assert_int_eq(st->state, 0);        /* Running */
        ck_assert_int_eq(st->start_time, T0);
        ck_assert_int_eq(st->current_time, T0 + 10000000);
        ck_assert(ua_string_eq(&st->build_info.product_name,
                               UA_PRODUCT_NAME));
        ck_assert(ua_string_eq(&st->build_info.software_version, UA_VERSION));
    }
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERREAD);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_UINT32);
    ck_assert_uint_eq(*(uint32_t *)v.data, conf.max_nodes_per_read);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXBROWSECONTINUATIONPOINTS);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_UINT16);
    ck_assert_uint_eq(*(uint16_t *)v.data,
                      conf.max_browse_continuation_points);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSTRINGLENGTH);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data, conf.max_string_length);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMSQUEUESIZE);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data, conf.max_monitored_item_queue_size);
    ck_assert_uint_eq(conf.max_monitored_item_queue_size, 1000);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSESSIONS);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data, 1000);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMS);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data, 100000);
    /* By default 1,000 sessions each with a subscription fit (issue 19's
     * loose ends), and that is what the server advertises. */
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSUBSCRIPTIONS);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_UINT32);
    ck_assert_uint_eq(*(uint32_t *)v.data, 2000);
    ck_assert_uint_ge(*(uint32_t *)v.data, conf.max_sessions);
    i = lookup_num(0,
                   UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSUBSCRIPTIONSPERSESSION);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data,
                      conf.max_subscriptions_per_session);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVICELEVEL);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint8_t *)v.data, 255);
}
END_TEST

START_TEST(test_build_date_and_diagnostics)
{
    struct ua_variant  v;
    struct shm_value   m;
    struct shm_worker *rows = shm_segment_region(&as.seg, SHM_R_WORKERS);
    uint32_t           i;

    /* BuildDate is when the binary was compiled: after 2025, not later
     * than the clock of this test run. */
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_BUILDDATE);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(v.type, UA_BT_DATETIME);
    ck_assert_int_gt(*(int64_t *)v.data, INT64_C(133801632000000000));
    ck_assert_int_le(*(int64_t *)v.data,
                     (int64_t)time(NULL) * 10000000
                         + INT64_C(116444736000000000));
    /* The summary sums the workers' rows. */
    atomic_store(&rows[0].state, SHM_WS_UP);
    atomic_store(&rows[0].sessions, 3);
    atomic_store(&rows[0].bad_requests, 5);
    atomic_store(&rows[3].state, SHM_WS_UP);
    atomic_store(&rows[3].sessions, 4);
    bk_server_tick(&as.server, T0 + 20000000);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSESSIONCOUNT);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data, 7);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDREQUESTSCOUNT);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    ck_assert_uint_eq(*(uint32_t *)v.data, 5);
    i = lookup_num(0, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY);
    ck_assert_int_eq(read_value(i, &v, &m), 0);
    {
        struct ua_extobj *x = v.data;
        struct ua_server_diagnostics_summary_data_type *d = x->obj;

        ck_assert_uint_eq(d->current_session_count, 7);
        ck_assert_uint_eq(d->rejected_requests_count, 5);
    }
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Server object");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Live Server nodes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_live_nodes);
    tcase_add_test(tc, test_build_date_and_diagnostics);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
