/*
 * tests/bench/bench_alarm_storm.c: the alarm storm end to end, on
 * loopback: ALARMS exclusive limit alarms (inputs ns=1;s=v0 ..
 * v<ALARMS-1>, high 1e8) on `uabroker -w 2`, SUBS sessions each with an
 * event item on the Server object (six select clauses, queueSize
 * ALARMS), then one writer sends ALARMS values over High in Write
 * requests of 1,000 (pipelined: all of them within a fraction of a
 * second), and every subscriber publishes (three Publish requests in
 * flight each) until it has ALARMS condition events.
 *
 *   build/tests/bench/bench_alarm_storm [ALARMS [SUBS]] [--markdown FILE]
 *                                       (default 10000 20)
 *
 * Before the storm, with every alarm inactive (none retained), one more
 * session calls ConditionRefresh on its own event item REFRESHES times
 * (Part 9 §5.5.7): the time per call (the worker answers the Call after
 * it queued RefreshStart, the retained conditions and RefreshEnd) and
 * the server CPU per call; then it closes its session.
 *
 * Prints: the time from the first Write sent to the last event received;
 * the server's CPU (broker and workers, utime + stime from /proc) per
 * delivered event; the heap allocations of the broker and the workers
 * meanwhile (/stats).  The client runs in this process: its own CPU is
 * not counted, but on a 2-core machine it competes with the server, so
 * the time is an upper bound.  --markdown FILE replaces the text between
 * <!-- bench-alarm-storm:begin --> and <!-- bench-alarm-storm:end -->.
 */
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/bench/benchlib.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define BS_WORKERS  2
#define BS_BATCH    1000u
#define BS_INFLIGHT 3
#define BS_ARENA    (8u << 20)
#define BS_WAIT_MS  120000
#define BS_REFRESHES 200

#define BS_MARK_BEGIN "<!-- bench-alarm-storm:begin -->"
#define BS_MARK_END   "<!-- bench-alarm-storm:end -->"

struct bs_res {
    uint32_t alarms, subs;
    double   ms, cpu_ns_per_event;
    uint64_t events, broker_allocs, worker_allocs;
    double   refresh_us, refresh_cpu_us;    /* per ConditionRefresh */
};

static char            bs_dir[PATH_MAX];
static char            bs_log[PATH_MAX + 16];
static char            bs_bin[PATH_MAX];
static struct ua_arena bs_arena;

/* utime + stime of pid, in ns. */
static uint64_t
bs_cpu(pid_t pid)
{
    char               path[64], buf[1024], *p;
    unsigned long long ut = 0, st = 0;
    FILE              *f;
    size_t             n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
                            "%*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (ut + st) * (1000000000ull / (unsigned long long)sysconf(
                                             _SC_CLK_TCK));
}

/* The server's CPU and allocations now. */
static void
bs_sample(pid_t broker, uint16_t sport, uint64_t *cpu, uint64_t *ballocs,
          uint64_t *wallocs)
{
    char *body = NULL;

    *cpu = bs_cpu(broker);
    *ballocs = *wallocs = 0;
    if (itest_http(sport, "GET", "/stats", &body) == 200 && body != NULL)
        (void)itest_json_u64(body, "allocations", ballocs);
    free(body);
    for (int w = 0; w < BS_WORKERS; w++) {
        uint64_t pid = 0, a = 0;

        if (itest_worker_u64(sport, w, "pid", &pid))
            *cpu += bs_cpu((pid_t)pid);
        if (itest_worker_u64(sport, w, "allocations", &a))
            *wallocs += a;
    }
}

/* An event item on the Server for c, queueSize q: its subscription's
 * id. */
static uint32_t
bs_subscribe(struct uaconn *c, uint32_t q)
{
    static struct ua_simple_attribute_operand ops[6];
    static struct ua_qualifiedname            qn[6];
    static const char *const names[6] = { "EventId", "EventType",
                                          "SourceNode", "Severity",
                                          "Message", "ConditionName" };
    struct ua_event_filter                    ef;
    struct ua_create_subscription_request     cs;
    struct ua_create_subscription_response    csr;
    struct ua_create_monitored_items_request  cm;
    struct ua_create_monitored_items_response cmr;
    struct ua_monitored_item_create_request   it;

    for (int i = 0; i < 6; i++) {
        memset(&ops[i], 0, sizeof(ops[i]));
        qn[i].ns = 0;
        qn[i].name = ua_string_from(names[i]);
        ops[i].type_definition_id = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
        ops[i].n_browse_path = 1;
        ops[i].browse_path = &qn[i];
        ops[i].attribute_id = UA_ATTR_VALUE;
        ops[i].index_range.len = -1;
    }
    memset(&ef, 0, sizeof(ef));
    ef.n_select_clauses = 6;
    ef.select_clauses = ops;
    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = 20;
    cs.requested_lifetime_count = 3000;
    cs.requested_max_keep_alive_count = 100;
    cs.publishing_enabled = true;
    ua_arena_reset(&bs_arena);
    if (uaconn_call(c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST], &cs,
                    &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE], &csr,
                    &bs_arena) != UA_GOOD)
        itest_fatal("CreateSubscription");
    memset(&it, 0, sizeof(it));
    it.item_to_monitor.node_id = ua_nodeid_num(0, UA_NS0ID_SERVER);
    it.item_to_monitor.attribute_id = UA_ATTR_EVENTNOTIFIER;
    it.item_to_monitor.index_range.len = -1;
    it.item_to_monitor.data_encoding.name.len = -1;
    it.monitoring_mode = UA_MONITORINGMODE_REPORTING;
    it.requested_parameters.client_handle = 1;
    it.requested_parameters.queue_size = q;
    it.requested_parameters.discard_oldest = true;
    it.requested_parameters.filter.type_id =
        ua_nodeid_num(0, UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
    it.requested_parameters.filter.encoding = UA_EO_DECODED;
    it.requested_parameters.filter.type = &ua_types[UA_TYPE_EVENTFILTER];
    it.requested_parameters.filter.obj = &ef;
    memset(&cm, 0, sizeof(cm));
    cm.subscription_id = csr.subscription_id;
    cm.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
    cm.n_items_to_create = 1;
    cm.items_to_create = &it;
    if (uaconn_call(c, &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST], &cm,
                    &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE], &cmr,
                    &bs_arena) != UA_GOOD
        || cmr.n_results != 1 || cmr.results[0].status_code != UA_GOOD)
        itest_fatal("CreateMonitoredItems");
    return csr.subscription_id;
}

/* ConditionRefresh, n times, by a session of its own on an event item of
 * its own: wall time and server CPU per call into r. */
static void
bs_refresh(uint16_t oport, uint16_t sport, pid_t broker, uint32_t q,
           uint32_t n, struct bs_res *r)
{
    struct uaconn                 c;
    struct ua_call_request        req;
    struct ua_call_response       resp;
    struct ua_call_method_request m;
    struct ua_variant             arg;
    uint32_t                      sub;
    uint64_t                      cpu0, cpu1, a, b, t0, t1;

    if (uaconn_start_retry(&c, "127.0.0.1", oport, 30000) != UA_GOOD)
        itest_fatal("refresher: no session");
    sub = bs_subscribe(&c, q);
    memset(&m, 0, sizeof(m));
    m.object_id = ua_nodeid_num(0, UA_NS0ID_CONDITIONTYPE);
    m.method_id = ua_nodeid_num(0, UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH);
    ua_variant_set_scalar(&arg, &sub, UA_BT_UINT32);
    m.n_input_arguments = 1;
    m.input_arguments = &arg;
    memset(&req, 0, sizeof(req));
    req.n_methods_to_call = 1;
    req.methods_to_call = &m;
    bs_sample(broker, sport, &cpu0, &a, &b);
    t0 = benchlib_now();
    for (uint32_t i = 0; i < n; i++) {
        ua_arena_reset(&bs_arena);
        if (uaconn_call(&c, &ua_types[UA_TYPE_CALLREQUEST], &req,
                        &ua_types[UA_TYPE_CALLRESPONSE], &resp, &bs_arena)
                != UA_GOOD
            || resp.n_results != 1 || resp.results[0].status_code != UA_GOOD)
            itest_fatal("ConditionRefresh");
    }
    t1 = benchlib_now();
    bs_sample(broker, sport, &cpu1, &a, &b);
    r->refresh_us = (double)(t1 - t0) / 1e3 / (double)n;
    r->refresh_cpu_us = (double)(cpu1 - cpu0) / 1e3 / (double)n;
    (void)uaconn_close_session(&c);
    (void)uaconn_close(&c);
    uaconn_clear(&c);
}

/* A Publish with the acknowledgement ack (seq 0: none). */
static void
bs_publish(struct uaconn *c, struct ua_subscription_acknowledgement *ack)
{
    struct ua_publish_request req;
    uint32_t                  id;

    memset(&req, 0, sizeof(req));
    if (ack != NULL && ack->sequence_number != 0) {
        req.n_subscription_acknowledgements = 1;
        req.subscription_acknowledgements = ack;
    }
    if (uaconn_send(c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id)
        != UA_GOOD)
        itest_fatal("Publish: send");
}

static void
bs_markdown(FILE *f, void *ctx)
{
    const struct bs_res *r = ctx;
    char                 date[16], mach[64];

    benchlib_stamp(date, sizeof(date), mach, sizeof(mach));
    fprintf(f, "Measured %s (UTC) on %s (`make bench-alarm-storm`). "
            "Machine: %s. `uabroker -w 2`, the client in one process on "
            "the same 2 cores (its CPU not counted; the time is an upper "
            "bound).\n\n", date, mach, BENCHLIB_MACHINE);
    fprintf(f, "| alarms going active | subscribers of the Server | events "
            "delivered | first Write to last event | server CPU per "
            "delivered event | heap allocations (broker + workers) |\n"
            "|---:|---:|---:|---:|---:|---:|\n");
    fprintf(f, "| %u | %u | %llu | %.0f ms | %.0f ns | %llu + %llu |\n",
            r->alarms, r->subs, (unsigned long long)r->events, r->ms,
            r->cpu_ns_per_event, (unsigned long long)r->broker_allocs,
            (unsigned long long)r->worker_allocs);
    fprintf(f, "\nConditionRefresh before the storm (%u conditions, none "
            "retained; %d calls): **%.0f µs** per call (round trip), "
            "%.0f µs of server CPU per call.\n", r->alarms, BS_REFRESHES,
            r->refresh_us, r->refresh_cpu_us);
}

int
main(int argc, char **argv)
{
    struct uaconn   *subs, wr;
    struct bs_res    res;
    const char      *md = NULL;
    char             conf[PATH_MAX + 16], qset[64], vset[64];
    uint32_t         nal = 10000, nsub = 20, *got;
    struct ua_subscription_acknowledgement *acks;
    uint16_t         oport, sport;
    uint64_t         cpu0, cpu1, ba0, ba1, wa0, wa1, t0, tlast = 0, done = 0;
    pid_t            broker;
    FILE            *f;
    int              pos = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0 && i + 1 < argc)
            md = argv[++i];
        else if (pos++ == 0)
            nal = (uint32_t)strtoul(argv[i], NULL, 10);
        else
            nsub = (uint32_t)strtoul(argv[i], NULL, 10);
    }
    if (nal < 1 || nal > 100000 || nsub < 1 || nsub > 200)
        itest_fatal("ALARMS 1..100000, SUBS 1..200");
    itest_init("bench_alarm_storm");
    ua_arena_init(&bs_arena, malloc(BS_ARENA), BS_ARENA);
    itest_broker_bin(argv[0], bs_bin, sizeof(bs_bin));
    itest_tmpdir("uabroker-storm", bs_dir, sizeof(bs_dir));
    snprintf(bs_log, sizeof(bs_log), "%s/broker.log", bs_dir);
    snprintf(conf, sizeof(conf), "%s/storm.conf", bs_dir);
    f = fopen(conf, "w");
    if (f == NULL)
        itest_fatal("cannot write %s", conf);
    for (uint32_t i = 0; i < nal; i++)
        fprintf(f, "[alarm A%u]\ntype = exclusive_limit\ninput = ns=1;s=v%u\n"
                "high = 100000000\nseverity = 600\n", i, i);
    fclose(f);
    snprintf(qset, sizeof(qset), "limits.max_event_queue_size=%u",
             nal < 100000 ? nal + 10 : 100000);
    snprintf(vset, sizeof(vset), "addrspace.vars=%u", nal);
    {
        const char *const extra[] = {
            "-c", conf, "--set", qset, "--set", vset, "--set",
            "security.anonymous_write=true", "--set",
            "limits.max_sessions=250", "--set",
            "limits.max_secure_channels=260", "--set",
            "fanout.blocks=16384", NULL
        };

        broker = itest_broker_start(bs_bin, BS_WORKERS, bs_dir, bs_log, extra,
                                    60000, &oport, &sport);
    }
    subs = calloc(nsub, sizeof(*subs));
    got = calloc(nsub, sizeof(*got));
    acks = calloc(nsub, sizeof(*acks));
    if (subs == NULL || got == NULL || acks == NULL)
        itest_fatal("out of memory");
    for (uint32_t i = 0; i < nsub; i++) {
        if (uaconn_start_retry(&subs[i], "127.0.0.1", oport, 30000)
            != UA_GOOD)
            itest_fatal("subscriber %u: no session", i);
        subs[i].timeout_ms = BS_WAIT_MS;
        (void)bs_subscribe(&subs[i], nal);
    }
    if (uaconn_start_retry(&wr, "127.0.0.1", oport, 30000) != UA_GOOD)
        itest_fatal("writer: no session");
    for (uint32_t i = 0; i < nsub; i++)
        for (int k = 0; k < BS_INFLIGHT; k++)
            bs_publish(&subs[i], NULL);
    itest_sleep_ms(500);
    memset(&res, 0, sizeof(res));
    bs_refresh(oport, sport, broker, nal, BS_REFRESHES, &res);
    itest_sleep_ms(300);
    bs_sample(broker, sport, &cpu0, &ba0, &wa0);

    /* The storm: every Write request sent, then the answers. */
    t0 = benchlib_now();
    {
        struct ua_write_value *wv = calloc(BS_BATCH, sizeof(*wv));
        double                 d = 2e8;
        int32_t                x = 200000000;
        uint32_t               nreq = 0, id;

        if (wv == NULL)
            itest_fatal("out of memory");
        for (uint32_t i = 0; i < nal; i += BS_BATCH) {
            struct ua_write_request req;
            uint32_t n = nal - i < BS_BATCH ? nal - i : BS_BATCH;
            char     name[16];

            for (uint32_t k = 0; k < n; k++) {
                snprintf(name, sizeof(name), "v%u", i + k);
                memset(&wv[k], 0, sizeof(wv[k]));
                wv[k].node_id = ua_nodeid_str(1, strdup(name));
                wv[k].attribute_id = UA_ATTR_VALUE;
                wv[k].index_range.len = -1;
                wv[k].value.mask = UA_DV_VALUE;
                if ((i + k) % 2 == 0)
                    ua_variant_set_scalar(&wv[k].value.value, &x,
                                          UA_BT_INT32);
                else
                    ua_variant_set_scalar(&wv[k].value.value, &d,
                                          UA_BT_DOUBLE);
            }
            memset(&req, 0, sizeof(req));
            req.n_nodes_to_write = (int32_t)n;
            req.nodes_to_write = wv;
            if (uaconn_send(&wr, &ua_types[UA_TYPE_WRITEREQUEST], &req, &id)
                != UA_GOOD)
                itest_fatal("Write: send");
            nreq++;
        }
        (void)nreq;
    }
    /* The subscribers until each has every event. */
    while (done < nsub && benchlib_now() - t0 < BS_WAIT_MS * 1000000ull) {
        struct pollfd pf[200];
        int           buffered = 0;

        /* A connection may hold bytes it read ahead (uaconn's buffer):
         * ready without the socket saying so. */
        for (uint32_t i = 0; i < nsub; i++) {
            pf[i].fd = subs[i].fd;
            pf[i].events = POLLIN;
            pf[i].revents = 0;
            if (subs[i].rlen > subs[i].rskip && got[i] < nal) {
                pf[i].revents = POLLIN;
                buffered++;
            }
        }
        if (buffered == 0 && poll(pf, nsub, 1000) <= 0)
            continue;
        for (uint32_t i = 0; i < nsub; i++) {
            struct ua_client_event     ev;
            struct ua_publish_response r;
            const struct ua_notification_message *m;

            if (!(pf[i].revents & POLLIN) || got[i] >= nal)
                continue;
            if (uaconn_recv(&subs[i], &ev) != UA_GOOD)
                itest_fatal("subscriber %u: receive", i);
            if (ev.kind != UA_CLIENT_EV_MSG)
                continue;
            ua_arena_reset(&bs_arena);
            if (ua_client_decode(&subs[i].cl, &ev,
                                 &ua_types[UA_TYPE_PUBLISHRESPONSE], &r,
                                 &bs_arena) != UA_GOOD)
                continue;
            m = &r.notification_message;
            acks[i].subscription_id = r.subscription_id;
            acks[i].sequence_number = m->n_notification_data > 0
                                          ? m->sequence_number : 0;
            for (int32_t k = 0; k < m->n_notification_data; k++)
                if (m->notification_data[k].type
                    == &ua_types[UA_TYPE_EVENTNOTIFICATIONLIST])
                    got[i] += (uint32_t)((const struct
                                          ua_event_notification_list *)
                                             m->notification_data[k].obj)
                                  ->n_events;
            if (got[i] >= nal) {
                done++;
                tlast = benchlib_now();
            } else {
                bs_publish(&subs[i], &acks[i]);
            }
        }
    }
    itest_sleep_ms(300);
    bs_sample(broker, sport, &cpu1, &ba1, &wa1);
    res.alarms = nal;
    res.subs = nsub;
    for (uint32_t i = 0; i < nsub; i++)
        res.events += got[i] < nal ? got[i] : nal;
    res.ms = tlast != 0 ? (double)(tlast - t0) / 1e6 : -1;
    res.cpu_ns_per_event = res.events != 0 ? (double)(cpu1 - cpu0)
                                                 / (double)res.events
                                           : 0;
    res.broker_allocs = ba1 - ba0;
    res.worker_allocs = wa1 - wa0;
    printf("storm: %u alarms, %u subscribers: %llu events delivered, last "
           "after %.0f ms, server CPU %.0f ns per delivered event, "
           "allocations broker %llu workers %llu; ConditionRefresh "
           "(none retained) %.0f us per call, server CPU %.0f us\n", nal,
           nsub, (unsigned long long)res.events, res.ms,
           res.cpu_ns_per_event, (unsigned long long)res.broker_allocs,
           (unsigned long long)res.worker_allocs, res.refresh_us,
           res.refresh_cpu_us);
    itest_check(done == nsub, "every subscriber got every event (%llu of "
                "%llu)", (unsigned long long)res.events,
                (unsigned long long)nal * nsub);
    if (md != NULL)
        (void)benchlib_markdown(md, BS_MARK_BEGIN, BS_MARK_END, bs_markdown,
                                &res);
    (void)itest_stop(broker, 10000);
    return itest_finish();
}
