/*
 * tests/unit/broker/check_alarmcfg.c: the `[alarm NAME]` sections read
 * by the configuration reader (broker/config.c, broker/alarmcfg.c): every
 * key, the defaults, and each refusal with its file and line; without an
 * alarm table the sections are skipped.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/alarmcfg.h"
#include "broker/config.h"

static char path[64];

static void
write_file(const char *text)
{
    FILE *f;
    int   fd;

    strcpy(path, "/tmp/uabroker-alarm-XXXXXX");
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

/* Load text with an alarm table: the result, err filled. */
static int
load(const char *text, struct bk_config *c, struct bk_alarmcfg *ac,
     char *err, size_t errlen)
{
    bk_config_defaults(c);
    memset(ac, 0, sizeof(*ac));
    c->alarms = ac;
    write_file(text);
    err[0] = '\0';
    return bk_config_load(c, path, err, errlen);
}

START_TEST(test_full)
{
    struct bk_config   c;
    struct bk_alarmcfg ac;
    char               err[512];
    const struct bk_alarmcfg_one *a;

    ck_assert_int_eq(load("[server]\nport = 4841\n"
                          "[alarm Level1]\n"
                          "type = exclusive_limit\n"
                          "input = ns=1;s=v1\n"
                          "source = ns=1;s=Tank1\n"
                          "high_high = 90\nhigh = 80\nlow = 20\nlow_low = 10\n"
                          "severity = 400\nhigh_high_severity = 900\n"
                          "message = Level 1 out of range\n"
                          "deadband = 0.5\nconfirm = true\n"
                          "max_time_shelved = 60\n"
                          "[alarm Pump]\n"
                          "type = off_normal\ninput = ns=1;s=v2\n"
                          "normal = true\n"
                          "[alarm Remote]\ntype = external\n"
                          "source = i=2253\n",
                          &c, &ac, err, sizeof(err)), 0);
    ck_assert_uint_eq(c.port, 4841);
    ck_assert_uint_eq(ac.n, 3);
    ck_assert_uint_eq(ac.a[2].def.type, BK_ALARM_EXTERNAL);
    a = &ac.a[0];
    ck_assert_str_eq(a->name, "Level1");
    ck_assert_str_eq(a->input, "ns=1;s=v1");
    ck_assert_str_eq(a->source, "ns=1;s=Tank1");
    ck_assert_str_eq(a->message, "Level 1 out of range");
    ck_assert_uint_eq(a->def.type, BK_ALARM_EXCLUSIVE_LIMIT);
    ck_assert_uint_eq(a->def.limits, 0x0F);
    ck_assert(a->def.lim[BK_ALARM_I_HH] == 90);
    ck_assert(a->def.lim[BK_ALARM_I_LL] == 10);
    ck_assert_uint_eq(a->def.severity, 400);
    ck_assert_uint_eq(a->def.lim_severity[BK_ALARM_I_HH], 900);
    ck_assert_uint_eq(a->def.lim_severity[BK_ALARM_I_H], 0);
    ck_assert(a->def.deadband == 0.5);
    ck_assert(a->def.confirm);
    ck_assert(a->def.max_shelved_ms == 60000);
    a = &ac.a[1];
    ck_assert_uint_eq(a->def.type, BK_ALARM_OFF_NORMAL);
    ck_assert(a->def.normal == 1);
    ck_assert_uint_eq(a->def.severity, 500);
    ck_assert(a->def.max_shelved_ms == BK_ALARMCFG_SHELVED_DEF * 1000);
    ck_assert_str_eq(a->source, "");
    bk_alarmcfg_free(&ac);
    ck_assert_ptr_null(ac.a);
}
END_TEST

START_TEST(test_skipped_without_table)
{
    struct bk_config c;
    char             err[256];

    bk_config_defaults(&c);
    write_file("[alarm X]\nwhatever = 1\n");
    ck_assert_int_eq(bk_config_load(&c, path, err, sizeof(err)), 0);
}
END_TEST

/* text is refused with a message holding want and " line N". */
static void
refused(const char *text, const char *want, int line)
{
    struct bk_config   c;
    struct bk_alarmcfg ac;
    char               err[512], l[32];

    ck_assert_int_eq(load(text, &c, &ac, err, sizeof(err)), -1);
    snprintf(l, sizeof(l), " line %d", line);
    if (strstr(err, want) == NULL || strstr(err, l) == NULL
        || strstr(err, path) == NULL)
        ck_abort_msg("\"%s\": want \"%s\" and%s", err, want, l);
    bk_alarmcfg_free(&ac);
    teardown();
}

START_TEST(test_refused)
{
    const char *ok = "type = exclusive_limit\ninput = ns=1;s=v1\n";
    char        t[512];

    refused("[alarm A]\ntype = limit\n", "bad value \"limit\"", 2);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = x\n", ok);
    refused(t, "[alarm A] high: bad value", 4);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 1\nseverity = 1001\n", ok);
    refused(t, "not an integer in [1, 1000]", 5);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 1\nseverity = 0\n", ok);
    refused(t, "not an integer in [1, 1000]", 5);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 1\ncolour = red\n", ok);
    refused(t, "unknown setting [alarm A] colour", 5);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 1\nhigh = 2\n", ok);
    refused(t, "given twice", 5);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 1\ndeadband = -1\n", ok);
    refused(t, "deadband: bad value", 5);
    /* Whole-section faults: the section's line. */
    snprintf(t, sizeof(t), "[server]\nport = 1\n\n[alarm A]\n%s", ok);
    refused(t, "[alarm A]: a limit alarm needs at least one", 4);
    refused("[alarm A]\ntype = off_normal\nhigh = 3\n", "no input", 1);
    refused("[alarm A]\ntype = off_normal\ninput = i=1\n",
            "needs its normal value", 1);
    snprintf(t, sizeof(t), "[alarm B]\n%shigh = 1\n[alarm A]\n%s"
             "high = 10\nhigh_high = 5\n", ok, ok);
    refused(t, "not in order", 5);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 10\nlow = 10\n", ok);
    refused(t, "high must be above low", 1);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 10\nlow_severity = 10\n", ok);
    refused(t, "a severity for a limit that is not given", 1);
    snprintf(t, sizeof(t), "[alarm A]\n%shigh = 1\n[alarm B]\n%shigh = 1\n"
             "[alarm A]\nhigh = 2\n", ok, ok);
    refused(t, "a second section of that name", 10);
    refused("[alarm a.b]\ntype = off_normal\n", "may not hold", 2);
    refused("[alarm E]\ntype = external\nsource = i=85\ninput = i=1\n",
            "an external alarm has no input", 1);
    refused("[alarm E]\ntype = external\n", "needs its source", 1);
}
END_TEST

START_TEST(test_max)
{
    struct bk_config   c;
    struct bk_alarmcfg ac;
    char               err[512];
    const char        *two = "[alarms]\nmax_alarms = 1\n"
                             "[alarm A]\ntype = off_normal\ninput = i=1\n"
                             "normal = 0\n"
                             "[alarm B]\ntype = off_normal\ninput = i=1\n"
                             "normal = 0\n";

    /* At the limit: accepted; one more: refused at the one too many. */
    ck_assert_int_eq(load(two + 0, &c, &ac, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "line 7: [alarm B]: more than"));
    bk_alarmcfg_free(&ac);
    teardown();
    ck_assert_int_eq(load("[alarms]\nmax_alarms = 1\n"
                          "[alarm A]\ntype = off_normal\ninput = i=1\n"
                          "normal = 0\n", &c, &ac, err, sizeof(err)), 0);
    ck_assert_uint_eq(ac.n, 1);
    bk_alarmcfg_free(&ac);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Alarm configuration");
    TCase   *tc = tcase_create("sections");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_skipped_without_table);
    tcase_add_test(tc, test_refused);
    tcase_add_test(tc, test_max);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
