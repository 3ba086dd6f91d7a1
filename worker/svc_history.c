/*
 * worker/svc_history.c: HistoryRead (Part 4 §5.10.3, Part 11 §6.4) from
 * the history store (hist/store.h), which the historian writes
 * (worker/historian.c) and every worker reads with its own read-only
 * transactions: no message to the broker or the historian.
 *
 * ReadRawModifiedDetails (Part 11 §6.4.3): startTime inclusive, endTime
 * exclusive; endTime before startTime reads backwards, and so does a
 * missing startTime (numValuesPerNode values back from endTime); at least
 * two of the three are given (else BadHistoryOperationInvalid).  A node
 * gets at most numValuesPerNode values, and never more than
 * conf->history_max_values (MaxReturnDataValues); when more remain, a
 * continuation point says where to go on: the time of the last value
 * returned and how many values of that time were (several values may
 * share a time).  Continuation points are the session's
 * (worker/session.h, shared with Browse: the same
 * MaxBrowseContinuationPoints), marked as ours so BrowseNext refuses
 * them and we refuse Browse's; releaseContinuationPoints frees them.
 * Each value is the stored DataValue written back with the timestamps
 * asked for (hist/sample.h): the response copies stored bytes
 * (UA_DV_ENCODED), nothing is decoded.
 *
 * ReadAtTimeDetails (Part 11 §6.4.5): a stored value at exactly the time
 * as it is; else between the values around it, linear for numbers
 * (useSimpleBounds: the nearest values whatever their quality) with the
 * Interpolated historian bit, the value before it (stepped: a node whose
 * HistoricalDataConfiguration says Stepped, worker/histconf.h, or values
 * that are no numbers) with UncertainDataSubNormal when nothing follows,
 * BadNoData when nothing is before it.
 *
 * returnBounds (with both times given): the value at or before the start
 * time and the one at or after the end time (mirrored when reading
 * backwards) are returned as the first and the last, counted in
 * numValuesPerNode; a bound the store has no value for is a DataValue
 * with BadBoundNotFound at its time.
 *
 * An IndexRange (raw and at-time reads; processed not yet) cuts each
 * value (proto/indexrange.h): those values are decoded and encoded again;
 * a value it selects nothing of is BadIndexRangeNoData with its
 * timestamps, a range that does not parse BadIndexRangeInvalid.
 *
 * ReadProcessedDetails (Part 11 §6.4.4): one aggregate per node, from
 * Part 13's engine (proto/aggregate.h) over the node's raw samples of the
 * range and the ones just before and after it (decoded to numbers; a
 * value that is no number is Bad data), with the request's
 * AggregateConfiguration, or with useServerCapabilitiesDefaults the
 * node's (its HA Configuration's, worker/histconf.h; Part 13 §4.2.1.2's
 * defaults for a node without one), and the node's Stepped; an unknown
 * aggregate BadAggregateNotSupported;
 * more intervals than history.max_return_values are paged through
 * continuation points (each page computed from its own range); more than
 * WK_SVC_HISTORY_AGG_MAX raw samples BadResourceUnavailable.
 *
 * isReadModified (returnBounds with it BadInvalidArgument, Part 11
 * §6.5.3.3) and a raw read of a historized variable's Annotations
 * Property read what HistoryUpdate kept beside the raw values
 * (worker/svc_histmod.c), paged alike; AnnotationCount counts the
 * node's annotations.
 *
 * ReadAnnotationDataDetails (Part 11 §6.5.6) on a historized variable
 * (or its Annotations Property): the annotations at each of reqTimes, in
 * their order (worker/svc_histmod.c); at most history.max_return_values
 * reqTimes (more: BadTooManyOperations) and annotations a page; a node
 * without annotations (not historized) BadHistoryOperationUnsupported.
 *
 * ReadEventDetails goes to the handler worker/svc_histevent.c registers
 * (wk_svc_history_on_events).
 *
 * Not yet (BadHistoryOperationUnsupported): an IndexRange on modified
 * values or annotations.
 *
 * Single-threaded on the worker's loop.  The store handle and the read
 * position are allocated once; a request allocates only from its arena.
 */
#include "svc_history.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hist/store.h"
#include "histconf.h"
#include "histnode.h"
#include "node.h"
#include "proto/aggregate.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/indexrange.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "session.h"
#include "shm/layout.h"
#include "shm/log.h"
#include "shm/nodestore.h"
#include "svc.h"
#include "svc_histmod.h"

#define WK_SVC_HISTORY_CP_MARK     0xFFu       /* wk_session_cp.direction */
#define WK_SVC_HISTORY_CP_PROC     0xFEu       /* the same, ReadProcessed's */
#define WK_SVC_HISTORY_RETRY_MS    1000u       /* a store that would not open */
#define WK_SVC_HISTORY_ACCESS_READ 0x04u       /* AccessLevel HistoryRead */
/* StatusCode InfoType DataValue and the Interpolated historian bits
 * (Part 4 §7.39.2, Part 11 §6.3). */
#define WK_SVC_HISTORY_INTERPOLATED 0x00000402u

/* The raw samples one ReadProcessed may aggregate per node at most (the
 * engine takes them all at once: proto/aggregate.h); more is
 * BadResourceUnavailable.  Three days of one value a second. */
#define WK_SVC_HISTORY_AGG_MAX  262144u

struct wk_history {
    struct hs_store      *s;
    uint64_t              retry_ms; /* no try before */
    bool                  warned;
    struct hs_read        r;
    struct ua_agg_sample *agg;      /* WK_SVC_HISTORY_AGG_MAX, allocated
                                       at the first ReadProcessed */
    wk_svc_history_events_fn events;    /* ReadEventDetails */
    void                 *events_arg;
};

#define WK_SVC_HISTORY_ONLY_BOUND  UINT32_MAX  /* a point's skip: only the end
                                           bound's BadBoundNotFound is left */

/* One node's raw read as asked. */
struct wk_svc_history_raw {
    int64_t  lo, hi;            /* inclusive */
    int64_t  start, end;        /* the request's times (returnBounds) */
    bool     reverse;
    bool     bounds;            /* returnBounds with both times given */
    bool     modified;          /* isReadModified */
    uint32_t max;               /* values this page */
    enum hs_ts ts;
};

static ua_status wk_svc_history_node(struct wk_svc_ctx *ctx,
                                     const struct ua_history_read_value_id *v,
                                     uint32_t *node);
static void wk_svc_history_data(struct wk_svc_ctx *ctx,
                                struct ua_history_read_result *res,
                                struct ua_datavalue *dv, int32_t n);
static ua_status wk_svc_history_raw_range(
    const struct ua_read_raw_modified_details *d, int32_t ttr,
    uint32_t cap, struct wk_svc_history_raw *q);
static void wk_svc_history_raw_one(struct wk_svc_ctx *ctx,
                                   struct wk_history *h,
                                   const struct ua_history_read_value_id *v,
                                   const struct wk_svc_history_raw *q,
                                   struct ua_history_read_result *res);
static bool wk_svc_history_near(struct wk_history *h, uint64_t key,
                                int64_t t, bool before, int64_t *at);
static void wk_svc_history_no_bound(int64_t t, enum hs_ts ts,
                                    struct ua_datavalue *out);
static ua_status wk_svc_history_cut(struct wk_svc_ctx *ctx,
                                    const struct ua_indexrange *r,
                                    struct ua_datavalue *dv);
static ua_status wk_svc_history_ranged(struct wk_svc_ctx *ctx,
                                       const struct ua_indexrange *r,
                                       struct ua_datavalue *dv);
static ua_status wk_svc_history_sample(struct wk_svc_ctx *ctx,
                                       const struct hs_sample *smp,
                                       enum hs_ts ts,
                                       struct ua_datavalue *out);
static bool wk_svc_history_number(const struct hs_sample *smp, double *d);
static void wk_svc_history_at_one(struct wk_svc_ctx *ctx,
                                  struct wk_history *h, uint32_t node,
                                  const struct ua_read_at_time_details *d,
                                  enum hs_ts ts,
                                  const struct ua_indexrange *range,
                                  struct ua_history_read_result *res);
static void wk_svc_history_agg_sample(const struct hs_sample *smp,
                                      struct ua_agg_sample *out);
static void wk_svc_history_processed_one(
    struct wk_svc_ctx *ctx, struct wk_history *h, uint32_t node,
    const struct ua_read_processed_details *d, int32_t i, enum hs_ts ts,
    const struct ua_string *cpb, struct ua_history_read_result *res);
static ua_status wk_svc_history_processed_page(
    struct wk_svc_ctx *ctx, uint32_t node, uint32_t agg, size_t n,
    const struct ua_string *cpb, size_t *k0,
    struct wk_session_cp **cpp);
static bool wk_svc_history_side(struct wk_svc_ctx *ctx,
                                struct wk_history *h,
                                const struct ua_history_read_value_id *v,
                                const struct wk_svc_history_raw *q,
                                struct ua_history_read_result *res);
static void wk_svc_history_annot_at(
    struct wk_svc_ctx *ctx, struct wk_history *h,
    const struct ua_history_read_value_id *v,
    const struct ua_read_annotation_data_details *d, enum hs_ts ts,
    uint32_t max, struct ua_history_read_result *res);
static void wk_svc_history_read(struct wk_svc_ctx *ctx, const void *req_,
                                void *resp_);

int
wk_svc_history_init(struct wk_worker *w)
{
    struct wk_history *h = calloc(1, sizeof(*h));

    if (h == NULL)
        return -ENOMEM;
    w->history = h;
    if (wk_svc_register(w, UA_NS0ID_HISTORYREADREQUEST_ENCODING_DEFAULTBINARY,
                        wk_svc_history_read, NULL, NULL) != 0) {
        wk_svc_history_fini(w);
        return -EINVAL;
    }
    return 0;
}

void
wk_svc_history_on_events(struct wk_worker *w, wk_svc_history_events_fn fn,
                         void *arg)
{
    w->history->events = fn;
    w->history->events_arg = arg;
}

void
wk_svc_history_fini(struct wk_worker *w)
{
    struct wk_history *h = w->history;

    if (h == NULL)
        return;
    hs_store_close(h->s);
    free(h->agg);
    free(h);
    w->history = NULL;
}

/* The store, opened read-only at first use (again at most once a second
 * while it cannot be: the historian makes it). */
struct hs_store *
wk_svc_history_store(struct wk_worker *w)
{
    struct wk_history     *h = w->history;
    struct hs_store_config c = { .dir = w->conf->history_dir,
                                 .readonly = true };
    char                   err[256];

    if (h->s != NULL)
        return h->s;
    if (w->conf->history_dir[0] == '\0' || w->now_ms < h->retry_ms)
        return NULL;
    h->s = hs_store_open(&c, err, sizeof(err));
    if (h->s == NULL) {
        h->retry_ms = w->now_ms + WK_SVC_HISTORY_RETRY_MS;
        if (!h->warned)
            shm_log(SHM_LOG_INFO, "history store: %s", err);
        h->warned = true;
    }
    return h->s;
}

void
wk_svc_history_warm(struct wk_worker *w)
{
    struct wk_history     *h = w->history;
    struct hs_store_config c = { .dir = w->conf->history_dir,
                                 .readonly = true };
    char                   path[sizeof(w->conf->history_dir) + 16];
    char                   err[256];
    struct stat            st;

    if (h == NULL || h->s != NULL || w->conf->history_dir[0] == '\0')
        return;
    snprintf(path, sizeof(path), "%s/data.mdb", w->conf->history_dir);
    if (stat(path, &st) != 0)
        return;                 /* the historian makes it: at first use */
    h->s = hs_store_open(&c, err, sizeof(err));
}

/* The node of v if HistoryRead may read it: its index, or the status. */
static ua_status
wk_svc_history_node(struct wk_svc_ctx *ctx,
                    const struct ua_history_read_value_id *v, uint32_t *node)
{
    const struct shm_node *n;

    *node = wk_node_lookup(ctx->w, &v->node_id);
    if (*node == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    n = shm_nodestore_node(&ctx->w->ns, *node);
    if (n->node_class != SHM_NC_VARIABLE || !(n->flags & SHM_NF_HISTORIZING))
        return UA_BAD_HISTORY_OPERATION_UNSUPPORTED;
    if (!(n->user_access_level & WK_SVC_HISTORY_ACCESS_READ))
        return UA_BAD_USER_ACCESS_DENIED;
    if (v->data_encoding.ns != 0 || v->data_encoding.name.len > 0)
        return UA_BAD_DATA_ENCODING_INVALID;
    return UA_GOOD;
}

/* res->history_data := HistoryData of dv[0..n). */
static void
wk_svc_history_data(struct wk_svc_ctx *ctx, struct ua_history_read_result *res,
                    struct ua_datavalue *dv, int32_t n)
{
    struct ua_history_data *hd = ua_arena_alloc(ctx->arena, sizeof(*hd));

    if (hd == NULL) {
        res->status_code = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    hd->n_data_values = n;
    hd->data_values = dv;
    res->history_data.encoding = UA_EO_DECODED;
    res->history_data.type = &ua_types[UA_TYPE_HISTORYDATA];
    res->history_data.obj = hd;
}

/* The time range of ReadRawModifiedDetails d as the store reads it. */
static ua_status
wk_svc_history_raw_range(const struct ua_read_raw_modified_details *d,
                         int32_t ttr, uint32_t cap,
                         struct wk_svc_history_raw *q)
{
    int64_t s = d->start_time, e = d->end_time;

    if (d->is_read_modified && d->return_bounds)
        return UA_BAD_INVALID_ARGUMENT;
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
    } else if (s <= e) {                /* [start, end) */
        q->lo = s;
        q->hi = e - 1;
    } else {                            /* (end, start], backwards */
        q->reverse = true;
        q->lo = e + 1;
        q->hi = s;
    }
    /* Bounding values (Part 11 §6.4.3.2) for the times given; none for
     * a time left out. */
    q->bounds = d->return_bounds && s != 0 && e != 0;
    q->modified = d->is_read_modified;
    q->start = s;
    q->end = e;
    q->max = d->num_values_per_node != 0 && d->num_values_per_node < cap
                 ? d->num_values_per_node : cap;
    q->ts = ttr == UA_TIMESTAMPSTORETURN_SERVER ? HS_TS_SERVER
            : ttr == UA_TIMESTAMPSTORETURN_BOTH ? HS_TS_BOTH : HS_TS_SOURCE;
    return UA_GOOD;
}

/*
 * dv (a stored value as UA_DV_ENCODED bytes) cut to the IndexRange r
 * (Part 4 §7.27): decoded, the range extracted, left decoded for the
 * encoder; a value the range selects nothing of keeps its timestamps
 * with BadIndexRangeNoData.
 */
static ua_status
wk_svc_history_ranged(struct wk_svc_ctx *ctx, const struct ua_indexrange *r,
                      struct ua_datavalue *dv)
{
    struct ua_datavalue dec;
    ua_status           st;

    st = ua_decode(dv->value.data, (size_t)dv->value.n, NULL, &dec,
                   &ua_types[UA_TYPE_DATAVALUE], ctx->arena,
                   &ctx->w->limits);
    if (st != UA_GOOD)
        return st == UA_BAD_OUT_OF_MEMORY ? UA_BAD_RESPONSE_TOO_LARGE
                                          : UA_BAD_INTERNAL_ERROR;
    *dv = dec;
    return wk_svc_history_cut(ctx, r, dv);
}

/*
 * A decoded value dv cut to the IndexRange r in place (the raw reads' and
 * ReadAtTime's): nothing selected keeps the timestamps with
 * BadIndexRangeNoData.
 */
static ua_status
wk_svc_history_cut(struct wk_svc_ctx *ctx, const struct ua_indexrange *r,
                   struct ua_datavalue *dv)
{
    struct ua_variant part;
    ua_status         st;

    if (!(dv->mask & UA_DV_VALUE))
        return UA_GOOD;
    st = ua_indexrange_extract(ctx->arena, r, &dv->value, &part);
    if (st == UA_BAD_OUT_OF_MEMORY)
        return UA_BAD_RESPONSE_TOO_LARGE;
    if (st == UA_GOOD) {
        dv->value = part;
    } else {
        memset(&dv->value, 0, sizeof(dv->value));
        dv->value.ndims = -1;
        dv->mask = (uint8_t)((dv->mask & ~UA_DV_VALUE) | UA_DV_STATUS);
        dv->status = UA_BAD_INDEX_RANGE_NO_DATA;
    }
    return UA_GOOD;
}

/* The time of node key's last value at or before t (before) or first at
 * or after t: true and *at, or false when there is none. */
static bool
wk_svc_history_near(struct wk_history *h, uint64_t key, int64_t t,
                    bool before, int64_t *at)
{
    struct hs_sample smp;

    if (hs_read_seek(&h->r, key, before ? 0 : t, before ? t : INT64_MAX,
                     before) != 0
        || hs_read_next(&h->r, &smp) != 0)
        return false;
    *at = smp.t;
    return true;
}

/* A bound the store has no value for: BadBoundNotFound at its time. */
static void
wk_svc_history_no_bound(int64_t t, enum hs_ts ts, struct ua_datavalue *out)
{
    memset(out, 0, sizeof(*out));
    out->value.ndims = -1;
    out->mask = UA_DV_STATUS;
    out->status = UA_BAD_BOUND_NOT_FOUND;
    if (ts == HS_TS_SOURCE || ts == HS_TS_BOTH) {
        out->mask |= UA_DV_SOURCE_TS;
        out->source_ts = t;
    }
    if (ts == HS_TS_SERVER || ts == HS_TS_BOTH) {
        out->mask |= UA_DV_SERVER_TS;
        out->server_ts = t;
    }
}

/* A stored sample as the DataValue the response copies. */
static ua_status
wk_svc_history_sample(struct wk_svc_ctx *ctx, const struct hs_sample *smp,
                      enum hs_ts ts, struct ua_datavalue *out)
{
    size_t   n = hs_sample_dv_size(smp, ts);
    uint8_t *b = ua_arena_alloc(ctx->arena, n);

    if (b == NULL)
        return UA_BAD_RESPONSE_TOO_LARGE;
    hs_sample_dv_write(smp, ts, b, n);
    memset(out, 0, sizeof(*out));
    out->mask = UA_DV_ENCODED;
    out->value.n = (int32_t)n;
    out->value.ndims = -1;
    out->value.data = b;
    return UA_GOOD;
}

/*
 * One node's page of raw values, resumed at its continuation point when
 * it has one, with a new continuation point when more remain.
 */
static void
wk_svc_history_raw_one(struct wk_svc_ctx *ctx, struct wk_history *h,
                       const struct ua_history_read_value_id *v,
                       const struct wk_svc_history_raw *q0,
                       struct ua_history_read_result *res)
{
    struct wk_session    *s = ctx->session;
    struct wk_session_cp *cp = NULL;
    struct wk_svc_history_raw    q = *q0;
    struct ua_datavalue  *dv;
    struct hs_sample      smp;
    uint8_t               idb[4200];
    uint32_t              node, skip = 0, n = 0, at_last = 0;
    int64_t               last = 0, t;
    size_t                idlen;
    ua_status             st;
    int                   rc;
    bool                  end_missing = false, only_bound = false;
    uint64_t              key;
    struct ua_indexrange  range;

    st = wk_svc_history_node(ctx, v, &node);
    if (v->continuation_point.len > 0) {
        cp = wk_session_cp_find(ctx->w, s, &v->continuation_point);
        if (cp == NULL || cp->direction != WK_SVC_HISTORY_CP_MARK
            || (st == UA_GOOD && cp->node != node)) {
            res->status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            return;
        }
        /* Resume: the time of the last value returned, and how many of
         * that time were. */
        last = (int64_t)((uint64_t)cp->next << 32 | cp->max);
        skip = cp->reftype;
        only_bound = skip == WK_SVC_HISTORY_ONLY_BOUND;
    }
    if (st != UA_GOOD) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = st;
        return;
    }
    if (ua_encode(&v->node_id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb),
                  &idlen) != UA_GOOD) {
        res->status_code = UA_BAD_NODE_ID_INVALID;
        return;
    }
    if (v->index_range.len > 0
        && ua_indexrange_parse(v->index_range.data,
                               (size_t)v->index_range.len, &range)
               != UA_GOOD) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = UA_BAD_INDEX_RANGE_INVALID;
        return;
    }
    key = hs_store_key(idb, idlen);
    dv = ua_arena_alloc(ctx->arena, (size_t)q.max * sizeof(*dv));
    if (dv == NULL) {
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    if (q.bounds) {
        /* The bounding values widen the range to their times (nothing
         * lies between a bound and its time but the bound); a missing
         * one is a BadBoundNotFound at its time, the start's first on
         * the first page, the end's last on the last. */
        if (wk_svc_history_near(h, key, q.start, !q.reverse, &t)) {
            if (q.reverse)
                q.hi = t;
            else
                q.lo = t;
        } else if (cp == NULL) {
            wk_svc_history_no_bound(q.start, q.ts, &dv[n++]);
            /* A page that ends here resumes where the values begin. */
            last = q.reverse ? q.hi : q.lo;
        }
        if (wk_svc_history_near(h, key, q.end, q.reverse, &t)) {
            if (q.reverse)
                q.lo = t;
            else
                q.hi = t;
        } else {
            end_missing = true;
        }
    }
    if (cp != NULL) {
        if (q.reverse)
            q.hi = last;
        else
            q.lo = last;
    }
    rc = only_bound ? -ENOENT
         : hs_read_seek(&h->r, key, q.lo, q.hi, q.reverse);
    while (rc == 0 && (rc = hs_read_next(&h->r, &smp)) == 0) {
        if (skip > 0 && smp.t == last) {
            skip--;
            continue;
        }
        skip = 0;
        if (n == q.max)
            break;                      /* one more: a next page */
        st = wk_svc_history_sample(ctx, &smp, q.ts, &dv[n]);
        if (st == UA_GOOD && v->index_range.len > 0)
            st = wk_svc_history_ranged(ctx, &range, &dv[n]);
        if (st != UA_GOOD) {
            rc = -ENOMEM;
            break;
        }
        if (n > 0 && smp.t == last)
            at_last++;
        else
            at_last = 1;
        last = smp.t;
        n++;
    }
    if (rc == -ENOMEM || rc == -EINVAL) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = rc == -EINVAL ? UA_BAD_INTERNAL_ERROR
                                         : UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    /* Resumed on the same time as before: those count too. */
    if (cp != NULL && n > 0 && last == (int64_t)((uint64_t)cp->next << 32
                                                 | cp->max)
        && at_last == n)
        at_last += cp->reftype;
    if (rc == -ENOENT && end_missing) {
        if (n < q.max) {
            wk_svc_history_no_bound(q.end, q.ts, &dv[n++]);
        } else {
            rc = 0;             /* a page of the bound alone follows */
            at_last = WK_SVC_HISTORY_ONLY_BOUND;
        }
    }
    if (rc == 0) {
        /* More remain: the same slot under a new id, or a fresh one. */
        cp = wk_session_cp_renew(ctx->w, s, cp);
        if (cp == NULL) {
            res->status_code = UA_BAD_NO_CONTINUATION_POINTS;
            return;
        }
        cp->direction = WK_SVC_HISTORY_CP_MARK;
        cp->node = node;
        cp->next = (uint32_t)((uint64_t)last >> 32);
        cp->max = (uint32_t)last;
        cp->reftype = at_last;
        if (wk_session_cp_out(s, cp, ctx->arena,
                              &res->continuation_point) != 0) {
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            return;
        }
    } else if (cp != NULL) {
        wk_session_cp_release(s, cp);
    }
    res->status_code = n == 0 && rc != 0 ? UA_GOOD_NO_DATA : UA_GOOD;
    wk_svc_history_data(ctx, res, dv, (int32_t)n);
}

/* A sample's value as a number, when it is a Good scalar number. */
static bool
wk_svc_history_number(const struct hs_sample *smp, double *d)
{
    const uint8_t *p = smp->body + 1;
    size_t         n = smp->body_len - 1;

    if (!(smp->body[0] & UA_DV_VALUE) || n < 1)
        return false;
    if ((hs_sample_status(smp) & 0xC0000000u) != 0)
        return false;
    switch (p[0]) {
    case UA_BT_DOUBLE: {
        if (n < 9)
            return false;
        memcpy(d, p + 1, 8);
        return true;
    }
    case UA_BT_FLOAT: {
        float f;

        if (n < 5)
            return false;
        memcpy(&f, p + 1, 4);
        *d = f;
        return true;
    }
    case UA_BT_INT32: case UA_BT_UINT32: {
        uint32_t u;

        if (n < 5)
            return false;
        memcpy(&u, p + 1, 4);
        *d = p[0] == UA_BT_INT32 ? (double)(int32_t)u : (double)u;
        return true;
    }
    default:
        return false;
    }
}

/* ReadAtTime for one node: a value per requested time, each cut to range
 * when there is one (NULL: none). */
static void
wk_svc_history_at_one(struct wk_svc_ctx *ctx, struct wk_history *h,
                      uint32_t node, const struct ua_read_at_time_details *d,
                      enum hs_ts ts, const struct ua_indexrange *range,
                      struct ua_history_read_result *res)
{
    struct ua_datavalue *dv;
    uint8_t              idb[4200];
    struct ua_nodeid     id;
    size_t               idlen;
    uint64_t             key;
    struct ua_agg_config cfg = { .stepped = false };

    wk_node_id(ctx->w, node, &id);
    if (ua_encode(&id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb), &idlen)
        != UA_GOOD) {
        res->status_code = UA_BAD_INTERNAL_ERROR;
        return;
    }
    key = hs_store_key(idb, idlen);
    (void)wk_histconf_get(ctx->w, node, false, &cfg);
    dv = ua_arena_alloc(ctx->arena, (size_t)d->n_req_times * sizeof(*dv));
    if (dv == NULL) {
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    for (int32_t i = 0; i < d->n_req_times; i++) {
        int64_t          t = d->req_times[i];
        struct hs_sample before, after;
        bool             hb, ha;
        double           a, b;

        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].value.ndims = -1;
        hb = hs_read_seek(&h->r, key, 0, t, true) == 0
             && hs_read_next(&h->r, &before) == 0;
        if (hb && before.t == t) {
            if (wk_svc_history_sample(ctx, &before, ts, &dv[i]) != UA_GOOD
                || (range != NULL
                    && wk_svc_history_ranged(ctx, range, &dv[i])
                           != UA_GOOD))
                res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            continue;
        }
        if (!hb) {
            dv[i].mask = UA_DV_STATUS;
            dv[i].status = UA_BAD_NO_DATA;
            continue;
        }
        ha = t < INT64_MAX
             && hs_read_seek(&h->r, key, t + 1, INT64_MAX, false) == 0
             && hs_read_next(&h->r, &after) == 0;
        dv[i].mask = UA_DV_STATUS | UA_DV_SOURCE_TS;
        dv[i].source_ts = t;
        if (ts == HS_TS_SERVER || ts == HS_TS_BOTH) {
            dv[i].mask |= UA_DV_SERVER_TS;
            dv[i].server_ts = t;
        }
        if (ts == HS_TS_SERVER)
            dv[i].mask &= (uint8_t)~UA_DV_SOURCE_TS;
        if (ha && !cfg.stepped && wk_svc_history_number(&before, &a)
            && wk_svc_history_number(&after, &b) && after.t > before.t) {
            double *x = ua_arena_alloc(ctx->arena, sizeof(*x));

            if (x == NULL) {
                res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
                continue;
            }
            *x = a + (b - a) * (double)(t - before.t)
                         / (double)(after.t - before.t);
            dv[i].mask |= UA_DV_VALUE;
            dv[i].value.type = UA_BT_DOUBLE;
            dv[i].value.n = -1;
            dv[i].value.data = x;
            dv[i].status = UA_GOOD | WK_SVC_HISTORY_INTERPOLATED;
        } else {
            /* Stepped (the node is, or the values are no numbers):
             * the value before; uncertain when nothing follows it. */
            struct ua_datavalue raw;
            struct ua_datavalue dec;
            const uint8_t      *p;
            size_t              used;

            if (wk_svc_history_sample(ctx, &before, HS_TS_NEITHER, &raw)
                != UA_GOOD) {
                res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
                continue;
            }
            p = raw.value.data;
            if (ua_decode(p, (size_t)raw.value.n, &used, &dec,
                          &ua_types[UA_TYPE_DATAVALUE], ctx->arena,
                          &ctx->w->limits) != UA_GOOD
                || !(dec.mask & UA_DV_VALUE)) {
                dv[i].status = UA_BAD_NO_DATA;
                continue;
            }
            dv[i].mask |= UA_DV_VALUE;
            dv[i].value = dec.value;
            dv[i].status = (ha ? UA_GOOD : UA_UNCERTAIN_DATA_SUB_NORMAL)
                           | WK_SVC_HISTORY_INTERPOLATED;
        }
        if (range != NULL && wk_svc_history_cut(ctx, range, &dv[i])
                                 != UA_GOOD)
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
    }
    res->status_code = UA_GOOD;
    wk_svc_history_data(ctx, res, dv, d->n_req_times);
}

/* A stored sample as the aggregate engine's (a value that is no number
 * counts as Bad data: BadTypeMismatch). */
static void
wk_svc_history_agg_sample(const struct hs_sample *smp,
                          struct ua_agg_sample *out)
{
    out->ts = smp->t;
    out->status = hs_sample_status(smp);
    out->value = 0;
    if (!wk_svc_history_number(smp, &out->value)
        && (out->status & 0x80000000u) == 0) {
        /* wk_svc_history_number refuses Bad and Uncertain ones too: an
         * Uncertain number keeps its status and its value. */
        const uint8_t *p = smp->body + 1;

        if ((out->status & 0xC0000000u) == 0x40000000u
            && smp->body_len >= 10 && p[0] == UA_BT_DOUBLE)
            memcpy(&out->value, p + 1, 8);
        else if ((out->status & 0xC0000000u) == 0)
            out->status = UA_BAD_TYPE_MISMATCH;
    }
}

/*
 * Where a ReadProcessed page of node's aggregate agg (n intervals in all)
 * starts: 0 without a continuation point (cpb empty), else the interval
 * its point (*cpp, kept for the next page or released by the caller)
 * says.  BadContinuationPointInvalid for a point that is not this read's.
 */
static ua_status
wk_svc_history_processed_page(struct wk_svc_ctx *ctx, uint32_t node,
                              uint32_t agg, size_t n,
                              const struct ua_string *cpb, size_t *k0,
                              struct wk_session_cp **cpp)
{
    struct wk_session_cp *cp;

    *k0 = 0;
    *cpp = NULL;
    if (cpb->len <= 0)
        return UA_GOOD;
    cp = wk_session_cp_find(ctx->w, ctx->session, cpb);
    if (cp == NULL || cp->direction != WK_SVC_HISTORY_CP_PROC)
        return UA_BAD_CONTINUATION_POINT_INVALID;
    if (cp->node != node || cp->max != agg || cp->result_mask != n
        || cp->next >= n) {
        wk_session_cp_release(ctx->session, cp);
        return UA_BAD_CONTINUATION_POINT_INVALID;
    }
    *k0 = cp->next;
    *cpp = cp;
    return UA_GOOD;
}

/*
 * ReadProcessed for one node (Part 11 §6.4.4): its raw samples in the
 * range with the ones just before and after it, through the Part 13
 * engine (proto/aggregate.h), one DataValue per interval.  More intervals
 * than history.max_return_values are paged: a page is the range of its
 * intervals, computed like a first page (the raw values just before and
 * after it as its bounds), and a continuation point (the session's, like
 * the raw reads') holds the node, the aggregate, the intervals in all and
 * the next page's first.
 */
static void
wk_svc_history_processed_one(struct wk_svc_ctx *ctx, struct wk_history *h,
                             uint32_t node,
                             const struct ua_read_processed_details *d,
                             int32_t i, enum hs_ts ts,
                             const struct ua_string *cpb,
                             struct ua_history_read_result *res)
{
    struct wk_session_cp     *cp;
    size_t                    k0, all, cap;
    int64_t                   start, end, pi;
    const struct ua_agg_info *info = NULL;
    const struct ua_nodeid   *agg = &d->aggregate_type[i];
    /* Part 13 §4.2.1.2's defaults, for a node without its own. */
    struct ua_agg_config      cfg = { true, 100, 100, false, false };
    struct ua_agg_sample      before, after;
    struct ua_agg_input       in = { 0 };
    struct ua_agg_result     *out;
    struct ua_datavalue      *dv;
    struct hs_sample          smp;
    struct ua_nodeid          id;
    uint8_t                   idb[4200];
    size_t                    idlen, n;
    int64_t                   lo, hi;
    uint64_t                  key;
    ua_status                 st;
    int                       rc;

    if (agg->ns == 0 && agg->idtype == UA_IDTYPE_NUMERIC)
        info = ua_aggregate_by_nodeid(agg->id.num);
    if (info == NULL) {
        res->status_code = UA_BAD_AGGREGATE_NOT_SUPPORTED;
        return;
    }
    /* The node's Stepped always, its AggregateConfiguration when the
     * request asks for the server's (Part 13 §4.2.1.2). */
    (void)wk_histconf_get(ctx->w, node,
                          d->aggregate_configuration
                              .use_server_capabilities_defaults, &cfg);
    if (!d->aggregate_configuration.use_server_capabilities_defaults) {
        cfg.treat_uncertain_as_bad =
            d->aggregate_configuration.treat_uncertain_as_bad;
        cfg.percent_data_bad = d->aggregate_configuration.percent_data_bad;
        cfg.percent_data_good = d->aggregate_configuration.percent_data_good;
        cfg.use_sloped_extrapolation =
            d->aggregate_configuration.use_sloped_extrapolation;
    }
    all = ua_aggregate_intervals(d->start_time, d->end_time,
                                 d->processing_interval);
    if (all == 0) {
        res->status_code = UA_BAD_HISTORY_OPERATION_INVALID;
        return;
    }
    if (all > UINT32_MAX) {
        /* More pages than a continuation point counts. */
        res->status_code = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    st = wk_svc_history_processed_page(ctx, node, info->nodeid, all, cpb,
                                       &k0, &cp);
    if (st != UA_GOOD) {
        res->status_code = st;
        return;
    }
    /* This page: intervals k0 .. k0 + n - 1 (all > 1 when paged: the
     * interval is then shorter than the range, in whole ticks). */
    cap = ctx->w->conf->history_max_values ? ctx->w->conf->history_max_values
                                           : 1;
    n = all - k0 < cap ? all - k0 : cap;
    start = d->start_time;
    end = d->end_time;
    if (n < all) {
        pi = (int64_t)llround(d->processing_interval * 10000.0);
        if (d->start_time < d->end_time) {
            start = d->start_time + (int64_t)k0 * pi;
            if (k0 + n < all)
                end = start + (int64_t)n * pi;
        } else {
            start = d->start_time - (int64_t)k0 * pi;
            if (k0 + n < all)
                end = start - (int64_t)n * pi;
        }
    }
    if (k0 + n == all) {
        if (cp != NULL)
            wk_session_cp_release(ctx->session, cp);
    } else {
        /* More remain: the same slot under a new id, or a fresh one. */
        cp = wk_session_cp_renew(ctx->w, ctx->session, cp);
        if (cp == NULL) {
            res->status_code = UA_BAD_NO_CONTINUATION_POINTS;
            return;
        }
        cp->direction = WK_SVC_HISTORY_CP_PROC;
        cp->node = node;
        cp->max = info->nodeid;
        cp->result_mask = (uint32_t)all;
        cp->next = (uint32_t)(k0 + n);
        if (wk_session_cp_out(ctx->session, cp, ctx->arena,
                              &res->continuation_point) != 0) {
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            return;
        }
    }
    if (h->agg == NULL) {
        h->agg = malloc(WK_SVC_HISTORY_AGG_MAX * sizeof(*h->agg));
        if (h->agg == NULL) {
            res->status_code = UA_BAD_RESOURCE_UNAVAILABLE;
            return;
        }
    }
    wk_node_id(ctx->w, node, &id);
    if (ua_encode(&id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb), &idlen)
        != UA_GOOD) {
        res->status_code = UA_BAD_INTERNAL_ERROR;
        return;
    }
    key = hs_store_key(idb, idlen);
    lo = start < end ? start : end;
    hi = start < end ? end : start;
    /* The samples of [lo, hi), ascending, and the bounds around them. */
    if (lo > 0 && hs_read_seek(&h->r, key, 0, lo - 1, true) == 0
        && hs_read_next(&h->r, &smp) == 0) {
        wk_svc_history_agg_sample(&smp, &before);
        in.before = &before;
    }
    if (hs_read_seek(&h->r, key, hi, INT64_MAX, false) == 0
        && hs_read_next(&h->r, &smp) == 0) {
        wk_svc_history_agg_sample(&smp, &after);
        in.after = &after;
    }
    rc = hs_read_seek(&h->r, key, lo, hi - 1, false);
    while (rc == 0 && (rc = hs_read_next(&h->r, &smp)) == 0) {
        if (in.n == WK_SVC_HISTORY_AGG_MAX) {
            res->status_code = UA_BAD_RESOURCE_UNAVAILABLE;
            return;
        }
        wk_svc_history_agg_sample(&smp, &h->agg[in.n++]);
    }
    if (rc == -EINVAL) {
        res->status_code = UA_BAD_INTERNAL_ERROR;
        return;
    }
    in.s = h->agg;
    if (info->agg == UA_AGG_ANNOTATIONCOUNT) {
        ua_datetime *at;

        st = wk_svc_histmod_annot_times(ctx, &h->r, key, lo, hi,
                                        WK_SVC_HISTORY_AGG_MAX, &at,
                                        &in.n_annotations);
        if (st != UA_GOOD) {
            res->status_code = st;
            return;
        }
        in.annotations = at;
    }
    out = ua_arena_alloc(ctx->arena, n * sizeof(*out));
    dv = ua_arena_alloc(ctx->arena, n * sizeof(*dv));
    if (out == NULL || dv == NULL) {
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    st = ua_aggregate_run(info->agg, &cfg, &in, start, end,
                          d->processing_interval, out, n);
    if (st != UA_GOOD) {
        res->status_code = st;
        return;
    }
    for (size_t k = 0; k < n; k++) {
        memset(&dv[k], 0, sizeof(dv[k]));
        dv[k].value.ndims = -1;
        dv[k].mask = UA_DV_STATUS;
        dv[k].status = out[k].status;
        if (ts == HS_TS_SOURCE || ts == HS_TS_BOTH) {
            dv[k].mask |= UA_DV_SOURCE_TS;
            dv[k].source_ts = out[k].ts;
        }
        if (ts == HS_TS_SERVER || ts == HS_TS_BOTH) {
            dv[k].mask |= UA_DV_SERVER_TS;
            dv[k].server_ts = out[k].ts;
        }
        if (!out[k].has_value)
            continue;
        dv[k].mask |= UA_DV_VALUE;
        dv[k].value.n = -1;
        switch (info->type) {
        case UA_AGG_T_INT32: {
            int32_t *x = ua_arena_alloc(ctx->arena, sizeof(*x));

            if (x == NULL)
                goto full;
            *x = (int32_t)out[k].value;
            dv[k].value.type = UA_BT_INT32;
            dv[k].value.data = x;
            break;
        }
        case UA_AGG_T_STATUSCODE: {
            uint32_t *x = ua_arena_alloc(ctx->arena, sizeof(*x));

            if (x == NULL)
                goto full;
            *x = (uint32_t)out[k].value;
            dv[k].value.type = UA_BT_STATUSCODE;
            dv[k].value.data = x;
            break;
        }
        default: {
            double *x = ua_arena_alloc(ctx->arena, sizeof(*x));

            if (x == NULL)
                goto full;
            *x = out[k].value;
            dv[k].value.type = UA_BT_DOUBLE;
            dv[k].value.data = x;
            break;
        }
        }
    }
    res->status_code = UA_GOOD;
    wk_svc_history_data(ctx, res, dv, (int32_t)n);
    return;
full:
    res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
}

/*
 * A raw read of what is kept beside the raw values (worker/svc_histmod.h):
 * the modified values (isReadModified) or the annotations (v names an
 * Annotations Property): true and res filled; false for a plain raw
 * read.
 */
static bool
wk_svc_history_side(struct wk_svc_ctx *ctx, struct wk_history *h,
                    const struct ua_history_read_value_id *v,
                    const struct wk_svc_history_raw *q,
                    struct ua_history_read_result *res)
{
    struct wk_svc_histmod_q mq = { q->lo, q->hi, q->reverse, q->max,
                                   q->ts };
    uint32_t                node, var;
    ua_status               st;

    node = wk_node_lookup(ctx->w, &v->node_id);
    var = wk_histnode_annotated(ctx->w, node);
    if (var == SHM_NONE && !q->modified)
        return false;
    if (var != SHM_NONE) {
        st = q->modified ? UA_BAD_HISTORY_OPERATION_UNSUPPORTED
             : !(ctx->w->ns.nodes[var].user_access_level
                 & WK_SVC_HISTORY_ACCESS_READ)
                 ? UA_BAD_USER_ACCESS_DENIED
             : v->data_encoding.ns != 0 || v->data_encoding.name.len > 0
                 ? UA_BAD_DATA_ENCODING_INVALID : UA_GOOD;
        node = var;
    } else {
        st = wk_svc_history_node(ctx, v, &node);
    }
    if (st == UA_GOOD && v->index_range.len > 0)
        st = UA_BAD_HISTORY_OPERATION_UNSUPPORTED;      /* not yet */
    if (st != UA_GOOD)
        res->status_code = st;
    else
        wk_svc_histmod_read(ctx, &h->r, node, var != SHM_NONE,
                            &v->continuation_point, &mq, res);
    return true;
}

/* ReadAnnotationDataDetails of one node: v a historized variable or its
 * Annotations Property. */
static void
wk_svc_history_annot_at(struct wk_svc_ctx *ctx, struct wk_history *h,
                        const struct ua_history_read_value_id *v,
                        const struct ua_read_annotation_data_details *d,
                        enum hs_ts ts, uint32_t max,
                        struct ua_history_read_result *res)
{
    uint32_t  node, var;
    ua_status st;

    node = wk_node_lookup(ctx->w, &v->node_id);
    var = wk_histnode_annotated(ctx->w, node);
    if (var != SHM_NONE) {
        st = !(ctx->w->ns.nodes[var].user_access_level
               & WK_SVC_HISTORY_ACCESS_READ)
                 ? UA_BAD_USER_ACCESS_DENIED
             : v->data_encoding.ns != 0 || v->data_encoding.name.len > 0
                 ? UA_BAD_DATA_ENCODING_INVALID : UA_GOOD;
        node = var;
    } else {
        st = wk_svc_history_node(ctx, v, &node);
    }
    if (st == UA_GOOD && v->index_range.len > 0)
        st = UA_BAD_HISTORY_OPERATION_UNSUPPORTED;      /* not yet */
    if (st != UA_GOOD) {
        res->status_code = st;
        return;
    }
    wk_svc_histmod_annot_at(ctx, &h->r, node, d->req_times,
                            (uint32_t)d->n_req_times, max, ts,
                            &v->continuation_point, res);
}

static void
wk_svc_history_read(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_history_read_request *req = req_;
    struct ua_history_read_response      *resp = resp_;
    struct ua_response_header            *rh = &resp->response_header;
    const struct ua_extobj               *eo = &req->history_read_details;
    struct wk_history                    *h = ctx->w->history;
    struct ua_history_read_result        *res;
    struct hs_store                      *s;
    struct wk_svc_history_raw                    q;
    int32_t                               n = req->n_nodes_to_read;
    uint32_t                              cap;
    bool                                  raw, processed = false;
    bool                                  annot_at = false;
    ua_status                             st;

    cap = ctx->w->conf->history_max_values;
    if (req->timestamps_to_return < UA_TIMESTAMPSTORETURN_SOURCE
        || req->timestamps_to_return >= UA_TIMESTAMPSTORETURN_NEITHER) {
        /* Part 4 §5.10.3.2: NEITHER is not valid for HistoryRead. */
        rh->service_result = UA_BAD_TIMESTAMPS_TO_RETURN_INVALID;
        return;
    }
    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return;
    }
    if ((uint32_t)n > ctx->w->conf->max_nodes_per_read) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    if (eo->encoding != UA_EO_DECODED || eo->obj == NULL) {
        rh->service_result = UA_BAD_HISTORY_OPERATION_INVALID;
        return;
    }
    if (eo->type == &ua_types[UA_TYPE_READEVENTDETAILS]
        && h->events != NULL) {
        h->events(h->events_arg, ctx, req, resp,
                  wk_svc_history_store(ctx->w));
        return;
    }
    if (eo->type == &ua_types[UA_TYPE_READRAWMODIFIEDDETAILS]) {
        raw = true;
        st = wk_svc_history_raw_range(eo->obj, req->timestamps_to_return,
                                      cap ? cap : 1, &q);
    } else if (eo->type == &ua_types[UA_TYPE_READATTIMEDETAILS]) {
        const struct ua_read_at_time_details *d = eo->obj;

        raw = false;
        st = d->n_req_times <= 0 ? UA_BAD_HISTORY_OPERATION_INVALID
             : (uint32_t)d->n_req_times > cap ? UA_BAD_TOO_MANY_OPERATIONS
                                              : UA_GOOD;
        q.ts = req->timestamps_to_return == UA_TIMESTAMPSTORETURN_SERVER
                   ? HS_TS_SERVER
               : req->timestamps_to_return == UA_TIMESTAMPSTORETURN_BOTH
                   ? HS_TS_BOTH : HS_TS_SOURCE;
    } else if (eo->type == &ua_types[UA_TYPE_READPROCESSEDDETAILS]) {
        const struct ua_read_processed_details *d = eo->obj;

        raw = false;
        processed = true;
        /* One aggregate per node (Part 11 §6.4.4.1). */
        st = d->n_aggregate_type != n ? UA_BAD_HISTORY_OPERATION_INVALID
             : d->processing_interval < 0
                   || d->processing_interval != d->processing_interval
                   || d->start_time <= 0 || d->end_time <= 0
                   || d->start_time == d->end_time
                 ? UA_BAD_HISTORY_OPERATION_INVALID : UA_GOOD;
        q.ts = req->timestamps_to_return == UA_TIMESTAMPSTORETURN_SERVER
                   ? HS_TS_SERVER
               : req->timestamps_to_return == UA_TIMESTAMPSTORETURN_BOTH
                   ? HS_TS_BOTH : HS_TS_SOURCE;
    } else if (eo->type == &ua_types[UA_TYPE_READANNOTATIONDATADETAILS]) {
        const struct ua_read_annotation_data_details *d = eo->obj;

        raw = false;
        annot_at = true;
        st = d->n_req_times <= 0 ? UA_BAD_HISTORY_OPERATION_INVALID
             : (uint32_t)d->n_req_times > cap ? UA_BAD_TOO_MANY_OPERATIONS
                                              : UA_GOOD;
        q.ts = req->timestamps_to_return == UA_TIMESTAMPSTORETURN_SERVER
                   ? HS_TS_SERVER
               : req->timestamps_to_return == UA_TIMESTAMPSTORETURN_BOTH
                   ? HS_TS_BOTH : HS_TS_SOURCE;
    } else if (eo->type == &ua_types[UA_TYPE_READEVENTDETAILS]) {
        st = UA_BAD_HISTORY_OPERATION_UNSUPPORTED;
        raw = false;
    } else {
        st = UA_BAD_HISTORY_OPERATION_INVALID;
        raw = false;
    }
    if (st != UA_GOOD && !req->release_continuation_points) {
        rh->service_result = st;
        return;
    }
    res = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*res));
    if (res == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    s = wk_svc_history_store(ctx->w);
    if (s != NULL && hs_read_begin(s, &h->r) != 0)
        s = NULL;
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
            if (cp != NULL && (cp->direction == WK_SVC_HISTORY_CP_MARK
                               || cp->direction == WK_SVC_HISTORY_CP_PROC
                               || cp->direction == WK_SVC_HISTMOD_CP_MOD
                               || cp->direction == WK_SVC_HISTMOD_CP_ANNOT
                               || cp->direction == WK_SVC_HISTMOD_CP_AT)) {
                wk_session_cp_release(ctx->session, cp);
                res[i].status_code = UA_GOOD;
            } else {
                res[i].status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            }
            continue;
        }
        if (s == NULL) {
            /* History on but nothing stored yet, or history off; an
             * Annotations Property reads as its variable. */
            st = wk_svc_history_node(ctx, v, &node);
            if (st == UA_BAD_HISTORY_OPERATION_UNSUPPORTED
                && wk_histnode_annotated(ctx->w, node) != SHM_NONE)
                st = UA_GOOD;
            res[i].status_code = st != UA_GOOD ? st
                                 : ctx->w->conf->history_dir[0] == '\0'
                                     ? UA_BAD_HISTORY_OPERATION_UNSUPPORTED
                                     : UA_GOOD_NO_DATA;
            continue;
        }
        if (annot_at) {
            wk_svc_history_annot_at(ctx, h, v, eo->obj, q.ts, cap ? cap : 1,
                                    &res[i]);
        } else if (raw) {
            if (!wk_svc_history_side(ctx, h, v, &q, &res[i]))
                wk_svc_history_raw_one(ctx, h, v, &q, &res[i]);
        } else {
            struct ua_indexrange range;
            bool                 ranged = v->index_range.len > 0;

            st = wk_svc_history_node(ctx, v, &node);
            if (st == UA_GOOD && ranged && processed)
                st = UA_BAD_HISTORY_OPERATION_UNSUPPORTED;  /* not yet */
            else if (st == UA_GOOD && ranged
                     && ua_indexrange_parse(v->index_range.data,
                                            (size_t)v->index_range.len,
                                            &range) != UA_GOOD)
                st = UA_BAD_INDEX_RANGE_INVALID;
            if (st != UA_GOOD)
                res[i].status_code = st;
            else if (processed)
                wk_svc_history_processed_one(ctx, h, node, eo->obj, i, q.ts,
                                             &v->continuation_point,
                                             &res[i]);
            else
                wk_svc_history_at_one(ctx, h, node, eo->obj, q.ts,
                                      ranged ? &range : NULL, &res[i]);
        }
    }
    if (s != NULL)
        hs_read_end(&h->r);
    resp->n_results = n;
    resp->results = res;
    resp->n_diagnostic_infos = 0;
}
