/*
 * broker/event.h: OPC UA events made by the broker (Part 5 §6.4.2
 * BaseEventType), encoded once into an event record (shm/fanout.h
 * SHM_FO_EVENT_SLOT) and handed to the value path (bk_value_event, after
 * the changes of its batch before it) and the fan-out, which sends it to
 * every worker with event interest.  Sources: the feed's `event=` lines
 * (broker/feed.c, docs/feed.md) and the workers' own events (audit: their
 * SHM_FO_EVENT records, broker/request.c).
 *
 * A record is built in a caller's buffer: bk_event_begin(), any fields
 * (bk_event_field: a path text like "0:Severity" or "2:Temperature" and a
 * Variant, encoded here), then bk_event_std() for the BaseEventType fields
 * the caller did not give.  No allocation.
 */
#ifndef BK_EVENT_H
#define BK_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/types.h"
#include "shm/fanout.h"
#include "shm/nodestore.h"

/* A record being built. */
struct bk_event {
    uint8_t  *buf;
    uint32_t  cap;
    uint32_t  len;
    uint32_t  nfields;
    bool      full;             /* a field did not fit: do not send */
    /* BaseEventType fields given so far (bk_event_std adds the others). */
    bool      has_time, has_receive, has_message, has_severity;
    bool      has_source_name;
};

/* Start an event of type (node index) from source (node index). */
void bk_event_begin(struct bk_event *e, uint8_t *buf, uint32_t cap,
                    uint32_t source, uint32_t type);

/*
 * Add the field path[plen] (BrowseName text, see shm/fanout.h) = v.  The
 * standard fields 0:Time, 0:ReceiveTime, 0:Message, 0:Severity and
 * 0:SourceName are remembered as given.  0; -ENOSPC when the record is
 * full (or has SHM_FO_EV_FIELDS_MAX fields); -EINVAL for a path too long
 * or a Variant that does not encode; -EEXIST for a field given twice.
 */
int bk_event_field(struct bk_event *e, const char *path, size_t plen,
                   const struct ua_variant *v);

/*
 * The BaseEventType fields not given yet: EventId (16 unique bytes),
 * EventType and SourceNode (the NodeIds of begin's nodes), SourceName
 * (the source's BrowseName), Time and ReceiveTime (now), Message (empty),
 * Severity (severity).  0 or the first error of bk_event_field().
 */
int bk_event_std(struct bk_event *e, const struct shm_nodestore *ns,
                 int64_t now, uint16_t severity);

/* 16 bytes no other event of this broker has (a counter, scrambled). */
void bk_event_id(uint8_t id[16]);

/* Node i's NodeId (identifier bytes point into the store). */
void bk_event_nodeid(const struct shm_nodestore *ns, uint32_t i,
                     struct ua_nodeid *out);

#endif /* BK_EVENT_H */
