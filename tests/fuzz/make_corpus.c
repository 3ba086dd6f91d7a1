/*
 * tests/fuzz/make_corpus.c: writes the seed corpus of fuzz_decode.
 *
 * Not part of the build; run it by hand after a codec or type-table change
 * that makes the committed seeds stale:
 *
 *   cc -std=c11 -D_GNU_SOURCE -O1 -I. -o /tmp/make_corpus \
 *      tests/fuzz/make_corpus.c proto/arena.c proto/codec.c proto/types.c \
 *      proto/types_gen.c proto/status_gen.c
 *   rm -rf tests/fuzz/corpus/fuzz_decode
 *   /tmp/make_corpus tests/fuzz/corpus/fuzz_decode
 *
 * Each seed is the 2-byte little-endian selector of fuzz_decode.c followed by
 * one encoded value:
 *   - CORPUS_PER_TYPE values of each message type in corpus_msgs[], filled
 *     from a fixed-seed xorshift generator (the same walk over the type
 *     description as tests/unit/proto/check_roundtrip.c, kept smaller), with
 *     the DefaultBinary id as selector;
 *   - random Variants, DataValues, ExtensionObjects and DiagnosticInfos with
 *     their built-in index as selector;
 *   - every node-opcua vector of tests/vectors/vectors_gen.h whose name maps
 *     to a type (corpus_vec_map[]).
 * The output depends only on this file, the type table and the vectors, so
 * re-running it gives the same files.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/vectors/vectors_gen.h"

#define CORPUS_PER_TYPE     3
#define CORPUS_PER_BUILTIN  4
#define CORPUS_DEPTH_MAX    4
#define CORPUS_SEED_MAX     4096     /* bytes; larger values are skipped */
#define CORPUS_POOL         (4u << 20)

struct cg {
    uint64_t s;
    uint32_t eo_depth;
};

static uint64_t cg_rand(struct cg *g);
static uint32_t cg_below(struct cg *g, uint32_t n);
static void *cg_alloc(size_t n);
static void cg_bytes(struct cg *g, void *p, size_t n);
static void cg_string(struct cg *g, struct ua_string *s, bool nullable);
static void cg_nodeid(struct cg *g, struct ua_nodeid *n);
static void cg_variant(struct cg *g, struct ua_variant *v, uint32_t depth);
static void cg_fill(struct cg *g, void *v, const struct ua_type *t,
                    uint32_t depth);
static int cg_write(const char *dir, const char *name, uint16_t sel,
                    const uint8_t *body, size_t len);
static int cg_value(const char *dir, const struct ua_type *t, uint16_t sel,
                    uint32_t k);

static uint8_t cg_pool[CORPUS_POOL] __attribute__((aligned(16)));
static size_t  cg_used;
static uint8_t cg_enc[1u << 20];
static size_t  cg_nfiles, cg_nbytes;

/* The service messages a server receives or sends most. */
static const uint16_t corpus_msgs[] = {
    UA_TYPE_READREQUEST, UA_TYPE_READRESPONSE,
    UA_TYPE_WRITEREQUEST, UA_TYPE_WRITERESPONSE,
    UA_TYPE_BROWSEREQUEST, UA_TYPE_BROWSERESPONSE,
    UA_TYPE_BROWSENEXTREQUEST,
    UA_TYPE_CREATESESSIONREQUEST, UA_TYPE_CREATESESSIONRESPONSE,
    UA_TYPE_ACTIVATESESSIONREQUEST, UA_TYPE_CLOSESESSIONREQUEST,
    UA_TYPE_OPENSECURECHANNELREQUEST, UA_TYPE_GETENDPOINTSREQUEST,
    UA_TYPE_CREATESUBSCRIPTIONREQUEST,
    UA_TYPE_CREATEMONITOREDITEMSREQUEST,
    UA_TYPE_PUBLISHREQUEST, UA_TYPE_PUBLISHRESPONSE,
    UA_TYPE_CALLREQUEST, UA_TYPE_TRANSLATEBROWSEPATHSTONODEIDSREQUEST,
    UA_TYPE_SERVICEFAULT,
};

/* vectors_gen.h names by prefix (before '_' or the end) -> ua_types[]. */
static const struct {
    const char *prefix;
    uint16_t    type;
} corpus_vec_map[] = {
    { "boolean", UA_TYPE_BOOLEAN },
    { "sbyte", UA_TYPE_SBYTE },
    { "byte", UA_TYPE_BYTE },
    { "int16", UA_TYPE_INT16 },
    { "uint16", UA_TYPE_UINT16 },
    { "int32", UA_TYPE_INT32 },
    { "uint32", UA_TYPE_UINT32 },
    { "int64", UA_TYPE_INT64 },
    { "uint64", UA_TYPE_UINT64 },
    { "float", UA_TYPE_FLOAT },
    { "double", UA_TYPE_DOUBLE },
    { "string", UA_TYPE_STRING },
    { "datetime", UA_TYPE_DATETIME },
    { "guid", UA_TYPE_GUID },
    { "bytestring", UA_TYPE_BYTESTRING },
    { "xmlelement", UA_TYPE_XMLELEMENT },
    { "nodeid", UA_TYPE_NODEID },
    { "expnodeid", UA_TYPE_EXPANDEDNODEID },
    { "statuscode", UA_TYPE_STATUSCODE },
    { "qualifiedname", UA_TYPE_QUALIFIEDNAME },
    { "localizedtext", UA_TYPE_LOCALIZEDTEXT },
    { "extobj", UA_TYPE_EXTENSIONOBJECT },
    { "datavalue", UA_TYPE_DATAVALUE },
    { "variant", UA_TYPE_VARIANT },
    { "diaginfo", UA_TYPE_DIAGNOSTICINFO },
    { "read_request", UA_TYPE_READREQUEST },
    { "read_response", UA_TYPE_READRESPONSE },
    { "create_session_request", UA_TYPE_CREATESESSIONREQUEST },
    { "activate_session_request", UA_TYPE_ACTIVATESESSIONREQUEST },
    { "browse_response", UA_TYPE_BROWSERESPONSE },
    { "publish_response", UA_TYPE_PUBLISHRESPONSE },
};

static uint64_t
cg_rand(struct cg *g)
{
    uint64_t x = g->s;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t
cg_below(struct cg *g, uint32_t n)
{
    return (uint32_t)((cg_rand(g) >> 32) % n);
}

static void *
cg_alloc(size_t n)
{
    size_t r = ((n + 15) & ~(size_t)15) + 16;
    void  *p;

    if (r > sizeof(cg_pool) - cg_used) {
        fprintf(stderr, "make_corpus: value pool exhausted\n");
        exit(1);
    }
    p = cg_pool + cg_used;
    cg_used += r;
    memset(p, 0, r);
    return p;
}

static void
cg_bytes(struct cg *g, void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)p)[i] = (uint8_t)(cg_rand(g) >> 56);
}

/* Printable text, so the seeds look like what clients send. */
static void
cg_string(struct cg *g, struct ua_string *s, bool nullable)
{
    if (nullable && cg_below(g, 6) == 0) {
        *s = (struct ua_string){ .len = -1, .data = NULL };
        return;
    }
    s->len = (int32_t)cg_below(g, 13);
    s->data = cg_alloc((size_t)s->len);
    for (int32_t i = 0; i < s->len; i++)
        s->data[i] = (uint8_t)('a' + cg_below(g, 26));
}

static void
cg_nodeid(struct cg *g, struct ua_nodeid *n)
{
    memset(n, 0, sizeof(*n));
    n->ns = (uint16_t)cg_below(g, 4);
    n->idtype = (uint8_t)(cg_below(g, 3) == 0 ? cg_below(g, 4) : 0);
    switch (n->idtype) {
    case UA_IDTYPE_NUMERIC:
        n->id.num = cg_below(g, 2) ? cg_below(g, 256) : cg_below(g, 100000);
        break;
    case UA_IDTYPE_STRING:
    case UA_IDTYPE_OPAQUE:
        cg_string(g, &n->id.str, false);
        break;
    default:
        cg_bytes(g, &n->id.guid, sizeof(n->id.guid));
        break;
    }
}

static void
cg_variant(struct cg *g, struct ua_variant *v, uint32_t depth)
{
    const struct ua_type *et;
    uint8_t               bt;

    memset(v, 0, sizeof(*v));
    v->ndims = -1;
    if (cg_below(g, 8) == 0)
        return;
    bt = (uint8_t)(1 + cg_below(g, depth >= CORPUS_DEPTH_MAX
                                       ? UA_BT_LOCALIZEDTEXT : UA_BT_MAX));
    et = &ua_types[bt - 1];
    v->type = bt;
    if (bt != UA_BT_VARIANT && cg_below(g, 2) == 0) {
        v->data = cg_alloc(et->size);
        cg_fill(g, v->data, et, depth + 1);
        return;
    }
    v->is_array = 1;
    v->n = (int32_t)cg_below(g, 4);
    v->data = cg_alloc((size_t)v->n * et->size);
    for (int32_t i = 0; i < v->n; i++)
        cg_fill(g, (uint8_t *)v->data + (size_t)i * et->size, et, depth + 1);
    if (cg_below(g, 3) == 0) {
        v->ndims = 2;
        v->dims = cg_alloc(8);
        v->dims[0] = 1;
        v->dims[1] = v->n;
    }
}

static void
cg_fill(struct cg *g, void *v, const struct ua_type *t, uint32_t depth)
{
    switch (t->kind) {
    case UA_BT_BOOLEAN:
        *(bool *)v = cg_below(g, 2);
        return;
    case UA_KIND_ENUM: {
        int32_t e = (int32_t)cg_below(g, 4);

        memcpy(v, &e, 4);
        return;
    }
    case UA_BT_STRING:
    case UA_BT_BYTESTRING:
    case UA_BT_XMLELEMENT:
        cg_string(g, v, true);
        return;
    case UA_BT_NODEID:
        cg_nodeid(g, v);
        return;
    case UA_BT_EXPANDEDNODEID: {
        struct ua_expandednodeid *x = v;

        cg_nodeid(g, &x->node);
        x->ns_uri = (struct ua_string){ .len = -1, .data = NULL };
        if (cg_below(g, 3) == 0)
            cg_string(g, &x->ns_uri, false);
        x->server_index = cg_below(g, 3) == 0 ? cg_below(g, 10) : 0;
        return;
    }
    case UA_BT_QUALIFIEDNAME: {
        struct ua_qualifiedname *q = v;

        q->ns = (uint16_t)cg_below(g, 3);
        cg_string(g, &q->name, true);
        return;
    }
    case UA_BT_LOCALIZEDTEXT: {
        struct ua_localizedtext *l = v;

        l->mask = (uint8_t)cg_below(g, 4);
        cg_string(g, &l->locale, false);
        cg_string(g, &l->text, false);
        return;
    }
    case UA_BT_EXTENSIONOBJECT: {
        struct ua_extobj *x = v;
        uint32_t          pick = cg_below(g, 3);

        memset(x, 0, sizeof(*x));
        x->body.len = -1;
        if (depth >= CORPUS_DEPTH_MAX || g->eo_depth >= 2)
            pick = pick % 2;
        if (pick == 0) {
            x->type_id = ua_nodeid_num(0, 0);
            x->encoding = UA_EO_NONE;
        } else if (pick == 1) {
            x->type_id = ua_nodeid_num(2, 5000 + cg_below(g, 100));
            x->encoding = UA_EO_BYTES;
            cg_string(g, &x->body, false);
        } else {
            /* A structure with an encoding id, near ReadValueId's. */
            const struct ua_type *et;

            do
                et = &ua_types[25 + cg_below(g, (uint32_t)ua_types_count - 25)];
            while (et->kind != UA_KIND_STRUCT || et->binary_id == 0);
            x->type_id = ua_nodeid_num(0, et->binary_id);
            x->encoding = UA_EO_DECODED;
            x->type = et;
            x->obj = cg_alloc(et->size);
            g->eo_depth++;
            cg_fill(g, x->obj, et, depth + 1);
            g->eo_depth--;
        }
        return;
    }
    case UA_BT_DATAVALUE: {
        struct ua_datavalue *dv = v;

        memset(dv, 0, sizeof(*dv));
        dv->mask = (uint8_t)cg_below(g, 64);
        cg_variant(g, &dv->value, depth + 1);
        dv->status = cg_below(g, 4) == 0 ? UA_BAD_NODE_ID_UNKNOWN : UA_GOOD;
        dv->source_ts = dv->server_ts = 133000000000000000LL
                                        + (int64_t)cg_below(g, 1u << 30);
        dv->source_ps = (uint16_t)cg_below(g, 10000);
        dv->server_ps = (uint16_t)cg_below(g, 10000);
        return;
    }
    case UA_BT_VARIANT:
        cg_variant(g, v, depth);
        return;
    case UA_BT_DIAGNOSTICINFO: {
        struct ua_diaginfo *di = v;

        memset(di, 0, sizeof(*di));
        di->mask = (uint8_t)(cg_below(g, 64) & ~UA_DI_INNER_DIAG);
        di->symbolic_id = (int32_t)cg_below(g, 5);
        di->namespace_uri = (int32_t)cg_below(g, 5);
        di->localized_text = (int32_t)cg_below(g, 5);
        di->locale = (int32_t)cg_below(g, 5);
        cg_string(g, &di->additional_info, false);
        di->inner_status = UA_BAD_INTERNAL_ERROR;
        if (depth < CORPUS_DEPTH_MAX && cg_below(g, 3) == 0) {
            di->mask |= UA_DI_INNER_DIAG;
            di->inner = cg_alloc(sizeof(*di->inner));
            cg_fill(g, di->inner, t, depth + 1);
        }
        return;
    }
    case UA_KIND_STRUCT: {
        uint8_t *base = v;

        for (uint16_t i = 0; i < t->nmembers; i++) {
            const struct ua_member *m = &t->members[i];
            const struct ua_type   *mt = &ua_types[m->type];

            if (m->is_array) {
                int32_t  n = depth >= CORPUS_DEPTH_MAX
                             ? 0 : (int32_t)cg_below(g, 4);
                uint8_t *p = cg_alloc((size_t)n * mt->size);

                if (cg_below(g, 10) == 0)
                    n = -1;
                for (int32_t j = 0; j < n; j++)
                    cg_fill(g, p + (size_t)j * mt->size, mt, depth + 1);
                memcpy(base + m->count_offset, &n, 4);
                memcpy(base + m->offset, &p, sizeof(p));
            } else {
                cg_fill(g, base + m->offset, mt, depth + 1);
            }
        }
        return;
    }
    default:
        cg_bytes(g, v, t->size);
        return;
    }
}

static int
cg_write(const char *dir, const char *name, uint16_t sel, const uint8_t *body,
         size_t len)
{
    char  path[1024];
    FILE *f;
    uint8_t hdr[2] = { (uint8_t)sel, (uint8_t)(sel >> 8) };

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "make_corpus: fopen(%s): %s\n", path, strerror(errno));
        return -1;
    }
    if (fwrite(hdr, 1, 2, f) != 2 || fwrite(body, 1, len, f) != len
        || fclose(f) != 0) {
        fprintf(stderr, "make_corpus: writing %s failed\n", path);
        return -1;
    }
    cg_nfiles++;
    cg_nbytes += len + 2;
    return 0;
}

/* Seed k of type t; values that encode past CORPUS_SEED_MAX are skipped. */
static int
cg_value(const char *dir, const struct ua_type *t, uint16_t sel, uint32_t k)
{
    struct cg g = { .s = 0x853C49E6748FEA9BULL ^ ((uint64_t)sel << 20) ^ k };
    char      name[256];
    void     *v;
    size_t    len = 0;
    ua_status s;

    for (uint32_t tries = 0; tries < 16; tries++) {
        cg_used = 0;
        v = cg_alloc(t->size);
        cg_fill(&g, v, t, 0);
        s = ua_encode(v, t, cg_enc, sizeof(cg_enc), &len);
        if (s != UA_GOOD) {
            fprintf(stderr, "make_corpus: %s: encode: %s\n", t->name,
                    ua_status_name(s));
            return -1;
        }
        if (len <= CORPUS_SEED_MAX)
            break;
    }
    if (len > CORPUS_SEED_MAX)
        return 0;
    snprintf(name, sizeof(name), "gen-%s-%u", t->name, k);
    return cg_write(dir, name, sel, cg_enc, len);
}

int
main(int argc, char **argv)
{
    const char *dir;

    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus OUTDIR\n");
        return 2;
    }
    dir = argv[1];
    if (mkdir(dir, 0755) == -1 && errno != EEXIST) {
        fprintf(stderr, "make_corpus: mkdir(%s): %s\n", dir, strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < sizeof(corpus_msgs) / sizeof(corpus_msgs[0]); i++) {
        const struct ua_type *t = &ua_types[corpus_msgs[i]];

        if (t->binary_id == 0 || t->binary_id > 0xFFFF) {
            fprintf(stderr, "make_corpus: %s has no 16-bit encoding id\n",
                    t->name);
            return 1;
        }
        for (uint32_t k = 0; k < CORPUS_PER_TYPE; k++)
            if (cg_value(dir, t, (uint16_t)t->binary_id, k) != 0)
                return 1;
    }
    for (uint16_t bt = UA_TYPE_EXTENSIONOBJECT; bt <= UA_TYPE_DIAGNOSTICINFO;
         bt++)
        for (uint32_t k = 0; k < CORPUS_PER_BUILTIN; k++)
            if (cg_value(dir, &ua_types[bt], bt, k) != 0)
                return 1;
    for (size_t i = 0; i < VEC_COUNT; i++) {
        const char *nm = vec_table[i].name;
        int         best = -1;
        size_t      best_len = 0;
        char        name[256];

        for (size_t j = 0;
             j < sizeof(corpus_vec_map) / sizeof(corpus_vec_map[0]); j++) {
            size_t pl = strlen(corpus_vec_map[j].prefix);

            if (strncmp(nm, corpus_vec_map[j].prefix, pl) == 0
                && (nm[pl] == '\0' || nm[pl] == '_') && pl > best_len) {
                best = (int)j;
                best_len = pl;
            }
        }
        if (best < 0) {
            fprintf(stderr, "make_corpus: vector %s: no type, skipped\n", nm);
            continue;
        }
        {
            const struct ua_type *t = &ua_types[corpus_vec_map[best].type];
            uint16_t sel = t->kind == UA_KIND_STRUCT
                           ? (uint16_t)t->binary_id : corpus_vec_map[best].type;

            snprintf(name, sizeof(name), "vec-%s", nm);
            if (cg_write(dir, name, sel, vec_table[i].bytes,
                         vec_table[i].len) != 0)
                return 1;
        }
    }
    printf("make_corpus: %zu files, %zu bytes in %s\n", cg_nfiles, cg_nbytes,
           dir);
    return 0;
}
