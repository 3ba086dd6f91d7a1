/*
 * worker/roam.c: sessions that move between workers (worker/roam.h,
 * docs/architecture.md §11): the claims this worker makes for held
 * ActivateSession requests, the hand-overs it serves, the forwarding
 * table, the session's part of the blob.
 *
 * Blob (WK_ROAM_VERSION, little-endian):
 *   u32 version, u8 type
 *   type 2 (forward): u8 slot: ask that worker instead
 *   type 1 (session): sessionId 16, token 16, nonce 32, u8 activated,
 *     u8 user, u32 timeout_ms, u32 max_response, u64 client_key,
 *     u64 registered, u8 name_len + name, u8 user_id_len + user_id
 *     (version 2: who activated it, ClientUserId), u16 cert_len + cert,
 *     thumbprint 20; then the sub layer's part (worker/sub_roam.c)
 *
 * Invariants:
 *   - pending[i] is used (state != 0) while connection pending[i].conn
 *     (generation gen) holds an ActivateSession for it; seq changes
 *     whenever the entry is taken, so a late answer for an entry reused
 *     since finds nothing (and adopts all the same: a session on this
 *     worker, unbound, is as good as one elsewhere).
 *   - moving[i] is used while the session at pool index moving[i].index
 *     (token moving[i].token) is in a hand-over; it is unbound.
 *   - fwd[] remembers where the last conf->max_sessions sessions that
 *     left went (a ring, oldest overwritten): a client may come back
 *     through a worker that forgot, then its ActivateSession fails like
 *     one for a session that timed out.
 *
 * Single-threaded, on the worker's loop.
 */
#include "roam.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "shm/log.h"
#include "xfer.h"

#define WK_ROAM_KIND_SESSION 1u
#define WK_ROAM_KIND_SUB     2u
#define WK_ROAM_KIND_PUSH    3u      /* a retiring worker: "pull this" */
#define WK_ROAM_T_SESSION    1u
#define WK_ROAM_T_FORWARD    2u
#define WK_ROAM_T_SUB        3u
#define WK_ROAM_CLAIM_LEN    (1 + 16 + 20 + 1)
#define WK_ROAM_SUB_LEN      (1 + 4 + 1)
#define WK_ROAM_PUSH_LEN     (1 + 16)
#define WK_ROAM_NOCONN       UINT32_MAX  /* a pull nobody's request waits on */
#define WK_ROAM_PULL         2u      /* claim's secured byte: a retire pull */
#define WK_ROAM_COOKIE_PUSH  (UINT64_C(1) << 63)
#define WK_ROAM_TICK_MS      100     /* a retiring worker's pace */
/* A session's notice again after, giving up (sessions lost) after:
 * server.retire_renotice_ms, retire_handover_ms (0 in a snapshot of no
 * broker, unit tests: these). */
#define WK_ROAM_RENOTICE_MS  1000
#define WK_ROAM_RETIRE_MS    5000

enum { WK_RP_FREE = 0, WK_RP_WAITING, WK_RP_DONE };

/* Count n in the worker row's field f (none in unit tests). */
#define WK_ROAM_COUNT(w, f, n)                                             \
    do {                                                                   \
        if ((w)->row != NULL)                                              \
            atomic_fetch_add_explicit(&(w)->row->f, (n),                   \
                                      memory_order_relaxed);               \
    } while (0)

struct wk_roam_pending {
    uint8_t        state;
    uint8_t        hops;
    uint8_t        secured;
    uint8_t        check;           /* a pull taken over by a request:
                                     * check thumb, secured on adoption */
    uint8_t        kind;            /* WK_ROAM_KIND_* */
    uint32_t       conn, gen;       /* conn WK_ROAM_NOCONN: a retire pull */
    uint64_t       asked;           /* SESSION: the slots asked (bits) */
    uint32_t       seq;
    struct ua_guid token;           /* the session claimed, or (SUB) the
                                     * session it goes to */
    uint8_t        thumb[20];
    ua_status      status;
    uint32_t       sub_id;          /* SUB: the one claimed now */
    uint8_t        user;
    uint8_t        retry;           /* SESSION: nobody had it while a
                                     * worker was down: asked again once
                                     * every worker is up */
    uint64_t       deadline;        /* SESSION: ms, then it fails */
    uint32_t       ntried;
    uint32_t       tried[WK_ROAM_SUB_TRIED];
};

struct wk_roam_moving {
    uint8_t        used;
    uint8_t        to;
    uint32_t       index;
    uint32_t       bytes;           /* its blob */
    struct ua_guid token;
};

struct wk_roam_fwd {
    struct ua_guid token;
    uint8_t        slot;            /* 0xFF: empty */
};

/* Where a subscription that left went (TransferSubscriptions). */
struct wk_roam_sfwd {
    uint32_t id;                    /* 0: empty */
    uint8_t  slot;
};

struct wk_roam {
    struct wk_worker        *w;
    struct wk_xfer           x;
    struct wk_roam_handlers  subs;
    struct wk_roam_pending   pending[WK_ROAM_PENDING];
    uint32_t                 seq;
    struct wk_roam_moving    moving[WK_XFER_LINKS];
    struct wk_roam_fwd      *fwd;
    uint32_t                 nfwd, fwd_next;
    struct wk_roam_sfwd     *sfwd;
    uint32_t                 nsfwd, sfwd_next;
    uint32_t                 last_bytes;
    bool                     window_on;     /* subs.window told on */
    /* Retiring (wk_roam_retire): the tick, when to give up, when each
     * session (pool index) was last pushed, the next peer to try. */
    bool                     retiring, tick_on;
    struct event             tick;
    struct wk_loop          *loop;
    uint64_t                 retire_end;
    uint32_t                 renotice_ms;
    uint64_t                *noticed;
    unsigned                 next_peer;
    void                   (*retired)(void *arg);
    void                    *retired_arg;
    /* Claims waiting for a worker to come up (wk_roam_on_retry). */
    bool                     retry_on;
    struct event             retry;
};

static bool wk_roam_grow(struct wk_roam_buf *b, uint32_t n);
static int wk_roam_fwd_find(const struct wk_roam *r, const struct ua_guid *t);
static void wk_roam_fwd_add(struct wk_roam *r, const struct ua_guid *t,
                            uint8_t slot);
static int wk_roam_sfwd_find(const struct wk_roam *r, uint32_t id);
static void wk_roam_sfwd_add(struct wk_roam *r, uint32_t id, uint8_t slot);
static int wk_roam_send(struct wk_roam *r, struct wk_roam_pending *p,
                        unsigned slot);
static void wk_roam_pack_session(const struct wk_session *s,
                                 struct wk_roam_buf *b);
static void wk_roam_unpack_session(struct wk_session *s,
                                   struct wk_roam_buf *b);
static bool wk_roam_adopt(struct wk_roam *r, struct wk_roam_buf *b);
static ua_status wk_roam_serve(void *arg, uint32_t kind, const uint8_t *body,
                               uint32_t len, uint8_t **blob,
                               uint32_t *blob_len, uint64_t *ticket);
static void wk_roam_done(void *arg, uint64_t ticket, bool adopted);
static int wk_roam_scan(struct wk_roam *r, struct wk_roam_pending *p);
static bool wk_roam_sec_ok(const struct wk_session *s, const uint8_t *thumb,
                           uint8_t secured);
static ua_status wk_roam_serve_push(struct wk_roam *r, const uint8_t *body,
                                    uint32_t len, uint8_t **blob,
                                    uint32_t *blob_len);
static uint64_t wk_roam_ms(void);
static void wk_roam_on_tick(evutil_socket_t fd, short what, void *arg);
static void wk_roam_window(struct wk_roam *r, bool on);
static bool wk_roam_answer(void *arg, uint64_t cookie, ua_status st,
                           const uint8_t *blob, uint32_t len);
static bool wk_roam_someone_down(const struct wk_roam *r);
static bool wk_roam_wait_up(struct wk_roam *r, struct wk_roam_pending *p);
static void wk_roam_on_retry(evutil_socket_t fd, short what, void *arg);

/* ------------------------------------------------------------------ */
/* the blob                                                            */
/* ------------------------------------------------------------------ */

static bool
wk_roam_grow(struct wk_roam_buf *b, uint32_t n)
{
    uint8_t *p;
    uint64_t want = (uint64_t)b->len + n, cap = b->cap ? b->cap : 4096;

    if (b->bad)
        return false;
    if (want <= b->cap)
        return true;
    if (want > b->max) {
        b->bad = true;
        return false;
    }
    while (cap < want)
        cap *= 2;
    if (cap > b->max)
        cap = b->max;
    p = wk_alloc(b->w, (size_t)cap);
    if (p == NULL) {
        b->bad = true;
        return false;
    }
    if (b->len > 0)
        memcpy(p, b->p, b->len);
    wk_free(b->w, b->p);
    b->p = p;
    b->cap = (uint32_t)cap;
    return true;
}

/* wk_roam_put's slow path (worker/roam.h): the buffer grows, or b is
 * bad already. */
void
wk_roam_put_grow(struct wk_roam_buf *b, const void *p, uint32_t n)
{
    if (n == 0 || !wk_roam_grow(b, n))
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

const uint8_t *
wk_roam_get_span(struct wk_roam_buf *b, uint32_t n)
{
    const uint8_t *p;

    if (b->bad || n > b->len - b->pos) {
        b->bad = true;
        return NULL;
    }
    p = b->p + b->pos;
    b->pos += n;
    return p;
}

void
wk_roam_get(struct wk_roam_buf *b, void *p, uint32_t n)
{
    const uint8_t *s = wk_roam_get_span(b, n);

    if (s != NULL)
        memcpy(p, s, n);
    else
        memset(p, 0, n);
}

uint8_t
wk_roam_get_u8(struct wk_roam_buf *b)
{
    uint8_t v;

    wk_roam_get(b, &v, 1);
    return v;
}

uint16_t
wk_roam_get_u16(struct wk_roam_buf *b)
{
    uint16_t v;

    wk_roam_get(b, &v, 2);
    return v;
}

uint32_t
wk_roam_get_u32(struct wk_roam_buf *b)
{
    uint32_t v;

    wk_roam_get(b, &v, 4);
    return v;
}

uint64_t
wk_roam_get_u64(struct wk_roam_buf *b)
{
    uint64_t v;

    wk_roam_get(b, &v, 8);
    return v;
}

double
wk_roam_get_f64(struct wk_roam_buf *b)
{
    double v;

    wk_roam_get(b, &v, 8);
    return v;
}

static void
wk_roam_pack_session(const struct wk_session *s, struct wk_roam_buf *b)
{
    wk_roam_put(b, &s->id, 16);
    wk_roam_put(b, &s->token, 16);
    wk_roam_put(b, s->nonce, WK_SESSION_NONCE);
    wk_roam_put_u8(b, s->activated);
    wk_roam_put_u8(b, s->user);
    wk_roam_put_u32(b, s->timeout_ms);
    wk_roam_put_u32(b, s->max_response);
    wk_roam_put_u64(b, s->client_key);
    wk_roam_put_u64(b, s->registered);
    wk_roam_put_u8(b, s->name_len);
    wk_roam_put(b, s->name, s->name_len);
    wk_roam_put_u8(b, (uint8_t)strnlen(s->user_id, sizeof(s->user_id) - 1));
    wk_roam_put(b, s->user_id, strnlen(s->user_id, sizeof(s->user_id) - 1));
    wk_roam_put_u16(b, s->cert_len);
    wk_roam_put(b, s->cert, s->cert_len);
    wk_roam_put(b, s->cert_thumb, sizeof(s->cert_thumb));
}

static void
wk_roam_unpack_session(struct wk_session *s, struct wk_roam_buf *b)
{
    uint8_t n = 0;

    wk_roam_get(b, &s->id, 16);
    wk_roam_get(b, &s->token, 16);
    wk_roam_get(b, s->nonce, WK_SESSION_NONCE);
    s->activated = wk_roam_get_u8(b) != 0;
    s->user = wk_roam_get_u8(b);
    s->timeout_ms = wk_roam_get_u32(b);
    s->max_response = wk_roam_get_u32(b);
    s->client_key = wk_roam_get_u64(b);
    s->registered = wk_roam_get_u64(b);
    s->name_len = wk_roam_get_u8(b);
    if (s->name_len > sizeof(s->name))
        b->bad = true;
    else
        wk_roam_get(b, s->name, s->name_len);
    if (b->version >= 2)
        n = wk_roam_get_u8(b);      /* version 1 had none */
    if (n >= sizeof(s->user_id))
        b->bad = true;
    else
        wk_roam_get(b, s->user_id, n);
    s->user_id[n < sizeof(s->user_id) ? n : 0] = '\0';
    s->cert_len = wk_roam_get_u16(b);
    if (s->cert_len > sizeof(s->cert))
        b->bad = true;
    else
        wk_roam_get(b, s->cert, s->cert_len);
    wk_roam_get(b, s->cert_thumb, sizeof(s->cert_thumb));
    if (s->user > WK_USER_OPERATOR)
        b->bad = true;
}

/* ------------------------------------------------------------------ */
/* set-up                                                              */
/* ------------------------------------------------------------------ */

int
wk_roam_init(struct wk_worker *w, struct wk_loop *l)
{
    const struct wk_xfer_handlers h = {
        .serve = wk_roam_serve,
        .done = wk_roam_done,
        .answer = wk_roam_answer,
    };
    struct wk_xfer_handlers hh = h;
    struct wk_roam         *r;
    int                     rc;

    r = wk_alloc(w, sizeof(*r));
    if (r == NULL)
        return -ENOMEM;
    memset(r, 0, sizeof(*r));
    r->w = w;
    r->nfwd = w->conf->max_sessions;
    r->fwd = wk_alloc(w, (size_t)r->nfwd * sizeof(*r->fwd));
    if (r->fwd == NULL) {
        wk_free(w, r);
        return -ENOMEM;
    }
    memset(r->fwd, 0xFF, (size_t)r->nfwd * sizeof(*r->fwd));
    r->nsfwd = w->conf->max_subscriptions > 0 ? w->conf->max_subscriptions
                                              : 1;
    r->sfwd = wk_alloc(w, (size_t)r->nsfwd * sizeof(*r->sfwd));
    if (r->sfwd == NULL) {
        wk_free(w, r->fwd);
        wk_free(w, r);
        return -ENOMEM;
    }
    memset(r->sfwd, 0, (size_t)r->nsfwd * sizeof(*r->sfwd));
    hh.arg = r;
    r->loop = l;
    rc = wk_xfer_init(&r->x, w, l, &hh);
    if (rc != 0) {
        wk_free(w, r->sfwd);
        wk_free(w, r->fwd);
        wk_free(w, r);
        return rc;
    }
    w->roam = r;
    return 0;
}

void
wk_roam_fini(struct wk_worker *w)
{
    struct wk_roam *r = w->roam;

    if (r == NULL)
        return;
    if (r->tick_on)
        evtimer_del(&r->tick);
    if (r->retry_on)
        evtimer_del(&r->retry);
    wk_free(w, r->noticed);
    wk_xfer_clear(&r->x);
    wk_free(w, r->sfwd);
    wk_free(w, r->fwd);
    wk_free(w, r);
    w->roam = NULL;
}

int
wk_roam_on_subs(struct wk_worker *w, const struct wk_roam_handlers *h)
{
    if (w->roam == NULL)
        return -EINVAL;
    w->roam->subs = *h;
    return 0;
}

bool
wk_roam_moving(const struct wk_worker *w, const struct wk_session *s)
{
    const struct wk_roam *r = w->roam;

    if (r == NULL)
        return false;
    for (unsigned i = 0; i < WK_XFER_LINKS; i++)
        if (r->moving[i].used && r->moving[i].index == s->index)
            return true;
    return false;
}

void
wk_roam_lost(struct wk_worker *w, uint64_t n)
{
    if (w->row != NULL && n > 0)
        WK_ROAM_COUNT(w, session_move_values_lost, n);
}

void
wk_roam_events(struct wk_worker *w, uint64_t carried, uint64_t lost)
{
    if (carried > 0)
        WK_ROAM_COUNT(w, session_move_events, carried);
    if (lost > 0)
        WK_ROAM_COUNT(w, session_move_events_lost, lost);
}

/* The sub layer's window (wk_roam_handlers.window): on before a claim is
 * sent, off once no claim waits. */
static void
wk_roam_window(struct wk_roam *r, bool on)
{
    if (!on)
        for (unsigned i = 0; i < WK_ROAM_PENDING; i++)
            if (r->pending[i].state == WK_RP_WAITING)
                return;
    if (on != r->window_on && r->subs.window != NULL)
        r->subs.window(r->subs.arg, on);
    r->window_on = on;
}

uint32_t
wk_roam_last_bytes(const struct wk_worker *w)
{
    return w->roam != NULL ? w->roam->last_bytes : 0;
}

/* ------------------------------------------------------------------ */
/* forwarding                                                          */
/* ------------------------------------------------------------------ */

/* Where the session of token t went, or -1.  A scan: claims are rare. */
static int
wk_roam_fwd_find(const struct wk_roam *r, const struct ua_guid *t)
{
    for (uint32_t i = 0; i < r->nfwd; i++)
        if (r->fwd[i].slot != 0xFF
            && ua_crypto_memeq(&r->fwd[i].token, t, sizeof(*t)))
            return r->fwd[i].slot;
    return -1;
}

static void
wk_roam_fwd_add(struct wk_roam *r, const struct ua_guid *t, uint8_t slot)
{
    for (uint32_t i = 0; i < r->nfwd; i++)
        if (r->fwd[i].slot != 0xFF
            && ua_crypto_memeq(&r->fwd[i].token, t, sizeof(*t))) {
            r->fwd[i].slot = slot;
            return;
        }
    r->fwd[r->fwd_next].token = *t;
    r->fwd[r->fwd_next].slot = slot;
    r->fwd_next = (r->fwd_next + 1) % r->nfwd;
}

static int
wk_roam_sfwd_find(const struct wk_roam *r, uint32_t id)
{
    for (uint32_t i = 0; i < r->nsfwd; i++)
        if (r->sfwd[i].id == id && id != 0)
            return r->sfwd[i].slot;
    return -1;
}

static void
wk_roam_sfwd_add(struct wk_roam *r, uint32_t id, uint8_t slot)
{
    for (uint32_t i = 0; i < r->nsfwd; i++)
        if (r->sfwd[i].id == id) {
            r->sfwd[i].slot = slot;
            return;
        }
    r->sfwd[r->sfwd_next].id = id;
    r->sfwd[r->sfwd_next].slot = slot;
    r->sfwd_next = (r->sfwd_next + 1) % r->nsfwd;
}

/* ------------------------------------------------------------------ */
/* the claimer                                                         */
/* ------------------------------------------------------------------ */

/* Ask the worker in slot for p's session.  0 or -errno. */
static int
wk_roam_send(struct wk_roam *r, struct wk_roam_pending *p, unsigned slot)
{
    uint8_t  body[WK_ROAM_CLAIM_LEN];
    uint64_t cookie = (uint64_t)(p - r->pending) | ((uint64_t)p->seq << 32);

    wk_roam_window(r, true);
    body[0] = (uint8_t)r->w->slot;
    if (p->kind == WK_ROAM_KIND_SUB) {
        memcpy(body + 1, &p->sub_id, 4);
        body[5] = p->user;
        return wk_xfer_claim(&r->x, slot, WK_ROAM_KIND_SUB, body,
                             WK_ROAM_SUB_LEN, cookie);
    }
    if (slot < 64)
        p->asked |= UINT64_C(1) << slot;
    memcpy(body + 1, &p->token, 16);
    memcpy(body + 17, p->thumb, 20);
    body[37] = p->secured;
    return wk_xfer_claim(&r->x, slot, WK_ROAM_KIND_SESSION, body,
                         sizeof(body), cookie);
}

ua_status
wk_roam_claim(struct wk_worker *w, const struct wk_conn_req *rq,
              const struct ua_nodeid *token, const uint8_t *peer_thumb,
              bool secured, bool *wait)
{
    struct wk_roam         *r = w->roam;
    struct wk_roam_pending *p = NULL, *fr = NULL;
    int                     slot, rc;

    *wait = false;
    if (r == NULL || rq == NULL)
        return UA_BAD_SESSION_ID_INVALID;
    for (unsigned i = 0; i < WK_ROAM_PENDING; i++) {
        struct wk_roam_pending *q = &r->pending[i];

        if (q->state == WK_RP_FREE) {
            if (fr == NULL)
                fr = q;
            continue;
        }
        if (q->conn == rq->conn && q->gen == rq->gen) {
            p = q;
            continue;
        }
        /* A retire pull of this very session (its client came back
         * first): this request waits on it, and checks the channel's
         * security once the session is here. */
        if (q->state == WK_RP_WAITING && q->kind == WK_ROAM_KIND_SESSION
            && q->conn == WK_ROAM_NOCONN && token->idtype == UA_IDTYPE_GUID
            && ua_crypto_memeq(&q->token, &token->id.guid, 16)) {
            q->conn = rq->conn;
            q->gen = rq->gen;
            q->check = 1;
            q->secured = secured;
            memset(q->thumb, 0, sizeof(q->thumb));
            if (peer_thumb != NULL)
                memcpy(q->thumb, peer_thumb, sizeof(q->thumb));
            *wait = true;
            return UA_GOOD;
        }
        /* Two channels activating one session at once: the first claim
         * goes on, the second is refused and disturbs nothing. */
        if (q->state == WK_RP_WAITING && q->kind == WK_ROAM_KIND_SESSION
            && token->idtype == UA_IDTYPE_GUID
            && ua_crypto_memeq(&q->token, &token->id.guid, 16)) {
            WK_ROAM_COUNT(w, session_moves_failed, 1);
            return UA_BAD_SESSION_ID_INVALID;
        }
    }
    if (p != NULL) {
        if (p->state == WK_RP_WAITING) {
            *wait = true;           /* woken too early */
            return UA_GOOD;
        }
        return p->status;           /* Good: look it up again */
    }
    slot = wk_session_token_slot(w, token);
    /* Where we sent it ourselves is newer than where it was created. */
    if (slot >= 0) {
        int f = wk_roam_fwd_find(r, &token->id.guid);

        if (f >= 0 || slot == (int)w->slot)
            slot = f;
    }
    if (fr == NULL || wk_session_token_slot(w, token) < 0) {
        shm_log(SHM_LOG_INFO, "session claim: nowhere to ask (slot %d)",
                slot);
        return UA_BAD_SESSION_ID_INVALID;
    }
    memset(fr, 0, sizeof(*fr));
    fr->kind = WK_ROAM_KIND_SESSION;
    fr->conn = rq->conn;
    fr->gen = rq->gen;
    fr->seq = ++r->seq;
    fr->token = token->id.guid;
    fr->secured = secured;
    fr->deadline = wk_roam_ms() + w->conf->session_move_timeout_ms;
    if (peer_thumb != NULL)
        memcpy(fr->thumb, peer_thumb, sizeof(fr->thumb));
    /* Created here (a predecessor in this slot retired: no forwards), or
     * its creator is gone or does not answer: every other worker once. */
    rc = slot < 0 || slot == (int)w->slot ? -ENOENT
                                          : wk_roam_send(r, fr,
                                                         (unsigned)slot);
    if (rc != 0)
        rc = wk_roam_scan(r, fr);
    if (rc != 0 && wk_roam_wait_up(r, fr)) {
        *wait = true;               /* a worker is down: wait for it */
        return UA_GOOD;
    }
    if (rc != 0) {
        shm_log(SHM_LOG_INFO, "session claim to worker %d: %s", slot,
                strerror(-rc));
        memset(fr, 0, sizeof(*fr));
        WK_ROAM_COUNT(w, session_moves_failed, 1);
        return UA_BAD_SESSION_ID_INVALID;
    }
    fr->state = WK_RP_WAITING;
    *wait = true;
    return UA_GOOD;
}

ua_status
wk_roam_claim_sub(struct wk_worker *w, const struct wk_conn_req *rq,
                  struct wk_session *s, uint32_t sub_id, bool *wait)
{
    struct wk_roam         *r = w->roam;
    struct wk_roam_pending *p = NULL, *fr = NULL;
    unsigned                slot = sub_id >> 26;    /* WK_SUB_ID_BITS */
    ua_status               st;

    *wait = false;
    if (r == NULL || rq == NULL || s == NULL || r->subs.pack_sub == NULL)
        return UA_BAD_SUBSCRIPTION_ID_INVALID;
    for (unsigned i = 0; i < WK_ROAM_PENDING; i++) {
        struct wk_roam_pending *q = &r->pending[i];

        if (q->state == WK_RP_FREE) {
            if (fr == NULL)
                fr = q;
        } else if (q->conn == rq->conn && q->gen == rq->gen) {
            p = q;
        }
    }
    if (p != NULL && p->kind != WK_ROAM_KIND_SUB)
        return UA_BAD_SUBSCRIPTION_ID_INVALID;
    if (p != NULL && p->state == WK_RP_WAITING) {
        *wait = true;
        return UA_GOOD;
    }
    if (p != NULL) {
        for (uint32_t k = 0; k < p->ntried; k++)
            if (p->tried[k] == sub_id) {
                st = p->sub_id == sub_id ? p->status
                                         : UA_BAD_SUBSCRIPTION_ID_INVALID;
                return st;
            }
        if (p->ntried == WK_ROAM_SUB_TRIED)
            return UA_BAD_SUBSCRIPTION_ID_INVALID;
    }
    {
        int f = wk_roam_sfwd_find(r, sub_id);  /* it left us: to where */

        if (f >= 0)
            slot = (unsigned)f;
    }
    if (slot == w->slot || slot >= 64
        || (w->conf->workers != 0 && slot >= w->conf->workers))
        return UA_BAD_SUBSCRIPTION_ID_INVALID;
    if (p == NULL) {
        if (fr == NULL)
            return UA_BAD_SUBSCRIPTION_ID_INVALID;
        p = fr;
        memset(p, 0, sizeof(*p));
        p->kind = WK_ROAM_KIND_SUB;
        p->conn = rq->conn;
        p->gen = rq->gen;
    }
    p->seq = ++r->seq;
    p->token = s->token;
    p->user = s->user;
    p->sub_id = sub_id;
    p->tried[p->ntried++] = sub_id;
    p->status = UA_BAD_SUBSCRIPTION_ID_INVALID;
    if (wk_roam_send(r, p, slot) != 0) {
        p->state = WK_RP_DONE;
        return UA_BAD_SUBSCRIPTION_ID_INVALID;
    }
    p->state = WK_RP_WAITING;
    *wait = true;
    return UA_GOOD;
}

void
wk_roam_release(struct wk_worker *w, uint32_t conn)
{
    struct wk_roam *r = w->roam;

    if (r == NULL)
        return;
    for (unsigned i = 0; i < WK_ROAM_PENDING; i++)
        if (r->pending[i].state != WK_RP_FREE && r->pending[i].conn == conn)
            memset(&r->pending[i], 0, sizeof(r->pending[i]));
    wk_roam_window(r, false);
}

/* A session blob (after its type byte): adopt it.  True when done. */
static bool
wk_roam_adopt(struct wk_roam *r, struct wk_roam_buf *b)
{
    struct wk_worker  *w = r->w;
    struct wk_session *s = wk_roam_session_adopt(w, b, &r->subs);

    if (s == NULL)
        return false;
    r->last_bytes = b->len;
    WK_ROAM_COUNT(w, sessions_moved_in, 1);
    shm_log(SHM_LOG_INFO, "session %08x moved here (%u bytes)",
            (unsigned)s->token.data1, (unsigned)b->len);
    return true;
}

void
wk_roam_session_pack(const struct wk_session *s, struct wk_roam_buf *b)
{
    wk_roam_pack_session(s, b);
}

struct wk_session *
wk_roam_session_adopt(struct wk_worker *w, struct wk_roam_buf *b,
                      const struct wk_roam_handlers *subs)
{
    struct wk_session  tmp, *s;

    memset(&tmp, 0, sizeof(tmp));
    wk_roam_unpack_session(&tmp, b);
    if (b->bad || !tmp.activated)
        return NULL;
    if (wk_session_find_by_token(w, &(struct ua_nodeid){
            .ns = 0, .idtype = UA_IDTYPE_GUID, .id.guid = tmp.token })
        != NULL)
        return NULL;                /* here already (cannot happen) */
    s = wk_session_adopt(w, &tmp);
    explicit_bzero(tmp.nonce, sizeof(tmp.nonce));
    if (s == NULL) {
        shm_log(SHM_LOG_WARNING, "a session cannot move here: no room");
        return NULL;
    }
    if (subs->unpack != NULL && subs->unpack(subs->arg, s, b) != 0) {
        shm_log(SHM_LOG_WARNING, "a session cannot move here: its "
                "subscriptions do not fit (or are malformed)");
        wk_session_close(w, s);
        return NULL;
    }
    if (b->bad) {
        wk_session_closing(w, s, true);
        wk_session_close(w, s);
        return NULL;
    }
    return s;
}

static bool
wk_roam_answer(void *arg, uint64_t cookie, ua_status st,
               const uint8_t *blob, uint32_t len)
{
    struct wk_roam         *r = arg;
    struct wk_worker       *w = r->w;
    uint32_t                i = (uint32_t)cookie;
    struct wk_roam_pending *p = NULL;
    struct wk_roam_buf      b = { .w = w, .p = (uint8_t *)blob, .len = len,
                                  .max = len };
    bool                    adopted = false;
    uint8_t                 type;
    uint32_t                version;

    if (cookie & WK_ROAM_COOKIE_PUSH)
        return false;               /* a notice: the peer pulls */
    if (i < WK_ROAM_PENDING && r->pending[i].state == WK_RP_WAITING
        && r->pending[i].seq == (uint32_t)(cookie >> 32))
        p = &r->pending[i];
    if (st == UA_GOOD) {
        /* Version 1 (no user id) from a worker of the previous release:
         * a rolling restart upgrades one worker at a time. */
        version = wk_roam_get_u32(&b);
        if (version != WK_ROAM_VERSION && version != 1)
            b.bad = true;
        b.version = version;
        type = wk_roam_get_u8(&b);
        if (!b.bad && type == WK_ROAM_T_FORWARD) {
            uint8_t to = wk_roam_get_u8(&b);

            if (p != NULL && !b.bad && to == w->slot) {
                /* It was here and went on: where we sent it. */
                int f = p->kind == WK_ROAM_KIND_SUB
                            ? wk_roam_sfwd_find(r, p->sub_id)
                            : wk_roam_fwd_find(r, &p->token);

                to = f >= 0 ? (uint8_t)f : (uint8_t)w->slot;
            }
            if (p != NULL && !b.bad && to != w->slot
                && p->hops < WK_ROAM_HOPS) {
                p->hops++;
                if (wk_roam_send(r, p, to) == 0)
                    return false;   /* still waiting */
            }
            st = UA_BAD_SESSION_ID_INVALID;
        } else if (!b.bad && type == WK_ROAM_T_SESSION) {
            adopted = wk_roam_adopt(r, &b);
            st = adopted ? UA_GOOD : UA_BAD_SESSION_ID_INVALID;
            if (adopted && p != NULL && p->check) {
                struct ua_nodeid t = { .ns = 0, .idtype = UA_IDTYPE_GUID,
                                       .id.guid = p->token };
                struct wk_session *s = wk_session_find_by_token(w, &t);

                /* Here now, unbound; the channel that waited on the pull
                 * must be one the owner would have handed it to. */
                if (s != NULL && !wk_roam_sec_ok(s, p->thumb, p->secured))
                    st = UA_BAD_SECURITY_CHECKS_FAILED;
            }
        } else if (!b.bad && type == WK_ROAM_T_SUB) {
            struct ua_nodeid   t = { .ns = 0, .idtype = UA_IDTYPE_GUID };
            struct wk_session *s = NULL;

            if (p != NULL) {
                t.id.guid = p->token;
                s = wk_session_find_by_token(w, &t);
            }
            /* Only for a session still here (else the owner keeps it). */
            adopted = s != NULL && r->subs.unpack_sub != NULL
                      && r->subs.unpack_sub(r->subs.arg, s, &b) == 0;
            st = adopted ? UA_GOOD : UA_BAD_SUBSCRIPTION_ID_INVALID;
        } else {
            st = UA_BAD_SESSION_ID_INVALID;
        }
    } else if (p != NULL && p->kind == WK_ROAM_KIND_SUB) {
        shm_log(SHM_LOG_INFO, "subscription claim answered %s",
                ua_status_name(st));
        if (st != UA_BAD_USER_ACCESS_DENIED)
            st = UA_BAD_SUBSCRIPTION_ID_INVALID;
    } else {
        shm_log(SHM_LOG_INFO, "session claim answered %s",
                ua_status_name(st));
        if (st != UA_BAD_SECURITY_CHECKS_FAILED)
            st = UA_BAD_SESSION_ID_INVALID;
    }
    /* Not found where it was asked for: every other worker once (its
     * creator retired, or is gone). */
    if (st == UA_BAD_SESSION_ID_INVALID && p != NULL && !adopted
        && p->kind == WK_ROAM_KIND_SESSION && p->conn != WK_ROAM_NOCONN
        && (wk_roam_scan(r, p) == 0 || wk_roam_wait_up(r, p)))
        return false;
    if (st != UA_GOOD) {
        WK_ROAM_COUNT(w, session_moves_failed, 1);
        shm_log(SHM_LOG_INFO, "a %s claim failed: %s",
                p != NULL && p->kind == WK_ROAM_KIND_SUB ? "subscription"
                                                        : "session",
                ua_status_name(st));
    }
    if (p != NULL && p->conn == WK_ROAM_NOCONN) {
        memset(p, 0, sizeof(*p));   /* a pull: nobody waits on it */
    } else if (p != NULL) {
        p->status = st;
        p->state = WK_RP_DONE;
        wk_conn_wake(w->conns, p->conn, p->gen);
    }
    wk_roam_window(r, false);
    return adopted;
}

/* ------------------------------------------------------------------ */
/* the owner                                                           */
/* ------------------------------------------------------------------ */

static ua_status
wk_roam_serve(void *arg, uint32_t kind, const uint8_t *body, uint32_t len,
              uint8_t **blob, uint32_t *blob_len, uint64_t *ticket)
{
    struct wk_roam     *r = arg;
    struct wk_worker   *w = r->w;
    struct ua_nodeid    tok = { .ns = 0, .idtype = UA_IDTYPE_GUID };
    struct wk_session  *s;
    struct wk_roam_buf  b = { .w = w, .max = w->conf->max_session_move_bytes };
    struct wk_roam_moving *m = NULL;
    uint8_t             from, secured;
    const uint8_t      *thumb;
    int                 fwd;

    *blob = NULL;
    *blob_len = 0;
    *ticket = 0;
    if (b.max == 0)
        b.max = 16u << 20;
    if (kind == WK_ROAM_KIND_SUB && len == WK_ROAM_SUB_LEN
        && r->subs.pack_sub != NULL && body[0] < 64 && body[0] != w->slot) {
        uint32_t  id;
        ua_status st;

        memcpy(&id, body + 1, 4);
        wk_roam_put_u32(&b, WK_ROAM_VERSION);
        wk_roam_put_u8(&b, WK_ROAM_T_SUB);
        st = r->subs.pack_sub(r->subs.arg, id, body[5], &b, ticket);
        if (st == UA_BAD_SUBSCRIPTION_ID_INVALID) {
            fwd = wk_roam_sfwd_find(r, id);
            if (fwd >= 0) {
                b.len = 0;
                wk_roam_put_u32(&b, WK_ROAM_VERSION);
                wk_roam_put_u8(&b, WK_ROAM_T_FORWARD);
                wk_roam_put_u8(&b, (uint8_t)fwd);
                if (!b.bad) {
                    *ticket = 0;
                    *blob = b.p;
                    *blob_len = b.len;
                    return UA_GOOD;
                }
            }
        }
        if (st == UA_GOOD && b.bad) {
            r->subs.done_sub(r->subs.arg, *ticket, false);
            st = UA_BAD_RESPONSE_TOO_LARGE;
        }
        if (st != UA_GOOD) {
            wk_free(w, b.p);
            *ticket = 0;
            return st;
        }
        /* Tickets of subscriptions above the sessions' range: the sub
         * layer's (8 bits), the id, the claimer's slot. */
        *ticket = (*ticket & 0xFF) | ((uint64_t)id << 8)
                  | ((uint64_t)body[0] << 40) | (UINT64_C(1) << 63);
        r->last_bytes = b.len;
        *blob = b.p;
        *blob_len = b.len;
        return UA_GOOD;
    }
    if (kind == WK_ROAM_KIND_PUSH)
        return wk_roam_serve_push(r, body, len, blob, blob_len);
    if (kind != WK_ROAM_KIND_SESSION || len != WK_ROAM_CLAIM_LEN)
        return UA_BAD_INVALID_ARGUMENT;
    from = body[0];
    memcpy(&tok.id.guid, body + 1, 16);
    thumb = body + 17;
    secured = body[37];
    if (from >= 64 || from == w->slot)
        return UA_BAD_INVALID_ARGUMENT;
    s = wk_session_find_by_token(w, &tok);
    if (s == NULL) {
        fwd = wk_roam_fwd_find(r, &tok.id.guid);
        if (fwd < 0) {
            shm_log(SHM_LOG_INFO, "session claim by worker %u: unknown "
                    "here (forward %d)", (unsigned)from, fwd);
            return UA_BAD_SESSION_ID_INVALID;
        }
        wk_roam_put_u32(&b, WK_ROAM_VERSION);
        wk_roam_put_u8(&b, WK_ROAM_T_FORWARD);
        wk_roam_put_u8(&b, (uint8_t)fwd);
        if (b.bad) {
            wk_free(w, b.p);
            return UA_BAD_OUT_OF_MEMORY;
        }
        *blob = b.p;
        *blob_len = b.len;
        return UA_GOOD;
    }
    if (!s->activated || wk_roam_moving(w, s)) {
        shm_log(SHM_LOG_INFO, "session claim by worker %u refused: %s",
                (unsigned)from, s->activated ? "moving" : "not activated");
        return UA_BAD_SESSION_ID_INVALID;
    }
    /* Part 4 §5.7.3: a secured session moves only to a channel of its
     * client's certificate; an unsecured one never to a secured channel
     * (nor back).  A retiring worker's pull has no channel: only while
     * this worker retires (its sessions go to peers, no client asked). */
    if (secured == WK_ROAM_PULL ? !r->retiring
                                : !wk_roam_sec_ok(s, thumb, secured))
        return UA_BAD_SECURITY_CHECKS_FAILED;
    for (unsigned i = 0; i < WK_XFER_LINKS; i++)
        if (!r->moving[i].used) {
            m = &r->moving[i];
            break;
        }
    if (m == NULL)
        return UA_BAD_SESSION_ID_INVALID;
    wk_roam_put_u32(&b, WK_ROAM_VERSION);
    wk_roam_put_u8(&b, WK_ROAM_T_SESSION);
    wk_roam_pack_session(s, &b);
    if (r->subs.pack != NULL)
        r->subs.pack(r->subs.arg, s, &b);
    if (b.bad) {
        /* Too big to move (limits.max_session_move_bytes): it stays. */
        wk_free(w, b.p);
        shm_log(SHM_LOG_WARNING, "session too large to move to worker %u",
                (unsigned)from);
        return UA_BAD_RESPONSE_TOO_LARGE;
    }
    /* Its old channel, if any, loses it now. */
    s->channel_id = 0;
    m->used = 1;
    m->to = from;
    m->index = s->index;
    m->bytes = b.len;
    m->token = s->token;
    r->last_bytes = b.len;
    *blob = b.p;
    *blob_len = b.len;
    *ticket = (uint64_t)(m - r->moving) + 1;
    return UA_GOOD;
}

static void
wk_roam_done(void *arg, uint64_t ticket, bool adopted)
{
    struct wk_roam        *r = arg;
    struct wk_worker      *w = r->w;
    struct wk_roam_moving *m;
    struct wk_session     *s;

    if (ticket >> 63) {
        if (adopted)
            wk_roam_sfwd_add(r, (uint32_t)(ticket >> 8),
                             (uint8_t)(ticket >> 40));
        if (r->subs.done_sub != NULL)
            r->subs.done_sub(r->subs.arg, ticket & 0xFF, adopted);
        return;
    }
    if (ticket == 0 || ticket > WK_XFER_LINKS)
        return;                     /* a forward: nothing held */
    m = &r->moving[ticket - 1];
    if (!m->used)
        return;
    s = &w->sessions[m->index];
    if (adopted && s->used
        && ua_crypto_memeq(&s->token, &m->token, sizeof(s->token))) {
        wk_roam_fwd_add(r, &m->token, m->to);
        if (r->subs.sub_ids != NULL) {
            uint32_t ids[WK_ROAM_SUB_TRIED];
            uint32_t n = r->subs.sub_ids(r->subs.arg, s, ids,
                                         WK_ROAM_SUB_TRIED);

            for (uint32_t i = 0; i < n; i++)
                wk_roam_sfwd_add(r, ids[i], m->to);
        }
        /* Its subscriptions live on over there: here they go, with the
         * Publish requests of its old channel. */
        wk_session_closing(w, s, true);
        wk_session_close(w, s);
        shm_log(SHM_LOG_INFO, "session %08x moved to worker %u",
                (unsigned)m->token.data1, (unsigned)m->to);
        WK_ROAM_COUNT(w, sessions_moved_out, 1);
        WK_ROAM_COUNT(w, session_move_bytes, m->bytes);
    }
    memset(m, 0, sizeof(*m));
}

/* Would the owner hand s to a channel of thumb (secured: 0 or 1)? */
static bool
wk_roam_sec_ok(const struct wk_session *s, const uint8_t *thumb,
               uint8_t secured)
{
    if (s->cert_len > 0)
        return secured == 1
               && ua_crypto_memeq(thumb, s->cert_thumb,
                                  sizeof(s->cert_thumb));
    return secured == 0;
}

/*
 * Ask the next worker p has not asked yet (the session's creator retired
 * or is gone).  0 when a claim went out; -ENOENT when every other worker
 * was asked.  At most conf->workers - 1 claims per request.
 */
static int
wk_roam_scan(struct wk_roam *r, struct wk_roam_pending *p)
{
    unsigned n = r->w->conf->workers;

    if (n > 64)
        n = 64;
    for (unsigned s = 0; s < n; s++) {
        if (s == r->w->slot || (p->asked & (UINT64_C(1) << s)))
            continue;
        p->hops = 0;
        p->seq = ++r->seq;
        if (wk_roam_send(r, p, s) == 0)
            return 0;
        p->asked |= UINT64_C(1) << s;   /* not there: on to the next */
    }
    return -ENOENT;
}

/* Is another worker slot not serving now (dead, respawning, starting)? */
static bool
wk_roam_someone_down(const struct wk_roam *r)
{
    const struct shm_worker *rows;
    unsigned                 n = r->w->conf->workers;

    if (r->w->row == NULL)
        return false;
    rows = r->w->row - r->w->slot;
    for (unsigned i = 0; i < n && i < 64; i++)
        if (i != r->w->slot
            && atomic_load_explicit(&rows[i].state, memory_order_acquire)
                   != SHM_WS_UP)
            return true;
    return false;
}

/*
 * Nobody had p's session, but a worker is down: its successor takes over
 * what it parked (worker/park.h), so p waits (its request held) and asks
 * every worker again once they are all up, until its deadline.  True when
 * p waits.
 */
static bool
wk_roam_wait_up(struct wk_roam *r, struct wk_roam_pending *p)
{
    struct timeval tv = { 0, WK_ROAM_TICK_MS * 1000 };

    if (p->kind != WK_ROAM_KIND_SESSION || p->conn == WK_ROAM_NOCONN
        || wk_roam_ms() >= p->deadline || !wk_roam_someone_down(r))
        return false;
    if (!r->retry_on) {
        if (event_assign(&r->retry, r->w->base, -1, EV_PERSIST,
                         wk_roam_on_retry, r) != 0
            || event_add(&r->retry, &tv) != 0)
            return false;
        r->retry_on = true;
    }
    p->retry = 1;
    p->state = WK_RP_WAITING;
    return true;
}

/* The claims waiting for a worker: asked again once all are up. */
static void
wk_roam_on_retry(evutil_socket_t fd, short what, void *arg)
{
    struct wk_roam   *r = arg;
    struct wk_worker *w = r->w;
    uint64_t          now = wk_roam_ms();
    bool              down = wk_roam_someone_down(r), left = false;

    (void)fd;
    (void)what;
    wk_loop_iteration(r->loop);
    for (unsigned i = 0; i < WK_ROAM_PENDING; i++) {
        struct wk_roam_pending *p = &r->pending[i];

        if (p->state != WK_RP_WAITING || !p->retry)
            continue;
        if (now < p->deadline && down) {
            left = true;
            continue;
        }
        p->retry = 0;
        p->asked = 0;
        if (now < p->deadline && wk_roam_scan(r, p) == 0)
            continue;
        WK_ROAM_COUNT(w, session_moves_failed, 1);
        shm_log(SHM_LOG_INFO, "a session claim failed: nobody has it");
        p->status = UA_BAD_SESSION_ID_INVALID;
        p->state = WK_RP_DONE;
        wk_conn_wake(w->conns, p->conn, p->gen);
    }
    if (!left) {
        evtimer_del(&r->retry);
        r->retry_on = false;
    }
}

/* ------------------------------------------------------------------ */
/* rolling restart                                                     */
/* ------------------------------------------------------------------ */

/*
 * A retiring worker says "pull session token from me" (body: its slot,
 * the token): claim it back with the pull flag; answered at once (one
 * byte), the pull runs on its own.
 */
static ua_status
wk_roam_serve_push(struct wk_roam *r, const uint8_t *body, uint32_t len,
                   uint8_t **blob, uint32_t *blob_len)
{
    struct wk_worker       *w = r->w;
    struct ua_nodeid        tok = { .ns = 0, .idtype = UA_IDTYPE_GUID };
    struct wk_roam_pending *fr = NULL;
    uint8_t                 from;

    if (len != WK_ROAM_PUSH_LEN || body[0] >= 64 || body[0] == w->slot)
        return UA_BAD_INVALID_ARGUMENT;
    if (r->retiring || w->stopping)
        return UA_BAD_SHUTDOWN;
    from = body[0];
    memcpy(&tok.id.guid, body + 1, 16);
    for (unsigned i = 0; i < WK_ROAM_PENDING; i++) {
        struct wk_roam_pending *q = &r->pending[i];

        if (q->state == WK_RP_FREE) {
            if (fr == NULL)
                fr = q;
        } else if (q->state == WK_RP_WAITING
                   && q->kind == WK_ROAM_KIND_SESSION
                   && ua_crypto_memeq(&q->token, &tok.id.guid, 16)) {
            fr = NULL;              /* a claim of it is on its way */
            goto ok;
        }
    }
    if (wk_session_find_by_token(w, &tok) != NULL)
        goto ok;                    /* here already */
    if (fr == NULL)
        return UA_BAD_TOO_MANY_OPERATIONS;  /* the notice comes again */
    memset(fr, 0, sizeof(*fr));
    fr->kind = WK_ROAM_KIND_SESSION;
    fr->conn = WK_ROAM_NOCONN;
    fr->seq = ++r->seq;
    fr->token = tok.id.guid;
    fr->secured = WK_ROAM_PULL;
    fr->hops = WK_ROAM_HOPS;        /* straight from the retiring one */
    if (wk_roam_send(r, fr, from) != 0) {
        memset(fr, 0, sizeof(*fr));
        return UA_BAD_TOO_MANY_OPERATIONS;
    }
    fr->state = WK_RP_WAITING;
ok:
    *blob = wk_alloc(w, 1);
    if (*blob == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    (*blob)[0] = 1;
    *blob_len = 1;
    return UA_GOOD;
}

static uint64_t
wk_roam_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One step of retiring: notices for the sessions still here, or done. */
static void
wk_roam_on_tick(evutil_socket_t fd, short what, void *arg)
{
    struct wk_roam   *r = arg;
    struct wk_worker *w = r->w;
    uint64_t          now = wk_roam_ms();
    unsigned          n = w->conf->workers > 64 ? 64 : w->conf->workers;
    uint32_t          left = 0;
    bool              busy = false, moving = false;

    (void)fd;
    (void)what;
    wk_loop_iteration(r->loop);
    for (unsigned i = 0; i < WK_XFER_LINKS; i++)
        moving |= r->moving[i].used != 0;
    /* Every slot of the pool: nsessions counts the ones in use, and a
     * session may sit at any index (one that moved here takes the first
     * free slot). */
    for (uint32_t i = 0; w->sessions != NULL && i < w->conf->max_sessions;
         i++) {
        struct wk_session *s = &w->sessions[i];
        uint8_t            body[WK_ROAM_PUSH_LEN];

        if (!s->used || !s->activated)
            continue;
        left++;
        if (busy || wk_roam_moving(w, s) || n < 2
            || now - r->noticed[i] < r->renotice_ms)
            continue;
        body[0] = (uint8_t)w->slot;
        memcpy(body + 1, &s->token, 16);
        /* The next live peer, round robin. */
        for (unsigned k = 0; k < n; k++) {
            unsigned peer = (r->next_peer + k) % n;
            int      rc;

            if (peer == w->slot)
                continue;
            rc = wk_xfer_claim(&r->x, peer, WK_ROAM_KIND_PUSH, body,
                               sizeof(body), WK_ROAM_COOKIE_PUSH | i);
            if (rc == -EBUSY) {
                busy = true;        /* every link in use: next tick */
                break;
            }
            if (rc == 0) {
                r->noticed[i] = now;
                r->next_peer = peer + 1;
                break;
            }
        }
    }
    if ((left == 0 && !moving) || n < 2 || now >= r->retire_end) {
        if (left > 0)
            shm_log(SHM_LOG_WARNING, "retiring: %u session(s) not handed "
                    "over (%s): their clients start again", left,
                    n < 2 ? "no other worker" : "time is up");
        else
            shm_log(SHM_LOG_NOTICE, "retiring: every session handed over");
        evtimer_del(&r->tick);
        r->tick_on = false;
        if (r->retired != NULL)
            r->retired(r->retired_arg);
    }
}

int
wk_roam_retire(struct wk_worker *w, void (*done)(void *arg), void *arg)
{
    struct wk_roam *r = w->roam;
    struct timeval  tv = { 0, WK_ROAM_TICK_MS * 1000 };

    if (r == NULL || r->retiring)
        return -EINVAL;
    r->noticed = wk_alloc(w, (size_t)w->conf->max_sessions
                                 * sizeof(*r->noticed));
    if (r->noticed == NULL)
        return -ENOMEM;
    memset(r->noticed, 0, (size_t)w->conf->max_sessions
                              * sizeof(*r->noticed));
    r->retiring = true;
    r->retired = done;
    r->retired_arg = arg;
    r->retire_end = wk_roam_ms()
                    + (w->conf->retire_handover_ms != 0
                           ? w->conf->retire_handover_ms
                           : WK_ROAM_RETIRE_MS);
    r->renotice_ms = w->conf->retire_renotice_ms != 0
                         ? w->conf->retire_renotice_ms : WK_ROAM_RENOTICE_MS;
    r->next_peer = w->slot + 1;
    if (event_assign(&r->tick, w->base, -1, EV_PERSIST, wk_roam_on_tick, r)
            != 0
        || event_add(&r->tick, &tv) != 0) {
        r->retiring = false;
        return -ENOMEM;
    }
    r->tick_on = true;
    return 0;
}
