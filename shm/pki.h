/*
 * shm/pki.h: the PKI region (SHM_R_PKI, see shm/layout.h): our certificate
 * and key, the trust and issuer lists in two halves switched by a
 * generation counter, and the per-worker rejected-certificate mailboxes.
 *
 * The broker publishes (shm_pki_publish_*), a worker snapshots the current
 * lists into its own memory (shm_pki_snapshot) and posts rejected
 * certificates (shm_pki_reject_post); the broker takes them
 * (shm_pki_reject_take).  No I/O here: the files are the broker's.
 */
#ifndef SHM_PKI_H
#define SHM_PKI_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "segment.h"

/* Bytes of the region for plan p (0 when p->pki_list_bytes is 0). */
uint64_t shm_pki_region_bytes(const struct shm_plan *p);

/* Write the region's header (the segment is zeroed). */
void shm_pki_region_init(void *region, const struct shm_plan *p);

/* The region of s, NULL when the segment has none (or a bad one). */
struct shm_pki *shm_pki_get(const struct shm_segment *s);

/* Half i (0 or 1). */
struct shm_pki_half *shm_pki_half(struct shm_pki *k, unsigned i);

/*
 * Broker: start filling the half the next generation will select
 * (emptied), add blobs, then publish (generation + 1, release).
 * shm_pki_publish_add: 0, or -ENOSPC when the half is full.
 */
struct shm_pki_half *shm_pki_publish_begin(struct shm_pki *k);
int shm_pki_publish_add(struct shm_pki *k, struct shm_pki_half *h,
                        enum shm_pki_kind kind, const uint8_t *der,
                        size_t len);
void shm_pki_publish_end(struct shm_pki *k);

/*
 * Worker: copy the current half into out (cap bytes: at least
 * sizeof(struct shm_pki_half) + k->list_bytes) and set *gen to its
 * generation.  0, or -EAGAIN when the broker switched twice while we
 * copied (try again).
 */
int shm_pki_snapshot(struct shm_pki *k, void *out, size_t cap,
                     uint64_t *gen);

/* Current generation (acquire). */
uint64_t shm_pki_generation(struct shm_pki *k);

/* Worker w: post a rejected certificate; -ENOSPC when its mailbox is full
 * or the certificate too long (dropped), -EINVAL for a bad w. */
int shm_pki_reject_post(struct shm_pki *k, unsigned w, const uint8_t *der,
                        size_t len);

/* Broker: the next full mailbox slot of worker w from *idx on, NULL when
 * none; shm_pki_reject_done empties it. */
struct shm_pki_mbox *shm_pki_reject_next(struct shm_pki *k, unsigned w,
                                         unsigned *idx);
void shm_pki_reject_done(struct shm_pki_mbox *m);

#endif /* SHM_PKI_H */
