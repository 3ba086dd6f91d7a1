/*
 * shm/layout.h: the shared-memory segment, the broker <-> worker contract.
 *
 * Only struct definitions, constants and static_asserts (docs/style.md
 * §6).  Every reference between structures is an offset or an index, never
 * a pointer: each process maps the segment where it likes.
 *
 *   +-------------------+ 0
 *   | shm_header        |  magic, layout version, size, region table
 *   +-------------------+
 *   | region SHM_R_*    |  each at header.regions[r].off, 128-byte aligned
 *   | ...               |
 *   +-------------------+ header.size
 *
 * Writers: the broker builds the node store, the string heap, the index and
 * the reference-type matrix once, before any worker attaches; they are
 * read-only afterwards.  Value slots and the value heap are written by the
 * broker only, under the seqlock protocol of shm/value.c.  Interest masks are
 * written by workers, each only its own bit.
 */
#ifndef SHM_LAYOUT_H
#define SHM_LAYOUT_H

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_MAGIC          0x52424155u     /* "UABR" */
#define SHM_LAYOUT_VERSION 23u     /* 7: SHM_R_THROTTLE, throttle keys in
                                    * the config snapshot; 8: failed logins
                                    * per IP address; 9: rsa_cpu_us;
                                    * 10: browse_cache_kb in the config;
                                    * 11: fanout.linger_us in the config;
                                    * 12: the claim's generation in a
                                    * throttle tag; 13: a ring consumer's
                                    * wake-by promise, a block's time;
                                    * 14: a worker row's loop_busy_us;
                                    * event interest and lost events
                                    * (struct shm_fanout), the event
                                    * queue limit in the config;
                                    * 15: methods' pending_calls and
                                    * max_call_bytes in the config;
                                    * 16: log.level in the config;
                                    * 17: max_unactivated_per_address,
                                    * max_queued_values and the history
                                    * keys in the config, the historian's
                                    * worker row;
                                    * 18: session moves' timeout and
                                    * size in the config, their counters
                                    * in a worker row;
                                    * 19: SHM_R_PARK (parked sessions,
                                    * the change log), its counters in a
                                    * worker row; the retire timeouts in
                                    * the config, events lost in a move;
                                    * 20: event history's keys in the
                                    * config, its counters in the
                                    * historian's row; 21: a park
                                    * record's progress halves; 22:
                                    * history.max_event_scan in the
                                    * config, the side databases' totals
                                    * in the historian's row; 23: the
                                    * values its collection rules
                                    * dropped (hist_filtered) */
#define SHM_CACHELINE      128
#define SHM_NONE           0xFFFFFFFFu     /* no node, no slot, no offset */

/* Regions of the segment. */
enum shm_region {
    SHM_R_NODES = 0,        /* struct shm_node[nnodes] */
    SHM_R_REFS,             /* struct shm_ref[nrefs] */
    SHM_R_INDEX,            /* struct shm_index_entry[index_cap] */
    SHM_R_STRINGS,          /* string heap: { uint32 len; bytes } records */
    SHM_R_REFTYPES,         /* struct shm_reftypes */
    SHM_R_SLOTS,            /* struct shm_value_slot[nslots] */
    SHM_R_VHEAP,            /* value heap blocks */
    SHM_R_INTEREST,         /* _Atomic uint64_t[nslots]: worker bits */
    SHM_R_CONFIG,           /* struct shm_config: the broker's snapshot */
    SHM_R_WORKERS,          /* struct shm_worker[SHM_WORKERS_MAX], then
                             * struct shm_limits */
    SHM_R_RINGS,            /* struct shm_rings, then the rings (ring.c) */
    SHM_R_BLOCKS,           /* struct shm_blockpool, then the blocks */
    SHM_R_FANOUT,           /* struct shm_fanout, then lost masks[nslots] */
    SHM_R_PKI,              /* struct shm_pki, list halves, mailboxes */
    SHM_R_THROTTLE,         /* struct shm_throttle, then its entries */
    SHM_R_PARK,             /* struct shm_park, the change log, then per
                             * worker slot its records and data */
    SHM_R_MAX = 16
};

struct shm_region_desc {
    uint64_t off;
    uint64_t size;
};

/*
 * What a segment must hold, every count an upper bound: the input of the
 * segment plan (shm/plan.c), which asks each region's module for its
 * size.  Not in the segment itself.
 */
struct shm_plan {
    uint32_t nodes;
    uint32_t refs;
    uint64_t strings;           /* string-heap bytes */
    uint32_t slots;             /* value slots */
    uint64_t vheap;             /* value-heap bytes */
    uint64_t vheap_build;       /* of which the creator fills at once
                                 * (populated by shm_plan_create) */
    /*
     * Fan-out transport (shm/ring.c, shm/blockpool.c).  0 leaves a region
     * empty: no rings when ring_workers is 0, no pool when blocks is 0.
     * Ring slot counts round up to a power of two (at least 2), slot sizes
     * up to a multiple of 8, block_size up to a multiple of SHM_CACHELINE
     * (at least SHM_BLOCK_SIZE_MIN); shm_plan_create() refuses values
     * past SHM_WORKERS_MAX, SHM_RING_SLOTS_MAX, SHM_RING_SLOT_MAX,
     * SHM_BLOCKS_MAX or SHM_BLOCK_SIZE_MAX with -EINVAL.
     */
    uint32_t ring_workers;      /* worker slots with a ring triple */
    uint32_t req_ring_slots;    /* worker -> broker request ring */
    uint32_t reply_ring_slots;  /* broker -> worker reply ring */
    uint32_t notif_ring_slots;  /* broker -> worker block handles */
    uint32_t msg_slot_size;     /* bytes per request/reply slot */
    uint32_t blocks;            /* notification blocks */
    uint32_t block_size;        /* bytes per block, its header included */
    /*
     * PKI (shm/pki.c): list bytes per half and rejected-certificate
     * mailboxes (one set per worker slot).  0: no SHM_R_PKI region.
     */
    uint32_t pki_list_bytes;
    uint32_t pki_workers;
    /* Failure throttle (shm/throttle.c): entries (rounded up to a power
     * of two).  0: no SHM_R_THROTTLE region. */
    uint32_t throttle_entries;
    /* Parked sessions (shm/park.c): worker slots, records per slot (the
     * worker's session pool), data bytes per slot, change-log entries
     * (rounded up to a power of two).  park_workers 0 or park_bytes 0:
     * no SHM_R_PARK region. */
    uint32_t park_workers;
    uint32_t park_records;
    uint64_t park_bytes;
    uint32_t change_log_entries;
};

/* Node classes, Part 3 §8.29 (the NodeClass enumeration values). */
#define SHM_NC_OBJECT        1
#define SHM_NC_VARIABLE      2
#define SHM_NC_METHOD        4
#define SHM_NC_OBJECTTYPE    8
#define SHM_NC_VARIABLETYPE  16
#define SHM_NC_REFERENCETYPE 32
#define SHM_NC_DATATYPE      64
#define SHM_NC_VIEW          128

/* NodeId identifier types, the IdType enumeration (Part 3 §8.2.3). */
#define SHM_ID_NUMERIC 0
#define SHM_ID_STRING  1
#define SHM_ID_GUID    2
#define SHM_ID_OPAQUE  3

/* struct shm_node.flags */
#define SHM_NF_ABSTRACT          0x01   /* IsAbstract */
#define SHM_NF_SYMMETRIC         0x02   /* Symmetric */
#define SHM_NF_CONTAINS_NO_LOOPS 0x04   /* ContainsNoLoops */
#define SHM_NF_HISTORIZING       0x08   /* Historizing */
#define SHM_NF_EXECUTABLE        0x10   /* Executable */
#define SHM_NF_USER_EXECUTABLE   0x20   /* UserExecutable */
#define SHM_NF_HIST_ARCHIVE      0x40   /* a Value the worker reads from the
                                           history store: StartOfArchive,
                                           StartOfOnlineArchive */

/*
 * One node: every attribute our services read, except Value (in a value
 * slot) and the strings (string-heap offsets, 0 = absent).
 */
struct shm_node {
    uint32_t id;                /* numeric id, or heap offset of the id bytes */
    uint16_t ns;
    uint8_t  idtype;            /* SHM_ID_* */
    uint8_t  node_class;        /* SHM_NC_* */
    uint32_t browse_name;       /* heap offset of the name */
    uint16_t browse_ns;
    uint8_t  flags;             /* SHM_NF_* */
    uint8_t  event_notifier;
    uint32_t dn_text;           /* DisplayName */
    uint32_t dn_locale;
    uint32_t desc_text;         /* Description */
    uint32_t desc_locale;
    uint32_t write_mask;
    uint32_t user_write_mask;
    uint32_t refs;              /* first of nrefs in SHM_R_REFS */
    uint32_t nrefs;
    uint32_t super;             /* types: supertype node index, else SHM_NONE */
    uint32_t type_def;          /* objects, variables: TypeDefinition node */
    union {
        struct {                /* Variable, VariableType */
            uint32_t data_type;         /* node index */
            int32_t  value_rank;
            uint32_t array_dims;        /* heap offset: { n; uint32 dims[n] } */
            uint32_t slot;              /* value slot or SHM_NONE */
        } var;
        struct {                /* ReferenceType */
            uint32_t inv_text;          /* InverseName */
            uint32_t inv_locale;
            uint32_t reftype;           /* index in struct shm_reftypes */
            uint32_t unused;
        } ref;
    } u;
    uint32_t access_level_ex;   /* AccessLevelEx; its low byte is AccessLevel */
    uint8_t  user_access_level;
    uint8_t  pad[3];
    double   min_sampling;      /* MinimumSamplingInterval, ms */
};
static_assert(sizeof(struct shm_node) == 88, "shm_node size");
static_assert(offsetof(struct shm_node, u) == 56, "shm_node.u");
static_assert(offsetof(struct shm_node, min_sampling) % 8 == 0, "align");

#define SHM_REF_INVERSE 0x0001

/* A reference; every reference is stored at both of its ends. */
struct shm_ref {
    uint32_t target;            /* node index */
    uint16_t reftype;           /* index in struct shm_reftypes */
    uint16_t flags;             /* SHM_REF_INVERSE */
};
static_assert(sizeof(struct shm_ref) == 8, "shm_ref size");

/* NodeId hash index: open addressing, linear probing; node SHM_NONE = empty. */
struct shm_index_entry {
    uint32_t hash;
    uint32_t node;
};
static_assert(sizeof(struct shm_index_entry) == 8, "index entry");

#define SHM_REFTYPES_MAX 256

/*
 * Reference types and their subtype closure: sub[a] has bit b set when a is
 * b or a subtype of b, so includeSubtypes is one bit test.
 */
struct shm_reftypes {
    uint32_t n;
    uint32_t pad;
    uint32_t node[SHM_REFTYPES_MAX];                    /* node index */
    uint64_t sub[SHM_REFTYPES_MAX][SHM_REFTYPES_MAX / 64];
};
static_assert(sizeof(struct shm_reftypes) % 8 == 0, "reftypes");

#define SHM_VALUE_INLINE 24      /* encoded Variant bytes kept in the slot */

/* struct shm_value_slot.flags */
#define SHM_VF_HEAP      0x01   /* the bytes live in the value heap */
#define SHM_VF_SOURCE_TS 0x02
#define SHM_VF_SERVER_TS 0x04

/*
 * One value: the encoded Variant and its status and timestamps, under a
 * seqlock.  W: broker only; R: workers (copy, then re-check seq).
 */
struct shm_value_slot {
    _Atomic uint32_t seq;       /* odd while the broker writes */
    _Atomic uint32_t len;       /* bytes of the encoded Variant */
    _Atomic uint32_t heap;      /* value-heap offset when SHM_VF_HEAP */
    _Atomic uint32_t status;
    _Atomic int64_t  source_ts;
    _Atomic int64_t  server_ts;
    _Atomic uint16_t source_ps;
    _Atomic uint16_t server_ps;
    _Atomic uint32_t flags;     /* SHM_VF_* */
    uint8_t          inl[SHM_VALUE_INLINE];
};
static_assert(sizeof(struct shm_value_slot) == 64, "value slot size");

/*
 * Value-heap block header.  Blocks are powers of two from
 * SHM_VHEAP_MIN_SHIFT; a freed block keeps its class forever, so a reader
 * racing a reuse reads bytes of the right bounds and then sees the slot's
 * sequence changed.
 */
#define SHM_VHEAP_MIN_SHIFT 6           /* 64-byte blocks */
#define SHM_VHEAP_CLASSES   21          /* up to 64 MiB */

struct shm_vblock {
    uint32_t cls;                       /* size class */
    uint32_t next;                      /* free list: next block offset */
};

/* The broker's allocator state for the value heap.  W: broker only. */
struct shm_vheap {
    uint64_t top;                       /* bump pointer (heap offset) */
    uint64_t size;
    uint32_t free[SHM_VHEAP_CLASSES];   /* first free block offset, 0 none */
    uint32_t pad;
    uint64_t blocks_used;
    uint64_t bytes_used;
};

#define SHM_HISTORY_DIR_MAX 1024    /* struct shm_config.history_dir */

/*
 * The configuration snapshot the broker passes its workers (workers read no
 * files).  W: broker before forking; R: workers.
 */
#define SHM_CONF_STR 256

struct shm_config {
    uint32_t port;
    uint32_t workers;
    char     application_uri[SHM_CONF_STR];
    char     hostname[SHM_CONF_STR];
    char     runtime_dir[SHM_CONF_STR];
    uint32_t max_string_length;
    uint32_t max_bytestring_length;
    uint32_t max_array_length;
    uint32_t max_message_size;
    uint32_t max_chunk_count;
    uint32_t receive_buffer_size;
    uint32_t max_sessions;
    uint32_t max_secure_channels;
    uint32_t max_browse_continuation_points;
    uint32_t max_nodes_per_read;
    uint32_t max_nodes_per_write;
    uint32_t max_nodes_per_browse;
    uint32_t max_nodes_per_register_nodes;
    uint32_t max_nodes_per_translate;
    uint32_t max_nodes_per_method_call;
    uint32_t max_monitored_items_per_call;
    uint32_t max_references_per_node;
    uint32_t max_subscriptions;
    uint32_t max_subscriptions_per_session;
    uint32_t max_monitored_items;
    uint32_t max_monitored_items_per_subscription;
    uint32_t max_publish_requests_per_session;
    uint32_t hello_timeout_ms;          /* HEL/OPN deadline */
    uint32_t min_session_timeout_ms;
    uint32_t max_session_timeout_ms;
    uint32_t session_move_timeout_ms;   /* worker/roam.c */
    uint32_t max_session_move_bytes;
    uint32_t min_token_lifetime_ms;
    uint32_t max_token_lifetime_ms;
    uint32_t max_translate_path_elements;
    uint32_t pad;
    double   min_publishing_interval_ms;
    double   min_sampling_interval_ms;
    uint32_t pending_writes;            /* Writes in flight per worker */
    uint32_t max_notifications_per_publish;
    uint32_t max_retransmission_queue;  /* NotificationMessages kept */
    uint32_t max_monitored_item_queue_size;
    uint32_t max_keep_alive_count;
    uint32_t max_lifetime_count;
    uint32_t browse_cache_kb;           /* worker's Browse cache, 0: off */
    /* Throttling (shm/throttle.h): OPN security failures per client IP
     * address, failed logins per client ApplicationUri and per client IP
     * address (its own threshold, the same window and block; threshold 0:
     * off), and the server-wide accept rate (0: unlimited). */
    uint32_t failure_threshold;
    uint32_t failure_window_ms;
    uint32_t failure_block_ms;
    uint32_t login_failure_threshold;
    uint32_t login_failure_window_ms;
    uint32_t login_failure_block_ms;
    uint32_t accept_rate;               /* connections per second */
    uint32_t accept_burst;              /* connections at once */
    uint32_t login_failure_ip_threshold;
    uint32_t linger_us;                 /* fanout.linger_us */
    uint32_t pending_calls;             /* methods.pending_calls */
    uint32_t max_call_bytes;            /* methods.max_call_bytes */
    uint32_t max_event_queue_size;      /* limits.max_event_queue_size */
    uint32_t default_event_queue_size;  /* limits.default_event_queue_size */
    uint32_t max_filter_elements;       /* limits.max_filter_elements */
    uint32_t events_audit;              /* events.audit: 1 raise them */
    /* History (issue 18): the store's directory ("": history off) and
     * the values one HistoryRead returns per node at most. */
    char     history_dir[SHM_HISTORY_DIR_MAX];
    uint32_t history_max_values;        /* history.max_return_values */
    uint32_t history_max_update_nodes;  /* history.max_update_nodes */
    uint32_t history_pending_updates;   /* history.pending_updates */
    /* Event history (worker/histev.c, worker/svc_histevent.c): events one
     * HistoryRead returns per notifier at most, the age and the size
     * kept (0: history keeps no events). */
    uint32_t history_max_events;        /* history.max_return_events */
    uint32_t history_event_retention_s; /* history.event_retention_s */
    uint32_t history_event_max_mb;      /* history.event_max_mb */
    uint32_t history_max_event_scan;    /* history.max_event_scan */
    uint32_t max_unactivated_per_address;   /* limits.*: sessions not
                                             * activated per client IP
                                             * address (worker) */
    uint32_t max_queued_values;         /* limits.*: the queue pool of a
                                         * worker (values queued in
                                         * monitored items) */
    _Atomic uint32_t log_level;         /* log.level (shm/log.h), live:
                                         * W: broker (SIGHUP); R: every
                                         * process's log, relaxed */
    uint32_t retire_handover_ms;        /* server.*: a retiring worker's */
    uint32_t retire_renotice_ms;        /* hand-over (worker/roam.c),
                                         * live: read once per retire */
    uint32_t session_move_event_bytes;  /* limits.*: the events of a
                                         * move's window kept (worker) */
    uint32_t retransmission_store_bytes;    /* limits.*: per worker, 0:
                                             * by the subscriptions */
};

/* Services counted per worker (the index into the per-service arrays). */
enum shm_svc {
    SHM_SVC_OTHER = 0,
    SHM_SVC_GET_ENDPOINTS,
    SHM_SVC_FIND_SERVERS,
    SHM_SVC_CREATE_SESSION,
    SHM_SVC_ACTIVATE_SESSION,
    SHM_SVC_CLOSE_SESSION,
    SHM_SVC_CANCEL,
    SHM_SVC_READ,
    SHM_SVC_WRITE,
    SHM_SVC_BROWSE,
    SHM_SVC_BROWSE_NEXT,
    SHM_SVC_TRANSLATE,
    SHM_SVC_REGISTER_NODES,
    SHM_SVC_UNREGISTER_NODES,
    SHM_SVC_CALL,
    SHM_SVC_CREATE_SUBSCRIPTION,
    SHM_SVC_MODIFY_SUBSCRIPTION,
    SHM_SVC_DELETE_SUBSCRIPTIONS,
    SHM_SVC_SET_PUBLISHING_MODE,
    SHM_SVC_PUBLISH,
    SHM_SVC_REPUBLISH,
    SHM_SVC_TRANSFER_SUBSCRIPTIONS,
    SHM_SVC_CREATE_MONITORED_ITEMS,
    SHM_SVC_MODIFY_MONITORED_ITEMS,
    SHM_SVC_DELETE_MONITORED_ITEMS,
    SHM_SVC_SET_MONITORING_MODE,
    SHM_SVC_SET_TRIGGERING,
    SHM_SVC_MAX
};

/* Latency histogram: bucket b counts requests of [2^b, 2^(b+1)) µs. */
#define SHM_LAT_BUCKETS 24

enum shm_worker_state {
    SHM_WS_EMPTY = 0,       /* never started */
    SHM_WS_STARTING,        /* forked, not serving yet */
    SHM_WS_UP,              /* serving */
    SHM_WS_DOWN             /* exited; the broker will respawn it */
};

/*
 * One worker's row.  W: that worker (counters, heartbeat), except `pid`,
 * `state` on the broker's side of a restart, and `restarts`: W broker.
 * R: broker (sums for /stats).  Counters only grow, relaxed atomics; the
 * broker resets a row before respawning into it.
 */
struct shm_worker {
    alignas(SHM_CACHELINE) _Atomic int32_t pid;     /* W: broker */
    _Atomic uint32_t state;                         /* enum shm_worker_state */
    _Atomic uint32_t restarts;                      /* W: broker */
    _Atomic uint32_t pad0;
    _Atomic int64_t  started;       /* DateTime the worker came up */
    _Atomic int64_t  heartbeat;     /* DateTime of its last loop tick */
    alignas(SHM_CACHELINE) _Atomic uint64_t connections;      /* open now */
    _Atomic uint64_t connections_total;
    _Atomic uint64_t channels;                                 /* open now */
    _Atomic uint64_t sessions;                                 /* open now */
    _Atomic uint64_t bad_requests;          /* ERR sent or Bad ServiceResult */
    _Atomic uint64_t bytes_in;
    _Atomic uint64_t bytes_out;
    _Atomic uint64_t allocations;           /* heap allocations after init */
    _Atomic uint64_t rejected_connections;
    _Atomic uint64_t sessions_evicted;      /* never activated, closed to
                                             * admit a CreateSession */
    _Atomic uint64_t notif_dropped;         /* values lost to an exhausted
                                             * queue pool (max_queued_values) */
    _Atomic uint64_t notifications;         /* records handed to monitored
                                             * items (worker/link.c) */
    _Atomic uint64_t notif_blocks;          /* blocks opened and released */
    _Atomic uint64_t overflows;             /* slots reported lost to us */
    _Atomic uint64_t write_ops;             /* WriteValues sent to the broker */
    /* The loop (worker/conn.c, docs/architecture.md §4): RSA private-key
     * operations done (ua_crypto_private_ops); the longest loop iteration so
     * far (µs from its first callback to its flush: what the worker's other
     * channels waited at worst); the most private-key operations one
     * iteration did (1 by design); the most CPU time one RSA step took
     * (an OPN stage, a CreateSession or ActivateSession: CPU, so
     * preemption does not count); every iteration's busy time, bucket b
     * = [2^b, 2^(b+1)) µs.  rsa_cpu_us: the CPU time spent inside the
     * RSA operations themselves (ua_crypto_rsa_cpu_ns), for setting a
     * run's RSA work against the worker's whole CPU. */
    _Atomic uint64_t rsa_private_ops;
    _Atomic uint64_t rsa_cpu_us;
    _Atomic uint64_t loop_stall_max_us;
    _Atomic uint64_t loop_rsa_ops_max;
    _Atomic uint64_t loop_rsa_cpu_max_us;
    _Atomic uint64_t loop_iterations[SHM_LAT_BUCKETS];
    _Atomic uint64_t requests[SHM_SVC_MAX];
    _Atomic uint64_t latency[SHM_SVC_MAX][SHM_LAT_BUCKETS];
    _Atomic uint64_t latency_sum_us[SHM_SVC_MAX];
    _Atomic uint64_t loop_busy_us;      /* sum of loop_iterations' times */
    /* The historian's (issue 18, worker/historian.c; 0 in a worker's
     * row): values committed, values not kept (store full, errors), write
     * transactions, how long the oldest value of the last commit waited
     * (ms), and after each commit the store's totals (values, bytes,
     * file size, dropped by retention, DateTime of the oldest value, 0:
     * none), writing stopped (1: full), variables historized. */
    _Atomic uint64_t hist_stored;
    _Atomic uint64_t hist_dropped;
    _Atomic uint64_t hist_commits;
    _Atomic uint64_t hist_lag_ms;
    _Atomic uint64_t hist_values;
    _Atomic uint64_t hist_bytes;
    _Atomic uint64_t hist_file_bytes;
    _Atomic uint64_t hist_retention_dropped;
    _Atomic int64_t  hist_oldest;
    _Atomic uint32_t hist_full;
    _Atomic uint32_t hist_nodes;
    /* Values the variables' data collection rules did not store
     * (MinTimeInterval, ExceptionDeviation: hist/collect.h). */
    _Atomic uint64_t hist_filtered;
    /* Event history (worker/histev.c): events committed, not kept (store
     * full, errors), the broker could not deliver to the historian; after
     * each commit the events kept and their bytes, dropped by retention. */
    _Atomic uint64_t hist_events_stored;
    _Atomic uint64_t hist_events_dropped;
    _Atomic uint64_t hist_events_lost;
    _Atomic uint64_t hist_events;
    _Atomic uint64_t hist_event_bytes;
    _Atomic uint64_t hist_events_retention_dropped;
    /* The side databases (hist/side.h) after each commit: modified values
     * and annotations kept, and their bytes (pages). */
    _Atomic uint64_t hist_modified;
    _Atomic uint64_t hist_modified_bytes;
    _Atomic uint64_t hist_annotations;
    _Atomic uint64_t hist_annotation_bytes;
    /* Sessions moving between workers (worker/roam.c). */
    _Atomic uint64_t sessions_moved_in;
    _Atomic uint64_t sessions_moved_out;
    _Atomic uint64_t session_moves_failed;
    _Atomic uint64_t session_move_values_lost;
    _Atomic uint64_t session_move_bytes;    /* blobs handed over */
    _Atomic uint64_t session_move_events;   /* events of a move's window
                                             * carried (worker/sub_roam.c) */
    _Atomic uint64_t session_move_events_lost;
    /* Parked sessions (worker/park.c, docs/architecture.md §11): taken
     * over from a dead predecessor in this slot, value changes they
     * missed that the change log could not give back (Overflow bit),
     * park writes, sessions not parked (too large, park full), the
     * park's bytes in use (a gauge). */
    _Atomic uint64_t sessions_inherited;
    _Atomic uint64_t session_park_values_lost;
    _Atomic uint64_t session_park_writes;
    _Atomic uint64_t sessions_not_parked;
    _Atomic uint64_t session_park_bytes;
    uint64_t         park_pad[5];
};
static_assert(sizeof(struct shm_worker) % SHM_CACHELINE == 0, "pad");
static_assert(offsetof(struct shm_worker, connections) == SHM_CACHELINE,
              "worker-written counters on their own line");

#define SHM_WORKERS_MAX 64

/* ------------------------------------------------ server-wide budgets
 *
 * Sessions, subscriptions and monitored items are limited for the whole
 * server, not per worker (shm/limits.c).  struct shm_limits follows the
 * SHM_WORKERS_MAX rows in SHM_R_WORKERS.  used[k]: W every worker (CAS,
 * never past the configured limit), the broker (a dead worker's share).
 * w[i].held[k]: what worker i holds of used[k]; W worker i, then the broker
 * once it has reaped worker i.
 */
enum shm_limit_kind {
    SHM_LIM_SESSIONS = 0,
    SHM_LIM_SUBSCRIPTIONS,
    SHM_LIM_MONITORED_ITEMS,
    SHM_LIM_KINDS
};

struct shm_limits_worker {
    alignas(SHM_CACHELINE) _Atomic uint32_t held[SHM_LIM_KINDS];
};
static_assert(sizeof(struct shm_limits_worker) == SHM_CACHELINE, "pad");

struct shm_limits {
    alignas(SHM_CACHELINE) _Atomic uint32_t used[SHM_LIM_KINDS];
    struct shm_limits_worker w[SHM_WORKERS_MAX];
};
static_assert(sizeof(struct shm_limits)
                  == (1 + SHM_WORKERS_MAX) * SHM_CACHELINE,
              "shm_limits size");

struct shm_header {
    uint32_t               magic;       /* SHM_MAGIC */
    uint32_t               version;     /* SHM_LAYOUT_VERSION */
    uint64_t               size;        /* whole segment */
    struct shm_region_desc regions[SHM_R_MAX];
    /* Node store, W: broker at build time. */
    uint32_t               nnodes;
    uint32_t               nrefs;
    uint32_t               index_cap;   /* power of two */
    uint32_t               nslots;
    uint64_t               strings_used;
    uint32_t               ns0_nodes;   /* nodes of namespace 0 */
    _Atomic uint32_t       ready;       /* 1 once the build is complete */
    struct shm_vheap       vheap;
};
static_assert(offsetof(struct shm_header, regions) == 16, "header");

/* ------------------------------------------------ fan-out transport
 *
 * SPSC rings (shm/ring.c) and the notification block pool
 * (shm/blockpool.c).  Both regions are empty (size 0) unless the plan asks
 * for them; shm_plan_create() initialises them when it does.
 */

#define SHM_RING_MAGIC      0x474E4952u     /* "RING" */
#define SHM_RINGS_MAGIC     0x53474E52u     /* "RNGS" */
#define SHM_RING_SLOTS_MIN  2u
#define SHM_RING_SLOTS_MAX  (1u << 24)      /* slots per ring */
#define SHM_RING_SLOT_ALIGN 8u
#define SHM_RING_SLOT_MAX   4096u           /* bytes per slot */

/*
 * One single-producer single-consumer ring; `size` slots of `slot_size`
 * bytes follow the struct.  Indices run free (uint32, wrapping) and are
 * masked on access; the ring holds tail - head items, never more than
 * size.  Producer-written and consumer-written words sit on separate cache
 * lines.  The ordering contract is at the top of shm/ring.c.
 *
 *   line 0  magic size mask slot_size          W: creator, then read-only
 *   line 1  tail                               W: producer   R: consumer
 *   line 2  head                               W: consumer   R: producer
 *   line 3  consumer_sleeping sleeps wake_ms   W: consumer   R: producer
 *   line 4  full bells deferred                W: producer   R: stats
 *   slots   [size][slot_size]                  W: producer   R: consumer
 *
 * The producer's counters are off the tail's line: a producer retrying a
 * full ring must not keep invalidating the line the consumer reads.
 */
struct shm_ring {
    alignas(SHM_CACHELINE) uint32_t magic;          /* SHM_RING_MAGIC */
    uint32_t size;                  /* slots, a power of two */
    uint32_t mask;                  /* size - 1 */
    uint32_t slot_size;             /* bytes, a multiple of 8 */
    alignas(SHM_CACHELINE) _Atomic uint32_t tail;   /* next slot to fill */
    alignas(SHM_CACHELINE) _Atomic uint32_t head;   /* next slot to read */
    alignas(SHM_CACHELINE) _Atomic uint32_t consumer_sleeping;
                                    /* odd while the consumer sleeps; +1 on
                                     * every sleep and every wake */
    uint32_t pad3;
    _Atomic uint64_t sleeps;        /* times the consumer went to sleep */
    _Atomic uint64_t wake_ms;       /* the sleeping consumer wakes by then
                                     * anyway (CLOCK_MONOTONIC ms; 0: no
                                     * promise): shm_ring_needs_bell_by() */
    alignas(SHM_CACHELINE) _Atomic uint64_t full;   /* pushes refused */
    _Atomic uint64_t bells;         /* doorbells the producer was told to ring */
    _Atomic uint64_t deferred;      /* bells left to the consumer's promise */
};
static_assert(sizeof(struct shm_ring) == 5 * SHM_CACHELINE, "shm_ring size");
static_assert(alignof(struct shm_ring) == SHM_CACHELINE, "shm_ring align");
static_assert(offsetof(struct shm_ring, tail) == 1 * SHM_CACHELINE,
              "tail on the producer's line");
static_assert(offsetof(struct shm_ring, head) == 2 * SHM_CACHELINE,
              "head on the consumer's line");
static_assert(offsetof(struct shm_ring, consumer_sleeping)
                  == 3 * SHM_CACHELINE,
              "sleeping flag on a line of its own");
static_assert(offsetof(struct shm_ring, full) == 4 * SHM_CACHELINE,
              "producer counters off the tail's line");

/* The rings of one worker slot. */
enum shm_ring_kind {
    SHM_RING_REQ = 0,       /* worker -> broker: Writes and other requests */
    SHM_RING_REPLY,         /* broker -> worker: their answers */
    SHM_RING_NOTIF,         /* broker -> worker: struct shm_block_handle */
    SHM_RING_KINDS
};

/*
 * Start of SHM_R_RINGS; W: creator, then read-only.  Worker w's ring of
 * kind k starts at sizeof(struct shm_rings) + w * stride + off[k] from the
 * region start and takes ring_bytes[k].
 */
struct shm_rings {
    alignas(SHM_CACHELINE) uint32_t magic;          /* SHM_RINGS_MAGIC */
    uint32_t workers;                               /* worker slots */
    uint32_t slots[SHM_RING_KINDS];
    uint32_t slot_size[SHM_RING_KINDS];
    uint32_t pad;
    uint64_t off[SHM_RING_KINDS];
    uint64_t ring_bytes[SHM_RING_KINDS];
    uint64_t stride;                                /* bytes per worker */
};
static_assert(sizeof(struct shm_rings) == SHM_CACHELINE, "shm_rings size");

/*
 * A reference to one notification block: the broker pushes it into a
 * worker's notification ring.  gen is the block's generation when the
 * handle was made; a handle whose gen no longer matches is stale.
 */
struct shm_block_handle {
    uint32_t index;
    uint32_t gen;                   /* never 0 for a real handle */
};
static_assert(sizeof(struct shm_block_handle) == 8, "block handle size");

#define SHM_BLOCKPOOL_MAGIC 0x4B4C4250u     /* "PBLK" */
#define SHM_BLOCKS_MAX      (1u << 24)
#define SHM_BLOCK_SIZE_MIN  (2u * SHM_CACHELINE)
#define SHM_BLOCK_SIZE_MAX  (1u << 20)
#define SHM_BLOCK_REC_ALIGN 4u

enum shm_block_state {
    SHM_BS_FREE = 0,        /* never used, or published to nobody */
    SHM_BS_FILLING,         /* the broker is appending records */
    SHM_BS_LIVE             /* published; free again once holders == 0 */
};

/*
 * Block header, at the start of every block; records follow it:
 *
 *   +----------------+------------------------+-------+------------------+
 *   | struct         | slot u32 | len u32 |    | bytes | pad to 4 | ...    |
 *   | shm_block      |  record 0 (8 + len rounded up to 4)  | record 1   |
 *   +----------------+------------------------+-------+------------------+
 *   0                128                                      128 + used
 *
 * A block is free when state != FILLING and holders == 0.
 */
struct shm_block {
    alignas(SHM_CACHELINE) _Atomic uint64_t holders;
                            /* bit w: worker w still holds the block.
                             * W: broker sets it (publish), worker w clears
                             * its own bit (release), the broker clears a
                             * dead worker's bit (reclaim). */
    _Atomic uint32_t gen;   /* W: broker at alloc; 0 = never allocated */
    _Atomic uint32_t state; /* enum shm_block_state; W: broker */
    _Atomic uint32_t used;  /* record bytes; W: broker while FILLING */
    _Atomic uint32_t nrecs; /* records; W: broker while FILLING */
    _Atomic uint64_t ms;    /* CLOCK_MONOTONIC ms of its first change (the
                             * time a worker that drains it late takes for
                             * those changes); W: broker while FILLING */
};
static_assert(sizeof(struct shm_block) == SHM_CACHELINE, "block header");
static_assert(offsetof(struct shm_block, holders) == 0, "holders first");

/* A record's fixed part inside a block (unaligned: read with memcpy). */
struct shm_block_rec {
    uint32_t slot;          /* node or value-slot index */
    uint32_t len;           /* bytes of encoded DataValue that follow */
};
static_assert(sizeof(struct shm_block_rec) == 8, "record header");

/* One worker's block-pool counters.  W: that worker; R: broker. */
struct shm_blockpool_wstats {
    alignas(SHM_CACHELINE) _Atomic uint64_t released;  /* references dropped */
    _Atomic uint64_t freed;         /* releases that dropped the last one */
    _Atomic uint64_t stale;         /* stale or foreign handles refused */
    _Atomic uint64_t corrupt;       /* blocks or records failing a bound */
};
static_assert(sizeof(struct shm_blockpool_wstats) == SHM_CACHELINE, "pad");

/*
 * Start of SHM_R_BLOCKS.  Block i starts at blocks_off + i * block_size
 * from this struct.
 */
struct shm_blockpool {
    alignas(SHM_CACHELINE) uint32_t magic;      /* W: creator */
    uint32_t nblocks;                           /* W: creator */
    uint32_t block_size;    /* bytes, header included, multiple of 128 */
    uint32_t pad;
    uint64_t blocks_off;                        /* W: creator */
    /* W: broker; R: stats. */
    alignas(SHM_CACHELINE) _Atomic uint64_t allocs;
    _Atomic uint64_t exhausted;     /* allocations refused: no free block */
    _Atomic uint64_t published;
    _Atomic uint64_t disowned;      /* references dropped for failed pushes */
    _Atomic uint64_t reclaimed;     /* references dropped for dead workers */
    _Atomic uint64_t skipped;       /* blocks a successful alloc passed over */
    struct shm_blockpool_wstats w[SHM_WORKERS_MAX];
};
static_assert(offsetof(struct shm_blockpool, allocs) == SHM_CACHELINE,
              "broker counters on their own line");
static_assert(sizeof(struct shm_blockpool)
                  == (2 + SHM_WORKERS_MAX) * SHM_CACHELINE,
              "shm_blockpool size");

/* ------------------------------------------------ fan-out bookkeeping
 *
 * SHM_R_FANOUT (empty unless the plan has rings): what the broker's
 * notification path tells the workers and the stats beyond the rings and
 * the pool: per-worker lost-value sequence numbers, then one lost mask per
 * value slot (bit w: worker w missed at least one change of that slot).
 * Record formats and the lost-value protocol: shm/fanout.h.
 */
#define SHM_FANOUT_MAGIC 0x54554F46u        /* "FOUT" */

/* One worker's line.  W: broker; R: worker w (and stats). */
struct shm_fanout_worker {
    alignas(SHM_CACHELINE) _Atomic uint64_t lost_seq;
                                    /* +1 (release) after setting bits in
                                     * lost masks for this worker */
    _Atomic uint64_t dropped;       /* notifications it did not get */
    _Atomic uint64_t ring_full;     /* block pushes its ring refused */
    _Atomic uint64_t events_lost;   /* events it did not get; bumped
                                     * before lost_seq (shm/fanout.h) */
};
static_assert(sizeof(struct shm_fanout_worker) == SHM_CACHELINE, "pad");

struct shm_fanout {
    alignas(SHM_CACHELINE) uint32_t magic;      /* W: creator */
    uint32_t nslots;                            /* lost masks that follow */
    uint64_t lost_off;                          /* from this struct */
    /* W: broker; R: stats. */
    alignas(SHM_CACHELINE) _Atomic uint64_t notifications; /* records made */
    _Atomic uint64_t blocks;                    /* blocks published */
    _Atomic uint64_t blocks_exhausted;          /* allocs the pool refused */
    _Atomic uint64_t ring_full;                 /* block pushes refused */
    _Atomic uint64_t notifications_dropped;     /* (slot, worker) misses */
    _Atomic uint64_t writes;                    /* WriteValues applied */
    _Atomic uint64_t feed_values;               /* values from the feed */
    _Atomic uint64_t events;                    /* event records made */
    _Atomic uint64_t feed_events;               /* events from the feed */
    /* W: each worker its own bit (fetch-OR / fetch-AND-NOT); R: broker.
     * Bit w: worker w has event monitored items (shm/fanout.h). */
    _Atomic uint64_t event_interest;
    struct shm_fanout_worker w[SHM_WORKERS_MAX];
};
static_assert(offsetof(struct shm_fanout, notifications) == SHM_CACHELINE,
              "broker counters on their own line");
static_assert(sizeof(struct shm_fanout) % SHM_CACHELINE == 0, "pad");

/* ------------------------------------------------ PKI (SHM_R_PKI)
 *
 * What the broker read from its PKI directory for the workers, who read no
 * files (shm/pki.c): our application certificate and private key (DER;
 * the segment is a memfd only the broker and its workers map), the offered
 * policy x mode bits, and the trust and issuer lists as DER blobs in two
 * halves.  `generation` is a sequence: odd while the broker fills the
 * half the next version selects, even once it is published; version
 * generation / 2 is in half (generation / 2) & 1.  A worker copies the
 * current half into its own memory and reads generation again: the copy
 * is torn only if the broker began writing that same half meanwhile
 * (generation >= 2 * version + 3).
 * Then one rejected-certificate mailbox per worker slot: W worker (a slot
 * whose `full` is 0), R broker (drains full slots once a second into
 * <pki_dir>/rejected/, then stores 0).  Empty (size 0) when the plan has
 * no pki_list_bytes.
 */
#define SHM_PKI_MAGIC       0x494B5055u     /* "UPKI" */
#define SHM_PKI_CERT_MAX    16384           /* our certificate, DER */
#define SHM_PKI_KEY_MAX     4096            /* our key, PKCS#1 DER */
#define SHM_PKI_BLOBS_MAX   1024            /* list entries per half */
#define SHM_PKI_MBOX_SLOTS  4               /* rejected certs per worker */
#define SHM_PKI_MBOX_DER    8192            /* bytes of one rejected cert */

#define SHM_PKI_F_DEPRECATED 0x01           /* Basic128Rsa15, Basic256 */
#define SHM_PKI_F_ANONYMOUS  0x02           /* anonymous users allowed */
#define SHM_PKI_F_ANON_WRITE 0x04           /* anonymous users may write */
#define SHM_PKI_F_X509_OPERATOR 0x08        /* X509 users: operator role */

enum shm_pki_kind {
    SHM_PKI_TRUSTED = 0,            /* trusted/certs */
    SHM_PKI_TRUSTED_CRL,            /* trusted/crl */
    SHM_PKI_ISSUER,                 /* issuers/certs */
    SHM_PKI_ISSUER_CRL,             /* issuers/crl */
    SHM_PKI_USER_TRUSTED            /* trusted_users/certs: X509 users */
};

struct shm_pki_blob {
    uint32_t kind;                  /* enum shm_pki_kind */
    uint32_t len;
    uint64_t off;                   /* from the half's data[] */
};

/* A user of the users file (broker/users.c): PBKDF2-HMAC-SHA256. */
#define SHM_USERS_MAX      256
#define SHM_USER_NAME_MAX  64              /* NUL included */
#define SHM_USER_SALT_MAX  64
#define SHM_USER_HASH_MAX  64

enum shm_user_role {
    SHM_ROLE_NONE = 0,
    SHM_ROLE_VIEWER,                /* reads only */
    SHM_ROLE_OPERATOR               /* may write */
};

struct shm_user {
    char     name[SHM_USER_NAME_MAX];
    uint32_t iterations;
    uint8_t  role;                  /* enum shm_user_role */
    uint8_t  salt_len;
    uint8_t  hash_len;
    uint8_t  pad;
    uint8_t  salt[SHM_USER_SALT_MAX];
    uint8_t  hash[SHM_USER_HASH_MAX];
};

/* One list half (trust lists and users of one generation); data[]
 * (list_bytes) follows. */
struct shm_pki_half {
    uint32_t            n;
    uint32_t            n_users;
    uint64_t            used;
    struct shm_pki_blob blobs[SHM_PKI_BLOBS_MAX];
    struct shm_user     users[SHM_USERS_MAX];
    alignas(8) uint8_t  data[];
};

struct shm_pki_mbox {
    _Atomic uint32_t full;          /* 1: der[0..len) waits for the broker */
    uint32_t         len;
    uint8_t          der[SHM_PKI_MBOX_DER];
};

struct shm_pki {
    uint32_t         magic;         /* SHM_PKI_MAGIC; W: broker */
    uint32_t         offers;        /* UA_SC_OFFER bits */
    uint32_t         flags;         /* SHM_PKI_F_* */
    uint32_t         workers;       /* mailboxes: workers * MBOX_SLOTS */
    uint32_t         cert_len;      /* 0: no certificate (None only) */
    uint32_t         key_len;
    uint64_t         list_bytes;    /* data[] bytes per half */
    uint64_t         half_off[2];   /* from this struct */
    uint64_t         mbox_off;      /* from this struct */
    _Atomic uint64_t generation;    /* sequence; see above */
    uint8_t          cert[SHM_PKI_CERT_MAX];
    uint8_t          key[SHM_PKI_KEY_MAX];
};

/* ------------------------------------------------ throttle (SHM_R_THROTTLE)
 *
 * Failures per client, shared by every worker (shm/throttle.c has the
 * protocol): a fixed open-addressing table of 16-byte entries, each a
 * 64-bit tag (a keyed hash of the key: an IP address, for OPN failures
 * or for failed logins, or a client's ApplicationUri; 0 = never used)
 * and a 64-bit state word changed only by CAS, so a worker killed at any
 * instruction leaves every entry whole:
 *
 *   tag    63                                          14 13          0
 *         +----------------------------------------------+------------+
 *         | the key's hash (bits 63..14)                 | generation |
 *         +----------------------------------------------+------------+
 *          generation: of the claim that wrote the tag; the entry is the
 *          key's only while the state has the same generation
 *
 *   state  63        50 49  48 47     40 39                            0
 *         +------------+------+---------+-------------------------------+
 *         | generation | kind |  fails  | t: monotonic ms (40 bits)     |
 *         +------------+------+---------+-------------------------------+
 *   kind   IDLE    nothing counted (t unused)
 *          COUNT   `fails` failures in the window that started at t
 *          BLOCKED blocked until t
 *          CLAIM   a worker is writing a new tag since t (a lease: past
 *                  SHM_THROTTLE_LEASE_MS anybody may claim it again)
 *
 * Then the server-wide accept limiter (GCRA: one theoretical arrival time
 * in µs, CAS) and one line of counters per worker slot (W: that worker;
 * R: broker).  W header: the creator, then the broker before any worker
 * starts (seed, stale_ms); read-only afterwards.
 */
#define SHM_THROTTLE_MAGIC       0x4C545448u    /* "HTTL" */
#define SHM_THROTTLE_PROBE       8u             /* entries a key may use */
#define SHM_THROTTLE_ENTRIES_MIN 64u
#define SHM_THROTTLE_ENTRIES_MAX (1u << 22)
#define SHM_THROTTLE_LEASE_MS    1000u          /* a CLAIM older: stale */

#define SHM_THR_T_BITS     40
#define SHM_THR_T_MASK     ((UINT64_C(1) << SHM_THR_T_BITS) - 1)
#define SHM_THR_FAILS_SHIFT 40
#define SHM_THR_FAILS_MAX  255u
#define SHM_THR_KIND_SHIFT 48
#define SHM_THR_GEN_SHIFT  50
#define SHM_THR_GEN_MASK   ((UINT64_C(1) << 14) - 1)
#define SHM_THR_TAG_GEN    SHM_THR_GEN_MASK    /* the tag word's low bits:
                                                * the generation of the
                                                * claim that wrote it */

enum shm_throttle_kind {
    SHM_THR_IDLE = 0,
    SHM_THR_COUNT,
    SHM_THR_BLOCKED,
    SHM_THR_CLAIM
};

/* The per-worker counters, summed by /stats. */
enum shm_throttle_counter {
    SHM_THR_C_OPN_FAILURES = 0, /* OPN security failures counted */
    SHM_THR_C_LOGIN_FAILURES,   /* failed logins counted */
    SHM_THR_C_BLOCKS,           /* blocks begun (a key reached its threshold) */
    SHM_THR_C_REFUSED_BLOCKED,  /* connections refused: their IP blocked */
    SHM_THR_C_LOGINS_BLOCKED,   /* logins refused: their client blocked */
    SHM_THR_C_REFUSED_RATE,     /* connections refused: accept rate */
    SHM_THR_C_TABLE_FULL,       /* failures not counted: every entry of
                                 * the key's neighbourhood blocked */
    SHM_THR_C_MAX
};

struct shm_throttle_entry {
    _Atomic uint64_t tag;       /* keyed hash of the key, its low bits
                                 * the generation of the claim that wrote
                                 * it (SHM_THR_TAG_GEN); 0: never used */
    _Atomic uint64_t state;     /* see above */
};
static_assert(sizeof(struct shm_throttle_entry) == 16, "entry size");

struct shm_throttle_worker {
    alignas(SHM_CACHELINE) _Atomic uint64_t c[SHM_THR_C_MAX];
};
static_assert(sizeof(struct shm_throttle_worker) == SHM_CACHELINE, "pad");

struct shm_throttle {
    alignas(SHM_CACHELINE) uint32_t magic;      /* SHM_THROTTLE_MAGIC */
    uint32_t nentries;                          /* a power of two */
    uint32_t mask;                              /* nentries - 1 */
    uint32_t pad;
    uint64_t seed[2];                           /* the tags' hash key */
    uint64_t stale_ms;                          /* the longest window */
    alignas(SHM_CACHELINE) _Atomic uint64_t accept_tat_us;
                                                /* W: every worker (CAS) */
    struct shm_throttle_worker w[SHM_WORKERS_MAX];
    /* struct shm_throttle_entry entries[nentries] follow, aligned */
};
static_assert(sizeof(struct shm_throttle) == (2 + SHM_WORKERS_MAX)
                                              * SHM_CACHELINE,
              "shm_throttle size");
static_assert(offsetof(struct shm_throttle, accept_tat_us) == SHM_CACHELINE,
              "the limiter on its own line");

/* ------------------------------------------------ parked sessions (SHM_R_PARK)
 *
 * Sessions outlive a worker killed at any instruction (docs/architecture.md
 * §11, worker/park.c, shm/park.c).  The broker creates the region; it
 * outlives every worker.
 *
 * Per worker slot: `records` entries (one per session pool index of the
 * slot's worker) and `data_bytes` bytes where the worker keeps each
 * activated session's blob (the format of worker/roam.c), written only by
 * the slot's live worker.  A record has two halves; the worker writes a
 * new blob into free bytes, fills the half `cur` does not name, then
 * stores `cur` (release).  A worker killed at any instruction leaves
 * `cur` naming a whole blob (the previous one).  Read only by the slot's
 * next worker (its predecessor is reaped by then): no reader races a
 * writer.
 *
 *   cur   0: no session; else bit 0: the half, bits 31..1: a version
 *
 * Beside the blob (the structure, rewritten when the session's structure
 * changes) a record holds the progress NotificationMessages make (the
 * subscriptions' sequence numbers and kept messages, the items' sent
 * watermarks, worker/park.c): two halves again, named by `pcur` the same
 * way, published the same way; inside it a journal whose length is
 * stored (release) after each entry.  A progress names the `cur` of the
 * blob it goes with; the successor applies it only to that blob.  The
 * kept messages it names are in the slot's data bytes too (their own,
 * taken once when sent; how the worker divides the bytes is its own).
 *
 * The change log: a ring of `clog_n` entries of 64 bytes that the broker
 * writes (the only writer) with each value change a worker watches (an
 * interest bit set, a dead worker's included), in the order of the
 * changes.  Entry i (i counted from 0 since the start) lies at i mod
 * clog_n; its `seq` is i + 1 once whole, 0 while written (a seqlock: a
 * reader copies, then checks seq again).  `cut[k]`: the log's head when
 * slot k's worker was started (before the fork): every change logged
 * from there on went to its notification ring too.
 */
#define SHM_PARK_MAGIC     0x4B524150u     /* "PARK" */
#define SHM_CLOG_MIN       1024u
#define SHM_CLOG_MAX       (1u << 24)
#define SHM_CLOG_REC       40u             /* a record's bytes in an entry */
#define SHM_CLOG_BIG       0xFFFFu         /* len: the record did not fit */

struct shm_clog_ent {
    _Atomic uint64_t seq;       /* index + 1 when whole, 0 while written */
    int64_t          srv_ts;    /* the change's ServerTimestamp */
    uint32_t         slot;      /* value slot */
    uint16_t         len;       /* rec's bytes, or SHM_CLOG_BIG */
    uint16_t         pad;
    uint8_t          rec[SHM_CLOG_REC];  /* the fan-out DataValue record */
};
static_assert(sizeof(struct shm_clog_ent) == 64, "log entry");

struct shm_park_rec {
    _Atomic uint32_t cur;       /* see above */
    _Atomic uint32_t pcur;      /* the progress: the same, for poff/plen */
    uint32_t         off[2];    /* into the slot's data */
    uint32_t         len[2];
    uint64_t         head[2];   /* the change log's head before the pack */
    uint32_t         poff[2];   /* the progress record's halves */
    uint32_t         plen[2];
};
static_assert(sizeof(struct shm_park_rec) == 56, "park record");

struct shm_park_slot {
    alignas(SHM_CACHELINE) _Atomic uint64_t cut;    /* W: broker */
    _Atomic uint32_t nparked;   /* W: the slot's worker: records in use */
    uint32_t         pad;
};
static_assert(sizeof(struct shm_park_slot) == SHM_CACHELINE, "park slot");

struct shm_park {
    alignas(SHM_CACHELINE) uint32_t magic;      /* SHM_PARK_MAGIC */
    uint32_t nslots;                            /* worker slots */
    uint32_t nrec;                              /* records per slot */
    uint32_t clog_n;                            /* a power of two */
    uint64_t data_bytes;                        /* per slot */
    uint64_t clog_off;                          /* from the region start */
    uint64_t slots_off;
    uint64_t slot_stride;                       /* records, then data */
    alignas(SHM_CACHELINE) _Atomic uint64_t clog_head;  /* W: broker */
    _Atomic uint64_t clog_big;                  /* W: broker */
    struct shm_park_slot s[SHM_WORKERS_MAX];
};
static_assert(sizeof(struct shm_park) == (2 + SHM_WORKERS_MAX)
                                          * SHM_CACHELINE,
              "shm_park size");

#endif /* SHM_LAYOUT_H */
