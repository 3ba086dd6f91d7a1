/*
 * tests/integ/integ_sim.c: the simulated Demo.Vars variables
 * (addrspace.simulation_vars), on loopback.
 *
 *   1. `uabroker -t --vars 10`: simulation_vars 11 is refused (exit 2,
 *      the message names the key), 10 is accepted;
 *   2. starts `uabroker -w 1 --vars 10` with simulation_vars 3, a 10 ms
 *      simulation tick and samplingInterval 0 allowed;
 *   3. one Read of Demo.Simulation.Counter and v0 .. v3, 300 ms apart
 *      twice: v0 and v2 (Int32) are their initial value plus the tick
 *      count (the Counter's value, read just before them: that or one
 *      more), v1 (Double) 1.5 plus it; all three moved by as many ticks as
 *      the Counter (within one) with newer source and server timestamps;
 *      v3 keeps its initial 3.5 and its timestamps;
 *   4. a subscription on v0 (sampling 0, queue 100): every tick arrives,
 *      each value the last one + 1, source timestamps increasing, no
 *      Overflow bit;
 *   5. SIGTERM: the broker exits 0.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_sim: N passed, M
 * failed"; exits non-zero on any failure.  The broker's process group is
 * killed on every way out; its log is printed on failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IM_WATCHDOG_S   120
#define IM_START_MS     30000
#define IM_ARENA        (1u << 20)
#define IM_SIM_VARS     3           /* addrspace.simulation_vars */
#define IM_SIM_VARS_S   "3"
#define IM_READ_GAP_MS  300
#define IM_PUB_MS       1000        /* step 4: publishing watched */
#define IM_INTERVAL_MS  50          /* step 4: publishing interval */
#define IM_INFLIGHT     3           /* step 4: Publish requests in flight */
#define IM_MIN_VALUES   20          /* step 4: 100 ticks expected in 1 s */

static char            im_dir[PATH_MAX];
static char            im_log[PATH_MAX + 16];
static char            im_bin[PATH_MAX];
static struct ua_arena im_arena;

/* One Read's values: [0] the Counter, [1 + i] v<i>. */
struct im_snap {
    uint32_t counter;
    double   val[4];            /* v0 .. v3 as numbers */
    uint8_t  type[4];
    int64_t  src[4], srv[4];
    bool     ok;
};


/* `uabroker -t --vars 10 --set addrspace.simulation_vars=VALUE`: its exit
 * status; its output in out. */
static int
im_check_conf(const char *value, char *out, size_t cap)
{
    char   set[64], log[PATH_MAX + 16];
    size_t len = 0;
    int    st;
    pid_t  pid;

    snprintf(set, sizeof(set), "addrspace.simulation_vars=%s", value);
    snprintf(log, sizeof(log), "%s/check-%s.log", im_dir, value);
    {
        char *const av[] = { im_bin, "-t", "--vars", "10", "--runtime-dir",
                             im_dir, "--set", set, NULL };

        pid = itest_spawn(log, av);
    }
    st = itest_wait(pid);
    out[0] = '\0';
    if (itest_read_file(log, (uint8_t *)out, cap, &len) == 0)
        out[len] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* One Read of the Counter and v0 .. v3, timestamps Both. */
static void
im_read(struct uaconn *c, struct im_snap *sn)
{
    static const char *const names[5] = { "Demo.Simulation.Counter", "v0",
                                          "v1", "v2", "v3" };
    struct ua_read_value_id rv[5];
    struct ua_read_request  req;
    struct ua_read_response resp;

    memset(sn, 0, sizeof(*sn));
    memset(rv, 0, sizeof(rv));
    for (int i = 0; i < 5; i++) {
        rv[i].node_id = ua_nodeid_str(1, names[i]);
        rv[i].attribute_id = UA_ATTR_VALUE;
        rv[i].index_range.len = -1;
        rv[i].data_encoding.name.len = -1;
    }
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 5;
    req.nodes_to_read = rv;
    ua_arena_reset(&im_arena);
    if (uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &im_arena)
            != UA_GOOD
        || resp.n_results != 5)
        return;
    for (int i = 0; i < 5; i++) {
        const struct ua_datavalue *dv = &resp.results[i];

        if (!(dv->mask & UA_DV_VALUE) || dv->value.is_array
            || ((dv->mask & UA_DV_STATUS) && dv->status != UA_GOOD)
            || !(dv->mask & UA_DV_SOURCE_TS) || !(dv->mask & UA_DV_SERVER_TS))
            return;
        if (i == 0) {
            if (dv->value.type != UA_BT_UINT32)
                return;
            sn->counter = *(const uint32_t *)dv->value.data;
            continue;
        }
        sn->type[i - 1] = dv->value.type;
        if (dv->value.type == UA_BT_INT32)
            sn->val[i - 1] = *(const int32_t *)dv->value.data;
        else if (dv->value.type == UA_BT_DOUBLE)
            sn->val[i - 1] = *(const double *)dv->value.data;
        else
            return;
        sn->src[i - 1] = dv->source_ts;
        sn->srv[i - 1] = dv->server_ts;
    }
    sn->ok = true;
}

/* v<i> = initial + the tick count, the Counter read just before: that
 * count or one more (a tick between the two slots' reads). */
static bool
im_follows(const struct im_snap *sn, int i)
{
    double base = i % 2 ? i + 0.5 : i;
    double ticks = sn->val[i] - base;

    return sn->type[i] == (i % 2 ? UA_BT_DOUBLE : UA_BT_INT32)
           && (ticks == sn->counter || ticks == sn->counter + 1.0);
}

/* Step 4: Publish on c for IM_PUB_MS; every value of v0 the last + 1. */
static void
im_publish(struct uaconn *c)
{
    struct ua_subscription_acknowledgement ack;
    struct ua_publish_request              req;
    struct uaconn_seq                      q;
    uint64_t  until = itest_ms() + IM_PUB_MS;
    uint32_t  id;
    ua_status s = UA_GOOD;

    uaconn_seq_init(&q, UA_BT_INT32);
    memset(&req, 0, sizeof(req));
    for (int i = 0; i < IM_INFLIGHT && s == UA_GOOD; i++)
        s = uaconn_send(c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id);
    while (s == UA_GOOD && itest_ms() < until) {
        struct ua_client_event                ev;
        struct ua_publish_response            resp;
        const struct ua_notification_message *m;

        s = uaconn_recv(c, &ev);
        if (s != UA_GOOD || ev.kind != UA_CLIENT_EV_MSG)
            continue;
        ua_arena_reset(&im_arena);
        s = ua_client_decode(&c->cl, &ev, &ua_types[UA_TYPE_PUBLISHRESPONSE],
                             &resp, &im_arena);
        if (s != UA_GOOD)
            break;
        m = &resp.notification_message;
        uaconn_seq_take(&q, m);
        /* The next Publish acknowledges this message. */
        req.n_subscription_acknowledgements = 0;
        if (m->n_notification_data > 0) {
            ack.subscription_id = resp.subscription_id;
            ack.sequence_number = m->sequence_number;
            req.n_subscription_acknowledgements = 1;
            req.subscription_acknowledgements = &ack;
        }
        s = uaconn_send(c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id);
    }
    itest_check(s == UA_GOOD, "Publish on v0 for %u ms: 0x%08X", IM_PUB_MS,
                s);
    /* 10 ms ticks: ~100 in the window; a busy machine may give fewer. */
    itest_check(q.values >= IM_MIN_VALUES && q.breaks == 0
                    && q.overflows == 0,
                "v0 over a subscription: %llu values (>= %u), each the last "
                "+ 1 (%llu breaks), %llu overflows",
                (unsigned long long)q.values, IM_MIN_VALUES,
                (unsigned long long)q.breaks, (unsigned long long)q.overflows);
    itest_check(q.src_breaks == 0, "every notification of v0 has a newer "
                "source timestamp (%llu not)",
                (unsigned long long)q.src_breaks);
}

int
main(int argc, char **argv)
{
    struct ua_create_subscription_response csr;
    struct im_snap a, b;
    struct uaconn  c;
    char           out[4096];
    uint16_t       oport, sport;
    ua_status      s = UA_BAD_TIMEOUT;
    pid_t          broker;
    int            rc;

    itest_init("integ_sim");
    (void)argc;
    itest_guard(IM_WATCHDOG_S, im_log);
    ua_arena_init(&im_arena, malloc(IM_ARENA), IM_ARENA);
    itest_broker_bin(argv[0], im_bin, sizeof(im_bin));
    itest_tmpdir("uabroker-sim", im_dir, sizeof(im_dir));
    snprintf(im_log, sizeof(im_log), "%s/broker.log", im_dir);

    /* 1. The limit. */
    rc = im_check_conf("11", out, sizeof(out));
    itest_check(rc == 2 && strstr(out, "simulation_vars") != NULL,
                "-t: simulation_vars 11 with 10 vars refused (exit %d): %s",
                rc, out);
    rc = im_check_conf("10", out, sizeof(out));
    itest_check(rc == 0, "-t: simulation_vars 10 with 10 vars accepted "
                "(exit %d)", rc);

    /* 2. The broker. */
    {
        const char *const extra[] = {
            "--vars", "10",
            "--set", "addrspace.simulation_vars=" IM_SIM_VARS_S,
            "--set", "addrspace.simulation_interval_ms=10",
            "--set", "limits.min_sampling_interval_ms=0", NULL
        };

        broker = itest_broker_start(im_bin, 1, im_dir, im_log, extra,
                                    IM_START_MS, &oport, &sport);
    }
    s = uaconn_start_retry(&c, "127.0.0.1", oport, IM_START_MS);
    if (s != UA_GOOD)
        itest_fatal("no session: 0x%08X", s);

    /* 3. Two Reads apart. */
    im_read(&c, &a);
    itest_sleep_ms(IM_READ_GAP_MS);
    im_read(&c, &b);
    if (!a.ok || !b.ok)
        itest_fatal("Read of the Counter and v0 .. v3 failed");
    printf("# Counter %u -> %u; v0 %g -> %g, v1 %g -> %g, v2 %g -> %g, "
           "v3 %g -> %g\n", a.counter, b.counter, a.val[0], b.val[0],
           a.val[1], b.val[1], a.val[2], b.val[2], a.val[3], b.val[3]);
    itest_check(b.counter > a.counter + 5, "the simulation ticks: Counter "
                "%u -> %u in %u ms", a.counter, b.counter, IM_READ_GAP_MS);
    for (int i = 0; i < IM_SIM_VARS; i++) {
        double moved = b.val[i] - a.val[i];
        double ticks = (double)b.counter - a.counter;

        itest_check(im_follows(&a, i) && im_follows(&b, i),
                    "v%d (%s) is its initial value + the tick count: "
                    "%g at Counter %u, %g at Counter %u", i,
                    i % 2 ? "Double" : "Int32", a.val[i], a.counter,
                    b.val[i], b.counter);
        itest_check(moved >= ticks - 1 && moved <= ticks + 1,
                    "v%d moved by %g, the Counter by %g", i, moved, ticks);
        itest_check(b.src[i] > a.src[i] && b.srv[i] > a.srv[i],
                    "v%d: newer source and server timestamps", i);
    }
    itest_check(a.type[3] == UA_BT_DOUBLE && a.val[3] == 3.5
                    && b.val[3] == 3.5 && a.src[3] == b.src[3]
                    && a.srv[3] == b.srv[3],
                "v3 (not simulated) keeps 3.5 and its timestamps: %g, %g",
                a.val[3], b.val[3]);

    /* 4. Every tick over a subscription. */
    s = uaconn_subscribe1(&c, &im_arena, IM_INTERVAL_MS, 600, 10,
                          ua_nodeid_str(1, "v0"), 0, &csr);
    if (s != UA_GOOD)
        itest_fatal("no subscription on v0: 0x%08X", s);
    im_publish(&c);

    /* 5. The end. */
    uaconn_close(&c);
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    return itest_finish();
}
