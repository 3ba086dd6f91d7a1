/*
 * shm/nodestore.h: the address space in the segment: nodes, references,
 * strings, the NodeId hash index and the reference-type subtype closure.
 *
 * The broker builds it once (the shm_nodestore_add_* calls, then
 * shm_nodestore_finish) before any worker attaches; afterwards it is
 * read-only and any number of processes read it with no lock.
 *
 * shm/ does not know proto/'s types: a NodeId is a struct shm_nodekey.
 */
#ifndef SHM_NODESTORE_H
#define SHM_NODESTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "layout.h"
#include "segment.h"

/* A NodeId to look up or add. */
struct shm_nodekey {
    uint16_t       ns;
    uint8_t        idtype;      /* SHM_ID_* */
    uint32_t       num;         /* SHM_ID_NUMERIC */
    const uint8_t *bytes;       /* the others: the identifier bytes */
    uint32_t       len;         /* 16 for a GUID */
};

/* This process's view of the node store. */
struct shm_nodestore {
    const struct shm_segment     *seg;
    struct shm_node              *nodes;
    struct shm_ref               *refs;
    struct shm_index_entry       *index;
    uint8_t                      *strings;
    struct shm_reftypes          *reftypes;
    uint32_t                      nnodes;
    uint32_t                      nrefs;
    uint32_t                      index_mask;
    uint64_t                      strings_size;
    /* Build state, broker only (process-local memory, freed by finish). */
    uint32_t                      cap_nodes;
    uint32_t                      cap_refs;
    uint64_t                      strings_used;
    uint32_t                     *intern;       /* heap offsets, 0 empty */
    uint32_t                      intern_mask;
    uint32_t                      intern_n;
    struct shm_pending_ref       *pending;      /* forward references */
    uint32_t                      npending;
};

struct shm_pending_ref {
    uint32_t src;
    uint32_t reftype_node;
    uint32_t dst;
};

/*
 * Bind to an attached segment whose build is complete: 0, -EAGAIN before
 * the broker's finish, -EPROTO for counts that do not fit their regions.
 */
int shm_nodestore_open(struct shm_nodestore *ns, const struct shm_segment *s);

/* --- reading (any process) ------------------------------------------- */

/* The node index of key, or SHM_NONE. */
uint32_t shm_nodestore_lookup(const struct shm_nodestore *ns,
                              const struct shm_nodekey *key);

/* --- the index's hash and key comparison (inline for the lookups) --- */

static inline uint64_t
shm_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static inline uint64_t
shm_load64(const uint8_t *p)
{
    uint64_t x;

    memcpy(&x, p, 8);
    return x;
}

static inline uint32_t
shm_load32(const uint8_t *p)
{
    uint32_t x;

    memcpy(&x, p, 4);
    return x;
}

/*
 * Identifier bytes, a word at a time: NodeId strings are short ("v17",
 * "Demo.Static.Int32"), and a byte loop with a multiply per byte was a
 * tenth of a Read.  16 bytes per round; the last 1..16 are read as two
 * overlapping words, never past p + n.  The length is mixed in first, so
 * the overlap cannot make two lengths collide systematically.
 */
static inline uint32_t
shm_bytes_hash(const uint8_t *p, uint32_t n, uint32_t seed)
{
    uint64_t h = (UINT64_C(0x9e3779b97f4a7c15) ^ seed) + n;
    uint64_t a, b;

    while (n > 16) {
        h = (h ^ shm_load64(p)) * UINT64_C(0xff51afd7ed558ccd);
        h = (h ^ (h >> 29) ^ shm_load64(p + 8))
            * UINT64_C(0xc4ceb9fe1a85ec53);
        p += 16;
        n -= 16;
    }
    if (n >= 8) {
        a = shm_load64(p);
        b = shm_load64(p + n - 8);
    } else if (n >= 4) {
        a = shm_load32(p);
        b = shm_load32(p + n - 4);
    } else if (n > 0) {
        a = (uint64_t)p[0] | (uint64_t)p[n >> 1] << 8
            | (uint64_t)p[n - 1] << 16;
        b = 0;
    } else {
        a = b = 0;
    }
    h = (h ^ a) * UINT64_C(0xff51afd7ed558ccd);
    h = (h ^ (h >> 29) ^ b) * UINT64_C(0xc4ceb9fe1a85ec53);
    return (uint32_t)shm_mix64(h);
}

/* shm_nodekey_hash() of a key given by its fields (a caller holding them
 * in registers need not store the key and read it back), inline. */
static inline uint32_t
shm_nodekey_hash_parts(uint16_t ns, uint8_t idtype, uint32_t num,
                       const uint8_t *bytes, uint32_t len)
{
    if (idtype == SHM_ID_NUMERIC)
        return (uint32_t)shm_mix64(((uint64_t)ns << 32) | num);
    return shm_bytes_hash(bytes, len, ((uint32_t)ns << 8) | idtype);
}

/* shm_nodekey_hash(), inline. */
static inline uint32_t
shm_nodekey_hash_inl(const struct shm_nodekey *key)
{
    return shm_nodekey_hash_parts(key->ns, key->idtype, key->num,
                                  key->bytes, key->len);
}

/* a[n] == b[n] without a call for the short identifiers NodeIds have. */
static inline bool
shm_bytes_eq(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    if (n >= 8 && n <= 16)
        return shm_load64(a) == shm_load64(b)
               && shm_load64(a + n - 8) == shm_load64(b + n - 8);
    if (n >= 4 && n < 8)
        return shm_load32(a) == shm_load32(b)
               && shm_load32(a + n - 4) == shm_load32(b + n - 4);
    if (n < 4)      /* bytes 0, n/2 and n-1 are all of them ("v17") */
        return n == 0
               || (a[0] == b[0] && a[n >> 1] == b[n >> 1]
                   && a[n - 1] == b[n - 1]);
    return memcmp(a, b, n) == 0;
}

static inline bool
shm_node_matches(const struct shm_nodestore *ns, const struct shm_node *n,
                 const struct shm_nodekey *key)
{
    uint32_t off, len;

    if (n->ns != key->ns || n->idtype != key->idtype)
        return false;
    if (key->idtype == SHM_ID_NUMERIC)
        return n->id == key->num;
    /* shm_nodestore_string, inlined: off == 0 or out of the heap fails. */
    off = n->id;
    if (off == 0 || (uint64_t)off + 4 + key->len > ns->strings_size)
        return false;
    memcpy(&len, ns->strings + off, 4);
    return len == key->len
           && shm_bytes_eq(ns->strings + off + 4, key->bytes, len);
}

/*
 * The same for a key whose hash h (shm_nodekey_hash) is known already: a
 * caller with many keys hashes each a few keys ahead and prefetches its
 * index entry (shm_nodestore_prefetch), so the entries' cache misses
 * overlap instead of waiting one after the other.  Inline, as are the
 * hash and the key comparison above: a Write resolves a NodeId per
 * WriteValue, and the calls cost about as much as the probe.
 */
static inline uint32_t
shm_nodestore_lookup_hashed(const struct shm_nodestore *ns,
                            const struct shm_nodekey *key, uint32_t h)
{
    uint32_t i = h & ns->index_mask;

    for (uint32_t probes = 0; probes <= ns->index_mask; probes++) {
        const struct shm_index_entry *e = &ns->index[i];

        if (e->node == SHM_NONE)
            return SHM_NONE;
        if (e->hash == h && e->node < ns->nnodes
            && shm_node_matches(ns, &ns->nodes[e->node], key))
            return e->node;
        i = (i + 1) & ns->index_mask;
    }
    return SHM_NONE;
}

/* A hint only: the index entry a key of hash h starts its probe at. */
static inline void
shm_nodestore_prefetch(const struct shm_nodestore *ns, uint32_t h)
{
    __builtin_prefetch(&ns->index[h & ns->index_mask]);
}

/*
 * Hints only, for a key hashed ahead (a few lookups later): the node the
 * first index entry of hash h names, once that entry is cached; then the
 * bytes of that node's String identifier, once the node is.  A pipeline
 * of them turns a lookup's three dependent misses (entry, node, string)
 * into overlapped ones.
 */
static inline void
shm_nodestore_prefetch_node(const struct shm_nodestore *ns, uint32_t h)
{
    uint32_t n = ns->index[h & ns->index_mask].node;

    if (n < ns->nnodes)
        __builtin_prefetch(&ns->nodes[n]);
}

static inline void
shm_nodestore_prefetch_id(const struct shm_nodestore *ns, uint32_t h)
{
    uint32_t n = ns->index[h & ns->index_mask].node;

    if (n < ns->nnodes && ns->nodes[n].idtype != SHM_ID_NUMERIC
        && ns->nodes[n].id < ns->strings_size)
        __builtin_prefetch(ns->strings + ns->nodes[n].id);
}

/* Node i's NodeId as a key (bytes point into the segment). */
void shm_nodestore_key(const struct shm_nodestore *ns, uint32_t i,
                       struct shm_nodekey *key);

/*
 * A heap string: *len bytes at the returned pointer, or NULL for offset 0
 * or an offset outside the heap.
 */
static inline const uint8_t *
shm_nodestore_string(const struct shm_nodestore *ns, uint32_t off,
                     uint32_t *len)
{
    uint32_t n;

    /* Inline: Browse calls it three times per reference. */
    if (off == 0 || (uint64_t)off + 4 > ns->strings_size) {
        *len = 0;
        return NULL;
    }
    memcpy(&n, ns->strings + off, 4);
    if ((uint64_t)off + 4 + n > ns->strings_size) {
        *len = 0;
        return NULL;
    }
    *len = n;
    return ns->strings + off + 4;
}

/* True when reference type a is b or one of b's subtypes. */
static inline bool
shm_nodestore_reftype_is(const struct shm_nodestore *ns, uint32_t a,
                         uint32_t b)
{
    if (a >= SHM_REFTYPES_MAX || b >= SHM_REFTYPES_MAX)
        return false;
    return (ns->reftypes->sub[a][b >> 6] >> (b & 63)) & 1;
}

/* The reftype index of reference-type node i, or SHM_NONE. */
uint32_t shm_nodestore_reftype_of(const struct shm_nodestore *ns, uint32_t i);

/* True when node a is node b or a subtype of it (walks `super`). */
bool shm_nodestore_is_subtype(const struct shm_nodestore *ns, uint32_t a,
                              uint32_t b);

/*
 * The type root of DataType node dt: the first node of its supertype chain
 * (dt itself first, at most depth nodes) whose NodeId is ns=0 numeric with
 * an id in 1..SHM_NS0_TYPE_ROOT_MAX (a built-in type, BaseDataType 24,
 * Structure 22, or the abstract Number 26, Integer 27, UInteger 28,
 * Enumeration 29): that id, or 0 when there is none.  Write and Call check
 * values with depth SHM_TYPE_ROOT_DEPTH.
 */
#define SHM_NS0_TYPE_ROOT_MAX 29
#define SHM_TYPE_ROOT_DEPTH   32

uint32_t shm_nodestore_type_root(const struct shm_nodestore *ns, uint32_t dt,
                                 int depth);

/*
 * Node i's property name: the target of a forward HasProperty (ns=0;i=46)
 * or subtype reference that is a Variable with BrowseName 0:name; its node
 * index, or SHM_NONE.
 */
uint32_t shm_nodestore_property(const struct shm_nodestore *ns, uint32_t i,
                                const char *name);

/* The 32-bit hash the index uses. */
uint32_t shm_nodekey_hash(const struct shm_nodekey *key);

/* --- the segment plan (shm/plan.c) ------------------------------------ */

/*
 * The bytes of the node store's regions for plan p into sizes[]
 * (SHM_R_NODES, SHM_R_REFS, SHM_R_INDEX, SHM_R_STRINGS, SHM_R_REFTYPES):
 * p->nodes nodes, p->refs references, p->strings string bytes, an index
 * at most half full.
 */
void shm_nodestore_plan(const struct shm_plan *p, uint64_t sizes[SHM_R_MAX]);

/* The header's node-store fields of a segment fresh from the plan. */
void shm_nodestore_plan_init(struct shm_segment *s, const struct shm_plan *p);

/*
 * Whether header h's node-store fields fit its regions (a worker checks
 * before it trusts them): the index capacity a power of two within
 * SHM_R_INDEX, the counts within SHM_R_NODES and SHM_R_REFS, SHM_R_REFTYPES
 * large enough.  0 or -EPROTO.
 */
int shm_nodestore_plan_check(const struct shm_header *h);

/* --- building (broker only, before shm_nodestore_finish) ------------- */

/*
 * Start building into a segment fresh from shm_plan_create.  Allocates
 * the builder's scratch tables (freed by finish or build_abort).  0 or
 * -ENOMEM.
 */
int shm_nodestore_build_init(struct shm_nodestore *ns,
                             const struct shm_segment *s);

/* Free the builder's scratch tables without finishing. */
void shm_nodestore_build_abort(struct shm_nodestore *ns);

/* Intern len bytes in the heap (deduplicated); offset, or 0 when full. */
uint32_t shm_nodestore_intern(struct shm_nodestore *ns, const void *bytes,
                              uint32_t len);

/*
 * Append a node with NodeId key; its other fields are zero except super,
 * type_def, the var/ref union (SHM_NONE where they are indices) and
 * user_access_level.  The node index, or SHM_NONE when full or when key
 * exists already.
 */
uint32_t shm_nodestore_add(struct shm_nodestore *ns,
                           const struct shm_nodekey *key, uint8_t node_class);

/* Node i for the builder to fill in. */
static inline struct shm_node *
shm_nodestore_node(const struct shm_nodestore *ns, uint32_t i)
{
    return &ns->nodes[i];
}

/*
 * Record a reference src --reftype_node--> dst (node indices); it is stored
 * at both ends when shm_nodestore_finish runs.  0 or -ENOSPC.
 */
int shm_nodestore_add_ref(struct shm_nodestore *ns, uint32_t src,
                          uint32_t reftype_node, uint32_t dst);

/*
 * Sort references per node, fill the subtype closure of the reference types
 * (HasSubtype is ns=0;i=45), set type_def from HasTypeDefinition (i=40) and
 * super from HasSubtype, and mark the segment ready.  0 or -errno.
 */
int shm_nodestore_finish(struct shm_nodestore *ns);

#endif /* SHM_NODESTORE_H */
