/*
 * tests/integ/integ_methods.c: method calls forwarded to the method owner
 * (worker/svc_call.c, broker/methods.c, docs/feed.md "Methods"), on
 * loopback.
 *
 *   1. starts `uabroker -w 2 --nodeset tank.xml` (a small model written
 *      here: Objects/Tank with a method Add(a Double, b UInt32) -> sum
 *      Double) with methods.timeout_ms 1000 (anonymous sessions may call:
 *      security.anonymous_write); the model's namespace index from
 *      NamespaceArray;
 *   2. before any owner: Tank.Add is answered at once BadNoCommunication,
 *      Server.SetSubscriptionDurable (a namespace-0 method the worker does
 *      not serve, so forwarded too) BadNotImplemented;
 *   3. starts `uabroker methods --exec handler.sh` (a shell script: the
 *      output is the sum of the two arguments; Add with a = -1 answers
 *      status=BadOutOfRange; subscriptionId 999 sleeps past the timeout);
 *   4. a client on each worker (told apart by /stats): Tank.Add and
 *      SetSubscriptionDurable on both return Good with output a + b; 50
 *      more cost the worker no heap allocation; the owner's own status
 *      comes through;
 *   5. an Int32 for the Double argument: BadInvalidArgument with
 *      inputArgumentResults [BadTypeMismatch, Good], without the owner;
 *   6. a call the owner does not answer in time: BadTimeout after about
 *      methods.timeout_ms; meanwhile a Read sent after it on the same
 *      channel is answered at once (the worker is not stalled);
 *   7. /stats counts the calls, the timeout and the no-owner refusal;
 *      /metrics has uabroker_methods_calls_total;
 *   8. the owner replaced by `uabroker methods --stdio` with a shell
 *      coprocess speaking the protocol: three Calls in flight at once, each
 *      answered with its own sum;
 *   9. SIGTERM: the broker exits 0; no sanitizer report in the logs.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_methods: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IM_WATCHDOG_S   120
#define IM_START_MS     30000
#define IM_ARENA        (1u << 20)
#define IM_TIMEOUT_MS   1000
#define IM_CLIENTS      24

static char            im_dir[PATH_MAX];
static char            im_log[PATH_MAX + 16];
static char            im_olog[PATH_MAX + 16];
static char            im_bin[PATH_MAX];
static uint16_t        im_sport;
static uint16_t        im_ns;          /* the model's namespace index */
static struct ua_arena im_arena;

#define IM_URI "http://example.com/UA/IntegTank/"

/* The model: Objects/Tank, its method Add(a Double, b UInt32) -> sum. */
static const char im_model[] =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<UANodeSet xmlns=\"http://opcfoundation.org/UA/2011/03/UANodeSet.xsd\"\n"
    "  xmlns:uax=\"http://opcfoundation.org/UA/2008/02/Types.xsd\">\n"
    "  <NamespaceUris><Uri>" IM_URI "</Uri></NamespaceUris>\n"
    "  <Aliases>\n"
    "    <Alias Alias=\"Argument\">i=296</Alias>\n"
    "    <Alias Alias=\"Organizes\">i=35</Alias>\n"
    "    <Alias Alias=\"HasTypeDefinition\">i=40</Alias>\n"
    "    <Alias Alias=\"HasProperty\">i=46</Alias>\n"
    "    <Alias Alias=\"HasComponent\">i=47</Alias>\n"
    "  </Aliases>\n"
    "  <UAObject NodeId=\"ns=1;s=Tank\" BrowseName=\"1:Tank\">\n"
    "    <DisplayName>Tank</DisplayName>\n"
    "    <References>\n"
    "      <Reference ReferenceType=\"Organizes\" IsForward=\"false\">"
    "i=85</Reference>\n"
    "      <Reference ReferenceType=\"HasTypeDefinition\">i=58</Reference>\n"
    "      <Reference ReferenceType=\"HasComponent\">ns=1;s=Tank.Add"
    "</Reference>\n"
    "    </References>\n"
    "  </UAObject>\n"
    "  <UAMethod NodeId=\"ns=1;s=Tank.Add\" BrowseName=\"1:Add\" "
    "ParentNodeId=\"ns=1;s=Tank\">\n"
    "    <DisplayName>Add</DisplayName>\n"
    "    <References>\n"
    "      <Reference ReferenceType=\"HasProperty\">ns=1;s=Tank.Add.In"
    "</Reference>\n"
    "      <Reference ReferenceType=\"HasProperty\">ns=1;s=Tank.Add.Out"
    "</Reference>\n"
    "    </References>\n"
    "  </UAMethod>\n"
    "  <UAVariable NodeId=\"ns=1;s=Tank.Add.In\" BrowseName=\"InputArguments\""
    " ParentNodeId=\"ns=1;s=Tank.Add\" DataType=\"Argument\" "
    "ValueRank=\"1\" ArrayDimensions=\"2\">\n"
    "    <DisplayName>InputArguments</DisplayName>\n"
    "    <References><Reference ReferenceType=\"HasTypeDefinition\">i=68"
    "</Reference></References>\n"
    "    <Value><uax:ListOfExtensionObject>\n"
    "      <uax:ExtensionObject><uax:TypeId><uax:Identifier>i=297"
    "</uax:Identifier></uax:TypeId><uax:Body><uax:Argument>"
    "<uax:Name>a</uax:Name><uax:DataType><uax:Identifier>i=11"
    "</uax:Identifier></uax:DataType><uax:ValueRank>-1</uax:ValueRank>"
    "<uax:ArrayDimensions/></uax:Argument></uax:Body></uax:ExtensionObject>\n"
    "      <uax:ExtensionObject><uax:TypeId><uax:Identifier>i=297"
    "</uax:Identifier></uax:TypeId><uax:Body><uax:Argument>"
    "<uax:Name>b</uax:Name><uax:DataType><uax:Identifier>i=7"
    "</uax:Identifier></uax:DataType><uax:ValueRank>-1</uax:ValueRank>"
    "<uax:ArrayDimensions/></uax:Argument></uax:Body></uax:ExtensionObject>\n"
    "    </uax:ListOfExtensionObject></Value>\n"
    "  </UAVariable>\n"
    "  <UAVariable NodeId=\"ns=1;s=Tank.Add.Out\" "
    "BrowseName=\"OutputArguments\" ParentNodeId=\"ns=1;s=Tank.Add\" "
    "DataType=\"Argument\" ValueRank=\"1\" ArrayDimensions=\"1\">\n"
    "    <DisplayName>OutputArguments</DisplayName>\n"
    "    <References><Reference ReferenceType=\"HasTypeDefinition\">i=68"
    "</Reference></References>\n"
    "    <Value><uax:ListOfExtensionObject>\n"
    "      <uax:ExtensionObject><uax:TypeId><uax:Identifier>i=297"
    "</uax:Identifier></uax:TypeId><uax:Body><uax:Argument>"
    "<uax:Name>sum</uax:Name><uax:DataType><uax:Identifier>i=11"
    "</uax:Identifier></uax:DataType><uax:ValueRank>-1</uax:ValueRank>"
    "<uax:ArrayDimensions/></uax:Argument></uax:Body></uax:ExtensionObject>\n"
    "    </uax:ListOfExtensionObject></Value>\n"
    "  </UAVariable>\n"
    "</UANodeSet>\n";

/* Tank.Add(a, b): its one result; a_i32: a as an Int32. */
static struct ua_call_method_result
im_add(struct uaconn *c, double a, uint32_t b, bool a_i32)
{
    struct ua_call_request        req;
    struct ua_call_method_request m;
    struct ua_call_response       resp;
    struct ua_variant             args[2];
    struct ua_call_method_result  r;
    int32_t                       ai = (int32_t)a;
    ua_status                     s;

    memset(&m, 0, sizeof(m));
    m.object_id = ua_nodeid_str(im_ns, "Tank");
    m.method_id = ua_nodeid_str(im_ns, "Tank.Add");
    if (a_i32)
        ua_variant_set_scalar(&args[0], &ai, UA_BT_INT32);
    else
        ua_variant_set_scalar(&args[0], &a, UA_BT_DOUBLE);
    ua_variant_set_scalar(&args[1], &b, UA_BT_UINT32);
    m.n_input_arguments = 2;
    m.input_arguments = args;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_methods_to_call = 1;
    req.methods_to_call = &m;
    memset(&r, 0, sizeof(r));
    ua_arena_reset(&im_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CALLREQUEST], &req,
                    &ua_types[UA_TYPE_CALLRESPONSE], &resp, &im_arena);
    if (s != UA_GOOD || resp.n_results != 1) {
        r.status_code = s != UA_GOOD ? s : UA_BAD_UNEXPECTED_ERROR;
        return r;
    }
    return resp.results[0];
}

/* The Double output of r, or -1e300. */
static double
im_dout(const struct ua_call_method_result *r)
{
    if (r->status_code != UA_GOOD || r->n_output_arguments != 1
        || r->output_arguments[0].type != UA_BT_DOUBLE
        || r->output_arguments[0].is_array)
        return -1e300;
    return *(const double *)r->output_arguments[0].data;
}

/* The model's namespace index from Server.NamespaceArray; 0: absent. */
static uint16_t
im_find_ns(struct uaconn *c)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;
    const struct ua_string *u;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_num(0, UA_NS0ID_SERVER_NAMESPACEARRAY);
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(&im_arena);
    if (uaconn_call(c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &im_arena)
            != UA_GOOD
        || resp.n_results != 1 || resp.results[0].value.type != UA_BT_STRING
        || !resp.results[0].value.is_array)
        return 0;
    u = resp.results[0].value.data;
    for (int32_t i = 0; i < resp.results[0].value.n; i++)
        if (u[i].len == (int32_t)strlen(IM_URI)
            && memcmp(u[i].data, IM_URI, strlen(IM_URI)) == 0)
            return (uint16_t)i;
    return 0;
}

/* One Call of Server.SetSubscriptionDurable(a, b); b_i32: b as Int32. */
static void
im_request(struct ua_call_request *req, struct ua_call_method_request *m,
           struct ua_variant *args, uint32_t *a, uint32_t *b, bool b_i32)
{
    memset(m, 0, sizeof(*m));
    m->object_id = ua_nodeid_num(0, UA_NS0ID_SERVER);
    m->method_id = ua_nodeid_num(0, UA_NS0ID_SERVER_SETSUBSCRIPTIONDURABLE);
    ua_variant_set_scalar(&args[0], a, b_i32 ? UA_BT_INT32 : UA_BT_UINT32);
    ua_variant_set_scalar(&args[1], b, UA_BT_UINT32);
    m->n_input_arguments = 2;
    m->input_arguments = args;
    memset(req, 0, sizeof(*req));
    req->request_header.audit_entry_id.len = -1;
    req->n_methods_to_call = 1;
    req->methods_to_call = m;
}

/* The Call, waited for: its one result (status Bad on a service error). */
static struct ua_call_method_result
im_call(struct uaconn *c, uint32_t a, uint32_t b, bool a_i32)
{
    struct ua_call_request        req;
    struct ua_call_method_request m;
    struct ua_call_response       resp;
    struct ua_variant             args[2];
    struct ua_call_method_result  r;
    ua_status                     s;

    memset(&r, 0, sizeof(r));
    im_request(&req, &m, args, &a, &b, a_i32);
    ua_arena_reset(&im_arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_CALLREQUEST], &req,
                    &ua_types[UA_TYPE_CALLRESPONSE], &resp, &im_arena);
    if (s != UA_GOOD || resp.n_results != 1) {
        r.status_code = s != UA_GOOD ? s : UA_BAD_UNEXPECTED_ERROR;
        return r;
    }
    return resp.results[0];
}

/* The output of r when it is one UInt32, else UINT32_MAX. */
static uint32_t
im_out(const struct ua_call_method_result *r)
{
    if (r->status_code != UA_GOOD || r->n_output_arguments != 1
        || r->output_arguments[0].type != UA_BT_UINT32
        || r->output_arguments[0].is_array)
        return UINT32_MAX;
    return *(const uint32_t *)r->output_arguments[0].data;
}

static bool
im_fanout_u64(const char *key, uint64_t *out)
{
    char *body = NULL;
    bool  ok;

    if (itest_http(im_sport, "GET", "/stats", &body) != 200 || body == NULL) {
        free(body);
        return false;
    }
    ok = itest_json_u64(strstr(body, "\"fanout\": {"), key, out);
    free(body);
    return ok;
}

/* The handler the owner runs per call: $1 the method, $2 $3 the args. */
static void
im_handler(char *path, size_t cap)
{
    static const char script[] =
        "#!/bin/sh\n"
        "# integ_methods: $1 the method, $2 $3 its arguments\n"
        "case \"$1\" in\n"
        "*Tank.Add)\n"
        "    if [ \"$2\" = -1 ]; then echo status=BadOutOfRange; exit 0; fi\n"
        "    awk \"BEGIN { printf \\\"%.17g\\\\n\\\", $2 + $3 }\" ;;\n"
        "*)  if [ \"$2\" = 999 ]; then sleep 3; fi\n"
        "    echo $(($2 + $3)) ;;\n"
        "esac\n";

    snprintf(path, cap, "%s/handler.sh", im_dir);
    if (itest_write_file(path, (const uint8_t *)script, strlen(script)) != 0
        || chmod(path, 0700) != 0)
        itest_fatal("cannot write %s", path);
}

/* Decode one response event's body (type NodeId, then the response). */
static bool
im_decode(const struct ua_client_event *ev, uint32_t want, void *resp)
{
    struct ua_nodeid tid;
    size_t           used, u2;

    if (ua_decode(ev->body, ev->len, &used, &tid, &ua_types[UA_TYPE_NODEID],
                  &im_arena, NULL) != UA_GOOD
        || tid.idtype != UA_IDTYPE_NUMERIC
        || tid.id.num != ua_types[want].binary_id)
        return false;
    return ua_decode(ev->body + used, ev->len - used, &u2, resp,
                     &ua_types[want], &im_arena, NULL) == UA_GOOD;
}

/* 6. A call nobody answers in time, and a Read behind it. */
static void
im_timeout(struct uaconn *c)
{
    struct ua_call_request        req;
    struct ua_call_method_request m;
    struct ua_variant             args[2];
    struct ua_read_value_id       rv;
    struct ua_read_request        rreq;
    struct ua_client_event        ev;
    uint32_t                      a = 999, b = 1, call_id = 0, read_id = 0;
    uint64_t                      t0, t_read = 0, t_call = 0;
    ua_status                     call_st = UA_GOOD;
    ua_status                     read_st = UA_BAD_UNEXPECTED_ERROR;

    im_request(&req, &m, args, &a, &b, false);
    memset(&rv, 0, sizeof(rv));
    rv.node_id = ua_nodeid_num(0, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&rreq, 0, sizeof(rreq));
    rreq.request_header.audit_entry_id.len = -1;
    rreq.n_nodes_to_read = 1;
    rreq.nodes_to_read = &rv;
    ua_arena_reset(&im_arena);
    t0 = itest_ms();
    if (uaconn_send(c, &ua_types[UA_TYPE_CALLREQUEST], &req, &call_id)
            != UA_GOOD
        || uaconn_send(c, &ua_types[UA_TYPE_READREQUEST], &rreq, &read_id)
               != UA_GOOD)
        itest_fatal("sending the Call and the Read failed");
    while ((t_read == 0 || t_call == 0) && itest_ms() - t0 < 10000) {
        if (uaconn_recv(c, &ev) != UA_GOOD)
            break;
        if (ev.request_id == read_id) {
            struct ua_read_response rr;

            t_read = itest_ms();
            if (im_decode(&ev, UA_TYPE_READRESPONSE, &rr)
                && rr.n_results == 1)
                read_st = rr.results[0].mask & UA_DV_STATUS
                              ? rr.results[0].status : UA_GOOD;
        } else if (ev.request_id == call_id) {
            struct ua_call_response cr;

            t_call = itest_ms();
            call_st = im_decode(&ev, UA_TYPE_CALLRESPONSE, &cr)
                          && cr.n_results == 1
                          ? cr.results[0].status_code : UA_GOOD;
        }
    }
    itest_check(t_read != 0 && read_st == UA_GOOD && t_read - t0 < 500
                    && (t_call == 0 || t_read <= t_call),
                "a Read sent after a waiting Call on the same channel is "
                "answered first, in %llu ms",
                (unsigned long long)(t_read - t0));
    itest_check(t_call != 0 && call_st == UA_BAD_TIMEOUT
                    && t_call - t0 >= IM_TIMEOUT_MS - 50
                    && t_call - t0 < IM_TIMEOUT_MS + 1500,
                "an owner that does not answer: BadTimeout (0x%08X) after "
                "%llu ms (methods.timeout_ms %d)", call_st,
                (unsigned long long)(t_call - t0), IM_TIMEOUT_MS);
}

/* `uabroker methods --stdio` with a shell coprocess on two fifos (it
 * answers a + b for every call); the shell's pid (its group is killed). */
static pid_t
im_stdio_owner(void)
{
    static char cmd[4 * PATH_MAX + 512];
    static const char co[] =
        "#!/bin/sh\n"
        "# integ_methods: the protocol on stdin/stdout (docs/feed.md)\n"
        "while read -r l; do\n"
        "  case \"$l\" in\n"
        "  call\\ *) id=${l#call }; n=0; a=0; b=0 ;;\n"
        "  end) printf 'result %s Good\\n%s\\nend\\n' \"$id\" $((a + b)) ;;\n"
        "  *) n=$((n + 1))\n"
        "     if [ $n -eq 3 ]; then a=$l; elif [ $n -eq 4 ]; then b=$l; fi ;;\n"
        "  esac\n"
        "done\n";
    char path[PATH_MAX + 16];

    snprintf(path, sizeof(path), "%s/co.sh", im_dir);
    if (itest_write_file(path, (const uint8_t *)co, strlen(co)) != 0
        || chmod(path, 0700) != 0)
        itest_fatal("cannot write %s", path);
    snprintf(cmd, sizeof(cmd),
             "d='%s'; mkfifo \"$d/f1\" \"$d/f2\" && "
             "{ \"$d/co.sh\" < \"$d/f1\" > \"$d/f2\" & } && "
             "exec '%s' --runtime-dir \"$d\" methods --stdio "
             "> \"$d/f1\" < \"$d/f2\"", im_dir, im_bin);
    {
        char *const av[] = { "/bin/sh", "-c", cmd, NULL };

        return itest_spawn(im_olog, av);
    }
}

/* Three Calls sent at once on c, then their answers (any order). */
static void
im_three(struct uaconn *c)
{
    struct ua_call_request        req[3];
    struct ua_call_method_request m[3];
    struct ua_variant             args[3][2];
    uint32_t                      a[3] = { 100, 200, 300 }, b = 5, id[3];
    unsigned                      ok = 0, seen = 0;
    uint64_t                      t0 = itest_ms();

    ua_arena_reset(&im_arena);
    for (int k = 0; k < 3; k++) {
        im_request(&req[k], &m[k], args[k], &a[k], &b, false);
        if (uaconn_send(c, &ua_types[UA_TYPE_CALLREQUEST], &req[k], &id[k])
            != UA_GOOD)
            itest_fatal("sending three Calls failed");
    }
    while (seen < 3 && itest_ms() - t0 < 10000) {
        struct ua_client_event  ev;
        struct ua_call_response cr;

        if (uaconn_recv(c, &ev) != UA_GOOD)
            break;
        for (int k = 0; k < 3; k++) {
            if (ev.request_id != id[k])
                continue;
            seen++;
            if (im_decode(&ev, UA_TYPE_CALLRESPONSE, &cr)
                && cr.n_results == 1 && im_out(&cr.results[0]) == a[k] + b)
                ok++;
        }
    }
    itest_check(ok == 3, "--stdio: three Calls in flight at once, each "
                "answered with its own sum (%u of 3)", ok);
}

int
main(int argc, char **argv)
{
    static struct uaconn         cl[IM_CLIENTS];
    struct uaconn               *on[2] = { NULL, NULL };
    struct ua_call_method_result r;
    char                         handler[PATH_MAX + 16];
    uint16_t                     oport;
    uint64_t                     v = 0, v2 = 0;
    pid_t                        broker, owner;
    int                          ncl = 0, rc;
    bool                         up = false;

    itest_init("integ_methods");
    (void)argc;
    itest_guard(IM_WATCHDOG_S, im_log);
    ua_arena_init(&im_arena, malloc(IM_ARENA), IM_ARENA);
    itest_broker_bin(argv[0], im_bin, sizeof(im_bin));
    itest_tmpdir("uabroker-methods", im_dir, sizeof(im_dir));
    snprintf(im_log, sizeof(im_log), "%s/broker.log", im_dir);
    snprintf(im_olog, sizeof(im_olog), "%s/owner.log", im_dir);

    /* 1. The broker, with the model. */
    {
        static char model[PATH_MAX + 16];

        snprintf(model, sizeof(model), "%s/tank.xml", im_dir);
        if (itest_write_file(model, (const uint8_t *)im_model,
                             strlen(im_model)) != 0)
            itest_fatal("cannot write %s", model);
        const char *const extra[] = {
            "--nodeset", model,
            "--set", "methods.timeout_ms=1000",
            "--set", "security.anonymous_write=true", NULL
        };

        broker = itest_broker_start(im_bin, 2, im_dir, im_log, extra,
                                    IM_START_MS, &oport, &im_sport);
    }
    if (uaconn_start_retry(&cl[0], "127.0.0.1", oport, IM_START_MS)
        != UA_GOOD)
        itest_fatal("no session");
    ncl = 1;

    im_ns = im_find_ns(&cl[0]);
    itest_check(im_ns != 0, "the model's namespace is %u", im_ns);

    /* 2. No owner yet. */
    {
        uint64_t t0 = itest_ms();

        r = im_add(&cl[0], 1.5, 2, false);
        itest_check(r.status_code == UA_BAD_NO_COMMUNICATION
                        && itest_ms() - t0 < 500,
                    "before any owner: Tank.Add BadNoCommunication at once "
                    "(0x%08X)", r.status_code);
        t0 = itest_ms();
        r = im_call(&cl[0], 1, 2, false);
        itest_check(r.status_code == UA_BAD_NOT_IMPLEMENTED
                        && itest_ms() - t0 < 500,
                    "before any owner: BadNotImplemented at once (0x%08X)",
                    r.status_code);
    }

    /* 3. The owner. */
    im_handler(handler, sizeof(handler));
    {
        char *const av[] = { im_bin, "--runtime-dir", im_dir,
                             "--set", "methods.timeout_ms=1000", "methods",
                             "--exec", handler, NULL };

        owner = itest_spawn(im_olog, av);
    }
    for (uint64_t t0 = itest_ms(); !up && itest_ms() - t0 < 10000;) {
        r = im_call(&cl[0], 1, 2, false);
        up = r.status_code != UA_BAD_NOT_IMPLEMENTED;
        if (!up)
            itest_sleep_ms(100);
    }
    itest_check(up && im_out(&r) == 3, "the owner answers: 1 + 2 = %u "
                "(0x%08X)", im_out(&r), r.status_code);

    /* 4. A client on each worker. */
    while ((on[0] == NULL || on[1] == NULL) && ncl < IM_CLIENTS) {
        uint64_t before[2] = { 0, 0 }, after[2] = { 0, 0 };

        for (int w = 0; w < 2; w++)
            itest_worker_u64(im_sport, w, "connections_total", &before[w]);
        uaconn_init(&cl[ncl]);
        if (uaconn_start(&cl[ncl], "127.0.0.1", oport) != UA_GOOD)
            itest_fatal("client %d: no session", ncl);
        for (int w = 0; w < 2; w++)
            if (itest_worker_u64(im_sport, w, "connections_total",
                                 &after[w])
                && after[w] > before[w] && on[w] == NULL)
                on[w] = &cl[ncl];
        ncl++;
    }
    if (on[0] == NULL || on[1] == NULL)
        itest_fatal("no client on each worker after %d connections", ncl);
    for (int w = 0; w < 2; w++) {
        r = im_add(on[w], 40.25 + w, 2, false);
        itest_check(im_dout(&r) == 42.25 + w,
                    "worker %d: Tank.Add -> Good, %.2f + 2 = %g (0x%08X)", w,
                    40.25 + w, im_dout(&r), r.status_code);
        r = im_call(on[w], 40 + (uint32_t)w, 2, false);
        itest_check(im_out(&r) == 42u + (uint32_t)w,
                    "worker %d: SetSubscriptionDurable -> Good, %u + 2 = %u "
                    "(0x%08X)", w, 40 + w, im_out(&r), r.status_code);
    }
    /* No heap per call in the worker: 50 more cost no allocation. */
    {
        uint64_t a0 = 0, a1 = 0;
        unsigned good = 0;

        itest_worker_u64(im_sport, 0, "allocations", &a0);
        for (int k = 0; k < 50; k++) {
            r = im_add(on[0], k, 1, false);
            good += im_dout(&r) == k + 1.0;
        }
        itest_worker_u64(im_sport, 0, "allocations", &a1);
        itest_check(good == 50 && a1 == a0, "50 more Calls on worker 0: all "
                    "Good, %llu worker allocations",
                    (unsigned long long)(a1 - a0));
    }
    r = im_add(on[1], -1, 2, false);
    itest_check(r.status_code == UA_BAD_OUT_OF_RANGE
                    && r.n_output_arguments == 0,
                "the owner's status=BadOutOfRange comes through (0x%08X)",
                r.status_code);

    /* 5. The wrong type: an Int32 for the Double. */
    r = im_add(on[1], 5, 6, true);
    itest_check(r.status_code == UA_BAD_INVALID_ARGUMENT
                    && r.n_input_argument_results == 2
                    && r.input_argument_results[0] == UA_BAD_TYPE_MISMATCH
                    && r.input_argument_results[1] == UA_GOOD,
                "an Int32 for the Double: BadInvalidArgument (0x%08X), "
                "inputArgumentResults [BadTypeMismatch, Good]",
                r.status_code);

    /* 6. The timeout, and a Read that does not wait for it. */
    im_timeout(on[0]);
    /* The owner is free again after its handler was killed. */
    itest_sleep_ms(2500);
    r = im_call(on[1], 7, 8, false);
    itest_check(im_out(&r) == 15, "after the timeout the owner answers "
                "again: 7 + 8 = %u (0x%08X)", im_out(&r), r.status_code);

    /* 7. The counters. */
    up = im_fanout_u64("methods_calls", &v)
         && im_fanout_u64("methods_timeouts", &v2);
    itest_check(up && v >= 59 && v2 == 1, "/stats: methods_calls %llu, "
                "methods_timeouts %llu", (unsigned long long)v,
                (unsigned long long)v2);
    up = im_fanout_u64("methods_no_owner", &v);
    itest_check(up && v >= 1, "/stats: methods_no_owner %llu",
                (unsigned long long)v);
    {
        char *body = NULL;

        itest_check(itest_http(im_sport, "GET", "/metrics", &body) == 200
                        && body != NULL
                        && strstr(body, "uabroker_methods_calls_total ")
                               != NULL
                        && strstr(body, "uabroker_methods_timeouts_total 1")
                               != NULL,
                    "/metrics: uabroker_methods_calls_total, "
                    "uabroker_methods_timeouts_total 1");
        free(body);
    }

    /* 8. A coprocess behind --stdio. */
    itest_kill(owner);
    owner = im_stdio_owner();
    up = false;
    for (uint64_t t0 = itest_ms(); !up && itest_ms() - t0 < 15000;) {
        r = im_call(on[0], 1, 1, false);
        up = im_out(&r) == 2;
    }
    itest_check(up, "--stdio: the coprocess answers 1 + 1 = 2");
    im_three(on[1]);

    /* 9. Stop. */
    for (int i = 0; i < ncl; i++)
        uaconn_clear(&cl[i]);
    itest_kill(owner);
    rc = itest_stop(broker, 10000);
    itest_check(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
                "SIGTERM: the broker exits 0 (status 0x%x)", rc);
    /* A sanitizer build (SAN=1) reports into the logs. */
    {
        static uint8_t text[1 << 20];
        const char    *logs[2] = { im_log, im_olog };
        bool           clean = true;

        for (int k = 0; k < 2; k++) {
            size_t len = 0;

            if (itest_read_file(logs[k], text, sizeof(text) - 1, &len) != 0)
                continue;
            text[len] = '\0';
            if (strstr((char *)text, "AddressSanitizer") != NULL
                || strstr((char *)text, "LeakSanitizer") != NULL
                || strstr((char *)text, "runtime error:") != NULL)
                clean = false;
        }
        itest_check(clean, "no sanitizer report in the broker's and the "
                    "owner's logs");
    }
    return itest_finish();
}
