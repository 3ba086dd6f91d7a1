/*
 * worker/svc_discovery.c: GetEndpoints and FindServers (Part 4 §5.5), and
 * the endpoint list CreateSession returns.
 *
 * One endpoint per offered SecurityPolicy x MessageSecurityMode (the
 * broker's security.policies x security.modes, worker/pki.c), each with
 * our certificate; anonymous users when security.anonymous allows them.
 *
 * The EndpointUrl is always ours, opc.tcp://<conf->hostname>:<conf->port>:
 * the request's endpointUrl only tells which address the client used
 * (Part 4 §5.5.4); echoing a client-chosen host would let anyone make us
 * advertise their host.
 *
 * Session-less; everything is built in the request arena.
 */
#include "svc_discovery.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "node.h"
#include "pki.h"
#include "proto/crypto.h"
#include "proto/nodeids_gen.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "proto/version.h"

#define WK_TRANSPORT_UATCP \
    "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary"
#define WK_POLICY_ANONYMOUS "anonymous"
#define WK_POLICY_USERNAME  "username"      /* svc_session.c checks it */
#define WK_POLICY_X509      "x509"          /* svc_session.c checks it */
#define WK_URL_MAX          (16 + 2 + SHM_CONF_STR + 8)

static int wk_svc_endpoint_url(struct wk_svc_ctx *ctx, struct ua_string *out);
static bool wk_svc_in_list(const struct ua_string *list, int32_t n,
                           const char *s);
static uint8_t wk_svc_security_level(unsigned policy, unsigned mode);
static int wk_svc_user_tokens(struct wk_svc_ctx *ctx,
                              struct ua_endpoint_description *e, bool none);
static void wk_svc_get_endpoints(struct wk_svc_ctx *ctx, const void *req,
                                 void *resp);
static void wk_svc_find_servers(struct wk_svc_ctx *ctx, const void *req,
                                void *resp);

int
wk_svc_discovery_init(struct wk_worker *w)
{
    if (wk_svc_register(w, UA_NS0ID_GETENDPOINTSREQUEST_ENCODING_DEFAULTBINARY,
                        wk_svc_get_endpoints, NULL, NULL) != 0
        || wk_svc_register(w,
                           UA_NS0ID_FINDSERVERSREQUEST_ENCODING_DEFAULTBINARY,
                           wk_svc_find_servers, NULL, NULL) != 0)
        return -EINVAL;
    return 0;
}

/* opc.tcp://host:port, with an IPv6 literal in brackets (RFC 3986). */
static int
wk_svc_endpoint_url(struct wk_svc_ctx *ctx, struct ua_string *out)
{
    const struct shm_config *c = ctx->w->conf;
    const char              *host = c->hostname;
    char                    *buf;
    int                      n;
    bool                     v6;

    if (memchr(host, '\0', sizeof(c->hostname)) == NULL || host[0] == '\0')
        host = "localhost";
    v6 = strchr(host, ':') != NULL && host[0] != '[';
    buf = ua_arena_alloc(ctx->arena, WK_URL_MAX);
    if (buf == NULL)
        return -ENOMEM;
    n = snprintf(buf, WK_URL_MAX, "opc.tcp://%s%s%s:%u", v6 ? "[" : "",
                 host, v6 ? "]" : "", c->port);
    if (n < 0 || n >= WK_URL_MAX)
        return -ENOMEM;
    out->len = n;
    out->data = (uint8_t *)buf;
    return 0;
}

static bool
wk_svc_in_list(const struct ua_string *list, int32_t n, const char *s)
{
    for (int32_t i = 0; i < n; i++) {
        if (ua_string_eq(&list[i], s))
            return true;
    }
    return false;
}

int
wk_svc_app_description(struct wk_svc_ctx *ctx,
                       struct ua_application_description *d)
{
    const struct shm_config *c = ctx->w->conf;
    struct ua_string        *urls;

    memset(d, 0, sizeof(*d));
    urls = ua_arena_alloc(ctx->arena, sizeof(*urls));
    if (urls == NULL || wk_svc_endpoint_url(ctx, urls) != 0)
        return -ENOMEM;
    if (memchr(c->application_uri, '\0', sizeof(c->application_uri)) == NULL)
        return -EINVAL;
    d->application_uri = ua_string_from(c->application_uri);
    d->product_uri = ua_string_from(UA_PRODUCT_URI);
    d->application_name.mask = UA_LT_TEXT;
    d->application_name.locale = wk_node_null_str();
    d->application_name.text = ua_string_from(UA_PRODUCT_NAME);
    d->application_type = UA_APPLICATIONTYPE_SERVER;
    d->gateway_server_uri = wk_node_null_str();
    d->discovery_profile_uri = wk_node_null_str();
    d->n_discovery_urls = 1;
    d->discovery_urls = urls;
    return 0;
}

/* SecurityLevel: SignAndEncrypt above Sign, then the stronger policy. */
static uint8_t
wk_svc_security_level(unsigned policy, unsigned mode)
{
    if (policy == UA_POLICY_NONE)
        return 0;
    return (uint8_t)((mode == UA_MESSAGESECURITYMODE_SIGNANDENCRYPT ? 20
                                                                    : 10)
                     + policy);
}

/*
 * The user token policies of an endpoint: anonymous when allowed (always
 * without a PKI, as before); UserName with a PKI, its password encrypted
 * with Basic256Sha256 on a None endpoint (never in clear) and with the
 * channel's policy (empty SecurityPolicyUri) on a secured one; X509 the
 * same way (its userTokenSignature).
 */
static int
wk_svc_user_tokens(struct wk_svc_ctx *ctx, struct ua_endpoint_description *e,
                   bool none)
{
    struct ua_user_token_policy *p;
    const struct wk_pki         *k = ctx->w->pki;
    bool anon = k == NULL || (k->shm->flags & SHM_PKI_F_ANONYMOUS) != 0;
    int32_t                      n = 0;

    e->n_user_identity_tokens = 0;
    e->user_identity_tokens = NULL;
    p = ua_arena_alloc(ctx->arena, 3 * sizeof(*p));
    if (p == NULL)
        return -ENOMEM;
    if (anon) {
        p[n].policy_id = ua_string_from(WK_POLICY_ANONYMOUS);
        p[n].token_type = UA_USERTOKENTYPE_ANONYMOUS;
        p[n].issued_token_type = wk_node_null_str();
        p[n].issuer_endpoint_url = wk_node_null_str();
        p[n].security_policy_uri = wk_node_null_str();
        n++;
    }
    if (k != NULL) {
        p[n].policy_id = ua_string_from(WK_POLICY_USERNAME);
        p[n].token_type = UA_USERTOKENTYPE_USERNAME;
        p[n].issued_token_type = wk_node_null_str();
        p[n].issuer_endpoint_url = wk_node_null_str();
        p[n].security_policy_uri =
            none ? ua_string_from(ua_crypto_policy_get(
                                      UA_POLICY_BASIC256SHA256)->uri)
                 : wk_node_null_str();
        n++;
        p[n] = p[n - 1];
        p[n].policy_id = ua_string_from(WK_POLICY_X509);
        p[n].token_type = UA_USERTOKENTYPE_CERTIFICATE;
        n++;
    }
    e->n_user_identity_tokens = n;
    e->user_identity_tokens = n > 0 ? p : NULL;
    return 0;
}

/*
 * One EndpointDescription per offered policy x mode (None/None only when
 * offered; without a PKI None/None alone), each with our certificate
 * (None/None too; a null one only without a PKI).
 */
int
wk_svc_endpoints(struct wk_svc_ctx *ctx, int32_t *n,
                 struct ua_endpoint_description **eps)
{
    const struct ua_sc_config      *sc = &ctx->w->sc_conf;
    struct ua_endpoint_description *e;
    struct ua_application_description app;
    uint32_t                        offers = sc->offers;
    int32_t                         cnt = 0;

    *n = 0;
    *eps = NULL;
    if (offers == 0 || sc->cert == NULL)
        offers = UA_SC_OFFER(UA_POLICY_NONE, UA_MESSAGESECURITYMODE_NONE);
    e = ua_arena_alloc(ctx->arena, UA_POLICY_COUNT * 2 * sizeof(*e));
    if (e == NULL || wk_svc_app_description(ctx, &app) != 0)
        return -ENOMEM;
    for (unsigned pid = 0; pid < UA_POLICY_COUNT; pid++) {
        const struct ua_policy *pol = ua_crypto_policy_get(pid);

        if (pol == NULL || (pol->deprecated && !sc->allow_deprecated))
            continue;
        for (unsigned mode = UA_MESSAGESECURITYMODE_NONE;
             mode <= UA_MESSAGESECURITYMODE_SIGNANDENCRYPT; mode++) {
            struct ua_endpoint_description *d = &e[cnt];

            if (!(offers & UA_SC_OFFER(pid, mode))
                || cnt >= 2 * UA_POLICY_COUNT)
                continue;
            memset(d, 0, sizeof(*d));
            d->server = app;
            /* The server's discovery URL is this endpoint's URL. */
            d->endpoint_url = app.discovery_urls[0];
            /* Our certificate on the None endpoint too, when we have
             * one: a client ignores it there (Part 4 §5.5.4.1), and
             * node-opcua's reconnection, when a channel it was opening
             * was closed, fetches it from the endpoint it uses and
             * stops on a null one (docs/design-notes.md D109). */
            if (sc->cert != NULL) {
                d->server_certificate.len = (int32_t)sc->cert_len;
                d->server_certificate.data = (uint8_t *)sc->cert;
            } else {
                d->server_certificate = wk_node_null_str();
            }
            d->security_policy_uri = pid == UA_POLICY_NONE
                                         ? ua_string_from(UA_SC_POLICY_NONE)
                                         : ua_string_from(pol->uri);
            d->security_mode = (int32_t)mode;
            if (wk_svc_user_tokens(ctx, d, pid == UA_POLICY_NONE) != 0)
                return -ENOMEM;
            d->transport_profile_uri = ua_string_from(WK_TRANSPORT_UATCP);
            d->security_level = wk_svc_security_level(pid, mode);
            cnt++;
        }
    }
    *n = cnt;
    *eps = e;
    return 0;
}

/*
 * GetEndpoints (Part 4 §5.5.4): every endpoint, or those whose transport
 * profile is in profileUris when that list is not empty.  localeIds only
 * choose the language of names we do not translate.
 */
static void
wk_svc_get_endpoints(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_get_endpoints_request *req = req_;
    struct ua_get_endpoints_response      *resp = resp_;

    if (req->n_profile_uris > 0
        && !wk_svc_in_list(req->profile_uris, req->n_profile_uris,
                           WK_TRANSPORT_UATCP))
        return;                     /* no endpoint matches: empty list */
    if (wk_svc_endpoints(ctx, &resp->n_endpoints, &resp->endpoints) != 0)
        resp->response_header.service_result = UA_BAD_OUT_OF_MEMORY;
}

/*
 * FindServers (Part 4 §5.5.2): ourselves, unless serverUris is not empty
 * and does not name our ApplicationUri.  We are no discovery server: no
 * other server is ever listed.
 */
static void
wk_svc_find_servers(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_find_servers_request *req = req_;
    struct ua_find_servers_response      *resp = resp_;
    struct ua_application_description    *d;

    if (req->n_server_uris > 0
        && !wk_svc_in_list(req->server_uris, req->n_server_uris,
                           ctx->w->conf->application_uri))
        return;
    d = ua_arena_alloc(ctx->arena, sizeof(*d));
    if (d == NULL || wk_svc_app_description(ctx, d) != 0) {
        resp->response_header.service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    resp->n_servers = 1;
    resp->servers = d;
}
