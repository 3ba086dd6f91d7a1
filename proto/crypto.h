/*
 * proto/crypto.h: the OPC UA security policies (Part 7, Part 6 §6.1/§6.7)
 * behind a vtable, and the cryptographic primitives they stand on.
 *
 * Three layers, all declared here and free of any wolfSSL type:
 *
 *   struct ua_policy    one entry per SecurityPolicyUri: the lengths Part 7
 *                       fixes and a vtable of the operations a secure
 *                       channel needs (asymmetric sign/verify/encrypt/decrypt
 *                       for OpenSecureChannel and session signatures,
 *                       symmetric sign/verify/encrypt/decrypt per chunk, key
 *                       derivation).  The table is in proto/crypto.c.
 *   primitives          RSA keys and RSA operations, hashes, HMAC, P_hash,
 *                       the per-channel cipher context, random bytes.  Their
 *                       only implementation is proto/crypto_wolf.c, the one
 *                       file that includes wolfSSL (docs/style.md §1).
 *   pure helpers        constant-time comparison, the padding footer of
 *                       Part 6 §6.7.2.5, chunk body sizes, RSA block sizes
 *                       (proto/crypto.c; no I/O, no state).
 *
 * Process state: the random number generator.  ua_crypto_init() makes it; every
 * process calls it after exec.  A WC_RNG copied by fork() would give parent and
 * child the same bytes (docs/dependencies.md gotcha 3): ua_crypto_random() and
 * every private-key operation notice a changed pid and re-create it first, and
 * ua_crypto_reseed() does so on request.  Not thread-safe: one thread per
 * process uses crypto (docs/architecture.md §1).
 *
 * Keys and cipher contexts are caller-owned storage of a public size with
 * private contents (like struct sockaddr_storage): a channel embeds them, so
 * nothing is allocated per chunk (docs/architecture.md §4).  The storage starts
 * zeroed (static, calloc'd, "= { 0 }") or _clear'ed; a successful
 * _load/_generate/_init makes it live, and doing that again on live storage
 * replaces (frees) what it held; _clear frees and wipes it.  Operations on
 * storage that is not live fail with UA_BAD_INVALID_ARGUMENT.
 *
 * Errors are OPC UA status codes:
 *   UA_BAD_INVALID_ARGUMENT         a length or parameter the operation
 *                                   cannot take (not a multiple of the block,
 *                                   a public key for a private operation, ...)
 *   UA_BAD_ENCODING_LIMITS_EXCEEDED the output buffer is too small
 *   UA_BAD_SECURITY_CHECKS_FAILED   a signature that does not verify, a
 *                                   decryption that fails - one status for
 *                                   every cause, so it is no oracle
 *   UA_BAD_DECODING_ERROR           key bytes that do not parse
 *   UA_BAD_NOT_SUPPORTED            a key size or algorithm not built in
 *   UA_BAD_INTERNAL_ERROR           the RNG or the library failed
 */
#ifndef UA_CRYPTO_H
#define UA_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* ------------------------------------------------------------ process */

/* Initialise the library and this process's RNG.  Idempotent; call once
 * after exec (and after fork, or let the pid check do it). */
ua_status ua_crypto_init(void);

/* Throw the RNG away and make a new one (after fork, or periodically). */
ua_status ua_crypto_reseed(void);

/* Release the RNG and the library; ua_crypto_init() may follow. */
void ua_crypto_cleanup(void);

/* n random bytes from the process RNG (nonces, serial numbers, keys). */
ua_status ua_crypto_random(uint8_t *buf, size_t n);

/*
 * RSA private-key operations this process has done: one per signature
 * (ua_crypto_rsa_sign) and one per ciphertext block decrypted
 * (ua_crypto_rsa_decrypt, _decrypt_block), failed ones included; key generation
 * is not counted.  Each costs ~2 ms at 2048 bits (docs/architecture.md §4): the
 * worker reads this counter to give the loop back after one of them, tests to
 * prove that a step does at most one, the stats to show the load.  Process
 * state like the RNG; wraps never in practice.
 */
uint64_t ua_crypto_private_ops(void);

/*
 * CPU time (ns, this thread's clock) this process has spent inside the
 * RSA operations: ua_crypto_rsa_sign, _verify, _encrypt, _decrypt(_block),
 * ua_crypto_x509_signed_by and ua_crypto_cm_verify (each call timed once,
 * two clock reads).  The worker publishes it, so a benchmark can set the
 * RSA work of a run against the server's whole CPU in that same run.
 */
uint64_t ua_crypto_rsa_cpu_ns(void);

/*
 * The work this process's crypto did, for tests that prove a failure costs
 * what a success costs (no timing oracle, docs/security.md cases 24, 32, 36):
 * symmetric MAC checks and decryptions (calls and bytes), RSA
 * verifications and private-key operations.  Plain counters, process
 * state like the RNG.
 */
struct ua_crypto_work {
    uint64_t mac_checks, mac_bytes;
    uint64_t decrypts, decrypt_bytes;
    uint64_t rsa_verifies;
    uint64_t rsa_private;
};
void ua_crypto_work(struct ua_crypto_work *out);

/* ------------------------------------------------------------ pure */

/* Compare n bytes in time that depends on n only (nonces, MACs). */
bool ua_crypto_memeq(const void *a, const void *b, size_t n);

/* Overwrite n bytes with zeros in a way the compiler keeps. */
void ua_crypto_wipe(void *p, size_t n);

/* ------------------------------------------------------------ hashes */

enum ua_hash {
    UA_HASH_NONE = 0,           /* unknown, or weaker than SHA-1 (MD5) */
    UA_HASH_SHA1,
    UA_HASH_SHA256,
    UA_HASH_SHA384,
    UA_HASH_SHA512
};

#define UA_SHA1_LEN     20
#define UA_SHA256_LEN   32
#define UA_HASH_MAX_LEN 64

/* Digest length of h, 0 for UA_HASH_NONE. */
size_t ua_crypto_hash_len(enum ua_hash h);

/* out gets ua_crypto_hash_len(h) bytes.  SHA-1 of a DER certificate is its
 * thumbprint (Part 6 §6.7.2.3). */
ua_status ua_crypto_hash(enum ua_hash h, const uint8_t *data, size_t len,
                         uint8_t *out);

/* One-shot HMAC (SHA-1 or SHA-256); out gets the digest length. */
/*
 * PBKDF2 with HMAC-SHA256 (RFC 8018) of a password: out_len (1..64) bytes.
 * Salt 1..UA_PBKDF2_SALT_MAX bytes, 1..UA_PBKDF2_ITER_MAX iterations; the
 * work depends only on iterations and out_len, never on the password.
 */
#define UA_PBKDF2_SALT_MAX     64
#define UA_PBKDF2_ITER_MAX     10000000
#define UA_PBKDF2_PASSWORD_MAX 1024
ua_status ua_crypto_pbkdf2(const uint8_t *pw, size_t pw_len,
                           const uint8_t *salt, size_t salt_len,
                           uint32_t iterations, uint8_t *out,
                           size_t out_len);

/*
 * The same PBKDF2-HMAC-SHA256 in steps, for a loop that must not stall
 * (docs/architecture.md §4): _init keys the HMAC states (K ^ ipad, K ^ opad
 * hashed once) and computes U1; each _step runs at most max further iterations
 * (two SHA-256 compressions each) and sets *done with out (out_len bytes) once
 * all are done; the state is then wiped.  One output block: out_len
 * 1..UA_PBKDF2_STEP_OUT_MAX.  No allocation; _clear wipes a state left
 * unfinished (and is harmless on a finished or zeroed one).
 */
#define UA_PBKDF2_STEP_OUT_MAX 32
#define UA_PBKDF2_STATE_SIZE   768

struct ua_pbkdf2 {
    _Alignas(16) unsigned char opaque[UA_PBKDF2_STATE_SIZE];
};

ua_status ua_crypto_pbkdf2_init(struct ua_pbkdf2 *p, const uint8_t *pw,
                                size_t pw_len, const uint8_t *salt,
                                size_t salt_len, uint32_t iterations,
                                size_t out_len);
ua_status ua_crypto_pbkdf2_step(struct ua_pbkdf2 *p, uint32_t max,
                                uint8_t *out, bool *done);
void ua_crypto_pbkdf2_clear(struct ua_pbkdf2 *p);

ua_status ua_crypto_hmac(enum ua_hash h, const uint8_t *key, size_t key_len,
                         const uint8_t *data, size_t len, uint8_t *out);

/*
 * P_SHA1 / P_SHA256 of RFC 5246 §5 (Part 6 §6.7.5): out_len bytes of
 * P_hash(secret, seed), no label.  h is UA_HASH_SHA1 or UA_HASH_SHA256.
 */
ua_status ua_crypto_p_hash(enum ua_hash h, const uint8_t *secret,
                           size_t secret_len, const uint8_t *seed,
                           size_t seed_len, uint8_t *out, size_t out_len);

/* ------------------------------------------------------------ RSA keys */

/* Storage for one RSA key, private or public: the public half as bytes
 * (up to UA_RSA_MAX_BYTES of modulus) plus a header; a private key also
 * owns a heap copy of wolfSSL's RsaKey (8.7 KB, with its CRT parameters),
 * made when it is loaded or generated and freed by ua_crypto_key_clear.
 * crypto_wolf.c checks the size at compile time. */
#define UA_CRYPTO_KEY_SIZE 544

struct ua_crypto_key {
    _Alignas(16) unsigned char opaque[UA_CRYPTO_KEY_SIZE];
};

/* RSA key sizes this build handles (wolfSSL's RSA_MAX_SIZE is 4096). */
#define UA_RSA_MIN_BITS 1024
#define UA_RSA_MAX_BITS 4096
#define UA_RSA_MAX_BYTES (UA_RSA_MAX_BITS / 8)

/*
 * Load a private key: DER or PEM, PKCS#1 (RSAPrivateKey) or PKCS#8
 * (unencrypted PrivateKeyInfo).  The process RNG is attached to it
 * (wolfSSL's RSA blinding needs one, docs/dependencies.md gotcha 2).  Keys
 * outside UA_RSA_MIN_BITS..UA_RSA_MAX_BITS are refused (BadNotSupported).
 */
ua_status ua_crypto_key_load(struct ua_crypto_key *k, const uint8_t *buf,
                             size_t len);

/* Load a public key: DER SubjectPublicKeyInfo or PKCS#1 RSAPublicKey. */
ua_status ua_crypto_key_load_public(struct ua_crypto_key *k,
                                    const uint8_t *der, size_t len);

/* The public key of a DER X.509 certificate (the leaf of a chain: only the
 * first certificate in buf is read). */
ua_status ua_crypto_key_from_cert(struct ua_crypto_key *k,
                                  const uint8_t *der, size_t len);

/* A fresh private key of bits (1024..4096, a multiple of 8), e = 65537.
 * Slow: 0.1-0.3 s at 2048 bits, seconds at 4096. */
ua_status ua_crypto_key_generate(struct ua_crypto_key *k, unsigned bits);

/* Write the private key as PKCS#1 DER, or PEM ("RSA PRIVATE KEY") with a
 * terminating NUL counted out of *len. */
ua_status ua_crypto_key_write(struct ua_crypto_key *k, bool pem,
                              uint8_t *out, size_t cap, size_t *len);

/* Modulus size in bits / bytes; 0 for a cleared key. */
unsigned ua_crypto_key_bits(const struct ua_crypto_key *k);
size_t ua_crypto_key_bytes(const struct ua_crypto_key *k);
bool ua_crypto_key_is_private(const struct ua_crypto_key *k);

/* Free and wipe; harmless on a cleared or zeroed key. */
void ua_crypto_key_clear(struct ua_crypto_key *k);

/* ------------------------------------------------------------ RSA ops */

enum ua_rsa_sig {
    UA_RSA_SIG_PKCS1_SHA1 = 0,  /* Basic128Rsa15, Basic256 (deprecated) */
    UA_RSA_SIG_PKCS1_SHA256,    /* Basic256Sha256, Aes128_Sha256_RsaOaep */
    UA_RSA_SIG_PSS_SHA256       /* Aes256_Sha256_RsaPss: MGF1-SHA256, salt 32 */
};

enum ua_rsa_enc {
    UA_RSA_ENC_PKCS1 = 0,       /* RSAES-PKCS1-v1_5: Basic128Rsa15 only */
    UA_RSA_ENC_OAEP_SHA1,       /* RSAES-OAEP, SHA-1, MGF1-SHA1 */
    UA_RSA_ENC_OAEP_SHA256      /* RSAES-OAEP, SHA-256, MGF1-SHA256 */
};

/* Bytes of padding per RSA block: 11 (PKCS#1 v1.5), 42 (OAEP SHA-1), 66
 * (OAEP SHA-256). */
size_t ua_crypto_rsa_overhead(enum ua_rsa_enc e);

/* Plaintext bytes per block for a key of key_bytes (214 for OAEP SHA-1 at
 * 2048 bits, 190 for OAEP SHA-256); 0 when the key is too small. */
size_t ua_crypto_rsa_plain_block(enum ua_rsa_enc e, size_t key_bytes);

/* Ciphertext length of plain_len bytes: one key_bytes block per started
 * plaintext block; 0 when the key is too small. */
size_t ua_crypto_rsa_cipher_len(enum ua_rsa_enc e, size_t key_bytes,
                                size_t plain_len);

/*
 * Sign data (hashed here) with a private key.  The signature is exactly
 * ua_crypto_key_bytes(k) long; PKCS#1 v1.5 signatures are deterministic,
 * PSS ones are salted with 32 random bytes.
 */
ua_status ua_crypto_rsa_sign(struct ua_crypto_key *k, enum ua_rsa_sig a,
                             const uint8_t *data, size_t len, uint8_t *sig,
                             size_t cap, size_t *sig_len);

/* UA_GOOD or UA_BAD_SECURITY_CHECKS_FAILED (also for a wrong length). */
ua_status ua_crypto_rsa_verify(struct ua_crypto_key *k, enum ua_rsa_sig a,
                               const uint8_t *data, size_t len,
                               const uint8_t *sig, size_t sig_len);

/*
 * Encrypt len bytes with a public (or private) key, OPC UA style (Part 6
 * §6.7.4): the plaintext is cut into blocks of ua_crypto_rsa_plain_block()
 * bytes, each encrypted on its own, the ciphertexts concatenated.  out may
 * be in itself (in place: the buffer must hold the longer ciphertext) or
 * must not overlap in.  *out_len = ua_crypto_rsa_cipher_len().
 */
ua_status ua_crypto_rsa_encrypt(struct ua_crypto_key *k, enum ua_rsa_enc a,
                                const uint8_t *in, size_t len, uint8_t *out,
                                size_t cap, size_t *out_len);

/*
 * Decrypt len bytes (a multiple of the key size) in place with a private
 * key; the plaintext blocks are packed at buf, *out_len bytes.  Every block
 * is decrypted even after one failed, the buffer is wiped on failure, and
 * every failure is UA_BAD_SECURITY_CHECKS_FAILED: no padding oracle beyond
 * what wolfSSL's own timing leaks (PKCS#1 v1.5 decryption is inherently an
 * oracle, which is why Basic128Rsa15 is off by default; docs/security.md
 * "Attack classes" 12).
 */
ua_status ua_crypto_rsa_decrypt(struct ua_crypto_key *k, enum ua_rsa_enc a,
                                uint8_t *buf, size_t len, size_t *out_len);

/*
 * One block of ua_crypto_rsa_decrypt(), for a caller that spreads a long
 * ciphertext over several loop callbacks (one private-key operation
 * each): decrypt block i of buf[0..len) in place and append its plaintext
 * at buf + *pos (*pos += its length).  Call for i = 0, 1, ... len / key
 * bytes - 1 in order, starting with *pos = 0 and *bad = false.  A block
 * that fails appends nothing and sets *bad; the caller goes on with the
 * next block (the same work either way) and wipes buf at the end when *bad.
 * UA_BAD_INVALID_ARGUMENT for a public key, a bad i or *pos; else UA_GOOD.
 */
ua_status ua_crypto_rsa_decrypt_block(struct ua_crypto_key *k,
                                      enum ua_rsa_enc a, uint8_t *buf,
                                      size_t len, size_t i, size_t *pos,
                                      bool *bad);

/* ------------------------------------------------------------ policies */

enum ua_policy_id {
    UA_POLICY_NONE = 0,
    UA_POLICY_BASIC128RSA15,            /* deprecated, off by default */
    UA_POLICY_BASIC256,                 /* deprecated, off by default */
    UA_POLICY_BASIC256SHA256,
    UA_POLICY_AES128_SHA256_RSAOAEP,
    UA_POLICY_AES256_SHA256_RSAPSS,
    UA_POLICY_COUNT
};

#define UA_POLICY_URI_BASE "http://opcfoundation.org/UA/SecurityPolicy#"

/* Limits of every policy's symmetric part (AES-256 keys, HMAC-SHA256). */
#define UA_SYM_KEY_MAX   32
#define UA_SYM_BLOCK_MAX 16
#define UA_SYM_SIG_MAX   32
#define UA_NONCE_MAX     32

struct ua_cipher;
struct ua_sym_keys;

/*
 * One security policy.  For UA_POLICY_NONE every operation is NULL and
 * every length 0; check ua_crypto_policy_is_none() (or the pointer) before
 * calling one.  asym_* take a key whose size the caller has checked against
 * min_key_bits..max_key_bits.
 */
struct ua_policy {
    const char *uri;                /* SecurityPolicyUri */
    const char *name;               /* "Basic256Sha256" */
    uint8_t     id;                 /* enum ua_policy_id */
    bool        deprecated;         /* Basic128Rsa15, Basic256 */
    bool        enabled_by_default; /* offered unless configured otherwise */
    /* Part 7 algorithm URIs: SignatureData.algorithm of session
     * signatures and the EncryptionAlgorithm of secrets in user tokens. */
    const char *asym_sig_uri;
    const char *asym_enc_uri;
    uint8_t     asym_sig;           /* enum ua_rsa_sig */
    uint8_t     asym_enc;           /* enum ua_rsa_enc */
    uint8_t     sym_hash;           /* enum ua_hash: the HMAC and P_hash */
    uint8_t     sym_sig_key_len;    /* DerivedSignatureKeyLength / 8 */
    uint8_t     sym_enc_key_len;    /* AES key: 16 or 32 */
    uint8_t     sym_block_len;      /* AES block and IV: 16 */
    uint8_t     sym_sig_len;        /* HMAC output: 20 or 32 */
    uint8_t     nonce_len;          /* SecureChannelNonceLength */
    uint16_t    min_key_bits;       /* MinAsymmetricKeyLength */
    uint16_t    max_key_bits;       /* MaxAsymmetricKeyLength */
    uint8_t     cert_min_hash;      /* weakest certificate signature hash
                                     * (enum ua_hash): SHA-1 for the
                                     * deprecated policies, else SHA-256 */

    /* Asymmetric: see ua_crypto_rsa_*; the algorithm is the policy's. */
    ua_status (*asym_sign)(struct ua_crypto_key *priv, const uint8_t *data,
                           size_t len, uint8_t *sig, size_t cap,
                           size_t *sig_len);
    ua_status (*asym_verify)(struct ua_crypto_key *pub, const uint8_t *data,
                             size_t len, const uint8_t *sig, size_t sig_len);
    ua_status (*asym_encrypt)(struct ua_crypto_key *pub, const uint8_t *in,
                              size_t len, uint8_t *out, size_t cap,
                              size_t *out_len);
    ua_status (*asym_decrypt)(struct ua_crypto_key *priv, uint8_t *buf,
                              size_t len, size_t *out_len);
    /* Symmetric: see ua_crypto_cipher_*. */
    ua_status (*sym_sign)(struct ua_cipher *c, const uint8_t *data,
                          size_t len, uint8_t *sig);
    ua_status (*sym_verify)(struct ua_cipher *c, const uint8_t *data,
                            size_t len, const uint8_t *sig);
    ua_status (*sym_encrypt)(struct ua_cipher *c, uint8_t *buf, size_t len);
    ua_status (*sym_decrypt)(struct ua_cipher *c, uint8_t *buf, size_t len);
    /* Key derivation: P_SHA256 (P_SHA1 for the deprecated policies). */
    ua_status (*derive)(const uint8_t *secret, size_t secret_len,
                        const uint8_t *seed, size_t seed_len, uint8_t *out,
                        size_t out_len);
};

/* The policy with this SecurityPolicyUri (bytes from the wire, exact
 * match), or NULL.  Disabled ones are found too: offering is config. */
const struct ua_policy *ua_crypto_policy_find(const uint8_t *uri,
                                              size_t len);

/* The policy with this id, NULL when out of range. */
const struct ua_policy *ua_crypto_policy_get(unsigned id);

static inline bool
ua_crypto_policy_is_none(const struct ua_policy *p)
{
    return p == NULL || p->id == UA_POLICY_NONE;
}

/* Whether a key of bits is within the policy's MinAsymmetricKeyLength ..
 * MaxAsymmetricKeyLength (always false for None). */
bool ua_crypto_policy_key_ok(const struct ua_policy *p, unsigned bits);

/* ------------------------------------------------------------ sym keys */

/* The keys of one direction of one security token (Part 6 §6.7.5). */
struct ua_sym_keys {
    uint8_t sign[UA_SYM_KEY_MAX];
    uint8_t enc[UA_SYM_KEY_MAX];
    uint8_t iv[UA_SYM_BLOCK_MAX];
    uint8_t sign_len;
    uint8_t enc_len;
    uint8_t iv_len;
};

/*
 * SigningKey | EncryptingKey | InitializationVector = P_hash(secret, seed),
 * cut at the policy's lengths (Part 6 §6.7.5 Table 61).
 */
ua_status ua_crypto_sym_keys_derive(const struct ua_policy *p,
                                    const uint8_t *secret, size_t secret_len,
                                    const uint8_t *seed, size_t seed_len,
                                    struct ua_sym_keys *out);

/*
 * Both directions of a token: the client's keys (what the client signs and
 * encrypts with) are P_hash(serverNonce, clientNonce), the server's
 * P_hash(clientNonce, serverNonce).  Either output may be NULL.
 */
ua_status ua_crypto_channel_keys(const struct ua_policy *p,
                                 const uint8_t *client_nonce, size_t cn_len,
                                 const uint8_t *server_nonce, size_t sn_len,
                                 struct ua_sym_keys *client,
                                 struct ua_sym_keys *server);

void ua_crypto_sym_keys_clear(struct ua_sym_keys *k);

/* ------------------------------------------------------------ cipher */

/* Storage for one token's symmetric state: for each direction one AES
 * object (encrypting for what we send, decrypting for what we receive),
 * one HMAC object and the IV (wolfSSL's Aes is 1104 bytes, Hmac 896). */
#define UA_CIPHER_SIZE 4352

struct ua_cipher {
    _Alignas(16) unsigned char opaque[UA_CIPHER_SIZE];
};

/*
 * Key the context once per token: local = the keys we send with (for a
 * server, the server keys), remote = the keys the peer sends with.  The
 * AES and HMAC objects made here serve every chunk until _clear; the IV is
 * reset for every message (OPC UA uses the token's IV for each chunk, and a
 * wolfSSL Aes object would otherwise chain on, docs/dependencies.md gotcha 5).
 */
ua_status ua_crypto_cipher_init(struct ua_cipher *c,
                                const struct ua_policy *p,
                                const struct ua_sym_keys *local,
                                const struct ua_sym_keys *remote);

void ua_crypto_cipher_clear(struct ua_cipher *c);

/* HMAC of data with the local signing key; sig gets p->sym_sig_len. */
ua_status ua_crypto_cipher_sign(struct ua_cipher *c, const uint8_t *data,
                                size_t len, uint8_t *sig);

/* HMAC with the remote signing key, compared in constant time:
 * UA_GOOD or UA_BAD_SECURITY_CHECKS_FAILED. */
ua_status ua_crypto_cipher_verify(struct ua_cipher *c, const uint8_t *data,
                                  size_t len, const uint8_t *sig);

/* AES-CBC in place, no padding (len a multiple of 16, else
 * UA_BAD_INVALID_ARGUMENT): encrypt with the local key and IV, decrypt
 * with the remote ones. */
ua_status ua_crypto_cipher_encrypt(struct ua_cipher *c, uint8_t *buf,
                                   size_t len);
ua_status ua_crypto_cipher_decrypt(struct ua_cipher *c, uint8_t *buf,
                                   size_t len);

/* The policy the context was keyed for (NULL when cleared). */
const struct ua_policy *ua_crypto_cipher_policy(const struct ua_cipher *c);

/* ------------------------------------------------------------ padding */

/*
 * The footer of an encrypted chunk, Part 6 §6.7.2.5 (Table 57):
 *
 *   ... body | PaddingSize | Padding (PaddingSize bytes) | [ExtraPaddingSize]
 *       | Signature
 *
 * where every Padding byte equals PaddingSize, ExtraPaddingSize is the high
 * byte of the 16-bit padding count and is present only when the encrypting
 * key is larger than 2048 bits (ua_crypto_padding_extra(); never for
 * AES).  The encrypted part (sequence header .. signature) must be a
 * multiple of the plaintext block size.
 */

/* true when key_bits > 2048: the footer carries ExtraPaddingSize. */
bool ua_crypto_padding_extra(unsigned key_bits);

/*
 * The number of Padding bytes (0 .. block-1) for plain_len bytes of
 * encrypted part before the footer (sequence header + body), a signature of
 * sig_len and a plaintext block of block bytes.  This is the smallest count
 * that satisfies Part 6's congruence; its formula PlainTextBlockSize -
 * ((BytesToWrite + SignatureSize + 1) % PlainTextBlockSize) gives the same
 * except a whole extra block where the remainder is 0, and a chunk filled
 * to MaxBodySize must carry PaddingSize 0.
 */
size_t ua_crypto_padding_len(size_t plain_len, size_t sig_len, size_t block,
                             bool extra);

/* Write the footer for n Padding bytes at p: n + 1 (+ 1 with extra) bytes,
 * returned.  n must be < 256 without extra, < 65536 with. */
size_t ua_crypto_padding_write(uint8_t *p, size_t n, bool extra);

/*
 * Check the footer that ends at p + len (len = everything before the
 * signature, after decryption and signature verification) and give its
 * size in *footer_len (Padding + size bytes), so the body ends at
 * p + len - *footer_len.  Any inconsistency (a count larger than len, a
 * Padding byte that differs) is UA_BAD_SECURITY_CHECKS_FAILED; never reads
 * outside p[0..len).
 */
ua_status ua_crypto_padding_check(const uint8_t *p, size_t len, bool extra,
                                  size_t *footer_len);

/*
 * The largest body (bytes after the sequence header) one encrypted chunk
 * can carry: the encrypted part after the unencrypted header_len bytes
 * (message header + security header) fills floor((chunk_size - header_len)
 * / cipher_block) blocks, less the sequence header (8), the signature and
 * the padding size byte(s) with zero Padding.  0 when nothing fits.
 */
size_t ua_crypto_max_body(size_t chunk_size, size_t header_len,
                          size_t sig_len, size_t plain_block,
                          size_t cipher_block, bool extra);

#endif /* UA_CRYPTO_H */
