/*
 * worker/svc_read.c: the Read service (Part 4 §5.11.2), straight from
 * shared memory, with no message to the broker.
 *
 * The service checks the request and looks its NodeIds up, pipelined
 * (worker/node.h wk_node_pipe); each operation is one attribute read by
 * the attribute reader (worker/attr.h: the operation results, the
 * timestamps, IndexRange, encode-once are described there); the usual
 * one, a Value without IndexRange or DataEncoding, through its inline
 * fast path.  A failed operation carries its status alone.
 *
 * Service results: timestampsToReturn outside Source..Neither
 * BadTimestampsToReturnInvalid; maxAge negative or NaN BadMaxAgeInvalid
 * (every value we have is current: maxAge is otherwise ignored); no
 * nodesToRead BadNothingToDo; more than conf->max_nodes_per_read
 * BadTooManyOperations.
 *
 * No heap: every result is in the request arena.
 */
#include "svc_read.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "attr.h"
#include "node.h"
#include "proto/attrs_gen.h"
#include "proto/nodeids_gen.h"
#include "proto/status_gen.h"
#include "proto/types_gen.h"

int
wk_svc_read_init(struct wk_worker *w)
{
    return wk_svc_register(w, UA_NS0ID_READREQUEST_ENCODING_DEFAULTBINARY,
                           wk_svc_read, NULL, NULL) == 0 ? 0 : -EINVAL;
}

void
wk_svc_read(struct wk_svc_ctx *ctx, const void *req_, void *resp_)
{
    const struct ua_read_request *req = req_;
    struct ua_read_response      *resp = resp_;
    struct ua_response_header    *rh = &resp->response_header;
    struct ua_datavalue          *dv;
    int32_t                       n = req->n_nodes_to_read;
    struct wk_node_pipe           pipe;
    struct wk_attr_ctx            ac = { ctx->w, ctx->session, ctx->arena };

    if (req->timestamps_to_return < UA_TIMESTAMPSTORETURN_SOURCE
        || req->timestamps_to_return > UA_TIMESTAMPSTORETURN_NEITHER) {
        rh->service_result = UA_BAD_TIMESTAMPS_TO_RETURN_INVALID;
        return;
    }
    if (isnan(req->max_age) || req->max_age < 0) {
        rh->service_result = UA_BAD_MAX_AGE_INVALID;
        return;
    }
    if (n <= 0) {
        rh->service_result = UA_BAD_NOTHING_TO_DO;
        return;
    }
    if ((uint32_t)n > ctx->w->conf->max_nodes_per_read) {
        rh->service_result = UA_BAD_TOO_MANY_OPERATIONS;
        return;
    }
    dv = ua_arena_alloc(ctx->arena, (size_t)n * sizeof(*dv));
    if (dv == NULL) {
        rh->service_result = UA_BAD_OUT_OF_MEMORY;
        return;
    }
    wk_node_pipe_init(&pipe, ctx->w, &req->nodes_to_read[0].node_id,
                      sizeof(req->nodes_to_read[0]), n);
    for (int32_t i = 0; i < n; i++) {
        const struct ua_read_value_id *rv = &req->nodes_to_read[i];
        uint32_t                       node = wk_node_pipe_lookup(&pipe, i);
        ua_status                      s;

        memset(&dv[i], 0, sizeof(dv[i]));
        dv[i].value.ndims = -1;
        if (rv->attribute_id == UA_ATTR_VALUE && rv->index_range.len <= 0
            && rv->data_encoding.ns == 0 && rv->data_encoding.name.len <= 0)
            s = wk_attr_read_value(&ac, node, req->timestamps_to_return,
                                   &dv[i]);
        else
            s = wk_attr_read(&ac, node, rv->attribute_id, &rv->index_range,
                             &rv->data_encoding, req->timestamps_to_return,
                             &dv[i]);
        if (s != UA_GOOD) {
            /* A failed operation: its status, nothing else. */
            memset(&dv[i], 0, sizeof(dv[i]));
            dv[i].value.ndims = -1;
            dv[i].mask = UA_DV_STATUS;
            dv[i].status = s;
        }
    }
    resp->n_results = n;
    resp->results = dv;
    resp->n_diagnostic_infos = 0;
}

