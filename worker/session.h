/*
 * worker/session.h: the worker's sessions (Part 4 §5.7): a fixed pool of
 * conf->max_sessions, allocated once by wk_session_init, never grown.
 *
 * A session lives in one worker at a time, and may move to another one
 * (worker/roam.h, docs/architecture.md §11).  Identity:
 *
 *   sessionId            ns=1, a random GUID (public: diagnostics, audit)
 *   authenticationToken  ns=0, a GUID whose data1 names where the session
 *                        was created: the worker slot + 1 in its top byte,
 *                        the pool index in its low 24 bits; its other 96
 *                        bits are random: lookup is O(1) and the token is
 *                        unguessable.  A new session in the same slot gets
 *                        new random bits, so an old token never finds the
 *                        new session.  A session that moved here from
 *                        another worker (a guest) keeps its token: it is
 *                        found through the guest table, a hash of the
 *                        token's random bits (O(1) too).
 *
 * Binding (Part 4 §5.7.3, docs/security.md cases 46, 47, 50):
 *
 *   create on channel A ---> bound to A, not activated
 *   activate on A --------> activated        (on B first: BadSessionIdInvalid)
 *   activate again on B --> rebound to B if the user identity is the same
 *                           (anonymous today); requests on A are then
 *                           BadSecureChannelIdInvalid
 *   channel A closes -----> activated: unbound (channel 0) until it times
 *                           out or is activated on a new channel;
 *                           never activated: closed at once (it could
 *                           never be activated any more)
 *
 * Timeouts: every request on the session refreshes last_ms; the loop calls
 * wk_session_expire once a second.  A session never activated is closed
 * after WK_SESSION_ACTIVATE_MS at most (docs/security.md case 52: unactivated
 * sessions must not hold the pool).
 *
 * Random bytes (tokens, nonces, continuation points) come from a per-process
 * ChaCha20 generator with fast key erasure, keyed from getrandom(2) in
 * wk_session_init: its 32-byte key is w->rng and is replaced on every call,
 * so no output reveals the key, past or future.
 *
 * Single-threaded like the whole worker: no locks.
 */
#ifndef WK_SESSION_H
#define WK_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/types.h"
#include "worker.h"

#define WK_SESSION_NONCE        32      /* serverNonce bytes (Part 4 §5.7.2) */
#define WK_SESSION_CERT_MAX     4096    /* client certificate (leaf) kept for
                                           ActivateSession's signature */
#define WK_SESSION_NAME_MAX     64      /* sessionName bytes kept */
#define WK_SESSION_USER_MAX     64      /* user name bytes kept */
#define WK_SESSION_ACTIVATE_MS  10000   /* activation deadline (S2OPC: 10 s) */
#define WK_SESSION_CP_BYTES     12      /* continuation point on the wire */
#define WK_SESSION_INDEX_MAX    0xFFFFFFu   /* pool index bits of data1 */

/* How a session was activated: the user identity (Part 4 §7.41). */
enum wk_session_user {
    WK_USER_NONE = 0,           /* not activated yet */
    WK_USER_ANONYMOUS,
    WK_USER_VIEWER,             /* UserName, role viewer: reads */
    WK_USER_OPERATOR            /* UserName, role operator: writes too */
};

/*
 * A Browse continuation point: where a Browse stopped, so BrowseNext can
 * resume (Part 4 ContinuationPoint).  Node and reference indices stay
 * valid: the node store is read-only while a worker runs on it.
 * TODO(svc): check a node-store generation here once reload exists.
 */
struct wk_session_cp {
    uint64_t id;                /* random, never 0; 0 = free */
    uint32_t node;              /* node being browsed */
    uint32_t next;              /* next reference, relative to node.refs */
    uint32_t max;               /* references per page */
    uint32_t reftype;           /* reftype index, or SHM_NONE: all */
    uint32_t node_class_mask;
    uint32_t result_mask;
    uint8_t  direction;         /* BrowseDirection */
    uint8_t  include_subtypes;
    uint8_t  pad[6];
};

struct wk_session {
    uint8_t               used;
    uint8_t               activated;
    uint8_t               user;             /* enum wk_session_user */
    uint8_t               name_len;
    uint8_t               guest;            /* moved here: in the guest
                                               table (worker/roam.h) */
    uint32_t              index;            /* in w->sessions */
    uint32_t              channel_id;       /* bound channel; 0: unbound */
    uint32_t              timeout_ms;       /* revised session timeout */
    uint64_t              created_ms;
    uint64_t              last_ms;          /* last request on it */
    struct ua_guid        id;               /* sessionId (ns=1) */
    struct ua_guid        token;            /* authenticationToken (ns=0) */
    uint8_t               nonce[WK_SESSION_NONCE];  /* last serverNonce */
    char                  name[WK_SESSION_NAME_MAX];
    /* Who activated it: the UserName ("" anonymous, "X509" a user
     * certificate), the ClientUserId of its condition methods. */
    char                  user_id[WK_SESSION_USER_MAX];
    uint32_t              max_response;     /* MaxResponseMessageSize */
    uint32_t              unauthorized;     /* token used on a foreign
                                               channel (docs/security.md
                                               case 46) */
    uint64_t              registered;       /* RegisterNodes, total ids */
    uint64_t              requests;
    struct wk_session_cp *cps;  /* conf->max_browse_continuation_points */
    uint32_t              ncps;             /* in use */
    /* Created on a secured channel (worker/svc_session.c): the client's
     * certificate (leaf) and its thumbprint; ActivateSession verifies the
     * clientSignature with it and only on a channel of that certificate. */
    uint64_t              client_key;       /* tag of the client's
                                               ApplicationUri in the shared
                                               throttle; 0: none */
    uint64_t              peer;             /* the creating peer address's
                                               tag (wk_session_admit); 0:
                                               none */
    uint16_t              cert_len;         /* 0: not secured */
    uint8_t               cert_thumb[20];
    uint8_t               cert[WK_SESSION_CERT_MAX];
};

/*
 * Allocate the pool (conf->max_sessions sessions, each with its continuation
 * points) and seed the random generator from getrandom(2).  At start, before
 * the loop.  0, -ENOMEM, or -errno from getrandom.
 */
int wk_session_init(struct wk_worker *w);

/* Free the pool (every session is forgotten) and the listeners. */
void wk_session_fini(struct wk_worker *w);

/*
 * May peer (a peer address's tag, worker/admit.h; 0: unknown, no cap)
 * create one more session?  Good, or BadTooManySessions when it holds
 * conf->max_unactivated_per_address sessions never activated on this
 * worker.  The caller sets s->peer on the session it then creates.
 */
ua_status wk_session_admit(struct wk_worker *w, uint64_t peer);

/*
 * A new session bound to channel_id, not activated, with a fresh sessionId,
 * token and serverNonce and its timeout revised from requested_ms.  When
 * the pool or the server-wide budget is full, the oldest session of this
 * worker never activated is closed to make room (counted in the row's
 * sessions_evicted).  NULL when that is not enough (the caller answers
 * BadTooManySessions).
 */
struct wk_session *wk_session_create(struct wk_worker *w, uint32_t channel_id,
                                     double requested_ms);

/*
 * The open session whose authenticationToken is token, or NULL.  Does not
 * look at the channel: the caller checks s->channel_id.  Constant time in
 * the token bytes.
 */
struct wk_session *wk_session_find_by_token(struct wk_worker *w,
                                            const struct ua_nodeid *token);

/*
 * The worker slot a token was made by (data1's top byte - 1), or -1 when
 * the token cannot be one of ours at all (not ns=0 GUID, slot byte 0 or
 * past 64, index past the pool): such a token is BadSessionIdInvalid
 * without asking anyone.
 */
int wk_session_token_slot(const struct wk_worker *w,
                          const struct ua_nodeid *token);

/*
 * A session moved here from another worker (worker/roam.c): a free slot
 * takes from's identity (sessionId, token, nonce, name, timeout, user
 * and user id, activation, client certificate), unbound (channel 0), and
 * joins the guest table unless its token names this very slot.  NULL when
 * the pool (or the server's session budget) is full.
 */
struct wk_session *wk_session_adopt(struct wk_worker *w,
                                    const struct wk_session *from);

/*
 * ActivateSession's binding rules, then activation: the first activation
 * must come on the creating channel (else BadSessionIdInvalid); a later one
 * on another channel rebinds only for the same user identity (else
 * BadIdentityChangeNotSupported).  On UA_GOOD the session
 * is activated, bound to channel_id and has a new serverNonce.  On failure
 * nothing changes.
 */
ua_status wk_session_activate(struct wk_worker *w, struct wk_session *s,
                              uint32_t channel_id, enum wk_session_user user);

/*
 * Whether s may write (Write, UserAccessLevel CurrentWrite, UserWriteMask):
 * role operator; anonymous only with security.anonymous_write or without
 * a PKI (unit tests).
 */
bool wk_session_may_write(const struct wk_worker *w,
                          const struct wk_session *s);

/* Close s: release its continuation points, free its slot. */
void wk_session_close(struct wk_worker *w, struct wk_session *s);

/*
 * A client closes s (CloseSession, worker/svc_session.c), deleting its
 * subscriptions or not: tell the listeners (before wk_session_close).  A
 * session that goes without this (its timeout, its channel closed before
 * activation) is not announced: whoever keeps state per session notices
 * the slot changed hands.
 */
typedef void (*wk_session_closing_fn)(void *arg, struct wk_session *s,
                                      bool delete_subs);

#define WK_SESSION_LISTENERS_MAX 4

struct wk_session_listeners {
    wk_session_closing_fn fn[WK_SESSION_LISTENERS_MAX];
    void                 *arg[WK_SESSION_LISTENERS_MAX];
    uint32_t              n;
};

/* Listen for a client's CloseSession (at start-up).  0; -ENOSPC; -EINVAL
 * before wk_session_init. */
int wk_session_on_closing(struct wk_worker *w, wk_session_closing_fn fn,
                          void *arg);

/* Tell the listeners that the client closes s. */
void wk_session_closing(struct wk_worker *w, struct wk_session *s,
                        bool delete_subs);

/* Does channel channel_id carry a session?  (The connection layer never
 * purges such a channel to make room, docs/security.md case 34.) */
bool wk_session_on_channel(const struct wk_worker *w, uint32_t channel_id);

/* A request arrived on s: restart its timeout. */
void wk_session_touch(struct wk_worker *w, struct wk_session *s);

/*
 * Close every session whose timeout has passed at now_ms (and every session
 * never activated WK_SESSION_ACTIVATE_MS after its creation).  Called by the
 * loop once a second.  Returns how many were closed.
 */
unsigned wk_session_expire(struct wk_worker *w, uint64_t now_ms);

/*
 * Channel channel_id closed: its activated sessions stay, unbound, until
 * they time out or are activated on another channel; its sessions never
 * activated are closed.
 */
void wk_session_channel_closed(struct wk_worker *w, uint32_t channel_id);

/*
 * RequestedSessionTimeout revised into [conf->min_session_timeout_ms,
 * conf->max_session_timeout_ms]: NaN, zero and negative values get the
 * maximum (the client left it to us), +Inf and huge values the maximum,
 * small ones the minimum.
 */
uint32_t wk_session_revise_timeout(const struct shm_config *c,
                                   double requested_ms);

/* n random bytes from the worker's generator. */
void wk_session_random(struct wk_worker *w, void *buf, size_t n);

/* The session's NodeIds as they go on the wire (no allocation). */
struct ua_nodeid wk_session_id(const struct wk_session *s);
struct ua_nodeid wk_session_token(const struct wk_session *s);

/* --- Browse continuation points ------------------------------------- */

/*
 * A free continuation point of s with a fresh random id, counted in use, or
 * NULL when s holds conf->max_browse_continuation_points already (the
 * caller answers BadNoContinuationPoints).
 */
struct wk_session_cp *wk_session_cp_alloc(struct wk_worker *w,
                                          struct wk_session *s);

/*
 * A page that leaves more behind: cp (the point the request came with, or
 * NULL) under a fresh random id, so its old bytes no longer match, or a new
 * point from wk_session_cp_alloc(); NULL as there.
 */
struct wk_session_cp *wk_session_cp_renew(struct wk_worker *w,
                                          struct wk_session *s,
                                          struct wk_session_cp *cp);

/*
 * The continuation point of s that bytes name, or NULL when they name none
 * of its points in use: forged, released, another session's
 * (BadContinuationPointInvalid).
 */
struct wk_session_cp *wk_session_cp_find(struct wk_worker *w,
                                         struct wk_session *s,
                                         const struct ua_string *bytes);

/* Write cp's wire form, WK_SESSION_CP_BYTES bytes, to out. */
void wk_session_cp_bytes(const struct wk_session *s,
                         const struct wk_session_cp *cp, uint8_t *out);

/*
 * cp's wire form as *out, its bytes in arena a (a page's continuationPoint);
 * 0, or -ENOMEM with cp released (the caller answers
 * BadResponseTooLarge: the response has no room).
 */
int wk_session_cp_out(struct wk_session *s, struct wk_session_cp *cp,
                      struct ua_arena *a, struct ua_string *out);

/* Release cp; its bytes are invalid from now on. */
void wk_session_cp_release(struct wk_session *s, struct wk_session_cp *cp);

#endif /* WK_SESSION_H */
