/*
 * tests/bench/bench_histevent.c: event history in the store (hist/events.h)
 * alone, figures of docs/benchmarks.md "Event history (issue 18)":
 *
 *   record   events/s of hs_events_append() in the historian's batches
 *            (4,096 events of 8 fields, 236 bytes each as the broker
 *            encodes a feed event, every second one also filed under a
 *            notifier), with and without fsync per commit, and the process
 *            CPU per event;
 *   bytes    bytes per event after that, and data.mdb's size per event;
 *   read     10,000 events of the Server read back oldest first, each
 *            record parsed (shm/fanout.h's walk is the worker's next step:
 *            here the record's bytes summed, the store's part): CPU ns per
 *            event, median of 21 runs; the same through a notifier's
 *            entries.
 *
 *   bench_histevent [DIR]    DIR: where the stores go (default /tmp)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hist/events.h"
#include "hist/store.h"
#include "tests/bench/benchlib.h"

#define BE_SEC     10000000ll
#define BE_T0      134100000000000000ll
#define BE_BATCH   4096
#define BE_REC     236
#define BE_NOTIF   0x5151515151515151ull

static uint8_t         be_rec[BE_BATCH][BE_REC];
static struct hs_ev_in be_in[BE_BATCH];

static uint64_t
be_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
be_rmdir(const char *dir)
{
    char p[512];

    snprintf(p, sizeof(p), "%s/data.mdb", dir);
    unlink(p);
    snprintf(p, sizeof(p), "%s/lock.mdb", dir);
    unlink(p);
    rmdir(dir);
}

static struct hs_store *
be_open(const char *dir, bool sync)
{
    struct hs_store_config c = {
        .dir = dir, .map_bytes = 4ull << 30, .nosync = !sync,
    };
    char             err[256];
    struct hs_store *s;

    mkdir(dir, 0700);
    s = hs_store_open(&c, err, sizeof(err));
    if (s == NULL) {
        fprintf(stderr, "bench_histevent: %s\n", err);
        exit(1);
    }
    return s;
}

/* Append total events one second apart from BE_T0; the events/s. */
static double
be_record(struct hs_events *e, uint64_t total, double *cpu_ns_per)
{
    static const uint64_t notif = BE_NOTIF;
    uint64_t              done = 0, t0 = benchlib_now(), c0 = be_cpu_ns();

    while (done < total) {
        uint32_t k;

        for (k = 0; k < BE_BATCH && done + k < total; k++) {
            uint64_t i = done + k;

            memcpy(be_rec[k] + 16, &i, 8);      /* inside the EventId */
            be_in[k].time = BE_T0 + (int64_t)i * BE_SEC;
            be_in[k].id = hs_events_id(be_rec[k] + 16, 16);
            be_in[k].rec = be_rec[k];
            be_in[k].len = BE_REC;
            be_in[k].notifiers = &notif;
            be_in[k].nnotifiers = i % 2;
        }
        if (hs_events_append(e, be_in, k) != 0) {
            fprintf(stderr, "bench_histevent: append failed\n");
            exit(1);
        }
        done += k;
    }
    *cpu_ns_per = (double)(be_cpu_ns() - c0) / (double)total;
    return (double)total * 1e9 / (double)(benchlib_now() - t0);
}

/* Read n events of notifier from the start: CPU ns per event. */
static double
be_read(struct hs_events *e, uint64_t notifier, int n)
{
    static struct hs_evread r;
    struct hs_event         ev;
    uint64_t                c0 = be_cpu_ns(), sum = 0;
    int                     got = 0;

    hs_evread_begin(e, &r);
    hs_evread_seek(&r, notifier, BE_T0, INT64_MAX, false, false, 0, 0);
    while (got < n && hs_evread_next(&r, &ev) == 0) {
        sum += ev.rec[ev.len - 1] + ev.len;
        got++;
    }
    hs_evread_end(&r);
    if (got != n || sum == 0) {
        fprintf(stderr, "bench_histevent: read %d of %d\n", got, n);
        exit(1);
    }
    return (double)(be_cpu_ns() - c0) / n;
}

int
main(int argc, char **argv)
{
    const char       *base = argc > 1 ? argv[1] : "/tmp";
    char              dir[400], date[64], machine[128];
    double            rate, cpu, v[21];
    uint64_t          total = 1000000;
    struct hs_store  *s;
    struct hs_events *e;
    char              err[256];

    benchlib_stamp(date, sizeof(date), machine, sizeof(machine));
    printf("bench_histevent %s on %s\n", date, machine);
    for (int i = 0; i < BE_BATCH; i++)
        for (int k = 0; k < BE_REC; k++)
            be_rec[i][k] = (uint8_t)(k * 7 + 1);
    for (int sync = 0; sync < 2; sync++) {
        snprintf(dir, sizeof(dir), "%s/bench_histevent.%d", base,
                 (int)getpid());
        be_rmdir(dir);
        s = be_open(dir, sync != 0);
        e = hs_events_open(s, err, sizeof(err));
        if (e == NULL) {
            fprintf(stderr, "bench_histevent: %s\n", err);
            return 1;
        }
        rate = be_record(e, sync ? total / 4 : total, &cpu);
        printf("record, batches of %d, %s: %.2f M events/s, %.0f ns CPU "
               "per event\n", BE_BATCH, sync ? "fsync" : "no fsync",
               rate / 1e6, cpu);
        if (!sync) {
            struct hs_ev_totals t;

            hs_events_totals(e, &t);
            printf("bytes: %.1f per event of %d record bytes (keys and "
                   "values), %.1f on disk (data.mdb)\n",
                   (double)t.bytes / (double)t.events, BE_REC,
                   (double)hs_store_file_bytes(s) / (double)t.events);
            for (int i = 0; i < 21; i++)
                v[i] = be_read(e, HS_EV_ALL, 10000);
            printf("read 10,000 events of the Server: %.1f ns CPU per "
                   "event (median of 21)\n", benchlib_median(v, 21));
            for (int i = 0; i < 21; i++)
                v[i] = be_read(e, BE_NOTIF, 10000);
            printf("read 10,000 events of a notifier (its entries, each "
                   "event looked up): %.1f ns CPU per event (median of "
                   "21)\n", benchlib_median(v, 21));
        }
        hs_events_close(e);
        hs_store_close(s);
        be_rmdir(dir);
    }
    return 0;
}
