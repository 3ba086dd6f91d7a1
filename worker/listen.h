/*
 * worker/listen.h: the worker's listener.
 *
 * One worker accepts on its slot's listening socket (inherited from the
 * broker, SO_REUSEPORT), up to WK_LISTEN_BATCH connections per event.
 * Each new connection is admitted (worker/admit.h) or refused with an ERR
 * (BadTcpServerTooBusy), then opened in the pool (worker/conn.h), which
 * refuses it too when every connection carries a session.  Out of file
 * descriptors, accepting pauses for a second rather than spin on a
 * level-triggered listener.
 *
 * Stopping (SIGTERM): the broker keeps the socket, so queued connections
 * wait there for the next worker on this slot.
 *
 * Single-threaded, on the worker's loop.
 */
#ifndef WK_LISTEN_H
#define WK_LISTEN_H

#include <stdbool.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "conn.h"
#include "loop.h"
#include "worker.h"

struct wk_listen {
    struct wk_worker *w;
    struct wk_conns  *cs;
    struct wk_loop   *loop;
    int               fd;
    struct event      lev;            /* accept */
    bool              accepting;
    bool              paused;         /* out of fds: retry in 1 s */
};

/*
 * Accept on listen_fd (non-blocking afterwards) into the pool cs; the
 * retry after a pause runs on the loop's second.  0 or -errno.
 */
int wk_listen_init(struct wk_listen *ls, struct wk_worker *w,
                   struct wk_conns *cs, struct wk_loop *l, int listen_fd);

/* Stop accepting (the broker keeps the socket). */
void wk_listen_stop(struct wk_listen *ls);

#endif /* WK_LISTEN_H */
