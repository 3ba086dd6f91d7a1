/*
 * shm/feed.c: the feed's nanomsg sockets (feed.h).  With shm/doorbell.c
 * the only file that includes nanomsg.
 */
#include "feed.h"

#include <errno.h>
#include <string.h>

#include <nanomsg/nn.h>
#include <nanomsg/pair.h>
#include <nanomsg/pipeline.h>
#include <nanomsg/reqrep.h>

static int shm_feed_fail(struct shm_feed *f);

static int
shm_feed_fail(struct shm_feed *f)
{
    int err = -nn_errno();

    if (f->sock != -1)
        nn_close(f->sock);
    f->sock = -1;
    f->fd = -1;
    return err;
}

int
shm_feed_bind(struct shm_feed *f, enum shm_feed_kind kind, const char *url,
              int max_bytes)
{
    size_t fdsz = sizeof(f->fd);
    int    proto;

    f->sock = -1;
    f->fd = -1;
    if (url == NULL
        || (strncmp(url, "ipc://", 6) != 0 && strncmp(url, "tcp://", 6) != 0)
        || url[6] == '\0')
        return -EINVAL;
    if (kind == SHM_FEED_PULL)
        proto = NN_PULL;
    else if (kind == SHM_FEED_REP)
        proto = NN_REP;
    else if (kind == SHM_FEED_PAIR)
        proto = NN_PAIR;
    else
        return -EINVAL;
    f->sock = nn_socket(AF_SP, proto);
    if (f->sock == -1)
        return -nn_errno();
    if (kind == SHM_FEED_PAIR) {
        int zero = 0;           /* no peer, or a full pipe: fail at once */

        if (nn_setsockopt(f->sock, NN_SOL_SOCKET, NN_SNDTIMEO, &zero,
                          sizeof(zero)) == -1)
            return shm_feed_fail(f);
    }
    if (nn_setsockopt(f->sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max_bytes,
                      sizeof(max_bytes)) == -1
        || nn_getsockopt(f->sock, NN_SOL_SOCKET, NN_RCVFD, &f->fd, &fdsz)
               == -1
        || nn_bind(f->sock, url) == -1)
        return shm_feed_fail(f);
    return 0;
}

int
shm_feed_connect(struct shm_feed *f, enum shm_feed_kind kind,
                 const char *url, int timeout_ms)
{
    int proto;

    f->sock = -1;
    f->fd = -1;
    if (url == NULL
        || (strncmp(url, "ipc://", 6) != 0 && strncmp(url, "tcp://", 6) != 0))
        return -EINVAL;
    if (kind == SHM_FEED_PUSH)
        proto = NN_PUSH;
    else if (kind == SHM_FEED_REQ)
        proto = NN_REQ;
    else if (kind == SHM_FEED_PAIR)
        proto = NN_PAIR;
    else
        return -EINVAL;
    f->sock = nn_socket(AF_SP, proto);
    if (f->sock == -1)
        return -nn_errno();
    if (nn_setsockopt(f->sock, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms,
                      sizeof(timeout_ms)) == -1
        || nn_setsockopt(f->sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms,
                         sizeof(timeout_ms)) == -1
        || nn_connect(f->sock, url) == -1)
        return shm_feed_fail(f);
    if (kind == SHM_FEED_PAIR) {
        size_t fdsz = sizeof(f->fd);

        /* The method owner polls it with its other fds. */
        if (nn_getsockopt(f->sock, NN_SOL_SOCKET, NN_RCVFD, &f->fd, &fdsz)
            == -1)
            return shm_feed_fail(f);
    }
    return 0;
}

int
shm_feed_fd(const struct shm_feed *f)
{
    return f->fd;
}

int
shm_feed_recv(struct shm_feed *f, void *buf, size_t cap, int timeout_ms)
{
    int n, err;

    if (timeout_ms >= 0
        && nn_setsockopt(f->sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms,
                         sizeof(timeout_ms)) == -1)
        return -nn_errno();
    for (;;) {
        n = nn_recv(f->sock, buf, cap, timeout_ms < 0 ? NN_DONTWAIT : 0);
        if (n >= 0)
            break;
        err = nn_errno();
        if (err == EINTR)
            continue;
        if (err == EAGAIN)
            return timeout_ms < 0 ? -EAGAIN : -ETIMEDOUT;
        if (err == ETIMEDOUT)
            return -ETIMEDOUT;
        return -err;
    }
    /* nanomsg truncates and reports the whole length. */
    if ((size_t)n > cap)
        return -EMSGSIZE;
    return n;
}

int
shm_feed_send(struct shm_feed *f, const void *buf, size_t len)
{
    int n;

    do
        n = nn_send(f->sock, buf, len, 0);
    while (n == -1 && nn_errno() == EINTR);
    if (n == -1) {
        int err = nn_errno();

        return err == EAGAIN ? -ETIMEDOUT : -err;
    }
    return 0;
}

void
shm_feed_close(struct shm_feed *f)
{
    if (f->sock != -1)
        nn_close(f->sock);
    f->sock = -1;
    f->fd = -1;
}
