/*
 * tests/unit/broker/check_mqtt.c: the MQTT feed's pure parts
 * (broker/mqtt.c) without a connection: mqtt.url, the [mqtt] settings
 * together, the per-node topic form, and bk_mqtt_apply() on the real
 * address space (a batch, a per-node value, the payload limit at and over
 * it, the refusals and the counters).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/mqtt.h"
#include "proto/types.h"
#include "shm/value.h"

#define T0 INT64_C(133470720000000000)      /* 2023-12-15 */

static struct bk_config    conf;
static struct bk_addrspace as;
static struct bk_mqtt      mq;
static char                err[512];

START_TEST(test_url)
{
    struct bk_mqtt_target t;

    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://broker.local", &t, err,
                                       sizeof(err)), 0);
    ck_assert_str_eq(t.host, "broker.local");
    ck_assert_uint_eq(t.port, 1883);
    ck_assert(!t.tls);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtts://10.0.0.1:9883/", &t, err,
                                       sizeof(err)), 0);
    ck_assert_str_eq(t.host, "10.0.0.1");
    ck_assert_uint_eq(t.port, 9883);
    ck_assert(t.tls);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtts://h", &t, err, sizeof(err)),
                     0);
    ck_assert_uint_eq(t.port, 8883);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://[::1]:1884", &t, err,
                                       sizeof(err)), 0);
    ck_assert_str_eq(t.host, "::1");
    ck_assert_uint_eq(t.port, 1884);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://h:65535", &t, err,
                                       sizeof(err)), 0);
    ck_assert_uint_eq(t.port, 65535);
    /* Refusals. */
    ck_assert_int_eq(bk_mqtt_parse_url("tcp://h", &t, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mqtt.url"));
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://", &t, err, sizeof(err)), -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://:1883", &t, err,
                                       sizeof(err)), -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://h:0", &t, err, sizeof(err)),
                     -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://h:65536", &t, err,
                                       sizeof(err)), -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://h:", &t, err, sizeof(err)),
                     -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://[::1", &t, err, sizeof(err)),
                     -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://u:p@h", &t, err,
                                       sizeof(err)), -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://h/path", &t, err,
                                       sizeof(err)), -1);
    ck_assert_int_eq(bk_mqtt_parse_url("mqtt://h:1883x", &t, err,
                                       sizeof(err)), -1);
}
END_TEST

START_TEST(test_check)
{
    struct bk_config      c;
    struct bk_mqtt_target t;
    bool                  on = true;

    bk_config_defaults(&c);
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    ck_assert(!on);                     /* the default: off */
    ck_assert_str_eq(c.mqtt_topic, "uabroker/feed/#");
    ck_assert_uint_eq(c.mqtt_qos, 1);
    strcpy(c.mqtt_host, "127.0.0.1");
    c.mqtt_port = 1999;
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    ck_assert(on);
    ck_assert_str_eq(t.host, "127.0.0.1");
    ck_assert_uint_eq(t.port, 1999);
    ck_assert(!t.tls);
    /* url and host together. */
    strcpy(c.mqtt_url, "mqtt://h");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mqtt.host"));
    c.mqtt_host[0] = '\0';
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    ck_assert_str_eq(t.host, "h");
    /* TLS: mqtts:// needs tls_ca; tls_ca alone makes TLS. */
    strcpy(c.mqtt_url, "mqtts://h");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mqtt.tls_ca"));
    strcpy(c.mqtt_tls_ca, "ca.pem");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    ck_assert(t.tls);
    strcpy(c.mqtt_url, "mqtt://h");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    ck_assert(t.tls);
    c.mqtt_tls_ca[0] = '\0';
    /* Topic filters. */
    strcpy(c.mqtt_topic, "a/#/b");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mqtt.topic"));
    strcpy(c.mqtt_topic, "a/b+");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    c.mqtt_topic[0] = '\0';
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    strcpy(c.mqtt_topic, "plant/+/values");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    /* A password file needs a user name. */
    strcpy(c.mqtt_password_file, "pw");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mqtt.username"));
    strcpy(c.mqtt_username, "u");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    /* A kept session needs a client_id of its own. */
    c.mqtt_clean_session = 0;
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mqtt.client_id"));
    strcpy(c.mqtt_client_id, "host7");
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
    /* The backoff: min <= max, equal is fine. */
    c.mqtt_reconnect_min_ms = 1001;
    c.mqtt_reconnect_max_ms = 1000;
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "reconnect_min_ms"));
    c.mqtt_reconnect_min_ms = 1000;
    ck_assert_int_eq(bk_mqtt_check(&c, &t, &on, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_config_bounds)
{
    struct bk_config c;

    bk_config_defaults(&c);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.qos", "2", err, sizeof(err)),
                     0);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.qos", "3", err, sizeof(err)),
                     -1);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.keepalive", "5", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.keepalive", "4", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.max_payload_bytes", "16", err,
                                   sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.max_payload_bytes", "15", err,
                                   sizeof(err)), -1);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.max_payload_bytes", "16777216",
                                   err, sizeof(err)), 0);
    ck_assert_int_eq(bk_config_set(&c, "mqtt.max_payload_bytes", "16777217",
                                   err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_topics)
{
    const char *id;
    size_t      n;

    ck_assert_int_eq(bk_mqtt_topic_prefix("uabroker/feed/#"), 14);
    ck_assert_int_eq(bk_mqtt_topic_prefix("#"), 0);
    ck_assert_int_eq(bk_mqtt_topic_prefix("uabroker/feed"), -1);
    ck_assert_int_eq(bk_mqtt_topic_prefix("plant/+/#"), -1);
    ck_assert_int_eq(bk_mqtt_topic_prefix("a#"), -1);
    ck_assert(bk_mqtt_topic_node("uabroker/feed/#", 14,
                                 "uabroker/feed/ns=1;s=v0", &id, &n));
    ck_assert_uint_eq(n, 9);
    ck_assert(strncmp(id, "ns=1;s=v0", n) == 0);
    ck_assert(bk_mqtt_topic_node("uabroker/feed/#", 14, "uabroker/feed/i=5",
                                 &id, &n));
    ck_assert(bk_mqtt_topic_node("uabroker/feed/#", 14,
                                 "uabroker/feed/ns=2;s=Line 4/Temp", &id,
                                 &n));
    ck_assert(strcmp(id, "ns=2;s=Line 4/Temp") == 0);
    /* Batches: another name, the prefix itself, another prefix. */
    ck_assert(!bk_mqtt_topic_node("uabroker/feed/#", 14,
                                  "uabroker/feed/plc1", &id, &n));
    ck_assert(!bk_mqtt_topic_node("uabroker/feed/#", 14, "uabroker/feed",
                                  &id, &n));
    ck_assert(!bk_mqtt_topic_node("uabroker/feed/#", 14, "uabroker/feed/",
                                  &id, &n));
    ck_assert(!bk_mqtt_topic_node("uabroker/feed/#", 14, "other/ns=1;s=v0",
                                  &id, &n));
    ck_assert(!bk_mqtt_topic_node("uabroker/feed/#", 14, "uabroker/feed/i=",
                                  &id, &n));
    ck_assert(!bk_mqtt_topic_node("plant/+/v", -1, "plant/x/v", &id, &n));
    ck_assert(bk_mqtt_topic_node("#", 0, "ns=1;s=v0", &id, &n));
}
END_TEST

/* ------------------------------------------------------------ apply */

static void
setup(void)
{
    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    conf.value_heap_mb = 4;
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    strcpy(conf.mqtt_host, "127.0.0.1");
    conf.mqtt_max_payload_bytes = 64;
    ck_assert_msg(bk_mqtt_prepare(&mq, &as, &conf, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert(mq.on);
    ck_assert(mq.node_topics);
}

static void
teardown(void)
{
    bk_mqtt_clear(&mq);
    bk_addrspace_close(&as);
}

/* The Int32 value of Demo.Vars v<i> (even i). */
static int32_t
v_int(uint32_t i)
{
    uint8_t          buf[64];
    struct shm_value m;
    int32_t          x;

    ck_assert_int_eq(shm_value_read(&as.vals, as.vars_slot_first + i, &m,
                                    buf, sizeof(buf)), 0);
    /* A scalar Variant: its type byte, then the Int32. */
    ck_assert_uint_eq(m.len, 5);
    ck_assert_uint_eq(buf[0], UA_BT_INT32);
    memcpy(&x, buf + 1, 4);
    return x;
}

START_TEST(test_apply)
{
    static const char batch[] = "ns=1;s=v0=42\n# c\nns=1;s=nope=1\n"
                                "ns=1;s=v2=7";
    char at[65];

    bk_mqtt_apply(&mq, "uabroker/feed/plc1", batch, strlen(batch), T0);
    ck_assert_int_eq(v_int(0), 42);
    ck_assert_int_eq(v_int(2), 7);
    ck_assert_uint_eq(mq.c.messages, 1);
    ck_assert_uint_eq(mq.c.lines_applied, 2);
    ck_assert_uint_eq(mq.c.lines_refused, 1);
    /* Per-node: the payload is the value. */
    bk_mqtt_apply(&mq, "uabroker/feed/ns=1;s=v4", "-5;status=0", 11, T0);
    ck_assert_int_eq(v_int(4), -5);
    ck_assert_uint_eq(mq.c.lines_applied, 3);
    /* Per-node: a second line in the payload, or a bad value: refused. */
    bk_mqtt_apply(&mq, "uabroker/feed/ns=1;s=v4", "1\n2", 3, T0);
    bk_mqtt_apply(&mq, "uabroker/feed/ns=1;s=v4", "abc", 3, T0);
    bk_mqtt_apply(&mq, "uabroker/feed/ns=1;s=nope", "1", 1, T0);
    ck_assert_int_eq(v_int(4), -5);
    ck_assert_uint_eq(mq.c.lines_refused, 4);
    /* A string identifier with '=' would name another node: refused. */
    bk_mqtt_apply(&mq, "uabroker/feed/ns=1;s=v4=x", "8", 1, T0);
    bk_mqtt_apply(&mq, "uabroker/feed/s=v4=x", "8", 1, T0);
    ck_assert_int_eq(v_int(4), -5);
    ck_assert_uint_eq(mq.c.lines_refused, 6);
    /* Empty: nothing (a retained message cleared). */
    bk_mqtt_apply(&mq, "uabroker/feed/ns=1;s=v4", "", 0, T0);
    ck_assert_uint_eq(mq.c.messages, 8);
    ck_assert_uint_eq(mq.c.lines_refused, 6);
    ck_assert_uint_eq(mq.c.lines_applied, 3);
    /* The limit (64): at it applied, one byte over refused. */
    memset(at, '#', sizeof(at));
    memcpy(at, "ns=1;s=v6=11\n", 13);
    bk_mqtt_apply(&mq, "uabroker/feed/plc1", at, 64, T0);
    ck_assert_int_eq(v_int(6), 11);
    memcpy(at, "ns=1;s=v6=12\n", 13);
    bk_mqtt_apply(&mq, "uabroker/feed/plc1", at, 65, T0);
    ck_assert_int_eq(v_int(6), 11);
    ck_assert_uint_eq(mq.c.payloads_too_large, 1);
    ck_assert_uint_eq(mq.c.lines_applied, 4);
    ck_assert_uint_eq(mq.c.messages, 10);
}
END_TEST

START_TEST(test_apply_no_node_topics)
{
    /* A filter without a "/#" tail: every message is a batch, so a topic
     * that looks like a NodeId carries lines too. */
    bk_mqtt_clear(&mq);
    strcpy(conf.mqtt_topic, "plant/+/ns=1;s=v0");
    ck_assert_int_eq(bk_mqtt_prepare(&mq, &as, &conf, err, sizeof(err)), 0);
    ck_assert(!mq.node_topics);
    bk_mqtt_apply(&mq, "plant/a/ns=1;s=v0", "ns=1;s=v0=9", 11, T0);
    ck_assert_int_eq(v_int(0), 9);
    bk_mqtt_apply(&mq, "plant/a/ns=1;s=v0", "9", 1, T0);
    ck_assert_uint_eq(mq.c.lines_refused, 1);
}
END_TEST

static Suite *
mqtt_suite(void)
{
    Suite *s = suite_create("MQTT feed");
    TCase *t = tcase_create("pure");
    TCase *a = tcase_create("apply");

    tcase_add_test(t, test_url);
    tcase_add_test(t, test_check);
    tcase_add_test(t, test_config_bounds);
    tcase_add_test(t, test_topics);
    suite_add_tcase(s, t);
    tcase_add_checked_fixture(a, setup, teardown);
    tcase_add_test(a, test_apply);
    tcase_add_test(a, test_apply_no_node_topics);
    suite_add_tcase(s, a);
    return s;
}

int
main(void)
{
    SRunner *r = srunner_create(mqtt_suite());
    int      failed;

    srunner_run_all(r, CK_NORMAL);
    failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
