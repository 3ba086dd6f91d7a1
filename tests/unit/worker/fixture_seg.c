/*
 * tests/unit/worker/fixture_seg.c: a build tool of the worker tests, not a
 * test.  It builds the REAL address space with the broker's builder
 * (bk_addrspace_build over bk_config_defaults + bk_config_finish) and
 * writes the whole shared-memory segment, as a worker attached by fd would
 * see it, to a file the worker tests map (tests/unit/worker/fixture.h):
 *
 *   fixture_seg DIR     DIR/default.seg   100 variables v0..v99, 1 worker,
 *                                         a value heap of 4 MiB
 *                       DIR/big.seg       the same with 150,000 variables
 *                                         (check_svc_browse's scan budget)
 *
 * It is the only program of the worker tests linked with libbroker: the
 * tests themselves link libworker, libshm and libproto only (the Makefile,
 * UNIT_LIBS_worker), as every module's tests link their own archive.  A
 * test that needs other limits changes them in its private copy of the
 * configuration snapshot (fx_setup_with).
 *
 * Exit 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker/addrspace.h"
#include "broker/config.h"

#define FXS_NOW_DT INT64_C(133800000000000000)  /* fixture.h FX_NOW_DT */

static int fxs_write(const char *dir, const char *name, uint32_t vars);

/* Build the address space of vars variables into dir/name. */
static int
fxs_write(const char *dir, const char *name, uint32_t vars)
{
    struct bk_config    conf;
    struct bk_addrspace as;
    char                err[256], path[4096], tmp[4100];
    const uint8_t      *p;
    size_t              left;
    int                 fd;

    bk_config_defaults(&conf);
    conf.vars = vars;
    conf.workers = 1;
    conf.value_heap_mb = 4;
    bk_config_finish(&conf);
    if (bk_addrspace_build(&as, &conf, FXS_NOW_DT, err, sizeof(err)) != 0) {
        fprintf(stderr, "fixture_seg: %s: %s\n", name, err);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1) {
        fprintf(stderr, "fixture_seg: open(%s): %s\n", tmp, strerror(errno));
        bk_addrspace_close(&as);
        return -1;
    }
    p = as.seg.base;
    left = as.seg.size;
    while (left > 0) {
        ssize_t n = write(fd, p, left);

        if (n == -1 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "fixture_seg: write(%s): %s\n", tmp,
                    strerror(errno));
            close(fd);
            bk_addrspace_close(&as);
            return -1;
        }
        p += n;
        left -= (size_t)n;
    }
    bk_addrspace_close(&as);
    if (close(fd) == -1 || rename(tmp, path) == -1) {
        fprintf(stderr, "fixture_seg: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fixture_seg DIR\n");
        return 1;
    }
    if (fxs_write(argv[1], "default.seg", 100) != 0
        || fxs_write(argv[1], "big.seg", 150000) != 0)
        return 1;
    return 0;
}
