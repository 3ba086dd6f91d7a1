/*
 * worker/audit.c: the session audit events a worker raises (Part 5
 * §6.4.3 AuditEventType, §6.4.7-6.4.9 AuditSessionEventType,
 * AuditCreateSessionEventType, AuditActivateSessionEventType) when
 * events.audit is on (the configuration snapshot's events_audit).
 *
 * The worker builds the event record itself (shm/fanout.h
 * SHM_FO_EVENT_SLOT format; its Variants encoded here, once) and sends it
 * to the broker as a SHM_FO_EVENT request record (wk_link_send_event);
 * the broker checks it and fans it out like a feed event, to every worker
 * with event interest, this one included.  SourceNode is the Server,
 * SourceName "Session/CreateSession", "Session/ActivateSession" or
 * "Session/CloseSession".  The record is built on the stack: no
 * allocation, no static buffer.  EventIds count in w->audit_seq.
 */
#include "audit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "link.h"
#include "node.h"
#include "session.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"

static bool wk_audit_field(uint8_t *b, uint32_t *len, uint32_t cap,
                           const char *path, const struct ua_variant *v);

/* Append field path = v to the record in b[*len..cap); false: full. */
static bool
wk_audit_field(uint8_t *b, uint32_t *len, uint32_t cap, const char *path,
               const struct ua_variant *v)
{
    uint16_t pl = (uint16_t)strlen(path);
    size_t   got;
    uint32_t vl, n;

    if (*len + 6u + pl > cap
        || ua_encode(v, &ua_types[UA_TYPE_VARIANT], b + *len + 6 + pl,
                     cap - *len - 6 - pl, &got) != UA_GOOD)
        return false;
    vl = (uint32_t)got;
    memcpy(b + *len, &pl, 2);
    memcpy(b + *len + 2, path, pl);
    memcpy(b + *len + 2 + pl, &vl, 4);
    *len += 6u + pl + vl;
    memcpy(&n, b + offsetof(struct shm_fo_ev, nfields), 4);
    n++;
    memcpy(b + offsetof(struct shm_fo_ev, nfields), &n, 4);
    return true;
}

uint32_t
wk_audit_build(struct wk_worker *w, const struct wk_audit *a, uint8_t *b,
               uint32_t cap)
{
    struct ua_nodeid        srv = ua_nodeid_num(0, UA_NS0ID_SERVER);
    struct ua_nodeid        type = ua_nodeid_num(0, a->type);
    struct shm_fo_ev        h;
    struct ua_variant       v;
    struct ua_string        s;
    struct ua_localizedtext lt;
    uint32_t                len = sizeof(h);
    uint64_t                id[2];
    uint16_t                sev = a->status ? 100 : 500;
    bool                    ok = true;
    const char             *what =
        a->type == UA_NS0ID_AUDITCREATESESSIONEVENTTYPE     ? "CreateSession"
        : a->type == UA_NS0ID_AUDITACTIVATESESSIONEVENTTYPE ? "ActivateSession"
                                                            : "CloseSession";
    char                    name[32], msg[64], chan[16];

    if (cap < sizeof(h))
        return 0;
    h.source = wk_node_lookup(w, &srv);
    h.type = wk_node_lookup(w, &type);
    h.nfields = 0;
    memcpy(b, &h, sizeof(h));
    /* EventId: the worker slot, a counter, the time: unique per host. */
    id[0] = ((uint64_t)(w->slot + 1) << 56) | ++w->audit_seq;
    id[1] = (uint64_t)w->now_dt ^ UINT64_C(0x6175646974657674);
    s.len = 16;
    s.data = (uint8_t *)id;
#define F(path, ptr, bt)                                                  \
    do {                                                                  \
        ua_variant_set_scalar(&v, (void *)(uintptr_t)(ptr), bt);          \
        ok = ok && wk_audit_field(b, &len, cap, path, &v);                \
    } while (0)
    F("0:EventId", &s, UA_BT_BYTESTRING);
    F("0:EventType", &type, UA_BT_NODEID);
    F("0:SourceNode", &srv, UA_BT_NODEID);
    snprintf(name, sizeof(name), "Session/%s", what);
    s = ua_string_from(name);
    F("0:SourceName", &s, UA_BT_STRING);
    F("0:Time", &w->now_dt, UA_BT_DATETIME);
    F("0:ReceiveTime", &w->now_dt, UA_BT_DATETIME);
    snprintf(msg, sizeof(msg), "%s %s", what,
             a->status ? "succeeded" : "failed");
    memset(&lt, 0, sizeof(lt));
    lt.mask = UA_LT_TEXT;
    lt.locale.len = -1;
    lt.text = ua_string_from(msg);
    F("0:Message", &lt, UA_BT_LOCALIZEDTEXT);
    F("0:Severity", &sev, UA_BT_UINT16);
    /* AuditEventType */
    F("0:ActionTimeStamp", &w->now_dt, UA_BT_DATETIME);
    F("0:Status", &a->status, UA_BT_BOOLEAN);
    s.len = (int32_t)strnlen(w->conf->application_uri,
                             sizeof(w->conf->application_uri));
    s.data = (uint8_t *)(uintptr_t)w->conf->application_uri;
    F("0:ServerId", &s, UA_BT_STRING);
    F("0:ClientAuditEntryId", &a->audit_entry_id, UA_BT_STRING);
    F("0:ClientUserId", &a->user_id, UA_BT_STRING);
    /* AuditSessionEventType */
    F("0:SessionId", &a->session_id, UA_BT_NODEID);
    if (a->type != UA_NS0ID_AUDITSESSIONEVENTTYPE) {
        snprintf(chan, sizeof(chan), "%u", a->channel_id);
        s = ua_string_from(chan);
        F("0:SecureChannelId", &s, UA_BT_STRING);
    }
    if (a->type == UA_NS0ID_AUDITCREATESESSIONEVENTTYPE) {
        F("0:ClientCertificate", &a->client_cert, UA_BT_BYTESTRING);
        F("0:RevisedSessionTimeout", &a->revised_timeout, UA_BT_DOUBLE);
    }
#undef F
    return ok ? len : 0;
}

void
wk_audit_raise(struct wk_worker *w, struct wk_audit *a)
{
    uint8_t  buf[WK_AUDIT_REC_MAX];
    uint32_t len;

    if (w->conf == NULL || !w->conf->events_audit)
        return;
    /* Bounded: a record must fit its buffer and a notification block
     * (a longer id is cut, a certificate chain past the leaf's limit is
     * left out). */
    if (a->audit_entry_id.len > WK_AUDIT_STR_MAX)
        a->audit_entry_id.len = WK_AUDIT_STR_MAX;
    if (a->user_id.len > WK_AUDIT_STR_MAX)
        a->user_id.len = WK_AUDIT_STR_MAX;
    if (a->client_cert.len > WK_SESSION_CERT_MAX)
        a->client_cert.len = -1;
    len = wk_audit_build(w, a, buf, sizeof(buf));
    if (len != 0)
        (void)wk_link_send_event(w->link, buf, len);
}
