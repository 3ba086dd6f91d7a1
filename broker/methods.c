/*
 * broker/methods.c: method calls forwarded to their owner over the
 * methods socket, and the `uabroker methods` command (methods.h; the
 * protocol and its use in docs/feed.md "Methods").
 *
 * A call: the worker's SHM_FO_CALL record (input arguments checked by the
 * worker against InputArguments) takes a slot of the call table, is
 * printed as "call ID", the object's and the method's NodeIds on a line
 * each and one VALUE line per argument, and
 * sent (never blocking: a PAIR socket with a zero send timeout).  Its
 * answer, "result ID STATUS" and VALUE lines, is parsed against the
 * method's OutputArguments (read from the node store, like the worker
 * does), encoded into the slot, and queued on the worker's reply ring as
 * a SHM_FO_CALL_RESULT (bk_request_call_reply); an answer that finds no
 * room waits in its slot (done) and is retried at the next iteration.  A
 * timer set to the oldest deadline times calls out.  Nothing allocated
 * per call: the arena is reset per message.
 */
#include "methods.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "feedline.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"
#include "write.h"

#define BK_METHODS_LINE_MAX   65536     /* one value line, `methods` */
#define BK_METHODS_CONNECT_MS 5000
#define BK_METHODS_POLL_MS    1000

static int bk_methods_deliver(struct bk_methods *m,
                              const struct bk_methods_call *c);
static int bk_methods_send(struct bk_methods *m, const char *msg, size_t len);
static void bk_methods_hook_call(void *arg, unsigned worker,
                                 const uint8_t *rec, uint32_t len);
static void bk_methods_hook_flush(void *arg);
static void bk_methods_on_sock(evutil_socket_t fd, short what, void *arg);
static void bk_methods_on_timer(evutil_socket_t fd, short what, void *arg);
static void bk_methods_arm(struct bk_methods *m);
static void bk_methods_finish(struct bk_methods *m, struct bk_methods_call *c,
                              ua_status st);
static void bk_methods_answer(struct bk_methods *m, unsigned worker,
                              uint32_t gen, uint32_t wid, uint32_t op,
                              ua_status st);
static ua_status bk_methods_argdefs(const struct bk_addrspace *as,
                                    uint32_t meth, const char *name,
                                    struct ua_arena *a,
                                    struct ua_argument **defs, int32_t *n);
static bool bk_methods_rank_ok(const struct ua_argument *d,
                               const struct ua_variant *v);
struct bk_mcmd;
static void bk_mcmd_exec(struct bk_mcmd *c, size_t n);
static ua_status bk_methods_outputs(struct bk_methods *m,
                                    struct bk_methods_call *c,
                                    const char *p, const char *end);

/* ------------------------------------------------------------ setup */

int
bk_methods_setup(struct bk_methods *m, struct bk_addrspace *as,
                 struct bk_request *rq, const struct bk_config *c, char *err,
                 size_t errlen)
{
    uint32_t workers = c->workers != 0 ? c->workers : 1;

    memset(m, 0, sizeof(*m));
    m->sock.sock = m->sock.fd = -1;
    m->as = as;
    m->rq = rq;
    m->timeout_ms = c->methods_timeout_ms;
    m->ncalls = workers * (c->methods_pending_calls != 0
                               ? c->methods_pending_calls : 1);
    m->out_cap = c->methods_max_call_bytes;
    /* A message: the call line, and each argument's text, which may take
     * several times its encoded bytes (base64, numbers). */
    m->msg_cap = 8 * (size_t)c->methods_max_call_bytes + 4096;
    m->arena_cap = 4 * (size_t)c->methods_max_call_bytes + (256u << 10);
    m->clock = bk_clock_ms;
    m->deliver = bk_methods_deliver;
    m->send = bk_methods_send;
    m->free_call = UINT32_MAX;
    m->calls = bk_calloc(m->ncalls, sizeof(*m->calls));
    m->msg = bk_alloc(m->msg_cap + 1);
    m->arena_buf = bk_alloc(m->arena_cap);
    if (m->calls == NULL || m->msg == NULL || m->arena_buf == NULL)
        goto nomem;
    for (uint32_t i = m->ncalls; i-- > 0;) {
        m->calls[i].out = bk_alloc(m->out_cap);
        if (m->calls[i].out == NULL)
            goto nomem;
        m->calls[i].next_free = m->free_call;
        m->free_call = i;
    }
    ua_arena_init(&m->arena, m->arena_buf, m->arena_cap);
    m->round = 1;
    if (rq != NULL)
        bk_request_on_call(rq, bk_methods_hook_call, bk_methods_hook_flush,
                           m);
    return 0;
nomem:
    snprintf(err, errlen, "methods: out of memory");
    bk_methods_clear(m);
    return -1;
}

int
bk_methods_init(struct bk_methods *m, struct event_base *base,
                struct bk_addrspace *as, struct bk_request *rq,
                const struct bk_config *c, char *err, size_t errlen)
{
    int rc;

    if (bk_methods_setup(m, as, rq, c, err, errlen) != 0)
        return -1;
    if (c->methods_listen[0] != '\0')
        snprintf(m->url, sizeof(m->url), "%s", c->methods_listen);
    else
        snprintf(m->url, sizeof(m->url), "ipc://%s/%s", c->runtime_dir,
                 BK_METHODS_NAME);
    /* A socket file left by a dead broker would refuse the bind. */
    if (strncmp(m->url, "ipc://", 6) == 0)
        (void)unlink(m->url + 6);
    rc = shm_feed_bind(&m->sock, SHM_FEED_PAIR, m->url, (int)m->msg_cap);
    if (rc != 0) {
        snprintf(err, errlen, "methods socket %s: %s", m->url,
                 strerror(-rc));
        bk_methods_clear(m);
        return -1;
    }
    event_assign(&m->sock_ev, base, shm_feed_fd(&m->sock),
                 EV_READ | EV_PERSIST, bk_methods_on_sock, m);
    evtimer_assign(&m->timer_ev, base, bk_methods_on_timer, m);
    m->events = true;
    if (event_add(&m->sock_ev, NULL) != 0) {
        snprintf(err, errlen, "methods: event_add() failed");
        bk_methods_clear(m);
        return -1;
    }
    return 0;
}

void
bk_methods_clear(struct bk_methods *m)
{
    if (m->rq != NULL && m->rq->call_arg == m)
        bk_request_on_call(m->rq, NULL, NULL, NULL);
    if (m->events) {
        event_del(&m->sock_ev);
        event_del(&m->timer_ev);
        m->events = false;
    }
    if (m->sock.sock != -1)
        shm_feed_close(&m->sock);
    if (m->calls != NULL)
        for (uint32_t i = 0; i < m->ncalls; i++)
            bk_free(m->calls[i].out);
    bk_free(m->calls);
    bk_free(m->msg);
    bk_free(m->arena_buf);
    m->calls = NULL;
    m->msg = NULL;
    m->arena_buf = NULL;
}

/* ------------------------------------------------------------ hooks */

static void
bk_methods_hook_call(void *arg, unsigned worker, const uint8_t *rec,
                     uint32_t len)
{
    bk_methods_on_call(arg, worker, rec, len);
}

static void
bk_methods_hook_flush(void *arg)
{
    bk_methods_flush(arg);
}

static int
bk_methods_deliver(struct bk_methods *m, const struct bk_methods_call *c)
{
    if (m->rq == NULL)
        return -EPIPE;
    return bk_request_call_reply(m->rq, c->worker, c->gen, c->wid, c->op,
                                 c->status, c->out, c->out_len, c->nout);
}

static int
bk_methods_send(struct bk_methods *m, const char *msg, size_t len)
{
    if (m->sock.sock == -1)
        return -ENOTCONN;
    return shm_feed_send(&m->sock, msg, len);
}

/* A counter of the request drain's (for /stats), if there is one. */
#define BK_METHODS_COUNT(m, f)                                             \
    do {                                                                   \
        if ((m)->rq != NULL)                                               \
            (m)->rq->mstat.f++;                                            \
    } while (0)

/* ------------------------------------------------------------ calls */

/* An answer without outputs for a call that has no slot. */
static void
bk_methods_answer(struct bk_methods *m, unsigned worker, uint32_t gen,
                  uint32_t wid, uint32_t op, ua_status st)
{
    struct bk_methods_call c;

    memset(&c, 0, sizeof(c));
    c.worker = worker;
    c.gen = gen;
    c.wid = wid;
    c.op = op;
    c.status = st;
    /* From inside the request drain's on_call (the only caller): a
     * result without outputs always finds room (bk_request_call_reply). */
    (void)m->deliver(m, &c);
}

/* c is answered with st (and its outputs, when Good): deliver or wait. */
static void
bk_methods_finish(struct bk_methods *m, struct bk_methods_call *c,
                  ua_status st)
{
    int rc;

    c->status = st;
    if ((st & 0x80000000u) != 0) {
        c->nout = 0;
        c->out_len = 0;
    }
    rc = m->deliver(m, c);
    if (rc == -EMSGSIZE) {
        c->status = UA_BAD_RESPONSE_TOO_LARGE;
        c->nout = 0;
        c->out_len = 0;
        rc = m->deliver(m, c);
    }
    if (rc == -ENOSPC) {
        if (!c->done) {
            c->done = true;
            m->ndone++;
        }
        return;
    }
    if (c->done)
        m->ndone--;
    c->done = false;
    c->seq = 0;
    c->next_free = m->free_call;
    m->free_call = (uint32_t)(c - m->calls);
    m->busy--;
}

void
bk_methods_flush(struct bk_methods *m)
{
    for (uint32_t i = 0; i < m->ncalls && m->ndone != 0; i++)
        if (m->calls[i].seq != 0 && m->calls[i].done)
            bk_methods_finish(m, &m->calls[i], m->calls[i].status);
}

void
bk_methods_on_call(struct bk_methods *m, unsigned worker,
                   const uint8_t *rec, uint32_t len)
{
    const struct shm_nodestore *ns = &m->as->ns;
    struct shm_fo_call          r;
    struct bk_methods_call     *c;
    struct ua_nodeid            id;
    const uint8_t              *p;
    size_t                      off, left, used;
    uint32_t                    gen = 0;
    int                         k;

    memcpy(&r, rec, sizeof(r));
    if (m->rq != NULL && worker < m->rq->n)
        gen = m->rq->w[worker].gen;
    BK_METHODS_COUNT(m, calls);
    if (r.object >= ns->nnodes || r.method >= ns->nnodes
        || r.args_len > len - sizeof(r)
        || r.user_len > len - sizeof(r) - r.args_len
        || r.user_len > SHM_FO_USER_MAX
        || r.audit_len > len - sizeof(r) - r.args_len - r.user_len
        || r.audit_len > SHM_FO_AUDIT_MAX) {
        bk_methods_answer(m, worker, gen, r.id, r.op, UA_BAD_INTERNAL_ERROR);
        return;
    }
    /* A condition's methods: the broker's own (broker/alarmnode.h). */
    {
        ua_status st;

        const char *user = (const char *)rec + sizeof(r) + r.args_len;

        if (bk_alarmnode_call(&m->as->alarms, &r, rec + sizeof(r), user,
                              r.user_len, user + r.user_len, r.audit_len,
                              ua_datetime_now(), &st)) {
            bk_methods_answer(m, worker, gen, r.id, r.op, st);
            return;
        }
    }
    if (!m->owner_seen) {
        /* Nobody ever answered: say so at once rather than time out. */
        BK_METHODS_COUNT(m, no_owner);
        bk_methods_answer(m, worker, gen, r.id, r.op,
                          ns->nodes[r.method].ns == 0
                              ? UA_BAD_NOT_IMPLEMENTED
                              : UA_BAD_NO_COMMUNICATION);
        return;
    }
    if (m->free_call == UINT32_MAX) {
        bk_methods_answer(m, worker, gen, r.id, r.op,
                          UA_BAD_RESOURCE_UNAVAILABLE);
        return;
    }
    /* The message: call ID, OBJECT, METHOD, then one line per argument
     * (a NodeId's string identifier may hold spaces). */
    c = &m->calls[m->free_call];
    ua_arena_reset(&m->arena);
    off = 0;
    k = snprintf(m->msg, m->msg_cap, "call %u\n",
                 (unsigned)(m->round * m->ncalls
                            + (uint32_t)(c - m->calls)));
    off = (size_t)k;
    {
        uint32_t nodes[2] = { r.object, r.method };

        for (int j = 0; j < 2; j++) {
            struct shm_nodekey key;

            shm_nodestore_key(ns, nodes[j], &key);
            memset(&id, 0, sizeof(id));
            id.ns = key.ns;
            id.idtype = key.idtype;
            if (key.idtype == UA_IDTYPE_NUMERIC) {
                id.id.num = key.num;
            } else if (key.idtype == UA_IDTYPE_GUID) {
                memcpy(&id.id.guid, key.bytes, sizeof(id.id.guid));
            } else {
                id.id.str.len = (int32_t)key.len;
                id.id.str.data = (uint8_t *)(uintptr_t)key.bytes;
            }
            bk_feedline_print_nodeid(&id, m->msg + off, m->msg_cap - off);
            off += strlen(m->msg + off);
            if (off + 2 >= m->msg_cap)
                goto too_large;
            m->msg[off++] = '\n';
        }
    }
    p = rec + sizeof(r);
    left = r.args_len;
    for (uint32_t a = 0; a < r.nargs; a++) {
        struct ua_variant v;
        int               w;

        if (ua_decode(p, left, &used, &v, &ua_types[UA_TYPE_VARIANT],
                      &m->arena, NULL) != UA_GOOD) {
            bk_methods_answer(m, worker, gen, r.id, r.op,
                              UA_BAD_INTERNAL_ERROR);
            return;
        }
        p += used;
        left -= used;
        w = bk_feedline_print_value(&v, m->msg + off, m->msg_cap - off - 1);
        if (w < 0) {
            if (m->msg_cap - off < 64)
                goto too_large;
            /* A type the feed's syntax cannot say. */
            bk_methods_answer(m, worker, gen, r.id, r.op,
                              UA_BAD_NOT_SUPPORTED);
            return;
        }
        off += (size_t)w;
        m->msg[off++] = '\n';
    }
    /* The slot is taken only now: the message exists. */
    m->free_call = c->next_free;
    m->busy++;
    c->seq = m->round * m->ncalls + (uint32_t)(c - m->calls);
    if (c->seq == 0)
        c->seq = m->ncalls;             /* never 0 (round 0 skipped) */
    c->worker = worker;
    c->gen = gen;
    c->wid = r.id;
    c->op = r.op;
    c->object = r.object;
    c->method = r.method;
    c->done = false;
    c->nout = 0;
    c->out_len = 0;
    c->deadline_ms = m->clock() + m->timeout_ms;
    /* A send that fails (the owner went away) leaves the call to its
     * timeout: the owner may come back within it. */
    (void)m->send(m, m->msg, off);
    bk_methods_arm(m);
    /* Ids of later calls differ from this one's. */
    if (++m->round == 0 || (uint64_t)m->round * m->ncalls > UINT32_MAX)
        m->round = 1;
    return;
too_large:
    bk_methods_answer(m, worker, gen, r.id, r.op, UA_BAD_REQUEST_TOO_LARGE);
}

/* ------------------------------------------------------------ time */

/* The timer at the oldest deadline (none when nothing is in flight). */
static void
bk_methods_arm(struct bk_methods *m)
{
    uint64_t        min = UINT64_MAX, now;
    struct timeval  tv;

    if (!m->events)
        return;
    for (uint32_t i = 0; i < m->ncalls && m->busy != 0; i++)
        if (m->calls[i].seq != 0 && !m->calls[i].done
            && m->calls[i].deadline_ms < min)
            min = m->calls[i].deadline_ms;
    event_del(&m->timer_ev);
    if (min == UINT64_MAX)
        return;
    now = m->clock();
    min = min > now ? min - now : 0;
    tv.tv_sec = (time_t)(min / 1000);
    tv.tv_usec = (suseconds_t)(min % 1000) * 1000 + 500;
    evtimer_add(&m->timer_ev, &tv);
}

void
bk_methods_tick(struct bk_methods *m, uint64_t now_ms)
{
    for (uint32_t i = 0; i < m->ncalls && m->busy != 0; i++) {
        struct bk_methods_call *c = &m->calls[i];

        if (c->seq == 0 || c->done || c->deadline_ms > now_ms)
            continue;
        BK_METHODS_COUNT(m, timeouts);
        bk_methods_finish(m, c, UA_BAD_TIMEOUT);
    }
}

static void
bk_methods_on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct bk_methods *m = arg;

    (void)fd;
    (void)what;
    bk_methods_tick(m, m->clock());
    bk_methods_arm(m);
}

/* ------------------------------------------------------------ answers */

bool
bk_methods_status(const char *s, size_t n, ua_status *out)
{
    char  buf[80];
    char *endp;

    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        n--;
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (buf[0] >= '0' && buf[0] <= '9') {
        unsigned long long v;

        errno = 0;
        v = strtoull(buf, &endp, 0);
        if (*endp != '\0' || errno != 0 || v > UINT32_MAX)
            return false;
        *out = (ua_status)v;
        return true;
    }
    if (strcmp(buf, "Good") == 0) {
        *out = UA_GOOD;
        return true;
    }
    /* Names of the codes' high words (the table is proto's). */
    for (uint32_t hi = 1; hi <= 0xFFFFu; hi++) {
        ua_status   code = hi << 16;
        const char *name = ua_status_name(code);

        if (name[0] != 'U' || strcmp(name, "Unknown") != 0)
            if (strcmp(name, buf) == 0) {
                *out = code;
                return true;
            }
    }
    return false;
}

/* The Arguments of meth's property name (as worker/svc_call.c reads
 * them): *n 0 when there is none; BadInternalError for a bad value. */
static ua_status
bk_methods_argdefs(const struct bk_addrspace *as, uint32_t meth,
                   const char *name, struct ua_arena *a,
                   struct ua_argument **defs, int32_t *n)
{
    const struct shm_nodestore *ns = &as->ns;
    uint32_t                    p = shm_nodestore_property(ns, meth, name);
    uint32_t                    slot;
    size_t                      cap = 4096;
    struct shm_value            v;
    uint8_t                    *buf = NULL;
    int                         rc = -1;

    *defs = NULL;
    *n = 0;
    slot = p == SHM_NONE ? SHM_NONE : ns->nodes[p].u.var.slot;
    if (slot == SHM_NONE)
        return UA_GOOD;
    for (int tries = 0; tries < 4; tries++) {
        buf = ua_arena_alloc(a, cap);
        if (buf == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        rc = shm_value_read(&as->vals, slot, &v, buf, cap);
        if (rc == -ENOSPC)
            cap = (size_t)v.len + 16;
        else if (rc != -EAGAIN)
            break;
    }
    if (rc != 0)
        return UA_BAD_INTERNAL_ERROR;
    return ua_decode_arguments(buf, v.len, a, defs, n);
}

/* v's shape against the Argument's ValueRank and ArrayDimensions. */
static bool
bk_methods_rank_ok(const struct ua_argument *d, const struct ua_variant *v)
{
    int32_t rank = d->value_rank;
    int32_t nd = !v->is_array ? 0 : v->ndims > 0 ? v->ndims : 1;

    if (rank == -1 && nd != 0)
        return false;
    if (rank == -3 && nd > 1)
        return false;
    if (rank == 0 && nd < 1)
        return false;
    if (rank > 0 && nd != rank)
        return false;
    if (rank < -3)
        return false;
    if (nd == 1 && d->n_array_dimensions == 1 && d->array_dimensions[0] != 0
        && v->n > 0 && (uint32_t)v->n > d->array_dimensions[0])
        return false;
    return true;
}

/* The VALUE lines p..end as c's outputs, encoded into c->out. */
static ua_status
bk_methods_outputs(struct bk_methods *m, struct bk_methods_call *c,
                   const char *p, const char *end)
{
    const struct shm_nodestore *ns = &m->as->ns;
    struct ua_argument         *defs;
    int32_t                     nd, k = 0;
    size_t                      off = 0, used;
    char                        why[BK_FEEDLINE_WHY_MAX];
    ua_status                   st;

    st = bk_methods_argdefs(m->as, c->method, "OutputArguments", &m->arena,
                            &defs, &nd);
    if (st != UA_GOOD)
        return UA_BAD_INTERNAL_ERROR;
    /* A last empty line is the message's end, not an empty Variant. */
    if (end > p && end[-1] == '\n')
        end--;
    while (p < end) {
        const char       *nl = memchr(p, '\n', (size_t)(end - p));
        const char       *le = nl != NULL ? nl : end;
        size_t            n = (size_t)(le - p);
        struct ua_variant v;
        uint32_t          dt;

        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (k >= nd)
            return UA_BAD_INTERNAL_ERROR;       /* too many outputs */
        dt = bk_addrspace_lookup(ns, &defs[k].data_type);
        if (dt == SHM_NONE
            || bk_feedline_parse_value(ns, dt, p, n, &m->arena, &v, why,
                                       sizeof(why)) != UA_GOOD
            || !bk_write_type_ok(ns, dt, &v)
            || !bk_methods_rank_ok(&defs[k], &v)
            || ua_encode(&v, &ua_types[UA_TYPE_VARIANT], c->out + off,
                         m->out_cap - off, &used) != UA_GOOD)
            return UA_BAD_INTERNAL_ERROR;
        off += used;
        k++;
        if (nl == NULL)
            break;
        p = nl + 1;
        if (p == end) {
            /* The text ended with an empty line: one more, empty. */
            if (k >= nd)
                return UA_BAD_INTERNAL_ERROR;
            dt = bk_addrspace_lookup(ns, &defs[k].data_type);
            if (dt == SHM_NONE
                || bk_write_type_root(ns, dt) != UA_NS0ID_BASEDATATYPE)
                return UA_BAD_INTERNAL_ERROR;
            memset(&v, 0, sizeof(v));
            v.ndims = -1;
            if (ua_encode(&v, &ua_types[UA_TYPE_VARIANT], c->out + off,
                          m->out_cap - off, &used) != UA_GOOD)
                return UA_BAD_INTERNAL_ERROR;
            off += used;
            k++;
        }
    }
    if (k != nd)
        return UA_BAD_INTERNAL_ERROR;           /* too few */
    c->nout = (uint32_t)k;
    c->out_len = (uint32_t)off;
    return UA_GOOD;
}

void
bk_methods_on_message(struct bk_methods *m, const char *text, size_t len)
{
    const char             *end = text + len, *nl, *p, *q;
    struct bk_methods_call *c;
    unsigned long           seq;
    char                    num[16];
    size_t                  n;
    ua_status               st;

    m->owner_seen = true;
    nl = memchr(text, '\n', len);
    if (nl == NULL)
        nl = end;
    n = (size_t)(nl - text);
    if (n >= 5 && memcmp(text, "hello", 5) == 0)
        return;
    if (n < 7 || memcmp(text, "result ", 7) != 0) {
        BK_METHODS_COUNT(m, errors);
        return;
    }
    p = text + 7;
    for (q = p; q < nl && *q >= '0' && *q <= '9'; q++)
        ;
    if (q == p || (size_t)(q - p) >= sizeof(num) || q >= nl || *q != ' ') {
        BK_METHODS_COUNT(m, errors);
        return;
    }
    memcpy(num, p, (size_t)(q - p));
    num[q - p] = '\0';
    seq = strtoul(num, NULL, 10);
    c = seq != 0 && seq <= UINT32_MAX ? &m->calls[seq % m->ncalls] : NULL;
    if (c == NULL || c->seq != seq || c->done) {
        /* After its timeout, or never ours. */
        BK_METHODS_COUNT(m, late);
        return;
    }
    if (!bk_methods_status(q + 1, (size_t)(nl - q - 1), &st)) {
        BK_METHODS_COUNT(m, errors);
        bk_methods_finish(m, c, UA_BAD_INTERNAL_ERROR);
        bk_methods_arm(m);
        return;
    }
    BK_METHODS_COUNT(m, answered);
    c->nout = 0;
    c->out_len = 0;
    if ((st & 0x80000000u) == 0) {
        ua_arena_reset(&m->arena);
        if (bk_methods_outputs(m, c, nl < end ? nl + 1 : end, end)
            != UA_GOOD) {
            BK_METHODS_COUNT(m, errors);
            st = UA_BAD_INTERNAL_ERROR;
        }
    }
    bk_methods_finish(m, c, st);
    bk_methods_arm(m);
}

static void
bk_methods_on_sock(evutil_socket_t fd, short what, void *arg)
{
    struct bk_methods *m = arg;
    int                n;

    (void)fd;
    (void)what;
    for (int i = 0; i < 64; i++) {
        n = shm_feed_recv(&m->sock, m->msg, m->msg_cap, -1);
        if (n == -EMSGSIZE) {
            m->owner_seen = true;
            BK_METHODS_COUNT(m, errors);
            continue;
        }
        if (n < 0)
            return;
        m->msg[n] = '\0';
        bk_methods_on_message(m, m->msg, (size_t)n);
    }
}

/* ------------------------------------------------------------ command */

struct bk_mcmd {
    struct shm_feed sock;
    const char     *program;        /* --exec */
    int             timeout_ms;
    char           *buf;            /* a call */
    size_t          cap;
    char           *ans;            /* an answer */
    size_t          acap;
    FILE           *err;
};

/*
 * Run the program for one call (the message in c->buf, n bytes) and send
 * its answer.  argv: PROGRAM METHOD_NODEID ARG...; UABROKER_OBJECT in the
 * environment.
 */
static void
bk_mcmd_exec(struct bk_mcmd *c, size_t n)
{
    char   *argv[260];
    char   *p = c->buf, *end = c->buf + n, *nl, *id, *obj, *meth;
    int     argc = 0, pfd[2], status = 0;
    size_t  got = 0, off;
    pid_t   pid;
    bool    killed = false;
    uint64_t deadline;
    const char *st = "Good";
    char    *out;

    char   *line[3];

    c->buf[n] = '\0';
    /* call ID, OBJECT, METHOD: a line each. */
    for (int k = 0; k < 3; k++) {
        nl = strchr(p, '\n');
        if (nl == NULL)
            return;
        *nl = '\0';
        line[k] = p;
        p = nl + 1;
    }
    if (strncmp(line[0], "call ", 5) != 0)
        return;
    id = line[0] + 5;
    obj = line[1];
    meth = line[2];
    argv[argc++] = (char *)(uintptr_t)c->program;
    argv[argc++] = meth;
    for (; p < end && argc < 258; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl == NULL)
            nl = end;
        *nl = '\0';
        argv[argc++] = p;
    }
    argv[argc] = NULL;
    if (pipe(pfd) != 0)
        return;
    pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return;
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        setenv("UABROKER_OBJECT", obj, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pfd[1]);
    /* Its output, until EOF or the timeout (then it is killed: the broker
     * answers BadTimeout). */
    off = (size_t)snprintf(c->ans, c->acap, "result %s ", id);
    deadline = bk_clock_ms() + (uint64_t)c->timeout_ms;
    out = c->buf;                   /* the call is parsed: reuse */
    for (;;) {
        struct pollfd pf = { pfd[0], POLLIN, 0 };
        uint64_t      now = bk_clock_ms();
        ssize_t       r;

        if (now >= deadline) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        if (poll(&pf, 1, (int)(deadline - now)) <= 0)
            continue;
        if (got + 1 >= c->cap) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        r = read(pfd[0], out + got, c->cap - got - 1);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(pfd[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (killed)
        return;
    out[got] = '\0';
    p = out;
    if (strncmp(p, "status=", 7) == 0) {
        st = p + 7;
        nl = strchr(p, '\n');
        if (nl != NULL) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p = out + got;
        }
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        st = "BadInternalError";
        p = out + got;
    }
    off += (size_t)snprintf(c->ans + off, c->acap - off, "%s\n", st);
    if ((st[0] != 'B') && strlen(p) + off < c->acap) {
        memcpy(c->ans + off, p, strlen(p));
        off += strlen(p);
    }
    if (shm_feed_send(&c->sock, c->ans, off) != 0)
        fprintf(c->err, "uabroker methods: answer to call %s not sent\n",
                id);
}

int
bk_methods_command(const struct bk_config *c, int argc, char **argv,
                   FILE *in, FILE *out, FILE *err)
{
    struct bk_mcmd mc;
    char           url[BK_FEED_URL_MAX + 16];
    const char    *force_url = NULL;
    bool           stdio = false;
    size_t         alen = 0;
    int            rc, code = 2;
    struct sigaction sa;

    memset(&mc, 0, sizeof(mc));
    mc.err = err;
    mc.timeout_ms = (int)c->methods_timeout_ms;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--exec") == 0 && i + 1 < argc)
            mc.program = argv[++i];
        else if (strcmp(argv[i], "--stdio") == 0)
            stdio = true;
        else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
            force_url = argv[++i];
        else
            goto usage;
    }
    if ((mc.program == NULL) == !stdio)
        goto usage;
    if (force_url != NULL)
        snprintf(url, sizeof(url), "%s", force_url);
    else if (c->methods_listen[0] != '\0')
        snprintf(url, sizeof(url), "%s", c->methods_listen);
    else
        snprintf(url, sizeof(url), "ipc://%s/%s", c->runtime_dir,
                 BK_METHODS_NAME);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    rc = shm_feed_connect(&mc.sock, SHM_FEED_PAIR, url,
                          BK_METHODS_CONNECT_MS);
    if (rc != 0) {
        fprintf(err, "uabroker methods: %s: %s\n", url, strerror(-rc));
        return 2;
    }
    mc.cap = 8 * (size_t)c->methods_max_call_bytes + 4096;
    mc.acap = mc.cap;
    mc.buf = bk_alloc(mc.cap + 1);
    mc.ans = bk_alloc(mc.acap + 1);
    if (mc.buf == NULL || mc.ans == NULL)
        goto out;
    /* Say hello until the broker takes it (it may not be up yet). */
    while (shm_feed_send(&mc.sock, "hello\n", 6) != 0)
        ;
    fprintf(err, "uabroker methods: serving the method calls of %s\n", url);
    code = 0;
    for (;;) {
        struct pollfd pf[2] = {
            { shm_feed_fd(&mc.sock), POLLIN, 0 },
            { stdio ? fileno(in) : -1, POLLIN, 0 },
        };
        int           n;

        n = poll(pf, stdio ? 2 : 1, BK_METHODS_POLL_MS);
        if (n < 0 && errno != EINTR)
            break;
        if (n == 0) {
            /* Idle: hello again, so a restarted broker knows its owner
             * (before any message it answers BadNoCommunication). */
            (void)shm_feed_send(&mc.sock, "hello\n", 6);
            continue;
        }
        if (pf[0].revents != 0) {
            n = shm_feed_recv(&mc.sock, mc.buf, mc.cap, -1);
            if (n > 0 && !stdio) {
                bk_mcmd_exec(&mc, (size_t)n);
            } else if (n > 0) {
                /* The call, then "end", for the coprocess. */
                fwrite(mc.buf, 1, (size_t)n, out);
                if (mc.buf[n - 1] != '\n')
                    fputc('\n', out);
                fputs("end\n", out);
                fflush(out);
            }
        }
        if (stdio && pf[1].revents != 0) {
            /* Raw reads (stdio's buffer would hide lines from poll):
             * every answer up to its "end" line goes out whole. */
            ssize_t got = read(fileno(in), mc.ans + alen, mc.acap - alen);

            if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
                break;                  /* the coprocess is done */
            if (got > 0)
                alen += (size_t)got;
            for (size_t i = 0; i < alen;) {
                char  *nl = memchr(mc.ans + i, '\n', alen - i);
                size_t ll, rest;

                if (nl == NULL)
                    break;
                ll = (size_t)(nl - (mc.ans + i));
                if ((ll == 3 && memcmp(mc.ans + i, "end", 3) == 0)
                    || (ll == 4 && memcmp(mc.ans + i, "end\r", 4) == 0)) {
                    if (i != 0)
                        (void)shm_feed_send(&mc.sock, mc.ans, i);
                    rest = alen - (i + ll + 1);
                    memmove(mc.ans, nl + 1, rest);
                    alen = rest;
                    i = 0;
                    continue;
                }
                i += ll + 1;
            }
            if (alen == mc.acap)
                alen = 0;               /* an answer too long: dropped */
        }
    }
out:
    bk_free(mc.buf);
    bk_free(mc.ans);
    shm_feed_close(&mc.sock);
    return code;
usage:
    fprintf(err, "usage: uabroker [options] methods [--url URL] "
            "(--exec PROGRAM | --stdio)\n");
    return 2;
}
