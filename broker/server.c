/*
 * broker/server.c: the values of the Server object (Part 5: the Server
 * object with its NamespaceArray, ServerStatus, ServerCapabilities and
 * ServerDiagnostics): written once from the configuration when the
 * address space is built (inside the build's value batch), then kept
 * live by bk_server_tick() (CurrentTime, ServerStatus, the diagnostics
 * summary from the workers' rows), one value batch per tick.
 *
 * Every value goes through the value path (broker/value.h).  Broker
 * only, on its loop; no allocation but the NamespaceArray's strings at
 * start.
 */
#include "server.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "proto/version.h"

#define BK_SERVER_NS0_URI "http://opcfoundation.org/UA/"

static uint32_t bk_server_slot(const struct bk_server *s, uint32_t id);
static int64_t bk_server_build_date(void);
static void bk_server_status(struct bk_server *s, int64_t now);
static int bk_server_live(struct bk_server *s, const struct bk_config *c,
                          const struct bk_nodeset *sets, int64_t now);
static void bk_server_diagnostics(struct bk_server *s, int64_t now);
static void bk_server_history(struct bk_server *s, const struct bk_config *c,
                              int64_t now);
static int bk_server_scalar(struct bk_server *s, uint32_t id, uint8_t bt,
                            const void *value, int64_t now);
static int bk_server_array(struct bk_server *s, uint32_t id, uint8_t bt,
                           const void *values, int32_t n, int64_t now);
static int bk_server_struct(struct bk_server *s, uint32_t id, int type,
                            void *obj, int64_t now);

/* The value slot of ns=0;i=id, or SHM_NONE. */
static uint32_t
bk_server_slot(const struct bk_server *s, uint32_t id)
{
    struct shm_nodekey     k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                 .num = id };
    uint32_t               i = shm_nodestore_lookup(s->ns, &k);
    const struct shm_node *n;

    if (i == SHM_NONE)
        return SHM_NONE;
    n = &s->ns->nodes[i];
    if (n->node_class != SHM_NC_VARIABLE
        && n->node_class != SHM_NC_VARIABLETYPE)
        return SHM_NONE;
    return n->u.var.slot;
}

/* The value of ns=0;i=id (bk_value_write_scalar and the others). */
static int
bk_server_scalar(struct bk_server *s, uint32_t id, uint8_t bt,
                 const void *value, int64_t now)
{
    return bk_value_write_scalar(s->val, bk_server_slot(s, id), bt, value,
                                 now);
}

static int
bk_server_array(struct bk_server *s, uint32_t id, uint8_t bt,
                const void *values, int32_t n, int64_t now)
{
    return bk_value_write_array(s->val, bk_server_slot(s, id), bt, values, n,
                                now);
}

static int
bk_server_struct(struct bk_server *s, uint32_t id, int type, void *obj,
                 int64_t now)
{
    return bk_value_write_struct(s->val, bk_server_slot(s, id), type, obj,
                                 now);
}

/*
 * BuildInfo.BuildDate: when this binary was compiled, from __DATE__ and
 * __TIME__ ("Nov 30 2026", "20:36:48", the compiler's local time, taken as
 * UTC).  0 if the strings are not in that form.
 */
static int64_t
bk_server_build_date(void)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char       *d = __DATE__, *t = __TIME__;
    struct tm         tm;
    const char       *m;
    time_t            secs;

    memset(&tm, 0, sizeof(tm));
    m = strstr(months, (char[4]){ d[0], d[1], d[2], '\0' });
    if (m == NULL || sscanf(d + 4, "%d %d", &tm.tm_mday, &tm.tm_year) != 2
        || sscanf(t, "%d:%d:%d", &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 3)
        return 0;
    tm.tm_mon = (int)(m - months) / 3;
    tm.tm_year -= 1900;
    secs = timegm(&tm);
    return (int64_t)secs * 10000000 + UA_DATETIME_UNIX_EPOCH;
}

/* ServerStatus as one structure value and as its children. */
static void
bk_server_status(struct bk_server *s, int64_t now)
{
    struct ua_server_status_data_type st;
    static struct ua_string           pu, mn, pn, sv, bn;
    int64_t                           build = bk_server_build_date();
    uint32_t                          zero = 0;
    int32_t                           running = 0;
    struct ua_localizedtext           reason = { 0 };

    pu = ua_string_from(UA_PRODUCT_URI);
    mn = ua_string_from(UA_MANUFACTURER);
    pn = ua_string_from(UA_PRODUCT_NAME);
    sv = ua_string_from(UA_VERSION);
    bn = ua_string_from(UA_VERSION);
    memset(&st, 0, sizeof(st));
    st.start_time = s->start_time;
    st.current_time = now;
    st.state = running;
    st.build_info.product_uri = pu;
    st.build_info.manufacturer_name = mn;
    st.build_info.product_name = pn;
    st.build_info.software_version = sv;
    st.build_info.build_number = bn;
    st.build_info.build_date = build;
    st.shutdown_reason = reason;
    bk_server_struct(s, UA_NS0ID_SERVER_SERVERSTATUS,
                     UA_TYPE_SERVERSTATUSDATATYPE, &st, now);
    bk_server_struct(s, UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO,
                     UA_TYPE_BUILDINFO, &st.build_info, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERSTATUS_STARTTIME,
                     UA_BT_DATETIME, &st.start_time, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME,
                     UA_BT_DATETIME, &now, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERSTATUS_STATE,
                     UA_BT_INT32, &running, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERSTATUS_SECONDSTILLSHUTDOWN,
                     UA_BT_UINT32, &zero, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERSTATUS_SHUTDOWNREASON,
                     UA_BT_LOCALIZEDTEXT, &reason, now);
#define BK_BI(id, bt, v) bk_server_scalar(s, id, bt, v, now)
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_PRODUCTURI, UA_BT_STRING,
          &pu);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_MANUFACTURERNAME,
          UA_BT_STRING, &mn);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_PRODUCTNAME, UA_BT_STRING,
          &pn);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_SOFTWAREVERSION,
          UA_BT_STRING, &sv);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_BUILDNUMBER, UA_BT_STRING,
          &bn);
    BK_BI(UA_NS0ID_SERVER_SERVERSTATUS_BUILDINFO_BUILDDATE, UA_BT_DATETIME,
          &build);
#undef BK_BI
}

static int
bk_server_live(struct bk_server *s, const struct bk_config *c,
               const struct bk_nodeset *sets, int64_t now)
{
    struct ua_string *ns, locale = ua_string_from("en");
    uint32_t         nns = 2;
    struct ua_server_diagnostics_summary_data_type diag;
    uint8_t          service_level = 255;
    uint16_t         cps = (uint16_t)c->max_browse_continuation_points;
    uint16_t         zero16 = 0;
    double           min_rate = c->min_sampling_interval_ms;
    uint32_t         zero = 0;
    static const struct { uint32_t id; size_t off; } lim[] = {
#define BK_L(id, f) { id, offsetof(struct bk_config, f) }
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXARRAYLENGTH,
             max_array_length),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSTRINGLENGTH,
             max_string_length),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXBYTESTRINGLENGTH,
             max_bytestring_length),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSESSIONS, max_sessions),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSUBSCRIPTIONS,
             max_subscriptions),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMS,
             max_monitored_items),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXSUBSCRIPTIONSPERSESSION,
             max_subscriptions_per_session),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMSPERSUBSCRIPTION,
             max_monitored_items_per_subscription),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERREAD,
             max_nodes_per_read),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERWRITE,
             max_nodes_per_write),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERMETHODCALL,
             max_nodes_per_method_call),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERBROWSE,
             max_nodes_per_browse),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERREGISTERNODES,
             max_nodes_per_register_nodes),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERTRANSLATEBROWSEPATHSTONODEIDS,
             max_nodes_per_translate),
        BK_L(UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXMONITOREDITEMSPERCALL,
             max_monitored_items_per_call),
#undef BK_L
    };
    /* Services we do not offer: a limit of 0 says "none" (Part 5). */
    static const uint32_t none[] = {
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYREADEVENTS,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYUPDATEDATA,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYUPDATEEVENTS,
        UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERNODEMANAGEMENT,
    };

    /* 0, 1 (this server), then the nodesets' namespaces in order. */
    if (sets != NULL)
        nns += bk_nodeset_nuris(sets);
    ns = bk_calloc(nns, sizeof(*ns));
    if (ns == NULL)
        return -1;
    ns[0] = ua_string_from(BK_SERVER_NS0_URI);
    ns[1] = ua_string_from(c->application_uri);
    for (uint32_t i = 2; i < nns; i++)
        ns[i] = ua_string_from(bk_nodeset_uri(sets, i - 2));
    if (bk_server_array(s, UA_NS0ID_SERVER_NAMESPACEARRAY, UA_BT_STRING, ns,
                        (int32_t)nns, now) != 0
        || bk_server_array(s, UA_NS0ID_SERVER_SERVERARRAY, UA_BT_STRING,
                           &ns[1], 1, now) != 0) {
        bk_free(ns);
        return -1;
    }
    bk_free(ns);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVICELEVEL, UA_BT_BYTE,
                     &service_level, now);
    {
        bool auditing = c->events_audit;    /* Server.Auditing (i=2994) */

        bk_server_scalar(s, UA_NS0ID_SERVER_AUDITING, UA_BT_BOOLEAN,
                         &auditing, now);
    }
    bk_server_status(s, now);
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
        const uint32_t *v = (const uint32_t *)((const char *)c + lim[i].off);

        bk_server_scalar(s, lim[i].id, UA_BT_UINT32, v, now);
    }
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
        bk_server_scalar(s, none[i], UA_BT_UINT32, &zero, now);
    bk_server_history(s, c, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXMONITOREDITEMSQUEUESIZE,
                     UA_BT_UINT32, &c->max_monitored_item_queue_size, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXBROWSECONTINUATIONPOINTS,
                     UA_BT_UINT16, &cps, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXQUERYCONTINUATIONPOINTS,
                     UA_BT_UINT16, &zero16, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_MAXHISTORYCONTINUATIONPOINTS,
                     UA_BT_UINT16, &zero16, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_MINSUPPORTEDSAMPLERATE,
                     UA_BT_DOUBLE, &min_rate, now);
    bk_server_array(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_LOCALEIDARRAY,
                    UA_BT_STRING, &locale, 1, now);
    bk_server_array(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_SERVERPROFILEARRAY,
                    UA_BT_STRING, NULL, 0, now);
    bk_server_array(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_SOFTWARECERTIFICATES,
                    UA_BT_EXTENSIONOBJECT, NULL, 0, now);
    /* ServerDiagnosticsSummary: zero until workers report (issue 4). */
    memset(&diag, 0, sizeof(diag));
    bk_server_struct(s, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY,
                     UA_TYPE_SERVERDIAGNOSTICSSUMMARYDATATYPE, &diag, now);
    {
        static const uint32_t counters[] = {
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SERVERVIEWCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CUMULATEDSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SECURITYREJECTEDSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDSESSIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SESSIONTIMEOUTCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SESSIONABORTCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_PUBLISHINGINTERVALCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSUBSCRIPTIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CUMULATEDSUBSCRIPTIONCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_SECURITYREJECTEDREQUESTSCOUNT,
            UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDREQUESTSCOUNT,
        };

        for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
            bk_server_scalar(s, counters[i], UA_BT_UINT32, &zero, now);
    }
    return 0;
}

/*
 * ServerDiagnosticsSummary from the workers' rows (summed; a respawned
 * worker starts its counters again).  Fields we do not count stay 0.
 */
static void
bk_server_diagnostics(struct bk_server *s, int64_t now)
{
    const struct shm_worker *rows = shm_segment_region(s->seg,
                                                       SHM_R_WORKERS);
    struct ua_server_diagnostics_summary_data_type d;
    uint64_t sessions = 0, rejected = 0;

    for (int i = 0; i < SHM_WORKERS_MAX; i++) {
        if (atomic_load_explicit(&rows[i].state, memory_order_relaxed)
            == SHM_WS_EMPTY)
            continue;
        sessions += atomic_load_explicit(&rows[i].sessions,
                                         memory_order_relaxed);
        rejected += atomic_load_explicit(&rows[i].bad_requests,
                                         memory_order_relaxed);
    }
    /* Write only changes: a watched value should not tick for nothing. */
    if (s->diag_last[0] == sessions + 1 && s->diag_last[1] == rejected + 1)
        return;
    s->diag_last[0] = sessions + 1;
    s->diag_last[1] = rejected + 1;
    memset(&d, 0, sizeof(d));
    d.current_session_count = (uint32_t)sessions;
    d.rejected_requests_count = (uint32_t)rejected;
    bk_server_struct(s, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY,
                     UA_TYPE_SERVERDIAGNOSTICSSUMMARYDATATYPE, &d, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_CURRENTSESSIONCOUNT,
                     UA_BT_UINT32, &d.current_session_count, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERDIAGNOSTICS_SERVERDIAGNOSTICSSUMMARY_REJECTEDREQUESTSCOUNT,
                     UA_BT_UINT32, &d.rejected_requests_count, now);
}

void
bk_server_tick(struct bk_server *s, int64_t now)
{
    uint32_t slot = bk_server_slot(s,
                                   UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME);

    bk_value_batch_begin(s->val);
    bk_value_write_scalar(s->val, slot, UA_BT_DATETIME, &now, now);
    bk_server_status(s, now);
    bk_server_diagnostics(s, now);
    bk_value_batch_end(s->val);
}

int
bk_server_init(struct bk_server *s, const struct shm_nodestore *ns,
               struct bk_value *val, const struct shm_segment *seg,
               const struct bk_config *c, const struct bk_nodeset *sets,
               int64_t now)
{
    s->ns = ns;
    s->val = val;
    s->seg = seg;
    s->start_time = now;
    s->diag_last[0] = s->diag_last[1] = 0;
    return bk_server_live(s, c, sets, now);
}

/*
 * What the history offers (issue 18; Part 11 §5.4.2
 * HistoryServerCapabilities, Part 5 OperationLimits): HistoryRead of data
 * (raw, at-time and processed) when history.enabled, at most
 * max_nodes_per_read nodes and history.max_return_values values per node;
 * HistoryUpdate's Insert, Replace, Update, DeleteRaw and DeleteAtTime
 * (worker/svc_histupd.c) of at most history.max_update_nodes details, and
 * annotations (InsertAnnotation: UpdateStructureDataDetails through the
 * Annotations Properties, broker/histnode.c); event history
 * (ReadEventDetails, worker/svc_histevent.c) when history.events, at most
 * history.max_return_events events per notifier.
 */
static void
bk_server_history(struct bk_server *s, const struct bk_config *c,
                  int64_t now)
{
    static const uint32_t upd[] = {
        UA_NS0ID_HISTORYSERVERCAPABILITIES_INSERTDATACAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_REPLACEDATACAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_UPDATEDATACAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_DELETERAWCAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_DELETEATTIMECAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_INSERTANNOTATIONCAPABILITY,
    };
    static const uint32_t no[] = {
        UA_NS0ID_HISTORYSERVERCAPABILITIES_INSERTEVENTCAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_REPLACEEVENTCAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_UPDATEEVENTCAPABILITY,
        UA_NS0ID_HISTORYSERVERCAPABILITIES_DELETEEVENTCAPABILITY,
    };
    bool     on = c->history_enabled != 0, off = false, yes = true;
    bool     evon = on && c->history_events != 0;
    uint32_t events = evon ? c->history_max_events : 0;
    uint32_t nodes = on ? c->max_nodes_per_read : 0;
    uint32_t values = on ? c->history_max_values : 0;
    uint32_t unodes = on ? c->history_max_update_nodes : 0;

    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYREADDATA,
                     UA_BT_UINT32, &nodes, now);
    bk_server_scalar(s, UA_NS0ID_HISTORYSERVERCAPABILITIES_ACCESSHISTORYDATACAPABILITY,
                     UA_BT_BOOLEAN, &on, now);
    bk_server_scalar(s, UA_NS0ID_HISTORYSERVERCAPABILITIES_MAXRETURNDATAVALUES,
                     UA_BT_UINT32, &values, now);
    bk_server_scalar(s, UA_NS0ID_HISTORYSERVERCAPABILITIES_ACCESSHISTORYEVENTSCAPABILITY,
                     UA_BT_BOOLEAN, &evon, now);
    bk_server_scalar(s, UA_NS0ID_HISTORYSERVERCAPABILITIES_MAXRETURNEVENTVALUES,
                     UA_BT_UINT32, &events, now);
    bk_server_scalar(s, UA_NS0ID_HISTORYSERVERCAPABILITIES_SERVERTIMESTAMPSUPPORTED,
                     UA_BT_BOOLEAN, &yes, now);
    bk_server_scalar(s, UA_NS0ID_SERVER_SERVERCAPABILITIES_OPERATIONLIMITS_MAXNODESPERHISTORYUPDATEDATA,
                     UA_BT_UINT32, &unodes, now);
    for (size_t i = 0; i < sizeof(upd) / sizeof(upd[0]); i++)
        bk_server_scalar(s, upd[i], UA_BT_BOOLEAN, &on, now);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        bk_server_scalar(s, no[i], UA_BT_BOOLEAN, &off, now);
}
