/*
 * proto/types.h: the 25 built-in types of OPC UA Part 6 §5.2 as C structs, and
 * the type descriptions the table-driven codec walks.
 *
 * Conventions every type follows:
 *   - A String, ByteString or XmlElement is { int32_t len; uint8_t *data; };
 *     len == -1 is the null value, len == 0 the empty one.  data need not be
 *     NUL-terminated.
 *   - An array field is the pair { int32_t n_x; T *x; }: n_x == -1 is the null
 *     array, 0 the empty one.  The count always precedes the pointer.
 *   - Decoded values live in the caller's arena (proto/arena.h); nothing in
 *     them is freed field by field.
 *   - ua_types[] holds one description per type: indices 0..24 are the
 *     built-ins in the order of their built-in type ids 1..25 (UA_TYPE_BOOLEAN
 *     == 0 ... UA_TYPE_DIAGNOSTICINFO == 24), then every enumeration and
 *     structure of Opc.Ua.Types.bsd (proto/types_gen.h).
 *
 * No I/O, no globals that change, no allocation: a pure library
 * (docs/style.md §1).
 */
#ifndef UA_TYPES_H
#define UA_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* An OPC UA StatusCode (Part 4 §7.39); the names are in proto/status_gen.h. */
typedef uint32_t ua_status;

#define UA_STATUS_IS_BAD(s)       (((s) & 0x80000000u) != 0)
#define UA_STATUS_IS_UNCERTAIN(s) (((s) & 0xC0000000u) == 0x40000000u)
#define UA_STATUS_IS_GOOD(s)      (((s) & 0xC0000000u) == 0)

/* Built-in type ids, Part 6 §5.1.2 Table 1. */
enum ua_builtin {
    UA_BT_NULL = 0,
    UA_BT_BOOLEAN = 1,
    UA_BT_SBYTE = 2,
    UA_BT_BYTE = 3,
    UA_BT_INT16 = 4,
    UA_BT_UINT16 = 5,
    UA_BT_INT32 = 6,
    UA_BT_UINT32 = 7,
    UA_BT_INT64 = 8,
    UA_BT_UINT64 = 9,
    UA_BT_FLOAT = 10,
    UA_BT_DOUBLE = 11,
    UA_BT_STRING = 12,
    UA_BT_DATETIME = 13,
    UA_BT_GUID = 14,
    UA_BT_BYTESTRING = 15,
    UA_BT_XMLELEMENT = 16,
    UA_BT_NODEID = 17,
    UA_BT_EXPANDEDNODEID = 18,
    UA_BT_STATUSCODE = 19,
    UA_BT_QUALIFIEDNAME = 20,
    UA_BT_LOCALIZEDTEXT = 21,
    UA_BT_EXTENSIONOBJECT = 22,
    UA_BT_DATAVALUE = 23,
    UA_BT_VARIANT = 24,
    UA_BT_DIAGNOSTICINFO = 25,
    UA_BT_MAX = 25
};

/* Kinds of type description: the built-ins use their built-in id. */
#define UA_KIND_ENUM   26   /* 32-bit enumeration, encoded as Int32 */
#define UA_KIND_STRUCT 27   /* a structure: its members in order */

/* Indices of the built-ins in ua_types[]. */
#define UA_TYPE_BOOLEAN         0
#define UA_TYPE_SBYTE           1
#define UA_TYPE_BYTE            2
#define UA_TYPE_INT16           3
#define UA_TYPE_UINT16          4
#define UA_TYPE_INT32           5
#define UA_TYPE_UINT32          6
#define UA_TYPE_INT64           7
#define UA_TYPE_UINT64          8
#define UA_TYPE_FLOAT           9
#define UA_TYPE_DOUBLE          10
#define UA_TYPE_STRING          11
#define UA_TYPE_DATETIME        12
#define UA_TYPE_GUID            13
#define UA_TYPE_BYTESTRING      14
#define UA_TYPE_XMLELEMENT      15
#define UA_TYPE_NODEID          16
#define UA_TYPE_EXPANDEDNODEID  17
#define UA_TYPE_STATUSCODE      18
#define UA_TYPE_QUALIFIEDNAME   19
#define UA_TYPE_LOCALIZEDTEXT   20
#define UA_TYPE_EXTENSIONOBJECT 21
#define UA_TYPE_DATAVALUE       22
#define UA_TYPE_VARIANT         23
#define UA_TYPE_DIAGNOSTICINFO  24

/* DateTime: 100 ns intervals since 1601-01-01 UTC (Part 6 §5.2.2.5). */
typedef int64_t ua_datetime;

struct ua_string {
    int32_t  len;           /* -1: null */
    uint8_t *data;
};

struct ua_guid {
    uint32_t data1;
    uint16_t data2;
    uint16_t data3;
    uint8_t  data4[8];
};

/* NodeId identifier types (Part 3 §8.2.3); the values are the IdType enum. */
enum ua_idtype {
    UA_IDTYPE_NUMERIC = 0,
    UA_IDTYPE_STRING = 1,
    UA_IDTYPE_GUID = 2,
    UA_IDTYPE_OPAQUE = 3
};

/*
 * Not on the wire: in references[0].reference_type_id of a BrowseResult,
 * the whole ReferenceDescription array is encoded already (a worker's
 * Browse cache): references[0].browse_name.name holds the bytes of all
 * n_references descriptions, which the encoder copies; no other element or
 * field is read.  Encoders only: a decoder never produces this idtype.
 */
#define UA_IDTYPE_ENCODED 0xFF

/*
 * The encoder picks the compact forms (two-byte, four-byte) itself; the
 * decoder accepts all six encodings and always yields this one shape.
 */
struct ua_nodeid {
    uint16_t ns;
    uint8_t  idtype;        /* enum ua_idtype */
    union {
        uint32_t         num;
        struct ua_string str;    /* UA_IDTYPE_STRING and UA_IDTYPE_OPAQUE */
        struct ua_guid   guid;
    } id;
};

struct ua_expandednodeid {
    struct ua_nodeid node;
    struct ua_string ns_uri;        /* null when absent */
    uint32_t         server_index;  /* 0 when absent */
};

struct ua_qualifiedname {
    uint16_t         ns;
    struct ua_string name;
};

#define UA_LT_LOCALE 0x01
#define UA_LT_TEXT   0x02

struct ua_localizedtext {
    uint8_t          mask;      /* UA_LT_*: which fields are present */
    struct ua_string locale;
    struct ua_string text;
};

struct ua_type;

/* ExtensionObject body state. */
enum ua_eo_encoding {
    UA_EO_NONE = 0,         /* no body */
    UA_EO_BYTES = 1,        /* binary body of an unknown type, kept as bytes */
    UA_EO_XML = 2,          /* XML body, kept as bytes */
    UA_EO_DECODED = 3       /* binary body decoded into obj of type */
};

struct ua_extobj {
    struct ua_nodeid      type_id;  /* the encoding id as sent */
    uint8_t               encoding; /* enum ua_eo_encoding */
    const struct ua_type *type;     /* UA_EO_DECODED */
    void                 *obj;      /* UA_EO_DECODED */
    struct ua_string      body;     /* UA_EO_BYTES, UA_EO_XML */
};

/*
 * Variant: type 0 is empty.  Scalars and arrays both point at their data:
 * a scalar at one element, an array at n elements (n == -1: null array).
 * ndims == -1 means no ArrayDimensions; otherwise the product of dims
 * equals n.
 */
/*
 * UA_VARIANT_RAW is not a wire type: the Variant is already encoded, data
 * holds its n bytes, and the encoder copies them as they are ("encode
 * once": values in shared memory are stored encoded).  The decoder never
 * produces it.
 */
#define UA_VARIANT_RAW 0xFF

struct ua_variant {
    uint8_t  type;          /* enum ua_builtin, or UA_VARIANT_RAW */
    uint8_t  is_array;
    int32_t  n;             /* arrays only */
    int32_t  ndims;         /* -1: no ArrayDimensions */
    int32_t *dims;
    void    *data;
};

#define UA_DV_VALUE        0x01
#define UA_DV_STATUS       0x02
#define UA_DV_SOURCE_TS    0x04
#define UA_DV_SERVER_TS    0x08
#define UA_DV_SOURCE_PS    0x10
#define UA_DV_SERVER_PS    0x20
/*
 * Not on the wire: the DataValue is encoded already, value.n bytes at
 * value.data (its own mask byte first), and the encoder copies them; no
 * other field is read.  Encoders only: a decoder never sets it.
 */
#define UA_DV_ENCODED      0x80

struct ua_datavalue {
    uint8_t           mask;     /* UA_DV_*: which fields are present */
    struct ua_variant value;
    ua_status         status;
    ua_datetime       source_ts;
    ua_datetime       server_ts;
    uint16_t          source_ps;
    uint16_t          server_ps;
};

#define UA_DI_SYMBOLIC_ID    0x01
#define UA_DI_NAMESPACE_URI  0x02
#define UA_DI_LOCALIZED_TEXT 0x04
#define UA_DI_LOCALE         0x08
#define UA_DI_ADDITIONAL     0x10
#define UA_DI_INNER_STATUS   0x20
#define UA_DI_INNER_DIAG     0x40

struct ua_diaginfo {
    uint8_t             mask;   /* UA_DI_*: which fields are present */
    int32_t             symbolic_id;
    int32_t             namespace_uri;
    int32_t             localized_text;
    int32_t             locale;
    struct ua_string    additional_info;
    ua_status           inner_status;
    struct ua_diaginfo *inner;
};

/*
 * A member of a structure.  For an array the int32_t count sits at
 * count_offset and the element pointer at offset.
 */
struct ua_member {
    const char *name;
    uint16_t    type;           /* index into ua_types[] */
    uint16_t    offset;
    uint16_t    count_offset;
    uint8_t     is_array;
};

struct ua_type {
    const char             *name;
    uint32_t                type_id;    /* ns=0 numeric DataType NodeId */
    uint32_t                binary_id;  /* ns=0 DefaultBinary encoding id, 0: none */
    uint32_t                size;       /* sizeof the C representation */
    uint8_t                 kind;       /* built-in id, UA_KIND_ENUM, UA_KIND_STRUCT */
    uint8_t                 flat;       /* no pointers: copy with memcpy */
    uint16_t                nmembers;
    const struct ua_member *members;
};

/* Every type description; the table is generated (proto/types_gen.c). */
extern const struct ua_type ua_types[];
extern const size_t ua_types_count;

/* Sorted (by id) indexes into ua_types[], generated with the table. */
struct ua_type_index {
    uint32_t id;
    uint16_t type;              /* index into ua_types[] */
};
extern const struct ua_type_index ua_types_binary_index[];  /* by binary_id */
extern const size_t ua_types_binary_index_count;
extern const struct ua_type_index ua_types_typeid_index[];  /* by type_id */
extern const size_t ua_types_typeid_index_count;

/* The description whose DefaultBinary encoding id is ns=0;i=id, or NULL. */
const struct ua_type *ua_types_by_binary_id(uint32_t id);

/* The description whose DataType id is ns=0;i=id, or NULL. */
const struct ua_type *ua_types_by_type_id(uint32_t id);

/*
 * True when a Variant of built-in type bt is accepted by a DataType whose
 * type root (shm_nodestore_type_root: the first ns=0 id 1..29 up its
 * supertype chain, 0 for none) is root.  For Structure (22) only bt is
 * checked (ExtensionObject); the caller checks each element's DataType.
 */
bool ua_types_root_admits(uint32_t root, uint8_t bt);

/* Deep equality of two values of type t (NaN equals NaN bit for bit). */
bool ua_equal(const void *a, const void *b, const struct ua_type *t);

/* Small helpers for building values. */
struct ua_string ua_string_from(const char *s);
bool ua_string_eq(const struct ua_string *a, const char *s);
bool ua_nodeid_equal(const struct ua_nodeid *a, const struct ua_nodeid *b);

static inline struct ua_nodeid
ua_nodeid_num(uint16_t ns, uint32_t num)
{
    struct ua_nodeid n = { .ns = ns, .idtype = UA_IDTYPE_NUMERIC };
    n.id.num = num;
    return n;
}

/* 1970-01-01 as a DateTime (100 ns ticks since 1601-01-01 UTC, Part 6
 * §5.2.2.5). */
#define UA_DATETIME_UNIX_EPOCH INT64_C(116444736000000000)

/* CLOCK_REALTIME now as a DateTime. */
static inline int64_t
ua_datetime_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return UA_DATETIME_UNIX_EPOCH + (int64_t)ts.tv_sec * 10000000
           + ts.tv_nsec / 100;
}

/* A String NodeId pointing at s (no copy). */
static inline struct ua_nodeid
ua_nodeid_str(uint16_t ns, const char *s)
{
    struct ua_nodeid n = { .ns = ns, .idtype = UA_IDTYPE_STRING };
    n.id.str = ua_string_from(s);
    return n;
}

/* Point v at one element of built-in type bt (no copy). */
static inline void
ua_variant_set_scalar(struct ua_variant *v, void *data, uint8_t bt)
{
    v->type = bt;
    v->is_array = 0;
    v->n = 0;
    v->ndims = -1;
    v->dims = NULL;
    v->data = data;
}

/* Point v at n elements of built-in type bt (no copy). */
static inline void
ua_variant_set_array(struct ua_variant *v, void *data, int32_t n, uint8_t bt)
{
    v->type = bt;
    v->is_array = 1;
    v->n = n;
    v->ndims = -1;
    v->dims = NULL;
    v->data = data;
}

#endif /* UA_TYPES_H */
