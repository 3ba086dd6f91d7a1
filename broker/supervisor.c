/*
 * broker/supervisor.c: listening sockets, fork+exec of the workers,
 * reaping, respawn with backoff, graceful stop (see supervisor.h).
 *
 * The worker table (SHM_R_WORKERS): the broker writes a row's pid, its
 * state on the broker's side of a restart (STARTING before the spawn, DOWN
 * after the reap) and restarts; the worker writes everything else.  The
 * broker resets a row only when its worker has been reaped, so nobody else
 * writes it meanwhile.  Likewise the worker's share of the server-wide
 * budgets (shm/limits.h) returns to the server when it is reaped.
 *
 * Between fork and exec the child calls only async-signal-safe functions
 * (prctl, getppid, fcntl, close_range, sigaction, sigprocmask, execve,
 * write, _exit): the broker may have threads (nanomsg) by then.  The fork
 * is a vfork (the child borrows the broker's memory until its execve, as
 * posix_spawn does): no copy of the broker's page tables and no
 * copy-on-write faults in either process afterwards, a few milliseconds
 * per worker on a virtual machine (docs/benchmarks.md "Start-up of the
 * whole server").  So the child writes no memory but its own stack: every
 * signal is blocked around the vfork, and the child sets each caught
 * signal back to its default before it unblocks them (a handler must not
 * run in the broker's memory on the child's behalf).
 */
#include "supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "request.h"
#include "shm/limits.h"
#include "shm/log.h"

#define BK_BROKER_PID_ENV "UABROKER_PID"

extern char **environ;

static int bk_supervisor_find_worker(struct bk_supervisor *sv, char *err,
                                     size_t errlen);
static int bk_supervisor_env(struct bk_supervisor *sv);
static int bk_supervisor_probe(uint32_t port, char *err, size_t errlen);
static int bk_supervisor_listen(uint32_t port, char *err, size_t errlen);
static void bk_supervisor_row_reset(struct shm_worker *r);
static int bk_supervisor_spawn(struct bk_supervisor *sv,
                               struct bk_worker_slot *s);
static void bk_supervisor_child(const struct bk_supervisor *sv,
                                const struct bk_worker_slot *s,
                                char *argv[]) __attribute__((noreturn));
static void bk_supervisor_on_sigchld(evutil_socket_t fd, short what,
                                     void *arg);
static void bk_supervisor_exited(struct bk_supervisor *sv,
                                 struct bk_worker_slot *s, int status);
static void bk_supervisor_later(struct bk_worker_slot *s);
static void bk_supervisor_on_respawn(evutil_socket_t fd, short what,
                                     void *arg);
static void bk_supervisor_on_stop_timer(evutil_socket_t fd, short what,
                                        void *arg);
static void bk_supervisor_kill_all(struct bk_supervisor *sv, int sig);
static void bk_supervisor_stopped(struct bk_supervisor *sv);
static unsigned bk_supervisor_slots(const struct bk_supervisor *sv);
static void bk_supervisor_on_roll(evutil_socket_t fd, short what, void *arg);
static uint64_t bk_supervisor_roll_ms(const struct bk_supervisor *sv,
                                      bool kill_);
static int bk_supervisor_historian_init(struct bk_supervisor *sv,
                                        char *err, size_t errlen);
static void bk_supervisor_historian_argv(struct bk_supervisor *sv,
                                         char *argv[], size_t n);


uint32_t
bk_supervisor_count(uint32_t configured)
{
    long n = configured;

    if (n == 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > SHM_WORKERS_MAX)
        n = SHM_WORKERS_MAX;
    return (uint32_t)n;
}

/* uaworker lives next to uabroker (build/ or the install directory). */
static int
bk_supervisor_find_worker(struct bk_supervisor *sv, char *err, size_t errlen)
{
    char    self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int     w;

    if (n == -1) {
        snprintf(err, errlen, "readlink(/proc/self/exe) failed: %s",
                 strerror(errno));
        return -1;
    }
    self[n] = '\0';
    w = snprintf(sv->worker_path, sizeof(sv->worker_path), "%s/uaworker",
                 dirname(self));
    if (w < 0 || (size_t)w >= sizeof(sv->worker_path)) {
        snprintf(err, errlen, "path of uaworker too long");
        return -1;
    }
    if (access(sv->worker_path, X_OK) != 0) {
        snprintf(err, errlen, "%s: %s (uaworker must sit next to uabroker)",
                 sv->worker_path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The workers' environment: ours, with UABROKER_PID=<our pid>. */
static int
bk_supervisor_env(struct bk_supervisor *sv)
{
    size_t n = 0, k = 0;
    char  *pid;

    while (environ != NULL && environ[n] != NULL)
        n++;
    sv->envp = bk_calloc(n + 2, sizeof(*sv->envp));
    pid = bk_alloc(32);
    if (sv->envp == NULL || pid == NULL) {
        bk_free(pid);
        bk_free(sv->envp);
        sv->envp = NULL;
        return -1;
    }
    snprintf(pid, 32, "%s=%d", BK_BROKER_PID_ENV, (int)sv->broker_pid);
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], BK_BROKER_PID_ENV "=",
                    sizeof(BK_BROKER_PID_ENV)) != 0)
            sv->envp[k++] = environ[i];
    sv->envp[k++] = pid;
    sv->envp[k] = NULL;
    return 0;
}

/*
 * SO_REUSEPORT would let a second broker on the same port silently share
 * it: bind once without it first, so a port in use is an error.
 */
static int
bk_supervisor_probe(uint32_t port, char *err, size_t errlen)
{
    struct sockaddr_in6 a6;
    struct sockaddr_in  a4;
    int                 fd, one = 1, zero = 0, rc;

    fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd != -1) {
        memset(&a6, 0, sizeof(a6));
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)port);
        a6.sin6_addr = in6addr_any;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        rc = bind(fd, (struct sockaddr *)&a6, sizeof(a6));
    } else {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd == -1) {
            snprintf(err, errlen, "socket() failed: %s", strerror(errno));
            return -1;
        }
        memset(&a4, 0, sizeof(a4));
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)port);
        a4.sin_addr.s_addr = htonl(INADDR_ANY);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        rc = bind(fd, (struct sockaddr *)&a4, sizeof(a4));
    }
    if (rc == -1) {
        snprintf(err, errlen, "bind() to port %u failed: %s", port,
                 strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/*
 * One listening socket of the slot group: IPv6 dual-stack on every
 * interface when the host has IPv6, else IPv4; SO_REUSEADDR + SO_REUSEPORT,
 * close-on-exec (the child clears it on its own socket only).
 */
static int
bk_supervisor_listen(uint32_t port, char *err, size_t errlen)
{
    struct sockaddr_in6 a6;
    struct sockaddr_in  a4;
    int                 fd, one = 1, zero = 0;

    fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd != -1) {
        memset(&a6, 0, sizeof(a6));
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)port);
        a6.sin6_addr = in6addr_any;
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero))
                == -1
            || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))
                == -1
            || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))
                == -1
            || bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == -1) {
            close(fd);
            fd = -1;
        }
    }
    if (fd == -1) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd == -1) {
            snprintf(err, errlen, "socket() failed: %s", strerror(errno));
            return -1;
        }
        memset(&a4, 0, sizeof(a4));
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)port);
        a4.sin_addr.s_addr = htonl(INADDR_ANY);
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1
            || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))
                == -1
            || bind(fd, (struct sockaddr *)&a4, sizeof(a4)) == -1) {
            snprintf(err, errlen, "bind() to port %u failed: %s", port,
                     strerror(errno));
            close(fd);
            return -1;
        }
    }
    if (listen(fd, BK_LISTEN_BACKLOG) == -1) {
        snprintf(err, errlen, "listen() on port %u failed: %s", port,
                 strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int
bk_supervisor_init(struct bk_supervisor *sv, struct event_base *base,
                   const struct bk_config *c, const struct shm_segment *seg,
                   char *err, size_t errlen)
{
    struct rlimit rl;

    memset(sv, 0, sizeof(*sv));
    sv->base = base;
    sv->conf = c;
    sv->seg = seg;
    sv->rows = shm_segment_region(seg, SHM_R_WORKERS);
    sv->n = bk_supervisor_count(c->workers);
    sv->broker_pid = getpid();
    sv->max_fd = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
        && rl.rlim_cur < 65536)
        sv->max_fd = (int)rl.rlim_cur;
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        sv->slots[i].sv = sv;
        sv->slots[i].slot = i;
        sv->slots[i].listen_fd = -1;
    }
    if (bk_supervisor_find_worker(sv, err, errlen) != 0)
        return -1;
    if (bk_supervisor_env(sv) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (bk_supervisor_probe(c->port, err, errlen) != 0)
        goto fail;
    for (unsigned i = 0; i < sv->n; i++) {
        struct bk_worker_slot *s = &sv->slots[i];

        s->listen_fd = bk_supervisor_listen(c->port, err, errlen);
        if (s->listen_fd == -1)
            goto fail;
        evtimer_assign(&s->respawn, base, bk_supervisor_on_respawn, s);
    }
    if (c->history_enabled
        && bk_supervisor_historian_init(sv, err, errlen) != 0)
        goto fail;
    evsignal_assign(&sv->sigchld, base, SIGCHLD, bk_supervisor_on_sigchld,
                    sv);
    evtimer_assign(&sv->stop_timer, base, bk_supervisor_on_stop_timer, sv);
    if (event_add(&sv->sigchld, NULL) != 0) {
        snprintf(err, errlen, "evsignal(SIGCHLD) failed");
        goto fail;
    }
    return 0;
fail:
    bk_supervisor_clear(sv);
    return -1;
}

int
bk_supervisor_start(struct bk_supervisor *sv)
{
    unsigned n = bk_supervisor_slots(sv);
    int      rc = 0;

    /* The historian first (its start is the longer one: the store, every
     * historized variable), then the workers in slot order. */
    for (unsigned k = 0; k < n; k++) {
        unsigned           i = sv->historian ? (k + n - 1) % n : k;
        struct shm_worker *r = bk_supervisor_row(sv, i);

        atomic_store_explicit(&r->restarts, 0, memory_order_relaxed);
        if (bk_supervisor_spawn(sv, &sv->slots[i]) != 0)
            rc = -1;
    }
    return rc;
}

/* Every counter of a reaped worker's row to zero, except `restarts`. */
static void
bk_supervisor_row_reset(struct shm_worker *r)
{
#define BK_Z(f) atomic_store_explicit(&r->f, 0, memory_order_relaxed)
    BK_Z(pid);
    BK_Z(started);
    BK_Z(heartbeat);
    BK_Z(connections);
    BK_Z(connections_total);
    BK_Z(channels);
    BK_Z(sessions);
    BK_Z(bad_requests);
    BK_Z(bytes_in);
    BK_Z(bytes_out);
    BK_Z(allocations);
    BK_Z(rejected_connections);
    BK_Z(sessions_evicted);
    BK_Z(notif_dropped);
    BK_Z(notifications);
    BK_Z(notif_blocks);
    BK_Z(overflows);
    BK_Z(write_ops);
    BK_Z(hist_stored);
    BK_Z(hist_dropped);
    BK_Z(hist_commits);
    BK_Z(hist_lag_ms);
    BK_Z(hist_full);
    BK_Z(hist_nodes);
    BK_Z(hist_filtered);
    BK_Z(hist_events_stored);
    BK_Z(hist_events_dropped);
    BK_Z(hist_events_lost);
    for (int i = 0; i < SHM_SVC_MAX; i++) {
        BK_Z(requests[i]);
        BK_Z(latency_sum_us[i]);
        for (int b = 0; b < SHM_LAT_BUCKETS; b++)
            BK_Z(latency[i][b]);
    }
#undef BK_Z
    atomic_store_explicit(&r->state, SHM_WS_STARTING, memory_order_release);
}

/* Fork and exec slot s's worker.  0, or -1 (logged; retried later). */
static int
bk_supervisor_spawn(struct bk_supervisor *sv, struct bk_worker_slot *s)
{
    struct shm_worker *r = bk_supervisor_row(sv, s->slot);
    char               slot[16], segfd[16], lfd[16];
    char              *argv[24] = { sv->worker_path, "--slot", slot,
                                    "--segment-fd", segfd, "--listen-fd",
                                    lfd, NULL };
    sigset_t           all, old;
    pid_t              pid;

    snprintf(slot, sizeof(slot), "%u", s->slot);
    snprintf(segfd, sizeof(segfd), "%d", sv->seg->fd);
    snprintf(lfd, sizeof(lfd), "%d", s->listen_fd);
    if (sv->historian && s->slot == sv->n)
        bk_supervisor_historian_argv(sv, argv, sizeof(argv) / sizeof(*argv));
    bk_supervisor_row_reset(r);
    if (sv->request != NULL) {
        int rc = bk_request_worker_start(sv->request, s->slot);

        if (rc != 0)
            shm_log(SHM_LOG_ERROR, "worker %u: doorbell in %s: %s", s->slot,
                    sv->conf->runtime_dir, strerror(-rc));
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = vfork();
    if (pid == 0)
        bk_supervisor_child(sv, s, argv);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid == -1) {
        shm_log(SHM_LOG_ERROR, "fork() failed for worker %u: %s", s->slot,
                strerror(errno));
        atomic_store_explicit(&r->state, SHM_WS_DOWN, memory_order_release);
        s->backoff_ms = s->backoff_ms ? s->backoff_ms : BK_BACKOFF_MIN_MS;
        bk_supervisor_later(s);
        return -1;
    }
    s->pid = pid;
    s->started_ms = bk_clock_ms();
    sv->running++;
    atomic_store_explicit(&r->pid, (int32_t)pid, memory_order_relaxed);
    return 0;
}

/* In the child, between vfork and exec: async-signal-safe calls only,
 * every signal blocked, no memory written but this stack. */
static void
bk_supervisor_child(const struct bk_supervisor *sv,
                    const struct bk_worker_slot *s, char *argv[])
{
    static const char msg[] = "uabroker: execve(uaworker) failed\n";
    struct sigaction  sa, cur;
    sigset_t          none;

    /* Die with the broker, and make sure it did not die before this. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1 || getppid() != sv->broker_pid)
        _exit(BK_WORKER_NO_RESPAWN);
    /* Exactly the segment and this slot's listener cross the exec. */
    if (close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) == -1)
        for (int fd = 3; fd < sv->max_fd; fd++)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fcntl(sv->seg->fd, F_SETFD, 0) == -1
        || (s->listen_fd != -1 && fcntl(s->listen_fd, F_SETFD, 0) == -1))
        _exit(BK_WORKER_NO_RESPAWN);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &sa, NULL);
    /* The broker's handlers (libevent's) are the broker's: default here,
     * as execve would make them, before anything is unblocked. */
    for (int sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL
            && cur.sa_handler != SIG_IGN)
            sigaction(sig, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(argv[0], argv, sv->envp);
    (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
    _exit(BK_WORKER_NO_RESPAWN);
}

static void
bk_supervisor_on_sigchld(evutil_socket_t fd, short what, void *arg)
{
    struct bk_supervisor *sv = arg;
    pid_t                 pid;
    int                   status;

    (void)fd;
    (void)what;
    /* Several children may have exited for one SIGCHLD. */
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (unsigned i = 0; i < bk_supervisor_slots(sv); i++) {
            if (sv->slots[i].pid == pid) {
                bk_supervisor_exited(sv, &sv->slots[i], status);
                break;
            }
        }
    }
}

/* Slot s's worker was reaped with status: log, mark DOWN, respawn. */
static void
bk_supervisor_exited(struct bk_supervisor *sv, struct bk_worker_slot *s,
                     int status)
{
    struct shm_worker *r = bk_supervisor_row(sv, s->slot);
    uint64_t           up = bk_clock_ms() - s->started_ms;
    pid_t              pid = s->pid;

    s->pid = 0;
    s->last_status = status;
    sv->running--;
    /* Before anything can respawn into the slot (blockpool.h). */
    if (sv->request != NULL)
        bk_request_worker_dead(sv->request, s->slot);
    /* Its sessions, subscriptions and items died with it: their units of
     * the server-wide budgets return before a successor can take any. */
    shm_limits_reclaim(shm_limits_of(sv->seg), s->slot);
    atomic_store_explicit(&r->pid, 0, memory_order_relaxed);
    atomic_store_explicit(&r->state, SHM_WS_DOWN, memory_order_release);
    /* Asked to stop: a notice; of its own accord: a warning (a crash, an
     * error the worker logged). */
    if (WIFSIGNALED(status))
        shm_log(sv->stopping || s->retiring ? SHM_LOG_NOTICE
                                            : SHM_LOG_WARNING,
                "worker %u (pid %d) exited on signal %d%s", s->slot,
                (int)pid, WTERMSIG(status),
                WCOREDUMP(status) ? " (core dumped)" : "");
    else
        shm_log(sv->stopping || s->retiring ? SHM_LOG_NOTICE
                                            : SHM_LOG_WARNING,
                "worker %u (pid %d) exited with code %d", s->slot, (int)pid,
                WEXITSTATUS(status));
    if (sv->stopping) {
        if (sv->running == 0)
            bk_supervisor_stopped(sv);
        return;
    }
    if (s->retiring) {
        /* A rolling restart: the successor at once, from the binary on
         * disk; the backoff is for crashes. */
        s->retiring = false;
        atomic_store_explicit(&r->restarts,
                              atomic_load_explicit(&r->restarts,
                                                   memory_order_relaxed) + 1,
                              memory_order_relaxed);
        shm_log(SHM_LOG_NOTICE, "rolling restart: worker %u retired, "
                "starting its successor", s->slot);
        (void)bk_supervisor_spawn(sv, s);
        return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == BK_WORKER_NO_RESPAWN) {
        s->failed = true;
        shm_log(SHM_LOG_ERROR, "worker %u failed to start; not respawning "
                "it (fix the cause and restart uabroker)", s->slot);
        return;
    }
    if (up >= BK_BACKOFF_RESET_MS || s->backoff_ms == 0)
        s->backoff_ms = BK_BACKOFF_MIN_MS;
    else if (s->backoff_ms < BK_BACKOFF_MAX_MS)
        s->backoff_ms = s->backoff_ms * 2 > BK_BACKOFF_MAX_MS
                            ? BK_BACKOFF_MAX_MS : s->backoff_ms * 2;
    atomic_store_explicit(&r->restarts,
                          atomic_load_explicit(&r->restarts,
                                               memory_order_relaxed) + 1,
                          memory_order_relaxed);
    shm_log(SHM_LOG_NOTICE, "respawning worker %u in %u ms", s->slot,
            s->backoff_ms);
    bk_supervisor_later(s);
}

/* Arm s's respawn timer for its backoff. */
static void
bk_supervisor_later(struct bk_worker_slot *s)
{
    struct timeval tv;

    tv.tv_sec = s->backoff_ms / 1000;
    tv.tv_usec = (suseconds_t)(s->backoff_ms % 1000) * 1000;
    evtimer_add(&s->respawn, &tv);
}

static void
bk_supervisor_on_respawn(evutil_socket_t fd, short what, void *arg)
{
    struct bk_worker_slot *s = arg;

    (void)fd;
    (void)what;
    if (!s->sv->stopping && s->pid == 0)
        bk_supervisor_spawn(s->sv, s);
}

static void
bk_supervisor_kill_all(struct bk_supervisor *sv, int sig)
{
    for (unsigned i = 0; i < bk_supervisor_slots(sv); i++)
        if (sv->slots[i].pid > 0)
            kill(sv->slots[i].pid, sig);
}

void
bk_supervisor_stop(struct bk_supervisor *sv, void (*done)(void *arg),
                   void *arg)
{
    struct timeval tv = { BK_STOP_TIMEOUT_MS / 1000,
                          (BK_STOP_TIMEOUT_MS % 1000) * 1000 };

    if (sv->stopping) {
        shm_log(SHM_LOG_WARNING, "stopping now: SIGKILL to every worker");
        bk_supervisor_kill_all(sv, SIGKILL);
        return;
    }
    sv->stopping = true;
    if (sv->rolling) {
        evtimer_del(&sv->roll_timer);
        sv->rolling = false;
    }
    sv->done = done;
    sv->done_arg = arg;
    for (unsigned i = 0; i < bk_supervisor_slots(sv); i++)
        evtimer_del(&sv->slots[i].respawn);
    if (sv->running == 0) {
        bk_supervisor_stopped(sv);
        return;
    }
    bk_supervisor_kill_all(sv, SIGTERM);
    evtimer_add(&sv->stop_timer, &tv);
}

static void
bk_supervisor_on_stop_timer(evutil_socket_t fd, short what, void *arg)
{
    struct bk_supervisor *sv = arg;

    (void)fd;
    (void)what;
    shm_log(SHM_LOG_WARNING, "%u worker(s) still running after %d s: "
            "SIGKILL", sv->running, BK_STOP_TIMEOUT_MS / 1000);
    bk_supervisor_kill_all(sv, SIGKILL);
}

static void
bk_supervisor_stopped(struct bk_supervisor *sv)
{
    evtimer_del(&sv->stop_timer);
    if (sv->done != NULL) {
        void (*done)(void *) = sv->done;

        sv->done = NULL;
        done(sv->done_arg);
    }
}

void
bk_supervisor_clear(struct bk_supervisor *sv)
{
    if (sv->base == NULL)
        return;
    for (unsigned i = 0; i < SHM_WORKERS_MAX; i++) {
        struct bk_worker_slot *s = &sv->slots[i];

        if (s->listen_fd != -1) {
            evtimer_del(&s->respawn);
            close(s->listen_fd);
            s->listen_fd = -1;
        }
    }
    if (sv->historian && event_initialized(&sv->slots[sv->n].respawn))
        evtimer_del(&sv->slots[sv->n].respawn);
    if (event_initialized(&sv->sigchld))
        event_del(&sv->sigchld);
    if (event_initialized(&sv->stop_timer))
        event_del(&sv->stop_timer);
    if (event_initialized(&sv->roll_timer))
        event_del(&sv->roll_timer);
    if (sv->envp != NULL) {
        for (size_t i = 0; sv->envp[i] != NULL; i++)
            if (strncmp(sv->envp[i], BK_BROKER_PID_ENV "=",
                        sizeof(BK_BROKER_PID_ENV)) == 0)
                bk_free(sv->envp[i]);
        bk_free(sv->envp);
        sv->envp = NULL;
    }
    sv->base = NULL;
}

/* ------------------------------------------------------------ historian */

/* The slots supervised: the workers', then the historian's. */
static unsigned
bk_supervisor_slots(const struct bk_supervisor *sv)
{
    return sv->n + (sv->historian ? 1 : 0);
}

/*
 * The historian (issue 18): uahistorian next to uabroker, in slot n (the
 * fan-out and the plan gave that slot its rings: bk_config_slots), its
 * options from [history].  0, or -1 with err.
 */
static int
bk_supervisor_historian_init(struct bk_supervisor *sv, char *err,
                             size_t errlen)
{
    const struct bk_config *c = sv->conf;
    size_t                  n = strlen(sv->worker_path);
    char                    dir[PATH_MAX];

    if (sv->n >= SHM_WORKERS_MAX || n < 8) {
        snprintf(err, errlen, "no worker slot left for the historian");
        return -1;
    }
    snprintf(sv->historian_path, sizeof(sv->historian_path), "%.*s"
             "uahistorian", (int)(n - 8), sv->worker_path);
    if (access(sv->historian_path, X_OK) != 0) {
        snprintf(err, errlen, "%s: %s (uahistorian must sit next to "
                 "uabroker, or set history.enabled = false)",
                 sv->historian_path, strerror(errno));
        return -1;
    }
    if (bk_config_history_path(c, dir, sizeof(dir)) != 0) {
        snprintf(err, errlen, "history.dir: path too long");
        return -1;
    }
    snprintf(sv->hist_args[0], PATH_MAX, "%s", dir);
    snprintf(sv->hist_args[1], PATH_MAX, "%u", c->history_map_mb);
    snprintf(sv->hist_args[2], PATH_MAX, "%u", c->history_max_mb);
    snprintf(sv->hist_args[3], PATH_MAX, "%u", c->history_retention_s);
    snprintf(sv->hist_args[4], PATH_MAX, "%u", c->history_flush_ms);
    snprintf(sv->hist_args[5], PATH_MAX, "%u", c->history_batch);
    snprintf(sv->hist_args[6], PATH_MAX, "%u", c->history_sync ? 1 : 0);
    evtimer_assign(&sv->slots[sv->n].respawn, sv->base,
                   bk_supervisor_on_respawn, &sv->slots[sv->n]);
    sv->historian = true;
    return 0;
}

/* The historian's argv over a worker's (slot and segment fd kept). */
static void
bk_supervisor_historian_argv(struct bk_supervisor *sv, char *argv[],
                             size_t n)
{
    static const char *const names[] = {
        "--dir", "--map-mb", "--max-mb", "--retention-s", "--flush-ms",
        "--batch", "--sync",
    };
    size_t k = 5;

    argv[0] = sv->historian_path;
    for (size_t i = 0; i < 7 && k + 2 < n; i++) {
        argv[k++] = (char *)names[i];
        argv[k++] = sv->hist_args[i];
    }
    argv[k] = NULL;
}

/* ------------------------------------------------------ rolling restart */

enum { BK_ROLL_SIGNAL = 0, BK_ROLL_EXIT, BK_ROLL_UP };

/* The deadlines of a step, read at each use (live keys: a SIGHUP during a
 * rolling restart applies to its next step): a retiring worker's exit
 * (server.retire_kill_ms), else a worker's start (server.roll_start_ms);
 * the former constants without a configuration (unit tests). */
static uint64_t
bk_supervisor_roll_ms(const struct bk_supervisor *sv, bool kill_)
{
    uint32_t ms = sv->conf == NULL ? 0
                  : kill_ ? sv->conf->retire_kill_ms : sv->conf->roll_start_ms;

    return ms != 0 ? ms : BK_RETIRE_TIMEOUT_MS;
}

int
bk_supervisor_roll(struct bk_supervisor *sv)
{
    struct timeval tv = { 0, BK_ROLL_TICK_MS * 1000 };

    if (sv->rolling || sv->stopping) {
        shm_log(SHM_LOG_WARNING, "rolling restart: %s",
                sv->rolling ? "one is running already" : "stopping");
        return -1;
    }
    if (!event_initialized(&sv->roll_timer))
        event_assign(&sv->roll_timer, sv->base, -1, EV_PERSIST,
                     bk_supervisor_on_roll, sv);
    if (event_add(&sv->roll_timer, &tv) != 0)
        return -1;
    sv->rolling = true;
    sv->roll_slot = 0;
    sv->roll_end = 0;
    sv->roll_phase = BK_ROLL_SIGNAL;
    shm_log(SHM_LOG_NOTICE, "rolling restart of %u worker%s%s", sv->n,
            sv->n == 1 ? "" : "s",
            sv->n == 1 ? " (one worker: its sessions are lost, "
                         "docs/operations.md)" : "");
    return 0;
}

/* One step: tell, wait for the exit, wait for the successor, next. */
static void
bk_supervisor_on_roll(evutil_socket_t fd, short what, void *arg)
{
    struct bk_supervisor  *sv = arg;
    struct bk_worker_slot *s;
    uint64_t               now = bk_clock_ms();

    (void)fd;
    (void)what;
    if (sv->roll_slot >= sv->n) {
        evtimer_del(&sv->roll_timer);
        sv->rolling = false;
        sv->rolls++;
        shm_log(SHM_LOG_NOTICE, "rolling restart done");
        return;
    }
    s = &sv->slots[sv->roll_slot];
    switch (sv->roll_phase) {
    case BK_ROLL_SIGNAL:
        if (s->pid <= 0 || s->failed) {
            sv->roll_slot++;        /* down: its respawn is a new one */
            sv->roll_end = 0;
            return;
        }
        /* Starting still (a respawn after a crash): SIGUSR2 would find no
         * handler yet.  Wait for it, bounded. */
        if (atomic_load_explicit(&bk_supervisor_row(sv, s->slot)->state,
                                 memory_order_acquire) != SHM_WS_UP) {
            if (sv->roll_end == 0)
                sv->roll_end = now + bk_supervisor_roll_ms(sv, false);
            if (now < sv->roll_end)
                return;
            shm_log(SHM_LOG_WARNING, "rolling restart: worker %u not up; "
                    "skipped", s->slot);
            sv->roll_slot++;
            sv->roll_end = 0;
            return;
        }
        sv->roll_pid = s->pid;
        s->retiring = true;
        if (kill(s->pid, SIGUSR2) != 0) {
            s->retiring = false;
            sv->roll_slot++;
            sv->roll_end = 0;
            return;
        }
        shm_log(SHM_LOG_NOTICE, "rolling restart: worker %u (pid %d) "
                "retiring", s->slot, (int)s->pid);
        sv->roll_end = now + bk_supervisor_roll_ms(sv, true);
        sv->roll_phase = BK_ROLL_EXIT;
        return;
    case BK_ROLL_EXIT:
        if (s->pid != sv->roll_pid) {
            sv->roll_end = now + bk_supervisor_roll_ms(sv, false);
            sv->roll_phase = BK_ROLL_UP;
            return;
        }
        if (now >= sv->roll_end) {
            shm_log(SHM_LOG_WARNING, "rolling restart: worker %u still "
                    "running after %u ms: SIGKILL", s->slot,
                    (unsigned)bk_supervisor_roll_ms(sv, true));
            kill(s->pid, SIGKILL);
            sv->roll_end = now + bk_supervisor_roll_ms(sv, true);
        }
        return;
    default:
        if ((s->pid > 0
             && atomic_load_explicit(&bk_supervisor_row(sv, s->slot)->state,
                                     memory_order_acquire) == SHM_WS_UP)
            || now >= sv->roll_end) {
            if (now >= sv->roll_end)
                shm_log(SHM_LOG_WARNING, "rolling restart: worker %u not "
                        "up again in time; going on", s->slot);
            sv->roll_slot++;
            sv->roll_phase = BK_ROLL_SIGNAL;
            sv->roll_end = 0;
        }
        return;
    }
}
