/*
 * worker/sub_int.h: what the files of the sub layer share (worker/sub.c,
 * retx.c, monitem*.c, svc_sub.c; docs/style.md §3: intra-module sharing
 * goes in an _int.h).  Nobody else includes it.
 *
 * Everything lives in fixed pools addressed by 32-bit indices (WK_NIL =
 * none), allocated once in wk_sub_init():
 *
 *   subs[]      struct wk_sub, conf->max_subscriptions
 *   timers      the publishing timers: a min-heap of sub indices
 *               (worker/timerheap.h)
 *   ss[]        struct wk_subsess, one per session slot: the session's
 *               subscriptions and its queue of pending Publish requests
 *   items[]     struct wk_mi, conf->max_monitored_items
 *   slot_head[] per value slot: its items, a list (WK_NIL: none; this
 *               worker's interest bit is set exactly while the list is
 *               not empty)
 *   chunks[]    struct wk_chunk, lim.max_items / 2 + 1: 32-byte chunks of
 *               7 item indices, the lists of 2 items or more (a slot's,
 *               the sampled items), so that a slot's items are found in a
 *               line or two and their own lines load side by side
 *   cells       64-byte cells holding values: a record's DataValue as the
 *               broker encoded it, copied ONCE per worker and shared by
 *               every monitored item that queued it (refcounted; chained
 *               when longer than one cell)
 *   ents[]      queue entries, 8 bytes: a value and the next entry
 *   rstore      the retransmission queues' messages, one byte ring
 *               (worker/retx.c)
 *   links[]     SetTriggering links
 *
 * A monitored item (struct wk_mi, 128 bytes, and half a chunk at worst,
 * 16: two items on a slot) with queueSize 1 and a value waiting holds one
 * entry (8 bytes + 4 on the free stack) and at most one value (64 + 4
 * bytes, shared with the other items that took the same change): 224
 * bytes of server memory at worst, 156 when K items share the values (+4
 * bytes per value slot of the address space for slot_head, shared by
 * every item).
 *
 * Ids: a monitored item id is (generation << bits) | (index + 1), a
 * subscription id also carries the worker slot in its top 6 bits, so an
 * id from another worker, or a stale one, never finds anything.
 */
#ifndef WK_SUB_INT_H
#define WK_SUB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "conn.h"
#include "park.h"
#include "proto/arena.h"
#include "proto/scalar.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "session.h"
#include "shm/fanout.h"
#include "svc.h"
#include "timerheap.h"
#include "worker.h"

#define WK_NIL UINT32_MAX

/*
 * Limits the configuration snapshot does not carry yet (asked of the broker:
 * keys max_notifications_per_publish, max_retransmission_queue,
 * max_monitored_item_queue_size, max_keep_alive_count, max_lifetime_count,
 * max_queued_notifications).  The defaults follow docs/security.md "Default
 * limits".
 */
#define WK_SUB_NOTIFS_MAX_DEF     1000      /* per Publish response */
#define WK_SUB_RETX_DEF           20        /* per subscription */
#define WK_MI_QUEUE_MAX_DEF       1000      /* MaxMonitoredItemQueueSize */
#define WK_MI_EVQ_MAX_DEF         1000      /* limits.max_event_queue_size */
#define WK_MI_EVQ_DEF             100       /* default_event_queue_size */
#define WK_EV_SELECT_MAX          128       /* select clauses of one
                                               * filter */
#define WK_EV_FILTER_MAX          8192      /* bytes of a compiled
                                               EventFilter */
#define WK_EV_WHERE_MAX           256       /* where elements, hard cap */
#define WK_EV_WHERE_DEF           64        /* max_filter_elements */
#define WK_SUB_KEEPALIVE_MAX_DEF  100
#define WK_SUB_KEEPALIVE_DEF      10        /* asked 0 */
#define WK_SUB_LIFETIME_MAX_DEF   15000
#define WK_SUB_CELLS_PER_ITEM     4         /* queued-notification budget */
#define WK_SUB_RCELLS_PER_MSG     16        /* ~1 KiB per kept message */
#define WK_SUB_INTERVAL_MAX_MS    3600000.0 /* publishing interval <= 1 h */
#define WK_SUB_LIFETIME_MS_MAX    3600000.0 /* lifetime x interval <= 1 h
                                               (unless 3 x keep-alive is
                                               longer) */
#define WK_MI_SAMPLING_MAX_MS     86400000.0  /* 24 h */
#define WK_MI_READ_MIN_MS         1000.0    /* attributes polled by Read */
#define WK_SUB_ACKS_MAX           512       /* acknowledgements per Publish */
#define WK_SUB_NOTICES            4         /* status changes per session */

/* Part 4 §5.12.1.5: InfoType DataValue (0x400) | Overflow (0x80). */
#define WK_OVERFLOW_BITS          0x0480u

/* The limits in force (snapshot + defaults above), fixed at init. */
struct wk_sub_limits {
    uint32_t max_subs;
    uint32_t max_subs_per_session;
    uint32_t max_items;
    uint32_t max_items_per_sub;
    uint32_t max_items_per_call;
    uint32_t max_publish;               /* queued per session */
    uint32_t max_notifs;                /* per Publish response */
    uint32_t max_retx;                  /* per subscription */
    uint32_t max_queue;                 /* per monitored item */
    uint32_t max_evq;                   /* per event item */
    uint32_t def_evq;                   /* an event item asking 0 */
    uint32_t max_where;                 /* where clause elements */
    uint32_t max_keepalive;
    uint32_t max_lifetime;
    uint32_t cells;
    uint32_t rcells;
    uint32_t links;
    double   min_interval;              /* publishing, ms */
    double   min_sampling;              /* ms */
};

/* ---------------------------------------------------------- cells */

#define WK_CELL_SIZE 64
#define WK_CELL_DATA (WK_CELL_SIZE - 4)

struct wk_cell {
    uint32_t next;                      /* next cell of the chain, WK_NIL */
    uint8_t  data[WK_CELL_DATA];
};
static_assert(sizeof(struct wk_cell) == WK_CELL_SIZE, "cell");

/*
 * A pool of cells: a stack of free indices (LIFO: the cell freed last, hot
 * in the cache, is taken first; and taking one reads no cell, so a cold
 * cell costs no stall), then never-used cells from hw up.
 */
struct wk_cells {
    struct wk_cell *c;
    uint32_t       *stack;              /* free indices [0, nfree) */
    uint32_t        nfree;
    uint32_t        cap;
    uint32_t        hw;                 /* cells [hw, cap) never used */
    uint32_t        used;
    uint64_t        refused;            /* allocations that found no room */
};

/*
 * A value: a cell chain whose first bytes are this header, then the
 * DataValue exactly as the record had it (timestamps are stripped per
 * timestampsToReturn when a message is written).  Immutable once made;
 * freed when the last queue entry lets go of it.
 */
struct wk_val {
    uint32_t refs;                      /* queue entries holding it */
    uint32_t len;                       /* DataValue bytes */
    uint32_t vend;                      /* offset after the Variant */
};
/* DataValue bytes a value's first cell holds after its header. */
#define WK_VAL_INLINE (WK_CELL_DATA - sizeof(struct wk_val))

/* A queued notification of one item: 8 bytes. */
struct wk_qent {
    uint32_t val;                       /* the value's first cell, and: */
    uint32_t next;                      /* next entry of the queue */
};
#define WK_QE_OVERFLOW 0x80000000u      /* in val: set the Overflow bit */
#define WK_QE_VAL      0x7FFFFFFFu

/* The entry pool: a stack of free indices, then never-used from hw. */
struct wk_ents {
    struct wk_qent *e;
    uint32_t       *stack;
    uint32_t        nfree;
    uint32_t        cap;
    uint32_t        hw;
    uint32_t        used;
    uint64_t        refused;
};

/* Chain len bytes (hdr first, then data); the first cell or WK_NIL. */
uint32_t wk_cells_put(struct wk_cells *p, const void *hdr, uint32_t hlen,
                      const void *data, uint32_t len);
/* Copy len bytes from offset off of chain i into dst. */
void wk_cells_get(const struct wk_cells *p, uint32_t i, uint32_t off,
                  void *dst, uint32_t len);
/* Free chain i (WK_NIL: nothing). */
void wk_cells_free(struct wk_cells *p, uint32_t i);
/* The first cell of chain i (its header bytes start data[]). */
static inline struct wk_cell *
wk_cell(const struct wk_cells *p, uint32_t i)
{
    return &p->c[i];
}

/* ------------------------------------------------- monitored items */

/* struct wk_mi.flags */
#define WK_MI_USED          0x0001
#define WK_MI_DISCARD_OLD   0x0002
#define WK_MI_HAS_LAST      0x0004  /* lastv/last_status are set */
#define WK_MI_READY         0x0008  /* on the subscription's ready list */
#define WK_MI_TRIGGERED     0x0010  /* a trigger released its queue */
#define WK_MI_READ          0x0020  /* sampled through the Read service */
#define WK_MI_OVERFLOW      0x0040  /* next value carries the Overflow bit */
#define WK_MI_LAST_REF      0x0080  /* last.ref: array chain (deadband) */
#define WK_MI_ON_SLOT       0x0100  /* on slot_head[slot]'s list */
#define WK_MI_ON_SAMPLED    0x0200  /* on the sampled list */
#define WK_MI_LINKED        0x0400  /* links != WK_NIL */
#define WK_MI_EVENT         0x0800  /* an event item (monitem_event.c):
                                     * range holds its compiled filter,
                                     * lpos its place on ev_head; its
                                     * queue entries hold EventFieldList
                                     * bodies, WK_QE_OVERFLOW marks the
                                     * EventQueueOverflow event, and
                                     * WK_MI_OVERFLOW says one is queued */

/* lastv[0]: bytes kept inline (0..15), or this: a keyed hash follows. */
#define WK_MI_LASTV_HASH    0xFF

/*
 * One monitored item: 128 bytes, two cache lines.  The first holds all a
 * value of its slot needs on the fan-out path (filter, stale check,
 * queue tail, sampling interval), so K items watching one node cost K
 * lines per change; the second what publishing, the services and the
 * deadband use.  Lists (indices):
 *   lpos         where the item is in slot_head[slot]'s chunks, or the
 *                sampled list's (WK_MI_READ items not on a slot)
 *   snext/sprev  its subscription's items; free list through snext
 *   rnext        its subscription's ready list
 */
struct wk_mi {
    /* line 1: the fan-out path */
    uint32_t pad0;
    uint32_t sub;               /* index in subs[] */
    uint32_t qtail;             /* newest queued entry (ents[]) */
    uint32_t interval_ms;       /* revised sampling interval, 0: any */
    uint32_t last_status;
    uint16_t flags;             /* WK_MI_* */
    uint16_t qlen, qsize;
    uint8_t  mode;              /* MonitoringMode */
    uint8_t  ttr;               /* TimestampsToReturn */
    uint8_t  trigger;           /* DataChangeTrigger */
    uint8_t  dbtype;            /* DeadbandType */
    uint8_t  pad1[2];
    uint64_t next_ms;           /* the current sampling interval ends */
    int64_t  wm_ts;             /* newest server timestamp taken */
    uint8_t  lastv[16];         /* last value: inline bytes or a hash */
    /* line 2: publishing, services, deadband */
    uint32_t id;                /* kept when free: next id's generation */
    uint32_t client_handle;
    uint32_t node;              /* node index */
    uint32_t slot;              /* value slot, or SHM_NONE */
    uint32_t lpos;              /* chunk * 8 + place in it; WK_NIL */
    uint32_t snext, sprev;
    uint32_t rnext;
    uint32_t qhead;             /* oldest queued entry (ents[]) */
    uint32_t range;             /* IndexRange text (a cell chain), WK_NIL */
    uint32_t links;             /* SetTriggering links (links[] index) */
    uint8_t  attr;              /* AttributeId */
    uint8_t  pad2[3];
    union {
        double   num;           /* deadband: last reported number */
        int64_t  src_ts;        /* StatusValueTimestamp: last source ts */
        uint32_t ref;           /* deadband on an array: its chain */
    } last;
    double   deadband;          /* absolute (Percent converted) */
};
static_assert(sizeof(struct wk_mi) == 128, "monitored item size");
static_assert(offsetof(struct wk_mi, id) == 64, "fan-out fields on line 1");

/*
 * A list of items (a slot's, the sampled ones): its head is WK_NIL (no
 * item), WK_LIST_ONE | the item (one item: no chunk, nothing more to
 * load), or the first of its chunks.  The first chunk is the only one
 * that may have room, its items at the front (WK_NIL after them); every
 * chunk after it is full.  An item joins the first chunk (a new one when
 * it is full); one that leaves is replaced by the last item of the first
 * chunk; the last item of a list goes back into the head.
 */
#define WK_CHUNK_ITEMS 7
#define WK_LIST_ONE    0x80000000u  /* item and chunk indices < 2^28 */

struct wk_chunk {
    uint32_t next;
    uint32_t it[WK_CHUNK_ITEMS];
};
static_assert(sizeof(struct wk_chunk) == 32, "chunk: half a line");

/* One SetTriggering link: triggering item -> the item `to` (an id). */
struct wk_mi_link {
    uint32_t to;
    uint32_t next;
};

/* ----------------------------------------------------- subscriptions */

enum wk_sub_state {
    WK_SUB_NORMAL = 0,          /* the timer runs; nothing waits */
    WK_SUB_LATE                 /* a message waits for a Publish request */
};

/* A NotificationMessage kept for Republish. */
struct wk_retx {
    uint32_t seq;
    uint32_t len;               /* notification body bytes */
    uint32_t off;               /* its struct wk_rmsg in the store */
    uint32_t type;              /* the body's DefaultBinary encoding id */
    uint32_t park;              /* its copy in the park (wk_park_keep's
                                 * handle, worker/park.h), which is then
                                 * its body (wk_retx_body) */
    int64_t  time;              /* publishTime */
};

/*
 * The retransmission store: the bodies of every kept message of the
 * worker in one byte ring, in the order they were kept, each after its
 * header (a record of `size` bytes, a multiple of WK_RMSG_ALIGN):
 *
 *   buf: | hdr body | hdr(dropped) body | hdr body |  ...  | skip |
 *          ^head                                  ^tail (mod cap)
 *
 * A message is copied in with one memcpy and let go in O(1) (its header's
 * sub becomes WK_NIL); head moves over let-go records.  When the ring is
 * full the oldest message kept by the worker goes (its subscription's
 * oldest), whoever owns it.  A record never wraps: the end of the buffer
 * that is too short for the next one becomes a skip record.
 */
#define WK_RMSG_ALIGN 16u

struct wk_rmsg {
    uint32_t size;              /* header + body, padded */
    uint32_t sub;               /* owner (subs[] index), WK_NIL: let go */
    uint32_t seq;
    uint32_t len;               /* body bytes */
};
static_assert(sizeof(struct wk_rmsg) == WK_RMSG_ALIGN, "rmsg header");

struct wk_rstore {
    uint8_t  *buf;
    uint32_t  cap;              /* bytes, a multiple of WK_RMSG_ALIGN */
    uint64_t  head, tail;       /* free-running byte offsets */
};

/*
 * One subscription.  The publishing timer ticks at t0 + k * period; k_done
 * is the last tick accounted for, so a timer that sleeps over many ticks
 * (keep-alive, late) counts them all when it wakes.
 */
struct wk_sub {
    uint32_t id;                /* kept when free */
    uint32_t sess;              /* session index, WK_NIL: orphan */
    uint32_t snext;             /* the session's list; free list */
    uint64_t due;               /* ms: when the timer must look again */
    uint64_t t0;                /* ms: tick 0 */
    uint64_t k_done;            /* ticks accounted for */
    uint64_t late_since;        /* ms: became LATE */
    double   interval;          /* revised publishing interval, ms */
    uint32_t period;            /* ms, ceil(interval) */
    uint32_t keepalive;         /* revised max keep-alive count */
    uint32_t lifetime;          /* revised lifetime count */
    uint32_t max_notifs;        /* per NotificationMessage */
    uint32_t idle;              /* ticks since the last message */
    uint32_t life_left;         /* ticks left without client activity */
    uint32_t seq;               /* last sequence number used, 0 none */
    uint32_t nitems;
    uint32_t ihead;             /* its items */
    uint32_t rhead, rtail;      /* ready items (queues to report) */
    uint32_t nqueued;           /* notifications ready to report */
    uint16_t retx_head;         /* oldest kept message in retx[] */
    uint16_t retx_n;
    uint8_t  priority;
    uint8_t  state;             /* enum wk_sub_state */
    uint8_t  enabled;           /* publishingEnabled */
    uint8_t  sent;              /* MessageSent */
    uint8_t  user;              /* owner identity (enum wk_session_user) */
    uint8_t  used;
    uint8_t  hot;               /* the last message carried notifications:
                                 * the next tick is looked at (changes go
                                 * on, most likely; the wake_by handler) */
    uint8_t  ev_next;           /* both kinds ready: events go next */
    uint8_t  moved;             /* came from another worker
                                 * (worker/sub_roam.c): its id, and its
                                 * items' ids, do not locate them here */
    struct wk_retx *retx;       /* [lim.max_retx] */
    uint32_t erhead, ertail;    /* ready event items */
    uint32_t nevq;              /* of nqueued: event notifications */
};

/* ------------------------------------------------- session side */

/* A queued Publish request (40 + 4 + 128 bytes). */
struct wk_pubreq {
    struct wk_conn_ref ref;
    uint32_t           nacks;
    uint8_t            acks[WK_SUB_ACKS_MAX / 4];   /* 2-bit results */
};

/* The 2-bit acknowledgement results of struct wk_pubreq.acks. */
#define WK_ACK_GOOD        0
#define WK_ACK_SUB         1       /* BadSubscriptionIdInvalid */
#define WK_ACK_SEQ         2       /* BadSequenceNumberUnknown */

/* A status change to tell a session (its subscription is gone or moved). */
struct wk_sub_notice {
    uint32_t  sub_id;
    uint32_t  seq;
    ua_status status;
};

/* Per session slot: whose it is, its subscriptions, its Publish queue. */
struct wk_subsess {
    struct ua_guid       token;         /* the session's; zero: unused */
    uint32_t             shead;         /* its subscriptions */
    uint32_t             nsubs;
    uint32_t             qhead;         /* ring over pub[lim.max_publish] */
    uint32_t             qlen;
    struct wk_pubreq    *pub;
    struct wk_sub_notice notices[WK_SUB_NOTICES];
    uint32_t             nnotices;
    uint32_t             serve_next;    /* the run's list of sessions */
    uint8_t              live;
    uint8_t              touched;       /* on the run's list */
    uint8_t              user;
    uint8_t              pad;
};

/* A subscription in a hand-over to another worker (worker/sub_roam.c). */
struct wk_sub_leaving {
    uint32_t       id;              /* 0: free */
    uint32_t       idx;             /* in subs[] */
    uint32_t       sess;            /* the session entry it left */
    struct ua_guid token;           /* ... and that session's token */
};
#define WK_SUB_ROAM_MOVING 16

/* ------------------------------------------------------------ all */

#define WK_SUB_PERIODS 8          /* distinct publishing intervals tracked */

/* The time sampling intervals count from: the changes' (the link's time
 * handler), else now. */
#define WK_SUB_NOW(st) ((st)->rec_ms != 0 ? (st)->rec_ms : (st)->w->now_ms)

struct wk_subs {
    struct wk_worker     *w;
    struct wk_sub_limits  lim;
    /* Subscriptions. */
    struct wk_sub        *subs;
    uint32_t              subs_hw, subs_free, nsubs;
    uint8_t               sub_bits;
    struct wk_retx       *retx_all;
    struct wk_timerheap   timers;       /* publishing timers, by index */
    struct wk_subsess    *ss;
    uint32_t              nss;
    struct wk_pubreq     *pub_all;
    uint32_t              serve_head;   /* sessions to serve, WK_NIL */
    /* Monitored items. */
    struct wk_mi         *items;        /* 64-byte aligned (in items_mem) */
    void                 *items_mem;    /* what wk_alloc gave */
    void                 *cells_mem;    /* cells.c likewise */
    uint32_t              items_hw, items_free, nitems;
    uint8_t               item_bits;
    uint32_t             *slot_head;
    struct wk_chunk      *chunks;       /* [max_items / 2 + 1], aligned */
    void                 *chunks_mem;
    uint32_t              chunks_hw, chunks_free;
    uint32_t              nslots;
    uint32_t              sampled_head;
    uint32_t              ev_head;      /* event items (a list); our
                                           event-interest bit is set
                                           exactly while it is not empty */
    struct shm_fo_ev_field *evf;        /* [SHM_FO_EV_FIELDS_MAX] */
    uint8_t              *evc;          /* [WK_EV_FILTER_MAX]: a compiled
                                           filter, copied out of cells */
    uint32_t              n_server;     /* node index of i=2253 */
    uint32_t              rt_hes;       /* reftypes HasEventSource, */
    uint32_t              rt_hc;        /* HasComponent (SHM_NONE) */
    uint64_t              ev_seq;       /* EventIds of our own events */
    uint32_t            (*conds)[2];    /* the conditions' nodes and their
                                           Retain slots, found at the
                                           first ConditionRefresh */
    uint32_t              nconds;
    bool                  conds_known;  /* conds is the list */
    struct ua_scalar     *evv;          /* [WK_EV_WHERE_MAX]: where results */
    uint64_t              sampled_due;  /* ms, UINT64_MAX: none */
    struct wk_cells       cells;
    struct wk_ents        ents;
    struct wk_rstore      rstore;
    struct wk_mi_link       *links;
    uint32_t              links_hw, links_free, nlinks;
    /* Scratch: message bodies, Read results, comparisons. */
    uint8_t              *out;
    size_t                out_cap;
    uint8_t              *tmp;
    size_t                tmp_cap;
    struct ua_arena       arena;
    uint8_t              *arena_buf;
    ua_status            *acks_out;     /* [WK_SUB_ACKS_MAX] */
    uint32_t             *seqs_out;     /* [lim.max_retx] */
    /* The items whose queue the last wk_mi_emit emptied, and their
     * watermarks, as runs of ids (the park's progress, worker/park.h);
     * sent_cap 0: no park, none noted. */
    struct wk_park_run   *sent;         /* [sent_cap] */
    uint32_t              sent_cap, nsent;
    uint64_t              key[2];       /* value hashes (SipHash) */
    /* The publishing timer (libevent), when there is a loop. */
    struct event          timer;
    bool                  timer_on;
    bool                  timer_set;
    uint64_t              timer_due;
    /* Publishing intervals in use (ticks are their multiples): the next
     * tick of any subscription, for the link's wake_by handler.  per_over
     * counts subscriptions whose interval found no entry (then: no
     * promise). */
    uint32_t              per_ms[WK_SUB_PERIODS];
    uint32_t              per_n[WK_SUB_PERIODS];
    uint32_t              per_over;
    /* The time of the changes being handed over (the link's time
     * handler), 0: now. */
    uint64_t              rec_ms;
    uint64_t              allocations;
    uint64_t              bytes;        /* asked of wk_alloc by init */
    /* Counters (tests, stats). */
    uint64_t              dropped;      /* notifications lost to pools */
    uint64_t              dropped_shown;    /* ... in the row so far */
    uint64_t              stale;        /* records older than a taken one */
    /* Subscriptions that came from another worker (their ids carry its
     * slot): an open-addressing table of their indices in subs[] by id
     * (UINT32_MAX: empty; at least twice max_subs, a power of two, so
     * probes stay short), wk_sub_find's second look. */
    uint32_t              nmoved;
    uint32_t             *moved_tab;
    uint32_t              moved_cap;
    /* The events of a move's window (worker/sub_roam.c): while a claim
     * is out (evwin_on) every event record that reaches us is kept in
     * evwin ([u32 len][record] each, evwin_cap bytes: limits.
     * session_move_event_bytes; those past it only counted), so that the
     * items of what arrives get the ones its old worker did not see.
     * ev_last: the EventId of the last event this worker's event items
     * were shown (packed with them). */
    uint8_t              *evwin;
    uint32_t              evwin_cap, evwin_len, evwin_dropped;
    bool                  evwin_on;
    bool                  ev_last_set;
    uint8_t               ev_last[16];
    struct wk_sub_leaving moving[WK_SUB_ROAM_MOVING];
};

/* The state of w (NULL before wk_sub_init). */
static inline struct wk_subs *
wk_subs_get(struct wk_worker *w)
{
    return w->subs;
}
/* The state of w, initialised on first use; NULL when out of memory. */
struct wk_subs *wk_subs_need(struct wk_worker *w);

/* ------------------------------------------------- sub.c */

struct wk_sub *wk_sub_at(struct wk_subs *st, uint32_t idx);
/* The subscription id names, in use, or NULL. */
struct wk_sub *wk_sub_find(struct wk_subs *st, uint32_t id);
/* sub (its id set) came from another worker: marked `moved` and entered
 * in the table wk_sub_find looks in (wk_sub_delete takes it out). */
void wk_sub_moved_add(struct wk_subs *st, struct wk_sub *sub);
/* The session entry of s (reset when the slot changed hands). */
struct wk_subsess *wk_sub_ss(struct wk_subs *st, struct wk_session *s);
/* The subscription id of s's session, or NULL (BadSubscriptionIdInvalid). */
struct wk_sub *wk_sub_of_session(struct wk_subs *st, struct wk_session *s,
                                 uint32_t id);
/* Client activity on sub: its lifetime counter starts over. */
void wk_sub_touch(struct wk_subs *st, struct wk_sub *sub);
/* sub's ready count went from 0 to more: look at it at its next tick. */
void wk_sub_ready(struct wk_subs *st, struct wk_sub *sub);

/*
 * The link's time and wake_by handlers (worker/link.h; arg: st): the
 * time the changes being handed over were applied at (0: now); the time
 * by which the publishing timer wakes anyway, 0: none (see sub.c).
 */
void wk_sub_on_time(void *arg, uint64_t ms);
uint64_t wk_sub_wake_by(void *arg);

/* Revisions (pure; unit-tested). */
double wk_sub_revise_interval(const struct wk_sub_limits *l, double req);
uint32_t wk_sub_revise_keepalive(const struct wk_sub_limits *l,
                                 uint32_t req);
uint32_t wk_sub_revise_lifetime(const struct wk_sub_limits *l, double interval,
                                uint32_t keepalive, uint32_t req);
uint32_t wk_sub_revise_notifs(const struct wk_sub_limits *l, uint32_t req);

/*
 * What the services (worker/svc_sub.c) change, the state machine's part
 * of each; the services check the request, look the subscription up
 * (wk_sub_of_session) and fill the response.
 */
/* A new subscription for session entry e, not yet running; NULL when e
 * or the worker has as many as allowed (BadTooManySubscriptions). */
struct wk_sub *wk_sub_open(struct wk_subs *st, struct wk_subsess *e);
/* sub publishes every iv ms (revised): its ticks are counted up to now
 * first; a new interval starts a new timer, ticking from now. */
void wk_sub_set_interval(struct wk_subs *st, struct wk_sub *sub, double iv);
/* sub (from wk_sub_open, its interval and counts set) joins e and runs. */
void wk_sub_start(struct wk_subs *st, struct wk_subsess *e,
                  struct wk_sub *sub);
/* SetPublishingMode on sub (client activity). */
void wk_sub_set_enabled(struct wk_subs *st, struct wk_sub *sub,
                        bool enabled);
/* Delete sub: its items, kept messages, timer and session link. */
void wk_sub_delete(struct wk_subs *st, struct wk_sub *sub);
/* After deletions from e: e's waiting Publish requests are answered
 * BadNoSubscription when it has nothing left to publish. */
void wk_sub_deleted_check(struct wk_subs *st, struct wk_subsess *e);
/* The slot e's next Publish request takes (a full queue answers its
 * oldest BadTooManyPublishRequests first, docs/security.md case 78); the
 * caller fills ref and the acknowledgement results, then wk_sub_pub_push
 * queues it, or leaves it unqueued. */
struct wk_pubreq *wk_sub_pub_slot(struct wk_subs *st, struct wk_subsess *e);
/* The slot of wk_sub_pub_slot is filled: queue it, serve e. */
void wk_sub_pub_push(struct wk_subs *st, struct wk_subsess *e);
/* One SubscriptionAcknowledgement of e's session (Part 4 §5.13.5): the
 * message let go; WK_ACK_*. */
uint8_t wk_sub_ack(struct wk_subs *st, struct wk_subsess *e,
                   uint32_t sub_id, uint32_t seq);
/* TransferSubscriptions of sub to session s (Part 4 §5.13.7; the caller
 * checked the user): its old session, when alive, gets a
 * StatusChangeNotification GoodSubscriptionTransferred.  Good or
 * BadTooManySubscriptions. */
ua_status wk_sub_move(struct wk_subs *st, struct wk_sub *sub,
                      struct wk_session *s);
/* sub leaves its session for another worker (worker/sub_roam.c): an
 * orphan until wk_sub_handed. */
void wk_sub_detach(struct wk_subs *st, struct wk_sub *sub);
/*
 * The hand-over of sub, detached from session entry sess (its token),
 * ended: adopted, the old session (when still there) gets a
 * StatusChangeNotification GoodSubscriptionTransferred and sub is
 * deleted here; not adopted, it goes back to that session (or stays an
 * orphan until its lifetime ends).
 */
void wk_sub_handed(struct wk_subs *st, struct wk_sub *sub, uint32_t sess,
                   const struct ua_guid *token, bool adopted);
/* Is sub in a hand-over to another worker (worker/sub_roam.c)? */
bool wk_sub_roam_moving(const struct wk_subs *st, const struct wk_sub *sub);
/* An event record reached us while a claim is out: kept (or counted). */
void wk_sub_roam_keep(struct wk_subs *st, const uint8_t *rec, uint32_t len);
/* The handlers wk_sub_roam_init registers (tests drive a move with them
 * in one worker). */
struct wk_roam_handlers;
void wk_sub_roam_handlers(struct wk_worker *w, struct wk_roam_handlers *h);
/* sub may have a message waiting: serve its session's Publish queue now;
 * arm the timer. */
void wk_sub_kick(struct wk_subs *st, struct wk_sub *sub);

/* ------------------------------------------------- retx.c */

/* The store's size for the limits (bytes, a multiple of WK_RMSG_ALIGN). */
uint32_t wk_retx_store_cap(const struct wk_sub_limits *l);
/* Keep a sent message (seq, publishTime, body type and bytes, the
 * handle of its copy in the park) for sub; false when it cannot be kept
 * (the copy in the park is let go). */
bool wk_retx_add(struct wk_subs *st, struct wk_sub *sub, uint32_t seq,
                 int64_t time, uint32_t type, const uint8_t *body,
                 uint32_t len, uint32_t park);
/* The position of seq in sub's queue (0 = oldest), or -1. */
int wk_retx_find(const struct wk_subs *st, const struct wk_sub *sub,
                 uint32_t seq);
/* Let the k-th oldest message of sub go. */
void wk_retx_drop(struct wk_subs *st, struct wk_sub *sub, uint32_t k);
/* The sequence numbers sub keeps, oldest first, into out; how many. */
int32_t wk_retx_avail(struct wk_subs *st, const struct wk_sub *sub,
                      uint32_t *out);
/* The body of kept message r. */
const uint8_t *wk_retx_body(const struct wk_subs *st,
                            const struct wk_retx *r);

/* ------------------------------------------------- monitem_filter.c */

/* A record (or a value read) taken apart; p points at the DataValue. */
struct wk_rec {
    const uint8_t *p;
    uint32_t       len;
    uint32_t       vend;            /* offset after the Variant */
    uint32_t       st_len;          /* 4 when a status is there */
    uint32_t       src_off, src_len;    /* SourceTimestamp [+ ps] */
    uint32_t       srv_off, srv_len;    /* ServerTimestamp [+ ps] */
    uint8_t        mask;
    ua_status      status;
    int64_t        src_ts;
    int64_t        srv_ts;
    uint64_t       key[2];          /* the Variant as struct wk_mi.lastv */
};

/* Take an encoded DataValue apart (from its tail) and make its key for
 * the value comparison (once per record, whatever the items); false: not
 * a DataValue. */
bool wk_mi_parse(const struct wk_subs *st, const uint8_t *p, uint32_t len,
                 struct wk_rec *r);
/*
 * Rewrite the DataValue d[len] in place for timestampsToReturn ttr and,
 * when ovf, the Overflow InfoBits (inserting a status when there is none:
 * d must have 4 bytes of room past len).  The new length.
 */
uint32_t wk_mi_shape(uint8_t *d, uint32_t len, uint32_t vend, uint8_t ttr,
                     bool ovf);
/* The DataChangeFilter of mi on r; remember r as the last value taken. */
bool wk_mi_passes(struct wk_subs *st, const struct wk_mi *mi,
                  const struct wk_rec *r);
void wk_mi_remember(struct wk_subs *st, struct wk_mi *mi,
                    const struct wk_rec *r);

/* ------------------------------------------------- monitem_queue.c */

bool wk_mi_reportable(const struct wk_mi *mi);
void wk_mi_ready_del(struct wk_subs *st, struct wk_sub *sub,
                     struct wk_mi *mi);
/* mi's reportability changed from was: move its queue in or out of the
 * subscription's ready count and list. */
void wk_mi_counted(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
                   bool was);
/* Empty mi's queue. */
void wk_mi_purge(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi);
/* A smaller queueSize: drop what no longer fits (discard policy). */
void wk_mi_queue_trim(struct wk_subs *st, struct wk_sub *sub,
                      struct wk_mi *mi);
/*
 * Queue r for mi (queue semantics of Part 4 §5.12.1.5, the sampling
 * interval).  *vref: the value made of r so far (WK_NIL: none yet; made
 * here once and shared by every item that queues the same record).
 */
void wk_mi_enqueue(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
                   const struct wk_rec *r, uint32_t *vref, bool overflow);
/*
 * Record r of one slot to every item on the slot's list, its head c
 * (the fan-out path, once per record and worker): the common item
 * (REPORTING, no deadband, trigger StatusValue, no triggers, no
 * IndexRange, room in its queue) is filtered and queued inline; every
 * other one goes through wk_mi_take_any().  *vref as for wk_mi_enqueue().
 */
void wk_mi_fanout(struct wk_subs *st, uint32_t c, const struct wk_rec *r,
                  uint32_t *vref);
/* monitem.c: one record for one item, any item (the general path). */
void wk_mi_take_any(struct wk_subs *st, struct wk_mi *mi,
                    const struct wk_rec *r, uint32_t *vref);
/* The caller is done with the value it made for one record: freed when
 * no entry took it. */
void wk_val_done(struct wk_subs *st, uint32_t v);
/* from queued a value: linked SAMPLING items report theirs. */
void wk_mi_trigger(struct wk_subs *st, struct wk_sub *sub,
                   struct wk_mi *from);

/* ------------------------------------------------- monitem_queue.c: events */

/*
 * Queue the EventFieldList body b[len] (Int32 n, n Variants) for event
 * item mi (Part 4 §5.12.1.5 for events: a full queue loses its oldest
 * event (discardOldest) or the new one, and one EventQueueOverflow event,
 * ovf[ovf_len] (NULL: none made), stands for the loss at the front
 * (discardOldest) or the end of the queue, beyond queueSize; one at a
 * time).  is_ovf: b is such an event itself (events lost upstream).
 */
void wk_mi_event_enqueue(struct wk_subs *st, struct wk_sub *sub,
                         struct wk_mi *mi, const uint8_t *b, uint32_t len,
                         const uint8_t *ovf, uint32_t ovf_len, bool is_ovf);
/* A smaller queueSize for an event item: its oldest events go. */
void wk_mi_event_trim(struct wk_subs *st, struct wk_sub *sub,
                      struct wk_mi *mi);
/* sub's ready event notifications as an EventNotificationList body (Int32
 * n, n x (UInt32 clientHandle, the body)) into st->out, as wk_mi_emit. */
uint32_t wk_mi_emit_events(struct wk_subs *st, struct wk_sub *sub,
                           uint32_t max, size_t cap, size_t *len);

/* ------------------------------------------------- monitem_event.c */

/*
 * The EventFilter x of an event item on node (Part 4 §7.22.3), compiled
 * into a cell chain (*chain, WK_NIL when it failed; freed by the caller
 * with wk_cells_free): the item's status (Good, BadEventFilterInvalid,
 * BadMonitoredItemFilterUnsupported...) and, when something was wrong
 * with a clause, *fres an EventFilterResult in ctx's arena (NULL: none).
 */
ua_status wk_ev_filter(struct wk_subs *st, struct ua_arena *a,
                       const struct ua_extobj *x, uint32_t *chain,
                       struct ua_extobj *fres);
/*
 * The same compiled into st->evc only, *len bytes (the history's
 * ReadEventDetails, worker/svc_histevent.c, copies it out); the status
 * and *fres as wk_ev_filter().
 */
ua_status wk_ev_filter_compile(struct wk_subs *st, struct ua_arena *a,
                               const struct ua_extobj *x, uint32_t *len,
                               struct ua_extobj *fres);
/* Does the event pass the compiled filter evc's where clause? */
bool wk_ev_where_ok(struct wk_subs *st, const uint8_t *evc,
                    const struct shm_fo_ev *ev,
                    const struct shm_fo_ev_field *f, uint32_t nf);
/*
 * For each select clause of the compiled filter evc, the Variant bytes it
 * takes of the event: var[i] and vl[i] (var[i] NULL: the null Variant;
 * both arrays hold WK_EV_SELECT_MAX).  The number of clauses.
 */
uint32_t wk_ev_select(struct wk_subs *st, const uint8_t *evc,
                      const struct shm_fo_ev *ev,
                      const struct shm_fo_ev_field *f, uint32_t nf,
                      const uint8_t **var, uint32_t *vl);
/* A select clause / SimpleAttributeOperand checked (Part 4 §7.22.3):
 * its TypeDefinition node (SHM_NONE: BaseEventType) and path text
 * (path[SHM_FO_EV_PATH_MAX + 1]); Good or the clause's status. */
ua_status wk_ev_operand_path(struct wk_subs *st,
                             const struct ua_simple_attribute_operand *op,
                             uint32_t *type, char *path, uint16_t *plen);
/* Can node be monitored for events (an Object, SubscribeToEvents)? */
ua_status wk_ev_node_ok(struct wk_subs *st, uint32_t node);
/* Revised queueSize of an event item. */
uint16_t wk_ev_revise_queue(const struct wk_subs *st, uint32_t req);
/* Event item mi joins / leaves the worker's event list (interest bit). */
void wk_ev_add(struct wk_subs *st, struct wk_mi *mi);
void wk_ev_del(struct wk_subs *st, struct wk_mi *mi);
/* One event record for one item: where clause, select clauses, queue. */
void wk_ev_take(struct wk_subs *st, struct wk_mi *mi,
                const struct shm_fo_ev *ev,
                const struct shm_fo_ev_field *f, uint32_t nf);
/*
 * ConditionRefresh (i=3875) or ConditionRefresh2 (i=12912) on
 * ConditionType (i=2782), Part 9 §5.5.7-8, the server-local method
 * (worker/svc_call.h; arg: the worker): *r set, RefreshStart and
 * RefreshEnd events queued into the subscription's event items (or the
 * one item).
 */
void wk_ev_refresh_call(void *arg, struct wk_svc_ctx *ctx,
                        const struct ua_call_method_request *m,
                        struct ua_call_method_result *r);
/* Queue an EventQueueOverflow event for mi (events lost before it). */
void wk_ev_overflow(struct wk_subs *st, struct wk_mi *mi);
/* The EventId of an event's fields (16 bytes into id); false: none. */
bool wk_ev_id(const struct shm_fo_ev_field *f, uint32_t nf, uint8_t id[16]);
/* The link's event and events-lost handlers (worker/link.h; arg: st). */
void wk_ev_on_event(void *arg, const uint8_t *rec, uint32_t len);
void wk_ev_on_events_lost(void *arg);

/* ------------------------------------------------- monitem_where.c */

/*
 * Compile the where clause wc (Part 4 §7.7) into b[*pos..cap) (*pos
 * moves; *nwhere its elements): Good; BadMonitoredItemFilterInvalid
 * with res's element results (in a) naming the bad elements and
 * operands; BadEventFilterInvalid past limits.max_filter_elements or
 * when it does not fit.
 */
ua_status wk_ev_where_compile(struct wk_subs *st, struct ua_arena *a,
                              const struct ua_content_filter *wc, uint8_t *b,
                              uint32_t *pos, uint32_t cap, uint16_t *nwhere,
                              struct ua_content_filter_result *res);
/* Does the event pass the n compiled elements at w?  No allocation. */
bool wk_ev_where_eval(struct wk_subs *st, const uint8_t *w, uint32_t n,
                      const struct shm_fo_ev *ev,
                      const struct shm_fo_ev_field *f, uint32_t nf);

/* ------------------------------------------------- monitem.c */

/* The link's value and overflow handlers (worker/link.h; arg: st). */
void wk_mi_on_value(void *arg, uint32_t slot, const uint8_t *dv,
                    uint32_t len);
void wk_mi_on_overflow(void *arg, uint32_t slot);

/* The list helpers (monitem.c), shared with monitem_event.c. */
void wk_list_add(struct wk_subs *st, uint32_t *head, uint32_t idx);
void wk_list_del(struct wk_subs *st, uint32_t *head, uint32_t idx);
const uint32_t *wk_list_step(const struct wk_subs *st, uint32_t *i,
                             uint32_t one[2]);

int wk_mi_init(struct wk_subs *st);
void wk_mi_fini(struct wk_subs *st);
struct wk_mi *wk_mi_at(struct wk_subs *st, uint32_t idx);
/* The item id names in sub, or NULL. */
struct wk_mi *wk_mi_find(struct wk_subs *st, const struct wk_sub *sub,
                         uint32_t id);
/*
 * What the MonitoredItem services (worker/svc_monitem.c) change.  A new
 * item (wk_mi_new: NULL when sub or the worker has as many as allowed,
 * BadTooManyMonitoredItems) gets its parameters from the service, then
 * either wk_mi_drop (it never started) or wk_mi_start: it joins sub; an
 * event item joins the event list; any other item takes its values from
 * its slot or by sampling (wk_mi_from_slot) and reads its initial value
 * as Read does (rv's attribute, IndexRange, DataEncoding): a status that
 * makes the create fail deletes it and is returned, else it is queued
 * (unless disabled) and Good returned.
 */
struct wk_mi *wk_mi_new(struct wk_subs *st, struct wk_sub *sub);
void wk_mi_drop(struct wk_subs *st, struct wk_mi *mi);
ua_status wk_mi_start(struct wk_subs *st, struct wk_mi *mi,
                      struct wk_session *s,
                      const struct ua_read_value_id *rv);
/* Does attribute attr of node come from its value slot (pushed by the
 * broker) rather than by sampling? */
bool wk_mi_from_slot(const struct wk_subs *st, uint32_t node, uint32_t attr);
/* A new filter compares from the next value on: forget the last one. */
void wk_mi_forget_last(struct wk_subs *st, struct wk_mi *mi);
/* mi samples every ms from now on (a sampled item: next sample in ms). */
void wk_mi_set_interval(struct wk_subs *st, struct wk_mi *mi, uint32_t ms);
/* The Value of node read as Read does, decoded into *v (in st->arena,
 * valid until the next read): Good, or Bad when there is none. */
ua_status wk_mi_read_value(struct wk_subs *st, struct wk_session *s,
                           uint32_t node, struct ua_variant *v);
ua_status wk_mi_delete_id(struct wk_subs *st, struct wk_sub *sub,
                          uint32_t id);
void wk_mi_delete(struct wk_subs *st, struct wk_mi *mi);
ua_status wk_mi_set_mode(struct wk_subs *st, struct wk_sub *sub, uint32_t id,
                         int32_t mode, struct wk_session *s);
ua_status wk_mi_link(struct wk_subs *st, struct wk_sub *sub,
                     struct wk_mi *from, uint32_t to_id);
ua_status wk_mi_unlink(struct wk_subs *st, struct wk_mi *from,
                       uint32_t to_id);
/* Queue the current value of every enabled item of sub (ResendData,
 * sendInitialValues), whatever the filters say. */
void wk_mi_resend(struct wk_subs *st, struct wk_sub *sub,
                  struct wk_session *s);
/*
 * A monitored item rebuilt from another worker (worker/sub_roam.c; its
 * parameters, id, queue set): it joins its subscription and its slot (the
 * interest bit first) or the sampled or event list, without an initial
 * value.
 */
void wk_mi_resume(struct wk_subs *st, struct wk_mi *mi);
/*
 * After wk_mi_resume of a slot item: the change its old worker may have
 * missed in the move.  seq_then: the slot's sequence when the old worker
 * packed the item; behind: it had not taken the slot's newest value
 * then.  When the slot holds a value newer than any the item took, it is
 * taken (filters apply), with the Overflow bit when more than one change
 * may have come and gone.  Returns the changes known lost.
 */
uint64_t wk_mi_catch_up(struct wk_subs *st, struct wk_mi *mi,
                        struct wk_session *s, uint32_t seq_then,
                        bool behind);
/* The slot's change sequence now (even), and whether mi has not taken
 * the slot's newest value. */
/*
 * A parked item of a dead worker's session (worker/park.h): its slot's
 * current value, when newer than any it took, with the Overflow bit: 1
 * (changes were lost), else 0.
 */
uint64_t wk_mi_gap(struct wk_subs *st, struct wk_mi *mi);
/*
 * A logged change of slot (the change log, shm/park.h: ServerTimestamp
 * srv_ts, the record dv[len], NULL when the log kept its time only) for
 * every item on the slot that took nothing as new: taken (filters apply);
 * a record not kept gives the current value with the Overflow bit.  The
 * changes lost.
 */
uint64_t wk_mi_replay(struct wk_subs *st, uint32_t slot, int64_t srv_ts,
                      const uint8_t *dv, uint32_t len);
/* Inherited sessions in place: our bits on slots nobody here watches (a
 * dead predecessor's) cleared. */
void wk_mi_settle(struct wk_subs *st);
uint32_t wk_mi_slot_seq(const struct wk_subs *st, const struct wk_mi *mi,
                        bool *behind);
/* Append a queued notification to mi (b[len], vend; flag WK_QE_OVERFLOW
 * or 0) as it was queued on another worker.  False: no room. */
bool wk_mi_queue_put(struct wk_subs *st, struct wk_sub *sub,
                     struct wk_mi *mi, const uint8_t *b, uint32_t len,
                     uint32_t vend, uint32_t flag);

/* Sample the items that the Read service samples, when due. */
void wk_mi_sample_due(struct wk_subs *st);
/*
 * Write sub's ready notifications into st->out as a DataChangeNotification
 * body: at most max of them and at most cap bytes.  *len the body size;
 * returns how many went in (0: none ready).
 */
uint32_t wk_mi_emit(struct wk_subs *st, struct wk_sub *sub, uint32_t max,
                    size_t cap, size_t *len);

/* ------------------------------------------------- svc_sub.c, svc_monitem.c */

/* n operations of a service: none is BadNothingToDo, more than max
 * BadTooManyOperations (into rh; false then). */
bool wk_svc_sub_count(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
                      int32_t n, uint32_t max);
/* n zeroed elements of size bytes in the arena, or BadOutOfMemory. */
void *wk_svc_sub_array(struct wk_svc_ctx *ctx, struct ua_response_header *rh,
                       int32_t n, size_t size);
/* Register the MonitoredItem services (wk_svc_sub_init calls it). */
int wk_svc_monitem_init(struct wk_worker *w);

#endif /* WK_SUB_INT_H */
