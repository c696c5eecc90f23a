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

void adf_control_init(adf_control_t *c, const adf_model_t *m)
{
    double cost, ratio;

    memset(c, 0, sizeof(*c));
    c->top = 1;
    /* Half of gzip level 1: compression starts, cheaply, on half of
     * the responses until the first interval tells more. */
    adf_model_rung(m, ADF_GZIP, 1, 0, &cost, &ratio);
    c->budget = cost / 2;
}

static double ewma(double old, double sample, double w)
{
    return old > 0 ? (1 - w) * old + w * sample : sample;
}

/* Learn from one coding and kind's rungs in an interval: the machine's
 * factor from all of them, each rung's deviation when two or more were
 * used (and so saw the same traffic). */
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
        adf_rung_t *r = &m->rung[c][l][k];

        if (nc >= 2 && cf[l] > 0) {
            r->cost_dev = ewma(r->cost_dev, cf[l] / (csum / cw), LEARN_RATE);
        }
        if (nr >= 2 && rf[l] > 0) {
            r->ratio_dev = ewma(r->ratio_dev, rf[l] / (rsum / rw),
                                LEARN_RATE);
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

void adf_control_update(adf_control_t *c, adf_model_t *m,
                        const adf_control_conf_t *conf,
                        const adf_obs_t *obs)
{
    double sample = obs->load, spent, used, rest, want, step, v, goal;
    double cap_ns = obs->capacity * obs->seconds * 1e9;

    spent = learn(m, obs);
    c->top = conf->budget_max;
    if (sample < 0 || cap_ns <= 0) {
        return;
    }
    sample = clamp(sample, 0, 100);
    c->raw = sample;
    c->ema = c->primed ? ADF_CONTROL_ALPHA * sample
                         + (1 - ADF_CONTROL_ALPHA) * c->ema
                       : sample;
    c->primed = 1;
    c->spent = clamp(100 * spent / cap_ns, 0, 100);

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
        c->budget = clamp(c->budget / 2, ADF_BUDGET_MIN, conf->budget_max);
        return;
    }

    /* The load as it moves: a rise counts at once, a fall smoothed. */
    used = sample > c->ema ? sample : c->ema;
    rest = used - c->spent;             /* what does not move with B */
    if (rest < 0) {
        rest = 0;
    }
    v = obs->eligible >= 1 ? clamp(obs->eligible_slow / obs->eligible, 0, 1)
                           : 0;
    goal = conf->target;
    if (conf->bw_target > 0) {
        double pressure = clamp((obs->egress / obs->seconds / conf->bw_target
                                 - 0.5) / 0.5, 0, 1);
        goal *= 0.25 + 0.75 * pressure;
    }
    if ((conf->limit_on + conf->limit_off) / 2 > goal) {
        goal += ((conf->limit_on + conf->limit_off) / 2 - goal) * v;
    }
    if (obs->eligible < 1) {
        want = conf->budget_max;        /* nothing to compress: no limit */
    }
    else {
        want = (goal - rest) / 100 * cap_ns
               / (obs->eligible * (1 + (ADF_SLOW_WEIGHT - 1) * v));
    }
    want = clamp(want, ADF_BUDGET_MIN, conf->budget_max);
    step = want < c->budget ? ADF_CONTROL_DOWN : ADF_CONTROL_UP;
    c->budget = exp(log(c->budget) + step * (log(want) - log(c->budget)));
    c->budget = clamp(c->budget, ADF_BUDGET_MIN, conf->budget_max);
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
