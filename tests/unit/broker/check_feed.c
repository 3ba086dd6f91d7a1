/*
 * tests/unit/broker/check_feed.c: the feed's batches (broker/feed.c) on
 * the real address space, without sockets: value and event lines applied
 * through the value path, the counts and the report lines.  The sockets
 * and `uabroker feed` are the integration tests' (tests/integ).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/event.h"
#include "broker/feed.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define T0   INT64_C(133470720000000000)    /* 2023-12-15 */
#define UNIX INT64_C(116444736000000000)    /* 1970-01-01 as a DateTime */

static struct bk_config     conf;
static struct bk_addrspace  as;
static uint8_t              arena_buf[1 << 20];
static struct ua_arena      arena;

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
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
str(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

START_TEST(test_batch)
{
    static const char text[] =
        "# a comment\n"
        "ns=1;s=v0=42\n"
        "\n"
        "ns=1;s=v0=x\r\n"
        "ns=1;s=v1=2.5;status=0x40000000\n"
        "ns=1;s=nope=1\n"
        "ns=1;s=v2=7";
    char                  report[1024];
    struct bk_feed_result res;
    struct shm_value      m;
    uint8_t               buf[64];
    struct ua_variant     v;

    bk_feed_batch(&as, text, strlen(text), T0 + 5, &arena, report,
                  sizeof(report), &res);
    ck_assert_uint_eq(res.lines, 5);
    ck_assert_uint_eq(res.ok, 3);
    ck_assert_uint_eq(res.failed, 2);
    ck_assert_ptr_nonnull(strstr(report, "line 4: BadTypeMismatch: "));
    ck_assert_ptr_nonnull(strstr(report, "line 6: BadNodeIdUnknown: "));
    ck_assert_int_eq(shm_value_read(&as.vals,
                                    as.ns.nodes[str("v0")].u.var.slot, &m,
                                    buf, sizeof(buf)), 0);
    ck_assert_uint_eq(ua_decode(buf, m.len, NULL, &v,
                                &ua_types[UA_TYPE_VARIANT], &arena, NULL),
                      UA_GOOD);
    ck_assert_int_eq(*(int32_t *)v.data, 42);
    ck_assert_int_eq(m.source_ts, T0 + 5);
    ck_assert_int_eq(shm_value_read(&as.vals,
                                    as.ns.nodes[str("v1")].u.var.slot, &m,
                                    buf, sizeof(buf)), 0);
    ck_assert_uint_eq(m.status, 0x40000000u);
    /* A report buffer too small is cut, never overrun. */
    bk_feed_batch(&as, text, strlen(text), T0 + 6, &arena, report, 16, &res);
    ck_assert_uint_lt(strlen(report), 16);
    ck_assert_uint_eq(res.failed, 2);
    /* No report wanted. */
    bk_feed_batch(&as, "ns=1;s=v0=1\n", 12, T0 + 7, &arena, NULL, 0, &res);
    ck_assert_uint_eq(res.ok, 1);
}
END_TEST

START_TEST(test_event_batch)
{
    static const char text[] =
        "event=i=2253;severity=10\n"
        "event=i=2253;severity=abc\n"
        "ns=1;s=v0=1\n";
    char                  report[1024];
    struct bk_feed_result res;

    bk_feed_batch(&as, text, strlen(text), T0, &arena, report,
                  sizeof(report), &res);
    ck_assert_uint_eq(res.lines, 3);
    ck_assert_uint_eq(res.ok, 2);
    ck_assert_uint_eq(res.events, 1);
    ck_assert_uint_eq(res.failed, 1);
    ck_assert_ptr_nonnull(strstr(report, "line 2: BadOutOfRange: "));
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Feed batches");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Batches");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_batch);
    tcase_add_test(tc, test_event_batch);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
