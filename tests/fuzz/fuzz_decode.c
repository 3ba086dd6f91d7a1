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
 * A WriteRequest body is also walked as the worker's fused Write walks it
 * (ua_write_request_head, ua_write_value_usual): when the walk takes it,
 * the decode must succeed and hold the same WriteValues.
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
#include "proto/types_gen.h"

#define FUZZ_ARENA (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct ua_type *fuzz_pick(uint16_t sel);
static uint8_t *fuzz_encode(const void *v, const struct ua_type *t,
                            size_t hint, size_t *len);
static void fuzz_fail(const char *what, const struct ua_type *t, ua_status s);
static bool fuzz_write_walk(const uint8_t *body, size_t blen,
                            const struct ua_write_request *r);

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

/*
 * The fused Write's walk of body: false when it declines; true when it
 * takes it, then r (when not NULL, the decode's) must hold the same.
 */
static bool
fuzz_write_walk(const uint8_t *body, size_t blen,
                const struct ua_write_request *r)
{
    const struct ua_type    *t = &ua_types[UA_TYPE_WRITEREQUEST];
    struct ua_request_header h;
    const uint8_t           *p, *q, *bytes, *end = body + blen;
    int32_t                  n;
    uint32_t                 num, len, attr;
    uint16_t                 ns;
    uint8_t                  idtype;

    if (!ua_write_request_head(body, blen, &ua_limits_default, INT32_MAX,
                               &h, &p, &n))
        return false;
    if (r != NULL && (r->n_nodes_to_write != n
                      || r->request_header.request_handle
                             != h.request_handle))
        fuzz_fail("fused Write: another header or count", t, UA_GOOD);
    for (int32_t i = 0; i < n; i++) {
        const struct ua_write_value *wv;
        size_t                       fs;

        p = ua_write_value_usual(p, end, ua_limits_default.max_string_len,
                                 &ns, &idtype, &num, &bytes, &len, &q);
        if (p == NULL)
            return false;
        if (r == NULL)
            continue;
        wv = &r->nodes_to_write[i];
        fs = ua_write_usual_size(q[UA_WV_USUAL_TYPE]);
        memcpy(&attr, q + UA_WV_USUAL_ATTR, 4);
        if (wv->node_id.ns != ns || wv->node_id.idtype != idtype
            || (idtype == UA_IDTYPE_NUMERIC && wv->node_id.id.num != num)
            || (idtype == UA_IDTYPE_STRING
                && (wv->node_id.id.str.len != (int32_t)len
                    || wv->node_id.id.str.data != bytes))
            || wv->attribute_id != attr || wv->index_range.len != -1
            || wv->value.mask != UA_DV_VALUE || wv->value.value.is_array
            || wv->value.value.type != q[UA_WV_USUAL_TYPE]
            || (q[UA_WV_USUAL_TYPE] == UA_BT_BOOLEAN
                    ? *(const bool *)wv->value.value.data
                          != (q[UA_WV_USUAL_VALUE] != 0)
                    : memcmp(wv->value.value.data, q + UA_WV_USUAL_VALUE,
                             fs) != 0))
            fuzz_fail("fused Write: another WriteValue", t, UA_GOOD);
    }
    return true;
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
    if (t == &ua_types[UA_TYPE_WRITEREQUEST]
        && fuzz_write_walk(body, blen, s == UA_GOOD ? v1 : NULL)
        && s != UA_GOOD)
        fuzz_fail("fused Write: the walk took what the decode refuses", t,
                  s);
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
