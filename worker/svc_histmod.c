/*
 * worker/svc_histmod.c: HistoryRead of modified values and annotations
 * (worker/svc_histmod.h), from the history store's side databases
 * (hist/modified.h, hist/annot.h) in the read transaction the request's
 * raw reads use.
 *
 * ReadAnnotationDataDetails (wk_svc_histmod_annot_at) reads the
 * annotations at each requested time in the request's order; its
 * continuation point holds the index of the time it stopped at and how
 * many annotations of that time were returned.
 *
 * Paging as the raw reads' (worker/svc_history.c): at most q->max
 * entries per node, and when more remain a continuation point of the
 * session's holding the time of the last entry returned and how many of
 * that time were (several entries may share a time: replacements, one
 * annotation per user).  Each entry's DataValue is its stored bytes
 * written back with the timestamps asked for (UA_DV_ENCODED: nothing is
 * decoded); a ModificationInfo's userName is copied into the arena.
 *
 * Single-threaded on the worker's loop; a request allocates only from its
 * arena.
 */
#include "svc_histmod.h"

#include <errno.h>
#include <string.h>

#include "hist/annot.h"
#include "hist/modified.h"
#include "hist/side.h"
#include "histnode.h"
#include "proto/arena.h"
#include "proto/status_gen.h"
#include "proto/types.h"
#include "session.h"
#include "shm/layout.h"

static ua_status wk_svc_histmod_dv(struct wk_svc_ctx *ctx,
                                   const struct hs_sample *smp,
                                   enum hs_ts ts, struct ua_datavalue *out);
static struct wk_session_cp *wk_svc_histmod_cp(
    struct wk_svc_ctx *ctx, struct wk_session_cp *cp, uint8_t mark,
    uint32_t node, int64_t last, uint32_t at_last,
    struct ua_history_read_result *res);

/* A stored entry as the DataValue the response copies. */
static ua_status
wk_svc_histmod_dv(struct wk_svc_ctx *ctx, const struct hs_sample *smp,
                  enum hs_ts ts, struct ua_datavalue *out)
{
    size_t   n = hs_sample_dv_size(smp, ts);
    uint8_t *b = ua_arena_alloc(ctx->arena, n);

    if (b == NULL)
        return UA_BAD_RESPONSE_TOO_LARGE;
    hs_sample_dv_write(smp, ts, b, n);
    memset(out, 0, sizeof(*out));
    out->mask = UA_DV_ENCODED;
    out->value.n = (int32_t)n;
    out->value.ndims = -1;
    out->value.data = b;
    return UA_GOOD;
}

/*
 * The continuation point of a page that ends at last (at_last entries of
 * that time returned): cp (resumed) under a new id, or a new one; its
 * bytes into res.  NULL with res's status set when there is none.
 */
static struct wk_session_cp *
wk_svc_histmod_cp(struct wk_svc_ctx *ctx, struct wk_session_cp *cp,
                  uint8_t mark, uint32_t node, int64_t last,
                  uint32_t at_last, struct ua_history_read_result *res)
{
    struct wk_session *s = ctx->session;

    cp = wk_session_cp_renew(ctx->w, s, cp);
    if (cp == NULL) {
        res->status_code = UA_BAD_NO_CONTINUATION_POINTS;
        return NULL;
    }
    cp->direction = mark;
    cp->node = node;
    cp->next = (uint32_t)((uint64_t)last >> 32);
    cp->max = (uint32_t)last;
    cp->reftype = at_last;
    if (wk_session_cp_out(s, cp, ctx->arena,
                          &res->continuation_point) != 0) {
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return NULL;
    }
    return cp;
}

void
wk_svc_histmod_read(struct wk_svc_ctx *ctx, struct hs_read *rd,
                    uint32_t node, bool annots, const struct ua_string *cpb,
                    const struct wk_svc_histmod_q *q0,
                    struct ua_history_read_result *res)
{
    struct wk_session           *s = ctx->session;
    struct wk_session_cp        *cp = NULL;
    struct wk_svc_histmod_q      q = *q0;
    uint8_t                      mark = annots ? WK_SVC_HISTMOD_CP_ANNOT
                                               : WK_SVC_HISTMOD_CP_MOD;
    struct hs_side_read          r;
    struct ua_datavalue         *dv;
    struct ua_modification_info *mi = NULL;
    struct hs_sample             smp;
    struct hs_mod_info           m;
    const uint8_t               *user;
    size_t                       ulen;
    uint64_t                     key = wk_histnode_key(ctx->w, node);
    int64_t                      last = 0;
    uint32_t                     skip = 0, n = 0, at_last = 0, resumed = 0;
    bool                         more = false;
    int                          rc;

    if (cpb->len > 0) {
        cp = wk_session_cp_find(ctx->w, s, cpb);
        if (cp == NULL || cp->direction != mark || cp->node != node) {
            res->status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            return;
        }
        last = (int64_t)((uint64_t)cp->next << 32 | cp->max);
        skip = resumed = cp->reftype;
        if (q.reverse)
            q.hi = last;
        else
            q.lo = last;
    }
    dv = ua_arena_alloc(ctx->arena, (size_t)q.max * sizeof(*dv));
    if (!annots)
        mi = ua_arena_alloc(ctx->arena, (size_t)q.max * sizeof(*mi));
    if (dv == NULL || (!annots && mi == NULL)) {
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    rc = annots ? hs_annot_seek(&r, rd, key, q.lo, q.hi, q.reverse)
                : hs_modified_seek(&r, rd, key, q.lo, q.hi, q.reverse);
    while (rc == 0) {
        rc = annots ? hs_annot_next(&r, &smp, &user, &ulen)
                    : hs_modified_next(&r, &smp, &m);
        if (rc != 0)
            break;
        if (skip > 0 && smp.t == last) {
            skip--;
            continue;
        }
        skip = 0;
        if (n == q.max) {
            more = true;                /* one more: a next page */
            break;
        }
        if (wk_svc_histmod_dv(ctx, &smp, q.ts, &dv[n]) != UA_GOOD) {
            rc = -ENOMEM;
            break;
        }
        if (!annots) {
            mi[n].modification_time = m.time;
            mi[n].update_type = (int32_t)m.type;
            mi[n].user_name.len = -1;
            mi[n].user_name.data = NULL;
            if (m.user_len > 0) {
                mi[n].user_name.data = ua_arena_alloc(ctx->arena,
                                                      m.user_len);
                if (mi[n].user_name.data == NULL) {
                    rc = -ENOMEM;
                    break;
                }
                memcpy(mi[n].user_name.data, m.user, m.user_len);
                mi[n].user_name.len = (int32_t)m.user_len;
            }
        }
        at_last = n > 0 && smp.t == last ? at_last + 1 : 1;
        last = smp.t;
        n++;
    }
    if (rc == -ENOMEM || rc == -EINVAL || (rc != 0 && rc != -ENOENT)) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = rc == -ENOMEM ? UA_BAD_RESPONSE_TOO_LARGE
                                         : UA_BAD_INTERNAL_ERROR;
        return;
    }
    /* Resumed on the time the last page ended on: those count too. */
    if (cp != NULL && n > 0 && at_last == n
        && last == (int64_t)((uint64_t)cp->next << 32 | cp->max))
        at_last += resumed;
    if (more) {
        if (wk_svc_histmod_cp(ctx, cp, mark, node, last, at_last, res)
            == NULL)
            return;
    } else if (cp != NULL) {
        wk_session_cp_release(s, cp);
    }
    res->status_code = n == 0 && !more ? UA_GOOD_NO_DATA : UA_GOOD;
    res->history_data.encoding = UA_EO_DECODED;
    if (annots) {
        struct ua_history_data *hd = ua_arena_alloc(ctx->arena,
                                                    sizeof(*hd));

        if (hd == NULL) {
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            return;
        }
        hd->n_data_values = (int32_t)n;
        hd->data_values = dv;
        res->history_data.type = &ua_types[UA_TYPE_HISTORYDATA];
        res->history_data.obj = hd;
    } else {
        struct ua_history_modified_data *hm =
            ua_arena_alloc(ctx->arena, sizeof(*hm));

        if (hm == NULL) {
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            return;
        }
        hm->n_data_values = (int32_t)n;
        hm->data_values = dv;
        hm->n_modification_infos = (int32_t)n;
        hm->modification_infos = mi;
        res->history_data.type = &ua_types[UA_TYPE_HISTORYMODIFIEDDATA];
        res->history_data.obj = hm;
    }
}

void
wk_svc_histmod_annot_at(struct wk_svc_ctx *ctx, struct hs_read *rd,
                        uint32_t node, const int64_t *times, uint32_t ntimes,
                        uint32_t max, enum hs_ts ts,
                        const struct ua_string *cpb,
                        struct ua_history_read_result *res)
{
    struct wk_session      *s = ctx->session;
    struct wk_session_cp   *cp = NULL;
    struct ua_history_data *hd;
    struct ua_datavalue    *dv;
    struct hs_side_read     r;
    struct hs_sample        smp;
    const uint8_t          *user;
    size_t                  ulen;
    uint64_t                key = wk_histnode_key(ctx->w, node);
    uint32_t                i = 0, skip = 0, n = 0, at_i = 0;
    bool                    more = false;
    int                     rc = 0;

    if (cpb->len > 0) {
        cp = wk_session_cp_find(ctx->w, s, cpb);
        if (cp == NULL || cp->direction != WK_SVC_HISTMOD_CP_AT
            || cp->node != node || cp->next >= ntimes) {
            if (cp != NULL && cp->direction == WK_SVC_HISTMOD_CP_AT)
                wk_session_cp_release(s, cp);
            res->status_code = UA_BAD_CONTINUATION_POINT_INVALID;
            return;
        }
        i = cp->next;
        skip = cp->reftype;
    }
    dv = ua_arena_alloc(ctx->arena, (size_t)max * sizeof(*dv));
    hd = ua_arena_alloc(ctx->arena, sizeof(*hd));
    if (dv == NULL || hd == NULL) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
        return;
    }
    for (; i < ntimes && !more && (rc == 0 || rc == -ENOENT); i++) {
        at_i = 0;
        rc = hs_annot_seek(&r, rd, key, times[i], times[i], false);
        while (rc == 0
               && (rc = hs_annot_next(&r, &smp, &user, &ulen)) == 0) {
            if (skip > 0) {
                skip--;
                at_i++;
                continue;
            }
            if (n == max) {
                more = true;            /* one more: a next page */
                break;
            }
            if (wk_svc_histmod_dv(ctx, &smp, ts, &dv[n]) != UA_GOOD) {
                rc = -ENOMEM;
                break;
            }
            n++;
            at_i++;
        }
        skip = 0;
    }
    if (rc != 0 && rc != -ENOENT) {
        if (cp != NULL)
            wk_session_cp_release(s, cp);
        res->status_code = rc == -ENOMEM ? UA_BAD_RESPONSE_TOO_LARGE
                                         : UA_BAD_INTERNAL_ERROR;
        return;
    }
    if (more) {
        /* Stopped inside times[i - 1] after at_i of its annotations. */
        cp = wk_session_cp_renew(ctx->w, s, cp);
        if (cp == NULL) {
            res->status_code = UA_BAD_NO_CONTINUATION_POINTS;
            return;
        }
        cp->direction = WK_SVC_HISTMOD_CP_AT;
        cp->node = node;
        cp->next = i - 1;
        cp->reftype = at_i;
        if (wk_session_cp_out(s, cp, ctx->arena,
                              &res->continuation_point) != 0) {
            res->status_code = UA_BAD_RESPONSE_TOO_LARGE;
            return;
        }
    } else if (cp != NULL) {
        wk_session_cp_release(s, cp);
    }
    hd->n_data_values = (int32_t)n;
    hd->data_values = dv;
    res->history_data.encoding = UA_EO_DECODED;
    res->history_data.type = &ua_types[UA_TYPE_HISTORYDATA];
    res->history_data.obj = hd;
    res->status_code = n == 0 && !more ? UA_GOOD_NO_DATA : UA_GOOD;
}

ua_status
wk_svc_histmod_annot_times(struct wk_svc_ctx *ctx, struct hs_read *rd,
                           uint64_t key, int64_t lo, int64_t hi, size_t max,
                           ua_datetime **t, size_t *n)
{
    struct hs_side_read r;
    struct hs_sample    smp;
    const uint8_t      *user;
    size_t              ulen, cap = 0;
    int                 rc;

    *n = 0;
    *t = NULL;
    if (lo >= hi)
        return UA_GOOD;
    rc = hs_annot_seek(&r, rd, key, lo, hi - 1, false);
    while (rc == 0 && (rc = hs_annot_next(&r, &smp, &user, &ulen)) == 0) {
        if (*n == cap) {
            size_t       nc = cap ? cap * 2 : 64;
            ua_datetime *t2;

            if (nc > max)
                nc = max;
            if (*n == nc)
                return UA_BAD_RESOURCE_UNAVAILABLE;
            /* Arena memory: the old array is left behind, freed with
             * the request. */
            t2 = ua_arena_alloc(ctx->arena, nc * sizeof(*t2));
            if (t2 == NULL)
                return UA_BAD_OUT_OF_MEMORY;
            if (*n > 0)
                memcpy(t2, *t, *n * sizeof(*t2));
            *t = t2;
            cap = nc;
        }
        (*t)[(*n)++] = smp.t;
    }
    return rc == -EINVAL ? UA_BAD_INTERNAL_ERROR : UA_GOOD;
}
