/*
 * tests/unit/hist/check_modified.c: the history store's side databases
 * (hist/side.c) on a real LMDB environment: modified values kept by
 * HistoryUpdate's insert, replace, update and deletes (hist/modified.c)
 * with their ModificationInfo, read forward and backward, forgotten by
 * range; annotations (hist/annot.c) with Insert / Replace / Update /
 * Remove outcomes per time and user, read back; neither written by the
 * plain store calls; retention dropping both with their samples; the
 * size limit (max_bytes) counting them: samples dropped to make room for
 * them, then the entries older than what is left; a reader handle seeing
 * them; a store reopened keeping them.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hist/annot.h"
#include "hist/modified.h"
#include "hist/side.h"
#include "hist/store.h"
#include "store_fixture.h"

/* The modified values of key in [lo, hi]: n, their types, values and
 * users into the arrays (at most 16). */
static int
mods(struct hs_store *s, uint64_t key, int64_t lo, int64_t hi, bool rev,
     int *type, double *val, int64_t *t, char users[][16])
{
    static struct hs_read r;
    struct hs_side_read   m;
    struct hs_sample      smp;
    struct hs_mod_info    mi;
    int                   n = 0, rc;

    ck_assert_int_eq(hs_read_begin(s, &r), 0);
    ck_assert_int_eq(hs_modified_seek(&m, &r, key, lo, hi, rev), 0);
    while ((rc = hs_modified_next(&m, &smp, &mi)) == 0) {
        ck_assert_int_lt(n, 16);
        type[n] = (int)mi.type;
        val[n] = dv_value(&smp);
        t[n] = smp.t;
        ck_assert_uint_lt(mi.user_len, 16);
        memcpy(users[n], mi.user, mi.user_len);
        users[n][mi.user_len] = '\0';
        ck_assert_int_ge(mi.time, T0);
        n++;
    }
    ck_assert_int_eq(rc, -ENOENT);
    hs_read_end(&r);
    return n;
}

START_TEST(test_modified)
{
    struct hs_store        *s = open_store(64 << 20, 0, 0, false), *rd;
    uint64_t                a = node(s, "a"), b = node(s, "b"), n;
    struct hs_mod_who       op = { T0 + 5000 * SEC, "op", 2 };
    struct hs_mod_who       eng = { T0 + 5000 * SEC, "engineer", 8 };
    enum hs_outcome         o;
    uint8_t                 dv[26];
    int                     type[16];
    double                  val[16];
    int64_t                 t[16];
    char                    users[16][16];

    fill(s, a, T0, SEC, 100, 100, 0);
    fill(s, b, T0, SEC, 100, 100, 0);
    /* The plain calls keep nothing. */
    dv_double(dv, 70, T0 + 7 * SEC);
    ck_assert_int_eq(hs_store_update(s, a, HS_UPD_REPLACE, dv, 26, &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    ck_assert_int_eq(mods(s, a, 0, INT64_MAX, false, type, val, t, users),
                     0);
    /* Replace keeps the value it replaced, twice at one time (the same
     * tick: both kept, in order). */
    dv_double(dv, 500, T0 + 5 * SEC);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_REPLACE, dv, 26, &op,
                                        &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    dv_double(dv, 501, T0 + 5 * SEC);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_REPLACE, dv, 26, &eng,
                                        &o), 0);
    /* Insert keeps the new value; a refused insert keeps nothing. */
    dv_double(dv, 1000, T0 + 200 * SEC);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_INSERT, dv, 26, &op,
                                        &o), 0);
    ck_assert_int_eq(o, HS_INSERTED);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_INSERT, dv, 26, &op,
                                        &o), 0);
    ck_assert_int_eq(o, HS_EXISTS);
    /* Update that replaces: the old value, Update. */
    dv_double(dv, 1001, T0 + 200 * SEC);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_UPDATE, dv, 26, &op,
                                        &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    /* Deletes keep each value deleted. */
    ck_assert_int_eq(hs_modified_delete_range(s, a, T0 + 10 * SEC,
                                              T0 + 13 * SEC, &eng, &n), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(hs_modified_delete_at(s, a, T0 + 20 * SEC, &op, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(mods(s, a, 0, INT64_MAX, false, type, val, t, users),
                     8);
    ck_assert_int_eq(type[0], HS_MOD_REPLACE);
    ck_assert_double_eq(val[0], 5);
    ck_assert_str_eq(users[0], "op");
    ck_assert_int_eq(type[1], HS_MOD_REPLACE);
    ck_assert_double_eq(val[1], 500);
    ck_assert_str_eq(users[1], "engineer");
    for (int i = 2; i < 5; i++) {
        ck_assert_int_eq(type[i], HS_MOD_DELETE);
        ck_assert_double_eq(val[i], 8 + i);
        ck_assert_int_eq(t[i], T0 + (8 + i) * SEC);
    }
    ck_assert_int_eq(type[5], HS_MOD_DELETE);
    ck_assert_double_eq(val[5], 20);
    ck_assert_int_eq(type[6], HS_MOD_INSERT);
    ck_assert_double_eq(val[6], 1000);
    ck_assert_int_eq(type[7], HS_MOD_UPDATE);
    ck_assert_double_eq(val[7], 1000);
    /* Backwards, a time range, another node. */
    ck_assert_int_eq(mods(s, a, T0 + 11 * SEC, T0 + 20 * SEC, true, type,
                          val, t, users), 3);
    ck_assert_double_eq(val[0], 20);
    ck_assert_double_eq(val[2], 11);
    ck_assert_int_eq(mods(s, b, 0, INT64_MAX, false, type, val, t, users),
                     0);
    /* A reader beside the writer, a reopened store. */
    rd = open_store(64 << 20, 0, 0, true);
    ck_assert_int_eq(mods(rd, a, 0, INT64_MAX, true, type, val, t, users),
                     8);
    hs_store_close(rd);
    hs_store_close(s);
    s = open_store(64 << 20, 0, 0, false);
    ck_assert_int_eq(mods(s, a, 0, INT64_MAX, false, type, val, t, users),
                     8);
    /* Forgotten by range (isDeleteModified), the samples untouched. */
    ck_assert_int_eq(hs_modified_forget(s, a, T0, T0 + 12 * SEC, &n), 0);
    ck_assert_uint_eq(n, 4);
    ck_assert_int_eq(mods(s, a, 0, INT64_MAX, false, type, val, t, users),
                     4);
    ck_assert_int_eq(hs_modified_forget(s, a, T0, T0 + 12 * SEC, &n), 0);
    ck_assert_uint_eq(n, 0);
    /* Not registered. */
    ck_assert_int_eq(hs_modified_update(s, 12345, HS_UPD_INSERT, dv, 26,
                                        &op, &o), -ENOENT);
    hs_store_close(s);
}
END_TEST

/* An annotation DataValue: a Variant ExtensionObject (the body here
 * opaque bytes) at source time t. */
static size_t
dv_annot(uint8_t *b, const char *msg, int64_t t)
{
    size_t n = strlen(msg);

    b[0] = 0x05;                /* value, source timestamp */
    b[1] = 22;                  /* ExtensionObject */
    b[2] = 0x01;                /* NodeId i=893, two-byte form won't do */
    b[3] = 0;
    b[4] = 0x7D;
    b[5] = 0x03;
    b[6] = 0x01;                /* binary body */
    b[7] = (uint8_t)n;
    b[8] = b[9] = b[10] = 0;
    memcpy(b + 11, msg, n);
    le64(b + 11 + n, t);
    return 19 + n;
}

static int
annots(struct hs_store *s, uint64_t key, int64_t lo, int64_t hi, bool rev,
       int64_t *t, char users[][16])
{
    static struct hs_read r;
    struct hs_side_read   m;
    struct hs_sample      smp;
    const uint8_t        *u;
    size_t                ul;
    int                   n = 0, rc;

    ck_assert_int_eq(hs_read_begin(s, &r), 0);
    ck_assert_int_eq(hs_annot_seek(&m, &r, key, lo, hi, rev), 0);
    while ((rc = hs_annot_next(&m, &smp, &u, &ul)) == 0) {
        ck_assert_int_lt(n, 16);
        ck_assert(smp.has_src);
        t[n] = smp.t;
        ck_assert_uint_lt(ul, 16);
        memcpy(users[n], u, ul);
        users[n][ul] = '\0';
        n++;
    }
    ck_assert_int_eq(rc, -ENOENT);
    hs_read_end(&r);
    return n;
}

START_TEST(test_annotations)
{
    struct hs_store *s = open_store(64 << 20, 0, 0, false);
    uint64_t         a = node(s, "a");
    enum hs_outcome  o;
    uint8_t          dv[64];
    size_t           n;
    int64_t          t[16];
    char             users[16][16];
    const uint8_t   *op = (const uint8_t *)"op", *eng =
        (const uint8_t *)"eng";

    n = dv_annot(dv, "scan failed", T0 + 40 * SEC);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_INSERTED);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_EXISTS);
    /* Another user at the same time: another annotation. */
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, n, eng, 3,
                                     &o), 0);
    ck_assert_int_eq(o, HS_INSERTED);
    n = dv_annot(dv, "fixed", T0 + 50 * SEC);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_REPLACE, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_NO_ENTRY);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_UPDATE, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_INSERTED);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_UPDATE, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_REPLACE, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    ck_assert_int_eq(annots(s, a, 0, INT64_MAX, false, t, users), 3);
    ck_assert_int_eq(t[0], T0 + 40 * SEC);
    ck_assert_str_eq(users[0], "eng");
    ck_assert_str_eq(users[1], "op");
    ck_assert_int_eq(t[2], T0 + 50 * SEC);
    ck_assert_int_eq(annots(s, a, 0, T0 + 45 * SEC, true, t, users), 2);
    ck_assert_str_eq(users[0], "op");
    /* Remove: found, then not. */
    ck_assert_int_eq(hs_annot_update(s, a, HS_ANNOT_REMOVE, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_REPLACED);
    ck_assert_int_eq(hs_annot_update(s, a, HS_ANNOT_REMOVE, dv, n, op, 2,
                                     &o), 0);
    ck_assert_int_eq(o, HS_NO_ENTRY);
    ck_assert_int_eq(annots(s, a, 0, INT64_MAX, false, t, users), 2);
    /* Bad input: an unknown node, no source timestamp, a bad op. */
    ck_assert_int_eq(hs_annot_update(s, 777, HS_UPD_INSERT, dv, n, op, 2,
                                     &o), -ENOENT);
    ck_assert_int_eq(hs_annot_update(s, a, 5, dv, n, op, 2, &o), -EINVAL);
    dv[0] = 0x01;
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, n - 8, op, 2,
                                     &o), -EINVAL);
    hs_store_close(s);
}
END_TEST

START_TEST(test_retention)
{
    /* Retention one day: what is older than a day and older than the
     * oldest sample goes. */
    struct hs_store  *s = open_store(64 << 20, 0, 86400 * SEC, false);
    uint64_t          a = node(s, "a"), n, e, bytes;
    struct hs_mod_who op = { T0, "op", 2 };
    enum hs_outcome   o;
    uint8_t           dv[64];
    size_t            len;
    int               type[16];
    double            val[16];
    int64_t           t[16];
    char              users[16][16];

    fill(s, a, T0, SEC, 1000, 1000, 0);
    dv_double(dv, 1, T0 + 5 * SEC);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_REPLACE, dv, 26, &op,
                                        &o), 0);
    dv_double(dv, 1, T0 + 900 * SEC);
    ck_assert_int_eq(hs_modified_update(s, a, HS_UPD_REPLACE, dv, 26, &op,
                                        &o), 0);
    len = dv_annot(dv, "old", T0 + 5 * SEC);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, len,
                                     (const uint8_t *)"op", 2, &o), 0);
    len = dv_annot(dv, "new", T0 + 900 * SEC);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, len,
                                     (const uint8_t *)"op", 2, &o), 0);
    ck_assert_int_eq(hs_side_stat(s, HS_SIDE_MODIFIED, &e, &bytes), 0);
    ck_assert_uint_eq(e, 2);
    ck_assert_uint_gt(bytes, 0);
    /* Nothing is old enough yet. */
    ck_assert_int_eq(hs_side_prune(s, T0 + 86400 * SEC, &n), 0);
    ck_assert_uint_eq(n, 0);
    /* A day after T0 + 500 s: the samples before it go, and with them
     * the entries at T0 + 5 s. */
    ck_assert_int_eq(hs_store_prune(s, T0 + (86400 + 500) * SEC, &n), 0);
    ck_assert_int_eq(hs_side_prune(s, T0 + (86400 + 500) * SEC, &n), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(mods(s, a, 0, INT64_MAX, false, type, val, t, users),
                     1);
    ck_assert_int_eq(t[0], T0 + 900 * SEC);
    ck_assert_int_eq(annots(s, a, 0, INT64_MAX, false, t, users), 1);
    ck_assert_int_eq(t[0], T0 + 900 * SEC);
    hs_store_close(s);
}
END_TEST

START_TEST(test_size_limit)
{
    /* No age limit; the side databases take several times the samples'
     * bytes.  A max_bytes the samples alone fit in but not with them:
     * samples are dropped oldest first for the side databases' pages,
     * then the annotations older than the oldest sample left. */
    struct hs_store  *s = open_store(64 << 20, 0, 0, false);
    uint64_t          a = node(s, "a"), n, e, side, side2;
    struct hs_totals  tot, tot2;
    enum hs_outcome   o;
    static uint8_t    dv[512];
    char              msg[251];
    size_t            len;
    int64_t           t[16];
    char              users[16][16];

    fill(s, a, T0, SEC, 1000, 1000, 0);
    memset(msg, 'x', sizeof(msg) - 1);
    msg[sizeof(msg) - 1] = '\0';
    for (int i = 0; i < 200; i++) {
        len = dv_annot(dv, msg, T0 + i * SEC / 2);
        ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, len,
                                         (const uint8_t *)"op", 2, &o), 0);
    }
    len = dv_annot(dv, "late", T0 + 990 * SEC);
    ck_assert_int_eq(hs_annot_update(s, a, HS_UPD_INSERT, dv, len,
                                     (const uint8_t *)"op", 2, &o), 0);
    ck_assert_int_eq(hs_side_stat(s, HS_SIDE_ANNOTS, &e, &side), 0);
    ck_assert_uint_eq(e, 201);
    ck_assert_int_eq(hs_store_totals(s, &tot), 0);
    ck_assert_uint_gt(side, 2 * tot.bytes);
    hs_store_close(s);

    /* The samples fit alone, and the side databases alone, but not
     * both: about half the samples go (the oldest). */
    s = open_store(64 << 20, side + tot.bytes / 2, 0, false);
    ck_assert_int_eq(hs_store_prune(s, T0 + 2000 * SEC, &n), 0);
    ck_assert_uint_gt(n, 0);
    ck_assert_int_eq(hs_store_totals(s, &tot2), 0);
    ck_assert_uint_lt(tot2.samples, 1000);
    ck_assert_uint_gt(tot2.samples, 100);
    ck_assert_int_eq(hs_side_prune(s, T0 + 2000 * SEC, &n), 0);
    /* The 200 before the oldest sample left went; the late one stays. */
    ck_assert_uint_eq(n, 200);
    ck_assert_int_eq(annots(s, a, 0, INT64_MAX, false, t, users), 1);
    ck_assert_int_eq(t[0], T0 + 990 * SEC);
    ck_assert_int_eq(hs_side_stat(s, HS_SIDE_ANNOTS, &e, &side2), 0);
    ck_assert_uint_eq(e, 1);
    ck_assert_uint_lt(side2, side);
    /* Under the limit now: a second pass drops nothing. */
    ck_assert_int_eq(hs_store_prune(s, T0 + 2000 * SEC, &n), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(hs_side_prune(s, T0 + 2000 * SEC, &n), 0);
    ck_assert_uint_eq(n, 0);
    hs_store_close(s);
}
END_TEST

static Suite *
modified_suite(void)
{
    Suite *s = suite_create("hist/modified");
    TCase *tc = tcase_create("modified");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_modified);
    tcase_add_test(tc, test_annotations);
    tcase_add_test(tc, test_retention);
    tcase_add_test(tc, test_size_limit);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(modified_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
