/* Shared state: the load controller's output, sampled once per interval
 * by one watchdog thread (in one child at a time) and read lock-free by
 * every child; the load history; and counters every child adds to. */
#ifndef ADF_SHM_H
#define ADF_SHM_H

#include "adf_config.h"

#define ADF_HISTORY 300         /* samples kept for the status page */
#define ADF_NLEVELS (ADF_MAX_LEVEL + 1)

typedef struct {
    double raw;         /* last sample, percent; -1 when none */
    double ema;         /* smoothed, percent */
    double effort;      /* 0 .. 1 */
    int limited;
} adf_load_view_t;

typedef struct {
    apr_time_t time;
    double raw, ema, effort;
} adf_sample_t;

/* A copy of everything, for the status page. */
typedef struct {
    adf_load_view_t load;
    const char *source;
    apr_interval_time_t interval;
    adf_control_conf_t conf;
    apr_time_t started;
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

/* post_config: create the segment and register the sampler. */
int adf_shm_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                        apr_pool_t *ptemp, server_rec *s);

/* Copy the current load state; full effort when there is no state. */
void adf_shm_view(adf_load_view_t *v);

/* Counters.  A decision counts once per response with a body. */
void adf_shm_count_decision(const adf_decision_t *d);
void adf_shm_count_bytes(adf_coding_e c, apr_off_t in, apr_off_t out);
void adf_shm_count_sibling(adf_coding_e c);
void adf_shm_count_stale(void);

/* Everything at once; returns 0 when there is no segment. */
int adf_shm_stats(adf_stats_t *st);

/* watchdog_need hook: ask mod_watchdog for our singleton thread. */
int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton);

#endif /* ADF_SHM_H */
