/*
 * tests/integ/integ_roam.c: any worker serves any session (issue 19 item
 * 1, docs/architecture.md §11): a session whose connection dropped is
 * activated on a new SecureChannel that landed on ANOTHER worker; the
 * session, its subscription, its sequence numbers and its kept messages
 * move there, and every value written meanwhile arrives.
 *
 * Starts `uabroker -w 2` with queues of up to 1000, then:
 *
 *   1. a subscriber S (a subscription at RA_PUB_MS, ITC_ITEMS monitored
 *      items on ns=1;s=v0, v2, .., queueSize RA_QUEUE) takes its initial
 *      values with RA_INFLIGHT Publish requests in flight;
 *   2. bad input first, while S is on its worker: ActivateSession on the
 *      other worker with a forged token of the right shape, and with one
 *      of a shape no worker makes: BadSessionIdInvalid, S undisturbed;
 *   3. three cuts, each: S's TCP connection is closed under it; a writer
 *      W writes RA_ROUNDS distinct values into every item; S connects
 *      until its channel lands on the OTHER worker than the one holding
 *      its session and activates the session there: Good; the
 *      NotificationMessage it had not acknowledged comes back from
 *      Republish; S publishes until every value came: each item gets
 *      every value exactly once and in order, the same subscription id,
 *      the sequence numbers without a gap; the time from the
 *      ActivateSession to the first notification is printed (a
 *      measurement, not asserted).
 *   4. /stats: sessions_moved_in/out count the moves;
 *   5. two channels activating S at once (the holder stopped for a
 *      moment): the first Good, the second BadSessionIdInvalid;
 *      TransferSubscriptions of a subscription another worker's session
 *      holds: Good, sendInitialValues, GoodSubscriptionTransferred to the
 *      old session, and back; the holder stopped (SIGSTOP):
 *      BadSessionIdInvalid after limits.session_move_timeout_ms, and the
 *      session moves once it runs again.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_roam: N passed,
 * M failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itcount.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define RA_WORKERS    2
#define RA_QUEUE      200
#define RA_PUB_MS     100
#define RA_SAMPLE_MS  50          /* the default min_sampling_interval_ms */
#define RA_ROUNDS     10          /* values written per item and cut */
#define RA_WRITE_MS   100
#define RA_INFLIGHT   3
#define RA_WAIT_MS    8000
#define RA_ARENA      (4u << 20)
#define RA_WATCHDOG_S 120
#define RA_CUTS       3

static struct ua_arena ra_arena;
static char            ra_dir[PATH_MAX], ra_run[PATH_MAX + 8];
static char            ra_log[PATH_MAX + 16];
static uint16_t        ra_port, ra_sport;

static void ra_round(struct itc_sub *s, int32_t base);
static ua_status ra_republish(struct itc_sub *s, uint32_t seq);
static void ra_bad_tokens(struct itc_sub *s);
static uint64_t ra_stat(const char *key);
static void ra_unacked(struct itc_sub *s, struct uaconn *w, int32_t v);
static uint32_t ra_sub_one(struct uaconn *c);
static bool ra_publish_wait(struct uaconn *c, int kind, ua_status *status);
static void ra_transfer(void);
static void ra_stalled_owner(struct itc_sub *s);
static void ra_twice(struct itc_sub *s);

/* W writes v; S takes the message that carries it and leaves it
 * unacknowledged (s->unacked). */
static void
ra_unacked(struct itc_sub *s, struct uaconn *w, int32_t v)
{
    uint64_t end = itest_ms() + RA_WAIT_MS;

    if (itc_write(w, v, &ra_arena) != UA_GOOD)
        itest_fatal("Write %d", (int)v);
    s->have_ack = false;
    while (!s->have_ack && s->pending > 0 && itest_ms() < end)
        itc_take(s, v + 1, &ra_arena);
    if (!s->have_ack)
        itest_fatal("no message for value %d", (int)v);
    s->unacked = s->ack.sequence_number;
    s->have_ack = false;
}

/* A subscription with one item (ns=1;s=v1) on c's session: its id. */
static uint32_t
ra_sub_one(struct uaconn *c)
{
    struct ua_create_subscription_request     cs;
    struct ua_create_subscription_response    csr;
    struct ua_create_monitored_items_request  cm;
    struct ua_create_monitored_items_response cmr;
    struct ua_monitored_item_create_request   it;
    ua_status                                 st;

    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = RA_PUB_MS;
    cs.requested_lifetime_count = 600;
    cs.requested_max_keep_alive_count = 10;
    cs.publishing_enabled = true;
    ua_arena_reset(&ra_arena);
    st = uaconn_call(c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST], &cs,
                     &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE], &csr,
                     &ra_arena);
    if (st != UA_GOOD)
        itest_fatal("CreateSubscription: 0x%08X", st);
    memset(&it, 0, sizeof(it));
    it.item_to_monitor.node_id = ua_nodeid_str(1, "v1");
    it.item_to_monitor.attribute_id = UA_ATTR_VALUE;
    it.item_to_monitor.index_range.len = -1;
    it.item_to_monitor.data_encoding.name.len = -1;
    it.monitoring_mode = UA_MONITORINGMODE_REPORTING;
    it.requested_parameters.client_handle = 77;
    it.requested_parameters.sampling_interval = RA_SAMPLE_MS;
    it.requested_parameters.queue_size = 10;
    it.requested_parameters.discard_oldest = true;
    memset(&cm, 0, sizeof(cm));
    cm.subscription_id = csr.subscription_id;
    cm.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    cm.n_items_to_create = 1;
    cm.items_to_create = &it;
    st = uaconn_call(c, &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST], &cm,
                     &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE], &cmr,
                     &ra_arena);
    if (st != UA_GOOD || cmr.n_results != 1
        || cmr.results[0].status_code != UA_GOOD)
        itest_fatal("CreateMonitoredItems: 0x%08X", st);
    return csr.subscription_id;
}

/*
 * Publish on c until a response carries kind (1: a DataChangeNotification
 * of client handle 77; 2: a StatusChangeNotification, its status in
 * *status), or RA_WAIT_MS: whether it came.
 */
static bool
ra_publish_wait(struct uaconn *c, int kind, ua_status *status)
{
    uint64_t end = itest_ms() + RA_WAIT_MS;

    while (itest_ms() < end) {
        struct ua_publish_request  req;
        struct ua_publish_response resp;

        memset(&req, 0, sizeof(req));
        ua_arena_reset(&ra_arena);
        if (uaconn_call(c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req,
                        &ua_types[UA_TYPE_PUBLISHRESPONSE], &resp,
                        &ra_arena) != UA_GOOD
            || resp.response_header.service_result != UA_GOOD)
            return false;
        for (int32_t k = 0; k < resp.notification_message.n_notification_data;
             k++) {
            const struct ua_extobj *x =
                &resp.notification_message.notification_data[k];

            if (kind == 2
                && x->type == &ua_types[UA_TYPE_STATUSCHANGENOTIFICATION]) {
                *status = ((const struct ua_status_change_notification *)
                               x->obj)->status;
                return true;
            }
            if (kind == 1
                && x->type == &ua_types[UA_TYPE_DATACHANGENOTIFICATION]) {
                const struct ua_data_change_notification *d = x->obj;

                for (int32_t j = 0; j < d->n_monitored_items; j++)
                    if (d->monitored_items[j].client_handle == 77)
                        return true;
            }
        }
    }
    return false;
}

/*
 * TransferSubscriptions from a session on one worker to a session on the
 * other (Part 4 §5.13.7): Good, the same id, the initial value
 * (sendInitialValues) to the new session, GoodSubscriptionTransferred to
 * the old one; a second transfer of the same id from the old session's
 * worker moves it back.
 */
static void
ra_transfer(void)
{
    struct uaconn                            t1, t2;
    struct ua_transfer_subscriptions_request  req;
    struct ua_transfer_subscriptions_response resp;
    uint32_t                                 id;
    int                                      w1, w2;
    ua_status                                st, sc = 0;
    bool                                     got;

    w1 = itc_channel(&t1, ra_port, ra_sport, RA_WORKERS, -1);
    if (uaconn_session(&t1) != UA_GOOD)
        itest_fatal("T1 session");
    id = ra_sub_one(&t1);
    if (!ra_publish_wait(&t1, 1, &sc))
        itest_fatal("T1: no initial value");
    w2 = itc_channel(&t2, ra_port, ra_sport, RA_WORKERS, RA_WORKERS + w1);
    if (uaconn_session(&t2) != UA_GOOD)
        itest_fatal("T2 session");
    printf("# transfer: subscription %u of a session on worker %d to a "
           "session on worker %d\n", id, w1, w2);
    memset(&req, 0, sizeof(req));
    req.n_subscription_ids = 1;
    req.subscription_ids = &id;
    req.send_initial_values = true;
    ua_arena_reset(&ra_arena);
    st = uaconn_call(&t2, &ua_types[UA_TYPE_TRANSFERSUBSCRIPTIONSREQUEST],
                     &req, &ua_types[UA_TYPE_TRANSFERSUBSCRIPTIONSRESPONSE],
                     &resp, &ra_arena);
    itest_check(st == UA_GOOD && resp.n_results == 1
                    && resp.results[0].status_code == UA_GOOD,
                "TransferSubscriptions across workers: 0x%08X / 0x%08X", st,
                resp.n_results == 1 ? resp.results[0].status_code : 0);
    got = ra_publish_wait(&t2, 1, &sc);
    itest_check(got, "... sendInitialValues: the new session gets the "
                "current value");
    got = ra_publish_wait(&t1, 2, &sc);
    itest_check(got && sc == UA_GOOD_SUBSCRIPTION_TRANSFERRED,
                "... the old session gets a StatusChangeNotification "
                "GoodSubscriptionTransferred (0x%08X)", sc);
    /* Back, by a session of the first worker: T1 takes it again. */
    ua_arena_reset(&ra_arena);
    st = uaconn_call(&t1, &ua_types[UA_TYPE_TRANSFERSUBSCRIPTIONSREQUEST],
                     &req, &ua_types[UA_TYPE_TRANSFERSUBSCRIPTIONSRESPONSE],
                     &resp, &ra_arena);
    itest_check(st == UA_GOOD && resp.n_results == 1
                    && resp.results[0].status_code == UA_GOOD,
                "... and back to the first worker: 0x%08X / 0x%08X", st,
                resp.n_results == 1 ? resp.results[0].status_code : 0);
    id ^= 0x00F00000u;                  /* an id nobody holds */
    ua_arena_reset(&ra_arena);
    st = uaconn_call(&t2, &ua_types[UA_TYPE_TRANSFERSUBSCRIPTIONSREQUEST],
                     &req, &ua_types[UA_TYPE_TRANSFERSUBSCRIPTIONSRESPONSE],
                     &resp, &ra_arena);
    itest_check(st == UA_GOOD && resp.n_results == 1
                    && resp.results[0].status_code
                           == UA_BAD_SUBSCRIPTION_ID_INVALID,
                "... an unknown id: BadSubscriptionIdInvalid (0x%08X)",
                resp.n_results == 1 ? resp.results[0].status_code : 0);
    (void)uaconn_close_session(&t1);
    (void)uaconn_close(&t1);
    uaconn_clear(&t1);
    (void)uaconn_close_session(&t2);
    (void)uaconn_close(&t2);
    uaconn_clear(&t2);
}

/*
 * Two channels on the other worker activate S's session at once (the
 * holder is stopped for a moment, so that the first claim is surely in
 * flight when the second ActivateSession comes): the second gets
 * BadSessionIdInvalid at once, the first Good; S's session then works on
 * the first.
 */
static void
ra_twice(struct itc_sub *s)
{
    struct uaconn                       a, b;
    struct ua_nodeid                    tok = s->c.cl.auth_token;
    struct ua_activate_session_request  ar;
    struct ua_anonymous_identity_token  anon;
    struct ua_client_event              ev;
    struct ua_activate_session_response as;
    ua_status                           sa = UA_BAD_UNEXPECTED_ERROR;
    ua_status                           sb = UA_BAD_UNEXPECTED_ERROR;
    uint64_t                            pid = 0;
    uint32_t                            id;
    int                                 wa;

    if (!itest_worker_u64(ra_sport, s->worker, "pid", &pid) || pid == 0)
        itest_fatal("no pid for worker %d", s->worker);
    /* S's own connection goes first (as a dropped client's would). */
    close(s->c.fd);
    s->c.fd = -1;
    uaconn_clear(&s->c);
    wa = itc_channel(&a, ra_port, ra_sport, RA_WORKERS, RA_WORKERS + s->worker);
    (void)itc_channel(&b, ra_port, ra_sport, RA_WORKERS, RA_WORKERS + s->worker);
    if (ua_client_set_token(&a.cl, &tok) != UA_GOOD
        || ua_client_set_token(&b.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the token");
    memset(&ar, 0, sizeof(ar));
    memset(&anon, 0, sizeof(anon));
    anon.policy_id = ua_string_from("anonymous");
    ar.request_header.audit_entry_id.len = -1;
    ar.client_signature.algorithm.len = -1;
    ar.client_signature.signature.len = -1;
    ar.user_token_signature.algorithm.len = -1;
    ar.user_token_signature.signature.len = -1;
    ar.user_identity_token.encoding = UA_EO_DECODED;
    ar.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
    ar.user_identity_token.obj = &anon;
    ar.user_identity_token.type_id = ua_nodeid_num(
        0, ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN].binary_id);
    kill((pid_t)pid, SIGSTOP);
    if (uaconn_send(&a, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &ar, &id)
        != UA_GOOD)
        itest_fatal("cannot send ActivateSession");
    itest_sleep_ms(100);
    if (uaconn_send(&b, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &ar, &id)
        != UA_GOOD)
        itest_fatal("cannot send ActivateSession");
    ua_arena_reset(&ra_arena);
    if (uaconn_recv(&b, &ev) == UA_GOOD && ev.kind == UA_CLIENT_EV_MSG) {
        if (ua_client_decode(&b.cl, &ev,
                             &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &as,
                             &ra_arena) == UA_GOOD)
            sb = as.response_header.service_result;
        else
            sb = UA_BAD_SESSION_ID_INVALID;     /* a ServiceFault */
    }
    kill((pid_t)pid, SIGCONT);
    if (uaconn_recv(&a, &ev) == UA_GOOD && ev.kind == UA_CLIENT_EV_MSG) {
        if (ua_client_decode(&a.cl, &ev,
                             &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &as,
                             &ra_arena) == UA_GOOD)
            sa = as.response_header.service_result;
        else
            sa = UA_BAD_SESSION_ID_INVALID;
    }
    itest_check(sa == UA_GOOD && sb != UA_GOOD,
                "ActivateSession from two channels at once: the first "
                "Good (0x%08X), the second Bad (0x%08X)", sa, sb);
    /* S goes on with the first, on its worker. */
    s->c = a;
    s->worker = wa;
    (void)uaconn_close(&b);
    uaconn_clear(&b);
    s->pending = 0;
    s->have_ack = false;
    itc_publish(s);
    itc_take(s, INT64_MAX, &ra_arena);
    itest_check(s->pending == 0, "... the session works on the first");
}

/*
 * The worker holding S stops answering (SIGSTOP): an ActivateSession on
 * the other worker gets BadSessionIdInvalid after
 * limits.session_move_timeout_ms, the connection is answered (not
 * held); resumed, the holder still has S, which moves on the next try.
 */
static void
ra_stalled_owner(struct itc_sub *s)
{
    struct uaconn    x;
    struct ua_nodeid tok = s->c.cl.auth_token;
    uint64_t         pid = 0, t0, ms;
    ua_status        st;

    if (!itest_worker_u64(ra_sport, s->worker, "pid", &pid) || pid == 0)
        itest_fatal("no pid for worker %d", s->worker);
    close(s->c.fd);
    s->c.fd = -1;
    uaconn_clear(&s->c);
    (void)itc_channel(&x, ra_port, ra_sport, RA_WORKERS, RA_WORKERS + s->worker);
    kill((pid_t)pid, SIGSTOP);
    if (ua_client_set_token(&x.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the token");
    t0 = itest_ms();
    st = itc_activate(&x, &ra_arena);
    ms = itest_ms() - t0;
    kill((pid_t)pid, SIGCONT);
    itest_check(st == UA_BAD_SESSION_ID_INVALID && ms >= 900 && ms < 5000,
                "a stopped holder: BadSessionIdInvalid after the move "
                "timeout (0x%08X after %llu ms)", st,
                (unsigned long long)ms);
    itest_sleep_ms(200);
    st = itc_activate(&x, &ra_arena);
    itest_check(st == UA_GOOD,
                "... resumed, the session moves on the next try: 0x%08X",
                st);
    (void)uaconn_close_session(&x);
    (void)uaconn_close(&x);
    uaconn_clear(&x);
}

/* A counter summed over the workers' /stats rows. */
static uint64_t
ra_stat(const char *key)
{
    uint64_t sum = 0;

    for (int i = 0; i < RA_WORKERS; i++) {
        uint64_t v = 0;

        (void)itest_worker_u64(ra_sport, i, key, &v);
        sum += v;
    }
    return sum;
}

/* Republish of seq on S's subscription: its status (the message's
 * sequence number must be seq). */
static ua_status
ra_republish(struct itc_sub *s, uint32_t seq)
{
    struct ua_republish_request  req;
    struct ua_republish_response resp;
    ua_status                    st;

    memset(&req, 0, sizeof(req));
    req.subscription_id = s->sub_id;
    req.retransmit_sequence_number = seq;
    ua_arena_reset(&ra_arena);
    st = uaconn_call(&s->c, &ua_types[UA_TYPE_REPUBLISHREQUEST], &req,
                     &ua_types[UA_TYPE_REPUBLISHRESPONSE], &resp,
                     &ra_arena);
    if (st == UA_GOOD && resp.notification_message.sequence_number != seq)
        st = UA_BAD_UNEXPECTED_ERROR;
    return st;
}

/*
 * ActivateSession on the other worker with a forged token (S's with other
 * random bits: the owner is asked and knows none) and with one of a shape
 * no worker makes (nobody is asked): BadSessionIdInvalid both; S's own
 * Publish requests go on.
 */
static void
ra_bad_tokens(struct itc_sub *s)
{
    struct uaconn    x;
    struct ua_nodeid tok = s->c.cl.auth_token;
    uint64_t         f0, f1, f2;
    ua_status        st;

    if (tok.idtype != UA_IDTYPE_GUID)
        itest_fatal("the token is not a GUID");
    f0 = ra_stat("session_moves_failed");
    (void)itc_channel(&x, ra_port, ra_sport, RA_WORKERS, RA_WORKERS + s->worker);
    tok.id.guid.data4[7] ^= 0x5A;
    if (ua_client_set_token(&x.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set a token");
    st = itc_activate(&x, &ra_arena);
    f1 = ra_stat("session_moves_failed");
    itest_check(st == UA_BAD_SESSION_ID_INVALID,
                "a forged token of the right shape: BadSessionIdInvalid "
                "(0x%08X)", st);
    itest_check(f1 == f0 + 1, "... one claim was made and failed (%llu)",
                (unsigned long long)(f1 - f0));
    tok.id.guid.data1 |= 0x7F000000u;   /* worker 127: none */
    if (ua_client_set_token(&x.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set a token");
    st = itc_activate(&x, &ra_arena);
    f2 = ra_stat("session_moves_failed");
    itest_check(st == UA_BAD_SESSION_ID_INVALID && f2 == f1,
                "a token no worker makes: BadSessionIdInvalid (0x%08X), "
                "nobody asked (%llu claims)", st,
                (unsigned long long)(f2 - f1));
    (void)uaconn_close(&x);
    uaconn_clear(&x);
}

/*
 * One cut: S's connection dropped, W writes base + 1 .. base + RA_ROUNDS,
 * S activates its session on the OTHER worker, Republish of the message
 * it had not acknowledged, then publishes until every value came.
 */
static void
ra_round(struct itc_sub *s, int32_t base)
{
    struct uaconn      w;
    struct ua_nodeid   tok = s->c.cl.auth_token;
    uint8_t            tokbuf[UA_CLIENT_TOKEN_MAX];
    uint64_t           end, t0, ovf = 0, bytes, bytes0;
    uint32_t           values = 0, breaks = 0, overflows = 0, missing = 0;
    uint32_t           unacked = s->unacked;
    int                ww, from = s->worker;
    ua_status          st;

    if (tok.idtype == UA_IDTYPE_STRING || tok.idtype == UA_IDTYPE_OPAQUE) {
        memcpy(tokbuf, tok.id.str.data, (size_t)tok.id.str.len);
        tok.id.str.data = tokbuf;
    }
    ww = itc_channel(&w, ra_port, ra_sport, RA_WORKERS, -1);
    st = uaconn_session(&w);
    if (st != UA_GOOD)
        itest_fatal("writer session: 0x%08X", st);
    ra_unacked(s, &w, base);
    unacked = s->unacked;

    /* a. The connection drops: no CLO, no CloseSession. */
    close(s->c.fd);
    s->c.fd = -1;
    uaconn_clear(&s->c);
    itest_sleep_ms(2 * RA_PUB_MS);

    /* b. The writes of the outage. */
    for (int r = 1; r <= RA_ROUNDS; r++) {
        st = itc_write(&w, base + r, &ra_arena);
        if (st != UA_GOOD)
            itest_fatal("Write %d: 0x%08X", base + r, st);
        itest_sleep_ms(RA_WRITE_MS);
    }

    /* c. A new channel on the other worker; the same session. */
    s->worker = itc_channel(&s->c, ra_port, ra_sport, RA_WORKERS, RA_WORKERS + from);
    printf("# round %d: session on worker %d, channel now on worker %d, "
           "W on worker %d\n", (int)base, from, s->worker, ww);
    if (ua_client_set_token(&s->c.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the session token");
    bytes0 = ra_stat("session_move_bytes");
    t0 = itest_ms();
    st = itc_activate(&s->c, &ra_arena);
    itest_check(st == UA_GOOD,
                "round %d: ActivateSession on another worker: 0x%08X",
                (int)base, st);
    if (st != UA_GOOD)
        return;
    if (unacked != 0) {
        st = ra_republish(s, unacked);
        itest_check(st == UA_GOOD,
                    "round %d: Republish of unacknowledged message %u after "
                    "the move: 0x%08X", (int)base, unacked, st);
        s->ack.subscription_id = s->sub_id;
        s->ack.sequence_number = unacked;
        s->have_ack = true;         /* acknowledged with the next Publish */
    } else {
        itest_check(false, "round %d: a message was left unacknowledged",
                    (int)base);
    }

    /* d. Publish until every value came (or RA_WAIT_MS). */
    for (int k = 0; k < ITC_ITEMS; k++) {
        s->it[k].values = s->it[k].breaks = s->it[k].overflows = 0;
    }
    s->pending = 0;
    s->first_ms = 0;
    for (int i = 0; i < RA_INFLIGHT; i++)
        itc_publish(s);
    end = itest_ms() + RA_WAIT_MS;
    for (;;) {
        bool all = true;

        for (int k = 0; k < ITC_ITEMS; k++)
            if (s->it[k].last < base + RA_ROUNDS)
                all = false;
        if (all || itest_ms() >= end)
            break;
        itc_take(s, base + 1, &ra_arena);
        itc_publish(s);
    }
    for (int k = 0; k < ITC_ITEMS; k++) {
        values += s->it[k].values;
        breaks += s->it[k].breaks;
        overflows += s->it[k].overflows;
        if (s->it[k].last < base + RA_ROUNDS)
            missing++;
    }
    ovf = ra_stat("overflows");
    bytes = ra_stat("session_move_bytes");
    printf("# round %d: %u of %u values, %u breaks, %u with the Overflow "
           "bit, %u items short; sequence gaps %u; /stats overflows %llu; "
           "ActivateSession to first notification %llu ms; the hand-over "
           "%llu bytes (%d items)\n", (int)base,
           values, ITC_ITEMS * RA_ROUNDS, breaks, overflows, missing,
           s->seq_gaps, (unsigned long long)ovf,
           (unsigned long long)(s->first_ms ? s->first_ms - t0 : 0),
           (unsigned long long)(bytes - bytes0), ITC_ITEMS);
    itest_check(values == ITC_ITEMS * RA_ROUNDS && breaks == 0
                    && missing == 0,
                "round %d: every value written during the outage arrives "
                "once and in order (%u of %u)", (int)base, values,
                ITC_ITEMS * RA_ROUNDS);
    itest_check(overflows == 0 && s->seq_gaps == 0 && s->wrong_ids == 0,
                "round %d: no Overflow bit (%u), no gap in the sequence "
                "numbers (%u), the same subscription id (%u others)",
                (int)base, overflows, s->seq_gaps, s->wrong_ids);
    /* Back to the idle state of a client between cuts, the last message
     * unacknowledged (Republish after the next move). */
    while (s->pending > 0)
        itc_take(s, base + 1, &ra_arena);
    for (int i = 0; i < RA_INFLIGHT; i++)
        itc_publish(s);
    (void)uaconn_close_session(&w);
    (void)uaconn_close(&w);
    uaconn_clear(&w);
}

int
main(int argc, char **argv)
{
    struct itc_sub *s;
    char           bin[PATH_MAX];
    pid_t          broker;
    uint64_t       end;
    ua_status      st;

    itest_init("integ_roam");
    (void)argc;
    itest_guard(RA_WATCHDOG_S, ra_log);
    ua_arena_init(&ra_arena, malloc(RA_ARENA), RA_ARENA);
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        itest_fatal("calloc");
    itest_broker_bin(argv[0], bin, sizeof(bin));
    itest_tmpdir("uabroker-roam", ra_dir, sizeof(ra_dir));
    snprintf(ra_run, sizeof(ra_run), "%s/run", ra_dir);
    snprintf(ra_log, sizeof(ra_log), "%s/broker.log", ra_dir);
    {
        const char *const extra[] = {
            "--vars", "100",
            "--set", "limits.max_monitored_item_queue_size=1000",
            "--set", "security.anonymous_write=true",
            "--set", "limits.session_move_timeout_ms=1000", NULL
        };

        broker = itest_broker_start(bin, RA_WORKERS, ra_run, ra_log, extra,
                                    10000, &ra_port, &ra_sport);
    }

    /* 1. S, its subscription, its initial values. */
    s->worker = itc_channel(&s->c, ra_port, ra_sport, RA_WORKERS, -1);
    st = uaconn_session(&s->c);
    if (st != UA_GOOD)
        itest_fatal("subscriber session: 0x%08X", st);
    itc_subscribe(s, RA_PUB_MS, RA_SAMPLE_MS, RA_QUEUE, &ra_arena);
    for (int i = 0; i < RA_INFLIGHT; i++)
        itc_publish(s);
    end = itest_ms() + RA_WAIT_MS;
    for (;;) {
        bool all = true;

        for (int k = 0; k < ITC_ITEMS; k++)
            if (s->it[k].last == INT64_MIN)
                all = false;
        if (all)
            break;
        if (itest_ms() >= end)
            itest_fatal("no initial values");
        itc_take(s, INT64_MAX, &ra_arena);
        itc_publish(s);
    }

    /* 2. Bad tokens, S undisturbed. */
    ra_bad_tokens(s);

    /* 3. The cuts, each one a move. */
    for (int r = 1; r <= RA_CUTS; r++)
        ra_round(s, 1000 * r);

    /* 4. Counted. */
    {
        uint64_t in = ra_stat("sessions_moved_in");
        uint64_t out = ra_stat("sessions_moved_out");

        itest_check(in == RA_CUTS && out == RA_CUTS,
                    "/stats: %llu sessions moved in, %llu out (%d cuts)",
                    (unsigned long long)in, (unsigned long long)out,
                    RA_CUTS);
    }

    /* 5. Two channels at once; TransferSubscriptions across workers; a
     * stopped holder.  (S's session ends on a channel it has.) */
    while (s->pending > 0)
        itc_take(s, INT64_MAX, &ra_arena);
    ra_twice(s);
    ra_transfer();
    ra_stalled_owner(s);            /* closes S's session */

    free(s);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    return itest_finish();
}
