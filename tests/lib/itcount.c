/*
 * tests/lib/itcount.c: the counting subscriber of the reconnect tests
 * (integ_reactivate, integ_roam, integ_roll): tests/lib/itcount.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/attrs_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/itcount.h"
#include "tests/lib/itest.h"

void
itc_conns(uint16_t sport, int workers, uint64_t *n)
{
    for (int i = 0; i < workers; i++)
        if (!itest_worker_u64(sport, i, "connections_total", &n[i]))
            itest_fatal("no connections_total for worker %d in /stats", i);
}

int
itc_channel(struct uaconn *c, uint16_t port, uint16_t sport, int workers,
            int want)
{
    if (workers < 1 || workers > ITC_WORKERS_MAX)
        itest_fatal("itc_channel: %d workers", workers);
    for (int t = 0; t < ITC_TRIES; t++) {
        uint64_t before[ITC_WORKERS_MAX], after[ITC_WORKERS_MAX];
        int      w = -1;

        itc_conns(sport, workers, before);
        uaconn_init(c);
        if (uaconn_connect(c, "127.0.0.1", port) != 0
            || uaconn_hello(c, NULL) != UA_GOOD || uaconn_open(c, 0)
            != UA_GOOD)
            itest_fatal("cannot open a SecureChannel");
        itc_conns(sport, workers, after);
        for (int i = 0; i < workers; i++)
            if (after[i] > before[i])
                w = i;
        if (w >= 0 && (want < 0 || w == want
                       || (want >= workers && w != want - workers)))
            return w;
        (void)uaconn_close(c);
        uaconn_clear(c);
    }
    itest_fatal("no connection landed on the worker wanted (%d)", want);
}

ua_status
itc_activate(struct uaconn *c, struct ua_arena *a)
{
    struct ua_activate_session_request  ar;
    struct ua_activate_session_response as;
    struct ua_anonymous_identity_token  anon;

    memset(&ar, 0, sizeof(ar));
    memset(&anon, 0, sizeof(anon));
    anon.policy_id = ua_string_from("anonymous");
    ar.request_header.audit_entry_id.len = -1;
    ar.client_signature.algorithm.len = -1;
    ar.client_signature.signature.len = -1;
    ar.user_token_signature.algorithm.len = -1;
    ar.user_token_signature.signature.len = -1;
    ar.user_identity_token.encoding = UA_EO_DECODED;
    ar.user_identity_token.type = &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN];
    ar.user_identity_token.obj = &anon;
    ar.user_identity_token.type_id = ua_nodeid_num(
        0, ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN].binary_id);
    ua_arena_reset(a);
    return uaconn_call(c, &ua_types[UA_TYPE_ACTIVATESESSIONREQUEST], &ar,
                       &ua_types[UA_TYPE_ACTIVATESESSIONRESPONSE], &as,
                       a);
}

void
itc_subscribe(struct itc_sub *s, double pub_ms, double sample_ms,
              uint32_t queue, struct ua_arena *a)
{
    struct ua_create_subscription_request     cs;
    struct ua_create_subscription_response    csr;
    struct ua_create_monitored_items_request  cm;
    struct ua_create_monitored_items_response cmr;
    struct ua_monitored_item_create_request   it[ITC_ITEMS];
    char                                      ids[ITC_ITEMS][8];
    ua_status                                 st;

    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = pub_ms;
    cs.requested_lifetime_count = 600;
    cs.requested_max_keep_alive_count = 10;
    cs.publishing_enabled = true;
    ua_arena_reset(a);
    st = uaconn_call(&s->c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST],
                     &cs, &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE],
                     &csr, a);
    if (st != UA_GOOD)
        itest_fatal("CreateSubscription: 0x%08X", st);
    s->sub_id = csr.subscription_id;
    memset(it, 0, sizeof(it));
    for (int k = 0; k < ITC_ITEMS; k++) {
        snprintf(ids[k], sizeof(ids[k]), "v%d", 2 * k);
        it[k].item_to_monitor.node_id = ua_nodeid_str(1, ids[k]);
        it[k].item_to_monitor.attribute_id = UA_ATTR_VALUE;
        it[k].item_to_monitor.index_range.len = -1;
        it[k].item_to_monitor.data_encoding.name.len = -1;
        it[k].monitoring_mode = UA_MONITORINGMODE_REPORTING;
        it[k].requested_parameters.client_handle = (uint32_t)k + 1;
        it[k].requested_parameters.sampling_interval = sample_ms;
        it[k].requested_parameters.queue_size = queue;
        it[k].requested_parameters.discard_oldest = true;
        s->it[k].last = INT64_MIN;
    }
    memset(&cm, 0, sizeof(cm));
    cm.subscription_id = s->sub_id;
    cm.timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH;
    cm.n_items_to_create = ITC_ITEMS;
    cm.items_to_create = it;
    st = uaconn_call(&s->c, &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST],
                     &cm, &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE],
                     &cmr, a);
    if (st != UA_GOOD || cmr.n_results != ITC_ITEMS)
        itest_fatal("CreateMonitoredItems: 0x%08X", st);
    for (int k = 0; k < ITC_ITEMS; k++)
        if (cmr.results[k].status_code != UA_GOOD
            || cmr.results[k].revised_queue_size < queue)
            itest_fatal("item %d: 0x%08X, queue %u", k,
                        cmr.results[k].status_code,
                        cmr.results[k].revised_queue_size);
}

void
itc_publish(struct itc_sub *s)
{
    struct ua_publish_request req;
    uint32_t                  id;

    memset(&req, 0, sizeof(req));
    if (s->have_ack) {
        req.n_subscription_acknowledgements = 1;
        req.subscription_acknowledgements = &s->ack;
        s->have_ack = false;
    }
    if (uaconn_send(&s->c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req, &id)
        != UA_GOOD)
        itest_fatal("cannot send a Publish request");
    s->pending++;
}

void
itc_take(struct itc_sub *s, int64_t from, struct ua_arena *a)
{
    struct ua_client_event                ev;
    struct ua_publish_response            resp;
    const struct ua_notification_message *m;
    ua_status                             st;

    st = uaconn_recv(&s->c, &ev);
    if (st != UA_GOOD)
        itest_fatal("receive: 0x%08X", st);
    if (ev.kind != UA_CLIENT_EV_MSG)
        return;
    ua_arena_reset(a);
    st = ua_client_decode(&s->c.cl, &ev, &ua_types[UA_TYPE_PUBLISHRESPONSE],
                          &resp, a);
    if (st != UA_GOOD || resp.response_header.service_result != UA_GOOD)
        itest_fatal("PublishResponse: 0x%08X / 0x%08X", st,
                    resp.response_header.service_result);
    s->pending--;
    if (resp.subscription_id != s->sub_id)
        s->wrong_ids++;
    m = &resp.notification_message;
    if (m->n_notification_data == 0)
        return;                         /* a keep-alive */
    if (s->first_ms == 0)
        s->first_ms = itest_ms();
    if (s->last_seq != 0 && m->sequence_number != s->last_seq + 1)
        s->seq_gaps++;
    s->last_seq = m->sequence_number;
    s->ack.subscription_id = resp.subscription_id;
    s->ack.sequence_number = m->sequence_number;
    s->have_ack = true;
    for (int32_t k = 0; k < m->n_notification_data; k++) {
        const struct ua_data_change_notification *d;

        if (m->notification_data[k].type
            != &ua_types[UA_TYPE_DATACHANGENOTIFICATION])
            continue;
        d = m->notification_data[k].obj;
        for (int32_t j = 0; j < d->n_monitored_items; j++) {
            const struct ua_monitored_item_notification *n =
                &d->monitored_items[j];
            const struct ua_datavalue *v = &n->value;
            struct itc_item            *it;
            int64_t                    x;

            if (n->client_handle < 1 || n->client_handle > ITC_ITEMS)
                itest_fatal("unknown client handle %u", n->client_handle);
            it = &s->it[n->client_handle - 1];
            if ((v->mask & UA_DV_STATUS) && (v->status & 0x0480) != 0)
                it->overflows++;
            if (!(v->mask & UA_DV_VALUE) || v->value.is_array
                || v->value.type != UA_BT_INT32) {
                it->breaks++;
                continue;
            }
            x = *(const int32_t *)v->value.data;
            if (x >= from) {
                if (x != (it->last >= from ? it->last + 1 : from))
                    it->breaks++;
                it->values++;
            }
            it->last = x;
        }
    }
}

ua_status
itc_write(struct uaconn *c, int32_t v, struct ua_arena *a)
{
    struct ua_write_request  req;
    struct ua_write_response resp;
    struct ua_write_value    wv[ITC_ITEMS];
    char                     ids[ITC_ITEMS][8];
    ua_status                st;

    memset(wv, 0, sizeof(wv));
    for (int k = 0; k < ITC_ITEMS; k++) {
        snprintf(ids[k], sizeof(ids[k]), "v%d", 2 * k);
        wv[k].node_id = ua_nodeid_str(1, ids[k]);
        wv[k].attribute_id = UA_ATTR_VALUE;
        wv[k].index_range.len = -1;
        wv[k].value.mask = UA_DV_VALUE;
        ua_variant_set_scalar(&wv[k].value.value, &v, UA_BT_INT32);
    }
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_write = ITC_ITEMS;
    req.nodes_to_write = wv;
    ua_arena_reset(a);
    st = uaconn_call(c, &ua_types[UA_TYPE_WRITEREQUEST], &req,
                     &ua_types[UA_TYPE_WRITERESPONSE], &resp, a);
    if (st != UA_GOOD)
        return st;
    if (resp.n_results != ITC_ITEMS)
        return UA_BAD_UNEXPECTED_ERROR;
    for (int k = 0; k < ITC_ITEMS; k++)
        if (resp.results[k] != UA_GOOD)
            return resp.results[k];
    return UA_GOOD;
}
