/*
 * tests/integ/integ_mqtt.c: the MQTT feed (broker/mqtt.c, docs/feed.md
 * "MQTT"): two uabrokers fed from one mosquitto, on loopback.
 *
 *   1. `uabroker -t` refuses mqtt.url with mqtt.host, a URL that is not
 *      mqtt[s]://, mqtts:// without mqtt.tls_ca, reconnect_min_ms over
 *      reconnect_max_ms (exit 2, the message names the key);
 *   2. starts mosquitto (a config file: `listener PORT 127.0.0.1`,
 *      `allow_anonymous true`; a TLS listener for step 7) and two brokers
 *      (-w 1 each, own ports and runtime dirs, mqtt.max_payload_bytes 256,
 *      reconnect 100..500 ms);
 *      both report mqtt.connected 1 in /stats;
 *   3. publishes (QoS 1, libmosquitto) a batch on uabroker/feed/plc1: an
 *      Int32, a Double with status and ts, a quoted String, a line for a
 *      node that does not exist; and one value on the per-node topic
 *      uabroker/feed/ns=1;s=v2; an OPC UA Read on both brokers sees every
 *      value (polled with a deadline), the status and the source
 *      timestamp; /stats counts 2 messages, 4 lines applied, 1 refused;
 *   4. a payload of exactly mqtt.max_payload_bytes is applied, one byte
 *      more is refused and counted (payloads_too_large 1), on both;
 *   5. mosquitto killed: both report connected 0 and keep serving OPC UA
 *      (a Read on the old session and a new session); mosquitto started
 *      again on the same port: both reconnect (reconnects 1), a new value
 *      arrives on both; each broker logged the loss once, not per retry;
 *   6. /metrics carries the uabroker_mqtt_* families with HELP and TYPE;
 *   7. TLS: mosquitto has a second listener with a certificate of a test CA
 *      (made with the openssl command); a third broker with
 *      mqtt.url=mqtts://127.0.0.1:PORT and that CA in mqtt.tls_ca connects
 *      and gets a value published on the plain listener; a fourth, with
 *      another CA, never connects (the certificate is checked); then a
 *      third listener with a password file (mosquitto_passwd): the right
 *      mqtt.username / mqtt.password_file connects and gets a value, a
 *      wrong password is refused (not authorised) and said once;
 *   8. a peer that accepts TCP and never answers CONNECT (keepalive 5 s):
 *      the broker drops it and connects again, and says so once;
 *   9. mqtt.clean_session false with a client_id: a broker stopped, a
 *      QoS 1 value published meanwhile, the broker started again: the
 *      value arrives (the MQTT broker kept the session);
 *  10. SIGTERM: every broker exits 0.
 *
 * mosquitto is $MOSQUITTO_BIN, else `mosquitto` on PATH, else
 * /usr/sbin/mosquitto (Debian's package; deploy/install-deps.sh --test,
 * which installs openssl too: $OPENSSL_BIN, else `openssl` on PATH).
 * Prints "ok N - what" / "FAIL N - what" and "integ_mqtt: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mosquitto.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IQ_WATCHDOG_S   180
#define IQ_START_MS     30000
#define IQ_WAIT_MS      15000       /* a value, a state to arrive */
#define IQ_ARENA        (1u << 20)
#define IQ_MAX_PAYLOAD  256         /* mqtt.max_payload_bytes */
#define IQ_NB           2           /* brokers */
#define IQ_NVAL         6

struct iq_broker {
    char          dir[PATH_MAX + 16];
    char          log[PATH_MAX + 32];
    pid_t         pid;
    uint16_t      port;
    uint16_t      sport;
    struct uaconn c;
};

/* One Read: v0, v2, v4, v6 (Int32), the Static Double and String. */
struct iq_snap {
    bool      ok;
    int32_t   v[4];
    double    d;
    ua_status d_status;
    int64_t   d_src;
    char      s[64];
};

static char             iq_dir[PATH_MAX - 64];
static char             iq_bin[PATH_MAX];
static char             iq_mosq[PATH_MAX];
static char             iq_openssl_bin[PATH_MAX];
static char             iq_passwd_bin[PATH_MAX];
static char             iq_mosq_conf[PATH_MAX + 16];
static char             iq_mosq_log[PATH_MAX + 16];
static uint16_t         iq_mport;
static uint16_t         iq_tport;   /* mosquitto's TLS listener */
static uint16_t         iq_aport;   /* ... and its password listener */
static pid_t            iq_mosq_pid = -1;
static struct iq_broker iq_b[IQ_NB];
static struct ua_arena  iq_arena;
static bool             iq_published;

/* $env, else name on PATH, else fallback (may be NULL) into out; false
 * when none is executable. */
static bool
iq_find(const char *env, const char *name, const char *fallback, char *out,
        size_t cap)
{
    const char *e = getenv(env);
    const char *path = getenv("PATH");

    if (e != NULL && e[0] != '\0') {
        snprintf(out, cap, "%s", e);
        return access(out, X_OK) == 0;
    }
    while (path != NULL && *path != '\0') {
        const char *c = strchr(path, ':');
        size_t      n = c != NULL ? (size_t)(c - path) : strlen(path);

        if (n > 0 && n + strlen(name) + 2 < cap) {
            snprintf(out, cap, "%.*s/%s", (int)n, path, name);
            if (access(out, X_OK) == 0)
                return true;
        }
        path = c != NULL ? c + 1 : NULL;
    }
    if (fallback == NULL)
        return false;
    snprintf(out, cap, "%s", fallback);
    return access(out, X_OK) == 0;
}

/* Whether something accepts TCP connections on 127.0.0.1:port. */
static bool
iq_listening(uint16_t port)
{
    struct sockaddr_in sa;
    int                s = socket(AF_INET, SOCK_STREAM, 0);
    bool               ok;

    if (s == -1)
        return false;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(s);
    return ok;
}

/* mosquitto on 127.0.0.1:iq_mport, up to 10 s for its listener. */
static void
iq_mosq_start(void)
{
    char *const av[] = { iq_mosq, "-c", iq_mosq_conf, NULL };
    uint64_t    until = itest_ms() + 10000;

    iq_mosq_pid = itest_spawn(iq_mosq_log, av);
    while (!iq_listening(iq_mport)) {
        if (itest_ms() > until || !itest_alive(iq_mosq_pid))
            itest_fatal("mosquitto does not listen on %u (log %s)",
                        iq_mport, iq_mosq_log);
        itest_sleep_ms(20);
    }
}

static void
iq_on_publish(struct mosquitto *m, void *obj, int mid)
{
    (void)m;
    (void)obj;
    (void)mid;
    iq_published = true;
}

/* Publish one message (QoS 1) and wait for its PUBACK: true when sent. */
static bool
iq_publish(const char *topic, const void *payload, size_t len)
{
    struct mosquitto *p = mosquitto_new(NULL, true, NULL);
    uint64_t          until = itest_ms() + 10000;
    bool              ok = false;

    if (p == NULL)
        return false;
    mosquitto_publish_callback_set(p, iq_on_publish);
    iq_published = false;
    if (mosquitto_connect(p, "127.0.0.1", iq_mport, 10) == MOSQ_ERR_SUCCESS
        && mosquitto_publish(p, NULL, topic, (int)len, payload, 1, false)
               == MOSQ_ERR_SUCCESS) {
        while (!iq_published && itest_ms() < until)
            if (mosquitto_loop(p, 100, 1) != MOSQ_ERR_SUCCESS)
                break;
        ok = iq_published;
        (void)mosquitto_disconnect(p);
    }
    mosquitto_destroy(p);
    return ok;
}

/* `uabroker -t` with the settings: its exit status, its output in out. */
static int
iq_check_conf(const char *const *sets, char *out, size_t cap)
{
    char  *av[16], log[PATH_MAX + 16];
    size_t len = 0;
    int    n = 0, st;
    pid_t  pid;

    av[n++] = iq_bin;
    av[n++] = "-t";
    av[n++] = "--runtime-dir";
    av[n++] = iq_dir;
    for (int i = 0; sets[i] != NULL && n < 14; i++) {
        av[n++] = "--set";
        av[n++] = (char *)(uintptr_t)sets[i];
    }
    av[n] = NULL;
    snprintf(log, sizeof(log), "%s/check.log", iq_dir);
    pid = itest_spawn(log, av);
    st = itest_wait(pid);
    out[0] = '\0';
    if (itest_read_file(log, (uint8_t *)out, cap, &len) == 0)
        out[len] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
iq_read(struct iq_broker *b, struct iq_snap *sn)
{
    static const char *const names[IQ_NVAL] = {
        "v0", "v2", "v4", "v6", "Demo.Static.Scalar.Double",
        "Demo.Static.Scalar.String" };
    struct ua_read_value_id rv[IQ_NVAL];
    struct ua_read_request  req;
    struct ua_read_response resp;

    memset(sn, 0, sizeof(*sn));
    memset(rv, 0, sizeof(rv));
    for (int i = 0; i < IQ_NVAL; i++) {
        rv[i].node_id = ua_nodeid_str(1, names[i]);
        rv[i].attribute_id = UA_ATTR_VALUE;
        rv[i].index_range.len = -1;
        rv[i].data_encoding.name.len = -1;
    }
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = IQ_NVAL;
    req.nodes_to_read = rv;
    ua_arena_reset(&iq_arena);
    if (uaconn_call(&b->c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &iq_arena)
            != UA_GOOD
        || resp.n_results != IQ_NVAL)
        return;
    for (int i = 0; i < IQ_NVAL; i++) {
        const struct ua_datavalue *dv = &resp.results[i];

        if (!(dv->mask & UA_DV_VALUE) || dv->value.is_array)
            return;
        if (i < 4) {
            if (dv->value.type != UA_BT_INT32)
                return;
            sn->v[i] = *(const int32_t *)dv->value.data;
        } else if (i == 4) {
            if (dv->value.type != UA_BT_DOUBLE)
                return;
            sn->d = *(const double *)dv->value.data;
            sn->d_status = (dv->mask & UA_DV_STATUS) ? dv->status : UA_GOOD;
            sn->d_src = (dv->mask & UA_DV_SOURCE_TS) ? dv->source_ts : 0;
        } else {
            const struct ua_string *s = dv->value.data;

            if (dv->value.type != UA_BT_STRING)
                return;
            snprintf(sn->s, sizeof(sn->s), "%.*s",
                     s->len > 0 ? (int)s->len : 0, (const char *)s->data);
        }
    }
    sn->ok = true;
}

/* One Read of Int32 node ns=1;s=name on c: its value, or INT32_MIN. */
static int32_t
iq_read_int(struct uaconn *c, const char *name)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_str(1, name);
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(&iq_arena);
    if (uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &iq_arena)
            != UA_GOOD
        || resp.n_results != 1 || !(resp.results[0].mask & UA_DV_VALUE)
        || resp.results[0].value.is_array
        || resp.results[0].value.type != UA_BT_INT32)
        return INT32_MIN;
    return *(const int32_t *)resp.results[0].value.data;
}

/* A counter of /stats "mqtt" of broker b, or UINT64_MAX. */
static uint64_t
iq_stat(struct iq_broker *b, const char *key)
{
    char       *body = NULL;
    const char *at;
    uint64_t    v = UINT64_MAX;

    if (itest_http(b->sport, "GET", "/stats", &body) == 200
        && (at = itest_json_find(body, "mqtt")) != NULL
        && !itest_json_u64(at, key, &v))
        v = UINT64_MAX;
    free(body);
    return v;
}

/* Poll until /stats mqtt.key == want on every broker: true, or false
 * after IQ_WAIT_MS. */
static bool
iq_wait_stat(const char *key, uint64_t want)
{
    uint64_t until = itest_ms() + IQ_WAIT_MS;

    for (;;) {
        bool all = true;

        for (int i = 0; i < IQ_NB; i++)
            if (iq_stat(&iq_b[i], key) != want)
                all = false;
        if (all)
            return true;
        if (itest_ms() > until)
            return false;
        itest_sleep_ms(50);
    }
}

/* Poll until v<2 * idx> == want on broker b: true, or false after
 * IQ_WAIT_MS; *last gets the last Read. */
static bool
iq_wait_int(struct iq_broker *b, int idx, int32_t want, struct iq_snap *last)
{
    uint64_t until = itest_ms() + IQ_WAIT_MS;

    for (;;) {
        iq_read(b, last);
        if (last->ok && last->v[idx] == want)
            return true;
        if (itest_ms() > until)
            return false;
        itest_sleep_ms(50);
    }
}

/* How many times needle occurs in file path. */
static unsigned
iq_count_in(const char *path, const char *needle)
{
    static uint8_t buf[1 << 20];
    size_t         len = 0;
    unsigned       n = 0;
    const char    *p;

    if (itest_read_file(path, buf, sizeof(buf), &len) != 0)
        return 0;
    buf[len] = '\0';
    for (p = (const char *)buf; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void
iq_step_config(void)
{
    static const char *const both[] = { "mqtt.url=mqtt://127.0.0.1",
                                        "mqtt.host=127.0.0.1", NULL };
    static const char *const http[] = { "mqtt.url=http://127.0.0.1", NULL };
    static const char *const tls[] = { "mqtt.url=mqtts://127.0.0.1", NULL };
    static const char *const backoff[] = { "mqtt.host=127.0.0.1",
                                           "mqtt.reconnect_min_ms=2000",
                                           "mqtt.reconnect_max_ms=1000",
                                           NULL };
    static const char *const good[] = { "mqtt.url=mqtt://[::1]:1884/",
                                        "mqtt.qos=2", NULL };
    char out[4096];
    int  rc;

    rc = iq_check_conf(both, out, sizeof(out));
    itest_check(rc == 2 && strstr(out, "mqtt.host") != NULL,
                "-t: mqtt.url and mqtt.host together refused (exit %d): %s",
                rc, out);
    rc = iq_check_conf(http, out, sizeof(out));
    itest_check(rc == 2 && strstr(out, "mqtt.url") != NULL,
                "-t: mqtt.url http:// refused (exit %d): %s", rc, out);
    rc = iq_check_conf(tls, out, sizeof(out));
    itest_check(rc == 2 && strstr(out, "mqtt.tls_ca") != NULL,
                "-t: mqtts:// without mqtt.tls_ca refused (exit %d): %s", rc,
                out);
    rc = iq_check_conf(backoff, out, sizeof(out));
    itest_check(rc == 2 && strstr(out, "reconnect_min_ms") != NULL,
                "-t: reconnect_min_ms over reconnect_max_ms refused (exit "
                "%d): %s", rc, out);
    rc = iq_check_conf(good, out, sizeof(out));
    itest_check(rc == 0, "-t: mqtt://[::1]:1884/ with QoS 2 accepted (exit "
                "%d): %s", rc, out);
}

static void
iq_start_brokers(void)
{
    char port[64];

    snprintf(port, sizeof(port), "mqtt.port=%u", iq_mport);
    for (int i = 0; i < IQ_NB; i++) {
        struct iq_broker *b = &iq_b[i];
        const char *const extra[] = {
            "--set", "mqtt.host=127.0.0.1", "--set", port,
            "--set", "mqtt.max_payload_bytes=256",
            "--set", "mqtt.reconnect_min_ms=100",
            "--set", "mqtt.reconnect_max_ms=500",
            "--set", "mqtt.keepalive=5", NULL
        };
        ua_status s;

        snprintf(b->dir, sizeof(b->dir), "%s/b%d", iq_dir, i);
        itest_mkdirs(b->dir);
        snprintf(b->log, sizeof(b->log), "%s/b%d/broker.log", iq_dir, i);
        b->pid = itest_broker_start(iq_bin, 1, b->dir, b->log, extra,
                                    IQ_START_MS, &b->port, &b->sport);
        s = uaconn_start_retry(&b->c, "127.0.0.1", b->port, IQ_START_MS);
        if (s != UA_GOOD)
            itest_fatal("broker %d: no session: 0x%08X", i, s);
    }
}

/* 3. A batch and a per-node value, on both. */
static void
iq_step_values(void)
{
    static const char batch[] =
        "ns=1;s=v0=42\n"
        "ns=1;s=Demo.Static.Scalar.Double=3.25;status=0x40000000;"
        "ts=2024-05-01T12:00:00Z\r\n"
        "# a comment\n"
        "ns=1;s=Demo.Static.Scalar.String=\"hello; mqtt\"\n"
        "ns=1;s=nope=1\n";
    /* 2024-05-01T12:00:00Z as a DateTime. */
    const int64_t ts = (INT64_C(1714564800) * 10000000)
                       + INT64_C(116444736000000000);

    itest_check(iq_publish("uabroker/feed/plc1", batch, strlen(batch)),
                "published a batch of 4 lines on uabroker/feed/plc1");
    itest_check(iq_publish("uabroker/feed/ns=1;s=v2", "7", 1),
                "published 7 on uabroker/feed/ns=1;s=v2");
    for (int i = 0; i < IQ_NB; i++) {
        struct iq_snap sn;
        bool           got = iq_wait_int(&iq_b[i], 1, 7, &sn);

        got = got && iq_wait_int(&iq_b[i], 0, 42, &sn);
        itest_check(got && sn.d == 3.25 && sn.d_status == 0x40000000u
                        && sn.d_src == ts
                        && strcmp(sn.s, "hello; mqtt") == 0,
                    "broker %d: v0 %d, v2 %d, Double %g status 0x%08X "
                    "source ts %s, String \"%s\"", i, sn.v[0], sn.v[1],
                    sn.d, sn.d_status, sn.d_src == ts ? "as sent" : "wrong",
                    sn.s);
    }
    for (int i = 0; i < IQ_NB; i++) {
        uint64_t msgs = iq_stat(&iq_b[i], "messages");
        uint64_t ok = iq_stat(&iq_b[i], "lines_applied");
        uint64_t bad = iq_stat(&iq_b[i], "lines_refused");

        itest_check(msgs == 2 && ok == 4 && bad == 1,
                    "broker %d /stats mqtt: %llu messages (2), %llu lines "
                    "applied (4), %llu refused (1)", i,
                    (unsigned long long)msgs, (unsigned long long)ok,
                    (unsigned long long)bad);
    }
}

/* 4. mqtt.max_payload_bytes: at the limit applied, one more refused. */
static void
iq_step_limit(void)
{
    char at[IQ_MAX_PAYLOAD + 2];
    int  n;

    n = snprintf(at, sizeof(at), "ns=1;s=v4=1234\n#");
    memset(at + n, '#', sizeof(at) - (size_t)n);
    itest_check(iq_publish("uabroker/feed/plc1", at, IQ_MAX_PAYLOAD),
                "published a batch of exactly %u bytes", IQ_MAX_PAYLOAD);
    n = snprintf(at, sizeof(at), "ns=1;s=v4=5678\n#");
    memset(at + n, '#', sizeof(at) - (size_t)n);
    itest_check(iq_publish("uabroker/feed/plc1", at, IQ_MAX_PAYLOAD + 1),
                "published a batch of %u bytes", IQ_MAX_PAYLOAD + 1);
    itest_check(iq_publish("uabroker/feed/ns=1;s=v6", "1", 1),
                "published 1 on uabroker/feed/ns=1;s=v6 (a marker)");
    for (int i = 0; i < IQ_NB; i++) {
        struct iq_snap sn;
        bool           got = iq_wait_int(&iq_b[i], 3, 1, &sn);
        uint64_t       big = iq_stat(&iq_b[i], "payloads_too_large");

        itest_check(got && sn.v[2] == 1234 && big == 1,
                    "broker %d: %u bytes applied (v4 %d), %u refused and "
                    "counted (payloads_too_large %llu)", i, IQ_MAX_PAYLOAD,
                    sn.v[2], IQ_MAX_PAYLOAD + 1, (unsigned long long)big);
    }
}

/* 5. The MQTT broker goes away and comes back. */
static void
iq_step_reconnect(void)
{
    itest_kill(iq_mosq_pid);
    iq_mosq_pid = -1;
    itest_check(iq_wait_stat("connected", 0),
                "mosquitto killed: both brokers report mqtt.connected 0");
    /* Long enough for several retries (100..500 ms). */
    itest_sleep_ms(1500);
    for (int i = 0; i < IQ_NB; i++) {
        struct iq_snap sn;
        struct uaconn  c2;
        ua_status      s;

        iq_read(&iq_b[i], &sn);
        itest_check(sn.ok && sn.v[0] == 42, "broker %d without MQTT: Read "
                    "on its session: v0 %d", i, sn.v[0]);
        s = uaconn_start_retry(&c2, "127.0.0.1", iq_b[i].port, 5000);
        itest_check(s == UA_GOOD && uaconn_read_time(&c2, &iq_arena)
                                        == UA_GOOD,
                    "broker %d without MQTT: a new session reads the time "
                    "(0x%08X)", i, s);
        if (s == UA_GOOD) {
            uaconn_close(&c2);
            ua_client_clear(&c2.cl);
            uaconn_clear(&c2);
        }
    }
    iq_mosq_start();
    itest_check(iq_wait_stat("connected", 1),
                "mosquitto back on port %u: both brokers report "
                "mqtt.connected 1", iq_mport);
    for (int i = 0; i < IQ_NB; i++) {
        uint64_t r = iq_stat(&iq_b[i], "reconnects");

        itest_check(r == 1, "broker %d: mqtt.reconnects %llu (1)", i,
                    (unsigned long long)r);
    }
    itest_check(iq_publish("uabroker/feed/plc2", "ns=1;s=v0=43\n", 13),
                "published v0=43 after the reconnection");
    for (int i = 0; i < IQ_NB; i++) {
        struct iq_snap sn;
        bool           got = iq_wait_int(&iq_b[i], 0, 43, &sn);

        itest_check(got, "broker %d after the reconnection: v0 %d (43)", i,
                    sn.v[0]);
    }
    for (int i = 0; i < IQ_NB; i++) {
        unsigned lost = iq_count_in(iq_b[i].log, "mqtt: lost");
        unsigned down = iq_count_in(iq_b[i].log, "retrying, backoff");
        unsigned up = iq_count_in(iq_b[i].log, "mqtt: connected to");

        itest_check(lost == 1 && down == 1 && up == 2,
                    "broker %d logged the loss once (%u \"lost\", %u "
                    "\"retrying\" lines) and 2 connections (%u)", i, lost,
                    down, up);
    }
}

/* 6. /metrics. */
static void
iq_step_metrics(void)
{
    static const char *const want[] = {
        "# TYPE uabroker_mqtt_connected gauge\nuabroker_mqtt_connected 1\n",
        "# HELP uabroker_mqtt_messages_total ",
        "# TYPE uabroker_mqtt_messages_total counter\n"
        "uabroker_mqtt_messages_total 6\n",
        "# TYPE uabroker_mqtt_lines_applied_total counter\n",
        "# TYPE uabroker_mqtt_lines_refused_total counter\n"
        "uabroker_mqtt_lines_refused_total 1\n",
        "# TYPE uabroker_mqtt_payloads_too_large_total counter\n"
        "uabroker_mqtt_payloads_too_large_total 1\n",
        "# TYPE uabroker_mqtt_reconnects_total counter\n"
        "uabroker_mqtt_reconnects_total 1\n",
    };

    for (int i = 0; i < IQ_NB; i++) {
        char *body = NULL;
        int   code = itest_http(iq_b[i].sport, "GET", "/metrics", &body);
        int   miss = -1;

        for (size_t k = 0; code == 200 && k < sizeof(want) / sizeof(*want);
             k++)
            if (strstr(body, want[k]) == NULL && miss < 0)
                miss = (int)k;
        itest_check(code == 200 && miss < 0, "broker %d /metrics: the "
                    "uabroker_mqtt_* families (HTTP %d, missing: %s)", i,
                    code, miss < 0 ? "none" : want[miss]);
        free(body);
    }
}

/* Run the openssl command with args (NULL-terminated after "openssl"):
 * true when it exits 0. */
static bool
iq_openssl(const char *const *args)
{
    char *av[24], log[PATH_MAX + 16];
    int   n = 0, st;

    av[n++] = iq_openssl_bin;
    for (int i = 0; args[i] != NULL && n < 23; i++)
        av[n++] = (char *)(uintptr_t)args[i];
    av[n] = NULL;
    snprintf(log, sizeof(log), "%s/openssl.log", iq_dir);
    st = itest_wait(itest_spawn(log, av));
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A CA (name.pem, name.key) and, when srv, a server certificate of it for
 * 127.0.0.1 and localhost (srv.pem, srv.key). */
static void
iq_make_ca(const char *name, bool srv)
{
    char key[PATH_MAX], pem[PATH_MAX], subj[64], skey[PATH_MAX],
         spem[PATH_MAX], csr[PATH_MAX], ext[PATH_MAX];
    static const char san[] = "subjectAltName=IP:127.0.0.1,DNS:localhost\n";

    snprintf(key, sizeof(key), "%.4000s/%s.key", iq_dir, name);
    snprintf(pem, sizeof(pem), "%.4000s/%s.pem", iq_dir, name);
    snprintf(subj, sizeof(subj), "/CN=uabroker test %s", name);
    {
        const char *const a[] = { "req", "-x509", "-newkey", "rsa:2048",
                                  "-nodes", "-days", "2", "-subj", subj,
                                  "-keyout", key, "-out", pem, NULL };

        if (!iq_openssl(a))
            itest_fatal("openssl req -x509 (%s) failed", name);
    }
    if (!srv)
        return;
    snprintf(skey, sizeof(skey), "%.4000s/srv.key", iq_dir);
    snprintf(spem, sizeof(spem), "%.4000s/srv.pem", iq_dir);
    snprintf(csr, sizeof(csr), "%.4000s/srv.csr", iq_dir);
    snprintf(ext, sizeof(ext), "%.4000s/srv.ext", iq_dir);
    if (itest_write_file(ext, (const uint8_t *)san, strlen(san)) != 0)
        itest_fatal("cannot write %s", ext);
    {
        const char *const a[] = { "req", "-newkey", "rsa:2048", "-nodes",
                                  "-subj", "/CN=localhost", "-keyout", skey,
                                  "-out", csr, NULL };
        const char *const b[] = { "x509", "-req", "-in", csr, "-CA", pem,
                                  "-CAkey", key, "-CAcreateserial",
                                  "-days", "2", "-extfile", ext, "-out",
                                  spem, NULL };

        if (!iq_openssl(a) || !iq_openssl(b))
            itest_fatal("openssl: the server certificate failed");
    }
}

/* 7. TLS: the right CA connects and gets values, another CA does not. */
static void
iq_step_tls(void)
{
    struct iq_broker t[2];
    char             url[64], ca[2][PATH_MAX + 32];
    uint64_t         until;
    bool             up = false;

    snprintf(url, sizeof(url), "mqtt.url=mqtts://127.0.0.1:%u", iq_tport);
    snprintf(ca[0], sizeof(ca[0]), "mqtt.tls_ca=%.4000s/ca.pem", iq_dir);
    snprintf(ca[1], sizeof(ca[1]), "mqtt.tls_ca=%.4000s/other.pem", iq_dir);
    for (int i = 0; i < 2; i++) {
        const char *const extra[] = {
            "--set", url, "--set", ca[i],
            "--set", "mqtt.reconnect_min_ms=100",
            "--set", "mqtt.reconnect_max_ms=500", NULL
        };

        memset(&t[i], 0, sizeof(t[i]));
        snprintf(t[i].dir, sizeof(t[i].dir), "%.4000s/t%d", iq_dir, i);
        itest_mkdirs(t[i].dir);
        snprintf(t[i].log, sizeof(t[i].log), "%.4000s/t%d/broker.log",
                 iq_dir, i);
        t[i].pid = itest_broker_start(iq_bin, 1, t[i].dir, t[i].log, extra,
                                      IQ_START_MS, &t[i].port, &t[i].sport);
    }
    until = itest_ms() + IQ_WAIT_MS;
    while (!(up = iq_stat(&t[0], "connected") == 1) && itest_ms() < until)
        itest_sleep_ms(50);
    itest_check(up, "mqtts:// with the server's CA in mqtt.tls_ca: "
                "connected and subscribed");
    if (up) {
        struct iq_snap sn;
        ua_status      s;
        bool           got = false;

        s = uaconn_start_retry(&t[0].c, "127.0.0.1", t[0].port,
                               IQ_START_MS);
        itest_check(iq_publish("uabroker/feed/ns=1;s=v6", "66", 2),
                    "published 66 on uabroker/feed/ns=1;s=v6");
        if (s == UA_GOOD) {
            got = iq_wait_int(&t[0], 3, 66, &sn);
            uaconn_close(&t[0].c);
            ua_client_clear(&t[0].c.cl);
            uaconn_clear(&t[0].c);
        }
        itest_check(got, "over TLS: v6 %d (66)", got ? 66 : sn.v[3]);
    }
    /* The other one: refused, said once however many attempts follow. */
    until = itest_ms() + IQ_WAIT_MS;
    while (iq_count_in(t[1].log, "mqtt: cannot reach") == 0
           && itest_ms() < until)
        itest_sleep_ms(50);
    itest_sleep_ms(1000);
    itest_check(iq_stat(&t[1], "connected") == 0
                    && iq_count_in(t[1].log, "mqtt: cannot reach") == 1
                    && iq_count_in(t[1].log, "mqtt: connected") == 0,
                "mqtts:// with another CA: never connected, said once");
    for (int i = 0; i < 2; i++)
        itest_check(itest_stop(t[i].pid, 5000) == 0,
                    "TLS broker %d: SIGTERM, exit 0", i);
}

/* 7b. User name and password: the right password connects and gets
 * values, a wrong one is refused (once in the log). */
static void
iq_step_auth(void)
{
    struct iq_broker t[2];
    char             port[64], pf[2][PATH_MAX + 32], pw[PATH_MAX];
    uint64_t         until;
    bool             up = false, got = false;

    for (int i = 0; i < 2; i++) {
        snprintf(pw, sizeof(pw), "%.4000s/pw%d", iq_dir, i);
        if (itest_write_file(pw, (const uint8_t *)(i ? "wrong\n"
                                                      : "s3cret\n"),
                             i ? 6 : 7) != 0)
            itest_fatal("cannot write %s", pw);
        snprintf(pf[i], sizeof(pf[i]), "mqtt.password_file=%s", pw);
    }
    snprintf(port, sizeof(port), "mqtt.port=%u", iq_aport);
    for (int i = 0; i < 2; i++) {
        const char *const extra[] = {
            "--set", "mqtt.host=127.0.0.1", "--set", port,
            "--set", "mqtt.username=feeder", "--set", pf[i],
            "--set", "mqtt.reconnect_min_ms=100",
            "--set", "mqtt.reconnect_max_ms=500", NULL
        };

        memset(&t[i], 0, sizeof(t[i]));
        snprintf(t[i].dir, sizeof(t[i].dir), "%.4000s/a%d", iq_dir, i);
        itest_mkdirs(t[i].dir);
        snprintf(t[i].log, sizeof(t[i].log), "%.4000s/a%d/broker.log",
                 iq_dir, i);
        t[i].pid = itest_broker_start(iq_bin, 1, t[i].dir, t[i].log, extra,
                                      IQ_START_MS, &t[i].port, &t[i].sport);
    }
    until = itest_ms() + IQ_WAIT_MS;
    while (!(up = iq_stat(&t[0], "connected") == 1) && itest_ms() < until)
        itest_sleep_ms(50);
    itest_check(up, "mqtt.username and the right mqtt.password_file: "
                "connected and subscribed");
    if (up && uaconn_start_retry(&t[0].c, "127.0.0.1", t[0].port,
                                 IQ_START_MS) == UA_GOOD) {
        itest_check(iq_publish("uabroker/feed/ns=1;s=v10", "1010", 4),
                    "published 1010 on uabroker/feed/ns=1;s=v10");
        until = itest_ms() + IQ_WAIT_MS;
        while (!(got = iq_read_int(&t[0].c, "v10") == 1010)
               && itest_ms() < until)
            itest_sleep_ms(50);
        uaconn_close(&t[0].c);
        ua_client_clear(&t[0].c.cl);
        uaconn_clear(&t[0].c);
    }
    itest_check(got, "with a password: v10 1010 arrived");
    until = itest_ms() + IQ_WAIT_MS;
    while (iq_count_in(t[1].log, "mqtt: cannot reach") == 0
           && itest_ms() < until)
        itest_sleep_ms(50);
    itest_sleep_ms(1000);
    itest_check(iq_stat(&t[1], "connected") == 0
                    && iq_count_in(t[1].log, "mqtt: cannot reach") == 1
                    && iq_count_in(t[1].log, "not authorised") == 1,
                "a wrong password: refused (not authorised), said once");
    for (int i = 0; i < 2; i++)
        itest_check(itest_stop(t[i].pid, 5000) == 0,
                    "password broker %d: SIGTERM, exit 0", i);
}

/* 8. A peer that takes the TCP connection and never answers CONNECT: the
 * broker gives up after about its keepalive and tries again. */
static void
iq_step_silent(void)
{
    struct sockaddr_in sa;
    struct iq_broker   t;
    char               port[64];
    int                ls, fds[16], nfd = 0;
    uint64_t           until;
    socklen_t          sl = sizeof(sa);

    ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (ls == -1 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0
        || listen(ls, 16) != 0
        || getsockname(ls, (struct sockaddr *)&sa, &sl) != 0)
        itest_fatal("silent listener: %s", strerror(errno));
    snprintf(port, sizeof(port), "mqtt.port=%u", ntohs(sa.sin_port));
    {
        const char *const extra[] = {
            "--set", "mqtt.host=127.0.0.1", "--set", port,
            "--set", "mqtt.keepalive=5",
            "--set", "mqtt.reconnect_min_ms=100",
            "--set", "mqtt.reconnect_max_ms=500", NULL
        };

        memset(&t, 0, sizeof(t));
        snprintf(t.dir, sizeof(t.dir), "%.4000s/s0", iq_dir);
        itest_mkdirs(t.dir);
        snprintf(t.log, sizeof(t.log), "%.4000s/s0/broker.log", iq_dir);
        t.pid = itest_broker_start(iq_bin, 1, t.dir, t.log, extra,
                                   IQ_START_MS, &t.port, &t.sport);
    }
    /* Keep every connection open, answer nothing. */
    until = itest_ms() + 20000;
    while (nfd < 2 && itest_ms() < until) {
        int fd = accept(ls, NULL, NULL);

        if (fd != -1 && nfd < 16)
            fds[nfd++] = fd;
        else if (fd != -1)
            close(fd);
        itest_sleep_ms(20);
    }
    itest_check(nfd >= 2 && iq_stat(&t, "connected") == 0
                    && iq_count_in(t.log, "mqtt: cannot reach") == 1
                    && iq_count_in(t.log, "no answer within the keepalive")
                           == 1,
                "a peer that never answers CONNECT: dropped after the "
                "keepalive, connected again (%d connections), said once",
                nfd);
    for (int i = 0; i < nfd; i++)
        close(fds[i]);
    close(ls);
    itest_check(itest_stop(t.pid, 5000) == 0, "silent-peer broker: "
                "SIGTERM, exit 0");
}

/* Start (or start again) the broker of step 9 in t->dir. */
static void
iq_persist_start(struct iq_broker *t, const char *port)
{
    const char *const extra[] = {
        "--set", "mqtt.host=127.0.0.1", "--set", port,
        "--set", "mqtt.client_id=uabroker-integ-persist",
        "--set", "mqtt.clean_session=false",
        "--set", "mqtt.reconnect_min_ms=100",
        "--set", "mqtt.reconnect_max_ms=500", NULL
    };

    t->pid = itest_broker_start(iq_bin, 1, t->dir, t->log, extra,
                                IQ_START_MS, &t->port, &t->sport);
}

/* 9. mqtt.clean_session false: a QoS 1 value published while the broker
 * is stopped arrives when it starts again with its client_id. */
static void
iq_step_persist(void)
{
    struct iq_broker t;
    char             port[64];
    uint64_t         until;
    bool             up = false, got = false;
    ua_status        s;

    memset(&t, 0, sizeof(t));
    snprintf(port, sizeof(port), "mqtt.port=%u", iq_mport);
    snprintf(t.dir, sizeof(t.dir), "%.4000s/p0", iq_dir);
    itest_mkdirs(t.dir);
    snprintf(t.log, sizeof(t.log), "%.4000s/p0/broker.log", iq_dir);
    iq_persist_start(&t, port);
    until = itest_ms() + IQ_WAIT_MS;
    while (!(up = iq_stat(&t, "connected") == 1) && itest_ms() < until)
        itest_sleep_ms(50);
    itest_check(up, "clean_session false: connected and subscribed");
    itest_check(itest_stop(t.pid, 5000) == 0, "clean_session false: "
                "SIGTERM, exit 0 (the MQTT session stays)");
    itest_check(iq_publish("uabroker/feed/plc3", "ns=1;s=v8=88", 12),
                "published v8=88 while that broker is stopped");
    iq_persist_start(&t, port);
    s = uaconn_start_retry(&t.c, "127.0.0.1", t.port, IQ_START_MS);
    if (s == UA_GOOD) {
        until = itest_ms() + IQ_WAIT_MS;
        while (!(got = iq_read_int(&t.c, "v8") == 88) && itest_ms() < until)
            itest_sleep_ms(50);
        uaconn_close(&t.c);
        ua_client_clear(&t.c.cl);
        uaconn_clear(&t.c);
    }
    itest_check(got, "started again with the same client_id: the value "
                "published meanwhile arrived (v8 88)");
    itest_check(itest_stop(t.pid, 5000) == 0, "clean_session false, "
                "second run: SIGTERM, exit 0");
}

int
main(int argc, char **argv)
{
    char conf[PATH_MAX * 2];

    itest_init("integ_mqtt");
    (void)argc;
    itest_guard(IQ_WATCHDOG_S, NULL);
    ua_arena_init(&iq_arena, malloc(IQ_ARENA), IQ_ARENA);
    itest_broker_bin(argv[0], iq_bin, sizeof(iq_bin));
    if (!iq_find("MOSQUITTO_BIN", "mosquitto", "/usr/sbin/mosquitto",
                 iq_mosq, sizeof(iq_mosq)))
        itest_fatal("no mosquitto (set MOSQUITTO_BIN, or install Debian's "
                    "mosquitto: deploy/install-deps.sh --test)");
    if (!iq_find("OPENSSL_BIN", "openssl", NULL, iq_openssl_bin,
                 sizeof(iq_openssl_bin)))
        itest_fatal("no openssl command (deploy/install-deps.sh --test)");
    if (!iq_find("MOSQUITTO_PASSWD_BIN", "mosquitto_passwd",
                 "/usr/bin/mosquitto_passwd", iq_passwd_bin,
                 sizeof(iq_passwd_bin)))
        itest_fatal("no mosquitto_passwd (Debian's mosquitto)");
    itest_tmpdir("uabroker-mqtt", iq_dir, sizeof(iq_dir));
    mosquitto_lib_init();

    /* 1. The settings. */
    iq_step_config();

    /* 2. mosquitto and two brokers. */
    iq_mport = itest_free_port();
    if (iq_mport == 0)
        itest_fatal("no free port");
    snprintf(iq_mosq_conf, sizeof(iq_mosq_conf), "%s/mosquitto.conf",
             iq_dir);
    snprintf(iq_mosq_log, sizeof(iq_mosq_log), "%s/mosquitto.log", iq_dir);
    iq_tport = itest_free_port();
    if (iq_tport == 0 || iq_tport == iq_mport)
        itest_fatal("no second free port");
    iq_aport = itest_free_port();
    if (iq_aport == 0 || iq_aport == iq_mport || iq_aport == iq_tport)
        itest_fatal("no third free port");
    iq_make_ca("ca", true);
    iq_make_ca("other", false);
    {
        char        pwf[PATH_MAX];
        const char *av[8];
        int         st;

        snprintf(pwf, sizeof(pwf), "%.4000s/passwd", iq_dir);
        av[0] = iq_passwd_bin;
        av[1] = "-b";
        av[2] = "-c";
        av[3] = pwf;
        av[4] = "feeder";
        av[5] = "s3cret";
        av[6] = NULL;
        st = itest_wait(itest_spawn(iq_mosq_log, (char *const *)av));
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            itest_fatal("mosquitto_passwd failed");
    }
    /* As root mosquitto would drop to its own user, which cannot read the
     * key in this 0700 directory: stay. */
    snprintf(conf, sizeof(conf), "%sper_listener_settings true\n"
             "persistence false\n"
             "listener %u 127.0.0.1\nallow_anonymous true\n"
             "listener %u 127.0.0.1\nallow_anonymous true\n"
             "cafile %.1000s/ca.pem\n"
             "certfile %.1000s/srv.pem\nkeyfile %.1000s/srv.key\n"
             "listener %u 127.0.0.1\nallow_anonymous false\n"
             "password_file %.1000s/passwd\n",
             geteuid() == 0 ? "user root\n" : "", iq_mport, iq_tport, iq_dir,
             iq_dir, iq_dir, iq_aport, iq_dir);
    if (itest_write_file(iq_mosq_conf, (const uint8_t *)conf, strlen(conf))
            != 0)
        itest_fatal("cannot write %s", iq_mosq_conf);
    iq_mosq_start();
    iq_start_brokers();
    itest_check(iq_wait_stat("connected", 1),
                "both brokers connected and subscribed (/stats "
                "mqtt.connected 1)");

    iq_step_values();
    iq_step_limit();
    iq_step_reconnect();
    iq_step_metrics();
    iq_step_tls();
    iq_step_auth();
    iq_step_silent();
    iq_step_persist();

    /* 10. The end. */
    for (int i = 0; i < IQ_NB; i++) {
        uaconn_close(&iq_b[i].c);
        ua_client_clear(&iq_b[i].c.cl);
        uaconn_clear(&iq_b[i].c);
        itest_check(itest_stop(iq_b[i].pid, 5000) == 0,
                    "broker %d: SIGTERM, exit 0", i);
    }
    if (iq_mosq_pid != -1)
        itest_kill(iq_mosq_pid);
    mosquitto_lib_cleanup();
    if (itest_failures() != 0)
        for (int i = 0; i < IQ_NB; i++)
            printf("# broker %d log: %s\n", i, iq_b[i].log);
    return itest_finish();
}
