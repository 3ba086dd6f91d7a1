/*
 * tests/integ/integ_metrics.c: GET /metrics passes `promtool check
 * metrics`, on loopback.
 *
 *   1. starts `uabroker -w 2`;
 *   2. traffic: sessions on both workers' port, Reads, a subscription and
 *      its Publish, a Read of an unknown node, so that the per-service
 *      histograms and the counters have samples;
 *   3. GET /metrics, saved to a file and piped to `promtool check metrics`
 *      (promtool must be installed: deploy/install-deps.sh --test): exit 0
 *      and nothing printed (promtool prints every lint or parse problem);
 *   4. our own rules over the same text: every sample belongs to a family
 *      with # HELP and # TYPE; no series appears twice; every histogram
 *      series (its labels but le) has a +Inf bucket, a _sum and a _count
 *      equal to that bucket; counters end in _total; no name counts
 *      microseconds (seconds are the base unit); the loop and request
 *      histograms are there;
 *   5. SIGTERM: the broker exits 0.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_metrics: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IM_WATCHDOG_S   120
#define IM_START_MS     30000
#define IM_ARENA        (1u << 20)
#define IM_CLIENTS      4
#define IM_READS        20
#define IM_LINES_MAX    8192
#define IM_NAME_MAX     512

static char            im_dir[PATH_MAX];
static char            im_log[PATH_MAX + 16];
static char            im_bin[PATH_MAX];
static struct ua_arena im_arena;

struct im_family {
    char name[IM_NAME_MAX];
    char type[16];
    bool help;
};

static int im_cmp(const void *a, const void *b);
static void im_traffic(uint16_t port);
static void im_promtool(const char *text);
static void im_rules(char *text);
static const struct im_family *im_family_of(const struct im_family *f,
                                            unsigned n, const char *sample);
static void im_histograms(char **samples, unsigned n);

static int
im_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sessions, Reads, a subscription with one Publish, a bad NodeId. */
static void
im_traffic(uint16_t port)
{
    struct uaconn c[IM_CLIENTS];
    unsigned      reads = 0, sessions = 0;

    for (int i = 0; i < IM_CLIENTS; i++) {
        if (uaconn_start_retry(&c[i], "127.0.0.1", port, IM_START_MS)
            != UA_GOOD)
            continue;
        sessions++;
        for (int k = 0; k < IM_READS; k++)
            if (uaconn_read_time(&c[i], &im_arena) == UA_GOOD)
                reads++;
    }
    itest_check(sessions == IM_CLIENTS && reads == IM_CLIENTS * IM_READS,
                "traffic: %u sessions, %u Reads", sessions, reads);
    if (sessions > 0) {
        struct ua_create_subscription_response csr;
        struct ua_publish_request              pr;
        struct ua_publish_response             presp;
        struct ua_read_request                 rr;
        struct ua_read_response                rresp;
        struct ua_read_value_id                rv;
        ua_status                              s;

        s = uaconn_subscribe1(&c[0], &im_arena, 100, 600, 10,
                              ua_nodeid_num(0, 2258), 100, &csr);
        itest_check(s == UA_GOOD, "traffic: a subscription (0x%08X)", s);
        memset(&pr, 0, sizeof(pr));
        ua_arena_reset(&im_arena);
        s = uaconn_call(&c[0], &ua_types[UA_TYPE_PUBLISHREQUEST], &pr,
                        &ua_types[UA_TYPE_PUBLISHRESPONSE], &presp, &im_arena);
        itest_check(s == UA_GOOD, "traffic: a Publish (0x%08X)", s);
        memset(&rr, 0, sizeof(rr));
        memset(&rv, 0, sizeof(rv));
        rv.node_id = ua_nodeid_str(1, "no-such-node");
        rv.attribute_id = 13;
        rr.nodes_to_read = &rv;
        rr.n_nodes_to_read = 1;
        ua_arena_reset(&im_arena);
        s = uaconn_call(&c[0], &ua_types[UA_TYPE_READREQUEST], &rr,
                        &ua_types[UA_TYPE_READRESPONSE], &rresp, &im_arena);
        itest_check(s == UA_GOOD && rresp.n_results == 1
                        && rresp.results[0].status
                               == UA_BAD_NODE_ID_UNKNOWN,
                    "traffic: a Read of an unknown node: "
                    "BadNodeIdUnknown");
    }
    for (int i = 0; i < IM_CLIENTS; i++)
        uaconn_clear(&c[i]);
}

/* promtool check metrics < the text: exit 0, no output. */
static void
im_promtool(const char *text)
{
    char    path[PATH_MAX + 32], out[PATH_MAX + 32], cmd[3 * PATH_MAX];
    uint8_t buf[8192];
    size_t  len = 0;
    int     st;

    snprintf(path, sizeof(path), "%s/metrics.txt", im_dir);
    snprintf(out, sizeof(out), "%s/promtool.out", im_dir);
    if (itest_write_file(path, (const uint8_t *)text, strlen(text)) != 0)
        itest_fatal("cannot write %s", path);
    if (system("command -v promtool >/dev/null 2>&1") != 0)
        itest_fatal("promtool not found: run deploy/install-deps.sh --test "
                    "(Debian package prometheus)");
    snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' > '%s' 2>&1",
             path, out);
    st = system(cmd);
    if (itest_read_file(out, buf, sizeof(buf), &len) != 0)
        len = 0;
    buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = '\0';
    itest_check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && len == 0,
                "promtool check metrics: exit %d, %zu bytes of complaints%s%s",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1, len,
                len ? ":\n" : "", (const char *)buf);
}

/* The family a sample line belongs to: its name, or the histogram whose
 * _bucket/_sum/_count it is. */
static const struct im_family *
im_family_of(const struct im_family *f, unsigned n, const char *sample)
{
    static const char *const suffix[] = { "_bucket", "_sum", "_count" };
    size_t len = strcspn(sample, "{ ");

    for (unsigned i = 0; i < n; i++) {
        size_t fl = strlen(f[i].name);

        if (fl == len && strncmp(f[i].name, sample, len) == 0)
            return &f[i];
        if (strcmp(f[i].type, "histogram") != 0 || len <= fl
            || strncmp(f[i].name, sample, fl) != 0)
            continue;
        for (int k = 0; k < 3; k++)
            if (len - fl == strlen(suffix[k])
                && strncmp(sample + fl, suffix[k], len - fl) == 0)
                return &f[i];
    }
    return NULL;
}

/*
 * Every histogram series: its +Inf bucket, _sum and _count, count equal to
 * the +Inf bucket.  samples are sorted; a series' key is its name without
 * the suffix plus its labels without le.
 */
static void
im_histograms(char **samples, unsigned n)
{
    unsigned series = 0, bad = 0;

    for (unsigned i = 0; i < n; i++) {
        char        base[IM_NAME_MAX], want[2 * IM_NAME_MAX];
        const char *inf = strstr(samples[i], ",le=\"+Inf\"}");
        const char *name_end = strstr(samples[i], "_bucket{");
        const char *val;
        bool        sum = false, count = false;

        if (inf == NULL || name_end == NULL
            || (size_t)(inf - samples[i]) >= sizeof(base))
            continue;
        series++;
        val = inf + strlen(",le=\"+Inf\"}");
        /* name{labels without le */
        snprintf(base, sizeof(base), "%.*s", (int)(name_end - samples[i]),
                 samples[i]);
        snprintf(want, sizeof(want), "%s_count%.*s}%s", base,
                 (int)(inf - name_end - 7), name_end + 7, val);
        for (unsigned k = 0; k < n; k++)
            if (strcmp(samples[k], want) == 0)
                count = true;
        snprintf(want, sizeof(want), "%s_sum%.*s} ", base,
                 (int)(inf - name_end - 7), name_end + 7);
        for (unsigned k = 0; k < n; k++)
            if (strncmp(samples[k], want, strlen(want)) == 0)
                sum = true;
        if (!sum || !count) {
            bad++;
            printf("# histogram series without %s: %s\n",
                   !sum ? "_sum" : "a _count equal to its +Inf bucket",
                   samples[i]);
        }
    }
    itest_check(series > 2 && bad == 0, "%u histogram series, each with "
                "+Inf, _sum and _count = +Inf (%u bad)", series, bad);
}

static void
im_rules(char *text)
{
    static struct im_family fam[1024];
    static char            *samples[IM_LINES_MAX];
    static char            *keys[IM_LINES_MAX];
    unsigned nf = 0, ns = 0, orphans = 0, dups = 0, bad_counters = 0;
    unsigned micro = 0, no_help = 0;
    char     help[IM_NAME_MAX] = "";

    for (char *line = strtok(text, "\n"); line != NULL;
         line = strtok(NULL, "\n")) {
        char name[IM_NAME_MAX], type[16];

        if (strstr(line, "microsecond") != NULL)
            micro++;
        if (sscanf(line, "# HELP %511s", name) == 1) {
            snprintf(help, sizeof(help), "%s", name);
            continue;
        }
        if (sscanf(line, "# TYPE %511s %15s", name, type) == 2) {
            if (nf < sizeof(fam) / sizeof(fam[0])) {
                snprintf(fam[nf].name, sizeof(fam[nf].name), "%s", name);
                snprintf(fam[nf].type, sizeof(fam[nf].type), "%s", type);
                fam[nf].help = strcmp(help, name) == 0;
                if (!fam[nf].help) {
                    no_help++;
                    printf("# no # HELP just before # TYPE %s\n", name);
                }
                nf++;
            }
            continue;
        }
        if (line[0] == '#')
            continue;
        if (ns < IM_LINES_MAX)
            samples[ns++] = line;
    }
    for (unsigned i = 0; i < ns; i++) {
        const struct im_family *f = im_family_of(fam, nf, samples[i]);
        size_t                  len = strcspn(samples[i], " ");

        if (f == NULL) {
            orphans++;
            printf("# sample of no family: %s\n", samples[i]);
        } else if (strcmp(f->type, "counter") == 0) {
            size_t fl = strlen(f->name);

            if (fl < 6 || strcmp(f->name + fl - 6, "_total") != 0)
                bad_counters++;
        }
        keys[i] = strndup(samples[i], len);
    }
    itest_check(ns > 100 && orphans == 0, "%u samples in %u families, each "
                "sample under its # TYPE (%u orphans)", ns, nf, orphans);
    qsort(keys, ns, sizeof(keys[0]), im_cmp);
    for (unsigned i = 1; i < ns; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0) {
            dups++;
            printf("# series twice: %s\n", keys[i]);
        }
    itest_check(no_help == 0, "every family has # HELP then # TYPE (%u "
                "without)", no_help);
    itest_check(dups == 0, "no series twice (%u)", dups);
    itest_check(bad_counters == 0, "every counter ends in _total (%u do not)",
                bad_counters);
    itest_check(micro == 0, "no microseconds: seconds are the base unit "
                "(%u lines)", micro);
    qsort(samples, ns, sizeof(samples[0]), im_cmp);
    im_histograms(samples, ns);
    for (unsigned i = 0; i < ns; i++)
        free(keys[i]);
}

int
main(int argc, char **argv)
{
    char    *prom = NULL, *copy;
    uint16_t oport, sport;
    pid_t    broker;
    int      code, rc;

    itest_init("integ_metrics");
    (void)argc;
    itest_guard(IM_WATCHDOG_S, im_log);
    ua_arena_init(&im_arena, malloc(IM_ARENA), IM_ARENA);
    itest_broker_bin(argv[0], im_bin, sizeof(im_bin));
    itest_tmpdir("uabroker-metrics", im_dir, sizeof(im_dir));
    snprintf(im_log, sizeof(im_log), "%s/broker.log", im_dir);

    broker = itest_broker_start(im_bin, 2, im_dir, im_log, NULL, IM_START_MS,
                                &oport, &sport);
    im_traffic(oport);
    /* The workers publish their counters as they go: give them a tick. */
    itest_sleep_ms(200);
    code = itest_http(sport, "GET", "/metrics", &prom);
    if (code != 200 || prom == NULL)
        itest_fatal("GET /metrics: %d", code);
    im_promtool(prom);
    itest_check(strstr(prom, "uabroker_loop_iteration_duration_seconds_sum{")
                    != NULL
                && strstr(prom, "uabroker_request_duration_seconds_sum{"
                          "worker=") != NULL
                && strstr(prom, "uabroker_loop_stall_max_seconds{") != NULL
                && strstr(prom, "uabroker_rsa_cpu_seconds_total{") != NULL,
                "the loop and request histograms, loop_stall_max_seconds, "
                "rsa_cpu_seconds_total are there");
    copy = strdup(prom);
    im_rules(copy);
    free(copy);
    free(prom);

    rc = itest_stop(broker, 10000);
    itest_check(rc == 0, "SIGTERM: the broker exits 0 (%d)", rc);
    free(im_arena.base);
    return itest_finish();
}
