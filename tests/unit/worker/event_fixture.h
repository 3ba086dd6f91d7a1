/*
 * tests/unit/worker/event_fixture.h: event records as the broker makes
 * them, for the worker's event tests (check_monitem_event.c,
 * check_monitem_where.c) and tests/bench/bench_sub.c, built from the
 * record format of shm/fanout.h (SHM_FO_EVENT_SLOT: struct shm_fo_ev,
 * then fields "uint16 plen, path, uint32 vlen, Variant") with proto's
 * codec, so the worker tests need no broker.  The same fields, in the
 * same order, as the broker's builder (broker/event.c): the fields given,
 * then the BaseEventType ones not given (EventId, EventType, SourceNode,
 * SourceName, Time, ReceiveTime, Message, Severity).
 *
 * Header-only (every test file is its own binary); no allocation.
 */
#ifndef WK_TEST_EVENT_FIXTURE_H
#define WK_TEST_EVENT_FIXTURE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"
#include "shm/nodestore.h"

/* A record being built. */
struct fx_event {
    uint8_t  *buf;
    uint32_t  cap;
    uint32_t  len;
    uint32_t  nfields;
    bool      full;             /* a field did not fit */
    bool      has_time, has_receive, has_message, has_severity;
    bool      has_source_name;
};

/* Start an event of type (node index) from source (node index). */
static inline void
fx_event_begin(struct fx_event *e, uint8_t *buf, uint32_t cap,
               uint32_t source, uint32_t type)
{
    struct shm_fo_ev h = { source, type, 0 };

    memset(e, 0, sizeof(*e));
    e->buf = buf;
    e->cap = cap;
    if (cap < sizeof(h)) {
        e->full = true;
        return;
    }
    memcpy(buf, &h, sizeof(h));
    e->len = sizeof(h);
}

#define FX_EV_IS(p, n, lit) ((n) == sizeof(lit) - 1 \
                             && memcmp((p), (lit), sizeof(lit) - 1) == 0)

/* Is path a field of e already? */
static inline bool
fx_event_has(const struct fx_event *e, const char *path, size_t plen)
{
    uint32_t off = sizeof(struct shm_fo_ev);

    for (uint32_t i = 0; i < e->nfields; i++) {
        uint16_t pl;
        uint32_t vl;

        memcpy(&pl, e->buf + off, 2);
        if (pl == plen && memcmp(e->buf + off + 2, path, plen) == 0)
            return true;
        memcpy(&vl, e->buf + off + 2 + pl, 4);
        off += 2u + pl + 4u + vl;
    }
    return false;
}

/*
 * Add the field path[plen] = v.  0; -ENOSPC when the record is full (or
 * has SHM_FO_EV_FIELDS_MAX fields); -EINVAL for a path too long or a
 * Variant that does not encode; -EEXIST for a field given twice.
 */
static inline int
fx_event_field(struct fx_event *e, const char *path, size_t plen,
               const struct ua_variant *v)
{
    size_t   need = ua_encoded_size(v, &ua_types[UA_TYPE_VARIANT]), got;
    uint32_t at = e->len + 6u + (uint32_t)plen, n;
    uint16_t pl = (uint16_t)plen;
    uint32_t vl;

    if (need == 0 || plen == 0 || plen > SHM_FO_EV_PATH_MAX)
        return -EINVAL;
    if (fx_event_has(e, path, plen))
        return -EEXIST;
    if (e->full || e->nfields >= SHM_FO_EV_FIELDS_MAX || at > e->cap
        || e->cap - at < need) {
        e->full = true;
        return -ENOSPC;
    }
    if (ua_encode(v, &ua_types[UA_TYPE_VARIANT], e->buf + at, e->cap - at,
                  &got) != UA_GOOD)
        return -EINVAL;
    vl = (uint32_t)got;
    memcpy(e->buf + e->len, &pl, 2);
    memcpy(e->buf + e->len + 2, path, pl);
    memcpy(e->buf + e->len + 2 + pl, &vl, 4);
    e->len += 2u + pl + 4u + vl;
    e->nfields++;
    n = e->nfields;
    memcpy(e->buf + offsetof(struct shm_fo_ev, nfields), &n, 4);
    if (FX_EV_IS(path, plen, "0:Time"))
        e->has_time = true;
    else if (FX_EV_IS(path, plen, "0:ReceiveTime"))
        e->has_receive = true;
    else if (FX_EV_IS(path, plen, "0:Message"))
        e->has_message = true;
    else if (FX_EV_IS(path, plen, "0:Severity"))
        e->has_severity = true;
    else if (FX_EV_IS(path, plen, "0:SourceName"))
        e->has_source_name = true;
    return 0;
}

/* Node i's NodeId (identifier bytes point into the store). */
static inline void
fx_event_nodeid(const struct shm_nodestore *ns, uint32_t i,
                struct ua_nodeid *out)
{
    struct shm_nodekey k;

    memset(out, 0, sizeof(*out));
    if (i >= ns->nnodes)
        return;                     /* the null NodeId */
    shm_nodestore_key(ns, i, &k);
    out->ns = k.ns;
    out->idtype = k.idtype;
    switch (k.idtype) {
    case SHM_ID_NUMERIC:
        out->id.num = k.num;
        break;
    case SHM_ID_GUID:
        if (k.bytes != NULL && k.len == sizeof(out->id.guid))
            memcpy(&out->id.guid, k.bytes, sizeof(out->id.guid));
        break;
    default:
        out->id.str.len = k.bytes != NULL ? (int32_t)k.len : 0;
        out->id.str.data = (uint8_t *)(uintptr_t)k.bytes;
        break;
    }
}

/*
 * The BaseEventType fields not given yet: EventId (16 bytes no other
 * event of this test has), EventType and SourceNode (the NodeIds of
 * begin's nodes), SourceName (the source's BrowseName), Time and
 * ReceiveTime (now), Message (empty), Severity (severity).  0 or the
 * first error of fx_event_field().
 */
static inline int
fx_event_std(struct fx_event *e, const struct shm_nodestore *ns,
             int64_t now, uint16_t severity)
{
    static uint64_t         ctr;
    struct shm_fo_ev        h;
    struct ua_variant       v;
    struct ua_string        id, sn;
    struct ua_nodeid        type, src;
    struct ua_localizedtext msg;
    uint64_t                idb[2];
    int                     rc;

    if (e->len < sizeof(h))
        return -ENOSPC;
    memcpy(&h, e->buf, sizeof(h));
    idb[0] = ++ctr;
    idb[1] = shm_mix64(idb[0]);
    id.len = 16;
    id.data = (uint8_t *)idb;
    ua_variant_set_scalar(&v, &id, UA_BT_BYTESTRING);
    rc = fx_event_field(e, "0:EventId", 9, &v);
    if (rc != 0 && rc != -EEXIST)
        return rc;
    fx_event_nodeid(ns, h.type, &type);
    ua_variant_set_scalar(&v, &type, UA_BT_NODEID);
    rc = fx_event_field(e, "0:EventType", 11, &v);
    if (rc != 0 && rc != -EEXIST)
        return rc;
    fx_event_nodeid(ns, h.source, &src);
    ua_variant_set_scalar(&v, &src, UA_BT_NODEID);
    rc = fx_event_field(e, "0:SourceNode", 12, &v);
    if (rc != 0 && rc != -EEXIST)
        return rc;
    if (!e->has_source_name) {
        const uint8_t *s = NULL;
        uint32_t       sl = 0;

        if (h.source < ns->nnodes)
            s = shm_nodestore_string(ns, ns->nodes[h.source].browse_name,
                                     &sl);
        sn.len = s != NULL ? (int32_t)sl : 0;
        sn.data = (uint8_t *)(uintptr_t)s;
        ua_variant_set_scalar(&v, &sn, UA_BT_STRING);
        if ((rc = fx_event_field(e, "0:SourceName", 12, &v)) != 0)
            return rc;
    }
    if (!e->has_time) {
        ua_variant_set_scalar(&v, &now, UA_BT_DATETIME);
        if ((rc = fx_event_field(e, "0:Time", 6, &v)) != 0)
            return rc;
    }
    if (!e->has_receive) {
        ua_variant_set_scalar(&v, &now, UA_BT_DATETIME);
        if ((rc = fx_event_field(e, "0:ReceiveTime", 13, &v)) != 0)
            return rc;
    }
    if (!e->has_message) {
        memset(&msg, 0, sizeof(msg));
        msg.mask = UA_LT_TEXT;
        msg.locale.len = -1;
        msg.text.len = 0;
        msg.text.data = (uint8_t *)(uintptr_t)"";
        ua_variant_set_scalar(&v, &msg, UA_BT_LOCALIZEDTEXT);
        if ((rc = fx_event_field(e, "0:Message", 9, &v)) != 0)
            return rc;
    }
    if (!e->has_severity) {
        ua_variant_set_scalar(&v, &severity, UA_BT_UINT16);
        if ((rc = fx_event_field(e, "0:Severity", 10, &v)) != 0)
            return rc;
    }
    return 0;
}

#endif /* WK_TEST_EVENT_FIXTURE_H */
