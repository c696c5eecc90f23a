/* The load signal as responses and the cache's worker read it.  Any
 * child samples the load when the interval has elapsed (its watchdog
 * thread, or the request path if that is first) and feeds the controller;
 * the others read the result lock-free from the shared segment, which
 * survives graceful restarts. */
#ifndef ADF_SAMPLING_H
#define ADF_SAMPLING_H

#include "adf_config.h"

#define ADF_HISTORY 300         /* samples kept for the status page */

typedef struct {
    double raw;         /* last sample, percent; -1 when none */
    double ema;         /* smoothed, percent */
    double budget;      /* CPU ns per byte a response may spend */
    double idle_budget; /* ... beyond the rungs its client's path gains
                         * time from: what the idle CPU affords */
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

/* watchdog_need hook: ask mod_watchdog for a thread in every child. */
int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton);

#endif /* ADF_SAMPLING_H */
