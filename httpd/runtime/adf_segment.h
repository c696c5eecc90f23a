/* What the runtime's files share (private to httpd/runtime/): the shared
 * segment's layout, this configuration generation's sampler, and the
 * fixed-point and bit conversions of the values read lock-free.
 *
 * The segment holds the load controller's state and output, the load
 * history and the counters every child adds to; any child samples
 * (adf_sampling.c), every child counts (adf_counters.c), and it survives
 * graceful restarts (adf_segment.c). */
#ifndef ADF_SEGMENT_H
#define ADF_SEGMENT_H

#include "adf_sampling.h"
#include "adf_sampler.h"

#include <string.h>

#define ADF_LOAD_SCALE 10000.0  /* percent, fixed point */

/* What every child adds up per rung, since the full start. */
typedef struct {
    volatile apr_uint64_t bytes_in, bytes_out, learn_in, learn_out, learn_n;
    volatile apr_uint64_t timed_bytes, timed_ns, timed_n;
} adf_acc_t;

typedef struct {
    volatile apr_uint32_t raw;          /* percent * ADF_LOAD_SCALE, or ones */
    volatile apr_uint32_t ema;
    volatile apr_uint64_t budget;       /* a double's bits: ns per byte */
    volatile apr_uint64_t idle_budget;  /* ... what the idle CPU affords */
    volatile apr_uint64_t effort;       /* a double's bits: for people */
    volatile apr_uint32_t limited;
    volatile apr_uint64_t sampled;      /* time of the last good sample */
    volatile apr_uint64_t attempted;    /* time of the last attempt */
    volatile apr_uint64_t lease;        /* who samples: see lease_take() */
    volatile apr_uint32_t generation;   /* the configuration that samples */
    volatile apr_uint32_t sampler_pid;
    volatile apr_uint32_t stale_logged;
    volatile apr_uint64_t model_gen;    /* one more after each update */
    volatile apr_uint32_t lost;         /* the source failed (logged) */
    char lost_why[160];
    /* Written by the lease's holder only. */
    adf_control_t control;
    adf_model_t model;                  /* read lock-free by responses */
    adf_delta_t delta;
    apr_time_t last;                    /* of the last good sample */
    adf_acc_t seen[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
    apr_uint64_t seen_eligible, seen_asked, seen_slow, seen_egress, seen_own;
    apr_time_t seen_own_at;
    volatile apr_uint32_t hist_next;    /* samples written so far */
    adf_sample_t hist[ADF_HISTORY];
    /* Counters, added to by every child. */
    apr_time_t started;
    volatile apr_uint64_t responses;
    volatile apr_uint64_t reasons[ADF_NREASONS];
    volatile apr_uint64_t coded[ADF_NCODINGS];
    volatile apr_uint64_t bytes_in[ADF_NCODINGS];
    volatile apr_uint64_t bytes_out[ADF_NCODINGS];
    volatile apr_uint64_t levels[ADF_NCODINGS][ADF_NLEVELS];
    volatile apr_uint64_t siblings[ADF_NCODINGS];
    volatile apr_uint64_t stale;
    adf_acc_t acc[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
    volatile apr_uint64_t eligible;     /* bytes that could be compressed */
    volatile apr_uint64_t eligible_n;   /* responses they came in */
    volatile apr_uint64_t eligible_asked;   /* bytes whose client's path
                                             * was measured */
    volatile apr_uint64_t eligible_slow;    /* ... and found slow */
    volatile apr_uint64_t egress;       /* response bytes sent */
    volatile apr_uint64_t dict_hits;    /* responses sent as dcz */
    volatile apr_uint64_t dict_misses;  /* a dictionary named, none used */
    volatile apr_uint64_t dict_saved;   /* bytes dcz saved, estimated */
    volatile apr_uint64_t own_pct;      /* a double's bits: last interval */
} adf_shared_t;

/* This configuration generation's view of the sampler. */
typedef struct {
    server_rec *s;
    adf_sampler_t *sampler;
    adf_control_conf_t conf;
    apr_interval_time_t interval;
    apr_uint32_t generation;
} adf_monitor_t;

/* The segment (NULL: none could be made) and the sampler of this
 * configuration (NULL: before post_config, or after its pool went). */
extern adf_shared_t *adf_shared;
extern adf_monitor_t *adf_monitor;

static APR_INLINE apr_uint32_t scaled(double v)
{
    return v < 0 ? 0xffffffffu : (apr_uint32_t)(v * ADF_LOAD_SCALE + 0.5);
}

static APR_INLINE double unscaled(apr_uint32_t v)
{
    return v == 0xffffffffu ? -1 : v / ADF_LOAD_SCALE;
}

static APR_INLINE apr_uint64_t bits_of(double d)
{
    apr_uint64_t u;

    memcpy(&u, &d, sizeof(u));
    return u;
}

static APR_INLINE double double_of(apr_uint64_t u)
{
    double d;

    memcpy(&d, &u, sizeof(d));
    return d;
}

/* post_config: the segment, kept across restarts in retained data;
 * cleared unless this is a graceful restart.  NULL (logged) when it
 * cannot be made. */
adf_shared_t *adf_segment_attach(server_rec *s,
                                const adf_control_conf_t *conf);

#endif /* ADF_SEGMENT_H */
