/*
 * tests/integ/integ_sub.c: subscriptions across processes, on loopback.
 *
 * Starts `uabroker -w 2` (next to this test's build directory, or
 * UABROKER_BIN) with samplingInterval 0 allowed, then:
 *
 *   1. connects clients until both workers have subscribers; on each
 *      worker one subscriber keeps Publish requests in flight on
 *      ns=1;s=v0 (every change queued: samplingInterval 0, queue 100),
 *      and one subscriber never sends a Publish at all;
 *   2. round 1: a writer on worker 0 writes 1..N into v0 (Write service,
 *      through the broker): both active subscribers, the one on the other
 *      worker included, see every value in order, no overflow bit, and
 *      the silent ones slow nobody;
 *   3. /stats: every notification block is free again (blocks_free ==
 *      blocks_total): nobody holds one, not even the silent subscriber's
 *      worker; the workers counted notifications; the writer's worker
 *      made no heap allocation during the round (steady state);
 *   4. round 2: N+1..2N while worker 1 is killed with SIGKILL half-way:
 *      the subscriber on worker 0 still sees every value in order; the
 *      slot is respawned; the blocks the dead worker held are reclaimed
 *      (blocks_free == blocks_total again);
 *   5. PercentDeadband (Part 8 §7.2) on the AnalogItem
 *      ns=1;s=Demo.Analog.Double (EURange 0..100): 10 % lets through
 *      only changes of more than 10.0 from the last reported value, and
 *      the same filter on ns=1;s=v1 (a Double without EURange) is refused
 *      with BadDeadbandFilterInvalid (Part 8 Table 28);
 *   6. SIGTERM: the broker exits.
 *   7. server-wide limits, on a second broker (-w 2) with max_sessions 6
 *      and max_subscriptions 4: 6 sessions spread over both workers, the
 *      next refused with BadTooManySessions on either worker; one closed,
 *      one more opens; 4 subscriptions over both workers, the next
 *      refused with BadTooManySubscriptions on either; one deleted on one
 *      worker, one more created on the other; kill -9 of the worker
 *      holding sessions and subscriptions: once it is respawned exactly
 *      its share can be taken again (shm/limits.h).
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_sub: N passed, M
 * failed"; exits non-zero on any failure.  The broker's process group is
 * killed on every way out; its log is printed on failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IS_WORKERS      2
#define IS_CLIENTS_MAX  24
#define IS_N            1000        /* writes per round */
#define IS_INFLIGHT     3           /* Publish requests kept in flight */
#define IS_WATCHDOG_S   240
#define IS_WAIT_MS      30000
#define IS_ARENA        (4u << 20)
#define IS_LIM_SESSIONS 6           /* step 7: limits.max_sessions */
#define IS_LIM_SUBS     4           /* step 7: limits.max_subscriptions */
#define IS_LIM_TRIES    16
#define IS_STR_(x)      #x
#define IS_STR(x)       IS_STR_(x)

/* A client and what its thread saw. */
struct is_client {
    struct uaconn    c;
    int              worker;
    bool             used;
    /* Subscriber. */
    uint32_t         sub;
    pthread_t        th;
    bool             running;
    atomic_bool      stop;
    _Atomic int64_t  last;          /* last value seen, -1 none */
    _Atomic uint64_t values;
    _Atomic uint64_t wrong;         /* out of order or a gap */
    _Atomic uint64_t overflows;
    _Atomic uint64_t errors;
    int64_t          expect;        /* next value expected, -1: any */
    ua_status        first_error;
    struct ua_arena  arena;
    uint8_t         *abuf;
};

static pid_t            is_broker = -1;
static char             is_dir[PATH_MAX];
static char             is_log[PATH_MAX + 16];
static uint16_t         is_port, is_sport;
static struct is_client is_cl[IS_CLIENTS_MAX];
static unsigned         is_ncl;
static struct ua_arena  is_arena;


static void is_start_broker(const char *bin, bool limits);
static void is_stop_broker(const char *what);
static bool is_worker_u64(int slot, const char *key, uint64_t *out);
static bool is_wait_health(unsigned ms);
static struct is_client *is_connect(void);
static ua_status is_subscribe(struct is_client *cl, double interval,
                              uint32_t lifetime);
static void *is_sub_thread(void *arg);
static void is_sub_start(struct is_client *cl, int64_t expect);
static void is_sub_stop(struct is_client *cl);
static ua_status is_write(struct is_client *cl, int32_t v);
static bool is_wait_value(struct is_client *cl, int64_t v, unsigned ms);
static bool is_blocks_free(unsigned ms, uint64_t *free, uint64_t *total);
static void is_analog(struct is_client *writer);
static void is_limits(const char *bin);

/* ------------------------------------------------------------ harness */

/* limits: the small server-wide limits of step 7. */
static void
is_start_broker(const char *bin, bool limits)
{
    char  port[8], stats[32];
    char *argv_limits[] = {
        (char *)bin, "-w", "2", "-p", port, "--stats", stats,
        "--runtime-dir", is_dir, "--vars", "10",
        "--set", "limits.max_sessions=" IS_STR(IS_LIM_SESSIONS),
        "--set", "limits.max_subscriptions=" IS_STR(IS_LIM_SUBS),
        /* No park: the dead worker's sessions die with it and their
         * budget returns (tests/integ/integ_kill.c has them survive). */
        "--set", "limits.session_park_bytes=0", NULL
    };
    char *argv_sub[] = {
        (char *)bin, "-w", "2", "-p", port, "--stats", stats,
        "--runtime-dir", is_dir, "--vars", "100",
        "--set", "limits.min_sampling_interval_ms=0",
        "--set", "limits.min_publishing_interval_ms=20",
        "--set", "security.anonymous_write=true", NULL
    };

    itest_tmpdir("uabroker-integsub", is_dir, sizeof(is_dir));
    snprintf(is_log, sizeof(is_log), "%s/broker.log", is_dir);
    is_port = itest_free_port();
    is_sport = itest_free_port();
    if (is_port == 0 || is_sport == 0 || is_port == is_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", is_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", is_sport);
    is_broker = itest_spawn(is_log, limits ? argv_limits : argv_sub);
    printf("# broker %s pid %d, opc.tcp port %u, stats port %u\n", bin,
           (int)is_broker, is_port, is_sport);
}

/* SIGTERM the broker (when running): it must exit 0 within 5 s. */
static void
is_stop_broker(const char *what)
{
    if (is_broker <= 0)
        return;
    itest_check(itest_stop(is_broker, 5000) == 0,
                "%sSIGTERM: the broker exits 0", what);
    is_broker = -1;
}

/* A number of worker slot's row in /stats. */
static bool
is_worker_u64(int slot, const char *key, uint64_t *out)
{
    return itest_worker_u64(is_sport, slot, key, out);
}

static bool
is_wait_health(unsigned ms)
{
    if (itest_wait_health(is_sport, is_broker, ms))
        return true;
    is_broker = -1;
    return false;
}

/* A new client with a session; its worker from the connection counters. */
static struct is_client *
is_connect(void)
{
    struct is_client *cl;
    uint64_t          before[IS_WORKERS] = { 0 }, after[IS_WORKERS] = { 0 };
    ua_status         s;

    if (is_ncl == IS_CLIENTS_MAX)
        return NULL;
    for (int i = 0; i < IS_WORKERS; i++)
        is_worker_u64(i, "connections_total", &before[i]);
    cl = &is_cl[is_ncl];
    memset(cl, 0, sizeof(*cl));
    uaconn_init(&cl->c);
    s = uaconn_start(&cl->c, "127.0.0.1", is_port);
    if (s != UA_GOOD) {
        itest_check(false, "client %u: connect + session: 0x%08X", is_ncl, s);
        uaconn_clear(&cl->c);
        return NULL;
    }
    cl->used = true;
    cl->worker = -1;
    atomic_store(&cl->last, -1);
    cl->abuf = malloc(IS_ARENA);
    if (cl->abuf == NULL)
        itest_fatal("malloc");
    ua_arena_init(&cl->arena, cl->abuf, IS_ARENA);
    is_ncl++;
    for (int i = 0; i < IS_WORKERS; i++)
        if (is_worker_u64(i, "connections_total", &after[i])
            && after[i] > before[i])
            cl->worker = i;
    return cl;
}


/* A subscription on v0: every change (sampling 0, queue 100). */
static ua_status
is_subscribe(struct is_client *cl, double interval, uint32_t lifetime)
{
    struct ua_create_subscription_response csr;
    ua_status                              s;

    memset(&csr, 0, sizeof(csr));
    s = uaconn_subscribe1(&cl->c, &is_arena, interval, lifetime, 10,
                          ua_nodeid_str(1, "v0"), 0, &csr);
    if (csr.subscription_id != 0)
        cl->sub = csr.subscription_id;
    return s;
}

/* ------------------------------------------------------------ subscriber */

static void
is_sub_error(struct is_client *cl, ua_status s)
{
    if (atomic_fetch_add(&cl->errors, 1) == 0)
        cl->first_error = s;
}

/* Keep IS_INFLIGHT Publish requests in flight; check every value. */
static void *
is_sub_thread(void *arg)
{
    struct is_client          *cl = arg;
    struct ua_publish_request  req;
    struct ua_subscription_acknowledgement ack;
    uint32_t                   id;
    bool                       have_ack = false;

    memset(&req, 0, sizeof(req));
    for (int i = 0; i < IS_INFLIGHT; i++)
        if (uaconn_send(&cl->c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req,
                        &id) != UA_GOOD) {
            is_sub_error(cl, UA_BAD_COMMUNICATION_ERROR);
            return NULL;
        }
    while (!atomic_load(&cl->stop)) {
        struct ua_client_event     ev;
        struct ua_publish_response resp;
        ua_status                  s = uaconn_recv(&cl->c, &ev);
        const struct ua_notification_message *m;

        if (s != UA_GOOD) {
            if (!atomic_load(&cl->stop))
                is_sub_error(cl, s);
            return NULL;
        }
        if (ev.kind != UA_CLIENT_EV_MSG)
            continue;
        ua_arena_reset(&cl->arena);
        s = ua_client_decode(&cl->c.cl, &ev,
                             &ua_types[UA_TYPE_PUBLISHRESPONSE], &resp,
                             &cl->arena);
        if (s != UA_GOOD) {
            is_sub_error(cl, s);
            return NULL;
        }
        m = &resp.notification_message;
        for (int32_t k = 0; k < m->n_notification_data; k++) {
            const struct ua_data_change_notification *d;

            if (m->notification_data[k].type
                != &ua_types[UA_TYPE_DATACHANGENOTIFICATION])
                continue;
            d = m->notification_data[k].obj;
            for (int32_t j = 0; j < d->n_monitored_items; j++) {
                const struct ua_datavalue *v = &d->monitored_items[j].value;
                int32_t                    x;

                if ((v->mask & UA_DV_STATUS) && (v->status & 0x0480) != 0)
                    atomic_fetch_add(&cl->overflows, 1);
                if (!(v->mask & UA_DV_VALUE) || v->value.type != UA_BT_INT32
                    || v->value.is_array) {
                    atomic_fetch_add(&cl->wrong, 1);
                    continue;
                }
                x = *(const int32_t *)v->value.data;
                if (cl->expect >= 0 && x != cl->expect)
                    atomic_fetch_add(&cl->wrong, 1);
                cl->expect = (int64_t)x + 1;
                atomic_store(&cl->last, x);
                atomic_fetch_add(&cl->values, 1);
            }
        }
        if (m->n_notification_data > 0) {
            ack.subscription_id = resp.subscription_id;
            ack.sequence_number = m->sequence_number;
            have_ack = true;
        }
        memset(&req, 0, sizeof(req));
        if (have_ack) {
            req.n_subscription_acknowledgements = 1;
            req.subscription_acknowledgements = &ack;
            have_ack = false;
        }
        if (uaconn_send(&cl->c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req,
                        &id) != UA_GOOD) {
            if (!atomic_load(&cl->stop))
                is_sub_error(cl, UA_BAD_COMMUNICATION_ERROR);
            return NULL;
        }
    }
    return NULL;
}

static void
is_sub_start(struct is_client *cl, int64_t expect)
{
    cl->expect = expect;
    atomic_store(&cl->stop, false);
    if (pthread_create(&cl->th, NULL, is_sub_thread, cl) != 0)
        itest_fatal("pthread_create");
    cl->running = true;
}

/* Stop the thread (it wakes at its next response or keep-alive). */
static void
is_sub_stop(struct is_client *cl)
{
    if (!cl->running)
        return;
    atomic_store(&cl->stop, true);
    pthread_join(cl->th, NULL);
    cl->running = false;
}

static ua_status
is_write(struct is_client *cl, int32_t v)
{
    struct ua_write_request  req;
    struct ua_write_response resp;
    struct ua_write_value    wv;
    ua_status                s;

    memset(&wv, 0, sizeof(wv));
    wv.node_id = ua_nodeid_str(1, "v0");
    wv.attribute_id = UA_ATTR_VALUE;
    wv.index_range.len = -1;
    wv.value.mask = UA_DV_VALUE;
    ua_variant_set_scalar(&wv.value.value, &v, UA_BT_INT32);
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_write = 1;
    req.nodes_to_write = &wv;
    ua_arena_reset(&is_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_WRITEREQUEST], &req,
                    &ua_types[UA_TYPE_WRITERESPONSE], &resp, &is_arena);
    if (s != UA_GOOD)
        return s;
    return resp.n_results == 1 ? resp.results[0] : UA_BAD_UNEXPECTED_ERROR;
}

static bool
is_wait_value(struct is_client *cl, int64_t v, unsigned ms)
{
    uint64_t end = itest_ms() + ms;

    while (itest_ms() < end) {
        if (atomic_load(&cl->last) >= v)
            return true;
        itest_sleep_ms(10);
    }
    return atomic_load(&cl->last) >= v;
}

/* Wait until every notification block is free again. */
static bool
is_blocks_free(unsigned ms, uint64_t *free_n, uint64_t *total)
{
    uint64_t end = itest_ms() + ms;

    do {
        char *body = NULL;

        *free_n = *total = 0;
        if (itest_http(is_sport, "GET", "/stats", &body) == 200 && body != NULL
            && itest_json_u64(body, "blocks_total", total)
            && itest_json_u64(body, "blocks_free", free_n)
            && *total > 0 && *free_n == *total) {
            free(body);
            return true;
        }
        free(body);
        itest_sleep_ms(50);
    } while (itest_ms() < end);
    return false;
}

/* ------------------------------------------------------------ deadband */


static ua_status
is_write_double(struct is_client *cl, const char *id, double v)
{
    struct ua_write_request  req;
    struct ua_write_response resp;
    struct ua_write_value    wv;
    ua_status                s;

    memset(&wv, 0, sizeof(wv));
    wv.node_id = ua_nodeid_str(1, id);
    wv.attribute_id = UA_ATTR_VALUE;
    wv.index_range.len = -1;
    wv.value.mask = UA_DV_VALUE;
    ua_variant_set_scalar(&wv.value.value, &v, UA_BT_DOUBLE);
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_write = 1;
    req.nodes_to_write = &wv;
    ua_arena_reset(&is_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_WRITEREQUEST], &req,
                    &ua_types[UA_TYPE_WRITERESPONSE], &resp, &is_arena);
    if (s != UA_GOOD)
        return s;
    return resp.n_results == 1 ? resp.results[0] : UA_BAD_UNEXPECTED_ERROR;
}

/*
 * Step 5: a subscription with two items, both DataChangeFilter
 * STATUS_VALUE with a 10 % PercentDeadband: Demo.Analog.Double (EURange
 * 0..100, so 10.0) and v1 (no EURange).  Writes 50 first, then values
 * inside and outside the band; the subscriber must see exactly the ones
 * outside, in order.
 */
static void
is_analog(struct is_client *writer)
{
    static const double writes[] = { 55.0, 59.9, 60.5, 65.0, 70.0, 71.0,
                                     62.0, 0.0 };
    static const double want[] = { 50.0, 60.5, 71.0, 0.0 };
    struct ua_create_subscription_request     cs;
    struct ua_create_subscription_response    csr;
    struct ua_create_monitored_items_request  cm;
    struct ua_create_monitored_items_response cmr;
    struct ua_monitored_item_create_request   it[2];
    struct ua_data_change_filter              dcf;
    struct is_client                         *cl = is_connect();
    double                                    got[16];
    size_t                                    ngot = 0;
    uint64_t                                  end;
    ua_status                                 s;
    bool                                      ok, extra = false;

    if (!itest_check(cl != NULL, "deadband subscriber connected"))
        return;
    s = is_write_double(writer, "Demo.Analog.Double", 50.0);
    itest_check(s == UA_GOOD, "write Demo.Analog.Double = 50: 0x%08X", s);
    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = 20;
    cs.requested_lifetime_count = 1000;
    cs.requested_max_keep_alive_count = 10;
    cs.publishing_enabled = true;
    ua_arena_reset(&is_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST],
                    &cs, &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE], &csr,
                    &is_arena);
    if (!itest_check(s == UA_GOOD, "deadband subscription: 0x%08X", s))
        return;
    memset(&dcf, 0, sizeof(dcf));
    dcf.trigger = UA_DATACHANGETRIGGER_STATUSVALUE;
    dcf.deadband_type = UA_DEADBANDTYPE_PERCENT;
    dcf.deadband_value = 10.0;
    memset(it, 0, sizeof(it));
    for (int k = 0; k < 2; k++) {
        struct ua_monitoring_parameters *mp = &it[k].requested_parameters;

        it[k].item_to_monitor.node_id = ua_nodeid_str(1, k == 0
                                                      ? "Demo.Analog.Double"
                                                      : "v1");
        it[k].item_to_monitor.attribute_id = UA_ATTR_VALUE;
        it[k].item_to_monitor.index_range.len = -1;
        it[k].item_to_monitor.data_encoding.name.len = -1;
        it[k].monitoring_mode = UA_MONITORINGMODE_REPORTING;
        mp->client_handle = (uint32_t)k + 1;
        mp->sampling_interval = 0;
        mp->queue_size = 100;
        mp->discard_oldest = true;
        mp->filter.encoding = UA_EO_DECODED;
        mp->filter.type = &ua_types[UA_TYPE_DATACHANGEFILTER];
        mp->filter.type_id = ua_nodeid_num(
            0, ua_types[UA_TYPE_DATACHANGEFILTER].binary_id);
        mp->filter.obj = &dcf;
    }
    memset(&cm, 0, sizeof(cm));
    cm.subscription_id = csr.subscription_id;
    cm.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    cm.n_items_to_create = 2;
    cm.items_to_create = it;
    ua_arena_reset(&is_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST],
                    &cm, &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE],
                    &cmr, &is_arena);
    if (!itest_check(s == UA_GOOD && cmr.n_results == 2,
                     "CreateMonitoredItems with PercentDeadband: 0x%08X", s))
        return;
    itest_check(cmr.results[0].status_code == UA_GOOD,
                "PercentDeadband on the AnalogItem Demo.Analog.Double "
                "(EURange 0..100): 0x%08X", cmr.results[0].status_code);
    itest_check(cmr.results[1].status_code == UA_BAD_DEADBAND_FILTER_INVALID,
                "PercentDeadband on v1 (no EURange): BadDeadbandFilterInvalid "
                "(0x%08X)", cmr.results[1].status_code);
    for (size_t k = 0; k < sizeof(writes) / sizeof(writes[0]); k++) {
        s = is_write_double(writer, "Demo.Analog.Double", writes[k]);
        if (!itest_check(s == UA_GOOD, "write Demo.Analog.Double = %g: "
                         "0x%08X", writes[k], s))
            return;
    }
    /* Publish until the last value (0.0, outside the band) came. */
    end = itest_ms() + 10000;
    while (itest_ms() < end && !(ngot > 0 && got[ngot - 1] == 0.0)) {
        struct ua_publish_request  req;
        struct ua_publish_response resp;
        const struct ua_notification_message *m;

        memset(&req, 0, sizeof(req));
        ua_arena_reset(&is_arena);
        s = uaconn_call(&cl->c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req,
                        &ua_types[UA_TYPE_PUBLISHRESPONSE], &resp,
                        &is_arena);
        if (!itest_check(s == UA_GOOD, "deadband Publish: 0x%08X", s))
            return;
        m = &resp.notification_message;
        for (int32_t k = 0; k < m->n_notification_data; k++) {
            const struct ua_data_change_notification *d;

            if (m->notification_data[k].type
                != &ua_types[UA_TYPE_DATACHANGENOTIFICATION])
                continue;
            d = m->notification_data[k].obj;
            for (int32_t j = 0; j < d->n_monitored_items; j++) {
                const struct ua_datavalue *v = &d->monitored_items[j].value;

                if (d->monitored_items[j].client_handle != 1
                    || !(v->mask & UA_DV_VALUE)
                    || v->value.type != UA_BT_DOUBLE || v->value.is_array
                    || ngot == sizeof(got) / sizeof(got[0])) {
                    extra = true;
                    continue;
                }
                got[ngot++] = *(const double *)v->value.data;
            }
        }
    }
    ok = !extra && ngot == sizeof(want) / sizeof(want[0]);
    for (size_t k = 0; ok && k < ngot; k++)
        ok = got[k] == want[k];
    itest_check(ok, "PercentDeadband 10 %% of 0..100: only changes of more "
                "than 10.0 delivered (%zu values: %g %g %g %g ...)", ngot,
                ngot > 0 ? got[0] : -1.0, ngot > 1 ? got[1] : -1.0,
                ngot > 2 ? got[2] : -1.0, ngot > 3 ? got[3] : -1.0);
}

/* ------------------------------------------------------------ limits */

/* One client of step 7. */
struct is_lim {
    struct uaconn c;
    int           worker;           /* -1: not known */
    bool          up;               /* holds a session */
    uint32_t      subs[IS_LIM_SUBS];
    unsigned      nsubs;
};

static struct is_lim is_lc[IS_LIM_TRIES];

/* Connect + session on l; its worker whatever the outcome.  A client
 * refused is cleared again. */
static ua_status
is_lim_open(struct is_lim *l)
{
    uint64_t  before[IS_WORKERS] = { 0 }, after[IS_WORKERS] = { 0 };
    ua_status s;

    for (int i = 0; i < IS_WORKERS; i++)
        is_worker_u64(i, "connections_total", &before[i]);
    memset(l, 0, sizeof(*l));
    uaconn_init(&l->c);
    s = uaconn_start(&l->c, "127.0.0.1", is_port);
    l->worker = -1;
    for (int i = 0; i < IS_WORKERS; i++)
        if (is_worker_u64(i, "connections_total", &after[i])
            && after[i] > before[i])
            l->worker = i;
    l->up = s == UA_GOOD;
    if (!l->up)
        uaconn_clear(&l->c);
    return s;
}

static void
is_lim_close(struct is_lim *l)
{
    if (!l->up)
        return;
    uaconn_close_session(&l->c);
    uaconn_clear(&l->c);
    l->up = false;
    l->nsubs = 0;
}

static ua_status
is_lim_sub(struct is_lim *l)
{
    struct ua_create_subscription_request  cs;
    struct ua_create_subscription_response csr;
    ua_status                              s;

    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = 1000;
    cs.requested_lifetime_count = 10000;
    cs.requested_max_keep_alive_count = 10;
    cs.publishing_enabled = true;
    ua_arena_reset(&is_arena);
    s = uaconn_call(&l->c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST],
                    &cs, &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE], &csr,
                    &is_arena);
    if (s == UA_GOOD && l->nsubs < IS_LIM_SUBS)
        l->subs[l->nsubs++] = csr.subscription_id;
    return s;
}

static ua_status
is_lim_unsub(struct is_lim *l)
{
    struct ua_delete_subscriptions_request  ds;
    struct ua_delete_subscriptions_response dsr;
    ua_status                               s;

    if (l->nsubs == 0)
        return UA_BAD_UNEXPECTED_ERROR;
    memset(&ds, 0, sizeof(ds));
    ds.n_subscription_ids = 1;
    ds.subscription_ids = &l->subs[--l->nsubs];
    ua_arena_reset(&is_arena);
    s = uaconn_call(&l->c, &ua_types[UA_TYPE_DELETESUBSCRIPTIONSREQUEST],
                    &ds, &ua_types[UA_TYPE_DELETESUBSCRIPTIONSRESPONSE], &dsr,
                    &is_arena);
    if (s == UA_GOOD)
        s = dsr.n_results == 1 ? dsr.results[0] : UA_BAD_UNEXPECTED_ERROR;
    return s;
}

/* Sessions up, on worker w (-1: all). */
static unsigned
is_lim_count(int w)
{
    unsigned n = 0;

    for (unsigned i = 0; i < IS_LIM_TRIES; i++)
        if (is_lc[i].up && (w < 0 || is_lc[i].worker == w))
            n++;
    return n;
}

/* A session up on worker w, or NULL. */
static struct is_lim *
is_lim_on(int w)
{
    for (unsigned i = 0; i < IS_LIM_TRIES; i++)
        if (is_lc[i].up && is_lc[i].worker == w)
            return &is_lc[i];
    return NULL;
}

static struct is_lim *
is_lim_free(void)
{
    for (unsigned i = 0; i < IS_LIM_TRIES; i++)
        if (!is_lc[i].up)
            return &is_lc[i];
    return NULL;
}

/*
 * New sessions until `tries` attempts were refused or both workers refused
 * one: every attempt must be refused with `want`.  true when it was, on
 * both workers.
 */
static bool
is_lim_refused(ua_status want, const char *what)
{
    bool      seen[IS_WORKERS] = { false };
    unsigned  bad = 0, n = 0;
    ua_status s, other = UA_GOOD;

    while (n < IS_LIM_TRIES && !(seen[0] && seen[1])) {
        struct is_lim *l = is_lim_free();

        if (l == NULL)
            break;
        n++;
        s = is_lim_open(l);
        if (s == want && l->worker >= 0) {
            seen[l->worker] = true;
        } else {
            bad++;
            other = s;
            is_lim_close(l);
        }
    }
    return itest_check(bad == 0 && seen[0] && seen[1],
                       "%s: %u attempts refused with 0x%08X on both workers "
                       "(%u otherwise, last 0x%08X)", what, n - bad, want,
                       bad, other);
}

/*
 * Reopen sessions until each worker has one (the kernel spreads the
 * connections, not the test): false when a reopen failed or IS_LIM_TRIES
 * did not do.
 */
static bool
is_lim_spread(void)
{
    bool ok = true;

    for (unsigned tries = 0; ok && tries < IS_LIM_TRIES
                             && (is_lim_count(0) == 0 || is_lim_count(1) == 0);
         tries++) {
        struct is_lim *a = is_lim_on(is_lim_count(0) == 0 ? 1 : 0);

        is_lim_close(a);
        ok = is_lim_open(a) == UA_GOOD;
    }
    return ok && is_lim_count(0) > 0 && is_lim_count(1) > 0;
}

static void
is_limits(const char *bin)
{
    struct is_lim *a, *b;
    uint64_t       pid1 = 0, restarts = 0, r, pid;
    unsigned       k, n;
    bool           ok;
    ua_status      s;

    is_start_broker(bin, true);
    if (!itest_check(is_wait_health(IS_WAIT_MS), "limits: broker healthy"))
        return;

    /* Sessions up to the limit, on both workers. */
    ok = true;
    for (unsigned i = 0; i < IS_LIM_SESSIONS && ok; i++)
        ok = is_lim_open(&is_lc[i]) == UA_GOOD;
    ok = ok && is_lim_spread();
    if (!itest_check(ok && is_lim_count(0) > 0 && is_lim_count(1) > 0
                         && is_lim_count(-1) == IS_LIM_SESSIONS,
                     "limits: %d sessions over both workers (%u + %u)",
                     IS_LIM_SESSIONS, is_lim_count(0), is_lim_count(1)))
        goto stop;
    is_lim_refused(UA_BAD_TOO_MANY_SESSIONS,
                   "limits: the session past max_sessions");

    /* One closed: one more opens, then the server is full again. */
    a = is_lim_on(0);
    is_lim_close(a);
    s = is_lim_open(a);
    itest_check(s == UA_GOOD, "limits: a session closed, another opens "
                "(0x%08X)", s);
    if (s == UA_GOOD) {
        b = is_lim_free();
        s = b != NULL ? is_lim_open(b) : UA_BAD_UNEXPECTED_ERROR;
        itest_check(s == UA_BAD_TOO_MANY_SESSIONS, "limits: and the next is "
                    "refused again (0x%08X)", s);
        if (b != NULL)
            is_lim_close(b);
    }

    /* Subscriptions: 2 on each worker, the fifth refused on either.  The
     * session reopened above may have gone to the other worker. */
    is_lim_spread();
    a = is_lim_on(0);
    b = is_lim_on(1);
    if (!itest_check(a != NULL && b != NULL, "limits: a session on each "
                     "worker"))
        goto stop;
    ok = true;
    for (int i = 0; i < IS_LIM_SUBS / 2; i++) {
        ok = ok && is_lim_sub(a) == UA_GOOD;
        ok = ok && is_lim_sub(b) == UA_GOOD;
    }
    itest_check(ok, "limits: %d subscriptions over both workers",
                IS_LIM_SUBS);
    s = is_lim_sub(a);
    itest_check(s == UA_BAD_TOO_MANY_SUBSCRIPTIONS, "limits: the "
                "subscription past max_subscriptions on worker 0: 0x%08X", s);
    s = is_lim_sub(b);
    itest_check(s == UA_BAD_TOO_MANY_SUBSCRIPTIONS, "limits: the "
                "subscription past max_subscriptions on worker 1: 0x%08X", s);
    /* One deleted on worker 0: worker 1 may create one, then nobody. */
    s = is_lim_unsub(a);
    itest_check(s == UA_GOOD, "limits: delete a subscription on worker 0: "
                "0x%08X", s);
    s = is_lim_sub(b);
    itest_check(s == UA_GOOD, "limits: its budget used on worker 1: 0x%08X",
                s);
    s = is_lim_sub(a);
    itest_check(s == UA_BAD_TOO_MANY_SUBSCRIPTIONS, "limits: then worker 0 "
                "is refused again: 0x%08X", s);

    /* kill -9 worker 1 (its sessions and 3 subscriptions die with it). */
    k = is_lim_count(1);
    is_worker_u64(1, "pid", &pid1);
    is_worker_u64(1, "restarts", &restarts);
    if (!itest_check(pid1 > 0 && kill((pid_t)pid1, SIGKILL) == 0,
                     "limits: kill -9 worker 1 (pid %llu) holding %u "
                     "sessions and %u subscriptions",
                     (unsigned long long)pid1, k, b->nsubs))
        goto stop;
    r = restarts;
    pid = pid1;
    for (uint64_t end = itest_ms() + 15000; itest_ms() < end;) {
        if (is_worker_u64(1, "restarts", &r) && r > restarts
            && is_worker_u64(1, "pid", &pid) && pid != pid1 && pid != 0)
            break;
        itest_sleep_ms(100);
    }
    itest_check(r > restarts && pid != pid1, "limits: worker 1 respawned "
                "(pid %llu)", (unsigned long long)pid);
    for (unsigned i = 0; i < IS_LIM_TRIES; i++)
        if (is_lc[i].up && is_lc[i].worker == 1) {
            uaconn_clear(&is_lc[i].c);
            is_lc[i].up = false;
            is_lc[i].nsubs = 0;
        }
    /* Exactly its share is free again: k sessions, 3 subscriptions. */
    n = 0;
    for (unsigned i = 0; i < k; i++) {
        a = is_lim_free();
        if (a != NULL && is_lim_open(a) == UA_GOOD)
            n++;
    }
    itest_check(n == k, "limits: the dead worker's %u sessions usable "
                "again (%u opened)", k, n);
    a = is_lim_free();
    s = a != NULL ? is_lim_open(a) : UA_BAD_UNEXPECTED_ERROR;
    itest_check(s == UA_BAD_TOO_MANY_SESSIONS, "limits: and not one more "
                "(0x%08X)", s);
    if (a != NULL)
        is_lim_close(a);
    n = 0;
    for (unsigned i = 0; i < IS_LIM_TRIES && n < 3; i++)
        if (is_lc[i].up && is_lc[i].nsubs == 0 && is_lim_sub(&is_lc[i])
                                                      == UA_GOOD)
            n++;
    itest_check(n == 3, "limits: the dead worker's 3 subscriptions usable "
                "again (%u created)", n);
    a = is_lim_on(0);
    s = a != NULL ? is_lim_sub(a) : UA_BAD_UNEXPECTED_ERROR;
    itest_check(s == UA_BAD_TOO_MANY_SUBSCRIPTIONS, "limits: and not one "
                "more (0x%08X)", s);

stop:
    for (unsigned i = 0; i < IS_LIM_TRIES; i++)
        is_lim_close(&is_lc[i]);
    is_stop_broker("limits: ");
}

/* ------------------------------------------------------------ main */

int
main(int argc, char **argv)
{
    struct is_client *writer = NULL, *sub[IS_WORKERS] = { NULL };
    struct is_client *silent[IS_WORKERS] = { NULL };
    char              bin[PATH_MAX];
    uint8_t          *abuf;
    uint64_t          free_n, total, a0, a1, pid1 = 0, restarts = 0, n0;
    uint64_t          t0;
    ua_status         s;
    bool              ok;

    itest_init("integ_sub");
    (void)argc;
    signal(SIGPIPE, SIG_IGN);
    itest_guard(IS_WATCHDOG_S, is_log);
    abuf = malloc(IS_ARENA);
    if (abuf == NULL)
        itest_fatal("malloc");
    ua_arena_init(&is_arena, abuf, IS_ARENA);
    itest_broker_bin(argv[0], bin, sizeof(bin));
    is_start_broker(bin, false);
    if (!itest_check(is_wait_health(IS_WAIT_MS), "broker healthy"))
        itest_fatal("no /health");

    /* 1. Clients until each worker has a subscriber, a silent one, and
     *    worker 0 a writer. */
    for (int tries = 0; tries < IS_CLIENTS_MAX; tries++) {
        struct is_client *cl;
        int               w;

        if (writer && sub[0] && sub[1] && silent[0] && silent[1])
            break;
        cl = is_connect();
        if (cl == NULL)
            break;
        w = cl->worker;
        if (w < 0)
            continue;
        if (sub[w] == NULL)
            sub[w] = cl;
        else if (silent[w] == NULL)
            silent[w] = cl;
        else if (w == 0 && writer == NULL)
            writer = cl;
    }
    if (!itest_check(writer && sub[0] && sub[1] && silent[0] && silent[1],
                  "clients on both workers (%u connections)", is_ncl))
        itest_fatal("could not spread clients over the workers");
    for (int w = 0; w < IS_WORKERS; w++) {
        s = is_subscribe(sub[w], 20, 10000);
        itest_check(s == UA_GOOD, "subscriber on worker %d: 0x%08X", w, s);
        s = is_subscribe(silent[w], 1000, 1000);
        itest_check(s == UA_GOOD, "silent subscriber on worker %d: 0x%08X", w,
                 s);
    }
    s = is_write(writer, 0);
    itest_check(s == UA_GOOD, "write v0 = 0: 0x%08X", s);
    for (int w = 0; w < IS_WORKERS; w++)
        is_sub_start(sub[w], -1);
    for (int w = 0; w < IS_WORKERS; w++)
        itest_check(is_wait_value(sub[w], 0, 5000),
                 "worker %d subscriber has the initial value", w);

    /* 2. Round 1. */
    for (int w = 0; w < IS_WORKERS; w++) {
        atomic_store(&sub[w]->wrong, 0);
        atomic_store(&sub[w]->values, 0);
        sub[w]->expect = 1;
    }
    is_worker_u64(0, "notifications", &n0);
    a0 = 0;
    t0 = itest_ms();
    for (int32_t v = 1; v <= IS_N; v++) {
        if (v == IS_N / 10)             /* past the first buffers' use */
            is_worker_u64(0, "allocations", &a0);
        s = is_write(writer, v);
        if (s != UA_GOOD) {
            itest_check(false, "write %d: 0x%08X", v, s);
            break;
        }
        if (v % 4 == 0)
            itest_sleep_ms(1);
    }
    printf("# round 1: %d writes in %llu ms\n", IS_N,
           (unsigned long long)(itest_ms() - t0));
    for (int w = 0; w < IS_WORKERS; w++) {
        struct is_client *cl = sub[w];
        bool              reached = is_wait_value(cl, IS_N, 10000);

        itest_check(reached, "worker %d subscriber reached %d (last %lld)", w,
                 IS_N, (long long)atomic_load(&cl->last));
        itest_check(atomic_load(&cl->values) == IS_N
                     && atomic_load(&cl->wrong) == 0
                     && atomic_load(&cl->overflows) == 0,
                 "worker %d: every value in order (%llu values, %llu out "
                 "of order, %llu overflows)%s", w,
                 (unsigned long long)atomic_load(&cl->values),
                 (unsigned long long)atomic_load(&cl->wrong),
                 (unsigned long long)atomic_load(&cl->overflows),
                 w != writer->worker ? ", across workers" : "");
        itest_check(atomic_load(&cl->errors) == 0, "worker %d: no errors "
                 "(first 0x%08X)", w, cl->first_error);
    }

    /* 3. Blocks, counters, allocations. */
    ok = is_blocks_free(5000, &free_n, &total);
    itest_check(ok, "every notification block free again (%llu / %llu), silent "
             "subscribers included", (unsigned long long)free_n,
             (unsigned long long)total);
    is_worker_u64(0, "allocations", &a1);
    itest_check(a1 == a0, "worker 0: no heap allocation during %d writes and "
             "their notifications (%llu -> %llu)", IS_N - IS_N / 10,
             (unsigned long long)a0, (unsigned long long)a1);
    {
        uint64_t n1 = 0;

        is_worker_u64(0, "notifications", &n1);
        itest_check(n1 >= n0 + IS_N, "worker 0 counted its notifications "
                 "(%llu)", (unsigned long long)(n1 - n0));
    }

    /* 4. Round 2 with worker 1 killed half-way. */
    is_sub_stop(sub[1]);
    is_worker_u64(1, "pid", &pid1);
    is_worker_u64(1, "restarts", &restarts);
    atomic_store(&sub[0]->wrong, 0);
    atomic_store(&sub[0]->values, 0);
    sub[0]->expect = IS_N + 1;
    for (int32_t v = IS_N + 1; v <= 2 * IS_N; v++) {
        if (v == IS_N + IS_N / 2 && pid1 > 0) {
            itest_check(kill((pid_t)pid1, SIGKILL) == 0,
                     "kill -9 worker 1 (pid %llu) while values flow",
                     (unsigned long long)pid1);
        }
        s = is_write(writer, v);
        if (s != UA_GOOD) {
            itest_check(false, "write %d: 0x%08X", v, s);
            break;
        }
        if (v % 4 == 0)
            itest_sleep_ms(1);
    }
    ok = is_wait_value(sub[0], 2 * IS_N, 10000);
    itest_check(ok && atomic_load(&sub[0]->values) == IS_N
                 && atomic_load(&sub[0]->wrong) == 0
                 && atomic_load(&sub[0]->overflows) == 0
                 && atomic_load(&sub[0]->errors) == 0,
             "worker 0 subscriber lost nothing while worker 1 died "
             "(%llu values, %llu out of order, %llu overflows)",
             (unsigned long long)atomic_load(&sub[0]->values),
             (unsigned long long)atomic_load(&sub[0]->wrong),
             (unsigned long long)atomic_load(&sub[0]->overflows));
    {
        uint64_t end = itest_ms() + 15000, r = restarts, pid = pid1;

        while (itest_ms() < end) {
            if (is_worker_u64(1, "restarts", &r) && r > restarts
                && is_worker_u64(1, "pid", &pid) && pid != pid1 && pid != 0)
                break;
            itest_sleep_ms(100);
        }
        itest_check(r > restarts && pid != pid1, "worker 1 respawned (pid %llu,"
                 " restarts %llu)", (unsigned long long)pid,
                 (unsigned long long)r);
    }
    ok = is_blocks_free(10000, &free_n, &total);
    itest_check(ok, "the dead worker's blocks reclaimed (%llu / %llu free)",
             (unsigned long long)free_n, (unsigned long long)total);

    /* 5. PercentDeadband on the AnalogItems. */
    is_analog(writer);

    /* 6. Stop. */
    is_sub_stop(sub[0]);
    for (unsigned i = 0; i < is_ncl; i++) {
        uaconn_clear(&is_cl[i].c);
        free(is_cl[i].abuf);
    }
    is_stop_broker("");

    /* 7. Server-wide limits. */
    is_limits(bin);
    free(abuf);
    return itest_finish();
}
