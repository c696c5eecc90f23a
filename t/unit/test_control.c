/* The controller against synthetic load traces: a plant whose load is a
 * base load plus what compression costs at the current effort. */
#include "adf_test.h"
#include <math.h>
#include <stdio.h>
#include "../../adf_control.h"

static const adf_control_conf_t conf = { 80, 95, 85 };

/* One interval of the plant: the load the server shows at this effort. */
static double plant(double base, double cost, double effort, int limited)
{
    double load = base + (limited ? 0 : cost * effort);
    return load > 100 ? 100 : load;
}

START_TEST(idle_stays_at_max)
{
    adf_control_t c;
    int i;

    adf_control_init(&c);
    ck_assert(c.effort == 1.0);
    for (i = 0; i < 50; i++) {
        adf_control_update(&c, &conf, plant(10, 20, c.effort, c.limited));
        ck_assert(c.effort == 1.0);
        ck_assert_int_eq(c.limited, 0);
    }
}
END_TEST

/* 10 % -> 100 % -> 10 %: compression stops within two intervals of the
 * step up; after the step down it resumes at once, the effort rises from
 * the first interval and is back at the maximum within four. */
START_TEST(step_response)
{
    adf_control_t c;
    int i;

    adf_control_init(&c);
    for (i = 0; i < 10; i++) {
        adf_control_update(&c, &conf, plant(10, 20, c.effort, c.limited));
    }
    for (i = 0; i < 10; i++) {
        adf_control_update(&c, &conf, plant(100, 20, c.effort, c.limited));
        ck_assert_msg(c.limited || i == 0, "not limited %d intervals after "
                      "the step up", i + 1);
    }
    for (i = 0; i < 10; i++) {
        double before = c.effort;
        adf_control_update(&c, &conf, plant(10, 20, c.effort, c.limited));
        ck_assert_msg(!c.limited, "still limited after the step down");
        ck_assert_msg(c.effort > before || c.effort == 1.0,
                      "interval %d: the effort did not rise", i + 1);
        if (i >= 3) {
            ck_assert_msg(c.effort == 1.0, "interval %d after the step "
                          "down: effort %.2f", i + 1, c.effort);
        }
    }
}
END_TEST

/* CPU binds: at full effort the load would be 90 %, above the 80 %
 * target.  The effort must settle near 0.75 (load 80 %) and then hold
 * still: bounded changes, no oscillation. */
START_TEST(steady_load_holds_still)
{
    adf_control_t c;
    double lo = 1, hi = 0, load = 0;
    int i;

    adf_control_init(&c);
    for (i = 0; i < 200; i++) {
        load = plant(50, 40, c.effort, c.limited);
        adf_control_update(&c, &conf, load);
        ck_assert_int_eq(c.limited, 0);
        if (i >= 50) {
            lo = c.effort < lo ? c.effort : lo;
            hi = c.effort > hi ? c.effort : hi;
        }
    }
    printf("steady: effort %.3f..%.3f, load %.1f%%\n", lo, hi, load);
    ck_assert_msg(hi - lo < 0.05, "effort swings %.3f..%.3f", lo, hi);
    ck_assert(fabs(load - conf.target) <= ADF_CONTROL_DEADBAND + 2);
    ck_assert(lo > 0.6 && hi < 0.9);
}
END_TEST

/* A plant where compression is most of the cost (load 30 % + 70 % at
 * full effort): the loop gain is high, it must still not oscillate. */
START_TEST(high_gain_plant_is_stable)
{
    adf_control_t c;
    double lo = 1, hi = 0;
    int i, trips = 0;

    adf_control_init(&c);
    for (i = 0; i < 300; i++) {
        int was = c.limited;
        adf_control_update(&c, &conf, plant(30, 70, c.effort, c.limited));
        trips += c.limited && !was;
        if (i >= 100) {
            lo = c.effort < lo ? c.effort : lo;
            hi = c.effort > hi ? c.effort : hi;
        }
    }
    printf("high gain: effort %.3f..%.3f, %d trips\n", lo, hi, trips);
    ck_assert_msg(hi - lo < 0.1, "effort swings %.3f..%.3f", lo, hi);
    ck_assert_msg(trips <= 1, "the limit flapped %d times", trips);
}
END_TEST

START_TEST(hysteresis)
{
    adf_control_t c;

    adf_control_init(&c);
    adf_control_update(&c, &conf, 94);
    ck_assert_int_eq(c.limited, 0);
    adf_control_update(&c, &conf, 95);
    ck_assert_int_eq(c.limited, 0);     /* one sample is not enough */
    adf_control_update(&c, &conf, 60);
    adf_control_update(&c, &conf, 96);
    ck_assert_int_eq(c.limited, 0);     /* nor two apart */
    adf_control_update(&c, &conf, 95);
    ck_assert_int_eq(c.limited, 1);
    adf_control_update(&c, &conf, 90);
    ck_assert_int_eq(c.limited, 1);
    adf_control_update(&c, &conf, 85);
    ck_assert_int_eq(c.limited, 1);
    adf_control_update(&c, &conf, 84.9);
    ck_assert_int_eq(c.limited, 0);
}
END_TEST

START_TEST(bad_samples)
{
    adf_control_t c;

    adf_control_init(&c);
    adf_control_update(&c, &conf, -1);
    ck_assert_int_eq(c.primed, 0);
    ck_assert(c.effort == 1.0);
    adf_control_update(&c, &conf, 1e9);
    ck_assert(c.raw == 100);
    adf_control_update(&c, &conf, 1e9);
    ck_assert_int_eq(c.limited, 1);
    adf_control_update(&c, &conf, -1);
    ck_assert(c.raw == 100);    /* no reading: state held */
}
END_TEST

/* A bandwidth-bound plant measured here (100 Mbit/s, 10 KB pages): the
 * CPU goes 12 % uncompressed, 56 % at level 1, 70 % at 4, 94 % at 6 and
 * 97 % at 9.  The steep start made a stiffer controller trip the limit
 * over and over; this one must settle below the limit. */
static double interp(const double (*pts)[2], int n, double e)
{
    int i;

    for (i = 0; i + 1 < n; i++) {
        if (e <= pts[i + 1][0]) {
            return pts[i][1] + (pts[i + 1][1] - pts[i][1])
                   * (e - pts[i][0]) / (pts[i + 1][0] - pts[i][0]);
        }
    }
    return pts[n - 1][1];
}

START_TEST(bandwidth_bound_plant_settles)
{
    static const double cpu[][2] = {
        { 0, 12 }, { 0.111, 56 }, { 0.444, 70 }, { 0.667, 94 }, { 1, 97 }
    };
    adf_control_t c;
    double lo = 1, hi = 0;
    int i, trips = 0;
    unsigned seed = 7;

    adf_control_init(&c);
    for (i = 0; i < 400; i++) {
        int was = c.limited;
        double noise = ((seed = seed * 1103515245 + 12345) >> 16) % 7 - 3.0;
        adf_control_update(&c, &conf, (c.limited ? 12 : interp(cpu, 5,
                                                              c.effort))
                                      + noise);
        trips += c.limited && !was;
        if (i >= 200) {
            lo = c.effort < lo ? c.effort : lo;
            hi = c.effort > hi ? c.effort : hi;
        }
    }
    printf("bandwidth bound: effort %.3f..%.3f, %d trips\n", lo, hi, trips);
    ck_assert_msg(trips <= 2, "the limit tripped %d times", trips);
    ck_assert_msg(hi - lo < 0.1, "effort swings %.3f..%.3f", lo, hi);
    ck_assert(lo > 0.3);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("control");
    TCase *tc = adf_test_case(s, "traces");

    tcase_add_test(tc, idle_stays_at_max);
    tcase_add_test(tc, step_response);
    tcase_add_test(tc, steady_load_holds_still);
    tcase_add_test(tc, high_gain_plant_is_stable);
    tcase_add_test(tc, bandwidth_bound_plant_settles);
    tcase_add_test(tc, hysteresis);
    tcase_add_test(tc, bad_samples);
    return adf_test_run(s);
}
