/*
 * tests/unit/worker/fixture.h: the worker test fixture, shared by the
 * check_svc_*.c and check_session.c suites (header-only: every test file
 * is its own binary).
 *
 * fx_setup() maps the REAL address space, built by the broker's builder
 * (tests/unit/worker/fixture_seg.c, a build tool linked with libbroker,
 * wrote it to FX_SEG_DIR/default.seg) into a private copy and sets a
 * struct wk_worker over it, as a worker attached by fd would see it: node
 * store, value slots, the configuration snapshot, its stats row, decoding
 * limits from the snapshot, a session pool and the services.  A test that
 * needs other limits changes its copy of the snapshot (fx_setup_with; the
 * snapshot's fields are the configuration's, broker/config.c
 * bk_config_snapshot).  Channels are zeroed struct ua_sc with channel_id
 * 1, 2, 3 (the service layer only reads channel_id).
 *
 * fx_call() plays the connection layer: it encodes the type NodeId and the
 * request as a channel delivers them (no request context: nothing can be
 * deferred), runs wk_svc_dispatch on a fresh
 * request arena, encodes the response it returns and decodes it again, so
 * every test also goes through the encoder (UA_VARIANT_RAW included).
 * Decoded responses live in a response arena that is never reset during a
 * test, so they stay valid while the test runs.
 */
#ifndef WK_TEST_FIXTURE_H
#define WK_TEST_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/layout.h"
#include "shm/segment.h"
#include "shm/value.h"
#include "worker/session.h"
#include "worker/sub.h"
#include "worker/svc.h"
#include "worker/svc_browse.h"
#include "worker/svc_call.h"
#include "worker/svc_discovery.h"
#include "worker/svc_read.h"
#include "worker/svc_session.h"
#include "worker/svc_sub.h"
#include "worker/svc_write.h"
#include "worker/worker.h"

#define FX_NOW_MS      1000000u
#define FX_NOW_DT      INT64_C(133800000000000000)     /* a 2025 DateTime */
#define FX_ARENA       (16u << 20)
#define FX_RARENA      (256u << 20)
#define FX_MSG         (8u << 20)
#define FX_CHANNELS    3

/* Where fixture_seg wrote the segments (the Makefile says). */
#ifndef FX_SEG_DIR
#define FX_SEG_DIR "build/tests/unit/worker"
#endif

struct fx {
    struct wk_worker    w;
    struct wk_writes    writes;         /* the Write service's pool */
    struct wk_calls     calls;          /* the Call service's pool */
    struct ua_sc        ch[FX_CHANNELS];
    struct ua_arena     arena;          /* request arena, reset per call */
    uint8_t            *abuf;
    struct ua_arena     rarena;         /* decoded responses, kept */
    uint8_t            *rbuf;
    uint8_t            *msg;            /* encoded request */
    uint32_t            handle;
    /* What the last fx_call saw. */
    const struct ua_type *last_type;
    ua_status           last_dispatch;
};

static struct fx fx;

/* Change a test's snapshot before the worker sees it (NULL: as built). */
typedef void (*fx_tweak_fn)(struct shm_config *c);

/*
 * A private copy of the segment in FX_SEG_DIR/name (a memfd: what a test
 * writes stays its own), attached like a worker attaches its fd.
 */
static inline void
fx_map(const char *name)
{
    static char buf[1u << 20];
    char        path[4096];
    struct stat st;
    int         in, fd;

    snprintf(path, sizeof(path), "%s/%s", FX_SEG_DIR, name);
    in = open(path, O_RDONLY | O_CLOEXEC);
    ck_assert_msg(in != -1, "%s: run the fixture_seg build tool (make)",
                  path);
    ck_assert_int_eq(fstat(in, &st), 0);
    fd = memfd_create("fx", MFD_CLOEXEC);
    ck_assert_int_ne(fd, -1);
    ck_assert_int_eq(ftruncate(fd, st.st_size), 0);
    /* ftruncate keeps the file offset at 0: the copy fills it. */
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf));

        ck_assert_int_ge(n, 0);
        if (n == 0)
            break;
        ck_assert_int_eq(write(fd, buf, (size_t)n), n);
    }
    close(in);
    ck_assert_int_eq(shm_segment_attach(&fx.w.seg, fd, 1), 0);
}

/* fx_setup() on segment name (default.seg, big.seg), its snapshot changed
 * by tweak. */
static inline void
fx_setup_seg(const char *name, fx_tweak_fn tweak)
{
    memset(&fx, 0, sizeof(fx));
    fx_map(name);
    if (tweak != NULL)
        tweak((struct shm_config *)shm_segment_region(&fx.w.seg,
                                                      SHM_R_CONFIG));
    ck_assert_int_eq(shm_nodestore_open(&fx.w.ns, &fx.w.seg), 0);
    ck_assert_int_eq(shm_values_open(&fx.w.vals, &fx.w.seg), 0);
    fx.w.conf = shm_segment_region(&fx.w.seg, SHM_R_CONFIG);
    fx.w.row = shm_segment_region(&fx.w.seg, SHM_R_WORKERS);
    fx.w.limits.max_string_len = (int32_t)fx.w.conf->max_string_length;
    fx.w.limits.max_bytestring_len =
        (int32_t)fx.w.conf->max_bytestring_length;
    fx.w.limits.max_array_len = (int32_t)fx.w.conf->max_array_length;
    fx.w.limits.max_depth = UA_NESTING_MAX;
    fx.w.limits.max_message_size = fx.w.conf->max_message_size;
    fx.w.now_ms = FX_NOW_MS;
    fx.w.now_dt = FX_NOW_DT;
    fx.w.next_channel_id = FX_CHANNELS + 1;
    /* The layers main.c creates above the sessions, without the
     * connections and the link (worker/main.c wk_main_layers). */
    ck_assert_int_eq(wk_session_init(&fx.w), 0);
    ck_assert_int_eq(wk_svc_init(&fx.w), 0);
    ck_assert_int_eq(wk_svc_discovery_init(&fx.w), 0);
    ck_assert_int_eq(wk_svc_session_init(&fx.w), 0);
    ck_assert_int_eq(wk_svc_read_init(&fx.w), 0);
    ck_assert_int_eq(wk_svc_browse_init(&fx.w), 0);
    ck_assert_int_eq(wk_svc_write_init(&fx.writes, &fx.w,
                                       fx.w.conf->pending_writes), 0);
    fx.w.writes = &fx.writes;
    ck_assert_int_eq(wk_svc_call_init(&fx.calls, &fx.w,
                                      fx.w.conf->pending_calls,
                                      fx.w.conf->max_call_bytes, 65536), 0);
    fx.w.calls = &fx.calls;
    ck_assert_int_eq(wk_svc_sub_init(&fx.w), 0);
    for (int i = 0; i < FX_CHANNELS; i++)
        fx.ch[i].channel_id = (uint32_t)i + 1;

    fx.abuf = malloc(FX_ARENA);
    fx.rbuf = malloc(FX_RARENA);
    fx.msg = malloc(FX_MSG);
    ck_assert_ptr_nonnull(fx.abuf);
    ck_assert_ptr_nonnull(fx.rbuf);
    ck_assert_ptr_nonnull(fx.msg);
    ua_arena_init(&fx.arena, fx.abuf, FX_ARENA);
    ua_arena_init(&fx.rarena, fx.rbuf, FX_RARENA);
    fx.handle = 100;
}

static inline void
fx_setup_with(fx_tweak_fn tweak)
{
    fx_setup_seg("default.seg", tweak);
}

static inline void
fx_setup(void)
{
    fx_setup_with(NULL);
}

/*
 * Store a value into slot as the broker does (both timestamps now, a
 * server timestamp never older than the slot's last: broker/addrspace.c
 * bk_addrspace_write_value).  0 or shm_value_write's error.
 */
static inline int
fx_write_raw(uint32_t slot, const void *bytes, uint32_t len, int64_t now)
{
    struct shm_value m = { 0 };
    int64_t          prev;

    m.status = UA_GOOD;
    m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
    m.source_ts = now;
    m.server_ts = now;
    if (slot >= fx.w.vals.nslots)
        return -EINVAL;
    prev = atomic_load_explicit(&fx.w.vals.slots[slot].server_ts,
                                memory_order_relaxed);
    if (m.server_ts <= prev) {
        m.server_ts = prev + 1;
        m.server_ps = 0;
    }
    return shm_value_write(&fx.w.vals, slot, bytes, len, &m);
}

static inline void
fx_teardown(void)
{
    wk_sub_fini(&fx.w);
    wk_svc_call_clear(&fx.calls);
    wk_svc_write_clear(&fx.writes);
    wk_svc_browse_fini(&fx.w);
    wk_svc_fini(&fx.w);
    wk_session_fini(&fx.w);
    shm_segment_close(&fx.w.seg);
    free(fx.abuf);
    free(fx.rbuf);
    free(fx.msg);
}

/* Encode the type NodeId of type t and body into fx.msg; the length. */
static inline size_t
fx_encode_request(uint32_t binary_id, const struct ua_type *t,
                  const void *body)
{
    struct ua_nodeid tid = ua_nodeid_num(0, binary_id);
    size_t           n1, n2;

    ck_assert_uint_eq(ua_encode(&tid, &ua_types[UA_TYPE_NODEID], fx.msg,
                                FX_MSG, &n1), UA_GOOD);
    ck_assert_uint_eq(ua_encode(body, t, fx.msg + n1, FX_MSG - n1, &n2),
                      UA_GOOD);
    return n1 + n2;
}

/*
 * Dispatch msg[len]; encode and decode what comes back into resp (of type
 * resp_t; on a ServiceFault only its ResponseHeader is filled).  Returns
 * the ServiceResult.  The dispatch status is in fx.last_dispatch: when it
 * is Bad (the caller would close), the return is that status too.
 */
static inline ua_status
fx_dispatch_raw(struct ua_sc *ch, const uint8_t *msg, size_t len,
                const struct ua_type *resp_t, void *resp)
{
    struct wk_conn_result res;
    struct ua_sc_msg     m = { .request_id = 42, .body = msg, .len = len };
    struct ua_response_header *rh = resp;
    uint8_t             *out;
    size_t               olen, used;
    ua_status            st;

    ua_arena_reset(&fx.arena);
    st = wk_svc_dispatch(&fx.w, ch, NULL, &m, &fx.arena, &res);
    fx.last_dispatch = st;
    fx.last_type = NULL;
    memset(resp, 0, resp_t->size);
    if (st != UA_GOOD)
        return st;
    ck_assert_ptr_nonnull(res.type);
    ck_assert_ptr_nonnull(res.resp);
    fx.last_type = res.type;
    olen = ua_encoded_size(res.resp, res.type);
    ck_assert_uint_gt(olen, 0);
    out = ua_arena_alloc(&fx.rarena, olen);
    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(ua_encode(res.resp, res.type, out, olen, &olen),
                      UA_GOOD);
    if (res.type == &ua_types[UA_TYPE_SERVICEFAULT]) {
        struct ua_service_fault f;

        ck_assert_uint_eq(ua_decode(out, olen, &used, &f, res.type,
                                    &fx.rarena, NULL), UA_GOOD);
        ck_assert_uint_eq(used, olen);
        *rh = f.response_header;
        ck_assert(UA_STATUS_IS_BAD(rh->service_result));
    } else {
        ck_assert_ptr_eq(res.type, resp_t);
        ck_assert_uint_eq(ua_decode(out, olen, &used, resp, resp_t,
                                    &fx.rarena, NULL), UA_GOOD);
        ck_assert_uint_eq(used, olen);
    }
    ck_assert_uint_eq(rh->service_result, res.service_result);
    ck_assert(rh->timestamp == fx.w.now_dt);
    return rh->service_result;
}

/*
 * Send request req (type req_t, whose first member is its RequestHeader,
 * filled here with token and a fresh requestHandle) on ch.
 */
static inline ua_status
fx_call(struct ua_sc *ch, const struct ua_nodeid *token, int req_t,
        void *req, int resp_t, void *resp)
{
    struct ua_request_header  *h = req;
    struct ua_response_header *rh = resp;
    ua_status                  st;
    size_t                     len;

    h->authentication_token = token != NULL ? *token : ua_nodeid_num(0, 0);
    h->request_handle = ++fx.handle;
    h->timestamp = FX_NOW_DT;
    h->timeout_hint = 10000;
    len = fx_encode_request(ua_types[req_t].binary_id, &ua_types[req_t],
                            req);
    st = fx_dispatch_raw(ch, fx.msg, len, &ua_types[resp_t], resp);
    if (fx.last_dispatch == UA_GOOD)
        ck_assert_uint_eq(rh->request_handle, fx.handle);
    return st;
}

/* CreateSession on ch; the token in *token. */
static inline ua_status
fx_create(struct ua_sc *ch, double timeout_ms,
          struct ua_create_session_response *resp, struct ua_nodeid *token)
{
    struct ua_create_session_request req;
    ua_status                        st;

    memset(&req, 0, sizeof(req));
    req.client_description.application_uri = ua_string_from("urn:test");
    req.client_description.application_type = UA_APPLICATIONTYPE_CLIENT;
    req.session_name = ua_string_from("check");
    req.client_nonce.len = -1;
    req.client_certificate.len = -1;
    req.requested_session_timeout = timeout_ms;
    req.max_response_message_size = 0;
    st = fx_call(ch, NULL, UA_TYPE_CREATESESSIONREQUEST, &req,
                 UA_TYPE_CREATESESSIONRESPONSE, resp);
    if (st == UA_GOOD && token != NULL)
        *token = resp->authentication_token;
    return st;
}

/* ActivateSession with a null (anonymous) user token. */
static inline ua_status
fx_activate(struct ua_sc *ch, const struct ua_nodeid *token)
{
    struct ua_activate_session_request  req;
    struct ua_activate_session_response resp;

    memset(&req, 0, sizeof(req));
    req.client_signature.algorithm.len = -1;
    req.client_signature.signature.len = -1;
    req.user_token_signature.algorithm.len = -1;
    req.user_token_signature.signature.len = -1;
    return fx_call(ch, token, UA_TYPE_ACTIVATESESSIONREQUEST, &req,
                   UA_TYPE_ACTIVATESESSIONRESPONSE, &resp);
}

/* A created and activated session on ch. */
static inline struct ua_nodeid
fx_session(struct ua_sc *ch)
{
    struct ua_create_session_response cs;
    struct ua_nodeid                  token;

    ck_assert_uint_eq(fx_create(ch, 60000, &cs, &token), UA_GOOD);
    ck_assert_uint_eq(fx_activate(ch, &token), UA_GOOD);
    return token;
}

/* NodeIds. */
static inline struct ua_nodeid
fx_ns0(uint32_t id)
{
    return ua_nodeid_num(0, id);
}

static inline struct ua_nodeid
fx_ns1(const char *s)
{
    struct ua_nodeid n = { .ns = 1, .idtype = UA_IDTYPE_STRING };

    n.id.str = ua_string_from(s);
    return n;
}

/* The node index of a NodeId in the fixture's store. */
static inline uint32_t
fx_index(const struct ua_nodeid *n)
{
    struct shm_nodekey k = { .ns = n->ns, .idtype = n->idtype };

    if (n->idtype == UA_IDTYPE_NUMERIC) {
        k.num = n->id.num;
    } else {
        k.bytes = n->id.str.data;
        k.len = (uint32_t)n->id.str.len;
    }
    return shm_nodestore_lookup(&fx.w.ns, &k);
}

#endif /* WK_TEST_FIXTURE_H */
