/*
 * tests/unit/broker/check_users.c: the users file (broker/users.c) and
 * PBKDF2 (proto/crypto_wolf.c) as the workers verify it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/config.h"
#include "broker/users.h"
#include "proto/crypto.h"
#include "proto/status_gen.h"

static char dir[64];
static char path[128];

static void
setup(void)
{
    strcpy(dir, "/tmp/uabroker-users-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/users", dir);
}

static void
teardown(void)
{
    char tmp[160];

    unlink(path);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    rmdir(dir);
}

/* RFC 7914 §11 / the common PBKDF2-HMAC-SHA256 vector. */
START_TEST(test_pbkdf2_vector)
{
    static const uint8_t want1[32] = {
        0x12, 0x0f, 0xb6, 0xcf, 0xfc, 0xf8, 0xb3, 0x2c, 0x43, 0xe7, 0x22,
        0x52, 0x56, 0xc4, 0xf8, 0x37, 0xa8, 0x65, 0x48, 0xc9, 0x2c, 0xcc,
        0x35, 0x48, 0x08, 0x05, 0x98, 0x7c, 0xb7, 0x0b, 0xe1, 0x7b };
    static const uint8_t want4096[32] = {
        0xc5, 0xe4, 0x78, 0xd5, 0x92, 0x88, 0xc8, 0x41, 0xaa, 0x53, 0x0d,
        0xb6, 0x84, 0x5c, 0x4c, 0x8d, 0x96, 0x28, 0x93, 0xa0, 0x01, 0xce,
        0x4e, 0x11, 0xa4, 0x96, 0x38, 0x73, 0xaa, 0x98, 0x13, 0x4a };
    uint8_t out[32];

    ck_assert_int_eq(ua_crypto_pbkdf2((const uint8_t *)"password", 8,
                                      (const uint8_t *)"salt", 4, 1, out,
                                      32), UA_GOOD);
    ck_assert_mem_eq(out, want1, 32);
    ck_assert_int_eq(ua_crypto_pbkdf2((const uint8_t *)"password", 8,
                                      (const uint8_t *)"salt", 4, 4096, out,
                                      32), UA_GOOD);
    ck_assert_mem_eq(out, want4096, 32);
    /* Bad arguments. */
    ck_assert_int_ne(ua_crypto_pbkdf2((const uint8_t *)"p", 1, NULL, 0, 1,
                                      out, 32), UA_GOOD);
    ck_assert_int_ne(ua_crypto_pbkdf2((const uint8_t *)"p", 1,
                                      (const uint8_t *)"s", 1, 0, out, 32),
                     UA_GOOD);
    /* An empty password is a valid input (the workers' dummy work). */
    ck_assert_int_eq(ua_crypto_pbkdf2(NULL, 0, (const uint8_t *)"s", 1, 1,
                                      out, 32), UA_GOOD);
}
END_TEST

START_TEST(test_parse)
{
    struct shm_user u;
    char            err[128];

    ck_assert_int_eq(bk_users_parse_line("", &u, err, sizeof(err)), 1);
    ck_assert_int_eq(bk_users_parse_line("  # comment\n", &u, err,
                                         sizeof(err)), 1);
    ck_assert_int_eq(bk_users_parse_line(
        "alice:operator:pbkdf2-sha256:1000:0011ff:a0b1c2d3\n", &u, err,
        sizeof(err)), 0);
    ck_assert_str_eq(u.name, "alice");
    ck_assert_uint_eq(u.role, SHM_ROLE_OPERATOR);
    ck_assert_uint_eq(u.iterations, 1000);
    ck_assert_uint_eq(u.salt_len, 3);
    ck_assert_uint_eq(u.salt[2], 0xff);
    ck_assert_uint_eq(u.hash_len, 4);
    ck_assert_uint_eq(u.hash[0], 0xa0);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:1:AA:BB\r\n", &u, err, sizeof(err)), 0);
    ck_assert_uint_eq(u.role, SHM_ROLE_VIEWER);
    /* Refusals. */
    ck_assert_int_eq(bk_users_parse_line(
        "bob:admin:pbkdf2-sha256:1:aa:bb", &u, err, sizeof(err)), -1);
    ck_assert(strstr(err, "role") != NULL);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:md5:1:aa:bb", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:0:aa:bb", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:-5:aa:bb", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:1:a:bb", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:1:zz:bb", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:1:aa", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "bob:viewer:pbkdf2-sha256:1:aa:bb:cc", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        "b b:viewer:pbkdf2-sha256:1:aa:bb", &u, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_users_parse_line(
        ":viewer:pbkdf2-sha256:1:aa:bb", &u, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_set_load_verify)
{
    static struct shm_user users[SHM_USERS_MAX];
    uint32_t               n = 99;
    char                   err[256];
    uint8_t                h[32];
    struct stat            st;
    FILE                  *f;

    /* No file: no users. */
    ck_assert_int_eq(bk_users_load(path, users, SHM_USERS_MAX, &n, err,
                                   sizeof(err)), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(bk_users_set(path, "alice", "operator", "pw-a", 100,
                                  err, sizeof(err)), 0);
    ck_assert_int_eq(bk_users_set(path, "bob", "viewer", "pw-b", 100, err,
                                  sizeof(err)), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    /* Change alice: replaced in place, not added. */
    ck_assert_int_eq(bk_users_set(path, "alice", "viewer", "pw-a2", 100, err,
                                  sizeof(err)), 0);
    ck_assert_int_eq(bk_users_load(path, users, SHM_USERS_MAX, &n, err,
                                   sizeof(err)), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(users[0].name, "alice");
    ck_assert_uint_eq(users[0].role, SHM_ROLE_VIEWER);
    ck_assert_str_eq(users[1].name, "bob");
    /* What a worker computes for the right and a wrong password. */
    ck_assert_int_eq(ua_crypto_pbkdf2((const uint8_t *)"pw-a2", 5,
                                      users[0].salt, users[0].salt_len,
                                      users[0].iterations, h,
                                      users[0].hash_len), UA_GOOD);
    ck_assert_mem_eq(h, users[0].hash, users[0].hash_len);
    ck_assert_int_eq(ua_crypto_pbkdf2((const uint8_t *)"pw-a", 4,
                                      users[0].salt, users[0].salt_len,
                                      users[0].iterations, h,
                                      users[0].hash_len), UA_GOOD);
    ck_assert(memcmp(h, users[0].hash, users[0].hash_len) != 0);
    /* Refusals of set: bad name, bad role. */
    ck_assert_int_eq(bk_users_set(path, "a:b", "viewer", "x", 100, err,
                                  sizeof(err)), -1);
    ck_assert_int_eq(bk_users_set(path, "c", "root", "x", 100, err,
                                  sizeof(err)), -1);
    /* A bad line names its number; a user twice is an error. */
    f = fopen(path, "a");
    fputs("broken line\n", f);
    fclose(f);
    ck_assert_int_eq(bk_users_load(path, users, SHM_USERS_MAX, &n, err,
                                   sizeof(err)), -1);
    ck_assert(strstr(err, "line 3") != NULL);
    f = fopen(path, "w");
    fputs("a:viewer:pbkdf2-sha256:1:aa:bb\na:viewer:pbkdf2-sha256:1:aa:bb\n",
          f);
    fclose(f);
    ck_assert_int_eq(bk_users_load(path, users, SHM_USERS_MAX, &n, err,
                                   sizeof(err)), -1);
    ck_assert(strstr(err, "twice") != NULL);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Users");
    TCase   *tc = tcase_create("File and PBKDF2");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_pbkdf2_vector);
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_set_load_verify);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
