/*
 * tests/unit/broker/check_notify.c: sd_notify by hand (broker/notify.c)
 * against a datagram socket the test binds: a path, an abstract name, no
 * $NOTIFY_SOCKET, bad and too-long addresses, the sender's credentials.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "broker/notify.h"

static char dir[64];
static char path[128];

static void
setup(void)
{
    strcpy(dir, "/tmp/uabroker-notify-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/notify", dir);
}

static void
teardown(void)
{
    unlink(path);
    rmdir(dir);
    unsetenv("NOTIFY_SOCKET");
}

/* A bound datagram socket with SO_PASSCRED: at the path, or abstract. */
static int
bind_dgram(const char *name, int abstract)
{
    struct sockaddr_un sa;
    socklen_t          len;
    int                fd, on = 1;

    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ne(fd, -1);
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on,
                                sizeof(on)), 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (abstract) {
        memcpy(sa.sun_path + 1, name, strlen(name));
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1
                          + strlen(name));
    } else {
        strcpy(sa.sun_path, name);
        len = (socklen_t)sizeof(sa);
    }
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, len), 0);
    return fd;
}

/* One datagram within 1 s into buf; its sender's pid in *pid. */
static ssize_t
recv_one(int fd, char *buf, size_t cap, pid_t *pid)
{
    union {
        struct cmsghdr h;
        char           b[CMSG_SPACE(sizeof(struct ucred))];
    } ctl;
    struct pollfd  p = { fd, POLLIN, 0 };
    struct iovec   iov = { buf, cap - 1 };
    struct msghdr  mh;
    struct cmsghdr *c;
    ssize_t        n;

    *pid = 0;
    if (poll(&p, 1, 1000) != 1)
        return -1;
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.b;
    mh.msg_controllen = sizeof(ctl.b);
    n = recvmsg(fd, &mh, 0);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
            struct ucred u;

            memcpy(&u, CMSG_DATA(c), sizeof(u));
            *pid = u.pid;
        }
    return n;
}

START_TEST(test_path)
{
    char  buf[256];
    pid_t pid;
    int   fd = bind_dgram(path, 0);

    setenv("NOTIFY_SOCKET", path, 1);
    ck_assert_int_eq(bk_notify("READY=1\nSTATUS=serving"), 1);
    ck_assert_int_eq(recv_one(fd, buf, sizeof(buf), &pid), 22);
    ck_assert_str_eq(buf, "READY=1\nSTATUS=serving");
    ck_assert_int_eq(pid, getpid());
    ck_assert_int_eq(bk_notify_fmt("STATUS=%u workers", 4u), 1);
    ck_assert_int_gt(recv_one(fd, buf, sizeof(buf), &pid), 0);
    ck_assert_str_eq(buf, "STATUS=4 workers");
    ck_assert_int_eq(bk_notify_reloading(), 1);
    ck_assert_int_gt(recv_one(fd, buf, sizeof(buf), &pid), 27);
    ck_assert_int_eq(strncmp(buf, "RELOADING=1\nMONOTONIC_USEC=", 27), 0);
    ck_assert_int_gt(strtoull(buf + 27, NULL, 10), 0);
    close(fd);
}
END_TEST

START_TEST(test_abstract)
{
    char  name[64], env[80], buf[256];
    pid_t pid;
    int   fd;

    snprintf(name, sizeof(name), "uabroker-notify-test-%ld", (long)getpid());
    fd = bind_dgram(name, 1);
    snprintf(env, sizeof(env), "@%s", name);
    setenv("NOTIFY_SOCKET", env, 1);
    ck_assert_int_eq(bk_notify("STOPPING=1"), 1);
    ck_assert_int_eq(recv_one(fd, buf, sizeof(buf), &pid), 10);
    ck_assert_str_eq(buf, "STOPPING=1");
    ck_assert_int_eq(pid, getpid());
    close(fd);
}
END_TEST

START_TEST(test_none_and_bad)
{
    char long_path[200];

    unsetenv("NOTIFY_SOCKET");
    ck_assert_int_eq(bk_notify("READY=1"), 0);
    ck_assert_int_eq(bk_notify_fmt("READY=%d", 1), 0);
    setenv("NOTIFY_SOCKET", "", 1);
    ck_assert_int_eq(bk_notify("READY=1"), 0);
    setenv("NOTIFY_SOCKET", "relative/sock", 1);
    ck_assert_int_eq(bk_notify("READY=1"), -EINVAL);
    memset(long_path, 'x', sizeof(long_path) - 1);
    long_path[0] = '/';
    long_path[sizeof(long_path) - 1] = '\0';
    setenv("NOTIFY_SOCKET", long_path, 1);
    ck_assert_int_eq(bk_notify("READY=1"), -ENAMETOOLONG);
    /* Nobody bound there: the socket's error, no crash, no signal. */
    setenv("NOTIFY_SOCKET", path, 1);
    ck_assert_int_eq(bk_notify("READY=1"), -ENOENT);
}
END_TEST

/* 107 bytes + NUL is the longest path sun_path holds. */
START_TEST(test_longest_path)
{
    struct sockaddr_un sa;
    char               p[sizeof(sa.sun_path)];
    char               buf[64];
    pid_t              pid;
    size_t             n;
    int                fd;

    n = (size_t)snprintf(p, sizeof(p), "%s/", dir);
    memset(p + n, 'n', sizeof(p) - 1 - n);
    p[sizeof(p) - 1] = '\0';
    fd = bind_dgram(p, 0);
    setenv("NOTIFY_SOCKET", p, 1);
    ck_assert_int_eq(bk_notify("READY=1"), 1);
    ck_assert_int_eq(recv_one(fd, buf, sizeof(buf), &pid), 7);
    close(fd);
    unlink(p);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Notify");
    TCase   *tc = tcase_create("sd_notify");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_path);
    tcase_add_test(tc, test_abstract);
    tcase_add_test(tc, test_none_and_bad);
    tcase_add_test(tc, test_longest_path);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
