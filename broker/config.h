/*
 * broker/config.h: uabroker's configuration (INI file + command line).
 *
 * Every setting is one row of the key table in config.c: section, key,
 * type, default, bounds and a line of help.  The same table reads the file,
 * prints the default file (deploy/uabroker.conf) and checks a file
 * (`uabroker -t`).  Every limit here is advertised where OPC UA advertises
 * limits (ServerCapabilities, OperationLimits).
 */
#ifndef BK_CONFIG_H
#define BK_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BK_CONF_STR_MAX 256
#define BK_CONF_PATH_MAX 1024   /* a path made of settings (bk_config_*_path) */
#define BK_CONF_PATHS_MAX 4096      /* addrspace.nodesets */

struct bk_config {
    /* [server] */
    uint32_t port;
    uint32_t workers;               /* 0: one per online CPU */
    /* The rolling restart (docs/operations.md "Rolling restart"): a
     * retiring worker hands its sessions over for retire_handover_ms,
     * asking a peer again about a session after retire_renotice_ms; the
     * broker SIGKILLs it after retire_kill_ms and waits roll_start_ms for
     * its successor. */
    uint32_t retire_handover_ms;
    uint32_t retire_renotice_ms;
    uint32_t retire_kill_ms;
    uint32_t roll_start_ms;
    char     application_uri[BK_CONF_STR_MAX];  /* "": urn:<host>:uabroker */
    char     hostname[BK_CONF_STR_MAX];         /* "": gethostname() */
    char     runtime_dir[BK_CONF_STR_MAX];
    /* [stats] */
    char     stats_listen[BK_CONF_STR_MAX];     /* ADDR:PORT */
    /* [log] (shm/log.h) */
    char     log_level[BK_CONF_STR_MAX];        /* error ... debug */
    /* [addrspace] */
    uint32_t vars;                  /* Objects/Demo/Vars size */
    uint32_t value_heap_mb;         /* value heap beyond the initial values */
    double   simulation_interval_ms;
    uint32_t simulation_vars;       /* v0 .. v<n-1> change every tick */
    char     nodesets[BK_CONF_PATHS_MAX];   /* NodeSet2 files, in order */
    uint32_t max_nodeset_nodes;     /* nodes of all the files together */
    /* [limits]: encoding */
    uint32_t max_string_length;
    uint32_t max_bytestring_length;
    uint32_t max_array_length;
    uint32_t max_message_size;
    uint32_t max_chunk_count;
    uint32_t receive_buffer_size;
    /* [limits]: sessions and channels */
    uint32_t max_sessions;
    uint32_t max_unactivated_per_address;
    uint32_t max_secure_channels;
    uint32_t max_browse_continuation_points;
    uint32_t hello_timeout_ms;
    uint32_t min_session_timeout_ms;
    uint32_t max_session_timeout_ms;
    uint32_t session_move_timeout_ms;
    uint32_t max_session_move_bytes;
    uint32_t session_park_bytes;        /* per worker slot, 0: off */
    uint32_t change_log_entries;
    uint32_t session_move_event_bytes;
    uint32_t retransmission_store_bytes;
    uint32_t min_token_lifetime_ms;
    uint32_t max_token_lifetime_ms;
    uint32_t max_translate_path_elements;
    /* [limits]: OperationLimits (Part 5 §6.3.11) */
    uint32_t max_nodes_per_read;
    uint32_t max_nodes_per_write;
    uint32_t max_nodes_per_browse;
    uint32_t max_nodes_per_register_nodes;
    uint32_t max_nodes_per_translate;
    uint32_t max_nodes_per_method_call;
    uint32_t max_monitored_items_per_call;
    uint32_t max_references_per_node;   /* Browse page size cap */
    uint32_t browse_cache_kb;           /* worker's Browse cache, 0: off */
    /* [limits]: subscriptions */
    uint32_t max_subscriptions;
    uint32_t max_subscriptions_per_session;
    uint32_t max_monitored_items;
    uint32_t max_monitored_items_per_subscription;
    uint32_t max_publish_requests_per_session;
    uint32_t max_notifications_per_publish;
    uint32_t max_retransmission_queue;
    uint32_t max_monitored_item_queue_size;
    uint32_t max_queued_values;         /* per worker */
    uint32_t max_event_queue_size;
    uint32_t default_event_queue_size;
    uint32_t max_filter_elements;
    uint32_t events_audit;              /* [events] audit, bool */
    uint32_t max_keep_alive_count;
    uint32_t max_lifetime_count;
    double   min_publishing_interval_ms;
    double   min_sampling_interval_ms;
    /* [fanout]: rings and notification blocks (shm/fanout.h) */
    uint32_t fanout_blocks;             /* notification blocks */
    uint32_t fanout_block_size;         /* bytes per block */
    uint32_t fanout_notif_ring_slots;   /* block handles per worker */
    uint32_t fanout_req_ring_slots;     /* worker -> broker slots */
    uint32_t fanout_reply_ring_slots;   /* broker -> worker slots */
    uint32_t fanout_msg_slot_size;      /* bytes per request/reply slot */
    uint32_t fanout_pending_writes;     /* Writes in flight per worker */
    uint32_t fanout_linger_us;          /* wait for more before a bell */
    /* [feed] */
    char     feed_listen[BK_CONF_STR_MAX];  /* "": the runtime dir's */
    uint32_t feed_max_batch_bytes;
    uint32_t feed_backpressure_ms;
    /* [mqtt] (broker/mqtt.c): empty url and host = off */
    char     mqtt_url[BK_CONF_STR_MAX];         /* mqtt[s]://HOST[:PORT] */
    char     mqtt_host[BK_CONF_STR_MAX];
    uint32_t mqtt_port;
    char     mqtt_topic[BK_CONF_STR_MAX];       /* subscription filter */
    char     mqtt_client_id[BK_CONF_STR_MAX];   /* "": from host and pid */
    uint32_t mqtt_clean_session;                /* bool */
    uint32_t mqtt_qos;
    char     mqtt_username[BK_CONF_STR_MAX];
    char     mqtt_password_file[BK_CONF_STR_MAX];
    char     mqtt_tls_ca[BK_CONF_STR_MAX];      /* set: TLS */
    uint32_t mqtt_keepalive;                    /* seconds */
    uint32_t mqtt_max_payload_bytes;
    uint32_t mqtt_reconnect_min_ms;
    uint32_t mqtt_reconnect_max_ms;
    /* [methods] (broker/methods.c) */
    char     methods_listen[BK_CONF_STR_MAX];   /* "": the runtime dir's */
    uint32_t methods_timeout_ms;
    uint32_t methods_pending_calls;     /* Calls in flight per worker */
    uint32_t methods_max_call_bytes;    /* one Call's arguments/results */
    /* [security] (broker/pki.c) */
    char     pki_dir[BK_CONF_STR_MAX];      /* relative: under runtime_dir */
    char     policies[BK_CONF_STR_MAX];     /* "None, Basic256Sha256, ..." */
    char     modes[BK_CONF_STR_MAX];        /* "None, Sign, SignAndEncrypt" */
    uint32_t allow_deprecated;              /* bool */
    uint32_t anonymous;                     /* bool */
    uint32_t anonymous_write;               /* bool */
    char     x509_role[BK_CONF_STR_MAX];    /* "viewer" or "operator" */
    uint32_t certificate_days;
    uint32_t rejected_max;
    char     users_file[BK_CONF_STR_MAX];   /* relative: beside pki_dir */
    /* [security]: throttling (shm/throttle.h) */
    uint32_t failure_threshold;             /* OPN failures per IP; 0 off */
    uint32_t failure_window_ms;
    uint32_t failure_block_ms;
    uint32_t login_failure_threshold;       /* per ApplicationUri; 0 off */
    uint32_t login_failure_window_ms;
    uint32_t login_failure_block_ms;
    uint32_t login_failure_ip_threshold;    /* per IP address; 0 off */
    uint32_t throttle_entries;              /* shared table size */
    /* [history] (issue 18: the historian, the history store) */
    uint32_t history_enabled;               /* bool */
    char     history_dir[BK_CONF_STR_MAX];  /* relative: under runtime_dir */
    uint32_t history_simulation;            /* bool */
    char     history_nodes[BK_CONF_STR_MAX];    /* NodeIds */
    uint32_t history_retention_s;           /* 0: no limit */
    uint32_t history_max_mb;
    uint32_t history_map_mb;
    uint32_t history_flush_ms;
    uint32_t history_batch;
    uint32_t history_sync;                  /* bool */
    uint32_t history_max_values;            /* per node per HistoryRead */
    /* [alarms] (broker/alarmcfg.h) */
    uint32_t alarms_max;                    /* [alarm NAME] sections */
    /* Not a key: where the reader puts the [alarm NAME] sections (NULL:
     * they are skipped; a SIGHUP reload leaves them alone). */
    struct bk_alarmcfg *alarms;
    uint32_t history_max_update_nodes;      /* details per HistoryUpdate */
    uint32_t history_pending_updates;       /* per worker */
    uint32_t history_demo_vars;                  /* v0 .. historized */
    /* [history]: the HistoricalDataConfiguration defaults (histcfg.h) */
    uint32_t history_stepped;               /* bool */
    double   history_min_time_interval_ms;
    double   history_max_time_interval_ms;
    double   history_exception_deviation;
    char     history_exception_deviation_format[BK_CONF_STR_MAX];
    uint32_t history_treat_uncertain_as_bad;    /* bool */
    uint32_t history_percent_data_bad;
    uint32_t history_percent_data_good;
    uint32_t history_use_sloped_extrapolation;  /* bool */
    /* Not a key: where the reader puts the [history NAME] sections (NULL:
     * they are skipped, as at a SIGHUP reload). */
    struct bk_histcfg *histnodes;
    /* [history]: event history (worker/histev.c) */
    uint32_t history_events;                /* bool */
    uint32_t history_event_retention_s;     /* 0: no limit */
    uint32_t history_event_max_mb;
    uint32_t history_max_events;            /* per notifier per read */
    uint32_t history_max_event_scan;        /* examined per notifier per read */
    /* [limits]: accepting */
    uint32_t accept_rate;                   /* per second; 0 unlimited */
    uint32_t accept_burst;
};

/* Fill c with the defaults. */
void bk_config_defaults(struct bk_config *c);

/*
 * Read an INI file over c.  Unknown sections or keys, bad numbers and
 * values out of bounds are errors: 0, or -1 with a message in err.
 */
int bk_config_load(struct bk_config *c, const char *path, char *err,
                   size_t errlen);

/*
 * Set one setting by "section.key" (the command line's --set) or by its key
 * alone when unique.  0 or -1 with a message in err.
 */
int bk_config_set(struct bk_config *c, const char *name, const char *value,
                  char *err, size_t errlen);

/*
 * The rules between settings that the key table's bounds cannot say
 * (limits.max_secure_channels >= limits.max_sessions + 1,
 * addrspace.simulation_vars <= addrspace.vars): 0, or -1 with a message
 * in err.
 */
int bk_config_check(const struct bk_config *c, char *err, size_t errlen);

/* Fill in what defaults to the host (application_uri, hostname). */
void bk_config_finish(struct bk_config *c);

struct shm_config;

/* Copy what workers need into the shared-memory snapshot. */
void bk_config_snapshot(const struct bk_config *c, struct shm_config *s);

/*
 * SIGHUP: next is the configuration read again (checked).  Each setting
 * that differs is logged (shm/log.h: "SIGHUP: section.key = ..."); a live
 * one (bk_config_is_live) is copied into c (a notice), any other keeps
 * its running value and is logged as needing a restart (a warning).
 * *applied and *restart count them.
 */
void bk_config_reload(struct bk_config *c, const struct bk_config *next,
                      unsigned *applied, unsigned *restart);

/* Whether "section.key" takes effect on SIGHUP. */
bool bk_config_is_live(const char *name);

/* Store the live settings the workers read into their snapshot, each
 * with one atomic store (they read them at every use). */
void bk_config_snapshot_live(const struct bk_config *c, struct shm_config *s);

/* Write c as an INI file with a comment per key. */
void bk_config_write(const struct bk_config *c, FILE *f);

/*
 * Where c's files are: the PKI directory (a relative pki_dir under
 * runtime_dir) and the users file (a relative users_file beside the PKI
 * directory), into out[cap].  0, or -1 when it does not fit.
 */
int bk_config_pki_path(const struct bk_config *c, char *out, size_t cap);
int bk_config_users_path(const struct bk_config *c, char *out, size_t cap);

/* The history store's directory (a relative history_dir under
 * runtime_dir) into out[cap]: 0, or -1 when it does not fit. */
int bk_config_history_path(const struct bk_config *c, char *out,
                           size_t cap);

/* The [history] defaults of a node's HistoricalDataConfiguration. */
struct bk_histcfg_def;
void bk_config_history_def(const struct bk_config *c,
                           struct bk_histcfg_def *d);

/* Worker slots with rings: the workers, and the historian's after them
 * when history is on (its slot is c->workers). */
uint32_t bk_config_slots(const struct bk_config *c);

#endif /* BK_CONFIG_H */
