/*
 * broker/nodeset.c: the NodeSet2 XML importer's first half, the XML walk
 * (broker/nodeset.h): files parsed into a set (broker/nodeset_int.h) that
 * broker/nsbuild.c then puts into the node store.  The only file of the
 * project that includes libxml2 (tests/check-deps.sh).
 *
 * libxml2's streaming reader walks each file; every child of <UANodeSet>
 * (NamespaceUris, Aliases, one UA* node) is expanded alone into a small
 * tree and dropped when the reader moves on, so a 100,000-node file never
 * sits in memory as a document.  What is kept is the set: nodes and
 * references as compact records, strings and encoded values in one byte
 * heap.  Network access, DTDs and entity substitution are off; a file with
 * a DOCTYPE is refused.
 *
 * NodeIds in a file use the file's own namespace table (index k = its
 * k-th <Uri>); they are translated to the server's NamespaceArray as they
 * are read, so the set holds server indices only.
 */
#include "nodeset.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libxml/tree.h>
#include <libxml/xmlreader.h>

#include "alloc.h"
#include "ns0_gen.h"
#include "proto/builtin.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/layout.h"
#include "nodeset_int.h"

#define BK_NSX_NS0_URI   "http://opcfoundation.org/UA/"
#define BK_NSX_URIS_MAX  65535
#define BK_NSX_DEPTH_MAX 16     /* nesting of structures in a value */

struct bk_nsx_alias {
    char            *name;
    struct bk_nsx_id id;
};

/* One file being read. */
struct bk_nsx_file {
    struct bk_nodeset   *s;
    const char          *name;
    uint16_t             fileno;
    xmlDocPtr            doc;
    uint16_t            *map;       /* file index -> server index */
    uint32_t             nmap;
    struct bk_nsx_alias *aliases;
    uint32_t             naliases;
    char                *err;
    size_t               errlen;
    int                  line;
};

/* Allocations of one value, freed after it is encoded. */
struct bk_nsx_scratch {
    void   **p;
    size_t   n, cap;
};

static int bk_nsx_fail(struct bk_nsx_file *f, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bk_nsx_line(xmlNodePtr el);
static void *bk_nsx_scratch_alloc(struct bk_nsx_scratch *sc, size_t size);
static void bk_nsx_scratch_free(struct bk_nsx_scratch *sc);
static uint32_t bk_nsx_heap_put(struct bk_nodeset *s, const void *b,
                                size_t len, bool nul);
static uint32_t bk_nsx_text(struct bk_nodeset *s, const char *t);
static bool bk_nsx_is(xmlNodePtr n, const char *name);
static xmlNodePtr bk_nsx_first(xmlNodePtr el);
static xmlNodePtr bk_nsx_next(xmlNodePtr c);
static xmlNodePtr bk_nsx_child(xmlNodePtr el, const char *name);
static char *bk_nsx_content(xmlNodePtr el, bool trim);
static char *bk_nsx_attr(xmlNodePtr el, const char *name);
static int bk_nsx_int(const char *t, int64_t lo, int64_t hi, int64_t *out);
static int bk_nsx_uint(const char *t, uint64_t hi, uint64_t *out);
static int bk_nsx_bool(const char *t, bool *out);
static int bk_nsx_attr_uint(struct bk_nsx_file *f, xmlNodePtr el,
                            const char *name, uint64_t hi, uint64_t *out);
static int bk_nsx_attr_bool(struct bk_nsx_file *f, xmlNodePtr el,
                            const char *name, bool *out);
static int bk_nsx_uri_index(struct bk_nodeset *s, const char *uri);
static int bk_nsx_map_ns(struct bk_nsx_file *f, int line, uint64_t fns,
                         uint16_t *out);
static int bk_nsx_parse_nodeid(struct bk_nsx_file *f, int line, const char *s,
                               bool alias, struct bk_nsx_id *out);
static int bk_nsx_attr_nodeid(struct bk_nsx_file *f, xmlNodePtr el,
                              const char *name, struct bk_nsx_id *out);
static void bk_nsx_to_ua(const struct bk_nodeset *s,
                         const struct bk_nsx_id *id, struct ua_nodeid *out);
static int bk_nsx_nodeid_value(struct bk_nsx_file *f,
                               struct bk_nsx_scratch *sc, xmlNodePtr el,
                               struct ua_nodeid *out);
static int bk_nsx_string(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                         xmlNodePtr el, struct ua_string *out);
static int bk_nsx_localized(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                            xmlNodePtr el, struct ua_localizedtext *lt);
static const struct ua_type *bk_nsx_eo_type(uint32_t id);
static int bk_nsx_extobj(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                         xmlNodePtr el, struct ua_extobj *x, int depth);
static int bk_nsx_builtin(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                          xmlNodePtr el, uint8_t bt, void *dst, int depth);
static int bk_nsx_typed(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                        xmlNodePtr el, const struct ua_type *t, void *dst,
                        int depth);
static int bk_nsx_struct(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                         xmlNodePtr el, const struct ua_type *t, void *dst,
                         int depth);
static uint8_t bk_nsx_bt_of(const char *name, bool *array);
static int bk_nsx_value(struct bk_nsx_file *f, struct bk_nsx_node *n,
                        xmlNodePtr el);
static int bk_nsx_text_el(struct bk_nsx_file *f, xmlNodePtr el, uint32_t *text,
                          uint32_t *locale);
static int bk_nsx_add_ref(struct bk_nsx_file *f, uint32_t src, xmlNodePtr r);
static int bk_nsx_uanode(struct bk_nsx_file *f, xmlNodePtr el, uint8_t nc);
static int bk_nsx_namespaces(struct bk_nsx_file *f, xmlNodePtr el);
static int bk_nsx_aliases(struct bk_nsx_file *f, xmlNodePtr el);
static int bk_nsx_models(struct bk_nsx_file *f, xmlNodePtr el);
static int bk_nsx_element(struct bk_nsx_file *f, xmlNodePtr el);
static void bk_nsx_xml_error(void *arg, xmlErrorPtr e);
static int bk_nsx_file_load(struct bk_nodeset *s, const char *path, char *err,
                            size_t errlen);

/* ------------------------------------------------------------ helpers */

static int
bk_nsx_fail(struct bk_nsx_file *f, int line, const char *fmt, ...)
{
    va_list ap;
    int     n;

    n = snprintf(f->err, f->errlen, "%s:%d: ", f->name, line);
    if (n < 0 || (size_t)n >= f->errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(f->err + n, f->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int
bk_nsx_line(xmlNodePtr el)
{
    long l = xmlGetLineNo(el);

    return l > 0 && l < INT_MAX ? (int)l : 0;
}

static void *
bk_nsx_scratch_alloc(struct bk_nsx_scratch *sc, size_t size)
{
    void *p;

    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 16;
        void **np = bk_realloc(sc->p, cap * sizeof(*np));

        if (np == NULL)
            return NULL;
        sc->p = np;
        sc->cap = cap;
    }
    p = bk_calloc(1, size ? size : 1);
    if (p != NULL)
        sc->p[sc->n++] = p;
    return p;
}

static void
bk_nsx_scratch_free(struct bk_nsx_scratch *sc)
{
    for (size_t i = 0; i < sc->n; i++)
        bk_free(sc->p[i]);
    bk_free(sc->p);
    memset(sc, 0, sizeof(*sc));
}

/* Append len bytes (and a NUL when nul) to the heap: offset, 0 = no memory. */
static uint32_t
bk_nsx_heap_put(struct bk_nodeset *s, const void *b, size_t len, bool nul)
{
    size_t need = s->heap_len + len + (nul ? 1 : 0);
    uint32_t off;

    if (need > UINT32_MAX)
        return 0;
    if (need > s->heap_cap) {
        size_t   cap = s->heap_cap ? s->heap_cap : 4096;
        uint8_t *p;

        while (cap < need)
            cap *= 2;
        p = bk_realloc(s->heap, cap);
        if (p == NULL)
            return 0;
        s->heap = p;
        s->heap_cap = cap;
    }
    off = (uint32_t)s->heap_len;
    if (len != 0)
        memcpy(s->heap + off, b, len);
    if (nul)
        s->heap[off + len] = 0;
    s->heap_len = need;
    return off;
}

/* A text for the node store's string heap: its offset, counted. */
static uint32_t
bk_nsx_text(struct bk_nodeset *s, const char *t)
{
    size_t len = strlen(t);

    s->strings += (4 + len + 3) & ~(size_t)3;
    return bk_nsx_heap_put(s, t, len, true);
}

static bool
bk_nsx_is(xmlNodePtr n, const char *name)
{
    return n != NULL && n->type == XML_ELEMENT_NODE
           && strcmp((const char *)n->name, name) == 0;
}

static xmlNodePtr
bk_nsx_first(xmlNodePtr el)
{
    for (xmlNodePtr c = el->children; c != NULL; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

static xmlNodePtr
bk_nsx_next(xmlNodePtr c)
{
    for (c = c->next; c != NULL; c = c->next)
        if (c->type == XML_ELEMENT_NODE)
            return c;
    return NULL;
}

static xmlNodePtr
bk_nsx_child(xmlNodePtr el, const char *name)
{
    for (xmlNodePtr c = bk_nsx_first(el); c != NULL; c = bk_nsx_next(c))
        if (bk_nsx_is(c, name))
            return c;
    return NULL;
}

/* The text content of el, whitespace trimmed, in a buffer to xmlFree. */
static char *
bk_nsx_content(xmlNodePtr el, bool trim)
{
    char  *t = (char *)xmlNodeGetContent(el);
    size_t a = 0, b;

    if (t == NULL)
        t = (char *)xmlStrdup((const xmlChar *)"");
    if (t == NULL || !trim)
        return t;
    b = strlen(t);
    while (a < b && isspace((unsigned char)t[a]))
        a++;
    while (b > a && isspace((unsigned char)t[b - 1]))
        b--;
    memmove(t, t + a, b - a);
    t[b - a] = '\0';
    return t;
}

static char *
bk_nsx_attr(xmlNodePtr el, const char *name)
{
    return (char *)xmlGetProp(el, (const xmlChar *)name);
}

/* Whole numbers: strtoll/strtoull over the trimmed text, in [lo, hi]. */
static int
bk_nsx_int(const char *t, int64_t lo, int64_t hi, int64_t *out)
{
    char     *end;
    long long v;

    errno = 0;
    v = strtoll(t, &end, 10);
    if (errno != 0 || end == t || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int
bk_nsx_uint(const char *t, uint64_t hi, uint64_t *out)
{
    char              *end;
    unsigned long long v;

    if (*t == '-')
        return -1;
    errno = 0;
    v = strtoull(t, &end, 10);
    if (errno != 0 || end == t || *end != '\0' || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int
bk_nsx_bool(const char *t, bool *out)
{
    if (strcmp(t, "true") == 0 || strcmp(t, "1") == 0)
        *out = true;
    else if (strcmp(t, "false") == 0 || strcmp(t, "0") == 0)
        *out = false;
    else
        return -1;
    return 0;
}

/* An optional unsigned attribute in [0, hi]: 0 (absent: *out untouched). */
static int
bk_nsx_attr_uint(struct bk_nsx_file *f, xmlNodePtr el, const char *name,
                 uint64_t hi, uint64_t *out)
{
    char    *a = bk_nsx_attr(el, name);
    uint64_t v;
    int      rc = 0;

    if (a == NULL)
        return 0;
    if (bk_nsx_uint(a, hi, &v) != 0)
        rc = bk_nsx_fail(f, bk_nsx_line(el), "%s=\"%s\" is not a number "
                         "in [0, %" PRIu64 "]", name, a, hi);
    else
        *out = v;
    xmlFree(a);
    return rc;
}

static int
bk_nsx_attr_bool(struct bk_nsx_file *f, xmlNodePtr el, const char *name,
                 bool *out)
{
    char *a = bk_nsx_attr(el, name);
    int   rc = 0;

    if (a == NULL)
        return 0;
    if (bk_nsx_bool(a, out) != 0)
        rc = bk_nsx_fail(f, bk_nsx_line(el), "%s=\"%s\" is not true or "
                         "false", name, a);
    xmlFree(a);
    return rc;
}

/* ------------------------------------------------------------ NodeIds */

/* The server index of uri, appended when new; -1 when the table is full. */
static int
bk_nsx_uri_index(struct bk_nodeset *s, const char *uri)
{
    char **u;

    for (uint32_t i = 0; i < s->nuris; i++)
        if (strcmp(s->uris[i], uri) == 0)
            return (int)i;
    if (s->nuris >= BK_NSX_URIS_MAX)
        return -1;
    u = bk_realloc(s->uris, (s->nuris + 1) * sizeof(*u));
    if (u == NULL)
        return -1;
    s->uris = u;
    u[s->nuris] = bk_strdup(uri);
    if (u[s->nuris] == NULL)
        return -1;
    return (int)s->nuris++;
}

static int
bk_nsx_map_ns(struct bk_nsx_file *f, int line, uint64_t fns, uint16_t *out)
{
    if (fns == 0) {
        *out = 0;
        return 0;
    }
    if (fns > f->nmap)
        return bk_nsx_fail(f, line, "namespace index %" PRIu64 " is not in "
                           "the file's NamespaceUris (%u)", fns, f->nmap);
    *out = f->map[fns - 1];
    return 0;
}

/*
 * A NodeId in the text form of Part 6 §5.3.1.10 ("ns=1;i=5", "s=x",
 * "g=...", "b=...", also "nsu=URI;..."), or when alias is true an alias
 * name of the file.
 */
static int
bk_nsx_parse_nodeid(struct bk_nsx_file *f, int line, const char *s,
                    bool alias, struct bk_nsx_id *out)
{
    const char *p = s;
    uint64_t    fns = 0;
    bool        have_ns = false;

    memset(out, 0, sizeof(*out));
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "ns=", 3) == 0) {
        const char *semi = strchr(p, ';');
        char        num[16];

        if (semi == NULL || (size_t)(semi - p - 3) >= sizeof(num))
            return bk_nsx_fail(f, line, "bad NodeId \"%s\"", s);
        memcpy(num, p + 3, (size_t)(semi - p - 3));
        num[semi - p - 3] = '\0';
        if (bk_nsx_uint(num, 65535, &fns) != 0)
            return bk_nsx_fail(f, line, "bad NodeId \"%s\"", s);
        if (bk_nsx_map_ns(f, line, fns, &out->ns) != 0)
            return -1;
        have_ns = true;
        p = semi + 1;
    } else if (strncmp(p, "nsu=", 4) == 0) {
        const char *semi = strchr(p, ';');
        char       *uri;
        int         ix;

        if (semi == NULL)
            return bk_nsx_fail(f, line, "bad NodeId \"%s\"", s);
        uri = bk_strndup(p + 4, (size_t)(semi - p - 4));
        ix = uri != NULL ? bk_nsx_uri_index(f->s, uri) : -1;
        bk_free(uri);
        if (ix < 0)
            return bk_nsx_fail(f, line, "too many namespaces");
        out->ns = (uint16_t)ix;
        have_ns = true;
        p = semi + 1;
    }
    if (p[0] != '\0' && p[1] == '=' && strchr("isgb", p[0]) != NULL) {
        const char *v = p + 2;

        switch (p[0]) {
        case 'i': {
            uint64_t n;

            if (bk_nsx_uint(v, UINT32_MAX, &n) != 0)
                return bk_nsx_fail(f, line, "bad NodeId \"%s\"", s);
            out->idtype = SHM_ID_NUMERIC;
            out->num = (uint32_t)n;
            return 0;
        }
        case 's':
            out->idtype = SHM_ID_STRING;
            out->len = (uint32_t)strlen(v);
            out->off = bk_nsx_heap_put(f->s, v, out->len, false);
            f->s->strings += (4 + out->len + 3) & ~(size_t)3;
            if (out->off == 0 && out->len != 0)
                return bk_nsx_fail(f, line, "out of memory");
            return 0;
        case 'g': {
            struct ua_guid g;
            uint8_t        b[16];

            if (ua_text_guid_parse(v, strlen(v), UA_TEXT_XML, &g) != 0)
                return bk_nsx_fail(f, line, "bad GUID NodeId \"%s\"", s);
            /* The node store's key bytes: the Binary encoding. */
            memcpy(b, &g.data1, 4);
            memcpy(b + 4, &g.data2, 2);
            memcpy(b + 6, &g.data3, 2);
            memcpy(b + 8, g.data4, 8);
            out->idtype = SHM_ID_GUID;
            out->len = 16;
            out->off = bk_nsx_heap_put(f->s, b, 16, false);
            f->s->strings += 20;
            return 0;
        }
        case 'b': {
            size_t   n = strlen(v), got;
            uint8_t *b = bk_alloc(n + 1);
            int      rc;

            if (b == NULL)
                return bk_nsx_fail(f, line, "out of memory");
            rc = ua_text_b64_decode(v, n, UA_TEXT_XML, b, &got);
            if (rc == 0) {
                out->idtype = SHM_ID_OPAQUE;
                out->len = (uint32_t)got;
                out->off = bk_nsx_heap_put(f->s, b, got, false);
                f->s->strings += (4 + got + 3) & ~(size_t)3;
            }
            bk_free(b);
            if (rc != 0)
                return bk_nsx_fail(f, line, "bad opaque NodeId \"%s\"", s);
            return 0;
        }
        }
    }
    if (!alias || have_ns)
        return bk_nsx_fail(f, line, "bad NodeId \"%s\"", s);
    for (uint32_t i = 0; i < f->naliases; i++)
        if (strcmp(f->aliases[i].name, p) == 0) {
            *out = f->aliases[i].id;
            return 0;
        }
    return bk_nsx_fail(f, line, "unknown alias \"%s\"", s);
}

/* A NodeId attribute (alias allowed); absent: 1 and *out untouched. */
static int
bk_nsx_attr_nodeid(struct bk_nsx_file *f, xmlNodePtr el, const char *name,
                   struct bk_nsx_id *out)
{
    char *a = bk_nsx_attr(el, name);
    int   rc;

    if (a == NULL)
        return 1;
    rc = bk_nsx_parse_nodeid(f, bk_nsx_line(el), a, true, out);
    xmlFree(a);
    return rc;
}

/* A proto NodeId of a set NodeId (bytes point into the heap). */
static void
bk_nsx_to_ua(const struct bk_nodeset *s, const struct bk_nsx_id *id,
             struct ua_nodeid *out)
{
    memset(out, 0, sizeof(*out));
    out->ns = id->ns;
    switch (id->idtype) {
    case SHM_ID_NUMERIC:
        out->idtype = UA_IDTYPE_NUMERIC;
        out->id.num = id->num;
        break;
    case SHM_ID_GUID:
        out->idtype = UA_IDTYPE_GUID;
        memcpy(&out->id.guid.data1, s->heap + id->off, 4);
        memcpy(&out->id.guid.data2, s->heap + id->off + 4, 2);
        memcpy(&out->id.guid.data3, s->heap + id->off + 6, 2);
        memcpy(out->id.guid.data4, s->heap + id->off + 8, 8);
        break;
    default:
        out->idtype = id->idtype == SHM_ID_STRING ? UA_IDTYPE_STRING
                                                  : UA_IDTYPE_OPAQUE;
        out->id.str.len = (int32_t)id->len;
        out->id.str.data = s->heap + id->off;
        break;
    }
}

/* ------------------------------------------------------------ values */

/* A NodeId value; its identifier bytes are copied into the scratch (the
 * heap they were parsed into may move). */
static int
bk_nsx_nodeid_value(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                    xmlNodePtr el, struct ua_nodeid *out)
{
    xmlNodePtr       idel = bk_nsx_child(el, "Identifier");
    char            *t;
    struct bk_nsx_id id;
    int              rc;

    if (idel == NULL) {
        *out = ua_nodeid_num(0, 0);         /* the null NodeId */
        return 0;
    }
    t = bk_nsx_content(idel, true);
    if (t == NULL)
        return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
    rc = *t == '\0' ? (memset(&id, 0, sizeof(id)), 0)
                    : bk_nsx_parse_nodeid(f, bk_nsx_line(idel), t, false,
                                          &id);
    xmlFree(t);
    if (rc != 0)
        return rc;
    bk_nsx_to_ua(f->s, &id, out);
    if (out->idtype == UA_IDTYPE_STRING || out->idtype == UA_IDTYPE_OPAQUE) {
        uint8_t *p = bk_nsx_scratch_alloc(sc, id.len + 1);

        if (p == NULL)
            return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
        memcpy(p, f->s->heap + id.off, id.len);
        out->id.str.data = p;
    }
    return 0;
}

/* A string member's text copied into the value's scratch memory. */
static int
bk_nsx_string(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
              xmlNodePtr el, struct ua_string *out)
{
    char  *t;
    size_t n;

    if (el == NULL) {
        out->len = -1;
        out->data = NULL;
        return 0;
    }
    t = bk_nsx_content(el, false);
    if (t == NULL)
        return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
    n = strlen(t);
    out->data = bk_nsx_scratch_alloc(sc, n + 1);
    if (out->data == NULL) {
        xmlFree(t);
        return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
    }
    memcpy(out->data, t, n);
    out->len = (int32_t)n;
    xmlFree(t);
    return 0;
}

static int
bk_nsx_localized(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
                 xmlNodePtr el, struct ua_localizedtext *lt)
{
    xmlNodePtr l = bk_nsx_child(el, "Locale"), t = bk_nsx_child(el, "Text");

    memset(lt, 0, sizeof(*lt));
    lt->locale.len = lt->text.len = -1;
    if (l != NULL) {
        if (bk_nsx_string(f, sc, l, &lt->locale) != 0)
            return -1;
        if (lt->locale.len > 0)
            lt->mask |= UA_LT_LOCALE;
    }
    if (t != NULL) {
        if (bk_nsx_string(f, sc, t, &lt->text) != 0)
            return -1;
        lt->mask |= UA_LT_TEXT;
    }
    return 0;
}

/*
 * The generated structure type an ExtensionObject's TypeId names: its
 * Default XML encoding (what NodeSets write), Default Binary or the
 * DataType itself.  The XML encoding's DataType is the source of the
 * HasEncoding reference to it in namespace 0's tables.
 */
static const struct ua_type *
bk_nsx_eo_type(uint32_t id)
{
    static const struct { uint32_t xml; int type; } xml[] = {
        { UA_NS0ID_ARGUMENT_ENCODING_DEFAULTXML, UA_TYPE_ARGUMENT },
        { UA_NS0ID_RANGE_ENCODING_DEFAULTXML, UA_TYPE_RANGE },
        { UA_NS0ID_EUINFORMATION_ENCODING_DEFAULTXML, UA_TYPE_EUINFORMATION },
    };
    static uint32_t             last_id;
    static const struct ua_type *last;
    const struct ua_type        *t;

    for (size_t i = 0; i < sizeof(xml) / sizeof(xml[0]); i++)
        if (xml[i].xml == id)
            return &ua_types[xml[i].type];
    if (id == last_id && last != NULL)
        return last;
    t = ua_types_by_binary_id(id);
    if (t == NULL)
        t = ua_types_by_type_id(id);
    for (size_t i = 0; t == NULL && i < BK_NS0_NODES; i++) {
        const struct bk_ns0_node *n = &bk_ns0_nodes[i];

        if (n->node_class != SHM_NC_DATATYPE)
            continue;
        for (uint32_t r = n->refs; r < n->refs + n->nrefs; r++)
            if (bk_ns0_refs[r].type == UA_NS0ID_HASENCODING
                && bk_ns0_refs[r].target == id) {
                t = ua_types_by_type_id(n->id);
                break;
            }
    }
    if (t == NULL || t->kind != UA_KIND_STRUCT)
        return NULL;
    last_id = id;
    last = t;
    return t;
}

static int
bk_nsx_extobj(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
              xmlNodePtr el, struct ua_extobj *x, int depth)
{
    xmlNodePtr            tid = bk_nsx_child(el, "TypeId");
    xmlNodePtr            body = bk_nsx_child(el, "Body");
    xmlNodePtr            b;
    struct ua_nodeid      id;
    const struct ua_type *t;

    memset(x, 0, sizeof(*x));
    if (body == NULL || (b = bk_nsx_first(body)) == NULL) {
        x->encoding = UA_EO_NONE;
        return 0;
    }
    if (tid == NULL)
        return bk_nsx_fail(f, bk_nsx_line(el), "ExtensionObject without "
                           "TypeId");
    if (bk_nsx_nodeid_value(f, sc, tid, &id) != 0)
        return -1;
    t = id.ns == 0 && id.idtype == UA_IDTYPE_NUMERIC
            ? bk_nsx_eo_type(id.id.num) : NULL;
    if (t == NULL || strcmp((const char *)b->name, t->name) != 0) {
        /* A structure we have no description of (a model's own): kept as
         * the XML body it came as, TypeId its XML encoding (Part 6
         * §5.2.2.15, encoding 2). */
        xmlBufferPtr buf = xmlBufferCreate();
        int          n;

        if (buf == NULL || xmlNodeDump(buf, f->doc, b, 0, 0) < 0) {
            xmlBufferFree(buf);
            return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
        }
        n = xmlBufferLength(buf);
        x->body.data = bk_nsx_scratch_alloc(sc, (size_t)n + 1);
        if (x->body.data == NULL) {
            xmlBufferFree(buf);
            return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
        }
        memcpy(x->body.data, xmlBufferContent(buf), (size_t)n);
        x->body.len = n;
        xmlBufferFree(buf);
        x->encoding = UA_EO_XML;
        x->type_id = id;
        return 0;
    }
    x->obj = bk_nsx_scratch_alloc(sc, t->size);
    if (x->obj == NULL)
        return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
    if (bk_nsx_struct(f, sc, b, t, x->obj, depth + 1) != 0)
        return -1;
    x->encoding = UA_EO_DECODED;
    x->type = t;
    x->type_id = ua_nodeid_num(0, t->binary_id);
    return 0;
}

/*
 * One element of built-in type bt (C representation at dst, zeroed) from
 * its XML form (Part 6 §5.3.1).
 */
static int
bk_nsx_builtin(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
               xmlNodePtr el, uint8_t bt, void *dst, int depth)
{
    int   line = bk_nsx_line(el);
    char *t = NULL;
    int   rc = 0;

    if (depth > BK_NSX_DEPTH_MAX)
        return bk_nsx_fail(f, line, "value nested too deeply");
    switch (bt) {
    case UA_BT_BOOLEAN: case UA_BT_SBYTE: case UA_BT_BYTE: case UA_BT_INT16:
    case UA_BT_UINT16: case UA_BT_INT32: case UA_BT_UINT32: case UA_BT_INT64:
    case UA_BT_UINT64: case UA_BT_FLOAT: case UA_BT_DOUBLE:
    case UA_BT_DATETIME: case UA_BT_BYTESTRING: case UA_BT_GUID: {
        xmlNodePtr      src = bt == UA_BT_GUID ? bk_nsx_child(el, "String")
                                               : NULL;
        uint8_t         small[UA_BUILTIN_ROOM(64)];
        struct ua_arena ar;
        char            why[256];
        size_t          n;
        uint8_t        *room;

        t = bk_nsx_content(src != NULL ? src : el, true);
        if (t == NULL)
            return bk_nsx_fail(f, line, "out of memory");
        n = strlen(t);
        /* Made bytes (a ByteString's) outlive this call: the scratch. */
        room = bt != UA_BT_BYTESTRING && n <= 64
                   ? small : bk_nsx_scratch_alloc(sc, UA_BUILTIN_ROOM(n));
        if (room == NULL) {
            rc = bk_nsx_fail(f, line, "out of memory");
            break;
        }
        ua_arena_init(&ar, room, room == small ? sizeof(small)
                                               : UA_BUILTIN_ROOM(n));
        if (ua_builtin_parse(bt, UA_TEXT_XML, t, n, &ar, dst, why,
                             sizeof(why)) != UA_GOOD)
            rc = bk_nsx_fail(f, line, "%s", why);
        break;
    }
    case UA_BT_STRING:
        return bk_nsx_string(f, sc, el, dst);
    case UA_BT_XMLELEMENT: {
        struct ua_string *s = dst;
        xmlBufferPtr      buf = xmlBufferCreate();
        xmlNodePtr        c = bk_nsx_first(el);

        if (buf == NULL)
            return bk_nsx_fail(f, line, "out of memory");
        if (c != NULL)
            xmlNodeDump(buf, f->doc, c, 0, 0);
        s->len = (int32_t)xmlBufferLength(buf);
        s->data = bk_nsx_scratch_alloc(sc, (size_t)s->len + 1);
        if (s->data == NULL)
            rc = bk_nsx_fail(f, line, "out of memory");
        else
            memcpy(s->data, xmlBufferContent(buf), (size_t)s->len);
        xmlBufferFree(buf);
        break;
    }
    case UA_BT_NODEID:
        return bk_nsx_nodeid_value(f, sc, el, dst);
    case UA_BT_EXPANDEDNODEID: {
        struct ua_expandednodeid *x = dst;

        x->ns_uri.len = -1;
        return bk_nsx_nodeid_value(f, sc, el, &x->node);
    }
    case UA_BT_STATUSCODE: {
        xmlNodePtr c = bk_nsx_child(el, "Code");
        uint64_t   v = 0;

        if (c == NULL)
            return 0;
        t = bk_nsx_content(c, true);
        if (t == NULL)
            return bk_nsx_fail(f, line, "out of memory");
        if (bk_nsx_uint(t, UINT32_MAX, &v) != 0)
            rc = bk_nsx_fail(f, line, "\"%s\" is not a StatusCode", t);
        *(uint32_t *)dst = (uint32_t)v;
        break;
    }
    case UA_BT_QUALIFIEDNAME: {
        struct ua_qualifiedname *q = dst;
        xmlNodePtr               ix = bk_nsx_child(el, "NamespaceIndex");
        uint64_t                 v = 0;

        if (ix != NULL) {
            t = bk_nsx_content(ix, true);
            if (t == NULL)
                return bk_nsx_fail(f, line, "out of memory");
            if (bk_nsx_uint(t, 65535, &v) != 0)
                rc = bk_nsx_fail(f, line, "bad NamespaceIndex \"%s\"", t);
            xmlFree(t);
            t = NULL;
            if (rc != 0 || bk_nsx_map_ns(f, line, v, &q->ns) != 0)
                return -1;
        }
        return bk_nsx_string(f, sc, bk_nsx_child(el, "Name"), &q->name);
    }
    case UA_BT_LOCALIZEDTEXT:
        return bk_nsx_localized(f, sc, el, dst);
    case UA_BT_EXTENSIONOBJECT:
        return bk_nsx_extobj(f, sc, el, dst, depth);
    default:
        return bk_nsx_fail(f, line, "values of type %s are not supported",
                           ua_builtin[bt].name);
    }
    xmlFree(t);
    return rc;
}

/* One value of type t (built-in, enumeration or structure). */
static int
bk_nsx_typed(struct bk_nsx_file *f, struct bk_nsx_scratch *sc, xmlNodePtr el,
             const struct ua_type *t, void *dst, int depth)
{
    if (t->kind == UA_KIND_STRUCT)
        return bk_nsx_struct(f, sc, el, t, dst, depth + 1);
    if (t->kind == UA_KIND_ENUM) {
        /* "Name_5" or "5" (Part 6 §5.3.4). */
        char   *s = bk_nsx_content(el, true), *u;
        int64_t v;
        int     rc;

        if (s == NULL)
            return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
        u = strrchr(s, '_');
        rc = bk_nsx_int(u != NULL ? u + 1 : s, INT32_MIN, INT32_MAX, &v);
        if (rc != 0)
            bk_nsx_fail(f, bk_nsx_line(el), "\"%s\" is not an enumeration "
                        "value", s);
        else
            *(int32_t *)dst = (int32_t)v;
        xmlFree(s);
        return rc;
    }
    return bk_nsx_builtin(f, sc, el, t->kind, dst, depth);
}

/* A structure's members from the child elements named after them. */
static int
bk_nsx_struct(struct bk_nsx_file *f, struct bk_nsx_scratch *sc,
              xmlNodePtr el, const struct ua_type *t, void *dst, int depth)
{
    if (depth > BK_NSX_DEPTH_MAX)
        return bk_nsx_fail(f, bk_nsx_line(el), "value nested too deeply");
    for (uint16_t i = 0; i < t->nmembers; i++) {
        const struct ua_member *m = &t->members[i];
        const struct ua_type   *mt = &ua_types[m->type];
        xmlNodePtr              c = bk_nsx_child(el, m->name);
        uint8_t                *p = (uint8_t *)dst + m->offset;

        if (m->is_array) {
            int32_t n = 0;
            uint8_t *a;

            if (c != NULL)
                for (xmlNodePtr e = bk_nsx_first(c); e; e = bk_nsx_next(e))
                    n++;
            a = bk_nsx_scratch_alloc(sc, (size_t)n * mt->size);
            if (a == NULL)
                return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
            n = 0;
            if (c != NULL)
                for (xmlNodePtr e = bk_nsx_first(c); e; e = bk_nsx_next(e)) {
                    if (bk_nsx_typed(f, sc, e, mt, a + (size_t)n * mt->size,
                                     depth) != 0)
                        return -1;
                    n++;
                }
            memcpy((uint8_t *)dst + m->count_offset, &n, sizeof(n));
            memcpy(p, &a, sizeof(a));
            continue;
        }
        if (c == NULL) {
            /* Absent: the default; null strings, as the encoder expects. */
            if (mt->kind == UA_BT_STRING || mt->kind == UA_BT_BYTESTRING
                || mt->kind == UA_BT_XMLELEMENT)
                ((struct ua_string *)(void *)p)->len = -1;
            else if (mt->kind == UA_BT_LOCALIZEDTEXT)
                ((struct ua_localizedtext *)(void *)p)->mask = 0;
            else if (mt->kind == UA_BT_QUALIFIEDNAME)
                ((struct ua_qualifiedname *)(void *)p)->name.len = -1;
            else if (mt->kind == UA_BT_EXPANDEDNODEID)
                ((struct ua_expandednodeid *)(void *)p)->ns_uri.len = -1;
            continue;
        }
        if (bk_nsx_typed(f, sc, c, mt, p, depth) != 0)
            return -1;
    }
    return 0;
}

/* The built-in type of a value element name ("Int32", "ListOfInt32"). */
static uint8_t
bk_nsx_bt_of(const char *name, bool *array)
{
    *array = strncmp(name, "ListOf", 6) == 0;
    if (*array)
        name += 6;
    return ua_builtin_by_name(name, strlen(name));
}

/* <Value>: encode it as a Binary Variant into the heap. */
static int
bk_nsx_value(struct bk_nsx_file *f, struct bk_nsx_node *n, xmlNodePtr el)
{
    struct bk_nsx_scratch sc = { 0 };
    xmlNodePtr            v = bk_nsx_first(el);
    struct ua_variant     var;
    bool                  array;
    uint8_t               bt;
    size_t                sz, len;
    int32_t               cnt = 0;
    uint8_t              *data, *enc = NULL;
    int                   rc = -1;

    n->value_line = (uint32_t)bk_nsx_line(el);
    if (v == NULL)
        return 0;                       /* empty: as if absent */
    n->value_line = (uint32_t)bk_nsx_line(v);
    bt = bk_nsx_bt_of((const char *)v->name, &array);
    if (bt == 0 || bt == UA_BT_DATAVALUE || bt == UA_BT_VARIANT
        || bt == UA_BT_DIAGNOSTICINFO)
        return bk_nsx_fail(f, bk_nsx_line(v), "values of type <%s> are not "
                           "supported", (const char *)v->name);
    sz = ua_types[bt - 1].size;
    if (array) {
        for (xmlNodePtr e = bk_nsx_first(v); e; e = bk_nsx_next(e)) {
            if (!bk_nsx_is(e, ua_builtin[bt].name))
                return bk_nsx_fail(f, bk_nsx_line(e), "<%s> in <%s>",
                                   (const char *)e->name,
                                   (const char *)v->name);
            cnt++;
        }
    }
    data = bk_nsx_scratch_alloc(&sc, (array ? (size_t)cnt : 1) * sz);
    if (data == NULL) {
        bk_nsx_fail(f, bk_nsx_line(v), "out of memory");
        goto out;
    }
    if (array) {
        int32_t i = 0;

        for (xmlNodePtr e = bk_nsx_first(v); e; e = bk_nsx_next(e), i++)
            if (bk_nsx_builtin(f, &sc, e, bt, data + (size_t)i * sz, 0) != 0)
                goto out;
        ua_variant_set_array(&var, data, cnt, bt);
    } else {
        if (bk_nsx_builtin(f, &sc, v, bt, data, 0) != 0)
            goto out;
        ua_variant_set_scalar(&var, data, bt);
    }
    len = ua_encoded_size(&var, &ua_types[UA_TYPE_VARIANT]);
    enc = bk_alloc(len + 1);
    if (enc == NULL
        || ua_encode(&var, &ua_types[UA_TYPE_VARIANT], enc, len + 1, &len)
               != UA_GOOD || len > UINT32_MAX) {
        bk_nsx_fail(f, bk_nsx_line(v), "cannot encode the value");
        goto out;
    }
    n->value = bk_nsx_heap_put(f->s, enc, len, false);
    if (n->value == 0) {
        bk_nsx_fail(f, bk_nsx_line(v), "out of memory");
        goto out;
    }
    n->value_len = (uint32_t)len;
    n->value_bt = bt;
    n->has_value = 1;
    rc = 0;
out:
    bk_free(enc);
    bk_nsx_scratch_free(&sc);
    return rc;
}

/* ------------------------------------------------------------ nodes */

static int
bk_nsx_text_el(struct bk_nsx_file *f, xmlNodePtr el, uint32_t *text,
               uint32_t *locale)
{
    char *t = bk_nsx_content(el, false);
    char *l = bk_nsx_attr(el, "Locale");

    if (t == NULL)
        return bk_nsx_fail(f, bk_nsx_line(el), "out of memory");
    *text = bk_nsx_text(f->s, t);
    *locale = l != NULL && *l != '\0' ? bk_nsx_text(f->s, l) : 0;
    xmlFree(t);
    xmlFree(l);
    return *text == 0 ? bk_nsx_fail(f, bk_nsx_line(el), "out of memory") : 0;
}

static int
bk_nsx_add_ref(struct bk_nsx_file *f, uint32_t src, xmlNodePtr r)
{
    struct bk_nodeset *s = f->s;
    struct bk_nsx_ref *x;
    bool               fwd = true;
    char              *t;
    int                line = bk_nsx_line(r), rc;

    if (s->nrefs == s->cap_refs) {
        uint32_t           cap = s->cap_refs ? 2 * s->cap_refs : 1024;
        struct bk_nsx_ref *p = bk_realloc(s->refs, (size_t)cap * sizeof(*p));

        if (p == NULL)
            return bk_nsx_fail(f, line, "out of memory");
        s->refs = p;
        s->cap_refs = cap;
    }
    x = &s->refs[s->nrefs];
    memset(x, 0, sizeof(*x));
    x->src = src;
    x->file = f->fileno;
    x->line = (uint32_t)line;
    rc = bk_nsx_attr_nodeid(f, r, "ReferenceType", &x->type);
    if (rc == 1)
        return bk_nsx_fail(f, line, "Reference without ReferenceType");
    if (rc != 0 || bk_nsx_attr_bool(f, r, "IsForward", &fwd) != 0)
        return -1;
    x->forward = fwd;
    t = bk_nsx_content(r, true);
    if (t == NULL)
        return bk_nsx_fail(f, line, "out of memory");
    rc = bk_nsx_parse_nodeid(f, line, t, true, &x->target);
    xmlFree(t);
    if (rc != 0)
        return -1;
    s->nrefs++;
    return 0;
}

static int
bk_nsx_uanode(struct bk_nsx_file *f, xmlNodePtr el, uint8_t nc)
{
    struct bk_nodeset  *s = f->s;
    struct bk_nsx_node *n;
    int                 line = bk_nsx_line(el);
    uint32_t            idx;
    uint64_t            u;
    bool                b;
    char               *a;
    int                 rc;

    if (s->max_nodes != 0 && s->nnodes >= s->max_nodes)
        return bk_nsx_fail(f, line, "more than addrspace.max_nodeset_nodes "
                           "(%u) nodes", s->max_nodes);
    if (s->nnodes == s->cap_nodes) {
        uint32_t            cap = s->cap_nodes ? 2 * s->cap_nodes : 1024;
        struct bk_nsx_node *p = bk_realloc(s->nodes, (size_t)cap * sizeof(*p));

        if (p == NULL)
            return bk_nsx_fail(f, line, "out of memory");
        s->nodes = p;
        s->cap_nodes = cap;
    }
    idx = s->nnodes;
    n = &s->nodes[idx];
    memset(n, 0, sizeof(*n));
    n->node_class = nc;
    n->file = f->fileno;
    n->line = (uint32_t)line;
    n->access_level = 1;            /* CurrentRead: the schema's default */
    n->value_rank = -1;
    n->store = SHM_NONE;
    rc = bk_nsx_attr_nodeid(f, el, "NodeId", &n->id);
    if (rc == 1)
        return bk_nsx_fail(f, line, "%s without NodeId", el->name);
    if (rc != 0)
        return -1;
    /* BrowseName "N:Name", N the file's namespace index. */
    a = bk_nsx_attr(el, "BrowseName");
    if (a == NULL)
        return bk_nsx_fail(f, line, "%s without BrowseName", el->name);
    {
        const char *name = a, *colon = strchr(a, ':');
        uint64_t    fns = 0;

        if (colon != NULL && colon > a) {
            char num[8];

            if ((size_t)(colon - a) < sizeof(num)) {
                memcpy(num, a, (size_t)(colon - a));
                num[colon - a] = '\0';
                if (bk_nsx_uint(num, 65535, &fns) == 0)
                    name = colon + 1;
                else
                    fns = 0;
            }
        }
        if (bk_nsx_map_ns(f, line, fns, &n->browse_ns) != 0) {
            xmlFree(a);
            return -1;
        }
        n->browse_name = bk_nsx_text(s, name);
        xmlFree(a);
    }
    u = 0;
    if (bk_nsx_attr_uint(f, el, "WriteMask", UINT32_MAX, &u) != 0)
        return -1;
    n->write_mask = (uint32_t)u;
    /* Absent UserWriteMask, UserAccessLevel: as the node's own. */
    if (bk_nsx_attr_uint(f, el, "UserWriteMask", UINT32_MAX, &u) != 0)
        return -1;
    n->user_write_mask = (uint32_t)u;
    b = false;
    if (bk_nsx_attr_bool(f, el, "IsAbstract", &b) != 0)
        return -1;
    if (b && (nc & (SHM_NC_OBJECTTYPE | SHM_NC_VARIABLETYPE
                    | SHM_NC_REFERENCETYPE | SHM_NC_DATATYPE)))
        n->flags |= SHM_NF_ABSTRACT;
    if (nc == SHM_NC_REFERENCETYPE) {
        b = false;
        if (bk_nsx_attr_bool(f, el, "Symmetric", &b) != 0)
            return -1;
        if (b)
            n->flags |= SHM_NF_SYMMETRIC;
    }
    if (nc == SHM_NC_OBJECT || nc == SHM_NC_VIEW) {
        u = 0;
        if (bk_nsx_attr_uint(f, el, "EventNotifier", 255, &u) != 0)
            return -1;
        n->event_notifier = (uint8_t)u;
    }
    if (nc == SHM_NC_VIEW) {
        b = false;
        if (bk_nsx_attr_bool(f, el, "ContainsNoLoops", &b) != 0)
            return -1;
        if (b)
            n->flags |= SHM_NF_CONTAINS_NO_LOOPS;
    }
    if (nc == SHM_NC_METHOD) {
        bool ex = true, uex = true;

        if (bk_nsx_attr_bool(f, el, "Executable", &ex) != 0
            || bk_nsx_attr_bool(f, el, "UserExecutable", &uex) != 0)
            return -1;
        n->flags |= (ex ? SHM_NF_EXECUTABLE : 0)
                    | (uex ? SHM_NF_USER_EXECUTABLE : 0);
    }
    if (nc == SHM_NC_VARIABLE || nc == SHM_NC_VARIABLETYPE) {
        int64_t v;

        n->data_type.idtype = SHM_ID_NUMERIC;
        n->data_type.num = UA_NS0ID_BASEDATATYPE;
        rc = bk_nsx_attr_nodeid(f, el, "DataType", &n->data_type);
        if (rc < 0)
            return -1;
        n->has_data_type = 1;
        a = bk_nsx_attr(el, "ValueRank");
        if (a != NULL) {
            rc = bk_nsx_int(a, INT32_MIN, INT32_MAX, &v);
            if (rc != 0 || v < -3)
                bk_nsx_fail(f, line, "ValueRank=\"%s\" is not valid", a);
            xmlFree(a);
            if (rc != 0 || v < -3)
                return -1;
            n->value_rank = (int32_t)v;
        }
        a = bk_nsx_attr(el, "ArrayDimensions");
        if (a != NULL && *a != '\0') {
            uint32_t dims[65], nd = 0;
            char    *save = NULL, *tok;

            for (tok = strtok_r(a, ",", &save); tok != NULL;
                 tok = strtok_r(NULL, ",", &save)) {
                while (isspace((unsigned char)*tok))
                    tok++;
                if (nd >= 64 || bk_nsx_uint(tok, UINT32_MAX, &u) != 0) {
                    xmlFree(a);
                    return bk_nsx_fail(f, line, "bad ArrayDimensions");
                }
                dims[++nd] = (uint32_t)u;
            }
            dims[0] = nd;
            n->array_dims = bk_nsx_heap_put(s, dims, 4 * ((size_t)nd + 1),
                                            false);
            s->strings += 4 + 4 * ((size_t)nd + 1);
        }
        xmlFree(a);
        if (nc == SHM_NC_VARIABLE) {
            u = 1;
            if (bk_nsx_attr_uint(f, el, "AccessLevel", 255, &u) != 0)
                return -1;
            n->access_level = (uint8_t)u;
            if (bk_nsx_attr_uint(f, el, "UserAccessLevel", 255, &u) != 0)
                return -1;
            n->user_access_level = (uint8_t)u;
            a = bk_nsx_attr(el, "MinimumSamplingInterval");
            if (a != NULL) {
                char *end;

                n->min_sampling = strtod(a, &end);
                rc = end == a || *end != '\0' || !(n->min_sampling >= 0);
                if (rc)
                    bk_nsx_fail(f, line, "MinimumSamplingInterval=\"%s\" is "
                                "not valid", a);
                xmlFree(a);
                if (rc)
                    return -1;
            }
            b = false;
            if (bk_nsx_attr_bool(f, el, "Historizing", &b) != 0)
                return -1;
            if (b)
                n->flags |= SHM_NF_HISTORIZING;
        }
    }
    /* ParentNodeId: checked for syntax; the references say the rest. */
    {
        struct bk_nsx_id parent;

        if (bk_nsx_attr_nodeid(f, el, "ParentNodeId", &parent) < 0)
            return -1;
    }
    s->nnodes++;
    n = NULL;                       /* the array may move below */
    for (xmlNodePtr c = bk_nsx_first(el); c != NULL; c = bk_nsx_next(c)) {
        struct bk_nsx_node *m = &s->nodes[idx];

        if (bk_nsx_is(c, "DisplayName")) {
            if (m->dn_text == 0
                && bk_nsx_text_el(f, c, &m->dn_text, &m->dn_locale) != 0)
                return -1;
        } else if (bk_nsx_is(c, "Description")) {
            if (m->desc_text == 0
                && bk_nsx_text_el(f, c, &m->desc_text, &m->desc_locale) != 0)
                return -1;
        } else if (bk_nsx_is(c, "InverseName")) {
            if (nc == SHM_NC_REFERENCETYPE && m->inv_text == 0
                && bk_nsx_text_el(f, c, &m->inv_text, &m->inv_locale) != 0)
                return -1;
        } else if (bk_nsx_is(c, "References")) {
            for (xmlNodePtr r = bk_nsx_first(c); r; r = bk_nsx_next(r)) {
                if (!bk_nsx_is(r, "Reference"))
                    continue;
                if (bk_nsx_add_ref(f, idx, r) != 0)
                    return -1;
            }
        } else if (bk_nsx_is(c, "Value")) {
            if (nc == SHM_NC_VARIABLE || nc == SHM_NC_VARIABLETYPE) {
                if (bk_nsx_value(f, m, c) != 0)
                    return -1;
            }
        }
    }
    n = &s->nodes[idx];
    if (n->dn_text == 0)
        n->dn_text = n->browse_name;    /* Part 3: DisplayName defaults */
    if (nc == SHM_NC_VARIABLE || nc == SHM_NC_VARIABLETYPE) {
        uint32_t len = n->has_value ? n->value_len : 1;

        if (len > SHM_VALUE_INLINE) {
            uint64_t blk = UINT64_C(1) << SHM_VHEAP_MIN_SHIFT;

            while (blk < (uint64_t)len + sizeof(struct shm_vblock))
                blk <<= 1;
            s->vheap += blk;
        }
    }
    return 0;
}

static int
bk_nsx_namespaces(struct bk_nsx_file *f, xmlNodePtr el)
{
    for (xmlNodePtr u = bk_nsx_first(el); u != NULL; u = bk_nsx_next(u)) {
        char     *t;
        int       ix;
        uint16_t *m;

        if (!bk_nsx_is(u, "Uri"))
            continue;
        t = bk_nsx_content(u, true);
        if (t == NULL)
            return bk_nsx_fail(f, bk_nsx_line(u), "out of memory");
        ix = *t == '\0' ? -2
             : strcmp(t, BK_NSX_NS0_URI) == 0 ? 0 : bk_nsx_uri_index(f->s, t);
        xmlFree(t);
        if (ix == -2)
            return bk_nsx_fail(f, bk_nsx_line(u), "empty namespace URI");
        m = ix < 0 ? NULL : bk_realloc(f->map, (f->nmap + 1) * sizeof(*m));
        if (m == NULL)
            return bk_nsx_fail(f, bk_nsx_line(u), "too many namespaces");
        f->map = m;
        f->map[f->nmap++] = (uint16_t)ix;
    }
    return 0;
}

static int
bk_nsx_aliases(struct bk_nsx_file *f, xmlNodePtr el)
{
    for (xmlNodePtr a = bk_nsx_first(el); a != NULL; a = bk_nsx_next(a)) {
        struct bk_nsx_alias *p;
        char                *name, *t;
        int                  rc;

        if (!bk_nsx_is(a, "Alias"))
            continue;
        name = bk_nsx_attr(a, "Alias");
        if (name == NULL)
            return bk_nsx_fail(f, bk_nsx_line(a), "Alias without a name");
        p = bk_realloc(f->aliases, (f->naliases + 1) * sizeof(*p));
        if (p == NULL) {
            xmlFree(name);
            return bk_nsx_fail(f, bk_nsx_line(a), "out of memory");
        }
        f->aliases = p;
        p = &f->aliases[f->naliases];
        p->name = bk_strdup(name);
        xmlFree(name);
        t = bk_nsx_content(a, true);
        if (p->name == NULL || t == NULL) {
            bk_free(p->name);
            xmlFree(t);
            return bk_nsx_fail(f, bk_nsx_line(a), "out of memory");
        }
        rc = bk_nsx_parse_nodeid(f, bk_nsx_line(a), t, false, &p->id);
        xmlFree(t);
        if (rc != 0) {
            bk_free(p->name);
            return -1;
        }
        f->naliases++;
    }
    return 0;
}

/*
 * <Models>: every RequiredModel must be namespace 0 or a model of a file
 * before (the order of addrspace.nodesets); then this file's own models
 * count for the files after it.
 */
static int
bk_nsx_models(struct bk_nsx_file *f, xmlNodePtr el)
{
    struct bk_nodeset *s = f->s;
    uint32_t           before = s->nmodels;

    for (xmlNodePtr m = bk_nsx_first(el); m != NULL; m = bk_nsx_next(m)) {
        char  *uri;
        char **p;

        if (!bk_nsx_is(m, "Model"))
            continue;
        for (xmlNodePtr r = bk_nsx_first(m); r; r = bk_nsx_next(r)) {
            char    *req;
            uint32_t i;

            if (!bk_nsx_is(r, "RequiredModel"))
                continue;
            req = bk_nsx_attr(r, "ModelUri");
            if (req == NULL)
                continue;
            for (i = 0; i < before; i++)
                if (strcmp(s->models[i], req) == 0)
                    break;
            if (i == before && strcmp(req, BK_NSX_NS0_URI) != 0) {
                bk_nsx_fail(f, bk_nsx_line(r), "requires the model %s: "
                            "list its NodeSet file before this one in "
                            "addrspace.nodesets", req);
                xmlFree(req);
                return -1;
            }
            xmlFree(req);
        }
        uri = bk_nsx_attr(m, "ModelUri");
        if (uri == NULL)
            continue;
        p = bk_realloc(s->models, (s->nmodels + 1) * sizeof(*p));
        if (p == NULL || (p[s->nmodels] = bk_strdup(uri)) == NULL) {
            if (p != NULL)
                s->models = p;
            xmlFree(uri);
            return bk_nsx_fail(f, bk_nsx_line(m), "out of memory");
        }
        s->models = p;
        s->nmodels++;
        xmlFree(uri);
    }
    return 0;
}

static int
bk_nsx_element(struct bk_nsx_file *f, xmlNodePtr el)
{
    static const struct { const char *name; uint8_t nc; } cls[] = {
        { "UAObject", SHM_NC_OBJECT },
        { "UAVariable", SHM_NC_VARIABLE },
        { "UAMethod", SHM_NC_METHOD },
        { "UAObjectType", SHM_NC_OBJECTTYPE },
        { "UAVariableType", SHM_NC_VARIABLETYPE },
        { "UAReferenceType", SHM_NC_REFERENCETYPE },
        { "UADataType", SHM_NC_DATATYPE },
        { "UAView", SHM_NC_VIEW },
    };

    if (bk_nsx_is(el, "NamespaceUris"))
        return bk_nsx_namespaces(f, el);
    if (bk_nsx_is(el, "Aliases"))
        return bk_nsx_aliases(f, el);
    if (bk_nsx_is(el, "Models"))
        return bk_nsx_models(f, el);
    for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++)
        if (bk_nsx_is(el, cls[i].name))
            return bk_nsx_uanode(f, el, cls[i].nc);
    return 0;       /* Extensions, ServerUris: nothing to keep */
}

/* libxml2's messages: the first error of a file into f->err. */
static void
bk_nsx_xml_error(void *arg, xmlErrorPtr e)
{
    struct bk_nsx_file *f = arg;
    char                m[256];
    size_t              n;

    if (e == NULL || e->level < XML_ERR_ERROR || f->line != 0)
        return;
    f->line = e->line > 0 ? e->line : 1;
    snprintf(m, sizeof(m), "%s", e->message != NULL ? e->message : "?");
    n = strlen(m);
    while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
        m[--n] = '\0';
    bk_nsx_fail(f, f->line, "bad XML: %s", m);
}

static int
bk_nsx_file_load(struct bk_nodeset *s, const char *path, char *err,
                 size_t errlen)
{
    struct bk_nsx_file f;
    xmlTextReaderPtr   r;
    char             **files;
    int                rc = 0, ret, depth_root = -1;
    bool               root = false;

    memset(&f, 0, sizeof(f));
    files = bk_realloc(s->files, (s->nfiles + 1) * sizeof(*files));
    if (files == NULL || (files[s->nfiles] = bk_strdup(path)) == NULL) {
        if (files != NULL)
            s->files = files;
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    s->files = files;
    f.s = s;
    f.name = files[s->nfiles];
    f.fileno = (uint16_t)s->nfiles++;
    f.err = err;
    f.errlen = errlen;
    /* Hardening: no network, no DTD, no entity substitution. */
    r = xmlReaderForFile(path, NULL, XML_PARSE_NONET | XML_PARSE_BIG_LINES
                                     | XML_PARSE_NOCDATA);
    if (r == NULL) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    xmlTextReaderSetStructuredErrorHandler(r, bk_nsx_xml_error, &f);
    ret = xmlTextReaderRead(r);
    while (ret == 1) {
        int type = xmlTextReaderNodeType(r);
        int depth = xmlTextReaderDepth(r);
        int line = xmlTextReaderGetParserLineNumber(r);

        if (type == XML_READER_TYPE_DOCUMENT_TYPE
            || type == XML_READER_TYPE_ENTITY_REFERENCE) {
            rc = bk_nsx_fail(&f, line, "DOCTYPE and entities are not "
                             "allowed in a NodeSet");
            break;
        }
        if (type == XML_READER_TYPE_ELEMENT && !root) {
            xmlNodePtr cur = xmlTextReaderCurrentNode(r);

            if (cur != NULL && bk_nsx_line(cur) > 0)
                line = bk_nsx_line(cur);
            if (strcmp((const char *)xmlTextReaderConstLocalName(r),
                       "UANodeSet") != 0) {
                rc = bk_nsx_fail(&f, line, "not a NodeSet (<%s>, expected "
                                 "<UANodeSet>)",
                                 (const char *)xmlTextReaderConstLocalName(r));
                break;
            }
            root = true;
            depth_root = depth;
        } else if (type == XML_READER_TYPE_ELEMENT
                   && depth == depth_root + 1) {
            xmlNodePtr el = xmlTextReaderExpand(r);

            if (el == NULL) {
                rc = -1;
                break;
            }
            /* Not xmlTextReaderCurrentDoc(): it would keep every node. */
            f.doc = el->doc;
            if (bk_nsx_element(&f, el) != 0) {
                rc = -1;
                break;
            }
            /* Past the subtree; the reader frees it. */
            ret = xmlTextReaderNext(r);
            continue;
        }
        ret = xmlTextReaderRead(r);
    }
    if (rc != 0 && f.line != 0)
        ;                               /* libxml2's message stands */
    else if (rc == 0 && (ret < 0 || f.line != 0)) {
        if (f.line == 0)
            bk_nsx_fail(&f, xmlTextReaderGetParserLineNumber(r), "bad XML");
        rc = -1;
    }
    if (rc == 0 && !root)
        rc = bk_nsx_fail(&f, 1, "not a NodeSet (no <UANodeSet>)");
    xmlFreeTextReader(r);
    for (uint32_t i = 0; i < f.naliases; i++)
        bk_free(f.aliases[i].name);
    bk_free(f.aliases);
    bk_free(f.map);
    return rc;
}

/* ------------------------------------------------------------ API */

int
bk_nodeset_load(struct bk_nodeset **out, const char *paths,
                const char *ns1_uri, uint32_t max_nodes, char *err,
                size_t errlen)
{
    struct bk_nodeset *s = bk_calloc(1, sizeof(*s));
    char              *list, *save = NULL, *tok;
    int                rc = 0;

    *out = s;
    if (s == NULL) {
        snprintf(err, errlen, "nodesets: out of memory");
        return -1;
    }
    s->max_nodes = max_nodes;
    /* Offset 0 of the heap means "none". */
    if (bk_nsx_heap_put(s, "", 1, false) != 0
        || bk_nsx_uri_index(s, BK_NSX_NS0_URI) != 0
        || bk_nsx_uri_index(s, ns1_uri) != 1) {
        snprintf(err, errlen, "nodesets: out of memory");
        return -1;
    }
    if (paths == NULL || *paths == '\0')
        return 0;
    list = bk_strdup(paths);
    if (list == NULL) {
        snprintf(err, errlen, "nodesets: out of memory");
        return -1;
    }
    LIBXML_TEST_VERSION
    for (tok = strtok_r(list, " \t", &save); tok != NULL && rc == 0;
         tok = strtok_r(NULL, " \t", &save)) {
        if (s->nfiles >= UINT16_MAX) {
            snprintf(err, errlen, "nodesets: too many files");
            rc = -1;
            break;
        }
        rc = bk_nsx_file_load(s, tok, err, errlen);
    }
    bk_free(list);
    return rc;
}

void
bk_nodeset_free(struct bk_nodeset *s)
{
    if (s == NULL)
        return;
    for (uint32_t i = 0; i < s->nuris; i++)
        bk_free(s->uris[i]);
    for (uint32_t i = 0; i < s->nfiles; i++)
        bk_free(s->files[i]);
    for (uint32_t i = 0; i < s->nmodels; i++)
        bk_free(s->models[i]);
    bk_free(s->models);
    bk_free(s->uris);
    bk_free(s->files);
    bk_free(s->nodes);
    bk_free(s->refs);
    bk_free(s->heap);
    bk_free(s);
}

void
bk_nodeset_counts(const struct bk_nodeset *s, struct bk_nodeset_counts *c)
{
    memset(c, 0, sizeof(*c));
    c->nodes = s->nnodes;
    c->refs = s->nrefs;
    c->strings = s->strings;
    c->vheap = s->vheap;
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (s->nodes[i].node_class == SHM_NC_VARIABLE
            || s->nodes[i].node_class == SHM_NC_VARIABLETYPE)
            c->slots++;
        if (s->nodes[i].node_class == SHM_NC_VARIABLE
            && (s->nodes[i].flags & SHM_NF_HISTORIZING))
            c->historizing++;
    }
}

uint32_t
bk_nodeset_nuris(const struct bk_nodeset *s)
{
    return s->nuris - 2;
}

const char *
bk_nodeset_uri(const struct bk_nodeset *s, uint32_t i)
{
    return i + 2 < s->nuris ? s->uris[i + 2] : NULL;
}
