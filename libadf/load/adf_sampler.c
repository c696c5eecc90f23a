/* The load sampler; see adf_sampler.h.  Every path is built once, at
 * creation: a read allocates nothing, however long the server runs. */
#include "adf_sampler.h"

#include <apr_strings.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define READ_MAX (512 * 1024)

struct adf_sampler_t {
    adf_source_e src;           /* as resolved: never AUTO */
    const char *root;
    const char *file;           /* file source */
    const char *stat;           /* /proc/stat */
    adf_cpuset_t cpus;          /* CPUs this process may run on */
    int ncpus;
    /* cgroup: usage file and kind, and the capacity in CPUs */
    const char *cg_usage;
    int cg_v2;
    double cg_cpus;
    const char *psi;            /* pressure file: the source or the brake */
    const char *what;
    char err[256];
    char *buf;
};

/* Read a whole (pseudo-)file into s->buf; NULL when unreadable, with the
 * reason in s->err.  Plain system calls, no pool. */
static const char *slurp(adf_sampler_t *s, const char *path)
{
    apr_size_t total = 0;
    ssize_t n = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        snprintf(s->err, sizeof(s->err), "%s: %s", path, strerror(errno));
        return NULL;
    }
    while (total < READ_MAX - 1
           && (n = read(fd, s->buf + total, READ_MAX - 1 - total)) > 0) {
        total += (apr_size_t)n;
    }
    if (n < 0) {
        snprintf(s->err, sizeof(s->err), "%s: %s", path, strerror(errno));
    }
    close(fd);
    if (n < 0) {
        return NULL;
    }
    s->buf[total] = '\0';
    return s->buf;
}

static const char *bad(adf_sampler_t *s, const char *path)
{
    snprintf(s->err, sizeof(s->err), "%s: not in the expected format", path);
    return NULL;
}

static const char *in_root(apr_pool_t *p, adf_sampler_t *s, const char *path)
{
    return apr_pstrcat(p, s->root, path, NULL);
}

static int readable(adf_sampler_t *s, const char *path)
{
    return slurp(s, path) != NULL;
}

/* Find this process's cgroup directory and its quota.  Returns 0 when a
 * usage file was found. */
static int find_cgroup(apr_pool_t *p, adf_sampler_t *s)
{
    const char *text = slurp(s, in_root(p, s, "/proc/self/cgroup"));
    char *path;
    int v2;

    if (!text || adf_cgroup_self(p, text, "cpuacct", &path, &v2)) {
        return -1;
    }
    if (v2) {
        const char *dirs[2];
        int i;

        dirs[0] = in_root(p, s, apr_pstrcat(p, "/sys/fs/cgroup", path, NULL));
        dirs[1] = in_root(p, s, "/sys/fs/cgroup");     /* namespaced view */
        for (i = 0; i < 2; i++) {
            const char *usage = apr_pstrcat(p, dirs[i], "/cpu.stat", NULL);
            const char *t;
            apr_uint64_t u;
            double q = 0;

            if (!(t = slurp(s, usage)) || adf_cgroup2_usage(t, &u)) {
                continue;
            }
            s->cg_usage = usage;
            s->cg_v2 = 1;
            t = slurp(s, apr_pstrcat(p, dirs[i], "/cpu.max", NULL));
            if (t && !adf_cgroup2_max(t, &q)) {
                s->cg_cpus = q;
            }
            t = apr_pstrcat(p, dirs[i], "/cpu.pressure", NULL);
            if (readable(s, t)) {
                s->psi = t;
            }
            return 0;
        }
    }
    else {
        static const char *const mounts[] = {
            "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuacct",
            "/sys/fs/cgroup/cpu"
        };
        int i, j;

        for (j = 0; j < 2; j++) {
            for (i = 0; i < 3; i++) {
                const char *dir = in_root(p, s, apr_pstrcat(p, mounts[i],
                                                            j ? "" : path,
                                                            NULL));
                const char *usage = apr_pstrcat(p, dir, "/cpuacct.usage",
                                                NULL);
                const char *t, *q, *per;
                apr_uint64_t u;

                if (!(t = slurp(s, usage)) || adf_cgroup1_usage(t, &u)) {
                    continue;
                }
                s->cg_usage = usage;
                s->cg_v2 = 0;
                q = slurp(s, apr_pstrcat(p, dir, "/cpu.cfs_quota_us", NULL));
                q = q ? apr_pstrdup(p, q) : NULL;
                per = slurp(s, apr_pstrcat(p, dir, "/cpu.cfs_period_us",
                                           NULL));
                if (q && per) {
                    adf_cgroup1_quota(q, per, &s->cg_cpus);
                }
                return 0;
            }
        }
    }
    return -1;
}

adf_sampler_t *adf_sampler_create(apr_pool_t *p, adf_source_e src,
                                  const char *path, const char *root,
                                  const char **warning)
{
    adf_sampler_t *s = apr_pcalloc(p, sizeof(*s));
    const char *t, *proc_psi;
    adf_cpu_times_t ct;
    int cg;

    s->root = root ? root : "";
    s->buf = apr_palloc(p, READ_MAX);
    s->stat = in_root(p, s, "/proc/stat");
    proc_psi = in_root(p, s, "/proc/pressure/cpu");
    *warning = NULL;

    t = slurp(s, in_root(p, s, "/proc/self/status"));
    if (!t || adf_cpuset_from_status(t, &s->cpus)) {
        memset(&s->cpus, 0xff, sizeof(s->cpus));
    }
    s->ncpus = adf_cpuset_count(&s->cpus);

    if (src == ADF_SRC_FILE) {
        s->src = src;
        s->file = path;
        s->what = apr_psprintf(p, "file %s", path);
        if (!readable(s, path)) {
            *warning = apr_psprintf(p, "load file %s is not readable (yet)",
                                    path);
        }
        return s;
    }
    if (src == ADF_SRC_NONE) {
        s->src = src;
        s->what = "none (fixed levels: the top of each range)";
        return s;
    }
    if (src == ADF_SRC_PSI) {
        s->src = src;
        cg = find_cgroup(p, s);
        if (cg || !s->psi) {
            s->psi = proc_psi;
        }
        s->what = apr_psprintf(p, "psi %s", s->psi);
        if (!readable(s, s->psi)) {
            *warning = apr_psprintf(p, "CPU pressure (PSI) is not readable "
                                    "at %s", s->psi);
        }
        return s;
    }

    cg = find_cgroup(p, s);
    if (src == ADF_SRC_CGROUP || (src == ADF_SRC_AUTO && !cg
                                  && s->cg_cpus > 0)) {
        s->src = ADF_SRC_CGROUP;
        if (cg) {
            *warning = "no cgroup CPU accounting found";
        }
        if (s->cg_cpus <= 0) {
            s->cg_cpus = s->ncpus;      /* no quota: the CPUs we may use */
        }
        s->what = apr_psprintf(p, "cgroup %s (%s, %.2f CPUs)",
                               s->cg_usage ? s->cg_usage : "(none)",
                               s->cg_v2 ? "v2" : "v1", s->cg_cpus);
    }
    else {
        s->src = ADF_SRC_CPUS;
        t = slurp(s, s->stat);
        if (!t || adf_proc_stat_parse(t, &s->cpus, &ct)) {
            *warning = "/proc/stat has no readable line for the CPUs this "
                       "server may run on";
        }
        s->what = apr_psprintf(p, "cpus (%d allowed)", s->ncpus);
    }
    if (src == ADF_SRC_AUTO) {
        /* The brake must be about this server: its own cgroup's pressure,
         * or the system's when the server may use every CPU.  Tasks
         * waiting on CPUs the server never uses (a pinned server beside
         * a busy neighbour) are not its load. */
        if (!s->psi && !(s->src == ADF_SRC_CGROUP && s->cg_cpus < s->ncpus)
            && (t = slurp(s, s->stat)) && adf_proc_stat_ncpus(t) == s->ncpus
            && readable(s, proc_psi)) {
            s->psi = proc_psi;
        }
        if (s->psi) {
            s->what = apr_pstrcat(p, s->what, " + psi brake", NULL);
        }
    }
    else {
        s->psi = NULL;
    }
    return s;
}

double adf_sampler_capacity(const adf_sampler_t *s)
{
    return s->src == ADF_SRC_CGROUP && s->cg_cpus > 0 ? s->cg_cpus
                                                     : s->ncpus;
}

const char *adf_sampler_describe(const adf_sampler_t *s)
{
    return s->what;
}

int adf_sampler_pid_cpu(adf_sampler_t *s, apr_uint64_t pid,
                        apr_uint64_t *ticks)
{
    char path[64];
    const char *t;

    snprintf(path, sizeof(path), "/proc/%" APR_UINT64_T_FMT "/stat", pid);
    if (*s->root) {
        return -1;      /* a fixture tree has no processes */
    }
    return (t = slurp(s, path)) ? adf_proc_pid_cpu(t, ticks) : -1;
}

const char *adf_sampler_error(const adf_sampler_t *s)
{
    return s->err;
}

const char *adf_sampler_probe(adf_sampler_t *s, apr_pool_t *p)
{
    const char *files[3];
    int i, n = 0;

    switch (s->src) {
    case ADF_SRC_FILE:
        files[n++] = s->file;
        break;
    case ADF_SRC_CGROUP:
        if (s->cg_usage) {
            files[n++] = s->cg_usage;
        }
        break;
    case ADF_SRC_PSI:
    case ADF_SRC_NONE:
        break;
    default:
        files[n++] = s->stat;
        break;
    }
    if (s->psi) {
        files[n++] = s->psi;
    }
    for (i = 0; i < n; i++) {
        if (!readable(s, files[i])) {
            return apr_pstrdup(p, s->err);
        }
    }
    return NULL;
}

/* Busy percent from a monotonic (busy, total) pair; -1 on the first call
 * or when the counters went backwards (a cgroup was re-created). */
static double delta(adf_delta_t *prev, apr_uint64_t busy, apr_uint64_t total)
{
    double pct = -1;

    if (prev->have && busy >= prev->busy && total > prev->total) {
        pct = 100.0 * (double)(busy - prev->busy)
              / (double)(total - prev->total);
    }
    prev->have = 1;
    prev->busy = busy;
    prev->total = total;
    return pct > 100 ? 100 : pct;
}

/* The share of the interval some task waited for a CPU, from the pressure
 * file's cumulative "some total": -1 on the first reading. */
static int pressure(adf_sampler_t *s, apr_time_t now, adf_delta_t *prev,
                    double *pct)
{
    const char *t = slurp(s, s->psi);
    apr_uint64_t total;

    *pct = -1;
    if (!t) {
        return -1;
    }
    if (adf_psi_some_total(t, &total)) {
        bad(s, s->psi);
        return -1;
    }
    if (prev->psi_have && total >= prev->psi_total
        && now > prev->psi_time) {
        *pct = 100.0 * (double)(total - prev->psi_total)
               / (double)(now - prev->psi_time);
        *pct = *pct > 100 ? 100 : *pct;
    }
    prev->psi_have = 1;
    prev->psi_total = total;
    prev->psi_time = now;
    return 0;
}

int adf_sampler_read(adf_sampler_t *s, apr_time_t now, adf_delta_t *prev,
                     adf_load_sample_t *out)
{
    const char *t;
    double pct;

    out->busy = out->pressure = -1;
    switch (s->src) {
    case ADF_SRC_NONE:
        out->busy = 0;
        return 0;
    case ADF_SRC_FILE:
        if (!(t = slurp(s, s->file))) {
            return -1;
        }
        if (adf_load_file_parse(t, &out->busy)) {
            bad(s, s->file);
            return -1;
        }
        return 0;
    case ADF_SRC_PSI:
        return pressure(s, now, prev, &out->busy) ? -1 : 0;
    case ADF_SRC_CGROUP: {
        apr_uint64_t usage;
        int failed;

        if (!s->cg_usage) {
            snprintf(s->err, sizeof(s->err), "no cgroup CPU accounting");
            return -1;
        }
        if (!(t = slurp(s, s->cg_usage))) {
            return -1;
        }
        failed = s->cg_v2 ? adf_cgroup2_usage(t, &usage)
                          : adf_cgroup1_usage(t, &usage);
        if (failed) {
            bad(s, s->cg_usage);
            return -1;
        }
        if (!s->cg_v2) {
            usage /= 1000;      /* ns -> us */
        }
        /* Capacity over the interval is wall time times the quota. */
        pct = delta(prev, usage, (apr_uint64_t)((double)now * s->cg_cpus));
        break;
    }
    default: {
        adf_cpu_times_t ct;

        if (!(t = slurp(s, s->stat))) {
            return -1;
        }
        if (adf_proc_stat_parse(t, &s->cpus, &ct)) {
            bad(s, s->stat);
            return -1;
        }
        pct = delta(prev, ct.busy, ct.total);
        break;
    }
    }
    out->busy = pct;
    /* Pressure shows the demand a saturated CPU cannot show as usage. */
    if (s->psi) {
        pressure(s, now, prev, &out->pressure);
    }
    return 0;
}
