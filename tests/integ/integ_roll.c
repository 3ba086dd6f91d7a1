/*
 * tests/integ/integ_roll.c: a rolling restart keeps every session (issue
 * 19 item 3, docs/operations.md "Rolling restart", docs/architecture.md
 * §11).
 *
 * Starts `uabroker -w 2`, then:
 *
 *   1. a subscriber S (a subscription at RR_PUB_MS, ITC_ITEMS monitored
 *      items, queueSize RR_QUEUE) takes its initial values; a writer W on
 *      the OTHER worker;
 *   2. two rolling restarts, the first by `uabroker restart-workers`
 *      (the pid file), the second by SIGUSR2; each: W writes a counter
 *      into every item every RR_WRITE_MS all along (its connection drops
 *      when its worker retires: it connects again, to any worker, with a
 *      new session, and writes the value again; the same value twice is
 *      no change); S's connection drops too; once both workers were
 *      replaced (/stats: each row's restarts one more, a new pid), S
 *      connects to any worker and activates THE SAME session (no second
 *      CreateSession): Good, the same subscription id, and publishes
 *      until every value came: each exactly once and in order, no gap in
 *      the sequence numbers, no Overflow bit;
 *   3. the broker stops with exit 0;
 *   4. `uabroker -w 1`: a rolling restart replaces its only worker (no
 *      peer: its successor takes the session over from the park,
 *      worker/park.h): ActivateSession of the old session Good;
 *   5. server.retire_kill_ms at its bound (200): a stopped worker is
 *      killed and replaced that long after the restart asked it to
 *      retire.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_roll: N passed,
 * M failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <signal.h>
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
#include "tests/lib/itcount.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define RR_WORKERS    2
#define RR_QUEUE      500
#define RR_PUB_MS     100
#define RR_SAMPLE_MS  50
#define RR_WRITE_MS   100
#define RR_INFLIGHT   3
#define RR_WAIT_MS    10000
#define RR_ROLL_MS    30000       /* a rolling restart of 2 workers, at most */
#define RR_ARENA      (4u << 20)
#define RR_WATCHDOG_S 150
#define RR_ROLLS      2

static struct ua_arena rr_arena;
static char            rr_dir[PATH_MAX], rr_run[PATH_MAX + 8];
static char            rr_log[PATH_MAX + 16], rr_bin[PATH_MAX];
static uint16_t        rr_port, rr_sport;

static int rr_connect(struct uaconn *c);
static int rr_worker_of(struct uaconn *c);
static void rr_writer(struct uaconn *w);
static void rr_ask(int how);
static bool rr_rolled(const uint64_t *restarts0, const uint64_t *pid0);
static void rr_roll(struct itc_sub *s, int how, int32_t base);
static void rr_one_worker(void);
static void rr_kill_at_limit(void);

/* A channel to any worker (the one the kernel picks).  0 or -1. */
static int
rr_connect(struct uaconn *c)
{
    uaconn_init(c);
    if (uaconn_connect(c, "127.0.0.1", rr_port) != 0
        || uaconn_hello(c, NULL) != UA_GOOD || uaconn_open(c, 0) != UA_GOOD) {
        uaconn_clear(c);
        return -1;
    }
    return 0;
}

/* The worker c's channel is on: the one whose connections went up. */
static int
rr_worker_of(struct uaconn *c)
{
    for (int t = 0; t < 64; t++) {
        uint64_t before[RR_WORKERS], after[RR_WORKERS];
        int      w = -1;

        for (int i = 0; i < RR_WORKERS; i++)
            (void)itest_worker_u64(rr_sport, i, "connections_total",
                                   &before[i]);
        if (rr_connect(c) != 0)
            itest_fatal("cannot open a SecureChannel");
        for (int i = 0; i < RR_WORKERS; i++) {
            (void)itest_worker_u64(rr_sport, i, "connections_total",
                                   &after[i]);
            if (after[i] > before[i])
                w = i;
        }
        if (w >= 0)
            return w;
        (void)uaconn_close(c);
        uaconn_clear(c);
    }
    itest_fatal("cannot tell the worker of a channel");
}

/* W again: a channel to any worker, a new session. */
static void
rr_writer(struct uaconn *w)
{
    uint64_t end = itest_ms() + RR_WAIT_MS;

    if (w->fd != -1)
        close(w->fd);
    w->fd = -1;
    uaconn_clear(w);
    while (itest_ms() < end) {
        if (rr_connect(w) == 0) {
            if (uaconn_session(w) == UA_GOOD)
                return;
            (void)uaconn_close(w);
            uaconn_clear(w);
        }
        itest_sleep_ms(50);
    }
    itest_fatal("the writer cannot connect again");
}

/* Ask for a rolling restart: 0 `uabroker restart-workers`, 1 SIGUSR2. */
static void
rr_ask(int how)
{
    if (how == 0) {
        char *const argv[] = { rr_bin, "--runtime-dir", rr_run,
                               "restart-workers", NULL };
        char        log[PATH_MAX + 16];
        pid_t       p;

        snprintf(log, sizeof(log), "%s/cmd.log", rr_dir);
        p = itest_spawn(log, argv);
        itest_check(itest_wait(p) == 0,
                    "uabroker restart-workers: exit 0 (the pid file found "
                    "the broker)");
    } else {
        FILE *f;
        char  path[PATH_MAX + 32];
        long  pid = -1;

        snprintf(path, sizeof(path), "%s/uabroker.pid", rr_run);
        f = fopen(path, "r");
        if (f == NULL || fscanf(f, "%ld", &pid) != 1)
            itest_fatal("no pid file %s", path);
        fclose(f);
        if (kill((pid_t)pid, SIGUSR2) != 0)
            itest_fatal("SIGUSR2");
    }
}

/* Every worker replaced: restarts one more, a new pid, serving. */
static bool
rr_rolled(const uint64_t *restarts0, const uint64_t *pid0)
{
    for (int i = 0; i < RR_WORKERS; i++) {
        uint64_t r = 0, p = 0;

        if (!itest_worker_u64(rr_sport, i, "restarts", &r)
            || !itest_worker_u64(rr_sport, i, "pid", &p)
            || r != restarts0[i] + 1 || p == 0 || p == pid0[i])
            return false;
    }
    return true;
}

/*
 * One rolling restart under load: W writes base + 1, .. every
 * RR_WRITE_MS until both workers were replaced and 5 more; then S comes
 * back to its session and takes every value.
 */
static void
rr_roll(struct itc_sub *s, int how, int32_t base)
{
    struct uaconn    w;
    struct ua_nodeid tok = s->c.cl.auth_token;
    uint64_t         restarts0[RR_WORKERS], pid0[RR_WORKERS], end, t0;
    uint32_t         values = 0, breaks = 0, overflows = 0, missing = 0;
    uint32_t         sub_id = s->sub_id, reconnects = 0;
    int32_t          v = base, last;
    int              extra = -1, sw, ww;
    ua_status        st;

    for (int i = 0; i < RR_WORKERS; i++) {
        if (!itest_worker_u64(rr_sport, i, "restarts", &restarts0[i])
            || !itest_worker_u64(rr_sport, i, "pid", &pid0[i]))
            itest_fatal("no row %d in /stats", i);
    }
    for (int t = 0; (ww = rr_worker_of(&w)) == s->worker; t++) {
        (void)uaconn_close(&w);
        uaconn_clear(&w);
        if (t == 64)
            itest_fatal("no channel on another worker than S's session");
    }
    if (uaconn_session(&w) != UA_GOOD)
        itest_fatal("writer session");
    while (s->pending > 0)
        itc_take(s, INT64_MAX, &rr_arena);
    for (int k = 0; k < ITC_ITEMS; k++)
        s->it[k].values = s->it[k].breaks = s->it[k].overflows = 0;
    printf("# roll %d: S's session on worker %d, W on worker %d\n",
           (int)base, s->worker, ww);
    rr_ask(how);
    t0 = itest_ms();
    end = t0 + RR_ROLL_MS;
    /* W writes all along; S, idle, loses its connection meanwhile. */
    while (extra != 0 && itest_ms() < end) {
        v++;
        for (;;) {
            st = itc_write(&w, v, &rr_arena);
            if (st == UA_GOOD)
                break;
            reconnects++;
            rr_writer(&w);          /* and the same value again */
        }
        itest_sleep_ms(RR_WRITE_MS);
        if (extra < 0 && rr_rolled(restarts0, pid0))
            extra = 5;
        else if (extra > 0)
            extra--;
    }
    last = v;
    itest_check(extra == 0, "roll %d: both workers replaced in %llu ms "
                "(restarts one more each in /stats, new pids)", (int)base,
                (unsigned long long)(itest_ms() - t0));
    printf("# roll %d: %d values written, the writer reconnected %u "
           "times\n", (int)base, (int)(last - base), reconnects);
    /* S comes back: any worker, the same session. */
    close(s->c.fd);
    s->c.fd = -1;
    uaconn_clear(&s->c);
    sw = rr_worker_of(&s->c);
    s->worker = sw;
    if (ua_client_set_token(&s->c.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the session token");
    st = itc_activate(&s->c, &rr_arena);
    itest_check(st == UA_GOOD, "roll %d: ActivateSession of the same "
                "session on worker %d after the restart: 0x%08X",
                (int)base, sw, st);
    if (st != UA_GOOD) {
        (void)uaconn_close(&w);
        uaconn_clear(&w);
        return;
    }
    s->pending = 0;
    s->first_ms = 0;
    s->have_ack = false;
    for (int i = 0; i < RR_INFLIGHT; i++)
        itc_publish(s);
    end = itest_ms() + RR_WAIT_MS;
    for (;;) {
        bool all = true;

        for (int k = 0; k < ITC_ITEMS; k++)
            if (s->it[k].last < last)
                all = false;
        if (all || itest_ms() >= end)
            break;
        itc_take(s, base + 1, &rr_arena);
        itc_publish(s);
    }
    for (int k = 0; k < ITC_ITEMS; k++) {
        values += s->it[k].values;
        breaks += s->it[k].breaks;
        overflows += s->it[k].overflows;
        if (s->it[k].last < last)
            missing++;
    }
    printf("# roll %d: %u of %u values, %u breaks, %u Overflow bits, %u "
           "items short, sequence gaps %u\n", (int)base, values,
           (unsigned)(ITC_ITEMS * (last - base)), breaks, overflows, missing,
           s->seq_gaps);
    itest_check(values == (uint32_t)(ITC_ITEMS * (last - base)) && breaks == 0
                    && missing == 0,
                "roll %d: every value written during the restart arrives "
                "exactly once and in order (%u of %u)", (int)base, values,
                (unsigned)(ITC_ITEMS * (last - base)));
    itest_check(overflows == 0 && s->seq_gaps == 0 && s->wrong_ids == 0
                    && s->sub_id == sub_id,
                "roll %d: no Overflow bit (%u), no sequence gap (%u), the "
                "same subscription id %u (%u others)", (int)base, overflows,
                s->seq_gaps, sub_id, s->wrong_ids);
    (void)uaconn_close_session(&w);
    (void)uaconn_close(&w);
    uaconn_clear(&w);
}

/* -w 1: the worker is replaced, its successor takes its session over
 * from the park (no peer to hand it to). */
static void
rr_one_worker(void)
{
    struct uaconn    c;
    struct ua_nodeid tok;
    pid_t            broker;
    uint64_t         r0 = 0, p0 = 0, r = 0, p = 0, end;
    ua_status        st;
    const char *const extra[] = { "--vars", "100", NULL };

    snprintf(rr_run, sizeof(rr_run), "%s/run1", rr_dir);
    snprintf(rr_log, sizeof(rr_log), "%s/broker1.log", rr_dir);
    broker = itest_broker_start(rr_bin, 1, rr_run, rr_log, extra, 10000,
                                &rr_port, &rr_sport);
    if (rr_connect(&c) != 0 || uaconn_session(&c) != UA_GOOD)
        itest_fatal("-w 1: a session");
    tok = c.cl.auth_token;
    if (!itest_worker_u64(rr_sport, 0, "restarts", &r0)
        || !itest_worker_u64(rr_sport, 0, "pid", &p0))
        itest_fatal("-w 1: no row in /stats");
    rr_ask(1);
    end = itest_ms() + RR_ROLL_MS;
    while (itest_ms() < end) {
        if (itest_worker_u64(rr_sport, 0, "restarts", &r)
            && itest_worker_u64(rr_sport, 0, "pid", &p) && r == r0 + 1
            && p != 0 && p != p0)
            break;
        itest_sleep_ms(50);
    }
    itest_check(r == r0 + 1 && p != p0, "-w 1: the only worker replaced "
                "(restarts %llu, was %llu)", (unsigned long long)r,
                (unsigned long long)r0);
    close(c.fd);
    c.fd = -1;
    uaconn_clear(&c);
    if (rr_connect(&c) != 0)
        itest_fatal("-w 1: cannot connect again");
    if (tok.idtype != UA_IDTYPE_GUID
        || ua_client_set_token(&c.cl, &tok) != UA_GOOD)
        itest_fatal("-w 1: cannot set the token");
    st = itc_activate(&c, &rr_arena);
    itest_check(st == UA_GOOD, "-w 1: no peer, the successor took the "
                "session over from the park: ActivateSession Good "
                "(0x%08X)", st);
    (void)uaconn_close(&c);
    uaconn_clear(&c);
    st = rr_connect(&c) == 0 ? uaconn_session(&c) : UA_BAD_NOT_CONNECTED;
    itest_check(st == UA_GOOD, "-w 1: a new session: 0x%08X", st);
    (void)uaconn_close_session(&c);
    (void)uaconn_close(&c);
    uaconn_clear(&c);
    itest_check(itest_stop(broker, 5000) == 0,
                "-w 1: SIGTERM: the broker exits 0");
}

/*
 * server.retire_kill_ms at its lower bound (200; retire_handover_ms 100):
 * a worker that cannot retire (stopped, SIGSTOP) is SIGKILLed that long
 * after SIGUSR2, not after the default 10 s, and replaced.
 */
static void
rr_kill_at_limit(void)
{
    pid_t       broker;
    uint64_t    r0 = 0, p0 = 0, r = 0, p = 0, t0, t = 0, end;
    const char *const extra[] = {
        "--vars", "100", "--set", "server.retire_handover_ms=100",
        "--set", "server.retire_kill_ms=200", NULL
    };

    snprintf(rr_run, sizeof(rr_run), "%s/run2", rr_dir);
    snprintf(rr_log, sizeof(rr_log), "%s/broker2.log", rr_dir);
    broker = itest_broker_start(rr_bin, 1, rr_run, rr_log, extra, 10000,
                                &rr_port, &rr_sport);
    if (!itest_worker_u64(rr_sport, 0, "restarts", &r0)
        || !itest_worker_u64(rr_sport, 0, "pid", &p0) || p0 == 0)
        itest_fatal("retire_kill_ms: no row in /stats");
    if (kill((pid_t)p0, SIGSTOP) != 0)
        itest_fatal("SIGSTOP");
    t0 = itest_ms();
    rr_ask(1);
    end = t0 + RR_ROLL_MS;
    while (itest_ms() < end) {
        if (itest_worker_u64(rr_sport, 0, "restarts", &r)
            && itest_worker_u64(rr_sport, 0, "pid", &p) && r == r0 + 1
            && p != 0 && p != p0) {
            t = itest_ms() - t0;
            break;
        }
        itest_sleep_ms(20);
    }
    itest_check(r == r0 + 1 && p != p0, "retire_kill_ms=200: the stopped "
                "worker replaced (restarts %llu, was %llu)",
                (unsigned long long)r, (unsigned long long)r0);
    itest_check(t >= 200 && t < 5000, "retire_kill_ms=200: killed and "
                "replaced after %llu ms (>= 200, well before the default "
                "10 s)", (unsigned long long)t);
    itest_check(itest_stop(broker, 5000) == 0,
                "retire_kill_ms: SIGTERM: the broker exits 0");
}

int
main(int argc, char **argv)
{
    struct itc_sub *s;
    pid_t          broker;
    uint64_t       end, moved;
    ua_status      st;
    int            sw;

    itest_init("integ_roll");
    (void)argc;
    itest_guard(RR_WATCHDOG_S, rr_log);
    ua_arena_init(&rr_arena, malloc(RR_ARENA), RR_ARENA);
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        itest_fatal("calloc");
    itest_broker_bin(argv[0], rr_bin, sizeof(rr_bin));
    itest_tmpdir("uabroker-roll", rr_dir, sizeof(rr_dir));
    snprintf(rr_run, sizeof(rr_run), "%s/run", rr_dir);
    snprintf(rr_log, sizeof(rr_log), "%s/broker.log", rr_dir);
    {
        const char *const extra[] = {
            "--vars", "100",
            "--set", "limits.max_monitored_item_queue_size=1000",
            "--set", "security.anonymous_write=true",
            "--set", "limits.session_move_timeout_ms=1000", NULL
        };
        broker = itest_broker_start(rr_bin, RR_WORKERS, rr_run, rr_log,
                                    extra, 10000, &rr_port, &rr_sport);
    }
    sw = rr_worker_of(&s->c);
    st = uaconn_session(&s->c);
    if (st != UA_GOOD)
        itest_fatal("subscriber session: 0x%08X", st);
    printf("# S on worker %d\n", sw);
    s->worker = sw;
    itc_subscribe(s, RR_PUB_MS, RR_SAMPLE_MS, RR_QUEUE, &rr_arena);
    for (int i = 0; i < RR_INFLIGHT; i++)
        itc_publish(s);
    end = itest_ms() + RR_WAIT_MS;
    for (;;) {
        bool all = true;

        for (int k = 0; k < ITC_ITEMS; k++)
            if (s->it[k].last == INT64_MIN)
                all = false;
        if (all)
            break;
        if (itest_ms() >= end)
            itest_fatal("no initial values");
        itc_take(s, INT64_MAX, &rr_arena);
        itc_publish(s);
    }
    for (int r = 0; r < RR_ROLLS; r++)
        rr_roll(s, r, 1000 * (r + 1));
    moved = 0;
    for (int i = 0; i < RR_WORKERS; i++) {
        uint64_t x = 0;

        (void)itest_worker_u64(rr_sport, i, "sessions_moved_in", &x);
        moved += x;
    }
    printf("# sessions moved in since the last restart of each worker: "
           "%llu\n", (unsigned long long)moved);
    while (s->pending > 0)
        itc_take(s, INT64_MAX, &rr_arena);
    (void)uaconn_close_session(&s->c);
    (void)uaconn_close(&s->c);
    uaconn_clear(&s->c);
    free(s);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    rr_one_worker();
    rr_kill_at_limit();
    return itest_finish();
}
