/*
 * broker/pki.c: PKI directory, application certificate, trust lists into
 * shared memory, rejected certificates out of it.
 */
#include "pki.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/crypto.h"
#include "proto/securechannel.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/log.h"
#include "shm/pki.h"
#include "users.h"

static const char *const bk_pki_subdirs[] = {
    "own", "own/certs", "own/private", "trusted", "trusted/certs",
    "trusted/crl", "issuers", "issuers/certs", "issuers/crl", "rejected",
    "trusted_users", "trusted_users/certs"
};

static int bk_pki_policy_id(const char *name, size_t len);
static int bk_pki_mode_id(const char *name, size_t len);
static int bk_pki_mkdirs(const char *dir, char *err, size_t errlen);
static int bk_pki_read(const char *path, uint8_t *buf, size_t cap,
                       size_t *len);
static int bk_pki_write(const char *path, const uint8_t *buf, size_t len,
                        mode_t mode, bool excl);
static int bk_pki_own(struct bk_pki *k, const struct bk_config *c,
                      int64_t now, char *err, size_t errlen);
static int bk_pki_load_dir(struct bk_pki *k, struct shm_pki_half *h,
                           const char *sub, enum shm_pki_kind kind,
                           uint32_t *count);
static void bk_pki_prune(struct bk_pki *k);
static int bk_pki_settings(struct bk_pki *k, const struct bk_config *c,
                           char *err, size_t errlen);

/* ------------------------------------------------------------ config */

static int
bk_pki_policy_id(const char *name, size_t len)
{
    for (unsigned i = 0; i < UA_POLICY_COUNT; i++) {
        const struct ua_policy *p = ua_crypto_policy_get(i);

        if (p == NULL)
            continue;
        if ((strlen(p->name) == len && strncasecmp(p->name, name, len) == 0)
            || (strlen(p->uri) == len && strncmp(p->uri, name, len) == 0))
            return (int)i;
    }
    return -1;
}

static int
bk_pki_mode_id(const char *name, size_t len)
{
    static const struct { const char *n; int id; } m[] = {
        { "None", UA_MESSAGESECURITYMODE_NONE },
        { "Sign", UA_MESSAGESECURITYMODE_SIGN },
        { "SignAndEncrypt", UA_MESSAGESECURITYMODE_SIGNANDENCRYPT },
    };

    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (strlen(m[i].n) == len && strncasecmp(m[i].n, name, len) == 0)
            return m[i].id;
    return -1;
}

int
bk_pki_offers(const char *policies, const char *modes, bool allow_deprecated,
              uint32_t *offers, char *err, size_t errlen)
{
    uint32_t    pol = 0, mod = 0;
    const char *s;

    for (int pass = 0; pass < 2; pass++) {
        s = pass == 0 ? policies : modes;
        while (*s != '\0') {
            const char *e;
            size_t      n;
            int         id;

            while (*s == ' ' || *s == '\t' || *s == ',')
                s++;
            if (*s == '\0')
                break;
            e = s;
            while (*e != '\0' && *e != ',')
                e++;
            n = (size_t)(e - s);
            while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
                n--;
            id = pass == 0 ? bk_pki_policy_id(s, n) : bk_pki_mode_id(s, n);
            if (id < 0) {
                snprintf(err, errlen, "security.%s: unknown \"%.*s\"",
                         pass == 0 ? "policies" : "modes", (int)n, s);
                return -1;
            }
            if (pass == 0 && !allow_deprecated
                && ua_crypto_policy_get((unsigned)id)->deprecated) {
                snprintf(err, errlen, "security.policies: %.*s is deprecated"
                         " (security.allow_deprecated = true offers it)",
                         (int)n, s);
                return -1;
            }
            if (pass == 0)
                pol |= 1u << id;
            else
                mod |= 1u << id;
            s = e;
        }
    }
    *offers = 0;
    if ((pol & (1u << UA_POLICY_NONE))
        && (mod & (1u << UA_MESSAGESECURITYMODE_NONE)))
        *offers |= UA_SC_OFFER(UA_POLICY_NONE, UA_MESSAGESECURITYMODE_NONE);
    for (unsigned p = 1; p < UA_POLICY_COUNT; p++) {
        if (!(pol & (1u << p)))
            continue;
        if (mod & (1u << UA_MESSAGESECURITYMODE_SIGN))
            *offers |= UA_SC_OFFER(p, UA_MESSAGESECURITYMODE_SIGN);
        if (mod & (1u << UA_MESSAGESECURITYMODE_SIGNANDENCRYPT))
            *offers |= UA_SC_OFFER(p, UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    }
    if (*offers == 0) {
        snprintf(err, errlen, "security.policies x security.modes offers "
                 "no endpoint");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ files */

static int
bk_pki_mkdirs(const char *dir, char *err, size_t errlen)
{
    char path[BK_PKI_PATH_MAX + 32];

    /* The runtime dir and pki_dir itself first (one level each). */
    for (int pass = 0; pass < 2; pass++) {
        const char *slash = pass == 0 ? strrchr(dir, '/') : NULL;

        if (pass == 0) {
            if (slash == NULL || slash == dir)
                continue;
            snprintf(path, sizeof(path), "%.*s", (int)(slash - dir), dir);
        } else {
            snprintf(path, sizeof(path), "%s", dir);
        }
        if (mkdir(path, 0700) == -1 && errno != EEXIST) {
            snprintf(err, errlen, "mkdir(\"%s\") failed: %s", path,
                     strerror(errno));
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof(bk_pki_subdirs) / sizeof(bk_pki_subdirs[0]);
         i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, bk_pki_subdirs[i]);
        if (mkdir(path, 0700) == -1 && errno != EEXIST) {
            snprintf(err, errlen, "mkdir(\"%s\") failed: %s", path,
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* 0, -ENOENT, -EFBIG (longer than cap) or -errno. */
static int
bk_pki_read(const char *path, uint8_t *buf, size_t cap, size_t *len)
{
    int     fd, err;
    ssize_t n;
    size_t  got = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1)
        return -errno;
    for (;;) {
        n = read(fd, buf + got, cap - got);
        if (n == -1) {
            if (errno == EINTR)
                continue;
            err = -errno;
            close(fd);
            return err;
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == cap) {
            uint8_t c;

            n = read(fd, &c, 1);
            close(fd);
            return n == 0 ? (*len = got, 0) : -EFBIG;
        }
    }
    close(fd);
    *len = got;
    return 0;
}

static int
bk_pki_write(const char *path, const uint8_t *buf, size_t len, mode_t mode,
             bool excl)
{
    int     fd;
    ssize_t n;
    size_t  done = 0;

    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC
                        | (excl ? O_EXCL : O_TRUNC), mode);
    if (fd == -1)
        return -errno;
    while (done < len) {
        n = write(fd, buf + done, len - done);
        if (n == -1) {
            int err = -errno;

            if (errno == EINTR)
                continue;
            close(fd);
            unlink(path);
            return err;
        }
        done += (size_t)n;
    }
    if (close(fd) == -1)
        return -errno;
    return 0;
}

/* own/certs/uabroker.der and own/private/uabroker.key: load or create. */
static int
bk_pki_own(struct bk_pki *k, const struct bk_config *c, int64_t now,
           char *err, size_t errlen)
{
    static struct ua_crypto_key key;
    char                        cpath[BK_PKI_PATH_MAX + 64];
    char                        kpath[BK_PKI_PATH_MAX + 64];
    uint8_t                     kbuf[3 * SHM_PKI_KEY_MAX];
    size_t                      klen = 0;
    struct ua_cert              cert;
    int                         rc_c, rc_k, rc = -1;
    ua_status                   s;

    snprintf(cpath, sizeof(cpath), "%s/own/certs/%s", k->dir,
             BK_PKI_CERT_NAME);
    snprintf(kpath, sizeof(kpath), "%s/own/private/%s", k->dir,
             BK_PKI_KEY_NAME);
    rc_c = bk_pki_read(cpath, k->cert, sizeof(k->cert), &k->cert_len);
    rc_k = bk_pki_read(kpath, kbuf, sizeof(kbuf), &klen);
    if (rc_c == -ENOENT && rc_k == -ENOENT) {
        struct ua_cert_params p;
        const char           *dns[1] = { c->hostname };
        char                  cn[65];

        s = ua_crypto_key_generate(&key, 2048);
        if (s != UA_GOOD) {
            snprintf(err, errlen, "pki: key generation: %s",
                     ua_status_name(s));
            goto out;
        }
        snprintf(cn, sizeof(cn), "uabroker@%.50s", c->hostname);
        memset(&p, 0, sizeof(p));
        p.app_uri = c->application_uri;
        p.common_name = cn;
        p.organization = NULL;
        p.domain_component = NULL;
        p.dns = dns;
        p.n_dns = c->hostname[0] != '\0' ? 1 : 0;
        p.not_before = now - 3600;
        p.days = c->certificate_days;
        s = ua_cert_create(&p, &key, k->cert, sizeof(k->cert), &k->cert_len);
        if (s == UA_GOOD)
            s = ua_crypto_key_write(&key, false, k->key, sizeof(k->key),
                                    &k->key_len);
        if (s != UA_GOOD) {
            snprintf(err, errlen, "pki: certificate creation: %s",
                     ua_status_name(s));
            goto out;
        }
        /* The key first: a certificate without its key is useless. */
        rc_k = bk_pki_write(kpath, k->key, k->key_len, 0600, true);
        if (rc_k == 0)
            rc_c = bk_pki_write(cpath, k->cert, k->cert_len, 0644, true);
        if (rc_k != 0 || rc_c != 0) {
            snprintf(err, errlen, "pki: writing %s: %s",
                     rc_k != 0 ? kpath : cpath,
                     strerror(-(rc_k != 0 ? rc_k : rc_c)));
            if (rc_k == 0)
                unlink(kpath);
            goto out;
        }
        k->created = true;
        rc = 0;
        goto out;
    }
    if (rc_c != 0 || rc_k != 0) {
        snprintf(err, errlen, "pki: %s: %s", rc_c != 0 ? cpath : kpath,
                 strerror(-(rc_c != 0 ? rc_c : rc_k)));
        goto out;
    }
    /* An operator's files: PEM or DER certificate, PEM or DER key. */
    if (k->cert_len > 10 && memcmp(k->cert, "-----BEGIN", 10) == 0) {
        static uint8_t der[SHM_PKI_CERT_MAX];
        size_t         n;

        if (ua_cert_from_pem((const char *)k->cert, k->cert_len, der,
                             sizeof(der), &n) != UA_GOOD) {
            snprintf(err, errlen, "pki: %s: not a certificate", cpath);
            goto out;
        }
        memcpy(k->cert, der, n);
        k->cert_len = n;
    }
    if (ua_cert_parse(k->cert, k->cert_len, &cert) != UA_GOOD) {
        snprintf(err, errlen, "pki: %s: not a DER certificate", cpath);
        goto out;
    }
    s = ua_crypto_key_load(&key, kbuf, klen);
    if (s == UA_GOOD)
        s = ua_crypto_key_write(&key, false, k->key, sizeof(k->key),
                                &k->key_len);
    if (s != UA_GOOD) {
        snprintf(err, errlen, "pki: %s: not an RSA private key (%s)", kpath,
                 ua_status_name(s));
        goto out;
    }
    if (cert.key_bits != ua_crypto_key_bits(&key)) {
        snprintf(err, errlen, "pki: %s does not belong to %s", kpath, cpath);
        goto out;
    }
    rc = 0;
out:
    ua_crypto_key_clear(&key);
    ua_crypto_wipe(kbuf, sizeof(kbuf));
    return rc;
}

/*
 * What c says of the session rules and the files beside the lists: the
 * flags (deprecated policies, anonymous, anonymous_write, x509_role),
 * rejected_max and the users file's path.  0, or -1 with a message.
 */
static int
bk_pki_settings(struct bk_pki *k, const struct bk_config *c, char *err,
                size_t errlen)
{
    char users[sizeof(k->users_path)];

    if (strcmp(c->x509_role, "operator") != 0
        && strcmp(c->x509_role, "viewer") != 0) {
        snprintf(err, errlen, "security.x509_role: \"%s\" is not viewer "
                 "or operator", c->x509_role);
        return -1;
    }
    if (bk_config_users_path(c, users, sizeof(users)) != 0) {
        snprintf(err, errlen, "security.users_file: path too long");
        return -1;
    }
    memcpy(k->users_path, users, sizeof(users));
    k->flags = (c->allow_deprecated ? SHM_PKI_F_DEPRECATED : 0)
               | (c->anonymous ? SHM_PKI_F_ANONYMOUS : 0)
               | (c->anonymous_write ? SHM_PKI_F_ANON_WRITE : 0)
               | (strcmp(c->x509_role, "operator") == 0
                      ? SHM_PKI_F_X509_OPERATOR : 0);
    k->rejected_max = c->rejected_max;
    return 0;
}

int
bk_pki_update(struct bk_pki *k, const struct bk_config *c, char *err,
              size_t errlen)
{
    if (bk_pki_settings(k, c, err, errlen) != 0)
        return -1;
    /* Workers test the flags at each session step: one store. */
    if (k->shm != NULL)
        __atomic_store_n(&k->shm->flags, k->flags, __ATOMIC_RELAXED);
    return 0;
}

int
bk_pki_init(struct bk_pki *k, const struct bk_config *c, int64_t now,
            char *err, size_t errlen)
{
    uint32_t offers;
    ua_status s;

    memset(k, 0, sizeof(*k));
    if (bk_pki_offers(c->policies, c->modes, c->allow_deprecated != 0,
                      &offers, err, errlen) != 0)
        return -1;
    if (bk_config_pki_path(c, k->dir, sizeof(k->dir)) != 0) {
        snprintf(err, errlen, "security.pki_dir: path too long");
        return -1;
    }
    k->offers = offers;
    if (bk_pki_settings(k, c, err, errlen) != 0)
        return -1;
    s = ua_crypto_init();
    if (s != UA_GOOD) {
        snprintf(err, errlen, "pki: crypto init: %s", ua_status_name(s));
        return -1;
    }
    if (bk_pki_mkdirs(k->dir, err, errlen) != 0)
        return -1;
    return bk_pki_own(k, c, now, err, errlen);
}

/* ------------------------------------------------------------ lists */

static int
bk_pki_load_dir(struct bk_pki *k, struct shm_pki_half *h, const char *sub,
                enum shm_pki_kind kind, uint32_t *count)
{
    static uint8_t buf[256 * 1024];
    static uint8_t der[UA_CERT_DER_MAX];
    char           path[BK_PKI_PATH_MAX + 320];
    DIR           *d;
    struct dirent *e;
    int            rc = 0;

    *count = 0;
    snprintf(path, sizeof(path), "%s/%s", k->dir, sub);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL) {
        const uint8_t *p = buf;
        size_t         len;
        int            r;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s/%s", k->dir, sub, e->d_name);
        r = bk_pki_read(path, buf, sizeof(buf), &len);
        if (r == -EISDIR || r == -ENOENT)
            continue;
        if (r != 0 || len == 0) {
            shm_log(SHM_LOG_WARNING, "pki: %s skipped: %s", path,
                    r != 0 ? strerror(-r) : "empty");
            k->n_skipped++;
            continue;
        }
        if ((kind == SHM_PKI_TRUSTED || kind == SHM_PKI_ISSUER
             || kind == SHM_PKI_USER_TRUSTED) && len > 10
            && memcmp(buf, "-----BEGIN", 10) == 0) {
            if (ua_cert_from_pem((const char *)buf, len, der, sizeof(der),
                                 &len) != UA_GOOD) {
                shm_log(SHM_LOG_WARNING, "pki: %s skipped: bad PEM", path);
                k->n_skipped++;
                continue;
            }
            p = der;
        }
        if (shm_pki_publish_add(k->shm, h, kind, p, len) != 0) {
            shm_log(SHM_LOG_WARNING, "pki: %s skipped: the lists are full "
                    "(%d bytes)", path, BK_PKI_LIST_BYTES);
            k->n_skipped++;
            rc = -1;
            continue;
        }
        (*count)++;
    }
    closedir(d);
    return rc;
}

int
bk_pki_reload(struct bk_pki *k)
{
    struct shm_pki_half *h;
    int                  rc = 0;

    if (k->shm == NULL)
        return -1;
    k->n_skipped = 0;
    h = shm_pki_publish_begin(k->shm);
    rc |= bk_pki_load_dir(k, h, "trusted/certs", SHM_PKI_TRUSTED,
                          &k->n_trusted);
    rc |= bk_pki_load_dir(k, h, "trusted/crl", SHM_PKI_TRUSTED_CRL,
                          &k->n_trusted_crls);
    rc |= bk_pki_load_dir(k, h, "issuers/certs", SHM_PKI_ISSUER,
                          &k->n_issuers);
    rc |= bk_pki_load_dir(k, h, "issuers/crl", SHM_PKI_ISSUER_CRL,
                          &k->n_issuer_crls);
    rc |= bk_pki_load_dir(k, h, "trusted_users/certs", SHM_PKI_USER_TRUSTED,
                          &k->n_user_certs);
    if (k->users_path[0] != '\0') {
        char err[BK_PKI_PATH_MAX + 128];

        if (bk_users_load(k->users_path, h->users, SHM_USERS_MAX,
                          &h->n_users, err, sizeof(err)) != 0) {
            shm_log(SHM_LOG_ERROR, "users: %s; no user can log in", err);
            h->n_users = 0;
            rc = -1;
        }
        k->n_users = h->n_users;
    }
    shm_pki_publish_end(k->shm);
    return rc != 0 ? -1 : 0;
}

int
bk_pki_publish(struct bk_pki *k, struct shm_segment *seg, char *err,
               size_t errlen)
{
    struct shm_pki *p = shm_pki_get(seg);

    if (p == NULL) {
        snprintf(err, errlen, "pki: the segment has no PKI region");
        return -1;
    }
    p->offers = k->offers;
    p->flags = k->flags;
    memcpy(p->cert, k->cert, k->cert_len);
    p->cert_len = (uint32_t)k->cert_len;
    memcpy(p->key, k->key, k->key_len);
    p->key_len = (uint32_t)k->key_len;
    k->shm = p;
    (void)bk_pki_reload(k);
    return 0;
}

/* ------------------------------------------------------------ rejected */

/* Keep at most rejected_max files in rejected/: drop the oldest. */
static void
bk_pki_prune(struct bk_pki *k)
{
    char           path[BK_PKI_PATH_MAX + 320];
    char           oldest[256];
    DIR           *d;
    struct dirent *e;
    struct stat    st;
    uint32_t       n;
    struct timespec t;

    for (;;) {
        n = 0;
        t.tv_sec = 0;
        t.tv_nsec = 0;
        oldest[0] = '\0';
        snprintf(path, sizeof(path), "%s/rejected", k->dir);
        d = opendir(path);
        if (d == NULL)
            return;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/rejected/%s", k->dir,
                     e->d_name);
            if (stat(path, &st) == -1 || !S_ISREG(st.st_mode))
                continue;
            n++;
            if (oldest[0] == '\0' || st.st_mtim.tv_sec < t.tv_sec
                || (st.st_mtim.tv_sec == t.tv_sec
                    && st.st_mtim.tv_nsec < t.tv_nsec)) {
                t = st.st_mtim;
                snprintf(oldest, sizeof(oldest), "%s", e->d_name);
            }
        }
        closedir(d);
        if (n <= k->rejected_max || oldest[0] == '\0')
            return;
        snprintf(path, sizeof(path), "%s/rejected/%s", k->dir, oldest);
        if (unlink(path) == -1)
            return;
    }
}

int
bk_pki_drain(struct bk_pki *k)
{
    char                 path[BK_PKI_PATH_MAX + 64];
    char                 name[UA_CERT_REJECTED_NAME_LEN];
    uint8_t              thumb[UA_CERT_THUMB_LEN];
    struct shm_pki_mbox *m;
    int                  written = 0;

    if (k->shm == NULL)
        return 0;
    for (unsigned w = 0; w < k->shm->workers; w++) {
        unsigned idx = 0;

        while ((m = shm_pki_reject_next(k->shm, w, &idx)) != NULL) {
            struct ua_cert_der one[UA_CERT_CHAIN_MAX];
            size_t             n = 0;

            /* The leaf only, named by its thumbprint (docs/security.md
             * case 44). */
            if (k->rejected_max > 0
                && ua_cert_chain_split(m->der, m->len, one, UA_CERT_CHAIN_MAX,
                                       &n) == UA_GOOD
                && n >= 1
                && ua_cert_thumbprint(one[0].der, one[0].len, thumb)
                       == UA_GOOD) {
                ua_cert_rejected_name(thumb, name);
                snprintf(path, sizeof(path), "%s/rejected/%s", k->dir,
                         name);
                if (bk_pki_write(path, one[0].der, one[0].len, 0600, true)
                    == 0) {
                    written++;
                    k->rejected_written++;
                }
            }
            shm_pki_reject_done(m);
        }
    }
    if (written > 0)
        bk_pki_prune(k);
    return written;
}

void
bk_pki_clear(struct bk_pki *k)
{
    ua_crypto_wipe(k->key, sizeof(k->key));
    k->key_len = 0;
    k->shm = NULL;
}
