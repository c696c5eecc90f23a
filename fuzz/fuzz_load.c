/* libFuzzer: the /proc/stat, cpuset, cgroup v1/v2, PSI and load-file
 * parsers on arbitrary text.  Oracle: accepted values are sane. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_input.h"
#include "adf_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    char *s;
    adf_cpuset_t set;
    adf_cpu_times_t ct;
    apr_uint64_t u;
    double d;
    char *path;
    int v2;

    s = fuzz_string(&p, data, size);
    if (!adf_cpuset_parse(s, &set) && adf_cpuset_count(&set) < 1) {
        abort();
    }
    adf_cpuset_from_status(s, &set);
    if (!adf_proc_stat_parse(s, NULL, &ct) && ct.busy > ct.total) {
        abort();
    }
    adf_proc_stat_parse(s, &set, &ct);
    adf_cgroup2_usage(s, &u);
    if (!adf_cgroup2_max(s, &d) && d < 0) {
        abort();
    }
    if (!adf_cgroup1_quota(s, s, &d) && d < 0) {
        abort();
    }
    adf_cgroup1_usage(s, &u);
    adf_psi_some_total(s, &u);
    adf_proc_pid_cpu(s, &u);
    adf_proc_stat_ncpus(s);
    if (!adf_load_file_parse(s, &d) && (d < 0 || d > 100)) {
        abort();
    }
    if (!adf_cgroup_self(p, s, "cpuacct", &path, &v2) && path[0] != '/') {
        abort();
    }
    apr_pool_destroy(p);
    return 0;
}
