/*
 * broker/users.h: the users file and `uabroker passwd`.
 *
 * One user per line: name:role:pbkdf2-sha256:iterations:salt_hex:hash_hex
 * (role operator or viewer; salt and hash 1..64 bytes; # starts a
 * comment).  The broker reads it at start and on SIGHUP and hands it to
 * the workers in SHM_R_PKI (workers read no files; broker/pki.c); the
 * workers verify passwords with ua_crypto_pbkdf2.
 */
#ifndef BK_USERS_H
#define BK_USERS_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "shm/layout.h"

#define BK_USERS_ITERATIONS 10000       /* ~5 ms of one core per login */
#define BK_USERS_SALT_LEN   16
#define BK_USERS_HASH_LEN   32

/* The role named s, SHM_ROLE_NONE when unknown. */
enum shm_user_role bk_users_role(const char *s);

/* Parse one line: 0 a user in *u, 1 blank or comment, -1 an error. */
int bk_users_parse_line(const char *line, struct shm_user *u, char *err,
                        size_t errlen);

/*
 * Read path into out[0..max): *n users.  A missing file is no users (0).
 * -1 on a bad line (message with the line number) or I/O error.
 */
int bk_users_load(const char *path, struct shm_user *out, uint32_t max,
                  uint32_t *n, char *err, size_t errlen);

/*
 * Add or replace name in the file at path (created 0600, replaced
 * atomically) with a fresh salt and PBKDF2 hash of password.  0 or -1.
 */
int bk_users_set(const char *path, const char *name, const char *role,
                 const char *password, uint32_t iterations, char *err,
                 size_t errlen);

/* `uabroker passwd NAME [ROLE]`: the password from in (no echo when a
 * terminal).  Exit code. */
int bk_users_passwd(const struct bk_config *c, const char *name,
                    const char *role, FILE *in, FILE *out, FILE *errf);

#endif /* BK_USERS_H */
