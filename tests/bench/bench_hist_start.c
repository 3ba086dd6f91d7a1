/*
 * tests/bench/bench_hist_start.c: the whole server's start-up with a big
 * history store (docs/benchmarks.md "History: end to end", issue 18's
 * "start-up with a 1 GiB store, goal <= 100 ms, no scan").
 *
 *   bench_hist_start UABROKER DIR GIB PORT STATS_PORT [RUNS]
 *
 * Fills DIR (once: kept when DIR/data.mdb is there) with GIB GiB of 1 s
 * Double values of the Demo variables ns=1;s=v0 ... v999 (15.6 bytes a
 * value on disk: GIB x 68.8 M values), the last of them a second ago, so
 * that the default retention (7 days) keeps them all.  Then RUNS times
 * (default 5): starts UABROKER with one worker, those 1,000 variables
 * historized from DIR (history.demo_vars, history.dir), and measures
 * from just before the fork:
 *   broker     its "serving opc.tcp://" line (address space built, the
 *              listening socket bound; the worker and the historian are
 *              forked next)
 *   historian  the historian's "history of N variables" line (its store
 *              open, its variables registered, their current values
 *              taken, their interest set: it is serving)
 *   stats      /stats "history" "up": 1 (the state the broker shows)
 *   first read a HistoryRead (raw, 10 values of v7 with both timestamps)
 *              answered over OPC UA: connect, channel, session, read
 *              (uaconn_start tried every 2 ms)
 * and stops it (SIGTERM).  One line per run, then the medians.
 *
 * Linked with libhist (the filling), libproto and tests/lib/uaconn.c
 * (the client).  Allocates freely: a bench, not the server.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "hist/store.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "tests/bench/benchlib.h"
#include "tests/lib/uaconn.h"

#define BS_NODES   1000
#define BS_BATCH   65536
#define BS_SEC     10000000ll           /* DateTime ticks */
#define BS_EPOCH   116444736000000000ll /* 1970 in DateTime ticks */
#define BS_RUNS    21

static uint8_t      bs_dv[BS_BATCH][26];
static struct hs_in bs_in[BS_BATCH];
static uint8_t      bs_abuf[1 << 20];

static void bs_fill(const char *dir, double gib);
static pid_t bs_start(const char *broker, const char *dir, int port,
                      int sport, int *errfd);
static int bs_wait_line(int fd, const char *what, uint64_t t0, double *ms);
static int bs_stats_up(int sport);
static ua_status bs_first_read(struct uaconn *c);
static int64_t bs_now_dt(void);

static int64_t
bs_now_dt(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return BS_EPOCH + (int64_t)ts.tv_sec * BS_SEC + ts.tv_nsec / 100;
}

/* The store: BS_NODES nodes, total values round robin, 1 s apart. */
static void
bs_fill(const char *dir, double gib)
{
    struct hs_store_config c = {
        .dir = dir, .map_bytes = (uint64_t)(gib * 3 + 1) << 30,
        .nosync = true, .batch_max = BS_BATCH,
    };
    uint64_t         key[BS_NODES];
    uint64_t         total = (uint64_t)(gib * (1ull << 30) / 15.6), done = 0;
    uint64_t         per = total / BS_NODES;
    int64_t          t0 = bs_now_dt() - (int64_t)(per + 1) * BS_SEC;
    char             err[256], path[512];
    struct stat      st;
    struct hs_store *s;

    snprintf(path, sizeof(path), "%s/data.mdb", dir);
    if (stat(path, &st) == 0) {
        printf("# store %s kept: %.2f GiB\n", dir,
               (double)st.st_size / (1 << 30));
        return;
    }
    mkdir(dir, 0750);
    s = hs_store_open(&c, err, sizeof(err));
    if (s == NULL) {
        fprintf(stderr, "bench_hist_start: %s\n", err);
        exit(1);
    }
    for (int i = 0; i < BS_NODES; i++) {
        struct ua_nodeid id = { .ns = 1, .idtype = UA_IDTYPE_STRING };
        char             name[16];
        uint8_t          enc[64];
        size_t           len;

        snprintf(name, sizeof(name), "v%d", i);
        id.id.str.data = (uint8_t *)name;
        id.id.str.len = (int32_t)strlen(name);
        if (ua_encode(&id, &ua_types[UA_TYPE_NODEID], enc, sizeof(enc),
                      &len) != UA_GOOD
            || hs_store_node_add(s, enc, len, 0, &key[i]) != 0) {
            fprintf(stderr, "bench_hist_start: node v%d\n", i);
            exit(1);
        }
    }
    total = per * BS_NODES;
    while (done < total) {
        uint32_t k;

        for (k = 0; k < BS_BATCH && done < total; k++, done++) {
            int64_t t = t0 + (int64_t)(done / BS_NODES) * BS_SEC;
            double  d = (double)done;

            bs_dv[k][0] = 0x0D;     /* Value, source and server time */
            bs_dv[k][1] = 11;       /* Double */
            memcpy(bs_dv[k] + 2, &d, 8);
            memcpy(bs_dv[k] + 10, &t, 8);
            memcpy(bs_dv[k] + 18, &t, 8);
            bs_in[k].key = key[done % BS_NODES];
            bs_in[k].dv = bs_dv[k];
            bs_in[k].len = 26;
        }
        if (hs_store_append(s, bs_in, k) != 0) {
            fprintf(stderr, "bench_hist_start: append: %s\n",
                    hs_store_error(s));
            exit(1);
        }
    }
    hs_store_close(s);
    stat(path, &st);
    printf("# store %s filled: %" PRIu64 " values, %.2f GiB\n", dir, total,
           (double)st.st_size / (1 << 30));
}

/* UABROKER with its stderr on a pipe (*errfd, non-blocking). */
static pid_t
bs_start(const char *broker, const char *dir, int port, int sport,
         int *errfd)
{
    char  ps[16], ss[48], ds[600], rd[600];
    int   p[2];
    pid_t pid;

    snprintf(ps, sizeof(ps), "%d", port);
    snprintf(ss, sizeof(ss), "127.0.0.1:%d", sport);
    snprintf(ds, sizeof(ds), "history.dir=%s", dir);
    snprintf(rd, sizeof(rd), "%s.run", dir);
    if (pipe(p) != 0)
        return -1;
    pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        execl(broker, broker, "-w", "1", "-p", ps, "--stats", ss,
              "--runtime-dir", rd, "--vars", "1000",
              "--set", "history.demo_vars=1000", "--set", ds,
              (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    *errfd = p[0];
    return pid;
}

/* Read fd until a line containing what: 0 and *ms since t0, or -1
 * after 10 s.  What follows the match is kept for the next call. */
static int
bs_wait_line(int fd, const char *what, uint64_t t0, double *ms)
{
    static char   buf[65536];
    static size_t used;

    for (;;) {
        char   *m;
        ssize_t n;

        buf[used] = '\0';
        if ((m = strstr(buf, what)) != NULL) {
            size_t rest = used - (size_t)(m + strlen(what) - buf);

            *ms = (double)(benchlib_now() - t0) / 1e6;
            memmove(buf, buf + used - rest, rest);
            used = rest;
            return 0;
        }
        if (used > sizeof(buf) / 2) {       /* keep the tail */
            memmove(buf, buf + used - 256, 256);
            used = 256;
        }
        if (benchlib_now() - t0 > 10000000000ull)
            break;
        n = read(fd, buf + used, sizeof(buf) - 1 - used);
        if (n > 0)
            used += (size_t)n;
        else
            usleep(200);
    }
    used = 0;
    return -1;
}

/* /stats says the historian is up: 1, else 0. */
static int
bs_stats_up(int sport)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    char               buf[16384];
    size_t             got = 0;
    ssize_t            n;
    int                fd = socket(AF_INET, SOCK_STREAM, 0);
    const char        *req = "GET /stats HTTP/1.0\r\n\r\n";

    a.sin_port = htons((uint16_t)sport);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0
        || write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    while (got < sizeof(buf) - 1
           && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)n;
    close(fd);
    buf[got] = '\0';
    return strstr(buf, "\"history\": {\"up\": 1") != NULL;
}

/* HistoryRead raw: 10 values of v7, both timestamps. */
static ua_status
bs_first_read(struct uaconn *c)
{
    struct ua_read_raw_modified_details d;
    struct ua_history_read_value_id     v;
    struct ua_history_read_request      req;
    struct ua_history_read_response     resp;
    struct ua_arena                     a;
    const struct ua_history_data       *hd;
    static char                         name[] = "v7";
    ua_status                           s;

    ua_arena_init(&a, bs_abuf, sizeof(bs_abuf));
    memset(&d, 0, sizeof(d));
    d.start_time = 1;
    d.num_values_per_node = 10;
    memset(&v, 0, sizeof(v));
    v.node_id.ns = 1;
    v.node_id.idtype = UA_IDTYPE_STRING;
    v.node_id.id.str.data = (uint8_t *)name;
    v.node_id.id.str.len = 2;
    v.index_range.len = -1;
    v.data_encoding.name.len = -1;
    v.continuation_point.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.history_read_details.type_id.idtype = UA_IDTYPE_NUMERIC;
    req.history_read_details.type_id.id.num =
        UA_NS0ID_READRAWMODIFIEDDETAILS_ENCODING_DEFAULTBINARY;
    req.history_read_details.encoding = UA_EO_DECODED;
    req.history_read_details.type = &ua_types[UA_TYPE_READRAWMODIFIEDDETAILS];
    req.history_read_details.obj = &d;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &v;
    s = uaconn_call(c, &ua_types[UA_TYPE_HISTORYREADREQUEST], &req,
                    &ua_types[UA_TYPE_HISTORYREADRESPONSE], &resp, &a);
    if (s != UA_GOOD)
        return s;
    if (resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    if (resp.results[0].status_code != UA_GOOD)
        return resp.results[0].status_code;
    hd = resp.results[0].history_data.obj;
    if (hd == NULL || hd->n_data_values != 10)
        return UA_BAD_NO_DATA;
    return UA_GOOD;
}

int
main(int argc, char **argv)
{
    double serv[BS_RUNS], hist[BS_RUNS], up[BS_RUNS], rd[BS_RUNS];
    int    runs, port, sport;

    if (argc < 6) {
        fprintf(stderr, "usage: bench_hist_start UABROKER DIR GIB PORT "
                "STATS_PORT [RUNS]\n");
        return 2;
    }
    port = atoi(argv[4]);
    sport = atoi(argv[5]);
    runs = argc > 6 ? atoi(argv[6]) : 5;
    if (runs < 1 || runs > BS_RUNS)
        runs = 5;
    signal(SIGPIPE, SIG_IGN);
    bs_fill(argv[2], atof(argv[3]));
    for (int r = 0; r < runs; r++) {
        struct uaconn c;
        uint64_t      t0 = benchlib_now();
        int           efd, st;
        pid_t         pid = bs_start(argv[1], argv[2], port, sport, &efd);
        ua_status     s = UA_BAD_TIMEOUT;

        if (pid < 0 || bs_wait_line(efd, "serving opc.tcp", t0, &serv[r]) != 0
            || bs_wait_line(efd, "history of", t0, &hist[r]) != 0) {
            fprintf(stderr, "bench_hist_start: no historian line\n");
            return 1;
        }
        while (!bs_stats_up(sport) && benchlib_now() - t0 < 10000000000ull)
            usleep(500);
        up[r] = (double)(benchlib_now() - t0) / 1e6;
        while (benchlib_now() - t0 < 10000000000ull) {
            uaconn_init(&c);
            if (uaconn_start(&c, "127.0.0.1", (uint16_t)port) == UA_GOOD) {
                s = bs_first_read(&c);
                uaconn_close(&c);
                break;
            }
            uaconn_clear(&c);
            usleep(2000);
        }
        rd[r] = (double)(benchlib_now() - t0) / 1e6;
        kill(pid, SIGTERM);
        waitpid(pid, &st, 0);
        close(efd);
        if (s != UA_GOOD) {
            fprintf(stderr, "bench_hist_start: HistoryRead 0x%08X\n", s);
            return 1;
        }
        printf("run %d: broker serving %.1f ms, historian serving %.1f ms, "
               "/stats up %.1f ms, first HistoryRead answered %.1f ms\n",
               r + 1, serv[r], hist[r], up[r], rd[r]);
        fflush(stdout);
    }
    printf("start-up with the store (median of %d): broker serving %.1f "
           "ms, historian serving %.1f ms, /stats up %.1f ms, first "
           "HistoryRead answered %.1f ms\n", runs,
           benchlib_median(serv, runs), benchlib_median(hist, runs),
           benchlib_median(up, runs), benchlib_median(rd, runs));
    return 0;
}
