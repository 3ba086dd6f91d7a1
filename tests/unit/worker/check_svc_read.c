/*
 * tests/unit/worker/check_svc_read.c: worker/svc_read.c through
 * wk_svc_dispatch on the real address space: the service-level status
 * codes, the operation limit (docs/security.md case 66), a failed
 * operation among good ones (its status alone), which operations take
 * the reader's Value shortcut (dataEncoding), and the cost of a Read.
 * What the attribute reader answers for each attribute, node class,
 * IndexRange and timestamp is in check_attr.c (worker/attr.c).
 */
#include "fixture.h"

#include <stdatomic.h>
#include <time.h>

#include "proto/attrs_gen.h"
#include "worker/node.h"
#include "worker/svc_read.h"

#define CH (&fx.ch[0])

static struct ua_nodeid tok;

static void
setup(void)
{
    fx_setup();
    tok = fx_session(CH);
}

static void
teardown(void)
{
    fx_teardown();
}

/* One ReadValueId. */
static struct ua_read_value_id
rvid(struct ua_nodeid n, uint32_t attr, const char *range)
{
    struct ua_read_value_id rv;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = n;
    rv.attribute_id = attr;
    rv.index_range = ua_string_from(range);
    rv.data_encoding.name.len = -1;
    return rv;
}

/* Read n ReadValueIds: the ServiceResult; results in *resp. */
static ua_status
read_n(struct ua_read_value_id *rv, int32_t n, int32_t ttr, double max_age,
       struct ua_read_response *resp)
{
    struct ua_read_request req;

    memset(&req, 0, sizeof(req));
    req.max_age = max_age;
    req.timestamps_to_return = ttr;
    req.n_nodes_to_read = n;
    req.nodes_to_read = rv;
    return fx_call(CH, &tok, UA_TYPE_READREQUEST, &req,
                   UA_TYPE_READRESPONSE, resp);
}

/* Read one attribute; its DataValue (status in dv->status, 0 if Good). */
static struct ua_datavalue
read1(struct ua_nodeid n, uint32_t attr, const char *range, int32_t ttr)
{
    struct ua_read_response resp;
    struct ua_read_value_id rv = rvid(n, attr, range);

    ck_assert_uint_eq(read_n(&rv, 1, ttr, 0, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, 1);
    return resp.results[0];
}

static ua_status
read1_status(struct ua_nodeid n, uint32_t attr, const char *range)
{
    struct ua_datavalue dv = read1(n, attr, range,
                                   UA_TIMESTAMPSTORETURN_NEITHER);

    if (UA_STATUS_IS_BAD(dv.status)) {
        /* A failed operation carries its status only. */
        ck_assert_uint_eq(dv.mask, UA_DV_STATUS);
    }
    return (dv.mask & UA_DV_STATUS) ? dv.status : UA_GOOD;
}

/* ------------------------------------------------------------ status */

START_TEST(test_service_results)
{
    struct ua_read_response resp;
    struct ua_read_value_id rv = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);

    ck_assert_uint_eq(read_n(&rv, 1, 4, 0, &resp),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, -1, 0, &resp),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, 99, 0, &resp),
                      UA_BAD_TIMESTAMPS_TO_RETURN_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, UA_TIMESTAMPSTORETURN_BOTH, -1, &resp),
                      UA_BAD_MAX_AGE_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, UA_TIMESTAMPSTORETURN_BOTH, NAN, &resp),
                      UA_BAD_MAX_AGE_INVALID);
    ck_assert_uint_eq(read_n(&rv, 1, UA_TIMESTAMPSTORETURN_BOTH, 1e300,
                             &resp), UA_GOOD);
    ck_assert_uint_eq(read_n(&rv, 0, UA_TIMESTAMPSTORETURN_BOTH, 0, &resp),
                      UA_BAD_NOTHING_TO_DO);
    ck_assert_uint_eq(read_n(NULL, -1, UA_TIMESTAMPSTORETURN_BOTH, 0, &resp),
                      UA_BAD_NOTHING_TO_DO);
}
END_TEST

START_TEST(test_too_many_operations)
{
    uint32_t                 max = fx.w.conf->max_nodes_per_read;
    struct ua_read_value_id *rv = calloc(max + 1, sizeof(*rv));
    struct ua_read_response  resp;

    ck_assert_ptr_nonnull(rv);
    for (uint32_t i = 0; i <= max; i++) {
        char *id = malloc(16);

        snprintf(id, 16, "v%u", i % 100);
        rv[i] = rvid(fx_ns1(id), UA_ATTR_VALUE, NULL);
    }
    /* docs/security.md case 66: N is fine, N+1 is not. */
    ck_assert_uint_eq(read_n(rv, (int32_t)max, UA_TIMESTAMPSTORETURN_BOTH,
                             0, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, (int32_t)max);
    for (uint32_t i = 0; i < max; i++)
        ck_assert(!(resp.results[i].mask & UA_DV_STATUS));
    ck_assert_int_eq(*(const int32_t *)resp.results[98].value.data, 98);
    ck_assert_uint_eq(read_n(rv, (int32_t)max + 1,
                             UA_TIMESTAMPSTORETURN_BOTH, 0, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    for (uint32_t i = 0; i <= max; i++)
        free(rv[i].node_id.id.str.data);
    free(rv);
}
END_TEST

START_TEST(test_operation_errors)
{
    struct ua_nodeid        n = fx_ns1("Demo.Static.Scalar.Int32");
    struct ua_nodeid        g = { .ns = 1, .idtype = UA_IDTYPE_GUID };
    struct ua_read_response resp;
    struct ua_read_value_id rv[4];

    ck_assert_uint_eq(read1_status(fx_ns1("nope"), UA_ATTR_VALUE, NULL),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(read1_status(fx_ns0(999999), UA_ATTR_NODEID, NULL),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(read1_status(g, UA_ATTR_NODEID, NULL),
                      UA_BAD_NODE_ID_UNKNOWN);
    /* docs/security.md case 62: AttributeId 0 or 99. */
    ck_assert_uint_eq(read1_status(n, 0, NULL), UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, 28, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, 99, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(read1_status(n, 0xFFFFFFFF, NULL),
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    /* One bad operation does not spoil the others. */
    rv[0] = rvid(n, UA_ATTR_VALUE, NULL);
    rv[1] = rvid(fx_ns1("nope"), UA_ATTR_VALUE, NULL);
    rv[2] = rvid(n, 99, NULL);
    rv[3] = rvid(fx_ns1("v2"), UA_ATTR_VALUE, NULL);
    ck_assert_uint_eq(read_n(rv, 4, UA_TIMESTAMPSTORETURN_SOURCE, 0, &resp),
                      UA_GOOD);
    ck_assert_int_eq(resp.n_results, 4);
    ck_assert_int_eq(*(const int32_t *)resp.results[0].value.data, -1);
    ck_assert_uint_eq(resp.results[1].status, UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(resp.results[2].status, UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_int_eq(*(const int32_t *)resp.results[3].value.data, 2);
}
END_TEST

START_TEST(test_data_encoding)
{
    struct ua_read_response resp;
    struct ua_read_value_id rv[5];

    rv[0] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[0].data_encoding.name = ua_string_from("Default Binary");
    rv[1] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[1].data_encoding.name = ua_string_from("Default XML");
    rv[2] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[2].data_encoding.ns = 1;
    rv[2].data_encoding.name = ua_string_from("Default Binary");
    rv[3] = rvid(fx_ns1("v0"), UA_ATTR_DISPLAYNAME, NULL);
    rv[3].data_encoding.name = ua_string_from("Default Binary");
    rv[4] = rvid(fx_ns1("v0"), UA_ATTR_VALUE, NULL);
    rv[4].data_encoding.name = ua_string_from("");      /* empty: null */
    ck_assert_uint_eq(read_n(rv, 5, UA_TIMESTAMPSTORETURN_NEITHER, 0, &resp),
                      UA_GOOD);
    ck_assert(!(resp.results[0].mask & UA_DV_STATUS));
    ck_assert_int_eq(*(const int32_t *)resp.results[0].value.data, 0);
    ck_assert_uint_eq(resp.results[1].status,
                      UA_BAD_DATA_ENCODING_UNSUPPORTED);
    ck_assert_uint_eq(resp.results[2].status,
                      UA_BAD_DATA_ENCODING_UNSUPPORTED);
    ck_assert_uint_eq(resp.results[3].status, UA_BAD_DATA_ENCODING_INVALID);
    ck_assert(!(resp.results[4].mask & UA_DV_STATUS));
}
END_TEST

/* ------------------------------------------------------------ cost */

START_TEST(test_read_cost)
{
    struct ua_read_request   req;
    struct ua_read_response  resp;
    struct ua_read_value_id  rv = rvid(fx_ns1("v42"), UA_ATTR_VALUE, NULL);
    struct wk_svc_ctx        ctx;
    struct timespec          t0, t1;
    uint64_t                 allocs = atomic_load(&fx.w.row->allocations);
    const int                iters = 200000;
    double                   ns;
#if defined(__SANITIZE_ADDRESS__)
    const double             budget = 20000;
#else
    const double             budget = 2000;
#endif

    memset(&req, 0, sizeof(req));
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    memset(&ctx, 0, sizeof(ctx));
    ctx.w = &fx.w;
    ctx.ch = CH;
    ctx.session = wk_session_find_by_token(&fx.w, &tok);
    ctx.arena = &fx.arena;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < iters; i++) {
        ua_arena_reset(&fx.arena);
        memset(&resp, 0, sizeof(resp));
        wk_svc_read(&ctx, &req, &resp);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_uint_eq(resp.response_header.service_result, UA_GOOD);
    ck_assert_uint_eq(resp.results[0].value.type, UA_VARIANT_RAW);
    ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9
          + (double)(t1.tv_nsec - t0.tv_nsec)) / iters;
    printf("check_svc_read: Read of 1 Int32, handler only: %.0f ns\n", ns);
    ck_assert_msg(ns < budget, "%.0f ns per Read", ns);
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);

    /* The whole dispatch (decode, session, handler), for the record. */
    {
        size_t len;

        req.request_header.authentication_token = tok;
        len = fx_encode_request(UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                                &ua_types[UA_TYPE_READREQUEST], &req);
        int bad = 0;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < iters; i++) {
            struct wk_conn_result res;
            struct ua_sc_msg     m = { 1, fx.msg, len };

            ua_arena_reset(&fx.arena);
            /* No ck_assert in the loop: Check reports every one. */
            bad += wk_svc_dispatch(&fx.w, CH, NULL, &m, &fx.arena, &res)
                       != UA_GOOD
                   || res.service_result != UA_GOOD;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ck_assert_int_eq(bad, 0);
        ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9
              + (double)(t1.tv_nsec - t0.tv_nsec)) / iters;
        printf("check_svc_read: Read of 1 Int32, whole dispatch: %.0f ns\n",
               ns);
    }
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

static Suite *
svc_read_suite(void)
{
    Suite *s = suite_create("worker/svc_read");
    TCase *tc;

    tc = tcase_create("status codes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_service_results);
    tcase_add_test(tc, test_too_many_operations);
    tcase_add_test(tc, test_operation_errors);
    tcase_add_test(tc, test_data_encoding);
    suite_add_tcase(s, tc);

    tc = tcase_create("cost");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_read_cost);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_read_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
