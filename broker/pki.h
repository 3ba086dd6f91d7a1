/*
 * broker/pki.h: the PKI directory and the application certificate.
 *
 * At start the broker makes <pki_dir>/{own/certs, own/private,
 * trusted/certs, trusted/crl, issuers/certs, issuers/crl, rejected} (0700),
 * creates own/certs/uabroker.der and own/private/uabroker.key (RSA 2048,
 * SHA-256, SAN URI = application_uri, DNS = hostname) when both are absent
 * (an operator may supply their own), and hands the workers, who read no
 * files, the certificate, the key, the offered policy x mode bits and the
 * trust and issuer lists through SHM_R_PKI (shm/pki.h).  SIGHUP reloads
 * the lists (bk_pki_reload); once a second bk_pki_drain writes the
 * certificates the workers rejected to rejected/<thumbprint>.der, keeping
 * at most security.rejected_max files (oldest dropped).
 */
#ifndef BK_PKI_H
#define BK_PKI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "proto/cert.h"
#include "shm/segment.h"

#define BK_PKI_PATH_MAX   BK_CONF_PATH_MAX
/* Bytes of trust/issuer lists (DER) per half of the shared double buffer. */
#define BK_PKI_LIST_BYTES (1024 * 1024)
#define BK_PKI_CERT_NAME  "uabroker.der"
#define BK_PKI_KEY_NAME   "uabroker.key"

struct bk_pki {
    char            dir[BK_PKI_PATH_MAX];
    char            users_path[BK_PKI_PATH_MAX + 64];   /* broker/users.c */
    uint32_t        offers;             /* UA_SC_OFFER bits */
    uint32_t        flags;              /* SHM_PKI_F_* */
    uint32_t        rejected_max;
    uint8_t         cert[SHM_PKI_CERT_MAX];
    size_t          cert_len;
    uint8_t         key[SHM_PKI_KEY_MAX];       /* PKCS#1 DER */
    size_t          key_len;
    bool            created;            /* made at this start */
    struct shm_pki *shm;                /* NULL until bk_pki_publish */
    /* Counters for the log and tests. */
    uint32_t        n_trusted, n_trusted_crls, n_issuers, n_issuer_crls;
    uint32_t        n_skipped;          /* files not loaded */
    uint32_t        n_users;
    uint32_t        n_user_certs;       /* trusted_users/certs */
    uint64_t        rejected_written;
};

/*
 * Policies and modes as configured ("None, Basic256Sha256", "Sign,
 * SignAndEncrypt"; names case-insensitive, also full URIs) to UA_SC_OFFER
 * bits: every secure policy with every secure mode, None/None when both
 * lists name None.  Basic128Rsa15 and Basic256 need allow_deprecated.
 * 0 or -1 with a message.
 */
int bk_pki_offers(const char *policies, const char *modes,
                  bool allow_deprecated, uint32_t *offers, char *err,
                  size_t errlen);

/*
 * Make the directories, load or create the certificate and key.  now:
 * Unix seconds.  0 or -1 with a message.
 */
int bk_pki_init(struct bk_pki *k, const struct bk_config *c, int64_t now,
                char *err, size_t errlen);

/*
 * SIGHUP: take c's anonymous, anonymous_write, x509_role, rejected_max and
 * users_file (its path, read by the next bk_pki_reload); the flags are
 * published to the workers at once.  0, or -1 with a message in err
 * (nothing changed).
 */
int bk_pki_update(struct bk_pki *k, const struct bk_config *c, char *err,
                  size_t errlen);

/* Write the certificate, key and lists into seg's SHM_R_PKI. */
int bk_pki_publish(struct bk_pki *k, struct shm_segment *seg, char *err,
                   size_t errlen);

/* Read trusted/, issuers/ and the users file again into the other half;
 * bump the generation.  0 or -1 (with what was loaded still published; a
 * bad users file publishes no users). */
int bk_pki_reload(struct bk_pki *k);

/* Save the workers' rejected certificates; returns how many were
 * written. */
int bk_pki_drain(struct bk_pki *k);

/* Wipe the key. */
void bk_pki_clear(struct bk_pki *k);

#endif /* BK_PKI_H */
