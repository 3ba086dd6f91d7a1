/*
 * tests/integ/integ_hist_collect.c: the data collection rules of Part 11
 * §5.2.2 through the whole server (issue 18): what the historian stores
 * of the values it gets, per variable's HistoricalDataConfiguration.
 *
 *   1. starts `uabroker -w 1` with [history NAME] sections (broker/
 *      histcfg.h): v1 MinTimeInterval 5000 ms, v2 ExceptionDeviation 5
 *      (absolute), v3 ExceptionDeviation 10 percent of value, v4
 *      MaxTimeInterval 1000 ms, v5 none;
 *   2. feeds 20 values to v1, v2 and v5 and 6 to v3 (`uabroker feed`)
 *      with source timestamps a second apart (from 10 s after now, later
 *      than the start values);
 *   3. reads them back raw (HistoryRead): v1 every 5 s only (4 of 20),
 *      v2 only the values more than 5 from the last stored (4), v3 more
 *      than 10 % of it (3), v5 all 20;
 *   4. v4, never written: after 3.5 s its value was stored again about
 *      every second (MaxTimeInterval), not only once at the start;
 *   5. StartOfArchive and StartOfOnlineArchive of v5's HA Configuration
 *      (read with the Read service) are the time of v5's oldest sample
 *      (its first value of a raw read over all time);
 *   6. /stats `history` `values_filtered` and /metrics
 *      `uabroker_history_values_filtered_total` count every value the
 *      rules did not store: the values fed to v1, v2 and v3 less those
 *      step 3 read back.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_hist_collect: N
 * passed, M failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IC_WATCHDOG_S  60
#define IC_START_MS    30000
#define IC_SEC         INT64_C(10000000)
#define IC_EPOCH       INT64_C(116444736000000000)
#define IC_ARENA       (1u << 20)
#define IC_N           20

static char            ic_dir[PATH_MAX];
static char            ic_log[PATH_MAX + 16];
static char            ic_bin[PATH_MAX];
static struct ua_arena ic_arena;
static uint8_t        *ic_arena_buf;

static int64_t
ic_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return IC_EPOCH + (int64_t)ts.tv_sec * IC_SEC + ts.tv_nsec / 100;
}

/* Feed value d of ns=1;s=id with source time t (whole seconds) through
 * `uabroker feed` (broker/feedline.h): a client Write may not set a
 * SourceTimestamp of these variables.  0, or -1. */
static int
ic_feed(const char *id, double d, int64_t t)
{
    char       cmd[PATH_MAX * 2 + 64], ts[32];
    time_t     sec = (time_t)((t - IC_EPOCH) / IC_SEC);
    struct tm  tm;
    FILE      *p;

    gmtime_r(&sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(cmd, sizeof(cmd), "'%s' --runtime-dir '%s' feed - >/dev/null",
             ic_bin, ic_dir);
    p = popen(cmd, "w");
    if (p == NULL)
        return -1;
    if ((id[strlen(id) - 1] - '0') % 2 == 0)
        fprintf(p, "ns=1;s=%s=%d;ts=%s\n", id, (int)d, ts);
    else
        fprintf(p, "ns=1;s=%s=%.3f;ts=%s\n", id, d, ts);
    return pclose(p) == 0 ? 0 : -1;
}

/* HistoryRead raw of ns=1;s=id over [from, to]: the values into *out
 * (in ic_arena), their number, or -1. */
static int
ic_read(struct uaconn *c, const char *id, int64_t from, int64_t to,
        const struct ua_datavalue **out)
{
    struct ua_read_raw_modified_details d;
    struct ua_history_read_value_id     v;
    struct ua_history_read_request      req;
    struct ua_history_read_response     resp;
    const struct ua_history_data       *hd;
    ua_status                           s;

    memset(&d, 0, sizeof(d));
    d.start_time = from;
    d.end_time = to;
    memset(&v, 0, sizeof(v));
    v.node_id = ua_nodeid_str(1, id);
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
    ua_arena_reset(&ic_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_HISTORYREADREQUEST], &req,
                    &ua_types[UA_TYPE_HISTORYREADRESPONSE], &resp,
                    &ic_arena);
    if (s != UA_GOOD || resp.n_results != 1
        || (resp.results[0].status_code & 0x80000000u) != 0)
        return -1;
    hd = resp.results[0].history_data.obj;
    if (hd == NULL)
        return 0;
    *out = hd->data_values;
    return hd->n_data_values;
}

/* The Value of ns=1;s=id (Read service): its DateTime, or -1. */
static int64_t
ic_read_time(struct uaconn *c, const char *id)
{
    struct ua_read_request  req;
    struct ua_read_response resp;
    struct ua_read_value_id rv;
    ua_status               s;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_str(1, id);
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(&ic_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &ic_arena);
    if (s != UA_GOOD || resp.n_results != 1
        || !(resp.results[0].mask & UA_DV_VALUE)
        || resp.results[0].value.type != UA_BT_DATETIME
        || resp.results[0].value.data == NULL)
        return -1;
    return *(const int64_t *)resp.results[0].value.data;
}

/* The values of a read as numbers, "a b c". */
static void
ic_list(const struct ua_datavalue *dv, int n, char *out, size_t cap)
{
    size_t at = 0;

    out[0] = '\0';
    for (int i = 0; i < n && at + 24 < cap; i++) {
        double d = -1;

        if (dv[i].value.type == UA_BT_DOUBLE)
            d = *(const double *)dv[i].value.data;
        else if (dv[i].value.type == UA_BT_INT32)
            d = *(const int32_t *)dv[i].value.data;
        at += (size_t)snprintf(out + at, cap - at, "%s%g", i ? " " : "", d);
    }
}

int
main(int argc, char **argv)
{
    const char *extra[] = {
        "-c", NULL,
        "--vars", "10",
        "--set", "history.flush_ms=20", NULL
    };
    static const struct {
        const char *id;
        double      v[IC_N];
        int         want;
        const char *what;
    } w[] = {
        { "v1", { 0 }, 4, "MinTimeInterval 5000 ms: the values at 0, 5, 10 "
          "and 15 s of 20 a second apart" },
        { "v2", { 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008,
                  1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017,
                  1018, 1019 }, 4,
          "ExceptionDeviation 5 (absolute): 1000 1006 1012 1018" },
        { "v3", { 1000, 1050, 1090, 1110, 1200, 1230 }, 3,
          "ExceptionDeviation 10 % of value: 1000 1110 1230" },
        { "v5", { 0 }, IC_N, "no rules: all 20" },
    };
    const struct ua_datavalue *dv = NULL;
    struct uaconn              c;
    char                       path[PATH_MAX + 16], list[1024];
    uint16_t                   port, sport;
    int64_t                    t0, start;
    ua_status                  s;
    FILE                      *f;
    int                        n, nfed[8] = { 0 }, dropped = 0;

    (void)argc;
    itest_init("integ_hist_collect");
    itest_broker_bin(argv[0], ic_bin, sizeof(ic_bin));
    itest_guard(IC_WATCHDOG_S, ic_log);
    itest_tmpdir("uabroker-collect", ic_dir, sizeof(ic_dir));
    snprintf(ic_log, sizeof(ic_log), "%s/broker.log", ic_dir);
    ic_arena_buf = malloc(IC_ARENA);
    if (ic_arena_buf == NULL)
        itest_fatal("out of memory");
    ua_arena_init(&ic_arena, ic_arena_buf, IC_ARENA);
    /* 1. The rules, the broker. */
    snprintf(path, sizeof(path), "%s/history.conf", ic_dir);
    f = fopen(path, "w");
    if (f == NULL)
        itest_fatal("cannot write %s", path);
    fprintf(f, "[history Min]\nnode = ns=1;s=v1\nmin_time_interval_ms = 5000\n"
            "\n[history Dev]\nnode = ns=1;s=v2\nexception_deviation = 5\n"
            "\n[history Pct]\nnode = ns=1;s=v3\nexception_deviation = 10\n"
            "exception_deviation_format = percent_of_value\n"
            "\n[history Max]\nnode = ns=1;s=v4\nmax_time_interval_ms = 1000\n"
            "\n[history None]\nnode = ns=1;s=v5\n");
    fclose(f);
    extra[1] = path;
    start = ic_now();
    (void)itest_broker_start(ic_bin, 1, ic_dir, ic_log,
                             (const char *const *)extra, IC_START_MS, &port,
                             &sport);
    uaconn_init(&c);
    s = uaconn_start(&c, "127.0.0.1", port);
    itest_check(s == UA_GOOD, "a session: 0x%08X", s);
    if (s != UA_GOOD)
        return itest_finish();
    /* The historian's start values first. */
    itest_sleep_ms(500);
    /* 2. Twenty values each, a second apart by their source timestamps. */
    t0 = (ic_now() / IC_SEC + 10) * IC_SEC;
    for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++) {
        int nv = w[k].v[1] != 0 ? 0 : IC_N;
        int bad = 0;

        if (nv == 0)
            while (nv < IC_N && w[k].v[nv] != 0)
                nv++;
        for (int i = 0; i < nv; i++) {
            double d = w[k].v[1] != 0 ? w[k].v[i] : 100 + i;

            if (ic_feed(w[k].id, d, t0 + i * IC_SEC) != 0)
                bad++;
        }
        itest_check(bad == 0, "%d values fed to %s: %d refused", nv,
                    w[k].id, bad);
        nfed[k] = nv;
    }
    itest_sleep_ms(500);
    /* 3. What was stored. */
    for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++) {
        n = ic_read(&c, w[k].id, t0, t0 + 30 * IC_SEC, &dv);
        ic_list(dv, n, list, sizeof(list));
        itest_check(n == w[k].want, "%s %s: %d stored (%s)", w[k].id,
                    w[k].what, n, list);
        if (strcmp(w[k].id, "v5") != 0)     /* v5 has no rules */
            dropped += nfed[k] - n;
    }
    /* 4. v4 stored again every MaxTimeInterval. */
    itest_sleep_ms(3500);
    n = ic_read(&c, "v4", start - IC_SEC, ic_now() + IC_SEC, &dv);
    {
        int64_t gap_min = INT64_MAX;

        for (int i = 1; i < n; i++)
            if (dv[i].source_ts - dv[i - 1].source_ts < gap_min)
                gap_min = dv[i].source_ts - dv[i - 1].source_ts;
        itest_check(n >= 4 && gap_min >= IC_SEC * 9 / 10,
                    "v4 MaxTimeInterval 1000 ms, never written: its value "
                    "stored again each second (%d values over 4 s, the "
                    "closest %.2f s apart)", n,
                    n > 1 ? (double)gap_min / IC_SEC : 0.0);
    }
    /* 5. The oldest sample, read on demand. */
    n = ic_read(&c, "v5", 1, ic_now() + 60 * IC_SEC, &dv);
    {
        int64_t first = n > 0 ? dv[0].source_ts : -2;
        int64_t a = ic_read_time(&c, "v5.HAConfiguration.StartOfArchive");
        int64_t o = ic_read_time(&c,
                                 "v5.HAConfiguration.StartOfOnlineArchive");

        itest_check(n > IC_N && a == first && o == first,
                    "StartOfArchive and StartOfOnlineArchive of v5 are its "
                    "oldest sample's time (%lld, %lld; the first of %d "
                    "values %lld)", (long long)a, (long long)o, n,
                    (long long)first);
    }
    /* 6. The values the rules did not store, counted. */
    {
        char       *body = NULL;
        const char *hs;
        uint64_t    filtered = UINT64_MAX;
        int         st = itest_http(sport, "GET", "/stats", &body);

        hs = body != NULL ? itest_json_find(body, "history") : NULL;
        if (hs != NULL)
            (void)itest_json_u64(hs, "values_filtered", &filtered);
        itest_check(st == 200 && dropped > 0
                        && filtered == (uint64_t)dropped,
                    "/stats history values_filtered %llu: the %d values fed "
                    "to v1, v2 and v3 that were not stored",
                    (unsigned long long)filtered, dropped);
        free(body);
        body = NULL;
        st = itest_http(sport, "GET", "/metrics", &body);
        snprintf(list, sizeof(list),
                 "uabroker_history_values_filtered_total %d\n", dropped);
        itest_check(st == 200 && body != NULL && strstr(body, list) != NULL,
                    "/metrics: %.*s", (int)strcspn(list, "\n"), list);
        free(body);
    }
    uaconn_close_session(&c);
    uaconn_close(&c);
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    free(ic_arena_buf);
    return itest_finish();
}
