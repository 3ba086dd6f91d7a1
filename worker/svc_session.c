/*
 * worker/svc_session.c: CreateSession, ActivateSession, CloseSession and
 * Cancel (Part 4 §5.7).  The pool, tokens and binding rules live in
 * worker/session.c; this file maps requests onto them.
 *
 * Security today: every channel is SecurityPolicy None, so there is no
 * certificate, no signature to check and no secret in a user token.  What
 * the Security issue adds here: clientCertificate and ApplicationUri checks
 * in CreateSession, clientSignature over serverCertificate + serverNonce
 * in ActivateSession, UserName/X509 tokens, the same certificate on rebind.
 */
#include <string.h>

#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "session.h"
#include "svc_int.h"

#define WK_NONCE_MIN        32      /* Part 4 §5.7.2 clientNonce */
#define WK_NONCE_MAX        128
#define WK_POLICY_ANONYMOUS "anonymous"     /* svc_discovery.c offers it */
#define WK_ANON_BINARY \
    UA_NS0ID_ANONYMOUSIDENTITYTOKEN_ENCODING_DEFAULTBINARY

static ua_status wk_svc_identity(const struct ua_extobj *x,
                                 enum wk_session_user *user);
static struct ua_string wk_svc_nonce(struct wk_svc_ctx *ctx,
                                     const struct wk_session *s);

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
 * CreateSession (Part 4 §5.7.2).  clientNonce: on a None channel a client
 * may send none (most do); any nonce it does send must be 32..128 bytes
 * (SECURITY.md 45).  TODO(security): require one on Sign/SignAndEncrypt
 * channels once they exist.  The session timeout is revised
 * (wk_session_revise_timeout); serverEndpoints is the GetEndpoints list.
 */
void
wk_svc_create_session(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_create_session_request *req = req_;
    struct ua_create_session_response      *resp = resp_;
    struct ua_response_header              *rh = &resp->response_header;
    struct wk_session                      *s;
    int32_t                                 nl = req->client_nonce.len;

    if (nl > 0 && (nl < WK_NONCE_MIN || nl > WK_NONCE_MAX)) {
        rh->service_result = UA_BAD_NONCE_INVALID;
        return;
    }
    if (wk_svc_endpoints(ctx, &resp->n_server_endpoints,
                         &resp->server_endpoints) != 0) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    s = wk_session_create(ctx->w, ctx->ch->channel_id,
                          req->requested_session_timeout);
    if (s == NULL) {
        rh->service_result = UA_BAD_TOO_MANY_SESSIONS;
        return;
    }
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
    resp->session_id = wk_session_id(s);
    resp->authentication_token = wk_session_token(s);
    resp->revised_session_timeout = (double)s->timeout_ms;
    resp->server_certificate.len = -1;
    resp->n_server_software_certificates = 0;
    resp->server_signature.algorithm.len = -1;
    resp->server_signature.signature.len = -1;
    resp->max_request_message_size = ctx->w->conf->max_message_size;
}

/*
 * The user a UserIdentityToken stands for (Part 4 §7.41).  A null token
 * (no body, null or Anonymous type) is anonymous (§5.7.3).  An
 * AnonymousIdentityToken must name our policy "anonymous"; an empty policyId
 * is taken as anonymous too, as older clients send it.  UserName, X509 and
 * Issued tokens are well-formed but not offered on any endpoint yet:
 * BadIdentityTokenRejected.  Anything else (an unknown ExtensionObject, an
 * Anonymous token naming another policy) is BadIdentityTokenInvalid
 * (SECURITY.md 56).
 */
static ua_status
wk_svc_identity(const struct ua_extobj *x, enum wk_session_user *user)
{
    const struct ua_anonymous_identity_token *anon;

    *user = WK_USER_NONE;
    switch (x->encoding) {
    case UA_EO_NONE:
        if (wk_svc_nodeid_is_null(&x->type_id)
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
        if (x->type == &ua_types[UA_TYPE_USERNAMEIDENTITYTOKEN]
            || x->type == &ua_types[UA_TYPE_X509IDENTITYTOKEN]
            || x->type == &ua_types[UA_TYPE_ISSUEDIDENTITYTOKEN])
            return UA_BAD_IDENTITY_TOKEN_REJECTED;
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    default:
        return UA_BAD_IDENTITY_TOKEN_INVALID;
    }
}

/*
 * ActivateSession (Part 4 §5.7.3).  Order matters: the channel rule first
 * (a token used on a foreign channel learns nothing about its session),
 * then the user token, then the rebind rule; only then does anything
 * change.  Each success returns a new serverNonce.
 */
void
wk_svc_activate_session(struct wk_svc_ctx *ctx, const void *req_,
                        void *resp_)
{
    const struct ua_activate_session_request *req = req_;
    struct ua_activate_session_response      *resp = resp_;
    struct ua_response_header                *rh = &resp->response_header;
    struct wk_session                        *s = ctx->session;
    enum wk_session_user                      user;
    ua_status                                 st;
    ua_status                                *results = NULL;
    int32_t                                   nres;

    if (!s->activated && s->channel_id != ctx->ch->channel_id) {
        s->unauthorized++;
        rh->service_result = UA_BAD_SESSION_ID_INVALID;
        return;
    }
    st = wk_svc_identity(&req->user_identity_token, &user);
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
 * CloseSession (Part 4 §5.7.4).  Dispatch found the session on this
 * channel; a second CloseSession finds none (BadSessionIdInvalid).
 * deleteSubscriptions: nothing to delete until subscriptions land.
 */
void
wk_svc_close_session(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    (void)req_;
    (void)resp_;
    wk_session_close(ctx->w, ctx->session);
    ctx->session = NULL;
}

/*
 * Cancel (Part 4 §5.7.5): every request is answered before the next one is
 * read (DESIGN §4), so none is ever outstanding to cancel; and none of
 * another session could be (SECURITY.md 75).
 */
void
wk_svc_cancel(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    struct ua_cancel_response *resp = resp_;

    (void)ctx;
    (void)req_;
    resp->cancel_count = 0;
}
