/* Load signal parsers; see adf_load.h. */
#include "adf_load.h"
#include "adf_parse.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- parsers ------------------------------------------------------------ */

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    return s;
}

/* A decimal with an optional fraction, e.g. "12.34". */
static const char *scan_decimal(const char *s, double *v)
{
    apr_uint64_t ip, fp = 0;
    double scale = 1;
    const char *e = adf_scan_u64(s, &ip);

    if (!e) {
        return NULL;
    }
    if (*e == '.') {
        e++;
        while (apr_isdigit(*e)) {
            if (scale < 1e15) {
                fp = fp * 10 + (apr_uint64_t)(*e - '0');
                scale *= 10;
            }
            e++;
        }
    }
    *v = (double)ip + (double)fp / scale;
    return e;
}

static void cpuset_add(adf_cpuset_t *set, unsigned cpu)
{
    set->bits[cpu / 64] |= APR_UINT64_C(1) << (cpu % 64);
}

static int cpuset_has(const adf_cpuset_t *set, unsigned cpu)
{
    return cpu < ADF_MAX_CPUS
           && (set->bits[cpu / 64] & (APR_UINT64_C(1) << (cpu % 64)));
}

int adf_cpuset_parse(const char *list, adf_cpuset_t *set)
{
    adf_cpuset_t tmp;
    const char *s = skip_blanks(list);
    int any = 0;

    memset(&tmp, 0, sizeof(tmp));
    while (*s && *s != '\n') {
        apr_uint64_t a, b;
        const char *e = adf_scan_u64(s, &a);

        if (!e || a >= ADF_MAX_CPUS) {
            return -1;
        }
        b = a;
        if (*e == '-') {
            e = adf_scan_u64(e + 1, &b);
            if (!e || b < a || b >= ADF_MAX_CPUS) {
                return -1;
            }
        }
        for (; a <= b; a++) {
            cpuset_add(&tmp, (unsigned)a);
        }
        any = 1;
        if (*e == ',') {
            e++;
        }
        else if (*e && *e != '\n') {
            return -1;
        }
        s = e;
    }
    if (!any) {
        return -1;
    }
    *set = tmp;
    return 0;
}

int adf_cpuset_count(const adf_cpuset_t *set)
{
    int i, n = 0;

    for (i = 0; i < ADF_MAX_CPUS; i++) {
        n += cpuset_has(set, (unsigned)i);
    }
    return n;
}

int adf_cpuset_from_status(const char *status, adf_cpuset_t *set)
{
    static const char key[] = "Cpus_allowed_list:";
    const char *s = status;

    while (s && *s) {
        if (!strncmp(s, key, sizeof(key) - 1)) {
            return adf_cpuset_parse(s + sizeof(key) - 1, set);
        }
        s = strchr(s, '\n');
        if (s) {
            s++;
        }
    }
    return -1;
}

int adf_proc_pid_cpu(const char *text, apr_uint64_t *ticks)
{
    const char *s = strrchr(text, ')');     /* the command may hold ")" */
    apr_uint64_t v[2];
    int field;

    if (!s) {
        return -1;
    }
    /* after "(comm)": state is field 3; utime and stime are 14 and 15 */
    for (field = 2, s++; field < 13; field++) {
        s = skip_blanks(s);
        s += strcspn(s, " \n");
        if (!*s) {
            return -1;
        }
    }
    for (field = 0; field < 2; field++) {
        if (!(s = adf_scan_u64(skip_blanks(s), &v[field]))) {
            return -1;
        }
    }
    *ticks = v[0] + v[1];
    return 0;
}

int adf_proc_stat_ncpus(const char *text)
{
    const char *s = text;
    apr_uint64_t cpu;
    int n = 0;

    while (s && *s) {
        n += !strncmp(s, "cpu", 3) && adf_scan_u64(s + 3, &cpu) != NULL;
        s = strchr(s, '\n');
        s = s ? s + 1 : NULL;
    }
    return n;
}

int adf_proc_stat_parse(const char *text, const adf_cpuset_t *set,
                        adf_cpu_times_t *out)
{
    const char *s = text;
    adf_cpu_times_t sum = { 0, 0 };
    int matched = 0;

    while (s && *s) {
        const char *eol = strchr(s, '\n');
        apr_uint64_t cpu;
        const char *e;

        if (!strncmp(s, "cpu", 3) && (e = adf_scan_u64(s + 3, &cpu)) != NULL
            && (!set || cpuset_has(set, (unsigned)(cpu < ADF_MAX_CPUS
                                                   ? cpu : ADF_MAX_CPUS)))) {
            /* user nice system idle iowait irq softirq steal [guest..] */
            apr_uint64_t f[8];
            int i;

            for (i = 0; i < 8; i++) {
                e = skip_blanks(e);
                if (!(e = adf_scan_u64(e, &f[i]))) {
                    return -1;
                }
            }
            sum.busy += f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
            sum.total += f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
            matched++;
        }
        s = eol ? eol + 1 : NULL;
    }
    if (!matched) {
        return -1;
    }
    *out = sum;
    return 0;
}

/* Find "key value" at the start of a line; the value's text or NULL. */
static const char *find_key(const char *text, const char *key)
{
    apr_size_t klen = strlen(key);
    const char *s = text;

    while (s && *s) {
        if (!strncmp(s, key, klen) && (s[klen] == ' ' || s[klen] == '\t')) {
            return skip_blanks(s + klen);
        }
        s = strchr(s, '\n');
        if (s) {
            s++;
        }
    }
    return NULL;
}

static int at_end(const char *e)
{
    while (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r') {
        e++;
    }
    return *e == '\0';
}

int adf_cgroup2_usage(const char *text, apr_uint64_t *usec)
{
    const char *v = find_key(text, "usage_usec");
    const char *e;
    apr_uint64_t n;

    if (!v || !(e = adf_scan_u64(v, &n)) || (*e && *e != '\n')) {
        return -1;
    }
    *usec = n;
    return 0;
}

int adf_cgroup2_max(const char *text, double *cpus)
{
    const char *s = skip_blanks(text), *e;
    apr_uint64_t quota = 0, period;
    int unlimited = 0;

    if (!strncmp(s, "max", 3)) {
        unlimited = 1;
        e = s + 3;
    }
    else if (!(e = adf_scan_u64(s, &quota))) {
        return -1;
    }
    if (*e != ' ' || !(e = adf_scan_u64(skip_blanks(e), &period)) || !at_end(e)
        || period == 0) {
        return -1;
    }
    *cpus = unlimited ? 0 : (double)quota / (double)period;
    return 0;
}

int adf_cgroup1_quota(const char *quota, const char *period, double *cpus)
{
    const char *s = skip_blanks(quota), *e;
    apr_uint64_t q, per;

    if (!(e = adf_scan_u64(skip_blanks(period), &per)) || !at_end(e) || !per) {
        return -1;
    }
    if (!strncmp(s, "-1", 2) && at_end(s + 2)) {
        *cpus = 0;
        return 0;
    }
    if (!(e = adf_scan_u64(s, &q)) || !at_end(e)) {
        return -1;
    }
    *cpus = (double)q / (double)per;
    return 0;
}

int adf_cgroup1_usage(const char *text, apr_uint64_t *ns)
{
    apr_uint64_t v;
    const char *e = adf_scan_u64(skip_blanks(text), &v);

    if (!e || !at_end(e)) {
        return -1;
    }
    *ns = v;
    return 0;
}

int adf_psi_some_total(const char *text, apr_uint64_t *usec)
{
    const char *v = find_key(text, "some");
    const char *t, *e;
    apr_uint64_t n;

    /* "some avg10=.. avg60=.. avg300=.. total=N" on one line */
    if (!v || !(t = strstr(v, "total=")) || memchr(v, '\n', t - v)
        || !(e = adf_scan_u64(t + 6, &n)) || (*e && *e != '\n')) {
        return -1;
    }
    *usec = n;
    return 0;
}

int adf_load_file_parse(const char *text, double *pct)
{
    const char *s = text, *e;
    double d;

    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
        s++;
    }
    if (!(e = scan_decimal(s, &d)) || !at_end(e) || d > 100) {
        return -1;
    }
    *pct = d;
    return 0;
}

int adf_cgroup_self(apr_pool_t *p, const char *text, const char *controller,
                    char **path, int *v2)
{
    const char *s = text;
    char *v1path = NULL;

    while (s && *s) {
        const char *eol = strchr(s, '\n');
        apr_size_t len = eol ? (apr_size_t)(eol - s) : strlen(s);
        char *line = apr_pstrmemdup(p, s, len);
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

        if (c2 && c2[1] == '/') {
            /* hierarchy-id:controller-list:path */
            *c1 = '\0';
            *c2 = '\0';
            if (!strcmp(line, "0") && c1[1] == '\0') {
                *path = c2 + 1;
                *v2 = 1;
                return 0;
            }
            if (!v1path) {
                char *last, *tok;
                for (tok = apr_strtok(c1 + 1, ",", &last); tok;
                     tok = apr_strtok(NULL, ",", &last)) {
                    if (!strcmp(tok, controller)) {
                        v1path = c2 + 1;
                    }
                }
            }
        }
        s = eol ? eol + 1 : NULL;
    }
    if (!v1path) {
        return -1;
    }
    *path = v1path;
    *v2 = 0;
    return 0;
}

const char *adf_parse_source(apr_pool_t *p, const char *arg,
                             adf_source_e *src, const char **path)
{
    *path = NULL;
    if (!strcasecmp(arg, "auto")) {
        *src = ADF_SRC_AUTO;
    }
    else if (!strcasecmp(arg, "cpus")) {
        *src = ADF_SRC_CPUS;
    }
    else if (!strcasecmp(arg, "cgroup")) {
        *src = ADF_SRC_CGROUP;
    }
    else if (!strcasecmp(arg, "psi")) {
        *src = ADF_SRC_PSI;
    }
    else if (!strcasecmp(arg, "none")) {
        *src = ADF_SRC_NONE;
    }
    else if (!strncasecmp(arg, "file:", 5) && arg[5]) {
        *src = ADF_SRC_FILE;
        *path = arg + 5;
    }
    else {
        return apr_psprintf(p, "'%s' is not a load source (auto, cpus, "
                            "cgroup, psi, file:PATH or none)", arg);
    }
    return NULL;
}
