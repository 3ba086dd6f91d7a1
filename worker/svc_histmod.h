/*
 * worker/svc_histmod.h: HistoryRead of what HistoryUpdate keeps beside
 * the raw values (issue 18; Part 11 §6.5.3.3 and §5.1.2): the modified
 * values of a historized variable (ReadRawModifiedDetails with
 * isReadModified, HistoryModifiedData), its annotations (a raw read of
 * its Annotations Property, HistoryData of Annotation values), and the
 * annotations' times for AnnotationCount (Part 13 §5.4.3.20), and
 * ReadAnnotationDataDetails (Part 11 §6.5.6: the annotations at given
 * times).
 * worker/svc_history.c parses the request and calls these per node.
 */
#ifndef WK_SVC_HISTMOD_H
#define WK_SVC_HISTMOD_H

#include <stdbool.h>
#include <stdint.h>

#include "hist/sample.h"
#include "hist/store.h"
#include "proto/types_gen.h"
#include "svc.h"

/* A raw read's range as svc_history parsed it. */
struct wk_svc_histmod_q {
    int64_t    lo, hi;          /* inclusive */
    bool       reverse;
    uint32_t   max;             /* values this page */
    enum hs_ts ts;
};

/* The continuation points of these reads (wk_session_cp.direction; any
 * above BrowseDirection's is not Browse's). */
#define WK_SVC_HISTMOD_CP_MOD    0xFDu
#define WK_SVC_HISTMOD_CP_ANNOT  0xFCu
#define WK_SVC_HISTMOD_CP_AT     0xFAu      /* ReadAnnotationData's */

/*
 * One node's page of modified values (node a historized variable), or of
 * annotations (annots: node the variable, the request's node its
 * Annotations Property), from rd's snapshot, resumed at cpb when it is a
 * continuation point, with a new one when more remain; res filled.
 */
void wk_svc_histmod_read(struct wk_svc_ctx *ctx, struct hs_read *rd,
                         uint32_t node, bool annots,
                         const struct ua_string *cpb,
                         const struct wk_svc_histmod_q *q,
                         struct ua_history_read_result *res);

/*
 * ReadAnnotationDataDetails of one node (node a historized variable):
 * the annotations at each of times[0..ntimes) in that order (those of
 * one time in userName order; a time without any adds nothing), as
 * HistoryData of Annotation values with the timestamps ts asks for; at
 * most max a page, resumed at cpb when it is a continuation point, with
 * a new one when more remain; GoodNoData when there is none.  res filled.
 */
void wk_svc_histmod_annot_at(struct wk_svc_ctx *ctx, struct hs_read *rd,
                             uint32_t node, const int64_t *times,
                             uint32_t ntimes, uint32_t max, enum hs_ts ts,
                             const struct ua_string *cpb,
                             struct ua_history_read_result *res);

/*
 * The times of node key's annotations with lo <= time < hi, ascending,
 * in the request's arena (*t; *n of them, at most max): UA_GOOD,
 * BadResourceUnavailable when there are more than max, BadOutOfMemory.
 */
ua_status wk_svc_histmod_annot_times(struct wk_svc_ctx *ctx,
                                     struct hs_read *rd, uint64_t key,
                                     int64_t lo, int64_t hi, size_t max,
                                     ua_datetime **t, size_t *n);

#endif /* WK_SVC_HISTMOD_H */
