/*
 * broker/feedcmd.h: the `uabroker feed` command (broker/feedcmd.c), a
 * client of a running broker's feed sockets (broker/feed.h).
 */
#ifndef BK_FEEDCMD_H
#define BK_FEEDCMD_H

#include <stdio.h>

#include "config.h"

/*
 * `uabroker [options] feed [--push] [--url URL] (LINE... | -)`: send the
 * lines (each argument one line; "-": standard input) to the broker whose
 * configuration is c.  Default: to its control socket, waiting for the
 * report, printed on err (one line per refused line).  --push: fire and
 * forget to the feed socket (feed.listen, or --url).  Exit code: 0 all
 * applied, 1 some refused, 2 usage error or no broker.
 */
int bk_feedcmd_run(const struct bk_config *c, int argc, char **argv,
                   FILE *in, FILE *out, FILE *err);

#endif /* BK_FEEDCMD_H */
