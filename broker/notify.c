/*
 * broker/notify.c: sd_notify(3) by hand (see notify.h).
 *
 * One datagram per call on a fresh SOCK_DGRAM socket, sent non-blocking
 * with MSG_NOSIGNAL: systemd reads it from its end, checks the sender's
 * credentials (NotifyAccess=main: our pid) and applies each line.
 */
#include "notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BK_NOTIFY_MSG_MAX 1024

int
bk_notify(const char *msg)
{
    struct sockaddr_un sa;
    const char        *path = getenv("NOTIFY_SOCKET");
    size_t             len;
    socklen_t          salen;
    ssize_t            n;
    int                fd, rc;

    if (path == NULL || path[0] == '\0')
        return 0;
    if (path[0] != '/' && path[0] != '@')
        return -EINVAL;
    len = strlen(path);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    /* A path needs its NUL inside sun_path; an abstract name does not. */
    if (len > sizeof(sa.sun_path) - (path[0] == '/' ? 1 : 0))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len
                        + (path[0] == '/' ? 1 : 0));
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd == -1)
        return -errno;
    n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
               salen);
    rc = n == -1 ? -errno : 1;
    close(fd);
    return rc;
}

int
bk_notify_fmt(const char *fmt, ...)
{
    char    buf[BK_NOTIFY_MSG_MAX];
    va_list ap;

    if (getenv("NOTIFY_SOCKET") == NULL)
        return 0;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return bk_notify(buf);
}

int
bk_notify_reloading(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return bk_notify_fmt("RELOADING=1\nMONOTONIC_USEC=%llu",
                         (unsigned long long)ts.tv_sec * 1000000ULL
                             + (unsigned long long)ts.tv_nsec / 1000);
}
