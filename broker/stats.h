/*
 * broker/stats.h: the broker's HTTP stats endpoint (libevent evhttp).
 *
 *   GET /stats     JSON: the broker, every worker slot, totals
 *   GET /metrics   the same in the Prometheus text exposition format
 *   GET /health    200 "ok" when every worker slot is UP with a heartbeat
 *                  younger than BK_STATS_HEARTBEAT_MAX_MS; 503 and the
 *                  reason otherwise
 *
 * Only GET and HEAD (405 otherwise); any other path is 404.  The numbers
 * come from the worker table in shared memory, summed when a request
 * arrives: a worker never sends a message to be counted.
 *
 * Runs on the broker's event loop; listens on stats.listen (ADDR:PORT,
 * default 127.0.0.1:9840; an IPv6 address in brackets).
 */
#ifndef BK_STATS_H
#define BK_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>

#include "addrspace.h"
#include "supervisor.h"

#define BK_STATS_HEARTBEAT_MAX_MS 3000

struct evhttp;
struct evhttp_bound_socket;
struct bk_fanout;
struct bk_mqtt;
struct bk_request;
struct bk_stats_view;

struct bk_stats {
    struct evhttp              *http;
    struct evhttp_bound_socket *sock;
    const struct bk_addrspace  *as;
    const struct bk_supervisor *sv;
    const struct bk_fanout     *fanout;     /* NULL or off: zeroes */
    const struct bk_request    *request;    /* NULL: no method counters */
    const struct bk_mqtt       *mqtt;       /* NULL or off: no "mqtt" */
    uint64_t                    start_ms;   /* monotonic, broker start */
    struct bk_stats_view       *view;       /* one request's copy */
    char                        addr[80];   /* as bound, for logs */
    uint16_t                    port;
};

/*
 * Split "ADDR:PORT" (IPv6 as "[ADDR]:PORT") into host[hostlen] and *port.
 * 0 or -1.
 */
int bk_stats_parse_listen(const char *s, char *host, size_t hostlen,
                          uint16_t *port);

/*
 * Listen on listen (ADDR:PORT) and serve the endpoints from as and sv.
 * 0, or -1 with a message in err.
 */
int bk_stats_init(struct bk_stats *st, struct event_base *base,
                  const char *listen, const struct bk_addrspace *as,
                  const struct bk_supervisor *sv, char *err, size_t errlen);

/* Stop listening and free the server. */
void bk_stats_clear(struct bk_stats *st);

/*
 * `uabroker stats`: GET /stats from addr (ADDR:PORT; 0.0.0.0 and :: are
 * asked on loopback) with a tiny HTTP/1.0 client and write the body to out.
 * 0 on HTTP 200; 1 when the broker cannot be reached or answers otherwise
 * (said on stderr); 2 when addr is not ADDR:PORT.
 */
int bk_stats_fetch(const char *addr, FILE *out);

#endif /* BK_STATS_H */
