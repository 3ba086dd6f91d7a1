/*
 * broker/config.c: the key table and the INI reader (libinih).
 */
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <stdbool.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alarmcfg.h"
#include "histcfg.h"
#include "shm/layout.h"
#include "shm/log.h"

enum bk_conf_type { BK_CT_U32, BK_CT_DOUBLE, BK_CT_STR, BK_CT_BOOL,
                    BK_CT_PATHS };

struct bk_conf_key {
    const char        *section;
    const char        *key;
    enum bk_conf_type  type;
    size_t             off;
    const char        *def;
    double             min;
    double             max;
    const char        *help;
};

struct bk_conf_load {
    struct bk_config *c;
    const char       *path;     /* the file: relative BK_CT_PATHS beside it */
    char             *err;
    size_t            errlen;
    int               failed;
};

static const struct bk_conf_key *bk_config_find(const char *section,
                                                const char *key);
static int bk_config_apply(struct bk_config *c, const struct bk_conf_key *k,
                           const char *value, char *err, size_t errlen);
static int bk_config_ini_cb(void *user, const char *section, const char *name,
                            const char *value);
static int bk_config_paths_beside(struct bk_config *c,
                                  const struct bk_conf_key *k,
                                  const char *value, const char *path,
                                  char *err, size_t errlen);
static int bk_config_alarm_key(struct bk_conf_load *l, const char *section,
                               const char *name, const char *value);
static int bk_config_histnode_key(struct bk_conf_load *l,
                                  const char *section, const char *name,
                                  const char *value);
static bool bk_config_live(const struct bk_conf_key *k);
static int bk_config_history_check(const struct bk_config *c, char *err,
                                   size_t errlen);
static void bk_config_history_snapshot(const struct bk_config *c,
                                       struct shm_config *s);
static void bk_config_format(const struct bk_config *c,
                             const struct bk_conf_key *k, char *out,
                             size_t cap);

#define U32(s, k, f, d, lo, hi, h)                                         \
    { s, k, BK_CT_U32, offsetof(struct bk_config, f), d, lo, hi, h }
#define DBL(s, k, f, d, lo, hi, h)                                         \
    { s, k, BK_CT_DOUBLE, offsetof(struct bk_config, f), d, lo, hi, h }
#define BOOL(s, k, f, d, h)                                                \
    { s, k, BK_CT_BOOL, offsetof(struct bk_config, f), d, 0, 1, h }
#define STR(s, k, f, d, h)                                                 \
    { s, k, BK_CT_STR, offsetof(struct bk_config, f), d, 0, 0, h }
#define PATHS(s, k, f, d, h)                                               \
    { s, k, BK_CT_PATHS, offsetof(struct bk_config, f), d, 0, 0, h }

static const struct bk_conf_key bk_conf_keys[] = {
    U32("server", "port", port, "4840", 1, 65535,
        "opc.tcp port, on all interfaces"),
    U32("server", "workers", workers, "0", 0, 64,
        "worker processes; 0 = one per online CPU (at most 64)"),
    U32("server", "retire_handover_ms", retire_handover_ms, "5000", 100,
        600000, "rolling restart: time a retiring worker hands its "
        "sessions to the others before it exits anyway (those left are "
        "lost); below retire_kill_ms"),
    U32("server", "retire_renotice_ms", retire_renotice_ms, "1000", 10,
        60000, "rolling restart: a retiring worker asks a peer to take a "
        "session again after this long"),
    U32("server", "retire_kill_ms", retire_kill_ms, "10000", 200, 600000,
        "rolling restart: SIGKILL to a retiring worker still running "
        "after this long"),
    U32("server", "roll_start_ms", roll_start_ms, "10000", 100, 600000,
        "rolling restart: time a worker has to come up (its successor, "
        "or one starting) before the restart goes on without it"),
    STR("server", "application_uri", application_uri, "",
        "ApplicationUri and namespace 1; empty = urn:<hostname>:uabroker"),
    STR("server", "hostname", hostname, "",
        "host name in endpoint URLs; empty = the system's host name"),
    STR("server", "runtime_dir", runtime_dir, "run",
        "directory for the doorbell and feed sockets"),
    STR("log", "level", log_level, "info",
        "lines logged: error, warning, notice, info or debug (each "
        "level includes those before it)"),
    STR("stats", "listen", stats_listen, "127.0.0.1:9840",
        "address:port of the HTTP stats endpoint (/stats /metrics /health)"),
    U32("addrspace", "vars", vars, "1000", 0, 10000000,
        "number of Objects/Demo/Vars variables ns=1;s=v0 ..."),
    U32("addrspace", "value_heap_mb", value_heap_mb, "64", 1, 65536,
        "shared-memory heap for values larger than 24 bytes, MiB"),
    DBL("addrspace", "simulation_interval_ms", simulation_interval_ms,
        "1000", 10, 3600000, "how often the Simulation variables change"),
    U32("addrspace", "simulation_vars", simulation_vars, "0", 0, 10000000,
        "the first N Demo.Vars variables (v0 ...) change at every "
        "simulation tick too: Int32 +1, Double +1.0; at most vars"),
    PATHS("addrspace", "nodesets", nodesets, "",
          "NodeSet2 XML files imported at start, in order, space-separated "
          "(relative: beside this file); empty = none"),
    U32("addrspace", "max_nodeset_nodes", max_nodeset_nodes, "4000000", 1,
        50000000, "nodes the nodesets may hold together"),
    U32("limits", "max_string_length", max_string_length, "1048576", 1024,
        16777216, "longest String accepted (bytes)"),
    U32("limits", "max_bytestring_length", max_bytestring_length, "1048576",
        1024, 16777216, "longest ByteString accepted (bytes)"),
    U32("limits", "max_array_length", max_array_length, "65535", 1024,
        16777216, "most elements in any array"),
    U32("limits", "max_message_size", max_message_size, "4194304", 8192,
        268435456, "largest message after chunk assembly (bytes)"),
    U32("limits", "max_chunk_count", max_chunk_count, "64", 1, 65535,
        "most chunks in one message"),
    U32("limits", "receive_buffer_size", receive_buffer_size, "65536", 8192,
        16777216, "chunk size offered in ACK (bytes)"),
    U32("limits", "max_sessions", max_sessions, "1000", 1, 100000,
        "sessions, all workers together "
        "(ServerCapabilities MaxSessions)"),
    U32("limits", "max_unactivated_per_address",
        max_unactivated_per_address, "50", 1, 100000,
        "sessions not activated yet per client IP address and worker"),
    U32("limits", "max_secure_channels", max_secure_channels, "1100", 2,
        100000, "secure channels per worker; >= max_sessions + 1"),
    U32("limits", "max_browse_continuation_points",
        max_browse_continuation_points, "10", 1, 1000,
        "Browse continuation points per session"),
    U32("limits", "hello_timeout_ms", hello_timeout_ms, "10000", 100,
        120000, "time a new connection has for HEL and OpenSecureChannel"),
    U32("limits", "min_session_timeout_ms", min_session_timeout_ms, "10000",
        100, 3600000, "shortest session timeout granted"),
    U32("limits", "max_session_timeout_ms", max_session_timeout_ms,
        "3600000", 1000, 86400000, "longest session timeout granted"),
    U32("limits", "session_move_timeout_ms", session_move_timeout_ms,
        "3000", 100, 60000,
        "time a worker waits for the worker holding a session it is asked "
        "to activate (then BadSessionIdInvalid)"),
    U32("limits", "max_session_move_bytes", max_session_move_bytes,
        "16777216", 65536, 1073741824,
        "largest session (with its subscriptions, queues and kept "
        "messages) that moves between workers"),
    U32("limits", "session_park_bytes", session_park_bytes, "33554432", 0,
        1073741824,
        "shared memory per worker where its sessions are kept for its "
        "successor should it die (0: off; a session that does not fit is "
        "not kept)"),
    U32("limits", "change_log_entries", change_log_entries, "65536", 1024,
        16777216,
        "value changes the broker keeps for the successor of a dead "
        "worker (64 bytes each, a power of two)"),
    U32("limits", "session_move_event_bytes", session_move_event_bytes,
        "1048576", 0, 268435456,
        "events a worker keeps while it takes a session over, to carry "
        "those of the move's window into its event items; 0 = off"),
    U32("limits", "min_token_lifetime_ms", min_token_lifetime_ms, "60000",
        1000, 3600000, "shortest secure channel token lifetime granted"),
    U32("limits", "max_token_lifetime_ms", max_token_lifetime_ms, "3600000",
        10000, 86400000, "longest secure channel token lifetime granted"),
    U32("limits", "accept_rate", accept_rate, "200", 0, 1000000,
        "new TCP connections accepted per second, all workers together, "
        "after accept_burst at once; more get ERR BadTcpServerTooBusy; "
        "0 = no limit"),
    U32("limits", "accept_burst", accept_burst, "1000", 1, 1000000,
        "connections accepted at once before accept_rate applies"),
    U32("limits", "max_translate_path_elements",
        max_translate_path_elements, "32", 1, 1000,
        "most elements in one RelativePath of TranslateBrowsePaths"),
    U32("limits", "max_nodes_per_read", max_nodes_per_read, "1000", 1,
        1000000, "OperationLimits MaxNodesPerRead"),
    U32("limits", "max_nodes_per_write", max_nodes_per_write, "1000", 1,
        1000000, "OperationLimits MaxNodesPerWrite"),
    U32("limits", "max_nodes_per_browse", max_nodes_per_browse, "1000", 1,
        1000000, "OperationLimits MaxNodesPerBrowse"),
    U32("limits", "max_nodes_per_register_nodes",
        max_nodes_per_register_nodes, "1000", 1, 1000000,
        "OperationLimits MaxNodesPerRegisterNodes"),
    U32("limits", "max_nodes_per_translate", max_nodes_per_translate, "1000",
        1, 1000000, "OperationLimits MaxNodesPerTranslateBrowsePathsToNodeIds"),
    U32("limits", "max_nodes_per_method_call", max_nodes_per_method_call,
        "1000", 1, 1000000, "OperationLimits MaxNodesPerMethodCall"),
    U32("limits", "max_monitored_items_per_call",
        max_monitored_items_per_call, "1000", 1, 1000000,
        "OperationLimits MaxMonitoredItemsPerCall"),
    U32("limits", "max_references_per_node", max_references_per_node, "1000",
        1, 1000000, "most references in one Browse result"),
    U32("limits", "browse_cache_kb", browse_cache_kb, "256", 0, 1048576,
        "each worker's cache of encoded Browse results (whole results of "
        "up to 4 KB), in KiB; 0: no cache"),
    U32("limits", "max_subscriptions", max_subscriptions, "2000", 1, 1000000,
        "subscriptions, all workers together "
        "(ServerCapabilities MaxSubscriptions)"),
    U32("limits", "max_subscriptions_per_session",
        max_subscriptions_per_session, "20", 1, 10000,
        "subscriptions per session"),
    U32("limits", "max_monitored_items", max_monitored_items, "100000", 1,
        100000000, "monitored items, all workers together "
        "(ServerCapabilities MaxMonitoredItems)"),
    U32("limits", "max_monitored_items_per_subscription",
        max_monitored_items_per_subscription, "10000", 1, 10000000,
        "monitored items per subscription"),
    U32("limits", "max_publish_requests_per_session",
        max_publish_requests_per_session, "20", 1, 10000,
        "queued Publish requests per session"),
    U32("limits", "max_notifications_per_publish",
        max_notifications_per_publish, "1000", 1, 1000000,
        "most notifications in one NotificationMessage"),
    U32("limits", "max_retransmission_queue", max_retransmission_queue,
        "20", 1, 10000,
        "NotificationMessages kept per subscription for Republish"),
    U32("limits", "retransmission_store_bytes", retransmission_store_bytes,
        "10240000", 0, 2147483647,
        "bytes per worker for the NotificationMessages kept for Republish, "
        "all subscriptions together (the oldest goes when full); 0 = "
        "max_subscriptions x max_retransmission_queue x 1 KiB"),
    U32("limits", "max_monitored_item_queue_size",
        max_monitored_item_queue_size, "1000", 1, 65535,
        "largest queueSize granted (ServerCapabilities "
        "MaxMonitoredItemsQueueSize)"),
    U32("limits", "max_queued_values", max_queued_values, "1000000", 1024,
        268435455, "values queued in monitored items, per worker (80 "
        "bytes each, taken when queued, given back at Publish)"),
    U32("limits", "max_event_queue_size", max_event_queue_size, "1000", 1,
        100000, "largest queueSize granted to an event monitored item"),
    U32("limits", "default_event_queue_size", default_event_queue_size,
        "100", 1, 100000, "queueSize of an event monitored item that asks "
        "0 (at most max_event_queue_size)"),
    U32("limits", "max_filter_elements", max_filter_elements, "64", 1, 256,
        "most ContentFilterElements in the where clause of an EventFilter"),
    U32("limits", "max_keep_alive_count", max_keep_alive_count, "100", 1,
        100000, "largest maxKeepAliveCount granted"),
    U32("limits", "max_lifetime_count", max_lifetime_count, "15000", 3,
        1000000, "largest lifetimeCount granted"),
    DBL("limits", "min_publishing_interval_ms", min_publishing_interval_ms,
        "50", 1, 3600000, "shortest publishing interval granted"),
    DBL("limits", "min_sampling_interval_ms", min_sampling_interval_ms, "50",
        0, 3600000, "shortest sampling interval granted"),
    U32("fanout", "blocks", fanout_blocks, "1024", 16, 1048576,
        "notification blocks in shared memory (value changes in flight)"),
    U32("fanout", "block_size", fanout_block_size, "16384", 1024, 1048576,
        "bytes per notification block; a value that does not fit in one "
        "is reported lost (overflow) and read from its slot"),
    U32("fanout", "notif_ring_slots", fanout_notif_ring_slots, "4096", 16,
        1048576, "block handles a worker's notification ring holds"),
    U32("fanout", "req_ring_slots", fanout_req_ring_slots, "8192", 16,
        1048576, "slots of a worker's request ring (Writes to the broker)"),
    U32("fanout", "reply_ring_slots", fanout_reply_ring_slots, "4096", 16,
        1048576, "slots of a worker's reply ring (Write results)"),
    U32("fanout", "msg_slot_size", fanout_msg_slot_size, "64", 32, 4096,
        "bytes per request/reply slot; req_ring_slots * msg_slot_size "
        "bounds one written value"),
    U32("fanout", "pending_writes", fanout_pending_writes, "256", 1, 65535,
        "Write requests in flight per worker (more: BadServerTooBusy)"),
    U32("fanout", "linger_us", fanout_linger_us, "100", 0, 10000,
        "after work on its rings a process waits this long for more "
        "before it asks for a doorbell (0: ask at once)"),
    STR("feed", "listen", feed_listen, "",
        "feed socket (nanomsg NN_PULL); empty = ipc://<runtime_dir>/feed.ipc,"
        " or tcp://ADDR:PORT"),
    U32("feed", "max_batch_bytes", feed_max_batch_bytes, "1048576", 1024,
        16777216, "largest feed message (a batch of lines)"),
    U32("feed", "backpressure_ms", feed_backpressure_ms, "1000", 0, 60000,
        "longest the feed stops reading while a worker or the historian "
        "is behind (half its ring or the block pool waiting); 0: never"),
    STR("mqtt", "url", mqtt_url, "",
        "MQTT broker to take feed values from: mqtt://HOST[:PORT] or "
        "mqtts://HOST[:PORT] (TLS, with tls_ca); empty (and host empty) = "
        "no MQTT feed; exclusive with host"),
    STR("mqtt", "host", mqtt_host, "",
        "MQTT broker host (instead of url), with port; empty = off"),
    U32("mqtt", "port", mqtt_port, "1883", 1, 65535,
        "MQTT broker port, with host"),
    STR("mqtt", "topic", mqtt_topic, "uabroker/feed/#",
        "subscription (topic filter); a message is a feed batch, or on "
        "<prefix>/<NodeId> one value of that node (docs/feed.md)"),
    STR("mqtt", "client_id", mqtt_client_id, "",
        "MQTT client identifier; empty = uabroker-<hostname>-<pid> (each "
        "uabroker needs its own)"),
    BOOL("mqtt", "clean_session", mqtt_clean_session, "true",
         "false: the MQTT broker keeps the session (subscription, QoS 1/2 "
         "messages) while this uabroker is away; needs client_id"),
    U32("mqtt", "qos", mqtt_qos, "1", 0, 2,
        "QoS of the subscription (0, 1 or 2)"),
    STR("mqtt", "username", mqtt_username, "",
        "MQTT user name; empty = none"),
    STR("mqtt", "password_file", mqtt_password_file, "",
        "file whose first line is the MQTT password (with username)"),
    STR("mqtt", "tls_ca", mqtt_tls_ca, "",
        "CA certificate file (PEM) of the MQTT broker; set = TLS"),
    U32("mqtt", "keepalive", mqtt_keepalive, "30", 5, 65535,
        "MQTT keepalive, seconds; a connection that stops answering is "
        "dropped within about two keepalives and made again"),
    U32("mqtt", "max_payload_bytes", mqtt_max_payload_bytes, "1048576", 16,
        16777216, "largest MQTT message payload applied; larger ones are "
        "refused and counted"),
    U32("mqtt", "reconnect_min_ms", mqtt_reconnect_min_ms, "500", 10,
        3600000, "first wait before connecting again to the MQTT broker; "
        "doubles per failure"),
    U32("mqtt", "reconnect_max_ms", mqtt_reconnect_max_ms, "30000", 10,
        3600000, "longest wait between two connection attempts"),
    STR("methods", "listen", methods_listen, "",
        "socket of the method owner (nanomsg NN_PAIR, docs/feed.md "
        "Methods); empty = ipc://<runtime_dir>/methods.ipc, or "
        "tcp://ADDR:PORT"),
    U32("methods", "timeout_ms", methods_timeout_ms, "5000", 10, 600000,
        "how long a forwarded method call waits for its owner's answer "
        "(then BadTimeout)"),
    U32("methods", "pending_calls", methods_pending_calls, "32", 1, 4096,
        "Call requests with forwarded methods in flight per worker "
        "(more: BadResourceUnavailable)"),
    U32("methods", "max_call_bytes", methods_max_call_bytes, "65536", 4096,
        16777216, "bytes one forwarded method's input arguments and one "
        "Call's results may take (more: BadRequestTooLarge / "
        "BadResponseTooLarge)"),
    STR("security", "pki_dir", pki_dir, "pki",
        "PKI directory (own/ trusted/ issuers/ rejected/); a relative path "
        "is under server.runtime_dir"),
    STR("security", "policies", policies,
        "None, Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss",
        "security policies offered (comma-separated names)"),
    STR("security", "modes", modes, "None, Sign, SignAndEncrypt",
        "message security modes offered with every secure policy; None "
        "goes with policy None only"),
    BOOL("security", "allow_deprecated", allow_deprecated, "false",
         "offer Basic128Rsa15 and Basic256 when listed, accept rsa-1_5 "
         "user-token encryption"),
    BOOL("security", "anonymous", anonymous, "true",
         "accept anonymous users"),
    BOOL("security", "anonymous_write", anonymous_write, "false",
         "let anonymous users write (otherwise only the operator role)"),
    STR("security", "x509_role", x509_role, "viewer",
        "role of X509 users (certificates in trusted_users/certs): viewer "
        "or operator"),
    U32("security", "certificate_days", certificate_days, "730", 1, 36500,
        "validity of the application certificate created at first start"),
    U32("security", "rejected_max", rejected_max, "100", 0, 100000,
        "certificates kept in rejected/ (oldest dropped)"),
    STR("security", "users_file", users_file, "users",
        "users file (name:role:pbkdf2-sha256:iter:salt:hash); a relative "
        "path is beside pki_dir"),
    U32("security", "failure_threshold", failure_threshold, "3", 0, 255,
        "OpenSecureChannel security failures from one IP address within "
        "failure_window_ms that block it (0 = never)"),
    U32("security", "failure_window_ms", failure_window_ms, "10000", 100,
        86400000, "window of failure_threshold"),
    U32("security", "failure_block_ms", failure_block_ms, "30000", 100,
        86400000, "how long a blocked IP address gets ERR "
        "BadTcpServerTooBusy on connect"),
    U32("security", "login_failure_threshold", login_failure_threshold, "3",
        0, 255, "failed UserName logins of one client (ApplicationUri) "
        "within login_failure_window_ms that block it (0 = never)"),
    U32("security", "login_failure_window_ms", login_failure_window_ms,
        "10000", 100, 86400000, "window of login_failure_threshold"),
    U32("security", "login_failure_block_ms", login_failure_block_ms,
        "30000", 100, 86400000, "how long a blocked client's logins get "
        "BadUserAccessDenied"),
    U32("security", "login_failure_ip_threshold", login_failure_ip_threshold,
        "10", 0, 255, "failed UserName logins from one IP address (any "
        "ApplicationUri) within login_failure_window_ms that block its "
        "logins for login_failure_block_ms (0 = never)"),
    U32("security", "throttle_entries", throttle_entries, "4096", 64,
        4194304, "clients (IP addresses and ApplicationUris) the shared "
        "failure table tracks at once (a power of two: rounded up)"),
    BOOL("events", "audit", events_audit, "false",
         "the workers raise audit events for CreateSession, ActivateSession "
         "and CloseSession (AuditCreateSessionEventType, "
         "AuditActivateSessionEventType, AuditSessionEventType; Server "
         "Auditing)"),
    /* [history] (issue 18; the historian, worker/historian.c) */
    BOOL("history", "enabled", history_enabled, "true",
         "run the historian: the historized variables' values kept in the "
         "history store (LMDB)"),
    STR("history", "dir", history_dir, "history",
        "the history store's directory; a relative path is under "
        "server.runtime_dir"),
    BOOL("history", "simulation", history_simulation, "true",
         "historize the Demo.Simulation variables"),
    STR("history", "nodes", history_nodes, "",
        "more variables to historize, NodeIds space-separated "
        "(ns=1;s=v0 ns=1;s=v1); NodeSet variables with "
        "Historizing=\"true\" are historized too"),
    U32("history", "retention_s", history_retention_s, "604800", 0,
        UINT32_MAX, "age of the oldest value kept, seconds (0 = no limit)"),
    U32("history", "max_mb", history_max_mb, "1024", 1, 1048576,
        "total size of the history kept, MiB (the oldest dropped first)"),
    U32("history", "map_mb", history_map_mb, "4096", 2, 4194304,
        "LMDB map size, MiB: at least twice history.max_mb"),
    U32("history", "flush_ms", history_flush_ms, "100", 1, 60000,
        "values are written in one transaction at most this often"),
    U32("history", "batch", history_batch, "65536", 16, 4194304,
        "values one write transaction takes at most"),
    U32("history", "max_return_values", history_max_values, "10000", 1,
        1000000, "values one HistoryRead returns per node at most (then a "
        "continuation point; HistoryServerCapabilities "
        "MaxReturnDataValues)"),
    U32("history", "max_update_nodes", history_max_update_nodes, "100", 1,
        10000, "HistoryUpdateDetails one HistoryUpdate takes at most "
        "(OperationLimits MaxNodesPerHistoryUpdateData)"),
    U32("history", "pending_updates", history_pending_updates, "16", 1,
        1024, "HistoryUpdates one worker has waiting for the historian at "
        "most"),
    BOOL("history", "sync", history_sync, "true",
         "fsync each write transaction (off: a kill -9 still loses "
         "nothing committed, a power loss may)"),
    U32("history", "demo_vars", history_demo_vars, "0", 0, 10000000,
        "historize the first N Demo.Vars variables too (v0 ...); at most "
        "addrspace.vars"),
    /* Each historized node's HistoricalDataConfiguration (Part 11
     * §5.2.2; broker/histcfg.h): these defaults, or its [history NAME]
     * section's keys, or what its NodeSet gives. */
    BOOL("history", "stepped", history_stepped, "false",
         "Stepped: values hold until the next one (no interpolation "
         "between them); ReadAtTime and the aggregates follow it"),
    DBL("history", "min_time_interval_ms", history_min_time_interval_ms,
        "0", 0, 31536000000.0, "MinTimeInterval (descriptive): the "
        "shortest time between stored values, ms; the historian keeps "
        "every change"),
    DBL("history", "max_time_interval_ms", history_max_time_interval_ms,
        "0", 0, 31536000000.0, "MaxTimeInterval (descriptive): the "
        "longest time without a stored value, ms; 0 = none"),
    DBL("history", "exception_deviation", history_exception_deviation, "0",
        0, 1e300, "ExceptionDeviation (descriptive): the change below "
        "which a value is not stored; 0 = every change"),
    STR("history", "exception_deviation_format",
        history_exception_deviation_format, "absolute_value",
        "ExceptionDeviationFormat: absolute_value, percent_of_value, "
        "percent_of_range, percent_of_eu_range or unknown"),
    BOOL("history", "treat_uncertain_as_bad", history_treat_uncertain_as_bad,
         "true", "AggregateConfiguration TreatUncertainAsBad (Part 13 "
         "§4.2.1.2), used when a ReadProcessed asks for the server's "
         "defaults"),
    U32("history", "percent_data_bad", history_percent_data_bad, "100", 0,
        100, "AggregateConfiguration PercentDataBad"),
    U32("history", "percent_data_good", history_percent_data_good, "100", 0,
        100, "AggregateConfiguration PercentDataGood"),
    BOOL("history", "use_sloped_extrapolation",
         history_use_sloped_extrapolation, "false",
         "AggregateConfiguration UseSlopedExtrapolation"),
    BOOL("history", "events", history_events, "true",
         "keep every event (alarms, feed events, audit) for event history "
         "(HistoryRead ReadEventDetails on the Server object and the "
         "notifiers under it)"),
    U32("history", "event_retention_s", history_event_retention_s,
        "604800", 0, UINT32_MAX,
        "age of the oldest event kept, seconds (0 = no limit)"),
    U32("history", "event_max_mb", history_event_max_mb, "256", 1, 1048576,
        "total size of the events kept, MiB (the oldest dropped first)"),
    U32("history", "max_return_events", history_max_events, "10000", 1,
        1000000, "events one HistoryRead returns per notifier at most "
        "(then a continuation point; HistoryServerCapabilities "
        "MaxReturnEventValues)"),
    U32("history", "max_event_scan", history_max_event_scan, "100000", 1,
        100000000, "events one HistoryRead examines per notifier at most "
        "(then a continuation point, with the events found so far)"),
    U32("alarms", "max_alarms", alarms_max, "100000", 0, 1000000,
        "[alarm NAME] sections the file may hold (docs/configuration.md "
        "\"Alarms\")"),
};

#define BK_CONF_NKEYS (sizeof(bk_conf_keys) / sizeof(bk_conf_keys[0]))

static const struct bk_conf_key *
bk_config_find(const char *section, const char *key)
{
    const struct bk_conf_key *hit = NULL;

    for (size_t i = 0; i < BK_CONF_NKEYS; i++) {
        const struct bk_conf_key *k = &bk_conf_keys[i];

        if (strcmp(k->key, key) != 0)
            continue;
        if (section != NULL && strcmp(k->section, section) != 0)
            continue;
        if (hit != NULL)
            return NULL;        /* ambiguous without a section */
        hit = k;
    }
    return hit;
}

static int
bk_config_apply(struct bk_config *c, const struct bk_conf_key *k,
                const char *value, char *err, size_t errlen)
{
    char  *end;
    void  *field = (char *)c + k->off;
    double d;

    switch (k->type) {
    case BK_CT_PATHS:
        if (strlen(value) >= BK_CONF_PATHS_MAX) {
            snprintf(err, errlen, "%s.%s: longer than %d bytes", k->section,
                     k->key, BK_CONF_PATHS_MAX - 1);
            return -1;
        }
        strcpy(field, value);
        return 0;
    case BK_CT_STR:
        if (strlen(value) >= BK_CONF_STR_MAX) {
            snprintf(err, errlen, "%s.%s: longer than %d bytes", k->section,
                     k->key, BK_CONF_STR_MAX - 1);
            return -1;
        }
        strcpy(field, value);
        return 0;
    case BK_CT_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "yes") == 0
            || strcmp(value, "on") == 0 || strcmp(value, "1") == 0) {
            *(uint32_t *)field = 1;
            return 0;
        }
        if (strcmp(value, "false") == 0 || strcmp(value, "no") == 0
            || strcmp(value, "off") == 0 || strcmp(value, "0") == 0) {
            *(uint32_t *)field = 0;
            return 0;
        }
        snprintf(err, errlen, "%s.%s: \"%s\" is not true or false",
                 k->section, k->key, value);
        return -1;
    case BK_CT_U32:
    case BK_CT_DOUBLE:
        errno = 0;
        d = strtod(value, &end);
        if (errno != 0 || end == value || *end != '\0' || !isfinite(d)) {
            snprintf(err, errlen, "%s.%s: \"%s\" is not a number", k->section,
                     k->key, value);
            return -1;
        }
        if (k->type == BK_CT_U32 && d != floor(d)) {
            snprintf(err, errlen, "%s.%s: \"%s\" is not a whole number",
                     k->section, k->key, value);
            return -1;
        }
        if (d < k->min || d > k->max) {
            snprintf(err, errlen, "%s.%s: %s is outside [%g, %g]", k->section,
                     k->key, value, k->min, k->max);
            return -1;
        }
        if (k->type == BK_CT_U32)
            *(uint32_t *)field = (uint32_t)d;
        else
            *(double *)field = d;
        return 0;
    }
    return -1;
}

void
bk_config_defaults(struct bk_config *c)
{
    char err[128];

    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < BK_CONF_NKEYS; i++)
        (void)bk_config_apply(c, &bk_conf_keys[i], bk_conf_keys[i].def, err,
                              sizeof(err));
}

static int
bk_config_ini_cb(void *user, const char *section, const char *name,
                 const char *value)
{
    struct bk_conf_load      *l = user;
    const struct bk_conf_key *k;

    if (l->failed)
        return 0;
    if (bk_alarmcfg_is_section(section))
        return bk_config_alarm_key(l, section, name, value);
    if (bk_histcfg_is_section(section))
        return bk_config_histnode_key(l, section, name, value);
    k = bk_config_find(section, name);
    if (k == NULL) {
        snprintf(l->err, l->errlen, "unknown setting [%s] %s", section, name);
        l->failed = 1;
        return 0;
    }
    if (k->type == BK_CT_PATHS) {
        if (bk_config_paths_beside(l->c, k, value, l->path, l->err,
                                   l->errlen) != 0)
            l->failed = 1;
        return !l->failed;
    }
    if (bk_config_apply(l->c, k, value, l->err, l->errlen) != 0) {
        l->failed = 1;
        return 0;
    }
    return 1;
}

/* A key of an [alarm NAME] section: to the alarm table, if there is one. */
static int
bk_config_alarm_key(struct bk_conf_load *l, const char *section,
                    const char *name, const char *value)
{
    if (l->c->alarms == NULL)
        return 1;
    if (bk_alarmcfg_key(l->c->alarms, section, name, value, l->err,
                        l->errlen) != 0)
        l->failed = 1;
    return !l->failed;
}

/* A key of a [history NAME] section: to its table, if there is one. */
static int
bk_config_histnode_key(struct bk_conf_load *l, const char *section,
                       const char *name, const char *value)
{
    if (l->c->histnodes == NULL)
        return 1;
    if (bk_histcfg_key(l->c->histnodes, section, name, value, l->err,
                       l->errlen) != 0)
        l->failed = 1;
    return !l->failed;
}

/*
 * A list of paths from the file at path: relative ones become relative to
 * that file's directory.
 */
static int
bk_config_paths_beside(struct bk_config *c, const struct bk_conf_key *k,
                       const char *value, const char *path, char *err,
                       size_t errlen)
{
    const char *slash = strrchr(path, '/');
    size_t      dlen = slash != NULL ? (size_t)(slash - path) + 1 : 0;
    char        out[BK_CONF_PATHS_MAX];
    size_t      n = 0;
    const char *p = value;

    out[0] = '\0';
    while (*p != '\0') {
        size_t len, pre;

        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        len = strcspn(p, " \t");
        pre = *p == '/' ? 0 : dlen;
        if (n + (n != 0) + pre + len >= sizeof(out)) {
            snprintf(err, errlen, "%s.%s: longer than %d bytes", k->section,
                     k->key, BK_CONF_PATHS_MAX - 1);
            return -1;
        }
        if (n != 0)
            out[n++] = ' ';
        memcpy(out + n, path, pre);
        memcpy(out + n + pre, p, len);
        n += pre + len;
        out[n] = '\0';
        p += len;
    }
    return bk_config_apply(c, k, out, err, errlen);
}

int
bk_config_load(struct bk_config *c, const char *path, char *err,
               size_t errlen)
{
    struct bk_conf_load l = { c, path, err, errlen, 0 };
    int                 rc;

    rc = ini_parse(path, bk_config_ini_cb, &l);
    if (rc == -1) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (l.failed) {
        size_t n = strlen(err);

        if (rc > 0)
            snprintf(err + n, errlen - n, " (%s line %d)", path, rc);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s line %d: syntax error", path, rc);
        return -1;
    }
    if (c->alarms != NULL
        && bk_alarmcfg_finish(c->alarms, path, c->alarms_max, err, errlen)
               != 0)
        return -1;
    if (c->histnodes != NULL
        && bk_histcfg_finish(c->histnodes, path, err, errlen) != 0)
        return -1;
    return 0;
}

int
bk_config_set(struct bk_config *c, const char *name, const char *value,
              char *err, size_t errlen)
{
    const struct bk_conf_key *k;
    const char               *dot = strchr(name, '.');
    char                      section[64];

    if (dot != NULL && (size_t)(dot - name) < sizeof(section)) {
        memcpy(section, name, (size_t)(dot - name));
        section[dot - name] = '\0';
        k = bk_config_find(section, dot + 1);
    } else {
        k = bk_config_find(NULL, name);
    }
    if (k == NULL) {
        snprintf(err, errlen, "unknown setting %s", name);
        return -1;
    }
    return bk_config_apply(c, k, value, err, errlen);
}

int
bk_config_check(const struct bk_config *c, char *err, size_t errlen)
{
    if (c->retire_handover_ms >= c->retire_kill_ms) {
        snprintf(err, errlen, "server.retire_handover_ms must be below "
                 "server.retire_kill_ms (a retiring worker gives up "
                 "before it is killed)");
        return -1;
    }
    if (c->max_secure_channels < c->max_sessions + 1) {
        snprintf(err, errlen, "limits.max_secure_channels must be at least "
                 "limits.max_sessions + 1 (Part 4 §5.6.2)");
        return -1;
    }
    if (shm_log_level_parse(c->log_level) < 0) {
        snprintf(err, errlen, "log.level: \"%s\" is not error, warning, "
                 "notice, info or debug", c->log_level);
        return -1;
    }
    if (strcmp(c->x509_role, "viewer") != 0
        && strcmp(c->x509_role, "operator") != 0) {
        snprintf(err, errlen, "security.x509_role: \"%s\" is not viewer "
                 "or operator", c->x509_role);
        return -1;
    }
    if (bk_config_history_check(c, err, errlen) != 0)
        return -1;
    if (c->simulation_vars > c->vars) {
        snprintf(err, errlen, "addrspace.simulation_vars (%u) must not "
                 "exceed addrspace.vars (%u)", c->simulation_vars, c->vars);
        return -1;
    }
    return 0;
}

void
bk_config_finish(struct bk_config *c)
{
    if (c->hostname[0] == '\0') {
        if (gethostname(c->hostname, sizeof(c->hostname)) != 0)
            strcpy(c->hostname, "localhost");
        c->hostname[sizeof(c->hostname) - 1] = '\0';
    }
    if (c->application_uri[0] == '\0')
        snprintf(c->application_uri, sizeof(c->application_uri),
                 "urn:%.200s:uabroker", c->hostname);
}

void
bk_config_snapshot(const struct bk_config *c, struct shm_config *s)
{
    memset(s, 0, sizeof(*s));
    s->port = c->port;
    s->workers = c->workers;
    snprintf(s->application_uri, sizeof(s->application_uri), "%s",
             c->application_uri);
    snprintf(s->hostname, sizeof(s->hostname), "%s", c->hostname);
    snprintf(s->runtime_dir, sizeof(s->runtime_dir), "%s", c->runtime_dir);
#define BK_SNAP(f) s->f = c->f
    BK_SNAP(max_string_length);
    BK_SNAP(max_bytestring_length);
    BK_SNAP(max_array_length);
    BK_SNAP(max_message_size);
    BK_SNAP(max_chunk_count);
    BK_SNAP(receive_buffer_size);
    BK_SNAP(max_sessions);
    BK_SNAP(max_unactivated_per_address);
    BK_SNAP(max_secure_channels);
    BK_SNAP(max_browse_continuation_points);
    BK_SNAP(max_nodes_per_read);
    BK_SNAP(max_nodes_per_write);
    BK_SNAP(max_nodes_per_browse);
    BK_SNAP(max_nodes_per_register_nodes);
    BK_SNAP(max_nodes_per_translate);
    BK_SNAP(max_nodes_per_method_call);
    BK_SNAP(max_monitored_items_per_call);
    BK_SNAP(max_references_per_node);
    BK_SNAP(browse_cache_kb);
    BK_SNAP(max_subscriptions);
    BK_SNAP(max_subscriptions_per_session);
    BK_SNAP(max_monitored_items);
    BK_SNAP(max_monitored_items_per_subscription);
    BK_SNAP(max_publish_requests_per_session);
    BK_SNAP(max_notifications_per_publish);
    BK_SNAP(max_retransmission_queue);
    BK_SNAP(max_monitored_item_queue_size);
    BK_SNAP(max_queued_values);
    BK_SNAP(max_event_queue_size);
    BK_SNAP(default_event_queue_size);
    BK_SNAP(max_filter_elements);
    s->events_audit = c->events_audit ? 1 : 0;
    BK_SNAP(max_keep_alive_count);
    BK_SNAP(max_lifetime_count);
    BK_SNAP(hello_timeout_ms);
    BK_SNAP(min_session_timeout_ms);
    BK_SNAP(max_session_timeout_ms);
    BK_SNAP(session_move_timeout_ms);
    BK_SNAP(retire_handover_ms);
    BK_SNAP(retire_renotice_ms);
    BK_SNAP(max_session_move_bytes);
    BK_SNAP(session_move_event_bytes);
    BK_SNAP(retransmission_store_bytes);
    BK_SNAP(min_token_lifetime_ms);
    BK_SNAP(max_token_lifetime_ms);
    BK_SNAP(max_translate_path_elements);
    BK_SNAP(min_publishing_interval_ms);
    BK_SNAP(min_sampling_interval_ms);
    BK_SNAP(failure_threshold);
    BK_SNAP(failure_window_ms);
    BK_SNAP(failure_block_ms);
    BK_SNAP(login_failure_threshold);
    BK_SNAP(login_failure_window_ms);
    BK_SNAP(login_failure_block_ms);
    BK_SNAP(login_failure_ip_threshold);
    BK_SNAP(accept_rate);
    BK_SNAP(accept_burst);
#undef BK_SNAP
    s->log_level = (uint32_t)shm_log_level_parse(c->log_level);
    s->pending_writes = c->fanout_pending_writes;
    s->linger_us = c->fanout_linger_us;
    s->pending_calls = c->methods_pending_calls;
    s->max_call_bytes = c->methods_max_call_bytes;
    bk_config_history_snapshot(c, s);
}

void
bk_config_write(const struct bk_config *c, FILE *f)
{
    const char *section = "";

    fprintf(f, "# uabroker.conf: every setting with its default.\n"
               "# Lines starting with ; or # are comments.\n");
    for (size_t i = 0; i < BK_CONF_NKEYS; i++) {
        const struct bk_conf_key *k = &bk_conf_keys[i];
        const void               *field = (const char *)c + k->off;

        if (strcmp(section, k->section) != 0) {
            section = k->section;
            fprintf(f, "\n[%s]\n", section);
        }
        fprintf(f, "# %s\n", k->help);
        switch (k->type) {
        case BK_CT_U32:
            fprintf(f, "%s = %u\n", k->key, *(const uint32_t *)field);
            break;
        case BK_CT_DOUBLE:
            fprintf(f, "%s = %g\n", k->key, *(const double *)field);
            break;
        case BK_CT_STR:
        case BK_CT_PATHS:
            fprintf(f, "%s = %s\n", k->key, (const char *)field);
            break;
        case BK_CT_BOOL:
            fprintf(f, "%s = %s\n", k->key,
                    *(const uint32_t *)field ? "true" : "false");
            break;
        }
    }
}

/* ------------------------------------------------------------ reload */

/*
 * The settings a SIGHUP applies to the running broker (docs/operations.md
 * "Reload"); every other one needs a restart.  Each is read where it is
 * used: the broker's simulation timer, the PKI flags and users file it
 * publishes (broker/pki.c), the throttle and accept-rate fields of the
 * snapshot the workers read at every use (bk_config_snapshot_live).
 */
static const char *const bk_conf_live_keys[] = {
    "log.level",
    "server.retire_handover_ms",
    "server.retire_renotice_ms",
    "server.retire_kill_ms",
    "server.roll_start_ms",
    "addrspace.simulation_interval_ms",
    "addrspace.simulation_vars",
    "limits.accept_rate",
    "limits.accept_burst",
    "security.anonymous",
    "security.anonymous_write",
    "security.x509_role",
    "security.rejected_max",
    "security.users_file",
    "security.failure_threshold",
    "security.failure_window_ms",
    "security.failure_block_ms",
    "security.login_failure_threshold",
    "security.login_failure_window_ms",
    "security.login_failure_block_ms",
    "security.login_failure_ip_threshold",
};

static bool
bk_config_live(const struct bk_conf_key *k)
{
    size_t sl = strlen(k->section);

    for (size_t i = 0; i < sizeof(bk_conf_live_keys)
                           / sizeof(bk_conf_live_keys[0]); i++) {
        const char *n = bk_conf_live_keys[i];

        if (strncmp(n, k->section, sl) == 0 && n[sl] == '.'
            && strcmp(n + sl + 1, k->key) == 0)
            return true;
    }
    return false;
}

bool
bk_config_is_live(const char *name)
{
    const struct bk_conf_key *k;
    const char               *dot = strchr(name, '.');
    char                      section[64];

    if (dot == NULL || (size_t)(dot - name) >= sizeof(section))
        return false;
    memcpy(section, name, (size_t)(dot - name));
    section[dot - name] = '\0';
    k = bk_config_find(section, dot + 1);
    return k != NULL && bk_config_live(k);
}

static void
bk_config_format(const struct bk_config *c, const struct bk_conf_key *k,
                 char *out, size_t cap)
{
    const void *field = (const char *)c + k->off;

    switch (k->type) {
    case BK_CT_U32:
        snprintf(out, cap, "%u", *(const uint32_t *)field);
        return;
    case BK_CT_DOUBLE:
        snprintf(out, cap, "%g", *(const double *)field);
        return;
    case BK_CT_STR:
    case BK_CT_PATHS:
        snprintf(out, cap, "\"%s\"", (const char *)field);
        return;
    case BK_CT_BOOL:
        snprintf(out, cap, "%s", *(const uint32_t *)field ? "true" : "false");
        return;
    }
    snprintf(out, cap, "?");
}

void
bk_config_reload(struct bk_config *c, const struct bk_config *next,
                 unsigned *applied, unsigned *restart)
{
    *applied = 0;
    *restart = 0;
    for (size_t i = 0; i < BK_CONF_NKEYS; i++) {
        const struct bk_conf_key *k = &bk_conf_keys[i];
        char                     *f = (char *)c + k->off;
        const char               *g = (const char *)next + k->off;
        bool   text = k->type == BK_CT_STR || k->type == BK_CT_PATHS;
        size_t size = k->type == BK_CT_STR ? BK_CONF_STR_MAX
                      : k->type == BK_CT_PATHS ? BK_CONF_PATHS_MAX
                      : k->type == BK_CT_DOUBLE ? sizeof(double)
                      : sizeof(uint32_t);
        char was[BK_CONF_STR_MAX + 8], now[BK_CONF_STR_MAX + 8];

        if (text ? strcmp(f, g) == 0 : memcmp(f, g, size) == 0)
            continue;
        bk_config_format(c, k, was, sizeof(was));
        bk_config_format(next, k, now, sizeof(now));
        if (bk_config_live(k)) {
            memcpy(f, g, size);
            (*applied)++;
            shm_log(SHM_LOG_NOTICE, "SIGHUP: %s.%s = %s (was %s)",
                    k->section, k->key, now, was);
        } else {
            (*restart)++;
            shm_log(SHM_LOG_WARNING, "SIGHUP: %s.%s = %s needs a restart; "
                    "the running %s stays", k->section, k->key, now, was);
        }
    }
}

void
bk_config_snapshot_live(const struct bk_config *c, struct shm_config *s)
{
#define BK_SNAP_LIVE(f) __atomic_store_n(&s->f, c->f, __ATOMIC_RELAXED)
    BK_SNAP_LIVE(retire_handover_ms);
    BK_SNAP_LIVE(retire_renotice_ms);
    BK_SNAP_LIVE(failure_threshold);
    BK_SNAP_LIVE(failure_window_ms);
    BK_SNAP_LIVE(failure_block_ms);
    BK_SNAP_LIVE(login_failure_threshold);
    BK_SNAP_LIVE(login_failure_window_ms);
    BK_SNAP_LIVE(login_failure_block_ms);
    BK_SNAP_LIVE(login_failure_ip_threshold);
    BK_SNAP_LIVE(accept_rate);
    BK_SNAP_LIVE(accept_burst);
#undef BK_SNAP_LIVE
    atomic_store_explicit(&s->log_level,
                          (uint32_t)shm_log_level_parse(c->log_level),
                          memory_order_relaxed);
}

int
bk_config_pki_path(const struct bk_config *c, char *out, size_t cap)
{
    int n;

    if (c->pki_dir[0] == '/')
        n = snprintf(out, cap, "%s", c->pki_dir);
    else
        n = snprintf(out, cap, "%s/%s", c->runtime_dir, c->pki_dir);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int
bk_config_users_path(const struct bk_config *c, char *out, size_t cap)
{
    char  pki[BK_CONF_PATH_MAX];
    char *slash;
    int   n;

    if (c->users_file[0] == '/') {
        n = snprintf(out, cap, "%s", c->users_file);
        return n < 0 || (size_t)n >= cap ? -1 : 0;
    }
    if (bk_config_pki_path(c, pki, sizeof(pki)) != 0)
        return -1;
    slash = strrchr(pki, '/');
    if (slash == NULL)
        n = snprintf(out, cap, "%s", c->users_file);
    else
        n = snprintf(out, cap, "%.*s/%s", (int)(slash - pki), pki,
                     c->users_file);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* [history]'s rules between keys (issue 18). */
static int
bk_config_history_check(const struct bk_config *c, char *err, size_t errlen)
{
    uint64_t ev = c->history_events ? c->history_event_max_mb : 0;

    if (c->history_enabled && (uint64_t)c->history_map_mb
                              < 2 * ((uint64_t)c->history_max_mb + ev)) {
        snprintf(err, errlen, "history.map_mb (%u) must be at least twice "
                 "history.max_mb (%u)%s: pruning needs room to work in a "
                 "full store", c->history_map_mb, c->history_max_mb,
                 ev != 0 ? " plus history.event_max_mb" : "");
        return -1;
    }
    if (c->history_demo_vars > c->vars) {
        snprintf(err, errlen, "history.demo_vars (%u) must not exceed "
                 "addrspace.vars (%u)", c->history_demo_vars, c->vars);
        return -1;
    }
    {
        struct bk_histcfg_def d;

        if (bk_histcfg_parse(BK_HC_EXCEPTION_DEVIATION_FORMAT,
                             c->history_exception_deviation_format, &d)
            != 0) {
            snprintf(err, errlen, "history.exception_deviation_format: "
                     "\"%s\" is not absolute_value, percent_of_value, "
                     "percent_of_range, percent_of_eu_range or unknown",
                     c->history_exception_deviation_format);
            return -1;
        }
    }
    if (c->history_enabled && c->workers >= SHM_WORKERS_MAX) {
        snprintf(err, errlen, "history.enabled takes a worker slot: "
                 "server.workers must be below %u", SHM_WORKERS_MAX);
        return -1;
    }
    return 0;
}

uint32_t
bk_config_slots(const struct bk_config *c)
{
    return c->workers + (c->history_enabled ? 1 : 0);
}

int
bk_config_history_path(const struct bk_config *c, char *out, size_t cap)
{
    int n;

    if (c->history_dir[0] == '/')
        n = snprintf(out, cap, "%s", c->history_dir);
    else
        n = snprintf(out, cap, "%s/%s", c->runtime_dir, c->history_dir);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

void
bk_config_history_def(const struct bk_config *c, struct bk_histcfg_def *d)
{
    memset(d, 0, sizeof(*d));
    d->stepped = c->history_stepped != 0;
    d->min_time_interval_ms = c->history_min_time_interval_ms;
    d->max_time_interval_ms = c->history_max_time_interval_ms;
    d->exception_deviation = c->history_exception_deviation;
    if (bk_histcfg_parse(BK_HC_EXCEPTION_DEVIATION_FORMAT,
                         c->history_exception_deviation_format, d) != 0)
        d->exception_deviation_format = BK_HISTCFG_UNKNOWN;
    d->treat_uncertain_as_bad = c->history_treat_uncertain_as_bad != 0;
    d->percent_data_bad = (uint8_t)c->history_percent_data_bad;
    d->percent_data_good = (uint8_t)c->history_percent_data_good;
    d->use_sloped_extrapolation = c->history_use_sloped_extrapolation != 0;
}

/* [history] in the workers' snapshot: where the store is (history off:
 * ""), how many values a HistoryRead returns per node. */
static void
bk_config_history_snapshot(const struct bk_config *c, struct shm_config *s)
{
    s->history_dir[0] = '\0';
    if (c->history_enabled
        && bk_config_history_path(c, s->history_dir,
                                  sizeof(s->history_dir)) != 0)
        s->history_dir[0] = '\0';
    s->history_max_values = c->history_max_values;
    s->history_max_update_nodes = c->history_max_update_nodes;
    s->history_pending_updates = c->history_pending_updates;
    s->history_max_events = c->history_max_events;
    s->history_max_event_scan = c->history_max_event_scan;
    s->history_event_retention_s = c->history_event_retention_s;
    s->history_event_max_mb = c->history_enabled && c->history_events
                                  ? c->history_event_max_mb : 0;
}
