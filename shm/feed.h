/*
 * shm/feed.h: the sockets of the feed (docs/architecture.md §7): the broker's
 * NN_PULL socket that takes batches of values (ipc:// in the runtime directory
 * by default, tcp:// on request), its NN_REP control socket for batches that
 * want a report back, and the client ends (NN_PUSH, NN_REQ) that
 * `uabroker feed` uses.  The batch text format is the broker's business
 * (broker/feed.c, docs/feed.md); these are bytes.
 *
 * Like the doorbells (shm/doorbell.h), these are nanomsg sockets: create
 * them after fork, in the process that uses them.  shm/doorbell.c and
 * shm/feed.c are the only files that know nanomsg exists
 * (tests/check-deps.sh).
 */
#ifndef SHM_FEED_H
#define SHM_FEED_H

#include <stdbool.h>
#include <stddef.h>

enum shm_feed_kind {
    SHM_FEED_PULL = 0,          /* broker: batches, no answer */
    SHM_FEED_REP,               /* broker: batches answered with a report */
    SHM_FEED_PUSH,              /* client of PULL */
    SHM_FEED_REQ,               /* client of REP */
    SHM_FEED_PAIR               /* the methods socket (broker/methods.c):
                                 * bound by the broker (sends never
                                 * block), connected by the method owner */
};

struct shm_feed {
    int sock;                   /* nanomsg socket, -1 when closed */
    int fd;                     /* NN_RCVFD (broker sockets), else -1 */
};

/*
 * Broker: bind a PULL, REP or PAIR socket at url (ipc://PATH or
 * tcp://ADDR:PORT) taking messages of at most max_bytes (larger ones are
 * refused by the transport).  An ipc:// path's directory must exist.  0 or -errno
 * (-EINVAL for another kind or a bad url, -EADDRINUSE, ...).
 */
int shm_feed_bind(struct shm_feed *f, enum shm_feed_kind kind,
                  const char *url, int max_bytes);

/*
 * Client: connect a PUSH, REQ or PAIR socket to url; sends wait up to
 * timeout_ms for the broker.  0 or -errno.
 */
int shm_feed_connect(struct shm_feed *f, enum shm_feed_kind kind,
                     const char *url, int timeout_ms);

/* The fd to poll for readability (broker sockets, a connected PAIR). */
int shm_feed_fd(const struct shm_feed *f);

/*
 * Take one message into buf[cap] without blocking (timeout_ms < 0), or
 * waiting up to timeout_ms.  Its length; -EAGAIN (nothing; or
 * -ETIMEDOUT after a wait); -EMSGSIZE when it was longer than cap (it is
 * gone); -errno.
 */
int shm_feed_recv(struct shm_feed *f, void *buf, size_t cap, int timeout_ms);

/*
 * Send one message: a client's request (blocking up to the connect
 * timeout), or a REP socket's answer to the request it took last (never
 * blocks).  0 or -errno.
 */
int shm_feed_send(struct shm_feed *f, const void *buf, size_t len);

/* Close (removes a bound ipc file); safe on a closed socket. */
void shm_feed_close(struct shm_feed *f);

#endif /* SHM_FEED_H */
