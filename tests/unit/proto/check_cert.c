/*
 * tests/unit/proto/check_cert.c: proto/cert.h - parsing, times, chains,
 * SubjectAltName, rejected-file names, application certificate creation and
 * the validation matrix of Part 4 §6.1.3 (docs/security.md cases 38, 40,
 * 44).
 *
 * The certificates and CRLs are made by tests/unit/proto/pki/make_pki.sh
 * (see its header for what each one is) and compiled in from pki_gen.h.
 * Every validation runs at PKI_NOW (2030-01-01), inside the committed
 * certificates' validity, whatever the real date.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/cert.h"
#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "tests/unit/proto/pki/pki_gen.h"

#define DER(x) { x, sizeof(x) }
#define T_2025 1735689600       /* 2025-01-01 00:00:00 UTC */
#define T_2045 2366841600       /* 2045-01-01 00:00:00 UTC */

static void
setup(void)
{
    ck_assert_uint_eq(ua_crypto_init(), UA_GOOD);
}

static void
teardown(void)
{
    ua_crypto_cleanup();
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ parsing */

START_TEST(test_parse_app)
{
    struct ua_cert c;
    const uint8_t *v;
    size_t         l;
    uint8_t        sha1[20];

    ck_assert_uint_eq(ua_cert_parse(pki_app_der, sizeof(pki_app_der), &c),
                      UA_GOOD);
    ck_assert_ptr_eq(c.der, pki_app_der);
    ck_assert_str_eq(c.subject_str, "/CN=app/O=uabroker test/DC=localhost");
    ck_assert_uint_eq(c.uri_len, strlen("urn:uabroker:test:app"));
    ck_assert_mem_eq(c.uri, "urn:uabroker:test:app", c.uri_len);
    ck_assert(ua_cert_has_uri(&c, (const uint8_t *)"urn:uabroker:test:app",
                              21));
    ck_assert(!ua_cert_has_uri(&c, (const uint8_t *)"urn:uabroker:test:ap",
                               20));
    ck_assert(ua_cert_san_get(&c, UA_SAN_DNS, 0, &v, &l));
    ck_assert_uint_eq(l, 9);
    ck_assert_mem_eq(v, "localhost", 9);
    ck_assert(!ua_cert_san_get(&c, UA_SAN_DNS, 1, &v, &l));
    ck_assert(!ua_cert_san_get(&c, UA_SAN_IP, 0, &v, &l));
    ck_assert_uint_eq(c.key_type, UA_CERT_KEY_RSA);
    ck_assert_uint_eq(c.key_bits, 2048);
    ck_assert_uint_eq(c.sig_hash, UA_HASH_SHA256);
    ck_assert(c.has_key_usage);
    ck_assert_uint_eq(c.key_usage,
                      UA_KU_DIGITAL_SIGNATURE | UA_KU_NON_REPUDIATION
                          | UA_KU_KEY_ENCIPHERMENT | UA_KU_DATA_ENCIPHERMENT
                          | UA_KU_KEY_CERT_SIGN);
    ck_assert(c.has_eku);
    ck_assert_uint_eq(c.eku, UA_EKU_SERVER_AUTH | UA_EKU_CLIENT_AUTH);
    ck_assert(!c.is_ca);
    ck_assert(c.self_signed);
    ck_assert_int_eq(c.not_before, T_2025);
    ck_assert_int_eq(c.not_after, T_2045);
    ck_assert_uint_eq(c.subject_len, c.issuer_len);
    ck_assert_mem_eq(c.subject, c.issuer, c.subject_len);
    ck_assert_ptr_nonnull(c.ski);
    ck_assert_uint_eq(c.ski_len, 20);
    ck_assert_uint_eq(ua_crypto_hash(UA_HASH_SHA1, pki_app_der,
                                     sizeof(pki_app_der), sha1),
                      UA_GOOD);
    ck_assert_mem_eq(c.thumbprint, sha1, 20);
    ck_assert_uint_eq(ua_cert_thumbprint(pki_app_der, sizeof(pki_app_der),
                                         sha1),
                      UA_GOOD);
    ck_assert_mem_eq(c.thumbprint, sha1, 20);
}
END_TEST

START_TEST(test_parse_others)
{
    struct ua_cert c, i;

    ck_assert_uint_eq(ua_cert_parse(pki_sha1_der, sizeof(pki_sha1_der), &c),
                      UA_GOOD);
    ck_assert_uint_eq(c.sig_hash, UA_HASH_SHA1);
    ck_assert_uint_eq(ua_cert_parse(pki_rsa1024_der, sizeof(pki_rsa1024_der),
                                    &c),
                      UA_GOOD);
    ck_assert_uint_eq(c.key_bits, 1024);
    ck_assert_uint_eq(ua_cert_parse(pki_rsa3072_der, sizeof(pki_rsa3072_der),
                                    &c),
                      UA_GOOD);
    ck_assert_uint_eq(c.key_bits, 3072);
    ck_assert_uint_eq(ua_cert_parse(pki_noku_der, sizeof(pki_noku_der), &c),
                      UA_GOOD);
    ck_assert_uint_eq(c.key_usage, UA_KU_DIGITAL_SIGNATURE);
    ck_assert_uint_eq(ua_cert_parse(pki_servonly_der,
                                    sizeof(pki_servonly_der), &c),
                      UA_GOOD);
    ck_assert_uint_eq(c.eku, UA_EKU_SERVER_AUTH);
    ck_assert_uint_eq(ua_cert_parse(pki_nouri_der, sizeof(pki_nouri_der), &c),
                      UA_GOOD);
    ck_assert_ptr_null(c.uri);
    ck_assert_uint_eq(ua_cert_parse(pki_expired_der, sizeof(pki_expired_der),
                                    &c),
                      UA_GOOD);
    ck_assert_int_eq(c.not_before, 1577836800);     /* 2020-01-01 */
    ck_assert_int_eq(c.not_after, 1609459200);      /* 2021-01-01 */
    ck_assert_uint_eq(ua_cert_parse(pki_root_der, sizeof(pki_root_der), &c),
                      UA_GOOD);
    ck_assert(c.is_ca && c.self_signed);
    ck_assert_uint_eq(c.key_usage, UA_KU_KEY_CERT_SIGN | UA_KU_CRL_SIGN);
    ck_assert(!c.has_eku);
    ck_assert_uint_eq(ua_cert_parse(pki_int_der, sizeof(pki_int_der), &i),
                      UA_GOOD);
    ck_assert(i.is_ca && !i.self_signed);
    ck_assert_uint_eq(i.issuer_len, c.subject_len);
    ck_assert_mem_eq(i.issuer, c.subject, c.subject_len);
    ck_assert_uint_eq(i.aki_len, c.ski_len);
    ck_assert_mem_eq(i.aki, c.ski, c.ski_len);
    ck_assert_uint_eq(ua_cert_parse(pki_leaf_der, sizeof(pki_leaf_der), &c),
                      UA_GOOD);
    ck_assert(!c.is_ca && !c.self_signed);
    ck_assert_mem_eq(c.aki, i.ski, i.ski_len);
    ck_assert_mem_eq(c.uri, "urn:uabroker:test:leaf", c.uri_len);
}
END_TEST

/* Bytes that are not one whole certificate: Bad_CertificateInvalid, never
 * a crash (ASan watches the truncations: each is a fresh exact-size copy). */
START_TEST(test_parse_malformed)
{
    struct ua_cert c;
    uint8_t        buf[2048];
    size_t         n = sizeof(pki_leaf_der), cut, i;

    ck_assert_uint_eq(ua_cert_parse(NULL, 10, &c),
                      UA_BAD_CERTIFICATE_INVALID);
    ck_assert_uint_eq(ua_cert_parse(pki_leaf_der, 0, &c),
                      UA_BAD_CERTIFICATE_INVALID);
    memcpy(buf, pki_leaf_der, n);
    buf[n] = 0;
    ck_assert_uint_eq(ua_cert_parse(buf, n + 1, &c),
                      UA_BAD_CERTIFICATE_INVALID);    /* trailing byte */
    for (cut = 0; cut < n; cut++) {
        uint8_t *p = malloc(cut + 1);

        ck_assert_ptr_nonnull(p);
        memcpy(p, pki_leaf_der, cut);
        ck_assert_uint_eq(ua_cert_parse(p, cut, &c),
                          UA_BAD_CERTIFICATE_INVALID);
        free(p);
    }
    /* flip every byte once: parse or refuse, nothing else */
    for (i = 0; i < n; i++) {
        memcpy(buf, pki_leaf_der, n);
        buf[i] ^= 0xff;
        (void)ua_cert_parse(buf, n, &c);
    }
    memset(buf, 0x30, sizeof(buf));
    ck_assert_uint_eq(ua_cert_parse(buf, sizeof(buf), &c),
                      UA_BAD_CERTIFICATE_INVALID);
    /* a length field of 0x84 ffffffff */
    memcpy(buf, "\x30\x84\xff\xff\xff\xff", 6);
    ck_assert_uint_eq(ua_cert_parse(buf, 100, &c),
                      UA_BAD_CERTIFICATE_INVALID);
}
END_TEST

START_TEST(test_time_codec)
{
    static const struct {
        int64_t     t;
        const char *s;
    } cases[] = {
        { 0, "\x17\x0d" "700101000000Z" },
        { T_2025, "\x17\x0d" "250101000000Z" },
        { 951782400 + 3723, "\x17\x0d" "000229010203Z" },   /* leap day */
        { -631152000, "\x17\x0d" "500101000000Z" },         /* 1950 */
        { 2524607999, "\x17\x0d" "491231235959Z" },
        { 2524608000, "\x18\x0f" "20500101000000Z" },
        { 253402300799, "\x18\x0f" "99991231235959Z" },
    };
    static const char *bad[] = {
        "\x17\x0d" "250230000000Z",     /* February 30 */
        "\x17\x0d" "230229000000Z",     /* no leap year */
        "\x17\x0d" "251301000000Z",
        "\x17\x0d" "250100000000Z",
        "\x17\x0d" "250101240000Z",
        "\x17\x0d" "250101006000Z",
        "\x17\x0d" "250101000060Z",
        "\x17\x0d" "2501010000000",     /* no Z */
        "\x17\x0d" "25010100000aZ",
        "\x17\x0b" "2501010000Z",       /* no seconds */
        "\x18\x0d" "250101000000Z",     /* GeneralizedTime too short */
        "\x04\x0d" "250101000000Z",
    };
    uint8_t out[17];
    int64_t t, back;
    size_t  i, n;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = ua_cert_time_encode(cases[i].t, out);
        ck_assert_uint_eq(n, 2 + (size_t)(uint8_t)cases[i].s[1]);
        ck_assert_mem_eq(out, cases[i].s, n);
        ck_assert_uint_eq(ua_cert_time_decode(out, n, &t), UA_GOOD);
        ck_assert_int_eq(t, cases[i].t);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_uint_eq(ua_cert_time_decode((const uint8_t *)bad[i],
                                              2 + (size_t)(uint8_t)bad[i][1],
                                              &t),
                          UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_cert_time_decode((const uint8_t *)"\x17\x0d", 2, &t),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_cert_time_encode(-631152001, out), 0);    /* 1949 */
    /* round trips over the whole range, a day and a bit apart */
    for (t = -631152000; t < 253402300799; t += 86400 * 97 + 3671) {
        n = ua_cert_time_encode(t, out);
        ck_assert_uint_gt(n, 0);
        ck_assert_uint_eq(ua_cert_time_decode(out, n, &back), UA_GOOD);
        ck_assert_int_eq(back, t);
    }
}
END_TEST

START_TEST(test_chain_split)
{
    uint8_t            buf[8192];
    struct ua_cert_der d[4];
    size_t             n, a = sizeof(pki_leaf_der), b = sizeof(pki_int_der),
                       c = sizeof(pki_root_der);

    memcpy(buf, pki_leaf_der, a);
    memcpy(buf + a, pki_int_der, b);
    memcpy(buf + a + b, pki_root_der, c);
    ck_assert_uint_eq(ua_cert_chain_split(buf, a + b + c, d, 4, &n), UA_GOOD);
    ck_assert_uint_eq(n, 3);
    ck_assert(d[0].der == buf && d[0].len == a);
    ck_assert(d[1].der == buf + a && d[1].len == b);
    ck_assert(d[2].der == buf + a + b && d[2].len == c);
    ck_assert_uint_eq(ua_cert_chain_split(buf, a, d, 4, &n), UA_GOOD);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(ua_cert_chain_split(buf, a + b + c, d, 2, &n),
                      UA_BAD_CERTIFICATE_INVALID);
    ck_assert_uint_eq(ua_cert_chain_split(buf, a + b + c - 1, d, 4, &n),
                      UA_BAD_CERTIFICATE_INVALID);
    ck_assert_uint_eq(ua_cert_chain_split(buf, 0, d, 4, &n),
                      UA_BAD_CERTIFICATE_INVALID);
    buf[a] = 0x31;
    ck_assert_uint_eq(ua_cert_chain_split(buf, a + b + c, d, 4, &n),
                      UA_BAD_CERTIFICATE_INVALID);
}
END_TEST

START_TEST(test_rejected_name)
{
    uint8_t        t[20];
    char           name[UA_CERT_REJECTED_NAME_LEN];
    struct ua_cert c;
    size_t         i;

    for (i = 0; i < 20; i++)
        t[i] = (uint8_t)(i * 0x0d + 0xa0);
    ua_cert_rejected_name(t, name);
    ck_assert_str_eq(name, "a0adbac7d4e1eefb0815222f3c495663707d8a97.der");
    ck_assert_uint_eq(strlen(name), UA_CERT_REJECTED_NAME_LEN - 1);
    /* the name is the thumbprint's, nothing of the certificate's own */
    ck_assert_uint_eq(ua_cert_parse(pki_other_der, sizeof(pki_other_der), &c),
                      UA_GOOD);
    ua_cert_rejected_name(c.thumbprint, name);
    ck_assert_uint_eq(strlen(name), 44);
    ck_assert(strspn(name, "0123456789abcdef") == 40);
    ck_assert_str_eq(name + 40, ".der");
}
END_TEST

START_TEST(test_san_build)
{
    static const char *dns[] = { "localhost", "host.example" };
    uint8_t            out[1024];
    char               uri[301];
    size_t             n;
    struct ua_cert     c;
    const uint8_t     *v;
    size_t             l;

    ck_assert_uint_eq(ua_cert_san_build("urn:x", dns, 2, out, sizeof(out),
                                        &n),
                      UA_GOOD);
    ck_assert_uint_eq(n, 2 + 7 + 11 + 14);
    ck_assert_mem_eq(out,
                     "\x30\x20\x86\x05urn:x\x82\x09localhost"
                     "\x82\x0chost.example",
                     n);
    /* a long URI takes the long length form; the walker reads it back */
    memset(uri, 'u', 300);
    memcpy(uri, "urn:", 4);
    uri[300] = '\0';
    ck_assert_uint_eq(ua_cert_san_build(uri, dns, 1, out, sizeof(out), &n),
                      UA_GOOD);
    ck_assert_uint_eq(n, 4 + 4 + 300 + 11);
    ck_assert_mem_eq(out, "\x30\x82\x01\x3b\x86\x82\x01\x2c", 8);
    memset(&c, 0, sizeof(c));
    c.san = out;
    c.san_len = n;
    ck_assert(ua_cert_san_get(&c, UA_SAN_URI, 0, &v, &l));
    ck_assert_uint_eq(l, 300);
    ck_assert_mem_eq(v, uri, 300);
    ck_assert(ua_cert_san_get(&c, UA_SAN_DNS, 0, &v, &l));
    ck_assert_mem_eq(v, "localhost", 9);
    /* refused: spaces, controls, empty, no room */
    ck_assert_uint_eq(ua_cert_san_build("urn:a b", NULL, 0, out, sizeof(out),
                                        &n),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_cert_san_build("", NULL, 0, out, sizeof(out), &n),
                      UA_BAD_INVALID_ARGUMENT);
    {
        static const char *badd[] = { "a\nb" };

        ck_assert_uint_eq(ua_cert_san_build("urn:x", badd, 1, out,
                                            sizeof(out), &n),
                          UA_BAD_INVALID_ARGUMENT);
    }
    ck_assert_uint_eq(ua_cert_san_build("urn:x", dns, 2, out, 20, &n),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
}
END_TEST

START_TEST(test_pem)
{
    char    pem[4096];
    uint8_t der[2048];
    size_t  n, m;

    ck_assert_uint_eq(ua_cert_to_pem(pki_app_der, sizeof(pki_app_der), pem,
                                     sizeof(pem), &n),
                      UA_GOOD);
    ck_assert_uint_eq(strlen(pem), n);
    ck_assert(strncmp(pem, "-----BEGIN CERTIFICATE-----", 27) == 0);
    ck_assert_uint_eq(ua_cert_from_pem(pem, n, der, sizeof(der), &m),
                      UA_GOOD);
    ck_assert_uint_eq(m, sizeof(pki_app_der));
    ck_assert_mem_eq(der, pki_app_der, m);
    ck_assert_uint_eq(ua_cert_to_pem(pki_app_der, sizeof(pki_app_der), pem,
                                     100, &n),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ck_assert_uint_eq(ua_cert_from_pem("nothing", 7, der, sizeof(der), &m),
                      UA_BAD_DECODING_ERROR);
}
END_TEST

/* ------------------------------------------------------------ validation */

/* The PKI of the chain tests: root trusted, int and the others as issuers,
 * every CRL. */
static const struct ua_cert_der trusted_root[] = { DER(pki_root_der) };
static const struct ua_cert_der issuers_all[] = {
    DER(pki_int_der), DER(pki_int2_der), DER(pki_intold_der),
    DER(pki_intku_der),
};
static const struct ua_cert_der crls_all[] = {
    DER(pki_root_crl), DER(pki_int_crl), DER(pki_int2_crl),
    DER(pki_intold_crl), DER(pki_intku_crl),
};
#define N_ISSUERS (sizeof(issuers_all) / sizeof(issuers_all[0]))
#define N_CRLS    (sizeof(crls_all) / sizeof(crls_all[0]))

static struct ua_cert_store
store_of(const struct ua_cert_der *t, size_t nt, const struct ua_cert_der *i,
         size_t ni, const struct ua_cert_der *crl, size_t nc)
{
    struct ua_cert_store s;

    memset(&s, 0, sizeof(s));
    s.trusted = t;
    s.n_trusted = nt;
    s.issuers = i;
    s.n_issuers = ni;
    s.issuer_crls = crl;
    s.n_issuer_crls = nc;
    return s;
}

static struct ua_cert_check
check_for(unsigned policy)
{
    struct ua_cert_check chk;

    ua_cert_check_init(&chk, ua_crypto_policy_get(policy), PKI_NOW);
    return chk;
}

/* Validate one certificate alone against a single trusted certificate. */
static ua_status
validate_self(const uint8_t *der, size_t len, const uint8_t *trusted,
              size_t tlen, unsigned policy)
{
    struct ua_cert_der   t = { trusted, tlen };
    struct ua_cert_store s = store_of(&t, 1, NULL, 0, NULL, 0);
    struct ua_cert_check chk = check_for(policy);

    return ua_cert_validate(der, len, &s, &chk, NULL);
}

#define SELF(x, policy) \
    validate_self(x, sizeof(x), x, sizeof(x), policy)

START_TEST(test_check_init)
{
    struct ua_cert_check chk;

    ua_cert_check_init(&chk, NULL, 42);
    ck_assert_int_eq(chk.now, 42);
    ck_assert_uint_eq(chk.min_key_bits, 2048);
    ck_assert_uint_eq(chk.max_key_bits, 4096);
    ck_assert_uint_eq(chk.min_hash, UA_HASH_SHA256);
    ck_assert_uint_eq(chk.role, UA_CERT_ROLE_CLIENT);
    ck_assert_uint_eq(chk.suppress, 0);
    ck_assert_ptr_null(chk.app_uri);
    ua_cert_check_init(&chk, ua_crypto_policy_get(UA_POLICY_BASIC256), 1);
    ck_assert_uint_eq(chk.min_key_bits, 1024);
    ck_assert_uint_eq(chk.max_key_bits, 2048);
    ck_assert_uint_eq(chk.min_hash, UA_HASH_SHA1);
}
END_TEST

START_TEST(test_self_signed)
{
    struct ua_cert_der     t = DER(pki_app_der);
    struct ua_cert_store   s = store_of(&t, 1, NULL, 0, NULL, 0);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;
    struct ua_cert         c;

    /* trusted, on every current policy */
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der), &s,
                                       &chk, &v),
                      UA_GOOD);
    ck_assert_uint_eq(v.status, UA_GOOD);
    ck_assert_uint_eq(v.chain_len, 1);
    ck_assert_uint_eq(ua_cert_parse(pki_app_der, sizeof(pki_app_der), &c),
                      UA_GOOD);
    ck_assert_mem_eq(v.thumbprint, c.thumbprint, 20);
    ck_assert_uint_eq(SELF(pki_app_der, UA_POLICY_AES128_SHA256_RSAOAEP),
                      UA_GOOD);
    ck_assert_uint_eq(SELF(pki_app_der, UA_POLICY_AES256_SHA256_RSAPSS),
                      UA_GOOD);
    ck_assert_uint_eq(SELF(pki_app_der, UA_POLICY_BASIC256), UA_GOOD);
    /* untrusted: an empty trust list, another certificate trusted */
    ck_assert_uint_eq(ua_cert_validate(pki_other_der, sizeof(pki_other_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
    ck_assert_uint_eq(v.depth, 0);
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der),
                                       NULL, &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
    /* the server's role needs serverAuth: app has it */
    chk.role = UA_CERT_ROLE_SERVER;
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der), &s,
                                       &chk, &v),
                      UA_GOOD);
}
END_TEST

START_TEST(test_bad_signature)
{
    uint8_t              buf[2048];
    size_t               n = sizeof(pki_app_der);
    struct ua_cert_der   t = { buf, n };
    struct ua_cert_store s = store_of(&t, 1, NULL, 0, NULL, 0);
    struct ua_cert_check chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;

    /* the last byte is inside the signature; trusted byte for byte */
    memcpy(buf, pki_app_der, n);
    buf[n - 1] ^= 0x01;
    ck_assert_uint_eq(ua_cert_validate(buf, n, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_INVALID);
    /* a CA-issued leaf whose signature is broken */
    memcpy(buf, pki_leaf_der, sizeof(pki_leaf_der));
    buf[sizeof(pki_leaf_der) - 10] ^= 0x80;
    s = store_of(trusted_root, 1, issuers_all, N_ISSUERS, crls_all, N_CRLS);
    ck_assert_uint_eq(ua_cert_validate(buf, sizeof(pki_leaf_der), &s, &chk,
                                       &v),
                      UA_BAD_CERTIFICATE_INVALID);
    ck_assert_uint_eq(v.depth, 0);
    /* structure: garbage, nothing, a bad second certificate */
    memset(buf, 0x55, 100);
    ck_assert_uint_eq(ua_cert_validate(buf, 100, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_INVALID);
    ck_assert_uint_eq(ua_cert_validate(buf, 0, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_INVALID);
    memcpy(buf, pki_leaf_der, sizeof(pki_leaf_der));
    memcpy(buf + sizeof(pki_leaf_der), "\x30\x03\x02\x01\x00", 5);
    ck_assert_uint_eq(ua_cert_validate(buf, sizeof(pki_leaf_der) + 5, &s,
                                       &chk, &v),
                      UA_BAD_CERTIFICATE_INVALID);
    ck_assert_uint_eq(v.depth, 1);
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der), &s,
                                       NULL, &v),
                      UA_BAD_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_time)
{
    struct ua_cert_der     t = DER(pki_expired_der);
    struct ua_cert_store   s = store_of(&t, 1, NULL, 0, NULL, 0);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;

    ck_assert_uint_eq(SELF(pki_expired_der, UA_POLICY_BASIC256SHA256),
                      UA_BAD_CERTIFICATE_TIME_INVALID);
    ck_assert_uint_eq(SELF(pki_notyet_der, UA_POLICY_BASIC256SHA256),
                      UA_BAD_CERTIFICATE_TIME_INVALID);
    /* suppressible (and then it is the caller's to audit) */
    chk.suppress = UA_CERT_SUPPRESS_TIME;
    ck_assert_uint_eq(ua_cert_validate(pki_expired_der,
                                       sizeof(pki_expired_der), &s, &chk,
                                       &v),
                      UA_GOOD);
    /* inside the window it is fine: the clock is ours, not the system's */
    chk.suppress = 0;
    chk.now = 1590000000;                           /* 2020-05-20 */
    ck_assert_uint_eq(ua_cert_validate(pki_expired_der,
                                       sizeof(pki_expired_der), &s, &chk,
                                       &v),
                      UA_GOOD);
    chk.now = 1609459200;                           /* the last second */
    ck_assert_uint_eq(ua_cert_validate(pki_expired_der,
                                       sizeof(pki_expired_der), &s, &chk,
                                       &v),
                      UA_GOOD);
    chk.now = 1609459201;
    ck_assert_uint_eq(ua_cert_validate(pki_expired_der,
                                       sizeof(pki_expired_der), &s, &chk,
                                       &v),
                      UA_BAD_CERTIFICATE_TIME_INVALID);
    /* untrusted and expired: trust is checked first (step 5 before 6) */
    chk.now = PKI_NOW;
    s.n_trusted = 0;
    ck_assert_uint_eq(ua_cert_validate(pki_expired_der,
                                       sizeof(pki_expired_der), &s, &chk,
                                       &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
}
END_TEST

START_TEST(test_policy_check)
{
    /* 1024 bits: too short for Basic256Sha256, fine for Basic256 */
    ck_assert_uint_eq(SELF(pki_rsa1024_der, UA_POLICY_BASIC256SHA256),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
    ck_assert_uint_eq(SELF(pki_rsa1024_der, UA_POLICY_AES256_SHA256_RSAPSS),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
    ck_assert_uint_eq(SELF(pki_rsa1024_der, UA_POLICY_BASIC256), UA_GOOD);
    /* 3072 bits: too long for the deprecated ones */
    ck_assert_uint_eq(SELF(pki_rsa3072_der, UA_POLICY_BASIC256),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
    ck_assert_uint_eq(SELF(pki_rsa3072_der, UA_POLICY_BASIC128RSA15),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
    ck_assert_uint_eq(SELF(pki_rsa3072_der, UA_POLICY_BASIC256SHA256),
                      UA_GOOD);
    /* SHA-1 signature: refused on the current policies */
    ck_assert_uint_eq(SELF(pki_sha1_der, UA_POLICY_BASIC256SHA256),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
    ck_assert_uint_eq(SELF(pki_sha1_der, UA_POLICY_AES128_SHA256_RSAOAEP),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
    ck_assert_uint_eq(SELF(pki_sha1_der, UA_POLICY_BASIC256), UA_GOOD);
    ck_assert_uint_eq(SELF(pki_sha1_der, UA_POLICY_BASIC128RSA15), UA_GOOD);
    /* the policy check comes before trust: a short untrusted key says so */
    ck_assert_uint_eq(validate_self(pki_rsa1024_der, sizeof(pki_rsa1024_der),
                                    pki_app_der, sizeof(pki_app_der),
                                    UA_POLICY_BASIC256SHA256),
                      UA_BAD_CERTIFICATE_POLICY_CHECK_FAILED);
}
END_TEST

START_TEST(test_uri_and_usage)
{
    struct ua_cert_der     t[] = { DER(pki_app_der), DER(pki_nouri_der),
                                   DER(pki_noku_der), DER(pki_servonly_der),
                                   DER(pki_root_der) };
    struct ua_cert_store   s = store_of(t, 5, issuers_all, N_ISSUERS, crls_all, N_CRLS);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;
    static const char      good[] = "urn:uabroker:test:app";
    static const char      wrong[] = "urn:uabroker:test:other";

    chk.app_uri = (const uint8_t *)good;
    chk.app_uri_len = strlen(good);
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der), &s,
                                       &chk, &v),
                      UA_GOOD);
    chk.app_uri_len--;
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der), &s,
                                       &chk, &v),
                      UA_BAD_CERTIFICATE_URI_INVALID);
    chk.app_uri = (const uint8_t *)wrong;
    chk.app_uri_len = strlen(wrong);
    ck_assert_uint_eq(ua_cert_validate(pki_app_der, sizeof(pki_app_der), &s,
                                       &chk, &v),
                      UA_BAD_CERTIFICATE_URI_INVALID);
    ck_assert_uint_eq(ua_cert_validate(pki_nouri_der, sizeof(pki_nouri_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_URI_INVALID);
    chk.app_uri = NULL;
    ck_assert_uint_eq(ua_cert_validate(pki_nouri_der, sizeof(pki_nouri_der),
                                       &s, &chk, &v),
                      UA_GOOD);

    /* keyUsage without keyEncipherment/dataEncipherment */
    ck_assert_uint_eq(ua_cert_validate(pki_noku_der, sizeof(pki_noku_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_USE_NOT_ALLOWED);
    /* serverAuth only: a server certificate, not a client one */
    ck_assert_uint_eq(ua_cert_validate(pki_servonly_der,
                                       sizeof(pki_servonly_der), &s, &chk,
                                       &v),
                      UA_BAD_CERTIFICATE_USE_NOT_ALLOWED);
    chk.role = UA_CERT_ROLE_SERVER;
    ck_assert_uint_eq(ua_cert_validate(pki_servonly_der,
                                       sizeof(pki_servonly_der), &s, &chk,
                                       &v),
                      UA_GOOD);
    chk.role = UA_CERT_ROLE_USER;
    ck_assert_uint_eq(ua_cert_validate(pki_noku_der, sizeof(pki_noku_der),
                                       &s, &chk, &v),
                      UA_GOOD);
    chk.role = UA_CERT_ROLE_CLIENT;
    /* a CA as the application certificate: the root itself, and int
     * (which chains to the trusted root) */
    ck_assert_uint_eq(ua_cert_validate(pki_root_der, sizeof(pki_root_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_USE_NOT_ALLOWED);
    ck_assert_uint_eq(ua_cert_validate(pki_int_der, sizeof(pki_int_der), &s,
                                       &chk, &v),
                      UA_BAD_CERTIFICATE_USE_NOT_ALLOWED);
    ck_assert_uint_eq(v.chain_len, 2);
    /* an issuer whose keyUsage lacks cRLSign */
    ck_assert_uint_eq(ua_cert_validate(pki_leafku_der, sizeof(pki_leafku_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_ISSUER_USE_NOT_ALLOWED);
    ck_assert_uint_eq(v.depth, 1);
}
END_TEST

START_TEST(test_chain)
{
    struct ua_cert_store   s = store_of(trusted_root, 1, issuers_all, N_ISSUERS,
                                        crls_all, N_CRLS);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;
    struct ua_cert_der     t_int = DER(pki_int_der);
    struct ua_cert_der     i_root = DER(pki_root_der);
    uint8_t                buf[4096];
    size_t                 a = sizeof(pki_leaf_der), b = sizeof(pki_int_der);
    static const char      uri[] = "urn:uabroker:test:leaf";

    /* root (trusted) -> int (issuer list) -> leaf */
    chk.app_uri = (const uint8_t *)uri;
    chk.app_uri_len = strlen(uri);
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, a, &s, &chk, &v),
                      UA_GOOD);
    ck_assert_uint_eq(v.chain_len, 3);
    /* int sent by the peer instead: verified by the root, then used */
    memcpy(buf, pki_leaf_der, a);
    memcpy(buf + a, pki_int_der, b);
    s.n_issuers = 0;
    ck_assert_uint_eq(ua_cert_validate(buf, a + b, &s, &chk, &v), UA_GOOD);
    ck_assert_uint_eq(v.chain_len, 3);
    /* ... and it is gone afterwards: every validation starts afresh */
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, a, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    ck_assert_uint_eq(v.depth, 0);      /* the leaf's issuer is missing */
    /* the intermediate trusted, the root only an issuer */
    s = store_of(&t_int, 1, &i_root, 1, crls_all, N_CRLS);
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, a, &s, &chk, &v),
                      UA_GOOD);
    /* the root missing altogether: incomplete even with int trusted */
    s = store_of(&t_int, 1, NULL, 0, crls_all, N_CRLS);
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, a, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    /* CRLs may come from the trusted store as well */
    s = store_of(trusted_root, 1, issuers_all, N_ISSUERS, NULL, 0);
    s.trusted_crls = crls_all;
    s.n_trusted_crls = N_CRLS;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, a, &s, &chk, &v),
                      UA_GOOD);
}
END_TEST

START_TEST(test_revocation)
{
    struct ua_cert_der     root_crl_only[] = { DER(pki_root_crl) };
    struct ua_cert_der     int_crl_only[] = { DER(pki_int_crl) };
    struct ua_cert_store   s = store_of(trusted_root, 1, issuers_all, N_ISSUERS,
                                        crls_all, N_CRLS);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;

    ck_assert_uint_eq(ua_cert_validate(pki_revoked_der,
                                       sizeof(pki_revoked_der), &s, &chk,
                                       &v),
                      UA_BAD_CERTIFICATE_REVOKED);
    ck_assert_uint_eq(v.depth, 0);
    /* int2 is revoked by the root: its leaf fails on the issuer */
    ck_assert_uint_eq(ua_cert_validate(pki_leaf2_der, sizeof(pki_leaf2_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_ISSUER_REVOKED);
    ck_assert_uint_eq(v.depth, 1);
    /* intold expired in 2021 */
    ck_assert_uint_eq(ua_cert_validate(pki_leafold_der,
                                       sizeof(pki_leafold_der), &s, &chk, &v),
                      UA_BAD_CERTIFICATE_ISSUER_TIME_INVALID);
    ck_assert_uint_eq(v.depth, 1);
    chk.suppress = UA_CERT_SUPPRESS_ISSUER_TIME;
    ck_assert_uint_eq(ua_cert_validate(pki_leafold_der,
                                       sizeof(pki_leafold_der), &s, &chk, &v),
                      UA_GOOD);
    chk.suppress = 0;

    /* int's CRL missing: the leaf's revocation status is unknown */
    s.issuer_crls = root_crl_only;
    s.n_issuer_crls = 1;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN);
    chk.suppress = UA_CERT_SUPPRESS_REVOCATION_UNKNOWN;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_GOOD);
    /* the root's CRL missing: int's status is unknown */
    chk.suppress = 0;
    s.issuer_crls = int_crl_only;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_ISSUER_REVOCATION_UNKNOWN);
    ck_assert_uint_eq(v.depth, 1);
    chk.suppress = UA_CERT_SUPPRESS_ISSUER_REVOCATION_UNKNOWN;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_GOOD);
    /* no CRL at all */
    chk.suppress = 0;
    s.n_issuer_crls = 0;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN);
    /* a CRL past its nextUpdate (2045) does not count */
    s.issuer_crls = crls_all;
    s.n_issuer_crls = N_CRLS;
    chk.now = T_2045 - 10;
    chk.suppress = UA_CERT_SUPPRESS_TIME | UA_CERT_SUPPRESS_ISSUER_TIME;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_GOOD);
    chk.now = T_2045 + 10;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_REVOCATION_UNKNOWN);
    /* a self-signed certificate needs no CRL */
    chk.now = PKI_NOW;
    chk.suppress = 0;
    ck_assert_uint_eq(SELF(pki_app_der, UA_POLICY_BASIC256SHA256), UA_GOOD);
}
END_TEST

/* The leaf alone in the trust list (docs/dependencies.md gotcha 9: wolfSSL
 * cannot anchor a CA-issued leaf): trusted by its bytes, chain and CRLs
 * still checked. */
START_TEST(test_leaf_trusted_directly)
{
    struct ua_cert_der     t[] = { DER(pki_leaf_der), DER(pki_revoked_der) };
    struct ua_cert_der     iss[] = { DER(pki_int_der), DER(pki_root_der) };
    struct ua_cert_store   s = store_of(t, 2, iss, 2, crls_all, N_CRLS);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;

    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_GOOD);
    ck_assert_uint_eq(v.chain_len, 3);
    /* trusted directly does not beat a revocation */
    ck_assert_uint_eq(ua_cert_validate(pki_revoked_der,
                                       sizeof(pki_revoked_der), &s, &chk, &v),
                      UA_BAD_CERTIFICATE_REVOKED);
    /* nor a missing issuer */
    s.n_issuers = 1;
    ck_assert_uint_eq(ua_cert_validate(pki_leaf_der, sizeof(pki_leaf_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    /* another leaf of the same CA is not trusted by it */
    s.n_issuers = 2;
    s.n_trusted = 1;
    ck_assert_uint_eq(ua_cert_validate(pki_revoked_der,
                                       sizeof(pki_revoked_der), &s, &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
}
END_TEST

/*
 * Certificates the peer sends are never trust anchors (docs/dependencies.md
 * gotcha 7): loaded as CAs they would make the leaf verify.
 */
START_TEST(test_peer_chain_not_anchor)
{
    struct ua_cert_der     t_app = DER(pki_app_der);
    struct ua_cert_store   s = store_of(NULL, 0, NULL, 0, crls_all, N_CRLS);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;
    uint8_t                buf[8192];
    size_t                 a = sizeof(pki_leaf_der), b = sizeof(pki_int_der),
                           c = sizeof(pki_root_der), n;

    /* leaf + int, nothing trusted */
    memcpy(buf, pki_leaf_der, a);
    memcpy(buf + a, pki_int_der, b);
    ck_assert_uint_eq(ua_cert_validate(buf, a + b, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    /* leaf + int + root, nothing (or something unrelated) trusted */
    memcpy(buf + a + b, pki_root_der, c);
    ck_assert_uint_eq(ua_cert_validate(buf, a + b + c, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
    s = store_of(&t_app, 1, NULL, 0, crls_all, N_CRLS);
    ck_assert_uint_eq(ua_cert_validate(buf, a + b + c, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
    /* int in the issuer list, root sent by the peer: still untrusted */
    s = store_of(NULL, 0, issuers_all, N_ISSUERS, crls_all, N_CRLS);
    ck_assert_uint_eq(ua_cert_validate(buf, a + b + c, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);

    /* a rogue CA with the root's name and its leaf with leaf's name */
    n = sizeof(pki_rogueleaf_der);
    memcpy(buf, pki_rogueleaf_der, n);
    memcpy(buf + n, pki_rogue_der, sizeof(pki_rogue_der));
    s = store_of(trusted_root, 1, issuers_all, N_ISSUERS, crls_all, N_CRLS);
    ck_assert_uint_eq(ua_cert_validate(buf, n + sizeof(pki_rogue_der), &s,
                                       &chk, &v),
                      UA_BAD_CERTIFICATE_UNTRUSTED);
    ck_assert_uint_eq(ua_cert_validate(pki_rogueleaf_der, n, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    /* the rogue leaf with the real chain: its signature is not int's nor
     * the root's (names match, keys do not) */
    memcpy(buf + n, pki_int_der, b);
    ck_assert(ua_cert_validate(buf, n + b, &s, &chk, &v) != UA_GOOD);
}
END_TEST

START_TEST(test_chain_length)
{
    struct ua_cert_der     t = DER(pki_c0_der);
    struct ua_cert_der     iss[] = {
        DER(pki_c1_der), DER(pki_c2_der), DER(pki_c3_der), DER(pki_c4_der),
        DER(pki_c5_der), DER(pki_c6_der), DER(pki_c7_der), DER(pki_c8_der),
        DER(pki_c9_der),
    };
    struct ua_cert_der     crl[] = {
        DER(pki_c0_crl), DER(pki_c1_crl), DER(pki_c2_crl), DER(pki_c3_crl),
        DER(pki_c4_crl), DER(pki_c5_crl), DER(pki_c6_crl), DER(pki_c7_crl),
        DER(pki_c8_crl),
    };
    struct ua_cert_store   s = store_of(&t, 1, iss, 9, crl, 9);
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;
    uint8_t                buf[16384];
    size_t                 n, i;

    /* leaf10 -> c8 .. c1 -> c0: 10 certificates, the most we take */
    ck_assert_uint_eq(ua_cert_validate(pki_leaf10_der, sizeof(pki_leaf10_der),
                                       &s, &chk, &v),
                      UA_GOOD);
    ck_assert_uint_eq(v.chain_len, UA_CERT_CHAIN_MAX);
    /* leaf11 -> c9 .. c0: 11 */
    ck_assert_uint_eq(ua_cert_validate(pki_leaf11_der, sizeof(pki_leaf11_der),
                                       &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    ck_assert_uint_eq(v.depth, UA_CERT_CHAIN_MAX - 1);
    /* the same chain of 11 sent whole by the peer */
    n = sizeof(pki_leaf11_der);
    memcpy(buf, pki_leaf11_der, n);
    for (i = 9; i-- > 0;) {
        memcpy(buf + n, iss[i].der, iss[i].len);
        n += iss[i].len;
    }
    memcpy(buf + n, pki_c0_der, sizeof(pki_c0_der));
    n += sizeof(pki_c0_der);
    s.n_issuers = 0;
    ck_assert_uint_eq(ua_cert_validate(buf, n, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
}
END_TEST

/* A and B issued by each other (docs/security.md case 38, CVE-2022-37013):
 * the search ends at the loop at once. */
START_TEST(test_chain_loop)
{
    struct ua_cert_der     both[] = { DER(pki_loopa_der), DER(pki_loopb_der) };
    struct ua_cert_store   s;
    struct ua_cert_check   chk = check_for(UA_POLICY_BASIC256SHA256);
    struct ua_cert_verdict v;
    uint8_t                buf[8192];
    size_t                 n = 0;
    double                 t0, ms;
    int                    i;

    memcpy(buf, pki_loopleaf_der, sizeof(pki_loopleaf_der));
    n = sizeof(pki_loopleaf_der);
    memcpy(buf + n, pki_loopa_der, sizeof(pki_loopa_der));
    n += sizeof(pki_loopa_der);
    memcpy(buf + n, pki_loopb_der, sizeof(pki_loopb_der));
    n += sizeof(pki_loopb_der);
    t0 = now_ms();
    /* sent by the peer, in the issuer list, in the trust list */
    s = store_of(NULL, 0, NULL, 0, NULL, 0);
    ck_assert_uint_eq(ua_cert_validate(buf, n, &s, &chk, &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    ck_assert_uint_eq(v.chain_len, 3);
    s = store_of(NULL, 0, both, 2, NULL, 0);
    ck_assert_uint_eq(ua_cert_validate(pki_loopleaf_der,
                                       sizeof(pki_loopleaf_der), &s, &chk,
                                       &v),
                      UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    s = store_of(both, 2, both, 2, NULL, 0);
    for (i = 0; i < 10; i++)
        ck_assert_uint_eq(ua_cert_validate(buf, n, &s, &chk, &v),
                          UA_BAD_CERTIFICATE_CHAIN_INCOMPLETE);
    ms = now_ms() - t0;
    ck_assert_msg(ms < 100 * 12, "12 loop validations took %.1f ms", ms);
    fprintf(stderr, "check_cert: chain loop fails in %.2f ms\n", ms / 12);
}
END_TEST

/* ------------------------------------------------------------ creation */

START_TEST(test_create)
{
    static const char   *dns[] = { "localhost", "plc-7.example" };
    struct ua_crypto_key k = { 0 };
    struct ua_cert_params p;
    uint8_t              der[4096];
    size_t               n;
    struct ua_cert       c;
    const uint8_t       *v;
    size_t               l;
    struct ua_cert_der   t;
    struct ua_cert_store s;
    struct ua_cert_check chk;
    static const char    uri[] = "urn:uabroker:test:created";
    char                 name[UA_CERT_REJECTED_NAME_LEN];
    double               t0;

    ck_assert_uint_eq(ua_crypto_key_load(&k, pki_app_key_der,
                                         sizeof(pki_app_key_der)),
                      UA_GOOD);
    memset(&p, 0, sizeof(p));
    p.app_uri = uri;
    p.common_name = "uabroker@plc-7";
    p.organization = "uabroker test";
    p.domain_component = "plc-7";
    p.dns = dns;
    p.n_dns = 2;
    p.not_before = PKI_NOW - 3600;
    p.days = 365 * 5;
    t0 = now_ms();
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n), UA_GOOD);
    fprintf(stderr, "check_cert: certificate created in %.2f ms\n",
            now_ms() - t0);

    ck_assert_uint_eq(ua_cert_parse(der, n, &c), UA_GOOD);
    ck_assert(strstr(c.subject_str, "CN=uabroker@plc-7") != NULL);
    ck_assert(strstr(c.subject_str, "O=uabroker test") != NULL);
    ck_assert(strstr(c.subject_str, "DC=plc-7") != NULL);
    ck_assert(ua_cert_has_uri(&c, (const uint8_t *)uri, strlen(uri)));
    ck_assert(ua_cert_san_get(&c, UA_SAN_DNS, 0, &v, &l));
    ck_assert_mem_eq(v, "localhost", l);
    ck_assert(ua_cert_san_get(&c, UA_SAN_DNS, 1, &v, &l));
    ck_assert_uint_eq(l, strlen("plc-7.example"));
    ck_assert_mem_eq(v, "plc-7.example", l);
    ck_assert_uint_eq(c.key_usage,
                      UA_KU_DIGITAL_SIGNATURE | UA_KU_NON_REPUDIATION
                          | UA_KU_KEY_ENCIPHERMENT | UA_KU_DATA_ENCIPHERMENT
                          | UA_KU_KEY_CERT_SIGN);
    ck_assert_uint_eq(c.eku, UA_EKU_SERVER_AUTH | UA_EKU_CLIENT_AUTH);
    ck_assert(!c.is_ca && c.self_signed);
    ck_assert_uint_eq(c.key_bits, 2048);
    ck_assert_uint_eq(c.sig_hash, UA_HASH_SHA256);
    ck_assert_int_eq(c.not_before, PKI_NOW - 3600);
    ck_assert_int_eq(c.not_after, PKI_NOW - 3600 + 365 * 5 * 86400LL);
    ck_assert_ptr_nonnull(c.ski);

    /* it validates as a trusted client and server certificate */
    t.der = der;
    t.len = n;
    s = store_of(&t, 1, NULL, 0, NULL, 0);
    ua_cert_check_init(&chk, ua_crypto_policy_get(UA_POLICY_BASIC256SHA256),
                       PKI_NOW);
    chk.app_uri = (const uint8_t *)uri;
    chk.app_uri_len = strlen(uri);
    ck_assert_uint_eq(ua_cert_validate(der, n, &s, &chk, NULL), UA_GOOD);
    chk.role = UA_CERT_ROLE_SERVER;
    ck_assert_uint_eq(ua_cert_validate(der, n, &s, &chk, NULL), UA_GOOD);
    /* and its public key verifies what the private key signs */
    {
        struct ua_crypto_key pub = { 0 };
        uint8_t              sig[256];
        size_t               sl;

        ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, der, n), UA_GOOD);
        ck_assert_uint_eq(ua_crypto_rsa_sign(&k, UA_RSA_SIG_PKCS1_SHA256,
                                             der, 100, sig, sizeof(sig),
                                             &sl),
                          UA_GOOD);
        ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                               der, 100, sig, sl),
                          UA_GOOD);
        ua_crypto_key_clear(&pub);
    }

    /* a hostile CN changes nothing about where it would be stored */
    p.common_name = "../../trusted/certs/x";
    p.n_dns = 0;
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n), UA_GOOD);
    ck_assert_uint_eq(ua_cert_parse(der, n, &c), UA_GOOD);
    ck_assert(strstr(c.subject_str, "../../trusted/certs/x") != NULL);
    ua_cert_rejected_name(c.thumbprint, name);
    ck_assert_ptr_null(strchr(name, '/'));
    ck_assert_uint_eq(strspn(name, "0123456789abcdef"), 40);

    /* refusals */
    p.common_name = "0123456789012345678901234567890123456789012345678901234"
                    "567890123";                    /* 65 bytes */
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n),
                      UA_BAD_INVALID_ARGUMENT);
    p.common_name = "x";
    p.app_uri = "urn:has space";
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n),
                      UA_BAD_INVALID_ARGUMENT);
    p.app_uri = uri;
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, 300, &n),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    p.days = 0;
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n),
                      UA_BAD_INVALID_ARGUMENT);
    p.days = 1;
    ua_crypto_key_clear(&k);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&k, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n),
                      UA_BAD_INVALID_ARGUMENT);        /* public key only */
    ua_crypto_key_clear(&k);
}
END_TEST

/* A fresh key and certificate, as a first start does. */
START_TEST(test_create_fresh_key)
{
    struct ua_crypto_key  k = { 0 };
    struct ua_cert_params p;
    uint8_t               der[4096];
    size_t                n;
    struct ua_cert_der    t;
    struct ua_cert_store  s;
    struct ua_cert_check  chk;

    ck_assert_uint_eq(ua_crypto_key_generate(&k, 2048), UA_GOOD);
    memset(&p, 0, sizeof(p));
    p.app_uri = "urn:uabroker:fresh";
    p.common_name = "fresh";
    p.not_before = T_2025;
    p.days = 3650;
    ck_assert_uint_eq(ua_cert_create(&p, &k, der, sizeof(der), &n), UA_GOOD);
    t.der = der;
    t.len = n;
    s = store_of(&t, 1, NULL, 0, NULL, 0);
    ua_cert_check_init(&chk, NULL, T_2025 + 86400);
    ck_assert_uint_eq(ua_cert_validate(der, n, &s, &chk, NULL), UA_GOOD);
    chk.now = T_2025 + 3651LL * 86400;
    ck_assert_uint_eq(ua_cert_validate(der, n, &s, &chk, NULL),
                      UA_BAD_CERTIFICATE_TIME_INVALID);
    ua_crypto_key_clear(&k);
}
END_TEST

static Suite *
cert_suite(void)
{
    Suite *s = suite_create("cert");
    TCase *tc;

    tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_parse_app);
    tcase_add_test(tc, test_parse_others);
    tcase_add_test(tc, test_parse_malformed);
    tcase_add_test(tc, test_time_codec);
    tcase_add_test(tc, test_chain_split);
    tcase_add_test(tc, test_rejected_name);
    tcase_add_test(tc, test_san_build);
    tcase_add_test(tc, test_pem);
    suite_add_tcase(s, tc);

    /* A validation costs an RSA public operation per link and a wolfSSL
     * CertManager or two: milliseconds, many of them per test. */
    tc = tcase_create("validate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_check_init);
    tcase_add_test(tc, test_self_signed);
    tcase_add_test(tc, test_bad_signature);
    tcase_add_test(tc, test_time);
    tcase_add_test(tc, test_policy_check);
    tcase_add_test(tc, test_uri_and_usage);
    tcase_add_test(tc, test_chain);
    tcase_add_test(tc, test_revocation);
    tcase_add_test(tc, test_leaf_trusted_directly);
    tcase_add_test(tc, test_peer_chain_not_anchor);
    tcase_add_test(tc, test_chain_length);
    tcase_add_test(tc, test_chain_loop);
    suite_add_tcase(s, tc);

    /* RSA signing and, once, key generation. */
    tc = tcase_create("create");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_create);
    tcase_add_test(tc, test_create_fresh_key);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(cert_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
