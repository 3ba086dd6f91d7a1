/*
 * tests/integ/integ_feedwait.c: the feed waits for a historian that is
 * behind (broker/feed.h "Back-pressure"), and what is lost without that
 * wait is counted event by event.
 *
 * A small block pool (fanout.blocks = 32 of 1 KiB, a few events each) and
 * small feed batches (feed.max_batch_bytes = 2048), so that a burst of
 * events through `uabroker feed -` is many times what the pool holds
 * while the historian records them (a commit with fsync every 20 ms):
 *
 *   1. `uabroker -t`: feed.backpressure_ms above its maximum (60000)
 *      refused (exit 2, the message names the key);
 *   2. the default (feed.backpressure_ms = 1000): 6,000 events fed, all
 *      6,000 recorded by the historian, none lost (history events_lost
 *      0, fanout blocks_exhausted 0), and the feed waited (fanout
 *      feed_waits >= 1, feed_wait_ms counted, none expired);
 *   3. feed.backpressure_ms = 0 (the limit: never wait): the same burst
 *      exhausts the pool (blocks_exhausted > 0), the historian records
 *      fewer, and every event it did not get is counted: stored + lost
 *      is 6,000 exactly (before, a lost block counted once however many
 *      events it held); feed_waits stays 0.
 *
 * Prints "ok N - what" / "FAIL N - what"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/itest.h"

#define FW_WATCHDOG_S 150
#define FW_START_MS   30000
#define FW_EVENTS     6000
#define FW_SETTLE_MS  30000

static char fw_dir[PATH_MAX];
static char fw_log[PATH_MAX + 16];
static char fw_bin[PATH_MAX];
static char fw_events[PATH_MAX + 16];

/* A number of the section "name" of GET /stats (0 when missing). */
static uint64_t
fw_stat(uint16_t sport, const char *section, const char *key)
{
    char       *body = NULL;
    const char *s;
    uint64_t    v = 0;

    if (itest_http(sport, "GET", "/stats", &body) == 200 && body != NULL) {
        s = itest_json_find(body, section);
        if (s == NULL || !itest_json_u64(s, key, &v))
            v = 0;
    }
    free(body);
    return v;
}

/* `uabroker --runtime-dir D feed - < events`: its exit status. */
static int
fw_feed(void)
{
    char  cmd[4 * PATH_MAX + 128];
    char  log[PATH_MAX + 16];
    char *av[4];

    snprintf(cmd, sizeof(cmd), "exec '%s' --runtime-dir '%s' --set "
             "feed.max_batch_bytes=2048 feed - < '%s'", fw_bin, fw_dir,
             fw_events);
    snprintf(log, sizeof(log), "%s/feed.out", fw_dir);
    av[0] = "/bin/sh";
    av[1] = "-c";
    av[2] = cmd;
    av[3] = NULL;
    return itest_wait(itest_spawn(log, av));
}

/*
 * One broker with the small pool and feed.backpressure_ms = hold; the
 * burst fed; then wait until the historian accounts for every event
 * (stored + lost), and check the counters.
 */
static void
fw_burst(const char *hold, bool waits)
{
    const char *extra[32];
    char        set_hold[64];
    uint16_t    port, sport;
    uint64_t    stored = 0, lost = 0, s0, t0;
    size_t      k = 0;
    pid_t       broker;
    int         st;

    snprintf(set_hold, sizeof(set_hold), "feed.backpressure_ms=%s", hold);
    extra[k++] = "--set";
    extra[k++] = "fanout.blocks=32";
    extra[k++] = "--set";
    extra[k++] = "fanout.block_size=1024";
    extra[k++] = "--set";
    extra[k++] = "feed.max_batch_bytes=2048";
    extra[k++] = "--set";
    extra[k++] = set_hold;
    extra[k++] = "--set";
    extra[k++] = "history.simulation=false";
    extra[k++] = "--set";
    extra[k++] = "history.event_retention_s=0";
    extra[k++] = "--set";
    extra[k++] = "history.flush_ms=20";
    extra[k] = NULL;
    broker = itest_broker_start(fw_bin, 1, fw_dir, fw_log, extra,
                                FW_START_MS, &port, &sport);
    (void)port;
    t0 = itest_ms();
    while (fw_stat(sport, "history", "up") != 1
           && itest_ms() - t0 < FW_START_MS)
        itest_sleep_ms(20);
    /* The historian sets its event interest once up and logs this. */
    itest_sleep_ms(300);
    s0 = fw_stat(sport, "history", "events_stored");
    st = fw_feed();
    itest_check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                "[hold %s] uabroker feed: %d events fed (status %d)", hold,
                FW_EVENTS, st);
    t0 = itest_ms();
    while (itest_ms() - t0 < FW_SETTLE_MS) {
        stored = fw_stat(sport, "history", "events_stored") - s0;
        lost = fw_stat(sport, "history", "events_lost");
        if (stored + lost >= FW_EVENTS)
            break;
        itest_sleep_ms(50);
    }
    if (waits) {
        itest_check(stored == FW_EVENTS && lost == 0,
                    "[hold %s] the historian recorded all %d events "
                    "(stored %llu, lost %llu)", hold, FW_EVENTS,
                    (unsigned long long)stored, (unsigned long long)lost);
        itest_check(fw_stat(sport, "fanout", "blocks_exhausted") == 0,
                    "[hold %s] the block pool was never exhausted", hold);
        itest_check(fw_stat(sport, "fanout", "feed_waits") >= 1
                    && fw_stat(sport, "fanout", "feed_wait_expired")
                           == 0,
                    "[hold %s] the feed waited (feed_waits %llu, "
                    "feed_wait_ms %llu), no wait expired", hold,
                    (unsigned long long)fw_stat(sport, "fanout",
                                                "feed_waits"),
                    (unsigned long long)fw_stat(sport, "fanout",
                                                "feed_wait_ms"));
    } else {
        itest_check(lost > 0 && stored < FW_EVENTS,
                    "[hold %s] without the wait the burst loses events "
                    "(stored %llu, lost %llu)", hold,
                    (unsigned long long)stored, (unsigned long long)lost);
        itest_check(stored + lost == FW_EVENTS,
                    "[hold %s] every event is stored or counted lost, one "
                    "by one (%llu + %llu = %d)", hold,
                    (unsigned long long)stored, (unsigned long long)lost,
                    FW_EVENTS);
        itest_check(fw_stat(sport, "fanout", "blocks_exhausted") > 0
                    && fw_stat(sport, "fanout", "feed_waits") == 0,
                    "[hold %s] the pool was exhausted, the feed never "
                    "waited", hold);
    }
    itest_check(itest_stop(broker, 10000) == 0, "[hold %s] broker stops",
                hold);
}

int
main(int argc, char **argv)
{
    char  out[4096];
    char  log[PATH_MAX + 16];
    char *av[8];
    FILE *f;
    size_t len = 0;
    int   st;

    (void)argc;
    itest_init("integ_feedwait");
    itest_broker_bin(argv[0], fw_bin, sizeof(fw_bin));
    itest_tmpdir("uabroker-feedwait", fw_dir, sizeof(fw_dir));
    snprintf(fw_log, sizeof(fw_log), "%s/broker.log", fw_dir);
    itest_guard(FW_WATCHDOG_S, fw_log);

    /* 1. The limit's maximum. */
    snprintf(log, sizeof(log), "%s/t.out", fw_dir);
    av[0] = fw_bin;
    av[1] = "-t";
    av[2] = "--runtime-dir";
    av[3] = fw_dir;
    av[4] = "--set";
    av[5] = "feed.backpressure_ms=60001";
    av[6] = NULL;
    st = itest_wait(itest_spawn(log, av));
    out[0] = '\0';
    if (itest_read_file(log, (uint8_t *)out, sizeof(out) - 1, &len) == 0)
        out[len] = '\0';
    itest_check(WIFEXITED(st) && WEXITSTATUS(st) == 2
                && strstr(out, "feed.backpressure_ms") != NULL,
                "-t: feed.backpressure_ms 60001 refused (status %d): %s",
                st, out);

    /* The burst: events of the Server a second apart. */
    snprintf(fw_events, sizeof(fw_events), "%s/events.txt", fw_dir);
    f = fopen(fw_events, "w");
    if (f == NULL)
        itest_fatal("%s: cannot write", fw_events);
    for (int i = 0; i < FW_EVENTS; i++)
        fprintf(f, "event=i=2253;severity=%d;message=\"burst %d\";"
                "time=2026-01-01T%02d:%02d:%02dZ;1:Temperature=%d.5\n",
                100 + i % 800, i, i / 3600, i / 60 % 60, i % 60, i % 100);
    fclose(f);

    /* 2. The default: the feed waits, nothing is lost. */
    fw_burst("1000", true);
    /* 3. Never wait: lost, and counted one by one. */
    fw_burst("0", false);
    return itest_finish();
}
