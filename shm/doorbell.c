/*
 * shm/doorbell.c: ring doorbells on nanomsg NN_PAIR over ipc://.  The only
 * file of the project that includes nanomsg; its rules are in doorbell.h.
 * No state outside struct shm_doorbell; nanomsg's own worker threads start
 * with the first socket of the process (hence: after fork).
 */
#include "doorbell.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <nanomsg/nn.h>
#include <nanomsg/pair.h>

#define SHM_DOORBELL_DRAIN_MAX 4096
#define SHM_DOORBELL_MSG_MAX   64      /* larger messages are refused */

static int shm_doorbell_open(struct shm_doorbell *d, const char *dir,
                             const char *name, char *url, size_t cap);
static int shm_doorbell_fail(struct shm_doorbell *d);
static int shm_doorbell_dir_ok(const char *dir);

/* Build dir/name and ipc://dir/name; create the socket and its fd. */
static int
shm_doorbell_open(struct shm_doorbell *d, const char *dir, const char *name,
                  char *url, size_t cap)
{
    size_t fdsz = sizeof(d->fd);
    int    n, max = SHM_DOORBELL_MSG_MAX;

    d->sock = -1;
    d->fd = -1;
    d->bound = false;
    d->path[0] = '\0';
    if (dir == NULL || name == NULL || dir[0] == '\0' || name[0] == '\0'
        || strchr(name, '/') != NULL)
        return -EINVAL;
    n = snprintf(d->path, sizeof(d->path), "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof(d->path)) {
        d->path[0] = '\0';
        return -ENAMETOOLONG;
    }
    n = snprintf(url, cap, "ipc://%s", d->path);
    if (n < 0 || (size_t)n >= cap)
        return -ENAMETOOLONG;
    d->sock = nn_socket(AF_SP, NN_PAIR);
    if (d->sock == -1)
        return -nn_errno();
    if (nn_setsockopt(d->sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max,
                      sizeof(max))
            == -1
        || nn_getsockopt(d->sock, NN_SOL_SOCKET, NN_RCVFD, &d->fd, &fdsz)
               == -1)
        return shm_doorbell_fail(d);
    return 0;
}

/* Close d after a failed nanomsg call; that call's -errno. */
static int
shm_doorbell_fail(struct shm_doorbell *d)
{
    int err = -nn_errno();

    if (d->sock != -1)
        nn_close(d->sock);
    d->sock = -1;
    d->fd = -1;
    d->bound = false;
    return err;
}

/*
 * The directory a socket file can be made in?  nanomsg 1.1.5 leaks its
 * endpoint (736 bytes) when nn_bind() fails, so the usual reasons are
 * checked here first.
 */
static int
shm_doorbell_dir_ok(const char *dir)
{
    struct stat st;

    if (stat(dir, &st) == -1)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if (access(dir, W_OK | X_OK) == -1)
        return -errno;
    return 0;
}

int
shm_doorbell_bind(struct shm_doorbell *d, const char *dir, const char *name)
{
    char url[SHM_DOORBELL_PATH_MAX + sizeof("ipc://")];
    int  rc = shm_doorbell_open(d, dir, name, url, sizeof(url));

    if (rc == 0)
        rc = shm_doorbell_dir_ok(dir);
    if (rc != 0) {
        if (d->sock != -1)
            nn_close(d->sock);
        d->sock = -1;
        return rc;
    }
    if (nn_bind(d->sock, url) == -1)
        return shm_doorbell_fail(d);
    d->bound = true;
    return 0;
}

int
shm_doorbell_connect(struct shm_doorbell *d, const char *dir,
                     const char *name, int timeout_ms)
{
    char url[SHM_DOORBELL_PATH_MAX + sizeof("ipc://")];
    int  rc = shm_doorbell_open(d, dir, name, url, sizeof(url)), err;
    int  forever = -1;

    if (rc != 0) {
        if (d->sock != -1)
            nn_close(d->sock);
        d->sock = -1;
        return rc;
    }
    if (nn_connect(d->sock, url) == -1
        || nn_setsockopt(d->sock, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms,
                         sizeof(timeout_ms))
               == -1)
        return shm_doorbell_fail(d);
    /* A blocking send on PAIR waits until the pipe is up: the hello. */
    if (nn_send(d->sock, "h", 1, 0) == -1) {
        err = nn_errno();
        nn_close(d->sock);
        d->sock = -1;
        d->fd = -1;
        return err == EAGAIN || err == ETIMEDOUT ? -ETIMEDOUT : -err;
    }
    if (nn_setsockopt(d->sock, NN_SOL_SOCKET, NN_SNDTIMEO, &forever,
                      sizeof(forever))
        == -1)
        return shm_doorbell_fail(d);
    return 0;
}

int
shm_doorbell_ring(struct shm_doorbell *d)
{
    int err;

    if (nn_send(d->sock, "b", 1, NN_DONTWAIT) == 1)
        return 0;
    err = nn_errno();
    if (err == EAGAIN)
        return 1;
    return -err;
}

int
shm_doorbell_fd(const struct shm_doorbell *d)
{
    return d->fd;
}

int
shm_doorbell_drain(struct shm_doorbell *d)
{
    char buf[SHM_DOORBELL_MSG_MAX];
    int  n = 0, err;

    while (n < SHM_DOORBELL_DRAIN_MAX) {
        if (nn_recv(d->sock, buf, sizeof(buf), NN_DONTWAIT) == -1) {
            err = nn_errno();
            if (err == EAGAIN)
                return n;
            if (err == EINTR)
                continue;
            return -err;
        }
        n++;
    }
    return n;
}

void
shm_doorbell_close(struct shm_doorbell *d)
{
    if (d->sock != -1)
        nn_close(d->sock);      /* nanomsg unlinks a bound ipc file */
    d->sock = -1;
    d->fd = -1;
    d->bound = false;
}

int
shm_linger_open(void)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

    return fd == -1 ? -errno : fd;
}

int
shm_linger_arm(int fd, uint32_t us)
{
    struct itimerspec its;

    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec = (time_t)(us / 1000000);
    its.it_value.tv_nsec = (long)(us % 1000000) * 1000;
    return timerfd_settime(fd, 0, &its, NULL) == 0 ? 0 : -errno;
}

void
shm_linger_clear(int fd)
{
    uint64_t n;

    (void)!read(fd, &n, sizeof(n));     /* EAGAIN: nothing to clear */
}
