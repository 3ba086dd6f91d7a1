/*
 * tests/lib/itest.c: the integration programs' shared reporting and small
 * helpers (see itest.h).
 */
#include "itest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ITEST_SCRATCH_MAX 32

static const char *itest_name = "itest";
static unsigned    itest_passed, itest_failed;
static char        itest_dirs[ITEST_SCRATCH_MAX][PATH_MAX];
static unsigned    itest_ndirs;

static int
itest_rm_one(const char *path, const struct stat *st, int flag,
             struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if ((flag == FTW_DP ? rmdir(path) : unlink(path)) == -1)
        fprintf(stderr, "%s: cannot remove %s: %s\n", itest_name, path,
                strerror(errno));
    return 0;
}

static void
itest_cleanup(void)
{
    for (unsigned i = 0; i < itest_ndirs; i++) {
        if (itest_failed != 0)
            fprintf(stderr, "%s: kept %s for inspection\n", itest_name,
                    itest_dirs[i]);
        else
            nftw(itest_dirs[i], itest_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    itest_ndirs = 0;
}

void
itest_init(const char *name)
{
    itest_name = name;
    atexit(itest_cleanup);
}

void
itest_scratch(const char *dir)
{
    if (itest_ndirs == ITEST_SCRATCH_MAX
        || strlen(dir) >= sizeof(itest_dirs[0])) {
        fprintf(stderr, "%s: not removed at exit: %s\n", itest_name, dir);
        return;
    }
    strcpy(itest_dirs[itest_ndirs++], dir);
}

bool
itest_check(bool ok, const char *fmt, ...)
{
    va_list ap;

    printf("%s %u - ", ok ? "ok" : "FAIL", itest_passed + itest_failed + 1);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (ok)
        itest_passed++;
    else
        itest_failed++;
    return ok;
}

void
itest_fatal(const char *fmt, ...)
{
    va_list ap;

    printf("FAIL %u - ", itest_passed + itest_failed + 1);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" (fatal)\n");
    itest_failed++;
    exit(itest_finish());
}

unsigned
itest_failures(void)
{
    return itest_failed;
}

int
itest_finish(void)
{
    printf("%s: %u passed, %u failed\n", itest_name, itest_passed,
           itest_failed);
    fflush(stdout);
    return itest_failed == 0 ? 0 : 1;
}

uint64_t
itest_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
itest_sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

uint16_t
itest_free_port(void)
{
    struct sockaddr_in a;
    socklen_t          l = sizeof(a);
    int                fd = socket(AF_INET, SOCK_STREAM, 0);
    uint16_t           port = 0;

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd != -1 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0
        && getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    if (fd != -1)
        close(fd);
    return port;
}
