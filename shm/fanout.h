/*
 * shm/fanout.h: the records that travel on the fan-out rings, a contract
 * between the broker and its workers like layout.h (only formats,
 * constants and tiny inline helpers; no state).
 *
 * Rings have fixed-size slots (struct shm_rings.slot_size, a multiple of
 * 8, SHM_FO_SLOT_MIN at least).  A record is variable-length: it starts
 * with a struct shm_fo_hdr in the first of `nslots` consecutive slots and
 * its bytes continue through the following slots.  A producer pushes a
 * record's slots with one shm_ring_push_n_spsc(), all or nothing, so a
 * consumer never sees part of a record; it pops the first slot, reads
 * nslots, and pops the rest.  (A ring always holds whole records; a
 * record never takes more slots than the ring has.)
 *
 *   request ring, worker -> broker
 *     SHM_FO_WRITE      struct shm_fo_write, then nops operations, each a
 *                       struct shm_fo_wop, range_len bytes of IndexRange
 *                       text and dv_len bytes of encoded DataValue (Part 6
 *                       §5.2.2.17), padded to SHM_FO_WOP_ALIGN: WriteValues
 *                       of one WriteRequest, in order (a request whose
 *                       operations do not fit in one record takes several;
 *                       operations the worker answered itself are absent)
 *
 *     SHM_FO_CALL       struct shm_fo_call, then args_len bytes: nargs
 *                       encoded Variants (Part 6 §5.2.2.16), the input
 *                       arguments of one method of a CallRequest, already
 *                       checked against its InputArguments, then user_len
 *                       bytes of the caller's user name and audit_len
 *                       bytes of the request's auditEntryId (one record
 *                       per forwarded method; worker/svc_call.c)
 *
 *   reply ring, broker -> worker
 *     SHM_FO_CALL_RESULT  struct shm_fo_call_result, then out_len bytes:
 *                       nout encoded Variants, the output arguments (only
 *                       when status is Good) of method op of pending Call
 *                       id (broker/methods.c)
 *     SHM_FO_RESULTS    struct shm_fo_results, then count uint32
 *                       StatusCodes: the results of operations
 *                       first_op .. first_op + count - 1 of request id
 *                       (the broker packs the replies of consecutive
 *                       records of one request into one record)
 *
 *   HistoryUpdate (issue 18; docs/design-notes.md D96), through the
 *   broker to the historian, the history store's one writer, and back:
 *     SHM_FO_HUPD       worker request ring -> historian reply ring:
 *                       struct shm_fo_hupd, the session's user name
 *                       (user_len bytes, padded to SHM_FO_WOP_ALIGN),
 *                       then count items: for an insert, replace or
 *                       update (of values or annotations) and an
 *                       annotation's removal a uint32 length and that
 *                       many bytes of encoded DataValue (Part 6
 *                       §5.2.2.17), padded to SHM_FO_WOP_ALIGN; for a
 *                       delete at times a int64 DateTime each; none for a
 *                       delete of a range.  The broker stamps worker and
 *                       gen (the asker) before it passes the record on.
 *     SHM_FO_HUPD_RESULT historian request ring -> the asking worker's
 *                       reply ring (when it is still the same process):
 *                       struct shm_fo_hupd_result, then count uint32
 *                       StatusCodes, one per item.  The broker answers a
 *                       SHM_FO_HUPD itself (status Bad, count 0) when there
 *                       is no historian or no room for the record.
 *
 *   notification ring, broker -> worker
 *     struct shm_block_handle (layout.h), one per slot; the block holds
 *     struct shm_block_rec records whose `slot` is the VALUE SLOT index
 *     (struct shm_node.u.var.slot; the interest masks use the same index)
 *     and whose bytes are the encoded DataValue: value, status (absent
 *     when Good), source and server timestamps (with picoseconds when not
 *     0), exactly what the slot holds after the change.
 *
 *     Events (docs/subscriptions.md "Events"): a record whose slot is
 *     SHM_FO_EVENT_SLOT holds one event, encoded once by the broker:
 *       uint32 source node index, uint32 EventType node index,
 *       uint32 nfields, then nfields times
 *         uint16 path length, the path text (BrowseNames from the event
 *         type joined by '/', each "ns:Name": "0:Severity",
 *         "0:EnabledState/0:Id", "2:Temperature"), uint32 Variant
 *         length, the encoded Variant (Part 6 §5.2.2.16)
 *     (shm_fo_ev_* below).  Every event has the BaseEventType fields
 *     0:EventId (ByteString, 16 bytes), 0:EventType (NodeId),
 *     0:SourceNode (NodeId), 0:SourceName (String), 0:Time and
 *     0:ReceiveTime (DateTime), 0:Message (LocalizedText) and 0:Severity
 *     (UInt16 1..1000), then any others.  Such records go only to the
 *     workers whose bit is set in struct shm_fanout.event_interest (each
 *     worker sets and clears its own bit, seq_cst RMWs; the broker loads
 *     the word after a seq_cst fence for each event), in the blocks and
 *     rings the value records use.
 *
 * Lost values: when a value change cannot reach a worker that has
 * interest in its slot (the block pool is exhausted, or that worker's
 * notification ring is full), the broker sets the worker's bit in the
 * slot's lost mask (struct shm_fanout region, layout.h) and then bumps
 * the worker's lost_seq (release).  The worker, after draining its
 * notification ring, acquire-loads lost_seq; when it moved it scans the
 * lost masks, clears its own bit of each (fetch-AND) and reports an
 * overflow for that slot (worker/link.h).  An event that cannot reach a
 * worker with event interest bumps that worker's events_lost
 * (struct shm_fanout_worker) before the same lost_seq bump; the worker
 * compares it with the value it saw last and queues an
 * EventQueueOverflowEventType event (i=3035) into its event items.
 */
#ifndef SHM_FANOUT_H
#define SHM_FANOUT_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "segment.h"
#include "value.h"

#define SHM_FO_SLOT_MIN     32u         /* a header and a little */
#define SHM_FO_RANGE_MAX    256u        /* IndexRange text bytes we pass */
#define SHM_FO_EVENT_SLOT   0xFFFFFFFEu /* a block record that is an event */
#define SHM_FO_EV_PATH_MAX  255u        /* bytes of one field's path text */
#define SHM_FO_EV_FIELDS_MAX 64u        /* fields of one event */

/* struct shm_fo_hdr.kind */
enum shm_fo_kind {
    SHM_FO_NONE = 0,
    SHM_FO_WRITE = 1,           /* request ring */
    SHM_FO_RESULTS = 2,         /* reply ring */
    SHM_FO_CALL = 3,            /* request ring: a method call */
    SHM_FO_CALL_RESULT = 4,     /* reply ring: its answer */
    SHM_FO_EVENT = 5,           /* request ring: an event of the worker's
                                   (the event record after the header) */
    SHM_FO_HUPD = 6,            /* request ring, then the historian's
                                   reply ring: one HistoryUpdateDetails */
    SHM_FO_HUPD_RESULT = 7      /* the historian's request ring, then the
                                   asking worker's reply ring */
};

/* The first 8 bytes of every record. */
struct shm_fo_hdr {
    uint16_t kind;              /* enum shm_fo_kind */
    uint16_t nslots;            /* slots the record takes, >= 1 */
    uint32_t len;               /* bytes of the record, header included */
};
static_assert(sizeof(struct shm_fo_hdr) == 8, "fo header");

/* WriteValues of one request (Part 4 §5.10.4.2); operations follow. */
struct shm_fo_write {
    struct shm_fo_hdr hdr;      /* kind SHM_FO_WRITE */
    uint32_t id;                /* the worker's pending-Write id */
    uint32_t nops;              /* struct shm_fo_wop that follow */
};
static_assert(sizeof(struct shm_fo_write) == 16, "fo write");

#define SHM_FO_WOP_ALIGN 4u

/* One WriteValue, its node already resolved by the worker. */
struct shm_fo_wop {
    uint32_t op;                /* index in the WriteRequest */
    uint32_t node;              /* node index in the node store */
    uint32_t dv_len;            /* DataValue bytes after the range */
    uint16_t attr;              /* AttributeId (1..27; larger: invalid) */
    uint16_t range_len;         /* IndexRange bytes after this struct */
};
static_assert(sizeof(struct shm_fo_wop) == 16, "fo write op");

/* Bytes one operation takes in a record (padded). */
static inline uint64_t
shm_fo_wop_bytes(uint32_t range_len, uint32_t dv_len)
{
    uint64_t n = sizeof(struct shm_fo_wop) + (uint64_t)range_len + dv_len;

    return (n + SHM_FO_WOP_ALIGN - 1) & ~(uint64_t)(SHM_FO_WOP_ALIGN - 1);
}

/* The results of consecutive operations of one request. */
struct shm_fo_results {
    struct shm_fo_hdr hdr;      /* kind SHM_FO_RESULTS */
    uint32_t id;
    uint32_t first_op;
    uint32_t count;             /* uint32 StatusCodes follow */
    uint32_t pad;
};
static_assert(sizeof(struct shm_fo_results) == 24, "fo results");

/* struct shm_fo_call.role: how the calling session was activated. */
enum shm_fo_role {
    SHM_FO_ROLE_NONE = 0,
    SHM_FO_ROLE_ANONYMOUS = 1,
    SHM_FO_ROLE_VIEWER = 2,
    SHM_FO_ROLE_OPERATOR = 3
};

#define SHM_FO_USER_MAX 64u     /* bytes of a caller's user name */
#define SHM_FO_AUDIT_MAX 256u   /* bytes of a ClientAuditEntryId */

/* One method to call (Part 4 §5.11.2), its nodes resolved by the worker;
 * args_len bytes of nargs encoded Variants follow, then user_len bytes of
 * the caller's user name and audit_len bytes of the RequestHeader's
 * auditEntryId (Part 4 §7.32; the methods the broker runs itself record
 * them: broker/alarmnode.h). */
struct shm_fo_call {
    struct shm_fo_hdr hdr;      /* kind SHM_FO_CALL */
    uint32_t id;                /* the worker's pending-Call id */
    uint32_t op;                /* index in the CallRequest */
    uint32_t object;            /* node index of objectId */
    uint32_t method;            /* node index of methodId */
    uint32_t nargs;
    uint32_t args_len;
    uint32_t role;              /* enum shm_fo_role */
    uint32_t user_len;          /* <= SHM_FO_USER_MAX */
    uint32_t audit_len;         /* <= SHM_FO_AUDIT_MAX, cut there */
    uint32_t pad;
};
static_assert(sizeof(struct shm_fo_call) == 48, "fo call");

/* The answer to one SHM_FO_CALL; out_len bytes of nout Variants follow. */
struct shm_fo_call_result {
    struct shm_fo_hdr hdr;      /* kind SHM_FO_CALL_RESULT */
    uint32_t id;
    uint32_t op;
    uint32_t status;            /* the method's StatusCode */
    uint32_t nout;
    uint32_t out_len;
    uint32_t pad;
};
static_assert(sizeof(struct shm_fo_call_result) == 32, "fo call result");

/* struct shm_fo_hupd.what: Part 11 §6.8's operations. */
enum shm_fo_hupd_what {
    SHM_FO_HUPD_INSERT = 1,     /* UpdateDataDetails, PerformUpdateType */
    SHM_FO_HUPD_REPLACE = 2,
    SHM_FO_HUPD_UPDATE = 3,
    SHM_FO_HUPD_DELETE_RAW = 4, /* DeleteRawModifiedDetails: [lo, hi) */
    SHM_FO_HUPD_DELETE_AT = 5,  /* DeleteAtTimeDetails */
    SHM_FO_HUPD_FORGET = 6,     /* the same with isDeleteModified: the
                                   modified values of [lo, hi) */
    SHM_FO_HUPD_ANNOT = 7       /* UpdateStructureDataDetails of an
                                   Annotations Property: annot_op */
};

/* One HistoryUpdateDetails of a request, its node resolved. */
struct shm_fo_hupd {
    struct shm_fo_hdr hdr;      /* kind SHM_FO_HUPD */
    uint32_t id;                /* the worker's pending HistoryUpdate */
    uint32_t op;                /* index in the request */
    uint32_t worker;            /* the asker's slot (set by the broker) */
    uint32_t gen;               /* its generation (set by the broker) */
    uint64_t key;               /* the node's history key (hist/store.h) */
    int64_t  lo, hi;            /* SHM_FO_HUPD_DELETE_RAW's range */
    uint16_t what;              /* enum shm_fo_hupd_what */
    uint8_t  user_len;          /* the user name's bytes that follow */
    uint8_t  annot_op;          /* SHM_FO_HUPD_ANNOT: PerformUpdateType
                                   1 Insert .. 4 Remove */
    uint32_t count;             /* items that follow */
};
static_assert(sizeof(struct shm_fo_hupd) == 56, "fo hupd");

/* The answer to one SHM_FO_HUPD; count uint32 StatusCodes follow. */
struct shm_fo_hupd_result {
    struct shm_fo_hdr hdr;      /* kind SHM_FO_HUPD_RESULT */
    uint32_t id;
    uint32_t op;
    uint32_t worker;
    uint32_t gen;
    uint32_t status;            /* the details' StatusCode */
    uint32_t count;
};
static_assert(sizeof(struct shm_fo_hupd_result) == 32, "fo hupd result");

/* Slots a record of len bytes takes in slot_size-byte slots. */
static inline uint32_t
shm_fo_slots(uint64_t len, uint32_t slot_size)
{
    return (uint32_t)((len + slot_size - 1) / slot_size);
}

/*
 * Check a record header popped from a ring whose slots are slot_size bytes
 * and that holds ring_slots slots: 1 when kind, nslots and len agree (len
 * fits in nslots slots and needs all of them), else 0.  A consumer never
 * trusts a peer's header further than this.
 */
static inline int
shm_fo_hdr_ok(const struct shm_fo_hdr *h, uint32_t slot_size,
              uint32_t ring_slots)
{
    return h->kind != SHM_FO_NONE && h->nslots >= 1
           && h->nslots <= ring_slots && h->len >= sizeof(*h)
           && shm_fo_slots(h->len, slot_size) == h->nslots;
}

/*
 * Record DataValues (Part 6 §5.2.2.17: an encoding mask, then Value,
 * StatusCode, SourceTimestamp, SourcePicoseconds, ServerTimestamp,
 * ServerPicoseconds, each only when its bit is set).
 */
#define SHM_FO_DV_VALUE     0x01
#define SHM_FO_DV_STATUS    0x02
#define SHM_FO_DV_SOURCE_TS 0x04
#define SHM_FO_DV_SERVER_TS 0x08
#define SHM_FO_DV_SOURCE_PS 0x10
#define SHM_FO_DV_SERVER_PS 0x20
#define SHM_FO_DV_EXTRA     25      /* mask + every field but the Value */

/*
 * Finish a DataValue in p whose encoded Variant (m->len bytes, 0 for no
 * value) already sits at p + 1: write the mask at p[0] and the status
 * (when not Good, 0) and the timestamps m carries after the Variant.  p
 * has room for m->len + SHM_FO_DV_EXTRA bytes.  The DataValue's size.
 */
size_t shm_fo_dv_finish(uint8_t *p, const struct shm_value *m);

/* The same with the Variant's length given (m->len is not read). */
size_t shm_fo_dv_finish_len(uint8_t *p, uint32_t len,
                            const struct shm_value *m);

/* An event record's head (the fields follow). */
struct shm_fo_ev {
    uint32_t source;            /* node index, SHM_NONE: none */
    uint32_t type;              /* EventType node index */
    uint32_t nfields;
};
static_assert(sizeof(struct shm_fo_ev) == 12, "fo event");

/* One field of an event record, taken apart (pointers into the record). */
struct shm_fo_ev_field {
    const char    *path;
    uint32_t       plen;
    const uint8_t *var;
    uint32_t       vlen;
};

/*
 * Walk the event record p[len]: *ev its head and up to max fields into
 * f[]; the number of fields taken apart, or -1 when the bytes are not an
 * event record (or have more than max fields).
 */
int shm_fo_ev_parse(const uint8_t *p, uint32_t len, struct shm_fo_ev *ev,
                    struct shm_fo_ev_field *f, uint32_t max);

/* ---------------------------------------------- SHM_R_FANOUT (fanout.c) */

/* This process's view of the region. */
struct shm_fanout_ref {
    struct shm_fanout *sh;
    _Atomic uint64_t  *lost;            /* [nslots] */
    uint32_t           nslots;          /* checked at locate */
};

/* Bytes SHM_R_FANOUT needs for plan p (0 without rings). */
uint64_t shm_fanout_region_bytes(const struct shm_plan *p);

/* Creator: lay out the region for nslots lost masks.  0 or -EINVAL. */
int shm_fanout_region_init(void *mem, uint64_t avail, uint32_t nslots);

/* Attach to segment s's region.  0; -ENOENT when it has none; -EPROTO. */
int shm_fanout_locate(struct shm_fanout_ref *f, const struct shm_segment *s);

/*
 * Broker: mark slot lost for every worker in mask (fetch-OR).  Bump each
 * one's lost_seq afterwards with shm_fanout_lost_publish().
 */
void shm_fanout_lost_mark(struct shm_fanout_ref *f, uint32_t slot,
                          uint64_t mask);

/* Broker: tell worker w that marks wait (release; pairs with the load). */
void shm_fanout_lost_publish(struct shm_fanout_ref *f, uint32_t worker);

/* Worker: the current lost_seq of w (acquire). */
uint64_t shm_fanout_lost_seq(const struct shm_fanout_ref *f, uint32_t worker);

/*
 * Worker w: take its mark off slot; true when it was set.  Broker: after
 * w died, clear w's bit everywhere with shm_fanout_forget_worker().
 */
bool shm_fanout_lost_take(struct shm_fanout_ref *f, uint32_t slot,
                         uint32_t worker);

/* Broker, once worker w is dead and reaped: clear its lost bits. */
void shm_fanout_forget_worker(struct shm_fanout_ref *f, uint32_t worker);

/* Worker w: set / clear its event-interest bit (seq_cst RMW). */
void shm_fanout_event_interest(struct shm_fanout_ref *f, uint32_t worker,
                               bool on);
/* Broker: the workers with event interest (after a seq_cst fence). */
uint64_t shm_fanout_event_mask(const struct shm_fanout_ref *f);
/* Broker: worker w missed n events (then lost_publish). */
void shm_fanout_event_lost(struct shm_fanout_ref *f, uint32_t worker,
                           uint32_t n);
/* Worker w: how many events it missed so far. */
uint64_t shm_fanout_events_lost(const struct shm_fanout_ref *f,
                                uint32_t worker);

#endif /* SHM_FANOUT_H */
