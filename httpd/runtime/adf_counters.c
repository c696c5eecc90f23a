/* The counters every child adds to (one response's decision, its bytes,
 * a rung's bytes and CPU, ...) and their snapshot for the status page:
 * atomic adds to the shared segment (adf_segment.h), which keeps them
 * over graceful restarts.  Without a segment they count nothing. */
#include "adf_counters.h"
#include "adf_segment.h"

#include <apr_atomic.h>
#include <string.h>

void adf_shm_count_decision(const adf_decision_t *d)
{
    if (!adf_shared) {
        return;
    }
    apr_atomic_inc64(&adf_shared->responses);
    apr_atomic_inc64(&adf_shared->reasons[d->reason]);
    if (d->coding != ADF_IDENTITY) {
        apr_atomic_inc64(&adf_shared->coded[d->coding]);
        if (d->level >= 0 && d->level < ADF_NLEVELS) {
            apr_atomic_inc64(&adf_shared->levels[d->coding][d->level]);
        }
    }
}

void adf_shm_count_bytes(adf_coding_e c, apr_off_t in, apr_off_t out)
{
    if (adf_shared) {
        apr_atomic_add64(&adf_shared->bytes_in[c], (apr_uint64_t)in);
        apr_atomic_add64(&adf_shared->bytes_out[c], (apr_uint64_t)out);
    }
}

void adf_shm_count_sibling(adf_coding_e c)
{
    if (adf_shared) {
        apr_atomic_inc64(&adf_shared->responses);
        apr_atomic_inc64(&adf_shared->reasons[ADF_R_PRECOMPRESSED]);
        apr_atomic_inc64(&adf_shared->siblings[c]);
    }
}

void adf_shm_count_eligible(apr_off_t len, int slow)
{
    if (!adf_shared) {
        return;
    }
    if (len < 0) {
        /* not known, and not compressed: as large as the average */
        apr_uint64_t n = apr_atomic_read64(&adf_shared->eligible_n);
        len = n ? (apr_off_t)(apr_atomic_read64(&adf_shared->eligible) / n)
                : 0;
    }
    apr_atomic_add64(&adf_shared->eligible, (apr_uint64_t)len);
    apr_atomic_inc64(&adf_shared->eligible_n);
    if (slow >= 0) {
        apr_atomic_add64(&adf_shared->eligible_asked, (apr_uint64_t)len);
    }
    if (slow > 0) {
        apr_atomic_add64(&adf_shared->eligible_slow, (apr_uint64_t)len);
    }
}

void adf_shm_count_rung(adf_coding_e c, int level, int whole, apr_off_t in,
                        apr_off_t out, apr_uint64_t ns)
{
    adf_acc_t *a;

    if (!adf_shared || level < 0 || level >= ADF_NLEVELS) {
        return;
    }
    a = &adf_shared->acc[c][level][whole ? 1 : 0];
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
    if (adf_shared) {
        apr_atomic_inc64(&adf_shared->stale);
    }
}

void adf_shm_count_dict(int hit, apr_off_t saved)
{
    if (!adf_shared) {
        return;
    }
    if (!hit) {
        apr_atomic_inc64(&adf_shared->dict_misses);
        return;
    }
    apr_atomic_inc64(&adf_shared->dict_hits);
    if (saved > 0) {
        apr_atomic_add64(&adf_shared->dict_saved, (apr_uint64_t)saved);
    }
}

void adf_shm_count_egress(apr_off_t bytes)
{
    if (adf_shared && bytes > 0) {
        apr_atomic_add64(&adf_shared->egress, (apr_uint64_t)bytes);
    }
}

int adf_shm_stats(adf_stats_t *st)
{
    apr_uint32_t next, n, i;
    int c, l;

    memset(st, 0, sizeof(*st));
    /* What a response decided now would see: due samples are taken. */
    adf_shm_view(&st->load);
    if (!adf_shared || !adf_monitor) {
        return 0;
    }
    st->source = adf_sampler_describe(adf_monitor->sampler);
    st->signal_error = adf_shared->lost ? adf_shared->lost_why : NULL;
    st->interval = adf_monitor->interval;
    st->conf = adf_monitor->conf;
    st->started = adf_shared->started;
    st->sampler_pid = apr_atomic_read32(&adf_shared->sampler_pid);
    st->own = double_of(apr_atomic_read64(&adf_shared->own_pct));
    st->spent = adf_shared->control.spent;
    st->top = adf_shared->control.top;
    st->slow_share = adf_shared->control.slow_share;
    st->goal = adf_shared->control.goal;
    st->predicted = adf_shared->control.predicted;
    st->egress = apr_atomic_read64(&adf_shared->egress);
    st->model = adf_shared->model;
    st->responses = apr_atomic_read64(&adf_shared->responses);
    st->stale = apr_atomic_read64(&adf_shared->stale);
    st->dict_hits = apr_atomic_read64(&adf_shared->dict_hits);
    st->dict_misses = apr_atomic_read64(&adf_shared->dict_misses);
    st->dict_saved = apr_atomic_read64(&adf_shared->dict_saved);
    for (i = 0; i < ADF_NREASONS; i++) {
        st->reasons[i] = apr_atomic_read64(&adf_shared->reasons[i]);
    }
    for (c = 0; c < ADF_NCODINGS; c++) {
        st->coded[c] = apr_atomic_read64(&adf_shared->coded[c]);
        st->bytes_in[c] = apr_atomic_read64(&adf_shared->bytes_in[c]);
        st->bytes_out[c] = apr_atomic_read64(&adf_shared->bytes_out[c]);
        st->siblings[c] = apr_atomic_read64(&adf_shared->siblings[c]);
        for (l = 0; l < ADF_NLEVELS; l++) {
            st->levels[c][l] = apr_atomic_read64(&adf_shared->levels[c][l]);
        }
    }
    next = apr_atomic_read32(&adf_shared->hist_next);
    st->samples = next;
    n = next < ADF_HISTORY ? next : ADF_HISTORY;
    for (i = 0; i < n; i++) {
        st->history[i] = adf_shared->hist[(next - n + i) % ADF_HISTORY];
    }
    st->nhistory = (int)n;
    return 1;
}
