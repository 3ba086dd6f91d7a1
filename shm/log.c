/*
 * shm/log.c: the one log of a process (shm/log.h).
 *
 * State: the identity, the descriptor, whether it is a terminal, and the
 * threshold (local, or a pointer into the configuration snapshot).  One
 * thread per process writes lines; a line is built in a stack buffer and
 * leaves in one write(2), so concurrent writers (the broker and its
 * workers on one inherited stderr) never split each other's lines.
 */
#include "log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void shm_log_write(const char *p, size_t n);

static const char *const shm_log_names[] = {
    [SHM_LOG_ERROR] = "error",     [SHM_LOG_WARNING] = "warning",
    [SHM_LOG_NOTICE] = "notice",   [SHM_LOG_INFO] = "info",
    [SHM_LOG_DEBUG] = "debug",
};

static char                      shm_log_ident[SHM_LOG_IDENT_MAX] =
    "uabroker";
static int                       shm_log_fd = 2;
static int                       shm_log_tty = -1;  /* -1: not asked yet */
static _Atomic uint32_t          shm_log_local = SHM_LOG_DEFAULT;
static const _Atomic uint32_t   *shm_log_level = &shm_log_local;

void
shm_log_open(const char *ident, int fd)
{
    snprintf(shm_log_ident, sizeof(shm_log_ident), "%s", ident);
    shm_log_fd = fd;
    shm_log_tty = isatty(fd) == 1;
}

void
shm_log_level_at(const _Atomic uint32_t *level)
{
    shm_log_level = level != NULL ? level : &shm_log_local;
}

void
shm_log_set_level(enum shm_log_level max)
{
    atomic_store_explicit(&shm_log_local, (uint32_t)max,
                          memory_order_relaxed);
}

bool
shm_log_on(enum shm_log_level l)
{
    return (uint32_t)l
           <= atomic_load_explicit(shm_log_level, memory_order_relaxed);
}

void
shm_log(enum shm_log_level l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    shm_log_v(l, fmt, ap);
    va_end(ap);
}

void
shm_log_v(enum shm_log_level l, const char *fmt, va_list ap)
{
    char   line[SHM_LOG_LINE_MAX];
    size_t n;
    int    k, saved = errno;

    if (!shm_log_on(l))
        return;
    if (shm_log_tty < 0)
        shm_log_tty = isatty(shm_log_fd) == 1;
    if (shm_log_tty && l != SHM_LOG_NOTICE && l != SHM_LOG_INFO)
        k = snprintf(line, sizeof(line), "%s: %s: ", shm_log_ident,
                     shm_log_level_name(l));
    else if (shm_log_tty)
        k = snprintf(line, sizeof(line), "%s: ", shm_log_ident);
    else
        k = snprintf(line, sizeof(line), "<%d>%s: ", (int)l, shm_log_ident);
    n = k > 0 ? (size_t)k : 0;
    if (n < sizeof(line)) {
        k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        if (k > 0)
            n += (size_t)k;
    }
    /* Cut to fit, then one newline at the end. */
    if (n > sizeof(line) - 1)
        n = sizeof(line) - 1;
    while (n > 0 && line[n - 1] == '\n')
        n--;
    line[n++] = '\n';
    shm_log_write(line, n);
    errno = saved;
}

static void
shm_log_write(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(shm_log_fd, p, n);

        if (w == -1 && errno == EINTR)
            continue;
        if (w <= 0)
            return;                     /* nowhere to report it */
        p += w;
        n -= (size_t)w;
    }
}

int
shm_log_level_parse(const char *s)
{
    for (int l = SHM_LOG_ERROR; l <= SHM_LOG_DEBUG; l++)
        if (strcmp(s, shm_log_names[l]) == 0)
            return l;
    return -1;
}

const char *
shm_log_level_name(int l)
{
    return l >= SHM_LOG_ERROR && l <= SHM_LOG_DEBUG ? shm_log_names[l] : "?";
}
