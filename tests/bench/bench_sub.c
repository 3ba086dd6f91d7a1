/*
 * tests/bench/bench_sub.c: the worker's notification path in memory, the
 * shape of bench_server.sh's `sub` row without sockets, broker or kernel:
 * SUBS subscriptions of one session, each with ITEMS items on the same
 * ITEMS variables (samplingInterval 0, queueSize 100, discardOldest), a
 * 100 ms publishing interval; every round each variable changes once (one
 * record, as a notification block carries it, to wk_mi_on_value), and
 * every ROUNDS rounds the publishing timers run with a Publish request
 * queued per subscription.  A PublishResponse is encoded (ua_encode, as
 * the connection does before it is sent) and dropped.
 *
 *   build/bench/bench_sub [ITEMS [SUBS [ROUNDS [TICKS [POLLUTE_KB
 *                         [events]]]]]]
 *                         (default 100 20 5 400 0: 4 million notifications)
 *   build/bench/bench_sub find [N]   (below: bs_find)
 *
 * With `events`, each subscription has one event item on the Server
 * instead (an EventFilter of six select clauses, queueSize 1000) and
 * every round raises ITEMS events (records as the broker builds them,
 * broker/event.c, handed to wk_ev_on_event): the CPU time per
 * delivered event, matching and field picking included.
 *
 * POLLUTE_KB > 0 writes that many KiB of other memory before each round
 * and each Publish (outside the timed parts): what the sockets, the
 * kernel and the broker do to the caches between them in a real server,
 * where this path runs with its data mostly out of L1/L2.
 *
 * Prints the process CPU time per delivered notification for the fan-out
 * (records to queues) and for Publish (queues to encoded responses).
 * Under `valgrind --tool=callgrind` the instruction counts of
 * wk_mi_on_value and wk_sub_run divided by the notifications printed
 * are the worker's instructions per notification on this path.
 *
 * Uses the worker unit tests' fixture (tests/unit/worker/sub_fixture.h):
 * the real address space built by the broker's builder, the real
 * services; only the connection layer is replaced.
 */
#include "tests/unit/worker/sub_fixture.h"

#include <stdlib.h>
#include <time.h>

#include "tests/unit/worker/event_fixture.h"
#include "worker/node.h"
#include "worker/sub_int.h"

#define CH (&fx.ch[0])

static struct ua_nodeid bs_tok;
static uint8_t         *bs_out;
static size_t           bs_out_cap = 16u << 20;
static uint64_t         bs_notifs;
static uint64_t         bs_responses;
static bool
bs_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    (void)w;
    (void)ref;
    return true;
}

/* Encode the response as the connection would, count what it carries. */
static int
bs_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
           const struct ua_type *t, void *resp)
{
    struct ua_publish_response *p = resp;
    size_t                      len;
    int32_t                     n = 0;

    (void)w;
    (void)ref;
    if (ua_encode(resp, t, bs_out, bs_out_cap, &len) != UA_GOOD) {
        fprintf(stderr, "bench_sub: a response does not encode\n");
        exit(1);
    }
    if (t == &ua_types[UA_TYPE_PUBLISHRESPONSE]
        && p->notification_message.n_notification_data == 1)
        memcpy(&n, p->notification_message.notification_data[0].body.data,
               4);
    bs_notifs += (uint64_t)n;
    bs_responses++;
    return 0;
}

static const struct wk_reply_hook bs_hook = { bs_respond, bs_alive };

static void
bs_tweak(struct shm_config *c)
{
    c->min_sampling_interval_ms = 0;
    c->max_subscriptions_per_session = 100;
    c->max_publish_requests_per_session = 100;
    c->max_event_queue_size = 1000;
}

static bool bs_events;

/* The item on the Server with a six-field EventFilter. */
static void
bs_event_item(uint32_t sub, uint32_t handle)
{
    static const char *const names[6] = { "EventId", "EventType",
                                          "SourceNode", "Time", "Message",
                                          "Severity" };
    static struct ua_simple_attribute_operand ops[6];
    static struct ua_qualifiedname            qn[6];
    static struct ua_event_filter             ef;
    struct sf_mi p = { .attr = UA_ATTR_EVENTNOTIFIER, .mode = -1,
                       .ttr = -1, .queue = 1000, .discard_oldest = true };

    for (int k = 0; k < 6; k++) {
        memset(&ops[k], 0, sizeof(ops[k]));
        qn[k].name = ua_string_from(names[k]);
        ops[k].n_browse_path = 1;
        ops[k].browse_path = &qn[k];
        ops[k].attribute_id = UA_ATTR_VALUE;
        ops[k].index_range.len = -1;
    }
    ef.n_select_clauses = 6;
    ef.select_clauses = ops;
    p.filter.type_id = ua_nodeid_num(
        0, UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
    p.filter.encoding = UA_EO_DECODED;
    p.filter.type = &ua_types[UA_TYPE_EVENTFILTER];
    p.filter.obj = &ef;
    sf_item(CH, &bs_tok, sub, ua_nodeid_num(0, UA_NS0ID_SERVER), handle, &p);
}

static double
bs_cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One record of slot: a Double, both timestamps (the broker's shape). */
static uint32_t
bs_record(uint8_t *rec, double d, int64_t ts)
{
    uint32_t len = 0;

    rec[len++] = UA_DV_VALUE | UA_DV_SOURCE_TS | UA_DV_SERVER_TS;
    rec[len++] = UA_BT_DOUBLE;
    memcpy(rec + len, &d, 8);
    len += 8;
    memcpy(rec + len, &ts, 8);
    len += 8;
    memcpy(rec + len, &ts, 8);
    len += 8;
    return len;
}

static unsigned bs_items = 100, bs_subs = 20, bs_rounds = 5, bs_ticks = 400;
static size_t   bs_pollute;             /* bytes */
static uint8_t *bs_junk;

/* Evict this path's data from the caches (not timed). */
static void
bs_evict(void)
{
    static uint8_t k;

    /* A store to every line, one at a time: a memset of the same size
     * (rep stos) left this path almost as fast as no pollution at all
     * (fan-out 13 ns against 10; this way 22-27, the real server 30-55). */
    k++;
    for (size_t i = 0; i < bs_pollute; i += 64)
        bs_junk[i] = (uint8_t)(bs_junk[i] + k);
}
static int      bs_rc;

/* The fixture asserts with Check: the run is one test, not forked. */
START_TEST(bs_run)
{
    unsigned     items = bs_items, subs = bs_subs, rounds = bs_rounds;
    unsigned     ticks = bs_ticks;
    uint32_t    *slot;
    struct sf_mi p = { .mode = -1, .ttr = -1, .queue = 100,
                       .discard_oldest = true, .sampling = 0 };
    double       t_fan = 0, t_pub = 0, t0;
    uint64_t     base;
    uint8_t      rec[64];
    static uint8_t  evrec[100][512];
    static uint32_t evlen[100];

    bs_out = malloc(bs_out_cap);
    slot = calloc(items, sizeof(*slot));
    ck_assert(bs_out != NULL && slot != NULL);
    sf_setup_with(bs_tweak);
    bs_tok = fx_session(CH);
    for (unsigned s = 0; s < subs; s++) {
        uint32_t sub = sf_create_sub(CH, &bs_tok, 100);

        if (bs_events) {
            bs_event_item(sub, s);
            continue;
        }
        for (unsigned i = 0; i < items; i++)
            sf_item(CH, &bs_tok, sub, sf_var(i), s * items + i, &p);
    }
    for (unsigned i = 0; i < items; i++)
        slot[i] = sf_slot(sf_var(i));
    fx.w.reply_hook = &bs_hook;
    /* The initial values go out first, not counted. */
    for (unsigned s = 0; s < subs; s++)
        sf_publish(CH, &bs_tok);
    sf_tick(100);
    base = bs_notifs;
    for (unsigned t = 0; t < ticks; t++) {
        for (unsigned s = 0; s < subs; s++)
            sf_publish(CH, &bs_tok);
        for (unsigned r = 0; r < rounds; r++) {
            /* The broker's part (building each record, once for every
             * worker) is not timed. */
            for (unsigned i = 0; i < items && bs_events; i++) {
                struct fx_event  e;
                struct ua_nodeid srv = ua_nodeid_num(0, UA_NS0ID_SERVER);
                struct ua_nodeid bt = ua_nodeid_num(0,
                                                    UA_NS0ID_BASEEVENTTYPE);

                fx_event_begin(&e, evrec[i], sizeof(evrec[i]),
                               wk_node_lookup(&fx.w, &srv),
                               wk_node_lookup(&fx.w, &bt));
                (void)fx_event_std(&e, &fx.w.ns, fx.w.now_dt,
                                   (uint16_t)(1 + i));
                evlen[i] = e.len;
            }
            bs_evict();
            t0 = bs_cpu();
            fx.w.now_dt += 10000;
            for (unsigned i = 0; i < items && bs_events; i++)
                wk_ev_on_event(fx.w.subs, evrec[i], evlen[i]);
            for (unsigned i = 0; i < items && !bs_events; i++) {
                uint32_t len = bs_record(rec, (double)(t * rounds + r) + i,
                                         fx.w.now_dt);

                wk_mi_on_value(fx.w.subs, slot[i], rec, len);
            }
            t_fan += bs_cpu() - t0;
        }
        bs_evict();
        t0 = bs_cpu();
        sf_tick(100);
        t_pub += bs_cpu() - t0;
    }
    bs_notifs -= base;
    printf("bench_sub: %u subscriptions x %u %s, %u changes per item "
           "per publish: %llu notifications in %llu responses\n",
           subs, items, bs_events ? "events (one event item each)"
                                  : "items",
           rounds, (unsigned long long)bs_notifs,
           (unsigned long long)bs_responses);
    if (bs_notifs != (uint64_t)ticks * rounds * items * subs) {
        fprintf(stderr, "bench_sub: expected %llu notifications\n",
                (unsigned long long)ticks * rounds * items * subs);
        bs_rc = 1;
    }
    printf("bench_sub: cpu ns per notification: fan-out %.1f, publish "
           "%.1f, total %.1f\n", t_fan * 1e9 / (double)bs_notifs,
           t_pub * 1e9 / (double)bs_notifs,
           (t_fan + t_pub) * 1e9 / (double)bs_notifs);
    sf_teardown();
    free(slot);
    free(bs_out);
}
END_TEST

/*
 * `bench_sub find [N]`: the lookup of a Publish acknowledgement's
 * subscription while the worker holds N subscriptions (default 1,000) of
 * which half came from another worker (worker/sub_roam.c): CPU ns per
 * wk_sub_find of a moved one (the table), and per the scan of the pool
 * that wk_sub_find did before (reproduced here, as it was).
 */
static unsigned bs_find_n;

static void
bs_find_tweak(struct shm_config *c)
{
    c->max_subscriptions = bs_find_n;
    c->max_subscriptions_per_session = bs_find_n;
}

static struct wk_sub *
bs_find_scan(struct wk_subs *st, uint32_t id)
{
    for (uint32_t i = 0; i < st->subs_hw; i++)
        if (st->subs[i].used && st->subs[i].moved && st->subs[i].id == id)
            return &st->subs[i];
    return NULL;
}

START_TEST(bs_find)
{
    unsigned        n = bs_find_n, rounds = 20000000 / n;
    uint32_t       *ids = calloc(n, sizeof(*ids));
    struct wk_subs *st;
    uintptr_t       sum = 0;
    double          t0, t_tab, t_scan;
    unsigned        nm = 0;

    ck_assert(ids != NULL);
    sf_setup_with(bs_find_tweak);
    bs_tok = fx_session(CH);
    st = wk_subs_get(&fx.w);
    for (unsigned i = 0; i < n; i++) {
        struct wk_sub *sub = wk_sub_find(st, sf_create_sub(CH, &bs_tok,
                                                           100));

        ck_assert(sub != NULL);
        if (i % 2 == 1) {
            sub->id = (9u << 26) | (i * 977u + 1);
            wk_sub_moved_add(st, sub);
            ids[nm++] = sub->id;
        }
    }
    t0 = bs_cpu();
    for (unsigned r = 0; r < rounds; r++)
        for (unsigned i = 0; i < nm; i++)
            sum += (uintptr_t)wk_sub_find(st, ids[i]);
    t_tab = bs_cpu() - t0;
    t0 = bs_cpu();
    for (unsigned r = 0; r < rounds / 100 + 1; r++)
        for (unsigned i = 0; i < nm; i++)
            sum -= (uintptr_t)bs_find_scan(st, ids[i]);
    t_scan = bs_cpu() - t0;
    printf("bench_sub find: %u subscriptions, %u moved: cpu ns per lookup "
           "of a moved one: table %.1f, scan (before) %.1f (%s)\n", n, nm,
           t_tab * 1e9 / ((double)rounds * nm),
           t_scan * 1e9 / ((double)(rounds / 100 + 1) * nm),
           sum != 0 ? "ok" : "?");
    sf_teardown();
    free(ids);
}
END_TEST

int
main(int argc, char **argv)
{
    Suite   *s = suite_create("bench_sub");
    TCase   *tc = tcase_create("run");
    SRunner *sr;
    int      failed;

    if (argc > 1 && strcmp(argv[1], "find") == 0) {
        bs_find_n = argc > 2 ? (unsigned)atoi(argv[2]) : 1000;
        if (bs_find_n < 2 || bs_find_n > 100000)
            return 2;
        tcase_add_test(tc, bs_find);
        goto run;
    }
    if (argc > 1)
        bs_items = (unsigned)atoi(argv[1]);
    if (argc > 2)
        bs_subs = (unsigned)atoi(argv[2]);
    if (argc > 3)
        bs_rounds = (unsigned)atoi(argv[3]);
    if (argc > 4)
        bs_ticks = (unsigned)atoi(argv[4]);
    if (argc > 5)
        bs_pollute = (size_t)atoi(argv[5]) << 10;
    if (argc > 6)
        bs_events = strcmp(argv[6], "events") == 0;
    if (bs_pollute > 0 && (bs_junk = malloc(bs_pollute)) == NULL)
        return 1;
    if (bs_items == 0 || bs_items > 100 || bs_subs == 0 || bs_subs > 100
        || bs_rounds == 0 || bs_ticks == 0) {
        fprintf(stderr, "usage: bench_sub [ITEMS<=100 [SUBS<=100 [ROUNDS "
                        "[TICKS [POLLUTE_KB]]]]]\n");
        return 2;
    }
    tcase_add_test(tc, bs_run);
run:
    tcase_set_timeout(tc, 0);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(bs_junk);
    return failed != 0 || bs_rc != 0 ? 1 : 0;
}
