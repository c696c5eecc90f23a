/* The load controller and the cost model it steers with.  Pure: no httpd.
 *
 * Its output is a CPU budget per input byte (ns/B): each response may be
 * compressed on the rungs of its coding's efficient frontier whose cost
 * is within it (adf_policy.c mixes the two rungs around it).  Each
 * interval, from what the interval showed:
 *   U   the load (percent of the CPU this server may use, PSI added),
 *   Uc  what compression cost (bytes compressed per rung x learned cost),
 *   E   the bytes that could have been compressed,
 * the budget that would have put the load on the goal G is
 *   B* = (G - (U - Uc)) x capacity / (E x w)
 * (compression's spend is B x E x w, w the mean weight of the bytes, and
 * the rest of the load does not move with it).  The goal is the CPU
 * target T; when the bytes go to clients whose path is slower than the
 * dearest compression (the share v of them), compressing costs them
 * nothing they would not wait for anyway, and the goal rises toward the
 * middle of the limit's ON and OFF marks (5 points below the trip, by
 * default): G = T + ((ON + OFF) / 2 - T) x v.  With a bandwidth target
 * the operator says bytes matter as egress approaches it: the target T
 * counts from a quarter at half the rate to whole at the rate.  B follows B* in log space: at once a long way down when the
 * load rises, half the way up per interval when it falls.  The CPU
 * limit's OFF/ON marks stay as a safety net.  A fresh controller starts
 * at a cheap budget, not the maximum.  docs/internals.md has the why.
 *
 * The cost model: per rung (coding, level, streamed or whole body), the
 * CPU ns per input byte and the output/input ratio.  Priors come with the
 * backends (measured on a web page).  Absolute measures depend on the
 * content (random base64 and HTML differ tenfold in ratio), so they are
 * learned relative: the machine's speed as one factor per coding and
 * kind (measured / prior, over the rungs in use), and per rung only its
 * deviation from the others used in the same interval, which saw the
 * same traffic (the rungs being mixed).  The frontier's shape is the
 * priors' times those deviations.
 */
#ifndef ADF_CONTROL_H
#define ADF_CONTROL_H

#include "adf_coding.h"

#define ADF_NLEVELS (ADF_MAX_LEVEL + 1)
#define ADF_NCLASSES 2          /* 0: streamed, 1: whole body */

#define ADF_CONTROL_ALPHA   0.5     /* EMA of the load */
#define ADF_CONTROL_UP      0.5     /* log-space step toward B* when rising */
#define ADF_CONTROL_DOWN    0.8     /* ... when falling */
#define ADF_CONTROL_TRIP    2       /* samples >= OFF to trip the limit */
#define ADF_BUDGET_MIN      0.01    /* ns/B: effectively nothing */
/* A client whose path takes longer per byte than the dearest rung's CPU
 * ("slow": the link, not the CPU, holds its response back) gets this much
 * more budget than the others. */
#define ADF_SLOW_WEIGHT     2.0
#define ADF_LEARN_MIN       65536   /* bytes a rung needs to learn from */
/* Smaller bodies teach nothing about per-byte cost or ratio: their cost
 * is mostly the coder's set-up, their ratio the header's. */
#define ADF_LEARN_BODY      16384

typedef struct {
    double target;              /* percent */
    double limit_off;           /* stop compressing at or above */
    double limit_on;            /* resume below */
    double budget_max;          /* ns/B: the dearest rung in use */
    double bw_target;           /* egress bytes/s that matter; 0: always */
} adf_control_conf_t;

typedef struct {
    double cost_dev;            /* cost / what the others' predict; 0: 1 */
    double ratio_dev;           /* the same for the ratio */
} adf_rung_t;

typedef struct {
    adf_rung_t rung[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
    double scale[ADF_NCODINGS][ADF_NCLASSES];   /* the machine: cost/prior */
} adf_model_t;

/* What one rung did in an interval (the filter adds up). */
typedef struct {
    double bytes_in, bytes_out;     /* every response */
    double learn_in, learn_out;     /* bodies of ADF_LEARN_BODY or more */
    double timed_bytes, timed_ns;   /* ... of those, the timed ones */
} adf_rung_obs_t;

/* An interval's observations. */
typedef struct {
    double load;                /* percent incl. pressure; < 0: none */
    double seconds;
    double capacity;            /* CPUs the load is a percentage of */
    double eligible;            /* bytes that could have been compressed */
    double eligible_slow;       /* ... of them, for slow clients */
    double egress;              /* response bytes sent */
    adf_rung_obs_t rung[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
} adf_obs_t;

typedef struct {
    double raw;                 /* last sample, percent */
    double ema;                 /* smoothed load, percent */
    double spent;               /* compression's share, percent */
    double budget;              /* ns per byte */
    double top;                 /* budget_max of the last update */
    int limited;                /* between OFF and ON after a trip */
    int over;                   /* samples in a row at or above OFF */
    int primed;                 /* has seen a sample */
} adf_control_t;

/* The model's priors, and a cheap starting budget: a fresh server under
 * load must not begin at maximum effort. */
void adf_model_init(adf_model_t *m);
void adf_control_init(adf_control_t *c, const adf_model_t *m);

/* The estimate for a rung: the prior, scaled to this machine and by the
 * rung's learned deviation (m NULL: the prior). */
void adf_model_rung(const adf_model_t *m, adf_coding_e c, int level,
                    int whole, double *cost, double *ratio);

/* Learn from an interval, then steer.  A sample below 0 ("no reading")
 * teaches the model but leaves the control state as it was. */
void adf_control_update(adf_control_t *c, adf_model_t *m,
                        const adf_control_conf_t *conf,
                        const adf_obs_t *obs);

/* The budget as a fraction of the top (log scale), for people: 0 .. 1. */
double adf_control_effort(const adf_control_t *c);

/* Idle, for background work (the compressed cache's worker): a smoothed
 * load below this share of the CPU target. */
#define ADF_IDLE_SHARE 0.5
double adf_control_idle_below(const adf_control_conf_t *conf);

#endif /* ADF_CONTROL_H */
