/*
 * broker/feedline.c: the feed's text format (feedline.h, docs/feed.md):
 * value lines and event lines parsed against the node store, values
 * printed back in the same syntax.  The feed socket (broker/feed.c), MQTT
 * (broker/mqtt.c, through bk_feed_batch) and the method owners
 * (broker/methods.c) read and write values this way.
 *
 * Parsing never trusts the input: every token is bounded by the line.
 * The per-type text rules are proto/builtin.c's (UA_TEXT_FEED), NodeIds
 * proto/nodeid.c's.  Values are built in the caller's arena; nothing else
 * is allocated.  Pure: no I/O, no state of its own.
 */
#include "feedline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "addrspace.h"
#include "event.h"
#include "proto/builtin.h"
#include "proto/codec.h"
#include "proto/nodeid.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"
#include "write.h"

#define BK_FEEDLINE_ARRAY_MAX 65535     /* elements in one array value */

/* A cursor over one line. */
struct bk_feedline_cur {
    const char *p;
    const char *end;
};

/* A cursor for printing into buf[cap]; ok false once it overflowed. */
struct bk_feedline_out {
    char  *p;
    size_t len;
    size_t cap;
    bool   ok;
};

static ua_status bk_feedline_nodeid(struct bk_feedline_cur *c,
                                    struct ua_arena *a, struct ua_nodeid *id,
                                    char stop);
static ua_status bk_feedline_event_opt(const struct shm_nodestore *ns,
                                       const char *k, size_t kl, const char *v,
                                       size_t vl, struct ua_arena *a,
                                       struct bk_event *ev, uint32_t *type,
                                       uint16_t *severity, char *why,
                                       size_t whylen);
static size_t bk_feedline_token(const char *p, const char *end, bool in_array);
static ua_status bk_feedline_elem(uint8_t bt, uint32_t root, const char *s,
                                  size_t n, struct ua_arena *a, void *out,
                                  uint8_t *got, char *why, size_t whylen);
static ua_status bk_feedline_node_value(const struct shm_nodestore *ns,
                                        uint32_t node, const char *s,
                                        size_t n, struct ua_arena *a,
                                        struct ua_variant *v, char *why,
                                        size_t whylen);
static void bk_feedline_put(struct bk_feedline_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void bk_feedline_put_elem(struct bk_feedline_out *o, uint8_t bt,
                                 const void *p);

/* ------------------------------------------------------------ helpers */

/*
 * The NodeId at c (standard string form), advancing c.  stop ('=' for a
 * value line, ';' in an event line, 0: none): the identifier of s= ends
 * at the next one.
 */
static ua_status
bk_feedline_nodeid(struct bk_feedline_cur *c, struct ua_arena *a,
                   struct ua_nodeid *id, char stop)
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
bk_feedline_token(const char *p, const char *end, bool in_array)
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
bk_feedline_elem(uint8_t bt, uint32_t root, const char *s, size_t n,
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
bk_feedline_node_value(const struct shm_nodestore *ns, uint32_t node,
                       const char *s, size_t n, struct ua_arena *a,
                       struct ua_variant *v, char *why, size_t whylen)
{
    return bk_feedline_parse_value(ns, ns->nodes[node].u.var.data_type, s, n,
                                   a, v, why, whylen);
}

ua_status
bk_feedline_parse_value(const struct shm_nodestore *ns, uint32_t dt,
                        const char *s, size_t n, struct ua_arena *a,
                        struct ua_variant *v, char *why, size_t whylen)
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
        return ua_builtin_why(why, whylen, UA_BAD_NOT_SUPPORTED,
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
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
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
            tl = bk_feedline_token(p, end, true);
            if (cnt >= BK_FEEDLINE_ARRAY_MAX)
                return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                                       "more than %d elements",
                                       BK_FEEDLINE_ARRAY_MAX);
            if (cnt == cap) {
                uint8_t *nd;

                nd = ua_arena_alloc(a, (size_t)cap * 2 * 64);
                if (nd == NULL)
                    return UA_BAD_OUT_OF_MEMORY;
                memcpy(nd, data, (size_t)cap * 64);
                data = nd;
                cap *= 2;
            }
            st = bk_feedline_elem(eb, root, p, tl, a, data + (size_t)cnt * 64,
                                  &got, why, whylen);
            if (st != UA_GOOD)
                return st;
            if (eb != 0 && got != eb)
                return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "array elements of different types");
            if (bt == 0 && cnt == 0)
                esz = ua_types[got - 1].size;
            cnt++;
            p += tl;
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end) {
                if (*p != ',')
                    return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
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
        st = bk_feedline_elem(bt, root, s, n, a, p, &got, why, whylen);
        if (st != UA_GOOD)
            return st;
        ua_variant_set_scalar(v, p, got);
    }
    return UA_GOOD;
}

/* ------------------------------------------------------------ lines */

ua_status
bk_feedline_parse(const struct shm_nodestore *ns, const char *line,
                  size_t len, struct ua_arena *a,
                  struct bk_feedline_value *out, char *why, size_t whylen)
{
    struct bk_feedline_cur c = { line, line + len };
    struct ua_nodeid       id;
    const struct shm_node *n;
    const char            *val, *vend, *opt;
    size_t                 vl;
    ua_status              st;

    memset(out, 0, sizeof(*out));
    if (why != NULL && whylen != 0)
        why[0] = '\0';
    st = bk_feedline_nodeid(&c, a, &id, '=');
    if (st != UA_GOOD || c.p >= c.end || *c.p != '=')
        return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                               "expected NODEID=VALUE with a NodeId like "
                               "ns=1;s=v0 or i=2258");
    out->node = bk_addrspace_lookup(ns, &id);
    if (out->node == SHM_NONE)
        return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_UNKNOWN,
                               "no such node");
    n = &ns->nodes[out->node];
    if (n->node_class != SHM_NC_VARIABLE || n->u.var.slot == SHM_NONE)
        return ua_builtin_why(why, whylen, UA_BAD_NOT_WRITABLE,
                               "not a Variable");
    if (n->ns == 0)
        return ua_builtin_why(why, whylen, UA_BAD_NOT_WRITABLE,
                               "namespace 0 belongs to the server");
    out->slot = n->u.var.slot;
    val = c.p + 1;
    vend = c.end;
    /* The value: a quoted string or an array through its end, else up to
     * the first ";status=" or ";ts=". */
    if (val < vend && (*val == '"' || *val == '[')) {
        const char *q = val;

        if (*q == '"') {
            q += bk_feedline_token(q, vend, false);
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
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "unexpected text after the value: \"%.*s\"",
                                   (int)(vend - opt), opt);
        e = opt + 1;
        while (e < vend && *e != ';')
            e++;
        if ((size_t)(e - opt) > 8 && memcmp(opt, ";status=", 8) == 0) {
            size_t k = (size_t)(e - opt) - 8;

            if (k >= sizeof(num))
                return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "bad status");
            memcpy(num, opt + 8, k);
            num[k] = '\0';
            errno = 0;
            {
                unsigned long long sv = strtoull(num, &endp, 0);

                if (*endp != '\0' || endp == num || errno != 0
                    || sv > UINT32_MAX)
                    return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                           "status=%s is not a StatusCode",
                                           num);
                out->status = (ua_status)sv;
            }
        } else if ((size_t)(e - opt) > 4 && memcmp(opt, ";ts=", 4) == 0) {
            size_t      k = (size_t)(e - opt) - 4;
            const char *ts = ua_text_trim(opt + 4, &k);

            if (ua_text_datetime_parse(ts, k, UA_TEXT_FEED, &out->source_ts)
                != 0)
                return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "ts=%.*s is not ISO 8601 (like "
                                       "2024-05-01T12:00:00.5Z)", (int)k, ts);
            out->has_ts = true;
        } else {
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "unknown option \"%.*s\" (status=, ts=)",
                                   (int)(e - opt), opt);
        }
        opt = e;
    }
    st = bk_feedline_node_value(ns, out->node, val, vl, a, &out->v, why,
                                whylen);
    if (st != UA_GOOD)
        return st;
    if (!bk_write_type_ok(ns, n->u.var.data_type, &out->v))
        return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "a %s is not of the node's DataType",
                               ua_types[out->v.type - 1].name);
    if (!bk_write_rank_ok(ns, out->node, &out->v))
        return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "%s does not fit the node's ValueRank %d",
                               out->v.is_array ? "an array" : "a scalar",
                               n->u.var.value_rank);
    return UA_GOOD;
}


/* ------------------------------------------------------------ events */

/* One ;key=value of an event line (docs/feed.md "Events"). */
static ua_status
bk_feedline_event_opt(const struct shm_nodestore *ns, const char *k, size_t kl,
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
        struct bk_feedline_cur c = { v, v + vl };
        struct ua_nodeid   id;
        uint32_t           base;
        struct ua_nodeid   bid = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);

        if (bk_feedline_nodeid(&c, a, &id, 0) != UA_GOOD || c.p != c.end)
            return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                                   "type=%.*s is not a NodeId", (int)vl, v);
        *type = bk_addrspace_lookup(ns, &id);
        base = bk_addrspace_lookup(ns, &bid);
        if (*type == SHM_NONE || base == SHM_NONE
            || ns->nodes[*type].node_class != SHM_NC_OBJECTTYPE
            || !shm_nodestore_is_subtype(ns, *type, base))
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_DEFINITION_INVALID,
                                   "type=%.*s is not an EventType", (int)vl, v);
        return UA_GOOD;
    }
    if (KEY("severity")) {
        char          num[16];
        char         *endp;
        unsigned long sv;

        if (vl == 0 || vl >= sizeof(num))
            return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_RANGE,
                                   "severity is 1..1000");
        memcpy(num, v, vl);
        num[vl] = '\0';
        sv = strtoul(num, &endp, 10);
        if (*endp != '\0' || num[0] == '-' || sv < 1 || sv > 1000)
            return ua_builtin_why(why, whylen, UA_BAD_OUT_OF_RANGE,
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
        st = bk_feedline_elem(UA_BT_LOCALIZEDTEXT, 0, v, vl, a, cell, &got, why,
                              whylen);
    } else if (KEY("time")) {
        memcpy(path, "0:Time", 6);
        pl = 6;
        st = bk_feedline_elem(UA_BT_DATETIME, 0, v, vl, a, cell, &got, why,
                              whylen);
    } else if (KEY("sourcename")) {
        memcpy(path, "0:SourceName", 12);
        pl = 12;
        st = bk_feedline_elem(UA_BT_STRING, 0, v, vl, a, cell, &got, why,
                              whylen);
    } else {
        /* A field: BrowseNames joined by '/', each [ns:]Name. */
        size_t i = 0;

        if (kl == 0 || (k[0] >= 'a' && k[0] <= 'z'
                        && memchr(k, ':', kl) == NULL))
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
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
                return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "field \"%.*s\" is not "
                                       "ns:Name[/ns:Name]", (int)kl, k);
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
                return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                       "field \"%.*s\" ends with /",
                                       (int)kl, k);
        }
        {
            static const char *const std[] = {
                "0:EventId", "0:EventType", "0:SourceNode", "0:SourceName",
                "0:Time", "0:ReceiveTime", "0:Message", "0:Severity"
            };

            for (size_t k2 = 0; k2 < sizeof(std) / sizeof(std[0]); k2++)
                if (strlen(std[k2]) == pl && memcmp(std[k2], path, pl) == 0)
                    return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                           "%.*s is a standard field (use "
                                           "severity=, message=, time=, "
                                           "sourcename=)", (int)pl, path);
        }
        st = bk_feedline_elem(0, UA_NS0ID_BASEDATATYPE, v, vl, a, cell, &got,
                              why, whylen);
    }
#undef KEY
    if (st != UA_GOOD)
        return st;
    ua_variant_set_scalar(&var, cell, got);
    rc = bk_event_field(ev, path, pl, &var);
    if (rc == -EEXIST)
        return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                               "%.*s given twice", (int)pl, path);
    if (rc != 0)
        return ua_builtin_why(why, whylen, UA_BAD_ENCODING_LIMITS_EXCEEDED,
                               "the event is too large (at most %u fields, a "
                               "notification block)", SHM_FO_EV_FIELDS_MAX);
    return UA_GOOD;
}

ua_status
bk_feedline_parse_event(const struct shm_nodestore *ns, const char *line,
                        size_t len, int64_t now, struct ua_arena *a,
                        struct bk_event *ev, uint8_t *buf, uint32_t cap,
                        char *why, size_t whylen)
{
    struct bk_feedline_cur c = { line, line + len };
    struct ua_nodeid   id, bid = ua_nodeid_num(0, UA_NS0ID_BASEEVENTTYPE);
    uint32_t           source, type;
    uint16_t           severity = BK_FEEDLINE_EVENT_SEVERITY;
    const char        *p, *end = line + len;
    ua_status          st;

    if (why != NULL && whylen != 0)
        why[0] = '\0';
    if (len < 6 || memcmp(line, "event=", 6) != 0)
        return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                               "not an event line");
    c.p = line + 6;
    st = bk_feedline_nodeid(&c, a, &id, ';');
    if (st != UA_GOOD || (c.p < c.end && *c.p != ';'))
        return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                               "expected event=SOURCE_NODEID[;key=value]...");
    source = bk_addrspace_lookup(ns, &id);
    if (source == SHM_NONE)
        return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_UNKNOWN,
                               "no such source node");
    type = bk_addrspace_lookup(ns, &bid);
    /* The options first, then the event (the type goes in its head). */
    bk_event_begin(ev, buf, cap, source, type);
    for (p = c.p; p < end;) {
        const char *k, *eq, *v, *ve;

        if (*p != ';')
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "unexpected text \"%.*s\"",
                                   (int)(end - p), p);
        k = p + 1;
        eq = k;
        while (eq < end && *eq != '=' && *eq != ';')
            eq++;
        if (eq >= end || *eq != '=')
            return ua_builtin_why(why, whylen, UA_BAD_TYPE_MISMATCH,
                                   "\"%.*s\" is not key=value",
                                   (int)(eq - k), k);
        v = eq + 1;
        if (v < end && *v == '"') {
            ve = v + bk_feedline_token(v, end, false);
        } else if ((size_t)(eq - k) == 4 && memcmp(k, "type", 4) == 0) {
            /* A NodeId: ns=N;... holds a ';' of its own. */
            struct bk_feedline_cur nc = { v, end };
            struct ua_nodeid   tid;

            if (bk_feedline_nodeid(&nc, a, &tid, ';') != UA_GOOD)
                return ua_builtin_why(why, whylen, UA_BAD_NODE_ID_INVALID,
                                       "type= is not a NodeId");
            ve = nc.p;
        } else {
            ve = v;
            while (ve < end && *ve != ';')
                ve++;
        }
        st = bk_feedline_event_opt(ns, k, (size_t)(eq - k), v, (size_t)(ve - v),
                                   a, ev, &type, &severity, why, whylen);
        if (st != UA_GOOD)
            return st;
        p = ve;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
    }
    memcpy(ev->buf + offsetof(struct shm_fo_ev, type), &type, 4);
    if (bk_event_std(ev, ns, now, severity) != 0)
        return ua_builtin_why(why, whylen, UA_BAD_ENCODING_LIMITS_EXCEEDED,
                               "the event is too large");
    return UA_GOOD;
}

/* ------------------------------------------------------------ printing */

static void
bk_feedline_put(struct bk_feedline_out *o, const char *fmt, ...)
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
bk_feedline_print_nodeid(const struct ua_nodeid *id, char *buf, size_t cap)
{
    (void)ua_nodeid_print(id, buf, cap);
}

/* One element of built-in type bt at p. */
static void
bk_feedline_put_elem(struct bk_feedline_out *o, uint8_t bt, const void *p)
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
bk_feedline_print_value(const struct ua_variant *v, char *buf, size_t cap)
{
    struct bk_feedline_out o = { buf, 0, cap, cap > 0 };
    size_t             esz;

    if (cap > 0)
        buf[0] = '\0';
    if (v->type == UA_BT_NULL)
        return 0;                   /* an empty Variant: an empty line */
    if (v->type > UA_BT_MAX)
        return -1;
    esz = ua_types[v->type - 1].size;
    if (!v->is_array) {
        bk_feedline_put_elem(&o, v->type, v->data);
    } else {
        bk_feedline_put(&o, "[");
        for (int32_t k = 0; k < v->n && o.ok; k++) {
            if (k != 0)
                bk_feedline_put(&o, ",");
            bk_feedline_put_elem(&o, v->type,
                                 (const uint8_t *)v->data + (size_t)k * esz);
        }
        bk_feedline_put(&o, "]");
    }
    return o.ok ? (int)o.len : -1;
}
