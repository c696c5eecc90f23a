/* The counters every child adds to, and their snapshot with the load
 * state for the status page.  Kept in the shared segment, over graceful
 * restarts. */
#ifndef ADF_COUNTERS_H
#define ADF_COUNTERS_H

#include "adf_sampling.h"

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
    double slow_share;          /* bytes to clients that wait on their path */
    double goal, predicted;     /* the controller's last aim, percent */
    apr_uint64_t egress;        /* response bytes sent */
    apr_uint64_t dict_hits, dict_misses, dict_saved;
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

/* Counters.  A decision counts once per response with a body. */
void adf_shm_count_decision(const adf_decision_t *d);
void adf_shm_count_bytes(adf_coding_e c, apr_off_t in, apr_off_t out);
void adf_shm_count_sibling(adf_coding_e c);
void adf_shm_count_stale(void);
/* A response that could have been compressed (a coding was accepted),
 * of len bytes (-1: not known), for a client whose path was found slow
 * (slow 1), fast (0) or not measured (-1). */
void adf_shm_count_eligible(apr_off_t len, int slow);
/* A request that named a dictionary: sent against it (hit, saved: the
 * bytes it saved against the coding that would have gone out without
 * it, estimated from the model), or not (a miss). */
void adf_shm_count_dict(int hit, apr_off_t saved);
/* Bytes a response sent (log_transaction), for the egress rate. */
void adf_shm_count_egress(apr_off_t bytes);
/* in bytes compressed to out on a rung; ns: the CPU it took, if timed. */
void adf_shm_count_rung(adf_coding_e c, int level, int whole, apr_off_t in,
                        apr_off_t out, apr_uint64_t ns);

/* Everything at once (the load state too: a due sample is taken first);
 * returns 0 when there is no segment. */
int adf_shm_stats(adf_stats_t *st);

#endif /* ADF_COUNTERS_H */
