/*
 * broker/sim.h: the simulation, a data source of the broker: the
 * Demo/Simulation variables (Counter, Ramp, Sine, Random) and the first
 * addrspace.simulation_vars of Demo/Vars change every
 * addrspace.simulation_interval_ms, through the value path
 * (broker/value.h), one value batch per tick.
 *
 *   Counter   UInt32, +1 per tick
 *   Ramp      Double, seconds of simulated time modulo 100
 *   Sine      Double, sin(2 pi t / 60 s)
 *   Random    Double in [0, 1), xorshift64
 *   v<i>      its initial value plus the tick count: Int32 (even i)
 *             i + ticks, wrapping; Double (odd i) i + 0.5 + ticks
 *
 * A client's Write to one of them lasts until the next tick.  Broker
 * only, on its loop; nothing allocated.
 */
#ifndef BK_SIM_H
#define BK_SIM_H

#include <stdint.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "addrspace.h"
#include "config.h"

struct bk_sim {
    struct bk_addrspace    *as;
    const struct bk_config *conf;
    struct event            ev;
    double                  interval_ms;    /* the timer's, as armed */
    uint32_t                counter;
    double                  t;              /* simulated seconds */
    uint64_t                rng;
    bool                    on;             /* ev assigned and added */
};

/*
 * Start the timer on base at c's simulation_interval_ms (c is read at
 * every tick: SIGHUP may change it; bk_sim_reload re-arms the timer).
 * seed: the Random variable's start (any non-zero value).
 */
void bk_sim_start(struct bk_sim *s, struct event_base *base,
                  struct bk_addrspace *as, const struct bk_config *c,
                  uint64_t seed);

/* After a reload: re-arm the timer if the interval changed. */
void bk_sim_reload(struct bk_sim *s);

/* One tick at DateTime now (the timer's callback; tests). */
void bk_sim_tick(struct bk_sim *s, int64_t now);

/* Stop the timer. */
void bk_sim_stop(struct bk_sim *s);

#endif /* BK_SIM_H */
