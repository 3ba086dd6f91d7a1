/*
 * tests/unit/worker/check_outbox.c: worker/outbox.c, the request records
 * built into the link's outbox: the record bytes a run appends
 * (wk_outbox_run_add) against wk_outbox_write_any's, over every fixed-size
 * type and the values that must fall back, across slot, record and outbox
 * limits (tests/unit/worker/outbox_fixture.h).
 */
#include "fixture.h"
#include "outbox_fixture.h"

#include <stdatomic.h>

/*
 * Slot sizes, ring sizes and outboxes that make records take new slots
 * on every alignment, end records at the ring's size (a new record for
 * the rest), and fill the outbox (BadServerTooBusy); the value too large
 * for a ring (BadRequestTooLarge) and the other fallbacks in between.
 * Each configuration runs its sequence as two Writes, the second after
 * the first in the same outbox.
 */
START_TEST(test_run_same_records)
{
    static const struct { uint32_t ss, ring, cap; } cf[] = {
        { 32, 4096, 4096 }, { 40, 4096, 4096 }, { 64, 8, 4096 },
        { 72, 3, 4096 }, { 256, 64, 64 }, { 32, 16, 40 }, { 1024, 2, 2 },
        { 48, 4096, 30 },
    };
    int      seq[256];
    uint32_t x = 12345;
    uint64_t counted = 0;
    size_t   ncases = 0;

    fu_values();
    for (size_t c = 0; c < sizeof(cf) / sizeof(cf[0]); c++) {
        for (int pattern = 0; pattern < 3; pattern++) {
            struct fo        a, b;
            uint32_t         ops = pattern == 0 ? 40 : 256;
            uint64_t         before;

            /* 0: every case in order; 1: fixed-size ones mostly, a
             * fallback now and then; 2: any, at random. */
            for (uint32_t i = 0; i < ops; i++) {
                x = x * 1103515245u + 12345u;
                if (pattern == 0)
                    seq[i] = (int)(i % FO_NCASES);
                else if (pattern == 1)
                    seq[i] = (x >> 16) % 16 == 0
                                 ? 14 + (int)((x >> 8) % (FO_NCASES - 14))
                                 : (int)((x >> 20) % 14);
                else
                    seq[i] = (int)((x >> 16) % FO_NCASES);
            }
            fo_make(&a, cf[c].ss, cf[c].ring, cf[c].cap);
            fo_make(&b, cf[c].ss, cf[c].ring, cf[c].cap);
            for (int wr = 0; wr < 2; wr++) {
                uint32_t n = wr == 0 ? ops / 2 : ops - ops / 2;
                const int *s0 = seq + (wr == 0 ? 0 : ops / 2);

                before = atomic_load(&fx.w.row->write_ops);
                fo_write(&a, s0, n, false);
                counted = atomic_load(&fx.w.row->write_ops) - before;
                before = atomic_load(&fx.w.row->write_ops);
                fo_write(&b, s0, n, true);
                ck_assert_uint_eq(atomic_load(&fx.w.row->write_ops) - before,
                                  counted);
                fo_same(&a, &b, "after a Write");
                /* Free the pending Write for the next one, as its
                 * answer would. */
                a.ws.pool[0].id = b.ws.pool[0].id = 0;
                a.ws.free = b.ws.free = 0;
                ncases++;
            }
            fo_free(&a);
            fo_free(&b);
        }
    }
    ck_assert_uint_eq(ncases, 2 * 3 * sizeof(cf) / sizeof(cf[0]));
}
END_TEST

/*
 * The table's outcomes are what the general path's rules say, so the
 * comparison above compares something: fixed-size values travel, a value
 * too large for the ring and an IndexRange too long do not.
 */
START_TEST(test_run_outcomes)
{
    struct fo            f;
    struct wk_outbox    *ob = &f.l.out;
    struct wk_conn_ref   ref;
    struct wk_outbox_run r;
    struct ua_datavalue  dv;
    struct ua_string     range;
    uint32_t             attr;
    int                  id;

    fu_values();
    fo_make(&f, 64, 8, 4096);
    memset(&ref, 0, sizeof(ref));
    id = wk_svc_write_begin(&f.ws, &ref, 4);
    ck_assert_int_gt(id, 0);
    wk_outbox_run_open(ob, id, &r);
    ck_assert_ptr_null(r.rec);                  /* no record yet */
    fo_case(6 /* Int32 */, &dv, &range, &attr);
    ck_assert_uint_eq(wk_outbox_run_add(ob, &r, id, 0, 7, attr, &range, &dv),
                      UA_GOOD);
    ck_assert_ptr_nonnull(r.rec);               /* opened by the first */
    ck_assert_uint_eq(wk_outbox_run_add(ob, &r, id, 1, 8, attr, &range, &dv),
                      UA_GOOD);
    ck_assert_uint_eq(r.nops - r.nops0, 1);     /* the second ran */
    fo_case(FO_NCASES - 1, &dv, &range, &attr);
    ck_assert_uint_eq(wk_outbox_run_add(ob, &r, id, 2, 9, attr, &range, &dv),
                      UA_BAD_REQUEST_TOO_LARGE);
    fo_case(14 + 7, &dv, &range, &attr);
    ck_assert_uint_eq(wk_outbox_run_add(ob, &r, id, 3, 9, attr, &range, &dv),
                      UA_BAD_INDEX_RANGE_INVALID);
    wk_outbox_run_close(ob, &r);
    ck_assert_uint_eq(ob->open_nops, 2);
    ck_assert_uint_eq(ob->open_len, sizeof(struct shm_fo_write) + 2 * 24);
    fo_free(&f);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("worker/outbox");
    TCase   *tc = tcase_create("runs vs the general path");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_run_same_records);
    tcase_add_test(tc, test_run_outcomes);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
