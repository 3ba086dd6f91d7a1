/*
 * broker/mqtt.h: the MQTT feed, a second way into the feed
 * (docs/architecture.md §8: several uabroker hosts fed from one existing
 * message broker).  The broker subscribes to mqtt.topic on an MQTT broker
 * (libmosquitto, on the broker's libevent loop: no thread) and applies
 * every message through the feed's parser and apply path (broker/feed.h,
 * bk_feed_batch(): one value batch per message):
 *
 *   a message on a topic the filter matches   a feed batch: lines of
 *                                             NODEID=VALUE[;status=][;ts=]
 *   a message on <prefix>/<NodeId>            one value of that node:
 *                                             VALUE[;status=..][;ts=..]
 *
 * <prefix> is the filter without its trailing "#" level (default filter
 * uabroker/feed/#: uabroker/feed/ns=1;s=v0); the per-node form needs a
 * filter ending in "/#" (or "#") with no "+" and a topic remainder that
 * starts like a NodeId (ns=, i=, s=, g=, b=).  Everything else is a batch.
 *
 * A payload over mqtt.max_payload_bytes is refused and counted; an empty
 * one is ignored.  The connection is made in the background
 * (mosquitto_connect_async) and made again with a doubling backoff
 * (mqtt.reconnect_min_ms .. reconnect_max_ms) whenever it fails or is
 * lost; the OPC UA side never waits for it.  One log line per change of
 * state (connected and subscribed / down and why), none per retry.
 *
 * The format and the topics are in docs/feed.md ("MQTT").
 */
#ifndef BK_MQTT_H
#define BK_MQTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "addrspace.h"
#include "config.h"
#include "proto/arena.h"

#define BK_MQTT_PORT        1883
#define BK_MQTT_PORT_TLS    8883
#define BK_MQTT_MISC_MS     1000        /* mosquitto_loop_misc() period */
#define BK_MQTT_PASSWORD_MAX 1024

/* Where to connect: mqtt.url, or mqtt.host and mqtt.port. */
struct bk_mqtt_target {
    char     host[BK_CONF_STR_MAX];
    uint16_t port;
    bool     tls;
};

/* The counters of /stats "mqtt" and /metrics uabroker_mqtt_*. */
struct bk_mqtt_counters {
    uint64_t messages;              /* messages received */
    uint64_t lines_applied;
    uint64_t lines_refused;
    uint64_t payloads_too_large;    /* over mqtt.max_payload_bytes */
    uint64_t reconnects;            /* sessions after the first one */
    uint32_t connected;             /* 1: connected and subscribed */
};

enum bk_mqtt_state {
    BK_MQTT_DOWN = 0,               /* waiting for the retry timer */
    BK_MQTT_CONNECTING,             /* TCP, CONNECT, SUBSCRIBE in flight */
    BK_MQTT_UP                      /* subscription acknowledged */
};

struct mosquitto;

struct bk_mqtt {
    bool                    on;     /* configured (mqtt.url or .host) */
    struct bk_addrspace    *as;
    struct event_base      *base;
    struct mosquitto       *mosq;
    struct event            rd;     /* the socket: EV_READ | EV_PERSIST */
    struct event            wr;     /* the socket: EV_WRITE, when wanted */
    struct event            misc;   /* every BK_MQTT_MISC_MS */
    struct event            retry;  /* the next connection attempt */
    int                     fd;     /* socket of rd and wr, or -1 */
    enum bk_mqtt_state      state;
    bool                    lost;       /* on_disconnect since last sync */
    bool                    ever_up;
    bool                    down_logged;
    bool                    refusal_logged;
    bool                    oversize_logged;
    bool                    stopping;
    bool                    lib;        /* mosquitto_lib_init() done */
    bool                    events;     /* misc and retry assigned */
    uint32_t                backoff_ms;
    uint64_t                rng;
    struct bk_mqtt_target   to;
    char                    topic[BK_CONF_STR_MAX];
    size_t                  prefix_len; /* per-node topics: the prefix */
    bool                    node_topics;
    char                    client_id[BK_CONF_STR_MAX];
    int                     qos;
    int                     keepalive;
    uint32_t                max_payload;
    uint32_t                reconnect_min_ms;
    uint32_t                reconnect_max_ms;
    char                    why[320];   /* the last failure, for the log */
    char                    lib_err[256];   /* libmosquitto's last error */
    char                   *line;       /* one per-node line */
    size_t                  line_cap;
    struct ua_arena         arena;
    uint8_t                *arena_buf;
    struct bk_mqtt_counters c;
};

/*
 * "mqtt://HOST[:PORT]" or "mqtts://HOST[:PORT]" (an IPv6 address in
 * brackets; default ports 1883 and 8883; nothing after the port) into t.
 * 0, or -1 with a message in err.  Pure.
 */
int bk_mqtt_parse_url(const char *url, struct bk_mqtt_target *t, char *err,
                      size_t errlen);

/*
 * The [mqtt] settings together: on (*on set) when mqtt.url or mqtt.host is
 * set, not both; the URL; the topic filter (MQTT wildcard rules); a
 * password file only with a user name; mqtts:// only with mqtt.tls_ca;
 * reconnect_min_ms <= reconnect_max_ms.  t (may be NULL) gets the target.
 * 0, or -1 with a message in err.  Pure (`uabroker -t` runs it).
 */
int bk_mqtt_check(const struct bk_config *c, struct bk_mqtt_target *t,
                  bool *on, char *err, size_t errlen);

/*
 * The length of the fixed prefix of filter when it ends in "#" after a
 * '/' (or is "#") and has no '+': the per-node form's prefix, including
 * its '/'.  -1 when the filter has no such prefix (every message is then a
 * batch).  Pure.
 */
int bk_mqtt_topic_prefix(const char *filter);

/*
 * Whether topic is a per-node topic under the prefix of length plen (from
 * bk_mqtt_topic_prefix; -1: never): it starts with the prefix and the rest
 * starts like a NodeId's string form (ns=, i=, s=, g=, b=).  *id and *idlen
 * get the rest.  Pure.
 */
bool bk_mqtt_topic_node(const char *filter, int plen, const char *topic,
                        const char **id, size_t *idlen);

/*
 * Apply one message's payload as the MQTT feed does (the size limit, the
 * batch or per-node form, the counters), at DateTime now.  Called by the
 * message callback; public for tests.
 */
void bk_mqtt_apply(struct bk_mqtt *m, const char *topic, const void *payload,
                   size_t len, int64_t now);

/*
 * The part of bk_mqtt_init() that needs no connection: the settings
 * (bk_mqtt_check), the topic, the buffers.  m->on false when the MQTT feed
 * is off.  0, or -1 with a message in err.  Tests use it alone to drive
 * bk_mqtt_apply(); bk_mqtt_clear() frees it.
 */
int bk_mqtt_prepare(struct bk_mqtt *m, struct bk_addrspace *as,
                    const struct bk_config *c, char *err, size_t errlen);

/*
 * Set up the MQTT feed from c on base (nothing when mqtt.url and
 * mqtt.host are empty: m->on false) and start connecting.  Connection
 * failures are not errors (they are retried); 0, or -1 with a message in
 * err for a bad configuration or no memory.
 */
int bk_mqtt_init(struct bk_mqtt *m, struct event_base *base,
                 struct bk_addrspace *as, const struct bk_config *c,
                 char *err, size_t errlen);

/* Disconnect (DISCONNECT when connected), stop the events, free; after
 * bk_mqtt_prepare() or bk_mqtt_init(), whether they succeeded or not. */
void bk_mqtt_clear(struct bk_mqtt *m);

#endif /* BK_MQTT_H */
