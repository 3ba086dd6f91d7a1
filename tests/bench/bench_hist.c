/*
 * tests/bench/bench_hist.c: the history store (hist/) alone, the figures
 * of docs/benchmarks.md "History (issue 18)":
 *
 *   ingest     values/s of hs_store_append() in the historian's batches
 *              (65,536 values, 1,000 Double variables each changing
 *              every 100 ms), with and without fsync per commit, and the
 *              process CPU per value;
 *   bytes      bytes per sample on disk after the ingest (LMDB's pages
 *              in use / values);
 *   raw        HistoryRead raw of 10,000 values of one node: every value
 *              written back as its DataValue (what a response copies):
 *              CPU ns per value, median of 21 runs;
 *   average    a day of 1 s values of one node read and averaged per
 *              hour (24 intervals; what ReadProcessed Average needs
 *              from the store): CPU ms, median of 11 runs;
 *   open       start-up with a store of at least 1 GiB: hs_store_open()
 *              (mdb_reader_check included) and the first read, ms.
 *
 *   bench_hist [DIR [GiB]]    DIR: where the stores go (default /tmp);
 *                             GiB: the big store's size (default 1)
 */
#include <errno.h>
#include <inttypes.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hist/store.h"
#include "tests/bench/benchlib.h"

#define BH_SEC     10000000ll
#define BH_T0      133000000000000000ll
#define BH_BATCH   65536
#define BH_NODES   1000

static uint8_t      bh_dv[BH_BATCH][26];
static struct hs_in bh_in[BH_BATCH];
static struct hs_read bh_r;

static uint64_t
bh_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
bh_le64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static void
bh_dv_double(uint8_t *b, double d, int64_t t)
{
    b[0] = 0x0D;
    b[1] = 11;
    memcpy(b + 2, &d, 8);
    bh_le64(b + 10, t);
    bh_le64(b + 18, t);
}

static void
bh_rmdir(const char *dir)
{
    char p[512];

    snprintf(p, sizeof(p), "%s/data.mdb", dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/lock.mdb", dir);
    unlink(p);
    rmdir(dir);
}

static struct hs_store *
bh_open(const char *dir, uint64_t map, bool sync, bool ro)
{
    struct hs_store_config c = {
        .dir = dir, .map_bytes = map, .nosync = !sync, .readonly = ro,
        .batch_max = BH_BATCH,
    };
    char             err[256];
    struct hs_store *s;

    mkdir(dir, 0700);
    s = hs_store_open(&c, err, sizeof(err));
    if (s == NULL) {
        fprintf(stderr, "bench_hist: %s\n", err);
        exit(1);
    }
    return s;
}

static void
bh_nodes(struct hs_store *s, uint64_t *key, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t id[16] = { 0x02, 1, 0 };
        size_t  len = 7;

        memcpy(id + 3, &i, 4);
        if (hs_store_node_add(s, id, len, 0, &key[i]) != 0) {
            fprintf(stderr, "bench_hist: node_add\n");
            exit(1);
        }
    }
}

/*
 * Append total values over n nodes, one batch of BH_BATCH at a time, the
 * nodes round robin, each node's times step apart.  The values/s.
 */
static double
bh_ingest(struct hs_store *s, const uint64_t *key, int n, uint64_t total,
          int64_t step, double *cpu_ns_per)
{
    uint64_t done = 0, t0 = benchlib_now(), c0 = bh_cpu_ns();
    int64_t  tick = 0;

    while (done < total) {
        uint32_t k;

        for (k = 0; k < BH_BATCH && done < total; k++, done++) {
            int node = (int)(done % (uint64_t)n);

            if (node == 0)
                tick++;
            bh_dv_double(bh_dv[k], (double)done, BH_T0 + tick * step);
            bh_in[k].key = key[node];
            bh_in[k].dv = bh_dv[k];
            bh_in[k].len = 26;
        }
        if (hs_store_append(s, bh_in, k) != 0) {
            fprintf(stderr, "bench_hist: append: %s\n", hs_store_error(s));
            exit(1);
        }
    }
    *cpu_ns_per = (double)(bh_cpu_ns() - c0) / (double)total;
    return (double)total / ((double)(benchlib_now() - t0) / 1e9);
}

static double
bh_disk_bytes(const char *dir, uint64_t values)
{
    MDB_env    *env;
    MDB_envinfo info;
    MDB_stat    st;
    double      b;

    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 4);
    if (mdb_env_open(env, dir, MDB_RDONLY, 0640) != 0)
        return 0;
    mdb_env_info(env, &info);
    mdb_env_stat(env, &st);
    b = (double)(info.me_last_pgno + 1) * st.ms_psize / (double)values;
    mdb_env_close(env);
    return b;
}

/* Read node key's values lo..hi written back as DataValues: count, and
 * the CPU ns it took. */
static uint64_t
bh_read_raw(struct hs_store *s, uint64_t key, int64_t lo, int64_t hi,
            uint64_t *ns)
{
    static uint8_t   out[1 << 20];
    struct hs_sample smp;
    uint64_t         c0 = bh_cpu_ns(), n = 0;
    size_t           at = 0;

    hs_read_begin(s, &bh_r);
    hs_read_seek(&bh_r, key, lo, hi, false);
    while (hs_read_next(&bh_r, &smp) == 0) {
        size_t w = hs_sample_dv_write(&smp, HS_TS_BOTH, out + at,
                                      sizeof(out) - at);

        at = at + w + 64 > sizeof(out) ? 0 : at + w;
        n++;
    }
    hs_read_end(&bh_r);
    *ns = bh_cpu_ns() - c0;
    return n;
}

/* A day read and averaged per hour: the CPU ns. */
static uint64_t
bh_average(struct hs_store *s, uint64_t key, double *avg)
{
    struct hs_sample smp;
    uint64_t         c0 = bh_cpu_ns();
    double           sum[24] = { 0 };
    uint32_t         cnt[24] = { 0 };

    hs_read_begin(s, &bh_r);
    hs_read_seek(&bh_r, key, BH_T0, BH_T0 + 86400 * BH_SEC - 1, false);
    while (hs_read_next(&bh_r, &smp) == 0) {
        int    h = (int)((smp.t - BH_T0) / (3600 * BH_SEC));
        double d;

        if (h < 0 || h > 23 || smp.body_len < 10 || smp.body[1] != 11)
            continue;
        memcpy(&d, smp.body + 2, 8);
        sum[h] += d;
        cnt[h]++;
    }
    hs_read_end(&bh_r);
    for (int h = 0; h < 24; h++)
        avg[h] = cnt[h] ? sum[h] / cnt[h] : 0;
    return bh_cpu_ns() - c0;
}

int
main(int argc, char **argv)
{
    const char      *base = argc > 1 ? argv[1] : "/tmp";
    double           gib = argc > 2 ? atof(argv[2]) : 1.0;
    static uint64_t  key[BH_NODES];
    char             dir[400];
    struct hs_store *s;
    double           rate, cpu, bytes, v[21], avg[24];
    uint64_t         ns, n;

    /* Ingest without and with fsync, 1,000 nodes. */
    for (int sync = 0; sync <= 1; sync++) {
        snprintf(dir, sizeof(dir), "%s/bench_hist.%d", base, (int)getpid());
        bh_rmdir(dir);
        s = bh_open(dir, 8ull << 30, sync, false);
        bh_nodes(s, key, BH_NODES);
        rate = bh_ingest(s, key, BH_NODES, sync ? 5000000 : 20000000,
                         BH_SEC / 10, &cpu);
        printf("ingest, %s: %.0f values/s, %.0f ns CPU per value\n",
               sync ? "fsync per commit" : "no fsync", rate, cpu);
        if (!sync) {
            hs_store_close(s);
            bytes = bh_disk_bytes(dir, 20000000);
            printf("bytes per sample on disk (1,000 Doubles, 20M values): "
                   "%.2f\n", bytes);
            s = NULL;
        }
        hs_store_close(s);
        bh_rmdir(dir);
    }

    /* One node, a day of 1 s values: raw reads and the hourly average. */
    snprintf(dir, sizeof(dir), "%s/bench_hist.%d", base, (int)getpid());
    bh_rmdir(dir);
    s = bh_open(dir, 1ull << 30, false, false);
    bh_nodes(s, key, 1);
    bh_ingest(s, key, 1, 86400, BH_SEC, &cpu);
    for (int i = 0; i < 21; i++) {
        n = bh_read_raw(s, key[0], BH_T0 + 3600 * BH_SEC,
                        BH_T0 + (3600 + 9999) * BH_SEC, &ns);
        v[i] = (double)ns / (double)n;
    }
    printf("HistoryRead raw of %" PRIu64 " values: %.1f ns CPU per value "
           "(median of 21)\n", n, benchlib_median(v, 21));
    for (int i = 0; i < 11; i++)
        v[i] = (double)bh_average(s, key[0], avg) / 1e6;
    printf("a day of 1 s values averaged per hour: %.2f ms CPU (median of "
           "11; hour 0 = %.1f)\n", benchlib_median(v, 11), avg[0]);
    hs_store_close(s);
    bh_rmdir(dir);

    /* Start-up with a big store. */
    if (gib > 0) {
        uint64_t t0, total = (uint64_t)(gib * (1ull << 30) / 15.6);
        struct hs_totals t;
        struct stat      st;
        char             p[512];

        snprintf(dir, sizeof(dir), "%s/bench_hist.%d", base, (int)getpid());
        bh_rmdir(dir);
        s = bh_open(dir, (uint64_t)(gib * 3) << 30, false, false);
        bh_nodes(s, key, BH_NODES);
        bh_ingest(s, key, BH_NODES, total, BH_SEC, &cpu);
        hs_store_close(s);
        snprintf(p, sizeof(p), "%s/data.mdb", dir);
        stat(p, &st);
        for (int i = 0; i < 5; i++) {
            t0 = benchlib_now();
            s = bh_open(dir, 0, false, true);
            hs_store_totals(s, &t);
            bh_read_raw(s, key[7], BH_T0, BH_T0 + 10 * BH_SEC, &ns);
            v[i] = (double)(benchlib_now() - t0) / 1e6;
            hs_store_close(s);
        }
        printf("start-up with a %.2f GiB store (%" PRIu64 " values): "
               "open + first read %.2f ms (median of 5)\n",
               (double)st.st_size / (1 << 30), t.samples,
               benchlib_median(v, 5));
        bh_rmdir(dir);
    }
    return 0;
}
