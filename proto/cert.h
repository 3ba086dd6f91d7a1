/*
 * proto/cert.h: X.509 application instance certificates for OPC UA: parse,
 * create, split chains, and validate against a trust list and an issuer
 * list as Part 4 §6.1.3 describes.
 *
 * Pure functions over DER bytes.  Where a PKI keeps its files (own/,
 * trusted/certs, trusted/crl, issuers/certs, issuers/crl, rejected/) is the
 * worker's and broker's business: they read the directories and hand the
 * contents over as lists of DER blobs (struct ua_cert_store).  The clock is
 * a parameter (Unix seconds).  Every wolfSSL call behind this file goes
 * through proto/crypto_wolf.c (proto/crypto_int.h).
 *
 * Validation (ua_cert_validate) runs the steps of Part 4 §6.1.3 in order,
 * over the whole chain, and stops at the first failure:
 *
 *   1 structure      the leaf and every certificate the peer sent parse,
 *                    within UA_CERT_DER_MAX bytes      Bad_CertificateInvalid
 *   2 chain          issuers are found by subject DN (binary) and key id
 *                    among the peer's certificates, the issuer list and the
 *                    trust list, up to a self-signed root, at most
 *                    UA_CERT_CHAIN_MAX certificates, no certificate twice
 *                    (a loop ends the search)   Bad_CertificateChainIncomplete
 *   3 signature      every link, and the root's self-signature
 *                                                      Bad_CertificateInvalid
 *   4 policy         key length within the policy's range, signature hash
 *                    not weaker than it allows, for every certificate
 *                                             Bad_CertificatePolicyCheckFailed
 *   5 trust          the chain holds a certificate of the trust list, byte
 *                    for byte.  The leaf itself: trusted directly.  A CA:
 *                    a fresh wolfSSL CertManager gets that CA as its only
 *                    anchor, then each certificate below it is verified
 *                    before it is loaded (never the other way round), and
 *                    the leaf must verify (docs/dependencies.md gotchas 7, 9)
 *                                                    Bad_CertificateUntrusted
 *   6 validity       now within notBefore..notAfter
 *                    Bad_CertificateTimeInvalid / _IssuerTimeInvalid
 *   7 host name      not checked (a server validating clients)
 *   8 URI            a SAN URI equals the ApplicationUri, when one is given
 *                                                  Bad_CertificateUriInvalid
 *   9 usage          leaf: not a CA, keyUsage present with the role's bits,
 *                    extendedKeyUsage (when present) with the role's purpose
 *                                              Bad_CertificateUseNotAllowed
 *                    issuers: CA with keyCertSign and cRLSign
 *                                        Bad_CertificateIssuerUseNotAllowed
 *  10 CRL            a CRL signed by each issuer, current at now
 *                    Bad_CertificateRevocationUnknown /
 *                    Bad_CertificateIssuerRevocationUnknown
 *  11 revocation     the certificate is not on it
 *                    Bad_CertificateRevoked / _IssuerRevoked
 *
 * A self-signed leaf has no issuer and needs no CRL.  On the wire, Part 4
 * wants Bad_SecurityChecksFailed for an untrusted certificate; that mapping
 * is the caller's, the detailed status is for the log.
 */
#ifndef UA_CERT_H
#define UA_CERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto.h"
#include "types.h"

#define UA_CERT_CHAIN_MAX   10      /* certificates in a chain, leaf..root */
#define UA_CERT_DER_MAX     16384   /* bytes of one certificate */
#define UA_CERT_THUMB_LEN   20      /* SHA-1, Part 6 §6.7.2.3 */
#define UA_CERT_SUBJECT_MAX 256     /* printable subject, NUL included */
/* "<40 hex digits>.der" and its NUL: a rejected certificate's file name. */
#define UA_CERT_REJECTED_NAME_LEN 45

/* A DER blob: a certificate or a CRL. */
struct ua_cert_der {
    const uint8_t *der;
    size_t         len;
};

/* keyUsage bits (RFC 5280 §4.2.1.3; bit 0 of the BIT STRING is 0x80). */
#define UA_KU_DIGITAL_SIGNATURE 0x0080
#define UA_KU_NON_REPUDIATION   0x0040
#define UA_KU_KEY_ENCIPHERMENT  0x0020
#define UA_KU_DATA_ENCIPHERMENT 0x0010
#define UA_KU_KEY_AGREEMENT     0x0008
#define UA_KU_KEY_CERT_SIGN     0x0004
#define UA_KU_CRL_SIGN          0x0002

/* extendedKeyUsage purposes we look at. */
#define UA_EKU_ANY         0x01
#define UA_EKU_SERVER_AUTH 0x02
#define UA_EKU_CLIENT_AUTH 0x04

/* What an application instance certificate must allow (Part 6 §6.2.2). */
#define UA_KU_APPLICATION_REQUIRED \
    (UA_KU_DIGITAL_SIGNATURE | UA_KU_KEY_ENCIPHERMENT | \
     UA_KU_DATA_ENCIPHERMENT)
#define UA_KU_USER_REQUIRED UA_KU_DIGITAL_SIGNATURE
#define UA_KU_ISSUER_REQUIRED (UA_KU_KEY_CERT_SIGN | UA_KU_CRL_SIGN)

/* SubjectAltName GeneralName tags (context-specific, primitive). */
#define UA_SAN_DNS 2
#define UA_SAN_URI 6
#define UA_SAN_IP  7

enum ua_cert_key {
    UA_CERT_KEY_OTHER = 0,
    UA_CERT_KEY_RSA,
    UA_CERT_KEY_EC
};

/*
 * A parsed certificate.  The pointers point into der, which must outlive
 * the struct; nothing is allocated.
 */
struct ua_cert {
    const uint8_t *der;
    size_t         len;
    const uint8_t *subject;     /* Name contents, raw DER (compare bytes) */
    size_t         subject_len;
    const uint8_t *issuer;
    size_t         issuer_len;
    const uint8_t *san;         /* GeneralNames SEQUENCE, NULL if none */
    size_t         san_len;
    const uint8_t *ski;         /* subjectKeyIdentifier, NULL if none */
    size_t         ski_len;
    const uint8_t *aki;         /* authorityKeyIdentifier keyIdentifier */
    size_t         aki_len;
    const uint8_t *uri;         /* first SAN URI (the ApplicationUri) */
    size_t         uri_len;
    int64_t        not_before;  /* Unix seconds */
    int64_t        not_after;
    uint32_t       key_bits;    /* RSA modulus bits */
    uint16_t       key_usage;   /* UA_KU_* */
    uint8_t        eku;         /* UA_EKU_* */
    uint8_t        key_type;    /* enum ua_cert_key */
    uint8_t        sig_hash;    /* enum ua_hash of the signature */
    bool           has_key_usage;
    bool           has_eku;
    bool           is_ca;       /* basicConstraints cA = TRUE */
    bool           self_signed; /* subject == issuer */
    uint8_t        thumbprint[UA_CERT_THUMB_LEN];
    char           subject_str[UA_CERT_SUBJECT_MAX];    /* "/CN=x/O=y" */
};

/*
 * Parse one DER certificate of exactly len bytes (trailing bytes are
 * refused: use ua_cert_chain_split for chains).  Bad_CertificateInvalid for
 * anything wolfSSL or our own walk of the TBSCertificate does not accept.
 */
ua_status ua_cert_parse(const uint8_t *der, size_t len, struct ua_cert *c);

/* The idx-th SAN entry of type (UA_SAN_*), false when there is none. */
bool ua_cert_san_get(const struct ua_cert *c, uint8_t type, size_t idx,
                     const uint8_t **val, size_t *len);

/* Whether the SAN holds this URI, byte for byte. */
bool ua_cert_has_uri(const struct ua_cert *c, const uint8_t *uri,
                     size_t len);

/*
 * Cut a ByteString holding DER certificates back to back (Part 6 §6.2.3:
 * leaf first) into out[0..*n).  Bad_CertificateInvalid for a truncated or
 * non-SEQUENCE element or more than max certificates, Bad_CertificateInvalid
 * also for an element above UA_CERT_DER_MAX.
 */
ua_status ua_cert_chain_split(const uint8_t *buf, size_t len,
                              struct ua_cert_der *out, size_t max,
                              size_t *n);

/* SHA-1 of the DER (Part 6: the certificate thumbprint). */
ua_status ua_cert_thumbprint(const uint8_t *der, size_t len,
                             uint8_t out[UA_CERT_THUMB_LEN]);

/*
 * The file name a rejected certificate is stored under: 40 lower-case hex
 * digits of its thumbprint and ".der".  Never a name from the certificate:
 * a CN of "../../trusted/certs/x" must not pick the path
 * (docs/security.md case 44).
 */
void ua_cert_rejected_name(const uint8_t thumb[UA_CERT_THUMB_LEN],
                           char out[UA_CERT_REJECTED_NAME_LEN]);

/* ------------------------------------------------------------ validation */

enum ua_cert_role {
    UA_CERT_ROLE_CLIENT = 0,    /* a client's application certificate */
    UA_CERT_ROLE_SERVER,        /* a server's application certificate */
    UA_CERT_ROLE_USER           /* an X509IdentityToken */
};

/* Suppressible checks (Part 6 Annex E.6, GDS TrustListValidationOptions);
 * the caller logs or audits every suppression.  0 = check everything. */
#define UA_CERT_SUPPRESS_TIME               0x01
#define UA_CERT_SUPPRESS_ISSUER_TIME        0x02
#define UA_CERT_SUPPRESS_REVOCATION_UNKNOWN 0x04
#define UA_CERT_SUPPRESS_ISSUER_REVOCATION_UNKNOWN 0x08

/* The PKI's contents: trusted certificates and their CRLs, issuer
 * (untrusted, chain-building) certificates and theirs.  Entries that do
 * not parse are skipped. */
struct ua_cert_store {
    const struct ua_cert_der *trusted;
    size_t                    n_trusted;
    const struct ua_cert_der *trusted_crls;
    size_t                    n_trusted_crls;
    const struct ua_cert_der *issuers;
    size_t                    n_issuers;
    const struct ua_cert_der *issuer_crls;
    size_t                    n_issuer_crls;
};

/* What to check. */
struct ua_cert_check {
    int64_t        now;             /* Unix seconds */
    uint16_t       min_key_bits;    /* for every certificate in the chain */
    uint16_t       max_key_bits;
    uint8_t        min_hash;        /* enum ua_hash: weakest signature */
    uint8_t        role;            /* enum ua_cert_role */
    uint8_t        suppress;        /* UA_CERT_SUPPRESS_* */
    const uint8_t *app_uri;         /* NULL: no URI check */
    size_t         app_uri_len;
};

/*
 * Fill chk for a policy: its key length range and certificate hash; role
 * CLIENT, no suppression, no URI, the given now.  A NULL or None policy
 * gets the current policies' values (2048..4096 bits, SHA-256).
 */
void ua_cert_check_init(struct ua_cert_check *chk, const struct ua_policy *p,
                        int64_t now);

/* The outcome with some detail for the log. */
struct ua_cert_verdict {
    ua_status status;
    uint8_t   depth;        /* chain index that failed, 0 = the leaf */
    uint8_t   chain_len;    /* certificates in the chain built */
    uint8_t   thumbprint[UA_CERT_THUMB_LEN];    /* the leaf's, if parsed */
};

/*
 * Validate the certificate(s) in chain (the leaf, optionally followed by
 * issuers, as received) against store.  Returns UA_GOOD or the first
 * failing step's status (also in v->status; v may be NULL).  The peer's
 * extra certificates only help build the chain: they are never trust
 * anchors.  Takes about one RSA public operation per certificate plus one
 * wolfSSL CertManager per call; no allocation of ours.
 */
ua_status ua_cert_validate(const uint8_t *chain, size_t chain_len,
                           const struct ua_cert_store *store,
                           const struct ua_cert_check *chk,
                           struct ua_cert_verdict *v);

/* ------------------------------------------------------------ creation */

struct ua_cert_params {
    const char        *app_uri;         /* SAN URI, required */
    const char        *common_name;     /* CN, required, <= 64 bytes */
    const char        *organization;    /* O, NULL: none */
    const char        *domain_component;/* DC, NULL: none */
    const char *const *dns;             /* SAN DNS names */
    size_t             n_dns;
    int64_t            not_before;      /* Unix seconds */
    uint32_t           days;            /* validity from not_before */
};

/*
 * A self-signed application instance certificate for key (RSA, SHA-256
 * signature; Part 6 §6.2.2): subject CN/O/DC, SubjectAltName URI + DNS,
 * basicConstraints CA:FALSE, keyUsage digitalSignature, nonRepudiation,
 * keyEncipherment, dataEncipherment, keyCertSign (critical),
 * extendedKeyUsage serverAuth + clientAuth, subject and authority key ids,
 * a random 16-byte serial.  The result is parsed again before it is
 * returned (a bad SubjectAltName would otherwise surface only later,
 * docs/dependencies.md gotcha 11).  Writes *len bytes of DER to out.
 */
ua_status ua_cert_create(const struct ua_cert_params *p,
                         struct ua_crypto_key *key, uint8_t *out, size_t cap,
                         size_t *len);

/*
 * GeneralNames DER for a SubjectAltName: one URI, then the DNS names.
 * Exposed for tests.
 */
ua_status ua_cert_san_build(const char *uri, const char *const *dns,
                            size_t n_dns, uint8_t *out, size_t cap,
                            size_t *len);

/* An X.509 Time (UTCTime before 2050, GeneralizedTime after, RFC 5280
 * §4.1.2.5) as a DER TLV: 15 or 17 bytes.  Exposed for tests. */
size_t ua_cert_time_encode(int64_t t, uint8_t out[17]);

/* Parse a DER UTCTime/GeneralizedTime TLV ("Z" form only). */
ua_status ua_cert_time_decode(const uint8_t *tlv, size_t len, int64_t *t);

/* ------------------------------------------------------------ PEM */

/* DER certificate to PEM ("CERTIFICATE"), NUL-terminated; *len excludes
 * the NUL. */
ua_status ua_cert_to_pem(const uint8_t *der, size_t len, char *out,
                         size_t cap, size_t *out_len);

/* The first PEM certificate in pem[0..len) to DER. */
ua_status ua_cert_from_pem(const char *pem, size_t len, uint8_t *out,
                           size_t cap, size_t *out_len);

#endif /* UA_CERT_H */
