/*
 * tests/integ/integ_hist_p13.c: Part 13 Annex A's example tables through
 * the whole server (issue 18): HistoryUpdate in, HistoryRead processed
 * out, on loopback.
 *
 *   1. starts `uabroker -w 1` with history.nodes = v1 v2, [history NAME]
 *      sections for v3, v4, v5 and a users file with an operator;
 *   2. as the operator, HistoryUpdate Insert loads Historian1's raw table
 *      into v1 and Historian2's into v2 (tests/vectors/aggregates_gen.h,
 *      generated from Part 13's CSV: times, values, status codes), each
 *      value GoodEntryInserted; DeleteRawModified removes what the
 *      historian stored of the live values after the tables (they would
 *      be the end bound);
 *   3. as the operator, UpdateStructureDataDetails Insert through each
 *      node's Annotations Property (Part 11 §5.1.2: ns=1;s=v1.Annotations)
 *      annotates every value of the tables that is not BadNoData (what
 *      Part 13's AnnotationCount tables count), each GoodEntryInserted;
 *   4. for every aggregate of the tables (both historians) a HistoryRead
 *      ReadProcessedDetails over 12:00:00 .. 12:01:40 with the table's
 *      interval and AggregateConfiguration, and every interval's value,
 *      timestamp and status code compared with the table, or with the
 *      row of tests/vectors/aggregate_deviations.h where the engine
 *      follows the spec text;
 *   5. v3 and v4 hold the same tables, their [history NAME] sections
 *      (broker/histcfg.h) give each its table's AggregateConfiguration
 *      (Historian2's and Historian1's): every table but AnnotationCount
 *      (v3 and v4 have no annotations) read again with
 *      useServerCapabilitiesDefaults (the request's own fields the
 *      opposite) equals Part 13's;
 *   6. v5 holds Historian1's table and is Stepped: ReadAtTime and
 *      Interpolative halfway between two values give the first of them,
 *      where v1 gives the line between them.
 *
 * Not compared: the Stepped cases (Part 13's tables have none).
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_hist_p13: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/aggregate.h"
#include "proto/arena.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/ihist.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"
#include "tests/vectors/aggregate_deviations.h"
#include "tests/vectors/aggregates_gen.h"

#define IP_WATCHDOG_S  120
#define IP_START_MS    30000
#define IP_TICKS_MS    INT64_C(10000)
/* 2001-01-01 12:00:00 UTC: the tables' 12:00:00, long before any live
 * value. */
#define IP_BASE        INT64_C(126228240000000000)
#define IP_TOL         0.0005
#define IP_ARENA       (4u << 20)

static struct ihist ip;

/* Load historian h's raw table into node, clear what follows it. */
static void
ip_load(struct uaconn *c, int h, const char *node)
{
    const struct aggv_raw *raw = h == 1 ? aggv_raw1 : aggv_raw2;
    size_t n = h == 1 ? sizeof aggv_raw1 / sizeof aggv_raw1[0]
                      : sizeof aggv_raw2 / sizeof aggv_raw2[0];
    struct ua_update_data_details       u;
    struct ua_delete_raw_modified_details del;
    struct ua_history_update_result     res;
    struct ua_datavalue                 dv[32];
    double                              v[32];
    ua_status                           s;
    int                                 ok = 0;

    for (size_t i = 0; i < n; i++) {
        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].value.ndims = -1;
        dv[i].mask = UA_DV_SOURCE_TS;
        dv[i].source_ts = IP_BASE + raw[i].ms * IP_TICKS_MS;
        if (raw[i].status != 0) {
            dv[i].mask |= UA_DV_STATUS;
            dv[i].status = raw[i].status;
        }
        if (raw[i].has_value) {
            v[i] = raw[i].value;
            dv[i].mask |= UA_DV_VALUE;
            ua_variant_set_scalar(&dv[i].value, &v[i], UA_BT_DOUBLE);
        }
    }
    memset(&u, 0, sizeof(u));
    u.node_id = ihist_node(node);
    u.perform_insert_replace = 1;       /* Insert */
    u.n_update_values = (int32_t)n;
    u.update_values = dv;
    ua_arena_reset(&ip.arena);
    s = ihist_update(c, &ip.arena, &ua_types[UA_TYPE_UPDATEDATADETAILS],
                     UA_NS0ID_UPDATEDATADETAILS_ENCODING_DEFAULTBINARY, &u,
                     &res);
    for (int32_t k = 0; s == UA_GOOD && k < res.n_operation_results; k++)
        ok += res.operation_results[k] == UA_GOOD_ENTRY_INSERTED;
    itest_check(s == UA_GOOD && res.status_code == UA_GOOD
                    && res.n_operation_results == (int32_t)n
                    && ok == (int)n,
                "Historian%d: %zu raw values inserted into %s (call 0x%08X, "
                "result 0x%08X, %d GoodEntryInserted)", h, n, node, s,
                res.status_code, ok);
    memset(&del, 0, sizeof(del));
    del.node_id = ihist_node(node);
    del.start_time = IP_BASE + AGGV_END_MS * IP_TICKS_MS;
    del.end_time = IP_BASE + INT64_C(40) * 365 * 86400 * 10000000;
    ua_arena_reset(&ip.arena);
    s = ihist_update(c, &ip.arena,
                     &ua_types[UA_TYPE_DELETERAWMODIFIEDDETAILS],
                     UA_NS0ID_DELETERAWMODIFIEDDETAILS_ENCODING_DEFAULTBINARY,
                     &del, &res);
    itest_check(s == UA_GOOD && (res.status_code & 0xC0000000u) == 0,
                "Historian%d: the live values of %s after the table deleted "
                "(call 0x%08X, result 0x%08X)", h, node, s, res.status_code);
}

/* Annotate every value of historian h's table but the BadNoData ones
 * (Part 13's AnnotationCount tables count those) through the node's
 * Annotations Property. */
static void
ip_annotate(struct uaconn *c, int h)
{
    const struct aggv_raw *raw = h == 1 ? aggv_raw1 : aggv_raw2;
    size_t n = h == 1 ? sizeof aggv_raw1 / sizeof aggv_raw1[0]
                      : sizeof aggv_raw2 / sizeof aggv_raw2[0];
    struct ua_update_structure_data_details u;
    struct ua_history_update_result         res;
    struct ua_datavalue                     dv[32];
    struct ua_extobj                        eo[32];
    struct ua_annotation                    an[32];
    ua_status                               s;
    int                                     k = 0, ok = 0;

    for (size_t i = 0; i < n; i++) {
        if (raw[i].status == UA_BAD_NO_DATA)
            continue;
        memset(&an[k], 0, sizeof(an[k]));
        an[k].message = ua_string_from("checked");
        an[k].user_name = ua_string_from("op");
        an[k].annotation_time = IP_BASE + INT64_C(86400) * 10000000;
        memset(&eo[k], 0, sizeof(eo[k]));
        eo[k].encoding = UA_EO_DECODED;
        eo[k].type = &ua_types[UA_TYPE_ANNOTATION];
        eo[k].obj = &an[k];
        memset(&dv[k], 0, sizeof(dv[k]));
        dv[k].value.ndims = -1;
        dv[k].mask = UA_DV_VALUE | UA_DV_SOURCE_TS;
        dv[k].source_ts = IP_BASE + raw[i].ms * IP_TICKS_MS;
        ua_variant_set_scalar(&dv[k].value, &eo[k], UA_BT_EXTENSIONOBJECT);
        k++;
    }
    memset(&u, 0, sizeof(u));
    u.node_id.ns = 1;
    u.node_id.idtype = UA_IDTYPE_STRING;
    u.node_id.id.str = ua_string_from(h == 1 ? "v1.Annotations"
                                             : "v2.Annotations");
    u.perform_insert_replace = 1;       /* Insert */
    u.n_update_values = k;
    u.update_values = dv;
    ua_arena_reset(&ip.arena);
    s = ihist_update(c, &ip.arena,
                     &ua_types[UA_TYPE_UPDATESTRUCTUREDATADETAILS],
                     UA_NS0ID_UPDATESTRUCTUREDATADETAILS_ENCODING_DEFAULTBINARY,
                     &u, &res);
    for (int32_t i = 0; s == UA_GOOD && i < res.n_operation_results; i++)
        if (res.operation_results[i] == UA_GOOD_ENTRY_INSERTED)
            ok++;
        else
            fprintf(stderr, "# annotation %d: 0x%08X\n", i,
                    res.operation_results[i]);
    itest_check(s == UA_GOOD && res.status_code == UA_GOOD
                    && res.n_operation_results == k && ok == k,
                "Historian%d: %d annotations inserted through its "
                "Annotations Property (call 0x%08X, result 0x%08X, %d "
                "GoodEntryInserted)", h, k, s, res.status_code, ok);
}

/* One table through ReadProcessed of node: the rows that differ; with
 * defaults, the request asks for the node's AggregateConfiguration
 * (useServerCapabilitiesDefaults) instead of giving the table's. */
static int
ip_case(struct uaconn *c, const struct aggv_case *k, const char *node,
        bool defaults)
{
    const struct ua_agg_info         *info = ua_aggregate_by_name(k->aggregate);
    struct ua_read_processed_details  d;
    struct ua_history_read_result     r;
    struct ua_nodeid                  id = ihist_node(node);
    const struct ua_history_data     *hd;
    struct ua_nodeid                  agg;
    ua_status                         s;
    int                               bad = 0;

    if (info == NULL)
        return 1;
    memset(&agg, 0, sizeof(agg));
    agg.idtype = UA_IDTYPE_NUMERIC;
    agg.id.num = info->nodeid;
    memset(&d, 0, sizeof(d));
    d.start_time = IP_BASE + AGGV_START_MS * IP_TICKS_MS;
    d.end_time = IP_BASE + AGGV_END_MS * IP_TICKS_MS;
    d.processing_interval = k->interval_ms;
    d.n_aggregate_type = 1;
    d.aggregate_type = &agg;
    d.aggregate_configuration.treat_uncertain_as_bad =
        k->treat_uncertain_as_bad;
    d.aggregate_configuration.percent_data_bad = (uint8_t)k->percent_bad;
    d.aggregate_configuration.percent_data_good = (uint8_t)k->percent_good;
    d.aggregate_configuration.use_sloped_extrapolation =
        k->use_sloped_extrapolation;
    if (defaults) {
        /* The opposite of the table's: only the node's may give it. */
        memset(&d.aggregate_configuration, 0,
               sizeof(d.aggregate_configuration));
        d.aggregate_configuration.use_server_capabilities_defaults = true;
        d.aggregate_configuration.treat_uncertain_as_bad =
            !k->treat_uncertain_as_bad;
        d.aggregate_configuration.use_sloped_extrapolation =
            !k->use_sloped_extrapolation;
        d.aggregate_configuration.percent_data_bad = 50;
        d.aggregate_configuration.percent_data_good = 50;
    }
    ua_arena_reset(&ip.arena);
    s = ihist_read(c, &ip.arena, &id, &ua_types[UA_TYPE_READPROCESSEDDETAILS],
                   UA_NS0ID_READPROCESSEDDETAILS_ENCODING_DEFAULTBINARY, &d,
                   UA_TIMESTAMPSTORETURN_SOURCE, NULL, false, &r);
    if (s != UA_GOOD || r.history_data.encoding != UA_EO_DECODED
        || r.history_data.obj == NULL) {
        fprintf(stderr, "# %s H%d: 0x%08X\n", k->aggregate, k->historian,
                s);
        return 1;
    }
    hd = r.history_data.obj;
    if ((size_t)hd->n_data_values != k->n_rows) {
        fprintf(stderr, "# %s H%d: %d intervals, the table %zu\n",
                k->aggregate, k->historian, hd->n_data_values, k->n_rows);
        return 1;
    }
    for (size_t i = 0; i < k->n_rows; i++) {
        const struct aggv_row   *e = &k->rows[i];
        const struct ua_datavalue *o = &hd->data_values[i];
        int64_t                  ims = (int64_t)((double)i * k->interval_ms);
        const struct deviation  *dv = deviation_find(k->aggregate,
                                                     k->historian, ims);
        bool                     hv = dv != NULL ? dv->has_value
                                                 : e->has_value;
        double                   want = dv != NULL ? dv->value : e->value;
        uint32_t                 st = dv != NULL ? dv->status : e->status;
        int64_t                  ms = dv != NULL ? dv->ms : e->ms;
        bool                     ohv = (o->mask & UA_DV_VALUE) != 0;
        uint32_t                 ost = (o->mask & UA_DV_STATUS) ? o->status
                                                                : 0;
        double                   got = 0;

        if (ohv && o->value.data != NULL) {
            if (o->value.type == UA_BT_DOUBLE)
                got = *(const double *)o->value.data;
            else if (o->value.type == UA_BT_INT32)
                got = *(const int32_t *)o->value.data;
            else if (o->value.type == UA_BT_STATUSCODE)
                got = *(const uint32_t *)o->value.data;
        }
        if (o->source_ts != IP_BASE + ms * IP_TICKS_MS || ost != st
            || ohv != hv || (hv && fabs(got - want) > IP_TOL)) {
            fprintf(stderr, "# %s H%d row %zu: want %lld %s%.4f 0x%08X, "
                    "got %lld %s%.4f 0x%08X\n", k->aggregate, k->historian,
                    i, (long long)ms, hv ? "" : "(none) ", want, st,
                    (long long)((o->source_ts - IP_BASE) / IP_TICKS_MS),
                    ohv ? "" : "(none) ", got, ost);
            bad++;
        }
    }
    return bad;
}

/* One HistoryRead of details d (type t, encoding enc) of node: its one
 * result's first DataValue into *out; the call's or the result's status. */
static ua_status
ip_read1(struct uaconn *c, const struct ua_type *t, uint32_t enc, void *d,
         const char *node, struct ua_datavalue *out)
{
    struct ua_history_read_result  r;
    struct ua_nodeid               id = ihist_node(node);
    const struct ua_history_data  *hd;
    ua_status                      s;

    ua_arena_reset(&ip.arena);
    s = ihist_read(c, &ip.arena, &id, t, enc, d,
                   UA_TIMESTAMPSTORETURN_SOURCE, NULL, false, &r);
    if (s != UA_GOOD)
        return s;
    hd = r.history_data.obj;
    if (r.history_data.encoding != UA_EO_DECODED || hd == NULL
        || hd->n_data_values < 1)
        return UA_BAD_NO_DATA;
    *out = hd->data_values[0];
    return UA_GOOD;
}

/* The Double value of dv, or NAN. */
static double
ip_double(const struct ua_datavalue *dv)
{
    if (!(dv->mask & UA_DV_VALUE) || dv->value.data == NULL
        || dv->value.type != UA_BT_DOUBLE)
        return NAN;
    return *(const double *)dv->value.data;
}

/*
 * A Stepped node (v5, Historian1's table, its [history NAME] section
 * says stepped = true) against the same values on v1: halfway between
 * two Good values of different value, ReadAtTime and the Interpolative
 * aggregate give v1 the line between them, v5 the first one (Part 11
 * §6.4.5, Part 13 §3.1.8: the value holds until the next).
 */
static void
ip_stepped(struct uaconn *c)
{
    const struct aggv_raw           *raw = aggv_raw1;
    size_t                           n = sizeof aggv_raw1 / sizeof *raw;
    struct ua_read_at_time_details   at;
    struct ua_read_processed_details pd;
    struct ua_datavalue              dv;
    struct ua_nodeid                 agg;
    int64_t                          t;
    double                           a = 0, b = 0, got[4];
    ua_status                        st[4];
    size_t                           i;

    for (i = 0; i + 1 < n; i++)
        if (raw[i].has_value && raw[i + 1].has_value && raw[i].status == 0
            && raw[i + 1].status == 0 && raw[i].value != raw[i + 1].value)
            break;
    if (i + 1 >= n) {
        itest_check(false, "Historian1 has two Good values in a row");
        return;
    }
    a = raw[i].value;
    b = raw[i + 1].value;
    t = IP_BASE + (raw[i].ms + raw[i + 1].ms) / 2 * IP_TICKS_MS;
    memset(&at, 0, sizeof(at));
    at.n_req_times = 1;
    at.req_times = &t;
    at.use_simple_bounds = true;
    memset(&agg, 0, sizeof(agg));
    agg.idtype = UA_IDTYPE_NUMERIC;
    agg.id.num = UA_NS0ID_AGGREGATEFUNCTION_INTERPOLATIVE;
    memset(&pd, 0, sizeof(pd));
    pd.start_time = t;
    pd.end_time = t + 1000 * IP_TICKS_MS;
    pd.processing_interval = 1000.0;
    pd.n_aggregate_type = 1;
    pd.aggregate_type = &agg;
    pd.aggregate_configuration.use_server_capabilities_defaults = true;
    for (int k = 0; k < 4; k++) {
        const char *node = k % 2 == 0 ? "v1" : "v5";

        memset(&dv, 0, sizeof(dv));
        st[k] = k < 2
            ? ip_read1(c, &ua_types[UA_TYPE_READATTIMEDETAILS],
                       UA_NS0ID_READATTIMEDETAILS_ENCODING_DEFAULTBINARY,
                       &at, node, &dv)
            : ip_read1(c, &ua_types[UA_TYPE_READPROCESSEDDETAILS],
                       UA_NS0ID_READPROCESSEDDETAILS_ENCODING_DEFAULTBINARY,
                       &pd, node, &dv);
        got[k] = ip_double(&dv);
    }
    itest_check(st[0] == UA_GOOD && fabs(got[0] - (a + b) / 2) < IP_TOL
                    && st[1] == UA_GOOD && fabs(got[1] - a) < IP_TOL,
                "ReadAtTime halfway between %.3f and %.3f: v1 (sloped) "
                "%.4f, v5 (Stepped) %.4f (0x%08X 0x%08X)", a, b, got[0],
                got[1], st[0], st[1]);
    itest_check(st[2] == UA_GOOD && fabs(got[2] - (a + b) / 2) < IP_TOL
                    && st[3] == UA_GOOD && fabs(got[3] - a) < IP_TOL,
                "Interpolative from halfway between %.3f and %.3f: v1 "
                "(sloped) %.4f, v5 (Stepped) %.4f (0x%08X 0x%08X)", a, b,
                got[2], got[3], st[2], st[3]);
}

int
main(int argc, char **argv)
{
    const char *extra[] = {
        "-c", NULL,
        "--vars", "10",
        "--set", "history.nodes=ns=1;s=v1 ns=1;s=v2",
        "--set", "history.flush_ms=20",
        /* The tables are of 2001: no retention may drop them. */
        "--set", "history.retention_s=0", NULL
    };
    struct uaconn c;
    char          path[PATH_MAX + 16];
    uint16_t      port, sport;
    size_t        ncase = sizeof aggv_cases / sizeof aggv_cases[0];
    unsigned      run = 0, skipped = 0, bad_cases = 0;
    int           bad = 0;
    ua_status     s;
    FILE         *f;

    (void)argc;
    itest_init("integ_hist_p13");
    ihist_setup(&ip, argv[0], "uabroker-p13", IP_WATCHDOG_S, IP_ARENA);
    /* 1. A users file with an operator, the broker. */
    ihist_users(&ip, false);
    /* v3 and v4 with the AggregateConfiguration of Historian2's and
     * Historian1's tables, v5 Stepped (broker/histcfg.h). */
    snprintf(path, sizeof(path), "%s/history.conf", ip.dir);
    f = fopen(path, "w");
    if (f == NULL)
        itest_fatal("cannot write %s", path);
    fprintf(f, "[history H2]\nnode = ns=1;s=v3\n"
            "treat_uncertain_as_bad = true\nuse_sloped_extrapolation = true\n"
            "\n[history H1]\nnode = ns=1;s=v4\n"
            "treat_uncertain_as_bad = false\n"
            "use_sloped_extrapolation = false\n"
            "\n[history Stepped]\nnode = ns=1;s=v5\nstepped = true\n");
    fclose(f);
    extra[1] = path;
    (void)itest_broker_start(ip.bin, 1, ip.dir, ip.log,
                             (const char *const *)extra, IP_START_MS, &port,
                             &sport);
    uaconn_init(&c);
    c.user = IHIST_OP;
    c.password = IHIST_OP_PW;
    s = uaconn_start(&c, "127.0.0.1", port);
    itest_check(s == UA_GOOD, "the operator's session: 0x%08X", s);
    if (s != UA_GOOD)
        return itest_finish();
    /* The historian has stored the start values; the tables go before
     * them. */
    itest_sleep_ms(500);
    /* 2. The raw tables in. */
    ip_load(&c, 1, "v1");
    ip_load(&c, 2, "v2");
    ip_load(&c, 1, "v4");
    ip_load(&c, 2, "v3");
    ip_load(&c, 1, "v5");
    /* 3. The annotations AnnotationCount counts. */
    ip_annotate(&c, 1);
    ip_annotate(&c, 2);
    /* 4. Every table out. */
    for (size_t i = 0; i < ncase; i++) {
        const struct aggv_case   *k = &aggv_cases[i];
        const struct ua_agg_info *info = ua_aggregate_by_name(k->aggregate);
        int                       b;

        if (k->stepped || info == NULL) {
            skipped++;
            continue;
        }
        b = ip_case(&c, k, k->historian == 1 ? "v1" : "v2", false);
        run++;
        bad += b;
        bad_cases += b != 0;
    }
    printf("# %u tables read through the server, %u skipped\n", run,
           skipped);
    itest_check(run + skipped == ncase && run >= 2 * UA_AGG_COUNT_
                    && bad == 0,
                "every aggregate over Historian1 and Historian2 through "
                "HistoryRead processed equals Part 13's table (or its "
                "listed deviation): %u tables, %d rows in %u tables "
                "differ", run, bad, bad_cases);
    /* 5. The same tables from v4 and v3, which have their table's
     * AggregateConfiguration: the request asks for the node's. */
    run = 0;
    bad = 0;
    bad_cases = 0;
    for (size_t i = 0; i < ncase; i++) {
        const struct aggv_case   *k = &aggv_cases[i];
        const struct ua_agg_info *info = ua_aggregate_by_name(k->aggregate);
        int                       b;

        if (k->stepped || info == NULL
            || info->agg == UA_AGG_ANNOTATIONCOUNT)
            continue;
        b = ip_case(&c, k, k->historian == 1 ? "v4" : "v3", true);
        run++;
        bad += b;
        bad_cases += b != 0;
    }
    itest_check(run >= 2 * UA_AGG_COUNT_ - 2 && bad == 0,
                "with useServerCapabilitiesDefaults every table equals "
                "Part 13's from the node's own AggregateConfiguration "
                "(v3: Historian2's, v4: Historian1's, the request's fields "
                "the opposite): %u tables, %d rows in %u tables differ",
                run, bad, bad_cases);
    /* 6. A Stepped node. */
    ip_stepped(&c);
    uaconn_close_session(&c);
    uaconn_close(&c);
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    ihist_teardown(&ip);
    return itest_finish();
}
