/*
 * broker/sim.c: the simulation (sim.h).
 */
#include "sim.h"

#include <math.h>
#include <stdbool.h>

#include "proto/types.h"
#include "value.h"

static void bk_sim_on_timer(evutil_socket_t fd, short what, void *arg);
static void bk_sim_arm(struct bk_sim *s);
static void bk_sim_vars(struct bk_sim *s, int64_t now);

/* (Re-)arm the persistent timer at the configured interval. */
static void
bk_sim_arm(struct bk_sim *s)
{
    double         ms = s->conf->simulation_interval_ms;
    struct timeval tv;

    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(fmod(ms, 1000.0) * 1000);
    event_del(&s->ev);
    event_add(&s->ev, &tv);
    s->interval_ms = ms;
}

void
bk_sim_start(struct bk_sim *s, struct event_base *base,
             struct bk_addrspace *as, const struct bk_config *c,
             uint64_t seed)
{
    s->as = as;
    s->conf = c;
    s->counter = 0;
    s->t = 0;
    s->rng = seed | 1;
    event_assign(&s->ev, base, -1, EV_PERSIST, bk_sim_on_timer, s);
    s->on = true;
    bk_sim_arm(s);
}

void
bk_sim_reload(struct bk_sim *s)
{
    if (s->on && s->conf->simulation_interval_ms != s->interval_ms)
        bk_sim_arm(s);
}

void
bk_sim_stop(struct bk_sim *s)
{
    if (s->on)
        event_del(&s->ev);
    s->on = false;
}

static void
bk_sim_on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bk_sim_tick(arg, ua_datetime_now());
}

void
bk_sim_tick(struct bk_sim *s, int64_t now)
{
    struct bk_addrspace *as = s->as;
    struct bk_value     *v = &as->val;
    double               ramp, sine, rnd;

    s->counter++;
    s->t += s->conf->simulation_interval_ms / 1000.0;
    ramp = fmod(s->t, 100.0);
    sine = sin(s->t * 2 * M_PI / 60.0);
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    rnd = (double)(s->rng >> 11) / 9007199254740992.0;
    bk_value_batch_begin(v);
    bk_value_write_scalar(v, as->sim_slot[BK_SIM_COUNTER], UA_BT_UINT32,
                          &s->counter, now);
    bk_value_write_scalar(v, as->sim_slot[BK_SIM_RAMP], UA_BT_DOUBLE, &ramp,
                          now);
    bk_value_write_scalar(v, as->sim_slot[BK_SIM_SINE], UA_BT_DOUBLE, &sine,
                          now);
    bk_value_write_scalar(v, as->sim_slot[BK_SIM_RANDOM], UA_BT_DOUBLE, &rnd,
                          now);
    bk_sim_vars(s, now);
    bk_value_batch_end(v);
}

/*
 * The first addrspace.simulation_vars of Demo.Vars (sim.h): one pass over
 * their slots (consecutive).
 */
static void
bk_sim_vars(struct bk_sim *s, int64_t now)
{
    struct bk_addrspace *as = s->as;
    uint32_t             n = s->conf->simulation_vars;
    uint32_t             slot = as->vars_slot_first;
    uint32_t             ticks = s->counter;

    if (n > as->vars)
        n = as->vars;               /* bk_config_check refuses it anyway */
    for (uint32_t i = 0; i < n; i++, slot++) {
        if (i % 2) {
            double d = i + 0.5 + ticks;

            bk_value_write_scalar(&as->val, slot, UA_BT_DOUBLE, &d, now);
        } else {
            int32_t x = (int32_t)(i + ticks);

            bk_value_write_scalar(&as->val, slot, UA_BT_INT32, &x, now);
        }
    }
}
