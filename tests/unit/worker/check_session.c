/*
 * tests/unit/worker/check_session.c: worker/session.c through its API: the
 * pool, tokens, timeout revision, activation and binding rules, expiry,
 * channel close, continuation points, the random generator, the stats row
 * and the counting allocator.  Dispatch-level session behaviour is in
 * check_svc_session.c.
 */
#include "fixture.h"

#include <stdatomic.h>

static uint64_t
row_sessions(void)
{
    return atomic_load_explicit(&fx.w.row->sessions, memory_order_relaxed);
}

/* A new session on channel ch, activated (it never gives way to a new
 * one, test_evict_*); NULL when none could be created. */
static struct wk_session *
active(uint32_t ch)
{
    struct wk_session *s = wk_session_create(&fx.w, ch, 60000);

    if (s != NULL)
        ck_assert_uint_eq(wk_session_activate(&fx.w, s, ch,
                                              WK_USER_ANONYMOUS), UA_GOOD);
    return s;
}

/* ------------------------------------------------------------ pool */

START_TEST(test_pool_init)
{
    ck_assert_ptr_nonnull(fx.w.sessions);
    ck_assert_uint_eq(fx.w.nsessions, 0);
    ck_assert_uint_eq(row_sessions(), 0);
    for (uint32_t i = 0; i < fx.w.conf->max_sessions; i++) {
        ck_assert_uint_eq(fx.w.sessions[i].index, i);
        ck_assert(!fx.w.sessions[i].used);
        ck_assert_ptr_nonnull(fx.w.sessions[i].cps);
    }
    /* The pool came through the counting allocator. */
    ck_assert_uint_ge(atomic_load(&fx.w.row->allocations), 1);
}
END_TEST

START_TEST(test_pool_full)
{
    uint32_t           max = fx.w.conf->max_sessions;
    struct wk_session *s;
    uint64_t           allocs = atomic_load(&fx.w.row->allocations);

    for (uint32_t i = 0; i < max; i++) {
        s = active(1);
        ck_assert_ptr_nonnull(s);
        ck_assert_uint_eq(fx.w.nsessions, i + 1);
        ck_assert_uint_eq(row_sessions(), i + 1);
    }
    ck_assert_ptr_null(active(1));
    /* One freed slot is usable again. */
    wk_session_close(&fx.w, &fx.w.sessions[7]);
    ck_assert_uint_eq(row_sessions(), max - 1);
    s = active(2);
    ck_assert_ptr_eq(s, &fx.w.sessions[7]);
    ck_assert_ptr_null(active(1));
    /* No allocation after start-up. */
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

/*
 * The server-wide budget (shm/limits.h) in the segment: with another
 * worker holding all but 3 sessions, this worker's pool stops at 3 though
 * it has room; what it closes, or what a dead worker held, is usable.
 * (Activated sessions: one never activated would give way, test_evict.)
 */
START_TEST(test_pool_budget)
{
    struct shm_limits *l = shm_limits_of(&fx.w.seg);
    uint32_t           max = fx.w.conf->max_sessions;
    struct wk_session *s[3];
    unsigned           me = fx.w.slot, other = fx.w.slot + 1;

    ck_assert_uint_ge(max, 4);
    fx.w.budget = l;
    ck_assert_int_eq(shm_limits_take(l, other, SHM_LIM_SESSIONS, max - 3,
                                     max), 0);
    for (int i = 0; i < 3; i++) {
        s[i] = active(1);
        ck_assert_ptr_nonnull(s[i]);
    }
    ck_assert_ptr_null(active(1));
    ck_assert_uint_eq(fx.w.nsessions, 3);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SESSIONS), 3);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), max);
    /* Closed: given back, one more fits, then none. */
    wk_session_close(&fx.w, s[1]);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SESSIONS), 2);
    ck_assert_ptr_nonnull(active(1));
    ck_assert_ptr_null(active(1));
    /* Closing twice gives back once. */
    wk_session_close(&fx.w, s[0]);
    wk_session_close(&fx.w, s[0]);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), max - 1);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SESSIONS), 2);
    /* The other worker dies: its share is ours to take. */
    shm_limits_reclaim(l, other);
    for (uint32_t i = 0; i < max - 2; i++)
        ck_assert_ptr_nonnull(active(1));
    ck_assert_ptr_null(active(1));
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), max);
    ck_assert_uint_eq(fx.w.nsessions, max);
}
END_TEST

START_TEST(test_pool_fini)
{
    ck_assert_ptr_nonnull(wk_session_create(&fx.w, 1, 60000));
    wk_session_fini(&fx.w);
    ck_assert_ptr_null(fx.w.sessions);
    ck_assert_uint_eq(fx.w.nsessions, 0);
    ck_assert_uint_eq(row_sessions(), 0);
    /* Nothing is found in a pool that is gone. */
    ck_assert_ptr_null(wk_session_create(&fx.w, 1, 60000));
    wk_session_fini(&fx.w);         /* twice is harmless */
    ck_assert_int_eq(wk_session_init(&fx.w), 0);
}
END_TEST

/* ------------------------------------------------------------ admission */

static uint64_t
row_evicted(void)
{
    return atomic_load_explicit(&fx.w.row->sessions_evicted,
                                memory_order_relaxed);
}

/*
 * Issue 19: a pool full of sessions never activated gives the oldest one's
 * slot to a new CreateSession; activated sessions never give way.
 */
START_TEST(test_evict_pool_full)
{
    uint32_t           max = fx.w.conf->max_sessions;
    struct wk_session *s, *oldest = NULL, *next = NULL;
    struct ua_nodeid   tok_oldest, tok_next;
    uint64_t           allocs = atomic_load(&fx.w.row->allocations);

    ck_assert_uint_ge(max, 8);
    for (uint32_t i = 0; i < max; i++) {
        fx.w.now_ms++;
        /* Every other one activated; the unactivated oldest is slot 1. */
        s = i % 2 == 0 ? active(1) : wk_session_create(&fx.w, 1, 60000);
        ck_assert_ptr_nonnull(s);
        if (i == 1)
            oldest = s;
        if (i == 3)
            next = s;
    }
    tok_oldest = wk_session_token(oldest);
    tok_next = wk_session_token(next);
    ck_assert_uint_eq(row_evicted(), 0);
    fx.w.now_ms++;
    s = wk_session_create(&fx.w, 2, 60000);
    ck_assert_ptr_eq(s, oldest);            /* its slot, a new session */
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &tok_oldest));
    ck_assert_ptr_eq(wk_session_find_by_token(&fx.w, &tok_next), next);
    ck_assert_uint_eq(row_evicted(), 1);
    ck_assert_uint_eq(fx.w.nsessions, max);
    ck_assert_uint_eq(row_sessions(), max);
    /* Then the next oldest (slot 3), not the newest. */
    ck_assert_ptr_eq(wk_session_create(&fx.w, 2, 60000), next);
    ck_assert_uint_eq(row_evicted(), 2);
    /* All activated: nothing gives way. */
    for (uint32_t i = 0; i < max; i++)
        if (!fx.w.sessions[i].activated)
            ck_assert_uint_eq(wk_session_activate(&fx.w, &fx.w.sessions[i],
                                                  fx.w.sessions[i].channel_id,
                                                  WK_USER_ANONYMOUS),
                              UA_GOOD);
    ck_assert_ptr_null(wk_session_create(&fx.w, 2, 60000));
    ck_assert_uint_eq(row_evicted(), 2);
    ck_assert_uint_eq(fx.w.nsessions, max);
    ck_assert_uint_eq(atomic_load(&fx.w.row->allocations), allocs);
}
END_TEST

/*
 * The server-wide budget full (another worker holds the rest) while the
 * pool has room: this worker's own oldest unactivated session gives way;
 * without one, BadTooManySessions (NULL) as before.
 */
START_TEST(test_evict_budget_full)
{
    struct shm_limits *l = shm_limits_of(&fx.w.seg);
    uint32_t           max = fx.w.conf->max_sessions;
    struct wk_session *a, *b, *c, *n;
    unsigned           me = fx.w.slot, other = fx.w.slot + 1;

    fx.w.budget = l;
    ck_assert_int_eq(shm_limits_take(l, other, SHM_LIM_SESSIONS, max - 3,
                                     max), 0);
    a = active(1);
    fx.w.now_ms++;
    b = wk_session_create(&fx.w, 1, 60000);
    fx.w.now_ms++;
    c = wk_session_create(&fx.w, 1, 60000);
    ck_assert(a != NULL && b != NULL && c != NULL);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), max);
    fx.w.now_ms++;
    n = wk_session_create(&fx.w, 2, 60000);
    ck_assert_ptr_nonnull(n);
    ck_assert(!b->used);                    /* the oldest unactivated */
    ck_assert_uint_eq(row_evicted(), 1);
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SESSIONS), 3);
    ck_assert_uint_eq(shm_limits_used(l, SHM_LIM_SESSIONS), max);
    ck_assert(c->used && !c->activated);
    /* Everything of ours activated: the other worker's are not ours to
     * close (they time out there). */
    ck_assert_uint_eq(wk_session_activate(&fx.w, n, 2, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert_uint_eq(wk_session_activate(&fx.w, c, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert_ptr_null(wk_session_create(&fx.w, 2, 60000));
    ck_assert_uint_eq(shm_limits_held(l, me, SHM_LIM_SESSIONS), 3);
    ck_assert_uint_eq(shm_limits_held(l, other, SHM_LIM_SESSIONS), max - 3);
}
END_TEST

/*
 * limits.max_unactivated_per_address: the cap-th session of one address
 * is admitted, the next is not; other addresses, and the unknown address
 * 0, are not affected; activating one makes room again.
 */
START_TEST(test_admit_per_address)
{
    struct shm_config *c = (struct shm_config *)fx.w.conf;
    uint32_t           cap = c->max_unactivated_per_address;
    struct wk_session *s, *first = NULL;

    ck_assert_uint_eq(cap, 50);             /* the default */
    c->max_unactivated_per_address = cap = 4;
    for (uint32_t i = 0; i < cap; i++) {
        ck_assert_uint_eq(wk_session_admit(&fx.w, 0xA), UA_GOOD);
        s = wk_session_create(&fx.w, 1, 60000);
        ck_assert_ptr_nonnull(s);
        s->peer = 0xA;
        if (first == NULL)
            first = s;
    }
    ck_assert_uint_eq(wk_session_admit(&fx.w, 0xA),
                      UA_BAD_TOO_MANY_SESSIONS);
    ck_assert_uint_eq(wk_session_admit(&fx.w, 0xB), UA_GOOD);
    ck_assert_uint_eq(wk_session_admit(&fx.w, 0), UA_GOOD);
    /* An activated session no longer counts. */
    ck_assert_uint_eq(wk_session_activate(&fx.w, first, 1,
                                          WK_USER_ANONYMOUS), UA_GOOD);
    ck_assert_uint_eq(wk_session_admit(&fx.w, 0xA), UA_GOOD);
    c->max_unactivated_per_address = 50;
}
END_TEST

/* ------------------------------------------------------------ tokens */

START_TEST(test_token_lookup)
{
    struct wk_session *a = wk_session_create(&fx.w, 1, 60000);
    struct wk_session *b = wk_session_create(&fx.w, 1, 60000);
    struct ua_nodeid   ta, tb, forged, id;

    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ta = wk_session_token(a);
    tb = wk_session_token(b);
    ck_assert_uint_eq(ta.ns, 0);
    ck_assert_uint_eq(ta.idtype, UA_IDTYPE_GUID);
    /* data1: the worker slot + 1 in the top byte, the pool index below. */
    ck_assert_uint_eq(ta.id.guid.data1 & WK_SESSION_INDEX_MAX, a->index);
    ck_assert_uint_eq(ta.id.guid.data1 >> 24, fx.w.slot + 1);
    ck_assert_int_eq(wk_session_token_slot(&fx.w, &ta), (int)fx.w.slot);
    ck_assert(!ua_nodeid_equal(&ta, &tb));
    ck_assert_ptr_eq(wk_session_find_by_token(&fx.w, &ta), a);
    ck_assert_ptr_eq(wk_session_find_by_token(&fx.w, &tb), b);

    /* The index alone is not enough: the 96 random bits must match. */
    forged = ta;
    forged.id.guid.data4[7] ^= 1;
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &forged));
    forged = ta;
    forged.id.guid.data1 = ((fx.w.slot + 1) << 24)
                           | fx.w.conf->max_sessions;   /* out of range */
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &forged));
    ck_assert_int_eq(wk_session_token_slot(&fx.w, &forged), -1);
    forged = ta;
    forged.id.guid.data1 = a->index;                    /* no worker */
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &forged));
    ck_assert_int_eq(wk_session_token_slot(&fx.w, &forged), -1);
    forged = ta;
    forged.ns = 1;
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &forged));
    forged = ua_nodeid_num(0, a->index);
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &forged));
    /* The sessionId is not the token. */
    id = wk_session_id(a);
    ck_assert_uint_eq(id.ns, 1);
    ck_assert_uint_eq(id.idtype, UA_IDTYPE_GUID);
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &id));

    /* A closed session's token is dead, also once its slot is reused. */
    wk_session_close(&fx.w, a);
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &ta));
    ck_assert_ptr_eq(wk_session_create(&fx.w, 1, 60000), a);
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w, &ta));
    ta = wk_session_token(a);
    ck_assert_ptr_eq(wk_session_find_by_token(&fx.w, &ta), a);
}
END_TEST

START_TEST(test_fresh_values)
{
    struct wk_session *a = wk_session_create(&fx.w, 1, 60000);
    struct wk_session *b = wk_session_create(&fx.w, 1, 60000);
    uint8_t            nonce[WK_SESSION_NONCE];

    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert(memcmp(a->nonce, b->nonce, WK_SESSION_NONCE) != 0);
    ck_assert(memcmp(&a->id, &b->id, sizeof(a->id)) != 0);
    /* Each activation gets a new nonce. */
    memcpy(nonce, a->nonce, sizeof(nonce));
    ck_assert_uint_eq(wk_session_activate(&fx.w, a, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert(memcmp(nonce, a->nonce, WK_SESSION_NONCE) != 0);
    memcpy(nonce, a->nonce, sizeof(nonce));
    ck_assert_uint_eq(wk_session_activate(&fx.w, a, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert(memcmp(nonce, a->nonce, WK_SESSION_NONCE) != 0);
}
END_TEST

/* ------------------------------------------------------------ random */

/* RFC 8439 §2.3.2 style check: ChaCha20, key 0, nonce 0, counter 0. */
START_TEST(test_random_chacha_vector)
{
    static const uint8_t ks[64] = {
        0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a,
        0xe5, 0x53, 0x86, 0xbd, 0x28, 0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d,
        0xed, 0x1a, 0xa8, 0x36, 0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7, 0xda,
        0x41, 0x59, 0x7c, 0x51, 0x57, 0x48, 0x8d, 0x77, 0x24, 0xe0, 0x3f,
        0xb8, 0xd8, 0x4a, 0x37, 0x6a, 0x43, 0xb8, 0xf4, 0x15, 0x18, 0xa1,
        0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86,
    };
    uint8_t out[32];

    memset(fx.w.rng, 0, sizeof(fx.w.rng));
    wk_session_random(&fx.w, out, sizeof(out));
    /* Output is the block's second half; its first half is the new key. */
    ck_assert_mem_eq(out, ks + 32, 32);
    ck_assert_mem_eq(fx.w.rng, ks, 32);
}
END_TEST

START_TEST(test_random_stream)
{
    uint8_t a[100], b[100];
    uint64_t key[4];

    memcpy(key, fx.w.rng, sizeof(key));
    wk_session_random(&fx.w, a, sizeof(a));
    wk_session_random(&fx.w, b, sizeof(b));
    ck_assert(memcmp(a, b, sizeof(a)) != 0);
    ck_assert(memcmp(key, fx.w.rng, sizeof(key)) != 0);
    /* getrandom seeded the key: two inits differ. */
    memcpy(key, fx.w.rng, sizeof(key));
    wk_session_fini(&fx.w);
    ck_assert_int_eq(wk_session_init(&fx.w), 0);
    ck_assert(memcmp(key, fx.w.rng, sizeof(key)) != 0);
}
END_TEST

/* ------------------------------------------------------------ timeout */

START_TEST(test_revise_timeout)
{
    const struct shm_config *c = fx.w.conf;
    uint32_t lo = c->min_session_timeout_ms, hi = c->max_session_timeout_ms;

    ck_assert_uint_eq(lo, 10000);
    ck_assert_uint_eq(hi, 3600000);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 0), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, -1), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, -INFINITY), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, NAN), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, INFINITY), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 1e308), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 4294967296.0), hi);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 1), lo);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 9999.9), lo);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 60000), 60000);
    ck_assert_uint_eq(wk_session_revise_timeout(c, 60000.7), 60000);
    ck_assert_uint_eq(wk_session_revise_timeout(c, hi), hi);
}
END_TEST

START_TEST(test_expire_activated)
{
    struct wk_session *s = wk_session_create(&fx.w, 1, 30000);

    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->timeout_ms, 30000);
    ck_assert_uint_eq(wk_session_activate(&fx.w, s, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert_uint_eq(wk_session_expire(&fx.w, FX_NOW_MS + 29999), 0);
    /* A request restarts the clock. */
    fx.w.now_ms = FX_NOW_MS + 20000;
    wk_session_touch(&fx.w, s);
    ck_assert_uint_eq(wk_session_expire(&fx.w, FX_NOW_MS + 30000), 0);
    ck_assert_uint_eq(wk_session_expire(&fx.w, FX_NOW_MS + 49999), 0);
    ck_assert(s->used);
    ck_assert_uint_eq(wk_session_expire(&fx.w, FX_NOW_MS + 50000), 1);
    ck_assert(!s->used);
    ck_assert_uint_eq(fx.w.nsessions, 0);
    ck_assert_uint_eq(row_sessions(), 0);
}
END_TEST

START_TEST(test_expire_unactivated)
{
    struct wk_session *s = wk_session_create(&fx.w, 1, 3600000);
    struct wk_session *t = wk_session_create(&fx.w, 1, 3600000);

    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(wk_session_activate(&fx.w, t, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    /* Never activated: closed after WK_SESSION_ACTIVATE_MS, whatever its
     * timeout (docs/security.md case 52). */
    ck_assert_uint_eq(wk_session_expire(&fx.w,
                                        FX_NOW_MS + WK_SESSION_ACTIVATE_MS
                                            - 1), 0);
    ck_assert_uint_eq(wk_session_expire(&fx.w,
                                        FX_NOW_MS + WK_SESSION_ACTIVATE_MS),
                      1);
    ck_assert(!s->used);
    ck_assert(t->used);
}
END_TEST

/* ------------------------------------------------------------ binding */

START_TEST(test_activate_rules)
{
    struct wk_session *s = wk_session_create(&fx.w, 1, 60000);
    uint8_t            nonce[WK_SESSION_NONCE];

    ck_assert_ptr_nonnull(s);
    memcpy(nonce, s->nonce, sizeof(nonce));
    /* First activation on another channel: refused, nothing changes. */
    ck_assert_uint_eq(wk_session_activate(&fx.w, s, 2, WK_USER_ANONYMOUS),
                      UA_BAD_SESSION_ID_INVALID);
    ck_assert(!s->activated);
    ck_assert_uint_eq(s->channel_id, 1);
    ck_assert_mem_eq(nonce, s->nonce, sizeof(nonce));
    ck_assert_uint_eq(wk_session_activate(&fx.w, s, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert(s->activated);
    ck_assert_uint_eq(s->user, WK_USER_ANONYMOUS);
    /* Later: moves to another channel as the same user. */
    ck_assert_uint_eq(wk_session_activate(&fx.w, s, 2, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert_uint_eq(s->channel_id, 2);
    /* As another user: refused, stays where it is. */
    ck_assert_uint_eq(wk_session_activate(&fx.w, s, 3, WK_USER_NONE),
                      UA_BAD_IDENTITY_CHANGE_NOT_SUPPORTED);
    ck_assert_uint_eq(s->channel_id, 2);
}
END_TEST

START_TEST(test_channel_closed)
{
    struct wk_session *act = wk_session_create(&fx.w, 1, 60000);
    struct wk_session *raw = wk_session_create(&fx.w, 1, 60000);
    struct wk_session *other = wk_session_create(&fx.w, 2, 60000);

    ck_assert_uint_eq(wk_session_activate(&fx.w, act, 1, WK_USER_ANONYMOUS),
                      UA_GOOD);
    wk_session_channel_closed(&fx.w, 1);
    /* Activated: stays, unbound, until it times out or moves. */
    ck_assert(act->used);
    ck_assert_uint_eq(act->channel_id, 0);
    /* Never activated: could never be, so it is gone. */
    ck_assert(!raw->used);
    ck_assert(other->used);
    ck_assert_uint_eq(other->channel_id, 2);
    ck_assert_uint_eq(fx.w.nsessions, 2);
    ck_assert_uint_eq(wk_session_activate(&fx.w, act, 3, WK_USER_ANONYMOUS),
                      UA_GOOD);
    ck_assert_uint_eq(act->channel_id, 3);
    /* Unbound and left alone: times out. */
    wk_session_channel_closed(&fx.w, 3);
    ck_assert_uint_eq(wk_session_expire(&fx.w, FX_NOW_MS + 60000), 2);
}
END_TEST

/* ------------------------------------------------------------ cps */

START_TEST(test_cp_limit_and_lookup)
{
    struct wk_session    *s = wk_session_create(&fx.w, 1, 60000);
    struct wk_session    *t = wk_session_create(&fx.w, 1, 60000);
    uint32_t              max = fx.w.conf->max_browse_continuation_points;
    struct wk_session_cp *cp[64], *x;
    uint8_t               b[WK_SESSION_CP_BYTES];
    struct ua_string      str = { WK_SESSION_CP_BYTES, b };

    ck_assert_uint_le(max, 64);
    for (uint32_t i = 0; i < max; i++) {
        cp[i] = wk_session_cp_alloc(&fx.w, s);
        ck_assert_ptr_nonnull(cp[i]);
        ck_assert_uint_ne(cp[i]->id, 0);
    }
    ck_assert_uint_eq(s->ncps, max);
    ck_assert_ptr_null(wk_session_cp_alloc(&fx.w, s));

    wk_session_cp_bytes(s, cp[3], b);
    ck_assert_ptr_eq(wk_session_cp_find(&fx.w, s, &str), cp[3]);
    /* Another session: its table has no such point. */
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, t, &str));
    x = wk_session_cp_alloc(&fx.w, t);
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, t, &str));
    /* Forged: one bit, a wrong length, an index out of range. */
    b[11] ^= 0x80;
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, s, &str));
    b[11] ^= 0x80;
    str.len = WK_SESSION_CP_BYTES - 1;
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, s, &str));
    str.len = -1;
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, s, &str));
    str.len = WK_SESSION_CP_BYTES;
    b[0] = 0xFF;
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, s, &str));
    /* Released: dead; the slot is free again. */
    wk_session_cp_bytes(s, cp[3], b);
    wk_session_cp_release(s, cp[3]);
    ck_assert_uint_eq(s->ncps, max - 1);
    ck_assert_ptr_null(wk_session_cp_find(&fx.w, s, &str));
    wk_session_cp_release(s, cp[3]);            /* twice: no effect */
    ck_assert_uint_eq(s->ncps, max - 1);
    ck_assert_ptr_nonnull(wk_session_cp_alloc(&fx.w, s));
    ck_assert_ptr_null(wk_session_find_by_token(&fx.w,
                                                &(struct ua_nodeid){ 0 }));
    /* Closing the session frees every point. */
    wk_session_close(&fx.w, s);
    ck_assert_uint_eq(s->ncps, 0);
    for (uint32_t i = 0; i < max; i++)
        ck_assert_uint_eq(s->cps[i].id, 0);
}
END_TEST

/*
 * Sessions that moved here from another worker (worker/roam.c): adopted
 * with their token, found through the guest table, gone from it when
 * closed; the table keeps every other guest findable (backward-shift
 * deletion), and a native token never finds a guest.
 */
START_TEST(test_guests)
{
    uint32_t           max = fx.w.conf->max_sessions;
    struct wk_session  from, *g[64];
    struct ua_nodeid   t;
    uint32_t           n = max < 64 ? max : 64;

    for (uint32_t i = 0; i < n; i++) {
        memset(&from, 0, sizeof(from));
        wk_session_random(&fx.w, &from.token, sizeof(from.token));
        /* Made by worker slot+2 (another), some with clashing hashes. */
        from.token.data1 = ((fx.w.slot + 2) << 24) | i;
        if (i % 4 == 1)
            memcpy(from.token.data4, g[i - 1]->token.data4, 8);
        from.activated = 1;
        from.user = WK_USER_ANONYMOUS;
        from.timeout_ms = 60000;
        g[i] = wk_session_adopt(&fx.w, &from);
        ck_assert_ptr_nonnull(g[i]);
        ck_assert(g[i]->guest);
        ck_assert(g[i]->activated);
        ck_assert_uint_eq(g[i]->channel_id, 0);
    }
    ck_assert_uint_eq(fx.w.nguests, n);
    for (uint32_t i = 0; i < n; i++) {
        t = wk_session_token(g[i]);
        ck_assert_ptr_eq(wk_session_find_by_token(&fx.w, &t), g[i]);
    }
    /* Every other one goes: the rest stay findable. */
    for (uint32_t i = 0; i < n; i += 2)
        wk_session_close(&fx.w, g[i]);
    ck_assert_uint_eq(fx.w.nguests, n - (n + 1) / 2);
    for (uint32_t i = 1; i < n; i += 2) {
        t = wk_session_token(g[i]);
        ck_assert_ptr_eq(wk_session_find_by_token(&fx.w, &t), g[i]);
    }
    for (uint32_t i = 1; i < n; i += 2)
        wk_session_close(&fx.w, g[i]);
    ck_assert_uint_eq(fx.w.nguests, 0);
    ck_assert_uint_eq(fx.w.nsessions, 0);
}
END_TEST

/*
 * A session moved here keeps who activated it (issue 19's loose ends):
 * its role (the Write, HistoryUpdate and condition method checks) and its
 * user id (ClientUserId of Acknowledge and the broker's alarm methods,
 * audit events), not an empty one.
 */
START_TEST(test_adopt_keeps_user)
{
    struct wk_session  from, *s;

    memset(&from, 0, sizeof(from));
    wk_session_random(&fx.w, &from.token, sizeof(from.token));
    from.token.data1 = ((fx.w.slot + 2) << 24) | 3;
    from.activated = 1;
    from.user = WK_USER_OPERATOR;
    from.timeout_ms = 60000;
    strcpy(from.user_id, "operator1");
    s = wk_session_adopt(&fx.w, &from);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->user, WK_USER_OPERATOR);
    ck_assert_str_eq(s->user_id, "operator1");
    ck_assert(wk_session_may_write(&fx.w, s));
    /* Re-bound on a new channel as the same user: still operator1. */
    ck_assert_uint_eq(wk_session_activate(&fx.w, s, 77, WK_USER_OPERATOR),
                      UA_GOOD);
    ck_assert_str_eq(s->user_id, "operator1");
    /* A user id that fills the field stays terminated. */
    memset(from.user_id, 'u', sizeof(from.user_id));
    from.token.data1 = ((fx.w.slot + 2) << 24) | 4;
    s = wk_session_adopt(&fx.w, &from);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s->user_id), sizeof(s->user_id) - 1);
}
END_TEST

static Suite *
session_suite(void)
{
    Suite *s = suite_create("worker/session");
    TCase *tc;

    tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_pool_init);
    tcase_add_test(tc, test_pool_full);
    tcase_add_test(tc, test_pool_budget);
    tcase_add_test(tc, test_pool_fini);
    tcase_add_test(tc, test_evict_pool_full);
    tcase_add_test(tc, test_evict_budget_full);
    tcase_add_test(tc, test_admit_per_address);
    suite_add_tcase(s, tc);

    tc = tcase_create("tokens");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_token_lookup);
    tcase_add_test(tc, test_fresh_values);
    suite_add_tcase(s, tc);

    tc = tcase_create("random");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_random_chacha_vector);
    tcase_add_test(tc, test_random_stream);
    suite_add_tcase(s, tc);

    tc = tcase_create("timeouts");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_revise_timeout);
    tcase_add_test(tc, test_expire_activated);
    tcase_add_test(tc, test_expire_unactivated);
    suite_add_tcase(s, tc);

    tc = tcase_create("binding");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_activate_rules);
    tcase_add_test(tc, test_channel_closed);
    tcase_add_test(tc, test_guests);
    tcase_add_test(tc, test_adopt_keeps_user);
    suite_add_tcase(s, tc);

    tc = tcase_create("continuation points");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_cp_limit_and_lookup);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(session_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
