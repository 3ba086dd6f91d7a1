/*
 * worker/svc_discovery.c: GetEndpoints and FindServers (Part 4 §5.5), and
 * the endpoint list CreateSession returns.
 *
 * What we offer today: one endpoint, SecurityPolicy None with
 * MessageSecurityMode None, anonymous users only, no certificate.  The
 * Security issue adds one endpoint per configured policy x mode here.
 *
 * The EndpointUrl is always ours, opc.tcp://<conf->hostname>:<conf->port>:
 * the request's endpointUrl only tells which address the client used
 * (Part 4 §5.5.4); echoing a client-chosen host would let anyone make us
 * advertise their host.
 *
 * Session-less; everything is built in the request arena.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "proto/version.h"
#include "svc_int.h"

#define WK_TRANSPORT_UATCP \
    "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary"
#define WK_POLICY_ANONYMOUS "anonymous"
#define WK_URL_MAX          (16 + 2 + SHM_CONF_STR + 8)

static int wk_svc_endpoint_url(struct wk_svc_ctx *ctx, struct ua_string *out);
static bool wk_svc_in_list(const struct ua_string *list, int32_t n,
                           const char *s);

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
    d->application_name.locale = wk_svc_null_str();
    d->application_name.text = ua_string_from(UA_PRODUCT_NAME);
    d->application_type = UA_APPLICATIONTYPE_SERVER;
    d->gateway_server_uri = wk_svc_null_str();
    d->discovery_profile_uri = wk_svc_null_str();
    d->n_discovery_urls = 1;
    d->discovery_urls = urls;
    return 0;
}

int
wk_svc_endpoints(struct wk_svc_ctx *ctx, int32_t *n,
                 struct ua_endpoint_description **eps)
{
    struct ua_endpoint_description *e;
    struct ua_user_token_policy    *p;

    *n = 0;
    *eps = NULL;
    e = ua_arena_alloc(ctx->arena, sizeof(*e));
    p = ua_arena_alloc(ctx->arena, sizeof(*p));
    if (e == NULL || p == NULL)
        return -ENOMEM;
    memset(e, 0, sizeof(*e));
    if (wk_svc_app_description(ctx, &e->server) != 0)
        return -ENOMEM;
    /* The server's discovery URL is this endpoint's URL. */
    e->endpoint_url = e->server.discovery_urls[0];
    e->server_certificate = wk_svc_null_str();
    e->security_mode = UA_MESSAGESECURITYMODE_NONE;
    e->security_policy_uri = ua_string_from(UA_SC_POLICY_NONE);
    p->policy_id = ua_string_from(WK_POLICY_ANONYMOUS);
    p->token_type = UA_USERTOKENTYPE_ANONYMOUS;
    p->issued_token_type = wk_svc_null_str();
    p->issuer_endpoint_url = wk_svc_null_str();
    p->security_policy_uri = wk_svc_null_str();
    e->n_user_identity_tokens = 1;
    e->user_identity_tokens = p;
    e->transport_profile_uri = ua_string_from(WK_TRANSPORT_UATCP);
    e->security_level = 0;          /* None: the least secure we offer */
    *n = 1;
    *eps = e;
    return 0;
}

/*
 * GetEndpoints (Part 4 §5.5.4): every endpoint, or those whose transport
 * profile is in profileUris when that list is not empty.  localeIds only
 * choose the language of names we do not translate.
 */
void
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
void
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
