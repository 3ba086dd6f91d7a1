/*
 * tests/unit/proto/check_vectors.c: our codec against byte-exact encodings
 * made by node-opcua, an independent implementation
 * (tests/vectors/vectors_gen.h, written by tests/vectors/gen_vectors.js).
 *
 * For every vector the same value is built here by hand from the C structs
 * (the comment above each vector in vectors_gen.h says what it is), then:
 *   - ua_encode() must write exactly the vector's bytes, and
 *     ua_encoded_size() must agree;
 *   - ua_decode() of the vector into a poisoned, fresh value must consume
 *     every byte and give a value ua_equal() to the hand-built one;
 *   - encoding that decoded value must give the vector's bytes again.
 * A mismatch prints both encodings in hex with the first differing offset.
 *
 * vec_cases[] lists every check, grouped into one tcase per type or message;
 * the "Coverage" tcase fails when a vector has no check or a check no vector.
 *
 * Timestamps are written as 100 ns tick counts since 1601-01-01 UTC; node-opcua
 * works in milliseconds, so every one of them is a whole millisecond.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "tests/vectors/vectors_gen.h"

#define VEC_ARENA_SIZE (64u * 1024)     /* a stack buffer per check */
#define VEC_OUT_SIZE   4096             /* the largest vector is < 1 KiB */
#define VEC_DST_SIZE   1024             /* >= sizeof any top-level value */

struct vec_case {
    const char *tcase;      /* Check tcase: one per type or message */
    const char *name;       /* vec_<name> in vectors_gen.h */
    uint16_t    type;       /* index into ua_types[] */
    const void *value;      /* the same value, built by hand */
};

static const struct vec_entry *vec_find(const char *name);
static void vec_hex(const char *label, const uint8_t *p, size_t n);
static void vec_check(const struct vec_case *c);
static Suite *vec_suite(void);

/* ------------------------------------------------------------------ */
/* Building blocks                                                     */
/* ------------------------------------------------------------------ */

/* A String/ByteString from a literal; embedded NULs count. */
#define S(lit)    { (int32_t)(sizeof(lit) - 1), (uint8_t *)(lit) }
#define SNULL     { -1, NULL }
/* A ByteString over a whole array. */
#define BYTES(a)  { (int32_t)sizeof(a), (a) }

#define NUM(ns_, n_) \
    { .ns = (ns_), .idtype = UA_IDTYPE_NUMERIC, .id.num = (n_) }
#define STR(ns_, lit) \
    { .ns = (ns_), .idtype = UA_IDTYPE_STRING, .id.str = S(lit) }
#define OPQ(ns_, arr) \
    { .ns = (ns_), .idtype = UA_IDTYPE_OPAQUE, .id.str = BYTES(arr) }
#define GUIDID(ns_, g) \
    { .ns = (ns_), .idtype = UA_IDTYPE_GUID, .id.guid = g }

#define EXP(node_)    { .node = node_, .ns_uri = SNULL, .server_index = 0 }

#define LT(loc, txt)  { .mask = UA_LT_LOCALE | UA_LT_TEXT, .locale = S(loc), \
                        .text = S(txt) }
#define LTTEXT(txt)   { .mask = UA_LT_TEXT, .locale = SNULL, .text = S(txt) }

#define EO_NONE       { .type_id = NUM(0, 0), .encoding = UA_EO_NONE, \
                        .type = NULL, .obj = NULL, .body = SNULL }
#define EO(encid, ti, p) \
    { .type_id = NUM(0, encid), .encoding = UA_EO_DECODED, \
      .type = &ua_types[ti], .obj = (p), .body = SNULL }

/* Variadic: the value may be a compound literal with commas in it. */
#define VSCALAR(bt, ...) { .type = (bt), .is_array = 0, .n = 0, .ndims = -1, \
                         .dims = NULL, .data = (__VA_ARGS__) }
#define VARRAY(bt, p, cnt) { .type = (bt), .is_array = 1, .n = (cnt), \
                         .ndims = -1, .dims = NULL, .data = (p) }

#define GUID_A       { 0x72962B91, 0xFA75, 0x4AE6, \
                       { 0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF, 0x63 } }
#define GUID_B       { 0x0D4455B2, 0x8D2F, 0x47EA, \
                       { 0xA8, 0x4A, 0x9E, 0xDF, 0x9D, 0xCE, 0x5B, 0x35 } }
#define GUID_SESSION { 0xA1B2C3D4, 0xE5F6, 0x4789, \
                       { 0x9A, 0xBC, 0xDE, 0xF0, 0x12, 0x34, 0x56, 0x78 } }

/* The generator's timestamps as 100 ns ticks since 1601-01-01T00:00:00Z. */
#define T_REQ  INT64_C(133549796967890000)  /* 2024-03-15T12:34:56.789Z */
#define T_RESP INT64_C(133549796968120000)  /* 2024-03-15T12:34:56.812Z */
#define T_SRC  INT64_C(133549796950000000)  /* 2024-03-15T12:34:55.000Z */
#define T_SRV  INT64_C(133549796965000000)  /* 2024-03-15T12:34:56.500Z */
#define T_OLD  INT64_C(125911583999990000)  /* 1999-12-31T23:59:59.999Z */

/* "Gr\u00fc\u00dfe" in UTF-8 (the split keeps 'e' out of the \x escape). */
#define GRUESSE "Gr\xc3\xbc\xc3\x9f" "e"

/* ------------------------------------------------------------------ */
/* Built-in types                                                      */
/* ------------------------------------------------------------------ */

static const bool     v_boolean_true = true;
static const bool     v_boolean_false = false;
static const int8_t   v_sbyte = -100;
static const uint8_t  v_byte = 200;
static const int16_t  v_int16 = -12345;
static const uint16_t v_uint16 = 54321;
static const int32_t  v_int32 = -123456789;
static const uint32_t v_uint32 = 0xDEADBEEFu;
static const int64_t  v_int64 = INT64_C(-1234567890123456789);
static const uint64_t v_uint64 = UINT64_C(0xFEDCBA9876543210);
static const float    v_float = 3.14159274f;        /* 0x40490FDB */
static const float    v_float_negative = -1234.5f;
static const double   v_double = 2.718281828459045;
static const double   v_double_negative = -1.0e-300;

static const struct ua_string v_string =
    S("Hello, OPC UA \xe2\x9c\x93 " GRUESSE);
static const struct ua_string v_string_empty = S("");
static const struct ua_string v_string_null = SNULL;

static const ua_datetime v_datetime = T_REQ;
static const ua_datetime v_datetime_y2k = T_OLD;
static const ua_datetime v_datetime_min = 0;

static const struct ua_guid v_guid = GUID_A;

static const struct ua_string v_bytestring = S("\x00\x01\x02\x7f\x80\xfe\xff");
static const struct ua_string v_bytestring_empty = S("");
static const struct ua_string v_bytestring_null = SNULL;

static const struct ua_string v_xmlelement = S("<Temp unit=\"C\">21.5</Temp>");

static uint8_t opaque_id[] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };

static const struct ua_nodeid v_nodeid_two_byte =
    NUM(0, UA_NS0ID_OBJECTSFOLDER);
static const struct ua_nodeid v_nodeid_two_byte_max = NUM(0, 255);
static const struct ua_nodeid v_nodeid_four_byte = NUM(5, 1025);
static const struct ua_nodeid v_nodeid_four_byte_min = NUM(0, 256);
static const struct ua_nodeid v_nodeid_four_byte_max = NUM(255, 65535);
static const struct ua_nodeid v_nodeid_numeric_ns = NUM(256, 5);
static const struct ua_nodeid v_nodeid_numeric_id = NUM(1, 65536);
static const struct ua_nodeid v_nodeid_numeric_big = NUM(300, 4000000000u);
static const struct ua_nodeid v_nodeid_string = STR(2, "Boiler.Temperature");
static const struct ua_nodeid v_nodeid_guid = GUIDID(3, GUID_B);
static const struct ua_nodeid v_nodeid_opaque = OPQ(4, opaque_id);

static const struct ua_expandednodeid v_expnodeid_plain =
    EXP(NUM(0, UA_NS0ID_FOLDERTYPE));
static const struct ua_expandednodeid v_expnodeid_uri = {
    .node = STR(0, "Pump.Speed"),
    .ns_uri = S("urn:example:pumps"),
    .server_index = 0,
};
static const struct ua_expandednodeid v_expnodeid_server = {
    .node = NUM(2, 100000),
    .ns_uri = SNULL,
    .server_index = 3,
};
static const struct ua_expandednodeid v_expnodeid_uri_server = {
    .node = NUM(0, 70000),
    .ns_uri = S("urn:example:remote"),
    .server_index = 1,
};

static const ua_status v_statuscode_bad = UA_BAD_NODE_ID_UNKNOWN;
static const ua_status v_statuscode_uncertain = UA_UNCERTAIN_LAST_USABLE_VALUE;
static const ua_status v_statuscode_good = UA_GOOD;

static const struct ua_qualifiedname v_qualifiedname = { 2, S("Temperature") };
static const struct ua_qualifiedname v_qualifiedname_null = { 0, SNULL };

static const struct ua_localizedtext v_localizedtext = LT("de-DE", GRUESSE);
static const struct ua_localizedtext v_localizedtext_text = LTTEXT("Hello");
static const struct ua_localizedtext v_localizedtext_locale = {
    .mask = UA_LT_LOCALE, .locale = S("en"), .text = SNULL,
};
static const struct ua_localizedtext v_localizedtext_empty = {
    .mask = 0, .locale = SNULL, .text = SNULL,
};

/* ExtensionObject */

static struct ua_read_value_id eo_rvid = {
    .node_id = STR(2, "Boiler.Temperature"),
    .attribute_id = 13,                             /* Value */
    .index_range = SNULL,
    .data_encoding = { 0, SNULL },
};
static struct ua_anonymous_identity_token eo_anon = { S("anonymous") };

static const struct ua_extobj v_extobj_none = EO_NONE;
static const struct ua_extobj v_extobj_readvalueid =
    EO(UA_NS0ID_READVALUEID_ENCODING_DEFAULTBINARY, UA_TYPE_READVALUEID,
       &eo_rvid);
static const struct ua_extobj v_extobj_anonymous =
    EO(UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY,
       UA_TYPE_ANONYMOUSIDENTITYTOKEN, &eo_anon);
/* ns=2;i=5001 is no type of ours: the body stays bytes. */
static const struct ua_extobj v_extobj_opaque = {
    .type_id = NUM(2, 5001),
    .encoding = UA_EO_BYTES,
    .type = NULL,
    .obj = NULL,
    .body = S("\x01\x02\x03\x04\x05\x06"),
};

/* DataValue */

static const struct ua_datavalue v_datavalue_empty = {
    .mask = 0,
    .value = { .type = UA_BT_NULL, .ndims = -1 },
};
static const struct ua_datavalue v_datavalue_value = {
    .mask = UA_DV_VALUE,
    .value = VSCALAR(UA_BT_DOUBLE, &(double){ 21.5 }),
};
static const struct ua_datavalue v_datavalue_full = {
    .mask = UA_DV_VALUE | UA_DV_STATUS | UA_DV_SOURCE_TS | UA_DV_SERVER_TS
            | UA_DV_SOURCE_PS | UA_DV_SERVER_PS,
    .value = VSCALAR(UA_BT_INT32, &(int32_t){ -7 }),
    .status = UA_UNCERTAIN_LAST_USABLE_VALUE,
    .source_ts = T_SRC,
    .server_ts = T_SRV,
    .source_ps = 1234,
    .server_ps = 9999,
};
static const struct ua_datavalue v_datavalue_status = {
    .mask = UA_DV_STATUS,
    .value = { .type = UA_BT_NULL, .ndims = -1 },
    .status = UA_BAD_NODE_ID_UNKNOWN,
};

/* Variant */

static struct ua_anonymous_identity_token var_anon = { S("anon") };

static const struct ua_variant v_variant_empty = {
    .type = UA_BT_NULL, .is_array = 0, .n = 0, .ndims = -1,
    .dims = NULL, .data = NULL,
};
static const struct ua_variant v_variant_boolean =
    VSCALAR(UA_BT_BOOLEAN, &(bool){ true });
static const struct ua_variant v_variant_sbyte =
    VSCALAR(UA_BT_SBYTE, &(int8_t){ -5 });
static const struct ua_variant v_variant_uint16 =
    VSCALAR(UA_BT_UINT16, &(uint16_t){ 65535 });
static const struct ua_variant v_variant_int32 =
    VSCALAR(UA_BT_INT32, &(int32_t){ -42 });
static const struct ua_variant v_variant_uint64 =
    VSCALAR(UA_BT_UINT64, &(uint64_t){ UINT64_C(0x0000000100000002) });
static const struct ua_variant v_variant_float =
    VSCALAR(UA_BT_FLOAT, &(float){ -0.25f });
static const struct ua_variant v_variant_double =
    VSCALAR(UA_BT_DOUBLE, &(double){ 21.5 });
static const struct ua_variant v_variant_string =
    VSCALAR(UA_BT_STRING, &(struct ua_string)S("Running"));
static const struct ua_variant v_variant_datetime =
    VSCALAR(UA_BT_DATETIME, &(ua_datetime){ T_SRC });
static const struct ua_variant v_variant_guid =
    VSCALAR(UA_BT_GUID, &(struct ua_guid)GUID_A);
static const struct ua_variant v_variant_bytestring =
    VSCALAR(UA_BT_BYTESTRING, &(struct ua_string)S("\xca\xfe"));
static const struct ua_variant v_variant_nodeid =
    VSCALAR(UA_BT_NODEID, &(struct ua_nodeid)STR(2, "Boiler"));
static const struct ua_variant v_variant_statuscode =
    VSCALAR(UA_BT_STATUSCODE, &(ua_status){ UA_BAD_OUT_OF_RANGE });
static const struct ua_variant v_variant_qualifiedname =
    VSCALAR(UA_BT_QUALIFIEDNAME, &(struct ua_qualifiedname){ 1, S("Speed") });
static const struct ua_variant v_variant_localizedtext =
    VSCALAR(UA_BT_LOCALIZEDTEXT,
            &(struct ua_localizedtext)LT("en-US", "Pump running"));
static const struct ua_variant v_variant_extobj =
    VSCALAR(UA_BT_EXTENSIONOBJECT,
            &(struct ua_extobj)EO(
                UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY,
                UA_TYPE_ANONYMOUSIDENTITYTOKEN, &var_anon));
static const struct ua_variant v_variant_int32_array =
    VARRAY(UA_BT_INT32,
           ((int32_t[]){ 1, -2, 3, INT32_MAX, INT32_MIN }), 5);
static const struct ua_variant v_variant_string_array =
    VARRAY(UA_BT_STRING, ((struct ua_string[]){ S("a"), SNULL, S("") }), 3);
static const struct ua_variant v_variant_byte_array =
    VARRAY(UA_BT_BYTE, ((uint8_t[]){ 0x10, 0x20, 0x30, 0x40 }), 4);
static const struct ua_variant v_variant_empty_array =
    VARRAY(UA_BT_DOUBLE, ((double[]){ 0.0 }), 0);
static const struct ua_variant v_variant_matrix = {
    .type = UA_BT_INT32,
    .is_array = 1,
    .n = 6,
    .ndims = 2,
    .dims = (int32_t[]){ 2, 3 },
    .data = (int32_t[]){ 1, 2, 3, 4, 5, 6 },
};
static const struct ua_variant v_variant_variant_array =
    VARRAY(UA_BT_VARIANT,
           ((struct ua_variant[]){
               VSCALAR(UA_BT_INT32, &(int32_t){ 7 }),
               VSCALAR(UA_BT_STRING, &(struct ua_string)S("x")),
               VSCALAR(UA_BT_DOUBLE, &(double){ 1.5 }),
           }),
           3);

/* DiagnosticInfo */

static const struct ua_diaginfo v_diaginfo_empty = { .mask = 0 };

static struct ua_diaginfo di_inner2 = {
    .mask = UA_DI_INNER_STATUS,
    .inner_status = UA_BAD_INTERNAL_ERROR,
};
static struct ua_diaginfo di_inner1 = {
    .mask = UA_DI_SYMBOLIC_ID | UA_DI_ADDITIONAL | UA_DI_INNER_DIAG,
    .symbolic_id = 5,
    .additional_info = S("inner"),
    .inner = &di_inner2,
};
/* Wire order (Part 6 §5.2.2.12): ..., Locale (4), then LocalizedText (3). */
static const struct ua_diaginfo v_diaginfo_full = {
    .mask = UA_DI_SYMBOLIC_ID | UA_DI_NAMESPACE_URI | UA_DI_LOCALIZED_TEXT
            | UA_DI_LOCALE | UA_DI_ADDITIONAL | UA_DI_INNER_STATUS
            | UA_DI_INNER_DIAG,
    .symbolic_id = 1,
    .namespace_uri = 2,
    .localized_text = 3,
    .locale = 4,
    .additional_info = S("disk full"),
    .inner_status = UA_BAD_OUT_OF_MEMORY,
    .inner = &di_inner1,
};

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/* ReadRequest */

static struct ua_read_value_id rr_nodes[] = {
    {
        .node_id = STR(2, "Boiler.Temperature"),
        .attribute_id = 13,                         /* Value */
        .index_range = SNULL,
        .data_encoding = { 0, SNULL },
    },
    {
        .node_id = NUM(0, UA_NS0ID_SERVER_SERVERSTATUS_CURRENTTIME),
        .attribute_id = 13,
        .index_range = SNULL,
        .data_encoding = { 0, SNULL },
    },
    {
        .node_id = GUIDID(3, GUID_B),
        .attribute_id = 13,
        .index_range = S("1:3"),
        .data_encoding = { 0, SNULL },
    },
    {
        .node_id = NUM(1, 70000),
        .attribute_id = 4,                          /* DisplayName */
        .index_range = SNULL,
        .data_encoding = { 0, S("Default Binary") },
    },
};

static const struct ua_read_request v_read_request = {
    .request_header = {
        .authentication_token = GUIDID(1, GUID_SESSION),
        .timestamp = T_REQ,
        .request_handle = 42,
        .return_diagnostics = 0,
        .audit_entry_id = SNULL,
        .timeout_hint = 10000,
        .additional_header = EO_NONE,
    },
    .max_age = 500.0,
    .timestamps_to_return = UA_TIMESTAMPSTORETURN_BOTH,
    .n_nodes_to_read = 4,
    .nodes_to_read = rr_nodes,
};

/* ReadResponse */

static struct ua_datavalue rresp_results[] = {
    {
        .mask = UA_DV_VALUE | UA_DV_SOURCE_TS | UA_DV_SERVER_TS,
        .value = VSCALAR(UA_BT_DOUBLE, &(double){ 21.5 }),
        .source_ts = T_SRC,
        .server_ts = T_SRV,
    },
    {
        .mask = UA_DV_VALUE | UA_DV_SERVER_TS,
        .value = VSCALAR(UA_BT_DATETIME, &(ua_datetime){ T_OLD }),
        .server_ts = T_SRV,
    },
    {
        .mask = UA_DV_STATUS,
        .value = { .type = UA_BT_NULL, .ndims = -1 },
        .status = UA_BAD_NODE_ID_UNKNOWN,
    },
    {
        .mask = UA_DV_VALUE | UA_DV_SOURCE_TS | UA_DV_SOURCE_PS,
        .value = VSCALAR(UA_BT_LOCALIZEDTEXT,
                         &(struct ua_localizedtext)LT("en", "Boiler 1")),
        .source_ts = T_SRC,
        .source_ps = 5,
    },
    {
        .mask = UA_DV_VALUE | UA_DV_STATUS,
        .value = VARRAY(UA_BT_UINT32, ((uint32_t[]){ 10, 20, 30 }), 3),
        .status = UA_UNCERTAIN_LAST_USABLE_VALUE,
    },
};

static const struct ua_read_response v_read_response = {
    .response_header = {
        .timestamp = T_RESP,
        .request_handle = 42,
        .service_result = UA_GOOD,
        .service_diagnostics = { .mask = 0 },
        .n_string_table = 0,
        .string_table = NULL,
        .additional_header = EO_NONE,
    },
    .n_results = 5,
    .results = rresp_results,
    .n_diagnostic_infos = -1,
    .diagnostic_infos = NULL,
};

/* CreateSessionRequest */

static struct ua_string cs_discovery_urls[] = {
    S("opc.tcp://client.example:4841"),
    S("https://client.example/ua"),
};

/* i */
static uint8_t cs_nonce[32] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
    0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

/* 30 82 00 3c, then (7i + 3) & 0xff for i < 60: a fake DER certificate */
static uint8_t cs_cert[64] = {
    0x30, 0x82, 0x00, 0x3c, 0x03, 0x0a, 0x11, 0x18,
    0x1f, 0x26, 0x2d, 0x34, 0x3b, 0x42, 0x49, 0x50,
    0x57, 0x5e, 0x65, 0x6c, 0x73, 0x7a, 0x81, 0x88,
    0x8f, 0x96, 0x9d, 0xa4, 0xab, 0xb2, 0xb9, 0xc0,
    0xc7, 0xce, 0xd5, 0xdc, 0xe3, 0xea, 0xf1, 0xf8,
    0xff, 0x06, 0x0d, 0x14, 0x1b, 0x22, 0x29, 0x30,
    0x37, 0x3e, 0x45, 0x4c, 0x53, 0x5a, 0x61, 0x68,
    0x6f, 0x76, 0x7d, 0x84, 0x8b, 0x92, 0x99, 0xa0,
};

static const struct ua_create_session_request v_create_session_request = {
    .request_header = {
        .authentication_token = NUM(0, 0),
        .timestamp = T_REQ,
        .request_handle = 1,
        .return_diagnostics = 0,
        .audit_entry_id = SNULL,
        .timeout_hint = 60000,
        .additional_header = EO_NONE,
    },
    .client_description = {
        .application_uri = S("urn:example:client"),
        .product_uri = S("urn:example:product"),
        .application_name = LT("en", "Example Client"),
        .application_type = UA_APPLICATIONTYPE_CLIENT,
        .gateway_server_uri = SNULL,
        .discovery_profile_uri = SNULL,
        .n_discovery_urls = 2,
        .discovery_urls = cs_discovery_urls,
    },
    .server_uri = S("urn:example:server"),
    .endpoint_url = S("opc.tcp://localhost:4840/ua"),
    .session_name = S("Session1"),
    .client_nonce = BYTES(cs_nonce),
    .client_certificate = BYTES(cs_cert),
    .requested_session_timeout = 1200000.0,
    .max_response_message_size = 4194304,
};

/* ActivateSessionRequest */

/* (17i + 0x80) & 0xff */
static uint8_t as_token[16] = {
    0x80, 0x91, 0xa2, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7,
    0x08, 0x19, 0x2a, 0x3b, 0x4c, 0x5d, 0x6e, 0x7f,
};

/* (13i + 5) & 0xff */
static uint8_t as_signature[16] = {
    0x05, 0x12, 0x1f, 0x2c, 0x39, 0x46, 0x53, 0x60,
    0x6d, 0x7a, 0x87, 0x94, 0xa1, 0xae, 0xbb, 0xc8,
};

/* (11i + 0x41) & 0xff */
static uint8_t as_password[24] = {
    0x41, 0x4c, 0x57, 0x62, 0x6d, 0x78, 0x83, 0x8e,
    0x99, 0xa4, 0xaf, 0xba, 0xc5, 0xd0, 0xdb, 0xe6,
    0xf1, 0xfc, 0x07, 0x12, 0x1d, 0x28, 0x33, 0x3e,
};

static struct ua_string as_locale_ids[] = { S("en-US"), S("de-DE") };

static struct ua_user_name_identity_token as_user = {
    .policy_id = S("username_basic256sha256"),
    .user_name = S("operator"),
    .password = BYTES(as_password),
    .encryption_algorithm = S("http://www.w3.org/2001/04/xmlenc#rsa-oaep"),
};

static const struct ua_activate_session_request v_activate_session_request = {
    .request_header = {
        .authentication_token = OPQ(0, as_token),
        .timestamp = T_REQ,
        .request_handle = 2,
        .return_diagnostics = 0,
        .audit_entry_id = S("audit-0001"),
        .timeout_hint = 30000,
        .additional_header = EO_NONE,
    },
    .client_signature = {
        .algorithm = S("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"),
        .signature = BYTES(as_signature),
    },
    .n_client_software_certificates = -1,
    .client_software_certificates = NULL,
    .n_locale_ids = 2,
    .locale_ids = as_locale_ids,
    .user_identity_token =
        EO(UA_NS0ID_USERNAMEIDENTITYTOKEN_ENCODING_DEFAULTBINARY,
           UA_TYPE_USERNAMEIDENTITYTOKEN, &as_user),
    .user_token_signature = { .algorithm = SNULL, .signature = SNULL },
};

/* BrowseResponse */

/* (31i + 0x11) & 0xff */
static uint8_t br_cp[8] = { 0x11, 0x30, 0x4f, 0x6e, 0x8d, 0xac, 0xcb, 0xea };

static struct ua_reference_description br_refs[] = {
    {
        .reference_type_id = NUM(0, UA_NS0ID_ORGANIZES),
        .is_forward = true,
        .node_id = EXP(STR(2, "Boiler")),
        .browse_name = { 2, S("Boiler") },
        .display_name = LTTEXT("Boiler"),
        .node_class = UA_NODECLASS_OBJECT,
        .type_definition = EXP(NUM(0, UA_NS0ID_BASEOBJECTTYPE)),
    },
    {
        .reference_type_id = NUM(0, UA_NS0ID_HASCOMPONENT),
        .is_forward = true,
        .node_id = EXP(NUM(2, 6001)),
        .browse_name = { 2, S("Temperature") },
        .display_name = LT("en", "Temperature"),
        .node_class = UA_NODECLASS_VARIABLE,
        .type_definition = EXP(NUM(0, UA_NS0ID_BASEDATAVARIABLETYPE)),
    },
    {
        .reference_type_id = NUM(0, UA_NS0ID_ORGANIZES),
        .is_forward = false,
        .node_id = {
            .node = NUM(0, 70000),
            .ns_uri = S("urn:example:remote"),
            .server_index = 1,
        },
        .browse_name = { 0, S("Objects") },
        .display_name = LT("en", "Objects"),
        .node_class = UA_NODECLASS_OBJECT,
        .type_definition = EXP(NUM(0, UA_NS0ID_FOLDERTYPE)),
    },
};

static struct ua_browse_result br_results[] = {
    {
        .status_code = UA_GOOD,
        .continuation_point = BYTES(br_cp),
        .n_references = 3,
        .references = br_refs,
    },
    {
        .status_code = UA_BAD_NODE_ID_UNKNOWN,
        .continuation_point = SNULL,
        .n_references = 0,
        .references = NULL,
    },
};

static struct ua_string br_string_table[] = { S("diag text") };

static const struct ua_browse_response v_browse_response = {
    .response_header = {
        .timestamp = T_RESP,
        .request_handle = 77,
        .service_result = UA_GOOD,
        .service_diagnostics = { .mask = 0 },
        .n_string_table = 1,
        .string_table = br_string_table,
        .additional_header = EO_NONE,
    },
    .n_results = 2,
    .results = br_results,
    .n_diagnostic_infos = 0,
    .diagnostic_infos = NULL,
};

/* PublishResponse */

static struct ua_monitored_item_notification pr_items[] = {
    {
        .client_handle = 1,
        .value = {
            .mask = UA_DV_VALUE | UA_DV_SOURCE_TS | UA_DV_SERVER_TS,
            .value = VSCALAR(UA_BT_DOUBLE, &(double){ 21.5 }),
            .source_ts = T_SRC,
            .server_ts = T_SRV,
        },
    },
    {
        .client_handle = 2,
        .value = {
            .mask = UA_DV_VALUE | UA_DV_SOURCE_TS,
            .value = VSCALAR(UA_BT_BOOLEAN, &(bool){ true }),
            .source_ts = T_SRC,
        },
    },
    {
        .client_handle = 3,
        .value = {
            .mask = UA_DV_VALUE | UA_DV_STATUS,
            .value = VSCALAR(UA_BT_STRING, &(struct ua_string)S("Running")),
            .status = UA_UNCERTAIN_LAST_USABLE_VALUE,
        },
    },
};

static struct ua_data_change_notification pr_dcn = {
    .n_monitored_items = 3,
    .monitored_items = pr_items,
    .n_diagnostic_infos = 0,
    .diagnostic_infos = NULL,
};

static struct ua_extobj pr_notification_data[] = {
    EO(UA_NS0ID_DATACHANGENOTIFICATION_ENCODING_DEFAULTBINARY,
       UA_TYPE_DATACHANGENOTIFICATION, &pr_dcn),
};

static uint32_t  pr_seqnums[] = { 41, 42, 43 };
static ua_status pr_results[] = { UA_GOOD, UA_BAD_SEQUENCE_NUMBER_UNKNOWN };

static const struct ua_publish_response v_publish_response = {
    .response_header = {
        .timestamp = T_RESP,
        .request_handle = 99,
        .service_result = UA_GOOD,
        .service_diagnostics = { .mask = 0 },
        .n_string_table = 0,
        .string_table = NULL,
        .additional_header = EO_NONE,
    },
    .subscription_id = 7,
    .n_available_sequence_numbers = 3,
    .available_sequence_numbers = pr_seqnums,
    .more_notifications = false,
    .notification_message = {
        .sequence_number = 43,
        .publish_time = T_RESP,
        .n_notification_data = 1,
        .notification_data = pr_notification_data,
    },
    .n_results = 2,
    .results = pr_results,
    .n_diagnostic_infos = -1,
    .diagnostic_infos = NULL,
};

/* ------------------------------------------------------------------ */
/* The checks                                                          */
/* ------------------------------------------------------------------ */

#define C(tc, name, ti) { tc, #name, ti, &v_##name }

static const struct vec_case vec_cases[] = {
    C("Boolean", boolean_true, UA_TYPE_BOOLEAN),
    C("Boolean", boolean_false, UA_TYPE_BOOLEAN),
    C("SByte", sbyte, UA_TYPE_SBYTE),
    C("Byte", byte, UA_TYPE_BYTE),
    C("Int16", int16, UA_TYPE_INT16),
    C("UInt16", uint16, UA_TYPE_UINT16),
    C("Int32", int32, UA_TYPE_INT32),
    C("UInt32", uint32, UA_TYPE_UINT32),
    C("Int64", int64, UA_TYPE_INT64),
    C("UInt64", uint64, UA_TYPE_UINT64),
    C("Float", float, UA_TYPE_FLOAT),
    C("Float", float_negative, UA_TYPE_FLOAT),
    C("Double", double, UA_TYPE_DOUBLE),
    C("Double", double_negative, UA_TYPE_DOUBLE),
    C("String", string, UA_TYPE_STRING),
    C("String", string_empty, UA_TYPE_STRING),
    C("String", string_null, UA_TYPE_STRING),
    C("DateTime", datetime, UA_TYPE_DATETIME),
    C("DateTime", datetime_y2k, UA_TYPE_DATETIME),
    C("DateTime", datetime_min, UA_TYPE_DATETIME),
    C("Guid", guid, UA_TYPE_GUID),
    C("ByteString", bytestring, UA_TYPE_BYTESTRING),
    C("ByteString", bytestring_empty, UA_TYPE_BYTESTRING),
    C("ByteString", bytestring_null, UA_TYPE_BYTESTRING),
    C("XmlElement", xmlelement, UA_TYPE_XMLELEMENT),
    C("NodeId", nodeid_two_byte, UA_TYPE_NODEID),
    C("NodeId", nodeid_two_byte_max, UA_TYPE_NODEID),
    C("NodeId", nodeid_four_byte, UA_TYPE_NODEID),
    C("NodeId", nodeid_four_byte_min, UA_TYPE_NODEID),
    C("NodeId", nodeid_four_byte_max, UA_TYPE_NODEID),
    C("NodeId", nodeid_numeric_ns, UA_TYPE_NODEID),
    C("NodeId", nodeid_numeric_id, UA_TYPE_NODEID),
    C("NodeId", nodeid_numeric_big, UA_TYPE_NODEID),
    C("NodeId", nodeid_string, UA_TYPE_NODEID),
    C("NodeId", nodeid_guid, UA_TYPE_NODEID),
    C("NodeId", nodeid_opaque, UA_TYPE_NODEID),
    C("ExpandedNodeId", expnodeid_plain, UA_TYPE_EXPANDEDNODEID),
    C("ExpandedNodeId", expnodeid_uri, UA_TYPE_EXPANDEDNODEID),
    C("ExpandedNodeId", expnodeid_server, UA_TYPE_EXPANDEDNODEID),
    C("ExpandedNodeId", expnodeid_uri_server, UA_TYPE_EXPANDEDNODEID),
    C("StatusCode", statuscode_bad, UA_TYPE_STATUSCODE),
    C("StatusCode", statuscode_uncertain, UA_TYPE_STATUSCODE),
    C("StatusCode", statuscode_good, UA_TYPE_STATUSCODE),
    C("QualifiedName", qualifiedname, UA_TYPE_QUALIFIEDNAME),
    C("QualifiedName", qualifiedname_null, UA_TYPE_QUALIFIEDNAME),
    C("LocalizedText", localizedtext, UA_TYPE_LOCALIZEDTEXT),
    C("LocalizedText", localizedtext_text, UA_TYPE_LOCALIZEDTEXT),
    C("LocalizedText", localizedtext_locale, UA_TYPE_LOCALIZEDTEXT),
    C("LocalizedText", localizedtext_empty, UA_TYPE_LOCALIZEDTEXT),
    C("ExtensionObject", extobj_none, UA_TYPE_EXTENSIONOBJECT),
    C("ExtensionObject", extobj_readvalueid, UA_TYPE_EXTENSIONOBJECT),
    C("ExtensionObject", extobj_anonymous, UA_TYPE_EXTENSIONOBJECT),
    C("ExtensionObject", extobj_opaque, UA_TYPE_EXTENSIONOBJECT),
    C("DataValue", datavalue_empty, UA_TYPE_DATAVALUE),
    C("DataValue", datavalue_value, UA_TYPE_DATAVALUE),
    C("DataValue", datavalue_full, UA_TYPE_DATAVALUE),
    C("DataValue", datavalue_status, UA_TYPE_DATAVALUE),
    C("Variant", variant_empty, UA_TYPE_VARIANT),
    C("Variant", variant_boolean, UA_TYPE_VARIANT),
    C("Variant", variant_sbyte, UA_TYPE_VARIANT),
    C("Variant", variant_uint16, UA_TYPE_VARIANT),
    C("Variant", variant_int32, UA_TYPE_VARIANT),
    C("Variant", variant_uint64, UA_TYPE_VARIANT),
    C("Variant", variant_float, UA_TYPE_VARIANT),
    C("Variant", variant_double, UA_TYPE_VARIANT),
    C("Variant", variant_string, UA_TYPE_VARIANT),
    C("Variant", variant_datetime, UA_TYPE_VARIANT),
    C("Variant", variant_guid, UA_TYPE_VARIANT),
    C("Variant", variant_bytestring, UA_TYPE_VARIANT),
    C("Variant", variant_nodeid, UA_TYPE_VARIANT),
    C("Variant", variant_statuscode, UA_TYPE_VARIANT),
    C("Variant", variant_qualifiedname, UA_TYPE_VARIANT),
    C("Variant", variant_localizedtext, UA_TYPE_VARIANT),
    C("Variant", variant_extobj, UA_TYPE_VARIANT),
    C("Variant", variant_int32_array, UA_TYPE_VARIANT),
    C("Variant", variant_string_array, UA_TYPE_VARIANT),
    C("Variant", variant_byte_array, UA_TYPE_VARIANT),
    C("Variant", variant_empty_array, UA_TYPE_VARIANT),
    C("Variant", variant_matrix, UA_TYPE_VARIANT),
    C("Variant", variant_variant_array, UA_TYPE_VARIANT),
    C("DiagnosticInfo", diaginfo_empty, UA_TYPE_DIAGNOSTICINFO),
    C("DiagnosticInfo", diaginfo_full, UA_TYPE_DIAGNOSTICINFO),
    C("ReadRequest", read_request, UA_TYPE_READREQUEST),
    C("ReadResponse", read_response, UA_TYPE_READRESPONSE),
    C("CreateSessionRequest", create_session_request,
      UA_TYPE_CREATESESSIONREQUEST),
    C("ActivateSessionRequest", activate_session_request,
      UA_TYPE_ACTIVATESESSIONREQUEST),
    C("BrowseResponse", browse_response, UA_TYPE_BROWSERESPONSE),
    C("PublishResponse", publish_response, UA_TYPE_PUBLISHRESPONSE),
};

#define VEC_CASES (sizeof(vec_cases) / sizeof(vec_cases[0]))

static const struct vec_entry *
vec_find(const char *name)
{
    for (size_t i = 0; i < VEC_COUNT; i++)
        if (strcmp(vec_table[i].name, name) == 0)
            return &vec_table[i];
    return NULL;
}

static void
vec_hex(const char *label, const uint8_t *p, size_t n)
{
    fprintf(stderr, "  %s (%zu bytes):\n", label, n);
    for (size_t i = 0; i < n; i += 16) {
        fprintf(stderr, "    %04zx:", i);
        for (size_t j = i; j < n && j < i + 16; j++)
            fprintf(stderr, " %02x", p[j]);
        fputc('\n', stderr);
    }
}

/* Report and fail when got[glen] is not the vector's bytes. */
static void
vec_compare(const char *name, const char *what, const uint8_t *got,
            size_t glen, const struct vec_entry *ve)
{
    size_t k = 0;

    if (glen == ve->len && memcmp(got, ve->bytes, glen) == 0)
        return;
    while (k < glen && k < ve->len && got[k] == ve->bytes[k])
        k++;
    fprintf(stderr, "%s: %s differs from node-opcua at offset %zu\n", name,
            what, k);
    vec_hex("ours", got, glen);
    vec_hex("node-opcua", ve->bytes, ve->len);
    ck_abort_msg("%s: %s: %zu bytes, node-opcua %zu; first difference at "
                 "offset %zu", name, what, glen, ve->len, k);
}

static void
vec_check(const struct vec_case *c)
{
    const struct ua_type   *t = &ua_types[c->type];
    const struct vec_entry *ve = vec_find(c->name);
    uint8_t                 out[VEC_OUT_SIZE];
    _Alignas(16) uint8_t    dst[VEC_DST_SIZE];
    _Alignas(16) uint8_t    abuf[VEC_ARENA_SIZE];
    struct ua_arena         a;
    size_t                  len = 0, used = 0;
    ua_status               s;

    ck_assert_msg(ve != NULL, "%s: no vector vec_%s", c->name, c->name);
    ck_assert_msg(t->size <= sizeof(dst), "%s: %s is %u bytes", c->name,
                  t->name, (unsigned)t->size);

    /* Encode the hand-built value. */
    s = ua_encode(c->value, t, out, sizeof(out), &len);
    ck_assert_msg(s == UA_GOOD, "%s: ua_encode: 0x%08x", c->name,
                  (unsigned)s);
    vec_compare(c->name, "ua_encode", out, len, ve);
    ck_assert_msg(ua_encoded_size(c->value, t) == ve->len,
                  "%s: ua_encoded_size %zu, vector %zu", c->name,
                  ua_encoded_size(c->value, t), ve->len);

    /* Decode the vector into a fresh (poisoned) value. */
    ua_arena_init(&a, abuf, sizeof(abuf));
    memset(dst, 0xA5, sizeof(dst));
    s = ua_decode(ve->bytes, ve->len, &used, dst, t, &a, NULL);
    ck_assert_msg(s == UA_GOOD, "%s: ua_decode: 0x%08x", c->name,
                  (unsigned)s);
    ck_assert_msg(used == ve->len, "%s: ua_decode used %zu of %zu bytes",
                  c->name, used, ve->len);
    ck_assert_msg(ua_equal(c->value, dst, t),
                  "%s: decoded value differs from the hand-built one",
                  c->name);

    /* The decoded value encodes to the vector again. */
    len = 0;
    s = ua_encode(dst, t, out, sizeof(out), &len);
    ck_assert_msg(s == UA_GOOD, "%s: re-encode: 0x%08x", c->name,
                  (unsigned)s);
    vec_compare(c->name, "re-encode of the decoded value", out, len, ve);
}

START_TEST(test_vector)
{
    vec_check(&vec_cases[_i]);
}
END_TEST

/* Every vector has exactly one check and every check a vector. */
START_TEST(test_coverage)
{
    for (size_t i = 0; i < VEC_COUNT; i++) {
        size_t n = 0;

        for (size_t j = 0; j < VEC_CASES; j++)
            if (strcmp(vec_cases[j].name, vec_table[i].name) == 0)
                n++;
        ck_assert_msg(n == 1, "vector %s is checked %zu times",
                      vec_table[i].name, n);
    }
    for (size_t j = 0; j < VEC_CASES; j++)
        ck_assert_msg(vec_find(vec_cases[j].name) != NULL,
                      "check %s has no vector", vec_cases[j].name);
    ck_assert_uint_eq(VEC_CASES, VEC_COUNT);
}
END_TEST

static Suite *
vec_suite(void)
{
    Suite *s = suite_create("Byte-exact vectors against node-opcua");
    TCase *tc;
    size_t i = 0;

    /* One tcase per run of cases with the same tcase name. */
    while (i < VEC_CASES) {
        size_t j = i + 1;

        while (j < VEC_CASES && strcmp(vec_cases[j].tcase,
                                       vec_cases[i].tcase) == 0)
            j++;
        tc = tcase_create(vec_cases[i].tcase);
        tcase_add_loop_test(tc, test_vector, (int)i, (int)j);
        suite_add_tcase(s, tc);
        i = j;
    }

    tc = tcase_create("Coverage");
    tcase_add_test(tc, test_coverage);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(vec_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
