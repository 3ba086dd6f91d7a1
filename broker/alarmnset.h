/*
 * broker/alarmnset.h: alarm instances declared in imported NodeSet2 files
 * (broker/nodeset.h) become conditions the evaluator watches
 * (broker/alarmnode.h), as the `[alarm NAME]` sections do
 * (docs/operations.md "Alarms from a NodeSet").
 *
 * An Object of the files is an alarm instance when its TypeDefinition is,
 * or is a subtype of (the files' own ObjectTypes too):
 *
 *   ExclusiveLimitAlarmType (ExclusiveLevelAlarmType)   exclusive limit
 *   NonExclusiveLimitAlarmType (NonExclusiveLevelAlarmType) non-exclusive
 *   OffNormalAlarmType (TripAlarmType, SystemOffNormalAlarmType, ...)
 *                                                       off-normal
 *   DiscreteAlarmType                                   off-normal: its
 *                             NormalState if it has one, else active
 *                             while the input is not 0 (false)
 *
 * (Part 9 §5.8.18-§5.8.23).  The deviation and rate-of-change subtypes
 * need a setpoint or a rate the evaluator does not compute: refused.
 * Read from the instance's own properties (Part 9 names, namespace 0):
 * InputNode (a NodeId value, a Variable of the address space: needed);
 * HighHighLimit, HighLimit, LowLimit, LowLowLimit (numbers; a limit alarm
 * needs one, in order as for the configuration); NormalState (off-normal:
 * a NodeId of a Variable whose value is the normal value); optional
 * ConditionName, Message, Severity and MaxTimeShelved values; a
 * ConfirmedState makes it an alarm that uses Confirm.  Its source: the
 * Object that HasCondition it, else its parent by HasComponent or
 * Organizes, else its input's parent.
 *
 * An instance that lacks what it needs, or whose missing variables cannot
 * be added, is refused: one warning that names the file, the line and the
 * node, and the Object stays in the address space as the file has it,
 * not evaluated; the rest of the files and the configuration are not
 * affected.  Instances count towards alarms.max_alarms with the sections.
 *
 * Broker only, at the address-space build (broker/addrspace.c), after
 * the files' nodes and references are in the node store and before it is
 * finished.  Allocates the result (bk_alarmnset_free).
 */
#ifndef BK_ALARMNSET_H
#define BK_ALARMNSET_H

#include <stddef.h>
#include <stdint.h>

#include "alarmnode.h"
#include "nodeset.h"
#include "shm/nodestore.h"

/* The instances found. */
struct bk_alarmnset {
    struct bk_alarmnode_adopt *ad;
    uint32_t                   n;
    struct bk_alarmnode_kids   kids;    /* the files' children */
    uint32_t                   refused;
};

/* At most how many instances the parsed set s holds (for the plan, from
 * the file's references alone: an over-estimate). */
uint32_t bk_alarmnset_count(const struct bk_nodeset *s);

/*
 * The instances of s, whose nodes and references are in ns (bk_nsbuild_add
 * done, not finished), into *out, at most max (the rest refused); each
 * refusal through warn(arg, "FILE:LINE: alarm NODEID (TYPE) refused:
 * why; ...").  0, or -1 with err (out of memory).
 */
int bk_alarmnset_find(struct bk_alarmnset *out, const struct bk_nodeset *s,
                      const struct shm_nodestore *ns, uint32_t max,
                      void (*warn)(void *arg, const char *msg), void *arg,
                      char *err, size_t errlen);

void bk_alarmnset_free(struct bk_alarmnset *x);

#endif /* BK_ALARMNSET_H */
