/*
 * proto/crypto_int.h: what proto/cert.c needs from proto/crypto_wolf.c
 * beyond crypto.h - X.509 parsing and signature checks, wolfSSL's
 * CertManager, certificate generation and PEM.  proto/ only: other modules
 * use cert.h.
 *
 * The CertManager functions take `when`, the time wolfSSL's own validity
 * checks see (installed with wc_SetTimeCb for the length of the call and
 * removed after).  cert.c passes a moment inside the certificate's
 * validity: it checks validity itself, as step 6 of Part 4 §6.1.3, so
 * wolfSSL's date verdict must not pre-empt steps 3-5.
 */
#ifndef UA_CRYPTO_INT_H
#define UA_CRYPTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cert.h"
#include "crypto.h"
#include "types.h"

/*
 * wolfSSL's parse of one DER certificate (NO_VERIFY): fills key_type,
 * key_bits, key_usage/has_key_usage, eku/has_eku, is_ca, self_signed,
 * sig_hash, san, ski, aki (pointers into der) and subject_str.  Leaves every
 * other field alone.  Bad_CertificateInvalid when wolfSSL refuses it.
 */
ua_status ua_crypto_x509_parse(const uint8_t *der, size_t len,
                               struct ua_cert *c);

/* Whether issuer's public key verifies child's signature over its
 * TBSCertificate (RSA PKCS#1 v1.5 with the hash child names). */
bool ua_crypto_x509_signed_by(const struct ua_cert *child,
                              const struct ua_cert *issuer);

/* Results of the CertManager calls. */
enum ua_x509_rc {
    UA_X509_OK = 0,
    UA_X509_NO_SIGNER,      /* issuer not loaded, or untrusted self-signed */
    UA_X509_BAD_SIGNATURE,
    UA_X509_DATE,           /* outside its validity at `when` */
    UA_X509_REVOKED,
    UA_X509_CRL_MISSING,    /* CRL checking on, none for the issuer */
    UA_X509_FAIL            /* anything else: parse error, no memory, ... */
};

/* One wolfSSL CertManager: a set of trust anchors (and CRLs).  Made fresh
 * for each validation and freed after it. */
struct ua_crypto_cm;

ua_status ua_crypto_cm_new(struct ua_crypto_cm **cm);
void ua_crypto_cm_free(struct ua_crypto_cm *cm);

/* Load der as an anchor: everything it signs will verify.  Only for
 * certificates that are trusted, or already verified by this CM. */
int ua_crypto_cm_add_ca(struct ua_crypto_cm *cm, const uint8_t *der,
                        size_t len, int64_t when);

/* Verify der against the anchors loaded so far. */
int ua_crypto_cm_verify(struct ua_crypto_cm *cm, const uint8_t *der,
                        size_t len, int64_t when);

/* Turn CRL checking on (first call) and load one DER CRL; wolfSSL checks
 * its signature against the loaded anchors. */
int ua_crypto_cm_add_crl(struct ua_crypto_cm *cm, const uint8_t *der,
                         size_t len, int64_t when);

/* Look der up in the loaded CRLs: OK, REVOKED or CRL_MISSING. */
int ua_crypto_cm_check_crl(struct ua_crypto_cm *cm, const uint8_t *der,
                           size_t len, int64_t when);

/* A self-signed certificate request for ua_crypto_x509_make_self. */
struct ua_x509_req {
    const char    *cn;              /* <= 64 bytes each */
    const char    *org;             /* NULL: none */
    const char    *dc;              /* NULL: none */
    const uint8_t *san;             /* GeneralNames DER */
    size_t         san_len;
    const uint8_t *not_before;      /* Time TLVs (ua_cert_time_encode) */
    size_t         not_before_len;
    const uint8_t *not_after;
    size_t         not_after_len;
    const uint8_t *serial;          /* positive, <= 20 bytes */
    size_t         serial_len;
    const char    *key_usage;       /* wolfSSL names, comma-separated */
    const char    *ext_key_usage;
};

/* Make and sign (SHA-256) the certificate; *len bytes of DER in out. */
ua_status ua_crypto_x509_make_self(const struct ua_x509_req *r,
                                   struct ua_crypto_key *key, uint8_t *out,
                                   size_t cap, size_t *len);

/* PEM <-> DER for certificates ("CERTIFICATE"). */
ua_status ua_crypto_pem_from_der(const uint8_t *der, size_t len, char *out,
                                 size_t cap, size_t *out_len);
ua_status ua_crypto_pem_to_der(const char *pem, size_t len, uint8_t *out,
                               size_t cap, size_t *out_len);

#endif /* UA_CRYPTO_INT_H */
