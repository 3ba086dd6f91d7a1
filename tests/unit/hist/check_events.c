/*
 * tests/unit/hist/check_events.c: hist/events.c on a real LMDB
 * environment beside the values (hist/store.c) in a temporary directory:
 * events appended in batches read back for every event (HS_EV_ALL) and
 * for a notifier's own entries, forward and backward, time ranges,
 * resuming strictly after an event (several events sharing one Time), a
 * duplicate skipped, bad input counted, retention by age and by size
 * (an event's notifier entries dropped with it), a reader handle beside
 * the writer, a reopened store keeping everything, a reader of a store
 * with no events yet, and a full map refusing events as it refuses
 * values.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hist/events.h"
#include "hist/store.h"
#include "store_fixture.h"

#define NA  0x1111111111111111ull    /* a notifier */
#define NB  0x2222222222222222ull    /* another */

static struct hs_events *
open_events(struct hs_store *s)
{
    char              err[256];
    struct hs_events *e = hs_events_open(s, err, sizeof(err));

    ck_assert_msg(e != NULL, "events: %s", err);
    return e;
}

/* A record: the 12-byte head, then one field "0:Seq" = UInt32 seq, padded
 * to len bytes with a ByteString field. */
static uint32_t
rec_make(uint8_t *b, uint32_t seq, uint32_t len)
{
    uint32_t h[3] = { 7, 8, 1 }, pos = 12;
    uint16_t pl = 5;
    uint32_t vl = 5;

    memcpy(b, h, 12);
    memcpy(b + pos, &pl, 2);
    memcpy(b + pos + 2, "0:Seq", 5);
    memcpy(b + pos + 7, &vl, 4);
    b[pos + 11] = 7;
    memcpy(b + pos + 12, &seq, 4);
    pos += 16;
    while (pos < len)
        b[pos++] = 0xAB;
    return pos;
}

static uint32_t
rec_seq(const struct hs_event *ev)
{
    uint32_t seq;

    ck_assert_uint_ge(ev->len, 28);
    memcpy(&seq, ev->rec + 24, 4);
    return seq;
}

/* n events, event i at t0 + (i / same) * step (same events share a time),
 * id i + 1, seen by NA when i is even and by NA and NB when i % 3 == 0;
 * in batches of batch. */
static void
ev_fill(struct hs_events *e, int64_t t0, int64_t step, int n, int same,
     int batch, uint32_t reclen)
{
    static uint8_t         recs[512][256];
    static struct hs_ev_in in[512];
    static const uint64_t  both[2] = { NA, NB };

    ck_assert_int_le(batch, 512);
    for (int i = 0; i < n;) {
        int k;

        for (k = 0; k < batch && i < n; k++, i++) {
            in[k].time = t0 + (i / same) * step;
            in[k].id = (uint64_t)i + 1;
            in[k].rec = recs[k];
            in[k].len = rec_make(recs[k], (uint32_t)i, reclen);
            in[k].notifiers = both;
            in[k].nnotifiers = i % 3 == 0 ? 2 : i % 2 == 0 ? 1 : 0;
        }
        ck_assert_int_eq(hs_events_append(e, in, (size_t)k), 0);
    }
}

/* Read notifier's events between lo and hi: their sequence numbers into
 * seq (at most max), strictly after (at, aid) when after; the count. */
static int
readn(struct hs_events *e, uint64_t notifier, int64_t lo, int64_t hi,
      bool rev, bool after, int64_t at, uint64_t aid, uint32_t *seq,
      int max, int64_t *last_t, uint64_t *last_id)
{
    struct hs_evread r;
    struct hs_event  ev;
    int              n = 0, rc;
    int64_t          prev = rev ? INT64_MAX : INT64_MIN;

    ck_assert_int_eq(hs_evread_begin(e, &r), 0);
    ck_assert_int_eq(hs_evread_seek(&r, notifier, lo, hi, rev, after, at,
                                    aid), 0);
    while (n < max && (rc = hs_evread_next(&r, &ev)) == 0) {
        ck_assert(rev ? ev.time <= prev : ev.time >= prev);
        ck_assert(ev.time >= lo && ev.time <= hi);
        prev = ev.time;
        if (seq != NULL)
            seq[n] = rec_seq(&ev);
        if (last_t != NULL)
            *last_t = ev.time;
        if (last_id != NULL)
            *last_id = ev.id;
        n++;
    }
    hs_evread_end(&r);
    return n;
}

START_TEST(test_append_read)
{
    struct hs_store    *s = open_store(64u << 20, 0, 0, false);
    struct hs_events   *e = open_events(s);
    struct hs_ev_totals t;
    static uint32_t     seq[4000];
    int                 n;

    ev_fill(e, T0, SEC, 3000, 1, 500, 64);
    ck_assert_int_eq(hs_events_totals(e, &t), 0);
    ck_assert_uint_eq(t.events, 3000);
    ck_assert_uint_eq(t.refs, 2 * 1000 + 1000);
    ck_assert_int_eq(t.first, T0);
    ck_assert_int_eq(t.last, T0 + 2999 * SEC);
    ck_assert_uint_eq(t.bytes, 3000 * (16 + 1 + 64) + 3000 * (8 + 24));
    /* Every event, forward and back. */
    n = readn(e, HS_EV_ALL, 0, INT64_MAX, false, false, 0, 0, seq, 4000,
              NULL, NULL);
    ck_assert_int_eq(n, 3000);
    for (int i = 0; i < n; i++)
        ck_assert_uint_eq(seq[i], (uint32_t)i);
    n = readn(e, HS_EV_ALL, 0, INT64_MAX, true, false, 0, 0, seq, 4000,
              NULL, NULL);
    ck_assert_int_eq(n, 3000);
    ck_assert_uint_eq(seq[0], 2999);
    /* A range, inclusive both ends. */
    n = readn(e, HS_EV_ALL, T0 + 10 * SEC, T0 + 19 * SEC, false, false, 0,
              0, seq, 4000, NULL, NULL);
    ck_assert_int_eq(n, 10);
    ck_assert_uint_eq(seq[0], 10);
    n = readn(e, HS_EV_ALL, T0 + 10 * SEC, T0 + 19 * SEC, true, false, 0,
              0, seq, 4000, NULL, NULL);
    ck_assert_int_eq(n, 10);
    ck_assert_uint_eq(seq[0], 19);
    /* A notifier's own: NA every even one, NB every third. */
    n = readn(e, NA, 0, INT64_MAX, false, false, 0, 0, seq, 4000, NULL,
              NULL);
    ck_assert_int_eq(n, 1500 + 500);
    for (int i = 0; i < n; i++)
        ck_assert(seq[i] % 2 == 0 || seq[i] % 3 == 0);
    n = readn(e, NB, T0 + 300 * SEC, T0 + 599 * SEC, true, false, 0, 0,
              seq, 4000, NULL, NULL);
    ck_assert_int_eq(n, 100);
    ck_assert_uint_eq(seq[0], 597);
    ck_assert_uint_eq(seq[99], 300);
    /* No such notifier, an empty range. */
    ck_assert_int_eq(readn(e, 0x33, 0, INT64_MAX, false, false, 0, 0, NULL,
                           10, NULL, NULL), 0);
    ck_assert_int_eq(readn(e, HS_EV_ALL, T0 - 10 * SEC, T0 - SEC, false,
                           false, 0, 0, NULL, 10, NULL, NULL), 0);
    hs_events_close(e);
    hs_store_close(s);
}
END_TEST

/* Pages of 7 over events five to a time: each once, in order, both ways
 * and for both kinds of notifier. */
START_TEST(test_resume)
{
    struct hs_store  *s = open_store(64u << 20, 0, 0, false);
    struct hs_events *e = open_events(s);
    static uint32_t   seq[64];
    static bool       seen[1000];
    uint64_t          notif[2] = { HS_EV_ALL, NA };

    ev_fill(e, T0, SEC, 1000, 5, 100, 40);
    for (int k = 0; k < 2; k++)
        for (int rev = 0; rev < 2; rev++) {
            int64_t  at = 0;
            uint64_t aid = 0;
            int      total = 0, n;
            bool     after = false;

            memset(seen, 0, sizeof(seen));
            do {
                n = readn(e, notif[k], T0 + 100 * SEC, T0 + 149 * SEC,
                          rev != 0, after, at, aid, seq, 7, &at, &aid);
                for (int i = 0; i < n; i++) {
                    ck_assert(!seen[seq[i]]);
                    seen[seq[i]] = true;
                }
                total += n;
                after = true;
            } while (n == 7);
            /* 50 times, 5 events each; NA sees the even ones and every
             * third. */
            ck_assert_int_eq(total, k == 0 ? 250 : 250 - 250 / 3);
        }
    hs_events_close(e);
    hs_store_close(s);
}
END_TEST

START_TEST(test_duplicates_and_bad)
{
    struct hs_store    *s = open_store(64u << 20, 0, 0, false);
    struct hs_events   *e = open_events(s);
    struct hs_ev_totals t;
    uint8_t             rec[64];
    uint64_t            many[HS_EV_NOTIFIERS_MAX + 1] = { 0 };
    struct hs_ev_in     in[4];

    memset(in, 0, sizeof(in));
    in[0].time = T0;
    in[0].id = 9;
    in[0].rec = rec;
    in[0].len = rec_make(rec, 1, 40);
    in[1] = in[0];                      /* the same again */
    in[2] = in[0];
    in[2].time = -1;                    /* no time */
    in[3] = in[0];
    in[3].id = 10;
    in[3].notifiers = many;
    in[3].nnotifiers = HS_EV_NOTIFIERS_MAX + 1;
    ck_assert_int_eq(hs_events_append(e, in, 4), 0);
    ck_assert_int_eq(hs_events_append(e, in, 1), 0);
    ck_assert_int_eq(hs_events_totals(e, &t), 0);
    ck_assert_uint_eq(t.events, 1);
    ck_assert_uint_eq(t.duplicates, 2);
    ck_assert_uint_eq(t.rejected, 2);
    hs_events_close(e);
    hs_store_close(s);
}
END_TEST

START_TEST(test_retention)
{
    struct hs_store    *s = open_store(64u << 20, 0, 0, false);
    struct hs_events   *e = open_events(s);
    struct hs_ev_totals t, t2;
    uint64_t            n;

    ev_fill(e, T0, SEC, 1000, 1, 200, 100);
    /* By age: what is older than 100 s before T0 + 999 s goes. */
    ck_assert_int_eq(hs_events_prune(e, T0 + 999 * SEC, 100 * SEC, 0, &n),
                     0);
    ck_assert_uint_eq(n, 899);
    ck_assert_int_eq(hs_events_totals(e, &t), 0);
    ck_assert_uint_eq(t.events, 101);
    ck_assert_uint_eq(t.dropped, 899);
    ck_assert_int_eq(t.first, T0 + 899 * SEC);
    /* The notifiers' entries went with their events. */
    ck_assert_int_eq(readn(e, NA, 0, INT64_MAX, false, false, 0, 0, NULL,
                           2000, NULL, NULL), 50 + 34 - 17);
    ck_assert_int_eq(readn(e, NB, 0, T0 + 898 * SEC, false, false, 0, 0,
                           NULL, 2000, NULL, NULL), 0);
    /* Nothing more to drop: no transaction written. */
    ck_assert_int_eq(hs_events_prune(e, T0 + 999 * SEC, 100 * SEC, 0, &n),
                     0);
    ck_assert_uint_eq(n, 0);
    /* By size: the oldest first, down to the limit. */
    ck_assert_int_eq(hs_events_prune(e, T0, 0, t.bytes / 2, &n), 0);
    ck_assert_int_eq(hs_events_totals(e, &t2), 0);
    ck_assert_uint_le(t2.bytes, t.bytes / 2);
    ck_assert_uint_gt(t2.bytes + 200, t.bytes / 2);
    ck_assert_uint_eq(t2.events + n, 101);
    ck_assert_int_eq(t2.last, T0 + 999 * SEC);
    ck_assert_int_eq(readn(e, HS_EV_ALL, 0, INT64_MAX, false, false, 0, 0,
                           NULL, 2000, NULL, NULL), (int)t2.events);
    hs_events_close(e);
    hs_store_close(s);
}
END_TEST

/* A reader handle (another "process") sees each commit; a reopened store
 * keeps the events; a reader of a store without events finds none. */
START_TEST(test_reader_reopen)
{
    struct hs_store  *s = open_store(64u << 20, 0, 0, false);
    struct hs_store  *rs;
    struct hs_events *e, *re;

    /* A store the writer opened before events existed. */
    rs = open_store(0, 0, 0, true);
    re = open_events(rs);
    ck_assert_int_eq(readn(re, HS_EV_ALL, 0, INT64_MAX, false, false, 0, 0,
                           NULL, 10, NULL, NULL), 0);
    hs_events_close(re);
    hs_store_close(rs);
    e = open_events(s);
    ev_fill(e, T0, SEC, 100, 1, 50, 40);
    hs_events_close(e);
    hs_store_close(s);
    /* Reader first, then the writer again. */
    rs = open_store(0, 0, 0, true);
    re = open_events(rs);
    s = open_store(64u << 20, 0, 0, false);
    e = open_events(s);
    ck_assert_int_eq(readn(re, HS_EV_ALL, 0, INT64_MAX, false, false, 0, 0,
                           NULL, 1000, NULL, NULL), 100);
    ev_fill(e, T0 + 1000 * SEC, SEC, 50, 1, 50, 40);
    ck_assert_int_eq(readn(re, HS_EV_ALL, 0, INT64_MAX, false, false, 0, 0,
                           NULL, 1000, NULL, NULL), 150);
    ck_assert_int_eq(readn(re, NA, 0, INT64_MAX, true, false, 0, 0, NULL,
                           1000, NULL, NULL), 67 + 33);
    hs_events_close(re);
    hs_store_close(rs);
    hs_events_close(e);
    hs_store_close(s);
}
END_TEST

/* A map too small: events refused with -ENOSPC, the store full for values
 * too; what was committed still reads. */
START_TEST(test_map_full)
{
    struct hs_store  *s = open_store(1u << 20, 0, 0, false);
    struct hs_events *e = open_events(s);
    static uint8_t    rec[200][256];
    struct hs_ev_in   in[200];
    int               rc = 0, batches = 0;

    memset(in, 0, sizeof(in));
    while (rc == 0 && batches < 1000) {
        for (int k = 0; k < 200; k++) {
            in[k].time = T0 + (int64_t)(batches * 200 + k) * SEC;
            in[k].id = 1;
            in[k].rec = rec[k];
            in[k].len = rec_make(rec[k], (uint32_t)k, 256);
        }
        rc = hs_events_append(e, in, 200);
        batches++;
    }
    ck_assert_int_eq(rc, -ENOSPC);
    ck_assert(hs_store_full(s));
    ck_assert_int_eq(hs_events_append(e, in, 1), -ENOSPC);
    ck_assert_int_eq(readn(e, HS_EV_ALL, 0, INT64_MAX, false, false, 0, 0,
                           NULL, 1 << 20, NULL, NULL), (batches - 1) * 200);
    hs_events_close(e);
    hs_store_close(s);
}
END_TEST

static Suite *
events_suite(void)
{
    Suite *s = suite_create("hist/events");
    TCase *tc = tcase_create("events");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_append_read);
    tcase_add_test(tc, test_resume);
    tcase_add_test(tc, test_duplicates_and_bad);
    tcase_add_test(tc, test_retention);
    tcase_add_test(tc, test_reader_reopen);
    tcase_add_test(tc, test_map_full);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(events_suite());
    int      nf;

    srunner_run_all(sr, CK_NORMAL);
    nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
