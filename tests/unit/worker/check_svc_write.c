/*
 * tests/unit/worker/check_svc_write.c: the worker's side of the Write
 * service (worker/svc_write.c) as far as it goes without a broker: the
 * service-level refusals (BadNothingToDo, BadTooManyOperations at the
 * limit and past it, an activated session required) and the answer of a
 * worker whose segment has no fan-out (BadServiceUnsupported, never a
 * hang).  The whole path through the broker is tests/integ/integ_fanout.c;
 * the broker's checks are tests/unit/broker/check_write.c.
 *
 * The fused form (wk_svc_write_scan, wk_svc_write_ops_keys) against the
 * decoded one (wk_svc_write_ops): the same records, state and results in
 * outboxes of several shapes (tests/unit/worker/outbox_fixture.h).  The
 * runs against the general path: check_outbox.c.
 */
#include "fixture.h"
#include "outbox_fixture.h"
#include "proto/codec.h"
#include "proto/attrs_gen.h"
#include "worker/link.h"
#include "worker/outbox.h"
#include "worker/node.h"
#include "worker/svc_write.h"

static void
setup(void)
{
    fx_setup();
}

static void
teardown(void)
{
    fx_teardown();
}

/* A WriteRequest of n Int32 writes to v0. */
static ua_status
write_n(struct ua_nodeid *token, int32_t n, struct ua_write_response *resp)
{
    static int32_t           v = 5;
    struct ua_write_request  req;
    struct ua_write_value   *wv = calloc((size_t)(n > 0 ? n : 1),
                                         sizeof(*wv));
    ua_status                st;

    ck_assert_ptr_nonnull(wv);
    for (int32_t i = 0; i < n; i++) {
        wv[i].node_id.ns = 1;
        wv[i].node_id.idtype = UA_IDTYPE_STRING;
        wv[i].node_id.id.str = ua_string_from("v0");
        wv[i].attribute_id = 13;
        wv[i].index_range.len = -1;
        wv[i].value.mask = UA_DV_VALUE;
        ua_variant_set_scalar(&wv[i].value.value, &v, UA_BT_INT32);
    }
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_write = n;
    req.nodes_to_write = n > 0 ? wv : NULL;
    st = fx_call(&fx.ch[0], token, UA_TYPE_WRITEREQUEST, &req,
                 UA_TYPE_WRITERESPONSE, resp);
    free(wv);
    return st;
}

START_TEST(test_service_results)
{
    struct ua_nodeid         token = fx_session(&fx.ch[0]);
    struct ua_write_response resp;
    uint32_t                 max = fx.w.conf->max_nodes_per_write;

    ck_assert_uint_eq(write_n(&token, 0, &resp), UA_BAD_NOTHING_TO_DO);
    ck_assert_uint_eq(write_n(&token, (int32_t)max + 1, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    /* At the limit the request passes the checks; with no fan-out in
     * this process it is refused as a whole, at once. */
    ck_assert_uint_eq(write_n(&token, (int32_t)max, &resp),
                      UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_uint_eq(write_n(&token, 1, &resp), UA_BAD_SERVICE_UNSUPPORTED);
    ck_assert_ptr_eq(fx.last_type, &ua_types[UA_TYPE_SERVICEFAULT]);
}
END_TEST

START_TEST(test_needs_session)
{
    struct ua_nodeid         none = ua_nodeid_num(0, 0);
    struct ua_write_response resp;

    ck_assert_uint_eq(write_n(&none, 1, &resp), UA_BAD_SESSION_ID_INVALID);
}
END_TEST


/* ------------------------------------------ the fused path vs the decode */

#define FU_MAX   72         /* WriteValues in the largest request */
#define FU_BODY  16384

static uint8_t fu_body[FU_BODY];
static uint8_t fu_arena_buf[1 << 20];
static uint64_t fu_taken, fu_declined;

/* NodeId k of the table: every form the fused path takes (TwoByte,
 * FourByte, Numeric, String; known and unknown nodes), then those it must
 * decline. */
#define FU_NIDS_TAKEN 10
#define FU_NIDS       13

static struct ua_nodeid
fu_nid(int k)
{
    static const uint8_t opaque[] = { 'v', '1' };
    struct ua_nodeid     n;

    switch (k) {
    case 0: return fx_ns1("v1");
    case 1: return fx_ns1("v17");
    case 2: return fx_ns1("nosuchnode");
    case 3: return fx_ns1("");
    case 4: return fx_ns0(85);                          /* TwoByte */
    case 5: return fx_ns0(UA_NS0ID_SERVER);             /* FourByte */
    case 6: return ua_nodeid_num(1, 5);                 /* FourByte, ns 1 */
    case 7: return ua_nodeid_num(300, 7);               /* Numeric */
    case 8: return ua_nodeid_num(0, 70000);             /* Numeric */
    case 9: return fx_ns0(0);                           /* TwoByte, null */
    case 10:                                            /* GUID */
        memset(&n, 0, sizeof(n));
        n.ns = 1;
        n.idtype = UA_IDTYPE_GUID;
        n.id.guid = fo_guid;
        return n;
    case 11:                                            /* ByteString */
        n = fx_ns1("v1");
        n.idtype = UA_IDTYPE_OPAQUE;
        n.id.str.len = 2;
        n.id.str.data = (uint8_t *)(uintptr_t)opaque;
        return n;
    default:                                            /* null String */
        n = fx_ns1("v1");
        n.id.str.len = -1;
        n.id.str.data = NULL;
        return n;
    }
}

static size_t
fu_encode(struct ua_write_request *req)
{
    size_t len = 0;

    req->request_header.request_handle = 4242;
    req->request_header.timestamp = FX_NOW_DT;
    req->request_header.timeout_hint = 5000;
    ck_assert_uint_eq(ua_encode(req, &ua_types[UA_TYPE_WRITEREQUEST],
                                fu_body, sizeof(fu_body), &len), UA_GOOD);
    return len;
}

/* The same NodeId (the fields its form uses). */
static void
fu_nid_same(const struct ua_nodeid *x, const struct ua_nodeid *y)
{
    ck_assert_uint_eq(x->ns, y->ns);
    ck_assert_uint_eq(x->idtype, y->idtype);
    switch (x->idtype) {
    case UA_IDTYPE_NUMERIC:
        ck_assert_uint_eq(x->id.num, y->id.num);
        break;
    case UA_IDTYPE_GUID:
        ck_assert_mem_eq(&x->id.guid, &y->id.guid, sizeof(x->id.guid));
        break;
    default:
        ck_assert_int_eq(x->id.str.len, y->id.str.len);
        ck_assert_ptr_eq(x->id.str.data, y->id.str.data);
        break;
    }
}

/*
 * body[len] both ways: the decode (ua_decode + wk_svc_write_ops) and the
 * fused path (wk_svc_write_scan + wk_svc_write_ops_keys).  When the scan
 * takes it, the decode must succeed with the same header, and both loops
 * must leave the same records, state and results in fan-outs of several
 * shapes (runs that fill records, rings and outboxes).  want: 1 taken, 0
 * declined, -1 either.  Whether it was taken.
 */
static bool
fu_compare(const uint8_t *body, size_t len, int want)
{
    static const struct { uint32_t ss, ring, cap; } cf[] = {
        { 64, 4096, 4096 }, { 72, 3, 4096 }, { 32, 16, 40 },
        { 48, 4096, 30 },
    };
    struct ua_arena          a;
    struct ua_write_request  dec;
    struct ua_request_header h;
    struct wk_svc_ctx        ctx;
    struct wk_link          *saved = fx.w.link;
    struct wk_writes        *saved_ws = fx.w.writes;
    ua_status                st;
    bool                     taken;

    ua_arena_init(&a, fu_arena_buf, sizeof(fu_arena_buf));
    st = ua_decode(body, len, NULL, &dec, &ua_types[UA_TYPE_WRITEREQUEST],
                   &a, &fx.w.limits);
    memset(&ctx, 0, sizeof(ctx));
    ctx.w = &fx.w;
    ctx.arena = &a;
    memset(&h, 0xEE, sizeof(h));
    taken = wk_svc_write_scan(&ctx, body, len, &h);
    if (want >= 0)
        ck_assert_msg(taken == (want == 1), "scan %s, want %s",
                      taken ? "took" : "declined",
                      want ? "taken" : "declined");
    if (!taken) {
        fu_declined++;
        return false;
    }
    fu_taken++;
    /* Never taken what the decoder refuses: its status is the answer. */
    ck_assert_uint_eq(st, UA_GOOD);
    ck_assert_int_eq(ctx.raw_n, dec.n_nodes_to_write);
    ck_assert_int_eq(h.request_handle, dec.request_header.request_handle);
    ck_assert(h.timestamp == dec.request_header.timestamp);
    ck_assert_uint_eq(h.timeout_hint, dec.request_header.timeout_hint);
    ck_assert_uint_eq(h.return_diagnostics,
                      dec.request_header.return_diagnostics);
    ck_assert_int_eq(h.audit_entry_id.len,
                     dec.request_header.audit_entry_id.len);
    fu_nid_same(&h.authentication_token,
                &dec.request_header.authentication_token);
    for (size_t c = 0; c < sizeof(cf) / sizeof(cf[0]); c++) {
        struct fo          fa, fb;
        struct wk_conn_ref ref;
        uint64_t           before, counted;
        int                id;

        memset(&ref, 0, sizeof(ref));
        fo_make(&fa, cf[c].ss, cf[c].ring, cf[c].cap);
        fo_make(&fb, cf[c].ss, cf[c].ring, cf[c].cap);
        before = atomic_load(&fx.w.row->write_ops);
        fx.w.link = &fa.l;
        fx.w.writes = &fa.ws;
        id = wk_svc_write_begin(&fa.ws, &ref, (uint32_t)ctx.raw_n);
        ck_assert_int_gt(id, 0);
        wk_svc_write_ops(&fx.w, id, dec.nodes_to_write, dec.n_nodes_to_write);
        counted = atomic_load(&fx.w.row->write_ops) - before;
        before = atomic_load(&fx.w.row->write_ops);
        fx.w.link = &fb.l;
        fx.w.writes = &fb.ws;
        id = wk_svc_write_begin(&fb.ws, &ref, (uint32_t)ctx.raw_n);
        ck_assert_int_gt(id, 0);
        wk_svc_write_ops_keys(&fx.w, id, ctx.raw, ctx.raw_n);
        fx.w.link = saved;
        fx.w.writes = saved_ws;
        ck_assert_uint_eq(atomic_load(&fx.w.row->write_ops) - before,
                          counted);
        fo_same(&fa, &fb, "decoded vs fused");
        fo_free(&fa);
        fo_free(&fb);
    }
    return true;
}

/* A WriteRequest of n WriteValues: NodeId nid(i), value case val(i)
 * (fo_case), into req (wv[FU_MAX]). */
static void
fu_request(struct ua_write_request *req, struct ua_write_value *wv,
           int32_t n, int (*nid)(int32_t, int32_t),
           int (*val)(int32_t, int32_t), int32_t arg)
{
    memset(req, 0, sizeof(*req));
    memset(wv, 0, sizeof(*wv) * FU_MAX);
    for (int32_t i = 0; i < n; i++) {
        wv[i].node_id = fu_nid(nid(i, arg));
        fo_case(val(i, arg), &wv[i].value, &wv[i].index_range,
                &wv[i].attribute_id);
        if (i % 7 == 3)
            wv[i].attribute_id = UA_ATTR_BROWSENAME;   /* travels as is */
    }
    req->n_nodes_to_write = n;
    req->nodes_to_write = n > 0 ? wv : NULL;
}

static int fu_nid_mix(int32_t i, int32_t arg)
{
    return (int)((i * 5 + arg) % FU_NIDS_TAKEN);
}

/* The fixed-size cases of fo_case (0..13) and case 23 (a Byte to an
 * attribute past 16 bits), which the fused path takes. */
static int fu_val_mix(int32_t i, int32_t arg)
{
    int k = (int)((i * 3 + arg) % 15);

    return k == 14 ? 23 : k;
}

static int fu_dnid, fu_dval, fu_dpos;

static int fu_nid_dec(int32_t i, int32_t arg)
{
    return i == fu_dpos && fu_dnid >= 0 ? fu_dnid : fu_nid_mix(i, arg);
}

static int fu_val_dec(int32_t i, int32_t arg)
{
    return i == fu_dpos && fu_dval >= 0 ? fu_dval : fu_val_mix(i, arg);
}

/*
 * The fused path takes every request of usual WriteValues (each NodeId
 * form, each fixed-size type, known and unknown nodes, other attributes)
 * and leaves the records and results the decode and loop leave; it
 * declines the whole request for any WriteValue it does not take, first,
 * in the middle or last.
 */
START_TEST(test_fused_same)
{
    static struct ua_write_value wv[FU_MAX];
    struct ua_write_request      req;
    static const int             dec_vals[] = { 14, 15, 16, 17, 18, 19, 20,
                                                21, 22, 24 };

    fu_values();
    fu_taken = fu_declined = 0;
    for (int32_t n = 1; n <= FU_MAX; n++) {
        fu_request(&req, wv, n, fu_nid_mix, fu_val_mix, n);
        fu_compare(fu_body, fu_encode(&req), 1);
    }
    for (int32_t n = 1; n <= 40; n += 13) {
        for (int p = 0; p < 3; p++) {               /* first, middle, last */
            fu_dpos = p == 0 ? 0 : p == 1 ? n / 2 : n - 1;
            fu_dval = -1;
            for (fu_dnid = FU_NIDS_TAKEN; fu_dnid < FU_NIDS; fu_dnid++) {
                fu_request(&req, wv, n, fu_nid_dec, fu_val_dec, n);
                fu_compare(fu_body, fu_encode(&req), 0);
            }
            fu_dnid = -1;
            for (size_t k = 0; k < sizeof(dec_vals) / sizeof(dec_vals[0]);
                 k++) {
                fu_dval = dec_vals[k];
                fu_request(&req, wv, n, fu_nid_dec, fu_val_dec, n);
                fu_compare(fu_body, fu_encode(&req), 0);
            }
        }
    }
    /* No WriteValues, a null array: the decode answers (BadNothingToDo). */
    fu_request(&req, wv, 0, fu_nid_mix, fu_val_mix, 0);
    fu_compare(fu_body, fu_encode(&req), 0);
    req.n_nodes_to_write = -1;
    fu_compare(fu_body, fu_encode(&req), 0);
    /* RequestHeaders: any token form and diagnostics are taken; an
     * auditEntryId or an additional header is left to the decode. */
    fu_request(&req, wv, 5, fu_nid_mix, fu_val_mix, 5);
    for (int k = 0; k < FU_NIDS; k++) {
        req.request_header.authentication_token = fu_nid(k);
        fu_compare(fu_body, fu_encode(&req), 1);
    }
    req.request_header.return_diagnostics = 0x3FF;
    fu_compare(fu_body, fu_encode(&req), 1);
    req.request_header.audit_entry_id = ua_string_from("");
    fu_compare(fu_body, fu_encode(&req), 1);
    req.request_header.audit_entry_id = ua_string_from("audit");
    fu_compare(fu_body, fu_encode(&req), 0);
    req.request_header.audit_entry_id.len = -1;
    req.request_header.audit_entry_id.data = NULL;
    req.request_header.additional_header.type_id = ua_nodeid_num(0, 5);
    fu_compare(fu_body, fu_encode(&req), 0);
    ck_assert_uint_gt(fu_taken, FU_MAX);
    ck_assert_uint_gt(fu_declined, 30);
}
END_TEST

/*
 * Every prefix of a request is declined (the decode reports it), and a
 * request with any one byte changed either is declined or is taken with
 * the decode's success and its records: the scan never takes what the
 * decode refuses, never reads what the decode would not.
 */
START_TEST(test_fused_corrupt)
{
    static struct ua_write_value wv[FU_MAX];
    static const uint8_t         vals[] = { 0x00, 0x01, 0x02, 0x03, 0x04,
                                            0x7F, 0x80, 0xFF };
    struct ua_write_request      req;
    uint8_t                      orig[FU_BODY];
    size_t                       len;

    fu_values();
    fu_taken = fu_declined = 0;
    fu_request(&req, wv, 10, fu_nid_mix, fu_val_mix, 10);
    len = fu_encode(&req);
    memcpy(orig, fu_body, len);
    for (size_t l = 0; l < len; l++) {
        /* Each prefix in a buffer of its own size: a read past it is
         * one past an allocation (SAN=1 reports it). */
        uint8_t *pre = malloc(l > 0 ? l : 1);

        ck_assert_ptr_nonnull(pre);
        memcpy(pre, fu_body, l);
        fu_compare(pre, l, 0);
        free(pre);
    }
    fu_compare(fu_body, len, 1);
    for (size_t i = 0; i < len; i++) {
        for (size_t v = 0; v < sizeof(vals); v++) {
            memcpy(fu_body, orig, len);
            if (fu_body[i] == vals[v])
                continue;
            fu_body[i] = vals[v];
            fu_compare(fu_body, len, -1);
        }
    }
    ck_assert_uint_gt(fu_taken, len);           /* both outcomes seen */
    ck_assert_uint_gt(fu_declined, len);
}
END_TEST

/*
 * Every Variant encoding byte as a value's: taken exactly for the
 * types whose values travel in a run (1..8 bytes), with the same record
 * (a Boolean's byte 5 travels as 1, as the decoder makes it).
 */
START_TEST(test_fused_types)
{
    static struct ua_write_value wv[FU_MAX];
    struct ua_write_request      req;
    size_t                       len, at;
    uint64_t                     raw = UINT64_C(0x0102030405060705);

    fu_values();
    /* Three: the first opens the record (the general path), the others
     * are appended by the run; the last one's type varies. */
    fu_request(&req, wv, 3, fu_nid_mix, fu_val_mix, 10);
    for (int i = 0; i < 3; i++) {
        wv[i].node_id = fx_ns1("v1");
        ua_variant_set_scalar(&wv[i].value.value, &raw, UA_BT_UINT64);
        wv[i].attribute_id = UA_ATTR_VALUE;
    }
    len = fu_encode(&req);
    at = len - 9;                               /* the last Variant byte */
    ck_assert_uint_eq(fu_body[at], UA_BT_UINT64);
    for (unsigned b = 0; b < 256; b++) {
        fu_body[at] = (uint8_t)b;
        fu_compare(fu_body, len, wk_outbox_type_size((uint8_t)b) != 0);
    }
    /* ... and the records compared were records: v1 is a node. */
    ck_assert_uint_ne(wk_node_lookup(&fx.w, &wv[0].node_id), SHM_NONE);
}
END_TEST

static void
fu_limits(struct ua_limits *l)
{
    *l = fx.w.limits;
}

/*
 * The decoder's limits: whatever one refuses, the scan declines (and the
 * decode answers it); at the limit it is taken.  max_nodes_per_write too.
 */
START_TEST(test_fused_limits)
{
    static struct ua_write_value wv[FU_MAX];
    struct ua_write_request      req;
    struct ua_limits             keep;
    struct ua_request_header     h;
    const uint8_t               *first;
    int32_t                      n;
    size_t                       len;

    fu_values();
    fu_limits(&keep);
    fu_request(&req, wv, 10, fu_nid_mix, fu_val_mix, 1);
    len = fu_encode(&req);
    fx.w.limits.max_array_len = 9;
    fu_compare(fu_body, len, 0);
    fx.w.limits.max_array_len = 10;
    fu_compare(fu_body, len, 1);
    fu_limits(&fx.w.limits);
    fx.w.limits.max_string_len = 2;             /* "v17", "nosuchnode" */
    fu_compare(fu_body, len, 0);
    fx.w.limits.max_string_len = 10;
    fu_compare(fu_body, len, 1);
    fu_limits(&fx.w.limits);
    fx.w.limits.max_depth = 3;
    fu_compare(fu_body, len, 0);
    fx.w.limits.max_depth = 4;
    fu_compare(fu_body, len, 1);
    fu_limits(&fx.w.limits);
    fx.w.limits.max_message_size = len - 1;
    fu_compare(fu_body, len, 0);
    fx.w.limits.max_message_size = len;
    fu_compare(fu_body, len, 1);
    fx.w.limits = keep;
    ck_assert(!ua_write_request_head(fu_body, len, &keep, 9, &h, &first,
                                     &n));
    ck_assert(ua_write_request_head(fu_body, len, &keep, 10, &h, &first,
                                    &n));
    ck_assert_int_eq(n, 10);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/svc_write");
    TCase   *tc = tcase_create("Write without a broker");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_service_results);
    tcase_add_test(tc, test_needs_session);
    tcase_add_test(tc, test_fused_same);
    tcase_add_test(tc, test_fused_corrupt);
    tcase_add_test(tc, test_fused_types);
    tcase_add_test(tc, test_fused_limits);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
