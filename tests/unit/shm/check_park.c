/*
 * tests/unit/shm/check_park.c: shm/park.c, the SHM_R_PARK region: its
 * size and layout from a plan (records and data per slot, the log rounded
 * up to a power of two), the change log in order, a record too long
 * (its time only), the log's wrap (an overwritten entry is refused, not
 * returned as another), the cut, a region refused when its header is
 * bad, and a reader in another process racing the writer (no torn entry
 * ever read as whole).
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/layout.h"
#include "shm/park.h"
#include "shm/plan.h"

static struct shm_park *
park_new(uint32_t workers, uint32_t recs, uint64_t bytes, uint32_t log,
         size_t *size)
{
    struct shm_plan  p = { .park_workers = workers, .park_records = recs,
                           .park_bytes = bytes,
                           .change_log_entries = log };
    struct shm_park *k;

    *size = (size_t)shm_park_region_bytes(&p);
    ck_assert_uint_gt(*size, 0);
    k = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
             -1, 0);
    ck_assert_ptr_ne(k, MAP_FAILED);
    ck_assert_int_eq(shm_park_region_init(k, *size, &p), 0);
    return k;
}

START_TEST(test_layout)
{
    struct shm_plan  p = { .park_workers = 4, .park_records = 100,
                           .park_bytes = 1 << 20,
                           .change_log_entries = 3000 };
    struct shm_park *k;
    size_t           n;

    ck_assert_uint_eq(sizeof(struct shm_clog_ent), 64);
    /* Off: no workers, or no bytes. */
    p.park_bytes = 0;
    ck_assert_uint_eq(shm_park_region_bytes(&p), 0);
    p.park_bytes = 1 << 20;
    k = park_new(4, 100, 1 << 20, 3000, &n);
    ck_assert_uint_eq(k->clog_n, 4096);         /* a power of two */
    ck_assert_uint_eq(k->nslots, 4);
    ck_assert_uint_eq(k->nrec, 100);
    ck_assert_uint_eq(n, shm_park_region_bytes(&p));
    /* Slots apart, each records then data, inside the region. */
    ck_assert_ptr_eq(shm_park_data(k, 0),
                     (uint8_t *)shm_park_recs(k, 0)
                         + 100 * sizeof(struct shm_park_rec));
    ck_assert_uint_ge((uint8_t *)shm_park_recs(k, 1)
                          - (uint8_t *)shm_park_data(k, 0),
                      1 << 20);
    ck_assert_uint_le((size_t)(shm_park_data(k, 3) - (uint8_t *)k)
                          + (1 << 20),
                      n);
    ck_assert_uint_eq((uintptr_t)shm_park_recs(k, 2) % SHM_CACHELINE, 0);
    /* Too small a region, a log below the minimum. */
    ck_assert_int_eq(shm_park_region_init(k, n - 1, &p), -EINVAL);
    munmap(k, n);
    k = park_new(1, 1, 64, 1, &n);
    ck_assert_uint_eq(k->clog_n, SHM_CLOG_MIN);
    munmap(k, n);
}
END_TEST

START_TEST(test_log_order)
{
    size_t              n;
    struct shm_park    *k = park_new(2, 4, 4096, SHM_CLOG_MIN, &n);
    struct shm_clog_ent e;
    uint8_t             rec[64];

    ck_assert_uint_eq(shm_park_head(k), 0);
    for (uint32_t i = 0; i < 10; i++) {
        memset(rec, (int)i, sizeof(rec));
        shm_park_log(k, 100 + i, 1000 + i, rec, 10 + i);
    }
    ck_assert_uint_eq(shm_park_head(k), 10);
    for (uint32_t i = 0; i < 10; i++) {
        ck_assert_int_eq(shm_park_read(k, i, &e), 0);
        ck_assert_uint_eq(e.slot, 100 + i);
        ck_assert_int_eq(e.srv_ts, 1000 + i);
        ck_assert_uint_eq(e.len, 10 + i);
        ck_assert_uint_eq(e.rec[0], i);
        ck_assert_uint_eq(e.rec[e.len - 1], i);
    }
    /* Not written yet. */
    shm_park_log(k, 1, 1, rec, 1);
    ck_assert_int_eq(shm_park_read(k, 12, &e), -ENOENT);
    /* Too long a record: its time and slot only. */
    shm_park_log(k, 7, 77, rec, SHM_CLOG_REC + 1);
    ck_assert_int_eq(shm_park_read(k, 11, &e), 0);
    ck_assert_uint_eq(e.len, SHM_CLOG_BIG);
    ck_assert_uint_eq(e.slot, 7);
    ck_assert_int_eq(e.srv_ts, 77);
    ck_assert_uint_eq(atomic_load(&k->clog_big), 1);
    /* At the limit: exactly SHM_CLOG_REC bytes are kept. */
    shm_park_log(k, 8, 88, rec, SHM_CLOG_REC);
    ck_assert_int_eq(shm_park_read(k, 12, &e), 0);
    ck_assert_uint_eq(e.len, SHM_CLOG_REC);
    /* The cut: the head when a slot's worker starts. */
    shm_park_cut(k, 1);
    ck_assert_uint_eq(atomic_load(&k->s[1].cut), 13);
    ck_assert_uint_eq(atomic_load(&k->s[0].cut), 0);
    munmap(k, n);
}
END_TEST

START_TEST(test_log_wrap)
{
    size_t              n;
    struct shm_park    *k = park_new(1, 1, 64, SHM_CLOG_MIN, &n);
    struct shm_clog_ent e;
    uint8_t             rec[8] = { 0 };
    uint64_t            total = 3 * SHM_CLOG_MIN + 5;

    for (uint64_t i = 0; i < total; i++) {
        memcpy(rec, &i, sizeof(i));
        shm_park_log(k, (uint32_t)i, (int64_t)i, rec, sizeof(rec));
    }
    /* Overwritten entries are refused, never read as the newer ones. */
    ck_assert_int_eq(shm_park_read(k, 0, &e), -ESTALE);
    ck_assert_int_eq(shm_park_read(k, total - SHM_CLOG_MIN - 1, &e),
                     -ESTALE);
    for (uint64_t i = total - SHM_CLOG_MIN; i < total; i++) {
        uint64_t v;

        ck_assert_int_eq(shm_park_read(k, i, &e), 0);
        memcpy(&v, e.rec, sizeof(v));
        ck_assert_uint_eq(v, i);
        ck_assert_int_eq(e.srv_ts, (int64_t)i);
    }
    munmap(k, n);
}
END_TEST

START_TEST(test_bad_header)
{
    struct shm_plan    p = { .park_workers = 2, .park_records = 4,
                             .park_bytes = 4096,
                             .change_log_entries = SHM_CLOG_MIN };
    struct shm_segment s;

    memset(&s, 0, sizeof(s));
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_park"), 0);
    ck_assert_ptr_nonnull(shm_park_of(&s));
    shm_park_of(&s)->clog_n = 1000;             /* not a power of two */
    ck_assert_ptr_null(shm_park_of(&s));
    shm_segment_close(&s);
    /* A plan without parks: no region. */
    p.park_bytes = 0;
    ck_assert_int_eq(shm_plan_create(&s, &p, "check_park"), 0);
    ck_assert_ptr_null(shm_park_of(&s));
    shm_segment_close(&s);
}
END_TEST

/* A reader in another process while the writer laps the log: every entry
 * read whole is the one asked for, its bytes all its own. */
START_TEST(test_race)
{
    size_t           n;
    struct shm_park *k = park_new(1, 1, 64, SHM_CLOG_MIN, &n);
    pid_t            pid;
    int              status;

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        uint8_t rec[SHM_CLOG_REC];

        for (uint64_t i = 0; i < 400000; i++) {
            memset(rec, (int)(i & 0xFF), sizeof(rec));
            memcpy(rec, &i, sizeof(i));
            shm_park_log(k, (uint32_t)i, (int64_t)i, rec, sizeof(rec));
        }
        _exit(0);
    }
    for (int round = 0; round < 200000; round++) {
        struct shm_clog_ent e;
        uint64_t            h = shm_park_head(k), i, v;

        if (h == 0)
            continue;
        i = h - 1 - (uint64_t)(round % SHM_CLOG_MIN) % h;
        if (shm_park_read(k, i, &e) != 0)
            continue;
        memcpy(&v, e.rec, sizeof(v));
        ck_assert_uint_eq(v, i);
        ck_assert_uint_eq(e.slot, (uint32_t)i);
        ck_assert_uint_eq(e.rec[SHM_CLOG_REC - 1], i & 0xFF);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    munmap(k, n);
}
END_TEST

static Suite *
park_suite(void)
{
    Suite *s = suite_create("Parked sessions and the change log");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_layout);
    tcase_add_test(tc, test_log_order);
    tcase_add_test(tc, test_log_wrap);
    tcase_add_test(tc, test_bad_header);
    tcase_add_test(tc, test_race);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(park_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
