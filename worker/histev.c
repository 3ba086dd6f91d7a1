/*
 * worker/histev.c: the historian's event recorder (histev.h).
 *
 * The historian sets its event-interest bit (worker/link.h) like a worker
 * with an event item, so the broker's fan-out hands it every event record
 * exactly as encoded once (shm/fanout.h SHM_FO_EVENT_SLOT).  Each record
 * is copied into a batch, unchanged, with:
 *
 *   Time       its 0:Time field (a DateTime Variant); the broker gives
 *              every event one (broker/event.c), else the time it came
 *   id         hs_events_id() of its 0:EventId (a ByteString Variant)
 *   notifiers  the keys of the notifiers that show it besides the Server
 *              (which shows every event): its source and every node that
 *              reaches the source by forward HasEventSource (HasNotifier
 *              is one) or HasComponent references in at most
 *              WK_HISTEV_DEPTH hops -- the rule a live event item applies
 *              (worker/monitem_event.c) -- that is an Object or View with
 *              the HistoryRead bit in its EventNotifier (broker/addrspace.c
 *              sets it on every event notifier when history keeps events)
 *
 * The batch goes to the store in one write transaction each time the
 * historian writes its values (every history.flush_ms), or when it is
 * full.  A full store drops the batch and counts it (the historian logs
 * and resumes after its retention made room).  Events the broker could
 * not deliver are counted (hist_events_lost in the historian's row).
 *
 * Single-threaded on the historian's loop; allocation at open only.
 */
#include "histev.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hist/events.h"
#include "node.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "shm/fanout.h"
#include "shm/log.h"
#include "shm/nodestore.h"

#define WK_HISTEV_DEPTH     4u          /* hops, as a live event item */
#define WK_HISTEV_WALK_MAX  64u         /* nodes one walk visits */
#define WK_HISTEV_BATCH_MAX 4096u       /* events one transaction takes */
#define WK_HISTEV_BUF       (4u << 20)  /* record bytes of a batch */
#define WK_HISTEV_SEC       10000000ll  /* DateTime ticks */

struct wk_histev {
    struct wk_worker      *w;
    struct hs_store       *s;
    struct hs_events      *ev;
    uint32_t               rt_hes, rt_hc;   /* reftypes, SHM_NONE */
    uint32_t               n_server;
    int64_t                retention;       /* ticks, 0: none */
    uint64_t               max_bytes;
    struct hs_ev_in       *in;
    uint64_t              *keys;            /* cap x HS_EV_NOTIFIERS_MAX */
    uint32_t               n, cap;
    uint8_t               *buf;
    size_t                 used;
    bool                   full;            /* logged */
    uint64_t               stored, dropped, lost, pruned;
    struct shm_fo_ev_field f[SHM_FO_EV_FIELDS_MAX];
    uint32_t               walk[WK_HISTEV_WALK_MAX];
};

static uint32_t wk_histev_ns0(struct wk_histev *he, uint32_t id);
static bool wk_histev_up(const struct wk_histev *he, uint32_t node);
static uint32_t wk_histev_notifiers(struct wk_histev *he, uint32_t source,
                                    uint64_t *keys);
static int64_t wk_histev_time(const struct shm_fo_ev_field *f, int nf,
                              int64_t now);
static uint64_t wk_histev_id(const struct shm_fo_ev_field *f, int nf);

static uint32_t
wk_histev_ns0(struct wk_histev *he, uint32_t id)
{
    struct ua_nodeid n = ua_nodeid_num(0, id);

    return wk_node_lookup(he->w, &n);
}

struct wk_histev *
wk_histev_open(struct wk_worker *w, struct hs_store *s, uint32_t batch,
               uint32_t retention_s, uint32_t max_mb)
{
    struct wk_histev *he = calloc(1, sizeof(*he));
    char              err[256];

    if (he == NULL) {
        shm_log(SHM_LOG_ERROR, "event history: out of memory");
        return NULL;
    }
    he->w = w;
    he->s = s;
    he->retention = (int64_t)retention_s * WK_HISTEV_SEC;
    he->max_bytes = (uint64_t)max_mb << 20;
    he->cap = batch < WK_HISTEV_BATCH_MAX ? batch : WK_HISTEV_BATCH_MAX;
    if (he->cap < 1)
        he->cap = 1;
    he->n_server = wk_histev_ns0(he, UA_NS0ID_SERVER);
    he->rt_hes = shm_nodestore_reftype_of(
        &w->ns, wk_histev_ns0(he, UA_NS0ID_HASEVENTSOURCE));
    he->rt_hc = shm_nodestore_reftype_of(
        &w->ns, wk_histev_ns0(he, UA_NS0ID_HASCOMPONENT));
    he->in = calloc(he->cap, sizeof(*he->in));
    he->keys = calloc((size_t)he->cap * HS_EV_NOTIFIERS_MAX,
                      sizeof(*he->keys));
    he->buf = malloc(WK_HISTEV_BUF);
    he->ev = hs_events_open(s, err, sizeof(err));
    if (he->in == NULL || he->keys == NULL || he->buf == NULL
        || he->ev == NULL) {
        shm_log(SHM_LOG_ERROR, "event history: %s",
                he->ev == NULL ? err : "out of memory");
        wk_histev_close(he);
        return NULL;
    }
    return he;
}

void
wk_histev_close(struct wk_histev *he)
{
    if (he == NULL)
        return;
    hs_events_close(he->ev);
    free(he->in);
    free(he->keys);
    free(he->buf);
    free(he);
}

/* Is reftype one a notifier reaches its sources by? */
static bool
wk_histev_up(const struct wk_histev *he, uint32_t reftype)
{
    const struct shm_nodestore *ns = &he->w->ns;

    return (he->rt_hes != SHM_NONE
            && shm_nodestore_reftype_is(ns, reftype, he->rt_hes))
           || (he->rt_hc != SHM_NONE
               && shm_nodestore_reftype_is(ns, reftype, he->rt_hc));
}

/*
 * The keys of the notifiers besides the Server that show an event of
 * source: source and the nodes above it (inverse HasEventSource and
 * HasComponent, WK_HISTEV_DEPTH hops) with the HistoryRead bit in their
 * EventNotifier.  Their number (at most HS_EV_NOTIFIERS_MAX).
 */
static uint32_t
wk_histev_notifiers(struct wk_histev *he, uint32_t source, uint64_t *keys)
{
    const struct shm_nodestore *ns = &he->w->ns;
    uint32_t                    nw = 0, lo = 0, nk = 0;

    if (source >= ns->nnodes)
        return 0;
    he->walk[nw++] = source;
    for (uint32_t d = 0; d < WK_HISTEV_DEPTH; d++) {
        uint32_t hi = nw;

        for (uint32_t i = lo; i < hi; i++) {
            const struct shm_node *n = &ns->nodes[he->walk[i]];

            for (uint32_t k = 0; k < n->nrefs; k++) {
                const struct shm_ref *r = &ns->refs[n->refs + k];
                bool                  seen = false;

                if (!(r->flags & SHM_REF_INVERSE) || r->target >= ns->nnodes
                    || !wk_histev_up(he, r->reftype))
                    continue;
                for (uint32_t j = 0; j < nw && !seen; j++)
                    seen = he->walk[j] == r->target;
                if (!seen && nw < WK_HISTEV_WALK_MAX)
                    he->walk[nw++] = r->target;
            }
        }
        lo = hi;
    }
    for (uint32_t i = 0; i < nw && nk < HS_EV_NOTIFIERS_MAX; i++) {
        const struct shm_node *n = &ns->nodes[he->walk[i]];
        struct ua_nodeid       id;
        uint8_t                idb[4200];
        size_t                 len;

        if (he->walk[i] == he->n_server
            || (n->node_class != SHM_NC_OBJECT
                && n->node_class != SHM_NC_VIEW)
            || !(n->event_notifier & UA_EVENTNOTIFIERTYPE_HISTORYREAD))
            continue;
        wk_node_id(he->w, he->walk[i], &id);
        if (ua_encode(&id, &ua_types[UA_TYPE_NODEID], idb, sizeof(idb), &len)
            != UA_GOOD)
            continue;
        keys[nk++] = hs_events_notifier(idb, len);
    }
    return nk;
}

/* The event's 0:Time, else now. */
static int64_t
wk_histev_time(const struct shm_fo_ev_field *f, int nf, int64_t now)
{
    for (int i = 0; i < nf; i++)
        if (f[i].plen == 6 && memcmp(f[i].path, "0:Time", 6) == 0
            && f[i].vlen == 9 && f[i].var[0] == UA_BT_DATETIME) {
            int64_t t;

            memcpy(&t, f[i].var + 1, 8);
            return t >= 0 ? t : now;
        }
    return now;
}

/* hs_events_id() of the event's 0:EventId (its Variant bytes when it is
 * not a ByteString; 0 when it has none). */
static uint64_t
wk_histev_id(const struct shm_fo_ev_field *f, int nf)
{
    for (int i = 0; i < nf; i++) {
        int32_t l;

        if (f[i].plen != 9 || memcmp(f[i].path, "0:EventId", 9) != 0)
            continue;
        if (f[i].vlen >= 5 && f[i].var[0] == UA_BT_BYTESTRING) {
            memcpy(&l, f[i].var + 1, 4);
            if (l >= 0 && (uint32_t)l <= f[i].vlen - 5)
                return hs_events_id(f[i].var + 5, (size_t)l);
        }
        return hs_events_id(f[i].var, f[i].vlen);
    }
    return 0;
}

void
wk_histev_on_event(void *arg, const uint8_t *rec, uint32_t len)
{
    struct wk_histev *he = arg;
    struct shm_fo_ev  ev;
    struct hs_ev_in  *in;
    int               nf;

    nf = shm_fo_ev_parse(rec, len, &ev, he->f, SHM_FO_EV_FIELDS_MAX);
    if (nf < 0 || len > WK_HISTEV_BUF) {
        he->dropped++;
        return;
    }
    if (he->n == he->cap || he->used + len > WK_HISTEV_BUF)
        wk_histev_flush(he);
    in = &he->in[he->n];
    memcpy(he->buf + he->used, rec, len);
    in->rec = he->buf + he->used;
    in->len = len;
    in->time = wk_histev_time(he->f, nf, he->w->now_dt);
    in->id = wk_histev_id(he->f, nf);
    in->notifiers = he->keys + (size_t)he->n * HS_EV_NOTIFIERS_MAX;
    in->nnotifiers = wk_histev_notifiers(he, ev.source,
                                         he->keys + (size_t)he->n
                                                        * HS_EV_NOTIFIERS_MAX);
    he->used += len;
    he->n++;
}

void
wk_histev_on_lost(struct wk_histev *he, uint64_t n)
{
    he->lost += n;
}

bool
wk_histev_flush(struct wk_histev *he)
{
    int rc;

    if (he == NULL || he->n == 0)
        return false;
    if (hs_store_full(he->s)) {
        he->dropped += he->n;
    } else if ((rc = hs_events_append(he->ev, he->in, he->n)) == 0) {
        he->stored += he->n;
        he->full = false;
    } else {
        he->dropped += he->n;
        if (rc != -ENOSPC)
            shm_log(SHM_LOG_ERROR, "event history: %s; %u events dropped",
                    hs_store_error(he->s), he->n);
        else if (!he->full)
            shm_log(SHM_LOG_ERROR, "history store full (%s): events not "
                    "kept until retention makes room (history.event_max_mb, "
                    "history.map_mb, the disk)", hs_store_error(he->s));
        he->full = rc == -ENOSPC;
    }
    he->n = 0;
    he->used = 0;
    return true;
}

void
wk_histev_prune(struct wk_histev *he, int64_t now)
{
    uint64_t n;

    wk_histev_flush(he);
    if (hs_events_prune(he->ev, now, he->retention, he->max_bytes, &n)
        != 0) {
        shm_log(SHM_LOG_ERROR, "event history retention: %s",
                hs_store_error(he->s));
        return;
    }
    he->pruned += n;
    if (n > 0)
        shm_log(SHM_LOG_INFO, "event history retention dropped %llu events",
                (unsigned long long)n);
}

void
wk_histev_publish(struct wk_histev *he, struct shm_worker *r)
{
    struct hs_ev_totals t;

#define WK_HISTEV_SET(f, v) \
    atomic_store_explicit(&r->f, v, memory_order_relaxed)
    WK_HISTEV_SET(hist_events_stored, he->stored);
    WK_HISTEV_SET(hist_events_dropped, he->dropped);
    WK_HISTEV_SET(hist_events_lost, he->lost);
    if (hs_events_totals(he->ev, &t) == 0) {
        WK_HISTEV_SET(hist_events, t.events);
        WK_HISTEV_SET(hist_event_bytes, t.bytes);
        WK_HISTEV_SET(hist_events_retention_dropped, t.dropped);
    }
#undef WK_HISTEV_SET
}
