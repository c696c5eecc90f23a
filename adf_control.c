/* The load controller and its cost model; see adf_control.h. */
#include "adf_control.h"
#include "adf_codec.h"

#include <math.h>
#include <string.h>

#define LEARN_RATE  0.3         /* EWMA weight of an interval's measure */
#define SCALE_RATE  0.1         /* ... of the priors' calibration */

void adf_model_init(adf_model_t *m)
{
    int c, k;

    memset(m, 0, sizeof(*m));
    for (c = 0; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            m->scale[c][k] = 1.0;
        }
    }
}

void adf_model_rung(const adf_model_t *m, adf_coding_e c, int level,
                    int whole, double *cost, double *ratio)
{
    double pc = 0, pr = 1;

    adf_codec_prior(c, level, whole, &pc, &pr);
    if (!m) {
        *cost = pc;     /* no shared model (no segment): the priors */
        *ratio = pr;
        return;
    }
    *cost = pc * m->scale[c][whole]
            * (m->rung[c][level][whole].cost_dev > 0
               ? m->rung[c][level][whole].cost_dev : 1);
    *ratio = pr * (m->rung[c][level][whole].ratio_dev > 0
                   ? m->rung[c][level][whole].ratio_dev : 1);
}

double adf_control_floor(const adf_model_t *m, const adf_control_conf_t *conf)
{
    double floor = 0, cost, ratio;
    int c, k, l;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)c);

        for (k = 0; d && conf->top_level[c] && k < ADF_NCLASSES; k++) {
            double cheapest = 0;

            for (l = d->default_min; l <= conf->top_level[c]; l++) {
                adf_model_rung(m, (adf_coding_e)c, l, k, &cost, &ratio);
                if (cost > 0 && (cheapest <= 0 || cost < cheapest)) {
                    cheapest = cost;
                }
            }
            floor = cheapest > floor ? cheapest : floor;
        }
    }
    return floor > ADF_BUDGET_MIN ? floor : ADF_BUDGET_MIN;
}

void adf_control_init(adf_control_t *c, const adf_model_t *m,
                      const adf_control_conf_t *conf)
{
    memset(c, 0, sizeof(*c));
    c->top = adf_control_top(m, conf);
    /* Every coding's cheapest rung: an idle server compresses from its
     * first response on (until stop 31 it began at half of gzip level 1,
     * and the first responses after a start went out as identity at
     * random, "load"), and a cold start under load begins cheap. */
    c->budget = adf_control_floor(m, conf);
    if (c->budget > c->top) {
        c->budget = c->top;
    }
}

static double ewma(double old, double sample, double w)
{
    return old > 0 ? (1 - w) * old + w * sample : sample;
}

/* A deviation's lesson from n bodies: from the prior (1) until the first,
 * then by the evidence; a handful of bodies moves it a little. */
static double learn_dev(double dev, double sample, double n)
{
    double w = LEARN_RATE * n / (n + ADF_LEARN_EVIDENCE);

    return (1 - w) * (dev > 0 ? dev : 1) + w * sample;
}

/* Learn from one coding and kind's rungs in an interval: the machine's
 * factor from all of them, each rung's deviation when two or more were
 * used (and so saw the same traffic, as far as their bodies tell). */
static void learn_kind(adf_model_t *m, const adf_obs_t *obs, int c, int k)
{
    double cw = 0, csum = 0, rw = 0, rsum = 0;
    double cf[ADF_NLEVELS], rf[ADF_NLEVELS];
    int l, nc = 0, nr = 0;

    for (l = 0; l < ADF_NLEVELS; l++) {
        const adf_rung_obs_t *o = &obs->rung[c][l][k];
        double pc, pr;

        cf[l] = rf[l] = 0;
        if (adf_codec_prior((adf_coding_e)c, l, k, &pc, &pr) || pc <= 0) {
            continue;
        }
        if (o->timed_bytes >= ADF_LEARN_MIN && o->timed_ns > 0) {
            cf[l] = o->timed_ns / o->timed_bytes / pc;
            cw += o->timed_bytes;
            csum += o->timed_bytes * cf[l];
            nc++;
        }
        if (o->learn_in >= ADF_LEARN_MIN) {
            rf[l] = o->learn_out / o->learn_in / pr;
            rw += o->learn_in;
            rsum += o->learn_in * rf[l];
            nr++;
        }
    }
    if (nc) {
        /* the machine: bytes-weighted over the rungs, levelled out by
         * their deviations so far */
        m->scale[c][k] = ewma(m->scale[c][k], csum / cw, SCALE_RATE);
    }
    for (l = 0; l < ADF_NLEVELS; l++) {
        const adf_rung_obs_t *o = &obs->rung[c][l][k];
        adf_rung_t *r = &m->rung[c][l][k];

        if (nc >= 2 && cf[l] > 0) {
            r->cost_dev = learn_dev(r->cost_dev, cf[l] / (csum / cw),
                                    o->timed_n);
        }
        if (nr >= 2 && rf[l] > 0) {
            r->ratio_dev = learn_dev(r->ratio_dev, rf[l] / (rsum / rw),
                                     o->learn_n);
        }
    }
}

/* Learn from the interval; what compression cost (ns) by the model. */
static double learn(adf_model_t *m, const adf_obs_t *obs)
{
    double spent = 0;
    int c, l, k;

    for (c = 0; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            learn_kind(m, obs, c, k);
            for (l = 0; l < ADF_NLEVELS; l++) {
                double cost, ratio;

                if (obs->rung[c][l][k].bytes_in > 0) {
                    adf_model_rung(m, (adf_coding_e)c, l, k, &cost, &ratio);
                    spent += obs->rung[c][l][k].bytes_in * cost;
                }
            }
        }
    }
    return spent;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double adf_control_top(const adf_model_t *m, const adf_control_conf_t *conf)
{
    double top = 0, cost, ratio;
    int c, k;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        for (k = 0; conf->top_level[c] && k < ADF_NCLASSES; k++) {
            adf_model_rung(m, (adf_coding_e)c, conf->top_level[c], k, &cost,
                           &ratio);
            top = cost > top ? cost : top;
        }
    }
    return top > ADF_BUDGET_MIN ? top : 1;
}

void adf_control_update(adf_control_t *c, adf_model_t *m,
                        const adf_control_conf_t *conf,
                        const adf_obs_t *obs)
{
    double sample = obs->load, spent, used, rest, want, next, step, v, goal;
    double a, top;
    double cap_ns = obs->capacity * obs->seconds * 1e9;

    spent = learn(m, obs);
    /* after learning: the top is what the top rung costs now */
    top = c->top = adf_control_top(m, conf);
    if (sample < 0 || cap_ns <= 0) {
        return;
    }
    sample = clamp(sample, 0, 100);
    c->raw = sample;
    /* The same time constant whatever the interval: a short interval
     * reacts sooner, not more nervously. */
    a = 1 - exp(-obs->seconds / ADF_CONTROL_TAU);
    c->ema = c->primed ? a * sample + (1 - a) * c->ema : sample;
    c->primed = 1;
    c->spent = clamp(100 * spent / cap_ns, 0, 100);
    /* Of the bytes whose client's path was measured (at the top only a
     * sample is, under the limit none), smoothed like the load: one
     * slow reader among few measured responses must not set the goal
     * for everyone.  An interval without a measurement counts as fast
     * clients, the cautious side (half the target). */
    c->slow_share = (1 - a) * c->slow_share
                    + a * (obs->eligible_asked >= 1
                           ? clamp(obs->eligible_slow / obs->eligible_asked,
                                   0, 1)
                           : 0);
    if (conf->fixed) {
        c->budget = top;        /* learns the costs, never steers */
        c->limited = 0;
        return;
    }

    /* The safety net: above OFF twice, nothing new is compressed until a
     * sample is below ON; then from half the budget that tripped it. */
    if (c->limited) {
        if (sample >= conf->limit_on) {
            return;
        }
        c->limited = 0;
    }
    else if (sample < conf->limit_off) {
        c->over = 0;
    }
    else if (++c->over >= ADF_CONTROL_TRIP) {
        c->over = 0;
        c->limited = 1;
        c->budget = clamp(c->budget / 2, ADF_BUDGET_MIN, top);
        return;
    }

    /* The load as it moves: a rise counts at once, a fall smoothed (a
     * closed loop serves more when it compresses more: B* overshoots
     * when it rises from an interval that compressed little). */
    used = sample > c->ema ? sample : c->ema;
    /* The goal, of which the CPU target is the ceiling: what the bytes
     * are worth.  Without a bandwidth target, time: all of the target for
     * the bytes of clients whose path is slow (the share v), half of it
     * for fast clients, to whom the bytes saved buy little time while the
     * CPU's queue costs them latency.  With one, money: bytes matter as
     * egress approaches the rate (a quarter of the target at half of it,
     * all of it at the rate), whoever the client. */
    v = c->slow_share;
    if (conf->bw_target > 0) {
        double pressure = clamp((obs->egress / obs->seconds / conf->bw_target
                                 - 0.5) / 0.5, 0, 1);
        goal = conf->target * (0.25 + 0.75 * pressure);
    }
    else {
        goal = conf->target * (ADF_FAST_SHARE + (1 - ADF_FAST_SHARE) * v);
    }
    if (fabs(used - goal) < ADF_CONTROL_BAND && obs->eligible >= 1) {
        return;         /* near the goal: noise is not a reason to move */
    }
    rest = used - c->spent;             /* what does not move with B */
    if (rest < 0) {
        rest = 0;
    }
    /* Slow clients get ADF_SLOW_WEIGHT times the budget: the mean weight
     * of a byte is 1 + (W - 1) v. */
    if (obs->eligible < 1) {
        want = top;        /* nothing to compress: no limit */
    }
    else {
        want = (goal - rest) / 100 * cap_ns
               / (obs->eligible * (1 + (ADF_SLOW_WEIGHT - 1) * v));
    }
    want = clamp(want, ADF_BUDGET_MIN, top);
    /* In log space, toward B*: most of the way down at once, half the way
     * up per sample; but by at most a factor per sample below the limit.
     * B* assumes the rest of the load stays as it is, and in a closed
     * loop behind a link it does not: compressing more serves more
     * requests, and their own work grows with them.  Unbounded steps then
     * swing between "nothing" and "everything" (measured on the plant of
     * a zlib-only build: the load between 36 % and 85 % every other
     * second). */
    step = want < c->budget ? ADF_CONTROL_DOWN : ADF_CONTROL_UP;
    next = exp(log(c->budget) + step * (log(want) - log(c->budget)));
    if (sample < conf->limit_off) {
        next = clamp(next, c->budget / ADF_CONTROL_STEP_MAX,
                     c->budget * ADF_CONTROL_STEP_MAX);
    }
    else if (rest >= goal && next < c->budget / ADF_CONTROL_STEP_OFF) {
        /* Over OFF once, with the rest of the load over the goal already:
         * B* is the floor by the clamp, not a budget the model found, and
         * behind a link that rest moves with B (compressing less serves
         * fewer requests).  The load there swings with a steady budget
         * (64-93 % at 100 Mbit x 10 KB), and one sample of 96.7 % took B
         * from 2.4 to 0.03 ns/B, then six samples of doubling served
         * nearly identity.  A cut that yields at once, then; a CPU that
         * stays over OFF trips the limit at the next sample.  Where
         * compression is what fills the CPU (a cold start under load),
         * B* is a real target and is followed. */
        next = c->budget / ADF_CONTROL_STEP_OFF;
    }
    c->budget = next;
    if (want >= top && c->budget > top * 0.9) {
        c->budget = top;   /* arrived: no asymptote at idle */
    }
    c->budget = clamp(c->budget, ADF_BUDGET_MIN, top);
}

double adf_control_effort(const adf_control_t *c)
{
    if (c->limited || c->top <= ADF_BUDGET_MIN) {
        return 0;
    }
    /* on a log scale: the budget spans orders of magnitude */
    return clamp(log(c->budget / ADF_BUDGET_MIN)
                 / log(c->top / ADF_BUDGET_MIN), 0, 1);
}

double adf_control_idle_below(const adf_control_conf_t *conf)
{
    return conf->target * ADF_IDLE_SHARE;
}
