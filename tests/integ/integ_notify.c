/*
 * tests/integ/integ_notify.c: the broker's sd_notify messages
 * (broker/notify.c) as systemd would receive them, on loopback.
 *
 *   1. binds a datagram socket (SO_PASSCRED) in a scratch directory and
 *      starts `uabroker -w 2` with NOTIFY_SOCKET naming it;
 *   2. the first message is READY=1 (with STATUS= and MAINPID=), sent by
 *      the broker's pid; at that moment, with no retry, a client's HEL
 *      gets its ACK and GET /health answers 200 (every worker serving);
 *   3. SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1; the broker
 *      still serves;
 *   4. SIGTERM: STOPPING=1, then the broker exits 0.
 *
 * Prints "ok N - what" / "FAIL N - what" and "integ_notify: N passed, M
 * failed"; exits non-zero on any failure.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/status_gen.h"
#include "proto/types.h"
#include "tests/lib/itest.h"
#include "tests/lib/uaconn.h"

#define IN_WATCHDOG_S   120
#define IN_START_MS     30000
#define IN_MSG_MAX      1024

static char in_dir[PATH_MAX];
static char in_log[PATH_MAX + 16];
static char in_bin[PATH_MAX];

static int in_bind(const char *path);
static bool in_recv(int fd, unsigned ms, char *buf, size_t cap, pid_t *pid);
static bool in_hel(uint16_t port);

/* A datagram socket at path that reports each sender's credentials. */
static int
in_bind(const char *path)
{
    struct sockaddr_un sa;
    int                fd, on = 1;

    if (strlen(path) >= sizeof(sa.sun_path))
        itest_fatal("socket path too long: %s", path);
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd == -1
        || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0)
        itest_fatal("socket: %m");
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        itest_fatal("bind %s: %m", path);
    return fd;
}

/* The next datagram within ms: its text in buf, its sender in *pid. */
static bool
in_recv(int fd, unsigned ms, char *buf, size_t cap, pid_t *pid)
{
    union {
        struct cmsghdr h;
        char           b[CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct pollfd   p = { fd, POLLIN, 0 };
    struct iovec    iov = { buf, cap - 1 };
    struct msghdr   mh;
    struct cmsghdr *c;
    ssize_t         n;

    *pid = 0;
    buf[0] = '\0';
    if (poll(&p, 1, (int)ms) != 1)
        return false;
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof(ctl.b);
    n = recvmsg(fd, &mh, 0);
    if (n < 0)
        return false;
    buf[n] = '\0';
    for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred u;

            memcpy(&u, CMSG_DATA(c), sizeof(u));
            *pid = u.pid;
        }
    return true;
}

/* Four connects + HEL (the kernel spreads them over the workers), no
 * retry: true when every ACK came. */
static bool
in_hel(uint16_t port)
{
    bool ok = true;

    for (int i = 0; i < 4; i++) {
        struct uaconn c;

        uaconn_init(&c);
        ok = ok && uaconn_connect(&c, "127.0.0.1", port) == 0
             && uaconn_hello(&c, NULL) == UA_GOOD;
        uaconn_clear(&c);
    }
    return ok;
}

int
main(int argc, char **argv)
{
    char     sock[PATH_MAX + 16], msg[IN_MSG_MAX];
    char     w[] = "2", p[8], st[32];
    uint16_t port, sport;
    pid_t    broker, from;
    int      fd, rc, code;
    bool     got;

    itest_init("integ_notify");
    (void)argc;
    itest_guard(IN_WATCHDOG_S, in_log);
    itest_broker_bin(argv[0], in_bin, sizeof(in_bin));
    itest_tmpdir("uabroker-notify", in_dir, sizeof(in_dir));
    snprintf(in_log, sizeof(in_log), "%s/broker.log", in_dir);
    snprintf(sock, sizeof(sock), "%s/notify", in_dir);
    fd = in_bind(sock);
    port = itest_free_port();
    sport = itest_free_port();
    if (port == 0 || sport == 0 || port == sport)
        itest_fatal("no free ports");
    snprintf(p, sizeof(p), "%u", port);
    snprintf(st, sizeof(st), "127.0.0.1:%u", sport);

    /* 1. The broker, told where systemd listens. */
    setenv("NOTIFY_SOCKET", sock, 1);
    {
        char *const av[] = { in_bin, "-w", w, "-p", p, "--stats", st,
                             "--runtime-dir", in_dir, NULL };

        broker = itest_spawn(in_log, av);
    }
    unsetenv("NOTIFY_SOCKET");
    printf("# broker pid %d, opc.tcp port %u, stats port %u\n", (int)broker,
           port, sport);

    /* 2. READY=1 first, and only once the workers serve. */
    got = in_recv(fd, IN_START_MS, msg, sizeof(msg), &from);
    if (!got)
        itest_fatal("no message from the broker within %u ms",
                    IN_START_MS);
    itest_check(in_hel(port), "at READY a HEL gets its ACK at once");
    code = itest_http(sport, "GET", "/health", NULL);
    itest_check(code == 200, "at READY /health answers 200 (%d)", code);
    itest_check(strncmp(msg, "READY=1\n", 8) == 0
                    && strstr(msg, "\nSTATUS=serving opc.tcp://") != NULL
                    && strstr(msg, "with 2 workers") != NULL,
                "the first message is READY=1 with STATUS: \"%s\"", msg);
    {
        char mainpid[32];

        snprintf(mainpid, sizeof(mainpid), "\nMAINPID=%d", (int)broker);
        itest_check(strstr(msg, mainpid) != NULL, "READY names MAINPID=%d",
                    (int)broker);
    }
    itest_check(from == broker, "sent by the broker's pid (%d, want %d)",
                (int)from, (int)broker);
    got = in_recv(fd, 300, msg, sizeof(msg), &from);
    itest_check(!got, "READY=1 is sent once (then: \"%s\")", msg);

    /* 3. SIGHUP: RELOADING=1, then READY=1. */
    kill(broker, SIGHUP);
    got = in_recv(fd, 5000, msg, sizeof(msg), &from);
    itest_check(got && strncmp(msg, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0
                    && strtoull(msg + 27, NULL, 10) > 0 && from == broker,
                "SIGHUP: RELOADING=1 with MONOTONIC_USEC: \"%s\"", msg);
    got = in_recv(fd, 5000, msg, sizeof(msg), &from);
    itest_check(got && strncmp(msg, "READY=1\n", 8) == 0 && from == broker,
                "after the reload: READY=1: \"%s\"", msg);
    itest_check(in_hel(port), "after the reload a HEL gets its ACK");

    /* 4. SIGTERM: STOPPING=1, exit 0. */
    kill(broker, SIGTERM);
    got = in_recv(fd, 5000, msg, sizeof(msg), &from);
    itest_check(got && strncmp(msg, "STOPPING=1", 10) == 0 && from == broker,
                "SIGTERM: STOPPING=1: \"%s\"", msg);
    rc = itest_stop(broker, 10000);
    itest_check(rc == 0, "the broker exits 0 (%d)", rc);
    close(fd);
    return itest_finish();
}
