/*
 * shm/throttle.h: failures per client, shared by every worker, and the
 * server-wide accept limiter (struct shm_throttle in shm/layout.h).
 *
 * A key is an IP address (OPN security failures; failed logins, in a key
 * space of their own) or a client's ApplicationUri (failed logins), turned into a 64-bit tag by SipHash-2-4
 * under a key the broker draws at start (so nobody outside can aim two
 * addresses at one entry).  Each tag may use the SHM_THROTTLE_PROBE entries
 * that follow its hash.  A rule {threshold, window, block}: `threshold`
 * failures of one key within `window_ms` of its first one block it for
 * `block_ms`; the count starts again after a block.
 *
 * No locks: every entry changes by CAS on its state word, so a worker
 * killed at any instruction leaves no entry half written (at worst an
 * entry in CLAIM, which anybody may take again after
 * SHM_THROTTLE_LEASE_MS).  The protocol and its orderings are at the top
 * of shm/throttle.c.  Time is the caller's CLOCK_MONOTONIC in ms (or µs
 * for the accept limiter), the same clock in every process of the host.
 */
#ifndef SHM_THROTTLE_H
#define SHM_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "segment.h"

/* What a tag stands for (hashed in, so kinds never share an entry). */
enum shm_throttle_key_kind {
    SHM_THR_KEY_IP = 1,         /* 16 bytes: IPv6, or IPv4 as ::ffff:a.b.c.d */
    SHM_THR_KEY_CLIENT,         /* a client's ApplicationUri */
    SHM_THR_KEY_LOGIN_IP        /* failed logins of an IP address: 16
                                 * bytes as SHM_THR_KEY_IP */
};

/* When failures of one key block it. threshold 0: never. */
struct shm_throttle_rule {
    uint32_t threshold;         /* failures (at most SHM_THR_FAILS_MAX) */
    uint32_t window_ms;         /* ... within this long of the first */
    uint32_t block_ms;          /* block this long */
};

/* Region bytes for plan p: 0 (no region) when p->throttle_entries is 0;
 * entries round up to a power of two within the MIN/MAX bounds. */
uint64_t shm_throttle_region_bytes(const struct shm_plan *p);

/* Creator: header of an all-zero region of `size` bytes.  0 or -EINVAL. */
int shm_throttle_region_init(void *region, uint64_t size,
                             const struct shm_plan *p);

/* The table of segment s; NULL when it has none or its header is bad. */
struct shm_throttle *shm_throttle_of(const struct shm_segment *s);

/*
 * Broker, before any worker starts: the tags' hash key and the longest
 * window of every rule in use (a count older than that is free).
 */
void shm_throttle_configure(struct shm_throttle *t, const uint64_t seed[2],
                            uint64_t stale_ms);

/* The tag of key[len] of kind `kind`: never 0. */
uint64_t shm_throttle_tag(const struct shm_throttle *t,
                          enum shm_throttle_key_kind kind, const void *key,
                          size_t len);

/* True when tag is blocked at now_ms. */
bool shm_throttle_blocked(const struct shm_throttle *t, uint64_t tag,
                          uint64_t now_ms);

/*
 * One failure of tag at now_ms under rule r.  1: it began a block; 0:
 * counted, not blocked (or the key was blocked already: nothing changes);
 * -ENOSPC: not counted, every entry the tag may use is blocked; -EAGAIN:
 * not counted, the entries changed under us too often.  A threshold of 0
 * counts nothing and returns 0.
 */
int shm_throttle_fail(struct shm_throttle *t, uint64_t tag,
                      const struct shm_throttle_rule *r, uint64_t now_ms);

/*
 * A success of tag: its failures are forgotten.  A running block is
 * lifted only when `unblock` (the block was the succeeding attempt's own
 * doing); otherwise it stays.
 */
void shm_throttle_forget(struct shm_throttle *t, uint64_t tag, bool unblock,
                         uint64_t now_ms);

/*
 * A success of tag after one failure of its own counted at its start
 * under rule r (shm_throttle_fail): that one failure is taken back, the
 * others stay (a key shared by many clients: one's success does not clear
 * another's failures).  When that failure began a running block
 * (`unblock`), the block is lifted and the key left at threshold - 1
 * failures in a window starting now.
 */
void shm_throttle_undo(struct shm_throttle *t, uint64_t tag,
                       const struct shm_throttle_rule *r, bool unblock,
                       uint64_t now_ms);

/*
 * The accept limiter (GCRA): true when one more connection may be taken at
 * now_us, at most `rate` per second on the whole server after a burst of
 * `burst` (at least 1).  rate 0: always true.
 */
bool shm_throttle_accept(struct shm_throttle *t, uint32_t rate,
                         uint32_t burst, uint64_t now_us);

/* Worker `worker` counts one event c (its own line: single writer). */
void shm_throttle_count(struct shm_throttle *t, unsigned worker,
                        enum shm_throttle_counter c);

/* Counter c summed over every worker slot. */
uint64_t shm_throttle_total(const struct shm_throttle *t,
                            enum shm_throttle_counter c);

/* Entries whose key is blocked at now_ms (a scan: for /stats). */
uint32_t shm_throttle_blocked_count(const struct shm_throttle *t,
                                    uint64_t now_ms);

#endif /* SHM_THROTTLE_H */
