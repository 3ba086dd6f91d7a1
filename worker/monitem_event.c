/*
 * worker/monitem_event.c: event monitored items (Part 4 §5.12.1, §7.22.3
 * EventFilter; docs/subscriptions.md "Events").
 *
 * An event reaches the worker once, as the record the broker encoded
 * (shm/fanout.h SHM_FO_EVENT_SLOT: source, EventType, fields named by
 * their browse-path text).  For each event item of the worker:
 *
 *   node       the item's Object: the Server (i=2253) takes every event;
 *              another Object the events whose SourceNode is itself or a
 *              node it reaches by forward HasEventSource (HasNotifier is
 *              one) or HasComponent references, at most WK_EV_DEPTH deep
 *   where      the item's where clause (the ContentFilter, compiled)
 *   select     the EventFieldList: for each select clause the Variant
 *              bytes of the field with its path, copied as the broker
 *              encoded them (a null Variant for a field the event does
 *              not have, or of an event not of the clause's type); a
 *              clause of the NodeId attribute (the ConditionId) takes the
 *              field "ConditionId" of a condition's event
 *              (broker/alarmnode.h)
 *   queue      the item's queue (monitem_queue.c wk_mi_event_enqueue)
 *
 * The filter is compiled when the item is created or modified into a
 * cell chain (struct wk_mi.range, unused by event items otherwise):
 *
 *   uint32 len | uint16 nsel | uint16 nwhere | uint32 where_off |
 *   nsel x (uint32 typedef node or SHM_NONE, uint8 attr, uint8 ok,
 *           uint16 plen, path text) | the where clause (where_off)
 *
 * and copied into st->evc for each event.  Nothing is allocated per
 * event: the EventFieldList is built in st->tmp and queued into cells.
 */
#include <errno.h>
#include <string.h>

#include "link.h"
#include "node.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "shm/nodestore.h"
#include "sub_int.h"

#define WK_EV_DEPTH       4     /* HasEventSource/HasComponent hops */
#define WK_EV_CONDITION_ID "ConditionId"    /* the field of the NodeId */
#define WK_EV_COND_REC    8192  /* a retained condition's event record */
#define WK_EV_COND_DEPTH  3     /* levels of a condition's variables */
#define WK_EV_COND_TRIES  3     /* reads of a condition that kept changing */

/* A select clause, compiled (followed by plen bytes of path). */
struct wk_ev_sel {
    uint32_t type;              /* TypeDefinition node, SHM_NONE: any */
    uint8_t  attr;              /* Value or NodeId */
    uint8_t  ok;                /* 0: rejected, always null */
    uint16_t plen;
};

struct wk_ev_hdr {
    uint16_t nsel;
    uint16_t nwhere;
    uint32_t where_off;
};

static uint32_t wk_ev_lookup_ns0(struct wk_subs *st, uint32_t id);
static int wk_ev_path(const struct ua_simple_attribute_operand *op,
                      char *out, size_t cap);
static bool wk_ev_reaches(const struct wk_subs *st, uint32_t from,
                          uint32_t to, int depth);
static bool wk_ev_source_ok(struct wk_subs *st, const struct wk_mi *mi,
                            uint32_t source);
static uint32_t wk_ev_build(struct wk_subs *st, const uint8_t *evc,
                            const struct shm_fo_ev *ev,
                            const struct shm_fo_ev_field *f, uint32_t nf,
                            uint8_t *out, uint32_t cap);
static uint32_t wk_ev_overflow_body(struct wk_subs *st, const uint8_t *evc,
                                    uint8_t *out, uint32_t cap);
static void wk_ev_enqueue(struct wk_subs *st, struct wk_sub *sub,
                          struct wk_mi *mi, const uint8_t *evc, uint32_t len,
                          uint32_t half);
static const uint8_t *wk_ev_load(struct wk_subs *st, const struct wk_mi *mi);
static uint32_t wk_ev_sys_body(struct wk_subs *st, const uint8_t *evc,
                               uint16_t type, const char *source_name,
                               const char *message, uint8_t *out,
                               uint32_t cap);
static void wk_ev_sys(struct wk_subs *st, struct wk_mi *mi, uint16_t type,
                      const char *message);
struct wk_ev_rec;
static bool wk_ev_rec_put(struct wk_ev_rec *r, const char *path,
                          uint32_t plen, const uint8_t *var, uint32_t vlen);
static bool wk_ev_cond_walk(struct wk_subs *st, uint32_t node, char *path,
                            uint32_t plen, int depth, struct wk_ev_rec *r);
static uint32_t wk_ev_cond_retain(const struct wk_subs *st, uint32_t cond);
static uint32_t wk_ev_cond_record(struct wk_subs *st, uint32_t cond,
                                  uint32_t retain, uint8_t *rec,
                                  uint32_t cap);
static bool wk_ev_is_cond(const struct shm_nodestore *ns, uint32_t i,
                          uint32_t ct);
static bool wk_ev_conds(struct wk_subs *st, uint32_t ct);
static void wk_ev_cond_refresh(struct wk_subs *st, struct wk_mi *mi);
static ua_status wk_ev_refresh_args(struct wk_svc_ctx *ctx,
                                    const struct ua_call_method_request *m,
                                    struct ua_call_method_result *r,
                                    uint32_t *ids, int32_t want);

static uint32_t
wk_ev_lookup_ns0(struct wk_subs *st, uint32_t id)
{
    struct ua_nodeid n = ua_nodeid_num(0, id);

    return wk_node_lookup(st->w, &n);
}

/* ------------------------------------------------------------------ */
/* filter                                                              */
/* ------------------------------------------------------------------ */

/* A SimpleAttributeOperand's browse path as text ("0:A/2:B"); its length,
 * -1 when a name is null or the text does not fit. */
static int
wk_ev_path(const struct ua_simple_attribute_operand *op, char *out,
           size_t cap)
{
    size_t n = 0;

    for (int32_t i = 0; i < op->n_browse_path; i++) {
        const struct ua_qualifiedname *q = &op->browse_path[i];
        int                            k;

        if (q->name.len <= 0)
            return -1;
        k = snprintf(out + n, cap - n, "%s%u:", i > 0 ? "/" : "",
                     (unsigned)q->ns);
        if (k < 0 || (size_t)k >= cap - n
            || (size_t)q->name.len > cap - n - (size_t)k)
            return -1;
        n += (size_t)k;
        memcpy(out + n, q->name.data, (size_t)q->name.len);
        n += (size_t)q->name.len;
    }
    return n > SHM_FO_EV_PATH_MAX ? -1 : (int)n;
}

ua_status
wk_ev_operand_path(struct wk_subs *st,
                   const struct ua_simple_attribute_operand *op,
                   uint32_t *type, char *path, uint16_t *plen)
{
    uint32_t base = wk_ev_lookup_ns0(st, UA_NS0ID_BASEEVENTTYPE);
    int      pl = 0;

    *type = SHM_NONE;
    *plen = 0;
    if (!wk_node_is_null(&op->type_definition_id)) {
        uint32_t t = wk_node_lookup(st->w, &op->type_definition_id);

        if (t == SHM_NONE
            || st->w->ns.nodes[t].node_class != SHM_NC_OBJECTTYPE
            || base == SHM_NONE
            || !shm_nodestore_is_subtype(&st->w->ns, t, base))
            return UA_BAD_TYPE_DEFINITION_INVALID;
        if (t != base)
            *type = t;
    }
    if (op->attribute_id == UA_ATTR_VALUE) {
        pl = wk_ev_path(op, path, SHM_FO_EV_PATH_MAX + 1);
        if (pl <= 0)
            return UA_BAD_BROWSE_NAME_INVALID;
    } else if (op->attribute_id == UA_ATTR_NODEID) {
        /* The ConditionId (empty path): a condition's events carry it
         * (wk_ev_build), the others have none (null). */
        if (op->n_browse_path > 0)
            return UA_BAD_ATTRIBUTE_ID_INVALID;
    } else {
        return UA_BAD_ATTRIBUTE_ID_INVALID;
    }
    if (op->index_range.len > 0)
        return UA_BAD_INDEX_RANGE_INVALID;     /* not on event fields */
    *plen = (uint16_t)pl;
    return UA_GOOD;
}

ua_status
wk_ev_node_ok(struct wk_subs *st, uint32_t node)
{
    const struct shm_node *n = &st->w->ns.nodes[node];

    if (n->node_class != SHM_NC_OBJECT && n->node_class != SHM_NC_VIEW)
        return UA_BAD_ATTRIBUTE_ID_INVALID;  /* no EventNotifier */
    if (!(n->event_notifier & 0x01))
        return UA_BAD_NOT_SUPPORTED;         /* not SubscribeToEvents */
    return UA_GOOD;
}

uint16_t
wk_ev_revise_queue(const struct wk_subs *st, uint32_t req)
{
    uint32_t max = st->lim.max_evq;

    if (max > UINT16_MAX)
        max = UINT16_MAX;
    if (req == 0)
        req = st->lim.def_evq;
    if (req < 1)
        req = 1;
    if (req > max)
        req = max;
    return (uint16_t)req;
}

ua_status
wk_ev_filter(struct wk_subs *st, struct ua_arena *a, const struct ua_extobj *x,
             uint32_t *chain, struct ua_extobj *fres)
{
    uint32_t  pos = 0;
    ua_status rc;

    *chain = WK_NIL;
    rc = wk_ev_filter_compile(st, a, x, &pos, fres);
    if (rc != UA_GOOD)
        return rc;
    *chain = wk_cells_put(&st->cells, &pos, 4, st->evc, pos);
    return *chain == WK_NIL ? UA_BAD_OUT_OF_MEMORY : UA_GOOD;
}

ua_status
wk_ev_filter_compile(struct wk_subs *st, struct ua_arena *a,
                     const struct ua_extobj *x, uint32_t *len,
                     struct ua_extobj *fres)
{
    const struct ua_event_filter  *ef;
    struct ua_event_filter_result *r = NULL;
    struct wk_ev_hdr               h;
    uint8_t                       *b = st->evc;
    uint32_t                       pos = sizeof(h), where_off;
    uint16_t                       nwhere = 0;
    bool                           bad = false;

    *len = 0;
    fres->encoding = UA_EO_NONE;
    if (x->encoding == UA_EO_NONE && wk_node_is_null(&x->type_id))
        return UA_BAD_EVENT_FILTER_INVALID;  /* an event item needs one */
    if (x->encoding != UA_EO_DECODED)
        return UA_BAD_MONITORED_ITEM_FILTER_UNSUPPORTED;
    if (x->type == &ua_types[UA_TYPE_DATACHANGEFILTER]
        || x->type == &ua_types[UA_TYPE_AGGREGATEFILTER])
        return UA_BAD_FILTER_NOT_ALLOWED;
    if (x->type != &ua_types[UA_TYPE_EVENTFILTER])
        return UA_BAD_MONITORED_ITEM_FILTER_INVALID;
    ef = x->obj;
    if (ef->n_select_clauses <= 0 || ef->n_select_clauses > WK_EV_SELECT_MAX)
        return UA_BAD_EVENT_FILTER_INVALID;
    if (a != NULL) {
        r = ua_arena_alloc(a, sizeof(*r));
        if (r != NULL) {
            memset(r, 0, sizeof(*r));
            r->select_clause_results = ua_arena_alloc(
                a, (size_t)ef->n_select_clauses * sizeof(ua_status));
            if (r->select_clause_results == NULL)
                r = NULL;
            else
                r->n_select_clause_results = ef->n_select_clauses;
        }
    }
    for (int32_t i = 0; i < ef->n_select_clauses; i++) {
        const struct ua_simple_attribute_operand *op = &ef->select_clauses[i];
        struct wk_ev_sel                          s;
        char                                      path[SHM_FO_EV_PATH_MAX + 1];
        uint16_t                                  pl = 0;
        ua_status                                 rc;

        rc = wk_ev_operand_path(st, op, &s.type, path, &pl);
        s.attr = (uint8_t)op->attribute_id;
        if (rc != UA_GOOD) {
            bad = true;
            pl = 0;
        }
        s.ok = rc == UA_GOOD;
        s.plen = pl;
        if (pos + sizeof(s) + s.plen > WK_EV_FILTER_MAX)
            return UA_BAD_EVENT_FILTER_INVALID;
        memcpy(b + pos, &s, sizeof(s));
        memcpy(b + pos + sizeof(s), path, s.plen);
        pos += (uint32_t)sizeof(s) + s.plen;
        if (r != NULL)
            r->select_clause_results[i] = rc;
    }
    where_off = pos;
    {
        struct ua_content_filter_result wr;
        ua_status                       ws;

        ws = wk_ev_where_compile(st, a, &ef->where_clause, b, &pos,
                                 WK_EV_FILTER_MAX, &nwhere, &wr);
        if (r != NULL)
            r->where_clause_result = wr;
        if (ws != UA_GOOD) {
            if (r != NULL && wr.n_element_results > 0) {
                fres->type_id = ua_nodeid_num(0,
                    UA_NS0ID_EVENTFILTERRESULT_ENCODING_DEFAULTBINARY);
                fres->encoding = UA_EO_DECODED;
                fres->type = &ua_types[UA_TYPE_EVENTFILTERRESULT];
                fres->obj = r;
            }
            return ws;
        }
    }
    h.nsel = (uint16_t)ef->n_select_clauses;
    h.nwhere = nwhere;
    h.where_off = where_off;
    memcpy(b, &h, sizeof(h));
    *len = pos;
    if (bad && r != NULL) {
        fres->type_id = ua_nodeid_num(0,
            UA_NS0ID_EVENTFILTERRESULT_ENCODING_DEFAULTBINARY);
        fres->encoding = UA_EO_DECODED;
        fres->type = &ua_types[UA_TYPE_EVENTFILTERRESULT];
        fres->obj = r;
    }
    return UA_GOOD;
}

/* mi's compiled filter, copied into st->evc; NULL when it is not there. */
static const uint8_t *
wk_ev_load(struct wk_subs *st, const struct wk_mi *mi)
{
    uint32_t len = 0;

    if (mi->range == WK_NIL)
        return NULL;
    wk_cells_get(&st->cells, mi->range, 0, &len, 4);
    if (len < sizeof(struct wk_ev_hdr) || len > WK_EV_FILTER_MAX)
        return NULL;
    wk_cells_get(&st->cells, mi->range, 4, st->evc, len);
    return st->evc;
}

/* ------------------------------------------------------------------ */
/* the list of event items                                             */
/* ------------------------------------------------------------------ */

void
wk_ev_add(struct wk_subs *st, struct wk_mi *mi)
{
    bool first = st->ev_head == WK_NIL;

    wk_list_add(st, &st->ev_head, (uint32_t)(mi - st->items));
    if (first)
        wk_link_event_interest(st->w->link, true);
}

void
wk_ev_del(struct wk_subs *st, struct wk_mi *mi)
{
    if (!(mi->flags & WK_MI_EVENT))
        return;
    wk_list_del(st, &st->ev_head, (uint32_t)(mi - st->items));
    if (st->ev_head == WK_NIL && !st->evwin_on)
        wk_link_event_interest(st->w->link, false);
}

/* ------------------------------------------------------------------ */
/* one event                                                           */
/* ------------------------------------------------------------------ */

/* Does from reach to by forward HasEventSource / HasComponent
 * references, at most depth hops? */
static bool
wk_ev_reaches(const struct wk_subs *st, uint32_t from, uint32_t to, int depth)
{
    const struct shm_nodestore *ns = &st->w->ns;
    const struct shm_node      *n = &ns->nodes[from];

    if (depth <= 0)
        return false;
    for (uint32_t k = 0; k < n->nrefs; k++) {
        const struct shm_ref *r = &ns->refs[n->refs + k];

        if ((r->flags & SHM_REF_INVERSE) || r->target >= ns->nnodes)
            continue;
        if (!shm_nodestore_reftype_is(ns, r->reftype, st->rt_hes)
            && !shm_nodestore_reftype_is(ns, r->reftype, st->rt_hc))
            continue;
        if (r->target == to)
            return true;
        if (wk_ev_reaches(st, r->target, to, depth - 1))
            return true;
    }
    return false;
}

static bool
wk_ev_source_ok(struct wk_subs *st, const struct wk_mi *mi, uint32_t source)
{
    if (mi->node == st->n_server || mi->node == source)
        return true;
    if (source >= st->w->ns.nnodes || st->rt_hes == SHM_NONE)
        return false;
    return wk_ev_reaches(st, mi->node, source, WK_EV_DEPTH);
}

/* The Variant bytes select clause s (path[s->plen]) takes of the event:
 * *var and *vl, or *var NULL for the null Variant. */
static inline void
wk_ev_sel_find(struct wk_subs *st, const struct wk_ev_sel *s0,
               const char *path, const struct shm_fo_ev *ev,
               const struct shm_fo_ev_field *f, uint32_t nf,
               const uint8_t **var, uint32_t *vl)
{
    struct wk_ev_sel s = *s0;

    *var = NULL;
    *vl = 0;
    if (s.ok && s.attr == UA_ATTR_NODEID) {
        /* The ConditionId: the broker's "ConditionId" field of a
         * condition's event (broker/alarmnode.h). */
        path = WK_EV_CONDITION_ID;
        s.plen = sizeof(WK_EV_CONDITION_ID) - 1;
    }
    if (s.ok && (s.attr == UA_ATTR_VALUE || s.attr == UA_ATTR_NODEID)
        && (s.type == SHM_NONE
            || (ev->type < st->w->ns.nnodes
                && shm_nodestore_is_subtype(&st->w->ns, ev->type, s.type))))
        for (uint32_t k = 0; k < nf; k++)
            if (f[k].plen == s.plen && memcmp(f[k].path, path, s.plen) == 0) {
                *var = f[k].var;
                *vl = f[k].vlen;
                return;
            }
}

uint32_t
wk_ev_select(struct wk_subs *st, const uint8_t *evc,
             const struct shm_fo_ev *ev, const struct shm_fo_ev_field *f,
             uint32_t nf, const uint8_t **var, uint32_t *vl)
{
    struct wk_ev_hdr h;
    uint32_t         at = sizeof(h);

    memcpy(&h, evc, sizeof(h));
    for (uint32_t i = 0; i < h.nsel; i++) {
        struct wk_ev_sel s;

        memcpy(&s, evc + at, sizeof(s));
        wk_ev_sel_find(st, &s, (const char *)evc + at + sizeof(s), ev, f, nf,
                       &var[i], &vl[i]);
        at += (uint32_t)sizeof(s) + s.plen;
    }
    return h.nsel;
}

bool
wk_ev_where_ok(struct wk_subs *st, const uint8_t *evc,
               const struct shm_fo_ev *ev, const struct shm_fo_ev_field *f,
               uint32_t nf)
{
    struct wk_ev_hdr h;

    memcpy(&h, evc, sizeof(h));
    return h.nwhere == 0
           || wk_ev_where_eval(st, evc + h.where_off, h.nwhere, ev, f, nf);
}

/* The EventFieldList body (Int32 n, n Variants) of the event for the
 * select clauses in evc, into out[cap]; its length. */
static uint32_t
wk_ev_build(struct wk_subs *st, const uint8_t *evc, const struct shm_fo_ev *ev,
            const struct shm_fo_ev_field *f, uint32_t nf, uint8_t *out,
            uint32_t cap)
{
    struct wk_ev_hdr h;
    uint32_t         pos = 4, at = sizeof(h);
    int32_t          n;

    memcpy(&h, evc, sizeof(h));
    n = h.nsel;
    memcpy(out, &n, 4);
    for (uint32_t i = 0; i < h.nsel; i++) {
        struct wk_ev_sel s;
        const char      *path;
        const uint8_t   *var = NULL;
        uint32_t         vl = 0;

        memcpy(&s, evc + at, sizeof(s));
        path = (const char *)evc + at + sizeof(s);
        at += (uint32_t)sizeof(s) + s.plen;
        wk_ev_sel_find(st, &s, path, ev, f, nf, &var, &vl);
        if (var == NULL || pos + vl + (h.nsel - i) > cap) {
            out[pos++] = 0;             /* the null Variant */
            continue;
        }
        memcpy(out + pos, var, vl);
        pos += vl;
    }
    return pos;
}

/* Variant encoders for the overflow event (Part 6 §5.2.2.16). */
static uint32_t
wk_ev_var_nodeid(uint8_t *p, uint16_t id)
{
    p[0] = UA_BT_NODEID;
    p[1] = 0x01;                    /* four-byte form */
    p[2] = 0;
    memcpy(p + 3, &id, 2);
    return 5;
}

static uint32_t
wk_ev_var_str(uint8_t *p, uint8_t bt, const void *s, uint32_t n)
{
    int32_t l = (int32_t)n;

    p[0] = bt;
    memcpy(p + 1, &l, 4);
    memcpy(p + 5, s, n);
    return 5 + n;
}

/* A field of the overflow event's record. */
static uint32_t
wk_ev_put_field(uint8_t *p, const char *path, const uint8_t *var,
                uint32_t vl)
{
    uint16_t pl = (uint16_t)strlen(path);

    memcpy(p, &pl, 2);
    memcpy(p + 2, path, pl);
    memcpy(p + 2 + pl, &vl, 4);
    memcpy(p + 6 + pl, var, vl);
    return 6u + pl + vl;
}

/*
 * The EventQueueOverflowEventType event (Part 5 §6.4.34: SourceNode the
 * Server, SourceName "Internal/EventQueueOverflow") for the select
 * clauses in evc, into out[cap]; its length.
 */
static uint32_t
wk_ev_overflow_body(struct wk_subs *st, const uint8_t *evc, uint8_t *out,
                    uint32_t cap)
{
    return wk_ev_sys_body(st, evc, UA_NS0ID_EVENTQUEUEOVERFLOWEVENTTYPE,
                          "Internal/EventQueueOverflow",
                          "Event queue overflow", out, cap);
}

/*
 * An event of the server's own (type a ns0 EventType with a 16-bit id:
 * EventQueueOverflow, RefreshStart, RefreshEnd), SourceNode the Server,
 * Severity 1, for the select clauses in evc, into out[cap]; its length.
 */
static uint32_t
wk_ev_sys_body(struct wk_subs *st, const uint8_t *evc, uint16_t type,
               const char *source_name, const char *message, uint8_t *out,
               uint32_t cap)
{
    uint8_t                rec[512], v[64];
    struct shm_fo_ev       ev = { st->n_server, wk_ev_lookup_ns0(st, type),
                                  8 };
    struct shm_fo_ev_field f[8];
    uint32_t               pos = sizeof(ev), vl;
    uint64_t               id[2];
    int64_t                now = st->w->now_dt;
    uint16_t               sev = 1;
    const char            *sn = source_name, *msg = message;

    id[0] = ++st->ev_seq ^ st->key[0];
    id[1] = st->key[1] ^ (uint64_t)now;
    memcpy(rec, &ev, sizeof(ev));
    vl = wk_ev_var_str(v, UA_BT_BYTESTRING, id, 16);
    pos += wk_ev_put_field(rec + pos, "0:EventId", v, vl);
    vl = wk_ev_var_nodeid(v, type);
    pos += wk_ev_put_field(rec + pos, "0:EventType", v, vl);
    vl = wk_ev_var_nodeid(v, UA_NS0ID_SERVER);
    pos += wk_ev_put_field(rec + pos, "0:SourceNode", v, vl);
    vl = wk_ev_var_str(v, UA_BT_STRING, sn, (uint32_t)strlen(sn));
    pos += wk_ev_put_field(rec + pos, "0:SourceName", v, vl);
    v[0] = UA_BT_DATETIME;
    memcpy(v + 1, &now, 8);
    pos += wk_ev_put_field(rec + pos, "0:Time", v, 9);
    pos += wk_ev_put_field(rec + pos, "0:ReceiveTime", v, 9);
    v[0] = UA_BT_LOCALIZEDTEXT;
    v[1] = 0x02;                    /* text only */
    vl = wk_ev_var_str(v + 1, 0, msg, (uint32_t)strlen(msg));
    v[1] = 0x02;
    pos += wk_ev_put_field(rec + pos, "0:Message", v, vl + 1);
    v[0] = UA_BT_UINT16;
    memcpy(v + 1, &sev, 2);
    pos += wk_ev_put_field(rec + pos, "0:Severity", v, 3);
    if (shm_fo_ev_parse(rec, pos, &ev, f, 8) != 8)
        return 0;
    return wk_ev_build(st, evc, &ev, f, 8, out, cap);
}

/* Queue the len-byte body at st->tmp; when this fills the queue, with the
 * overflow event's body built at st->tmp + half. */
static void
wk_ev_enqueue(struct wk_subs *st, struct wk_sub *sub, struct wk_mi *mi,
              const uint8_t *evc, uint32_t len, uint32_t half)
{
    uint32_t olen = 0;
    uint8_t *ovf = NULL;

    if (mi->qlen >= mi->qsize + ((mi->flags & WK_MI_OVERFLOW) ? 1u : 0u)
        && !(mi->flags & WK_MI_OVERFLOW)) {
        ovf = st->tmp + half;
        olen = wk_ev_overflow_body(st, evc, ovf, half);
        if (olen == 0)
            ovf = NULL;
    }
    wk_mi_event_enqueue(st, sub, mi, st->tmp, len, ovf, olen, false);
}

void
wk_ev_take(struct wk_subs *st, struct wk_mi *mi, const struct shm_fo_ev *ev,
           const struct shm_fo_ev_field *f, uint32_t nf)
{
    struct wk_sub *sub = &st->subs[mi->sub];
    const uint8_t *evc;
    uint32_t       half = (uint32_t)(st->tmp_cap / 2), len;

    if (mi->mode == UA_MONITORINGMODE_DISABLED
        || !wk_ev_source_ok(st, mi, ev->source))
        return;
    evc = wk_ev_load(st, mi);
    if (evc == NULL)
        return;
    {
        struct wk_ev_hdr h;

        memcpy(&h, evc, sizeof(h));
        if (h.nwhere != 0
            && !wk_ev_where_eval(st, evc + h.where_off, h.nwhere, ev, f, nf))
            return;
    }
    len = wk_ev_build(st, evc, ev, f, nf, st->tmp, half);
    wk_ev_enqueue(st, sub, mi, evc, len, half);
}

void
wk_ev_overflow(struct wk_subs *st, struct wk_mi *mi)
{
    struct wk_sub *sub = &st->subs[mi->sub];
    const uint8_t *evc;
    uint32_t       len;

    if (mi->mode == UA_MONITORINGMODE_DISABLED
        || (mi->flags & WK_MI_OVERFLOW))
        return;
    evc = wk_ev_load(st, mi);
    if (evc == NULL)
        return;
    len = wk_ev_overflow_body(st, evc, st->tmp, (uint32_t)st->tmp_cap);
    if (len != 0)
        wk_mi_event_enqueue(st, sub, mi, st->tmp, len, NULL, 0, true);
}

/* ------------------------------------------------------------------ */
/* the link's handlers (worker/link.h)                                 */
/* ------------------------------------------------------------------ */

bool
wk_ev_id(const struct shm_fo_ev_field *f, uint32_t nf, uint8_t id[16])
{
    for (uint32_t i = 0; i < nf; i++)
        if (f[i].plen == 9 && memcmp(f[i].path, "0:EventId", 9) == 0) {
            /* A ByteString Variant of 16 bytes: type, length, bytes. */
            if (f[i].vlen != 21 || f[i].var[0] != UA_BT_BYTESTRING)
                return false;
            memcpy(id, f[i].var + 5, 16);
            return true;
        }
    return false;
}

void
wk_ev_on_event(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_subs  *st = arg;
    struct shm_fo_ev ev;
    uint32_t         one[2];
    int              nf;

    if (st->evwin_on)
        wk_sub_roam_keep(st, rec, len);     /* a claim is out */
    if (st->ev_head == WK_NIL)
        return;
    nf = shm_fo_ev_parse(rec, len, &ev, st->evf, SHM_FO_EV_FIELDS_MAX);
    if (nf < 0)
        return;                     /* not ours to trust: skipped */
    /* The last one our items saw: packed with them when they move. */
    st->ev_last_set = wk_ev_id(st->evf, (uint32_t)nf, st->ev_last);
    for (uint32_t i = st->ev_head; i != WK_NIL;) {
        const uint32_t *it = wk_list_step(st, &i, one);

        for (uint32_t p = 0; p < WK_CHUNK_ITEMS && it[p] != WK_NIL; p++)
            wk_ev_take(st, &st->items[it[p]], &ev, st->evf, (uint32_t)nf);
    }
}

void
wk_ev_on_events_lost(void *arg)
{
    struct wk_subs *st = arg;
    uint32_t        one[2];

    for (uint32_t i = st->ev_head; i != WK_NIL;) {
        const uint32_t *it = wk_list_step(st, &i, one);

        for (uint32_t p = 0; p < WK_CHUNK_ITEMS && it[p] != WK_NIL; p++)
            wk_ev_overflow(st, &st->items[it[p]]);
    }
}

/* ------------------------------------------------------------------ */
/* ConditionRefresh, ConditionRefresh2 (Part 9 §5.5.7, §5.5.8)         */
/* ------------------------------------------------------------------ */

/* A RefreshStart / RefreshEnd event into mi's queue: the select clauses
 * apply, the where clause does not (control events, like overflow). */
static void
wk_ev_sys(struct wk_subs *st, struct wk_mi *mi, uint16_t type,
          const char *message)
{
    struct wk_sub *sub = &st->subs[mi->sub];
    const uint8_t *evc;
    uint32_t       half = (uint32_t)(st->tmp_cap / 2), len;

    if (mi->mode == UA_MONITORINGMODE_DISABLED)
        return;
    evc = wk_ev_load(st, mi);
    if (evc == NULL)
        return;
    len = wk_ev_sys_body(st, evc, type, "Server", message, st->tmp, half);
    if (len == 0)
        return;
    wk_ev_enqueue(st, sub, mi, evc, len, half);
}

/*
 * The retained conditions (Part 9 §5.5.7), each as the event its
 * variables make now: a condition's variables (broker/alarmnode.h) are
 * the fields of its last event, written by the broker with the very
 * bytes of that event's record, so the worker rebuilds the record from
 * the value slots (shared memory), with no help from the broker.  The
 * conditions are found by a walk of the node store (Objects whose type is
 * a ConditionType) once, at the first ConditionRefresh (the address
 * space does not change while a worker runs): st->conds, one allocation
 * for the worker's life, each condition with its 0:Retain's slot; then
 * each ConditionRefresh is O(conditions), and a condition that is not
 * retained costs the read of that slot alone.
 */
struct wk_ev_rec {
    uint8_t  *buf;
    uint32_t  cap;
    uint32_t  len;
    uint32_t  nfields;
    uint32_t  id_slot;          /* 0:EventId's slot, SHM_NONE */
    uint8_t   id[32];           /* its bytes as read */
    uint32_t  id_len;
    bool      retain;           /* 0:Retain is true */
};

/* Append the field path = var[vlen] (shm/fanout.h format). */
static bool
wk_ev_rec_put(struct wk_ev_rec *r, const char *path, uint32_t plen,
              const uint8_t *var, uint32_t vlen)
{
    uint16_t pl = (uint16_t)plen;
    uint32_t n = 6u + plen + vlen;

    if (r->nfields >= SHM_FO_EV_FIELDS_MAX || plen > SHM_FO_EV_PATH_MAX
        || r->cap - r->len < n)
        return false;
    memcpy(r->buf + r->len, &pl, 2);
    memcpy(r->buf + r->len + 2, path, plen);
    memcpy(r->buf + r->len + 2 + plen, &vlen, 4);
    memmove(r->buf + r->len + 6 + plen, var, vlen);
    r->len += n;
    r->nfields++;
    return true;
}

/* node's Variables (and their children), depth levels, as fields named
 * path + "/ns:Name"; false when the record is full. */
static bool
wk_ev_cond_walk(struct wk_subs *st, uint32_t node, char *path, uint32_t plen,
                int depth, struct wk_ev_rec *r)
{
    const struct shm_nodestore *ns = &st->w->ns;
    const struct shm_node      *n = &ns->nodes[node];
    uint32_t                    hp = shm_nodestore_reftype_of(
        ns, wk_ev_lookup_ns0(st, UA_NS0ID_HASPROPERTY));

    for (uint32_t k = 0; k < n->nrefs; k++) {
        const struct shm_ref  *ref = &ns->refs[n->refs + k];
        const struct shm_node *t;
        const uint8_t         *name;
        uint32_t               nl = 0, pl;
        uint8_t                v[1024];
        struct shm_value       m;
        int                    w;

        if ((ref->flags & SHM_REF_INVERSE) || ref->target >= ns->nnodes
            || (ref->reftype != hp
                && !shm_nodestore_reftype_is(ns, ref->reftype, st->rt_hc)))
            continue;
        t = &ns->nodes[ref->target];
        if (t->node_class != SHM_NC_VARIABLE
            && t->node_class != SHM_NC_OBJECT)
            continue;
        name = shm_nodestore_string(ns, t->browse_name, &nl);
        w = snprintf(path + plen, SHM_FO_EV_PATH_MAX + 1 - plen, "%s%u:",
                     plen != 0 ? "/" : "", (unsigned)t->browse_ns);
        if (name == NULL || w < 0
            || plen + (uint32_t)w + nl > SHM_FO_EV_PATH_MAX)
            continue;
        memcpy(path + plen + (uint32_t)w, name, nl);
        pl = plen + (uint32_t)w + nl;
        if (t->node_class == SHM_NC_VARIABLE && t->u.var.slot != SHM_NONE
            && shm_value_read(&st->w->vals, t->u.var.slot, &m, v,
                              sizeof(v)) == 0
            && m.len > 0) {
            if (!wk_ev_rec_put(r, path, pl, v, m.len))
                return false;
            if (pl == 9 && memcmp(path, "0:EventId", 9) == 0
                && m.len <= sizeof(r->id)) {
                r->id_slot = t->u.var.slot;
                memcpy(r->id, v, m.len);
                r->id_len = m.len;
            } else if (pl == 8 && memcmp(path, "0:Retain", 8) == 0) {
                r->retain = m.len == 2 && v[0] == UA_BT_BOOLEAN && v[1] != 0;
            }
        }
        if (depth > 1
            && !wk_ev_cond_walk(st, ref->target, path, pl, depth - 1, r))
            return false;
    }
    return true;
}

/* The value slot of cond's 0:Retain, SHM_NONE when it has none. */
static uint32_t
wk_ev_cond_retain(const struct wk_subs *st, uint32_t cond)
{
    const struct shm_nodestore *ns = &st->w->ns;
    const struct shm_node      *n = &ns->nodes[cond];

    for (uint32_t k = 0; k < n->nrefs; k++) {
        const struct shm_ref  *ref = &ns->refs[n->refs + k];
        const struct shm_node *t = &ns->nodes[ref->target];
        const uint8_t         *name;
        uint32_t               nl = 0;

        if ((ref->flags & SHM_REF_INVERSE)
            || t->node_class != SHM_NC_VARIABLE || t->browse_ns != 0)
            continue;
        name = shm_nodestore_string(ns, t->browse_name, &nl);
        if (name != NULL && nl == 6 && memcmp(name, "Retain", 6) == 0)
            return t->u.var.slot;
    }
    return SHM_NONE;
}

/*
 * Condition cond's event record (shm/fanout.h) from its variables into
 * rec[cap], with its ConditionId (retain: its 0:Retain's slot, read first;
 * SHM_NONE: unknown); its length, 0 when it is not retained
 * (or kept changing, or does not fit).
 */
static uint32_t
wk_ev_cond_record(struct wk_subs *st, uint32_t cond, uint32_t retain,
                  uint8_t *rec, uint32_t cap)
{
    const struct shm_nodestore *ns = &st->w->ns;
    const struct shm_node      *n = &ns->nodes[cond];
    uint32_t                    hcond = shm_nodestore_reftype_of(
        ns, wk_ev_lookup_ns0(st, UA_NS0ID_HASCONDITION));
    struct shm_fo_ev            h = { SHM_NONE, n->type_def, 0 };
    char                        path[SHM_FO_EV_PATH_MAX + 1];

    /* Not retained (most conditions most of the time): nothing to
     * walk. */
    if (retain != SHM_NONE) {
        struct shm_value m;
        uint8_t          v[8];

        if (shm_value_read(&st->w->vals, retain, &m, v, sizeof(v)) == 0
            && !(m.len == 2 && v[0] == UA_BT_BOOLEAN && v[1] != 0))
            return 0;
    }
    /* The source: whoever HasCondition it. */
    for (uint32_t k = 0; k < n->nrefs; k++) {
        const struct shm_ref *ref = &ns->refs[n->refs + k];

        if ((ref->flags & SHM_REF_INVERSE) && ref->reftype == hcond) {
            h.source = ref->target;
            break;
        }
    }
    for (int tries = 0; tries < WK_EV_COND_TRIES; tries++) {
        struct wk_ev_rec r = { rec, cap, sizeof(h), 0, SHM_NONE, { 0 }, 0,
                               false };
        struct ua_nodeid   nid;
        struct ua_variant  var;
        struct shm_value   m;
        uint8_t            v[512], idv[32];
        size_t             vl;

        if (!wk_ev_cond_walk(st, cond, path, 0, WK_EV_COND_DEPTH, &r)
            || !r.retain || r.id_slot == SHM_NONE)
            return 0;
        /* The ConditionId: the condition's NodeId as a Variant. */
        wk_node_id(st->w, cond, &nid);
        ua_variant_set_scalar(&var, &nid, UA_BT_NODEID);
        if (ua_encode(&var, &ua_types[UA_TYPE_VARIANT], v, sizeof(v), &vl)
            != UA_GOOD)
            vl = 0;
        if (vl != 0
            && !wk_ev_rec_put(&r, WK_EV_CONDITION_ID,
                              sizeof(WK_EV_CONDITION_ID) - 1, v,
                              (uint32_t)vl))
            return 0;
        /* The broker writes 0:EventId first of a new event: unchanged
         * after the walk, the walk saw one event's fields. */
        if (shm_value_read(&st->w->vals, r.id_slot, &m, idv, sizeof(idv))
                == 0
            && m.len == r.id_len && memcmp(idv, r.id, m.len) == 0) {
            h.nfields = r.nfields;
            memcpy(rec, &h, sizeof(h));
            return r.len;
        }
    }
    return 0;
}

/* Is node i a condition (an Object whose type is a subtype of ct)? */
static bool
wk_ev_is_cond(const struct shm_nodestore *ns, uint32_t i, uint32_t ct)
{
    const struct shm_node *n = &ns->nodes[i];

    return n->node_class == SHM_NC_OBJECT && n->type_def != SHM_NONE
           && n->type_def != ct
           && shm_nodestore_is_subtype(ns, n->type_def, ct);
}

/* st->conds from a walk of the node store, once; false when it cannot
 * be kept (no memory: each refresh walks the store then). */
static bool
wk_ev_conds(struct wk_subs *st, uint32_t ct)
{
    const struct shm_nodestore *ns = &st->w->ns;
    uint32_t                    n = 0;

    if (st->conds_known)
        return true;
    for (uint32_t i = 0; i < ns->nnodes; i++)
        n += wk_ev_is_cond(ns, i, ct);
    st->conds = wk_alloc(st->w, ((size_t)n + 1) * sizeof(*st->conds));
    if (st->conds == NULL)
        return false;
    st->nconds = 0;
    for (uint32_t i = 0; i < ns->nnodes && st->nconds < n; i++)
        if (wk_ev_is_cond(ns, i, ct)) {
            st->conds[st->nconds][0] = i;
            st->conds[st->nconds++][1] = wk_ev_cond_retain(st, i);
        }
    st->conds_known = true;
    return true;
}

/* Each retained condition's event into mi (its filter applies). */
static void
wk_ev_cond_refresh(struct wk_subs *st, struct wk_mi *mi)
{
    const struct shm_nodestore *ns = &st->w->ns;
    uint32_t                    ct = wk_ev_lookup_ns0(st,
                                                      UA_NS0ID_CONDITIONTYPE);
    uint8_t                     rec[WK_EV_COND_REC];
    bool                        list;
    uint32_t                    n;

    if (ct == SHM_NONE)
        return;
    list = wk_ev_conds(st, ct);
    n = list ? st->nconds : ns->nnodes;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t         i = list ? st->conds[k][0] : k;
        struct shm_fo_ev ev;
        uint32_t         len;
        int              nf;

        if (!list && !wk_ev_is_cond(ns, i, ct))
            continue;
        len = wk_ev_cond_record(st, i, list ? st->conds[k][1] : SHM_NONE,
                                rec, sizeof(rec));
        if (len == 0)
            continue;
        nf = shm_fo_ev_parse(rec, len, &ev, st->evf, SHM_FO_EV_FIELDS_MAX);
        if (nf > 0)
            wk_ev_take(st, mi, &ev, st->evf, (uint32_t)nf);
    }
}

/* want scalar UInt32 input arguments into ids (Call's statuses). */
static ua_status
wk_ev_refresh_args(struct wk_svc_ctx *ctx,
                   const struct ua_call_method_request *m,
                   struct ua_call_method_result *r, uint32_t *ids,
                   int32_t want)
{
    int32_t na = m->n_input_arguments > 0 ? m->n_input_arguments : 0;
    bool    bad = false;

    if (na < want)
        return UA_BAD_ARGUMENTS_MISSING;
    if (na > want)
        return UA_BAD_TOO_MANY_ARGUMENTS;
    r->input_argument_results = ua_arena_alloc(ctx->arena,
                                               (size_t)na * sizeof(ua_status));
    if (r->input_argument_results == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    for (int32_t k = 0; k < na; k++) {
        const struct ua_variant *a = &m->input_arguments[k];

        r->input_argument_results[k] = UA_GOOD;
        if (a->type != UA_BT_UINT32 || a->is_array || a->data == NULL) {
            r->input_argument_results[k] = UA_BAD_TYPE_MISMATCH;
            bad = true;
            continue;
        }
        memcpy(&ids[k], a->data, 4);
    }
    if (bad) {
        r->n_input_argument_results = na;
        return UA_BAD_INVALID_ARGUMENT;
    }
    r->input_argument_results = NULL;
    return UA_GOOD;
}

void
wk_ev_refresh_call(void *arg, struct wk_svc_ctx *ctx,
                   const struct ua_call_method_request *m,
                   struct ua_call_method_result *r)
{
    struct wk_subs *st;
    struct wk_sub  *sub;
    struct wk_mi   *only = NULL;
    uint32_t        ids[2] = { 0, 0 };
    bool            two;
    ua_status       s;

    (void)arg;
    two = m->method_id.id.num == UA_NS0ID_CONDITIONTYPE_CONDITIONREFRESH2;
    s = wk_ev_refresh_args(ctx, m, r, ids, two ? 2 : 1);
    if (s != UA_GOOD) {
        r->status_code = s;
        return;
    }
    st = ctx->w->subs;
    sub = st != NULL ? wk_sub_find(st, ids[0]) : NULL;
    if (sub == NULL) {
        r->status_code = UA_BAD_SUBSCRIPTION_ID_INVALID;
        return;
    }
    if (wk_sub_of_session(st, ctx->session, ids[0]) == NULL) {
        r->status_code = UA_BAD_USER_ACCESS_DENIED;
        return;
    }
    if (two) {
        only = wk_mi_find(st, sub, ids[1]);
        if (only == NULL || !(only->flags & WK_MI_EVENT)) {
            r->status_code = UA_BAD_MONITORED_ITEM_ID_INVALID;
            return;
        }
    }
    wk_sub_touch(st, sub);
    /* RefreshStart, the retained conditions, RefreshEnd, into each event
     * item of the subscription (or the one). */
    for (uint32_t i = sub->ihead; i != WK_NIL;) {
        struct wk_mi *mi = &st->items[i];

        i = mi->snext;
        if (!(mi->flags & WK_MI_EVENT) || (only != NULL && mi != only))
            continue;
        wk_ev_sys(st, mi, UA_NS0ID_REFRESHSTARTEVENTTYPE,
                  "ConditionRefresh started");
        wk_ev_cond_refresh(st, mi);
        wk_ev_sys(st, mi, UA_NS0ID_REFRESHENDEVENTTYPE,
                  "ConditionRefresh ended");
    }
    r->status_code = UA_GOOD;
}
