/*
 * tests/unit/shm/check_log.c: shm/log.c, the process log: the journald
 * priority prefix off a terminal, the level word on one, the threshold
 * (local and read through a shared field), the cut at the line limit,
 * level names both ways.
 */
#include <check.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/log.h"

/* Everything one pipe holds now (the writer is non-blocking). */
static size_t
drain(int fd, char *buf, size_t cap)
{
    size_t  n = 0;
    ssize_t r;

    while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    return n;
}

static int
pipe_nb(int p[2])
{
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_ne(fcntl(p[0], F_SETFL, O_NONBLOCK), -1);
    return p[0];
}

START_TEST(test_prefix_not_tty)
{
    int  p[2];
    char buf[256];

    pipe_nb(p);
    shm_log_open("uaworker 3", p[1]);
    shm_log_set_level(SHM_LOG_DEBUG);
    shm_log(SHM_LOG_WARNING, "ring %u full", 7u);
    shm_log(SHM_LOG_ERROR, "no segment\n");     /* newline not doubled */
    shm_log(SHM_LOG_INFO, "serving");
    drain(p[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "<4>uaworker 3: ring 7 full\n"
                          "<3>uaworker 3: no segment\n"
                          "<6>uaworker 3: serving\n");
}
END_TEST

START_TEST(test_tty_words)
{
    int   m, s;
    char  buf[256];
    char *name;

    m = posix_openpt(O_RDWR | O_NOCTTY);
    ck_assert_int_ge(m, 0);
    ck_assert_int_eq(grantpt(m), 0);
    ck_assert_int_eq(unlockpt(m), 0);
    name = ptsname(m);
    ck_assert_ptr_nonnull(name);
    s = open(name, O_RDWR | O_NOCTTY);
    ck_assert_int_ge(s, 0);
    ck_assert_int_ne(fcntl(m, F_SETFL, O_NONBLOCK), -1);
    shm_log_open("uabroker", s);
    shm_log_set_level(SHM_LOG_DEBUG);
    shm_log(SHM_LOG_WARNING, "w");
    shm_log(SHM_LOG_NOTICE, "n");
    shm_log(SHM_LOG_DEBUG, "d");
    usleep(20000);
    drain(m, buf, sizeof(buf));
    /* The terminal turns each "\n" into "\r\n". */
    ck_assert_str_eq(buf, "uabroker: warning: w\r\n"
                          "uabroker: n\r\n"
                          "uabroker: debug: d\r\n");
    close(s);
    close(m);
}
END_TEST

START_TEST(test_threshold_local)
{
    int  p[2];
    char buf[256];

    pipe_nb(p);
    shm_log_open("uabroker", p[1]);
    shm_log_set_level(SHM_LOG_WARNING);
    ck_assert(shm_log_on(SHM_LOG_ERROR));
    ck_assert(shm_log_on(SHM_LOG_WARNING));
    ck_assert(!shm_log_on(SHM_LOG_NOTICE));
    shm_log(SHM_LOG_INFO, "hidden");
    shm_log(SHM_LOG_DEBUG, "hidden");
    shm_log(SHM_LOG_ERROR, "shown");
    drain(p[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "<3>uabroker: shown\n");
}
END_TEST

START_TEST(test_threshold_shared)
{
    int              p[2];
    char             buf[256];
    _Atomic uint32_t field = SHM_LOG_ERROR;

    pipe_nb(p);
    shm_log_open("uaworker 0", p[1]);
    shm_log_set_level(SHM_LOG_DEBUG);
    shm_log_level_at(&field);
    shm_log(SHM_LOG_WARNING, "before");
    /* Another process (the broker, on SIGHUP) stores a new level. */
    atomic_store(&field, SHM_LOG_DEBUG);
    shm_log(SHM_LOG_DEBUG, "after");
    shm_log_level_at(NULL);             /* the local one again */
    shm_log_set_level(SHM_LOG_NOTICE);
    shm_log(SHM_LOG_INFO, "local");
    drain(p[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, "<7>uaworker 0: after\n");
}
END_TEST

START_TEST(test_cut)
{
    int    p[2];
    char   buf[4 * SHM_LOG_LINE_MAX];
    char   big[3 * SHM_LOG_LINE_MAX];
    size_t n;

    pipe_nb(p);
    shm_log_open("uabroker", p[1]);
    shm_log_set_level(SHM_LOG_INFO);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    shm_log(SHM_LOG_INFO, "%s", big);
    n = drain(p[0], buf, sizeof(buf));
    ck_assert_uint_eq(n, SHM_LOG_LINE_MAX);
    ck_assert_int_eq(buf[n - 1], '\n');
    ck_assert_int_eq(buf[n - 2], 'x');
    ck_assert_ptr_null(memchr(buf, '\n', n - 1));
}
END_TEST

START_TEST(test_names)
{
    static const char *const names[] = {"error", "warning", "notice",
                                        "info", "debug"};

    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(shm_log_level_parse(names[i]), SHM_LOG_ERROR + i);
        ck_assert_str_eq(shm_log_level_name(SHM_LOG_ERROR + i), names[i]);
    }
    ck_assert_int_eq(shm_log_level_parse("warn"), -1);
    ck_assert_int_eq(shm_log_level_parse("INFO"), -1);
    ck_assert_int_eq(shm_log_level_parse(""), -1);
    ck_assert_str_eq(shm_log_level_name(2), "?");
    ck_assert_str_eq(shm_log_level_name(8), "?");
}
END_TEST

static Suite *
log_suite(void)
{
    Suite *s = suite_create("Process log");
    TCase *tc;

    tc = tcase_create("lines");
    tcase_add_test(tc, test_prefix_not_tty);
    tcase_add_test(tc, test_tty_words);
    tcase_add_test(tc, test_cut);
    suite_add_tcase(s, tc);

    tc = tcase_create("levels");
    tcase_add_test(tc, test_threshold_local);
    tcase_add_test(tc, test_threshold_shared);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(log_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
