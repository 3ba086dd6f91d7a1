/*
 * worker/histconf.h: a historized variable's HistoricalDataConfiguration
 * as HistoryRead uses it (Part 11 §5.2.2, Part 13 §4.2.1.2): its Stepped
 * property and its AggregateConfiguration, read from the address space
 * (the "HA Configuration" object broker/histconf.c gives every historized
 * variable, or the one its NodeSet gives it).
 *
 * Pure reads of shared memory on the worker's loop: a walk of a few
 * references and four value slots, once per node of a HistoryRead; the
 * historian reads the data collection rules the same way at its start.
 */
#ifndef WK_HISTCONF_H
#define WK_HISTCONF_H

#include <stdbool.h>
#include <stdint.h>

#include "hist/collect.h"
#include "proto/aggregate.h"
#include "worker.h"

/*
 * Variable node's configuration into *cfg: Stepped into cfg->stepped,
 * and with agg its AggregateConfiguration's four properties.  What the
 * node does not have (no configuration object, a property missing or
 * not of its type) leaves that field of *cfg as it was.  True when the
 * node has a configuration object.
 */
bool wk_histconf_get(const struct wk_worker *w, uint32_t node, bool agg,
                     struct ua_agg_config *cfg);

/*
 * Variable node's data collection rules (Part 11 §5.2.2) into *c (its
 * state zeroed): MinTimeInterval, MaxTimeInterval, ExceptionDeviation and
 * its format from the configuration object, the spans of the variable's
 * InstrumentRange and EURange properties (Part 8 §5.3.2).  True when one
 * of the rules is set (hs_collect_any()).  Read once, by the historian
 * at its start.
 */
bool wk_histconf_collect(const struct wk_worker *w, uint32_t node,
                         struct hs_collect *c);

#endif /* WK_HISTCONF_H */
