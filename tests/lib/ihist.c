/*
 * tests/lib/ihist.c: the history integration programs' harness
 * (tests/lib/ihist.h).
 *
 * Test programs only; single-threaded.
 */
#include "ihist.h"

#include <stdlib.h>
#include <string.h>

#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "tests/lib/itest.h"

void
ihist_setup(struct ihist *h, const char *argv0, const char *tmpname,
            unsigned watchdog_s, size_t arena_bytes)
{
    memset(h, 0, sizeof(*h));
    if (ua_crypto_init() != UA_GOOD)
        itest_fatal("crypto");
    itest_broker_bin(argv0, h->bin, sizeof(h->bin));
    itest_guard(watchdog_s, h->log);
    itest_tmpdir(tmpname, h->dir, sizeof(h->dir));
    snprintf(h->log, sizeof(h->log), "%s/broker.log", h->dir);
    h->arena_buf = malloc(arena_bytes);
    if (h->arena_buf == NULL)
        itest_fatal("out of memory");
    ua_arena_init(&h->arena, h->arena_buf, arena_bytes);
}

void
ihist_teardown(struct ihist *h)
{
    free(h->arena_buf);
    h->arena_buf = NULL;
}

void
ihist_user_line(FILE *f, const char *name, const char *role, const char *pw)
{
    uint8_t salt[16], hash[32];

    if (ua_crypto_random(salt, sizeof(salt)) != UA_GOOD
        || ua_crypto_pbkdf2((const uint8_t *)pw, strlen(pw), salt,
                            sizeof(salt), 1000, hash, sizeof(hash))
               != UA_GOOD)
        itest_fatal("PBKDF2");
    fprintf(f, "%s:%s:pbkdf2-sha256:1000:", name, role);
    for (size_t i = 0; i < sizeof(salt); i++)
        fprintf(f, "%02x", salt[i]);
    fputc(':', f);
    for (size_t i = 0; i < sizeof(hash); i++)
        fprintf(f, "%02x", hash[i]);
    fputc('\n', f);
}

void
ihist_users(const struct ihist *h, bool viewer)
{
    char  path[PATH_MAX + 16];
    FILE *f;

    snprintf(path, sizeof(path), "%s/users", h->dir);
    f = fopen(path, "w");
    if (f == NULL)
        itest_fatal("cannot write %s", path);
    ihist_user_line(f, IHIST_OP, "operator", IHIST_OP_PW);
    if (viewer)
        ihist_user_line(f, IHIST_VIEW, "viewer", IHIST_VIEW_PW);
    fclose(f);
}

struct ua_nodeid
ihist_node(const char *name)
{
    struct ua_nodeid id;

    memset(&id, 0, sizeof(id));
    id.ns = 1;
    id.idtype = UA_IDTYPE_STRING;
    id.id.str = ua_string_from(name);
    return id;
}

ua_status
ihist_update(struct uaconn *c, struct ua_arena *a, const struct ua_type *t,
             uint32_t enc, void *d, struct ua_history_update_result *res)
{
    struct ua_history_update_request  req;
    struct ua_history_update_response resp;
    struct ua_extobj                  eo;
    ua_status                         s;

    memset(&eo, 0, sizeof(eo));
    eo.type_id.idtype = UA_IDTYPE_NUMERIC;
    eo.type_id.id.num = enc;
    eo.encoding = UA_EO_DECODED;
    eo.type = t;
    eo.obj = d;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.n_history_update_details = 1;
    req.history_update_details = &eo;
    memset(res, 0, sizeof(*res));
    s = uaconn_call(c, &ua_types[UA_TYPE_HISTORYUPDATEREQUEST], &req,
                    &ua_types[UA_TYPE_HISTORYUPDATERESPONSE], &resp, a);
    if (s == UA_GOOD && resp.response_header.service_result != UA_GOOD)
        s = resp.response_header.service_result;
    if (s == UA_GOOD && resp.n_results != 1)
        s = UA_BAD_UNEXPECTED_ERROR;
    if (s == UA_GOOD)
        *res = resp.results[0];
    return s;
}

ua_status
ihist_read(struct uaconn *c, struct ua_arena *a, const struct ua_nodeid *node,
           const struct ua_type *t, uint32_t enc, void *d, int32_t ttr,
           const struct ua_string *cp, bool release,
           struct ua_history_read_result *res)
{
    struct ua_history_read_value_id v;
    struct ua_history_read_request  req;
    struct ua_history_read_response resp;
    ua_status                       s;

    memset(&v, 0, sizeof(v));
    v.node_id = *node;
    v.index_range.len = -1;
    v.data_encoding.name.len = -1;
    v.continuation_point.len = -1;
    if (cp != NULL)
        v.continuation_point = *cp;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.history_read_details.type_id.idtype = UA_IDTYPE_NUMERIC;
    req.history_read_details.type_id.id.num = enc;
    req.history_read_details.encoding = UA_EO_DECODED;
    req.history_read_details.type = t;
    req.history_read_details.obj = d;
    req.timestamps_to_return = ttr;
    req.release_continuation_points = release;
    req.n_nodes_to_read = 1;
    req.nodes_to_read = &v;
    memset(res, 0, sizeof(*res));
    s = uaconn_call(c, &ua_types[UA_TYPE_HISTORYREADREQUEST], &req,
                    &ua_types[UA_TYPE_HISTORYREADRESPONSE], &resp, a);
    if (s == UA_GOOD && resp.response_header.service_result != UA_GOOD)
        return resp.response_header.service_result;
    if (s == UA_GOOD && resp.n_results != 1)
        return UA_BAD_UNEXPECTED_ERROR;
    if (s != UA_GOOD)
        return s;
    *res = resp.results[0];
    return res->status_code;
}
