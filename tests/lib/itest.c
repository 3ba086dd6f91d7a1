/*
 * tests/lib/itest.c: the integration programs' shared reporting and small
 * helpers (see itest.h).
 */
#include "itest.h"

#include "proto/cert.h"
#include "proto/crypto.h"
#include "proto/status_gen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITEST_SCRATCH_MAX 32
#define ITEST_PROCS_MAX   16
#define ITEST_FAILS_KEPT  4     /* failed checks repeated at exit */

static const char *itest_name = "itest";
static unsigned    itest_passed, itest_failed;
static char        itest_dirs[ITEST_SCRATCH_MAX][PATH_MAX];
static unsigned    itest_ndirs;
/* The first failed checks' lines, repeated last at exit: a CI excerpt
 * shows a program's tail, after the broker log. */
static char        itest_fails[ITEST_FAILS_KEPT][256];

/* Registered processes; a group leader is killed with its group.  Read by
 * the signal handler: plain stores of pids, sig_atomic_t-sized use. */
static volatile pid_t     itest_procs[ITEST_PROCS_MAX];
static volatile sig_atomic_t itest_group[ITEST_PROCS_MAX];
static const char        *itest_log;

static void itest_keep(const char *tag, const char *fmt, va_list ap);

static int
itest_rm_one(const char *path, const struct stat *st, int flag,
             struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if ((flag == FTW_DP ? rmdir(path) : unlink(path)) == -1)
        fprintf(stderr, "%s: cannot remove %s: %s\n", itest_name, path,
                strerror(errno));
    return 0;
}

/* Keeps the line of the failure about to be counted (the first few). */
static void
itest_keep(const char *tag, const char *fmt, va_list ap)
{
    char *b;
    int   k;

    if (itest_failed >= ITEST_FAILS_KEPT)
        return;
    b = itest_fails[itest_failed];
    k = snprintf(b, sizeof(itest_fails[0]), "%u - %s",
                 itest_passed + itest_failed + 1, tag);
    if (k > 0 && (size_t)k < sizeof(itest_fails[0]))
        vsnprintf(b + k, sizeof(itest_fails[0]) - (size_t)k, fmt, ap);
}

static void
itest_cleanup(void)
{
    for (unsigned i = 0; i < itest_failed && i < ITEST_FAILS_KEPT; i++)
        fprintf(stderr, "%s: failed: %s\n", itest_name, itest_fails[i]);
    for (unsigned i = 0; i < itest_ndirs; i++) {
        if (itest_failed != 0)
            fprintf(stderr, "%s: kept %s for inspection\n", itest_name,
                    itest_dirs[i]);
        else
            nftw(itest_dirs[i], itest_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
    itest_ndirs = 0;
}

void
itest_init(const char *name)
{
    itest_name = name;
    atexit(itest_cleanup);
}

void
itest_scratch(const char *dir)
{
    if (itest_ndirs == ITEST_SCRATCH_MAX
        || strlen(dir) >= sizeof(itest_dirs[0])) {
        fprintf(stderr, "%s: not removed at exit: %s\n", itest_name, dir);
        return;
    }
    strcpy(itest_dirs[itest_ndirs++], dir);
}

bool
itest_check(bool ok, const char *fmt, ...)
{
    va_list ap;

    printf("%s %u - ", ok ? "ok" : "FAIL", itest_passed + itest_failed + 1);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!ok) {
        va_start(ap, fmt);
        itest_keep("", fmt, ap);
        va_end(ap);
    }
    if (ok)
        itest_passed++;
    else
        itest_failed++;
    return ok;
}

void
itest_fatal(const char *fmt, ...)
{
    va_list ap;

    printf("FAIL %u - ", itest_passed + itest_failed + 1);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" (fatal)\n");
    va_start(ap, fmt);
    itest_keep("(fatal) ", fmt, ap);
    va_end(ap);
    itest_failed++;
    exit(itest_finish());
}

unsigned
itest_failures(void)
{
    return itest_failed;
}

int
itest_finish(void)
{
    printf("%s: %u passed, %u failed\n", itest_name, itest_passed,
           itest_failed);
    fflush(stdout);
    return itest_failed == 0 ? 0 : 1;
}

uint64_t
itest_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void
itest_sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/*
 * Is port free to listen on, on every address (the broker binds the
 * wildcard)?  SO_REUSEADDR as the broker sets it, so a TIME_WAIT left by
 * an earlier program does not count as taken.
 */
static bool
itest_port_bindable(uint16_t port)
{
    struct sockaddr_in a;
    int                one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
    bool               ok;

    if (fd == -1)
        return false;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(port);
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/*
 * A port below the kernel's ephemeral range: a port the kernel hands out
 * (bind to 0) is free when asked but is also what the next outgoing
 * connect() of any process may take as its local port, before the broker
 * binds it ("Address already in use").  Ports below the range are never
 * given to connect().  Each call moves on from the last port given, so one
 * program never gets the same port twice.
 */
uint16_t
itest_free_port(void)
{
    static unsigned next;
    unsigned        lo = 32768, hi = 60999, base = 20000, span;
    FILE           *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

    if (f != NULL) {
        if (fscanf(f, "%u %u", &lo, &hi) != 2)
            lo = 32768;
        fclose(f);
    }
    if (lo <= base + 1000) {
        /* No room below the range: the kernel's choice, as before. */
        struct sockaddr_in a;
        socklen_t          l = sizeof(a);
        int                fd = socket(AF_INET, SOCK_STREAM, 0);
        uint16_t           port = 0;

        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd != -1 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0
            && getsockname(fd, (struct sockaddr *)&a, &l) == 0)
            port = ntohs(a.sin_port);
        if (fd != -1)
            close(fd);
        return port;
    }
    span = lo - base;
    if (next == 0) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        next = ((unsigned)getpid() * 7919u + (unsigned)ts.tv_nsec) % span;
    }
    for (unsigned i = 0; i < span; i++) {
        uint16_t port = (uint16_t)(base + next);

        next = (next + 1) % span;
        if (itest_port_bindable(port))
            return port;
    }
    return 0;
}

/* ------------------------------------------------------------ processes */

static void
itest_register(pid_t pid, bool group)
{
    for (int i = 0; i < ITEST_PROCS_MAX; i++) {
        if (itest_procs[i] <= 0) {
            itest_group[i] = group;
            itest_procs[i] = pid;
            return;
        }
    }
    itest_fatal("more than %d processes to watch", ITEST_PROCS_MAX);
}

static void
itest_forget(pid_t pid)
{
    for (int i = 0; i < ITEST_PROCS_MAX; i++)
        if (itest_procs[i] == pid)
            itest_procs[i] = -1;
}

/* Async-signal-safe: kill(2) only. */
static void
itest_kill_registered(void)
{
    for (int i = 0; i < ITEST_PROCS_MAX; i++) {
        pid_t pid = itest_procs[i];

        if (pid <= 0)
            continue;
        if (itest_group[i])
            kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
}

static void
itest_on_signal(int sig)
{
    static const char msg[] = "itest: watchdog or signal: killing the "
                              "processes under test\n";

    (void)sig;
    (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
    itest_kill_registered();
    _exit(1);
}

static void
itest_at_exit(void)
{
    char  line[1024];
    FILE *f;

    for (int i = 0; i < ITEST_PROCS_MAX; i++)
        if (itest_procs[i] > 0)
            itest_kill(itest_procs[i]);
    if (itest_failed != 0 && itest_log != NULL && itest_log[0] != '\0'
        && (f = fopen(itest_log, "r")) != NULL) {
        fprintf(stderr, "---- %s\n", itest_log);
        while (fgets(line, sizeof(line), f) != NULL)
            fputs(line, stderr);
        fprintf(stderr, "---- end of %s\n", itest_log);
        fclose(f);
    }
}

void
itest_guard(unsigned seconds, const char *log)
{
    itest_log = log;
    signal(SIGALRM, itest_on_signal);
    signal(SIGINT, itest_on_signal);
    signal(SIGTERM, itest_on_signal);
    alarm(seconds);
    /* Registered after itest_init()'s handler, so it runs before the
     * scratch directories are removed. */
    atexit(itest_at_exit);
}

pid_t
itest_spawn(const char *log, char *const argv[])
{
    pid_t pid;
    int   fd;

    fflush(NULL);
    pid = fork();
    if (pid == -1)
        itest_fatal("fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd != -1) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    itest_register(pid, true);
    return pid;
}

void
itest_own(pid_t pid)
{
    itest_register(pid, false);
}

void
itest_kill(pid_t pid)
{
    bool group = false;

    if (pid <= 0)
        return;
    for (int i = 0; i < ITEST_PROCS_MAX; i++)
        if (itest_procs[i] == pid)
            group = itest_group[i];
    if (group)
        kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
        ;
    itest_forget(pid);
}

bool
itest_alive(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, WNOHANG) != pid)
        return true;
    itest_forget(pid);
    return false;
}

int
itest_wait(pid_t pid)
{
    int status = 0;

    while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
        ;
    itest_forget(pid);
    return status;
}

int
itest_stop(pid_t pid, unsigned ms)
{
    int   status = 0;
    pid_t r = 0;

    kill(pid, SIGTERM);
    for (unsigned t = 0; t <= ms; t += 50) {
        r = waitpid(pid, &status, WNOHANG);
        if (r != 0)
            break;
        itest_sleep_ms(50);
    }
    if (r != pid) {
        itest_kill(pid);
        return -1;
    }
    itest_forget(pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void
itest_broker_bin(const char *argv0, char *out, size_t cap)
{
    const char *env = getenv("UABROKER_BIN");
    char        buf[PATH_MAX];

    if (env != NULL && env[0] != '\0') {
        snprintf(out, cap, "%s", env);
        return;
    }
    snprintf(buf, sizeof(buf), "%s", argv0);
    snprintf(out, cap, "%s/../../uabroker", dirname(buf));
    if (access(out, X_OK) != 0)
        itest_fatal("%s: %s (build it first)", out, strerror(errno));
}

void
itest_tmpdir(const char *prefix, char *out, size_t cap)
{
    const char *tmp = getenv("TMPDIR");

    /* Short: the broker's doorbell sockets (ipc://) live in it and their
     * paths must fit in sun_path, so a long $TMPDIR is not used. */
    snprintf(out, cap, "%s/%s-XXXXXX",
             tmp != NULL && tmp[0] != '\0' && strlen(tmp) < 60 ? tmp
                                                               : "/tmp",
             prefix);
    if (mkdtemp(out) == NULL) {
        out[0] = '\0';
        itest_fatal("mkdtemp: %s", strerror(errno));
    }
    itest_scratch(out);
}

int
itest_read_file(const char *path, uint8_t *buf, size_t cap, size_t *len)
{
    FILE *f = fopen(path, "rb");

    if (f == NULL)
        return -1;
    *len = fread(buf, 1, cap, f);
    fclose(f);
    return *len > 0 && *len < cap ? 0 : -1;
}

int
itest_write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    int   rc;

    if (f == NULL)
        return -1;
    rc = fwrite(buf, 1, len, f) == len ? 0 : -1;
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

int
itest_http(uint16_t port, const char *method, const char *path, char **body)
{
    struct sockaddr_in a;
    struct pollfd      pfd;
    char               req[256], *buf, *p;
    size_t             len = 0, cap = 1 << 16;
    uint64_t           deadline = itest_ms() + 5000;
    int                fd, code = -1, n;

    if (body != NULL)
        *body = NULL;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    n = snprintf(req, sizeof(req), "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                 "\r\n", method, path);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || n < 0
        || (size_t)n >= sizeof(req)
        || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n
        || (buf = malloc(cap)) == NULL) {
        close(fd);
        return -1;
    }
    pfd.fd = fd;
    pfd.events = POLLIN;
    for (;;) {
        ssize_t  r;
        uint64_t now = itest_ms();

        if (now >= deadline || poll(&pfd, 1, (int)(deadline - now)) <= 0)
            break;
        if (len + 1 >= cap) {
            char *nb = cap < (16u << 20) ? realloc(buf, cap * 2) : NULL;

            if (nb == NULL)
                break;
            buf = nb;
            cap *= 2;
        }
        r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    if (sscanf(buf, "HTTP/%*d.%*d %d", &code) != 1)
        code = -1;
    p = strstr(buf, "\r\n\r\n");
    if (body != NULL && p != NULL) {
        memmove(buf, p + 4, strlen(p + 4) + 1);
        *body = buf;
    } else if (body != NULL && code != -1) {
        buf[0] = '\0';
        *body = buf;
    } else {
        free(buf);
    }
    return code;
}

const char *
itest_json_find(const char *from, const char *key)
{
    char pat[128];

    if (from == NULL)
        return NULL;
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    from = strstr(from, pat);
    return from != NULL ? from + strlen(pat) : NULL;
}

bool
itest_json_u64(const char *from, const char *key, uint64_t *out)
{
    const char *p = itest_json_find(from, key);
    char       *end;

    if (p == NULL)
        return false;
    *out = strtoull(p, &end, 10);
    return end != p;
}

bool
itest_worker_u64(uint16_t sport, int slot, const char *key, uint64_t *out)
{
    char  pat[32], *body = NULL;
    bool  ok;

    if (itest_http(sport, "GET", "/stats", &body) != 200 || body == NULL) {
        free(body);
        return false;
    }
    snprintf(pat, sizeof(pat), "{\"slot\": %d,", slot);
    ok = itest_json_u64(strstr(body, pat), key, out);
    free(body);
    return ok;
}

bool
itest_wait_health(uint16_t sport, pid_t broker, unsigned ms)
{
    uint64_t end = itest_ms() + ms;
    int      status;

    while (itest_ms() < end) {
        if (itest_http(sport, "GET", "/health", NULL) == 200)
            return true;
        if (broker > 0 && waitpid(broker, &status, WNOHANG) == broker) {
            itest_forget(broker);
            return false;
        }
        itest_sleep_ms(50);
    }
    return false;
}

void
itest_mkdirs(const char *path)
{
    char        p[PATH_MAX];
    struct stat st;

    snprintf(p, sizeof(p), "%s", path);
    for (char *q = p + 1; *q != '\0'; q++) {
        if (*q == '/') {
            *q = '\0';
            mkdir(p, 0700);
            *q = '/';
        }
    }
    mkdir(p, 0700);
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        itest_fatal("cannot make the directory %s", p);
}

void
itest_client_identity(const char *dir, uint8_t *cert, size_t cap,
                      size_t *len, struct ua_crypto_key *key, char *uri,
                      size_t uri_cap)
{
    static uint8_t keyder[8192];
    char           path[PATH_MAX];
    struct ua_cert c;
    size_t         key_len;

    snprintf(path, sizeof(path), "%s/app.der", dir);
    if (itest_read_file(path, cert, cap, len) != 0
        || ua_cert_parse(cert, *len, &c) != UA_GOOD || c.uri == NULL
        || c.uri_len >= uri_cap)
        itest_fatal("cannot load %s", path);
    memcpy(uri, c.uri, c.uri_len);
    uri[c.uri_len] = '\0';
    snprintf(path, sizeof(path), "%s/app.key.der", dir);
    if (itest_read_file(path, keyder, sizeof(keyder), &key_len) != 0
        || ua_crypto_key_load(key, keyder, key_len) != UA_GOOD)
        itest_fatal("cannot load %s", path);
    ua_crypto_wipe(keyder, key_len);
}

pid_t
itest_broker_start(const char *bin, unsigned workers, const char *dir,
                   const char *log, const char *const *extra, unsigned ms,
                   uint16_t *port, uint16_t *sport)
{
    char        w[16], p[8], st[32];
    const char *av[64];
    size_t      n = 0;
    pid_t       pid;

    *port = itest_free_port();
    *sport = itest_free_port();
    if (*port == 0 || *sport == 0 || *port == *sport)
        itest_fatal("no free ports");
    snprintf(w, sizeof(w), "%u", workers);
    snprintf(p, sizeof(p), "%u", *port);
    snprintf(st, sizeof(st), "127.0.0.1:%u", *sport);
    av[n++] = bin;
    av[n++] = "-w";
    av[n++] = w;
    av[n++] = "-p";
    av[n++] = p;
    av[n++] = "--stats";
    av[n++] = st;
    av[n++] = "--runtime-dir";
    av[n++] = dir;
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
        if (n == sizeof(av) / sizeof(av[0]) - 1)
            itest_fatal("too many broker arguments");
        av[n++] = extra[i];
    }
    av[n] = NULL;
    pid = itest_spawn(log, (char *const *)av);
    printf("# broker %s pid %d, opc.tcp port %u, stats port %u\n", bin,
           (int)pid, *port, *sport);
    if (!itest_wait_health(*sport, pid, ms))
        itest_fatal("the broker is not healthy");
    return pid;
}
