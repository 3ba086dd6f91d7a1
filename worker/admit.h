/*
 * worker/admit.h: admission, the shared throttle's side in the worker
 * (shm/throttle.h; docs/security.md "Attack classes"): which peer address
 * may connect, and how a failed OpenSecureChannel counts against it.
 *
 *   peer tag      a peer address's key in the throttle, in one key space
 *                 (OPN failures, failed logins); IPv4 as the IPv4-mapped
 *                 IPv6 address, so a dual-stack listener and an IPv4 one
 *                 give one key per host
 *   admit         a new connection from a blocked address, or past the
 *                 server-wide accept rate, is refused
 *   OPN failures  security failures of an OPN (a bad RSA block, padding
 *                 or signature, a certificate rejected) count against its
 *                 address (security.failure_*)
 *
 * Without a throttle (unit tests) everything is admitted and nothing is
 * counted.  Single-threaded, on the worker's loop; the table itself is
 * shared by every worker (its own atomics).
 */
#ifndef WK_ADMIT_H
#define WK_ADMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/status_gen.h"
#include "shm/throttle.h"
#include "worker.h"

/*
 * The tag of the peer's address in the shared throttle, in the key space
 * `kind` (OPN failures or failed logins): 0 (never throttled) for
 * anything but IPv4 and IPv6, or without a throttle.
 */
uint64_t wk_admit_tag(const struct wk_worker *w,
                      const struct sockaddr_storage *ss,
                      enum shm_throttle_key_kind kind);

/*
 * May a new connection from tag be served?  Its address is not blocked
 * (security.failure_*) and the server-wide accept rate
 * (limits.accept_rate) has room.  Otherwise the status to refuse it with
 * (BadTcpServerTooBusy, counted): Part 6 §7.1.5, the client is to retry
 * later, which is what a block or a full rate asks of it; nothing of its
 * own was checked, so nothing about its security is said.
 */
ua_status wk_admit_connection(struct wk_worker *w, uint64_t tag);

/* Is tag blocked now (an OPN held since it connected)?  Counted as a
 * refusal when it is. */
bool wk_admit_blocked(struct wk_worker *w, uint64_t tag);

/* An OPN of the peer tag ended with st: a security failure counts
 * against its address (security.failure_*). */
void wk_admit_opn_result(struct wk_worker *w, uint64_t tag, ua_status st);

#endif /* WK_ADMIT_H */
