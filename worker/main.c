/*
 * worker/main.c: uaworker entry point.
 *
 * A stub until the worker exists.  uaworker is started by uabroker only,
 * which passes its slot number, the shared-memory segment fd and its listener
 * fd (DESIGN.md §1); run by hand it says so and exits 2, the exit code of a
 * worker that must not be respawned (STYLE.md §4).
 */
#include <stdio.h>

#include "proto/version.h"

#define WK_EXIT_NO_RESPAWN 2

int
main(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr,
            "%s (%s %s): is started by uabroker only; run uabroker instead\n",
            argv[0] != NULL ? argv[0] : "uaworker", UA_PRODUCT_NAME,
            UA_VERSION);
    return WK_EXIT_NO_RESPAWN;
}
