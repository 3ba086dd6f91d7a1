/*
 * tests/unit/hist/store_fixture.h: the set-up the history store's suites
 * share (check_store.c, check_modified.c, check_events.c; header-only:
 * each suite is its own binary): a temporary directory per test (the
 * checked fixture's setup and teardown), a store opened on it, a String
 * NodeId of namespace 1 registered, Double DataValues made and read back,
 * batches of them appended.
 */
#ifndef TESTS_HIST_STORE_FIXTURE_H
#define TESTS_HIST_STORE_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hist/store.h"

#define SEC 10000000ll
#define T0  133000000000000000ll

static char dir[64];

static inline void
setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/hs_test.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void
teardown(void)
{
    char p[128];

    snprintf(p, sizeof(p), "%s/data.mdb", dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/lock.mdb", dir);
    unlink(p);
    rmdir(dir);
}

static inline void
le64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* A Double DataValue at time t (source and server): 26 bytes. */
static inline size_t
dv_double(uint8_t *b, double d, int64_t t)
{
    b[0] = 0x0D;
    b[1] = 11;
    memcpy(b + 2, &d, 8);
    le64(b + 10, t);
    le64(b + 18, t);
    return 26;
}

static inline double
dv_value(const struct hs_sample *s)
{
    double d;

    ck_assert_uint_ge(s->body_len, 10);
    memcpy(&d, s->body + 2, 8);
    return d;
}

/* The store on dir: map and max_bytes in bytes, retention in ticks. */
static inline struct hs_store *
open_store(uint64_t map, uint64_t max_bytes, int64_t retention, bool ro)
{
    struct hs_store_config c = {
        .dir = dir, .map_bytes = map, .max_bytes = max_bytes,
        .retention = retention, .readonly = ro, .nosync = true,
    };
    char             err[256];
    struct hs_store *s = hs_store_open(&c, err, sizeof(err));

    ck_assert_msg(s != NULL, "open: %s", err);
    return s;
}

/* ns=1;s=name registered: its key. */
static inline uint64_t
node(struct hs_store *s, const char *name)
{
    uint8_t  id[64];
    size_t   n = strlen(name);
    uint64_t key;

    /* A String NodeId in namespace 1 (Part 6 §5.2.2.9). */
    id[0] = 0x03;
    id[1] = 1;
    id[2] = 0;
    id[3] = (uint8_t)n;
    id[4] = id[5] = id[6] = 0;
    memcpy(id + 7, name, n);
    ck_assert_int_eq(hs_store_node_add(s, id, 7 + n, 0, &key), 0);
    return key;
}

/* Append n values of node key, value v0 + i at t0 + i * step, in batches
 * of batch. */
static inline void
fill(struct hs_store *s, uint64_t key, int64_t t0, int64_t step, int n,
     int batch, double v0)
{
    static uint8_t      dv[4096][26];
    static struct hs_in in[4096];

    ck_assert_int_le(batch, 4096);
    for (int i = 0; i < n;) {
        int k;

        for (k = 0; k < batch && i < n; k++, i++) {
            in[k].key = key;
            in[k].len = (uint32_t)dv_double(dv[k], v0 + i, t0 + i * step);
            in[k].dv = dv[k];
        }
        ck_assert_int_eq(hs_store_append(s, in, (size_t)k), 0);
    }
}

#endif /* TESTS_HIST_STORE_FIXTURE_H */
