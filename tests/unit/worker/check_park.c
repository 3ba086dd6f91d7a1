/*
 * tests/unit/worker/check_park.c: a parked session's progress
 * (worker/park.c, worker/park.h; docs/architecture.md §11 "A worker's
 * death"): what the successor of a worker killed at any instruction
 * takes over.
 *
 * One worker (the fixture's, with a park in its segment and a loop whose
 * end-of-iteration handlers pk_end() runs, on the fixture's clock) parks
 * a session with a subscription and sends NotificationMessages; the test copies the park
 * region out (the worker is "killed": nothing it does afterwards
 * counts), builds a second worker on a fresh segment with that copy as
 * its park, which takes the session over (wk_park_inherit), and looks at
 * what it has: the subscription's sequence number, its kept messages
 * (their bodies), its item's watermark.  A torn write is made by hand:
 * an entry's bytes written and its commit (the journal's length) not.
 */
#include <event2/event.h>

#include "sub_fixture.h"

#include "shm/park.h"
#include "worker/loop.h"
#include "worker/park.h"
#include "worker/sub_int.h"

#define CH (&fx.ch[0])

static struct wk_loop   pk_loop;
static struct ua_nodeid tok;
static uint8_t         *pk_saved;       /* the "dead" worker's park */
static uint64_t         pk_len;

/* A worker with a park (its bytes from park when not NULL). */
static void
pk_up(const uint8_t *park)
{
    memset(&sf, 0, sizeof(sf));
    fx_setup();
    fx.w.base = event_base_new();
    ck_assert_ptr_nonnull(fx.w.base);
    ck_assert_ptr_nonnull(shm_park_of(&fx.w.seg));
    if (park != NULL)
        memcpy(shm_park_of(&fx.w.seg), park, pk_len);
    ck_assert_int_eq(wk_loop_init(&pk_loop, &fx.w), 0);
    /* The iteration never begins (it would read the clock): pk_end()
     * runs its end. */
    pk_loop.tick_pending = true;
    ck_assert_int_eq(wk_park_init(&fx.w, &pk_loop), 0);
    ck_assert_ptr_nonnull(fx.w.park);
    ck_assert_int_eq(wk_sub_init(&fx.w), 0);
    ck_assert_int_eq(wk_sub_roam_init(&fx.w), 0);
    fx.w.reply_hook = &sf_hook;
}

static void
pk_down(void)
{
    sf_teardown();
    wk_park_fini(&fx.w);
    wk_loop_clear(&pk_loop);
    event_base_free(fx.w.base);
    fx.w.base = NULL;
}

static void
setup(void)
{
    pk_saved = NULL;
    pk_up(NULL);
    tok = fx_session(CH);
}

static void
teardown(void)
{
    pk_down();
    free(pk_saved);
}

/* The end of the loop iteration (the park's writer). */
static void
pk_end(void)
{
    for (uint32_t i = 0; i < pk_loop.nends; i++)
        pk_loop.ends[i].fn(pk_loop.ends[i].arg);
}

/* kill -9: the park as it is now is all that is left; the successor
 * takes it over. */
static void
pk_kill_and_inherit(void)
{
    struct shm_park *k = shm_park_of(&fx.w.seg);

    pk_len = fx.w.seg.hdr->regions[SHM_R_PARK].size;
    pk_saved = malloc(pk_len);
    ck_assert_ptr_nonnull(pk_saved);
    memcpy(pk_saved, k, pk_len);
    pk_down();
    pk_up(pk_saved);
    ck_assert(wk_park_pending(&fx.w));
    ck_assert_uint_eq(wk_park_inherit(&fx.w), 1);
}

/* The journal's committed length of the record of session index i. */
static _Atomic uint32_t *
pk_jlen(uint32_t i)
{
    struct shm_park     *k = shm_park_of(&fx.w.seg);
    struct shm_park_rec *r = &shm_park_recs(k, fx.w.slot)[i];
    uint32_t             pc = atomic_load(&r->pcur);

    ck_assert_uint_ne(pc, 0);
    return (_Atomic uint32_t *)(void *)(shm_park_data(k, fx.w.slot)
                                        + r->poff[pc & 1] + 12);
}

static uint32_t
pk_session_index(void)
{
    for (uint32_t i = 0; i < fx.w.nsessions; i++)
        if (fx.w.sessions[i].used && fx.w.sessions[i].activated)
            return i;
    ck_abort_msg("no session");
    return 0;
}

/* One message of sub: v changed to d, the timer ticks. */
static void
pk_send(uint32_t sub, struct ua_nodeid v, double d, uint32_t seq)
{
    struct sf_got *g;

    sf_change_d(v, d);
    sf_tick(100);
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->p.subscription_id, sub);
    ck_assert_uint_eq(g->p.notification_message.sequence_number, seq);
}

static void
pk_ack(uint32_t sub, uint32_t seq)
{
    struct ua_subscription_acknowledgement a = { sub, seq };

    ck_assert_uint_eq(sf_publish_acks(CH, &tok, &a, 1), UA_GOOD);
}

/* The kept sequence numbers of sub in the worker now, oldest first. */
static int32_t
pk_kept(uint32_t sub, uint32_t *out)
{
    struct wk_subs *st = wk_subs_get(&fx.w);
    struct wk_sub  *s = wk_sub_find(st, sub);

    ck_assert_ptr_nonnull(s);
    return wk_retx_avail(st, s, out);
}

static int64_t
pk_wm(uint32_t sub, uint32_t item)
{
    struct wk_subs *st = wk_subs_get(&fx.w);
    struct wk_mi   *mi = wk_mi_find(st, wk_sub_find(st, sub), item);

    ck_assert_ptr_nonnull(mi);
    ck_assert_uint_eq(mi->qlen, 0);
    return mi->wm_ts;
}

/* The body of kept message seq of sub (copied into buf). */
static uint32_t
pk_body(uint32_t sub, uint32_t seq, uint8_t *buf, uint32_t cap)
{
    struct wk_subs *st = wk_subs_get(&fx.w);
    struct wk_sub  *s = wk_sub_find(st, sub);
    int             k = wk_retx_find(st, s, seq);
    const struct wk_retx *r;

    ck_assert_int_ge(k, 0);
    r = &s->retx[(s->retx_head + (uint32_t)k) % st->lim.max_retx];
    ck_assert_uint_le(r->len, cap);
    memcpy(buf, wk_retx_body(st, r), r->len);
    return r->len;
}

/* ------------------------------------------------------------------ */

/*
 * The successor applies structure (the blob: the subscription, its item)
 * and progress (sequence numbers, kept messages, watermarks); a kept
 * message acknowledged is gone from what it sees; the bodies it keeps
 * are the ones sent.
 */
START_TEST(test_structure_and_progress)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sf_create_sub(CH, &tok, 100), item, kept[8];
    uint8_t          b3[512], c3[512];
    uint32_t         l3;
    int64_t          wm;

    item = sf_item(CH, &tok, sub, v, 7, NULL);
    pk_end();                       /* the blob: session, sub, item */
    ck_assert_uint_gt(wk_park_last_bytes(&fx.w), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);                   /* message 1: the initial value */
    ck_assert_ptr_nonnull(sf_next());
    pk_send(sub, v, 2.5, 2);
    pk_send(sub, v, 3.5, 3);
    pk_ack(sub, 1);
    ck_assert_int_eq(pk_kept(sub, kept), 2);
    wm = pk_wm(sub, item);
    l3 = pk_body(sub, 3, b3, sizeof(b3));

    pk_kill_and_inherit();
    ck_assert_int_eq(pk_kept(sub, kept), 2);
    ck_assert_uint_eq(kept[0], 2);
    ck_assert_uint_eq(kept[1], 3);
    ck_assert_uint_eq(wk_sub_find(wk_subs_get(&fx.w), sub)->seq, 3);
    ck_assert(wk_sub_find(wk_subs_get(&fx.w), sub)->sent);
    ck_assert_int_eq(pk_wm(sub, item), wm);
    ck_assert_uint_eq(pk_body(sub, 3, c3, sizeof(c3)), l3);
    ck_assert_mem_eq(b3, c3, l3);
}
END_TEST

/*
 * A torn write: the entry of message 3 written, its commit not (a worker
 * killed before the store of the journal's length): the successor has
 * the progress of message 2, whole.
 */
START_TEST(test_torn_write_leaves_previous)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sf_create_sub(CH, &tok, 100), item, kept[8], j2;
    int64_t          wm2;

    item = sf_item(CH, &tok, sub, v, 7, NULL);
    pk_end();
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);
    ck_assert_ptr_nonnull(sf_next());
    pk_send(sub, v, 2.5, 2);
    wm2 = pk_wm(sub, item);
    j2 = atomic_load(pk_jlen(pk_session_index()));
    pk_send(sub, v, 3.5, 3);
    ck_assert_uint_gt(atomic_load(pk_jlen(pk_session_index())), j2);
    ck_assert_int_gt(pk_wm(sub, item), wm2);
    /* Killed before the commit: the bytes are there, the length not. */
    atomic_store(pk_jlen(pk_session_index()), j2);

    pk_kill_and_inherit();
    ck_assert_uint_eq(wk_sub_find(wk_subs_get(&fx.w), sub)->seq, 2);
    ck_assert_int_eq(pk_kept(sub, kept), 2);
    ck_assert_uint_eq(kept[0], 1);
    ck_assert_uint_eq(kept[1], 2);
    ck_assert_int_eq(pk_wm(sub, item), wm2);
}
END_TEST

/*
 * A message kept in the blob (sent before the structure changed and the
 * blob was rewritten), acknowledged since: gone for the successor too;
 * one sent after the rewrite comes from the park.
 */
START_TEST(test_blob_kept_dropped)
{
    struct ua_nodeid v = sf_var(1), v3 = sf_var(3);
    uint32_t         sub = sf_create_sub(CH, &tok, 100), item, kept[8];

    item = sf_item(CH, &tok, sub, v, 7, NULL);
    pk_end();
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);
    ck_assert_ptr_nonnull(sf_next());
    pk_send(sub, v, 2.5, 2);
    (void)sf_item(CH, &tok, sub, v3, 8, NULL);
    pk_end();                       /* the blob again: 1 and 2 in it */
    pk_ack(sub, 1);
    sf_tick(100);                   /* message 3: v3's initial value */
    ck_assert_ptr_nonnull(sf_next());
    ck_assert_int_eq(pk_kept(sub, kept), 2);

    pk_kill_and_inherit();
    ck_assert_int_eq(pk_kept(sub, kept), 2);
    ck_assert_uint_eq(kept[0], 2);
    ck_assert_uint_eq(kept[1], 3);
    ck_assert_uint_eq(wk_sub_find(wk_subs_get(&fx.w), sub)->seq, 3);
    (void)pk_wm(sub, item);
}
END_TEST

/*
 * Many messages: the journal fills and is replaced by a snapshot, more
 * than once; the successor still has the last state.
 */
START_TEST(test_journal_full_snapshot)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sf_create_sub(CH, &tok, 100), item, kept[64];
    int32_t          n;
    int64_t          wm;

    item = sf_item(CH, &tok, sub, v, 7, NULL);
    pk_end();
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);
    ck_assert_ptr_nonnull(sf_next());
    for (uint32_t i = 2; i <= 200; i++) {
        struct ua_subscription_acknowledgement a = { sub, i - 1 };

        /* Each Publish acknowledges the message before. */
        ck_assert_uint_eq(sf_publish_acks(CH, &tok, &a, 1), UA_GOOD);
        pk_send(sub, v, (double)i, i);
    }
    n = pk_kept(sub, kept);
    ck_assert_int_eq(n, 1);
    wm = pk_wm(sub, item);

    pk_kill_and_inherit();
    ck_assert_int_eq(pk_kept(sub, kept), 1);
    ck_assert_uint_eq(kept[0], 200);
    ck_assert_uint_eq(wk_sub_find(wk_subs_get(&fx.w), sub)->seq, 200);
    ck_assert_int_eq(pk_wm(sub, item), wm);
}
END_TEST

/*
 * A message that empties the queues of several items (consecutive ids,
 * one watermark: one run): every one of them has its watermark at the
 * successor, none keeps the blob's queue.
 */
START_TEST(test_items_in_runs)
{
    struct ua_nodeid v[3] = { sf_var(1), sf_var(3), sf_var(5) };
    uint32_t         sub = sf_create_sub(CH, &tok, 100), item[3], kept[8];
    int64_t          wm[3];

    for (int i = 0; i < 3; i++)
        item[i] = sf_item(CH, &tok, sub, v[i], 7 + (uint32_t)i, NULL);
    ck_assert_uint_eq(item[1], item[0] + 1);
    ck_assert_uint_eq(item[2], item[1] + 1);
    pk_end();
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);                   /* message 1: the initial values */
    ck_assert_ptr_nonnull(sf_next());
    for (int i = 0; i < 3; i++)
        sf_change_d(v[i], 10.0 + i);
    sf_tick(100);                   /* message 2: all three */
    ck_assert_ptr_nonnull(sf_next());
    ck_assert_uint_ge(wk_subs_get(&fx.w)->nsent, 1);
    for (int i = 0; i < 3; i++)
        wm[i] = pk_wm(sub, item[i]);

    pk_kill_and_inherit();
    ck_assert_int_eq(pk_kept(sub, kept), 2);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(pk_wm(sub, item[i]), wm[i]);
}
END_TEST

static ua_status
pk_republish(uint32_t sub, uint32_t seq, double *value)
{
    struct ua_republish_request  req;
    struct ua_republish_response rr;
    ua_status                    st;

    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.retransmit_sequence_number = seq;
    st = sf_call(CH, &tok, UA_TYPE_REPUBLISHREQUEST, &req,
                 UA_TYPE_REPUBLISHRESPONSE, &rr);
    if (st == UA_GOOD) {
        ck_assert_int_eq(rr.notification_message.n_notification_data, 1);
        *value = sf_num(rr.notification_message.notification_data[0].obj,
                        0);
    }
    return st;
}

/* Where kept message seq of sub has its body: the park (true) or the
 * retransmission store; the handle checked against the body's address. */
static bool
pk_body_in_park(uint32_t sub, uint32_t seq)
{
    struct wk_subs       *st = wk_subs_get(&fx.w);
    struct wk_sub        *s = wk_sub_find(st, sub);
    int                   k = wk_retx_find(st, s, seq);
    const struct wk_retx *r;
    const uint8_t        *body, *data;

    ck_assert_int_ge(k, 0);
    r = &s->retx[(s->retx_head + (uint32_t)k) % st->lim.max_retx];
    body = wk_retx_body(st, r);
    data = shm_park_data(shm_park_of(&fx.w.seg), fx.w.slot);
    if (r->park == WK_PARK_NO_KEPT) {
        ck_assert(body > st->rstore.buf
                  && body < st->rstore.buf + st->rstore.cap);
        return false;
    }
    ck_assert_ptr_eq(body, data + r->park);
    return true;
}

/*
 * A parked session's kept message has one copy, the park's: the
 * retransmission store's body of it is that copy (no second memcpy), and
 * Republish returns it; a message sent before the session was parked has
 * its body in the store.  Acknowledged, the park's copy is let go and
 * Republish says BadMessageNotAvailable.
 */
START_TEST(test_kept_body_is_the_parks)
{
    struct ua_nodeid v = sf_var(1);
    uint32_t         sub = sf_create_sub(CH, &tok, 100);
    double           d = 0;

    (void)sf_item(CH, &tok, sub, v, 7, NULL);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);                   /* message 1: not parked yet */
    ck_assert_ptr_nonnull(sf_next());
    ck_assert(!pk_body_in_park(sub, 1));
    pk_end();                       /* parked now */
    pk_send(sub, v, 2.5, 2);
    ck_assert(pk_body_in_park(sub, 2));
    pk_send(sub, v, 3.5, 3);
    ck_assert(pk_body_in_park(sub, 3));
    ck_assert_uint_eq(pk_republish(sub, 2, &d), UA_GOOD);
    ck_assert(d == 2.5);
    ck_assert_uint_eq(pk_republish(sub, 3, &d), UA_GOOD);
    ck_assert(d == 3.5);
    pk_ack(sub, 2);
    ck_assert_uint_eq(pk_republish(sub, 2, &d),
                      UA_BAD_MESSAGE_NOT_AVAILABLE);
    ck_assert_uint_eq(pk_republish(sub, 3, &d), UA_GOOD);
    ck_assert(d == 3.5);
    ck_assert(!pk_body_in_park(sub, 1));
    pk_kill_and_inherit();          /* the successor's are its own */
    ck_assert(!pk_body_in_park(sub, 3));
}
END_TEST

/* Which service requests change what is parked (a mask, worker/park.h):
 * the structure's services, not Read, Write, Publish. */
START_TEST(test_park_services)
{
    static const uint8_t yes[] = {
        SHM_SVC_ACTIVATE_SESSION, SHM_SVC_CREATE_SUBSCRIPTION,
        SHM_SVC_MODIFY_SUBSCRIPTION, SHM_SVC_SET_PUBLISHING_MODE,
        SHM_SVC_DELETE_SUBSCRIPTIONS, SHM_SVC_TRANSFER_SUBSCRIPTIONS,
        SHM_SVC_CREATE_MONITORED_ITEMS, SHM_SVC_MODIFY_MONITORED_ITEMS,
        SHM_SVC_SET_MONITORING_MODE, SHM_SVC_SET_TRIGGERING,
        SHM_SVC_DELETE_MONITORED_ITEMS
    };
    unsigned n = 0;

    for (size_t i = 0; i < sizeof(yes); i++)
        ck_assert(wk_park_service(yes[i]));
    for (unsigned stat = 0; stat < 256; stat++)
        n += wk_park_service((uint8_t)stat);
    ck_assert_uint_eq(n, sizeof(yes));
    ck_assert(!wk_park_service(SHM_SVC_READ));
    ck_assert(!wk_park_service(SHM_SVC_PUBLISH));
    ck_assert(!wk_park_service(SHM_SVC_REPUBLISH));
}
END_TEST

static Suite *
park_suite(void)
{
    Suite *s = suite_create("worker/park");
    TCase *tc = tcase_create("progress");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_structure_and_progress);
    tcase_add_test(tc, test_torn_write_leaves_previous);
    tcase_add_test(tc, test_blob_kept_dropped);
    tcase_add_test(tc, test_journal_full_snapshot);
    tcase_add_test(tc, test_items_in_runs);
    tcase_add_test(tc, test_kept_body_is_the_parks);
    tcase_add_test(tc, test_park_services);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(park_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
