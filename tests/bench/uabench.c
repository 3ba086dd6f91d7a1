/*
 * tests/bench/uabench.c: an OPC UA load generator for any OPC UA server
 * (opc.tcp, anonymous sessions; SecurityPolicy None, or with --security
 * POLICY:MODE an RSA policy in Sign or SignAndEncrypt mode).
 *
 * One process, one thread, one epoll loop over non-blocking sockets.  Every
 * session is its own TCP connection with its own secure channel and session;
 * proto/client.h frames, secures (None) and sequences the chunks, the codec
 * encodes the requests and checks the responses.  Nothing blocks on the hot
 * path: the only blocking calls are the stats endpoint's HTTP GETs at the
 * edges of the measuring window, and the discovery below.
 *
 *   DISCOVER with --security: GetEndpoints on a None channel (blocking),
 *            the endpoint of our policy and mode, its server certificate
 *            checked (ub_server_cert_check: chain, signatures, policy,
 *            validity, ApplicationUri, usage; trusted through
 *            --server-trust FILE or as its own anchor)
 *   SETUP    connect, HEL/ACK, OPN, CreateSession, ActivateSession (all
 *            sessions at once, through the same loop); secured: our
 *            certificate in OPN and CreateSession, the CreateSession's
 *            serverCertificate must be the discovered one and its
 *            serverSignature must verify, ActivateSession carries our
 *            clientSignature
 *   WARMUP   load, not measured (--warmup S)
 *   MEASURE  load; latency, ops, client and server CPU, server allocations
 *   DRAIN    no new requests; wait (bounded) for those in flight
 *   CLOSE    CloseSession + CLO on every session, close the sockets
 *
 * Load: each session keeps --depth requests in flight (pipelined on its
 * channel).  Every response is checked (type, ServiceResult, number of
 * results, the first result's status) and immediately replaced by a new
 * request; all requests made ready in one loop iteration leave in one send()
 * per connection.  Latency is taken from just before that send() to just
 * after the read() that brought the response, into a log-linear histogram
 * (no allocation per request).
 *
 * An op is one service call (a Read of 100 values is one op).  In the
 * subscription scenarios (sub, fanout) an op is one delivered notification
 * (a MonitoredItemNotification in a PublishResponse) and the latency is
 * from the value's source timestamp (the broker stamps it when it applies
 * the writer's Write, or at its simulation tick) to the read() that
 * brought the notification (both clocks are this machine's
 * CLOCK_REALTIME):
 *
 *   sub      every session subscribes to --items variables (v0 ...) at
 *            --interval ms (samplingInterval 0, queue --queue) and keeps
 *            --depth Publish requests in flight, acknowledging what came;
 *            --source write (the default): one more session, the writer,
 *            changes every one of those variables --rate times a second
 *            (one Write of all of them); --source sim: no writer, the
 *            server changes them itself (uabroker: addrspace.
 *            simulation_vars >= --items, its simulation_interval_ms
 *            sets the rate; --rate is then only the rate expected, for the
 *            report, which also gives the rate seen: notifications per
 *            second per watched variable)
 *   fanout   the same with 1,000 variables: K sessions (--sessions), spread
 *            over the workers, all watching the same 1,000 nodes
 *
 *   connect  each session is a connector that cycles: connect, HEL, OPN
 *            (the --security policy), CreateSession, ActivateSession
 *            (anonymous), CloseSession, CLO, close; an op is one such
 *            handshake, its latency from the connect() to the
 *            CloseSession response.  With security, one more line: the
 *            RSA ceiling (ub_rsa_report: what the server's RSA operations
 *            alone allow, their costs measured with proto/crypto.h right
 *            before and after the run, and the private ones sampled
 *            inside it too)
 *
 * Client certificate (--security): --cert FILE --key FILE (DER or PEM), or
 * a fresh RSA-2048 key and self-signed certificate, which --write-cert
 * FILE / --write-key FILE write out (without --url uabench only writes
 * them: a script puts the certificate into the server's trust list).
 *
 * A server that coalesces changes inside a sampling interval (uabroker's
 * limits.min_sampling_interval_ms, default 50) delivers fewer than it was
 * sent; bench_server.sh runs uabroker with that limit at 0.
 *
 * Server CPU: utime+stime from /proc/PID/stat of every --server-pid and of
 * every pid the uabroker stats endpoint (--stats) lists, over the window,
 * per op (10 ms ticks: use windows of seconds).  Server allocations: the
 * uabroker workers' `allocations` counters from /stats, before and after
 * the window, per op.
 *
 * Scenarios are rows of ub_scenarios[]: a request type, a response type, the
 * type of the response's results and three small functions (build the
 * request, advance it before each send, read the first result's status).
 *
 * Files: uabench.c (this one: options, clocks and CPU, the stats endpoint,
 * the histogram, the phases, the loop and the result line),
 * uabench_conn.c (sessions: connections, setup messages, requests in
 * flight, responses checked), uabench_sec.c (--security: certificates,
 * discovery, the server certificate's checks, session signatures, RSA
 * costs), uabench_scen.c (the scenarios' rows and functions: read, browse,
 * write, sub and fanout, connect); uabench.h is what they share.
 *
 * Output: one line per run,
 *   scenario=read1 sessions=20 depth=1 ops/s=... p50_us=... p90_us=...
 *   p99_us=... client_cpu_us/op=... server_cpu_us/op=... server_allocs/op=...
 *   errors=N other_load_cores=... security=None
 * (sub and fanout: source=write or source=sim at the end, and the
 * scenario's Markdown name says it too: "sub (source=sim)")
 * (connect with security: a second line, rsa_ceiling: ...)
 * or, with --markdown, one Markdown table row (--markdown-header prints the
 * header).  other_load_cores is the CPU the rest of the machine used during
 * the window (busy time in /proc/stat less ours and the server's): a run
 * that others disturbed shows it.  "-" marks a figure that could not be
 * measured (no server pid known, no stats endpoint).  Exit status:
 * 0 when the run completed without errors, 1 when errors were counted,
 * 2 on a usage error or when no session could be set up.
 */
#include "uabench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/client.h"
#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

static void ub_usage(FILE *f);
static int ub_args(struct ub *b, int argc, char **argv);
static int ub_security_arg(struct ub *b, const char *arg);
static int ub_parse_url(const char *url, const char *scheme, char *host,
                        size_t hcap, char *port, size_t pcap);
static double ub_self_cpu_us(void);
static bool ub_pid_cpu_us(int pid, double *us);
static bool ub_server_cpu_us(struct ub *b, double *us);
static bool ub_machine_cpu_us(double *us);
static bool ub_stats_fetch(struct ub *b, struct ub_stats_sample *st);
static double ub_hist_pct(const struct ub *b, double pct);
static void ub_phase_to(struct ub *b, enum ub_phase p);
static void ub_close_all(struct ub *b);
static void ub_report(struct ub *b);

/* ------------------------------------------------------------ options */

static void
ub_usage(FILE *f)
{
    fprintf(f,
        "Usage: uabench --url opc.tcp://HOST:PORT [options]\n"
        "\n"
        "  --url URL            server endpoint (anonymous sessions)\n"
        "  --security P:M       POLICY:MODE, POLICY Basic256Sha256 |\n"
        "                       Aes128_Sha256_RsaOaep | Aes256_Sha256_RsaPss,"
        "\n"
        "                       MODE Sign | SignAndEncrypt; or None (None)\n"
        "  --cert FILE          our certificate, DER or PEM (with --key;\n"
        "                       default: a fresh self-signed one)\n"
        "  --key FILE           its private key, DER or PEM\n"
        "  --write-cert FILE    write our certificate (DER) there; without\n"
        "                       --url, only write it (and --write-key)\n"
        "  --write-key FILE     write our private key (PKCS#1 DER) there\n"
        "  --server-trust FILE  the server certificate must chain to this\n"
        "                       one (default: the server's own leaf)\n"
        "  --sessions N         connections, each with its own channel and "
        "session (1)\n"
        "  --depth D            requests in flight per session (1)\n"
        "  --seconds S          measuring window (10)\n"
        "  --warmup S           load before the window, not measured (1)\n"
        "  --scenario NAME      read1 | read100 | browse | write100 | sub |\n"
        "                       fanout | connect (read1)\n"
        "  --vars-ns NS         namespace of the variables (1)\n"
        "  --vars-prefix P      string node ids P0, P1, ... (v)\n"
        "  --vars-count N       variables to rotate over (1000)\n"
        "  --timestamps T       source | server | both | neither (both)\n"
        "  --items M            sub, fanout: variables each session watches\n"
        "                       (sub 100, fanout 1000)\n"
        "  --interval P         sub, fanout: publishing interval, ms (100)\n"
        "  --rate R             sub, fanout: changes per second of each "
        "variable (50)\n"
        "  --source S           sub, fanout: what changes the variables:\n"
        "                       write (a writer session, --rate Writes/s)\n"
        "                       or sim (the server's simulation; --rate is\n"
        "                       then only the rate expected) (write)\n"
        "  --queue Q            sub, fanout: monitored-item queue size (100)\n"
        "  --server-pid PID     add PID's utime+stime to the server CPU "
        "(repeatable)\n"
        "  --stats URL          uabroker stats endpoint "
        "(http://127.0.0.1:9840):\n"
        "                       its pids count as server CPU, its workers'\n"
        "                       allocation counters give server_allocs/op\n"
        "  --markdown           print a Markdown table row instead of "
        "key=value\n"
        "  --markdown-header    print the table header and exit\n"
        "  --quiet              no progress on stderr\n"
        "  --help\n"
        "\n"
        "Scenarios (an op is one service call; sub, fanout: a notification;"
        "\n"
        "connect: a handshake):\n");
    for (size_t i = 0; i < ub_nscenarios; i++)
        fprintf(f, "  %-9s %s\n", ub_scenarios[i].name, ub_scenarios[i].what);
}

static void
ub_markdown_header(void)
{
    printf("| scenario | sessions | depth | ops/s | p50 µs | p90 µs | "
           "p99 µs | client CPU µs/op | server CPU µs/op | "
           "server allocs/op | errors | other load (cores) |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
           "---: | ---: | ---: |\n");
}

/* "scheme://host:port[/path]" (host may be [v6]); 0 or -1. */
static int
ub_parse_url(const char *url, const char *scheme, char *host, size_t hcap,
             char *port, size_t pcap)
{
    size_t      sl = strlen(scheme);
    const char *h, *e, *c;

    if (strncmp(url, scheme, sl) != 0 || strncmp(url + sl, "://", 3) != 0)
        return -1;
    h = url + sl + 3;
    e = h + strcspn(h, "/");
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(e - h));

        if (rb == NULL || rb[1] != ':')
            return -1;
        if ((size_t)(rb - h - 1) >= hcap)
            return -1;
        memcpy(host, h + 1, (size_t)(rb - h - 1));
        host[rb - h - 1] = '\0';
        c = rb + 1;
    } else {
        c = memchr(h, ':', (size_t)(e - h));
        if (c == NULL || (size_t)(c - h) >= hcap || c == h)
            return -1;
        memcpy(host, h, (size_t)(c - h));
        host[c - h] = '\0';
    }
    if ((size_t)(e - c - 1) >= pcap || e - c - 1 <= 0)
        return -1;
    memcpy(port, c + 1, (size_t)(e - c - 1));
    port[e - c - 1] = '\0';
    if (strspn(port, "0123456789") != strlen(port))
        return -1;
    return 0;
}

static int
ub_num(const char *opt, const char *s, double lo, double hi, double *v)
{
    char *end;

    errno = 0;
    *v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(*v >= lo && *v <= hi)) {
        fprintf(stderr, "uabench: %s wants a number in [%g, %g], not '%s'\n",
                opt, lo, hi, s);
        return -1;
    }
    return 0;
}

/* --security POLICY:MODE (POLICY a name of ua_crypto_policy_get(), or
 * None alone). */
static int
ub_security_arg(struct ub *b, const char *arg)
{
    const char *colon = strchr(arg, ':');
    size_t      pl = colon != NULL ? (size_t)(colon - arg) : strlen(arg);

    b->policy = NULL;
    if (pl == 4 && strncmp(arg, "None", 4) == 0
        && (colon == NULL || strcmp(colon + 1, "None") == 0))
        return 0;
    for (unsigned i = 1; i < UA_POLICY_COUNT && b->policy == NULL; i++) {
        const struct ua_policy *p = ua_crypto_policy_get(i);

        if (p != NULL && strlen(p->name) == pl
            && strncmp(p->name, arg, pl) == 0)
            b->policy = p;
    }
    if (b->policy == NULL || colon == NULL) {
        fprintf(stderr, "uabench: --security wants POLICY:MODE (Basic256Sha256,"
                " Aes128_Sha256_RsaOaep or Aes256_Sha256_RsaPss; Sign or "
                "SignAndEncrypt) or None, not '%s'\n", arg);
        b->policy = NULL;
        return -1;
    }
    if (strcmp(colon + 1, "Sign") == 0) {
        b->mode = UA_MESSAGESECURITYMODE_SIGN;
    } else if (strcmp(colon + 1, "SignAndEncrypt") == 0) {
        b->mode = UA_MESSAGESECURITYMODE_SIGNANDENCRYPT;
    } else {
        fprintf(stderr, "uabench: --security: mode Sign or SignAndEncrypt, "
                "not '%s'\n", colon + 1);
        b->policy = NULL;
        return -1;
    }
    return 0;
}

static int
ub_args(struct ub *b, int argc, char **argv)
{
    enum { O_URL = 256, O_SESS, O_DEPTH, O_SECS, O_WARM, O_SCEN, O_NS,
           O_PREFIX, O_COUNT, O_TS, O_PID, O_STATS, O_MD, O_MDH, O_QUIET,
           O_HELP, O_ITEMS, O_INTERVAL, O_RATE, O_QUEUE, O_SECURITY, O_CERT,
           O_KEY, O_WCERT, O_WKEY, O_TRUST, O_SOURCE };
    static const struct option opts[] = {
        { "url", required_argument, NULL, O_URL },
        { "sessions", required_argument, NULL, O_SESS },
        { "depth", required_argument, NULL, O_DEPTH },
        { "seconds", required_argument, NULL, O_SECS },
        { "warmup", required_argument, NULL, O_WARM },
        { "scenario", required_argument, NULL, O_SCEN },
        { "vars-ns", required_argument, NULL, O_NS },
        { "vars-prefix", required_argument, NULL, O_PREFIX },
        { "vars-count", required_argument, NULL, O_COUNT },
        { "timestamps", required_argument, NULL, O_TS },
        { "server-pid", required_argument, NULL, O_PID },
        { "stats", required_argument, NULL, O_STATS },
        { "markdown", no_argument, NULL, O_MD },
        { "markdown-header", no_argument, NULL, O_MDH },
        { "quiet", no_argument, NULL, O_QUIET },
        { "help", no_argument, NULL, O_HELP },
        { "items", required_argument, NULL, O_ITEMS },
        { "interval", required_argument, NULL, O_INTERVAL },
        { "rate", required_argument, NULL, O_RATE },
        { "queue", required_argument, NULL, O_QUEUE },
        { "security", required_argument, NULL, O_SECURITY },
        { "cert", required_argument, NULL, O_CERT },
        { "key", required_argument, NULL, O_KEY },
        { "write-cert", required_argument, NULL, O_WCERT },
        { "write-key", required_argument, NULL, O_WKEY },
        { "server-trust", required_argument, NULL, O_TRUST },
        { "source", required_argument, NULL, O_SOURCE },
        { NULL, 0, NULL, 0 }
    };
    int    c;
    double v;
    bool   source_set = false;

    b->nsess = 1;
    b->depth = 1;
    b->seconds = 10;
    b->warmup = 1;
    b->sc = &ub_scenarios[0];
    b->vars_ns = 1;
    strcpy(b->vars_prefix, "v");
    b->vars_count = 1000;
    b->timestamps = 2;      /* Both */
    b->interval = 100;
    b->rate = 50;
    b->queue = 100;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_URL:
            if (strlen(optarg) >= sizeof(b->url)
                || ub_parse_url(optarg, "opc.tcp", b->host, sizeof(b->host),
                                b->port, sizeof(b->port)) != 0) {
                fprintf(stderr, "uabench: --url wants opc.tcp://HOST:PORT, "
                        "not '%s'\n", optarg);
                return -1;
            }
            strcpy(b->url, optarg);
            break;
        case O_SESS:
            if (ub_num("--sessions", optarg, 1, UB_SESSIONS_MAX, &v) != 0)
                return -1;
            b->nsess = (uint32_t)v;
            break;
        case O_DEPTH:
            if (ub_num("--depth", optarg, 1, UB_DEPTH_MAX, &v) != 0)
                return -1;
            b->depth = (uint32_t)v;
            break;
        case O_SECS:
            if (ub_num("--seconds", optarg, 0.1, UB_SECONDS_MAX, &v) != 0)
                return -1;
            b->seconds = v;
            break;
        case O_WARM:
            if (ub_num("--warmup", optarg, 0, UB_SECONDS_MAX, &v) != 0)
                return -1;
            b->warmup = v;
            break;
        case O_SCEN:
            b->sc = NULL;
            for (size_t i = 0; i < ub_nscenarios; i++)
                if (strcmp(optarg, ub_scenarios[i].name) == 0)
                    b->sc = &ub_scenarios[i];
            if (b->sc == NULL) {
                fprintf(stderr, "uabench: unknown scenario '%s'\n", optarg);
                return -1;
            }
            break;
        case O_NS:
            if (ub_num("--vars-ns", optarg, 0, 65535, &v) != 0)
                return -1;
            b->vars_ns = (uint16_t)v;
            break;
        case O_PREFIX:
            if (strlen(optarg) >= sizeof(b->vars_prefix)) {
                fprintf(stderr, "uabench: --vars-prefix too long\n");
                return -1;
            }
            strcpy(b->vars_prefix, optarg);
            break;
        case O_COUNT:
            if (ub_num("--vars-count", optarg, 1, 10000000, &v) != 0)
                return -1;
            b->vars_count = (uint32_t)v;
            break;
        case O_TS:
            if (strcmp(optarg, "source") == 0)
                b->timestamps = 0;
            else if (strcmp(optarg, "server") == 0)
                b->timestamps = 1;
            else if (strcmp(optarg, "both") == 0)
                b->timestamps = 2;
            else if (strcmp(optarg, "neither") == 0)
                b->timestamps = 3;
            else {
                fprintf(stderr, "uabench: --timestamps wants source, server, "
                        "both or neither\n");
                return -1;
            }
            break;
        case O_PID:
            if (ub_num("--server-pid", optarg, 1, 4194304, &v) != 0)
                return -1;
            if (b->npids == UB_PIDS_MAX) {
                fprintf(stderr, "uabench: too many --server-pid\n");
                return -1;
            }
            b->pids[b->npids++] = (int)v;
            break;
        case O_STATS:
            if (ub_parse_url(optarg, "http", b->stats_host,
                             sizeof(b->stats_host), b->stats_port,
                             sizeof(b->stats_port)) != 0) {
                fprintf(stderr, "uabench: --stats wants http://HOST:PORT, "
                        "not '%s'\n", optarg);
                return -1;
            }
            b->stats = true;
            break;
        case O_MD:
            b->markdown = true;
            break;
        case O_MDH:
            ub_markdown_header();
            exit(0);
        case O_QUIET:
            b->quiet = true;
            break;
        case O_HELP:
            ub_usage(stdout);
            exit(0);
        case O_ITEMS:
            if (ub_num("--items", optarg, 1, UB_SUB_ITEMS_MAX, &v) != 0)
                return -1;
            b->items = (uint32_t)v;
            break;
        case O_INTERVAL:
            if (ub_num("--interval", optarg, 1, 3600000, &v) != 0)
                return -1;
            b->interval = v;
            break;
        case O_RATE:
            if (ub_num("--rate", optarg, 0.1, 100000, &v) != 0)
                return -1;
            b->rate = v;
            break;
        case O_QUEUE:
            if (ub_num("--queue", optarg, 1, 100000, &v) != 0)
                return -1;
            b->queue = (uint32_t)v;
            break;
        case O_SECURITY:
            if (ub_security_arg(b, optarg) != 0)
                return -1;
            break;
        case O_CERT:
            b->cert_file = optarg;
            break;
        case O_KEY:
            b->key_file = optarg;
            break;
        case O_WCERT:
            b->write_cert = optarg;
            break;
        case O_WKEY:
            b->write_key = optarg;
            break;
        case O_TRUST:
            b->trust_file = optarg;
            break;
        case O_SOURCE:
            if (strcmp(optarg, "write") == 0) {
                b->source_sim = false;
            } else if (strcmp(optarg, "sim") == 0) {
                b->source_sim = true;
            } else {
                fprintf(stderr, "uabench: --source wants write or sim, not "
                        "'%s'\n", optarg);
                return -1;
            }
            source_set = true;
            break;
        default:
            ub_usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "uabench: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if ((b->cert_file == NULL) != (b->key_file == NULL)) {
        fprintf(stderr, "uabench: --cert and --key go together\n");
        return -1;
    }
    if (b->url[0] == '\0' && (b->write_cert != NULL || b->write_key != NULL))
        return 0;               /* only write a certificate and key */
    if (b->url[0] == '\0') {
        fprintf(stderr, "uabench: --url is required\n");
        ub_usage(stderr);
        return -1;
    }
    b->is_sub = ub_sub_items(b->sc) > 0;
    b->is_connect = b->sc->init == ub_connect_init;
    if (b->items == 0)
        b->items = ub_sub_items(b->sc);
    if (source_set && !b->is_sub) {
        fprintf(stderr, "uabench: --source is for sub and fanout\n");
        return -1;
    }
    if (b->is_sub && b->items > b->vars_count) {
        fprintf(stderr, "uabench: %s needs --vars-count >= --items (%u)\n",
                b->sc->name, b->items);
        return -1;
    }
    if (b->sc->nresults > 1 && (uint32_t)b->sc->nresults > b->vars_count) {
        fprintf(stderr, "uabench: %s needs --vars-count >= %d\n",
                b->sc->name, b->sc->nresults);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ clocks, CPU */

uint64_t
ub_mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t
ub_now_dt(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 10000000 + ts.tv_nsec / 100
           + INT64_C(116444736000000000);
}

static double
ub_self_cpu_us(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec
           + (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

/* utime+stime of one process (not its children), µs. */
static bool
ub_pid_cpu_us(int pid, double *us)
{
    char               path[64], buf[1024], *p;
    int                fd;
    ssize_t            n;
    unsigned long long ut, st;
    long               hz = sysconf(_SC_CLK_TCK);

    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: skip to the last
     * ')'; then state is field 3, utime field 14, stime field 15. */
    p = strrchr(buf, ')');
    if (p == NULL
        || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                  "%llu %llu", &ut, &st) != 2
        || hz <= 0)
        return false;
    *us = (double)(ut + st) * 1e6 / (double)hz;
    return true;
}

/*
 * Busy time of the whole machine (every CPU's user, nice, system, irq,
 * softirq and steal from /proc/stat), µs: what neither we nor the server
 * used of it is other load that disturbed the run.
 */
static bool
ub_machine_cpu_us(double *us)
{
    unsigned long long v[8] = { 0 };
    long               hz = sysconf(_SC_CLK_TCK);
    char               buf[512];
    int                fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    ssize_t            n;

    if (fd == -1)
        return false;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0 || hz <= 0)
        return false;
    buf[n] = '\0';
    /* cpu  user nice system idle iowait irq softirq steal */
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
        return false;
    *us = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1e6
          / (double)hz;
    return true;
}

/* The sum over --server-pid and the stats endpoint's pids. */
static bool
ub_server_cpu_us(struct ub *b, double *us)
{
    double sum = 0, v;
    int    n = 0;

    for (int i = 0; i < b->npids; i++) {
        if (!ub_pid_cpu_us(b->pids[i], &v))
            return false;
        sum += v;
        n++;
    }
    for (int i = 0; b->st0.ok && i < b->st0.npids; i++) {
        bool dup = false;

        for (int j = 0; j < b->npids; j++)
            dup |= b->pids[j] == b->st0.pids[i];
        if (dup)
            continue;
        if (!ub_pid_cpu_us(b->st0.pids[i], &v))
            return false;
        sum += v;
        n++;
    }
    *us = sum;
    return n > 0;
}

/* ------------------------------------------------------------ stats */

/* Skip JSON whitespace. */
static const char *
ub_js_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* The number after `"key":` at p (p at the key's opening quote). */
static bool
ub_js_num_after(const char *p, const char *key, uint64_t *v)
{
    size_t kl = strlen(key);
    char  *end;

    if (p[0] != '"' || strncmp(p + 1, key, kl) != 0 || p[1 + kl] != '"')
        return false;
    p = ub_js_ws(p + 2 + kl);
    if (*p != ':')
        return false;
    p = ub_js_ws(p + 1);
    if (*p < '0' || *p > '9')
        return false;
    *v = strtoull(p, &end, 10);
    return true;
}

/*
 * GET /stats from the uabroker stats endpoint (blocking, bounded by
 * UB_STATS_MS; called at the window's edges only) and take from it:
 * every "pid" (the broker's and each worker's: their CPU is the server's)
 * and, inside the "workers" array, the sums of the "allocations" and
 * "rsa_cpu_us" counters.
 */
static bool
ub_stats_fetch(struct ub *b, struct ub_stats_sample *st)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai = NULL;
    struct timeval   tv = { UB_STATS_MS / 1000, (UB_STATS_MS % 1000) * 1000 };
    char             req[512];
    static char      buf[1 << 20];
    size_t           len = 0;
    int              fd = -1, depth = 0, wdepth = -1;
    const char      *p;
    bool             in_str = false;

    memset(st, 0, sizeof(*st));
    if (getaddrinfo(b->stats_host, b->stats_port, &hints, &ai) != 0)
        return false;
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        goto fail;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == -1)
        goto fail;
    snprintf(req, sizeof(req), "GET /stats HTTP/1.0\r\nHost: %s:%s\r\n"
             "Connection: close\r\n\r\n", b->stats_host, b->stats_port);
    if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
        goto fail;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

        if (n == 0)
            break;
        if (n == -1) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        len += (size_t)n;
        if (len == sizeof(buf) - 1)
            break;
    }
    close(fd);
    fd = -1;
    freeaddrinfo(ai);
    ai = NULL;
    buf[len] = '\0';
    if (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 9, "200", 3) != 0)
        return false;
    p = strstr(buf, "\r\n\r\n");
    if (p == NULL)
        return false;
    /* A small scanner: track nesting and strings, look at keys. */
    for (p += 4; *p != '\0'; p++) {
        uint64_t v;

        if (in_str) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                in_str = false;
            continue;
        }
        switch (*p) {
        case '{':
        case '[':
            depth++;
            break;
        case '}':
        case ']':
            depth--;
            if (depth < wdepth)
                wdepth = -1;
            break;
        case '"':
            if (ub_js_num_after(p, "pid", &v)) {
                if (st->npids < UB_PIDS_MAX && v > 0 && v < INT32_MAX) {
                    bool dup = false;

                    for (int i = 0; i < st->npids; i++)
                        dup |= st->pids[i] == (int)v;
                    if (!dup)
                        st->pids[st->npids++] = (int)v;
                }
            } else if (wdepth >= 0
                       && ub_js_num_after(p, "allocations", &v)) {
                st->allocations += v;
                st->ok = true;
            } else if (wdepth >= 0
                       && ub_js_num_after(p, "rsa_cpu_us", &v)) {
                st->rsa_cpu_us += v;
                st->rsa_cpu_seen = true;
            } else if (strncmp(p, "\"workers\"", 9) == 0) {
                const char *q = ub_js_ws(p + 9);

                if (*q == ':' && *ub_js_ws(q + 1) == '[')
                    wdepth = depth + 1;
            }
            in_str = true;
            break;
        default:
            break;
        }
    }
    return st->ok;
fail:
    if (fd != -1)
        close(fd);
    if (ai != NULL)
        freeaddrinfo(ai);
    return false;
}

/* ------------------------------------------------------------ histogram */

void
ub_hist_add(struct ub *b, uint64_t ns)
{
    unsigned idx;

    if (ns < UB_H_LINEAR) {
        idx = (unsigned)ns;
    } else {
        unsigned msb = 63u - (unsigned)__builtin_clzll(ns);   /* >= 6 */
        unsigned shift = msb - 5;                              /* >= 1 */

        idx = UB_H_LINEAR + (shift - 1) * UB_H_SUB
              + (unsigned)((ns >> shift) - UB_H_SUB);
        if (idx >= UB_H_BUCKETS)
            idx = UB_H_BUCKETS - 1;
    }
    b->hist[idx]++;
    b->hist_n++;
}

/* The pct-th percentile in µs (bucket midpoint). */
static double
ub_hist_pct(const struct ub *b, double pct)
{
    uint64_t want, seen = 0;

    if (b->hist_n == 0)
        return 0;
    want = (uint64_t)ceil(pct / 100.0 * (double)b->hist_n);
    if (want == 0)
        want = 1;
    for (unsigned i = 0; i < UB_H_BUCKETS; i++) {
        seen += b->hist[i];
        if (seen >= want) {
            double lo, width;

            if (i < UB_H_LINEAR) {
                lo = i;
                width = 1;
            } else {
                unsigned shift = (i - UB_H_LINEAR) / UB_H_SUB + 1;

                lo = (double)(((i - UB_H_LINEAR) % UB_H_SUB + UB_H_SUB)
                              * (1ull << shift));
                width = (double)(1ull << shift);
            }
            return (lo + width / 2) / 1000.0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ run */

static void
ub_phase_to(struct ub *b, enum ub_phase p)
{
    b->phase = p;
    if (p == UB_WARMUP || p == UB_MEASURE) {
        for (uint32_t i = 0; i < b->nsess; i++)
            ub_sess_refill(b, &b->sess[i]);
    }
    if (p == UB_MEASURE) {
        if (b->stats && !ub_stats_fetch(b, &b->st0) && !b->quiet)
            fprintf(stderr, "uabench: cannot read the stats endpoint\n");
        b->srv_cpu_ok = ub_server_cpu_us(b, &b->srv_cpu0);
        b->all_cpu_ok = ub_machine_cpu_us(&b->all_cpu0);
        b->cli_cpu0 = ub_self_cpu_us();
        memset(b->hist, 0, sizeof(b->hist));
        b->hist_n = 0;
        b->ops = 0;
        b->t0_ns = ub_mono_ns();
    } else if (p == UB_DRAIN) {
        b->t1_ns = ub_mono_ns();
        b->cli_cpu1 = ub_self_cpu_us();
        if (b->srv_cpu_ok)
            b->srv_cpu_ok = ub_server_cpu_us(b, &b->srv_cpu1);
        if (b->all_cpu_ok)
            b->all_cpu_ok = ub_machine_cpu_us(&b->all_cpu1);
        if (b->stats && b->st0.ok)
            (void)ub_stats_fetch(b, &b->st1);
    }
}

/* CloseSession + CLO on every live session, then close the sockets. */
static void
ub_close_all(struct ub *b)
{
    for (uint32_t i = 0; i < b->nsess; i++) {
        struct ub_sess                 *s = &b->sess[i];
        struct ua_close_session_request r;

        if (s->fd == -1)
            continue;
        if (s->state == UB_S_READY) {
            memset(&r, 0, sizeof(r));
            r.delete_subscriptions = true;
            (void)ub_send_request(b, s, &ua_types[UA_TYPE_CLOSESESSIONREQUEST],
                                  &r, NULL);
        }
        if (s->state >= UB_S_OPN && s->state <= UB_S_READY)
            (void)ua_client_close(&s->cl, &s->out);
        if (s->out.len > 0)
            (void)send(s->fd, s->out.buf, s->out.len,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(s->fd, SHUT_WR);
    }
    /* Give the server a moment to read what was sent, then close. */
    usleep(20000);
    for (uint32_t i = 0; i < b->nsess; i++)
        if (b->sess[i].fd != -1) {
            close(b->sess[i].fd);
            b->sess[i].fd = -1;
        }
}

static void
ub_report(struct ub *b)
{
    double secs = (double)(b->t1_ns - b->t0_ns) / 1e9;
    double ops = (double)b->ops;
    double rate = secs > 0 ? ops / secs : 0;
    char   cli[32], srv[32], alloc[32], other[32], sec[96], name[160];
    char   src[32] = "";

    /* Our CPU less the in-window RSA samples (not part of the load). */
    if (ops > 0)
        snprintf(cli, sizeof(cli), "%.2f",
                 (b->cli_cpu1 - b->cli_cpu0 - b->rsaw.cpu_sum) / ops);
    else
        strcpy(cli, "-");
    if (ops > 0 && b->srv_cpu_ok)
        snprintf(srv, sizeof(srv), "%.2f", (b->srv_cpu1 - b->srv_cpu0) / ops);
    else
        strcpy(srv, "-");
    if (ops > 0 && b->st0.ok && b->st1.ok)
        snprintf(alloc, sizeof(alloc), "%.3f",
                 (double)(b->st1.allocations - b->st0.allocations) / ops);
    else
        strcpy(alloc, "-");
    /* Other load: machine busy time that was neither ours nor the
     * server's (only meaningful when the server's CPU is known). */
    if (secs > 0 && b->all_cpu_ok && b->srv_cpu_ok) {
        double o = (b->all_cpu1 - b->all_cpu0) - (b->cli_cpu1 - b->cli_cpu0)
                   - (b->srv_cpu1 - b->srv_cpu0);

        snprintf(other, sizeof(other), "%.2f", o > 0 ? o / secs / 1e6 : 0.0);
    } else {
        strcpy(other, "-");
    }
    if (b->policy != NULL)
        snprintf(sec, sizeof(sec), "%s:%s", b->policy->name,
                 b->mode == UA_MESSAGESECURITYMODE_SIGN ? "Sign"
                                                        : "SignAndEncrypt");
    else
        strcpy(sec, "None");
    if (b->is_sub)
        snprintf(src, sizeof(src), "source=%s",
                 b->source_sim ? "sim" : "write");
    if (b->policy != NULL)
        snprintf(name, sizeof(name), "%s (%s%s%s)", b->sc->name, sec,
                 src[0] != '\0' ? ", " : "", src);
    else if (src[0] != '\0')
        snprintf(name, sizeof(name), "%s (%s)", b->sc->name, src);
    else
        snprintf(name, sizeof(name), "%s", b->sc->name);
    if (b->markdown)
        printf("| %s | %u | %u | %.0f | %.1f | %.1f | %.1f | %s | %s | %s | "
               "%" PRIu64 " | %s |\n", name, b->nsub, b->depth, rate,
               ub_hist_pct(b, 50), ub_hist_pct(b, 90), ub_hist_pct(b, 99),
               cli, srv, alloc, b->errors, other);
    else
        printf("scenario=%s sessions=%u depth=%u ops/s=%.0f p50_us=%.1f "
               "p90_us=%.1f p99_us=%.1f client_cpu_us/op=%s "
               "server_cpu_us/op=%s server_allocs/op=%s errors=%" PRIu64
               " other_load_cores=%s security=%s%s%s\n",
               b->sc->name, b->nsub, b->depth, rate, ub_hist_pct(b, 50),
               ub_hist_pct(b, 90), ub_hist_pct(b, 99), cli, srv, alloc,
               b->errors, other, sec, src[0] != '\0' ? " " : "", src);
    if (b->is_connect && b->policy != NULL) {
        /* A second line (stdout; stderr with --markdown). */
        ub_rsa_report(b->markdown ? stderr : stdout, b, rate,
                      b->srv_cpu_ok ? b->srv_cpu1 - b->srv_cpu0 : 0, secs);
    }
    if (b->is_sub && b->nsub > 0)
        fprintf(stderr, "uabench: %s: %u items per session, interval %.0f "
                "ms, source %s, %.0f changes/s per variable %s, %.1f seen "
                "(notifications/s per watched item); %" PRIu64
                " notifications with the Overflow bit, %" PRIu64
                " late Writes\n",
                b->sc->name, b->items, b->interval,
                b->source_sim ? "sim" : "write", b->rate,
                b->source_sim ? "expected" : "written",
                rate / ((double)b->nsub * b->items), b->overflows,
                b->lag_writes);
    fflush(stdout);
    if (b->errors > 0 && !b->quiet)
        fprintf(stderr, "uabench: %" PRIu64 " errors; the first: %s (%s)\n",
                b->errors, b->first_error_what,
                ua_status_name(b->first_error));
}

int
main(int argc, char **argv)
{
    static struct ub   b;
    struct addrinfo    hints = { .ai_family = AF_UNSPEC,
                                 .ai_socktype = SOCK_STREAM };
    struct epoll_event evs[256];
    uint64_t           start, deadline = 0, wait_ms = 1;
    int                rc;
    size_t             plen;

    if (ub_args(&b, argc, argv) != 0)
        return 2;
    if ((b.policy != NULL || b.write_cert != NULL || b.write_key != NULL)
        && ub_sec_init(&b) != 0)
        return 2;
    if (b.url[0] == '\0')
        return 0;               /* --write-cert/--write-key only */
    signal(SIGPIPE, SIG_IGN);
    /* The whole run is bounded, whatever the server does. */
    alarm((unsigned)(UB_SETUP_MS / 1000 + b.warmup + b.seconds
                     + UB_DRAIN_MS / 1000 + 30
                     + (b.policy != NULL ? 2 * UB_DISC_MS / 1000 + 20 : 0)));
    srand((unsigned)ub_mono_ns());
    if ((rc = getaddrinfo(b.host, b.port, &hints, &b.ai)) != 0) {
        fprintf(stderr, "uabench: %s:%s: %s\n", b.host, b.port,
                gai_strerror(rc));
        return 2;
    }
    /* sub, fanout: one more session, the writer (the last one), unless
     * the server's simulation changes the variables. */
    b.nsub = b.nsess;
    if (b.is_sub && !b.source_sim)
        b.nsess++;
    /* "v0" ... "v<count-1>", in one block. */
    plen = strlen(b.vars_prefix);
    b.vars = calloc(b.vars_count, sizeof(*b.vars));
    b.vars_mem = malloc((size_t)b.vars_count * (plen + 11));
    b.sess = calloc(b.nsess, sizeof(*b.sess));
    b.flush = calloc(b.nsess, sizeof(*b.flush));
    b.arena_buf = malloc(UB_ARENA);
    if (b.vars == NULL || b.vars_mem == NULL || b.sess == NULL
        || b.flush == NULL || b.arena_buf == NULL) {
        fprintf(stderr, "uabench: out of memory\n");
        return 2;
    }
    for (uint32_t i = 0; i < b.vars_count; i++) {
        char *p = b.vars_mem + (size_t)i * (plen + 11);
        int   n = snprintf(p, plen + 11, "%s%u", b.vars_prefix, i);

        b.vars[i].len = n;
        b.vars[i].data = (uint8_t *)p;
    }
    ua_arena_init(&b.arena, b.arena_buf, UB_ARENA);
    if (b.policy != NULL && ub_discover(&b) != 0)
        return 2;
    if (b.is_sub && !b.source_sim && ub_sub_writer_init(&b) != 0) {
        fprintf(stderr, "uabench: out of memory\n");
        return 2;
    }
    b.ep = epoll_create1(EPOLL_CLOEXEC);
    if (b.ep == -1) {
        perror("uabench: epoll_create1()");
        return 2;
    }
    if (b.is_connect && b.policy != NULL) {
        if (!b.quiet)
            fprintf(stderr, "uabench: measuring the RSA operations\n");
        (void)ub_rsa_measure(&b, &b.rsa0);
    }
    b.phase = UB_SETUP;
    b.now_dt = ub_now_dt();
    for (uint32_t i = 0; i < b.nsess; i++) {
        b.sess[i].idx = i;
        b.sess[i].fd = -1;
        b.sess[i].writer = b.is_sub && !b.source_sim && i == b.nsess - 1;
        if (ub_sess_start(&b, &b.sess[i]) != 0)
            ub_sess_kill(&b, &b.sess[i], UA_BAD_COMMUNICATION_ERROR,
                         "cannot start the connection");
    }
    start = ub_mono_ns();
    if (!b.quiet)
        fprintf(stderr, "uabench: %s, %u sessions, depth %u, %s\n", b.url,
                b.nsess, b.depth, b.sc->name);
    while (b.phase != UB_DONE) {
        int      n, timeout;
        uint64_t now = ub_mono_ns();

        b.now_ns = now;
        /* Phase changes. */
        if (b.phase == UB_SETUP) {
            if (b.ready + b.dead == b.nsess
                || now - start > (uint64_t)UB_SETUP_MS * 1000000u) {
                if (b.ready == 0) {
                    fprintf(stderr, "uabench: no session could be set up%s"
                            "\n", b.policy != NULL
                            && b.first_error == UA_BAD_SECURITY_CHECKS_FAILED
                            ? " (is our certificate in the server's trust "
                              "list?)" : "");
                    return 2;
                }
                if (b.ready + b.dead < b.nsess)
                    for (uint32_t i = 0; i < b.nsess; i++)
                        if (b.sess[i].state < UB_S_READY)
                            ub_sess_kill(&b, &b.sess[i], UA_BAD_TIMEOUT,
                                         "setup timed out");
                if (!b.quiet)
                    fprintf(stderr, "uabench: %u sessions ready; warm-up "
                            "%.1f s, then %.1f s measured\n", b.ready,
                            b.warmup, b.seconds);
                deadline = now + (uint64_t)(b.warmup * 1e9);
                ub_phase_to(&b, UB_WARMUP);
            }
        } else if (b.phase == UB_WARMUP && now >= deadline) {
            ub_phase_to(&b, UB_MEASURE);
            now = b.t0_ns;
            deadline = now + (uint64_t)(b.seconds * 1e9);
        } else if (b.phase == UB_MEASURE && now >= deadline) {
            ub_phase_to(&b, UB_DRAIN);
            deadline = ub_mono_ns() + (uint64_t)UB_DRAIN_MS * 1000000u;
        } else if (b.phase == UB_DRAIN) {
            uint32_t left = 0;

            for (uint32_t i = 0; i < b.nsess; i++) {
                if (b.is_connect)           /* cycles not finished */
                    left += b.sess[i].counted
                            && b.sess[i].state != UB_S_IDLE;
                else if (b.sess[i].state == UB_S_READY
                         && (!b.is_sub || b.sess[i].writer))
                    left += b.sess[i].inflight;     /* not parked Publishes */
            }
            if (left == 0 || now >= deadline)
                b.phase = UB_DONE;
            if (b.phase == UB_DONE)
                break;
        }
        /* Channel renewal at 75 % of the token lifetime (long runs). */
        for (uint32_t i = 0; b.phase != UB_SETUP && i < b.nsess; i++) {
            struct ub_sess *s = &b.sess[i];
            uint32_t        now_ms = (uint32_t)(now / 1000000u);

            if (s->state != UB_S_READY
                || (int32_t)(now_ms - s->next_renew_check_ms) < 0)
                continue;
            s->next_renew_check_ms = now_ms + 1000;
            if (ua_client_renew_due(&s->cl, now / 1000000u)
                && s->cl.opn_request_id == 0) {
                ua_status st = ua_client_open(
                    &s->cl, UA_SECURITYTOKENREQUESTTYPE_RENEW, 0, NULL,
                    &s->out);

                if (st != UA_GOOD)
                    ub_sess_kill(&b, s, st, "cannot renew the channel");
                else
                    ub_sess_dirty(&b, s);
            }
        }
        if (b.ready == 0 && b.phase != UB_SETUP) {
            fprintf(stderr, "uabench: every session failed\n");
            break;
        }
        timeout = 100;
        if (b.is_sub && !b.source_sim && wait_ms < (uint64_t)timeout)
            timeout = (int)wait_ms;
        if (b.phase != UB_SETUP && deadline > now
            && (deadline - now) / 1000000u < (uint64_t)timeout)
            timeout = (int)((deadline - now) / 1000000u) + 1;
        n = epoll_wait(b.ep, evs, (int)(sizeof(evs) / sizeof(evs[0])),
                       timeout);
        if (n == -1) {
            if (errno == EINTR)
                continue;
            perror("uabench: epoll_wait()");
            return 2;
        }
        b.now_dt = ub_now_dt();
        for (int i = 0; i < n; i++) {
            struct ub_sess *s = evs[i].data.ptr;

            if (s->state == UB_S_DEAD)
                continue;
            if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)
                && s->want_out)
                ub_sess_writable(&b, s);
            if (s->state != UB_S_DEAD && s->state != UB_S_CONNECTING
                && evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                ub_sess_readable(&b, s);
        }
        if (b.is_sub && !b.source_sim)
            wait_ms = ub_sub_write(&b);
        for (uint32_t i = 0; i < b.nflush; i++)
            ub_sess_flush(&b, b.flush[i]);
        b.nflush = 0;
        /* connect with security: the private-key costs inside the window
         * (after the flush: the requests are out while we sample). */
        if (b.is_connect && b.policy != NULL && b.phase == UB_MEASURE
            && b.now_ns >= b.rsaw.next_ns) {
            ub_rsa_sample(&b);
            b.rsaw.next_ns = ub_mono_ns()
                             + (uint64_t)UB_RSA_SAMPLE_MS * 1000000u;
        }
    }
    if (b.phase != UB_DONE && b.t1_ns == 0)
        ub_phase_to(&b, UB_DRAIN);
    ub_close_all(&b);
    if (b.is_connect && b.policy != NULL)
        (void)ub_rsa_measure(&b, &b.rsa1);
    ub_report(&b);
    return b.errors > 0 ? 1 : 0;
}
