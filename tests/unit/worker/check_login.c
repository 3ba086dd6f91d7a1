/*
 * tests/unit/worker/check_login.c: worker/login.c, the logins in steps
 * kept per connection: only a held request has one, found by its
 * connection's index; releasing it (the connection layer's "held request
 * done") wipes the state and the secret it points at.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "worker/conn.h"
#include "worker/login.h"
#include "worker/worker.h"

static struct wk_worker lg_w;           /* no row: allocations uncounted */

static void
setup(void)
{
    memset(&lg_w, 0, sizeof(lg_w));
    ck_assert_int_eq(wk_login_init(&lg_w, 4), 0);
    ck_assert_ptr_nonnull(lg_w.logins);
}

static void
teardown(void)
{
    wk_login_fini(&lg_w);
    ck_assert_ptr_null(lg_w.logins);
}

START_TEST(test_only_held_requests)
{
    struct wk_conn_req rq;

    memset(&rq, 0, sizeof(rq));
    ck_assert_ptr_null(wk_login_of(&lg_w, NULL));
    rq.conn = 2;
    ck_assert_ptr_null(wk_login_of(&lg_w, &rq));     /* not held */
    rq.held = true;
    ck_assert_ptr_eq(wk_login_of(&lg_w, &rq), &lg_w.logins->l[2]);
    rq.conn = 4;                                      /* past the pool */
    ck_assert_ptr_null(wk_login_of(&lg_w, &rq));
}
END_TEST

START_TEST(test_release_wipes)
{
    struct wk_conn_req rq;
    struct wk_login   *l;
    uint8_t            secret[16];

    memset(&rq, 0, sizeof(rq));
    rq.conn = 1;
    rq.held = true;
    l = wk_login_of(&lg_w, &rq);
    memset(secret, 0x5A, sizeof(secret));
    l->phase = WK_LOGIN_DECRYPTING;
    l->ok = true;
    l->secret = secret;
    l->secret_len = sizeof(secret);
    wk_login_release(&lg_w, 0);                       /* another one */
    ck_assert_uint_eq(l->phase, WK_LOGIN_DECRYPTING);
    wk_login_release(&lg_w, 1);
    ck_assert_uint_eq(l->phase, WK_LOGIN_NONE);
    ck_assert_ptr_null(l->secret);
    for (size_t i = 0; i < sizeof(secret); i++)
        ck_assert_uint_eq(secret[i], 0);
    wk_login_release(&lg_w, 99);                      /* out of range */
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/login");
    TCase   *tc = tcase_create("logins");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_only_held_requests);
    tcase_add_test(tc, test_release_wipes);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
