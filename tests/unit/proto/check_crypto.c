/*
 * tests/unit/proto/check_crypto.c: proto/crypto.h - the policy table, the
 * pure helpers (constant-time compare, padding, sizes) and known-answer
 * tests of every primitive on wolfSSL:
 *
 *   SHA-1/SHA-256    FIPS 180 "abc"
 *   HMAC-SHA256      RFC 4231 test cases 1, 2, 6
 *   HMAC-SHA1        RFC 2202 test cases 1, 2, 6
 *   P_SHA256         the TLS 1.2 PRF SHA-256 vector (IETF TLS list, 2009)
 *   P_SHA1/P_SHA256  OPC UA key derivation from two nonces, made by openssl
 *                    (pki_gen.h: p_sha1.bin, p_sha256.bin)
 *   AES-128/256-CBC  NIST SP 800-38A F.2.1 and F.2.5
 *   RSA              PKCS#1 v1.5 signatures equal openssl's byte for byte;
 *                    openssl's PSS signature and OAEP (SHA-1, SHA-256),
 *                    PKCS#1 v1.5 ciphertexts verify/decrypt; round trips
 *
 * Keys and vectors come from tests/unit/proto/pki/make_pki.sh.  The RSA
 * tcase prints the time of the RSA operations it does (stderr).
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "tests/unit/proto/pki/pki_gen.h"

/* Parse hex (spaces ignored) into out; returns the byte count. */
static size_t
unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int    hi = -1, v;

    for (; *s != '\0'; s++) {
        if (*s >= '0' && *s <= '9')
            v = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            v = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            v = *s - 'A' + 10;
        else
            continue;
        if (hi < 0) {
            hi = v;
            continue;
        }
        ck_assert_uint_lt(n, cap);
        out[n++] = (uint8_t)(hi << 4 | v);
        hi = -1;
    }
    ck_assert_int_lt(hi, 0);
    return n;
}

static double
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

/* ------------------------------------------------------------ policies */

START_TEST(test_policy_table)
{
    static const struct {
        unsigned    id;
        const char *name;
        bool        enabled, deprecated;
        uint8_t     nonce, sig_key, enc_key, sig_len, hash, cert_hash;
        uint16_t    min_bits, max_bits;
        uint8_t     asig, aenc;
    } want[] = {
        { UA_POLICY_BASIC128RSA15, "Basic128Rsa15", false, true, 16, 16, 16,
          20, UA_HASH_SHA1, UA_HASH_SHA1, 1024, 2048, UA_RSA_SIG_PKCS1_SHA1,
          UA_RSA_ENC_PKCS1 },
        { UA_POLICY_BASIC256, "Basic256", false, true, 32, 24, 32, 20,
          UA_HASH_SHA1, UA_HASH_SHA1, 1024, 2048, UA_RSA_SIG_PKCS1_SHA1,
          UA_RSA_ENC_OAEP_SHA1 },
        { UA_POLICY_BASIC256SHA256, "Basic256Sha256", true, false, 32, 32,
          32, 32, UA_HASH_SHA256, UA_HASH_SHA256, 2048, 4096,
          UA_RSA_SIG_PKCS1_SHA256, UA_RSA_ENC_OAEP_SHA1 },
        { UA_POLICY_AES128_SHA256_RSAOAEP, "Aes128_Sha256_RsaOaep", true,
          false, 32, 32, 16, 32, UA_HASH_SHA256, UA_HASH_SHA256, 2048, 4096,
          UA_RSA_SIG_PKCS1_SHA256, UA_RSA_ENC_OAEP_SHA1 },
        { UA_POLICY_AES256_SHA256_RSAPSS, "Aes256_Sha256_RsaPss", true,
          false, 32, 32, 32, 32, UA_HASH_SHA256, UA_HASH_SHA256, 2048, 4096,
          UA_RSA_SIG_PSS_SHA256, UA_RSA_ENC_OAEP_SHA256 },
    };
    char                    uri[128];
    const struct ua_policy *p;
    size_t                  i;

    for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        snprintf(uri, sizeof(uri), UA_POLICY_URI_BASE "%s", want[i].name);
        p = ua_crypto_policy_find((const uint8_t *)uri, strlen(uri));
        ck_assert_ptr_nonnull(p);
        ck_assert_ptr_eq(p, ua_crypto_policy_get(want[i].id));
        ck_assert_str_eq(p->uri, uri);
        ck_assert_str_eq(p->name, want[i].name);
        ck_assert_uint_eq(p->id, want[i].id);
        ck_assert(p->enabled_by_default == want[i].enabled);
        ck_assert(p->deprecated == want[i].deprecated);
        ck_assert_uint_eq(p->nonce_len, want[i].nonce);
        ck_assert_uint_eq(p->sym_sig_key_len, want[i].sig_key);
        ck_assert_uint_eq(p->sym_enc_key_len, want[i].enc_key);
        ck_assert_uint_eq(p->sym_block_len, 16);
        ck_assert_uint_eq(p->sym_sig_len, want[i].sig_len);
        ck_assert_uint_eq(p->sym_hash, want[i].hash);
        ck_assert_uint_eq(p->cert_min_hash, want[i].cert_hash);
        ck_assert_uint_eq(p->min_key_bits, want[i].min_bits);
        ck_assert_uint_eq(p->max_key_bits, want[i].max_bits);
        ck_assert_uint_eq(p->asym_sig, want[i].asig);
        ck_assert_uint_eq(p->asym_enc, want[i].aenc);
        ck_assert_ptr_nonnull(p->asym_sig_uri);
        ck_assert_ptr_nonnull(p->asym_enc_uri);
        ck_assert(p->asym_sign && p->asym_verify && p->asym_encrypt
                  && p->asym_decrypt && p->sym_sign && p->sym_verify
                  && p->sym_encrypt && p->sym_decrypt && p->derive);
        ck_assert(!ua_crypto_policy_is_none(p));
        ck_assert(ua_crypto_policy_key_ok(p, want[i].min_bits));
        ck_assert(ua_crypto_policy_key_ok(p, want[i].max_bits));
        ck_assert(!ua_crypto_policy_key_ok(p, want[i].min_bits - 8));
        ck_assert(!ua_crypto_policy_key_ok(p, want[i].max_bits + 8));
        /* The current policies use SHA-256 everywhere but OAEP's hash. */
        if (!p->deprecated)
            ck_assert(p->sym_sig_len == 32 && p->min_key_bits == 2048);
    }
    ck_assert_str_eq(ua_crypto_policy_get(UA_POLICY_AES256_SHA256_RSAPSS)
                         ->asym_sig_uri,
                     "http://opcfoundation.org/UA/security/rsa-pss-sha2-256");
    ck_assert_str_eq(ua_crypto_policy_get(UA_POLICY_AES256_SHA256_RSAPSS)
                         ->asym_enc_uri,
                     "http://opcfoundation.org/UA/security/rsa-oaep-sha2-256");
    ck_assert_str_eq(ua_crypto_policy_get(UA_POLICY_BASIC256SHA256)
                         ->asym_sig_uri,
                     "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
    ck_assert_str_eq(ua_crypto_policy_get(UA_POLICY_BASIC128RSA15)
                         ->asym_enc_uri,
                     "http://www.w3.org/2001/04/xmlenc#rsa-1_5");

    /* None: found, no operations, no lengths */
    p = ua_crypto_policy_find(
        (const uint8_t *)"http://opcfoundation.org/UA/SecurityPolicy#None",
        47);
    ck_assert_ptr_nonnull(p);
    ck_assert(ua_crypto_policy_is_none(p));
    ck_assert_uint_eq(p->id, UA_POLICY_NONE);
    ck_assert_uint_eq(p->nonce_len, 0);
    ck_assert_ptr_null(p->asym_sign);
    ck_assert_ptr_null(p->sym_encrypt);
    ck_assert(!ua_crypto_policy_key_ok(p, 2048));

    /* exact match only */
    strcpy(uri, UA_POLICY_URI_BASE "Basic256Sha256");
    ck_assert_ptr_null(ua_crypto_policy_find((const uint8_t *)uri,
                                             strlen(uri) - 1));
    strcat(uri, "x");
    ck_assert_ptr_null(ua_crypto_policy_find((const uint8_t *)uri,
                                             strlen(uri)));
    strcpy(uri, UA_POLICY_URI_BASE "basic256sha256");
    ck_assert_ptr_null(ua_crypto_policy_find((const uint8_t *)uri,
                                             strlen(uri)));
    ck_assert_ptr_null(ua_crypto_policy_find(NULL, 0));
    ck_assert_ptr_null(ua_crypto_policy_find((const uint8_t *)"", 0));
    ck_assert_ptr_null(ua_crypto_policy_get(UA_POLICY_COUNT));
    ck_assert(ua_crypto_policy_is_none(NULL));
}
END_TEST

/* ------------------------------------------------------------ pure */

START_TEST(test_memeq_wipe)
{
    uint8_t a[64], b[64];
    size_t  i;

    for (i = 0; i < sizeof(a); i++)
        a[i] = b[i] = (uint8_t)(i * 7);
    ck_assert(ua_crypto_memeq(a, b, sizeof(a)));
    ck_assert(ua_crypto_memeq(a, b, 0));
    for (i = 0; i < sizeof(a); i++) {
        b[i] ^= 0x01;
        ck_assert(!ua_crypto_memeq(a, b, sizeof(a)));
        ck_assert(ua_crypto_memeq(a, b, i));
        b[i] ^= 0x01;
    }
    b[63] ^= 0x80;
    ck_assert(!ua_crypto_memeq(a, b, 64));
    ua_crypto_wipe(a, sizeof(a));
    for (i = 0; i < sizeof(a); i++)
        ck_assert_uint_eq(a[i], 0);
}
END_TEST

START_TEST(test_padding_len)
{
    static const size_t blocks[] = { 16, 190, 214, 245, 318, 342, 373 };
    static const size_t sigs[] = { 20, 32, 256, 384, 512 };
    size_t              bi, si, len, n;
    int                 ex;

    for (bi = 0; bi < sizeof(blocks) / sizeof(blocks[0]); bi++)
        for (si = 0; si < sizeof(sigs) / sizeof(sigs[0]); si++)
            for (ex = 0; ex < 2; ex++)
                for (len = 0; len < 3 * blocks[bi]; len++) {
                    n = ua_crypto_padding_len(len, sigs[si], blocks[bi],
                                              ex != 0);
                    ck_assert_uint_lt(n, blocks[bi]);
                    ck_assert_uint_eq((len + n + 1 + (size_t)ex + sigs[si])
                                          % blocks[bi],
                                      0);
                }
    /* Part 6's formula where its remainder is not 0 */
    ck_assert_uint_eq(ua_crypto_padding_len(100, 32, 16, false),
                      16 - ((100 + 32 + 1) % 16));
    /* a full block needs no Padding byte: 15 + 0 + 1 + 32 = 48 */
    ck_assert_uint_eq(ua_crypto_padding_len(15, 32, 16, false), 0);
    ck_assert_uint_eq(ua_crypto_padding_len(15, 32, 0, false), 0);
    ck_assert(!ua_crypto_padding_extra(2048));
    ck_assert(ua_crypto_padding_extra(2056));
    ck_assert(ua_crypto_padding_extra(4096));
}
END_TEST

START_TEST(test_padding_write_check)
{
    uint8_t buf[1024];
    size_t  n, w, f, i, body;
    int     ex;

    for (ex = 0; ex < 2; ex++) {
        for (n = 0; n < (ex ? 600u : 256u); n++) {
            body = 17;
            memset(buf, 0xee, sizeof(buf));
            w = ua_crypto_padding_write(buf + body, n, ex != 0);
            ck_assert_uint_eq(w, n + 1 + (size_t)ex);
            ck_assert_uint_eq(buf[body], (uint8_t)n);
            if (ex)
                ck_assert_uint_eq(buf[body + n + 1], (uint8_t)(n >> 8));
            ck_assert_uint_eq(ua_crypto_padding_check(buf, body + w, ex != 0,
                                                      &f),
                              UA_GOOD);
            ck_assert_uint_eq(f, w);
            /* any Padding or size byte changed: refused, or (the last
             * byte turned into a smaller count) a shorter footer */
            for (i = body; i < body + n + 1; i++) {
                buf[i] ^= 0x40;
                if (ua_crypto_padding_check(buf, body + w, ex != 0, &f)
                    == UA_GOOD)
                    ck_assert(i == body + n && f < w);
                buf[i] ^= 0x40;
            }
        }
    }
    /* a count that does not fit */
    buf[0] = 5;
    ck_assert_uint_eq(ua_crypto_padding_check(buf, 1, false, &f),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ua_crypto_padding_check(buf, 0, false, &f),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ua_crypto_padding_check(buf, 1, true, &f),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    buf[0] = 0;
    ck_assert_uint_eq(ua_crypto_padding_check(buf, 1, false, &f), UA_GOOD);
    ck_assert_uint_eq(f, 1);
    buf[1] = 0;
    ck_assert_uint_eq(ua_crypto_padding_check(buf, 2, true, &f), UA_GOOD);
    ck_assert_uint_eq(f, 2);
}
END_TEST

/* docs/security.md case 24: every PaddingSize (and ExtraPaddingSize) value
 * at the end of a short plaintext gives a status, never a read outside the
 * buffer (ASan watches: the buffer is malloc'd to its exact size). */
START_TEST(test_padding_fuzz)
{
    size_t   len, f;
    unsigned lo, hi;
    int      ex;

    for (len = 1; len < 40; len++) {
        uint8_t *p = malloc(len);

        ck_assert_ptr_nonnull(p);
        for (ex = 0; ex < 2; ex++)
            for (hi = 0; hi < (ex ? 256u : 1u); hi++)
                for (lo = 0; lo < 256; lo++) {
                    memset(p, (int)lo, len);
                    if (ex)
                        p[len - 1] = (uint8_t)hi;
                    if (ua_crypto_padding_check(p, len, ex != 0, &f)
                        == UA_GOOD)
                        ck_assert_uint_le(f, len);
                }
        free(p);
    }
}
END_TEST

START_TEST(test_max_body)
{
    size_t b;

    /* symmetric: 8192-byte chunk, 16-byte header, HMAC-SHA256, AES */
    b = ua_crypto_max_body(8192, 16, 32, 16, 16, false);
    ck_assert_uint_eq(b, 8135);
    ck_assert_uint_eq(ua_crypto_padding_len(8 + b, 32, 16, false), 0);
    ck_assert_uint_eq((16 + 8 + b + 1 + 32) % 16, 0);
    ck_assert_uint_le(16 + 8 + b + 1 + 32, 8192);
    /* one byte more would need another block */
    ck_assert_uint_gt(16 + 8 + (b + 1) + 1 + 32
                          + ua_crypto_padding_len(8 + b + 1, 32, 16, false),
                      8192);
    /* asymmetric, RSA-2048 OAEP-SHA1: 214 plaintext -> 256 ciphertext */
    b = ua_crypto_max_body(8192, 1200, 256, 214, 256, false);
    ck_assert_uint_eq(b, 27 * 214 - 8 - 256 - 1);
    ck_assert_uint_eq(ua_crypto_padding_len(8 + b, 256, 214, false), 0);
    /* RSA-4096 OAEP-SHA256 with ExtraPaddingSize */
    b = ua_crypto_max_body(65536, 3000, 512, 446, 512, true);
    ck_assert_uint_eq(b, ((65536 - 3000) / 512) * 446 - 8 - 512 - 2);
    ck_assert_uint_eq(ua_crypto_max_body(100, 200, 32, 16, 16, false), 0);
    ck_assert_uint_eq(ua_crypto_max_body(64, 16, 32, 16, 16, false), 7);
    ck_assert_uint_eq(ua_crypto_max_body(48, 16, 32, 16, 16, false), 0);
    ck_assert_uint_eq(ua_crypto_max_body(8192, 16, 32, 0, 16, false), 0);
}
END_TEST

START_TEST(test_rsa_sizes)
{
    ck_assert_uint_eq(ua_crypto_rsa_overhead(UA_RSA_ENC_PKCS1), 11);
    ck_assert_uint_eq(ua_crypto_rsa_overhead(UA_RSA_ENC_OAEP_SHA1), 42);
    ck_assert_uint_eq(ua_crypto_rsa_overhead(UA_RSA_ENC_OAEP_SHA256), 66);
    ck_assert_uint_eq(ua_crypto_rsa_plain_block(UA_RSA_ENC_PKCS1, 256), 245);
    ck_assert_uint_eq(ua_crypto_rsa_plain_block(UA_RSA_ENC_OAEP_SHA1, 256),
                      214);
    ck_assert_uint_eq(ua_crypto_rsa_plain_block(UA_RSA_ENC_OAEP_SHA256, 256),
                      190);
    ck_assert_uint_eq(ua_crypto_rsa_plain_block(UA_RSA_ENC_OAEP_SHA1, 384),
                      342);
    ck_assert_uint_eq(ua_crypto_rsa_plain_block(UA_RSA_ENC_OAEP_SHA256, 512),
                      446);
    ck_assert_uint_eq(ua_crypto_rsa_plain_block(UA_RSA_ENC_OAEP_SHA256, 66),
                      0);
    ck_assert_uint_eq(ua_crypto_rsa_cipher_len(UA_RSA_ENC_OAEP_SHA1, 256,
                                               428),
                      512);
    ck_assert_uint_eq(ua_crypto_rsa_cipher_len(UA_RSA_ENC_OAEP_SHA1, 256,
                                               429),
                      768);
    ck_assert_uint_eq(ua_crypto_rsa_cipher_len(UA_RSA_ENC_OAEP_SHA1, 256, 1),
                      256);
    ck_assert_uint_eq(ua_crypto_rsa_cipher_len(UA_RSA_ENC_OAEP_SHA1, 256, 0),
                      0);
    ck_assert_uint_eq(ua_crypto_rsa_cipher_len(UA_RSA_ENC_OAEP_SHA1, 10, 5),
                      0);
    ck_assert_uint_eq(ua_crypto_hash_len(UA_HASH_SHA1), 20);
    ck_assert_uint_eq(ua_crypto_hash_len(UA_HASH_SHA256), 32);
    ck_assert_uint_eq(ua_crypto_hash_len(UA_HASH_NONE), 0);
}
END_TEST

/* ------------------------------------------------------------ hashes */

START_TEST(test_hash_kat)
{
    uint8_t out[64], want[64];
    size_t  n;

    ck_assert_uint_eq(ua_crypto_hash(UA_HASH_SHA1, (const uint8_t *)"abc",
                                     3, out),
                      UA_GOOD);
    n = unhex("a9993e364706816aba3e25717850c26c9cd0d89d", want,
              sizeof(want));
    ck_assert_mem_eq(out, want, n);
    ck_assert_uint_eq(ua_crypto_hash(UA_HASH_SHA256, (const uint8_t *)"abc",
                                     3, out),
                      UA_GOOD);
    n = unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015"
              "ad",
              want, sizeof(want));
    ck_assert_mem_eq(out, want, n);
    ck_assert_uint_eq(ua_crypto_hash(UA_HASH_NONE, (const uint8_t *)"abc",
                                     3, out),
                      UA_BAD_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_hmac_kat)
{
    static const char  six[] =
        "Test Using Larger Than Block-Size Key - Hash Key First";
    static const char *jefe = "what do ya want for nothing?";
    uint8_t            key[131], out[32], want[32];
    size_t             n;

    /* RFC 4231 §4.2, 4.3, 4.7 */
    memset(key, 0x0b, 20);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA256, key, 20,
                                     (const uint8_t *)"Hi There", 8, out),
                      UA_GOOD);
    n = unhex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cf"
              "f7",
              want, sizeof(want));
    ck_assert_mem_eq(out, want, n);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA256, (const uint8_t *)"Jefe",
                                     4, (const uint8_t *)jefe, strlen(jefe),
                                     out),
                      UA_GOOD);
    n = unhex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec38"
              "43",
              want, sizeof(want));
    ck_assert_mem_eq(out, want, n);
    memset(key, 0xaa, 131);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA256, key, 131,
                                     (const uint8_t *)six, strlen(six), out),
                      UA_GOOD);
    n = unhex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f"
              "54",
              want, sizeof(want));
    ck_assert_mem_eq(out, want, n);

    /* RFC 2202 §3 test cases 1, 2, 6 */
    memset(key, 0x0b, 20);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA1, key, 20,
                                     (const uint8_t *)"Hi There", 8, out),
                      UA_GOOD);
    n = unhex("b617318655057264e28bc0b6fb378c8ef146be00", want, sizeof(want));
    ck_assert_mem_eq(out, want, n);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA1, (const uint8_t *)"Jefe", 4,
                                     (const uint8_t *)jefe, strlen(jefe),
                                     out),
                      UA_GOOD);
    n = unhex("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79", want, sizeof(want));
    ck_assert_mem_eq(out, want, n);
    memset(key, 0xaa, 80);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA1, key, 80,
                                     (const uint8_t *)six, strlen(six), out),
                      UA_GOOD);
    n = unhex("aa4ae5e15272d00e95705637ce8a3b55ed402112", want, sizeof(want));
    ck_assert_mem_eq(out, want, n);

    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA384, key, 20,
                                     (const uint8_t *)"x", 1, out),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_hmac(UA_HASH_SHA1, key, 0,
                                     (const uint8_t *)"x", 1, out),
                      UA_BAD_INVALID_ARGUMENT);
}
END_TEST

/* A stepped PBKDF2 in chunks of `chunk` iterations (0: all at once);
 * asserts it is done exactly when all iterations are. */
static void
pbkdf2_stepped(const uint8_t *pw, size_t pw_len, const uint8_t *salt,
               size_t salt_len, uint32_t iter, uint32_t chunk, uint8_t *out,
               size_t out_len)
{
    struct ua_pbkdf2 st;
    uint32_t         did = 1, steps = 0;
    bool             done = false;

    ck_assert_int_eq(ua_crypto_pbkdf2_init(&st, pw, pw_len, salt, salt_len,
                                           iter, out_len), UA_GOOD);
    while (!done) {
        uint32_t n = chunk == 0 ? UINT32_MAX : chunk;

        ck_assert_int_eq(ua_crypto_pbkdf2_step(&st, n, out, &done), UA_GOOD);
        did = (uint64_t)did + n > iter ? iter : did + n;
        ck_assert_int_eq(done, (did == iter));
        ck_assert_uint_le(++steps, iter);
    }
    /* Finished: the state is wiped, a further step is refused. */
    ck_assert_int_ne(ua_crypto_pbkdf2_step(&st, 1, out, &done), UA_GOOD);
    ua_crypto_pbkdf2_clear(&st);
}

/* The stepped PBKDF2-HMAC-SHA256 against published vectors (RFC 7914 §11
 * and the common password/salt ones) and against the one-shot
 * wc_PBKDF2 wrapper, in chunks of 1, 7, 1000 and all at once. */
START_TEST(test_pbkdf2_steps)
{
    static const struct {
        const char *pw, *salt;
        uint32_t    iter;
        const char *hex;        /* first 32 bytes */
    } v[] = {
        { "password", "salt", 1, "120fb6cffcf8b32c43e7225256c4f837"
                                 "a86548c92ccc35480805987cb70be17b" },
        { "password", "salt", 2, "ae4d0c95af6b46d32d0adff928f06dd0"
                                 "2a303f8ef3c251dfd6e2d85a95474c43" },
        { "password", "salt", 4096, "c5e478d59288c841aa530db6845c4c8d"
                                    "962893a001ce4e11a4963873aa98134a" },
        { "passwd", "salt", 1, "55ac046e56e3089fec1691c22544b605"
                               "f94185216dde0465e68b9d57c20dacbc" },
    };
    static const uint32_t chunks[] = { 1, 7, 1000, 0 };
    static const uint32_t iters[] = { 1, 2, 4096, 10000 };
    uint8_t               want[32], got[32], longpw[100];
    struct ua_pbkdf2      st;
    bool                  done;

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        for (size_t j = 0; j < 32; j++) {
            unsigned b;

            ck_assert_int_eq(sscanf(v[i].hex + 2 * j, "%2x", &b), 1);
            want[j] = (uint8_t)b;
        }
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
            memset(got, 0, sizeof(got));
            pbkdf2_stepped((const uint8_t *)v[i].pw, strlen(v[i].pw),
                           (const uint8_t *)v[i].salt, strlen(v[i].salt),
                           v[i].iter, chunks[c], got, 32);
            ck_assert_mem_eq(got, want, 32);
        }
    }
    /* Against the one-shot: a short, an empty and a password longer than
     * a block (hashed first), 16-byte salt, shorter outputs too. */
    for (size_t j = 0; j < sizeof(longpw); j++)
        longpw[j] = (uint8_t)(j * 7 + 1);
    for (size_t i = 0; i < sizeof(iters) / sizeof(iters[0]); i++) {
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
            static const size_t pwl[] = { 8, 0, 100 };

            for (size_t k = 0; k < 3; k++) {
                size_t ol = k == 1 ? 20 : 32;

                ck_assert_int_eq(ua_crypto_pbkdf2(longpw, pwl[k],
                                                  longpw + 50, 16, iters[i],
                                                  want, ol), UA_GOOD);
                memset(got, 0, sizeof(got));
                pbkdf2_stepped(longpw, pwl[k], longpw + 50, 16, iters[i],
                               chunks[c], got, ol);
                ck_assert_mem_eq(got, want, ol);
            }
        }
    }
    /* Bad arguments; an unfinished state cleared. */
    ck_assert_int_ne(ua_crypto_pbkdf2_init(&st, longpw, 8, NULL, 0, 1, 32),
                     UA_GOOD);
    ck_assert_int_ne(ua_crypto_pbkdf2_init(&st, longpw, 8, longpw, 4, 0, 32),
                     UA_GOOD);
    ck_assert_int_ne(ua_crypto_pbkdf2_init(&st, longpw, 8, longpw, 4, 1, 33),
                     UA_GOOD);
    ck_assert_int_eq(ua_crypto_pbkdf2_init(&st, longpw, 8, longpw, 4, 100,
                                           32), UA_GOOD);
    ck_assert_int_eq(ua_crypto_pbkdf2_step(&st, 10, got, &done), UA_GOOD);
    ck_assert(!done);
    ua_crypto_pbkdf2_clear(&st);
    ck_assert_int_ne(ua_crypto_pbkdf2_step(&st, 1000, got, &done), UA_GOOD);
    ck_assert(!done);
}
END_TEST

START_TEST(test_p_sha256_tls12_vector)
{
    uint8_t secret[16], seed[64], out[100], want[100];
    size_t  sl, n;

    unhex("9bbe436ba940f017b17652849a71db35", secret, sizeof(secret));
    /* seed = "test label" | seed: TLS puts the label in front */
    memcpy(seed, "test label", 10);
    sl = 10 + unhex("a0ba9f936cda311827a6f796ffd5198c", seed + 10, 54);
    n = unhex("e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb"
              "5a6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c056"
              "4bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110"
              "fff70187347b66",
              want, sizeof(want));
    ck_assert_uint_eq(n, 100);
    ck_assert_uint_eq(ua_crypto_p_hash(UA_HASH_SHA256, secret, 16, seed, sl,
                                       out, 100),
                      UA_GOOD);
    ck_assert_mem_eq(out, want, 100);
    /* any prefix length gives the prefix */
    for (n = 1; n < 100; n += 7) {
        memset(out, 0, sizeof(out));
        ck_assert_uint_eq(ua_crypto_p_hash(UA_HASH_SHA256, secret, 16, seed,
                                           sl, out, n),
                          UA_GOOD);
        ck_assert_mem_eq(out, want, n);
        ck_assert_uint_eq(out[n], 0);
    }
    ck_assert_uint_eq(ua_crypto_p_hash(UA_HASH_SHA256, secret, 0, seed, sl,
                                       out, 10),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_p_hash(UA_HASH_NONE, secret, 16, seed, sl,
                                       out, 10),
                      UA_BAD_INVALID_ARGUMENT);
}
END_TEST

static void
nonces(uint8_t ns[32], uint8_t nc[32])
{
    int i;

    for (i = 0; i < 32; i++) {
        ns[i] = (uint8_t)i;
        nc[i] = (uint8_t)(0x20 + i);
    }
}

/* P_SHA1 and P_SHA256 against openssl's TLS1-PRF (no label). */
START_TEST(test_p_hash_openssl)
{
    uint8_t ns[32], nc[32], out[80];

    nonces(ns, nc);
    ck_assert_uint_eq(ua_crypto_p_hash(UA_HASH_SHA1, ns, 32, nc, 32, out, 80),
                      UA_GOOD);
    ck_assert_mem_eq(out, pki_p_sha1_bin, 80);
    ck_assert_uint_eq(ua_crypto_p_hash(UA_HASH_SHA256, ns, 32, nc, 32, out,
                                       80),
                      UA_GOOD);
    ck_assert_mem_eq(out, pki_p_sha256_bin, 80);
}
END_TEST

/* Part 6 §6.7.5: the client's keys of every policy are P_hash(serverNonce,
 * clientNonce) cut at the policy's lengths - prefixes of openssl's output;
 * the server's keys are P_hash(clientNonce, serverNonce). */
START_TEST(test_channel_keys)
{
    uint8_t                 ns[32], nc[32], srv[80];
    struct ua_sym_keys      ck, sk;
    const struct ua_policy *p;
    const uint8_t          *ref;
    unsigned                id;
    size_t                  off;

    nonces(ns, nc);
    for (id = UA_POLICY_BASIC128RSA15; id < UA_POLICY_COUNT; id++) {
        p = ua_crypto_policy_get(id);
        ref = p->sym_hash == UA_HASH_SHA1 ? pki_p_sha1_bin : pki_p_sha256_bin;
        ck_assert_uint_eq(ua_crypto_channel_keys(p, nc, p->nonce_len, ns,
                                                 p->nonce_len, &ck, &sk),
                          UA_GOOD);
        ck_assert_uint_eq(ck.sign_len, p->sym_sig_key_len);
        ck_assert_uint_eq(ck.enc_len, p->sym_enc_key_len);
        ck_assert_uint_eq(ck.iv_len, 16);
        if (p->nonce_len == 32) {
            off = 0;
            ck_assert_mem_eq(ck.sign, ref + off, ck.sign_len);
            off += ck.sign_len;
            ck_assert_mem_eq(ck.enc, ref + off, ck.enc_len);
            off += ck.enc_len;
            ck_assert_mem_eq(ck.iv, ref + off, ck.iv_len);
        }
        ck_assert_uint_eq(p->derive(nc, p->nonce_len, ns, p->nonce_len, srv,
                                    80),
                          UA_GOOD);
        ck_assert_mem_eq(sk.sign, srv, sk.sign_len);
        ck_assert_mem_eq(sk.enc, srv + sk.sign_len, sk.enc_len);
        ck_assert_mem_eq(sk.iv, srv + sk.sign_len + sk.enc_len, 16);
        ck_assert(!ua_crypto_memeq(ck.sign, sk.sign, ck.sign_len));
        ua_crypto_sym_keys_clear(&ck);
        ck_assert_uint_eq(ck.sign_len, 0);
        ck_assert_uint_eq(ck.sign[0], 0);
    }
    ck_assert_uint_eq(ua_crypto_channel_keys(ua_crypto_policy_get(
                                                 UA_POLICY_NONE),
                                             nc, 32, ns, 32, &ck, &sk),
                      UA_BAD_INVALID_ARGUMENT);
}
END_TEST

/* ------------------------------------------------------------ cipher */

static const char nist_pt[] =
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";

/* Keys for policy p whose encrypting key and IV are given. */
static void
sym_keys(const struct ua_policy *p, const char *key_hex, const char *iv_hex,
         uint8_t sign_fill, struct ua_sym_keys *k)
{
    memset(k, 0, sizeof(*k));
    k->sign_len = p->sym_sig_key_len;
    memset(k->sign, sign_fill, k->sign_len);
    k->enc_len = (uint8_t)unhex(key_hex, k->enc, sizeof(k->enc));
    ck_assert_uint_eq(k->enc_len, p->sym_enc_key_len);
    k->iv_len = (uint8_t)unhex(iv_hex, k->iv, sizeof(k->iv));
}

static void
aes_kat(unsigned id, const char *key, const char *ct_hex)
{
    const struct ua_policy *p = ua_crypto_policy_get(id);
    struct ua_sym_keys      k;
    struct ua_cipher        c = { 0 };
    uint8_t                 buf[64], pt[64], ct[64];
    int                     round;

    sym_keys(p, key, "000102030405060708090a0b0c0d0e0f", 0x11, &k);
    ck_assert_uint_eq(unhex(nist_pt, pt, sizeof(pt)), 64);
    ck_assert_uint_eq(unhex(ct_hex, ct, sizeof(ct)), 64);
    ck_assert_uint_eq(ua_crypto_cipher_init(&c, p, &k, &k), UA_GOOD);
    ck_assert_ptr_eq(ua_crypto_cipher_policy(&c), p);
    /* The same context, message after message: the IV is reset each time
     * (without wc_AesSetIV the second round would chain on, gotcha 5). */
    for (round = 0; round < 3; round++) {
        memcpy(buf, pt, 64);
        ck_assert_uint_eq(ua_crypto_cipher_encrypt(&c, buf, 64), UA_GOOD);
        ck_assert_mem_eq(buf, ct, 64);
        ck_assert_uint_eq(ua_crypto_cipher_decrypt(&c, buf, 64), UA_GOOD);
        ck_assert_mem_eq(buf, pt, 64);
    }
    /* F.2.2/F.2.6 decrypt the 2nd block alone with block 1 as IV: not our
     * API; instead a 16-byte message gives the first block */
    memcpy(buf, pt, 16);
    ck_assert_uint_eq(ua_crypto_cipher_encrypt(&c, buf, 16), UA_GOOD);
    ck_assert_mem_eq(buf, ct, 16);
    ck_assert_uint_eq(ua_crypto_cipher_encrypt(&c, buf, 15),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_cipher_decrypt(&c, buf, 17),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_cipher_encrypt(&c, buf, 0), UA_GOOD);
    ua_crypto_cipher_clear(&c);
    ck_assert_ptr_null(ua_crypto_cipher_policy(&c));
    ck_assert_uint_eq(ua_crypto_cipher_encrypt(&c, buf, 16),
                      UA_BAD_INVALID_ARGUMENT);
    ua_crypto_cipher_clear(&c);     /* twice is harmless */
}

START_TEST(test_aes_cbc_nist)
{
    /* SP 800-38A F.2.1 CBC-AES128.Encrypt (Aes128_Sha256_RsaOaep) */
    aes_kat(UA_POLICY_AES128_SHA256_RSAOAEP,
            "2b7e151628aed2a6abf7158809cf4f3c",
            "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
            "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7");
    /* and with Basic128Rsa15 */
    aes_kat(UA_POLICY_BASIC128RSA15, "2b7e151628aed2a6abf7158809cf4f3c",
            "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
            "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7");
    /* F.2.5 CBC-AES256.Encrypt (Basic256Sha256, Aes256_Sha256_RsaPss) */
    aes_kat(UA_POLICY_BASIC256SHA256,
            "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
            "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b");
    aes_kat(UA_POLICY_AES256_SHA256_RSAPSS,
            "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
            "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b");
    aes_kat(UA_POLICY_BASIC256,
            "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
            "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b");
}
END_TEST

/* The context's HMAC equals the one-shot HMAC, message after message. */
START_TEST(test_cipher_hmac)
{
    unsigned                id;
    const struct ua_policy *p;
    struct ua_sym_keys      loc, rem;
    struct ua_cipher        c = { 0 };
    uint8_t                 msg[300], sig[32], want[32];
    size_t                  len;

    for (id = UA_POLICY_BASIC128RSA15; id < UA_POLICY_COUNT; id++) {
        p = ua_crypto_policy_get(id);
        sym_keys(p, p->sym_enc_key_len == 16
                        ? "000102030405060708090a0b0c0d0e0f"
                        : "000102030405060708090a0b0c0d0e0f"
                          "101112131415161718191a1b1c1d1e1f",
                 "0f0e0d0c0b0a09080706050403020100", 0x21, &loc);
        rem = loc;
        memset(rem.sign, 0x42, rem.sign_len);
        ck_assert_uint_eq(ua_crypto_cipher_init(&c, p, &loc, &rem), UA_GOOD);
        for (len = 0; len < sizeof(msg); len += 37) {
            memset(msg, (int)len, sizeof(msg));
            ck_assert_uint_eq(p->sym_sign(&c, msg, len, sig), UA_GOOD);
            ck_assert_uint_eq(ua_crypto_hmac(p->sym_hash, loc.sign,
                                             loc.sign_len, msg, len, want),
                              UA_GOOD);
            ck_assert_mem_eq(sig, want, p->sym_sig_len);
            /* verify uses the remote key: our own signature fails ... */
            ck_assert_uint_eq(p->sym_verify(&c, msg, len, sig),
                              UA_BAD_SECURITY_CHECKS_FAILED);
            /* ... the peer's verifies, and not once altered */
            ck_assert_uint_eq(ua_crypto_hmac(p->sym_hash, rem.sign,
                                             rem.sign_len, msg, len, want),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_verify(&c, msg, len, want), UA_GOOD);
            want[p->sym_sig_len - 1] ^= 1;
            ck_assert_uint_eq(p->sym_verify(&c, msg, len, want),
                              UA_BAD_SECURITY_CHECKS_FAILED);
        }
        ua_crypto_cipher_clear(&c);
    }
}
END_TEST

/*
 * The context's HMAC (keyed hash states copied per message) against
 * ua_crypto_hmac (wolfSSL's wc_HmacSetKey/Update/Final on a fresh object)
 * at the lengths around SHA's 64-byte block and its 8-byte length field:
 * 55 and 56 bytes end in one or two final blocks, 63/64/65 around a full
 * block, 1000 many blocks.  The sign keys are not uniform bytes.
 */
START_TEST(test_cipher_hmac_lengths)
{
    static const size_t     lens[] = { 0, 1, 55, 56, 63, 64, 65, 1000 };
    unsigned                id;
    const struct ua_policy *p;
    struct ua_sym_keys      loc, rem;
    struct ua_cipher        c = { 0 };
    uint8_t                 msg[1000], sig[32], want[32];
    size_t                  i, j;

    for (id = UA_POLICY_BASIC128RSA15; id < UA_POLICY_COUNT; id++) {
        p = ua_crypto_policy_get(id);
        sym_keys(p, p->sym_enc_key_len == 16
                        ? "000102030405060708090a0b0c0d0e0f"
                        : "000102030405060708090a0b0c0d0e0f"
                          "101112131415161718191a1b1c1d1e1f",
                 "0f0e0d0c0b0a09080706050403020100", 0, &loc);
        rem = loc;
        for (j = 0; j < loc.sign_len; j++) {
            loc.sign[j] = (uint8_t)(0x80 + 3 * j);
            rem.sign[j] = (uint8_t)(0xf1 - 5 * j);
        }
        ck_assert_uint_eq(ua_crypto_cipher_init(&c, p, &loc, &rem), UA_GOOD);
        for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            for (j = 0; j < lens[i]; j++)
                msg[j] = (uint8_t)(j * 7 + lens[i]);
            ck_assert_uint_eq(p->sym_sign(&c, msg, lens[i], sig), UA_GOOD);
            ck_assert_uint_eq(ua_crypto_hmac(p->sym_hash, loc.sign,
                                             loc.sign_len, msg, lens[i],
                                             want), UA_GOOD);
            ck_assert_mem_eq(sig, want, p->sym_sig_len);
            ck_assert_uint_eq(ua_crypto_hmac(p->sym_hash, rem.sign,
                                             rem.sign_len, msg, lens[i],
                                             want), UA_GOOD);
            ck_assert_uint_eq(p->sym_verify(&c, msg, lens[i], want),
                              UA_GOOD);
            /* a wrong byte at the start or the end of the MAC: refused */
            want[0] ^= 0x80;
            ck_assert_uint_eq(p->sym_verify(&c, msg, lens[i], want),
                              UA_BAD_SECURITY_CHECKS_FAILED);
            want[0] ^= 0x80;
            want[p->sym_sig_len - 1] ^= 1;
            ck_assert_uint_eq(p->sym_verify(&c, msg, lens[i], want),
                              UA_BAD_SECURITY_CHECKS_FAILED);
        }
        ua_crypto_cipher_clear(&c);
    }
}
END_TEST

/*
 * One context, many messages: the same message gets the same MAC every
 * time, whatever came between (the keyed states are restored for each
 * message, not run on), in both directions.
 */
START_TEST(test_cipher_hmac_reuse)
{
    unsigned                id;
    const struct ua_policy *p;
    struct ua_sym_keys      k;
    struct ua_cipher        c = { 0 };
    uint8_t                 msg[200], other[131], first[32], sig[32];
    int                     round;

    memset(other, 0x5a, sizeof(other));
    for (id = UA_POLICY_BASIC128RSA15; id < UA_POLICY_COUNT; id++) {
        p = ua_crypto_policy_get(id);
        sym_keys(p, p->sym_enc_key_len == 16
                        ? "000102030405060708090a0b0c0d0e0f"
                        : "000102030405060708090a0b0c0d0e0f"
                          "101112131415161718191a1b1c1d1e1f",
                 "0f0e0d0c0b0a09080706050403020100", 0x37, &k);
        for (size_t j = 0; j < sizeof(msg); j++)
            msg[j] = (uint8_t)(j ^ id);
        ck_assert_uint_eq(ua_crypto_cipher_init(&c, p, &k, &k), UA_GOOD);
        ck_assert_uint_eq(p->sym_sign(&c, msg, sizeof(msg), first), UA_GOOD);
        for (round = 0; round < 50; round++) {
            /* something else signed and verified in between */
            ck_assert_uint_eq(p->sym_sign(&c, other, (size_t)round, sig),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_verify(&c, other, (size_t)round, sig),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_sign(&c, msg, sizeof(msg), sig),
                              UA_GOOD);
            ck_assert_mem_eq(sig, first, p->sym_sig_len);
            ck_assert_uint_eq(p->sym_verify(&c, msg, sizeof(msg), first),
                              UA_GOOD);
        }
        ua_crypto_cipher_clear(&c);
    }
}
END_TEST

/*
 * What a secure channel does per chunk, both ends: the server signs and
 * encrypts with its keys, the client decrypts and verifies with the same
 * (its "remote") keys and strips the padding, and the other way round.
 */
START_TEST(test_cipher_chunk_roundtrip)
{
    unsigned                id;
    const struct ua_policy *p;
    uint8_t                 cn[32], sn[32], chunk[512], copy[512];
    struct ua_sym_keys      ck, sk;
    struct ua_cipher        srv = { 0 }, cli = { 0 };
    size_t                  body, plain, pad, n, footer, enc_len;

    for (id = UA_POLICY_BASIC128RSA15; id < UA_POLICY_COUNT; id++) {
        p = ua_crypto_policy_get(id);
        ck_assert_uint_eq(ua_crypto_random(cn, p->nonce_len), UA_GOOD);
        ck_assert_uint_eq(ua_crypto_random(sn, p->nonce_len), UA_GOOD);
        ck_assert_uint_eq(ua_crypto_channel_keys(p, cn, p->nonce_len, sn,
                                                 p->nonce_len, &ck, &sk),
                          UA_GOOD);
        ck_assert_uint_eq(ua_crypto_cipher_init(&srv, p, &sk, &ck), UA_GOOD);
        ck_assert_uint_eq(ua_crypto_cipher_init(&cli, p, &ck, &sk), UA_GOOD);
        for (body = 0; body < 200; body += 13) {
            /* header(16, plain) | seq(8) body padding sig (encrypted) */
            memset(chunk, 0xa5, 16);
            memset(chunk + 16, 0x5a, 8);
            memset(chunk + 24, (int)body, body);
            plain = 8 + body;
            pad = ua_crypto_padding_len(plain, p->sym_sig_len, 16, false);
            n = 24 + body;
            n += ua_crypto_padding_write(chunk + n, pad, false);
            ck_assert_uint_eq(p->sym_sign(&srv, chunk, n, chunk + n),
                              UA_GOOD);
            n += p->sym_sig_len;
            enc_len = n - 16;
            ck_assert_uint_eq(enc_len % 16, 0);
            memcpy(copy, chunk, n);
            ck_assert_uint_eq(p->sym_encrypt(&srv, chunk + 16, enc_len),
                              UA_GOOD);
            ck_assert_mem_ne(chunk + 16, copy + 16, enc_len);
            /* the client */
            ck_assert_uint_eq(p->sym_decrypt(&cli, chunk + 16, enc_len),
                              UA_GOOD);
            ck_assert_mem_eq(chunk, copy, n);
            ck_assert_uint_eq(p->sym_verify(&cli, chunk, n - p->sym_sig_len,
                                            chunk + n - p->sym_sig_len),
                              UA_GOOD);
            ck_assert_uint_eq(ua_crypto_padding_check(chunk + 16,
                                                      enc_len
                                                          - p->sym_sig_len,
                                                      false, &footer),
                              UA_GOOD);
            ck_assert_uint_eq(footer, pad + 1);
            /* a flipped ciphertext bit: the MAC catches it */
            memcpy(chunk, copy, n);
            ck_assert_uint_eq(p->sym_encrypt(&srv, chunk + 16, enc_len),
                              UA_GOOD);
            chunk[16 + enc_len / 2] ^= 0x04;
            ck_assert_uint_eq(p->sym_decrypt(&cli, chunk + 16, enc_len),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_verify(&cli, chunk, n - p->sym_sig_len,
                                            chunk + n - p->sym_sig_len),
                              UA_BAD_SECURITY_CHECKS_FAILED);
            /* the client's own direction back to the server */
            memcpy(chunk, copy, n);
            ck_assert_uint_eq(p->sym_sign(&cli, chunk, n - p->sym_sig_len,
                                          chunk + n - p->sym_sig_len),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_encrypt(&cli, chunk + 16, enc_len),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_decrypt(&srv, chunk + 16, enc_len),
                              UA_GOOD);
            ck_assert_uint_eq(p->sym_verify(&srv, chunk, n - p->sym_sig_len,
                                            chunk + n - p->sym_sig_len),
                              UA_GOOD);
        }
        ua_crypto_cipher_clear(&srv);
        ua_crypto_cipher_clear(&cli);
    }
}
END_TEST

START_TEST(test_cipher_refuses)
{
    const struct ua_policy *p = ua_crypto_policy_get(UA_POLICY_BASIC256SHA256);
    struct ua_sym_keys      k;
    struct ua_cipher        c = { 0 };

    memset(&c, 0, sizeof(c));
    sym_keys(p,
             "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
             "000102030405060708090a0b0c0d0e0f", 1, &k);
    ck_assert_uint_eq(ua_crypto_cipher_init(&c, ua_crypto_policy_get(
                                                    UA_POLICY_NONE),
                                            &k, &k),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_cipher_init(&c, NULL, &k, &k),
                      UA_BAD_INVALID_ARGUMENT);
    /* keys of another policy (AES-128 key for an AES-256 policy) */
    k.enc_len = 16;
    ck_assert_uint_eq(ua_crypto_cipher_init(&c, p, &k, &k),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_cipher_sign(&c, k.sign, 1, k.iv),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_cipher_verify(NULL, k.sign, 1, k.iv),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_cipher_decrypt(&c, k.enc, 16),
                      UA_BAD_INVALID_ARGUMENT);
    ua_crypto_cipher_clear(NULL);
}
END_TEST

/* ------------------------------------------------------------ random */

START_TEST(test_random_fork)
{
    uint8_t a[32], b[32], child[32], zero[32] = { 0 };
    int     fd[2];
    pid_t   pid;
    int     st;

    ck_assert_uint_eq(ua_crypto_random(a, sizeof(a)), UA_GOOD);
    ck_assert_uint_eq(ua_crypto_random(b, sizeof(b)), UA_GOOD);
    ck_assert(!ua_crypto_memeq(a, b, sizeof(a)));
    ck_assert(!ua_crypto_memeq(a, zero, sizeof(a)));
    /* A forked child must not produce the parent's next bytes (gotcha 3). */
    ck_assert_int_eq(pipe(fd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        uint8_t x[32];

        if (ua_crypto_random(x, sizeof(x)) != UA_GOOD)
            _exit(1);
        if (write(fd[1], x, sizeof(x)) != (ssize_t)sizeof(x))
            _exit(1);
        _exit(0);
    }
    ck_assert_uint_eq(ua_crypto_random(a, sizeof(a)), UA_GOOD);
    ck_assert_int_eq(read(fd[0], child, sizeof(child)), (int)sizeof(child));
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(fd[0]);
    close(fd[1]);
    ck_assert(!ua_crypto_memeq(a, child, sizeof(a)));
    ck_assert_uint_eq(ua_crypto_reseed(), UA_GOOD);
    ck_assert_uint_eq(ua_crypto_random(b, sizeof(b)), UA_GOOD);
    ck_assert(!ua_crypto_memeq(a, b, sizeof(a)));
    ck_assert_uint_eq(ua_crypto_random(NULL, 0), UA_GOOD);
}
END_TEST

/* ------------------------------------------------------------ RSA */

static void
load_app(struct ua_crypto_key *k)
{
    ck_assert_uint_eq(ua_crypto_key_load(k, pki_app_key_der,
                                         sizeof(pki_app_key_der)),
                      UA_GOOD);
}

START_TEST(test_key_load)
{
    static const struct {
        const uint8_t *b;
        size_t         n;
    } forms[] = {
        { pki_app_key_der, sizeof(pki_app_key_der) },
        { pki_app_p8_der, sizeof(pki_app_p8_der) },
        { pki_app_key_pem, sizeof(pki_app_key_pem) },
        { pki_app_p8_pem, sizeof(pki_app_p8_pem) },
    };
    struct ua_crypto_key k = { 0 }, pub = { 0 };
    uint8_t              out[4096], sig[512], garbage[300];
    size_t               i, n, sl;

    for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        ck_assert_uint_eq(ua_crypto_key_load(&k, forms[i].b, forms[i].n),
                          UA_GOOD);
        ck_assert_uint_eq(ua_crypto_key_bits(&k), 2048);
        ck_assert_uint_eq(ua_crypto_key_bytes(&k), 256);
        ck_assert(ua_crypto_key_is_private(&k));
        /* every form is the same key: PKCS#1 DER out equals openssl's */
        ck_assert_uint_eq(ua_crypto_key_write(&k, false, out, sizeof(out),
                                              &n),
                          UA_GOOD);
        ck_assert_uint_eq(n, sizeof(pki_app_key_der));
        ck_assert_mem_eq(out, pki_app_key_der, n);
        ua_crypto_key_clear(&k);
        ck_assert_uint_eq(ua_crypto_key_bits(&k), 0);
        ck_assert(!ua_crypto_key_is_private(&k));
    }
    /* PEM out, and back in */
    load_app(&k);
    ck_assert_uint_eq(ua_crypto_key_write(&k, true, out, sizeof(out), &n),
                      UA_GOOD);
    ck_assert_uint_eq(strlen((char *)out), n);
    ck_assert(strstr((char *)out, "-----BEGIN RSA PRIVATE KEY-----") != NULL);
    ck_assert_uint_eq(ua_crypto_key_load(&pub, out, n), UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_write(&pub, false, out, sizeof(out), &n),
                      UA_GOOD);
    ck_assert_mem_eq(out, pki_app_key_der, sizeof(pki_app_key_der));
    ua_crypto_key_clear(&pub);
    ck_assert_uint_eq(ua_crypto_key_write(&k, false, out, 100, &n),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    ua_crypto_key_clear(&k);
    ck_assert_uint_eq(ua_crypto_key_write(&k, true, out, sizeof(out), &n),
                      UA_BAD_INVALID_ARGUMENT);
    /* garbage, truncation */
    memset(garbage, 0x30, sizeof(garbage));
    ck_assert_uint_eq(ua_crypto_key_load(&k, garbage, sizeof(garbage)),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_crypto_key_load(&k, pki_app_key_der, 100),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_crypto_key_load(&k, pki_app_key_der, 0),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_key_load(&k, (const uint8_t *)"-----BEGIN x",
                                         12),
                      UA_BAD_DECODING_ERROR);
    /* public keys: SubjectPublicKeyInfo, RSAPublicKey, a certificate; each
     * verifies openssl's signature */
    ck_assert_uint_eq(ua_crypto_key_load_public(&pub, pki_app_spki_der,
                                                sizeof(pki_app_spki_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_bits(&pub), 2048);
    ck_assert(!ua_crypto_key_is_private(&pub));
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           pki_sig_pkcs1_sha256_bin, 256),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_load_public(&pub, pki_app_rsapub_der,
                                                sizeof(pki_app_rsapub_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           pki_sig_pkcs1_sha256_bin, 256),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_load_public(&pub, garbage,
                                                sizeof(garbage)),
                      UA_BAD_DECODING_ERROR);
    ck_assert_uint_eq(ua_crypto_key_write(&pub, false, out, sizeof(out), &n),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_bits(&pub), 2048);
    ck_assert(!ua_crypto_key_is_private(&pub));
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_rsa3072_der,
                                              sizeof(pki_rsa3072_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_bits(&pub), 3072);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, garbage, sizeof(garbage)),
                      UA_BAD_CERTIFICATE_INVALID);
    /* a public key cannot sign or decrypt */
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_rsa_sign(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                         pki_msg_bin, 10, sig, sizeof(sig),
                                         &sl),
                      UA_BAD_INVALID_ARGUMENT);
    n = 256;
    memcpy(out, pki_enc_oaep_sha1_bin, n);
    ck_assert_uint_eq(ua_crypto_rsa_decrypt(&pub, UA_RSA_ENC_OAEP_SHA1, out,
                                            n, &sl),
                      UA_BAD_INVALID_ARGUMENT);
    ua_crypto_key_clear(&pub);
    /* a 1024-bit key loads; 4096 is the top; out of range is refused */
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_rsa1024_der,
                                              sizeof(pki_rsa1024_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_bits(&pub), 1024);
    ua_crypto_key_clear(&pub);
    ck_assert_uint_eq(ua_crypto_key_generate(&pub, 512),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_key_generate(&pub, 8192),
                      UA_BAD_INVALID_ARGUMENT);
    ua_crypto_key_clear(NULL);
}
END_TEST

/*
 * A public key is its modulus and exponent, not wolfSSL's 8.7 KB RsaKey:
 * a channel holds one per peer.  Loading one over a private key lets the
 * private part go (LeakSanitizer sees it otherwise), and the bytes alone
 * verify and encrypt for the private key.
 */
START_TEST(test_key_public_bytes)
{
    struct ua_crypto_key k = { 0 }, pub = { 0 };
    uint8_t              msg[100], sig[512], ct[512];
    size_t               sl, cl, n;

    ck_assert_uint_le(sizeof(struct ua_crypto_key), UA_RSA_MAX_BYTES + 32);
    load_app(&pub);
    ck_assert(ua_crypto_key_is_private(&pub));
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    ck_assert(!ua_crypto_key_is_private(&pub));
    ck_assert_uint_eq(ua_crypto_key_bytes(&pub), 256);
    load_app(&k);
    memset(msg, 0x5a, sizeof(msg));
    ck_assert_uint_eq(ua_crypto_rsa_sign(&k, UA_RSA_SIG_PKCS1_SHA256, msg,
                                         sizeof(msg), sig, sizeof(sig), &sl),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256, msg,
                                           sizeof(msg), sig, sl),
                      UA_GOOD);
    sig[sl - 1] ^= 1;
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256, msg,
                                           sizeof(msg), sig, sl),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA256, msg,
                                            sizeof(msg), ct, sizeof(ct), &cl),
                      UA_GOOD);
    ck_assert_uint_eq(cl, 256);
    ck_assert_uint_eq(ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_OAEP_SHA256, ct,
                                            cl, &n),
                      UA_GOOD);
    ck_assert_uint_eq(n, sizeof(msg));
    ck_assert_mem_eq(ct, msg, n);
    /* the private key's own public half: the same bytes */
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&k, UA_RSA_ENC_OAEP_SHA1, msg,
                                            sizeof(msg), ct, sizeof(ct), &cl),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_OAEP_SHA1, ct, cl,
                                            &n),
                      UA_GOOD);
    ck_assert_mem_eq(ct, msg, sizeof(msg));
    ua_crypto_key_clear(&pub);
    ua_crypto_key_clear(&k);
}
END_TEST

/* PKCS#1 v1.5 signatures are deterministic: ours equal openssl's. */
START_TEST(test_rsa_pkcs1_sign_kat)
{
    struct ua_crypto_key k = { 0 }, pub = { 0 };
    uint8_t              sig[512], msg[1024];
    size_t               sl;

    load_app(&k);
    ck_assert_uint_eq(ua_crypto_rsa_sign(&k, UA_RSA_SIG_PKCS1_SHA256,
                                         pki_msg_bin, sizeof(pki_msg_bin),
                                         sig, sizeof(sig), &sl),
                      UA_GOOD);
    ck_assert_uint_eq(sl, 256);
    ck_assert_mem_eq(sig, pki_sig_pkcs1_sha256_bin, 256);
    ck_assert_uint_eq(ua_crypto_rsa_sign(&k, UA_RSA_SIG_PKCS1_SHA1,
                                         pki_msg_bin, sizeof(pki_msg_bin),
                                         sig, sizeof(sig), &sl),
                      UA_GOOD);
    ck_assert_mem_eq(sig, pki_sig_pkcs1_sha1_bin, 256);
    ck_assert_uint_eq(ua_crypto_rsa_sign(&k, UA_RSA_SIG_PKCS1_SHA256,
                                         pki_msg_bin, sizeof(pki_msg_bin),
                                         sig, 255, &sl),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);

    /* verify with the certificate's public key, through the policy */
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_policy_get(UA_POLICY_BASIC256SHA256)
                          ->asym_verify(&pub, pki_msg_bin,
                                        sizeof(pki_msg_bin),
                                        pki_sig_pkcs1_sha256_bin, 256),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_policy_get(UA_POLICY_BASIC256)
                          ->asym_verify(&pub, pki_msg_bin,
                                        sizeof(pki_msg_bin),
                                        pki_sig_pkcs1_sha1_bin, 256),
                      UA_GOOD);
    /* the wrong hash, a changed message, a changed or short signature */
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA1,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           pki_sig_pkcs1_sha256_bin, 256),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    memcpy(msg, pki_msg_bin, sizeof(msg));
    msg[500] ^= 1;
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256, msg,
                                           sizeof(msg),
                                           pki_sig_pkcs1_sha256_bin, 256),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    memcpy(sig, pki_sig_pkcs1_sha256_bin, 256);
    sig[100] ^= 0x80;
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           sig, 256),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           pki_sig_pkcs1_sha256_bin, 255),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           NULL, 256),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ua_crypto_key_clear(&pub);
    ua_crypto_key_clear(&k);
}
END_TEST

START_TEST(test_rsa_pss)
{
    struct ua_crypto_key    k = { 0 }, pub = { 0 };
    const struct ua_policy *p =
        ua_crypto_policy_get(UA_POLICY_AES256_SHA256_RSAPSS);
    uint8_t                 s1[512], s2[512];
    size_t                  l1, l2;

    load_app(&k);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    /* openssl's signature (salt 32, MGF1-SHA256) verifies */
    ck_assert_uint_eq(p->asym_verify(&pub, pki_msg_bin, sizeof(pki_msg_bin),
                                     pki_sig_pss_sha256_bin, 256),
                      UA_GOOD);
    /* ours verify, and are salted: two differ */
    ck_assert_uint_eq(p->asym_sign(&k, pki_msg_bin, sizeof(pki_msg_bin), s1,
                                   sizeof(s1), &l1),
                      UA_GOOD);
    ck_assert_uint_eq(p->asym_sign(&k, pki_msg_bin, sizeof(pki_msg_bin), s2,
                                   sizeof(s2), &l2),
                      UA_GOOD);
    ck_assert_uint_eq(l1, 256);
    ck_assert_uint_eq(l2, 256);
    ck_assert_mem_ne(s1, s2, 256);
    ck_assert_uint_eq(p->asym_verify(&pub, pki_msg_bin, sizeof(pki_msg_bin),
                                     s1, l1),
                      UA_GOOD);
    ck_assert_uint_eq(p->asym_verify(&pub, pki_msg_bin, sizeof(pki_msg_bin),
                                     s2, l2),
                      UA_GOOD);
    s1[7] ^= 0x10;
    ck_assert_uint_eq(p->asym_verify(&pub, pki_msg_bin, sizeof(pki_msg_bin),
                                     s1, l1),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(p->asym_verify(&pub, pki_msg_bin,
                                     sizeof(pki_msg_bin) - 1, s2, l2),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    /* a PSS signature is no PKCS#1 v1.5 signature, and vice versa */
    ck_assert_uint_eq(ua_crypto_rsa_verify(&pub, UA_RSA_SIG_PKCS1_SHA256,
                                           pki_msg_bin, sizeof(pki_msg_bin),
                                           s2, l2),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ck_assert_uint_eq(p->asym_verify(&pub, pki_msg_bin, sizeof(pki_msg_bin),
                                     pki_sig_pkcs1_sha256_bin, 256),
                      UA_BAD_SECURITY_CHECKS_FAILED);
    ua_crypto_key_clear(&pub);
    ua_crypto_key_clear(&k);
}
END_TEST

/* openssl's ciphertexts, cut in blocks as OPC UA does, decrypt to msg. */
static void
decrypt_vector(const uint8_t *key, size_t key_len, enum ua_rsa_enc a,
               const uint8_t *ct, size_t ct_len, size_t plain_len)
{
    struct ua_crypto_key k = { 0 };
    uint8_t              buf[1024];
    size_t               n;

    ck_assert_uint_eq(ua_crypto_key_load(&k, key, key_len), UA_GOOD);
    ck_assert_uint_le(ct_len, sizeof(buf));
    memcpy(buf, ct, ct_len);
    ck_assert_uint_eq(ua_crypto_rsa_decrypt(&k, a, buf, ct_len, &n), UA_GOOD);
    ck_assert_uint_eq(n, plain_len);
    ck_assert_mem_eq(buf, pki_msg_bin, plain_len);
    ua_crypto_key_clear(&k);
}

START_TEST(test_rsa_decrypt_openssl)
{
    decrypt_vector(pki_app_key_der, sizeof(pki_app_key_der),
                   UA_RSA_ENC_OAEP_SHA1, pki_enc_oaep_sha1_bin,
                   sizeof(pki_enc_oaep_sha1_bin), 2 * 214);
    decrypt_vector(pki_app_key_der, sizeof(pki_app_key_der),
                   UA_RSA_ENC_OAEP_SHA256, pki_enc_oaep_sha256_bin,
                   sizeof(pki_enc_oaep_sha256_bin), 2 * 190);
    decrypt_vector(pki_app_key_der, sizeof(pki_app_key_der),
                   UA_RSA_ENC_PKCS1, pki_enc_pkcs1_bin,
                   sizeof(pki_enc_pkcs1_bin), 2 * 245);
    decrypt_vector(pki_rsa3072_p8_der, sizeof(pki_rsa3072_p8_der),
                   UA_RSA_ENC_OAEP_SHA1, pki_enc_oaep_sha1_3072_bin,
                   sizeof(pki_enc_oaep_sha1_3072_bin), 2 * 342);
}
END_TEST

START_TEST(test_rsa_encrypt_roundtrip)
{
    static const size_t     lens[] = { 1, 189, 190, 214, 215, 428, 500, 1024 };
    struct ua_crypto_key    k = { 0 }, pub = { 0 };
    uint8_t                 ct[2048], buf[2048];
    size_t                  i, n, m;
    unsigned                a;

    load_app(&k);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    for (a = UA_RSA_ENC_PKCS1; a <= UA_RSA_ENC_OAEP_SHA256; a++) {
        for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, a, pki_msg_bin,
                                                    lens[i], ct, sizeof(ct),
                                                    &n),
                              UA_GOOD);
            ck_assert_uint_eq(n, ua_crypto_rsa_cipher_len(a, 256, lens[i]));
            ck_assert_uint_eq(ua_crypto_rsa_decrypt(&k, a, ct, n, &m),
                              UA_GOOD);
            ck_assert_uint_eq(m, lens[i]);
            ck_assert_mem_eq(ct, pki_msg_bin, m);
        }
    }
    /* in place: the buffer holds the plaintext, then the ciphertext */
    memcpy(buf, pki_msg_bin, 500);
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA1, buf,
                                            500, buf, sizeof(buf), &n),
                      UA_GOOD);
    ck_assert_uint_eq(n, 768);
    ck_assert_uint_eq(ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_OAEP_SHA1, buf, n,
                                            &m),
                      UA_GOOD);
    ck_assert_uint_eq(m, 500);
    ck_assert_mem_eq(buf, pki_msg_bin, 500);
    /* OAEP is randomised */
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA1,
                                            pki_msg_bin, 100, ct, 256, &n),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA1,
                                            pki_msg_bin, 100, buf, 256, &n),
                      UA_GOOD);
    ck_assert_mem_ne(ct, buf, 256);
    /* refusals: no room, partial overlap, nothing to encrypt */
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA1,
                                            pki_msg_bin, 215, ct, 511, &n),
                      UA_BAD_ENCODING_LIMITS_EXCEEDED);
    memcpy(buf, pki_msg_bin, 300);
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA1, buf,
                                            300, buf + 10, 1000, &n),
                      UA_BAD_INVALID_ARGUMENT);
    ck_assert_uint_eq(ua_crypto_rsa_encrypt(&pub, UA_RSA_ENC_OAEP_SHA1, buf,
                                            0, ct, sizeof(ct), &n),
                      UA_BAD_INVALID_ARGUMENT);
    ua_crypto_key_clear(&pub);
    ua_crypto_key_clear(&k);
}
END_TEST

/*
 * A failing decryption is no oracle: whatever went wrong - a bad block in
 * the middle, the wrong padding scheme, the wrong key, a length that is not
 * whole blocks - the status is the same and no plaintext is left behind.
 */
START_TEST(test_rsa_decrypt_failures)
{
    struct ua_crypto_key k = { 0 }, other = { 0 };
    uint8_t              buf[1024], zero[1024] = { 0 };
    size_t               n = 99;
    ua_status            s[5];
    size_t               len = sizeof(pki_enc_oaep_sha1_bin), i;

    load_app(&k);
    memcpy(buf, pki_enc_oaep_sha1_bin, len);
    buf[256 + 17] ^= 0x01;              /* second block */
    s[0] = ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_OAEP_SHA1, buf, len, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_mem_eq(buf, zero, len);   /* block 1's plaintext wiped too */
    memcpy(buf, pki_enc_pkcs1_bin, len);
    s[1] = ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_OAEP_SHA1, buf, len, &n);
    memcpy(buf, pki_enc_oaep_sha1_bin, len);
    s[2] = ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_PKCS1, buf, len, &n);
    memcpy(buf, pki_enc_oaep_sha1_bin, len);
    s[3] = ua_crypto_rsa_decrypt(&k, UA_RSA_ENC_OAEP_SHA1, buf, len - 1, &n);
    ck_assert_uint_eq(ua_crypto_key_generate(&other, 2048), UA_GOOD);
    memcpy(buf, pki_enc_oaep_sha1_bin, len);        /* the wrong key */
    s[4] = ua_crypto_rsa_decrypt(&other, UA_RSA_ENC_OAEP_SHA1, buf, len, &n);
    for (i = 0; i < 5; i++)
        ck_assert_uint_eq(s[i], UA_BAD_SECURITY_CHECKS_FAILED);
    ua_crypto_key_clear(&other);
    ua_crypto_key_clear(&k);
}
END_TEST

/* Time the RSA operations a handshake costs (printed, not asserted). */
static double
time_op(int what, struct ua_crypto_key *k, struct ua_crypto_key *pub,
        int reps)
{
    uint8_t buf[1024], sig[512];
    size_t  n, m;
    double  t0 = now_ms();
    int     i;

    for (i = 0; i < reps; i++) {
        switch (what) {
        case 0:
            ck_assert_uint_eq(ua_crypto_rsa_sign(k, UA_RSA_SIG_PKCS1_SHA256,
                                                 pki_msg_bin, 200, sig,
                                                 sizeof(sig), &n),
                              UA_GOOD);
            break;
        case 1:
            ck_assert_uint_eq(ua_crypto_rsa_sign(k, UA_RSA_SIG_PKCS1_SHA256,
                                                 pki_msg_bin, 200, sig,
                                                 sizeof(sig), &n),
                              UA_GOOD);
            t0 = now_ms();
            ck_assert_uint_eq(ua_crypto_rsa_verify(pub,
                                                   UA_RSA_SIG_PKCS1_SHA256,
                                                   pki_msg_bin, 200, sig, n),
                              UA_GOOD);
            return now_ms() - t0;
        case 2:
            ck_assert_uint_eq(ua_crypto_rsa_encrypt(pub,
                                                    UA_RSA_ENC_OAEP_SHA1,
                                                    pki_msg_bin, 100, buf,
                                                    sizeof(buf), &n),
                              UA_GOOD);
            break;
        case 3:
            ck_assert_uint_eq(ua_crypto_rsa_encrypt(pub,
                                                    UA_RSA_ENC_OAEP_SHA1,
                                                    pki_msg_bin, 100, buf,
                                                    sizeof(buf), &n),
                              UA_GOOD);
            t0 = now_ms();
            ck_assert_uint_eq(ua_crypto_rsa_decrypt(k, UA_RSA_ENC_OAEP_SHA1,
                                                    buf, n, &m),
                              UA_GOOD);
            return now_ms() - t0;
        }
    }
    return (now_ms() - t0) / reps;
}

START_TEST(test_rsa_generate_and_timing)
{
    struct ua_crypto_key k = { 0 }, pub = { 0 }, g = { 0 };
    uint8_t              sig[512];
    size_t               n;
    double               t0, gen, s2, v2, e2, d2, s3, d3;

    load_app(&k);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_app_der,
                                              sizeof(pki_app_der)),
                      UA_GOOD);
    s2 = time_op(0, &k, &pub, 5);
    v2 = time_op(1, &k, &pub, 1);
    e2 = time_op(2, &k, &pub, 5);
    d2 = time_op(3, &k, &pub, 1);
    ua_crypto_key_clear(&pub);
    ua_crypto_key_clear(&k);
    ck_assert_uint_eq(ua_crypto_key_load(&k, pki_rsa3072_key_pem,
                                         sizeof(pki_rsa3072_key_pem)),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_key_from_cert(&pub, pki_rsa3072_der,
                                              sizeof(pki_rsa3072_der)),
                      UA_GOOD);
    s3 = time_op(0, &k, &pub, 3);
    d3 = time_op(3, &k, &pub, 1);
    ua_crypto_key_clear(&pub);
    ua_crypto_key_clear(&k);

    t0 = now_ms();
    ck_assert_uint_eq(ua_crypto_key_generate(&g, 2048), UA_GOOD);
    gen = now_ms() - t0;
    ck_assert_uint_eq(ua_crypto_key_bits(&g), 2048);
    ck_assert(ua_crypto_key_is_private(&g));
    ck_assert_uint_eq(ua_crypto_rsa_sign(&g, UA_RSA_SIG_PSS_SHA256,
                                         pki_msg_bin, 64, sig, sizeof(sig),
                                         &n),
                      UA_GOOD);
    ck_assert_uint_eq(ua_crypto_rsa_verify(&g, UA_RSA_SIG_PSS_SHA256,
                                           pki_msg_bin, 64, sig, n),
                      UA_GOOD);
    ua_crypto_key_clear(&g);
    fprintf(stderr,
            "check_crypto: RSA-2048 sign %.2f ms, verify %.3f ms, "
            "OAEP encrypt %.3f ms, decrypt %.2f ms, keygen %.0f ms; "
            "RSA-3072 sign %.2f ms, decrypt %.2f ms\n",
            s2, v2, e2, d2, gen, s3, d3);
}
END_TEST

static Suite *
crypto_suite(void)
{
    Suite *s = suite_create("crypto");
    TCase *tc;

    tc = tcase_create("policies");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_policy_table);
    suite_add_tcase(s, tc);

    tc = tcase_create("pure");
    tcase_add_test(tc, test_memeq_wipe);
    tcase_add_test(tc, test_padding_len);
    tcase_add_test(tc, test_padding_write_check);
    tcase_add_test(tc, test_padding_fuzz);
    tcase_add_test(tc, test_max_body);
    tcase_add_test(tc, test_rsa_sizes);
    suite_add_tcase(s, tc);

    tc = tcase_create("hashes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_hash_kat);
    tcase_add_test(tc, test_hmac_kat);
    tcase_add_test(tc, test_p_sha256_tls12_vector);
    tcase_add_test(tc, test_pbkdf2_steps);
    tcase_add_test(tc, test_p_hash_openssl);
    tcase_add_test(tc, test_channel_keys);
    suite_add_tcase(s, tc);

    tc = tcase_create("cipher");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_aes_cbc_nist);
    tcase_add_test(tc, test_cipher_hmac);
    tcase_add_test(tc, test_cipher_hmac_lengths);
    tcase_add_test(tc, test_cipher_hmac_reuse);
    tcase_add_test(tc, test_cipher_chunk_roundtrip);
    tcase_add_test(tc, test_cipher_refuses);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_random_fork);
    suite_add_tcase(s, tc);

    /* RSA private operations take milliseconds each, key generation up to
     * a second: a longer timeout (stretched again under SAN=1). */
    tc = tcase_create("rsa");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_key_load);
    tcase_add_test(tc, test_key_public_bytes);
    tcase_add_test(tc, test_rsa_pkcs1_sign_kat);
    tcase_add_test(tc, test_rsa_pss);
    tcase_add_test(tc, test_rsa_decrypt_openssl);
    tcase_add_test(tc, test_rsa_encrypt_roundtrip);
    tcase_add_test(tc, test_rsa_decrypt_failures);
    tcase_add_test(tc, test_rsa_generate_and_timing);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(crypto_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
