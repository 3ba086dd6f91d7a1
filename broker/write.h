/*
 * broker/write.h: the Write service's checks and its application to a value
 * slot (Part 4 §5.10.4), in the broker, the only writer of values.
 *
 * One WriteValue comes in as a worker's SHM_FO_WRITE record (shm/fanout.h):
 * node index, AttributeId, IndexRange text and the encoded DataValue.
 * bk_write_apply() decodes the DataValue, checks it (bk_write_check) and
 * stores the new value through bk_value_write() (broker/value.h), the one
 * function every value change goes through (it also makes the
 * notification records) -- except the common WriteValue (the Value alone,
 * a scalar of a fixed-size type the node takes, no IndexRange), which is
 * decided from a per-node table bk_write_check() filled at start-up and
 * stored through bk_value_write_small(), the same steps inline (write.c).
 * The caller (broker/request.c) opens the value batch the changes join.
 *
 * Operation results, in this order:
 *   BadNodeIdUnknown        node index outside the store
 *   BadAttributeIdInvalid   an AttributeId the node class does not have
 *   BadNotWritable          any attribute but Value (only Value is
 *                           writable for now); Value of a node that is not
 *                           a Variable; AccessLevel without CurrentWrite
 *   BadUserAccessDenied     UserAccessLevel without CurrentWrite
 *   BadIndexRangeInvalid    IndexRange syntax (Part 4 §7.27)
 *   BadWriteNotSupported    a ServerTimestamp or ServerPicoseconds in the
 *                           DataValue; a StatusCode (other than Good)
 *                           without AccessLevelEx StatusWrite (0x20); a
 *                           SourceTimestamp without TimestampWrite (0x40)
 *   BadTypeMismatch         the Variant's type against the DataType (below),
 *                           ValueRank and ArrayDimensions (Part 3 §5.6.2)
 *   BadIndexRangeNoData     a range outside the current value, on a value
 *                           that is neither an array nor a String or
 *                           ByteString, or with more dimensions than we
 *                           write (one)
 *   BadIndexRangeDataMismatch  the written data is not exactly as long as
 *                           the range (Part 4 v1.05 §7.39)
 *   BadOutOfMemory          value heap or decode arena exhausted
 *   BadDecodingError        a DataValue that does not decode
 *
 * Type rule: the DataType's supertype chain is walked to its first
 * namespace-0 type with an id in 1..29 (the built-ins and the abstract
 * Number, Integer, UInteger, Enumeration): a built-in must match the
 * Variant's type exactly (a Duration takes a Double, a LocaleId a String);
 * Number takes any of SByte..Double, Integer the signed and UInteger the
 * unsigned integers; an Enumeration an Int32; BaseDataType anything;
 * Structure (and its subtypes) an ExtensionObject whose decoded type's
 * DataType is the node's DataType or one of its subtypes (Structure itself
 * takes any ExtensionObject body).  A value that is absent or an empty
 * Variant is BadTypeMismatch unless the DataType is BaseDataType.
 *
 * Timestamps: the slot gets the client's SourceTimestamp (when allowed and
 * given) or now, and now as ServerTimestamp.
 */
#ifndef BK_WRITE_H
#define BK_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/types.h"
#include "shm/nodestore.h"
#include "value.h"

/* AccessLevelEx bits (Part 3 §8.58). */
#define BK_AL_CURRENTREAD    0x01
#define BK_AL_CURRENTWRITE   0x02
#define BK_AL_STATUSWRITE    0x20
#define BK_AL_TIMESTAMPWRITE 0x40

/* One WriteValue as a worker sent it. */
struct bk_write_req {
    uint32_t       node;
    uint32_t       attr;
    const uint8_t *range;       /* IndexRange text, range_len bytes */
    uint32_t       range_len;
    const uint8_t *dv;          /* encoded DataValue */
    uint32_t       dv_len;
};

/*
 * The pure checks of one WriteValue against the node store, everything up
 * to but not including the IndexRange (which needs the current value):
 * node, attribute, access, DataValue fields, type, ValueRank,
 * ArrayDimensions.  dv is decoded; has_range says an IndexRange was given
 * (the value is then a piece: ValueRank and ArrayDimensions are checked on
 * the result instead).  UA_GOOD or the operation's Bad status.
 */
ua_status bk_write_check(const struct shm_nodestore *ns, uint32_t node,
                         uint32_t attr, const struct ua_datavalue *dv,
                         bool has_range);

/*
 * The first namespace-0 type up DataType node dt's supertype chain whose
 * id is in 1..29 (a built-in, Number, Integer, UInteger, Enumeration), or
 * 0 when there is none.
 */
uint32_t bk_write_type_root(const struct shm_nodestore *ns, uint32_t dt);

/* True when the Variant's type is accepted by DataType node dt. */
bool bk_write_type_ok(const struct shm_nodestore *ns, uint32_t dt,
                      const struct ua_variant *v);

/* True when v's shape fits ValueRank rank and ArrayDimensions of node i. */
bool bk_write_rank_ok(const struct shm_nodestore *ns, uint32_t i,
                      const struct ua_variant *v);

/*
 * What the fast path of bk_write_apply() needs of one node, worked out
 * once, after the address space is built, by bk_write_check() itself
 * (bk_write_init): the
 * node's value slot and the fixed-size built-in types bt (Boolean ..
 * DateTime, StatusCode) for which a DataValue that is a scalar of bt
 * alone, without IndexRange, passes every check (bit bt set).  A node
 * with no bit set (not a writable Variable, a DataType that takes none of
 * them, a ValueRank that takes no scalar) never takes the fast path.
 */
struct bk_write_node {
    uint32_t slot;
    uint32_t types;
};

/* The Write service of one address space. */
struct bk_write {
    const struct shm_nodestore *ns;
    uint32_t                    nnodes;     /* ns->nnodes, read-only */
    struct bk_write_node       *wnodes;     /* [nnodes] */
    struct bk_value            *val;        /* where values are stored */
    /*
     * The DataValue length of a fast-path Write by its Variant encoding
     * byte: a Value alone, a scalar of fixed-size built-in type bt (mask,
     * encoding byte, value; from ua_builtin[bt].size); 0 for any other
     * byte (an array flag makes it >= 64).  These are the types of struct
     * bk_write_node.types.
     */
    uint8_t                     small_dv[256];
};

/*
 * The Write service of node store ns (built, read-only from now on),
 * storing through val: its node table, worked out by bk_write_check()
 * (broker, once, after the build).  0 or -ENOMEM.
 */
int bk_write_init(struct bk_write *w, const struct shm_nodestore *ns,
                  struct bk_value *val);

/* Free the node table. */
void bk_write_clear(struct bk_write *w);

/* The result of one operation of a request record. */
struct bk_write_result {
    uint32_t  op;               /* its index in the WriteRequest */
    ua_status st;
};

/*
 * Apply the operations of one SHM_FO_WRITE record (shm/fanout.h) at
 * DateTime now: p, the len bytes after its struct shm_fo_write; nops, the
 * operations it says it holds.  res[k] gets the k-th operation's index
 * and status.  The number of results: fewer than nops when the record is
 * truncated (an operation whose bytes do not fit gets BadDecodingError
 * and ends the record; one whose header does not fit is lost).  a is
 * reset after each operation that used it.  The common operation (the
 * Value alone, a scalar of a fixed-size type the node takes, no
 * IndexRange) takes a path with no decoding and no call; every other
 * one is bk_write_apply()'s.
 */
uint32_t bk_write_apply_ops(struct bk_write *w, const uint8_t *p,
                            uint32_t len, uint32_t nops, struct ua_arena *a,
                            int64_t now, struct bk_write_result *res);

/*
 * Check and apply r at DateTime now: decode (in a, reset by the caller),
 * check, merge an IndexRange into the current value, store (inside the
 * caller's value batch).  The operation's status.
 */
ua_status bk_write_apply(struct bk_write *w, const struct bk_write_req *r,
                         struct ua_arena *a, int64_t now);

#endif /* BK_WRITE_H */
