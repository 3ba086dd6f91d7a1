/*
 * tests/unit/hist/check_store.c: hist/store.c on a real LMDB environment
 * in a temporary directory: appends in batches read back forward and
 * backward over many blocks, time ranges, bytes per sample of a Double
 * every second (<= 24 on disk), out-of-order values, HistoryUpdate's
 * insert/replace/update outcomes, deletes by range and at a time,
 * retention by age and by total size (oldest of the store first), a full
 * map (writes refused, reads go on, the flag), a reader handle beside the
 * writer seeing commits, a reopened store keeping everything, a reader
 * of a store nobody wrote yet, a NodeId registered twice, and a reader
 * killed mid-read whose slot pruning frees (mdb_reader_check).
 */
#include <check.h>
#include <errno.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hist/store.h"
#include "hist/store_int.h"
#include "store_fixture.h"

/* Read node key between lo and hi; check count n and order. */
static int
count(struct hs_store *s, uint64_t key, int64_t lo, int64_t hi, bool rev)
{
    static struct hs_read r;
    struct hs_sample      smp;
    int64_t               prev = rev ? INT64_MAX : INT64_MIN;
    int                   n = 0, rc;

    ck_assert_int_eq(hs_read_begin(s, &r), 0);
    ck_assert_int_eq(hs_read_seek(&r, key, lo, hi, rev), 0);
    while ((rc = hs_read_next(&r, &smp)) == 0) {
        ck_assert(smp.t >= lo && smp.t <= hi);
        if (rev)
            ck_assert_int_le(smp.t, prev);
        else
            ck_assert_int_ge(smp.t, prev);
        prev = smp.t;
        n++;
    }
    ck_assert_int_eq(rc, -ENOENT);
    hs_read_end(&r);
    return n;
}

START_TEST(test_append_read)
{
    struct hs_store  *s = open_store(64 << 20, 0, 0, false);
    uint64_t          a = node(s, "a"), b = node(s, "b");
    static struct hs_read r;
    struct hs_sample  smp;
    struct hs_totals  t;
    struct hs_node    nd;
    int               i = 0;

    fill(s, a, T0, SEC, 10000, 700, 0);
    fill(s, b, T0, 2 * SEC, 100, 7, 1000);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), 10000);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, true), 10000);
    ck_assert_int_eq(count(s, b, 0, INT64_MAX, false), 100);
    /* Inclusive bounds, inside one block and across blocks. */
    ck_assert_int_eq(count(s, a, T0 + 10 * SEC, T0 + 20 * SEC, false), 11);
    ck_assert_int_eq(count(s, a, T0 + 10 * SEC, T0 + 20 * SEC, true), 11);
    ck_assert_int_eq(count(s, a, T0 + 10 * SEC + 1, T0 + 5000 * SEC,
                           false), 4990);
    ck_assert_int_eq(count(s, a, T0 + 10 * SEC + 1, T0 + 5000 * SEC,
                           true), 4990);
    ck_assert_int_eq(count(s, a, T0 - 100 * SEC, T0 - 1, false), 0);
    ck_assert_int_eq(count(s, a, T0 + 20000 * SEC, INT64_MAX, true), 0);
    ck_assert_int_eq(count(s, a, T0 + 9999 * SEC, INT64_MAX, true), 1);
    /* Values and times in order. */
    ck_assert_int_eq(hs_read_begin(s, &r), 0);
    ck_assert_int_eq(hs_read_seek(&r, a, 0, INT64_MAX, false), 0);
    while (hs_read_next(&r, &smp) == 0) {
        ck_assert_int_eq(smp.t, T0 + i * SEC);
        ck_assert(dv_value(&smp) == i);
        i++;
    }
    hs_read_end(&r);
    ck_assert_int_eq(i, 10000);
    ck_assert_int_eq(hs_store_totals(s, &t), 0);
    ck_assert_uint_eq(t.samples, 10100);
    ck_assert_uint_eq(t.nodes, 2);
    ck_assert_uint_eq(t.rejected, 0);
    ck_assert_int_eq(hs_store_node(s, a, &nd, NULL, 0), 0);
    ck_assert_uint_eq(nd.samples, 10000);
    ck_assert_int_eq(nd.first, T0);
    ck_assert_int_eq(nd.last, T0 + 9999 * SEC);
    hs_store_close(s);
}
END_TEST

START_TEST(test_bytes_per_sample)
{
    struct hs_store *s = open_store(256 << 20, 0, 0, false);
    uint64_t         key[10];
    struct hs_totals t;
    MDB_env         *env;
    MDB_envinfo      info;
    MDB_stat         st;
    double           logical, disk;
    char             name[8];

    /* Ten nodes, a Double every second each, a day each, interleaved in
     * batches as the historian writes them. */
    for (int k = 0; k < 10; k++) {
        snprintf(name, sizeof(name), "n%d", k);
        key[k] = node(s, name);
    }
    for (int h = 0; h < 24; h++)
        for (int k = 0; k < 10; k++)
            fill(s, key[k], T0 + h * 3600 * SEC, SEC, 3600, 600, k);
    ck_assert_int_eq(hs_store_totals(s, &t), 0);
    ck_assert_uint_eq(t.samples, 864000);
    logical = (double)t.bytes / (double)t.samples;
    hs_store_close(s);
    /* On disk: the pages in use (the last page number, the free list
     * aside: nothing was ever freed but rewritten tail pages). */
    ck_assert_int_eq(mdb_env_create(&env), 0);
    ck_assert_int_eq(mdb_env_set_maxdbs(env, 4), 0);
    ck_assert_int_eq(mdb_env_open(env, dir, MDB_RDONLY, 0640), 0);
    ck_assert_int_eq(mdb_env_info(env, &info), 0);
    ck_assert_int_eq(mdb_env_stat(env, &st), 0);
    disk = (double)(info.me_last_pgno + 1) * st.ms_psize / 864000.0;
    mdb_env_close(env);
    printf("hist: %.2f bytes/sample logical, %.2f on disk\n", logical, disk);
    ck_assert(logical <= 16.0);
    ck_assert(disk <= 24.0);
}
END_TEST

START_TEST(test_out_of_order)
{
    struct hs_store *s = open_store(64 << 20, 0, 0, false);
    uint64_t         a = node(s, "a");
    static struct hs_read r;
    struct hs_sample smp;
    struct hs_in     in[3];
    uint8_t          dv[3][26];
    int64_t          prev = 0;
    int              n = 0;

    fill(s, a, T0, SEC, 2000, 500, 0);
    /* Between two kept values, before all, and at a kept time (replaces
     * it: the later arrival wins). */
    in[0].len = (uint32_t)dv_double(dv[0], -1, T0 + 500 * SEC + 1);
    in[1].len = (uint32_t)dv_double(dv[1], -2, T0 - SEC);
    in[2].len = (uint32_t)dv_double(dv[2], -3, T0 + 1000 * SEC);
    for (int i = 0; i < 3; i++) {
        in[i].key = a;
        in[i].dv = dv[i];
    }
    ck_assert_int_eq(hs_store_append(s, in, 3), 0);
    ck_assert_int_eq(hs_read_begin(s, &r), 0);
    ck_assert_int_eq(hs_read_seek(&r, a, 0, INT64_MAX, false), 0);
    while (hs_read_next(&r, &smp) == 0) {
        ck_assert_int_ge(smp.t, prev);
        if (smp.t == T0 + 1000 * SEC)
            ck_assert(dv_value(&smp) == -3);
        if (smp.t == T0 - SEC)
            ck_assert(dv_value(&smp) == -2);
        prev = smp.t;
        n++;
    }
    hs_read_end(&r);
    ck_assert_int_eq(n, 2002);
    hs_store_close(s);
}
END_TEST

START_TEST(test_update)
{
    struct hs_store *s = open_store(64 << 20, 0, 0, false);
    uint64_t         a = node(s, "a");
    enum hs_outcome  o;
    uint8_t          dv[26];
    struct hs_node   nd;
    uint64_t         n;

    fill(s, a, T0, SEC, 1000, 1000, 0);
    dv_double(dv, 7, T0 + 5 * SEC);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_INSERT, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_EXISTS);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_REPLACE, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    dv_double(dv, 8, T0 + 5 * SEC + 1);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_REPLACE, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_NO_ENTRY);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_INSERT, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_INSERTED);
    dv_double(dv, 9, T0 + 2000 * SEC);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_UPDATE, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_INSERTED);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_UPDATE, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), 1002);
    ck_assert_int_eq(hs_store_node(s, a, &nd, NULL, 0), 0);
    ck_assert_uint_eq(nd.samples, 1002);
    ck_assert_int_eq(nd.last, T0 + 2000 * SEC);
    /* Not registered; no timestamp. */
    ck_assert_int_eq(hs_store_update(s, 12345, HS_UPD_INSERT, dv, 26, &o),
                     -ENOENT);
    dv[0] = 0x01;
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_INSERT, dv, 10, &o),
                     -EINVAL);
    /* Deletes: a range (end exclusive) and one time. */
    ck_assert_int_eq(hs_store_delete_range(s, a, T0 + 100 * SEC,
                                           T0 + 600 * SEC, &n), 0);
    ck_assert_uint_eq(n, 500);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), 502);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, true), 502);
    ck_assert_int_eq(hs_store_delete_at(s, a, T0 + 600 * SEC, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(hs_store_delete_at(s, a, T0 + 600 * SEC, &n), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(hs_store_delete_range(s, a, 0, T0 + 1 * SEC, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(hs_store_node(s, a, &nd, NULL, 0), 0);
    ck_assert_uint_eq(nd.samples, 500);
    ck_assert_int_eq(nd.first, T0 + SEC);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), 500);
    ck_assert_int_eq(hs_store_delete_range(s, a, 0, INT64_MAX, &n), 0);
    ck_assert_uint_eq(n, 500);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), 0);
    hs_store_close(s);
}
END_TEST

START_TEST(test_retention_age)
{
    struct hs_store *s = open_store(64 << 20, 0, 3600 * SEC, false);
    uint64_t         a = node(s, "a"), n;
    struct hs_totals t;
    struct hs_node   nd;

    fill(s, a, T0, SEC, 7200, 1200, 0);
    ck_assert_int_eq(hs_store_prune(s, T0 + 7200 * SEC, &n), 0);
    /* Whole blocks older than an hour went; at most one block of the
     * first hour is left. */
    ck_assert_uint_ge(n, 3000);
    ck_assert_uint_le(n, 3600);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), 7200 - (int)n);
    ck_assert_int_eq(hs_store_totals(s, &t), 0);
    ck_assert_uint_eq(t.dropped, n);
    ck_assert_uint_eq(t.samples, 7200 - n);
    ck_assert_int_eq(hs_store_node(s, a, &nd, NULL, 0), 0);
    ck_assert_uint_eq(nd.dropped, n);
    ck_assert_int_gt(nd.first, T0);
    ck_assert_int_le(nd.first, T0 + 3600 * SEC);
    /* Nothing more to drop. */
    ck_assert_int_eq(hs_store_prune(s, T0 + 7200 * SEC, &n), 0);
    ck_assert_uint_eq(n, 0);
    hs_store_close(s);
}
END_TEST

START_TEST(test_retention_size)
{
    struct hs_store *s = open_store(64 << 20, 200000, 0, false);
    uint64_t         a = node(s, "a"), b = node(s, "b"), n;
    struct hs_totals t;
    struct hs_node   na, nb;

    /* a is older than b: a's blocks go first. */
    fill(s, a, T0, SEC, 10000, 1000, 0);
    fill(s, b, T0 + 5000 * SEC, SEC, 10000, 1000, 0);
    ck_assert_int_eq(hs_store_totals(s, &t), 0);
    ck_assert_uint_gt(t.bytes, 200000);
    ck_assert_int_eq(hs_store_prune(s, T0, &n), 0);
    ck_assert_uint_gt(n, 0);
    ck_assert_int_eq(hs_store_totals(s, &t), 0);
    ck_assert_uint_le(t.bytes, 200000);
    ck_assert_uint_eq(t.dropped, n);
    ck_assert_int_eq(hs_store_node(s, a, &na, NULL, 0), 0);
    ck_assert_int_eq(hs_store_node(s, b, &nb, NULL, 0), 0);
    /* The oldest went first: a lost all it had before b began, then the
     * two lost block by block, so their oldest are a block apart at most
     * (a block holds about 270 seconds of these). */
    ck_assert_int_gt(na.first, T0 + 4700 * SEC);
    ck_assert_int_gt(nb.first, T0 + 5000 * SEC);
    ck_assert_int_lt(llabs(na.first - nb.first), 300 * SEC);
    ck_assert_uint_eq(na.samples + nb.samples, t.samples);
    ck_assert_uint_eq(na.bytes + nb.bytes, t.bytes);
    hs_store_close(s);
}
END_TEST

START_TEST(test_map_full)
{
    struct hs_store *s = open_store(1 << 20, 0, 0, false);
    uint64_t         a = node(s, "a");
    static uint8_t   dv[1000][26];
    static struct hs_in in[1000];
    struct hs_totals t0, t1;
    int              rc = 0, i, k;

    for (i = 0; i < 1000 && rc == 0; i++) {
        for (k = 0; k < 1000; k++) {
            in[k].key = a;
            in[k].len = (uint32_t)dv_double(dv[k], k,
                                            T0 + (i * 1000 + k) * SEC);
            in[k].dv = dv[k];
        }
        ck_assert_int_eq(hs_store_totals(s, &t0), 0);
        rc = hs_store_append(s, in, 1000);
    }
    ck_assert_int_eq(rc, -ENOSPC);
    ck_assert(hs_store_full(s));
    ck_assert_ptr_nonnull(strstr(hs_store_error(s), "MDB_MAP_FULL"));
    /* Nothing of the failed batch is kept; reads go on; writes are
     * refused until cleared. */
    ck_assert_int_eq(hs_store_totals(s, &t1), 0);
    ck_assert_uint_eq(t1.samples, t0.samples);
    ck_assert_int_eq(count(s, a, 0, INT64_MAX, false), (int)t0.samples);
    ck_assert_int_eq(hs_store_append(s, in, 1), -ENOSPC);
    hs_store_full_clear(s);
    ck_assert(!hs_store_full(s));
    hs_store_close(s);
}
END_TEST

START_TEST(test_reader_beside_writer)
{
    struct hs_store *w, *r;
    uint64_t         a;
    struct hs_totals t;

    /* A reader of a store no writer has made: nothing, no error at
     * open; its reads fail until the writer made the databases. */
    w = open_store(64 << 20, 0, 0, false);
    hs_store_close(w);
    teardown();
    setup();
    {
        struct hs_store_config c = { .dir = dir, .readonly = true };
        char                   err[256];

        /* An empty directory: LMDB cannot open read-only without the
         * files. */
        r = hs_store_open(&c, err, sizeof(err));
        ck_assert_ptr_null(r);
    }
    w = open_store(64 << 20, 0, 0, false);
    r = open_store(0, 0, 0, true);
    a = node(w, "a");
    fill(w, a, T0, SEC, 100, 10, 0);
    ck_assert_int_eq(count(r, a, 0, INT64_MAX, false), 100);
    fill(w, a, T0 + 100 * SEC, SEC, 100, 10, 0);
    /* A new snapshot sees the new commits. */
    ck_assert_int_eq(count(r, a, 0, INT64_MAX, false), 200);
    ck_assert_int_eq(hs_store_totals(r, &t), 0);
    ck_assert_uint_eq(t.samples, 200);
    /* A reader cannot write. */
    {
        uint8_t      dv[26];
        struct hs_in in = { a, dv, 26 };

        dv_double(dv, 1, T0 + 1000 * SEC);
        ck_assert_int_eq(hs_store_append(r, &in, 1), -EPERM);
    }
    hs_store_close(w);
    hs_store_close(r);
    /* Reopened: all kept. */
    w = open_store(64 << 20, 0, 0, false);
    ck_assert_int_eq(count(w, a, 0, INT64_MAX, false), 200);
    hs_store_close(w);
}
END_TEST

/* mdb_reader_list's callback: count the reader lines (after its header). */
static int
reader_line(const char *msg, void *ctx)
{
    int *n = ctx;

    if (strstr(msg, "pid") == NULL && strstr(msg, "no active") == NULL)
        (*n)++;
    return 0;
}

/*
 * The reader slots in use, counted by another process (a second
 * environment handle in this one would take LMDB's exclusive lock and
 * reset the table: LMDB's caveat against opening an environment twice
 * in one process).
 */
static int
readers(void)
{
    int   fd[2], n = -1;
    pid_t pid;

    ck_assert_int_eq(pipe(fd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        MDB_env *env;
        int      k = 0;

        if (mdb_env_create(&env) != 0 || mdb_env_set_maxdbs(env, 4) != 0
            || mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0640) != 0)
            _exit(1);
        mdb_reader_list(env, reader_line, &k);
        (void)!write(fd[1], &k, sizeof(k));
        _exit(0);
    }
    ck_assert_int_eq(read(fd[0], &n, sizeof(n)), (ssize_t)sizeof(n));
    waitpid(pid, NULL, 0);
    close(fd[0]);
    close(fd[1]);
    return n;
}

START_TEST(test_dead_reader)
{
    struct hs_store *w = open_store(64 << 20, 0, 0, false);
    uint64_t         a = node(w, "a"), n;
    int              fd[2];
    char             c;
    pid_t            pid;

    fill(w, a, T0, SEC, 100, 100, 0);
    ck_assert_int_eq(pipe(fd), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* A reader that dies mid-read: its slot stays taken. */
        static struct hs_read r;
        struct hs_store      *rd = open_store(0, 0, 0, true);

        if (hs_read_begin(rd, &r) != 0)
            _exit(1);
        (void)!write(fd[1], "x", 1);
        pause();
        _exit(0);
    }
    ck_assert_int_eq(read(fd[0], &c, 1), 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(fd[0]);
    close(fd[1]);
    ck_assert_int_eq(readers(), 1);
    /* Pruning frees it (mdb_reader_check). */
    ck_assert_int_eq(hs_store_prune(w, T0, &n), 0);
    ck_assert_int_eq(readers(), 0);
    hs_store_close(w);
}
END_TEST

static int
list_cb(void *arg, uint64_t key, const struct hs_node *nd,
        const uint8_t *id, size_t len)
{
    int *n = arg;

    (void)key;
    ck_assert_uint_eq(nd->nodeid_len, len);
    ck_assert_uint_eq(id[0], 0x03);
    (*n)++;
    return 0;
}

START_TEST(test_nodes)
{
    struct hs_store *s = open_store(64 << 20, 0, 0, false);
    uint64_t         a = node(s, "a"), a2 = node(s, "a");
    uint8_t          id[16];
    struct hs_node   nd;
    int              n = 0;

    ck_assert_uint_eq(a, a2);
    node(s, "b");
    ck_assert_int_eq(hs_store_nodes(s, list_cb, &n), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(hs_store_node(s, a, &nd, id, sizeof(id)), 0);
    ck_assert_uint_eq(nd.nodeid_len, 8);
    ck_assert_uint_eq(id[7], 'a');
    ck_assert_int_eq(hs_store_node(s, 99, &nd, NULL, 0), -ENOENT);
    ck_assert_int_eq(hs_store_node_add(s, id, 0, 0, &a), -EINVAL);
    /* A value of a node not registered is rejected, the batch kept. */
    {
        uint8_t      dv[2][26];
        struct hs_in in[2] = {
            { 77, dv[0], 26 }, { a, dv[1], 26 },
        };
        struct hs_totals t;

        dv_double(dv[0], 1, T0);
        dv_double(dv[1], 1, T0);
        ck_assert_int_eq(hs_store_append(s, in, 2), 0);
        ck_assert_int_eq(hs_store_totals(s, &t), 0);
        ck_assert_uint_eq(t.rejected, 1);
        ck_assert_uint_eq(t.samples, 1);
    }
    hs_store_close(s);
}
END_TEST

/* A batch large enough for the radix sort (hs_store_order): 64 nodes'
 * values interleaved as the historian gets them, one tick after the
 * other, some out of time order; each node's read back complete and in
 * time order. */
START_TEST(test_append_large_batch)
{
    struct hs_store_config c = {
        .dir = dir, .map_bytes = 256u << 20, .batch_max = 32768,
        .nosync = true,
    };
    char             err[256], name[8];
    struct hs_store *s = hs_store_open(&c, err, sizeof(err));
    static uint8_t   dv[64 * 300][26];
    static struct hs_in in[64 * 300];
    uint64_t         key[64];
    static struct hs_read r;
    struct hs_sample smp;
    size_t           n = 0;

    ck_assert_msg(s != NULL, "open: %s", err);
    for (int k = 0; k < 64; k++) {
        snprintf(name, sizeof(name), "n%d", k);
        key[k] = node(s, name);
    }
    for (int t = 0; t < 300; t++)
        for (int k = 0; k < 64; k++, n++) {
            /* Every tenth tick of node 3 comes a tick late. */
            int tt = k == 3 && t % 10 == 1 ? t - 1 : k == 3 && t % 10 == 0
                                                           ? t + 1 : t;

            in[n].key = key[k];
            in[n].len = (uint32_t)dv_double(dv[n], k * 1000 + tt,
                                            T0 + tt * SEC);
            in[n].dv = dv[n];
        }
    ck_assert_int_eq(hs_store_append(s, in, n), 0);
    for (int k = 0; k < 64; k++) {
        int i = 0;

        ck_assert_int_eq(hs_read_begin(s, &r), 0);
        ck_assert_int_eq(hs_read_seek(&r, key[k], 0, INT64_MAX, false), 0);
        while (hs_read_next(&r, &smp) == 0) {
            ck_assert_int_eq(smp.t, T0 + i * SEC);
            ck_assert(dv_value(&smp) == k * 1000 + i);
            i++;
        }
        hs_read_end(&r);
        ck_assert_int_eq(i, 300);
    }
    hs_store_close(s);
}
END_TEST

/* Many nodes in one transaction (the historian's start): the keys of
 * one by one, a node there already kept, values of each appended. */
START_TEST(test_nodes_add_many)
{
    struct hs_store *s = open_store(64u << 20, 0, 0, false);
    uint8_t          ids[3][8];
    const uint8_t   *idp[3];
    size_t           lens[3];
    uint64_t         keys[3], a = node(s, "a");
    struct hs_totals t;

    for (int i = 0; i < 3; i++) {
        ids[i][0] = 0x03;
        ids[i][1] = 1;
        ids[i][2] = 0;
        ids[i][3] = 1;
        ids[i][4] = ids[i][5] = ids[i][6] = 0;
        ids[i][7] = (uint8_t)('a' + i);     /* "a" is there already */
        idp[i] = ids[i];
        lens[i] = 8;
    }
    ck_assert_int_eq(hs_store_nodes_add(s, idp, lens, 3, 0, keys), 0);
    ck_assert_uint_eq(keys[0], a);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(keys[i], hs_store_key(ids[i], 8));
        fill(s, keys[i], T0, 10000000, 5, 5, 1.0);
    }
    ck_assert_int_eq(hs_store_totals(s, &t), 0);
    ck_assert_uint_eq(t.nodes, 3);
    ck_assert_uint_eq(t.samples, 15);
    lens[1] = 0;
    ck_assert_int_eq(hs_store_nodes_add(s, idp, lens, 3, 0, keys), -EINVAL);
    hs_store_close(s);
}
END_TEST

/* The last committed transaction of s's environment. */
static size_t
last_txn(struct hs_store *s)
{
    MDB_envinfo info;

    ck_assert_int_eq(mdb_env_info(s->env, &info), 0);
    return info.me_last_txnid;
}

/* A restart registers its nodes again: nothing changed, nothing committed
 * (no fsync on the historian's way up); a new retention or a new node is
 * written. */
START_TEST(test_nodes_add_unchanged)
{
    struct hs_store *s = open_store(64u << 20, 0, 0, false);
    uint8_t          ids[2][8];
    const uint8_t   *idp[2];
    size_t           lens[2], txn;
    uint64_t         keys[2], key;
    struct hs_node   n;

    for (int i = 0; i < 2; i++) {
        memcpy(ids[i], "\x03\x01\x00\x01\x00\x00\x00", 7);
        ids[i][7] = (uint8_t)('p' + i);
        idp[i] = ids[i];
        lens[i] = 8;
    }
    ck_assert_int_eq(hs_store_nodes_add(s, idp, lens, 2, 0, keys), 0);
    txn = last_txn(s);
    ck_assert_int_eq(hs_store_nodes_add(s, idp, lens, 2, 0, keys), 0);
    ck_assert_uint_eq(last_txn(s), txn);
    ck_assert_uint_eq(keys[0], hs_store_key(ids[0], 8));
    ck_assert_uint_eq(keys[1], hs_store_key(ids[1], 8));
    ck_assert_int_eq(hs_store_node_add(s, ids[1], 8, 0, &key), 0);
    ck_assert_uint_eq(key, keys[1]);
    ck_assert_uint_eq(last_txn(s), txn);
    /* A new retention is written, by either call. */
    ck_assert_int_eq(hs_store_nodes_add(s, idp, lens, 2, 5, keys), 0);
    ck_assert_uint_eq(last_txn(s), txn + 1);
    ck_assert_int_eq(hs_store_node(s, keys[0], &n, NULL, 0), 0);
    ck_assert_int_eq(n.retention, 5);
    ck_assert_int_eq(hs_store_node_add(s, ids[1], 8, 7, &key), 0);
    ck_assert_uint_eq(last_txn(s), txn + 2);
    ck_assert_int_eq(hs_store_node(s, keys[1], &n, NULL, 0), 0);
    ck_assert_int_eq(n.retention, 7);
    /* A new node among known ones: one commit. */
    ids[1][7] = 'z';
    ck_assert_int_eq(hs_store_nodes_add(s, idp, lens, 2, 5, keys), 0);
    ck_assert_uint_eq(last_txn(s), txn + 3);
    ck_assert_int_eq(hs_store_node(s, keys[1], &n, NULL, 0), 0);
    hs_store_close(s);
}
END_TEST

static Suite *
store_suite(void)
{
    Suite *s = suite_create("hist/store");
    TCase *tc = tcase_create("store");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_append_read);
    tcase_add_test(tc, test_nodes_add_many);
    tcase_add_test(tc, test_nodes_add_unchanged);
    tcase_add_test(tc, test_append_large_batch);
    tcase_add_test(tc, test_bytes_per_sample);
    tcase_add_test(tc, test_out_of_order);
    tcase_add_test(tc, test_update);
    tcase_add_test(tc, test_retention_age);
    tcase_add_test(tc, test_retention_size);
    tcase_add_test(tc, test_map_full);
    tcase_add_test(tc, test_reader_beside_writer);
    tcase_add_test(tc, test_nodes);
    tcase_add_test(tc, test_dead_reader);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(store_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
