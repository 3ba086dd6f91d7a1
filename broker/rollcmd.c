/*
 * broker/rollcmd.c: the pid file and `uabroker restart-workers`
 * (broker/rollcmd.h).
 *
 * The pid file is written once the broker serves and removed when it
 * stops; a stale one (the broker killed) names a pid that is gone or is
 * not a uabroker: the command checks /proc/<pid>/comm before signalling.
 *
 * No state; called from the broker's main thread, or by the command
 * alone.
 */
#include "rollcmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int bk_rollcmd_path(const struct bk_config *c, char *out, size_t cap);
static long bk_rollcmd_read(const char *path);

static int
bk_rollcmd_path(const struct bk_config *c, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%s", c->runtime_dir, BK_ROLLCMD_PIDFILE);

    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The pid in path, or -1. */
static long
bk_rollcmd_read(const char *path)
{
    FILE *f = fopen(path, "r");
    long  pid = -1;

    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld", &pid) != 1 || pid <= 1)
        pid = -1;
    fclose(f);
    return pid;
}

int
bk_rollcmd_pidfile_write(const struct bk_config *c)
{
    char  path[512], tmp[520];
    FILE *f;

    if (bk_rollcmd_path(c, path, sizeof(path)) != 0)
        return -ENAMETOOLONG;
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    f = fopen(tmp, "w");
    if (f == NULL)
        return -errno;
    fprintf(f, "%ld\n", (long)getpid());
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        int rc = -errno;

        (void)unlink(tmp);
        return rc;
    }
    return 0;
}

void
bk_rollcmd_pidfile_remove(const struct bk_config *c)
{
    char path[512];

    if (bk_rollcmd_path(c, path, sizeof(path)) == 0
        && bk_rollcmd_read(path) == (long)getpid())
        (void)unlink(path);
}

int
bk_rollcmd_run(const struct bk_config *c, FILE *out, FILE *err)
{
    char  path[512], proc[64], comm[32] = "";
    FILE *f;
    long  pid;

    if (bk_rollcmd_path(c, path, sizeof(path)) != 0
        || (pid = bk_rollcmd_read(path)) < 0) {
        fprintf(err, "uabroker: no broker running (no pid in %s/%s)\n",
                c->runtime_dir, BK_ROLLCMD_PIDFILE);
        return 1;
    }
    snprintf(proc, sizeof(proc), "/proc/%ld/comm", pid);
    f = fopen(proc, "r");
    if (f != NULL) {
        if (fgets(comm, sizeof(comm), f) == NULL)
            comm[0] = '\0';
        fclose(f);
    }
    if (strncmp(comm, "uabroker", 8) != 0 || kill((pid_t)pid, SIGUSR2) != 0) {
        fprintf(err, "uabroker: no broker running as pid %ld (%s is "
                "stale)\n", pid, path);
        return 1;
    }
    fprintf(out, "uabroker: rolling restart of the workers asked of pid "
            "%ld (progress in its log, restarts in /stats)\n", pid);
    return 0;
}
