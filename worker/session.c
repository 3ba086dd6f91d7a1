/*
 * worker/session.c: the session pool, tokens, timeouts, channel binding,
 * Browse continuation points and the worker's random generator.
 *
 * Invariants:
 *   - w->sessions holds conf->max_sessions entries for the worker's life;
 *     sessions[i].index == i; the continuation points of sessions[i] are
 *     cps[0 .. conf->max_browse_continuation_points) of one allocation.
 *   - w->nsessions counts the sessions in use; w->row->sessions mirrors it
 *     (W: this worker, relaxed; R: broker).
 *   - A free session has used == 0 and a zeroed token, so a stale token
 *     never matches; a free continuation point has id == 0.
 *   - A session is in the guest table (w->guests) exactly while it is
 *     used and its token's data1 does not name (this slot, its index);
 *     its `guest` flag says so.  The table is at least twice the pool:
 *     linear probing ends at an empty entry.
 *   - Admission (docs/security.md case 52): a session never activated
 *     gives way.  When the pool or the server-wide budget (shm/limits.h)
 *     is full, CreateSession closes this worker's oldest session that was
 *     never activated (as open62541 does); and one peer address holds at
 *     most conf->max_unactivated_per_address of them (wk_session_admit).
 *     A worker sees only its own sessions: when the server-wide budget is
 *     full of other workers' unactivated sessions, CreateSession here is
 *     BadTooManySessions until they time out (WK_SESSION_ACTIVATE_MS) or
 *     their channels close; the per-address cap bounds what one address
 *     can hold on each worker.
 *
 * Called from the worker's one thread only.
 */
#include "session.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/random.h>

#include "pki.h"
#include "proto/status_gen.h"
#include "shm/log.h"

static_assert(sizeof(struct ua_guid) == 16, "a GUID is 16 bytes");

static void wk_session_chacha_block(const uint64_t key[4], uint8_t out[64]);
static bool wk_session_bytes_eq(const void *a, const void *b, size_t n);
static uint32_t wk_session_cap(const struct wk_worker *w);
static uint32_t wk_session_cp_cap(const struct wk_worker *w);
static void wk_session_count(struct wk_worker *w);
static uint32_t wk_session_guest_hash(const struct ua_guid *g);
static void wk_session_guest_add(struct wk_worker *w, struct wk_session *s);
static void wk_session_guest_del(struct wk_worker *w, struct wk_session *s);
static struct wk_session *wk_session_guest_find(struct wk_worker *w,
                                                const struct ua_guid *g);
static struct wk_session *wk_session_take(struct wk_worker *w);
static bool wk_session_evict(struct wk_worker *w);

/* ------------------------------------------------------------------ */
/* random bytes: ChaCha20 (RFC 8439) with fast key erasure              */
/* ------------------------------------------------------------------ */

#define WK_ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define WK_QR(a, b, c, d)                                                  \
    do {                                                                   \
        a += b; d ^= a; d = WK_ROTL32(d, 16);                              \
        c += d; b ^= c; b = WK_ROTL32(b, 12);                              \
        a += b; d ^= a; d = WK_ROTL32(d, 8);                               \
        c += d; b ^= c; b = WK_ROTL32(b, 7);                               \
    } while (0)

/* One ChaCha20 block under key with counter 0 and nonce 0. */
static void
wk_session_chacha_block(const uint64_t key[4], uint8_t out[64])
{
    uint32_t in[16], x[16];

    in[0] = 0x61707865u;            /* "expand 32-byte k" */
    in[1] = 0x3320646eu;
    in[2] = 0x79622d32u;
    in[3] = 0x6b206574u;
    memcpy(&in[4], key, 32);        /* little-endian host (proto/codec.c) */
    in[12] = in[13] = in[14] = in[15] = 0;
    memcpy(x, in, sizeof(x));
    for (int i = 0; i < 10; i++) {
        WK_QR(x[0], x[4], x[8], x[12]);
        WK_QR(x[1], x[5], x[9], x[13]);
        WK_QR(x[2], x[6], x[10], x[14]);
        WK_QR(x[3], x[7], x[11], x[15]);
        WK_QR(x[0], x[5], x[10], x[15]);
        WK_QR(x[1], x[6], x[11], x[12]);
        WK_QR(x[2], x[7], x[8], x[13]);
        WK_QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++)
        x[i] += in[i];
    memcpy(out, x, 64);
    explicit_bzero(x, sizeof(x));
    explicit_bzero(in, sizeof(in));
}

/*
 * Each block's first half becomes the next key, its second half is output:
 * the key that made an output no longer exists once the output leaves.
 */
void
wk_session_random(struct wk_worker *w, void *buf, size_t n)
{
    uint8_t  block[64];
    uint8_t *p = buf;

    while (n > 0) {
        size_t k = n < 32 ? n : 32;

        wk_session_chacha_block(w->rng, block);
        memcpy(w->rng, block, 32);
        memcpy(p, block + 32, k);
        p += k;
        n -= k;
    }
    explicit_bzero(block, sizeof(block));
}

/* Equality that takes the same time whatever the bytes (tokens, ids):
 * eight bytes at a time, then the rest one by one (every request's
 * token is compared here: a 16-byte GUID is two words). */
static bool
wk_session_bytes_eq(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    uint64_t       d = 0, u, v;
    size_t         i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy(&u, x + i, 8);
        memcpy(&v, y + i, 8);
        d |= u ^ v;
    }
    for (; i < n; i++)
        d |= (uint8_t)(x[i] ^ y[i]);
    return d == 0;
}

/* ------------------------------------------------------------------ */
/* pool                                                                */
/* ------------------------------------------------------------------ */

/*
 * The pool's size is the configuration snapshot's: the broker writes it
 * before starting the worker and never changes it under a running worker.
 */
static uint32_t
wk_session_cap(const struct wk_worker *w)
{
    return w->sessions != NULL ? w->conf->max_sessions : 0;
}

static uint32_t
wk_session_cp_cap(const struct wk_worker *w)
{
    return w->conf->max_browse_continuation_points;
}

static void
wk_session_count(struct wk_worker *w)
{
    if (w->row != NULL)
        atomic_store_explicit(&w->row->sessions, w->nsessions,
                              memory_order_relaxed);
}

int
wk_session_init(struct wk_worker *w)
{
    uint32_t              n = w->conf->max_sessions;
    uint32_t              ncp = wk_session_cp_cap(w);
    size_t                ssz, csz;
    struct wk_session_cp *cps;
    uint8_t              *p;
    size_t                got = 0;

    if (n == 0 || ncp == 0 || n > WK_SESSION_INDEX_MAX)
        return -EINVAL;
    /* Key the generator (blocks only until the kernel pool is seeded). */
    while (got < sizeof(w->rng)) {
        ssize_t r = getrandom((uint8_t *)w->rng + got, sizeof(w->rng) - got,
                              0);

        if (r == -1) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        got += (size_t)r;
    }
    ssz = (size_t)n * sizeof(struct wk_session);
    csz = (size_t)n * ncp * sizeof(struct wk_session_cp);
    if (csz / ncp / sizeof(struct wk_session_cp) != n)
        return -ENOMEM;
    w->session_listeners = wk_alloc(w, sizeof(*w->session_listeners));
    if (w->session_listeners == NULL)
        return -ENOMEM;
    memset(w->session_listeners, 0, sizeof(*w->session_listeners));
    /* Zeroed and present in one call, not a page fault per page of a
     * memset (worker/alloc.c): the pool is scanned whole. */
    p = wk_calloc_present(w, 1, ssz + csz);
    if (p == NULL) {
        wk_free(w, w->session_listeners);
        w->session_listeners = NULL;
        return -ENOMEM;
    }
    w->guests_cap = 4;
    while (w->guests_cap < 2 * n)
        w->guests_cap *= 2;
    w->guests = wk_alloc(w, (size_t)w->guests_cap * sizeof(*w->guests));
    if (w->guests == NULL) {
        wk_free(w, p);
        wk_free(w, w->session_listeners);
        w->session_listeners = NULL;
        return -ENOMEM;
    }
    memset(w->guests, 0xFF, (size_t)w->guests_cap * sizeof(*w->guests));
    w->nguests = 0;
    w->sessions = (struct wk_session *)p;
    cps = (struct wk_session_cp *)(p + ssz);
    for (uint32_t i = 0; i < n; i++) {
        w->sessions[i].index = i;
        w->sessions[i].cps = cps + (size_t)i * ncp;
    }
    w->nsessions = 0;
    wk_session_count(w);
    return 0;
}

void
wk_session_fini(struct wk_worker *w)
{
    wk_free(w, w->session_listeners);
    w->session_listeners = NULL;
    wk_free(w, w->guests);
    w->guests = NULL;
    w->guests_cap = w->nguests = 0;
    if (w->sessions == NULL)
        return;
    wk_free(w, w->sessions);
    w->sessions = NULL;
    w->nsessions = 0;
    wk_session_count(w);
}

uint32_t
wk_session_revise_timeout(const struct shm_config *c, double requested_ms)
{
    uint32_t lo = c->min_session_timeout_ms, hi = c->max_session_timeout_ms;

    if (hi < lo)
        hi = lo;
    /* NaN, 0, negative: the client did not choose; +Inf, huge: too long. */
    if (isnan(requested_ms) || requested_ms <= 0 || requested_ms >= hi)
        return hi;
    if (requested_ms <= lo)
        return lo;
    return (uint32_t)requested_ms;
}

/*
 * Close the oldest session of this worker that was never activated (the
 * first created; ties: the lowest slot).  False when there is none.  Not
 * announced to the listeners: nothing hangs on a session never activated.
 */
static bool
wk_session_evict(struct wk_worker *w)
{
    uint32_t           cap = wk_session_cap(w);
    struct wk_session *old = NULL;

    for (uint32_t i = 0; i < cap; i++) {
        struct wk_session *s = &w->sessions[i];

        if (s->used && !s->activated
            && (old == NULL || s->created_ms < old->created_ms))
            old = s;
    }
    if (old == NULL)
        return false;
    wk_session_close(w, old);
    if (w->row != NULL)
        atomic_fetch_add_explicit(&w->row->sessions_evicted, 1,
                                  memory_order_relaxed);
    return true;
}

ua_status
wk_session_admit(struct wk_worker *w, uint64_t peer)
{
    uint32_t cap = wk_session_cap(w), n = 0;
    uint32_t max = w->conf->max_unactivated_per_address;

    if (peer == 0 || max == 0)
        return UA_GOOD;
    for (uint32_t i = 0; i < cap; i++) {
        const struct wk_session *s = &w->sessions[i];

        if (s->used && !s->activated && s->peer == peer && ++n >= max)
            return UA_BAD_TOO_MANY_SESSIONS;
    }
    return UA_GOOD;
}

/* A free slot, zeroed but for its index and points, counted in use;
 * NULL when the pool or the server's budget is full. */
static struct wk_session *
wk_session_take(struct wk_worker *w)
{
    uint32_t              cap = wk_session_cap(w);
    struct wk_session    *s = NULL;
    struct wk_session_cp *cps;
    uint32_t              index;

    for (int pass = 0; pass < 2 && s == NULL; pass++) {
        for (uint32_t i = 0; i < cap; i++) {
            if (!w->sessions[i].used) {
                s = &w->sessions[i];
                break;
            }
        }
        if (s == NULL && !wk_session_evict(w))
            return NULL;                /* full of activated sessions */
    }
    if (s == NULL)
        return NULL;
    if (wk_budget_take(w, SHM_LIM_SESSIONS, w->conf->max_sessions) != 0) {
        /* The server is full: one of ours never activated gives way (it
         * may be s's own slot: s stays free). */
        if (!wk_session_evict(w)
            || wk_budget_take(w, SHM_LIM_SESSIONS,
                              w->conf->max_sessions) != 0)
            return NULL;
    }
    index = s->index;
    cps = s->cps;
    memset(s, 0, sizeof(*s));
    s->index = index;
    s->cps = cps;
    s->used = 1;
    w->nsessions++;
    wk_session_count(w);
    return s;
}

struct wk_session *
wk_session_create(struct wk_worker *w, uint32_t channel_id,
                  double requested_ms)
{
    struct wk_session *s = wk_session_take(w);

    if (s == NULL)
        return NULL;
    s->channel_id = channel_id;
    s->timeout_ms = wk_session_revise_timeout(w->conf, requested_ms);
    s->created_ms = w->now_ms;
    s->last_ms = w->now_ms;
    wk_session_random(w, &s->id, sizeof(s->id));
    /* data1 locates the worker and the slot; the other 96 bits are the
     * secret. */
    wk_session_random(w, &s->token, sizeof(s->token));
    s->token.data1 = ((uint32_t)(w->slot + 1) << 24) | s->index;
    wk_session_random(w, s->nonce, sizeof(s->nonce));
    return s;
}

struct wk_session *
wk_session_adopt(struct wk_worker *w, const struct wk_session *from)
{
    struct wk_session *s = wk_session_take(w);

    if (s == NULL)
        return NULL;
    s->activated = from->activated;
    s->user = from->user;
    s->name_len = from->name_len < sizeof(s->name) ? from->name_len
                                                   : sizeof(s->name);
    memcpy(s->name, from->name, s->name_len);
    memcpy(s->user_id, from->user_id, sizeof(s->user_id));
    s->user_id[sizeof(s->user_id) - 1] = '\0';
    s->timeout_ms = from->timeout_ms;
    s->created_ms = w->now_ms;
    s->last_ms = w->now_ms;
    s->id = from->id;
    s->token = from->token;
    memcpy(s->nonce, from->nonce, sizeof(s->nonce));
    s->max_response = from->max_response;
    s->client_key = from->client_key;
    s->registered = from->registered;
    s->cert_len = from->cert_len <= sizeof(s->cert) ? from->cert_len : 0;
    memcpy(s->cert, from->cert, s->cert_len);
    memcpy(s->cert_thumb, from->cert_thumb, sizeof(s->cert_thumb));
    if (s->token.data1 != (((uint32_t)(w->slot + 1) << 24) | s->index))
        wk_session_guest_add(w, s);
    return s;
}

int
wk_session_token_slot(const struct wk_worker *w, const struct ua_nodeid *token)
{
    uint32_t top;

    if (token->ns != 0 || token->idtype != UA_IDTYPE_GUID)
        return -1;
    top = token->id.guid.data1 >> 24;
    if (top == 0 || top > 64
        || (w->conf != NULL && w->conf->workers != 0
            && top > w->conf->workers)
        || (token->id.guid.data1 & WK_SESSION_INDEX_MAX)
               >= w->conf->max_sessions)
        return -1;
    return (int)top - 1;
}

/* ------------------------------------------------------------------ */
/* the guest table                                                     */
/* ------------------------------------------------------------------ */

/* A token's random bits (data2..data4), folded: uniform already. */
static uint32_t
wk_session_guest_hash(const struct ua_guid *g)
{
    uint32_t a, b;

    memcpy(&a, g->data4, 4);
    memcpy(&b, g->data4 + 4, 4);
    return a ^ b ^ ((uint32_t)g->data2 << 16) ^ g->data3;
}

static void
wk_session_guest_add(struct wk_worker *w, struct wk_session *s)
{
    uint32_t m = w->guests_cap - 1, i = wk_session_guest_hash(&s->token) & m;

    while (w->guests[i] != UINT32_MAX)
        i = (i + 1) & m;
    w->guests[i] = s->index;
    s->guest = 1;
    w->nguests++;
}

/* Backward-shift deletion: no tombstones, probes stay short. */
static void
wk_session_guest_del(struct wk_worker *w, struct wk_session *s)
{
    uint32_t m = w->guests_cap - 1, i = wk_session_guest_hash(&s->token) & m;
    uint32_t j;

    if (!s->guest)
        return;
    while (w->guests[i] != s->index) {
        if (w->guests[i] == UINT32_MAX)
            return;                     /* not there (cannot happen) */
        i = (i + 1) & m;
    }
    w->guests[i] = UINT32_MAX;
    j = i;
    for (;;) {
        uint32_t h;

        j = (j + 1) & m;
        if (w->guests[j] == UINT32_MAX)
            break;
        h = wk_session_guest_hash(&w->sessions[w->guests[j]].token) & m;
        /* Entry j may move to i when its home is not in (i, j]. */
        if ((i < j) ? (h <= i || h > j) : (h <= i && h > j)) {
            w->guests[i] = w->guests[j];
            w->guests[j] = UINT32_MAX;
            i = j;
        }
    }
    s->guest = 0;
    w->nguests--;
}

static struct wk_session *
wk_session_guest_find(struct wk_worker *w, const struct ua_guid *g)
{
    uint32_t m = w->guests_cap - 1, i = wk_session_guest_hash(g) & m;

    while (w->guests[i] != UINT32_MAX) {
        struct wk_session *s = &w->sessions[w->guests[i]];

        if (s->used && wk_session_bytes_eq(&s->token, g, sizeof(*g)))
            return s;
        i = (i + 1) & m;
    }
    return NULL;
}

struct wk_session *
wk_session_find_by_token(struct wk_worker *w, const struct ua_nodeid *token)
{
    struct wk_session *s;
    uint32_t           d1;

    if (token->ns != 0 || token->idtype != UA_IDTYPE_GUID
        || w->sessions == NULL)
        return NULL;
    d1 = token->id.guid.data1;
    if ((d1 >> 24) == w->slot + 1
        && (d1 & WK_SESSION_INDEX_MAX) < wk_session_cap(w)) {
        s = &w->sessions[d1 & WK_SESSION_INDEX_MAX];
        if (s->used && !s->guest
            && wk_session_bytes_eq(&s->token, &token->id.guid,
                                   sizeof(s->token)))
            return s;
    }
    return w->nguests > 0 ? wk_session_guest_find(w, &token->id.guid)
                          : NULL;
}

ua_status
wk_session_activate(struct wk_worker *w, struct wk_session *s,
                    uint32_t channel_id, enum wk_session_user user)
{
    if (!s->activated) {
        /* Part 4 §5.7.3: the first activation comes on the channel that
         * created the session; anything else is someone else's attempt. */
        if (s->channel_id != channel_id)
            return UA_BAD_SESSION_ID_INVALID;
    } else if (s->channel_id != channel_id && user != s->user) {
        /* A client that lost its channel may move the session to a new one
         * (§5.7.3), but only as the same user (docs/security.md case 50). */
        return UA_BAD_IDENTITY_CHANGE_NOT_SUPPORTED;
    }
    s->activated = 1;
    s->user = (uint8_t)user;
    s->channel_id = channel_id;
    wk_session_random(w, s->nonce, sizeof(s->nonce));  /* single use */
    wk_session_touch(w, s);
    return UA_GOOD;
}

void
wk_session_touch(struct wk_worker *w, struct wk_session *s)
{
    s->last_ms = w->now_ms;
    s->requests++;
}

void
wk_session_close(struct wk_worker *w, struct wk_session *s)
{
    if (!s->used)
        return;
    wk_session_guest_del(w, s);
    memset(s->cps, 0, (size_t)wk_session_cp_cap(w) * sizeof(*s->cps));
    s->ncps = 0;
    s->used = 0;
    s->activated = 0;
    s->channel_id = 0;
    memset(&s->token, 0, sizeof(s->token));
    memset(s->nonce, 0, sizeof(s->nonce));
    wk_budget_give(w, SHM_LIM_SESSIONS);
    w->nsessions--;
    wk_session_count(w);
}

int
wk_session_on_closing(struct wk_worker *w, wk_session_closing_fn fn,
                      void *arg)
{
    struct wk_session_listeners *l = w->session_listeners;

    if (l == NULL || fn == NULL)
        return -EINVAL;
    if (l->n == WK_SESSION_LISTENERS_MAX)
        return -ENOSPC;
    l->fn[l->n] = fn;
    l->arg[l->n] = arg;
    l->n++;
    return 0;
}

void
wk_session_closing(struct wk_worker *w, struct wk_session *s,
                   bool delete_subs)
{
    struct wk_session_listeners *l = w->session_listeners;

    if (l == NULL)
        return;
    for (uint32_t i = 0; i < l->n; i++)
        l->fn[i](l->arg[i], s, delete_subs);
}

bool
wk_session_on_channel(const struct wk_worker *w, uint32_t channel_id)
{
    if (w->sessions == NULL)
        return false;
    for (uint32_t i = 0; i < w->conf->max_sessions; i++)
        if (w->sessions[i].used && w->sessions[i].channel_id == channel_id)
            return true;
    return false;
}

unsigned
wk_session_expire(struct wk_worker *w, uint64_t now_ms)
{
    uint32_t cap = wk_session_cap(w);
    unsigned closed = 0;

    for (uint32_t i = 0; i < cap; i++) {
        struct wk_session *s = &w->sessions[i];
        uint64_t           since, limit;

        if (!s->used)
            continue;
        if (s->activated) {
            since = s->last_ms;
            limit = s->timeout_ms;
        } else {
            since = s->created_ms;
            limit = s->timeout_ms < WK_SESSION_ACTIVATE_MS
                        ? s->timeout_ms : WK_SESSION_ACTIVATE_MS;
        }
        if (now_ms >= since && now_ms - since >= limit) {
            shm_log(SHM_LOG_INFO, "session %08x timed out",
                    (unsigned)s->token.data1);
            wk_session_close(w, s);
            closed++;
        }
    }
    return closed;
}

void
wk_session_channel_closed(struct wk_worker *w, uint32_t channel_id)
{
    uint32_t cap = wk_session_cap(w);

    if (channel_id == 0)
        return;
    for (uint32_t i = 0; i < cap; i++) {
        struct wk_session *s = &w->sessions[i];

        if (!s->used || s->channel_id != channel_id)
            continue;
        if (s->activated)
            s->channel_id = 0;
        else
            wk_session_close(w, s);
    }
}

struct ua_nodeid
wk_session_id(const struct wk_session *s)
{
    struct ua_nodeid n = { .ns = 1, .idtype = UA_IDTYPE_GUID };

    n.id.guid = s->id;
    return n;
}

struct ua_nodeid
wk_session_token(const struct wk_session *s)
{
    struct ua_nodeid n = { .ns = 0, .idtype = UA_IDTYPE_GUID };

    n.id.guid = s->token;
    return n;
}

/* ------------------------------------------------------------------ */
/* Browse continuation points                                          */
/* ------------------------------------------------------------------ */

/*
 * Wire form (WK_SESSION_CP_BYTES): uint32 index into the session's points,
 * uint64 random id, little-endian.  Only the session that holds the point
 * can match the id.
 */
struct wk_session_cp *
wk_session_cp_alloc(struct wk_worker *w, struct wk_session *s)
{
    uint32_t cap = wk_session_cp_cap(w);

    if (s->ncps >= cap)
        return NULL;
    for (uint32_t i = 0; i < cap; i++) {
        struct wk_session_cp *cp = &s->cps[i];

        if (cp->id != 0)
            continue;
        memset(cp, 0, sizeof(*cp));
        do
            wk_session_random(w, &cp->id, sizeof(cp->id));
        while (cp->id == 0);
        s->ncps++;
        return cp;
    }
    return NULL;
}

struct wk_session_cp *
wk_session_cp_renew(struct wk_worker *w, struct wk_session *s,
                    struct wk_session_cp *cp)
{
    if (cp == NULL)
        return wk_session_cp_alloc(w, s);
    do
        wk_session_random(w, &cp->id, sizeof(cp->id));
    while (cp->id == 0);
    return cp;
}

void
wk_session_cp_bytes(const struct wk_session *s,
                    const struct wk_session_cp *cp, uint8_t *out)
{
    uint32_t i = (uint32_t)(cp - s->cps);

    memcpy(out, &i, 4);
    memcpy(out + 4, &cp->id, 8);
}

int
wk_session_cp_out(struct wk_session *s, struct wk_session_cp *cp,
                  struct ua_arena *a, struct ua_string *out)
{
    uint8_t *b = ua_arena_alloc(a, WK_SESSION_CP_BYTES);

    if (b == NULL) {
        wk_session_cp_release(s, cp);
        return -ENOMEM;
    }
    wk_session_cp_bytes(s, cp, b);
    out->data = b;
    out->len = WK_SESSION_CP_BYTES;
    return 0;
}

struct wk_session_cp *
wk_session_cp_find(struct wk_worker *w, struct wk_session *s,
                   const struct ua_string *bytes)
{
    struct wk_session_cp *cp;
    uint32_t              i;

    if (bytes->len != WK_SESSION_CP_BYTES || bytes->data == NULL)
        return NULL;
    memcpy(&i, bytes->data, 4);
    if (i >= wk_session_cp_cap(w))
        return NULL;
    cp = &s->cps[i];
    if (cp->id == 0 || !wk_session_bytes_eq(&cp->id, bytes->data + 4, 8))
        return NULL;
    return cp;
}

void
wk_session_cp_release(struct wk_session *s, struct wk_session_cp *cp)
{
    if (cp->id == 0)
        return;
    memset(cp, 0, sizeof(*cp));
    s->ncps--;
}

bool
wk_session_may_write(const struct wk_worker *w, const struct wk_session *s)
{
    if (s == NULL)
        return false;
    if (s->user == WK_USER_OPERATOR)
        return true;
    if (s->user == WK_USER_ANONYMOUS)
        return w->pki == NULL
               || (w->pki->shm->flags & SHM_PKI_F_ANON_WRITE) != 0;
    return false;
}
