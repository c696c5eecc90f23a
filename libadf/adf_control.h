/* The load controller and the cost model it steers with.  Pure: no httpd.
 *
 * Each interval it turns what the interval showed (the load, what
 * compression cost, the bytes that could have been compressed) into a CPU
 * budget per input byte (ns/B), which adf_policy.c spends on the efficient
 * frontier of a coding's levels; the model says what each level (rung)
 * costs and gives, from the backends' priors and what it learned here.
 * The derivation and the reasons for each choice: docs/internals.md,
 * "The controller".
 */
#ifndef ADF_CONTROL_H
#define ADF_CONTROL_H

#include "adf_model.h"

#define ADF_CONTROL_TAU     1.0     /* s: time constant of the load's EMA */
#define ADF_CONTROL_BAND    0.5     /* points around the goal: hold still */
#define ADF_CONTROL_JUMP    10.0    /* a sample this far over the target
                                     * counts at once, unsmoothed */
#define ADF_CONTROL_UP      0.5     /* log-space share toward B* per sample */
#define ADF_CONTROL_DOWN    0.7     /* ... per sample when falling */
#define ADF_CONTROL_TRIP    2       /* samples >= OFF to trip the limit */
/* ... and one more where the target is closer to OFF than a sample's
 * deviation at a shared link's load (7-9 points, measured at 1 Gbit/s):
 * there noise alone puts two samples in a row over OFF, and each trip is
 * a second with nothing compressed. */
#define ADF_CONTROL_NOISE   8.0
#define ADF_CONTROL_STEP_MAX 2.0    /* the most B rises per sample below OFF */
#define ADF_CONTROL_STEP_DOWN 4.0   /* ... and falls */
/* The start's climb: until the load first comes within this many points
 * of the goal, a step whose sample, the one before and the smoothed load
 * are all that far under it goes further.  The start only: later a load
 * that far under the goal is as often a lull (a budget raised fast in
 * one meets the traffic's return at the top) or the limit's pause. */
#define ADF_CONTROL_FAR     30.0
#define ADF_CONTROL_UP_FAR  0.8     /* share of the way */
#define ADF_CONTROL_STEP_FAR 4.0    /* factor */
#define ADF_CONTROL_TRIM    0.2     /* share of the error added to the trim */
#define ADF_CONTROL_TRIM_MAX 3.0    /* points, either way */
#define ADF_CONTROL_TRIM_ZONE 5.0   /* ... added to within this of the goal */
#define ADF_CONTROL_STEP_OFF 8.0    /* ... the most it falls on a sample >= OFF */
/* After the limit trips, the budget resumes at a ceiling of this share
 * of the one that tripped it, raised by CEIL_UP a sample while the load
 * at it reads under the goal (doubled in a lull ADF_CONTROL_FAR under
 * it), gone at the top or CEIL_HOLD seconds after the pause: the pause's
 * own low sample, followed by the usual climb, took the budget back to
 * the one that tripped. */
#define ADF_CONTROL_CEIL    0.9
#define ADF_CONTROL_CEIL_UP 1.03
#define ADF_CONTROL_CEIL_HOLD 6.0
#define ADF_BUDGET_MIN      0.01    /* ns/B: effectively nothing */
#define ADF_LEARN_MIN       65536   /* bytes a rung needs to learn from */
/* Smaller bodies teach nothing about per-byte cost or ratio: their cost
 * is mostly the coder's set-up, their ratio the header's. */
#define ADF_LEARN_BODY      16384
/* Bodies a rung's interval needs for a full lesson on its deviation (half
 * of one at this many): pages differ more than neighbouring levels do, so
 * a few bodies tell which pages a rung got, not what it gives. */
#define ADF_LEARN_EVIDENCE  32

typedef struct {
    double target;              /* percent */
    double limit_off;           /* stop compressing at or above */
    double limit_on;            /* resume below */
    int top_level[ADF_NCODINGS];    /* highest level any range allows; 0:
                                     * a coding not in use */
    double bw_target;           /* egress bytes/s that matter; 0: always */
    int fixed;                  /* no load source: the top rung, always */
} adf_control_conf_t;

/* What one rung did in an interval (the filter adds up). */
typedef struct {
    double bytes_in, bytes_out;     /* every response */
    double learn_in, learn_out;     /* bodies of ADF_LEARN_BODY or more */
    double learn_n;                 /* ... how many */
    double timed_bytes, timed_ns;   /* ... of those, the timed ones */
    double timed_n;
} adf_rung_obs_t;

/* An interval's observations. */
typedef struct {
    double load;                /* percent incl. pressure; < 0: none */
    double own;                 /* ... of it the server's own processes;
                                 * 0 or less: not known */
    double seconds;
    double capacity;            /* CPUs the load is a percentage of */
    double eligible;            /* bytes that could have been compressed */
    double eligible_asked;      /* ... of them, whose client's path was
                                 * measured */
    double eligible_slow;       /* ... and found slow */
    double egress;              /* response bytes sent */
    adf_rung_obs_t rung[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
} adf_obs_t;

typedef struct {
    double raw;                 /* last sample, percent */
    double prev_raw;            /* the one before (100 before it) */
    double ema;                 /* smoothed load, percent */
    double spent;               /* compression's share, percent */
    double budget;              /* ns per byte */
    double idle_budget;         /* ns per byte beyond the rungs a client's
                                 * path gains time from: what the idle part
                                 * of the CPU affords (steered to the idle
                                 * mark) */
    double top;                 /* the dearest rung's cost at the last update */
    double slow_share;          /* of the bytes measured, the slow clients'
                                 * (smoothed) */
    int slow_known;             /* has measured a client's path */
    int limited;                /* between OFF and ON after a trip */
    int over;                   /* samples in a row at or above OFF */
    int primed;                 /* has seen a sample */
    int climbed;                /* the load came within ADF_CONTROL_FAR of
                                 * the goal: the start's climb is over */
    int ref_coding, ref_whole;  /* the frontier most bytes went through */
    double content;             /* their ratio / the model's (smoothed) */
    double trim;                /* points added to the goal the budget is
                                 * solved for: what the load, smoothed,
                                 * fell short of or over it (integral) */
    double ceiling;             /* ns/B the budget stays under since a
                                 * trip; 0: none */
    double ceiling_age;         /* seconds it has held since the pause */
    double risen_from;          /* the budget before the last update raised
                                 * it; 0: that update did not */
    /* for the trace (the debug log, ?json): what the last update aimed
     * at and expected */
    double goal;                /* percent */
    double predicted;           /* percent the new budget should bring;
                                 * < 0: not predicted (held, limited) */
    double egress_rate;         /* response bytes per second */
    double eligible_rate;       /* compressible bytes per second */
} adf_control_t;

/* A cheap starting budget: a fresh server under load must not begin at
 * maximum effort, nor an idle one send its first responses as identity:
 * the budget starts where every coding in use reaches its cheapest rung
 * (adf_control_floor).  m: the model, made by adf_model_init. */
void adf_control_init(adf_control_t *c, const adf_model_t *m,
                      const adf_control_conf_t *conf);

/* What the dearest of the codings' cheapest rungs costs (ns/B): at this
 * budget every coding in use compresses every response. */
double adf_control_floor(const adf_model_t *m, const adf_control_conf_t *conf);

/* Learn from an interval, then steer.  A sample below 0 ("no reading")
 * teaches the model but leaves the control state as it was. */
void adf_control_update(adf_control_t *c, adf_model_t *m,
                        const adf_control_conf_t *conf,
                        const adf_obs_t *obs);

/* What the dearest rung in use costs (ns/B) by the model: the budget at
 * which every response gets its top level. */
double adf_control_top(const adf_model_t *m, const adf_control_conf_t *conf);

/* No load source (conf->fixed): the top rung always, never limited, no
 * ceiling; also what a graceful restart from a steering configuration
 * starts from. */
void adf_control_pin_top(adf_control_t *c, double top);

/* The budget as a fraction of the top (log scale), for people: 0 .. 1. */
double adf_control_effort(const adf_control_t *c);

/* Idle, for background work (the compressed cache's worker) and for the
 * rungs a client gains no time from: a smoothed load below this share of
 * the CPU target. */
#define ADF_IDLE_SHARE 0.5
double adf_control_idle_below(const adf_control_conf_t *conf);

#endif /* ADF_CONTROL_H */
