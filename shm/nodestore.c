/*
 * shm/nodestore.c: build and read the address space in the segment.
 *
 * Build (broker only, before any worker attaches): nodes are appended and
 * indexed at once; strings are interned in the string heap through a
 * process-local dedup table; references are collected forward-only and laid
 * out at both ends by shm_nodestore_finish, which also computes `super`,
 * `type_def` and the reference-type subtype closure, then publishes
 * hdr->ready with a release store.
 *
 * Read (any process): lookups hash the NodeId and probe the index; every
 * offset taken from the segment is bounds-checked before use.
 */
#include "nodestore.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SHM_NS0_HAS_TYPE_DEFINITION 40
#define SHM_NS0_HAS_SUBTYPE         45
#define SHM_NS0_HAS_PROPERTY        46
#define SHM_SUPER_DEPTH_MAX         64
#define SHM_STRING_ALIGN            4

static uint64_t shm_nodestore_index_cap(const struct shm_plan *p);
static int shm_nodestore_bind(struct shm_nodestore *ns,
                              const struct shm_segment *s);

/* The index: a power of two, at most half full with every node in. */
static uint64_t
shm_nodestore_index_cap(const struct shm_plan *p)
{
    uint64_t cap = 1;

    while (cap < 2 * (uint64_t)p->nodes + 2)
        cap <<= 1;
    return cap;
}

void
shm_nodestore_plan(const struct shm_plan *p, uint64_t sizes[SHM_R_MAX])
{
    sizes[SHM_R_NODES] = (uint64_t)p->nodes * sizeof(struct shm_node);
    sizes[SHM_R_REFS] = (uint64_t)p->refs * sizeof(struct shm_ref);
    sizes[SHM_R_INDEX] = shm_nodestore_index_cap(p)
                         * sizeof(struct shm_index_entry);
    sizes[SHM_R_STRINGS] = p->strings + 8;
    sizes[SHM_R_REFTYPES] = sizeof(struct shm_reftypes);
}

void
shm_nodestore_plan_init(struct shm_segment *s, const struct shm_plan *p)
{
    s->hdr->index_cap = (uint32_t)shm_nodestore_index_cap(p);
}

int
shm_nodestore_plan_check(const struct shm_header *h)
{
    if (h->index_cap == 0 || (h->index_cap & (h->index_cap - 1)) != 0
        || (uint64_t)h->index_cap * sizeof(struct shm_index_entry)
               > h->regions[SHM_R_INDEX].size
        || (uint64_t)h->nnodes * sizeof(struct shm_node)
               > h->regions[SHM_R_NODES].size
        || (uint64_t)h->nrefs * sizeof(struct shm_ref)
               > h->regions[SHM_R_REFS].size
        || h->regions[SHM_R_REFTYPES].size < sizeof(struct shm_reftypes))
        return -EPROTO;
    return 0;
}

uint32_t
shm_nodekey_hash(const struct shm_nodekey *key)
{
    return shm_nodekey_hash_inl(key);
}

static int
shm_nodestore_bind(struct shm_nodestore *ns, const struct shm_segment *s)
{
    const struct shm_header *h = s->hdr;

    memset(ns, 0, sizeof(*ns));
    ns->seg = s;
    ns->nodes = shm_segment_region(s, SHM_R_NODES);
    ns->refs = shm_segment_region(s, SHM_R_REFS);
    ns->index = shm_segment_region(s, SHM_R_INDEX);
    ns->strings = shm_segment_region(s, SHM_R_STRINGS);
    ns->reftypes = shm_segment_region(s, SHM_R_REFTYPES);
    ns->strings_size = h->regions[SHM_R_STRINGS].size;
    ns->index_mask = h->index_cap - 1;
    return 0;
}

int
shm_nodestore_open(struct shm_nodestore *ns, const struct shm_segment *s)
{
    const struct shm_header *h = s->hdr;

    if (atomic_load_explicit(&((struct shm_header *)h)->ready,
                             memory_order_acquire) != 1)
        return -EAGAIN;     /* pairs with the release in finish */
    shm_nodestore_bind(ns, s);
    ns->nnodes = h->nnodes;
    ns->nrefs = h->nrefs;
    if ((uint64_t)ns->nnodes * sizeof(struct shm_node)
            > h->regions[SHM_R_NODES].size
        || (uint64_t)ns->nrefs * sizeof(struct shm_ref)
            > h->regions[SHM_R_REFS].size
        || ns->reftypes->n > SHM_REFTYPES_MAX)
        return -EPROTO;
    return 0;
}

uint32_t
shm_nodestore_lookup(const struct shm_nodestore *ns,
                     const struct shm_nodekey *key)
{
    return shm_nodestore_lookup_hashed(ns, key, shm_nodekey_hash_inl(key));
}

void
shm_nodestore_key(const struct shm_nodestore *ns, uint32_t i,
                  struct shm_nodekey *key)
{
    const struct shm_node *n = &ns->nodes[i];

    key->ns = n->ns;
    key->idtype = n->idtype;
    key->num = 0;
    key->bytes = NULL;
    key->len = 0;
    if (n->idtype == SHM_ID_NUMERIC)
        key->num = n->id;
    else
        key->bytes = shm_nodestore_string(ns, n->id, &key->len);
}

uint32_t
shm_nodestore_reftype_of(const struct shm_nodestore *ns, uint32_t i)
{
    if (i >= ns->nnodes || ns->nodes[i].node_class != SHM_NC_REFERENCETYPE)
        return SHM_NONE;
    return ns->nodes[i].u.ref.reftype;
}

bool
shm_nodestore_is_subtype(const struct shm_nodestore *ns, uint32_t a,
                         uint32_t b)
{
    for (int d = 0; d < SHM_SUPER_DEPTH_MAX && a < ns->nnodes; d++) {
        if (a == b)
            return true;
        a = ns->nodes[a].super;
    }
    return false;
}

uint32_t
shm_nodestore_type_root(const struct shm_nodestore *ns, uint32_t dt,
                        int depth)
{
    for (int d = 0; d < depth && dt < ns->nnodes; d++) {
        const struct shm_node *n = &ns->nodes[dt];

        if (n->ns == 0 && n->idtype == SHM_ID_NUMERIC && n->id >= 1
            && n->id <= SHM_NS0_TYPE_ROOT_MAX)
            return n->id;
        dt = n->super;
    }
    return 0;
}

uint32_t
shm_nodestore_property(const struct shm_nodestore *ns, uint32_t i,
                       const char *name)
{
    const struct shm_node *mn = &ns->nodes[i];
    struct shm_nodekey     hk = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                                  .num = SHM_NS0_HAS_PROPERTY };
    uint32_t               hpn = shm_nodestore_lookup(ns, &hk);
    uint32_t               hp = hpn == SHM_NONE
                                    ? SHM_NONE
                                    : shm_nodestore_reftype_of(ns, hpn);
    size_t                 nl = strlen(name);

    for (uint32_t k = 0; k < mn->nrefs && hp != SHM_NONE; k++) {
        const struct shm_ref  *r = &ns->refs[mn->refs + k];
        const struct shm_node *pn;
        const uint8_t         *bn;
        uint32_t               bl;

        if ((r->flags & SHM_REF_INVERSE) != 0
            || !shm_nodestore_reftype_is(ns, r->reftype, hp)
            || r->target >= ns->nnodes)
            continue;
        pn = &ns->nodes[r->target];
        bn = shm_nodestore_string(ns, pn->browse_name, &bl);
        if (pn->node_class == SHM_NC_VARIABLE && pn->browse_ns == 0
            && bn != NULL && bl == nl && memcmp(bn, name, nl) == 0)
            return r->target;
    }
    return SHM_NONE;
}

/* ------------------------------------------------------------------ */
/* building                                                            */
/* ------------------------------------------------------------------ */

int
shm_nodestore_build_init(struct shm_nodestore *ns, const struct shm_segment *s)
{
    const struct shm_header *h = s->hdr;
    uint64_t                 cap = 1024;

    shm_nodestore_bind(ns, s);
    ns->cap_nodes = (uint32_t)(h->regions[SHM_R_NODES].size
                               / sizeof(struct shm_node));
    ns->cap_refs = (uint32_t)(h->regions[SHM_R_REFS].size
                              / sizeof(struct shm_ref));
    memset(ns->index, 0xFF,
           (size_t)h->index_cap * sizeof(struct shm_index_entry));
    ns->strings_used = 8;           /* offset 0 means "no string" */
    while (cap < 2 * (uint64_t)ns->cap_nodes + 1024)
        cap <<= 1;
    ns->intern = calloc(cap, sizeof(uint32_t));
    ns->pending = malloc(((size_t)ns->cap_refs / 2 + 1)
                         * sizeof(struct shm_pending_ref));
    if (ns->intern == NULL || ns->pending == NULL) {
        shm_nodestore_build_abort(ns);
        return -ENOMEM;
    }
    ns->intern_mask = (uint32_t)cap - 1;
    return 0;
}

void
shm_nodestore_build_abort(struct shm_nodestore *ns)
{
    free(ns->intern);
    free(ns->pending);
    ns->intern = NULL;
    ns->pending = NULL;
    ns->npending = 0;
    ns->cap_refs = 0;           /* add_ref after finish: -ENOSPC */
}

uint32_t
shm_nodestore_intern(struct shm_nodestore *ns, const void *bytes,
                     uint32_t len)
{
    uint32_t h = shm_bytes_hash(bytes, len, 0x5354u);
    uint32_t i = h & ns->intern_mask;
    uint64_t off, need;

    for (;;) {
        uint32_t o = ns->intern[i];
        uint32_t l;

        if (o == 0)
            break;
        memcpy(&l, ns->strings + o, 4);
        if (l == len && memcmp(ns->strings + o + 4, bytes, len) == 0)
            return o;
        i = (i + 1) & ns->intern_mask;
    }
    off = ns->strings_used;
    need = (4 + (uint64_t)len + SHM_STRING_ALIGN - 1)
           & ~(uint64_t)(SHM_STRING_ALIGN - 1);
    if (off + need > ns->strings_size || off + need > UINT32_MAX)
        return 0;
    /* Keep the dedup table at most half full. */
    if ((uint64_t)ns->intern_n * 2 >= ns->intern_mask) {
        ns->strings_used = off;     /* no dedup beyond this: store anyway */
    } else {
        ns->intern[i] = (uint32_t)off;
        ns->intern_n++;
    }
    memcpy(ns->strings + off, &len, 4);
    memcpy(ns->strings + off + 4, bytes, len);
    ns->strings_used = off + need;
    return (uint32_t)off;
}

uint32_t
shm_nodestore_add(struct shm_nodestore *ns, const struct shm_nodekey *key,
                  uint8_t node_class)
{
    struct shm_node *n;
    uint32_t         h, i, idx;

    if (ns->nnodes >= ns->cap_nodes)
        return SHM_NONE;
    /* One hash for the lookup and the insert (21,000 nodes at a start). */
    h = shm_nodekey_hash_inl(key);
    if (shm_nodestore_lookup_hashed(ns, key, h) != SHM_NONE)
        return SHM_NONE;
    idx = ns->nnodes;
    n = &ns->nodes[idx];
    memset(n, 0, sizeof(*n));
    n->ns = key->ns;
    n->idtype = key->idtype;
    n->node_class = node_class;
    if (key->idtype == SHM_ID_NUMERIC) {
        n->id = key->num;
    } else {
        n->id = shm_nodestore_intern(ns, key->bytes, key->len);
        if (n->id == 0)
            return SHM_NONE;
    }
    n->super = SHM_NONE;
    n->type_def = SHM_NONE;
    if (node_class == SHM_NC_REFERENCETYPE) {
        n->u.ref.reftype = SHM_NONE;
    } else {
        n->u.var.data_type = SHM_NONE;
        n->u.var.slot = SHM_NONE;
    }
    ns->nnodes++;                   /* visible to the lookup below */
    i = h & ns->index_mask;
    while (ns->index[i].node != SHM_NONE)
        i = (i + 1) & ns->index_mask;
    ns->index[i].hash = h;
    ns->index[i].node = idx;
    return idx;
}

int
shm_nodestore_add_ref(struct shm_nodestore *ns, uint32_t src,
                      uint32_t reftype_node, uint32_t dst)
{
    struct shm_pending_ref *p;

    if (src >= ns->nnodes || dst >= ns->nnodes || reftype_node >= ns->nnodes)
        return -EINVAL;
    if ((uint64_t)(ns->npending + 1) * 2 > ns->cap_refs)
        return -ENOSPC;
    p = &ns->pending[ns->npending++];
    p->src = src;
    p->reftype_node = reftype_node;
    p->dst = dst;
    return 0;
}

int
shm_nodestore_finish(struct shm_nodestore *ns)
{
    struct shm_header   *h = ns->seg->hdr;
    struct shm_reftypes *rt = ns->reftypes;
    struct shm_nodekey   k = { .ns = 0, .idtype = SHM_ID_NUMERIC };
    uint32_t             has_subtype, has_typedef, total = 0;
    uint32_t            *fill;

    /* Reference types get small indices, in node order. */
    memset(rt, 0, sizeof(*rt));
    for (uint32_t i = 0; i < ns->nnodes; i++) {
        if (ns->nodes[i].node_class != SHM_NC_REFERENCETYPE)
            continue;
        if (rt->n >= SHM_REFTYPES_MAX) {
            shm_nodestore_build_abort(ns);
            return -ENOSPC;
        }
        ns->nodes[i].u.ref.reftype = rt->n;
        rt->node[rt->n++] = i;
    }
    k.num = SHM_NS0_HAS_SUBTYPE;
    has_subtype = shm_nodestore_lookup(ns, &k);
    k.num = SHM_NS0_HAS_TYPE_DEFINITION;
    has_typedef = shm_nodestore_lookup(ns, &k);

    /* Degrees, then slices, then both ends of every reference. */
    for (uint32_t i = 0; i < ns->nnodes; i++)
        ns->nodes[i].nrefs = 0;
    for (uint32_t i = 0; i < ns->npending; i++) {
        const struct shm_pending_ref *p = &ns->pending[i];

        if (ns->nodes[p->reftype_node].node_class != SHM_NC_REFERENCETYPE) {
            shm_nodestore_build_abort(ns);
            return -EINVAL;
        }
        ns->nodes[p->src].nrefs++;
        ns->nodes[p->dst].nrefs++;
        if (p->reftype_node == has_subtype)
            ns->nodes[p->dst].super = p->src;
        else if (p->reftype_node == has_typedef)
            ns->nodes[p->src].type_def = p->dst;
    }
    for (uint32_t i = 0; i < ns->nnodes; i++) {
        ns->nodes[i].refs = total;
        total += ns->nodes[i].nrefs;
    }
    fill = calloc(ns->nnodes + 1, sizeof(uint32_t));
    if (fill == NULL) {
        shm_nodestore_build_abort(ns);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < ns->npending; i++) {
        const struct shm_pending_ref *p = &ns->pending[i];
        uint16_t t = (uint16_t)ns->nodes[p->reftype_node].u.ref.reftype;
        struct shm_ref *r;

        r = &ns->refs[ns->nodes[p->src].refs + fill[p->src]++];
        r->target = p->dst;
        r->reftype = t;
        r->flags = 0;
        r = &ns->refs[ns->nodes[p->dst].refs + fill[p->dst]++];
        r->target = p->src;
        r->reftype = t;
        r->flags = SHM_REF_INVERSE;
    }
    free(fill);

    /* Subtype closure: a is a subtype of every type on its super chain. */
    for (uint32_t a = 0; a < rt->n; a++) {
        uint32_t n = rt->node[a];

        for (int d = 0; d < SHM_SUPER_DEPTH_MAX && n < ns->nnodes; d++) {
            uint32_t b = ns->nodes[n].u.ref.reftype;

            if (ns->nodes[n].node_class != SHM_NC_REFERENCETYPE
                || b >= SHM_REFTYPES_MAX)
                break;
            rt->sub[a][b >> 6] |= UINT64_C(1) << (b & 63);
            n = ns->nodes[n].super;
        }
    }

    h->nnodes = ns->nnodes;
    h->nrefs = total;
    h->strings_used = ns->strings_used;
    ns->nrefs = total;
    shm_nodestore_build_abort(ns);
    /* Publish the build; pairs with the acquire in shm_nodestore_open. */
    atomic_store_explicit(&h->ready, 1, memory_order_release);
    return 0;
}
