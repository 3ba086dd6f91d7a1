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
 *     u64 registered, u8 name_len + name, u16 cert_len + cert,
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

#include "proto/crypto.h"
#include "proto/status_gen.h"
#include "shm/log.h"
#include "xfer.h"

#define WK_ROAM_KIND_SESSION 1u
#define WK_ROAM_KIND_SUB     2u
#define WK_ROAM_T_SESSION    1u
#define WK_ROAM_T_FORWARD    2u
#define WK_ROAM_T_SUB        3u
#define WK_ROAM_CLAIM_LEN    (1 + 16 + 20 + 1)
#define WK_ROAM_SUB_LEN      (1 + 4 + 1)

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
    uint8_t        kind;            /* WK_ROAM_KIND_* */
    uint32_t       conn, gen;
    uint32_t       seq;
    struct ua_guid token;           /* the session claimed, or (SUB) the
                                     * session it goes to */
    uint8_t        thumb[20];
    ua_status      status;
    uint32_t       sub_id;          /* SUB: the one claimed now */
    uint8_t        user;
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
static bool wk_roam_answer(void *arg, uint64_t cookie, ua_status st,
                           const uint8_t *blob, uint32_t len);

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

void
wk_roam_put(struct wk_roam_buf *b, const void *p, uint32_t n)
{
    if (n == 0 || !wk_roam_grow(b, n))
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void
wk_roam_put_u8(struct wk_roam_buf *b, uint8_t v)
{
    wk_roam_put(b, &v, 1);
}

void
wk_roam_put_u16(struct wk_roam_buf *b, uint16_t v)
{
    wk_roam_put(b, &v, 2);          /* little-endian host */
}

void
wk_roam_put_u32(struct wk_roam_buf *b, uint32_t v)
{
    wk_roam_put(b, &v, 4);
}

void
wk_roam_put_u64(struct wk_roam_buf *b, uint64_t v)
{
    wk_roam_put(b, &v, 8);
}

void
wk_roam_put_f64(struct wk_roam_buf *b, double v)
{
    wk_roam_put(b, &v, 8);
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
    wk_roam_put_u16(b, s->cert_len);
    wk_roam_put(b, s->cert, s->cert_len);
    wk_roam_put(b, s->cert_thumb, sizeof(s->cert_thumb));
}

static void
wk_roam_unpack_session(struct wk_session *s, struct wk_roam_buf *b)
{
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

    body[0] = (uint8_t)r->w->slot;
    if (p->kind == WK_ROAM_KIND_SUB) {
        memcpy(body + 1, &p->sub_id, 4);
        body[5] = p->user;
        return wk_xfer_claim(&r->x, slot, WK_ROAM_KIND_SUB, body,
                             WK_ROAM_SUB_LEN, cookie);
    }
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
    if (slot < 0 || slot == (int)w->slot || fr == NULL) {
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
    if (peer_thumb != NULL)
        memcpy(fr->thumb, peer_thumb, sizeof(fr->thumb));
    if ((rc = wk_roam_send(r, fr, (unsigned)slot)) != 0) {
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
}

/* A session blob (after its type byte): adopt it.  True when done. */
static bool
wk_roam_adopt(struct wk_roam *r, struct wk_roam_buf *b)
{
    struct wk_worker  *w = r->w;
    struct wk_session  tmp, *s;

    memset(&tmp, 0, sizeof(tmp));
    wk_roam_unpack_session(&tmp, b);
    if (b->bad || !tmp.activated)
        return false;
    if (wk_session_find_by_token(w, &(struct ua_nodeid){
            .ns = 0, .idtype = UA_IDTYPE_GUID, .id.guid = tmp.token })
        != NULL)
        return false;               /* here already (cannot happen) */
    s = wk_session_adopt(w, &tmp);
    explicit_bzero(tmp.nonce, sizeof(tmp.nonce));
    if (s == NULL) {
        shm_log(SHM_LOG_WARNING, "a session cannot move here: no room");
        return false;
    }
    if (r->subs.unpack != NULL && r->subs.unpack(r->subs.arg, s, b) != 0) {
        shm_log(SHM_LOG_WARNING, "a session cannot move here: its "
                "subscriptions do not fit (or are malformed)");
        wk_session_close(w, s);
        return false;
    }
    if (b->bad) {
        wk_session_closing(w, s, true);
        wk_session_close(w, s);
        return false;
    }
    r->last_bytes = b->len;
    WK_ROAM_COUNT(w, sessions_moved_in, 1);
    return true;
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

    if (i < WK_ROAM_PENDING && r->pending[i].state == WK_RP_WAITING
        && r->pending[i].seq == (uint32_t)(cookie >> 32))
        p = &r->pending[i];
    if (st == UA_GOOD) {
        if (wk_roam_get_u32(&b) != WK_ROAM_VERSION)
            b.bad = true;
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
    if (st != UA_GOOD) {
        WK_ROAM_COUNT(w, session_moves_failed, 1);
        shm_log(SHM_LOG_INFO, "a %s claim failed: %s",
                p != NULL && p->kind == WK_ROAM_KIND_SUB ? "subscription"
                                                        : "session",
                ua_status_name(st));
    }
    if (p != NULL) {
        p->status = st;
        p->state = WK_RP_DONE;
        wk_conn_wake(w->conns, p->conn, p->gen);
    }
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
     * (nor back). */
    if (s->cert_len > 0
            ? (!secured || !ua_crypto_memeq(thumb, s->cert_thumb,
                                            sizeof(s->cert_thumb)))
            : secured != 0)
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
        WK_ROAM_COUNT(w, sessions_moved_out, 1);
        WK_ROAM_COUNT(w, session_move_bytes, m->bytes);
    }
    memset(m, 0, sizeof(*m));
}
