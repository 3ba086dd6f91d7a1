/*
 * tests/unit/hist/check_sample.c: hist/sample.c: a DataValue split into
 * time and body and written back with each timestampsToReturn, packed and
 * unpacked with every flag (server delta, no server, no source,
 * picoseconds), a Double's 15 bytes, blocks checked, damaged bytes and bad
 * DataValues refused.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist/sample.h"

static void
le64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* A Double DataValue with the parts asked for; its length. */
static size_t
dv_double(uint8_t *b, double d, uint32_t status, int64_t src, int64_t srv,
          uint16_t sps, uint16_t vps)
{
    size_t n = 1;

    b[0] = 0x01;
    b[n++] = 11;
    memcpy(b + n, &d, 8);
    n += 8;
    if (status) {
        b[0] |= 0x02;
        memcpy(b + n, &status, 4);
        n += 4;
    }
    if (src >= 0) {
        b[0] |= 0x04;
        le64(b + n, src);
        n += 8;
    }
    if (sps) {
        b[0] |= 0x10;
        b[n++] = (uint8_t)sps;
        b[n++] = (uint8_t)(sps >> 8);
    }
    if (srv >= 0) {
        b[0] |= 0x08;
        le64(b + n, srv);
        n += 8;
    }
    if (vps) {
        b[0] |= 0x20;
        b[n++] = (uint8_t)vps;
        b[n++] = (uint8_t)(vps >> 8);
    }
    return n;
}

static void
roundtrip(double d, uint32_t st, int64_t src, int64_t srv, uint16_t sps,
          uint16_t vps)
{
    uint8_t          dv[64], blk[256], out[64];
    struct hs_sample a, b;
    const uint8_t   *p;
    size_t           n = dv_double(dv, d, st, src, srv, sps, vps), sz, m;
    uint8_t         *e;
    int64_t          prev;

    ck_assert_int_eq(hs_sample_split(dv, n, &a), 0);
    ck_assert_int_eq(a.t, src >= 0 ? src : srv);
    ck_assert_uint_eq(hs_sample_status(&a), st);
    prev = a.t - 10000000;
    if (prev < 0)
        prev = 0;
    sz = hs_sample_packed_size(&a, prev);
    e = hs_sample_pack(&a, prev, blk);
    ck_assert_uint_eq((size_t)(e - blk), sz);
    p = blk;
    ck_assert_int_eq(hs_sample_unpack(&p, blk + sz, prev, &b), 0);
    ck_assert_ptr_eq(p, blk + sz);
    ck_assert_int_eq(b.t, a.t);
    ck_assert(b.has_src == a.has_src && b.has_srv == a.has_srv);
    if (b.has_srv)
        ck_assert_int_eq(b.srv, a.srv);
    ck_assert_uint_eq(b.src_ps, sps);
    ck_assert_uint_eq(b.srv_ps, vps);
    /* Both timestamps back: the very bytes that went in. */
    m = hs_sample_dv_write(&b, HS_TS_BOTH, out, sizeof(out));
    ck_assert_uint_eq(m, n);
    ck_assert_mem_eq(out, dv, n);
    ck_assert_uint_eq(hs_sample_status(&b), st);
}

START_TEST(test_roundtrip)
{
    int64_t t = 133000000000000000ll;

    roundtrip(1.5, 0, t, t, 0, 0);
    roundtrip(-2.25, 0x00A80000u, t, t + 12345, 0, 0);
    roundtrip(3.0, 0, t, t - 7, 0, 0);
    roundtrip(4.0, 0x80000000u, t, -1, 0, 0);
    roundtrip(5.0, 0, -1, t, 0, 0);
    roundtrip(6.0, 0, t, t + 1, 17, 900);
    roundtrip(7.0, 0, t, -1, 3, 0);
    roundtrip(8.0, 0, -1, t, 0, 5);
    roundtrip(9.0, 0, 0, 0, 0, 0);
}
END_TEST

START_TEST(test_double_15_bytes)
{
    uint8_t          dv[64];
    struct hs_sample a;
    int64_t          t = 133000000000000000ll;
    size_t           n = dv_double(dv, 20.5, 0, t, t, 0, 0);

    ck_assert_int_eq(hs_sample_split(dv, n, &a), 0);
    ck_assert_uint_eq(a.body_len, 10);
    /* One second after the previous: 4 + 1 + 10. */
    ck_assert_uint_eq(hs_sample_packed_size(&a, t - 10000000), 15);
    ck_assert_uint_eq(hs_sample_packed_size(&a, t), 12);
}
END_TEST

START_TEST(test_ts_to_return)
{
    uint8_t          dv[64], out[64];
    struct hs_sample a;
    int64_t          t = 133000000000000000ll;
    size_t           n = dv_double(dv, 1.0, 0, t, t + 5, 0, 0), m;

    ck_assert_int_eq(hs_sample_split(dv, n, &a), 0);
    m = hs_sample_dv_write(&a, HS_TS_SOURCE, out, sizeof(out));
    ck_assert_uint_eq(m, 18);
    ck_assert_uint_eq(out[0], 0x05);
    m = hs_sample_dv_write(&a, HS_TS_SERVER, out, sizeof(out));
    ck_assert_uint_eq(m, 18);
    ck_assert_uint_eq(out[0], 0x09);
    ck_assert_uint_eq(out[10], (uint8_t)(t + 5));
    m = hs_sample_dv_write(&a, HS_TS_NEITHER, out, sizeof(out));
    ck_assert_uint_eq(m, 10);
    ck_assert_uint_eq(out[0], 0x01);
    ck_assert_uint_eq(hs_sample_dv_size(&a, HS_TS_BOTH), 26);
    /* Too small a buffer: nothing written. */
    ck_assert_uint_eq(hs_sample_dv_write(&a, HS_TS_BOTH, out, 25), 0);
}
END_TEST

START_TEST(test_split_refuses)
{
    uint8_t          dv[64];
    struct hs_sample a;
    size_t           n;

    memset(dv, 0, sizeof(dv));
    ck_assert_int_eq(hs_sample_split(dv, 0, &a), -EINVAL);
    /* No timestamp at all. */
    n = dv_double(dv, 1.0, 0, -1, -1, 0, 0);
    ck_assert_int_eq(hs_sample_split(dv, n, &a), -EINVAL);
    /* Unknown mask bits. */
    n = dv_double(dv, 1.0, 0, 5, 5, 0, 0);
    dv[0] |= 0x40;
    ck_assert_int_eq(hs_sample_split(dv, n, &a), -EINVAL);
    /* Shorter than its timestamps. */
    n = dv_double(dv, 1.0, 0, 5, 5, 0, 0);
    ck_assert_int_eq(hs_sample_split(dv, 12, &a), -EINVAL);
    /* A negative time. */
    n = dv_double(dv, 1.0, 0, -1, 5, 0, 0);
    memset(dv + n - 8, 0xFF, 8);
    ck_assert_int_eq(hs_sample_split(dv, n, &a), -EINVAL);
}
END_TEST

START_TEST(test_block)
{
    uint8_t          dv[64], blk[1024], *p;
    struct hs_sample a;
    int64_t          t0 = 1000, prev = t0, t;
    size_t           n;
    int              i;

    p = blk + HS_BLOCK_HDR;
    for (i = 0; i < 20; i++) {
        t = t0 + i * 10;
        n = dv_double(dv, i, 0, t, t, 0, 0);
        ck_assert_int_eq(hs_sample_split(dv, n, &a), 0);
        p = hs_sample_pack(&a, prev, p);
        prev = t;
    }
    hs_block_hdr_set(blk, 20, prev);
    ck_assert_uint_eq(hs_block_count(blk), 20);
    ck_assert_int_eq(hs_block_last(blk), prev);
    ck_assert_int_eq(hs_block_check(blk, (size_t)(p - blk), t0), 0);
    /* A wrong first time, count, a cut block, a bad length. */
    ck_assert_int_eq(hs_block_check(blk, (size_t)(p - blk), t0 + 1),
                     -EINVAL);
    hs_block_hdr_set(blk, 19, prev);
    ck_assert_int_eq(hs_block_check(blk, (size_t)(p - blk), t0), -EINVAL);
    hs_block_hdr_set(blk, 20, prev);
    ck_assert_int_eq(hs_block_check(blk, (size_t)(p - blk) - 3, t0),
                     -EINVAL);
    blk[HS_BLOCK_HDR + 1] = 0xFF;    /* a length varint that never ends */
    blk[HS_BLOCK_HDR + 2] = 0xFF;
    ck_assert_int_eq(hs_block_check(blk, (size_t)(p - blk), t0), -EINVAL);
    ck_assert_int_eq(hs_block_check(blk, 5, t0), -EINVAL);
}
END_TEST

START_TEST(test_unpack_fuzz)
{
    uint8_t          b[64];
    struct hs_sample s;
    unsigned         seed = 7;

    /* Random bytes never read past the end. */
    for (int i = 0; i < 100000; i++) {
        const uint8_t *p = b;
        size_t         n = 1 + (size_t)(rand_r(&seed) % 40);

        for (size_t j = 0; j < n; j++)
            b[j] = (uint8_t)rand_r(&seed);
        if (hs_sample_unpack(&p, b + n, 5, &s) == 0) {
            ck_assert(p <= b + n);
            ck_assert(s.body + s.body_len <= b + n);
        }
    }
}
END_TEST

static Suite *
sample_suite(void)
{
    Suite *s = suite_create("hist/sample");
    TCase *tc = tcase_create("sample");

    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_double_15_bytes);
    tcase_add_test(tc, test_ts_to_return);
    tcase_add_test(tc, test_split_refuses);
    tcase_add_test(tc, test_block);
    tcase_add_test(tc, test_unpack_fuzz);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(sample_suite());
    int      failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
