/* Shared load state and its sampler.
 *
 * One place samples: a mod_watchdog singleton callback, which runs in
 * exactly one child at a time (mod_watchdog elects it with a global mutex
 * and hands it on when that child exits; httpd has no parent watchdog
 * threads under forked MPMs).  It reads the load source every interval,
 * runs the controller, whose state lives in the segment so the next
 * elected child goes on from it, and publishes the result.  Every child
 * reads four 32-bit words per response with apr_atomic and never touches
 * /proc.  The segment is anonymous and lives in pconf: a graceful restart
 * replaces it and leaves nothing behind in /dev/shm or SysV IPC.
 */
#include "adf_shm.h"

#include <apr_atomic.h>
#include <apr_shm.h>
#include <apr_strings.h>
#include <http_core.h>
#include <mod_watchdog.h>

#define ADF_WATCHDOG_NAME "_adaptive_deflate_"
#define SCALE 10000.0

typedef struct {
    volatile apr_uint32_t raw;          /* percent * SCALE, or all ones */
    volatile apr_uint32_t ema;
    volatile apr_uint32_t effort;       /* fraction * SCALE */
    volatile apr_uint32_t limited;
    adf_control_t control;              /* written by the sampler only */
} adf_shared_t;

typedef struct {
    server_rec *s;
    adf_sampler_t *sampler;
    adf_control_conf_t conf;
} adf_monitor_t;

static adf_shared_t *shared;

static APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *wd_get_instance;
static APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *wd_register;

static apr_uint32_t scaled(double v)
{
    return v < 0 ? 0xffffffffu : (apr_uint32_t)(v * SCALE + 0.5);
}

static double unscaled(apr_uint32_t v)
{
    return v == 0xffffffffu ? -1 : v / SCALE;
}

static void publish(const adf_control_t *c)
{
    apr_atomic_set32(&shared->raw, scaled(c->primed ? c->raw : -1));
    apr_atomic_set32(&shared->ema, scaled(c->primed ? c->ema : -1));
    apr_atomic_set32(&shared->effort, scaled(c->effort));
    apr_atomic_set32(&shared->limited, (apr_uint32_t)c->limited);
}

void adf_shm_view(adf_load_view_t *v)
{
    if (!shared) {
        v->raw = v->ema = -1;
        v->effort = 1;
        v->limited = 0;
        return;
    }
    v->raw = unscaled(apr_atomic_read32(&shared->raw));
    v->ema = unscaled(apr_atomic_read32(&shared->ema));
    v->effort = unscaled(apr_atomic_read32(&shared->effort));
    v->limited = (int)apr_atomic_read32(&shared->limited);
}

static apr_status_t sample_tick(int state, void *data, apr_pool_t *pool)
{
    adf_monitor_t *m = data;
    adf_control_t *c;
    double sample;
    int was_limited;

    if (state != AP_WATCHDOG_STATE_RUNNING || !shared) {
        return APR_SUCCESS;
    }
    c = &shared->control;
    was_limited = c->limited;
    /* -1 (no reading yet, or none at all) leaves the state as it is. */
    sample = adf_sampler_read(m->sampler, apr_time_now());
    adf_control_update(c, &m->conf, sample);
    publish(c);
    if (c->limited != was_limited) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, m->s, APLOGNO(10001)
                     "CPU load %.1f%%: compression %s", c->raw,
                     c->limited ? "paused (above the CPU limit)"
                                : "resumed");
    }
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, m->s,
                 "load sample %.1f%%, smoothed %.1f%%, effort %.3f%s",
                 sample, c->ema, c->effort, c->limited ? ", limited" : "");
    return APR_SUCCESS;
}

int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton)
{
    return !parent && !strcmp(name, ADF_WATCHDOG_NAME) ? OK : DECLINED;
}

static apr_status_t forget_shared(void *data)
{
    shared = NULL;
    return APR_SUCCESS;
}

int adf_shm_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                        apr_pool_t *ptemp, server_rec *s)
{
    adf_srv_conf_t *sc = ap_get_module_config(s->module_config,
                                              &adaptive_deflate_module);
    adf_monitor_t *m;
    apr_shm_t *shm;
    ap_watchdog_t *wd;
    const char *path, *warning;
    adf_source_e src;
    apr_status_t rv;

    /* The first pass only checks the configuration. */
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    rv = apr_shm_create(&shm, sizeof(adf_shared_t), NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, APLOGNO(10002)
                     "cannot create the shared load segment; compressing "
                     "at the maximum level regardless of load");
        return OK;
    }
    shared = apr_shm_baseaddr_get(shm);
    apr_pool_cleanup_register(pconf, NULL, forget_shared,
                              apr_pool_cleanup_null);

    m = apr_pcalloc(pconf, sizeof(*m));
    m->s = s;
    adf_conf_control(sc, &m->conf);
    adf_control_init(&shared->control);
    publish(&shared->control);

    src = adf_conf_source(sc, &path);
    m->sampler = adf_sampler_create(pconf, src, path, "", &warning);
    if (warning) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, APLOGNO(10003)
                     "AdaptiveDeflateLoadSource: %s; until it can be read, "
                     "the controller holds its last state (at start: the "
                     "maximum level)", warning);
    }
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, APLOGNO(10004)
                 "load source: %s, every %" APR_TIME_T_FMT " ms",
                 adf_sampler_describe(m->sampler),
                 apr_time_as_msec(adf_conf_interval(sc)));

    wd_get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    wd_register = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    if (!wd_get_instance || !wd_register) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, APLOGNO(10005)
                     "mod_watchdog is not loaded: the load is not sampled "
                     "and responses use the maximum level");
        return OK;
    }
    rv = wd_get_instance(&wd, ADF_WATCHDOG_NAME, 0, 1, pconf);
    if (rv == APR_SUCCESS) {
        rv = wd_register(wd, adf_conf_interval(sc), m, sample_tick);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, APLOGNO(10006)
                     "cannot start the load sampler; responses use the "
                     "maximum level");
    }
    return OK;
}
