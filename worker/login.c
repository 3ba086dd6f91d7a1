/*
 * worker/login.c: UserName logins in steps (worker/login.h).
 *
 * Invariant: an entry not in use has phase WK_LOGIN_NONE and holds no
 * secret (wk_login_clear wipes everything).
 *
 * Single-threaded, on the worker's loop.
 */
#include "login.h"

#include <errno.h>
#include <string.h>

int
wk_login_init(struct wk_worker *w, uint32_t n)
{
    struct wk_logins *ls;

    ls = wk_alloc(w, sizeof(*ls));
    if (ls == NULL)
        return -ENOMEM;
    ls->n = n;
    /* Zeroed and present in one call (worker/alloc.c). */
    ls->l = wk_calloc_present(w, n, sizeof(*ls->l));
    if (ls->l == NULL) {
        wk_free(w, ls);
        return -ENOMEM;
    }
    w->logins = ls;
    return 0;
}

void
wk_login_fini(struct wk_worker *w)
{
    struct wk_logins *ls = w->logins;

    if (ls == NULL)
        return;
    for (uint32_t i = 0; i < ls->n; i++)
        wk_login_clear(&ls->l[i]);
    wk_free(w, ls->l);
    wk_free(w, ls);
    w->logins = NULL;
}

struct wk_login *
wk_login_of(struct wk_worker *w, const struct wk_conn_req *rq)
{
    struct wk_logins *ls = w->logins;

    if (rq == NULL || !rq->held || ls == NULL || rq->conn >= ls->n)
        return NULL;
    return &ls->l[rq->conn];
}

void
wk_login_release(struct wk_worker *w, uint32_t conn)
{
    struct wk_logins *ls = w->logins;

    if (ls != NULL && conn < ls->n)
        wk_login_clear(&ls->l[conn]);
}

void
wk_login_clear(struct wk_login *l)
{
    if (l->phase == WK_LOGIN_NONE)
        return;
    if (l->secret != NULL)
        ua_crypto_wipe(l->secret, l->secret_len);
    ua_crypto_pbkdf2_clear(&l->kdf);
    ua_crypto_wipe(l, sizeof(*l));
}
