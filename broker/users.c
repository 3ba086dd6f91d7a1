/*
 * broker/users.c: the users file (parse, load, add/replace) and
 * `uabroker passwd`.
 */
#include "users.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "proto/crypto.h"
#include "proto/status_gen.h"

#define BK_USERS_LINE_MAX 1024

static int bk_users_hex(const char *s, size_t n, uint8_t *out, size_t cap,
                        size_t *len);
static void bk_users_tohex(const uint8_t *b, size_t n, char *out);
static bool bk_users_name_ok(const char *s, size_t n);

enum shm_user_role
bk_users_role(const char *s)
{
    if (strcmp(s, "operator") == 0)
        return SHM_ROLE_OPERATOR;
    if (strcmp(s, "viewer") == 0)
        return SHM_ROLE_VIEWER;
    return SHM_ROLE_NONE;
}

static int
bk_users_hex(const char *s, size_t n, uint8_t *out, size_t cap, size_t *len)
{
    if (n == 0 || n % 2 != 0 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v = 0;

        for (int j = 0; j < 2; j++) {
            char c = s[2 * i + (size_t)j];

            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= (unsigned)(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= (unsigned)(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= (unsigned)(c - 'A' + 10);
            else
                return -1;
        }
        out[i] = (uint8_t)v;
    }
    *len = n / 2;
    return 0;
}

static void
bk_users_tohex(const uint8_t *b, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[b[i] >> 4];
        out[2 * i + 1] = hx[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static bool
bk_users_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= SHM_USER_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == ':' || s[i] == 0x7f)
            return false;
    return true;
}

int
bk_users_parse_line(const char *line, struct shm_user *u, char *err,
                    size_t errlen)
{
    const char *f[6];
    size_t      flen[6], n;
    const char *p = line;
    char        num[16], role[16];
    char       *end;
    unsigned long it;

    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0' || *p == '\n' || *p == '\r' || *p == '#')
        return 1;
    memset(u, 0, sizeof(*u));
    for (int i = 0; i < 6; i++) {
        const char *e = p;

        while (*e != '\0' && *e != ':' && *e != '\n' && *e != '\r')
            e++;
        f[i] = p;
        flen[i] = (size_t)(e - p);
        if (i < 5) {
            if (*e != ':') {
                snprintf(err, errlen, "want name:role:pbkdf2-sha256:"
                         "iterations:salt_hex:hash_hex");
                return -1;
            }
            p = e + 1;
        } else {
            p = e;
        }
    }
    while (*p == '\r' || *p == '\n')
        p++;
    if (*p != '\0') {
        snprintf(err, errlen, "too many fields");
        return -1;
    }
    if (!bk_users_name_ok(f[0], flen[0])) {
        snprintf(err, errlen, "bad user name");
        return -1;
    }
    memcpy(u->name, f[0], flen[0]);
    if (flen[1] >= sizeof(role)) {
        snprintf(err, errlen, "unknown role");
        return -1;
    }
    memcpy(role, f[1], flen[1]);
    role[flen[1]] = '\0';
    u->role = (uint8_t)bk_users_role(role);
    if (u->role == SHM_ROLE_NONE) {
        snprintf(err, errlen, "unknown role \"%s\" (operator, viewer)",
                 role);
        return -1;
    }
    if (flen[2] != 13 || memcmp(f[2], "pbkdf2-sha256", 13) != 0) {
        snprintf(err, errlen, "unknown hash (pbkdf2-sha256 only)");
        return -1;
    }
    if (flen[3] == 0 || flen[3] >= sizeof(num)) {
        snprintf(err, errlen, "bad iteration count");
        return -1;
    }
    memcpy(num, f[3], flen[3]);
    num[flen[3]] = '\0';
    errno = 0;
    it = strtoul(num, &end, 10);
    if (errno != 0 || *end != '\0' || num[0] == '-' || it == 0
        || it > UA_PBKDF2_ITER_MAX) {
        snprintf(err, errlen, "bad iteration count");
        return -1;
    }
    u->iterations = (uint32_t)it;
    if (bk_users_hex(f[4], flen[4], u->salt, sizeof(u->salt), &n) != 0) {
        snprintf(err, errlen, "bad salt (hex, 1..%d bytes)",
                 SHM_USER_SALT_MAX);
        return -1;
    }
    u->salt_len = (uint8_t)n;
    if (bk_users_hex(f[5], flen[5], u->hash, sizeof(u->hash), &n) != 0) {
        snprintf(err, errlen, "bad hash (hex, 1..%d bytes)",
                 SHM_USER_HASH_MAX);
        return -1;
    }
    u->hash_len = (uint8_t)n;
    return 0;
}

int
bk_users_load(const char *path, struct shm_user *out, uint32_t max,
              uint32_t *n, char *err, size_t errlen)
{
    char  line[BK_USERS_LINE_MAX], e[128];
    FILE *f;
    int   lineno = 0, rc;

    *n = 0;
    f = fopen(path, "r");
    if (f == NULL) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (*n >= max) {
            snprintf(err, errlen, "%s: more than %u users", path, max);
            fclose(f);
            return -1;
        }
        rc = bk_users_parse_line(line, &out[*n], e, sizeof(e));
        if (rc < 0) {
            snprintf(err, errlen, "%s line %d: %s", path, lineno, e);
            fclose(f);
            return -1;
        }
        if (rc == 0) {
            for (uint32_t i = 0; i < *n; i++)
                if (strcmp(out[i].name, out[*n].name) == 0) {
                    snprintf(err, errlen, "%s line %d: %s twice", path,
                             lineno, out[*n].name);
                    fclose(f);
                    return -1;
                }
            (*n)++;
        }
    }
    fclose(f);
    return 0;
}

int
bk_users_set(const char *path, const char *name, const char *role,
             const char *password, uint32_t iterations, char *err,
             size_t errlen)
{
    char     tmp[BK_CONF_PATH_MAX + 16], line[BK_USERS_LINE_MAX];
    char     shex[2 * BK_USERS_SALT_LEN + 1], hhex[2 * BK_USERS_HASH_LEN + 1];
    uint8_t  salt[BK_USERS_SALT_LEN], hash[BK_USERS_HASH_LEN];
    struct shm_user u;
    char     e[128];
    FILE    *in, *out;
    int      fd, rc = -1;
    bool     replaced = false;

    if (!bk_users_name_ok(name, strlen(name))) {
        snprintf(err, errlen, "bad user name \"%s\"", name);
        return -1;
    }
    if (bk_users_role(role) == SHM_ROLE_NONE) {
        snprintf(err, errlen, "unknown role \"%s\" (operator, viewer)",
                 role);
        return -1;
    }
    if (ua_crypto_init() != UA_GOOD
        || ua_crypto_random(salt, sizeof(salt)) != UA_GOOD
        || ua_crypto_pbkdf2((const uint8_t *)password, strlen(password),
                            salt, sizeof(salt), iterations, hash,
                            sizeof(hash)) != UA_GOOD) {
        snprintf(err, errlen, "PBKDF2 failed");
        return -1;
    }
    bk_users_tohex(salt, sizeof(salt), shex);
    bk_users_tohex(hash, sizeof(hash), hhex);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd == -1 || (out = fdopen(fd, "w")) == NULL) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        if (fd != -1)
            close(fd);
        return -1;
    }
    in = fopen(path, "r");
    while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
        if (bk_users_parse_line(line, &u, e, sizeof(e)) == 0
            && strcmp(u.name, name) == 0) {
            if (!replaced)
                fprintf(out, "%s:%s:pbkdf2-sha256:%u:%s:%s\n", name, role,
                        iterations, shex, hhex);
            replaced = true;
            continue;
        }
        fputs(line, out);
        if (strchr(line, '\n') == NULL)
            fputc('\n', out);
    }
    if (in != NULL)
        fclose(in);
    if (!replaced)
        fprintf(out, "%s:%s:pbkdf2-sha256:%u:%s:%s\n", name, role,
                iterations, shex, hhex);
    if (fflush(out) != 0 || fsync(fileno(out)) != 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        fclose(out);
        unlink(tmp);
        return -1;
    }
    fclose(out);
    if (rename(tmp, path) == -1) {
        snprintf(err, errlen, "rename(\"%s\") failed: %s", path,
                 strerror(errno));
        unlink(tmp);
        return -1;
    }
    rc = 0;
    ua_crypto_wipe(hash, sizeof(hash));
    return rc;
}

int
bk_users_passwd(const struct bk_config *c, const char *name,
                const char *role, FILE *in, FILE *out, FILE *errf)
{
    char           path[BK_CONF_PATH_MAX + 64], pw[UA_PBKDF2_PASSWORD_MAX + 2];
    char           err[512];
    struct termios old, raw;
    bool           tty = isatty(fileno(in)) != 0, echo_off = false;
    size_t         n;
    int            rc;

    if (bk_config_users_path(c, path, sizeof(path)) != 0) {
        fprintf(errf, "uabroker: users file path too long\n");
        return 2;
    }
    if (tty) {
        fprintf(errf, "password for %s: ", name);
        fflush(errf);
        if (tcgetattr(fileno(in), &old) == 0) {
            raw = old;
            raw.c_lflag &= ~(tcflag_t)ECHO;
            echo_off = tcsetattr(fileno(in), TCSAFLUSH, &raw) == 0;
        }
    }
    if (fgets(pw, sizeof(pw), in) == NULL)
        pw[0] = '\0';
    if (echo_off) {
        tcsetattr(fileno(in), TCSAFLUSH, &old);
        fputc('\n', errf);
    }
    n = strcspn(pw, "\r\n");
    pw[n] = '\0';
    if (n == 0) {
        fprintf(errf, "uabroker: passwd: empty password\n");
        return 2;
    }
    if (c->runtime_dir[0] != '\0')
        (void)mkdir(c->runtime_dir, 0700);
    rc = bk_users_set(path, name, role != NULL ? role : "viewer", pw,
                      BK_USERS_ITERATIONS, err, sizeof(err));
    ua_crypto_wipe(pw, sizeof(pw));
    if (rc != 0) {
        fprintf(errf, "uabroker: passwd: %s\n", err);
        return 1;
    }
    fprintf(out, "uabroker: %s set in %s (SIGHUP a running broker)\n", name,
            path);
    return 0;
}
