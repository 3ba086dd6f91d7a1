/*
 * tests/unit/worker/sub_fixture.h: what the subscription suites share
 * (check_sub.c, check_monitem.c, check_svc_sub.c, check_svc_monitem.c,
 * check_svc_call.c), on top of fixture.h's real address space and
 * dispatcher.
 *
 * sf_setup() runs fx_setup(), wk_sub_init() and captures the deferred
 * responses the connection layer would send (w->reply_hook,
 * worker/reply.h): sf_call() hands each request over with a request
 * context whose connection index is the next number, so a deferred
 * Publish gets a ref numbered 1, 2, ...; every response the subscription
 * code sends later is encoded, decoded again and kept in sf.got[] with
 * the number of its request.  The clock is fx.w.now_ms /
 * now_dt; sf_tick() moves it and runs the publishing timers.
 *
 * sf_change() plays the broker: it writes a value slot (so Read sees it)
 * and hands the record the broker would push (the encoded DataValue: value,
 * status when not Good, source and server timestamps) to the link's value
 * handler, wk_mi_on_value().
 */
#ifndef WK_TEST_SUB_FIXTURE_H
#define WK_TEST_SUB_FIXTURE_H

#include "fixture.h"

#include <errno.h>

#include "proto/attrs_gen.h"
#include "shm/value.h"
#include "worker/conn.h"
#include "worker/reply.h"
#include "worker/sub.h"
#include "worker/sub_int.h"

#define SF_GOT_MAX   512
#define SF_REFS_MAX  4096

/* One response the subscription code sent for a deferred request. */
struct sf_got {
    uint32_t                   ref;        /* the request's number */
    ua_status                  result;     /* ServiceResult */
    struct ua_publish_response p;          /* decoded (header only on a
                                              ServiceFault) */
};

struct sf {
    uint32_t      next_ref;
    bool          dead[SF_REFS_MAX];       /* refs whose "connection" went */
    struct sf_got got[SF_GOT_MAX];
    uint32_t      ngot;
    uint32_t      seen;                    /* sf_next() cursor */
    bool          pending;                 /* the last call was deferred */
    uint32_t      last_ref;
    /* Past SF_GOT_MAX responses are only counted. */
    uint32_t      extra;
    uint32_t      extra_faults;            /* ...of them ServiceFaults */
    uint32_t      extra_last_ref;          /* the last one's ref */
    bool          extra_ordered;           /* refs kept increasing by 1 */
};

static struct sf sf;

static bool
sf_alive(const struct wk_worker *w, const struct wk_conn_ref *ref)
{
    (void)w;
    return ref->index >= SF_REFS_MAX || !sf.dead[ref->index];
}

static int
sf_respond(struct wk_worker *w, const struct wk_conn_ref *ref,
           const struct ua_type *t, void *resp)
{
    struct ua_response_header *rh = resp;
    struct sf_got             *g;
    uint8_t                   *out;
    size_t                     len, used;

    (void)w;
    ck_assert(sf_alive(w, ref));
    if (sf.ngot == SF_GOT_MAX) {
        if (sf.extra == 0)
            sf.extra_ordered = true;
        else if (ref->index != sf.extra_last_ref + 1)
            sf.extra_ordered = false;
        sf.extra++;
        sf.extra_last_ref = ref->index;
        if (UA_STATUS_IS_BAD(rh->service_result))
            sf.extra_faults++;
        return 0;
    }
    g = &sf.got[sf.ngot++];
    memset(g, 0, sizeof(*g));
    g->ref = ref->index;
    g->result = rh->service_result;
    rh->request_handle = ref->request_handle;
    rh->timestamp = fx.w.now_dt;
    if (UA_STATUS_IS_BAD(rh->service_result)) {
        g->p.response_header = *rh;
        return 0;
    }
    ck_assert_ptr_eq(t, &ua_types[UA_TYPE_PUBLISHRESPONSE]);
    len = ua_encoded_size(resp, t);
    ck_assert_uint_gt(len, 0);
    out = ua_arena_alloc(&fx.rarena, len);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(ua_encode(resp, t, out, len, &len), UA_GOOD);
    ck_assert_uint_eq(ua_decode(out, len, &used, &g->p, t, &fx.rarena, NULL),
                      UA_GOOD);
    ck_assert_uint_eq(used, len);
    return 0;
}

static const struct wk_reply_hook sf_hook = { sf_respond, sf_alive };

/*
 * Dispatch like fixture.h's fx_call, but a deferred request is fine: it
 * returns UA_GOOD with sf.pending set and resp zeroed.
 */
static inline ua_status
sf_call(struct ua_sc *ch, const struct ua_nodeid *token, int req_t, void *req,
        int resp_t, void *resp)
{
    struct ua_request_header  *h = req;
    struct wk_conn_result      res;
    struct wk_conn_req         rq;
    struct ua_sc_msg           m;
    struct ua_response_header *rh = resp;
    uint8_t                   *out;
    size_t                     len, olen, used;
    ua_status                  st;

    h->authentication_token = token != NULL ? *token : ua_nodeid_num(0, 0);
    h->request_handle = ++fx.handle;
    h->timestamp = FX_NOW_DT;
    h->timeout_hint = 10000;
    len = fx_encode_request(ua_types[req_t].binary_id, &ua_types[req_t], req);
    memset(&m, 0, sizeof(m));
    m.request_id = 42;
    m.body = fx.msg;
    m.len = len;
    memset(resp, 0, ua_types[resp_t].size);
    ua_arena_reset(&fx.arena);
    /* The request's context: a deferred request's ref gets the next
     * number as its connection index. */
    memset(&rq, 0, sizeof(rq));
    rq.conn = sf.next_ref + 1;
    rq.gen = 1;
    rq.channel_id = ch->channel_id;
    st = wk_svc_dispatch(&fx.w, ch, &rq, &m, &fx.arena, &res);
    sf.pending = false;
    if (st != UA_GOOD)
        return st;
    if (res.pending) {
        sf.pending = true;
        sf.last_ref = ++sf.next_ref;
        return UA_GOOD;
    }
    olen = ua_encoded_size(res.resp, res.type);
    out = ua_arena_alloc(&fx.rarena, olen);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(ua_encode(res.resp, res.type, out, olen, &olen),
                      UA_GOOD);
    if (res.type == &ua_types[UA_TYPE_SERVICEFAULT]) {
        struct ua_service_fault f;

        ck_assert_uint_eq(ua_decode(out, olen, &used, &f, res.type,
                                    &fx.rarena, NULL), UA_GOOD);
        *rh = f.response_header;
    } else {
        ck_assert_ptr_eq(res.type, &ua_types[resp_t]);
        ck_assert_uint_eq(ua_decode(out, olen, &used, resp, res.type,
                                    &fx.rarena, NULL), UA_GOOD);
    }
    return rh->service_result;
}

static inline void
sf_setup_with(fx_tweak_fn tweak)
{
    memset(&sf, 0, sizeof(sf));
    fx_setup_with(tweak);
    ck_assert_int_eq(wk_sub_init(&fx.w), 0);
    fx.w.reply_hook = &sf_hook;
}

static inline void
sf_setup(void)
{
    sf_setup_with(NULL);
}

static inline void
sf_teardown(void)
{
    fx.w.reply_hook = NULL;
    fx_teardown();
}

/* Move the clock by ms and run the publishing timers. */
static inline unsigned
sf_tick(uint32_t ms)
{
    fx.w.now_ms += ms;
    fx.w.now_dt += (int64_t)ms * 10000;
    return wk_sub_run(&fx.w);
}

/* The next response not looked at yet, or NULL. */
static inline struct sf_got *
sf_next(void)
{
    return sf.seen < sf.ngot ? &sf.got[sf.seen++] : NULL;
}

static inline uint32_t
sf_unseen(void)
{
    return sf.ngot - sf.seen;
}

/* ------------------------------------------------------------ services */

static inline ua_status
sf_create_sub_full(struct ua_sc *ch, const struct ua_nodeid *tok,
                   double interval, uint32_t lifetime, uint32_t keepalive,
                   uint32_t max_notifs, uint8_t prio, bool enabled,
                   struct ua_create_subscription_response *resp)
{
    struct ua_create_subscription_request req;

    memset(&req, 0, sizeof(req));
    req.requested_publishing_interval = interval;
    req.requested_lifetime_count = lifetime;
    req.requested_max_keep_alive_count = keepalive;
    req.max_notifications_per_publish = max_notifs;
    req.priority = prio;
    req.publishing_enabled = enabled;
    return sf_call(ch, tok, UA_TYPE_CREATESUBSCRIPTIONREQUEST, &req,
                   UA_TYPE_CREATESUBSCRIPTIONRESPONSE, resp);
}

/* A subscription: interval ms, keep-alive 10, lifetime 100. */
static inline uint32_t
sf_create_sub(struct ua_sc *ch, const struct ua_nodeid *tok, double interval)
{
    struct ua_create_subscription_response resp;

    ck_assert_uint_eq(sf_create_sub_full(ch, tok, interval, 100, 10, 0, 0,
                                         true, &resp), UA_GOOD);
    return resp.subscription_id;
}

/* Parameters for sf_item(). */
struct sf_mi {
    uint32_t         attr;          /* 0: Value */
    double           sampling;
    uint32_t         queue;
    bool             discard_oldest;
    int32_t          mode;          /* -1: Reporting */
    int32_t          ttr;           /* -1: Both */
    struct ua_extobj filter;
    const char      *range;
};

static struct ua_data_change_filter sf_dcf;

/* A DataChangeFilter for sf_mi.filter (one at a time). */
static inline struct ua_extobj
sf_filter(int32_t trigger, uint32_t dbtype, double db)
{
    struct ua_extobj x;

    sf_dcf.trigger = trigger;
    sf_dcf.deadband_type = dbtype;
    sf_dcf.deadband_value = db;
    memset(&x, 0, sizeof(x));
    x.type_id = ua_nodeid_num(
        0, UA_NS0ID_DATACHANGEFILTER_ENCODING_DEFAULTBINARY);
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[UA_TYPE_DATACHANGEFILTER];
    x.obj = &sf_dcf;
    return x;
}

/* CreateMonitoredItems of one item; its result in *res. */
static inline ua_status
sf_item_res(struct ua_sc *ch, const struct ua_nodeid *tok, uint32_t sub,
            struct ua_nodeid node, uint32_t handle, const struct sf_mi *p,
            struct ua_monitored_item_create_result *res)
{
    struct ua_create_monitored_items_request  req;
    struct ua_create_monitored_items_response resp;
    struct ua_monitored_item_create_request   it;
    ua_status                                 st;

    memset(&it, 0, sizeof(it));
    it.item_to_monitor.node_id = node;
    it.item_to_monitor.attribute_id = p->attr ? p->attr : UA_ATTR_VALUE;
    it.item_to_monitor.index_range = ua_string_from(p->range);
    it.item_to_monitor.data_encoding.name.len = -1;
    it.monitoring_mode = p->mode >= 0 ? p->mode
                                      : UA_MONITORINGMODE_REPORTING;
    it.requested_parameters.client_handle = handle;
    it.requested_parameters.sampling_interval = p->sampling;
    it.requested_parameters.queue_size = p->queue;
    it.requested_parameters.discard_oldest = p->discard_oldest;
    it.requested_parameters.filter = p->filter;
    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.timestamps_to_return = p->ttr >= 0 ? p->ttr
                                           : UA_TIMESTAMPSTORETURN_BOTH;
    req.n_items_to_create = 1;
    req.items_to_create = &it;
    st = sf_call(ch, tok, UA_TYPE_CREATEMONITOREDITEMSREQUEST, &req,
                 UA_TYPE_CREATEMONITOREDITEMSRESPONSE, &resp);
    if (st != UA_GOOD)
        return st;
    ck_assert_int_eq(resp.n_results, 1);
    *res = resp.results[0];
    return UA_GOOD;
}

/* A Good item with defaults (sampling 0, queue 1) unless p says; its id. */
static inline uint32_t
sf_item(struct ua_sc *ch, const struct ua_nodeid *tok, uint32_t sub,
        struct ua_nodeid node, uint32_t handle, const struct sf_mi *p)
{
    struct sf_mi                           d = { .mode = -1, .ttr = -1 };
    struct ua_monitored_item_create_result res;

    if (p == NULL)
        p = &d;
    ck_assert_uint_eq(sf_item_res(ch, tok, sub, node, handle, p, &res),
                      UA_GOOD);
    ck_assert_msg(res.status_code == UA_GOOD, "create: 0x%08x",
                  res.status_code);
    return res.monitored_item_id;
}

/* Publish with n acknowledgements; deferred or answered. */
static inline ua_status
sf_publish_acks(struct ua_sc *ch, const struct ua_nodeid *tok,
                struct ua_subscription_acknowledgement *acks, int32_t n)
{
    struct ua_publish_request  req;
    struct ua_publish_response resp;
    ua_status                  st;

    memset(&req, 0, sizeof(req));
    req.n_subscription_acknowledgements = n;
    req.subscription_acknowledgements = acks;
    st = sf_call(ch, tok, UA_TYPE_PUBLISHREQUEST, &req,
                 UA_TYPE_PUBLISHRESPONSE, &resp);
    return st;
}

static inline ua_status
sf_publish(struct ua_sc *ch, const struct ua_nodeid *tok)
{
    return sf_publish_acks(ch, tok, NULL, 0);
}

/* ------------------------------------------------------------ values */

/* The value slot of a NodeId. */
static inline uint32_t
sf_slot(struct ua_nodeid n)
{
    uint32_t i = fx_index(&n);

    ck_assert_uint_ne(i, SHM_NONE);
    return fx.w.ns.nodes[i].u.var.slot;
}

/*
 * The broker's part of a change: store the value in its slot (both
 * timestamps now, or src_ts when not 0), then push the record built from
 * the slot to the worker, as the notification blocks carry it.
 */
static inline void
sf_change_raw(struct ua_nodeid n, const uint8_t *variant, uint32_t vlen,
              ua_status status, int64_t src_ts, int64_t srv_ts)
{
    uint32_t         slot = sf_slot(n);
    struct shm_value meta;
    uint8_t          rec[4096];
    uint32_t         len = 0;

    ck_assert_uint_lt(vlen + 32, sizeof(rec));
    memset(&meta, 0, sizeof(meta));
    meta.status = status;
    meta.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    meta.source_ts = src_ts;
    meta.server_ts = srv_ts;
    ck_assert_int_eq(shm_value_write(&fx.w.vals, slot, variant, vlen,
                                     &meta), 0);
    rec[len++] = (uint8_t)(UA_DV_VALUE | UA_DV_SOURCE_TS | UA_DV_SERVER_TS
                           | (status != UA_GOOD ? UA_DV_STATUS : 0));
    memcpy(rec + len, variant, vlen);
    len += vlen;
    if (status != UA_GOOD) {
        memcpy(rec + len, &status, 4);
        len += 4;
    }
    memcpy(rec + len, &src_ts, 8);
    len += 8;
    memcpy(rec + len, &srv_ts, 8);
    len += 8;
    wk_mi_on_value(fx.w.subs, slot, rec, len);
}

/* Encode a scalar Variant of built-in bt. */
static inline uint32_t
sf_variant(uint8_t bt, const void *v, uint8_t *buf, size_t cap)
{
    struct ua_variant var;
    size_t            len;

    ua_variant_set_scalar(&var, (void *)(uintptr_t)v, bt);
    ck_assert_uint_eq(ua_encode(&var, &ua_types[UA_TYPE_VARIANT], buf, cap,
                                &len), UA_GOOD);
    return (uint32_t)len;
}

/* A change of a Double / Int32 variable at the fixture's time. */
static inline void
sf_change_d(struct ua_nodeid n, double d)
{
    uint8_t  b[64];
    uint32_t l = sf_variant(UA_BT_DOUBLE, &d, b, sizeof(b));

    sf_change_raw(n, b, l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
}

static inline void
sf_change_i(struct ua_nodeid n, int32_t i)
{
    uint8_t  b[64];
    uint32_t l = sf_variant(UA_BT_INT32, &i, b, sizeof(b));

    sf_change_raw(n, b, l, UA_GOOD, fx.w.now_dt, fx.w.now_dt);
}

/* The DataChangeNotification of a Publish response (NULL: keep-alive). */
static inline const struct ua_data_change_notification *
sf_dcn(const struct sf_got *g)
{
    const struct ua_notification_message *m = &g->p.notification_message;

    if (m->n_notification_data <= 0)
        return NULL;
    ck_assert_int_eq(m->n_notification_data, 1);
    ck_assert_int_eq(m->notification_data[0].encoding, UA_EO_DECODED);
    ck_assert_ptr_eq(m->notification_data[0].type,
                     &ua_types[UA_TYPE_DATACHANGENOTIFICATION]);
    return m->notification_data[0].obj;
}

/* The Double / Int32 of notification k. */
static inline double
sf_num(const struct ua_data_change_notification *d, int32_t k)
{
    const struct ua_datavalue *v;

    ck_assert_int_lt(k, d->n_monitored_items);
    v = &d->monitored_items[k].value;
    ck_assert(v->mask & UA_DV_VALUE);
    if (v->value.type == UA_BT_INT32)
        return *(const int32_t *)v->value.data;
    ck_assert_uint_eq(v->value.type, UA_BT_DOUBLE);
    return *(const double *)v->value.data;
}

/* Vars: v0 (Int32 0), v1 (Double 1.5), ... (docs/architecture.md §6). */
static inline struct ua_nodeid
sf_var(unsigned i)
{
    static char buf[16][16];
    static unsigned k;
    char *b = buf[k++ % 16];

    snprintf(b, 16, "v%u", i);
    return fx_ns1(b);
}

/* CreateMonitoredItems of n items on v1, v3, ...; the response. */
static inline ua_status
sf_create_items(struct ua_sc *ch, const struct ua_nodeid *t, uint32_t sub,
                int32_t n, int32_t ttr,
                struct ua_create_monitored_items_response *resp)
{
    struct ua_create_monitored_items_request req;
    struct ua_monitored_item_create_request *it;

    it = ua_arena_alloc(&fx.rarena, (size_t)(n > 0 ? n : 1) * sizeof(*it));
    ck_assert_ptr_nonnull(it);
    for (int32_t i = 0; i < n; i++) {
        char *name = ua_arena_alloc(&fx.rarena, 16);

        ck_assert_ptr_nonnull(name);
        snprintf(name, 16, "v%d", (i % 50) * 2 + 1);
        memset(&it[i], 0, sizeof(it[i]));
        it[i].item_to_monitor.node_id = fx_ns1(name);
        it[i].item_to_monitor.attribute_id = UA_ATTR_VALUE;
        it[i].item_to_monitor.index_range.len = -1;
        it[i].item_to_monitor.data_encoding.name.len = -1;
        it[i].monitoring_mode = UA_MONITORINGMODE_REPORTING;
        it[i].requested_parameters.client_handle = (uint32_t)i;
        it[i].requested_parameters.queue_size = 1;
    }
    memset(&req, 0, sizeof(req));
    req.subscription_id = sub;
    req.timestamps_to_return = ttr;
    req.n_items_to_create = n;
    req.items_to_create = it;
    return sf_call(ch, t, UA_TYPE_CREATEMONITOREDITEMSREQUEST, &req,
                   UA_TYPE_CREATEMONITOREDITEMSRESPONSE, resp);
}

static inline int32_t
sf_count_status(const struct ua_create_monitored_items_response *r,
                ua_status s)
{
    int32_t n = 0;

    for (int32_t i = 0; i < r->n_results; i++)
        n += r->results[i].status_code == s;
    return n;
}

#endif /* WK_TEST_SUB_FIXTURE_H */
