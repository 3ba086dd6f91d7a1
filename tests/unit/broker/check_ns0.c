/*
 * tests/unit/broker/check_ns0.c: the generated namespace-0 tables
 * (broker/ns0_gen.c) against the fixture tests/unit/broker/ns0_expected.h,
 * which make_ns0_expected.py wrote from the NodeSet independently of the
 * generator.
 *
 * The Variants are taken apart by hand here, not with proto/: the test
 * should depend on nothing but the tables and Part 6 §5.2.
 */
#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/ns0_gen.h"
#include "ns0_expected.h"

/* ReferenceType ids used below (Part 3 §7, NodeIds.csv). */
#define REF_HAS_TYPE_DEFINITION 40
#define REF_HAS_SUBTYPE         45

/* Built-in type ids, Part 6 §5.1.2 Table 1. */
#define BT_BOOLEAN          1
#define BT_INT32            6
#define BT_UINT32           7
#define BT_INT64            8
#define BT_STRING           12
#define BT_DATETIME         13
#define BT_BYTESTRING       15
#define BT_LOCALIZEDTEXT    21
#define BT_EXTENSIONOBJECT  22
#define VARIANT_ARRAY       0x80    /* Part 6 §5.2.2.16 encoding byte */
#define VARIANT_DIMS        0x40

/* DefaultBinary encoding ids of the bodies found in namespace 0. */
#define ENC_ARGUMENT        298
#define ENC_EUINFORMATION   889
#define ENC_ENUMVALUETYPE   8251

/* A cursor over one encoded value; any overrun sets bad. */
struct rd {
    const uint8_t *p;
    const uint8_t *end;
    bool           bad;
};

static const struct bk_ns0_node *ns0_find(uint32_t id);
static bool ns0_has_ref(const struct bk_ns0_node *n, uint32_t type,
                        uint32_t target);
static const char *ns0_str(uint32_t off);
static const uint8_t *rd_take(struct rd *r, size_t n);
static uint32_t rd_u32(struct rd *r);
static int64_t rd_i64(struct rd *r);
static int32_t rd_string(struct rd *r, const uint8_t **data);
static uint32_t rd_nodeid(struct rd *r);
static void rd_skip(struct rd *r, uint8_t bt);

static const struct bk_ns0_node *
ns0_find(uint32_t id)
{
    size_t lo = 0, hi = BK_NS0_NODES;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bk_ns0_nodes[mid].id == id)
            return &bk_ns0_nodes[mid];
        if (bk_ns0_nodes[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static bool
ns0_has_ref(const struct bk_ns0_node *n, uint32_t type, uint32_t target)
{
    for (uint32_t i = n->refs; i < n->refs + n->nrefs; i++)
        if (bk_ns0_refs[i].type == type && bk_ns0_refs[i].target == target)
            return true;
    return false;
}

/* The string at off, or NULL when off is outside the table. */
static const char *
ns0_str(uint32_t off)
{
    if (off >= BK_NS0_STRINGS_SIZE)
        return NULL;
    if (memchr(bk_ns0_strings + off, '\0', BK_NS0_STRINGS_SIZE - off) == NULL)
        return NULL;
    return bk_ns0_strings + off;
}

static const uint8_t *
rd_take(struct rd *r, size_t n)
{
    const uint8_t *p = r->p;

    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    r->p += n;
    return p;
}

static uint32_t
rd_u32(struct rd *r)
{
    const uint8_t *p = rd_take(r, 4);

    if (p == NULL)
        return 0;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
           | (uint32_t)p[3] << 24;
}

static int64_t
rd_i64(struct rd *r)
{
    uint64_t lo = rd_u32(r);
    uint64_t hi = rd_u32(r);

    return (int64_t)(lo | hi << 32);
}

/* Part 6 §5.2.2.4: Int32 length (-1 null) and bytes; the length. */
static int32_t
rd_string(struct rd *r, const uint8_t **data)
{
    int32_t len = (int32_t)rd_u32(r);

    *data = NULL;
    if (len < -1) {
        r->bad = true;
        return len;
    }
    if (len > 0)
        *data = rd_take(r, (size_t)len);
    return len;
}

/* Part 6 §5.2.2.9 numeric NodeId forms; namespace 0 only. */
static uint32_t
rd_nodeid(struct rd *r)
{
    const uint8_t *p = rd_take(r, 1);

    if (p == NULL)
        return 0;
    switch (*p) {
    case 0x00:
        p = rd_take(r, 1);
        return p ? p[0] : 0;
    case 0x01:
        p = rd_take(r, 3);
        if (p && p[0] != 0)
            r->bad = true;
        return p ? (uint32_t)p[1] | (uint32_t)p[2] << 8 : 0;
    case 0x02:
        p = rd_take(r, 2);
        if (p && (p[0] != 0 || p[1] != 0))
            r->bad = true;
        return rd_u32(r);
    default:
        r->bad = true;
        return 0;
    }
}

/* Skip one element of built-in type bt (the types namespace 0 uses). */
static void
rd_skip(struct rd *r, uint8_t bt)
{
    const uint8_t *p, *s;
    int32_t        len;

    switch (bt) {
    case BT_BOOLEAN:
        p = rd_take(r, 1);
        if (p && *p > 1)
            r->bad = true;
        break;
    case BT_INT32:
    case BT_UINT32:
        rd_take(r, 4);
        break;
    case BT_INT64:
    case BT_DATETIME:
        rd_take(r, 8);
        break;
    case BT_STRING:
    case BT_BYTESTRING:
        rd_string(r, &s);
        break;
    case BT_LOCALIZEDTEXT:
        p = rd_take(r, 1);
        if (p == NULL)
            break;
        if (*p & ~0x03)
            r->bad = true;
        if (*p & 0x01)
            rd_string(r, &s);
        if (*p & 0x02)
            rd_string(r, &s);
        break;
    case BT_EXTENSIONOBJECT:
        rd_nodeid(r);
        p = rd_take(r, 1);
        if (p && *p != 0x01)
            r->bad = true;
        len = (int32_t)rd_u32(r);
        if (len < 0)
            r->bad = true;
        else
            rd_take(r, (size_t)len);
        break;
    default:
        r->bad = true;
    }
}

START_TEST(test_counts)
{
    uint64_t nrefs = 0;
    uint32_t per_class[256] = { 0 };

    ck_assert_uint_eq(BK_NS0_NODES, NS0_EXP_NODES);
    for (size_t i = 0; i < BK_NS0_NODES; i++) {
        nrefs += bk_ns0_nodes[i].nrefs;
        per_class[bk_ns0_nodes[i].node_class]++;
    }
    ck_assert_uint_eq(nrefs, BK_NS0_REFS);
    ck_assert_uint_eq(nrefs * 2, NS0_EXP_REFS);
    for (size_t i = 0; i < sizeof(ns0_exp_classes) / sizeof(ns0_exp_classes[0]);
         i++)
        ck_assert_msg(per_class[ns0_exp_classes[i].node_class]
                          == ns0_exp_classes[i].count,
                      "NodeClass %u: %u nodes, expected %u",
                      ns0_exp_classes[i].node_class,
                      per_class[ns0_exp_classes[i].node_class],
                      ns0_exp_classes[i].count);
}
END_TEST

START_TEST(test_table_shape)
{
    uint32_t next_ref = 0;

    ck_assert_int_eq(bk_ns0_strings[0], '\0');
    ck_assert_int_eq(bk_ns0_strings[BK_NS0_STRINGS_SIZE - 1], '\0');
    ck_assert_uint_eq(bk_ns0_u32[0], 0);
    for (size_t i = 0; i < BK_NS0_NODES; i++) {
        const struct bk_ns0_node *n = &bk_ns0_nodes[i];

        if (i > 0)
            ck_assert_uint_lt(bk_ns0_nodes[i - 1].id, n->id);
        ck_assert_uint_eq(n->refs, next_ref);
        next_ref += n->nrefs;
        ck_assert_ptr_nonnull(ns0_str(n->browse_name));
        ck_assert_uint_ne(n->browse_name, 0);
        ck_assert_ptr_nonnull(ns0_str(n->display_name));
        ck_assert_ptr_nonnull(ns0_str(n->display_locale));
        ck_assert_ptr_nonnull(ns0_str(n->inverse_name));
        ck_assert_uint_le((uint64_t)n->value + n->value_len,
                          BK_NS0_VALUES_SIZE);
        if (n->node_class == 4)
            ck_assert_msg(n->flags & BK_NS0_F_EXECUTABLE,
                          "i=%u: Method not Executable", n->id);
        if (n->node_class == 2 || n->node_class == 16) {
            ck_assert_uint_ne(n->data_type, 0);
            ck_assert_ptr_nonnull(ns0_find(n->data_type));
            ck_assert_uint_eq(ns0_find(n->data_type)->node_class, 64);
        } else {
            ck_assert_uint_eq(n->data_type, 0);
            ck_assert_int_eq(n->value_rank, 0);
            ck_assert_uint_eq(n->value_len, 0);
        }
        for (uint32_t r = n->refs; r < n->refs + n->nrefs; r++) {
            const struct bk_ns0_ref   *ref = &bk_ns0_refs[r];
            const struct bk_ns0_node *t = ns0_find(ref->type);

            ck_assert_msg(t != NULL && t->node_class == 32,
                          "i=%u: reference type i=%u", n->id, ref->type);
            ck_assert_msg(ns0_find(ref->target) != NULL,
                          "i=%u: target i=%u", n->id, ref->target);
            if (r > n->refs) {
                const struct bk_ns0_ref *p = ref - 1;
                ck_assert_msg(p->type < ref->type
                                  || (p->type == ref->type
                                      && p->target < ref->target),
                              "i=%u: refs not sorted or duplicate", n->id);
            }
        }
    }
    ck_assert_uint_eq(next_ref, BK_NS0_REFS);
}
END_TEST

/* Every value is exactly one well-formed Variant of the types ns0 uses. */
START_TEST(test_values_well_formed)
{
    int nvalues = 0;

    for (size_t i = 0; i < BK_NS0_NODES; i++) {
        const struct bk_ns0_node *n = &bk_ns0_nodes[i];
        struct rd r = { bk_ns0_values + n->value,
                        bk_ns0_values + n->value + n->value_len, false };
        const uint8_t *enc;

        if (n->value_len == 0)
            continue;
        nvalues++;
        enc = rd_take(&r, 1);
        ck_assert_ptr_nonnull(enc);
        ck_assert_msg((*enc & VARIANT_DIMS) == 0, "i=%u: dims", n->id);
        if (*enc & VARIANT_ARRAY) {
            int32_t len = (int32_t)rd_u32(&r);
            ck_assert_int_ge(len, 0);
            for (int32_t k = 0; k < len && !r.bad; k++)
                rd_skip(&r, *enc & 0x3F);
        } else {
            rd_skip(&r, *enc & 0x3F);
        }
        ck_assert_msg(!r.bad && r.p == r.end,
                      "i=%u: value is not one Variant of %u bytes", n->id,
                      n->value_len);
    }
    ck_assert_int_gt(nvalues, 1000);
}
END_TEST

static void
check_string(struct rd *r, const char *want, uint32_t id)
{
    const uint8_t *s;
    int32_t        len = rd_string(r, &s);

    ck_assert_msg(!r->bad, "i=%u: truncated string", id);
    ck_assert_msg(len >= 0 && (size_t)len == strlen(want)
                      && (len == 0 || memcmp(s, want, (size_t)len) == 0),
                  "i=%u: string is not \"%s\"", id, want);
}

/* The value of fixture node e against the table, byte by byte. */
static void
check_value(const struct ns0_exp *e, const struct bk_ns0_node *n)
{
    struct rd      r = { bk_ns0_values + n->value,
                         bk_ns0_values + n->value + n->value_len, false };
    const uint8_t *p;
    uint8_t        want_enc = e->vtype | (e->is_array ? VARIANT_ARRAY : 0);

    if (e->vtype == 0) {
        ck_assert_msg(n->value_len == 0, "i=%u: unexpected value", e->id);
        return;
    }
    ck_assert_msg(n->value_len > 0, "i=%u: value missing", e->id);
    p = rd_take(&r, 1);
    ck_assert_msg(p && *p == want_enc, "i=%u: encoding byte 0x%02x, "
                  "expected 0x%02x", e->id, p ? *p : 0, want_enc);
    if (e->is_array) {
        int32_t len = (int32_t)rd_u32(&r);
        ck_assert_msg(len == e->array_len, "i=%u: array length %d, "
                      "expected %d", e->id, len, e->array_len);
        if (len == 0)
            return;
    }
    switch (e->vtype) {
    case BT_BOOLEAN:
        p = rd_take(&r, 1);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(*p, e->ival);
        break;
    case BT_INT32:
        ck_assert(e->has_ival);
        ck_assert_int_eq((int32_t)rd_u32(&r), e->ival);
        break;
    case BT_UINT32:
        ck_assert(e->has_ival);
        ck_assert_uint_eq(rd_u32(&r), (uint64_t)e->ival);
        break;
    case BT_DATETIME:
        ck_assert(e->has_ival);
        ck_assert_int_eq(rd_i64(&r), e->ival);
        break;
    case BT_BYTESTRING:
        ck_assert(e->has_ival);
        ck_assert_int_eq((int32_t)rd_u32(&r), e->ival);
        break;
    case BT_STRING:
        ck_assert_ptr_nonnull(e->sval);
        check_string(&r, e->sval, e->id);
        break;
    case BT_LOCALIZEDTEXT: {
        const uint8_t *s;

        p = rd_take(&r, 1);
        ck_assert_ptr_nonnull(p);
        if (*p & 0x01)
            rd_string(&r, &s);
        ck_assert_msg(((*p & 0x02) != 0) == (e->sval != NULL),
                      "i=%u: LocalizedText mask 0x%02x", e->id, *p);
        if (e->sval)
            check_string(&r, e->sval, e->id);
        break;
    }
    case BT_EXTENSIONOBJECT: {
        uint32_t type = rd_nodeid(&r);
        int32_t  len;

        ck_assert_msg(type == e->eo, "i=%u: ExtensionObject type i=%u, "
                      "expected i=%u", e->id, type, e->eo);
        p = rd_take(&r, 1);
        ck_assert_msg(p && *p == 0x01, "i=%u: not a binary body", e->id);
        len = (int32_t)rd_u32(&r);
        ck_assert_int_gt(len, 0);
        ck_assert_int_le(len, r.end - r.p);
        r.end = r.p + len;                  /* stay inside the body */
        if (type == ENC_ARGUMENT) {
            check_string(&r, e->sval, e->id);
        } else if (type == ENC_ENUMVALUETYPE) {
            ck_assert_int_eq(rd_i64(&r), e->ival);
        } else if (type == ENC_EUINFORMATION) {
            const uint8_t *s;
            rd_string(&r, &s);              /* NamespaceUri */
            ck_assert_int_eq((int32_t)rd_u32(&r), e->ival);
        } else {
            ck_abort_msg("i=%u: unexpected body type i=%u", e->id, type);
        }
        break;
    }
    default:
        ck_abort_msg("i=%u: fixture type %u", e->id, e->vtype);
    }
    ck_assert_msg(!r.bad, "i=%u: value truncated", e->id);
}

/* One loop iteration per fixture entry. */
START_TEST(test_fixture_node)
{
    const struct ns0_exp     *e = &ns0_exp[_i];
    const struct bk_ns0_node *n = ns0_find(e->id);

    ck_assert_msg(n != NULL, "i=%u missing", e->id);
    ck_assert_uint_eq(n->node_class, e->node_class);
    ck_assert_str_eq(ns0_str(n->browse_name), e->browse_name);
    ck_assert_str_eq(ns0_str(n->display_name), e->display_name);
    ck_assert_uint_eq(n->data_type, e->data_type);
    ck_assert_int_eq(n->value_rank, e->value_rank);
    ck_assert_uint_eq((n->flags & BK_NS0_F_ABSTRACT) != 0, e->abstract);
    ck_assert_uint_eq((n->flags & BK_NS0_F_SYMMETRIC) != 0, e->symmetric);
    if (e->type_def != 0)
        ck_assert_msg(ns0_has_ref(n, REF_HAS_TYPE_DEFINITION, e->type_def),
                      "i=%u: no HasTypeDefinition i=%u", e->id, e->type_def);
    if (e->super != 0) {
        const struct bk_ns0_node *s = ns0_find(e->super);
        ck_assert_ptr_nonnull(s);
        ck_assert_msg(ns0_has_ref(s, REF_HAS_SUBTYPE, e->id),
                      "i=%u: i=%u has no HasSubtype to it", e->id, e->super);
    }
    check_value(e, n);
}
END_TEST

/* A few facts of Part 5 that hold whatever the fixture says. */
START_TEST(test_well_known)
{
    const struct bk_ns0_node *server = ns0_find(2253);
    const struct bk_ns0_node *objects = ns0_find(85);
    const struct bk_ns0_node *root = ns0_find(84);

    ck_assert_ptr_nonnull(server);
    ck_assert_ptr_nonnull(objects);
    ck_assert_ptr_nonnull(root);
    ck_assert(ns0_has_ref(server, REF_HAS_TYPE_DEFINITION, 2004));
    ck_assert(ns0_has_ref(root, 35, 85));           /* Organizes */
    ck_assert(ns0_has_ref(objects, 35, 2253));
    ck_assert_uint_eq(server->event_notifier, 1);
    ck_assert_str_eq(ns0_str(ns0_find(47)->inverse_name), "ComponentOf");
    ck_assert_uint_eq(ns0_find(35)->inverse_name != 0, 1);
    ck_assert(ns0_find(2256)->min_sampling == 1000.0);  /* ServerStatus */
    ck_assert(ns0_find(2258)->min_sampling == 0.0);     /* CurrentTime */
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Namespace 0 tables");
    TCase   *tc = tcase_create("Tables");
    TCase   *tf = tcase_create("Fixture");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_counts);
    tcase_add_test(tc, test_table_shape);
    tcase_add_test(tc, test_values_well_formed);
    tcase_add_test(tc, test_well_known);
    tcase_add_loop_test(tf, test_fixture_node, 0, (int)NS0_EXP_COUNT);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, tf);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
