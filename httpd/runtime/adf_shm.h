/* The runtime's shared state as the request path uses it: the load view
 * (adf_sampling.h) and the counters.  Kept under its old name for the
 * files that include it; new code includes what it uses. */
#ifndef ADF_SHM_UMBRELLA_H
#define ADF_SHM_UMBRELLA_H

#include "adf_sampling.h"

#endif /* ADF_SHM_UMBRELLA_H */
