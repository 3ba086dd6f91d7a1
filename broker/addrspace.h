/*
 * broker/addrspace.h: build the whole address space into the segment:
 * namespace 0 from the generated NodeSet tables, namespace 1 (the server's
 * application URI) with Objects/Demo, and the live Server nodes.
 *
 * Broker only, at start.  After bk_addrspace_build the node store is
 * read-only; values change through bk_addrspace_write (value slots).
 */
#ifndef BK_ADDRSPACE_H
#define BK_ADDRSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "fanout.h"
#include "shm/nodestore.h"
#include "shm/segment.h"
#include "shm/value.h"

/* Demo/Simulation variables, in their order under the folder. */
enum bk_sim {
    BK_SIM_COUNTER = 0,
    BK_SIM_RAMP,
    BK_SIM_SINE,
    BK_SIM_RANDOM,
    BK_SIM_MAX
};

struct bk_fanout;
struct bk_write_node;

/* The broker's handle on the address space. */
struct bk_addrspace {
    struct shm_segment   seg;
    struct shm_nodestore ns;
    struct shm_values    vals;
    uint32_t             ns1_vars_first;    /* node index of v0 */
    uint32_t             vars;
    uint32_t             vars_slot_first;   /* value slot of v0; v<i>'s
                                               is this + i */
    uint32_t             sim_slot[BK_SIM_MAX];
    int64_t              start_time;        /* DateTime */
    uint64_t             diag_last[2];      /* sessions, rejected + 1 */
    double               build_seconds;
    /* Where value changes are announced (broker/fanout.c); NULL: nowhere
     * (the build, unit tests without the fan-out). */
    struct bk_fanout    *fanout;
    /* [ns.nnodes]: what the Write fast path needs of each node
     * (broker/write.h), built with the address space. */
    struct bk_write_node *wnodes;
    /* The build failed on addrspace.nodesets (a configuration error). */
    bool                  nodeset_failed;
    /* The imported nodesets while building (broker/nodeset.h), NULL
     * after. */
    struct bk_nodeset    *nodesets;
};

/* How big the segment must be for c. */
void bk_addrspace_plan(const struct bk_config *c, struct shm_plan *p);

/*
 * Create the segment and build everything into it; now is the DateTime of
 * the start.  0, or -1 with a message in err.
 */
int bk_addrspace_build(struct bk_addrspace *as, const struct bk_config *c,
                       int64_t now, char *err, size_t errlen);

/* Close the segment. */
void bk_addrspace_close(struct bk_addrspace *as);

/* The value slot of ns=0;i=id, or SHM_NONE. */
uint32_t bk_addrspace_ns0_slot(const struct bk_addrspace *as, uint32_t id);

/*
 * Encode a Variant of built-in type bt (scalar, or an array of n when n >= 0)
 * and store it in slot with status Good and both timestamps = now.
 * 0 or -errno.
 */
int bk_addrspace_write_scalar(struct bk_addrspace *as, uint32_t slot,
                              uint8_t bt, const void *value, int64_t now);
int bk_addrspace_write_array(struct bk_addrspace *as, uint32_t slot,
                             uint8_t bt, const void *values, int32_t n,
                             int64_t now);

/* Store an already encoded Variant, status Good, both timestamps now. */
int bk_addrspace_write_raw(struct bk_addrspace *as, uint32_t slot,
                           const void *bytes, uint32_t len, int64_t now);

/*
 * THE one function every value change goes through (client Writes, the
 * feed, the simulation, the live Server nodes; the Write fast path's
 * changes take bk_addrspace_write_small(), its inline form for one case,
 * which does exactly what this does for them): store len bytes of encoded
 * Variant with m's status and timestamps in slot, then hand the change to
 * the fan-out (bk_fanout_notify: a notification record if any worker has
 * interest).  The server timestamp is made strictly increasing per slot
 * (the previous one + 1 tick when m's is not later), so a worker can tell
 * a value it already has (worker/fanout.h).  0, -ENOSPC (value heap full:
 * the slot keeps its old value), -EINVAL (bad slot).
 */
int bk_addrspace_write_value(struct bk_addrspace *as, uint32_t slot,
                             const void *bytes, uint32_t len,
                             const struct shm_value *m);

/* bk_addrspace_write_small() past its inline case (addrspace.c). */
int bk_addrspace_write_small_any(struct bk_addrspace *as, uint32_t slot,
                                 const uint8_t *bytes, uint32_t len,
                                 int64_t now, int64_t sts, bool store);

/*
 * bk_addrspace_write_value() of the Write fast path's value (write.c):
 * len (1..16) bytes of encoded Variant into slot (valid: the caller took
 * it from as->wnodes), status Good, SourceTimestamp now, no picoseconds.
 * The same slot contents, the same ServerTimestamp rule and the same
 * notification, inline and without building a struct shm_value: it is
 * the inner loop of a Write of many values.  While the fan-out applies a
 * request record the change waits for its interest mask with bytes
 * uncopied: they must stay as they are until the record is done (they
 * are the record's own).  0 or -errno as bk_addrspace_write_value().
 */
static inline __attribute__((always_inline)) int
bk_addrspace_write_small(struct bk_addrspace *as, uint32_t slot,
                         const uint8_t *bytes, uint32_t len, int64_t now)
{
    int64_t prev, sts;

    /* bk_addrspace_write_value()'s ServerTimestamp rule. */
    prev = atomic_load_explicit(&as->vals.slots[slot].server_ts,
                                memory_order_relaxed);
    sts = now > prev ? now : prev + 1;
    if (!shm_value_write_small(&as->vals, slot, bytes, len, now, sts))
        return bk_addrspace_write_small_any(as, slot, bytes, len, now, sts,
                                            true);
    if (as->fanout != NULL
        && !bk_fanout_notify_small(as->fanout, slot, bytes, len, now, sts))
        return bk_addrspace_write_small_any(as, slot, bytes, len, now, sts,
                                            false);
    return 0;
}

/* Update the live Server nodes (CurrentTime, ServerStatus) to now. */
void bk_addrspace_tick(struct bk_addrspace *as, int64_t now);

struct ua_nodeid;

/* The node index of NodeId id in ns, or SHM_NONE. */
uint32_t bk_addrspace_lookup(const struct shm_nodestore *ns,
                             const struct ua_nodeid *id);

#endif /* BK_ADDRSPACE_H */
