/*
 * tests/unit/broker/check_methods.c: method calls to the owner
 * (broker/methods.c) on the real address space, without sockets: the
 * message sent for a SHM_FO_CALL record, the owner's answers (outputs
 * typed by OutputArguments, status by name or number, too many / too few
 * / mistyped outputs, unparsable lines), the timeout on a fake clock and
 * the late answer after it, no owner yet, the table's limit, an answer
 * that waits for reply room; the feed's value printer read back by its
 * parser.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/request.h"
#include "broker/feed.h"
#include "broker/methods.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"

#define T0 INT64_C(133470720000000000)    /* 2023-12-15 */
#define MAX_GOT 16

static struct bk_config    conf;
static struct bk_addrspace as;
static struct bk_request   rq;              /* only its counters */
static struct bk_methods   m;
static uint64_t            now_ms = 1000;
static char                sent[4096];
static size_t              sent_len;
static unsigned            nsent;
static struct bk_methods_call got[MAX_GOT];
static uint8_t             got_out[MAX_GOT][256];
static unsigned            ngot;
static int                 deliver_rc;      /* what deliveries return */

static uint64_t
fake_clock(void)
{
    return now_ms;
}

static int
cap_send(struct bk_methods *mm, const char *msg, size_t len)
{
    (void)mm;
    ck_assert_uint_lt(len, sizeof(sent));
    memcpy(sent, msg, len);
    sent[len] = '\0';
    sent_len = len;
    nsent++;
    return 0;
}

static int
cap_deliver(struct bk_methods *mm, const struct bk_methods_call *c)
{
    (void)mm;
    if (deliver_rc != 0)
        return deliver_rc;
    ck_assert_uint_lt(ngot, MAX_GOT);
    got[ngot] = *c;
    ck_assert_uint_le(c->out_len, sizeof(got_out[0]));
    if (c->out_len != 0)
        memcpy(got_out[ngot], c->out, c->out_len);
    ngot++;
    return 0;
}

static void
setup_with(uint32_t pending)
{
    char err[256];

    bk_config_defaults(&conf);
    conf.workers = 1;
    conf.value_heap_mb = 4;
    conf.methods_pending_calls = pending;
    conf.methods_timeout_ms = 5000;
    bk_config_finish(&conf);
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    memset(&rq, 0, sizeof(rq));
    ck_assert_int_eq(bk_methods_setup(&m, &as, &rq, &conf, err,
                                      sizeof(err)), 0);
    ck_assert_ptr_eq(rq.call_arg, &m);
    m.clock = fake_clock;
    m.send = cap_send;
    m.deliver = cap_deliver;
    now_ms = 1000;
    nsent = ngot = 0;
    deliver_rc = 0;
}

static void
setup(void)
{
    setup_with(32);
}

static void
setup2(void)
{
    setup_with(2);
}

static void
teardown(void)
{
    bk_methods_clear(&m);
    ck_assert_ptr_null(rq.call_arg);
    bk_addrspace_close(&as);
}

static uint32_t
idx(uint32_t ns0)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = ns0 };

    return shm_nodestore_lookup(&as.ns, &k);
}

/* A SHM_FO_CALL of Server.SetSubscriptionDurable(a, b) (UInt32, UInt32)
 * as worker 0's pending Call wid, method op 1. */
static void
call(uint32_t wid, uint32_t a, uint32_t b)
{
    uint8_t            rec[256];
    struct shm_fo_call r;
    struct ua_variant  v;
    size_t             off = sizeof(r), used;
    uint32_t           args[2] = { a, b };

    for (int k = 0; k < 2; k++) {
        ua_variant_set_scalar(&v, &args[k], UA_BT_UINT32);
        ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT],
                                    rec + off, sizeof(rec) - off, &used),
                          UA_GOOD);
        off += used;
    }
    memset(&r, 0, sizeof(r));
    r.hdr.kind = SHM_FO_CALL;
    r.hdr.len = (uint32_t)off;
    r.hdr.nslots = 1;
    r.id = wid;
    r.op = 1;
    r.object = idx(UA_NS0ID_SERVER);
    r.method = idx(UA_NS0ID_SERVER_SETSUBSCRIPTIONDURABLE);
    r.nargs = 2;
    r.args_len = (uint32_t)(off - sizeof(r));
    memcpy(rec, &r, sizeof(r));
    bk_methods_on_call(&m, 0, rec, (uint32_t)off);
}

/* The id of the last call sent. */
static unsigned
sent_id(void)
{
    unsigned id = 0;

    ck_assert_int_eq(sscanf(sent, "call %u\n", &id), 1);
    return id;
}

static void
answer(const char *fmt, unsigned id)
{
    char msg[512];

    snprintf(msg, sizeof(msg), fmt, id);
    bk_methods_on_message(&m, msg, strlen(msg));
}

/* The one UInt32 output of got[k]. */
static uint32_t
out_u32(unsigned k)
{
    struct ua_variant v;
    uint8_t           buf[256];
    struct ua_arena   a;
    size_t            used;

    ua_arena_init(&a, buf, sizeof(buf));
    ck_assert_uint_eq(got[k].nout, 1);
    ck_assert_uint_eq(ua_decode(got_out[k], got[k].out_len, &used, &v,
                                &ua_types[UA_TYPE_VARIANT], &a, NULL),
                      UA_GOOD);
    ck_assert_uint_eq(used, got[k].out_len);
    ck_assert_uint_eq(v.type, UA_BT_UINT32);
    ck_assert(!v.is_array);
    return *(uint32_t *)v.data;
}

START_TEST(test_no_owner)
{
    call(77, 1, 2);
    ck_assert_uint_eq(nsent, 0);
    ck_assert_uint_eq(ngot, 1);
    /* A namespace-0 method: the server's, not implemented here. */
    ck_assert_uint_eq(got[0].status, UA_BAD_NOT_IMPLEMENTED);
    ck_assert_uint_eq(got[0].wid, 77);
    ck_assert_uint_eq(got[0].op, 1);
    ck_assert_uint_eq(rq.mstat.calls, 1);
    ck_assert_uint_eq(rq.mstat.no_owner, 1);
}
END_TEST

START_TEST(test_message_and_answer)
{
    unsigned id;

    answer("hello\n", 0);
    call(77, 7, 5);
    ck_assert_uint_eq(nsent, 1);
    id = sent_id();
    {
        char want[128];

        snprintf(want, sizeof(want), "call %u\ni=2253\ni=12749\n7\n5\n", id);
        ck_assert_str_eq(sent, want);
    }
    ck_assert_uint_eq(ngot, 0);
    answer("result %u Good\n24\n", id);
    ck_assert_uint_eq(ngot, 1);
    ck_assert_uint_eq(got[0].status, UA_GOOD);
    ck_assert_uint_eq(got[0].wid, 77);
    ck_assert_uint_eq(out_u32(0), 24);
    ck_assert_uint_eq(rq.mstat.answered, 1);
    ck_assert_uint_eq(m.busy, 0);
    /* A second answer to it: late. */
    answer("result %u Good\n24\n", id);
    ck_assert_uint_eq(ngot, 1);
    ck_assert_uint_eq(rq.mstat.late, 1);
    /* By number, without a final newline, \r\n lines. */
    call(78, 1, 1);
    answer("result %u 0\r\n3", sent_id());
    ck_assert_uint_eq(ngot, 2);
    ck_assert_uint_eq(out_u32(1), 3);
    /* The owner's Bad status: no outputs read. */
    call(79, 1, 1);
    answer("result %u BadOutOfRange\nnot a number\n", sent_id());
    ck_assert_uint_eq(ngot, 3);
    ck_assert_uint_eq(got[2].status, UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(got[2].nout, 0);
    call(80, 1, 1);
    answer("result %u 0x80AB0000\n", sent_id());
    ck_assert_uint_eq(got[3].status, UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(rq.mstat.errors, 0);
}
END_TEST

START_TEST(test_bad_answers)
{
    static const char *const bad[] = {
        "result %u Good\n",                 /* too few outputs */
        "result %u Good\n1\n2\n",           /* too many */
        "result %u Good\n-3\n",             /* not a UInt32 */
        "result %u Good\n1.5\n",
        "result %u Good\n[1,2]\n",          /* an array for a scalar */
        "result %u NoSuchStatus\n1\n",      /* not a StatusCode */
    };

    answer("hello", 0);
    for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        call(100 + k, 1, 1);
        answer(bad[k], sent_id());
        ck_assert_uint_eq(ngot, k + 1);
        ck_assert_msg(got[k].status == UA_BAD_INTERNAL_ERROR,
                      "%s: 0x%08X", bad[k], got[k].status);
        ck_assert_uint_eq(got[k].nout, 0);
        ck_assert_uint_eq(rq.mstat.errors, k + 1);
    }
    /* Lines that are no answer at all, an unknown id: nothing delivered. */
    bk_methods_on_message(&m, "hi there", 8);
    bk_methods_on_message(&m, "result x Good", 13);
    ck_assert_uint_eq(rq.mstat.errors, sizeof(bad) / sizeof(bad[0]) + 2);
    answer("result %u Good\n1\n", 123456);
    ck_assert_uint_eq(rq.mstat.late, 1);
    ck_assert_uint_eq(ngot, sizeof(bad) / sizeof(bad[0]));
    ck_assert_uint_eq(m.busy, 0);
}
END_TEST

/* The timeout on the fake clock; the answer after it is dropped. */
START_TEST(test_timeout)
{
    unsigned id1, id2;

    answer("hello", 0);
    call(1, 1, 1);
    id1 = sent_id();
    now_ms += 1000;
    call(2, 1, 1);
    id2 = sent_id();
    ck_assert_uint_ne(id1, id2);
    now_ms = 1000 + 4999;
    bk_methods_tick(&m, now_ms);
    ck_assert_uint_eq(ngot, 0);
    now_ms = 1000 + 5000;
    bk_methods_tick(&m, now_ms);
    ck_assert_uint_eq(ngot, 1);
    ck_assert_uint_eq(got[0].wid, 1);
    ck_assert_uint_eq(got[0].status, UA_BAD_TIMEOUT);
    ck_assert_uint_eq(rq.mstat.timeouts, 1);
    answer("result %u Good\n5\n", id1);
    ck_assert_uint_eq(ngot, 1);
    ck_assert_uint_eq(rq.mstat.late, 1);
    /* The other one is still answered in time. */
    answer("result %u Good\n5\n", id2);
    ck_assert_uint_eq(ngot, 2);
    ck_assert_uint_eq(got[1].wid, 2);
    ck_assert_uint_eq(out_u32(1), 5);
    now_ms += 100000;
    bk_methods_tick(&m, now_ms);
    ck_assert_uint_eq(ngot, 2);
    ck_assert_uint_eq(rq.mstat.timeouts, 1);
}
END_TEST

/* workers x pending_calls (1 x 2) in flight; the third refused. */
START_TEST(test_table_limit)
{
    unsigned id;

    answer("hello", 0);
    call(1, 1, 1);
    call(2, 1, 1);
    id = sent_id();
    ck_assert_uint_eq(nsent, 2);
    call(3, 1, 1);
    ck_assert_uint_eq(nsent, 2);
    ck_assert_uint_eq(ngot, 1);
    ck_assert_uint_eq(got[0].wid, 3);
    ck_assert_uint_eq(got[0].status, UA_BAD_RESOURCE_UNAVAILABLE);
    answer("result %u Good\n1\n", id);
    ck_assert_uint_eq(ngot, 2);
    call(4, 1, 1);
    ck_assert_uint_eq(nsent, 3);
}
END_TEST

/* An answer that finds no reply room waits, then goes with a flush. */
START_TEST(test_flush)
{
    answer("hello", 0);
    call(1, 1, 1);
    deliver_rc = -ENOSPC;
    answer("result %u Good\n9\n", sent_id());
    ck_assert_uint_eq(ngot, 0);
    ck_assert_uint_eq(m.ndone, 1);
    bk_methods_flush(&m);
    ck_assert_uint_eq(ngot, 0);
    deliver_rc = 0;
    bk_methods_flush(&m);
    ck_assert_uint_eq(ngot, 1);
    ck_assert_uint_eq(out_u32(0), 9);
    ck_assert_uint_eq(m.ndone, 0);
    ck_assert_uint_eq(m.busy, 0);
    /* A done call does not time out. */
    bk_methods_tick(&m, now_ms + 100000);
    ck_assert_uint_eq(ngot, 1);
}
END_TEST

START_TEST(test_status_names)
{
    ua_status st = 1;

    ck_assert(bk_methods_status("Good", 4, &st) && st == UA_GOOD);
    ck_assert(bk_methods_status("BadTimeout", 10, &st)
              && st == UA_BAD_TIMEOUT);
    ck_assert(bk_methods_status("BadNotExecutable \r", 18, &st)
              && st == UA_BAD_NOT_EXECUTABLE);
    ck_assert(bk_methods_status("0x80AB0000", 10, &st)
              && st == UA_BAD_INVALID_ARGUMENT);
    ck_assert(bk_methods_status("2147483648", 10, &st) && st == 0x80000000u);
    ck_assert(!bk_methods_status("Badd", 4, &st));
    ck_assert(!bk_methods_status("", 0, &st));
    ck_assert(!bk_methods_status("0x1FFFFFFFF", 11, &st));
}
END_TEST

static Suite *
methods_suite(void)
{
    Suite *s = suite_create("broker/methods");
    TCase *tc = tcase_create("calls");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_no_owner);
    tcase_add_test(tc, test_message_and_answer);
    tcase_add_test(tc, test_bad_answers);
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_flush);
    tcase_add_test(tc, test_status_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("limit");
    tcase_add_checked_fixture(tc, setup2, teardown);
    tcase_add_test(tc, test_table_limit);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(methods_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
