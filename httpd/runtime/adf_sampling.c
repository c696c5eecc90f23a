/* Shared load state, its sampler and the counters.
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
 * The segment is anonymous, created from the process pool and kept in
 * retained data: a graceful restart keeps the controller's state, the
 * history and the counters; a full restart (SIGHUP, stop/start) clears
 * them.  Every child reads the load with apr_atomic and never touches
 * /proc except when it samples.
 */
#include "adf_shm.h"
#include "adf_codec.h"
#include "adf_sampler.h"
#include "adf_children.h"

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
#define ADF_RETAINED_KEY "mod_adaptive_deflate:shm"
#define SCALE 10000.0

/* What every child adds up per rung, since the full start. */
typedef struct {
    volatile apr_uint64_t bytes_in, bytes_out, learn_in, learn_out, learn_n;
    volatile apr_uint64_t timed_bytes, timed_ns, timed_n;
} adf_acc_t;

typedef struct {
    volatile apr_uint32_t raw;          /* percent * SCALE, or all ones */
    volatile apr_uint32_t ema;
    volatile apr_uint64_t budget;       /* a double's bits: ns per byte */
    volatile apr_uint64_t effort;       /* a double's bits: for people */
    volatile apr_uint32_t limited;
    volatile apr_uint64_t sampled;      /* time of the last good sample */
    volatile apr_uint64_t attempted;    /* time of the last attempt */
    volatile apr_uint64_t lease;        /* who samples: see lease_take() */
    volatile apr_uint32_t generation;   /* the configuration that samples */
    volatile apr_uint32_t sampler_pid;
    volatile apr_uint32_t stale_logged;
    volatile apr_uint64_t model_gen;    /* one more after each update */
    volatile apr_uint32_t lost;         /* the source failed (logged) */
    char lost_why[160];
    /* Written by the lease's holder only. */
    adf_control_t control;
    adf_model_t model;                  /* read lock-free by responses */
    adf_delta_t delta;
    apr_time_t last;                    /* of the last good sample */
    adf_acc_t seen[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
    apr_uint64_t seen_eligible, seen_asked, seen_slow, seen_egress, seen_own;
    apr_time_t seen_own_at;
    volatile apr_uint32_t hist_next;    /* samples written so far */
    adf_sample_t hist[ADF_HISTORY];
    /* Counters, added to by every child. */
    apr_time_t started;
    volatile apr_uint64_t responses;
    volatile apr_uint64_t reasons[ADF_NREASONS];
    volatile apr_uint64_t coded[ADF_NCODINGS];
    volatile apr_uint64_t bytes_in[ADF_NCODINGS];
    volatile apr_uint64_t bytes_out[ADF_NCODINGS];
    volatile apr_uint64_t levels[ADF_NCODINGS][ADF_NLEVELS];
    volatile apr_uint64_t siblings[ADF_NCODINGS];
    volatile apr_uint64_t stale;
    adf_acc_t acc[ADF_NCODINGS][ADF_NLEVELS][ADF_NCLASSES];
    volatile apr_uint64_t eligible;     /* bytes that could be compressed */
    volatile apr_uint64_t eligible_n;   /* responses they came in */
    volatile apr_uint64_t eligible_asked;   /* bytes whose client's path
                                             * was measured */
    volatile apr_uint64_t eligible_slow;    /* ... and found slow */
    volatile apr_uint64_t egress;       /* response bytes sent */
    volatile apr_uint64_t own_pct;      /* a double's bits: last interval */
} adf_shared_t;

/* This configuration generation's view of the sampler. */
typedef struct {
    server_rec *s;
    adf_sampler_t *sampler;
    adf_control_conf_t conf;
    apr_interval_time_t interval;
    apr_uint32_t generation;
} adf_monitor_t;

static adf_shared_t *shared;
static adf_monitor_t *monitor;

static apr_uint32_t scaled(double v)
{
    return v < 0 ? 0xffffffffu : (apr_uint32_t)(v * SCALE + 0.5);
}

static double unscaled(apr_uint32_t v)
{
    return v == 0xffffffffu ? -1 : v / SCALE;
}

static apr_uint64_t bits_of(double d)
{
    apr_uint64_t u;

    memcpy(&u, &d, sizeof(u));
    return u;
}

static double double_of(apr_uint64_t u)
{
    double d;

    memcpy(&d, &u, sizeof(d));
    return d;
}

static void publish(const adf_control_t *c)
{
    apr_atomic_set32(&shared->raw, scaled(c->primed ? c->raw : -1));
    apr_atomic_set32(&shared->ema, scaled(c->primed ? c->ema : -1));
    apr_atomic_set64(&shared->budget, bits_of(c->budget));
    apr_atomic_set64(&shared->effort, bits_of(adf_control_effort(c)));
    apr_atomic_set32(&shared->limited, (apr_uint32_t)c->limited);
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
            && !adf_sampler_pid_cpu(monitor->sampler, (apr_uint64_t)ps->pid,
                                    &ticks)) {
            sum += ticks;
        }
    }
    if (shared->seen_own_at && now > shared->seen_own_at && capacity > 0
        && hz > 0) {
        double used = sum > shared->seen_own
                      ? (double)(sum - shared->seen_own) / hz : 0;
        double secs = (double)(now - shared->seen_own_at) / APR_USEC_PER_SEC;

        apr_atomic_set64(&shared->own_pct,
                         bits_of(100.0 * used / (secs * capacity)));
    }
    shared->seen_own = sum;
    shared->seen_own_at = now;
}

/* The interval's observations: what the children added since the last
 * sample. */
static void observe(adf_obs_t *o, double load, apr_time_t now)
{
    apr_uint64_t e = apr_atomic_read64(&shared->eligible);
    apr_uint64_t asked = apr_atomic_read64(&shared->eligible_asked);
    apr_uint64_t slow = apr_atomic_read64(&shared->eligible_slow);
    apr_uint64_t out = apr_atomic_read64(&shared->egress);
    int c, l, k;

    memset(o, 0, sizeof(*o));
    o->load = load;
    o->seconds = (double)(now - shared->last) / APR_USEC_PER_SEC;
    o->capacity = adf_sampler_capacity(monitor->sampler);
    o->eligible = (double)(e - shared->seen_eligible);
    o->eligible_asked = (double)(asked - shared->seen_asked);
    o->eligible_slow = (double)(slow - shared->seen_slow);
    o->egress = (double)(out - shared->seen_egress);
    shared->seen_eligible = e;
    shared->seen_asked = asked;
    shared->seen_slow = slow;
    shared->seen_egress = out;
    own_cpu(o->capacity, now);
    o->own = shared->seen_own_at && shared->own_pct
             ? double_of(apr_atomic_read64(&shared->own_pct)) : -1;
    for (c = 0; c < ADF_NCODINGS; c++) {
        for (l = 0; l < ADF_NLEVELS; l++) {
            for (k = 0; k < ADF_NCLASSES; k++) {
                adf_acc_t *a = &shared->acc[c][l][k];
                adf_acc_t *was = &shared->seen[c][l][k];
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
    apr_uint32_t i = shared->hist_next;
    adf_sample_t *h = &shared->hist[i % ADF_HISTORY];

    h->time = now;
    h->raw = sample;
    h->ema = c->primed ? c->ema : -1;
    h->effort = adf_control_effort(c);
    apr_atomic_set32(&shared->hist_next, i + 1);
}

/* The signal is readable again, or is not: one line per change. */
static void note_signal(int lost, const char *why)
{
    if (lost && !shared->lost) {
        apr_cpystrn(shared->lost_why, why, sizeof(shared->lost_why));
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, monitor->s, ADFLOGNO(00013)
                     "load signal lost: %s; until it is back, responses use "
                     "the lowest level", why);
    }
    else if (!lost && shared->lost) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, monitor->s, ADFLOGNO(00015)
                     "load signal back (%s)",
                     adf_sampler_describe(monitor->sampler));
    }
    shared->lost = lost;
}

/* One sample, by the lease's holder. */
static void sample(apr_time_t now)
{
    adf_control_t *c = &shared->control;
    adf_load_sample_t ls;
    adf_obs_t *obs;
    double v;
    int was_limited = c->limited;

    apr_atomic_set64(&shared->attempted, (apr_uint64_t)now);
    if (adf_sampler_read(monitor->sampler, now, &shared->delta, &ls)) {
        note_signal(1, adf_sampler_error(monitor->sampler));
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
        adf_control_update(c, &shared->model, &monitor->conf, obs);
        /* after the model: a reader that sees the new number memoizes
         * frontiers of the new model */
        apr_atomic_inc64(&shared->model_gen);
        free(obs);
    }
    shared->last = now;
    publish(c);
    record(c, v, now);
    apr_atomic_set32(&shared->sampler_pid, (apr_uint32_t)getpid());
    /* when the reading ended: one that blocked (a FIFO) is not old */
    apr_atomic_set64(&shared->sampled, (apr_uint64_t)apr_time_now());
    apr_atomic_set32(&shared->stale_logged, 0);
    if (c->limited != was_limited) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, monitor->s, ADFLOGNO(00001)
                     "CPU load %.1f%%: compression %s", c->raw,
                     c->limited ? "paused (above the CPU limit)"
                                : "resumed");
    }
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, monitor->s,
                 "load sample %.1f%% (compression %.1f%%), smoothed %.1f%%, "
                 "budget %.3g ns/byte%s, slow share %.2f (pid %"
                 APR_PID_T_FMT ")", v, c->spent, c->ema, c->budget,
                 c->limited ? ", limited" : "", c->slow_share, getpid());
}

/* Sample if an interval has passed since the last attempt and nobody is
 * at it; costs one atomic read otherwise. */
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
    apr_uint64_t was = apr_atomic_read64(&shared->lease);
    apr_uint64_t mine = (apr_uint64_t)ms << 32 | (apr_uint32_t)getpid();
    /* Signed: a lease taken after this thread read the clock is fresh. */
    apr_int32_t age = (apr_int32_t)(ms - (apr_uint32_t)(was >> 32));

    if (was && (age < LEASE_STALE
                || (age < LEASE_HELD_MAX && alive((pid_t)(apr_uint32_t)was)))) {
        return 0;
    }
    return apr_atomic_cas64(&shared->lease, mine, was) == was ? mine : 0;
}

static void lease_give(apr_uint64_t mine)
{
    apr_atomic_cas64(&shared->lease, 0, mine);     /* unless taken over */
}

static void maybe_sample(apr_time_t now)
{
    apr_interval_time_t iv = apr_atomic_read32(&shared->hist_next)
                             < ADF_FAST_SAMPLES ? monitor->interval / 4
                                                : monitor->interval;
    /* A watchdog tick may come a little early: 90 % of the interval. */
    apr_interval_time_t due = iv - iv / 10;
    apr_uint64_t mine;

    if (now - (apr_time_t)apr_atomic_read64(&shared->attempted) < due
        || apr_atomic_read32(&shared->generation) != monitor->generation
        || !(mine = lease_take(now))) {
        return;
    }
    if (now - (apr_time_t)apr_atomic_read64(&shared->attempted) >= due) {
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

    if (age <= 2 * monitor->interval) {
        return 0;
    }
    held = apr_atomic_read64(&shared->lease);
    if (held && !apr_atomic_read32(&shared->lost)) {
        /* signed, as in lease_take: a lease taken after now is 0 old */
        ms = (apr_int32_t)((apr_uint32_t)apr_time_as_msec(now)
                           - (apr_uint32_t)(held >> 32));
        if (ms < LEASE_BUSY && ms < apr_time_as_msec(monitor->interval)) {
            return 0;
        }
    }
    /* Again: the sampler writes sampled before it gives the lease back,
     * so a lease found free may follow a fresh sample. */
    return now - (apr_time_t)apr_atomic_read64(&shared->sampled)
           > 2 * monitor->interval;
}

void adf_shm_view(adf_load_view_t *v)
{
    apr_time_t now;

    if (!shared || !monitor) {
        memset(v, 0, sizeof(*v));
        v->raw = v->ema = -1;
        v->effort = 1;
        v->budget = v->top = 1e9;   /* no controller: the top rung */
        return;
    }
    now = apr_time_now();
    maybe_sample(now);
    v->raw = unscaled(apr_atomic_read32(&shared->raw));
    v->ema = unscaled(apr_atomic_read32(&shared->ema));
    v->budget = double_of(apr_atomic_read64(&shared->budget));
    v->limited = (int)apr_atomic_read32(&shared->limited);
    v->effort = v->limited ? 0 : double_of(apr_atomic_read64(&shared->effort));
    v->model = &shared->model;
    /* + 1: never 0, which says "do not memoize" */
    v->model_gen = apr_atomic_read64(&shared->model_gen) + 1;
    v->top = shared->control.top;
    v->age = now - (apr_time_t)apr_atomic_read64(&shared->sampled);
    if (v->age < 0) {
        v->age = 0;     /* sampled here, after now was read */
    }
    if (!apr_atomic_read32(&shared->hist_next) && !monitor->conf.fixed) {
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
        if (!apr_atomic_cas32(&shared->stale_logged, 1, 0)) {
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, monitor->s,
                         ADFLOGNO(00014) "the load signal is %" APR_TIME_T_FMT
                         " ms old (interval %" APR_TIME_T_FMT " ms): "
                         "responses use the lowest level until it is fresh",
                         apr_time_as_msec(v->age),
                         apr_time_as_msec(monitor->interval));
        }
    }
}

void adf_shm_idle_view(adf_idle_view_t *v)
{
    double raw, ema;

    if (!shared || !monitor) {
        v->load = -1;
        v->stale = 1;
        v->idle_below = 0;
        v->capacity = 1;
        return;
    }
    /* as the controller sees it: a rise counts at once */
    raw = unscaled(apr_atomic_read32(&shared->raw));
    ema = unscaled(apr_atomic_read32(&shared->ema));
    v->load = raw > ema ? raw : ema;
    /* the plain age: the cache worker acts on no sample under way */
    v->stale = apr_time_now()
               - (apr_time_t)apr_atomic_read64(&shared->sampled)
               > 2 * monitor->interval;
    v->idle_below = adf_control_idle_below(&monitor->conf);
    v->capacity = adf_sampler_capacity(monitor->sampler);
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

void adf_shm_count_eligible(apr_off_t len, int slow)
{
    if (!shared) {
        return;
    }
    if (len < 0) {
        /* not known, and not compressed: as large as the average */
        apr_uint64_t n = apr_atomic_read64(&shared->eligible_n);
        len = n ? (apr_off_t)(apr_atomic_read64(&shared->eligible) / n) : 0;
    }
    apr_atomic_add64(&shared->eligible, (apr_uint64_t)len);
    apr_atomic_inc64(&shared->eligible_n);
    if (slow >= 0) {
        apr_atomic_add64(&shared->eligible_asked, (apr_uint64_t)len);
    }
    if (slow > 0) {
        apr_atomic_add64(&shared->eligible_slow, (apr_uint64_t)len);
    }
}

void adf_shm_count_rung(adf_coding_e c, int level, int whole, apr_off_t in,
                        apr_off_t out, apr_uint64_t ns)
{
    adf_acc_t *a;

    if (!shared || level < 0 || level >= ADF_NLEVELS) {
        return;
    }
    a = &shared->acc[c][level][whole ? 1 : 0];
    apr_atomic_add64(&a->bytes_in, (apr_uint64_t)in);
    apr_atomic_add64(&a->bytes_out, (apr_uint64_t)out);
    if (in < ADF_LEARN_BODY) {
        return;
    }
    apr_atomic_add64(&a->learn_in, (apr_uint64_t)in);
    apr_atomic_add64(&a->learn_out, (apr_uint64_t)out);
    apr_atomic_inc64(&a->learn_n);
    if (ns) {
        apr_atomic_add64(&a->timed_bytes, (apr_uint64_t)in);
        apr_atomic_add64(&a->timed_ns, ns);
        apr_atomic_inc64(&a->timed_n);
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
    /* What a response decided now would see: due samples are taken. */
    adf_shm_view(&st->load);
    if (!shared || !monitor) {
        return 0;
    }
    st->source = adf_sampler_describe(monitor->sampler);
    st->signal_error = shared->lost ? shared->lost_why : NULL;
    st->interval = monitor->interval;
    st->conf = monitor->conf;
    st->started = shared->started;
    st->sampler_pid = apr_atomic_read32(&shared->sampler_pid);
    st->own = double_of(apr_atomic_read64(&shared->own_pct));
    st->spent = shared->control.spent;
    st->top = shared->control.top;
    st->slow_share = shared->control.slow_share;
    st->egress = apr_atomic_read64(&shared->egress);
    st->model = shared->model;
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
    st->samples = next;
    n = next < ADF_HISTORY ? next : ADF_HISTORY;
    for (i = 0; i < n; i++) {
        st->history[i] = shared->hist[(next - n + i) % ADF_HISTORY];
    }
    st->nhistory = (int)n;
    return 1;
}

static apr_status_t tick(int state, void *data, apr_pool_t *pool)
{
    if (state == AP_WATCHDOG_STATE_RUNNING && shared && monitor) {
        maybe_sample(apr_time_now());
    }
    if (state == AP_WATCHDOG_STATE_RUNNING) {
        /* this child's coder memory, where it has compressed nothing for
         * a while (adf_codec_pool.c) */
        adf_codec_pool_trim(ADF_CODEC_IDLE_TRIM);
    }
    return APR_SUCCESS;
}

void adf_shm_count_egress(apr_off_t bytes)
{
    if (shared && bytes > 0) {
        apr_atomic_add64(&shared->egress, (apr_uint64_t)bytes);
    }
}

int adf_shm_watchdog_need(server_rec *s, const char *name, int parent,
                          int singleton)
{
    return !parent && !strcmp(name, ADF_WATCHDOG_NAME) ? OK : DECLINED;
}

static apr_status_t forget_monitor(void *data)
{
    monitor = NULL;
    return APR_SUCCESS;
}

/* The segment, kept across restarts in retained data; cleared unless
 * this is a graceful restart. */
static adf_shared_t *attach(server_rec *s, const adf_control_conf_t *conf)
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
    if (!(shared = attach(s, &m->conf))) {
        return OK;
    }
    /* Defensive: no process keeps a memo into a new configuration
     * (children are forked anew), but nothing memoized may outlive it. */
    apr_atomic_inc64(&shared->model_gen);
    if (m->conf.fixed) {
        /* no signal to wait for (also after a graceful restart from one) */
        shared->control.top = adf_control_top(&shared->model, &m->conf);
        shared->control.budget = shared->control.top;
        shared->control.limited = 0;
        publish(&shared->control);
    }
    m->interval = adf_conf_interval(sc);
    m->generation = (apr_uint32_t)ap_state_query(AP_SQ_CONFIG_GEN);
    src = adf_conf_source(sc, &path);
    m->sampler = adf_sampler_create(pconf, src, path, "", &warning);
    monitor = m;
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
    apr_atomic_set32(&shared->generation, m->generation);
    shared->lost = err != NULL;
    apr_cpystrn(shared->lost_why, err ? err : "", sizeof(shared->lost_why));
    if (adf_sampler_read(m->sampler, apr_time_now(), &shared->delta, &ls)
        == 0 && ls.busy < 0) {
        apr_atomic_set64(&shared->attempted, (apr_uint64_t)apr_time_now());
    }
    if (!shared->sampled) {
        /* Nothing sampled yet: the age counts from the start. */
        apr_atomic_set64(&shared->sampled, (apr_uint64_t)apr_time_now());
        publish(&shared->control);
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

