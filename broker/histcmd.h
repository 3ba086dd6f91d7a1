/*
 * broker/histcmd.h: the `uabroker history` command (broker/histcmd.c):
 * the history store read without a running server (issue 18).
 */
#ifndef BK_HISTCMD_H
#define BK_HISTCMD_H

#include <stdio.h>

#include "config.h"

/*
 * `uabroker [options] history list`: every historized node of the store
 * of configuration c (history.dir), its values, bytes, oldest and newest
 * time and values dropped, then the totals, the modified values' and
 * annotations' counts and bytes, and the events' totals (count, bytes,
 * oldest and newest Time, dropped, duplicates, rejected).
 *
 * `uabroker [options] history export NODEID [FROM [TO]]`: the node's
 * values between FROM and TO (RFC 3339 times, inclusive; default all) as
 * CSV on out: source_time,server_time,status,value (the value in the
 * feed's syntax, docs/feed.md).
 *
 * `uabroker [options] history events NOTIFIER [FROM [TO]]`: the events
 * kept for the notifier (i=2253, the Server: every event) with FROM <=
 * Time <= TO, oldest first, as CSV on out:
 * time,event_type,source_node,severity,message,event_id (NodeIds in
 * their string form, the EventId in hex).
 *
 * A read-only LMDB reader: a running historian may go on writing.
 * Exit code: 0, 1 (no store, unknown node), 2 usage error.
 */
int bk_histcmd_run(const struct bk_config *c, int argc, char **argv,
                   FILE *out, FILE *err);

#endif /* BK_HISTCMD_H */
