/*
 * tests/unit/worker/check_reply.c: worker/reply.c, deferred replies: a
 * ref captured from the request context (and one without context that
 * matches no connection); answers and liveness through w->reply_hook when
 * it is set; without it, a ref whose connection is gone (no connections,
 * an index past the pool, another generation or channel, a closing
 * connection) is dropped with -ESTALE and reported dead.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "proto/types_gen.h"
#include "worker/conn.h"
#include "worker/reply.h"
#include "worker/worker.h"

static struct wk_worker    rw;
static int                 r_sent;
static const void         *r_resp;
static struct wk_conn_ref  r_ref;

static int
r_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
          const struct ua_type *t, void *resp)
{
    ck_assert_ptr_eq(w, &rw);
    ck_assert_ptr_eq(t, &ua_types[UA_TYPE_WRITERESPONSE]);
    r_sent++;
    r_resp = resp;
    r_ref = *ref;
    return 7;
}

static bool
r_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    (void)w;
    return ref->index == 3;
}

static const struct wk_reply_hook r_hook = { r_respond, r_alive };

static void
setup(void)
{
    memset(&rw, 0, sizeof(rw));
    r_sent = 0;
    r_resp = NULL;
    memset(&r_ref, 0, sizeof(r_ref));
}

START_TEST(test_defer)
{
    struct wk_conn_req rq = { .conn = 3, .gen = 9, .channel_id = 77,
                              .t0_ns = 123456, .login_tag = 5 };
    struct wk_conn_ref ref;

    memset(&ref, 0xA5, sizeof(ref));
    ck_assert_int_eq(wk_reply_defer(&rq, 41, 0xBEEF, 6, &ref), 0);
    ck_assert_uint_eq(ref.index, 3);
    ck_assert_uint_eq(ref.gen, 9);
    ck_assert_uint_eq(ref.channel_id, 77);
    ck_assert_uint_eq(ref.request_id, 41);
    ck_assert_uint_eq(ref.request_handle, 0xBEEF);
    ck_assert_uint_eq(ref.stat, 6);
    ck_assert_uint_eq(ref.t0_ns, 123456);
    ck_assert_uint_eq(ref.pad[0] | ref.pad[1] | ref.pad[2], 0);
    /* No request context (a test calling the dispatcher): a ref that
     * matches no connection. */
    memset(&ref, 0xA5, sizeof(ref));
    ck_assert_int_eq(wk_reply_defer(NULL, 41, 1, 6, &ref), -EINVAL);
    ck_assert_uint_eq(ref.index, UINT32_MAX);
    ck_assert_uint_eq(ref.gen, 0);
    ck_assert_uint_eq(ref.channel_id, 0);
}
END_TEST

START_TEST(test_hook)
{
    struct ua_write_response resp;
    struct wk_conn_ref       ref = { .index = 3, .request_id = 8 };

    memset(&resp, 0, sizeof(resp));
    rw.reply_hook = &r_hook;
    ck_assert_int_eq(wk_reply_send(&rw, &ref,
                                   &ua_types[UA_TYPE_WRITERESPONSE], &resp),
                     7);
    ck_assert_int_eq(r_sent, 1);
    ck_assert_ptr_eq(r_resp, &resp);
    ck_assert_uint_eq(r_ref.request_id, 8);
    ck_assert(wk_reply_alive(&rw, &ref));
    ref.index = 4;
    ck_assert(!wk_reply_alive(&rw, &ref));
}
END_TEST

START_TEST(test_gone)
{
    static struct wk_conn pool[4];
    struct wk_conns       cs;
    struct ua_write_response resp;
    struct wk_conn_ref    ref = { .index = 2, .gen = 5, .channel_id = 11 };

    memset(&resp, 0, sizeof(resp));
    /* No connections at all. */
    ck_assert(!wk_reply_alive(&rw, &ref));
    ck_assert_int_eq(wk_reply_send(&rw, &ref,
                                   &ua_types[UA_TYPE_WRITERESPONSE], &resp),
                     -ESTALE);
    /* A pool: the ref's connection, alive while it is the same one. */
    memset(&cs, 0, sizeof(cs));
    memset(pool, 0, sizeof(pool));
    cs.w = &rw;
    cs.pool = pool;
    cs.npool = 4;
    rw.conns = &cs;
    pool[2].cs = &cs;
    pool[2].flags = WK_CONN_USED;
    pool[2].gen = 5;
    pool[2].sc.channel_id = 11;
    ck_assert(wk_reply_alive(&rw, &ref));
    ck_assert_ptr_eq(wk_conn_of_ref(&cs, &ref), &pool[2]);
    pool[2].gen = 6;                        /* reused for another client */
    ck_assert(!wk_reply_alive(&rw, &ref));
    ck_assert_int_eq(wk_reply_send(&rw, &ref,
                                   &ua_types[UA_TYPE_WRITERESPONSE], &resp),
                     -ESTALE);
    pool[2].gen = 5;
    pool[2].sc.channel_id = 12;             /* another channel */
    ck_assert(!wk_reply_alive(&rw, &ref));
    pool[2].sc.channel_id = 11;
    pool[2].flags = WK_CONN_USED | WK_CONN_CLOSING;
    ck_assert(!wk_reply_alive(&rw, &ref));
    ck_assert_int_eq(wk_reply_send(&rw, &ref,
                                   &ua_types[UA_TYPE_WRITERESPONSE], &resp),
                     -ESTALE);
    pool[2].flags = 0;                      /* free */
    ck_assert(!wk_reply_alive(&rw, &ref));
    pool[2].flags = WK_CONN_USED;
    ref.index = 4;                          /* past the pool */
    ck_assert(!wk_reply_alive(&rw, &ref));
    ref.index = UINT32_MAX;                 /* wk_reply_defer(NULL, ...) */
    ck_assert(!wk_reply_alive(&rw, &ref));
    rw.conns = NULL;
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/reply");
    TCase   *tc = tcase_create("reply");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_defer);
    tcase_add_test(tc, test_hook);
    tcase_add_test(tc, test_gone);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
