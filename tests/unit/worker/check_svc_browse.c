/*
 * tests/unit/worker/check_svc_browse.c: worker/svc_browse.c through
 * wk_svc_dispatch on the real address space: Browse of the Server object
 * (ns=0;i=2253) by reference type, subtypes, direction, node class and result
 * mask; paging with continuation points up to BadNoContinuationPoints, release,
 * forged and foreign points (docs/security.md case 68);
 * TranslateBrowsePathsToNodeIds, including an 8000-element path
 * (docs/security.md case 67); RegisterNodes / UnregisterNodes; the Browse cache
 * (answers equal to the walk's, the page size and scan budget still decide, an
 * entry refilled by a later operation of the same request).
 *
 * Server's references in the 1.05.03 NodeSet (+ our Demo namespace):
 *   inverse  Organizes from Objects (85)
 *   forward  Organizes x3, HasProperty x7, HasComponent x14 (4 Methods),
 *            HasTypeDefinition ServerType (2004)
 */
#include "fixture.h"

#define CH   (&fx.ch[0])
#define CH_B (&fx.ch[1])

#define SERVER_FWD_HIER  24     /* Organizes + HasProperty + HasComponent */
#define SERVER_REFS      26

static struct ua_nodeid tok;

static void
setup(void)
{
    fx_setup();
    tok = fx_session(CH);
}

static void
teardown(void)
{
    fx_teardown();
}

static struct ua_browse_description
bdesc(struct ua_nodeid n, int32_t dir, uint32_t reftype, bool sub)
{
    struct ua_browse_description d;

    memset(&d, 0, sizeof(d));
    d.node_id = n;
    d.browse_direction = dir;
    d.reference_type_id = fx_ns0(reftype);
    d.include_subtypes = sub;
    d.node_class_mask = 0;
    d.result_mask = UA_BROWSERESULTMASK_ALL;
    return d;
}

static ua_status
browse_n(const struct ua_nodeid *token, struct ua_browse_description *d,
         int32_t n, uint32_t max, struct ua_browse_response *resp)
{
    struct ua_browse_request req;

    memset(&req, 0, sizeof(req));
    req.requested_max_references_per_node = max;
    req.n_nodes_to_browse = n;
    req.nodes_to_browse = d;
    return fx_call(CH, token, UA_TYPE_BROWSEREQUEST, &req,
                   UA_TYPE_BROWSERESPONSE, resp);
}

/* Browse one node; its BrowseResult (service result must be Good). */
static struct ua_browse_result
browse1(struct ua_browse_description d, uint32_t max)
{
    struct ua_browse_response resp;

    ck_assert_uint_eq(browse_n(&tok, &d, 1, max, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, 1);
    return resp.results[0];
}

static ua_status
browse_next(const struct ua_nodeid *token, bool release,
            struct ua_string *cps, int32_t n,
            struct ua_browse_next_response *resp)
{
    struct ua_browse_next_request req;

    memset(&req, 0, sizeof(req));
    req.release_continuation_points = release;
    req.n_continuation_points = n;
    req.continuation_points = cps;
    return fx_call(CH, token, UA_TYPE_BROWSENEXTREQUEST, &req,
                   UA_TYPE_BROWSENEXTRESPONSE, resp);
}

static bool
has_target(const struct ua_browse_result *r, uint32_t id)
{
    for (int32_t i = 0; i < r->n_references; i++) {
        const struct ua_expandednodeid *x = &r->references[i].node_id;

        if (x->node.ns == 0 && x->node.idtype == UA_IDTYPE_NUMERIC
            && x->node.id.num == id)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------ Browse */

START_TEST(test_browse_server_subtypes)
{
    struct ua_browse_result r;
    const struct ua_reference_description *d = NULL;

    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_HIERARCHICALREFERENCES, true), 0);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_references, SERVER_FWD_HIER);
    ck_assert_int_eq(r.continuation_point.len, -1);
    ck_assert(has_target(&r, UA_NS0ID_SERVER_SERVERSTATUS));
    ck_assert(has_target(&r, UA_NS0ID_SERVER_NAMESPACEARRAY));
    ck_assert(!has_target(&r, UA_NS0ID_SERVERTYPE));
    for (int32_t i = 0; i < r.n_references; i++) {
        if (r.references[i].node_id.node.id.num
            == UA_NS0ID_SERVER_SERVERSTATUS)
            d = &r.references[i];
    }
    ck_assert_ptr_nonnull(d);
    ck_assert(ua_nodeid_equal(&d->reference_type_id,
                              &(struct ua_nodeid){ .id.num = 47 }));
    ck_assert(d->is_forward);
    ck_assert_int_eq(d->node_class, UA_NODECLASS_VARIABLE);
    ck_assert(ua_string_eq(&d->browse_name.name, "ServerStatus"));
    ck_assert(ua_string_eq(&d->display_name.text, "ServerStatus"));
    ck_assert_uint_eq(d->type_definition.node.id.num,
                      UA_NS0ID_SERVERSTATUSTYPE);
    ck_assert_int_eq(d->node_id.ns_uri.len, -1);
    ck_assert_uint_eq(d->node_id.server_index, 0);
}
END_TEST

START_TEST(test_browse_server_exact_types)
{
    struct ua_browse_result r;

    /* No reference is exactly HierarchicalReferences (abstract). */
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_HIERARCHICALREFERENCES, false), 0);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_references, 0);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_HASPROPERTY, false), 0);
    ck_assert_int_eq(r.n_references, 7);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_HASCOMPONENT, false), 0);
    ck_assert_int_eq(r.n_references, 14);
    /* Aggregates with subtypes: HasProperty + HasComponent. */
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_AGGREGATES, true), 0);
    ck_assert_int_eq(r.n_references, 21);
    /* Null reference type: every reference. */
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_BOTH, 0,
                      false), 0);
    ck_assert_int_eq(r.n_references, SERVER_REFS);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_HASTYPEDEFINITION, false), 0);
    ck_assert_int_eq(r.n_references, 1);
    ck_assert(has_target(&r, UA_NS0ID_SERVERTYPE));
    /* A TypeDefinition is given for Objects and Variables only. */
    ck_assert_int_eq(r.references[0].node_class, UA_NODECLASS_OBJECTTYPE);
    ck_assert_uint_eq(r.references[0].type_definition.node.id.num, 0);
}
END_TEST

START_TEST(test_browse_direction)
{
    struct ua_browse_result r;

    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_INVERSE,
                      UA_NS0ID_HIERARCHICALREFERENCES, true), 0);
    ck_assert_int_eq(r.n_references, 1);
    ck_assert(has_target(&r, UA_NS0ID_OBJECTSFOLDER));
    ck_assert(!r.references[0].is_forward);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_BOTH,
                      UA_NS0ID_HIERARCHICALREFERENCES, true), 0);
    ck_assert_int_eq(r.n_references, SERVER_FWD_HIER + 1);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), 3,
                      UA_NS0ID_HIERARCHICALREFERENCES, true), 0);
    ck_assert_uint_eq(r.status_code, UA_BAD_BROWSE_DIRECTION_INVALID);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), -1, 0, true), 0);
    ck_assert_uint_eq(r.status_code, UA_BAD_BROWSE_DIRECTION_INVALID);
    /* The Demo folder under Objects, in namespace 1. */
    r = browse1(bdesc(fx_ns0(UA_NS0ID_OBJECTSFOLDER),
                      UA_BROWSEDIRECTION_FORWARD, UA_NS0ID_ORGANIZES, false),
                0);
    ck_assert_int_eq(r.n_references, 4);
    ck_assert_uint_eq(r.references[3].node_id.node.ns, 1);
    ck_assert(ua_string_eq(&r.references[3].node_id.node.id.str, "Demo"));
    ck_assert_uint_eq(r.references[3].browse_name.ns, 1);
}
END_TEST

START_TEST(test_browse_masks)
{
    struct ua_browse_description d;
    struct ua_browse_result      r;
    const struct ua_reference_description *x;

    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    d.node_class_mask = UA_NODECLASS_VARIABLE;
    r = browse1(d, 0);
    ck_assert_int_eq(r.n_references, 8);
    d.node_class_mask = UA_NODECLASS_METHOD;
    r = browse1(d, 0);
    ck_assert_int_eq(r.n_references, 4);
    ck_assert(has_target(&r, UA_NS0ID_SERVER_GETMONITOREDITEMS));
    d.node_class_mask = UA_NODECLASS_METHOD | UA_NODECLASS_VARIABLE;
    r = browse1(d, 0);
    ck_assert_int_eq(r.n_references, 12);

    /* resultMask 0: the target NodeId only. */
    d.node_class_mask = UA_NODECLASS_VARIABLE;
    d.result_mask = 0;
    r = browse1(d, 0);
    ck_assert_int_eq(r.n_references, 8);
    x = &r.references[0];
    ck_assert_uint_ne(x->node_id.node.id.num, 0);
    ck_assert_uint_eq(x->reference_type_id.id.num, 0);
    ck_assert(!x->is_forward);
    ck_assert_int_eq(x->node_class, 0);
    ck_assert_int_eq(x->browse_name.name.len, -1);
    ck_assert_uint_eq(x->display_name.mask, 0);
    ck_assert_uint_eq(x->type_definition.node.id.num, 0);
    /* One field at a time. */
    d.result_mask = UA_BROWSERESULTMASK_BROWSENAME;
    r = browse1(d, 0);
    ck_assert_int_ge(r.references[0].browse_name.name.len, 1);
    ck_assert_uint_eq(r.references[0].display_name.mask, 0);
    d.result_mask = UA_BROWSERESULTMASK_TYPEDEFINITION;
    r = browse1(d, 0);
    ck_assert_uint_ne(r.references[0].type_definition.node.id.num, 0);
    ck_assert_int_eq(r.references[0].browse_name.name.len, -1);
}
END_TEST

START_TEST(test_browse_errors)
{
    struct ua_browse_description d[4];
    struct ua_browse_response    resp;
    struct ua_browse_request     req;
    struct ua_browse_result      r;

    r = browse1(bdesc(fx_ns1("nope"), UA_BROWSEDIRECTION_FORWARD, 0, true),
                0);
    ck_assert_uint_eq(r.status_code, UA_BAD_NODE_ID_UNKNOWN);
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      999999, true), 0);
    ck_assert_uint_eq(r.status_code, UA_BAD_REFERENCE_TYPE_ID_INVALID);
    /* A node that exists but is no ReferenceType. */
    r = browse1(bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                      UA_NS0ID_SERVER, true), 0);
    ck_assert_uint_eq(r.status_code, UA_BAD_REFERENCE_TYPE_ID_INVALID);
    /* Mixed: each result on its own. */
    d[0] = bdesc(fx_ns0(UA_NS0ID_ROOTFOLDER), UA_BROWSEDIRECTION_FORWARD,
                 0, true);
    d[1] = bdesc(fx_ns1("nope"), UA_BROWSEDIRECTION_FORWARD, 0, true);
    d[2] = bdesc(fx_ns0(UA_NS0ID_ROOTFOLDER), 7, 0, true);
    d[3] = bdesc(fx_ns1("Demo.Vars"), UA_BROWSEDIRECTION_FORWARD,
                 UA_NS0ID_ORGANIZES, false);
    ck_assert_uint_eq(browse_n(&tok, d, 4, 0, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, 4);
    ck_assert_int_eq(resp.results[0].n_references, 4);
    ck_assert_uint_eq(resp.results[1].status_code, UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(resp.results[2].status_code,
                      UA_BAD_BROWSE_DIRECTION_INVALID);
    ck_assert_int_eq(resp.results[3].n_references, 100);
    /* Service level: nothing to do, too many, a view. */
    ck_assert_uint_eq(browse_n(&tok, d, 0, 0, &resp), UA_BAD_NOTHING_TO_DO);
    memset(&req, 0, sizeof(req));
    req.view.view_id = fx_ns0(UA_NS0ID_VIEWSFOLDER);
    req.n_nodes_to_browse = 1;
    req.nodes_to_browse = d;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_BROWSEREQUEST, &req,
                              UA_TYPE_BROWSERESPONSE, &resp),
                      UA_BAD_VIEW_ID_UNKNOWN);
}
END_TEST

START_TEST(test_browse_too_many_operations)
{
    uint32_t                      max = fx.w.conf->max_nodes_per_browse;
    struct ua_browse_description *d = calloc(max + 1, sizeof(*d));
    struct ua_browse_response     resp;

    for (uint32_t i = 0; i <= max; i++)
        d[i] = bdesc(fx_ns0(UA_NS0ID_ROOTFOLDER), UA_BROWSEDIRECTION_BOTH, 0,
                     false);
    ck_assert_uint_eq(browse_n(&tok, d, (int32_t)max, 0, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, (int32_t)max);
    ck_assert_uint_eq(browse_n(&tok, d, (int32_t)max + 1, 0, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    free(d);
}
END_TEST

/* ------------------------------------------------------------ paging */

START_TEST(test_browse_paging)
{
    struct ua_browse_description   d;
    struct ua_browse_result        r;
    struct ua_browse_next_response nr;
    struct ua_string               cp;
    uint32_t                       seen[SERVER_FWD_HIER];
    int                            pages = 1, total;

    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    r = browse1(d, 5);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_references, 5);
    ck_assert_int_gt(r.continuation_point.len, 0);
    for (int i = 0; i < 5; i++)
        seen[i] = r.references[i].node_id.node.id.num;
    total = 5;
    cp = r.continuation_point;
    while (cp.len > 0) {
        struct ua_string old = cp;

        ck_assert_uint_eq(browse_next(&tok, false, &cp, 1, &nr), UA_GOOD);
        ck_assert_int_eq(nr.n_results, 1);
        ck_assert_uint_eq(nr.results[0].status_code, UA_GOOD);
        for (int32_t i = 0; i < nr.results[0].n_references; i++) {
            ck_assert_int_lt(total, SERVER_FWD_HIER);
            seen[total++] = nr.results[0].references[i].node_id.node.id.num;
        }
        cp = nr.results[0].continuation_point;
        pages++;
        /* A point is single use: the bytes just sent are dead. */
        ck_assert_uint_eq(browse_next(&tok, false, &old, 1, &nr), UA_GOOD);
        ck_assert_uint_eq(nr.results[0].status_code,
                          UA_BAD_CONTINUATION_POINT_INVALID);
    }
    ck_assert_int_eq(pages, 5);
    ck_assert_int_eq(total, SERVER_FWD_HIER);
    /* Same references as one big page, same order. */
    r = browse1(d, 0);
    for (int i = 0; i < SERVER_FWD_HIER; i++)
        ck_assert_uint_eq(seen[i], r.references[i].node_id.node.id.num);
    /* All points were given back. */
    ck_assert_uint_eq(wk_session_find_by_token(&fx.w, &tok)->ncps, 0);
}
END_TEST

START_TEST(test_no_continuation_points)
{
    uint32_t max = fx.w.conf->max_browse_continuation_points;
    struct ua_browse_description   d;
    struct ua_browse_result        r;
    struct ua_browse_next_response nr;
    struct ua_string               cps[64];

    ck_assert_uint_le(max, 64);
    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    /* docs/security.md case 68: requestedMaxReferencesPerNode 1 until it
     * breaks. */
    for (uint32_t i = 0; i < max; i++) {
        r = browse1(d, 1);
        ck_assert_uint_eq(r.status_code, UA_GOOD);
        ck_assert_int_eq(r.continuation_point.len, WK_SESSION_CP_BYTES);
        cps[i] = r.continuation_point;
    }
    r = browse1(d, 1);
    ck_assert_uint_eq(r.status_code, UA_BAD_NO_CONTINUATION_POINTS);
    ck_assert_int_eq(r.n_references, 0);
    ck_assert_int_eq(r.continuation_point.len, -1);
    /* A Browse that fits one page needs no point. */
    r = browse1(d, 0);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    /* Release two; two Browses work again. */
    ck_assert_uint_eq(browse_next(&tok, true, cps, 2, &nr), UA_GOOD);
    ck_assert_int_eq(nr.n_results, 2);
    ck_assert_uint_eq(nr.results[0].status_code, UA_GOOD);
    ck_assert_int_eq(nr.results[0].n_references, 0);
    ck_assert_int_eq(nr.results[1].continuation_point.len, -1);
    ck_assert_uint_eq(browse1(d, 1).status_code, UA_GOOD);
    ck_assert_uint_eq(browse1(d, 1).status_code, UA_GOOD);
    ck_assert_uint_eq(browse1(d, 1).status_code,
                      UA_BAD_NO_CONTINUATION_POINTS);
    /* Released points are invalid now. */
    ck_assert_uint_eq(browse_next(&tok, false, cps, 1, &nr), UA_GOOD);
    ck_assert_uint_eq(nr.results[0].status_code,
                      UA_BAD_CONTINUATION_POINT_INVALID);
    ck_assert_uint_eq(browse_next(&tok, true, &cps[1], 1, &nr), UA_GOOD);
    ck_assert_uint_eq(nr.results[0].status_code,
                      UA_BAD_CONTINUATION_POINT_INVALID);
    /* A live one still continues. */
    ck_assert_uint_eq(browse_next(&tok, false, &cps[5], 1, &nr), UA_GOOD);
    ck_assert_uint_eq(nr.results[0].status_code, UA_GOOD);
    ck_assert_int_eq(nr.results[0].n_references, 1);
}
END_TEST

START_TEST(test_forged_and_foreign_points)
{
    struct ua_browse_description   d;
    struct ua_browse_result        r;
    struct ua_browse_next_response nr;
    struct ua_string               cp, forged[4];
    struct ua_nodeid               other;
    uint8_t                        buf[WK_SESSION_CP_BYTES], big[4096];

    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    r = browse1(d, 2);
    cp = r.continuation_point;
    ck_assert_int_eq(cp.len, WK_SESSION_CP_BYTES);
    memcpy(buf, cp.data, sizeof(buf));
    buf[6] ^= 0x10;
    forged[0].len = WK_SESSION_CP_BYTES;
    forged[0].data = buf;
    forged[1].len = -1;
    forged[1].data = NULL;
    forged[2].len = 3;
    forged[2].data = buf;
    memset(big, 0, sizeof(big));
    forged[3].len = sizeof(big);
    forged[3].data = big;
    ck_assert_uint_eq(browse_next(&tok, false, forged, 4, &nr), UA_GOOD);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(nr.results[i].status_code,
                          UA_BAD_CONTINUATION_POINT_INVALID);
    /* Another session, on another channel, with the genuine bytes. */
    other = fx_session(CH_B);
    {
        struct ua_browse_next_request req;

        memset(&req, 0, sizeof(req));
        req.n_continuation_points = 1;
        req.continuation_points = &cp;
        ck_assert_uint_eq(fx_call(CH_B, &other, UA_TYPE_BROWSENEXTREQUEST,
                                  &req, UA_TYPE_BROWSENEXTRESPONSE, &nr),
                          UA_GOOD);
        ck_assert_uint_eq(nr.results[0].status_code,
                          UA_BAD_CONTINUATION_POINT_INVALID);
    }
    /* The owner still can. */
    ck_assert_uint_eq(browse_next(&tok, false, &cp, 1, &nr), UA_GOOD);
    ck_assert_uint_eq(nr.results[0].status_code, UA_GOOD);
    ck_assert_int_eq(nr.results[0].n_references, 2);
    /* Nothing to do; too many. */
    ck_assert_uint_eq(browse_next(&tok, false, NULL, 0, &nr),
                      UA_BAD_NOTHING_TO_DO);
    {
        uint32_t          max = fx.w.conf->max_nodes_per_browse;
        struct ua_string *many = calloc(max + 1, sizeof(*many));

        for (uint32_t i = 0; i <= max; i++)
            many[i] = forged[0];
        ck_assert_uint_eq(browse_next(&tok, true, many, (int32_t)max, &nr),
                          UA_GOOD);
        ck_assert_uint_eq(nr.results[max - 1].status_code,
                          UA_BAD_CONTINUATION_POINT_INVALID);
        ck_assert_uint_eq(browse_next(&tok, true, many, (int32_t)max + 1,
                                      &nr), UA_BAD_TOO_MANY_OPERATIONS);
        free(many);
    }
}
END_TEST

START_TEST(test_points_die_with_session)
{
    struct ua_browse_description   d;
    struct ua_browse_result        r;
    struct ua_browse_next_response nr;
    struct ua_close_session_request  creq;
    struct ua_close_session_response cresp;
    struct ua_string               cp;

    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    r = browse1(d, 1);
    cp = r.continuation_point;
    memset(&creq, 0, sizeof(creq));
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_CLOSESESSIONREQUEST, &creq,
                              UA_TYPE_CLOSESESSIONRESPONSE, &cresp),
                      UA_GOOD);
    tok = fx_session(CH);           /* likely the same pool slot */
    ck_assert_uint_eq(browse_next(&tok, false, &cp, 1, &nr), UA_GOOD);
    ck_assert_uint_eq(nr.results[0].status_code,
                      UA_BAD_CONTINUATION_POINT_INVALID);
}
END_TEST

/* ------------------------------------------------------------ Translate */

static struct ua_relative_path_element
rpe(uint32_t reftype, bool sub, bool inv, uint16_t ns, const char *name)
{
    struct ua_relative_path_element e;

    memset(&e, 0, sizeof(e));
    e.reference_type_id = fx_ns0(reftype);
    e.include_subtypes = sub;
    e.is_inverse = inv;
    e.target_name.ns = ns;
    e.target_name.name = ua_string_from(name);
    return e;
}

static ua_status
translate(struct ua_browse_path *bp, int32_t n,
          struct ua_translate_browse_paths_to_node_ids_response *resp)
{
    struct ua_translate_browse_paths_to_node_ids_request req;

    memset(&req, 0, sizeof(req));
    req.n_browse_paths = n;
    req.browse_paths = bp;
    return fx_call(CH, &tok, UA_TYPE_TRANSLATEBROWSEPATHSTONODEIDSREQUEST,
                   &req, UA_TYPE_TRANSLATEBROWSEPATHSTONODEIDSRESPONSE, resp);
}

static struct ua_browse_path_result
translate1(struct ua_nodeid start, struct ua_relative_path_element *el,
           int32_t n)
{
    struct ua_browse_path bp;
    struct ua_translate_browse_paths_to_node_ids_response resp;

    bp.starting_node = start;
    bp.relative_path.n_elements = n;
    bp.relative_path.elements = el;
    ck_assert_uint_eq(translate(&bp, 1, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, 1);
    return resp.results[0];
}

START_TEST(test_translate_root_objects_server)
{
    struct ua_relative_path_element el[2];
    struct ua_browse_path_result    r;

    el[0] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, false, 0, "Objects");
    el[1] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, false, 0, "Server");
    r = translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_targets, 1);
    ck_assert_uint_eq(r.targets[0].target_id.node.id.num, UA_NS0ID_SERVER);
    ck_assert_uint_eq(r.targets[0].remaining_path_index, UINT32_MAX);
    /* Exact Organizes works too; HasComponent does not. */
    el[0] = rpe(UA_NS0ID_ORGANIZES, false, false, 0, "Objects");
    el[1] = rpe(UA_NS0ID_ORGANIZES, false, false, 0, "Server");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2)
                          .status_code, UA_GOOD);
    el[1] = rpe(UA_NS0ID_HASCOMPONENT, false, false, 0, "Server");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2)
                          .status_code, UA_BAD_NO_MATCH);
    /* Null reference type: any reference. */
    el[0] = rpe(0, false, false, 0, "Objects");
    el[1] = rpe(0, false, false, 0, "Server");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2)
                          .status_code, UA_GOOD);
    /* Backwards: Server -> (inverse) Objects. */
    el[0] = rpe(UA_NS0ID_ORGANIZES, false, true, 0, "Objects");
    r = translate1(fx_ns0(UA_NS0ID_SERVER), el, 1);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_uint_eq(r.targets[0].target_id.node.id.num,
                      UA_NS0ID_OBJECTSFOLDER);
}
END_TEST

START_TEST(test_translate_demo)
{
    struct ua_relative_path_element el[5];
    struct ua_browse_path_result    r;

    el[0] = rpe(UA_NS0ID_ORGANIZES, false, false, 0, "Objects");
    el[1] = rpe(UA_NS0ID_ORGANIZES, false, false, 1, "Demo");
    el[2] = rpe(UA_NS0ID_ORGANIZES, false, false, 1, "Static");
    el[3] = rpe(UA_NS0ID_ORGANIZES, false, false, 1, "Scalar");
    el[4] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, false, 1, "Int32");
    r = translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 5);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_targets, 1);
    ck_assert_uint_eq(r.targets[0].target_id.node.ns, 1);
    ck_assert(ua_string_eq(&r.targets[0].target_id.node.id.str,
                           "Demo.Static.Scalar.Int32"));
    /* The namespace of a BrowseName counts. */
    el[1] = rpe(UA_NS0ID_ORGANIZES, false, false, 0, "Demo");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 5)
                          .status_code, UA_BAD_NO_MATCH);
}
END_TEST

START_TEST(test_translate_errors)
{
    struct ua_relative_path_element el[3];
    struct ua_browse_path           bp[3];
    struct ua_translate_browse_paths_to_node_ids_response resp;

    el[0] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, false, 0, "Objects");
    el[1] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, false, 0, "Nope");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2)
                          .status_code, UA_BAD_NO_MATCH);
    ck_assert_uint_eq(translate1(fx_ns1("nope"), el, 1).status_code,
                      UA_BAD_NODE_ID_UNKNOWN);
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 0)
                          .status_code, UA_BAD_NOTHING_TO_DO);
    el[1] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, false, 0, "");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2)
                          .status_code, UA_BAD_BROWSE_NAME_INVALID);
    el[1].target_name.name.len = -1;
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 2)
                          .status_code, UA_BAD_BROWSE_NAME_INVALID);
    /* An unknown reference type, and a node that is not one. */
    el[0] = rpe(999999, true, false, 0, "Objects");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 1)
                          .status_code, UA_BAD_NO_MATCH);
    el[0] = rpe(UA_NS0ID_SERVER, true, false, 0, "Objects");
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, 1)
                          .status_code, UA_BAD_NO_MATCH);
    /* Service level. */
    ck_assert_uint_eq(translate(bp, 0, &resp), UA_BAD_NOTHING_TO_DO);
}
END_TEST

START_TEST(test_translate_long_paths)
{
    uint32_t lim = fx.w.conf->max_translate_path_elements;
    int32_t                          n = 8000;
    struct ua_relative_path_element *el = calloc((size_t)n, sizeof(*el));
    struct ua_browse_path_result     r;

    for (int32_t i = 0; i < n; i++)
        el[i] = rpe(UA_NS0ID_HIERARCHICALREFERENCES, true, i % 2 != 0, 0,
                    i % 2 ? "Root" : "Objects");
    /* docs/security.md case 67: 8000 elements, refused without walking. */
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, n)
                          .status_code, UA_BAD_TOO_MANY_OPERATIONS);
    ck_assert_uint_eq(translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el,
                                 (int32_t)lim + 1).status_code,
                      UA_BAD_TOO_MANY_OPERATIONS);
    /* At the limit it is walked: Root, Objects, Root, ... */
    r = translate1(fx_ns0(UA_NS0ID_ROOTFOLDER), el, (int32_t)lim);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_targets, 1);
    ck_assert_uint_eq(r.targets[0].target_id.node.id.num,
                      lim % 2 ? UA_NS0ID_OBJECTSFOLDER : UA_NS0ID_ROOTFOLDER);
    free(el);
}
END_TEST

START_TEST(test_translate_many_paths)
{
    uint32_t                         max = fx.w.conf->max_nodes_per_translate;
    struct ua_browse_path           *bp = calloc(max + 1, sizeof(*bp));
    struct ua_relative_path_element  el;
    struct ua_translate_browse_paths_to_node_ids_response resp;

    el = rpe(UA_NS0ID_ORGANIZES, false, false, 0, "Objects");
    for (uint32_t i = 0; i <= max; i++) {
        bp[i].starting_node = fx_ns0(UA_NS0ID_ROOTFOLDER);
        bp[i].relative_path.n_elements = 1;
        bp[i].relative_path.elements = &el;
    }
    ck_assert_uint_eq(translate(bp, (int32_t)max, &resp), UA_GOOD);
    ck_assert_int_eq(resp.n_results, (int32_t)max);
    ck_assert_uint_eq(resp.results[max - 1].status_code, UA_GOOD);
    ck_assert_uint_eq(translate(bp, (int32_t)max + 1, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    free(bp);
}
END_TEST

/* ------------------------------------------------------------ Register */

START_TEST(test_register_nodes)
{
    uint32_t max = fx.w.conf->max_nodes_per_register_nodes;
    struct ua_nodeid                 *ids = calloc(max + 1, sizeof(*ids));
    struct ua_register_nodes_request  req;
    struct ua_register_nodes_response resp;
    struct ua_unregister_nodes_request  ureq;
    struct ua_unregister_nodes_response uresp;

    for (uint32_t i = 0; i <= max; i++)
        ids[i] = i % 2 ? fx_ns1("v3") : fx_ns0(UA_NS0ID_SERVER);
    memset(&req, 0, sizeof(req));
    req.n_nodes_to_register = 3;
    req.nodes_to_register = ids;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_REGISTERNODESREQUEST, &req,
                              UA_TYPE_REGISTERNODESRESPONSE, &resp),
                      UA_GOOD);
    ck_assert_int_eq(resp.n_registered_node_ids, 3);
    ck_assert(ua_nodeid_equal(&resp.registered_node_ids[1], &ids[1]));
    ck_assert_uint_eq(wk_session_find_by_token(&fx.w, &tok)->registered, 3);
    req.n_nodes_to_register = (int32_t)max + 1;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_REGISTERNODESREQUEST, &req,
                              UA_TYPE_REGISTERNODESRESPONSE, &resp),
                      UA_BAD_TOO_MANY_OPERATIONS);
    req.n_nodes_to_register = 0;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_REGISTERNODESREQUEST, &req,
                              UA_TYPE_REGISTERNODESRESPONSE, &resp),
                      UA_BAD_NOTHING_TO_DO);
    memset(&ureq, 0, sizeof(ureq));
    ureq.n_nodes_to_unregister = 2;
    ureq.nodes_to_unregister = ids;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_UNREGISTERNODESREQUEST,
                              &ureq, UA_TYPE_UNREGISTERNODESRESPONSE,
                              &uresp), UA_GOOD);
    ureq.n_nodes_to_unregister = 0;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_UNREGISTERNODESREQUEST,
                              &ureq, UA_TYPE_UNREGISTERNODESRESPONSE,
                              &uresp), UA_BAD_NOTHING_TO_DO);
    ureq.n_nodes_to_unregister = (int32_t)max + 1;
    ck_assert_uint_eq(fx_call(CH, &tok, UA_TYPE_UNREGISTERNODESREQUEST,
                              &ureq, UA_TYPE_UNREGISTERNODESRESPONSE,
                              &uresp), UA_BAD_TOO_MANY_OPERATIONS);
    free(ids);
}
END_TEST


/* ------------------------------------------------------------ budget */

static void
tweak_big(struct shm_config *c)
{
    /* Budget: 10 nodes x 10000 references = 100000 examined (on the
     * segment of 150,000 variables, big.seg). */
    c->max_nodes_per_browse = 10;
    c->max_references_per_node = 10000;
}

START_TEST(test_scan_budget)
{
    struct ua_browse_description   d;
    struct ua_browse_result        r;
    struct ua_browse_next_response nr;
    struct ua_relative_path_element el[3];
    struct ua_string               cp;
    int                            calls = 1;

    fx_teardown();
    fx_setup_seg("big.seg", tweak_big);
    tok = fx_session(CH);
    /* Methods under Demo/Vars: none, but every reference is examined.  The
     * first page stops at the budget and hands out a point; the next one
     * finishes, empty. */
    d = bdesc(fx_ns1("Demo.Vars"), UA_BROWSEDIRECTION_FORWARD, 0, false);
    d.node_class_mask = UA_NODECLASS_METHOD;
    r = browse1(d, 0);
    ck_assert_uint_eq(r.status_code, UA_GOOD);
    ck_assert_int_eq(r.n_references, 0);
    ck_assert_int_eq(r.continuation_point.len, WK_SESSION_CP_BYTES);
    cp = r.continuation_point;
    while (cp.len > 0) {
        ck_assert_uint_eq(browse_next(&tok, false, &cp, 1, &nr), UA_GOOD);
        ck_assert_uint_eq(nr.results[0].status_code, UA_GOOD);
        ck_assert_int_eq(nr.results[0].n_references, 0);
        cp = nr.results[0].continuation_point;
        calls++;
    }
    ck_assert_int_eq(calls, 2);
    ck_assert_uint_eq(wk_session_find_by_token(&fx.w, &tok)->ncps, 0);
    /* Variables: full pages, unaffected. */
    d.node_class_mask = UA_NODECLASS_VARIABLE;
    r = browse1(d, 0);
    ck_assert_int_eq(r.n_references, 10000);
    /* Translate: one folder of 150000 is past the budget. */
    el[0] = rpe(UA_NS0ID_ORGANIZES, false, true, 1, "Vars");
    ck_assert_uint_eq(translate1(fx_ns1("v7"), el, 1).status_code, UA_GOOD);
    el[1] = rpe(UA_NS0ID_ORGANIZES, false, false, 1, "v7");
    ck_assert_uint_eq(translate1(fx_ns1("v7"), el, 2).status_code,
                      UA_BAD_QUERY_TOO_COMPLEX);
    /* A path refused for its cost spends nothing: the request's other
     * paths still resolve. */
    {
        struct ua_browse_path bp[2];
        struct ua_translate_browse_paths_to_node_ids_response resp;

        el[2] = rpe(UA_NS0ID_ORGANIZES, false, false, 0, "Objects");
        bp[0].starting_node = fx_ns1("v7");
        bp[0].relative_path.n_elements = 2;
        bp[0].relative_path.elements = el;
        bp[1].starting_node = fx_ns0(UA_NS0ID_ROOTFOLDER);
        bp[1].relative_path.n_elements = 1;
        bp[1].relative_path.elements = &el[2];
        ck_assert_uint_eq(translate(bp, 2, &resp), UA_GOOD);
        ck_assert_uint_eq(resp.results[0].status_code,
                          UA_BAD_QUERY_TOO_COMPLEX);
        ck_assert_uint_eq(resp.results[1].status_code, UA_GOOD);
    }
}
END_TEST

/* ------------------------------------------------------- Browse cache */

/* a and b (n results each) carry the same statuses, references (compared
 * encoded) and continuation points (present or not: ids differ). */
static void
same_results(const struct ua_browse_result *a,
             const struct ua_browse_result *b, int32_t n)
{
    static uint8_t ea[1 << 16], eb[1 << 16];
    size_t         la, lb;

    for (int32_t i = 0; i < n; i++) {
        ck_assert_uint_eq(a[i].status_code, b[i].status_code);
        ck_assert_int_eq(a[i].n_references, b[i].n_references);
        ck_assert_int_eq(a[i].continuation_point.len,
                         b[i].continuation_point.len);
        for (int32_t j = 0; j < a[i].n_references; j++) {
            const struct ua_type *t =
                &ua_types[UA_TYPE_REFERENCEDESCRIPTION];

            ck_assert_uint_eq(ua_encode(&a[i].references[j], t, ea,
                                        sizeof(ea), &la), UA_GOOD);
            ck_assert_uint_eq(ua_encode(&b[i].references[j], t, eb,
                                        sizeof(eb), &lb), UA_GOOD);
            ck_assert_uint_eq(la, lb);
            ck_assert_mem_eq(ea, eb, la);
        }
    }
}

/* Browse d (n operations) with the cache set aside, then twice with it:
 * every answer the same; the hits the second run added (the first run's
 * in *fill_hits when not NULL). */
static uint64_t
cache_vs_walk(struct ua_browse_description *d, int32_t n, uint32_t max,
              uint64_t *fill_hits)
{
    struct ua_browse_response walk, fill, hit;
    struct wk_bcache         *bc = fx.w.bcache;
    uint64_t                  h0;

    fx.w.bcache = NULL;
    ck_assert_uint_eq(browse_n(&tok, d, n, max, &walk), UA_GOOD);
    fx.w.bcache = bc;
    h0 = wk_svc_browse_cache_hits(&fx.w);
    ck_assert_uint_eq(browse_n(&tok, d, n, max, &fill), UA_GOOD);
    if (fill_hits != NULL)
        *fill_hits = wk_svc_browse_cache_hits(&fx.w) - h0;
    h0 = wk_svc_browse_cache_hits(&fx.w);
    ck_assert_uint_eq(browse_n(&tok, d, n, max, &hit), UA_GOOD);
    ck_assert_int_eq(walk.n_results, n);
    ck_assert_int_eq(fill.n_results, n);
    ck_assert_int_eq(hit.n_results, n);
    same_results(walk.results, fill.results, n);
    same_results(walk.results, hit.results, n);
    return wk_svc_browse_cache_hits(&fx.w) - h0;
}

START_TEST(test_cache_same_answers)
{
    struct ua_browse_description d[6];

    ck_assert_ptr_nonnull(fx.w.bcache);
    d[0] = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_BOTH, 0, false);
    d[1] = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                 UA_NS0ID_HIERARCHICALREFERENCES, true);
    d[2] = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_INVERSE, 0,
                 false);
    d[3] = d[1];
    d[3].node_class_mask = UA_NODECLASS_VARIABLE;
    d[3].result_mask = UA_BROWSERESULTMASK_BROWSENAME
                       | UA_BROWSERESULTMASK_TYPEDEFINITION;
    d[4] = bdesc(fx_ns1("Demo.Static.Scalar"), UA_BROWSEDIRECTION_FORWARD,
                 0, false);
    d[5] = bdesc(fx_ns0(UA_NS0ID_OBJECTSFOLDER), UA_BROWSEDIRECTION_FORWARD,
                 UA_NS0ID_ORGANIZES, false);
    /* Each operation alone, then all in one request. */
    for (int32_t i = 0; i < 6; i++)
        ck_assert_uint_eq(cache_vs_walk(&d[i], 1, 0, NULL), 1);
    ck_assert_uint_eq(cache_vs_walk(d, 6, 0, NULL), 6);
    /* Same node, other resultMask or direction: other entries, still
     * answered right (a key missing a parameter would mix them up). */
    d[0].result_mask = UA_BROWSERESULTMASK_NODECLASS;
    ck_assert_uint_eq(cache_vs_walk(&d[0], 1, 0, NULL), 1);
    d[0].browse_direction = UA_BROWSEDIRECTION_FORWARD;
    ck_assert_uint_eq(cache_vs_walk(&d[0], 1, 0, NULL), 1);
}
END_TEST

START_TEST(test_cache_page_size)
{
    struct ua_browse_description d;
    struct ua_browse_result      r;
    uint64_t                     h0;

    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    r = browse1(d, 0);                  /* fills the entry */
    ck_assert_int_eq(r.n_references, SERVER_FWD_HIER);
    h0 = wk_svc_browse_cache_hits(&fx.w);
    /* A smaller page: the walk, with a continuation point. */
    r = browse1(d, SERVER_FWD_HIER - 1);
    ck_assert_uint_eq(wk_svc_browse_cache_hits(&fx.w), h0);
    ck_assert_int_eq(r.n_references, SERVER_FWD_HIER - 1);
    ck_assert_int_eq(r.continuation_point.len, WK_SESSION_CP_BYTES);
    /* Exactly the size: from the cache, no point. */
    r = browse1(d, SERVER_FWD_HIER);
    ck_assert_uint_eq(wk_svc_browse_cache_hits(&fx.w), h0 + 1);
    ck_assert_int_eq(r.n_references, SERVER_FWD_HIER);
    ck_assert_int_eq(r.continuation_point.len, -1);
    ck_assert(has_target(&r, UA_NS0ID_SERVER_SERVERSTATUS));
}
END_TEST

static void
tweak_budget(struct shm_config *c)
{
    /* Budget 16384 x 4 = 65536 references examined per request. */
    c->max_nodes_per_browse = 16384;
    c->max_references_per_node = 4;
}

START_TEST(test_cache_budget)
{
    enum { N = 2600 };              /* 2600 x 26 references > 65536 */
    static struct ua_browse_description d[N];

    fx_teardown();
    fx_setup_with(tweak_budget);
    tok = fx_session(CH);
    /* The Server's 4 Methods out of its 26 references: a whole result
     * that fits the page, but each costs 26 of the budget.  Cached or not,
     * the operations past the budget end early with a continuation point
     * (as many as the session holds), then BadNoContinuationPoints. */
    for (int i = 0; i < N; i++) {
        d[i] = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_BOTH, 0,
                     false);
        d[i].node_class_mask = UA_NODECLASS_METHOD;
    }
    {
        struct ua_browse_response walk, hit;
        struct wk_bcache         *bc = fx.w.bcache;
        struct ua_nodeid          tok_b = fx_session(CH_B);
        struct ua_browse_request  req;
        uint64_t                  h0;

        fx.w.bcache = NULL;
        ck_assert_uint_eq(browse_n(&tok, d, N, 0, &walk), UA_GOOD);
        fx.w.bcache = bc;
        h0 = wk_svc_browse_cache_hits(&fx.w);
        memset(&req, 0, sizeof(req));
        req.n_nodes_to_browse = N;
        req.nodes_to_browse = d;
        ck_assert_uint_eq(fx_call(CH_B, &tok_b, UA_TYPE_BROWSEREQUEST, &req,
                                  UA_TYPE_BROWSERESPONSE, &hit), UA_GOOD);
        same_results(walk.results, hit.results, N);
        ck_assert_uint_eq(walk.results[0].status_code, UA_GOOD);
        ck_assert_int_eq(walk.results[0].n_references, 4);
        ck_assert_int_eq(walk.results[N - 1].n_references, 0);
        ck_assert_uint_eq(walk.results[N - 1].status_code,
                          UA_BAD_NO_CONTINUATION_POINTS);
        /* The first filled the entry, the rest within budget hit. */
        ck_assert_uint_eq(wk_svc_browse_cache_hits(&fx.w) - h0,
                          65536 / 26 - 1);
    }
}
END_TEST

static void
tweak_no_cache(struct shm_config *c)
{
    c->browse_cache_kb = 0;
}

/* limits.browse_cache_kb = 0: no cache; every Browse walks, and answers
 * as before. */
START_TEST(test_cache_off)
{
    struct ua_browse_description d;
    struct ua_browse_result      r;

    fx_teardown();
    fx_setup_with(tweak_no_cache);
    tok = fx_session(CH);
    d = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
              UA_NS0ID_HIERARCHICALREFERENCES, true);
    for (int i = 0; i < 3; i++) {
        r = browse1(d, 0);
        ck_assert_int_eq(r.n_references, SERVER_FWD_HIER);
        ck_assert(has_target(&r, UA_NS0ID_SERVER_SERVERSTATUS));
    }
    ck_assert_uint_eq(wk_svc_browse_cache_hits(&fx.w), 0);
}
END_TEST

static void
tweak_one_entry(struct shm_config *c)
{
    c->browse_cache_kb = 4;         /* one entry: every key shares it */
}

START_TEST(test_cache_refilled_in_request)
{
    struct ua_browse_description d[3];
    uint64_t                     fill;

    fx_teardown();
    fx_setup_with(tweak_one_entry);
    tok = fx_session(CH);
    d[0] = bdesc(fx_ns0(UA_NS0ID_SERVER), UA_BROWSEDIRECTION_FORWARD,
                 UA_NS0ID_HIERARCHICALREFERENCES, true);
    d[1] = bdesc(fx_ns0(UA_NS0ID_OBJECTSFOLDER), UA_BROWSEDIRECTION_FORWARD,
                 0, false);
    d[2] = d[0];
    /* Fill with d[0]; then d[0] hits and d[1] refills the one entry in the
     * same request: d[0]'s answer must not change under it. */
    browse1(d[0], 0);
    ck_assert_uint_eq(cache_vs_walk(d, 2, 0, &fill), 0);
    ck_assert_uint_eq(fill, 1);
    /* d[0], d[1], d[0]: the third finds d[1]'s entry, walks, refills
     * (so each run starts with d[0]'s entry: one hit each). */
    browse1(d[0], 0);
    ck_assert_uint_eq(cache_vs_walk(d, 3, 0, &fill), 1);
    ck_assert_uint_eq(fill, 1);
}
END_TEST

static Suite *
svc_browse_suite(void)
{
    Suite *s = suite_create("worker/svc_browse");
    TCase *tc;

    tc = tcase_create("browse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_browse_server_subtypes);
    tcase_add_test(tc, test_browse_server_exact_types);
    tcase_add_test(tc, test_browse_direction);
    tcase_add_test(tc, test_browse_masks);
    tcase_add_test(tc, test_browse_errors);
    tcase_add_test(tc, test_browse_too_many_operations);
    suite_add_tcase(s, tc);

    tc = tcase_create("continuation points");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_browse_paging);
    tcase_add_test(tc, test_no_continuation_points);
    tcase_add_test(tc, test_forged_and_foreign_points);
    tcase_add_test(tc, test_points_die_with_session);
    suite_add_tcase(s, tc);

    tc = tcase_create("translate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_translate_root_objects_server);
    tcase_add_test(tc, test_translate_demo);
    tcase_add_test(tc, test_translate_errors);
    tcase_add_test(tc, test_translate_long_paths);
    tcase_add_test(tc, test_translate_many_paths);
    suite_add_tcase(s, tc);

    tc = tcase_create("register");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_register_nodes);
    suite_add_tcase(s, tc);

    tc = tcase_create("budget");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_scan_budget);
    tcase_add_test(tc, test_cache_same_answers);
    tcase_add_test(tc, test_cache_page_size);
    tcase_add_test(tc, test_cache_off);
    tcase_add_test(tc, test_cache_budget);
    tcase_add_test(tc, test_cache_refilled_in_request);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(svc_browse_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
