/*
 * worker/svc_session.c: CreateSession, ActivateSession, CloseSession and
 * Cancel (Part 4 §5.7).  The pool, tokens and binding rules live in
 * worker/session.c; this file maps requests onto them.
 *
 * On a secured channel (Sign, SignAndEncrypt): CreateSession wants the
 * channel's client certificate (thumbprint), a 32..128-byte clientNonce,
 * the ApplicationUri of the certificate, and answers with our certificate
 * and serverSignature = sign(clientCertificate || clientNonce) (Part 4
 * §5.6.2, legacy form); ActivateSession verifies clientSignature over
 * (serverCertificate || last serverNonce) with the client's key, on a
 * channel of the same certificate.  UserName tokens against the users
 * table, X509 tokens against trusted_users/; roles in session->user.
 */
#include "svc_session.h"

#include <errno.h>
#include <string.h>

#include "audit.h"
#include "login.h"
#include "node.h"
#include "pki.h"
#include "proto/cert.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "roam.h"
#include "session.h"
#include "shm/log.h"
#include "shm/throttle.h"
#include "svc.h"
#include "svc_discovery.h"

#define WK_NONCE_MIN        32      /* Part 4 §5.7.2 clientNonce */
#define WK_NONCE_MAX        128
#define WK_POLICY_ANONYMOUS "anonymous"     /* svc_discovery.c offers it */
#define WK_ANON_BINARY \
    UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY
#define WK_POLICY_USERNAME  "username"      /* svc_discovery.c offers it */
#define WK_POLICY_X509      "x509"          /* svc_discovery.c offers it */
#define WK_RSA15_URI        "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
#define WK_DUMMY_ITERATIONS   10000         /* BK_USERS_ITERATIONS */
/* PBKDF2 iterations per loop step: ~1.5 ms of one core here (~0.6 µs
 * each: two SHA-256 compressions), under one RSA-2048 private-key
 * operation (~2 ms, docs/architecture.md §4). */
#define WK_PBKDF2_SLICE       2500
#define WK_SECRET_MAX         4096          /* encrypted password bytes */

static ua_status wk_svc_identity(struct wk_svc_ctx *ctx,
                                 struct wk_session *s,
                                 const struct ua_extobj *x,
                                 const struct ua_signature_data *sig,
                                 enum wk_session_user *user);
static ua_status wk_svc_x509(struct wk_svc_ctx *ctx, struct wk_session *s,
                             const struct ua_x509_identity_token *t,
                             const struct ua_signature_data *sig,
                             enum wk_session_user *user);
static uint64_t wk_svc_client_key(const struct wk_svc_ctx *ctx,
                                  const struct ua_string *uri);
static bool wk_svc_throttle_fail(struct wk_svc_ctx *ctx, uint64_t key,
                                 uint32_t threshold);
static ua_status wk_svc_username_decrypt(
    struct wk_svc_ctx *ctx, struct wk_session *s,
    const struct ua_user_name_identity_token *t, struct wk_login *l,
    bool held);
static ua_status wk_svc_username_step(struct wk_svc_ctx *ctx,
                                      struct wk_session *s,
                                      struct wk_login *l,
                                      enum wk_session_user *user);
static ua_status wk_svc_username(struct wk_svc_ctx *ctx,
                                 struct wk_session *s,
                                 const struct ua_user_name_identity_token *t,
                                 enum wk_session_user *user);
static struct ua_string wk_svc_nonce(struct wk_svc_ctx *ctx,
                                     const struct wk_session *s);
static bool wk_svc_secured(const struct wk_svc_ctx *ctx);
static ua_status wk_svc_session_cert(struct wk_svc_ctx *ctx,
                                     const struct ua_create_session_request
                                         *req,
                                     struct wk_session *s,
                                     struct ua_create_session_response *resp);
static ua_status wk_svc_client_signature(struct wk_svc_ctx *ctx,
                                         const struct wk_session *s,
                                         const struct ua_signature_data *sd);
static uint64_t wk_svc_login_tag(const struct wk_svc_ctx *ctx);
static void wk_svc_create_session_do(struct wk_svc_ctx *ctx,
                                     const struct ua_create_session_request
                                         *req,
                                     struct ua_create_session_response *resp);
static void wk_svc_create_session(struct wk_svc_ctx *ctx, const void *req,
                                  void *resp);
static void wk_svc_activate_session_do(
    struct wk_svc_ctx *ctx, const struct ua_activate_session_request *req,
    struct ua_activate_session_response *resp);
static void wk_svc_activate_session(struct wk_svc_ctx *ctx, const void *req,
                                    void *resp);
static void wk_svc_close_session(struct wk_svc_ctx *ctx, const void *req,
                                 void *resp);
static void wk_svc_cancel(struct wk_svc_ctx *ctx, const void *req,
                          void *resp);

int
wk_svc_session_init(struct wk_worker *w)
{
    if (wk_svc_register(w,
                        UA_NS0ID_CREATESESSIONREQUEST_ENCODING_DEFAULTBINARY,
                        wk_svc_create_session, NULL, NULL) != 0
        || wk_svc_register(
               w, UA_NS0ID_ACTIVATESESSIONREQUEST_ENCODING_DEFAULTBINARY,
               wk_svc_activate_session, NULL, NULL) != 0
        || wk_svc_register(w,
                           UA_NS0ID_CLOSESESSIONREQUEST_ENCODING_DEFAULTBINARY,
                           wk_svc_close_session, NULL, NULL) != 0
        || wk_svc_register(w, UA_NS0ID_CANCELREQUEST_ENCODING_DEFAULTBINARY,
                           wk_svc_cancel, NULL, NULL) != 0)
        return -EINVAL;
    return 0;
}

/* The request's peer-address key for failed logins, 0: none. */
static uint64_t
wk_svc_login_tag(const struct wk_svc_ctx *ctx)
{
    return ctx->rq != NULL ? ctx->rq->login_tag : 0;
}

static bool
wk_svc_secured(const struct wk_svc_ctx *ctx)
{
    return !ua_crypto_policy_is_none(ctx->ch->policy)
           && ctx->w->sc_conf.key != NULL && ctx->w->sc_conf.cert != NULL;
}

/*
 * CreateSession on a secured channel: the client certificate is the
 * channel's (BadCertificateInvalid), its SAN URI the clientDescription's
 * ApplicationUri (BadCertificateUriInvalid); keep the leaf in the session;
 * sign clientCertificate || clientNonce with our key.
 */
static ua_status
wk_svc_session_cert(struct wk_svc_ctx *ctx,
                    const struct ua_create_session_request *req,
                    struct wk_session *s,
                    struct ua_create_session_response *resp)
{
    const struct ua_policy *p = ctx->ch->policy;
    const struct ua_sc_config *sc = &ctx->w->sc_conf;
    struct ua_cert_der      chain[UA_CERT_CHAIN_MAX];
    struct ua_cert          cert;
    uint8_t                 thumb[UA_CERT_THUMB_LEN];
    const struct ua_string *cc = &req->client_certificate;
    const struct ua_string *cn = &req->client_nonce;
    const struct ua_string *uri = &req->client_description.application_uri;
    size_t                  n = 0, len, siglen;
    uint8_t                *data, *sig;

    if (cc->len <= 0
        || ua_cert_chain_split(cc->data, (size_t)cc->len, chain,
                               UA_CERT_CHAIN_MAX, &n) != UA_GOOD
        || n == 0 || chain[0].len > WK_SESSION_CERT_MAX
        || ua_cert_thumbprint(chain[0].der, chain[0].len, thumb) != UA_GOOD
        || !ua_crypto_memeq(thumb, ctx->ch->peer_thumb, sizeof(thumb))
        || ua_cert_parse(chain[0].der, chain[0].len, &cert) != UA_GOOD)
        return UA_BAD_CERTIFICATE_INVALID;
    if (uri->len <= 0
        || !ua_cert_has_uri(&cert, uri->data, (size_t)uri->len))
        return UA_BAD_CERTIFICATE_URI_INVALID;
    len = (size_t)cc->len + (size_t)cn->len;
    data = ua_arena_alloc(ctx->arena, len);
    sig = ua_arena_alloc(ctx->arena, UA_RSA_MAX_BYTES);
    if (data == NULL || sig == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(data, cc->data, (size_t)cc->len);
    memcpy(data + cc->len, cn->data, (size_t)cn->len);
    if (p->asym_sign(sc->key, data, len, sig, UA_RSA_MAX_BYTES, &siglen)
        != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    memcpy(s->cert, chain[0].der, chain[0].len);
    s->cert_len = (uint16_t)chain[0].len;
    memcpy(s->cert_thumb, thumb, sizeof(thumb));
    resp->server_certificate.len = (int32_t)sc->cert_len;
    resp->server_certificate.data = (uint8_t *)sc->cert;
    resp->server_signature.algorithm = ua_string_from(p->asym_sig_uri);
    resp->server_signature.signature.len = (int32_t)siglen;
    resp->server_signature.signature.data = sig;
    return UA_GOOD;
}

/*
 * ActivateSession of a session made on a secured channel: the same client
 * certificate on this channel, clientSignature = sign(serverCertificate ||
 * last serverNonce) with the policy's algorithm.
 */
static ua_status
wk_svc_client_signature(struct wk_svc_ctx *ctx, const struct wk_session *s,
                        const struct ua_signature_data *sd)
{
    const struct ua_policy   *p = ctx->ch->policy;
    struct ua_crypto_key     *key;
    const struct ua_sc_config *sc = &ctx->w->sc_conf;
    uint8_t                  *data;
    ua_status                 st;

    if (!wk_svc_secured(ctx)
        || !ua_crypto_memeq(s->cert_thumb, ctx->ch->peer_thumb,
                            sizeof(s->cert_thumb)))
        return UA_BAD_SECURITY_CHECKS_FAILED;
    if (sd->signature.len <= 0 || sd->algorithm.len <= 0
        || !ua_string_eq(&sd->algorithm, p->asym_sig_uri))
        return UA_BAD_APPLICATION_SIGNATURE_INVALID;
    data = ua_arena_alloc(ctx->arena, sc->cert_len + WK_SESSION_NONCE);
    if (data == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(data, sc->cert, sc->cert_len);
    memcpy(data + sc->cert_len, s->nonce, WK_SESSION_NONCE);
    /* s->cert's thumbprint is the channel's leaf's: its key, parsed at
     * the OPN. */
    key = ua_sc_peer_key(ctx->ch);
    st = key == NULL ? UA_BAD_SECURITY_CHECKS_FAILED
                     : p->asym_verify(key, data,
                                      sc->cert_len + WK_SESSION_NONCE,
                                      sd->signature.data,
                                      (size_t)sd->signature.len);
    return st == UA_GOOD ? UA_GOOD : UA_BAD_APPLICATION_SIGNATURE_INVALID;
}

/* The session's current serverNonce, copied into the arena. */
static struct ua_string
wk_svc_nonce(struct wk_svc_ctx *ctx, const struct wk_session *s)
{
    struct ua_string n = { -1, NULL };
    uint8_t         *p = ua_arena_alloc(ctx->arena, WK_SESSION_NONCE);

    if (p != NULL) {
        memcpy(p, s->nonce, WK_SESSION_NONCE);
        n.len = WK_SESSION_NONCE;
        n.data = p;
    }
    return n;
}

/*
 * CreateSession (Part 4 §5.7.2).  clientNonce: on a None channel a client may
 * send none (most do); any nonce it does send must be 32..128 bytes
 * (docs/security.md case 45); on Sign and SignAndEncrypt channels one is
 * required (BadNonceInvalid without).  The session timeout is revised
 * (wk_session_revise_timeout); serverEndpoints is the GetEndpoints list.
 */
static void
wk_svc_create_session_do(struct wk_svc_ctx *ctx,
                         const struct ua_create_session_request *req,
                         struct ua_create_session_response *resp)
{
    struct ua_response_header              *rh = &resp->response_header;
    struct wk_session                      *s;
    int32_t                                 nl = req->client_nonce.len;
    uint64_t                                peer =
        ctx->rq != NULL ? ctx->rq->peer_tag : 0;

    if ((nl > 0 || wk_svc_secured(ctx))
        && (nl < WK_NONCE_MIN || nl > WK_NONCE_MAX)) {
        rh->service_result = UA_BAD_NONCE_INVALID;
        return;
    }
    if (wk_svc_endpoints(ctx, &resp->n_server_endpoints,
                         &resp->server_endpoints) != 0) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    /* One address holds at most limits.max_unactivated_per_address
     * sessions it never activated (docs/security.md case 52). */
    if (wk_session_admit(ctx->w, peer) != UA_GOOD) {
        rh->service_result = UA_BAD_TOO_MANY_SESSIONS;
        return;
    }
    s = wk_session_create(ctx->w, ctx->ch->channel_id,
                          req->requested_session_timeout);
    if (s == NULL) {
        rh->service_result = UA_BAD_TOO_MANY_SESSIONS;
        return;
    }
    s->peer = peer;
    resp->server_nonce = wk_svc_nonce(ctx, s);
    if (resp->server_nonce.len < 0) {
        wk_session_close(ctx->w, s);
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    /* Kept for diagnostics only; never interpreted. */
    if (req->session_name.len > 0 && req->session_name.data != NULL) {
        size_t n = (size_t)req->session_name.len;

        if (n > sizeof(s->name))
            n = sizeof(s->name);
        memcpy(s->name, req->session_name.data, n);
        s->name_len = (uint8_t)n;
    }
    s->max_response = req->max_response_message_size;
    s->client_key = wk_svc_client_key(
        ctx, &req->client_description.application_uri);
    resp->server_certificate.len = -1;
    resp->server_signature.algorithm.len = -1;
    resp->server_signature.signature.len = -1;
    /* Our certificate on None channels too: UserName secrets are
     * encrypted for it (Basic256Sha256 token policy). */
    if (ctx->w->sc_conf.cert != NULL) {
        resp->server_certificate.len = (int32_t)ctx->w->sc_conf.cert_len;
        resp->server_certificate.data = (uint8_t *)ctx->w->sc_conf.cert;
    }
    if (wk_svc_secured(ctx)) {
        ua_status st = wk_svc_session_cert(ctx, req, s, resp);

        if (st != UA_GOOD) {
            wk_session_close(ctx->w, s);
            rh->service_result = st;
            return;
        }
    }
    resp->session_id = wk_session_id(s);
    resp->authentication_token = wk_session_token(s);
    resp->revised_session_timeout = (double)s->timeout_ms;
    resp->n_server_software_certificates = 0;
    resp->max_request_message_size = ctx->w->conf->max_message_size;
}

/*
 * The login throttle's key of a client: the tag of its ApplicationUri in
 * the failure table shared by every worker (shm/throttle.h), so a client
 * gets the same number of tries whichever workers its connections land
 * on.  0 (never throttled) without a table (unit tests).
 */
static uint64_t
wk_svc_client_key(const struct wk_svc_ctx *ctx, const struct ua_string *uri)
{
    struct shm_throttle *t = ctx->w->throttle;

    if (t == NULL)
        return 0;
    return shm_throttle_tag(t, SHM_THR_KEY_CLIENT, uri->data,
                            uri->len > 0 ? (size_t)uri->len : 0);
}

/*
 * Count one failed login of `key` in the shared table (a client's
 * ApplicationUri, threshold security.login_failure_threshold, or a peer
 * address, security.login_failure_ip_threshold; the window and block of
 * security.login_failure_*); true when this failure began its block.
 */
static bool
wk_svc_throttle_fail(struct wk_svc_ctx *ctx, uint64_t key, uint32_t threshold)
{
    struct wk_worker        *w = ctx->w;
    struct shm_throttle_rule r = { threshold,
                                   w->conf->login_failure_window_ms,
                                   w->conf->login_failure_block_ms };
    int                      rc;

    if (w->throttle == NULL || key == 0 || r.threshold == 0)
        return false;
    rc = shm_throttle_fail(w->throttle, key, &r, w->now_ms);
    if (rc == -ENOSPC)
        shm_throttle_count(w->throttle, w->slot, SHM_THR_C_TABLE_FULL);
    if (rc != 1)
        return false;
    shm_throttle_count(w->throttle, w->slot, SHM_THR_C_BLOCKS);
    return true;
}

/*
 * A UserNameIdentityToken (Part 4 §7.41.3): the password encrypted with our key
 * by the channel's policy (or Basic256Sha256, the token policy of our None
 * endpoint), legacy layout length | password | serverNonce.  Every failure
 * after the throttle (a wrong password, an unknown user, a secret that does not
 * decrypt or parse) is BadIdentityTokenRejected (Part 4 Table 176: the token is
 * well-formed but the server refuses it; one code for all, so no user
 * enumeration) after the same work: decryption of every block (when the
 * algorithm and length are acceptable; a block that fails does not stop it),
 * one PBKDF2 (a dummy one for an unknown user, with the first user's iteration
 * count) and a constant-time comparison.  rsa-1_5 is refused without decrypting
 * unless allow_deprecated.  In steps (docs/architecture.md §4): this one makes
 * the checks and starts the login in the connection's struct wk_login, then
 * each dispatch of the held request (ctx->again) decrypts one RSA block of the
 * secret, in place in the held request (wk_svc_username_decrypt); the step of
 * the last block parses it and keys the PBKDF2; each following step runs
 * WK_PBKDF2_SLICE iterations (wk_svc_username_step), the last one compares.
 * Outside a step (no login state) it all runs at once, on a copy of the secret.
 * PBKDF2 output beyond its first block is not computed: a stored hash longer
 * than 32 bytes is compared on its first 32 (block 1 of PBKDF2).  The throttle
 * counts the attempt as a failure when it starts, against the client (its
 * ApplicationUri) and against the peer address (undone when it succeeds: the
 * client's failures are forgotten, the address loses only this attempt's):
 * logins of one client, or of one address under ever new ApplicationUris, in
 * parallel on several connections get no more tries than one after another, and
 * a login cut short by a closed connection counts as failed.
 */
static ua_status
wk_svc_username(struct wk_svc_ctx *ctx, struct wk_session *s,
                const struct ua_user_name_identity_token *t,
                enum wk_session_user *user)
{
    struct wk_pki          *k = ctx->w->pki;
    const struct ua_policy *pol = ctx->ch->policy, *dec = NULL;
    struct wk_login         one, *l = wk_login_of(ctx->w, ctx->rq);
    size_t                  kb;
    uint64_t                now = ctx->w->now_ms;
    uint64_t                ip_key = wk_svc_login_tag(ctx);
    ua_status               st;

    if (l != NULL && l->phase == WK_LOGIN_HASHING)
        return wk_svc_username_step(ctx, s, l, user);
    if (l != NULL && l->phase == WK_LOGIN_DECRYPTING)
        return wk_svc_username_decrypt(ctx, s, t, l, true);
    if (k == NULL)
        return UA_BAD_IDENTITY_TOKEN_REJECTED;      /* not offered */
    if (!ua_string_eq(&t->policy_id, WK_POLICY_USERNAME))
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    /* A blocked client (ApplicationUri) or peer address: refused without
     * any work (Part 4 §5.6.3: BadUserAccessDenied, the user may not log
     * in now; it says nothing about the credentials). */
    if (ctx->w->throttle != NULL
        && ((s->client_key != 0
             && ctx->w->conf->login_failure_threshold != 0
             && shm_throttle_blocked(ctx->w->throttle, s->client_key, now))
            || (ip_key != 0
                && shm_throttle_blocked(ctx->w->throttle, ip_key, now)))) {
        shm_throttle_count(ctx->w->throttle, ctx->w->slot,
                           SHM_THR_C_LOGINS_BLOCKED);
        return UA_BAD_USER_ACCESS_DENIED;
    }
    if (ua_crypto_policy_is_none(pol))
        pol = ua_crypto_policy_get(UA_POLICY_BASIC256SHA256);
    if (ua_string_eq(&t->encryption_algorithm, pol->asym_enc_uri))
        dec = pol;
    else if (ua_string_eq(&t->encryption_algorithm, WK_RSA15_URI)
             && ctx->w->sc_conf.allow_deprecated)
        dec = ua_crypto_policy_get(UA_POLICY_BASIC128RSA15);
    if (l == NULL) {
        memset(&one, 0, sizeof(one));
        l = &one;
    }
    kb = ua_crypto_key_bytes(&k->key);
    l->block = l->blocks = 0;
    l->pos = l->secret_len = 0;
    l->bad = false;
    l->secret = NULL;
    l->ok = !(dec == NULL || kb == 0 || t->password.len <= 0
              || (size_t)t->password.len > WK_SECRET_MAX
              || (size_t)t->password.len % kb != 0);
    if (l->ok) {
        l->enc = dec->asym_enc;
        l->secret_len = (uint32_t)t->password.len;
        l->blocks = (uint16_t)(l->secret_len / kb);
        if (l != &one) {
            l->secret = t->password.data;   /* the held request's bytes */
        } else {
            l->secret = ua_arena_alloc(ctx->arena, l->secret_len);
            if (l->secret == NULL)
                return UA_BAD_OUT_OF_MEMORY;
            memcpy(l->secret, t->password.data, l->secret_len);
        }
    }
    l->blocked = wk_svc_throttle_fail(
        ctx, s->client_key, ctx->w->conf->login_failure_threshold);
    l->ip_blocked = wk_svc_throttle_fail(
        ctx, ip_key, ctx->w->conf->login_failure_ip_threshold);
    l->phase = WK_LOGIN_DECRYPTING;
    if (l != &one)
        return wk_svc_username_decrypt(ctx, s, t, l, true);
    st = UA_GOOD;
    while (l->phase != WK_LOGIN_NONE) {
        st = l->phase == WK_LOGIN_DECRYPTING
                 ? wk_svc_username_decrypt(ctx, s, t, l, false)
                 : wk_svc_username_step(ctx, s, l, user);
        ctx->again = false;
    }
    return st;
}

/*
 * One step of a UserName login's decryption: its next RSA block (one
 * private-key operation), in place in l->secret.  After the last one (or
 * at once when there is nothing to decrypt: a failure found by the
 * checks) the parse of length | password | serverNonce, the user's
 * lookup and the PBKDF2's key; then the hash in later steps.  held: the
 * secret is the held request's, which must still be at l->secret.
 */
static ua_status
wk_svc_username_decrypt(struct wk_svc_ctx *ctx, struct wk_session *s,
                        const struct ua_user_name_identity_token *t,
                        struct wk_login *l, bool held)
{
    static const uint8_t   dummy_salt[16] = { 0 };
    struct wk_pki         *k = ctx->w->pki;
    const struct shm_user *users, *u = NULL;
    const uint8_t         *pw = NULL;
    uint8_t               *buf = l->secret;
    size_t                 pos = l->pos, pwlen = 0;
    uint32_t               n, len4, iter;
    bool                   ok, bad = l->bad;
    ua_status              st;

    if (held && buf != NULL
        && (t->password.data != buf
            || (size_t)t->password.len != l->secret_len)) {
        /* Cannot happen (the held request stays put): give up on it. */
        l->ok = false;
        l->secret = buf = NULL;
    }
    if (k == NULL) {
        l->ok = false;
        l->blocks = 0;
    }
    if (buf != NULL && l->block < l->blocks) {
        if (ua_crypto_rsa_decrypt_block(&k->key, (enum ua_rsa_enc)l->enc,
                                        buf, l->secret_len, l->block, &pos,
                                        &bad)
            != UA_GOOD)
            bad = true;
        l->block++;
        l->pos = (uint32_t)pos;
        l->bad = bad;
        if (l->block < l->blocks) {
            ctx->again = true;          /* the next block in a later step */
            return UA_GOOD;
        }
    }
    ok = l->ok && buf != NULL && !bad && pos >= 4 + WK_SESSION_NONCE;
    if (ok) {
        len4 = (uint32_t)buf[0] | (uint32_t)buf[1] << 8
               | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
        if (len4 != pos - 4 || len4 < WK_SESSION_NONCE)
            ok = false;
        else {
            pwlen = len4 - WK_SESSION_NONCE;
            pw = buf + 4;
            if (!ua_crypto_memeq(buf + 4 + pwlen, s->nonce,
                                 WK_SESSION_NONCE))
                ok = false;
        }
    }
    users = k != NULL ? wk_pki_users(k, &n) : NULL;
    if (users == NULL)
        n = 0;
    for (uint32_t i = 0; i < n; i++)
        if (t->user_name.len > 0
            && (size_t)t->user_name.len < SHM_USER_NAME_MAX
            && strlen(users[i].name) == (size_t)t->user_name.len
            && memcmp(users[i].name, t->user_name.data,
                      (size_t)t->user_name.len) == 0)
            u = &users[i];
    if (u == NULL || u->hash_len == 0 || u->hash_len > SHM_USER_HASH_MAX
        || u->salt_len == 0 || u->iterations == 0)
        ok = false;
    /* The same work whatever failed: one PBKDF2 of the count the real
     * entries use (an unknown user: the first one's), one comparison. */
    iter = n > 0 && users[0].iterations > 0 ? users[0].iterations
                                            : WK_DUMMY_ITERATIONS;
    if (u != NULL && u->iterations > 0)
        iter = u->iterations;
    st = ua_crypto_pbkdf2_init(&l->kdf, pw, ok ? pwlen : 0,
                               ok ? u->salt : dummy_salt,
                               ok ? u->salt_len : sizeof(dummy_salt), iter,
                               UA_PBKDF2_STEP_OUT_MAX);
    if (st != UA_GOOD) {
        ok = false;
        st = ua_crypto_pbkdf2_init(&l->kdf, NULL, 0, dummy_salt,
                                   sizeof(dummy_salt), iter,
                                   UA_PBKDF2_STEP_OUT_MAX);
    }
    if (buf != NULL)
        ua_crypto_wipe(buf, l->secret_len);
    l->secret = NULL;
    l->secret_len = 0;
    l->pos = 0;
    l->phase = WK_LOGIN_HASHING;
    l->ok = ok && st == UA_GOOD;
    if (ok) {
        l->role = u->role;
        l->hash_len = u->hash_len < sizeof(l->hash) ? u->hash_len
                                                     : sizeof(l->hash);
        memcpy(l->hash, u->hash, l->hash_len);
    }
    ctx->again = true;                  /* the hash in later steps */
    return UA_GOOD;
}

/*
 * One slice of a UserName login's PBKDF2 (WK_PBKDF2_SLICE iterations);
 * after the last one the comparison, the throttle's count and the result.
 */
static ua_status
wk_svc_username_step(struct wk_svc_ctx *ctx, struct wk_session *s,
                     struct wk_login *l, enum wk_session_user *user)
{
    uint8_t             hash[UA_PBKDF2_STEP_OUT_MAX];
    uint8_t             role;
    bool                done = false, ok, blocked, ip_blocked;
    uint64_t            ip_key = wk_svc_login_tag(ctx);
    struct shm_throttle_rule r = { ctx->w->conf->login_failure_ip_threshold,
                                   ctx->w->conf->login_failure_window_ms,
                                   ctx->w->conf->login_failure_block_ms };

    memset(hash, 0, sizeof(hash));
    if (ua_crypto_pbkdf2_step(&l->kdf, WK_PBKDF2_SLICE, hash, &done)
        != UA_GOOD) {
        l->ok = false;
        done = true;
    }
    if (!done) {
        ctx->again = true;
        return UA_GOOD;
    }
    ok = l->ok && l->hash_len > 0
         && ua_crypto_memeq(hash, l->hash, l->hash_len);
    role = l->role;
    blocked = l->blocked;
    ip_blocked = l->ip_blocked;
    ua_crypto_wipe(hash, sizeof(hash));
    wk_login_clear(l);
    if (!ok) {
        if (ctx->w->throttle != NULL)
            shm_throttle_count(ctx->w->throttle, ctx->w->slot,
                               SHM_THR_C_LOGIN_FAILURES);
        return UA_BAD_IDENTITY_TOKEN_REJECTED;  /* counted at the start */
    }
    /* The client's failures are forgotten; a block stays unless it was
     * this attempt's own (counted at its start). */
    if (ctx->w->throttle != NULL && s->client_key != 0)
        shm_throttle_forget(ctx->w->throttle, s->client_key, blocked,
                            ctx->w->now_ms);
    /* The address's count loses this attempt's own failure only: others
     * behind it (a NAT) keep theirs. */
    if (ctx->w->throttle != NULL && ip_key != 0 && r.threshold != 0)
        shm_throttle_undo(ctx->w->throttle, ip_key, &r, ip_blocked,
                          ctx->w->now_ms);
    *user = role == SHM_ROLE_OPERATOR ? WK_USER_OPERATOR : WK_USER_VIEWER;
    return UA_GOOD;
}

/*
 * An X509IdentityToken (Part 4 §7.41.5): the certificate must validate
 * against trusted_users/ (role USER), and userTokenSignature must be its
 * key's signature over serverCertificate || last serverNonce, by the
 * channel's policy (Basic256Sha256, the token policy of the None
 * endpoint, on a None channel).  Role: security.x509_role.  Any failure:
 * BadIdentityTokenRejected (untrusted) or BadUserSignatureInvalid.
 */
static ua_status
wk_svc_x509(struct wk_svc_ctx *ctx, struct wk_session *s,
            const struct ua_x509_identity_token *t,
            const struct ua_signature_data *sig, enum wk_session_user *user)
{
    struct ua_crypto_key        key;
    struct wk_pki              *k = ctx->w->pki;
    const struct ua_policy     *pol = ctx->ch->policy;
    const struct ua_sc_config  *sc = &ctx->w->sc_conf;
    uint8_t                    *data;
    ua_status                   st;

    if (k == NULL)
        return UA_BAD_IDENTITY_TOKEN_REJECTED;
    if (!ua_string_eq(&t->policy_id, WK_POLICY_X509)
        || t->certificate_data.len <= 0)
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    if (ua_crypto_policy_is_none(pol))
        pol = ua_crypto_policy_get(UA_POLICY_BASIC256SHA256);
    st = wk_pki_validate_user(k, t->certificate_data.data,
                              (size_t)t->certificate_data.len, pol);
    if (st != UA_GOOD) {
        shm_log(SHM_LOG_WARNING, "X509 user certificate refused: %s",
                ua_status_name(st));
        return UA_BAD_IDENTITY_TOKEN_REJECTED;
    }
    if (sig->signature.len <= 0
        || !ua_string_eq(&sig->algorithm, pol->asym_sig_uri))
        return UA_BAD_USER_SIGNATURE_INVALID;
    data = ua_arena_alloc(ctx->arena, sc->cert_len + WK_SESSION_NONCE);
    if (data == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memcpy(data, sc->cert, sc->cert_len);
    memcpy(data + sc->cert_len, s->nonce, WK_SESSION_NONCE);
    st = ua_crypto_key_from_cert(&key, t->certificate_data.data,
                                 (size_t)t->certificate_data.len);
    if (st == UA_GOOD)
        st = pol->asym_verify(&key, data, sc->cert_len + WK_SESSION_NONCE,
                              sig->signature.data,
                              (size_t)sig->signature.len);
    ua_crypto_key_clear(&key);
    if (st != UA_GOOD)
        return UA_BAD_USER_SIGNATURE_INVALID;
    *user = (k->shm->flags & SHM_PKI_F_X509_OPERATOR) ? WK_USER_OPERATOR
                                                       : WK_USER_VIEWER;
    return UA_GOOD;
}

/*
 * The user a UserIdentityToken stands for (Part 4 §7.41).  A null token
 * (no body, null or Anonymous type) is anonymous (§5.7.3).  An
 * AnonymousIdentityToken must name our policy "anonymous"; an empty policyId
 * is taken as anonymous too, as older clients send it.  Issued tokens are
 * well-formed but not offered on any endpoint yet:
 * BadIdentityTokenRejected; anonymous ones too when security.anonymous is
 * off.  Anything else (an unknown ExtensionObject, an
 * Anonymous token naming another policy) is BadIdentityTokenInvalid
 * (docs/security.md case 56).  UserName tokens: wk_svc_username; X509:
 * wk_svc_x509.
 */
static ua_status
wk_svc_identity(struct wk_svc_ctx *ctx, struct wk_session *s,
                const struct ua_extobj *x, const struct ua_signature_data *sig,
                enum wk_session_user *user)
{
    const struct ua_anonymous_identity_token *anon;

    *user = WK_USER_NONE;
    switch (x->encoding) {
    case UA_EO_NONE:
        if (wk_node_is_null(&x->type_id)
            || (x->type_id.ns == 0 && x->type_id.idtype == UA_IDTYPE_NUMERIC
                && x->type_id.id.num == WK_ANON_BINARY)) {
            *user = WK_USER_ANONYMOUS;
            return UA_GOOD;
        }
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    case UA_EO_DECODED:
        if (x->type == &ua_types[UA_TYPE_ANONYMOUSIDENTITYTOKEN]) {
            anon = x->obj;
            if (anon->policy_id.len > 0
                && !ua_string_eq(&anon->policy_id, WK_POLICY_ANONYMOUS))
                return UA_BAD_IDENTITY_TOKEN_INVALID;
            *user = WK_USER_ANONYMOUS;
            return UA_GOOD;
        }
        if (x->type == &ua_types[UA_TYPE_USERNAMEIDENTITYTOKEN])
            return wk_svc_username(ctx, s, x->obj, user);
        if (x->type == &ua_types[UA_TYPE_X509IDENTITYTOKEN])
            return wk_svc_x509(ctx, s, x->obj, sig, user);
        if (x->type == &ua_types[UA_TYPE_ISSUEDIDENTITYTOKEN])
            return UA_BAD_IDENTITY_TOKEN_REJECTED;
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    default:
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    }
}

/*
 * ActivateSession (Part 4 §5.7.3).  A token of ours whose session is in
 * another worker: the session is claimed first (the request waits) and
 * then handled as if it had always been here.  Order matters: the
 * channel rule first
 * (a token used on a foreign channel learns nothing about its session),
 * then the user token, then the rebind rule; only then does anything
 * change.  Each success returns a new serverNonce.
 */
static void
wk_svc_activate_session_do(struct wk_svc_ctx *ctx,
                           const struct ua_activate_session_request *req,
                           struct ua_activate_session_response *resp)
{
    struct ua_response_header                *rh = &resp->response_header;
    struct wk_session                        *s = ctx->session;
    enum wk_session_user                      user;
    ua_status                                 st;
    ua_status                                *results = NULL;
    int32_t                                   nres;
    bool                                      wait;

    if (s == NULL) {
        /* A session of ours held by another worker (dispatch saw a token
         * of that shape): claim it and wait (worker/roam.h). */
        st = wk_roam_claim(ctx->w, ctx->rq,
                           &req->request_header.authentication_token,
                           ctx->ch->peer_thumb, wk_svc_secured(ctx), &wait);
        if (st == UA_GOOD && wait) {
            ctx->again = true;
            ctx->wait = true;
            return;
        }
        if (st == UA_GOOD)
            s = ctx->session = wk_session_find_by_token(
                ctx->w, &req->request_header.authentication_token);
        if (s == NULL) {
            rh->service_result = st != UA_GOOD ? st
                                               : UA_BAD_SESSION_ID_INVALID;
            return;
        }
    }
    if (wk_roam_moving(ctx->w, s)) {
        /* Being handed to another worker: as if unknown here. */
        rh->service_result = UA_BAD_SESSION_ID_INVALID;
        return;
    }
    if (!s->activated && s->channel_id != ctx->ch->channel_id) {
        s->unauthorized++;
        rh->service_result = UA_BAD_SESSION_ID_INVALID;
        return;
    }
    /* A session of a secured channel: its client's signature; a session
     * of a None channel cannot move to a secured one (nor back).  A
     * UserName login in progress (a later step) passed these checks. */
    if (wk_login_of(ctx->w, ctx->rq) != NULL
        && wk_login_of(ctx->w, ctx->rq)->phase == WK_LOGIN_HASHING)
        st = UA_GOOD;
    else if (s->cert_len > 0)
        st = wk_svc_client_signature(ctx, s, &req->client_signature);
    else
        st = wk_svc_secured(ctx) ? UA_BAD_SECURITY_CHECKS_FAILED : UA_GOOD;
    if (st != UA_GOOD) {
        rh->service_result = st;
        return;
    }
    st = wk_svc_identity(ctx, s, &req->user_identity_token,
                         &req->user_token_signature, &user);
    if (ctx->again)
        return;                         /* the login's next step */
    if (st == UA_GOOD && user == WK_USER_ANONYMOUS && ctx->w->pki != NULL
        && !(ctx->w->pki->shm->flags & SHM_PKI_F_ANONYMOUS))
        st = UA_BAD_IDENTITY_TOKEN_REJECTED;
    if (st != UA_GOOD) {
        rh->service_result = st;
        return;
    }
    /* One result per clientSoftwareCertificate (deprecated; all Good). */
    nres = req->n_client_software_certificates > 0
               ? req->n_client_software_certificates : 0;
    if (nres > 0) {
        results = ua_arena_alloc(ctx->arena, (size_t)nres * sizeof(*results));
        if (results == NULL) {
            rh->service_result = UA_BAD_OUT_OF_MEMORY;
            return;
        }
        for (int32_t i = 0; i < nres; i++)
            results[i] = UA_GOOD;
    }
    st = wk_session_activate(ctx->w, s, ctx->ch->channel_id, user);
    if (st != UA_GOOD) {
        rh->service_result = st;
        return;
    }
    resp->server_nonce = wk_svc_nonce(ctx, s);
    if (resp->server_nonce.len < 0) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    resp->n_results = nres;
    resp->results = results;
    resp->n_diagnostic_infos = 0;
}

/*
 * The audit event of a session service (Part 5 §6.4.7-6.4.9), raised
 * where the session was handled: its request's header, whether it
 * succeeded, the session.
 */
static void
wk_svc_session_audit(struct wk_svc_ctx *ctx, uint32_t type,
                     const struct ua_request_header *rq,
                     const struct ua_response_header *rh,
                     struct ua_nodeid session_id, struct wk_audit *a)
{
    a->type = type;
    a->status = !UA_STATUS_IS_BAD(rh->service_result);
    a->audit_entry_id = rq->audit_entry_id;
    a->channel_id = ctx->ch != NULL ? ctx->ch->channel_id : 0;
    a->session_id = session_id;
    wk_audit_raise(ctx->w, a);
}

/* CreateSession, then its audit event (AuditCreateSessionEventType). */
static void
wk_svc_create_session(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_create_session_request *req = req_;
    struct ua_create_session_response      *resp = resp_;
    struct wk_audit                         a;

    wk_svc_create_session_do(ctx, req, resp);
    memset(&a, 0, sizeof(a));
    a.user_id.len = -1;
    a.client_cert = req->client_certificate;
    a.revised_timeout = resp->revised_session_timeout;
    wk_svc_session_audit(ctx, UA_NS0ID_AUDITCREATESESSIONEVENTTYPE,
                         &req->request_header, &resp->response_header,
                         resp->session_id, &a);
}

/* ActivateSession, then, when it is answered (not a login's step), its
 * audit event (AuditActivateSessionEventType). */
static void
wk_svc_activate_session(struct wk_svc_ctx *ctx, const void *req_,
                        void *resp_)
{
    const struct ua_activate_session_request *req = req_;
    struct ua_activate_session_response      *resp = resp_;
    const struct ua_extobj                   *t = &req->user_identity_token;
    struct wk_audit                           a;
    struct ua_nodeid                          sid = ua_nodeid_num(0, 0);

    wk_svc_activate_session_do(ctx, req, resp);
    if (ctx->again)
        return;                         /* the login's next step */
    memset(&a, 0, sizeof(a));
    a.user_id.len = -1;
    a.client_cert.len = -1;
    if (ctx->session != NULL)
        sid = wk_session_id(ctx->session);
    if (t->encoding == UA_EO_DECODED
        && t->type == &ua_types[UA_TYPE_USERNAMEIDENTITYTOKEN])
        a.user_id = ((const struct ua_user_name_identity_token *)t->obj)
                        ->user_name;
    wk_svc_session_audit(ctx, UA_NS0ID_AUDITACTIVATESESSIONEVENTTYPE,
                         &req->request_header, &resp->response_header, sid,
                         &a);
}

/*
 * CloseSession (Part 4 §5.7.4).  Dispatch found the session on this
 * channel; a second CloseSession finds none (BadSessionIdInvalid).  Those
 * who listen for a client's CloseSession (the subscriptions, which honour
 * deleteSubscriptions: deleted, or orphaned to wait for
 * TransferSubscriptions) hear it first; then the session is closed and
 * the audit event (AuditSessionEventType) raised.
 */
static void
wk_svc_close_session(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_close_session_request *req = req_;
    struct ua_close_session_response      *resp = resp_;
    struct wk_audit                        a;
    struct ua_nodeid                       closed = ua_nodeid_num(0, 0);

    if (ctx->session != NULL) {
        closed = wk_session_id(ctx->session);
        if (ctx->session->channel_id == ctx->ch->channel_id)
            wk_session_closing(ctx->w, ctx->session,
                               req->delete_subscriptions);
        wk_session_close(ctx->w, ctx->session);
        ctx->session = NULL;
    }
    memset(&a, 0, sizeof(a));
    a.user_id.len = -1;
    a.client_cert.len = -1;
    wk_svc_session_audit(ctx, UA_NS0ID_AUDITSESSIONEVENTTYPE,
                         &req->request_header, &resp->response_header, closed,
                         &a);
}

/*
 * Cancel (Part 4 §5.7.5): every request is answered before the next one is
 * read (docs/architecture.md §4), so none is ever outstanding to cancel;
 * and none of another session could be (docs/security.md case 75).
 */
static void
wk_svc_cancel(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    struct ua_cancel_response *resp = resp_;

    (void)ctx;
    (void)req_;
    resp->cancel_count = 0;
}
