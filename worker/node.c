/*
 * worker/node.c: nodes of the node store as wire values (worker/node.h).
 *
 * Pure reads of the shared-memory node store, which does not change while
 * the worker runs; no allocation.
 */
#include "node.h"

#include <string.h>

#include "proto/nodeids_gen.h"

bool
wk_node_key(const struct ua_nodeid *n, struct shm_nodekey *k)
{
    k->ns = n->ns;
    k->idtype = n->idtype;
    k->num = 0;
    k->bytes = NULL;
    k->len = 0;
    switch (n->idtype) {
    case UA_IDTYPE_NUMERIC:
        k->num = n->id.num;
        return true;
    case UA_IDTYPE_STRING:
    case UA_IDTYPE_OPAQUE:
        if (n->id.str.len < 0 || (n->id.str.len > 0 && !n->id.str.data))
            return false;
        k->bytes = n->id.str.data;
        k->len = (uint32_t)n->id.str.len;
        return true;
    case UA_IDTYPE_GUID:
        k->bytes = (const uint8_t *)&n->id.guid;
        k->len = sizeof(n->id.guid);
        return true;
    default:
        return false;
    }
}

uint32_t
wk_node_lookup(const struct wk_worker *w, const struct ua_nodeid *n)
{
    struct shm_nodekey k;

    if (!wk_node_key(n, &k))
        return SHM_NONE;
    return shm_nodestore_lookup(&w->ns, &k);
}

void
wk_node_id(const struct wk_worker *w, uint32_t i, struct ua_nodeid *out)
{
    const struct shm_node *n = &w->ns.nodes[i];
    struct shm_nodekey     k;

    memset(out, 0, sizeof(*out));
    if (n->idtype == SHM_ID_NUMERIC) {
        /* Most NodeIds (all of ns0): no key to build. */
        out->ns = n->ns;
        out->idtype = UA_IDTYPE_NUMERIC;
        out->id.num = n->id;
        return;
    }
    shm_nodestore_key(&w->ns, i, &k);
    out->ns = k.ns;
    out->idtype = k.idtype;
    switch (k.idtype) {
    case SHM_ID_NUMERIC:
        out->id.num = k.num;
        break;
    case SHM_ID_GUID:
        if (k.bytes != NULL && k.len == sizeof(out->id.guid))
            memcpy(&out->id.guid, k.bytes, sizeof(out->id.guid));
        break;
    default:                        /* String, Opaque */
        out->id.str.len = k.bytes != NULL ? (int32_t)k.len : 0;
        out->id.str.data = (uint8_t *)(uintptr_t)k.bytes;
        break;
    }
}

void
wk_node_expanded(const struct wk_worker *w, uint32_t i,
                     struct ua_expandednodeid *out)
{
    wk_node_id(w, i, &out->node);
    out->ns_uri.len = -1;
    out->ns_uri.data = NULL;
    out->server_index = 0;
}

void
wk_node_browse_name(const struct wk_worker *w, uint32_t i,
                        struct ua_qualifiedname *out)
{
    const struct shm_node *n = &w->ns.nodes[i];
    uint32_t               len;
    const uint8_t         *p = shm_nodestore_string(&w->ns, n->browse_name,
                                                    &len);

    out->ns = n->browse_ns;
    out->name.len = p != NULL ? (int32_t)len : -1;
    out->name.data = (uint8_t *)(uintptr_t)p;
}

void
wk_node_localized(const struct wk_worker *w, uint32_t text_off,
                 uint32_t locale_off, struct ua_localizedtext *out)
{
    uint32_t       len;
    const uint8_t *p;

    memset(out, 0, sizeof(*out));
    out->locale.len = -1;
    out->text.len = -1;
    p = shm_nodestore_string(&w->ns, text_off, &len);
    if (p != NULL) {
        out->mask |= UA_LT_TEXT;
        out->text.len = (int32_t)len;
        out->text.data = (uint8_t *)(uintptr_t)p;
    }
    p = shm_nodestore_string(&w->ns, locale_off, &len);
    if (p != NULL) {
        out->mask |= UA_LT_LOCALE;
        out->locale.len = (int32_t)len;
        out->locale.data = (uint8_t *)(uintptr_t)p;
    }
}
