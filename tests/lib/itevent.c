/*
 * tests/lib/itevent.c: an event item on the Server and its events
 * (tests/lib/itevent.h).
 *
 * Test programs only; single-threaded.
 */
#include "itevent.h"

#include <string.h>

#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "tests/lib/itest.h"

void
itev_filter(struct itev *ev, const struct itev_sel *sel, int n)
{
    if (n > ITEV_SEL_MAX)
        itest_fatal("itev_filter: %d select clauses", n);
    for (int i = 0; i < n; i++) {
        struct ua_simple_attribute_operand *op = &ev->ops[i];

        memset(op, 0, sizeof(*op));
        op->type_definition_id = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
        op->attribute_id = UA_ATTR_VALUE;
        op->index_range.len = -1;
        op->browse_path = ev->qn[i];
        if (sel[i].condition_id) {
            op->type_definition_id = ua_nodeid_num(0,
                                                   UA_NS0ID_CONDITIONTYPE);
            op->attribute_id = UA_ATTR_NODEID;
            continue;
        }
        for (int k = 0; k < ITEV_PATH_MAX && sel[i].path[k] != NULL; k++) {
            ev->qn[i][k].ns = sel[i].ns;
            ev->qn[i][k].name = ua_string_from(sel[i].path[k]);
            op->n_browse_path = k + 1;
        }
    }
    memset(&ev->filter, 0, sizeof(ev->filter));
    ev->filter.n_select_clauses = n;
    ev->filter.select_clauses = ev->ops;
}

void
itev_subscribe(struct itev *ev, struct uaconn *c, struct ua_arena *a,
               uint32_t handle)
{
    struct ua_create_subscription_request     cs;
    struct ua_create_subscription_response    csr;
    struct ua_create_monitored_items_request  cm;
    struct ua_create_monitored_items_response cmr;
    struct ua_monitored_item_create_request   it;
    ua_status                                 s;

    memset(&cs, 0, sizeof(cs));
    cs.requested_publishing_interval = 50;
    cs.requested_lifetime_count = 600;
    cs.requested_max_keep_alive_count = 10;
    cs.publishing_enabled = true;
    ua_arena_reset(a);
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATESUBSCRIPTIONREQUEST], &cs,
                    &ua_types[UA_TYPE_CREATESUBSCRIPTIONRESPONSE], &csr, a);
    if (s != UA_GOOD)
        itest_fatal("CreateSubscription: 0x%08X", s);
    ev->sub_id = csr.subscription_id;
    ev->handle = handle;
    memset(&it, 0, sizeof(it));
    it.item_to_monitor.node_id = ua_nodeid_num(0, UA_NS0ID_SERVER);
    it.item_to_monitor.attribute_id = UA_ATTR_EVENTNOTIFIER;
    it.item_to_monitor.index_range.len = -1;
    it.item_to_monitor.data_encoding.name.len = -1;
    it.monitoring_mode = UA_MONITORINGMODE_REPORTING;
    it.requested_parameters.client_handle = handle;
    it.requested_parameters.queue_size = 100;
    it.requested_parameters.discard_oldest = true;
    it.requested_parameters.filter.type_id =
        ua_nodeid_num(0, UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
    it.requested_parameters.filter.encoding = UA_EO_DECODED;
    it.requested_parameters.filter.type = &ua_types[UA_TYPE_EVENTFILTER];
    it.requested_parameters.filter.obj = &ev->filter;
    memset(&cm, 0, sizeof(cm));
    cm.subscription_id = csr.subscription_id;
    cm.timestamps_to_return = UA_TIMESTAMPSTORETURN_NEITHER;
    cm.n_items_to_create = 1;
    cm.items_to_create = &it;
    s = uaconn_call(c, &ua_types[UA_TYPE_CREATEMONITOREDITEMSREQUEST], &cm,
                    &ua_types[UA_TYPE_CREATEMONITOREDITEMSRESPONSE], &cmr,
                    a);
    if (s != UA_GOOD || cmr.n_results != 1
        || cmr.results[0].status_code != UA_GOOD)
        itest_fatal("CreateMonitoredItems on EventNotifier: 0x%08X / 0x%08X",
                    s, cmr.n_results == 1 ? cmr.results[0].status_code : 0);
    ev->queue = cmr.results[0].revised_queue_size;
}

int
itev_publish(struct itev *ev, struct uaconn *c, struct ua_arena *a, int max,
             int n, unsigned ms, itev_decode_fn decode, void *arg)
{
    uint64_t until = itest_ms() + ms;
    int      got = 0;

    while (got < n && itest_ms() < until) {
        struct ua_publish_request                req;
        struct ua_publish_response               resp;
        const struct ua_event_notification_list *l;
        const struct ua_notification_message    *m;

        memset(&req, 0, sizeof(req));
        if (ev->have_ack) {
            req.n_subscription_acknowledgements = 1;
            req.subscription_acknowledgements = &ev->ack;
        }
        ua_arena_reset(a);
        if (uaconn_call(c, &ua_types[UA_TYPE_PUBLISHREQUEST], &req,
                        &ua_types[UA_TYPE_PUBLISHRESPONSE], &resp, a)
            != UA_GOOD)
            break;
        m = &resp.notification_message;
        ev->have_ack = false;
        if (m->n_notification_data != 1)
            continue;
        ev->ack.subscription_id = resp.subscription_id;
        ev->ack.sequence_number = m->sequence_number;
        ev->have_ack = true;
        if (m->notification_data[0].type
            != &ua_types[UA_TYPE_EVENTNOTIFICATIONLIST])
            continue;
        l = m->notification_data[0].obj;
        for (int32_t k = 0; k < l->n_events && got < max; k++)
            decode(arg, got++, &l->events[k]);
    }
    return got;
}
