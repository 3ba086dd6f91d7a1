/*
 * tests/lib/itcount.h: the counting subscriber of the reconnect tests
 * (integ_reactivate, integ_roam, integ_roll; issue 19): a subscription of
 * ITC_ITEMS monitored items on ns=1;s=v0, v2, .. v18 (client handle k + 1
 * on v<2k>), a writer that writes one Int32 into all of them, and a
 * PublishResponse reader that checks each item's values arrive once and
 * in order (counting breaks, Overflow bits, sequence-number gaps and
 * responses of another subscription).
 *
 * Test programs only; link tests/lib/itcount.c with tests/lib/uaconn.c and
 * tests/lib/itest.c.  Errors the test cannot go on from are itest_fatal().
 * Each call that decodes resets the caller's arena a first.
 */
#ifndef ITCOUNT_H
#define ITCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/types.h"
#include "tests/lib/uaconn.h"

#define ITC_ITEMS       10
#define ITC_TRIES       64      /* connections until one lands right */
#define ITC_WORKERS_MAX 64

/* What one monitored item reported. */
struct itc_item {
    int64_t  last;              /* INT64_MIN: nothing yet */
    uint32_t values;            /* of at least itc_take's from */
    uint32_t breaks;            /* not last + 1 */
    uint32_t overflows;         /* values with the Overflow InfoBit */
};

/* The subscriber. */
struct itc_sub {
    struct uaconn   c;
    int             worker;     /* where its session is */
    uint32_t        sub_id;
    uint32_t        last_seq;   /* 0: none yet */
    uint32_t        seq_gaps;
    uint32_t        wrong_ids;  /* responses of another subscription */
    uint64_t        first_ms;   /* first notification (itest_ms); the
                                   caller zeroes it to time the next */
    uint32_t        unacked;    /* a message left unacknowledged */
    uint32_t        pending;    /* Publish requests in flight */
    bool            have_ack;
    struct ua_subscription_acknowledgement ack;
    struct itc_item it[ITC_ITEMS];
};

/* Every worker's connections_total from the stats endpoint on sport. */
void itc_conns(uint16_t sport, int workers, uint64_t *n);

/*
 * Connect, HEL, OPN on port until the connection lands on worker want
 * (-1: any; workers + w: any but w), telling the workers apart by their
 * connections_total; the worker.  Fatal after ITC_TRIES.
 */
int itc_channel(struct uaconn *c, uint16_t port, uint16_t sport,
                int workers, int want);

/* ActivateSession (anonymous) with the token already set on c's client. */
ua_status itc_activate(struct uaconn *c, struct ua_arena *a);

/* s's subscription at pub_ms and its items (sampling sample_ms, queue
 * queue, discardOldest); fatal unless all are Good with that queue. */
void itc_subscribe(struct itc_sub *s, double pub_ms, double sample_ms,
                   uint32_t queue, struct ua_arena *a);

/* Send one Publish request, acknowledging the last message taken. */
void itc_publish(struct itc_sub *s);

/* Receive one PublishResponse: each item's values of at least from must
 * come in order, one more than the last. */
void itc_take(struct itc_sub *s, int64_t from, struct ua_arena *a);

/* One Write of v into all the items' variables: the first Bad status. */
ua_status itc_write(struct uaconn *c, int32_t v, struct ua_arena *a);

#endif /* ITCOUNT_H */
