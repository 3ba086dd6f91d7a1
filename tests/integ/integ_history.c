/*
 * tests/integ/integ_history.c: the historian and the history store
 * (issue 18) through the whole server, on loopback.
 *
 *   1. `uabroker -t`: history.map_mb under twice history.max_mb refused
 *      (exit 2, the message names the key); history.nodes naming no
 *      variable refused at start (exit 2, the NodeId named);
 *   2. starts `uabroker -w 1` with a 10 ms simulation tick and
 *      history.nodes = v0 (a simulated Demo.Vars variable); the historian
 *      runs beside the worker;
 *   3. `uabroker history export` (no server needed, a read-only reader
 *      beside the writer) of Demo.Simulation.Counter: every tick kept, in
 *      order, each value the last + 1, source times increasing; v0 is
 *      historized too (`history list`); /stats "history" and /metrics
 *      count what was stored;
 *   4. kill -9 of the historian under load: it is respawned, the values
 *      committed before the kill are all still there (the earlier export
 *      is a prefix of the later one) and new ones follow;
 *   5. SIGTERM, a new broker on the same runtime directory: the history
 *      is still there and grows (the earlier export a prefix again);
 *   6. history.enabled = false: no historian, the store left alone.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_history: N passed, M
 * failed"; exits non-zero on any failure.  The brokers' process groups
 * are killed on every way out; the log is printed on failure.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/itest.h"

#define IH_WATCHDOG_S   120
#define IH_START_MS     30000
#define IH_CSV_MAX      (8u << 20)

static char ih_dir[PATH_MAX];
static char ih_log[PATH_MAX + 16];
static char ih_bin[PATH_MAX];

/* `uabroker ARGS...` run to its end: exit status, its output in out. */
static int
ih_run(char *out, size_t cap, const char *const *args)
{
    char        log[PATH_MAX + 16];
    char       *av[24];
    size_t      len = 0, k = 0;
    static int  runs;
    int         st;
    pid_t       pid;

    av[k++] = ih_bin;
    for (; args[k - 1] != NULL && k < 23; k++)
        av[k] = (char *)args[k - 1];
    av[k] = NULL;
    snprintf(log, sizeof(log), "%s/run-%d.out", ih_dir, runs++);
    pid = itest_spawn(log, av);
    st = itest_wait(pid);
    out[0] = '\0';
    if (itest_read_file(log, (uint8_t *)out, cap, &len) == 0)
        out[len] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The export of one node's history (CSV) into out: exit status. */
static int
ih_export(const char *node, char *out, size_t cap)
{
    const char *const a[] = { "--runtime-dir", ih_dir, "history", "export",
                              node, NULL };

    return ih_run(out, cap, a);
}

/*
 * Counter rows of an export: *n rows, every value the last + 1 and source
 * times increasing (*gaps counts the rows that are not), the last value.
 */
static void
ih_counter_rows(const char *csv, unsigned *n, unsigned *gaps,
                long *first, long *last)
{
    const char *p = strchr(csv, '\n');
    char        prev_t[256] = "";
    long        prev = -1;

    *n = *gaps = 0;
    *first = *last = -1;
    while (p != NULL && p[1] != '\0') {
        const char *line = p + 1, *nl = strchr(line, '\n');
        char        row[256], *c1, *c3;
        size_t      len = nl != NULL ? (size_t)(nl - line) : strlen(line);
        long        v;

        p = nl;
        if (len >= sizeof(row))
            break;
        memcpy(row, line, len);
        row[len] = '\0';
        if ((c1 = strchr(row, ',')) == NULL
            || (c3 = strrchr(row, ',')) == NULL)
            break;
        *c1 = '\0';
        v = strtol(c3 + 1, NULL, 10);
        if (*n == 0)
            *first = v;
        else if (v != prev + 1 || strcmp(prev_t, row) >= 0)
            (*gaps)++;
        snprintf(prev_t, sizeof(prev_t), "%s", row);
        prev = v;
        (*n)++;
    }
    *last = prev;
}

/* The pid of broker's child uahistorian, 0 when none. */
static pid_t
ih_historian(pid_t broker)
{
    DIR           *d = opendir("/proc");
    struct dirent *e;
    pid_t          found = 0;

    if (d == NULL)
        return 0;
    while (found == 0 && (e = readdir(d)) != NULL) {
        char  path[300], buf[512];
        FILE *f;
        int   pid, ppid;
        char  comm[64];

        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(buf, sizeof(buf), f) != NULL
            && sscanf(buf, "%d (%63[^)]) %*c %d", &pid, comm, &ppid) == 3
            && ppid == broker && strcmp(comm, "uahistorian") == 0)
            found = pid;
        fclose(f);
    }
    closedir(d);
    return found;
}

int
main(int argc, char **argv)
{
    static char out[IH_CSV_MAX], before[IH_CSV_MAX];
    const char *const extra[] = {
        "--vars", "10",
        "--set", "addrspace.simulation_vars=1",
        "--set", "addrspace.simulation_interval_ms=10",
        "--set", "history.nodes=ns=1;s=v0",
        "--set", "history.flush_ms=20", NULL
    };
    uint16_t    port, sport;
    unsigned    n, gaps, n2, gaps2;
    long        first, last, first2, last2;
    pid_t       broker, hist, hist2;
    int         rc;

    (void)argc;
    itest_init("integ_history");
    itest_broker_bin(argv[0], ih_bin, sizeof(ih_bin));
    itest_guard(IH_WATCHDOG_S, ih_log);
    itest_tmpdir("uabroker-hist", ih_dir, sizeof(ih_dir));
    snprintf(ih_log, sizeof(ih_log), "%s/broker.log", ih_dir);

    /* 1. Configuration refused. */
    {
        const char *const a[] = { "-t", "--runtime-dir", ih_dir, "--set",
                                  "history.max_mb=100", "--set",
                                  "history.map_mb=150", NULL };

        rc = ih_run(out, sizeof(out), a);
        itest_check(rc == 2 && strstr(out, "history.map_mb") != NULL,
                    "-t: map_mb 150 with max_mb 100 refused (exit %d): %s",
                    rc, out);
    }
    {
        const char *const a[] = { "-w", "1", "--runtime-dir", ih_dir,
                                  "--set", "history.nodes=ns=1;s=nosuch",
                                  "-p", "1", "--stats", "127.0.0.1:1",
                                  NULL };

        rc = ih_run(out, sizeof(out), a);
        itest_check(rc == 2 && strstr(out, "ns=1;s=nosuch") != NULL,
                    "history.nodes naming no variable: exit %d: %s", rc,
                    out);
    }

    /* 2. The broker and its historian. */
    broker = itest_broker_start(ih_bin, 1, ih_dir, ih_log, extra,
                                IH_START_MS, &port, &sport);
    itest_sleep_ms(1000);
    hist = ih_historian(broker);
    itest_check(hist > 0, "the historian runs beside the worker (pid %d)",
                (int)hist);

    /* 3. Every tick, in order. */
    rc = ih_export("ns=1;s=Demo.Simulation.Counter", out, sizeof(out));
    ih_counter_rows(out, &n, &gaps, &first, &last);
    printf("# Counter: %u rows, %ld .. %ld, %u gaps\n", n, first, last,
           gaps);
    itest_check(rc == 0 && n > 20, "history export of the Counter: exit "
                "%d, %u values in a second of 10 ms ticks", rc, n);
    itest_check(gaps == 0, "every tick kept in order: each value the "
                "last + 1, source times increasing (%u not)", gaps);
    {
        const char *const a[] = { "--runtime-dir", ih_dir, "history",
                                  "list", NULL };

        rc = ih_run(out, sizeof(out), a);
        itest_check(rc == 0 && strstr(out, "ns=1;s=v0 values=") != NULL
                        && strstr(out, "ns=1;s=Demo.Simulation.Sine "
                                       "values=") != NULL,
                    "history list: v0 (history.nodes) and the Simulation "
                    "variables: %s", out);
    }

    /* /stats and /metrics say it too. */
    {
        char    *body = NULL;
        uint64_t up = 0, nodes = 0, stored = 0, values = 0, full = 1;
        const char *hs;

        bool     ok;

        rc = itest_http(sport, "GET", "/stats", &body);
        hs = body != NULL ? itest_json_find(body, "history") : NULL;
        ok = rc == 200 && hs != NULL && itest_json_u64(hs, "up", &up)
             && itest_json_u64(hs, "nodes", &nodes)
             && itest_json_u64(hs, "values_stored", &stored)
             && itest_json_u64(hs, "values", &values)
             && itest_json_u64(hs, "full", &full);
        itest_check(ok && up == 1 && nodes == 5 && stored > 100
                        && values >= stored && full == 0,
                    "/stats history: up %llu, nodes %llu, values_stored "
                    "%llu, values %llu, full %llu",
                    (unsigned long long)up, (unsigned long long)nodes,
                    (unsigned long long)stored, (unsigned long long)values,
                    (unsigned long long)full);
        free(body);
        body = NULL;
        rc = itest_http(sport, "GET", "/metrics", &body);
        itest_check(rc == 200 && body != NULL
                        && strstr(body, "uabroker_history_values_stored_total")
                               != NULL,
                    "/metrics has uabroker_history_values_stored_total");
        free(body);
    }

    /* 4. kill -9 of the historian under load. */
    rc = ih_export("ns=1;s=Demo.Simulation.Counter", before,
                   sizeof(before));
    if (hist > 0)
        kill(hist, SIGKILL);
    itest_sleep_ms(1500);
    hist2 = ih_historian(broker);
    itest_check(hist2 > 0 && hist2 != hist, "the historian is respawned "
                "(pid %d -> %d)", (int)hist, (int)hist2);
    rc = ih_export("ns=1;s=Demo.Simulation.Counter", out, sizeof(out));
    ih_counter_rows(out, &n2, &gaps2, &first2, &last2);
    printf("# after kill -9: %u rows, %ld .. %ld, %u gaps\n", n2, first2,
           last2, gaps2);
    itest_check(strncmp(out, before, strlen(before)) == 0,
                "nothing committed before the kill is lost (%zu bytes "
                "of export before are a prefix of the export after)",
                strlen(before));
    itest_check(n2 > n + 20 && gaps2 <= 1, "values go on after the "
                "respawn: %u -> %u, one gap at most (%u)", n, n2, gaps2);

    /* 5. A restart keeps the history. */
    itest_check(itest_stop(broker, 5000) == 0,
                "SIGTERM: the broker exits 0");
    rc = ih_export("ns=1;s=Demo.Simulation.Counter", before,
                   sizeof(before));
    broker = itest_broker_start(ih_bin, 1, ih_dir, ih_log, extra,
                                IH_START_MS, &port, &sport);
    itest_sleep_ms(800);
    rc = ih_export("ns=1;s=Demo.Simulation.Counter", out, sizeof(out));
    ih_counter_rows(out, &n, &gaps, &first, &last);
    itest_check(rc == 0 && strncmp(out, before, strlen(before)) == 0
                    && strlen(out) > strlen(before),
                "after a restart the history is still there and grows "
                "(%zu -> %zu bytes)", strlen(before), strlen(out));
    itest_check(itest_stop(broker, 5000) == 0,
                "SIGTERM: the broker exits 0");

    /* 6. No history. */
    {
        const char *const off[] = { "--set", "history.enabled=false", NULL };

        rc = ih_export("ns=1;s=Demo.Simulation.Counter", before,
                       sizeof(before));
        broker = itest_broker_start(ih_bin, 1, ih_dir, ih_log, off,
                                    IH_START_MS, &port, &sport);
        itest_sleep_ms(500);
        itest_check(ih_historian(broker) == 0,
                    "history.enabled = false: no historian");
        rc = ih_export("ns=1;s=Demo.Simulation.Counter", out, sizeof(out));
        itest_check(rc == 0 && strcmp(out, before) == 0,
                    "and the store is left as it was");
        itest_check(itest_stop(broker, 5000) == 0,
                    "SIGTERM: the broker exits 0");
    }
    return itest_finish();
}
