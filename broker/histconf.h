/*
 * broker/histconf.h: what is historized, and how it is described in the
 * address space (issue 18; Part 11 §5.2, Part 13 §4.2):
 *
 * - the historized variables: the NodeSets' Historizing="true" ones,
 *   history.simulation's Demo.Simulation variables, history.demo_vars' first
 *   Demo.Vars, history.nodes and the [history NAME] sections' nodes
 *   (broker/histcfg.h).  Each has Historizing true, HistoryRead and
 *   HistoryWrite in AccessLevel and UserAccessLevel (a session's
 *   UserAccessLevel keeps HistoryWrite for operators only:
 *   worker/attr.c), and the historian (worker/historian.c) takes it;
 * - each one's HistoricalDataConfiguration: an Object "HA Configuration"
 *   (HistoricalDataConfigurationType) from the variable by
 *   HasHistoricalConfiguration, with Stepped, MinTimeInterval,
 *   MaxTimeInterval, ExceptionDeviation, ExceptionDeviationFormat and
 *   ServerTimestampSupported, and its AggregateConfiguration
 *   (TreatUncertainAsBad, PercentDataBad, PercentDataGood,
 *   UseSlopedExtrapolation): the [history] defaults with the variable's
 *   [history NAME] keys over them.  A NodeSet variable that has its own
 *   HasHistoricalConfiguration keeps it and gets none;
 * - the aggregates HistoryRead computes (proto/aggregate.h): the
 *   AggregateFunction objects of namespace 0 organized under
 *   HistoryServerCapabilities/AggregateFunctions and
 *   Server/ServerCapabilities/AggregateFunctions.
 *
 * Workers read a node's Stepped and AggregateConfiguration back from
 * these nodes (worker/histconf.c).  Broker only, during the build: the
 * nodes and references before shm_nodestore_finish.  Nothing here when
 * history.enabled is off.
 */
#ifndef BK_HISTCONF_H
#define BK_HISTCONF_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "shm/nodestore.h"
#include "shm/plan.h"
#include "value.h"

/*
 * What the configurations take of the segment for c, with nodeset
 * variables of the NodeSets historized (at most; some may bring their
 * own configuration).
 */
void bk_histconf_plan(const struct bk_config *c, uint32_t nodeset,
                      struct shm_plan *p);

/* The demo nodes history.simulation and history.demo_vars name. */
struct bk_histconf_demo {
    const uint32_t *sim;            /* node indexes */
    uint32_t        nsim;
    uint32_t        vars_first;     /* node index of v0 */
};

/*
 * Mark what c historizes, give every historized variable its
 * configuration (value slots from *slot on, values written through val
 * at now) and organize the aggregate functions.  Before
 * shm_nodestore_finish.  0, or -1 with a message in err (a NodeId that
 * names no Variable with a value: a configuration error).
 */
int bk_histconf_add(struct shm_nodestore *ns, struct bk_value *val,
                    const struct bk_config *c,
                    const struct bk_histconf_demo *demo, uint32_t *slot,
                    int64_t now, char *err, size_t errlen);

#endif /* BK_HISTCONF_H */
