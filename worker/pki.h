/*
 * worker/pki.h: the worker's side of the PKI (shm/pki.h).
 *
 * At start: our certificate and key from SHM_R_PKI into w->sc_conf (offers,
 * cert, key, allow_deprecated) and the validate hook.  The hook checks a
 * client certificate with ua_cert_validate against a private copy of the
 * broker's trust and issuer lists, taken again whenever the broker's
 * generation moved (SIGHUP).  An untrusted certificate goes to the broker's
 * rejected mailbox (the broker writes rejected/<thumbprint>.der).
 *
 * The RSA work of an OPN runs in steps of one private-key operation
 * (worker/step.h, docs/architecture.md §4), so the worker keeps serving
 * other channels meanwhile.
 */
#ifndef WK_PKI_H
#define WK_PKI_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/cert.h"
#include "proto/crypto.h"
#include "shm/layout.h"

struct wk_worker;

struct wk_pki {
    struct wk_worker    *w;
    struct shm_pki      *shm;           /* NULL: None only */
    struct ua_crypto_key key;
    struct shm_pki_half *snap;          /* our copy of the lists */
    size_t               snap_cap;
    uint64_t             gen;
    bool                 have_snap;
    struct ua_cert_der   trusted[SHM_PKI_BLOBS_MAX];
    struct ua_cert_der   trusted_crls[SHM_PKI_BLOBS_MAX];
    struct ua_cert_der   issuers[SHM_PKI_BLOBS_MAX];
    struct ua_cert_der   issuer_crls[SHM_PKI_BLOBS_MAX];
    struct ua_cert_der   user_trusted[SHM_PKI_BLOBS_MAX];
    struct ua_cert_store store;
    struct ua_cert_store user_store;    /* X509 user tokens */
    uint64_t             validations;
    uint64_t             rejected;
};

/* Bind the region and fill w->sc_conf's security part (nothing when the
 * segment has no PKI: None only).  0, or -1 with a message on stderr. */
int wk_pki_init(struct wk_pki *k, struct wk_worker *w);

/* The ua_sc_validate_fn hook (ctx = struct wk_pki). */
ua_status wk_pki_validate(void *ctx, const uint8_t *chain, size_t len,
                          const struct ua_policy *p);

/* The users of the broker's current generation (the copy is refreshed
 * first); *n = 0 when there are none. */
const struct shm_user *wk_pki_users(struct wk_pki *k, uint32_t *n);

/* Validate an X509 user certificate (role USER, the channel's policy
 * limits) against trusted_users/ plus the issuers.  UA_GOOD or the
 * validation's status. */
ua_status wk_pki_validate_user(struct wk_pki *k, const uint8_t *der,
                               size_t len, const struct ua_policy *p);

/* Free the copy, wipe the key. */
void wk_pki_fini(struct wk_pki *k);

#endif /* WK_PKI_H */
