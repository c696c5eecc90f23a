/* The load controller: turns a stream of load samples (percent) into the
 * compression effort every response is chosen with.  Pure: no httpd.
 *
 *  - The newest sample is blended into a moving average (EMA, weight
 *    ADF_CONTROL_ALPHA) to damp noise.
 *  - When ADF_CONTROL_TRIP samples in a row reach the CPU limit's OFF
 *    mark, nothing new is compressed until a sample falls below the ON
 *    mark (hysteresis).  Raw samples, so saturation is acted on within
 *    two intervals; two of them, because on a busy link a single
 *    250 ms sample swings between 25 % and 95 % (measured).  Tripping the
 *    limit also cuts the effort by ADF_CONTROL_BACKOFF, and the effort
 *    holds still while limited, so compression resumes below the level
 *    that saturated the CPU instead of flapping in and out of the limit.
 *  - Otherwise the effort (0 = no compression, 1 = the maximum level)
 *    integrates the distance of the average from the target: it climbs
 *    while there is headroom and falls while the CPU is above target, by
 *    ADF_CONTROL_GAIN per percentage point and interval, with a dead band
 *    of ADF_CONTROL_DEADBAND points so steady load holds the level still.
 *    The gain keeps the loop stable even where a little compression buys
 *    a lot of throughput (a bandwidth-bound link: CPU 12 % uncompressed,
 *    56 % at level 1, measured), and when compression is all of the
 *    CPU's work (both simulated in t/unit/test_control.c); the price is
 *    that recovering from a halving to full effort takes three or four
 *    intervals.
 */
#ifndef ADF_CONTROL_H
#define ADF_CONTROL_H

#define ADF_CONTROL_ALPHA     0.5
#define ADF_CONTROL_GAIN      0.005
#define ADF_CONTROL_BACKOFF   0.5
#define ADF_CONTROL_TRIP      2
#define ADF_CONTROL_DEADBAND  2.0

typedef struct {
    double target;              /* percent */
    double limit_off;           /* stop compressing at or above */
    double limit_on;            /* resume below */
} adf_control_conf_t;

typedef struct {
    double raw;                 /* last sample, percent */
    double ema;                 /* smoothed load, percent */
    double effort;              /* 0 .. 1 */
    int limited;                /* between OFF and ON after a trip */
    int over;                   /* samples in a row at or above OFF */
    int primed;                 /* has seen a sample */
} adf_control_t;

/* Start at full effort: an idle server compresses at once. */
void adf_control_init(adf_control_t *c);

/* Feed one sample (percent, clamped to 0..100); a negative sample means
 * "no reading" and leaves the state as it was. */
void adf_control_update(adf_control_t *c, const adf_control_conf_t *conf,
                        double sample);

#endif /* ADF_CONTROL_H */
