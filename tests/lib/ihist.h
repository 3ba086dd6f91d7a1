/*
 * tests/lib/ihist.h: the harness the history integration programs share
 * (integ_hist_mod, integ_hist_p13): a runtime directory, broker log and
 * binary, a response arena; a users file with an operator (and a viewer)
 * as `uabroker passwd` writes it; one HistoryUpdate of one details; one
 * HistoryRead of one node.
 *
 * Test programs only; link tests/lib/ihist.c with tests/lib/uaconn.c and
 * tests/lib/itest.c (and ua_crypto_init() done: ihist_setup does it).
 * Errors the test cannot go on from are itest_fatal().
 */
#ifndef IHIST_H
#define IHIST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/arena.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/uaconn.h"

/* The users ihist_users() writes. */
#define IHIST_OP        "op"
#define IHIST_OP_PW     "op-secret"
#define IHIST_VIEW      "view"
#define IHIST_VIEW_PW   "view-secret"

/* One program's environment. */
struct ihist {
    char            dir[PATH_MAX];          /* the broker's runtime dir */
    char            log[PATH_MAX + 16];     /* its log: dir/broker.log */
    char            bin[PATH_MAX];          /* build/uabroker */
    struct ua_arena arena;                  /* responses decode here */
    uint8_t        *arena_buf;
};

/*
 * After itest_init(): the crypto library, the broker beside argv0, a
 * watchdog of watchdog_s seconds (the log printed when it bites), a
 * scratch directory named after tmpname, the log in it, an arena of
 * arena_bytes.
 */
void ihist_setup(struct ihist *h, const char *argv0, const char *tmpname,
                 unsigned watchdog_s, size_t arena_bytes);
void ihist_teardown(struct ihist *h);

/* h->dir/users with the operator, and the viewer when viewer. */
void ihist_users(const struct ihist *h, bool viewer);

/* A users file line (PBKDF2-SHA256, as `uabroker passwd` writes it). */
void ihist_user_line(FILE *f, const char *name, const char *role,
                     const char *pw);

/* ns=1;s=name (name not copied). */
struct ua_nodeid ihist_node(const char *name);

/* One HistoryUpdate of one details d (type t, encoding id enc), decoded
 * into a (not reset): the call's or the service's status, *res the one
 * result. */
ua_status ihist_update(struct uaconn *c, struct ua_arena *a,
                       const struct ua_type *t, uint32_t enc, void *d,
                       struct ua_history_update_result *res);

/*
 * One HistoryRead of details d (type t, encoding id enc) of node, with
 * timestampsToReturn ttr, continuation point cp (NULL: none) and
 * releaseContinuationPoints release, decoded into a (not reset): the
 * call's or the service's status when not Good, else the result's, *res
 * the one result.
 */
ua_status ihist_read(struct uaconn *c, struct ua_arena *a,
                     const struct ua_nodeid *node, const struct ua_type *t,
                     uint32_t enc, void *d, int32_t ttr,
                     const struct ua_string *cp, bool release,
                     struct ua_history_read_result *res);

#endif /* IHIST_H */
