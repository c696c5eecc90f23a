/* The shared segment of the load signal and the counters: its layout is
 * adf_segment.h's.
 *
 * The segment is anonymous, created from the process pool and kept in
 * retained data (adf_retained.h): a graceful restart keeps the
 * controller's state, the history and the counters; a full restart
 * (SIGHUP, stop/start) clears them.
 */
#include "adf_segment.h"
#include "adf_retained.h"

#include <string.h>

#define ADF_RETAINED_KEY "mod_adaptive_deflate:shm"

adf_shared_t *adf_shared;

adf_shared_t *adf_segment_attach(server_rec *s,
                                const adf_control_conf_t *conf)
{
    adf_shared_t *sh;
    apr_status_t rv;
    int fresh;

    sh = adf_retained_shm(s, ADF_RETAINED_KEY, sizeof(*sh), &fresh, &rv);
    if (!sh) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, ADFLOGNO(00002)
                     "cannot create the shared load segment; "
                     "compressing at the maximum level regardless of "
                     "load");
        return NULL;
    }
    if (fresh) {
        memset(sh, 0, sizeof(*sh));
    }
    if (!sh->started) {
        sh->started = apr_time_now();
        sh->last = sh->started;
        adf_model_init(&sh->model);
        adf_control_init(&sh->control, &sh->model, conf);
    }
    return sh;
}
