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
#include <string.h>
#include <http_core.h>
#include <mod_watchdog.h>

#define ADF_WATCHDOG_NAME "_adaptive_deflate_"
#define SCALE 10000.0

/* The segment.  Load words are written by the sampler only and read by
 * every child with apr_atomic; counters are added to by every child with
 * apr_atomic; the history ring is written by the sampler only and read
 * by the status page, which tolerates a torn sample. */
typedef struct {
    volatile apr_uint32_t raw;          /* percent * SCALE, or all ones */
    volatile apr_uint32_t ema;
    volatile apr_uint32_t effort;       /* fraction * SCALE */
    volatile apr_uint32_t limited;
    adf_control_t control;              /* written by the sampler only */
    volatile apr_uint32_t hist_next;    /* samples written so far */
    adf_sample_t hist[ADF_HISTORY];
    apr_time_t started;
    volatile apr_uint64_t responses;
    volatile apr_uint64_t reasons[ADF_NREASONS];
    volatile apr_uint64_t coded[ADF_NCODINGS];
    volatile apr_uint64_t bytes_in[ADF_NCODINGS];
    volatile apr_uint64_t bytes_out[ADF_NCODINGS];
    volatile apr_uint64_t levels[ADF_NCODINGS][ADF_NLEVELS];
    volatile apr_uint64_t siblings[ADF_NCODINGS];
    volatile apr_uint64_t stale;
} adf_shared_t;

typedef struct {
    server_rec *s;
    adf_sampler_t *sampler;
    adf_control_conf_t conf;
    apr_interval_time_t interval;
} adf_monitor_t;

static adf_shared_t *shared;
static adf_monitor_t *monitor;

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

static void record(const adf_control_t *c, double sample)
{
    apr_uint32_t i = shared->hist_next;
    adf_sample_t *h = &shared->hist[i % ADF_HISTORY];

    h->time = apr_time_now();
    h->raw = sample;
    h->ema = c->primed ? c->ema : -1;
    h->effort = c->effort;
    apr_atomic_set32(&shared->hist_next, i + 1);
}

void adf_shm_count_decision(const adf_decision_t *d)
{
    if (!shared) {
        return;
    }
    apr_atomic_inc64(&shared->responses);
    apr_atomic_inc64(&shared->reasons[d->reason]);
    if (d->coding != ADF_IDENTITY) {
        apr_atomic_inc64(&shared->coded[d->coding]);
        if (d->level >= 0 && d->level < ADF_NLEVELS) {
            apr_atomic_inc64(&shared->levels[d->coding][d->level]);
        }
    }
}

void adf_shm_count_bytes(adf_coding_e c, apr_off_t in, apr_off_t out)
{
    if (shared) {
        apr_atomic_add64(&shared->bytes_in[c], (apr_uint64_t)in);
        apr_atomic_add64(&shared->bytes_out[c], (apr_uint64_t)out);
    }
}

void adf_shm_count_sibling(adf_coding_e c)
{
    if (shared) {
        apr_atomic_inc64(&shared->responses);
        apr_atomic_inc64(&shared->reasons[ADF_R_PRECOMPRESSED]);
        apr_atomic_inc64(&shared->siblings[c]);
    }
}

void adf_shm_count_stale(void)
{
    if (shared) {
        apr_atomic_inc64(&shared->stale);
    }
}

int adf_shm_stats(adf_stats_t *st)
{
    apr_uint32_t next, n, i;
    int c, l;

    memset(st, 0, sizeof(*st));
    adf_shm_view(&st->load);
    if (!shared || !monitor) {
        return 0;
    }
    st->source = adf_sampler_describe(monitor->sampler);
    st->interval = monitor->interval;
    st->conf = monitor->conf;
    st->started = shared->started;
    st->responses = apr_atomic_read64(&shared->responses);
    st->stale = apr_atomic_read64(&shared->stale);
    for (i = 0; i < ADF_NREASONS; i++) {
        st->reasons[i] = apr_atomic_read64(&shared->reasons[i]);
    }
    for (c = 0; c < ADF_NCODINGS; c++) {
        st->coded[c] = apr_atomic_read64(&shared->coded[c]);
        st->bytes_in[c] = apr_atomic_read64(&shared->bytes_in[c]);
        st->bytes_out[c] = apr_atomic_read64(&shared->bytes_out[c]);
        st->siblings[c] = apr_atomic_read64(&shared->siblings[c]);
        for (l = 0; l < ADF_NLEVELS; l++) {
            st->levels[c][l] = apr_atomic_read64(&shared->levels[c][l]);
        }
    }
    next = apr_atomic_read32(&shared->hist_next);
    n = next < ADF_HISTORY ? next : ADF_HISTORY;
    for (i = 0; i < n; i++) {
        st->history[i] = shared->hist[(next - n + i) % ADF_HISTORY];
    }
    st->nhistory = (int)n;
    return 1;
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
    record(c, sample);
    if (c->limited != was_limited) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, m->s, ADFLOGNO(00001)
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
    monitor = NULL;
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
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, ADFLOGNO(00002)
                     "cannot create the shared load segment; compressing "
                     "at the maximum level regardless of load");
        return OK;
    }
    shared = apr_shm_baseaddr_get(shm);
    memset(shared, 0, sizeof(*shared));
    shared->started = apr_time_now();
    apr_pool_cleanup_register(pconf, NULL, forget_shared,
                              apr_pool_cleanup_null);

    m = apr_pcalloc(pconf, sizeof(*m));
    m->s = s;
    adf_conf_control(sc, &m->conf);
    m->interval = adf_conf_interval(sc);
    adf_control_init(&shared->control);
    publish(&shared->control);

    monitor = m;
    src = adf_conf_source(sc, &path);
    m->sampler = adf_sampler_create(pconf, src, path, "", &warning);
    if (warning) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, ADFLOGNO(00003)
                     "AdaptiveDeflateLoadSource: %s; until it can be read, "
                     "the controller holds its last state (at start: the "
                     "maximum level)", warning);
    }
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, ADFLOGNO(00004)
                 "load source: %s, every %" APR_TIME_T_FMT " ms",
                 adf_sampler_describe(m->sampler),
                 apr_time_as_msec(adf_conf_interval(sc)));

    wd_get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    wd_register = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    if (!wd_get_instance || !wd_register) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, ADFLOGNO(00005)
                     "mod_watchdog is not loaded: the load is not sampled "
                     "and responses use the maximum level");
        return OK;
    }
    rv = wd_get_instance(&wd, ADF_WATCHDOG_NAME, 0, 1, pconf);
    if (rv == APR_SUCCESS) {
        rv = wd_register(wd, adf_conf_interval(sc), m, sample_tick);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, ADFLOGNO(00006)
                     "cannot start the load sampler; responses use the "
                     "maximum level");
    }
    return OK;
}
