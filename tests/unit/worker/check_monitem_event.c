/*
 * tests/unit/worker/check_monitem_event.c: event monitored items
 * (worker/monitem_event.c, the event queue of worker/monitem_queue.c)
 * through the services and the fan-out hook, on the real address space:
 * the nodes and filters CreateMonitoredItems takes and refuses, select
 * clause results, field picking (paths, null fields, TypeDefinitionIds),
 * the Server and other notifiers, queue revision (default, the maximum),
 * overflow with discardOldest true and false (EventQueueOverflowEventType
 * at the front / at the end), events lost upstream, Modify, monitoring
 * modes, Delete and the interest bit, data changes and events in one
 * subscription.
 */
#include "sub_fixture.h"

#include "event_fixture.h"
#include "worker/sub_int.h"
#include "worker/node.h"
#include "worker/roam.h"
#include "worker/sub.h"

#define CH (&fx.ch[0])

static struct ua_nodeid tok;

static void
tw_fast(struct shm_config *c)
{
    c->min_sampling_interval_ms = 0;
    c->min_publishing_interval_ms = 50;
    c->max_event_queue_size = 5;
    c->default_event_queue_size = 3;
}

static void
setup(void)
{
    sf_setup_with(tw_fast);
    tok = fx_session(CH);
}

static void
teardown(void)
{
    sf_teardown();
}

/* ------------------------------------------------------------ filters */

static struct ua_simple_attribute_operand ops[8];
static struct ua_qualifiedname            qns[8][2];
static struct ua_event_filter             evf;

/* Select clause k: path "ns:name[/ns:name]" (NULL: none), attribute,
 * TypeDefinitionId (0: null). */
static void
sel(int k, uint16_t ns, const char *name, const char *name2, uint32_t attr,
    uint32_t typedef_id)
{
    struct ua_simple_attribute_operand *o = &ops[k];

    memset(o, 0, sizeof(*o));
    o->type_definition_id = ua_nodeid_num(0, typedef_id);
    o->attribute_id = attr;
    o->index_range.len = -1;
    o->n_browse_path = 0;
    o->browse_path = qns[k];
    if (name != NULL) {
        qns[k][0].ns = ns;
        qns[k][0].name = ua_string_from(name);
        o->n_browse_path = 1;
    }
    if (name2 != NULL) {
        qns[k][1].ns = ns;
        qns[k][1].name = ua_string_from(name2);
        o->n_browse_path = 2;
    }
}

static struct ua_extobj
filter_of(int n)
{
    struct ua_extobj x;

    memset(&evf, 0, sizeof(evf));
    evf.n_select_clauses = n;
    evf.select_clauses = ops;
    memset(&x, 0, sizeof(x));
    x.type_id = ua_nodeid_num(0, UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[UA_TYPE_EVENTFILTER];
    x.obj = &evf;
    return x;
}

/* The usual filter: EventId, EventType, SourceNode, Severity, 1:Temp. */
static struct ua_extobj
std_filter(void)
{
    sel(0, 0, "EventId", NULL, UA_ATTR_VALUE, 0);
    sel(1, 0, "EventType", NULL, UA_ATTR_VALUE, 0);
    sel(2, 0, "SourceNode", NULL, UA_ATTR_VALUE, 0);
    sel(3, 0, "Severity", NULL, UA_ATTR_VALUE, UA_NS0ID_BASEEVENTTYPE);
    sel(4, 1, "Temp", NULL, UA_ATTR_VALUE, 0);
    return filter_of(5);
}

static ua_status
ev_item(uint32_t sub, struct ua_nodeid node, uint32_t handle, uint32_t queue,
        bool old, struct ua_extobj f, struct ua_monitored_item_create_result *r)
{
    struct sf_mi p = { .attr = UA_ATTR_EVENTNOTIFIER, .mode = -1, .ttr = -1,
                       .queue = queue, .discard_oldest = old, .filter = f };

    return sf_item_res(CH, &tok, sub, node, handle, &p, r);
}

static uint32_t
ev_item_ok(uint32_t sub, struct ua_nodeid node, uint32_t handle,
           uint32_t queue, bool old)
{
    struct ua_monitored_item_create_result r;

    ck_assert_uint_eq(ev_item(sub, node, handle, queue, old, std_filter(), &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    return r.monitored_item_id;
}

/* ------------------------------------------------------------ events */

static uint8_t rec[8192];

static uint32_t
node_of(struct ua_nodeid id)
{
    return wk_node_lookup(&fx.w, &id);
}

/* An event from source of type, severity sev, with 1:Temp = temp unless
 * temp < 0; handed to the worker as the broker would. */
static void
raise_ev(struct ua_nodeid source, uint32_t type, uint16_t sev, double temp)
{
    struct fx_event   e;
    struct ua_variant v;

    fx_event_begin(&e, rec, sizeof(rec), node_of(source),
                   node_of(ua_nodeid_num(0, type)));
    if (temp >= 0) {
        ua_variant_set_scalar(&v, &temp, UA_BT_DOUBLE);
        ck_assert_int_eq(fx_event_field(&e, "1:Temp", 6, &v), 0);
    }
    ck_assert_int_eq(fx_event_std(&e, &fx.w.ns, fx.w.now_dt, sev), 0);
    wk_ev_on_event(fx.w.subs, e.buf, e.len);
}

static struct sf_got *
pub_tick(uint32_t ms)
{
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    ck_assert(sf.pending);
    sf_tick(ms);
    return sf_next();
}

/* The EventNotificationList of a response (NULL: another kind). */
static const struct ua_event_notification_list *
enl(const struct sf_got *g)
{
    const struct ua_notification_message *m = &g->p.notification_message;

    if (m->n_notification_data != 1
        || m->notification_data[0].type
               != &ua_types[UA_TYPE_EVENTNOTIFICATIONLIST])
        return NULL;
    return m->notification_data[0].obj;
}

static const struct ua_event_notification_list *
events_tick(void)
{
    struct sf_got                         *g = pub_tick(100);
    const struct ua_event_notification_list *l;

    ck_assert_ptr_nonnull(g);
    l = enl(g);
    ck_assert_ptr_nonnull(l);
    return l;
}

static uint16_t
sev_of(const struct ua_event_field_list *f)
{
    ck_assert_int_ge(f->n_event_fields, 4);
    ck_assert_uint_eq(f->event_fields[3].type, UA_BT_UINT16);
    return *(uint16_t *)f->event_fields[3].data;
}

static uint32_t
type_of(const struct ua_event_field_list *f)
{
    ck_assert_uint_eq(f->event_fields[1].type, UA_BT_NODEID);
    return ((struct ua_nodeid *)f->event_fields[1].data)->id.num;
}

/* ------------------------------------------------------------ tests */

START_TEST(test_create_refusals)
{
    uint32_t                               sub = sf_create_sub(CH, &tok, 100);
    struct ua_monitored_item_create_result r;
    struct sf_mi                           p = { .mode = -1, .ttr = -1 };

    /* An EventFilter on a Value. */
    p.filter = std_filter();
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub, sf_var(0), 1, &p, &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_BAD_FILTER_NOT_ALLOWED);
    /* A DataChangeFilter on EventNotifier. */
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 0,
                              true, sf_filter(1, 0, 0), &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_BAD_FILTER_NOT_ALLOWED);
    /* No filter, no select clauses. */
    {
        struct ua_extobj none;

        memset(&none, 0, sizeof(none));
        ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1,
                                  0, true, none, &r), UA_GOOD);
        ck_assert_uint_eq(r.status_code, UA_BAD_EVENT_FILTER_INVALID);
    }
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 0,
                              true, filter_of(0), &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_BAD_EVENT_FILTER_INVALID);
    /* A Variable has no EventNotifier; an Object without
     * SubscribeToEvents (Objects folder, i=85) is not a notifier. */
    ck_assert_uint_eq(ev_item(sub, sf_var(0), 1, 0, true, std_filter(), &r),
                      UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_OBJECTSFOLDER),
                              1, 0, true, std_filter(), &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_BAD_NOT_SUPPORTED);
    ck_assert_ptr_null(wk_subs_get(&fx.w)->ev_head == WK_NIL ? NULL : "x");
}
END_TEST

START_TEST(test_select_results)
{
    uint32_t                               sub = sf_create_sub(CH, &tok, 100);
    struct ua_monitored_item_create_result r;
    const struct ua_event_filter_result   *fr;

    sel(0, 0, "Severity", NULL, UA_ATTR_VALUE, UA_NS0ID_BASEEVENTTYPE);
    sel(1, 0, "Severity", NULL, UA_ATTR_VALUE, UA_NS0ID_OBJECTSFOLDER);
    sel(2, 0, "Severity", NULL, UA_ATTR_DISPLAYNAME, 0);
    sel(3, 0, NULL, NULL, UA_ATTR_VALUE, 0);        /* no path */
    sel(4, 0, NULL, NULL, UA_ATTR_NODEID, 0);       /* ConditionId */
    sel(5, 0, "Severity", NULL, UA_ATTR_VALUE, 0);
    ops[5].index_range = ua_string_from("1");
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 0,
                              true, filter_of(6), &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_uint_eq(r.revised_queue_size, 3);     /* the default */
    ck_assert_int_eq(r.filter_result.encoding, UA_EO_DECODED);
    ck_assert_ptr_eq(r.filter_result.type,
                     &ua_types[UA_TYPE_EVENTFILTERRESULT]);
    fr = r.filter_result.obj;
    ck_assert_int_eq(fr->n_select_clause_results, 6);
    ck_assert_uint_eq(fr->select_clause_results[0], UA_GOOD);
    ck_assert_uint_eq(fr->select_clause_results[1],
                      UA_BAD_TYPE_DEFINITION_INVALID);
    ck_assert_uint_eq(fr->select_clause_results[2],
                      UA_BAD_ATTRIBUTE_ID_INVALID);
    ck_assert_uint_eq(fr->select_clause_results[3],
                      UA_BAD_BROWSE_NAME_INVALID);
    ck_assert_uint_eq(fr->select_clause_results[4], UA_GOOD);
    ck_assert_uint_eq(fr->select_clause_results[5],
                      UA_BAD_INDEX_RANGE_INVALID);
    /* All good: no result (Part 4 §7.22.3 allows it empty). */
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 2, 0,
                              true, std_filter(), &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.filter_result.encoding, UA_EO_NONE);
    /* The bad clauses are null fields. */
    raise_ev(ua_nodeid_num(0, UA_NS0ID_SERVER), UA_NS0ID_BASEEVENTTYPE, 9, 1);
    {
        const struct ua_event_notification_list *l = events_tick();
        const struct ua_event_field_list        *f = NULL;

        ck_assert_int_eq(l->n_events, 2);
        for (int k = 0; k < 2; k++)
            if (l->events[k].client_handle == 1)
                f = &l->events[k];
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(f->n_event_fields, 6);
        ck_assert_uint_eq(f->event_fields[0].type, UA_BT_UINT16);
        for (int k = 1; k < 6; k++)
            ck_assert_uint_eq(f->event_fields[k].type, 0);
    }
}
END_TEST

START_TEST(test_fields_and_sources)
{
    uint32_t sub = sf_create_sub(CH, &tok, 100);
    struct ua_nodeid demo = ua_nodeid_str(1, "Demo");
    struct ua_nodeid scal = ua_nodeid_str(1, "Demo.Static.Scalar");
    const struct ua_event_notification_list *l;
    const struct ua_event_field_list        *f;

    ev_item_ok(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 10, true);
    raise_ev(demo, UA_NS0ID_BASEEVENTTYPE, 700, 21.5);
    raise_ev(demo, UA_NS0ID_AUDITCREATESESSIONEVENTTYPE, 100, -1);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 2);
    f = &l->events[0];
    ck_assert_uint_eq(f->client_handle, 1);
    ck_assert_int_eq(f->n_event_fields, 5);
    ck_assert_uint_eq(f->event_fields[0].type, UA_BT_BYTESTRING);
    ck_assert_int_eq(((struct ua_string *)f->event_fields[0].data)->len, 16);
    ck_assert_uint_eq(type_of(f), UA_NS0ID_BASEEVENTTYPE);
    ck_assert_uint_eq(f->event_fields[2].type, UA_BT_NODEID);
    ck_assert_uint_eq(((struct ua_nodeid *)f->event_fields[2].data)->ns, 1);
    ck_assert_uint_eq(sev_of(f), 700);
    ck_assert_uint_eq(f->event_fields[4].type, UA_BT_DOUBLE);
    ck_assert(*(double *)f->event_fields[4].data == 21.5);
    /* A subtype; no 1:Temp: null. */
    f = &l->events[1];
    ck_assert_uint_eq(type_of(f), UA_NS0ID_AUDITCREATESESSIONEVENTTYPE);
    ck_assert_uint_eq(sev_of(f), 100);
    ck_assert_uint_eq(f->event_fields[4].type, 0);
    /* A clause of a type the event is not: null. */
    sel(0, 0, "Severity", NULL, UA_ATTR_VALUE,
        UA_NS0ID_AUDITCREATESESSIONEVENTTYPE);
    {
        struct ua_monitored_item_create_result r;

        ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 2,
                                  10, true, filter_of(1), &r), UA_GOOD);
        ck_assert_uint_eq(r.status_code, UA_GOOD);
    }
    /* An item on the Demo folder (made a notifier here: only the Server
     * is one in this address space): events of Demo and of what it
     * reaches by HasComponent/HasEventSource only (Demo.Static.Scalar is
     * Organized, not a component: not its event source). */
    fx.w.ns.nodes[node_of(demo)].event_notifier = 1;
    ev_item_ok(sub, demo, 3, 10, true);
    raise_ev(demo, UA_NS0ID_BASEEVENTTYPE, 1, -1);
    raise_ev(scal, UA_NS0ID_BASEEVENTTYPE, 2, -1);
    raise_ev(demo, UA_NS0ID_AUDITCREATESESSIONEVENTTYPE, 3, -1);
    l = events_tick();
    /* item 1: 3 events; item 2: 3 (null unless the audit one); item 3:
     * 2 (Demo's). */
    ck_assert_int_eq(l->n_events, 8);
    {
        int n1 = 0, n2 = 0, n3 = 0, n2sev = 0;

        for (int k = 0; k < l->n_events; k++) {
            f = &l->events[k];
            if (f->client_handle == 1)
                n1++;
            if (f->client_handle == 2) {
                n2++;
                if (f->event_fields[0].type == UA_BT_UINT16) {
                    ck_assert_uint_eq(*(uint16_t *)f->event_fields[0].data, 3);
                    n2sev++;
                }
            }
            if (f->client_handle == 3) {
                n3++;
                ck_assert_uint_ne(sev_of(f), 2);
            }
        }
        ck_assert_int_eq(n1, 3);
        ck_assert_int_eq(n2, 3);
        ck_assert_int_eq(n2sev, 1);
        ck_assert_int_eq(n3, 2);
    }
}
END_TEST

START_TEST(test_event_source_hierarchy)
{
    uint32_t         sub = sf_create_sub(CH, &tok, 100);
    struct ua_nodeid caps = ua_nodeid_num(0, 2268);     /* ServerCapabilities */
    struct ua_nodeid lims = ua_nodeid_num(0, 11704);    /* OperationLimits */
    const struct ua_event_notification_list *l;

    fx.w.ns.nodes[node_of(caps)].event_notifier = 1;
    ev_item_ok(sub, caps, 1, 10, true);
    raise_ev(lims, UA_NS0ID_BASEEVENTTYPE, 10, -1);     /* HasComponent */
    raise_ev(caps, UA_NS0ID_BASEEVENTTYPE, 20, -1);     /* itself */
    raise_ev(ua_nodeid_num(0, UA_NS0ID_SERVER), UA_NS0ID_BASEEVENTTYPE, 30,
             -1);                                       /* above it */
    l = events_tick();
    ck_assert_int_eq(l->n_events, 2);
    ck_assert_uint_eq(sev_of(&l->events[0]), 10);
    ck_assert_uint_eq(sev_of(&l->events[1]), 20);
}
END_TEST

/* Raise severities 1..n on the Server. */
static void
raise_n(int n)
{
    for (int k = 1; k <= n; k++)
        raise_ev(ua_nodeid_num(0, UA_NS0ID_SERVER), UA_NS0ID_BASEEVENTTYPE,
                 (uint16_t)k, -1);
}

START_TEST(test_queue_limit_and_overflow)
{
    uint32_t                                 sub = sf_create_sub(CH, &tok,
                                                                 100);
    const struct ua_event_notification_list *l;
    struct ua_monitored_item_create_result   r;

    /* At the limit (5), and past it: revised to 5. */
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 5,
                              true, std_filter(), &r), UA_GOOD);
    ck_assert_uint_eq(r.revised_queue_size, 5);
    ck_assert_uint_eq(ev_item(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 2,
                              1000, false, std_filter(), &r), UA_GOOD);
    ck_assert_uint_eq(r.revised_queue_size, 5);
    /* 5 events fit exactly: no overflow. */
    raise_n(5);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 10);
    for (int k = 0; k < 10; k++)
        ck_assert_uint_eq(type_of(&l->events[k]), UA_NS0ID_BASEEVENTTYPE);
    /* 8 events: discardOldest keeps 4..8 after an overflow event at the
     * front; the other keeps 1..5 and the overflow event at the end. */
    raise_n(8);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 12);
    {
        const struct ua_event_field_list *a[6], *b[6];
        int                               na = 0, nb = 0;

        for (int k = 0; k < l->n_events; k++) {
            if (l->events[k].client_handle == 1)
                a[na++] = &l->events[k];
            else
                b[nb++] = &l->events[k];
        }
        ck_assert_int_eq(na, 6);
        ck_assert_int_eq(nb, 6);
        ck_assert_uint_eq(type_of(a[0]),
                          UA_NS0ID_EVENTQUEUEOVERFLOWEVENTTYPE);
        ck_assert_uint_eq(((struct ua_nodeid *)a[0]->event_fields[2].data)
                              ->id.num, UA_NS0ID_SERVER);
        for (int k = 1; k < 6; k++)
            ck_assert_uint_eq(sev_of(a[k]), (uint16_t)(k + 3));
        for (int k = 0; k < 5; k++)
            ck_assert_uint_eq(sev_of(b[k]), (uint16_t)(k + 1));
        ck_assert_uint_eq(type_of(b[5]),
                          UA_NS0ID_EVENTQUEUEOVERFLOWEVENTTYPE);
    }
    /* Lost upstream (the broker's events_lost): one overflow event. */
    wk_ev_on_events_lost(fx.w.subs);
    wk_ev_on_events_lost(fx.w.subs);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 2);
    ck_assert_uint_eq(type_of(&l->events[0]),
                      UA_NS0ID_EVENTQUEUEOVERFLOWEVENTTYPE);
}
END_TEST

/* ------------------------------------------- the window of a move */

#define CH2 (&fx.ch[1])

static void
tw_move(struct shm_config *c)
{
    tw_fast(c);
    c->max_event_queue_size = 100;
    c->default_event_queue_size = 100;
    c->session_move_event_bytes = 65536;
}

/*
 * A session with an event item moves (issue 19's loose ends), played in
 * one worker with the sub layer's handlers: events 1-3 queued before the
 * claim, 4-5 after the claim went out and before the pack (the old worker
 * saw them: in the blob), 6-7 after the pack and before the new worker's
 * items exist (only kept in the window), 8 after: the moved item
 * reports 1-8, each once, in order.  With the window's room for `room`
 * records only, those past it are lost: an EventQueueOverflowEvent
 * says so.  Returns the severities seen (at most 16) in sevs.
 */
static int
move_with_events(uint32_t room, uint16_t *sevs, bool *overflow)
{
    struct wk_roam_handlers                  h;
    struct wk_roam_buf                       b = { .w = &fx.w,
                                                   .max = 1u << 24 };
    struct wk_roam_buf                       r;
    struct wk_session                       *s1, *s2;
    struct ua_nodeid                         tok2;
    struct wk_subs                          *st;
    const struct ua_event_notification_list *l;
    struct sf_got                           *g;
    uint32_t                                 sub;
    int                                      n = 0;

    sf_teardown();
    sf_setup_with(tw_move);
    tok = fx_session(CH);
    st = wk_subs_get(&fx.w);
    sub = sf_create_sub(CH, &tok, 100);
    (void)ev_item_ok(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 100, true);
    wk_sub_roam_handlers(&fx.w, &h);
    raise_n(3);
    h.window(h.arg, true);
    if (room != 0) {
        /* Room for `room` records of this size exactly. */
        struct fx_event e;

        fx_event_begin(&e, rec, sizeof(rec),
                       node_of(ua_nodeid_num(0, UA_NS0ID_SERVER)),
                       node_of(ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE)));
        ck_assert_int_eq(fx_event_std(&e, &fx.w.ns, fx.w.now_dt, 1), 0);
        st->evwin_cap = room * (e.len + 4);
    }
    for (uint16_t k = 4; k <= 5; k++)
        raise_ev(ua_nodeid_num(0, UA_NS0ID_SERVER), UA_NS0ID_BASEEVENTTYPE,
                 k, -1);
    s1 = wk_session_find_by_token(&fx.w, &tok);
    ck_assert_ptr_nonnull(s1);
    h.pack(h.arg, s1, &b);
    ck_assert(!b.bad);
    for (uint16_t k = 6; k <= 7; k++)
        raise_ev(ua_nodeid_num(0, UA_NS0ID_SERVER), UA_NS0ID_BASEEVENTTYPE,
                 k, -1);
    /* Handed over: the old worker forgets its subscription. */
    wk_sub_session_closed(&fx.w, s1, true);
    tok2 = fx_session(CH2);
    s2 = wk_session_find_by_token(&fx.w, &tok2);
    ck_assert_ptr_nonnull(s2);
    r = (struct wk_roam_buf){ .w = &fx.w, .p = b.p, .len = b.len,
                              .max = b.len, .version = WK_ROAM_VERSION };
    ck_assert_int_eq(h.unpack(h.arg, s2, &r), 0);
    h.window(h.arg, false);
    wk_free(&fx.w, b.p);
    raise_ev(ua_nodeid_num(0, UA_NS0ID_SERVER), UA_NS0ID_BASEEVENTTYPE, 8,
             -1);
    ck_assert_uint_eq(sf_publish(CH2, &tok2), UA_GOOD);
    sf_tick(100);
    while ((g = sf_next()) != NULL) {
        l = enl(g);
        if (l == NULL)
            continue;
        for (int k = 0; k < l->n_events && n < 16; k++) {
            if (type_of(&l->events[k])
                == UA_NS0ID_EVENTQUEUEOVERFLOWEVENTTYPE) {
                *overflow = true;
                continue;
            }
            sevs[n++] = sev_of(&l->events[k]);
        }
    }
    return n;
}

START_TEST(test_move_window_carried)
{
    uint16_t sevs[16];
    bool     ovf = false;
    int      n = move_with_events(0, sevs, &ovf);

    ck_assert_int_eq(n, 8);
    for (int k = 0; k < n; k++)
        ck_assert_uint_eq(sevs[k], (uint16_t)(k + 1));
    ck_assert(!ovf);
}
END_TEST

/* limits.session_move_event_bytes at its limit: room for the 4 records
 * of the window (4-7) carries them all; room for 3 loses 7 (after 6,
 * which came, the overflow event says something is missing). */
START_TEST(test_move_window_room)
{
    uint16_t sevs[16];
    bool     ovf = false;
    int      n = move_with_events(4, sevs, &ovf);

    ck_assert_int_eq(n, 8);
    ck_assert(!ovf);
    ovf = false;
    n = move_with_events(3, sevs, &ovf);
    ck_assert_int_eq(n, 7);
    for (int k = 0; k < 6; k++)
        ck_assert_uint_eq(sevs[k], (uint16_t)(k + 1));
    ck_assert_uint_eq(sevs[6], 8);
    ck_assert(ovf);
}
END_TEST

START_TEST(test_modify_mode_delete)
{
    uint32_t                                  sub = sf_create_sub(CH, &tok,
                                                                  100);
    uint32_t                                  id;
    struct ua_modify_monitored_items_request  mreq;
    struct ua_modify_monitored_items_response mresp;
    struct ua_monitored_item_modify_request   m;
    const struct ua_event_notification_list  *l;
    struct wk_subs                           *st = wk_subs_get(&fx.w);

    id = ev_item_ok(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 5, true);
    ck_assert_uint_ne(st->ev_head, WK_NIL);
    raise_n(4);
    /* Modify: queue 2 (the oldest go), one select clause. */
    sel(0, 0, "Severity", NULL, UA_ATTR_VALUE, 0);
    memset(&m, 0, sizeof(m));
    m.monitored_item_id = id;
    m.requested_parameters.client_handle = 9;
    m.requested_parameters.queue_size = 2;
    m.requested_parameters.discard_oldest = true;
    m.requested_parameters.filter = filter_of(1);
    memset(&mreq, 0, sizeof(mreq));
    mreq.subscription_id = sub;
    mreq.n_items_to_modify = 1;
    mreq.items_to_modify = &m;
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_MODIFYMONITOREDITEMSREQUEST,
                              &mreq, UA_TYPE_MODIFYMONITOREDITEMSRESPONSE,
                              &mresp), UA_GOOD);
    ck_assert_uint_eq(mresp.results[0].status_code, UA_GOOD);
    ck_assert_uint_eq(mresp.results[0].revised_queue_size, 2);
    /* Full at 2: one more loses the oldest, an overflow event goes in
     * front (beyond queueSize). */
    raise_n(1);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 3);
    for (int k = 0; k < 3; k++)
        ck_assert_uint_eq(l->events[k].client_handle, 9);
    /* Queued before the Modify: its fields as they were selected. */
    ck_assert_int_eq(l->events[0].n_event_fields, 1);
    ck_assert_uint_eq(*(uint16_t *)l->events[0].event_fields[0].data, 1);
    ck_assert_uint_eq(sev_of(&l->events[1]), 4);
    ck_assert_int_eq(l->events[2].n_event_fields, 1);
    ck_assert_uint_eq(*(uint16_t *)l->events[2].event_fields[0].data, 1);
    /* A DataChangeFilter on modify: refused, the item unchanged. */
    m.requested_parameters.filter = sf_filter(1, 0, 0);
    ck_assert_uint_eq(sf_call(CH, &tok, UA_TYPE_MODIFYMONITOREDITEMSREQUEST,
                              &mreq, UA_TYPE_MODIFYMONITOREDITEMSRESPONSE,
                              &mresp), UA_GOOD);
    ck_assert_uint_eq(mresp.results[0].status_code, UA_BAD_FILTER_NOT_ALLOWED);
    /* Disabled: nothing queued. */
    {
        struct ua_set_monitoring_mode_request  sreq;
        struct ua_set_monitoring_mode_response sresp;

        memset(&sreq, 0, sizeof(sreq));
        sreq.subscription_id = sub;
        sreq.monitoring_mode = UA_MONITORINGMODE_DISABLED;
        sreq.n_monitored_item_ids = 1;
        sreq.monitored_item_ids = &id;
        ck_assert_uint_eq(sf_call(CH, &tok,
                                  UA_TYPE_SETMONITORINGMODEREQUEST, &sreq,
                                  UA_TYPE_SETMONITORINGMODERESPONSE, &sresp),
                          UA_GOOD);
        raise_n(2);
        ck_assert_uint_eq(st->subs[0].nqueued, 0);
        sreq.monitoring_mode = UA_MONITORINGMODE_REPORTING;
        ck_assert_uint_eq(sf_call(CH, &tok,
                                  UA_TYPE_SETMONITORINGMODEREQUEST, &sreq,
                                  UA_TYPE_SETMONITORINGMODERESPONSE, &sresp),
                          UA_GOOD);
        raise_n(1);
        l = events_tick();
        ck_assert_int_eq(l->n_events, 1);
    }
    /* Delete: the list is empty again (interest off). */
    {
        struct ua_delete_monitored_items_request  dreq;
        struct ua_delete_monitored_items_response dresp;

        memset(&dreq, 0, sizeof(dreq));
        dreq.subscription_id = sub;
        dreq.n_monitored_item_ids = 1;
        dreq.monitored_item_ids = &id;
        ck_assert_uint_eq(sf_call(CH, &tok,
                                  UA_TYPE_DELETEMONITOREDITEMSREQUEST, &dreq,
                                  UA_TYPE_DELETEMONITOREDITEMSRESPONSE,
                                  &dresp), UA_GOOD);
        ck_assert_uint_eq(dresp.results[0], UA_GOOD);
    }
    ck_assert_uint_eq(st->ev_head, WK_NIL);
    ck_assert_uint_eq(st->cells.used, 0);
}
END_TEST

START_TEST(test_events_and_data_in_turn)
{
    uint32_t          sub = sf_create_sub(CH, &tok, 100);
    struct ua_nodeid  v = sf_var(0);
    struct sf_mi      p = { .mode = -1, .ttr = -1, .queue = 10 };
    struct sf_got    *g;
    int32_t           x = 5;

    sf_item(CH, &tok, sub, v, 1, &p);
    ev_item_ok(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 2, 5, true);
    g = pub_tick(100);              /* the initial value */
    ck_assert_ptr_nonnull(sf_dcn(g));
    sf_change_i(v, x);
    raise_n(1);
    /* Both kinds wait: one message each, data first, then events. */
    g = pub_tick(100);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_null(enl(g));
    ck_assert(g->p.more_notifications);
    g = pub_tick(100);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_nonnull(enl(g));
    ck_assert(!g->p.more_notifications);
}
END_TEST

/* Call ConditionRefresh (n 1) or ConditionRefresh2 (n 2) on
 * ConditionType with args; the operation's status. */
static ua_status
refresh(const struct ua_nodeid *t, int n, uint32_t a0, uint32_t a1,
        bool bad_type)
{
    struct ua_call_request        req;
    struct ua_call_response       resp;
    struct ua_call_method_request m;
    struct ua_variant             args[3];
    uint32_t                      v[3] = { a0, a1, 0 };
    double                        d = 1;

    memset(&m, 0, sizeof(m));
    m.object_id = ua_nodeid_num(0, UA_NS0ID_CONDITIONTYPE);
    m.method_id = ua_nodeid_num(
        0, n >= 2 ? UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH2
                  : UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH);
    for (int k = 0; k < 3; k++)
        ua_variant_set_scalar(&args[k], &v[k], UA_BT_UINT32);
    if (bad_type)
        ua_variant_set_scalar(&args[0], &d, UA_BT_DOUBLE);
    m.n_input_arguments = n == 3 ? 2 : n == 0 ? 0 : n;
    if (n == 3) {               /* ConditionRefresh with two arguments */
        m.method_id = ua_nodeid_num(0,
                                    UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH);
    }
    m.input_arguments = args;
    memset(&req, 0, sizeof(req));
    req.n_methods_to_call = 1;
    req.methods_to_call = &m;
    ck_assert_uint_eq(sf_call(CH, t, UA_TYPE_CALLREQUEST, &req,
                              UA_TYPE_CALLRESPONSE, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, 1);
    return resp.results[0].status_code;
}

START_TEST(test_condition_refresh)
{
    uint32_t                                 sub = sf_create_sub(CH, &tok,
                                                                 100);
    uint32_t                                 a, b;
    const struct ua_event_notification_list *l;
    struct ua_nodeid                         tok2;

    a = ev_item_ok(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 1, 10, true);
    b = ev_item_ok(sub, ua_nodeid_num(0, UA_NS0ID_SERVER), 2, 10, true);
    (void)a;
    /* Refresh: Start then End into both items. */
    ck_assert_uint_eq(refresh(&tok, 1, sub, 0, false), UA_GOOD);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 4);
    {
        int starts = 0, ends = 0;

        for (int k = 0; k < 4; k++) {
            uint32_t t = type_of(&l->events[k]);

            if (t == UA_NS0ID_REFRESHSTARTEVENTTYPE)
                starts++;
            else if (t == UA_NS0ID_REFRESHENDEVENTTYPE)
                ends++;
        }
        ck_assert_int_eq(starts, 2);
        ck_assert_int_eq(ends, 2);
        /* Each item: Start before End. */
        for (uint32_t h = 1; h <= 2; h++) {
            int first = -1, last = -1;

            for (int k = 0; k < 4; k++)
                if (l->events[k].client_handle == h) {
                    if (first < 0)
                        first = k;
                    last = k;
                }
            ck_assert_uint_eq(type_of(&l->events[first]),
                              UA_NS0ID_REFRESHSTARTEVENTTYPE);
            ck_assert_uint_eq(type_of(&l->events[last]),
                              UA_NS0ID_REFRESHENDEVENTTYPE);
        }
    }
    /* Refresh2: only item b. */
    ck_assert_uint_eq(refresh(&tok, 2, sub, b, false), UA_GOOD);
    l = events_tick();
    ck_assert_int_eq(l->n_events, 2);
    ck_assert_uint_eq(l->events[0].client_handle, 2);
    ck_assert_uint_eq(type_of(&l->events[0]), UA_NS0ID_REFRESHSTARTEVENTTYPE);
    ck_assert_uint_eq(type_of(&l->events[1]), UA_NS0ID_REFRESHENDEVENTTYPE);
    /* Refusals. */
    ck_assert_uint_eq(refresh(&tok, 1, sub + 1000, 0, false),
                      UA_BAD_SUBSCRIPTION_ID_INVALID);
    ck_assert_uint_eq(refresh(&tok, 2, sub, b + 12345, false),
                      UA_BAD_MONITORED_ITEM_ID_INVALID);
    ck_assert_uint_eq(refresh(&tok, 0, 0, 0, false),
                      UA_BAD_ARGUMENTS_MISSING);
    ck_assert_uint_eq(refresh(&tok, 3, sub, 0, false),
                      UA_BAD_TOO_MANY_ARGUMENTS);
    ck_assert_uint_eq(refresh(&tok, 1, sub, 0, true),
                      UA_BAD_INVALID_ARGUMENT);
    /* Another session's subscription. */
    tok2 = fx_session(&fx.ch[1]);
    {
        struct ua_call_request        req;
        struct ua_call_response       resp;
        struct ua_call_method_request m;
        struct ua_variant             arg;

        memset(&m, 0, sizeof(m));
        m.object_id = ua_nodeid_num(0, UA_NS0ID_CONDITIONTYPE);
        m.method_id = ua_nodeid_num(0,
                                    UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH);
        ua_variant_set_scalar(&arg, &sub, UA_BT_UINT32);
        m.n_input_arguments = 1;
        m.input_arguments = &arg;
        memset(&req, 0, sizeof(req));
        req.n_methods_to_call = 1;
        req.methods_to_call = &m;
        ck_assert_uint_eq(sf_call(&fx.ch[1], &tok2, UA_TYPE_CALLREQUEST,
                                  &req, UA_TYPE_CALLRESPONSE, &resp),
                          UA_GOOD);
        ck_assert_uint_eq(resp.results[0].status_code,
                          UA_BAD_USER_ACCESS_DENIED);
    }
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Event monitored items");
    TCase   *tc = tcase_create("Events");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_create_refusals);
    tcase_add_test(tc, test_select_results);
    tcase_add_test(tc, test_fields_and_sources);
    tcase_add_test(tc, test_event_source_hierarchy);
    tcase_add_test(tc, test_queue_limit_and_overflow);
    tcase_add_test(tc, test_move_window_carried);
    tcase_add_test(tc, test_move_window_room);
    tcase_add_test(tc, test_modify_mode_delete);
    tcase_add_test(tc, test_events_and_data_in_turn);
    tcase_add_test(tc, test_condition_refresh);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
