/*
 * broker/event.c: event records (event.h; the format in shm/fanout.h).
 *
 * EventIds: a 64-bit counter and a 64-bit random key drawn once per broker
 * (getrandom), mixed by two rounds of a 64-bit finaliser: unique for the
 * broker's life (the counter never repeats and the mix is a bijection),
 * and not guessable from one another.
 */
#include "event.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/types_gen.h"

static int bk_event_put(struct bk_event *e, const char *path, size_t plen,
                        const uint8_t *var, uint32_t vlen);
static bool bk_event_has(const struct bk_event *e, const char *path,
                         size_t plen);

static uint64_t bk_event_ctr;
static uint64_t bk_event_key[2];
static bool     bk_event_keyed;

void
bk_event_id(uint8_t id[16])
{
    uint64_t a, b, c;

    if (!bk_event_keyed) {
        if (getrandom(bk_event_key, sizeof(bk_event_key), 0)
            != (ssize_t)sizeof(bk_event_key)) {
            bk_event_key[0] = (uint64_t)(uintptr_t)&bk_event_ctr;
            bk_event_key[1] = UINT64_C(0x9e3779b97f4a7c15);
        }
        bk_event_keyed = true;
    }
    c = ++bk_event_ctr;
    a = shm_mix64(c ^ bk_event_key[0]);
    b = shm_mix64(a ^ bk_event_key[1]);
    memcpy(id, &a, 8);
    memcpy(id + 8, &b, 8);
}

void
bk_event_nodeid(const struct shm_nodestore *ns, uint32_t i,
                struct ua_nodeid *out)
{
    struct shm_nodekey k;

    memset(out, 0, sizeof(*out));
    if (i >= ns->nnodes)
        return;                     /* the null NodeId */
    shm_nodestore_key(ns, i, &k);
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
    default:
        out->id.str.len = k.bytes != NULL ? (int32_t)k.len : 0;
        out->id.str.data = (uint8_t *)(uintptr_t)k.bytes;
        break;
    }
}

void
bk_event_begin(struct bk_event *e, uint8_t *buf, uint32_t cap,
               uint32_t source, uint32_t type)
{
    struct shm_fo_ev h = { source, type, 0 };

    memset(e, 0, sizeof(*e));
    e->buf = buf;
    e->cap = cap;
    if (cap < sizeof(h)) {
        e->full = true;
        return;
    }
    memcpy(buf, &h, sizeof(h));
    e->len = sizeof(h);
}

/* Is path a field of e already? */
static bool
bk_event_has(const struct bk_event *e, const char *path, size_t plen)
{
    uint32_t off = sizeof(struct shm_fo_ev);

    for (uint32_t i = 0; i < e->nfields; i++) {
        uint16_t pl;
        uint32_t vl;

        memcpy(&pl, e->buf + off, 2);
        if (pl == plen && memcmp(e->buf + off + 2, path, plen) == 0)
            return true;
        memcpy(&vl, e->buf + off + 2 + pl, 4);
        off += 2u + pl + 4u + vl;
    }
    return false;
}

static int
bk_event_put(struct bk_event *e, const char *path, size_t plen,
             const uint8_t *var, uint32_t vlen)
{
    uint16_t pl = (uint16_t)plen;
    uint32_t n;

    if (plen == 0 || plen > SHM_FO_EV_PATH_MAX)
        return -EINVAL;
    if (bk_event_has(e, path, plen))
        return -EEXIST;
    n = 2u + pl + 4u + vlen;
    if (e->full || e->nfields >= SHM_FO_EV_FIELDS_MAX || e->cap - e->len < n) {
        e->full = true;
        return -ENOSPC;
    }
    memcpy(e->buf + e->len, &pl, 2);
    memcpy(e->buf + e->len + 2, path, pl);
    memcpy(e->buf + e->len + 2 + pl, &vlen, 4);
    if (var != NULL)
        memmove(e->buf + e->len + 6 + pl, var, vlen);
    e->len += n;
    e->nfields++;
    memcpy(e->buf + offsetof(struct shm_fo_ev, nfields), &e->nfields, 4);
    return 0;
}

#define BK_EV_IS(p, n, lit) ((n) == sizeof(lit) - 1 \
                             && memcmp((p), (lit), sizeof(lit) - 1) == 0)

int
bk_event_field(struct bk_event *e, const char *path, size_t plen,
               const struct ua_variant *v)
{
    size_t   need = ua_encoded_size(v, &ua_types[UA_TYPE_VARIANT]), got;
    uint32_t at = e->len + 6u + (uint32_t)plen;
    int      rc;

    if (need == 0)
        return -EINVAL;
    if (plen == 0 || plen > SHM_FO_EV_PATH_MAX)
        return -EINVAL;
    if (e->full || at > e->cap || e->cap - at < need) {
        e->full = true;
        return -ENOSPC;
    }
    /* Encode straight where the field's Variant goes. */
    if (ua_encode(v, &ua_types[UA_TYPE_VARIANT], e->buf + at, e->cap - at,
                  &got) != UA_GOOD)
        return -EINVAL;
    rc = bk_event_put(e, path, plen, NULL, (uint32_t)got);
    if (rc != 0)
        return rc;
    if (BK_EV_IS(path, plen, "0:Time"))
        e->has_time = true;
    else if (BK_EV_IS(path, plen, "0:ReceiveTime"))
        e->has_receive = true;
    else if (BK_EV_IS(path, plen, "0:Message"))
        e->has_message = true;
    else if (BK_EV_IS(path, plen, "0:Severity"))
        e->has_severity = true;
    else if (BK_EV_IS(path, plen, "0:SourceName"))
        e->has_source_name = true;
    return 0;
}

int
bk_event_std(struct bk_event *e, const struct shm_nodestore *ns, int64_t now,
             uint16_t severity)
{
    struct shm_fo_ev        h;
    struct ua_variant       v;
    struct ua_string        id, sn;
    struct ua_nodeid        type, src;
    struct ua_localizedtext msg;
    uint8_t                 idb[16];
    int                     rc;

    if (e->len < sizeof(h))
        return -ENOSPC;
    memcpy(&h, e->buf, sizeof(h));
    bk_event_id(idb);
    id.len = 16;
    id.data = idb;
    ua_variant_set_scalar(&v, &id, UA_BT_BYTESTRING);
    rc = bk_event_field(e, "0:EventId", 9, &v);
    if (rc != 0 && rc != -EEXIST)
        return rc;
    bk_event_nodeid(ns, h.type, &type);
    ua_variant_set_scalar(&v, &type, UA_BT_NODEID);
    rc = bk_event_field(e, "0:EventType", 11, &v);
    if (rc != 0 && rc != -EEXIST)
        return rc;
    bk_event_nodeid(ns, h.source, &src);
    ua_variant_set_scalar(&v, &src, UA_BT_NODEID);
    rc = bk_event_field(e, "0:SourceNode", 12, &v);
    if (rc != 0 && rc != -EEXIST)
        return rc;
    if (!e->has_source_name) {
        const uint8_t *s = NULL;
        uint32_t       sl = 0;

        if (h.source < ns->nnodes)
            s = shm_nodestore_string(ns, ns->nodes[h.source].browse_name,
                                     &sl);
        sn.len = s != NULL ? (int32_t)sl : 0;
        sn.data = (uint8_t *)(uintptr_t)s;
        ua_variant_set_scalar(&v, &sn, UA_BT_STRING);
        if ((rc = bk_event_field(e, "0:SourceName", 12, &v)) != 0)
            return rc;
    }
    if (!e->has_time) {
        ua_variant_set_scalar(&v, &now, UA_BT_DATETIME);
        if ((rc = bk_event_field(e, "0:Time", 6, &v)) != 0)
            return rc;
    }
    if (!e->has_receive) {
        ua_variant_set_scalar(&v, &now, UA_BT_DATETIME);
        if ((rc = bk_event_field(e, "0:ReceiveTime", 13, &v)) != 0)
            return rc;
    }
    if (!e->has_message) {
        memset(&msg, 0, sizeof(msg));
        msg.mask = UA_LT_TEXT;
        msg.locale.len = -1;
        msg.text.len = 0;
        msg.text.data = (uint8_t *)(uintptr_t)"";
        ua_variant_set_scalar(&v, &msg, UA_BT_LOCALIZEDTEXT);
        if ((rc = bk_event_field(e, "0:Message", 9, &v)) != 0)
            return rc;
    }
    if (!e->has_severity) {
        ua_variant_set_scalar(&v, &severity, UA_BT_UINT16);
        if ((rc = bk_event_field(e, "0:Severity", 10, &v)) != 0)
            return rc;
    }
    return 0;
}
