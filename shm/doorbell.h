/*
 * shm/doorbell.h: the doorbells of the rings (docs/architecture.md §3): a
 * nanomsg NN_PAIR socket per broker <-> worker pair over ipc:// in the
 * runtime directory.
 * A bell carries no data (1 byte); what matters is that the receiver's
 * NN_RCVFD becomes readable, in its libevent loop or in poll().  One pair
 * serves every ring between the two processes: a woken process looks at
 * all its inbound rings.
 *
 * Rules (docs/dependencies.md gotchas 18-23):
 *   - nanomsg is not fork-safe: create doorbells after fork (and exec), in
 *     the process that uses them, never before a fork that a child will use
 *     them across.  The broker binds one per worker slot, the worker
 *     connects to its slot's.
 *   - nn_connect is asynchronous.  shm_doorbell_connect() returns once the
 *     connector's side of the pipe is up (it sends one hello byte with a
 *     bounded blocking send).  The binder's side is up once it has received
 *     anything: until its first shm_doorbell_drain() returns > 0 a bell it
 *     rings may be dropped, so it answers that first drain with one ring
 *     (the connector then looks at its rings again).
 *   - A bell that cannot be queued (EAGAIN: the peer has unread bells, or
 *     is gone) is dropped: unread bells already keep the peer's fd readable,
 *     and the ring protocol re-checks after every wake.
 *   - The fd from shm_doorbell_fd() is for polling only; remove it from the
 *     event loop before shm_doorbell_close().
 *
 * This file and doorbell.c are the only ones that know nanomsg exists.
 */
#ifndef SHM_DOORBELL_H
#define SHM_DOORBELL_H

#include <stdbool.h>
#include <stdint.h>

/* ipc:// paths are Unix socket paths (sun_path): dir + "/" + name < this. */
#define SHM_DOORBELL_PATH_MAX 100

struct shm_doorbell {
    int  sock;                          /* nanomsg socket, -1 when closed */
    int  fd;                            /* NN_RCVFD */
    bool bound;
    char path[SHM_DOORBELL_PATH_MAX];   /* dir/name */
};

/*
 * Bind the doorbell `name` in directory `dir` (the runtime directory; it
 * must exist).  A socket file left by a dead binder is replaced; nanomsg
 * removes the file again on close.  0; -ENAMETOOLONG when dir/name is not
 * shorter than SHM_DOORBELL_PATH_MAX; -EINVAL for an empty dir or name or a
 * name with a '/'; -ENOENT, -ENOTDIR, -EACCES for a directory we cannot
 * make the socket in (checked before nn_bind, which leaks on failure in
 * nanomsg 1.1.5); -errno from nanomsg (e.g. -EADDRINUSE: a live binder).
 */
int shm_doorbell_bind(struct shm_doorbell *d, const char *dir,
                      const char *name);

/*
 * Connect to the doorbell `name` in `dir` and wait up to timeout_ms for the
 * pipe (see above).  0; -ETIMEDOUT when no binder answered in time; the
 * errors of shm_doorbell_bind().
 */
int shm_doorbell_connect(struct shm_doorbell *d, const char *dir,
                         const char *name, int timeout_ms);

/*
 * Ring: queue one byte for the peer without blocking.  0 when queued, 1
 * when dropped (EAGAIN; see above, harmless), -errno on a dead socket.
 */
int shm_doorbell_ring(struct shm_doorbell *d);

/* The fd to poll for readability (NN_RCVFD). */
int shm_doorbell_fd(const struct shm_doorbell *d);

/*
 * Take every queued bell (at most 4096 per call; the fd stays readable if
 * more are left).  The number taken (0 if none); -errno on a dead socket.
 */
int shm_doorbell_drain(struct shm_doorbell *d);

/* Close (removes a bound socket file); safe on a closed doorbell. */
void shm_doorbell_close(struct shm_doorbell *d);

/*
 * The linger timer of a ring's consumer (docs/design-notes.md D24): a
 * non-blocking CLOCK_MONOTONIC timerfd for the event loop, because libevent
 * rounds its epoll timeouts up to a millisecond.  shm_linger_open: the fd,
 * or -errno.  shm_linger_arm: fire once in us microseconds (0 disarms); 0,
 * or -errno.  shm_linger_clear: consume an expiry (nothing to consume is
 * fine).
 */
int shm_linger_open(void);
int shm_linger_arm(int fd, uint32_t us);
void shm_linger_clear(int fd);

#endif /* SHM_DOORBELL_H */
