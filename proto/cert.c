/*
 * proto/cert.c: application instance certificates - parsing, chain
 * splitting, Part 4 §6.1.3 validation, creation, rejected-file names.
 *
 * The logic is here and pure: a small DER walker for the fields we compare
 * byte for byte (subject and issuer names, validity, SubjectAltName, CRL
 * headers), the chain search, the order of the checks and the status each
 * one yields.  Everything that needs wolfSSL - its certificate parser,
 * signature checks, the CertManager, certificate generation, PEM - is
 * reached through proto/crypto_int.h.
 *
 * No allocation of ours, no clock (the caller passes `now`), no I/O.
 */
#include "cert.h"

#include <string.h>

#include "crypto.h"
#include "crypto_int.h"
#include "status_gen.h"

/* A certificate's names and validity as found by our own walk. */
struct ua_cert_tbs {
    const uint8_t *issuer;          /* Name contents */
    size_t         issuer_len;
    const uint8_t *subject;
    size_t         subject_len;
    const uint8_t *not_before;      /* Time TLVs */
    size_t         not_before_len;
    const uint8_t *not_after;
    size_t         not_after_len;
};

/* The candidate lists an issuer is searched in, in this order. */
struct ua_cert_pool {
    const struct ua_cert_der *list[3];
    size_t                    n[3];
};

static bool ua_cert_tlv(const uint8_t **p, const uint8_t *end, uint8_t *tag,
                        const uint8_t **val, size_t *len);
static bool ua_cert_walk(const uint8_t *der, size_t len,
                         struct ua_cert_tbs *t, size_t *total);
static bool ua_cert_crl_walk(const uint8_t *der, size_t len,
                             const uint8_t **issuer, size_t *issuer_len,
                             int64_t *next_update);
static int64_t ua_cert_days_from_civil(int64_t y, int m, int d);
static void ua_cert_civil_from_days(int64_t z, int64_t *y, int *m, int *d);
static size_t ua_cert_len_size(size_t len);
static size_t ua_cert_len_write(uint8_t *p, size_t len);
static bool ua_cert_ia5_ok(const char *s);
static bool ua_cert_same_der(const struct ua_cert *a, const uint8_t *der,
                             size_t len);
static bool ua_cert_in_list(const struct ua_cert *c,
                            const struct ua_cert_der *list, size_t n);
static ua_status ua_cert_find_issuer(const struct ua_cert *child,
                                     const struct ua_cert *chain, size_t n,
                                     const struct ua_cert_pool *pool,
                                     struct ua_cert *out);
static int64_t ua_cert_when(const struct ua_cert *c, int64_t now);
static ua_status ua_cert_trust(const struct ua_cert *chain, size_t t,
                               int64_t now);
static ua_status ua_cert_usage(const struct ua_cert *chain, size_t n,
                               uint8_t role, size_t *depth);
static ua_status ua_cert_revocation(const struct ua_cert *chain, size_t n,
                                    const struct ua_cert_store *store,
                                    const struct ua_cert_check *chk,
                                    size_t *depth);

/* At most this many certificates in one received ByteString. */
#define UA_CERT_PEER_MAX (2 * UA_CERT_CHAIN_MAX)

/* ------------------------------------------------------------ DER walk */

/*
 * One TLV at *p before end: a one-byte tag (X.509 needs no other) and a
 * definite length of at most 4 bytes that fits.  Advances *p past it.
 */
static bool
ua_cert_tlv(const uint8_t **p, const uint8_t *end, uint8_t *tag,
            const uint8_t **val, size_t *len)
{
    const uint8_t *q = *p;
    size_t         l, n;

    if (q >= end || end - q < 2 || (q[0] & 0x1f) == 0x1f)
        return false;
    *tag = q[0];
    l = q[1];
    q += 2;
    if (l & 0x80) {
        n = l & 0x7f;
        if (n == 0 || n > 4 || (size_t)(end - q) < n)
            return false;
        l = 0;
        while (n-- > 0)
            l = (l << 8) | *q++;
    }
    if (l > (size_t)(end - q))
        return false;
    *val = q;
    *len = l;
    *p = q + l;
    return true;
}

/*
 * Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
 * TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber,
 *     signature, issuer, validity, subject, subjectPublicKeyInfo, ... }
 * *total: the Certificate's whole length.
 */
static bool
ua_cert_walk(const uint8_t *der, size_t len, struct ua_cert_tbs *t,
             size_t *total)
{
    const uint8_t *p = der, *end = der + len, *v, *tbs, *tend, *q, *vend;
    size_t         l;
    uint8_t        tag;

    if (!ua_cert_tlv(&p, end, &tag, &v, &l) || tag != 0x30)
        return false;
    *total = (size_t)(p - der);
    end = v + l;
    p = v;
    if (!ua_cert_tlv(&p, end, &tag, &tbs, &l) || tag != 0x30)
        return false;
    tend = tbs + l;
    q = tbs;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l))
        return false;
    if (tag == 0xa0 && !ua_cert_tlv(&q, tend, &tag, &v, &l))
        return false;
    if (tag != 0x02)                                /* serialNumber */
        return false;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l) || tag != 0x30)  /* sigalg */
        return false;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l) || tag != 0x30)  /* issuer */
        return false;
    t->issuer = v;
    t->issuer_len = l;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l) || tag != 0x30)  /* validity */
        return false;
    vend = v + l;
    t->not_before = v;
    if (!ua_cert_tlv(&v, vend, &tag, &p, &l) || (tag != 0x17 && tag != 0x18))
        return false;
    t->not_before_len = (size_t)(v - t->not_before);
    t->not_after = v;
    if (!ua_cert_tlv(&v, vend, &tag, &p, &l) || (tag != 0x17 && tag != 0x18))
        return false;
    t->not_after_len = (size_t)(v - t->not_after);
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l) || tag != 0x30)  /* subject */
        return false;
    t->subject = v;
    t->subject_len = l;
    return true;
}

/*
 * CertificateList ::= SEQUENCE { tbsCertList, signatureAlgorithm, sig }
 * TBSCertList ::= SEQUENCE { version OPTIONAL, signature, issuer,
 *     thisUpdate, nextUpdate OPTIONAL, ... }
 * *next_update is INT64_MAX when absent.
 */
static bool
ua_cert_crl_walk(const uint8_t *der, size_t len, const uint8_t **issuer,
                 size_t *issuer_len, int64_t *next_update)
{
    const uint8_t *p = der, *end = der + len, *v, *tbs, *tend, *q, *t0;
    size_t         l;
    uint8_t        tag;

    if (!ua_cert_tlv(&p, end, &tag, &v, &l) || tag != 0x30)
        return false;
    p = v;
    end = v + l;
    if (!ua_cert_tlv(&p, end, &tag, &tbs, &l) || tag != 0x30)
        return false;
    tend = tbs + l;
    q = tbs;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l))
        return false;
    if (tag == 0x02 && !ua_cert_tlv(&q, tend, &tag, &v, &l))   /* version */
        return false;
    if (tag != 0x30)                                /* signature */
        return false;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l) || tag != 0x30)
        return false;
    *issuer = v;
    *issuer_len = l;
    if (!ua_cert_tlv(&q, tend, &tag, &v, &l) || (tag != 0x17 && tag != 0x18))
        return false;                               /* thisUpdate */
    *next_update = INT64_MAX;
    t0 = q;
    if (q < tend && (q[0] == 0x17 || q[0] == 0x18)) {
        if (!ua_cert_tlv(&q, tend, &tag, &v, &l)
            || ua_cert_time_decode(t0, (size_t)(q - t0), next_update)
                   != UA_GOOD)
            return false;
    }
    return true;
}

/* ------------------------------------------------------------ time */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * algorithm). */
static int64_t
ua_cert_days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void
ua_cert_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

size_t
ua_cert_time_encode(int64_t t, uint8_t out[17])
{
    int64_t days = t / 86400, secs = t % 86400, y;
    int     m, d, i = 0;
    char    s[16];
    size_t  n;

    if (secs < 0) {
        secs += 86400;
        days--;
    }
    ua_cert_civil_from_days(days, &y, &m, &d);
    if (y < 1950 || y > 9999)
        return 0;
    if (y < 2050) {                     /* RFC 5280 §4.1.2.5: UTCTime */
        out[0] = 0x17;
        s[i++] = (char)('0' + (y / 10) % 10);
        s[i++] = (char)('0' + y % 10);
    } else {
        out[0] = 0x18;
        s[i++] = (char)('0' + y / 1000);
        s[i++] = (char)('0' + (y / 100) % 10);
        s[i++] = (char)('0' + (y / 10) % 10);
        s[i++] = (char)('0' + y % 10);
    }
    s[i++] = (char)('0' + m / 10);
    s[i++] = (char)('0' + m % 10);
    s[i++] = (char)('0' + d / 10);
    s[i++] = (char)('0' + d % 10);
    s[i++] = (char)('0' + secs / 36000);
    s[i++] = (char)('0' + (secs / 3600) % 10);
    s[i++] = (char)('0' + (secs % 3600) / 600);
    s[i++] = (char)('0' + (secs % 600) / 60);
    s[i++] = (char)('0' + (secs % 60) / 10);
    s[i++] = (char)('0' + secs % 10);
    s[i++] = 'Z';
    n = (size_t)i;
    out[1] = (uint8_t)n;
    memcpy(out + 2, s, n);
    return n + 2;
}

ua_status
ua_cert_time_decode(const uint8_t *tlv, size_t len, int64_t *t)
{
    static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31,
                                   30, 31 };
    const uint8_t   *s;
    size_t           n, i;
    int64_t          y;
    int              v[5], k;

    if (tlv == NULL || t == NULL || len < 2 || tlv[1] != len - 2)
        return UA_BAD_DECODING_ERROR;
    s = tlv + 2;
    n = len - 2;
    if (!((tlv[0] == 0x17 && n == 13) || (tlv[0] == 0x18 && n == 15))
        || s[n - 1] != 'Z')
        return UA_BAD_DECODING_ERROR;
    for (i = 0; i < n - 1; i++)
        if (s[i] < '0' || s[i] > '9')
            return UA_BAD_DECODING_ERROR;
    if (tlv[0] == 0x17) {
        y = (s[0] - '0') * 10 + (s[1] - '0');
        y += y < 50 ? 2000 : 1900;
        s += 2;
    } else {
        y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10
            + (s[3] - '0');
        s += 4;
    }
    for (k = 0; k < 5; k++)
        v[k] = (s[2 * k] - '0') * 10 + (s[2 * k + 1] - '0');
    /* v: month, day, hour, minute, second */
    if (v[0] < 1 || v[0] > 12 || v[1] < 1 || v[1] > mdays[v[0] - 1]
        || (v[0] == 2 && v[1] == 29
            && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
        || v[2] > 23 || v[3] > 59 || v[4] > 59)
        return UA_BAD_DECODING_ERROR;
    *t = ua_cert_days_from_civil(y, v[0], v[1]) * 86400 + v[2] * 3600
         + v[3] * 60 + v[4];
    return UA_GOOD;
}

/* ------------------------------------------------------------ parsing */

ua_status
ua_cert_parse(const uint8_t *der, size_t len, struct ua_cert *c)
{
    struct ua_cert_tbs t;
    size_t             total = 0;

    if (c == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    memset(c, 0, sizeof(*c));
    if (der == NULL || len == 0 || len > UA_CERT_DER_MAX
        || !ua_cert_walk(der, len, &t, &total) || total != len)
        return UA_BAD_CERTIFICATE_INVALID;
    /* An empty subject is refused outright (docs/security.md case 40). */
    if (t.subject_len == 0)
        return UA_BAD_CERTIFICATE_INVALID;
    if (ua_cert_time_decode(t.not_before, t.not_before_len, &c->not_before)
            != UA_GOOD
        || ua_cert_time_decode(t.not_after, t.not_after_len, &c->not_after)
               != UA_GOOD)
        return UA_BAD_CERTIFICATE_INVALID;
    if (ua_crypto_x509_parse(der, len, c) != UA_GOOD) {
        memset(c, 0, sizeof(*c));
        return UA_BAD_CERTIFICATE_INVALID;
    }
    c->der = der;
    c->len = len;
    c->subject = t.subject;
    c->subject_len = t.subject_len;
    c->issuer = t.issuer;
    c->issuer_len = t.issuer_len;
    if (!ua_cert_san_get(c, UA_SAN_URI, 0, &c->uri, &c->uri_len)) {
        c->uri = NULL;
        c->uri_len = 0;
    }
    if (ua_crypto_hash(UA_HASH_SHA1, der, len, c->thumbprint) != UA_GOOD) {
        memset(c, 0, sizeof(*c));
        return UA_BAD_INTERNAL_ERROR;
    }
    return UA_GOOD;
}

bool
ua_cert_san_get(const struct ua_cert *c, uint8_t type, size_t idx,
                const uint8_t **val, size_t *len)
{
    const uint8_t *p, *end, *v, *q, *qend;
    size_t         l;
    uint8_t        tag;

    if (c == NULL || c->san == NULL)
        return false;
    p = c->san;
    end = c->san + c->san_len;
    if (!ua_cert_tlv(&p, end, &tag, &v, &l) || tag != 0x30)
        return false;
    q = v;
    qend = v + l;
    while (q < qend) {
        if (!ua_cert_tlv(&q, qend, &tag, &v, &l))
            return false;
        /* context-specific, primitive, tag number type */
        if (tag == (uint8_t)(0x80 | type)) {
            if (idx == 0) {
                *val = v;
                *len = l;
                return true;
            }
            idx--;
        }
    }
    return false;
}

bool
ua_cert_has_uri(const struct ua_cert *c, const uint8_t *uri, size_t len)
{
    const uint8_t *v;
    size_t         l, i;

    for (i = 0; ua_cert_san_get(c, UA_SAN_URI, i, &v, &l); i++)
        if (l == len && memcmp(v, uri, len) == 0)
            return true;
    return false;
}

ua_status
ua_cert_chain_split(const uint8_t *buf, size_t len, struct ua_cert_der *out,
                    size_t max, size_t *n)
{
    const uint8_t *p = buf, *end = buf + len, *start, *v;
    size_t         l, k = 0;
    uint8_t        tag;

    if (buf == NULL || n == NULL || len == 0)
        return UA_BAD_CERTIFICATE_INVALID;
    while (p < end) {
        start = p;
        if (k == max || !ua_cert_tlv(&p, end, &tag, &v, &l) || tag != 0x30
            || (size_t)(p - start) > UA_CERT_DER_MAX)
            return UA_BAD_CERTIFICATE_INVALID;
        out[k].der = start;
        out[k].len = (size_t)(p - start);
        k++;
    }
    *n = k;
    return UA_GOOD;
}

ua_status
ua_cert_thumbprint(const uint8_t *der, size_t len,
                   uint8_t out[UA_CERT_THUMB_LEN])
{
    return ua_crypto_hash(UA_HASH_SHA1, der, len, out);
}

void
ua_cert_rejected_name(const uint8_t thumb[UA_CERT_THUMB_LEN],
                      char out[UA_CERT_REJECTED_NAME_LEN])
{
    static const char hex[] = "0123456789abcdef";
    size_t            i;

    for (i = 0; i < UA_CERT_THUMB_LEN; i++) {
        out[2 * i] = hex[thumb[i] >> 4];
        out[2 * i + 1] = hex[thumb[i] & 0x0f];
    }
    memcpy(out + 2 * UA_CERT_THUMB_LEN, ".der", 5);
}

/* ------------------------------------------------------------ validation */

void
ua_cert_check_init(struct ua_cert_check *chk, const struct ua_policy *p,
                   int64_t now)
{
    memset(chk, 0, sizeof(*chk));
    chk->now = now;
    chk->role = UA_CERT_ROLE_CLIENT;
    if (ua_crypto_policy_is_none(p)) {
        chk->min_key_bits = 2048;
        chk->max_key_bits = 4096;
        chk->min_hash = UA_HASH_SHA256;
        return;
    }
    chk->min_key_bits = p->min_key_bits;
    chk->max_key_bits = p->max_key_bits;
    chk->min_hash = p->cert_min_hash;
}

static bool
ua_cert_same_der(const struct ua_cert *a, const uint8_t *der, size_t len)
{
    return a->len == len && memcmp(a->der, der, len) == 0;
}

static bool
ua_cert_in_list(const struct ua_cert *c, const struct ua_cert_der *list,
                size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (ua_cert_same_der(c, list[i].der, list[i].len))
            return true;
    return false;
}

/*
 * child's issuer from the pool: subject == child's issuer (bytes), key ids
 * equal when both are there, not in chain[0..n) already (a loop), and its
 * key verifies child's signature.  Bad_CertificateInvalid when names match
 * but no signature does, Bad_CertificateChainIncomplete when none matches.
 */
static ua_status
ua_cert_find_issuer(const struct ua_cert *child, const struct ua_cert *chain,
                    size_t n, const struct ua_cert_pool *pool,
                    struct ua_cert *out)
{
    struct ua_cert_tbs t;
    size_t             li, i, k, total;
    bool               bad_sig = false, seen;

    for (li = 0; li < 3; li++) {
        for (i = 0; i < pool->n[li]; i++) {
            const struct ua_cert_der *d = &pool->list[li][i];

            if (d->der == NULL || d->len > UA_CERT_DER_MAX
                || !ua_cert_walk(d->der, d->len, &t, &total)
                || total != d->len || t.subject_len != child->issuer_len
                || memcmp(t.subject, child->issuer, t.subject_len) != 0)
                continue;
            seen = false;
            for (k = 0; k < n && !seen; k++)
                seen = ua_cert_same_der(&chain[k], d->der, d->len);
            if (seen || ua_cert_parse(d->der, d->len, out) != UA_GOOD)
                continue;
            if (child->aki != NULL && out->ski != NULL
                && (child->aki_len != out->ski_len
                    || memcmp(child->aki, out->ski, out->ski_len) != 0))
                continue;
            if (!ua_crypto_x509_signed_by(child, out)) {
                bad_sig = true;
                continue;
            }
            return UA_GOOD;
        }
    }
    return bad_sig ? UA_BAD_CERTIFICATE_INVALID
                   : UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE;
}

/* A moment the certificate is valid at, as close to now as possible: the
 * time wolfSSL sees, so that its date check never decides (step 6 does). */
static int64_t
ua_cert_when(const struct ua_cert *c, int64_t now)
{
    if (now < c->not_before)
        return c->not_before;
    if (now > c->not_after)
        return c->not_after;
    return now;
}

/*
 * Step 5 for a chain whose certificate t (> 0) is in the trust list: a
 * fresh CertManager whose only anchor is chain[t]; each certificate below
 * it must verify before it is loaded (verify-then-load,
 * docs/dependencies.md gotcha 7), and the leaf must verify.  Nothing the
 * peer sent is ever loaded unverified.
 */
static ua_status
ua_cert_trust(const struct ua_cert *chain, size_t t, int64_t now)
{
    struct ua_crypto_cm *cm;
    ua_status            rc = UA_BAD_CERTIFICATE_UNTRUSTED;
    size_t               i;

    if (ua_crypto_cm_new(&cm) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    if (ua_crypto_cm_add_ca(cm, chain[t].der, chain[t].len,
                            ua_cert_when(&chain[t], now)) != UA_X509_OK)
        goto done;
    for (i = t; i-- > 1;) {
        if (ua_crypto_cm_verify(cm, chain[i].der, chain[i].len,
                                ua_cert_when(&chain[i], now)) != UA_X509_OK
            || ua_crypto_cm_add_ca(cm, chain[i].der, chain[i].len,
                                   ua_cert_when(&chain[i], now))
                   != UA_X509_OK)
            goto done;
    }
    if (ua_crypto_cm_verify(cm, chain[0].der, chain[0].len,
                            ua_cert_when(&chain[0], now)) == UA_X509_OK)
        rc = UA_GOOD;
done:
    ua_crypto_cm_free(cm);
    return rc;
}

/* Step 9: the leaf's use per role, then every issuer's. */
static ua_status
ua_cert_usage(const struct ua_cert *chain, size_t n, uint8_t role,
              size_t *depth)
{
    const struct ua_cert *leaf = &chain[0];
    uint16_t              need;
    uint8_t               purpose = 0;
    size_t                i;

    *depth = 0;
    need = role == UA_CERT_ROLE_USER ? UA_KU_USER_REQUIRED
                                     : UA_KU_APPLICATION_REQUIRED;
    if (role == UA_CERT_ROLE_CLIENT)
        purpose = UA_EKU_CLIENT_AUTH;
    else if (role == UA_CERT_ROLE_SERVER)
        purpose = UA_EKU_SERVER_AUTH;
    if (leaf->is_ca || !leaf->has_key_usage
        || (leaf->key_usage & need) != need)
        return UA_BAD_CERTIFICATE_USE_NOT_ALLOWED;
    if (purpose != 0 && leaf->has_eku
        && (leaf->eku & (purpose | UA_EKU_ANY)) == 0)
        return UA_BAD_CERTIFICATE_USE_NOT_ALLOWED;
    for (i = 1; i < n; i++) {
        if (!chain[i].is_ca
            || (chain[i].has_key_usage
                && (chain[i].key_usage & UA_KU_ISSUER_REQUIRED)
                       != UA_KU_ISSUER_REQUIRED)) {
            *depth = i;
            return UA_BAD_CERTIFICATE_ISSUER_USE_NOT_ALLOWED;
        }
    }
    return UA_GOOD;
}

/*
 * Steps 10 and 11: every certificate but the root needs a current CRL from
 * its issuer (trusted or issuer list, signature checked by wolfSSL against
 * the issuer) and must not be on it.  The CertManager here holds the whole
 * chain, verified from the root down; it answers revocation only - trust
 * was settled in step 5.
 */
static ua_status
ua_cert_revocation(const struct ua_cert *chain, size_t n,
                   const struct ua_cert_store *store,
                   const struct ua_cert_check *chk, size_t *depth)
{
    const struct ua_cert_der *lists[2];
    size_t                    counts[2], li, k, i, il;
    struct ua_crypto_cm      *cm;
    const uint8_t            *iss;
    int64_t                   next;
    ua_status                 rc = UA_GOOD;
    int                       found, r;

    *depth = 0;
    if (n < 2)
        return UA_GOOD;                 /* self-signed: no issuer, no CRL */
    lists[0] = store->trusted_crls;
    counts[0] = store->trusted_crls != NULL ? store->n_trusted_crls : 0;
    lists[1] = store->issuer_crls;
    counts[1] = store->issuer_crls != NULL ? store->n_issuer_crls : 0;
    if (ua_crypto_cm_new(&cm) != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    if (ua_crypto_cm_add_ca(cm, chain[n - 1].der, chain[n - 1].len,
                            ua_cert_when(&chain[n - 1], chk->now))
        != UA_X509_OK) {
        rc = UA_BAD_CERTIFICATE_UNTRUSTED;
        goto done;
    }
    for (i = n - 1; i-- > 1;) {
        int64_t w = ua_cert_when(&chain[i], chk->now);

        if (ua_crypto_cm_verify(cm, chain[i].der, chain[i].len, w)
                != UA_X509_OK
            || ua_crypto_cm_add_ca(cm, chain[i].der, chain[i].len, w)
                   != UA_X509_OK) {
            *depth = i;
            rc = UA_BAD_CERTIFICATE_UNTRUSTED;
            goto done;
        }
    }
    for (i = 0; i + 1 < n; i++) {
        const struct ua_cert *issuer = &chain[i + 1];
        uint8_t               unknown_flag = i == 0
            ? UA_CERT_SUPPRESS_REVOCATION_UNKNOWN
            : UA_CERT_SUPPRESS_ISSUER_REVOCATION_UNKNOWN;

        *depth = i;
        found = 0;
        for (li = 0; li < 2; li++) {
            for (k = 0; k < counts[li]; k++) {
                const struct ua_cert_der *d = &lists[li][k];

                if (d->der == NULL
                    || !ua_cert_crl_walk(d->der, d->len, &iss, &il, &next)
                    || il != issuer->subject_len
                    || memcmp(iss, issuer->subject, il) != 0
                    || next < chk->now)
                    continue;
                if (ua_crypto_cm_add_crl(cm, d->der, d->len, chk->now)
                    == UA_X509_OK)
                    found++;
            }
        }
        /* wolfSSL re-parses the certificate with its date check: give it
         * a time inside its validity, as everywhere (step 6 decided). */
        r = found ? ua_crypto_cm_check_crl(cm, chain[i].der, chain[i].len,
                                           ua_cert_when(&chain[i], chk->now))
                  : UA_X509_CRL_MISSING;
        if (r == UA_X509_OK)
            continue;
        if (r == UA_X509_REVOKED) {
            rc = i == 0 ? UA_BAD_CERTIFICATE_REVOKED
                        : UA_BAD_CERTIFICATE_ISSUER_REVOKED;
            goto done;
        }
        if (r == UA_X509_CRL_MISSING && (chk->suppress & unknown_flag))
            continue;
        rc = i == 0 ? UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN
                    : UA_BAD_CERTIFICATE_ISSUER_REVOCATION_UNKNOWN;
        goto done;
    }
done:
    ua_crypto_cm_free(cm);
    return rc;
}

ua_status
ua_cert_validate(const uint8_t *chain, size_t chain_len,
                 const struct ua_cert_store *store,
                 const struct ua_cert_check *chk, struct ua_cert_verdict *v)
{
    static const struct ua_cert_store empty;
    struct ua_cert_verdict            dummy;
    struct ua_cert_der                peer[UA_CERT_PEER_MAX];
    struct ua_cert                    c[UA_CERT_CHAIN_MAX];
    struct ua_cert                    tmp;
    struct ua_cert_pool               pool;
    size_t                            n_peer = 0, n = 0, i, t, depth = 0;
    ua_status                         rc;

    if (v == NULL)
        v = &dummy;
    memset(v, 0, sizeof(*v));
    if (chk == NULL) {
        v->status = UA_BAD_INVALID_ARGUMENT;
        return v->status;
    }
    if (store == NULL)
        store = &empty;

    /* 1: structure of everything the peer sent */
    rc = ua_cert_chain_split(chain, chain_len, peer, UA_CERT_PEER_MAX,
                             &n_peer);
    if (rc != UA_GOOD)
        goto fail;
    for (i = 0; i < n_peer; i++) {
        rc = ua_cert_parse(peer[i].der, peer[i].len, i == 0 ? &c[0] : &tmp);
        if (rc != UA_GOOD) {
            rc = UA_BAD_CERTIFICATE_INVALID;
            depth = i;
            goto fail;
        }
    }
    memcpy(v->thumbprint, c[0].thumbprint, UA_CERT_THUMB_LEN);
    n = 1;

    /* 2 + 3: issuers from the trust list, the issuer list, then the peer's
     * own certificates; each link's signature checked as it is added */
    pool.list[0] = store->trusted;
    pool.n[0] = store->trusted != NULL ? store->n_trusted : 0;
    pool.list[1] = store->issuers;
    pool.n[1] = store->issuers != NULL ? store->n_issuers : 0;
    pool.list[2] = peer + 1;
    pool.n[2] = n_peer - 1;
    while (!c[n - 1].self_signed) {
        if (n == UA_CERT_CHAIN_MAX) {
            rc = UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE;
            depth = n - 1;
            goto fail;
        }
        rc = ua_cert_find_issuer(&c[n - 1], c, n, &pool, &c[n]);
        if (rc != UA_GOOD) {
            depth = n - 1;
            goto fail;
        }
        n++;
    }
    if (!ua_crypto_x509_signed_by(&c[n - 1], &c[n - 1])) {
        rc = UA_BAD_CERTIFICATE_INVALID;
        depth = n - 1;
        goto fail;
    }
    v->chain_len = (uint8_t)n;

    /* 4: security policy - key type and length, signature hash */
    for (i = 0; i < n; i++) {
        if (c[i].key_type != UA_CERT_KEY_RSA
            || c[i].key_bits < chk->min_key_bits
            || c[i].key_bits > chk->max_key_bits
            || c[i].sig_hash == UA_HASH_NONE
            || c[i].sig_hash < chk->min_hash) {
            rc = UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED;
            depth = i;
            goto fail;
        }
    }

    /* 5: trust - the lowest certificate of the chain in the trust list */
    for (t = 0; t < n; t++)
        if (store->trusted != NULL
            && ua_cert_in_list(&c[t], store->trusted, store->n_trusted))
            break;
    if (t == n) {
        rc = UA_BAD_CERTIFICATE_UNTRUSTED;
        depth = 0;
        goto fail;
    }
    if (t > 0) {
        rc = ua_cert_trust(c, t, chk->now);
        if (rc != UA_GOOD) {
            depth = 0;
            goto fail;
        }
    }

    /* 6: validity */
    for (i = 0; i < n; i++) {
        if (chk->now >= c[i].not_before && chk->now <= c[i].not_after)
            continue;
        if (chk->suppress
            & (i == 0 ? UA_CERT_SUPPRESS_TIME : UA_CERT_SUPPRESS_ISSUER_TIME))
            continue;
        rc = i == 0 ? UA_BAD_CERTIFICATE_TIME_INVALID
                    : UA_BAD_CERTIFICATE_ISSUER_TIME_INVALID;
        depth = i;
        goto fail;
    }

    /* 7: host name - not for a server checking clients */

    /* 8: URI */
    if (chk->app_uri != NULL
        && !ua_cert_has_uri(&c[0], chk->app_uri, chk->app_uri_len)) {
        rc = UA_BAD_CERTIFICATE_URI_INVALID;
        depth = 0;
        goto fail;
    }

    /* 9: usage */
    rc = ua_cert_usage(c, n, chk->role, &depth);
    if (rc != UA_GOOD)
        goto fail;

    /* 10 + 11: revocation */
    rc = ua_cert_revocation(c, n, store, chk, &depth);
    if (rc != UA_GOOD)
        goto fail;

    v->status = UA_GOOD;
    return UA_GOOD;
fail:
    v->status = rc;
    v->depth = (uint8_t)depth;
    if (v->chain_len == 0)
        v->chain_len = (uint8_t)n;
    return rc;
}

/* ------------------------------------------------------------ creation */

static size_t
ua_cert_len_size(size_t len)
{
    if (len < 0x80)
        return 1;
    if (len < 0x100)
        return 2;
    if (len < 0x10000)
        return 3;
    return 4;
}

static size_t
ua_cert_len_write(uint8_t *p, size_t len)
{
    size_t n = ua_cert_len_size(len), i;

    if (n == 1) {
        p[0] = (uint8_t)len;
        return 1;
    }
    p[0] = (uint8_t)(0x80 | (n - 1));
    for (i = 1; i < n; i++)
        p[i] = (uint8_t)(len >> (8 * (n - 1 - i)));
    return n;
}

/* IA5String without spaces or controls: what a URI or DNS name holds. */
static bool
ua_cert_ia5_ok(const char *s)
{
    if (s == NULL || *s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
            return false;
    return true;
}

ua_status
ua_cert_san_build(const char *uri, const char *const *dns, size_t n_dns,
                  uint8_t *out, size_t cap, size_t *len)
{
    size_t body, ul, l, i, pos;

    if (!ua_cert_ia5_ok(uri) || out == NULL || len == NULL
        || (n_dns != 0 && dns == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    ul = strlen(uri);
    if (ul > 0xffff)
        return UA_BAD_INVALID_ARGUMENT;
    body = 1 + ua_cert_len_size(ul) + ul;
    for (i = 0; i < n_dns; i++) {
        if (!ua_cert_ia5_ok(dns[i]) || strlen(dns[i]) > 255)
            return UA_BAD_INVALID_ARGUMENT;
        l = strlen(dns[i]);
        body += 1 + ua_cert_len_size(l) + l;
    }
    if (body > 0xffff || 1 + ua_cert_len_size(body) + body > cap)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    pos = 0;
    out[pos++] = 0x30;
    pos += ua_cert_len_write(out + pos, body);
    out[pos++] = 0x80 | UA_SAN_URI;
    pos += ua_cert_len_write(out + pos, ul);
    memcpy(out + pos, uri, ul);
    pos += ul;
    for (i = 0; i < n_dns; i++) {
        l = strlen(dns[i]);
        out[pos++] = 0x80 | UA_SAN_DNS;
        pos += ua_cert_len_write(out + pos, l);
        memcpy(out + pos, dns[i], l);
        pos += l;
    }
    *len = pos;
    return UA_GOOD;
}

ua_status
ua_cert_create(const struct ua_cert_params *p, struct ua_crypto_key *key,
               uint8_t *out, size_t cap, size_t *len)
{
    struct ua_x509_req req;
    struct ua_cert     c;
    uint8_t            san[4096], nb[17], na[17], serial[16];
    size_t             san_len, i;
    const uint8_t     *v;
    size_t             vl;
    int64_t            end;
    ua_status          rc;

    if (p == NULL || key == NULL || out == NULL || len == NULL
        || p->common_name == NULL || p->days == 0
        || !ua_crypto_key_is_private(key))
        return UA_BAD_INVALID_ARGUMENT;
    rc = ua_cert_san_build(p->app_uri, p->dns, p->n_dns, san, sizeof(san),
                           &san_len);
    if (rc != UA_GOOD)
        return rc;
    end = p->not_before + (int64_t)p->days * 86400;
    memset(&req, 0, sizeof(req));
    req.not_before_len = ua_cert_time_encode(p->not_before, nb);
    req.not_after_len = ua_cert_time_encode(end, na);
    if (req.not_before_len == 0 || req.not_after_len == 0)
        return UA_BAD_INVALID_ARGUMENT;
    rc = ua_crypto_random(serial, sizeof(serial));
    if (rc != UA_GOOD)
        return rc;
    serial[0] = (uint8_t)((serial[0] & 0x7f) | 0x40);   /* positive, 16 B */
    req.cn = p->common_name;
    req.org = p->organization;
    req.dc = p->domain_component;
    req.san = san;
    req.san_len = san_len;
    req.not_before = nb;
    req.not_after = na;
    req.serial = serial;
    req.serial_len = sizeof(serial);
    req.key_usage = "digitalSignature,nonRepudiation,keyEncipherment,"
                    "dataEncipherment,keyCertSign";
    req.ext_key_usage = "serverAuth,clientAuth";
    rc = ua_crypto_x509_make_self(&req, key, out, cap, len);
    if (rc != UA_GOOD)
        return rc;

    /* Read it back: what we meant must be what we wrote
     * (docs/dependencies.md gotcha 11). */
    rc = UA_BAD_CERTIFICATE_INVALID;
    if (ua_cert_parse(out, *len, &c) != UA_GOOD
        || !ua_cert_has_uri(&c, (const uint8_t *)p->app_uri,
                            strlen(p->app_uri))
        || !c.self_signed || c.is_ca || !c.has_key_usage
        || (c.key_usage & UA_KU_APPLICATION_REQUIRED)
               != UA_KU_APPLICATION_REQUIRED
        || (c.eku & (UA_EKU_SERVER_AUTH | UA_EKU_CLIENT_AUTH))
               != (UA_EKU_SERVER_AUTH | UA_EKU_CLIENT_AUTH)
        || c.key_bits != ua_crypto_key_bits(key)
        || c.not_before != p->not_before || c.not_after != end
        || c.sig_hash != UA_HASH_SHA256 || !ua_crypto_x509_signed_by(&c, &c))
        goto bad;
    for (i = 0; i < p->n_dns; i++)
        if (!ua_cert_san_get(&c, UA_SAN_DNS, i, &v, &vl)
            || vl != strlen(p->dns[i]) || memcmp(v, p->dns[i], vl) != 0)
            goto bad;
    return UA_GOOD;
bad:
    ua_crypto_wipe(out, *len);
    *len = 0;
    return rc;
}

/* ------------------------------------------------------------ PEM */

ua_status
ua_cert_to_pem(const uint8_t *der, size_t len, char *out, size_t cap,
               size_t *out_len)
{
    return ua_crypto_pem_from_der(der, len, out, cap, out_len);
}

ua_status
ua_cert_from_pem(const char *pem, size_t len, uint8_t *out, size_t cap,
                 size_t *out_len)
{
    return ua_crypto_pem_to_der(pem, len, out, cap, out_len);
}
