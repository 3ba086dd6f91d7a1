/*
 * tests/unit/broker/value_fixture.h: the value path's world in one
 * process, shared by check_value.c, check_fanout.c and check_request.c
 * (header-only: each suite is its own binary).  The real address space
 * with 2 workers' rings and a pool of 24 blocks of 1 KiB, the fan-out and
 * the request drain on it, both workers started; the tests play the
 * workers through the shm API (rings, block pool, lost marks, interest
 * bits).
 */
#ifndef TESTS_VALUE_FIXTURE_H
#define TESTS_VALUE_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/event.h"
#include "broker/fanout.h"
#include "broker/request.h"
#include "broker/value.h"
#include "proto/codec.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/blockpool.h"
#include "shm/fanout.h"
#include "shm/ring.h"

#define T0 INT64_C(133470720000000000)

static struct bk_config    conf;
static struct bk_addrspace as;
static struct bk_fanout    fo;
static struct bk_request   rq;
static struct event_base  *base;
static char                dir[64];

static uint32_t            req_slots = 64;
static unsigned            fx_workers = 2; /* with a historian: 1 */

static inline void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    conf.value_heap_mb = 4;
    /* Two slots: two workers, or one and the historian's. */
    conf.workers = fx_workers;
    conf.history_enabled = fx_workers == 1;
    conf.fanout_blocks = 24;
    conf.fanout_block_size = 1024;
    conf.fanout_notif_ring_slots = 16;
    conf.fanout_req_ring_slots = req_slots;
    conf.fanout_reply_ring_slots = 64;
    snprintf(dir, sizeof(dir), "/tmp/uabf-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(conf.runtime_dir, sizeof(conf.runtime_dir), "%s", dir);
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    ck_assert_msg(bk_fanout_init(&fo, &as.seg, &as.vals, base, &conf, err,
                                 sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(fo.n, 2);
    ck_assert_msg(bk_request_init(&rq, &as, &fo, base, &conf, err,
                                  sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(rq.n, 2);
    bk_value_set_fanout(&as.val, &fo);
    ck_assert_int_eq(bk_request_worker_start(&rq, 0), 0);
    ck_assert_int_eq(bk_request_worker_start(&rq, 1), 0);
}

/* setup() with a request ring that takes a record of 300 Writes. */
static inline void
setup_big(void)
{
    req_slots = 256;
    setup();
    req_slots = 64;
}

/* setup() with worker 0 and the historian in slot 1. */
static inline void
setup_hist(void)
{
    fx_workers = 1;
    setup();
    fx_workers = 2;
}

static inline void
teardown(void)
{
    char p[128];

    bk_value_set_fanout(&as.val, NULL);
    bk_request_clear(&rq);
    bk_fanout_clear(&fo);
    event_base_free(base);
    bk_addrspace_close(&as);
    /* nanomsg removes its ipc files on close, but not synchronously. */
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s/w%d.bell", dir, i);
        unlink(p);
    }
    rmdir(dir);
}

static inline uint32_t
slot_of(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };
    uint32_t           n;

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    n = shm_nodestore_lookup(&as.ns, &k);
    ck_assert_uint_ne(n, SHM_NONE);
    return as.ns.nodes[n].u.var.slot;
}

static inline uint32_t
node_of(const char *s)
{
    struct shm_nodekey k = { .ns = 1, .idtype = SHM_ID_STRING };

    k.bytes = (const uint8_t *)s;
    k.len = (uint32_t)strlen(s);
    return shm_nodestore_lookup(&as.ns, &k);
}

/* One Int32 value into slot, in a value batch of its own. */
static inline void
set_i32(uint32_t slot, int32_t v, int64_t now)
{
    bk_value_batch_begin(&as.val);
    ck_assert_int_eq(bk_value_write_scalar(&as.val, slot, UA_BT_INT32, &v,
                                           now), 0);
    bk_value_batch_end(&as.val);
}

/* Worker w's view: its notification ring as consumer. */
static inline void
worker_ring(unsigned w, struct shm_ring_ref *r)
{
    ck_assert_int_eq(shm_ring_locate(r, &as.seg, w, SHM_RING_NOTIF), 0);
}

/*
 * Worker w's notifications so far, decoded in order: slot[i], the
 * DataValue dv[i] (values in a), at most max; the count.  Every block is
 * released.  Event records are skipped.
 */
static inline uint32_t
take_notifs(unsigned w, uint32_t *slot, struct ua_datavalue *dv,
            uint32_t max, struct ua_arena *a)
{
    struct shm_ring_ref      r;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_blockpool_ref pool;
    const uint8_t           *bytes;
    uint32_t                 s, len, n = 0;

    worker_ring(w, &r);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    while (shm_ring_pop_spsc(&r, &h) == 0) {
        ck_assert_int_eq(shm_blockpool_open(&pool, h, w, &it), 0);
        while (shm_blockpool_next(&it, &s, &bytes, &len) == 1) {
            if (s == SHM_FO_EVENT_SLOT)
                continue;
            ck_assert_uint_lt(n, max);
            slot[n] = s;
            ck_assert_uint_eq(ua_decode(bytes, len, NULL, &dv[n],
                                        &ua_types[UA_TYPE_DATAVALUE], a,
                                        NULL), UA_GOOD);
            n++;
        }
        ck_assert_int_eq(shm_blockpool_release(&pool, h, w), 0);
    }
    return n;
}

/* A BaseEventType event of the Server object, severity sev, into buf. */
static inline uint32_t
build_event(uint8_t *buf, uint32_t cap, uint16_t sev)
{
    struct bk_event    e;
    struct shm_nodekey k = { .ns = 0, .idtype = SHM_ID_NUMERIC,
                             .num = 2253 };
    uint32_t           srv = shm_nodestore_lookup(&as.ns, &k);

    k.num = 2041;
    bk_event_begin(&e, buf, cap, srv, shm_nodestore_lookup(&as.ns, &k));
    ck_assert_int_eq(bk_event_std(&e, &as.ns, T0, sev), 0);
    return e.len;
}

/* The event records in worker w's ring (released); their count. */
static inline uint32_t
take_events(unsigned w, uint8_t *last, uint32_t *last_len)
{
    struct shm_ring_ref      r;
    struct shm_block_handle  h;
    struct shm_block_iter    it;
    struct shm_blockpool_ref pool;
    const uint8_t           *bytes;
    uint32_t                 s, len, n = 0;

    worker_ring(w, &r);
    ck_assert_int_eq(shm_blockpool_locate(&pool, &as.seg), 0);
    while (shm_ring_pop_spsc(&r, &h) == 0) {
        ck_assert_int_eq(shm_blockpool_open(&pool, h, w, &it), 0);
        while (shm_blockpool_next(&it, &s, &bytes, &len) == 1)
            if (s == SHM_FO_EVENT_SLOT) {
                n++;
                if (last != NULL) {
                    memcpy(last, bytes, len);
                    *last_len = len;
                }
            }
        ck_assert_int_eq(shm_blockpool_release(&pool, h, w), 0);
    }
    return n;
}

#endif /* TESTS_VALUE_FIXTURE_H */
