/*
 * proto/crypto_wolf.c: proto/crypto.h and proto/crypto_int.h on wolfSSL
 * 5.5.4 as Debian 12 builds it.  The only file of the project that includes
 * wolfSSL (docs/style.md §1; tests/check-deps.sh enforces it).
 *
 * <wolfssl/options.h> is the first include of this file, before libc and
 * before our own header: without it the other wolfSSL headers describe a
 * different build (sizeof(RsaKey) 6272 instead of 8696) and the compiler
 * prints the "harden options" #warning, which the Makefile's -Werror=cpp
 * makes fatal (docs/dependencies.md gotcha 1).
 *
 * Process state, the one exception to proto/'s "no mutable globals":
 *   - ua_wolf_rng: this process's WC_RNG, made by ua_crypto_init() and made
 *     again whenever getpid() changed (a fork copied it;
 *     docs/dependencies.md gotcha 3).  Private keys hold a pointer to it
 *     (blinding, docs/dependencies.md gotcha 2); it keeps its address, so
 *     the pointer survives a re-seed.
 *   - ua_wolf_when: the clock wolfSSL's certificate code sees during one
 *     CertManager call (wc_SetTimeCb), reset after every call.
 * One thread per process uses this file (docs/architecture.md §1).
 *
 * The opaque storage of crypto.h (struct ua_crypto_key, struct ua_cipher)
 * holds the structs below; the static_asserts keep the sizes honest.
 */
#include <wolfssl/options.h>
#include <wolfssl/wolfcrypt/settings.h>
#include <wolfssl/wolfcrypt/aes.h>
#include <wolfssl/wolfcrypt/asn.h>
#include <wolfssl/wolfcrypt/asn_public.h>
#include <wolfssl/wolfcrypt/error-crypt.h>
#include <wolfssl/wolfcrypt/hash.h>
#include <wolfssl/wolfcrypt/hmac.h>
#include <wolfssl/wolfcrypt/pwdbased.h>
#include <wolfssl/wolfcrypt/random.h>
#include <wolfssl/wolfcrypt/rsa.h>
#include <wolfssl/wolfcrypt/signature.h>
#include <wolfssl/ssl.h>

#include "crypto.h"

#include <assert.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cert.h"
#include "crypto_int.h"
#include "status_gen.h"

struct ua_wolf_key;
struct ua_wolf_cipher;

static WC_RNG *ua_wolf_rng(void);
static time_t ua_wolf_time_cb(time_t *t);
static void ua_wolf_time_set(int64_t when);
static void ua_wolf_time_reset(void);
static int ua_wolf_hash_type(enum ua_hash h);
static int ua_wolf_hmac_type(enum ua_hash h);
static struct ua_wolf_key *ua_wolf_key(struct ua_crypto_key *k);
static const struct ua_wolf_key *ua_wolf_key_c(const struct ua_crypto_key *k);
static ua_status ua_wolf_key_public(struct ua_wolf_key *w, const byte *n,
                                    word32 nsz, const byte *e, word32 esz);
static ua_status ua_wolf_key_private(struct ua_wolf_key *w, RsaKey *rsa);
static int ua_wolf_pub(const struct ua_wolf_key *w, RsaKey *tmp,
                       RsaKey **use);
static void ua_wolf_pub_done(RsaKey *tmp, RsaKey *use);
static ua_status ua_wolf_rsa_public_from_dc(RsaKey *rsa, DecodedCert *dc);
static struct ua_wolf_cipher *ua_wolf_cipher(struct ua_cipher *c);
static int ua_wolf_cm_rc(int rc);
static enum ua_hash ua_wolf_sig_hash(word32 oid);
static bool ua_wolf_inside(const uint8_t *p, size_t n, const uint8_t *der,
                           size_t len);

#define UA_WOLF_KEY_MAGIC    0x75614b59u   /* "uaKY" */
#define UA_WOLF_CIPHER_MAGIC 0x75614359u   /* "uaCY" */

/* The largest public exponent kept (65537 takes 3 bytes). */
#define UA_WOLF_E_MAX 8

/*
 * A key in struct ua_crypto_key's storage.  Every key keeps its public
 * half as bytes (modulus and exponent, big-endian, no leading zeros): a
 * public key is nothing more, so the peer key a channel holds takes ~0.5 KB
 * instead of wolfSSL's 8.7 KB RsaKey, and a public-key operation builds
 * the RsaKey on the stack (wc_RsaPublicKeyDecodeRaw: ~13k instructions
 * against ~460k for the operation).  A private key also owns a heap RsaKey
 * with its CRT parameters, made when it is loaded or generated (a cold
 * path: the worker loads its key once) and freed by ua_crypto_key_clear.
 */
struct ua_wolf_key {
    uint32_t magic;         /* UA_WOLF_KEY_MAGIC while the key is live */
    uint8_t  priv;          /* rsa holds the private part */
    uint8_t  e_len;
    uint16_t n_len;         /* modulus bytes: the key's size */
    RsaKey  *rsa;           /* private keys only (heap), else NULL */
    uint8_t  n[UA_RSA_MAX_BYTES];
    uint8_t  e[UA_WOLF_E_MAX];
};

static_assert(sizeof(struct ua_wolf_key) <= UA_CRYPTO_KEY_SIZE,
              "UA_CRYPTO_KEY_SIZE too small");
static_assert(_Alignof(struct ua_wolf_key) <= 16, "key alignment");

/* A SHA-1 or SHA-256 state (the hashes of the symmetric policies). */
union ua_wolf_hs {
    wc_Sha    sha1;
    wc_Sha256 sha256;
};

/* One direction of a token's symmetric state.  HMAC runs on two hash
 * states keyed once: inner has hashed K ^ ipad, outer K ^ opad (a block
 * each); a message copies them into work, so it costs neither block. */
struct ua_wolf_dir {
    Aes              aes;   /* AES_ENCRYPTION (send) or AES_DECRYPTION */
    int              mac;   /* WC_SHA or WC_SHA256 */
    union ua_wolf_hs inner, outer, work;
    uint8_t          iv[UA_SYM_BLOCK_MAX];
};

struct ua_wolf_cipher {
    uint32_t                magic;
    const struct ua_policy *policy;
    struct ua_wolf_dir      send;   /* local keys */
    struct ua_wolf_dir      recv;   /* remote keys */
};

static_assert(sizeof(struct ua_wolf_cipher) <= UA_CIPHER_SIZE,
              "UA_CIPHER_SIZE too small for this wolfSSL");
static_assert(_Alignof(struct ua_wolf_cipher) <= 16, "cipher alignment");

#define UA_WOLF_PBKDF2_MAGIC 0x75615042u  /* "uaPB" */

/* A stepped PBKDF2-HMAC-SHA256 in struct ua_pbkdf2's storage. */
struct ua_wolf_pbkdf2 {
    uint32_t  magic;        /* UA_WOLF_PBKDF2_MAGIC while the states live */
    uint32_t  left;         /* iterations still to do */
    uint32_t  out_len;
    wc_Sha256 inner, outer, work;
    uint8_t   u[WC_SHA256_DIGEST_SIZE];     /* U_i */
    uint8_t   t[WC_SHA256_DIGEST_SIZE];     /* U_1 ^ ... ^ U_i */
};

static_assert(sizeof(struct ua_wolf_pbkdf2) <= UA_PBKDF2_STATE_SIZE,
              "UA_PBKDF2_STATE_SIZE too small for this wolfSSL");
static_assert(_Alignof(struct ua_wolf_pbkdf2) <= 16, "pbkdf2 alignment");
static_assert(UA_PBKDF2_STEP_OUT_MAX == WC_SHA256_DIGEST_SIZE,
              "one PBKDF2 block");

static WC_RNG ua_wolf_rng_obj;
static pid_t  ua_wolf_rng_pid;      /* owner of ua_wolf_rng_obj; 0: none */
static bool   ua_wolf_lib;          /* wolfSSL_Init() done */
static time_t ua_wolf_when;
static uint64_t ua_wolf_private_ops;    /* see ua_crypto_private_ops() */
static uint64_t ua_wolf_rsa_ns;         /* see ua_crypto_rsa_cpu_ns() */
static unsigned ua_wolf_rsa_depth;      /* nested timed calls: the outer */
static struct ua_crypto_work ua_wolf_work;  /* see ua_crypto_work() */

/* ------------------------------------------------------------ process */

/* The RNG of this process, made (again) when the pid changed. */
static WC_RNG *
ua_wolf_rng(void)
{
    pid_t pid = getpid();

    if (ua_wolf_rng_pid == pid)
        return &ua_wolf_rng_obj;
    if (ua_wolf_rng_pid != 0)
        wc_FreeRng(&ua_wolf_rng_obj);   /* the parent's copy */
    ua_wolf_rng_pid = 0;
    if (wc_InitRng(&ua_wolf_rng_obj) != 0)
        return NULL;
    ua_wolf_rng_pid = pid;
    return &ua_wolf_rng_obj;
}

ua_status
ua_crypto_init(void)
{
    if (!ua_wolf_lib) {
        if (wolfSSL_Init() != WOLFSSL_SUCCESS)
            return UA_BAD_INTERNAL_ERROR;
        ua_wolf_lib = true;
    }
    return ua_wolf_rng() != NULL ? UA_GOOD : UA_BAD_INTERNAL_ERROR;
}

ua_status
ua_crypto_reseed(void)
{
    if (ua_wolf_rng_pid != 0) {
        wc_FreeRng(&ua_wolf_rng_obj);
        ua_wolf_rng_pid = 0;
    }
    return ua_wolf_rng() != NULL ? UA_GOOD : UA_BAD_INTERNAL_ERROR;
}

void
ua_crypto_cleanup(void)
{
    if (ua_wolf_rng_pid != 0) {
        wc_FreeRng(&ua_wolf_rng_obj);
        ua_wolf_rng_pid = 0;
    }
    if (ua_wolf_lib) {
        wolfSSL_Cleanup();
        ua_wolf_lib = false;
    }
}

uint64_t
ua_crypto_private_ops(void)
{
    return ua_wolf_private_ops;
}

uint64_t
ua_crypto_rsa_cpu_ns(void)
{
    return ua_wolf_rsa_ns;
}

void
ua_crypto_work(struct ua_crypto_work *out)
{
    *out = ua_wolf_work;
    out->rsa_private = ua_wolf_private_ops;
}

/* This thread's CPU time (a syscall, ~0.3 us: only around RSA work). */
static uint64_t
ua_wolf_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Around each RSA operation: its CPU time to ua_wolf_rsa_ns, once
 * when one calls another (decrypt -> decrypt_block). */
static uint64_t
ua_wolf_rsa_begin(void)
{
    return ua_wolf_rsa_depth++ == 0 ? ua_wolf_cpu_ns() : 0;
}

static void
ua_wolf_rsa_end(uint64_t t0)
{
    if (--ua_wolf_rsa_depth == 0)
        ua_wolf_rsa_ns += ua_wolf_cpu_ns() - t0;
}

ua_status
ua_crypto_random(uint8_t *buf, size_t n)
{
    WC_RNG *rng = ua_wolf_rng();

    if (rng == NULL)
        return UA_BAD_INTERNAL_ERROR;
    if (n > UINT32_MAX || (n != 0 && buf == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (n != 0 && wc_RNG_GenerateBlock(rng, buf, (word32)n) != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}

/* ------------------------------------------------------------ hashes */

static int
ua_wolf_hash_type(enum ua_hash h)
{
    switch (h) {
    case UA_HASH_SHA1:
        return WC_HASH_TYPE_SHA;
    case UA_HASH_SHA256:
        return WC_HASH_TYPE_SHA256;
    case UA_HASH_SHA384:
        return WC_HASH_TYPE_SHA384;
    case UA_HASH_SHA512:
        return WC_HASH_TYPE_SHA512;
    case UA_HASH_NONE:
        break;
    }
    return WC_HASH_TYPE_NONE;
}

static int
ua_wolf_hmac_type(enum ua_hash h)
{
    switch (h) {
    case UA_HASH_SHA1:
        return WC_SHA;
    case UA_HASH_SHA256:
        return WC_SHA256;
    default:
        return -1;
    }
}

ua_status
ua_crypto_hash(enum ua_hash h, const uint8_t *data, size_t len, uint8_t *out)
{
    int    t = ua_wolf_hash_type(h);
    size_t n = ua_crypto_hash_len(h);

    if (t == WC_HASH_TYPE_NONE || out == NULL || len > UINT32_MAX
        || (len != 0 && data == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (wc_Hash((enum wc_HashType)t, data, (word32)len, out, (word32)n) != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}

ua_status
ua_crypto_pbkdf2(const uint8_t *pw, size_t pw_len, const uint8_t *salt,
                 size_t salt_len, uint32_t iterations, uint8_t *out,
                 size_t out_len)
{
    static const uint8_t empty[1] = { 0 };

    if (salt == NULL || salt_len == 0 || salt_len > UA_PBKDF2_SALT_MAX
        || iterations == 0 || iterations > UA_PBKDF2_ITER_MAX
        || out == NULL || out_len == 0 || out_len > 64
        || pw_len > UA_PBKDF2_PASSWORD_MAX || (pw_len != 0 && pw == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (wc_PBKDF2(out, pw_len != 0 ? pw : empty, (int)pw_len, salt,
                  (int)salt_len, (int)iterations, (int)out_len, WC_SHA256)
        != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}

/* U = HMAC(U) on the keyed states of a stepped PBKDF2. */
static int
ua_wolf_pbkdf2_mac(struct ua_wolf_pbkdf2 *w, const uint8_t *data,
                   word32 len)
{
    if (wc_Sha256Copy(&w->inner, &w->work) != 0
        || wc_Sha256Update(&w->work, data, len) != 0
        || wc_Sha256Final(&w->work, w->u) != 0
        || wc_Sha256Copy(&w->outer, &w->work) != 0
        || wc_Sha256Update(&w->work, w->u, sizeof(w->u)) != 0
        || wc_Sha256Final(&w->work, w->u) != 0)
        return -1;
    return 0;
}

ua_status
ua_crypto_pbkdf2_init(struct ua_pbkdf2 *p, const uint8_t *pw, size_t pw_len,
                      const uint8_t *salt, size_t salt_len,
                      uint32_t iterations, size_t out_len)
{
    struct ua_wolf_pbkdf2 *w;
    uint8_t                key[WC_SHA256_DIGEST_SIZE];
    uint8_t                pad[WC_SHA256_BLOCK_SIZE];
    uint8_t                blk[UA_PBKDF2_SALT_MAX + 4];
    const uint8_t         *k = pw;
    size_t                 klen = pw_len;
    int                    rc = -1;

    if (p == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    memset(p, 0, sizeof(*p));
    w = (struct ua_wolf_pbkdf2 *)(void *)p->opaque;
    if (salt == NULL || salt_len == 0 || salt_len > UA_PBKDF2_SALT_MAX
        || iterations == 0 || iterations > UA_PBKDF2_ITER_MAX
        || out_len == 0 || out_len > UA_PBKDF2_STEP_OUT_MAX
        || pw_len > UA_PBKDF2_PASSWORD_MAX || (pw_len != 0 && pw == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (wc_InitSha256_ex(&w->inner, NULL, INVALID_DEVID) != 0)
        return UA_BAD_INTERNAL_ERROR;
    if (wc_InitSha256_ex(&w->outer, NULL, INVALID_DEVID) != 0) {
        wc_Sha256Free(&w->inner);
        return UA_BAD_INTERNAL_ERROR;
    }
    if (wc_InitSha256_ex(&w->work, NULL, INVALID_DEVID) != 0) {
        wc_Sha256Free(&w->outer);
        wc_Sha256Free(&w->inner);
        return UA_BAD_INTERNAL_ERROR;
    }
    w->magic = UA_WOLF_PBKDF2_MAGIC;
    /* RFC 2104: a key longer than a block is hashed first. */
    if (pw_len > WC_SHA256_BLOCK_SIZE) {
        if (wc_Sha256Update(&w->work, pw, (word32)pw_len) != 0
            || wc_Sha256Final(&w->work, key) != 0)
            goto out;
        k = key;
        klen = sizeof(key);
    }
    memset(pad, 0x36, sizeof(pad));
    for (size_t i = 0; i < klen; i++)
        pad[i] ^= k[i];
    if (wc_Sha256Update(&w->inner, pad, sizeof(pad)) != 0)
        goto out;
    memset(pad, 0x5c, sizeof(pad));
    for (size_t i = 0; i < klen; i++)
        pad[i] ^= k[i];
    if (wc_Sha256Update(&w->outer, pad, sizeof(pad)) != 0)
        goto out;
    /* U_1 = PRF(P, S || INT(1)) (RFC 8018 §5.2). */
    memcpy(blk, salt, salt_len);
    blk[salt_len] = 0;
    blk[salt_len + 1] = 0;
    blk[salt_len + 2] = 0;
    blk[salt_len + 3] = 1;
    if (ua_wolf_pbkdf2_mac(w, blk, (word32)salt_len + 4) != 0)
        goto out;
    memcpy(w->t, w->u, sizeof(w->t));
    w->left = iterations - 1;
    w->out_len = (uint32_t)out_len;
    rc = 0;
out:
    ua_crypto_wipe(key, sizeof(key));
    ua_crypto_wipe(pad, sizeof(pad));
    if (rc != 0) {
        ua_crypto_pbkdf2_clear(p);
        return UA_BAD_INTERNAL_ERROR;
    }
    return UA_GOOD;
}

ua_status
ua_crypto_pbkdf2_step(struct ua_pbkdf2 *p, uint32_t max, uint8_t *out,
                      bool *done)
{
    struct ua_wolf_pbkdf2 *w;
    uint32_t               n;

    if (done != NULL)
        *done = false;
    if (p == NULL || out == NULL || done == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    w = (struct ua_wolf_pbkdf2 *)(void *)p->opaque;
    if (w->magic != UA_WOLF_PBKDF2_MAGIC)
        return UA_BAD_INVALID_STATE;
    n = max < w->left ? max : w->left;
    for (uint32_t i = 0; i < n; i++) {
        if (ua_wolf_pbkdf2_mac(w, w->u, sizeof(w->u)) != 0) {
            ua_crypto_pbkdf2_clear(p);
            return UA_BAD_INTERNAL_ERROR;
        }
        for (size_t j = 0; j < sizeof(w->t); j++)
            w->t[j] ^= w->u[j];
    }
    w->left -= n;
    if (w->left != 0)
        return UA_GOOD;
    memcpy(out, w->t, w->out_len);
    ua_crypto_pbkdf2_clear(p);
    *done = true;
    return UA_GOOD;
}

void
ua_crypto_pbkdf2_clear(struct ua_pbkdf2 *p)
{
    struct ua_wolf_pbkdf2 *w;

    if (p == NULL)
        return;
    w = (struct ua_wolf_pbkdf2 *)(void *)p->opaque;
    if (w->magic == UA_WOLF_PBKDF2_MAGIC) {
        wc_Sha256Free(&w->inner);
        wc_Sha256Free(&w->outer);
        wc_Sha256Free(&w->work);
    }
    ua_crypto_wipe(p, sizeof(*p));
}

ua_status
ua_crypto_hmac(enum ua_hash h, const uint8_t *key, size_t key_len,
               const uint8_t *data, size_t len, uint8_t *out)
{
    Hmac      hm;
    int       t = ua_wolf_hmac_type(h);
    ua_status rc = UA_BAD_INTERNAL_ERROR;

    if (t < 0 || key == NULL || key_len == 0 || key_len > UINT32_MAX
        || len > UINT32_MAX || out == NULL || (len != 0 && data == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (wc_HmacInit(&hm, NULL, INVALID_DEVID) != 0)
        return UA_BAD_INTERNAL_ERROR;
    if (wc_HmacSetKey(&hm, t, key, (word32)key_len) == 0
        && wc_HmacUpdate(&hm, data, (word32)len) == 0
        && wc_HmacFinal(&hm, out) == 0)
        rc = UA_GOOD;
    wc_HmacFree(&hm);
    ua_crypto_wipe(&hm, sizeof(hm));
    return rc;
}

/*
 * P_hash(secret, seed) = HMAC(secret, A(1) | seed) | HMAC(secret, A(2) |
 * seed) | ..., A(0) = seed, A(i) = HMAC(secret, A(i-1)) (RFC 5246 §5).  One
 * keyed Hmac object serves every step: wc_HmacFinal leaves it ready for the
 * next message under the same key.
 */
ua_status
ua_crypto_p_hash(enum ua_hash h, const uint8_t *secret, size_t secret_len,
                 const uint8_t *seed, size_t seed_len, uint8_t *out,
                 size_t out_len)
{
    Hmac      hm;
    uint8_t   a[UA_HASH_MAX_LEN], blk[UA_HASH_MAX_LEN];
    int       t = ua_wolf_hmac_type(h);
    size_t    hl = ua_crypto_hash_len(h), n;
    ua_status rc = UA_BAD_INTERNAL_ERROR;

    if (t < 0 || secret == NULL || secret_len == 0
        || secret_len > UINT32_MAX || seed_len > UINT32_MAX
        || (seed_len != 0 && seed == NULL) || (out_len != 0 && out == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (wc_HmacInit(&hm, NULL, INVALID_DEVID) != 0)
        return UA_BAD_INTERNAL_ERROR;
    if (wc_HmacSetKey(&hm, t, secret, (word32)secret_len) != 0
        || wc_HmacUpdate(&hm, seed, (word32)seed_len) != 0
        || wc_HmacFinal(&hm, a) != 0)
        goto done;
    while (out_len > 0) {
        if (wc_HmacUpdate(&hm, a, (word32)hl) != 0
            || wc_HmacUpdate(&hm, seed, (word32)seed_len) != 0
            || wc_HmacFinal(&hm, blk) != 0)
            goto done;
        n = out_len < hl ? out_len : hl;
        memcpy(out, blk, n);
        out += n;
        out_len -= n;
        if (wc_HmacUpdate(&hm, a, (word32)hl) != 0
            || wc_HmacFinal(&hm, a) != 0)
            goto done;
    }
    rc = UA_GOOD;
done:
    wc_HmacFree(&hm);
    ua_crypto_wipe(&hm, sizeof(hm));
    ua_crypto_wipe(a, sizeof(a));
    ua_crypto_wipe(blk, sizeof(blk));
    return rc;
}

/* ------------------------------------------------------------ RSA keys */

static struct ua_wolf_key *
ua_wolf_key(struct ua_crypto_key *k)
{
    struct ua_wolf_key *w;

    if (k == NULL)
        return NULL;
    w = (struct ua_wolf_key *)(void *)k->opaque;
    return w->magic == UA_WOLF_KEY_MAGIC ? w : NULL;
}

static const struct ua_wolf_key *
ua_wolf_key_c(const struct ua_crypto_key *k)
{
    const struct ua_wolf_key *w;

    if (k == NULL)
        return NULL;
    w = (const struct ua_wolf_key *)(const void *)k->opaque;
    return w->magic == UA_WOLF_KEY_MAGIC ? w : NULL;
}

/* Big-endian bytes without their leading zeros. */
static void
ua_wolf_strip(const byte **p, word32 *n)
{
    while (*n > 0 && **p == 0) {
        (*p)++;
        (*n)--;
    }
}

/*
 * Make w (wiped) a live public key of modulus n and exponent e (big-endian,
 * leading zeros allowed).  Sizes outside UA_RSA_MIN_BITS..UA_RSA_MAX_BITS
 * and exponents longer than UA_WOLF_E_MAX bytes are BadNotSupported.
 */
static ua_status
ua_wolf_key_public(struct ua_wolf_key *w, const byte *n, word32 nsz,
                   const byte *e, word32 esz)
{
    ua_wolf_strip(&n, &nsz);
    ua_wolf_strip(&e, &esz);
    if (nsz < UA_RSA_MIN_BITS / 8 || nsz > UA_RSA_MAX_BYTES || esz == 0
        || esz > UA_WOLF_E_MAX)
        return UA_BAD_NOT_SUPPORTED;
    memcpy(w->n, n, nsz);
    memcpy(w->e, e, esz);
    w->n_len = (uint16_t)nsz;
    w->e_len = (uint8_t)esz;
    w->priv = 0;
    w->rsa = NULL;
    w->magic = UA_WOLF_KEY_MAGIC;
    return UA_GOOD;
}

/*
 * Make w (wiped) a live private key that owns rsa (a heap RsaKey, decoded
 * or generated): its public half copied out, the process RNG attached
 * (blinding, docs/dependencies.md gotcha 2).  On failure rsa is freed and w
 * stays wiped.
 */
static ua_status
ua_wolf_key_private(struct ua_wolf_key *w, RsaKey *rsa)
{
    byte      n[UA_RSA_MAX_BYTES], e[UA_WOLF_E_MAX];
    word32    nsz = sizeof(n), esz = sizeof(e);
    WC_RNG   *rng = ua_wolf_rng();
    ua_status rc = UA_BAD_INTERNAL_ERROR;
    int       bytes = wc_RsaEncryptSize(rsa);

    if (bytes < UA_RSA_MIN_BITS / 8 || bytes > UA_RSA_MAX_BYTES)
        rc = UA_BAD_NOT_SUPPORTED;
    else if (wc_RsaFlattenPublicKey(rsa, e, &esz, n, &nsz) != 0)
        rc = UA_BAD_NOT_SUPPORTED;      /* e.g. an exponent over 8 bytes */
    else if (rng != NULL && wc_RsaSetRNG(rsa, rng) == 0)
        rc = ua_wolf_key_public(w, n, nsz, e, esz);
    if (rc != UA_GOOD) {
        wc_FreeRsaKey(rsa);
        ua_crypto_wipe(rsa, sizeof(*rsa));
        free(rsa);
        ua_crypto_wipe(w, sizeof(*w));
        return rc;
    }
    w->rsa = rsa;
    w->priv = 1;
    return UA_GOOD;
}

/*
 * The RsaKey a public-key operation runs on: a private key's own, else
 * tmp made from the bytes.  0 or a wolfSSL error; ua_wolf_pub_done after.
 */
static int
ua_wolf_pub(const struct ua_wolf_key *w, RsaKey *tmp, RsaKey **use)
{
    int r;

    if (w->rsa != NULL) {
        *use = w->rsa;
        return 0;
    }
    *use = tmp;
    r = wc_InitRsaKey(tmp, NULL);
    if (r != 0)
        return r;
    r = wc_RsaPublicKeyDecodeRaw(w->n, w->n_len, w->e, w->e_len, tmp);
    if (r != 0)
        wc_FreeRsaKey(tmp);
    return r;
}

static void
ua_wolf_pub_done(RsaKey *tmp, RsaKey *use)
{
    if (use == tmp)
        wc_FreeRsaKey(tmp);
}

/* A fresh heap RsaKey, initialised; NULL when out of memory. */
static RsaKey *
ua_wolf_rsa_new(void)
{
    RsaKey *rsa = malloc(sizeof(*rsa));

    if (rsa != NULL && wc_InitRsaKey(rsa, NULL) != 0) {
        free(rsa);
        rsa = NULL;
    }
    return rsa;
}

/* Free a heap RsaKey that no key owns yet. */
static void
ua_wolf_rsa_free(RsaKey *rsa)
{
    wc_FreeRsaKey(rsa);
    ua_crypto_wipe(rsa, sizeof(*rsa));
    free(rsa);
}

ua_status
ua_crypto_key_load(struct ua_crypto_key *k, const uint8_t *buf, size_t len)
{
    struct ua_wolf_key *w;
    RsaKey             *rsa;
    uint8_t             der[8192];
    const uint8_t      *d = buf;
    size_t              i = 0;
    word32              idx = 0, dlen = (word32)len;
    int                 r;

    if (k == NULL || buf == NULL || len == 0 || len > INT_MAX)
        return UA_BAD_INVALID_ARGUMENT;
    ua_crypto_key_clear(k);         /* a key held before is replaced */
    w = (struct ua_wolf_key *)(void *)k->opaque;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r'
                       || buf[i] == '\n'))
        i++;
    if (len - i >= 10 && memcmp(buf + i, "-----BEGIN", 10) == 0) {
        r = wc_KeyPemToDer(buf, (int)len, der, sizeof(der), NULL);
        if (r <= 0) {
            ua_crypto_wipe(der, sizeof(der));
            return UA_BAD_DECODING_ERROR;
        }
        d = der;
        dlen = (word32)r;
    }
    rsa = ua_wolf_rsa_new();
    if (rsa == NULL) {
        ua_crypto_wipe(der, sizeof(der));
        return UA_BAD_OUT_OF_MEMORY;
    }
    /* Takes PKCS#1 RSAPrivateKey and PKCS#8 PrivateKeyInfo alike. */
    r = wc_RsaPrivateKeyDecode(d, &idx, rsa, dlen);
    ua_crypto_wipe(der, sizeof(der));
    if (r != 0) {
        ua_wolf_rsa_free(rsa);
        return UA_BAD_DECODING_ERROR;
    }
    return ua_wolf_key_private(w, rsa);
}

ua_status
ua_crypto_key_load_public(struct ua_crypto_key *k, const uint8_t *der,
                          size_t len)
{
    struct ua_wolf_key *w;
    RsaKey              rsa;
    byte                n[UA_RSA_MAX_BYTES], e[UA_WOLF_E_MAX];
    word32              idx = 0, nsz = sizeof(n), esz = sizeof(e);
    ua_status           rc = UA_BAD_DECODING_ERROR;

    if (k == NULL || der == NULL || len == 0 || len > UINT32_MAX)
        return UA_BAD_INVALID_ARGUMENT;
    ua_crypto_key_clear(k);         /* a key held before is replaced */
    w = (struct ua_wolf_key *)(void *)k->opaque;
    if (wc_InitRsaKey(&rsa, NULL) != 0)
        return UA_BAD_INTERNAL_ERROR;
    /* SubjectPublicKeyInfo or a bare RSAPublicKey. */
    if (wc_RsaPublicKeyDecode(der, &idx, &rsa, (word32)len) == 0) {
        rc = UA_BAD_NOT_SUPPORTED;
        if (wc_RsaFlattenPublicKey(&rsa, e, &esz, n, &nsz) == 0)
            rc = ua_wolf_key_public(w, n, nsz, e, esz);
    }
    wc_FreeRsaKey(&rsa);
    return rc;
}

/* The RSA public key of a parsed certificate into an initialised rsa. */
static ua_status
ua_wolf_rsa_public_from_dc(RsaKey *rsa, DecodedCert *dc)
{
    uint8_t pub[UA_RSA_MAX_BYTES + 64];
    word32  plen = sizeof(pub), idx = 0;

    if (dc->keyOID != RSAk)
        return UA_BAD_NOT_SUPPORTED;
    if (wc_GetPubKeyDerFromCert(dc, pub, &plen) != 0)
        return UA_BAD_NOT_SUPPORTED;
    if (wc_RsaPublicKeyDecode(pub, &idx, rsa, plen) != 0)
        return UA_BAD_DECODING_ERROR;
    return UA_GOOD;
}

ua_status
ua_crypto_key_from_cert(struct ua_crypto_key *k, const uint8_t *der,
                        size_t len)
{
    struct ua_wolf_key *w;
    DecodedCert         dc;
    const byte         *n = NULL, *e = NULL;
    word32              nsz = 0, esz = 0, idx = 0;
    ua_status           rc = UA_BAD_NOT_SUPPORTED;

    if (k == NULL || der == NULL || len == 0 || len > UINT32_MAX)
        return UA_BAD_INVALID_ARGUMENT;
    ua_crypto_key_clear(k);         /* a key held before is replaced */
    w = (struct ua_wolf_key *)(void *)k->opaque;
    wc_InitDecodedCert(&dc, der, (word32)len, NULL);
    if (wc_ParseCert(&dc, CERT_TYPE, NO_VERIFY, NULL) != 0) {
        wc_FreeDecodedCert(&dc);
        return UA_BAD_CERTIFICATE_INVALID;
    }
    /* dc.publicKey is a bare RSAPublicKey (a copy wolfSSL owns): the
     * modulus and exponent are read in place, no RsaKey is made. */
    if (dc.keyOID == RSAk) {
        rc = UA_BAD_DECODING_ERROR;
        if (wc_RsaPublicKeyDecode_ex(dc.publicKey, &idx, dc.pubKeySize, &n,
                                     &nsz, &e, &esz) == 0)
            rc = ua_wolf_key_public(w, n, nsz, e, esz);
    }
    wc_FreeDecodedCert(&dc);
    return rc;
}

ua_status
ua_crypto_key_generate(struct ua_crypto_key *k, unsigned bits)
{
    struct ua_wolf_key *w;
    RsaKey             *rsa;
    WC_RNG             *rng = ua_wolf_rng();

    if (k == NULL || bits < UA_RSA_MIN_BITS || bits > UA_RSA_MAX_BITS
        || bits % 8 != 0)
        return UA_BAD_INVALID_ARGUMENT;
    if (rng == NULL)
        return UA_BAD_INTERNAL_ERROR;
    ua_crypto_key_clear(k);         /* a key held before is replaced */
    w = (struct ua_wolf_key *)(void *)k->opaque;
    rsa = ua_wolf_rsa_new();
    if (rsa == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    if (wc_MakeRsaKey(rsa, (int)bits, WC_RSA_EXPONENT, rng) != 0) {
        ua_wolf_rsa_free(rsa);
        return UA_BAD_INTERNAL_ERROR;
    }
    return ua_wolf_key_private(w, rsa);
}

ua_status
ua_crypto_key_write(struct ua_crypto_key *k, bool pem, uint8_t *out,
                    size_t cap, size_t *len)
{
    struct ua_wolf_key *w = ua_wolf_key(k);
    uint8_t             der[4096];
    int                 r;

    if (w == NULL || !w->priv || out == NULL || len == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    r = wc_RsaKeyToDer(w->rsa, der, sizeof(der));
    if (r <= 0) {
        ua_crypto_wipe(der, sizeof(der));
        return UA_BAD_INTERNAL_ERROR;
    }
    if (!pem) {
        if ((size_t)r > cap) {
            ua_crypto_wipe(der, sizeof(der));
            return UA_BAD_ENCODING_LIMITS_EXCEEDED;
        }
        memcpy(out, der, (size_t)r);
        *len = (size_t)r;
        ua_crypto_wipe(der, sizeof(der));
        return UA_GOOD;
    }
    /* PEM grows 4/3 plus line breaks and armour; leave room for a NUL. */
    if (cap > INT_MAX)
        cap = INT_MAX;
    r = cap < 2 ? -1 : wc_DerToPem(der, (word32)r, out, (word32)(cap - 1),
                                   PRIVATEKEY_TYPE);
    ua_crypto_wipe(der, sizeof(der));
    if (r <= 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    out[r] = '\0';
    *len = (size_t)r;
    return UA_GOOD;
}

unsigned
ua_crypto_key_bits(const struct ua_crypto_key *k)
{
    return (unsigned)ua_crypto_key_bytes(k) * 8;
}

size_t
ua_crypto_key_bytes(const struct ua_crypto_key *k)
{
    const struct ua_wolf_key *w = ua_wolf_key_c(k);

    return w != NULL ? w->n_len : 0;
}

bool
ua_crypto_key_is_private(const struct ua_crypto_key *k)
{
    const struct ua_wolf_key *w = ua_wolf_key_c(k);

    return w != NULL && w->priv;
}

void
ua_crypto_key_clear(struct ua_crypto_key *k)
{
    struct ua_wolf_key *w;

    if (k == NULL)
        return;
    w = ua_wolf_key(k);
    if (w != NULL && w->rsa != NULL)
        ua_wolf_rsa_free(w->rsa);
    ua_crypto_wipe(k->opaque, sizeof(k->opaque));
}

/* ------------------------------------------------------------ RSA ops */

static ua_status
ua_wolf_rsa_sign_op(struct ua_crypto_key *k, enum ua_rsa_sig a,
                    const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                    size_t *sig_len)
{
    struct ua_wolf_key *w = ua_wolf_key(k);
    uint8_t             h[WC_SHA256_DIGEST_SIZE];
    WC_RNG             *rng;
    size_t              kb;
    word32              sl;
    int                 r;

    if (w == NULL || !w->priv || sig == NULL || sig_len == NULL
        || len > UINT32_MAX || (len != 0 && data == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    kb = w->n_len;
    if (cap < kb)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    rng = ua_wolf_rng();
    if (rng == NULL || wc_RsaSetRNG(w->rsa, rng) != 0)
        return UA_BAD_INTERNAL_ERROR;
    ua_wolf_private_ops++;
    switch (a) {
    case UA_RSA_SIG_PKCS1_SHA1:
    case UA_RSA_SIG_PKCS1_SHA256:
        sl = (word32)kb;
        r = wc_SignatureGenerate(a == UA_RSA_SIG_PKCS1_SHA1
                                     ? WC_HASH_TYPE_SHA : WC_HASH_TYPE_SHA256,
                                 WC_SIGNATURE_TYPE_RSA_W_ENC, data,
                                 (word32)len, sig, &sl, w->rsa,
                                 sizeof(*w->rsa), rng);
        if (r != 0)
            return UA_BAD_INTERNAL_ERROR;
        *sig_len = sl;
        return UA_GOOD;
    case UA_RSA_SIG_PSS_SHA256:
        if (wc_Sha256Hash(data, (word32)len, h) != 0)
            return UA_BAD_INTERNAL_ERROR;
        /* Salt as long as the digest, as Part 7 wants for RsaPss. */
        r = wc_RsaPSS_Sign_ex(h, sizeof(h), sig, (word32)cap,
                              WC_HASH_TYPE_SHA256, WC_MGF1SHA256,
                              WC_SHA256_DIGEST_SIZE, w->rsa, rng);
        if (r <= 0)
            return UA_BAD_INTERNAL_ERROR;
        *sig_len = (size_t)r;
        return UA_GOOD;
    }
    return UA_BAD_INVALID_ARGUMENT;
}

ua_status
ua_crypto_rsa_sign(struct ua_crypto_key *k, enum ua_rsa_sig a,
                   const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                   size_t *sig_len)
{
    uint64_t t0 = ua_wolf_rsa_begin();
    ua_status r = ua_wolf_rsa_sign_op(k, a, data, len, sig, cap, sig_len);

    ua_wolf_rsa_end(t0);
    return r;
}

static ua_status
ua_wolf_rsa_verify_op(struct ua_crypto_key *k, enum ua_rsa_sig a,
                      const uint8_t *data, size_t len, const uint8_t *sig,
                      size_t sig_len)
{
    struct ua_wolf_key *w = ua_wolf_key(k);
    uint8_t             h[WC_SHA256_DIGEST_SIZE];
    uint8_t             s[UA_RSA_MAX_BYTES], o[UA_RSA_MAX_BYTES];
    RsaKey              tmp, *rsa;
    size_t              kb;
    ua_status           rc;
    int                 r;

    if (w == NULL || len > UINT32_MAX || (len != 0 && data == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    kb = w->n_len;
    if (sig == NULL || sig_len != kb)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    if (a != UA_RSA_SIG_PKCS1_SHA1 && a != UA_RSA_SIG_PKCS1_SHA256
        && a != UA_RSA_SIG_PSS_SHA256)
        return UA_BAD_INVALID_ARGUMENT;
    ua_wolf_work.rsa_verifies++;
    if (a == UA_RSA_SIG_PSS_SHA256
        && wc_Sha256Hash(data, (word32)len, h) != 0)
        return UA_BAD_INTERNAL_ERROR;
    if (ua_wolf_pub(w, &tmp, &rsa) != 0)
        return UA_BAD_INTERNAL_ERROR;
    if (a == UA_RSA_SIG_PSS_SHA256) {
        memcpy(s, sig, sig_len);
        r = wc_RsaPSS_VerifyCheck(s, (word32)sig_len, o, sizeof(o), h,
                                  sizeof(h), WC_HASH_TYPE_SHA256,
                                  WC_MGF1SHA256, rsa);
        rc = r >= 0 ? UA_GOOD : UA_BAD_SECURITY_CHECKS_FAILED;
    } else {
        r = wc_SignatureVerify(a == UA_RSA_SIG_PKCS1_SHA1
                                   ? WC_HASH_TYPE_SHA : WC_HASH_TYPE_SHA256,
                               WC_SIGNATURE_TYPE_RSA_W_ENC, data,
                               (word32)len, sig, (word32)sig_len, rsa,
                               sizeof(*rsa));
        rc = r == 0 ? UA_GOOD : UA_BAD_SECURITY_CHECKS_FAILED;
    }
    ua_wolf_pub_done(&tmp, rsa);
    return rc;
}

ua_status
ua_crypto_rsa_verify(struct ua_crypto_key *k, enum ua_rsa_sig a,
                     const uint8_t *data, size_t len, const uint8_t *sig,
                     size_t sig_len)
{
    uint64_t t0 = ua_wolf_rsa_begin();
    ua_status r = ua_wolf_rsa_verify_op(k, a, data, len, sig, sig_len);

    ua_wolf_rsa_end(t0);
    return r;
}

/* wolfSSL's padding, hash and MGF for an encryption scheme. */
static void
ua_wolf_rsa_enc_params(enum ua_rsa_enc a, int *pad, int *hash, int *mgf)
{
    switch (a) {
    case UA_RSA_ENC_OAEP_SHA1:
        *pad = WC_RSA_OAEP_PAD;
        *hash = WC_HASH_TYPE_SHA;
        *mgf = WC_MGF1SHA1;
        return;
    case UA_RSA_ENC_OAEP_SHA256:
        *pad = WC_RSA_OAEP_PAD;
        *hash = WC_HASH_TYPE_SHA256;
        *mgf = WC_MGF1SHA256;
        return;
    case UA_RSA_ENC_PKCS1:
        break;
    }
    *pad = WC_RSA_PKCSV15_PAD;
    *hash = WC_HASH_TYPE_NONE;
    *mgf = WC_MGF1NONE;
}

static ua_status
ua_wolf_rsa_encrypt_op(struct ua_crypto_key *k, enum ua_rsa_enc a,
                       const uint8_t *in, size_t len, uint8_t *out,
                       size_t cap, size_t *out_len)
{
    struct ua_wolf_key *w = ua_wolf_key(k);
    uint8_t             blk[UA_RSA_MAX_BYTES];
    RsaKey              tmp, *rsa;
    WC_RNG             *rng;
    size_t              kb, pb, nb, need, i, n;
    ua_status           rc = UA_GOOD;
    int                 pad, hash, mgf, r;

    if (w == NULL || in == NULL || out == NULL || out_len == NULL
        || len == 0 || a > UA_RSA_ENC_OAEP_SHA256)
        return UA_BAD_INVALID_ARGUMENT;
    kb = w->n_len;
    pb = ua_crypto_rsa_plain_block(a, kb);
    if (pb == 0)
        return UA_BAD_INVALID_ARGUMENT;
    nb = len / pb + (len % pb != 0);
    need = nb * kb;
    if (need > cap)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    /* In place, or not overlapping at all. */
    if (out != in && out < in + len && in < out + need)
        return UA_BAD_INVALID_ARGUMENT;
    rng = ua_wolf_rng();
    if (rng == NULL)
        return UA_BAD_INTERNAL_ERROR;
    ua_wolf_rsa_enc_params(a, &pad, &hash, &mgf);
    if (ua_wolf_pub(w, &tmp, &rsa) != 0)
        return UA_BAD_INTERNAL_ERROR;
    /* Last block first: ciphertext block i lands at i*kb, at or past
     * plaintext block i (at i*pb), and only after blocks > i were read. */
    for (i = nb; i-- > 0;) {
        n = i == nb - 1 ? len - i * pb : pb;
        memcpy(blk, in + i * pb, n);
        r = wc_RsaPublicEncrypt_ex(blk, (word32)n, out + i * kb, (word32)kb,
                                   rsa, rng, pad, (enum wc_HashType)hash,
                                   mgf, NULL, 0);
        if (r != (int)kb) {
            rc = UA_BAD_INTERNAL_ERROR;
            break;
        }
    }
    ua_wolf_pub_done(&tmp, rsa);
    if (rc != UA_GOOD) {
        ua_crypto_wipe(blk, sizeof(blk));
        return rc;
    }
    ua_crypto_wipe(blk, sizeof(blk));
    *out_len = need;
    return UA_GOOD;
}

ua_status
ua_crypto_rsa_encrypt(struct ua_crypto_key *k, enum ua_rsa_enc a,
                      const uint8_t *in, size_t len, uint8_t *out,
                      size_t cap, size_t *out_len)
{
    uint64_t t0 = ua_wolf_rsa_begin();
    ua_status r = ua_wolf_rsa_encrypt_op(k, a, in, len, out, cap, out_len);

    ua_wolf_rsa_end(t0);
    return r;
}

static ua_status
ua_wolf_rsa_decrypt_block_op(struct ua_crypto_key *k, enum ua_rsa_enc a,
                             uint8_t *buf, size_t len, size_t i, size_t *pos,
                             bool *bad)
{
    struct ua_wolf_key *w = ua_wolf_key(k);
    uint8_t             blk[UA_RSA_MAX_BYTES];
    WC_RNG             *rng;
    size_t              kb, pb;
    int                 pad, hash, mgf, r;

    if (w == NULL || !w->priv || buf == NULL || pos == NULL || bad == NULL
        || a > UA_RSA_ENC_OAEP_SHA256)
        return UA_BAD_INVALID_ARGUMENT;
    kb = w->n_len;
    pb = ua_crypto_rsa_plain_block(a, kb);
    if (pb == 0 || len == 0 || len % kb != 0 || i >= len / kb
        || *pos > i * pb)
        return UA_BAD_INVALID_ARGUMENT;
    rng = ua_wolf_rng();
    if (rng == NULL || wc_RsaSetRNG(w->rsa, rng) != 0)
        return UA_BAD_INTERNAL_ERROR;
    ua_wolf_rsa_enc_params(a, &pad, &hash, &mgf);
    ua_wolf_private_ops++;
    /* Plaintext block i is written at *pos <= i * pb, before ciphertext
     * block i + 1 at (i + 1) * kb. */
    r = wc_RsaPrivateDecrypt_ex(buf + i * kb, (word32)kb, blk, sizeof(blk),
                                w->rsa, pad, (enum wc_HashType)hash, mgf,
                                NULL, 0);
    if (r < 0 || (size_t)r > pb) {
        *bad = true;
        r = 0;
    }
    memcpy(buf + *pos, blk, (size_t)r);
    *pos += (size_t)r;
    ua_crypto_wipe(blk, sizeof(blk));
    return UA_GOOD;
}

ua_status
ua_crypto_rsa_decrypt_block(struct ua_crypto_key *k, enum ua_rsa_enc a,
                            uint8_t *buf, size_t len, size_t i, size_t *pos,
                            bool *bad)
{
    uint64_t t0 = ua_wolf_rsa_begin();
    ua_status r = ua_wolf_rsa_decrypt_block_op(k, a, buf, len, i, pos, bad);

    ua_wolf_rsa_end(t0);
    return r;
}

ua_status
ua_crypto_rsa_decrypt(struct ua_crypto_key *k, enum ua_rsa_enc a,
                      uint8_t *buf, size_t len, size_t *out_len)
{
    struct ua_wolf_key *w = ua_wolf_key(k);
    size_t              kb, pb, i, pos = 0;
    bool                bad = false;
    ua_status           s;

    if (w == NULL || !w->priv || buf == NULL || out_len == NULL
        || a > UA_RSA_ENC_OAEP_SHA256)
        return UA_BAD_INVALID_ARGUMENT;
    *out_len = 0;
    kb = w->n_len;
    pb = ua_crypto_rsa_plain_block(a, kb);
    if (pb == 0 || len == 0 || len % kb != 0)
        return UA_BAD_SECURITY_CHECKS_FAILED;
    /* Every block, even after a failure. */
    for (i = 0; i < len / kb; i++) {
        s = ua_crypto_rsa_decrypt_block(k, a, buf, len, i, &pos, &bad);
        if (s != UA_GOOD)
            return s;
    }
    if (bad) {
        ua_crypto_wipe(buf, len);
        return UA_BAD_SECURITY_CHECKS_FAILED;
    }
    *out_len = pos;
    return UA_GOOD;
}

/* ------------------------------------------------------------ cipher */

static struct ua_wolf_cipher *
ua_wolf_cipher(struct ua_cipher *c)
{
    struct ua_wolf_cipher *w;

    if (c == NULL)
        return NULL;
    w = (struct ua_wolf_cipher *)(void *)c->opaque;
    return w->magic == UA_WOLF_CIPHER_MAGIC ? w : NULL;
}

/* The hash states of a direction: wolfSSL's own init, update, final and
 * copy (the states hold a device pointer in this build: no memcpy). */
static int
ua_wolf_hs_init(int t, union ua_wolf_hs *h)
{
    return t == WC_SHA ? wc_InitSha_ex(&h->sha1, NULL, INVALID_DEVID)
                       : wc_InitSha256_ex(&h->sha256, NULL, INVALID_DEVID);
}

static int
ua_wolf_hs_update(int t, union ua_wolf_hs *h, const uint8_t *d, word32 n)
{
    return t == WC_SHA ? wc_ShaUpdate(&h->sha1, d, n)
                       : wc_Sha256Update(&h->sha256, d, n);
}

static int
ua_wolf_hs_final(int t, union ua_wolf_hs *h, uint8_t *out)
{
    return t == WC_SHA ? wc_ShaFinal(&h->sha1, out)
                       : wc_Sha256Final(&h->sha256, out);
}

static int
ua_wolf_hs_copy(int t, union ua_wolf_hs *from, union ua_wolf_hs *to)
{
    return t == WC_SHA ? wc_ShaCopy(&from->sha1, &to->sha1)
                       : wc_Sha256Copy(&from->sha256, &to->sha256);
}

static void
ua_wolf_hs_free(int t, union ua_wolf_hs *h)
{
    if (t == WC_SHA)
        wc_ShaFree(&h->sha1);
    else
        wc_Sha256Free(&h->sha256);
}

static void
ua_wolf_dir_free(struct ua_wolf_dir *d)
{
    ua_wolf_hs_free(d->mac, &d->inner);
    ua_wolf_hs_free(d->mac, &d->outer);
    ua_wolf_hs_free(d->mac, &d->work);
    wc_AesFree(&d->aes);
}

/* HMAC (RFC 2104) of data[0..len) into mac with the direction's states. */
static int
ua_wolf_dir_mac(struct ua_wolf_dir *d, const uint8_t *data, word32 len,
                uint8_t *mac)
{
    word32 hl = d->mac == WC_SHA ? WC_SHA_DIGEST_SIZE : WC_SHA256_DIGEST_SIZE;

    if (ua_wolf_hs_copy(d->mac, &d->inner, &d->work) != 0
        || ua_wolf_hs_update(d->mac, &d->work, data, len) != 0
        || ua_wolf_hs_final(d->mac, &d->work, mac) != 0
        || ua_wolf_hs_copy(d->mac, &d->outer, &d->work) != 0
        || ua_wolf_hs_update(d->mac, &d->work, mac, hl) != 0
        || ua_wolf_hs_final(d->mac, &d->work, mac) != 0)
        return -1;
    return 0;
}

/* Key the HMAC states of a direction: K zero-padded to a block, ^ 0x36
 * into inner, ^ 0x5c into outer (RFC 2104; a symmetric signing key is
 * never longer than a block, so it is never hashed first). */
static int
ua_wolf_dir_mac_key(struct ua_wolf_dir *d, const uint8_t *key, size_t len)
{
    uint8_t pad[WC_SHA256_BLOCK_SIZE];
    int     rc = -1;

    static_assert((int)WC_SHA_BLOCK_SIZE == (int)WC_SHA256_BLOCK_SIZE,
                  "HMAC block");
    static_assert(UA_SYM_KEY_MAX <= WC_SHA256_BLOCK_SIZE, "HMAC key");
    if (len > UA_SYM_KEY_MAX)
        return -1;
    memset(pad, 0x36, sizeof(pad));
    for (size_t i = 0; i < len; i++)
        pad[i] ^= key[i];
    if (ua_wolf_hs_update(d->mac, &d->inner, pad, sizeof(pad)) != 0)
        goto out;
    memset(pad, 0x5c, sizeof(pad));
    for (size_t i = 0; i < len; i++)
        pad[i] ^= key[i];
    if (ua_wolf_hs_update(d->mac, &d->outer, pad, sizeof(pad)) != 0)
        goto out;
    rc = 0;
out:
    ua_crypto_wipe(pad, sizeof(pad));
    return rc;
}

/* Key one direction; dir is AES_ENCRYPTION or AES_DECRYPTION. */
static int
ua_wolf_dir_init(struct ua_wolf_dir *d, const struct ua_policy *p,
                 const struct ua_sym_keys *k, int dir)
{
    d->mac = ua_wolf_hmac_type(p->sym_hash);
    if (wc_AesInit(&d->aes, NULL, INVALID_DEVID) != 0)
        return -1;
    if (ua_wolf_hs_init(d->mac, &d->inner) != 0) {
        wc_AesFree(&d->aes);
        return -1;
    }
    if (ua_wolf_hs_init(d->mac, &d->outer) != 0) {
        ua_wolf_hs_free(d->mac, &d->inner);
        wc_AesFree(&d->aes);
        return -1;
    }
    if (ua_wolf_hs_init(d->mac, &d->work) != 0) {
        ua_wolf_hs_free(d->mac, &d->outer);
        ua_wolf_hs_free(d->mac, &d->inner);
        wc_AesFree(&d->aes);
        return -1;
    }
    memcpy(d->iv, k->iv, p->sym_block_len);
    if (wc_AesSetKey(&d->aes, k->enc, p->sym_enc_key_len, d->iv, dir) != 0
        || ua_wolf_dir_mac_key(d, k->sign, p->sym_sig_key_len) != 0) {
        ua_wolf_dir_free(d);
        return -1;
    }
    return 0;
}

static bool
ua_wolf_keys_fit(const struct ua_policy *p, const struct ua_sym_keys *k)
{
    return k != NULL && k->sign_len == p->sym_sig_key_len
        && k->enc_len == p->sym_enc_key_len
        && k->iv_len == p->sym_block_len;
}

ua_status
ua_crypto_cipher_init(struct ua_cipher *c, const struct ua_policy *p,
                      const struct ua_sym_keys *local,
                      const struct ua_sym_keys *remote)
{
    struct ua_wolf_cipher *w;

    if (c == NULL || ua_crypto_policy_is_none(p)
        || ua_wolf_hmac_type(p->sym_hash) < 0 || p->sym_block_len != 16
        || !ua_wolf_keys_fit(p, local) || !ua_wolf_keys_fit(p, remote))
        return UA_BAD_INVALID_ARGUMENT;
    ua_crypto_cipher_clear(c);      /* a token keyed before is replaced */
    w = (struct ua_wolf_cipher *)(void *)c->opaque;
    if (ua_wolf_dir_init(&w->send, p, local, AES_ENCRYPTION) != 0)
        goto fail;
    if (ua_wolf_dir_init(&w->recv, p, remote, AES_DECRYPTION) != 0) {
        ua_wolf_dir_free(&w->send);
        goto fail;
    }
    w->policy = p;
    w->magic = UA_WOLF_CIPHER_MAGIC;
    return UA_GOOD;
fail:
    ua_crypto_wipe(w, sizeof(*w));
    return UA_BAD_INTERNAL_ERROR;
}

void
ua_crypto_cipher_clear(struct ua_cipher *c)
{
    struct ua_wolf_cipher *w;

    if (c == NULL)
        return;
    w = ua_wolf_cipher(c);
    if (w != NULL) {
        ua_wolf_dir_free(&w->send);
        ua_wolf_dir_free(&w->recv);
    }
    ua_crypto_wipe(c->opaque, sizeof(c->opaque));
}

const struct ua_policy *
ua_crypto_cipher_policy(const struct ua_cipher *c)
{
    const struct ua_wolf_cipher *w;

    if (c == NULL)
        return NULL;
    w = (const struct ua_wolf_cipher *)(const void *)c->opaque;
    return w->magic == UA_WOLF_CIPHER_MAGIC ? w->policy : NULL;
}

ua_status
ua_crypto_cipher_sign(struct ua_cipher *c, const uint8_t *data, size_t len,
                      uint8_t *sig)
{
    struct ua_wolf_cipher *w = ua_wolf_cipher(c);

    if (w == NULL || sig == NULL || len > UINT32_MAX
        || (len != 0 && data == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (ua_wolf_dir_mac(&w->send, data, (word32)len, sig) != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}

ua_status
ua_crypto_cipher_verify(struct ua_cipher *c, const uint8_t *data,
                        size_t len, const uint8_t *sig)
{
    struct ua_wolf_cipher *w = ua_wolf_cipher(c);
    uint8_t                mac[UA_SYM_SIG_MAX];
    bool                   ok;

    if (w == NULL || sig == NULL || len > UINT32_MAX
        || (len != 0 && data == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    ua_wolf_work.mac_checks++;
    ua_wolf_work.mac_bytes += len;
    if (ua_wolf_dir_mac(&w->recv, data, (word32)len, mac) != 0)
        return UA_BAD_INTERNAL_ERROR;
    ok = ua_crypto_memeq(mac, sig, w->policy->sym_sig_len);
    ua_crypto_wipe(mac, sizeof(mac));
    return ok ? UA_GOOD : UA_BAD_SECURITY_CHECKS_FAILED;
}

ua_status
ua_crypto_cipher_encrypt(struct ua_cipher *c, uint8_t *buf, size_t len)
{
    struct ua_wolf_cipher *w = ua_wolf_cipher(c);

    if (w == NULL || len % 16 != 0 || len > UINT32_MAX
        || (len != 0 && buf == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    if (len == 0)
        return UA_GOOD;
    /* The object's IV is the last ciphertext block now: reset it. */
    if (wc_AesSetIV(&w->send.aes, w->send.iv) != 0
        || wc_AesCbcEncrypt(&w->send.aes, buf, buf, (word32)len) != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}

ua_status
ua_crypto_cipher_decrypt(struct ua_cipher *c, uint8_t *buf, size_t len)
{
    struct ua_wolf_cipher *w = ua_wolf_cipher(c);

    if (w == NULL || len % 16 != 0 || len > UINT32_MAX
        || (len != 0 && buf == NULL))
        return UA_BAD_INVALID_ARGUMENT;
    ua_wolf_work.decrypts++;
    ua_wolf_work.decrypt_bytes += len;
    if (len == 0)
        return UA_GOOD;
    if (wc_AesSetIV(&w->recv.aes, w->recv.iv) != 0
        || wc_AesCbcDecrypt(&w->recv.aes, buf, buf, (word32)len) != 0)
        return UA_BAD_INTERNAL_ERROR;
    return UA_GOOD;
}

/* ------------------------------------------------------------ X.509 */

/* Whether p[0..n) lies inside der[0..len) (wolfSSL points some fields into
 * the source and copies others: only the former may be kept). */
static bool
ua_wolf_inside(const uint8_t *p, size_t n, const uint8_t *der, size_t len)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)der;

    return p != NULL && a >= b && n <= len && a - b <= len - n;
}

static enum ua_hash
ua_wolf_sig_hash(word32 oid)
{
    switch (oid) {
    case CTC_SHAwRSA:
    case CTC_SHAwECDSA:
        return UA_HASH_SHA1;
    case CTC_SHA256wRSA:
    case CTC_SHA256wECDSA:
        return UA_HASH_SHA256;
    case CTC_SHA384wRSA:
    case CTC_SHA384wECDSA:
        return UA_HASH_SHA384;
    case CTC_SHA512wRSA:
    case CTC_SHA512wECDSA:
        return UA_HASH_SHA512;
    default:
        return UA_HASH_NONE;            /* MD5, MD2, PSS, unknown */
    }
}

ua_status
ua_crypto_x509_parse(const uint8_t *der, size_t len, struct ua_cert *c)
{
    DecodedCert    dc;
    const byte    *n = NULL, *e = NULL;
    word32         nsz = 0, esz = 0, idx = 0;
    size_t         sl;

    if (der == NULL || c == NULL || len == 0 || len > UINT32_MAX)
        return UA_BAD_CERTIFICATE_INVALID;
    wc_InitDecodedCert(&dc, der, (word32)len, NULL);
    if (wc_ParseCert(&dc, CERT_TYPE, NO_VERIFY, NULL) != 0) {
        wc_FreeDecodedCert(&dc);
        return UA_BAD_CERTIFICATE_INVALID;
    }
    c->key_type = UA_CERT_KEY_OTHER;
    c->key_bits = 0;
    if (dc.keyOID == RSAk) {
        c->key_type = UA_CERT_KEY_RSA;
        /* dc.publicKey is a bare RSAPublicKey (a copy wolfSSL owns). */
        if (wc_RsaPublicKeyDecode_ex(dc.publicKey, &idx, dc.pubKeySize, &n,
                                     &nsz, &e, &esz) == 0 && nsz > 0) {
            while (nsz > 0 && *n == 0) {
                n++;
                nsz--;
            }
            if (nsz > 0) {
                unsigned top = *n, b = 0;

                while (top != 0) {
                    b++;
                    top >>= 1;
                }
                c->key_bits = (nsz - 1) * 8 + b;
            }
        }
    } else if (dc.keyOID == ECDSAk) {
        c->key_type = UA_CERT_KEY_EC;
    }
    /* wolfSSL's KEYUSE_* bits are the BIT STRING's, as our UA_KU_*. */
    c->has_key_usage = dc.extKeyUsageSet;
    c->key_usage = dc.extKeyUsageSet ? dc.extKeyUsage : 0;
    c->has_eku = dc.extExtKeyUsageSet;
    c->eku = 0;
    if (dc.extExtKeyUsage & EXTKEYUSE_ANY)
        c->eku |= UA_EKU_ANY;
    if (dc.extExtKeyUsage & EXTKEYUSE_SERVER_AUTH)
        c->eku |= UA_EKU_SERVER_AUTH;
    if (dc.extExtKeyUsage & EXTKEYUSE_CLIENT_AUTH)
        c->eku |= UA_EKU_CLIENT_AUTH;
    c->is_ca = dc.extBasicConstSet && dc.isCA;
    c->self_signed = dc.selfSigned;
    c->sig_hash = (uint8_t)ua_wolf_sig_hash(dc.signatureOID);
    if (dc.keyOID == RSAk && dc.signatureOID != CTC_SHAwRSA
        && dc.signatureOID != CTC_SHA256wRSA
        && dc.signatureOID != CTC_SHA384wRSA
        && dc.signatureOID != CTC_SHA512wRSA)
        c->sig_hash = UA_HASH_NONE;
    c->san = NULL;
    c->san_len = 0;
    if (dc.extSubjAltNameSet
        && ua_wolf_inside(dc.extSubjAltNameSrc, dc.extSubjAltNameSz, der,
                          len)) {
        c->san = dc.extSubjAltNameSrc;
        c->san_len = dc.extSubjAltNameSz;
    }
    c->ski = NULL;
    c->ski_len = 0;
    if (dc.extSubjKeyIdSet
        && ua_wolf_inside(dc.extSubjKeyIdSrc, dc.extSubjKeyIdSz, der, len)) {
        c->ski = dc.extSubjKeyIdSrc;
        c->ski_len = dc.extSubjKeyIdSz;
    }
    c->aki = NULL;
    c->aki_len = 0;
    if (dc.extAuthKeyIdSet
        && ua_wolf_inside(dc.extAuthKeyIdSrc, dc.extAuthKeyIdSz, der, len)) {
        c->aki = dc.extAuthKeyIdSrc;
        c->aki_len = dc.extAuthKeyIdSz;
    }
    sl = strnlen(dc.subject, sizeof(dc.subject));
    if (sl >= sizeof(c->subject_str))
        sl = sizeof(c->subject_str) - 1;
    memcpy(c->subject_str, dc.subject, sl);
    c->subject_str[sl] = '\0';
    wc_FreeDecodedCert(&dc);
    return UA_GOOD;
}

/*
 * Check child's signature over its TBSCertificate with issuer's RSA key:
 * the bytes between wolfSSL's certBegin and sigIndex, hashed with the
 * algorithm child names, PKCS#1 v1.5.  No CertManager, no dates.
 */
static bool
ua_wolf_x509_signed_by_op(const struct ua_cert *child,
                          const struct ua_cert *issuer)
{
    DecodedCert       dc, di;
    DecodedCert      *ik = &di;
    RsaKey            rsa;
    enum wc_HashType  ht = WC_HASH_TYPE_NONE;
    bool              ok = false, self;
    int               r;

    if (child == NULL || issuer == NULL || child->len > UINT32_MAX
        || issuer->len > UINT32_MAX)
        return false;
    /* A self-signed certificate (the usual application certificate):
     * the same bytes, parsed once. */
    self = child->len == issuer->len
           && (child->der == issuer->der
               || memcmp(child->der, issuer->der, child->len) == 0);
    wc_InitDecodedCert(&dc, child->der, (word32)child->len, NULL);
    wc_InitDecodedCert(&di, issuer->der, (word32)issuer->len, NULL);
    if (self)
        ik = &dc;
    if (wc_ParseCert(&dc, CERT_TYPE, NO_VERIFY, NULL) != 0
        || (!self && wc_ParseCert(&di, CERT_TYPE, NO_VERIFY, NULL) != 0))
        goto out;
    switch (dc.signatureOID) {
    case CTC_SHAwRSA:
        ht = WC_HASH_TYPE_SHA;
        break;
    case CTC_SHA256wRSA:
        ht = WC_HASH_TYPE_SHA256;
        break;
    case CTC_SHA384wRSA:
        ht = WC_HASH_TYPE_SHA384;
        break;
    case CTC_SHA512wRSA:
        ht = WC_HASH_TYPE_SHA512;
        break;
    default:
        goto out;
    }
    if (dc.sigIndex <= dc.certBegin || dc.sigIndex > child->len
        || !ua_wolf_inside(dc.signature, dc.sigLength, child->der,
                           child->len))
        goto out;
    if (wc_InitRsaKey(&rsa, NULL) != 0)
        goto out;
    if (ua_wolf_rsa_public_from_dc(&rsa, ik) == UA_GOOD) {
        r = wc_SignatureVerify(ht, WC_SIGNATURE_TYPE_RSA_W_ENC,
                               child->der + dc.certBegin,
                               dc.sigIndex - dc.certBegin, dc.signature,
                               dc.sigLength, &rsa, sizeof(rsa));
        ok = r == 0;
    }
    wc_FreeRsaKey(&rsa);
out:
    wc_FreeDecodedCert(&di);
    wc_FreeDecodedCert(&dc);
    return ok;
}

bool
ua_crypto_x509_signed_by(const struct ua_cert *child,
                         const struct ua_cert *issuer)
{
    uint64_t t0 = ua_wolf_rsa_begin();
    bool r = ua_wolf_x509_signed_by_op(child, issuer);

    ua_wolf_rsa_end(t0);
    return r;
}

/* ------------------------------------------------------------ CertManager */

static time_t
ua_wolf_time_cb(time_t *t)
{
    if (t != NULL)
        *t = ua_wolf_when;
    return ua_wolf_when;
}

static void
ua_wolf_time_set(int64_t when)
{
    ua_wolf_when = (time_t)when;
    wc_SetTimeCb(ua_wolf_time_cb);
}

static void
ua_wolf_time_reset(void)
{
    wc_SetTimeCb(NULL);
}

static int
ua_wolf_cm_rc(int rc)
{
    switch (rc) {
    case WOLFSSL_SUCCESS:
        return UA_X509_OK;
    case ASN_NO_SIGNER_E:
    case ASN_SELF_SIGNED_E:
        return UA_X509_NO_SIGNER;
    case ASN_SIG_CONFIRM_E:
    case ASN_SIG_OID_E:
    case ASN_SIG_KEY_E:
    case ASN_SIG_HASH_E:
        return UA_X509_BAD_SIGNATURE;
    case ASN_AFTER_DATE_E:
    case ASN_BEFORE_DATE_E:
        return UA_X509_DATE;
    case CRL_CERT_REVOKED:
        return UA_X509_REVOKED;
    case CRL_MISSING:
        return UA_X509_CRL_MISSING;
    default:
        return UA_X509_FAIL;
    }
}

ua_status
ua_crypto_cm_new(struct ua_crypto_cm **cm)
{
    WOLFSSL_CERT_MANAGER *m;

    if (cm == NULL)
        return UA_BAD_INVALID_ARGUMENT;
    *cm = NULL;
    if (!ua_wolf_lib && ua_crypto_init() != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    m = wolfSSL_CertManagerNew();
    if (m == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    *cm = (struct ua_crypto_cm *)(void *)m;
    return UA_GOOD;
}

void
ua_crypto_cm_free(struct ua_crypto_cm *cm)
{
    if (cm != NULL)
        wolfSSL_CertManagerFree((WOLFSSL_CERT_MANAGER *)(void *)cm);
}

int
ua_crypto_cm_add_ca(struct ua_crypto_cm *cm, const uint8_t *der,
                    size_t len, int64_t when)
{
    int r;

    if (cm == NULL || der == NULL || len == 0 || len > INT_MAX)
        return UA_X509_FAIL;
    ua_wolf_time_set(when);
    r = wolfSSL_CertManagerLoadCABuffer((WOLFSSL_CERT_MANAGER *)(void *)cm,
                                        der, (long)len,
                                        WOLFSSL_FILETYPE_ASN1);
    ua_wolf_time_reset();
    return ua_wolf_cm_rc(r);
}

static int
ua_wolf_cm_verify_op(struct ua_crypto_cm *cm, const uint8_t *der, size_t len,
                     int64_t when)
{
    int r;

    if (cm == NULL || der == NULL || len == 0 || len > INT_MAX)
        return UA_X509_FAIL;
    ua_wolf_time_set(when);
    r = wolfSSL_CertManagerVerifyBuffer((WOLFSSL_CERT_MANAGER *)(void *)cm,
                                        der, (long)len,
                                        WOLFSSL_FILETYPE_ASN1);
    ua_wolf_time_reset();
    return ua_wolf_cm_rc(r);
}

int
ua_crypto_cm_verify(struct ua_crypto_cm *cm, const uint8_t *der, size_t len,
                    int64_t when)
{
    uint64_t t0 = ua_wolf_rsa_begin();
    int r = ua_wolf_cm_verify_op(cm, der, len, when);

    ua_wolf_rsa_end(t0);
    return r;
}

int
ua_crypto_cm_add_crl(struct ua_crypto_cm *cm, const uint8_t *der,
                     size_t len, int64_t when)
{
    WOLFSSL_CERT_MANAGER *m = (WOLFSSL_CERT_MANAGER *)(void *)cm;
    int                   r;

    if (cm == NULL || der == NULL || len == 0 || len > INT_MAX)
        return UA_X509_FAIL;
    if (wolfSSL_CertManagerEnableCRL(m, WOLFSSL_CRL_CHECKALL)
        != WOLFSSL_SUCCESS)
        return UA_X509_FAIL;
    ua_wolf_time_set(when);
    r = wolfSSL_CertManagerLoadCRLBuffer(m, der, (long)len,
                                         WOLFSSL_FILETYPE_ASN1);
    ua_wolf_time_reset();
    return ua_wolf_cm_rc(r);
}

int
ua_crypto_cm_check_crl(struct ua_crypto_cm *cm, const uint8_t *der,
                       size_t len, int64_t when)
{
    int r;

    if (cm == NULL || der == NULL || len == 0 || len > INT_MAX)
        return UA_X509_FAIL;
    ua_wolf_time_set(when);
    /* wolfSSL only reads the buffer; its prototype lacks the const. */
    r = wolfSSL_CertManagerCheckCRL((WOLFSSL_CERT_MANAGER *)(void *)cm,
                                    (unsigned char *)(uintptr_t)der,
                                    (int)len);
    ua_wolf_time_reset();
    return ua_wolf_cm_rc(r);
}

/* ------------------------------------------------------------ creation */

/* Copy s into a CertName field of CTC_NAME_SIZE bytes. */
static bool
ua_wolf_name_set(char *dst, char *enc, const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= CTC_NAME_SIZE)
        return false;
    memcpy(dst, s, n + 1);
    *enc = CTC_UTF8;
    return true;
}

ua_status
ua_crypto_x509_make_self(const struct ua_x509_req *r,
                         struct ua_crypto_key *key, uint8_t *out, size_t cap,
                         size_t *len)
{
    struct ua_wolf_key *w = ua_wolf_key(key);
    Cert               *cert;
    WC_RNG             *rng;
    ua_status           rc = UA_BAD_INTERNAL_ERROR;
    int                 n;

    if (r == NULL || w == NULL || !w->priv || out == NULL || len == NULL
        || r->cn == NULL || r->san == NULL || r->san_len == 0
        || r->san_len > CTC_MAX_ALT_SIZE || r->not_before == NULL
        || r->not_before_len > CTC_DATE_SIZE || r->not_after == NULL
        || r->not_after_len > CTC_DATE_SIZE || r->serial == NULL
        || r->serial_len == 0 || r->serial_len > CTC_SERIAL_SIZE
        || cap > INT_MAX)
        return UA_BAD_INVALID_ARGUMENT;
    rng = ua_wolf_rng();
    if (rng == NULL)
        return UA_BAD_INTERNAL_ERROR;
    /* 25 KB: not for the stack; certificate creation is a cold path. */
    cert = calloc(1, sizeof(*cert));
    if (cert == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    if (wc_InitCert(cert) != 0)
        goto done;
    rc = UA_BAD_INVALID_ARGUMENT;
    if (!ua_wolf_name_set(cert->subject.commonName,
                          &cert->subject.commonNameEnc, r->cn))
        goto done;
    if (r->org != NULL
        && !ua_wolf_name_set(cert->subject.org, &cert->subject.orgEnc,
                             r->org))
        goto done;
    if (r->dc != NULL) {
        size_t dl = strlen(r->dc);

        if (dl == 0 || dl >= CTC_NAME_SIZE)
            goto done;
        cert->subject.name[0].id = ASN_DOMAIN_COMPONENT;
        cert->subject.name[0].type = CTC_UTF8;
        cert->subject.name[0].sz = (int)dl;
        memcpy(cert->subject.name[0].value, r->dc, dl);
    }
    rc = UA_BAD_INTERNAL_ERROR;
    cert->version = 2;                  /* X.509 v3 */
    cert->sigType = CTC_SHA256wRSA;
    cert->isCA = 0;
    cert->basicConstSet = 1;            /* writes CA:FALSE */
    memcpy(cert->serial, r->serial, r->serial_len);
    cert->serialSz = (int)r->serial_len;
    memcpy(cert->altNames, r->san, r->san_len);
    cert->altNamesSz = (int)r->san_len;
    memcpy(cert->beforeDate, r->not_before, r->not_before_len);
    cert->beforeDateSz = (int)r->not_before_len;
    memcpy(cert->afterDate, r->not_after, r->not_after_len);
    cert->afterDateSz = (int)r->not_after_len;
    if ((r->key_usage != NULL && wc_SetKeyUsage(cert, r->key_usage) != 0)
        || (r->ext_key_usage != NULL
            && wc_SetExtKeyUsage(cert, r->ext_key_usage) != 0)
        || wc_SetSubjectKeyIdFromPublicKey(cert, w->rsa, NULL) != 0
        || wc_SetAuthKeyIdFromPublicKey(cert, w->rsa, NULL) != 0)
        goto done;
    if (wc_RsaSetRNG(w->rsa, rng) != 0)
        goto done;
    n = wc_MakeSelfCert(cert, out, (word32)cap, w->rsa, rng);
    if (n == BUFFER_E) {
        rc = UA_BAD_ENCODING_LIMITS_EXCEEDED;
        goto done;
    }
    if (n <= 0)
        goto done;
    *len = (size_t)n;
    rc = UA_GOOD;
done:
    free(cert);
    return rc;
}

/* ------------------------------------------------------------ PEM */

ua_status
ua_crypto_pem_from_der(const uint8_t *der, size_t len, char *out,
                       size_t cap, size_t *out_len)
{
    int r;

    if (der == NULL || out == NULL || out_len == NULL || len == 0
        || len > INT_MAX || cap < 2)
        return UA_BAD_INVALID_ARGUMENT;
    if (cap > INT_MAX)
        cap = INT_MAX;
    r = wc_DerToPem(der, (word32)len, (byte *)out, (word32)(cap - 1),
                    CERT_TYPE);
    if (r <= 0)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    out[r] = '\0';
    *out_len = (size_t)r;
    return UA_GOOD;
}

ua_status
ua_crypto_pem_to_der(const char *pem, size_t len, uint8_t *out, size_t cap,
                     size_t *out_len)
{
    int r;

    if (pem == NULL || out == NULL || out_len == NULL || len == 0
        || len > INT_MAX)
        return UA_BAD_INVALID_ARGUMENT;
    if (cap > INT_MAX)
        cap = INT_MAX;
    r = wc_CertPemToDer((const unsigned char *)pem, (int)len, out, (int)cap,
                        CERT_TYPE);
    if (r == BUFFER_E)
        return UA_BAD_ENCODING_LIMITS_EXCEEDED;
    if (r <= 0)
        return UA_BAD_DECODING_ERROR;
    *out_len = (size_t)r;
    return UA_GOOD;
}
