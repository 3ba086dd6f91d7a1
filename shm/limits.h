/*
 * shm/limits.h: server-wide budgets of sessions, subscriptions and
 * monitored items (struct shm_limits in shm/layout.h).
 *
 * The configured limits (max_sessions, max_subscriptions,
 * max_monitored_items) are the server's, as ServerCapabilities advertises
 * them; each worker's pools are sized by the same keys, so one worker alone
 * may still reach a limit.  A worker takes one unit from the shared count
 * before it uses a pool entry and gives it back when the entry goes:
 *
 *   take: CAS used[k] -> used[k] + n unless that passes max, then held += n
 *   give: held -= n, then used[k] -= n
 *   dead worker (broker, after the reap): used[k] -= exchange(held, 0)
 *
 * The order of take and give means a worker killed between its two steps
 * leaves one unit counted in used[k] that nobody holds: the server then
 * admits one less, never one more than its limit.
 */
#ifndef SHM_LIMITS_H
#define SHM_LIMITS_H

#include <stdint.h>

#include "layout.h"
#include "segment.h"

/* The budgets in segment s: after the worker rows of SHM_R_WORKERS. */
static inline struct shm_limits *
shm_limits_of(const struct shm_segment *s)
{
    return (struct shm_limits *)((uint8_t *)shm_segment_region(
                                     s, SHM_R_WORKERS)
                                 + SHM_WORKERS_MAX
                                       * sizeof(struct shm_worker));
}

/*
 * Worker `worker` takes n units of kind k when used + n <= max.  0, or
 * -ENOSPC (nothing taken), -EINVAL for a worker or kind out of range.
 */
int shm_limits_take(struct shm_limits *l, unsigned worker,
                    enum shm_limit_kind k, uint32_t n, uint32_t max);

/* Worker `worker` gives back n units of kind k it took (at most what it
 * holds). */
void shm_limits_give(struct shm_limits *l, unsigned worker,
                     enum shm_limit_kind k, uint32_t n);

/*
 * Broker: worker `worker` is dead (reaped, nothing runs in its slot):
 * whatever it held returns to the server-wide counts.
 */
void shm_limits_reclaim(struct shm_limits *l, unsigned worker);

/* Units of kind k taken on the whole server, and by one worker. */
uint32_t shm_limits_used(const struct shm_limits *l, enum shm_limit_kind k);
uint32_t shm_limits_held(const struct shm_limits *l, unsigned worker,
                         enum shm_limit_kind k);

#endif /* SHM_LIMITS_H */
