/* The load sampler: reads the configured source (per-CPU /proc/stat,
 * cgroup accounting, PSI or an operator's file) and turns successive
 * readings into a busy percentage.  No httpd; plain file reads.
 *
 * A sampler object belongs to one process (its paths and read buffer);
 * the previous reading of a delta source is kept apart (adf_delta_t) so
 * that the processes of a server can take turns sampling one shared
 * series.  Callers serialise reads of one sampler object.
 */
#ifndef ADF_SAMPLER_H
#define ADF_SAMPLER_H

#include "adf_load.h"
#include <apr_time.h>

typedef struct adf_sampler_t adf_sampler_t;

/* The previous reading of a delta source (/proc/stat, cgroup usage) and
 * of the pressure file. */
typedef struct {
    int have;
    apr_uint64_t busy, total;
    int psi_have;
    apr_uint64_t psi_total;     /* PSI "some" microseconds */
    apr_time_t psi_time;
} adf_delta_t;

typedef struct {
    double busy;        /* percent of the capacity we may use; -1: none yet */
    double pressure;    /* PSI "some" over the interval, percent; -1: none */
} adf_load_sample_t;

/* Create a sampler.  root prefixes every /proc and /sys path (tests use a
 * fixture tree; "" in production).  Never fails: *warning is set (from p)
 * when the source cannot be read now; reads then fail until it can. */
adf_sampler_t *adf_sampler_create(apr_pool_t *p, adf_source_e src,
                                  const char *path, const char *root,
                                  const char **warning);

/* How many CPUs the load is a percentage of (the allowed CPUs, or the
 * cgroup's quota). */
double adf_sampler_capacity(const adf_sampler_t *s);

/* What the sampler reads, for logs ("cpus (2 allowed) + psi brake"). */
const char *adf_sampler_describe(const adf_sampler_t *s);

/* Can every file the sampler reads be read now?  NULL, or what failed
 * ("/x/load: Permission denied"), allocated from p. */
const char *adf_sampler_probe(adf_sampler_t *s, apr_pool_t *p);

/* Take a reading at time now against *prev (updated).  0 on success
 * (out->busy is -1 on the first reading of a delta source, or when the
 * counters went backwards), -1 when the source could not be read: then
 * adf_sampler_error tells why.  Allocates nothing. */
int adf_sampler_read(adf_sampler_t *s, apr_time_t now, adf_delta_t *prev,
                     adf_load_sample_t *out);

/* A process's CPU time (utime + stime, clock ticks); -1 when it is gone.
 * Allocates nothing. */
int adf_sampler_pid_cpu(adf_sampler_t *s, apr_uint64_t pid,
                        apr_uint64_t *ticks);

/* Why the last read failed ("/proc/stat: No such file or directory"). */
const char *adf_sampler_error(const adf_sampler_t *s);

#endif /* ADF_SAMPLER_H */
