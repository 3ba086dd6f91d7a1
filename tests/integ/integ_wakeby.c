/*
 * tests/integ/integ_wakeby.c: a worker's promise to wake by its next
 * publishing tick (worker/link.h wake_by, wk_sub_wake_by, shm/ring.h
 * shm_ring_needs_bell_by), on loopback.
 *
 * Starts `uabroker -w 1` with the simulation changing every WB_SIM_MS and
 * samplingInterval 0 allowed; two clients on the one worker subscribe to
 * ns=1;s=Demo.Simulation.Counter at a WB_PUB_MS publishing interval:
 * A samples every change (samplingInterval 0), B every WB_SAMPLE_MS.  No
 * client writes, so nothing but the blocks and the publishing timer wakes
 * the worker.  For WB_RUN_MS both keep Publish requests in flight.
 *
 * Asserted:
 *   1. A gets every Counter value once, in order, none with the Overflow
 *      bit, and none later than one publishing interval (plus slack)
 *      after the broker stamped it: deferring the bells delays nothing
 *      beyond the tick that publishes it;
 *   2. the broker deferred bells: /stats fanout notif_bells_deferred > 0,
 *      and it rang fewer bells than an 8th of the blocks it published
 *      (without the promise a sleeping worker is rung for every block, and
 *      without sub->hot for the first block of every interval);
 *   3. B's values come one per sampling interval, counted from when the
 *      broker applied each change, not from when the worker drained the
 *      block at its tick: at least WB_B_MIN over the run (a drain-time
 *      clock leaves about one per publishing interval).
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_wakeby: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define WB_SIM_MS     "20"
#define WB_PUB_MS     200
#define WB_SAMPLE_MS  60
#define WB_RUN_MS     3000
#define WB_INFLIGHT   3
#define WB_LATE_MS    (WB_PUB_MS + 150)
#define WB_B_MIN      ((WB_RUN_MS / WB_SAMPLE_MS) * 6 / 10)
#define WB_ARENA      (1u << 20)
#define WB_WATCHDOG_S 60

struct wb_client {
    struct uaconn   c;
    uint32_t        pending;        /* Publish requests in flight */
    struct uaconn_seq q;            /* the Counter's values */
    uint64_t        late;
    int64_t         max_age_ms;
    bool            have_ack;
    struct ua_subscription_acknowledgement ack;
};

static struct ua_arena wb_arena;
static char            wb_dir[PATH_MAX], wb_run[PATH_MAX + 8];
static char            wb_log[PATH_MAX + 16];



static void
wb_publish(struct wb_client *cl)
{
    struct ua_publish_request req;
    uint32_t                  id;

    memset(&req, 0, sizeof(req));
    if (cl->have_ack) {
        req.n_subscription_acknowledgements = 1;
        req.subscription_acknowledgements = &cl->ack;
        cl->have_ack = false;
    }
    if (uaconn_send(&cl->c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id)
        != UA_GOOD)
        itest_fatal("cannot send a Publish request");
    cl->pending++;
}

/* One PublishResponse of cl: count its Counter values. */
static void
wb_take(struct wb_client *cl)
{
    struct ua_client_event                ev;
    struct ua_publish_response            resp;
    const struct ua_notification_message *m;
    ua_status                             s;

    s = uaconn_recv(&cl->c, &ev);
    if (s != UA_GOOD)
        itest_fatal("receive: 0x%08X", s);
    if (ev.kind != UA_CLIENT_EV_MSG)
        return;
    ua_arena_reset(&wb_arena);
    s = ua_client_decode(&cl->c.cl, &ev, &ua_types[UA_TYPE_PUBLISHRESPONSE],
                         &resp, &wb_arena);
    if (s != UA_GOOD || resp.response_header.service_result != UA_GOOD)
        itest_fatal("PublishResponse: 0x%08X / 0x%08X", s,
                    resp.response_header.service_result);
    cl->pending--;
    m = &resp.notification_message;
    if (uaconn_seq_take(&cl->q, m) > 0 && cl->q.oldest_src != INT64_MAX) {
        int64_t age = (ua_datetime_now() - cl->q.oldest_src) / 10000;

        if (age > cl->max_age_ms)
            cl->max_age_ms = age;
        if (age > WB_LATE_MS)
            cl->late++;
    }
    if (m->n_notification_data > 0) {
        cl->ack.subscription_id = resp.subscription_id;
        cl->ack.sequence_number = m->sequence_number;
        cl->have_ack = true;
    }
}

static void
wb_connect(struct wb_client *cl, uint16_t port, double sampling)
{
    struct ua_create_subscription_response csr;
    ua_status                              s = UA_BAD_TIMEOUT;

    memset(cl, 0, sizeof(*cl));
    uaconn_seq_init(&cl->q, UA_BT_UINT32);
    s = uaconn_start_retry(&cl->c, "127.0.0.1", port, 5000);
    if (s != UA_GOOD)
        itest_fatal("no session: 0x%08X", s);
    memset(&csr, 0, sizeof(csr));
    s = uaconn_subscribe1(&cl->c, &wb_arena, WB_PUB_MS, 100, 10,
                          ua_nodeid_str(1, "Demo.Simulation.Counter"),
                          sampling, &csr);
    if (s != UA_GOOD)
        itest_fatal("no subscription (sampling %.0f ms): 0x%08X", sampling,
                    s);
}

static bool
wb_fanout_u64(uint16_t sport, const char *key, uint64_t *out)
{
    char *body = NULL;
    bool  ok;

    if (itest_http(sport, "GET", "/stats", &body) != 200) {
        free(body);
        return false;
    }
    ok = itest_json_u64(itest_json_find(body, "fanout"), key, out);
    free(body);
    return ok;
}

int
main(int argc, char **argv)
{
    struct wb_client a, b;
    char             bin[PATH_MAX];
    uint64_t         blocks0 = 0, blocks1 = 0, bells0 = 0, bells1 = 0;
    uint64_t         def0 = 0, def1 = 0, end;
    uint16_t         oport, sport;
    pid_t            broker;

    itest_init("integ_wakeby");
    (void)argc;
    itest_guard(WB_WATCHDOG_S, wb_log);
    ua_arena_init(&wb_arena, malloc(WB_ARENA), WB_ARENA);
    itest_broker_bin(argv[0], bin, sizeof(bin));
    itest_tmpdir("uabroker-wakeby", wb_dir, sizeof(wb_dir));
    snprintf(wb_run, sizeof(wb_run), "%s/run", wb_dir);
    snprintf(wb_log, sizeof(wb_log), "%s/broker.log", wb_dir);
    {
        const char *const extra[] = {
            "--vars", "10",
            "--set", "addrspace.simulation_interval_ms=" WB_SIM_MS,
            "--set", "limits.min_sampling_interval_ms=0",
            /* The bells counted are the worker's: no historian's. */
            "--set", "history.enabled=false", NULL
        };

        broker = itest_broker_start(bin, 1, wb_run, wb_log, extra, 10000,
                                    &oport, &sport);
    }

    wb_connect(&a, oport, 0);
    wb_connect(&b, oport, WB_SAMPLE_MS);
    for (int i = 0; i < WB_INFLIGHT; i++) {
        wb_publish(&a);
        wb_publish(&b);
    }
    /* Settle (the first messages carry the initial values), then count. */
    end = itest_ms() + 2 * WB_PUB_MS;
    while (itest_ms() < end) {
        wb_take(&a);
        wb_publish(&a);
        wb_take(&b);
        wb_publish(&b);
    }
    a.q.values = a.q.breaks = a.late = 0;
    a.max_age_ms = 0;
    b.q.values = 0;
    if (!wb_fanout_u64(sport, "blocks", &blocks0)
        || !wb_fanout_u64(sport, "notif_bells", &bells0)
        || !wb_fanout_u64(sport, "notif_bells_deferred", &def0))
        itest_fatal("no fanout counters in /stats");
    end = itest_ms() + WB_RUN_MS;
    while (itest_ms() < end) {
        wb_take(&a);
        wb_publish(&a);
        wb_take(&b);
        wb_publish(&b);
    }
    if (!wb_fanout_u64(sport, "blocks", &blocks1)
        || !wb_fanout_u64(sport, "notif_bells", &bells1)
        || !wb_fanout_u64(sport, "notif_bells_deferred", &def1))
        itest_fatal("no fanout counters in /stats");
    printf("# A: %llu values, %llu gaps, %llu overflows, oldest %lld ms; "
           "B (sampling %d ms): %llu values; broker: %llu blocks, %llu "
           "bells, %llu deferred\n",
           (unsigned long long)a.q.values, (unsigned long long)a.q.breaks,
           (unsigned long long)a.q.overflows, (long long)a.max_age_ms,
           WB_SAMPLE_MS, (unsigned long long)b.q.values,
           (unsigned long long)(blocks1 - blocks0),
           (unsigned long long)(bells1 - bells0),
           (unsigned long long)(def1 - def0));

    itest_check(a.q.values >= (WB_RUN_MS / 20) / 2 && a.q.breaks == 0
                    && a.q.overflows == 0 && a.q.src_breaks == 0,
                "every Counter value once, in order, no Overflow bit "
                "(%llu values)", (unsigned long long)a.q.values);
    itest_check(a.late == 0,
                "no value later than %d ms after the broker stamped it "
                "(oldest %lld ms)", WB_LATE_MS, (long long)a.max_age_ms);
    itest_check(def1 > def0, "the broker deferred bells (%llu)",
                (unsigned long long)(def1 - def0));
    /* Without the promise a sleeping worker is rung for every block;
     * without a subscription looking at the tick after the one it
     * published on (sub->hot), for the first block of every interval (a
     * quarter of them here).  An 8th still tells both apart (a quarter
     * is twice it); a 16th failed at its edge under ASan (10 bells, 160
     * blocks) on an idle machine. */
    itest_check(8 * (bells1 - bells0) < blocks1 - blocks0,
                "fewer bells than an 8th of the blocks (%llu bells, %llu "
                "blocks)", (unsigned long long)(bells1 - bells0),
                (unsigned long long)(blocks1 - blocks0));
    itest_check(b.q.values >= WB_B_MIN && b.q.src_breaks == 0,
                "sampling every %d ms counts from the changes: %llu values "
                "(at least %d)", WB_SAMPLE_MS, (unsigned long long)b.q.values,
                WB_B_MIN);
    (void)uaconn_close(&a.c);
    (void)uaconn_close(&b.c);
    uaconn_clear(&a.c);
    uaconn_clear(&b.c);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    return itest_finish();
}
