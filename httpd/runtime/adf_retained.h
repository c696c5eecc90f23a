/* Shared memory that outlives a configuration: kept in httpd's retained
 * data, so that the children of every generation map the same segment
 * across graceful restarts. */
#ifndef ADF_RETAINED_H
#define ADF_RETAINED_H

#include "adf_private.h"

/* An anonymous shared segment of size bytes, kept in httpd's retained data
 * under key so that it survives graceful restarts (the children of every
 * generation map it).  Its address, or NULL (*rv says why).  *fresh: new
 * (a first start, a build with another layout) or a full restart: the
 * caller clears it. */
void *adf_retained_shm(server_rec *s, const char *key, apr_size_t size,
                       int *fresh, apr_status_t *rv);

#endif /* ADF_RETAINED_H */
