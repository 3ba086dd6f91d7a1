/*
 * tests/unit/worker/outbox_fixture.h: what check_outbox.c and
 * check_svc_write.c share: a link without rings and a pool of one pending
 * Write over an outbox of a chosen shape (fo_make), a table of WriteValue
 * cases (fo_case: every fixed-size type and the values that must fall
 * back), Writes queued through the run or the general path (fo_write), and
 * the comparison of two outboxes (fo_same).  Header-only, on top of
 * fixture.h.
 */
#ifndef WK_TEST_OUTBOX_FIXTURE_H
#define WK_TEST_OUTBOX_FIXTURE_H

#include "fixture.h"

#include "proto/attrs_gen.h"
#include "worker/link.h"
#include "worker/outbox.h"
#include "worker/svc_write.h"

/* A link with no rings and a pool of one pending Write: enough for the
 * Write path up to the outbox. */
struct fo {
    struct wk_link   l;             /* its outbox */
    struct wk_writes ws;
};

/* Slot size ss, a request ring of ring_slots, an outbox of cap_slots; the
 * outbox full of stale bytes, which must never travel. */
static inline void
fo_make(struct fo *f, uint32_t ss, uint32_t ring_slots, uint32_t cap_slots)
{
    struct wk_outbox *ob = &f->l.out;

    memset(f, 0, sizeof(*f));
    f->l.w = &fx.w;
    f->l.on = true;
    ob->w = &fx.w;
    ob->slot_size = ss;
    ob->ring_slots = ring_slots;
    ob->cap = cap_slots * ss;
    ob->buf = malloc(ob->cap);
    ck_assert_ptr_nonnull(ob->buf);
    memset(ob->buf, 0xA5, ob->cap);
    ob->open_off = UINT32_MAX;
    ck_assert_int_eq(wk_svc_write_init(&f->ws, &fx.w, 1), 0);
}

static inline void
fo_free(struct fo *f)
{
    wk_svc_write_clear(&f->ws);
    free(f->l.out.buf);
}

/* The values of the table (fo_case), and what they point at. */
#define FO_BIG 600          /* ByteString bytes: more than small rings */

static bool     fo_bool[2] = { false, true };
static int8_t   fo_i8 = -5;
static uint8_t  fo_u8 = 200;
static int16_t  fo_i16 = -300;
static uint16_t fo_u16 = 60000;
static int32_t  fo_i32 = -70000;
static uint32_t fo_u32 = 4000000000u;
static float    fo_f = 1.5f;
static int64_t  fo_i64 = -5000000000;
static uint64_t fo_u64 = UINT64_C(18000000000000000000);
static double   fo_d = 2.25;
static int64_t  fo_dt = INT64_C(133800000000000000);
static uint32_t fo_sc = 0x80340000u;
static struct ua_string fo_str;
static struct ua_string fo_bigbs;
static uint8_t  fo_big[FO_BIG];
static struct ua_guid   fo_guid = { 1, 2, 3, { 4, 5, 6, 7, 8, 9, 10, 11 } };
static int32_t  fo_arr[3] = { 1, 2, 3 };
static char     fo_longrange[SHM_FO_RANGE_MAX + 2];

#define FO_NCASES 25

/* Case k: the WriteValue's DataValue, IndexRange and AttributeId. */
static inline void
fo_case(int k, struct ua_datavalue *dv, struct ua_string *range,
        uint32_t *attr)
{
    static const struct { uint8_t type; void *p; } fixed[] = {
        { UA_BT_BOOLEAN, &fo_bool[0] }, { UA_BT_BOOLEAN, &fo_bool[1] },
        { UA_BT_SBYTE, &fo_i8 }, { UA_BT_BYTE, &fo_u8 },
        { UA_BT_INT16, &fo_i16 }, { UA_BT_UINT16, &fo_u16 },
        { UA_BT_INT32, &fo_i32 }, { UA_BT_UINT32, &fo_u32 },
        { UA_BT_FLOAT, &fo_f }, { UA_BT_INT64, &fo_i64 },
        { UA_BT_UINT64, &fo_u64 }, { UA_BT_DOUBLE, &fo_d },
        { UA_BT_DATETIME, &fo_dt }, { UA_BT_STATUSCODE, &fo_sc },
    };
    const int nfixed = (int)(sizeof(fixed) / sizeof(fixed[0]));

    memset(dv, 0, sizeof(*dv));
    dv->mask = UA_DV_VALUE;
    dv->value.ndims = -1;
    range->len = -1;
    range->data = NULL;
    *attr = UA_ATTR_VALUE;
    if (k < nfixed) {
        ua_variant_set_scalar(&dv->value, fixed[k].p, fixed[k].type);
        return;
    }
    switch (k - nfixed) {
    case 0:     /* the Value bit, a null Variant */
        break;
    case 1:
        ua_variant_set_scalar(&dv->value, &fo_str, UA_BT_STRING);
        break;
    case 2:
        ua_variant_set_scalar(&dv->value, &fo_guid, UA_BT_GUID);
        break;
    case 3:
        dv->value.type = UA_BT_INT32;
        dv->value.is_array = 1;
        dv->value.n = 3;
        dv->value.data = fo_arr;
        break;
    case 4:     /* a status as well */
        ua_variant_set_scalar(&dv->value, &fo_i32, UA_BT_INT32);
        dv->mask |= UA_DV_STATUS;
        dv->status = 0x40000000u;
        break;
    case 5:     /* a source timestamp as well */
        ua_variant_set_scalar(&dv->value, &fo_d, UA_BT_DOUBLE);
        dv->mask |= UA_DV_SOURCE_TS;
        dv->source_ts = fo_dt;
        break;
    case 6:     /* an IndexRange */
        ua_variant_set_scalar(&dv->value, &fo_i32, UA_BT_INT32);
        *range = ua_string_from("1");
        break;
    case 7:     /* an IndexRange too long to travel */
        ua_variant_set_scalar(&dv->value, &fo_i32, UA_BT_INT32);
        *range = ua_string_from(fo_longrange);
        break;
    case 8:     /* no value at all */
        dv->mask = 0;
        break;
    case 9:     /* another attribute, past 16 bits */
        ua_variant_set_scalar(&dv->value, &fo_u8, UA_BT_BYTE);
        *attr = 70000;
        break;
    default:    /* larger than small rings */
        ua_variant_set_scalar(&dv->value, &fo_bigbs, UA_BT_BYTESTRING);
        break;
    }
}

/* Queue ops operations of cases seq[] as Write id, run or not. */
static inline void
fo_write(struct fo *f, const int *seq, uint32_t ops, bool run)
{
    struct wk_conn_ref   ref;
    struct wk_outbox_run r;
    int                  id;

    memset(&ref, 0, sizeof(ref));
    id = wk_svc_write_begin(&f->ws, &ref, ops);
    ck_assert_int_gt(id, 0);
    if (run)
        wk_outbox_run_open(&f->l.out, id, &r);
    for (uint32_t i = 0; i < ops; i++) {
        struct ua_datavalue dv;
        struct ua_string    range;
        uint32_t            attr;
        uint32_t            node = 1000 + i;
        ua_status           st;

        fo_case(seq[i], &dv, &range, &attr);
        if (run)
            st = wk_outbox_run_add(&f->l.out, &r, id, i, node, attr, &range,
                                   &dv);
        else
            st = wk_outbox_write_any(&f->l.out, id, i, node, attr, &range,
                                     &dv);
        if (st != UA_GOOD)
            wk_svc_write_result(&f->ws, id, i, st);
    }
    if (run)
        wk_outbox_run_close(&f->l.out, &r);
}

/* Both hold the same records, state and results. */
static inline void
fo_same(const struct fo *a, const struct fo *b, const char *what)
{
    const struct wk_outbox *x = &a->l.out, *y = &b->l.out;

    ck_assert_msg(x->len == y->len, "%s: outbox %u vs %u", what, x->len,
                  y->len);
    for (uint32_t i = 0; i < x->len; i++)
        ck_assert_msg(x->buf[i] == y->buf[i],
                      "%s: byte %u: 0x%02x (general) vs 0x%02x (run)", what,
                      i, x->buf[i], y->buf[i]);
    ck_assert_uint_eq(x->open_off, y->open_off);
    ck_assert_uint_eq(x->open_id, y->open_id);
    ck_assert_uint_eq(x->open_len, y->open_len);
    ck_assert_uint_eq(x->open_nops, y->open_nops);
    ck_assert_uint_eq(x->open_nslots, y->open_nslots);
    ck_assert_uint_eq(a->ws.pool[0].n, b->ws.pool[0].n);
    ck_assert_uint_eq(a->ws.pool[0].left, b->ws.pool[0].left);
    ck_assert_mem_eq(a->ws.pool[0].results, b->ws.pool[0].results,
                     a->ws.pool[0].n * sizeof(ua_status));
}

/* The values the cases point at (fo_str, fo_big, fo_longrange). */
static inline void
fu_values(void)
{
    fo_str = ua_string_from("a string value");
    memset(fo_big, 'b', sizeof(fo_big));
    fo_bigbs.len = FO_BIG;
    fo_bigbs.data = fo_big;
    memset(fo_longrange, '1', SHM_FO_RANGE_MAX + 1);
    fo_longrange[SHM_FO_RANGE_MAX + 1] = '\0';
}

#endif /* WK_TEST_OUTBOX_FIXTURE_H */
