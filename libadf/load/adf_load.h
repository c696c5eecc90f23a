/* Load signals: parsers for the kernel's text files (adf_sampler.h reads
 * them).  Pure: no httpd, no I/O; what the fuzzer covers.
 *
 * Every parser takes the file's text and returns 0 on success, -1 when
 * the text is not what it should be (then its outputs are untouched).
 */
#ifndef ADF_LOAD_H
#define ADF_LOAD_H

#include <apr_pools.h>
#include <apr_time.h>

#define ADF_MAX_CPUS 1024

typedef struct {
    apr_uint64_t bits[ADF_MAX_CPUS / 64];
} adf_cpuset_t;

typedef struct {
    apr_uint64_t busy;  /* jiffies: user nice system irq softirq steal */
    apr_uint64_t total;         /* busy + idle + iowait */
} adf_cpu_times_t;

/* "0-3,8,10-11" (a cpuset list, as in Cpus_allowed_list or cpuset.cpus). */
int adf_cpuset_parse(const char *list, adf_cpuset_t *set);
int adf_cpuset_count(const adf_cpuset_t *set);
/* Find Cpus_allowed_list in /proc/<pid>/status text. */
int adf_cpuset_from_status(const char *status, adf_cpuset_t *set);

/* Sum the per-CPU lines of /proc/stat over the CPUs in set (NULL: all).
 * Returns -1 also when no CPU of the set appears. */
int adf_proc_stat_parse(const char *text, const adf_cpuset_t *set,
                        adf_cpu_times_t *out);

/* A process's CPU time from /proc/PID/stat: utime + stime, in clock
 * ticks. */
int adf_proc_pid_cpu(const char *text, apr_uint64_t *ticks);

/* How many per-CPU lines /proc/stat has (the online CPUs); 0 if none. */
int adf_proc_stat_ncpus(const char *text);

/* cgroup v2 cpu.stat: usage_usec. */
int adf_cgroup2_usage(const char *text, apr_uint64_t *usec);
/* cgroup v2 cpu.max "QUOTA PERIOD" or "max PERIOD": *cpus = quota/period,
 * 0 when unlimited. */
int adf_cgroup2_max(const char *text, double *cpus);
/* cgroup v1 cfs quota and period (quota -1: unlimited -> *cpus = 0). */
int adf_cgroup1_quota(const char *quota, const char *period, double *cpus);
/* cgroup v1 cpuacct.usage: a single unsigned number, in ns. */
int adf_cgroup1_usage(const char *text, apr_uint64_t *ns);
/* PSI "some ... total=N": microseconds some task waited for a CPU, since
 * boot (per-interval deltas give a fresh share; avg10 lags ten seconds). */
int adf_psi_some_total(const char *text, apr_uint64_t *usec);
/* An operator's load file: one number 0..100, optional fraction, optional
 * surrounding white space. */
int adf_load_file_parse(const char *text, double *pct);
/* The cgroup path of this process from /proc/self/cgroup text: the v2
 * entry ("0::/path") if there is one, else the v1 entry whose controller
 * list names `controller`.  *v2 tells which; *path is allocated from p. */
int adf_cgroup_self(apr_pool_t *p, const char *text, const char *controller,
                    char **path, int *v2);

typedef enum {
    ADF_SRC_AUTO,
    ADF_SRC_CPUS,
    ADF_SRC_CGROUP,
    ADF_SRC_PSI,
    ADF_SRC_FILE,
    ADF_SRC_NONE                /* no signal: fixed levels */
} adf_source_e;

/* AdaptiveDeflateLoadSource's value: "auto", "cpus", "cgroup", "psi",
 * "file:PATH" or "none".  A directive value, so adf_parse.h's convention: NULL, or
 * an error message from p. */
const char *adf_parse_source(apr_pool_t *p, const char *arg,
                             adf_source_e *src, const char **path);

#endif /* ADF_LOAD_H */
