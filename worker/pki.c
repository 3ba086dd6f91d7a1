/*
 * worker/pki.c: our certificate and key from shared memory, client
 * certificate validation over the broker's trust lists, rejected
 * certificates to the broker.
 */
#include "pki.h"

#include <errno.h>
#include <string.h>

#include "proto/status_gen.h"
#include "shm/log.h"
#include "shm/pki.h"
#include "worker.h"

static int wk_pki_refresh(struct wk_pki *k);
static bool wk_pki_is_own(const struct wk_pki *k, const uint8_t *chain,
                          size_t len);

int
wk_pki_init(struct wk_pki *k, struct wk_worker *w)
{
    ua_status s;

    memset(&k->store, 0, sizeof(k->store));
    k->w = w;
    k->shm = shm_pki_get(&w->seg);
    k->snap = NULL;
    k->have_snap = false;
    if (k->shm == NULL || k->shm->cert_len == 0 || k->shm->key_len == 0)
        return 0;                   /* no PKI: SecurityPolicy None only */
    s = ua_crypto_init();
    if (s == UA_GOOD)
        s = ua_crypto_key_load(&k->key, k->shm->key, k->shm->key_len);
    if (s != UA_GOOD) {
        shm_log(SHM_LOG_ERROR, "pki: our key: %s", ua_status_name(s));
        return -1;
    }
    k->snap_cap = sizeof(struct shm_pki_half) + k->shm->list_bytes;
    k->snap = wk_alloc(w, k->snap_cap);
    if (k->snap == NULL) {
        ua_crypto_key_clear(&k->key);
        return -1;
    }
    w->sc_conf.offers = k->shm->offers;
    w->sc_conf.allow_deprecated = (k->shm->flags & SHM_PKI_F_DEPRECATED) != 0;
    w->sc_conf.cert = k->shm->cert;
    w->sc_conf.cert_len = k->shm->cert_len;
    w->sc_conf.key = &k->key;
    w->sc_conf.validate = wk_pki_validate;
    w->sc_conf.validate_ctx = k;
    w->pki = k;
    return 0;
}

/* A fresh store when the broker published a new generation. */
static int
wk_pki_refresh(struct wk_pki *k)
{
    struct ua_cert_store *st = &k->store;
    uint64_t              gen;
    int                   rc = -EAGAIN;

    if (k->have_snap && shm_pki_generation(k->shm) == k->gen)
        return 0;
    for (int i = 0; i < 8 && rc == -EAGAIN; i++)
        rc = shm_pki_snapshot(k->shm, k->snap, k->snap_cap, &gen);
    if (rc != 0)
        return rc;
    memset(st, 0, sizeof(*st));
    st->trusted = k->trusted;
    st->trusted_crls = k->trusted_crls;
    st->issuers = k->issuers;
    st->issuer_crls = k->issuer_crls;
    memset(&k->user_store, 0, sizeof(k->user_store));
    k->user_store.trusted = k->user_trusted;
    for (uint32_t i = 0; i < k->snap->n; i++) {
        const struct shm_pki_blob *b = &k->snap->blobs[i];
        struct ua_cert_der         d = { k->snap->data + b->off, b->len };

        if (b->len == 0)
            continue;
        switch (b->kind) {
        case SHM_PKI_TRUSTED: k->trusted[st->n_trusted++] = d; break;
        case SHM_PKI_TRUSTED_CRL:
            k->trusted_crls[st->n_trusted_crls++] = d;
            break;
        case SHM_PKI_ISSUER: k->issuers[st->n_issuers++] = d; break;
        case SHM_PKI_ISSUER_CRL:
            k->issuer_crls[st->n_issuer_crls++] = d;
            break;
        case SHM_PKI_USER_TRUSTED:
            k->user_trusted[k->user_store.n_trusted++] = d;
            break;
        default: break;
        }
    }
    k->user_store.issuers = st->issuers;
    k->user_store.n_issuers = st->n_issuers;
    k->user_store.issuer_crls = st->issuer_crls;
    k->user_store.n_issuer_crls = st->n_issuer_crls;
    k->gen = gen;
    k->have_snap = true;
    return 0;
}

/*
 * True when the leaf of chain is our own application certificate.  A
 * client never presents the server's certificate; taking it for one would
 * let the server sign for itself (the reflection of CVE-2024-42513,
 * docs/security.md case 49), even if an operator put it in trusted/.
 */
static bool
wk_pki_is_own(const struct wk_pki *k, const uint8_t *chain, size_t len)
{
    struct ua_cert_der a[UA_CERT_CHAIN_MAX], b[UA_CERT_CHAIN_MAX];
    size_t             na = 0, nb = 0;

    if (ua_cert_chain_split(chain, len, a, UA_CERT_CHAIN_MAX, &na)
            != UA_GOOD
        || ua_cert_chain_split(k->shm->cert, k->shm->cert_len, b,
                               UA_CERT_CHAIN_MAX, &nb) != UA_GOOD)
        return false;
    return na > 0 && nb > 0 && a[0].len == b[0].len
           && memcmp(a[0].der, b[0].der, a[0].len) == 0;
}

ua_status
wk_pki_validate(void *ctx, const uint8_t *chain, size_t len,
                const struct ua_policy *p)
{
    struct wk_pki         *k = ctx;
    struct ua_cert_check   chk;
    struct ua_cert_verdict v;
    ua_status              s;
    int64_t                now;

    if (k->shm == NULL || wk_pki_refresh(k) != 0)
        return UA_BAD_CERTIFICATE_UNTRUSTED;
    if (wk_pki_is_own(k, chain, len)) {
        shm_log(SHM_LOG_WARNING, "a client presented our own "
                "application certificate: refused");
        return UA_BAD_CERTIFICATE_USE_NOT_ALLOWED;
    }
    now = (k->w->now_dt - UA_DATETIME_UNIX_EPOCH) / 10000000;
    ua_cert_check_init(&chk, p, now);
    chk.role = UA_CERT_ROLE_CLIENT;
    memset(&v, 0, sizeof(v));
    k->validations++;
    s = ua_cert_validate(chain, len, &k->store, &chk, &v);
    if (s == UA_BAD_CERTIFICATE_UNTRUSTED
        || s == UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE) {
        char name[UA_CERT_REJECTED_NAME_LEN];

        k->rejected++;
        ua_cert_rejected_name(v.thumbprint, name);
        shm_log(SHM_LOG_WARNING, "client certificate %s refused: %s%s",
                name, ua_status_name(s),
                shm_pki_reject_post(k->shm, k->w->slot, chain, len) == 0
                    ? " (to rejected/)" : "");
    } else if (s != UA_GOOD) {
        shm_log(SHM_LOG_WARNING, "client certificate refused: %s "
                "(depth %u)", ua_status_name(s), (unsigned)v.depth);
    }
    return s;
}

ua_status
wk_pki_validate_user(struct wk_pki *k, const uint8_t *der, size_t len,
                     const struct ua_policy *p)
{
    struct ua_cert_check chk;

    if (k == NULL || k->shm == NULL || wk_pki_refresh(k) != 0)
        return UA_BAD_CERTIFICATE_UNTRUSTED;
    ua_cert_check_init(&chk, p,
                       (k->w->now_dt - UA_DATETIME_UNIX_EPOCH) / 10000000);
    chk.role = UA_CERT_ROLE_USER;
    return ua_cert_validate(der, len, &k->user_store, &chk, NULL);
}

const struct shm_user *
wk_pki_users(struct wk_pki *k, uint32_t *n)
{
    *n = 0;
    if (k == NULL || k->shm == NULL || wk_pki_refresh(k) != 0)
        return NULL;
    *n = k->snap->n_users;
    return k->snap->users;
}

void
wk_pki_fini(struct wk_pki *k)
{
    if (k->snap != NULL) {
        wk_free(k->w, k->snap);
        k->snap = NULL;
    }
    ua_crypto_key_clear(&k->key);
}
