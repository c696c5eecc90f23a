/* Shared memory kept in httpd's retained data; see adf_retained.h. */
#include "adf_retained.h"

#include <apr_shm.h>
#include <unixd.h>

typedef struct {
    apr_shm_t *shm;
    apr_size_t size;
} retained_t;

void *adf_retained_shm(server_rec *s, const char *key, apr_size_t size,
                       int *fresh, apr_status_t *rv)
{
    retained_t *rt = ap_retained_data_get(key);

    *rv = APR_SUCCESS;
    if (!rt) {
        rt = ap_retained_data_create(key, sizeof(*rt));
    }
    *fresh = !ap_unixd_mpm_get_retained_data()->was_graceful;
    if (!rt->shm || rt->size != size) {
        *rv = apr_shm_create(&rt->shm, size, NULL, s->process->pool);
        if (*rv != APR_SUCCESS) {
            rt->shm = NULL;
            return NULL;
        }
        rt->size = size;
        *fresh = 1;
    }
    return apr_shm_baseaddr_get(rt->shm);
}
