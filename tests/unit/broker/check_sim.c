/*
 * tests/unit/broker/check_sim.c: the simulation (broker/sim.c) on the
 * real address space: each tick moves Counter by one, Ramp and Sine with
 * the simulated time, Random within [0, 1), and the first
 * addrspace.simulation_vars of Demo/Vars to their initial value plus the
 * tick count, all with the tick's timestamp; the others stay.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "broker/addrspace.h"
#include "broker/config.h"
#include "broker/sim.h"
#include "proto/types_gen.h"

#define T0 INT64_C(133470720000000000)

static struct bk_config    conf;
static struct bk_addrspace as;
static struct bk_sim       sim;
static struct event_base  *base;

static void
setup(void)
{
    char err[256];

    bk_config_defaults(&conf);
    bk_config_finish(&conf);
    conf.value_heap_mb = 4;
    conf.vars = 10;
    conf.simulation_vars = 4;
    conf.simulation_interval_ms = 500;
    ck_assert_msg(bk_addrspace_build(&as, &conf, T0, err, sizeof(err)) == 0,
                  "%s", err);
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    bk_sim_start(&sim, base, &as, &conf, 12345);
}

static void
teardown(void)
{
    bk_sim_stop(&sim);
    event_base_free(base);
    bk_addrspace_close(&as);
}

/* Slot s's value: its built-in type, 8 bytes of it, its source ts. */
static uint8_t
value_of(uint32_t s, void *v, int64_t *ts)
{
    uint8_t          buf[32];
    struct shm_value m;

    ck_assert_int_eq(shm_value_read(&as.vals, s, &m, buf, sizeof(buf)), 0);
    ck_assert_uint_ge(m.len, 5);
    memcpy(v, buf + 1, m.len - 1 < 8 ? m.len - 1 : 8);
    *ts = m.source_ts;
    return buf[0];
}

START_TEST(test_ticks)
{
    uint32_t u;
    int32_t  i;
    double   d, ramp, rnd;
    int64_t  ts;

    bk_sim_tick(&sim, T0 + 1000);
    bk_sim_tick(&sim, T0 + 2000);
    ck_assert_uint_eq(value_of(as.sim_slot[BK_SIM_COUNTER], &u, &ts),
                      UA_BT_UINT32);
    ck_assert_uint_eq(u, 2);
    ck_assert_int_eq(ts, T0 + 2000);
    ck_assert_uint_eq(value_of(as.sim_slot[BK_SIM_RAMP], &ramp, &ts),
                      UA_BT_DOUBLE);
    ck_assert_double_eq_tol(ramp, 1.0, 1e-9);      /* 2 x 0.5 s */
    ck_assert_uint_eq(value_of(as.sim_slot[BK_SIM_SINE], &d, &ts),
                      UA_BT_DOUBLE);
    ck_assert_double_eq_tol(d, sin(1.0 * 2 * M_PI / 60.0), 1e-9);
    ck_assert_uint_eq(value_of(as.sim_slot[BK_SIM_RANDOM], &rnd, &ts),
                      UA_BT_DOUBLE);
    ck_assert(rnd >= 0 && rnd < 1);
    /* v0, v2: Int32 i + ticks; v1, v3: Double i + 0.5 + ticks. */
    ck_assert_uint_eq(value_of(as.vars_slot_first, &i, &ts), UA_BT_INT32);
    ck_assert_int_eq(i, 2);
    ck_assert_int_eq(ts, T0 + 2000);
    ck_assert_uint_eq(value_of(as.vars_slot_first + 1, &d, &ts),
                      UA_BT_DOUBLE);
    ck_assert_double_eq_tol(d, 3.5, 1e-9);
    ck_assert_uint_eq(value_of(as.vars_slot_first + 3, &d, &ts),
                      UA_BT_DOUBLE);
    ck_assert_double_eq_tol(d, 5.5, 1e-9);
    /* v4 is not simulated: its initial value, the build's time. */
    ck_assert_uint_eq(value_of(as.vars_slot_first + 4, &i, &ts),
                      UA_BT_INT32);
    ck_assert_int_eq(i, 4);
    ck_assert_int_eq(ts, T0);
    ck_assert(!as.val.open);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("Simulation");
    TCase   *tc = tcase_create("Ticks");
    SRunner *sr;
    int      failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_ticks);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
