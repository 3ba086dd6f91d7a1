/*
 * worker/login.h: UserName logins in steps (docs/architecture.md §4).
 *
 * An ActivateSession with a UserName token is held by its connection
 * (worker/conn.h) and handed to the dispatcher once per step; its login
 * state lives here between steps, one entry per connection of the pool,
 * keyed by the request's connection index (struct wk_conn_req.conn).  Each
 * step decrypts one RSA block of the secret (in place, in the held
 * request), then each runs a slice of the PBKDF2 (worker/svc_session.c).
 * When the held request is done, or its connection goes, the connection
 * layer calls the registered "held request done" handler, which is
 * wk_login_release(): the state is wiped, and the secret with it.
 *
 * Single-threaded, on the worker's loop.  Allocated once at start-up.
 */
#ifndef WK_LOGIN_H
#define WK_LOGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "proto/crypto.h"
#include "worker.h"

enum { WK_LOGIN_NONE, WK_LOGIN_DECRYPTING, WK_LOGIN_HASHING };

struct wk_login {
    uint8_t          phase;         /* WK_LOGIN_* */
    bool             ok;            /* nothing failed so far */
    uint8_t          role;          /* the user's SHM_ROLE_* */
    uint8_t          hash_len;      /* bytes of hash to compare */
    bool             blocked;       /* its provisional failure blocked the
                                     * client (undone if it succeeds) */
    bool             ip_blocked;    /* ... blocked the peer address's
                                     * logins (undone if it succeeds) */
    uint8_t          enc;           /* DECRYPTING: enum ua_rsa_enc */
    bool             bad;           /* DECRYPTING: a block failed */
    uint16_t         block;         /* DECRYPTING: the next block */
    uint16_t         blocks;        /* DECRYPTING: of how many */
    uint32_t         pos;           /* DECRYPTING: plaintext bytes so far */
    uint32_t         secret_len;    /* DECRYPTING: ciphertext bytes */
    uint8_t         *secret;        /* DECRYPTING: the password's bytes in
                                     * the held request, decrypted in
                                     * place (wiped when done) */
    uint8_t          hash[UA_PBKDF2_STEP_OUT_MAX];
    struct ua_pbkdf2 kdf;
};

struct wk_logins {
    struct wk_login *l;             /* [n] */
    uint32_t         n;
};

/* n entries (one per connection of the pool); w->logins points at them.
 * 0 or -ENOMEM. */
int wk_login_init(struct wk_worker *w, uint32_t n);

/* Wipe and free them. */
void wk_login_fini(struct wk_worker *w);

/*
 * The login state of the held request rq (a step), or NULL: not a held
 * request (do the work at once), or no logins (unit tests).
 */
struct wk_login *wk_login_of(struct wk_worker *w,
                             const struct wk_conn_req *rq);

/* The held request of connection conn is done: its login goes. */
void wk_login_release(struct wk_worker *w, uint32_t conn);

/* Wipe l (and the secret it points at). */
void wk_login_clear(struct wk_login *l);

#endif /* WK_LOGIN_H */
