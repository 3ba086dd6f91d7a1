/*
 * tests/unit/worker/check_node.c: worker/node.h and node.c, nodes of the
 * store as the services see them: the pipelined lookups (wk_node_pipe)
 * against wk_node_lookup over every NodeId form.
 */
#include "fixture.h"

#include "worker/node.h"

/* A GUID no node has (the forms below). */
static struct ua_guid nd_guid = { 1, 2, 3, { 4, 5, 6, 7, 8, 9, 10, 11 } };

/* ------------------------------------------ pipelined lookups vs one by one */

START_TEST(test_pipe_same_lookups)
{
    static const uint8_t opaque[] = { 'v', '1' };
    struct ua_write_value wv[61];
    struct ua_nodeid      forms[12];
    size_t                nforms = 0, found = 0;
    int32_t               n = (int32_t)(sizeof(wv) / sizeof(wv[0]));

    forms[nforms++] = fx_ns1("v1");                     /* String */
    forms[nforms++] = fx_ns1("v17");
    forms[nforms++] = fx_ns1("nosuchnode");             /* unknown */
    forms[nforms++] = fx_ns1("");                       /* empty */
    forms[nforms++] = fx_ns0(UA_NS0ID_SERVER);          /* numeric */
    forms[nforms++] = fx_ns0(999999);                   /* unknown */
    forms[nforms++] = ua_nodeid_num(1, 5);              /* ns 1, number */
    forms[nforms] = fx_ns1("v1");                       /* null String */
    forms[nforms].id.str.len = -1;
    forms[nforms++].id.str.data = NULL;
    forms[nforms] = fx_ns1("v1");                       /* len, no data */
    forms[nforms++].id.str.data = NULL;
    forms[nforms] = fx_ns1("v1");                       /* ByteString */
    forms[nforms].idtype = UA_IDTYPE_OPAQUE;
    forms[nforms].id.str.len = 2;
    forms[nforms++].id.str.data = (uint8_t *)(uintptr_t)opaque;
    memset(&forms[nforms], 0, sizeof(forms[nforms]));    /* GUID */
    forms[nforms].ns = 1;
    forms[nforms].idtype = UA_IDTYPE_GUID;
    forms[nforms++].id.guid = nd_guid;
    forms[nforms] = fx_ns1("v1");                       /* no such type */
    forms[nforms++].idtype = 9;
    /* Every count up to n: the pipeline's fill, its steady state and
     * its drain at every length and phase. */
    for (int32_t len = 1; len <= n; len++) {
        struct wk_node_pipe pipe;

        memset(wv, 0, sizeof(wv));
        for (int32_t i = 0; i < len; i++)
            wv[i].node_id = forms[((size_t)i * 7 + (size_t)len)
                                  % nforms];
        wk_node_pipe_init(&pipe, &fx.w, &wv[0].node_id, sizeof(wv[0]), len);
        for (int32_t i = 0; i < len; i++) {
            uint32_t want = wk_node_lookup(&fx.w, &wv[i].node_id);

            ck_assert_uint_eq(wk_node_pipe_lookup(&pipe, i), want);
            found += want != SHM_NONE;
        }
    }
    ck_assert_uint_gt(found, 0);                    /* known ones, too */
    ck_assert_uint_ne(wk_node_lookup(&fx.w, &forms[0]), SHM_NONE);
    ck_assert_uint_ne(wk_node_lookup(&fx.w, &forms[4]), SHM_NONE);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/node");
    TCase   *tc = tcase_create("lookups");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_pipe_same_lookups);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
