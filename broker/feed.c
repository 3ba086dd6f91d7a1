/*
 * broker/feed.c: the feed's text format, its sockets in the broker and the
 * `uabroker feed` command (feed.h; the format in docs/feed.md).
 *
 * Parsing never trusts the input: every token is bounded by the line, a
 * line by the batch, a batch by feed.max_batch_bytes.  Values are built in
 * the feed's arena (reset per line) and encoded there; nothing is
 * allocated per batch.
 */
#include "feed.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>

#include "alloc.h"
#include "proto/builtin.h"
#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "event.h"
#include "fanout.h"
#include "shm/fanout.h"
#include "write.h"

#define BK_FEED_ARRAY_MAX    65535      /* elements in one array value */
#define BK_FEED_CONNECT_MS   5000
#define BK_FEED_REPORT_MS    30000
#define BK_FEED_PULL_BATCH   64         /* messages per callback */
#define BK_FEED_LINGER_MS    200        /* --push: before closing */

/* A cursor over one line. */
struct bk_feed_cur {
    const char *p;
    const char *end;
};

static ua_status bk_feed_why(char *why, size_t whylen, ua_status st,
                             const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ua_status bk_feed_nodeid(struct bk_feed_cur *c, struct ua_arena *a,
                                struct ua_nodeid *id, char stop);
static ua_status bk_feed_event_opt(const struct shm_nodestore *ns,
                                   const char *k, size_t kl, const char *v,
                                   size_t vl, struct ua_arena *a,
                                   struct bk_event *ev, uint32_t *type,
                                   uint16_t *severity, char *why,
                                   size_t whylen);
static size_t bk_feed_token(const char *p, const char *end, bool in_array);
static ua_status bk_feed_elem(uint8_t bt, uint32_t root, const char *s,
                              size_t n, struct ua_arena *a, void *out,
                              uint8_t *got, char *why, size_t whylen);
static ua_status bk_feed_value(const struct shm_nodestore *ns, uint32_t node,
                               const char *s, size_t n, struct ua_arena *a,
                               struct ua_variant *v, char *why,
                               size_t whylen);
static void bk_feed_on_pull(evutil_socket_t fd, short what, void *arg);
static void bk_feed_on_rep(evutil_socket_t fd, short what, void *arg);
static void bk_feed_url(const struct bk_config *c, const char *name,
                        char *url, size_t cap);

/* ------------------------------------------------------------ helpers */

static ua_status
bk_feed_why(char *why, size_t whylen, ua_status st, const char *fmt, ...)
{
    va_list ap;

    if (why != NULL && whylen != 0) {
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/*
 * The NodeId at c (standard string form), advancing c.  stop ('=' for a
 * value line, ';' in an event line, 0: none): the identifier of s= ends
 * at the next one.
 */
static ua_status
bk_feed_nodeid(struct bk_feed_cur *c, struct ua_arena *a, struct ua_nodeid *id,
               char stop)
{
    size_t    used = 0;
    ua_status st = ua_nodeid_parse(c->p, (size_t)(c->end - c->p), stop, a,
                                   id, &used);

    if (st == UA_GOOD)
        c->p += used;
    return st;
}

/*
 * Length of the next array element or scalar token at p: a quoted string
 * through its closing quote, else up to ',' or ']' (in an array) or the end.
 */
static size_t
bk_feed_token(const char *p, const char *end, bool in_array)
{
    const char *q = p;

    if (q < end && *q == '"') {
        for (q++; q < end && *q != '"'; q++)
            if (*q == '\\' && q + 1 < end)
                q++;
        return (size_t)(q < end ? q + 1 - p : end - p);
    }
    while (q < end && !(in_array && (*q == ',' || *q == ']')))
        q++;
    return (size_t)(q - p);
}

/*
 * One element of built-in type bt (0: infer from the text, as the root
 * Number/Integer/UInteger/BaseDataType allows) into out (ua_types size).
 * *got is the type built.
 */
static ua_status
bk_feed_elem(uint8_t bt, uint32_t root, const char *s, size_t n,
             struct ua_arena *a, void *out, uint8_t *got, char *why,
             size_t whylen)
{
    if (bt == 0)
        bt = ua_builtin_infer(s, n, root);
    *got = bt;
    return ua_builtin_parse(bt, UA_TEXT_FEED, s, n, a, out, why, whylen);
}

/* The value text s[n] for node as a Variant (scalar, or [a,b,c]). */
static ua_status
bk_feed_value(const struct shm_nodestore *ns, uint32_t node, const char *s,
              size_t n, struct ua_arena *a, struct ua_variant *v, char *why,
              size_t whylen)
{
    return bk_feed_value_dt(ns, ns->nodes[node].u.var.data_type, s, n, a, v,
                            why, whylen);
}

ua_status
bk_feed_value_dt(const struct shm_nodestore *ns, uint32_t dt, const char *s,
                 size_t n, struct ua_arena *a, struct ua_variant *v, char *why,
                 size_t whylen)
{
    uint32_t    root = bk_write_type_root(ns, dt);
    uint8_t     bt = 0, got = 0;
    size_t      esz;
    ua_status   st;

    switch (root) {
    case UA_NS0ID_NUMBER:
    case UA_NS0ID_INTEGER:
    case UA_NS0ID_UINTEGER:
    case UA_NS0ID_BASEDATATYPE:
        bt = 0;                         /* inferred per element */
        break;
    case UA_NS0ID_ENUMERATION:
        bt = UA_BT_INT32;
        break;
    case 0:
        return bk_feed_why(why, whylen, UA_BAD_NOT_SUPPORTED,
                           "the node's DataType is not a built-in type");
    default:
        bt = (uint8_t)root;
        break;
    }
    memset(v, 0, sizeof(*v));
    v->ndims = -1;
    s = ua_text_trim(s, &n);
    if (n >= 1 && s[0] == '[') {
        const char *p = s + 1, *end = s + n;
        int32_t     cnt = 0, cap = 16;
        uint8_t    *data;

        if (s[n - 1] != ']')
            return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "an array ends with ]");
        end--;
        esz = ua_types[(bt != 0 ? bt : UA_BT_VARIANT) - 1].size;
        /* Inferred arrays take their first element's type. */
        data = ua_arena_alloc(a, (size_t)cap * 64);
        if (data == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        while (p < end) {
            size_t   tl;
            uint8_t  eb = bt != 0 ? bt : got;

            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p >= end)
                break;
            tl = bk_feed_token(p, end, true);
            if (cnt >= BK_FEED_ARRAY_MAX)
                return bk_feed_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                                   "more than %d elements",
                                   BK_FEED_ARRAY_MAX);
            if (cnt == cap) {
                uint8_t *nd;

                nd = ua_arena_alloc(a, (size_t)cap * 2 * 64);
                if (nd == NULL)
                    return UA_BAD_OUT_OF_MEMORY;
                memcpy(nd, data, (size_t)cap * 64);
                data = nd;
                cap *= 2;
            }
            st = bk_feed_elem(eb, root, p, tl, a, data + (size_t)cnt * 64,
                              &got, why, whylen);
            if (st != UA_GOOD)
                return st;
            if (eb != 0 && got != eb)
                return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "array elements of different types");
            if (bt == 0 && cnt == 0)
                esz = ua_types[got - 1].size;
            cnt++;
            p += tl;
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end) {
                if (*p != ',')
                    return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "array elements are separated by ,");
                p++;
            }
        }
        /* Pack the 64-byte cells to the element size. */
        for (int32_t k = 1; k < cnt; k++)
            memmove(data + (size_t)k * esz, data + (size_t)k * 64, esz);
        ua_variant_set_array(v, data, cnt, cnt > 0 ? got : (bt ? bt
                                                              : UA_BT_INT32));
        return UA_GOOD;
    }
    {
        void *p = ua_arena_alloc(a, 64);

        if (p == NULL)
            return UA_BAD_OUT_OF_MEMORY;
        memset(p, 0, 64);
        st = bk_feed_elem(bt, root, s, n, a, p, &got, why, whylen);
        if (st != UA_GOOD)
            return st;
        ua_variant_set_scalar(v, p, got);
    }
    return UA_GOOD;
}

/* ------------------------------------------------------------ lines */

ua_status
bk_feed_parse_line(const struct shm_nodestore *ns, const char *line,
                   size_t len, struct ua_arena *a, struct bk_feed_value *out,
                   char *why, size_t whylen)
{
    struct bk_feed_cur     c = { line, line + len };
    struct ua_nodeid       id;
    const struct shm_node *n;
    const char            *val, *vend, *opt;
    size_t                 vl;
    ua_status              st;

    memset(out, 0, sizeof(*out));
    if (why != NULL && whylen != 0)
        why[0] = '\0';
    st = bk_feed_nodeid(&c, a, &id, '=');
    if (st != UA_GOOD || c.p >= c.end || *c.p != '=')
        return bk_feed_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                           "expected NODEID=VALUE with a NodeId like "
                           "ns=1;s=v0 or i=2258");
    out->node = bk_addrspace_lookup(ns, &id);
    if (out->node == SHM_NONE)
        return bk_feed_why(why, whylen, UA_BAD_NODE_ID_UNKNOWN,
                           "no such node");
    n = &ns->nodes[out->node];
    if (n->node_class != SHM_NC_VARIABLE || n->u.var.slot == SHM_NONE)
        return bk_feed_why(why, whylen, UA_BAD_NOT_WRITABLE,
                           "not a Variable");
    if (n->ns == 0)
        return bk_feed_why(why, whylen, UA_BAD_NOT_WRITABLE,
                           "namespace 0 belongs to the server");
    out->slot = n->u.var.slot;
    val = c.p + 1;
    vend = c.end;
    /* The value: a quoted string or an array through its end, else up to
     * the first ";status=" or ";ts=". */
    if (val < vend && (*val == '"' || *val == '[')) {
        const char *q = val;

        if (*q == '"') {
            q += bk_feed_token(q, vend, false);
        } else {
            int in = 0;

            for (; q < vend; q++) {
                if (*q == '"')
                    in = !in;
                else if (*q == '\\' && in && q + 1 < vend)
                    q++;
                else if (*q == ']' && !in) {
                    q++;
                    break;
                }
            }
        }
        vl = (size_t)(q - val);
    } else {
        const char *q;

        for (q = val; q < vend; q++)
            if (*q == ';'
                && (((size_t)(vend - q) >= 8 && memcmp(q, ";status=", 8) == 0)
                    || ((size_t)(vend - q) >= 4 && memcmp(q, ";ts=", 4) == 0)))
                break;
        vl = (size_t)(q - val);
    }
    out->status = UA_GOOD;
    opt = val + vl;
    while (opt < vend) {
        const char *e;
        char        num[32];
        char       *endp;

        while (opt < vend && (*opt == ' ' || *opt == '\t' || *opt == '\r'))
            opt++;
        if (opt >= vend)
            break;
        if (*opt != ';')
            return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "unexpected text after the value: \"%.*s\"",
                               (int)(vend - opt), opt);
        e = opt + 1;
        while (e < vend && *e != ';')
            e++;
        if ((size_t)(e - opt) > 8 && memcmp(opt, ";status=", 8) == 0) {
            size_t k = (size_t)(e - opt) - 8;

            if (k >= sizeof(num))
                return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "bad status");
            memcpy(num, opt + 8, k);
            num[k] = '\0';
            errno = 0;
            {
                unsigned long long sv = strtoull(num, &endp, 0);

                if (*endp != '\0' || endp == num || errno != 0
                    || sv > UINT32_MAX)
                    return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "status=%s is not a StatusCode",
                                       num);
                out->status = (ua_status)sv;
            }
        } else if ((size_t)(e - opt) > 4 && memcmp(opt, ";ts=", 4) == 0) {
            size_t      k = (size_t)(e - opt) - 4;
            const char *ts = ua_text_trim(opt + 4, &k);

            if (ua_text_datetime_parse(ts, k, UA_TEXT_FEED, &out->source_ts)
                != 0)
                return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "ts=%.*s is not ISO 8601 (like "
                                   "2024-05-01T12:00:00.5Z)", (int)k, ts);
            out->has_ts = true;
        } else {
            return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "unknown option \"%.*s\" (status=, ts=)",
                               (int)(e - opt), opt);
        }
        opt = e;
    }
    st = bk_feed_value(ns, out->node, val, vl, a, &out->v, why, whylen);
    if (st != UA_GOOD)
        return st;
    if (!bk_write_type_ok(ns, n->u.var.data_type, &out->v))
        return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                           "a %s is not of the node's DataType",
                           ua_types[out->v.type - 1].name);
    if (!bk_write_rank_ok(ns, out->node, &out->v))
        return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                           "%s does not fit the node's ValueRank %d",
                           out->v.is_array ? "an array" : "a scalar",
                           n->u.var.value_rank);
    return UA_GOOD;
}


/* ------------------------------------------------------------ events */

/* One ;key=value of an event line (docs/feed.md "Events"). */
static ua_status
bk_feed_event_opt(const struct shm_nodestore *ns, const char *k, size_t kl,
                  const char *v, size_t vl, struct ua_arena *a,
                  struct bk_event *ev, uint32_t *type, uint16_t *severity,
                  char *why, size_t whylen)
{
    struct ua_variant var;
    char              path[SHM_FO_EV_PATH_MAX + 1];
    size_t            pl = 0;
    uint8_t           got = 0;
    void             *cell;
    ua_status         st;
    int               rc;

#define KEY(lit) (kl == sizeof(lit) - 1 && memcmp(k, lit, kl) == 0)
    if (KEY("type")) {
        struct bk_feed_cur c = { v, v + vl };
        struct ua_nodeid   id;
        uint32_t           base;
        struct ua_nodeid   bid = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);

        if (bk_feed_nodeid(&c, a, &id, 0) != UA_GOOD || c.p != c.end)
            return bk_feed_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                               "type=%.*s is not a NodeId", (int)vl, v);
        *type = bk_addrspace_lookup(ns, &id);
        base = bk_addrspace_lookup(ns, &bid);
        if (*type == SHM_NONE || base == SHM_NONE
            || ns->nodes[*type].node_class != SHM_NC_OBJECTTYPE
            || !shm_nodestore_is_subtype(ns, *type, base))
            return bk_feed_why(why, whylen, UA_BAD_TYPE_DEFINITION_INVALID,
                               "type=%.*s is not an EventType", (int)vl, v);
        return UA_GOOD;
    }
    if (KEY("severity")) {
        char          num[16];
        char         *endp;
        unsigned long sv;

        if (vl == 0 || vl >= sizeof(num))
            return bk_feed_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                               "severity is 1..1000");
        memcpy(num, v, vl);
        num[vl] = '\0';
        sv = strtoul(num, &endp, 10);
        if (*endp != '\0' || num[0] == '-' || sv < 1 || sv > 1000)
            return bk_feed_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                               "severity=%s is not 1..1000", num);
        *severity = (uint16_t)sv;
        return UA_GOOD;
    }
    cell = ua_arena_alloc(a, 64);
    if (cell == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    memset(cell, 0, 64);
    if (KEY("message")) {
        memcpy(path, "0:Message", 9);
        pl = 9;
        st = bk_feed_elem(UA_BT_LOCALIZEDTEXT, 0, v, vl, a, cell, &got, why,
                          whylen);
    } else if (KEY("time")) {
        memcpy(path, "0:Time", 6);
        pl = 6;
        st = bk_feed_elem(UA_BT_DATETIME, 0, v, vl, a, cell, &got, why,
                          whylen);
    } else if (KEY("sourcename")) {
        memcpy(path, "0:SourceName", 12);
        pl = 12;
        st = bk_feed_elem(UA_BT_STRING, 0, v, vl, a, cell, &got, why,
                          whylen);
    } else {
        /* A field: BrowseNames joined by '/', each [ns:]Name. */
        size_t i = 0;

        if (kl == 0 || (k[0] >= 'a' && k[0] <= 'z'
                        && memchr(k, ':', kl) == NULL))
            return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "unknown option \"%.*s\" (type=, severity=, "
                               "message=, time=, sourcename=, or a "
                               "field like 2:Temperature=)", (int)kl, k);
        while (i < kl) {
            const char *seg = k + i, *se = memchr(seg, '/', kl - i);
            size_t      sl = se != NULL ? (size_t)(se - seg) : kl - i;
            const char *colon = memchr(seg, ':', sl);
            bool        digits = colon != NULL && colon > seg;

            for (const char *q = seg; digits && q < colon; q++)
                if (*q < '0' || *q > '9')
                    digits = false;
            if (sl == 0 || (colon != NULL && (!digits || colon + 1 == seg + sl))
                || (colon == NULL ? sl + 2 : sl) + pl + 1
                       > SHM_FO_EV_PATH_MAX)
                return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "field \"%.*s\" is not ns:Name[/ns:Name]",
                                   (int)kl, k);
            if (pl != 0)
                path[pl++] = '/';
            if (colon == NULL) {
                path[pl++] = '0';
                path[pl++] = ':';
            }
            memcpy(path + pl, seg, sl);
            pl += sl;
            i += sl + (se != NULL ? 1 : 0);
            if (se != NULL && i == kl)
                return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "field \"%.*s\" ends with /", (int)kl, k);
        }
        {
            static const char *const std[] = {
                "0:EventId", "0:EventType", "0:SourceNode", "0:SourceName",
                "0:Time", "0:ReceiveTime", "0:Message", "0:Severity"
            };

            for (size_t k2 = 0; k2 < sizeof(std) / sizeof(std[0]); k2++)
                if (strlen(std[k2]) == pl && memcmp(std[k2], path, pl) == 0)
                    return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "%.*s is a standard field (use "
                                       "severity=, message=, time=, "
                                       "sourcename=)", (int)pl, path);
        }
        st = bk_feed_elem(0, UA_NS0ID_BASEDATATYPE, v, vl, a, cell, &got,
                          why, whylen);
    }
#undef KEY
    if (st != UA_GOOD)
        return st;
    ua_variant_set_scalar(&var, cell, got);
    rc = bk_event_field(ev, path, pl, &var);
    if (rc == -EEXIST)
        return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                           "%.*s given twice", (int)pl, path);
    if (rc != 0)
        return bk_feed_why(why, whylen, UA_BAD_ENCODING_LIMITS_EXCEEDED,
                           "the event is too large (at most %u fields, a "
                           "notification block)", SHM_FO_EV_FIELDS_MAX);
    return UA_GOOD;
}

ua_status
bk_feed_parse_event(const struct shm_nodestore *ns, const char *line,
                    size_t len, int64_t now, struct ua_arena *a,
                    struct bk_event *ev, uint8_t *buf, uint32_t cap,
                    char *why, size_t whylen)
{
    struct bk_feed_cur c = { line, line + len };
    struct ua_nodeid   id, bid = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
    uint32_t           source, type;
    uint16_t           severity = BK_FEED_EVENT_SEVERITY;
    const char        *p, *end = line + len;
    ua_status          st;

    if (why != NULL && whylen != 0)
        why[0] = '\0';
    if (len < 6 || memcmp(line, "event=", 6) != 0)
        return bk_feed_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                           "not an event line");
    c.p = line + 6;
    st = bk_feed_nodeid(&c, a, &id, ';');
    if (st != UA_GOOD || (c.p < c.end && *c.p != ';'))
        return bk_feed_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                           "expected event=SOURCE_NODEID[;key=value]...");
    source = bk_addrspace_lookup(ns, &id);
    if (source == SHM_NONE)
        return bk_feed_why(why, whylen, UA_BAD_NODE_ID_UNKNOWN,
                           "no such source node");
    type = bk_addrspace_lookup(ns, &bid);
    /* The options first, then the event (the type goes in its head). */
    bk_event_begin(ev, buf, cap, source, type);
    for (p = c.p; p < end;) {
        const char *k, *eq, *v, *ve;

        if (*p != ';')
            return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "unexpected text \"%.*s\"", (int)(end - p), p);
        k = p + 1;
        eq = k;
        while (eq < end && *eq != '=' && *eq != ';')
            eq++;
        if (eq >= end || *eq != '=')
            return bk_feed_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "\"%.*s\" is not key=value", (int)(eq - k), k);
        v = eq + 1;
        if (v < end && *v == '"') {
            ve = v + bk_feed_token(v, end, false);
        } else if ((size_t)(eq - k) == 4 && memcmp(k, "type", 4) == 0) {
            /* A NodeId: ns=N;... holds a ';' of its own. */
            struct bk_feed_cur nc = { v, end };
            struct ua_nodeid   tid;

            if (bk_feed_nodeid(&nc, a, &tid, ';') != UA_GOOD)
                return bk_feed_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                                   "type= is not a NodeId");
            ve = nc.p;
        } else {
            ve = v;
            while (ve < end && *ve != ';')
                ve++;
        }
        st = bk_feed_event_opt(ns, k, (size_t)(eq - k), v, (size_t)(ve - v),
                               a, ev, &type, &severity, why, whylen);
        if (st != UA_GOOD)
            return st;
        p = ve;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
    }
    memcpy(ev->buf + offsetof(struct shm_fo_ev, type), &type, 4);
    if (bk_event_std(ev, ns, now, severity) != 0)
        return bk_feed_why(why, whylen, UA_BAD_ENCODING_LIMITS_EXCEEDED,
                           "the event is too large");
    return UA_GOOD;
}

void
bk_feed_batch(struct bk_addrspace *as, const char *text, size_t len,
              int64_t now, struct ua_arena *a, char *report, size_t rcap,
              struct bk_feed_result *res)
{
    const char          *p = text, *end = text + len;
    struct bk_feed_value fv;
    struct shm_value     m;
    char                 why[BK_FEED_WHY_MAX];
    size_t               rlen = 0;
    uint32_t             lineno = 0;

    memset(res, 0, sizeof(*res));
    if (report != NULL && rcap != 0)
        report[0] = '\0';
    bk_value_batch_begin(&as->val);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        size_t      n = (size_t)(le - p);
        const char *s = ua_text_trim(p, &n);
        ua_status   st;
        uint8_t    *buf;
        size_t      need, elen;
        int         rc;

        lineno++;
        p = nl != NULL ? nl + 1 : end;
        if (n == 0 || s[0] == '#')
            continue;
        res->lines++;
        ua_arena_reset(a);
        if (n >= 6 && memcmp(s, "event=", 6) == 0) {
            struct bk_event ev;
            uint32_t        cap = BK_FEED_EVENT_MAX;

            buf = ua_arena_alloc(a, cap);
            st = buf == NULL ? UA_BAD_OUT_OF_MEMORY
                             : bk_feed_parse_event(&as->ns, s, n, now, a, &ev,
                                                   buf, cap, why,
                                                   sizeof(why));
            if (st == UA_GOOD) {
                res->ok++;
                res->events++;
                bk_value_event(&as->val, ev.buf, ev.len);
                continue;
            }
            goto refused;
        }
        st = bk_feed_parse_line(&as->ns, s, n, a, &fv, why, sizeof(why));
        if (st == UA_GOOD) {
            need = ua_encoded_size(&fv.v, &ua_types[UA_TYPE_VARIANT]);
            buf = need != 0 ? ua_arena_alloc(a, need) : NULL;
            if (buf == NULL
                || ua_encode(&fv.v, &ua_types[UA_TYPE_VARIANT], buf, need,
                             &elen) != UA_GOOD) {
                st = bk_feed_why(why, sizeof(why),
                                 UA_BAD_ENCODING_LIMITS_EXCEEDED,
                                 "the value does not encode");
            } else {
                memset(&m, 0, sizeof(m));
                m.status = fv.status;
                m.flags = SHM_VF_SOURCE_TS | SHM_VF_SERVER_TS;
                m.source_ts = fv.has_ts ? fv.source_ts : now;
                m.server_ts = now;
                rc = bk_value_write(&as->val, fv.slot, buf, (uint32_t)elen,
                                    &m);
                if (rc != 0)
                    st = bk_feed_why(why, sizeof(why), UA_BAD_OUT_OF_MEMORY,
                                     "the value heap is full");
            }
        }
        if (st == UA_GOOD) {
            res->ok++;
            continue;
        }
refused:
        res->failed++;
        if (report != NULL && rlen + 1 < rcap) {
            int k = snprintf(report + rlen, rcap - rlen, "line %u: %s: %s\n",
                             lineno, ua_status_name(st), why);

            if (k > 0)
                rlen += (size_t)k < rcap - rlen ? (size_t)k : rcap - rlen - 1;
        }
    }
    bk_value_batch_end(&as->val);
    ua_arena_reset(a);
    bk_fanout_count_feed(as->val.fanout, res->ok - res->events,
                         res->events);
}

/* ------------------------------------------------------------ printing */

/* A cursor for printing into buf[cap]; ok false once it overflowed. */
struct bk_feed_out {
    char  *p;
    size_t len;
    size_t cap;
    bool   ok;
};

static void bk_feed_put(struct bk_feed_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void bk_feed_put_elem(struct bk_feed_out *o, uint8_t bt,
                             const void *p);

static void
bk_feed_put(struct bk_feed_out *o, const char *fmt, ...)
{
    va_list ap;
    int     k;

    if (!o->ok)
        return;
    va_start(ap, fmt);
    k = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= o->cap - o->len) {
        o->ok = false;
        return;
    }
    o->len += (size_t)k;
}

void
bk_feed_print_nodeid(const struct ua_nodeid *id, char *buf, size_t cap)
{
    (void)ua_nodeid_print(id, buf, cap);
}

/* One element of built-in type bt at p. */
static void
bk_feed_put_elem(struct bk_feed_out *o, uint8_t bt, const void *p)
{
    int k;

    if (!o->ok)
        return;
    k = ua_builtin_print(bt, p, o->p + o->len, o->cap - o->len);
    if (k < 0)
        o->ok = false;
    else
        o->len += (size_t)k;
}

int
bk_feed_print(const struct ua_variant *v, char *buf, size_t cap)
{
    struct bk_feed_out o = { buf, 0, cap, cap > 0 };
    size_t             esz;

    if (cap > 0)
        buf[0] = '\0';
    if (v->type == UA_BT_NULL)
        return 0;                   /* an empty Variant: an empty line */
    if (v->type > UA_BT_MAX)
        return -1;
    esz = ua_types[v->type - 1].size;
    if (!v->is_array) {
        bk_feed_put_elem(&o, v->type, v->data);
    } else {
        bk_feed_put(&o, "[");
        for (int32_t k = 0; k < v->n && o.ok; k++) {
            if (k != 0)
                bk_feed_put(&o, ",");
            bk_feed_put_elem(&o, v->type,
                             (const uint8_t *)v->data + (size_t)k * esz);
        }
        bk_feed_put(&o, "]");
    }
    return o.ok ? (int)o.len : -1;
}

/* ------------------------------------------------------------ sockets */

/* ipc://<runtime_dir>/<name>, or feed.listen for the PULL socket. */
static void
bk_feed_url(const struct bk_config *c, const char *name, char *url,
            size_t cap)
{
    if (strcmp(name, BK_FEED_PULL_NAME) == 0 && c->feed_listen[0] != '\0')
        snprintf(url, cap, "%s", c->feed_listen);
    else
        snprintf(url, cap, "ipc://%s/%s", c->runtime_dir, name);
}

int
bk_feed_init(struct bk_feed *fd, struct event_base *base,
             struct bk_addrspace *as, const struct bk_config *c, char *err,
             size_t errlen)
{
    char ctl[BK_FEED_URL_MAX];
    int  rc;

    memset(fd, 0, sizeof(*fd));
    fd->as = as;
    fd->pull.sock = fd->rep.sock = -1;
    fd->cap = c->feed_max_batch_bytes;
    fd->report_cap = 64 * 1024;
    fd->arena_cap = 2 * fd->cap + (256u << 10);
    fd->buf = bk_alloc(fd->cap);
    fd->report = bk_alloc(fd->report_cap);
    fd->arena_buf = bk_alloc(fd->arena_cap);
    if (fd->buf == NULL || fd->report == NULL || fd->arena_buf == NULL) {
        snprintf(err, errlen, "feed: out of memory");
        goto fail;
    }
    ua_arena_init(&fd->arena, fd->arena_buf, fd->arena_cap);
    bk_feed_url(c, BK_FEED_PULL_NAME, fd->url, sizeof(fd->url));
    bk_feed_url(c, BK_FEED_CTL_NAME, ctl, sizeof(ctl));
    /* A socket file left by a dead broker would refuse the bind. */
    if (strncmp(fd->url, "ipc://", 6) == 0)
        (void)unlink(fd->url + 6);
    (void)unlink(ctl + 6);
    rc = shm_feed_bind(&fd->pull, SHM_FEED_PULL, fd->url, (int)fd->cap);
    if (rc != 0) {
        snprintf(err, errlen, "feed socket %s: %s", fd->url, strerror(-rc));
        goto fail;
    }
    rc = shm_feed_bind(&fd->rep, SHM_FEED_REP, ctl, (int)fd->cap);
    if (rc != 0) {
        snprintf(err, errlen, "feed control socket %s: %s", ctl,
                 strerror(-rc));
        goto fail;
    }
    event_assign(&fd->pull_ev, base, shm_feed_fd(&fd->pull),
                 EV_READ | EV_PERSIST, bk_feed_on_pull, fd);
    event_assign(&fd->rep_ev, base, shm_feed_fd(&fd->rep),
                 EV_READ | EV_PERSIST, bk_feed_on_rep, fd);
    if (event_add(&fd->pull_ev, NULL) != 0
        || event_add(&fd->rep_ev, NULL) != 0) {
        snprintf(err, errlen, "feed: event_add() failed");
        goto fail;
    }
    return 0;
fail:
    bk_feed_clear(fd);
    return -1;
}

void
bk_feed_clear(struct bk_feed *fd)
{
    if (fd->pull.sock != -1) {
        if (event_initialized(&fd->pull_ev))
            event_del(&fd->pull_ev);
        shm_feed_close(&fd->pull);
    }
    if (fd->rep.sock != -1) {
        if (event_initialized(&fd->rep_ev))
            event_del(&fd->rep_ev);
        shm_feed_close(&fd->rep);
    }
    bk_free(fd->buf);
    bk_free(fd->report);
    bk_free(fd->arena_buf);
    fd->buf = NULL;
    fd->report = NULL;
    fd->arena_buf = NULL;
}

/* Batches without an answer. */
static void
bk_feed_on_pull(evutil_socket_t s, short what, void *arg)
{
    struct bk_feed       *fd = arg;
    struct bk_feed_result res;
    int                   n;

    (void)s;
    (void)what;
    for (int i = 0; i < BK_FEED_PULL_BATCH; i++) {
        n = shm_feed_recv(&fd->pull, fd->buf, fd->cap, -1);
        if (n == -EMSGSIZE)
            continue;                   /* the transport refuses those */
        if (n < 0)
            return;
        bk_feed_batch(fd->as, (const char *)fd->buf, (size_t)n,
                      ua_datetime_now(), &fd->arena, NULL, 0, &res);
    }
}

/* A batch that wants its report. */
static void
bk_feed_on_rep(evutil_socket_t s, short what, void *arg)
{
    struct bk_feed       *fd = arg;
    struct bk_feed_result res;
    size_t                len;
    int                   n;

    (void)s;
    (void)what;
    n = shm_feed_recv(&fd->rep, fd->buf, fd->cap, -1);
    if (n < 0) {
        if (n == -EMSGSIZE) {
            snprintf(fd->report, fd->report_cap, "batch larger than "
                     "feed.max_batch_bytes (%zu)\nok 0 failed 1\n", fd->cap);
            (void)shm_feed_send(&fd->rep, fd->report, strlen(fd->report));
        }
        return;
    }
    bk_feed_batch(fd->as, (const char *)fd->buf, (size_t)n, ua_datetime_now(),
                  &fd->arena, fd->report, fd->report_cap - 40, &res);
    len = strlen(fd->report);
    snprintf(fd->report + len, fd->report_cap - len, "ok %u failed %u\n",
             res.ok, res.failed);
    (void)shm_feed_send(&fd->rep, fd->report, strlen(fd->report));
}

/* ------------------------------------------------------------ command */

int
bk_feed_command(const struct bk_config *c, int argc, char **argv, FILE *in,
                FILE *out, FILE *err)
{
    struct shm_feed sock;
    char            url[BK_FEED_URL_MAX];
    char           *batch = NULL, *reply = NULL, *line = NULL;
    size_t          blen = 0, bcap = c->feed_max_batch_bytes, lcap = 0;
    const char     *force_url = NULL;
    bool            push = false, from_stdin = false;
    int             i, rc, code = 2;
    unsigned long   ok = 0, failed = 0, base_line = 0, sent_lines = 0;

    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--push") == 0)
            push = true;
        else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
            force_url = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else
            break;
    }
    if (i == argc) {
        fprintf(err, "usage: uabroker [options] feed [--push] [--url URL] "
                "('NODEID=VALUE[;status=..][;ts=..]'... | -)\n");
        return 2;
    }
    if (argc - i == 1 && strcmp(argv[i], "-") == 0)
        from_stdin = true;
    if (force_url != NULL)
        snprintf(url, sizeof(url), "%s", force_url);
    else
        bk_feed_url(c, push ? BK_FEED_PULL_NAME : BK_FEED_CTL_NAME, url,
                    sizeof(url));
    rc = shm_feed_connect(&sock, push ? SHM_FEED_PUSH : SHM_FEED_REQ, url,
                          BK_FEED_CONNECT_MS);
    if (rc != 0) {
        fprintf(err, "uabroker feed: %s: %s\n", url, strerror(-rc));
        return 2;
    }
    batch = bk_alloc(bcap);
    reply = bk_alloc(64 * 1024 + 1);
    if (batch == NULL || reply == NULL)
        goto out;
    code = 0;
    /* Lines go out in batches of at most feed.max_batch_bytes. */
    for (;;) {
        const char *l;
        size_t      n;
        ssize_t     got = 0;
        bool        done;

        if (from_stdin) {
            got = getline(&line, &lcap, in);
            done = got < 0;
            l = line;
            n = got > 0 ? (size_t)got : 0;
            if (n > 0 && l[n - 1] == '\n')
                n--;
        } else {
            done = i >= argc;
            l = done ? NULL : argv[i++];
            n = l != NULL ? strlen(l) : 0;
        }
        if (!done && n + 1 > bcap) {
            fprintf(err, "uabroker feed: line %lu: longer than "
                    "feed.max_batch_bytes\n", base_line + sent_lines + 1);
            failed++;
            sent_lines++;
            code = 1;
            continue;
        }
        if (blen != 0 && (done || blen + n + 1 > bcap)) {
            /* Send this batch; with a report, line numbers shift by the
             * lines sent before it. */
            rc = shm_feed_send(&sock, batch, blen);
            if (rc != 0) {
                fprintf(err, "uabroker feed: send to %s: %s\n", url,
                        strerror(-rc));
                code = 2;
                break;
            }
            if (!push) {
                int          r = shm_feed_recv(&sock, reply, 64 * 1024,
                                               BK_FEED_REPORT_MS);
                char        *p, *nl;
                unsigned long o = 0, f = 0;

                if (r < 0) {
                    fprintf(err, "uabroker feed: no report from %s: %s\n",
                            url, strerror(-r));
                    code = 2;
                    break;
                }
                reply[r] = '\0';
                for (p = reply; *p != '\0'; p = nl + 1) {
                    unsigned long ln;
                    char         *rest;

                    nl = strchr(p, '\n');
                    if (nl == NULL)
                        nl = p + strlen(p) - 1;
                    if (sscanf(p, "ok %lu failed %lu", &o, &f) == 2)
                        continue;
                    if (strncmp(p, "line ", 5) == 0) {
                        ln = strtoul(p + 5, &rest, 10);
                        fprintf(err, "line %lu%.*s\n", ln + base_line,
                                (int)(nl - rest), rest);
                    } else {
                        fprintf(err, "%.*s\n", (int)(nl - p), p);
                    }
                    if (*nl == '\0')
                        break;
                }
                ok += o;
                failed += f;
            } else {
                ok += sent_lines;
            }
            base_line += sent_lines;
            sent_lines = 0;
            blen = 0;
        }
        if (done)
            break;
        memcpy(batch + blen, l, n);
        batch[blen + n] = '\n';
        blen += n + 1;
        sent_lines++;
    }
    if (push && ok != 0) {
        /* nanomsg has no linger: a message still queued when the socket
         * closes is dropped.  Give the pipe a moment to carry it. */
        struct timespec linger = { 0, BK_FEED_LINGER_MS * 1000000L };

        nanosleep(&linger, NULL);
    }
    if (code != 2) {
        if (push)
            fprintf(out, "sent %lu line%s\n", ok, ok == 1 ? "" : "s");
        else
            fprintf(out, "ok %lu failed %lu\n", ok, failed);
        if (failed != 0)
            code = 1;
    }
out:
    bk_free(line);                      /* getline()'s: libc's, uncounted */
    bk_free(batch);
    bk_free(reply);
    shm_feed_close(&sock);
    return code;
}
