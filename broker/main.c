/*
 * broker/main.c: uabroker command line.
 *
 * A stub until the server exists: it parses the options the server will
 * take (DESIGN.md §6: -p PORT, -w WORKERS, --help, --version), prints the
 * endpoint and worker count it would serve with, says that the server is not
 * implemented yet and exits 0.  Bad options exit 2 with a usage message.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/version.h"

#define BK_PORT_DEFAULT 4840
/* One interest bit per worker slot in a 64-bit mask (DESIGN.md §2). */
#define BK_WORKERS_MAX 64

struct bk_opts {
    long port;
    long workers;
};

static void bk_usage(FILE *f);
static int bk_parse_long(const char *s, long min, long max, long *out);
static long bk_workers_default(void);
static int bk_opts_parse(struct bk_opts *o, int argc, char **argv);

static const char bk_prog[] = "uabroker";

static void
bk_usage(FILE *f)
{
    fprintf(f,
            "Usage: %s [-p PORT] [-w WORKERS]\n"
            "\n"
            "  -p PORT       opc.tcp port to listen on (default %d)\n"
            "  -w WORKERS    worker processes, 1..%d (default: one per "
            "online CPU)\n"
            "  --help        show this help and exit\n"
            "  --version     show the version and exit\n",
            bk_prog, BK_PORT_DEFAULT, BK_WORKERS_MAX);
}

/* Parse a whole decimal number in [min, max]; 0 or -EINVAL. */
static int
bk_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static long
bk_workers_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (n < 1) {
        return 1;
    }
    return n > BK_WORKERS_MAX ? BK_WORKERS_MAX : n;
}

/*
 * Fill o from argv.  Returns 1 to continue, 0 when --help or --version was
 * handled (exit 0), -EINVAL on a bad option (usage already printed).
 */
static int
bk_opts_parse(struct bk_opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "port", required_argument, NULL, 'p' },
        { "workers", required_argument, NULL, 'w' },
        { NULL, 0, NULL, 0 }
    };
    int c;

    o->port = BK_PORT_DEFAULT;
    o->workers = bk_workers_default();

    while ((c = getopt_long(argc, argv, "p:w:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            bk_usage(stdout);
            return 0;
        case 'V':
            printf("%s %s\n", UA_PRODUCT_NAME, UA_VERSION);
            return 0;
        case 'p':
            if (bk_parse_long(optarg, 1, 65535, &o->port) != 0) {
                fprintf(stderr, "%s: -p: not a port number: %s\n", bk_prog,
                        optarg);
                return -EINVAL;
            }
            break;
        case 'w':
            if (bk_parse_long(optarg, 1, BK_WORKERS_MAX, &o->workers) != 0) {
                fprintf(stderr, "%s: -w: expected 1..%d workers: %s\n", bk_prog,
                        BK_WORKERS_MAX, optarg);
                return -EINVAL;
            }
            break;
        default:
            bk_usage(stderr);
            return -EINVAL;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument: %s\n", bk_prog, argv[optind]);
        bk_usage(stderr);
        return -EINVAL;
    }
    return 1;
}

int
main(int argc, char **argv)
{
    struct bk_opts o;
    char host[HOST_NAME_MAX + 1];
    int rc;

    rc = bk_opts_parse(&o, argc, argv);
    if (rc <= 0) {
        return rc == 0 ? EXIT_SUCCESS : 2;
    }

    if (gethostname(host, sizeof(host)) == -1) {
        strcpy(host, "localhost");
    }
    host[sizeof(host) - 1] = '\0';

    printf("%s %s\n", UA_PRODUCT_NAME, UA_VERSION);
    printf("endpoint: opc.tcp://%s:%ld\n", host, o.port);
    printf("workers: %ld\n", o.workers);
    printf("%s: the server is not implemented yet\n", bk_prog);
    return EXIT_SUCCESS;
}
