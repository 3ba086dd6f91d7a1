/*
 * tests/integ/integ_histevent.c: event history (issue 18; Part 11 §6.5.2
 * ReadEventDetails) through the whole server, on loopback.
 *
 *   1. `uabroker -t`: history.map_mb under twice history.max_mb plus
 *      history.event_max_mb refused (exit 2, the message names the key);
 *   2. starts `uabroker -w 1` with an alarm on Demo.Analog (which makes it
 *      an event notifier under the Server),
 *      history.max_return_events = 5, history.max_event_scan = 7 and no
 *      age limit for the events;
 *   3. `uabroker feed` raises 12 events of Demo.Analog and 3 of Demo (no
 *      notifier) at given times; HistoryRead ReadEventDetails on the
 *      Server returns all 15 with their fields (Severity, Message,
 *      1:Temp, EventId), oldest first, in pages of 5 (the limit) through
 *      continuation points; Demo.Analog returns its 12 only; newest first
 *      with numValuesPerNode 3; the instant of one event; a where clause
 *      (Severity >= 200) the three of Demo, in three pages of at most 7
 *      events examined; one that matches nothing (Severity >= 1000): no
 *      event, in pages of 7, 7 and 1 examined, the first two with a
 *      continuation point; a continuation point released
 *      is refused after; MaxReturnEventValues and
 *      AccessHistoryEventsCapability read as configured;
 *   4. bad input: a Variable and an Object that is no notifier
 *      (BadHistoryOperationUnsupported), an unknown node
 *      (BadNodeIdUnknown), no times (BadHistoryOperationInvalid), no
 *      select clause (BadEventFilterInvalid), a where clause with an
 *      unknown operator (BadMonitoredItemFilterInvalid);
 *   5. /stats "history" and /metrics count the events stored; `uabroker
 *      history events` exports them as CSV (the Server's 15, oldest first,
 *      with their Time, EventType, SourceNode, Severity, Message and
 *      EventId; Demo.Analog's 12; a time range; a bad NodeId or time
 *      exit 2) and `history list` counts them;
 *   6. SIGTERM and a new broker on the same runtime directory: the events
 *      are still there;
 *   7. history.events = false: the historian keeps values only (events
 *      fed, nothing breaks), the Server has no event history
 *      (BadHistoryOperationUnsupported), AccessHistoryEventsCapability
 *      false.
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

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define HE_WATCHDOG_S 120
#define HE_START_MS   30000
#define HE_ARENA      (4u << 20)
/* 2026-01-01T00:00:00Z as a DateTime. */
#define HE_T0         134116992000000000ll
#define HE_SEC        10000000ll
#define HE_NSEL       4

static char            he_dir[PATH_MAX];
static char            he_log[PATH_MAX + 16];
static char            he_bin[PATH_MAX];
static struct ua_arena he_arena;

/* `uabroker ARGS...` to its end, its output in out: exit status. */
static int
he_run(char *out, size_t cap, const char *const *args)
{
    char       log[PATH_MAX + 16];
    char      *av[64];
    size_t     len = 0, k = 0;
    static int runs;
    int        st;
    pid_t      pid;

    av[k++] = he_bin;
    for (; args[k - 1] != NULL && k < 63; k++)
        av[k] = (char *)args[k - 1];
    av[k] = NULL;
    snprintf(log, sizeof(log), "%s/run-%d.out", he_dir, runs++);
    pid = itest_spawn(log, av);
    st = itest_wait(pid);
    out[0] = '\0';
    if (itest_read_file(log, (uint8_t *)out, cap, &len) == 0)
        out[len] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The select clauses: Severity, Message, 1:Temp, EventId. */
static struct ua_simple_attribute_operand he_ops[HE_NSEL];
static struct ua_qualifiedname            he_qn[HE_NSEL];

static void
he_select(struct ua_event_filter *ef)
{
    static const char *const names[HE_NSEL] = { "Severity", "Message",
                                                "Temp", "EventId" };

    for (int i = 0; i < HE_NSEL; i++) {
        memset(&he_ops[i], 0, sizeof(he_ops[i]));
        he_qn[i].ns = i == 2 ? 1 : 0;
        he_qn[i].name = ua_string_from(names[i]);
        he_ops[i].type_definition_id =
            ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
        he_ops[i].n_browse_path = 1;
        he_ops[i].browse_path = &he_qn[i];
        he_ops[i].attribute_id = UA_ATTR_VALUE;
        he_ops[i].index_range.len = -1;
    }
    memset(ef, 0, sizeof(*ef));
    ef->n_select_clauses = HE_NSEL;
    ef->select_clauses = he_ops;
}

/* One HistoryRead of ReadEventDetails d on node with continuation point
 * cp (NULL: none); the result (in he_arena), or NULL on a service error
 * (*svc says which). */
static struct ua_history_read_result *
he_read(struct uaconn *c, const struct ua_nodeid *node,
        const struct ua_read_event_details *d, const struct ua_string *cp,
        bool release, ua_status *svc)
{
    struct ua_history_read_request  req;
    struct ua_history_read_response resp;
    static struct ua_history_read_value_id v;
    ua_status                       s;

    memset(&v, 0, sizeof(v));
    v.node_id = *node;
    v.index_range.len = -1;
    v.data_encoding.name.len = -1;
    if (cp != NULL)
        v.continuation_point = *cp;
    else
        v.continuation_point.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.history_read_details.type_id =
        ua_nodeid_num(0, UA_NS0ID_READEVENTDETAILS_ENCODING_DEFAULTBINARY);
    req.history_read_details.encoding = UA_EO_DECODED;
    req.history_read_details.type = &ua_types[UA_TYPE_READEVENTDETAILS];
    req.history_read_details.obj = (void *)d;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_SOURCE;
    req.release_continuation_points = release;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &v;
    s = uaconn_call(c, &ua_types[UA_TYPE_HISTORYREADREQUEST], &req,
                    &ua_types[UA_TYPE_HISTORYREADRESPONSE], &resp,
                    &he_arena);
    *svc = s != UA_GOOD ? s : resp.response_header.service_result;
    if (*svc != UA_GOOD || resp.n_results != 1)
        return NULL;
    return &resp.results[0];
}

/* The events of a result: their Severity into sev (at most max, the
 * fields checked); the count, -1 when the shape is wrong. */
static int
he_events(const struct ua_history_read_result *r, uint16_t *sev, int max)
{
    const struct ua_history_event *h;

    if (r->history_data.encoding != UA_EO_DECODED
        || r->history_data.type != &ua_types[UA_TYPE_HISTORYEVENT]
        || r->history_data.obj == NULL)
        return r->status_code == UA_GOOD_NO_DATA ? 0 : -1;
    h = r->history_data.obj;
    for (int32_t i = 0; i < h->n_events && i < max; i++) {
        const struct ua_history_event_field_list *e = &h->events[i];
        const struct ua_localizedtext            *m;
        char                                      want[32];
        uint16_t                                  s;

        if (e->n_event_fields != HE_NSEL
            || e->event_fields[0].type != UA_BT_UINT16
            || e->event_fields[1].type != UA_BT_LOCALIZEDTEXT
            || e->event_fields[2].type != UA_BT_DOUBLE
            || e->event_fields[3].type != UA_BT_BYTESTRING) {
            printf("# event %d: %d fields, types %u %u %u %u\n", (int)i,
                   (int)e->n_event_fields,
                   e->n_event_fields > 0 ? e->event_fields[0].type : 0u,
                   e->n_event_fields > 1 ? e->event_fields[1].type : 0u,
                   e->n_event_fields > 2 ? e->event_fields[2].type : 0u,
                   e->n_event_fields > 3 ? e->event_fields[3].type : 0u);
            return -1;
        }
        memcpy(&s, e->event_fields[0].data, 2);
        m = e->event_fields[1].data;
        snprintf(want, sizeof(want), "e%u", (unsigned)s);
        if (m->text.len != (int32_t)strlen(want)
            || memcmp(m->text.data, want, strlen(want)) != 0
            || *(const double *)e->event_fields[2].data != (double)s + 0.5
            || ((const struct ua_string *)e->event_fields[3].data)->len
                   != 16)
            return -1;
        sev[i] = s;
    }
    return h->n_events;
}

/*
 * Every page of node's events (d, pages of at most 5): severities into
 * sev in the order returned; the count, -1 on an error.
 */
static int
he_all(struct uaconn *c, const struct ua_nodeid *node,
       const struct ua_read_event_details *d, uint16_t *sev, int max,
       int *pages)
{
    struct ua_string cp = { -1, NULL };
    static uint8_t   cpb[64];
    int              total = 0;

    *pages = 0;
    for (;;) {
        struct ua_history_read_result *r;
        ua_status                      svc;
        int                            n;

        ua_arena_reset(&he_arena);
        r = he_read(c, node, d, cp.len > 0 ? &cp : NULL, false, &svc);
        if (r == NULL || (r->status_code != UA_GOOD
                          && r->status_code != UA_GOOD_NO_DATA))
            return -1;
        n = he_events(r, sev + total, max - total);
        if (n < 0 || n > 5)
            return -1;
        total += n;
        (*pages)++;
        if (r->continuation_point.len <= 0)
            return total;
        if ((size_t)r->continuation_point.len > sizeof(cpb))
            return -1;
        memcpy(cpb, r->continuation_point.data,
               (size_t)r->continuation_point.len);
        cp.len = r->continuation_point.len;
        cp.data = cpb;
    }
}

/* A scalar of the Server object's HistoryServerCapabilities. */
static bool
he_read_u32(struct uaconn *c, uint32_t id, uint8_t bt, uint32_t *out)
{
    struct ua_read_request  req;
    struct ua_read_response resp;
    struct ua_read_value_id v;

    memset(&v, 0, sizeof(v));
    v.node_id = ua_nodeid_num(0, id);
    v.attribute_id = UA_ATTR_VALUE;
    v.index_range.len = -1;
    v.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &v;
    ua_arena_reset(&he_arena);
    if (uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &he_arena)
            != UA_GOOD
        || resp.n_results != 1 || resp.results[0].value.type != bt)
        return false;
    *out = bt == UA_BT_BOOLEAN ? *(const bool *)resp.results[0].value.data
                               : *(const uint32_t *)
                                     resp.results[0].value.data;
    return true;
}

static void
he_feed(void)
{
    static char lines[15][160];
    const char *av[24];
    char        out[4096];
    size_t      k = 0;
    int         rc;

    av[k++] = "--runtime-dir";
    av[k++] = he_dir;
    av[k++] = "feed";
    /* Demo.Analog's at second 1..12 (severity 101..112), Demo's at
     * 2.5, 5.5, 8.5 (severity 201..203); 1:Temp is severity + 0.5. */
    for (int i = 0; i < 15; i++) {
        int sev = i < 12 ? 101 + i : 201 + (i - 12);
        int ms = i < 12 ? (i + 1) * 1000 : 2500 + (i - 12) * 3000;

        snprintf(lines[i], sizeof(lines[i]),
                 "event=ns=1;s=%s;severity=%d;message=\"e%d\";"
                 "time=2026-01-01T00:00:%02d.%03dZ;1:Temp=%g",
                 i < 12 ? "Demo.Analog" : "Demo", sev, sev, ms / 1000,
                 ms % 1000, sev + 0.5);
        av[k++] = lines[i];
    }
    av[k] = NULL;
    rc = he_run(out, sizeof(out), av);
    itest_check(rc == 0, "uabroker feed: 15 events (exit %d): %s", rc, out);
}

int
main(int argc, char **argv)
{
    static char                  out[65536];
    static uint16_t              sev[64];
    char                         conf[PATH_MAX + 16];
    const char                  *extra[16];
    const char                   cf[] =
        "[alarm Hot]\ntype = exclusive_limit\ninput = ns=1;s=v1\n"
        "source = ns=1;s=Demo.Analog\nhigh = 1000000\nseverity = 500\n"
        "message = hot\n";
    struct ua_read_event_details d;
    struct ua_nodeid             server = ua_nodeid_num(0, UA_NS0ID_SERVER);
    struct ua_nodeid             analog = ua_nodeid_str(1, "Demo.Analog");
    struct uaconn                c;
    uint16_t                     port, sport;
    pid_t                        broker;
    int                          n, pages, rc;
    ua_status                    svc;
    bool                         ok;

    (void)argc;
    itest_init("integ_histevent");
    itest_broker_bin(argv[0], he_bin, sizeof(he_bin));
    itest_guard(HE_WATCHDOG_S, he_log);
    itest_tmpdir("uabroker-histev", he_dir, sizeof(he_dir));
    snprintf(he_log, sizeof(he_log), "%s/broker.log", he_dir);
    snprintf(conf, sizeof(conf), "%s/alarms.conf", he_dir);
    itest_write_file(conf, (const uint8_t *)cf, sizeof(cf) - 1);
    ua_arena_init(&he_arena, malloc(HE_ARENA), HE_ARENA);

    /* 1. The map must hold values and events twice. */
    {
        const char *const a[] = { "-t", "--runtime-dir", he_dir, "--set",
                                  "history.max_mb=1000", "--set",
                                  "history.event_max_mb=100", "--set",
                                  "history.map_mb=2100", NULL };

        rc = he_run(out, sizeof(out), a);
        itest_check(rc == 2 && strstr(out, "history.event_max_mb") != NULL,
                    "-t: map_mb 2100 under 2 x (1000 + 100) refused (exit "
                    "%d): %s", rc, out);
    }

    /* 2. The broker. */
    {
        size_t k = 0;

        extra[k++] = "-c";
        extra[k++] = conf;
        extra[k++] = "--vars";
        extra[k++] = "10";
        extra[k++] = "--set";
        extra[k++] = "history.flush_ms=20";
        extra[k++] = "--set";
        extra[k++] = "history.max_return_events=5";
        /* At most 7 events examined per notifier per request. */
        extra[k++] = "--set";
        extra[k++] = "history.max_event_scan=7";
        /* The events' times are in the past: no age limit. */
        extra[k++] = "--set";
        extra[k++] = "history.event_retention_s=0";
        extra[k] = NULL;
    }
    broker = itest_broker_start(he_bin, 1, he_dir, he_log, extra,
                                HE_START_MS, &port, &sport);
    itest_sleep_ms(500);
    he_feed();
    itest_sleep_ms(500);
    uaconn_init(&c);
    if (uaconn_start(&c, "127.0.0.1", port) != UA_GOOD)
        itest_fatal("connect");

    /* 3. Reads. */
    {
        uint32_t max = 0, cap = 0;

        ok = he_read_u32(&c,
                 UA_NS0ID_HISTORYSERVERCAPABILITIES_MAXRETURNEVENTVALUES,
                 UA_BT_UINT32, &max)
             && he_read_u32(&c,
                 UA_NS0ID_HISTORYSERVERCAPABILITIES_ACCESSHISTORYEVENTSCAPABILITY,
                 UA_BT_BOOLEAN, &cap);
        itest_check(ok && max == 5 && cap == 1, "MaxReturnEventValues %u, "
                    "AccessHistoryEventsCapability %u", max, cap);
    }
    memset(&d, 0, sizeof(d));
    he_select(&d.filter);
    d.start_time = HE_T0;
    d.end_time = HE_T0 + 3600 * HE_SEC;
    n = he_all(&c, &server, &d, sev, 64, &pages);
    ok = n == 15 && pages == 3;
    for (int i = 1; ok && i < n; i++) {
        /* In time order: 101 102 201 103 104 105 202 ... */
        static const uint16_t want[15] = { 101, 102, 201, 103, 104, 105,
                                           202, 106, 107, 108, 203, 109,
                                           110, 111, 112 };

        ok = sev[i] == want[i] && sev[0] == want[0];
    }
    itest_check(ok, "the Server: every event with its fields, oldest "
                "first, in %d pages of at most 5 (%d events)", pages, n);
    n = he_all(&c, &analog, &d, sev, 64, &pages);
    ok = n == 12;
    for (int i = 0; ok && i < n; i++)
        ok = sev[i] == 101 + i;
    itest_check(ok && pages == 3, "Demo.Analog (a notifier): its 12 events "
                "only (%d, %d pages)", n, pages);
    {
        struct ua_read_event_details r = d;
        struct ua_history_read_result *res;
        struct ua_string               cp;
        uint8_t                        cpb[64];

        r.start_time = 0;
        r.num_values_per_node = 3;
        ua_arena_reset(&he_arena);
        res = he_read(&c, &analog, &r, NULL, false, &svc);
        n = res != NULL ? he_events(res, sev, 64) : -1;
        itest_check(n == 3 && sev[0] == 112 && sev[2] == 110
                        && res->continuation_point.len > 0,
                    "newest first from endTime, numValuesPerNode 3: %d "
                    "events, a continuation point", n);
        if (res != NULL && res->continuation_point.len > 0
            && (size_t)res->continuation_point.len <= sizeof(cpb)) {
            memcpy(cpb, res->continuation_point.data,
                   (size_t)res->continuation_point.len);
            cp.len = res->continuation_point.len;
            cp.data = cpb;
            ua_arena_reset(&he_arena);
            res = he_read(&c, &analog, &r, &cp, true, &svc);
            itest_check(res != NULL && res->status_code == UA_GOOD,
                        "releaseContinuationPoints: Good");
            ua_arena_reset(&he_arena);
            res = he_read(&c, &analog, &r, &cp, false, &svc);
            itest_check(res != NULL && res->status_code
                                           == UA_BAD_CONTINUATION_POINT_INVALID,
                        "the released point: BadContinuationPointInvalid "
                        "(0x%08X)", res != NULL ? res->status_code : svc);
        }
        r = d;
        r.start_time = r.end_time = HE_T0 + 55 * HE_SEC / 10;
        ua_arena_reset(&he_arena);
        res = he_read(&c, &server, &r, NULL, false, &svc);
        n = res != NULL ? he_events(res, sev, 64) : -1;
        itest_check(n == 1 && sev[0] == 202, "startTime = endTime: the "
                    "event at that instant (%d)", n);
        r.start_time = r.end_time = HE_T0 + 56 * HE_SEC / 10;
        ua_arena_reset(&he_arena);
        res = he_read(&c, &server, &r, NULL, false, &svc);
        itest_check(res != NULL && res->status_code == UA_GOOD_NO_DATA,
                    "an instant without events: GoodNoData");
    }
    {
        /* Severity >= 200: Demo's three. */
        static struct ua_content_filter_element el;
        static struct ua_extobj                 opnd[2];
        static struct ua_simple_attribute_operand sao;
        static struct ua_literal_operand          lit;
        static struct ua_qualifiedname            qn;
        static uint16_t                           two = 200;
        struct ua_read_event_details              r = d;

        qn.ns = 0;
        qn.name = ua_string_from("Severity");
        memset(&sao, 0, sizeof(sao));
        sao.type_definition_id = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
        sao.n_browse_path = 1;
        sao.browse_path = &qn;
        sao.attribute_id = UA_ATTR_VALUE;
        sao.index_range.len = -1;
        memset(&lit, 0, sizeof(lit));
        ua_variant_set_scalar(&lit.value, &two, UA_BT_UINT16);
        opnd[0].type_id = ua_nodeid_num(
            0, UA_NS0ID_SIMPLEATTRIBUTEOPERAND_ENCODING_DEFAULTBINARY);
        opnd[0].encoding = UA_EO_DECODED;
        opnd[0].type = &ua_types[UA_TYPE_SIMPLEATTRIBUTEOPERAND];
        opnd[0].obj = &sao;
        opnd[1].type_id = ua_nodeid_num(
            0, UA_NS0ID_LITERALOPERAND_ENCODING_DEFAULTBINARY);
        opnd[1].encoding = UA_EO_DECODED;
        opnd[1].type = &ua_types[UA_TYPE_LITERALOPERAND];
        opnd[1].obj = &lit;
        el.filter_operator = UA_FILTEROPERATOR_GREATERTHANOREQUAL;
        el.n_filter_operands = 2;
        el.filter_operands = opnd;
        r.filter.where_clause.n_elements = 1;
        r.filter.where_clause.elements = &el;
        n = he_all(&c, &server, &r, sev, 64, &pages);
        itest_check(n == 3 && sev[0] == 201 && sev[1] == 202
                        && sev[2] == 203,
                    "a where clause (Severity >= 200): Demo's three (%d)",
                    n);
        /* 15 events, 7 examined a page: 201 202 | 203 | none. */
        itest_check(pages == 3, "history.max_event_scan 7: the where "
                    "clause's read in 3 pages (%d)", pages);
        two = 1000;
        n = he_all(&c, &server, &r, sev, 64, &pages);
        itest_check(n == 0 && pages == 3, "a where clause that matches "
                    "nothing: no event, 3 pages of at most 7 examined (%d "
                    "events, %d pages)", n, pages);
        two = 200;

        /* 4. Bad input. */
        el.filter_operator = 99;
        ua_arena_reset(&he_arena);
        {
            struct ua_history_read_result *res =
                he_read(&c, &server, &r, NULL, false, &svc);

            itest_check(res != NULL && res->status_code
                                           == UA_BAD_MONITORED_ITEM_FILTER_INVALID,
                        "a where clause with operator 99: "
                        "BadMonitoredItemFilterInvalid (0x%08X)",
                        res != NULL ? res->status_code : svc);
        }
    }
    {
        struct ua_read_event_details   r = d;
        struct ua_history_read_result *res;
        struct ua_nodeid               v1 = ua_nodeid_str(1, "v1");
        struct ua_nodeid               demo = ua_nodeid_str(1, "Demo");
        struct ua_nodeid               none = ua_nodeid_str(1, "nosuch");

        ua_arena_reset(&he_arena);
        res = he_read(&c, &v1, &d, NULL, false, &svc);
        itest_check(res != NULL && res->status_code
                                       == UA_BAD_HISTORY_OPERATION_UNSUPPORTED,
                    "a Variable: BadHistoryOperationUnsupported");
        ua_arena_reset(&he_arena);
        res = he_read(&c, &demo, &d, NULL, false, &svc);
        itest_check(res != NULL && res->status_code
                                       == UA_BAD_HISTORY_OPERATION_UNSUPPORTED,
                    "an Object that is no notifier: "
                    "BadHistoryOperationUnsupported");
        ua_arena_reset(&he_arena);
        res = he_read(&c, &none, &d, NULL, false, &svc);
        itest_check(res != NULL
                        && res->status_code == UA_BAD_NODE_ID_UNKNOWN,
                    "an unknown node: BadNodeIdUnknown");
        r.start_time = r.end_time = 0;
        r.num_values_per_node = 10;
        ua_arena_reset(&he_arena);
        res = he_read(&c, &server, &r, NULL, false, &svc);
        itest_check(res == NULL && svc == UA_BAD_HISTORY_OPERATION_INVALID,
                    "no startTime and no endTime: "
                    "BadHistoryOperationInvalid (0x%08X)", svc);
        r = d;
        r.filter.n_select_clauses = 0;
        ua_arena_reset(&he_arena);
        res = he_read(&c, &server, &r, NULL, false, &svc);
        itest_check(res != NULL
                        && res->status_code == UA_BAD_EVENT_FILTER_INVALID,
                    "no select clause: BadEventFilterInvalid");
    }

    /* 5. /stats and /metrics. */
    {
        char       *body = NULL;
        uint64_t    stored = 0, events = 0;
        const char *hs;

        rc = itest_http(sport, "GET", "/stats", &body);
        hs = body != NULL ? itest_json_find(body, "history") : NULL;
        ok = rc == 200 && hs != NULL
             && itest_json_u64(hs, "events_stored", &stored)
             && itest_json_u64(hs, "events", &events);
        itest_check(ok && stored >= 15 && events >= 15,
                    "/stats history: events_stored %llu, events %llu",
                    (unsigned long long)stored, (unsigned long long)events);
        free(body);
        body = NULL;
        rc = itest_http(sport, "GET", "/metrics", &body);
        itest_check(rc == 200 && body != NULL
                        && strstr(body, "uabroker_history_events_stored_total")
                               != NULL,
                    "/metrics has uabroker_history_events_stored_total");
        free(body);
    }
    {
        const char *const all[] = { "--runtime-dir", he_dir, "history",
                                    "events", "i=2253", NULL };
        const char *const an[] = { "--runtime-dir", he_dir, "history",
                                   "events", "ns=1;s=Demo.Analog",
                                   "2026-01-01T00:00:02Z",
                                   "2026-01-01T00:00:04Z", NULL };
        const char *const bad[] = { "--runtime-dir", he_dir, "history",
                                    "events", "i=2253", "yesterday", NULL };
        const char *const list[] = { "--runtime-dir", he_dir, "history",
                                     "list", NULL };
        const char *p, *l1, *l3;
        int         lines = 0;

        rc = he_run(out, sizeof(out), all);
        for (p = strchr(out, '\n'); p != NULL; p = strchr(p + 1, '\n'))
            lines++;
        /* The header, then 15 rows; 201 (Demo's, at 2.5 s) is the third. */
        l1 = strchr(out, '\n');
        l3 = l1 != NULL ? strchr(l1 + 1, '\n') : NULL;
        l3 = l3 != NULL ? strchr(l3 + 1, '\n') : NULL;
        ok = rc == 0
             && strncmp(out, "time,event_type,source_node,severity,message,"
                        "event_id\n", 51) == 0
             && lines == 16 && l3 != NULL
             && strncmp(l3 + 1, "2026-01-01T00:00:02.5", 21) == 0
             && strstr(l3, ",ns=1;s=Demo,201,e201,") != NULL
             && strstr(out, "2026-01-01T00:00:01") != NULL
             && strstr(out, ",ns=1;s=Demo.Analog,112,e112,") != NULL;
        if (ok) {
            /* Each row ends in a 16-byte EventId, 32 hex digits. */
            const char *nl = strchr(l3 + 1, '\n');
            const char *comma = nl;

            while (comma != NULL && comma > l3 && *comma != ',')
                comma--;
            ok = nl != NULL && comma != NULL && *comma == ','
                 && nl - comma - 1 == 32;
        }
        itest_check(ok, "history events i=2253: the 15 events as CSV, "
                    "oldest first, with their fields (exit %d):\n%s", rc,
                    out);
        rc = he_run(out, sizeof(out), an);
        lines = 0;
        for (p = strchr(out, '\n'); p != NULL; p = strchr(p + 1, '\n'))
            lines++;
        itest_check(rc == 0 && lines == 4
                        && strstr(out, ",102,e102,") != NULL
                        && strstr(out, ",104,e104,") != NULL
                        && strstr(out, "e201") == NULL,
                    "history events Demo.Analog 2 s to 4 s: its 3 (exit "
                    "%d):\n%s", rc, out);
        rc = he_run(out, sizeof(out), bad);
        itest_check(rc == 2, "history events with a bad time: exit 2 (%d)",
                    rc);
        rc = he_run(out, sizeof(out), list);
        itest_check(rc == 0 && strstr(out, "\nevents count=15 ") != NULL,
                    "history list counts the events (exit %d): %s", rc,
                    out);
    }
    uaconn_clear(&c);

    /* 6. A restart keeps them. */
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    broker = itest_broker_start(he_bin, 1, he_dir, he_log, extra,
                                HE_START_MS, &port, &sport);
    uaconn_init(&c);
    if (uaconn_start(&c, "127.0.0.1", port) != UA_GOOD)
        itest_fatal("connect");
    n = he_all(&c, &server, &d, sev, 64, &pages);
    itest_check(n == 15, "after a restart the 15 events are still there "
                "(%d)", n);
    uaconn_clear(&c);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");

    /* 7. history.events = false: values only. */
    {
        const char *const off[] = { "--set", "history.events=false",
                                    "--set", "history.flush_ms=20", NULL };
        struct ua_history_read_result *res;
        uint32_t                       cap = 1;

        broker = itest_broker_start(he_bin, 1, he_dir, he_log, off,
                                    HE_START_MS, &port, &sport);
        he_feed();
        itest_sleep_ms(300);
        uaconn_init(&c);
        if (uaconn_start(&c, "127.0.0.1", port) != UA_GOOD)
            itest_fatal("connect");
        ua_arena_reset(&he_arena);
        res = he_read(&c, &server, &d, NULL, false, &svc);
        itest_check(res != NULL && res->status_code
                                       == UA_BAD_HISTORY_OPERATION_UNSUPPORTED,
                    "history.events = false: the Server has no event "
                    "history (0x%08X)", res != NULL ? res->status_code : svc);
        itest_check(he_read_u32(&c,
                        UA_NS0ID_HISTORYSERVERCAPABILITIES_ACCESSHISTORYEVENTSCAPABILITY,
                        UA_BT_BOOLEAN, &cap) && cap == 0,
                    "AccessHistoryEventsCapability false");
        uaconn_clear(&c);
        itest_check(itest_stop(broker, 5000) == 0,
                    "SIGTERM: the broker (and its historian) exit 0");
        {
            size_t len = 0;

            out[0] = '\0';
            if (itest_read_file(he_log, (uint8_t *)out, sizeof(out) - 1,
                                &len) == 0)
                out[len] = '\0';
            itest_check(strstr(out, "exited on signal") == NULL,
                        "no process died (broker log)");
        }
    }
    return itest_finish();
}
