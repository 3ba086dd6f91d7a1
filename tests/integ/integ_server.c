/*
 * tests/integ/integ_server.c: the whole server on loopback (docs/style.md §9).
 *
 * Starts `uabroker -w 2` (the binary next to this test's build directory:
 * build/uabroker, or build/san/uabroker under SAN=1; UABROKER_BIN
 * overrides) on a free opc.tcp port and a free stats port, in a process
 * group of its own, then:
 *
 *   1. waits for /health 200 and checks /stats shows both workers up;
 *   2. connects clients (tests/lib/uaconn) until both workers have some,
 *      telling which worker took each from the /stats deltas;
 *   3. on one client of each worker, exercises every service: GetEndpoints,
 *      FindServers, Create/Activate/CloseSession, Read (CurrentTime ticks,
 *      NamespaceArray[1], every attribute of a Vars variable, v0 and v1),
 *      Browse with paging through BrowseNext, TranslateBrowsePaths,
 *      Register/UnregisterNodes, pipelined Reads, unknown services;
 *   4. reads /stats and /metrics: the counters moved, no allocation per
 *      request in steady state;
 *   5. kill -9 one worker while a thread keeps reading on a client of the
 *      other: no error there; the slot is respawned (new pid, restarts 1,
 *      /health 200) and serves new connections;
 *   6. SIGTERM: the broker exits 0 within 5 s and the workers are gone.
 *
 * Prints "ok N - what" / "FAIL N - what" per check and a closing
 * "integ_server: N passed, M failed"; exits non-zero on any failure.  The
 * broker's process group is killed on every way out (tests/lib/itest's
 * guard: exit, watchdog, SIGINT/SIGTERM), and its log is printed on
 * failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IT_WORKERS        2
#define IT_CLIENTS_MAX    40
#define IT_WATCHDOG_S     240
#define IT_HEALTH_WAIT_MS 30000     /* first start; ASan builds are slow */
#define IT_RESPAWN_WAIT_MS 15000
#define IT_STOP_WAIT_MS   5000
#define IT_ARENA          (4u << 20)

struct it_worker {
    int      pid;
    char     state[16];
    uint64_t restarts;
    uint64_t connections;
    uint64_t connections_total;
};

struct it_client {
    struct uaconn c;
    int           worker;       /* slot, -1: unknown */
    bool          used;
};

/* The reader thread of step 5. */
struct it_reader {
    struct it_client *cl;
    atomic_bool       stop;
    uint64_t          reads;
    uint64_t          errors;
    ua_status         first_error;
};

static pid_t            it_broker = -1;      /* also the process group */
static char             it_dir[PATH_MAX];
static char             it_log[PATH_MAX + 16];
static uint16_t         it_port, it_sport;
static struct it_client it_cl[IT_CLIENTS_MAX];
static unsigned         it_ncl;
static struct ua_arena  it_arena;
static char             it_app_uri[512];


static void it_start_broker(const char *bin);
static bool it_stats(struct it_worker w[IT_WORKERS], char **json);
static bool it_wait_health(unsigned ms);
static struct it_client *it_connect(void);
static void it_read_ids_init(struct ua_read_value_id *ids, int n);
static ua_status it_read(struct it_client *cl, struct ua_read_value_id *ids,
                         int n, struct ua_read_response *resp);
static ua_status it_read_one(struct it_client *cl, struct ua_nodeid id,
                             uint32_t attr, struct ua_datavalue *dv);
static void it_services(struct it_client *cl);
static void it_discovery(struct it_client *cl);
static void it_reads(struct it_client *cl);
static void it_attributes(struct it_client *cl);
static void it_browse(struct it_client *cl);
static void it_translate(struct it_client *cl);
static void it_register(struct it_client *cl);
static void it_unknown(struct it_client *cl);
static void it_pipeline(struct it_client *cl);
static void it_large(struct it_client *cl);
static void it_session_cycle(struct it_client *cl);
static bool it_has_name(const struct ua_reference_description *r, int32_t n,
                        const char *name);
static void it_counters(void);
static void *it_reader_main(void *arg);
static void it_kill_worker(void);
static void it_stop_broker(void);

/* ------------------------------------------------------------ plumbing */

static void
it_start_broker(const char *bin)
{
    char  port[8], stats[32], vars[] = "1000";
    char *argv[] = { (char *)bin, "-w", "2", "-p", port, "--stats", stats,
                     "--runtime-dir", it_dir, "--vars", vars, NULL };

    itest_tmpdir("uabroker-integ", it_dir, sizeof(it_dir));
    snprintf(it_log, sizeof(it_log), "%s/broker.log", it_dir);
    it_port = itest_free_port();
    it_sport = itest_free_port();
    if (it_port == 0 || it_sport == 0 || it_port == it_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", it_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", it_sport);
    it_broker = itest_spawn(it_log, argv);
    printf("# broker %s pid %d, opc.tcp port %u, stats port %u\n", bin,
           (int)it_broker, it_port, it_sport);
}

static int
it_http(const char *method, const char *path, char **body)
{
    return itest_http(it_sport, method, path, body);
}

/* GET /stats, parse both worker rows.  *json (may be NULL) keeps the body. */
static bool
it_stats(struct it_worker w[IT_WORKERS], char **json)
{
    char *body = NULL;
    bool  ok = true;

    if (it_http("GET", "/stats", &body) != 200 || body == NULL) {
        free(body);
        return false;
    }
    for (unsigned i = 0; i < IT_WORKERS; i++) {
        char        pat[32];
        const char *row, *s;
        uint64_t    pid = 0;

        snprintf(pat, sizeof(pat), "{\"slot\": %u,", i);
        row = strstr(body, pat);
        memset(&w[i], 0, sizeof(w[i]));
        s = itest_json_find(row, "state");
        if (row == NULL || s == NULL || !itest_json_u64(row, "pid", &pid)
            || !itest_json_u64(row, "restarts", &w[i].restarts)
            || !itest_json_u64(row, "connections", &w[i].connections)
            || !itest_json_u64(row, "connections_total",
                            &w[i].connections_total)) {
            ok = false;
            continue;
        }
        w[i].pid = (int)pid;
        sscanf(s, "\"%15[a-z]\"", w[i].state);
    }
    if (json != NULL)
        *json = body;
    else
        free(body);
    return ok;
}

static bool
it_wait_health(unsigned ms)
{
    if (itest_wait_health(it_sport, it_broker, ms))
        return true;
    it_broker = -1;
    return false;
}

/* A new client with a session; its worker from the /stats deltas. */
static struct it_client *
it_connect(void)
{
    struct it_worker  before[IT_WORKERS], after[IT_WORKERS];
    struct it_client *cl;
    ua_status         s;

    if (it_ncl == IT_CLIENTS_MAX || !it_stats(before, NULL))
        return NULL;
    cl = &it_cl[it_ncl];
    uaconn_init(&cl->c);
    s = uaconn_start(&cl->c, "127.0.0.1", it_port);
    if (s != UA_GOOD) {
        itest_check(false, "client %u: connect + session: 0x%08X %s", it_ncl,
                 s, cl->c.err_reason);
        uaconn_clear(&cl->c);
        return NULL;
    }
    cl->used = true;
    cl->worker = -1;
    it_ncl++;
    if (it_stats(after, NULL))
        for (int i = 0; i < IT_WORKERS; i++)
            if (after[i].connections_total > before[i].connections_total)
                cl->worker = i;
    return cl;
}


static void
it_read_ids_init(struct ua_read_value_id *ids, int n)
{
    memset(ids, 0, sizeof(*ids) * (size_t)n);
    for (int i = 0; i < n; i++) {
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
        ids[i].attribute_id = UA_ATTR_VALUE;
    }
}

static ua_status
it_read(struct it_client *cl, struct ua_read_value_id *ids, int n,
        struct ua_read_response *resp)
{
    struct ua_read_request req;

    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = n;
    req.nodes_to_read = ids;
    ua_arena_reset(&it_arena);
    return uaconn_call(&cl->c, &ua_types[UA_TYPE_READREQUEST], &req,
                       &ua_types[UA_TYPE_READRESPONSE], resp, &it_arena);
}

/* One attribute; dv valid until the next request. */
static ua_status
it_read_one(struct it_client *cl, struct ua_nodeid id, uint32_t attr,
            struct ua_datavalue *dv)
{
    struct ua_read_value_id rv;
    struct ua_read_response resp;
    ua_status               s;

    it_read_ids_init(&rv, 1);
    rv.node_id = id;
    rv.attribute_id = attr;
    s = it_read(cl, &rv, 1, &resp);
    if (s != UA_GOOD)
        return s;
    if (resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    *dv = resp.results[0];
    return UA_GOOD;
}

/* ------------------------------------------------------------ services */

static void
it_discovery(struct it_client *cl)
{
    struct ua_get_endpoints_request  ge;
    struct ua_get_endpoints_response ger;
    struct ua_find_servers_request   fs;
    struct ua_find_servers_response  fsr;
    char                             url[64];
    bool                             none = false, url_ok = false;
    ua_status                        s;

    memset(&ge, 0, sizeof(ge));
    ge.request_header.audit_entry_id.len = -1;
    snprintf(url, sizeof(url), "opc.tcp://127.0.0.1:%u", it_port);
    ge.endpoint_url = ua_string_from(url);
    ge.n_locale_ids = -1;
    ge.n_profile_uris = -1;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_GETENDPOINTSREQUEST], &ge,
                    &ua_types[UA_TYPE_GETENDPOINTSRESPONSE], &ger, &it_arena);
    if (itest_check(s == UA_GOOD && ger.n_endpoints >= 1,
                 "worker %d: GetEndpoints: 0x%08X, %d endpoints", cl->worker,
                 s, s == UA_GOOD ? ger.n_endpoints : -1)) {
        for (int32_t i = 0; i < ger.n_endpoints; i++) {
            const struct ua_endpoint_description *e = &ger.endpoints[i];
            char port[16];

            snprintf(port, sizeof(port), ":%u", it_port);
            if (ua_string_eq(&e->security_policy_uri, UA_SC_POLICY_NONE))
                none = true;
            if (e->endpoint_url.len > 0
                && memmem(e->endpoint_url.data, (size_t)e->endpoint_url.len,
                          port, strlen(port)) != NULL)
                url_ok = true;
        }
        itest_check(none, "GetEndpoints offers SecurityPolicy None");
        itest_check(url_ok, "GetEndpoints URL carries port %u", it_port);
    }

    memset(&fs, 0, sizeof(fs));
    fs.request_header.audit_entry_id.len = -1;
    fs.endpoint_url = ua_string_from(url);
    fs.n_locale_ids = -1;
    fs.n_server_uris = -1;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_FINDSERVERSREQUEST], &fs,
                    &ua_types[UA_TYPE_FINDSERVERSRESPONSE], &fsr, &it_arena);
    if (itest_check(s == UA_GOOD && fsr.n_servers >= 1,
                 "worker %d: FindServers: 0x%08X, %d servers", cl->worker, s,
                 s == UA_GOOD ? fsr.n_servers : -1)) {
        const struct ua_string *u = &fsr.servers[0].application_uri;

        itest_check(u->len > 0 && (size_t)u->len < sizeof(it_app_uri),
                 "FindServers: an application URI");
        if (u->len > 0 && (size_t)u->len < sizeof(it_app_uri)
            && it_app_uri[0] == '\0') {
            memcpy(it_app_uri, u->data, (size_t)u->len);
            it_app_uri[u->len] = '\0';
        }
    }
}

static void
it_reads(struct it_client *cl)
{
    struct ua_datavalue dv;
    int64_t             t0 = 0, t1 = 0;
    ua_status           s;

    /* Server/ServerStatus/CurrentTime ticks (the broker, once a second). */
    s = it_read_one(cl, ua_nodeid_num(0,
                    UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME),
                    UA_ATTR_VALUE, &dv);
    if (s == UA_GOOD && dv.status == UA_GOOD
        && dv.value.type == UA_BT_DATETIME && !dv.value.is_array)
        t0 = *(const int64_t *)dv.value.data;
    itest_check(t0 > 0, "worker %d: Read CurrentTime: 0x%08X", cl->worker, s);
    itest_sleep_ms(2100);
    s = it_read_one(cl, ua_nodeid_num(0,
                    UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME),
                    UA_ATTR_VALUE, &dv);
    if (s == UA_GOOD && dv.status == UA_GOOD
        && dv.value.type == UA_BT_DATETIME && !dv.value.is_array)
        t1 = *(const int64_t *)dv.value.data;
    itest_check(t1 >= t0 + 10000000,
             "CurrentTime increased by %.1f s over 2 s",
             (double)(t1 - t0) / 1e7);

    /* NamespaceArray[1] is the application URI. */
    s = it_read_one(cl, ua_nodeid_num(0, UA_NS0ID_SERVER_NAMESPACEARRAY),
                    UA_ATTR_VALUE, &dv);
    if (itest_check(s == UA_GOOD && dv.status == UA_GOOD
                     && dv.value.type == UA_BT_STRING && dv.value.is_array
                     && dv.value.n >= 2,
                 "Read NamespaceArray: 0x%08X, %d entries", s,
                 s == UA_GOOD ? dv.value.n : -1)) {
        const struct ua_string *ns = dv.value.data;

        itest_check(ua_string_eq(&ns[0], "http://opcfoundation.org/UA/"),
                 "NamespaceArray[0] is the OPC UA namespace");
        itest_check(it_app_uri[0] != '\0' && ua_string_eq(&ns[1], it_app_uri),
                 "NamespaceArray[1] = the application URI %s", it_app_uri);
    }

    /* The Vars: v0 = Int32 0, v1 = Double 1.5. */
    s = it_read_one(cl, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD && dv.status == UA_GOOD
                 && dv.value.type == UA_BT_INT32 && !dv.value.is_array
                 && *(const int32_t *)dv.value.data == 0,
             "Read ns=1;s=v0 = Int32 0 (0x%08X, type %u)", s,
             s == UA_GOOD ? dv.value.type : 0);
    s = it_read_one(cl, ua_nodeid_str(1, "v1"), UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD && dv.status == UA_GOOD
                 && dv.value.type == UA_BT_DOUBLE && !dv.value.is_array
                 && *(const double *)dv.value.data == 1.5,
             "Read ns=1;s=v1 = Double 1.5 (0x%08X, type %u)", s,
             s == UA_GOOD ? dv.value.type : 0);
    s = it_read_one(cl, ua_nodeid_str(1, "v999"), UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD && dv.status == UA_GOOD
                 && dv.value.type == UA_BT_DOUBLE
                 && *(const double *)dv.value.data == 999.5,
             "Read ns=1;s=v999 = Double 999.5");
    s = it_read_one(cl, ua_nodeid_str(1, "v1000"), UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD && dv.status == UA_BAD_NODE_ID_UNKNOWN,
             "Read ns=1;s=v1000 (--vars 1000) = BadNodeIdUnknown");
}

/* Every attribute of ns=1;s=v7 (a Double variable) in one Read. */
static void
it_attributes(struct it_client *cl)
{
    struct ua_read_value_id ids[UA_ATTR_MAX];
    struct ua_read_response resp;
    const struct ua_datavalue *r;
    ua_status               s;

    it_read_ids_init(ids, UA_ATTR_MAX);
    for (int i = 0; i < UA_ATTR_MAX; i++) {
        ids[i].node_id = ua_nodeid_str(1, "v7");
        ids[i].attribute_id = (uint32_t)i + 1;
    }
    s = it_read(cl, ids, UA_ATTR_MAX, &resp);
    if (!itest_check(s == UA_GOOD && resp.n_results == UA_ATTR_MAX,
                  "worker %d: Read all %d attributes of v7: 0x%08X",
                  cl->worker, UA_ATTR_MAX, s))
        return;
    r = resp.results;
#define IT_A(a) (&r[(a) - 1])
#define IT_OK(a, bt) (IT_A(a)->status == UA_GOOD                        \
                      && IT_A(a)->value.type == (bt)                      \
                      && !IT_A(a)->value.is_array)
    {
        const struct ua_nodeid *id = IT_A(UA_ATTR_NODEID)->value.data;
        struct ua_nodeid        want = ua_nodeid_str(1, "v7");

        itest_check(IT_OK(UA_ATTR_NODEID, UA_BT_NODEID)
                     && ua_nodeid_equal(id, &want),
                 "v7 NodeId = ns=1;s=v7");
    }
    itest_check(IT_OK(UA_ATTR_NODECLASS, UA_BT_INT32)
                 && *(const int32_t *)IT_A(UA_ATTR_NODECLASS)->value.data
                        == UA_NODECLASS_VARIABLE,
             "v7 NodeClass = Variable");
    {
        const struct ua_qualifiedname *q =
            IT_A(UA_ATTR_BROWSENAME)->value.data;

        itest_check(IT_OK(UA_ATTR_BROWSENAME, UA_BT_QUALIFIEDNAME) && q->ns == 1
                     && ua_string_eq(&q->name, "v7"),
                 "v7 BrowseName = 1:v7");
    }
    {
        const struct ua_localizedtext *t =
            IT_A(UA_ATTR_DISPLAYNAME)->value.data;

        itest_check(IT_OK(UA_ATTR_DISPLAYNAME, UA_BT_LOCALIZEDTEXT)
                     && ua_string_eq(&t->text, "v7"),
                 "v7 DisplayName = v7");
    }
    itest_check(IT_A(UA_ATTR_DESCRIPTION)->status == UA_GOOD
                 || IT_A(UA_ATTR_DESCRIPTION)->status
                        == UA_BAD_ATTRIBUTE_ID_INVALID,
             "v7 Description: 0x%08X", IT_A(UA_ATTR_DESCRIPTION)->status);
    itest_check(IT_OK(UA_ATTR_WRITEMASK, UA_BT_UINT32)
                 && IT_OK(UA_ATTR_USERWRITEMASK, UA_BT_UINT32),
             "v7 WriteMask, UserWriteMask are UInt32");
    itest_check(IT_OK(UA_ATTR_VALUE, UA_BT_DOUBLE)
                 && *(const double *)IT_A(UA_ATTR_VALUE)->value.data == 7.5,
             "v7 Value = Double 7.5");
    {
        const struct ua_nodeid *dt = IT_A(UA_ATTR_DATATYPE)->value.data;

        itest_check(IT_OK(UA_ATTR_DATATYPE, UA_BT_NODEID) && dt->ns == 0
                     && dt->idtype == UA_IDTYPE_NUMERIC
                     && dt->id.num == UA_NS0ID_DOUBLE,
                 "v7 DataType = i=11 (Double)");
    }
    itest_check(IT_OK(UA_ATTR_VALUERANK, UA_BT_INT32)
                 && *(const int32_t *)IT_A(UA_ATTR_VALUERANK)->value.data
                        == -1,
             "v7 ValueRank = -1 (scalar)");
    itest_check(IT_A(UA_ATTR_ARRAYDIMENSIONS)->status == UA_GOOD
                 || IT_A(UA_ATTR_ARRAYDIMENSIONS)->status
                        == UA_BAD_ATTRIBUTE_ID_INVALID,
             "v7 ArrayDimensions: 0x%08X",
             IT_A(UA_ATTR_ARRAYDIMENSIONS)->status);
    itest_check(IT_OK(UA_ATTR_ACCESSLEVEL, UA_BT_BYTE)
                 && (*(const uint8_t *)IT_A(UA_ATTR_ACCESSLEVEL)->value.data
                     & 0x03) == 0x03,
             "v7 AccessLevel has CurrentRead|CurrentWrite");
    itest_check(IT_OK(UA_ATTR_USERACCESSLEVEL, UA_BT_BYTE),
             "v7 UserAccessLevel is a Byte");
    itest_check(IT_OK(UA_ATTR_MINIMUMSAMPLINGINTERVAL, UA_BT_DOUBLE),
             "v7 MinimumSamplingInterval is a Double");
    itest_check(IT_OK(UA_ATTR_HISTORIZING, UA_BT_BOOLEAN),
             "v7 Historizing is a Boolean");
    itest_check(IT_A(UA_ATTR_ACCESSLEVELEX)->status == UA_GOOD
                 || IT_A(UA_ATTR_ACCESSLEVELEX)->status
                        == UA_BAD_ATTRIBUTE_ID_INVALID,
             "v7 AccessLevelEx: 0x%08X", IT_A(UA_ATTR_ACCESSLEVELEX)->status);
    {
        static const uint32_t notvar[] = {
            UA_ATTR_ISABSTRACT, UA_ATTR_SYMMETRIC, UA_ATTR_INVERSENAME,
            UA_ATTR_CONTAINSNOLOOPS, UA_ATTR_EVENTNOTIFIER,
            UA_ATTR_EXECUTABLE, UA_ATTR_USEREXECUTABLE,
            UA_ATTR_DATATYPEDEFINITION };
        bool ok = true;

        for (size_t i = 0; i < sizeof(notvar) / sizeof(notvar[0]); i++)
            if (IT_A(notvar[i])->status != UA_BAD_ATTRIBUTE_ID_INVALID)
                ok = false;
        itest_check(ok, "v7: attributes a Variable lacks are "
                 "BadAttributeIdInvalid");
    }
#undef IT_OK
#undef IT_A
}

/* Names of the references in res[0..n) into names (for the checks). */
static bool
it_has_name(const struct ua_reference_description *r, int32_t n,
            const char *name)
{
    for (int32_t i = 0; i < n; i++)
        if (ua_string_eq(&r[i].browse_name.name, name))
            return true;
    return false;
}

static void
it_browse(struct it_client *cl)
{
    struct ua_browse_request       req;
    struct ua_browse_response      resp;
    struct ua_browse_next_request  nreq;
    struct ua_browse_next_response nresp;
    struct ua_browse_description   bd;
    uint8_t                        cp[256];
    struct ua_string               cps;
    int32_t                        all = -1, paged = 0, pages = 0;
    bool                           server = false, demo = false;
    ua_status                      s;

    memset(&bd, 0, sizeof(bd));
    bd.node_id = ua_nodeid_num(0, UA_NS0ID_OBJECTSFOLDER);
    bd.browse_direction = UA_BROWSEDIRECTION_FORWARD;
    bd.reference_type_id = ua_nodeid_num(0, UA_NS0ID_HIERARCHICALREFERENCES);
    bd.include_subtypes = true;
    bd.result_mask = UA_BROWSERESULTMASK_ALL;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_browse = 1;
    req.nodes_to_browse = &bd;

    /* All at once. */
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_BROWSEREQUEST], &req,
                    &ua_types[UA_TYPE_BROWSERESPONSE], &resp, &it_arena);
    if (itest_check(s == UA_GOOD && resp.n_results == 1
                     && resp.results[0].status_code == UA_GOOD,
                 "worker %d: Browse Objects: 0x%08X", cl->worker, s)) {
        all = resp.results[0].n_references;
        itest_check(it_has_name(resp.results[0].references, all, "Server")
                     && it_has_name(resp.results[0].references, all, "Demo"),
                 "Browse Objects: %d references, Server and Demo among "
                 "them", all);
    }

    /* One reference per page, then BrowseNext to the end. */
    req.requested_max_references_per_node = 1;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_BROWSEREQUEST], &req,
                    &ua_types[UA_TYPE_BROWSERESPONSE], &resp, &it_arena);
    if (!itest_check(s == UA_GOOD && resp.n_results == 1
                      && resp.results[0].status_code == UA_GOOD
                      && resp.results[0].n_references == 1
                      && resp.results[0].continuation_point.len > 0
                      && (size_t)resp.results[0].continuation_point.len
                             <= sizeof(cp),
                  "Browse Objects, 1 per page: a continuation point"))
        return;
    paged = 1;
    pages = 1;
    server = it_has_name(resp.results[0].references, 1, "Server");
    demo = it_has_name(resp.results[0].references, 1, "Demo");
    cps.len = resp.results[0].continuation_point.len;
    memcpy(cp, resp.results[0].continuation_point.data, (size_t)cps.len);
    cps.data = cp;
    while (cps.len > 0 && pages < 1000) {
        memset(&nreq, 0, sizeof(nreq));
        nreq.request_header.audit_entry_id.len = -1;
        nreq.n_continuation_points = 1;
        nreq.continuation_points = &cps;
        ua_arena_reset(&it_arena);
        s = uaconn_call(&cl->c, &ua_types[UA_TYPE_BROWSENEXTREQUEST], &nreq,
                        &ua_types[UA_TYPE_BROWSENEXTRESPONSE], &nresp,
                        &it_arena);
        if (s != UA_GOOD || nresp.n_results != 1
            || nresp.results[0].status_code != UA_GOOD)
            break;
        pages++;
        paged += nresp.results[0].n_references;
        server |= it_has_name(nresp.results[0].references,
                              nresp.results[0].n_references, "Server");
        demo |= it_has_name(nresp.results[0].references,
                            nresp.results[0].n_references, "Demo");
        cps.len = nresp.results[0].continuation_point.len;
        if (cps.len > 0 && (size_t)cps.len <= sizeof(cp))
            memcpy(cp, nresp.results[0].continuation_point.data,
                   (size_t)cps.len);
        else
            cps.len = 0;
    }
    itest_check(s == UA_GOOD && paged == all && server && demo,
             "BrowseNext: %d pages, %d references (all at once: %d)", pages,
             paged, all);

    /* A released continuation point is gone. */
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_BROWSEREQUEST], &req,
                    &ua_types[UA_TYPE_BROWSERESPONSE], &resp, &it_arena);
    if (s == UA_GOOD && resp.n_results == 1
        && resp.results[0].continuation_point.len > 0
        && (size_t)resp.results[0].continuation_point.len <= sizeof(cp)) {
        cps.len = resp.results[0].continuation_point.len;
        memcpy(cp, resp.results[0].continuation_point.data, (size_t)cps.len);
        memset(&nreq, 0, sizeof(nreq));
        nreq.request_header.audit_entry_id.len = -1;
        nreq.release_continuation_points = true;
        nreq.n_continuation_points = 1;
        nreq.continuation_points = &cps;
        ua_arena_reset(&it_arena);
        s = uaconn_call(&cl->c, &ua_types[UA_TYPE_BROWSENEXTREQUEST], &nreq,
                        &ua_types[UA_TYPE_BROWSENEXTRESPONSE], &nresp,
                        &it_arena);
        itest_check(s == UA_GOOD, "BrowseNext release: 0x%08X", s);
        nreq.release_continuation_points = false;
        ua_arena_reset(&it_arena);
        s = uaconn_call(&cl->c, &ua_types[UA_TYPE_BROWSENEXTREQUEST], &nreq,
                        &ua_types[UA_TYPE_BROWSENEXTRESPONSE], &nresp,
                        &it_arena);
        itest_check(s == UA_GOOD && nresp.n_results == 1
                     && nresp.results[0].status_code
                            == UA_BAD_CONTINUATION_POINT_INVALID,
                 "BrowseNext on a released point: "
                 "BadContinuationPointInvalid");
    } else {
        itest_check(false, "Browse for the release test: 0x%08X", s);
    }
}

static void
it_translate(struct it_client *cl)
{
    struct ua_translate_browse_paths_to_node_ids_request  req;
    struct ua_translate_browse_paths_to_node_ids_response resp;
    struct ua_browse_path                                 bp;
    struct ua_relative_path_element                       el[2];
    ua_status                                             s;

    memset(el, 0, sizeof(el));
    for (int i = 0; i < 2; i++) {
        el[i].reference_type_id =
            ua_nodeid_num(0, UA_NS0ID_HIERARCHICALREFERENCES);
        el[i].include_subtypes = true;
    }
    el[0].target_name.name = ua_string_from("Objects");
    el[1].target_name.name = ua_string_from("Server");
    memset(&bp, 0, sizeof(bp));
    bp.starting_node = ua_nodeid_num(0, UA_NS0ID_ROOTFOLDER);
    bp.relative_path.n_elements = 2;
    bp.relative_path.elements = el;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_browse_paths = 1;
    req.browse_paths = &bp;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c,
                    &ua_types[UA_TYPE_TRANSLATEBROWSEPATHSTONODEIDSREQUEST],
                    &req,
                    &ua_types[UA_TYPE_TRANSLATEBROWSEPATHSTONODEIDSRESPONSE],
                    &resp, &it_arena);
    itest_check(s == UA_GOOD && resp.n_results == 1
                 && resp.results[0].status_code == UA_GOOD
                 && resp.results[0].n_targets >= 1
                 && resp.results[0].targets[0].target_id.node.ns == 0
                 && resp.results[0].targets[0].target_id.node.idtype
                        == UA_IDTYPE_NUMERIC
                 && resp.results[0].targets[0].target_id.node.id.num
                        == UA_NS0ID_SERVER,
             "worker %d: TranslateBrowsePaths Root/Objects/Server = i=2253: "
             "0x%08X", cl->worker, s);
}

static void
it_register(struct it_client *cl)
{
    struct ua_register_nodes_request    req;
    struct ua_register_nodes_response   resp;
    struct ua_unregister_nodes_request  ureq;
    struct ua_unregister_nodes_response uresp;
    struct ua_nodeid                    ids[2], reg[2];
    struct ua_datavalue                 dv;
    char                                sbuf[2][64];
    ua_status                           s;

    ids[0] = ua_nodeid_str(1, "v0");
    ids[1] = ua_nodeid_num(0, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_register = 2;
    req.nodes_to_register = ids;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_REGISTERNODESREQUEST], &req,
                    &ua_types[UA_TYPE_REGISTERNODESRESPONSE], &resp,
                    &it_arena);
    if (!itest_check(s == UA_GOOD && resp.n_registered_node_ids == 2,
                  "worker %d: RegisterNodes: 0x%08X", cl->worker, s))
        return;
    /* Copy them out of the arena; string ids need their bytes too. */
    for (int i = 0; i < 2; i++) {
        reg[i] = resp.registered_node_ids[i];
        if ((reg[i].idtype == UA_IDTYPE_STRING
             || reg[i].idtype == UA_IDTYPE_OPAQUE)
            && reg[i].id.str.len > 0
            && (size_t)reg[i].id.str.len <= sizeof(sbuf[i])) {
            memcpy(sbuf[i], reg[i].id.str.data, (size_t)reg[i].id.str.len);
            reg[i].id.str.data = (uint8_t *)sbuf[i];
        }
    }
    s = it_read_one(cl, reg[0], UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD && dv.status == UA_GOOD
                 && dv.value.type == UA_BT_INT32,
             "Read through the registered id of v0");
    memset(&ureq, 0, sizeof(ureq));
    ureq.request_header.audit_entry_id.len = -1;
    ureq.n_nodes_to_unregister = 2;
    ureq.nodes_to_unregister = reg;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_UNREGISTERNODESREQUEST], &ureq,
                    &ua_types[UA_TYPE_UNREGISTERNODESRESPONSE], &uresp,
                    &it_arena);
    itest_check(s == UA_GOOD, "UnregisterNodes: 0x%08X", s);
}

/* Services we do not offer: a ServiceFault, and the channel stays open. */
static void
it_unknown(struct it_client *cl)
{
    struct ua_add_nodes_request    an;
    struct ua_add_nodes_response   anr;
    struct ua_query_first_request  qf;
    struct ua_query_first_response qfr;
    struct ua_datavalue            dv;
    ua_status                      s;

    memset(&an, 0, sizeof(an));
    an.request_header.audit_entry_id.len = -1;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_ADDNODESREQUEST], &an,
                    &ua_types[UA_TYPE_ADDNODESRESPONSE], &anr, &it_arena);
    itest_check(s == UA_BAD_SERVICE_UNSUPPORTED,
             "worker %d: AddNodes = BadServiceUnsupported (0x%08X)",
             cl->worker, s);
    memset(&qf, 0, sizeof(qf));
    qf.request_header.audit_entry_id.len = -1;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_QUERYFIRSTREQUEST], &qf,
                    &ua_types[UA_TYPE_QUERYFIRSTRESPONSE], &qfr, &it_arena);
    itest_check(s == UA_BAD_SERVICE_UNSUPPORTED,
             "QueryFirst = BadServiceUnsupported (0x%08X)", s);
    s = it_read_one(cl, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD, "the channel still serves Reads after that");
}

/* 16 Reads sent back to back, then 16 responses, in order. */
static void
it_pipeline(struct it_client *cl)
{
    enum { N = 16 };
    struct ua_read_request  req;
    struct ua_read_response resp;
    struct ua_read_value_id rv;
    struct ua_client_event  ev;
    uint32_t                ids[N];
    char                    name[N][8];
    int                     got = 0, right = 0;
    ua_status               s = UA_GOOD;

    for (int i = 0; i < N && s == UA_GOOD; i++) {
        snprintf(name[i], sizeof(name[i]), "v%d", 2 * i);
        it_read_ids_init(&rv, 1);
        rv.node_id = ua_nodeid_str(1, name[i]);
        memset(&req, 0, sizeof(req));
        req.request_header.audit_entry_id.len = -1;
        req.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
        req.n_nodes_to_read = 1;
        req.nodes_to_read = &rv;
        s = uaconn_send(&cl->c, &ua_types[UA_TYPE_READREQUEST], &req,
                        &ids[i]);
    }
    while (s == UA_GOOD && got < N) {
        s = uaconn_recv(&cl->c, &ev);
        if (s != UA_GOOD || ev.kind != UA_CLIENT_EV_MSG)
            continue;
        ua_arena_reset(&it_arena);
        if (ev.request_id == ids[got]
            && ua_client_decode(&cl->c.cl, &ev,
                                &ua_types[UA_TYPE_READRESPONSE], &resp,
                                &it_arena) == UA_GOOD
            && resp.n_results == 1 && resp.results[0].status == UA_GOOD
            && resp.results[0].value.type == UA_BT_INT32
            && *(const int32_t *)resp.results[0].value.data == 2 * got)
            right++;
        got++;
    }
    itest_check(s == UA_GOOD && got == N && right == N,
             "worker %d: %d pipelined Reads answered in order, %d right",
             cl->worker, got, right);
}

/*
 * Messages of several chunks both ways: 1000 ServerStatus values (an
 * ExtensionObject each: a response well past one 64 KiB chunk), and a
 * request of 1000 long string NodeIds (past one chunk too).
 */
static void
it_large(struct it_client *cl)
{
    enum { N = 1000 };
    static struct ua_read_value_id ids[N];
    static char                    names[N][128];
    struct ua_read_response        resp;
    int                            good = 0;
    ua_status                      s;

    it_read_ids_init(ids, N);
    for (int i = 0; i < N; i++)
        ids[i].node_id = ua_nodeid_num(0, UA_NS0ID_SERVER_SERVERSTATUS);
    s = it_read(cl, ids, N, &resp);
    for (int32_t i = 0; s == UA_GOOD && i < resp.n_results; i++)
        if (resp.results[i].status == UA_GOOD
            && resp.results[i].value.type == UA_BT_EXTENSIONOBJECT)
            good++;
    itest_check(s == UA_GOOD && good == N,
             "worker %d: Read of %d ServerStatus values (a multi-chunk "
             "response): 0x%08X, %d good", cl->worker, N, s, good);

    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "no-such-variable-%04d-"
                 "padding-padding-padding-padding-padding-padding-padding-"
                 "padding-padding", i);
        ids[i].node_id = ua_nodeid_str(1, names[i]);
    }
    s = it_read(cl, ids, N, &resp);
    good = 0;
    for (int32_t i = 0; s == UA_GOOD && i < resp.n_results; i++)
        if (resp.results[i].status == UA_BAD_NODE_ID_UNKNOWN)
            good++;
    itest_check(s == UA_GOOD && good == N,
             "Read of %d unknown long NodeIds (a multi-chunk request): "
             "0x%08X, %d BadNodeIdUnknown", N, s, good);
}

/* CloseSession, a Read without a session fails, a new session works. */
static void
it_session_cycle(struct it_client *cl)
{
    struct ua_datavalue dv;
    ua_status           s;

    s = uaconn_close_session(&cl->c);
    itest_check(s == UA_GOOD, "worker %d: CloseSession: 0x%08X", cl->worker, s);
    s = it_read_one(cl, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, &dv);
    itest_check(UA_STATUS_IS_BAD(s),
             "Read after CloseSession is refused (0x%08X)", s);
    s = uaconn_session(&cl->c);
    itest_check(s == UA_GOOD,
             "CreateSession + ActivateSession again: 0x%08X", s);
    s = it_read_one(cl, ua_nodeid_str(1, "v1"), UA_ATTR_VALUE, &dv);
    itest_check(s == UA_GOOD && dv.value.type == UA_BT_DOUBLE,
             "Read on the new session");
}

static void
it_services(struct it_client *cl)
{
    it_discovery(cl);
    it_reads(cl);
    it_attributes(cl);
    it_browse(cl);
    it_translate(cl);
    it_register(cl);
    it_unknown(cl);
    it_pipeline(cl);
    it_large(cl);
    it_session_cycle(cl);
}

/* ------------------------------------------------------------ stats */

static void
it_counters(void)
{
    static const char *const svc[] = {
        "GetEndpoints", "FindServers", "CreateSession", "ActivateSession",
        "CloseSession", "Read", "Browse", "BrowseNext",
        "TranslateBrowsePathsToNodeIds", "RegisterNodes", "UnregisterNodes"
    };
    struct it_worker    w[IT_WORKERS];
    struct ua_read_value_id rv;
    struct ua_read_response resp;
    char               *json = NULL, *prom = NULL;
    const char         *totals, *reqs, *p;
    uint64_t            v, reads = 0, bad = 0, conns = 0, a0 = 0, a1 = 0;
    uint64_t            sum = 0;
    bool                ok;
    int                 code;

    if (!itest_check(it_stats(w, &json), "GET /stats parses"))
        return;
    totals = strstr(json, "\"totals\"");
    reqs = itest_json_find(totals, "requests");
    for (size_t i = 0; i < sizeof(svc) / sizeof(svc[0]); i++) {
        ok = itest_json_u64(reqs, svc[i], &v) && v >= 1;
        itest_check(ok, "/stats totals: %s requests counted (%llu)", svc[i],
                 (unsigned long long)(ok ? v : 0));
    }
    itest_json_u64(reqs, "Read", &reads);
    itest_check(reads >= 20, "/stats totals: %llu Reads",
             (unsigned long long)reads);
    /* (The values are read before the calls that print them.) */
    ok = itest_json_u64(totals, "bad_requests", &bad) && bad >= 2;
    itest_check(ok, "/stats totals: bad_requests %llu (the unsupported "
             "services)", (unsigned long long)bad);
    ok = itest_json_u64(totals, "connections", &conns) && conns == it_ncl;
    itest_check(ok, "/stats totals: %llu connections open = %u clients",
             (unsigned long long)conns, it_ncl);
    itest_check(w[0].connections >= 1 && w[1].connections >= 1,
             "/stats: both workers hold connections (%llu, %llu)",
             (unsigned long long)w[0].connections,
             (unsigned long long)w[1].connections);
    p = itest_json_find(totals, "latency_us");
    itest_check(itest_json_u64(itest_json_find(p, "Read"), "count", &v) && v >= 1,
             "/stats totals: a latency histogram for Read");
    free(json);
    json = NULL;

    code = it_http("GET", "/metrics", &prom);
    itest_check(code == 200 && prom != NULL
                 && strstr(prom, "# TYPE uabroker_requests_total counter")
                        != NULL,
             "GET /metrics: 200, Prometheus text");
    if (prom != NULL) {
        for (int i = 0; i < IT_WORKERS; i++) {
            char pat[96];

            snprintf(pat, sizeof(pat), "uabroker_requests_total{worker=\"%d\","
                     "service=\"Read\"} ", i);
            p = strstr(prom, pat);
            if (p != NULL)
                sum += strtoull(p + strlen(pat), NULL, 10);
        }
        itest_check(sum >= reads, "/metrics: Reads per worker add up (%llu)",
                 (unsigned long long)sum);
        itest_check(strstr(prom, "uabroker_request_duration_seconds_bucket{"
                        "worker=\"0\",service=\"Read\",le=\"+Inf\"}") != NULL
                     || strstr(prom, "uabroker_request_duration_seconds_"
                               "bucket{worker=\"1\",service=\"Read\","
                               "le=\"+Inf\"}") != NULL,
                 "/metrics: a Read latency histogram");
        free(prom);
    }
    itest_check(it_http("GET", "/nope", NULL) == 404, "GET /nope: 404");
    itest_check(it_http("POST", "/stats", NULL) == 405, "POST /stats: 405");
    itest_check(it_http("HEAD", "/health", NULL) == 200, "HEAD /health: 200");

    /* Steady state: Reads cost no heap allocation in the workers. */
    for (unsigned i = 0; i < it_ncl; i++) {
        it_read_ids_init(&rv, 1);
        rv.node_id = ua_nodeid_str(1, "v2");
        for (int k = 0; k < 5; k++)
            (void)it_read(&it_cl[i], &rv, 1, &resp);
    }
    if (it_stats(w, &json)) {
        itest_json_u64(strstr(json, "\"totals\""), "allocations", &a0);
        free(json);
        json = NULL;
    }
    ok = true;
    for (unsigned i = 0; i < it_ncl; i++)
        for (int k = 0; k < 50; k++)
            if (it_read(&it_cl[i], &rv, 1, &resp) != UA_GOOD)
                ok = false;
    if (it_stats(w, &json)) {
        itest_json_u64(strstr(json, "\"totals\""), "allocations", &a1);
        free(json);
    }
    itest_check(ok && a0 != 0 && a1 == a0,
             "%u x 50 Reads in steady state: worker allocations %llu -> "
             "%llu", it_ncl, (unsigned long long)a0,
             (unsigned long long)a1);
}

/* ------------------------------------------------------------ respawn */

static void *
it_reader_main(void *arg)
{
    struct it_reader       *r = arg;
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;
    struct ua_arena         a;
    void                   *buf = malloc(1 << 16);

    if (buf == NULL)
        return NULL;
    ua_arena_init(&a, buf, 1 << 16);
    it_read_ids_init(&rv, 1);
    rv.node_id = ua_nodeid_num(0, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);
    while (!atomic_load(&r->stop)) {
        ua_status s;

        memset(&req, 0, sizeof(req));
        req.request_header.audit_entry_id.len = -1;
        req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
        req.n_nodes_to_read = 1;
        req.nodes_to_read = &rv;
        ua_arena_reset(&a);
        s = uaconn_call(&r->cl->c, &ua_types[UA_TYPE_READREQUEST], &req,
                        &ua_types[UA_TYPE_READRESPONSE], &resp, &a);
        if (s == UA_GOOD && resp.n_results == 1
            && resp.results[0].status == UA_GOOD) {
            r->reads++;
        } else {
            if (r->errors++ == 0)
                r->first_error = s;
            itest_sleep_ms(10);
        }
    }
    free(buf);
    return NULL;
}

static void
it_kill_worker(void)
{
    struct it_worker  w[IT_WORKERS];
    struct it_reader  rd;
    struct it_client *keep = NULL, *victim_cl = NULL, *cl;
    struct ua_datavalue dv;
    pthread_t         th;
    uint64_t          end;
    int               victim = 0, other = 1, old_pid;
    bool              respawned = false, healthy = false, served = false;
    ua_status         s;

    bool              ok;

    memset(w, 0, sizeof(w));
    ok = it_stats(w, NULL) && w[0].pid > 0 && w[1].pid > 0;
    if (!itest_check(ok, "/stats: both worker pids (%d, %d)", w[0].pid,
                  w[1].pid))
        return;
    old_pid = w[victim].pid;
    for (unsigned i = 0; i < it_ncl; i++) {
        if (it_cl[i].worker == other && keep == NULL)
            keep = &it_cl[i];
        else if (it_cl[i].worker == victim && victim_cl == NULL)
            victim_cl = &it_cl[i];
    }
    if (!itest_check(keep != NULL && victim_cl != NULL,
                  "a client on each worker"))
        return;

    memset(&rd, 0, sizeof(rd));
    rd.cl = keep;
    atomic_init(&rd.stop, false);
    if (pthread_create(&th, NULL, it_reader_main, &rd) != 0)
        itest_fatal("pthread_create failed");
    itest_sleep_ms(300);
    printf("# kill -9 worker %d (pid %d)\n", victim, old_pid);
    kill(old_pid, SIGKILL);

    /* Respawned: a new pid, restarts 1, /health back to 200. */
    end = itest_ms() + IT_RESPAWN_WAIT_MS;
    while (itest_ms() < end) {
        if (it_stats(w, NULL) && w[victim].pid > 0
            && w[victim].pid != old_pid && strcmp(w[victim].state, "up") == 0
            && w[victim].restarts == 1) {
            respawned = true;
            break;
        }
        itest_sleep_ms(50);
    }
    itest_check(respawned, "worker %d respawned: pid %d -> %d, state %s, "
             "restarts %llu", victim, old_pid, w[victim].pid,
             w[victim].state, (unsigned long long)w[victim].restarts);
    healthy = it_wait_health(IT_RESPAWN_WAIT_MS);
    itest_check(healthy, "/health back to 200 after the respawn");
    itest_sleep_ms(300);
    atomic_store(&rd.stop, true);
    pthread_join(th, NULL);
    itest_check(rd.errors == 0 && rd.reads > 0,
             "the other worker's client kept reading: %llu reads, %llu "
             "errors (first 0x%08X)", (unsigned long long)rd.reads,
             (unsigned long long)rd.errors, rd.first_error);
    itest_check(w[other].restarts == 0, "the other worker was not restarted");

    /* Every client of the other worker still works; the victim's don't. */
    {
        bool all = true;

        for (unsigned i = 0; i < it_ncl; i++)
            if (it_cl[i].worker == other
                && it_read_one(&it_cl[i], ua_nodeid_str(1, "v0"),
                               UA_ATTR_VALUE, &dv) != UA_GOOD)
                all = false;
        itest_check(all, "every client of worker %d still reads", other);
    }
    victim_cl->c.timeout_ms = 2000;
    s = it_read_one(victim_cl, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, &dv);
    itest_check(s != UA_GOOD, "a client of the killed worker lost its "
             "connection (0x%08X)", s);
    for (unsigned i = 0; i < it_ncl; i++)
        if (it_cl[i].worker == victim) {
            uaconn_clear(&it_cl[i].c);
            it_cl[i].used = false;
        }

    /* New connections reach the new worker too. */
    for (int tries = 0; tries < 32 && !served; tries++) {
        cl = it_connect();
        if (cl == NULL)
            break;
        if (cl->worker == victim)
            served = it_read_one(cl, ua_nodeid_str(1, "v1"), UA_ATTR_VALUE,
                                 &dv) == UA_GOOD
                     && dv.value.type == UA_BT_DOUBLE;
    }
    itest_check(served, "the respawned worker %d serves a new connection",
             victim);
}

/* ------------------------------------------------------------ stop */

static void
it_stop_broker(void)
{
    struct it_worker w[IT_WORKERS];
    uint64_t         start;
    int              status, pids[IT_WORKERS] = { 0, 0 };
    bool             gone = true;

    if (it_stats(w, NULL))
        for (int i = 0; i < IT_WORKERS; i++)
            pids[i] = w[i].pid;
    /* Close a few clients the polite way, leave the rest open. */
    for (unsigned i = 0; i < it_ncl && i < 2; i++)
        if (it_cl[i].used)
            uaconn_close(&it_cl[i].c);
    start = itest_ms();
    status = itest_stop(it_broker, IT_STOP_WAIT_MS);
    itest_check(status == 0, "SIGTERM: the broker exited %d in %llu ms "
                "(-1: killed after the wait or by a signal)", status,
                (unsigned long long)(itest_ms() - start));
    it_broker = -1;
    for (int i = 0; i < IT_WORKERS; i++)
        if (pids[i] > 0 && kill(pids[i], 0) == 0)
            gone = false;
    itest_check(pids[0] > 0 && pids[1] > 0 && gone,
             "the workers (pids %d, %d) are gone", pids[0], pids[1]);
}

/* ------------------------------------------------------------ main */

int
main(int argc, char **argv)
{
    struct it_worker  w[IT_WORKERS];
    struct it_client *first[IT_WORKERS] = { NULL, NULL };
    char              bin[PATH_MAX];
    void             *abuf;
    int               per[IT_WORKERS] = { 0, 0 };

    itest_init("integ_server");
    (void)argc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    itest_guard(IT_WATCHDOG_S, it_log);
    abuf = malloc(IT_ARENA);
    if (abuf == NULL)
        itest_fatal("out of memory");
    ua_arena_init(&it_arena, abuf, IT_ARENA);

    itest_broker_bin(argv[0], bin, sizeof(bin));
    it_start_broker(bin);

    /* 1. Up and healthy. */
    if (!itest_check(it_wait_health(IT_HEALTH_WAIT_MS),
                  "/health 200 after start"))
        itest_fatal("the broker did not become healthy");
    memset(w, 0, sizeof(w));
    itest_check(it_stats(w, NULL) && strcmp(w[0].state, "up") == 0
                 && strcmp(w[1].state, "up") == 0 && w[0].pid > 0
                 && w[1].pid > 0 && w[0].pid != w[1].pid,
             "/stats: 2 workers up");
    printf("# workers: pids %d, %d\n", w[0].pid, w[1].pid);

    /* 2. Clients until each worker has two (SO_REUSEPORT spreads them). */
    while (it_ncl < IT_CLIENTS_MAX && (per[0] < 2 || per[1] < 2)) {
        struct it_client *cl = it_connect();

        if (cl == NULL)
            itest_fatal("cannot connect client %u", it_ncl);
        if (cl->worker >= 0) {
            per[cl->worker]++;
            if (first[cl->worker] == NULL)
                first[cl->worker] = cl;
        }
    }
    if (!itest_check(per[0] >= 2 && per[1] >= 2,
                  "%u clients: %d on worker 0, %d on worker 1", it_ncl,
                  per[0], per[1]))
        itest_fatal("the kernel never spread connections over both workers");

    /* 3. Every service, on each worker. */
    for (int i = 0; i < IT_WORKERS; i++)
        it_services(first[i]);

    /* 4. The counters moved. */
    it_counters();

    /* 5. kill -9 a worker. */
    it_kill_worker();

    /* 6. Clean stop. */
    it_stop_broker();

    for (unsigned i = 0; i < it_ncl; i++)
        uaconn_clear(&it_cl[i].c);
    free(abuf);
    return itest_finish();
}
