/*
 * tests/integ/integ_reload.c: SIGHUP re-reads the configuration file
 * (docs/operations.md "Reload"), on loopback.
 *
 *   1. `uabroker -w 1 -c FILE` with vars 10, a 1 s simulation tick,
 *      anonymous on; an anonymous session c0 kept open; alice cannot log
 *      in (no users file); a burst of connects is not throttled; the
 *      Counter moves by one at most in 300 ms;
 *   2. `uabroker passwd alice operator` writes the users file; FILE gets
 *      a 20 ms tick and anonymous off; SIGHUP: the log names both changes,
 *      alice logs in, a new anonymous session is refused, c0 (open
 *      before) sees the Counter move by 5 or more in 300 ms;
 *   3. FILE gets anonymous on again and vars 20 (restart only): the log
 *      says addrspace.vars needs a restart and 10 stays; ns=1;s=v15 is
 *      still unknown, v5 reads; anonymous sessions work again;
 *   4. FILE broken three ways (a syntax error, a value out of bounds, a
 *      bad x509_role): each SIGHUP is refused with a log line, the broker
 *      serves on (new sessions, /health 200, the 20 ms tick kept);
 *   5. FILE with limits.accept_rate 1 and accept_burst 1: after SIGHUP a
 *      burst of connects is refused in part, /stats counts refused_rate;
 *   6. SIGTERM: the broker exits 0.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_reload: N passed, M
 * failed"; exits non-zero on any failure.
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
#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IR_WATCHDOG_S   180
#define IR_START_MS     30000
#define IR_LOG_MS       10000
#define IR_ARENA        (1u << 20)
#define IR_GAP_MS       300
#define IR_BURST        8

static char            ir_dir[PATH_MAX];
static char            ir_log[PATH_MAX + 16];
static char            ir_conf[PATH_MAX + 16];
static char            ir_bin[PATH_MAX];
static struct ua_arena ir_arena;
static uint16_t        ir_port, ir_sport;
static pid_t           ir_broker;

static void ir_write_conf(const char *text);
static unsigned ir_log_count(const char *needle);
static bool ir_wait_log(const char *needle, unsigned count);
static bool ir_log_has(const char *needle);
static void ir_hup(const char *needle, unsigned count, const char *what);
static ua_status ir_login(const char *user, const char *pw);
static ua_status ir_read(struct uaconn *c, const char *id, uint32_t *u32);
static unsigned ir_moves(struct uaconn *c);
static unsigned ir_burst(void);
static uint64_t ir_refused_rate(void);
static void ir_passwd(const char *name, const char *pw);

static void
ir_write_conf(const char *text)
{
    if (itest_write_file(ir_conf, (const uint8_t *)text, strlen(text)) != 0)
        itest_fatal("cannot write %s", ir_conf);
}

/* How often needle occurs in the broker's log. */
static unsigned
ir_log_count(const char *needle)
{
    static uint8_t buf[1 << 20];
    size_t         len;
    unsigned       n = 0;

    if (itest_read_file(ir_log, buf, sizeof(buf), &len) != 0)
        return 0;
    buf[len] = '\0';
    for (const char *p = (const char *)buf;
         (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static bool
ir_log_has(const char *needle)
{
    return ir_log_count(needle) > 0;
}

/* Until needle occurs count times in the log (IR_LOG_MS at most). */
static bool
ir_wait_log(const char *needle, unsigned count)
{
    uint64_t end = itest_ms() + IR_LOG_MS;

    while (ir_log_count(needle) < count) {
        if (itest_ms() > end)
            return false;
        itest_sleep_ms(20);
    }
    return true;
}

/* SIGHUP, then wait for the count-th needle and the trust-list line
 * that closes every reload. */
static void
ir_hup(const char *needle, unsigned count, const char *what)
{
    unsigned closing = ir_log_count("SIGHUP: trust list reloaded") + 1;

    kill(ir_broker, SIGHUP);
    itest_check(ir_wait_log(needle, count)
                    && ir_wait_log("SIGHUP: trust list reloaded", closing),
                "SIGHUP (%s): \"%s\" in the log", what, needle);
}

/* A new session, anonymous (user NULL) or UserName: its status. */
static ua_status
ir_login(const char *user, const char *pw)
{
    struct uaconn c;
    ua_status     s;

    uaconn_init(&c);
    c.user = user;
    c.password = pw;
    s = uaconn_start(&c, "127.0.0.1", ir_port);
    if (s == UA_GOOD) {
        uaconn_close_session(&c);
        uaconn_close(&c);
    }
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    return s;
}

/* Read ns=1;s=<id>'s Value: the operation's status; a UInt32 in *u32. */
static ua_status
ir_read(struct uaconn *c, const char *id, uint32_t *u32)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;
    ua_status               s;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_str(1, id);
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(&ir_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &ir_arena);
    if (s != UA_GOOD)
        return s;
    if (resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    if ((resp.results[0].mask & UA_DV_STATUS) && resp.results[0].status
                                                    != UA_GOOD)
        return resp.results[0].status;
    if (u32 != NULL) {
        if (resp.results[0].value.type != UA_BT_UINT32)
            return UA_BAD_TYPE_MISMATCH;
        *u32 = *(const uint32_t *)resp.results[0].value.data;
    }
    return UA_GOOD;
}

/* How far Demo.Simulation.Counter moves in IR_GAP_MS. */
static unsigned
ir_moves(struct uaconn *c)
{
    uint32_t a = 0, b = 0;

    if (ir_read(c, "Demo.Simulation.Counter", &a) != UA_GOOD)
        return 0;
    itest_sleep_ms(IR_GAP_MS);
    if (ir_read(c, "Demo.Simulation.Counter", &b) != UA_GOOD)
        return 0;
    return b - a;
}

/* IR_BURST connects + HEL at once: how many got their ACK. */
static unsigned
ir_burst(void)
{
    struct uaconn c[IR_BURST];
    unsigned      ok = 0;

    for (int i = 0; i < IR_BURST; i++) {
        uaconn_init(&c[i]);
        if (uaconn_connect(&c[i], "127.0.0.1", ir_port) == 0
            && uaconn_hello(&c[i], NULL) == UA_GOOD)
            ok++;
    }
    for (int i = 0; i < IR_BURST; i++)
        uaconn_clear(&c[i]);
    return ok;
}

/* /stats throttle.refused_rate (the broker-wide object comes first). */
static uint64_t
ir_refused_rate(void)
{
    char     *body = NULL;
    uint64_t  v = UINT64_MAX;
    int       code = itest_http(ir_sport, "GET", "/stats", &body);

    if (code == 200 && body != NULL)
        (void)itest_json_u64(itest_json_find(body, "throttle"),
                             "refused_rate", &v);
    free(body);
    return v;
}

/* `uabroker -c FILE --runtime-dir DIR passwd NAME operator`, pw on stdin. */
static void
ir_passwd(const char *name, const char *pw)
{
    char  cmd[6 * PATH_MAX];
    FILE *p;
    int   st;

    snprintf(cmd, sizeof(cmd), "'%s' -c '%s' --runtime-dir '%s' passwd %s "
             "operator >>'%s/passwd.log' 2>&1", ir_bin, ir_conf, ir_dir,
             name, ir_dir);
    p = popen(cmd, "w");
    if (p == NULL)
        itest_fatal("popen passwd");
    fprintf(p, "%s\n", pw);
    st = pclose(p);
    itest_check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                "uabroker passwd %s: exit %d", name,
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int
main(int argc, char **argv)
{
    struct uaconn c0;
    ua_status     s;
    unsigned      moved, ok;
    uint64_t      refused;
    int           rc, code;

    itest_init("integ_reload");
    (void)argc;
    itest_guard(IR_WATCHDOG_S, ir_log);
    if (ua_crypto_init() != UA_GOOD)
        itest_fatal("ua_crypto_init");
    ua_arena_init(&ir_arena, malloc(IR_ARENA), IR_ARENA);
    itest_broker_bin(argv[0], ir_bin, sizeof(ir_bin));
    itest_tmpdir("uabroker-reload", ir_dir, sizeof(ir_dir));
    snprintf(ir_log, sizeof(ir_log), "%s/broker.log", ir_dir);
    snprintf(ir_conf, sizeof(ir_conf), "%s/uabroker.conf", ir_dir);

    /* 1. The broker with FILE. */
    ir_write_conf("[addrspace]\nvars = 10\nsimulation_interval_ms = 1000\n"
                  "[security]\nanonymous = true\n");
    {
        const char *const extra[] = { "-c", ir_conf, NULL };

        ir_broker = itest_broker_start(ir_bin, 1, ir_dir, ir_log, extra,
                                       IR_START_MS, &ir_port, &ir_sport);
    }
    s = uaconn_start_retry(&c0, "127.0.0.1", ir_port, IR_START_MS);
    if (s != UA_GOOD)
        itest_fatal("no anonymous session: 0x%08X", s);
    s = ir_login("alice", "alice-pw");
    itest_check(s != UA_GOOD, "before: alice cannot log in (0x%08X)", s);
    ok = ir_burst();
    itest_check(ok == IR_BURST && ir_refused_rate() == 0,
                "before: a burst of %d connects, %u answered, none "
                "throttled", IR_BURST, ok);
    moved = ir_moves(&c0);
    itest_check(moved <= 1, "before: the Counter moves by %u in %d ms "
                "(1 s tick)", moved, IR_GAP_MS);

    /* 2. Live settings: the users file, the tick, anonymous. */
    ir_passwd("alice", "alice-pw");
    ir_write_conf("[addrspace]\nvars = 10\nsimulation_interval_ms = 20\n"
                  "[security]\nanonymous = false\n");
    ir_hup("SIGHUP: configuration reloaded from", 1, "live settings");
    itest_check(ir_log_has("SIGHUP: addrspace.simulation_interval_ms = 20 "
                           "(was 1000)")
                    && ir_log_has("SIGHUP: security.anonymous = false "
                                  "(was true)")
                    && ir_log_has("2 settings applied, 0 need a restart"),
                "the log names both changes");
    s = ir_login("alice", "alice-pw");
    itest_check(s == UA_GOOD, "alice (added to the users file) logs in "
                "(0x%08X)", s);
    s = ir_login(NULL, NULL);
    itest_check(s != UA_GOOD, "anonymous off: a new anonymous session is "
                "refused (0x%08X)", s);
    moved = ir_moves(&c0);
    itest_check(moved >= 5, "the 20 ms tick: the Counter moves by %u in "
                "%d ms", moved, IR_GAP_MS);

    /* 3. A restart-only setting. */
    ir_write_conf("[addrspace]\nvars = 20\nsimulation_interval_ms = 20\n"
                  "[security]\nanonymous = true\n");
    ir_hup("SIGHUP: configuration reloaded from", 2, "vars 20");
    itest_check(ir_log_has("SIGHUP: addrspace.vars = 20 needs a restart; "
                           "the running 10 stays")
                    && ir_log_has("1 setting applied, 1 needs a restart"),
                "the log says addrspace.vars needs a restart, 10 stays");
    s = ir_read(&c0, "v15", NULL);
    itest_check(s == UA_BAD_NODE_ID_UNKNOWN, "v15 is still unknown "
                "(0x%08X)", s);
    s = ir_read(&c0, "v5", NULL);
    itest_check(s == UA_GOOD, "v5 reads (0x%08X)", s);
    s = ir_login(NULL, NULL);
    itest_check(s == UA_GOOD, "anonymous on again: a new anonymous session "
                "(0x%08X)", s);

    /* 4. Broken files: refused, the running configuration kept. */
    {
        static const char *const bad[][2] = {
            { "[addrspace]\nthis line has no equals sign\n",
              "syntax error" },
            { "[addrspace]\nsimulation_interval_ms = 1\n", "outside" },
            { "[security]\nx509_role = admin\n", "x509_role" },
        };

        for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            ir_write_conf(bad[i][0]);
            ir_hup("SIGHUP: configuration refused, the running one stays",
                   i + 1, bad[i][1]);
            itest_check(ir_log_has(bad[i][1]), "the refusal says why (%s)",
                        bad[i][1]);
            s = ir_login(NULL, NULL);
            code = itest_http(ir_sport, "GET", "/health", NULL);
            itest_check(s == UA_GOOD && code == 200, "still serving: a new "
                        "session (0x%08X), /health %d", s, code);
        }
        moved = ir_moves(&c0);
        itest_check(moved >= 5, "the running 20 ms tick stays: the Counter "
                    "moves by %u in %d ms", moved, IR_GAP_MS);
        itest_check(ir_log_count("SIGHUP: configuration reloaded from") == 2,
                    "no refused file was applied");
    }

    /* 5. The accept rate. */
    ir_write_conf("[addrspace]\nvars = 20\nsimulation_interval_ms = 20\n"
                  "[security]\nanonymous = true\n"
                  "[limits]\naccept_rate = 1\naccept_burst = 1\n");
    ir_hup("SIGHUP: configuration reloaded from", 3, "accept_rate 1");
    itest_check(ir_log_has("SIGHUP: limits.accept_rate = 1 (was 200)")
                    && ir_log_has("SIGHUP: limits.accept_burst = 1 "
                                  "(was 1000)"),
                "the log names accept_rate and accept_burst");
    itest_sleep_ms(1100);           /* a full bucket of 1 */
    ok = ir_burst();
    refused = ir_refused_rate();
    itest_check(ok < IR_BURST && refused > 0 && refused != UINT64_MAX,
                "a burst of %d connects: %u answered, /stats refused_rate "
                "%llu", IR_BURST, ok, (unsigned long long)refused);

    /* 6. Stop. */
    ua_client_clear(&c0.cl);
    uaconn_clear(&c0);
    rc = itest_stop(ir_broker, 10000);
    itest_check(rc == 0, "SIGTERM: the broker exits 0 (%d)", rc);
    free(ir_arena.base);
    return itest_finish();
}
