/* Shared state: the load controller's output, the load history and the
 * counters every child adds to, in one segment that survives graceful
 * restarts.  Any child samples the load when the interval has elapsed
 * (its watchdog thread, or the request path if that is first); the
 * others read the result lock-free. */
#ifndef ADF_SHM_H
#define ADF_SHM_H

#include "adf_config.h"

#define ADF_HISTORY 300         /* samples kept for the status page */

typedef struct {
    double raw;         /* last sample, percent; -1 when none */
    double ema;         /* smoothed, percent */
    double budget;      /* CPU ns per byte a response may spend */
    double top;         /* the dearest rung's cost: above, all at the top */
    double effort;      /* the budget for people: 0 .. 1 */
    const adf_model_t *model;
    apr_uint64_t model_gen;     /* the model's generation: see adf_policy.h */
    int limited;
    int stale;          /* no fresh sample for two intervals: fail-safe */
    apr_interval_time_t age;    /* since the last good sample */
} adf_load_view_t;

typedef struct {
    apr_time_t time;
    double raw, ema, effort;
} adf_sample_t;

/* A copy of everything, for the status page. */
typedef struct {
    adf_load_view_t load;
    const char *source;
    const char *signal_error;   /* why the source cannot be read, or NULL */
    apr_interval_time_t interval;
    adf_control_conf_t conf;
    apr_time_t started;
    apr_uint32_t sampler_pid;   /* the process that took the last sample */
    double own;                 /* the server's own CPU, percent */
    double spent;               /* compression's share, percent */
    double top;                 /* the dearest rung's cost, ns/B */
    double slow_share;          /* bytes to clients whose path is slow */
    apr_uint64_t egress;        /* response bytes sent */
    adf_model_t model;
    apr_uint64_t samples;       /* samples taken since the full start */
    apr_uint64_t responses;
    apr_uint64_t reasons[ADF_NREASONS];
    apr_uint64_t coded[ADF_NCODINGS];
    apr_uint64_t bytes_in[ADF_NCODINGS];
    apr_uint64_t bytes_out[ADF_NCODINGS];
    apr_uint64_t levels[ADF_NCODINGS][ADF_NLEVELS];
    apr_uint64_t siblings[ADF_NCODINGS];
    apr_uint64_t stale;
    int nhistory;
    adf_sample_t history[ADF_HISTORY];     /* oldest first */
} adf_stats_t;

/* post_config: attach (or create) the segment, the sampler and its
 * watchdog callback. */
int adf_shm_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                        apr_pool_t *ptemp, server_rec *s);

/* The load state as a response sees it: a sample is taken first when one
 * is due, so its age is at most an interval while the source reads. */
void adf_shm_view(adf_load_view_t *v);

/* For work that may only run while the server is idle (the compressed
 * cache's worker).  Reads only: takes no sample, logs nothing. */
typedef struct {
    double load;        /* the load as it moves (a rise at once, a fall
                         * smoothed), percent; -1: no sample yet */
    int stale;          /* no fresh sample: not known to be idle */
    double idle_below;  /* the controller's idle mark, percent */
    double capacity;    /* CPUs the load is a percentage of */
} adf_idle_view_t;
void adf_shm_idle_view(adf_idle_view_t *v);

/* Counters.  A decision counts once per response with a body. */
void adf_shm_count_decision(const adf_decision_t *d);
void adf_shm_count_bytes(adf_coding_e c, apr_off_t in, apr_off_t out);
void adf_shm_count_sibling(adf_coding_e c);
void adf_shm_count_stale(void);
/* A response that could have been compressed (a coding was accepted),
 * of len bytes (-1: not known), for a client whose path was found slow
 * (slow 1), fast (0) or not measured (-1). */
void adf_shm_count_eligible(apr_off_t len, int slow);
/* Bytes a response sent (log_transaction), for the egress rate. */
void adf_shm_count_egress(apr_off_t bytes);
/* in bytes compressed to out on a rung; ns: the CPU it took, if timed. */
void adf_shm_count_rung(adf_coding_e c, int level, int whole, apr_off_t in,
                        apr_off_t out, apr_uint64_t ns);

/* Everything at once; returns 0 when there is no segment. */
int adf_shm_stats(adf_stats_t *st);

/* watchdog_need hook: ask mod_watchdog for a thread in every child. */
int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton);

#endif /* ADF_SHM_H */
