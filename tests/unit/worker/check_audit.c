/*
 * tests/unit/worker/check_audit.c: the session audit event records a
 * worker builds (worker/audit.c): each type's fields (the BaseEventType
 * ones, AuditEventType's, SessionId, SecureChannelId, ClientCertificate,
 * RevisedSessionTimeout) parse as an event record with the values given,
 * EventIds differ, and a buffer too small gives 0.
 */
#include "fixture.h"

#include "proto/codec.h"
#include "shm/fanout.h"
#include "worker/audit.h"
#include "worker/node.h"

static uint8_t                buf[WK_AUDIT_REC_MAX];
static struct shm_fo_ev       ev;
static struct shm_fo_ev_field fl[SHM_FO_EV_FIELDS_MAX];
static int                    nf;

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

static struct ua_variant
field(const char *path)
{
    struct ua_variant v;

    memset(&v, 0, sizeof(v));
    for (int i = 0; i < nf; i++)
        if (fl[i].plen == strlen(path)
            && memcmp(fl[i].path, path, fl[i].plen) == 0) {
            ck_assert_uint_eq(ua_decode(fl[i].var, fl[i].vlen, NULL, &v,
                                        &ua_types[UA_TYPE_VARIANT],
                                        &fx.arena, NULL), UA_GOOD);
            return v;
        }
    return v;
}

static uint32_t
build(const struct wk_audit *a)
{
    uint32_t len = wk_audit_build(&fx.w, a, buf, sizeof(buf));

    ck_assert_uint_gt(len, 0);
    nf = shm_fo_ev_parse(buf, len, &ev, fl, SHM_FO_EV_FIELDS_MAX);
    ck_assert_int_gt(nf, 0);
    return len;
}

START_TEST(test_create_activate_close)
{
    struct wk_audit   a;
    struct ua_variant v;
    uint8_t           id1[16];
    uint8_t           cert[3] = { 1, 2, 3 };
    struct ua_nodeid  srv = ua_nodeid_num(0, UA_NS0ID_SERVER);

    memset(&a, 0, sizeof(a));
    a.type = UA_NS0ID_AUDITCREATESESSIONEVENTTYPE;
    a.status = true;
    a.audit_entry_id = ua_string_from("entry-7");
    a.user_id.len = -1;
    a.session_id = ua_nodeid_num(1, 77);
    a.channel_id = 0x01000005;
    a.client_cert.len = 3;
    a.client_cert.data = cert;
    a.revised_timeout = 30000;
    build(&a);
    ck_assert_int_eq(nf, 17);
    ck_assert_uint_eq(ev.source, wk_node_lookup(&fx.w, &srv));
    v = field("0:EventType");
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)->id.num,
                      UA_NS0ID_AUDITCREATESESSIONEVENTTYPE);
    v = field("0:SourceName");
    ck_assert(ua_string_eq(v.data, "Session/CreateSession"));
    v = field("0:Status");
    ck_assert(*(bool *)v.data);
    v = field("0:Severity");
    ck_assert_uint_eq(*(uint16_t *)v.data, 100);
    v = field("0:ClientAuditEntryId");
    ck_assert(ua_string_eq(v.data, "entry-7"));
    v = field("0:SessionId");
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)->id.num, 77);
    v = field("0:SecureChannelId");
    ck_assert(ua_string_eq(v.data, "16777221"));
    v = field("0:ClientCertificate");
    ck_assert_int_eq(((struct ua_string *)v.data)->len, 3);
    v = field("0:RevisedSessionTimeout");
    ck_assert(*(double *)v.data == 30000);
    v = field("0:ServerId");
    ck_assert_uint_eq(v.type, UA_BT_STRING);
    v = field("0:EventId");
    ck_assert_int_eq(((struct ua_string *)v.data)->len, 16);
    memcpy(id1, ((struct ua_string *)v.data)->data, 16);

    a.type = UA_NS0ID_AUDITACTIVATESESSIONEVENTTYPE;
    a.status = false;
    a.user_id = ua_string_from("alice");
    build(&a);
    ck_assert_int_eq(nf, 15);
    ck_assert(ua_string_eq(field("0:ClientUserId").data, "alice"));
    ck_assert(!*(bool *)field("0:Status").data);
    ck_assert_uint_eq(*(uint16_t *)field("0:Severity").data, 500);
    ck_assert(memcmp(((struct ua_string *)field("0:EventId").data)->data,
                     id1, 16) != 0);
    ck_assert_uint_eq(field("0:ClientCertificate").type, 0);

    a.type = UA_NS0ID_AUDITSESSIONEVENTTYPE;
    build(&a);
    ck_assert_int_eq(nf, 14);
    ck_assert(ua_string_eq(field("0:SourceName").data,
                           "Session/CloseSession"));
    ck_assert_uint_eq(field("0:SecureChannelId").type, 0);
    /* Too small a buffer: 0, never a part. */
    ck_assert_uint_eq(wk_audit_build(&fx.w, &a, buf, 100), 0);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Audit events");
    TCase   *tc = tcase_create("Records");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_create_activate_close);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
