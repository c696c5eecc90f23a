/* The shared load state: sampled once per interval by one watchdog thread
 * (in one child at a time), read lock-free by every child. */
#ifndef ADF_SHM_H
#define ADF_SHM_H

#include "adf_config.h"

typedef struct {
    double raw;         /* last sample, percent; -1 when none */
    double ema;         /* smoothed, percent */
    double effort;      /* 0 .. 1 */
    int limited;
} adf_load_view_t;

/* post_config: create the segment and register the sampler. */
int adf_shm_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                        apr_pool_t *ptemp, server_rec *s);

/* Copy the current state; full effort when there is no state. */
void adf_shm_view(adf_load_view_t *v);

/* watchdog_need hook: ask mod_watchdog for our singleton thread. */
int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton);

#endif /* ADF_SHM_H */
