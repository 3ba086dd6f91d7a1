/*
 * tests/unit/worker/check_admit.c: worker/admit.c, admission against the
 * shared throttle (a table in anonymous memory, shm/throttle.h): the peer
 * tag (IPv4 and IPv4-mapped IPv6 one key, other families none, the key
 * spaces apart); a connection admitted, refused while its address is
 * blocked or past the accept rate (each refusal counted); which OPN
 * results count against an address; nothing throttled without a table or
 * with a threshold of 0.
 */
#include <check.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/un.h>

#include "proto/status_gen.h"
#include "shm/layout.h"
#include "shm/throttle.h"
#include "worker/admit.h"
#include "worker/worker.h"

static struct wk_worker     aw;
static struct shm_config    ac;
static struct shm_throttle *at;
static size_t               at_bytes;

static void
setup(void)
{
    struct shm_plan p = { .throttle_entries = 64 };
    uint64_t        seed[2] = { 0x0123456789abcdefu, 0xfedcba9876543210u };

    at_bytes = (size_t)shm_throttle_region_bytes(&p);
    ck_assert_uint_gt(at_bytes, 0);
    at = mmap(NULL, at_bytes, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(at, MAP_FAILED);
    ck_assert_int_eq(shm_throttle_region_init(at, at_bytes, &p), 0);
    shm_throttle_configure(at, seed, 10000);
    memset(&ac, 0, sizeof(ac));
    ac.failure_threshold = 3;
    ac.failure_window_ms = 10000;
    ac.failure_block_ms = 30000;
    memset(&aw, 0, sizeof(aw));
    aw.conf = &ac;
    aw.throttle = at;
    aw.slot = 2;
    aw.now_ms = 1000000;
    aw.now_ns = aw.now_ms * 1000000u;
}

static void
teardown(void)
{
    munmap(at, at_bytes);
}

static struct sockaddr_storage
a_v4(uint8_t last)
{
    struct sockaddr_storage ss;
    struct sockaddr_in     *s4 = (struct sockaddr_in *)&ss;
    uint8_t                 a[4] = { 192, 0, 2, last };

    memset(&ss, 0, sizeof(ss));
    s4->sin_family = AF_INET;
    memcpy(&s4->sin_addr, a, 4);
    return ss;
}

static struct sockaddr_storage
a_v6_mapped(uint8_t last)
{
    struct sockaddr_storage ss;
    struct sockaddr_in6    *s6 = (struct sockaddr_in6 *)&ss;
    uint8_t a[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 0 };

    a[15] = last;
    memset(&ss, 0, sizeof(ss));
    s6->sin6_family = AF_INET6;
    memcpy(&s6->sin6_addr, a, 16);
    return ss;
}

START_TEST(test_tag)
{
    struct sockaddr_storage v4 = a_v4(7), v6 = a_v6_mapped(7);
    struct sockaddr_storage other = a_v4(8), un;
    uint64_t                t;

    t = wk_admit_tag(&aw, &v4, SHM_THR_KEY_IP);
    ck_assert_uint_ne(t, 0);
    /* One host, one key, whichever listener it came through. */
    ck_assert_uint_eq(wk_admit_tag(&aw, &v6, SHM_THR_KEY_IP), t);
    ck_assert_uint_ne(wk_admit_tag(&aw, &other, SHM_THR_KEY_IP), t);
    /* The failed-login key space is another. */
    ck_assert_uint_ne(wk_admit_tag(&aw, &v4, SHM_THR_KEY_LOGIN_IP), t);
    ck_assert_uint_ne(wk_admit_tag(&aw, &v4, SHM_THR_KEY_LOGIN_IP), 0);
    /* Not an IP address: never throttled. */
    memset(&un, 0, sizeof(un));
    un.ss_family = AF_UNIX;
    ck_assert_uint_eq(wk_admit_tag(&aw, &un, SHM_THR_KEY_IP), 0);
    /* No table: no tags. */
    aw.throttle = NULL;
    ck_assert_uint_eq(wk_admit_tag(&aw, &v4, SHM_THR_KEY_IP), 0);
}
END_TEST

START_TEST(test_block_after_failures)
{
    struct sockaddr_storage v4 = a_v4(7), other = a_v4(9);
    uint64_t t = wk_admit_tag(&aw, &v4, SHM_THR_KEY_IP);
    uint64_t o = wk_admit_tag(&aw, &other, SHM_THR_KEY_IP);

    ck_assert_uint_eq(wk_admit_connection(&aw, t), UA_GOOD);
    ck_assert(!wk_admit_blocked(&aw, t));
    for (int i = 0; i < 2; i++)
        wk_admit_opn_result(&aw, t, UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(wk_admit_connection(&aw, t), UA_GOOD);
    /* A rejected certificate counts the same (the low bits ignored). */
    wk_admit_opn_result(&aw, t, UA_BAD_CERTIFICATE_UNTRUSTED | 0x1234u);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_OPN_FAILURES), 3);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_BLOCKS), 1);
    ck_assert_uint_eq(wk_admit_connection(&aw, t),
                      UA_BAD_TCP_SERVER_TOO_BUSY);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_REFUSED_BLOCKED), 1);
    ck_assert(wk_admit_blocked(&aw, t));
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_REFUSED_BLOCKED), 2);
    /* Another address is not concerned. */
    ck_assert_uint_eq(wk_admit_connection(&aw, o), UA_GOOD);
    ck_assert(!wk_admit_blocked(&aw, o));
    /* The block ends. */
    aw.now_ms += 30001;
    aw.now_ns = aw.now_ms * 1000000u;
    ck_assert_uint_eq(wk_admit_connection(&aw, t), UA_GOOD);
    ck_assert(!wk_admit_blocked(&aw, t));
}
END_TEST

START_TEST(test_other_failures_do_not_count)
{
    struct sockaddr_storage v4 = a_v4(7);
    uint64_t t = wk_admit_tag(&aw, &v4, SHM_THR_KEY_IP);

    for (int i = 0; i < 10; i++) {
        wk_admit_opn_result(&aw, t, UA_BAD_TCP_MESSAGE_TOO_LARGE);
        wk_admit_opn_result(&aw, t, UA_BAD_SECURITY_POLICY_REJECTED);
        wk_admit_opn_result(&aw, t, UA_GOOD);
    }
    /* No tag (not an IP address): nothing counted either. */
    wk_admit_opn_result(&aw, 0, UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_OPN_FAILURES), 0);
    ck_assert_uint_eq(wk_admit_connection(&aw, t), UA_GOOD);
}
END_TEST

START_TEST(test_threshold_zero)
{
    struct sockaddr_storage v4 = a_v4(7);
    uint64_t t = wk_admit_tag(&aw, &v4, SHM_THR_KEY_IP);

    ac.failure_threshold = 0;
    for (int i = 0; i < 10; i++)
        wk_admit_opn_result(&aw, t, UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_OPN_FAILURES), 0);
    ck_assert_uint_eq(wk_admit_connection(&aw, t), UA_GOOD);
    ck_assert(!wk_admit_blocked(&aw, t));
}
END_TEST

START_TEST(test_accept_rate)
{
    ac.accept_rate = 1;
    ac.accept_burst = 2;
    ck_assert_uint_eq(wk_admit_connection(&aw, 0), UA_GOOD);
    ck_assert_uint_eq(wk_admit_connection(&aw, 0), UA_GOOD);
    ck_assert_uint_eq(wk_admit_connection(&aw, 0),
                      UA_BAD_TCP_SERVER_TOO_BUSY);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_REFUSED_RATE), 1);
    /* A second later there is room for one more. */
    aw.now_ns += 1000000000u;
    ck_assert_uint_eq(wk_admit_connection(&aw, 0), UA_GOOD);
    ck_assert_uint_eq(wk_admit_connection(&aw, 0),
                      UA_BAD_TCP_SERVER_TOO_BUSY);
    ck_assert_uint_eq(shm_throttle_total(at, SHM_THR_C_REFUSED_RATE), 2);
}
END_TEST

START_TEST(test_no_table)
{
    aw.throttle = NULL;
    ac.accept_rate = 1;
    ac.accept_burst = 1;
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(wk_admit_connection(&aw, 42), UA_GOOD);
        wk_admit_opn_result(&aw, 42, UA_BAD_SECURITY_CHECKS_FAILED);
    }
}
END_TEST

static Suite *
admit_suite(void)
{
    Suite *s = suite_create("worker/admit");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_tag);
    tcase_add_test(tc, test_block_after_failures);
    tcase_add_test(tc, test_other_failures_do_not_count);
    tcase_add_test(tc, test_threshold_zero);
    tcase_add_test(tc, test_accept_rate);
    tcase_add_test(tc, test_no_table);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(admit_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
