/*
 * tests/unit/worker/mi_fixture.h: what the monitored-item suites share
 * (check_monitem.c, check_monitem_queue.c, check_monitem_filter.c), on top
 * of sub_fixture.h: a session with every change its own sample and 50 ms
 * publishing, a Publish and one interval, the data of the next message,
 * the Overflow bit.
 */
#ifndef WK_TEST_MI_FIXTURE_H
#define WK_TEST_MI_FIXTURE_H

#include "sub_fixture.h"

#define CH (&fx.ch[0])

static struct ua_nodeid tok;

/* Every change its own sample, 50 ms publishing. */
static inline void
tw_fast(struct shm_config *c)
{
    c->min_sampling_interval_ms = 0;
    c->min_publishing_interval_ms = 50;
}

static inline void
setup(void)
{
    sf_setup_with(tw_fast);
    tok = fx_session(CH);
}

static inline void
teardown(void)
{
    sf_teardown();
}

/* Queue a Publish, run one publishing interval; the response. */
static inline struct sf_got *
pub_tick(uint32_t ms)
{
    ck_assert_uint_eq(sf_publish(CH, &tok), UA_GOOD);
    ck_assert(sf.pending);
    sf_tick(ms);
    return sf_next();
}

/* The data of the next message (after one interval), asserting one. */
static inline const struct ua_data_change_notification *
data_tick(uint32_t ms)
{
    struct sf_got                            *g = pub_tick(ms);
    const struct ua_data_change_notification *d;

    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->result, UA_GOOD);
    d = sf_dcn(g);
    ck_assert_ptr_nonnull(d);
    return d;
}

static inline bool
overflow(const struct ua_data_change_notification *d, int32_t k)
{
    const struct ua_datavalue *v = &d->monitored_items[k].value;

    return (v->mask & UA_DV_STATUS) && (v->status & 0xFFFF) == 0x0480;
}

#endif /* WK_TEST_MI_FIXTURE_H */
