/*
 * broker/nsbuild.c: the NodeSet importer's second half (nsbuild.h): the
 * set broker/nodeset.c parsed (broker/nodeset_int.h) goes into the node
 * store, nodes and references before shm_nodestore_finish, then the
 * values, checked against their DataTypes, into their slots.
 *
 * Every error is "FILE:LINE: what" of the element it came from.  Runs at
 * the address-space build only (broker/addrspace.c), on the loop's
 * thread; the only allocation is the edge list, freed before return.
 */
#include "nsbuild.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "nodeset_int.h"
#include "proto/builtin.h"
#include "proto/nodeids_gen.h"
#include "proto/types_gen.h"

/* A reference in node-store terms, for removing duplicates. */
struct bk_nsb_edge {
    uint32_t src, type, dst;
};

static void bk_nsb_key(const struct bk_nodeset *s, const struct bk_nsx_id *id,
                       struct shm_nodekey *k);
static const char *bk_nsb_idstr(const struct bk_nodeset *s,
                                const struct bk_nsx_id *id, char *buf,
                                size_t len);
static int bk_nsb_edge_cmp(const void *a, const void *b);
static uint32_t bk_nsb_intern(struct shm_nodestore *ns,
                              const struct bk_nodeset *s, uint32_t off);
static bool bk_nsb_type_ok(uint32_t base, uint8_t bt);

static void
bk_nsb_key(const struct bk_nodeset *s, const struct bk_nsx_id *id,
           struct shm_nodekey *k)
{
    k->ns = id->ns;
    k->idtype = id->idtype;
    k->num = id->num;
    k->bytes = id->idtype == SHM_ID_NUMERIC ? NULL : s->heap + id->off;
    k->len = id->idtype == SHM_ID_NUMERIC ? 0 : id->len;
}

/* "ns=1;s=x" of a set NodeId, for messages. */
static const char *
bk_nsb_idstr(const struct bk_nodeset *s, const struct bk_nsx_id *id,
             char *buf, size_t len)
{
    if (id->idtype == SHM_ID_NUMERIC)
        snprintf(buf, len, "ns=%u;i=%u", id->ns, id->num);
    else if (id->idtype == SHM_ID_STRING)
        snprintf(buf, len, "ns=%u;s=%.*s", id->ns,
                 (int)(id->len > 200 ? 200 : id->len),
                 (const char *)s->heap + id->off);
    else
        snprintf(buf, len, "ns=%u;%c=(%u bytes)", id->ns,
                 id->idtype == SHM_ID_GUID ? 'g' : 'b', id->len);
    return buf;
}

static int
bk_nsb_edge_cmp(const void *a, const void *b)
{
    const struct bk_nsb_edge *x = a, *y = b;

    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->type != y->type)
        return x->type < y->type ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return 0;
}

static uint32_t
bk_nsb_intern(struct shm_nodestore *ns, const struct bk_nodeset *s,
              uint32_t off)
{
    const char *t = (const char *)s->heap + off;

    if (off == 0)
        return 0;
    return shm_nodestore_intern(ns, t, (uint32_t)strlen(t));
}

int
bk_nsbuild_add(struct bk_nodeset *s, struct shm_nodestore *ns, uint32_t *slot,
               char *err, size_t errlen)
{
    struct bk_nsb_edge   *e;
    uint32_t              ne = 0;
    char                  ib[256];

#define BK_NSB_ERR(file, line, ...)                                        \
    do {                                                                  \
        int n_ = snprintf(err, errlen, "%s:%u: ", s->files[file], line);  \
        if (n_ >= 0 && (size_t)n_ < errlen)                               \
            snprintf(err + n_, errlen - (size_t)n_, __VA_ARGS__);         \
    } while (0)
    for (uint32_t i = 0; i < s->nnodes; i++) {
        struct bk_nsx_node *g = &s->nodes[i];
        struct shm_nodekey  k;
        struct shm_node    *n;
        uint32_t            idx;

        bk_nsb_key(s, &g->id, &k);
        if (shm_nodestore_lookup(ns, &k) != SHM_NONE) {
            uint32_t j;

            for (j = 0; j < i; j++)
                if (s->nodes[j].store != SHM_NONE
                    && s->nodes[j].store == shm_nodestore_lookup(ns, &k))
                    break;
            if (j < i)
                BK_NSB_ERR(g->file, g->line, "duplicate NodeId %s (first "
                           "at %s:%u)", bk_nsb_idstr(s, &g->id, ib,
                                                     sizeof(ib)),
                           s->files[s->nodes[j].file], s->nodes[j].line);
            else
                BK_NSB_ERR(g->file, g->line, "duplicate NodeId %s (a node "
                           "of the server's own)",
                           bk_nsb_idstr(s, &g->id, ib, sizeof(ib)));
            return -1;
        }
        idx = shm_nodestore_add(ns, &k, g->node_class);
        if (idx == SHM_NONE) {
            BK_NSB_ERR(g->file, g->line, "the segment is too small");
            return -1;
        }
        g->store = idx;
        n = shm_nodestore_node(ns, idx);
        n->browse_ns = g->browse_ns;
        n->browse_name = bk_nsb_intern(ns, s, g->browse_name);
        n->dn_text = bk_nsb_intern(ns, s, g->dn_text);
        n->dn_locale = bk_nsb_intern(ns, s, g->dn_locale);
        n->desc_text = bk_nsb_intern(ns, s, g->desc_text);
        n->desc_locale = bk_nsb_intern(ns, s, g->desc_locale);
        n->flags = g->flags;
        n->event_notifier = g->event_notifier;
        n->write_mask = g->write_mask;
        n->user_write_mask = g->user_write_mask;
        if (g->node_class == SHM_NC_REFERENCETYPE) {
            n->u.ref.inv_text = bk_nsb_intern(ns, s, g->inv_text);
            n->u.ref.inv_locale = bk_nsb_intern(ns, s, g->inv_locale);
        }
        if (g->node_class == SHM_NC_VARIABLE
            || g->node_class == SHM_NC_VARIABLETYPE) {
            n->u.var.value_rank = g->value_rank;
            if (g->array_dims != 0) {
                uint32_t nd;

                memcpy(&nd, s->heap + g->array_dims, 4);
                n->u.var.array_dims = shm_nodestore_intern(
                    ns, s->heap + g->array_dims, 4 * (nd + 1));
            }
            n->access_level_ex = g->access_level;
            n->user_access_level = g->node_class == SHM_NC_VARIABLE
                                       ? g->user_access_level
                                       : g->access_level;
            n->min_sampling = g->min_sampling;
            n->u.var.slot = (*slot)++;
        }
        if ((n->browse_name == 0 && g->browse_name != 0)
            || (n->dn_text == 0 && g->dn_text != 0)) {
            BK_NSB_ERR(g->file, g->line, "the segment's strings are full");
            return -1;
        }
    }
    /* DataTypes, then references: every node is known now. */
    for (uint32_t i = 0; i < s->nnodes; i++) {
        struct bk_nsx_node *g = &s->nodes[i];
        struct shm_nodekey  k;
        uint32_t            dt;

        if (!g->has_data_type)
            continue;
        bk_nsb_key(s, &g->data_type, &k);
        dt = shm_nodestore_lookup(ns, &k);
        if (dt == SHM_NONE || ns->nodes[dt].node_class != SHM_NC_DATATYPE) {
            BK_NSB_ERR(g->file, g->line, "unknown DataType %s",
                       bk_nsb_idstr(s, &g->data_type, ib, sizeof(ib)));
            return -1;
        }
        ns->nodes[g->store].u.var.data_type = dt;
    }
    e = bk_alloc(((size_t)s->nrefs + 1) * sizeof(*e));
    if (e == NULL) {
        snprintf(err, errlen, "nodesets: out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < s->nrefs; i++) {
        const struct bk_nsx_ref *r = &s->refs[i];
        struct shm_nodekey       k;
        uint32_t                 t, d, src = s->nodes[r->src].store;

        bk_nsb_key(s, &r->type, &k);
        t = shm_nodestore_lookup(ns, &k);
        if (t == SHM_NONE
            || ns->nodes[t].node_class != SHM_NC_REFERENCETYPE) {
            BK_NSB_ERR(r->file, r->line, "unknown reference type %s",
                       bk_nsb_idstr(s, &r->type, ib, sizeof(ib)));
            bk_free(e);
            return -1;
        }
        bk_nsb_key(s, &r->target, &k);
        d = shm_nodestore_lookup(ns, &k);
        if (d == SHM_NONE) {
            BK_NSB_ERR(r->file, r->line, "unknown reference target %s",
                       bk_nsb_idstr(s, &r->target, ib, sizeof(ib)));
            bk_free(e);
            return -1;
        }
        e[ne].src = r->forward ? src : d;
        e[ne].type = t;
        e[ne].dst = r->forward ? d : src;
        ne++;
    }
    /* A reference written at both of its ends is one reference. */
    qsort(e, ne, sizeof(*e), bk_nsb_edge_cmp);
    for (uint32_t i = 0; i < ne; i++) {
        if (i > 0 && bk_nsb_edge_cmp(&e[i], &e[i - 1]) == 0)
            continue;
        if (shm_nodestore_add_ref(ns, e[i].src, e[i].type, e[i].dst) != 0) {
            snprintf(err, errlen, "nodesets: the segment's references are "
                     "full");
            bk_free(e);
            return -1;
        }
    }
    bk_free(e);
    return 0;
}

/*
 * Does a value of built-in type bt fit a DataType whose root is base?
 * Integer admits the unsigned types too (Part 5 has only SByte, Int16,
 * Int32, Int64 under Integer): an importer rule older than the built-in
 * table (proto/builtin.h, whose UA_BTF_INTEGER flag covers both), kept so
 * every NodeSet that loaded still loads.
 */
static bool
bk_nsb_type_ok(uint32_t base, uint8_t bt)
{
    switch (base) {
    case UA_NS0ID_BASEDATATYPE:
        return true;
    case UA_NS0ID_NUMBER:
        return bt >= UA_BT_SBYTE && bt <= UA_BT_DOUBLE;
    case UA_NS0ID_INTEGER:
        return bt >= UA_BT_SBYTE && bt <= UA_BT_UINT64;
    case UA_NS0ID_UINTEGER:
        return bt == UA_BT_BYTE || bt == UA_BT_UINT16 || bt == UA_BT_UINT32
               || bt == UA_BT_UINT64;
    case UA_NS0ID_ENUMERATION:
        return bt == UA_BT_INT32;
    case UA_NS0ID_STRUCTURE:
        return bt == UA_BT_EXTENSIONOBJECT;
    default:
        return base == bt;
    }
}

int
bk_nsbuild_values(struct bk_nodeset *s, const struct shm_nodestore *ns,
                  struct bk_value *val, int64_t now, char *err, size_t errlen)
{
    static const uint8_t null_variant = 0;

    for (uint32_t i = 0; i < s->nnodes; i++) {
        const struct bk_nsx_node *g = &s->nodes[i];
        const struct shm_node    *n = &ns->nodes[g->store];
        int                       rc;

        if (g->node_class != SHM_NC_VARIABLE
            && g->node_class != SHM_NC_VARIABLETYPE)
            continue;
        if (!g->has_value) {
            rc = bk_value_write_raw(val, n->u.var.slot, &null_variant, 1,
                                    now);
        } else {
            /* The ns0 base of the DataType: a built-in id, 26..29, or 0
             * (64 nodes deep, as this check has always walked). */
            uint32_t base = shm_nodestore_type_root(ns, n->u.var.data_type,
                                                    64);

            if (!bk_nsb_type_ok(base, g->value_bt)) {
                char ib[256];

                BK_NSB_ERR(g->file, g->value_line, "a %s value does not "
                           "match the DataType %s",
                           ua_builtin[g->value_bt].name,
                           bk_nsb_idstr(s, &g->data_type, ib, sizeof(ib)));
                return -1;
            }
            rc = bk_value_write_raw(val, n->u.var.slot, s->heap + g->value,
                                    g->value_len, now);
        }
        if (rc != 0) {
            BK_NSB_ERR(g->file, g->line, "the segment's value heap is full");
            return -1;
        }
    }
    return 0;
#undef BK_NSB_ERR
}
