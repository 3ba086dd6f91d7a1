/*
 * tests/unit/broker/check_feedline.c: the feed's text format
 * (broker/feedline.c, docs/feed.md) on the real address space: every
 * NodeId form, values of each type by the node's DataType, arrays,
 * quoting, the status= and ts= options, ISO 8601 times, and the refusals
 * with their statuses; event lines; values printed and read back.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/event.h"
#include "broker/feedline.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define T0   INT64_C(133470720000000000)    /* 2023-12-15 */
#define UNIX INT64_C(116444736000000000)    /* 1970-01-01 as a DateTime */

static struct bk_config         conf;
static struct bk_addrspace      as;
static uint8_t                  arena_buf[1 << 20];
static struct ua_arena          arena;
static struct bk_feedline_value fv;
static char                     why[BK_FEEDLINE_WHY_MAX];

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    conf.value_heap_mb = 4;
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    ua_arena_init(&arena, arena_buf, sizeof(arena_buf));
}

static void
teardown(void)
{
    bk_addrspace_close(&as);
}

static ua_status
parse(const char *line)
{
    ua_arena_reset(&arena);
    return bk_feedline_parse(&as.ns, line, strlen(line), &arena, &fv, why,
                             sizeof(why));
}

static uint32_t
str(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

START_TEST(test_nodeids)
{
    ck_assert_uint_eq(parse("ns=1;s=v0=42"), UA_GOOD);
    ck_assert_uint_eq(fv.node, str("v0"));
    ck_assert_uint_eq(fv.slot, as.ns.nodes[str("v0")].u.var.slot);
    /* Namespace 0 parses and is found, but belongs to the server. */
    ck_assert_uint_eq(parse("i=2258=1"), UA_BAD_NOT_WRITABLE);
    ck_assert_uint_eq(parse("ns=0;i=2267=1"), UA_BAD_NOT_WRITABLE);
    /* GUID and opaque forms parse (no such nodes here). */
    ck_assert_uint_eq(parse("ns=1;g=09087e75-8e5e-499b-954f-f2a9603db28a=1"),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(parse("ns=1;b=M/RbKBsRVkePCePcx24oRA===1"),
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(parse("ns=1;b=AAE==1"), UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(parse("ns=1;s=nope=1"), UA_BAD_NODE_ID_UNKNOWN);
    /* Broken NodeIds. */
    ck_assert_uint_eq(parse("v0=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;v0=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=70000;s=v0=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;i=x=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;i=4294967296=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;g=0908-7e75=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;b=A=1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;s=v0"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse("ns=1;s==1"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse(""), UA_BAD_NODE_ID_INVALID);
    /* Objects have no value. */
    ck_assert_uint_eq(parse("ns=1;s=Demo=1"), UA_BAD_NOT_WRITABLE);
}
END_TEST

START_TEST(test_numbers)
{
    ck_assert_uint_eq(parse("ns=1;s=v0=-2147483648"), UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_INT32);
    ck_assert_int_eq(*(int32_t *)fv.v.data, INT32_MIN);
    ck_assert_uint_eq(parse("ns=1;s=v0=2147483647"), UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=v0=2147483648"), UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=v0=0x10"), UA_GOOD);
    ck_assert_int_eq(*(int32_t *)fv.v.data, 16);
    ck_assert_uint_eq(parse("ns=1;s=v0=1.5"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=abc"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0="), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v1=1.25"), UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_DOUBLE);
    ck_assert(*(double *)fv.v.data == 1.25);
    ck_assert_uint_eq(parse("ns=1;s=v1=-1e300"), UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=v1=nan"), UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=v1= 7 "), UA_GOOD);
    ck_assert(*(double *)fv.v.data == 7);
    /* Each width at its limit and past it. */
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.SByte=-128"),
                      UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.SByte=128"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Byte=255"), UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Byte=256"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Byte=-1"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Int16=-32768"),
                      UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Int16=32768"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.UInt16=65535"),
                      UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.UInt16=65536"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.UInt32=4294967295"),
                      UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.UInt32=4294967296"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Int64="
                            "-9223372036854775808"), UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Int64="
                            "9223372036854775808"), UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.UInt64="
                            "18446744073709551615"), UA_GOOD);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Float=3.5"), UA_GOOD);
    ck_assert(*(float *)fv.v.data == 3.5f);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Float=1e39"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.StatusCode="
                            "0x80740000"), UA_GOOD);
    ck_assert_uint_eq(*(uint32_t *)fv.v.data, UA_BAD_TYPE_MISMATCH);
}
END_TEST

START_TEST(test_other_types)
{
    const struct ua_string *s;

    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Boolean=true"),
                      UA_GOOD);
    ck_assert(*(bool *)fv.v.data);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Boolean=0"), UA_GOOD);
    ck_assert(!*(bool *)fv.v.data);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Boolean=yes"),
                      UA_BAD_TYPE_MISMATCH);
    /* Strings: bare to the options, or quoted with escapes. */
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.String=hello world"),
                      UA_GOOD);
    s = fv.v.data;
    ck_assert(ua_string_eq(s, "hello world"));
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.String="
                            "\"a;status=1 \\\"q\\\"\\n\""), UA_GOOD);
    s = fv.v.data;
    ck_assert(ua_string_eq(s, "a;status=1 \"q\"\n"));
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.String=\"open"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.ByteString=AAEC"),
                      UA_GOOD);
    s = fv.v.data;
    ck_assert_int_eq(s->len, 3);
    ck_assert_uint_eq(s->data[2], 2);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.ByteString=AAE"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.DateTime="
                            "1970-01-01T00:00:01Z"), UA_GOOD);
    ck_assert_int_eq(*(int64_t *)fv.v.data, UNIX + 10000000);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Guid="
                            "00000001-0002-0003-0405-060708090a0b"),
                      UA_GOOD);
    ck_assert_uint_eq(((struct ua_guid *)fv.v.data)->data1, 1);
    ck_assert_uint_eq(((struct ua_guid *)fv.v.data)->data4[7], 0x0b);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.NodeId=ns=1;s=v0"),
                      UA_GOOD);
    ck_assert_uint_eq(((struct ua_nodeid *)fv.v.data)->ns, 1);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.LocalizedText=hi"),
                      UA_GOOD);
    ck_assert(ua_string_eq(&((struct ua_localizedtext *)fv.v.data)->text,
                           "hi"));
    /* Types the feed does not write. */
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.QualifiedName=x"),
                      UA_BAD_NOT_SUPPORTED);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.ExtensionObject=x"),
                      UA_BAD_NOT_SUPPORTED);
    /* BaseDataType (the Variant variable): the text picks the type. */
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Variant=5"), UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_INT32);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Variant=5000000000"),
                      UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_INT64);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Variant=2.5"), UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_DOUBLE);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Variant=false"),
                      UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_BOOLEAN);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.Variant=\"s\""),
                      UA_GOOD);
    ck_assert_uint_eq(fv.v.type, UA_BT_STRING);
}
END_TEST

START_TEST(test_arrays)
{
    const int32_t *a;

    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=[1, -2,3]"),
                      UA_GOOD);
    ck_assert(fv.v.is_array);
    ck_assert_int_eq(fv.v.n, 3);
    a = fv.v.data;
    ck_assert_int_eq(a[1], -2);
    ck_assert_int_eq(a[2], 3);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=[]"), UA_GOOD);
    ck_assert_int_eq(fv.v.n, 0);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Double=[1.5,2]"),
                      UA_GOOD);
    ck_assert(((double *)fv.v.data)[1] == 2);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.String="
                            "[\"a,b\", c, \"]\"]"), UA_GOOD);
    ck_assert_int_eq(fv.v.n, 3);
    ck_assert(ua_string_eq(&((struct ua_string *)fv.v.data)[0], "a,b"));
    ck_assert(ua_string_eq(&((struct ua_string *)fv.v.data)[1], "c"));
    ck_assert(ua_string_eq(&((struct ua_string *)fv.v.data)[2], "]"));
    /* Many elements: the arena grows the array. */
    {
        char  line[8192];
        int   n = snprintf(line, sizeof(line),
                           "ns=1;s=Demo.Static.Array.Int32=[");

        for (int i = 0; i < 1000; i++)
            n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%d",
                          i ? "," : "", i);
        snprintf(line + n, sizeof(line) - (size_t)n, "]");
        ck_assert_uint_eq(parse(line), UA_GOOD);
        ck_assert_int_eq(fv.v.n, 1000);
        ck_assert_int_eq(((int32_t *)fv.v.data)[999], 999);
    }
    /* Shape and syntax refusals. */
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=5"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=[5]"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=[1,x]"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=[1 2]"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=[1,2"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Variant=[1,true]"),
                      UA_BAD_TYPE_MISMATCH);
}
END_TEST

START_TEST(test_options)
{
    ck_assert_uint_eq(parse("ns=1;s=v0=1;status=0x40920000"), UA_GOOD);
    ck_assert_uint_eq(fv.status, 0x40920000u);
    ck_assert(!fv.has_ts);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;ts=2024-05-01T12:00:00.5Z"),
                      UA_GOOD);
    ck_assert(fv.has_ts);
    ck_assert_int_eq(fv.source_ts,
                     UNIX + (INT64_C(1714564800) * 10000000) + 5000000);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;ts=2024-05-01T14:00:00+02:00"
                            ";status=0"), UA_GOOD);
    ck_assert_int_eq(fv.source_ts, UNIX + INT64_C(1714564800) * 10000000);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;ts=1601-01-01T00:00:00.0000001Z"),
                      UA_GOOD);
    ck_assert_int_eq(fv.source_ts, 1);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Scalar.String=x ;status=1"),
                      UA_GOOD);
    ck_assert(ua_string_eq(fv.v.data, "x"));
    /* Refusals. */
    ck_assert_uint_eq(parse("ns=1;s=v0=1;ts=2024-13-01T00:00:00Z"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;ts=2024-05-01"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;ts=1600-01-01T00:00:00Z"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;status=x"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;status=0x100000000"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=v0=1;colour=red"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse("ns=1;s=Demo.Static.Array.Int32=[1] x"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert(strlen(why) > 0);
}
END_TEST

/* ------------------------------------------------------------ events */

static uint8_t                ev_buf[BK_FEEDLINE_EVENT_MAX];
static struct bk_event        ev;
static struct shm_fo_ev       evh;
static struct shm_fo_ev_field evf[SHM_FO_EV_FIELDS_MAX];
static int                    evn;

static ua_status
parse_ev(const char *line)
{
    ua_status st;

    ua_arena_reset(&arena);
    evn = -1;
    st = bk_feedline_parse_event(&as.ns, line, strlen(line), T0, &arena, &ev,
                                 ev_buf, sizeof(ev_buf), why, sizeof(why));
    if (st == UA_GOOD)
        evn = shm_fo_ev_parse(ev.buf, ev.len, &evh, evf,
                              SHM_FO_EV_FIELDS_MAX);
    return st;
}

/* The decoded Variant of field path of the last event (type 0: none). */
static struct ua_variant
ev_field(const char *path)
{
    struct ua_variant v;

    memset(&v, 0, sizeof(v));
    for (int i = 0; i < evn; i++)
        if (evf[i].plen == strlen(path)
            && memcmp(evf[i].path, path, evf[i].plen) == 0) {
            ck_assert_uint_eq(ua_decode(evf[i].var, evf[i].vlen, NULL, &v,
                                        &ua_types[UA_TYPE_VARIANT], &arena,
                                        NULL), UA_GOOD);
            return v;
        }
    return v;
}

static uint32_t
ns0(uint32_t id)
{
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&as.ns, &k);
}

START_TEST(test_event_lines)
{
    struct ua_variant v;

    ck_assert_uint_eq(parse_ev("event=ns=1;s=Demo;type=i=2041;severity=700;"
                               "message=\"Tank; 4 high\";"
                               "time=2024-05-01T12:00:00Z;"
                               "1:Temperature=21.5;Count=3;"
                               "2:A/2:B=\"x\""), UA_GOOD);
    ck_assert_int_eq(evn, 11);      /* 8 standard + 3 */
    ck_assert_uint_eq(evh.source, str("Demo"));
    ck_assert_uint_eq(evh.type, ns0(UA_NS0ID_BASEEVENTTYPE));
    v = ev_field("0:Severity");
    ck_assert_uint_eq(v.type, UA_BT_UINT16);
    ck_assert_uint_eq(*(uint16_t *)v.data, 700);
    v = ev_field("0:Message");
    ck_assert_uint_eq(v.type, UA_BT_LOCALIZEDTEXT);
    ck_assert_int_eq(((struct ua_localizedtext *)v.data)->text.len, 12);
    v = ev_field("0:Time");
    ck_assert_int_eq(*(int64_t *)v.data,
                     INT64_C(1714564800) * 10000000 + UNIX);
    v = ev_field("0:ReceiveTime");
    ck_assert_int_eq(*(int64_t *)v.data, T0);
    v = ev_field("1:Temperature");
    ck_assert_uint_eq(v.type, UA_BT_DOUBLE);
    ck_assert(*(double *)v.data == 21.5);
    v = ev_field("0:Count");
    ck_assert_uint_eq(v.type, UA_BT_INT32);
    v = ev_field("2:A/2:B");
    ck_assert_uint_eq(v.type, UA_BT_STRING);
    v = ev_field("0:EventId");
    ck_assert_uint_eq(v.type, UA_BT_BYTESTRING);
    ck_assert_int_eq(((struct ua_string *)v.data)->len, 16);
    v = ev_field("0:SourceName");
    ck_assert_int_eq(((struct ua_string *)v.data)->len, 4);     /* Demo */
    v = ev_field("0:SourceNode");
    ck_assert_uint_eq(v.type, UA_BT_NODEID);
    ck_assert_uint_eq(((struct ua_nodeid *)v.data)->ns, 1);
    /* Defaults: BaseEventType, severity 500, an empty message, now. */
    ck_assert_uint_eq(parse_ev("event=i=2253"), UA_GOOD);
    ck_assert_int_eq(evn, 8);
    ck_assert_uint_eq(*(uint16_t *)ev_field("0:Severity").data,
                      BK_FEEDLINE_EVENT_SEVERITY);
    ck_assert_int_eq(*(int64_t *)ev_field("0:Time").data, T0);
    /* A type in another namespace form, a subtype of BaseEventType. */
    ck_assert_uint_eq(parse_ev("event=i=2253;type=ns=0;i=2071"), UA_GOOD);
    ck_assert_uint_eq(evh.type, ns0(UA_NS0ID_AUDITCREATESESSIONEVENTTYPE));
    /* Two events never share an EventId. */
    {
        uint8_t a[16];

        ck_assert_uint_eq(parse_ev("event=i=2253"), UA_GOOD);
        memcpy(a, ((struct ua_string *)ev_field("0:EventId").data)->data, 16);
        ck_assert_uint_eq(parse_ev("event=i=2253"), UA_GOOD);
        ck_assert(memcmp(a, ((struct ua_string *)
                             ev_field("0:EventId").data)->data, 16) != 0);
    }
}
END_TEST

START_TEST(test_event_refusals)
{
    ck_assert_uint_eq(parse_ev("event="), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse_ev("event=x"), UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse_ev("event=ns=1;s=nope"), UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(parse_ev("event=i=2253;type=i=85"),
                      UA_BAD_TYPE_DEFINITION_INVALID);   /* an Object */
    ck_assert_uint_eq(parse_ev("event=i=2253;type=i=58"),
                      UA_BAD_TYPE_DEFINITION_INVALID);   /* not an event */
    ck_assert_uint_eq(parse_ev("event=i=2253;type=zz"),
                      UA_BAD_NODE_ID_INVALID);
    ck_assert_uint_eq(parse_ev("event=i=2253;severity=0"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse_ev("event=i=2253;severity=1001"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse_ev("event=i=2253;severity=-5"),
                      UA_BAD_OUT_OF_RANGE);
    ck_assert_uint_eq(parse_ev("event=i=2253;severity=1"), UA_GOOD);
    ck_assert_uint_eq(parse_ev("event=i=2253;severity=1000"), UA_GOOD);
    ck_assert_uint_eq(parse_ev("event=i=2253;time=yesterday"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse_ev("event=i=2253;colour=red"),
                      UA_BAD_TYPE_MISMATCH);     /* lower case: an option */
    ck_assert_uint_eq(parse_ev("event=i=2253;1:T=1;1:T=2"),
                      UA_BAD_TYPE_MISMATCH);     /* twice */
    ck_assert_uint_eq(parse_ev("event=i=2253;0:Severity=5"),
                      UA_BAD_TYPE_MISMATCH);     /* severity= does that */
    ck_assert_uint_eq(parse_ev("event=i=2253;x:T=1"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse_ev("event=i=2253;1:=1"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse_ev("event=i=2253;1:A/=1"), UA_BAD_TYPE_MISMATCH);
    ck_assert_uint_eq(parse_ev("event=i=2253;novalue"),
                      UA_BAD_TYPE_MISMATCH);
    ck_assert(strlen(why) > 0);
    /* At the field limit: 8 standard fields + 56 of ours fit, one more
     * does not. */
    {
        char   line[4096];
        size_t n = (size_t)snprintf(line, sizeof(line), "event=i=2253");

        for (unsigned i = 0; i < SHM_FO_EV_FIELDS_MAX - 8; i++)
            n += (size_t)snprintf(line + n, sizeof(line) - n, ";1:F%u=%u",
                                  i, i);
        ck_assert_uint_eq(parse_ev(line), UA_GOOD);
        ck_assert_int_eq(evn, (int)SHM_FO_EV_FIELDS_MAX);
        snprintf(line + n, sizeof(line) - n, ";1:Last=1");
        ck_assert_uint_eq(parse_ev(line), UA_BAD_ENCODING_LIMITS_EXCEEDED);
    }
}
END_TEST

/* What the printer makes, the parser reads back to the same Variant. */
START_TEST(test_print_round_trip)
{
    static uint8_t    abuf[1 << 16];
    struct ua_arena   a;
    bool              b = true;
    int8_t            i8 = -8;
    uint16_t          u16 = 65535;
    int64_t           i64 = INT64_MIN;
    float             fl = 1.25f;
    double            d = 0.1, darr[3] = { 1, -2.5, 1e300 };
    int64_t           dt = T0 + 1234567;
    uint8_t           bsb[] = { 0, 1, 2, 250, 255 };
    struct ua_string  s = ua_string_from("a \"q\"\\ \n\tz");
    struct ua_string  bs = { 5, bsb };
    struct ua_guid    g = { 0x12345678, 0x9abc, 0xdef0,
                            { 1, 2, 3, 4, 5, 6, 7, 8 } };
    struct {
        void   *p;
        uint8_t t;
        int32_t n;                      /* -1: scalar */
        uint32_t dt;                    /* ns0 DataType */
    } c[] = {
        { &b, UA_BT_BOOLEAN, -1, UA_NS0ID_BOOLEAN },
        { &i8, UA_BT_SBYTE, -1, UA_NS0ID_SBYTE },
        { &u16, UA_BT_UINT16, -1, UA_NS0ID_UINT16 },
        { &i64, UA_BT_INT64, -1, UA_NS0ID_INT64 },
        { &fl, UA_BT_FLOAT, -1, UA_NS0ID_FLOAT },
        { &d, UA_BT_DOUBLE, -1, UA_NS0ID_DOUBLE },
        { darr, UA_BT_DOUBLE, 3, UA_NS0ID_DOUBLE },
        { &dt, UA_BT_DATETIME, -1, UA_NS0ID_DATETIME },
        { &s, UA_BT_STRING, -1, UA_NS0ID_STRING },
        { &bs, UA_BT_BYTESTRING, -1, UA_NS0ID_BYTESTRING },
        { &g, UA_BT_GUID, -1, UA_NS0ID_GUID },
    };

    for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
        struct ua_variant v, back;
        char              text[512], rwhy[BK_FEEDLINE_WHY_MAX];
        uint8_t           e1[512], e2[512];
        size_t            l1, l2;
        int               n;

        if (c[k].n < 0)
            ua_variant_set_scalar(&v, c[k].p, c[k].t);
        else
            ua_variant_set_array(&v, c[k].p, c[k].n, c[k].t);
        n = bk_feedline_print_value(&v, text, sizeof(text));
        ck_assert_msg(n > 0, "case %zu", k);
        ck_assert_uint_eq(strlen(text), (size_t)n);
        ua_arena_init(&a, abuf, sizeof(abuf));
        ck_assert_msg(bk_feedline_parse_value(&as.ns, ns0(c[k].dt), text,
                                              (size_t)n, &a, &back, rwhy,
                                              sizeof(rwhy)) == UA_GOOD,
                      "case %zu: %s: %s", k, text, rwhy);
        ck_assert_uint_eq(ua_encode(&v, &ua_types[UA_TYPE_VARIANT], e1,
                                    sizeof(e1), &l1), UA_GOOD);
        ck_assert_uint_eq(ua_encode(&back, &ua_types[UA_TYPE_VARIANT], e2,
                                    sizeof(e2), &l2), UA_GOOD);
        ck_assert_msg(l1 == l2 && memcmp(e1, e2, l1) == 0,
                      "case %zu: %s read back differently", k, text);
    }
    /* Too small a buffer, a type without a syntax. */
    {
        struct ua_variant v;
        char              small[4];
        struct ua_qualifiedname qn = { 1, { 1, (uint8_t *)"x" } };

        ua_variant_set_scalar(&v, &d, UA_BT_DOUBLE);
        ck_assert_int_eq(bk_feedline_print_value(&v, small, sizeof(small)),
                         -1);
        ua_variant_set_scalar(&v, &qn, UA_BT_QUALIFIEDNAME);
        ck_assert_int_eq(bk_feedline_print_value(&v, small, sizeof(small)),
                         -1);
    }
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Feed format");
    TCase   *tc;
    SRunner *sr;
    int      failed;

    tc = tcase_create("Lines");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_nodeids);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_other_types);
    tcase_add_test(tc, test_arrays);
    tcase_add_test(tc, test_options);
    suite_add_tcase(s, tc);
    tc = tcase_create("Events");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_event_lines);
    tcase_add_test(tc, test_event_refusals);
    suite_add_tcase(s, tc);
    tc = tcase_create("Printing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_print_round_trip);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
