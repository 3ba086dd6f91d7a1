/*
 * broker/addrspace.h: build the whole address space into the segment:
 * namespace 0 from the generated NodeSet tables, namespace 1 (the server's
 * application URI) with Objects/Demo, and the live Server nodes.
 *
 * Every initial value is written through the value path (broker/value.h)
 * in one value batch, the build's.  Broker only, at start.  After
 * bk_addrspace_build the node store is read-only; values change through
 * the value path (as->val).
 */
#ifndef BK_ADDRSPACE_H
#define BK_ADDRSPACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alarmnode.h"
#include "config.h"
#include "nodeset.h"
#include "server.h"
#include "shm/nodestore.h"
#include "shm/segment.h"
#include "shm/value.h"
#include "value.h"

/* Demo/Simulation variables, in their order under the folder. */
enum bk_addrspace_sim {
    BK_SIM_COUNTER = 0,
    BK_SIM_RAMP,
    BK_SIM_SINE,
    BK_SIM_RANDOM,
    BK_SIM_MAX
};

/* The broker's handle on the address space. */
struct bk_addrspace {
    struct shm_segment   seg;
    struct shm_nodestore ns;
    struct shm_values    vals;              /* the value slots, to read */
    struct bk_value      val;               /* the value path: writes */
    struct bk_server     server;            /* the Server object's values */
    uint32_t             ns1_vars_first;    /* node index of v0 */
    uint32_t             vars;
    uint32_t             vars_slot_first;   /* value slot of v0; v<i>'s
                                               is this + i */
    uint32_t             sim_slot[BK_SIM_MAX];
    uint32_t             sim_node[BK_SIM_MAX];  /* their node indexes */
    double               build_seconds;
    /* The build failed on addrspace.nodesets or an [alarm NAME] section
     * (a configuration error). */
    bool                 nodeset_failed;
    /* The conditions of the [alarm NAME] sections and of the NodeSets'
     * alarm instances (broker/alarmnode.h, broker/alarmnset.h). */
    struct bk_alarmnode  alarms;
    /* NodeSet alarm instances refused (each logged as a warning), and
     * the last refusal's text. */
    uint32_t             alarms_refused;
    char                 alarms_refused_last[1024];
    /* The imported nodesets while building (broker/nodeset.h), NULL
     * after. */
    struct bk_nodeset   *nodesets;
    /* The thread that maps the block pool's pages while the build runs
     * (joined by bk_addrspace_close). */
    pthread_t            prefault;
    bool                 prefaulting;
};

/* How big the segment must be for c. */
void bk_addrspace_plan(const struct bk_config *c, struct shm_plan *p);

/*
 * Create the segment and build everything into it; now is the DateTime of
 * the start.  0, or -1 with a message in err.
 */
int bk_addrspace_build(struct bk_addrspace *as, const struct bk_config *c,
                       int64_t now, char *err, size_t errlen);

/* Close the segment (and free the conditions). */
void bk_addrspace_close(struct bk_addrspace *as);

struct ua_nodeid;

/* The node index of NodeId id in ns, or SHM_NONE. */
uint32_t bk_addrspace_lookup(const struct shm_nodestore *ns,
                             const struct ua_nodeid *id);

#endif /* BK_ADDRSPACE_H */
