/*
 * worker/xfer.c: the worker-to-worker transport (worker/xfer.h).
 *
 * Invariants:
 *   - links[i].fd == -1 exactly while the link is free; a used link has
 *     its read or write event added (ev_on) until it is closed.
 *   - A claimer's link has its deadline (tmo_on) until its blob is
 *     complete; an owner's link has none.
 *   - buf is the link's own (wk_alloc) or NULL; freed when it closes.
 *   - The owner calls done exactly once per Good answer written (ack
 *     byte, or EOF, or the worker stopping); the claimer calls answer
 *     exactly once per claim accepted by wk_xfer_claim.
 *
 * Header (WK_XFER_HDR bytes, little-endian): u32 magic, u16 version,
 * u16 kind, u32 status, u32 body length.
 *
 * Single-threaded, on the worker's loop; every callback starts with
 * wk_loop_iteration().
 */
#include "xfer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/status_gen.h"
#include "shm/log.h"

enum wk_xfer_state {
    WK_XS_FREE = 0,
    WK_XS_C_HDR,        /* claimer: reading the answer's header */
    WK_XS_C_BODY,       /* claimer: reading the blob */
    WK_XS_O_HDR,        /* owner: reading the claim's header */
    WK_XS_O_BODY,       /* owner: reading the claim's body */
    WK_XS_O_SEND,       /* owner: writing the answer */
    WK_XS_O_ACK         /* owner: waiting for the ack byte */
};

static struct wk_xfer_link *wk_xfer_link_get(struct wk_xfer *x);
static void wk_xfer_close(struct wk_xfer_link *k);
static int wk_xfer_watch(struct wk_xfer_link *k, short what);
static void wk_xfer_hdr_put(uint8_t *h, uint32_t kind, uint32_t status,
                            uint32_t len);
static bool wk_xfer_hdr_get(const uint8_t *h, uint32_t *kind,
                            uint32_t *status, uint32_t *len);
static int wk_xfer_fill(struct wk_xfer_link *k, uint8_t *dst, uint32_t n);
static void wk_xfer_on_accept(evutil_socket_t fd, short what, void *arg);
static void wk_xfer_on_io(evutil_socket_t fd, short what, void *arg);
static void wk_xfer_on_timeout(evutil_socket_t fd, short what, void *arg);
static void wk_xfer_claimer_io(struct wk_xfer_link *k);
static void wk_xfer_owner_io(struct wk_xfer_link *k, short what);
static void wk_xfer_serve(struct wk_xfer_link *k);
static void wk_xfer_answer(struct wk_xfer_link *k, ua_status st);
static uint32_t wk_xfer_blob_max(const struct wk_xfer *x);

/* ------------------------------------------------------------------ */
/* links                                                               */
/* ------------------------------------------------------------------ */

static struct wk_xfer_link *
wk_xfer_link_get(struct wk_xfer *x)
{
    for (unsigned i = 0; i < WK_XFER_LINKS; i++)
        if (x->links[i].fd == -1)
            return &x->links[i];
    return NULL;
}

static void
wk_xfer_close(struct wk_xfer_link *k)
{
    struct wk_xfer *x = k->x;

    if (k->ev_on)
        event_del(&k->ev);
    if (k->tmo_on)
        event_del(&k->tmo);
    k->ev_on = k->tmo_on = 0;
    if (k->fd != -1)
        close(k->fd);
    k->fd = -1;
    if (k->buf != NULL)
        wk_free(x->w, k->buf);
    k->buf = NULL;
    k->len = k->pos = 0;
    k->state = WK_XS_FREE;
}

/* Wait for what (EV_READ or EV_WRITE) on k's socket.  0 or -1. */
static int
wk_xfer_watch(struct wk_xfer_link *k, short what)
{
    if (k->ev_on)
        event_del(&k->ev);
    k->ev_on = 0;
    if (event_assign(&k->ev, k->x->w->base, k->fd, what | EV_PERSIST,
                     wk_xfer_on_io, k) != 0
        || event_add(&k->ev, NULL) != 0)
        return -1;
    k->ev_on = 1;
    return 0;
}

static void
wk_xfer_hdr_put(uint8_t *h, uint32_t kind, uint32_t status, uint32_t len)
{
    uint32_t magic = WK_XFER_MAGIC;
    uint16_t v = WK_XFER_VERSION, kd = (uint16_t)kind;

    memcpy(h, &magic, 4);           /* little-endian host (proto/codec.c) */
    memcpy(h + 4, &v, 2);
    memcpy(h + 6, &kd, 2);
    memcpy(h + 8, &status, 4);
    memcpy(h + 12, &len, 4);
}

static bool
wk_xfer_hdr_get(const uint8_t *h, uint32_t *kind, uint32_t *status,
                uint32_t *len)
{
    uint32_t magic;
    uint16_t v, kd;

    memcpy(&magic, h, 4);
    memcpy(&v, h + 4, 2);
    memcpy(&kd, h + 6, 2);
    memcpy(status, h + 8, 4);
    memcpy(len, h + 12, 4);
    *kind = kd;
    return magic == WK_XFER_MAGIC && v == WK_XFER_VERSION;
}

/*
 * Read into dst[pos..n) what the socket has: 1 when dst holds n bytes, 0
 * when more is to come, -1 on EOF or error.
 */
static int
wk_xfer_fill(struct wk_xfer_link *k, uint8_t *dst, uint32_t n)
{
    while (k->pos < n) {
        ssize_t r = read(k->fd, dst + k->pos, n - k->pos);

        if (r > 0) {
            k->pos += (uint32_t)r;
            k->x->bytes_in += (uint64_t)r;
            continue;
        }
        if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK
                        || errno == EINTR))
            return 0;
        return -1;
    }
    return 1;
}

static uint32_t
wk_xfer_blob_max(const struct wk_xfer *x)
{
    uint32_t m = x->w->conf->max_session_move_bytes;

    return m != 0 ? m : 16u << 20;
}

/* ------------------------------------------------------------------ */
/* set-up                                                              */
/* ------------------------------------------------------------------ */

int
wk_xfer_init(struct wk_xfer *x, struct wk_worker *w, struct wk_loop *l,
             const struct wk_xfer_handlers *h)
{
    struct sockaddr_un a;
    int                n, rc;

    memset(x, 0, sizeof(*x));
    x->w = w;
    x->loop = l;
    x->h = *h;
    x->lfd = -1;
    for (unsigned i = 0; i < WK_XFER_LINKS; i++) {
        x->links[i].fd = -1;
        x->links[i].x = x;
    }
    n = snprintf(x->path, sizeof(x->path), "%s/w%u.xfer",
                 w->conf->runtime_dir, w->slot);
    memset(&a, 0, sizeof(a));
    if (n < 0 || (size_t)n >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, x->path, (size_t)n + 1);
    x->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (x->lfd == -1)
        return -errno;
    (void)unlink(x->path);          /* a predecessor's */
    if (bind(x->lfd, (struct sockaddr *)&a, sizeof(a)) != 0
        || listen(x->lfd, WK_XFER_LINKS) != 0) {
        rc = -errno;
        close(x->lfd);
        x->lfd = -1;
        return rc;
    }
    if (event_assign(&x->lev, w->base, x->lfd, EV_READ | EV_PERSIST,
                     wk_xfer_on_accept, x) != 0
        || event_add(&x->lev, NULL) != 0) {
        close(x->lfd);
        x->lfd = -1;
        (void)unlink(x->path);
        return -ENOMEM;
    }
    x->lev_on = true;
    return 0;
}

void
wk_xfer_clear(struct wk_xfer *x)
{
    if (x->w == NULL)
        return;
    for (unsigned i = 0; i < WK_XFER_LINKS; i++) {
        struct wk_xfer_link *k = &x->links[i];

        if (k->fd == -1)
            continue;
        if (k->state == WK_XS_O_SEND || k->state == WK_XS_O_ACK)
            x->h.done(x->h.arg, k->cookie, false);
        wk_xfer_close(k);
    }
    if (x->lev_on)
        event_del(&x->lev);
    x->lev_on = false;
    if (x->lfd != -1) {
        close(x->lfd);
        (void)unlink(x->path);
    }
    x->lfd = -1;
}

/* ------------------------------------------------------------------ */
/* the claimer                                                         */
/* ------------------------------------------------------------------ */

int
wk_xfer_claim(struct wk_xfer *x, unsigned slot, uint32_t kind,
              const void *body, uint32_t len, uint64_t cookie)
{
    struct wk_xfer_link *k;
    struct sockaddr_un   a;
    uint8_t              msg[WK_XFER_HDR + WK_XFER_CLAIM_MAX];
    struct timeval       tv;
    uint32_t             ms = x->w->conf->session_move_timeout_ms;
    ssize_t              r;
    int                  n, rc;

    if (len > WK_XFER_CLAIM_MAX || slot == x->w->slot || slot >= 64)
        return -EINVAL;
    k = wk_xfer_link_get(x);
    if (k == NULL)
        return -EBUSY;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    n = snprintf(a.sun_path, sizeof(a.sun_path), "%s/w%u.xfer",
                 x->w->conf->runtime_dir, slot);
    if (n < 0 || (size_t)n >= sizeof(a.sun_path))
        return -ENAMETOOLONG;
    k->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (k->fd == -1)
        return -errno;
    x->claims++;
    /* A Unix stream connect completes at once or fails (a full backlog:
     * EAGAIN, taken as the owner being unresponsive). */
    if (connect(k->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        rc = -errno;
        x->failed++;
        wk_xfer_close(k);
        return rc;
    }
    wk_xfer_hdr_put(msg, kind, 0, len);
    memcpy(msg + WK_XFER_HDR, body, len);
    r = write(k->fd, msg, WK_XFER_HDR + len);
    if (r != (ssize_t)(WK_XFER_HDR + len)) {
        rc = r == -1 ? -errno : -EIO;
        x->failed++;
        wk_xfer_close(k);
        return rc;
    }
    x->bytes_out += (uint64_t)r;
    k->state = WK_XS_C_HDR;
    k->kind = kind;
    k->cookie = cookie;
    k->pos = 0;
    if (ms == 0)
        ms = 3000;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (long)(ms % 1000) * 1000;
    if (wk_xfer_watch(k, EV_READ) != 0
        || event_assign(&k->tmo, x->w->base, -1, 0, wk_xfer_on_timeout, k)
               != 0
        || event_add(&k->tmo, &tv) != 0) {
        x->failed++;
        wk_xfer_close(k);
        return -ENOMEM;
    }
    k->tmo_on = 1;
    return 0;
}

/* The claimer is done with k: tell the layer above (once), ack, close. */
static void
wk_xfer_answer(struct wk_xfer_link *k, ua_status st)
{
    struct wk_xfer *x = k->x;
    bool            adopted;
    uint8_t         ack;

    if (k->tmo_on)
        event_del(&k->tmo);
    k->tmo_on = 0;
    if (st != UA_GOOD && !UA_STATUS_IS_BAD(st))
        st = UA_BAD_COMMUNICATION_ERROR;
    adopted = x->h.answer(x->h.arg, k->cookie, st,
                          st == UA_GOOD ? k->buf : NULL,
                          st == UA_GOOD ? k->len : 0);
    if (st == UA_GOOD) {
        ack = adopted ? 1 : 0;
        /* The owner waits for this byte; gone, it has nothing to undo. */
        if (write(k->fd, &ack, 1) == 1)
            x->bytes_out++;
    }
    if (UA_STATUS_IS_BAD(st))
        x->failed++;
    wk_xfer_close(k);
}

static void
wk_xfer_claimer_io(struct wk_xfer_link *k)
{
    uint32_t kind, status, len;
    int      rc;

    if (k->state == WK_XS_C_HDR) {
        rc = wk_xfer_fill(k, k->hdr, WK_XFER_HDR);
        if (rc < 0) {
            wk_xfer_answer(k, UA_BAD_COMMUNICATION_ERROR);
            return;
        }
        if (rc == 0)
            return;
        if (!wk_xfer_hdr_get(k->hdr, &kind, &status, &len)
            || kind != k->kind || (status == UA_GOOD && len == 0)
            || len > wk_xfer_blob_max(k->x)) {
            wk_xfer_answer(k, UA_BAD_COMMUNICATION_ERROR);
            return;
        }
        if (status != UA_GOOD) {
            wk_xfer_answer(k, UA_STATUS_IS_BAD(status)
                                  ? status : UA_BAD_COMMUNICATION_ERROR);
            return;
        }
        k->buf = wk_alloc(k->x->w, len);
        if (k->buf == NULL) {
            wk_xfer_answer(k, UA_BAD_COMMUNICATION_ERROR);
            return;
        }
        k->len = len;
        k->pos = 0;
        k->state = WK_XS_C_BODY;
    }
    rc = wk_xfer_fill(k, k->buf, k->len);
    if (rc < 0)
        wk_xfer_answer(k, UA_BAD_COMMUNICATION_ERROR);
    else if (rc > 0)
        wk_xfer_answer(k, UA_GOOD);
}

static void
wk_xfer_on_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct wk_xfer_link *k = arg;

    (void)fd;
    (void)what;
    wk_loop_iteration(k->x->loop);
    k->tmo_on = 0;
    wk_xfer_answer(k, UA_BAD_TIMEOUT);
}

/* ------------------------------------------------------------------ */
/* the owner                                                           */
/* ------------------------------------------------------------------ */

static void
wk_xfer_on_accept(evutil_socket_t fd, short what, void *arg)
{
    struct wk_xfer      *x = arg;
    struct wk_xfer_link *k;
    struct ucred         cr;
    socklen_t            cl = sizeof(cr);
    int                  c;

    (void)fd;
    (void)what;
    wk_loop_iteration(x->loop);
    for (;;) {
        c = accept4(x->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c == -1)
            return;
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0
            || cr.uid != getuid()) {
            x->refused_peer++;
            close(c);
            continue;
        }
        k = wk_xfer_link_get(x);
        if (k == NULL) {
            x->failed++;
            close(c);               /* the claimer sees EOF: not served */
            continue;
        }
        k->fd = c;
        k->state = WK_XS_O_HDR;
        k->pos = 0;
        if (wk_xfer_watch(k, EV_READ) != 0)
            wk_xfer_close(k);
    }
}

/* The claim is complete (k->hdr, k->buf): answer it. */
static void
wk_xfer_serve(struct wk_xfer_link *k)
{
    struct wk_xfer *x = k->x;
    uint8_t        *blob = NULL;
    uint32_t        blen = 0;
    uint64_t        ticket = 0;
    ua_status       st;

    st = x->h.serve(x->h.arg, k->kind, k->buf, k->len, &blob, &blen,
                    &ticket);
    if (k->buf != NULL)
        wk_free(x->w, k->buf);
    k->buf = NULL;
    if (st == UA_GOOD && (blob == NULL || blen == 0
                          || blen > wk_xfer_blob_max(x) - WK_XFER_HDR)) {
        if (blob != NULL)
            wk_free(x->w, blob);
        x->h.done(x->h.arg, ticket, false);
        blob = NULL;
        blen = 0;
        st = UA_BAD_RESPONSE_TOO_LARGE;
    }
    if (st != UA_GOOD) {
        uint8_t h[WK_XFER_HDR];

        if (!UA_STATUS_IS_BAD(st))
            st = UA_BAD_INTERNAL_ERROR;
        wk_xfer_hdr_put(h, k->kind, st, 0);
        if (write(k->fd, h, sizeof(h)) == (ssize_t)sizeof(h))
            x->bytes_out += sizeof(h);
        wk_xfer_close(k);
        return;
    }
    /* Header and blob in one buffer, written as the socket takes it. */
    k->buf = wk_alloc(x->w, (size_t)blen + WK_XFER_HDR);
    if (k->buf == NULL) {
        wk_free(x->w, blob);
        x->h.done(x->h.arg, ticket, false);
        wk_xfer_close(k);
        return;
    }
    wk_xfer_hdr_put(k->buf, k->kind, UA_GOOD, blen);
    memcpy(k->buf + WK_XFER_HDR, blob, blen);
    wk_free(x->w, blob);
    k->len = blen + WK_XFER_HDR;
    k->pos = 0;
    k->cookie = ticket;
    k->state = WK_XS_O_SEND;
    x->served++;
    if (wk_xfer_watch(k, EV_WRITE) != 0) {
        x->h.done(x->h.arg, ticket, false);
        wk_xfer_close(k);
        return;
    }
    wk_xfer_owner_io(k, EV_WRITE);
}

static void
wk_xfer_owner_io(struct wk_xfer_link *k, short what)
{
    struct wk_xfer *x = k->x;
    uint32_t        kind, status, len;
    uint8_t         ack;
    ssize_t         r;
    int             rc;

    switch (k->state) {
    case WK_XS_O_HDR:
        rc = wk_xfer_fill(k, k->hdr, WK_XFER_HDR);
        if (rc < 0) {
            wk_xfer_close(k);
            return;
        }
        if (rc == 0)
            return;
        if (!wk_xfer_hdr_get(k->hdr, &kind, &status, &len)
            || len > WK_XFER_CLAIM_MAX) {
            x->failed++;
            wk_xfer_close(k);
            return;
        }
        k->kind = kind;
        k->len = len;
        k->pos = 0;
        k->buf = len > 0 ? wk_alloc(x->w, len) : NULL;
        if (len > 0 && k->buf == NULL) {
            wk_xfer_close(k);
            return;
        }
        k->state = WK_XS_O_BODY;
        /* fall through */
    case WK_XS_O_BODY:
        rc = k->len > 0 ? wk_xfer_fill(k, k->buf, k->len) : 1;
        if (rc < 0) {
            wk_xfer_close(k);
            return;
        }
        if (rc > 0)
            wk_xfer_serve(k);
        return;
    case WK_XS_O_SEND:
        if (!(what & EV_WRITE))
            return;
        while (k->pos < k->len) {
            r = write(k->fd, k->buf + k->pos, k->len - k->pos);
            if (r > 0) {
                k->pos += (uint32_t)r;
                x->bytes_out += (uint64_t)r;
                continue;
            }
            if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK
                            || errno == EINTR))
                return;
            x->h.done(x->h.arg, k->cookie, false);
            wk_xfer_close(k);
            return;
        }
        wk_free(x->w, k->buf);
        k->buf = NULL;
        k->state = WK_XS_O_ACK;
        if (wk_xfer_watch(k, EV_READ) != 0) {
            x->h.done(x->h.arg, k->cookie, false);
            wk_xfer_close(k);
        }
        return;
    case WK_XS_O_ACK:
        r = read(k->fd, &ack, 1);
        if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK
                        || errno == EINTR))
            return;
        x->h.done(x->h.arg, k->cookie, r == 1 && ack == 1);
        wk_xfer_close(k);
        return;
    default:
        wk_xfer_close(k);
        return;
    }
}

static void
wk_xfer_on_io(evutil_socket_t fd, short what, void *arg)
{
    struct wk_xfer_link *k = arg;

    (void)fd;
    wk_loop_iteration(k->x->loop);
    if (k->state == WK_XS_C_HDR || k->state == WK_XS_C_BODY)
        wk_xfer_claimer_io(k);
    else
        wk_xfer_owner_io(k, what);
}
