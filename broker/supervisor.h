/*
 * broker/supervisor.h: the broker's workers (docs/architecture.md §1),
 * nginx-style.
 *
 * For each worker slot the broker creates one listening socket on the
 * opc.tcp port (SO_REUSEPORT: the kernel spreads new connections over the
 * slots) and keeps it open for the broker's whole life, so connections
 * waiting in a slot's accept queue survive a restart of its worker.  Each
 * worker is fork+exec'd as `uaworker --slot N --segment-fd FD --listen-fd FD`
 * from the directory of the uabroker binary, with exactly those two fds
 * inherited.
 *
 *   spawn --> STARTING --(worker)--> UP --exit/kill--> DOWN --backoff--> spawn
 *                                                       |
 *                               exit code 2 (start-up failure): no respawn
 *
 * Around a worker's life the request drain and the fan-out are told
 * (bk_request_worker_start before the fork, bk_request_worker_dead right
 * after the reap), so a respawned worker finds empty rings and no block
 * held in its name.
 *
 * Backoff: 100 ms, doubling up to 10 s; back to 100 ms for a worker that
 * ran 30 s or more.  Before respawning into a slot the broker resets its
 * row (every counter zero except `restarts`).
 *
 * Stop: SIGTERM to every worker, wait up to 5 s for all of them, then
 * SIGKILL the rest; then the `done` callback runs.  A second stop request
 * kills at once.
 *
 * Single-threaded, on the broker's event loop.  Reaping is driven by
 * SIGCHLD through libevent (evsignal): no work in a signal handler.
 */
#ifndef BK_SUPERVISOR_H
#define BK_SUPERVISOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "config.h"
#include "shm/layout.h"
#include "shm/segment.h"

#define BK_BACKOFF_MIN_MS      100
#define BK_BACKOFF_MAX_MS      10000
#define BK_BACKOFF_RESET_MS    30000   /* uptime that resets the backoff */
#define BK_STOP_TIMEOUT_MS     5000
#define BK_LISTEN_BACKLOG      512
#define BK_WORKER_NO_RESPAWN   2       /* worker exit code: do not respawn */
#define BK_RETIRE_TIMEOUT_MS   10000   /* without a configuration: a
                                        * retiring worker's exit, then
                                        * SIGKILL; a successor's start
                                        * (server.retire_kill_ms,
                                        * roll_start_ms) */
#define BK_ROLL_TICK_MS        50      /* the rolling restart's pace */

struct bk_supervisor;
struct bk_request;

/* One worker slot. */
struct bk_worker_slot {
    struct bk_supervisor *sv;
    unsigned              slot;
    int                   listen_fd;
    pid_t                 pid;          /* 0: not running */
    uint64_t              started_ms;   /* monotonic, at the last spawn */
    uint32_t              backoff_ms;   /* the next respawn's delay */
    bool                  failed;       /* exited with code 2: not respawned */
    bool                  retiring;     /* sent SIGUSR2: respawn at once */
    int                   last_status;  /* waitpid status of the last exit */
    struct event          respawn;      /* backoff timer */
};

struct bk_supervisor {
    struct event_base       *base;
    const struct bk_config  *conf;
    const struct shm_segment *seg;
    struct shm_worker       *rows;      /* SHM_R_WORKERS */
    unsigned                 n;         /* worker slots */
    pid_t                    broker_pid;
    char                     worker_path[PATH_MAX];
    char                   **envp;      /* environ + UABROKER_PID */
    int                      max_fd;    /* child: fds to mark CLOEXEC */
    struct bk_worker_slot    slots[SHM_WORKERS_MAX];
    struct event             sigchld;
    struct event             stop_timer;
    bool                     stopping;
    /* The rolling restart (bk_supervisor_roll): the slot being replaced,
     * its phase, its pid when told to retire, the phase's deadline. */
    struct event             roll_timer;
    bool                     rolling;
    unsigned                 roll_slot, roll_phase;
    pid_t                    roll_pid;
    uint64_t                 roll_end;
    uint32_t                 rolls;     /* rolling restarts completed */
    unsigned                 running;   /* children not yet reaped */
    void                   (*done)(void *arg);
    void                    *done_arg;
    /* The request drain (broker/request.h), told of every spawn and
     * every reap, and the fan-out through it: a worker's doorbell is
     * bound before its fork; after its reap its rings are emptied and its
     * block references reclaimed before any respawn.  NULL: none. */
    struct bk_request       *request;
    /* The historian (issue 18, worker/historian.c): slot n, after the
     * workers, when history.enabled; supervised like a worker. */
    bool                     historian;
    char                     historian_path[PATH_MAX];
    char                     hist_args[8][PATH_MAX];    /* its argv values */
};

/* The worker count for `configured` (0: online CPUs), in [1, 64]. */
uint32_t bk_supervisor_count(uint32_t configured);

/*
 * Find uaworker next to this binary, create the listening sockets (one per
 * slot of c->workers, port c->port) and the SIGCHLD event.  Spawns
 * nothing yet.  0, or -1 with a message in err (port in use, ...).
 */
int bk_supervisor_init(struct bk_supervisor *sv, struct event_base *base,
                       const struct bk_config *c,
                       const struct shm_segment *seg, char *err,
                       size_t errlen);

/* Spawn every worker.  0, or -1 when a fork failed (logged). */
int bk_supervisor_start(struct bk_supervisor *sv);

/*
 * Stop every worker (SIGTERM, then SIGKILL after 5 s); done(arg) runs once
 * all are reaped.  Calling it again while stopping kills at once.
 */
void bk_supervisor_stop(struct bk_supervisor *sv, void (*done)(void *arg),
                        void *arg);

/* Close the listening sockets and free what init allocated. */
void bk_supervisor_clear(struct bk_supervisor *sv);

/*
 * A rolling restart (SIGUSR2, `uabroker restart-workers`;
 * docs/operations.md "Rolling restart"): the workers one at a time, in
 * slot order: SIGUSR2 (the worker hands its sessions to the others and
 * exits, worker/roam.h wk_roam_retire), SIGKILL after
 * server.retire_kill_ms, the slot respawned at once from the uaworker on
 * disk (a new binary if one was installed), then the next slot once the
 * new worker is up (or server.roll_start_ms passed).  The historian is
 * not restarted.  0; -1 when one is already running or the broker stops.
 */
int bk_supervisor_roll(struct bk_supervisor *sv);

/* The slot's row in the worker table. */
static inline struct shm_worker *
bk_supervisor_row(const struct bk_supervisor *sv, unsigned slot)
{
    return &sv->rows[slot];
}

#endif /* BK_SUPERVISOR_H */
