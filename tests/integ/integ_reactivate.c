/*
 * tests/integ/integ_reactivate.c: a session whose connection dropped is
 * reactivated on a new SecureChannel, and every value written meanwhile
 * reaches its subscription (Part 4 §5.6.3, §6.7), on loopback.
 *
 * Starts `uabroker -w 2` with queues of up to 1000 and the default limits
 * otherwise, then:
 *
 *   1. a subscriber S (a subscription at RA_PUB_MS, ITC_ITEMS monitored
 *      items on the Int32 variables ns=1;s=v0, v2, .., samplingInterval
 *      RA_SAMPLE_MS, queueSize RA_QUEUE) takes its initial values with
 *      RA_INFLIGHT Publish requests in flight;
 *   2. three cuts: with a writer W on the OTHER worker, on S's own worker,
 *      and on the other worker again (connections go where SO_REUSEPORT
 *      sends them: we reconnect until they land where we want, telling
 *      the workers apart by their connections_total in /stats):
 *      a. S's TCP connection is closed under it, without CloseSession;
 *      b. W writes RA_ROUNDS distinct values into every item's variable,
 *         one Write of all of them every RA_WRITE_MS;
 *      c. S opens a new connection and SecureChannel on its worker and
 *         activates its session with its authenticationToken: Good;
 *      d. S publishes until every value came: each item gets every value
 *         written, exactly once and in order, no Overflow bit, the
 *         NotificationMessage sequence numbers without a gap.
 *
 * The regression (docs/design-notes.md D85): while S had no connection,
 * its worker was woken by doorbells alone, its cached clock stood still
 * at its last client callback, every block's time was capped at it, and
 * each value replaced the one before it as if inside one sampling
 * interval (RA_SAMPLE_MS, less than RA_WRITE_MS): 30 of 100 arrived,
 * without Overflow bit or gap.  A writer on S's worker kept that clock
 * going.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_reactivate: N passed,
 * M failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static struct ua_arena ra_arena;
static char            ra_dir[PATH_MAX], ra_run[PATH_MAX + 8];
static char            ra_log[PATH_MAX + 16];
static uint16_t        ra_port, ra_sport;

static void ra_round(struct itc_sub *s, bool other, int32_t base);

/*
 * One cut: S's connection dropped, W (on the other worker when other,
 * else on S's) writes base + 1 .. base + RA_ROUNDS, S reactivates on its
 * worker and publishes until every value came.
 */
static void
ra_round(struct itc_sub *s, bool other, int32_t base)
{
    struct uaconn      w;
    struct ua_nodeid   tok = s->c.cl.auth_token;
    uint8_t            tokbuf[UA_CLIENT_TOKEN_MAX];
    const char        *where = other ? "another worker" : "S's worker";
    uint64_t           end, dropped = 0, ovf = 0;
    uint32_t           values = 0, breaks = 0, overflows = 0, missing = 0;
    int                ww;
    ua_status          st;

    if (tok.idtype == UA_IDTYPE_STRING || tok.idtype == UA_IDTYPE_OPAQUE) {
        memcpy(tokbuf, tok.id.str.data, (size_t)tok.id.str.len);
        tok.id.str.data = tokbuf;
    }
    ww = itc_channel(&w, ra_port, ra_sport, RA_WORKERS, other ? RA_WORKERS + s->worker : s->worker);
    st = uaconn_session(&w);
    if (st != UA_GOOD)
        itest_fatal("writer session: 0x%08X", st);
    printf("# round %d: S on worker %d, W on worker %d\n", (int)base,
           s->worker, ww);

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

    /* c. A new channel on S's worker; the same session. */
    (void)itc_channel(&s->c, ra_port, ra_sport, RA_WORKERS, s->worker);
    if (ua_client_set_token(&s->c.cl, &tok) != UA_GOOD)
        itest_fatal("cannot set the session token");
    st = itc_activate(&s->c, &ra_arena);
    itest_check(st == UA_GOOD,
                "W on %s: ActivateSession on a new channel: 0x%08X", where,
                st);
    if (st != UA_GOOD)
        return;

    /* d. Publish until every value came (or RA_WAIT_MS). */
    for (int k = 0; k < ITC_ITEMS; k++) {
        s->it[k].values = s->it[k].breaks = s->it[k].overflows = 0;
    }
    s->pending = 0;
    s->have_ack = false;
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
    for (int i = 0; i < RA_WORKERS; i++) {
        uint64_t d = 0, o = 0;

        (void)itest_worker_u64(ra_sport, i, "notif_dropped", &d);
        (void)itest_worker_u64(ra_sport, i, "overflows", &o);
        dropped += d;
        ovf += o;
    }
    printf("# W on %s: %u of %u values, %u breaks, %u with the Overflow "
           "bit, %u items short; sequence gaps %u; /stats overflows %llu\n",
           where, values, ITC_ITEMS * RA_ROUNDS, breaks, overflows, missing,
           s->seq_gaps, (unsigned long long)ovf);
    (void)dropped;
    itest_check(values == ITC_ITEMS * RA_ROUNDS && breaks == 0
                    && missing == 0,
                "W on %s: every value written during the outage arrives "
                "once and in order (%u of %u)", where, values,
                ITC_ITEMS * RA_ROUNDS);
    itest_check(overflows == 0 && s->seq_gaps == 0,
                "W on %s: no Overflow bit (%u), no gap in the sequence "
                "numbers (%u)", where, overflows, s->seq_gaps);
    /* Back to the idle state of a client between cuts. */
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

    itest_init("integ_reactivate");
    (void)argc;
    itest_guard(RA_WATCHDOG_S, ra_log);
    ua_arena_init(&ra_arena, malloc(RA_ARENA), RA_ARENA);
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        itest_fatal("calloc");
    itest_broker_bin(argv[0], bin, sizeof(bin));
    itest_tmpdir("uabroker-reactivate", ra_dir, sizeof(ra_dir));
    snprintf(ra_run, sizeof(ra_run), "%s/run", ra_dir);
    snprintf(ra_log, sizeof(ra_log), "%s/broker.log", ra_dir);
    {
        const char *const extra[] = {
            "--vars", "100",
            "--set", "limits.max_monitored_item_queue_size=1000",
            "--set", "security.anonymous_write=true", NULL
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

    /* 2. The cuts. */
    ra_round(s, true, 1000);
    ra_round(s, false, 2000);
    ra_round(s, true, 3000);

    (void)uaconn_close_session(&s->c);
    (void)uaconn_close(&s->c);
    uaconn_clear(&s->c);
    free(s);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    return itest_finish();
}
