#!/usr/bin/env node
/*
 * tests/vectors/gen_vectors.js: byte-exact OPC UA binary encodings (Part 6
 * §5.2) made by an independent implementation, node-opcua, written to
 * tests/vectors/vectors_gen.h for tests/unit/proto/check_vectors.c.
 *
 * Every value is fixed (no clock, no random): the same node-opcua release
 * always writes the same header.  Each value is built with node-opcua's own
 * classes and encoded with node-opcua's own encoder (for messages the body
 * only, exactly what `obj.encode(stream)` writes, without the NodeId type
 * prefix).  Each vector is then decoded again with node-opcua and re-encoded;
 * the generator stops if that does not give the same bytes or leaves bytes
 * over, so a vector is also something node-opcua itself accepts.
 *
 * The C test builds the same values by hand; the comment above each vector
 * says what the value is.  When you add a vector here, add its check there
 * (the C test fails for any vector in the table it does not check).
 *
 * Where node-opcua's encoder normalizes a value in a way Part 6 does not
 * require, the values below avoid the case (so both implementations must
 * agree byte for byte); those places are marked NOTE(node-opcua).
 *
 * Usage: cd tests/vectors && npm ci && npm run gen
 */
"use strict";

const fs = require("fs");
const path = require("path");

const { BinaryStream, BinaryStreamSizeCalculator } = require("node-opcua-binary-stream");
const bt = require("node-opcua-basic-types");
const { NodeId, NodeIdType, ExpandedNodeId } = require("node-opcua-nodeid");
const { StatusCodes } = require("node-opcua-status-code");
const {
    LocalizedText,
    QualifiedName,
    DiagnosticInfo,
    encodeLocalizedText,
    decodeLocalizedText,
    encodeQualifiedName,
    decodeQualifiedName,
    encodeDiagnosticInfo,
    decodeDiagnosticInfo,
    NodeClass
} = require("node-opcua-data-model");
const { Variant, DataType, VariantArrayType, encodeVariant, decodeVariant } = require("node-opcua-variant");
const { DataValue, encodeDataValue, decodeDataValue, TimestampsToReturn } = require("node-opcua-data-value");
const { OpaqueStructure, encodeExtensionObject, decodeExtensionObject } = require("node-opcua-extension-object");
const { findBuiltInType } = require("node-opcua-factory");
const types = require("node-opcua-types");

const NODE_OPCUA_VERSION = require("node-opcua-types/package.json").version;
const OUT = path.join(__dirname, "vectors_gen.h");

/* ------------------------------------------------------------------ */
/* Fixed inputs                                                        */
/* ------------------------------------------------------------------ */

/*
 * DateTime: node-opcua holds a DateTime as a JS Date (millisecond precision)
 * and converts with ticks = (ms since 1970 + 11644473600000) * 10000, so every
 * timestamp here is a whole millisecond and its 100 ns tick count is exact.
 * The tick values are printed in the vector comments; the C test writes them
 * as integer literals.
 */
const T_REQ = new Date(Date.UTC(2024, 2, 15, 12, 34, 56, 789)); /* 2024-03-15T12:34:56.789Z */
const T_RESP = new Date(Date.UTC(2024, 2, 15, 12, 34, 56, 812)); /* 2024-03-15T12:34:56.812Z */
const T_SRC = new Date(Date.UTC(2024, 2, 15, 12, 34, 55, 0)); /* 2024-03-15T12:34:55.000Z */
const T_SRV = new Date(Date.UTC(2024, 2, 15, 12, 34, 56, 500)); /* 2024-03-15T12:34:56.500Z */
const T_OLD = new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999)); /* 1999-12-31T23:59:59.999Z */

function ticks(date) {
    return (BigInt(date.getTime()) + 11644473600000n) * 10000n;
}

const GUID_A = "72962B91-FA75-4AE6-8D28-B404DC7DAF63";
const GUID_B = "0D4455B2-8D2F-47EA-A84A-9EDF9DCE5B35";
const GUID_SESSION = "A1B2C3D4-E5F6-4789-9ABC-DEF012345678";

/* i-th byte = (i * mul + add) & 0xff: fixed "random-looking" nonces and keys */
function pattern(n, mul, add) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
        b[i] = (i * mul + add) & 0xff;
    }
    return b;
}

function lt(locale, text) {
    const l = new LocalizedText(null);
    l.locale = locale;
    l.text = text;
    return l;
}

function qn(ns, name) {
    const q = new QualifiedName(null);
    q.namespaceIndex = ns;
    q.name = name;
    return q;
}

function numeric(ns, id) {
    return new NodeId(NodeIdType.NUMERIC, id, ns);
}

function sc(name) {
    const s = StatusCodes[name];
    if (!s) {
        throw new Error(`unknown status code ${name}`);
    }
    return s;
}

function variant(dataType, value, arrayType, dimensions) {
    return new Variant({
        dataType,
        value,
        arrayType: arrayType === undefined ? VariantArrayType.Scalar : arrayType,
        dimensions: dimensions || null
    });
}

function i64(big) {
    /* node-opcua holds a 64-bit integer as [high32, low32] */
    const u = BigInt.asUintN(64, big);
    return [Number(u >> 32n), Number(u & 0xffffffffn)];
}

/* ------------------------------------------------------------------ */
/* Vector collection                                                   */
/* ------------------------------------------------------------------ */

const vectors = [];

function encodeWith(encode) {
    const calc = new BinaryStreamSizeCalculator();
    encode(calc);
    const stream = new BinaryStream(calc.length);
    encode(stream);
    if (stream.length !== calc.length) {
        throw new Error("size calculator and encoder disagree");
    }
    return stream.buffer;
}

/*
 * name:   C identifier suffix (vec_<name>)
 * desc:   the value, for the reader of the header and of the C test
 * encode: (stream) => void, node-opcua's encoder for the value
 * decode: (stream) => value, node-opcua's decoder (round-trip check)
 * reenc:  (value, stream) => void, encoder for the decoded value
 */
function add(name, desc, encode, decode, reenc) {
    if (!/^[a-z0-9_]+$/.test(name) || vectors.some((v) => v.name === name)) {
        throw new Error(`bad or duplicate vector name ${name}`);
    }
    const bytes = encodeWith(encode);
    const s = new BinaryStream(bytes);
    const back = decode(s);
    if (s.length !== bytes.length) {
        throw new Error(`${name}: node-opcua decoded ${s.length} of ${bytes.length} bytes`);
    }
    const again = encodeWith((st) => reenc(back, st));
    if (!again.equals(bytes)) {
        throw new Error(`${name}: node-opcua round trip differs:\n${bytes.toString("hex")}\n${again.toString("hex")}`);
    }
    vectors.push({ name, desc, bytes });
}

function addBuiltin(name, desc, typeName, value) {
    const t = findBuiltInType(typeName);
    add(name, desc, (s) => t.encode(value, s), (s) => t.decode(s), (v, s) => t.encode(v, s));
}

function addObject(name, desc, obj) {
    const Ctor = obj.constructor;
    add(
        name,
        desc,
        (s) => obj.encode(s),
        (s) => {
            const o = new Ctor(null);
            o.decode(s);
            return o;
        },
        (o, s) => o.encode(s)
    );
}

/* ------------------------------------------------------------------ */
/* Built-in types (Part 6 §5.2.2)                                      */
/* ------------------------------------------------------------------ */

addBuiltin("boolean_true", "Boolean true", "Boolean", true);
addBuiltin("boolean_false", "Boolean false", "Boolean", false);
addBuiltin("sbyte", "SByte -100", "SByte", -100);
addBuiltin("byte", "Byte 200", "Byte", 200);
addBuiltin("int16", "Int16 -12345", "Int16", -12345);
addBuiltin("uint16", "UInt16 54321", "UInt16", 54321);
addBuiltin("int32", "Int32 -123456789", "Int32", -123456789);
addBuiltin("uint32", "UInt32 0xDEADBEEF", "UInt32", 0xdeadbeef);
addBuiltin("int64", "Int64 -1234567890123456789", "Int64", i64(-1234567890123456789n));
addBuiltin("uint64", "UInt64 0xFEDCBA9876543210", "UInt64", i64(0xfedcba9876543210n));
addBuiltin("float", "Float 3.14159274 (float nearest to pi)", "Float", Math.fround(Math.PI));
addBuiltin("float_negative", "Float -1234.5", "Float", -1234.5);
addBuiltin("double", "Double 2.718281828459045", "Double", Math.E);
addBuiltin("double_negative", "Double -1.0e-300", "Double", -1.0e-300);
addBuiltin(
    "string",
    'String "Hello, OPC UA \\u2713 Gr\\u00fc\\u00dfe" (UTF-8, multi-byte)',
    "String",
    "Hello, OPC UA \u2713 Gr\u00fc\u00dfe"
);
addBuiltin("string_empty", 'String "" (empty, length 0)', "String", "");
addBuiltin("string_null", "String null (length -1)", "String", null);
addBuiltin("datetime", `DateTime ${T_REQ.toISOString()} = ${ticks(T_REQ)} ticks`, "DateTime", T_REQ);
addBuiltin("datetime_y2k", `DateTime ${T_OLD.toISOString()} = ${ticks(T_OLD)} ticks`, "DateTime", T_OLD);
/* 1601-01-01T00:00:00Z is tick 0: Part 6 §5.2.2.5 "null" DateTime */
addBuiltin("datetime_min", "DateTime 1601-01-01T00:00:00Z = 0 ticks", "DateTime", bt.getMinOPCUADate());
addBuiltin("guid", `Guid ${GUID_A}`, "Guid", GUID_A);
addBuiltin("bytestring", "ByteString 00 01 02 7f 80 fe ff", "ByteString", Buffer.from([0, 1, 2, 0x7f, 0x80, 0xfe, 0xff]));
addBuiltin("bytestring_empty", "ByteString empty (length 0)", "ByteString", Buffer.alloc(0));
addBuiltin("bytestring_null", "ByteString null (length -1)", "ByteString", null);
addBuiltin(
    "xmlelement",
    'XmlElement "<Temp unit=\\"C\\">21.5</Temp>"',
    "XmlElement",
    '<Temp unit="C">21.5</Temp>'
);

/* NodeId: node-opcua picks the compact forms exactly as Part 6 §5.2.2.9 allows */
addBuiltin("nodeid_two_byte", "NodeId i=85 (two-byte form)", "NodeId", numeric(0, 85));
addBuiltin("nodeid_two_byte_max", "NodeId i=255 (two-byte form, largest id)", "NodeId", numeric(0, 255));
addBuiltin("nodeid_four_byte", "NodeId ns=5;i=1025 (four-byte form)", "NodeId", numeric(5, 1025));
addBuiltin("nodeid_four_byte_min", "NodeId i=256 (four-byte form: id > 255 in ns 0)", "NodeId", numeric(0, 256));
addBuiltin("nodeid_four_byte_max", "NodeId ns=255;i=65535 (four-byte form, largest ns and id)", "NodeId", numeric(255, 65535));
addBuiltin("nodeid_numeric_ns", "NodeId ns=256;i=5 (numeric form: ns > 255)", "NodeId", numeric(256, 5));
addBuiltin("nodeid_numeric_id", "NodeId ns=1;i=65536 (numeric form: id > 65535)", "NodeId", numeric(1, 65536));
addBuiltin("nodeid_numeric_big", "NodeId ns=300;i=4000000000 (numeric form)", "NodeId", numeric(300, 4000000000));
addBuiltin(
    "nodeid_string",
    'NodeId ns=2;s="Boiler.Temperature"',
    "NodeId",
    new NodeId(NodeIdType.STRING, "Boiler.Temperature", 2)
);
addBuiltin("nodeid_guid", `NodeId ns=3;g=${GUID_B}`, "NodeId", new NodeId(NodeIdType.GUID, GUID_B, 3));
addBuiltin(
    "nodeid_opaque",
    "NodeId ns=4;b=de ad be ef 01 (ByteString form)",
    "NodeId",
    new NodeId(NodeIdType.BYTESTRING, Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x01]), 4)
);

/*
 * ExpandedNodeId.  NOTE(node-opcua): when NamespaceUri or ServerIndex is
 * present node-opcua never uses the two- or four-byte form (it writes 0x02
 * numeric even for i=5); Part 6 §5.2.2.10 would allow the compact forms with
 * the flags.  The values below use identifiers that need the full form anyway.
 */
addBuiltin("expnodeid_plain", "ExpandedNodeId i=61 (no flags, two-byte form)", "ExpandedNodeId", new ExpandedNodeId(NodeIdType.NUMERIC, 61, 0));
addBuiltin(
    "expnodeid_uri",
    'ExpandedNodeId nsu=urn:example:pumps;s="Pump.Speed" (NamespaceUri flag, NodeId ns 0)',
    "ExpandedNodeId",
    new ExpandedNodeId(NodeIdType.STRING, "Pump.Speed", 0, "urn:example:pumps", 0)
);
addBuiltin(
    "expnodeid_server",
    "ExpandedNodeId svr=3;ns=2;i=100000 (ServerIndex flag)",
    "ExpandedNodeId",
    new ExpandedNodeId(NodeIdType.NUMERIC, 100000, 2, null, 3)
);
addBuiltin(
    "expnodeid_uri_server",
    "ExpandedNodeId svr=1;nsu=urn:example:remote;i=70000 (both flags)",
    "ExpandedNodeId",
    new ExpandedNodeId(NodeIdType.NUMERIC, 70000, 0, "urn:example:remote", 1)
);

addBuiltin("statuscode_bad", "StatusCode BadNodeIdUnknown 0x80340000", "StatusCode", sc("BadNodeIdUnknown"));
addBuiltin("statuscode_uncertain", "StatusCode UncertainLastUsableValue 0x40900000", "StatusCode", sc("UncertainLastUsableValue"));
addBuiltin("statuscode_good", "StatusCode Good 0x00000000", "StatusCode", sc("Good"));

add(
    "qualifiedname",
    'QualifiedName 2:"Temperature"',
    (s) => encodeQualifiedName(qn(2, "Temperature"), s),
    (s) => decodeQualifiedName(s),
    (v, s) => encodeQualifiedName(v, s)
);
add(
    "qualifiedname_null",
    "QualifiedName 0:null (the default DataEncoding)",
    (s) => encodeQualifiedName(qn(0, null), s),
    (s) => decodeQualifiedName(s),
    (v, s) => encodeQualifiedName(v, s)
);

/*
 * LocalizedText.  NOTE(node-opcua): the mask bit of a field is set only when
 * the string is non-empty, so "" is sent like null (absent).  Part 6 §5.2.2.14
 * allows an empty string with the bit set; the values below have no "" fields.
 */
for (const [name, desc, value] of [
    ["localizedtext", 'LocalizedText locale "de-DE", text "Gr\\u00fc\\u00dfe" (mask 0x03)', lt("de-DE", "Gr\u00fc\u00dfe")],
    ["localizedtext_text", 'LocalizedText text "Hello" only (mask 0x02)', lt(null, "Hello")],
    ["localizedtext_locale", 'LocalizedText locale "en" only (mask 0x01)', lt("en", null)],
    ["localizedtext_empty", "LocalizedText empty (mask 0x00)", lt(null, null)]
]) {
    add(name, desc, (s) => encodeLocalizedText(value, s), (s) => decodeLocalizedText(s), (v, s) => encodeLocalizedText(v, s));
}

/* ExtensionObject (Part 6 §5.2.2.15) */
function addExtObj(name, desc, obj) {
    add(name, desc, (s) => encodeExtensionObject(obj, s), (s) => decodeExtensionObject(s), (v, s) => encodeExtensionObject(v, s));
}

const rvidBody = new types.ReadValueId({
    nodeId: new NodeId(NodeIdType.STRING, "Boiler.Temperature", 2),
    attributeId: 13
});
rvidBody.dataEncoding = qn(0, null);
addExtObj("extobj_none", "ExtensionObject without body: TypeId i=0, Encoding 0x00", null);
addExtObj(
    "extobj_readvalueid",
    'ExtensionObject ReadValueId_Encoding_DefaultBinary (i=628) { NodeId ns=2;s="Boiler.Temperature", AttributeId 13, IndexRange null, DataEncoding 0:null }',
    rvidBody
);
addExtObj(
    "extobj_anonymous",
    'ExtensionObject AnonymousIdentityToken_Encoding_DefaultBinary (i=321) { PolicyId "anonymous" }',
    new types.AnonymousIdentityToken({ policyId: "anonymous" })
);
addExtObj(
    "extobj_opaque",
    "ExtensionObject ns=2;i=5001 with an opaque ByteString body 01 02 03 04 05 06 (type unknown to the decoder)",
    new OpaqueStructure(numeric(2, 5001), Buffer.from([1, 2, 3, 4, 5, 6]))
);

/* DataValue (Part 6 §5.2.2.17) */
function addDataValue(name, desc, dv) {
    add(name, desc, (s) => encodeDataValue(dv, s), (s) => decodeDataValue(s), (v, s) => encodeDataValue(v, s));
}

addDataValue("datavalue_empty", "DataValue with no fields (mask 0x00)", new DataValue({}));
addDataValue(
    "datavalue_value",
    "DataValue value only: Variant Double 21.5 (mask 0x01)",
    new DataValue({ value: variant(DataType.Double, 21.5) })
);
/*
 * NOTE(node-opcua): its sourcePicoseconds/serverPicoseconds are picoseconds
 * beyond the millisecond; whole 100 ns are added to the timestamp and the rest
 * is sent in units of 10 ps.  Values below 100000 map 1:1 to the wire field
 * (value / 10), which is what these use.
 */
addDataValue(
    "datavalue_full",
    `DataValue Variant Int32 -7, status UncertainLastUsableValue 0x40900000, source ${T_SRC.toISOString()} (${ticks(T_SRC)}) ` +
        `+ 1234 x 10 ps, server ${T_SRV.toISOString()} (${ticks(T_SRV)}) + 9999 x 10 ps (mask 0x3f)`,
    new DataValue({
        value: variant(DataType.Int32, -7),
        statusCode: sc("UncertainLastUsableValue"),
        sourceTimestamp: T_SRC,
        sourcePicoseconds: 12340,
        serverTimestamp: T_SRV,
        serverPicoseconds: 99990
    })
);
addDataValue(
    "datavalue_status",
    "DataValue status BadNodeIdUnknown only (mask 0x02)",
    new DataValue({ statusCode: sc("BadNodeIdUnknown") })
);

/*
 * Variant (Part 6 §5.2.2.16).  NOTE(node-opcua): a matrix's ArrayDimensions
 * are written with its UInt32 array encoder; Part 6 says Int32[], the same
 * bytes for the positive lengths used here.
 */
function addVariant(name, desc, v) {
    add(name, desc, (s) => encodeVariant(v, s), (s) => decodeVariant(s), (x, s) => encodeVariant(x, s));
}

addVariant("variant_empty", "Variant empty (type 0, no value)", new Variant(null));
addVariant("variant_boolean", "Variant Boolean true", variant(DataType.Boolean, true));
addVariant("variant_sbyte", "Variant SByte -5", variant(DataType.SByte, -5));
addVariant("variant_uint16", "Variant UInt16 65535", variant(DataType.UInt16, 65535));
addVariant("variant_int32", "Variant Int32 -42", variant(DataType.Int32, -42));
addVariant("variant_uint64", "Variant UInt64 0x0000000100000002", variant(DataType.UInt64, i64(0x0000000100000002n)));
addVariant("variant_float", "Variant Float -0.25", variant(DataType.Float, -0.25));
addVariant("variant_double", "Variant Double 21.5", variant(DataType.Double, 21.5));
addVariant("variant_string", 'Variant String "Running"', variant(DataType.String, "Running"));
addVariant("variant_datetime", `Variant DateTime ${T_SRC.toISOString()} (${ticks(T_SRC)})`, variant(DataType.DateTime, T_SRC));
addVariant("variant_guid", `Variant Guid ${GUID_A}`, variant(DataType.Guid, GUID_A));
addVariant("variant_bytestring", "Variant ByteString ca fe", variant(DataType.ByteString, Buffer.from([0xca, 0xfe])));
addVariant("variant_nodeid", 'Variant NodeId ns=2;s="Boiler"', variant(DataType.NodeId, new NodeId(NodeIdType.STRING, "Boiler", 2)));
addVariant("variant_statuscode", "Variant StatusCode BadOutOfRange 0x803C0000", variant(DataType.StatusCode, sc("BadOutOfRange")));
addVariant("variant_qualifiedname", 'Variant QualifiedName 1:"Speed"', variant(DataType.QualifiedName, qn(1, "Speed")));
addVariant(
    "variant_localizedtext",
    'Variant LocalizedText locale "en-US", text "Pump running"',
    variant(DataType.LocalizedText, lt("en-US", "Pump running"))
);
addVariant(
    "variant_extobj",
    'Variant ExtensionObject: AnonymousIdentityToken { PolicyId "anon" } (i=321)',
    variant(DataType.ExtensionObject, new types.AnonymousIdentityToken({ policyId: "anon" }))
);
addVariant(
    "variant_int32_array",
    "Variant Int32[5] { 1, -2, 3, 2147483647, -2147483648 }",
    variant(DataType.Int32, new Int32Array([1, -2, 3, 2147483647, -2147483648]), VariantArrayType.Array)
);
addVariant(
    "variant_string_array",
    'Variant String[3] { "a", null, "" }',
    variant(DataType.String, ["a", null, ""], VariantArrayType.Array)
);
addVariant(
    "variant_byte_array",
    "Variant Byte[4] { 0x10, 0x20, 0x30, 0x40 } (an array of Byte, not a ByteString)",
    variant(DataType.Byte, Buffer.from([0x10, 0x20, 0x30, 0x40]), VariantArrayType.Array)
);
addVariant(
    "variant_empty_array",
    "Variant Double[0] (empty array, length 0)",
    variant(DataType.Double, new Float64Array(0), VariantArrayType.Array)
);
addVariant(
    "variant_matrix",
    "Variant Int32 matrix, ArrayDimensions { 2, 3 }, elements { 1, 2, 3, 4, 5, 6 }",
    variant(DataType.Int32, new Int32Array([1, 2, 3, 4, 5, 6]), VariantArrayType.Matrix, [2, 3])
);
addVariant(
    "variant_variant_array",
    'Variant Variant[3] { Int32 7, String "x", Double 1.5 }',
    variant(
        DataType.Variant,
        [variant(DataType.Int32, 7), variant(DataType.String, "x"), variant(DataType.Double, 1.5)],
        VariantArrayType.Array
    )
);

/*
 * DiagnosticInfo (Part 6 §5.2.2.12).  Field order on the wire: SymbolicId,
 * NamespaceUri, Locale, LocalizedText, AdditionalInfo, InnerStatusCode,
 * InnerDiagnosticInfo; Locale (mask 0x08) comes before LocalizedText (0x04).
 */
function addDiag(name, desc, d) {
    add(name, desc, (s) => encodeDiagnosticInfo(d, s), (s) => decodeDiagnosticInfo(s), (v, s) => encodeDiagnosticInfo(v, s));
}

addDiag("diaginfo_empty", "DiagnosticInfo with no fields (mask 0x00)", new DiagnosticInfo({}));
addDiag(
    "diaginfo_full",
    "DiagnosticInfo SymbolicId 1, NamespaceUri 2, LocalizedText 3, Locale 4, AdditionalInfo \"disk full\", " +
        "InnerStatusCode BadOutOfMemory 0x80030000, Inner { SymbolicId 5, AdditionalInfo \"inner\", " +
        "Inner { InnerStatusCode BadInternalError 0x80020000 } } (masks 0x7f, 0x51, 0x20)",
    new DiagnosticInfo({
        symbolicId: 1,
        namespaceURI: 2,
        localizedText: 3,
        locale: 4,
        additionalInfo: "disk full",
        innerStatusCode: sc("BadOutOfMemory"),
        innerDiagnosticInfo: new DiagnosticInfo({
            symbolicId: 5,
            additionalInfo: "inner",
            innerDiagnosticInfo: new DiagnosticInfo({ innerStatusCode: sc("BadInternalError") })
        })
    })
);

/* ------------------------------------------------------------------ */
/* Service messages (Part 4 §5, bodies as in Opc.Ua.Types.bsd)         */
/* ------------------------------------------------------------------ */

function requestHeader(opts) {
    const h = new types.RequestHeader({
        authenticationToken: opts.authenticationToken,
        timestamp: T_REQ,
        requestHandle: opts.requestHandle,
        returnDiagnostics: opts.returnDiagnostics || 0,
        timeoutHint: opts.timeoutHint || 0
    });
    h.auditEntryId = opts.auditEntryId === undefined ? null : opts.auditEntryId;
    h.additionalHeader = null;
    return h;
}

function responseHeader(opts) {
    const h = new types.ResponseHeader({
        timestamp: T_RESP,
        requestHandle: opts.requestHandle,
        serviceResult: opts.serviceResult || sc("Good"),
        serviceDiagnostics: new DiagnosticInfo({})
    });
    /* set after construction: the constructor turns a null array into [] */
    h.stringTable = opts.stringTable === undefined ? [] : opts.stringTable;
    h.additionalHeader = null;
    return h;
}

/*
 * NOTE(node-opcua): IndexRange is parsed into a NumericRange and printed back
 * when encoded, so only canonical ranges ("1:3", not "01:3") survive and an
 * absent range is always sent as null (never "").
 */
function readValueId(nodeId, attributeId, indexRange, dataEncoding) {
    const r = new types.ReadValueId({ nodeId, attributeId, indexRange: indexRange === null ? undefined : indexRange });
    r.dataEncoding = dataEncoding;
    return r;
}

/* ReadRequest (i=631) */
{
    const m = new types.ReadRequest({
        requestHeader: requestHeader({
            authenticationToken: new NodeId(NodeIdType.GUID, GUID_SESSION, 1),
            requestHandle: 42,
            timeoutHint: 10000
        }),
        maxAge: 500,
        timestampsToReturn: TimestampsToReturn.Both
    });
    m.nodesToRead = [
        readValueId(new NodeId(NodeIdType.STRING, "Boiler.Temperature", 2), 13, null, qn(0, null)),
        readValueId(numeric(0, 2258), 13, null, qn(0, null)),
        readValueId(new NodeId(NodeIdType.GUID, GUID_B, 3), 13, "1:3", qn(0, null)),
        readValueId(numeric(1, 70000), 4, null, qn(0, "Default Binary"))
    ];
    addObject(
        "read_request",
        "ReadRequest { RequestHeader { AuthenticationToken ns=1;g=" + GUID_SESSION + `, Timestamp ${T_REQ.toISOString()} (${ticks(T_REQ)}), ` +
            "RequestHandle 42, ReturnDiagnostics 0, AuditEntryId null, TimeoutHint 10000, AdditionalHeader none }, " +
            "MaxAge 500.0, TimestampsToReturn Both (2), NodesToRead [4] { " +
            '{ ns=2;s="Boiler.Temperature", 13, null, 0:null }, { i=2258, 13, null, 0:null }, ' +
            `{ ns=3;g=${GUID_B}, 13, "1:3", 0:null }, { ns=1;i=70000, 4 (DisplayName), null, 0:"Default Binary" } } }`,
        m
    );
}

/* ReadResponse (i=634) */
{
    const m = new types.ReadResponse({
        responseHeader: responseHeader({ requestHandle: 42 })
    });
    m.results = [
        new DataValue({
            value: variant(DataType.Double, 21.5),
            sourceTimestamp: T_SRC,
            serverTimestamp: T_SRV
        }),
        new DataValue({
            value: variant(DataType.DateTime, T_OLD),
            serverTimestamp: T_SRV
        }),
        new DataValue({ statusCode: sc("BadNodeIdUnknown") }),
        new DataValue({
            value: variant(DataType.LocalizedText, lt("en", "Boiler 1")),
            sourceTimestamp: T_SRC,
            sourcePicoseconds: 50
        }),
        new DataValue({
            value: variant(DataType.UInt32, new Uint32Array([10, 20, 30]), VariantArrayType.Array),
            statusCode: sc("UncertainLastUsableValue")
        })
    ];
    m.diagnosticInfos = null;
    addObject(
        "read_response",
        `ReadResponse { ResponseHeader { Timestamp ${T_RESP.toISOString()} (${ticks(T_RESP)}), RequestHandle 42, ServiceResult Good, ` +
            "ServiceDiagnostics {}, StringTable [0], AdditionalHeader none }, Results [5] { " +
            `{ Double 21.5, source ${ticks(T_SRC)}, server ${ticks(T_SRV)} }, ` +
            `{ DateTime ${ticks(T_OLD)}, server ${ticks(T_SRV)} }, { status BadNodeIdUnknown }, ` +
            `{ LocalizedText "en" "Boiler 1", source ${ticks(T_SRC)} + 5 x 10 ps }, ` +
            "{ UInt32[3] { 10, 20, 30 }, status UncertainLastUsableValue } }, DiagnosticInfos null (-1) }",
        m
    );
}

/* CreateSessionRequest (i=461) */
{
    const clientDescription = new types.ApplicationDescription({
        applicationUri: "urn:example:client",
        productUri: "urn:example:product",
        applicationName: lt("en", "Example Client"),
        applicationType: types.ApplicationType.Client,
        discoveryUrls: ["opc.tcp://client.example:4841", "https://client.example/ua"]
    });
    clientDescription.gatewayServerUri = null;
    clientDescription.discoveryProfileUri = null;
    const m = new types.CreateSessionRequest({
        requestHeader: requestHeader({
            authenticationToken: numeric(0, 0),
            requestHandle: 1,
            timeoutHint: 60000
        }),
        clientDescription,
        serverUri: "urn:example:server",
        endpointUrl: "opc.tcp://localhost:4840/ua",
        sessionName: "Session1",
        clientNonce: pattern(32, 1, 0),
        clientCertificate: Buffer.concat([Buffer.from([0x30, 0x82, 0x00, 0x3c]), pattern(60, 7, 3)]),
        requestedSessionTimeout: 1200000,
        maxResponseMessageSize: 4194304
    });
    addObject(
        "create_session_request",
        `CreateSessionRequest { RequestHeader { i=0, ${ticks(T_REQ)}, RequestHandle 1, 0, null, TimeoutHint 60000, none }, ` +
            'ClientDescription { "urn:example:client", "urn:example:product", "en" "Example Client", Client (1), null, null, ' +
            'DiscoveryUrls [2] { "opc.tcp://client.example:4841", "https://client.example/ua" } }, ' +
            'ServerUri "urn:example:server", EndpointUrl "opc.tcp://localhost:4840/ua", SessionName "Session1", ' +
            "ClientNonce 32 bytes i, ClientCertificate 30 82 00 3c + 60 bytes (7i+3), " +
            "RequestedSessionTimeout 1200000.0, MaxResponseMessageSize 4194304 }",
        m
    );
}

/* ActivateSessionRequest (i=467) */
{
    const clientSignature = new types.SignatureData({
        algorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        signature: pattern(16, 13, 5)
    });
    const token = new types.UserNameIdentityToken({
        policyId: "username_basic256sha256",
        userName: "operator",
        password: pattern(24, 11, 0x41),
        encryptionAlgorithm: "http://www.w3.org/2001/04/xmlenc#rsa-oaep"
    });
    const userTokenSignature = new types.SignatureData({});
    userTokenSignature.algorithm = null;
    userTokenSignature.signature = null;
    const m = new types.ActivateSessionRequest({
        requestHeader: requestHeader({
            authenticationToken: new NodeId(NodeIdType.BYTESTRING, pattern(16, 17, 0x80), 0),
            requestHandle: 2,
            timeoutHint: 30000,
            auditEntryId: "audit-0001"
        }),
        clientSignature,
        localeIds: ["en-US", "de-DE"],
        userIdentityToken: token,
        userTokenSignature
    });
    m.clientSoftwareCertificates = null;
    addObject(
        "activate_session_request",
        `ActivateSessionRequest { RequestHeader { b=16 bytes (17i+0x80), ${ticks(T_REQ)}, RequestHandle 2, 0, "audit-0001", TimeoutHint 30000, none }, ` +
            'ClientSignature { "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", 16 bytes (13i+5) }, ' +
            'ClientSoftwareCertificates null (-1), LocaleIds [2] { "en-US", "de-DE" }, ' +
            'UserIdentityToken UserNameIdentityToken (i=324) { "username_basic256sha256", "operator", 24 bytes (11i+0x41), ' +
            '"http://www.w3.org/2001/04/xmlenc#rsa-oaep" }, UserTokenSignature { null, null } }',
        m
    );
}

/* BrowseResponse (i=530) */
{
    function refDesc(o) {
        const r = new types.ReferenceDescription({
            referenceTypeId: o.referenceTypeId,
            isForward: o.isForward,
            nodeId: o.nodeId,
            browseName: o.browseName,
            nodeClass: o.nodeClass,
            typeDefinition: o.typeDefinition
        });
        r.displayName = o.displayName;
        return r;
    }
    const r1 = new types.BrowseResult({ statusCode: sc("Good") });
    r1.continuationPoint = pattern(8, 31, 0x11);
    r1.references = [
        refDesc({
            referenceTypeId: numeric(0, 35),
            isForward: true,
            nodeId: new ExpandedNodeId(NodeIdType.STRING, "Boiler", 2, null, 0),
            browseName: qn(2, "Boiler"),
            displayName: lt(null, "Boiler"),
            nodeClass: NodeClass.Object,
            typeDefinition: new ExpandedNodeId(NodeIdType.NUMERIC, 58, 0, null, 0)
        }),
        refDesc({
            referenceTypeId: numeric(0, 47),
            isForward: true,
            nodeId: new ExpandedNodeId(NodeIdType.NUMERIC, 6001, 2, null, 0),
            browseName: qn(2, "Temperature"),
            displayName: lt("en", "Temperature"),
            nodeClass: NodeClass.Variable,
            typeDefinition: new ExpandedNodeId(NodeIdType.NUMERIC, 63, 0, null, 0)
        }),
        refDesc({
            referenceTypeId: numeric(0, 35),
            isForward: false,
            nodeId: new ExpandedNodeId(NodeIdType.NUMERIC, 70000, 0, "urn:example:remote", 1),
            browseName: qn(0, "Objects"),
            displayName: lt("en", "Objects"),
            nodeClass: NodeClass.Object,
            typeDefinition: new ExpandedNodeId(NodeIdType.NUMERIC, 61, 0, null, 0)
        })
    ];
    const r2 = new types.BrowseResult({ statusCode: sc("BadNodeIdUnknown") });
    r2.continuationPoint = null;
    r2.references = [];
    const m = new types.BrowseResponse({
        responseHeader: responseHeader({ requestHandle: 77, stringTable: ["diag text"] })
    });
    m.results = [r1, r2];
    m.diagnosticInfos = [];
    addObject(
        "browse_response",
        `BrowseResponse { ResponseHeader { ${ticks(T_RESP)}, RequestHandle 77, Good, {}, StringTable [1] { "diag text" }, none }, Results [2] { ` +
            "{ Good, ContinuationPoint 8 bytes (31i+0x11), References [3] { " +
            '{ i=35, forward, ns=2;s="Boiler", 2:"Boiler", text "Boiler", Object (1), i=58 }, ' +
            '{ i=47, forward, ns=2;i=6001, 2:"Temperature", "en" "Temperature", Variable (2), i=63 }, ' +
            '{ i=35, inverse, svr=1;nsu=urn:example:remote;i=70000, 0:"Objects", "en" "Objects", Object (1), i=61 } } }, ' +
            "{ BadNodeIdUnknown, ContinuationPoint null, References [0] } }, DiagnosticInfos [0] }",
        m
    );
}

/* PublishResponse (i=829) */
{
    function itemNotification(clientHandle, dv) {
        return new types.MonitoredItemNotification({ clientHandle, value: dv });
    }
    const dcn = new types.DataChangeNotification({});
    dcn.monitoredItems = [
        itemNotification(1, new DataValue({ value: variant(DataType.Double, 21.5), sourceTimestamp: T_SRC, serverTimestamp: T_SRV })),
        itemNotification(2, new DataValue({ value: variant(DataType.Boolean, true), sourceTimestamp: T_SRC })),
        itemNotification(3, new DataValue({ value: variant(DataType.String, "Running"), statusCode: sc("UncertainLastUsableValue") }))
    ];
    dcn.diagnosticInfos = [];
    const nm = new types.NotificationMessage({ sequenceNumber: 43, publishTime: T_RESP });
    nm.notificationData = [dcn];
    const m = new types.PublishResponse({
        responseHeader: responseHeader({ requestHandle: 99 }),
        subscriptionId: 7,
        availableSequenceNumbers: [41, 42, 43],
        moreNotifications: false,
        notificationMessage: nm
    });
    m.results = [sc("Good"), sc("BadSequenceNumberUnknown")];
    m.diagnosticInfos = null;
    addObject(
        "publish_response",
        `PublishResponse { ResponseHeader { ${ticks(T_RESP)}, RequestHandle 99, Good, {}, StringTable [0], none }, SubscriptionId 7, ` +
            "AvailableSequenceNumbers [3] { 41, 42, 43 }, MoreNotifications false, NotificationMessage { SequenceNumber 43, " +
            `PublishTime ${ticks(T_RESP)}, NotificationData [1] { DataChangeNotification (i=811) { MonitoredItems [3] { ` +
            `{ 1, Double 21.5, source ${ticks(T_SRC)}, server ${ticks(T_SRV)} }, { 2, Boolean true, source ${ticks(T_SRC)} }, ` +
            '{ 3, String "Running", status UncertainLastUsableValue } }, DiagnosticInfos [0] } } }, ' +
            "Results [2] { Good, BadSequenceNumberUnknown 0x807A0000 }, DiagnosticInfos null (-1) }",
        m
    );
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

function cComment(s) {
    /* keep the comment ASCII and never close it early */
    return s.replace(/\*\//g, "* /").replace(/[^\x20-\x7e]/g, "?");
}

function cBytes(buf) {
    const lines = [];
    for (let i = 0; i < buf.length; i += 12) {
        const row = [];
        for (let j = i; j < Math.min(i + 12, buf.length); j++) {
            row.push(`0x${buf[j].toString(16).padStart(2, "0")}`);
        }
        lines.push(`    ${row.join(", ")},`);
    }
    return lines.join("\n");
}

function wrap(text, width, prefix) {
    const words = text.split(" ");
    const lines = [];
    let line = "";
    for (const w of words) {
        if (line && line.length + 1 + w.length > width) {
            lines.push(line);
            line = w;
        } else {
            line = line ? `${line} ${w}` : w;
        }
    }
    if (line) {
        lines.push(line);
    }
    return lines.map((l) => prefix + l).join("\n");
}

let out = "";
out += "/*\n";
out += ` * Generated by tests/vectors/gen_vectors.js with node-opcua ${NODE_OPCUA_VERSION}; do not edit.\n`;
out += " * Regenerate: cd tests/vectors && npm ci && npm run gen\n";
out += " *\n";
out += " * OPC UA binary encodings (Part 6 5.2) of fixed values, made by node-opcua,\n";
out += " * an implementation independent of proto/.  Messages are bodies only (no\n";
out += " * type NodeId prefix).  tests/unit/proto/check_vectors.c builds each value in\n";
out += " * C and checks ua_encode() and ua_decode() against these bytes.\n";
out += " */\n";
out += "#ifndef TESTS_VECTORS_VECTORS_GEN_H\n";
out += "#define TESTS_VECTORS_VECTORS_GEN_H\n\n";
out += "#include <stddef.h>\n#include <stdint.h>\n\n";
out += `#define VEC_NODE_OPCUA_VERSION "${NODE_OPCUA_VERSION}"\n\n`;
for (const v of vectors) {
    out += `/*\n${wrap(cComment(`${v.name} (${v.bytes.length} byte${v.bytes.length === 1 ? "" : "s"}): ${v.desc}`), 74, " * ")}\n */\n`;
    out += `static const uint8_t vec_${v.name}[] = {\n${cBytes(v.bytes)}\n};\n\n`;
}
out += "struct vec_entry {\n    const char    *name;\n    const uint8_t *bytes;\n    size_t         len;\n};\n\n";
out += "static const struct vec_entry vec_table[] = {\n";
for (const v of vectors) {
    out += `    { "${v.name}", vec_${v.name}, sizeof vec_${v.name} },\n`;
}
out += "};\n\n";
out += "#define VEC_COUNT (sizeof vec_table / sizeof vec_table[0])\n\n";
out += "#endif /* TESTS_VECTORS_VECTORS_GEN_H */\n";

fs.writeFileSync(OUT, out);
process.stdout.write(`wrote ${path.basename(OUT)}: ${vectors.length} vectors, node-opcua ${NODE_OPCUA_VERSION}\n`);
