/*
 * tests/unit/proto/check_roundtrip.c: encode -> decode -> encode for every
 * entry of ua_types[] (built-ins, enumerations, structures).
 *
 * For each type, ROUNDTRIP_SEEDS values are filled with pseudo-random
 * contents from a fixed-seed xorshift generator by walking the type
 * description generically (so a new generated type is covered without
 * touching this file).  Each value must:
 *   - encode (ua_encode) to exactly ua_encoded_size() bytes;
 *   - decode (ua_decode, arena over a static buffer) consuming every byte;
 *   - compare equal (ua_equal) to the original;
 *   - re-encode from the decoded copy to the same bytes;
 *   - fail with UA_BAD_ENCODING_LIMITS_EXCEEDED and report the exact size
 *     when given a buffer one byte too small, without writing past it.
 *
 * The generator only builds values the codec promises to round-trip:
 * Booleans are exactly true/false, a Variant is never a scalar Variant, a
 * Variant's dims multiply to its length, a decoded ExtensionObject names a
 * structure with a DefaultBinary id, an opaque one a non-ns0 type id, and a
 * DiagnosticInfo with the inner bit has an inner value.  Nesting is bounded
 * (ROUNDTRIP_DEPTH_MAX) so values stay small.
 *
 * One loop test per ua_types[] index: a failure names the type and the seed.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

#define ROUNDTRIP_SEEDS      20
#define ROUNDTRIP_DEPTH_MAX  6      /* nesting at which arrays/EOs go empty */
#define ROUNDTRIP_EO_MAX     3      /* decoded ExtensionObjects in a chain */
#define ROUNDTRIP_DI_MAX     2      /* inner DiagnosticInfos in a chain */
#define ROUNDTRIP_POOL       (16u << 20)
#define ROUNDTRIP_BUF        (8u << 20)

struct rt_gen {
    uint64_t s;                 /* xorshift64* state, never 0 */
    uint32_t eo_depth;          /* decoded ExtensionObjects we are inside */
    bool     oom;               /* the pool ran out: the test fails */
};

static uint64_t rt_rand(struct rt_gen *g);
static uint32_t rt_below(struct rt_gen *g, uint32_t n);
static void *rt_alloc(struct rt_gen *g, size_t n);
static void rt_fill_bytes(struct rt_gen *g, void *p, size_t n);
static void rt_fill_string(struct rt_gen *g, struct ua_string *s,
                           bool nullable);
static void rt_fill_nodeid(struct rt_gen *g, struct ua_nodeid *n);
static void rt_fill_variant(struct rt_gen *g, struct ua_variant *v,
                            uint32_t depth);
static void rt_fill_extobj(struct rt_gen *g, struct ua_extobj *x,
                           uint32_t depth);
static void rt_fill_diaginfo(struct rt_gen *g, struct ua_diaginfo *di,
                             uint32_t depth, uint32_t chain);
static void rt_fill_array(struct rt_gen *g, void **data, int32_t *n,
                          const struct ua_type *t, uint32_t depth);
static void rt_fill(struct rt_gen *g, void *v, const struct ua_type *t,
                    uint32_t depth);
static void rt_fill_dims(struct rt_gen *g, struct ua_variant *v);
static void rt_hexdump(const char *what, const uint8_t *b, size_t n);
static void rt_check_type(size_t ti);
static void rt_setup(void);
Suite *rt_suite(void);

/* Values under test and their encodings; reset for every seed. */
static uint8_t  rt_pool[ROUNDTRIP_POOL] __attribute__((aligned(16)));
static size_t   rt_pool_used;
static uint8_t  rt_arena_buf[ROUNDTRIP_POOL] __attribute__((aligned(16)));
static uint8_t  rt_enc1[ROUNDTRIP_BUF];
static uint8_t  rt_enc2[ROUNDTRIP_BUF];

/* Structures an ExtensionObject can carry decoded (binary_id != 0). */
static uint16_t rt_eo_types[4096];
static size_t   rt_eo_ntypes;

/* ------------------------------------------------------------ generator */

static uint64_t
rt_rand(struct rt_gen *g)
{
    uint64_t x = g->s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t
rt_below(struct rt_gen *g, uint32_t n)
{
    return (uint32_t)((rt_rand(g) >> 32) % n);
}

static void *
rt_alloc(struct rt_gen *g, size_t n)
{
    size_t r = (n + 15) & ~(size_t)15;
    void  *p;

    if (r == 0)
        r = 16;
    if (r > sizeof(rt_pool) - rt_pool_used) {
        g->oom = true;
        rt_pool_used = 0;       /* keep going; the test fails anyway */
    }
    p = rt_pool + rt_pool_used;
    rt_pool_used += r;
    memset(p, 0, r);
    return p;
}

static void
rt_fill_bytes(struct rt_gen *g, void *p, size_t n)
{
    uint8_t *b = p;

    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(rt_rand(g) >> 56);
}

/* Null (when allowed) one time in eight, else 0..20 random bytes. */
static void
rt_fill_string(struct rt_gen *g, struct ua_string *s, bool nullable)
{
    if (nullable && rt_below(g, 8) == 0) {
        s->len = -1;
        s->data = NULL;
        return;
    }
    s->len = (int32_t)rt_below(g, 21);
    s->data = rt_alloc(g, (size_t)s->len);
    rt_fill_bytes(g, s->data, (size_t)s->len);
}

/* All four id types; numeric ids span the two-byte, four-byte, full forms. */
static void
rt_fill_nodeid(struct rt_gen *g, struct ua_nodeid *n)
{
    static const uint16_t ns_pick[] = { 0, 1, 2, 255, 256, 65535 };

    memset(n, 0, sizeof(*n));
    n->ns = rt_below(g, 4) == 0 ? (uint16_t)rt_rand(g)
                                : ns_pick[rt_below(g, 6)];
    n->idtype = (uint8_t)rt_below(g, 4);
    switch (n->idtype) {
    case UA_IDTYPE_NUMERIC:
        switch (rt_below(g, 3)) {
        case 0:
            n->id.num = rt_below(g, 256);
            break;
        case 1:
            n->id.num = rt_below(g, 65536);
            break;
        default:
            n->id.num = (uint32_t)rt_rand(g);
            break;
        }
        break;
    case UA_IDTYPE_STRING:
    case UA_IDTYPE_OPAQUE:
        rt_fill_string(g, &n->id.str, true);
        break;
    case UA_IDTYPE_GUID:
        rt_fill_bytes(g, &n->id.guid, sizeof(n->id.guid));
        break;
    }
}

/*
 * Dims whose product is n: [n], [1, n], [n, 1, 1] or, when n factors,
 * [a, n / a].  n == 0 may also give [0, k].
 */
static void
rt_fill_dims(struct rt_gen *g, struct ua_variant *v)
{
    int32_t n = v->n;

    switch (rt_below(g, 4)) {
    case 0:
        v->ndims = 1;
        v->dims = rt_alloc(g, 4);
        v->dims[0] = n;
        break;
    case 1:
        v->ndims = 2;
        v->dims = rt_alloc(g, 8);
        v->dims[0] = 1;
        v->dims[1] = n;
        break;
    case 2:
        v->ndims = 3;
        v->dims = rt_alloc(g, 12);
        v->dims[0] = n;
        v->dims[1] = 1;
        v->dims[2] = 1;
        break;
    default:
        v->ndims = 2;
        v->dims = rt_alloc(g, 8);
        if (n == 0) {
            v->dims[0] = 0;
            v->dims[1] = (int32_t)rt_below(g, 5);
        } else if (n % 2 == 0) {
            v->dims[0] = 2;
            v->dims[1] = n / 2;
        } else {
            v->dims[0] = n;
            v->dims[1] = 1;
        }
        break;
    }
}

static void
rt_fill_variant(struct rt_gen *g, struct ua_variant *v, uint32_t depth)
{
    const struct ua_type *et;
    uint8_t               bt;

    memset(v, 0, sizeof(*v));
    v->ndims = -1;
    if (rt_below(g, 10) == 0)
        return;                                 /* empty Variant */
    /* Deep down only the built-ins that do not nest (1..21). */
    if (depth >= ROUNDTRIP_DEPTH_MAX)
        bt = (uint8_t)(1 + rt_below(g, UA_BT_LOCALIZEDTEXT));
    else
        bt = (uint8_t)(1 + rt_below(g, UA_BT_MAX));
    et = &ua_types[bt - 1];
    v->type = bt;
    if (bt != UA_BT_VARIANT && rt_below(g, 2) == 0) {
        v->data = rt_alloc(g, et->size);
        rt_fill(g, v->data, et, depth + 1);
        return;
    }
    v->is_array = 1;
    if (rt_below(g, 8) == 0) {
        v->n = -1;                              /* null array */
        v->data = NULL;
        return;
    }
    v->n = (int32_t)rt_below(g, 5);
    v->data = rt_alloc(g, (size_t)v->n * et->size);
    for (int32_t i = 0; i < v->n; i++)
        rt_fill(g, (uint8_t *)v->data + (size_t)i * et->size, et, depth + 1);
    if (rt_below(g, 3) == 0)
        rt_fill_dims(g, v);
}

/* Empty, opaque bytes / XML under a non-ns0 id, or decoded. */
static void
rt_fill_extobj(struct rt_gen *g, struct ua_extobj *x, uint32_t depth)
{
    uint32_t pick = rt_below(g, 4);

    memset(x, 0, sizeof(*x));
    x->body.len = -1;
    if (depth >= ROUNDTRIP_DEPTH_MAX || g->eo_depth >= ROUNDTRIP_EO_MAX
        || rt_eo_ntypes == 0)
        pick = pick % 3;
    switch (pick) {
    case 0:
        rt_fill_nodeid(g, &x->type_id);
        x->encoding = UA_EO_NONE;
        return;
    case 1:
    case 2:
        rt_fill_nodeid(g, &x->type_id);
        if (x->type_id.ns == 0)
            x->type_id.ns = 1 + (uint16_t)rt_below(g, 100);
        x->encoding = pick == 1 ? UA_EO_BYTES : UA_EO_XML;
        rt_fill_string(g, &x->body, false);
        return;
    default: {
        const struct ua_type *t =
            &ua_types[rt_eo_types[rt_below(g, (uint32_t)rt_eo_ntypes)]];

        x->type_id = ua_nodeid_num(0, t->binary_id);
        x->encoding = UA_EO_DECODED;
        x->type = t;
        x->obj = rt_alloc(g, t->size);
        g->eo_depth++;
        rt_fill(g, x->obj, t, depth + 1);
        g->eo_depth--;
        return;
    }
    }
}

static void
rt_fill_diaginfo(struct rt_gen *g, struct ua_diaginfo *di, uint32_t depth,
                 uint32_t chain)
{
    memset(di, 0, sizeof(*di));
    di->mask = (uint8_t)rt_below(g, 128);
    di->symbolic_id = (int32_t)rt_rand(g);
    di->namespace_uri = (int32_t)rt_rand(g);
    di->localized_text = (int32_t)rt_rand(g);
    di->locale = (int32_t)rt_rand(g);
    rt_fill_string(g, &di->additional_info, true);
    di->inner_status = (uint32_t)rt_rand(g);
    if (chain >= ROUNDTRIP_DI_MAX)
        di->mask &= (uint8_t)~UA_DI_INNER_DIAG;
    if (di->mask & UA_DI_INNER_DIAG) {
        di->inner = rt_alloc(g, sizeof(*di->inner));
        rt_fill_diaginfo(g, di->inner, depth + 1, chain + 1);
    }
}

/* Null one time in eight, else 0..4 elements; deep down only null/empty. */
static void
rt_fill_array(struct rt_gen *g, void **data, int32_t *n,
              const struct ua_type *t, uint32_t depth)
{
    uint8_t *p;

    if (rt_below(g, 8) == 0) {
        *n = -1;
        *data = NULL;
        return;
    }
    *n = depth >= ROUNDTRIP_DEPTH_MAX ? 0 : (int32_t)rt_below(g, 5);
    p = rt_alloc(g, (size_t)*n * t->size);
    for (int32_t i = 0; i < *n; i++)
        rt_fill(g, p + (size_t)i * t->size, t, depth + 1);
    *data = p;
}

static void
rt_fill(struct rt_gen *g, void *v, const struct ua_type *t, uint32_t depth)
{
    switch (t->kind) {
    case UA_BT_BOOLEAN:
        *(bool *)v = (rt_rand(g) >> 40) & 1;
        return;
    case UA_BT_SBYTE:
    case UA_BT_BYTE:
    case UA_BT_INT16:
    case UA_BT_UINT16:
    case UA_BT_INT32:
    case UA_BT_UINT32:
    case UA_BT_INT64:
    case UA_BT_UINT64:
    case UA_BT_FLOAT:
    case UA_BT_DOUBLE:
    case UA_BT_DATETIME:
    case UA_BT_STATUSCODE:
    case UA_BT_GUID:
        rt_fill_bytes(g, v, t->size);       /* NaNs included: equal bitwise */
        return;
    case UA_KIND_ENUM: {
        int32_t e = (int32_t)rt_below(g, 8);

        memset(v, 0, t->size);
        memcpy(v, &e, t->size < 4 ? t->size : 4);
        return;
    }
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
    case UA_BT_XMLELEMENT:
        rt_fill_string(g, v, true);
        return;
    case UA_BT_NODEID:
        rt_fill_nodeid(g, v);
        return;
    case UA_BT_EXPANDEDNODEID: {
        struct ua_expandednodeid *x = v;

        rt_fill_nodeid(g, &x->node);
        if (rt_below(g, 2) == 0)
            rt_fill_string(g, &x->ns_uri, false);
        else
            x->ns_uri = (struct ua_string){ .len = -1, .data = NULL };
        x->server_index = rt_below(g, 2) == 0 ? 0 : (uint32_t)rt_rand(g);
        return;
    }
    case UA_BT_QUALIFIEDNAME: {
        struct ua_qualifiedname *q = v;

        q->ns = (uint16_t)rt_rand(g);
        rt_fill_string(g, &q->name, true);
        return;
    }
    case UA_BT_LOCALIZEDTEXT: {
        struct ua_localizedtext *l = v;

        l->mask = (uint8_t)rt_below(g, 4);
        rt_fill_string(g, &l->locale, true);
        rt_fill_string(g, &l->text, true);
        return;
    }
    case UA_BT_EXTENSIONOBJECT:
        rt_fill_extobj(g, v, depth);
        return;
    case UA_BT_DATAVALUE: {
        struct ua_datavalue *dv = v;

        memset(dv, 0, sizeof(*dv));
        dv->mask = (uint8_t)rt_below(g, 64);
        rt_fill_variant(g, &dv->value, depth + 1);
        dv->status = (uint32_t)rt_rand(g);
        dv->source_ts = (int64_t)rt_rand(g);
        dv->server_ts = (int64_t)rt_rand(g);
        dv->source_ps = (uint16_t)rt_rand(g);
        dv->server_ps = (uint16_t)rt_rand(g);
        return;
    }
    case UA_BT_VARIANT:
        rt_fill_variant(g, v, depth);
        return;
    case UA_BT_DIAGNOSTICINFO:
        rt_fill_diaginfo(g, v, depth, 0);
        return;
    case UA_KIND_STRUCT: {
        uint8_t *base = v;

        for (uint16_t i = 0; i < t->nmembers; i++) {
            const struct ua_member *m = &t->members[i];
            const struct ua_type   *mt = &ua_types[m->type];

            if (m->is_array) {
                void   *p;
                int32_t n;

                rt_fill_array(g, &p, &n, mt, depth + 1);
                memcpy(base + m->count_offset, &n, 4);
                memcpy(base + m->offset, &p, sizeof(p));
            } else {
                rt_fill(g, base + m->offset, mt, depth + 1);
            }
        }
        return;
    }
    default:
        return;
    }
}

/* ------------------------------------------------------------ the test */

static void
rt_hexdump(const char *what, const uint8_t *b, size_t n)
{
    fprintf(stderr, "%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 256; i++)
        fprintf(stderr, "%s%02x", i % 32 == 0 ? "\n  " : " ", b[i]);
    fprintf(stderr, "%s\n", n > 256 ? "\n  ..." : "");
}

static void
rt_check_type(size_t ti)
{
    const struct ua_type *t = &ua_types[ti];
    struct ua_arena       a;

    ua_arena_init(&a, rt_arena_buf, sizeof(rt_arena_buf));
    for (uint32_t seed = 0; seed < ROUNDTRIP_SEEDS; seed++) {
        struct rt_gen g = {
            .s = 0x9E3779B97F4A7C15ULL * (ti + 1) + 0x632BE59BD9B4E019ULL
                 * (seed + 1),
        };
        void     *orig, *dec;
        size_t    len = 0, len2 = 0, used = 0, need = 0, sz;
        ua_status s;

        if (g.s == 0)
            g.s = 1;
        rt_pool_used = 0;
        ua_arena_reset(&a);
        orig = rt_alloc(&g, t->size);
        rt_fill(&g, orig, t, 0);
        ck_assert_msg(!g.oom, "%s seed %u: generator pool exhausted",
                      t->name, seed);

        s = ua_encode(orig, t, rt_enc1, sizeof(rt_enc1), &len);
        ck_assert_msg(s == UA_GOOD, "%s seed %u: encode: %s (0x%08x)",
                      t->name, seed, ua_status_name(s), s);
        sz = ua_encoded_size(orig, t);
        ck_assert_msg(sz == len, "%s seed %u: ua_encoded_size %zu, "
                      "encode wrote %zu", t->name, seed, sz, len);

        dec = rt_alloc(&g, t->size);                /* fresh, zeroed */
        s = ua_decode(rt_enc1, len, &used, dec, t, &a, NULL);
        if (s != UA_GOOD || used != len)
            rt_hexdump("encoding", rt_enc1, len);
        ck_assert_msg(s == UA_GOOD, "%s seed %u: decode: %s (0x%08x) "
                      "at byte %zu of %zu", t->name, seed, ua_status_name(s),
                      s, used, len);
        ck_assert_msg(used == len, "%s seed %u: decode consumed %zu of %zu",
                      t->name, seed, used, len);
        if (!ua_equal(orig, dec, t))
            rt_hexdump("encoding", rt_enc1, len);
        ck_assert_msg(ua_equal(orig, dec, t),
                      "%s seed %u: decoded value differs from the original",
                      t->name, seed);

        s = ua_encode(dec, t, rt_enc2, sizeof(rt_enc2), &len2);
        ck_assert_msg(s == UA_GOOD, "%s seed %u: re-encode: %s",
                      t->name, seed, ua_status_name(s));
        if (len2 != len || memcmp(rt_enc1, rt_enc2, len) != 0) {
            rt_hexdump("first encoding", rt_enc1, len);
            rt_hexdump("re-encoding", rt_enc2, len2);
        }
        ck_assert_msg(len2 == len && memcmp(rt_enc1, rt_enc2, len) == 0,
                      "%s seed %u: re-encoding differs (%zu vs %zu bytes)",
                      t->name, seed, len2, len);

        /* One byte short: the exact size comes back, nothing past cap. */
        if (len > 0) {
            uint8_t *small = malloc(len + 16);

            ck_assert_ptr_nonnull(small);
            memset(small, 0xA5, len + 16);
            s = ua_encode(orig, t, small, len - 1, &need);
            ck_assert_msg(s == UA_BAD_ENCODING_LIMITS_EXCEEDED,
                          "%s seed %u: encode into %zu bytes: %s, want "
                          "BadEncodingLimitsExceeded", t->name, seed,
                          len - 1, ua_status_name(s));
            ck_assert_msg(need == len, "%s seed %u: short buffer reported "
                          "%zu bytes needed, want %zu", t->name, seed,
                          need, len);
            for (size_t i = len - 1; i < len + 16; i++)
                ck_assert_msg(small[i] == 0xA5, "%s seed %u: encode into "
                              "%zu bytes wrote byte %zu", t->name, seed,
                              len - 1, i);
            free(small);
        }
    }
}

START_TEST(test_roundtrip_type)
{
    ck_assert_uint_lt((size_t)_i, ua_types_count);
    rt_check_type((size_t)_i);
}
END_TEST

/* The table has the shape types.h promises, and structures for EOs. */
START_TEST(test_roundtrip_table)
{
    ck_assert_uint_ge(ua_types_count, 25);
    ck_assert_str_eq(ua_types[UA_TYPE_BOOLEAN].name, "Boolean");
    ck_assert_str_eq(ua_types[UA_TYPE_DIAGNOSTICINFO].name, "DiagnosticInfo");
    ck_assert_uint_gt(rt_eo_ntypes, 0);
    for (size_t i = 0; i < ua_types_count; i++) {
        ck_assert_msg(ua_types[i].name != NULL, "ua_types[%zu] unnamed", i);
        ck_assert_msg(ua_types[i].size > 0 || ua_types[i].nmembers == 0,
                      "%s: size 0", ua_types[i].name);
    }
}
END_TEST

static void
rt_setup(void)
{
    rt_eo_ntypes = 0;
    for (size_t i = 0; i < ua_types_count; i++)
        if (ua_types[i].kind == UA_KIND_STRUCT && ua_types[i].binary_id != 0
            && rt_eo_ntypes < sizeof(rt_eo_types) / sizeof(rt_eo_types[0]))
            rt_eo_types[rt_eo_ntypes++] = (uint16_t)i;
}

Suite *
rt_suite(void)
{
    Suite *s = suite_create("Round trip for every type");
    TCase *tc;

    tc = tcase_create("Type table");
    tcase_add_checked_fixture(tc, rt_setup, NULL);
    tcase_add_test(tc, test_roundtrip_table);
    suite_add_tcase(s, tc);

    tc = tcase_create("Encode, decode, re-encode");
    tcase_add_checked_fixture(tc, rt_setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_roundtrip_type, 0, (int)ua_types_count);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(rt_suite());
    int      nfail;

    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
