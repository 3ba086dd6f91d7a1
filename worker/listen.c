/*
 * worker/listen.c: the worker's listener (worker/listen.h).
 *
 * Single-threaded, on the worker's loop.
 */
#include "listen.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "admit.h"
#include "loopstat.h"
#include "proto/securechannel.h"
#include "shm/log.h"

#define WK_LISTEN_BATCH     64      /* accepts per listener event */
#define WK_LISTEN_DRAIN_MAX 4       /* reads to drain before close */

static void wk_listen_on_accept(evutil_socket_t fd, short what, void *arg);
static void wk_listen_refuse(int fd, ua_status st, const char *reason);
static void wk_listen_second(void *arg);

int
wk_listen_init(struct wk_listen *ls, struct wk_worker *w, struct wk_conns *cs,
               struct wk_loop *l, int listen_fd)
{
    memset(ls, 0, sizeof(*ls));
    ls->w = w;
    ls->cs = cs;
    ls->loop = l;
    ls->fd = listen_fd;
    if (evutil_make_socket_nonblocking(listen_fd) != 0)
        return -errno;
    event_assign(&ls->lev, w->base, listen_fd, EV_READ | EV_PERSIST,
                 wk_listen_on_accept, ls);
    if (event_add(&ls->lev, NULL) != 0
        || wk_loop_on_second(l, wk_listen_second, ls) != 0)
        return -ENOMEM;
    ls->accepting = true;
    return 0;
}

void
wk_listen_stop(struct wk_listen *ls)
{
    if (!ls->accepting)
        return;
    ls->accepting = false;
    event_del(&ls->lev);
}

static void
wk_listen_on_accept(evutil_socket_t lfd, short what, void *arg)
{
    struct wk_listen       *ls = arg;
    struct wk_worker       *w = ls->w;
    struct sockaddr_storage ss;
    socklen_t               sl;
    uint64_t                tag, login_tag;
    int                     fd;

    (void)what;
    wk_loop_iteration(ls->loop);
    for (int i = 0; i < WK_LISTEN_BATCH && ls->accepting; i++) {
        sl = sizeof(ss);
        fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd == -1) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
                || errno == ENOMEM) {
                /* Out of descriptors: stop accepting for a second rather
                 * than spin on a level-triggered listener. */
                shm_log(SHM_LOG_WARNING, "accept4() failed: %s; "
                        "pausing accept for 1 s", strerror(errno));
                event_del(&ls->lev);
                ls->accepting = false;
                ls->paused = true;
            }
            break;
        }
        if (sl > sizeof(ss))
            ss.ss_family = AF_UNSPEC;
        tag = wk_admit_tag(w, &ss, SHM_THR_KEY_IP);
        if (wk_admit_connection(w, tag) != UA_GOOD) {
            wk_listen_refuse(fd, UA_BAD_TCP_SERVER_TOO_BUSY, "try later");
            continue;
        }
        login_tag = w->conf->login_failure_ip_threshold != 0
                        ? wk_admit_tag(w, &ss, SHM_THR_KEY_LOGIN_IP) : 0;
        if (wk_conn_accept(ls->cs, fd, tag, login_tag) == NULL) {
            wk_listen_refuse(fd, UA_BAD_TCP_SERVER_TOO_BUSY,
                             "too many channels");
            wk_loopstat_add(&w->row->rejected_connections, 1);
        }
    }
}

/*
 * Tell the client why (an ERR) and hang up.  What it sent already (its
 * HEL) is read first: closing with unread input would reset the
 * connection, and the reset could cost the client our ERR.
 */
static void
wk_listen_refuse(int fd, ua_status st, const char *reason)
{
    uint8_t          buf[256];
    struct ua_sc_out out = { buf, 64, 0 };

    ua_sc_write_err(&out, st, reason);
    (void)send(fd, buf, out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    for (int i = 0; i < WK_LISTEN_DRAIN_MAX; i++)
        if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
            break;
    close(fd);
}

/* Once a second: accept again after a pause. */
static void
wk_listen_second(void *arg)
{
    struct wk_listen *ls = arg;

    if (ls->paused && !ls->accepting) {
        ls->paused = false;
        if (event_add(&ls->lev, NULL) == 0)
            ls->accepting = true;
    }
}
