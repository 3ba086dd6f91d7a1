/*
 * tests/unit/shm/check_nodestore.c: shm/nodestore.c: building the address
 * space (intern, add, add_ref, finish) and reading it: NodeId lookups of
 * every identifier type, references at both ends, super/type_def, the
 * reference-type subtype closure, capacity exhaustion, and a forked child
 * reading the store through a read-only attachment (the worker's path).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "shm/segment.h"

/* ns=0 numeric ids of the standard reference types used here. */
#define I_REFERENCES          31
#define I_NON_HIERARCHICAL    32
#define I_HIERARCHICAL        33
#define I_HAS_CHILD           34
#define I_ORGANIZES           35
#define I_HAS_TYPE_DEFINITION 40
#define I_HAS_SUBTYPE         45
#define I_HAS_COMPONENT       47
#define I_BASE_DATA_TYPE      24
#define I_NUMBER              26
#define I_INTEGER             27
#define I_INT32               6
#define I_STRING              12
#define I_BASE_OBJECT_TYPE    58
#define I_FOLDER_TYPE         61
#define I_OBJECTS_FOLDER      85

static const uint8_t guid_a[16] = {
    0x72, 0x96, 0x2b, 0x91, 0xfa, 0x75, 0x4a, 0xe6,
    0x8d, 0x28, 0xb4, 0x04, 0xdc, 0x7d, 0xaf, 0x63,
};
static const uint8_t guid_b[16] = {         /* guid_a, last byte differs */
    0x72, 0x96, 0x2b, 0x91, 0xfa, 0x75, 0x4a, 0xe6,
    0x8d, 0x28, 0xb4, 0x04, 0xdc, 0x7d, 0xaf, 0x64,
};
static const uint8_t opaque_a[5] = { 0x00, 0x01, 0x00, 0xfe, 0xff };
static const uint8_t opaque_b[5] = { 0x00, 0x01, 0x00, 0xfe, 0xfe };

static struct shm_nodekey
knum(uint16_t ns, uint32_t num)
{
    struct shm_nodekey k = { .ns = ns, .idtype = SHM_ID_NUMERIC, .num = num };

    return k;
}

static struct shm_nodekey
kbytes(uint16_t ns, uint8_t idtype, const void *b, uint32_t len)
{
    struct shm_nodekey k = { .ns = ns, .idtype = idtype, .bytes = b,
                             .len = len };

    return k;
}

static struct shm_nodekey
kstr(uint16_t ns, const char *s)
{
    return kbytes(ns, SHM_ID_STRING, s, (uint32_t)strlen(s));
}

static void
seg_create(struct shm_segment *s, uint32_t nodes, uint32_t refs,
           uint64_t strings)
{
    struct shm_plan p = { .nodes = nodes, .refs = refs, .strings = strings,
                          .slots = 4, .vheap = 4096 };

    ck_assert_int_eq(shm_plan_create(s, &p, "check_nodestore"), 0);
}

static uint32_t
add_or_fail(struct shm_nodestore *ns, struct shm_nodekey k, uint8_t nc)
{
    uint32_t i = shm_nodestore_add(ns, &k, nc);

    ck_assert_uint_ne(i, SHM_NONE);
    return i;
}

/*
 * Every lookup of these tests both ways: whole (shm_nodestore_lookup) and
 * with the hash computed ahead (shm_nodestore_lookup_hashed, the Write
 * path's); they must agree, found or not.
 */
static uint32_t
lookup(const struct shm_nodestore *ns, struct shm_nodekey k)
{
    uint32_t a = shm_nodestore_lookup(ns, &k);
    uint32_t b = shm_nodestore_lookup_hashed(ns, &k, shm_nodekey_hash(&k));

    ck_assert_uint_eq(a, b);
    return a;
}

/* ------------------------------------------------------------------ */
/* A small store with every identifier type in several namespaces.    */
/* ------------------------------------------------------------------ */

struct small {
    struct shm_segment   seg;
    struct shm_nodestore st;
    uint32_t references, non_hier, hier, has_child, organizes, has_typedef,
        has_subtype, has_component;
    uint32_t base_object_type, folder_type, objects;
    uint32_t num_ns2, str_ns1, str_ns3, guid_ns2, opaque_ns4, empty_ns1;
    uint32_t base_dt, number, integer, int32, string;
};

/* Reference types: [child] = parent, by numeric id (0: root). */
static const uint32_t reftype_parent[][2] = {
    { I_REFERENCES, 0 },
    { I_HIERARCHICAL, I_REFERENCES },
    { I_NON_HIERARCHICAL, I_REFERENCES },
    { I_ORGANIZES, I_HIERARCHICAL },
    { I_HAS_CHILD, I_HIERARCHICAL },
    { I_HAS_COMPONENT, I_HAS_CHILD },
    { I_HAS_TYPE_DEFINITION, I_NON_HIERARCHICAL },
    { I_HAS_SUBTYPE, I_HAS_CHILD },
};
#define NREFTYPES (sizeof(reftype_parent) / sizeof(reftype_parent[0]))

static void
small_build(struct small *m)
{
    struct shm_nodestore *st = &m->st;
    uint32_t rt[NREFTYPES];

    memset(m, 0, sizeof(*m));
    seg_create(&m->seg, 64, 256, 4096);
    ck_assert_int_eq(shm_nodestore_build_init(st, &m->seg), 0);

    /* Reference types first, in an order where HasSubtype comes late. */
    for (size_t i = 0; i < NREFTYPES; i++)
        rt[i] = add_or_fail(st, knum(0, reftype_parent[i][0]),
                            SHM_NC_REFERENCETYPE);
    m->references = rt[0];
    m->hier = rt[1];
    m->non_hier = rt[2];
    m->organizes = rt[3];
    m->has_child = rt[4];
    m->has_component = rt[5];
    m->has_typedef = rt[6];
    m->has_subtype = rt[7];

    m->base_object_type = add_or_fail(st, knum(0, I_BASE_OBJECT_TYPE),
                                      SHM_NC_OBJECTTYPE);
    m->folder_type = add_or_fail(st, knum(0, I_FOLDER_TYPE),
                                 SHM_NC_OBJECTTYPE);
    m->objects = add_or_fail(st, knum(0, I_OBJECTS_FOLDER), SHM_NC_OBJECT);
    m->num_ns2 = add_or_fail(st, knum(2, I_OBJECTS_FOLDER), SHM_NC_VARIABLE);
    m->str_ns1 = add_or_fail(st, kstr(1, "Temperature"), SHM_NC_VARIABLE);
    m->str_ns3 = add_or_fail(st, kstr(3, "Temperature"), SHM_NC_VARIABLE);
    m->guid_ns2 = add_or_fail(st, kbytes(2, SHM_ID_GUID, guid_a, 16),
                              SHM_NC_OBJECT);
    m->opaque_ns4 = add_or_fail(st, kbytes(4, SHM_ID_OPAQUE, opaque_a, 5),
                                SHM_NC_METHOD);
    m->empty_ns1 = add_or_fail(st, kstr(1, ""), SHM_NC_OBJECT);

    m->base_dt = add_or_fail(st, knum(0, I_BASE_DATA_TYPE), SHM_NC_DATATYPE);
    m->number = add_or_fail(st, knum(0, I_NUMBER), SHM_NC_DATATYPE);
    m->integer = add_or_fail(st, knum(0, I_INTEGER), SHM_NC_DATATYPE);
    m->int32 = add_or_fail(st, knum(0, I_INT32), SHM_NC_DATATYPE);
    m->string = add_or_fail(st, knum(0, I_STRING), SHM_NC_DATATYPE);

    /* The reference-type hierarchy, added child-first for some. */
    for (size_t i = NREFTYPES; i-- > 0;) {
        for (size_t j = 0; j < NREFTYPES; j++)
            if (reftype_parent[i][1] == reftype_parent[j][0])
                ck_assert_int_eq(shm_nodestore_add_ref(st, rt[j],
                                                       m->has_subtype, rt[i]),
                                 0);
    }
    /* Data types: BaseDataType > Number > Integer > Int32; > String. */
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->base_dt, m->has_subtype,
                                           m->number), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->number, m->has_subtype,
                                           m->integer), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->integer, m->has_subtype,
                                           m->int32), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->base_dt, m->has_subtype,
                                           m->string), 0);
    /* Object types and instances. */
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->base_object_type,
                                           m->has_subtype, m->folder_type), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->objects, m->has_typedef,
                                           m->folder_type), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->guid_ns2, m->has_typedef,
                                           m->base_object_type), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->objects, m->organizes,
                                           m->str_ns1), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->objects, m->organizes,
                                           m->str_ns3), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->guid_ns2, m->has_component,
                                           m->num_ns2), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(st, m->objects, m->has_component,
                                           m->guid_ns2), 0);
    ck_assert_int_eq(shm_nodestore_finish(st), 0);
}

static bool
has_ref(const struct shm_nodestore *st, uint32_t node, uint32_t target,
        uint32_t reftype, uint16_t flags)
{
    const struct shm_node *n = &st->nodes[node];

    for (uint32_t k = 0; k < n->nrefs; k++) {
        const struct shm_ref *r = &st->refs[n->refs + k];

        if (r->target == target && r->reftype == reftype && r->flags == flags)
            return true;
    }
    return false;
}

/*
 * Every read-side check on a finished small store; returns the number of
 * failed checks and prints them (usable in a forked child, no ck_assert).
 */
#define EXPECT(c)                                                          \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__,    \
                    #c);                                                   \
            bad++;                                                         \
        }                                                                  \
    } while (0)

static int
small_verify(const struct small *m, const struct shm_nodestore *st)
{
    int                bad = 0;
    struct shm_nodekey k;
    static const uint16_t far_ns[] = { 5, 255, 256, 32768, 65534, 65535 };

    /* Hits, every identifier type. */
    EXPECT(lookup(st, knum(0, I_OBJECTS_FOLDER)) == m->objects);
    EXPECT(lookup(st, knum(2, I_OBJECTS_FOLDER)) == m->num_ns2);
    EXPECT(lookup(st, knum(0, I_HAS_SUBTYPE)) == m->has_subtype);
    EXPECT(lookup(st, kstr(1, "Temperature")) == m->str_ns1);
    EXPECT(lookup(st, kstr(3, "Temperature")) == m->str_ns3);
    EXPECT(lookup(st, kbytes(2, SHM_ID_GUID, guid_a, 16)) == m->guid_ns2);
    EXPECT(lookup(st, kbytes(4, SHM_ID_OPAQUE, opaque_a, 5))
           == m->opaque_ns4);
    EXPECT(lookup(st, kstr(1, "")) == m->empty_ns1);
    /* The key comes from a different buffer than the one added. */
    {
        char     t[] = "Temperature";
        uint8_t  g[16];

        memcpy(g, guid_a, 16);
        EXPECT(lookup(st, kstr(1, t)) == m->str_ns1);
        EXPECT(lookup(st, kbytes(2, SHM_ID_GUID, g, 16)) == m->guid_ns2);
    }

    /* Unknown identifiers of every type. */
    EXPECT(lookup(st, knum(0, I_OBJECTS_FOLDER + 1)) == SHM_NONE);
    EXPECT(lookup(st, knum(0, 0)) == SHM_NONE);
    EXPECT(lookup(st, knum(0, UINT32_MAX)) == SHM_NONE);
    EXPECT(lookup(st, kstr(1, "Temperatur")) == SHM_NONE);
    EXPECT(lookup(st, kstr(1, "Temperature2")) == SHM_NONE);
    EXPECT(lookup(st, kstr(1, "temperature")) == SHM_NONE);
    EXPECT(lookup(st, kbytes(2, SHM_ID_GUID, guid_b, 16)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(2, SHM_ID_GUID, guid_a, 15)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(4, SHM_ID_OPAQUE, opaque_b, 5)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(4, SHM_ID_OPAQUE, opaque_a, 4)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(4, SHM_ID_OPAQUE, opaque_a, 0)) == SHM_NONE);

    /* A known identifier in a namespace where it is not. */
    EXPECT(lookup(st, knum(1, I_OBJECTS_FOLDER)) == SHM_NONE);
    EXPECT(lookup(st, knum(3, I_HAS_SUBTYPE)) == SHM_NONE);
    EXPECT(lookup(st, kstr(2, "Temperature")) == SHM_NONE);
    EXPECT(lookup(st, kstr(0, "Temperature")) == SHM_NONE);
    EXPECT(lookup(st, kstr(0, "")) == SHM_NONE);
    EXPECT(lookup(st, kbytes(1, SHM_ID_GUID, guid_a, 16)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(3, SHM_ID_GUID, guid_a, 16)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(0, SHM_ID_OPAQUE, opaque_a, 5)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(2, SHM_ID_OPAQUE, opaque_a, 5)) == SHM_NONE);

    /* The same bytes under another identifier type. */
    EXPECT(lookup(st, kbytes(1, SHM_ID_OPAQUE, "Temperature", 11))
           == SHM_NONE);
    EXPECT(lookup(st, kbytes(1, SHM_ID_GUID, "Temperature", 11)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(2, SHM_ID_OPAQUE, guid_a, 16)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(2, SHM_ID_STRING, guid_a, 16)) == SHM_NONE);
    EXPECT(lookup(st, kbytes(4, SHM_ID_STRING, opaque_a, 5)) == SHM_NONE);

    /* Namespace indexes nobody uses, up to 65535, every type. */
    for (size_t i = 0; i < sizeof(far_ns) / sizeof(far_ns[0]); i++) {
        uint16_t n = far_ns[i];

        EXPECT(lookup(st, knum(n, I_OBJECTS_FOLDER)) == SHM_NONE);
        EXPECT(lookup(st, knum(n, I_HAS_SUBTYPE)) == SHM_NONE);
        EXPECT(lookup(st, knum(n, 0)) == SHM_NONE);
        EXPECT(lookup(st, kstr(n, "Temperature")) == SHM_NONE);
        EXPECT(lookup(st, kstr(n, "")) == SHM_NONE);
        EXPECT(lookup(st, kbytes(n, SHM_ID_GUID, guid_a, 16)) == SHM_NONE);
        EXPECT(lookup(st, kbytes(n, SHM_ID_OPAQUE, opaque_a, 5)) == SHM_NONE);
    }

    /* Keys read back from the store. */
    shm_nodestore_key(st, m->guid_ns2, &k);
    EXPECT(k.ns == 2 && k.idtype == SHM_ID_GUID && k.len == 16
           && k.bytes != NULL && memcmp(k.bytes, guid_a, 16) == 0);
    shm_nodestore_key(st, m->str_ns3, &k);
    EXPECT(k.ns == 3 && k.idtype == SHM_ID_STRING && k.len == 11
           && k.bytes != NULL && memcmp(k.bytes, "Temperature", 11) == 0);
    shm_nodestore_key(st, m->opaque_ns4, &k);
    EXPECT(k.ns == 4 && k.idtype == SHM_ID_OPAQUE && k.len == 5
           && k.bytes != NULL && memcmp(k.bytes, opaque_a, 5) == 0);
    shm_nodestore_key(st, m->num_ns2, &k);
    EXPECT(k.ns == 2 && k.idtype == SHM_ID_NUMERIC
           && k.num == I_OBJECTS_FOLDER && k.bytes == NULL);
    for (uint32_t i = 0; i < st->nnodes; i++) {
        shm_nodestore_key(st, i, &k);
        EXPECT(lookup(st, k) == i);
    }

    /* Node classes and the fields add() promises. */
    EXPECT(st->nodes[m->opaque_ns4].node_class == SHM_NC_METHOD);
    EXPECT(st->nodes[m->str_ns1].u.var.slot == SHM_NONE);
    EXPECT(st->nodes[m->str_ns1].u.var.data_type == SHM_NONE);
    EXPECT(shm_nodestore_reftype_of(st, m->str_ns1) == SHM_NONE);
    EXPECT(shm_nodestore_reftype_of(st, st->nnodes) == SHM_NONE);
    EXPECT(shm_nodestore_reftype_of(st, SHM_NONE) == SHM_NONE);

    /* References at both ends, with the reference type's index. */
    {
        uint32_t org = shm_nodestore_reftype_of(st, m->organizes);
        uint32_t comp = shm_nodestore_reftype_of(st, m->has_component);
        uint32_t td = shm_nodestore_reftype_of(st, m->has_typedef);
        uint32_t sub = shm_nodestore_reftype_of(st, m->has_subtype);

        EXPECT(org != SHM_NONE && comp != SHM_NONE && td != SHM_NONE
               && sub != SHM_NONE);
        EXPECT(org != comp && comp != td && td != sub);
        EXPECT(st->reftypes->node[org] == m->organizes);
        EXPECT(st->reftypes->node[sub] == m->has_subtype);
        EXPECT(has_ref(st, m->objects, m->str_ns1, org, 0));
        EXPECT(has_ref(st, m->str_ns1, m->objects, org, SHM_REF_INVERSE));
        EXPECT(has_ref(st, m->objects, m->str_ns3, org, 0));
        EXPECT(has_ref(st, m->str_ns3, m->objects, org, SHM_REF_INVERSE));
        EXPECT(!has_ref(st, m->objects, m->str_ns1, org, SHM_REF_INVERSE));
        EXPECT(!has_ref(st, m->str_ns1, m->objects, org, 0));
        EXPECT(!has_ref(st, m->objects, m->str_ns1, comp, 0));
        EXPECT(has_ref(st, m->guid_ns2, m->num_ns2, comp, 0));
        EXPECT(has_ref(st, m->num_ns2, m->guid_ns2, comp, SHM_REF_INVERSE));
        EXPECT(has_ref(st, m->objects, m->folder_type, td, 0));
        EXPECT(has_ref(st, m->folder_type, m->objects, td, SHM_REF_INVERSE));
        EXPECT(has_ref(st, m->base_object_type, m->folder_type, sub, 0));
        EXPECT(has_ref(st, m->folder_type, m->base_object_type, sub,
                       SHM_REF_INVERSE));
        /* objects: 1 HasTypeDefinition, 2 Organizes, 1 HasComponent. */
        EXPECT(st->nodes[m->objects].nrefs == 4);
        EXPECT(st->nodes[m->str_ns1].nrefs == 1);
        EXPECT(st->nodes[m->opaque_ns4].nrefs == 0);
        /* Slices tile the reference array exactly. */
        {
            uint64_t sum = 0;

            for (uint32_t i = 0; i < st->nnodes; i++) {
                EXPECT(st->nodes[i].refs == sum);
                sum += st->nodes[i].nrefs;
                for (uint32_t r = 0; r < st->nodes[i].nrefs; r++)
                    EXPECT(st->refs[st->nodes[i].refs + r].target
                           < st->nnodes);
            }
            EXPECT(sum == st->nrefs);
            EXPECT(st->seg->hdr->nrefs == st->nrefs);
        }
    }

    /* super from HasSubtype, type_def from HasTypeDefinition. */
    EXPECT(st->nodes[m->folder_type].super == m->base_object_type);
    EXPECT(st->nodes[m->base_object_type].super == SHM_NONE);
    EXPECT(st->nodes[m->int32].super == m->integer);
    EXPECT(st->nodes[m->integer].super == m->number);
    EXPECT(st->nodes[m->number].super == m->base_dt);
    EXPECT(st->nodes[m->string].super == m->base_dt);
    EXPECT(st->nodes[m->base_dt].super == SHM_NONE);
    EXPECT(st->nodes[m->organizes].super == m->hier);
    EXPECT(st->nodes[m->references].super == SHM_NONE);
    EXPECT(st->nodes[m->objects].type_def == m->folder_type);
    EXPECT(st->nodes[m->guid_ns2].type_def == m->base_object_type);
    EXPECT(st->nodes[m->str_ns1].type_def == SHM_NONE);
    EXPECT(st->nodes[m->folder_type].type_def == SHM_NONE);
    /* Neither relation leaks into the other field. */
    EXPECT(st->nodes[m->objects].super == SHM_NONE);
    EXPECT(st->nodes[m->folder_type].type_def == SHM_NONE);

    /* is_subtype over the data-type chain. */
    {
        const uint32_t chain[] = { m->int32, m->integer, m->number,
                                   m->base_dt };

        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                EXPECT(shm_nodestore_is_subtype(st, chain[a], chain[b])
                       == (a <= b));
        EXPECT(shm_nodestore_is_subtype(st, m->string, m->base_dt));
        EXPECT(shm_nodestore_is_subtype(st, m->string, m->string));
        EXPECT(!shm_nodestore_is_subtype(st, m->string, m->number));
        EXPECT(!shm_nodestore_is_subtype(st, m->int32, m->string));
        EXPECT(!shm_nodestore_is_subtype(st, m->base_dt, m->string));
        EXPECT(!shm_nodestore_is_subtype(st, m->int32, m->folder_type));
        EXPECT(!shm_nodestore_is_subtype(st, m->int32, SHM_NONE));
        EXPECT(!shm_nodestore_is_subtype(st, SHM_NONE, m->int32));
        EXPECT(!shm_nodestore_is_subtype(st, st->nnodes, st->nnodes));
        EXPECT(shm_nodestore_is_subtype(st, m->folder_type,
                                        m->base_object_type));
    }

    /* The reference-type closure, every pair, reflexive ones too. */
    EXPECT(st->reftypes->n == NREFTYPES);
    for (size_t i = 0; i < NREFTYPES; i++) {
        uint32_t ni = lookup(st, knum(0, reftype_parent[i][0]));
        uint32_t a = shm_nodestore_reftype_of(st, ni);

        EXPECT(a < NREFTYPES);
        for (size_t j = 0; j < NREFTYPES; j++) {
            uint32_t nj = lookup(st, knum(0, reftype_parent[j][0]));
            uint32_t b = shm_nodestore_reftype_of(st, nj);
            bool     want = false;

            /* Walk i's parents in the table. */
            for (uint32_t id = reftype_parent[i][0]; id != 0;) {
                size_t p;

                if (id == reftype_parent[j][0]) {
                    want = true;
                    break;
                }
                for (p = 0; p < NREFTYPES; p++)
                    if (reftype_parent[p][0] == id)
                        break;
                id = reftype_parent[p][1];
            }
            if (shm_nodestore_reftype_is(st, a, b) != want) {
                fprintf(stderr, "reftype_is(i=%u, i=%u) != %d\n",
                        reftype_parent[i][0], reftype_parent[j][0], want);
                bad++;
            }
        }
        EXPECT(!shm_nodestore_reftype_is(st, a, SHM_REFTYPES_MAX));
        EXPECT(!shm_nodestore_reftype_is(st, SHM_REFTYPES_MAX, a));
        EXPECT(!shm_nodestore_reftype_is(st, a, SHM_NONE));
    }
    /* Spot checks that spell the hierarchy out. */
    {
        uint32_t org = shm_nodestore_reftype_of(st, m->organizes);
        uint32_t hier = shm_nodestore_reftype_of(st, m->hier);
        uint32_t nonh = shm_nodestore_reftype_of(st, m->non_hier);
        uint32_t refs = shm_nodestore_reftype_of(st, m->references);
        uint32_t child = shm_nodestore_reftype_of(st, m->has_child);
        uint32_t comp = shm_nodestore_reftype_of(st, m->has_component);
        uint32_t td = shm_nodestore_reftype_of(st, m->has_typedef);

        EXPECT(shm_nodestore_reftype_is(st, org, hier));
        EXPECT(shm_nodestore_reftype_is(st, org, refs));
        EXPECT(!shm_nodestore_reftype_is(st, org, child));
        EXPECT(!shm_nodestore_reftype_is(st, hier, org));
        EXPECT(shm_nodestore_reftype_is(st, comp, child));
        EXPECT(shm_nodestore_reftype_is(st, comp, hier));
        EXPECT(!shm_nodestore_reftype_is(st, comp, nonh));
        EXPECT(shm_nodestore_reftype_is(st, td, nonh));
        EXPECT(!shm_nodestore_reftype_is(st, td, hier));
        EXPECT(shm_nodestore_reftype_is(st, refs, refs));
        EXPECT(!shm_nodestore_reftype_is(st, refs, org));
    }
    return bad;
}

START_TEST(test_lookup_refs_types)
{
    struct small m;

    small_build(&m);
    ck_assert_uint_eq(m.st.nnodes, 22);
    ck_assert_uint_eq(m.seg.hdr->nnodes, 22);
    ck_assert_uint_eq(atomic_load(&m.seg.hdr->ready), 1);
    /* The builder's own view ... */
    ck_assert_int_eq(small_verify(&m, &m.st), 0);
    /* ... and a fresh one opened on the same mapping. */
    {
        struct shm_nodestore r;

        ck_assert_int_eq(shm_nodestore_open(&r, &m.seg), 0);
        ck_assert_uint_eq(r.nnodes, m.st.nnodes);
        ck_assert_int_eq(small_verify(&m, &r), 0);
    }
    shm_segment_close(&m.seg);
}
END_TEST

START_TEST(test_worker_reads_forked)
{
    struct small m;
    pid_t        pid;
    int          st;

    small_build(&m);
    pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        /* The worker's path: attach the inherited fd read-only, open. */
        struct shm_segment   seg;
        struct shm_nodestore r;
        int                  fd = dup(m.seg.fd);

        if (fd == -1 || shm_segment_attach(&seg, fd, 0) != 0)
            _exit(10);
        if (seg.base == m.seg.base)
            _exit(11);
        if (shm_nodestore_open(&r, &seg) != 0)
            _exit(12);
        _exit(small_verify(&m, &r) == 0 ? 0 : 13);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "child read of the store failed (status %#x)", st);
    shm_segment_close(&m.seg);
}
END_TEST

START_TEST(test_open_before_finish)
{
    struct shm_segment   seg;
    struct shm_nodestore b, r;

    seg_create(&seg, 8, 8, 256);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    add_or_fail(&b, knum(0, 1), SHM_NC_OBJECT);
    ck_assert_int_eq(shm_nodestore_open(&r, &seg), -EAGAIN);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert_int_eq(shm_nodestore_open(&r, &seg), 0);
    ck_assert_uint_eq(lookup(&r, knum(0, 1)), 0);
    /* A header that claims more nodes than its region holds is refused. */
    seg.hdr->nnodes = (uint32_t)(seg.hdr->regions[SHM_R_NODES].size
                                 / sizeof(struct shm_node)) + 1;
    ck_assert_int_eq(shm_nodestore_open(&r, &seg), -EPROTO);
    seg.hdr->nnodes = 1;
    seg.hdr->nrefs = (uint32_t)(seg.hdr->regions[SHM_R_REFS].size
                                / sizeof(struct shm_ref)) + 1;
    ck_assert_int_eq(shm_nodestore_open(&r, &seg), -EPROTO);
    seg.hdr->nrefs = 0;
    ((struct shm_reftypes *)shm_segment_region(&seg, SHM_R_REFTYPES))->n =
        SHM_REFTYPES_MAX + 1;
    ck_assert_int_eq(shm_nodestore_open(&r, &seg), -EPROTO);
    shm_segment_close(&seg);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Building: duplicates, interning, capacity                           */
/* ------------------------------------------------------------------ */

START_TEST(test_duplicate_add)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    uint32_t             a, s, g, o;

    seg_create(&seg, 16, 8, 1024);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    a = add_or_fail(&b, knum(1, 7), SHM_NC_OBJECT);
    s = add_or_fail(&b, kstr(1, "x"), SHM_NC_OBJECT);
    g = add_or_fail(&b, kbytes(1, SHM_ID_GUID, guid_a, 16), SHM_NC_OBJECT);
    o = add_or_fail(&b, kbytes(1, SHM_ID_OPAQUE, opaque_a, 5), SHM_NC_OBJECT);
    ck_assert_uint_eq(b.nnodes, 4);
    {
        struct shm_nodekey d1 = knum(1, 7), d2 = kstr(1, "x");
        struct shm_nodekey d3 = kbytes(1, SHM_ID_GUID, guid_a, 16);
        struct shm_nodekey d4 = kbytes(1, SHM_ID_OPAQUE, opaque_a, 5);

        ck_assert_uint_eq(shm_nodestore_add(&b, &d1, SHM_NC_VARIABLE),
                          SHM_NONE);
        ck_assert_uint_eq(shm_nodestore_add(&b, &d2, SHM_NC_VARIABLE),
                          SHM_NONE);
        ck_assert_uint_eq(shm_nodestore_add(&b, &d3, SHM_NC_VARIABLE),
                          SHM_NONE);
        ck_assert_uint_eq(shm_nodestore_add(&b, &d4, SHM_NC_VARIABLE),
                          SHM_NONE);
    }
    ck_assert_uint_eq(b.nnodes, 4);
    /* The originals are intact (class not overwritten by the duplicate). */
    ck_assert_uint_eq(b.nodes[a].node_class, SHM_NC_OBJECT);
    ck_assert_uint_eq(b.nodes[s].node_class, SHM_NC_OBJECT);
    /* Same identifier, other namespace or other type: not a duplicate. */
    add_or_fail(&b, knum(2, 7), SHM_NC_OBJECT);
    add_or_fail(&b, kstr(2, "x"), SHM_NC_OBJECT);
    add_or_fail(&b, kbytes(1, SHM_ID_OPAQUE, guid_a, 16), SHM_NC_OBJECT);
    add_or_fail(&b, kbytes(1, SHM_ID_STRING, opaque_a, 5), SHM_NC_OBJECT);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert_uint_eq(b.nnodes, 8);
    ck_assert_uint_eq(lookup(&b, knum(1, 7)), a);
    ck_assert_uint_eq(lookup(&b, kstr(1, "x")), s);
    ck_assert_uint_eq(lookup(&b, kbytes(1, SHM_ID_GUID, guid_a, 16)), g);
    ck_assert_uint_eq(lookup(&b, kbytes(1, SHM_ID_OPAQUE, opaque_a, 5)), o);
    shm_segment_close(&seg);
}
END_TEST

START_TEST(test_intern)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    uint32_t             a, a2, c, e, n, len;
    const uint8_t       *p;

    seg_create(&seg, 16, 8, 1024);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    a = shm_nodestore_intern(&b, "Objects", 7);
    c = shm_nodestore_intern(&b, "Object", 6);
    e = shm_nodestore_intern(&b, "", 0);
    ck_assert_uint_ne(a, 0);
    ck_assert_uint_ne(c, 0);
    ck_assert_uint_ne(e, 0);
    ck_assert_uint_ne(a, c);
    ck_assert_uint_ne(a, e);
    a2 = shm_nodestore_intern(&b, "Objects", 7);
    ck_assert_uint_eq(a2, a);
    ck_assert_uint_eq(shm_nodestore_intern(&b, "Object", 6), c);
    ck_assert_uint_eq(shm_nodestore_intern(&b, "", 0), e);
    /* Deduplicated: interning again used no heap. */
    {
        uint64_t used = b.strings_used;

        for (int i = 0; i < 100; i++)
            ck_assert_uint_eq(shm_nodestore_intern(&b, "Objects", 7), a);
        ck_assert_uint_eq(b.strings_used, used);
    }
    /* A string NodeId shares the interned bytes. */
    n = add_or_fail(&b, kstr(0, "Objects"), SHM_NC_OBJECT);
    ck_assert_uint_eq(b.nodes[n].id, a);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert_uint_eq(seg.hdr->strings_used, b.strings_used);

    p = shm_nodestore_string(&b, a, &len);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(len, 7);
    ck_assert_int_eq(memcmp(p, "Objects", 7), 0);
    p = shm_nodestore_string(&b, e, &len);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(len, 0);
    /* Offset 0 and offsets outside the heap are absent, never a crash. */
    len = 99;
    ck_assert_ptr_null(shm_nodestore_string(&b, 0, &len));
    ck_assert_uint_eq(len, 0);
    len = 99;
    ck_assert_ptr_null(shm_nodestore_string(&b, (uint32_t)b.strings_size,
                                            &len));
    ck_assert_uint_eq(len, 0);
    ck_assert_ptr_null(shm_nodestore_string(&b, (uint32_t)b.strings_size - 3,
                                            &len));
    ck_assert_ptr_null(shm_nodestore_string(&b, UINT32_MAX, &len));
    ck_assert_ptr_null(shm_nodestore_string(&b, UINT32_MAX - 2, &len));
    /* A length word that runs past the heap. */
    {
        uint32_t off = (uint32_t)b.strings_used;
        uint32_t big = (uint32_t)b.strings_size;

        memcpy(b.strings + off, &big, 4);
        ck_assert_ptr_null(shm_nodestore_string(&b, off, &len));
        ck_assert_uint_eq(len, 0);
        big = UINT32_MAX;
        memcpy(b.strings + off, &big, 4);
        ck_assert_ptr_null(shm_nodestore_string(&b, off, &len));
    }
    shm_segment_close(&seg);
}
END_TEST

START_TEST(test_capacity_nodes)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    struct shm_nodekey   k;
    uint32_t             cap;

    seg_create(&seg, 4, 8, 1024);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    cap = b.cap_nodes;
    ck_assert_uint_ge(cap, 4);
    for (uint32_t i = 0; i < cap; i++)
        ck_assert_uint_eq(add_or_fail(&b, knum(1, 1000 + i), SHM_NC_OBJECT),
                          i);
    k = knum(1, 5000);
    ck_assert_uint_eq(shm_nodestore_add(&b, &k, SHM_NC_OBJECT), SHM_NONE);
    k = kstr(1, "full");
    ck_assert_uint_eq(shm_nodestore_add(&b, &k, SHM_NC_OBJECT), SHM_NONE);
    ck_assert_uint_eq(b.nnodes, cap);
    ck_assert_uint_eq(lookup(&b, knum(1, 5000)), SHM_NONE);
    ck_assert_uint_eq(lookup(&b, kstr(1, "full")), SHM_NONE);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    for (uint32_t i = 0; i < cap; i++)
        ck_assert_uint_eq(lookup(&b, knum(1, 1000 + i)), i);
    shm_segment_close(&seg);
}
END_TEST

START_TEST(test_capacity_refs)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    uint32_t             rt, x, y, z;

    seg_create(&seg, 8, 4, 1024);          /* 4 ends: 2 references */
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    rt = add_or_fail(&b, knum(0, I_ORGANIZES), SHM_NC_REFERENCETYPE);
    x = add_or_fail(&b, knum(1, 1), SHM_NC_OBJECT);
    y = add_or_fail(&b, knum(1, 2), SHM_NC_OBJECT);
    z = add_or_fail(&b, knum(1, 3), SHM_NC_OBJECT);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, x, rt, y), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, x, rt, z), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, y, rt, z), -ENOSPC);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, y, rt, z), -ENOSPC);
    /* Bad node indices are refused before capacity matters. */
    ck_assert_int_eq(shm_nodestore_add_ref(&b, b.nnodes, rt, y), -EINVAL);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, x, b.nnodes, y), -EINVAL);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, x, rt, SHM_NONE), -EINVAL);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert_uint_eq(b.nrefs, 4);
    ck_assert_uint_eq(b.nodes[x].nrefs, 2);
    ck_assert_uint_eq(b.nodes[y].nrefs, 1);
    ck_assert_uint_eq(b.nodes[z].nrefs, 1);
    ck_assert(has_ref(&b, x, y, 0, 0));
    ck_assert(has_ref(&b, x, z, 0, 0));
    ck_assert(has_ref(&b, z, x, 0, SHM_REF_INVERSE));
    ck_assert(!has_ref(&b, y, z, 0, 0));
    shm_segment_close(&seg);
}
END_TEST

START_TEST(test_capacity_strings)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    struct shm_nodekey   k;
    char                 name[32];
    uint32_t             offs[64], n = 0, nodes;
    uint64_t             used;

    seg_create(&seg, 64, 8, 100);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    for (;;) {
        uint32_t o;

        snprintf(name, sizeof(name), "str%02u", n);
        o = shm_nodestore_intern(&b, name, (uint32_t)strlen(name));
        if (o == 0)
            break;
        ck_assert_uint_lt(n, 64);
        offs[n++] = o;
    }
    ck_assert_uint_gt(n, 3);
    used = b.strings_used;
    ck_assert_uint_le(used, b.strings_size);
    /* Still full for anything that needs room, again and again. */
    ck_assert_uint_eq(shm_nodestore_intern(&b, "another", 7), 0);
    ck_assert_uint_eq(shm_nodestore_intern(&b, "x", 1), 0);
    ck_assert_uint_eq(b.strings_used, used);
    /* An interned string is still found: dedup needs no room. */
    ck_assert_uint_eq(shm_nodestore_intern(&b, "str00", 5), offs[0]);
    /* A string NodeId whose bytes are already in: added. */
    add_or_fail(&b, kstr(1, "str01"), SHM_NC_OBJECT);
    /* One that needs room: refused, nothing half-added. */
    nodes = b.nnodes;
    k = kstr(1, "not-there");
    ck_assert_uint_eq(shm_nodestore_add(&b, &k, SHM_NC_OBJECT), SHM_NONE);
    k = kbytes(1, SHM_ID_GUID, guid_b, 16);
    ck_assert_uint_eq(shm_nodestore_add(&b, &k, SHM_NC_OBJECT), SHM_NONE);
    ck_assert_uint_eq(b.nnodes, nodes);
    ck_assert_uint_eq(b.strings_used, used);
    /* Numeric NodeIds need no string. */
    add_or_fail(&b, knum(1, 9), SHM_NC_OBJECT);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert_uint_eq(lookup(&b, kstr(1, "not-there")), SHM_NONE);
    ck_assert_uint_eq(lookup(&b, kbytes(1, SHM_ID_GUID, guid_b, 16)),
                      SHM_NONE);
    ck_assert_uint_eq(lookup(&b, kstr(1, "str01")), nodes - 1);
    ck_assert_uint_eq(lookup(&b, knum(1, 9)), nodes);
    /* Every string interned before the heap filled is intact. */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t       len;
        const uint8_t *p = shm_nodestore_string(&b, offs[i], &len);

        snprintf(name, sizeof(name), "str%02u", i);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(len, strlen(name));
        ck_assert_int_eq(memcmp(p, name, len), 0);
    }
    shm_segment_close(&seg);
}
END_TEST

START_TEST(test_finish_errors)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    uint32_t             x, y;

    /* A reference whose type is not a ReferenceType node. */
    seg_create(&seg, 8, 8, 256);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    x = add_or_fail(&b, knum(1, 1), SHM_NC_OBJECT);
    y = add_or_fail(&b, knum(1, 2), SHM_NC_OBJECT);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, x, y, y), 0);
    ck_assert_int_eq(shm_nodestore_finish(&b), -EINVAL);
    ck_assert_ptr_null(b.intern);
    ck_assert_ptr_null(b.pending);
    ck_assert_uint_eq(atomic_load(&seg.hdr->ready), 0);
    shm_segment_close(&seg);

    /* More reference types than SHM_REFTYPES_MAX. */
    seg_create(&seg, SHM_REFTYPES_MAX + 2, 8, 256);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    for (uint32_t i = 0; i <= SHM_REFTYPES_MAX; i++)
        add_or_fail(&b, knum(0, 1000 + i), SHM_NC_REFERENCETYPE);
    ck_assert_int_eq(shm_nodestore_finish(&b), -ENOSPC);
    ck_assert_uint_eq(atomic_load(&seg.hdr->ready), 0);
    shm_segment_close(&seg);

    /* Exactly SHM_REFTYPES_MAX is fine, and the last one is indexed. */
    seg_create(&seg, SHM_REFTYPES_MAX + 2, 8, 256);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    for (uint32_t i = 0; i < SHM_REFTYPES_MAX; i++)
        add_or_fail(&b, knum(0, 1000 + i), SHM_NC_REFERENCETYPE);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    x = lookup(&b, knum(0, 1000 + SHM_REFTYPES_MAX - 1));
    ck_assert_uint_eq(shm_nodestore_reftype_of(&b, x), SHM_REFTYPES_MAX - 1);
    ck_assert(shm_nodestore_reftype_is(&b, SHM_REFTYPES_MAX - 1,
                                       SHM_REFTYPES_MAX - 1));
    ck_assert(!shm_nodestore_reftype_is(&b, SHM_REFTYPES_MAX - 1, 0));
    shm_segment_close(&seg);
}
END_TEST

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Key number i of family f (round r picks another identifier or ns). */
enum coll_family { C_NS_NUMERIC, C_NS_STRING, C_NUMERIC, C_STRING, C_GUID };

struct coll_key {
    struct shm_nodekey k;
    uint8_t            buf[16];
};

static void
coll_key(enum coll_family f, uint32_t r, uint32_t i, struct coll_key *c)
{
    memset(c, 0, sizeof(*c));
    switch (f) {
    case C_NS_NUMERIC:          /* ns varies, ns=i;i=r */
        c->k = knum((uint16_t)i, r);
        break;
    case C_NS_STRING:           /* ns varies, ns=i;s=<r> */
        snprintf((char *)c->buf, sizeof(c->buf), "s%u", r);
        c->k = kbytes((uint16_t)i, SHM_ID_STRING, c->buf,
                      (uint32_t)strlen((char *)c->buf));
        break;
    case C_NUMERIC:             /* ns=r+1;i=<i> */
        c->k = knum((uint16_t)(r + 1), i);
        break;
    case C_STRING:              /* ns=1;s=<i>, lengths differ */
        snprintf((char *)c->buf, sizeof(c->buf), "%u:%x", r, i);
        c->k = kbytes(1, SHM_ID_STRING, c->buf,
                      (uint32_t)strlen((char *)c->buf));
        break;
    case C_GUID:                /* ns=1;g=<i, r> */
        memcpy(c->buf, &i, 4);
        memcpy(c->buf + 4, &r, 4);
        memcpy(c->buf + 8, guid_a + 8, 8);
        c->k = kbytes(1, SHM_ID_GUID, c->buf, 16);
        break;
    }
}

/*
 * Two different keys of family f with the same 32-bit hash: a birthday
 * search over n keys (65536 keys collide with probability ~1/2, 2^20 keys
 * almost surely); round r retries with other keys.
 */
static void
find_collision(enum coll_family f, uint32_t n, struct coll_key *a,
               struct coll_key *b)
{
    uint64_t *h = malloc((size_t)n * sizeof(*h));

    ck_assert_ptr_nonnull(h);
    for (uint32_t r = 0; r < 64; r++) {
        for (uint32_t i = 0; i < n; i++) {
            struct coll_key c;

            coll_key(f, r, i, &c);
            h[i] = ((uint64_t)shm_nodekey_hash(&c.k) << 32) | i;
        }
        qsort(h, n, sizeof(h[0]), cmp_u64);
        for (uint32_t i = 1; i < n; i++)
            if (h[i] >> 32 == h[i - 1] >> 32) {
                coll_key(f, r, (uint32_t)h[i - 1], a);
                coll_key(f, r, (uint32_t)h[i], b);
                free(h);
                return;
            }
    }
    free(h);
    ck_abort_msg("no 32-bit hash collision in family %d", (int)f);
}

/*
 * The index compares whole NodeIds, not hashes: a key with the same hash as
 * a stored node but another namespace, number or identifier is not that
 * node, and is not a duplicate of it either.
 */
START_TEST(test_hash_collision)
{
    static const struct {
        enum coll_family f;
        uint32_t         n;
    } fams[] = {
        { C_NS_NUMERIC, 65536 }, { C_NS_STRING, 65536 },
        { C_NUMERIC, 1u << 20 }, { C_STRING, 1u << 20 },
        { C_GUID, 1u << 20 },
    };

    for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
        struct coll_key      a, b;
        struct shm_segment   seg;
        struct shm_nodestore st;
        uint32_t             ia, ib;

        find_collision(fams[f].f, fams[f].n, &a, &b);
        ck_assert_uint_eq(shm_nodekey_hash(&a.k), shm_nodekey_hash(&b.k));
        ck_assert(memcmp(&a.k, &b.k, sizeof(a.k)) != 0
                  || memcmp(a.buf, b.buf, sizeof(a.buf)) != 0);

        seg_create(&seg, 8, 8, 256);
        ck_assert_int_eq(shm_nodestore_build_init(&st, &seg), 0);
        ia = add_or_fail(&st, a.k, SHM_NC_OBJECT);
        /* Same hash, other NodeId: absent ... */
        ck_assert_msg(lookup(&st, b.k) == SHM_NONE,
                      "family %zu: colliding key found", f);
        /* ... and addable: not a duplicate. */
        ib = add_or_fail(&st, b.k, SHM_NC_VARIABLE);
        ck_assert_int_eq(shm_nodestore_finish(&st), 0);
        ck_assert_uint_eq(lookup(&st, a.k), ia);
        ck_assert_uint_eq(lookup(&st, b.k), ib);
        ck_assert_uint_eq(st.nodes[ib].node_class, SHM_NC_VARIABLE);
        shm_segment_close(&seg);
    }
}
END_TEST

/* A HasSubtype cycle must not hang the closure or is_subtype. */
START_TEST(test_subtype_cycle)
{
    struct shm_segment   seg;
    struct shm_nodestore b;
    uint32_t             sub, a, c;

    seg_create(&seg, 8, 16, 256);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    sub = add_or_fail(&b, knum(0, I_HAS_SUBTYPE), SHM_NC_REFERENCETYPE);
    a = add_or_fail(&b, knum(1, 1), SHM_NC_REFERENCETYPE);
    c = add_or_fail(&b, knum(1, 2), SHM_NC_REFERENCETYPE);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, a, sub, c), 0);
    ck_assert_int_eq(shm_nodestore_add_ref(&b, c, sub, a), 0);
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert(shm_nodestore_is_subtype(&b, a, c));
    ck_assert(shm_nodestore_is_subtype(&b, c, a));
    ck_assert(!shm_nodestore_is_subtype(&b, a, sub));
    ck_assert(shm_nodestore_reftype_is(&b, 1, 2));
    ck_assert(!shm_nodestore_reftype_is(&b, 1, 0));
    shm_segment_close(&seg);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 100,000 string NodeIds                                              */
/* ------------------------------------------------------------------ */

#define BIG_N      100000u
#define BIG_ABSENT 10000u

START_TEST(test_lookup_100k)
{
    struct shm_segment   seg;
    struct shm_nodestore b, r;
    char                 name[16];
    uint32_t             miss = 0;

    seg_create(&seg, BIG_N, 8, (uint64_t)BIG_N * 12);
    ck_assert_int_eq(shm_nodestore_build_init(&b, &seg), 0);
    for (uint32_t i = 0; i < BIG_N; i++) {
        int                l = snprintf(name, sizeof(name), "v%u", i);
        struct shm_nodekey k = kbytes(1, SHM_ID_STRING, name, (uint32_t)l);
        uint32_t           got = shm_nodestore_add(&b, &k, SHM_NC_VARIABLE);

        if (got != i)
            ck_abort_msg("add ns=1;s=%s: got %u, want %u", name, got, i);
    }
    ck_assert_int_eq(shm_nodestore_finish(&b), 0);
    ck_assert_int_eq(shm_nodestore_open(&r, &seg), 0);
    ck_assert_uint_eq(r.nnodes, BIG_N);
    for (uint32_t i = 0; i < BIG_N; i++) {
        int      l = snprintf(name, sizeof(name), "v%u", i);
        uint32_t got = lookup(&r, kbytes(1, SHM_ID_STRING, name, (uint32_t)l));

        if (got != i) {
            ck_abort_msg("ns=1;s=%s: got %u, want %u", name, got, i);
        }
    }
    for (uint32_t i = BIG_N; i < BIG_N + BIG_ABSENT; i++) {
        int l = snprintf(name, sizeof(name), "v%u", i);

        miss += lookup(&r, kbytes(1, SHM_ID_STRING, name, (uint32_t)l))
                == SHM_NONE;
    }
    ck_assert_uint_eq(miss, BIG_ABSENT);
    /* Known names in another namespace, and as numeric-looking ids. */
    miss = 0;
    for (uint32_t i = 0; i < BIG_ABSENT; i++) {
        int l = snprintf(name, sizeof(name), "v%u", i);

        miss += lookup(&r, kbytes(2, SHM_ID_STRING, name, (uint32_t)l))
                == SHM_NONE;
        miss += lookup(&r, knum(1, i)) == SHM_NONE;
    }
    ck_assert_uint_eq(miss, 2 * BIG_ABSENT);
    shm_segment_close(&seg);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Node store");
    TCase   *tc_read = tcase_create("Lookup, references, types");
    TCase   *tc_build = tcase_create("Build and capacity");
    TCase   *tc_big = tcase_create("100k string NodeIds");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc_read, test_lookup_refs_types);
    tcase_add_test(tc_read, test_worker_reads_forked);
    tcase_add_test(tc_read, test_open_before_finish);
    suite_add_tcase(s, tc_read);

    tcase_add_test(tc_build, test_duplicate_add);
    tcase_add_test(tc_build, test_intern);
    tcase_add_test(tc_build, test_capacity_nodes);
    tcase_add_test(tc_build, test_capacity_refs);
    tcase_add_test(tc_build, test_capacity_strings);
    tcase_add_test(tc_build, test_finish_errors);
    tcase_add_test(tc_build, test_subtype_cycle);
    tcase_add_test(tc_build, test_hash_collision);
    tcase_set_timeout(tc_build, 30);
    suite_add_tcase(s, tc_build);

    tcase_add_test(tc_big, test_lookup_100k);
    tcase_set_timeout(tc_big, 30);
    suite_add_tcase(s, tc_big);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
