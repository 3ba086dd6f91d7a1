/*
 * worker/svc_histevent.c: HistoryRead's ReadEventDetails (Part 11
 * §6.5.2) over the events the historian kept (hist/events.h,
 * worker/histev.c), from the worker's own read-only LMDB transaction.
 *
 * A node is a notifier: an Object or View with HistoryRead in its
 * EventNotifier (broker/addrspace.c sets it on the server's notifiers
 * when history keeps events); anything else is
 * BadHistoryOperationUnsupported.  The Server object reads every event;
 * another notifier the events the historian filed under it (its own and
 * those of the sources under it, the rule of a live event item).
 *
 * The time domain: the events' Time field, startTime inclusive and
 * endTime exclusive (both equal: the events at that instant); endTime
 * before startTime, or endTime alone, reads newest first; at least two of
 * startTime, endTime and numValuesPerNode (else
 * BadHistoryOperationInvalid, as the raw reads).  A node gets at most
 * numValuesPerNode events and never more than history.max_return_events
 * (MaxReturnEventValues); when more remain, a continuation point (the
 * session's, like the raw reads', marked as the events') holds the Time
 * and id of the last event returned, and the next page starts strictly
 * after it: nothing is kept open between requests.  A node's read also
 * examines at most history.max_event_scan stored events (a where clause
 * that matches nothing would otherwise read a year of events in one
 * request): at the bound it answers the events found so far (none, maybe)
 * with a continuation point after the last event examined (Part 11 §6.3:
 * a page may hold fewer than numValuesPerNode results, none even).
 *
 * The EventFilter is the event items' (worker/monitem_event.c), compiled
 * once per request: a select clause it rejects gives null fields, as on
 * an event item; no select clause is BadEventFilterInvalid, a where clause
 * it rejects its status (BadFilterOperatorInvalid, ...), for each node.
 * Each stored record is parsed in place (shm_fo_ev_parse), its EventType
 * looked up again from its 0:EventType field (a record's node indices are
 * those of the address space that made it, which a restart may have
 * changed), the where clause evaluated, and the selected fields' Variant
 * bytes copied into the response as they are (UA_VARIANT_RAW): nothing is
 * decoded but the EventType.
 *
 * Single-threaded on the worker's loop; a request allocates only from its
 * arena.
 */
#include "svc_histevent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist/events.h"
#include "node.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "session.h"
#include "shm/fanout.h"
#include "shm/log.h"
#include "shm/nodestore.h"
#include "sub_int.h"
#include "svc.h"
#include "svc_history.h"

#define WK_HISTEVENT_CP_MARK  0xFBu     /* wk_session_cp.direction (not
                                           svc_histmod.h's 0xFD, 0xFC) */

struct wk_histevent {
    struct hs_store        *s;      /* the HistoryRead's store */
    struct hs_events       *ev;     /* its events, opened at first use */
    struct hs_evread        r;
    struct shm_fo_ev_field  f[SHM_FO_EV_FIELDS_MAX];
    const uint8_t          *var[WK_EV_SELECT_MAX];
    uint32_t                vl[WK_EV_SELECT_MAX];
    /* The last EventType looked up (its Variant bytes): events of one
     * type in a row cost one comparison. */
    uint8_t                 type_var[64];
    uint32_t                type_len;
    uint32_t                type_node;
};

/* One request's time domain. */
struct wk_histevent_q {
    int64_t  lo, hi;            /* inclusive */
    bool     reverse;
    uint32_t max;               /* events per node */
    uint32_t scan;              /* events examined per node */
};

static ua_status wk_histevent_range(const struct ua_read_event_details *d,
                                    uint32_t cap, uint32_t scan,
                                    struct wk_histevent_q *q);
static ua_status wk_histevent_node(struct wk_svc_ctx *ctx,
                                   const struct ua_nodeid *id,
                                   uint32_t *node);
static uint32_t wk_histevent_type(struct wk_svc_ctx *ctx,
                                  struct wk_histevent *he,
                                  const struct shm_fo_ev_field *f, int nf,
                                  uint32_t was);
static ua_status wk_histevent_fields(struct wk_svc_ctx *ctx, uint32_t nsel,
                                     const uint8_t *const *var,
                                     const uint32_t *vl,
                                     struct ua_history_event_field_list *out);
static void wk_histevent_one(struct wk_svc_ctx *ctx, struct wk_histevent *he,
                             const struct ua_history_read_value_id *v,
                             const struct wk_histevent_q *q,
                             const uint8_t *evc,
                             struct ua_history_read_result *res);
static void wk_histevent_read(void *arg, struct wk_svc_ctx *ctx,
                              const struct ua_history_read_request *req,
                              struct ua_history_read_response *resp,
                              struct hs_store *s);

int
wk_svc_histevent_init(struct wk_worker *w)
{
    struct wk_histevent *he = calloc(1, sizeof(*he));

    if (he == NULL)
        return -ENOMEM;
    w->histevent = he;
    wk_svc_history_on_events(w, wk_histevent_read, he);
    return 0;
}

void
wk_svc_histevent_fini(struct wk_worker *w)
{
    struct wk_histevent *he = w->histevent;

    if (he == NULL)
        return;
    hs_events_close(he->ev);
    free(he);
    w->histevent = NULL;
}

/* ReadEventDetails' time domain (the top comment). */
static ua_status
wk_histevent_range(const struct ua_read_event_details *d, uint32_t cap,
                   uint32_t scan, struct wk_histevent_q *q)
{
    int64_t s = d->start_time, e = d->end_time;

    if ((s == 0 && e == 0) || ((s == 0 || e == 0)
                               && d->num_values_per_node == 0)
        || s < 0 || e < 0)
        return UA_BAD_HISTORY_OPERATION_INVALID;
    memset(q, 0, sizeof(*q));
    if (s == 0) {                       /* back from endTime */
        q->reverse = true;
        q->lo = 0;
        q->hi = e;
    } else if (e == 0) {                /* on from startTime */
        q->lo = s;
        q->hi = INT64_MAX;
    } else if (s == e) {                /* that instant */
        q->lo = q->hi = s;
    } else if (s < e) {                 /* [start, end) */
        q->lo = s;
        q->hi = e - 1;
    } else {                            /* (end, start], backwards */
        q->reverse = true;
        q->lo = e + 1;
        q->hi = s;
    }
    q->max = d->num_values_per_node != 0 && d->num_values_per_node < cap
                 ? d->num_values_per_node : cap;
    q->scan = scan;
    return UA_GOOD;
}

/* The notifier id names, if its event history may be read. */
static ua_status
wk_histevent_node(struct wk_svc_ctx *ctx, const struct ua_nodeid *id,
                  uint32_t *node)
{
    const struct shm_node *n;

    *node = wk_node_lookup(ctx->w, id);
    if (*node == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    n = shm_nodestore_node(&ctx->w->ns, *node);
    if ((n->node_class != SHM_NC_OBJECT && n->node_class != SHM_NC_VIEW)
        || !(n->event_notifier & UA_EVENTNOTIFIERTYPE_HISTORYREAD))
        return UA_BAD_HISTORY_OPERATION_UNSUPPORTED;
    return UA_GOOD;
}

/* The event's EventType node now, from its 0:EventType field (was: the
 * record's, when the field is missing). */
static uint32_t
wk_histevent_type(struct wk_svc_ctx *ctx, struct wk_histevent *he,
                  const struct shm_fo_ev_field *f, int nf, uint32_t was)
{
    for (int i = 0; i < nf; i++) {
        struct ua_nodeid id;
        uint8_t          buf[512];
        struct ua_arena  a;
        uint32_t         t;

        if (f[i].plen != 11 || memcmp(f[i].path, "0:EventType", 11) != 0)
            continue;
        if (f[i].vlen < 2 || f[i].var[0] != UA_BT_NODEID)
            return SHM_NONE;
        if (f[i].vlen == he->type_len
            && memcmp(f[i].var, he->type_var, f[i].vlen) == 0)
            return he->type_node;
        ua_arena_init(&a, buf, sizeof(buf));
        if (ua_decode(f[i].var + 1, f[i].vlen - 1, NULL, &id,
                      &ua_types[UA_TYPE_NODEID], &a, &ctx->w->limits)
            != UA_GOOD)
            return SHM_NONE;
        t = wk_node_lookup(ctx->w, &id);
        if (f[i].vlen <= sizeof(he->type_var)) {
            memcpy(he->type_var, f[i].var, f[i].vlen);
            he->type_len = f[i].vlen;
            he->type_node = t;
        }
        return t;
    }
    return was;
}

/* One event's fields as the response's HistoryEventFieldList: the
 * selected Variants' bytes copied into the arena. */
static ua_status
wk_histevent_fields(struct wk_svc_ctx *ctx, uint32_t nsel,
                    const uint8_t *const *var, const uint32_t *vl,
                    struct ua_history_event_field_list *out)
{
    struct ua_variant *fv;
    size_t             total = 0;
    uint8_t           *b;

    fv = ua_arena_alloc(ctx->arena, (size_t)nsel * sizeof(*fv));
    if (fv == NULL)
        return UA_BAD_RESPONSE_TOO_LARGE;
    for (uint32_t i = 0; i < nsel; i++)
        total += var[i] != NULL ? vl[i] : 0;
    b = total != 0 ? ua_arena_alloc(ctx->arena, total) : NULL;
    if (total != 0 && b == NULL)
        return UA_BAD_RESPONSE_TOO_LARGE;
    for (uint32_t i = 0; i < nsel; i++) {
        memset(&fv[i], 0, sizeof(fv[i]));
        fv[i].ndims = -1;
        if (var[i] == NULL)
            continue;                   /* the null Variant */
        memcpy(b, var[i], vl[i]);
        fv[i].type = UA_VARIANT_RAW;
        fv[i].n = (int32_t)vl[i];
        fv[i].data = b;
        b += vl[i];
    }
    out->n_event_fields = (int32_t)nsel;
    out->event_fields = fv;
    return UA_GOOD;
}

/* One notifier's page of events, resumed at its continuation point. */
static void
wk_histevent_one(struct wk_svc_ctx *ctx, struct wk_histevent *he,
                 const struct ua_history_read_value_id *v,
                 const struct wk_histevent_q *q, const uint8_t *evc,
                 struct ua_history_read_result *res)
{
    struct wk_subs                     *st = ctx->w->subs;
    struct wk_session                  *s = ctx->session;
    struct wk_session_cp               *cp = NULL;
    struct ua_history_event_field_list *out;
    struct ua_history_event            *hev;
    struct hs_event                     e;
    uint8_t                             idb[4200];
    size_t                              idlen;
    uint32_t                            node, n = 0, scanned = 0;
    int64_t                             at = 0;
    uint64_t                            aid = 0;
    bool                                after = false, more = false;
    ua_status                           st_;
    int                                 rc;

    st_ = wk_histevent_node(ctx, &v->node_id, &node);
    if (v->continuation_point.len > 0) {
        cp = wk_session_cp_find(ctx->w, s, &v->continuation_point);
        if (cp == NULL || cp->direction != WK_HISTEVENT_CP_MARK
            || (st_ == UA_GOOD && cp->node != node)) {
            res->status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            return;
        }
        at = (int64_t)((uint64_t)cp->next << 32 | cp->max);
        aid = (uint64_t)cp->node_class_mask << 32 | cp->result_mask;
        after = true;
    }
    if (st_ == UA_GOOD && evc == NULL)
        st_ = UA_BAD_EVENT_FILTER_INVALID;      /* not reached: checked */
    if (st_ == UA_GOOD
        && ua_encode(&v->node_id, &ua_types[UA_TYPE_NODEID], idb,
                     sizeof(idb), &idlen) != UA_GOOD)
        st_ = UA_BAD_NODE_ID_INVALID;
    if (st_ != UA_GOOD) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = st_;
        return;
    }
    out = ua_arena_alloc(ctx->arena, (size_t)q->max * sizeof(*out));
    hev = ua_arena_alloc(ctx->arena, sizeof(*hev));
    if (out == NULL || hev == NULL) {
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    rc = hs_evread_seek(&he->r, hs_events_notifier(idb, idlen), q->lo,
                        q->hi, q->reverse, after, at, aid);
    while (rc == 0 && (rc = hs_evread_next(&he->r, &e)) == 0) {
        struct shm_fo_ev ev;
        int              nf;
        uint32_t         nsel;

        if (scanned == q->scan) {
            more = true;                /* the bound: go on after `at` */
            break;
        }
        scanned++;
        nf = shm_fo_ev_parse(e.rec, e.len, &ev, he->f, SHM_FO_EV_FIELDS_MAX);
        if (nf >= 0) {
            ev.type = wk_histevent_type(ctx, he, he->f, nf, ev.type);
            if (!wk_ev_where_ok(st, evc, &ev, he->f, (uint32_t)nf))
                nf = -1;
        }
        if (nf < 0) {
            /* Not a record (skipped), or not selected: examined. */
            at = e.time;
            aid = e.id;
            continue;
        }
        if (n == q->max) {
            more = true;                /* one more: a next page */
            break;
        }
        nsel = wk_ev_select(st, evc, &ev, he->f, (uint32_t)nf, he->var,
                            he->vl);
        if (wk_histevent_fields(ctx, nsel, he->var, he->vl, &out[n])
            != UA_GOOD) {
            rc = -ENOMEM;
            break;
        }
        at = e.time;
        aid = e.id;
        n++;
    }
    if (rc != 0 && rc != -ENOENT) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = rc == -ENOMEM ? UA_BAD_RESPONSE_TOO_LARGE
                                         : UA_BAD_INTERNAL_ERROR;
        return;
    }
    if (more) {
        /* The same slot under a new id, or a fresh one. */
        cp = wk_session_cp_renew(ctx->w, s, cp);
        if (cp == NULL) {
            res->status_code = UA_BAD_NO_CONTINUATION_POINTS;
            return;
        }
        cp->direction = WK_HISTEVENT_CP_MARK;
        cp->node = node;
        cp->next = (uint32_t)((uint64_t)at >> 32);
        cp->max = (uint32_t)at;
        cp->node_class_mask = (uint32_t)(aid >> 32);
        cp->result_mask = (uint32_t)aid;
        if (wk_session_cp_out(s, cp, ctx->arena,
                              &res->continuation_point) != 0) {
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            return;
        }
    } else if (cp != NULL) {
        wk_session_cp_release(s, cp);
    }
    hev->n_events = (int32_t)n;
    hev->events = out;
    res->history_data.encoding = UA_EO_DECODED;
    res->history_data.type = &ua_types[UA_TYPE_HISTORYEVENT];
    res->history_data.obj = hev;
    res->status_code = n == 0 && !more ? UA_GOOD_NO_DATA : UA_GOOD;
}

/* wk_svc_history_events_fn: the whole ReadEventDetails request. */
static void
wk_histevent_read(void *arg, struct wk_svc_ctx *ctx,
                  const struct ua_history_read_request *req,
                  struct ua_history_read_response *resp, struct hs_store *s)
{
    struct wk_histevent                *he = arg;
    const struct ua_read_event_details *d = req->history_read_details.obj;
    struct ua_response_header          *rh = &resp->response_header;
    struct ua_history_read_result      *res;
    struct wk_histevent_q               q;
    struct ua_extobj                    x, fres;
    uint8_t                            *evc = NULL;
    uint32_t                            len = 0;
    int32_t                             n = req->n_nodes_to_read;
    ua_status                           st, fst = UA_GOOD;
    bool                                open = false;

    he->type_len = 0;
    st = wk_histevent_range(d, ctx->w->conf->history_max_events
                                   ? ctx->w->conf->history_max_events : 1,
                            ctx->w->conf->history_max_event_scan
                                ? ctx->w->conf->history_max_event_scan
                                : UINT32_MAX,
                            &q);
    if (st != UA_GOOD && !req->release_continuation_points) {
        rh->service_result = st;
        return;
    }
    res = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*res));
    if (res == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    if (!req->release_continuation_points) {
        /* The filter, compiled once (st->evc), copied into the arena. */
        memset(&x, 0, sizeof(x));
        x.encoding = UA_EO_DECODED;
        x.type = &ua_types[UA_TYPE_EVENTFILTER];
        x.type_id = ua_nodeid_num(
            0, UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
        x.obj = (void *)&d->filter;
        fst = ctx->w->subs == NULL ? UA_BAD_HISTORY_OPERATION_UNSUPPORTED
              : wk_ev_filter_compile(ctx->w->subs, ctx->arena, &x, &len,
                                     &fres);
        if (fst == UA_GOOD) {
            evc = ua_arena_alloc(ctx->arena, len);
            if (evc == NULL) {
                rh->service_result = UA_BAD_OUT_OF_MEMORY;
                return;
            }
            memcpy(evc, ctx->w->subs->evc, len);
        }
        if (s != NULL && he->s != s) {
            hs_events_close(he->ev);
            he->ev = NULL;
            he->s = s;
        }
        if (s != NULL && he->ev == NULL) {
            char err[256];

            he->ev = hs_events_open(s, err, sizeof(err));
            if (he->ev == NULL)
                shm_log(SHM_LOG_INFO, "event history: %s", err);
        }
        open = he->ev != NULL && hs_evread_begin(he->ev, &he->r) == 0;
    }
    for (int32_t i = 0; i < n; i++) {
        const struct ua_history_read_value_id *v = &req->nodes_to_read[i];
        uint32_t                               node;

        memset(&res[i], 0, sizeof(res[i]));
        res[i].continuation_point.len = -1;
        if (req->release_continuation_points) {
            struct wk_session_cp *cp = NULL;

            if (v->continuation_point.len > 0)
                cp = wk_session_cp_find(ctx->w, ctx->session,
                                        &v->continuation_point);
            if (cp != NULL && cp->direction == WK_HISTEVENT_CP_MARK) {
                wk_session_cp_release(ctx->session, cp);
                res[i].status_code = UA_GOOD;
            } else {
                res[i].status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            }
            continue;
        }
        st = wk_histevent_node(ctx, &v->node_id, &node);
        if (st == UA_GOOD && fst != UA_GOOD)
            st = fst;
        if (st != UA_GOOD) {
            /* A point of ours given with a bad request is spent. */
            struct wk_session_cp *cp = v->continuation_point.len > 0
                ? wk_session_cp_find(ctx->w, ctx->session,
                                     &v->continuation_point) : NULL;

            if (cp != NULL && cp->direction == WK_HISTEVENT_CP_MARK)
                wk_session_cp_release(ctx->session, cp);
            res[i].status_code = st;
            continue;
        }
        if (!open) {
            /* History on but nothing stored yet. */
            res[i].status_code = UA_GOOD_NO_DATA;
            continue;
        }
        wk_histevent_one(ctx, he, v, &q, evc, &res[i]);
    }
    if (open)
        hs_evread_end(&he->r);
    resp->n_results = n;
    resp->results = res;
    resp->n_diagnostic_infos = 0;
}
