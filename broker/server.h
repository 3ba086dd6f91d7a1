/*
 * broker/server.h: the values of the Server object (ns=0;i=2253): written
 * from the configuration at the end of the address-space build, then
 * kept live once a second (CurrentTime, ServerStatus, the diagnostics
 * summary).  Through the value path (broker/value.h) like every value.
 *
 * Broker only, on its loop.
 */
#ifndef BK_SERVER_H
#define BK_SERVER_H

#include <stdint.h>

#include "config.h"
#include "nodeset.h"
#include "shm/nodestore.h"
#include "shm/segment.h"
#include "value.h"

struct bk_server {
    const struct shm_nodestore *ns;
    struct bk_value            *val;
    const struct shm_segment   *seg;        /* the workers' rows */
    int64_t                     start_time; /* DateTime */
    uint64_t                    diag_last[2];   /* sessions, rejected + 1 */
};

/*
 * Write the Server object's values for c at DateTime now (the start
 * time), inside the caller's value batch: NamespaceArray (0, 1, then the
 * URIs of sets, NULL: none), ServerArray, ServiceLevel, Auditing,
 * ServerStatus, ServerCapabilities and OperationLimits from c, the
 * diagnostics at zero.  0, or -1 when they do not fit.
 */
int bk_server_init(struct bk_server *s, const struct shm_nodestore *ns,
                   struct bk_value *val, const struct shm_segment *seg,
                   const struct bk_config *c, const struct bk_nodeset *sets,
                   int64_t now);

/*
 * Update CurrentTime, ServerStatus and (when they changed) the
 * diagnostics summary to now, in one value batch of its own.
 */
void bk_server_tick(struct bk_server *s, int64_t now);

#endif /* BK_SERVER_H */
