/*
 * tests/bench/uabench_scen.c: uabench's scenarios (tests/bench/uabench.c
 * describes the program), the rows of ub_scenarios[] and their functions:
 * read1, read100, browse, write100; sub and fanout (subscription setup,
 * Publish with acknowledgements, the writer session of --source write,
 * notifications counted from their source timestamps); connect (the handshake cycle and
 * the RSA blocks of its OPN messages).
 */
#include "uabench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/client.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

static int ub_read_init(struct ub *b, struct ub_sess *s, int32_t n);
static int ub_read1_init(struct ub *b, struct ub_sess *s);
static int ub_read100_init(struct ub *b, struct ub_sess *s);
static void ub_read_next(struct ub *b, struct ub_sess *s);
static ua_status ub_read_status(const void *result);
static int ub_browse_init(struct ub *b, struct ub_sess *s);
static void ub_browse_next(struct ub *b, struct ub_sess *s);
static ua_status ub_browse_status(const void *result);
static int ub_write100_init(struct ub *b, struct ub_sess *s);
static void ub_write_next(struct ub *b, struct ub_sess *s);
static ua_status ub_write_status(const void *result);
static int ub_sub_init(struct ub *b, struct ub_sess *s);
static void ub_sub_next(struct ub *b, struct ub_sess *s);
static ua_status ub_sub_status(const void *result);
static void ub_connect_next(struct ub *b, struct ub_sess *s);

/* ------------------------------------------------------------ scenarios */

const struct ub_scenario ub_scenarios[] = {
    { "read1", "Read of 1 Value attribute, rotating over the variables",
      UA_TYPE_READREQUEST, UA_TYPE_READRESPONSE, UA_TYPE_DATAVALUE, 1,
      ub_read1_init, ub_read_next, ub_read_status },
    { "read100", "one Read of 100 Value attributes",
      UA_TYPE_READREQUEST, UA_TYPE_READRESPONSE, UA_TYPE_DATAVALUE,
      UB_READ_N, ub_read100_init, ub_read_next, ub_read_status },
    { "browse", "Browse of the Server object (ns=0;i=2253), all references, "
      "forward, all result fields",
      UA_TYPE_BROWSEREQUEST, UA_TYPE_BROWSERESPONSE, UA_TYPE_BROWSERESULT, 1,
      ub_browse_init, ub_browse_next, ub_browse_status },
    { "write100", "one Write of 100 Values (Int32 to even vN, Double to "
      "odd), new values every time, rotating over the variables",
      UA_TYPE_WRITEREQUEST, UA_TYPE_WRITERESPONSE, UA_TYPE_STATUSCODE,
      UB_WRITE_N, ub_write100_init, ub_write_next, ub_write_status },
    { "sub", "each session subscribes to --items variables (100) at "
      "--interval ms and keeps --depth Publishes in flight; a writer "
      "session changes them --rate times a second (--source write), or "
      "the server's simulation does (--source sim); op = a notification",
      UA_TYPE_PUBLISHREQUEST, UA_TYPE_PUBLISHRESPONSE, UA_TYPE_STATUSCODE,
      0, ub_sub_init, ub_sub_next, ub_sub_status },
    { "fanout", "sub with all sessions watching the same 1,000 variables",
      UA_TYPE_PUBLISHREQUEST, UA_TYPE_PUBLISHRESPONSE, UA_TYPE_STATUSCODE,
      0, ub_sub_init, ub_sub_next, ub_sub_status },
    { "connect", "connect, HEL, OpenSecureChannel (--security), "
      "CreateSession, ActivateSession (anonymous), CloseSession, CLO, "
      "close; op = one such handshake, per --sessions connector",
      UA_TYPE_CLOSESESSIONREQUEST, UA_TYPE_CLOSESESSIONRESPONSE,
      UA_TYPE_STATUSCODE, 0, ub_connect_init, ub_connect_next, NULL },
};

/* The subscription scenarios and their default --items. */
uint32_t
ub_sub_items(const struct ub_scenario *sc)
{
    if (sc->init != ub_sub_init)
        return 0;
    return strcmp(sc->name, "fanout") == 0 ? 1000 : 100;
}
const size_t ub_nscenarios = sizeof(ub_scenarios) / sizeof(ub_scenarios[0]);

static int
ub_read_init(struct ub *b, struct ub_sess *s, int32_t n)
{
    struct ua_read_request  *r = calloc(1, sizeof(*r));
    struct ua_read_value_id *ids = calloc((size_t)n, sizeof(*ids));

    if (r == NULL || ids == NULL) {
        free(r);
        free(ids);
        return -1;
    }
    r->max_age = 0;
    r->timestamps_to_return = b->timestamps;
    r->n_nodes_to_read = n;
    r->nodes_to_read = ids;
    for (int32_t i = 0; i < n; i++) {
        ids[i].node_id.ns = b->vars_ns;
        ids[i].node_id.idtype = UA_IDTYPE_STRING;
        ids[i].attribute_id = UA_ATTR_VALUE;
        ids[i].index_range.len = -1;
        ids[i].data_encoding.name.len = -1;
    }
    s->req = r;
    /* Spread the sessions over the variables. */
    s->cursor = (uint32_t)(((uint64_t)s->idx * 7919u) % b->vars_count);
    ub_read_next(b, s);
    return 0;
}

static int
ub_read1_init(struct ub *b, struct ub_sess *s)
{
    return ub_read_init(b, s, 1);
}

static int
ub_read100_init(struct ub *b, struct ub_sess *s)
{
    return ub_read_init(b, s, UB_READ_N);
}

static void
ub_read_next(struct ub *b, struct ub_sess *s)
{
    struct ua_read_request *r = s->req;

    for (int32_t i = 0; i < r->n_nodes_to_read; i++) {
        r->nodes_to_read[i].node_id.id.str = b->vars[s->cursor];
        if (++s->cursor == b->vars_count)
            s->cursor = 0;
    }
}

static ua_status
ub_read_status(const void *result)
{
    const struct ua_datavalue *dv = result;

    if (dv->mask & UA_DV_STATUS)
        return dv->status;
    if (!(dv->mask & UA_DV_VALUE))
        return UA_BAD_UNEXPECTED_ERROR;     /* Good but no value */
    return UA_GOOD;
}

static int
ub_browse_init(struct ub *b, struct ub_sess *s)
{
    struct ua_browse_request     *r = calloc(1, sizeof(*r));
    struct ua_browse_description *d = calloc(1, sizeof(*d));

    (void)b;
    if (r == NULL || d == NULL) {
        free(r);
        free(d);
        return -1;
    }
    r->view.view_id = ua_nodeid_num(0, 0);
    r->requested_max_references_per_node = 0;
    r->n_nodes_to_browse = 1;
    r->nodes_to_browse = d;
    d->node_id = ua_nodeid_num(0, UA_NS0ID_SERVER);
    d->browse_direction = 0;                        /* Forward */
    d->reference_type_id = ua_nodeid_num(0, 0);     /* all references */
    d->include_subtypes = true;
    d->node_class_mask = 0;                         /* all classes */
    d->result_mask = 0x3F;                          /* BrowseResultMask All */
    s->req = r;
    return 0;
}

static void
ub_browse_next(struct ub *b, struct ub_sess *s)
{
    (void)b;
    (void)s;
}

static ua_status
ub_browse_status(const void *result)
{
    const struct ua_browse_result *r = result;

    if (UA_STATUS_IS_BAD(r->status_code))
        return r->status_code;
    if (r->n_references <= 0)
        return UA_BAD_UNEXPECTED_ERROR;     /* the Server object has some */
    if (r->continuation_point.len > 0)
        return UA_BAD_UNEXPECTED_ERROR;     /* would leak a point per op */
    return UA_GOOD;
}

/* A write100 request and the values it points at. */
struct ub_write100 {
    struct ua_write_request r;          /* first: s->req points here */
    struct ua_write_value   wv[UB_WRITE_N];
    int32_t                 iv[UB_WRITE_N];
    double                  dv[UB_WRITE_N];
    uint32_t                round;
};

static int
ub_write100_init(struct ub *b, struct ub_sess *s)
{
    struct ub_write100 *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return -1;
    w->r.n_nodes_to_write = UB_WRITE_N;
    w->r.nodes_to_write = w->wv;
    for (int32_t i = 0; i < UB_WRITE_N; i++) {
        w->wv[i].node_id.ns = b->vars_ns;
        w->wv[i].node_id.idtype = UA_IDTYPE_STRING;
        w->wv[i].attribute_id = UA_ATTR_VALUE;
        w->wv[i].index_range.len = -1;
        w->wv[i].value.mask = UA_DV_VALUE;
    }
    s->req = &w->r;
    s->cursor = (uint32_t)(((uint64_t)s->idx * 7919u) % b->vars_count);
    ub_write_next(b, s);
    return 0;
}

/* The next 100 variables, new values: Int32 for even N, Double for odd. */
static void
ub_write_next(struct ub *b, struct ub_sess *s)
{
    struct ub_write100 *w = s->req;

    w->round++;
    for (int32_t i = 0; i < UB_WRITE_N; i++) {
        struct ua_variant *v = &w->wv[i].value.value;

        w->wv[i].node_id.id.str = b->vars[s->cursor];
        if (s->cursor % 2 == 0) {
            w->iv[i] = (int32_t)(w->round + (uint32_t)i);
            ua_variant_set_scalar(v, &w->iv[i], UA_BT_INT32);
        } else {
            w->dv[i] = w->round + i + 0.5;
            ua_variant_set_scalar(v, &w->dv[i], UA_BT_DOUBLE);
        }
        if (++s->cursor == b->vars_count)
            s->cursor = 0;
    }
}

static ua_status
ub_write_status(const void *result)
{
    return *(const ua_status *)result;
}

/* ------------------------------------------------------------ sub, fanout */

/* A subscriber's PublishRequest and the acknowledgements it carries. */
struct ub_publish {
    struct ua_publish_request              r;      /* first: s->req */
    struct ua_subscription_acknowledgement acks[UB_SUB_ACKS];
};

static int
ub_sub_init(struct ub *b, struct ub_sess *s)
{
    struct ub_publish *p = calloc(1, sizeof(*p));

    (void)b;
    if (p == NULL)
        return -1;
    s->req = &p->r;
    return 0;
}

/* The next Publish acknowledges what came since the last one. */
static void
ub_sub_next(struct ub *b, struct ub_sess *s)
{
    struct ub_publish *p = s->req;

    (void)b;
    memcpy(p->acks, s->acks, s->nacks * sizeof(s->acks[0]));
    p->r.n_subscription_acknowledgements = (int32_t)s->nacks;
    p->r.subscription_acknowledgements = p->acks;
    s->nacks = 0;
}

static ua_status
ub_sub_status(const void *result)
{
    return *(const ua_status *)result;
}

/*
 * After ActivateSession: a subscriber creates its subscription (true);
 * the writer, and every session of the other scenarios, is ready (false).
 */
bool
ub_sub_setup(struct ub *b, struct ub_sess *s)
{
    struct ua_create_subscription_request r;
    ua_status                             st;

    if (!b->is_sub || s->writer)
        return false;
    memset(&r, 0, sizeof(r));
    r.requested_publishing_interval = b->interval;
    r.requested_lifetime_count = 3000;
    r.requested_max_keep_alive_count = 10;
    r.max_notifications_per_publish = 0;
    r.publishing_enabled = true;
    st = ub_send_request(b, s, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST],
                         &r, &s->setup_request);
    if (st != UA_GOOD)
        ub_sess_kill(b, s, st, "cannot encode CreateSubscription");
    else
        s->state = UB_S_SUBSCRIBE;
    return true;
}

/* CreateSubscription, then CreateMonitoredItems of --items variables. */
void
ub_sub_setup_msg(struct ub *b, struct ub_sess *s,
                 const struct ua_client_event *ev)
{
    ua_status st;

    if (ev->request_id != s->setup_request) {
        ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request");
        return;
    }
    ua_arena_reset(&b->arena);
    if (s->state == UB_S_SUBSCRIBE) {
        struct ua_create_subscription_response   r;
        struct ua_create_monitored_items_request m;
        struct ua_monitored_item_create_request *it;

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE],
                              &r, &b->arena);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "CreateSubscription failed");
            return;
        }
        it = ua_arena_alloc(&b->arena, (size_t)b->items * sizeof(*it));
        if (it == NULL) {
            ub_sess_kill(b, s, UA_BAD_OUT_OF_MEMORY, "--items too many");
            return;
        }
        memset(it, 0, (size_t)b->items * sizeof(*it));
        for (uint32_t j = 0; j < b->items; j++) {
            it[j].item_to_monitor.node_id.ns = b->vars_ns;
            it[j].item_to_monitor.node_id.idtype = UA_IDTYPE_STRING;
            it[j].item_to_monitor.node_id.id.str = b->vars[j % b->vars_count];
            it[j].item_to_monitor.attribute_id = UA_ATTR_VALUE;
            it[j].item_to_monitor.index_range.len = -1;
            it[j].item_to_monitor.data_encoding.name.len = -1;
            it[j].monitoring_mode = 2;                  /* Reporting */
            it[j].requested_parameters.client_handle = j;
            it[j].requested_parameters.sampling_interval = 0;
            it[j].requested_parameters.queue_size = b->queue;
            it[j].requested_parameters.discard_oldest = true;
        }
        memset(&m, 0, sizeof(m));
        m.subscription_id = r.subscription_id;
        m.timestamps_to_return = b->timestamps;
        m.n_items_to_create = (int32_t)b->items;
        m.items_to_create = it;
        st = ub_send_request(b, s,
                             &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST],
                             &m, &s->setup_request);
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "cannot encode CreateMonitoredItems");
            return;
        }
        s->state = UB_S_ITEMS;
        return;
    }
    {
        struct ua_create_monitored_items_response r;

        st = ua_client_decode(&s->cl, ev,
                              &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE],
                              &r, &b->arena);
        if (st == UA_GOOD && r.n_results != (int32_t)b->items)
            st = UA_BAD_UNEXPECTED_ERROR;
        for (int32_t i = 0; st == UA_GOOD && i < r.n_results; i++)
            st = r.results[i].status_code;
        if (st != UA_GOOD) {
            ub_sess_kill(b, s, st, "CreateMonitoredItems failed");
            return;
        }
        s->state = UB_S_READY;
        ub_sess_ready(b, s);
        ub_sess_refill(b, s);
    }
}

/*
 * A PublishResponse (subscriber) or WriteResponse (writer).  A subscriber
 * counts every notification as an op and its latency from the source
 * timestamp; the Publish is replaced by the next one at once.
 */
void
ub_sub_response(struct ub *b, struct ub_sess *s,
                const struct ua_client_event *ev)
{
    struct ua_publish_response            r;
    const struct ua_notification_message *m = &r.notification_message;
    int64_t                               now_dt;
    uint32_t                              i;
    ua_status                             st;

    for (i = 0; i < b->depth; i++)
        if (s->slots[i].request_id == ev->request_id)
            break;
    if (i == b->depth || ev->request_id == 0) {
        if (b->phase < UB_DRAIN)
            ub_error(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request id");
        return;
    }
    s->slots[i].request_id = 0;
    s->inflight--;
    ua_arena_reset(&b->arena);
    if (s->writer) {
        struct ua_write_response w;

        st = ua_client_decode(&s->cl, ev, &ua_types[UA_TYPE_WRITERESPONSE],
                              &w, &b->arena);
        for (int32_t k = 0; st == UA_GOOD && k < w.n_results; k++)
            st = w.results[k];
        if (st != UA_GOOD)
            ub_error(b, s, st, "the writer's Write failed");
        return;
    }
    st = ua_client_decode(&s->cl, ev, &ua_types[UA_TYPE_PUBLISHRESPONSE], &r,
                          &b->arena);
    if (st != UA_GOOD) {
        if (b->phase < UB_DRAIN)
            ub_error(b, s, st, "Publish failed");
        ub_sess_refill(b, s);
        return;
    }
    for (int32_t k = 0; k < r.n_results; k++)
        if (r.results[k] != UA_GOOD)
            ub_error(b, s, r.results[k], "an acknowledgement failed");
    if (m->n_notification_data > 0 && s->nacks < UB_SUB_ACKS) {
        s->acks[s->nacks].subscription_id = r.subscription_id;
        s->acks[s->nacks].sequence_number = m->sequence_number;
        s->nacks++;
    }
    now_dt = ub_now_dt();
    for (int32_t k = 0; k < m->n_notification_data; k++) {
        const struct ua_data_change_notification *d;

        if (m->notification_data[k].type
            != &ua_types[UA_TYPE_DATACHANGENOTIFICATION])
            continue;
        d = m->notification_data[k].obj;
        for (int32_t j = 0; j < d->n_monitored_items; j++) {
            const struct ua_datavalue *v = &d->monitored_items[j].value;

            if ((v->mask & UA_DV_STATUS) && (v->status & 0x0480) == 0x0480)
                b->overflows++;             /* the server lost some */
            if (b->phase != UB_MEASURE)
                continue;
            b->ops++;
            if ((v->mask & UA_DV_SOURCE_TS) && now_dt >= v->source_ts)
                ub_hist_add(b, (uint64_t)(now_dt - v->source_ts) * 100u);
        }
    }
    ub_sess_refill(b, s);
}

/* The writer's Write: every watched variable, a new value each time. */
int
ub_sub_writer_init(struct ub *b)
{
    b->wv = calloc(b->items, sizeof(*b->wv));
    b->wi = calloc(b->items, sizeof(*b->wi));
    b->wd = calloc(b->items, sizeof(*b->wd));
    if (b->wv == NULL || b->wi == NULL || b->wd == NULL)
        return -1;
    for (uint32_t j = 0; j < b->items; j++) {
        b->wv[j].node_id.ns = b->vars_ns;
        b->wv[j].node_id.idtype = UA_IDTYPE_STRING;
        b->wv[j].node_id.id.str = b->vars[j % b->vars_count];
        b->wv[j].attribute_id = UA_ATTR_VALUE;
        b->wv[j].index_range.len = -1;
        /* The broker stamps the source timestamp when it applies the
         * value (a client may not write timestamps to the Vars). */
        b->wv[j].value.mask = UA_DV_VALUE;
    }
    b->wreq.n_nodes_to_write = (int32_t)b->items;
    b->wreq.nodes_to_write = b->wv;
    return 0;
}

/*
 * Send the writer's next Write when it is due (one in flight at most); the
 * milliseconds until the next one is due (for the loop's timeout).
 */
uint64_t
ub_sub_write(struct ub *b)
{
    struct ub_sess *s = &b->sess[b->nsess - 1];
    uint64_t        period = (uint64_t)(1e9 / b->rate), now = ub_mono_ns();
    uint32_t        id;
    ua_status       st;

    if (!s->writer || s->state != UB_S_READY
        || (b->phase != UB_WARMUP && b->phase != UB_MEASURE))
        return 100;
    if (s->write_next_ns == 0)
        s->write_next_ns = now;
    if (now < s->write_next_ns)
        return (s->write_next_ns - now) / 1000000u + 1;
    if (s->inflight > 0)
        return 1;
    b->wround++;
    for (uint32_t j = 0; j < b->items; j++) {
        struct ua_variant *v = &b->wv[j].value.value;
        uint32_t           n = j % b->vars_count;

        if (n % 2 == 0) {
            b->wi[j] = (int32_t)(b->wround + j);
            ua_variant_set_scalar(v, &b->wi[j], UA_BT_INT32);
        } else {
            b->wd[j] = b->wround + j + 0.5;
            ua_variant_set_scalar(v, &b->wd[j], UA_BT_DOUBLE);
        }
    }
    st = ub_send_request(b, s, &ua_types[UA_TYPE_WRITEREQUEST], &b->wreq,
                         &id);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "cannot encode the writer's Write");
        return 100;
    }
    s->slots[0].request_id = id;
    s->slots[0].sent_ns = 0;
    s->inflight = 1;
    s->write_next_ns += period;
    if (s->write_next_ns + period < now) {
        s->write_next_ns = now + period;        /* behind: start over */
        b->lag_writes++;
    }
    return period / 1000000u + 1;
}

/* ------------------------------------------------------------ connect */

int
ub_connect_init(struct ub *b, struct ub_sess *s)
{
    (void)b;
    (void)s;
    return 0;
}

static void
ub_connect_next(struct ub *b, struct ub_sess *s)
{
    (void)b;
    (void)s;
}

/* The session is active: close it, the last service call of the cycle. */
void
ub_connect_close_session(struct ub *b, struct ub_sess *s)
{
    struct ua_close_session_request r;
    ua_status                       st;

    memset(&r, 0, sizeof(r));
    r.delete_subscriptions = true;
    st = ub_send_request(b, s, &ua_types[UA_TYPE_CLOSESESSIONREQUEST], &r,
                         &s->setup_request);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "cannot encode CloseSession");
        return;
    }
    s->state = UB_S_CLOSING;
}

/*
 * CloseSession answered: one handshake done (its latency runs from the
 * connect()).  CLO, close the socket and, while loading, start the next
 * cycle on a new connection; else the connector rests (IDLE).
 */
void
ub_connect_closed(struct ub *b, struct ub_sess *s,
                  const struct ua_client_event *ev)
{
    struct ua_close_session_response r;
    ua_status                        st;

    if (ev->request_id != s->setup_request) {
        ub_sess_kill(b, s, UA_BAD_UNKNOWN_RESPONSE,
                     "response to an unknown request");
        return;
    }
    ua_arena_reset(&b->arena);
    st = ua_client_decode(&s->cl, ev, &ua_types[UA_TYPE_CLOSESESSIONRESPONSE],
                          &r, &b->arena);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "CloseSession failed");
        return;
    }
    if (b->phase == UB_MEASURE) {
        b->ops++;
        if (b->now_ns >= s->cycle_ns)
            ub_hist_add(b, b->now_ns - s->cycle_ns);
    }
    st = ua_client_close(&s->cl, &s->out);
    if (st != UA_GOOD) {
        ub_sess_kill(b, s, st, "cannot encode CLO");
        return;
    }
    ub_sess_flush(b, s);
    if (s->state == UB_S_DEAD)
        return;
    epoll_ctl(b->ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->fd = -1;
    s->state = UB_S_IDLE;
    if (b->phase == UB_WARMUP || b->phase == UB_MEASURE) {
        if (ub_sess_start(b, s) != 0)
            ub_sess_kill(b, s, UA_BAD_COMMUNICATION_ERROR,
                         "cannot start the connection");
    }
}

/*
 * The RSA blocks of an OPN chunk (request or response) of a secured
 * channel: the bytes after the asymmetric security header, in blocks of
 * the receiver's key.  Kept the first time, for the RSA ceiling.
 */
void
ub_opn_blocks(struct ub *b, const uint8_t *chunk, size_t len,
              size_t key_bytes, uint32_t *blocks)
{
    struct ua_sc_asym_hdr h;

    if (b->policy == NULL || *blocks != 0 || key_bytes == 0 || len < 12
        || memcmp(chunk, "OPN", 3) != 0
        || ua_sc_asym_parse(chunk, len, &h) != UA_GOOD || h.end >= len
        || (len - h.end) % key_bytes != 0)
        return;
    *blocks = (uint32_t)((len - h.end) / key_bytes);
}
