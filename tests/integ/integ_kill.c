/*
 * tests/integ/integ_kill.c: a worker's death is a reconnect, not a loss
 * (issue 19 item 2, docs/architecture.md §11 "A worker's death").
 *
 * Starts `uabroker -w 2` (queues of up to 1000, session timeouts of at
 * most KL_TIMEOUT_MS), then:
 *
 *   1. a subscriber S (ITC_ITEMS monitored items, tests/lib/itcount.h) on
 *      worker A takes its initial values; a second session T with a
 *      subscription on A too, whose client will never come back; a writer
 *      W on the other worker B;
 *   2. W writes a value S takes and leaves unacknowledged; S's connection
 *      drops; W writes KL_QUEUED values (queued in A's monitored items,
 *      nobody to send them to); A is killed (SIGKILL); W writes KL_DEAD
 *      more, every KL_WRITE_MS, while A is dead, while its successor
 *      starts and once it serves;
 *   3. S connects again (any worker) and activates the SAME session:
 *      Good; Republish of the message it had not acknowledged: Good; S
 *      publishes until every value came: each item gets every value once
 *      and in order, no Overflow bit, no gap in the sequence numbers, the
 *      same subscription id; /stats: the two sessions taken over
 *      (sessions_inherited), session_park_values_lost 0; the time from the
 *      ActivateSession to the first notification is printed;
 *   4. T's client never comes back: after its timeout its token is
 *      BadSessionIdInvalid everywhere;
 *   5. a second broker whose park is smaller than a session
 *      (limits.session_park_bytes at 512): the session is not parked
 *      (sessions_not_parked counted), it keeps working; its worker killed,
 *      the session is gone (BadSessionIdInvalid) and the respawned worker
 *      serves new sessions.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_kill: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itcount.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define KL_WORKERS    2
#define KL_QUEUE      200
#define KL_PUB_MS     100
#define KL_SAMPLE_MS  50
#define KL_QUEUED     5           /* written while A holds S unbound */
#define KL_DEAD       5           /* written after the kill */
#define KL_WRITE_MS   100
#define KL_INFLIGHT   3
#define KL_WAIT_MS    8000
#define KL_TIMEOUT_MS 6000        /* limits.max_session_timeout_ms */
#define KL_ARENA      (4u << 20)
#define KL_WATCHDOG_S 120

static struct ua_arena kl_arena;
static char            kl_dir[PATH_MAX], kl_run[PATH_MAX + 8];
static char            kl_log[PATH_MAX + 16];
static uint16_t        kl_port, kl_sport;

static uint64_t kl_stat(const char *key);
static uint64_t kl_pid(int slot);
static uint64_t kl_respawned(int slot, uint64_t old);
static ua_status kl_republish(struct itc_sub *s, uint32_t seq);
static void kl_initial(struct itc_sub *s);
static void kl_unacked(struct itc_sub *s, struct uaconn *w, int32_t v);
static void kl_kill(char *bin);
static void kl_small_park(char *bin);

/* A counter summed over the workers' /stats rows. */
static uint64_t
kl_stat(const char *key)
{
    uint64_t sum = 0;

    for (int i = 0; i < KL_WORKERS; i++) {
        uint64_t v = 0;

        (void)itest_worker_u64(kl_sport, i, key, &v);
        sum += v;
    }
    return sum;
}

static uint64_t
kl_pid(int slot)
{
    uint64_t pid = 0;

    if (!itest_worker_u64(kl_sport, slot, "pid", &pid) || pid == 0)
        itest_fatal("no pid for worker %d", slot);
    return pid;
}

/* Wait until slot runs a worker other than pid old, up: its pid. */
static uint64_t
kl_respawned(int slot, uint64_t old)
{
    uint64_t end = itest_ms() + KL_WAIT_MS;

    while (itest_ms() < end) {
        uint64_t    pid = 0;
        char        pat[32], *body = NULL;
        const char *row;
        bool        up = false;

        snprintf(pat, sizeof(pat), "{\"slot\": %d,", slot);
        if (itest_http(kl_sport, "GET", "/stats", &body) == 200
            && body != NULL && (row = strstr(body, pat)) != NULL
            && itest_json_u64(row, "pid", &pid))
            up = strncmp(strstr(row, "\"state\": ") + 9, "\"up\"", 4)
                 == 0;
        free(body);
        if (up && pid != 0 && pid != old)
            return pid;
        itest_sleep_ms(20);
    }
    itest_fatal("worker %d was not respawned", slot);
}

static ua_status
kl_republish(struct itc_sub *s, uint32_t seq)
{
    struct ua_republish_request  req;
    struct ua_republish_response resp;
    ua_status                    st;

    memset(&req, 0, sizeof(req));
    req.subscription_id = s->sub_id;
    req.retransmit_sequence_number = seq;
    ua_arena_reset(&kl_arena);
    st = uaconn_call(&s->c, &ua_types[UA_TYPE_REPUBLISHREQUEST], &req,
                     &ua_types[UA_TYPE_REPUBLISHRESPONSE], &resp,
                     &kl_arena);
    if (st == UA_GOOD && resp.notification_message.sequence_number != seq)
        st = UA_BAD_UNEXPECTED_ERROR;
    return st;
}

/* s's subscription and its initial values, KL_INFLIGHT Publish requests
 * in flight afterwards. */
static void
kl_initial(struct itc_sub *s)
{
    uint64_t end = itest_ms() + KL_WAIT_MS;

    itc_subscribe(s, KL_PUB_MS, KL_SAMPLE_MS, KL_QUEUE, &kl_arena);
    for (int i = 0; i < KL_INFLIGHT; i++)
        itc_publish(s);
    for (;;) {
        bool all = true;

        for (int k = 0; k < ITC_ITEMS; k++)
            if (s->it[k].last == INT64_MIN)
                all = false;
        if (all)
            break;
        if (itest_ms() >= end)
            itest_fatal("no initial values");
        itc_take(s, INT64_MAX, &kl_arena);
        itc_publish(s);
    }
}

/* W writes v; S takes the message that carries it and leaves it
 * unacknowledged (s->unacked). */
static void
kl_unacked(struct itc_sub *s, struct uaconn *w, int32_t v)
{
    uint64_t end = itest_ms() + KL_WAIT_MS;

    if (itc_write(w, v, &kl_arena) != UA_GOOD)
        itest_fatal("Write %d", (int)v);
    s->have_ack = false;
    while (!s->have_ack && s->pending > 0 && itest_ms() < end)
        itc_take(s, v + 1, &kl_arena);
    if (!s->have_ack)
        itest_fatal("no message for value %d", (int)v);
    s->unacked = s->ack.sequence_number;
    s->have_ack = false;
}

/* Steps 1 to 4 (see the top). */
static void
kl_kill(char *bin)
{
    struct itc_sub   *s = calloc(1, sizeof(*s)), *t = calloc(1, sizeof(*t));
    struct uaconn     w, x;
    struct ua_nodeid  tok, ttok;
    uint8_t           tokbuf[UA_CLIENT_TOKEN_MAX];
    uint8_t           ttokbuf[UA_CLIENT_TOKEN_MAX];
    uint64_t          pid, npid, end, t0, lost, inh, ovf;
    uint32_t          values = 0, breaks = 0, overflows = 0, missing = 0;
    uint32_t          unacked, sub_id;
    const int32_t     base = 1000;
    const int32_t     last = base + KL_QUEUED + KL_DEAD;
    pid_t             broker;
    int               a;
    ua_status         st;

    if (s == NULL || t == NULL)
        itest_fatal("calloc");
    {
        const char *const extra[] = {
            "--vars", "100",
            "--set", "limits.max_monitored_item_queue_size=1000",
            "--set", "security.anonymous_write=true",
            "--set", "limits.min_session_timeout_ms=1000",
            "--set", "limits.max_session_timeout_ms=6000", NULL
        };

        broker = itest_broker_start(bin, KL_WORKERS, kl_run, kl_log, extra,
                                    10000, &kl_port, &kl_sport);
    }

    /* 1. S and T on A, W on B. */
    a = itc_channel(&s->c, kl_port, kl_sport, KL_WORKERS, -1);
    s->worker = a;
    if (uaconn_session(&s->c) != UA_GOOD)
        itest_fatal("subscriber session");
    kl_initial(s);
    sub_id = s->sub_id;
    t->worker = itc_channel(&t->c, kl_port, kl_sport, KL_WORKERS, a);
    if (uaconn_session(&t->c) != UA_GOOD)
        itest_fatal("T's session");
    kl_initial(t);
    (void)itc_channel(&w, kl_port, kl_sport, KL_WORKERS, KL_WORKERS + a);
    if (uaconn_session(&w) != UA_GOOD)
        itest_fatal("writer session");
    tok = s->c.cl.auth_token;
    ttok = t->c.cl.auth_token;
    if (tok.idtype == UA_IDTYPE_STRING || tok.idtype == UA_IDTYPE_OPAQUE) {
        memcpy(tokbuf, tok.id.str.data, (size_t)tok.id.str.len);
        tok.id.str.data = tokbuf;
        memcpy(ttokbuf, ttok.id.str.data, (size_t)ttok.id.str.len);
        ttok.id.str.data = ttokbuf;
    }

    {
        uint64_t pa = 0, pb = 0;

        itest_sleep_ms(300);        /* the parks written */
        (void)itest_worker_u64(kl_sport, a, "session_park_bytes", &pa);
        (void)itest_worker_u64(kl_sport, 1 - a, "session_park_bytes", &pb);
        printf("# park: %llu bytes on worker %d (S and T: 1 subscription "
               "of %d items each, a kept message), %llu on the other (W: "
               "a session alone)\n", (unsigned long long)pa, a, ITC_ITEMS,
               (unsigned long long)pb);
    }

    /* 2. One message unacknowledged; S drops; values queue in A; A dies;
     * more values while it is dead. */
    kl_unacked(s, &w, base);
    unacked = s->unacked;
    close(s->c.fd);
    s->c.fd = -1;
    uaconn_clear(&s->c);
    itest_sleep_ms(2 * KL_PUB_MS);
    for (int r = 1; r <= KL_QUEUED; r++) {
        if (itc_write(&w, base + r, &kl_arena) != UA_GOOD)
            itest_fatal("Write %d", base + r);
        itest_sleep_ms(KL_WRITE_MS);
    }
    pid = kl_pid(a);
    printf("# S and T on worker %d (pid %llu), W on the other: SIGKILL\n",
           a, (unsigned long long)pid);
    kill((pid_t)pid, SIGKILL);
    /* While A is dead, while its successor starts, once it serves. */
    for (int r = KL_QUEUED + 1; r <= KL_QUEUED + KL_DEAD; r++) {
        if (itc_write(&w, base + r, &kl_arena) != UA_GOOD)
            itest_fatal("Write %d", base + r);
        itest_sleep_ms(KL_WRITE_MS);
    }
    close(t->c.fd);                 /* T's client is gone for good */
    t->c.fd = -1;
    uaconn_clear(&t->c);

    /* 3. S again, anywhere (a claim on B waits while A's successor is
     * not up yet): the same session. */
    s->worker = itc_channel(&s->c, kl_port, kl_sport, KL_WORKERS, -1);
    if (ua_client_set_token(&s->c.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the session token");
    t0 = itest_ms();
    st = itc_activate(&s->c, &kl_arena);
    itest_check(st == UA_GOOD, "ActivateSession of the dead worker's "
                "session (channel on worker %d): 0x%08X", s->worker, st);
    if (st != UA_GOOD)
        itest_fatal("cannot go on");
    npid = kl_respawned(a, pid);
    printf("# worker %d respawned (pid %llu)\n", a,
           (unsigned long long)npid);
    st = kl_republish(s, unacked);
    itest_check(st == UA_GOOD, "Republish of message %u, sent before the "
                "kill and not acknowledged: 0x%08X", unacked, st);
    s->ack.subscription_id = s->sub_id;
    s->ack.sequence_number = unacked;
    s->have_ack = true;
    for (int k = 0; k < ITC_ITEMS; k++)
        s->it[k].values = s->it[k].breaks = s->it[k].overflows = 0;
    s->pending = 0;
    s->first_ms = 0;
    for (int i = 0; i < KL_INFLIGHT; i++)
        itc_publish(s);
    end = itest_ms() + KL_WAIT_MS;
    for (;;) {
        bool all = true;

        for (int k = 0; k < ITC_ITEMS; k++)
            if (s->it[k].last < last)
                all = false;
        if (all || itest_ms() >= end)
            break;
        itc_take(s, base + 1, &kl_arena);
        itc_publish(s);
    }
    for (int k = 0; k < ITC_ITEMS; k++) {
        values += s->it[k].values;
        breaks += s->it[k].breaks;
        overflows += s->it[k].overflows;
        if (s->it[k].last < last)
            missing++;
    }
    lost = kl_stat("session_park_values_lost");
    inh = kl_stat("sessions_inherited");
    ovf = kl_stat("overflows");
    printf("# after the kill: %u of %u values, %u breaks, %u with the "
           "Overflow bit, %u items short; sequence gaps %u; "
           "ActivateSession to first notification %llu ms; /stats "
           "sessions_inherited %llu, session_park_values_lost %llu, "
           "overflows %llu\n", values, ITC_ITEMS * (KL_QUEUED + KL_DEAD),
           breaks, overflows, missing, s->seq_gaps,
           (unsigned long long)(s->first_ms ? s->first_ms - t0 : 0),
           (unsigned long long)inh, (unsigned long long)lost,
           (unsigned long long)ovf);
    itest_check(values == ITC_ITEMS * (KL_QUEUED + KL_DEAD) && breaks == 0
                    && missing == 0,
                "every value written before and after the kill arrives "
                "once and in order (%u of %u)", values,
                ITC_ITEMS * (KL_QUEUED + KL_DEAD));
    itest_check(overflows == 0 && s->seq_gaps == 0 && s->wrong_ids == 0
                    && s->sub_id == sub_id,
                "no Overflow bit (%u), no gap in the sequence numbers (%u), "
                "the same subscription id (%u others)", overflows,
                s->seq_gaps, s->wrong_ids);
    itest_check(inh == 2 && lost == 0,
                "/stats: 2 sessions taken over (%llu), none of their "
                "values lost (session_park_values_lost %llu)",
                (unsigned long long)inh, (unsigned long long)lost);

    /* 4. T times out where it went. */
    itest_sleep_ms(KL_TIMEOUT_MS + 2000);
    (void)itc_channel(&x, kl_port, kl_sport, KL_WORKERS, -1);
    if (ua_client_set_token(&x.cl, &ttok) != UA_GOOD)
        itest_fatal("cannot set T's token");
    st = itc_activate(&x, &kl_arena);
    itest_check(st == UA_BAD_SESSION_ID_INVALID,
                "a session whose client never came back timed out: "
                "BadSessionIdInvalid (0x%08X)", st);
    (void)uaconn_close(&x);
    uaconn_clear(&x);
    /* S's own session timed out meanwhile too (it sent nothing). */
    (void)uaconn_close_session(&s->c);
    (void)uaconn_close(&s->c);
    uaconn_clear(&s->c);
    (void)uaconn_close_session(&w);
    (void)uaconn_close(&w);
    uaconn_clear(&w);
    free(s);
    free(t);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
}

/* Step 5 (see the top). */
static void
kl_small_park(char *bin)
{
    struct itc_sub *s = calloc(1, sizeof(*s));
    struct uaconn   w, x;
    struct ua_nodeid tok;
    uint8_t         tokbuf[UA_CLIENT_TOKEN_MAX];
    uint64_t        pid, np;
    pid_t           broker;
    int             a;
    ua_status       st;

    if (s == NULL)
        itest_fatal("calloc");
    {
        const char *const extra[] = {
            "--vars", "100",
            "--set", "security.anonymous_write=true",
            "--set", "limits.session_park_bytes=512", NULL
        };

        /* A log of its own (the first broker's stays for inspection). */
        snprintf(kl_log, sizeof(kl_log), "%s/broker2.log", kl_dir);
        snprintf(kl_run, sizeof(kl_run), "%s/run2", kl_dir);
        broker = itest_broker_start(bin, KL_WORKERS, kl_run, kl_log, extra,
                                    10000, &kl_port, &kl_sport);
    }
    a = itc_channel(&s->c, kl_port, kl_sport, KL_WORKERS, -1);
    s->worker = a;
    if (uaconn_session(&s->c) != UA_GOOD)
        itest_fatal("subscriber session");
    kl_initial(s);
    np = kl_stat("sessions_not_parked");
    itest_check(np >= 1, "a session larger than limits.session_park_bytes "
                "is not parked: counted (sessions_not_parked %llu)",
                (unsigned long long)np);
    (void)itc_channel(&w, kl_port, kl_sport, KL_WORKERS, -1);
    if (uaconn_session(&w) != UA_GOOD)
        itest_fatal("writer session");
    kl_unacked(s, &w, 7);
    itest_check(s->it[0].last == 7, "... and it works on (value %lld)",
                (long long)s->it[0].last);
    tok = s->c.cl.auth_token;
    if (tok.idtype == UA_IDTYPE_STRING || tok.idtype == UA_IDTYPE_OPAQUE) {
        memcpy(tokbuf, tok.id.str.data, (size_t)tok.id.str.len);
        tok.id.str.data = tokbuf;
    }
    pid = kl_pid(a);
    kill((pid_t)pid, SIGKILL);
    close(s->c.fd);
    s->c.fd = -1;
    uaconn_clear(&s->c);
    (void)kl_respawned(a, pid);
    (void)itc_channel(&x, kl_port, kl_sport, KL_WORKERS, a);
    if (ua_client_set_token(&x.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the token");
    st = itc_activate(&x, &kl_arena);
    itest_check(st == UA_BAD_SESSION_ID_INVALID,
                "... its worker killed, it is gone: BadSessionIdInvalid "
                "(0x%08X)", st);
    (void)uaconn_close(&x);
    uaconn_clear(&x);
    (void)itc_channel(&x, kl_port, kl_sport, KL_WORKERS, a);
    st = uaconn_session(&x);
    itest_check(st == UA_GOOD, "the respawned worker serves a new session "
                "(0x%08X)", st);
    (void)uaconn_close_session(&x);
    (void)uaconn_close(&x);
    uaconn_clear(&x);
    (void)uaconn_close(&w);
    uaconn_clear(&w);
    free(s);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
}

int
main(int argc, char **argv)
{
    char bin[PATH_MAX];

    itest_init("integ_kill");
    (void)argc;
    itest_guard(KL_WATCHDOG_S, kl_log);
    ua_arena_init(&kl_arena, malloc(KL_ARENA), KL_ARENA);
    itest_broker_bin(argv[0], bin, sizeof(bin));
    itest_tmpdir("uabroker-kill", kl_dir, sizeof(kl_dir));
    snprintf(kl_run, sizeof(kl_run), "%s/run", kl_dir);
    snprintf(kl_log, sizeof(kl_log), "%s/broker.log", kl_dir);
    kl_kill(bin);
    kl_small_park(bin);
    return itest_finish();
}
