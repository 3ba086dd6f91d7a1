/*
 * broker/stats.c: /stats (JSON), /metrics (Prometheus), /health over evhttp.
 *
 * Every request reads the worker table afresh: each row is copied with
 * relaxed loads (its state with an acquire load, pairing with the worker's
 * release store when it comes UP) and summed here.  A row being reset by a
 * respawn may be seen half reset; counters are monotonic per worker life
 * otherwise, which is all Prometheus needs (a reset looks like a restart).
 */
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "alloc.h"
#include "clock.h"
#include "fanout.h"
#include "mqtt.h"
#include "request.h"
#include "proto/types.h"
#include "proto/version.h"
#include "shm/layout.h"
#include "shm/throttle.h"

static const char bk_stats_log[] = "uabroker";

#define BK_STATS_TIMEOUT  10        /* seconds a stats client may idle */
#define BK_STATS_CLIENT_MS 5000     /* `uabroker stats`: each wait */
#define BK_STATS_RESP_MAX (4u << 20)

/* The per-worker counters other than requests and latency, in order. */
enum bk_stats_counter {
    BK_SC_CONNECTIONS = 0,
    BK_SC_CONNECTIONS_TOTAL,
    BK_SC_CHANNELS,
    BK_SC_SESSIONS,
    BK_SC_BAD_REQUESTS,
    BK_SC_BYTES_IN,
    BK_SC_BYTES_OUT,
    BK_SC_ALLOCATIONS,
    BK_SC_REJECTED,
    BK_SC_EVICTED,
    BK_SC_NOTIF_DROPPED,
    BK_SC_NOTIFICATIONS,
    BK_SC_NOTIF_BLOCKS,
    BK_SC_OVERFLOWS,
    BK_SC_WRITE_OPS,
    BK_SC_RSA_OPS,
    BK_SC_RSA_CPU,
    BK_SC_MOVED_IN,
    BK_SC_MOVED_OUT,
    BK_SC_MOVE_FAILED,
    BK_SC_MOVE_LOST,
    BK_SC_MOVE_BYTES,
    BK_SC_INHERITED,
    BK_SC_PARK_LOST,
    BK_SC_PARK_WRITES,
    BK_SC_NOT_PARKED,
    BK_SC_PARK_BYTES,
    BK_SC_MOVE_EVENTS,
    BK_SC_MOVE_EVENTS_LOST,
    BK_SC_STALL_MAX,            /* maxima: the totals take the largest */
    BK_SC_RSA_CB_MAX,
    BK_SC_RSA_CPU_MAX,
    BK_SC_MAX
};

struct bk_stats_counter_desc {
    const char *json;           /* key in /stats */
    const char *metric;         /* Prometheus name, after uabroker_ */
    const char *type;           /* gauge or counter */
    const char *help;           /* a json key ending in _us counts µs:
                                 * /metrics gives seconds */
};

static const struct bk_stats_counter_desc bk_stats_counters[BK_SC_MAX] = {
    { "connections", "connections", "gauge", "TCP connections open now" },
    { "connections_total", "connections_total", "counter",
      "TCP connections accepted" },
    { "channels", "channels", "gauge", "secure channels open now" },
    { "sessions", "sessions", "gauge", "sessions open now" },
    { "bad_requests", "bad_requests_total", "counter",
      "requests answered with a Bad status, and ERR messages sent" },
    { "bytes_in", "bytes_in_total", "counter", "bytes received" },
    { "bytes_out", "bytes_out_total", "counter", "bytes sent" },
    { "allocations", "allocations_total", "counter",
      "heap allocations by the worker (flat in steady state)" },
    { "rejected_connections", "rejected_connections_total", "counter",
      "connections refused: every channel carried a session" },
    { "sessions_evicted", "sessions_evicted_total", "counter",
      "sessions never activated, closed to admit a CreateSession" },
    { "notif_dropped", "notifications_lost_total", "counter",
      "values monitored items lost to an exhausted queue pool "
      "(limits.max_queued_values), reported with the Overflow bit" },
    { "notifications", "notifications_total", "counter",
      "value-change records handed to monitored items" },
    { "notification_blocks", "notification_blocks_total", "counter",
      "notification blocks opened and released at once" },
    { "overflows", "overflows_total", "counter",
      "slots reported lost to the worker (pool exhausted or ring full)" },
    { "write_ops", "write_ops_total", "counter",
      "WriteValues sent to the broker" },
    { "rsa_private_ops", "rsa_private_ops_total", "counter",
      "RSA private-key operations (signatures, decrypted blocks)" },
    { "rsa_cpu_us", "rsa_cpu_seconds_total", "counter",
      "CPU time inside RSA operations (private and public, certificate "
      "signature checks)" },
    { "sessions_moved_in", "sessions_moved_in_total", "counter",
      "sessions taken over from another worker (docs/architecture.md "
      "§11)" },
    { "sessions_moved_out", "sessions_moved_out_total", "counter",
      "sessions handed to another worker" },
    { "session_moves_failed", "session_moves_failed_total", "counter",
      "claims of a session held elsewhere that failed (unknown token, "
      "another certificate, timeout, owner gone)" },
    { "session_move_values_lost", "session_move_values_lost_total",
      "counter",
      "value changes a monitored item missed while its session moved "
      "(reported with the Overflow bit)" },
    { "session_move_bytes", "session_move_bytes_total", "counter",
      "bytes of the sessions and subscriptions handed to other workers" },
    { "sessions_inherited", "sessions_inherited_total", "counter",
      "sessions taken over from the worker that died in this slot "
      "(docs/architecture.md §11)" },
    { "session_park_values_lost", "session_park_values_lost_total",
      "counter",
      "value changes the sessions taken over from a dead worker missed "
      "(reported with the Overflow bit; goal 0)" },
    { "session_park_writes", "session_park_writes_total", "counter",
      "sessions written to the worker's park (kept for a successor)" },
    { "sessions_not_parked", "sessions_not_parked_total", "counter",
      "times a session could not be parked (larger than the park "
      "allows, or the park full): it would not survive its worker" },
    { "session_park_bytes", "session_park_bytes", "gauge",
      "bytes of the worker's park in use (limits.session_park_bytes)" },
    { "session_move_events", "session_move_events_total", "counter",
      "events that came in the window of a move and were carried into "
      "the moved session's event items" },
    { "session_move_events_lost", "session_move_events_lost_total",
      "counter",
      "events a moved session's event items may have missed in the "
      "window of a move (reported with an EventQueueOverflowEvent)" },
    { "loop_stall_max_us", "loop_stall_max_seconds", "gauge",
      "longest event-loop iteration (first callback to flush) since the "
      "worker started" },
    { "loop_rsa_ops_max", "loop_rsa_ops_max", "gauge",
      "most RSA private-key operations one loop iteration did (1 by "
      "design)" },
    { "loop_rsa_cpu_max_us", "loop_rsa_cpu_max_seconds", "gauge",
      "most CPU time one RSA step took (an OPN stage, CreateSession, "
      "ActivateSession)" },
};

/* The broker's fan-out counters (SHM_R_FANOUT, the block pool). */
enum bk_stats_fanout_counter {
    BK_SF_BLOCKS_TOTAL = 0,
    BK_SF_BLOCKS_FREE,
    BK_SF_NOTIFICATIONS,
    BK_SF_BLOCKS,
    BK_SF_EXHAUSTED,
    BK_SF_RING_FULL,
    BK_SF_DROPPED,
    BK_SF_RECLAIMED,
    BK_SF_WRITES,
    BK_SF_FEED,
    BK_SF_EVENTS,
    BK_SF_FEED_EVENTS,
    BK_SF_FEED_WAITS,
    BK_SF_FEED_WAIT_MS,
    BK_SF_FEED_WAIT_EXPIRED,
    BK_SF_BELLS,
    BK_SF_DEFERRED,
    BK_SF_M_CALLS,                      /* broker/methods.c */
    BK_SF_M_ANSWERED,
    BK_SF_M_TIMEOUTS,
    BK_SF_M_NO_OWNER,
    BK_SF_M_ERRORS,
    BK_SF_M_LATE,
    BK_SF_MAX
};

static const struct bk_stats_counter_desc bk_stats_fanout_desc[BK_SF_MAX] = {
    { "blocks_total", "fanout_blocks", "gauge",
      "notification blocks in the pool" },
    { "blocks_free", "fanout_blocks_free", "gauge",
      "notification blocks free now (neither filling nor held)" },
    { "notifications", "fanout_notifications_total", "counter",
      "value-change records the broker made" },
    { "blocks", "fanout_blocks_published_total", "counter",
      "notification blocks published to workers" },
    { "blocks_exhausted", "fanout_blocks_exhausted_total", "counter",
      "times the block pool had no free block (values lost, reported)" },
    { "ring_full", "fanout_ring_full_total", "counter",
      "block pushes a worker's full notification ring refused" },
    { "notifications_dropped", "fanout_notifications_dropped_total",
      "counter", "(value, worker) deliveries lost, reported as overflow" },
    { "blocks_reclaimed", "fanout_blocks_reclaimed_total", "counter",
      "block references of dead workers dropped by the broker" },
    { "writes", "fanout_writes_total", "counter",
      "WriteValues the broker applied (any result)" },
    { "feed_values", "fanout_feed_values_total", "counter",
      "values taken from the feed" },
    { "events", "fanout_events_total", "counter",
      "event records the broker sent to workers with event interest" },
    { "feed_events", "fanout_feed_events_total", "counter",
      "events raised by the feed (event= lines)" },
    { "feed_waits", "fanout_feed_waits_total", "counter",
      "times the feed stopped reading while a worker or the historian "
      "was behind (feed.backpressure_ms)" },
    { "feed_wait_ms", "fanout_feed_wait_seconds_total", "counter",
      "time the feed spent waiting so" },
    { "feed_wait_expired", "fanout_feed_wait_expired_total", "counter",
      "waits that outlasted feed.backpressure_ms (the feed read again; "
      "what the pool could not hold was lost and counted)" },
    { "notif_bells", "fanout_notif_bells_total", "counter",
      "doorbells rung for blocks pushed to a sleeping worker" },
    { "notif_bells_deferred", "fanout_notif_bells_deferred_total",
      "counter", "block pushes left unrung: the worker wakes for its next "
      "publishing tick anyway" },
    { "methods_calls", "methods_calls_total", "counter",
      "method calls forwarded to the method owner (docs/feed.md Methods)" },
    { "methods_answered", "methods_answered_total", "counter",
      "answers the method owner gave in time" },
    { "methods_timeouts", "methods_timeouts_total", "counter",
      "method calls answered BadTimeout (methods.timeout_ms)" },
    { "methods_no_owner", "methods_no_owner_total", "counter",
      "method calls refused at once: no owner ever connected" },
    { "methods_errors", "methods_errors_total", "counter",
      "owner answers that did not parse or did not match the method's "
      "OutputArguments (BadInternalError)" },
    { "methods_late", "methods_late_total", "counter",
      "owner answers dropped: after the timeout, or for no call" },
};

/* The shared throttle's counters (SHM_R_THROTTLE, summed over workers),
 * indexed by enum shm_throttle_counter; then the blocks running now. */
#define BK_ST_MAX (SHM_THR_C_MAX + 1)

static const struct bk_stats_counter_desc bk_stats_throttle_desc[BK_ST_MAX] = {
    { "opn_failures", "throttle_opn_failures_total", "counter",
      "OpenSecureChannel security failures counted against IP addresses" },
    { "login_failures", "throttle_login_failures_total", "counter",
      "failed UserName logins counted against clients" },
    { "blocks", "throttle_blocks_total", "counter",
      "IP addresses and clients blocked (reached their failure threshold)" },
    { "refused_blocked", "throttle_refused_blocked_total", "counter",
      "connections and OPNs refused: their IP address was blocked" },
    { "logins_blocked", "throttle_logins_blocked_total", "counter",
      "logins refused with BadUserAccessDenied: their client or "
      "address was blocked" },
    { "refused_rate", "throttle_refused_rate_total", "counter",
      "connections refused by the accept rate limit" },
    { "table_full", "throttle_table_full_total", "counter",
      "failures not counted: the failure table's entries were all blocked" },
    { "blocked_now", "throttle_blocked", "gauge",
      "IP addresses and clients blocked now" },
};

/* The MQTT feed's counters (broker/mqtt.h), when it is configured. */
enum bk_stats_mqtt_counter {
    BK_SM_CONNECTED = 0,
    BK_SM_MESSAGES,
    BK_SM_APPLIED,
    BK_SM_REFUSED,
    BK_SM_TOO_LARGE,
    BK_SM_RECONNECTS,
    BK_SM_MAX
};

static const struct bk_stats_counter_desc bk_stats_mqtt_desc[BK_SM_MAX] = {
    { "connected", "mqtt_connected", "gauge",
      "1 while connected to the MQTT broker and subscribed" },
    { "messages", "mqtt_messages_total", "counter",
      "MQTT messages received on the subscription" },
    { "lines_applied", "mqtt_lines_applied_total", "counter",
      "feed lines from MQTT messages applied" },
    { "lines_refused", "mqtt_lines_refused_total", "counter",
      "feed lines from MQTT messages refused (bad line, unknown node, "
      "type)" },
    { "payloads_too_large", "mqtt_payloads_too_large_total", "counter",
      "MQTT messages refused: payload over mqtt.max_payload_bytes" },
    { "reconnects", "mqtt_reconnects_total", "counter",
      "MQTT sessions made again after the first one" },
};

/* The alarms' counters (broker/alarmnode.h), when there are alarms. */
enum bk_stats_alarm_counter {
    BK_SA_CONFIGURED = 0,
    BK_SA_ACTIVE,
    BK_SA_UNACKED,
    BK_SA_SHELVED,
    BK_SA_RETAINED,
    BK_SA_BAND_LOW,
    BK_SA_BAND_MEDIUM,
    BK_SA_BAND_HIGH,
    BK_SA_TRANSITIONS,
    BK_SA_PER_SECOND,
    BK_SA_EVALUATIONS,
    BK_SA_CALLS,
    BK_SA_CALLS_REFUSED,
    BK_SA_LOST,
    BK_SA_NODESET,
    BK_SA_NODESET_REFUSED,
    BK_SA_MAX
};

static const struct bk_stats_counter_desc bk_stats_alarm_desc[BK_SA_MAX] = {
    { "configured", "alarms_configured", "gauge",
      "alarm conditions configured ([alarm NAME] sections)" },
    { "active", "alarms_active", "gauge", "conditions active now" },
    { "unacknowledged", "alarms_unacknowledged", "gauge",
      "conditions not acknowledged now" },
    { "shelved", "alarms_shelved", "gauge",
      "conditions shelved now (timed or one-shot)" },
    { "retained", "alarms_retained", "gauge",
      "conditions retained now (what ConditionRefresh sends)" },
    { "active_severity_low", "alarms_active_severity_low", "gauge",
      "active conditions of Severity 1-333" },
    { "active_severity_medium", "alarms_active_severity_medium", "gauge",
      "active conditions of Severity 334-666" },
    { "active_severity_high", "alarms_active_severity_high", "gauge",
      "active conditions of Severity 667-1000" },
    { "transitions", "alarms_transitions_total", "counter",
      "condition events sent (transitions and method calls)" },
    { "transitions_per_s", "alarms_transitions_per_second", "gauge",
      "condition events sent in the last second" },
    { "evaluations", "alarms_evaluations_total", "counter",
      "input value changes evaluated" },
    { "calls", "alarms_calls_total", "counter",
      "condition methods called (Acknowledge, Confirm, ...)" },
    { "calls_refused", "alarms_calls_refused_total", "counter",
      "condition methods answered with a Bad status" },
    { "events_lost", "alarms_events_lost_total", "counter",
      "condition events that did not fit an event record" },
    { "from_nodesets", "alarms_from_nodesets", "gauge",
      "alarm conditions of imported NodeSets' alarm instances" },
    { "nodeset_refused", "alarms_nodeset_refused", "gauge",
      "NodeSet alarm instances refused at the build (each logged)" },
};

/* The historian's counters (issue 18, its row: shm/layout.h), when
 * history.enabled. */
enum bk_stats_history_counter {
    BK_SH_UP = 0,
    BK_SH_NODES,
    BK_SH_STORED,
    BK_SH_DROPPED,
    BK_SH_COMMITS,
    BK_SH_LAG_MS,
    BK_SH_FULL,
    BK_SH_VALUES,
    BK_SH_BYTES,
    BK_SH_FILE_BYTES,
    BK_SH_RETENTION_DROPPED,
    BK_SH_OLDEST_S,
    BK_SH_LOST,
    BK_SH_EVENTS_STORED,
    BK_SH_EVENTS_DROPPED,
    BK_SH_EVENTS_LOST,
    BK_SH_EVENTS,
    BK_SH_EVENT_BYTES,
    BK_SH_EVENTS_RETENTION_DROPPED,
    BK_SH_MODIFIED,
    BK_SH_MODIFIED_BYTES,
    BK_SH_ANNOTATIONS,
    BK_SH_ANNOTATION_BYTES,
    BK_SH_FILTERED,
    BK_SH_MAX
};

static const struct bk_stats_counter_desc bk_stats_history_desc[BK_SH_MAX] = {
    { "up", "history_up", "gauge",
      "1 while the historian (uahistorian) is serving" },
    { "nodes", "history_nodes", "gauge", "variables historized" },
    { "values_stored", "history_values_stored_total", "counter",
      "values committed to the history store by this historian" },
    { "values_dropped", "history_values_dropped_total", "counter",
      "values not kept: the store full, a write error, too large" },
    { "commits", "history_commits_total", "counter",
      "write transactions of the history store" },
    { "write_lag_ms", "history_write_lag_seconds", "gauge",
      "how long the oldest value of the last commit waited for it" },
    { "full", "history_full", "gauge",
      "1 while history writing is stopped: the map or the disk is full" },
    { "values", "history_values", "gauge", "values kept in the store" },
    { "bytes", "history_bytes", "gauge",
      "bytes of keys and blocks kept in the store" },
    { "file_bytes", "history_file_bytes", "gauge",
      "size of the store's data.mdb" },
    { "retention_dropped", "history_retention_dropped_total", "counter",
      "values dropped by retention (age or history.max_mb)" },
    { "oldest_unix_s", "history_oldest_unix_seconds", "gauge",
      "time of the oldest value kept (0: none)" },
    { "values_lost", "history_values_lost_total", "counter",
      "historized changes the fan-out could not deliver (each replaced by "
      "the slot's value then)" },
    { "events_stored", "history_events_stored_total", "counter",
      "events committed to the history store by this historian" },
    { "events_dropped", "history_events_dropped_total", "counter",
      "events not kept: the store full, a write error" },
    { "events_lost", "history_events_lost_total", "counter",
      "times the fan-out could not deliver events to the historian" },
    { "events", "history_events", "gauge", "events kept in the store" },
    { "event_bytes", "history_event_bytes", "gauge",
      "bytes of the events kept (keys, records, notifier entries)" },
    { "events_retention_dropped", "history_events_retention_dropped_total",
      "counter",
      "events dropped by retention (age or history.event_max_mb)" },
    { "modified", "history_modified_values", "gauge",
      "modified values kept (what HistoryUpdate changed)" },
    { "modified_bytes", "history_modified_bytes", "gauge",
      "bytes (pages) of the modified values, counted in history.max_mb" },
    { "annotations", "history_annotations", "gauge",
      "annotations kept" },
    { "annotation_bytes", "history_annotation_bytes", "gauge",
      "bytes (pages) of the annotations, counted in history.max_mb" },
    { "values_filtered", "history_values_filtered_total", "counter",
      "values the data collection rules did not store (MinTimeInterval, "
      "ExceptionDeviation)" },
};

/* Service names, indexed by enum shm_svc (Part 4 service names). */
static const char *const bk_stats_svc[SHM_SVC_MAX] = {
    [SHM_SVC_OTHER] = "Other",
    [SHM_SVC_GET_ENDPOINTS] = "GetEndpoints",
    [SHM_SVC_FIND_SERVERS] = "FindServers",
    [SHM_SVC_CREATE_SESSION] = "CreateSession",
    [SHM_SVC_ACTIVATE_SESSION] = "ActivateSession",
    [SHM_SVC_CLOSE_SESSION] = "CloseSession",
    [SHM_SVC_CANCEL] = "Cancel",
    [SHM_SVC_READ] = "Read",
    [SHM_SVC_WRITE] = "Write",
    [SHM_SVC_BROWSE] = "Browse",
    [SHM_SVC_BROWSE_NEXT] = "BrowseNext",
    [SHM_SVC_TRANSLATE] = "TranslateBrowsePathsToNodeIds",
    [SHM_SVC_REGISTER_NODES] = "RegisterNodes",
    [SHM_SVC_UNREGISTER_NODES] = "UnregisterNodes",
    [SHM_SVC_CALL] = "Call",
    [SHM_SVC_CREATE_SUBSCRIPTION] = "CreateSubscription",
    [SHM_SVC_MODIFY_SUBSCRIPTION] = "ModifySubscription",
    [SHM_SVC_DELETE_SUBSCRIPTIONS] = "DeleteSubscriptions",
    [SHM_SVC_SET_PUBLISHING_MODE] = "SetPublishingMode",
    [SHM_SVC_PUBLISH] = "Publish",
    [SHM_SVC_REPUBLISH] = "Republish",
    [SHM_SVC_TRANSFER_SUBSCRIPTIONS] = "TransferSubscriptions",
    [SHM_SVC_CREATE_MONITORED_ITEMS] = "CreateMonitoredItems",
    [SHM_SVC_MODIFY_MONITORED_ITEMS] = "ModifyMonitoredItems",
    [SHM_SVC_DELETE_MONITORED_ITEMS] = "DeleteMonitoredItems",
    [SHM_SVC_SET_MONITORING_MODE] = "SetMonitoringMode",
    [SHM_SVC_SET_TRIGGERING] = "SetTriggering",
};

/* One row of the worker table, copied out of shared memory. */
struct bk_stats_row {
    int32_t  pid;
    uint32_t state;
    uint32_t restarts;
    int64_t  started;
    int64_t  heartbeat;
    uint64_t c[BK_SC_MAX];
    uint64_t requests[SHM_SVC_MAX];
    uint64_t latency[SHM_SVC_MAX][SHM_LAT_BUCKETS];
    uint64_t latency_sum_us[SHM_SVC_MAX];
    uint64_t loop[SHM_LAT_BUCKETS];     /* loop iteration busy times */
    uint64_t loop_busy_us;              /* their sum */
};

/* Everything one request needs, read once. */
struct bk_stats_view {
    unsigned            n;
    int64_t             now_dt;
    uint64_t            uptime_s;
    struct bk_stats_row rows[SHM_WORKERS_MAX];
    struct bk_stats_row total;
};

static void bk_stats_read_row(const struct shm_worker *r,
                              struct bk_stats_row *o);
static struct bk_stats_view *bk_stats_view(const struct bk_stats *st);
static const char *bk_stats_state(const struct bk_stats *st, unsigned i,
                                  const struct bk_stats_row *r);
static uint64_t bk_stats_uptime_s(const struct bk_stats_view *v,
                                  const struct bk_stats_row *r);
struct bk_stats_fanout;
static void bk_stats_fanout_read(const struct bk_stats *st,
                                 struct bk_stats_fanout *o);
static void bk_stats_json_fanout(const struct bk_stats *st,
                                 struct evbuffer *b);
static bool bk_stats_throttle_read(const struct bk_addrspace *as,
                                   uint64_t *v);
static bool bk_stats_mqtt_read(const struct bk_stats *st, uint64_t *v);
static bool bk_stats_alarm_read(const struct bk_stats *st, uint64_t *v);
static bool bk_stats_history_read(const struct bk_stats *st, uint64_t *v);
static void bk_stats_json_row(struct evbuffer *b,
                              const struct bk_stats_row *r);
static void bk_stats_json(const struct bk_stats *st,
                          const struct bk_stats_view *v, struct evbuffer *b);
static void bk_stats_prom_family(struct evbuffer *b, const char *name,
                                 const char *type, const char *help);
static void bk_stats_prom_label(struct evbuffer *b, const char *s);
static void bk_stats_prom(const struct bk_stats *st,
                          const struct bk_stats_view *v, struct evbuffer *b);
static int bk_stats_health(const struct bk_stats *st,
                           const struct bk_stats_view *v, struct evbuffer *b);
static void bk_stats_reply(struct evhttp_request *req, int code,
                           const char *reason, const char *type,
                           struct evbuffer *b);
static void bk_stats_on_request(struct evhttp_request *req, void *arg);

int
bk_stats_parse_listen(const char *s, char *host, size_t hostlen,
                      uint16_t *port)
{
    const char *colon, *h = s, *he;
    char       *end;
    long        p;

    if (s[0] == '[') {
        he = strchr(s, ']');
        if (he == NULL || he[1] != ':')
            return -1;
        h = s + 1;
        colon = he + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL)
            return -1;
        he = colon;
    }
    if ((size_t)(he - h) >= hostlen)
        return -1;
    memcpy(host, h, (size_t)(he - h));
    host[he - h] = '\0';
    if (host[0] == '\0')
        snprintf(host, hostlen, "0.0.0.0");
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || errno != 0 || p < 0 || p > 65535)
        return -1;
    *port = (uint16_t)p;
    return 0;
}

int
bk_stats_init(struct bk_stats *st, struct event_base *base,
              const char *listen, const struct bk_addrspace *as,
              const struct bk_supervisor *sv, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t               sl = sizeof(ss);
    char                    host[64];
    uint16_t                port;

    memset(st, 0, sizeof(*st));
    st->as = as;
    st->sv = sv;
    st->start_ms = bk_clock_ms();
    /* Present now: the first /stats does not fault its pages in. */
    st->view = bk_calloc_present(1, sizeof(*st->view));
    if (st->view == NULL) {
        snprintf(err, errlen, "stats: out of memory");
        return -1;
    }
    if (bk_stats_parse_listen(listen, host, sizeof(host), &port) != 0) {
        snprintf(err, errlen, "stats.listen: \"%s\" is not ADDR:PORT",
                 listen);
        bk_stats_clear(st);
        return -1;
    }
    st->http = evhttp_new(base);
    if (st->http == NULL) {
        snprintf(err, errlen, "evhttp_new() failed");
        bk_stats_clear(st);
        return -1;
    }
    /* Every method reaches the callback, which answers 405 itself. */
    evhttp_set_allowed_methods(st->http,
        EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT
        | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE
        | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_timeout(st->http, BK_STATS_TIMEOUT);
    evhttp_set_max_headers_size(st->http, 8192);
    evhttp_set_max_body_size(st->http, 4096);
    evhttp_set_gencb(st->http, bk_stats_on_request, st);
    st->sock = evhttp_bind_socket_with_handle(st->http, host, port);
    if (st->sock == NULL) {
        snprintf(err, errlen, "stats endpoint: cannot listen on %s: %s",
                 listen, strerror(errno));
        bk_stats_clear(st);
        return -1;
    }
    st->port = port;
    if (getsockname(evhttp_bound_socket_get_fd(st->sock),
                    (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            st->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            st->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    snprintf(st->addr, sizeof(st->addr), "%s%s%s:%u",
             strchr(host, ':') != NULL ? "[" : "", host,
             strchr(host, ':') != NULL ? "]" : "", st->port);
    return 0;
}

void
bk_stats_clear(struct bk_stats *st)
{
    if (st->http != NULL)
        evhttp_free(st->http);
    st->http = NULL;
    st->sock = NULL;
    bk_free(st->view);
    st->view = NULL;
}

/* ------------------------------------------------------------ reading */

static void
bk_stats_read_row(const struct shm_worker *r, struct bk_stats_row *o)
{
    struct shm_worker *w = (struct shm_worker *)r;

#define BK_L(f) atomic_load_explicit(&w->f, memory_order_relaxed)
    /* Pairs with the release store of the worker coming UP and the
     * broker's own stores around a respawn. */
    o->state = atomic_load_explicit(&w->state, memory_order_acquire);
    o->pid = BK_L(pid);
    o->restarts = BK_L(restarts);
    o->started = BK_L(started);
    o->heartbeat = BK_L(heartbeat);
    o->c[BK_SC_CONNECTIONS] = BK_L(connections);
    o->c[BK_SC_CONNECTIONS_TOTAL] = BK_L(connections_total);
    o->c[BK_SC_CHANNELS] = BK_L(channels);
    o->c[BK_SC_SESSIONS] = BK_L(sessions);
    o->c[BK_SC_BAD_REQUESTS] = BK_L(bad_requests);
    o->c[BK_SC_BYTES_IN] = BK_L(bytes_in);
    o->c[BK_SC_BYTES_OUT] = BK_L(bytes_out);
    o->c[BK_SC_ALLOCATIONS] = BK_L(allocations);
    o->c[BK_SC_REJECTED] = BK_L(rejected_connections);
    o->c[BK_SC_EVICTED] = BK_L(sessions_evicted);
    o->c[BK_SC_NOTIF_DROPPED] = BK_L(notif_dropped);
    o->c[BK_SC_NOTIFICATIONS] = BK_L(notifications);
    o->c[BK_SC_NOTIF_BLOCKS] = BK_L(notif_blocks);
    o->c[BK_SC_OVERFLOWS] = BK_L(overflows);
    o->c[BK_SC_WRITE_OPS] = BK_L(write_ops);
    o->c[BK_SC_RSA_OPS] = BK_L(rsa_private_ops);
    o->c[BK_SC_RSA_CPU] = BK_L(rsa_cpu_us);
    o->c[BK_SC_MOVED_IN] = BK_L(sessions_moved_in);
    o->c[BK_SC_MOVED_OUT] = BK_L(sessions_moved_out);
    o->c[BK_SC_MOVE_FAILED] = BK_L(session_moves_failed);
    o->c[BK_SC_MOVE_LOST] = BK_L(session_move_values_lost);
    o->c[BK_SC_MOVE_BYTES] = BK_L(session_move_bytes);
    o->c[BK_SC_INHERITED] = BK_L(sessions_inherited);
    o->c[BK_SC_PARK_LOST] = BK_L(session_park_values_lost);
    o->c[BK_SC_PARK_WRITES] = BK_L(session_park_writes);
    o->c[BK_SC_NOT_PARKED] = BK_L(sessions_not_parked);
    o->c[BK_SC_PARK_BYTES] = BK_L(session_park_bytes);
    o->c[BK_SC_MOVE_EVENTS] = BK_L(session_move_events);
    o->c[BK_SC_MOVE_EVENTS_LOST] = BK_L(session_move_events_lost);
    o->c[BK_SC_STALL_MAX] = BK_L(loop_stall_max_us);
    o->c[BK_SC_RSA_CB_MAX] = BK_L(loop_rsa_ops_max);
    o->c[BK_SC_RSA_CPU_MAX] = BK_L(loop_rsa_cpu_max_us);
    for (int b = 0; b < SHM_LAT_BUCKETS; b++)
        o->loop[b] = BK_L(loop_iterations[b]);
    o->loop_busy_us = BK_L(loop_busy_us);
    for (int i = 0; i < SHM_SVC_MAX; i++) {
        o->requests[i] = BK_L(requests[i]);
        o->latency_sum_us[i] = BK_L(latency_sum_us[i]);
        for (int b = 0; b < SHM_LAT_BUCKETS; b++)
            o->latency[i][b] = BK_L(latency[i][b]);
    }
#undef BK_L
}

/*
 * Copy every row and sum them, into the view allocated at init (~350 KiB
 * at 64 workers: not on the stack, and not per request).
 */
static struct bk_stats_view *
bk_stats_view(const struct bk_stats *st)
{
    struct bk_stats_view *v = st->view;
    struct bk_stats_row  *t;

    memset(v, 0, sizeof(*v));
    v->n = st->sv->n;
    v->now_dt = ua_datetime_now();
    v->uptime_s = (bk_clock_ms() - st->start_ms) / 1000;
    t = &v->total;
    for (unsigned i = 0; i < v->n; i++) {
        struct bk_stats_row *r = &v->rows[i];

        bk_stats_read_row(bk_supervisor_row(st->sv, i), r);
        t->restarts += r->restarts;
        for (int k = 0; k < BK_SC_MAX; k++)
            t->c[k] += r->c[k];
        for (int k = BK_SC_STALL_MAX; k <= BK_SC_RSA_CPU_MAX; k++) {
            t->c[k] -= r->c[k];
            if (r->c[k] > t->c[k])
                t->c[k] = r->c[k];
        }
        for (int b = 0; b < SHM_LAT_BUCKETS; b++)
            t->loop[b] += r->loop[b];
        for (int s = 0; s < SHM_SVC_MAX; s++) {
            t->requests[s] += r->requests[s];
            t->latency_sum_us[s] += r->latency_sum_us[s];
            for (int b = 0; b < SHM_LAT_BUCKETS; b++)
                t->latency[s][b] += r->latency[s][b];
        }
    }
    return v;
}

static const char *
bk_stats_state(const struct bk_stats *st, unsigned i,
               const struct bk_stats_row *r)
{
    if (st->sv->slots[i].failed)
        return "failed";
    switch (r->state) {
    case SHM_WS_STARTING: return "starting";
    case SHM_WS_UP: return "up";
    case SHM_WS_DOWN: return "down";
    default: return "empty";
    }
}

static uint64_t
bk_stats_uptime_s(const struct bk_stats_view *v, const struct bk_stats_row *r)
{
    if (r->state != SHM_WS_UP || r->started == 0 || v->now_dt < r->started)
        return 0;
    return (uint64_t)(v->now_dt - r->started) / 10000000u;
}

/* ------------------------------------------------------------ fan-out */

/* The broker's fan-out counters (broker/fanout.h), read once. */
struct bk_stats_fanout {
    bool     on;
    uint64_t v[BK_SF_MAX];
};

static void
bk_stats_fanout_read(const struct bk_stats *st, struct bk_stats_fanout *o)
{
    const struct bk_fanout  *f = st->fanout;
    const struct bk_request *rq = st->request;
    struct shm_fanout       *sh;

    memset(o, 0, sizeof(*o));
    if (f == NULL || f->n == 0 || f->fo.sh == NULL)
        return;
    sh = f->fo.sh;
    o->on = true;
#define BK_F(f) atomic_load_explicit(&sh->f, memory_order_relaxed)
    o->v[BK_SF_BLOCKS_TOTAL] = f->pool.nblocks;
    o->v[BK_SF_BLOCKS_FREE] = shm_blockpool_free_count(&f->pool);
    o->v[BK_SF_NOTIFICATIONS] = BK_F(notifications);
    o->v[BK_SF_BLOCKS] = BK_F(blocks);
    o->v[BK_SF_EXHAUSTED] = BK_F(blocks_exhausted);
    o->v[BK_SF_RING_FULL] = BK_F(ring_full);
    o->v[BK_SF_DROPPED] = BK_F(notifications_dropped);
    o->v[BK_SF_WRITES] = BK_F(writes);
    o->v[BK_SF_FEED] = BK_F(feed_values);
    o->v[BK_SF_EVENTS] = BK_F(events);
    o->v[BK_SF_FEED_EVENTS] = BK_F(feed_events);
    o->v[BK_SF_FEED_WAITS] = f->feed_waits;
    o->v[BK_SF_FEED_WAIT_MS] = f->feed_wait_ms;
    o->v[BK_SF_FEED_WAIT_EXPIRED] = f->feed_wait_expired;
    o->v[BK_SF_RECLAIMED] = atomic_load_explicit(&f->pool.sh->reclaimed,
                                                 memory_order_relaxed);
    if (rq != NULL) {
        o->v[BK_SF_M_CALLS] = rq->mstat.calls;
        o->v[BK_SF_M_ANSWERED] = rq->mstat.answered;
        o->v[BK_SF_M_TIMEOUTS] = rq->mstat.timeouts;
        o->v[BK_SF_M_NO_OWNER] = rq->mstat.no_owner;
        o->v[BK_SF_M_ERRORS] = rq->mstat.errors;
        o->v[BK_SF_M_LATE] = rq->mstat.late;
    }
    for (unsigned i = 0; i < f->n; i++) {
        const struct shm_ring *r = f->w[i].notif.sh;

        o->v[BK_SF_BELLS] += atomic_load_explicit(&r->bells,
                                                  memory_order_relaxed);
        o->v[BK_SF_DEFERRED] += atomic_load_explicit(&r->deferred,
                                                     memory_order_relaxed);
    }
#undef BK_F
}

static void
bk_stats_json_fanout(const struct bk_stats *st, struct evbuffer *b)
{
    struct bk_stats_fanout fo;
    uint64_t               th[BK_ST_MAX];

    bk_stats_fanout_read(st, &fo);
    evbuffer_add_printf(b, " \"fanout\": {");
    for (int k = 0; k < BK_SF_MAX; k++)
        evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, k ? ", " : "",
                            bk_stats_fanout_desc[k].json, fo.v[k]);
    evbuffer_add_printf(b, "},\n");
    if (bk_stats_throttle_read(st->as, th)) {
        evbuffer_add_printf(b, " \"throttle\": {");
        for (int k = 0; k < BK_ST_MAX; k++)
            evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, k ? ", " : "",
                                bk_stats_throttle_desc[k].json, th[k]);
        evbuffer_add_printf(b, "},\n");
    }
}

/* ------------------------------------------------------------ throttle */

/* The throttle's counters into v[BK_ST_MAX]; false when there is none. */
static bool
bk_stats_throttle_read(const struct bk_addrspace *as, uint64_t *v)
{
    const struct shm_throttle *t = shm_throttle_of(&as->seg);

    memset(v, 0, BK_ST_MAX * sizeof(*v));
    if (t == NULL)
        return false;
    for (int k = 0; k < SHM_THR_C_MAX; k++)
        v[k] = shm_throttle_total(t, (enum shm_throttle_counter)k);
    v[SHM_THR_C_MAX] = shm_throttle_blocked_count(t, bk_clock_ms());
    return true;
}

/* ------------------------------------------------------------ MQTT */

/* The MQTT feed's counters into v[BK_SM_MAX]; false when it is off. */
static bool
bk_stats_mqtt_read(const struct bk_stats *st, uint64_t *v)
{
    const struct bk_mqtt *m = st->mqtt;

    memset(v, 0, BK_SM_MAX * sizeof(*v));
    if (m == NULL || !m->on)
        return false;
    v[BK_SM_CONNECTED] = m->c.connected;
    v[BK_SM_MESSAGES] = m->c.messages;
    v[BK_SM_APPLIED] = m->c.lines_applied;
    v[BK_SM_REFUSED] = m->c.lines_refused;
    v[BK_SM_TOO_LARGE] = m->c.payloads_too_large;
    v[BK_SM_RECONNECTS] = m->c.reconnects;
    return true;
}

/* ------------------------------------------------------------ alarms */

/* The alarms' counters into v[BK_SA_MAX]; false when there are none. */
static bool
bk_stats_alarm_read(const struct bk_stats *st, uint64_t *v)
{
    const struct bk_alarmnode *an = &st->as->alarms;
    struct bk_alarmnode_counts c;

    memset(v, 0, BK_SA_MAX * sizeof(*v));
    if (an->n == 0 && st->as->alarms_refused == 0)
        return false;
    bk_alarmnode_count(an, &c);
    v[BK_SA_CONFIGURED] = an->n - an->nadopted;
    v[BK_SA_NODESET] = an->nadopted;
    v[BK_SA_NODESET_REFUSED] = st->as->alarms_refused;
    v[BK_SA_ACTIVE] = c.active;
    v[BK_SA_UNACKED] = c.unacked;
    v[BK_SA_SHELVED] = c.shelved;
    v[BK_SA_RETAINED] = c.retained;
    v[BK_SA_BAND_LOW] = c.band[0];
    v[BK_SA_BAND_MEDIUM] = c.band[1];
    v[BK_SA_BAND_HIGH] = c.band[2];
    v[BK_SA_TRANSITIONS] = an->st.transitions;
    v[BK_SA_PER_SECOND] = an->st.per_second;
    v[BK_SA_EVALUATIONS] = an->st.evaluations;
    v[BK_SA_CALLS] = an->st.calls;
    v[BK_SA_CALLS_REFUSED] = an->st.calls_refused;
    v[BK_SA_LOST] = an->st.lost;
    return true;
}

/* ------------------------------------------------------------ history */

/* The historian's counters into v[BK_SH_MAX]; false without one. */
static bool
bk_stats_history_read(const struct bk_stats *st, uint64_t *v)
{
    const struct shm_worker *r;
    int64_t                  oldest;

    memset(v, 0, BK_SH_MAX * sizeof(*v));
    if (st->sv == NULL || !st->sv->historian)
        return false;
    r = bk_supervisor_row(st->sv, st->sv->n);
#define BK_SH(f) atomic_load_explicit(&r->f, memory_order_relaxed)
    v[BK_SH_UP] = atomic_load_explicit(&r->state, memory_order_acquire)
                  == SHM_WS_UP;
    v[BK_SH_NODES] = BK_SH(hist_nodes);
    v[BK_SH_STORED] = BK_SH(hist_stored);
    v[BK_SH_DROPPED] = BK_SH(hist_dropped);
    v[BK_SH_FILTERED] = BK_SH(hist_filtered);
    v[BK_SH_COMMITS] = BK_SH(hist_commits);
    v[BK_SH_LAG_MS] = BK_SH(hist_lag_ms);
    v[BK_SH_FULL] = BK_SH(hist_full);
    v[BK_SH_VALUES] = BK_SH(hist_values);
    v[BK_SH_BYTES] = BK_SH(hist_bytes);
    v[BK_SH_FILE_BYTES] = BK_SH(hist_file_bytes);
    v[BK_SH_RETENTION_DROPPED] = BK_SH(hist_retention_dropped);
    oldest = BK_SH(hist_oldest);
    /* DateTime (100 ns since 1601) to Unix seconds. */
    v[BK_SH_OLDEST_S] = oldest > 116444736000000000ll
                        ? (uint64_t)((oldest - 116444736000000000ll)
                                     / 10000000) : 0;
    v[BK_SH_LOST] = BK_SH(overflows);
    v[BK_SH_EVENTS_STORED] = BK_SH(hist_events_stored);
    v[BK_SH_EVENTS_DROPPED] = BK_SH(hist_events_dropped);
    v[BK_SH_EVENTS_LOST] = BK_SH(hist_events_lost);
    v[BK_SH_EVENTS] = BK_SH(hist_events);
    v[BK_SH_EVENT_BYTES] = BK_SH(hist_event_bytes);
    v[BK_SH_EVENTS_RETENTION_DROPPED] = BK_SH(hist_events_retention_dropped);
    v[BK_SH_MODIFIED] = BK_SH(hist_modified);
    v[BK_SH_MODIFIED_BYTES] = BK_SH(hist_modified_bytes);
    v[BK_SH_ANNOTATIONS] = BK_SH(hist_annotations);
    v[BK_SH_ANNOTATION_BYTES] = BK_SH(hist_annotation_bytes);
#undef BK_SH
    return true;
}

/* ------------------------------------------------------------ JSON */

/* The counters, requests and latency of r (a worker or the totals). */
static void
bk_stats_json_row(struct evbuffer *b, const struct bk_stats_row *r)
{
    const char *sep = "";

    for (int k = 0; k < BK_SC_MAX; k++)
        evbuffer_add_printf(b, "\"%s\": %" PRIu64 ", ",
                            bk_stats_counters[k].json, r->c[k]);
    {
        uint64_t n = 0;

        for (int k = 0; k < SHM_LAT_BUCKETS; k++)
            n += r->loop[k];
        evbuffer_add_printf(b, "\"loop_iterations_us\": {\"count\": %" PRIu64
                            ", \"buckets\": [", n);
        for (int k = 0; k < SHM_LAT_BUCKETS; k++)
            evbuffer_add_printf(b, "%s%" PRIu64, k ? ", " : "", r->loop[k]);
        evbuffer_add_printf(b, "]}, ");
    }
    evbuffer_add_printf(b, "\"requests\": {");
    for (int s = 0; s < SHM_SVC_MAX; s++)
        evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, s ? ", " : "",
                            bk_stats_svc[s], r->requests[s]);
    evbuffer_add_printf(b, "}, \"latency_us\": {");
    for (int s = 0; s < SHM_SVC_MAX; s++) {
        uint64_t n = 0;

        for (int k = 0; k < SHM_LAT_BUCKETS; k++)
            n += r->latency[s][k];
        if (n == 0)
            continue;
        evbuffer_add_printf(b, "%s\"%s\": {\"count\": %" PRIu64
                            ", \"sum_us\": %" PRIu64 ", \"buckets\": [",
                            sep, bk_stats_svc[s], n, r->latency_sum_us[s]);
        for (int k = 0; k < SHM_LAT_BUCKETS; k++)
            evbuffer_add_printf(b, "%s%" PRIu64, k ? ", " : "",
                                r->latency[s][k]);
        evbuffer_add_printf(b, "]}");
        sep = ", ";
    }
    evbuffer_add_printf(b, "}");
}

static void
bk_stats_json(const struct bk_stats *st, const struct bk_stats_view *v,
              struct evbuffer *b)
{
    const struct bk_addrspace *as = st->as;
    struct shm_throttle       *th;

    evbuffer_add_printf(b,
        "{\"broker\": {\"pid\": %d, \"version\": \"%s\", \"uptime_s\": %"
        PRIu64 ", \"workers\": %u, \"nodes\": %u, \"references\": %u, "
        "\"values\": %u, \"segment_bytes\": %zu, \"worker_restarts\": %u, "
        "\"value_heap_bytes_used\": %" PRIu64 ", \"allocations\": %" PRIu64
        "},\n",
        (int)getpid(), UA_VERSION, v->uptime_s, v->n, as->ns.nnodes,
        as->ns.nrefs, as->vals.nslots, as->seg.size, v->total.restarts,
        (uint64_t)as->vals.hdr->vheap.bytes_used, bk_alloc_count());
    bk_stats_json_fanout(st, b);
    {
        uint64_t mq[BK_SM_MAX];

        if (bk_stats_mqtt_read(st, mq)) {
            evbuffer_add_printf(b, " \"mqtt\": {");
            for (int k = 0; k < BK_SM_MAX; k++)
                evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, k ? ", " : "",
                                    bk_stats_mqtt_desc[k].json, mq[k]);
            evbuffer_add_printf(b, "},\n");
        }
    }
    {
        uint64_t al[BK_SA_MAX];

        if (bk_stats_alarm_read(st, al)) {
            evbuffer_add_printf(b, " \"alarms\": {");
            for (int k = 0; k < BK_SA_MAX; k++)
                evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, k ? ", " : "",
                                    bk_stats_alarm_desc[k].json, al[k]);
            evbuffer_add_printf(b, "},\n");
        }
    }
    {
        uint64_t hv[BK_SH_MAX];

        if (bk_stats_history_read(st, hv)) {
            evbuffer_add_printf(b, " \"history\": {");
            for (int k = 0; k < BK_SH_MAX; k++)
                evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, k ? ", " : "",
                                    bk_stats_history_desc[k].json, hv[k]);
            evbuffer_add_printf(b, "},\n");
        }
    }
    evbuffer_add_printf(b, " \"workers\": [");
    th = shm_throttle_of(&as->seg);
    for (unsigned i = 0; i < v->n; i++) {
        const struct bk_stats_row *r = &v->rows[i];
        int64_t age = r->heartbeat != 0 ? (v->now_dt - r->heartbeat) / 10000
                                        : -1;

        evbuffer_add_printf(b,
            "%s\n  {\"slot\": %u, \"pid\": %d, \"state\": \"%s\", "
            "\"uptime_s\": %" PRIu64 ", \"restarts\": %u, "
            "\"heartbeat_age_ms\": %" PRId64 ", ",
            i ? "," : "", i, (int)r->pid, bk_stats_state(st, i, r),
            bk_stats_uptime_s(v, r), r->restarts, age);
        bk_stats_json_row(b, r);
        if (th != NULL) {
            /* This worker's share of the throttle's counters. */
            evbuffer_add_printf(b, ", \"throttle\": {");
            for (int k = 0; k < SHM_THR_C_MAX; k++)
                evbuffer_add_printf(b, "%s\"%s\": %" PRIu64, k ? ", " : "",
                                    bk_stats_throttle_desc[k].json,
                                    atomic_load_explicit(
                                        &th->w[i].c[k],
                                        memory_order_relaxed));
            evbuffer_add_printf(b, "}");
        }
        evbuffer_add_printf(b, "}");
    }
    evbuffer_add_printf(b, "\n ],\n \"totals\": {\"restarts\": %u, ",
                        v->total.restarts);
    bk_stats_json_row(b, &v->total);
    evbuffer_add_printf(b, "}}\n");
}

/* ------------------------------------------------------------ Prometheus */

static void
bk_stats_prom_family(struct evbuffer *b, const char *name, const char *type,
                     const char *help)
{
    evbuffer_add_printf(b, "# HELP uabroker_%s %s\n# TYPE uabroker_%s %s\n",
                        name, help, name, type);
}

/* A label value, escaped as the text format wants (\\, \", \n). */
static void
bk_stats_prom_label(struct evbuffer *b, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"')
            evbuffer_add_printf(b, "\\%c", *s);
        else if (*s == '\n')
            evbuffer_add(b, "\\n", 2);
        else
            evbuffer_add(b, s, 1);
    }
}

static void
bk_stats_prom(const struct bk_stats *st, const struct bk_stats_view *v,
              struct evbuffer *b)
{
    const struct bk_addrspace *as = st->as;

    bk_stats_prom_family(b, "info", "gauge", "build information");
    evbuffer_add_printf(b, "uabroker_info{version=\"");
    bk_stats_prom_label(b, UA_VERSION);
    evbuffer_add_printf(b, "\"} 1\n");
    bk_stats_prom_family(b, "uptime_seconds", "gauge",
                         "seconds since the broker started");
    evbuffer_add_printf(b, "uabroker_uptime_seconds %" PRIu64 "\n",
                        v->uptime_s);
    bk_stats_prom_family(b, "nodes", "gauge", "nodes in the address space");
    evbuffer_add_printf(b, "uabroker_nodes %u\n", as->ns.nnodes);
    bk_stats_prom_family(b, "references", "gauge",
                         "references in the address space");
    evbuffer_add_printf(b, "uabroker_references %u\n", as->ns.nrefs);
    bk_stats_prom_family(b, "values", "gauge", "value slots");
    evbuffer_add_printf(b, "uabroker_values %u\n", as->vals.nslots);
    bk_stats_prom_family(b, "segment_bytes", "gauge",
                         "size of the shared-memory segment");
    evbuffer_add_printf(b, "uabroker_segment_bytes %zu\n", as->seg.size);
    bk_stats_prom_family(b, "value_heap_bytes_used", "gauge",
                         "bytes of the shared value heap in use");
    evbuffer_add_printf(b, "uabroker_value_heap_bytes_used %" PRIu64 "\n",
                        (uint64_t)as->vals.hdr->vheap.bytes_used);
    bk_stats_prom_family(b, "broker_allocations_total", "counter",
                         "heap allocations by the broker (flat in steady "
                         "state)");
    evbuffer_add_printf(b, "uabroker_broker_allocations_total %" PRIu64 "\n",
                        bk_alloc_count());
    {
        struct bk_stats_fanout fo;

        bk_stats_fanout_read(st, &fo);
        for (int k = 0; fo.on && k < BK_SF_MAX; k++) {
            const struct bk_stats_counter_desc *d = &bk_stats_fanout_desc[k];

            bk_stats_prom_family(b, d->metric, d->type, d->help);
            if (k == BK_SF_FEED_WAIT_MS)    /* seconds, as Prometheus
                                               wants */
                evbuffer_add_printf(b, "uabroker_%s %.3f\n", d->metric,
                                    (double)fo.v[k] / 1000.0);
            else
                evbuffer_add_printf(b, "uabroker_%s %" PRIu64 "\n",
                                    d->metric, fo.v[k]);
        }
    }
    {
        uint64_t th[BK_ST_MAX];
        bool     on = bk_stats_throttle_read(as, th);

        for (int k = 0; on && k < BK_ST_MAX; k++) {
            const struct bk_stats_counter_desc *d =
                &bk_stats_throttle_desc[k];

            bk_stats_prom_family(b, d->metric, d->type, d->help);
            evbuffer_add_printf(b, "uabroker_%s %" PRIu64 "\n", d->metric,
                                th[k]);
        }
    }
    {
        uint64_t mq[BK_SM_MAX];
        bool     on = bk_stats_mqtt_read(st, mq);

        for (int k = 0; on && k < BK_SM_MAX; k++) {
            const struct bk_stats_counter_desc *d = &bk_stats_mqtt_desc[k];

            bk_stats_prom_family(b, d->metric, d->type, d->help);
            evbuffer_add_printf(b, "uabroker_%s %" PRIu64 "\n", d->metric,
                                mq[k]);
        }
    }
    {
        uint64_t al[BK_SA_MAX];
        bool     on = bk_stats_alarm_read(st, al);

        for (int k = 0; on && k < BK_SA_MAX; k++) {
            const struct bk_stats_counter_desc *d = &bk_stats_alarm_desc[k];

            bk_stats_prom_family(b, d->metric, d->type, d->help);
            evbuffer_add_printf(b, "uabroker_%s %" PRIu64 "\n", d->metric,
                                al[k]);
        }
    }
    {
        uint64_t hv[BK_SH_MAX];
        bool     on = bk_stats_history_read(st, hv);

        for (int k = 0; on && k < BK_SH_MAX; k++) {
            const struct bk_stats_counter_desc *d = &bk_stats_history_desc[k];

            bk_stats_prom_family(b, d->metric, d->type, d->help);
            if (k == BK_SH_LAG_MS)      /* seconds, as Prometheus wants */
                evbuffer_add_printf(b, "uabroker_%s %.3f\n", d->metric,
                                    (double)hv[k] / 1000.0);
            else
                evbuffer_add_printf(b, "uabroker_%s %" PRIu64 "\n",
                                    d->metric, hv[k]);
        }
    }

    bk_stats_prom_family(b, "worker_up", "gauge",
                         "1 when the worker slot is serving");
    for (unsigned i = 0; i < v->n; i++)
        evbuffer_add_printf(b, "uabroker_worker_up{worker=\"%u\"} %d\n", i,
                            v->rows[i].state == SHM_WS_UP);
    bk_stats_prom_family(b, "worker_restarts_total", "counter",
                         "times the slot's worker was respawned");
    for (unsigned i = 0; i < v->n; i++)
        evbuffer_add_printf(b, "uabroker_worker_restarts_total"
                            "{worker=\"%u\"} %u\n", i, v->rows[i].restarts);
    bk_stats_prom_family(b, "worker_uptime_seconds", "gauge",
                         "seconds since the slot's worker came up");
    for (unsigned i = 0; i < v->n; i++)
        evbuffer_add_printf(b, "uabroker_worker_uptime_seconds"
                            "{worker=\"%u\"} %" PRIu64 "\n", i,
                            bk_stats_uptime_s(v, &v->rows[i]));
    for (int k = 0; k < BK_SC_MAX; k++) {
        const struct bk_stats_counter_desc *d = &bk_stats_counters[k];
        size_t                              jl = strlen(d->json);
        bool us = jl > 3 && strcmp(d->json + jl - 3, "_us") == 0;

        bk_stats_prom_family(b, d->metric, d->type, d->help);
        for (unsigned i = 0; i < v->n; i++)
            if (us)
                evbuffer_add_printf(b, "uabroker_%s{worker=\"%u\"} %.6f\n",
                                    d->metric, i,
                                    (double)v->rows[i].c[k] / 1e6);
            else
                evbuffer_add_printf(b, "uabroker_%s{worker=\"%u\"} %" PRIu64
                                    "\n", d->metric, i, v->rows[i].c[k]);
    }
    bk_stats_prom_family(b, "loop_iteration_duration_seconds", "histogram",
                         "busy time of each event-loop iteration of the "
                         "worker, first callback to flush (what its "
                         "channels wait)");
    for (unsigned i = 0; i < v->n; i++) {
        const struct bk_stats_row *r = &v->rows[i];
        uint64_t                   cum = 0;

        /* Bucket k holds [2^k, 2^(k+1)) µs: le = 2^(k+1) µs. */
        for (int k = 0; k < SHM_LAT_BUCKETS; k++) {
            cum += r->loop[k];
            evbuffer_add_printf(b, "uabroker_loop_iteration_duration_seconds_"
                                "bucket{worker=\"%u\",le=\"%.6f\"} %" PRIu64
                                "\n", i, (double)(UINT64_C(2) << k) / 1e6,
                                cum);
        }
        evbuffer_add_printf(b, "uabroker_loop_iteration_duration_seconds_"
                            "bucket{worker=\"%u\",le=\"+Inf\"} %" PRIu64
                            "\n", i, cum);
        evbuffer_add_printf(b, "uabroker_loop_iteration_duration_seconds_"
                            "sum{worker=\"%u\"} %.6f\n", i,
                            (double)r->loop_busy_us / 1e6);
        evbuffer_add_printf(b, "uabroker_loop_iteration_duration_seconds_"
                            "count{worker=\"%u\"} %" PRIu64 "\n", i, cum);
    }
    bk_stats_prom_family(b, "requests_total", "counter",
                         "service requests answered, by service");
    for (unsigned i = 0; i < v->n; i++)
        for (int s = 0; s < SHM_SVC_MAX; s++)
            evbuffer_add_printf(b, "uabroker_requests_total{worker=\"%u\","
                                "service=\"%s\"} %" PRIu64 "\n", i,
                                bk_stats_svc[s], v->rows[i].requests[s]);
    bk_stats_prom_family(b, "request_duration_seconds", "histogram",
                         "time from a complete request to its encoded "
                         "response, by service");
    for (unsigned i = 0; i < v->n; i++) {
        const struct bk_stats_row *r = &v->rows[i];

        for (int s = 0; s < SHM_SVC_MAX; s++) {
            uint64_t cum = 0;

            for (int k = 0; k < SHM_LAT_BUCKETS; k++)
                cum += r->latency[s][k];
            if (cum == 0)
                continue;
            cum = 0;
            /* Bucket k holds [2^k, 2^(k+1)) µs: le = 2^(k+1) µs. */
            for (int k = 0; k < SHM_LAT_BUCKETS; k++) {
                cum += r->latency[s][k];
                evbuffer_add_printf(b, "uabroker_request_duration_seconds_"
                                    "bucket{worker=\"%u\",service=\"%s\","
                                    "le=\"%.6f\"} %" PRIu64 "\n", i,
                                    bk_stats_svc[s],
                                    (double)(UINT64_C(2) << k) / 1e6, cum);
            }
            evbuffer_add_printf(b, "uabroker_request_duration_seconds_bucket"
                                "{worker=\"%u\",service=\"%s\",le=\"+Inf\"} %"
                                PRIu64 "\n", i, bk_stats_svc[s], cum);
            evbuffer_add_printf(b, "uabroker_request_duration_seconds_sum"
                                "{worker=\"%u\",service=\"%s\"} %.6f\n", i,
                                bk_stats_svc[s],
                                (double)r->latency_sum_us[s] / 1e6);
            evbuffer_add_printf(b, "uabroker_request_duration_seconds_count"
                                "{worker=\"%u\",service=\"%s\"} %" PRIu64
                                "\n", i, bk_stats_svc[s], cum);
        }
    }
}

/* ------------------------------------------------------------ health */

/* 200 when every slot is UP with a fresh heartbeat; else 503 + reasons. */
static int
bk_stats_health(const struct bk_stats *st, const struct bk_stats_view *v,
                struct evbuffer *b)
{
    int bad = 0;

    if (st->sv->stopping) {
        evbuffer_add_printf(b, "stopping\n");
        return 503;
    }
    for (unsigned i = 0; i < v->n; i++) {
        const struct bk_stats_row *r = &v->rows[i];
        int64_t age_ms = (v->now_dt - r->heartbeat) / 10000;

        if (st->sv->slots[i].failed) {
            evbuffer_add_printf(b, "worker %u: failed to start (exit code "
                                "2), not respawned\n", i);
            bad = 1;
        } else if (r->state != SHM_WS_UP) {
            evbuffer_add_printf(b, "worker %u: %s\n", i,
                                bk_stats_state(st, i, r));
            bad = 1;
        } else if (age_ms >= BK_STATS_HEARTBEAT_MAX_MS) {
            evbuffer_add_printf(b, "worker %u: heartbeat %.1f s old\n", i,
                                (double)age_ms / 1000);
            bad = 1;
        }
    }
    if (bad)
        return 503;
    evbuffer_add_printf(b, "ok\n");
    return 200;
}

/* ------------------------------------------------------------ HTTP */

static void
bk_stats_reply(struct evhttp_request *req, int code, const char *reason,
               const char *type, struct evbuffer *b)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    char              len[32];

    evhttp_add_header(h, "Content-Type", type);
    evhttp_add_header(h, "Cache-Control", "no-store");
    if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
        /* The length of the body a GET would get, and no body. */
        snprintf(len, sizeof(len), "%zu", evbuffer_get_length(b));
        evhttp_add_header(h, "Content-Length", len);
        evbuffer_drain(b, evbuffer_get_length(b));
    }
    evhttp_send_reply(req, code, reason, b);
}

static void
bk_stats_on_request(struct evhttp_request *req, void *arg)
{
    const struct bk_stats *st = arg;
    enum evhttp_cmd_type   cmd = evhttp_request_get_command(req);
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char            *path = uri != NULL ? evhttp_uri_get_path(uri)
                                              : NULL;
    struct bk_stats_view  *v;
    struct evbuffer       *b = evbuffer_new();
    int                    code;

    if (b == NULL) {
        evhttp_send_error(req, 500, "Internal Server Error");
        return;
    }
    if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
                          "GET, HEAD");
        evbuffer_add_printf(b, "method not allowed\n");
        bk_stats_reply(req, 405, "Method Not Allowed", "text/plain", b);
        evbuffer_free(b);
        return;
    }
    if (path == NULL
        || (strcmp(path, "/stats") != 0 && strcmp(path, "/metrics") != 0
            && strcmp(path, "/health") != 0)) {
        evbuffer_add_printf(b, "not found; try /stats, /metrics or "
                            "/health\n");
        bk_stats_reply(req, 404, "Not Found", "text/plain", b);
        evbuffer_free(b);
        return;
    }
    v = bk_stats_view(st);
    if (strcmp(path, "/stats") == 0) {
        bk_stats_json(st, v, b);
        bk_stats_reply(req, 200, "OK", "application/json", b);
    } else if (strcmp(path, "/metrics") == 0) {
        bk_stats_prom(st, v, b);
        bk_stats_reply(req, 200, "OK", "text/plain; version=0.0.4", b);
    } else {
        code = bk_stats_health(st, v, b);
        bk_stats_reply(req, code, code == 200 ? "OK" : "Service Unavailable",
                       "text/plain", b);
    }
    evbuffer_free(b);
}

/* ------------------------------------------------------------ client */

int
bk_stats_fetch(const char *addr, FILE *out)
{
    struct addrinfo  hints, *ai = NULL, *p;
    struct pollfd    pfd;
    char             host[64], portstr[8], req[160];
    char            *resp;
    size_t           len = 0;
    ssize_t          n;
    uint16_t         port;
    int              fd = -1, rc, code, ret = 1;
    const char      *body;

    if (bk_stats_parse_listen(addr, host, sizeof(host), &port) != 0) {
        fprintf(stderr, "%s: \"%s\" is not ADDR:PORT\n", bk_stats_log,
                addr);
        return 2;
    }
    if (strcmp(host, "0.0.0.0") == 0)
        snprintf(host, sizeof(host), "127.0.0.1");
    else if (strcmp(host, "::") == 0)
        snprintf(host, sizeof(host), "::1");
    snprintf(portstr, sizeof(portstr), "%u", port);
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    rc = getaddrinfo(host, portstr, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "%s: %s: %s\n", bk_stats_log, host,
                gai_strerror(rc));
        return 1;
    }
    for (p = ai; p != NULL; p = p->ai_next) {
        fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC,
                    p->ai_protocol);
        if (fd == -1)
            continue;
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0)
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd == -1) {
        fprintf(stderr, "%s: cannot connect to the stats endpoint %s: %s "
                "(is uabroker running?)\n", bk_stats_log, addr,
                strerror(errno));
        return 1;
    }
    resp = bk_alloc(BK_STATS_RESP_MAX);
    if (resp == NULL) {
        fprintf(stderr, "%s: out of memory\n", bk_stats_log);
        close(fd);
        return 1;
    }
    n = snprintf(req, sizeof(req), "GET /stats HTTP/1.0\r\nHost: %s\r\n"
                 "Connection: close\r\n\r\n", addr);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        fprintf(stderr, "%s: send() failed: %s\n", bk_stats_log,
                strerror(errno));
        goto out;
    }
    pfd.fd = fd;
    pfd.events = POLLIN;
    while (len < BK_STATS_RESP_MAX - 1) {
        rc = poll(&pfd, 1, BK_STATS_CLIENT_MS);
        if (rc <= 0) {
            fprintf(stderr, "%s: no answer from %s\n", bk_stats_log, addr);
            goto out;
        }
        n = recv(fd, resp + len, BK_STATS_RESP_MAX - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    resp[len] = '\0';
    body = strstr(resp, "\r\n\r\n");
    if (sscanf(resp, "HTTP/%*d.%*d %d", &code) != 1 || body == NULL) {
        fprintf(stderr, "%s: %s did not answer HTTP\n", bk_stats_log, addr);
        goto out;
    }
    fputs(body + 4, out);
    if (code != 200)
        fprintf(stderr, "%s: %s answered %d\n", bk_stats_log, addr, code);
    else
        ret = 0;
out:
    bk_free(resp);
    close(fd);
    return ret;
}
