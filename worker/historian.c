/*
 * worker/historian.c: uahistorian, the history store's one writer
 * (issue 18; docs/architecture.md §1, §5.5).
 *
 *   uahistorian --slot N --segment-fd FD --dir PATH [--map-mb N]
 *               [--max-mb N] [--retention-s N] [--flush-ms N]
 *               [--batch N] [--sync 0|1]
 *
 * Started by uabroker only (broker/supervisor.c), in the worker slot after
 * the workers', and supervised like a worker (respawned with backoff,
 * exit 2 not respawned).  It is one more consumer of the notification
 * blocks: it sets its interest bit on the value slot of every historized
 * variable (SHM_NF_HISTORIZING: the NodeSets' Historizing="true" and
 * [history]'s, broker/addrspace.c) and the broker's fan-out hands it
 * those values exactly as it hands a worker the values of its monitored
 * items (worker/link.h); the broker's hot path gains nothing else.
 *
 * Each value is copied into a batch (the encoded DataValue as the broker
 * stored it: encode once); the batch goes to the store (hist/store.h) in
 * one write transaction every flush_ms, or sooner when it is full.  What
 * a commit has written survives any kill -9; what was still in the batch
 * is lost with the process (at most flush_ms of values).  A value the
 * broker could not deliver (an overflow) is read from its slot and kept
 * in its place; a record of a slot whose server timestamp is not newer
 * than the last one kept is that value again (the broker's server
 * timestamps of one slot strictly increase) and is dropped.  Once a
 * minute retention drops what is too old or over the size limit.
 *
 * HistoryUpdate (docs/design-notes.md D96): the workers' SHM_FO_HUPD
 * records come on our reply ring through the broker; each is applied in
 * its own write transactions after the batch so far is committed (an
 * insert finds the values that came before it), and answered with a
 * SHM_FO_HUPD_RESULT on our request ring, one StatusCode per value or
 * time.  What an update inserts, replaces or deletes is kept as a
 * modified value with the record's user name and our clock's time, in
 * the same transaction (hist/modified.h); annotations go to their own
 * side database (hist/annot.h), each DataValue decoded here to find its
 * Annotation's userName.  An answer that finds the outbox full is
 * dropped and counted (the worker gives up on it).
 *
 * Data collection (Part 11 §5.2.2, hist/collect.h): a variable whose
 * HistoricalDataConfiguration sets MinTimeInterval, MaxTimeInterval or
 * ExceptionDeviation (read once at the start, worker/histconf.h) has its
 * values passed through those rules before they join the batch (one
 * table lookup per value for the others); MaxTimeInterval's repeats are
 * made once a second.
 *
 * Events (worker/histev.c): with history.events the historian also sets
 * its event-interest bit and keeps every event the broker fans out, in
 * the same store, written with each batch of values.
 *
 * A full store (the map or the disk) stops history writing: one error
 * line, the batches dropped and counted, and a new try after each
 * pruning; never an exit (a respawn would not make room).  Retention
 * drops the modified values and annotations with their samples
 * (hs_side_prune after hs_store_prune).
 *
 * Single-threaded on one libevent loop; allocation at start-up only.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "hist/annot.h"
#include "hist/collect.h"
#include "hist/modified.h"
#include "hist/side.h"
#include "hist/store.h"
#include "histconf.h"
#include "histev.h"
#include "histside.h"
#include "link.h"
#include "loop.h"
#include "node.h"
#include "outbox.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "proto/version.h"
#include "shm/fanout.h"
#include "shm/layout.h"
#include "shm/log.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "shm/segment.h"
#include "shm/value.h"
#include "worker.h"

#define WK_HISTORIAN_EXIT_NO_RESPAWN 2
#define WK_HISTORIAN_BROKER_PID_ENV  "UABROKER_PID"
#define WK_HISTORIAN_SEC             10000000ll  /* DateTime ticks */
#define WK_HISTORIAN_PRUNE_S         60
#define WK_HISTORIAN_BUF_PER_VALUE   64          /* batch bytes per value */
#define WK_HISTORIAN_ONE_MAX         (1u << 20)  /* one value, at most */

struct wk_historian_args {
    long        slot, segfd;
    const char *dir;
    long        map_mb, max_mb, retention_s, flush_ms, batch, sync;
};

struct wk_historian {
    struct wk_worker  w;
    struct wk_loop    loop;
    struct wk_link    link;
    struct hs_store  *store;
    struct wk_histev *ev;           /* event history, NULL: off */
    uint64_t          ev_lost_seen; /* the link's events_lost_seen, as
                                       counted into ev */
    uint64_t         *keys;         /* per value slot: node key, 0: none */
    int64_t          *srv;          /* per value slot: the server time of
                                       the last value kept */
    uint32_t          nslots;
    uint32_t          nodes;        /* historized */
    /* The data collection rules (hist/collect.h) of the variables that
     * have some: coll[cidx[slot]] (cidx 0: none; coll[0] unused). */
    uint32_t         *cidx;
    struct hs_collect *coll;
    uint32_t         *cslot;        /* coll[i]'s value slot */
    uint32_t          ncoll;
    uint64_t          filtered;     /* values the rules did not store */
    /* The batch: values copied out of the blocks. */
    struct hs_in     *in;
    uint32_t          n, cap;
    uint8_t          *buf;
    size_t            used, buf_cap;
    uint8_t          *one;          /* a slot's value read back */
    uint8_t          *res;          /* a HistoryUpdate's answer */
    uint8_t          *abuf;         /* an annotation decoded (one value) */
    uint32_t          res_cap;
    uint64_t          updates, updates_lost;
    struct event      flush_ev;
    struct event      sigterm, sigint;
    uint32_t          prune_in;     /* seconds to the next pruning */
    uint32_t          flush_ms;
    uint64_t          next_flush_ms;    /* monotonic: the flush timer */
    bool              full;
    uint64_t          stored, dropped, overflows, duplicates;
    uint64_t          first_ms;     /* monotonic: the batch's first value */
    uint64_t          block_ms;     /* when the broker applied the values
                                       being drained (0: now) */
};

static int wk_historian_num(const char *s, long max, long *out);
static int wk_historian_args(int argc, char **argv,
                             struct wk_historian_args *a);
static int wk_historian_parent(void);
static int wk_historian_attach(struct wk_worker *w, int segfd);
static int wk_historian_open(struct wk_historian *h,
                             const struct wk_historian_args *a);
static int wk_historian_nodes(struct wk_historian *h);
static void wk_historian_add(struct wk_historian *h, uint64_t key,
                             const uint8_t *dv, uint32_t len);
static uint32_t wk_historian_read(struct wk_historian *h, uint32_t slot,
                                  int64_t stamp);
static void wk_historian_current(struct wk_historian *h, uint32_t slot);
static void wk_historian_keep(struct wk_historian *h, uint32_t slot,
                              const uint8_t *dv, uint32_t len);
static void wk_historian_flush(struct wk_historian *h);
static int wk_historian_rules(struct wk_historian *h, const uint32_t *node,
                              uint32_t n);
static void wk_historian_repeat(struct wk_historian *h, uint32_t i);
static void wk_historian_on_value(void *arg, uint32_t slot, const uint8_t *dv,
                                  uint32_t len);
static void wk_historian_on_overflow(void *arg, uint32_t slot);
static void wk_historian_on_flush(evutil_socket_t fd, short what, void *arg);
static void wk_historian_on_event(void *arg, const uint8_t *rec,
                                  uint32_t len);
static void wk_historian_on_events_lost(void *arg);
static uint64_t wk_historian_wake_by(void *arg);
static void wk_historian_on_time(void *arg, uint64_t ms);
static void wk_historian_second(void *arg);
static void wk_historian_publish(struct wk_historian *h, bool oldest);
static int wk_historian_oldest(void *arg, uint64_t key,
                               const struct hs_node *nd,
                               const uint8_t *nodeid, size_t len);
static void wk_historian_on_signal(evutil_socket_t fd, short what, void *arg);
static void wk_historian_on_update(void *arg, const uint8_t *rec,
                                   uint32_t len);
static ua_status wk_historian_status(int rc);
static ua_status wk_historian_annot(struct wk_historian *h, uint64_t key,
                                    int op, const uint8_t *dv, uint32_t len);

/* A decimal number in [0, max]: 0, or -1. */
static int
wk_historian_num(const char *s, long max, long *out)
{
    char *end;
    long  v;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* The options, each once; --slot, --segment-fd and --dir required. */
static int
wk_historian_args(int argc, char **argv, struct wk_historian_args *a)
{
    static const struct {
        const char *name;
        size_t      off;
        long        max;
    } opts[] = {
        { "--slot", offsetof(struct wk_historian_args, slot),
          SHM_WORKERS_MAX - 1 },
        { "--segment-fd", offsetof(struct wk_historian_args, segfd), INT_MAX },
        { "--map-mb", offsetof(struct wk_historian_args, map_mb), 4194304 },
        { "--max-mb", offsetof(struct wk_historian_args, max_mb), 1048576 },
        { "--retention-s", offsetof(struct wk_historian_args, retention_s),
          UINT32_MAX },
        { "--flush-ms", offsetof(struct wk_historian_args, flush_ms), 60000 },
        { "--batch", offsetof(struct wk_historian_args, batch), 4194304 },
        { "--sync", offsetof(struct wk_historian_args, sync), 1 },
    };
    unsigned seen = 0;

    memset(a, 0, sizeof(*a));
    a->slot = a->segfd = -1;
    a->map_mb = 4096;
    a->max_mb = 1024;
    a->retention_s = 604800;
    a->flush_ms = 100;
    a->batch = 65536;
    a->sync = 1;
    if (argc % 2 != 1)
        return -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        size_t k;

        if (strcmp(argv[i], "--dir") == 0) {
            if (a->dir != NULL || argv[i + 1][0] == '\0')
                return -1;
            a->dir = argv[i + 1];
            continue;
        }
        for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
            if (strcmp(argv[i], opts[k].name) == 0)
                break;
        if (k == sizeof(opts) / sizeof(opts[0]) || (seen & (1u << k))
            || wk_historian_num(argv[i + 1], opts[k].max,
                                (long *)((char *)a + opts[k].off)) != 0)
            return -1;
        seen |= 1u << k;
    }
    if (a->slot < 0 || a->segfd < 0 || a->dir == NULL || a->batch < 16
        || a->flush_ms < 1)
        return -1;
    return 0;
}

/* Die with the broker, and make sure it has not died already. */
static int
wk_historian_parent(void)
{
    const char *env = getenv(WK_HISTORIAN_BROKER_PID_ENV);
    long        want;

    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1) {
        shm_log(SHM_LOG_ERROR, "prctl(PR_SET_PDEATHSIG) failed: %s",
                strerror(errno));
        return -1;
    }
    if (env != NULL && wk_historian_num(env, INT_MAX, &want) == 0) {
        if (getppid() != (pid_t)want) {
            shm_log(SHM_LOG_ERROR, "parent %d is not the broker %ld",
                    (int)getppid(), want);
            return -1;
        }
    } else if (getppid() == 1) {
        shm_log(SHM_LOG_ERROR, "the broker is gone");
        return -1;
    }
    return 0;
}

/* Attach the segment: the node store, the values, the snapshot, our row.
 * The broker built the address space before it forked us. */
static int
wk_historian_attach(struct wk_worker *w, int segfd)
{
    int rc;

    rc = shm_plan_attach(&w->seg, segfd, 1);
    if (rc != 0) {
        shm_log(SHM_LOG_ERROR, "shared memory (fd %d): %s", segfd,
                rc == -EPROTO ? "unknown segment layout" : strerror(-rc));
        return -1;
    }
    if (shm_nodestore_open(&w->ns, &w->seg) != 0
        || shm_values_open(&w->vals, &w->seg) != 0) {
        shm_log(SHM_LOG_ERROR, "shared memory: bad node store");
        return -1;
    }
    w->conf = shm_segment_region(&w->seg, SHM_R_CONFIG);
    w->row = (struct shm_worker *)shm_segment_region(&w->seg, SHM_R_WORKERS)
             + w->slot;
    if (w->slot != w->conf->workers) {
        shm_log(SHM_LOG_ERROR, "slot %u is not the historian's (%u)",
                w->slot, w->conf->workers);
        return -1;
    }
    return 0;
}

/* The store (its directory made when missing) and the batch. */
static int
wk_historian_open(struct wk_historian *h, const struct wk_historian_args *a)
{
    struct hs_store_config c = {
        .dir = a->dir,
        .map_bytes = (uint64_t)a->map_mb << 20,
        .max_bytes = (uint64_t)a->max_mb << 20,
        .retention = (int64_t)a->retention_s * WK_HISTORIAN_SEC,
        .batch_max = (uint32_t)a->batch,
        .nosync = a->sync == 0,
    };
    char err[256];

    if (mkdir(a->dir, 0750) == -1 && errno != EEXIST) {
        shm_log(SHM_LOG_ERROR, "mkdir(%s) failed: %s", a->dir,
                strerror(errno));
        return -1;
    }
    h->store = hs_store_open(&c, err, sizeof(err));
    if (h->store == NULL) {
        shm_log(SHM_LOG_ERROR, "history store: %s", err);
        return -1;
    }
    h->cap = (uint32_t)a->batch;
    h->buf_cap = (size_t)h->cap * WK_HISTORIAN_BUF_PER_VALUE;
    if (h->buf_cap < 2 * WK_HISTORIAN_ONE_MAX)
        h->buf_cap = 2 * WK_HISTORIAN_ONE_MAX;
    h->in = calloc(h->cap, sizeof(*h->in));
    h->buf = malloc(h->buf_cap);
    h->one = malloc(WK_HISTORIAN_ONE_MAX);
    h->abuf = malloc(2 * WK_HISTORIAN_ONE_MAX);
    h->nslots = h->w.vals.nslots;
    h->keys = calloc(h->nslots ? h->nslots : 1, sizeof(*h->keys));
    h->srv = calloc(h->nslots ? h->nslots : 1, sizeof(*h->srv));
    if (h->in == NULL || h->buf == NULL || h->one == NULL || h->abuf == NULL
        || h->keys == NULL || h->srv == NULL) {
        shm_log(SHM_LOG_ERROR, "historian: out of memory");
        return -1;
    }
    return 0;
}

/*
 * Every historized variable registered with the store, its interest bit
 * set, then its current value taken (after the bit: no change is lost
 * between the two, docs/architecture.md §2).
 */
static int
wk_historian_nodes(struct wk_historian *h)
{
    struct wk_worker *w = &h->w;
    uint32_t          n = 0, k = 0;
    size_t            used = 0, cap = 0;
    uint8_t          *ids = NULL;
    const uint8_t   **idp = NULL;
    size_t           *lens = NULL, *off = NULL;
    uint32_t         *node = NULL;
    uint64_t         *keys = NULL;
    int               rc = -1;

    /* Every historized variable's encoded NodeId, registered in one
     * transaction (one commit, not one per node: a start with thousands
     * of them). */
    for (uint32_t i = 0; i < w->ns.nnodes; i++) {
        const struct shm_node *nd = shm_nodestore_node(&w->ns, i);

        if (nd->node_class == SHM_NC_VARIABLE
            && (nd->flags & SHM_NF_HISTORIZING)
            && nd->u.var.slot < h->nslots)
            n++;
    }
    if (n == 0)
        return 0;
    cap = (size_t)n * 64;
    ids = malloc(cap);
    idp = malloc((size_t)n * sizeof(*idp));
    lens = malloc((size_t)n * sizeof(*lens));
    off = malloc((size_t)n * sizeof(*off));
    node = malloc((size_t)n * sizeof(*node));
    keys = malloc((size_t)n * sizeof(*keys));
    if (ids == NULL || idp == NULL || lens == NULL || off == NULL
        || node == NULL || keys == NULL) {
        shm_log(SHM_LOG_ERROR, "history: out of memory");
        goto out;
    }
    for (uint32_t i = 0; i < w->ns.nnodes && k < n; i++) {
        const struct shm_node *nd = shm_nodestore_node(&w->ns, i);
        struct ua_nodeid       id;
        size_t                 len;

        if (nd->node_class != SHM_NC_VARIABLE
            || !(nd->flags & SHM_NF_HISTORIZING)
            || nd->u.var.slot >= h->nslots)
            continue;
        wk_node_id(w, i, &id);
        if (cap - used < 4200) {
            uint8_t *p = realloc(ids, 2 * cap + 4200);

            if (p == NULL) {
                shm_log(SHM_LOG_ERROR, "history: out of memory");
                goto out;
            }
            ids = p;
            cap = 2 * cap + 4200;
        }
        if (ua_encode(&id, &ua_types[UA_TYPE_NODEID], ids + used, 4200,
                      &len) != UA_GOOD)
            continue;
        lens[k] = len;
        node[k] = i;
        off[k] = used;      /* ids may move while it grows */
        used += len;
        k++;
    }
    for (uint32_t j = 0; j < k; j++)
        idp[j] = ids + off[j];
    if (hs_store_nodes_add(h->store, idp, lens, k, 0, keys) != 0) {
        shm_log(SHM_LOG_ERROR, "history store: %s",
                hs_store_error(h->store));
        goto out;
    }
    for (uint32_t j = 0; j < k; j++) {
        uint32_t slot = shm_nodestore_node(&w->ns, node[j])->u.var.slot;

        if (keys[j] == 0) {
            shm_log(SHM_LOG_WARNING, "node %u: its history key is another "
                    "node's; not historized", node[j]);
            continue;
        }
        h->keys[slot] = keys[j];
    }
    /* The rules before the first value, the interest before the current
     * value. */
    if (wk_historian_rules(h, node, k) != 0) {
        shm_log(SHM_LOG_ERROR, "history: out of memory");
        goto out;
    }
    for (uint32_t j = 0; j < k; j++) {
        uint32_t slot = shm_nodestore_node(&w->ns, node[j])->u.var.slot;

        if (keys[j] == 0)
            continue;
        shm_interest_set(&w->vals, slot, w->slot);
        wk_historian_current(h, slot);
        h->nodes++;
    }
    if (h->ncoll > 1)
        shm_log(SHM_LOG_INFO, "history: %u variables with data collection "
                "rules (MinTimeInterval, MaxTimeInterval, "
                "ExceptionDeviation)", h->ncoll - 1);
    rc = 0;
out:
    free(ids);
    free(idp);
    free(lens);
    free(off);
    free(node);
    free(keys);
    return rc;
}

/* One value into the batch (the batch written first when full). */
static void
wk_historian_add(struct wk_historian *h, uint64_t key, const uint8_t *dv,
                 uint32_t len)
{
    if (len > WK_HISTORIAN_ONE_MAX) {
        h->dropped++;
        return;
    }
    if (h->n == h->cap || h->used + len > h->buf_cap)
        wk_historian_flush(h);
    if (h->n == 0)
        h->first_ms = h->block_ms != 0 ? h->block_ms : h->w.now_ms;
    memcpy(h->buf + h->used, dv, len);
    h->in[h->n].key = key;
    h->in[h->n].dv = h->buf + h->used;
    h->in[h->n].len = len;
    h->used += len;
    h->n++;
}

/* hs_store_nodes(): the oldest first time of the nodes with values. */
static int
wk_historian_oldest(void *arg, uint64_t key, const struct hs_node *nd,
                    const uint8_t *nodeid, size_t len)
{
    int64_t *o = arg;

    (void)key;
    (void)nodeid;
    (void)len;
    if (nd->samples > 0 && (*o == 0 || nd->first < *o))
        *o = nd->first;
    return 0;
}

/*
 * Slot's value as it is now, as an encoded DataValue in h->one: its
 * length, 0 when there is none.  stamp != 0: both timestamps that time
 * (MaxTimeInterval's repeat), else the slot's own.
 */
static uint32_t
wk_historian_read(struct wk_historian *h, uint32_t slot, int64_t stamp)
{
    struct shm_value v;
    uint8_t         *p = h->one + 1;
    size_t           room = WK_HISTORIAN_ONE_MAX - 1 - 4 - 2 * (8 + 2);

    if (shm_value_read(&h->w.vals, slot, &v, p, room) != 0 || v.len == 0)
        return 0;
    if (stamp != 0) {
        v.flags |= SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
        v.source_ts = v.server_ts = stamp;
        v.source_ps = v.server_ps = 0;
    }
    h->one[0] = UA_DV_VALUE;
    p += v.len;
    if (v.status != 0) {
        h->one[0] |= UA_DV_STATUS;
        memcpy(p, &v.status, 4);
        p += 4;
    }
    if (v.flags & SHM_VF_SOURCE_TS) {
        h->one[0] |= UA_DV_SOURCE_TS;
        memcpy(p, &v.source_ts, 8);
        p += 8;
        if (v.source_ps) {
            h->one[0] |= UA_DV_SOURCE_PS;
            memcpy(p, &v.source_ps, 2);
            p += 2;
        }
    }
    if (v.flags & SHM_VF_SERVER_TS) {
        h->one[0] |= UA_DV_SERVER_TS;
        memcpy(p, &v.server_ts, 8);
        p += 8;
        if (v.server_ps) {
            h->one[0] |= UA_DV_SERVER_PS;
            memcpy(p, &v.server_ps, 2);
            p += 2;
        }
    }
    return (uint32_t)(p - h->one);
}

/* Slot's value as it is now into the batch. */
static void
wk_historian_current(struct wk_historian *h, uint32_t slot)
{
    uint32_t len = wk_historian_read(h, slot, 0);

    if (len != 0)
        wk_historian_keep(h, slot, h->one, len);
}

/*
 * MaxTimeInterval (Part 11 §5.2.2): nothing stored for coll[i]'s
 * variable for that long; its value now (the last one stored, or one the
 * rules held back as too close to it) stored again, stamped with our
 * clock.  Not through wk_historian_keep(): the server time of the last
 * change received stays what it was (a change stamped before our clock
 * still arriving is not a duplicate).
 */
static void
wk_historian_repeat(struct wk_historian *h, uint32_t i)
{
    uint32_t         slot = h->cslot[i];
    uint32_t         len = wk_historian_read(h, slot, h->w.now_dt);
    struct hs_sample smp;

    if (len == 0 || hs_sample_split(h->one, len, &smp) != 0)
        return;
    hs_collect_stored(&h->coll[i], &smp);
    wk_historian_add(h, h->keys[slot], h->one, len);
}

/*
 * The data collection rules of the n historized variables node[] (their
 * value slots' keys set): a table entry for each that has some.  0, or
 * -1 (out of memory).
 */
static int
wk_historian_rules(struct wk_historian *h, const uint32_t *node, uint32_t n)
{
    struct hs_collect c;
    uint32_t          k = 0;

    for (uint32_t j = 0; j < n; j++)
        if (wk_histconf_collect(&h->w, node[j], &c))
            k++;
    if (k == 0)
        return 0;
    h->cidx = calloc(h->nslots, sizeof(*h->cidx));
    h->coll = calloc((size_t)k + 1, sizeof(*h->coll));
    h->cslot = calloc((size_t)k + 1, sizeof(*h->cslot));
    if (h->cidx == NULL || h->coll == NULL || h->cslot == NULL)
        return -1;
    h->ncoll = 1;
    for (uint32_t j = 0; j < n && h->ncoll <= k; j++) {
        uint32_t slot = shm_nodestore_node(&h->w.ns, node[j])->u.var.slot;

        if (h->keys[slot] == 0 || !wk_histconf_collect(&h->w, node[j], &c))
            continue;
        h->coll[h->ncoll] = c;
        h->cslot[h->ncoll] = slot;
        h->cidx[slot] = h->ncoll++;
    }
    return 0;
}

/*
 * A value of slot into the batch unless it is not newer than the last
 * one kept: the server timestamps of one slot strictly increase
 * (worker/link.h), so such a record is one we have already, the slot's
 * value read at an overflow or at the start arriving again in a block;
 * or unless the variable's data collection rules drop it (counted).
 */
static void
wk_historian_keep(struct wk_historian *h, uint32_t slot, const uint8_t *dv,
                  uint32_t len)
{
    struct hs_sample smp;

    uint32_t         ci = h->cidx != NULL ? h->cidx[slot] : 0;

    if (hs_sample_split(dv, len, &smp) == 0) {
        if (smp.has_srv) {
            if (smp.srv <= h->srv[slot]) {
                h->duplicates++;
                return;
            }
            h->srv[slot] = smp.srv;
        }
        /* The variable's data collection rules, if it has any. */
        if (ci != 0 && !hs_collect_keep(&h->coll[ci], &smp)) {
            h->filtered++;
            return;
        }
    }
    wk_historian_add(h, h->keys[slot], dv, len);
}

/* The batch into the store, one transaction. */
static void
wk_historian_flush(struct wk_historian *h)
{
    int rc;

    if (wk_histev_flush(h->ev) && h->n == 0)
        wk_historian_publish(h, false);
    if (h->n == 0)
        return;
    if (h->full) {
        h->dropped += h->n;
    } else if ((rc = hs_store_append(h->store, h->in, h->n)) == 0) {
        struct shm_worker *r = h->w.row;

        h->stored += h->n;
        atomic_store_explicit(&r->hist_commits,
                              atomic_load_explicit(&r->hist_commits,
                                                   memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store_explicit(&r->hist_lag_ms,
                              h->w.now_ms > h->first_ms
                                  ? h->w.now_ms - h->first_ms : 0,
                              memory_order_relaxed);
    } else {
        h->dropped += h->n;
        if (rc == -ENOSPC) {
            h->full = true;
            shm_log(SHM_LOG_ERROR, "history store full (%s): history "
                    "writing stopped until retention makes room "
                    "(history.max_mb, history.map_mb, the disk)",
                    hs_store_error(h->store));
        } else {
            shm_log(SHM_LOG_ERROR, "history store: %s; %u values dropped",
                    hs_store_error(h->store), h->n);
        }
    }
    h->n = 0;
    h->used = 0;
    wk_historian_publish(h, false);
}

/* A store error as a HistoryUpdate's StatusCode. */
static ua_status
wk_historian_status(int rc)
{
    switch (rc) {
    case -EINVAL:
        return UA_BAD_INVALID_TIMESTAMP;    /* no source timestamp */
    case -ENOENT:
        return UA_BAD_HISTORY_OPERATION_UNSUPPORTED;
    case -ENOSPC:
        return UA_BAD_RESOURCE_UNAVAILABLE;
    default:
        return UA_BAD_INTERNAL_ERROR;
    }
}

/*
 * One HistoryUpdateDetails from a worker (SHM_FO_HUPD, through the
 * broker): applied to the store, answered with a StatusCode per item.
 */
static void
wk_historian_on_update(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_historian      *h = arg;
    struct shm_fo_hupd        u;
    struct shm_fo_hupd_result res;
    struct hs_mod_who         who;
    const uint8_t            *p = rec + sizeof(u), *end = rec + len;
    uint32_t                  k, st;
    uint64_t                  n;
    int                       rc;
    bool                      values;

    if (len < sizeof(u))
        return;
    memcpy(&u, rec, sizeof(u));
    if ((uint64_t)u.count * 4 > h->res_cap - sizeof(res))
        u.count = 0;                    /* not a record we sent */
    /* Who asked: the user name after the header. */
    who.time = h->w.now_dt;
    who.user = (const char *)p;
    who.user_len = u.user_len;
    p += ((size_t)u.user_len + SHM_FO_WOP_ALIGN - 1)
         & ~(size_t)(SHM_FO_WOP_ALIGN - 1);
    if (p > end) {
        p = end;
        who.user_len = 0;
    }
    memset(&res, 0, sizeof(res));
    res.hdr.kind = SHM_FO_HUPD_RESULT;
    res.id = u.id;
    res.op = u.op;
    res.worker = u.worker;
    res.gen = u.gen;
    res.status = UA_GOOD;
    res.count = u.count;
    /* What came before the update is in the store first. */
    wk_historian_flush(h);
    h->updates++;
    values = (u.what >= SHM_FO_HUPD_INSERT && u.what <= SHM_FO_HUPD_UPDATE)
             || u.what == SHM_FO_HUPD_ANNOT;
    for (k = 0; k < u.count; k++) {
        enum hs_outcome out;
        uint32_t        dl;

        st = UA_BAD_INTERNAL_ERROR;
        if (values && end - p >= 4) {
            memcpy(&dl, p, 4);
            if (dl <= (uint64_t)(end - p) - 4) {
                if (u.what == SHM_FO_HUPD_ANNOT) {
                    st = wk_historian_annot(h, u.key, u.annot_op, p + 4,
                                            dl);
                } else {
                    rc = hs_modified_update(h->store, u.key,
                                            (enum hs_upd)u.what, p + 4, dl,
                                            &who, &out);
                    st = rc != 0 ? wk_historian_status(rc)
                         : out == HS_INSERTED ? UA_GOOD_ENTRY_INSERTED
                         : out == HS_REPLACED ? UA_GOOD_ENTRY_REPLACED
                         : out == HS_EXISTS ? UA_BAD_ENTRY_EXISTS
                                            : UA_BAD_NO_ENTRY_EXISTS;
                }
                p += (4 + (uint64_t)dl + SHM_FO_WOP_ALIGN - 1)
                     & ~(uint64_t)(SHM_FO_WOP_ALIGN - 1);
            } else {
                p = end;
            }
        } else if (u.what == SHM_FO_HUPD_DELETE_AT && end - p >= 8) {
            int64_t t;

            memcpy(&t, p, 8);
            p += 8;
            rc = hs_modified_delete_at(h->store, u.key, t, &who, &n);
            st = rc != 0 ? wk_historian_status(rc)
                 : n == 0 ? UA_BAD_NO_ENTRY_EXISTS : UA_GOOD;
        }
        if (p > end)
            p = end;
        memcpy(h->res + sizeof(res) + (size_t)k * 4, &st, 4);
    }
    if (u.what == SHM_FO_HUPD_DELETE_RAW || u.what == SHM_FO_HUPD_FORGET) {
        rc = u.what == SHM_FO_HUPD_FORGET
                 ? hs_modified_forget(h->store, u.key, u.lo, u.hi, &n)
                 : hs_modified_delete_range(h->store, u.key, u.lo, u.hi,
                                            &who, &n);
        res.status = rc != 0 ? wk_historian_status(rc)
                     : n == 0 ? UA_GOOD_NO_DATA : UA_GOOD;
    } else if (u.what < SHM_FO_HUPD_INSERT || u.what > SHM_FO_HUPD_ANNOT) {
        res.status = UA_BAD_HISTORY_OPERATION_INVALID;
    }
    memcpy(h->res, &res, sizeof(res));
    if (wk_outbox_rec(&h->link.out, h->res,
                      (uint32_t)(sizeof(res) + (size_t)u.count * 4)) != 0) {
        h->updates_lost++;
        shm_log(SHM_LOG_WARNING, "history update answer for worker %u "
                "lost (request ring full)", u.worker);
        return;
    }
    wk_link_push(&h->link);
    wk_historian_publish(h, false);
}

/*
 * One annotation (UpdateStructureDataDetails, Part 11 §6.9.3) of node
 * key: dv decoded to find the Annotation and its userName (what makes it
 * unique with the SourceTimestamp, hist/annot.h), then op applied.  The
 * value's StatusCode.
 */
static ua_status
wk_historian_annot(struct wk_historian *h, uint64_t key, int op,
                   const uint8_t *dv, uint32_t len)
{
    struct ua_arena            a;
    struct ua_datavalue        d;
    const struct ua_annotation *an;
    const struct ua_extobj    *eo;
    enum hs_outcome            out;
    int                        rc;

    ua_arena_init(&a, h->abuf, 2 * WK_HISTORIAN_ONE_MAX);
    if (ua_decode(dv, len, NULL, &d, &ua_types[UA_TYPE_DATAVALUE], &a,
                  &ua_limits_default) != UA_GOOD)
        return UA_BAD_DECODING_ERROR;
    eo = d.value.data;
    if (!(d.mask & UA_DV_VALUE) || d.value.type != UA_BT_EXTENSIONOBJECT
        || d.value.is_array || eo == NULL || eo->encoding != UA_EO_DECODED
        || eo->type != &ua_types[UA_TYPE_ANNOTATION] || eo->obj == NULL)
        return UA_BAD_TYPE_MISMATCH;
    if (!(d.mask & UA_DV_SOURCE_TS) || d.source_ts <= 0)
        return UA_BAD_INVALID_TIMESTAMP;
    an = eo->obj;
    if (an->user_name.len > (int32_t)HS_ANNOT_USER_MAX)
        return UA_BAD_OUT_OF_RANGE;
    rc = hs_annot_update(h->store, key, op, dv, len, an->user_name.data,
                         an->user_name.len > 0 ? (size_t)an->user_name.len
                                               : 0, &out);
    if (rc != 0)
        return wk_historian_status(rc);
    switch (out) {
    case HS_INSERTED:
        return UA_GOOD_ENTRY_INSERTED;
    case HS_REPLACED:
        return op == HS_ANNOT_REMOVE ? UA_GOOD : UA_GOOD_ENTRY_REPLACED;
    case HS_EXISTS:
        return UA_BAD_ENTRY_EXISTS;
    default:
        return UA_BAD_NO_ENTRY_EXISTS;
    }
}

/* Our counters and the store's totals into our row, for /stats and
 * /metrics (broker/stats.c); oldest: walk the nodes for the oldest value
 * too (after pruning, once a minute). */
static void
wk_historian_publish(struct wk_historian *h, bool oldest)
{
    struct shm_worker *r = h->w.row;
    struct hs_totals   t;

#define WK_HISTORIAN_SET(f, v) \
    atomic_store_explicit(&r->f, v, memory_order_relaxed)
    WK_HISTORIAN_SET(hist_stored, h->stored);
    WK_HISTORIAN_SET(hist_dropped, h->dropped);
    WK_HISTORIAN_SET(hist_full, h->full ? 1u : 0u);
    WK_HISTORIAN_SET(hist_nodes, h->nodes);
    WK_HISTORIAN_SET(overflows, h->overflows);
    if (hs_store_totals(h->store, &t) == 0) {
        WK_HISTORIAN_SET(hist_values, t.samples);
        WK_HISTORIAN_SET(hist_bytes, t.bytes);
        WK_HISTORIAN_SET(hist_retention_dropped, t.dropped);
    }
    wk_histside_publish(h->store, r);
    if (oldest) {
        int64_t o = 0;

        WK_HISTORIAN_SET(hist_file_bytes, hs_store_file_bytes(h->store));
        (void)hs_store_nodes(h->store, wk_historian_oldest, &o);
        WK_HISTORIAN_SET(hist_oldest, o);
    }
    if (h->ev != NULL)
        wk_histev_publish(h->ev, r);
#undef WK_HISTORIAN_SET
}

static void
wk_historian_on_value(void *arg, uint32_t slot, const uint8_t *dv, uint32_t len)
{
    struct wk_historian *h = arg;

    if (slot < h->nslots && h->keys[slot] != 0)
        wk_historian_keep(h, slot, dv, len);
}

/* Changes of slot never reached us: its value now, in its place. */
static void
wk_historian_on_overflow(void *arg, uint32_t slot)
{
    struct wk_historian *h = arg;

    if (slot >= h->nslots || h->keys[slot] == 0)
        return;
    h->overflows++;
    wk_historian_current(h, slot);
}

/* An event (worker/histev.c keeps it when history keeps events). */
static void
wk_historian_on_event(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_historian *h = arg;

    if (h->ev != NULL)
        wk_histev_on_event(h->ev, rec, len);
}

static void
wk_historian_on_events_lost(void *arg)
{
    struct wk_historian *h = arg;

    /* The link moved events_lost_seen to the shared count: the events
     * missed since the last call (the broker counts each one). */
    if (h->ev != NULL)
        wk_histev_on_lost(h->ev, h->link.events_lost_seen - h->ev_lost_seen);
    h->ev_lost_seen = h->link.events_lost_seen;
}

static void
wk_historian_on_flush(evutil_socket_t fd, short what, void *arg)
{
    struct wk_historian *h = arg;

    (void)fd;
    (void)what;
    wk_historian_flush(h);
    h->next_flush_ms = h->w.now_ms + h->flush_ms;
}

/* The time the broker applied the values that follow (worker/link.h). */
static void
wk_historian_on_time(void *arg, uint64_t ms)
{
    struct wk_historian *h = arg;

    h->block_ms = ms;
}

/* We wake for the flush timer anyway: the broker need not ring before
 * it (worker/link.h wake_by), one bell per flush at most. */
static uint64_t
wk_historian_wake_by(void *arg)
{
    struct wk_historian *h = arg;

    return h->next_flush_ms > h->w.now_ms ? h->next_flush_ms : 0;
}

/* Once a second: the heartbeat and MaxTimeInterval's repeats; once a
 * minute: retention. */
static void
wk_historian_second(void *arg)
{
    struct wk_historian *h = arg;
    uint64_t        n;
    int             rc;

    atomic_store_explicit(&h->w.row->heartbeat, h->w.now_dt,
                          memory_order_relaxed);
    for (uint32_t i = 1; i < h->ncoll; i++)
        if (hs_collect_due(&h->coll[i], h->w.now_dt))
            wk_historian_repeat(h, i);
    if (h->prune_in-- > 0)
        return;
    h->prune_in = WK_HISTORIAN_PRUNE_S;
    wk_historian_flush(h);
    rc = hs_store_prune(h->store, h->w.now_dt, &n);
    if (rc != 0) {
        shm_log(SHM_LOG_ERROR, "history retention: %s",
                hs_store_error(h->store));
        return;
    }
    if (n > 0)
        shm_log(SHM_LOG_INFO, "history retention dropped %llu values",
                (unsigned long long)n);
    /* The modified values and annotations that went with them. */
    if (hs_side_prune(h->store, h->w.now_dt, &n) != 0)
        shm_log(SHM_LOG_ERROR, "history retention: %s",
                hs_store_error(h->store));
    if (h->ev != NULL)
        wk_histev_prune(h->ev, h->w.now_dt);
    if (h->full) {
        h->full = false;
        hs_store_full_clear(h->store);
        shm_log(SHM_LOG_NOTICE, "history writing resumed");
    }
    wk_historian_publish(h, true);
}

static void
wk_historian_on_signal(evutil_socket_t fd, short what, void *arg)
{
    struct wk_historian *h = arg;

    (void)what;
    if (h->w.stopping)
        return;
    h->w.stopping = 1;
    shm_log(SHM_LOG_NOTICE, "signal %d, stopping", (int)fd);
    event_base_loopbreak(h->w.base);
}

int
main(int argc, char **argv)
{
    static struct wk_historian h;
    struct wk_worker     *w = &h.w;
    struct wk_historian_args   a;
    struct sigaction      sa;
    struct timeval        tv;
    char                  ident[SHM_LOG_IDENT_MAX];
    int                   rc, exit_code = WK_HISTORIAN_EXIT_NO_RESPAWN;

    shm_log_open("uahistorian", 2);
    if (wk_historian_args(argc, argv, &a) != 0) {
        shm_log(SHM_LOG_ERROR, "usage: uahistorian --slot N --segment-fd FD "
                "--dir PATH [--map-mb N] [--max-mb N] [--retention-s N] "
                "[--flush-ms N] [--batch N] [--sync 0|1]");
        shm_log(SHM_LOG_ERROR, "uahistorian (%s %s) is started by uabroker "
                "only", UA_PRODUCT_NAME, UA_VERSION);
        return WK_HISTORIAN_EXIT_NO_RESPAWN;
    }
    w->slot = (unsigned)a.slot;
    w->seg.fd = -1;
    snprintf(ident, sizeof(ident), "uahistorian %u", w->slot);
    shm_log_open(ident, 2);
    if (wk_historian_parent() != 0)
        return WK_HISTORIAN_EXIT_NO_RESPAWN;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    if (wk_historian_attach(w, (int)a.segfd) != 0)
        goto out;
    shm_log_level_at(&w->conf->log_level);
    wk_clock_update(w);
    if (wk_historian_open(&h, &a) != 0)
        goto out_seg;
    w->base = event_base_new();
    if (w->base == NULL) {
        shm_log(SHM_LOG_ERROR, "event_base_new() failed");
        goto out_seg;
    }
    rc = wk_loop_init(&h.loop, w);
    if (rc == 0)
        rc = wk_loop_on_second(&h.loop, wk_historian_second, &h);
    if (rc == 0)
        rc = wk_link_init(&h.link, w, &h.loop);
    if (rc != 0 || !wk_link_on(&h.link)) {
        shm_log(SHM_LOG_ERROR, "historian: loop or fan-out: %s",
                rc != 0 ? strerror(-rc) : "no rings");
        goto out_base;
    }
    {
        const struct wk_link_notify n = {
            .value = wk_historian_on_value,
            .overflow = wk_historian_on_overflow,
            .wake_by = wk_historian_wake_by,
            .time = wk_historian_on_time,
            .event = wk_historian_on_event,
            .events_lost = wk_historian_on_events_lost,
        };

        wk_link_set_notify(&h.link, &n, &h);
        h.ev_lost_seen = h.link.events_lost_seen;
    }
    if (w->conf->history_event_max_mb != 0) {
        h.ev = wk_histev_open(w, h.store, (uint32_t)a.batch,
                              w->conf->history_event_retention_s,
                              w->conf->history_event_max_mb);
        if (h.ev == NULL)
            goto out_link;
        wk_link_event_interest(&h.link, true);
    }
    /* A HistoryUpdate answer: a status per item, items of 8 bytes at
     * least, a record a reply ring at most. */
    h.res_cap = (uint32_t)sizeof(struct shm_fo_hupd_result)
                + h.link.reply.size * h.link.reply.slot_size / 2;
    h.res = malloc(h.res_cap);
    if (h.res == NULL
        || wk_link_on_reply(&h.link, SHM_FO_HUPD, wk_historian_on_update,
                            &h) != 0) {
        shm_log(SHM_LOG_ERROR, "historian: out of memory");
        goto out_link;
    }
    if (wk_historian_nodes(&h) != 0)
        goto out_link;
    /* The current values taken above wait for the first flush (within
     * flush_ms): up now, not after a commit that rewrites every
     * variable's last block (docs/benchmarks.md "History: end to
     * end", start-up). */
    wk_historian_publish(&h, false);
    shm_log(SHM_LOG_NOTICE, "history of %u variables in %s", h.nodes, a.dir);
    event_assign(&h.flush_ev, w->base, -1, EV_PERSIST, wk_historian_on_flush,
                 &h);
    h.flush_ms = (uint32_t)a.flush_ms;
    h.next_flush_ms = w->now_ms + h.flush_ms;
    tv.tv_sec = a.flush_ms / 1000;
    tv.tv_usec = (a.flush_ms % 1000) * 1000;
    evsignal_assign(&h.sigterm, w->base, SIGTERM, wk_historian_on_signal, &h);
    evsignal_assign(&h.sigint, w->base, SIGINT, wk_historian_on_signal, &h);
    if (event_add(&h.flush_ev, &tv) != 0 || event_add(&h.sigterm, NULL) != 0
        || event_add(&h.sigint, NULL) != 0) {
        shm_log(SHM_LOG_ERROR, "event_add failed");
        goto out_link;
    }
    h.prune_in = 0;             /* retention once at start */
    atomic_store_explicit(&w->row->started, w->now_dt, memory_order_relaxed);
    atomic_store_explicit(&w->row->state, SHM_WS_UP, memory_order_release);
    if (wk_loop_run(&h.loop) != 0)
        shm_log(SHM_LOG_ERROR, "event_base_loop() failed");
    else
        exit_code = 0;
    /* What the last drain brought, kept. */
    wk_link_drain(&h.link);
    wk_historian_flush(&h);
    event_del(&h.flush_ev);
    event_del(&h.sigterm);
    event_del(&h.sigint);
out_link:
    wk_link_clear(&h.link);
out_base:
    wk_loop_clear(&h.loop);
    event_base_free(w->base);
    w->base = NULL;
out_seg:
    wk_histev_close(h.ev);
    hs_store_close(h.store);
    free(h.in);
    free(h.buf);
    free(h.one);
    free(h.abuf);
    free(h.res);
    free(h.keys);
    free(h.srv);
    free(h.cidx);
    free(h.coll);
    free(h.cslot);
    shm_log_level_at(NULL);
    shm_segment_close(&w->seg);
out:
    return exit_code;
}
