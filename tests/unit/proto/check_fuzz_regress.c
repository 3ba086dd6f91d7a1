/*
 * tests/unit/proto/check_fuzz_regress.c: every input a fuzzer crashed on,
 * replayed through the same checks as the fuzz target (tests/fuzz/README.md:
 * "every crash becomes a unit test").
 *
 * fr_replay() does what tests/fuzz/fuzz_decode.c does with one input:
 * decode, re-encode (exact-size heap buffers, so ASan sees any overrun),
 * check ua_encoded_size, decode the re-encoding, compare with ua_equal and
 * re-encode again to the same bytes.  Some findings are undefined behaviour
 * that only a sanitizer shows: such a test passes in a plain build and fails
 * under `make SAN=1 check` until the code is fixed.  Each tcase names the
 * finding, the fuzz target and the date it was found.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"

#define FR_ARENA (1u << 20)

static void fr_replay(const uint8_t *in, size_t len, const struct ua_type *t,
                      ua_status want);
static uint8_t *fr_encode(const void *v, const struct ua_type *t, size_t *len);
Suite *fr_suite(void);

static uint8_t fr_arena1[FR_ARENA] __attribute__((aligned(16)));
static uint8_t fr_arena2[FR_ARENA] __attribute__((aligned(16)));

/* Encode v into a malloc'd buffer of exactly the size it needs. */
static uint8_t *
fr_encode(const void *v, const struct ua_type *t, size_t *len)
{
    size_t    need = 0, sz;
    uint8_t  *buf;
    ua_status s;

    s = ua_encode(v, t, NULL, 0, &need);
    ck_assert_msg(s == UA_BAD_ENCODING_LIMITS_EXCEEDED || need == 0,
                  "%s: size probe: %s", t->name, ua_status_name(s));
    buf = malloc(need == 0 ? 1 : need);
    ck_assert_ptr_nonnull(buf);
    s = ua_encode(v, t, buf, need, len);
    ck_assert_msg(s == UA_GOOD, "%s: re-encode: %s", t->name,
                  ua_status_name(s));
    ck_assert_uint_eq(*len, need);
    sz = ua_encoded_size(v, t);
    ck_assert_msg(sz == need, "%s: ua_encoded_size %zu, encode %zu", t->name,
                  sz, need);
    return buf;
}

/*
 * Decode in[len] as t; want is the status the decoder must return.  When it
 * is UA_GOOD the value must survive the round trip of fuzz_decode.c.
 */
static void
fr_replay(const uint8_t *in, size_t len, const struct ua_type *t,
          ua_status want)
{
    struct ua_arena a1, a2;
    uint8_t        *copy, *enc1, *enc2;
    void           *v1, *v2;
    size_t          used = 0, len1 = 0, len2 = 0;
    ua_status       s;

    /* A heap copy of exactly len bytes: an over-read is an ASan report. */
    copy = malloc(len == 0 ? 1 : len);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, in, len);
    v1 = calloc(1, t->size);
    v2 = calloc(1, t->size);
    ck_assert_ptr_nonnull(v1);
    ck_assert_ptr_nonnull(v2);
    ua_arena_init(&a1, fr_arena1, sizeof(fr_arena1));
    ua_arena_init(&a2, fr_arena2, sizeof(fr_arena2));

    s = ua_decode(copy, len, &used, v1, t, &a1, NULL);
    ck_assert_msg(s == want, "%s: decode: %s (0x%08x), want %s", t->name,
                  ua_status_name(s), s, ua_status_name(want));
    if (s == UA_GOOD) {
        ck_assert_uint_le(used, len);
        enc1 = fr_encode(v1, t, &len1);
        used = 0;
        s = ua_decode(enc1, len1, &used, v2, t, &a2, NULL);
        ck_assert_msg(s == UA_GOOD, "%s: decoding the re-encoding: %s",
                      t->name, ua_status_name(s));
        ck_assert_uint_eq(used, len1);
        ck_assert_msg(ua_equal(v1, v2, t), "%s: decode(encode(decode(x))) "
                      "!= decode(x)", t->name);
        enc2 = fr_encode(v2, t, &len2);
        ck_assert_uint_eq(len2, len1);
        ck_assert_msg(memcmp(enc1, enc2, len1) == 0,
                      "%s: second re-encoding differs", t->name);
        free(enc2);
        free(enc1);
    }
    free(v2);
    free(v1);
    free(copy);
}

/*
 * fuzz_decode, 2026-11-30: Variant "array of Double, 0 elements".  The
 * decoder leaves data == NULL for an empty array; re-encoding called
 * memcpy(dst, NULL, 0) in ua_enc_raw() via ua_enc_array()'s memory-layout
 * path (UBSan: "null pointer passed as argument 2").  Same for an empty
 * UInt32/StatusCode/... array member of any structure.  Fixed in
 * ua_enc_raw() by skipping n == 0.
 * Crash input (selector 23 = Variant): 17 00 | 8b 00 00 00 00
 */
START_TEST(test_empty_memory_array_reencode)
{
    static const uint8_t variant_double_empty[] = { 0x8b, 0x00, 0x00, 0x00,
                                                    0x00 };
    /* The same through a structure: WriteResponse, results = [] */
    static const uint8_t write_response_empty[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,     /* timestamp */
        0x01, 0x00, 0x00, 0x00,                             /* handle */
        0x00, 0x00, 0x00, 0x00,                             /* result */
        0x00,                                               /* diag mask */
        0xff, 0xff, 0xff, 0xff,                             /* string table */
        0x00, 0x00, 0x00,                                   /* extobj none */
        0x00, 0x00, 0x00, 0x00,                             /* results: [] */
        0x00, 0x00, 0x00, 0x00,                             /* diags: [] */
    };
    /* Every memory-layout built-in as a 0-element Variant array. */
    static const uint8_t memory_bts[] = {
        UA_BT_SBYTE, UA_BT_BYTE, UA_BT_INT16, UA_BT_UINT16, UA_BT_INT32,
        UA_BT_UINT32, UA_BT_INT64, UA_BT_UINT64, UA_BT_FLOAT, UA_BT_DOUBLE,
        UA_BT_DATETIME, UA_BT_GUID, UA_BT_STATUSCODE,
    };

    fr_replay(variant_double_empty, sizeof(variant_double_empty),
              &ua_types[UA_TYPE_VARIANT], UA_GOOD);
    fr_replay(write_response_empty, sizeof(write_response_empty),
              &ua_types[UA_TYPE_WRITERESPONSE], UA_GOOD);
    for (size_t i = 0; i < sizeof(memory_bts); i++) {
        uint8_t in[5] = { (uint8_t)(0x80 | memory_bts[i]), 0, 0, 0, 0 };

        fr_replay(in, sizeof(in), &ua_types[UA_TYPE_VARIANT], UA_GOOD);
    }
}
END_TEST

Suite *
fr_suite(void)
{
    Suite *s = suite_create("Fuzz regressions");
    TCase *tc;

    tc = tcase_create("Empty memory-layout array re-encodes");
    tcase_add_test(tc, test_empty_memory_array_reencode);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(fr_suite());
    int      nfail;

    srunner_run_all(sr, CK_NORMAL);
    nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
