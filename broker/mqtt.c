/*
 * broker/mqtt.c: the MQTT feed (mqtt.h; the topics and the format in
 * docs/feed.md "MQTT").
 *
 * libmosquitto runs on the broker's libevent loop, without its thread:
 * mosquitto_socket() is watched for reading (mosquitto_loop_read), and for
 * writing while mosquitto_want_write() says there is something queued
 * (mosquitto_loop_write); a 1 s timer calls mosquitto_loop_misc (keepalive
 * PINGREQ, and the timeout of a connection that stopped answering); a
 * one-shot timer makes the next connection attempt.  After every call into
 * the library bk_mqtt_sync() looks at its socket again: a new socket (a
 * reconnection) gets new events, no socket (lost) means down and a retry.
 *
 * Messages go through bk_feed_batch(), the feed's own parser and apply
 * path: nothing is parsed here but the topic.
 */
#include "mqtt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mosquitto.h>

#include "alloc.h"
#include "feed.h"
#include "proto/types.h"
#include "shm/log.h"

#define BK_MQTT_LOG         "mqtt"
#define BK_MQTT_TOPIC_MAX   65535       /* MQTT topic names */
#define BK_MQTT_REPORT_MAX  512         /* the first refusal's report */

static int bk_mqtt_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bk_mqtt_read_password(const char *path, char *out, size_t cap,
                                 char *err, size_t errlen);
static void bk_mqtt_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void bk_mqtt_why(struct bk_mqtt *m, const char *what, int rc);
static void bk_mqtt_schedule(struct bk_mqtt *m);
static void bk_mqtt_down(struct bk_mqtt *m);
static void bk_mqtt_sync(struct bk_mqtt *m);
static void bk_mqtt_try(struct bk_mqtt *m);
static void bk_mqtt_on_read(evutil_socket_t fd, short what, void *arg);
static void bk_mqtt_on_write(evutil_socket_t fd, short what, void *arg);
static void bk_mqtt_on_misc(evutil_socket_t fd, short what, void *arg);
static void bk_mqtt_on_retry(evutil_socket_t fd, short what, void *arg);
static void bk_mqtt_cb_connect(struct mosquitto *mosq, void *obj, int rc);
static void bk_mqtt_cb_disconnect(struct mosquitto *mosq, void *obj, int rc);
static void bk_mqtt_cb_subscribe(struct mosquitto *mosq, void *obj, int mid,
                                 int n, const int *granted);
static void bk_mqtt_cb_message(struct mosquitto *mosq, void *obj,
                               const struct mosquitto_message *msg);
static void bk_mqtt_cb_log(struct mosquitto *mosq, void *obj, int level,
                           const char *str);

/* ------------------------------------------------------------ pure */

static int
bk_mqtt_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err != NULL && errlen != 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int
bk_mqtt_parse_url(const char *url, struct bk_mqtt_target *t, char *err,
                  size_t errlen)
{
    const char   *p, *host, *hend;
    unsigned long port;
    char         *end;

    memset(t, 0, sizeof(*t));
    if (strncmp(url, "mqtt://", 7) == 0) {
        p = url + 7;
        t->port = BK_MQTT_PORT;
    } else if (strncmp(url, "mqtts://", 8) == 0) {
        p = url + 8;
        t->port = BK_MQTT_PORT_TLS;
        t->tls = true;
    } else {
        return bk_mqtt_err(err, errlen, "mqtt.url: \"%s\" is not "
                           "mqtt://HOST[:PORT] or mqtts://HOST[:PORT]", url);
    }
    if (*p == '[') {
        host = p + 1;
        hend = strchr(host, ']');
        if (hend == NULL)
            return bk_mqtt_err(err, errlen, "mqtt.url: \"%s\": no ']'",
                               url);
        p = hend + 1;
    } else {
        host = p;
        hend = p + strcspn(p, ":/?#@");
        p = hend;
    }
    if (hend == host)
        return bk_mqtt_err(err, errlen, "mqtt.url: \"%s\": no host", url);
    if ((size_t)(hend - host) >= sizeof(t->host))
        return bk_mqtt_err(err, errlen, "mqtt.url: host too long");
    memcpy(t->host, host, (size_t)(hend - host));
    t->host[hend - host] = '\0';
    if (*p == ':') {
        errno = 0;
        port = strtoul(p + 1, &end, 10);
        if (end == p + 1 || errno != 0 || port == 0 || port > 65535)
            return bk_mqtt_err(err, errlen, "mqtt.url: \"%s\": bad port",
                               url);
        t->port = (uint16_t)port;
        p = end;
    }
    if (*p == '/' && p[1] == '\0')
        p++;
    if (*p != '\0')
        return bk_mqtt_err(err, errlen, "mqtt.url: \"%s\": unexpected \"%s\""
                           " (user names, paths and options are settings of "
                           "their own)", url, p);
    return 0;
}

int
bk_mqtt_check(const struct bk_config *c, struct bk_mqtt_target *t, bool *on,
              char *err, size_t errlen)
{
    struct bk_mqtt_target tt;

    *on = false;
    memset(&tt, 0, sizeof(tt));
    if (c->mqtt_url[0] != '\0' && c->mqtt_host[0] != '\0')
        return bk_mqtt_err(err, errlen, "mqtt.url and mqtt.host are "
                           "exclusive: set one");
    if (c->mqtt_url[0] != '\0') {
        if (bk_mqtt_parse_url(c->mqtt_url, &tt, err, errlen) != 0)
            return -1;
    } else if (c->mqtt_host[0] != '\0') {
        snprintf(tt.host, sizeof(tt.host), "%s", c->mqtt_host);
        tt.port = (uint16_t)c->mqtt_port;
    } else {
        if (t != NULL)
            *t = tt;
        return 0;                       /* off */
    }
    if (c->mqtt_tls_ca[0] != '\0')
        tt.tls = true;
    else if (tt.tls)
        return bk_mqtt_err(err, errlen, "mqtt.url: mqtts:// needs "
                           "mqtt.tls_ca (the CA certificate file)");
    if (c->mqtt_topic[0] == '\0'
        || mosquitto_sub_topic_check(c->mqtt_topic) != MOSQ_ERR_SUCCESS)
        return bk_mqtt_err(err, errlen, "mqtt.topic: \"%s\" is not an MQTT "
                           "topic filter (+ and # are whole levels, # the "
                           "last)", c->mqtt_topic);
    if (!c->mqtt_clean_session && c->mqtt_client_id[0] == '\0')
        return bk_mqtt_err(err, errlen, "mqtt.clean_session false needs "
                           "mqtt.client_id (the default one changes at "
                           "every start: the session would never be "
                           "resumed)");
    if (c->mqtt_password_file[0] != '\0' && c->mqtt_username[0] == '\0')
        return bk_mqtt_err(err, errlen, "mqtt.password_file needs "
                           "mqtt.username");
    if (c->mqtt_reconnect_min_ms > c->mqtt_reconnect_max_ms)
        return bk_mqtt_err(err, errlen, "mqtt.reconnect_min_ms (%u) must not "
                           "exceed mqtt.reconnect_max_ms (%u)",
                           c->mqtt_reconnect_min_ms, c->mqtt_reconnect_max_ms);
    if (t != NULL)
        *t = tt;
    *on = true;
    return 0;
}

int
bk_mqtt_topic_prefix(const char *filter)
{
    size_t n = strlen(filter);

    if (n == 0 || filter[n - 1] != '#' || (n >= 2 && filter[n - 2] != '/'))
        return -1;
    if (memchr(filter, '+', n - 1) != NULL)
        return -1;
    return (int)(n - 1);
}

bool
bk_mqtt_topic_node(const char *filter, int plen, const char *topic,
                   const char **id, size_t *idlen)
{
    const char *r;
    size_t      n;

    if (plen < 0 || strncmp(topic, filter, (size_t)plen) != 0)
        return false;
    r = topic + plen;
    n = strlen(r);
    if (!((n > 3 && memcmp(r, "ns=", 3) == 0)
          || (n > 2 && r[1] == '='
              && (r[0] == 'i' || r[0] == 's' || r[0] == 'g'
                  || r[0] == 'b'))))
        return false;
    *id = r;
    *idlen = n;
    return true;
}

/* ------------------------------------------------------------ messages */

void
bk_mqtt_apply(struct bk_mqtt *m, const char *topic, const void *payload,
              size_t len, int64_t now)
{
    struct bk_feed_result res;
    char                  report[BK_MQTT_REPORT_MAX];
    const char           *text = payload, *id;
    size_t                idlen;
    bool                  want = !m->refusal_logged;

    m->c.messages++;
    if (len > m->max_payload) {
        m->c.payloads_too_large++;
        if (!m->oversize_logged) {
            bk_mqtt_log(BK_MQTT_LOG ": a message on %.200s of %zu bytes "
                        "refused: more than mqtt.max_payload_bytes (%u); "
                        "further ones are only counted", topic, len,
                        m->max_payload);
            m->oversize_logged = true;
        }
        return;
    }
    if (len == 0)
        return;                         /* a retained message cleared */
    if (m->node_topics
        && bk_mqtt_topic_node(m->topic, (int)m->prefix_len, topic, &id,
                              &idlen)) {
        /* One value: NODEID=PAYLOAD, a line of its own.  The feed ends a
         * string identifier at its first '=': one holding '=' would name
         * another node, so it is refused here. */
        const char *sid = id, *semi;

        if (idlen > 3 && memcmp(id, "ns=", 3) == 0
            && (semi = memchr(id, ';', idlen)) != NULL)
            sid = semi + 1;             /* the topic's NUL ends it */
        if (memchr(text, '\n', len) != NULL || memchr(id, '\n', idlen)
            || (sid[0] == 's' && sid[1] == '='
                && memchr(sid + 2, '=', idlen - (size_t)(sid + 2 - id)))
            || idlen + 1 + len > m->line_cap) {
            m->c.lines_refused++;
            return;
        }
        memcpy(m->line, id, idlen);
        m->line[idlen] = '=';
        memcpy(m->line + idlen + 1, text, len);
        text = m->line;
        len += idlen + 1;
    }
    bk_feed_batch(m->as, text, len, now, &m->arena, want ? report : NULL,
                  want ? sizeof(report) : 0, &res);
    m->c.lines_applied += res.ok;
    m->c.lines_refused += res.failed;
    if (want && res.failed != 0) {
        char *nl = strchr(report, '\n');

        if (nl != NULL)
            *nl = '\0';                 /* the first refused line only */
        bk_mqtt_log(BK_MQTT_LOG ": a line on %.200s refused: %s; further "
                    "refusals are only counted (/stats mqtt.lines_refused)",
                    topic, report);
        m->refusal_logged = true;
    }
}

/* One warning in the log; what came from the network (topics, values in
 * a reason) may hold control characters: they are printed as '?'. */
static void
bk_mqtt_log(const char *fmt, ...)
{
    char    line[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    for (char *p = line; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    shm_log(SHM_LOG_WARNING, "%s", line);
}

static void
bk_mqtt_cb_message(struct mosquitto *mosq, void *obj,
                   const struct mosquitto_message *msg)
{
    struct bk_mqtt *m = obj;

    (void)mosq;
    bk_mqtt_apply(m, msg->topic, msg->payload,
                  msg->payloadlen > 0 ? (size_t)msg->payloadlen : 0,
                  ua_datetime_now());
}

/* ------------------------------------------------------------ state */

/* The reason of a failure, kept for the one log line of going down. */
static void
bk_mqtt_why(struct bk_mqtt *m, const char *what, int rc)
{
    snprintf(m->why, sizeof(m->why), "%s: %s", what,
             rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc));
}

/* The retry timer, after the backoff (with up to 25 % less, so that many
 * hosts do not come back all at once), which then doubles. */
static void
bk_mqtt_schedule(struct bk_mqtt *m)
{
    struct timeval tv;
    uint32_t       ms = m->backoff_ms;

    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    ms -= (uint32_t)(m->rng % (ms / 4 + 1));
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    event_add(&m->retry, &tv);
    m->backoff_ms = m->backoff_ms > m->reconnect_max_ms / 2
                        ? m->reconnect_max_ms : m->backoff_ms * 2;
}

/* No connection now: forget its socket, say so once, retry later. */
static void
bk_mqtt_down(struct bk_mqtt *m)
{
    bool was_up = m->state == BK_MQTT_UP;

    if (m->fd != -1) {
        event_del(&m->rd);
        event_del(&m->wr);
        m->fd = -1;
    }
    m->state = BK_MQTT_DOWN;
    m->c.connected = 0;
    m->lost = false;
    if (m->stopping)
        return;
    if (!m->down_logged) {
        shm_log(SHM_LOG_WARNING, "%s: %s %s:%u (%s%s%s); retrying, backoff "
                "%u..%u ms; the OPC UA side serves on", BK_MQTT_LOG,
                was_up ? "lost" : "cannot reach", m->to.host, m->to.port,
                m->why[0] != '\0' ? m->why : "connection closed",
                m->lib_err[0] != '\0' ? ": " : "", m->lib_err,
                m->reconnect_min_ms, m->reconnect_max_ms);
        m->down_logged = true;
    }
    m->lib_err[0] = '\0';
    if (was_up)
        m->backoff_ms = m->reconnect_min_ms;
    bk_mqtt_schedule(m);
}

/*
 * After every call into libmosquitto: its socket may have been closed
 * (down), or be a new one (events on it); and it may want to write.
 */
static void
bk_mqtt_sync(struct bk_mqtt *m)
{
    int fd;

    if (m->state == BK_MQTT_DOWN)
        return;
    fd = mosquitto_socket(m->mosq);
    if (m->lost || fd == -1) {
        bk_mqtt_down(m);
        return;
    }
    if (fd != m->fd) {
        if (m->fd != -1) {
            event_del(&m->rd);
            event_del(&m->wr);
        }
        event_assign(&m->rd, m->base, fd, EV_READ | EV_PERSIST,
                     bk_mqtt_on_read, m);
        event_assign(&m->wr, m->base, fd, EV_WRITE, bk_mqtt_on_write, m);
        event_add(&m->rd, NULL);
        m->fd = fd;
    }
    if (mosquitto_want_write(m->mosq) && !event_pending(&m->wr, EV_WRITE,
                                                        NULL))
        event_add(&m->wr, NULL);
}

/* One connection attempt (TCP connect in the background). */
static void
bk_mqtt_try(struct bk_mqtt *m)
{
    int rc;

    m->lost = false;
    errno = 0;
    rc = mosquitto_connect_async(m->mosq, m->to.host, m->to.port,
                                 m->keepalive);
    if (rc != MOSQ_ERR_SUCCESS) {
        bk_mqtt_why(m, "connect", rc);
        m->state = BK_MQTT_CONNECTING;  /* so that down() logs and retries */
        bk_mqtt_down(m);
        return;
    }
    m->state = BK_MQTT_CONNECTING;
    bk_mqtt_sync(m);
}

static void
bk_mqtt_on_read(evutil_socket_t fd, short what, void *arg)
{
    struct bk_mqtt *m = arg;
    int             rc;

    (void)fd;
    (void)what;
    errno = 0;
    rc = mosquitto_loop_read(m->mosq, 1);
    if (rc != MOSQ_ERR_SUCCESS && m->why[0] == '\0')
        bk_mqtt_why(m, "read", rc);
    bk_mqtt_sync(m);
}

static void
bk_mqtt_on_write(evutil_socket_t fd, short what, void *arg)
{
    struct bk_mqtt *m = arg;
    int             rc;

    (void)fd;
    (void)what;
    errno = 0;
    rc = mosquitto_loop_write(m->mosq, 1);
    if (rc != MOSQ_ERR_SUCCESS && m->why[0] == '\0')
        bk_mqtt_why(m, "write", rc);
    bk_mqtt_sync(m);
}

static void
bk_mqtt_on_misc(evutil_socket_t fd, short what, void *arg)
{
    struct bk_mqtt *m = arg;
    int             rc;

    (void)fd;
    (void)what;
    if (m->state == BK_MQTT_DOWN)
        return;
    errno = 0;
    rc = mosquitto_loop_misc(m->mosq);
    if (rc != MOSQ_ERR_SUCCESS && m->why[0] == '\0')
        bk_mqtt_why(m, "keepalive", rc);
    bk_mqtt_sync(m);
}

static void
bk_mqtt_on_retry(evutil_socket_t fd, short what, void *arg)
{
    struct bk_mqtt *m = arg;

    (void)fd;
    (void)what;
    bk_mqtt_try(m);
}

/* CONNACK: subscribe (the SUBACK makes the feed up), or refused. */
static void
bk_mqtt_cb_connect(struct mosquitto *mosq, void *obj, int rc)
{
    struct bk_mqtt *m = obj;
    int             src;

    if (rc != 0) {
        snprintf(m->why, sizeof(m->why), "refused: %s",
                 mosquitto_connack_string(rc));
        m->lost = true;
        return;
    }
    src = mosquitto_subscribe(mosq, NULL, m->topic, m->qos);
    if (src != MOSQ_ERR_SUCCESS) {
        bk_mqtt_why(m, "subscribe", src);
        (void)mosquitto_disconnect(mosq);   /* written, then closed */
    }
}

static void
bk_mqtt_cb_subscribe(struct mosquitto *mosq, void *obj, int mid, int n,
                     const int *granted)
{
    struct bk_mqtt *m = obj;

    (void)mid;
    if (n < 1 || granted[0] < 0 || granted[0] > 2) {
        snprintf(m->why, sizeof(m->why), "the subscription to %s was "
                 "refused", m->topic);
        (void)mosquitto_disconnect(mosq);   /* written, then closed */
        return;
    }
    if (m->ever_up)
        m->c.reconnects++;
    m->ever_up = true;
    m->state = BK_MQTT_UP;
    m->c.connected = 1;
    m->down_logged = false;
    m->why[0] = '\0';
    m->backoff_ms = m->reconnect_min_ms;
    shm_log(SHM_LOG_NOTICE, "%s: connected to %s:%u as %s, subscribed to %s "
            "(QoS %d)", BK_MQTT_LOG, m->to.host, m->to.port, m->client_id,
            m->topic, granted[0]);
}

static void
bk_mqtt_cb_disconnect(struct mosquitto *mosq, void *obj, int rc)
{
    struct bk_mqtt *m = obj;

    (void)mosq;
    if (rc != 0 && m->why[0] == '\0')
        snprintf(m->why, sizeof(m->why), "%s",
                 rc == MOSQ_ERR_KEEPALIVE
                     ? "no answer within the keepalive"
                     : mosquitto_strerror(rc));
    m->lost = true;
}

/* libmosquitto's own error lines (a TLS failure's OpenSSL reason): the
 * last one goes with the next "cannot reach" / "lost" line. */
static void
bk_mqtt_cb_log(struct mosquitto *mosq, void *obj, int level, const char *str)
{
    struct bk_mqtt *m = obj;

    (void)mosq;
    if ((level & MOSQ_LOG_ERR) && str != NULL)
        snprintf(m->lib_err, sizeof(m->lib_err), "%s", str);
}

/* ------------------------------------------------------------ set-up */

/* The first line of path (a password), without its line end. */
static int
bk_mqtt_read_password(const char *path, char *out, size_t cap, char *err,
                      size_t errlen)
{
    FILE  *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return bk_mqtt_err(err, errlen, "mqtt.password_file %s: %s", path,
                           strerror(errno));
    if (fgets(out, (int)cap, f) == NULL)
        out[0] = '\0';
    fclose(f);
    n = strlen(out);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        out[--n] = '\0';
    if (n == 0)
        return bk_mqtt_err(err, errlen, "mqtt.password_file %s: empty",
                           path);
    return 0;
}

int
bk_mqtt_prepare(struct bk_mqtt *m, struct bk_addrspace *as,
                const struct bk_config *c, char *err, size_t errlen)
{
    size_t arena_cap;
    int    rc;

    memset(m, 0, sizeof(*m));
    m->fd = -1;
    if (bk_mqtt_check(c, &m->to, &m->on, err, errlen) != 0)
        return -1;
    if (!m->on)
        return 0;
    m->as = as;
    snprintf(m->topic, sizeof(m->topic), "%s", c->mqtt_topic);
    rc = bk_mqtt_topic_prefix(m->topic);
    m->node_topics = rc >= 0;
    m->prefix_len = rc >= 0 ? (size_t)rc : 0;
    if (c->mqtt_client_id[0] != '\0')
        snprintf(m->client_id, sizeof(m->client_id), "%s",
                 c->mqtt_client_id);
    else
        snprintf(m->client_id, sizeof(m->client_id), "uabroker-%.200s-%ld",
                 c->hostname, (long)getpid());
    m->qos = (int)c->mqtt_qos;
    m->keepalive = (int)c->mqtt_keepalive;
    m->max_payload = c->mqtt_max_payload_bytes;
    m->reconnect_min_ms = c->mqtt_reconnect_min_ms;
    m->reconnect_max_ms = c->mqtt_reconnect_max_ms;
    m->backoff_ms = m->reconnect_min_ms;
    m->rng = (uint64_t)ua_datetime_now() ^ ((uint64_t)getpid() << 32) ^ 1;
    m->line_cap = (size_t)m->max_payload + BK_MQTT_TOPIC_MAX + 2;
    m->line = bk_alloc(m->line_cap);
    /* As the feed's: a line's value and its encoding (reset per line). */
    arena_cap = 2 * (size_t)m->max_payload + (256u << 10);
    m->arena_buf = bk_alloc(arena_cap);
    if (m->line == NULL || m->arena_buf == NULL) {
        bk_mqtt_clear(m);
        return bk_mqtt_err(err, errlen, "mqtt: out of memory");
    }
    ua_arena_init(&m->arena, m->arena_buf, arena_cap);
    return 0;
}

int
bk_mqtt_init(struct bk_mqtt *m, struct event_base *base,
             struct bk_addrspace *as, const struct bk_config *c, char *err,
             size_t errlen)
{
    char           pw[BK_MQTT_PASSWORD_MAX];
    struct timeval misc = { BK_MQTT_MISC_MS / 1000,
                            (BK_MQTT_MISC_MS % 1000) * 1000 };
    int            rc;

    if (bk_mqtt_prepare(m, as, c, err, errlen) != 0)
        return -1;
    if (!m->on)
        return 0;
    m->base = base;
    mosquitto_lib_init();
    m->lib = true;
    m->mosq = mosquitto_new(m->client_id, c->mqtt_clean_session != 0, m);
    if (m->mosq == NULL) {
        bk_mqtt_err(err, errlen, "mqtt: mosquitto_new(): %s",
                    strerror(errno));
        goto fail;
    }
    if (c->mqtt_username[0] != '\0') {
        pw[0] = '\0';
        if (c->mqtt_password_file[0] != '\0'
            && bk_mqtt_read_password(c->mqtt_password_file, pw, sizeof(pw),
                                     err, errlen) != 0)
            goto fail;
        rc = mosquitto_username_pw_set(m->mosq, c->mqtt_username,
                                       pw[0] != '\0' ? pw : NULL);
        memset(pw, 0, sizeof(pw));
        if (rc != MOSQ_ERR_SUCCESS) {
            bk_mqtt_err(err, errlen, "mqtt.username: %s",
                        mosquitto_strerror(rc));
            goto fail;
        }
    }
    if (m->to.tls) {
        rc = mosquitto_tls_set(m->mosq, c->mqtt_tls_ca, NULL, NULL, NULL,
                               NULL);
        if (rc != MOSQ_ERR_SUCCESS) {
            bk_mqtt_err(err, errlen, "mqtt.tls_ca %s: %s", c->mqtt_tls_ca,
                        rc == MOSQ_ERR_ERRNO ? strerror(errno)
                                             : mosquitto_strerror(rc));
            goto fail;
        }
    }
    mosquitto_connect_callback_set(m->mosq, bk_mqtt_cb_connect);
    mosquitto_disconnect_callback_set(m->mosq, bk_mqtt_cb_disconnect);
    mosquitto_subscribe_callback_set(m->mosq, bk_mqtt_cb_subscribe);
    mosquitto_message_callback_set(m->mosq, bk_mqtt_cb_message);
    mosquitto_log_callback_set(m->mosq, bk_mqtt_cb_log);
    event_assign(&m->misc, base, -1, EV_PERSIST, bk_mqtt_on_misc, m);
    event_assign(&m->retry, base, -1, 0, bk_mqtt_on_retry, m);
    event_add(&m->misc, &misc);
    m->events = true;
    shm_log(SHM_LOG_INFO, "%s: feeding from %s:%u%s, topic %s", BK_MQTT_LOG,
            m->to.host, m->to.port, m->to.tls ? " (TLS)" : "", m->topic);
    bk_mqtt_try(m);
    return 0;
fail:
    bk_mqtt_clear(m);
    return -1;
}

void
bk_mqtt_clear(struct bk_mqtt *m)
{
    m->stopping = true;
    if (m->mosq != NULL && m->state == BK_MQTT_UP)
        (void)mosquitto_disconnect(m->mosq);  /* best effort, written now */
    if (m->fd != -1) {
        event_del(&m->rd);
        event_del(&m->wr);
        m->fd = -1;
    }
    if (m->events) {
        event_del(&m->misc);
        event_del(&m->retry);
        m->events = false;
    }
    if (m->mosq != NULL)
        mosquitto_destroy(m->mosq);
    m->mosq = NULL;
    if (m->lib)
        mosquitto_lib_cleanup();
    m->lib = false;
    bk_free(m->line);
    bk_free(m->arena_buf);
    m->line = NULL;
    m->arena_buf = NULL;
    m->on = false;
    m->c.connected = 0;
}
