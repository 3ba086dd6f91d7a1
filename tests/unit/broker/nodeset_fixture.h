/*
 * tests/unit/broker/nodeset_fixture.h: the NodeSet importer's tests'
 * world, shared by check_nodeset.c (the XML walk) and check_nsbuild.c
 * (the insertion into the node store), header-only: each suite is its own
 * binary.  Small files written to a temp directory, the whole
 * address-space build over them (addrspace.nodesets), then the node store
 * and the value slots (decoded with proto) read back.
 */
#ifndef TESTS_NODESET_FIXTURE_H
#define TESTS_NODESET_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

#define T0 INT64_C(133470720000000000)      /* 2023-12-15 */

#define HEAD(uris)                                                          \
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"                          \
    "<UANodeSet xmlns=\"http://opcfoundation.org/UA/2011/03/UANodeSet.xsd\"" \
    " xmlns:uax=\"http://opcfoundation.org/UA/2008/02/Types.xsd\">\n"       \
    "<NamespaceUris>" uris "</NamespaceUris>\n"
#define TAIL "</UANodeSet>\n"
#define URI_A "http://example.com/A/"
#define URI_B "http://example.com/B/"
#define URI_C "http://example.com/C/"
#define APP_URI "urn:test:uabroker"

static struct bk_config    conf;
static struct bk_addrspace as;
static bool                built;
static char                dir[64];
static char                err[1024];
static uint8_t             arena_buf[1 << 20];
static struct ua_arena     arena;

static inline void
setup(void)
{
    strcpy(dir, "/tmp/check_nodeset.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    snprintf(conf.application_uri, sizeof(conf.application_uri), APP_URI);
    conf.value_heap_mb = 4;
    conf.vars = 10;
    built = false;
    err[0] = '\0';
    ua_arena_init(&arena, arena_buf, sizeof(arena_buf));
}

static inline void
teardown(void)
{
    char cmd[128];

    if (built)
        bk_addrspace_close(&as);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Write text to dir/name; the path (static, one per call site use). */
static inline const char *
put(const char *name, const char *text)
{
    static char path[8][128];
    static int  next;
    char       *p = path[next++ % 8];
    FILE       *f;

    snprintf(p, 128, "%s/%s", dir, name);
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

/* Build with addrspace.nodesets = the given paths: 0 or -1 (err). */
static inline int
build(const char *paths)
{
    snprintf(conf.nodesets, sizeof(conf.nodesets), "%s", paths);
    if (bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) != 0)
        return -1;
    built = true;
    return 0;
}

static inline void
build_ok(const char *paths)
{
    ck_assert_msg(build(paths) == 0, "build: %s", err);
}

/* The build fails, as a nodeset error, with "FILE:LINE: ..." containing
 * what. */
static inline void
build_fails(const char *paths, const char *file, int line, const char *what)
{
    char want[256];

    ck_assert_int_eq(build(paths), -1);
    ck_assert_msg(as.nodeset_failed, "not a nodeset error: %s", err);
    snprintf(want, sizeof(want), "%s:%d: ", file, line);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
                  "want \"%s...\", got \"%s\"", want, err);
    ck_assert_msg(strstr(err, what) != NULL, "want \"%s\" in \"%s\"", what,
                  err);
}

static inline uint32_t
lookup_num(uint16_t ns, uint32_t id)
{
    struct shm_nodekey k = { .ns = ns, .idtype = SHM_ID_NUMERIC, .num = id };

    return shm_nodestore_lookup(&as.ns, &k);
}

static inline uint32_t
lookup_str(uint16_t ns, const char *s)
{
    struct shm_nodekey k = { .ns = ns, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

static inline const struct shm_node *
node(uint32_t i)
{
    ck_assert_uint_ne(i, SHM_NONE);
    ck_assert_uint_lt(i, as.ns.nnodes);
    return &as.ns.nodes[i];
}

static inline int
str_is(uint32_t off, const char *want)
{
    uint32_t       len;
    const uint8_t *p = shm_nodestore_string(&as.ns, off, &len);

    if (want == NULL)
        return off == 0;
    return p != NULL && len == strlen(want) && memcmp(p, want, len) == 0;
}

/* Node i's value slot decoded into v. */
static inline void
value_of(uint32_t i, struct ua_variant *v)
{
    static uint8_t   buf[1 << 16];
    struct shm_value meta;
    uint32_t         slot = node(i)->u.var.slot;

    ck_assert_int_eq(shm_value_read(&as.vals, slot, &meta, buf, sizeof(buf)),
                     0);
    ck_assert_int_eq(ua_decode(buf, meta.len, NULL, v,
                               &ua_types[UA_TYPE_VARIANT], &arena, NULL),
                     UA_GOOD);
}

/* Is there a reference i --type--> j (forward at i, inverse at j)? */
static inline int
has_ref(uint32_t i, uint32_t type_node, uint32_t j)
{
    uint32_t t = node(type_node)->u.ref.reftype;
    int      fwd = 0, inv = 0;

    for (uint32_t r = 0; r < node(i)->nrefs; r++) {
        const struct shm_ref *x = &as.ns.refs[node(i)->refs + r];

        if (x->target == j && x->reftype == t && !(x->flags & SHM_REF_INVERSE))
            fwd++;
    }
    for (uint32_t r = 0; r < node(j)->nrefs; r++) {
        const struct shm_ref *x = &as.ns.refs[node(j)->refs + r];

        if (x->target == i && x->reftype == t && (x->flags & SHM_REF_INVERSE))
            inv++;
    }
    ck_assert_int_eq(fwd, inv);
    return fwd;
}

static inline int
ustr_is(const struct ua_string *s, const char *want)
{
    return s->len == (int32_t)strlen(want)
           && memcmp(s->data, want, (size_t)s->len) == 0;
}

#endif /* TESTS_NODESET_FIXTURE_H */
