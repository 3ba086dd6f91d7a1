/*
 * tests/integ/integ_fanout.c: the fan-out's data path on loopback.
 *
 * Starts `uabroker -w 2` (next to this test's build directory, like
 * integ_server; UABROKER_BIN overrides) in a process group of its own with
 * a private runtime directory, then:
 *
 *   1. a client on each worker (A and B, told apart by /stats deltas);
 *   2. read-your-writes across workers: 100 times, A writes v0 (Int32) and
 *      v1 (Double) with new values and B reads them back at once, then the
 *      other way round;
 *   3. a Write of every Static/Scalar and Static/Array variable (every
 *      built-in type) on A, read back on B and compared;
 *   4. the refusals: BadTypeMismatch (wrong type, array to scalar),
 *      BadNotWritable (a read-only Server variable, a non-Value
 *      attribute), BadAttributeIdInvalid, BadNodeIdUnknown,
 *      BadNothingToDo, BadTooManyOperations, BadWriteNotSupported
 *      (ServerTimestamp), IndexRange writes;
 *   5. `uabroker feed` (report mode and --push) changes values a Read
 *      then sees; a bad line is reported with its number;
 *   6. allocations: 2000 more Writes cost the worker and the broker no
 *      heap allocation;
 *   7. notifications and a dead worker: the test attaches the segment
 *      (through /proc/<worker>/fd/<segment fd>), sets worker 1's interest
 *      bits on v0..v199, stops worker 1 (SIGSTOP) while A writes and the
 *      feed pushes, so its notification ring and the pool fill (blocks
 *      held, blocks_exhausted / notifications_dropped counted), then
 *      kill -9s it: the broker reclaims its block references and /stats
 *      shows every block free again, the slot respawns;
 *   8. SIGTERM: clean stop.
 *
 * Prints "ok N - what" / "FAIL N - what", a closing "integ_fanout: N
 * passed, M failed", exits non-zero on any failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
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
#include "shm/nodestore.h"
#include "shm/segment.h"
#include "shm/value.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IT_WORKERS         2
#define IT_CLIENTS_MAX     40
#define IT_WATCHDOG_S      300
#define IT_HEALTH_WAIT_MS  30000
#define IT_RESPAWN_WAIT_MS 15000
#define IT_STOP_WAIT_MS    5000
#define IT_ARENA           (4u << 20)
#define IT_INTEREST_VARS   200

struct it_client {
    struct uaconn c;
    int           worker;
};

static pid_t            it_broker = -1;
static char             it_dir[PATH_MAX];
static char             it_log[PATH_MAX + 16];
static char             it_bin[PATH_MAX];
static uint16_t         it_port, it_sport;
static struct it_client it_cl[IT_CLIENTS_MAX];
static unsigned         it_ncl;
static struct ua_arena  it_arena;

static void it_start_broker(void);
static bool it_worker_u64(int slot, const char *key, uint64_t *out);
static bool it_fanout_u64(const char *key, uint64_t *out);
static bool it_broker_u64(const char *key, uint64_t *out);
static bool it_wait_health(unsigned ms);
static struct it_client *it_connect(void);
static ua_status it_write(struct it_client *cl, struct ua_write_value *wv,
                          int n, struct ua_write_response *resp);
static ua_status it_write1(struct it_client *cl, struct ua_nodeid id,
                           uint32_t attr, const char *range,
                           const struct ua_variant *v, uint8_t extra_mask);
static ua_status it_read1(struct it_client *cl, struct ua_nodeid id,
                          struct ua_datavalue *dv);
static int it_run(char *const argv[], char *out, size_t cap);

/* ------------------------------------------------------------ plumbing */

static void
it_start_broker(void)
{
    char  port[8], stats[32];
    /* A small pool, so that a stopped worker exhausts it quickly. */
    char *argv[] = { it_bin, "-w", "2", "-p", port, "--stats", stats,
                     "--runtime-dir", it_dir, "--vars", "1000",
                     "--set", "fanout.blocks=64",
                     "--set", "fanout.block_size=1024",
                     "--set", "fanout.notif_ring_slots=32",
                     "--set", "security.anonymous_write=true",
                     /* No park: the victim's items die with it, its bits
                      * go (tests/integ/integ_kill.c has them survive). */
                     "--set", "limits.session_park_bytes=0", NULL };

    itest_tmpdir("uabf", it_dir, sizeof(it_dir));
    snprintf(it_log, sizeof(it_log), "%s/broker.log", it_dir);
    it_port = itest_free_port();
    it_sport = itest_free_port();
    if (it_port == 0 || it_sport == 0 || it_port == it_sport)
        itest_fatal("no free ports");
    snprintf(port, sizeof(port), "%u", it_port);
    snprintf(stats, sizeof(stats), "127.0.0.1:%u", it_sport);
    it_broker = itest_spawn(it_log, argv);
    printf("# broker %s pid %d, opc.tcp port %u, stats port %u\n", it_bin,
           (int)it_broker, it_port, it_sport);
}

/* A counter of worker slot's row in /stats. */
static bool
it_worker_u64(int slot, const char *key, uint64_t *out)
{
    return itest_worker_u64(it_sport, slot, key, out);
}

/* A counter of the "fanout" object in /stats. */
static bool
it_fanout_u64(const char *key, uint64_t *out)
{
    char *body = NULL;
    bool  ok;

    if (itest_http(it_sport, "GET", "/stats", &body) != 200 || body == NULL) {
        free(body);
        return false;
    }
    ok = itest_json_u64(strstr(body, "\"fanout\": {"), key, out);
    free(body);
    return ok;
}

/* A counter of the "broker" object in /stats. */
static bool
it_broker_u64(const char *key, uint64_t *out)
{
    char *body = NULL;
    bool  ok;

    if (itest_http(it_sport, "GET", "/stats", &body) != 200 || body == NULL) {
        free(body);
        return false;
    }
    ok = itest_json_u64(strstr(body, "\"broker\": {"), key, out);
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

static struct it_client *
it_connect(void)
{
    uint64_t          before[IT_WORKERS] = { 0 }, after[IT_WORKERS] = { 0 };
    struct it_client *cl;
    ua_status         s;

    if (it_ncl == IT_CLIENTS_MAX)
        return NULL;
    for (int i = 0; i < IT_WORKERS; i++)
        it_worker_u64(i, "connections_total", &before[i]);
    cl = &it_cl[it_ncl];
    uaconn_init(&cl->c);
    s = uaconn_start(&cl->c, "127.0.0.1", it_port);
    if (s != UA_GOOD) {
        uaconn_clear(&cl->c);
        return NULL;
    }
    it_ncl++;
    cl->worker = -1;
    for (int i = 0; i < IT_WORKERS; i++)
        if (it_worker_u64(i, "connections_total", &after[i])
            && after[i] > before[i])
            cl->worker = i;
    return cl;
}


static ua_status
it_write(struct it_client *cl, struct ua_write_value *wv, int n,
         struct ua_write_response *resp)
{
    struct ua_write_request req;

    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_nodes_to_write = n;
    req.nodes_to_write = wv;
    ua_arena_reset(&it_arena);
    return uaconn_call(&cl->c, &ua_types[UA_TYPE_WRITEREQUEST], &req,
                       &ua_types[UA_TYPE_WRITERESPONSE], resp, &it_arena);
}

/* One WriteValue: the operation's status (or the service's). */
static ua_status
it_write1(struct it_client *cl, struct ua_nodeid id, uint32_t attr,
          const char *range, const struct ua_variant *v, uint8_t extra_mask)
{
    struct ua_write_value    wv;
    struct ua_write_response resp;
    ua_status                s;

    memset(&wv, 0, sizeof(wv));
    wv.node_id = id;
    wv.attribute_id = attr;
    wv.index_range.len = -1;
    if (range != NULL)
        wv.index_range = ua_string_from(range);
    wv.value.mask = UA_DV_VALUE | extra_mask;
    wv.value.value = *v;
    wv.value.server_ts = 132000000000000000;
    wv.value.source_ts = 132000000000000000;
    s = it_write(cl, &wv, 1, &resp);
    if (s != UA_GOOD)
        return s;
    if (resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    return resp.results[0];
}

static ua_status
it_read1(struct it_client *cl, struct ua_nodeid id, struct ua_datavalue *dv)
{
    struct ua_read_value_id rv;
    struct ua_read_request  req;
    struct ua_read_response resp;
    ua_status               s;

    memset(&rv, 0, sizeof(rv));
    rv.node_id = id;
    rv.attribute_id = UA_ATTR_VALUE;
    rv.index_range.len = -1;
    rv.data_encoding.name.len = -1;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &rv;
    ua_arena_reset(&it_arena);
    s = uaconn_call(&cl->c, &ua_types[UA_TYPE_READREQUEST], &req,
                    &ua_types[UA_TYPE_READRESPONSE], &resp, &it_arena);
    if (s != UA_GOOD)
        return s;
    if (resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    *dv = resp.results[0];
    return dv->status;
}

/* Run argv, its stdout+stderr into out[cap]; the exit code (-1: none). */
static int
it_run(char *const argv[], char *out, size_t cap)
{
    int   p[2], status;
    pid_t pid;
    size_t len = 0;
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

/* ------------------------------------------------------------ steps */

/* 2. Write on one worker, Read on the other, 100 times each way. */
static void
it_ryw(struct it_client *a, struct it_client *b)
{
    struct ua_write_value    wv[2];
    struct ua_write_response resp;
    struct ua_datavalue      dv;
    unsigned                 bad = 0;

    for (int i = 0; i < 200; i++) {
        struct it_client *w = i < 100 ? a : b, *r = i < 100 ? b : a;
        int32_t           iv = i * 7 - 300;
        double            dvv = i + 0.25;
        ua_status         s;

        memset(wv, 0, sizeof(wv));
        wv[0].node_id = ua_nodeid_str(1, "v0");
        wv[1].node_id = ua_nodeid_str(1, "v1");
        for (int k = 0; k < 2; k++) {
            wv[k].attribute_id = UA_ATTR_VALUE;
            wv[k].index_range.len = -1;
            wv[k].value.mask = UA_DV_VALUE;
        }
        ua_variant_set_scalar(&wv[0].value.value, &iv, UA_BT_INT32);
        ua_variant_set_scalar(&wv[1].value.value, &dvv, UA_BT_DOUBLE);
        s = it_write(w, wv, 2, &resp);
        if (s != UA_GOOD || resp.n_results != 2 || resp.results[0] != UA_GOOD
            || resp.results[1] != UA_GOOD) {
            if (bad++ < 3)
                itest_check(false, "Write %d: 0x%08X", i, s);
            continue;
        }
        s = it_read1(r, ua_nodeid_str(1, "v0"), &dv);
        if (s != UA_GOOD || dv.value.type != UA_BT_INT32
            || *(int32_t *)dv.value.data != iv) {
            if (bad++ < 3)
                itest_check(false, "Read v0 after Write %d: 0x%08X", i, s);
            continue;
        }
        s = it_read1(r, ua_nodeid_str(1, "v1"), &dv);
        if (s != UA_GOOD || dv.value.type != UA_BT_DOUBLE
            || *(double *)dv.value.data != dvv) {
            if (bad++ < 3)
                itest_check(false, "Read v1 after Write %d: 0x%08X", i, s);
        }
    }
    itest_check(bad == 0, "read-your-writes across workers: 200 Writes on "
             "one worker, each read back at once on the other (%u wrong)",
             bad);
}

/* A sample value of built-in type bt (3 elements for arrays) in mem. */
static void
it_sample(uint8_t bt, void *mem, int salt)
{
    size_t   sz = ua_types[bt - 1].size;
    uint8_t *p = mem;

    memset(mem, 0, 3 * sz);
    for (int i = 0; i < 3; i++, p += sz) {
        int k = i + salt;

        switch (bt) {
        case UA_BT_BOOLEAN: *(bool *)p = k % 2; break;
        case UA_BT_SBYTE: *(int8_t *)p = (int8_t)(-k); break;
        case UA_BT_BYTE: *(uint8_t *)p = (uint8_t)(k + 9); break;
        case UA_BT_INT16: *(int16_t *)p = (int16_t)(-k * 100); break;
        case UA_BT_UINT16: *(uint16_t *)p = (uint16_t)(k * 100); break;
        case UA_BT_INT32: *(int32_t *)p = -k * 100000; break;
        case UA_BT_UINT32: *(uint32_t *)p = (uint32_t)k * 100000u; break;
        case UA_BT_INT64: *(int64_t *)p = -(int64_t)k * 10000000000; break;
        case UA_BT_UINT64: *(uint64_t *)p = (uint64_t)k * 10000000000u; break;
        case UA_BT_FLOAT: *(float *)p = 1.5f * (float)k; break;
        case UA_BT_DOUBLE: *(double *)p = 2.75 * k; break;
        case UA_BT_STRING:
        case UA_BT_BYTESTRING:
            *(struct ua_string *)p = ua_string_from(k % 2 ? "written"
                                                          : "again");
            break;
        case UA_BT_XMLELEMENT:
            *(struct ua_string *)p = ua_string_from("<w/>");
            break;
        case UA_BT_DATETIME: *(int64_t *)p = 133000000000000000 + k; break;
        case UA_BT_GUID: ((struct ua_guid *)p)->data1 = 0xABCD0000u + k; break;
        case UA_BT_NODEID:
            *(struct ua_nodeid *)p = ua_nodeid_num(1, 100 + (uint32_t)k);
            break;
        case UA_BT_EXPANDEDNODEID: {
            struct ua_expandednodeid *x = (void *)p;

            x->node = ua_nodeid_num(2, 7 + (uint32_t)k);
            x->ns_uri.len = -1;
            break;
        }
        case UA_BT_STATUSCODE: *(uint32_t *)p = UA_BAD_TIMEOUT; break;
        case UA_BT_QUALIFIEDNAME: {
            struct ua_qualifiedname *q = (void *)p;

            q->ns = 1;
            q->name = ua_string_from("written");
            break;
        }
        case UA_BT_LOCALIZEDTEXT: {
            struct ua_localizedtext *l = (void *)p;

            l->mask = UA_LT_LOCALE | UA_LT_TEXT;
            l->locale = ua_string_from("de");
            l->text = ua_string_from("geschrieben");
            break;
        }
        case UA_BT_EXTENSIONOBJECT: {
            static struct ua_build_info bi;
            struct ua_extobj           *x = (void *)p;

            bi.product_name = ua_string_from("written");
            bi.product_uri.len = bi.manufacturer_name.len = -1;
            bi.software_version.len = bi.build_number.len = -1;
            x->encoding = UA_EO_DECODED;
            x->type = &ua_types[UA_TYPE_BUILDINFO];
            x->obj = &bi;
            x->type_id = ua_nodeid_num(0, ua_types[UA_TYPE_BUILDINFO]
                                              .binary_id);
            break;
        }
        case UA_BT_DATAVALUE: {
            struct ua_datavalue *d = (void *)p;

            d->mask = UA_DV_STATUS;
            d->status = UA_BAD_TIMEOUT;
            break;
        }
        case UA_BT_VARIANT: {
            static int32_t     iv = 77;
            struct ua_variant *v = (void *)p;

            ua_variant_set_scalar(v, &iv, UA_BT_INT32);
            break;
        }
        case UA_BT_DIAGNOSTICINFO: {
            struct ua_diaginfo *d = (void *)p;

            d->mask = UA_DI_SYMBOLIC_ID;
            d->symbolic_id = k;
            break;
        }
        }
    }
}

static const char *const it_bt_names[25] = {
    "Boolean", "SByte", "Byte", "Int16", "UInt16", "Int32", "UInt32",
    "Int64", "UInt64", "Float", "Double", "String", "DateTime", "Guid",
    "ByteString", "XmlElement", "NodeId", "ExpandedNodeId", "StatusCode",
    "QualifiedName", "LocalizedText", "ExtensionObject", "DataValue",
    "Variant", "DiagnosticInfo"
};

/* 3. Every Static variable: write on A, read on B, compare. */
static void
it_static(struct it_client *a, struct it_client *b)
{
    unsigned ok = 0, total = 0;

    for (uint8_t bt = 1; bt <= 25; bt++) {
        for (int arr = 0; arr < 2; arr++) {
            uint8_t             mem[3 * 128] __attribute__((aligned(16)));
            char                id[64];
            struct ua_variant   v;
            struct ua_datavalue dv;
            ua_status           s;
            bool                same;

            /* Scalar Variant-of-Variant is not encodable (Part 6). */
            it_sample(bt, mem, 3 + arr);
            snprintf(id, sizeof(id), "Demo.Static.%s.%s",
                     arr ? "Array" : "Scalar", it_bt_names[bt - 1]);
            if (bt == UA_BT_VARIANT && !arr) {
                static int32_t iv = 4711;

                ua_variant_set_scalar(&v, &iv, UA_BT_INT32);
            } else if (arr) {
                ua_variant_set_array(&v, mem, 3, bt);
            } else {
                ua_variant_set_scalar(&v, mem, bt);
            }
            total++;
            s = it_write1(a, ua_nodeid_str(1, id), UA_ATTR_VALUE, NULL, &v, 0);
            if (!itest_check(s == UA_GOOD, "Write %s (%s): 0x%08X %s", id,
                          ua_types[bt - 1].name, s, ua_status_name(s)))
                continue;
            s = it_read1(b, ua_nodeid_str(1, id), &dv);
            same = s == UA_GOOD && dv.value.type == v.type
                   && dv.value.is_array == v.is_array
                   && (v.is_array
                           ? dv.value.n == v.n
                                 && ua_equal(dv.value.data, v.data,
                                             &ua_types[v.type - 1])
                           : ua_equal(dv.value.data, v.data,
                                      &ua_types[v.type - 1]));
            if (same && v.is_array)
                for (int k = 1; k < 3; k++)
                    same = same && ua_equal((uint8_t *)dv.value.data
                                                + k * ua_types[bt - 1].size,
                                            (uint8_t *)v.data
                                                + k * ua_types[bt - 1].size,
                                            &ua_types[bt - 1]);
            if (itest_check(same, "Read %s on the other worker: the written "
                         "value (0x%08X)", id, s))
                ok++;
        }
    }
    itest_check(ok == total, "every Static type written and read back: %u/%u",
             ok, total);
}

/*
 * 4b. One Write of many WriteValues, the known ones between NodeIds
 * answered without the broker (unknown, a null String identifier, a type
 * no node has): the worker looks NodeIds up a few WriteValues ahead of
 * the one it encodes (worker/svc_write.c), so each result and each value
 * must still land on its own WriteValue's node.  Run twice with other
 * values so a value written by an earlier test cannot pass for this one.
 */
#define IT_MIXED_N 23

static void
it_mixed_write(struct it_client *a, struct it_client *b)
{
    struct ua_write_value    wv[IT_MIXED_N];
    struct ua_write_response resp;
    ua_status                want[IT_MIXED_N], got[IT_MIXED_N];
    int32_t                  iv[IT_MIXED_N];
    char                     names[IT_MIXED_N][12];
    unsigned                 bad = 0, readbad = 0;

    for (int round = 0; round < 2; round++) {
        memset(wv, 0, sizeof(wv));
        for (int k = 0; k < IT_MIXED_N; k++) {
            /* Even vN are Int32: v200, v202, ... (distinct nodes). */
            snprintf(names[k], sizeof(names[k]), "v%d", 200 + 2 * k);
            wv[k].node_id = ua_nodeid_str(1, names[k]);
            want[k] = UA_GOOD;
            switch (k % 7) {
            case 2:
                snprintf(names[k], sizeof(names[k]), "nope%d", k);
                wv[k].node_id = ua_nodeid_str(1, names[k]);
                want[k] = UA_BAD_NODE_ID_UNKNOWN;
                break;
            case 4:
                wv[k].node_id.id.str.len = -1;  /* null identifier */
                wv[k].node_id.id.str.data = NULL;
                want[k] = UA_BAD_NODE_ID_UNKNOWN;
                break;
            case 5:
                /* v(odd) is Double: a known node the broker refuses. */
                snprintf(names[k], sizeof(names[k]), "v%d", 201 + 2 * k);
                wv[k].node_id = ua_nodeid_str(1, names[k]);
                want[k] = UA_BAD_TYPE_MISMATCH;
                break;
            default:
                break;
            }
            wv[k].attribute_id = UA_ATTR_VALUE;
            wv[k].index_range.len = -1;
            wv[k].value.mask = UA_DV_VALUE;
            iv[k] = 7000 * (round + 1) + k;
            ua_variant_set_scalar(&wv[k].value.value, &iv[k], UA_BT_INT32);
        }
        if (it_write(a, wv, IT_MIXED_N, &resp) != UA_GOOD
            || resp.n_results != IT_MIXED_N) {
            bad++;
            continue;
        }
        memcpy(got, resp.results, sizeof(got));   /* before the arena goes */
        for (int k = 0; k < IT_MIXED_N; k++) {
            struct ua_datavalue dv;

            if (got[k] != want[k]) {
                printf("# round %d op %d: 0x%08X, want 0x%08X\n", round, k,
                       got[k], want[k]);
                bad++;
            }
            if (want[k] != UA_GOOD)
                continue;
            /* Read back on the other worker: this node got this value. */
            if (it_read1(b, wv[k].node_id, &dv) != UA_GOOD
                || dv.value.type != UA_BT_INT32 || dv.value.data == NULL
                || *(const int32_t *)dv.value.data != iv[k])
                readbad++;
        }
    }
    itest_check(bad == 0, "a Write of %d with unknown NodeIds between: "
                "each result its own (%u wrong)", IT_MIXED_N, bad);
    itest_check(readbad == 0, "... and each value on its own node "
                "(%u wrong)", readbad);
}

/* 4. The refusals. */
static void
it_refusals(struct it_client *a)
{
    struct ua_write_value    *many;
    struct ua_write_response  resp;
    struct ua_datavalue       dv;
    struct ua_variant         v;
    double                    d = 3.5;
    int32_t                   i32 = 5, arr[3] = { 1, 2, 3 }, piece[2] = {
                                  40, 41 };
    ua_status                 s;

    ua_variant_set_scalar(&v, &d, UA_BT_DOUBLE);
    s = it_write1(a, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, NULL, &v, 0);
    itest_check(s == UA_BAD_TYPE_MISMATCH, "Double to Int32 v0: "
             "BadTypeMismatch (0x%08X)", s);
    ua_variant_set_array(&v, arr, 3, UA_BT_INT32);
    s = it_write1(a, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, NULL, &v, 0);
    itest_check(s == UA_BAD_TYPE_MISMATCH, "array to scalar v0: "
             "BadTypeMismatch (0x%08X)", s);
    ua_variant_set_scalar(&v, &i32, UA_BT_INT32);
    s = it_write1(a, ua_nodeid_str(1, "Demo.Static.Array.Int32"),
                  UA_ATTR_VALUE, NULL, &v, 0);
    itest_check(s == UA_BAD_TYPE_MISMATCH, "scalar to an array variable: "
             "BadTypeMismatch (0x%08X)", s);
    s = it_write1(a, ua_nodeid_num(0, UA_NS0ID_SERVER_SERVICELEVEL),
                  UA_ATTR_VALUE, NULL, &v, 0);
    itest_check(s == UA_BAD_NOT_WRITABLE, "Server.ServiceLevel (read-only): "
             "BadNotWritable (0x%08X)", s);
    s = it_write1(a, ua_nodeid_str(1, "v0"), UA_ATTR_DISPLAYNAME, NULL, &v, 0);
    itest_check(s == UA_BAD_NOT_WRITABLE, "DisplayName of v0: BadNotWritable "
             "(0x%08X)", s);
    s = it_write1(a, ua_nodeid_str(1, "v0"), UA_ATTR_SYMMETRIC, NULL, &v, 0);
    itest_check(s == UA_BAD_ATTRIBUTE_ID_INVALID, "Symmetric of a Variable: "
             "BadAttributeIdInvalid (0x%08X)", s);
    s = it_write1(a, ua_nodeid_str(1, "nope"), UA_ATTR_VALUE, NULL, &v, 0);
    itest_check(s == UA_BAD_NODE_ID_UNKNOWN, "unknown node: BadNodeIdUnknown "
             "(0x%08X)", s);
    s = it_write1(a, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, NULL, &v,
                  UA_DV_SERVER_TS);
    itest_check(s == UA_BAD_WRITE_NOT_SUPPORTED, "ServerTimestamp: "
             "BadWriteNotSupported (0x%08X)", s);
    s = it_write1(a, ua_nodeid_str(1, "v0"), UA_ATTR_VALUE, NULL, &v,
                  UA_DV_SOURCE_TS);
    itest_check(s == UA_BAD_WRITE_NOT_SUPPORTED, "SourceTimestamp without "
             "TimestampWrite: BadWriteNotSupported (0x%08X)", s);
    s = it_write(a, NULL, 0, &resp);
    itest_check(s == UA_BAD_NOTHING_TO_DO, "no nodesToWrite: BadNothingToDo "
             "(0x%08X)", s);
    many = calloc(1001, sizeof(*many));
    if (many != NULL) {
        for (int k = 0; k < 1001; k++) {
            many[k].node_id = ua_nodeid_str(1, "v0");
            many[k].attribute_id = UA_ATTR_VALUE;
            many[k].index_range.len = -1;
            many[k].value.mask = UA_DV_VALUE;
            ua_variant_set_scalar(&many[k].value.value, &i32, UA_BT_INT32);
        }
        s = it_write(a, many, 1001, &resp);
        itest_check(s == UA_BAD_TOO_MANY_OPERATIONS, "1001 WriteValues "
                 "(MaxNodesPerWrite 1000): BadTooManyOperations (0x%08X)",
                 s);
        s = it_write(a, many, 1000, &resp);
        itest_check(s == UA_GOOD && resp.n_results == 1000
                     && resp.results[999] == UA_GOOD,
                 "1000 WriteValues (the limit): Good (0x%08X)", s);
        free(many);
    }
    /* IndexRange: two elements of the Int32 array. */
    ua_variant_set_array(&v, arr, 3, UA_BT_INT32);
    s = it_write1(a, ua_nodeid_str(1, "Demo.Static.Array.Int32"),
                  UA_ATTR_VALUE, NULL, &v, 0);
    ua_variant_set_array(&v, piece, 2, UA_BT_INT32);
    s = s != UA_GOOD ? s : it_write1(a, ua_nodeid_str(1,
                                     "Demo.Static.Array.Int32"),
                                     UA_ATTR_VALUE, "1:2", &v, 0);
    itest_check(s == UA_GOOD, "IndexRange 1:2 write: Good (0x%08X)", s);
    s = it_read1(a, ua_nodeid_str(1, "Demo.Static.Array.Int32"), &dv);
    itest_check(s == UA_GOOD && dv.value.is_array && dv.value.n == 3
                 && ((int32_t *)dv.value.data)[0] == 1
                 && ((int32_t *)dv.value.data)[1] == 40
                 && ((int32_t *)dv.value.data)[2] == 41,
             "after it the array is [1, 40, 41]");
    s = it_write1(a, ua_nodeid_str(1, "Demo.Static.Array.Int32"),
                  UA_ATTR_VALUE, "2:3", &v, 0);
    itest_check(s == UA_BAD_INDEX_RANGE_NO_DATA, "IndexRange 2:3 past the end: "
             "BadIndexRangeNoData (0x%08X)", s);
    s = it_write1(a, ua_nodeid_str(1, "Demo.Static.Array.Int32"),
                  UA_ATTR_VALUE, "2:1", &v, 0);
    itest_check(s == UA_BAD_INDEX_RANGE_INVALID, "IndexRange 2:1: "
             "BadIndexRangeInvalid (0x%08X)", s);
}

/* 5. `uabroker feed`. */
static void
it_feed(struct it_client *b)
{
    char                out[4096];
    struct ua_datavalue dv;
    ua_status           s;
    int                 rc;
    char               *argv1[] = { it_bin, "--runtime-dir", it_dir, "feed",
                                    "ns=1;s=v2=4242", "ns=1;s=v3=-0.5",
                                    NULL };
    char               *argv2[] = { it_bin, "--runtime-dir", it_dir, "feed",
                                    "ns=1;s=v4=1", "ns=1;s=v4=x",
                                    "ns=1;s=nope=1", NULL };
    char               *argv3[] = { it_bin, "--runtime-dir", it_dir, "feed",
                                    "--push", "ns=1;s=v6=-77", NULL };

    rc = it_run(argv1, out, sizeof(out));
    itest_check(rc == 0 && strstr(out, "ok 2 failed 0") != NULL,
             "uabroker feed two lines: exit %d, \"%s\"", rc,
             strtok(out, "\n") != NULL ? out : "");
    s = it_read1(b, ua_nodeid_str(1, "v2"), &dv);
    itest_check(s == UA_GOOD && dv.value.type == UA_BT_INT32
                 && *(int32_t *)dv.value.data == 4242,
             "a Read then sees v2 = 4242 (0x%08X)", s);
    s = it_read1(b, ua_nodeid_str(1, "v3"), &dv);
    itest_check(s == UA_GOOD && dv.value.type == UA_BT_DOUBLE
                 && *(double *)dv.value.data == -0.5,
             "and v3 = -0.5 (0x%08X)", s);
    rc = it_run(argv2, out, sizeof(out));
    itest_check(rc == 1 && strstr(out, "line 2: BadTypeMismatch") != NULL
                 && strstr(out, "line 3: BadNodeIdUnknown") != NULL
                 && strstr(out, "ok 1 failed 2") != NULL,
             "bad feed lines reported by number, exit 1 (exit %d)", rc);
    rc = it_run(argv3, out, sizeof(out));
    itest_check(rc == 0, "uabroker feed --push: exit %d", rc);
    for (int t = 0; t < 50; t++) {
        s = it_read1(b, ua_nodeid_str(1, "v6"), &dv);
        if (s == UA_GOOD && *(int32_t *)dv.value.data == -77)
            break;
        itest_sleep_ms(20);
    }
    itest_check(s == UA_GOOD && *(int32_t *)dv.value.data == -77,
             "a Read then sees v6 = -77 (0x%08X)", s);
}

/* 6. No heap allocation per Write in steady state. */
static void
it_allocations(struct it_client *a)
{
    struct ua_write_value    wv[100];
    struct ua_write_response resp;
    int32_t                  iv[100];
    double                   dd[100];
    char                     names[100][8];
    uint64_t                 before = 0, after = 0;
    uint64_t                 bk_before = 0, bk_after = 0;
    unsigned                 bad = 0;

    memset(wv, 0, sizeof(wv));
    for (int k = 0; k < 100; k++) {
        snprintf(names[k], sizeof(names[k]), "v%d", k);
        wv[k].node_id = ua_nodeid_str(1, names[k]);
        wv[k].attribute_id = UA_ATTR_VALUE;
        wv[k].index_range.len = -1;
        wv[k].value.mask = UA_DV_VALUE;
        if (k % 2)
            ua_variant_set_scalar(&wv[k].value.value, &dd[k], UA_BT_DOUBLE);
        else
            ua_variant_set_scalar(&wv[k].value.value, &iv[k], UA_BT_INT32);
    }
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            bool shown;

            it_worker_u64(a->worker, "allocations", &before);
            shown = it_broker_u64("allocations", &bk_before);
            itest_check(shown, "/stats shows the broker's allocations "
                        "(%llu)", (unsigned long long)bk_before);
        }
        for (int i = 0; i < 1000; i++) {
            for (int k = 0; k < 100; k++) {
                iv[k] = i + k;
                dd[k] = i + k + 0.5;
            }
            if (it_write(a, wv, 100, &resp) != UA_GOOD
                || resp.n_results != 100 || resp.results[99] != UA_GOOD)
                bad++;
        }
    }
    it_worker_u64(a->worker, "allocations", &after);
    it_broker_u64("allocations", &bk_after);
    itest_check(bad == 0, "2000 write100 requests all Good (%u bad)", bad);
    itest_check(after == before, "no heap allocation in 1000 write100 "
             "requests (allocations %llu -> %llu)",
             (unsigned long long)before, (unsigned long long)after);
    itest_check(bk_before != 0 && bk_after == bk_before,
                "nor in the broker (allocations %llu -> %llu)",
                (unsigned long long)bk_before, (unsigned long long)bk_after);
}

/* The segment fd of worker pid, from its command line. */
static int
it_segment_fd(int pid)
{
    char  path[64], buf[512];
    int   fd, n, segfd = -1;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
    fd = open(path, O_RDONLY);
    if (fd == -1)
        return -1;
    n = (int)read(fd, buf, sizeof(buf) - 1);
    close(fd);
    for (int i = 0; i < n;) {
        const char *a = buf + i;

        if (strcmp(a, "--segment-fd") == 0 && i + (int)strlen(a) + 1 < n)
            segfd = atoi(a + strlen(a) + 1);
        i += (int)strlen(a) + 1;
    }
    if (segfd < 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, segfd);
    return open(path, O_RDWR | O_CLOEXEC);
}

/* 7. Notifications into a stopped worker, then kill -9 it. */
static void
it_dead_worker(struct it_client *a)
{
    struct shm_segment   seg = { .fd = -1 };
    struct shm_nodestore ns;
    struct shm_values    vals;
    uint64_t             pid = 0, total = 0, freeb = 0, exh = 0, dropped = 0;
    uint64_t             restarts = 0, reclaimed = 0, notif = 0;
    uint64_t             ringfull = 0;
    bool                 ok;
    int                  victim = a->worker == 0 ? 1 : 0, fd, old;
    unsigned             marked = 0;
    uint64_t             end;
    char                 feed[64];
    char                *argv[] = { it_bin, "--runtime-dir", it_dir, "feed",
                                     "--push", feed, NULL };
    char                 out[512];

    ok = it_worker_u64(victim, "pid", &pid) && pid > 0;
    if (!itest_check(ok, "worker %d pid %llu", victim, (unsigned long long)pid))
        return;
    old = (int)pid;
    fd = it_segment_fd(old);
    if (!itest_check(fd != -1 && shm_segment_attach(&seg, fd, 1) == 0
                      && shm_nodestore_open(&ns, &seg) == 0
                      && shm_values_open(&vals, &seg) == 0,
                  "the test attaches the segment through /proc/%d/fd", old))
        return;
    for (int k = 0; k < IT_INTEREST_VARS; k++) {
        char               id[16];
        struct shm_nodekey key = { .ns = 1, .idtype = SHM_ID_STRING };
        uint32_t           n;

        snprintf(id, sizeof(id), "v%d", k);
        key.bytes = (const uint8_t *)id;
        key.len = (uint32_t)strlen(id);
        n = shm_nodestore_lookup(&ns, &key);
        if (n == SHM_NONE)
            continue;
        shm_interest_set(&vals, ns.nodes[n].u.var.slot, (unsigned)victim);
        marked++;
    }
    itest_check(marked == IT_INTEREST_VARS, "interest bits of worker %d set on "
             "v0..v%d", victim, IT_INTEREST_VARS - 1);
    /* Flowing: the worker takes the blocks and releases them. */
    {
        struct ua_write_value    wv;
        struct ua_write_response resp;
        int32_t                  iv = 0;

        memset(&wv, 0, sizeof(wv));
        wv.node_id = ua_nodeid_str(1, "v10");
        wv.attribute_id = UA_ATTR_VALUE;
        wv.index_range.len = -1;
        wv.value.mask = UA_DV_VALUE;
        ua_variant_set_scalar(&wv.value.value, &iv, UA_BT_INT32);
        for (int i = 0; i < 200; i++) {
            iv = i;
            (void)it_write(a, &wv, 1, &resp);
        }
        /* A worker with subscriptions may take them as late as its next
         * publishing tick (it promised the broker to wake by then). */
        for (int w = 0; w < 30; w++) {
            itest_sleep_ms(100);
            ok = it_worker_u64(victim, "notifications", &notif)
                 && notif >= 100 && it_fanout_u64("blocks_total", &total)
                 && it_fanout_u64("blocks_free", &freeb) && freeb == total;
            if (ok)
                break;
        }
        ok = it_worker_u64(victim, "notifications", &notif) && notif >= 100;
        itest_check(ok, "worker %d received %llu notifications and released "
                 "their blocks", victim, (unsigned long long)notif);
        ok = it_fanout_u64("blocks_total", &total)
             && it_fanout_u64("blocks_free", &freeb) && freeb == total
             && total > 0;
        itest_check(ok, "/stats fanout: %llu of %llu blocks free while it "
                 "keeps up", (unsigned long long)freeb,
                 (unsigned long long)total);

        /* Stopped: its ring fills, the pool runs dry. */
        kill(old, SIGSTOP);
        for (int i = 0; i < 600; i++) {
            iv = 1000 + i;
            (void)it_write(a, &wv, 1, &resp);
            if (i % 100 == 0) {
                snprintf(feed, sizeof(feed), "ns=1;s=v%d=%d", 20 + i / 100,
                         i);
                (void)it_run(argv, out, sizeof(out));
            }
        }
    }
    ok = it_fanout_u64("blocks_free", &freeb) && freeb < total;
    itest_check(ok, "worker %d stopped: it holds blocks (%llu of %llu free)",
             victim, (unsigned long long)freeb, (unsigned long long)total);
    ok = it_fanout_u64("blocks_exhausted", &exh)
         && it_fanout_u64("notifications_dropped", &dropped)
         && it_fanout_u64("ring_full", &ringfull) && dropped > 0
         && (exh > 0 || ringfull > 0);
    itest_check(ok, "the losses are counted: blocks_exhausted %llu, ring_full "
             "%llu, notifications_dropped %llu", (unsigned long long)exh,
             (unsigned long long)ringfull, (unsigned long long)dropped);
    printf("# kill -9 worker %d (pid %d)\n", victim, old);
    kill(old, SIGKILL);
    kill(old, SIGCONT);
    end = itest_ms() + IT_RESPAWN_WAIT_MS;
    while (itest_ms() < end) {
        if (it_worker_u64(victim, "pid", &pid) && pid != 0
            && (int)pid != old && it_worker_u64(victim, "restarts", &restarts)
            && restarts >= 1)
            break;
        itest_sleep_ms(50);
    }
    itest_check((int)pid != old && pid != 0 && restarts >= 1,
             "worker %d respawned (pid %llu, restarts %llu)", victim,
             (unsigned long long)pid, (unsigned long long)restarts);
    /* The new worker has no interest: no block is held for it. */
    for (int t = 0; t < 50; t++) {
        if (it_fanout_u64("blocks_free", &freeb) && freeb == total)
            break;
        itest_sleep_ms(50);
    }
    ok = freeb == total && it_fanout_u64("blocks_reclaimed", &reclaimed)
         && reclaimed > 0;
    itest_check(ok, "the broker reclaimed the dead worker's references: %llu, "
             "/stats shows %llu of %llu blocks free",
             (unsigned long long)reclaimed, (unsigned long long)freeb,
             (unsigned long long)total);
    {
        uint32_t n;
        struct shm_nodekey key = { .ns = 1, .idtype = SHM_ID_STRING,
                                   .bytes = (const uint8_t *)"v10",
                                   .len = 3 };

        n = shm_nodestore_lookup(&ns, &key);
        itest_check(n != SHM_NONE
                     && (shm_interest_get(&vals, ns.nodes[n].u.var.slot)
                         & (UINT64_C(1) << victim)) == 0,
                 "the dead worker's interest bits are cleared");
    }
    shm_segment_close(&seg);
    itest_check(it_wait_health(IT_RESPAWN_WAIT_MS), "/health 200 again");
}

static void
it_stop_broker(void)
{
    itest_check(itest_stop(it_broker, IT_STOP_WAIT_MS + 2000) == 0,
                "SIGTERM: the broker exits 0");
    it_broker = -1;
}

int
main(int argc, char **argv)
{
    struct it_client *per[IT_WORKERS] = { NULL, NULL };
    void             *abuf;

    itest_init("integ_fanout");
    (void)argc;
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    itest_guard(IT_WATCHDOG_S, it_log);
    abuf = malloc(IT_ARENA);
    if (abuf == NULL)
        itest_fatal("out of memory");
    ua_arena_init(&it_arena, abuf, IT_ARENA);
    itest_broker_bin(argv[0], it_bin, sizeof(it_bin));
    it_start_broker();
    if (!itest_check(it_wait_health(IT_HEALTH_WAIT_MS),
                  "/health 200 after start"))
        itest_fatal("the broker did not become healthy");

    /* 1. A client on each worker. */
    while (it_ncl < IT_CLIENTS_MAX && (per[0] == NULL || per[1] == NULL)) {
        struct it_client *cl = it_connect();

        if (cl == NULL)
            itest_fatal("cannot connect client %u", it_ncl);
        if (cl->worker >= 0 && per[cl->worker] == NULL)
            per[cl->worker] = cl;
    }
    if (!itest_check(per[0] != NULL && per[1] != NULL,
                  "a client on each worker (%u connections)", it_ncl))
        itest_fatal("the kernel never spread connections over both workers");

    it_ryw(per[0], per[1]);
    it_static(per[0], per[1]);
    it_refusals(per[0]);
    it_mixed_write(per[0], per[1]);
    it_feed(per[1]);
    it_allocations(per[0]);
    it_dead_worker(per[0]);
    it_stop_broker();

    for (unsigned i = 0; i < it_ncl; i++)
        uaconn_clear(&it_cl[i].c);
    free(abuf);
    return itest_finish();
}
