/*
 * broker/main.c: uabroker, the broker process.
 *
 * Reads the configuration (file, then command line), builds the address
 * space into shared memory (broker/addrspace.c), then runs its event
 * loop: the live Server nodes tick every second (broker/server.c), the
 * simulation changes its variables at its configured rate
 * (broker/sim.c), the supervisor keeps one uaworker per slot running
 * (broker/supervisor.c), the request drain applies Writes and answers
 * (broker/request.c), every value change goes through the value path
 * (broker/value.c) to the fan-out, which sends it to the workers
 * (broker/fanout.c), the feed takes values (broker/feed.c, and from an
 * MQTT broker: broker/mqtt.c) and the stats endpoint answers /stats,
 * /metrics and /health (broker/stats.c).  Before the address space: the
 * PKI directory and the
 * application certificate (broker/pki.c); SIGHUP reloads the trust lists
 * and the users file, the tick saves the workers' rejected certificates.
 * Under systemd (Type=notify) it says READY=1 once every worker serves,
 * RELOADING=1/READY=1 around SIGHUP, STOPPING=1 (broker/notify.c).
 *
 *   uabroker [options]                 serve
 *   uabroker [options] stats [ADDR:PORT]   print a running broker's /stats
 *   uabroker [options] feed [--push] [--url URL] (LINE... | -)
 *                                      send values to a running broker
 *   uabroker [options] methods [--url URL] (--exec PROGRAM | --stdio)
 *                                      serve its method calls
 *                                      (broker/methods.c)
 *   uabroker [options] passwd NAME [operator|viewer]
 *                                      add or change a user (broker/users.c)
 *
 * Exit codes: 0 after a clean stop, 1 when the start fails, 2 for a usage or
 * configuration error (nginx's convention, docs/style.md §4).
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "addrspace.h"
#include "alarmstate.h"
#include "config.h"
#include "fanout.h"
#include "feed.h"
#include "feedcmd.h"
#include "histcfg.h"
#include "histcmd.h"
#include "mqtt.h"
#include "methods.h"
#include "notify.h"
#include "pki.h"
#include "request.h"
#include "rollcmd.h"
#include "server.h"
#include "sim.h"
#include "stats.h"
#include "supervisor.h"
#include "users.h"
#include "proto/types.h"
#include "proto/version.h"
#include "shm/log.h"

#define BK_WORKERS_MAX 64
#define BK_READY_POLL_MS 10     /* how often the start looks for READY */

struct bk_main {
    struct bk_config     conf;
    struct bk_alarmcfg   alarms;        /* the [alarm NAME] sections */
    struct bk_histcfg    histnodes;     /* the [history NAME] sections */
    char                 alarm_state[BK_CONF_PATH_MAX]; /* "": none */
    bool                 alarm_state_failed;    /* logged once */
    struct bk_addrspace  as;
    struct event_base   *base;
    struct event         tick;
    struct event         sigint;
    struct event         sigterm;
    struct event         sighup;
    struct event         sigusr2;       /* a rolling restart */
    struct event         ready;         /* polls the workers until all UP */
    struct bk_pki        pki;
    struct bk_supervisor sv;
    struct bk_fanout     fo;
    struct bk_request    rq;
    struct bk_sim        sim;
    struct bk_feed       feed;
    struct bk_mqtt       mqtt;
    struct bk_methods    methods;
    struct bk_stats      stats;
    const char          *stats_addr;    /* `stats` mode: ADDR:PORT */
    const char          *conf_file;     /* -c FILE, or NULL */
    int                  argc;          /* the command line, for SIGHUP */
    char               **argv;
    const char          *passwd_name;   /* `passwd` mode: NAME [ROLE] */
    const char          *passwd_role;
};

static void bk_usage(FILE *f);
static int bk_args(struct bk_main *m, struct bk_config *conf, int argc,
                   char **argv, int *mode, char *err, size_t errlen);
static int bk_feed_word(int argc, char **argv);
static void bk_on_tick(evutil_socket_t fd, short what, void *arg);
static void bk_alarms_save(struct bk_main *m);
static void bk_on_signal(evutil_socket_t fd, short what, void *arg);
static void bk_on_stopped(void *arg);
static void bk_on_hup(evutil_socket_t fd, short what, void *arg);
static void bk_on_roll(evutil_socket_t fd, short what, void *arg);
static void bk_reload(struct bk_main *m);
static void bk_on_ready(evutil_socket_t fd, short what, void *arg);
static bool bk_workers_up(const struct bk_main *m);
static int bk_loop(struct bk_main *m);
static int bk_run(struct bk_main *m);

enum { BK_MODE_SERVE, BK_MODE_CHECK, BK_MODE_PRINT, BK_MODE_ONCE,
       BK_MODE_STATS, BK_MODE_PASSWD, BK_MODE_ROLL };

static const char bk_prog[] = "uabroker";

static void
bk_usage(FILE *f)
{
    fprintf(f,
        "Usage: %s [options]                  serve\n"
        "       %s [options] stats [ADDR:PORT]   print a running broker's "
        "/stats\n"
        "       %s [options] feed [--push] [--url URL] (LINE... | -)\n"
        "                      send values to a running broker "
        "(docs/feed.md)\n"
        "       %s [options] methods [--url URL] (--exec PROGRAM | --stdio)\n"
        "                      serve a running broker's method calls "
        "(docs/feed.md)\n"
        "       %s [options] history (list | export NODEID [FROM [TO]]\n"
        "                      | events NOTIFIER [FROM [TO]])\n"
        "                      the history store, CSV export of values "
        "or events\n"
        "                      (docs/operations.md)\n"
        "       %s [options] passwd NAME [operator|viewer]\n"
        "                      add or change a user (password on stdin)\n"
        "\n"
        "  -c FILE             read the configuration from FILE (INI)\n"
        "  -p PORT             opc.tcp port (server.port, default 4840)\n"
        "  -w WORKERS          worker processes, 0 = one per CPU, at most %d\n"
        "  --stats ADDR:PORT   stats endpoint (stats.listen)\n"
        "  --runtime-dir DIR   sockets directory (server.runtime_dir)\n"
        "  --vars N            Objects/Demo/Vars size (addrspace.vars)\n"
        "  --nodeset FILE      import a NodeSet2 XML file too "
        "(addrspace.nodesets;\n"
        "                      repeatable, in order)\n"
        "  --set SECTION.KEY=VALUE   any other setting\n"
        "  -t                  check the configuration and exit\n"
        "  --print-config      print the configuration in effect and exit\n"
        "  --once              build the address space, report it, exit\n"
        "  --help              show this help and exit\n"
        "  --version           show the version and exit\n"
        "\n"
        "Stats endpoint: GET /stats (JSON), /metrics (Prometheus), /health.\n"
        "SIGHUP re-reads the configuration (docs/operations.md Reload); "
        "SIGUSR2 (or\n`uabroker restart-workers`) restarts the workers one "
        "at a time, keeping the\nsessions (docs/operations.md Rolling "
        "restart); SIGTERM stops.\n",
        bk_prog, bk_prog, bk_prog, bk_prog, bk_prog, bk_prog,
        BK_WORKERS_MAX);
}

/*
 * The configuration of argv into conf (over what conf holds: the
 * defaults): the file of -c first, then the other options over it; the
 * mode and its words into *mode and m.  0, or -1 with a message in err
 * (empty when getopt and the usage have said it).  Run again at SIGHUP
 * on the same argv (getopt starts over: optind 0).
 */
static int
bk_args(struct bk_main *m, struct bk_config *conf, int argc, char **argv,
        int *mode, char *err, size_t errlen)
{
    enum { O_STATS = 256, O_RUNDIR, O_VARS, O_SET, O_PRINT, O_ONCE, O_HELP,
           O_VERSION, O_NODESET };
    static const struct option opts[] = {
        { "stats", required_argument, NULL, O_STATS },
        { "runtime-dir", required_argument, NULL, O_RUNDIR },
        { "vars", required_argument, NULL, O_VARS },
        { "set", required_argument, NULL, O_SET },
        { "print-config", no_argument, NULL, O_PRINT },
        { "once", no_argument, NULL, O_ONCE },
        { "help", no_argument, NULL, O_HELP },
        { "version", no_argument, NULL, O_VERSION },
        { "nodeset", required_argument, NULL, O_NODESET },
        { NULL, 0, NULL, 0 }
    };
    const char *file = NULL;
    int         c;

    err[0] = '\0';
    /* The file first, whatever the order: the command line overrides it. */
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "c:p:w:t", opts, NULL)) != -1)
        if (c == 'c')
            file = optarg;
    m->conf_file = file;
    if (file != NULL && bk_config_load(conf, file, err, errlen) != 0)
        return -1;
    optind = 0;
    opterr = 1;
    while ((c = getopt_long(argc, argv, "c:p:w:t", opts, NULL)) != -1) {
        const char *key = NULL;
        char        kv[300];

        switch (c) {
        case 'c':
            continue;
        case 'p': key = "server.port"; break;
        case 'w': key = "server.workers"; break;
        case O_STATS: key = "stats.listen"; break;
        case O_RUNDIR: key = "server.runtime_dir"; break;
        case O_VARS: key = "addrspace.vars"; break;
        case O_SET: {
            char *eq = strchr(optarg, '=');

            if (eq == NULL || (size_t)(eq - optarg) >= sizeof(kv)) {
                snprintf(err, errlen, "--set wants SECTION.KEY=VALUE");
                return -1;
            }
            memcpy(kv, optarg, (size_t)(eq - optarg));
            kv[eq - optarg] = '\0';
            if (bk_config_set(conf, kv, eq + 1, err, errlen) != 0)
                return -1;
            continue;
        }
        case O_NODESET: {
            /* Appended to addrspace.nodesets (the file's come first). */
            size_t have = strlen(conf->nodesets);

            if (strchr(optarg, ' ') != NULL || strchr(optarg, '\t') != NULL
                || have + 1 + strlen(optarg) >= sizeof(conf->nodesets)) {
                snprintf(err, errlen, "--nodeset %s: a path without spaces, "
                         "all of them together under %zu bytes", optarg,
                         sizeof(conf->nodesets));
                return -1;
            }
            snprintf(conf->nodesets + have, sizeof(conf->nodesets) - have,
                     "%s%s", have != 0 ? " " : "", optarg);
            continue;
        }
        case 't': *mode = BK_MODE_CHECK; continue;
        case O_PRINT: *mode = BK_MODE_PRINT; continue;
        case O_ONCE: *mode = BK_MODE_ONCE; continue;
        case O_HELP: bk_usage(stdout); exit(0);
        case O_VERSION:
            printf("%s %s\n", UA_PRODUCT_NAME, UA_VERSION);
            exit(0);
        default:
            bk_usage(stderr);
            return -1;
        }
        if (bk_config_set(conf, key, optarg, err, errlen) != 0)
            return -1;
    }
    /* Modes named by a word: `stats [ADDR:PORT]`. */
    if (optind < argc && strcmp(argv[optind], "stats") == 0
        && argc - optind <= 2) {
        *mode = BK_MODE_STATS;
        m->stats_addr = optind + 1 < argc ? argv[optind + 1] : NULL;
        return 0;
    }
    /* `restart-workers`: a rolling restart of the running broker's. */
    if (optind < argc && strcmp(argv[optind], "restart-workers") == 0
        && argc - optind == 1) {
        *mode = BK_MODE_ROLL;
        return 0;
    }
    /* `passwd NAME [ROLE]`: add or change a user of the users file. */
    if (optind < argc && strcmp(argv[optind], "passwd") == 0
        && argc - optind >= 2 && argc - optind <= 3) {
        *mode = BK_MODE_PASSWD;
        m->passwd_name = argv[optind + 1];
        m->passwd_role = optind + 2 < argc ? argv[optind + 2] : NULL;
        return 0;
    }
    if (optind != argc) {
        snprintf(err, errlen, "unexpected argument \"%s\"", argv[optind]);
        return -1;
    }
    return 0;
}

/*
 * The index of the word `feed` among argv's operands (after the options
 * and their arguments), or 0.
 */
static int
bk_feed_word(int argc, char **argv)
{
    static const char *const with_arg[] = { "-c", "-p", "-w", "--stats",
                                            "--runtime-dir", "--vars",
                                            "--set", "--nodeset" };

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool        skip = false;

        if (strcmp(a, "feed") == 0 || strcmp(a, "methods") == 0
            || strcmp(a, "history") == 0)
            return i;
        if (a[0] != '-')
            return 0;                   /* another operand: not feed mode */
        for (size_t k = 0; k < sizeof(with_arg) / sizeof(with_arg[0]); k++)
            if (strcmp(a, with_arg[k]) == 0)
                skip = true;
        if (skip)
            i++;
    }
    return 0;
}

/* Now as an OPC UA DateTime (100 ns ticks since 1601-01-01 UTC). */
static void
bk_on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct bk_main *m = arg;

    (void)fd;
    (void)what;
    bk_server_tick(&m->as.server, ua_datetime_now());
    bk_alarmnode_tick(&m->as.alarms, ua_datetime_now());
    bk_alarms_save(m);
    (void)bk_pki_drain(&m->pki);
}

/* The alarms' state file, when it changed (broker/alarmstate.h); a
 * failure is logged once until a save succeeds again. */
static void
bk_alarms_save(struct bk_main *m)
{
    char err[1200];

    if (m->alarm_state[0] == '\0' || !m->as.alarms.dirty)
        return;
    if (bk_alarmstate_save(&m->as.alarms, m->alarm_state, err, sizeof(err))
        == 0) {
        m->alarm_state_failed = false;
        return;
    }
    if (!m->alarm_state_failed)
        shm_log(SHM_LOG_WARNING, "alarms: %s (the state is kept in memory; "
                "retried every second)", err);
    m->alarm_state_failed = true;
}

/*
 * SIGHUP: the configuration read again (defaults, the -c file, the
 * command line over it, the checks of a start); refused whole when any of
 * it fails, the running one kept.  Otherwise the live settings take effect
 * (bk_config_reload logs each change; the others are logged as needing a
 * restart and keep their running value): the workers' snapshot, the PKI
 * flags, the simulation timer.  Then the trust and issuer lists and the
 * users file are read again, whatever happened to the file.  systemd hears
 * RELOADING=1 before and READY=1 after.
 */
static void
bk_on_hup(evutil_socket_t fd, short what, void *arg)
{
    struct bk_main *m = arg;
    int             rc;

    (void)fd;
    (void)what;
    bk_notify_reloading();
    bk_reload(m);
    rc = bk_pki_reload(&m->pki);
    shm_log(rc == 0 ? SHM_LOG_NOTICE : SHM_LOG_WARNING,
            "SIGHUP: trust list reloaded%s: %u trusted, %u CRLs, %u issuers, "
            "%u issuer CRLs, %u skipped, %u users",
            rc == 0 ? "" : " (with errors)", m->pki.n_trusted,
            m->pki.n_trusted_crls, m->pki.n_issuers, m->pki.n_issuer_crls,
            m->pki.n_skipped, m->pki.n_users);
    (void)bk_notify_fmt("READY=1\nSTATUS=serving opc.tcp://%s:%u with %u "
                        "worker%s (reloaded)", m->conf.hostname, m->conf.port,
                        m->sv.n, m->sv.n == 1 ? "" : "s");
}

/* The configuration part of SIGHUP (see bk_on_hup). */
static void
bk_reload(struct bk_main *m)
{
    static struct bk_config next;
    const char             *file = m->conf_file;
    char                    err[512];
    unsigned                applied, restart;
    uint32_t                offers;
    int                     mode = BK_MODE_SERVE;
    int                     rc;

    bk_config_defaults(&next);
    rc = bk_args(m, &next, m->argc, m->argv, &mode, err, sizeof(err));
    if (rc == 0) {
        bk_config_finish(&next);
        next.workers = bk_supervisor_count(next.workers);
        if (next.history_enabled && next.workers >= SHM_WORKERS_MAX)
            next.workers = SHM_WORKERS_MAX - 1;
        rc = bk_config_check(&next, err, sizeof(err));
    }
    if (rc == 0)
        rc = bk_pki_offers(next.policies, next.modes,
                           next.allow_deprecated != 0, &offers, err,
                           sizeof(err));
    if (rc != 0) {
        shm_log(SHM_LOG_ERROR, "SIGHUP: configuration refused, the running "
                "one stays: %s", err[0] != '\0' ? err : "bad command line");
        return;
    }
    bk_config_reload(&m->conf, &next, &applied, &restart);
    m->as.alarms.audit = m->conf.events_audit != 0;
    /* The live settings, where they are read. */
    bk_config_snapshot_live(&m->conf,
                            shm_segment_region(&m->as.seg, SHM_R_CONFIG));
    if (bk_pki_update(&m->pki, &m->conf, err, sizeof(err)) != 0)
        shm_log(SHM_LOG_ERROR, "SIGHUP: %s", err);
    bk_sim_reload(&m->sim);
    shm_log(SHM_LOG_NOTICE, "SIGHUP: configuration reloaded from %s: %u "
            "setting%s applied, %u need%s a restart",
            file != NULL ? file : "the command line", applied,
            applied == 1 ? "" : "s", restart, restart == 1 ? "s" : "");
}

/*
 * Every worker slot that has not failed for good is UP (serving: its
 * listener accepts and the worker reads it), and one at least.
 */
static bool
bk_workers_up(const struct bk_main *m)
{
    unsigned up = 0;

    for (unsigned i = 0; i < m->sv.n; i++) {
        const struct shm_worker *r = bk_supervisor_row(&m->sv, i);

        if (m->sv.slots[i].failed)
            continue;
        if (atomic_load_explicit(&r->state, memory_order_acquire)
            != SHM_WS_UP)
            return false;
        up++;
    }
    return up > 0;
}

/* Until the workers are up: then READY=1 to systemd, once. */
static void
bk_on_ready(evutil_socket_t fd, short what, void *arg)
{
    struct bk_main *m = arg;

    (void)fd;
    (void)what;
    if (m->sv.stopping) {
        event_del(&m->ready);
        return;
    }
    if (!bk_workers_up(m))
        return;
    event_del(&m->ready);
    (void)bk_notify_fmt("READY=1\nSTATUS=serving opc.tcp://%s:%u with %u "
                        "worker%s\nMAINPID=%ld", m->conf.hostname,
                        m->conf.port, m->sv.n, m->sv.n == 1 ? "" : "s",
                        (long)getpid());
}

/* SIGTERM / SIGINT: stop the workers, then the loop; twice: kill them. */
static void
bk_on_signal(evutil_socket_t fd, short what, void *arg)
{
    struct bk_main *m = arg;

    (void)what;
    shm_log(SHM_LOG_NOTICE, "signal %d, stopping", (int)fd);
    (void)bk_notify("STOPPING=1\nSTATUS=stopping");
    bk_supervisor_stop(&m->sv, bk_on_stopped, m);
}

/* SIGUSR2: the workers one at a time (broker/supervisor.h). */
static void
bk_on_roll(evutil_socket_t fd, short what, void *arg)
{
    struct bk_main *m = arg;

    (void)fd;
    (void)what;
    (void)bk_supervisor_roll(&m->sv);
}

/* Every worker has been reaped. */
static void
bk_on_stopped(void *arg)
{
    struct bk_main *m = arg;

    event_base_loopbreak(m->base);
}

/*
 * The event loop, one libevent iteration at a time: before each one the
 * request drain does its work (Writes in, blocks out, replies, doorbells:
 * broker/request.h) and says whether the iteration may block
 * (docs/architecture.md §3: drain the rings, mark them sleeping, look
 * again).  libevent 2.1 has no "before sleeping" callback.
 */
static int
bk_loop(struct bk_main *m)
{
    bool sleep;
    int  rc;

    for (;;) {
        sleep = bk_request_prepare(&m->rq, ua_datetime_now());
        rc = event_base_loop(m->base, sleep ? EVLOOP_ONCE : EVLOOP_NONBLOCK);
        if (rc == -1)
            return -1;
        bk_request_wake(&m->rq);
        if (event_base_got_break(m->base) || event_base_got_exit(m->base))
            return 0;
    }
}

static int
bk_run(struct bk_main *m)
{
    struct timeval   one = { 1, 0 };
    struct timeval   ready_tv = { 0, BK_READY_POLL_MS * 1000 };
    struct sigaction sa;
    char             err[512];
    int              rc = 1;

    /* A stats client that hangs up must not kill the broker. */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    m->base = event_base_new();
    if (m->base == NULL) {
        shm_log(SHM_LOG_ERROR, "event_base_new() failed");
        return 1;
    }
    if (bk_supervisor_init(&m->sv, m->base, &m->conf, &m->as.seg, err,
                           sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_base;
    }
    if (bk_fanout_init(&m->fo, &m->as.seg, &m->as.vals, m->base, &m->conf,
                       err, sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_sv;
    }
    if (bk_request_init(&m->rq, &m->as, &m->fo, m->base, &m->conf, err,
                        sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_fo;
    }
    /* From now on value changes reach the workers. */
    bk_value_set_fanout(&m->as.val, &m->fo);
    m->sv.request = &m->rq;
    if (bk_feed_init(&m->feed, m->base, &m->as, &m->conf, err,
                     sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_rq;
    }
    if (bk_mqtt_init(&m->mqtt, m->base, &m->as, &m->conf, err,
                     sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_feed;
    }
    if (bk_methods_init(&m->methods, m->base, &m->as, &m->rq, &m->conf,
                        err, sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_mqtt;
    }
    if (bk_stats_init(&m->stats, m->base, m->conf.stats_listen, &m->as,
                      &m->sv, err, sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        goto out_methods;
    }
    m->stats.fanout = &m->fo;
    m->stats.request = &m->rq;
    m->stats.mqtt = &m->mqtt;
    event_assign(&m->tick, m->base, -1, EV_PERSIST, bk_on_tick, m);
    evsignal_assign(&m->sigint, m->base, SIGINT, bk_on_signal, m);
    evsignal_assign(&m->sigterm, m->base, SIGTERM, bk_on_signal, m);
    evsignal_assign(&m->sighup, m->base, SIGHUP, bk_on_hup, m);
    evsignal_assign(&m->sigusr2, m->base, SIGUSR2, bk_on_roll, m);
    event_add(&m->tick, &one);
    event_add(&m->sighup, NULL);
    event_add(&m->sigusr2, NULL);
    if (bk_rollcmd_pidfile_write(&m->conf) != 0)
        shm_log(SHM_LOG_WARNING, "cannot write %s/%s: restart-workers will "
                "not find this broker (SIGUSR2 still works)",
                m->conf.runtime_dir, BK_ROLLCMD_PIDFILE);
    bk_sim_start(&m->sim, m->base, &m->as, &m->conf,
                 (uint64_t)ua_datetime_now());
    event_add(&m->sigint, NULL);
    event_add(&m->sigterm, NULL);
    event_assign(&m->ready, m->base, -1, EV_PERSIST, bk_on_ready, m);
    event_add(&m->ready, &ready_tv);
    shm_log(SHM_LOG_NOTICE, "serving opc.tcp://%s:%u with %u worker%s; "
            "stats http://%s/stats; Ctrl-C stops", m->conf.hostname,
            m->conf.port, m->sv.n, m->sv.n == 1 ? "" : "s",
            m->stats.addr);
    /* A fork failure is logged and retried with backoff. */
    (void)bk_supervisor_start(&m->sv);
    if (bk_loop(m) == -1)
        shm_log(SHM_LOG_ERROR, "event_base_loop() failed");
    else
        rc = 0;
    shm_log(SHM_LOG_NOTICE, "stopped");
    event_del(&m->tick);
    bk_sim_stop(&m->sim);
    bk_alarms_save(m);
    event_del(&m->sigint);
    event_del(&m->sigterm);
    event_del(&m->sighup);
    event_del(&m->sigusr2);
    bk_rollcmd_pidfile_remove(&m->conf);
    event_del(&m->ready);
    bk_stats_clear(&m->stats);
out_methods:
    bk_methods_clear(&m->methods);
out_mqtt:
    bk_mqtt_clear(&m->mqtt);
out_feed:
    bk_feed_clear(&m->feed);
out_rq:
    m->sv.request = NULL;
    bk_value_set_fanout(&m->as.val, NULL);
    bk_request_clear(&m->rq);
out_fo:
    bk_fanout_clear(&m->fo);
out_sv:
    bk_supervisor_clear(&m->sv);
out_base:
    event_base_free(m->base);
    m->base = NULL;
    return rc;
}

int
main(int argc, char **argv)
{
    static struct bk_main m;
    char                  err[512];
    int                   mode = BK_MODE_SERVE;
    int                   rc, feed_at;

    bk_config_defaults(&m.conf);
    m.conf.alarms = &m.alarms;
    m.conf.histnodes = &m.histnodes;
    /* `feed` takes the rest of the command line as its own. */
    feed_at = bk_feed_word(argc, argv);
    m.argc = feed_at != 0 ? feed_at : argc;
    m.argv = argv;
    if (bk_args(&m, &m.conf, m.argc, argv, &mode, err, sizeof(err)) != 0) {
        if (err[0] != '\0')
            fprintf(stderr, "%s: %s\n", bk_prog, err);
        return 2;
    }
    if (feed_at != 0 && strcmp(argv[feed_at], "history") == 0)
        return bk_histcmd_run(&m.conf, argc - feed_at - 1,
                              argv + feed_at + 1, stdout, stderr);
    if (feed_at != 0 && strcmp(argv[feed_at], "methods") == 0)
        return bk_methods_command(&m.conf, argc - feed_at - 1,
                                  argv + feed_at + 1, stdin, stdout, stderr);
    if (feed_at != 0)
        return bk_feedcmd_run(&m.conf, argc - feed_at - 1,
                              argv + feed_at + 1, stdin, stdout, stderr);
    if (mode == BK_MODE_PRINT) {
        /* Before finish: host-derived settings stay "" (= automatic). */
        bk_config_write(&m.conf, stdout);
        return 0;
    }
    if (mode == BK_MODE_PASSWD)
        return bk_users_passwd(&m.conf, m.passwd_name, m.passwd_role, stdin,
                               stdout, stderr);
    if (mode == BK_MODE_STATS)
        return bk_stats_fetch(m.stats_addr != NULL ? m.stats_addr
                                                   : m.conf.stats_listen,
                              stdout);
    bk_config_finish(&m.conf);
    if (mode == BK_MODE_ROLL)
        return bk_rollcmd_run(&m.conf, stdout, stderr);
    shm_log_open(bk_prog, 2);
    /* The configured threshold; once the segment exists, the snapshot's
     * field (SIGHUP changes it there for every process). */
    if (shm_log_level_parse(m.conf.log_level) > 0)
        shm_log_set_level(shm_log_level_parse(m.conf.log_level));
    /* The snapshot the workers read carries the real count. */
    m.conf.workers = bk_supervisor_count(m.conf.workers);
    /* The historian takes a worker slot. */
    if (m.conf.history_enabled && m.conf.workers >= SHM_WORKERS_MAX)
        m.conf.workers = SHM_WORKERS_MAX - 1;
    if (bk_config_check(&m.conf, err, sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        return 2;
    }
    {
        bool on;

        if (bk_mqtt_check(&m.conf, NULL, &on, err, sizeof(err)) != 0) {
            shm_log(SHM_LOG_ERROR, "%s", err);
            return 2;
        }
    }
    {
        uint32_t offers;

        if (bk_pki_offers(m.conf.policies, m.conf.modes,
                          m.conf.allow_deprecated != 0, &offers, err,
                          sizeof(err)) != 0) {
            shm_log(SHM_LOG_ERROR, "%s", err);
            return 2;
        }
    }
    if (mode == BK_MODE_CHECK) {
        /* The nodesets and alarms are configuration too: build them
         * once. */
        if (m.conf.nodesets[0] != '\0' || m.alarms.n != 0
            || m.histnodes.n != 0) {
            if (bk_addrspace_build(&m.as, &m.conf, ua_datetime_now(), err,
                                   sizeof(err)) != 0) {
                shm_log(SHM_LOG_ERROR, "%s", err);
                return m.as.nodeset_failed ? 2 : 1;
            }
            bk_addrspace_close(&m.as);
        }
        printf("%s: configuration ok\n", bk_prog);
        return 0;
    }
    if (mode == BK_MODE_SERVE
        && bk_pki_init(&m.pki, &m.conf, (int64_t)time(NULL), err,
                       sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        return 1;
    }
    if (m.pki.created)
        shm_log(SHM_LOG_NOTICE, "pki: created the application certificate "
                "%s/own/certs/%s", m.pki.dir, BK_PKI_CERT_NAME);
    if (bk_addrspace_build(&m.as, &m.conf, ua_datetime_now(), err,
                           sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        bk_pki_clear(&m.pki);
        /* A bad nodeset is a configuration error. */
        return m.as.nodeset_failed ? 2 : 1;
    }
    shm_log_level_at(&((const struct shm_config *)shm_segment_region(
                           &m.as.seg, SHM_R_CONFIG))->log_level);
    m.as.alarms.audit = m.conf.events_audit != 0;
    m.as.alarms.server_uri = m.conf.application_uri;
    if (mode == BK_MODE_SERVE && m.as.alarms.n != 0) {
        /* The alarms as they were when the broker stopped. */
        snprintf(m.alarm_state, sizeof(m.alarm_state), "%s/%s",
                 m.conf.runtime_dir, BK_ALARMSTATE_NAME);
        rc = bk_alarmstate_load(&m.as.alarms, m.alarm_state,
                                ua_datetime_now(), err, sizeof(err));
        if (rc < 0)
            shm_log(SHM_LOG_WARNING, "alarms: %s; the conditions start from "
                    "their inputs' values", err);
        else if (rc > 0)
            shm_log(SHM_LOG_NOTICE, "alarms: %d condition%s restored from "
                    "%s", rc, rc == 1 ? "" : "s", m.alarm_state);
    }
    if (mode == BK_MODE_SERVE
        && bk_pki_publish(&m.pki, &m.as.seg, err, sizeof(err)) != 0) {
        shm_log(SHM_LOG_ERROR, "%s", err);
        bk_pki_clear(&m.pki);
        shm_log_level_at(NULL);
        bk_addrspace_close(&m.as);
        return 1;
    }
    shm_log(SHM_LOG_NOTICE,
            "version %s, address space: %u nodes (%u in namespace 0), "
            "%u references, %u values, segment %zu bytes, built in %.3f s",
            UA_VERSION, m.as.ns.nnodes, m.as.vals.hdr->ns0_nodes,
            m.as.ns.nrefs, m.as.vals.nslots, m.as.seg.size,
            m.as.build_seconds);
    if (mode == BK_MODE_ONCE) {
        const struct shm_header *h = m.as.vals.hdr;
        uint64_t nodes = (uint64_t)h->nnodes * sizeof(struct shm_node);
        uint64_t refs = (uint64_t)h->nrefs * sizeof(struct shm_ref);
        uint64_t index = (uint64_t)h->index_cap
                         * sizeof(struct shm_index_entry);
        uint64_t slots = (uint64_t)h->nslots * sizeof(struct shm_value_slot);
        uint64_t interest = (uint64_t)h->nslots * sizeof(uint64_t);

        /* One line for scripts (tests/bench/bench_build.sh). */
        printf("vars=%u nodes=%u refs=%u build_s=%.3f segment_bytes=%zu "
               "node_bytes=%llu ref_bytes=%llu index_bytes=%llu "
               "string_bytes=%llu slot_bytes=%llu interest_bytes=%llu "
               "vheap_used=%llu\n",
               m.conf.vars, h->nnodes, h->nrefs, m.as.build_seconds,
               m.as.seg.size, (unsigned long long)nodes,
               (unsigned long long)refs, (unsigned long long)index,
               (unsigned long long)h->strings_used,
               (unsigned long long)slots, (unsigned long long)interest,
               (unsigned long long)h->vheap.bytes_used);
    }
    rc = 0;
    if (mode == BK_MODE_SERVE)
        rc = bk_run(&m);
    bk_pki_clear(&m.pki);
    shm_log_level_at(NULL);
    bk_addrspace_close(&m.as);
    return rc;
}
