/* The load signal: who samples the load, when, and what responses read
 * of it (adf_sampling.h).
 *
 * Sampling: every child runs a mod_watchdog thread that ticks once per
 * interval; whichever process finds the last sample an interval old takes
 * the sampling lease (a compare-and-swap: nobody ever waits) and samples,
 * so the signal stays fresh while any child lives, whatever the MPM
 * retires.
 * The request path does the same when a sample is due, which also covers
 * a server without mod_watchdog.  Only the current configuration
 * generation samples (children finishing requests after a graceful
 * restart do not).  A sample older than two intervals is stale: responses
 * then use the lowest level (never "paused" on a dead signal), and that
 * is logged once.
 *
 * Every child reads the load from the shared segment (adf_segment.h)
 * with apr_atomic and never touches /proc except when it samples.
 */
#include "adf_sampling.h"
#include "adf_segment.h"
#include "adf_codec.h"
#include "adf_children.h"
#include "adf_held.h"

#include <apr_atomic.h>
#include <apr_strings.h>
#include <ap_mpm.h>
#include <http_core.h>
#include <mod_watchdog.h>
#include <scoreboard.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ADF_WATCHDOG_NAME "_adaptive_deflate_"

/* This configuration generation's sampler (adf_segment.h). */
adf_monitor_t *adf_monitor;

static void publish(const adf_control_t *c)
{
    apr_atomic_set32(&adf_shared->raw, scaled(c->primed ? c->raw : -1));
    apr_atomic_set32(&adf_shared->ema, scaled(c->primed ? c->ema : -1));
    apr_atomic_set64(&adf_shared->budget, bits_of(c->budget));
    apr_atomic_set64(&adf_shared->idle_budget, bits_of(c->idle_budget));
    apr_atomic_set64(&adf_shared->effort, bits_of(adf_control_effort(c)));
    apr_atomic_set32(&adf_shared->limited, (apr_uint32_t)c->limited);
}

/* The server's own CPU in the interval, beside "the CPUs are busy": the
 * children's utime and stime (the scoreboard names them), as a share of
 * the capacity.  A child that exited took its last part with it: such an
 * interval reads low, never above the truth. */
static void own_cpu(double capacity, apr_time_t now)
{
    static long hz;
    apr_uint64_t sum = 0, ticks;
    int i, limit = 0;

    if (!hz) {
        hz = sysconf(_SC_CLK_TCK);
    }
    ap_mpm_query(AP_MPMQ_HARD_LIMIT_DAEMONS, &limit);
    for (i = 0; i < limit; i++) {
        process_score *ps = ap_get_scoreboard_process(i);

        if (ps && ps->pid > 0
            && !adf_sampler_pid_cpu(adf_monitor->sampler,
                                    (apr_uint64_t)ps->pid, &ticks)) {
            sum += ticks;
        }
    }
    if (adf_shared->seen_own_at && now > adf_shared->seen_own_at
        && capacity > 0 && hz > 0) {
        double used = sum > adf_shared->seen_own
                      ? (double)(sum - adf_shared->seen_own) / hz : 0;
        double secs = (double)(now - adf_shared->seen_own_at)
                      / APR_USEC_PER_SEC;

        apr_atomic_set64(&adf_shared->own_pct,
                         bits_of(100.0 * used / (secs * capacity)));
    }
    adf_shared->seen_own = sum;
    adf_shared->seen_own_at = now;
}

/* The interval's observations: what the children added since the last
 * sample. */
static void observe(adf_obs_t *o, double load, apr_time_t now)
{
    apr_uint64_t e = apr_atomic_read64(&adf_shared->eligible);
    apr_uint64_t asked = apr_atomic_read64(&adf_shared->eligible_asked);
    apr_uint64_t slow = apr_atomic_read64(&adf_shared->eligible_slow);
    apr_uint64_t out = apr_atomic_read64(&adf_shared->egress);
    int c, l, k;

    memset(o, 0, sizeof(*o));
    o->load = load;
    o->seconds = (double)(now - adf_shared->last) / APR_USEC_PER_SEC;
    o->capacity = adf_sampler_capacity(adf_monitor->sampler);
    o->eligible = (double)(e - adf_shared->seen_eligible);
    o->eligible_asked = (double)(asked - adf_shared->seen_asked);
    o->eligible_slow = (double)(slow - adf_shared->seen_slow);
    o->egress = (double)(out - adf_shared->seen_egress);
    adf_shared->seen_eligible = e;
    adf_shared->seen_asked = asked;
    adf_shared->seen_slow = slow;
    adf_shared->seen_egress = out;
    own_cpu(o->capacity, now);
    o->own = adf_shared->seen_own_at && adf_shared->own_pct
             ? double_of(apr_atomic_read64(&adf_shared->own_pct)) : -1;
    for (c = 0; c < ADF_NCODINGS; c++) {
        for (l = 0; l < ADF_NLEVELS; l++) {
            for (k = 0; k < ADF_NCLASSES; k++) {
                adf_acc_t *a = &adf_shared->acc[c][l][k];
                adf_acc_t *was = &adf_shared->seen[c][l][k];
                adf_rung_obs_t *r = &o->rung[c][l][k];
                apr_uint64_t v;

#define DELTA(f) (v = apr_atomic_read64(&a->f), \
                  r->f = (double)(v - was->f), was->f = v)
                DELTA(bytes_in);
                DELTA(bytes_out);
                DELTA(learn_in);
                DELTA(learn_out);
                DELTA(learn_n);
                DELTA(timed_bytes);
                DELTA(timed_ns);
                DELTA(timed_n);
#undef DELTA
            }
        }
    }
}

static void record(const adf_control_t *c, double sample, apr_time_t now)
{
    apr_uint32_t i = adf_shared->hist_next;
    adf_sample_t *h = &adf_shared->hist[i % ADF_HISTORY];

    h->time = now;
    h->raw = sample;
    h->ema = c->primed ? c->ema : -1;
    h->effort = adf_control_effort(c);
    apr_atomic_set32(&adf_shared->hist_next, i + 1);
}

/* The signal is readable again, or is not: one line per change. */
static void note_signal(int lost, const char *why)
{
    if (lost && !adf_shared->lost) {
        apr_cpystrn(adf_shared->lost_why, why, sizeof(adf_shared->lost_why));
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, adf_monitor->s, ADFLOGNO(00013)
                     "load signal lost: %s; until it is back, responses use "
                     "the lowest level", why);
    }
    else if (!lost && adf_shared->lost) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, adf_monitor->s,
                     ADFLOGNO(00015) "load signal back (%s)",
                     adf_sampler_describe(adf_monitor->sampler));
    }
    adf_shared->lost = lost;
}

/* One sample, by the lease's holder. */
static void sample(apr_time_t now)
{
    adf_control_t *c = &adf_shared->control;
    adf_load_sample_t ls;
    adf_obs_t *obs;
    double v;
    char ceiling[48] = "";
    int was_limited = c->limited;

    apr_atomic_set64(&adf_shared->attempted, (apr_uint64_t)now);
    if (adf_sampler_read(adf_monitor->sampler, now, &adf_shared->delta, &ls)) {
        note_signal(1, adf_sampler_error(adf_monitor->sampler));
        return;
    }
    note_signal(0, NULL);
    if (ls.busy < 0) {
        return;     /* the first reading of a delta source */
    }
    /* Pressure adds the demand a saturated CPU cannot show as usage. */
    v = ls.pressure > 0 ? ls.busy + ls.pressure : ls.busy;
    v = v > 100 ? 100 : v;
    obs = malloc(sizeof(*obs));         /* 5 KB: not on a thread's stack */
    if (obs) {
        observe(obs, v, now);
        adf_control_update(c, &adf_shared->model, &adf_monitor->conf, obs);
        /* after the model: a reader that sees the new number memoizes
         * frontiers of the new model */
        apr_atomic_inc64(&adf_shared->model_gen);
        free(obs);
    }
    adf_shared->last = now;
    publish(c);
    record(c, v, now);
    apr_atomic_set32(&adf_shared->sampler_pid, (apr_uint32_t)getpid());
    /* when the reading ended: one that blocked (a FIFO) is not old */
    apr_atomic_set64(&adf_shared->sampled, (apr_uint64_t)apr_time_now());
    apr_atomic_set32(&adf_shared->stale_logged, 0);
    if (c->ceiling > 0) {
        apr_snprintf(ceiling, sizeof(ceiling), " (at most %.3g since the "
                     "limit)", c->ceiling);
    }
    if (c->limited != was_limited) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, adf_monitor->s, ADFLOGNO(00001)
                     "CPU load %.1f%%: compression %s", c->raw,
                     c->limited ? "paused (above the CPU limit)"
                                : "resumed");
    }
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, adf_monitor->s,
                 "load sample %.1f%% (compression %.1f%%), smoothed %.1f%%, "
                 "goal %.1f%% (trim %+.1f), budget %.3g ns/byte (idle %.3g)%s%s, "
                 "predicted %.1f%%, egress %.3g B/s, compressible %.3g B/s, "
                 "slow share %.2f (pid %" APR_PID_T_FMT ")", v, c->spent,
                 c->ema, c->goal, c->trim, c->budget, c->idle_budget,
                 c->limited ? ", limited" : "", ceiling, c->predicted,
                 c->egress_rate, c->eligible_rate, c->slow_share, getpid());
}

/* A fresh start samples four times as often for its first samples: under
 * load the first second decides what the next seconds cost, and the
 * controller starts from a cheap budget, not from what the load allows. */
#define ADF_FAST_SAMPLES 6

/* The sampling lease: (when taken, in ms) << 32 | the holder's pid, or 0.
 * A compare-and-swap in the segment, not a process-shared mutex: a holder
 * that dies mid-sample (a killed child; under prefork, a child's exit()
 * while its watchdog thread samples) leaves a lease that the others take
 * over once it is LEASE_STALE old.  APR's pthread mutex, used before,
 * counts the processes using it and destroys it at 0: under prefork a
 * CGI's process killed before it runs its script runs the child's exit
 * and counts the child out twice, and sampling stopped for good
 * (docs/reliability.md; signal.t). */
#define LEASE_STALE 1000        /* ms; a sample takes microseconds */
/* A holder still alive past LEASE_STALE is stuck in the source (a FIFO, a
 * hung network mount): taking over would send thread after thread, the
 * request path's too, into the same read.  Its lease is taken over only
 * after this long, in case its pid now names another process. */
#define LEASE_HELD_MAX 60000    /* ms */

static int alive(pid_t pid)
{
    return kill(pid, 0) == 0 || errno == EPERM;
}

static apr_uint64_t lease_take(apr_time_t now)
{
    apr_uint32_t ms = (apr_uint32_t)apr_time_as_msec(now);
    apr_uint64_t was = apr_atomic_read64(&adf_shared->lease);
    apr_uint64_t mine = (apr_uint64_t)ms << 32 | (apr_uint32_t)getpid();
    /* Signed: a lease taken after this thread read the clock is fresh. */
    apr_int32_t age = (apr_int32_t)(ms - (apr_uint32_t)(was >> 32));

    if (was && (age < LEASE_STALE
                || (age < LEASE_HELD_MAX && alive((pid_t)(apr_uint32_t)was)))) {
        return 0;
    }
    return apr_atomic_cas64(&adf_shared->lease, mine, was) == was ? mine : 0;
}

static void lease_give(apr_uint64_t mine)
{
    apr_atomic_cas64(&adf_shared->lease, 0, mine);     /* unless taken over */
}

/* Sample if an interval has passed since the last attempt and nobody is
 * at it; costs one atomic read otherwise. */
static void maybe_sample(apr_time_t now)
{
    apr_interval_time_t iv = apr_atomic_read32(&adf_shared->hist_next)
                             < ADF_FAST_SAMPLES ? adf_monitor->interval / 4
                                                : adf_monitor->interval;
    /* A watchdog tick may come a little early: 90 % of the interval. */
    apr_interval_time_t due = iv - iv / 10;
    apr_uint64_t mine;

    if (now - (apr_time_t)apr_atomic_read64(&adf_shared->attempted) < due
        || apr_atomic_read32(&adf_shared->generation)
           != adf_monitor->generation
        || !(mine = lease_take(now))) {
        return;
    }
    if (now - (apr_time_t)apr_atomic_read64(&adf_shared->attempted) >= due) {
        sample(now);
    }
    lease_give(mine);
}

/* A lease younger than this is a sample under way: reading a source
 * takes microseconds, a thread descheduled on a busy core a few ms. */
#define LEASE_BUSY 100          /* ms */

/* Is the last sample (age old at now) older than two intervals, with
 * nobody taking one?  After a graceful restart that left a gap, the new
 * generation's first threads came in together: one took the lease and
 * the others, finding the old sample, called the signal stale in the
 * microseconds it took.  Not for a source that fails (lost): its retries
 * hold young leases too, and its signal is stale. */
static int stale_at(apr_time_t now, apr_interval_time_t age)
{
    apr_uint64_t held;
    apr_int32_t ms;

    if (age <= 2 * adf_monitor->interval) {
        return 0;
    }
    held = apr_atomic_read64(&adf_shared->lease);
    if (held && !apr_atomic_read32(&adf_shared->lost)) {
        /* signed, as in lease_take: a lease taken after now is 0 old */
        ms = (apr_int32_t)((apr_uint32_t)apr_time_as_msec(now)
                           - (apr_uint32_t)(held >> 32));
        if (ms < LEASE_BUSY && ms < apr_time_as_msec(adf_monitor->interval)) {
            return 0;
        }
    }
    /* Again: the sampler writes sampled before it gives the lease back,
     * so a lease found free may follow a fresh sample. */
    return now - (apr_time_t)apr_atomic_read64(&adf_shared->sampled)
           > 2 * adf_monitor->interval;
}

void adf_shm_view(adf_load_view_t *v)
{
    apr_time_t now;

    if (!adf_shared || !adf_monitor) {
        memset(v, 0, sizeof(*v));
        v->raw = v->ema = -1;
        v->effort = 1;
        v->budget = v->idle_budget = v->top = 1e9;  /* no controller: the
                                                     * top rung */
        return;
    }
    now = apr_time_now();
    maybe_sample(now);
    v->raw = unscaled(apr_atomic_read32(&adf_shared->raw));
    v->ema = unscaled(apr_atomic_read32(&adf_shared->ema));
    v->budget = double_of(apr_atomic_read64(&adf_shared->budget));
    v->idle_budget = double_of(apr_atomic_read64(&adf_shared->idle_budget));
    v->limited = (int)apr_atomic_read32(&adf_shared->limited);
    v->effort = v->limited
                ? 0 : double_of(apr_atomic_read64(&adf_shared->effort));
    v->model = &adf_shared->model;
    /* + 1: never 0, which says "do not memoize" */
    v->model_gen = apr_atomic_read64(&adf_shared->model_gen) + 1;
    v->top = adf_shared->control.top;
    v->age = now - (apr_time_t)apr_atomic_read64(&adf_shared->sampled);
    if (v->age < 0) {
        v->age = 0;     /* sampled here, after now was read */
    }
    if (!apr_atomic_read32(&adf_shared->hist_next)
        && !adf_monitor->conf.fixed) {
        /* No sample since the full start (the first comes a quarter of
         * an interval after it, or at the first watchdog tick): there is
         * no signal yet, and the lowest level is what a response without
         * one gets ("no-signal"), whatever the dice; GET and HEAD alike.
         * Not logged: nothing is wrong. */
        v->stale = 1;
        v->limited = 0;
        return;
    }
    v->stale = stale_at(now, v->age);
    if (v->stale) {
        v->limited = 0;
        if (!apr_atomic_cas32(&adf_shared->stale_logged, 1, 0)) {
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, adf_monitor->s,
                         ADFLOGNO(00014) "the load signal is %" APR_TIME_T_FMT
                         " ms old (interval %" APR_TIME_T_FMT " ms): "
                         "responses use the lowest level until it is fresh",
                         apr_time_as_msec(v->age),
                         apr_time_as_msec(adf_monitor->interval));
        }
    }
}

void adf_shm_idle_view(adf_idle_view_t *v)
{
    double raw, ema;

    if (!adf_shared || !adf_monitor) {
        v->load = -1;
        v->stale = 1;
        v->idle_below = 0;
        v->capacity = 1;
        return;
    }
    /* as the controller sees it: a rise counts at once */
    raw = unscaled(apr_atomic_read32(&adf_shared->raw));
    ema = unscaled(apr_atomic_read32(&adf_shared->ema));
    v->load = raw > ema ? raw : ema;
    /* the plain age: the cache worker acts on no sample under way */
    v->stale = apr_time_now()
               - (apr_time_t)apr_atomic_read64(&adf_shared->sampled)
               > 2 * adf_monitor->interval;
    v->idle_below = adf_control_idle_below(&adf_monitor->conf);
    v->capacity = adf_sampler_capacity(adf_monitor->sampler);
}

static apr_status_t tick(int state, void *data, apr_pool_t *pool)
{
    if (state == AP_WATCHDOG_STATE_RUNNING && adf_shared && adf_monitor) {
        maybe_sample(apr_time_now());
    }
    if (state == AP_WATCHDOG_STATE_RUNNING) {
        /* this child's coder memory, where it has compressed nothing for
         * a while (adf_codec_pool.c) */
        adf_codec_pool_trim(ADF_CODEC_IDLE_TRIM);
        /* ... and the siblings it holds, unasked for a while */
        adf_held_sweep(apr_time_now());
    }
    return APR_SUCCESS;
}

int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton)
{
    return !parent && !strcmp(name, ADF_WATCHDOG_NAME) ? OK : DECLINED;
}

static apr_status_t forget_monitor(void *data)
{
    adf_monitor = NULL;
    return APR_SUCCESS;
}

/* Can the children's user read the source? */
static const char *probe_sampler(void *baton, apr_pool_t *p)
{
    return adf_sampler_probe(baton, p);
}

int adf_shm_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                        apr_pool_t *ptemp, server_rec *s)
{
    adf_srv_conf_t *sc = ap_get_module_config(s->module_config,
                                              &adaptive_deflate_module);
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *wd_get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *wd_register;
    adf_monitor_t *m;
    ap_watchdog_t *wd;
    adf_load_sample_t ls;
    const char *path, *warning, *err;
    adf_source_e src;
    apr_status_t rv;

    /* The first pass only checks the configuration. */
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    m = apr_pcalloc(pconf, sizeof(*m));
    m->s = s;
    adf_conf_control(sc, &m->conf);
    if (!(adf_shared = adf_segment_attach(s, &m->conf))) {
        return OK;
    }
    /* Defensive: no process keeps a memo into a new configuration
     * (children are forked anew), but nothing memoized may outlive it. */
    apr_atomic_inc64(&adf_shared->model_gen);
    if (m->conf.fixed) {
        /* no signal to wait for (also after a graceful restart from one) */
        adf_control_pin_top(&adf_shared->control,
                            adf_control_top(&adf_shared->model, &m->conf));
        publish(&adf_shared->control);
    }
    m->interval = adf_conf_interval(sc);
    m->generation = (apr_uint32_t)ap_state_query(AP_SQ_CONFIG_GEN);
    src = adf_conf_source(sc, &path);
    m->sampler = adf_sampler_create(pconf, src, path, "", &warning);
    adf_monitor = m;
    apr_pool_cleanup_register(pconf, NULL, forget_monitor,
                              apr_pool_cleanup_null);

    if ((err = adf_as_children(probe_sampler, m->sampler, ptemp)) != NULL) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, ADFLOGNO(00012)
                     "AdaptiveDeflateLoadSource: %s cannot be read by the "
                     "user the children run as (%s): %s; until it can, "
                     "responses use the lowest level",
                     adf_sampler_describe(m->sampler), adf_children_user(),
                     err);
    }
    else if (warning) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, ADFLOGNO(00003)
                     "AdaptiveDeflateLoadSource: %s; until it can be read, "
                     "responses use the lowest level", warning);
    }
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, ADFLOGNO(00004)
                 "load source: %s, every %" APR_TIME_T_FMT " ms",
                 adf_sampler_describe(m->sampler),
                 apr_time_as_msec(m->interval));

    /* From now on this generation samples; the first reading of a delta
     * source is taken here, so the first child has a value at once. */
    apr_atomic_set32(&adf_shared->generation, m->generation);
    adf_shared->lost = err != NULL;
    apr_cpystrn(adf_shared->lost_why, err ? err : "",
                sizeof(adf_shared->lost_why));
    if (adf_sampler_read(m->sampler, apr_time_now(), &adf_shared->delta, &ls)
        == 0 && ls.busy < 0) {
        apr_atomic_set64(&adf_shared->attempted, (apr_uint64_t)apr_time_now());
    }
    if (!adf_shared->sampled) {
        /* Nothing sampled yet: the age counts from the start. */
        apr_atomic_set64(&adf_shared->sampled, (apr_uint64_t)apr_time_now());
        publish(&adf_shared->control);
    }

    wd_get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    wd_register = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    if (!wd_get_instance || !wd_register) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, ADFLOGNO(00005)
                     "mod_watchdog is not loaded: the load is sampled by "
                     "requests, so an idle server's signal may be old");
        return OK;
    }
    rv = wd_get_instance(&wd, ADF_WATCHDOG_NAME, 0, 0, pconf);
    if (rv == APR_SUCCESS) {
        rv = wd_register(wd, m->interval, m, tick);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, ADFLOGNO(00006)
                     "cannot start the load sampler's watchdog; the load is "
                     "sampled by requests only");
    }
    return OK;
}

