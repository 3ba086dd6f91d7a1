/*
 * tests/bench/bench_histmod.c: the cost of keeping modified values
 * (hist/modified.h) in the history store alone, the figures of
 * docs/benchmarks.md "History: modified values and annotations
 * (issue 18)":
 *
 *   update   HistoryUpdate Replace of one value (its own write
 *            transaction, as the historian applies one): hs_store_update
 *            (nothing kept) against hs_modified_update (the old value
 *            kept with its ModificationInfo), wall and CPU per replace,
 *            no fsync and with an fsync per commit;
 *   bytes    what a kept modification costs on disk: the side database's
 *            pages in use / entries, and the entry's own bytes (key and
 *            value) for a Double replaced by a user of 8 characters;
 *   read     a read with isReadModified of 10,000 modified values of one
 *            node, each written back as its DataValue (what a response
 *            copies) with its ModificationInfo's fields: CPU ns per
 *            value, median of 21; beside it the raw read of 10,000
 *            values of the same node.
 *
 *   bench_histmod [DIR]      DIR: where the store goes (default /tmp)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hist/modified.h"
#include "hist/side.h"
#include "hist/store.h"
#include "tests/bench/benchlib.h"

#define BM_SEC     10000000ll
#define BM_T0      133000000000000000ll
#define BM_DAY     86400
#define BM_UPDATES 10000
#define BM_SYNCED  300
#define BM_READ    10000

static struct hs_read bm_r;
static uint8_t        bm_dv[BM_DAY][26];
static struct hs_in   bm_in[BM_DAY];

static uint64_t
bm_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
bm_dv_double(uint8_t *b, double d, int64_t t)
{
    b[0] = 0x0D;
    b[1] = 11;
    memcpy(b + 2, &d, 8);
    for (int i = 0; i < 8; i++)
        b[10 + i] = b[18 + i] = (uint8_t)((uint64_t)t >> (8 * i));
}

static void
bm_rmdir(const char *dir)
{
    char p[512];

    snprintf(p, sizeof(p), "%s/data.mdb", dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/lock.mdb", dir);
    unlink(p);
    rmdir(dir);
}

/* A fresh store with one node holding a day of 1 s Doubles. */
static struct hs_store *
bm_store(const char *dir, bool sync, uint64_t *key)
{
    struct hs_store_config c = {
        .dir = dir, .map_bytes = 1ull << 30, .nosync = !sync,
        .batch_max = BM_DAY,
    };
    uint8_t          id[7] = { 0x02, 1, 0, 1, 0, 0, 0 };
    char             err[256];
    struct hs_store *s;

    bm_rmdir(dir);
    mkdir(dir, 0700);
    s = hs_store_open(&c, err, sizeof(err));
    if (s == NULL || hs_store_node_add(s, id, sizeof(id), 0, key) != 0) {
        fprintf(stderr, "bench_histmod: %s\n", s ? hs_store_error(s) : err);
        exit(1);
    }
    for (int i = 0; i < BM_DAY; i++) {
        bm_dv_double(bm_dv[i], i, BM_T0 + i * BM_SEC);
        bm_in[i].key = *key;
        bm_in[i].dv = bm_dv[i];
        bm_in[i].len = 26;
    }
    if (hs_store_append(s, bm_in, BM_DAY) != 0) {
        fprintf(stderr, "bench_histmod: %s\n", hs_store_error(s));
        exit(1);
    }
    return s;
}

/* n replaces at pseudo-random seconds of the day, kept or not: wall and
 * CPU ns per replace. */
static void
bm_replaces(struct hs_store *s, uint64_t key, int n, bool keep,
            double *wall, double *cpu)
{
    struct hs_mod_who who = { BM_T0 + 2 * BM_DAY * BM_SEC, "engineer", 8 };
    enum hs_outcome   out;
    uint64_t          t0 = benchlib_now(), c0 = bm_cpu_ns();
    uint32_t          x = 12345;
    uint8_t           dv[26];

    for (int i = 0; i < n; i++) {
        int rc;

        x = x * 1103515245u + 12345u;
        bm_dv_double(dv, -i, BM_T0 + (int64_t)((x >> 8) % BM_DAY) * BM_SEC);
        rc = keep ? hs_modified_update(s, key, HS_UPD_REPLACE, dv, 26, &who,
                                       &out)
                  : hs_store_update(s, key, HS_UPD_REPLACE, dv, 26, &out);
        if (rc != 0 || out != HS_REPLACED) {
            fprintf(stderr, "bench_histmod: replace %d: %d\n", i, rc);
            exit(1);
        }
    }
    *wall = (double)(benchlib_now() - t0) / n;
    *cpu = (double)(bm_cpu_ns() - c0) / n;
}

/* A read of every modified value (or raw value: raw) of the first max,
 * written back: values, CPU ns. */
static uint64_t
bm_read(struct hs_store *s, uint64_t key, bool raw, uint64_t *ns)
{
    static uint8_t      out[1 << 20];
    struct hs_side_read m;
    struct hs_sample    smp;
    struct hs_mod_info  mi;
    uint64_t            c0 = bm_cpu_ns(), n = 0, sum = 0;
    size_t              at = 0;
    int                 rc;

    hs_read_begin(s, &bm_r);
    if (raw)
        hs_read_seek(&bm_r, key, BM_T0, INT64_MAX, false);
    else
        hs_modified_seek(&m, &bm_r, key, BM_T0, INT64_MAX, false);
    while (n < BM_READ) {
        rc = raw ? hs_read_next(&bm_r, &smp)
                 : hs_modified_next(&m, &smp, &mi);
        if (rc != 0)
            break;
        at += hs_sample_dv_write(&smp, HS_TS_BOTH, out + at,
                                 sizeof(out) - at);
        if (at + 64 > sizeof(out))
            at = 0;
        if (!raw)
            sum += (uint64_t)mi.time + mi.type + mi.user_len;
        n++;
    }
    hs_read_end(&bm_r);
    *ns = bm_cpu_ns() - c0;
    if (sum == 1)
        printf("-");
    return n;
}

int
main(int argc, char **argv)
{
    const char      *base = argc > 1 ? argv[1] : "/tmp";
    char             dir[400];
    struct hs_store *s;
    uint64_t         key, entries, bytes, ns, n;
    double           wall, cpu, v[21];

    snprintf(dir, sizeof(dir), "%s/bench_histmod.%d", base, (int)getpid());
    for (int sync = 0; sync <= 1; sync++) {
        int nup = sync ? BM_SYNCED : BM_UPDATES;

        for (int keep = 0; keep <= 1; keep++) {
            s = bm_store(dir, sync, &key);
            bm_replaces(s, key, nup, keep, &wall, &cpu);
            printf("replace, %s, %s: %.1f us wall, %.1f us CPU per "
                   "update (%d)\n", sync ? "fsync" : "no fsync",
                   keep ? "old value kept" : "nothing kept", wall / 1e3,
                   cpu / 1e3, nup);
            if (keep && !sync) {
                if (hs_side_stat(s, HS_SIDE_MODIFIED, &entries, &bytes)
                    != 0) {
                    fprintf(stderr, "bench_histmod: stat\n");
                    return 1;
                }
                struct hs_sample smp;

                (void)hs_sample_split(bm_dv[0], 26, &smp);
                printf("modified values: %" PRIu64 " entries, %.1f bytes "
                       "each in pages; an entry's own bytes: key 24, value "
                       "%zu\n", entries, (double)bytes / (double)entries,
                       (size_t)2 + 8 + hs_sample_packed_size(&smp, smp.t));
                for (int i = 0; i < 21; i++) {
                    n = bm_read(s, key, false, &ns);
                    v[i] = (double)ns / (double)n;
                }
                printf("isReadModified read of %" PRIu64 " modified "
                       "values: %.1f ns CPU per value (median of 21)\n", n,
                       benchlib_median(v, 21));
                for (int i = 0; i < 21; i++) {
                    n = bm_read(s, key, true, &ns);
                    v[i] = (double)ns / (double)n;
                }
                printf("raw read of %" PRIu64 " values, the same node: "
                       "%.1f ns CPU per value (median of 21)\n", n,
                       benchlib_median(v, 21));
            }
            hs_store_close(s);
            bm_rmdir(dir);
        }
    }
    return 0;
}
