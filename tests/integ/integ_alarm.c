/*
 * tests/integ/integ_alarm.c: configured alarms end to end, on loopback
 * (docs/operations.md "Alarms", broker/alarmnode.h).
 *
 *   1. `uabroker -t` refuses an alarm whose input is not in the address
 *      space, with the file and line (exit 2);
 *   2. starts `uabroker -w 2 -c FILE` with an exclusive limit alarm
 *      Level1 on ns=1;s=v1 (Double; high_high 90, high 80, low 20,
 *      low_low 10, severity 500, high_high_severity 900, deadband 0.5)
 *      and an off-normal alarm Pump on ns=1;s=v2 (Int32, normal 2);
 *   3. a client monitors the Server object's events (EventType,
 *      ConditionName, Severity, ActiveState/Id, AckedState/Id,
 *      LimitState/CurrentState, Retain, EventId, and the ConditionId);
 *   4. Writes of v1 by another client (on either worker): 85 raises an
 *      ExclusiveLimitAlarmType event (active, High, unacknowledged,
 *      retained, severity 500, ConditionId ns=1;s=Alarms.Level1); 95
 *      HighHigh with severity 900; 89.7 (inside HighHigh's deadband)
 *      nothing; 50 inactive but still retained (unacknowledged); 55
 *      nothing;
 *   5. a Read of the condition's variables agrees with the last event
 *      (ActiveState/Id false, Retain true, the same EventId);
 *   6. ConditionRefresh: RefreshStart, Level1 (retained, its last
 *      EventId), RefreshEnd; then v2 = 0: an OffNormalAlarmType event for
 *      Pump;
 *   7. the methods, run by the broker: Acknowledge as anonymous (with
 *      security.anonymous_write) BadUserAccessDenied; as the operator
 *      "op" (a users file made by `uabroker passwd`) with a stale
 *      EventId BadEventIdUnknown, with the last one Good (an event:
 *      acknowledged, no longer retained), again BadConditionBranch-
 *      AlreadyAcked; ClientUserId "op" and the Comment in a Read;
 *      Disable (an event), again BadConditionAlreadyDisabled, a crossing
 *      while disabled raises nothing, Enable reports it (active);
 *      TimedShelve beyond MaxTimeShelved BadShelvingTimeOutOfRange, of
 *      1 s Good (SuppressedOrShelved true), over by itself within 3 s;
 *      Unshelve when unshelved BadConditionNotShelved;
 *   8. /stats "alarms" and /metrics: 2 configured, both active and
 *      unacknowledged (Level1 High, Pump), one in the medium and one in
 *      the high severity band, the methods counted; the interop
 *      model's alarm instances (tests/interop/nodesets/alarms.xml):
 *      from_nodesets 1, nodeset_refused 1;
 *  8b. an external alarm Remote set by `uabroker feed
 *      'alarm=Remote;active=true;severity=800;message=...'`: an
 *      AlarmConditionType event; the same line again: none; the refusals
 *      (a limit alarm's name, a bad active=, severity=0);
 *   9. the state across a restart: Pump commented and one-shot shelved,
 *      then SIGTERM (the broker exits 0, alarms.state written) and the
 *      broker started again on the same runtime directory: Level1 still
 *      active High, unacknowledged, with the same EventId; Pump still
 *      active, unacknowledged, shelved, with its comment and ClientUserId
 *      "op"; ConditionRefresh lists the three;
 *  10. a damaged alarms.state: reported with its line, and the
 *      conditions start from their inputs' values (Pump's v2 is back at
 *      its normal 2: inactive, not shelved); SIGTERM: exit 0.
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
#include "tests/lib/itevent.h"
#include "tests/lib/uaconn.h"

#define IA_WATCHDOG_S 120
#define IA_START_MS   30000
#define IA_ARENA      (1u << 20)
#define IA_WAIT_MS    5000
#define IA_NSEL       10

static char            ia_dir[PATH_MAX];
static char            ia_log[PATH_MAX + 16];
static char            ia_bin[PATH_MAX];
static char            ia_conf[PATH_MAX + 16];
static struct ua_arena ia_arena;
static uint32_t        ia_sub_id;

static const char ia_alarms[] =
    "[alarm Level1]\n"
    "type = exclusive_limit\n"
    "input = ns=1;s=v1\n"
    "high_high = 90\nhigh = 80\nlow = 20\nlow_low = 10\n"
    "severity = 500\nhigh_high_severity = 900\n"
    "message = Level 1 out of range\n"
    "deadband = 0.5\n"
    "max_time_shelved = 60\n"
    "[alarm Pump]\n"
    "type = off_normal\n"
    "input = ns=1;s=v2\n"
    "normal = 2\n"
    "severity = 700\n"
    "[alarm Remote]\n"
    "type = external\n"
    "source = ns=1;s=Demo.Vars\n"
    "severity = 300\n";

/* One event's fields, copied out of the arena. */
struct ia_ev {
    uint32_t type;
    char     name[32];
    uint16_t sev;
    bool     active, acked, retain;
    char     limit[16];
    uint8_t  id[16];
    char     cond[48];              /* the ConditionId's string id */
    char     msg[48];
};

static void
ia_str(const struct ua_string *s, char *out, size_t cap)
{
    size_t n = s->len > 0 ? (size_t)s->len : 0;

    if (n >= cap)
        n = cap - 1;
    memcpy(out, n != 0 ? s->data : (const uint8_t *)"", n);
    out[n] = '\0';
}

/* The event item's select clauses (their order is ia_decode's). */
static const struct itev_sel ia_sel[IA_NSEL] = {
    { { "EventType", NULL }, 0, false },
    { { "ConditionName", NULL }, 0, false },
    { { "Severity", NULL }, 0, false },
    { { "ActiveState", "Id" }, 0, false },
    { { "AckedState", "Id" }, 0, false },
    { { "LimitState", "CurrentState" }, 0, false },
    { { "Retain", NULL }, 0, false },
    { { "EventId", NULL }, 0, false },
    { { NULL, NULL }, 0, true },             /* the ConditionId */
    { { "Message", NULL }, 0, false },
};

/* The event item (one at a time; its acknowledgement carried from call
 * to call). */
static struct itev ia_item;

/* A subscription with one event item on the Server. */
static void
ia_subscribe(struct uaconn *c)
{
    itev_filter(&ia_item, ia_sel, IA_NSEL);
    itev_subscribe(&ia_item, c, &ia_arena, 9);
    ia_sub_id = ia_item.sub_id;
}

/* itev_decode_fn: the fields into ((struct ia_ev *)arg)[slot]. */
static void
ia_decode(void *arg, int slot, const struct ua_event_field_list *f)
{
    const struct ua_variant *v = f->event_fields;
    struct ia_ev            *e = (struct ia_ev *)arg + slot;

    memset(e, 0, sizeof(*e));
    if (f->n_event_fields != IA_NSEL)
        return;
    if (v[0].type == UA_BT_NODEID)
        e->type = ((struct ua_nodeid *)v[0].data)->id.num;
    if (v[1].type == UA_BT_STRING)
        ia_str(v[1].data, e->name, sizeof(e->name));
    if (v[2].type == UA_BT_UINT16)
        e->sev = *(uint16_t *)v[2].data;
    if (v[3].type == UA_BT_BOOLEAN)
        e->active = *(bool *)v[3].data;
    if (v[4].type == UA_BT_BOOLEAN)
        e->acked = *(bool *)v[4].data;
    if (v[5].type == UA_BT_LOCALIZEDTEXT)
        ia_str(&((struct ua_localizedtext *)v[5].data)->text, e->limit,
               sizeof(e->limit));
    if (v[6].type == UA_BT_BOOLEAN)
        e->retain = *(bool *)v[6].data;
    if (v[7].type == UA_BT_BYTESTRING
        && ((struct ua_string *)v[7].data)->len == 16)
        memcpy(e->id, ((struct ua_string *)v[7].data)->data, 16);
    if (v[8].type == UA_BT_NODEID
        && ((struct ua_nodeid *)v[8].data)->idtype == UA_IDTYPE_STRING)
        ia_str(&((struct ua_nodeid *)v[8].data)->id.str, e->cond,
               sizeof(e->cond));
    if (v[9].type == UA_BT_LOCALIZEDTEXT)
        ia_str(&((struct ua_localizedtext *)v[9].data)->text, e->msg,
               sizeof(e->msg));
}

/* Publish on c until n events came or ms passed; the number taken. */
static int
ia_events(struct uaconn *c, struct ia_ev *out, int max, int n, unsigned ms)
{
    return itev_publish(&ia_item, c, &ia_arena, max, n, ms, ia_decode, out);
}

/* Write a scalar to ns=1;s=id; the operation's status. */
static ua_status
ia_write(struct uaconn *c, const char *id, uint8_t bt, const void *val)
{
    struct ua_write_request  req;
    struct ua_write_response resp;
    struct ua_write_value    wv;
    ua_status                s;

    memset(&wv, 0, sizeof(wv));
    wv.node_id = ua_nodeid_str(1, id);
    wv.attribute_id = UA_ATTR_VALUE;
    wv.index_range.len = -1;
    wv.value.mask = UA_DV_VALUE;
    ua_variant_set_scalar(&wv.value.value, (void *)(uintptr_t)val, bt);
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_write = 1;
    req.nodes_to_write = &wv;
    ua_arena_reset(&ia_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_WRITEREQUEST], &req,
                    &ua_types[UA_TYPE_WRITERESPONSE], &resp, &ia_arena);
    if (s != UA_GOOD)
        return s;
    return resp.n_results == 1 ? resp.results[0] : UA_BAD_UNEXPECTED_ERROR;
}

static ua_status
ia_write_double(struct uaconn *c, double d)
{
    return ia_write(c, "v1", UA_BT_DOUBLE, &d);
}

/* Read the Values of n ns=1 string NodeIds into out (in ia_arena). */
static ua_status
ia_read(struct uaconn *c, const char *const *ids, int n,
        struct ua_datavalue **out)
{
    struct ua_read_request  req;
    struct ua_read_response resp;
    struct ua_read_value_id rv[8];
    ua_status               s;

    memset(rv, 0, sizeof(rv));
    for (int i = 0; i < n; i++) {
        rv[i].node_id = ua_nodeid_str(1, ids[i]);
        rv[i].attribute_id = UA_ATTR_VALUE;
        rv[i].index_range.len = -1;
        rv[i].data_encoding.name.len = -1;
    }
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_read = n;
    req.nodes_to_read = rv;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    ua_arena_reset(&ia_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &ia_arena);
    if (s != UA_GOOD || resp.n_results != n)
        return s != UA_GOOD ? s : UA_BAD_UNEXPECTED_ERROR;
    *out = resp.results;
    return UA_GOOD;
}

/* Call method (ns=0 id) on ns=1;s=object (NULL: ConditionType) with n
 * arguments: the result. */
static ua_status
ia_call(struct uaconn *c, const char *object, uint32_t method,
        struct ua_variant *args, int32_t n)
{
    struct ua_call_request        req;
    struct ua_call_response       resp;
    struct ua_call_method_request m;
    ua_status                     s;

    memset(&m, 0, sizeof(m));
    m.object_id = object != NULL ? ua_nodeid_str(1, object)
                                 : ua_nodeid_num(0, UA_NS0ID_CONDITIONTYPE);
    m.method_id = ua_nodeid_num(0, method);
    m.n_input_arguments = n;
    m.input_arguments = args;
    memset(&req, 0, sizeof(req));
    req.n_methods_to_call = 1;
    req.methods_to_call = &m;
    ua_arena_reset(&ia_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CALLREQUEST], &req,
                    &ua_types[UA_TYPE_CALLRESPONSE], &resp, &ia_arena);
    if (s != UA_GOOD)
        return s;
    return resp.n_results == 1 ? resp.results[0].status_code
                               : UA_BAD_UNEXPECTED_ERROR;
}

/* Acknowledge (or another (EventId, Comment) method) of Level1. */
static ua_status
ia_ack(struct uaconn *c, uint32_t method, const uint8_t id[16],
       const char *comment)
{
    static struct ua_string        eid;
    static struct ua_localizedtext lt;
    struct ua_variant              a[2];

    eid.len = 16;
    eid.data = (uint8_t *)(uintptr_t)id;
    memset(&lt, 0, sizeof(lt));
    lt.mask = UA_LT_TEXT;
    lt.locale.len = -1;
    lt.text = ua_string_from(comment);
    ua_variant_set_scalar(&a[0], &eid, UA_BT_BYTESTRING);
    ua_variant_set_scalar(&a[1], &lt, UA_BT_LOCALIZEDTEXT);
    return ia_call(c, "Alarms.Level1", method, a, 2);
}

static ua_status
ia_shelve(struct uaconn *c, double ms)
{
    struct ua_variant a;

    ua_variant_set_scalar(&a, &ms, UA_BT_DOUBLE);
    return ia_call(c, "Alarms.Level1.ShelvingState",
                   UA_NS0ID_SHELVEDSTATEMACHINETYPE_TIMEDSHELVE, &a, 1);
}

/* The Boolean Value of ns=1;s=id, -1 when it is not one. */
static int
ia_read_bool(struct uaconn *c, const char *id)
{
    struct ua_datavalue *dv;

    if (ia_read(c, &id, 1, &dv) != UA_GOOD
        || dv[0].value.type != UA_BT_BOOLEAN)
        return -1;
    return *(bool *)dv[0].value.data ? 1 : 0;
}

/* `uabroker --runtime-dir dir passwd op operator` with its password. */
static void
ia_passwd(const char *dir, const char *pw)
{
    int   p[2], status;
    pid_t pid;

    if (pipe(p) != 0)
        itest_fatal("pipe");
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        dup2(p[0], STDIN_FILENO);
        close(p[1]);
        execl(ia_bin, ia_bin, "--runtime-dir", dir, "passwd", "op",
              "operator", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    if (write(p[1], pw, strlen(pw)) != (ssize_t)strlen(pw)
        || write(p[1], "\n", 1) != 1)
        itest_fatal("passwd: write");
    close(p[1]);
    if (pid == -1 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0)
        itest_fatal("uabroker passwd op operator failed");
}

/* Run argv; its output in out[cap]; its exit status (-1: none). */
static int
ia_run(char *const argv[], char *out, size_t cap)
{
    int     p[2], status;
    pid_t   pid;
    size_t  len = 0;
    ssize_t r;

    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    while (len + 1 < cap && (r = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(p[0]);
    if (pid == -1 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* `uabroker feed LINE`: its exit status, its report in out. */
static int
ia_feed(const char *line, char *out, size_t cap)
{
    char *const argv[] = { ia_bin, "--runtime-dir", ia_dir, "feed",
                           (char *)(uintptr_t)line, NULL };

    return ia_run(argv, out, cap);
}

/* `uabroker -t -c path`: its exit status, its output in out. */
static int
ia_check_conf(const char *path, char *out, size_t cap)
{
    int     p[2], status;
    pid_t   pid;
    size_t  len = 0;
    ssize_t r;

    if (pipe(p) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        dup2(p[1], STDOUT_FILENO);
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        execl(ia_bin, ia_bin, "-t", "-c", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    while (len + 1 < cap && (r = read(p[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(p[0]);
    if (pid == -1 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
    struct uaconn        sub, wr;
    struct ia_ev         ev[16];
    struct ua_datavalue *dv = NULL;
    char                 out[4096], bad[PATH_MAX + 16];
    uint16_t             oport, sport;
    uint8_t              last_id[16], pump_id[16], level_id[16];
    ua_status            s;
    pid_t                broker;
    int                  n, rc;

    itest_init("integ_alarm");
    (void)argc;
    itest_guard(IA_WATCHDOG_S, ia_log);
    ua_arena_init(&ia_arena, malloc(IA_ARENA), IA_ARENA);
    itest_broker_bin(argv[0], ia_bin, sizeof(ia_bin));
    itest_tmpdir("uabroker-alarm", ia_dir, sizeof(ia_dir));
    snprintf(ia_log, sizeof(ia_log), "%s/broker.log", ia_dir);
    snprintf(ia_conf, sizeof(ia_conf), "%s/alarms.conf", ia_dir);
    if (itest_write_file(ia_conf, (const uint8_t *)ia_alarms,
                         sizeof(ia_alarms) - 1) != 0)
        itest_fatal("cannot write %s", ia_conf);

    /* 1. An input that is not there: -t names the file and line. */
    {
        static const char text[] = "[server]\nport = 1\n\n"
                                   "[alarm Gone]\ntype = off_normal\n"
                                   "input = ns=1;s=nope\nnormal = 0\n";

        snprintf(bad, sizeof(bad), "%s/bad.conf", ia_dir);
        if (itest_write_file(bad, (const uint8_t *)text, sizeof(text) - 1)
            != 0)
            itest_fatal("cannot write %s", bad);
        rc = ia_check_conf(bad, out, sizeof(out));
        itest_check(rc == 2 && strstr(out, "bad.conf line 4: [alarm Gone] "
                                           "input: ns=1;s=nope") != NULL,
                    "-t: an unknown input refused with file and line "
                    "(exit %d): %s", rc, out);
        rc = ia_check_conf(ia_conf, out, sizeof(out));
        itest_check(rc == 0, "-t: the alarms are accepted (exit %d): %s",
                    rc, out);
    }

    /* 2. The broker, an operator in its users file. */
    ia_passwd(ia_dir, "op-secret");
    {
        /* With the interop model's alarm instances (one adopted, one
         * refused: /stats says so, step 8). */
        const char *const extra[] = {
            "-c", ia_conf, "--set", "security.anonymous_write=true",
            "--nodeset", "tests/interop/nodesets/alarms.xml", NULL
        };

        broker = itest_broker_start(ia_bin, 2, ia_dir, ia_log, extra,
                                    IA_START_MS, &oport, &sport);
    }
    /* 3. A subscriber, a writer. */
    s = uaconn_start_retry(&sub, "127.0.0.1", oport, IA_START_MS);
    if (s != UA_GOOD)
        itest_fatal("no session: 0x%08X", s);
    ia_subscribe(&sub);
    s = uaconn_start_retry(&wr, "127.0.0.1", oport, IA_START_MS);
    if (s != UA_GOOD)
        itest_fatal("no session: 0x%08X", s);

    /* 4. Level1: High, HighHigh, the deadband, back, nothing. */
    s = ia_write_double(&wr, 85);
    n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
    itest_check(s == UA_GOOD && n == 1
                    && ev[0].type == UA_NS0ID_EXCLUSIVELIMITALARMTYPE
                    && strcmp(ev[0].name, "Level1") == 0 && ev[0].active
                    && !ev[0].acked && ev[0].retain && ev[0].sev == 500
                    && strcmp(ev[0].limit, "High") == 0
                    && strcmp(ev[0].cond, "Alarms.Level1") == 0,
                "v1 = 85: one event, active High, unacknowledged, "
                "retained, severity 500, ConditionId ns=1;s=Alarms.Level1 "
                "(%d: type %u %s sev %u limit %s cond %s)", n,
                n > 0 ? ev[0].type : 0, n > 0 ? ev[0].name : "",
                n > 0 ? ev[0].sev : 0, n > 0 ? ev[0].limit : "",
                n > 0 ? ev[0].cond : "");
    s = ia_write_double(&wr, 95);
    n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
    itest_check(s == UA_GOOD && n == 1 && ev[0].active && ev[0].sev == 900
                    && strcmp(ev[0].limit, "HighHigh") == 0,
                "v1 = 95: HighHigh, severity 900 (%d: %s %u)", n,
                n > 0 ? ev[0].limit : "", n > 0 ? ev[0].sev : 0);
    s = ia_write_double(&wr, 89.7);
    n = ia_events(&sub, ev, 16, 1, 600);
    itest_check(s == UA_GOOD && n == 0,
                "v1 = 89.7, inside HighHigh's deadband: no event (%d)", n);
    s = ia_write_double(&wr, 50);
    n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
    itest_check(s == UA_GOOD && n == 1 && !ev[0].active && !ev[0].acked
                    && ev[0].retain && ev[0].limit[0] == '\0'
                    && ev[0].sev == 500,
                "v1 = 50: inactive, still unacknowledged and retained "
                "(%d)", n);
    memcpy(last_id, ev[0].id, 16);
    s = ia_write_double(&wr, 55);
    n = ia_events(&sub, ev, 16, 1, 600);
    itest_check(s == UA_GOOD && n == 0, "v1 = 55: no event (%d)", n);

    /* 5. The condition's variables agree with the last event. */
    {
        static const char *const ids[] = {
            "Alarms.Level1.ActiveState.Id", "Alarms.Level1.Retain",
            "Alarms.Level1.EventId", "Alarms.Level1.LimitState.CurrentState",
            "Alarms.Level1.AckedState", "Alarms.Level1.HighHighLimit"
        };

        s = ia_read(&wr, ids, 6, &dv);
        itest_check(s == UA_GOOD && dv[0].value.type == UA_BT_BOOLEAN
                        && !*(bool *)dv[0].value.data
                        && dv[1].value.type == UA_BT_BOOLEAN
                        && *(bool *)dv[1].value.data
                        && dv[2].value.type == UA_BT_BYTESTRING
                        && ((struct ua_string *)dv[2].value.data)->len == 16
                        && memcmp(((struct ua_string *)dv[2].value.data)
                                      ->data, last_id, 16) == 0
                        && dv[3].value.type == UA_BT_LOCALIZEDTEXT
                        && dv[4].value.type == UA_BT_LOCALIZEDTEXT
                        && ua_string_eq(&((struct ua_localizedtext *)
                                              dv[4].value.data)->text,
                                        "Unacknowledged")
                        && dv[5].value.type == UA_BT_DOUBLE
                        && *(double *)dv[5].value.data == 90,
                    "Read: ActiveState/Id false, Retain true, EventId the "
                    "last event's, AckedState \"Unacknowledged\", "
                    "HighHighLimit 90 (0x%08X)", s);
    }

    /* 6. ConditionRefresh, then Pump: off normal. */
    {
        struct ua_variant a;
        int32_t           x = 0;

        memset(pump_id, 0, sizeof(pump_id));
        ua_variant_set_scalar(&a, &ia_sub_id, UA_BT_UINT32);
        s = ia_call(&wr, NULL, UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH, &a,
                    1);
        /* BadSubscriptionIdInvalid when the session is on the other
         * worker. */
        itest_check(s == UA_BAD_USER_ACCESS_DENIED
                        || s == UA_BAD_SUBSCRIPTION_ID_INVALID,
                    "ConditionRefresh of another session's subscription: "
                    "refused (0x%08X)", s);
        s = ia_call(&sub, NULL, UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH, &a,
                    1);
        n = ia_events(&sub, ev, 16, 3, IA_WAIT_MS);
        itest_check(s == UA_GOOD && n == 3
                        && ev[0].type == UA_NS0ID_REFRESHSTARTEVENTTYPE
                        && ev[1].type == UA_NS0ID_EXCLUSIVELIMITALARMTYPE
                        && strcmp(ev[1].name, "Level1") == 0
                        && ev[1].retain && !ev[1].active && !ev[1].acked
                        && memcmp(ev[1].id, last_id, 16) == 0
                        && strcmp(ev[1].cond, "Alarms.Level1") == 0
                        && ev[2].type == UA_NS0ID_REFRESHENDEVENTTYPE,
                    "ConditionRefresh: RefreshStart, Level1 as last sent "
                    "(retained, unacknowledged, same EventId), RefreshEnd "
                    "(0x%08X, %d events: %u %u %u)", s, n,
                    n > 0 ? ev[0].type : 0, n > 1 ? ev[1].type : 0,
                    n > 2 ? ev[2].type : 0);

        s = ia_write(&wr, "v2", UA_BT_INT32, &x);
        n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
        itest_check(s == UA_GOOD && n == 1
                        && ev[0].type == UA_NS0ID_OFFNORMALALARMTYPE
                        && strcmp(ev[0].name, "Pump") == 0 && ev[0].active
                        && ev[0].sev == 700
                        && strcmp(ev[0].cond, "Alarms.Pump") == 0,
                    "v2 = 0: an OffNormalAlarmType event for Pump (%d)", n);
        if (n == 1)
            memcpy(pump_id, ev[0].id, 16);
    }

    /* 7. The methods. */
    {
        struct uaconn op;
        uint8_t       zero[16] = { 0 };
        int           b;

        s = ia_ack(&wr, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE,
                   last_id, "anon");
        itest_check(s == UA_BAD_USER_ACCESS_DENIED,
                    "Acknowledge as anonymous (anonymous_write on): "
                    "BadUserAccessDenied (0x%08X)", s);
        uaconn_init(&op);
        op.user = "op";
        op.password = "op-secret";
        s = uaconn_start(&op, "127.0.0.1", oport);
        if (s != UA_GOOD)
            itest_fatal("operator session: 0x%08X", s);
        s = ia_ack(&op, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE,
                   zero, "stale");
        itest_check(s == UA_BAD_EVENT_ID_UNKNOWN,
                    "Acknowledge with a stale EventId: BadEventIdUnknown "
                    "(0x%08X)", s);
        s = ia_ack(&op, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE,
                   last_id, "seen");
        n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
        itest_check(s == UA_GOOD && n == 1 && ev[0].acked && !ev[0].retain
                        && !ev[0].active
                        && strcmp(ev[0].name, "Level1") == 0,
                    "Acknowledge as the operator: Good, an event "
                    "acknowledged and no longer retained (0x%08X, %d)", s,
                    n);
        if (n == 1)
            memcpy(last_id, ev[0].id, 16);
        s = ia_ack(&op, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE,
                   last_id, "again");
        itest_check(s == UA_BAD_CONDITION_BRANCH_ALREADY_ACKED,
                    "a second Acknowledge: BadConditionBranchAlreadyAcked "
                    "(0x%08X)", s);
        {
            static const char *const ids[] = {
                "Alarms.Level1.ClientUserId", "Alarms.Level1.Comment"
            };

            s = ia_read(&wr, ids, 2, &dv);
            itest_check(s == UA_GOOD && dv[0].value.type == UA_BT_STRING
                            && ua_string_eq(dv[0].value.data, "op")
                            && dv[1].value.type == UA_BT_LOCALIZEDTEXT
                            && ua_string_eq(&((struct ua_localizedtext *)
                                                  dv[1].value.data)->text,
                                            "seen"),
                        "Read: ClientUserId \"op\", Comment \"seen\"");
        }
        s = ia_call(&op, "Alarms.Level1", UA_NS0ID_CONDITIONTYPE_DISABLE,
                    NULL, 0);
        n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
        itest_check(s == UA_GOOD && n == 1, "Disable: Good, an event "
                    "(0x%08X, %d)", s, n);
        s = ia_call(&op, "Alarms.Level1", UA_NS0ID_CONDITIONTYPE_DISABLE,
                    NULL, 0);
        itest_check(s == UA_BAD_CONDITION_ALREADY_DISABLED,
                    "Disable again: BadConditionAlreadyDisabled (0x%08X)",
                    s);
        s = ia_write_double(&wr, 85);
        n = ia_events(&sub, ev, 16, 1, 600);
        itest_check(s == UA_GOOD && n == 0,
                    "v1 = 85 while disabled: no event (%d)", n);
        s = ia_call(&op, "Alarms.Level1", UA_NS0ID_CONDITIONTYPE_ENABLE,
                    NULL, 0);
        n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
        itest_check(s == UA_GOOD && n == 1 && ev[0].active
                        && strcmp(ev[0].limit, "High") == 0
                        && !ev[0].acked && ev[0].retain,
                    "Enable: an event with the state the input made "
                    "meanwhile (active High, unacknowledged) (0x%08X, %d)",
                    s, n);
        s = ia_shelve(&op, 60001.0);
        itest_check(s == UA_BAD_SHELVING_TIME_OUT_OF_RANGE,
                    "TimedShelve past MaxTimeShelved (60 s): "
                    "BadShelvingTimeOutOfRange (0x%08X)", s);
        s = ia_shelve(&op, 1000.0);
        b = ia_read_bool(&wr, "Alarms.Level1.SuppressedOrShelved");
        itest_check(s == UA_GOOD && b == 1, "TimedShelve 1 s: Good, "
                    "SuppressedOrShelved true (0x%08X, %d)", s, b);
        {
            uint64_t until = itest_ms() + 3000;

            while (itest_ms() < until
                   && (b = ia_read_bool(&wr,
                                        "Alarms.Level1.SuppressedOrShelved"))
                          == 1)
                itest_sleep_ms(100);
        }
        itest_check(b == 0, "the shelving runs out by itself within 3 s");
        s = ia_call(&op, "Alarms.Level1.ShelvingState",
                    UA_NS0ID_SHELVEDSTATEMACHINETYPE_UNSHELVE, NULL, 0);
        itest_check(s == UA_BAD_CONDITION_NOT_SHELVED,
                    "Unshelve when unshelved: BadConditionNotShelved "
                    "(0x%08X)", s);
        /* Pump: a comment (its EventId from step 6), one-shot shelved. */
        {
            static struct ua_string        eid;
            static struct ua_localizedtext lt;
            struct ua_variant              a[2];

            eid.len = 16;
            eid.data = pump_id;
            memset(&lt, 0, sizeof(lt));
            lt.mask = UA_LT_TEXT;
            lt.locale.len = -1;
            lt.text = ua_string_from("pump comment");
            ua_variant_set_scalar(&a[0], &eid, UA_BT_BYTESTRING);
            ua_variant_set_scalar(&a[1], &lt, UA_BT_LOCALIZEDTEXT);
            s = ia_call(&op, "Alarms.Pump", UA_NS0ID_CONDITIONTYPE_ADDCOMMENT,
                        a, 2);
            itest_check(s == UA_GOOD, "AddComment on Pump: Good (0x%08X)",
                        s);
            s = ia_call(&op, "Alarms.Pump.ShelvingState",
                        UA_NS0ID_SHELVEDSTATEMACHINETYPE_ONESHOTSHELVE, NULL,
                        0);
            itest_check(s == UA_GOOD, "OneShotShelve on Pump: Good (0x%08X)",
                        s);
        }
        uaconn_close(&op);
        ua_client_clear(&op.cl);
        uaconn_clear(&op);
    }

    /* 8. /stats and /metrics. */
    {
        char       *body = NULL;
        const char *al;
        uint64_t    cf = 0, ac = 0, un = 0, med = 0, hi = 0, calls = 0;
        uint64_t    fn = 0, nr = 0;
        int         code = itest_http(sport, "GET", "/stats", &body);

        al = body != NULL ? itest_json_find(body, "alarms") : NULL;
        itest_check(code == 200 && al != NULL
                        && itest_json_u64(al, "configured", &cf) && cf == 3
                        && itest_json_u64(al, "active", &ac) && ac == 2
                        && itest_json_u64(al, "unacknowledged", &un)
                        && un == 2
                        && itest_json_u64(al, "active_severity_medium", &med)
                        && med == 1
                        && itest_json_u64(al, "active_severity_high", &hi)
                        && hi == 1
                        && itest_json_u64(al, "calls", &calls)
                        && calls >= 10
                        && itest_json_u64(al, "from_nodesets", &fn)
                        && fn == 1
                        && itest_json_u64(al, "nodeset_refused", &nr)
                        && nr == 1,
                    "/stats alarms: configured %llu, active %llu, "
                    "unacknowledged %llu, medium %llu, high %llu, calls "
                    "%llu, from_nodesets %llu, nodeset_refused %llu",
                    (unsigned long long)cf, (unsigned long long)ac,
                    (unsigned long long)un, (unsigned long long)med,
                    (unsigned long long)hi, (unsigned long long)calls,
                    (unsigned long long)fn, (unsigned long long)nr);
        free(body);
        body = NULL;
        code = itest_http(sport, "GET", "/metrics", &body);
        itest_check(code == 200 && body != NULL
                        && strstr(body, "\nuabroker_alarms_active 2\n")
                               != NULL
                        && strstr(body, "# TYPE uabroker_alarms_transitions_"
                                        "total counter") != NULL,
                    "/metrics: uabroker_alarms_active 2, "
                    "uabroker_alarms_transitions_total");
        free(body);
    }

    /* 8b. An external alarm from the feed (the methods' events of step 7
     * drained first). */
    while (ia_events(&sub, ev, 16, 16, 500) != 0)
        ;
    rc = ia_feed("alarm=Remote;active=true;severity=800;"
                 "message=\"Compressor 2 trip; remote\"", out, sizeof(out));
    n = ia_events(&sub, ev, 16, 1, IA_WAIT_MS);
    itest_check(rc == 0 && n == 1 && strcmp(ev[0].name, "Remote") == 0
                    && ev[0].type == UA_NS0ID_ALARMCONDITIONTYPE
                    && ev[0].active && !ev[0].acked && ev[0].sev == 800
                    && ev[0].retain,
                "feed alarm=Remote;active=true;severity=800: an "
                "AlarmConditionType event, active, unacknowledged, "
                "severity 800 (exit %d, %d events) %s", rc, n, out);
    rc = ia_feed("alarm=Remote;active=true;severity=800;"
                 "message=\"Compressor 2 trip; remote\"", out, sizeof(out));
    n = ia_events(&sub, ev, 16, 1, 600);
    itest_check(rc == 0 && n == 0, "the same line again: no event (%d)", n);
    rc = ia_feed("alarm=Level1;active=true", out, sizeof(out));
    itest_check(rc == 1 && strstr(out, "BadNodeIdUnknown") != NULL,
                "alarm= of a limit alarm refused: %s", out);
    rc = ia_feed("alarm=Remote;active=maybe", out, sizeof(out));
    itest_check(rc == 1 && strstr(out, "BadTypeMismatch") != NULL,
                "alarm=Remote;active=maybe refused: %s", out);
    rc = ia_feed("alarm=Remote;active=true;severity=0", out, sizeof(out));
    itest_check(rc == 1 && strstr(out, "BadOutOfRange") != NULL,
                "severity=0 refused: %s", out);

    /* 9. A restart keeps the state. */
    {
        const char *id = "Alarms.Level1.EventId";

        memset(level_id, 0, sizeof(level_id));
        if (ia_read(&wr, &id, 1, &dv) == UA_GOOD
            && dv[0].value.type == UA_BT_BYTESTRING
            && ((struct ua_string *)dv[0].value.data)->len == 16)
            memcpy(level_id, ((struct ua_string *)dv[0].value.data)->data,
                   16);
    }
    uaconn_close(&sub);
    ua_client_clear(&sub.cl);
    uaconn_clear(&sub);
    uaconn_close(&wr);
    ua_client_clear(&wr.cl);
    uaconn_clear(&wr);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    {
        const char *const extra[] = {
            "-c", ia_conf, "--set", "security.anonymous_write=true", NULL
        };
        static const char *const ids[] = {
            "Alarms.Level1.ActiveState.Id", "Alarms.Level1.AckedState.Id",
            "Alarms.Level1.EventId", "Alarms.Pump.ActiveState.Id",
            "Alarms.Pump.SuppressedOrShelved", "Alarms.Pump.Comment",
            "Alarms.Pump.ClientUserId", "Alarms.Pump.AckedState.Id"
        };
        char path[PATH_MAX + 32], *log = NULL;
        bool ok;

        snprintf(path, sizeof(path), "%s/alarms.state", ia_dir);
        itest_check(access(path, R_OK) == 0, "alarms.state written");
        broker = itest_broker_start(ia_bin, 2, ia_dir, ia_log, extra,
                                    IA_START_MS, &oport, &sport);
        s = uaconn_start_retry(&wr, "127.0.0.1", oport, IA_START_MS);
        if (s != UA_GOOD)
            itest_fatal("no session: 0x%08X", s);
        s = ia_read(&wr, ids, 8, &dv);
        ok = s == UA_GOOD;

        for (int i = 0; ok && i < 8; i++)
            ok = dv[i].value.type != 0;
        ok = ok && *(bool *)dv[0].value.data && !*(bool *)dv[1].value.data
             && ((struct ua_string *)dv[2].value.data)->len == 16
             && memcmp(((struct ua_string *)dv[2].value.data)->data,
                       level_id, 16) == 0
             && *(bool *)dv[3].value.data && *(bool *)dv[4].value.data
             && ua_string_eq(&((struct ua_localizedtext *)dv[5].value.data)
                                  ->text, "pump comment")
             && ua_string_eq(dv[6].value.data, "op")
             && !*(bool *)dv[7].value.data;
        itest_check(ok, "after the restart: Level1 active, unacknowledged, "
                    "the same EventId; Pump active, shelved, unacknowledged, "
                    "its comment and ClientUserId (0x%08X)", s);
        ia_subscribe(&wr);
        {
            struct ua_variant a;
            int               lv = 0, pm = 0, re = 0;

            ua_variant_set_scalar(&a, &ia_sub_id, UA_BT_UINT32);
            s = ia_call(&wr, NULL, UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH,
                        &a, 1);
            n = ia_events(&wr, ev, 16, 5, IA_WAIT_MS);
            for (int i = 0; i < n; i++) {
                lv += strcmp(ev[i].name, "Level1") == 0 && ev[i].retain;
                pm += strcmp(ev[i].name, "Pump") == 0 && ev[i].retain;
                re += strcmp(ev[i].name, "Remote") == 0 && ev[i].retain
                      && ev[i].sev == 800;
            }
            for (int i = 0; i < n; i++)
                if (strcmp(ev[i].name, "Remote") == 0
                    && strcmp(ev[i].msg, "Compressor 2 trip; remote") != 0)
                    re = 0;
            itest_check(s == UA_GOOD && n == 5 && lv == 1 && pm == 1
                            && re == 1,
                        "after the restart: ConditionRefresh lists Level1, "
                        "Pump and Remote (with the feed's message) (%d "
                        "events)", n);
        }
        uaconn_close(&wr);
        ua_client_clear(&wr.cl);
        uaconn_clear(&wr);
        itest_check(itest_stop(broker, 5000) == 0,
                    "SIGTERM: the broker exits 0");

        /* 10. A damaged file. */
        {
            static const char bad_state[] = "uabroker-alarms 2\n"
                                            "Level1 1 1 0 x\n";

            if (itest_write_file(path, (const uint8_t *)bad_state,
                                 sizeof(bad_state) - 1) != 0)
                itest_fatal("cannot write %s", path);
        }
        broker = itest_broker_start(ia_bin, 2, ia_dir, ia_log, extra,
                                    IA_START_MS, &oport, &sport);
        s = uaconn_start_retry(&wr, "127.0.0.1", oport, IA_START_MS);
        if (s != UA_GOOD)
            itest_fatal("no session: 0x%08X", s);
        {
            int b = ia_read_bool(&wr, "Alarms.Pump.SuppressedOrShelved");
            int a = ia_read_bool(&wr, "Alarms.Pump.ActiveState.Id");
            uint8_t buf[16384];
            size_t  len = 0;

            if (itest_read_file(ia_log, buf, sizeof(buf) - 1, &len) == 0) {
                buf[len] = '\0';
                log = strstr((char *)buf, "alarms.state line 2: damaged");
            }
            itest_check(b == 0 && a == 0 && log != NULL,
                        "a damaged alarms.state: reported with its line, "
                        "Pump from its input (inactive, not shelved)");
        }
        uaconn_close(&wr);
        ua_client_clear(&wr.cl);
        uaconn_clear(&wr);
        itest_check(itest_stop(broker, 5000) == 0,
                    "SIGTERM: the broker exits 0");
    }
    return itest_finish();
}
