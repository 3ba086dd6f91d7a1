/*
 * worker/admit.c: admission (worker/admit.h).
 *
 * Single-threaded, on the worker's loop; the shared table's own
 * concurrency contract is in shm/throttle.h.
 */
#include "admit.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

static bool wk_admit_security_failure(ua_status st);

uint64_t
wk_admit_tag(const struct wk_worker *w, const struct sockaddr_storage *ss,
             enum shm_throttle_key_kind kind)
{
    uint8_t a[16];

    if (w->throttle == NULL)
        return 0;
    if (ss->ss_family == AF_INET6) {
        memcpy(a, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
    } else if (ss->ss_family == AF_INET) {
        memset(a, 0, 10);
        a[10] = a[11] = 0xff;
        memcpy(a + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    } else {
        return 0;
    }
    return shm_throttle_tag(w->throttle, kind, a, sizeof(a));
}

ua_status
wk_admit_connection(struct wk_worker *w, uint64_t tag)
{
    struct shm_throttle     *t = w->throttle;
    const struct shm_config *conf = w->conf;

    if (t == NULL)
        return UA_GOOD;
    if (tag != 0 && conf->failure_threshold != 0
        && shm_throttle_blocked(t, tag, w->now_ms)) {
        shm_throttle_count(t, w->slot, SHM_THR_C_REFUSED_BLOCKED);
        return UA_BAD_TCP_SERVER_TOO_BUSY;
    }
    if (!shm_throttle_accept(t, conf->accept_rate, conf->accept_burst,
                             w->now_ns / 1000u)) {
        shm_throttle_count(t, w->slot, SHM_THR_C_REFUSED_RATE);
        return UA_BAD_TCP_SERVER_TOO_BUSY;
    }
    return UA_GOOD;
}

bool
wk_admit_blocked(struct wk_worker *w, uint64_t tag)
{
    if (tag == 0 || w->conf->failure_threshold == 0
        || !shm_throttle_blocked(w->throttle, tag, w->now_ms))
        return false;
    shm_throttle_count(w->throttle, w->slot, SHM_THR_C_REFUSED_BLOCKED);
    return true;
}

/*
 * The OPN results that count against the peer's address: the security
 * checks (a bad RSA block, padding or signature all give
 * BadSecurityChecksFailed) and certificate rejections.
 */
static bool
wk_admit_security_failure(ua_status st)
{
    switch (st & 0xFFFF0000u) {
    case UA_BAD_SECURITY_CHECKS_FAILED:
    case UA_BAD_CERTIFICATE_INVALID:
    case UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED:
    case UA_BAD_CERTIFICATE_TIME_INVALID:
    case UA_BAD_CERTIFICATE_ISSUER_TIME_INVALID:
    case UA_BAD_CERTIFICATE_HOST_NAME_INVALID:
    case UA_BAD_CERTIFICATE_URI_INVALID:
    case UA_BAD_CERTIFICATE_USE_NOT_ALLOWED:
    case UA_BAD_CERTIFICATE_ISSUER_USE_NOT_ALLOWED:
    case UA_BAD_CERTIFICATE_UNTRUSTED:
    case UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN:
    case UA_BAD_CERTIFICATE_ISSUER_REVOCATION_UNKNOWN:
    case UA_BAD_CERTIFICATE_REVOKED:
    case UA_BAD_CERTIFICATE_ISSUER_REVOKED:
    case UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE:
        return true;
    default:
        return false;
    }
}

void
wk_admit_opn_result(struct wk_worker *w, uint64_t tag, ua_status st)
{
    struct shm_throttle_rule r = { w->conf->failure_threshold,
                                   w->conf->failure_window_ms,
                                   w->conf->failure_block_ms };
    int                      rc;

    if (w->throttle == NULL || tag == 0 || r.threshold == 0
        || !wk_admit_security_failure(st))
        return;
    shm_throttle_count(w->throttle, w->slot, SHM_THR_C_OPN_FAILURES);
    rc = shm_throttle_fail(w->throttle, tag, &r, w->now_ms);
    if (rc == -ENOSPC)
        shm_throttle_count(w->throttle, w->slot, SHM_THR_C_TABLE_FULL);
    else if (rc == 1)
        shm_throttle_count(w->throttle, w->slot, SHM_THR_C_BLOCKS);
}
