/*
 * hist/events.h: event history (Part 11 §6.5.2 ReadEventDetails), in the
 * history store's LMDB environment (hist/store.h; docs/architecture.md
 * §5.5).  An event is kept as the record the broker encoded once for the
 * fan-out (shm/fanout.h SHM_FO_EVENT_SLOT: source, EventType, the fields'
 * Variant bytes by path), byte for byte: a HistoryRead applies its
 * EventFilter to exactly what a live event item sees.
 *
 * What is where (LMDB named databases):
 *   events   key: the event's Time (8 bytes, big-endian) + its id (8,
 *            big-endian: hs_events_id() of the EventId); value: one byte
 *            n, n notifier keys (8 bytes each, big-endian), the record.
 *            Every event once: what the Server object (HS_EV_ALL) shows.
 *   evnotif  key: a notifier key (hs_store_key() of its encoded NodeId)
 *            + Time + id (24 bytes); value: empty.  One entry for each
 *            notifier other than the Server that shows the event (the
 *            writer says which: its source and the notifiers above it);
 *            the n keys of the event's value name them, so dropping the
 *            event drops them too.
 *   meta     "evtotals": struct hs_ev_totals
 *
 * So an event is keyed by (notifier, time, EventId) and its bytes are
 * stored once.  Two events with the same Time and id are one: the second
 * is counted as a duplicate and skipped (an event delivered twice).
 *
 * Errors are negative errnos as in hist/store.h; -ENOSPC marks the store
 * full (values and events stop together, hs_store_full()).
 *
 * Concurrency: as the store: one thread per handle, one writing process;
 * readers of other processes never block the writer nor are blocked.
 */
#ifndef HS_EVENTS_H
#define HS_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define HS_EV_ALL            0u      /* the notifier of every event */
#define HS_EV_NOTIFIERS_MAX  16u     /* notifiers besides HS_EV_ALL */
#define HS_EV_REC_MAX        (1u << 20)  /* one record, at most */

struct hs_events;

/* One event to append. */
struct hs_ev_in {
    int64_t         time;       /* its Time field, DateTime ticks >= 0 */
    uint64_t        id;         /* hs_events_id() of its EventId */
    const uint64_t *notifiers;  /* the notifiers besides HS_EV_ALL */
    uint32_t        nnotifiers; /* <= HS_EV_NOTIFIERS_MAX */
    const uint8_t  *rec;        /* the event record */
    uint32_t        len;        /* 1..HS_EV_REC_MAX */
};

/* The events kept. */
struct hs_ev_totals {
    uint64_t events;
    uint64_t bytes;             /* keys and values of both databases */
    uint64_t refs;              /* evnotif entries */
    uint64_t dropped;           /* dropped by age or size */
    uint64_t duplicates;        /* appended again, skipped */
    uint64_t rejected;          /* bad input: no time, too large */
    int64_t  first;             /* the oldest event's Time, 0: none */
    int64_t  last;              /* the newest */
};

/* An event read: rec[len] points into the map until hs_evread_end(). */
struct hs_event {
    int64_t        time;
    uint64_t       id;
    const uint8_t *rec;
    uint32_t       len;
};

/* A read position: one notifier, one time range, one direction. */
struct hs_evread {
    struct hs_events *e;
    void             *txn;      /* MDB_txn, read-only */
    uint64_t          notifier;
    int64_t           lo, hi;   /* inclusive */
    bool              reverse;
    bool              open;
    bool              done;
    bool              pending;  /* the cursor is on the next candidate */
};

/*
 * The events of store s (the handle keeps s; close this first).  A writer
 * creates the databases; a reader of a store whose writer has not made
 * them yet finds no events until it has.  NULL with the reason.
 */
struct hs_events *hs_events_open(struct hs_store *s, char *err,
                                 size_t errlen);
void hs_events_close(struct hs_events *e);

/*
 * The key of the notifier whose encoded NodeId (Part 6 §5.2.2.9) is
 * nodeid[len]: HS_EV_ALL for the Server object (i=2253), else
 * hs_store_key().
 */
uint64_t hs_events_notifier(const uint8_t *nodeid, size_t len);

/* The 64-bit id of an EventId's bytes (FNV-1a, as hs_store_key()). */
uint64_t hs_events_id(const uint8_t *eventid, size_t len);

/*
 * Writer: append n events in one write transaction.  An event with a
 * negative time, an empty or too large record or too many notifiers is
 * counted in rejected; one whose (Time, id) is kept already in
 * duplicates.  0, or -ENOSPC (nothing of the batch kept; the store full),
 * -EIO.
 */
int hs_events_append(struct hs_events *e, const struct hs_ev_in *in,
                     size_t n);

/*
 * Writer: drop the events whose Time is before now - retention
 * (retention 0: none by age), then the oldest while the events take more
 * than max_bytes (0: no limit); *n dropped.  Runs on a full store.
 */
int hs_events_prune(struct hs_events *e, int64_t now, int64_t retention,
                    uint64_t max_bytes, uint64_t *n);

/* The totals (first and last from the database itself). */
int hs_events_totals(struct hs_events *e, struct hs_ev_totals *t);

/*
 * Readers.  hs_evread_begin() opens a snapshot (a recycled read-only
 * transaction: no allocation after the first); hs_evread_seek() positions
 * r at notifier's events (HS_EV_ALL: every event) with lo <= Time <= hi,
 * oldest first or newest first, strictly after (in the reading direction)
 * the event at (after_time, after_id) when after is true;
 * hs_evread_next() gives the next: 0, -ENOENT at the end, -EIO.  A store
 * without events yet reads as empty.
 */
int hs_evread_begin(struct hs_events *e, struct hs_evread *r);
int hs_evread_seek(struct hs_evread *r, uint64_t notifier, int64_t lo,
                   int64_t hi, bool reverse, bool after, int64_t after_time,
                   uint64_t after_id);
int hs_evread_next(struct hs_evread *r, struct hs_event *ev);
void hs_evread_end(struct hs_evread *r);

#endif /* HS_EVENTS_H */
