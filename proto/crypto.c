/*
 * proto/crypto.c: the security policy table of OPC UA Part 7 and the pure
 * helpers of proto/crypto.h - constant-time comparison, the padding footer
 * of Part 6 §6.7.2.5, chunk and RSA block sizes, key derivation splitting.
 *
 * The policies' operations are thin adapters onto the primitives of
 * proto/crypto_wolf.c with the policy's algorithm filled in, so the table
 * (the spec's facts) stays free of wolfSSL.  No state, no I/O.
 */
#include "crypto.h"

#include <string.h>

#include "status_gen.h"

static ua_status ua_crypto_sign_pkcs1_sha1(struct ua_crypto_key *k,
    const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
    size_t *sig_len);
static ua_status ua_crypto_sign_pkcs1_sha256(struct ua_crypto_key *k,
    const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
    size_t *sig_len);
static ua_status ua_crypto_sign_pss_sha256(struct ua_crypto_key *k,
    const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
    size_t *sig_len);
static ua_status ua_crypto_verify_pkcs1_sha1(struct ua_crypto_key *k,
    const uint8_t *data, size_t len, const uint8_t *sig, size_t sig_len);
static ua_status ua_crypto_verify_pkcs1_sha256(struct ua_crypto_key *k,
    const uint8_t *data, size_t len, const uint8_t *sig, size_t sig_len);
static ua_status ua_crypto_verify_pss_sha256(struct ua_crypto_key *k,
    const uint8_t *data, size_t len, const uint8_t *sig, size_t sig_len);
static ua_status ua_crypto_encrypt_pkcs1(struct ua_crypto_key *k,
    const uint8_t *in, size_t len, uint8_t *out, size_t cap,
    size_t *out_len);
static ua_status ua_crypto_encrypt_oaep_sha1(struct ua_crypto_key *k,
    const uint8_t *in, size_t len, uint8_t *out, size_t cap,
    size_t *out_len);
static ua_status ua_crypto_encrypt_oaep_sha256(struct ua_crypto_key *k,
    const uint8_t *in, size_t len, uint8_t *out, size_t cap,
    size_t *out_len);
static ua_status ua_crypto_decrypt_pkcs1(struct ua_crypto_key *k,
    uint8_t *buf, size_t len, size_t *out_len);
static ua_status ua_crypto_decrypt_oaep_sha1(struct ua_crypto_key *k,
    uint8_t *buf, size_t len, size_t *out_len);
static ua_status ua_crypto_decrypt_oaep_sha256(struct ua_crypto_key *k,
    uint8_t *buf, size_t len, size_t *out_len);
static ua_status ua_crypto_derive_p_sha1(const uint8_t *secret,
    size_t secret_len, const uint8_t *seed, size_t seed_len, uint8_t *out,
    size_t out_len);
static ua_status ua_crypto_derive_p_sha256(const uint8_t *secret,
    size_t secret_len, const uint8_t *seed, size_t seed_len, uint8_t *out,
    size_t out_len);

/* Part 7 algorithm URIs. */
#define UA_ALG_RSA_SHA1     "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
#define UA_ALG_RSA_SHA256   "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
#define UA_ALG_RSA_PSS_SHA256 \
    "http://opcfoundation.org/UA/security/rsa-pss-sha2-256"
#define UA_ALG_RSA_15       "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
#define UA_ALG_RSA_OAEP     "http://www.w3.org/2001/04/xmlenc#rsa-oaep"
#define UA_ALG_RSA_OAEP_SHA256 \
    "http://opcfoundation.org/UA/security/rsa-oaep-sha2-256"

/* The operations every RSA policy shares: per-chunk symmetric crypto. */
#define UA_CRYPTO_SYM_OPS \
    .sym_sign = ua_crypto_cipher_sign, \
    .sym_verify = ua_crypto_cipher_verify, \
    .sym_encrypt = ua_crypto_cipher_encrypt, \
    .sym_decrypt = ua_crypto_cipher_decrypt

/*
 * Part 7 (1.05) security policy facets, indexed by enum ua_policy_id.
 * Symmetric encryption is AES-CBC, symmetric signatures HMAC, key
 * derivation P_hash, all with the hash in sym_hash.
 */
static const struct ua_policy ua_crypto_policies[UA_POLICY_COUNT] = {
    [UA_POLICY_NONE] = {
        .uri = UA_POLICY_URI_BASE "None",
        .name = "None",
        .id = UA_POLICY_NONE,
        .enabled_by_default = true,
    },
    /* Deprecated since 1.04: SHA-1 and RSA PKCS#1 v1.5 encryption (an
     * oracle, CVE-2024-42512). */
    [UA_POLICY_BASIC128RSA15] = {
        .uri = UA_POLICY_URI_BASE "Basic128Rsa15",
        .name = "Basic128Rsa15",
        .id = UA_POLICY_BASIC128RSA15,
        .deprecated = true,
        .enabled_by_default = false,
        .asym_sig_uri = UA_ALG_RSA_SHA1,
        .asym_enc_uri = UA_ALG_RSA_15,
        .asym_sig = UA_RSA_SIG_PKCS1_SHA1,
        .asym_enc = UA_RSA_ENC_PKCS1,
        .sym_hash = UA_HASH_SHA1,
        .sym_sig_key_len = 16,
        .sym_enc_key_len = 16,
        .sym_block_len = 16,
        .sym_sig_len = UA_SHA1_LEN,
        .nonce_len = 16,
        .min_key_bits = 1024,
        .max_key_bits = 2048,
        .cert_min_hash = UA_HASH_SHA1,
        .asym_sign = ua_crypto_sign_pkcs1_sha1,
        .asym_verify = ua_crypto_verify_pkcs1_sha1,
        .asym_encrypt = ua_crypto_encrypt_pkcs1,
        .asym_decrypt = ua_crypto_decrypt_pkcs1,
        UA_CRYPTO_SYM_OPS,
        .derive = ua_crypto_derive_p_sha1,
    },
    [UA_POLICY_BASIC256] = {
        .uri = UA_POLICY_URI_BASE "Basic256",
        .name = "Basic256",
        .id = UA_POLICY_BASIC256,
        .deprecated = true,
        .enabled_by_default = false,
        .asym_sig_uri = UA_ALG_RSA_SHA1,
        .asym_enc_uri = UA_ALG_RSA_OAEP,
        .asym_sig = UA_RSA_SIG_PKCS1_SHA1,
        .asym_enc = UA_RSA_ENC_OAEP_SHA1,
        .sym_hash = UA_HASH_SHA1,
        .sym_sig_key_len = 24,
        .sym_enc_key_len = 32,
        .sym_block_len = 16,
        .sym_sig_len = UA_SHA1_LEN,
        .nonce_len = 32,
        .min_key_bits = 1024,
        .max_key_bits = 2048,
        .cert_min_hash = UA_HASH_SHA1,
        .asym_sign = ua_crypto_sign_pkcs1_sha1,
        .asym_verify = ua_crypto_verify_pkcs1_sha1,
        .asym_encrypt = ua_crypto_encrypt_oaep_sha1,
        .asym_decrypt = ua_crypto_decrypt_oaep_sha1,
        UA_CRYPTO_SYM_OPS,
        .derive = ua_crypto_derive_p_sha1,
    },
    [UA_POLICY_BASIC256SHA256] = {
        .uri = UA_POLICY_URI_BASE "Basic256Sha256",
        .name = "Basic256Sha256",
        .id = UA_POLICY_BASIC256SHA256,
        .enabled_by_default = true,
        .asym_sig_uri = UA_ALG_RSA_SHA256,
        .asym_enc_uri = UA_ALG_RSA_OAEP,
        .asym_sig = UA_RSA_SIG_PKCS1_SHA256,
        .asym_enc = UA_RSA_ENC_OAEP_SHA1,
        .sym_hash = UA_HASH_SHA256,
        .sym_sig_key_len = 32,
        .sym_enc_key_len = 32,
        .sym_block_len = 16,
        .sym_sig_len = UA_SHA256_LEN,
        .nonce_len = 32,
        .min_key_bits = 2048,
        .max_key_bits = 4096,
        .cert_min_hash = UA_HASH_SHA256,
        .asym_sign = ua_crypto_sign_pkcs1_sha256,
        .asym_verify = ua_crypto_verify_pkcs1_sha256,
        .asym_encrypt = ua_crypto_encrypt_oaep_sha1,
        .asym_decrypt = ua_crypto_decrypt_oaep_sha1,
        UA_CRYPTO_SYM_OPS,
        .derive = ua_crypto_derive_p_sha256,
    },
    [UA_POLICY_AES128_SHA256_RSAOAEP] = {
        .uri = UA_POLICY_URI_BASE "Aes128_Sha256_RsaOaep",
        .name = "Aes128_Sha256_RsaOaep",
        .id = UA_POLICY_AES128_SHA256_RSAOAEP,
        .enabled_by_default = true,
        .asym_sig_uri = UA_ALG_RSA_SHA256,
        .asym_enc_uri = UA_ALG_RSA_OAEP,
        .asym_sig = UA_RSA_SIG_PKCS1_SHA256,
        .asym_enc = UA_RSA_ENC_OAEP_SHA1,
        .sym_hash = UA_HASH_SHA256,
        .sym_sig_key_len = 32,
        .sym_enc_key_len = 16,
        .sym_block_len = 16,
        .sym_sig_len = UA_SHA256_LEN,
        .nonce_len = 32,
        .min_key_bits = 2048,
        .max_key_bits = 4096,
        .cert_min_hash = UA_HASH_SHA256,
        .asym_sign = ua_crypto_sign_pkcs1_sha256,
        .asym_verify = ua_crypto_verify_pkcs1_sha256,
        .asym_encrypt = ua_crypto_encrypt_oaep_sha1,
        .asym_decrypt = ua_crypto_decrypt_oaep_sha1,
        UA_CRYPTO_SYM_OPS,
        .derive = ua_crypto_derive_p_sha256,
    },
    [UA_POLICY_AES256_SHA256_RSAPSS] = {
        .uri = UA_POLICY_URI_BASE "Aes256_Sha256_RsaPss",
        .name = "Aes256_Sha256_RsaPss",
        .id = UA_POLICY_AES256_SHA256_RSAPSS,
        .enabled_by_default = true,
        .asym_sig_uri = UA_ALG_RSA_PSS_SHA256,
        .asym_enc_uri = UA_ALG_RSA_OAEP_SHA256,
        .asym_sig = UA_RSA_SIG_PSS_SHA256,
        .asym_enc = UA_RSA_ENC_OAEP_SHA256,
        .sym_hash = UA_HASH_SHA256,
        .sym_sig_key_len = 32,
        .sym_enc_key_len = 32,
        .sym_block_len = 16,
        .sym_sig_len = UA_SHA256_LEN,
        .nonce_len = 32,
        .min_key_bits = 2048,
        .max_key_bits = 4096,
        .cert_min_hash = UA_HASH_SHA256,
        .asym_sign = ua_crypto_sign_pss_sha256,
        .asym_verify = ua_crypto_verify_pss_sha256,
        .asym_encrypt = ua_crypto_encrypt_oaep_sha256,
        .asym_decrypt = ua_crypto_decrypt_oaep_sha256,
        UA_CRYPTO_SYM_OPS,
        .derive = ua_crypto_derive_p_sha256,
    },
};

/* ------------------------------------------------------------ policies */

const struct ua_policy *
ua_crypto_policy_find(const uint8_t *uri, size_t len)
{
    size_t i;

    if (uri == NULL)
        return NULL;
    for (i = 0; i < UA_POLICY_COUNT; i++) {
        const char *u = ua_crypto_policies[i].uri;

        if (strlen(u) == len && memcmp(u, uri, len) == 0)
            return &ua_crypto_policies[i];
    }
    return NULL;
}

const struct ua_policy *
ua_crypto_policy_get(unsigned id)
{
    return id < UA_POLICY_COUNT ? &ua_crypto_policies[id] : NULL;
}

bool
ua_crypto_policy_key_ok(const struct ua_policy *p, unsigned bits)
{
    if (ua_crypto_policy_is_none(p))
        return false;
    return bits >= p->min_key_bits && bits <= p->max_key_bits;
}

/* ------------------------------------------------------------ adapters */

static ua_status
ua_crypto_sign_pkcs1_sha1(struct ua_crypto_key *k, const uint8_t *data,
                          size_t len, uint8_t *sig, size_t cap,
                          size_t *sig_len)
{
    return ua_crypto_rsa_sign(k, UA_RSA_SIG_PKCS1_SHA1, data, len, sig, cap,
                              sig_len);
}

static ua_status
ua_crypto_sign_pkcs1_sha256(struct ua_crypto_key *k, const uint8_t *data,
                            size_t len, uint8_t *sig, size_t cap,
                            size_t *sig_len)
{
    return ua_crypto_rsa_sign(k, UA_RSA_SIG_PKCS1_SHA256, data, len, sig,
                              cap, sig_len);
}

static ua_status
ua_crypto_sign_pss_sha256(struct ua_crypto_key *k, const uint8_t *data,
                          size_t len, uint8_t *sig, size_t cap,
                          size_t *sig_len)
{
    return ua_crypto_rsa_sign(k, UA_RSA_SIG_PSS_SHA256, data, len, sig, cap,
                              sig_len);
}

static ua_status
ua_crypto_verify_pkcs1_sha1(struct ua_crypto_key *k, const uint8_t *data,
                            size_t len, const uint8_t *sig, size_t sig_len)
{
    return ua_crypto_rsa_verify(k, UA_RSA_SIG_PKCS1_SHA1, data, len, sig,
                                sig_len);
}

static ua_status
ua_crypto_verify_pkcs1_sha256(struct ua_crypto_key *k, const uint8_t *data,
                              size_t len, const uint8_t *sig, size_t sig_len)
{
    return ua_crypto_rsa_verify(k, UA_RSA_SIG_PKCS1_SHA256, data, len, sig,
                                sig_len);
}

static ua_status
ua_crypto_verify_pss_sha256(struct ua_crypto_key *k, const uint8_t *data,
                            size_t len, const uint8_t *sig, size_t sig_len)
{
    return ua_crypto_rsa_verify(k, UA_RSA_SIG_PSS_SHA256, data, len, sig,
                                sig_len);
}

static ua_status
ua_crypto_encrypt_pkcs1(struct ua_crypto_key *k, const uint8_t *in,
                        size_t len, uint8_t *out, size_t cap,
                        size_t *out_len)
{
    return ua_crypto_rsa_encrypt(k, UA_RSA_ENC_PKCS1, in, len, out, cap,
                                 out_len);
}

static ua_status
ua_crypto_encrypt_oaep_sha1(struct ua_crypto_key *k, const uint8_t *in,
                            size_t len, uint8_t *out, size_t cap,
                            size_t *out_len)
{
    return ua_crypto_rsa_encrypt(k, UA_RSA_ENC_OAEP_SHA1, in, len, out, cap,
                                 out_len);
}

static ua_status
ua_crypto_encrypt_oaep_sha256(struct ua_crypto_key *k, const uint8_t *in,
                              size_t len, uint8_t *out, size_t cap,
                              size_t *out_len)
{
    return ua_crypto_rsa_encrypt(k, UA_RSA_ENC_OAEP_SHA256, in, len, out,
                                 cap, out_len);
}

static ua_status
ua_crypto_decrypt_pkcs1(struct ua_crypto_key *k, uint8_t *buf, size_t len,
                        size_t *out_len)
{
    return ua_crypto_rsa_decrypt(k, UA_RSA_ENC_PKCS1, buf, len, out_len);
}

static ua_status
ua_crypto_decrypt_oaep_sha1(struct ua_crypto_key *k, uint8_t *buf,
                            size_t len, size_t *out_len)
{
    return ua_crypto_rsa_decrypt(k, UA_RSA_ENC_OAEP_SHA1, buf, len,
                                 out_len);
}

static ua_status
ua_crypto_decrypt_oaep_sha256(struct ua_crypto_key *k, uint8_t *buf,
                              size_t len, size_t *out_len)
{
    return ua_crypto_rsa_decrypt(k, UA_RSA_ENC_OAEP_SHA256, buf, len,
                                 out_len);
}

static ua_status
ua_crypto_derive_p_sha1(const uint8_t *secret, size_t secret_len,
                        const uint8_t *seed, size_t seed_len, uint8_t *out,
                        size_t out_len)
{
    return ua_crypto_p_hash(UA_HASH_SHA1, secret, secret_len, seed,
                            seed_len, out, out_len);
}

static ua_status
ua_crypto_derive_p_sha256(const uint8_t *secret, size_t secret_len,
                          const uint8_t *seed, size_t seed_len,
                          uint8_t *out, size_t out_len)
{
    return ua_crypto_p_hash(UA_HASH_SHA256, secret, secret_len, seed,
                            seed_len, out, out_len);
}

/* ------------------------------------------------------------ pure */

bool
ua_crypto_memeq(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a;
    const volatile uint8_t *y = b;
    uint8_t                 d = 0;
    size_t                  i;

    for (i = 0; i < n; i++)
        d |= (uint8_t)(x[i] ^ y[i]);
    return d == 0;
}

void
ua_crypto_wipe(void *p, size_t n)
{
    volatile uint8_t *q = p;

    while (n--)
        *q++ = 0;
}

size_t
ua_crypto_hash_len(enum ua_hash h)
{
    switch (h) {
    case UA_HASH_SHA1:
        return UA_SHA1_LEN;
    case UA_HASH_SHA256:
        return UA_SHA256_LEN;
    case UA_HASH_SHA384:
        return 48;
    case UA_HASH_SHA512:
        return 64;
    case UA_HASH_NONE:
        break;
    }
    return 0;
}

size_t
ua_crypto_rsa_overhead(enum ua_rsa_enc e)
{
    switch (e) {
    case UA_RSA_ENC_PKCS1:
        return 11;                      /* RFC 8017 §7.2.1 */
    case UA_RSA_ENC_OAEP_SHA1:
        return 2 * UA_SHA1_LEN + 2;     /* RFC 8017 §7.1.1: 2 hLen + 2 */
    case UA_RSA_ENC_OAEP_SHA256:
        return 2 * UA_SHA256_LEN + 2;
    }
    return 0;
}

size_t
ua_crypto_rsa_plain_block(enum ua_rsa_enc e, size_t key_bytes)
{
    size_t o = ua_crypto_rsa_overhead(e);

    return o != 0 && key_bytes > o ? key_bytes - o : 0;
}

size_t
ua_crypto_rsa_cipher_len(enum ua_rsa_enc e, size_t key_bytes,
                         size_t plain_len)
{
    size_t pb = ua_crypto_rsa_plain_block(e, key_bytes);

    if (pb == 0)
        return 0;
    return (plain_len / pb + (plain_len % pb != 0)) * key_bytes;
}

/* ------------------------------------------------------------ sym keys */

ua_status
ua_crypto_sym_keys_derive(const struct ua_policy *p, const uint8_t *secret,
                          size_t secret_len, const uint8_t *seed,
                          size_t seed_len, struct ua_sym_keys *out)
{
    uint8_t   buf[2 * UA_SYM_KEY_MAX + UA_SYM_BLOCK_MAX];
    size_t    n;
    ua_status rc;

    if (ua_crypto_policy_is_none(p) || out == NULL || p->derive == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    n = (size_t)p->sym_sig_key_len + p->sym_enc_key_len + p->sym_block_len;
    rc = p->derive(secret, secret_len, seed, seed_len, buf, n);
    if (rc != UA_GOOD) {
        ua_crypto_wipe(buf, sizeof(buf));
        return rc;
    }
    memset(out, 0, sizeof(*out));
    out->sign_len = p->sym_sig_key_len;
    out->enc_len = p->sym_enc_key_len;
    out->iv_len = p->sym_block_len;
    memcpy(out->sign, buf, out->sign_len);
    memcpy(out->enc, buf + out->sign_len, out->enc_len);
    memcpy(out->iv, buf + out->sign_len + out->enc_len, out->iv_len);
    ua_crypto_wipe(buf, sizeof(buf));
    return UA_GOOD;
}

ua_status
ua_crypto_channel_keys(const struct ua_policy *p,
                       const uint8_t *client_nonce, size_t cn_len,
                       const uint8_t *server_nonce, size_t sn_len,
                       struct ua_sym_keys *client,
                       struct ua_sym_keys *server)
{
    ua_status rc;

    if (client != NULL) {
        rc = ua_crypto_sym_keys_derive(p, server_nonce, sn_len, client_nonce,
                                       cn_len, client);
        if (rc != UA_GOOD)
            return rc;
    }
    if (server != NULL) {
        rc = ua_crypto_sym_keys_derive(p, client_nonce, cn_len, server_nonce,
                                       sn_len, server);
        if (rc != UA_GOOD) {
            if (client != NULL)
                ua_crypto_sym_keys_clear(client);
            return rc;
        }
    }
    return UA_GOOD;
}

void
ua_crypto_sym_keys_clear(struct ua_sym_keys *k)
{
    if (k != NULL)
        ua_crypto_wipe(k, sizeof(*k));
}

/* ------------------------------------------------------------ padding */

bool
ua_crypto_padding_extra(unsigned key_bits)
{
    return key_bits > 2048;
}

size_t
ua_crypto_padding_len(size_t plain_len, size_t sig_len, size_t block,
                      bool extra)
{
    size_t r;

    if (block == 0)
        return 0;
    r = (plain_len + sig_len + 1 + (extra ? 1 : 0)) % block;
    return r == 0 ? 0 : block - r;
}

size_t
ua_crypto_padding_write(uint8_t *p, size_t n, bool extra)
{
    uint8_t lo = (uint8_t)(n & 0xff);

    memset(p, lo, n + 1);               /* PaddingSize, then the Padding */
    if (!extra)
        return n + 1;
    p[n + 1] = (uint8_t)(n >> 8);       /* ExtraPaddingSize */
    return n + 2;
}

ua_status
ua_crypto_padding_check(const uint8_t *p, size_t len, bool extra,
                        size_t *footer_len)
{
    size_t  sizes = extra ? 2 : 1;
    size_t  n, i;
    uint8_t lo, bad = 0;

    if (p == NULL || footer_len == NULL || len < sizes)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    if (extra) {
        lo = p[len - 2];
        n = ((size_t)p[len - 1] << 8) | lo;
    } else {
        lo = p[len - 1];
        n = lo;
    }
    if (n > len - sizes)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    /* PaddingSize and the n Padding bytes all hold the low byte. */
    for (i = len - sizes - n; i < len - sizes + 1; i++)
        bad |= (uint8_t)(p[i] ^ lo);
    if (bad != 0)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    *footer_len = n + sizes;
    return UA_GOOD;
}

size_t
ua_crypto_max_body(size_t chunk_size, size_t header_len, size_t sig_len,
                   size_t plain_block, size_t cipher_block, bool extra)
{
    size_t blocks, room, fixed;

    if (plain_block == 0 || cipher_block == 0 || chunk_size <= header_len)
        return 0;
    blocks = (chunk_size - header_len) / cipher_block;
    room = blocks * plain_block;
    fixed = 8 + sig_len + 1 + (extra ? 1 : 0);  /* sequence header .. */
    return room > fixed ? room - fixed : 0;
}
