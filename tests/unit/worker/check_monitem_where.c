/*
 * tests/unit/worker/check_monitem_where.c: the where clause of an
 * EventFilter (worker/monitem_where.c) through CreateMonitoredItems and
 * the fan-out hook: every supported operator (Part 4 §7.7) on events with
 * known fields, type promotion between numbers and strings, three-valued
 * And / Or / Not with NULLs, Like patterns, Cast, BitwiseAnd / Or, OfType
 * with subtypes; the refusals with their element and operand statuses
 * (BadFilterOperatorInvalid, BadFilterOperatorUnsupported,
 * BadFilterOperandCountMismatch, BadFilterOperandInvalid); the element
 * limit (limits.max_filter_elements) at and past it.
 */
#include "sub_fixture.h"

#include <math.h>
#include <stdarg.h>

#include "event_fixture.h"
#include "worker/sub_int.h"
#include "worker/node.h"

#define CH (&fx.ch[0])
#define LIMIT 8

static struct ua_nodeid tok;

static void
tw(struct shm_config *c)
{
    c->min_sampling_interval_ms = 0;
    c->min_publishing_interval_ms = 50;
    c->max_filter_elements = LIMIT;
}

static void
setup(void)
{
    sf_setup_with(tw);
    tok = fx_session(CH);
}

static void
teardown(void)
{
    sf_teardown();
}

/* ------------------------------------------------------------ operands */

#define NOPS 64

static struct ua_extobj                   xo[NOPS];
static struct ua_literal_operand          lo[NOPS];
static struct ua_element_operand          eo[NOPS];
static struct ua_simple_attribute_operand so[NOPS];
static struct ua_attribute_operand        ao[NOPS];
static struct ua_qualifiedname            qn[NOPS];
static uint8_t                            val[NOPS][32];
static struct ua_nodeid                   nid[NOPS];
static int                                nxo;

static struct ua_extobj *
x_new(const struct ua_type *t, void *obj)
{
    struct ua_extobj *x = &xo[nxo++];

    ck_assert_int_le(nxo, NOPS);
    memset(x, 0, sizeof(*x));
    x->type_id = ua_nodeid_num(0, t->binary_id);
    x->encoding = UA_EO_DECODED;
    x->type = t;
    x->obj = obj;
    return x;
}

static struct ua_extobj
lit(uint8_t bt, const void *v, size_t n)
{
    int k = nxo;

    memcpy(val[k], v, n);
    ua_variant_set_scalar(&lo[k].value, val[k], bt);
    return *x_new(&ua_types[UA_TYPE_LITERALOPERAND], &lo[k]);
}

static struct ua_extobj
lit_i32(int32_t v)
{
    return lit(UA_BT_INT32, &v, 4);
}

static struct ua_extobj
lit_dbl(double v)
{
    return lit(UA_BT_DOUBLE, &v, 8);
}

static struct ua_extobj
lit_str(const char *s)
{
    struct ua_string str = ua_string_from(s);

    return lit(UA_BT_STRING, &str, sizeof(str));
}

static struct ua_extobj
lit_node(uint32_t id)
{
    int k = nxo;

    nid[k] = ua_nodeid_num(0, id);
    return lit(UA_BT_NODEID, &nid[k], sizeof(nid[k]));
}

static struct ua_extobj
elem(uint32_t i)
{
    int k = nxo;

    eo[k].index = i;
    return *x_new(&ua_types[UA_TYPE_ELEMENTOPERAND], &eo[k]);
}

static struct ua_extobj
fld(uint16_t ns, const char *name)
{
    int k = nxo;

    memset(&so[k], 0, sizeof(so[k]));
    qn[k].ns = ns;
    qn[k].name = ua_string_from(name);
    so[k].type_definition_id = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
    so[k].n_browse_path = 1;
    so[k].browse_path = &qn[k];
    so[k].attribute_id = UA_ATTR_VALUE;
    so[k].index_range.len = -1;
    return *x_new(&ua_types[UA_TYPE_SIMPLEATTRIBUTEOPERAND], &so[k]);
}

static struct ua_extobj
attr_op(void)
{
    int k = nxo;

    memset(&ao[k], 0, sizeof(ao[k]));
    ao[k].node_id = ua_nodeid_num(0, UA_NS0ID_SERVER);
    ao[k].attribute_id = UA_ATTR_VALUE;
    ao[k].alias.len = -1;
    ao[k].index_range.len = -1;
    return *x_new(&ua_types[UA_TYPE_ATTRIBUTEOPERAND], &ao[k]);
}

/* ------------------------------------------------------------ filters */

#define NEL 16

static struct ua_content_filter_element els[NEL];
static struct ua_extobj                 elops[NEL][8];
static int                              nels;

static void
reset(void)
{
    nxo = 0;
    nels = 0;
}

/* Element nels: op with n operands. */
static void
el(int32_t op, int n, ...)
{
    va_list ap;

    va_start(ap, n);
    for (int k = 0; k < n; k++)
        elops[nels][k] = va_arg(ap, struct ua_extobj);
    va_end(ap);
    els[nels].filter_operator = op;
    els[nels].n_filter_operands = n;
    els[nels].filter_operands = elops[nels];
    nels++;
}

static struct ua_simple_attribute_operand sel_sev;
static struct ua_qualifiedname            sel_qn;
static struct ua_event_filter             ef;

static struct ua_extobj
filter(void)
{
    struct ua_extobj x;

    memset(&sel_sev, 0, sizeof(sel_sev));
    sel_qn.ns = 0;
    sel_qn.name = ua_string_from("Severity");
    sel_sev.n_browse_path = 1;
    sel_sev.browse_path = &sel_qn;
    sel_sev.attribute_id = UA_ATTR_VALUE;
    sel_sev.index_range.len = -1;
    memset(&ef, 0, sizeof(ef));
    ef.n_select_clauses = 1;
    ef.select_clauses = &sel_sev;
    ef.where_clause.n_elements = nels;
    ef.where_clause.elements = els;
    memset(&x, 0, sizeof(x));
    x.type_id = ua_nodeid_num(0, UA_NS0ID_EVENTFILTER_ENCODING_DEFAULTBINARY);
    x.encoding = UA_EO_DECODED;
    x.type = &ua_types[UA_TYPE_EVENTFILTER];
    x.obj = &ef;
    return x;
}

static uint32_t sub;

/* An event item on the Server with the where clause built so far. */
static ua_status
item(struct ua_monitored_item_create_result *r)
{
    struct sf_mi p = { .attr = UA_ATTR_EVENTNOTIFIER, .mode = -1, .ttr = -1,
                       .queue = 100, .discard_oldest = true };

    p.filter = filter();
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub,
                                  ua_nodeid_num(0, UA_NS0ID_SERVER), 1, &p,
                                  r), UA_GOOD);
    return r->status_code;
}

/* ------------------------------------------------------------ events */

static uint8_t rec[4096];

struct ev {
    uint32_t    type;       /* 0: BaseEventType */
    uint16_t    sev;
    double      temp;       /* 1:Temp, NAN: none */
    const char *msg;        /* Message, NULL: empty */
    int64_t     flags;      /* 1:Flags (UInt32), -1: none */
};

static void
raise(const struct ev *e)
{
    struct fx_event   b;
    struct ua_variant v;
    struct ua_nodeid  t = ua_nodeid_num(0, e->type ? e->type
                                                   : UA_NS0ID_BASEEVENTTYPE);
    struct ua_nodeid  s = ua_nodeid_num(0, UA_NS0ID_SERVER);

    fx_event_begin(&b, rec, sizeof(rec), wk_node_lookup(&fx.w, &s),
                   wk_node_lookup(&fx.w, &t));
    if (!isnan(e->temp)) {
        ua_variant_set_scalar(&v, (void *)(uintptr_t)&e->temp, UA_BT_DOUBLE);
        ck_assert_int_eq(fx_event_field(&b, "1:Temp", 6, &v), 0);
    }
    if (e->flags >= 0) {
        uint32_t fl = (uint32_t)e->flags;

        ua_variant_set_scalar(&v, &fl, UA_BT_UINT32);
        ck_assert_int_eq(fx_event_field(&b, "1:Flags", 7, &v), 0);
    }
    if (e->msg != NULL) {
        struct ua_localizedtext lt;

        memset(&lt, 0, sizeof(lt));
        lt.mask = UA_LT_TEXT;
        lt.locale.len = -1;
        lt.text = ua_string_from(e->msg);
        ua_variant_set_scalar(&v, &lt, UA_BT_LOCALIZEDTEXT);
        ck_assert_int_eq(fx_event_field(&b, "0:Message", 9, &v), 0);
    }
    ck_assert_int_eq(fx_event_std(&b, &fx.w.ns, fx.w.now_dt, e->sev), 0);
    wk_ev_on_event(fx.w.subs, b.buf, b.len);
}

/* The severities that passed since the last call, in a bit mask of
 * their index in the events raised (at most 32). */
static uint32_t
passed(const struct ev *evs, int n)
{
    const struct ua_event_notification_list *l;
    struct sf_got                           *g;
    uint32_t                                 m = 0;

    for (int i = 0; i < n; i++)
        raise(&evs[i]);
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    sf_tick(100);
    g = sf_next();
    ck_assert_ptr_nonnull(g);
    if (g->p.notification_message.n_notification_data == 0)
        return 0;
    l = g->p.notification_message.notification_data[0].obj;
    for (int32_t k = 0; k < l->n_events; k++) {
        uint16_t sv;

        if (l->events[k].client_handle != 1)
            continue;               /* the witness item */
        sv = *(uint16_t *)l->events[k].event_fields[0].data;

        for (int i = 0; i < n; i++)
            if (evs[i].sev == sv)
                m |= 1u << i;
    }
    return m;
}

/* A subscription with a witness item (handle 2, no where clause): every
 * tick with events then has a message. */
static uint32_t
new_sub(void)
{
    struct ua_monitored_item_create_result r;
    struct sf_mi p = { .attr = UA_ATTR_EVENTNOTIFIER, .mode = -1, .ttr = -1,
                       .queue = 100, .discard_oldest = true };

    sub = sf_create_sub(CH, &tok, 100);
    reset();
    p.filter = filter();
    ck_assert_uint_eq(sf_item_res(CH, &tok, sub,
                                  ua_nodeid_num(0, UA_NS0ID_SERVER), 2, &p,
                                  &r), UA_GOOD);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    return sub;
}

/* Create an item with the current where clause (Good), run evs. */
static uint32_t
run(const struct ev *evs, int n)
{
    struct ua_monitored_item_create_result r;
    uint32_t                               m;

    ck_assert_uint_eq(item(&r), UA_GOOD);
    m = passed(evs, n);
    ck_assert_uint_eq(wk_mi_delete_id(wk_subs_get(&fx.w),
                                      wk_sub_find(wk_subs_get(&fx.w), sub),
                                      r.monitored_item_id), UA_GOOD);
    reset();
    return m;
}

/* Five events: severities 100, 200, 500, 700, 900 (distinct: they name
 * the event), various fields. */
static const struct ev five[5] = {
    { 0, 100, 21.4, "Tank 4 high", 5 },
    { UA_NS0ID_AUDITCREATESESSIONEVENTTYPE, 200, NAN, "tank low", -1 },
    { UA_NS0ID_AUDITEVENTTYPE, 500, 99.5, NULL, 4 },
    { UA_NS0ID_AUDITCREATESESSIONEVENTTYPE, 700, -3.0, "Pump 7", 12 },
    { 0, 900, 1e6, "Tank 10", 0 },
};

START_TEST(test_comparisons)
{
    new_sub();
    /* UInt16 field vs Int32 literal. */
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_i32(500));
    ck_assert_uint_eq(run(five, 5), 0x04);
    el(UA_FILTEROPERATOR_GREATERTHAN, 2, fld(0, "Severity"), lit_i32(500));
    ck_assert_uint_eq(run(five, 5), 0x18);
    el(UA_FILTEROPERATOR_LESSTHAN, 2, fld(0, "Severity"), lit_i32(500));
    ck_assert_uint_eq(run(five, 5), 0x03);
    el(UA_FILTEROPERATOR_GREATERTHANOREQUAL, 2, fld(0, "Severity"),
       lit_i32(500));
    ck_assert_uint_eq(run(five, 5), 0x1C);
    el(UA_FILTEROPERATOR_LESSTHANOREQUAL, 2, fld(0, "Severity"),
       lit_i32(500));
    ck_assert_uint_eq(run(five, 5), 0x07);
    /* Double field vs Int32 literal; the missing field is NULL. */
    el(UA_FILTEROPERATOR_GREATERTHAN, 2, fld(1, "Temp"), lit_i32(21));
    ck_assert_uint_eq(run(five, 5), 0x15);
    /* Integer vs Double literal. */
    el(UA_FILTEROPERATOR_LESSTHAN, 2, fld(0, "Severity"), lit_dbl(200.5));
    ck_assert_uint_eq(run(five, 5), 0x03);
    /* A String literal that reads as a number; one that does not. */
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_str("700"));
    ck_assert_uint_eq(run(five, 5), 0x08);
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_str("seven"));
    ck_assert_uint_eq(run(five, 5), 0);
    /* Strings (LocalizedText text vs String). */
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Message"), lit_str("Pump 7"));
    ck_assert_uint_eq(run(five, 5), 0x08);
    /* NodeIds: EventType equals. */
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "EventType"),
       lit_node(UA_NS0ID_AUDITCREATESESSIONEVENTTYPE));
    ck_assert_uint_eq(run(five, 5), 0x0A);
    /* NodeIds have no order. */
    el(UA_FILTEROPERATOR_GREATERTHAN, 2, fld(0, "EventType"),
       lit_node(UA_NS0ID_BASEEVENTTYPE));
    ck_assert_uint_eq(run(five, 5), 0);
    el(UA_FILTEROPERATOR_ISNULL, 1, fld(1, "Temp"));
    ck_assert_uint_eq(run(five, 5), 0x02);
    el(UA_FILTEROPERATOR_BETWEEN, 3, fld(0, "Severity"), lit_i32(200),
       lit_i32(700));
    ck_assert_uint_eq(run(five, 5), 0x0E);
    el(UA_FILTEROPERATOR_INLIST, 4, fld(0, "Severity"), lit_i32(100),
       lit_i32(900), lit_i32(901));
    ck_assert_uint_eq(run(five, 5), 0x11);
}
END_TEST

START_TEST(test_logic_like_cast_bits_oftype)
{
    new_sub();
    /* Severity >= 500 AND OfType AuditEventType (its subtypes too). */
    el(UA_FILTEROPERATOR_AND, 2, elem(1), elem(2));
    el(UA_FILTEROPERATOR_GREATERTHANOREQUAL, 2, fld(0, "Severity"),
       lit_i32(500));
    el(UA_FILTEROPERATOR_OFTYPE, 1, lit_node(UA_NS0ID_AUDITEVENTTYPE));
    ck_assert_uint_eq(run(five, 5), 0x0C);
    el(UA_FILTEROPERATOR_OR, 2, elem(1), elem(2));
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_i32(100));
    el(UA_FILTEROPERATOR_OFTYPE, 1,
       lit_node(UA_NS0ID_AUDITCREATESESSIONEVENTTYPE));
    ck_assert_uint_eq(run(five, 5), 0x0B);
    el(UA_FILTEROPERATOR_NOT, 1, elem(1));
    el(UA_FILTEROPERATOR_OFTYPE, 1, lit_node(UA_NS0ID_AUDITEVENTTYPE));
    ck_assert_uint_eq(run(five, 5), 0x11);
    /* Three-valued: NOT (Temp > 0) is NULL where Temp is missing; OR
     * with true is true, AND with NULL never passes. */
    el(UA_FILTEROPERATOR_NOT, 1, elem(1));
    el(UA_FILTEROPERATOR_GREATERTHAN, 2, fld(1, "Temp"), lit_i32(0));
    ck_assert_uint_eq(run(five, 5), 0x08);
    el(UA_FILTEROPERATOR_OR, 2, elem(1), elem(2));
    el(UA_FILTEROPERATOR_GREATERTHAN, 2, fld(1, "Temp"), lit_i32(0));
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_i32(200));
    ck_assert_uint_eq(run(five, 5), 0x17);
    el(UA_FILTEROPERATOR_AND, 2, elem(1), elem(2));
    el(UA_FILTEROPERATOR_ISNULL, 1, fld(0, "Severity"));
    el(UA_FILTEROPERATOR_GREATERTHAN, 2, fld(1, "Temp"), lit_i32(0));
    ck_assert_uint_eq(run(five, 5), 0);
    /* Like. */
    el(UA_FILTEROPERATOR_LIKE, 2, fld(0, "Message"), lit_str("Tank%"));
    ck_assert_uint_eq(run(five, 5), 0x11);
    el(UA_FILTEROPERATOR_LIKE, 2, fld(0, "Message"), lit_str("_ank [0-9]"));
    ck_assert_uint_eq(run(five, 5), 0);
    el(UA_FILTEROPERATOR_LIKE, 2, fld(0, "Message"),
       lit_str("[Tt]ank %"));
    ck_assert_uint_eq(run(five, 5), 0x13);
    el(UA_FILTEROPERATOR_LIKE, 2, fld(0, "Message"), lit_str("[^T]%"));
    ck_assert_uint_eq(run(five, 5), 0x0A);
    el(UA_FILTEROPERATOR_LIKE, 2, fld(0, "Message"), lit_str("%1_"));
    ck_assert_uint_eq(run(five, 5), 0x10);
    /* Cast: the Double Temp to Int32 (21.4 -> 21), Severity to String
     * does not cast (NULL). */
    el(UA_FILTEROPERATOR_EQUALS, 2, elem(1), lit_i32(21));
    el(UA_FILTEROPERATOR_CAST, 2, fld(1, "Temp"), lit_node(UA_NS0ID_INT32));
    ck_assert_uint_eq(run(five, 5), 0x01);
    el(UA_FILTEROPERATOR_EQUALS, 2, elem(1), lit_i32(-3));
    el(UA_FILTEROPERATOR_CAST, 2, fld(1, "Temp"), lit_node(UA_NS0ID_BYTE));
    ck_assert_uint_eq(run(five, 5), 0);       /* -3 is no Byte */
    /* Bits: Flags & 4 == 4; Flags | 1 == 13. */
    el(UA_FILTEROPERATOR_EQUALS, 2, elem(1), lit_i32(4));
    el(UA_FILTEROPERATOR_BITWISEAND, 2, fld(1, "Flags"), lit_i32(4));
    ck_assert_uint_eq(run(five, 5), 0x0D);
    el(UA_FILTEROPERATOR_EQUALS, 2, elem(1), lit_i32(13));
    el(UA_FILTEROPERATOR_BITWISEOR, 2, fld(1, "Flags"), lit_i32(1));
    ck_assert_uint_eq(run(five, 5), 0x08);
    /* An element shared by two others: evaluated once, both see it. */
    el(UA_FILTEROPERATOR_AND, 2, elem(1), elem(2));
    el(UA_FILTEROPERATOR_NOT, 1, elem(3));
    el(UA_FILTEROPERATOR_OR, 2, elem(3), elem(3));
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_i32(100));
    ck_assert_uint_eq(run(five, 5), 0);
}
END_TEST

START_TEST(test_refusals)
{
    struct ua_monitored_item_create_result r;
    const struct ua_event_filter_result   *fr;
    const struct ua_content_filter_result *wr;
    uint32_t                               used;

    new_sub();
    used = wk_subs_get(&fx.w)->cells.used;
    el(99, 2, fld(0, "Severity"), lit_i32(1));
    el(UA_FILTEROPERATOR_INVIEW, 1, lit_node(UA_NS0ID_SERVER));
    el(UA_FILTEROPERATOR_EQUALS, 1, lit_i32(1));
    el(UA_FILTEROPERATOR_AND, 2, elem(0), elem(4));
    el(UA_FILTEROPERATOR_EQUALS, 2, attr_op(), lit_i32(1));
    el(UA_FILTEROPERATOR_OFTYPE, 1, lit_node(UA_NS0ID_SERVER));
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), elem(99));
    el(UA_FILTEROPERATOR_RELATEDTO, 6, lit_i32(1), lit_i32(1), lit_i32(1),
       lit_i32(1), lit_i32(1), lit_i32(1));
    ck_assert_uint_eq(item(&r), UA_BAD_MONITORED_ITEM_FILTER_INVALID);
    ck_assert_int_eq(r.filter_result.encoding, UA_EO_DECODED);
    fr = r.filter_result.obj;
    wr = &fr->where_clause_result;
    ck_assert_int_eq(wr->n_element_results, 8);
    ck_assert_uint_eq(wr->element_results[0].status_code,
                      UA_BAD_FILTER_OPERATOR_INVALID);
    ck_assert_uint_eq(wr->element_results[1].status_code,
                      UA_BAD_FILTER_OPERATOR_UNSUPPORTED);
    ck_assert_uint_eq(wr->element_results[2].status_code,
                      UA_BAD_FILTER_OPERAND_COUNT_MISMATCH);
    ck_assert_uint_eq(wr->element_results[3].status_code,
                      UA_BAD_FILTER_OPERAND_INVALID);
    ck_assert_int_eq(wr->element_results[3].n_operand_status_codes, 2);
    ck_assert_uint_eq(wr->element_results[3].operand_status_codes[0],
                      UA_BAD_FILTER_OPERAND_INVALID);   /* backwards */
    ck_assert_uint_eq(wr->element_results[3].operand_status_codes[1],
                      UA_GOOD);
    ck_assert_uint_eq(wr->element_results[4].status_code,
                      UA_BAD_FILTER_OPERAND_INVALID);   /* AttributeOperand */
    ck_assert_uint_eq(wr->element_results[5].status_code,
                      UA_BAD_FILTER_OPERAND_INVALID);   /* not a type */
    ck_assert_uint_eq(wr->element_results[6].status_code,
                      UA_BAD_FILTER_OPERAND_INVALID);   /* no element 99 */
    ck_assert_uint_eq(wr->element_results[7].status_code,
                      UA_BAD_FILTER_OPERATOR_UNSUPPORTED);
    /* Nothing was left behind (the witness item has its own). */
    ck_assert_uint_eq(wk_subs_get(&fx.w)->cells.used, used);
    ck_assert_uint_eq(wk_subs_get(&fx.w)->nitems, 1);
}
END_TEST

START_TEST(test_element_limit)
{
    struct ua_monitored_item_create_result r;
    static const struct ev                 one[1] = {
        { 0, 300, NAN, NULL, -1 } };

    new_sub();
    /* LIMIT elements: a chain of Ands, the last one an Equals. */
    for (int i = 0; i < LIMIT - 1; i++)
        el(UA_FILTEROPERATOR_AND, 2, elem((uint32_t)i + 1),
           elem(LIMIT - 1));
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_i32(300));
    ck_assert_uint_eq(run(one, 1), 0x01);
    for (int i = 0; i < LIMIT; i++)
        el(UA_FILTEROPERATOR_AND, 2, elem((uint32_t)i + 1), elem(LIMIT));
    el(UA_FILTEROPERATOR_EQUALS, 2, fld(0, "Severity"), lit_i32(300));
    ck_assert_uint_eq(item(&r), UA_BAD_EVENT_FILTER_INVALID);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Event where clause");
    TCase   *tc = tcase_create("Where");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_comparisons);
    tcase_add_test(tc, test_logic_like_cast_bits_oftype);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_element_limit);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
