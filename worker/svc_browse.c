/*
 * worker/svc_browse.c: the View service set (Part 4 §5.9): Browse,
 * BrowseNext, TranslateBrowsePathsToNodeIds, RegisterNodes and
 * UnregisterNodes, straight from the shared-memory node store.
 *
 * Browse walks the node's reference slice (both directions are stored at
 * each end) and fills ReferenceDescriptions that point into the store: no
 * string is copied.  A page holds at most requestedMaxReferencesPerNode
 * references (0: the server decides), never more than
 * conf->max_references_per_node.  When another matching reference remains,
 * the page ends with a continuation point: the session's, at most
 * conf->max_browse_continuation_points, each remembering where the walk
 * stopped (worker/session.h).  None free: BadNoContinuationPoints and no
 * references for that node (the client releases points and browses again).
 * BrowseNext continues a point under a new id (the old bytes are dead), or
 * releases it; bytes that name no point of this session are
 * BadContinuationPointInvalid (forged, released, another session's).
 *
 * Service results: a view other than the null NodeId BadViewIdUnknown (we
 * have no Views); no operations BadNothingToDo; more than the operation
 * limit (conf->max_nodes_per_browse for Browse and BrowseNext,
 * max_nodes_per_translate, max_nodes_per_register_nodes)
 * BadTooManyOperations.
 *
 * Browse operation results: BadBrowseDirectionInvalid (not Forward,
 * Inverse or Both), BadNodeIdUnknown, BadReferenceTypeIdInvalid (unknown or
 * not a ReferenceType), BadNoContinuationPoints.
 *
 * TranslateBrowsePathsToNodeIds, per path, iteratively (no recursion, work
 * bounded by path length x WK_TRANSLATE_MAX x references):
 *   BadNodeIdUnknown      startingNode unknown
 *   BadNothingToDo        empty RelativePath (§5.9.4.4)
 *   BadTooManyOperations  more than conf->max_translate_path_elements
 *                         elements (docs/security.md case 67; §5.9.4.4
 *                         would also allow BadQueryTooComplex: we follow the
 *                         operation-limit reading so clients see the same
 *                         code as for too many paths)
 *   BadBrowseNameInvalid  an element without targetName (§5.9.4.2: every
 *                         element of a Translate path needs one)
 *   BadTooManyMatches     more than WK_TRANSLATE_MAX nodes at one step
 *   BadQueryTooComplex    the request's scan budget is spent (below)
 *   BadNoMatch            nothing matches (an unknown referenceTypeId
 *                         matches nothing)
 * Targets are local, so remainingPathIndex is always UINT32_MAX.
 *
 * Bounded work: one request examines at most as many references as the
 * largest Browse may return, conf->max_nodes_per_browse x
 * conf->max_references_per_node (1M by default), kept within
 * [WK_SVC_SCAN_MIN, WK_SVC_SCAN_MAX]: a folder can hold millions (Demo/Vars
 * at scale) and the worker's loop must not stall on one request.  A
 * Browse page that runs out ends early with a continuation point, as Part 4
 * §5.9.2 allows (fewer references than asked, more to come); BrowseNext
 * resumes where it stopped, so every call makes progress.  A Translate
 * path that would run out is BadQueryTooComplex (§5.9.4.4: "requires too
 * many resources") and spends nothing.
 *
 * The Browse cache (conf->browse_cache_kb per worker, allocated at start,
 * direct-mapped entries of WK_BCACHE_ENTRY bytes): a Browse operation whose
 * result is whole (every matching reference, no continuation point) leaves
 * its ReferenceDescriptions encoded in the entry of its parameters (node,
 * direction, referenceTypeId, includeSubtypes, nodeClassMask, resultMask).
 * The next Browse with the same parameters, a page size that holds them and
 * scan budget for the node's references copies those bytes into the
 * request arena as a UA_IDTYPE_ENCODED array (proto/types.h) and spends
 * the same budget the walk would have.  The node store never changes after
 * the broker built it and nothing in a ReferenceDescription depends on the
 * session, so an entry never goes stale.  A result larger than an entry is
 * not kept; BrowseNext never uses the cache.
 *
 * RegisterNodes returns the NodeIds it was given (Part 4 §5.9.5 allows it:
 * our lookups are already one hash probe) and counts them per session;
 * nothing is stored, so there is nothing to limit beyond the per-call
 * operation limit.
 */
#include "svc_browse.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "node.h"
#include "proto/codec.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"
#include "session.h"
#include "svc.h"

#define WK_TRANSLATE_MAX 256        /* nodes per step; Part 4: >= 10 */
#define WK_SVC_SCAN_MIN  (1u << 16) /* references examined per request */
#define WK_SVC_SCAN_MAX  (1u << 24)
#define WK_BCACHE_ENTRY  4096u      /* bytes per cache entry, header too */
#define WK_BCACHE_DESC_MIN 18u      /* smallest encoded ReferenceDescription */

/*
 * One cached Browse result: the operation's parameters, then its
 * ReferenceDescriptions as encoded on the wire (without the array length).
 */
struct wk_bcache_entry {
    uint32_t node;              /* SHM_NONE: empty */
    uint32_t reftype;           /* SHM_NONE: any */
    uint32_t node_class_mask;
    uint32_t result_mask;       /* & UA_BROWSERESULTMASK_ALL */
    uint8_t  direction;
    uint8_t  include_subtypes;  /* false when reftype is SHM_NONE */
    uint8_t  pad[2];
    uint32_t nrefs;             /* descriptions in bytes[] */
    uint32_t len;               /* bytes used */
    uint32_t pad2;
    uint8_t  bytes[WK_BCACHE_ENTRY - 32];
};
static_assert(sizeof(struct wk_bcache_entry) == WK_BCACHE_ENTRY,
              "wk_bcache_entry size");

struct wk_bcache {
    struct wk_bcache_entry *e;
    uint32_t                mask;       /* entries - 1 */
    uint64_t                hits;
};

static ua_status wk_svc_browse_one(struct wk_svc_ctx *ctx,
                                   const struct ua_browse_description *bd,
                                   uint32_t max, uint32_t *budget,
                                   struct ua_browse_result *res);
static bool wk_svc_ref_match(const struct wk_worker *w,
                             const struct wk_session_cp *c,
                             const struct shm_ref *r);
static inline void wk_svc_ref_xid(const struct wk_worker *w, uint32_t i,
                                  struct ua_expandednodeid *x);
static void wk_svc_ref_fill(const struct wk_worker *w, uint32_t result_mask,
                            const struct shm_ref *r,
                            struct ua_reference_description *d);
static ua_status wk_svc_browse_page(struct wk_svc_ctx *ctx,
                                    struct wk_session_cp *c, uint32_t *budget,
                                    struct ua_browse_result *res, bool *more);
static void wk_svc_bcache_key(const struct wk_session_cp *c,
                              struct wk_bcache_entry *k);
static struct wk_bcache_entry *wk_svc_bcache_slot(struct wk_bcache *bc,
                                                  const struct wk_bcache_entry
                                                      *k);
static bool wk_svc_bcache_get(struct wk_svc_ctx *ctx,
                              const struct wk_session_cp *c,
                              uint32_t *budget, struct ua_browse_result *res);
static void wk_svc_bcache_put(struct wk_svc_ctx *ctx,
                              const struct wk_session_cp *c,
                              const struct ua_browse_result *res);
static ua_status wk_svc_cp_out(struct wk_svc_ctx *ctx,
                               const struct wk_session_cp *c,
                               struct ua_browse_result *res);
static ua_status wk_svc_translate_one(struct wk_svc_ctx *ctx,
                                      const struct ua_browse_path *bp,
                                      uint32_t *budget,
                                      struct ua_browse_path_result *res);
static bool wk_svc_name_eq(const struct wk_worker *w, uint32_t i,
                           const struct ua_qualifiedname *q);
static ua_status wk_svc_ops_check(int32_t n, uint32_t limit);
static uint32_t wk_svc_scan_budget(const struct shm_config *c);
static int wk_svc_browse_cache_init(struct wk_worker *w);
static void wk_svc_browse(struct wk_svc_ctx *ctx, const void *req,
                          void *resp);
static void wk_svc_browse_next(struct wk_svc_ctx *ctx, const void *req,
                               void *resp);
static void wk_svc_translate(struct wk_svc_ctx *ctx, const void *req,
                             void *resp);
static void wk_svc_register_nodes(struct wk_svc_ctx *ctx, const void *req,
                                  void *resp);
static void wk_svc_unregister_nodes(struct wk_svc_ctx *ctx, const void *req,
                                    void *resp);

/* Service-level checks on an operation count. */
static ua_status
wk_svc_ops_check(int32_t n, uint32_t limit)
{
    if (n <= 0)
        return UA_BAD_NOTHING_TO_DO;
    if ((uint32_t)n > limit)
        return UA_BAD_TOO_MANY_OPERATIONS;
    return UA_GOOD;
}

/* References one request may examine (see the file comment). */
static uint32_t
wk_svc_scan_budget(const struct shm_config *c)
{
    uint64_t b = (uint64_t)c->max_nodes_per_browse
                 * c->max_references_per_node;

    if (b < WK_SVC_SCAN_MIN)
        return WK_SVC_SCAN_MIN;
    return b > WK_SVC_SCAN_MAX ? WK_SVC_SCAN_MAX : (uint32_t)b;
}

/* ------------------------------------------------------------------ */
/* Browse, BrowseNext                                                  */
/* ------------------------------------------------------------------ */

static bool
wk_svc_ref_match(const struct wk_worker *w, const struct wk_session_cp *c,
                 const struct shm_ref *r)
{
    bool inverse = (r->flags & SHM_REF_INVERSE) != 0;

    if (r->target >= w->ns.nnodes)
        return false;
    if ((c->direction == UA_BROWSEDIRECTION_FORWARD && inverse)
        || (c->direction == UA_BROWSEDIRECTION_INVERSE && !inverse))
        return false;
    if (c->reftype != SHM_NONE) {
        if (c->include_subtypes
                ? !shm_nodestore_reftype_is(&w->ns, r->reftype, c->reftype)
                : r->reftype != c->reftype)
            return false;
    }
    if (c->node_class_mask != 0
        && !(w->ns.nodes[r->target].node_class & c->node_class_mask))
        return false;
    return true;
}

/*
 * Node i's NodeId into x, a local ExpandedNodeId zeroed but for its null
 * URI; numeric ones (all of ns0) without a call.
 */
static inline void
wk_svc_ref_xid(const struct wk_worker *w, uint32_t i,
               struct ua_expandednodeid *x)
{
    const struct shm_node *n = &w->ns.nodes[i];

    if (n->idtype != SHM_ID_NUMERIC) {
        wk_node_expanded(w, i, x);
        return;
    }
    x->node.ns = n->ns;
    x->node.idtype = UA_IDTYPE_NUMERIC;
    x->node.id.num = n->id;
}

/* One ReferenceDescription; fields outside resultMask stay null. */
static void
wk_svc_ref_fill(const struct wk_worker *w, uint32_t result_mask,
                const struct shm_ref *r, struct ua_reference_description *d)
{
    const struct shm_node *t = &w->ns.nodes[r->target];

    memset(d, 0, sizeof(*d));
    d->browse_name.name.len = -1;
    d->display_name.locale.len = -1;
    d->display_name.text.len = -1;
    d->node_id.ns_uri.len = -1;
    d->type_definition.ns_uri.len = -1;
    wk_svc_ref_xid(w, r->target, &d->node_id);
    if ((result_mask & UA_BROWSERESULTMASK_REFERENCETYPEID)
        && r->reftype < w->ns.reftypes->n)
        wk_node_id(w, w->ns.reftypes->node[r->reftype],
                       &d->reference_type_id);
    if (result_mask & UA_BROWSERESULTMASK_ISFORWARD)
        d->is_forward = !(r->flags & SHM_REF_INVERSE);
    if (result_mask & UA_BROWSERESULTMASK_NODECLASS)
        d->node_class = t->node_class;
    if (result_mask & UA_BROWSERESULTMASK_BROWSENAME)
        wk_node_browse_name(w, r->target, &d->browse_name);
    if (result_mask & UA_BROWSERESULTMASK_DISPLAYNAME)
        wk_node_localized(w, t->dn_text, t->dn_locale, &d->display_name);
    /* Part 4 ReferenceDescription: a TypeDefinition only for Objects and
     * Variables, a null NodeId for the rest. */
    if ((result_mask & UA_BROWSERESULTMASK_TYPEDEFINITION)
        && (t->node_class == SHM_NC_OBJECT
            || t->node_class == SHM_NC_VARIABLE)
        && t->type_def < w->ns.nnodes)
        wk_svc_ref_xid(w, t->type_def, &d->type_definition);
}

/*
 * One page from c->next on: at most c->max references, examining at most
 * *budget references (decremented).  Afterwards c->next is where the next
 * page starts and *more tells whether one is needed: a matching reference
 * is left, or the budget ran out before the end.
 */
static ua_status
wk_svc_browse_page(struct wk_svc_ctx *ctx, struct wk_session_cp *c,
                   uint32_t *budget, struct ua_browse_result *res,
                   bool *more)
{
    const struct wk_worker *w = ctx->w;
    const struct shm_node  *n = &w->ns.nodes[c->node];
    const struct shm_ref   *refs;
    uint32_t                j = c->next, k = 0, cap;

    *more = false;
    res->n_references = 0;
    res->references = NULL;
    if (n->refs > w->ns.nrefs || n->nrefs > w->ns.nrefs - n->refs)
        return UA_BAD_INTERNAL_ERROR;
    refs = &w->ns.refs[n->refs];
    cap = n->nrefs > j ? n->nrefs - j : 0;
    if (cap > c->max)
        cap = c->max;
    if (cap > 0) {
        res->references = ua_arena_alloc(ctx->arena,
                                         (size_t)cap
                                         * sizeof(*res->references));
        if (res->references == NULL)
            return UA_BAD_OUT_OF_MEMORY;
    }
    for (; j < n->nrefs && k < cap && *budget > 0; j++, (*budget)--) {
        if (wk_svc_ref_match(w, c, &refs[j]))
            wk_svc_ref_fill(w, c->result_mask, &refs[j],
                            &res->references[k++]);
    }
    while (j < n->nrefs && *budget > 0 && !wk_svc_ref_match(w, c, &refs[j])) {
        j++;
        (*budget)--;
    }
    c->next = j;
    *more = j < n->nrefs;
    res->n_references = (int32_t)k;
    return UA_GOOD;
}

/* ------------------------------------------------------------------ */
/* The Browse cache (see the file comment)                             */
/* ------------------------------------------------------------------ */

int
wk_svc_browse_init(struct wk_worker *w)
{
    static const struct {
        uint32_t  id;
        wk_svc_fn fn;
    } reg[] = {
        { UA_NS0ID_BROWSEREQUEST_ENCODING_DEFAULTBINARY, wk_svc_browse },
        { UA_NS0ID_BROWSENEXTREQUEST_ENCODING_DEFAULTBINARY,
          wk_svc_browse_next },
        { UA_NS0ID_TRANSLATEBROWSEPATHSTONODEIDSREQUEST_ENCODING_DEFAULTBINARY,
          wk_svc_translate },
        { UA_NS0ID_REGISTERNODESREQUEST_ENCODING_DEFAULTBINARY,
          wk_svc_register_nodes },
        { UA_NS0ID_UNREGISTERNODESREQUEST_ENCODING_DEFAULTBINARY,
          wk_svc_unregister_nodes },
    };

    for (size_t i = 0; i < sizeof(reg) / sizeof(reg[0]); i++)
        if (wk_svc_register(w, reg[i].id, reg[i].fn, NULL, NULL) != 0)
            return -EINVAL;
    return wk_svc_browse_cache_init(w);
}

/* conf->browse_cache_kb of entries, a power of two; none for 0. */
static int
wk_svc_browse_cache_init(struct wk_worker *w)
{
    uint64_t          n = (uint64_t)w->conf->browse_cache_kb * 1024
                          / WK_BCACHE_ENTRY;
    struct wk_bcache *bc;

    w->bcache = NULL;
    if (n == 0)
        return 0;
    while (n & (n - 1))
        n &= n - 1;                     /* a power of two, rounded down */
    bc = wk_alloc(w, sizeof(*bc));
    if (bc == NULL)
        return -ENOMEM;
    bc->e = wk_alloc(w, (size_t)n * sizeof(*bc->e));
    if (bc->e == NULL) {
        wk_free(w, bc);
        return -ENOMEM;
    }
    for (uint64_t i = 0; i < n; i++)
        bc->e[i].node = SHM_NONE;
    bc->mask = (uint32_t)(n - 1);
    bc->hits = 0;
    w->bcache = bc;
    return 0;
}

void
wk_svc_browse_fini(struct wk_worker *w)
{
    if (w->bcache == NULL)
        return;
    wk_free(w, w->bcache->e);
    wk_free(w, w->bcache);
    w->bcache = NULL;
}

uint64_t
wk_svc_browse_cache_hits(const struct wk_worker *w)
{
    return w->bcache != NULL ? w->bcache->hits : 0;
}

/* c's parameters as an entry's key (the fields before nrefs). */
static void
wk_svc_bcache_key(const struct wk_session_cp *c, struct wk_bcache_entry *k)
{
    k->node = c->node;
    k->reftype = c->reftype;
    k->node_class_mask = c->node_class_mask;
    k->result_mask = c->result_mask & UA_BROWSERESULTMASK_ALL;
    k->direction = c->direction;
    k->include_subtypes = c->reftype != SHM_NONE && c->include_subtypes;
    k->pad[0] = k->pad[1] = 0;
}

static struct wk_bcache_entry *
wk_svc_bcache_slot(struct wk_bcache *bc, const struct wk_bcache_entry *k)
{
    uint64_t h = ((uint64_t)k->node << 32 | k->reftype)
                 ^ ((uint64_t)k->node_class_mask << 40)
                 ^ ((uint64_t)k->result_mask << 8)
                 ^ ((uint64_t)k->direction << 2 | k->include_subtypes);

    h *= UINT64_C(0x9e3779b97f4a7c15);
    return &bc->e[(uint32_t)(h >> 32) & bc->mask];
}

/*
 * The whole result of c (a first page) from the cache into res, spending
 * the budget the walk would have; false when it is not there, does not fit
 * c->max or the budget, or the arena is full (the walk then decides).
 */
static bool
wk_svc_bcache_get(struct wk_svc_ctx *ctx, const struct wk_session_cp *c,
                  uint32_t *budget, struct ua_browse_result *res)
{
    const struct wk_worker          *w = ctx->w;
    const struct wk_bcache_entry    *e;
    struct wk_bcache_entry           k;
    struct ua_reference_description *r;
    uint32_t                         nrefs = w->ns.nodes[c->node].nrefs;
    uint8_t                         *b;

    wk_svc_bcache_key(c, &k);
    e = wk_svc_bcache_slot(w->bcache, &k);
    if (e->node != k.node || e->reftype != k.reftype
        || e->node_class_mask != k.node_class_mask
        || e->result_mask != k.result_mask || e->direction != k.direction
        || e->include_subtypes != k.include_subtypes
        || e->nrefs > c->max || nrefs > *budget)
        return false;
    r = ua_arena_alloc(ctx->arena, sizeof(*r));
    b = ua_arena_alloc(ctx->arena, e->len);
    if (r == NULL || b == NULL)
        return false;
    /* A copy: a later operation of this request may refill the entry. */
    memcpy(b, e->bytes, e->len);
    memset(r, 0, sizeof(*r));
    r->reference_type_id.idtype = UA_IDTYPE_ENCODED;
    r->browse_name.name.len = (int32_t)e->len;
    r->browse_name.name.data = b;
    res->n_references = (int32_t)e->nrefs;
    res->references = r;
    *budget -= nrefs;
    ctx->w->bcache->hits++;
    return true;
}

/*
 * Keep res, the whole result of c, in c's entry (replacing what was
 * there); a result that does not fit an entry leaves it empty.
 */
static void
wk_svc_bcache_put(struct wk_svc_ctx *ctx, const struct wk_session_cp *c,
                  const struct ua_browse_result *res)
{
    struct wk_bcache_entry *e, k;
    size_t                  pos = 0, len;

    if (res->n_references <= 0
        || (uint32_t)res->n_references
               > sizeof(e->bytes) / WK_BCACHE_DESC_MIN)
        return;
    wk_svc_bcache_key(c, &k);
    e = wk_svc_bcache_slot(ctx->w->bcache, &k);
    e->node = SHM_NONE;
    for (int32_t i = 0; i < res->n_references; i++) {
        if (ua_encode(&res->references[i],
                      &ua_types[UA_TYPE_REFERENCEDESCRIPTION], e->bytes + pos,
                      sizeof(e->bytes) - pos, &len) != UA_GOOD)
            return;
        pos += len;
    }
    memcpy(e, &k, offsetof(struct wk_bcache_entry, nrefs));
    e->nrefs = (uint32_t)res->n_references;
    e->len = (uint32_t)pos;
}

/* c's bytes, in the arena, as res's continuationPoint. */
static ua_status
wk_svc_cp_out(struct wk_svc_ctx *ctx, const struct wk_session_cp *c,
              struct ua_browse_result *res)
{
    uint8_t *b = ua_arena_alloc(ctx->arena, WK_SESSION_CP_BYTES);

    if (b == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    wk_session_cp_bytes(ctx->session, c, b);
    res->continuation_point.len = WK_SESSION_CP_BYTES;
    res->continuation_point.data = b;
    return UA_GOOD;
}

static ua_status
wk_svc_browse_one(struct wk_svc_ctx *ctx,
                  const struct ua_browse_description *bd, uint32_t max,
                  uint32_t *budget, struct ua_browse_result *res)
{
    struct wk_worker     *w = ctx->w;
    struct wk_session_cp  c, *cp;
    uint32_t              node, rt = SHM_NONE;
    bool                  more;
    ua_status             s;

    if (bd->browse_direction < UA_BROWSEDIRECTION_FORWARD
        || bd->browse_direction > UA_BROWSEDIRECTION_BOTH)
        return UA_BAD_BROWSE_DIRECTION_INVALID;
    node = wk_node_lookup(w, &bd->node_id);
    if (node == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    if (!wk_node_is_null(&bd->reference_type_id)) {
        uint32_t i = wk_node_lookup(w, &bd->reference_type_id);

        rt = i == SHM_NONE ? SHM_NONE : shm_nodestore_reftype_of(&w->ns, i);
        if (rt == SHM_NONE || rt >= SHM_REFTYPES_MAX)
            return UA_BAD_REFERENCE_TYPE_ID_INVALID;
    }
    memset(&c, 0, sizeof(c));
    c.node = node;
    c.max = max;
    c.reftype = rt;
    c.node_class_mask = bd->node_class_mask;
    c.result_mask = bd->result_mask;
    c.direction = (uint8_t)bd->browse_direction;
    c.include_subtypes = bd->include_subtypes;
    if (w->bcache != NULL && wk_svc_bcache_get(ctx, &c, budget, res))
        return UA_GOOD;
    s = wk_svc_browse_page(ctx, &c, budget, res, &more);
    if (s == UA_GOOD && !more && w->bcache != NULL)
        wk_svc_bcache_put(ctx, &c, res);
    if (s != UA_GOOD || !more)
        return s;
    cp = wk_session_cp_alloc(w, ctx->session);
    if (cp == NULL) {
        res->n_references = 0;
        res->references = NULL;
        return UA_BAD_NO_CONTINUATION_POINTS;
    }
    c.id = cp->id;
    *cp = c;
    s = wk_svc_cp_out(ctx, cp, res);
    if (s != UA_GOOD)
        wk_session_cp_release(ctx->session, cp);
    return s;
}

static void
wk_svc_browse(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_browse_request *req = req_;
    struct ua_browse_response      *resp = resp_;
    struct ua_response_header      *rh = &resp->response_header;
    const struct shm_config        *conf = ctx->w->conf;
    struct ua_browse_result        *res;
    uint32_t                        max, budget = wk_svc_scan_budget(conf);
    int32_t                         n = req->n_nodes_to_browse;

    if (!wk_node_is_null(&req->view.view_id)) {
        rh->service_result = UA_BAD_VIEW_ID_UNKNOWN;
        return;
    }
    rh->service_result = wk_svc_ops_check(n, conf->max_nodes_per_browse);
    if (rh->service_result != UA_GOOD)
        return;
    max = req->requested_max_references_per_node;
    if (max == 0 || max > conf->max_references_per_node)
        max = conf->max_references_per_node;
    res = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*res));
    if (res == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        res[i].continuation_point.len = -1;
        res[i].status_code = wk_svc_browse_one(ctx, &req->nodes_to_browse[i],
                                               max, &budget, &res[i]);
    }
    resp->n_results = n;
    resp->results = res;
    resp->n_diagnostic_infos = 0;
}

static void
wk_svc_browse_next(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_browse_next_request *req = req_;
    struct ua_browse_next_response      *resp = resp_;
    struct ua_response_header           *rh = &resp->response_header;
    struct wk_session                   *s = ctx->session;
    struct ua_browse_result             *res;
    uint32_t budget = wk_svc_scan_budget(ctx->w->conf);
    int32_t                              n = req->n_continuation_points;

    rh->service_result = wk_svc_ops_check(n,
                                          ctx->w->conf->max_nodes_per_browse);
    if (rh->service_result != UA_GOOD)
        return;
    res = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*res));
    if (res == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        struct wk_session_cp *cp;
        bool                  more;
        ua_status             st;

        memset(&res[i], 0, sizeof(res[i]));
        res[i].continuation_point.len = -1;
        cp = wk_session_cp_find(ctx->w, s, &req->continuation_points[i]);
        /* A HistoryRead's point (worker/svc_history.c) is not ours. */
        if (cp != NULL && cp->direction > UA_BROWSEDIRECTION_BOTH)
            cp = NULL;
        if (cp == NULL) {
            res[i].status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            continue;
        }
        if (req->release_continuation_points) {
            wk_session_cp_release(s, cp);
            continue;
        }
        st = wk_svc_browse_page(ctx, cp, &budget, &res[i], &more);
        if (st == UA_GOOD && more) {
            /* The same slot under a new id: the bytes just used die. */
            uint64_t id;

            do
                wk_session_random(ctx->w, &id, sizeof(id));
            while (id == 0);
            cp->id = id;
            st = wk_svc_cp_out(ctx, cp, &res[i]);
        }
        if (st != UA_GOOD || !more)
            wk_session_cp_release(s, cp);
        if (st != UA_GOOD) {
            res[i].n_references = 0;
            res[i].references = NULL;
            res[i].continuation_point.len = -1;
            res[i].continuation_point.data = NULL;
        }
        res[i].status_code = st;
    }
    resp->n_results = n;
    resp->results = res;
    resp->n_diagnostic_infos = 0;
}

/* ------------------------------------------------------------------ */
/* TranslateBrowsePathsToNodeIds                                       */
/* ------------------------------------------------------------------ */

static bool
wk_svc_name_eq(const struct wk_worker *w, uint32_t i,
               const struct ua_qualifiedname *q)
{
    const struct shm_node *n = &w->ns.nodes[i];
    uint32_t               len;
    const uint8_t         *p;

    if (n->browse_ns != q->ns)
        return false;
    p = shm_nodestore_string(&w->ns, n->browse_name, &len);
    return p != NULL && q->name.len >= 0 && (uint32_t)q->name.len == len
           && (len == 0 || memcmp(p, q->name.data, len) == 0);
}

static ua_status
wk_svc_translate_one(struct wk_svc_ctx *ctx, const struct ua_browse_path *bp,
                     uint32_t *budget, struct ua_browse_path_result *res)
{
    const struct wk_worker *w = ctx->w;
    const struct ua_relative_path_element *el = bp->relative_path.elements;
    int32_t                 ne = bp->relative_path.n_elements;
    uint32_t               *cur, *next, ncur = 1, start;

    start = wk_node_lookup(w, &bp->starting_node);
    if (start == SHM_NONE)
        return UA_BAD_NODE_ID_UNKNOWN;
    if (ne <= 0)
        return UA_BAD_NOTHING_TO_DO;
    if ((uint32_t)ne > w->conf->max_translate_path_elements)
        return UA_BAD_TOO_MANY_OPERATIONS;
    for (int32_t e = 0; e < ne; e++) {
        if (el[e].target_name.name.len <= 0)
            return UA_BAD_BROWSE_NAME_INVALID;
    }
    cur = ua_arena_alloc(ctx->arena, 2 * WK_TRANSLATE_MAX * sizeof(*cur));
    if (cur == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    next = cur + WK_TRANSLATE_MAX;
    cur[0] = start;

    for (int32_t e = 0; e < ne; e++) {
        struct wk_session_cp c;
        uint32_t             nnext = 0, *tmp;

        memset(&c, 0, sizeof(c));
        c.direction = el[e].is_inverse ? UA_BROWSEDIRECTION_INVERSE
                                       : UA_BROWSEDIRECTION_FORWARD;
        c.include_subtypes = el[e].include_subtypes;
        c.reftype = SHM_NONE;
        if (!wk_node_is_null(&el[e].reference_type_id)) {
            uint32_t i = wk_node_lookup(w, &el[e].reference_type_id);

            c.reftype = i == SHM_NONE ? SHM_NONE
                                      : shm_nodestore_reftype_of(&w->ns, i);
            if (c.reftype == SHM_NONE)
                return UA_BAD_NO_MATCH;
        }
        for (uint32_t k = 0; k < ncur; k++) {
            const struct shm_node *n = &w->ns.nodes[cur[k]];

            if (n->refs > w->ns.nrefs || n->nrefs > w->ns.nrefs - n->refs)
                return UA_BAD_INTERNAL_ERROR;
            if (n->nrefs > *budget)
                return UA_BAD_QUERY_TOO_COMPLEX;
            *budget -= n->nrefs;
            for (uint32_t j = 0; j < n->nrefs; j++) {
                const struct shm_ref *r = &w->ns.refs[n->refs + j];
                uint32_t              m;

                if (!wk_svc_ref_match(w, &c, r)
                    || !wk_svc_name_eq(w, r->target, &el[e].target_name))
                    continue;
                for (m = 0; m < nnext && next[m] != r->target; m++)
                    ;
                if (m < nnext)
                    continue;       /* reached twice */
                if (nnext == WK_TRANSLATE_MAX)
                    return UA_BAD_TOO_MANY_MATCHES;
                next[nnext++] = r->target;
            }
        }
        if (nnext == 0)
            return UA_BAD_NO_MATCH;
        tmp = cur;
        cur = next;
        next = tmp;
        ncur = nnext;
    }

    res->targets = ua_arena_alloc(ctx->arena,
                                  (size_t)ncur * sizeof(*res->targets));
    if (res->targets == NULL)
        return UA_BAD_OUT_OF_MEMORY;
    for (uint32_t k = 0; k < ncur; k++) {
        wk_node_expanded(w, cur[k], &res->targets[k].target_id);
        res->targets[k].remaining_path_index = UINT32_MAX;
    }
    res->n_targets = (int32_t)ncur;
    return UA_GOOD;
}

static void
wk_svc_translate(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_translate_browse_paths_to_node_ids_request *req = req_;
    struct ua_translate_browse_paths_to_node_ids_response *resp = resp_;
    struct ua_response_header    *rh = &resp->response_header;
    struct ua_browse_path_result *res;
    uint32_t budget = wk_svc_scan_budget(ctx->w->conf);
    int32_t                       n = req->n_browse_paths;

    rh->service_result = wk_svc_ops_check(
        n, ctx->w->conf->max_nodes_per_translate);
    if (rh->service_result != UA_GOOD)
        return;
    res = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*res));
    if (res == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        res[i].status_code = wk_svc_translate_one(ctx, &req->browse_paths[i],
                                                  &budget, &res[i]);
        if (res[i].status_code != UA_GOOD) {
            res[i].n_targets = 0;
            res[i].targets = NULL;
        }
    }
    resp->n_results = n;
    resp->results = res;
    resp->n_diagnostic_infos = 0;
}

/* ------------------------------------------------------------------ */
/* RegisterNodes, UnregisterNodes                                      */
/* ------------------------------------------------------------------ */

static void
wk_svc_register_nodes(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_register_nodes_request *req = req_;
    struct ua_register_nodes_response      *resp = resp_;
    struct ua_response_header              *rh = &resp->response_header;
    int32_t                                 n = req->n_nodes_to_register;

    rh->service_result = wk_svc_ops_check(
        n, ctx->w->conf->max_nodes_per_register_nodes);
    if (rh->service_result != UA_GOOD)
        return;
    /* The request's NodeIds live until the response is sent. */
    resp->n_registered_node_ids = n;
    resp->registered_node_ids = req->nodes_to_register;
    ctx->session->registered += (uint64_t)n;
}

static void
wk_svc_unregister_nodes(struct wk_svc_ctx *ctx, const void *req_,
                        void *resp_)
{
    const struct ua_unregister_nodes_request *req = req_;
    struct ua_unregister_nodes_response      *resp = resp_;

    resp->response_header.service_result = wk_svc_ops_check(
        req->n_nodes_to_unregister,
        ctx->w->conf->max_nodes_per_register_nodes);
}
