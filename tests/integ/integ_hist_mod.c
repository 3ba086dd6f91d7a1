/*
 * tests/integ/integ_hist_mod.c: modified values and annotations (issue 18
 * items 3 and 4) through the whole server, on loopback.
 *
 *   1. starts `uabroker -w 1` with history.nodes = v1 v2 and a users file
 *      with an operator and a viewer;
 *   2. as the operator, HistoryUpdate Insert of ten values into v1, a
 *      Replace and an Update of one, a DeleteAtTime of another and a
 *      DeleteRawModified of two more, each answered as Part 11 §6.9
 *      says;
 *   3. HistoryRead raw with isReadModified (Part 11 §6.5.3.3): every
 *      change in time order, HistoryModifiedData with one
 *      ModificationInfo per value: the inserted values (Insert), the
 *      replaced one's old value (Replace) with the operator's name, the
 *      updated one's old value (Update), the deleted ones (Delete);
 *      backwards; paged by numValuesPerNode with continuation points
 *      giving the same values, a released point refused; returnBounds
 *      with it BadInvalidArgument; a plain raw read still the current
 *      values;
 *   4. DeleteRawModified with isDeleteModified forgets the modified
 *      values of a range, the raw values untouched;
 *   5. annotations through v1's Annotations Property (found by Browse,
 *      DataType Annotation): Insert GoodEntryInserted, again
 *      BadEntryExists, another user's at the same time inserted, Replace
 *      of one that is not there BadNoEntryExists, Update replacing
 *      GoodEntryReplaced, Remove Good; a raw read of the property gives
 *      them back in time order (HistoryData of Annotation values with
 *      their messages and users); the store's AnnotationCount counts
 *      them;
 *   6. bad input: an unknown node BadNodeIdUnknown, a node that is not
 *      historized BadHistoryOperationUnsupported, a value that is no
 *      Annotation BadTypeMismatch, one without a SourceTimestamp
 *      BadInvalidTimestamp, PerformUpdateType 5
 *      BadHistoryOperationInvalid;
 *   7. the viewer: every HistoryUpdate BadUserAccessDenied, the reads
 *      allowed;
 *   8. /stats "history" counts the modified values and the 3 annotations
 *      kept and their bytes; /metrics has them;
 *   9. ReadAnnotationDataDetails (Part 11 §6.5.6): the annotations at
 *      each requested time in the request's order (v1 and its
 *      Annotations Property alike), GoodNoData at a time without any,
 *      BadHistoryOperationUnsupported on a variable that is not
 *      historized, no reqTimes BadHistoryOperationInvalid;
 *  10. restarted with history.max_return_values = 2 on the same store:
 *      ReadAnnotationData pages of 2 annotations through continuation
 *      points, also inside one time's annotations; a released point
 *      refused; 3 reqTimes BadTooManyOperations.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_hist_mod: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "proto/arena.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/ihist.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IM_WATCHDOG_S  120
#define IM_START_MS    30000
#define IM_SEC         INT64_C(10000000)
/* 2001-01-01 12:00:00 UTC, long before any live value. */
#define IM_T0          INT64_C(126228240000000000)
#define IM_ARENA       (4u << 20)

static struct ihist im;

/* One HistoryUpdate of one details in a fresh arena. */
static ua_status
im_update(struct uaconn *c, const struct ua_type *t, uint32_t enc, void *d,
          struct ua_history_update_result *res)
{
    ua_arena_reset(&im.arena);
    return ihist_update(c, &im.arena, t, enc, d, res);
}

/* UpdateDataDetails of node with n Doubles v at times t (seconds after
 * IM_T0): the details' status, the first value's into *first. */
static ua_status
im_data(struct uaconn *c, const char *node, int op, const double *v,
        const int *t, int n, uint32_t *first)
{
    struct ua_update_data_details   u;
    struct ua_history_update_result res;
    struct ua_datavalue             dv[16];
    double                          vv[16];
    ua_status                       s;

    for (int i = 0; i < n; i++) {
        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].value.ndims = -1;
        dv[i].mask = UA_DV_VALUE | UA_DV_SOURCE_TS;
        dv[i].source_ts = IM_T0 + t[i] * IM_SEC;
        vv[i] = v[i];
        ua_variant_set_scalar(&dv[i].value, &vv[i], UA_BT_DOUBLE);
    }
    memset(&u, 0, sizeof(u));
    u.node_id = ihist_node(node);
    u.perform_insert_replace = op;
    u.n_update_values = n;
    u.update_values = dv;
    s = im_update(c, &ua_types[UA_TYPE_UPDATEDATADETAILS],
                  UA_NS0ID_UPDATEDATADETAILS_ENCODING_DEFAULTBINARY, &u,
                  &res);
    *first = s == UA_GOOD && res.n_operation_results > 0
                 ? res.operation_results[0] : 0xFFFFFFFFu;
    if (s == UA_GOOD && res.n_operation_results == n)
        for (int i = 1; i < n; i++)
            if (res.operation_results[i] != *first)
                *first = 0xFFFFFFFEu;
    return s == UA_GOOD ? res.status_code : s;
}

/* An annotation DataValue: msg by user at t seconds (no timestamp when t
 * is negative); not an Annotation when bad. */
static void
im_annot_dv(struct ua_datavalue *dv, struct ua_extobj *eo,
            struct ua_annotation *an, const char *msg, const char *user,
            int t, bool bad)
{
    static double d = 1.5;

    memset(an, 0, sizeof(*an));
    an->message = ua_string_from(msg);
    an->user_name = ua_string_from(user);
    an->annotation_time = IM_T0 + 86400 * IM_SEC;
    memset(eo, 0, sizeof(*eo));
    eo->encoding = UA_EO_DECODED;
    eo->type = &ua_types[UA_TYPE_ANNOTATION];
    eo->obj = an;
    memset(dv, 0, sizeof(*dv));
    dv->value.ndims = -1;
    dv->mask = UA_DV_VALUE;
    if (t >= 0) {
        dv->mask |= UA_DV_SOURCE_TS;
        dv->source_ts = IM_T0 + t * IM_SEC;
    }
    if (bad)
        ua_variant_set_scalar(&dv->value, &d, UA_BT_DOUBLE);
    else
        ua_variant_set_scalar(&dv->value, eo, UA_BT_EXTENSIONOBJECT);
}

/* UpdateStructureDataDetails of one annotation: the details' status, the
 * value's into *op_st. */
static ua_status
im_annot(struct uaconn *c, const char *node, int op, const char *msg,
         const char *user, int t, bool bad, uint32_t *op_st)
{
    struct ua_update_structure_data_details u;
    struct ua_history_update_result         res;
    struct ua_datavalue                     dv;
    struct ua_extobj                        eo;
    struct ua_annotation                    an;
    ua_status                               s;

    im_annot_dv(&dv, &eo, &an, msg, user, t, bad);
    memset(&u, 0, sizeof(u));
    u.node_id = ihist_node(node);
    u.perform_insert_replace = op;
    u.n_update_values = 1;
    u.update_values = &dv;
    s = im_update(c, &ua_types[UA_TYPE_UPDATESTRUCTUREDATADETAILS],
                  UA_NS0ID_UPDATESTRUCTUREDATADETAILS_ENCODING_DEFAULTBINARY,
                  &u, &res);
    *op_st = s == UA_GOOD && res.n_operation_results == 1
                 ? res.operation_results[0] : 0xFFFFFFFFu;
    return s == UA_GOOD ? res.status_code : s;
}

/* A raw HistoryRead of node: the call's status (or the node's), the
 * result into *res (in im.arena). */
static ua_status
im_read(struct uaconn *c, const char *node, bool modified, int from,
        int to, uint32_t nvals, bool bounds, const struct ua_string *cp,
        bool release, struct ua_history_read_result *res)
{
    struct ua_read_raw_modified_details d;
    struct ua_nodeid                    id = ihist_node(node);

    memset(&d, 0, sizeof(d));
    d.is_read_modified = modified;
    d.start_time = from >= 0 ? IM_T0 + from * IM_SEC : 0;
    d.end_time = to >= 0 ? IM_T0 + to * IM_SEC : 0;
    d.num_values_per_node = nvals;
    d.return_bounds = bounds;
    return ihist_read(c, &im.arena, &id,
                      &ua_types[UA_TYPE_READRAWMODIFIEDDETAILS],
                      UA_NS0ID_READRAWMODIFIEDDETAILS_ENCODING_DEFAULTBINARY,
                      &d, UA_TIMESTAMPSTORETURN_BOTH, cp, release, res);
}

static double
im_double(const struct ua_datavalue *dv)
{
    return (dv->mask & UA_DV_VALUE) && dv->value.type == UA_BT_DOUBLE
                   && dv->value.data != NULL
               ? *(const double *)dv->value.data : -1;
}

static bool
im_str_is(const struct ua_string *s, const char *want)
{
    return s->len == (int32_t)strlen(want)
           && memcmp(s->data, want, (size_t)s->len) == 0;
}

/* The modified values expected after step 2, in time order. */
struct im_mod {
    int    t;
    double v;
    int    type;
};

static const struct im_mod im_mods[] = {
    { 0, 0, 1 }, { 1, 1, 1 }, { 2, 2, 1 },
    { 3, 3, 1 }, { 3, 3, 2 }, { 3, 30, 3 },
    { 4, 4, 1 }, { 5, 5, 1 }, { 5, 5, 4 },
    { 6, 6, 1 }, { 7, 7, 1 }, { 7, 7, 4 },
    { 8, 8, 1 }, { 8, 8, 4 }, { 9, 9, 1 },
};
#define IM_NMODS (int)(sizeof im_mods / sizeof im_mods[0])

/* Modified values page hm against im_mods from at (reverse: backwards):
 * the number that match. */
static int
im_mods_match(const struct ua_history_modified_data *hm, int at, bool rev)
{
    int ok = 0;

    if (hm->n_modification_infos != hm->n_data_values)
        return -1;
    for (int i = 0; i < hm->n_data_values; i++) {
        const struct im_mod *m = &im_mods[rev ? IM_NMODS - 1 - (at + i)
                                              : at + i];
        const struct ua_datavalue         *dv = &hm->data_values[i];
        const struct ua_modification_info *mi = &hm->modification_infos[i];

        if (dv->source_ts == IM_T0 + m->t * IM_SEC && im_double(dv) == m->v
            && mi->update_type == m->type
            && im_str_is(&mi->user_name, "op")
            && mi->modification_time > IM_T0)
            ok++;
        else
            fprintf(stderr, "# modified %d: t %lld v %g type %d\n", at + i,
                    (long long)((dv->source_ts - IM_T0) / IM_SEC),
                    im_double(dv), mi->update_type);
    }
    return ok;
}

static const struct ua_history_modified_data *
im_hm(const struct ua_history_read_result *r)
{
    if (r->history_data.encoding != UA_EO_DECODED
        || r->history_data.type != &ua_types[UA_TYPE_HISTORYMODIFIEDDATA])
        return NULL;
    return r->history_data.obj;
}

static const struct ua_history_data *
im_hd(const struct ua_history_read_result *r)
{
    if (r->history_data.encoding != UA_EO_DECODED
        || r->history_data.type != &ua_types[UA_TYPE_HISTORYDATA])
        return NULL;
    return r->history_data.obj;
}

static void
im_step_updates(struct uaconn *c)
{
    static const double v[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    static const int    t[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    struct ua_delete_at_time_details      da;
    struct ua_delete_raw_modified_details dr;
    struct ua_history_update_result       res;
    double                                x;
    int                                   at;
    uint32_t                              st;
    ua_status                             s;
    int64_t                               when;

    s = im_data(c, "v1", 1, v, t, 10, &st);
    itest_check(s == UA_GOOD && st == UA_GOOD_ENTRY_INSERTED,
                "ten values inserted (0x%08X, 0x%08X)", s, st);
    x = 30;
    at = 3;
    s = im_data(c, "v1", 2, &x, &at, 1, &st);
    itest_check(s == UA_GOOD && st == UA_GOOD_ENTRY_REPLACED,
                "Replace: GoodEntryReplaced (0x%08X, 0x%08X)", s, st);
    x = 31;
    s = im_data(c, "v1", 3, &x, &at, 1, &st);
    itest_check(s == UA_GOOD && st == UA_GOOD_ENTRY_REPLACED,
                "Update: GoodEntryReplaced (0x%08X, 0x%08X)", s, st);
    memset(&da, 0, sizeof(da));
    da.node_id = ihist_node("v1");
    when = IM_T0 + 5 * IM_SEC;
    da.n_req_times = 1;
    da.req_times = &when;
    s = im_update(c, &ua_types[UA_TYPE_DELETEATTIMEDETAILS],
                  UA_NS0ID_DELETEATTIMEDETAILS_ENCODING_DEFAULTBINARY, &da,
                  &res);
    itest_check(s == UA_GOOD && res.n_operation_results == 1
                    && res.operation_results[0] == UA_GOOD,
                "DeleteAtTime: Good (0x%08X)", s);
    memset(&dr, 0, sizeof(dr));
    dr.node_id = ihist_node("v1");
    dr.start_time = IM_T0 + 7 * IM_SEC;
    dr.end_time = IM_T0 + 9 * IM_SEC;
    s = im_update(c, &ua_types[UA_TYPE_DELETERAWMODIFIEDDETAILS],
                  UA_NS0ID_DELETERAWMODIFIEDDETAILS_ENCODING_DEFAULTBINARY,
                  &dr, &res);
    itest_check(s == UA_GOOD && res.status_code == UA_GOOD,
                "DeleteRawModified: Good (0x%08X, 0x%08X)", s,
                res.status_code);
}

static void
im_step_read_modified(struct uaconn *c)
{
    struct ua_history_read_result          r;
    const struct ua_history_modified_data *hm;
    const struct ua_history_data          *hd;
    struct ua_string                       cp = { -1, NULL };
    uint8_t                                cpb[64];
    int                                    got = 0, ok = 0, pages = 0;
    ua_status                              s;

    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", true, 0, 20, 0, false, NULL, false, &r);
    hm = im_hm(&r);
    itest_check(s == UA_GOOD && hm != NULL && hm->n_data_values == IM_NMODS
                    && im_mods_match(hm, 0, false) == IM_NMODS,
                "isReadModified: %d changes in time order, each with its "
                "ModificationInfo (Insert new, Replace / Update / Delete "
                "old, user op) (0x%08X, %d)", IM_NMODS, s,
                hm != NULL ? hm->n_data_values : -1);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", true, 20, 0, 0, false, NULL, false, &r);
    hm = im_hm(&r);
    itest_check(s == UA_GOOD && hm != NULL
                    && hm->n_data_values == IM_NMODS - 1
                    && im_mods_match(hm, 0, true) == IM_NMODS - 1,
                "isReadModified backwards (endTime before startTime, "
                "(0 s, 20 s]): the same but the one at 0 s, latest first "
                "(0x%08X)", s);
    /* Pages of 4, through continuation points. */
    do {
        ua_arena_reset(&im.arena);
        s = im_read(c, "v1", true, 0, 20, 4, false,
                    cp.len > 0 ? &cp : NULL, false, &r);
        hm = im_hm(&r);
        if (s != UA_GOOD || hm == NULL)
            break;
        ok += im_mods_match(hm, got, false);
        got += hm->n_data_values;
        pages++;
        cp.len = r.continuation_point.len;
        if (cp.len > 0) {
            memcpy(cpb, r.continuation_point.data, (size_t)cp.len);
            cp.data = cpb;
        }
    } while (cp.len > 0 && pages < 10);
    itest_check(s == UA_GOOD && pages == 4 && got == IM_NMODS
                    && ok == IM_NMODS,
                "numValuesPerNode 4: %d pages through continuation points, "
                "%d values, the same (0x%08X)", pages, got, s);
    /* A released point is refused. */
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", true, 0, 20, 4, false, NULL, false, &r);
    cp.len = r.continuation_point.len;
    if (cp.len > 0) {
        memcpy(cpb, r.continuation_point.data, (size_t)cp.len);
        cp.data = cpb;
    }
    ua_arena_reset(&im.arena);
    (void)im_read(c, "v1", true, 0, 20, 4, false, &cp, true, &r);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", true, 0, 20, 4, false, &cp, false, &r);
    itest_check(cp.len > 0 && s == UA_BAD_CONTINUATION_POINT_INVALID,
                "a released continuation point: "
                "BadContinuationPointInvalid (0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", true, 0, 20, 0, true, NULL, false, &r);
    itest_check(s == UA_BAD_INVALID_ARGUMENT,
                "isReadModified with returnBounds: BadInvalidArgument "
                "(0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", false, 0, 20, 0, false, NULL, false, &r);
    hd = im_hd(&r);
    itest_check(s == UA_GOOD && hd != NULL && hd->n_data_values == 7
                    && im_double(&hd->data_values[3]) == 31,
                "a raw read: the 7 values left, the updated one 31 "
                "(0x%08X, %d)", s, hd != NULL ? hd->n_data_values : -1);
}

static void
im_step_forget(struct uaconn *c)
{
    struct ua_delete_raw_modified_details dr;
    struct ua_history_update_result       res;
    struct ua_history_read_result         r;
    const struct ua_history_modified_data *hm;
    const struct ua_history_data          *hd;
    ua_status                             s;

    memset(&dr, 0, sizeof(dr));
    dr.node_id = ihist_node("v1");
    dr.is_delete_modified = true;
    dr.start_time = IM_T0;
    dr.end_time = IM_T0 + 3 * IM_SEC;
    s = im_update(c, &ua_types[UA_TYPE_DELETERAWMODIFIEDDETAILS],
                  UA_NS0ID_DELETERAWMODIFIEDDETAILS_ENCODING_DEFAULTBINARY,
                  &dr, &res);
    ua_arena_reset(&im.arena);
    (void)im_read(c, "v1", true, 0, 20, 0, false, NULL, false, &r);
    hm = im_hm(&r);
    itest_check(s == UA_GOOD && res.status_code == UA_GOOD && hm != NULL
                    && hm->n_data_values == IM_NMODS - 3,
                "isDeleteModified: the modified values of [0 s, 3 s) "
                "forgotten (0x%08X, 0x%08X, %d left)", s, res.status_code,
                hm != NULL ? hm->n_data_values : -1);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1", false, 0, 20, 0, false, NULL, false, &r);
    hd = im_hd(&r);
    itest_check(s == UA_GOOD && hd != NULL && hd->n_data_values == 7,
                "... the raw values untouched (0x%08X)", s);
}

/* Browse v1's HasProperty references: the Annotations Property. */
static bool
im_browse_property(struct uaconn *c)
{
    struct ua_browse_request     req;
    struct ua_browse_response    resp;
    struct ua_browse_description bd;
    ua_status                    s;

    memset(&bd, 0, sizeof(bd));
    bd.node_id = ihist_node("v1");
    bd.browse_direction = UA_BROWSEDIRECTION_FORWARD;
    bd.reference_type_id.idtype = UA_IDTYPE_NUMERIC;
    bd.reference_type_id.id.num = UA_NS0ID_HASPROPERTY;
    bd.include_subtypes = true;
    bd.result_mask = 0x3F;
    memset(&req, 0, sizeof(req));
    req.request_header.audit_entry_id.len = -1;
    req.view.view_id.idtype = UA_IDTYPE_NUMERIC;
    req.n_nodes_to_browse = 1;
    req.nodes_to_browse = &bd;
    ua_arena_reset(&im.arena);
    s = uaconn_call(c, &ua_types[UA_TYPE_BROWSEREQUEST], &req,
                    &ua_types[UA_TYPE_BROWSERESPONSE], &resp, &im.arena);
    if (s != UA_GOOD || resp.n_results != 1)
        return false;
    for (int32_t i = 0; i < resp.results[0].n_references; i++) {
        const struct ua_reference_description *r =
            &resp.results[0].references[i];

        if (r->browse_name.ns == 0
            && im_str_is(&r->browse_name.name, "Annotations")
            && r->node_id.node.ns == 1
            && r->node_id.node.idtype == UA_IDTYPE_STRING
            && im_str_is(&r->node_id.node.id.str, "v1.Annotations"))
            return true;
    }
    return false;
}

static void
im_step_annotations(struct uaconn *c)
{
    struct ua_history_read_result  r;
    const struct ua_history_data  *hd;
    uint32_t                       st;
    ua_status                      s;
    int                            ok = 0;
    static const char *const       want_msg[3] = { "scan failed", "seen",
                                                   "fixed" };
    static const char *const       want_user[3] = { "op", "tech", "op" };

    itest_check(im_browse_property(c),
                "v1 has an Annotations Property (HasProperty, BrowseName "
                "0:Annotations, ns=1;s=v1.Annotations)");
    s = im_annot(c, "v1.Annotations", 1, "scan failed", "op", 4, false, &st);
    itest_check(s == UA_GOOD && st == UA_GOOD_ENTRY_INSERTED,
                "annotation Insert: GoodEntryInserted (0x%08X, 0x%08X)", s,
                st);
    s = im_annot(c, "v1.Annotations", 1, "scan failed", "op", 4, false, &st);
    itest_check(s == UA_GOOD && st == UA_BAD_ENTRY_EXISTS,
                "the same again: BadEntryExists (0x%08X)", st);
    s = im_annot(c, "v1.Annotations", 1, "seen", "tech", 4, false, &st);
    itest_check(s == UA_GOOD && st == UA_GOOD_ENTRY_INSERTED,
                "another user's at the same time: GoodEntryInserted "
                "(0x%08X)", st);
    s = im_annot(c, "v1.Annotations", 2, "fixed", "op", 6, false, &st);
    itest_check(s == UA_GOOD && st == UA_BAD_NO_ENTRY_EXISTS,
                "Replace of none: BadNoEntryExists (0x%08X)", st);
    s = im_annot(c, "v1.Annotations", 3, "first try", "op", 6, false, &st);
    s = s == UA_GOOD && st == UA_GOOD_ENTRY_INSERTED
            ? im_annot(c, "v1.Annotations", 3, "fixed", "op", 6, false, &st)
            : s;
    itest_check(s == UA_GOOD && st == UA_GOOD_ENTRY_REPLACED,
                "Update inserting, then replacing: GoodEntryReplaced "
                "(0x%08X)", st);
    s = im_annot(c, "v1", 1, "gone soon", "op", 9, false, &st);
    s = s == UA_GOOD && st == UA_GOOD_ENTRY_INSERTED
            ? im_annot(c, "v1.Annotations", 4, "", "op", 9, false, &st)
            : s;
    itest_check(s == UA_GOOD && st == UA_GOOD,
                "through the variable itself, then Remove: Good (0x%08X)",
                st);
    s = im_annot(c, "v1.Annotations", 4, "", "op", 9, false, &st);
    itest_check(s == UA_GOOD && st == UA_BAD_NO_ENTRY_EXISTS,
                "Remove again: BadNoEntryExists (0x%08X)", st);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1.Annotations", false, 0, 20, 0, false, NULL, false,
                &r);
    hd = im_hd(&r);
    for (int32_t i = 0; hd != NULL && i < hd->n_data_values && i < 3; i++) {
        const struct ua_datavalue  *dv = &hd->data_values[i];
        const struct ua_extobj     *eo = dv->value.data;
        const struct ua_annotation *an;

        if (!(dv->mask & UA_DV_VALUE)
            || dv->value.type != UA_BT_EXTENSIONOBJECT || eo == NULL
            || eo->encoding != UA_EO_DECODED
            || eo->type != &ua_types[UA_TYPE_ANNOTATION])
            continue;
        an = eo->obj;
        if (im_str_is(&an->message, want_msg[i])
            && im_str_is(&an->user_name, want_user[i])
            && dv->source_ts == IM_T0 + (i < 2 ? 4 : 6) * IM_SEC)
            ok++;
    }
    itest_check(s == UA_GOOD && hd != NULL && hd->n_data_values == 3
                    && ok == 3,
                "a raw read of the Annotations Property: the 3 annotations "
                "in time order, Annotation values with their messages and "
                "users (0x%08X, %d, %d right)", s,
                hd != NULL ? hd->n_data_values : -1, ok);
    ua_arena_reset(&im.arena);
    s = im_read(c, "v1.Annotations", false, 0, 20, 2, false, NULL, false,
                &r);
    hd = im_hd(&r);
    itest_check(s == UA_GOOD && hd != NULL && hd->n_data_values == 2
                    && r.continuation_point.len > 0,
                "... numValuesPerNode 2: a page and a continuation point "
                "(0x%08X)", s);
}

static void
im_step_bad(struct uaconn *c)
{
    uint32_t  st;
    ua_status s;
    double    x = 1;
    int       t = 1;

    s = im_annot(c, "nope.Annotations", 1, "m", "op", 4, false, &st);
    itest_check(s == UA_BAD_NODE_ID_UNKNOWN,
                "annotation of an unknown node: BadNodeIdUnknown (0x%08X)",
                s);
    s = im_annot(c, "v3", 1, "m", "op", 4, false, &st);
    itest_check(s == UA_BAD_HISTORY_OPERATION_UNSUPPORTED,
                "of a node that is not historized: "
                "BadHistoryOperationUnsupported (0x%08X)", s);
    s = im_data(c, "v3", 1, &x, &t, 1, &st);
    itest_check(s == UA_BAD_HISTORY_OPERATION_UNSUPPORTED,
                "UpdateData of it too (0x%08X)", s);
    s = im_annot(c, "v1.Annotations", 1, "m", "op", 4, true, &st);
    itest_check(s == UA_GOOD && st == UA_BAD_TYPE_MISMATCH,
                "a value that is no Annotation: BadTypeMismatch (0x%08X)",
                st);
    s = im_annot(c, "v1.Annotations", 1, "m", "op", -1, false, &st);
    itest_check(s == UA_GOOD && st == UA_BAD_INVALID_TIMESTAMP,
                "an annotation without a SourceTimestamp: "
                "BadInvalidTimestamp (0x%08X)", st);
    s = im_annot(c, "v1.Annotations", 5, "m", "op", 4, false, &st);
    itest_check(s == UA_BAD_HISTORY_OPERATION_INVALID,
                "PerformUpdateType 5: BadHistoryOperationInvalid (0x%08X)",
                s);
}

static void
im_step_viewer(uint16_t port)
{
    struct ua_history_read_result r;
    struct uaconn                 v;
    uint32_t                      st;
    ua_status                     s;
    double                        x = 1;
    int                           t = 1;

    uaconn_init(&v);
    v.user = IHIST_VIEW;
    v.password = IHIST_VIEW_PW;
    s = uaconn_start(&v, "127.0.0.1", port);
    itest_check(s == UA_GOOD, "the viewer's session: 0x%08X", s);
    if (s != UA_GOOD)
        return;
    s = im_annot(&v, "v1.Annotations", 1, "m", "view", 12, false, &st);
    itest_check(s == UA_BAD_USER_ACCESS_DENIED,
                "the viewer's annotation: BadUserAccessDenied (0x%08X)", s);
    s = im_data(&v, "v1", 1, &x, &t, 1, &st);
    itest_check(s == UA_BAD_USER_ACCESS_DENIED,
                "the viewer's Insert: BadUserAccessDenied (0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read(&v, "v1", true, 0, 20, 0, false, NULL, false, &r);
    itest_check(s == UA_GOOD && im_hm(&r) != NULL,
                "the viewer reads the modified values (0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read(&v, "v1.Annotations", false, 0, 20, 0, false, NULL, false,
                &r);
    itest_check(s == UA_GOOD && im_hd(&r) != NULL,
                "and the annotations (0x%08X)", s);
    uaconn_close_session(&v);
    uaconn_close(&v);
    ua_client_clear(&v.cl);
    uaconn_clear(&v);
}

/* ReadAnnotationDataDetails of node at times (seconds after IM_T0). */
static ua_status
im_read_at(struct uaconn *c, const char *node, const int *secs, int n,
           const struct ua_string *cp, bool release,
           struct ua_history_read_result *res)
{
    struct ua_read_annotation_data_details d;
    struct ua_nodeid                       id = ihist_node(node);
    ua_datetime                            t[8];

    for (int i = 0; i < n && i < 8; i++)
        t[i] = IM_T0 + secs[i] * IM_SEC;
    d.n_req_times = n;
    d.req_times = n > 0 ? t : NULL;
    return ihist_read(c, &im.arena, &id,
                      &ua_types[UA_TYPE_READANNOTATIONDATADETAILS],
                      UA_NS0ID_READANNOTATIONDATADETAILS_ENCODING_DEFAULTBINARY,
                      &d, UA_TIMESTAMPSTORETURN_SOURCE, cp, release, res);
}

/* The annotations of a ReadAnnotationData result as "sec:user " into
 * out; their count, -1 when one is no Annotation. */
static int
im_at_list(const struct ua_history_read_result *r, char *out, size_t cap)
{
    const struct ua_history_data *hd = im_hd(r);
    size_t                        len = 0;

    out[0] = '\0';
    if (hd == NULL)
        return r->status_code == UA_GOOD_NO_DATA ? 0 : -1;
    for (int32_t i = 0; i < hd->n_data_values; i++) {
        const struct ua_datavalue  *dv = &hd->data_values[i];
        const struct ua_extobj     *eo = dv->value.data;
        const struct ua_annotation *an;

        if (!(dv->mask & UA_DV_VALUE)
            || dv->value.type != UA_BT_EXTENSIONOBJECT || eo == NULL
            || eo->encoding != UA_EO_DECODED
            || eo->type != &ua_types[UA_TYPE_ANNOTATION])
            return -1;
        an = eo->obj;
        len += (size_t)snprintf(out + len, cap - len, "%d:%.*s ",
                                (int)((dv->source_ts - IM_T0) / IM_SEC),
                                (int)an->user_name.len,
                                (const char *)an->user_name.data);
        if (len >= cap)
            return -1;
    }
    return hd->n_data_values;
}

static void
im_step_annot_at(struct uaconn *c)
{
    static const int              t641[] = { 6, 4, 1 }, t5[] = { 5 };
    struct ua_history_read_result r;
    char                          got[128];
    ua_status                     s;
    int                           n;

    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t641, 3, NULL, false, &r);
    n = s == UA_GOOD ? im_at_list(&r, got, sizeof(got)) : -1;
    itest_check(n == 3 && strcmp(got, "6:op 4:op 4:tech ") == 0
                    && r.continuation_point.len <= 0,
                "ReadAnnotationData at 6, 4, 1 s: the annotations in the "
                "request's order (0x%08X: %s)", s, got);
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1.Annotations", t641, 3, NULL, false, &r);
    n = s == UA_GOOD ? im_at_list(&r, got, sizeof(got)) : -1;
    itest_check(n == 3 && strcmp(got, "6:op 4:op 4:tech ") == 0,
                "... through the Annotations Property alike (0x%08X: %s)",
                s, got);
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t5, 1, NULL, false, &r);
    itest_check(s == UA_GOOD_NO_DATA, "at a time without annotations: "
                "GoodNoData (0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v3", t5, 1, NULL, false, &r);
    itest_check(s == UA_BAD_HISTORY_OPERATION_UNSUPPORTED,
                "of a variable that is not historized: "
                "BadHistoryOperationUnsupported (0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t5, 0, NULL, false, &r);
    itest_check(s == UA_BAD_HISTORY_OPERATION_INVALID,
                "no reqTimes: BadHistoryOperationInvalid (0x%08X)", s);
}

/* Pages of 2 (history.max_return_values = 2). */
static void
im_step_annot_pages(struct uaconn *c)
{
    static const int              t64[] = { 6, 4 }, t464[] = { 4, 6, 4 };
    struct ua_history_read_result r;
    struct ua_string              cp;
    uint8_t                       cpb[64];
    char                          got[128], got2[128];
    ua_status                     s, s2;
    int                           n, n2;

    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t64, 2, NULL, false, &r);
    n = s == UA_GOOD ? im_at_list(&r, got, sizeof(got)) : -1;
    itest_check(n == 2 && strcmp(got, "6:op 4:op ") == 0
                    && r.continuation_point.len > 0
                    && (size_t)r.continuation_point.len <= sizeof(cpb),
                "max_return_values 2: a page of 2 and a continuation point "
                "(0x%08X: %s)", s, got);
    if (r.continuation_point.len <= 0
        || (size_t)r.continuation_point.len > sizeof(cpb))
        return;
    memcpy(cpb, r.continuation_point.data, (size_t)r.continuation_point.len);
    cp.len = r.continuation_point.len;
    cp.data = cpb;
    ua_arena_reset(&im.arena);
    s2 = im_read_at(c, "v1", t64, 2, &cp, false, &r);
    n2 = s2 == UA_GOOD ? im_at_list(&r, got2, sizeof(got2)) : -1;
    itest_check(n2 == 1 && strcmp(got2, "4:tech ") == 0
                    && r.continuation_point.len <= 0,
                "the next page goes on inside the time: 4:tech, no "
                "continuation point (0x%08X: %s)", s2, got2);
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t64, 2, &cp, false, &r);
    itest_check(s == UA_BAD_CONTINUATION_POINT_INVALID,
                "the spent point again: BadContinuationPointInvalid "
                "(0x%08X)", s);
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t64, 2, NULL, false, &r);
    if (s == UA_GOOD && r.continuation_point.len > 0
        && (size_t)r.continuation_point.len <= sizeof(cpb)) {
        memcpy(cpb, r.continuation_point.data,
               (size_t)r.continuation_point.len);
        cp.len = r.continuation_point.len;
        ua_arena_reset(&im.arena);
        s = im_read_at(c, "v1", t64, 2, &cp, true, &r);
        s2 = s;
        ua_arena_reset(&im.arena);
        s = im_read_at(c, "v1", t64, 2, &cp, false, &r);
        itest_check(s2 == UA_GOOD
                        && s == UA_BAD_CONTINUATION_POINT_INVALID,
                    "released (0x%08X), then refused (0x%08X)", s2, s);
    } else {
        itest_check(false, "a second point to release (0x%08X)", s);
    }
    ua_arena_reset(&im.arena);
    s = im_read_at(c, "v1", t464, 3, NULL, false, &r);
    itest_check(s == UA_BAD_TOO_MANY_OPERATIONS,
                "3 reqTimes over max_return_values 2: "
                "BadTooManyOperations (0x%08X)", s);
}

static void
im_step_stats(uint16_t sport)
{
    char       *body = NULL;
    const char *hs;
    uint64_t    mod = 0, modb = 0, an = 0, anb = 0;
    int         rc;
    bool        ok;

    rc = itest_http(sport, "GET", "/stats", &body);
    hs = body != NULL ? itest_json_find(body, "history") : NULL;
    ok = rc == 200 && hs != NULL && itest_json_u64(hs, "modified", &mod)
         && itest_json_u64(hs, "modified_bytes", &modb)
         && itest_json_u64(hs, "annotations", &an)
         && itest_json_u64(hs, "annotation_bytes", &anb);
    itest_check(ok && mod > 0 && modb > 0 && an == 3 && anb > 0,
                "/stats history: modified %llu (%llu bytes), annotations "
                "%llu (%llu bytes)", (unsigned long long)mod,
                (unsigned long long)modb, (unsigned long long)an,
                (unsigned long long)anb);
    free(body);
    body = NULL;
    rc = itest_http(sport, "GET", "/metrics", &body);
    itest_check(rc == 200 && body != NULL
                    && strstr(body, "uabroker_history_modified_values ")
                           != NULL
                    && strstr(body, "uabroker_history_annotations 3")
                           != NULL
                    && strstr(body, "uabroker_history_annotation_bytes ")
                           != NULL,
                "/metrics: uabroker_history_modified_values, "
                "uabroker_history_annotations 3, ..._annotation_bytes");
    free(body);
}

int
main(int argc, char **argv)
{
    const char *const extra[] = {
        "--vars", "10",
        "--set", "history.nodes=ns=1;s=v1 ns=1;s=v2",
        "--set", "history.flush_ms=20", NULL
    };
    struct uaconn c;
    const char *const extra2[] = {
        "--vars", "10",
        "--set", "history.nodes=ns=1;s=v1 ns=1;s=v2",
        "--set", "history.max_return_values=2",
        "--set", "history.flush_ms=20", NULL
    };
    uint16_t      port, sport;
    pid_t         broker;
    ua_status     s;

    (void)argc;
    itest_init("integ_hist_mod");
    ihist_setup(&im, argv[0], "uabroker-hmod", IM_WATCHDOG_S, IM_ARENA);
    ihist_users(&im, true);
    broker = itest_broker_start(im.bin, 1, im.dir, im.log, extra,
                                IM_START_MS, &port, &sport);
    uaconn_init(&c);
    c.user = IHIST_OP;
    c.password = IHIST_OP_PW;
    s = uaconn_start(&c, "127.0.0.1", port);
    itest_check(s == UA_GOOD, "the operator's session: 0x%08X", s);
    if (s != UA_GOOD)
        return itest_finish();
    im_step_updates(&c);
    im_step_read_modified(&c);
    im_step_forget(&c);
    im_step_annotations(&c);
    im_step_bad(&c);
    im_step_viewer(port);
    im_step_stats(sport);
    im_step_annot_at(&c);
    uaconn_close_session(&c);
    uaconn_close(&c);
    ua_client_clear(&c.cl);
    uaconn_clear(&c);

    /* 10. The same store, pages of 2. */
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    broker = itest_broker_start(im.bin, 1, im.dir, im.log, extra2,
                                IM_START_MS, &port, &sport);
    uaconn_init(&c);
    c.user = IHIST_OP;
    c.password = IHIST_OP_PW;
    s = uaconn_start(&c, "127.0.0.1", port);
    itest_check(s == UA_GOOD, "the operator's session again: 0x%08X", s);
    if (s == UA_GOOD)
        im_step_annot_pages(&c);
    uaconn_close_session(&c);
    uaconn_close(&c);
    ua_client_clear(&c.cl);
    uaconn_clear(&c);
    itest_check(itest_stop(broker, 5000) == 0, "SIGTERM: the broker exits 0");
    ihist_teardown(&im);
    return itest_finish();
}
