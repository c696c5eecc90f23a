/* The controller driven through traces of a simulated server: a closed
 * loop of clients behind a link, a CPU cost per response besides
 * compression, and compression at the rungs the policy picks, whose true
 * cost may differ from the priors.  Each test states what a trace must
 * show: CPU-bound, link-bound, both, a spike, steady load, a cold start,
 * a slower machine. */
#include "config.h"
#include "adf_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "adf_control.h"
#include "adf_policy.h"
#include "adf_codec.h"

typedef struct {
    double link;        /* bytes/s the link carries; 0: unlimited */
    double page;        /* bytes per response */
    double base;        /* CPU seconds per response besides compression */
    double truth;       /* level 1's true cost, in ISA-L level 1 priors */
    double other;       /* load of other processes, percent */
    double noise;       /* relative noise of the load sample */
    double demand;      /* responses/s the clients ask for; 0: unlimited */
    int slow;           /* clients wait on the link (TCP says so) */
    double content;     /* the pages' ratio / the priors' (0: 1) */
} plant_t;

static const adf_control_conf_t base_conf = { 80, 95, 85, { 0 }, 0 };
static adf_control_conf_t conf;
static adf_model_t model;
static adf_control_t ctl;
static unsigned seed = 1;
static double plant_load;       /* the true load of the last step */
static double mix_in, mix_cost, mix_out;    /* bytes, ns and bytes out */

/* Whole bodies of gzip 1-9: the rungs of a static page. */
#define CODING ADF_GZIP
#define WHOLE 1

static double noise(double amp)
{
    seed = seed * 1103515245 + 12345;
    return amp * (((seed >> 8) % 2001) / 1000.0 - 1);
}

/* The plants are machines of their own, the same whichever backends this
 * build has: level 1 costs truth x 0.64 ns/B (ISA-L's level 1 prior) and
 * the other levels what their priors say relative to level 1.  A build
 * with zlib alone (prior 9.52) thus runs the same plants as one with
 * ISA-L, with priors that are off by a factor the model must learn. */
#define ISAL_L1_PRIOR 0.64

static double build_factor(void)
{
    double c1, r1;

    adf_codec_prior(CODING, 1, WHOLE, &c1, &r1);
    return ISAL_L1_PRIOR / c1;
}

static double plant_content = 1;

static void true_rung(int level, double truth, double *cost, double *ratio)
{
    if (level == ADF_LEVEL_NONE) {
        *cost = 0;
        *ratio = 1;
        return;
    }
    adf_codec_prior(CODING, level, WHOLE, cost, ratio);
    *cost *= truth * build_factor();
    *ratio = *ratio * plant_content > 1 ? 1 : *ratio * plant_content;
}

/* Throughput and load with a mean cost (ns/B) and ratio per response. */
static double serve(const plant_t *pl, double cost, double ratio,
                    double *load)
{
    double cpu = pl->base + pl->page * cost * 1e-9;
    double x = (1 - pl->other / 100) / cpu;

    if (pl->link > 0 && pl->link / (pl->page * ratio) < x) {
        x = pl->link / (pl->page * ratio);
    }
    if (pl->demand > 0 && pl->demand < x) {
        x = pl->demand;
    }
    *load = pl->other + 100 * x * cpu;
    return x;
}

/* The best a fixed level (0: none) does on this plant. */
static double best_fixed(const plant_t *pl, int *best)
{
    double top = 0, x, load, cost, ratio;
    int l;

    plant_content = pl->content > 0 ? pl->content : 1;
    for (l = 0; l <= 9; l++) {
        true_rung(l ? l : ADF_LEVEL_NONE, pl->truth, &cost, &ratio);
        x = serve(pl, cost, ratio, &load);
        if (x > top) {
            top = x;
            *best = l;
        }
    }
    return top;
}

/* The segment of the frontier the budget is on (for counting changes). */
static int segment(void)
{
    adf_point_t pts[ADF_NLEVELS + 1];
    int n = adf_frontier(&model, CODING, WHOLE, 1, 9, pts), i;
    double p;

    adf_frontier_at(pts, n, ctl.limited ? 0 : ctl.budget, &i, &p);
    return i;
}

static void fresh(void)
{
    adf_model_init(&model);
    conf = base_conf;
    conf.top_level[CODING] = 9;
    adf_control_init(&ctl, &model, &conf);
    seed = 1;
}

/* One second of the plant under the controller; its throughput. */
static double step(const plant_t *pl)
{
    plant_content = pl->content > 0 ? pl->content : 1;
    adf_point_t pts[ADF_NLEVELS + 1];
    adf_obs_t *o = calloc(1, sizeof(*o));
    double p, cost[2], ratio[2], x, load, bytes, mc, mr, share[2];
    int n, i, k;

    n = adf_frontier(&model, CODING, WHOLE, 1, 9, pts);
    adf_frontier_at(pts, n, ctl.limited ? 0 : ctl.budget, &i, &p);
    if (ctl.limited) {
        i = 0;
        p = 0;
    }
    true_rung(pts[i].level, pl->truth, &cost[0], &ratio[0]);
    true_rung(i + 1 < n ? pts[i + 1].level : ADF_LEVEL_NONE, pl->truth,
              &cost[1], &ratio[1]);
    share[0] = 1 - p;
    share[1] = p;
    mc = share[0] * cost[0] + share[1] * cost[1];
    mr = share[0] * ratio[0] + share[1] * ratio[1];
    x = serve(pl, mc, mr, &load);
    plant_load = load;
    bytes = x * pl->page;
    mix_in += bytes;
    mix_cost += bytes * mc;
    mix_out += bytes * mr;
    o->load = load * (1 + noise(pl->noise));
    o->own = (load - pl->other) * (1 + noise(pl->noise));
    o->seconds = 1;
    o->capacity = 1;
    o->eligible = bytes;
    o->eligible_asked = bytes;
    o->eligible_slow = pl->slow ? bytes : 0;
    o->egress = bytes * mr;
    for (k = 0; k < 2; k++) {
        int level = k == 0 ? pts[i].level
                  : i + 1 < n ? pts[i + 1].level : ADF_LEVEL_NONE;
        adf_rung_obs_t *r;

        if (level == ADF_LEVEL_NONE || share[k] <= 0) {
            continue;
        }
        r = &o->rung[CODING][level][WHOLE];
        r->bytes_in = r->learn_in = bytes * share[k];
        r->bytes_out = r->learn_out = r->bytes_in * ratio[k];
        r->learn_n = r->learn_in / pl->page;
        r->timed_bytes = r->bytes_in / 4;
        r->timed_ns = r->timed_bytes * cost[k];
        r->timed_n = r->learn_n / 4;
    }
    adf_control_update(&ctl, &model, &conf, o);
    free(o);
    return x;
}

/* Run n seconds; the mean throughput of the last `tail` of them. */
static double run(const plant_t *pl, int n, int tail)
{
    double sum = 0;
    int i;

    for (i = 0; i < n; i++) {
        double x = step(pl);
        if (i >= n - tail) {
            sum += x;
        }
    }
    return sum / tail;
}

/* The bound: the best mix of the plant's fixed levels (and
 * identity) within share of the CPU and the link, two of them at most
 * (a linear programme with two constraints). */
static double best_mix(const plant_t *pl, double share)
{
    double c[10], b[10], best = 0, cost, ratio, cpu = share * (1 - pl->other
                                                                / 100);
    int i, j;

    plant_content = pl->content > 0 ? pl->content : 1;
    for (i = 0; i <= 9; i++) {
        true_rung(i ? i : ADF_LEVEL_NONE, pl->truth, &cost, &ratio);
        c[i] = pl->base + pl->page * cost * 1e-9;
        b[i] = pl->page * ratio;
    }
    for (i = 0; i <= 9; i++) {
        double x = cpu / c[i];

        if (pl->link > 0 && pl->link / b[i] < x) {
            x = pl->link / b[i];
        }
        best = x > best ? x : best;
        for (j = i + 1; pl->link > 0 && j <= 9; j++) {
            double det = c[i] * b[j] - c[j] * b[i], xi, xj;

            if (det == 0) {
                continue;
            }
            xi = (cpu * b[j] - c[j] * pl->link) / det;
            xj = (c[i] * pl->link - cpu * b[i]) / det;
            if (xi >= 0 && xj >= 0 && xi + xj > best) {
                best = xi + xj;
            }
        }
    }
    return best;
}

/* The shared-link cell: 64 connections behind one 1 Gbit/s link, 50 KB book
 * pages (their ratio 2.5 x the priors' web page: 0.40 at gzip 1), 0.133 ms
 * of the core per response besides compression and gzip 1 at 1.05 ns/B
 * (measured: "off" 2,323 req/s at 31 % of the core, the fixed rung 5,295
 * at 99 %).  A budget that goes round a cycle of four or five samples
 * between 35 % and 100 % of the core serves 0.7 of the bound; the load
 * must settle at the target, and the adaptive default serve at
 * least 0.9 of the best mix of fixed levels within 80 % of the core; with
 * a target of 94 (the limit at 99/97) at least 0.95 of the best fixed
 * level.  The mix it serves is one no fixed level beats on both bytes and
 * CPU. */
/* The plants are costed by this build's priors.  Without ISA-L, gzip 1 is
 * zlib's, about five times dearer per byte and far from the next rungs:
 * the same budget steps move the load further (a build without the
 * optional libraries measured 50-95 % here, at 0.99 of the bound), and a
 * spike's first cut is about a third rather than a quarter. */
#ifdef ADF_HAVE_ISAL
#define HAVE_ISAL 1
#define LOAD_LO 70
#define LOAD_HI 90
#define SPIKE_CUT 4
#else
#define HAVE_ISAL 0
#define LOAD_LO 45
#define LOAD_HI 97
#define SPIKE_CUT 3
#endif

START_TEST(shared_link_uses_the_target)
{
    plant_t pl = { 119.5e6, 51400, 1.33e-4, 1.64, 0, 0.03, 0, 1, 2.5 };
    double bound, fixed, adaptive, lo = 100, hi = 0, mc, mr, cost, ratio;
    int best, i, l, t, dominated, limited = 0;

    for (t = 0; t < 2; t++) {
        fresh();
        if (t) {
            conf.target = 94;
            conf.limit_off = 99;
            conf.limit_on = 97;
        }
        bound = best_mix(&pl, 0.8);
        fixed = best_fixed(&pl, &best);
        run(&pl, 15, 1);
        mix_in = mix_cost = mix_out = 0;
        lo = 100;
        hi = 0;
        for (i = 0, adaptive = 0; i < 30; i++) {
            adaptive += step(&pl) / 30;
            lo = plant_load < lo ? plant_load : lo;
            hi = plant_load > hi ? plant_load : hi;
            limited |= ctl.limited;
        }
        ck_assert_msg(!limited, "the limit tripped");
        mc = mix_cost / mix_in;
        mr = mix_out / mix_in;
        for (l = 1, dominated = 0; l <= 9; l++) {
            true_rung(l, pl.truth, &cost, &ratio);
            dominated |= cost <= mc && ratio <= mr;
        }
        printf("(the best mix within the target: %.0f/s)\n",
               best_mix(&pl, conf.target / 100));
        printf("shared 1 Gbit/s, target %.0f: bound %.0f/s, best fixed level "
               "%d %.0f/s, adaptive %.0f/s (%.3f of the bound, %.3f of the "
               "level), load %.0f-%.0f%%, mix %.2f ns/B at ratio %.3f\n",
               conf.target, bound, best, fixed, adaptive, adaptive / bound,
               adaptive / fixed, lo, hi, mc, mr);
        fflush(stdout);
        ck_assert_msg(!dominated, "a fixed level beats the mix");
        if (!t) {
            ck_assert(adaptive >= 0.9 * bound);
            ck_assert_msg(lo > LOAD_LO && hi < LOAD_HI, "load %.0f-%.0f%%", lo,
                          hi);
        }
        else {
            /* 0.95 of the best fixed level at a target of 94, also
             * without ISA-L: a climb taken for a jump over the smoothed
             * load and halved swings the load 31-100 % (0.83). */
            ck_assert_msg(adaptive >= 0.95 * fixed,
                          "%.3f of the best fixed level", adaptive / fixed);
        }
    }
}
END_TEST

/* The same cell with the load sample as noisy as a real link makes it
 * (7-9 points of deviation a sample at 81-84 %, measured at 1 Gbit/s x
 * 100 KB with a fixed budget; here up to 16 points either way): one
 * sample over OFF near the goal is not saturation.  Counted as such it
 * halved the budget again and again: 0.94 of the bound. */
START_TEST(noisy_shared_link_holds_the_goal)
{
    plant_t pl = { 119.5e6, 51400, 1.33e-4, 1.64, 0, 0.2, 0, 1, 2.5 };
    double bound, x = 0, load = 0;
    int i, trips = 0;

    fresh();
    bound = best_mix(&pl, 0.8);
    run(&pl, 20, 1);
    for (i = 0; i < 300; i++) {
        int was = ctl.limited;

        x += step(&pl) / 300;
        load += plant_load / 300;
        trips += ctl.limited && !was;
    }
    printf("noisy shared link: %.0f/s, %.3f of the bound, load %.1f%%, "
           "%d limit trips\n", x, x / bound, load, trips);
    ck_assert_msg(x >= 0.97 * bound, "%.3f of the bound", x / bound);
    ck_assert_msg(load > 76, "load %.1f%%", load);
    ck_assert_int_le(trips, 3);
}
END_TEST

/* A burner takes 80 % of the core for 20 s, trips the limit and leaves:
 * the ceiling the trip left must not hold the budget down once the load
 * is gone.  A ceiling that relaxed only while the load read under the
 * goal, and never expired, took 29-52 s here to get the budget back to
 * 0.95 of what it was (the previous controller 4-5 s); it now lets go
 * ADF_CONTROL_CEIL_HOLD seconds after the pause. */
START_TEST(limit_ceiling_lets_go)
{
    plant_t pl = { 119.5e6, 51400, 1.33e-4, 1.64, 0, 0.03, 0, 1, 2.5 };
    double target[2] = { 50, 80 }, before;
    int t, i, back;

    for (t = 0; t < 2; t++) {
        fresh();
        conf.target = target[t];
        run(&pl, 60, 1);
        for (i = 0, before = 0; i < 20; i++) {
            step(&pl);
            before += log(ctl.budget) / 20;
        }
        before = exp(before);
        pl.other = 80;
        run(&pl, 20, 1);
        pl.other = 0;
        for (back = 0; back < 120; back++) {
            step(&pl);
            if (!ctl.limited && ctl.budget >= 0.95 * before) {
                break;
            }
        }
        printf("target %.0f: a burner's trip, the budget back in %d s\n",
               conf.target, back + 1);
        ck_assert_msg(back + 1 <= ADF_CONTROL_CEIL_HOLD + 10,
                      "target %.0f: back after %d s", conf.target, back + 1);
    }
}
END_TEST

/* While the ceiling holds the budget, the integral term winds up
 * nothing: the load under the goal there is the ceiling's doing, and a
 * trim wound up meanwhile overshot the goal by 2-4 points for about 10 s
 * once the ceiling let go (the review's plant).  And fixed mode (no load
 * source) forgets any ceiling. */
START_TEST(limit_ceiling_winds_up_nothing)
{
    plant_t pl = { 119.5e6, 51400, 1.33e-4, 1.64, 0, 0.03, 0, 1, 2.5 };
    int i, held = 0;

    fresh();
    run(&pl, 60, 1);
    pl.other = 80;
    run(&pl, 20, 1);
    pl.other = 0;
    for (i = 0; i < 30; i++) {
        double trim = ctl.trim, budget = ctl.budget, ceiling = ctl.ceiling;
        int limited = ctl.limited;

        step(&pl);
        if (!limited && ceiling > 0 && budget >= 0.99 * ceiling
            && ctl.ceiling > 0 && ctl.budget >= 0.99 * ctl.ceiling) {
            ck_assert_msg(ctl.trim == trim, "%d s: trim %.2f -> %.2f under "
                          "the ceiling", i, trim, ctl.trim);
            held++;
        }
    }
    ck_assert_int_ge(held, 1);      /* the ceiling did hold the budget */
    pl.other = 80;
    run(&pl, 20, 1);
    ck_assert(ctl.ceiling > 0);
    conf.fixed = 1;
    step(&pl);
    ck_assert(ctl.ceiling == 0 && !ctl.limited && ctl.budget == ctl.top);
}
END_TEST

/* The shared-link cell at a target of 94 (the limit at 99/97) with samples as
 * noisy as a 1 Gbit/s link makes them: samples over OFF trip the limit
 * now and then, and the pause's own sample reads low (nothing was
 * compressed in it).  The budget after a pause stays under the one that
 * tripped: it took the budget straight back there (the next trip came
 * 4-6 samples later, traced at 1 Gbit/s x 100 KB) and served 0.86-0.91
 * of the best fixed level here, 0.90-0.94 with the ceiling. */
START_TEST(limit_release_stays_under_the_trip)
{
    int s, i, checked = 0;

    for (s = 0; s < 3; s++) {
        plant_t pl = { 119.5e6, 51400, 1.33e-4, 1.64, 0, 0.1, 0, 1, 2.5 };
        double fixed, x = 0, tripped = 0;
        int best, after = -1, trips = 0;

        fresh();
        seed = 1 + s * 7919;
        conf.target = 94;
        conf.limit_off = 99;
        conf.limit_on = 97;
        fixed = best_fixed(&pl, &best);
        for (i = 0; i < 60; i++) {
            double before = ctl.budget;
            int was = ctl.limited;

            /* noise trips the limit now and then; a burner's four seconds
             * in the middle trip it for sure */
            pl.other = i >= 30 && i < 34 ? 30 : 0;
            x += step(&pl) / 60;
            if (ctl.limited && !was) {
                tripped = before;
                trips++;
            }
            if (was && !ctl.limited) {
                after = 0;
            }
            if (after >= 0 && after < 3 && !ctl.limited) {
                ck_assert_msg(ctl.budget < tripped, "seed %d, %d s: the "
                              "budget %.3f back at %.3f, which tripped", s,
                              i, ctl.budget, tripped);
                checked++;
                after++;
            }
        }
        printf("target 94, noisy shared link, seed %d: %.3f of the best "
               "fixed level, %d trips\n", s, x / fixed, trips);
    }
    ck_assert_int_ge(checked, 3);   /* the limit did trip and release */
}
END_TEST

/* At a target within the noise of OFF (94, limit 99/97), noise alone
 * must not keep tripping the limit (a second with nothing compressed
 * each): two samples in a row over OFF did 61 times in 900 s of the
 * noisy plant above, three do 13 times.  A burner that saturates the
 * core still trips it, one sample later than at the default target. */
START_TEST(limit_trips_on_load_not_noise)
{
    int s, i, trips = 0;

    for (s = 0; s < 3; s++) {
        plant_t pl = { 119.5e6, 51400, 1.33e-4, 1.64, 0, 0.1, 0, 1, 2.5 };

        fresh();
        seed = 1 + s * 7919;
        conf.target = 94;
        conf.limit_off = 99;
        conf.limit_on = 97;
        for (i = 0; i < 300; i++) {
            int was = ctl.limited;

            step(&pl);
            trips += ctl.limited && !was;
        }
        /* (a saturated core reads 100 %: no idle time for noise) */
        pl.other = 60;
        pl.noise = 0;
        for (i = 0; i < 3 && !ctl.limited; i++) {
            step(&pl);
        }
        ck_assert_msg(ctl.limited, "seed %d: a burner of 60 %% did not trip "
                      "the limit within 3 samples", s);
    }
    printf("target 94, noisy shared link: %d trips in 900 s\n", trips);
    ck_assert_int_le(trips, 20);
}
END_TEST

START_TEST(idle_compresses_at_the_top)
{
    plant_t pl = { 0, 50000, 1e-4, 1, 0, 0, 10 };

    fresh();
    run(&pl, 10, 1);
    ck_assert(!ctl.limited);
    ck_assert_msg(ctl.budget >= adf_control_top(&model, &conf) * 0.99,
                  "budget %.3g of %.3g", ctl.budget,
                  adf_control_top(&model, &conf));
}
END_TEST

/* The CPU binds and the link does not: no compression pays; within 5 %
 * of sending everything as it is. */
START_TEST(cpu_bound_backs_off)
{
    plant_t pl = { 0, 50000, 1e-4, 1, 0, 0.05, 0 };
    int best;
    double fixed, adaptive;

    fresh();
    fixed = best_fixed(&pl, &best);
    adaptive = run(&pl, 30, 20);
    printf("cpu-bound: best fixed level %d %.0f/s, adaptive %.0f/s "
           "(%.2f), budget %.3g\n", best, fixed, adaptive, adaptive / fixed,
           ctl.budget);
    ck_assert_int_eq(best, 0);
    ck_assert(adaptive >= 0.95 * fixed);
}
END_TEST

/* The link binds (100 Mbit/s, 50 KB pages, clients TCP sees waiting on
 * it): at least 95 % of the best fixed level with the same backends,
 * never spending the CPU on dominated rungs, and never above the CPU
 * target, which is a ceiling.  Requests that cost 0.4 ms besides
 * compression leave the default 80 % little room (the best fixed level
 * runs the CPU at 99 %: adaptive gets 0.93 of it); with the target at 90
 * they get at least 95 %. */
START_TEST(link_bound_matches_the_best_level)
{
    plant_t pl = { 12.5e6, 50000, 2e-4, 1, 0, 0.05, 0, 1 };
    int best, i;
    double fixed, adaptive, top;

    for (; pl.base < 5e-4; pl.base *= 2) {
        fresh();
        if (pl.base > 3e-4) {
            conf.target = 90;
        }
        fixed = best_fixed(&pl, &best);
        adaptive = run(&pl, 20, 1);
        for (i = 0, top = 0, adaptive = 0; i < 20; i++) {
            adaptive += step(&pl) / 20;
            top = plant_load > top ? plant_load : top;
        }
        printf("link-bound, %.1f ms a request, target %.0f: best fixed level "
               "%d %.0f/s, adaptive %.0f/s (%.2f), budget %.3g ns/B, load "
               "%.0f%% (at most %.0f%%)\n", pl.base * 1e3, conf.target,
               best, fixed, adaptive, adaptive / fixed, ctl.budget, ctl.ema,
               top);
        ck_assert(adaptive >= 0.95 * fixed);
        ck_assert(ctl.ema <= conf.target + ADF_CONTROL_BAND);
    }
}
END_TEST

/* A start behind a 100 Mbit/s link (50 KB book pages, the core a tenth
 * busy at the floor): the budget climbs from the cheapest rungs to what
 * the link wants in a few samples, not a dozen (doubling at most per
 * sample, the first seconds served 0.93 of the best fixed level).  Only the start: a lull later (the clients' demand down
 * to a trickle for a few seconds) reads as far under the goal too, and a
 * budget raised fast through it would meet the traffic's return at the
 * top. */
START_TEST(climb_from_far_below_is_quick)
{
    plant_t pl = { 11.95e6, 51400, 1.2e-4, 1.9, 0, 0.03, 0, 1, 2.5 };
    double fixed, before;
    int best, i;

    fresh();
    fixed = best_fixed(&pl, &best);
    for (i = 0; i < 20 && step(&pl) < 0.95 * fixed; i++) {
    }
    printf("100 Mbit/s start: 0.95 of the best fixed level (%d) after %d "
           "samples\n", best, i + 1);
    ck_assert_int_le(i + 1, 4);

    pl.link = 119.5e6;          /* a link the top rungs saturate the core */
    run(&pl, 20, 1);
    pl.demand = 20;
    for (i = 0; i < 3; i++) {
        before = ctl.budget;
        step(&pl);
        ck_assert_msg(ctl.budget <= before * ADF_CONTROL_STEP_MAX * 1.001,
                      "a lull's sample %d: %.3g -> %.3g ns/B", i + 1, before,
                      ctl.budget);
    }
}
END_TEST

/* Both bind (1 Gbit/s, 50 KB pages, a dear zlib-only gzip): mixing
 * "none" and a cheap level beats every fixed setting by 10 %. */
START_TEST(both_bind_mixing_wins)
{
    plant_t pl = { 125e6, 50000, 1.5e-4, 6, 0, 0.05, 0, 1 };
    int best;
    double fixed, adaptive;

    fresh();
    fixed = best_fixed(&pl, &best);
    adaptive = run(&pl, 40, 20);
    printf("both bind: best fixed level %d %.0f/s, adaptive %.0f/s "
           "(%.2f), budget %.3g ns/B\n", best, fixed, adaptive,
           adaptive / fixed, ctl.budget);
    ck_assert(adaptive >= 1.10 * fixed);
}
END_TEST

/* A CPU burner takes 60 % for ten seconds: compression yields at the
 * first interval and is cut deep or paused at the second (one sample over
 * OFF from a load near the goal may be noise), and comes back within a
 * few after (the budget at most doubles per interval: from a 30-fold cut,
 * five or six). */
START_TEST(spike_is_followed)
{
    plant_t pl = { 12.5e6, 50000, 4e-4, 1, 0, 0, 0, 1 };
    double before, first, during, x0, x = 0;
    int i;

    fresh();
    x0 = run(&pl, 30, 1);
    before = ctl.budget;
    pl.other = 60;
    step(&pl);
    first = ctl.budget;
    step(&pl);
    during = ctl.limited ? 0 : ctl.budget;
    printf("spike: budget %.3g -> %.3g after one interval, %.3g%s after "
           "two\n", before, first, ctl.budget,
           ctl.limited ? " and limited" : "");
    /* One sample over OFF may be noise: the budget falls, then a second
     * one cuts it as deep or pauses compression. */
    ck_assert_msg(first < before, "budget %.3g -> %.3g", before, first);
    ck_assert_msg(during < before / SPIKE_CUT, "budget %.3g -> %.3g", before,
                  during);
    run(&pl, 9, 1);
    pl.other = 0;
    for (i = 0; i < 8 && x < 0.95 * x0; i++) {
        x = step(&pl);
    }
    printf("spike: back to %.0f/s of %.0f/s within %d intervals (budget "
           "%.3g)\n", x, x0, i, ctl.budget);
    ck_assert(x >= 0.95 * x0);
}
END_TEST

/* One sample over OFF from a budget of 2.4 ns/B, slow clients, 25e6 or
 * 2.5e9 bytes that could have been compressed, compression spending
 * share of the core by the model; the budget after it. */
static double one_sample_over_off(double share, double eligible,
                                  double last)
{
    adf_obs_t *o = calloc(1, sizeof(*o));
    double cost, ratio, after;

    fresh();
    ctl.budget = 2.4;
    ctl.primed = 1;
    ctl.raw = last;
    ctl.ema = 80;
    ctl.slow_share = 1;
    o->load = 96.7;
    o->seconds = 1;
    o->capacity = 1;
    o->eligible = o->eligible_asked = o->eligible_slow = eligible;
    adf_model_rung(&model, CODING, 6, WHOLE, &cost, &ratio);
    o->rung[CODING][6][WHOLE].bytes_in = share * 1e9 / cost;
    adf_control_update(&ctl, &model, &conf, o);
    after = ctl.budget;
    free(o);
    ck_assert(!ctl.limited);        /* one sample does not trip */
    return after;
}

/* A sample over OFF after one far below the goal (50 %: the load rose)
 * saturates the core.  Behind a link the rest of the load (86.7 % here)
 * may be over the goal already, and it moves with the budget: such a
 * sample cuts by 8 at most (it once took 2.4 to 0.03 ns/B at 100 Mbit x
 * 10 KB, and six samples of doubling served nearly identity).  Where compression is
 * what fills the core (60 %), the budget the model finds is followed,
 * halved (a saturated sample understates the demand) and at least by
 * half.  (Cutting compression behind a link also serves fewer requests,
 * whose work falls with them: the model stops at about 1.8 ns/B, and the
 * cut at 0.91; a model that held the rest of the load fixed went to 0.09
 * ns/B here.)  After a sample near the
 * goal (80 %) the same sample is a peak, not saturation: the model's
 * step, no halving, at most the clamp's fourfold cut. */
START_TEST(over_off_cut_is_bounded_behind_a_link)
{
    double link = one_sample_over_off(0.1, 25e6, 50);
    double cpu = one_sample_over_off(0.6, 2.5e9, 50);
    double peak = one_sample_over_off(0.6, 2.5e9, 80);

    printf("over OFF: 2.4 -> %.3g ns/B (the rest over the goal), "
           "-> %.3g (compression fills the core), -> %.3g (a peak near the "
           "goal)\n", link, cpu, peak);
    ck_assert_msg(link >= 2.4 / ADF_CONTROL_STEP_OFF * 0.999, "%.3g", link);
    ck_assert_msg(cpu <= 2.4 / 2, "%.3g", cpu);
    ck_assert_msg(peak < 2.4 && peak > cpu
                  && peak >= 2.4 / ADF_CONTROL_STEP_DOWN * 0.999, "%.3g",
                  peak);
}
END_TEST

/* A controller in a climb at target (OFF at 99, ON at 97) with budget
 * b, the last sample raw and the smoothed load ema, its clients slow;
 * and an interval's observations reading load (for the caller to free). */
static adf_obs_t *climbing(int target, double b, double raw, double ema,
                           double load)
{
    adf_obs_t *o = calloc(1, sizeof(*o));
    double cost, ratio;

    fresh();
    conf.target = target;
    conf.limit_off = 99;
    conf.limit_on = 97;
    ctl.budget = b;
    ctl.primed = 1;
    ctl.climbed = 1;
    ctl.raw = raw;
    ctl.ema = ema;
    ctl.slow_share = 1;
    ctl.slow_known = 1;
    o->load = load;
    o->seconds = 1;
    o->capacity = 1;
    o->eligible = o->eligible_asked = o->eligible_slow = 2.5e9;
    adf_model_rung(&model, CODING, 1, WHOLE, &cost, &ratio);
    o->rung[CODING][1][WHOLE].bytes_in = 0.5 * 1e9 / cost;
    return o;
}

/* A climb at a target of 94 (limit 99/97) whose smoothed load lags the
 * samples: a sample at OFF raises nothing (the budget, the trim), a
 * second in a row cuts, a third trips the limit.  The start traced at
 * 1 Gbit/s x 50 KB climbed through three samples at 100 % on a smoothed
 * 67-87 % and tripped it. */
START_TEST(full_samples_stop_the_climb)
{
    adf_obs_t *o = climbing(94, 2.0, 90, 60, 100);
    double b0, t0, b1, b2;

    b0 = ctl.budget;
    t0 = ctl.trim;
    adf_control_update(&ctl, &model, &conf, o);
    b1 = ctl.budget;
    ck_assert_msg(b1 <= b0 && ctl.trim <= t0, "one sample at OFF: budget "
                  "%.3g -> %.3g, trim %.2f -> %.2f", b0, b1, t0, ctl.trim);
    adf_control_update(&ctl, &model, &conf, o);
    b2 = ctl.budget;
    /* steered on the 100 % it reads, not the smoothed 94.5 % */
    ck_assert_msg(b2 < 0.95 * b1 && !ctl.limited, "two: budget %.3g -> "
                  "%.3g, limited %d", b1, b2, ctl.limited);
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert(ctl.limited);
    printf("full samples at target 94: budget %.3g, %.3g, %.3g, then "
           "limited\n", b0, b1, b2);
    free(o);
}
END_TEST

/* A target near OFF (94, OFF at 99): a sample over the goal raises
 * neither the budget nor the trim, however far the smoothed load lags;
 * a target further from OFF (90) still climbs on its smoothed load. */
START_TEST(over_goal_near_off_raises_nothing)
{
    int target;

    for (target = 94; target >= 90; target -= 4) {
        adf_obs_t *o = climbing(target, 2.0, 80, 60, target + 2);
        double b0 = ctl.budget, t0 = ctl.trim;

        adf_control_update(&ctl, &model, &conf, o);
        printf("target %d, a sample at %.0f %% on a smoothed 60 %%: budget "
               "%.3g -> %.3g, trim %.2f -> %.2f\n", target, o->load, b0,
               ctl.budget, t0, ctl.trim);
        if (target == 94) {
            ck_assert_msg(ctl.budget <= b0 && ctl.trim <= t0, "target 94: "
                          "budget %.3g -> %.3g, trim %.2f -> %.2f", b0,
                          ctl.budget, t0, ctl.trim);
        }
        else {
            ck_assert_msg(ctl.budget > b0, "target 90: budget %.3g -> %.3g",
                          b0, ctl.budget);
        }
        free(o);
    }
}
END_TEST

/* A jump into OFF on the budget the last sample raised: near OFF (94)
 * the budget goes half way back to where it rose from (in log space);
 * further from it (80) the jump counts as a load from outside and halves
 * the budget, as before. */
START_TEST(own_rise_into_off_steps_back)
{
    int target;

    for (target = 94; target >= 80; target -= 14) {
        /* under the goal: a rise */
        adf_obs_t *o = climbing(target, 1.6, target - 44, target - 44,
                                target - 22);
        double b0 = ctl.budget, b1;

        adf_control_update(&ctl, &model, &conf, o);
        b1 = ctl.budget;
        ck_assert_msg(b1 > b0, "target %d: no rise (%.3g -> %.3g)", target,
                      b0, b1);
        o->load = 100;              /* ... into OFF */
        adf_control_update(&ctl, &model, &conf, o);
        printf("target %d: budget %.3g, raised to %.3g, a sample at 100 %%: "
               "%.3g\n", target, b0, b1, ctl.budget);
        if (target == 94) {
            ck_assert_msg(fabs(ctl.budget - sqrt(b0 * b1)) < 1e-9,
                          "target 94: %.3g, not half way back to %.3g",
                          ctl.budget, b0);
        }
        else {
            ck_assert_msg(ctl.budget <= b1 / 2 + 1e-9, "target 80: %.3g, "
                          "not halved from %.3g", ctl.budget, b1);
        }
        ck_assert(!ctl.limited);
        free(o);
    }
}
END_TEST

/* Steady load with a noisy sample, at the higher goal of slow clients:
 * at most one change of rung pair per ten seconds on average, and the
 * safety net never trips. */
START_TEST(steady_load_is_calm)
{
    plant_t pl = { 12.5e6, 50000, 4e-4, 1, 0, 0.05, 0, 1 };
    int i, changes = 0, trips = 0, last;

    fresh();
    run(&pl, 30, 1);
    last = segment();
    for (i = 0; i < 300; i++) {
        int was = ctl.limited;

        step(&pl);
        changes += segment() != last;
        trips += ctl.limited && !was;
        last = segment();
    }
    printf("steady: %d rung changes in 300 s, load %.0f%%\n", changes,
           ctl.ema);
    ck_assert_int_le(changes, 30);
    ck_assert_int_eq(trips, 0);
}
END_TEST

/* A fresh server under load does not start at the maximum. */
START_TEST(cold_start_is_cheap)
{
    adf_point_t pts[ADF_NLEVELS + 1];
    int n;

    fresh();
    n = adf_frontier(&model, CODING, WHOLE, 1, 9, pts);
    ck_assert(n >= 2);
    ck_assert_msg(ctl.budget <= pts[1].cost, "starts at %.3g ns/B",
                  ctl.budget);
}
END_TEST

/* On a machine twice as slow as the priors' the model learns the rungs it
 * uses, scales the others, and still lands the load on the target. */
START_TEST(learns_a_slower_machine)
{
    plant_t pl = { 12.5e6, 50000, 4e-4, 0, 0, 0, 0, 1 };
    double c, r, prior, pr, load;
    int best;

    pl.truth = 2 / build_factor();      /* twice the priors */
    fresh();
    run(&pl, 60, 1);
    ck_assert(model.scale[CODING][WHOLE] > 1.7
              && model.scale[CODING][WHOLE] < 2.3);
    adf_model_rung(&model, CODING, 9, WHOLE, &c, &r);
    adf_codec_prior(CODING, 9, WHOLE, &prior, &pr);
    ck_assert(c > 1.7 * prior && c < 2.3 * prior);
    best_fixed(&pl, &best);
    printf("slower machine: scale %.2f, load %.1f%%\n",
           model.scale[CODING][WHOLE], ctl.ema);
    load = ctl.ema;
    ck_assert(load > 70 && load < 90);
}
END_TEST

/* What a rung gives depends on the content: level 9 used alone on random
 * data and level 3 alone on a web page must not make 9 look worse than 3;
 * two rungs mixed on the same traffic teach their difference. */
START_TEST(learning_is_content_blind)
{
    adf_obs_t *o = calloc(1, sizeof(*o));
    adf_point_t pts[ADF_NLEVELS + 1];
    double pc, pr, c5, r5, c6, r6;
    int n, i, seen9 = 0;

    fresh();
    o->seconds = 1;
    o->capacity = 1;
    o->load = 10;
    /* interval 1: level 9 alone, on base64 noise (ratio 0.76) */
    o->rung[CODING][9][WHOLE].bytes_in = o->rung[CODING][9][WHOLE].learn_in
        = 1e6;
    o->rung[CODING][9][WHOLE].bytes_out = o->rung[CODING][9][WHOLE].learn_out
        = 0.76e6;
    adf_codec_prior(CODING, 9, WHOLE, &pc, &pr);
    o->rung[CODING][9][WHOLE].learn_n = 50;
    o->rung[CODING][9][WHOLE].timed_bytes = 1e6;
    o->rung[CODING][9][WHOLE].timed_ns = 1e6 * pc;
    o->rung[CODING][9][WHOLE].timed_n = 50;
    adf_control_update(&ctl, &model, &conf, o);
    n = adf_frontier(&model, CODING, WHOLE, 1, 9, pts);
    for (i = 0; i < n; i++) {
        seen9 |= pts[i].level == 9;
    }
    ck_assert_msg(seen9, "level 9 left the frontier after random data");
    /* interval 2: levels 5 and 6 mixed on the same pages, where 6 turns
     * out 20 % dearer than its prior says (and 5 as predicted) */
    memset(o->rung, 0, sizeof(o->rung));
    adf_codec_prior(CODING, 5, WHOLE, &c5, &r5);
    adf_codec_prior(CODING, 6, WHOLE, &c6, &r6);
    o->rung[CODING][5][WHOLE].learn_in = 1e6;
    o->rung[CODING][5][WHOLE].learn_out = 1e6 * r5;
    o->rung[CODING][5][WHOLE].learn_n = 50;
    o->rung[CODING][5][WHOLE].timed_n = 50;
    o->rung[CODING][5][WHOLE].timed_bytes = 1e6;
    o->rung[CODING][5][WHOLE].timed_ns = 1e6 * c5;
    o->rung[CODING][6][WHOLE].learn_in = 1e6;
    o->rung[CODING][6][WHOLE].learn_out = 1e6 * r6;
    o->rung[CODING][6][WHOLE].learn_n = 50;
    o->rung[CODING][6][WHOLE].timed_n = 50;
    o->rung[CODING][6][WHOLE].timed_bytes = 1e6;
    o->rung[CODING][6][WHOLE].timed_ns = 1.2e6 * c6;
    for (i = 0; i < 20; i++) {
        adf_control_update(&ctl, &model, &conf, o);
    }
    printf("content-blind: level 6 costs %.2f x what its prior says "
           "beside level 5\n", model.rung[CODING][6][WHOLE].cost_dev
                               / model.rung[CODING][5][WHOLE].cost_dev);
    ck_assert(model.rung[CODING][6][WHOLE].cost_dev
              / model.rung[CODING][5][WHOLE].cost_dev > 1.15);
    free(o);
}
END_TEST

/* A few bodies tell which pages a rung got, not what it gives: one
 * interval where level 6 happened to get the less compressible pages
 * must not put it behind level 5 (an idle server would then serve 5 for
 * as long as nothing is mixed again); the same lesson from many bodies
 * is learned. */
START_TEST(few_bodies_teach_little)
{
    adf_obs_t *o = calloc(1, sizeof(*o));
    adf_point_t pts[ADF_NLEVELS + 1];
    double c5, r5, c6, r6, cost, ratio5, ratio6;
    int n, i, top = 0, interval;

    for (interval = 0; interval < 2; interval++) {
        double bodies = interval == 0 ? 4 : 400;

        fresh();
        memset(o, 0, sizeof(*o));
        o->seconds = 1;
        o->capacity = 1;
        o->load = 60;
        adf_codec_prior(CODING, 5, WHOLE, &c5, &r5);
        adf_codec_prior(CODING, 6, WHOLE, &c6, &r6);
        o->rung[CODING][5][WHOLE].learn_in = bodies * 20000;
        o->rung[CODING][5][WHOLE].learn_out = bodies * 20000 * r5;
        o->rung[CODING][5][WHOLE].learn_n = bodies;
        o->rung[CODING][6][WHOLE].learn_in = bodies * 20000;
        o->rung[CODING][6][WHOLE].learn_out = bodies * 20000 * r6 * 1.3;
        o->rung[CODING][6][WHOLE].learn_n = bodies;
        for (i = 0; i < (interval == 0 ? 1 : 10); i++) {
            adf_control_update(&ctl, &model, &conf, o);
        }
        adf_model_rung(&model, CODING, 5, WHOLE, &cost, &ratio5);
        adf_model_rung(&model, CODING, 6, WHOLE, &cost, &ratio6);
        n = adf_frontier(&model, CODING, WHOLE, 1, 6, pts);
        top = n ? pts[n - 1].level : 0;
        printf("%g bodies a rung: level 6's ratio %.4f, level 5's %.4f, "
               "the frontier's top %d\n", bodies, ratio6, ratio5, top);
        if (interval == 0) {
            ck_assert_msg(ratio6 < ratio5 && top == 6, "4 bodies put level 6 "
                          "behind level 5 (%.4f >= %.4f, top %d)", ratio6,
                          ratio5, top);
        }
        else {
            ck_assert_msg(ratio6 > ratio5 && top == 5, "400 bodies a "
                          "rung, ten times, taught nothing (%.4f, %.4f)",
                          ratio6, ratio5);
        }
    }
    free(o);
}
END_TEST

/* A bandwidth target: far below it, a quarter of the CPU target is
 * spent; at it, all of it.  The plant is busy (5,000 responses/s at
 * 0.1 ms each: half the CPU) so the target, not the top rung, binds. */
START_TEST(bandwidth_target)
{
    plant_t pl = { 0, 50000, 1e-4, 1, 0, 0, 5000 };
    double low, high;

    fresh();
    conf.bw_target = 1e9;               /* egress ~40 MB/s: far below */
    run(&pl, 30, 1);
    low = ctl.budget;
    fresh();
    conf.bw_target = 10e6;              /* above it */
    run(&pl, 30, 1);
    high = ctl.budget;
    printf("bandwidth target: budget %.3g far below it, %.3g at it\n", low,
           high);
    ck_assert(high > 2 * low);
}
END_TEST

/* What the bytes are worth: the whole CPU target, whether the clients
 * were measured waiting on their path or not (the policy buys a fast
 * client no rung its path gains no time from: test_policy.c).  Behind a
 * shared 1 Gbit/s link eight connections each looked fast, and a lower
 * goal for them left the core at 64 %. */
START_TEST(goal_is_the_target_for_every_client)
{
    plant_t pl = { 0, 50000, 1e-4, 10, 0, 0.02, 2000, 0 };
    double fast, slow;

    fresh();
    run(&pl, 40, 1);
    fast = ctl.ema;
    fresh();
    pl.slow = 1;
    run(&pl, 40, 1);
    slow = ctl.ema;
    printf("fast clients: load %.0f%%; slow clients: %.0f%%\n", fast, slow);
    ck_assert(fast > 80 - 5 && fast < 80 + 5);
    ck_assert(slow > 80 - 5 && slow < 80 + 5);
}
END_TEST

/* The safety net: two samples at OFF pause compression until one falls
 * below ON. */
START_TEST(limit_hysteresis)
{
    adf_obs_t *o = calloc(1, sizeof(*o));

    fresh();
    o->seconds = 1;
    o->capacity = 1;
    o->load = 94;
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert_int_eq(ctl.limited, 0);
    o->load = 95;
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert_int_eq(ctl.limited, 0);
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert_int_eq(ctl.limited, 1);
    o->load = 86;
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert_int_eq(ctl.limited, 1);
    o->load = 84;
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert_int_eq(ctl.limited, 0);
    /* no reading: nothing moves */
    o->load = -1;
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert(ctl.raw == 84);
    free(o);
}
END_TEST

/* No load source: the top rung whatever the load and whatever
 * compression costs, never limited; the costs are still learned. */
START_TEST(fixed_never_steers)
{
    adf_obs_t *o = calloc(1, sizeof(*o));
    int i;

    fresh();
    conf.fixed = 1;
    o->seconds = 1;
    o->capacity = 1;
    o->load = 100;
    o->eligible = 1e9;
    o->rung[ADF_GZIP][9][0].bytes_in = 1e9;
    for (i = 0; i < 5; i++) {
        adf_control_update(&ctl, &model, &conf, o);
        ck_assert_int_eq(ctl.limited, 0);
        ck_assert(ctl.budget == adf_control_top(&model, &conf));
    }
    conf.fixed = 0;
    adf_control_update(&ctl, &model, &conf, o);
    ck_assert(ctl.budget < adf_control_top(&model, &conf));
    free(o);
}
END_TEST

/* The share of slow clients counts only the bytes whose client was
 * measured (a sample while the budget is at the top): bytes not asked
 * about are not "fast"; smoothed, and intervals without a measurement
 * count as fast clients (one slow reader does not hold the goal up). */
START_TEST(slow_share_counts_the_measured)
{
    adf_obs_t *o = calloc(1, sizeof(*o));
    int i;

    fresh();
    o->seconds = 1;
    o->capacity = 1;
    o->load = 60;
    o->eligible = 1e8;
    o->eligible_asked = 1e7;        /* one response in ten asked ... */
    o->eligible_slow = 1e7;         /* ... every one of them slow */
    for (i = 0; i < 6; i++) {
        adf_control_update(&ctl, &model, &conf, o);
    }
    ck_assert(ctl.slow_share > 0.99);
    o->eligible_slow = 2.5e6;
    for (i = 0; i < 20; i++) {
        adf_control_update(&ctl, &model, &conf, o);
    }
    ck_assert(fabs(ctl.slow_share - 0.25) < 0.01);
    /* Then nobody is measured (short connections, the limit): the share
     * falls to "fast" instead of staying where the last reader left it. */
    o->eligible_asked = o->eligible_slow = 0;
    for (i = 0; i < 6; i++) {
        adf_control_update(&ctl, &model, &conf, o);
    }
    ck_assert(ctl.slow_share < 0.01);
    free(o);
}
END_TEST

/* Idle, for background work: below half the CPU target. */
START_TEST(idle_mark)
{
    adf_control_conf_t c = { 0 };

    c.target = 80;
    ck_assert(adf_control_idle_below(&c) == 40);
    c.target = 50;
    ck_assert(adf_control_idle_below(&c) == 25);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("control");

    adf_test(s, idle_compresses_at_the_top);
    adf_test(s, idle_mark);
    adf_test(s, cpu_bound_backs_off);
    adf_test(s, link_bound_matches_the_best_level);
    adf_test(s, climb_from_far_below_is_quick);
    adf_test(s, both_bind_mixing_wins);
    adf_test(s, shared_link_uses_the_target);
    adf_test(s, noisy_shared_link_holds_the_goal);
    adf_test(s, limit_trips_on_load_not_noise);
    adf_test(s, full_samples_stop_the_climb);
    adf_test(s, over_goal_near_off_raises_nothing);
    adf_test(s, own_rise_into_off_steps_back);
    adf_test(s, spike_is_followed);
    adf_test(s, over_off_cut_is_bounded_behind_a_link);
    adf_test(s, steady_load_is_calm);
    adf_test(s, cold_start_is_cheap);
    adf_test(s, learns_a_slower_machine);
    adf_test(s, learning_is_content_blind);
    adf_test(s, few_bodies_teach_little);
    adf_test(s, bandwidth_target);
    adf_test(s, goal_is_the_target_for_every_client);
    adf_test(s, limit_hysteresis);
    adf_test(s, limit_release_stays_under_the_trip);
    adf_test(s, limit_ceiling_lets_go);
    adf_test(s, limit_ceiling_winds_up_nothing);
    adf_test(s, fixed_never_steers);
    adf_test(s, slow_share_counts_the_measured);
    return adf_test_run(s);
}
