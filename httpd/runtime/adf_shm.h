/* The runtime's shared state as the request path uses it: the load
 * signal (adf_sampling.h) and the counters (adf_counters.h).  Kept under
 * the name of the file they were split from for adf_filter.c and
 * adf_cache_worker.c, which the codec descriptor change edits: new code
 * includes what it uses. */
#ifndef ADF_SHM_H
#define ADF_SHM_H

#include "adf_sampling.h"
#include "adf_counters.h"

#endif /* ADF_SHM_H */
