/* The load controller; see adf_control.h (its cost model: adf_model.c). */
#include "adf_control.h"
#include "adf_codec.h"
#include "adf_policy.h"

#include <math.h>
#include <string.h>

#define LEARN_RATE  0.3         /* EWMA weight of an interval's measure */
#define SCALE_RATE  0.1         /* ... of the priors' calibration */

/* The cost of each coding's cheapest rung in use: the dearest of them
 * (dearest 1) or the cheapest (0). */
static double cheapest_rungs(const adf_model_t *m,
                             const adf_control_conf_t *conf, int dearest)
{
    double pick = 0, cost, ratio;
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
            if (cheapest > 0 && (pick <= 0 || (dearest ? cheapest > pick
                                                       : cheapest < pick))) {
                pick = cheapest;
            }
        }
    }
    return pick > ADF_BUDGET_MIN ? pick : ADF_BUDGET_MIN;
}

double adf_control_floor(const adf_model_t *m, const adf_control_conf_t *conf)
{
    return cheapest_rungs(m, conf, 1);
}

void adf_control_init(adf_control_t *c, const adf_model_t *m,
                      const adf_control_conf_t *conf)
{
    memset(c, 0, sizeof(*c));
    c->top = adf_control_top(m, conf);
    /* Every coding's cheapest rung: an idle server compresses from its
     * first response on (a lower start sends the first responses after a
     * start as identity, at random), and a cold start under load begins
     * cheap. */
    c->budget = adf_control_floor(m, conf);
    if (c->budget > c->top) {
        c->budget = c->top;
    }
    c->idle_budget = c->top;
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
         * their deviations so far; a running mean while the evidence is
         * young (the priors come from another machine: here they were 6 x
         * too cheap, and at a tenth per interval the rungs were priced
         * wrong for 20 s), then a moving one */
        double w = cw / (m->seen[c][k] + cw);

        m->scale[c][k] = ewma(m->scale[c][k], csum / cw,
                              w > SCALE_RATE ? w : SCALE_RATE);
        m->seen[c][k] += cw;
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

/* A coding not timed yet runs on the machine the others were timed on:
 * its scale is theirs (the geometric mean, by the bytes timed), not the
 * prior's 1, or an unused coding priced at another machine's speed looks
 * several times cheaper than the one in use, is switched to, and learned
 * the hard way (here: br 1 for igzip 1, the core at 100 %). */
static void borrow_scale(adf_model_t *m)
{
    double w = 0, sum = 0;
    int c, k;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            if (m->seen[c][k] > 0 && m->scale[c][k] > 0) {
                w += m->seen[c][k];
                sum += m->seen[c][k] * log(m->scale[c][k]);
            }
        }
    }
    for (c = ADF_IDENTITY + 1; w > 0 && c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            if (m->seen[c][k] <= 0) {
                m->scale[c][k] = exp(sum / w);
            }
        }
    }
}

/* The coding and class that compressed the most bytes in the interval
 * (gzip's whole bodies when nothing was); returns those bytes. */
static double busiest(const adf_obs_t *obs, int *bc, int *bk)
{
    double most = 0;
    int c, k, l;

    *bc = ADF_GZIP;
    *bk = 1;
    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            double sum = 0;

            for (l = 0; l < ADF_NLEVELS; l++) {
                sum += obs->rung[c][l][k].bytes_in;
            }
            if (sum > most) {
                most = sum;
                *bc = c;
                *bk = k;
            }
        }
    }
    return most;
}

/* Learn from the interval; what compression cost (ns) by the model. */
static double learn(adf_model_t *m, const adf_obs_t *obs)
{
    double spent = 0;
    int c, l, k;

    for (c = 0; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            learn_kind(m, obs, c, k);
        }
    }
    borrow_scale(m);
    for (c = 0; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
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

/* The plant as the interval showed it, to ask what another budget would
 * make of the load (predict). */
typedef struct {
    adf_point_t pts[ADF_NLEVELS + 1];   /* the frontier the bytes go */
    int n;                              /* through, built once */
    double content;             /* their ratio / the model's */
    double rest;                /* percent: the server's load besides
                                 * compression, which grows with requests */
    double fixed;               /* percent: others' (a burner, a build) */
    double per_ns;              /* percent of the capacity per ns/B spent */
    double v;                   /* share of the bytes that wait on a link */
    double top;
    double r_now;               /* the bytes' ratio at the budget in force */
} fit_t;

/* The ratio a budget buys on the reference frontier, identity counting 1
 * and the rungs scaled to the content seen (book pages: 2.5 x the
 * priors' web page). */
static double ratio_at(const fit_t *f, double b)
{
    const adf_point_t *pts = f->pts;
    int i;
    double p, r0, r1;

    if (f->n < 1) {
        return 1;
    }
    adf_frontier_at(pts, f->n, b, &i, &p);
    r0 = pts[i].level == ADF_LEVEL_NONE ? 1 : pts[i].ratio * f->content;
    r1 = i + 1 < f->n ? pts[i + 1].ratio * f->content : r0;
    r0 = r0 > 1 ? 1 : r0;
    r1 = r1 > 1 ? 1 : r1;
    return (1 - p) * r0 + p * r1;
}

/* The load at budget b: compression's spend grows with b; where clients
 * wait on a link (share v) the egress stays where the link holds it, so
 * the requests served, and all their work, grow as the bytes per
 * response shrink; where they do not (the CPU or the clients' own pace
 * set the rate), the requests stay as they are.  A model that holds the
 * rest of the load fixed goes round a cycle behind a shared link, where
 * the load rises steeply near the core's capacity (60 % to 98 % for a
 * quarter more of the responses at gzip 1). */
static double predict(const fit_t *f, double b)
{
    double r = ratio_at(f, b);
    double scale = f->v * (r > 0 ? f->r_now / r : 1) + (1 - f->v);

    return f->fixed + (f->rest + (b < f->top ? b : f->top) * f->per_ns)
                      * scale;
}

/* The budget whose predicted load is the goal (log-space bisection: the
 * prediction grows with the budget). */
static double solve(const fit_t *f, double goal)
{
    double lo = log(ADF_BUDGET_MIN), hi = log(f->top);
    int i;

    if (predict(f, f->top) <= goal) {
        return f->top;
    }
    if (predict(f, ADF_BUDGET_MIN) >= goal) {
        return ADF_BUDGET_MIN;
    }
    for (i = 0; i < 40; i++) {
        double mid = (lo + hi) / 2;

        if (predict(f, exp(mid)) > goal) {
            hi = mid;
        }
        else {
            lo = mid;
        }
    }
    return exp(lo);
}

/* The frontier the interval's compressed bytes went through most (the
 * last one when nothing was compressed), and their ratio against the
 * model's, smoothed. */
static void reference(adf_control_t *c, const adf_model_t *m,
                      const adf_obs_t *obs)
{
    double in = 0, modeled = 0, cost, ratio;
    int l, bc, bk;

    /* an interval that compressed nothing keeps the last reference */
    if (busiest(obs, &bc, &bk) > 0 || !c->ref_coding) {
        c->ref_coding = bc;
        c->ref_whole = bk;
    }
    for (l = 0; l < ADF_NLEVELS; l++) {
        const adf_rung_obs_t *o = &obs->rung[c->ref_coding][l][c->ref_whole];

        if (o->bytes_in > 0) {
            adf_model_rung(m, (adf_coding_e)c->ref_coding, l, c->ref_whole,
                           &cost, &ratio);
            in += o->bytes_in;
            modeled += o->bytes_in * ratio;
        }
    }
    if (in >= ADF_LEARN_MIN && modeled > 0) {
        double out = 0, f;

        for (l = 0; l < ADF_NLEVELS; l++) {
            out += obs->rung[c->ref_coding][l][c->ref_whole].bytes_out;
        }
        f = clamp(out / modeled, 0.25, 8);
        c->content = c->content > 0 ? 0.7 * c->content + 0.3 * f : f;
    }
}

/* ---- one update, phase by phase ---------------------------------------- */

/* Observe: the sample smoothed (the same time constant whatever the
 * interval: a short interval reacts sooner, not more nervously), the
 * compression's share of the CPU, the share of bytes whose clients are
 * slow.  Returns whether the sample saturates the core: at or over OFF,
 * and not one peak of a load held near the goal.  Saturated: the first
 * sample, or a load that rose from far below the goal (a cold start, a
 * burner on an idle core); a second sample over OFF in a row trips the
 * limit (safety_net) before this matters.  A 1 Gbit/s link's load at 81-84 % reads 7-9 points of
 * deviation a sample; counting one peak over OFF as saturation halved the
 * budget (8 times in 112 s of traces, 5 of them in the first 4 s), the
 * climb back took 6-7 s, and 100 KB pages were served at 0.86 of the
 * best mix in the run that measured 0.94 without (bench/run --only grid
 * --links 1gbit).  A climb that counted as a jump from the smoothed load
 * at a target of 94 sent the load round 51-99 % for good. */
static int observe(adf_control_t *c, const adf_control_conf_t *conf,
                   const adf_obs_t *obs, double sample, double spent,
                   double cap_ns)
{
    double a = 1 - exp(-obs->seconds / ADF_CONTROL_TAU);
    int saturated = sample >= conf->limit_off
                    && (!c->primed
                        || c->raw < conf->target - 2 * ADF_CONTROL_JUMP);

    c->prev_raw = c->primed ? c->raw : 100;
    c->raw = sample;
    c->ema = c->primed ? a * sample + (1 - a) * c->ema : sample;
    c->primed = 1;
    c->spent = clamp(100 * spent / cap_ns, 0, 100);
    /* Of the bytes whose client's path was measured (at the top only a
     * sample is, under the limit none), smoothed like the load: one slow
     * reader among few measured responses must not set the goal for
     * everyone.  Before the first measurement the clients count as slow
     * (the operator's whole target: smoothed up from 0, a start behind a
     * link took 5 s to find its clients slow, and left most of its first
     * responses out; and the first connections, not yet queued behind the
     * link, look fast); after it, an interval without a measurement
     * counts as fast clients, the cautious side (a lower goal). */
    if (obs->eligible_asked >= 1) {
        double share = clamp(obs->eligible_slow / obs->eligible_asked, 0, 1);

        c->slow_share = (1 - a) * (c->slow_known ? c->slow_share : 1)
                        + a * share;
        c->slow_known = 1;
    }
    else if (c->slow_known) {
        c->slow_share = (1 - a) * c->slow_share;
    }
    return saturated;
}

/* Is the target within a sample's noise of the limit's OFF mark? */
static int near_off(const adf_control_conf_t *conf)
{
    return conf->limit_off - conf->target < ADF_CONTROL_NOISE;
}

/* The safety net: above OFF twice (three times for a target within the
 * noise of OFF), nothing new is compressed until a sample is below ON;
 * then from a ceiling under the budget that tripped it.  Returns whether
 * the net holds the budget this time. */
static int safety_net(adf_control_t *c, const adf_control_conf_t *conf,
                      double sample, double top)
{
    int trip = ADF_CONTROL_TRIP + near_off(conf);

    if (c->limited) {
        if (sample >= conf->limit_on) {
            return 1;
        }
        c->limited = 0;
    }
    else if (sample < conf->limit_off) {
        c->over = 0;
    }
    else if (++c->over >= trip) {
        c->over = 0;
        c->limited = 1;
        c->ceiling = clamp(c->budget * ADF_CONTROL_CEIL, ADF_BUDGET_MIN, top);
        c->ceiling_age = 0;
        c->budget = c->ceiling;
        return 1;
    }
    return 0;
}

/* Is budget b pressing on the ceiling a trip left? */
static int at_ceiling(const adf_control_t *c, double b)
{
    return c->ceiling > 0 && b >= c->ceiling * 0.99;
}

/* The ceiling a trip left (safety_net), after the sample that ended
 * the interval the budget in force was spent in (held: at the ceiling
 * then): raised while the load at it reads under the goal, gone
 * ADF_CONTROL_CEIL_HOLD seconds after the pause (an overload that has
 * passed must not hold the budget down: a burner's trip left one that
 * took 30-130 s to climb out of, in the unit plant) or once it reaches
 * the top.  Not raised by the pause's own
 * sample (nothing was compressed in it: 14-20 % at 1 Gbit/s, traced),
 * which took the budget straight back to the one that tripped. */
static void relax_ceiling(adf_control_t *c, int held, double sample,
                          double goal, double top, double seconds,
                          int paused)
{
    if (c->ceiling <= 0 || paused) {
        return;
    }
    c->ceiling_age += seconds;
    if (sample < goal - ADF_CONTROL_FAR) {
        c->ceiling *= ADF_CONTROL_STEP_MAX;     /* a lull */
    }
    else if (sample < goal && held) {
        c->ceiling *= ADF_CONTROL_CEIL_UP;
    }
    if (c->ceiling >= top || c->ceiling_age >= ADF_CONTROL_CEIL_HOLD) {
        c->ceiling = 0;
    }
}

/* The goal, of which the CPU target is the ceiling: what the bytes are
 * worth.  Without a bandwidth target, time: the whole target, since the
 * policy buys a client no rung its path gains no time from (fast
 * clients get the cheapest one); a lower goal for fast clients left the
 * core at 64 % behind a shared 1 Gbit/s link whose eight connections
 * each looked fast.  With one, money: bytes matter as egress approaches
 * the rate (a quarter of the target at half of it, all of it at the
 * rate), whoever the client. */
static double goal_of(const adf_control_conf_t *conf, const adf_obs_t *obs)
{
    if (conf->bw_target > 0) {
        double pressure = clamp((obs->egress / obs->seconds / conf->bw_target
                                 - 0.5) / 0.5, 0, 1);
        return conf->target * (0.25 + 0.75 * pressure);
    }
    return conf->target;
}

/* The idle budget: what a response may spend beyond the rungs its
 * client's path gains time from (a LAN, a process on this host: bytes
 * do not buy it time, and every rung's CPU adds to its latency and the
 * CPU's queue).  It spends only the CPU's idle part: steered to the idle
 * mark, half the target, by a plain integral of the load's error.  With
 * the whole target for them too, 128 users with think time on loopback
 * got a p99 of 2.1 x that of gzip 1 fixed for 3 % fewer bytes. */
static void steer_idle(adf_control_t *c, const adf_model_t *m,
                       const adf_control_conf_t *conf, double used,
                       double top)
{
    double mark = adf_control_idle_below(conf);
    double err = mark > 0 ? clamp((mark - used) / mark, -0.7, 0.7) : 0;

    /* (never under the cheapest rung of all, which such a client gets
     * anyway: lower would only be a longer way back; not the dearest
     * coding's cheapest, which bought brotli 1's cost of zlib's levels for
     * a client that takes gzip alone) */
    if (fabs(used - mark) >= ADF_CONTROL_BAND) {
        c->idle_budget = clamp(c->idle_budget * exp(err),
                               cheapest_rungs(m, conf, 0), top);
    }
    if (c->idle_budget > top * 0.9 && used < mark) {
        c->idle_budget = top;
    }
}

/* The budget that would bring the load to goal: the bytes that could be
 * compressed and their clients as this interval had them, through the
 * model of the plant (predict, solve). */
static double wanted(adf_control_t *c, const adf_model_t *m,
                     const adf_control_conf_t *conf, const adf_obs_t *obs,
                     double used, double rest, double goal, double top,
                     double cap_ns, fit_t *fit)
{
    const adf_coding_t *d = adf_coding((adf_coding_e)c->ref_coding);
    double spend_now;
    fit_t f;

    fit->n = -1;
    if (obs->eligible < 1) {
        return top;        /* nothing to compress: no limit */
    }
    f.n = d ? adf_frontier(m, (adf_coding_e)c->ref_coding, c->ref_whole,
                           d->default_min,
                           conf->top_level[c->ref_coding]
                           ? conf->top_level[c->ref_coding]
                           : d->default_min, f.pts) : 0;
    f.content = c->content > 0 ? c->content : 1;
    f.top = top;
    f.v = conf->bw_target > 0 ? 0 : c->slow_share;
    /* Others' load (the server's own CPU is known from its children's
     * times) does not grow with the requests served; unknown, all of it
     * is counted as the server's (the prediction then overstates what a
     * budget adds, and understates what a cut takes off). */
    f.fixed = obs->own > 0 && obs->own < used ? used - obs->own : 0;
    f.fixed = f.fixed > rest ? rest : f.fixed;
    f.rest = rest - f.fixed;
    f.per_ns = 100 * obs->eligible / cap_ns;
    /* the spend the budget in force bought, by the model: where it is not
     * what the budget says (the limit, a budget changed within the
     * interval), the prediction follows the measure */
    spend_now = (c->budget < top ? c->budget : top) * f.per_ns;
    if (spend_now > 0 && c->spent > 0) {
        f.per_ns *= clamp(c->spent / spend_now, 0.05, 20);
    }
    f.r_now = ratio_at(&f, c->budget);
    *fit = f;
    return solve(&f, goal + c->trim < conf->limit_off - 2
                     ? goal + c->trim : conf->limit_off - 2);
}

/* A step toward want: in log space, part of the way per sample, and by
 * at most a factor per sample below the limit: the prediction is a model
 * of a closed loop, and a damped step lets the next interval correct
 * it.  On the start's climb from far below the goal a longer step's error
 * costs less than the time: behind a 100 Mbit/s link the start took
 * 1.5-2.3 s from the floor to brotli 6 at half the way and a factor of 2,
 * and the first seconds served 0.93 of brotli 6 fixed. */
static double step_toward(const adf_control_t *c, double want, double used,
                          double rest, double goal, int saturated)
{
    int far = !c->climbed && used < goal - ADF_CONTROL_FAR
              && c->raw < goal - ADF_CONTROL_FAR
              && c->prev_raw < goal - ADF_CONTROL_FAR;
    double step = want < c->budget ? ADF_CONTROL_DOWN
                  : far ? ADF_CONTROL_UP_FAR : ADF_CONTROL_UP;
    double next = exp(log(c->budget) + step * (log(want) - log(c->budget)));

    if (!saturated) {
        return clamp(next, c->budget / ADF_CONTROL_STEP_DOWN,
                     c->budget * (far ? ADF_CONTROL_STEP_FAR
                                      : ADF_CONTROL_STEP_MAX));
    }
    /* A saturated core: the requests the link would carry are more than
     * the CPU served, so a prediction made from what it served falls
     * short: half of what it finds, and at least a halving (a cold start
     * under load behind a link, a burner taking most of the core). */
    next = want / 2 < c->budget / 2 ? want / 2 : c->budget / 2;
    if (rest >= goal && next < c->budget / ADF_CONTROL_STEP_OFF) {
        /* ... but with the rest of the load over the goal already, the
         * floor is the clamp's, not a budget the model found, and behind
         * a link that rest moves with the budget (compressing less serves
         * fewer requests): one sample must not take the budget to the
         * floor.  A cut that yields at once, then; a CPU that stays over
         * OFF trips the limit at the next sample. */
        next = c->budget / ADF_CONTROL_STEP_OFF;
    }
    return next;
}

void adf_control_update(adf_control_t *c, adf_model_t *m,
                        const adf_control_conf_t *conf,
                        const adf_obs_t *obs)
{
    double cap_ns = obs->capacity * obs->seconds * 1e9;
    double sample = obs->load, spent, used, rest, want, goal, top;
    double before, from, was;
    int saturated, held, full, hold, paused = c->limited, first, bc, bk;
    fit_t fit;

    /* learn what the rungs cost; the top is what the top rung costs now */
    busiest(obs, &bc, &bk);
    was = m->scale[bc][bk];
    spent = learn(m, obs);
    if (was > 0 && m->scale[bc][bk] > 0 && m->scale[bc][bk] != was) {
        /* The budget keeps buying what it bought: learning the machine's
         * price must not move the rungs in use (the first sample here
         * found rungs 5.5 x dearer than their priors, and a budget left
         * as it was bought a sixth of them: 4-5 s of climbing back). */
        double k = m->scale[bc][bk] / was;

        c->budget = clamp(c->budget * k, ADF_BUDGET_MIN, 1e9);
        c->idle_budget = clamp(c->idle_budget * k, ADF_BUDGET_MIN, 1e9);
        c->ceiling *= k;
        c->risen_from *= k;
    }
    top = c->top = adf_control_top(m, conf);
    before = c->budget;
    if (sample < 0 || cap_ns <= 0) {
        return;
    }
    reference(c, m, obs);
    sample = clamp(sample, 0, 100);
    c->predicted = -1;
    c->egress_rate = obs->seconds > 0 ? obs->egress / obs->seconds : 0;
    c->eligible_rate = obs->seconds > 0 ? obs->eligible / obs->seconds : 0;
    first = !c->primed;
    saturated = observe(c, conf, obs, sample, spent, cap_ns);
    from = c->risen_from;
    c->risen_from = 0;
    if (conf->fixed) {
        adf_control_pin_top(c, top);    /* learns the costs, never steers */
        return;
    }
    if (safety_net(c, conf, sample, top)) {
        return;
    }
    if (near_off(conf) && sample >= conf->limit_off && from > 0) {
        /* A sample at OFF on the budget the last one raised, with no room
         * between the target and OFF: the load the rise caused, not one
         * from outside.  The budget it rose from read under the goal and
         * this one at OFF: half way between them, in log space.  Halving
         * it (as for a burner) took it far under, and climbing on went
         * into the net: at 1 Gbit/s x 50 KB, a rise from 1.87 to 2.19
         * ns/B read 72 % then 100 %, and the halved 1.09 ns/B served
         * 45-50 % of the core for a second, most responses as identity
         * behind the link (an early window at 0.78 of gzip 1 fixed in 2 of
         * 6 traced starts); a rise from 1.86 to 2.28 read 85 % then 100 %
         * three times and tripped the limit (2 of 6). */
        c->budget = clamp(sqrt(from * c->budget), ADF_BUDGET_MIN,
                          c->ceiling > 0 && c->ceiling < top ? c->ceiling
                                                             : top);
        return;
    }
    /* The load steered on: smoothed (a steady goal is reached on the
     * mean, not on the peaks, which would leave it a noise's width under
     * the goal), but a rise of ADF_CONTROL_JUMP points over the goal
     * counts at once. */
    used = sample > c->ema && sample >= conf->target + ADF_CONTROL_JUMP
           ? sample : c->ema;
    if (sample < c->ema - ADF_CONTROL_NOISE
        && c->prev_raw < c->ema - ADF_CONTROL_NOISE) {
        /* ... and so does a fall two samples agree on: after a start's
         * saturated first sample the smoothed load stayed over the goal
         * for three more while they read 59-70 %, and the budget was cut
         * on each (a climb back of 4 s, traced at 1 Gbit/s x 100 KB) */
        used = sample > c->prev_raw ? sample : c->prev_raw;
    }
    /* A sample at OFF is the core full, whatever the smoothed load says:
     * in a climb it lags the samples by a second or more.  Nothing rises
     * on one, neither the budget nor the trim, and a second in a row is
     * steered on as it reads (a start at a target of 94 climbed on the
     * smoothed 67-87 % through three samples at 100 % and tripped the
     * limit, traced at 1 Gbit/s x 50 KB; where two trip it, the net
     * acts first). */
    full = sample >= conf->limit_off;
    if (full && c->prev_raw >= conf->limit_off) {
        used = sample;
    }
    steer_idle(c, m, conf, used, top);
    goal = c->goal = goal_of(conf, obs);
    /* With a target near OFF the same holds for a sample over the goal
     * while the smoothed load lags it by more than a sample's noise (a
     * climb): the core has no room left to the limit, and the lagging
     * smoothed load carried the budget past the point where the load
     * stops rising (at 1 Gbit/s x 50 KB, 2.1 ns/B reads 95-100 %: a climb
     * on a smoothed 67 % went on to 2.55, the load stayed at 100 % and the
     * limit tripped, in the early window and every few seconds after).
     * At rest the samples straddle the goal and steer as before: holding
     * on each one over it kept the unit plant without ISA-L at 0.950 of
     * the best fixed level (0.953 before). */
    hold = full || (near_off(conf) && sample >= goal
                    && sample - used > ADF_CONTROL_NOISE);
    held = at_ceiling(c, c->budget);    /* in the interval, before relaxing */
    relax_ceiling(c, held, sample, goal, top, obs->seconds, paused);
    c->climbed |= used >= goal - ADF_CONTROL_FAR
                  || sample >= goal - ADF_CONTROL_FAR;
    /* What the load missed the goal by, added up (an integral term): the
     * prediction's errors (requests that do not scale as it assumes, the
     * noise under a curved model) leave the load a point or two off the
     * goal at rest.  Only while the budget is free to move either way, so
     * that an idle server, a saturated one or one held by the limit's
     * ceiling winds up nothing; never past the limit's OFF mark; and
     * only near the goal: a climb from far under it wound the trim up to
     * its 3 points, and the load went on 4-6 points over the goal once
     * it arrived (traced at 1 Gbit/s x 100 KB). */
    if (c->budget > ADF_BUDGET_MIN && c->budget < top && !held
        && obs->eligible >= 1 && !(hold && goal > used)
        && fabs(goal - used) < ADF_CONTROL_TRIM_ZONE) {
        c->trim = clamp(c->trim + ADF_CONTROL_TRIM * (goal - used),
                        -ADF_CONTROL_TRIM_MAX, ADF_CONTROL_TRIM_MAX);
    }
    if (fabs(used - goal) < ADF_CONTROL_BAND && obs->eligible >= 1) {
        return;         /* near the goal: noise is not a reason to move */
    }
    rest = used - c->spent > 0 ? used - c->spent : 0;  /* not compression */
    want = clamp(wanted(c, m, conf, obs, used, rest, goal, top, cap_ns,
                        &fit), ADF_BUDGET_MIN, top);
    c->budget = step_toward(c, want, used, rest, goal, saturated);
    if (want >= top && c->budget > top * 0.9) {
        c->budget = top;   /* arrived: no asymptote at idle */
    }
    c->budget = clamp(hold && c->budget > before ? before : c->budget,
                      ADF_BUDGET_MIN,
                      c->ceiling > 0 && c->ceiling < top ? c->ceiling : top);
    /* (not the start's first sample: partial, it reads under the goal
     * on a core a load is about to fill, and its rise is the start's) */
    c->risen_from = !first && c->budget > before ? before : 0;
    if (fit.n >= 0) {
        c->predicted = predict(&fit, c->budget);
    }
}

void adf_control_pin_top(adf_control_t *c, double top)
{
    c->top = c->budget = c->idle_budget = top;
    c->limited = 0;
    c->ceiling = 0;
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
