/*
 * tests/fuzz/fuzz_decode.c: libFuzzer target for ua_decode() and the
 * encode/decode round trip of whatever it accepts.
 *
 * Input layout:
 *
 *   +--------+--------+---------------------------------+
 *   | sel lo | sel hi | body: the bytes handed to ua_decode
 *   +--------+--------+---------------------------------+
 *
 * sel (uint16, little-endian) picks the type:
 *   - sel < 25: the built-in ua_types[sel] (UA_TYPE_BOOLEAN ..
 *     UA_TYPE_DIAGNOSTICINFO), so Variant (23), DataValue (22),
 *     ExtensionObject (21) and DiagnosticInfo (24) are decoded directly;
 *   - sel is a DefaultBinary encoding id of ns=0 (ReadRequest 631, ...):
 *     that structure, so seeds stay valid when the table grows;
 *   - anything else: the structure at index sel modulo the number of
 *     structures that have a DefaultBinary id.
 *
 * When the body decodes, the value is re-encoded (buffer 2 * len + 64,
 * grown to the size ua_encode reports), the re-encoding must have
 * ua_encoded_size() bytes, decode again consuming every byte, compare equal
 * (ua_equal) and re-encode to the same bytes; any difference aborts.
 *
 * Only the two static arena buffers outlive a run; everything malloc'd is
 * freed before returning.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types.h"

#define FUZZ_ARENA (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct ua_type *fuzz_pick(uint16_t sel);
static uint8_t *fuzz_encode(const void *v, const struct ua_type *t,
                            size_t hint, size_t *len);
static void fuzz_fail(const char *what, const struct ua_type *t, ua_status s);

static uint8_t fuzz_arena1[FUZZ_ARENA] __attribute__((aligned(16)));
static uint8_t fuzz_arena2[FUZZ_ARENA] __attribute__((aligned(16)));

static const struct ua_type *
fuzz_pick(uint16_t sel)
{
    const struct ua_type *t;
    size_t                n = 0, k;

    if (sel <= UA_TYPE_DIAGNOSTICINFO)
        return &ua_types[sel];
    t = ua_types_by_binary_id(sel);
    if (t != NULL)
        return t;
    /* The index is sorted by id, so this order is stable too. */
    for (size_t i = 0; i < ua_types_binary_index_count; i++)
        if (ua_types[ua_types_binary_index[i].type].kind == UA_KIND_STRUCT)
            n++;
    if (n == 0)
        return &ua_types[UA_TYPE_VARIANT];
    k = sel % n;
    for (size_t i = 0; i < ua_types_binary_index_count; i++) {
        t = &ua_types[ua_types_binary_index[i].type];
        if (t->kind == UA_KIND_STRUCT && k-- == 0)
            return t;
    }
    return &ua_types[UA_TYPE_VARIANT];
}

static void
fuzz_fail(const char *what, const struct ua_type *t, ua_status s)
{
    fprintf(stderr, "fuzz_decode: %s: type %s, status %s (0x%08x)\n", what,
            t->name, ua_status_name(s), s);
    abort();
}

/* Encode v into a fresh malloc'd buffer; aborts when it cannot. */
static uint8_t *
fuzz_encode(const void *v, const struct ua_type *t, size_t hint, size_t *len)
{
    size_t    cap = hint, need = 0;
    uint8_t  *buf = malloc(cap);
    ua_status s;

    if (buf == NULL)
        abort();
    s = ua_encode(v, t, buf, cap, &need);
    if (s == UA_BAD_ENCODING_LIMITS_EXCEEDED && need > cap) {
        free(buf);
        cap = need;
        buf = malloc(cap);
        if (buf == NULL)
            abort();
        s = ua_encode(v, t, buf, cap, &need);
    }
    if (s != UA_GOOD)
        fuzz_fail("a decoded value does not re-encode", t, s);
    if (ua_encoded_size(v, t) != need)
        fuzz_fail("ua_encoded_size differs from ua_encode", t, s);
    *len = need;
    return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct ua_type *t;
    struct ua_arena       a1, a2;
    const uint8_t        *body;
    size_t                blen, used = 0, len1 = 0, len2 = 0;
    uint8_t              *enc1, *enc2;
    void                 *v1, *v2;
    ua_status             s;

    if (size < 2)
        return 0;
    t = fuzz_pick((uint16_t)(data[0] | data[1] << 8));
    body = data + 2;
    blen = size - 2;

    ua_arena_init(&a1, fuzz_arena1, sizeof(fuzz_arena1));
    v1 = calloc(1, t->size);
    if (v1 == NULL)
        abort();
    s = ua_decode(body, blen, &used, v1, t, &a1, NULL);
    if (s != UA_GOOD) {
        if (!UA_STATUS_IS_BAD(s))
            fuzz_fail("decode failed with a non-Bad status", t, s);
        free(v1);
        return 0;
    }
    if (used > blen)
        fuzz_fail("decode consumed more than it was given", t, s);

    enc1 = fuzz_encode(v1, t, 2 * blen + 64, &len1);

    ua_arena_init(&a2, fuzz_arena2, sizeof(fuzz_arena2));
    v2 = calloc(1, t->size);
    if (v2 == NULL)
        abort();
    used = 0;
    s = ua_decode(enc1, len1, &used, v2, t, &a2, NULL);
    if (s != UA_GOOD)
        fuzz_fail("a re-encoded value does not decode", t, s);
    if (used != len1)
        fuzz_fail("decoding a re-encoding left bytes over", t, s);
    if (!ua_equal(v1, v2, t))
        fuzz_fail("decode(encode(decode(x))) != decode(x)", t, s);

    enc2 = fuzz_encode(v2, t, len1 + 64, &len2);
    if (len2 != len1 || memcmp(enc1, enc2, len1) != 0)
        fuzz_fail("encoding is not canonical after one round trip", t, s);

    free(enc2);
    free(v2);
    free(enc1);
    free(v1);
    return 0;
}
