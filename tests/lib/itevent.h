/*
 * tests/lib/itevent.h: one event item on the Server object and the
 * events it publishes, as the event integration programs use them
 * (integ_event, integ_alarm): an EventFilter's select clauses from
 * BrowseName paths (of BaseEventType; or ConditionType's NodeId, the
 * ConditionId), a subscription with the item (publishing 50 ms, queue
 * 100), and Publish calls handing each EventFieldList to the program's
 * decoder, the last notification acknowledged with the next Publish.
 *
 * Test programs only; link tests/lib/itevent.c with tests/lib/uaconn.c
 * and tests/lib/itest.c.  Errors the test cannot go on from are
 * itest_fatal().  Not thread-safe.
 */
#ifndef ITEVENT_H
#define ITEVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/arena.h"
#include "proto/types.h"
#include "proto/types_gen.h"
#include "tests/lib/uaconn.h"

#define ITEV_SEL_MAX  16
#define ITEV_PATH_MAX 2

/* One select clause: a BrowseName path (names in namespace ns, NULL
 * after the last), or the ConditionId (condition_id: path unused). */
struct itev_sel {
    const char *path[ITEV_PATH_MAX];
    uint16_t    ns;
    bool        condition_id;
};

/* One event item's client side. */
struct itev {
    struct ua_simple_attribute_operand     ops[ITEV_SEL_MAX];
    struct ua_qualifiedname                qn[ITEV_SEL_MAX][ITEV_PATH_MAX];
    struct ua_event_filter                 filter;
    uint32_t                               sub_id;
    uint32_t                               handle;     /* client handle */
    uint32_t                               queue;      /* revised */
    struct ua_subscription_acknowledgement ack;
    bool                                   have_ack;
};

/* ev's filter: the n (<= ITEV_SEL_MAX) select clauses sel. */
void itev_filter(struct itev *ev, const struct itev_sel *sel, int n);

/* A subscription on c and the item on the Server's EventNotifier with
 * ev's filter and client handle handle (responses in a, reset first):
 * ev->sub_id, ev->queue; fatal when either is refused. */
void itev_subscribe(struct itev *ev, struct uaconn *c, struct ua_arena *a,
                    uint32_t handle);

/* What a program makes of one event: slot is its index in the program's
 * array (the events are counted whatever the decoder does). */
typedef void (*itev_decode_fn)(void *arg, int slot,
                               const struct ua_event_field_list *f);

/*
 * Publish on c (a reset before each) until n events came or ms passed,
 * each of at most max handed to decode: the number taken.
 */
int itev_publish(struct itev *ev, struct uaconn *c, struct ua_arena *a,
                 int max, int n, unsigned ms, itev_decode_fn decode,
                 void *arg);

#endif /* ITEVENT_H */
