/*
 * shm/park.h: the SHM_R_PARK region (struct shm_park in shm/layout.h):
 * where each worker slot keeps its activated sessions so that they
 * outlive the worker, and the change log the broker keeps of the value
 * changes workers watch (docs/architecture.md §11 "A worker's death").
 *
 * The broker creates the region, writes the log (shm_park_log) and each
 * slot's cut (shm_park_cut); a worker writes its own slot's records
 * (worker/park.c) and reads them back only in the successor of a dead
 * worker, which also reads the log.  The protocols are in shm/layout.h.
 */
#ifndef SHM_PARK_H
#define SHM_PARK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "layout.h"
#include "segment.h"

/* Region bytes for plan p: 0 (no region) when p->park_workers or
 * p->park_bytes is 0. */
uint64_t shm_park_region_bytes(const struct shm_plan *p);

/* Creator: the header of an all-zero region of `size` bytes.  0 or
 * -EINVAL. */
int shm_park_region_init(void *region, uint64_t size,
                         const struct shm_plan *p);

/* The pages of at[len] taken now (writable, their bytes kept), not at
 * their first write: the log (shm_park_region_init), a worker's kept
 * ring.  Best effort. */
void shm_park_prefault(void *at, uint64_t len);

/* The park of segment s; NULL when it has none or its header is bad. */
struct shm_park *shm_park_of(const struct shm_segment *s);

/* Slot k's records (k->nrec) and data (k->data_bytes). */
struct shm_park_rec *shm_park_recs(struct shm_park *k, unsigned slot);
uint8_t *shm_park_data(struct shm_park *k, unsigned slot);

/* Records of slot in use (the broker, when its worker died). */
uint32_t shm_park_parked(const struct shm_park *k, unsigned slot);

/*
 * Broker: one value change of slot (ServerTimestamp srv_ts, the fan-out
 * DataValue record rec[len]) into the log.  A record longer than
 * SHM_CLOG_REC keeps its time only (SHM_CLOG_BIG).  Inline: the broker's
 * value path logs every change a worker watches (broker/fanout.c).
 * Protocol: shm/layout.h, struct shm_clog_ent.
 */
static inline void
shm_park_log(struct shm_park *k, uint32_t slot, int64_t srv_ts,
             const void *rec, uint32_t len)
{
    uint64_t             i = atomic_load_explicit(&k->clog_head,
                                                  memory_order_relaxed);
    struct shm_clog_ent *e = (struct shm_clog_ent *)((uint8_t *)k
                                                     + k->clog_off)
                             + (i & (k->clog_n - 1));

    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    e->srv_ts = srv_ts;
    e->slot = slot;
    if (len <= SHM_CLOG_REC) {
        e->len = (uint16_t)len;
        memcpy(e->rec, rec, len);
    } else {
        e->len = SHM_CLOG_BIG;
        atomic_fetch_add_explicit(&k->clog_big, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&e->seq, i + 1, memory_order_release);
    atomic_store_explicit(&k->clog_head, i + 1, memory_order_release);
}

/* Broker, before slot's worker starts: every change logged from now on
 * goes to its ring too. */
void shm_park_cut(struct shm_park *k, unsigned slot);

/* The log's head: entries written since the start. */
uint64_t shm_park_head(const struct shm_park *k);

/*
 * Entry idx of the log into *e: 0; -ESTALE when it was overwritten since
 * (or is being overwritten); -ENOENT when it is not written yet.
 */
int shm_park_read(const struct shm_park *k, uint64_t idx,
                  struct shm_clog_ent *e);

#endif /* SHM_PARK_H */
