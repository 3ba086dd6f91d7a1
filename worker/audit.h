/*
 * worker/audit.h: the session audit events a worker raises (Part 5
 * §6.4.3 AuditEventType, §6.4.7-6.4.9 AuditSessionEventType,
 * AuditCreateSessionEventType, AuditActivateSessionEventType) when
 * events.audit is on.  The session services (worker/svc_session.c) say
 * what happened; this file builds the event record and sends it.
 *
 * Single-threaded, on the worker's loop.  No allocation.
 */
#ifndef WK_AUDIT_H
#define WK_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/types.h"
#include "worker.h"

#define WK_AUDIT_REC_MAX 8192       /* bytes of one audit event record */
#define WK_AUDIT_STR_MAX 256        /* bytes kept of ClientAuditEntryId,
                                       ClientUserId */

/* What a session audit event says (Part 5 §6.4.3, §6.4.7-6.4.9). */
struct wk_audit {
    uint32_t         type;          /* its EventType (ns0 numeric) */
    bool             status;        /* the action succeeded */
    struct ua_string audit_entry_id;
    struct ua_string user_id;
    struct ua_nodeid session_id;
    uint32_t         channel_id;
    struct ua_string client_cert;   /* CreateSession */
    double           revised_timeout;
};

/* The event record of a into b[cap] (shm/fanout.h); its length, 0 when
 * it does not fit.  Pure but for the EventId counter. */
uint32_t wk_audit_build(struct wk_worker *w, const struct wk_audit *a,
                        uint8_t *b, uint32_t cap);

/*
 * Raise a when events.audit is on: its record goes to the broker (a
 * SHM_FO_EVENT request record, worker/link.h), which fans it out like any
 * event, to every worker with event interest, this one included.  The
 * strings are cut at WK_AUDIT_STR_MAX bytes, a client certificate past
 * WK_SESSION_CERT_MAX is left out, so the record always fits.
 */
void wk_audit_raise(struct wk_worker *w, struct wk_audit *a);

#endif /* WK_AUDIT_H */
