/*
 * tests/bench/bench_mem.c: the worker's memory per session, subscription
 * and monitored item (issue 19), measured on the real worker code in one
 * process (the worker unit tests' fixture on big.seg, 150,000 variables;
 * no sockets, no broker).  Two measures:
 *
 *   reserved  heap bytes the worker's pools take per configured slot:
 *             the pools (worker/session.c, worker/sub.c) allocated again
 *             with one limit raised by N, the growth of malloc's count
 *             (mallinfo2: in use + mmapped) divided by N.  This is what
 *             the defaults cost at start-up, backed or not.
 *   touched   resident anonymous bytes (RssAnon, /proc/self/status) that
 *             N live objects add:
 *             N activated sessions, N idle subscriptions, N monitored
 *             items at rest (their initial values published), then
 *             queueSize 100 with 100 values queued in each item.
 *
 * Every item watches a variable of its own, so no value is shared: the
 * worst case for queued values (K items on one variable share each value,
 * worker/monitem_queue.c).
 *
 *   build/bench/bench_mem [N]        (default 10000; make bench-mem)
 *
 * Prints one line per figure; docs/benchmarks.md "Sessions: memory and
 * admission (issue 19)" has them.
 */
#include "tests/unit/worker/sub_fixture.h"

#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include "worker/conn.h"
#include "worker/sub_int.h"

#define CH (&fx.ch[0])

static unsigned bm_n = 10000;
static int      bm_rc;

static bool
bm_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    (void)w;
    (void)ref;
    return true;
}

/* Publish responses are dropped: only the memory they free matters. */
static int
bm_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
           const struct ua_type *t, void *resp)
{
    (void)w;
    (void)ref;
    (void)t;
    (void)resp;
    return 0;
}

static const struct wk_reply_hook bm_hook = { bm_respond, bm_alive };

/* Heap bytes malloc holds for the program (in use + mmapped blocks). */
static double
bm_heap(void)
{
    struct mallinfo2 m = mallinfo2();

    return (double)m.uordblks + (double)m.hblkhd;
}

/* Resident anonymous bytes of the process (RssAnon: the heap, not the
 * segment's shared pages, which every worker maps once for all). */
static double
bm_rss(void)
{
    char          line[256];
    unsigned long kb = 0;
    FILE         *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "RssAnon: %lu kB", &kb) == 1)
            break;
    fclose(f);
    return (double)kb * 1024.0;
}

static struct shm_config *
bm_conf(void)
{
    return (struct shm_config *)fx.w.conf;
}

/* The session and subscription pools allocated again for the snapshot. */
static double
bm_pools(void)
{
    double h0;

    wk_sub_fini(&fx.w);
    wk_session_fini(&fx.w);
    h0 = bm_heap();
    ck_assert_int_eq(wk_session_init(&fx.w), 0);
    ck_assert_int_eq(wk_sub_init(&fx.w), 0);
    return bm_heap() - h0;
}

/* Bytes per slot of one limit: the pools with *lim and *lim + n. */
static double
bm_reserved(uint32_t *lim, uint32_t n)
{
    uint32_t was = *lim;
    double   a, b;

    a = bm_pools();
    *lim = was + n;
    b = bm_pools();
    *lim = was;
    bm_pools();
    return (b - a) / n;
}

static void
bm_tweak(struct shm_config *c)
{
    c->max_sessions = bm_n + 10;
    c->max_subscriptions = bm_n + 10;
    c->max_subscriptions_per_session = bm_n + 10;
    c->max_monitored_items = bm_n + 10;
    c->max_monitored_items_per_subscription = bm_n + 10;
    c->max_monitored_items_per_call = bm_n + 10;
    c->max_publish_requests_per_session = 20;
    c->max_notifications_per_publish = 100000;
    c->max_monitored_item_queue_size = 1000;
    c->min_sampling_interval_ms = 0;
    /* 100 values queued in each of n items must fit. */
    c->max_queued_values = 101 * bm_n + 1024;
}

/* Publish until nothing is queued; *m the accounting after. */
static void
bm_drain(const struct ua_nodeid *tok, struct wk_sub_mem *m)
{
    wk_sub_mem(&fx.w, m);
    for (int k = 0; k < 100000 && m->entries_used > 0; k++) {
        sf_publish(CH, tok);
        sf_tick(1000);
        wk_sub_mem(&fx.w, m);
    }
    for (int k = 0; k < 3; k++) {
        sf_publish(CH, tok);
        sf_tick(1000);
    }
    wk_sub_mem(&fx.w, m);
    if (m->entries_used != 0)
        bm_rc = 1;
}

START_TEST(bm_run)
{
    struct shm_config *c;
    struct ua_nodeid   tok, other;
    struct sf_mi       p = { .mode = -1, .ttr = -1, .queue = 100,
                             .discard_oldest = true };
    uint32_t           sub, *subs;
    unsigned           n = bm_n;
    double             r0, per_session, per_sub, per_item, per_q100;
    double             res_session, res_sub, res_item, res_item_old;
    double             per_created;
    uint32_t           q;
    struct wk_sub_mem  m;

    memset(&sf, 0, sizeof(sf));
    fx_setup_seg("big.seg", bm_tweak);
    ck_assert_int_eq(wk_sub_init(&fx.w), 0);
    fx.w.reply_hook = &bm_hook;
    c = bm_conf();

    /* Reserved per configured slot. */
    res_session = bm_reserved(&c->max_sessions, n);
    res_sub = bm_reserved(&c->max_subscriptions, n);
    res_item = bm_reserved(&c->max_monitored_items, n);
    /* Before issue 19 the queue pool was sized by the items (4 cells and
     * entries each): what a snapshot without max_queued_values does. */
    q = c->max_queued_values;
    c->max_queued_values = 0;
    res_item_old = bm_reserved(&c->max_monitored_items, n);
    c->max_queued_values = q;
    bm_pools();
    printf("bench_mem: reserved per configured slot (limits.*): session "
           "%.0f B (+ a channel, limits.max_secure_channels: %zu B), "
           "subscription %.0f B, monitored item %.0f B; the queue pool "
           "%zu B per limits.max_queued_values (pool sized by the items, "
           "as before issue 19: %.0f B per item)\n", res_session,
           sizeof(struct wk_conn), res_sub, res_item,
           sizeof(struct wk_cell) + sizeof(struct wk_qent) + 8,
           res_item_old);
    fx.w.reply_hook = &bm_hook;

    /* Touched by live objects. */
    r0 = bm_rss();
    tok = fx_session(CH);                   /* the items' session */
    for (unsigned i = 1; i < n; i++)
        other = fx_session(CH);
    per_session = (bm_rss() - r0) / n;
    subs = calloc(n, sizeof(*subs));
    ck_assert_ptr_nonnull(subs);
    r0 = bm_rss();
    sub = sf_create_sub(CH, &tok, 1000);
    for (unsigned i = 1; i < n; i++)
        subs[i] = sf_create_sub(CH, &other, 1000);
    per_sub = (bm_rss() - r0) / n;

    /* Items at rest: created (each queues its initial value), then a
     * Publish takes the values: nothing queued. */
    r0 = bm_rss();
    for (unsigned i = 0; i < n; i++)
        sf_item(CH, &tok, sub, sf_var(i), i, &p);
    per_created = (bm_rss() - r0) / n;
    bm_drain(&tok, &m);
    per_item = (bm_rss() - r0) / n;
    if (m.entries_used != 0) {
        fprintf(stderr, "bench_mem: %u entries still queued\n",
                m.entries_used);
        bm_rc = 1;
    }
    /* 100 values in each item's queue (queueSize 100). */
    r0 = bm_rss();
    for (int k = 0; k < 100; k++)
        for (unsigned i = 0; i < n; i++)
            sf_change_d(sf_var(i), k * 1e6 + i + 0.25);
    per_q100 = (bm_rss() - r0) / n;
    wk_sub_mem(&fx.w, &m);
    if (m.entries_used != 100 * n) {
        fprintf(stderr, "bench_mem: %u entries queued, expected %u\n",
                m.entries_used, 100 * n);
        bm_rc = 1;
    }
    printf("bench_mem: %u of each, resident: per activated session %.0f B, "
           "per idle subscription %.0f B; per monitored item (queueSize "
           "100) created with its initial value queued %.0f B, at rest "
           "after Publish %.0f B (high water; the item holds %zu B + an "
           "8 B link slot, nothing of the pool); + per item with 100 "
           "values queued %.0f B (entries %u, cells %u)\n", n,
           per_session, per_sub, per_created, per_item, m.item_bytes,
           per_q100, m.entries_used, m.cells_used);
    /* Given back at Publish. */
    bm_drain(&tok, &m);
    printf("bench_mem: after Publish: entries %u, cells %u in use\n",
           m.entries_used, m.cells_used);
    if (m.entries_used != 0 || m.cells_used != 0)
        bm_rc = 1;
    free(subs);
    fx.w.reply_hook = NULL;
    fx_teardown();
}
END_TEST

int
main(int argc, char **argv)
{
    Suite   *s = suite_create("bench_mem");
    TCase   *tc = tcase_create("run");
    SRunner *sr;
    int      failed;

    if (argc > 1)
        bm_n = (unsigned)atoi(argv[1]);
    if (bm_n < 100 || bm_n > 140000) {
        fprintf(stderr, "usage: bench_mem [N, 100..140000]\n");
        return 2;
    }
    tcase_set_timeout(tc, 0);
    tcase_add_test(tc, bm_run);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed != 0 || bm_rc != 0 ? 1 : 0;
}
