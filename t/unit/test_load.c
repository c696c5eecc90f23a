/* Load source parsers on fixture text (good and malformed), and the
 * sampler on a fake /proc and /sys tree. */
#include "adf_test.h"
#include <malloc.h>
#include <apr_general.h>
#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "adf_sampler.h"

static const char proc_stat[] =
    "cpu  200 0 100 700 0 0 0 0 0 0\n"
    "cpu0 100 0 50 300 50 0 0 0 0 0\n"
    "cpu1 100 0 50 400 0 0 0 0 0 0\n"
    "cpu2 10 10 10 10 10 10 10 10 5 5\n"
    "intr 12345 1 2 3\n"
    "ctxt 999\n";

START_TEST(cpuset)
{
    adf_cpuset_t s;

    ck_assert_int_eq(adf_cpuset_parse("0-3,8,10-11\n", &s), 0);
    ck_assert_int_eq(adf_cpuset_count(&s), 7);
    ck_assert_int_eq(adf_cpuset_parse("5", &s), 0);
    ck_assert_int_eq(adf_cpuset_count(&s), 1);
    ck_assert_int_eq(adf_cpuset_parse("0-1023", &s), 0);
    ck_assert_int_eq(adf_cpuset_count(&s), 1024);
    ck_assert_int_eq(adf_cpuset_parse("", &s), -1);
    ck_assert_int_eq(adf_cpuset_parse("3-1", &s), -1);
    ck_assert_int_eq(adf_cpuset_parse("0-1024", &s), -1);
    ck_assert_int_eq(adf_cpuset_parse("a", &s), -1);
    ck_assert_int_eq(adf_cpuset_parse("1,,2", &s), -1);
    ck_assert_int_eq(adf_cpuset_parse("1-", &s), -1);
    ck_assert_int_eq(adf_cpuset_from_status(
        "Name:\tapache2\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n", &s), 0);
    ck_assert_int_eq(adf_cpuset_count(&s), 2);
    ck_assert_int_eq(adf_cpuset_from_status("Name: x\n", &s), -1);
}
END_TEST

START_TEST(proc_stat_lines)
{
    apr_uint64_t u;
    adf_cpu_times_t t;
    adf_cpuset_t s;

    ck_assert_int_eq(adf_proc_stat_parse(proc_stat, NULL, &t), 0);
    ck_assert_int_eq(adf_proc_stat_ncpus(proc_stat), 3);
    ck_assert_int_eq(adf_proc_pid_cpu("4242 (apache2) S 1 4242 4242 0 -1 "
                                      "4194624 100 0 0 0 37 5 0 0 20 0 65 0",
                                      &u), 0);
    ck_assert_uint_eq(u, 42);
    /* a command with spaces and parentheses */
    ck_assert_int_eq(adf_proc_pid_cpu("7 (a) b (c)) R 1 1 1 0 -1 0 0 0 0 0 "
                                      "10 20 0", &u), 0);
    ck_assert_uint_eq(u, 30);
    ck_assert_int_eq(adf_proc_pid_cpu("7 (short) R 1 1", &u), -1);
    ck_assert_int_eq(adf_proc_pid_cpu("no parenthesis", &u), -1);
    ck_assert_int_eq(adf_proc_stat_ncpus("cpu  1 2 3\nintr 5\n"), 0);
    /* busy = user nice system irq softirq steal; iowait is idle */
    ck_assert_uint_eq(t.busy, 150 + 150 + 60);
    ck_assert_uint_eq(t.total, 500 + 550 + 80);
    adf_cpuset_parse("1", &s);
    ck_assert_int_eq(adf_proc_stat_parse(proc_stat, &s, &t), 0);
    ck_assert_uint_eq(t.busy, 150);
    ck_assert_uint_eq(t.total, 550);
    /* steal time counts as busy */
    adf_cpuset_parse("2", &s);
    ck_assert_int_eq(adf_proc_stat_parse(proc_stat, &s, &t), 0);
    ck_assert_uint_eq(t.busy, 60);
    adf_cpuset_parse("7", &s);
    ck_assert_int_eq(adf_proc_stat_parse(proc_stat, &s, &t), -1);
    ck_assert_int_eq(adf_proc_stat_parse("cpu0 1 2 3\n", NULL, &t), -1);
    ck_assert_int_eq(adf_proc_stat_parse("", NULL, &t), -1);
    ck_assert_int_eq(adf_proc_stat_parse("cpu0 a b c d e f g h\n", NULL, &t),
                     -1);
    ck_assert_int_eq(adf_proc_stat_parse(
        "cpu0 99999999999999999999999 0 0 0 0 0 0 0\n", NULL, &t), -1);
}
END_TEST

START_TEST(cgroups)
{
    apr_uint64_t u;
    double cpus;

    ck_assert_int_eq(adf_cgroup2_usage("usage_usec 123456\nuser_usec 1\n",
                                       &u), 0);
    ck_assert_uint_eq(u, 123456);
    ck_assert_int_eq(adf_cgroup2_usage("user_usec 1\n", &u), -1);
    ck_assert_int_eq(adf_cgroup2_usage("usage_usec x\n", &u), -1);
    ck_assert_int_eq(adf_cgroup2_max("50000 100000\n", &cpus), 0);
    ck_assert(cpus == 0.5);
    ck_assert_int_eq(adf_cgroup2_max("max 100000\n", &cpus), 0);
    ck_assert(cpus == 0);
    ck_assert_int_eq(adf_cgroup2_max("50000\n", &cpus), -1);
    ck_assert_int_eq(adf_cgroup2_max("50000 0\n", &cpus), -1);
    ck_assert_int_eq(adf_cgroup2_max("lots 100000\n", &cpus), -1);
    ck_assert_int_eq(adf_cgroup1_quota("150000\n", "100000\n", &cpus), 0);
    ck_assert(cpus == 1.5);
    ck_assert_int_eq(adf_cgroup1_quota("-1\n", "100000\n", &cpus), 0);
    ck_assert(cpus == 0);
    ck_assert_int_eq(adf_cgroup1_quota("-2\n", "100000\n", &cpus), -1);
    ck_assert_int_eq(adf_cgroup1_usage("987654321\n", &u), 0);
    ck_assert_uint_eq(u, 987654321);
    ck_assert_int_eq(adf_cgroup1_usage("98x\n", &u), -1);
}
END_TEST

START_TEST(psi_and_file)
{
    apr_uint64_t u;
    double v;

    ck_assert_int_eq(adf_psi_some_total(
        "some avg10=12.34 avg60=1.00 avg300=0.50 total=123456\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &u), 0);
    ck_assert_uint_eq(u, 123456);
    ck_assert_int_eq(adf_psi_some_total("full avg10=1.00 total=5\n", &u),
                     -1);
    ck_assert_int_eq(adf_psi_some_total("some avg10=1.00\ntotal=5\n", &u),
                     -1);
    ck_assert_int_eq(adf_psi_some_total("some total=abc\n", &u), -1);
    ck_assert_int_eq(adf_psi_some_total("some total=12x\n", &u), -1);
    ck_assert_int_eq(adf_load_file_parse("42\n", &v), 0);
    ck_assert(v == 42);
    ck_assert_int_eq(adf_load_file_parse("  7.5  \n", &v), 0);
    ck_assert(v == 7.5);
    ck_assert_int_eq(adf_load_file_parse("100", &v), 0);
    ck_assert_int_eq(adf_load_file_parse("101", &v), -1);
    ck_assert_int_eq(adf_load_file_parse("-1", &v), -1);
    ck_assert_int_eq(adf_load_file_parse("", &v), -1);
    ck_assert_int_eq(adf_load_file_parse("5 5", &v), -1);
}
END_TEST

START_TEST(cgroup_self)
{
    char *path;
    int v2;

    ck_assert_int_eq(adf_cgroup_self(pool, "0::/system.slice/apache2.service\n",
                                     "cpuacct", &path, &v2), 0);
    ck_assert_str_eq(path, "/system.slice/apache2.service");
    ck_assert_int_eq(v2, 1);
    ck_assert_int_eq(adf_cgroup_self(pool, "12:memory:/a\n4:cpu,cpuacct:/web\n",
                                     "cpuacct", &path, &v2), 0);
    ck_assert_str_eq(path, "/web");
    ck_assert_int_eq(v2, 0);
    ck_assert_int_eq(adf_cgroup_self(pool, "12:memory:/a\n", "cpuacct", &path,
                                     &v2), -1);
    ck_assert_int_eq(adf_cgroup_self(pool, "garbage", "cpuacct", &path, &v2),
                     -1);
}
END_TEST

START_TEST(sources)
{
    adf_source_e src;
    const char *path;

    ck_assert_ptr_null(adf_parse_source(pool, "auto", &src, &path));
    ck_assert_int_eq(src, ADF_SRC_AUTO);
    ck_assert_ptr_null(adf_parse_source(pool, "CPUS", &src, &path));
    ck_assert_int_eq(src, ADF_SRC_CPUS);
    ck_assert_ptr_null(adf_parse_source(pool, "file:/x/y", &src, &path));
    ck_assert_int_eq(src, ADF_SRC_FILE);
    ck_assert_str_eq(path, "/x/y");
    ck_assert_ptr_null(adf_parse_source(pool, "None", &src, &path));
    ck_assert_int_eq(src, ADF_SRC_NONE);
    ck_assert_ptr_null(path);
    ck_assert_ptr_nonnull(adf_parse_source(pool, "file:", &src, &path));
    ck_assert_ptr_nonnull(adf_parse_source(pool, "load", &src, &path));
}
END_TEST

/* ---- the sampler on a fake tree ------------------------------------------ */

static char root[64];
static adf_delta_t prev;

/* The reading as the controller combines it (busy + pressure), -1 when
 * there is no value yet, -2 when the source could not be read. */
static double rd(adf_sampler_t *s, apr_time_t now)
{
    adf_load_sample_t ls;

    if (adf_sampler_read(s, now, &prev, &ls)) {
        return -2;
    }
    return ls.busy < 0 ? -1 : ls.busy + (ls.pressure > 0 ? ls.pressure : 0);
}

static void put(const char *rel, const char *text)
{
    char path[512], *slash;
    FILE *f;

    snprintf(path, sizeof(path), "%s%s", root, rel);
    for (slash = strchr(path + strlen(root) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void make_root(void)
{
    memset(&prev, 0, sizeof(prev));
    strcpy(root, "/tmp/adf-load-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    put("/proc/self/status", "Name:\tx\nCpus_allowed_list:\t1\n");
}

START_TEST(sampler_cpus)
{
    adf_sampler_t *s;
    const char *warn;

    make_root();
    put("/proc/self/cgroup", "0::/\n");
    put("/proc/stat", "cpu0 0 0 0 1000 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n");
    s = adf_sampler_create(pool, ADF_SRC_CPUS, NULL, root, &warn);
    ck_assert_ptr_null(warn);
    ck_assert_double_eq(rd(s, 0), -1);   /* first: no delta */
    /* cpu1 (the only allowed CPU) busy 75 of 100; cpu0 fully busy */
    put("/proc/stat", "cpu0 100 0 0 1000 0 0 0 0\ncpu1 50 0 20 1025 0 0 0 5\n");
    ck_assert_double_eq_tol(rd(s, 0), 75.0, 0.01);
    put("/proc/stat", "cpu1 50 0 20 1125 0 0 0 5\n");
    ck_assert_double_eq_tol(rd(s, 0), 0.0, 0.01);
    put("/proc/stat", "garbage\n");
    ck_assert_double_eq(rd(s, 0), -2);
    ck_assert_ptr_nonnull(strstr(adf_sampler_error(s), "expected format"));
}
END_TEST

START_TEST(sampler_cgroup_v2_quota)
{
    adf_sampler_t *s;
    const char *warn;

    make_root();
    put("/proc/self/cgroup", "0::/web\n");
    put("/sys/fs/cgroup/web/cpu.max", "50000 100000\n");
    put("/sys/fs/cgroup/web/cpu.stat", "usage_usec 1000000\n");
    put("/proc/stat", "cpu1 0 0 0 1000 0 0 0 0\n");
    /* auto picks the cgroup because a quota is set */
    s = adf_sampler_create(pool, ADF_SRC_AUTO, NULL, root, &warn);
    ck_assert_ptr_null(warn);
    ck_assert_ptr_nonnull(strstr(adf_sampler_describe(s), "cgroup"));
    ck_assert_double_eq(rd(s, apr_time_from_sec(10)), -1);
    /* 0.5 CPU-seconds used in 1 s under a 0.5 CPU quota: 100 % */
    put("/sys/fs/cgroup/web/cpu.stat", "usage_usec 1500000\n");
    ck_assert_double_eq_tol(rd(s, apr_time_from_sec(11)),
                            100.0, 0.01);
    put("/sys/fs/cgroup/web/cpu.stat", "usage_usec 1625000\n");
    ck_assert_double_eq_tol(rd(s, apr_time_from_sec(12)),
                            25.0, 0.01);
}
END_TEST

START_TEST(sampler_cgroup_v1)
{
    adf_sampler_t *s;
    const char *warn;

    make_root();
    put("/proc/self/cgroup", "3:cpu,cpuacct:/c1\n");
    put("/sys/fs/cgroup/cpu,cpuacct/c1/cpuacct.usage", "0\n");
    put("/sys/fs/cgroup/cpu,cpuacct/c1/cpu.cfs_quota_us", "200000\n");
    put("/sys/fs/cgroup/cpu,cpuacct/c1/cpu.cfs_period_us", "100000\n");
    s = adf_sampler_create(pool, ADF_SRC_AUTO, NULL, root, &warn);
    ck_assert_ptr_null(warn);
    rd(s, apr_time_from_sec(1));
    /* 1 CPU-second (ns) in 1 s of a 2-CPU quota: 50 % */
    put("/sys/fs/cgroup/cpu,cpuacct/c1/cpuacct.usage", "1000000000\n");
    ck_assert_double_eq_tol(rd(s, apr_time_from_sec(2)), 50.0, 0.01);
}
END_TEST

/* The PSI brake is the share of the interval some task waited (deltas of
 * "total"), and only where the pressure is this server's. */
START_TEST(sampler_psi_brake)
{
    adf_sampler_t *s;
    const char *warn;

    /* allowed on every CPU: the system's pressure is ours */
    make_root();
    put("/proc/self/status", "Name:\tx\nCpus_allowed_list:\t0-1\n");
    put("/proc/self/cgroup", "0::/\n");
    put("/proc/stat", "cpu0 0 0 0 1000 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n");
    put("/proc/pressure/cpu", "some avg10=90.00 avg60=0 avg300=0 "
        "total=5000000\nfull avg10=0 avg60=0 avg300=0 total=0\n");
    s = adf_sampler_create(pool, ADF_SRC_AUTO, NULL, root, &warn);
    ck_assert_ptr_null(warn);
    ck_assert_ptr_nonnull(strstr(adf_sampler_describe(s), "psi brake"));
    ck_assert_double_eq(rd(s, apr_time_from_sec(1)), -1);
    /* 100 of 200 jiffies busy, and 0.1 s of waiting in 1 s: 50 + 10 */
    put("/proc/stat", "cpu0 100 0 0 1000 0 0 0 0\ncpu1 0 0 0 1100 0 0 0 0\n");
    put("/proc/pressure/cpu", "some avg10=90.00 avg60=0 avg300=0 "
        "total=5100000\n");
    ck_assert_double_eq_tol(rd(s, apr_time_from_sec(2)), 60.0, 0.01);

    /* pinned to one CPU of two: others' waiting is not our load */
    make_root();
    put("/proc/self/cgroup", "0::/\n");
    put("/proc/stat", "cpu0 0 0 0 1000 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n");
    put("/proc/pressure/cpu", "some avg10=90.00 avg60=0 avg300=0 total=1\n");
    s = adf_sampler_create(pool, ADF_SRC_AUTO, NULL, root, &warn);
    ck_assert_ptr_null(strstr(adf_sampler_describe(s), "psi"));

    /* in a cgroup of its own (v2): that cgroup's pressure, pinned or not */
    make_root();
    put("/proc/self/cgroup", "0::/web\n");
    put("/sys/fs/cgroup/web/cpu.stat", "usage_usec 0\n");
    put("/sys/fs/cgroup/web/cpu.pressure", "some avg10=0 avg60=0 avg300=0 "
        "total=0\n");
    put("/proc/stat", "cpu0 0 0 0 1000 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0\n");
    s = adf_sampler_create(pool, ADF_SRC_AUTO, NULL, root, &warn);
    ck_assert_ptr_nonnull(strstr(adf_sampler_describe(s), "psi brake"));
    rd(s, apr_time_from_sec(1));
    put("/proc/stat", "cpu0 0 0 0 1000 0 0 0 0\ncpu1 20 0 0 1080 0 0 0 0\n");
    put("/sys/fs/cgroup/web/cpu.pressure", "some avg10=0 avg60=0 avg300=0 "
        "total=250000\n");
    ck_assert_double_eq_tol(rd(s, apr_time_from_sec(2)), 45.0, 0.01);
}
END_TEST

START_TEST(sampler_file_and_missing)
{
    adf_sampler_t *s;
    const char *warn;
    char path[128];

    make_root();
    snprintf(path, sizeof(path), "%s/load", root);
    s = adf_sampler_create(pool, ADF_SRC_FILE, path, root, &warn);
    ck_assert_ptr_nonnull(warn);                /* not there yet */
    ck_assert_double_eq(rd(s, 0), -2);
    ck_assert_ptr_nonnull(strstr(adf_sampler_error(s),
                                 "No such file or directory"));
    ck_assert_ptr_nonnull(adf_sampler_probe(s, pool));
    put("/load", "33\n");
    ck_assert_ptr_null(adf_sampler_probe(s, pool));
    ck_assert_double_eq(rd(s, 0), 33);
    put("/load", "bogus\n");
    ck_assert_double_eq(rd(s, 0), -2);

    /* psi without any pressure file: a warning, no crash, no reading */
    s = adf_sampler_create(pool, ADF_SRC_PSI, NULL, root, &warn);
    ck_assert_ptr_nonnull(warn);
    ck_assert_double_eq(rd(s, 0), -2);
    /* cpus without /proc/stat */
    s = adf_sampler_create(pool, ADF_SRC_CPUS, NULL, root, &warn);
    ck_assert_ptr_nonnull(warn);
    ck_assert_double_eq(rd(s, 0), -2);
    ck_assert_ptr_nonnull(adf_sampler_probe(s, pool));
}
END_TEST

/* Resident bytes of this process, from /proc/self/statm. */
static long rss_bytes(void)
{
    long size = 0, rss = -1;
    FILE *f = fopen("/proc/self/statm", "r");

    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%ld %ld", &size, &rss), 2);
    fclose(f);
    return rss * sysconf(_SC_PAGESIZE);
}

/* Months of samples: a reading allocates nothing (it used to rebuild its
 * path from the configuration pool on every tick).  malloc's own count
 * does not see pool growth (APR's allocator maps its blocks itself), so
 * the process's resident size is checked too: 16 bytes a reading would be
 * 4.8 MB here. */
START_TEST(sampler_allocates_nothing)
{
    adf_sampler_t *s;
    const char *warn;
    struct mallinfo2 before, after;
    long rss0, rss1;
    int i;

    make_root();
    put("/proc/self/cgroup", "0::/\n");
    put("/proc/stat", "cpu1 50 0 20 1125 0 0 0 5\n");
    s = adf_sampler_create(pool, ADF_SRC_CPUS, NULL, root, &warn);
    rd(s, 0);
    rss0 = rss_bytes();
    before = mallinfo2();
    for (i = 0; i < 300000; i++) {
        rd(s, 0);
    }
    after = mallinfo2();
    rss1 = rss_bytes();
    ck_assert_msg(after.uordblks < before.uordblks + 16384,
                  "%zu bytes more after 300,000 readings",
                  after.uordblks - before.uordblks);
    ck_assert_msg(rss1 - rss0 < 256 * 1024,
                  "%ld kB more resident after 300,000 readings",
                  (rss1 - rss0) / 1024);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("load");

    /* the parsers, then the sampler (at most 60 s each) */
#define sampler_test(t) tcase_set_timeout(adf_test(s, t), 60)
    adf_test(s, cpuset);
    adf_test(s, proc_stat_lines);
    adf_test(s, cgroups);
    adf_test(s, psi_and_file);
    adf_test(s, cgroup_self);
    adf_test(s, sources);
    sampler_test(sampler_cpus);
    sampler_test(sampler_cgroup_v2_quota);
    sampler_test(sampler_cgroup_v1);
    sampler_test(sampler_psi_brake);
    sampler_test(sampler_file_and_missing);
    sampler_test(sampler_allocates_nothing);
    return adf_test_run(s);
}
