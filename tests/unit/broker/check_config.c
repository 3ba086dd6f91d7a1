/*
 * tests/unit/broker/check_config.c: the configuration table, the INI
 * reader, --set and the snapshot the workers get.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/config.h"
#include "shm/layout.h"
#include "shm/log.h"

static char path[64];

static void
write_file(const char *text)
{
    FILE *f;
    int   fd;

    strcpy(path, "/tmp/uabroker-conf-XXXXXX");
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static void
teardown(void)
{
    if (path[0] != '\0')
        unlink(path);
    path[0] = '\0';
}

START_TEST(test_defaults)
{
    struct bk_config c;

    bk_config_defaults(&c);
    ck_assert_uint_eq(c.port, 4840);
    ck_assert_uint_eq(c.vars, 1000);
    ck_assert_uint_eq(c.max_nodes_per_read, 1000);
    ck_assert_str_eq(c.stats_listen, "127.0.0.1:9840");
    ck_assert_str_eq(c.application_uri, "");
    /* 1,000 sessions with a subscription each fit (issue 19). */
    ck_assert_uint_eq(c.max_sessions, 1000);
    ck_assert_uint_ge(c.max_subscriptions, 2 * c.max_sessions);
    bk_config_finish(&c);
    ck_assert(strncmp(c.application_uri, "urn:", 4) == 0);
    ck_assert(strlen(c.hostname) > 0);
}
END_TEST

START_TEST(test_load)
{
    struct bk_config c;
    char             err[256];

    bk_config_defaults(&c);
    write_file("; comment\n[server]\nport = 4841\napplication_uri = urn:x\n"
               "[addrspace]\nvars = 1000000\n"
               "[limits]\nmax_nodes_per_read = 5\n"
               "min_publishing_interval_ms = 12.5\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), 0);
    ck_assert_uint_eq(c.port, 4841);
    ck_assert_uint_eq(c.vars, 1000000);
    ck_assert_uint_eq(c.max_nodes_per_read, 5);
    ck_assert(c.min_publishing_interval_ms == 12.5);
    ck_assert_str_eq(c.application_uri, "urn:x");
    ck_assert_uint_eq(c.max_nodes_per_write, 1000);     /* untouched */
}
END_TEST

START_TEST(test_load_errors)
{
    struct bk_config c;
    char             err[256];

    bk_config_defaults(&c);
    write_file("[server]\nprot = 1\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "prot"));
    teardown();
    write_file("[server]\nport = 70000\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "outside"));
    teardown();
    write_file("[server]\nport = 12ab\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), -1);
    teardown();
    write_file("[server]\nport = 1.5\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), -1);
    teardown();
    write_file("[nosuch]\nport = 1\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), -1);
    teardown();
    write_file("this is not ini\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_config_load(&c, "/nonexistent/uabroker.conf", err,
                                    sizeof(err)), -1);
    ck_assert_uint_eq(c.port, 4840);
}
END_TEST

START_TEST(test_limits_at_bounds)
{
    struct bk_config c;
    char             err[256];

    bk_config_defaults(&c);
    /* Each bound is accepted, one past it is refused. */
    ck_assert_int_eq(bk_config_set(&c, "server.workers", "64", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "server.workers", "65", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "max_chunk_count", "1", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "max_chunk_count", "0", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "receive_buffer_size", "8192", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "receive_buffer_size", "8191", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "limits.nosuch", "1", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "max_lifetime_count", "3", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "max_lifetime_count", "2", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "max_monitored_item_queue_size",
                                   "65535", err, sizeof(err)), 0);
    /* queueSize is revised to 16 bits: no more is advertised. */
    ck_assert_int_eq(bk_config_set(&c, "max_monitored_item_queue_size",
                                   "65536", err, sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "max_queued_values", "1023", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "max_unactivated_per_address", "0",
                                   err, sizeof(err)), -1);
    /* The retransmission store (2 GiB at most: 32-bit offsets). */
    ck_assert_uint_eq(c.retransmission_store_bytes, 10240000);
    ck_assert_int_eq(bk_config_set(&c, "retransmission_store_bytes",
                                   "2147483647", err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "retransmission_store_bytes",
                                   "2147483648", err, sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "retransmission_store_bytes", "0",
                                   err, sizeof(err)), 0);
    /* The events of a move's window: 0 (off) to 256 MiB. */
    ck_assert_uint_eq(c.session_move_event_bytes, 1048576);
    ck_assert_int_eq(bk_config_set(&c, "session_move_event_bytes",
                                   "268435456", err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "session_move_event_bytes",
                                   "268435457", err, sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "session_move_event_bytes", "0",
                                   err, sizeof(err)), 0);
}
END_TEST

/* The rules between keys (bk_config_check). */
START_TEST(test_check_across_keys)
{
    struct bk_config c;
    char             err[256];

    bk_config_defaults(&c);
    ck_assert_uint_eq(c.simulation_vars, 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "addrspace.vars", "10", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "addrspace.simulation_vars", "10",
                                   err, sizeof(err)), 0);
    ck_assert_uint_eq(c.simulation_vars, 10);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "simulation_vars", "11", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "simulation_vars"));
    ck_assert_int_eq(bk_config_set(&c, "vars", "0", err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "simulation_vars", "1", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "simulation_vars", "0", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    /* limits.max_secure_channels >= limits.max_sessions + 1 */
    c.max_sessions = 10;
    c.max_secure_channels = 11;
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    c.max_secure_channels = 10;
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "max_secure_channels"));
}
END_TEST

START_TEST(test_snapshot_and_write)
{
    struct bk_config  c, d;
    struct shm_config s;
    char              err[256];
    FILE             *f;
    int               fd;

    bk_config_defaults(&c);
    c.max_sessions = 7;
    c.hello_timeout_ms = 1234;
    strcpy(c.application_uri, "urn:snap");
    bk_config_snapshot(&c, &s);
    ck_assert_uint_eq(s.max_sessions, 7);
    ck_assert_uint_eq(s.hello_timeout_ms, 1234);
    /* Issue 19: room for a client riding out an outage, 1,000 sessions,
     * at most 50 unactivated ones per address (per worker). */
    ck_assert_uint_eq(s.max_monitored_item_queue_size, 1000);
    ck_assert_uint_eq(s.max_queued_values, 1000000);
    ck_assert_uint_eq(s.max_unactivated_per_address, 50);
    ck_assert_uint_eq(c.max_sessions, 7);
    ck_assert_uint_eq(s.max_retransmission_queue, 20);
    ck_assert_str_eq(s.application_uri, "urn:snap");
    /* The throttle's keys reach the workers (defaults like .NET's: 3
     * failures in 10 s block for 30 s; 200 connections/s). */
    ck_assert_uint_eq(s.failure_threshold, 3);
    ck_assert_uint_eq(s.failure_window_ms, 10000);
    ck_assert_uint_eq(s.failure_block_ms, 30000);
    ck_assert_uint_eq(s.login_failure_threshold, 3);
    ck_assert_uint_eq(s.login_failure_window_ms, 10000);
    ck_assert_uint_eq(s.login_failure_block_ms, 30000);
    ck_assert_uint_eq(s.login_failure_ip_threshold, 10);
    ck_assert_uint_eq(s.accept_rate, 200);
    ck_assert_uint_eq(s.accept_burst, 1000);
    ck_assert_int_eq(bk_config_set(&c, "security.failure_threshold", "256",
                                   err, sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "failure_block_ms", "1500", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "accept_rate", "0", err,
                                   sizeof(err)), 0);
    bk_config_snapshot(&c, &s);
    ck_assert_uint_eq(s.failure_block_ms, 1500);
    ck_assert_uint_eq(s.accept_rate, 0);
    /* What --print-config writes reads back to the same settings. */
    strcpy(path, "/tmp/uabroker-conf-XXXXXX");
    fd = mkstemp(path);
    f = fdopen(fd, "w");
    bk_config_write(&c, f);
    fclose(f);
    bk_config_defaults(&d);
    ck_assert_int_eq(bk_config_load(&d, path, err, sizeof(err)), 0);
    ck_assert_uint_eq(d.max_sessions, 7);
    ck_assert_str_eq(d.application_uri, "urn:snap");
    ck_assert_mem_eq(&c, &d, sizeof(c));
}
END_TEST

/* SIGHUP: live settings copied and logged, the others logged and kept. */
/* What the log wrote into the pipe so far (NUL-terminated); its length. */
static size_t
read_log(int fd, char *buf, size_t cap)
{
    size_t  n = 0;
    ssize_t k;

    while (n + 1 < cap && (k = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    buf[n] = '\0';
    return n;
}

START_TEST(test_reload_live_and_restart)
{
    struct bk_config  c, next;
    struct shm_config snap;
    char              err[256], log[4096];
    size_t            loglen;
    unsigned          applied, restart;
    int               p[2];

    ck_assert(bk_config_is_live("security.anonymous"));
    ck_assert(bk_config_is_live("limits.accept_rate"));
    ck_assert(bk_config_is_live("addrspace.simulation_interval_ms"));
    ck_assert(!bk_config_is_live("server.port"));
    ck_assert(!bk_config_is_live("addrspace.vars"));
    ck_assert(!bk_config_is_live("security.pki_dir"));
    ck_assert(!bk_config_is_live("no.such"));
    ck_assert(!bk_config_is_live("port"));
    bk_config_defaults(&c);
    next = c;
    ck_assert_int_eq(bk_config_set(&next, "server.port", "4841", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&next, "security.anonymous", "false", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&next, "security.users_file", "people",
                                   err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&next, "limits.accept_burst", "5", err,
                                   sizeof(err)), 0);
    /* The log (shm/log.h) into a pipe, as process "t". */
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_ne(fcntl(p[0], F_SETFL, O_NONBLOCK), -1);
    shm_log_open("t", p[1]);
    shm_log_set_level(SHM_LOG_INFO);
    bk_config_reload(&c, &next, &applied, &restart);
    loglen = read_log(p[0], log, sizeof(log));
    ck_assert_uint_eq(applied, 3);
    ck_assert_uint_eq(restart, 1);
    ck_assert_uint_eq(c.port, 4840);
    ck_assert_uint_eq(c.anonymous, 0);
    ck_assert_str_eq(c.users_file, "people");
    ck_assert_uint_eq(c.accept_burst, 5);
    ck_assert_ptr_nonnull(strstr(log, "t: SIGHUP: server.port = 4841 needs "
                                      "a restart; the running 4840 stays\n"));
    ck_assert_ptr_nonnull(strstr(log, "t: SIGHUP: security.anonymous = "
                                      "false (was true)\n"));
    ck_assert_ptr_nonnull(strstr(log, "t: SIGHUP: security.users_file = "
                                      "\"people\" (was \"users\")\n"));
    /* Levels: a change applied is a notice, one that waits a warning. */
    ck_assert_ptr_nonnull(strstr(log, "<4>t: SIGHUP: server.port"));
    ck_assert_ptr_nonnull(strstr(log, "<5>t: SIGHUP: security.anonymous"));
    /* Nothing differs: nothing logged. */
    next = c;
    bk_config_reload(&c, &next, &applied, &restart);
    loglen = read_log(p[0], log, sizeof(log));
    ck_assert_uint_eq(applied + restart, 0);
    ck_assert_uint_eq(loglen, 0);
    shm_log_open("uabroker", 2);
    close(p[0]);
    close(p[1]);
    /* The workers' snapshot gets the live fields only. */
    memset(&snap, 0, sizeof(snap));
    bk_config_snapshot_live(&c, &snap);
    ck_assert_uint_eq(snap.accept_burst, 5);
    ck_assert_uint_eq(snap.accept_rate, 200);
    ck_assert_uint_eq(snap.failure_threshold, 3);
    ck_assert_uint_eq(snap.port, 0);
    /* x509_role is checked with the other rules (-t, and SIGHUP). */
    strcpy(c.x509_role, "admin");
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "x509_role"));
}
END_TEST

/*
 * The rolling restart's timeouts (issue 19's loose ends): defaults as the
 * constants were, bounds, handover below kill, live, and the workers' two
 * in the snapshot (at start and on SIGHUP).
 */
START_TEST(test_retire_keys)
{
    struct bk_config  c, next;
    struct shm_config snap;
    char              err[256];
    unsigned          applied, restart;

    bk_config_defaults(&c);
    ck_assert_uint_eq(c.retire_handover_ms, 5000);
    ck_assert_uint_eq(c.retire_renotice_ms, 1000);
    ck_assert_uint_eq(c.retire_kill_ms, 10000);
    ck_assert_uint_eq(c.roll_start_ms, 10000);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "retire_kill_ms", "200", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "retire_kill_ms", "199", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "retire_kill_ms", "600001", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "retire_handover_ms", "99", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "retire_handover_ms", "100", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "retire_renotice_ms", "9", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "retire_renotice_ms", "60000", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "roll_start_ms", "99", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "server.roll_start_ms", "600000",
                                   err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    /* A worker gives up its hand-over before the broker kills it. */
    ck_assert_int_eq(bk_config_set(&c, "retire_handover_ms", "200", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "retire_handover_ms"));

    ck_assert(bk_config_is_live("server.retire_handover_ms"));
    ck_assert(bk_config_is_live("server.retire_renotice_ms"));
    ck_assert(bk_config_is_live("server.retire_kill_ms"));
    ck_assert(bk_config_is_live("server.roll_start_ms"));
    bk_config_defaults(&c);
    memset(&snap, 0, sizeof(snap));
    bk_config_snapshot(&c, &snap);
    ck_assert_uint_eq(snap.retire_handover_ms, 5000);
    ck_assert_uint_eq(snap.retire_renotice_ms, 1000);
    next = c;
    next.retire_handover_ms = 2000;
    next.retire_renotice_ms = 300;
    next.retire_kill_ms = 3000;
    bk_config_reload(&c, &next, &applied, &restart);
    ck_assert_uint_eq(applied, 3);
    ck_assert_uint_eq(restart, 0);
    ck_assert_uint_eq(c.retire_kill_ms, 3000);
    bk_config_snapshot_live(&c, &snap);
    ck_assert_uint_eq(snap.retire_handover_ms, 2000);
    ck_assert_uint_eq(snap.retire_renotice_ms, 300);
}
END_TEST

/* log.level: the five names, anything else refused; live through the
 * snapshot (every worker's log reads the field). */
START_TEST(test_log_level)
{
    struct bk_config  c, next;
    struct shm_config snap;
    char              err[256];
    unsigned          applied, restart;
    int               dn = open("/dev/null", O_WRONLY);

    bk_config_defaults(&c);
    ck_assert_str_eq(c.log_level, "info");
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), 0);
    bk_config_snapshot(&c, &snap);
    ck_assert_uint_eq(snap.log_level, SHM_LOG_INFO);
    ck_assert(bk_config_is_live("log.level"));
    ck_assert_int_eq(bk_config_set(&c, "log.level", "verbose", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_check(&c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "log.level: \"verbose\""));
    bk_config_defaults(&c);
    next = c;
    ck_assert_int_eq(bk_config_set(&next, "level", "debug", err,
                                   sizeof(err)), 0);
    ck_assert_int_ge(dn, 0);
    shm_log_open("t", dn);
    bk_config_reload(&c, &next, &applied, &restart);
    shm_log_open("uabroker", 2);
    close(dn);
    ck_assert_uint_eq(applied, 1);
    ck_assert_uint_eq(restart, 0);
    bk_config_snapshot_live(&c, &snap);
    ck_assert_uint_eq(snap.log_level, SHM_LOG_DEBUG);
}
END_TEST

START_TEST(test_paths)
{
    struct bk_config c;
    char             out[512];

    bk_config_defaults(&c);
    strcpy(c.runtime_dir, "/srv/ua/run");
    ck_assert_int_eq(bk_config_pki_path(&c, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/srv/ua/run/pki");
    ck_assert_int_eq(bk_config_users_path(&c, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/srv/ua/run/users");
    strcpy(c.pki_dir, "/etc/ua/pki");
    ck_assert_int_eq(bk_config_pki_path(&c, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/etc/ua/pki");
    ck_assert_int_eq(bk_config_users_path(&c, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/etc/ua/users");
    strcpy(c.users_file, "/etc/ua/people");
    ck_assert_int_eq(bk_config_users_path(&c, out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/etc/ua/people");
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Configuration");
    TCase   *tc = tcase_create("Keys and files");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_load);
    tcase_add_test(tc, test_load_errors);
    tcase_add_test(tc, test_limits_at_bounds);
    tcase_add_test(tc, test_check_across_keys);
    tcase_add_test(tc, test_snapshot_and_write);
    tcase_add_test(tc, test_reload_live_and_restart);
    tcase_add_test(tc, test_log_level);
    tcase_add_test(tc, test_retire_keys);
    tcase_add_test(tc, test_paths);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
